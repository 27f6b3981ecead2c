//! The `ais!` examples whose tools are Rust, served as Restate workflows from Rust — the
//! facade's `Endpoint` builder over each example's own `runtime()` (its native tools and, for
//! `release_notes`, its callee) — give the report the library gives in process (`approve_refund`
//! paused and answered, as `Runtime::resume` answers it), against a real Restate server on loopback (feature `restate`; skipped with a notice when no server is
//! installed, a failure under CI=true: `.ci/run` installs it).

use crate::restate_support;

#[allow(dead_code)]
#[path = "../examples/writing_plans.rs"]
mod writing_plans;

#[allow(dead_code)]
#[path = "../examples/fix_failing_test.rs"]
mod fix_failing_test;

#[allow(dead_code)]
#[path = "../examples/review_files.rs"]
mod review_files;

#[allow(dead_code)]
#[path = "../examples/release_notes.rs"]
mod release_notes;

#[allow(dead_code)]
#[path = "../examples/extract_invoice.rs"]
mod extract_invoice;

#[allow(dead_code)]
#[path = "../examples/approve_refund.rs"]
mod approve_refund;

use ais::Program;
use ais::restate::server::{RestateServer, server_for_tests};
use ais::restate::{Endpoint, Followed, Ingress, RunRequest};
use ais::rt::{Inputs, RuntimeBuilder};
use restate_support::comparable;
use serde_json::Value;
use std::path::Path;

