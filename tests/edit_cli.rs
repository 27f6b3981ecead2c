//! `ais edit` as a user runs it: JSON in and out through the binary, two patchers racing on
//! one file as real processes, and hostile input (huge patches, 100,000 operations, deep
//! nesting, path characters, files outside the root) each refused clearly with nothing
//! written.

use serde_json::{Value as Json, json};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PLAN: &str = include_str!("../examples/writing_plans.agir");

fn ais_edit(root: &Path, verb: &str, args: &str) -> (i32, Json) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(["edit", verb, "-", "--root"])
        .arg(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // A refused request may be answered before all of it is read.
    let _ = stdin.write_all(args.as_bytes());
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let json = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap(), json)
}

fn root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.agir"), PLAN).unwrap();
    dir
}

#[test]
fn the_cli_answers_json_and_exits_by_status() {
    let dir = root();
    let out = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args([
            "edit",
            "view",
            r#"{"file":"plan.agir","target":"instruction:verify"}"#,
            "--root",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["generation"].as_str().unwrap().starts_with('g'));
    let (code, r) = ais_edit(
        dir.path(),
        "rename",
        r#"{"file":"plan.agir","target":"carry:plan_okk","to":"x"}"#,
    );
    assert_eq!(code, 1);
    assert_eq!(r["reason"], "unknown_target");
    assert_eq!(r["possible_repairs"][0]["call"]["tool"], "rename");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("plan.agir")).unwrap(),
        PLAN
    );
    let (code, r) = ais_edit(dir.path(), "help", "{}");
    assert_eq!((code, r["catalog"].as_str()), (0, Some("ais-edit/1")));
}

#[test]
fn two_patchers_racing_on_one_file_one_wins_the_other_is_stale_and_the_file_is_never_torn() {
    let dir = root();
    let path = dir.path().join("plan.agir");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // A reader that checks, all the while, that every state of the file reads as AG-IR.
    let reader = {
        let (path, stop) = (path.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut reads = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let text = std::fs::read_to_string(&path).unwrap();
                ais::agir::read(&text).unwrap_or_else(|e| panic!("torn file: {e}\n{text}"));
                reads += 1;
            }
            reads
        })
    };
    for round in 0..6 {
        let (_, v) = ais_edit(
            dir.path(),
            "view",
            r#"{"file":"plan.agir","target":"instruction:verify"}"#,
        );
        let g = v["generation"].as_str().unwrap().to_owned();
        let spawn = |doc: &str| {
            let args = json!({"file": "plan.agir", "ops": [
                {"op": "set_doc", "target": "instruction:verify", "doc": doc, "generation": g},
            ]})
            .to_string();
            let root = dir.path().to_owned();
            std::thread::spawn(move || ais_edit(&root, "patch", &args))
        };
        let (a, b) = (spawn(&format!("A{round}")), spawn(&format!("B{round}")));
        let (a, b) = (a.join().unwrap(), b.join().unwrap());
        let statuses = [a.1["status"].clone(), b.1["status"].clone()];
        assert!(statuses.contains(&json!("ok")), "{a:?} {b:?}");
        let loser = if a.1["status"] == "ok" { &b } else { &a };
        assert_eq!(loser.0, 1, "{loser:?}");
        assert_eq!(loser.1["reason"], "stale_generation", "{loser:?}");
        assert_eq!(loser.1["possible_repairs"][0]["call"]["tool"], "view");
        let doc = ais::agir::read(&std::fs::read_to_string(&path).unwrap())
            .unwrap()
            .program
            .instruction("verify")
            .unwrap()
            .1
            .doc
            .clone()
            .unwrap();
        let winner = if a.1["status"] == "ok" { "A" } else { "B" };
        assert_eq!(doc, format!("{winner}{round}"));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
    // No temporary file is left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// Asserts a rejection of `reason` within a generous bound (a guard against a hang, not a
/// benchmark), with the file unchanged.
fn refused(dir: &Path, verb: &str, args: &str, reason: &str) -> Json {
    let start = Instant::now();
    let (code, r) = ais_edit(dir, verb, args);
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "took {:?}",
        start.elapsed()
    );
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["reason"], reason, "{r}");
    assert_eq!(
        std::fs::read_to_string(dir.join("plan.agir")).unwrap(),
        PLAN
    );
    r
}

#[test]
fn hostile_input_is_refused_clearly_and_nothing_is_written() {
    let dir = root();
    // A 10 MB patch.
    let big = format!(
        r#"{{"file":"plan.agir","ops":[{{"op":"set_doc","target":"program","doc":"{}"}}]}}"#,
        "x".repeat(10 * 1024 * 1024)
    );
    let r = refused(dir.path(), "patch", &big, "too_large");
    assert!(r["detail"].as_str().unwrap().contains("split"), "{r}");
    // 100,000 operations.
    let op = r#"{"op":"set_doc","target":"program","doc":"x"}"#;
    let many = format!(
        r#"{{"file":"plan.agir","ops":[{}]}}"#,
        vec![op; 100_000].join(",")
    );
    refused(dir.path(), "patch", &many, "too_large");
    // A deeply nested expression.
    let deep = format!("{}plan_ok{}", "(".repeat(5000), ")".repeat(5000));
    let args = json!({"file": "plan.agir", "ops": [
        {"op": "set_guard", "from": "verify", "to": "save", "guard": deep}]});
    let r = refused(dir.path(), "patch", &args.to_string(), "too_large");
    assert_eq!(r["diagnostics"][0]["code"], "limit_error");
    // Deeply nested JSON.
    let nested = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let args = format!(r#"{{"file":"plan.agir","ops":{nested}}}"#);
    refused(dir.path(), "patch", &args, "bad_shape");
    // Ids with path characters.
    for id in ["../../etc/passwd", "a/b", "x\u{0}y", "c:\\d", "..", "a->b"] {
        let args = json!({"file": "plan.agir", "ops": [
            {"op": "insert_between", "from": "verify", "to": "save",
             "instruction": {"id": id, "type": "GEN-RAW", "doc": "x"}}]});
        refused(dir.path(), "patch", &args.to_string(), "invalid_name");
        let args = json!({"file": "plan.agir", "ops": [
            {"op": "rename", "target": "carry:plan_md", "to": id}]});
        refused(dir.path(), "patch", &args.to_string(), "invalid_name");
    }
    // A patch naming a file outside the root.
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.agir");
    std::fs::write(&victim, PLAN).unwrap();
    for file in [
        victim.display().to_string(),
        format!(
            "../{}/victim.agir",
            outside.path().file_name().unwrap().to_string_lossy()
        ),
    ] {
        let args =
            json!({"file": file, "ops": [{"op": "set_doc", "target": "program", "doc": "x"}]});
        refused(dir.path(), "patch", &args.to_string(), "outside_root");
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), PLAN);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}
