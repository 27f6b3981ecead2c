//! `ais check` on CALLs and GEN-FILLs with several writes (issue 14): a CALL write the target
//! (found beside the file, as the runtime finds it) never produces is G9 with did-you-mean over
//! the target's TERMINAL reads, and a GEN-FILL writing three `str` carries is G9 with its
//! mechanical repair.

use std::process::{Command, Output};

fn ais(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("ais runs")
}

const LOOKUP: &str = r#"---
name: lookup
description: Look a contact up.
---
walker:
  name: Lookup
  carries:
    task: {type: str, role: input}
    contact: {type: str, produced_by: find}
    email: {type: str, produced_by: find}
    company_name: {type: str, produced_by: find}
nodes:
  - {id: find, type: GEN-FILL, reads: [task], writes: [contact, email, company_name], doc: "The contact the task names."}
  - {id: done, type: TERMINAL, reads: [contact, email, company_name]}
edges:
  - {from: find, to: done}
"#;

const ADDER: &str = r#"---
name: adder
description: Add the contact the task names.
---
walker:
  name: Adder
  carries:
    task: {type: str, role: input}
    contact: {type: str, produced_by: look}
    email: {type: str, produced_by: look}
    company_name: {type: str, produced_by: look}
    company: {type: str, produced_by: look}
nodes:
  - {id: look, type: CALL, target: Lookup, reads: [task], writes: [contact, email, company_name, company], doc: "Look the contact up."}
  - {id: done, type: TERMINAL, reads: [contact, company]}
edges:
  - {from: look, to: done}
"#;

#[test]
fn a_call_write_the_target_never_produces_is_g9_with_did_you_mean() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lookup.agir"), LOOKUP).unwrap();
    std::fs::write(dir.path().join("adder.agir"), ADDER).unwrap();
    let out = ais(dir.path(), &["check", "--format", "json", "adder.agir"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let report: serde_json::Value = serde_json::from_str(text.trim()).expect("one JSON line");
    let g9: Vec<&serde_json::Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "G9")
        .collect();
    assert_eq!(g9.len(), 1, "{text}");
    let f = g9[0];
    assert_eq!(f["instruction"], "look");
    assert_eq!(f["severity"], "error");
    let message = f["message"].as_str().unwrap();
    assert!(
        message.contains("`company`, which `Lookup` never produces"),
        "{message}"
    );
    assert_eq!(f["did_you_mean"], serde_json::json!(["company_name"]));
    assert_eq!(report["outcome"], "degraded", "{text}");
    assert_ne!(out.status.code(), Some(0));
    // Without the extra write the CALL checks clean: every write reaches the report.
    let fixed = ADDER
        .replace(", company]", "]")
        .replace("    company: {type: str, produced_by: look}\n", "")
        .replace("reads: [contact, company]", "reads: [contact]");
    std::fs::write(dir.path().join("adder.agir"), fixed).unwrap();
    let out = ais(dir.path(), &["check", "adder.agir"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("G9"), "{text}");
}

#[test]
fn a_gen_fill_writing_three_str_carries_is_g9_and_the_repair_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let text = LOOKUP;
    std::fs::write(dir.path().join("lookup.agir"), text).unwrap();
    let out = ais(dir.path(), &["check", "--no-repair", "lookup.agir"]);
    let shown =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(shown.contains("G9"), "{shown}");
    assert!(
        shown.contains("GEN-FILL `find` writes 3 carries"),
        "{shown}"
    );
    assert!(shown.contains("FindWrites"), "{shown}");
    // Repaired in memory by default: `fixed`, with the deviation.
    let out = ais(dir.path(), &["check", "--format", "json", "lookup.agir"]);
    let report: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
    assert_eq!(report["outcome"], "fixed", "{report}");
}
