//! `ais run` and `ais check` with a model configuration (`ais.toml`, `--models FILE`): each
//! slot answered by the tier it names and the trace saying which model answered; a misspelled
//! tier refused before the run with a did-you-mean at its line; `--model` naming a tier.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

const PROGRAM: &str = r#"walker:
  name: Two
  carries:
    task: {type: str, role: input}
    draft: {type: str, produced_by: write}
    final: {type: str, produced_by: polish}
nodes:
  - {id: write, type: GEN-RAW, reads: [task], writes: [draft], doc: Write a first draft., model: small}
  - {id: polish, type: GEN-RAW, reads: [draft], writes: [final], doc: Polish the draft., model: big}
  - {id: done, type: TERMINAL, reads: [final]}
edges:
  - {from: write, to: polish}
  - {from: polish, to: done}
"#;

fn ais_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(dir)
        .env_remove("AIS_MODEL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
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

/// A project: the program, two scripted tiers and `ais.toml`.
fn project(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("two.agir"), PROGRAM).unwrap();
    std::fs::write(
        dir.path().join("small.json"),
        r#"{"write": ["a small draft"]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("big.json"),
        r#"{"polish": ["a big polish"]}"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("ais.toml"), config).unwrap();
    dir
}

const TIERS: &str = "[models]\nsmall = \"scripted:small.json\"\nbig = \"scripted:big.json\"\n";

fn trace(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("trace.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn each_slot_is_filled_by_the_tier_it_names_and_the_trace_says_which() {
    let dir = project(TIERS);
    let out = ais_in(
        dir.path(),
        &[
            "run",
            "two.agir",
            "--task",
            "a task",
            "--format",
            "json",
            "--trace",
            "trace.jsonl",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["report"]["final"], "a big polish", "{report:#}");
    let events = trace(dir.path());
    let slot = |id: &str| {
        events
            .iter()
            .find(|e| e["instruction"] == id)
            .map(|e| e["slot"].clone())
            .unwrap()
    };
    let small = dir.path().join("small.json");
    assert_eq!(
        slot("write")["model"],
        format!("scripted:{}", small.display())
    );
    assert_eq!(slot("write")["tier"], "small");
    assert_eq!(slot("polish")["tier"], "big");
}

#[test]
fn a_misspelled_tier_is_refused_before_the_run_with_a_did_you_mean() {
    let dir =
        project("[models]\nsmall = \"scripted:small.json\"\nbigger = \"scripted:big.json\"\n");
    let out = ais_in(dir.path(), &["run", "two.agir", "--task", "a task"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("T1"), "{said}");
    assert!(said.contains("the model tier `big`"), "{said}");
    assert!(said.contains("bigger"), "{said}");
    assert!(
        said.contains("two.agir:9"),
        "the finding points at the slot's line: {said}"
    );
    assert!(!dir.path().join(".ais").join("runs.db").exists() || !said.contains("run "));

    // `ais check` reports the same finding when a configuration is at hand.
    let checked = ais_in(dir.path(), &["check", "two.agir"]);
    assert!(text(&checked).contains("T1"), "{}", text(&checked));
    // Without one, a tier name is the runtime's to resolve: nothing to say.
    std::fs::remove_file(dir.path().join("ais.toml")).unwrap();
    let checked = ais_in(dir.path(), &["check", "two.agir"]);
    assert!(!text(&checked).contains("T1"), "{}", text(&checked));
}

#[test]
fn the_model_flag_names_a_tier_and_a_bad_configuration_is_named() {
    // `--model small` makes the small tier the default: a slot without a tier uses it.
    let dir = project(TIERS);
    let plain = PROGRAM.replace(", model: big", "");
    std::fs::write(dir.path().join("two.agir"), plain).unwrap();
    std::fs::write(
        dir.path().join("small.json"),
        r#"{"write": ["a small draft"], "polish": ["polished small"]}"#,
    )
    .unwrap();
    let out = ais_in(
        dir.path(),
        &[
            "run", "two.agir", "--task", "a task", "--model", "small", "--format", "json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["report"]["final"], "polished small");
    let out = ais_in(
        dir.path(),
        &["run", "two.agir", "--task", "a task", "--model", "smal"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("did you mean `small`?"),
        "{}",
        text(&out)
    );

    // A configuration that does not read names the file and the line.
    std::fs::write(dir.path().join("bad.toml"), "[models]\nsmall = 3\n").unwrap();
    let out = ais_in(
        dir.path(),
        &[
            "run", "two.agir", "--task", "a task", "--models", "bad.toml",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("bad.toml"), "{}", text(&out));
}
