//! `ais run|resume|runs --engine restate` against a real Restate server on loopback and real
//! `ais serve --restate` endpoints (feature `restate`; skipped with a notice when no server is
//! installed, a failure under CI=true: `.ci/run` installs it).

use crate::restate_support;

use crate::mcp_support;

use ais::restate::server::{RestateServer, free_port, server_for_tests};
use restate_support::{ais, comparable, engine, json_of as json, serve, text};
use std::path::{Path, PathBuf};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_on_an_mcp_server_is_served_with_it_and_reports_as_ais_run() {
    let Some(bin) = server_for_tests("restate_engine::mcp") else {
        return;
    };
    let Some(fs) = mcp_support::bin("mcp-server-filesystem") else {
        return;
    };
    let server = RestateServer::start(&bin).await.unwrap();
    let (remote_dir, local_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (remote_program, local_program) = (
        mcp_support::notes_example(remote_dir.path(), &fs),
        mcp_support::notes_example(local_dir.path(), &fs),
    );
    let (remote_program, local_program) = (
        remote_program.to_str().unwrap(),
        local_program.to_str().unwrap(),
    );
    // The endpoint starts the program's server once and keeps it for every run.
    let served = serve(&server, remote_dir.path(), &[remote_program]).await;
    let flags = engine(&server);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let local_out = local_dir.path().to_str().unwrap();
    // A note saved and read back; a path outside the server's root, refused by the server
    // and routed to the explanation.
    for (note, saved) in [("today.md", true), ("../outside.md", false)] {
        let note = format!("note_file={note}");
        let inputs = [
            "--task",
            "",
            "--input",
            &note,
            "--input",
            "note_text=buy milk",
        ];
        let json_flags = ["--format", "json"];
        let remote = ais(&[&["run", remote_program][..], &inputs, &json_flags, &flags].concat());
        let local = ais(&[
            &["run", local_program][..],
            &inputs,
            &json_flags,
            &["--out", local_out],
        ]
        .concat());
        assert_eq!(remote.status.code(), Some(0), "{note}: {}", text(&remote));
        assert_eq!(local.status.code(), Some(0), "{note}: {}", text(&local));
        let (r, l) = (json(&remote), json(&local));
        // The server names the paths it refuses: each run's own directory.
        let here = |v: &serde_json::Value, dir: &Path| {
            let dir = dir.to_str().unwrap();
            comparable(v.clone()).to_string().replace(dir, "DIR")
        };
        assert_eq!(
            here(&r, remote_dir.path()),
            here(&l, local_dir.path()),
            "{note}"
        );
        if saved {
            assert_eq!(r["report"]["readback"]["content"], "buy milk", "{r:#}");
        } else {
            assert!(
                r["report"]["refusal"]
                    .as_str()
                    .is_some_and(|t| t.starts_with("not saved: ")),
                "{r:#}"
            );
        }
    }
    drop(served);
    assert_eq!(
        std::fs::read_to_string(remote_dir.path().join("notes/today.md")).unwrap(),
        "buy milk"
    );
    assert!(!remote_dir.path().join("outside.md").exists());
}

const SALES_CSV: &str = "date,region,product,units,unit_price\n\
2026-01-05,north,kettle,12,24.50\n2026-01-09,south,kettle,7,24.50\n\
2026-01-12,north,toaster,4,39.00\n2026-02-02,south,toaster,9,39.00\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_cli_example_gives_the_same_report_and_exit_on_restate_as_embedded() {
    let Some(bin) = server_for_tests("restate_engine::same_report") else {
        return;
    };
    let server = RestateServer::start(&bin).await.unwrap();
    // (program, scripted responses, task, inputs): every example that runs from its `.agir` on
    // a scripted model (the others need Rust tools), and the README's main job.
    let cases: [(&str, &str, &str, &[&str]); 4] = [
        (
            "examples/writing_plans.agir",
            "examples/writing_plans.responses.json",
            "Add a CSV export of a user's orders to the account page",
            &[],
        ),
        (
            "examples/agir/triage_ticket.agir",
            "examples/triage_ticket.responses.json",
            "I was charged twice for my Pro plan this month. Order #88412.",
            &[],
        ),
        (
            "examples/agir/sales_question.agir",
            "examples/sales_question.responses.json",
            "Which region had the highest revenue, and how much was it?",
            &[],
        ),
        (
            "examples/agir/draft_changelog.agir",
            "examples/release_notes.responses.json",
            "Release 2.4.0",
            &[
                "--input",
                "commits=feat: export orders as CSV\nfix: keep the cart",
            ],
        ),
    ];
    for (program, responses, task, inputs) in cases {
        let model = format!("scripted:{responses}");
        let (remote_out, local_out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        for dir in [remote_out.path(), local_out.path()] {
            std::fs::write(dir.join("sales.csv"), SALES_CSV).unwrap();
        }
        let _served = serve(&server, remote_out.path(), &["--model", &model, program]).await;
        let mut args: Vec<String> = ["run", program, "--task", task, "--format", "json"]
            .map(String::from)
            .to_vec();
        args.extend(inputs.iter().map(|s| s.to_string()));
        let local_dir = local_out.path().to_str().unwrap().to_owned();
        let local = [
            args.clone(),
            vec!["--model".into(), model, "--out".into(), local_dir],
        ];
        let local = ais(&local
            .concat()
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>());
        args.extend(engine(&server));
        let remote = ais(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(
            remote.status.code(),
            Some(0),
            "{program}: {}",
            text(&remote)
        );
        assert_eq!(local.status.code(), Some(0), "{program}: {}", text(&local));
        let (r, l) = (json(&remote), json(&local));
        assert_eq!(r["engine"], "restate", "{program}");
        assert!(r["run"].as_str().is_some_and(|id| !id.is_empty()), "{r}");
        assert_eq!(comparable(r), comparable(l), "{program}");
    }
}

/// A run that ends `error` (a failure no ROUTE tests) exits 1 on both engines, with the same
/// report: the Restate CLI reads the report's status as the runtime's `Status` and maps it to
/// an exit code through the same function as the embedded engine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_ending_unrouted_exits_as_on_the_embedded_engine() {
    let Some(bin) = server_for_tests("restate_engine::unrouted") else {
        return;
    };
    let server = RestateServer::start(&bin).await.unwrap();
    let program = "tests/fixtures/restate/unrouted.agir";
    let model = "scripted:tests/fixtures/restate/unrouted.responses.json";
    let (remote_out, local_out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let _served = serve(&server, remote_out.path(), &["--model", model, program]).await;
    for format in ["json", "human"] {
        let local_dir = local_out.path().join(format);
        let local_dir = local_dir.to_str().unwrap();
        let args = ["run", program, "--task", "x", "--format", format];
        let local = ais(&[&args[..], &["--model", model, "--out", local_dir]].concat());
        let engine = engine(&server);
        let engine: Vec<&str> = engine.iter().map(String::as_str).collect();
        let remote = ais(&[&args[..], &engine].concat());
        assert_eq!(local.status.code(), Some(1), "{}", text(&local));
        assert_eq!(remote.status.code(), Some(1), "{}", text(&remote));
        if format == "json" {
            let (r, l) = (json(&remote), json(&local));
            assert_eq!(r["status"], "error", "{r}");
            assert_eq!(comparable(r), comparable(l));
        } else {
            let (r, l) = (text(&remote), text(&local));
            let words = "error (a step failed and no ROUTE tested it) after 1 step";
            assert!(r.contains(words) && l.contains(words), "{r}\n{l}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_paused_on_restate_is_listed_answered_and_followed_from_the_cli() {
    let Some(bin) = server_for_tests("restate_engine::pause") else {
        return;
    };
    let server = RestateServer::start(&bin).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let program = "tests/fixtures/restate/ask_then_echo.agir";
    let _served = serve(&server, out.path(), &[program]).await;
    let flags = engine(&server);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();

    // No terminal: the run stays paused on the server, and says how to answer it.
    let o = ais(&[&["run", program, "--task", "clean up"], &flags[..]].concat());
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("input required"), "{}", text(&o));
    assert!(
        stdout.contains("`echo` needs `confirm`: Type yes to go on."),
        "{stdout}"
    );
    assert!(stdout.contains("resume with: ais resume "), "{stdout}");
    assert!(
        stdout.contains("--engine restate --answer TEXT"),
        "{stdout}"
    );

    // `ais runs` lists it as paused.
    let id = paused_run(&flags, "ask_then_echo");

    // Answered through the ingress, followed to its end: `ais run`'s report and exit status.
    let o = ais(&[
        &["resume", &id, "--answer", "yes", "--format", "json"],
        &flags[..],
    ]
    .concat());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = json(&o);
    assert_eq!(v["status"], "ok", "{v}");
    assert_eq!(v["report"]["result"], "asked: clean up / yes", "{v}");
    assert_eq!(v["run"], id.as_str());

    // A second answer is refused, and says why; the list shows the run completed.
    let o = ais(&[&["resume", &id, "--answer", "no"], &flags[..]].concat());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not waiting for an answer"),
        "{}",
        text(&o)
    );
    let o = ais(&[&["runs"], &flags[..]].concat());
    let listed = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with(&id) && l.contains("completed")),
        "{listed}"
    );
    // An id the server does not hold is named as such.
    let o = ais(&[&["resume", "no-such-run", "--answer", "yes"], &flags[..]].concat());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("holds no run no-such-run"),
        "{}",
        text(&o)
    );
}

