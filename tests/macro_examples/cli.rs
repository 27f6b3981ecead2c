//! The checked-in `.agir` of each example that needs no Rust tool, run by `ais run` as a
//! subprocess on the example's scripted responses. The others embody their tools in Rust
//! (`lang: rust`): the CLI has no implementation for them and says so.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn ais(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("AIS_MODEL")
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("the ais binary runs")
}

/// `ais run examples/agir/NAME.agir --model scripted:examples/RESPONSES.responses.json
/// --format json` with `args`, writing under `out`; the JSON it prints.
fn run(name: &str, responses: &str, out: &Path, args: &[&str]) -> (Option<i32>, Value) {
    let file = format!("examples/agir/{name}.agir");
    let model = format!("scripted:examples/{responses}.responses.json");
    let out_dir = out.display().to_string();
    let mut all = vec![
        "run", &file, "--model", &model, "--out", &out_dir, "--format", "json",
    ];
    all.extend(args);
    let o = ais(&all);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "`ais run {name}` printed no JSON ({e}):\n{stdout}\n{}",
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (o.status.code(), value)
}

#[test]
fn triage_ticket_agir_runs_under_the_cli() {
    let out = tempfile::tempdir().unwrap();
    let task = super::triage_ticket::TICKET;
    let (code, v) = run(
        "triage_ticket",
        "triage_ticket",
        out.path(),
        &["--task", task],
    );
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["scripted"], true);
    assert_eq!(v["report"]["category"], "billing");
    assert_eq!(v["report"]["queue"], "support-billing");
    assert!(v["report"]["reply"].as_str().unwrap().contains("#88412"));
}

#[test]
fn sales_question_agir_authors_and_runs_its_script_under_the_cli() {
    let out = tempfile::tempdir().unwrap();
    std::fs::write(
        out.path().join("sales.csv"),
        super::sales_question::SALES_CSV,
    )
    .unwrap();
    let question = super::sales_question::QUESTION;
    let (code, v) = run(
        "sales_question",
        "sales_question",
        out.path(),
        &["--task", question],
    );
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["report"]["answer"], "north: 572.50");
    assert_eq!(v["report"]["run_result"]["ok"], true);
}

#[test]
fn draft_changelog_agir_runs_under_the_cli_with_its_commits_as_input() {
    let out = tempfile::tempdir().unwrap();
    let commits = "commits=feat: export orders as CSV\nfix: keep the cart";
    let (code, v) = run(
        "draft_changelog",
        "release_notes",
        out.path(),
        &["--task", "Release 2.4.0", "--input", commits],
    );
    assert_eq!(code, Some(0), "{v}");
    let entries = v["report"]["entries"].as_str().unwrap();
    assert!(
        entries.starts_with("### Added\n- Download your order history"),
        "{entries}"
    );
}

#[test]
fn an_example_with_rust_tools_does_not_run_under_the_cli_and_says_why() {
    let out = tempfile::tempdir().unwrap();
    let (code, v) = run(
        "release_notes",
        "release_notes",
        out.path(),
        &[
            "--task",
            "Release 2.4.0 to CHANGELOG.md",
            "--input",
            "version=2.4.0",
            "--input",
            "log=9f2c1e0 feat: export orders",
        ],
    );
    assert_ne!(code, Some(0), "{v}");
    assert_eq!(v["status"], "fault");
    let message = v["fault"]["message"].as_str().unwrap();
    assert!(
        message.contains("`user_facing_commits`")
            && message.contains("ReleaseNotes::run(input, &ReleaseNotes::runtime().build())"),
        "{message}"
    );
}
