//! `ais mcp lock`, `ais check` and `ais run` on programs whose tools are the official reference
//! MCP servers' (`@modelcontextprotocol/server-filesystem`, installed from the npm registry by
//! `.ci/run`): real subprocesses, real files in temporary directories.

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

/// Saves `body_text` at `note_file` through the file server (allowed: `$ALLOWED` only) and reads it
/// back; a refused write is routed to an explanation.
const NOTES: &str = r#"---
name: notes
description: Save a note through an MCP file server, and say so when the server refuses.
---
mcp_servers:
  fs:
    command: $BIN/mcp-server-filesystem
    args: [$ALLOWED]
tools:
  write_file: {sig: "(path: path, content: str) -> dict", surface: ACT, serves: [save], mcp: {server: fs}}
  read_text_file: {surface: SENSE, serves: [check], mcp: {server: fs}}
walker:
  name: Notes
  carries:
    note_file: {type: path, role: input}
    body_text: {type: str, role: input}
    saved: {type: outcome, produced_by: save}
    readback: {type: dict, produced_by: check}
    note: {type: str, produced_by: refuse}
nodes:
  - {id: save, type: ACT, owner: code, reads: [note_file, body_text], writes: [saved]}
  - {id: gate, type: ROUTE, owner: code, reads: [saved]}
  - {id: check, type: SENSE, owner: code, reads: [note_file], writes: [readback]}
  - {id: refuse, type: CODE, owner: code, reads: [saved], writes: [note], body: "'refused: ' + saved.error"}
  - {id: done, type: TERMINAL, reads: [readback, note]}
edges:
  - {from: save, to: gate}
  - {from: gate, to: check, guard: "saved.ok == true"}
  - {from: gate, to: refuse}
  - {from: check, to: done}
  - {from: refuse, to: done}
"#;

struct Setup {
    dir: tempfile::TempDir,
    allowed: std::path::PathBuf,
}

fn setup(server: &Path) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let allowed = dir.path().join("allowed");
    std::fs::create_dir(&allowed).unwrap();
    let allowed = allowed.canonicalize().unwrap();
    let program = NOTES
        .replace("$BIN", &server.parent().unwrap().display().to_string())
        .replace("$ALLOWED", &allowed.display().to_string());
    std::fs::write(dir.path().join("notes.agir"), program).unwrap();
    Setup { dir, allowed }
}

fn run_notes(s: &Setup, dest: &Path) -> Output {
    let dest = format!("note_file={}", dest.display());
    ais_in(
        s.dir.path(),
        &[
            "run",
            "notes.agir",
            "--task",
            "",
            "--input",
            &dest,
            "--input",
            "body_text=hello from ais",
            "--out",
            "out",
            "--format",
            "json",
        ],
    )
}

#[test]
fn a_write_inside_the_allowed_directory_lands_and_one_outside_is_routed() {
    let Some(server) = bin("mcp-server-filesystem") else {
        return;
    };
    let s = setup(&server);
    let lock = ais_in(s.dir.path(), &["mcp", "lock", "notes.agir"]);
    assert!(lock.status.success(), "{}", text(&lock));
    assert!(
        text(&lock).contains("wrote notes.mcp.lock (2 tools of 1 server)"),
        "{}",
        text(&lock)
    );
    let check = ais_in(s.dir.path(), &["check", "notes.agir"]);
    // write_file is an ACT; read_text_file is read-only, so the SENSE is clean.
    assert!(check.status.success(), "{}", text(&check));
    assert!(
        text(&check).contains("notes.agir: clean"),
        "{}",
        text(&check)
    );

    let inside = s.allowed.join("note.txt");
    let o = run_notes(&s, &inside);
    assert!(o.status.success(), "{}", text(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        report["report"]["readback"]["content"], "hello from ais",
        "{report:#}"
    );
    assert_eq!(std::fs::read_to_string(&inside).unwrap(), "hello from ais");

    let outside = s.dir.path().join("escaped.txt");
    let o = run_notes(&s, &outside);
    assert!(o.status.success(), "routed, so ok: {}", text(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let note = report["report"]["note"].as_str().unwrap();
    assert!(
        note.starts_with("refused: at `save`: tool `write_file`"),
        "{note}"
    );
    assert!(note.contains("outside allowed directories"), "{note}");
    assert!(!outside.exists(), "the server wrote outside its directory");
}

#[test]
fn a_changed_lock_is_reported_by_check_and_refused_by_run() {
    let Some(server) = bin("mcp-server-filesystem") else {
        return;
    };
    let s = setup(&server);
    assert!(
        ais_in(s.dir.path(), &["mcp", "lock", "notes.agir"])
            .status
            .success()
    );
    // The lock as it would be had the server renamed `content` to `contents`.
    let lock_path = s.dir.path().join("notes.mcp.lock");
    let mut lock: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&lock_path).unwrap()).unwrap();
    let schema = &mut lock["servers"]["fs"]["write_file"]["inputSchema"];
    let content = schema["properties"]
        .as_object_mut()
        .unwrap()
        .shift_remove("content")
        .unwrap();
    schema["properties"]["contents"] = content;
    schema["required"] = serde_json::json!(["path", "contents"]);
    std::fs::write(&lock_path, serde_json::to_string_pretty(&lock).unwrap()).unwrap();

    let check = ais_in(s.dir.path(), &["check", "notes.agir"]);
    let out = text(&check);
    assert_eq!(check.status.code(), Some(1), "{out}");
    assert!(out.contains("error[M1]: tool `write_file` has parameter `content`, which the server's (locked) input schema does not have"), "{out}");
    assert!(out.contains("did you mean `contents`?"), "{out}");
    assert!(
        out.contains("notes.agir:10:21"),
        "points at the tool's sig: {out}"
    );

    let o = run_notes(&s, &s.allowed.join("note.txt"));
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(
        out.contains("`fs`'s tool `write_file` (bound to `write_file`) no longer matches the lock"),
        "{out}"
    );
    assert!(out.contains("parameter(s) added: `content`"), "{out}");
    assert!(!s.allowed.join("note.txt").exists(), "a step ran");
}

#[test]
fn the_example_checks_offline_and_runs_against_the_pinned_server() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mcp");
    // No server starts for a check: the lock beside the program answers.
    let check = ais_in(&root, &["check", "notes.agir"]);
    assert!(check.status.success(), "{}", text(&check));
    assert!(
        text(&check).contains("notes.agir: clean"),
        "{}",
        text(&check)
    );

    let Some(server) = bin("mcp-server-filesystem") else {
        return;
    };
    // The same program and lock, with this machine's copy of the pinned server for `npx`.
    let dir = tempfile::tempdir().unwrap();
    mcp_support::notes_example(dir.path(), &server);
    let o = ais_in(
        dir.path(),
        &[
            "run",
            "notes.agir",
            "--task",
            "",
            "--input",
            "note_file=today.md",
            "--input",
            "note_text=buy milk",
            "--out",
            "out",
            "--format",
            "json",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        report["report"]["readback"]["content"], "buy milk",
        "{report:#}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes/today.md")).unwrap(),
        "buy milk"
    );
}
