//! `ais lift SKILL.md --stages-only`, through the real binary: the code-owned analysis of a
//! skill as text and JSON, the grounding and deontic audit of a proposals file, and the exit
//! status on hostile input.

use std::path::{Path, PathBuf};
use std::process::Command;

fn ais(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("ais runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn skill(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("ais-lift/tests/skills")
        .join(name)
        .join("SKILL.md")
}

#[test]
fn stages_only_prints_each_force_and_where_it_came_from() {
    let path = skill("release");
    let (code, out, err) = ais(&["lift", path.to_str().unwrap(), "--stages-only"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("frontmatter (lines 1-5): name \"release\""),
        "{out}"
    );
    let line = |start: &str| {
        let at = out
            .find(start)
            .unwrap_or_else(|| panic!("{start:?} in {out}"));
        out[at..].lines().take(2).collect::<Vec<_>>().join("\n")
    };
    let bump = line("16:4 ");
    assert!(
        bump.contains("mandatory") && bump.contains("Build the package."),
        "{bump}"
    );
    assert!(
        bump.contains("heading \"Required steps\" at 10:1 ('required')"),
        "{bump}"
    );
    let optional = line("21:3 ");
    assert!(
        optional.contains("discretionary")
            && optional.contains("list intro \"You may optionally:\""),
        "{optional}"
    );
    assert!(
        out.contains("knowledge: an example (\"Examples\")"),
        "{out}"
    );
    assert!(
        out.contains("scripts/publish.sh           not in the skill's directory"),
        "{out}"
    );
}

#[test]
fn stages_only_json_is_one_object_with_spans() {
    let path = skill("review-gate");
    let (code, out, _) = ais(&[
        "lift",
        path.to_str().unwrap(),
        "--stages-only",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0);
    let report: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
    let units = report["analysis"]["units"].as_array().unwrap();
    let list = units
        .iter()
        .find(|u| {
            u["text"]
                .as_str()
                .unwrap()
                .starts_with("List the public items")
        })
        .unwrap();
    assert_eq!(list["stated"], "one");
    assert_eq!(list["force"], "mandatory");
    assert_eq!(list["source"]["from"], "procedure");
    assert_eq!(list["source"]["text"], "Procedure");
    assert_eq!(
        (
            list["span"]["line"].as_u64(),
            list["span"]["column"].as_u64()
        ),
        (Some(12), Some(4))
    );
    let refs = report["analysis"]["bundle"]["references"]
        .as_array()
        .unwrap();
    assert_eq!(refs[0]["target"], "POLICY.md");
    assert_eq!(refs[0]["status"], "missing");
}

#[test]
fn proposals_are_grounded_and_audited() {
    let dir = tempfile::tempdir().unwrap();
    let proposals = dir.path().join("proposals.json");
    std::fs::write(
        &proposals,
        r#"[
          {"rule": "r1", "kind": "step", "force": "mandatory", "bearer": "agent", "quote": "Run the validator."},
          {"rule": "r2", "kind": "step", "force": "mandatory", "bearer": "agent", "quote": "Bump the minor version."},
          {"rule": "r3", "kind": "step", "force": "mandatory", "bearer": "agent", "quote": "Delete the repository."}
        ]"#,
    )
    .unwrap();
    let path = skill("release");
    let args = [
        "lift",
        path.to_str().unwrap(),
        "--stages-only",
        "--proposals",
        proposals.to_str().unwrap(),
    ];
    let (code, out, err) = ais(&args);
    assert_eq!(
        code, 1,
        "a dropped proposal and drift are findings: {out}{err}"
    );
    assert!(out.contains("grounding: 2 kept, 1 dropped"), "{out}");
    assert!(
        out.contains("r3     DROPPED  \"Delete the repository.\": its quote is not in the skill"),
        "{out}"
    );
    assert!(
        out.contains("hardened      r2: proposed mandatory but the skill states discretionary"),
        "{out}"
    );
    let (_, json, _) = ais(&[&args[..], &["--format", "json"]].concat());
    let report: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(report["grounding"]["kept"][0]["span"]["line"], 12);
    assert_eq!(report["grounding"]["dropped"][0]["reason"], "not_verbatim");
    assert_eq!(report["drift"][0]["kind"], "hardened");
}

#[test]
fn hostile_input_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    // Without --stages-only: the model stages are not built, said so with the next step.
    let path = skill("release");
    let (code, _, err) = ais(&["lift", path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("--stages-only"), "{err}");
    // A 10 MB skill.
    let big = dir.path().join("SKILL.md");
    std::fs::write(&big, "Run it.\n".repeat(10 * 1024 * 1024 / 8)).unwrap();
    let (code, _, err) = ais(&["lift", big.to_str().unwrap(), "--stages-only"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("larger than the 1048576 bytes a skill may have"),
        "{err}"
    );
    // Binary content, with its place; an escape sequence never reaches the terminal.
    std::fs::write(&big, b"# T\n\x1b[2J\x00").unwrap();
    let (code, _, err) = ais(&["lift", big.to_str().unwrap(), "--stages-only"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("SKILL.md:2:1: binary content (control character U+001B)"),
        "{err}"
    );
    assert!(!err.contains('\x1b'), "{err:?}");
    // A sibling reference outside the skill's directory: refused, named, exit 1.
    std::fs::write(&big, "# T\n\nRead [this](../../etc/passwd) first.\n").unwrap();
    let (code, out, _) = ais(&["lift", big.to_str().unwrap(), "--stages-only"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("../../etc/passwd             REFUSED: outside the skill's directory (it climbs out with ..)"),
        "{out}"
    );
}
