//! What the end-to-end tests of `ais run` on AGS graphs share: the scripted run, its record
//! (validated against the run schema, its status matched by the exit code), the minimal
//! example edited, the pause-and-answer loop.
#![allow(dead_code)]

pub use std::path::Path;
pub use std::process::{Command, Output, Stdio};

use crate::ags_support as support;

pub use support::ags_dir as ags;

/// Runs the `ais` binary in `dir` with `args` (no color, no model from the environment).
pub fn ais(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("AIS_MODEL")
        .stdin(Stdio::null())
        .output()
        .expect("ais runs")
}

/// A run's stdout and stderr, together.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The run record at `path`, validated against the AGS run schema.
pub fn record(path: &Path) -> serde_json::Value {
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("a run record")).expect("JSON");
    if let Err(errors) = ais::ags::validate_run_record(&rec) {
        panic!("the run record fails the run schema: {errors:#?}");
    }
    // Every record claims the level this harness executes in full (SPEC.md §19).
    assert_eq!(rec["harness"]["conformance_level"], 1, "{rec:#}");
    rec
}

/// The exit code a run with record `rec` ends with: its record's status decides it (a run the
/// record calls `failed` or `partial` is no success, although the program reached its end).
pub fn assert_exit_matches(o: &Output, rec: &serde_json::Value) {
    let expected = match rec["status"].as_str() {
        Some("succeeded") => 0,
        Some("awaiting_human") => 3,
        _ => 1,
    };
    assert_eq!(
        o.status.code(),
        Some(expected),
        "a `{}` run: {}",
        rec["status"],
        text(o)
    );
}

/// The command line of a scripted run of `graph` in a temp dir: the task `t`, the model
/// `script.json`, the output root `out`, the record `rec.json`, the trace `trace.jsonl`.
pub fn scripted_run(graph: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ais"));
    cmd.args(["run", graph.to_str().unwrap(), "--task", "t"])
        .args(["--model", "scripted:script.json", "--out", "out"])
        .args(["--run-record", "rec.json", "--trace", "trace.jsonl"])
        .env("NO_COLOR", "1")
        .env_remove("AIS_MODEL")
        .env_remove("AIS_MODEL_TIER")
        .stdin(Stdio::null());
    cmd
}

/// Runs `graph` on `script` with `extra` arguments and `env` ([`scripted_run`]); returns the
/// output and the record, whose status the exit code must match.
pub fn run_with(
    tmp: &Path,
    graph: &Path,
    script: serde_json::Value,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Output, Option<serde_json::Value>) {
    std::fs::write(tmp.join("script.json"), script.to_string()).unwrap();
    let mut cmd = scripted_run(graph);
    cmd.args(extra).current_dir(tmp);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    let path = tmp.join("rec.json");
    let rec = path.exists().then(|| record(&path));
    if let Some(rec) = &rec {
        assert_exit_matches(&o, rec);
    }
    (o, rec)
}

/// Runs minimal.agraph.yaml to its gate and answers it; returns the record of the resumed run.
pub fn run_minimal(
    answer: &str,
    body: &str,
) -> Option<(tempfile::TempDir, serde_json::Value, serde_json::Value)> {
    run_minimal_with(answer, &[body])
}

/// The text of minimal.agraph.yaml with each `(from, to)` edit made; `None` without the AGS
/// directory.
pub fn minimal_edited(edits: &[(&str, &str)]) -> Option<String> {
    let text = std::fs::read_to_string(ags()?.join("examples/minimal.agraph.yaml")).unwrap();
    Some(edits.iter().fold(text, |t, (from, to)| {
        assert!(t.contains(from), "minimal.agraph.yaml has no `{from}`");
        t.replace(from, to)
    }))
}

/// As [`run_minimal`], with the task's answer for each attempt.
pub fn run_minimal_with(
    answer: &str,
    bodies: &[&str],
) -> Option<(tempfile::TempDir, serde_json::Value, serde_json::Value)> {
    let text = minimal_edited(&[])?;
    Some(run_gated(&text, "draft_contributing", answer, bodies))
}

