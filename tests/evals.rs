//! `ais test` on the examples: `examples/examples.aistest.yaml` covers every program in
//! `examples/` and passes with the examples' Rust tools registered; and defects seeded into
//! each program — a mandatory edge removed, a guard flipped, a slot's output retyped so its
//! scripted answer no longer validates, a tool returning the wrong type (which the runtime
//! stops at, naming the tool and both types) — are each caught, and named by case, assertion
//! and the value seen.

use crate::support::examples;
use examples::*;

use ais::eval::runner::{self, Host, Options, SuiteResult};
use ais::eval::{LoadedProgram, Suite, output};
use ais::rt::{Runtime, RuntimeBuilder};
use ais::rt::{Tool, ToolArgs, ToolContext, ToolFuture, ToolRegistry};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The examples' programs with their Rust tools and callees, by `.agir` file stem; `wrong`
/// replaces one tool with one that returns a value of the wrong type.
struct Examples {
    wrong: Option<(&'static str, ais::Value)>,
}

/// A tool that returns a fixed value, whatever it is asked.
struct Returns(ais::Value);

impl Tool for Returns {
    fn call<'a>(&'a self, _args: ToolArgs, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        let v = self.0.clone();
        Box::pin(async move { Ok(v) })
    }
}

impl Host for Examples {
    fn builder(&self, program: &LoadedProgram) -> RuntimeBuilder {
        let mut tools = ToolRegistry::with_builtins();
        let stem = program
            .file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        let mut builder = Runtime::builder();
        match stem {
            "writing_plans" => writing_plans::WritingPlans::register_tools(&mut tools),
            "triage_ticket" => triage_ticket::TriageTicket::register_tools(&mut tools),
            "fix_failing_test" => fix_failing_test::FixFailingTest::register_tools(&mut tools),
            "review_files" => review_files::ReviewFiles::register_tools(&mut tools),
            "release_notes" => {
                release_notes::ReleaseNotes::register_tools(&mut tools);
                builder = release_notes::ReleaseNotes::add_programs(builder);
            }
            "draft_changelog" => release_notes::DraftChangelog::register_tools(&mut tools),
            "approve_refund" => approve_refund::ApproveRefund::register_tools(&mut tools),
            "extract_invoice" => extract_invoice::ExtractInvoice::register_tools(&mut tools),
            "sales_question" => sales_question::SalesQuestion::register_tools(&mut tools),
            "sentiment" => sentiment::Sentiment::register_tools(&mut tools),
            other => panic!("no example is named `{other}`"),
        }
        if let Some((name, value)) = &self.wrong {
            tools.register(*name, Arc::new(Returns(value.clone())));
        }
        builder = builder.tools(tools);
        if let Some(dir) = program.file.parent() {
            builder = builder.program_dir(dir.to_owned());
        }
        builder
    }
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples")
}

fn run(suite: &Suite, host: Examples, out: &Path) -> SuiteResult {
    let options = Options {
        trials: None,
        jobs: 4,
        out: out.to_owned(),
        journal: true,
    };
    runner::run(suite, Arc::new(host), &options, Arc::new(|_, _| {})).expect("the suite runs")
}

