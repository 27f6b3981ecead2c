//! A lift is a journaled run of the compiler program: killed with SIGKILL while the model is
//! answering, it resumes with `ais resume RUN_ID` without asking the model again for any slot
//! it had answered, and writes the same program an uninterrupted lift writes; `ais replay` of
//! the finished lift asks the model nothing and re-derives the same program.
//!
//! The model is a real HTTP server on loopback speaking OpenAI's chat completions (`openai:`
//! with `OPENAI_BASE_URL`), answering each slot from the csv-clean fixture's hand-written
//! answers and recording every request body.

use crate::providers_support;

use providers_support::{Answer, Proto};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The request the first lift is killed in: the fourth (extract, critic, critic, then the
/// adjudicator), which the server holds unanswered until the kill.
const KILL_AT: usize = 3;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("ais-lift/tests/lifts/csv-clean")
}

/// The instruction a slot request names in its system prompt (`# Instruction `extract``).
fn instruction(request: &serde_json::Value) -> String {
    let system = request["messages"][0]["content"]
        .as_str()
        .unwrap_or_default();
    system
        .split("# Instruction `")
        .nth(1)
        .and_then(|r| r.split('`').next())
        .unwrap_or_default()
        .to_owned()
}

/// A server answering the fixture's slots; a body it saw before gets the same answer; with
/// `hold`, the `KILL_AT`-th new body is held for a minute.
fn server(hold: bool) -> providers_support::OwnServer {
    let text = std::fs::read_to_string(fixture().join("answers.json")).unwrap();
    let script: serde_json::Value = serde_json::from_str(&text).unwrap();
    // Each distinct body: its answer index among its instruction's answers.
    let seen: Mutex<(Vec<String>, HashMap<String, usize>)> = Mutex::default();
    providers_support::serve_blocking(move |request| {
        let key = instruction(request);
        let body = request.to_string();
        let mut seen = seen.lock().unwrap();
        let fresh = !seen.0.contains(&body);
        let index = seen
            .0
            .iter()
            .position(|b| *b == body)
            .unwrap_or(seen.0.len());
        let nth = seen
            .0
            .iter()
            .take(index)
            .filter(|b| {
                serde_json::from_str::<serde_json::Value>(b).is_ok_and(|v| instruction(&v) == key)
            })
            .count();
        if fresh {
            seen.0.push(body);
        }
        let value = script[&key][nth].clone();
        let user = request["messages"][1]["content"]
            .as_str()
            .unwrap_or_default();
        let value = if user.contains("Put the result under the key \"value\"") {
            serde_json::json!({ "value": value })
        } else {
            value
        };
        let answer = Proto::OpenAi.answer(value);
        if hold && fresh && index == KILL_AT {
            Answer::Slow(Duration::from_secs(60), Box::new(answer))
        } else {
            answer
        }
    })
}

fn lift(dir: &Path, base: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ais"));
    cmd.args([
        "lift",
        fixture().join("SKILL.md").to_str().unwrap(),
        "--model",
        "openai:lift-test",
        "--out",
        "out",
    ]);
    env(&mut cmd, dir, base);
    cmd
}

fn env(cmd: &mut Command, dir: &Path, base: &str) {
    cmd.current_dir(dir)
        .env_remove("AIS_MODEL")
        .env_remove("RUST_LOG")
        .envs(Proto::OpenAi.env(base))
        .stdin(Stdio::null());
}

fn ais(dir: &Path, base: &str, args: &[&str]) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ais"));
    cmd.args(args);
    env(&mut cmd, dir, base);
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn bodies(server: &providers_support::OwnServer) -> Vec<String> {
    providers_support::received(&server.server)
        .into_iter()
        .map(|r| r.body.to_string())
        .collect()
}

#[test]
fn a_killed_lift_resumes_without_asking_again_and_replays_with_no_model() {
    // The uninterrupted lift.
    let whole = tempfile::tempdir().unwrap();
    let plain = server(false);
    let (code, all) = {
        let out = lift(whole.path(), &plain.base).output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert_eq!(code, 0, "{all}");
    let expected = std::fs::read_to_string(whole.path().join("out/clean_csv.agir")).unwrap();
    assert_eq!(
        bodies(&plain).len(),
        5,
        "extract, two critic rounds, adjudicate, design"
    );

    // The same lift, killed while the adjudicator's answer is held.
    let dir = tempfile::tempdir().unwrap();
    let held = server(true);
    let mut child = lift(dir.path(), &held.base)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let mut before = Vec::new();
    while before.len() <= KILL_AT {
        assert!(start.elapsed() < Duration::from_secs(60), "{before:?}");
        std::thread::sleep(Duration::from_millis(20));
        before.extend(bodies(&held));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(before.len(), KILL_AT + 1);
    assert!(!dir.path().join("out/clean_csv.agir").exists());

    let store = ais::rt::journal::sqlite::SqliteStore::open(
        &dir.path().join("out/.ais/runs.db"),
        ais::rt::journal::sqlite::Durability::Normal,
    )
    .unwrap();
    let run = store.runs().unwrap().into_iter().next().unwrap();
    drop(store);
    assert_eq!(
        run.status,
        ais::rt::journal::RunState::Running,
        "killed mid-run"
    );

    let (code, all) = ais(dir.path(), &held.base, &["resume", &run.id, "--out", "out"]);
    assert_eq!(code, 0, "{all}");
    assert!(all.contains("check: Clean"), "{all}");
    let after = bodies(&held);
    // Only what the killed lift had not been answered is asked again: the held request (once)
    // and the design; nothing answered before the kill is asked twice.
    assert_eq!(after.len(), 2, "{after:#?}");
    assert_eq!(after[0], before[KILL_AT], "the held request, asked again");
    let mut all_bodies = before[..KILL_AT].to_vec();
    all_bodies.extend(after);
    let mut unique = all_bodies.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), all_bodies.len(), "no answered request twice");
    let resumed = std::fs::read_to_string(dir.path().join("out/clean_csv.agir")).unwrap();
    assert_eq!(
        resumed, expected,
        "the same program as the uninterrupted lift"
    );

    // The replay: no request at all, the same program.
    let (code, all) = ais(
        dir.path(),
        &held.base,
        &["replay", &run.id, "--out", "out", "--format", "json"],
    );
    assert_eq!(code, 0, "{all}");
    assert!(bodies(&held).is_empty(), "a replay asks the model nothing");
    let v: serde_json::Value = serde_json::from_str(all.lines().next().unwrap()).unwrap();
    // `matches`: every slot answered from the journal for the same request, and the replayed
    // report (the program's AG-IR among it) equal to the recorded one.
    assert_eq!(v["matches"], true, "{all}");
    assert_eq!(v["differences"], serde_json::json!([]), "{all}");
}