/// Runs a graph of the minimal example's shape, `source` (its task node `task`), to its gate
/// and answers it; returns the records of the paused and the resumed run.
pub fn run_gated(
    source: &str,
    task: &str,
    answer: &str,
    bodies: &[&str],
) -> (tempfile::TempDir, serde_json::Value, serde_json::Value) {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let graph = tmp.path().join("graph.agraph.yaml");
    std::fs::write(&graph, source).unwrap();
    let script = serde_json::json!({ task: bodies });
    let (o, paused) = run_with(tmp.path(), &graph, script, &[], &[]);
    assert_eq!(o.status.code(), Some(3), "pauses at the gate: {}", text(&o));
    assert!(
        text(&o).contains("Approve the new CONTRIBUTING.md?"),
        "{}",
        text(&o)
    );
    let paused = paused.expect("a record");
    let run = run_id(&o);
    let o = resume(tmp.path(), &run, answer, "done.json");
    let done = record(&tmp.path().join("done.json"));
    assert_exit_matches(&o, &done);
    (tmp, paused, done)
}

/// Resumes run `run` in `tmp` (output root `out`) with `answer`, writing the record `rec`.
pub fn resume(tmp: &Path, run: &str, answer: &str, rec: &str) -> Output {
    let args = ["resume", run, "--out", "out", "--answer", answer];
    ais(tmp, &[&args[..], &["--run-record", rec]].concat())
}

/// A journaled run's id: stderr names it (`run ID (journal PATH)`).
pub fn run_id(o: &Output) -> String {
    text(o)
        .lines()
        .find_map(|l| {
            l.strip_prefix("run ")
                .and_then(|r| r.split_whitespace().next())
        })
        .map(str::to_owned)
        .expect("the run's id on stderr")
}

/// The first diagnostic of the record with `code`, if any.
pub fn diagnostic<'r>(rec: &'r serde_json::Value, code: &str) -> Option<&'r serde_json::Value> {
    rec["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["code"] == code)
}

/// The message of the record's diagnostic `code` (the test fails, showing the record, without).
pub fn message<'r>(rec: &'r serde_json::Value, code: &str) -> &'r str {
    diagnostic(rec, code)
        .and_then(|d| d["message"].as_str())
        .unwrap_or_else(|| panic!("no {code} in the record: {rec:#}"))
}

/// Each node of the record with its state, in the record's order.
pub fn states(rec: &serde_json::Value) -> Vec<(String, String)> {
    rec["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["node_id"].as_str().unwrap().to_owned(),
                n["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// A stub draft, too short for the minimal example's criterion.
pub const STUB: &str = "# Contributing\n\nTBD.\n";

/// A graph of `tests/fixtures/ags/`.
pub fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ags")
        .join(name)
}

/// The run's id, from a paused run's stderr (`resume with: ais resume ID …`).
pub fn handle(o: &Output) -> Option<String> {
    text(o).lines().find_map(|l| {
        l.strip_prefix("resume with: ais resume ")
            .and_then(|r| r.split_whitespace().next())
            .map(str::to_owned)
    })
}

/// Runs `graph` on `script` and answers each pause with the next of `answers`; returns the
/// prompts asked, in order, the last exit code and the last run record.
pub fn run_answering(
    tmp: &Path,
    graph: &Path,
    script: serde_json::Value,
    answers: &[&str],
) -> (Vec<String>, Option<i32>, serde_json::Value) {
    let (prompts, o, rec) = answering(tmp, graph, script, answers, std::time::Duration::ZERO);
    (prompts, o.status.code(), rec)
}

/// As [`run_answering`], each answer given `wait` after its question (a person who is slow to
/// answer); returns the last run's output instead of its exit code.
pub fn answering(
    tmp: &Path,
    graph: &Path,
    script: serde_json::Value,
    answers: &[&str],
    wait: std::time::Duration,
) -> (Vec<String>, Output, serde_json::Value) {
    let (mut o, _) = run_with(tmp, graph, script, &[], &[]);
    let mut prompts = Vec::new();
    let mut answers = answers.iter();
    while let Some(run) = handle(&o) {
        let asked = text(&o)
            .lines()
            .find(|l| l.contains(" needs `"))
            .unwrap_or("")
            .to_owned();
        prompts.push(asked.rsplit(": ").next().unwrap_or("").to_owned());
        let Some(answer) = answers.next() else { break };
        std::thread::sleep(wait);
        o = resume(tmp, &run, answer, "rec.json");
    }
    let rec = record(&tmp.join("rec.json"));
    assert_exit_matches(&o, &rec);
    (prompts, o, rec)
}
