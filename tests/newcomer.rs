//! A newcomer's first agent (issue 31), run as a user runs it: `ais run` on
//! `tests/fixtures/newcomer/review_sentiment.agir` — read the CSV the task names, classify each
//! row with a SPAWN of model slots, count in code, refuse unless the counts add up, save a
//! summary — in a temporary directory, the binary as a real subprocess.
//!
//! What it pins: the input survives every wording of the task (§7.3's fallback never replaces a
//! file the run reads or did not create); a missing input fails closed with the error in the
//! CLI's output (§10.2); a relative read path resolves against the directory `ais` started in;
//! unused scripted answers are reported.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CSV: &str = "review\nGreat product\nBroke in a day\nIt is fine\n";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/newcomer")
        .join(name)
}

/// A fresh directory holding the agent, its script and the user's `reviews.csv`.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temp dir");
    for f in ["review_sentiment.agir", "review_sentiment.responses.json"] {
        std::fs::copy(fixture(f), dir.path().join(f)).expect("copy the fixture");
    }
    std::fs::write(dir.path().join("reviews.csv"), CSV).expect("write the CSV");
    dir
}

fn ais_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(dir)
        .env_remove("AIS_MODEL")
        .env_remove("NO_COLOR")
        .env_remove("RUST_LOG")
        .output()
        .expect("the ais binary runs")
}

fn run(dir: &Path, task: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        "review_sentiment.agir",
        "--task",
        task,
        "--model",
        "scripted:review_sentiment.responses.json",
    ];
    args.extend_from_slice(extra);
    ais_in(dir, &args)
}

