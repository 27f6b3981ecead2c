//! `ais check` and the faithfulness audit (spec §9.5): `--source` checks quotes and the digest
//! against the source document, `--strict` fails on warnings, `--fan-out-cap` sets G10's cap,
//! and the JSON report carries each obligation's standing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

const PROGRAM: &str = "tests/fixtures/audit/notes.agir";
const SOURCE: &str = "tests/fixtures/audit/SKILL.md";

fn ais(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .output()
        .expect("the ais binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

#[test]
fn a_faithful_program_with_its_source_is_clean_and_the_note_counts_obligations() {
    let o = ais(&root(), &["check", PROGRAM, "--source", SOURCE, "--strict"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("faithfulness: 4 of 4 required obligations realized (5 in the record); 3 findings silenced by accepted deviations"), "{out}");
    assert!(out.contains(&format!("{PROGRAM}: clean")), "{out}");
}

#[test]
fn a_paraphrased_quote_warns_and_strict_makes_it_fail() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join(PROGRAM))
        .unwrap()
        .replace(
            "quote: Never include secrets.",
            "quote: Do not leak secrets.",
        );
    std::fs::write(dir.path().join("p.agir"), text).unwrap();
    std::fs::copy(root().join(SOURCE), dir.path().join("SKILL.md")).unwrap();
    let o = ais(dir.path(), &["check", "p.agir", "--source", "SKILL.md"]);
    let out = stdout(&o);
    assert_eq!(
        o.status.code(),
        Some(0),
        "a faithfulness deficit is a warning: {out}"
    );
    assert!(
        out.contains(
            "warning[F1]: the quote of obligation `r_secret` is not in the source verbatim"
        ),
        "{out}"
    );
    assert!(out.contains("--> p.agir:48:65"), "{out}");
    let o = ais(
        dir.path(),
        &["check", "p.agir", "--source", "SKILL.md", "--strict"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    // Without the source, quotes are not checked.
    let o = ais(dir.path(), &["check", "p.agir", "--strict"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn json_reports_each_obligation_and_the_accepted_deviations() {
    let o = ais(&root(), &["check", PROGRAM, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let f = &v["faithfulness"];
    let obligations = f["obligations"].as_array().unwrap();
    assert_eq!(obligations.len(), 5);
    assert_eq!(obligations[0]["id"], "r_draft");
    assert_eq!(obligations[0]["required"], "instruction");
    assert_eq!(obligations[0]["realized"], true);
    assert_eq!(obligations[0]["traced_by"], serde_json::json!(["draft"]));
    assert_eq!(obligations[2]["required"], "optional");
    assert_eq!(
        obligations[4]["traced_by"],
        serde_json::json!(["save", "tool:save_note"])
    );
    assert_eq!(f["accepted"].as_array().unwrap().len(), 3);
    assert_eq!(f["accepted"][0]["deviation"], 0);
}

#[test]
fn the_fan_out_cap_is_configurable() {
    let o = ais(
        &root(),
        &["check", PROGRAM, "--fan-out-cap", "0", "--format", "json"],
    );
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let ids: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["G10", "G10", "G10"], "{v}");
}

#[test]
fn a_missing_source_is_named_with_exit_2() {
    let o = ais(&root(), &["check", PROGRAM, "--source", "no/such/SKILL.md"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no/such/SKILL.md"), "{err}");
}
