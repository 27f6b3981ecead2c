//! `ais check` on AGS 1.0 graph documents, through the real binary: the AGnnn codes in the
//! rustc-style and JSON reports, and the exit status. The material is read in place from
//! `../shared/ags/` (skipped with a notice when absent, a failure under `CI=true`).

use std::process::Command;

use crate::ags_support as support;

use support::ags_dir as ags;

fn ais(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("ais runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn check_reports_an_ags_rule_with_its_code_place_and_repair() {
    let Some(dir) = ags() else { return };
    let file = dir.join("conformance/invalid/ag201-forward-read.agraph.yaml");
    let (code, out) = ais(&["check", file.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("error[AG201]"), "{out}");
    assert!(
        out.contains("ag201-forward-read.agraph.yaml:17:15"),
        "{out}"
    );
    assert!(
        out.contains("= help: repair: add `later` to `depends_on`"),
        "{out}"
    );
    let (_, json) = ais(&["check", "--format", "json", file.to_str().unwrap()]);
    let report: serde_json::Value = serde_json::from_str(json.trim()).expect("one JSON report");
    let f = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "AG201")
        .expect("AG201");
    assert_eq!(
        (
            f["line"].as_u64(),
            f["column"].as_u64(),
            f["severity"].as_str()
        ),
        (Some(17), Some(15), Some("error"))
    );
    assert_eq!(report["outcome"], "failed");
}

#[test]
fn check_passes_a_clean_example_and_an_ags_json_document() {
    let Some(dir) = ags() else { return };
    let file = dir.join("examples/minimal.agraph.yaml");
    let (code, out) = ais(&["check", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("clean (0 errors, 0 warnings)"), "{out}");
    // The same document as JSON, and one AG-IR file in the same run, keep their own readers.
    let tmp = tempfile::tempdir().expect("a temp dir");
    let text = std::fs::read_to_string(&file).unwrap();
    let data = ais::ags::check_text(&text, None).data.unwrap();
    let json = tmp.path().join("minimal.agraph.json");
    std::fs::write(&json, serde_json::to_string(&data).unwrap()).unwrap();
    let (code, out) = ais(&["check", json.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    let broken = tmp.path().join("broken.agraph.json");
    std::fs::write(&broken, "{\"ags_version\": \"1.0\",").unwrap();
    let (code, out) = ais(&["check", broken.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("error[AG001]") && out.contains("broken.agraph.json:1:"),
        "{out}"
    );
}

#[test]
fn import_then_export_gives_the_graph_back_and_both_check_clean() {
    let Some(dir) = ags() else { return };
    let graph = dir.join("examples/link-audit.agraph.yaml");
    let tmp = tempfile::tempdir().expect("a temp dir");
    let (code, agir) = ais(&["import", graph.to_str().unwrap()]);
    assert_eq!(code, 0, "{agir}");
    let agir_path = tmp.path().join("link-audit.agir");
    std::fs::write(&agir_path, &agir).unwrap();
    let (code, out) = ais(&["check", agir_path.to_str().unwrap()]);
    assert_eq!(code, 0, "the imported program checks: {out}");
    let (code, json) = ais(&["export", "--ags", agir_path.to_str().unwrap()]);
    assert_eq!(code, 0, "{json}");
    let exported: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let original = ais::ags::check_text(&std::fs::read_to_string(&graph).unwrap(), None)
        .data
        .unwrap();
    assert_eq!(exported, original);
    // A graph with errors is not imported.
    let bad = dir.join("conformance/invalid/ag111-cycle.agraph.yaml");
    let (code, out) = ais(&["import", bad.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (2, ""));
    // `export` without a format is refused with the next step.
    let out = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(["export", agir_path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--ags"));
}