#[test]
fn the_examples_suite_covers_every_example_and_passes() {
    let suite = Suite::load(&examples().join("examples.aistest.yaml")).expect("the suite checks");
    let mut covered: Vec<String> = suite
        .cases
        .iter()
        .map(|c| {
            c.program
                .file
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    covered.sort();
    covered.dedup();
    let mut programs: Vec<String> = std::fs::read_dir(examples().join("agir"))
        .unwrap()
        .map(|e| {
            e.unwrap()
                .path()
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    programs.sort();
    assert_eq!(covered, programs, "every example program has a case");
    let out = tempfile::tempdir().unwrap();
    let result = run(&suite, Examples { wrong: None }, out.path());
    assert!(result.passed, "{}", output::human(&result));
    // The judged case asked its scripted judge, journaled as a run of its own: no live call.
    let judged = result
        .cases
        .iter()
        .find(|c| c.name == "a failing script is explained")
        .unwrap();
    let trial = &judged.results[0];
    assert_eq!(trial.live_calls, 0);
    let verdict = trial.checks.iter().find(|c| c.kind == "judged").unwrap();
    assert!(
        verdict.passed && verdict.seen.contains("(judge run "),
        "{verdict:?}"
    );
    certificates_match_a_hand_count(&result);
}

/// The examples with a provenance record, and what their suite runs must be certified as,
/// counted by hand from the program and the path its case takes: per obligation its standing,
/// and (mandatory performed, mandatory in all).
fn certificates_match_a_hand_count(result: &SuiteResult) {
    use Standing::{Guaranteed as G, NotReached as NR, ObservableOnly as O};
    use ais::eval::certificate::{Standing, certify};
    /// An example, its case, each obligation's standing, (performed, total).
    type Hand<'a> = (&'a str, &'a str, &'a [(&'a str, Standing)], (usize, usize));
    let hand: [Hand; 2] = [
        (
            "triage_ticket",
            "triage sends a double charge to billing",
            // classify is a slot; route and assign are code; only the billing branch runs.
            &[
                ("r_classify", O),
                ("r_route", G),
                ("r_billing", O),
                ("r_bug", NR),
                ("r_account", NR),
                ("r_general", NR),
                ("r_queue", G),
            ],
            (3, 3),
        ),
        (
            "writing_plans",
            "the plan is drafted, verified and saved",
            // Two slots (and the task format, resident on one of them); three Rust tools.
            &[
                ("r_header", O),
                ("r_tasks", O),
                ("r_format", O),
                ("r_assemble", G),
                ("r_verify", G),
                ("r_save", G),
            ],
            (6, 6),
        ),
    ];
    // Every example with a provenance record is counted here.
    let mut recorded: Vec<String> = std::fs::read_dir(examples().join("agir"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .contains("\nfaithfulness:")
        })
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    recorded.sort();
    assert_eq!(recorded, hand.map(|h| h.0.to_owned()));
    let journal = result.journal.as_ref().expect("the suite is journaled");
    let store = ais::rt::journal::sqlite::SqliteStore::open(
        journal,
        ais::rt::journal::sqlite::Durability::Normal,
    )
    .unwrap();
    for (stem, case, standings, (performed, total)) in hand {
        let case = result.cases.iter().find(|c| c.name == case).unwrap();
        let run = case.results[0]
            .run
            .as_deref()
            .expect("the run is journaled");
        let rec = ais::rt::journal::Recording::from_sqlite(&store, run).unwrap();
        let cert = certify(&rec).unwrap();
        let got: Vec<(&str, Standing)> = cert
            .obligations
            .iter()
            .map(|o| (o.id.as_str(), o.standing))
            .collect();
        assert_eq!(got, standings, "{stem}");
        assert_eq!(
            (cert.mandatory.performed, cert.mandatory.total),
            (performed, total),
            "{stem}"
        );
        let percent = performed as f64 * 100.0 / total as f64;
        assert_eq!(cert.mandatory.performed_percent, percent, "{stem}");
        ais::eval::certificate::verify(&cert, &rec).unwrap();
    }
}

/// A copy of the examples (programs, answers, the suite) in a temporary directory, with
/// `edit` applied to the program `stem`, and the suite cut to that program's cases (`None`:
/// the edit does not apply). A suite that no longer checks against the edited program is the
/// defect caught before anything runs: `Err` with the error, placed in the suite.
fn seeded(
    stem: &str,
    edit: impl Fn(&str) -> Option<String>,
) -> Option<(tempfile::TempDir, Result<Suite, ais::eval::SuiteError>)> {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("agir")).unwrap();
    std::fs::create_dir_all(root.join("evals")).unwrap();
    for entry in std::fs::read_dir(examples().join("agir")).unwrap() {
        let p = entry.unwrap().path();
        std::fs::copy(&p, root.join("agir").join(p.file_name().unwrap())).unwrap();
    }
    for entry in std::fs::read_dir(examples()).unwrap() {
        let p = entry.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".responses.json") || name.ends_with(".aistest.yaml") {
            std::fs::copy(&p, root.join(&name)).unwrap();
        }
    }
    std::fs::copy(
        examples().join("evals/judge.responses.json"),
        root.join("evals/judge.responses.json"),
    )
    .unwrap();
    let program = root.join("agir").join(format!("{stem}.agir"));
    let edited = edit(&std::fs::read_to_string(&program).unwrap())?;
    std::fs::write(&program, edited).unwrap();
    let suite = Suite::load(&root.join("examples.aistest.yaml")).map(|mut suite| {
        suite
            .cases
            .retain(|c| c.program.file.file_stem().is_some_and(|s| s == stem));
        assert!(!suite.cases.is_empty(), "{stem} has cases");
        suite
    });
    Some((dir, suite))
}

/// Runs the seeded suite and returns each failed case's first failed assertion, as the table
/// names it: `(case, assertion kind, seen)`; panics unless some case of the program failed. A
/// suite that no longer checks is named by its place and message.
fn caught(
    stem: &str,
    defect: &str,
    dir: &Path,
    suite: Result<Suite, ais::eval::SuiteError>,
    host: Examples,
) -> Vec<(String, String, String)> {
    let suite = match suite {
        Ok(s) => s,
        Err(e) => {
            assert!(e.place.pos.is_some(), "{stem}, {defect}: {e}");
            return vec![("(suite)".into(), "check".into(), e.to_string())];
        }
    };
    let result = run(&suite, host, &dir.join("out"));
    let text = output::human(&result);
    let mut named = Vec::new();
    for c in result.cases.iter().filter(|c| !c.met) {
        let trial = &c.results[0];
        let first = trial
            .checks
            .iter()
            .find(|k| !k.passed)
            .unwrap_or_else(|| panic!("{stem}, {defect}: no failed assertion\n{text}"));
        assert!(!first.seen.is_empty());
        assert!(
            text.contains(&format!("case `{}`, trial 1:", c.name))
                && text.contains(&format!(
                    "assertion {} `{}`",
                    first.index + 1,
                    first.assertion
                ))
                && text.contains(&format!("seen: {}", first.seen)),
            "{text}"
        );
        named.push((c.name.clone(), first.kind.to_owned(), first.seen.clone()));
    }
    assert!(
        !named.is_empty(),
        "{stem}, {defect}: every case still passes\n{text}"
    );
    named
}

const STEMS: [&str; 9] = [
    "triage_ticket",
    "writing_plans",
    "fix_failing_test",
    "review_files",
    "release_notes",
    "draft_changelog",
    "approve_refund",
    "extract_invoice",
    "sales_question",
];

/// The edges section's lines.
fn edge_lines(text: &str) -> Vec<(usize, &str)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("- {from:"))
        .collect()
}

#[test]
fn a_removed_mandatory_edge_is_caught_in_every_example() {
    for stem in STEMS {
        let remove = |text: &str| {
            let edges = edge_lines(text);
            let (at, _) = edges
                .iter()
                .find(|(_, l)| l.contains("modality: mandatory"))
                .copied()?;
            let kept: Vec<&str> = text
                .lines()
                .enumerate()
                .filter(|(i, _)| *i != at)
                .map(|(_, l)| l)
                .collect();
            Some(kept.join("\n") + "\n")
        };
        let (dir, suite) = seeded(stem, remove).expect("every example has a mandatory edge");
        let named = caught(
            stem,
            "edge removed",
            dir.path(),
            suite,
            Examples { wrong: None },
        );
        eprintln!("{stem}, a mandatory edge removed: {named:?}");
    }
}

#[test]
fn a_flipped_guard_is_caught_in_every_example_with_one() {
    let mut flipped = 0;
    for stem in STEMS {
        let flip = |text: &str| {
            let edges = edge_lines(text);
            let (at, line) = edges
                .iter()
                .find(|(_, l)| l.contains("guard: \"") && !l.contains("guard: \"else\""))?;
            let start = line.find("guard: \"")? + "guard: \"".len();
            let end = start + line[start..].find('"')?;
            let guard = &line[start..end];
            let new = format!("{}not ({guard}){}", &line[..start], &line[end..]);
            let lines: Vec<String> = text
                .lines()
                .enumerate()
                .map(|(i, l)| if i == *at { new.clone() } else { l.to_owned() })
                .collect();
            Some(lines.join("\n") + "\n")
        };
        let Some((dir, suite)) = seeded(stem, flip) else {
            continue;
        };
        flipped += 1;
        let named = caught(
            stem,
            "guard flipped",
            dir.path(),
            suite,
            Examples { wrong: None },
        );
        eprintln!("{stem}, a guard flipped: {named:?}");
    }
    // triage, fix_failing_test, approve_refund, extract_invoice, sales_question route on guards.
    assert_eq!(flipped, 5);
}

#[test]
fn a_slot_whose_answer_no_longer_validates_is_caught_in_every_example_with_a_typed_slot() {
    let mut retyped = Vec::new();
    for stem in STEMS {
        // The first slot's output carry that is not text (which any answer fits) retyped to
        // `int`: its scripted answer (a member, an object) no longer validates.
        let retype = |text: &str| {
            let doc = ais::agir::read(text).ok()?;
            let carry = doc
                .program
                .instructions()
                .iter()
                .filter(|n| n.is_su())
                .filter_map(|n| n.writes.first())
                .find(|w| {
                    let ty = doc.program.carry(w).and_then(|(_, c)| c.ty.clone());
                    !matches!(ty, Some(ais::Type::Str) | None)
                })?
                .clone();
            let lines: Vec<&str> = text.lines().collect();
            let at = lines
                .iter()
                .position(|l| l.trim_end() == format!("    {carry}:"))?;
            let ty =
                (at + 1..lines.len()).find(|&i| lines[i].trim_start().starts_with("type: "))?;
            let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
            out[ty] = "      type: int".to_owned();
            Some(out.join("\n") + "\n")
        };
        let Some((dir, suite)) = seeded(stem, retype) else {
            continue;
        };
        retyped.push(stem);
        let named = caught(
            stem,
            "slot retyped",
            dir.path(),
            suite,
            Examples { wrong: None },
        );
        eprintln!("{stem}, a slot's answer no longer validates: {named:?}");
    }
    // The others' slots all write text, which any answer fits.
    assert_eq!(retyped, ["triage_ticket", "extract_invoice"]);
}

#[test]
fn a_tool_returning_the_wrong_type_is_caught_in_every_example_with_a_rust_tool() {
    // Each example's first Rust tool, answering a number where its signature promises text,
    // an object or a list.
    let tools: [(&str, &str); 6] = [
        ("writing_plans", "assemble_plan"),
        ("fix_failing_test", "run_tests"),
        ("review_files", "load_files"),
        ("release_notes", "user_facing_commits"),
        ("approve_refund", "parse_approval"),
        ("extract_invoice", "to_ledger_row"),
    ];
    for (stem, tool) in tools {
        let text = std::fs::read_to_string(examples().join(format!("agir/{stem}.agir"))).unwrap();
        assert!(
            text.contains(&format!("  {tool}:\n")),
            "{stem} declares `{tool}`"
        );
        let (dir, suite) = seeded(stem, |t| Some(t.to_owned())).unwrap();
        let host = Examples {
            wrong: Some((tool, ais::Value::Int(42))),
        };
        let named = caught(stem, "tool of the wrong type", dir.path(), suite, host);
        eprintln!("{stem}, `{tool}` returns 42: {named:?}");
        // The runtime holds a native tool to its signature: the run stops at the call, naming
        // the tool, the type it declares and the value seen — 42 is never converted into text
        // and passed on.
        assert!(
            named.iter().any(|(_, _, seen)| seen
                .contains(&format!("tool `{tool}` returned an int, not `"))
                && seen.contains("its signature declares `-> ")),
            "{stem}: {named:?}"
        );
    }
}