fn both(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn the_input_survives_every_wording_of_the_task() {
    for task in [
        "Summarize reviews.csv",
        "Summarize reviews.csv.",
        "Classify the reviews in reviews.csv",
        "Load reviews.csv and save to reviews.csv",
        "Read reviews.csv, then write the summary to reviews.csv",
        "Summarize reviews.csv and save to reviews.csv",
        "save to reviews.csv",
        "reviews.csv",
    ] {
        for overwrite in [false, true] {
            let dir = workspace();
            let extra: &[&str] = if overwrite { &["--overwrite"] } else { &[] };
            let out = run(dir.path(), task, extra);
            let text = both(&out);
            let csv = std::fs::read_to_string(dir.path().join("reviews.csv")).unwrap();
            assert_eq!(
                csv, CSV,
                "`{task}` (overwrite {overwrite}) replaced the input:\n{text}"
            );
        }
    }
}

#[test]
fn a_refused_destination_is_a_deviation_and_the_summary_lands_beside() {
    let dir = workspace();
    let out = run(dir.path(), "Summarize reviews.csv", &[]);
    let text = both(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("at `save`: `save.txt`"), "{text}");
    assert!(
        text.contains("`reviews.csv` is a file this run reads"),
        "{text}"
    );
    let summary = std::fs::read_to_string(dir.path().join("save.txt")).unwrap();
    assert!(
        summary.contains("1 positive, 1 negative, 1 neutral"),
        "{summary}"
    );
}

#[test]
fn a_named_destination_that_exists_needs_a_save_verb_and_overwrite() {
    let dir = workspace();
    std::fs::write(dir.path().join("summary.md"), "the user's notes\n").unwrap();
    // A save verb alone does not replace a file the run did not create.
    let out = run(dir.path(), "Load reviews.csv and save to summary.md", &[]);
    let text = both(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("pass `--overwrite`"), "{text}");
    let kept = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert_eq!(kept, "the user's notes\n");
    assert!(dir.path().join("save.txt").is_file());
    // A bare mention with --overwrite does not either.
    let out = run(dir.path(), "Load reviews.csv; summary.md", &["--overwrite"]);
    assert!(out.status.success(), "{}", both(&out));
    let kept = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert_eq!(kept, "the user's notes\n");
    // The save verb and --overwrite together do.
    let out = run(
        dir.path(),
        "Load reviews.csv and save to summary.md",
        &["--overwrite"],
    );
    assert!(out.status.success(), "{}", both(&out));
    let replaced = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(replaced.contains("# Review sentiment"), "{replaced}");
    // A new file named after a save verb needs nothing.
    let out = run(dir.path(), "Load reviews.csv and save to fresh.md", &[]);
    assert!(out.status.success(), "{}", both(&out));
    assert!(dir.path().join("fresh.md").is_file());
}

#[test]
fn a_missing_input_fails_closed_with_the_error_in_the_output() {
    let dir = workspace();
    let out = run(dir.path(), "Summarize missing.csv", &[]);
    let text = both(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("error (a step failed and no ROUTE tested it)"),
        "{text}"
    );
    assert!(text.contains("FileNotFoundError"), "{text}");
    assert!(text.contains("the run stopped at `load_rows`"), "{text}");
    // Nothing after the failure ran: no summary, and the script's answers went unasked.
    assert!(!dir.path().join("save.txt").exists());
    assert!(
        text.contains("3 scripted answers were never asked for"),
        "{text}"
    );
    // The check says so before any run.
    let check = ais_in(dir.path(), &["check", "review_sentiment.agir"]);
    let text = both(&check);
    assert!(text.contains("G9"), "{text}");
    assert!(
        text.contains("reads `rows` but does not test whether `load_rows` failed"),
        "{text}"
    );
    assert!(text.contains("load_rows_outcome.ok"), "{text}");
}

#[test]
fn a_relative_read_resolves_where_ais_was_started() {
    let dir = workspace();
    let out = run(dir.path(), "Summarize reviews.csv", &["--out", "out"]);
    let text = both(&out);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("1 positive") || dir.path().join("out/save.txt").is_file(),
        "{text}"
    );
    let summary = std::fs::read_to_string(dir.path().join("out/save.txt")).unwrap();
    assert!(
        summary.contains("1 positive, 1 negative, 1 neutral"),
        "{summary}"
    );
    // A file in neither place: the error says where it looked.
    let out = run(dir.path(), "Summarize gone.csv", &["--out", "out"]);
    let text = both(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let start = std::fs::canonicalize(dir.path()).unwrap();
    assert!(
        text.contains(&format!(
            "{}/gone.csv (the directory ais was started in)",
            start.display()
        )) || text.contains(&format!(
            "{}/gone.csv (the directory ais was started in)",
            dir.path().display()
        )),
        "{text}"
    );
    assert!(text.contains("(the output root)"), "{text}");
}

#[test]
fn a_read_no_parameter_takes_is_a_finding_at_the_read_and_the_table_shows_why() {
    let dir = workspace();
    std::fs::copy(
        fixture("dropped_operand.agir"),
        dir.path().join("dropped_operand.agir"),
    )
    .unwrap();
    let out = ais_in(
        dir.path(),
        &["check", "--explain-bindings", "dropped_operand.agir"],
    );
    let text = both(&out);
    assert!(
        text.contains("error[G9]: `save` reads `labels`, but no parameter of `save_summary(summary_md, path)` takes it, so the operand is dropped: `summary_md` took the carry `summary_md` by name (rule 1), which `save` does not read"),
        "{text}"
    );
    assert!(text.contains("dropped_operand.agir:63:13"), "{text}");
    assert!(
        text.contains("summary_md <- `summary_md` — not among the reads, by name (rule 1)"),
        "{text}"
    );
    assert!(
        text.contains("reads no parameter takes: `labels`"),
        "{text}"
    );
}

#[test]
fn check_names_the_rust_entry_point_of_a_tool_no_cli_run_can_execute() {
    // An `.agir` exported from `ais!` keeps its Rust tool bodies as text: `ais run` cannot
    // execute them, and `ais check` says so at each, before any run faults.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = ais_in(root, &["check", "examples/agir/review_files.agir"]);
    let text = both(&out);
    assert!(out.status.success(), "a warning, not an error: {text}");
    assert!(
        text.contains("warning[X1]: tool `load_files` has a Rust body (`lang: rust`), which `ais run` cannot execute"),
        "{text}"
    );
    assert!(text.contains("review_files.agir:14:11"), "{text}");
    assert!(
        text.contains("`ReviewFiles::run(input, &ReviewFiles::runtime().build())`"),
        "{text}"
    );
    // The run that reaches the tool faults `unsupported`, naming the same entry point.
    let dir = workspace();
    let agir = root.join("examples/agir/review_files.agir");
    let out = ais_in(
        dir.path(),
        &[
            "run",
            agir.to_str().unwrap(),
            "--task",
            "Review src/lib.rs",
            "--input",
            r#"paths=["src/lib.rs"]"#,
        ],
    );
    let text = both(&out);
    assert!(text.contains("fault[unsupported] at `gather`"), "{text}");
    assert!(
        text.contains("tool `load_files`, whose body is Rust (`lang: rust`)")
            && text.contains("`ReviewFiles::run(input, &ReviewFiles::runtime().build())`"),
        "{text}"
    );
    // A program whose tools all have Python bodies has no such finding.
    let out = ais_in(dir.path(), &["check", "review_sentiment.agir"]);
    assert!(!both(&out).contains("X1"), "{}", both(&out));
}

#[cfg(unix)]
#[test]
fn a_written_graph_honours_the_umask() {
    // `graph -o` and `report -o` share one writer: the file gets 0666 less the umask, as any
    // program's output does, not the temporary file's private 0600.
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let dir = workspace();
    for (umask, mode) in [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)] {
        let svg = dir.path().join(format!("graph-{umask:o}.svg"));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ais"));
        cmd.args(["graph", "--format", "svg", "-o"])
            .arg(&svg)
            .arg("review_sentiment.agir")
            .current_dir(dir.path());
        // SAFETY: umask(2) is async-signal-safe and touches only the child's own state.
        unsafe {
            cmd.pre_exec(move || {
                libc::umask(umask);
                Ok(())
            });
        }
        let out = cmd.output().expect("the ais binary runs");
        assert!(out.status.success(), "{}", both(&out));
        let got = std::fs::metadata(&svg).unwrap().permissions().mode() & 0o777;
        assert_eq!(got, mode, "umask {umask:o}");
    }
}