/// An endpoint served from this process on a free loopback port, until dropped.
struct InProcess {
    port: u16,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl InProcess {
    fn serve(endpoint: Endpoint) -> InProcess {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || endpoint.serve_until(listener, stopped).unwrap());
        InProcess {
            port,
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        let _ = self.stop.take().map(|s| s.send(()));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One example: its programs (the first is run; the others are served beside it, as a CALL's
/// callee), its runtime, its responses file, its task and inputs, and what its output root
/// holds before the run.
struct Case {
    programs: Vec<&'static Program>,
    runtime: fn() -> RuntimeBuilder,
    responses: &'static str,
    task: &'static str,
    inputs: Vec<(&'static str, String)>,
    setup: fn(&Path),
}

/// The scripted model of `examples/NAME.responses.json`.
fn shipped(name: &str) -> std::sync::Arc<dyn ais::rt::llm::Model> {
    let file = format!(
        "{}/examples/{name}.responses.json",
        env!("CARGO_MANIFEST_DIR")
    );
    ais::rt::llm::from_spec(&format!("scripted:{file}")).unwrap()
}

fn cases(checkout: &Path) -> Vec<(&'static str, Case)> {
    let paths: Vec<String> = review_files::CHANGE
        .iter()
        .map(|(p, _)| (*p).to_owned())
        .collect();
    vec![
        (
            "writing_plans",
            Case {
                programs: vec![writing_plans::WritingPlans::program()],
                runtime: writing_plans::WritingPlans::runtime,
                responses: "writing_plans",
                task: "Plan a CSV export of the order history and save it to docs/plans/csv-export.md",
                inputs: vec![],
                setup: |_| {},
            },
        ),
        (
            "fix_failing_test",
            Case {
                programs: vec![fix_failing_test::FixFailingTest::program()],
                runtime: fix_failing_test::FixFailingTest::runtime,
                responses: "fix_failing_test",
                task: fix_failing_test::TASK,
                inputs: vec![
                    ("module_file", fix_failing_test::MODULE_FILE.to_owned()),
                    ("tests", fix_failing_test::TESTS.to_owned()),
                ],
                setup: |out| {
                    std::fs::write(out.join("text_utils.py"), fix_failing_test::BUGGY_MODULE)
                        .unwrap()
                },
            },
        ),
        (
            "review_files",
            Case {
                programs: vec![review_files::ReviewFiles::program()],
                runtime: review_files::ReviewFiles::runtime,
                responses: "review_files",
                task: "Retry failed requests with exponential backoff",
                inputs: vec![
                    ("checkout", checkout.display().to_string()),
                    ("paths", serde_json::to_string(&paths).unwrap()),
                ],
                setup: |_| {},
            },
        ),
        (
            "release_notes",
            Case {
                programs: vec![
                    release_notes::ReleaseNotes::program(),
                    release_notes::DraftChangelog::program(),
                ],
                runtime: release_notes::ReleaseNotes::runtime,
                responses: "release_notes",
                task: "Release 2.4.0 and write its notes to CHANGELOG-2.4.0.md",
                inputs: vec![
                    ("version", "2.4.0".to_owned()),
                    ("log", release_notes::LOG.to_owned()),
                ],
                setup: |_| {},
            },
        ),
        (
            "extract_invoice",
            Case {
                programs: vec![extract_invoice::ExtractInvoice::program()],
                runtime: extract_invoice::ExtractInvoice::runtime,
                responses: "extract_invoice",
                task: "File this invoice in ledger/2026-03.csv",
                inputs: vec![("invoice_text", extract_invoice::INVOICE_TEXT.to_owned())],
                setup: |_| {},
            },
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_example_with_rust_tools_served_from_rust_reports_as_in_process() {
    let Some(bin) = server_for_tests("restate_examples::same_report") else {
        return;
    };
    let server = RestateServer::start(&bin).await.unwrap();
    let ingress = Ingress::new(&server.ingress_url());
    let checkout = tempfile::tempdir().unwrap();
    review_files::write_change(checkout.path()).unwrap();
    for (name, case) in cases(checkout.path()) {
        let (remote_out, local_out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        (case.setup)(remote_out.path());
        (case.setup)(local_out.path());
        let served = (case.runtime)()
            .model(shipped(case.responses))
            .out_dir(remote_out.path().into());
        let mut endpoint = Endpoint::new(served);
        for program in &case.programs {
            endpoint = endpoint.program((*program).clone()).unwrap();
        }
        let workflow = endpoint.names()[0].clone();
        let endpoint = InProcess::serve(endpoint);
        server
            .register(&format!("http://127.0.0.1:{}", endpoint.port))
            .await
            .unwrap();
        let request = RunRequest {
            task: Some(case.task.to_owned()),
            inputs: case
                .inputs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), Value::String(v.clone())))
                .collect(),
        };
        let id = format!("{name}-1");
        ingress.submit(&workflow, &id, &request).await.unwrap();
        let remote = tokio::time::timeout(
            std::time::Duration::from_secs(60),
            ingress.output(&workflow, &id),
        )
        .await
        .unwrap_or_else(|_| panic!("{name}: the run did not end"))
        .unwrap();
        drop(endpoint);

        let runtime = (case.runtime)()
            .model(shipped(case.responses))
            .out_dir(local_out.path().into())
            .build();
        let pairs: Vec<(String, String)> = case
            .inputs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect();
        let program = case.programs[0];
        let inputs = Inputs::parse(program, Some(case.task.to_owned()), &pairs).unwrap();
        let local = runtime.run(program, None, inputs).await.to_json();
        assert_eq!(local["status"], "ok", "{name}: {local:#}");
        assert_eq!(comparable(remote), local, "{name}");
    }
    // The work spread as on `ais serve`: each reviewer of `review_files` ran as an invocation
    // of its own, and `release_notes`'s callee as a workflow run of its own.
    let admin = ais::restate::Admin::new(&server.admin_url());
    let reviewers = admin
        .query("SELECT id FROM sys_invocation WHERE target_service_name = 'review_files_siblings'")
        .await
        .unwrap();
    assert_eq!(reviewers.len(), review_files::CHANGE.len(), "{reviewers:?}");
    let runs = admin.runs(None).await.unwrap();
    let callee: Vec<_> = runs
        .iter()
        .filter(|r| r.workflow == "draft_changelog")
        .collect();
    assert_eq!(callee.len(), 1, "{runs:?}");
    assert!(callee[0].id.starts_with("release_notes-1/c"), "{runs:?}");
}

/// A paused run's object without its resume handle (a file only a run without a journal
/// writes; a Restate run waits on a durable promise instead).
fn without_handle(mut v: Value) -> Value {
    if let Some(p) = v["pause"].as_object_mut() {
        p.remove("handle");
    }
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_approval_example_pauses_on_restate_and_the_answer_resumes_it_as_in_process() {
    let Some(bin) = server_for_tests("restate_examples::approval") else {
        return;
    };
    let server = RestateServer::start(&bin).await.unwrap();
    let ingress = Ingress::new(&server.ingress_url());
    let (remote_out, local_out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let program = approve_refund::ApproveRefund::program();
    let builder = |out: &Path| {
        approve_refund::ApproveRefund::runtime()
            .model(shipped("approve_refund"))
            .out_dir(out.into())
    };
    let endpoint = Endpoint::new(builder(remote_out.path()))
        .program(program.clone())
        .unwrap();
    let workflow = endpoint.names()[0].clone();
    let endpoint = InProcess::serve(endpoint);
    server
        .register(&format!("http://127.0.0.1:{}", endpoint.port))
        .await
        .unwrap();
    let runtime = builder(local_out.path()).build();
    let inputs = || Inputs::parse(program, Some(approve_refund::REQUEST.to_owned()), &[]).unwrap();
    for (k, answer) in ["yes", "no, out of warranty"].into_iter().enumerate() {
        let id = format!("approval-{k}");
        let request = RunRequest {
            task: Some(approve_refund::REQUEST.to_owned()),
            inputs: Default::default(),
        };
        ingress.submit(&workflow, &id, &request).await.unwrap();
        let Followed::Paused(pause) = ingress.follow(&workflow, &id).await.unwrap() else {
            panic!("{answer}: the run did not pause");
        };
        let local = runtime.run(program, None, inputs()).await;
        let handle = local.pause.as_ref().and_then(|p| p.handle.clone());
        let handle = handle.unwrap_or_else(|| panic!("no handle: {:#}", local.to_json()));
        assert_eq!(
            without_handle(pause["outcome"].clone()),
            without_handle(local.to_json()),
            "{answer}: paused"
        );
        ingress.answer(&workflow, &id, answer).await.unwrap();
        let remote = ingress.output(&workflow, &id).await.unwrap();
        let local = runtime
            .resume(program, None, &handle, answer.to_owned())
            .await
            .to_json();
        assert_eq!(local["status"], "ok", "{answer}: {local:#}");
        assert_eq!(comparable(remote), local, "{answer}");
    }
}
