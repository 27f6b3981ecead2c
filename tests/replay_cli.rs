//! `ais replay`: a journaled run re-executed from its journal — on real runs of the binary,
//! real journal files and a real command tool that appends to a file.

use std::path::Path;
use std::process::{Command, Output};

const PROGRAM: &str = r#"---
name: digest
description: Outlines a topic, logs the outline, summarizes it.
---
walker:
  carries:
    task: {type: str, role: input}
    outline: {type: str, produced_by: outline}
    logged: {type: str, produced_by: log}
    summary: {type: str, produced_by: summarize}
tools:
  append_line:
    sig: "(outline) -> str"
    surface: ACT
    serves: [log]
    command: "echo {outline} >> log.txt && echo logged"
nodes:
  - {id: outline, type: GEN-RAW, doc: "Outline the topic.", reads: [task], writes: [outline]}
  - {id: log, type: ACT, owner: code, tool: append_line, reads: [outline], writes: [logged]}
  - {id: summarize, type: GEN-RAW, doc: "Summarize the outline.", reads: [outline], writes: [summary]}
  - {id: done, type: TERMINAL, reads: [summary, logged]}
edges:
  - {from: outline, to: log}
  - {from: log, to: summarize}
  - {from: summarize, to: done}
"#;

fn ais(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(dir)
        .env_remove("AIS_MODEL")
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Records one run of `program` on a scripted model in a fresh directory, then deletes the
/// script: whatever replays it afterwards cannot have asked it.
fn recorded(program: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.agir"), program).unwrap();
    std::fs::write(
        dir.path().join("s.json"),
        r#"{"outline": ["one two"], "summarize": ["A short summary."]}"#,
    )
    .unwrap();
    let o = ais(
        dir.path(),
        &[
            "run",
            "p.agir",
            "--task",
            "rivers",
            "--model",
            "scripted:s.json",
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    std::fs::remove_file(dir.path().join("s.json")).unwrap();
    assert_eq!(log(dir.path()), "one two\n");
    (dir, v["run"].as_str().unwrap().to_owned())
}

fn log(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("log.txt")).unwrap_or_default()
}

fn show(dir: &Path, id: &str) -> String {
    let o = ais(dir, &["runs", "show", id, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn a_recorded_run_replays_offline_and_leaves_its_journal_as_it_was() {
    let (dir, id) = recorded(PROGRAM);
    let before = show(dir.path(), &id);
    let o = ais(dir.path(), &["replay", &id]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("matches the recording"), "{}", text(&o));
    // Tools came from the journal: the command did not run again.
    assert_eq!(log(dir.path()), "one two\n");
    // A replay is a read: the run's rows are unchanged, and no run was added.
    assert_eq!(show(dir.path(), &id), before);
    let o = ais(dir.path(), &["runs"]);
    assert_eq!(text(&o).lines().filter(|l| l.contains("digest")).count(), 1);

    let o = ais(dir.path(), &["replay", &id, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["matches"], true, "{v}");
    assert_eq!(v["misses"], serde_json::json!([]));
}

#[test]
fn tools_live_run_the_command_again_and_tools_journal_do_not() {
    let (dir, id) = recorded(PROGRAM);
    let o = ais(dir.path(), &["replay", &id, "--tools", "journal"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        log(dir.path()),
        "one two\n",
        "a journal replay ran the tool"
    );
    let o = ais(dir.path(), &["replay", &id, "--tools", "live"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("tools live"), "{}", text(&o));
    assert_eq!(log(dir.path()), "one two\none two\n");
}

#[test]
fn editing_one_slots_doc_makes_that_slot_and_only_it_a_miss() {
    let (dir, id) = recorded(PROGRAM);
    let edited = PROGRAM.replace("Summarize the outline.", "Summarize the outline in a line.");
    std::fs::write(dir.path().join("p.agir"), edited).unwrap();
    let o = ais(dir.path(), &["replay", &id]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("differs from the recording"), "{out}");
    assert!(
        out.contains("`summarize` (slot `summarize`, step 3 effect 0): the doc changed"),
        "{out}"
    );
    assert!(out.contains("the program changed"), "{out}");

    let o = ais(dir.path(), &["replay", &id, "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let misses = v["misses"].as_array().unwrap();
    assert_eq!(misses.len(), 1, "{v}");
    assert_eq!(misses[0]["instruction"], "summarize");
    assert_eq!(misses[0]["differs"], serde_json::json!(["the doc changed"]));
    // The miss was answered with its recorded answer: the report is the recorded one.
    assert_eq!(v["differences"], serde_json::json!([]));
}

#[test]
fn a_changed_operand_is_named_and_a_changed_report_is_shown_as_a_diff() {
    let (dir, id) = recorded(PROGRAM);
    // `summarize` now reads the task too: another operand; and `log` writes what it logged
    // through a CODE step that changes the report.
    let edited = PROGRAM
        .replace(
            "doc: \"Summarize the outline.\", reads: [outline]",
            "doc: \"Summarize the outline.\", reads: [outline, task]",
        )
        .replace(
            "command: \"echo {outline} >> log.txt && echo logged\"",
            "command: \"echo {outline} >> log.txt && echo written\"",
        );
    std::fs::write(dir.path().join("p.agir"), edited).unwrap();
    let o = ais(dir.path(), &["replay", &id, "--tools", "live"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("`summarize` (slot `summarize`, step 3 effect 0): operand `task` is new"),
        "{out}"
    );
    assert!(out.contains("- report.logged: \"logged\""), "{out}");
    assert!(out.contains("+ report.logged: \"written\""), "{out}");
}

#[test]
fn a_malformed_or_foreign_journal_row_fails_closed_naming_the_row() {
    let (dir, id) = recorded(PROGRAM);
    let db = dir.path().join(".ais/runs.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE effects SET result='{not json' WHERE run=?1 AND step=3",
        [&id],
    )
    .unwrap();
    drop(conn);
    let o = ais(dir.path(), &["replay", &id]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains(&format!("run {id}")), "{out}");
    assert!(out.contains("effects row (step 3 effect 0)"), "{out}");
    assert!(out.contains("its result is not JSON"), "{out}");

    let (dir, id) = recorded(PROGRAM);
    let conn = rusqlite::Connection::open(dir.path().join(".ais/runs.db")).unwrap();
    conn.execute(
        "INSERT INTO effects SELECT run, 9, path, idx, kind, 'ghost', 'ghost', idempotency, request, result FROM effects WHERE run=?1 AND step=1",
        [&id],
    )
    .unwrap();
    drop(conn);
    let o = ais(dir.path(), &["replay", &id]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("effects row (step 9 effect 0)"), "{out}");
    assert!(out.contains("instruction `ghost`"), "{out}");
}

#[test]
fn an_unfinished_run_is_refused_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    let paused = PROGRAM
        .replace(
            "    task: {type: str, role: input}\n",
            "    task: {type: str, role: input}\n    approved: {type: bool, role: input, doc: \"Approve?\"}\n",
        )
        .replace(
            "reads: [outline], writes: [summary]",
            "reads: [outline, approved], writes: [summary]",
        );
    std::fs::write(dir.path().join("p.agir"), paused).unwrap();
    std::fs::write(
        dir.path().join("s.json"),
        r#"{"outline": ["one two"], "summarize": ["A short summary."]}"#,
    )
    .unwrap();
    let o = ais(
        dir.path(),
        &[
            "run",
            "p.agir",
            "--task",
            "x",
            "--model",
            "scripted:s.json",
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let id = v["run"].as_str().unwrap();
    let o = ais(dir.path(), &["replay", id]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains(&format!("run {id} did not finish")), "{out}");
    assert!(out.contains("paused for a human answer"), "{out}");
    assert!(out.contains(&format!("ais resume {id}")), "{out}");

    // Answered, it finished: its replay gives the recorded answer again and matches.
    let o = ais(dir.path(), &["resume", id, "--answer", "true"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    std::fs::remove_file(dir.path().join("s.json")).unwrap();
    let o = ais(dir.path(), &["replay", id]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    let o = ais(dir.path(), &["replay", "nope"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("there is no run `nope`"), "{}", text(&o));
}

#[test]
fn a_slot_the_recording_never_asked_stops_the_replay_and_a_removed_one_is_unasked() {
    let (dir, id) = recorded(PROGRAM);
    let added = PROGRAM
        .replace(
            "    summary: {type: str, produced_by: summarize}\n",
            "    summary: {type: str, produced_by: summarize}\n    title: {type: str, produced_by: title}\n",
        )
        .replace(
            "  - {id: done, type: TERMINAL, reads: [summary, logged]}",
            "  - {id: title, type: GEN-RAW, doc: \"Title it.\", reads: [summary], writes: [title]}\n  - {id: done, type: TERMINAL, reads: [summary, logged, title]}",
        )
        .replace(
            "  - {from: summarize, to: done}",
            "  - {from: summarize, to: title}\n  - {from: title, to: done}",
        );
    std::fs::write(dir.path().join("p.agir"), added).unwrap();
    let o = ais(dir.path(), &["replay", &id]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("`title` (slot `title`, step 4 effect 0): the recorded run never asked it"),
        "{out}"
    );
    assert!(out.contains("- status: \"ok\""), "{out}");
    assert!(out.contains("+ status: \"fault\""), "{out}");

    // `summarize` gone: its recorded answer is left unasked, and the report lacks `summary`.
    let removed = PROGRAM
        .replace("    summary: {type: str, produced_by: summarize}\n", "")
        .replace(
            "  - {id: summarize, type: GEN-RAW, doc: \"Summarize the outline.\", reads: [outline], writes: [summary]}\n",
            "",
        )
        .replace("reads: [summary, logged]", "reads: [logged]")
        .replace("  - {from: log, to: summarize}\n  - {from: summarize, to: done}", "  - {from: log, to: done}");
    std::fs::write(dir.path().join("p.agir"), removed).unwrap();
    let o = ais(dir.path(), &["replay", &id]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("not asked"), "{out}");
    assert!(
        out.contains("`summarize` (slot `summarize`, step 3 effect 0)"),
        "{out}"
    );
    assert!(
        out.contains("- report.summary: \"A short summary.\""),
        "{out}"
    );
    assert!(out.contains("+ report.summary: (absent)"), "{out}");
}
