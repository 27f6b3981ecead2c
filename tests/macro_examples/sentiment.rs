//! The book's first agent, `examples/sentiment.agir` and `examples/sentiment.rs`: the same
//! program (up to the tools' language), run end to end both ways — the `.agir` by `ais run` as
//! a subprocess in a fresh directory, as the tutorial shows; the `ais!` program through the
//! library — and the tutorial's promises as tests: the input CSV survives, a missing file is a
//! routed failure with the error in the output, and counts that do not add up save nothing.

use super::sentiment::{REVIEWS, Sentiment, SentimentInput};
use ais::agir;
use std::path::Path;
use std::process::{Command, Output};

fn example(file: &str) -> String {
    format!("{}/examples/{file}", env!("CARGO_MANIFEST_DIR"))
}

/// A fresh directory with the agent, its scripted answers and `reviews.csv`, as the tutorial
/// sets it up.
fn tutorial_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in ["sentiment.agir", "sentiment.responses.json", "reviews.csv"] {
        std::fs::copy(example(f), dir.path().join(f)).unwrap();
    }
    dir
}

/// `ais run sentiment.agir --task TASK --model scripted:RESPONSES` in `dir`, as the tutorial
/// runs it: the exit and everything it printed.
fn run_agent(dir: &Path, task: &str, responses: &str) -> (Output, String) {
    let model = format!("scripted:{responses}");
    let out = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(["run", "sentiment.agir", "--task", task, "--model", &model])
        .current_dir(dir)
        .env_remove("AIS_MODEL")
        .env_remove("OPENAI_API_KEY")
        .env("NO_COLOR", "1")
        .output()
        .expect("the ais binary runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out, text)
}

#[test]
fn the_agir_is_the_macro_program_up_to_its_tool_bodies() {
    let text = std::fs::read_to_string(example("sentiment.agir")).unwrap();
    let doc = agir::read(&text).expect("examples/sentiment.agir reads");
    let checked = ais::check(&doc.program, &doc.source_map, ais::Repairs::Off);
    assert_eq!(
        checked.outcome,
        ais::Outcome::Clean,
        "{:#?}",
        checked.findings
    );
    let mut ours = Sentiment::program().clone();
    let mut theirs = doc.program;
    for p in [&mut ours, &mut theirs] {
        for t in p.tools.iter_mut().flatten() {
            // Rust versus Python: only the bodies and their language differ.
            (t.body, t.lang) = (None, None);
        }
    }
    assert_eq!(ours, theirs);
}

#[test]
fn the_agir_runs_under_the_cli_and_saves_the_summary() {
    let dir = tutorial_dir();
    let (out, text) = run_agent(
        dir.path(),
        "Summarize reviews.csv",
        "sentiment.responses.json",
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("ok after 7 steps, 4 slots filled"), "{text}");
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert_eq!(
        summary,
        "# Review sentiment\n\n4 reviews: 2 positive, 1 negative, 1 neutral\n"
    );
    // The input survives, byte for byte.
    let csv = std::fs::read_to_string(dir.path().join("reviews.csv")).unwrap();
    assert_eq!(csv, REVIEWS);
}

#[test]
fn a_missing_csv_is_routed_and_its_error_is_in_the_output() {
    let dir = tutorial_dir();
    let (_, text) = run_agent(
        dir.path(),
        "Summarize missing.csv",
        "sentiment.responses.json",
    );
    assert!(text.contains("problem: cannot read the reviews"), "{text}");
    assert!(text.contains("FileNotFoundError"), "{text}");
    assert!(!dir.path().join("summary.md").exists(), "{text}");
    assert!(
        text.contains("4 scripted answers were never asked for"),
        "{text}"
    );
}

#[test]
fn labels_that_do_not_add_up_save_nothing() {
    let dir = tutorial_dir();
    // The model answers something that is none of the three labels for one review.
    std::fs::write(
        dir.path().join("odd.responses.json"),
        r#"{"classify[0]": ["positive"], "classify[1]": ["mixed"],
            "classify[2]": ["neutral"], "classify[3]": ["positive"]}"#,
    )
    .unwrap();
    let (out, text) = run_agent(dir.path(), "Summarize reviews.csv", "odd.responses.json");
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("problem: refused: the labels do not add up to the 4 reviews"),
        "{text}"
    );
    assert!(!dir.path().join("summary.md").exists(), "{text}");
}

#[tokio::test]
async fn the_macro_program_runs_end_to_end_on_the_scripted_model() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("reviews.csv");
    std::fs::write(&csv, REVIEWS).unwrap();
    let runtime = Sentiment::runtime()
        .model(super::runs::shipped("sentiment"))
        .out_dir(dir.path().to_path_buf())
        .build();
    let input = SentimentInput {
        task: format!("Summarize {}", csv.display()),
        summary_path: None,
    };
    let report = Sentiment::run(input, &runtime)
        .await
        .expect("the run reports");
    assert_eq!(
        report.counts.as_deref(),
        Some("2 positive, 1 negative, 1 neutral")
    );
    assert_eq!(report.problem, None);
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(summary.contains("4 reviews: 2 positive"), "{summary}");
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), REVIEWS);

    // A file that is not there: the failure lands in `loaded`, the program routes it.
    let input = SentimentInput {
        task: format!("Summarize {}", dir.path().join("gone.csv").display()),
        summary_path: Some("other.md".into()),
    };
    let report = Sentiment::run(input, &runtime)
        .await
        .expect("the run reports");
    let problem = report.problem.expect("a problem");
    assert!(
        problem.starts_with("cannot read the reviews: "),
        "{problem}"
    );
    assert!(!dir.path().join("other.md").exists());
}

#[test]
fn the_readmes_first_agent_is_this_example() {
    // The README shows the program as `examples/sentiment.rs` has it, after `use ais::ais;`.
    let readme = include_str!("../../README.md");
    let example = include_str!("../../examples/sentiment.rs");
    let start = example
        .find("ais! {\n")
        .expect("the example has its program");
    let end = start + example[start..].find("\n}\n").expect("closed") + 3;
    let shown = format!("```rust\nuse ais::ais;\n\n{}```", &example[start..end]);
    assert!(
        readme.contains(&shown),
        "the README's Rust program is not examples/sentiment.rs's; copy it from there"
    );
}
