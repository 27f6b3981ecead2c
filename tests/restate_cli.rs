//! `ais serve --restate` against a real Restate server on loopback (feature `restate`; skipped
//! with a notice when no server is installed, a failure under CI=true: `.ci/run` installs it).

use crate::restate_support;

use ais::restate::server::{RestateServer, free_port, server_for_tests};
use ais::restate::{Ingress, RunRequest};
use restate_support::{Served, wait_for};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/restate")
        .join(name)
}

/// `ais serve --restate` on `port`, serving `program`, its standard error in `out`
/// (`serve-N.log`, the Nth endpoint of the test binary); waits until it accepts connections.
fn serve(port: u16, out: &Path, program: &Path) -> Served {
    static STARTED: AtomicUsize = AtomicUsize::new(0);
    let n = STARTED.fetch_add(1, Ordering::Relaxed);
    let log = out.join(format!("serve-{n}.log"));
    Served::start(port, out, &[program.to_str().unwrap()], &log)
}

/// A run of `fixture` (which appends a line to `log_file`, then waits for `release_file`)
/// submitted as `id` to an endpoint that is SIGKILLed once the wait has started.
struct Killed {
    _server: RestateServer,
    dir: tempfile::TempDir,
    program: PathBuf,
    port: u16,
    ingress: Ingress,
    log: PathBuf,
    release: PathBuf,
    /// The file the wait creates when it starts (removed after the kill).
    waiting: PathBuf,
}

impl Killed {
    /// Starts the server and an endpoint, submits the run, kills the endpoint mid-wait; `None`
    /// (with a notice) when no server is installed.
    async fn start(test: &str, fixture_name: &str, id: &str) -> Option<Killed> {
        let bin = server_for_tests(test)?;
        let server = RestateServer::start(&bin).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log.txt");
        let release = dir.path().join("release");
        let program = fixture(fixture_name);
        let port = free_port().unwrap();
        let mut endpoint = serve(port, dir.path(), &program);
        server
            .register(&format!("http://127.0.0.1:{port}"))
            .await
            .unwrap();
        let ingress = Ingress::new(&server.ingress_url());
        let request = RunRequest {
            task: Some(format!("run {id}")),
            inputs: [
                ("log_file".to_owned(), json!(log.to_str().unwrap())),
                ("release_file".to_owned(), json!(release.to_str().unwrap())),
            ]
            .into_iter()
            .collect(),
        };
        let name = fixture_name.trim_end_matches(".agir");
        ingress.submit(name, id, &request).await.unwrap();
        let waiting = PathBuf::from(format!("{}.waiting", release.display()));
        wait_for("the wait to start", || waiting.exists());
        endpoint.kill(); // SIGKILL, mid-step
        std::fs::remove_file(&waiting).unwrap();
        Some(Killed {
            _server: server,
            dir,
            program,
            port,
            ingress,
            log,
            release,
            waiting,
        })
    }

    /// A new endpoint on the same port.
    fn serve_again(&self) -> Served {
        serve(self.port, self.dir.path(), &self.program)
    }

    /// The run's report (waits at most a minute), then stops `endpoint`.
    async fn report(&self, name: &str, id: &str, mut endpoint: Served) -> serde_json::Value {
        let report = tokio::time::timeout(Duration::from_secs(60), self.ingress.output(name, id))
            .await
            .expect("the run ends")
            .unwrap();
        endpoint.kill();
        report
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_killed_mid_run_is_replaced_and_the_appended_line_is_there_once() {
    let Some(run) = Killed::start("restate_cli::sigkill", "append_then_wait.agir", "kill-1").await
    else {
        return;
    };
    // The line was appended and the next step (waiting for the release file) had started: the
    // append's result is in Restate's journal when the endpoint died.
    assert_eq!(std::fs::read_to_string(&run.log).unwrap(), "appended\n");
    let endpoint = run.serve_again();
    // Restate retries the invocation on the new endpoint: it replays the append (recorded, not
    // run again) and runs the wait again (idempotent; in flight at the kill).
    wait_for("the retried step to start", || run.waiting.exists());
    std::fs::write(&run.release, "").unwrap();
    let report = run.report("append_then_wait", "kill-1", endpoint).await;
    assert_eq!(report["status"], "ok", "{report:#}");
    assert_eq!(report["report"]["appended"], "appended", "{report:#}");
    assert_eq!(report["report"]["released"], "released", "{report:#}");
    assert_eq!(std::fs::read_to_string(&run.log).unwrap(), "appended\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_effect_that_must_not_repeat_in_flight_at_the_kill_is_not_run_again() {
    let Some(run) = Killed::start(
        "restate_cli::in_flight",
        "append_then_wait_once.agir",
        "once-1",
    )
    .await
    else {
        return;
    };
    std::fs::write(&run.release, "").unwrap();
    let endpoint = run.serve_again();
    let report = run
        .report("append_then_wait_once", "once-1", endpoint)
        .await;
    assert_eq!(report["status"], "interrupted", "{report:#}");
    assert_eq!(report["fault"]["kind"], "effect_in_flight", "{report:#}");
    assert_eq!(report["fault"]["instruction"], "wait", "{report:#}");
    assert!(!run.waiting.exists(), "the wait ran a second time");
}