/// One step count everywhere: a step is one instruction visit, numbered from 1; a SPAWN's
/// siblings are its sub-steps `N.1`, `N.2`, … The run's line, the trace, `ais runs show` and
/// both reports (from the trace and from the journal) agree on it.
#[test]
fn every_surface_numbers_the_steps_alike_and_spawn_siblings_under_their_step() {
    let dir = workspace();
    let out = run(
        dir.path(),
        "Summarize reviews.csv",
        &["--trace", "t.jsonl", "--journal", "j.db", "--out", "out"],
    );
    let text = both(&out);
    assert!(out.status.success(), "{text}");
    // load_rows, classify (SPAWN), tally, save, done: five steps; the three siblings are 2.x.
    assert!(text.contains("ok after 5 steps, 3 slots filled"), "{text}");

    let trace = std::fs::read_to_string(dir.path().join("t.jsonl")).unwrap();
    let events: Vec<serde_json::Value> = trace
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let steps: Vec<(u64, &str)> = events
        .iter()
        .filter(|e| e["sibling"].is_null())
        .map(|e| {
            (
                e["step"].as_u64().unwrap(),
                e["instruction"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [
            (1, "load_rows"),
            (2, "classify"),
            (3, "tally"),
            (4, "save"),
            (5, "done")
        ],
        "{trace}"
    );
    let mut siblings: Vec<(u64, u64)> = events
        .iter()
        .filter(|e| !e["sibling"].is_null())
        .map(|e| (e["step"].as_u64().unwrap(), e["sibling"].as_u64().unwrap()))
        .collect();
    siblings.sort_unstable();
    assert_eq!(siblings, [(2, 0), (2, 1), (2, 2)], "{trace}");
    assert!(
        events.iter().all(|e| e["started_ms"].as_u64() > Some(0)),
        "{trace}"
    );

    let list = both(&ais_in(dir.path(), &["runs", "--journal", "j.db"]));
    let row: Vec<&str> = list
        .lines()
        .nth(1)
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(row.get(3), Some(&"5"), "the steps column: {list}");
    let id = row[0].to_owned();
    let show = both(&ais_in(
        dir.path(),
        &["runs", "show", &id, "--journal", "j.db"],
    ));
    assert!(show.contains("ok after 5 steps"), "{show}");
    for (n, instruction) in [(1, "load_rows"), (2, "classify"), (3, "tally"), (4, "save")] {
        assert!(
            show.lines().any(|l| l
                .split_whitespace()
                .take(2)
                .eq([n.to_string().as_str(), instruction])),
            "step {n} `{instruction}`: {show}"
        );
    }
    for sub in ["2.1", "2.2", "2.3"] {
        assert!(
            show.lines()
                .any(|l| l.trim_start().starts_with(&format!("{sub}  s"))),
            "sibling {sub}: {show}"
        );
    }

    for source in ["t.jsonl", id.as_str()] {
        let mut args = vec!["report", source, "-o", "r.html"];
        if source == id {
            args.extend(["--journal", "j.db"]);
        }
        let said = both(&ais_in(dir.path(), &args));
        assert!(said.contains("(5 steps)"), "{source}: {said}");
        let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
        for sub in ["2.1", "2.2", "2.3"] {
            assert!(
                html.contains(&format!("<td class=\"n\">{sub}</td>")),
                "{source}: {sub}"
            );
        }
        assert!(
            !html.contains("sibling 0"),
            "{source}: siblings are numbered from 1"
        );
    }
}