/// A CALLed program's question pauses the whole run on Restate as embedded: `ais run` exits 3,
/// `ais runs` lists it paused, `ais resume --answer` continues the callee, then the caller, and
/// the report is the embedded engine's. Here the callee runs in the caller's invocation (the
/// endpoint does not serve it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_called_program_that_asks_pauses_the_restate_run_and_the_answer_finishes_it() {
    call_ask_on_restate("restate_engine::call_pause", false).await;
}

/// The same with the callee served as a workflow of its own: its workflow run ends and sends
/// its saved state back, the caller's run pauses with the callee's question, and the answer
/// continues the callee from that state, then the caller.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callee_served_as_its_own_workflow_that_asks_pauses_the_caller_and_the_answer_finishes_both()
 {
    call_ask_on_restate("restate_engine::call_workflow_pause", true).await;
}

/// `call_ask.agir` run on Restate (its callee `ask_then_echo.agir` served too when
/// `callee_served`), paused, answered, and compared with the embedded engine's run.
async fn call_ask_on_restate(test: &str, callee_served: bool) {
    let Some(bin) = server_for_tests(test) else {
        return;
    };
    let server = RestateServer::start(&bin).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let empty = out.path().join("empty.json");
    std::fs::write(&empty, "{}").unwrap();
    let model = format!("scripted:{}", empty.display());
    let program = "tests/fixtures/restate/call_ask.agir";
    let mut served = vec!["--model", &model, program];
    if callee_served {
        served.push("tests/fixtures/restate/ask_then_echo.agir");
    }
    let _served = serve(&server, out.path(), &served).await;
    let flags = engine(&server);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();

    let o = ais(&[&["run", program, "--task", "clean up"], &flags[..]].concat());
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    // The question names the callee's step that asked, its program and the CALL.
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains(
            "`echo` (in `ask_then_echo`, called by `call`) needs `confirm`: Type yes to go on."
        ),
        "{stdout}"
    );
    let id = paused_run(&flags, "call_ask");
    // A served callee ran as a workflow run of its own (the CALL is step 1).
    let admin = ais::restate::Admin::new(&server.admin_url());
    let called = admin.runs(Some(&format!("{id}/c1"))).await.unwrap();
    let workflows: Vec<&str> = called.iter().map(|r| r.workflow.as_str()).collect();
    let expected: &[&str] = if callee_served {
        &["ask_then_echo"]
    } else {
        &[]
    };
    assert_eq!(workflows, expected, "{called:?}");
    let o = ais(&[
        &["resume", &id, "--answer", "yes", "--format", "json"],
        &flags[..],
    ]
    .concat());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let remote = json(&o);
    assert_eq!(
        remote["report"]["result"], "asked: clean up / yes!",
        "{remote}"
    );

    // The embedded engine: the same pause, named the same, and the same report.
    let local_out = out.path().join("local");
    let local_out = local_out.to_str().unwrap();
    let o = ais(&[
        "run", program, "--task", "clean up", "--model", &model, "--out", local_out, "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let paused = json(&o);
    assert_eq!(
        paused["pause"]["called"],
        serde_json::json!([{"program": "ask_then_echo", "instruction": "echo"}]),
        "{paused}"
    );
    let o = ais(&[
        "resume",
        paused["run"].as_str().unwrap(),
        "--journal",
        paused["journal"].as_str().unwrap(),
        "--answer",
        "yes",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(comparable(remote), comparable(json(&o)));
}

#[test]
fn a_restate_run_without_a_server_or_with_local_flags_is_refused_clearly() {
    let program = repo("tests/fixtures/restate/ask_then_echo.agir");
    let program = program.to_str().unwrap();
    let port = free_port().unwrap().to_string();
    let ingress = format!("http://127.0.0.1:{port}");
    let o = ais(&[
        "run",
        program,
        "--task",
        "t",
        "--engine",
        "restate",
        "--ingress",
        &ingress,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("did not answer"), "{err}");
    assert!(err.contains("--ingress URL"), "{err}");

    let o = ais(&[
        "run",
        program,
        "--task",
        "t",
        "--engine",
        "restate",
        "--model",
        "scripted:x.json",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("`--model` sets what the endpoint decides"),
        "{err}"
    );

    let o = ais(&["runs", "--engine", "restate", "--admin", &ingress]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--admin URL"),
        "{}",
        text(&o)
    );
}

/// The id of the run of program `name` that `ais runs` (on the engine `flags` name) lists as
/// paused.
fn paused_run(flags: &[&str], name: &str) -> String {
    let o = ais(&[&["runs"], flags].concat());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let listed = String::from_utf8_lossy(&o.stdout).into_owned();
    let row = listed
        .lines()
        .find(|l| l.contains(name))
        .unwrap_or_else(|| panic!("the run is not listed:\n{listed}"));
    assert!(row.contains("paused"), "{listed}");
    row.split_whitespace().next().unwrap().to_owned()
}
