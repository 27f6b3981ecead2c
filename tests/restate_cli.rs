//! `ais serve --restate` against a real Restate server on loopback (feature `restate`; skipped
//! with a notice when no server is installed, a failure under CI=true: `.ci/run` installs it).

use ais::restate::server::{RestateServer, free_port, server_for_tests};
use ais::restate::{Ingress, RunRequest};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/restate")
        .join(name)
}

/// `ais serve --restate` on `port`, serving `program`; waits until it accepts connections.
fn serve(port: u16, out: &Path, program: &Path) -> Child {
    let child = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(["serve", "--restate", "--bind"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--out")
        .arg(out)
        .arg(program)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the endpoint to listen", || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    child
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_killed_mid_run_is_replaced_and_the_appended_line_is_there_once() {
    let Some(bin) = server_for_tests("restate_cli::sigkill") else {
        return;
    };
    let server = RestateServer::start(&bin).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.txt");
    let release = dir.path().join("release");
    let program = fixture("append_then_wait.agir");
    let port = free_port().unwrap();
    let mut endpoint = serve(port, dir.path(), &program);
    server
        .register(&format!("http://127.0.0.1:{port}"))
        .await
        .unwrap();
    let ingress = Ingress::new(&server.ingress_url());
    let request = RunRequest {
        task: Some("append once".into()),
        inputs: [
            ("log_file".to_owned(), json!(log.to_str().unwrap())),
            ("release_file".to_owned(), json!(release.to_str().unwrap())),
        ]
        .into_iter()
        .collect(),
    };
    ingress
        .submit("append_then_wait", "kill-1", &request)
        .await
        .unwrap();
    // The line is appended and the next step (waiting for the release file) has started: the
    // append's result is in Restate's journal. Now the endpoint dies, mid-step.
    let waiting = PathBuf::from(format!("{}.waiting", release.display()));
    wait_for("the second step to start", || waiting.exists());
    endpoint.kill().unwrap(); // SIGKILL
    endpoint.wait().unwrap();
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "appended\n");
    std::fs::remove_file(&waiting).unwrap();
    let mut endpoint = serve(port, dir.path(), &program);
    // Restate retries the invocation on the new endpoint: it replays the append (recorded, not
    // run again) and runs the wait again (idempotent; in flight at the kill).
    wait_for("the retried step to start", || waiting.exists());
    std::fs::write(&release, "").unwrap();
    let report = tokio::time::timeout(
        Duration::from_secs(60),
        ingress.output("append_then_wait", "kill-1"),
    )
    .await
    .expect("the run ends")
    .unwrap();
    endpoint.kill().unwrap();
    endpoint.wait().unwrap();
    assert_eq!(report["status"], "ok", "{report:#}");
    assert_eq!(report["report"]["appended"], "appended", "{report:#}");
    assert_eq!(report["report"]["released"], "released", "{report:#}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "appended\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_effect_that_must_not_repeat_in_flight_at_the_kill_is_not_run_again() {
    let Some(bin) = server_for_tests("restate_cli::in_flight") else {
        return;
    };
    let server = RestateServer::start(&bin).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let release = dir.path().join("release");
    let program = fixture("append_then_wait_once.agir");
    let port = free_port().unwrap();
    let mut endpoint = serve(port, dir.path(), &program);
    server
        .register(&format!("http://127.0.0.1:{port}"))
        .await
        .unwrap();
    let ingress = Ingress::new(&server.ingress_url());
    let request = RunRequest {
        task: Some("wait once".into()),
        inputs: [
            ("log_file".to_owned(), json!(dir.path().join("log.txt"))),
            ("release_file".to_owned(), json!(release)),
        ]
        .into_iter()
        .collect(),
    };
    ingress
        .submit("append_then_wait_once", "once-1", &request)
        .await
        .unwrap();
    let waiting = PathBuf::from(format!("{}.waiting", release.display()));
    wait_for("the wait to start", || waiting.exists());
    endpoint.kill().unwrap();
    endpoint.wait().unwrap();
    std::fs::remove_file(&waiting).unwrap();
    std::fs::write(&release, "").unwrap();
    let mut endpoint = serve(port, dir.path(), &program);
    let report = tokio::time::timeout(
        Duration::from_secs(60),
        ingress.output("append_then_wait_once", "once-1"),
    )
    .await
    .expect("the run ends")
    .unwrap();
    endpoint.kill().unwrap();
    endpoint.wait().unwrap();
    assert_eq!(report["status"], "interrupted", "{report:#}");
    assert_eq!(report["fault"]["kind"], "effect_in_flight", "{report:#}");
    assert_eq!(report["fault"]["instruction"], "wait", "{report:#}");
    assert!(!waiting.exists(), "the wait ran a second time");
}
