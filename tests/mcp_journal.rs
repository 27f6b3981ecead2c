//! MCP calls in the journal: an MCP tool call is an effect of kind `mcp` (its own row kind, in
//! `ais runs show` too), which runs once unless its server marks the tool read-only; one in
//! flight at a crash stops the resumed run until the user says `--retry` or `--mark-done`.
//! Against the reference filesystem server `.ci/run` installs from the npm registry.

use crate::mcp_support;

use mcp_support::bin;
use std::path::Path;
use std::process::{Command, Output};

fn ais_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(dir)
        .env_remove("AIS_MODEL")
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1")
        .output()
        .expect("the ais binary runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Writes a note through the file server (`write_file`: not read-only), then reads it back
/// (`read_text_file`: read-only).
const SAVE: &str = r#"---
name: save_note
description: Save a note through an MCP file server and read it back.
---
mcp_servers:
  fs:
    command: $BIN/mcp-server-filesystem
    args: [$ALLOWED]
tools:
  write_file: {sig: "(path: path, content: str) -> dict", surface: ACT, serves: [save], mcp: {server: fs}}
  read_text_file: {surface: SENSE, serves: [check], mcp: {server: fs}}
walker:
  name: SaveNote
  carries:
    note_file: {type: path, role: input}
    body_text: {type: str, role: input}
    saved: {type: dict, produced_by: save}
    readback: {type: dict, produced_by: check}
nodes:
  - {id: save, type: ACT, owner: code, reads: [note_file, body_text], writes: [saved]}
  - {id: check, type: SENSE, owner: code, reads: [note_file], writes: [readback]}
  - {id: done, type: TERMINAL, reads: [readback]}
edges:
  - {from: save, to: check}
  - {from: check, to: done}
"#;

#[test]
fn an_mcp_call_is_journaled_as_mcp_and_is_not_repeated_after_a_crash_unless_asked() {
    let Some(server) = bin("mcp-server-filesystem") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let allowed = dir.path().join("allowed");
    std::fs::create_dir(&allowed).unwrap();
    let allowed = allowed.canonicalize().unwrap();
    let program = SAVE
        .replace("$BIN", &server.parent().unwrap().display().to_string())
        .replace("$ALLOWED", &allowed.display().to_string());
    std::fs::write(dir.path().join("save.agir"), program).unwrap();
    let lock = ais_in(dir.path(), &["mcp", "lock", "save.agir"]);
    assert!(lock.status.success(), "{}", text(&lock));
    let note = allowed.join("note.txt");
    let input = format!("note_file={}", note.display());
    let run = ais_in(
        dir.path(),
        &[
            "run",
            "save.agir",
            "--task",
            "",
            "--input",
            &input,
            "--input",
            "body_text=hello",
            "--out",
            "out",
        ],
    );
    assert!(run.status.success(), "{}", text(&run));
    assert_eq!(std::fs::read_to_string(&note).unwrap(), "hello");

    let db = dir.path().join("out/.ais/runs.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let id: String = conn
        .query_row("SELECT id FROM runs", [], |r| r.get(0))
        .unwrap();

    // Both calls are rows of kind `mcp`: the write runs once, the read-only read may rerun.
    let show = ais_in(
        dir.path(),
        &["runs", "--out", "out", "show", &id, "--format", "json"],
    );
    assert!(show.status.success(), "{}", text(&show));
    let v: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    let effects = v["effects"].as_array().unwrap();
    let kinds: Vec<(&str, &str, &str)> = effects
        .iter()
        .map(|e| {
            let e = &e["effect"];
            (
                e["name"].as_str().unwrap(),
                e["kind"].as_str().unwrap(),
                e["idempotency"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("write_file", "mcp", "once"),
            ("read_text_file", "mcp", "retry")
        ],
        "{v:#}"
    );
    let human = ais_in(dir.path(), &["runs", "--out", "out", "show", &id]);
    let table = text(&human);
    assert!(
        table
            .lines()
            .any(|l| l.contains(" mcp ") && l.contains("write_file") && l.contains("once")),
        "{table}"
    );

    // The process died during the write: its intent is journaled, its result is not.
    let step: i64 = conn
        .query_row(
            "SELECT step FROM effects WHERE name='write_file'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    conn.execute("UPDATE effects SET result=NULL WHERE step=?1", [step])
        .unwrap();
    conn.execute("DELETE FROM effects WHERE step>?1", [step])
        .unwrap();
    conn.execute("DELETE FROM steps WHERE step>=?1", [step])
        .unwrap();
    conn.execute(
        "UPDATE runs SET status='running', steps=0, outcome=NULL",
        [],
    )
    .unwrap();
    drop(conn);
    std::fs::remove_file(&note).unwrap();

    let stopped = ais_in(dir.path(), &["resume", &id, "--out", "out"]);
    assert_eq!(stopped.status.code(), Some(4), "{}", text(&stopped));
    let said = text(&stopped);
    for needle in [
        "mcp `write_file`",
        "may have run once",
        "--retry",
        "--mark-done",
    ] {
        assert!(said.contains(needle), "{needle}: {said}");
    }
    assert!(!note.exists(), "the interrupted write ran again");

    // Marked done: the write is not made again, and the run goes on to its read — which fails
    // (the note is gone) and lands as the step's error value, not a second write.
    let marked = ais_in(dir.path(), &["resume", &id, "--out", "out", "--mark-done"]);
    assert!(!note.exists(), "--mark-done wrote again: {}", text(&marked));
    let rows: Vec<(String, Option<String>)> = {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let mut s = conn
            .prepare("SELECT name, result FROM effects WHERE name='write_file'")
            .unwrap();
        s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(rows, [("write_file".to_owned(), Some("null".to_owned()))]);
}
