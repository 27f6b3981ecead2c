//! `ais lift`, through the real binary: with `--stages-only` the code-owned analysis of a
//! skill as text and JSON, the grounding and deontic audit of a proposals file, and the exit
//! status on hostile input; with `--model` a compile whose program `ais run` runs.

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
    // Neither a model nor --stages-only: said so, with both next steps.
    let path = skill("release");
    let (code, _, err) = ais(&["lift", path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--model SPEC") && err.contains("--stages-only"),
        "{err}"
    );
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

fn lifted(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("ais-lift/tests/lifts")
        .join(name)
}

/// `ais run PROGRAM` with the scripted `answers` and `task`, its output in `dir`.
fn run_lifted(program: &Path, dir: &Path, answers: &str, task: &str) -> (i32, String) {
    let file = dir.join("run.json");
    std::fs::write(&file, answers).unwrap();
    let (code, out, err) = ais(&[
        "run",
        program.to_str().unwrap(),
        "--model",
        &format!("scripted:{}", file.display()),
        "--out",
        dir.to_str().unwrap(),
        "--task",
        task,
    ]);
    (code, format!("{out}{err}"))
}

/// Lifts the fixture `name` into `dir`: the program's path.
fn lift_into(name: &str, dir: &Path, extra: &[&str]) -> (i32, PathBuf, String) {
    let fixture = lifted(name);
    let program = dir.join(format!("{name}.agir"));
    let mut args = vec![
        "lift".to_owned(),
        fixture.join("SKILL.md").display().to_string(),
        "--model".to_owned(),
        format!("scripted:{}", fixture.join("answers.json").display()),
        "-o".to_owned(),
        program.display().to_string(),
        "--out".to_owned(),
        dir.display().to_string(),
    ];
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, _, err) = ais(&args);
    (code, program, err)
}

