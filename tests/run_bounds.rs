//! `ais run` against hostile input, end to end: a task naming an absolute destination, huge
//! and endless model answers, control characters in a report, a symlinked trace, scripted files
//! that are devices or FIFOs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const EXAMPLE: &str = "examples/writing_plans.agir";
const RESPONSES: &str = "examples/writing_plans.responses.json";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `ais` in `dir` with no model configured in the environment.
fn ais_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(dir)
        .env_remove("AIS_MODEL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("NO_COLOR")
        .env_remove("RUST_LOG")
        .output()
        .expect("the ais binary runs")
}

fn both(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temp path")
}

#[test]
fn appendix_c_given_an_absolute_destination_writes_inside_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let abs = dir.path().join("elsewhere/plan.md");
    let task = format!("Add a CSV export and save as {}", abs.display());
    let example = root().join(EXAMPLE);
    let responses = format!("scripted:{}", root().join(RESPONSES).display());
    let o = ais_in(
        dir.path(),
        &[
            "run",
            path(&example),
            "--task",
            &task,
            "--model",
            &responses,
            "--out",
            path(&out),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert!(!abs.exists(), "the plan was written where the task said");
    assert!(!dir.path().join("elsewhere").exists());
    let plan = std::fs::read_to_string(out.join("plan.md")).expect("the plan is in the root");
    assert!(plan.starts_with("# CSV Export"), "{plan}");
    assert!(both(&o).contains("plan_file: plan.md"), "{}", both(&o));
}
