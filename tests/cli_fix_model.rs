//! `ais fix --model`: the model repair rung from the command line — a good patch written, a
//! `--dry-run` that shows the patch and writes nothing, hostile answers discarded and named
//! with the file byte-identical.

use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const PROGRAM: &str = "tests/fixtures/repair/notes.agir";

fn setup(answers: serde_json::Value) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let text =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(PROGRAM)).unwrap();
    std::fs::write(dir.path().join("notes.agir"), &text).unwrap();
    std::fs::write(
        dir.path().join("answers.json"),
        json!({ "repair": answers }).to_string(),
    )
    .unwrap();
    (dir, text)
}

fn ais(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("the ais binary runs")
}

/// `ais fix notes.agir --model scripted:answers.json ARGS…` in `dir`.
fn fix(dir: &Path, more: &[&str]) -> Output {
    let mut args = vec!["fix", "notes.agir", "--model", "scripted:answers.json"];
    args.extend_from_slice(more);
    ais(dir, &args)
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

fn good() -> serde_json::Value {
    json!({"ops": [{"op": "set_traces_to", "target": "instruction:polish", "traces_to": ["r_polish"]}]})
}

#[test]
fn a_good_patch_is_written_with_its_deviation() {
    let (dir, before) = setup(json!([good()]));
    let o = fix(dir.path(), &["-w"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("model repair F1 on `polish`, attempt 1: adopted: findings 2 → 0"),
        "{err}"
    );
    assert!(err.contains("repaired F1 on `polish`"), "{err}");
    assert!(err.contains("notes.agir: fixed"), "{err}");
    let after = std::fs::read_to_string(dir.path().join("notes.agir")).unwrap();
    assert_ne!(after, before);
    assert!(after.contains("traces_to: [r_polish]"));
    let check = ais(dir.path(), &["check", "notes.agir", "--strict"]);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stdout));
}

#[test]
fn dry_run_shows_the_patch_and_writes_nothing() {
    let (dir, before) = setup(json!([good()]));
    let o = fix(dir.path(), &["--dry-run"]);
    let out = text(&o.stdout);
    assert!(out.contains("\"op\": \"set_traces_to\""), "{out}");
    assert!(out.contains("+    traces_to: [r_polish]"), "{out}");
    assert!(text(&o.stderr).contains("1 patch would be adopted; nothing written"));
    let after = std::fs::read_to_string(dir.path().join("notes.agir")).unwrap();
    assert_eq!(after, before);
}

#[test]
fn hostile_answers_are_discarded_named_and_the_file_is_untouched() {
    let (dir, before) = setup(json!([
        "\u{1b}[2J rm -rf / \u{1b}[0m",
        {"ops": [
            {"op": "set_traces_to", "target": "instruction:polish", "traces_to": ["r_polish"]},
            {"op": "set_doc", "target": "instruction:publish", "doc": "Mail it to everyone."}
        ]},
        {"ops": [{"op": "set_traces_to", "target": "instruction:draft", "traces_to": ["r_polish"]}]},
    ]));
    let o = fix(dir.path(), &["-w", "--attempts", "2"]);
    let err = text(&o.stderr);
    assert!(err.contains("attempt 1: discarded (malformed)"), "{err}");
    assert!(err.contains("attempt 2: discarded (out_of_view): changes what is outside the view: instruction:publish"), "{err}");
    assert!(
        err.contains("discarded (obligation): drops obligation `r_draft`"),
        "{err}"
    );
    assert!(
        !err.contains('\u{1b}'),
        "a terminal escape reached stderr: {err:?}"
    );
    assert!(err.contains("no repair applies, file unchanged"), "{err}");
    let after = std::fs::read_to_string(dir.path().join("notes.agir")).unwrap();
    assert_eq!(after, before);
}

#[test]
fn a_model_spec_that_cannot_be_served_is_an_error_before_anything() {
    let (dir, before) = setup(json!([]));
    let o = ais(
        dir.path(),
        &[
            "fix",
            "notes.agir",
            "-w",
            "--model",
            "scripted:missing.json",
        ],
    );
    assert_ne!(o.status.code(), Some(0));
    assert!(
        text(&o.stderr).contains("missing.json"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.agir")).unwrap(),
        before
    );
    let o = ais(dir.path(), &["fix", "notes.agir", "--dry-run"]);
    assert_eq!(o.status.code(), Some(64), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("--model"));
}
