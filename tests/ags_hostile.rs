//! `ais check` on an untrusted AGS graph, as an attacker writes one: the document itself a FIFO
//! or a link to `/dev/zero`, and subgraph references (`ref.uri`) that lead out of its directory
//! to a secret, to a FIFO, to `/dev/zero`. Each is a prompt, clear finding or error — never a
//! hang, never an unbounded read — and no finding quotes another file's content.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `ais ARGS` in `dir`, killed (and the test failed) after 20 s.
fn ais_within(dir: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("ais {args:?} did not finish within 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn all(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn mkfifo(path: &Path) -> bool {
    Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success())
}

/// A graph whose one subgraph node refers to `uri`.
fn graph(uri: &str) -> String {
    format!(
        "ags_version: \"1.0\"\nkind: AgenticGraph\nid: t/outer\ntitle: Outer\nrequires_conformance: 1\nobjective: Use a shared graph.\nentrypoints: [inner]\nnodes:\n  inner:\n    type: subgraph\n    title: Inner\n    subgraph:\n      ref:\n        uri: {uri}\n"
    )
}

const SECRET: &str = "DB_PASSWORD=hunter2-correct-horse";

#[test]
fn a_graph_that_is_a_fifo_or_dev_zero_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("g.agraph.yaml");
    if !mkfifo(&fifo) {
        eprintln!("notice: no mkfifo; skipped");
        return;
    }
    let o = ais_within(dir.path(), &["check", "g.agraph.yaml"]);
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    assert!(all(&o).contains("FIFO"), "{}", all(&o));
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("z.agraph.yaml")).unwrap();
    let o = ais_within(dir.path(), &["check", "z.agraph.yaml"]);
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    assert!(all(&o).contains("character device"), "{}", all(&o));
    // `ais run` reads it the same way.
    let o = ais_within(
        dir.path(),
        &["run", "z.agraph.yaml", "--task", "go", "--no-journal"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
}

#[test]
fn a_reference_out_of_the_directory_is_not_opened_and_nothing_is_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("graphs");
    std::fs::create_dir(&sub).unwrap();
    // A `.env`-like secret beside the graph's directory, named as a graph would be.
    std::fs::write(dir.path().join("secret.agraph.yaml"), format!("{SECRET}\n")).unwrap();
    std::fs::write(dir.path().join(".env"), format!("{SECRET}\n")).unwrap();
    std::os::unix::fs::symlink(dir.path().join(".env"), sub.join("env.agraph.yaml")).unwrap();
    let abs = dir.path().join(".env").display().to_string();
    for uri in [
        "../secret.agraph.yaml",
        "../.env",
        abs.as_str(),
        "./env.agraph.yaml",
        "/dev/zero",
    ] {
        std::fs::write(sub.join("g.agraph.yaml"), graph(uri)).unwrap();
        let o = ais_within(&sub, &["check", "g.agraph.yaml"]);
        let text = all(&o);
        assert!(
            !text.contains("hunter2"),
            "{uri}: the secret was quoted:\n{text}"
        );
        assert!(
            text.contains("lies outside this document's directory"),
            "{uri}: {text}"
        );
        assert_ne!(o.status.code(), Some(0), "{uri}: {text}");
    }
    // Allowed by the flag, the secret is read as a graph — and still never quoted.
    std::fs::write(sub.join("g.agraph.yaml"), graph("../.env")).unwrap();
    let o = ais_within(&sub, &["check", "--allow-outside-refs", "g.agraph.yaml"]);
    let text = all(&o);
    assert!(!text.contains("hunter2"), "the secret was quoted:\n{text}");
    assert!(!text.contains("lies outside"), "{text}");
}

#[test]
fn a_reference_to_a_fifo_or_a_device_inside_the_directory_does_not_hang() {
    let dir = tempfile::tempdir().unwrap();
    if !mkfifo(&dir.path().join("pipe.agraph.yaml")) {
        eprintln!("notice: no mkfifo; skipped");
        return;
    }
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.agraph.yaml")).unwrap();
    for uri in ["./pipe.agraph.yaml", "./zero.agraph.yaml"] {
        std::fs::write(dir.path().join("g.agraph.yaml"), graph(uri)).unwrap();
        let o = ais_within(
            dir.path(),
            &["check", "--allow-outside-refs", "g.agraph.yaml"],
        );
        let text = all(&o);
        assert!(text.contains("cannot be read"), "{uri}: {text}");
        assert!(text.contains("not a regular file"), "{uri}: {text}");
    }
}

/// Issue 32's numbers, end to end through `ais run`: a graph that writes `1.0e300` wherever
/// the schema lets a number be that large (a criterion's `timeout_seconds`, the retry's
/// `initial_delay_seconds`, `min_context_tokens`, `max_cost_usd`) runs — the first attempt
/// fails its command criterion, the retry waits no `1.0e300` seconds (`max_delay_seconds: 0`),
/// the second passes — and one that writes it where the schema bounds the number (`level`, a
/// negative delay) is refused with each place located. Never a panic, never a wait.
#[test]
fn a_graph_of_1e300s_runs_or_is_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let graph = tmp.path().join("g.agraph.yaml");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ags/huge_numbers.agraph.yaml");
    let text = std::fs::read_to_string(fixture).unwrap();
    std::fs::write(&graph, &text).unwrap();
    std::fs::write(
        tmp.path().join("script.json"),
        r#"{"report": ["FAIL", "OK"]}"#,
    )
    .unwrap();
    let run = [
        "run",
        "g.agraph.yaml",
        "--task",
        "t",
        "--model",
        "scripted:script.json",
        "--out",
        "out",
        "--run-record",
        "rec.json",
        "--allow-commands",
    ];
    let o = ais_within(tmp.path(), &run);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("rec.json")).unwrap())
            .unwrap();
    assert_eq!(rec["status"], "succeeded", "{rec:#}");
    let attempts = rec["nodes"][0]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "{rec:#}");
    assert_eq!(attempts[0]["status"], "criteria_failed");
    // Where the schema bounds the number, the graph does not run.
    let bad = text
        .replace(
            "intelligence: { tier: standard,",
            "intelligence: { tier: standard, level: 1.0e300,",
        )
        .replace("max_delay_seconds: 0", "max_delay_seconds: -1.0e300");
    assert_ne!(bad, text);
    std::fs::write(&graph, bad).unwrap();
    let o = ais_within(tmp.path(), &run);
    let said = all(&o);
    assert_eq!(o.status.code(), Some(2), "{said}");
    assert!(
        said.contains("1e+300 is greater than the maximum")
            && said.contains("-1e+300 is less than the minimum")
            && said.contains("g.agraph.yaml:13:"),
        "{said}"
    );
}