#[test]
fn a_lifted_program_runs_its_sibling_script_to_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let (code, program, err) = lift_into("with-script", dir.path(), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("check: Clean"), "{err}");
    assert!(
        err.contains("0 dropped, 0 added, 2/2 quotes verbatim"),
        "{err}"
    );
    // The report sits beside it, and the record points back at the skill.
    let report = std::fs::read_to_string(dir.path().join("word_count.lift.json")).unwrap();
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["gates"]["outcome"], "clean");
    let text = std::fs::read_to_string(&program).unwrap();
    assert!(text.contains("digest: \"sha256:"), "{text}");
    // `ais check` agrees, and the program runs: the skill's script counts for real.
    let (code, out, err) = ais(&["check", program.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    std::fs::write(dir.path().join("notes.txt"), "one two three four five\n").unwrap();
    let (code, all) = run_lifted(
        &program,
        dir.path(),
        r#"{"find_file": ["notes.txt"], "report": ["notes.txt has 5 words."]}"#,
        "count the words of notes.txt",
    );
    assert_eq!(code, 0, "{all}");
    assert!(all.contains("\"output\":\"5\""), "{all}");
    assert!(all.contains("answer: notes.txt has 5 words."), "{all}");
}

#[test]
fn a_lifted_human_gate_pauses_the_run_and_a_refusal_ends_it() {
    let dir = tempfile::tempdir().unwrap();
    let (code, program, err) = lift_into("approval", dir.path(), &[]);
    assert_eq!(code, 0, "{err}");
    let (_, all) = run_lifted(
        &program,
        dir.path(),
        r#"{"summarize": ["Adds a health check."]}"#,
        "deploy the health check",
    );
    assert!(all.contains("input required"), "{all}");
    assert!(
        all.contains(
            "needs `approved_r2` (true or false): Ask the user to approve the deployment."
        ),
        "{all}"
    );
    let run = all
        .split("ais resume ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("a resume command")
        .to_owned();
    let (code, out, err) = ais(&[
        "resume",
        &run,
        "--answer",
        "false",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let all = format!("{out}{err}");
    assert_eq!(code, 0, "{all}");
    assert!(all.contains("not produced: `deploy_log`"), "{all}");
}

#[test]
fn strict_fails_on_what_the_injection_skill_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = lift_into("injection", dir.path(), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("refused step `delete_repository`"), "{err}");
    let (code, _, err) = lift_into("injection", dir.path(), &["--strict"]);
    assert_eq!(code, 1, "{err}");
}

#[test]
fn check_only_rechecks_the_program_against_the_skill() {
    let dir = tempfile::tempdir().unwrap();
    // The skill and its lift in a directory of their own, so the skill can be edited.
    let skill = dir.path().join("SKILL.md");
    std::fs::copy(lifted("approval").join("SKILL.md"), &skill).unwrap();
    let answers = lifted("approval").join("answers.json");
    let program = dir.path().join("deploy.agir");
    let (code, _, err) = ais(&[
        "lift",
        skill.to_str().unwrap(),
        "--model",
        &format!("scripted:{}", answers.display()),
        "-o",
        program.to_str().unwrap(),
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let check = || {
        ais(&[
            "lift",
            skill.to_str().unwrap(),
            "--check-only",
            program.to_str().unwrap(),
        ])
    };
    let (code, out, err) = check();
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("4 obligations; the skill is unchanged"),
        "{err}"
    );
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["skill_changed"], false);
    // The prohibition is edited out of the skill: its obligation no longer rests on it.
    let text = std::fs::read_to_string(&skill).unwrap();
    std::fs::write(
        &skill,
        text.replace("Never deploy without the user's approval.\n", ""),
    )
    .unwrap();
    let (code, _, err) = check();
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("the skill changed since the lift"), "{err}");
    assert!(err.contains("no longer in the skill: r4"), "{err}");
}

/// `--clarify`: the residue goes to the author through the runtime's human pause; `ais resume
/// --answer` settles it, and each decision is recorded as the author's (an answer that is no
/// force is refused by name, the item discretionary).
#[test]
fn clarify_asks_the_author_through_a_pause_and_records_the_answers() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = lifted("csv-clean");
    let program = dir.path().join("csv-clean.agir");
    let (code, out, err) = ais(&[
        "lift",
        fixture.join("SKILL.md").to_str().unwrap(),
        "--model",
        &format!("scripted:{}", fixture.join("answers.json").display()),
        "-o",
        program.to_str().unwrap(),
        "--out",
        dir.path().to_str().unwrap(),
        "--clarify",
    ]);
    let err = format!("{out}{err}");
    assert_eq!(code, 3, "input required: {err}");
    assert!(err.contains("needs `answer`"), "{err}");
    assert!(
        err.contains("r8 (line 39): \"No leading, trailing or doubled underscores.\""),
        "{err}"
    );
    assert!(!dir.path().join("csv-clean.agir").exists());
    let run = err
        .split("ais resume ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("a resume command")
        .to_owned();
    let answer = "r3: mandatory\nr8: forbidden\nr15: mandatory\nr16: mandatory\n\
                  r17: mandatory\nr18: mandatory\nr19: sometimes";
    let (code, out, err) = ais(&[
        "resume",
        &run,
        "--answer",
        answer,
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("decided r8 forbidden by the author (--clarify)"),
        "{err}"
    );
    assert!(err.contains("check: Clean"), "{err}");
    let program = std::fs::read_to_string(dir.path().join("csv-clean.agir")).unwrap();
    assert!(program.contains("the author (--clarify)"), "{program}");
    let report = std::fs::read_to_string(dir.path().join("clean_csv.lift.json")).unwrap();
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    let r19 = report["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["rule"] == "r19")
        .unwrap();
    assert_eq!(r19["force"], "discretionary", "{r19}");
    assert!(
        r19["rejected"].as_str().unwrap().contains("`sometimes`"),
        "{r19}"
    );
}

/// The lifted csv-clean and writing-plans programs run to their reports under `ais run` with
/// scripted answers: csv-clean writes `cleaned.csv`, writing-plans saves its plan.
#[test]
fn the_lifted_reference_skills_run_to_their_reports() {
    let dir = tempfile::tempdir().unwrap();
    let (code, program, err) = lift_into("csv-clean", dir.path(), &[]);
    assert_eq!(code, 0, "{err}");
    std::fs::write(
        dir.path().join("messy.csv"),
        "First Name,Last  Name,\n Ann,Lee,\n,,\nBo,Kim,\n",
    )
    .unwrap();
    let verdict = serde_json::json!([{"ok": true, "problems": ""}]);
    let clean = "first_name,last_name,note\nAnn,Lee,\nBo,Kim,\n";
    let answers = serde_json::json!({
        "find_input": ["messy.csv"],
        "decide_meanings": ["first_name: the given name\nlast_name: the family name\nnote: empty"],
        "name_columns": [{"names": ["first_name", "last_name", "note"]}],
        "clean_rows": [clean],
        "check_parses": verdict, "check_headers": verdict, "check_columns": verdict,
        "check_rows": verdict, "verify": verdict,
        "fix": [clean],
    });
    let (code, all) = run_lifted(
        &program,
        dir.path(),
        &answers.to_string(),
        "clean messy.csv and save to cleaned.csv",
    );
    assert_eq!(code, 0, "{all}");
    assert!(all.contains("written: cleaned.csv"), "{all}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("cleaned.csv")).unwrap(),
        clean
    );

    let dir = tempfile::tempdir().unwrap();
    let (code, program, err) = lift_into("writing-plans", dir.path(), &[]);
    assert_eq!(code, 0, "{err}");
    let plan =
        "# CSV export Implementation Plan\n\n### Task 1: Export\n\n```rust\nfn export() {}\n```\n";
    let answers = serde_json::json!({
        "gather": ["The orders live in orders.rs."],
        "draft_header": ["# CSV export Implementation Plan"],
        "write_tasks": ["### Task 1: Export"],
        "assemble_plan": [plan],
        "name_plan_file": ["docs/plans/csv-export.md"],
    });
    let (code, all) = run_lifted(
        &program,
        dir.path(),
        &answers.to_string(),
        "plan a CSV export of the orders and save it to docs/plans/csv-export.md",
    );
    assert_eq!(code, 0, "{all}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("docs/plans/csv-export.md")).unwrap(),
        plan
    );
}
