//! The `ais!` examples: each program's `AGIR` is the checked-in `.agir` under `examples/agir/`,
//! reads back to the same program (`ais fmt` prints it unchanged), checks clean, and is what
//! `build.rs` export writes; between them the examples use every opcode; each runs end to end
//! on its scripted responses through the library ([`runs`]) and, where it needs no Rust tool,
//! as `.agir` under `ais run` ([`cli`]).

use crate::support::examples;
use examples::*;

#[path = "macro_examples/sentiment.rs"]
mod sentiment_runs;

#[path = "macro_examples/runs.rs"]
mod runs;

#[path = "macro_examples/cli.rs"]
mod cli;

#[path = "macro_examples/budget.rs"]
mod budget;

#[path = "macro_examples/graph.rs"]
mod graph;

use ais::rt::{ToolArgs, ToolContext, ToolErrorKind};
use ais::{Value, agir};
use std::collections::BTreeSet;
use writing_plans::{WritingPlans, WritingPlansInput};

/// One `ais!` program of the examples: its source file, its `.agir` file and its `AGIR`.
struct Example {
    source: &'static str,
    file: &'static str,
    agir: &'static str,
    program: fn() -> &'static ais::Program,
}

const EXAMPLES: [Example; 10] = [
    Example {
        source: "writing_plans.rs",
        file: "writing_plans.agir",
        agir: WritingPlans::AGIR,
        program: WritingPlans::program,
    },
    Example {
        source: "triage_ticket.rs",
        file: "triage_ticket.agir",
        agir: triage_ticket::TriageTicket::AGIR,
        program: triage_ticket::TriageTicket::program,
    },
    Example {
        source: "fix_failing_test.rs",
        file: "fix_failing_test.agir",
        agir: fix_failing_test::FixFailingTest::AGIR,
        program: fix_failing_test::FixFailingTest::program,
    },
    Example {
        source: "review_files.rs",
        file: "review_files.agir",
        agir: review_files::ReviewFiles::AGIR,
        program: review_files::ReviewFiles::program,
    },
    Example {
        source: "release_notes.rs",
        file: "draft_changelog.agir",
        agir: release_notes::DraftChangelog::AGIR,
        program: release_notes::DraftChangelog::program,
    },
    Example {
        source: "release_notes.rs",
        file: "release_notes.agir",
        agir: release_notes::ReleaseNotes::AGIR,
        program: release_notes::ReleaseNotes::program,
    },
    Example {
        source: "approve_refund.rs",
        file: "approve_refund.agir",
        agir: approve_refund::ApproveRefund::AGIR,
        program: approve_refund::ApproveRefund::program,
    },
    Example {
        source: "extract_invoice.rs",
        file: "extract_invoice.agir",
        agir: extract_invoice::ExtractInvoice::AGIR,
        program: extract_invoice::ExtractInvoice::program,
    },
    Example {
        source: "sales_question.rs",
        file: "sales_question.agir",
        agir: sales_question::SalesQuestion::AGIR,
        program: sales_question::SalesQuestion::program,
    },
    Example {
        source: "sentiment.rs",
        file: "sentiment.agir",
        agir: sentiment::Sentiment::AGIR,
        program: sentiment::Sentiment::program,
    },
];

fn assert_checked_in(agir_text: &str, file: &str) {
    let path = format!("{}/examples/agir/{file}", env!("CARGO_MANIFEST_DIR"));
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == agir_text,
        "{path} is not the macro's output; regenerate it with \
         `cargo run --example EXAMPLE -- --agir > {path}` (see examples/README.md)"
    );
}

#[test]
fn every_example_agir_is_checked_in_canonical_and_clean() {
    for ex in &EXAMPLES {
        assert_checked_in(ex.agir, ex.file);
        let doc = agir::read(ex.agir)
            .unwrap_or_else(|e| panic!("{}: the macro's AG-IR reads: {e}", ex.file));
        assert_eq!(
            agir::write(&doc.program),
            ex.agir,
            "{}: ais fmt would change it",
            ex.file
        );
        assert_eq!(*(ex.program)(), doc.program, "{}", ex.file);
        let checked = ais::check(&doc.program, &doc.source_map, ais::Repairs::Off);
        assert_eq!(
            checked.outcome,
            ais::Outcome::Clean,
            "{}: ais check finds {:#?}",
            ex.file,
            checked.findings
        );
        assert_eq!(
            doc.program.name.as_deref(),
            Some(ex.file.trim_end_matches(".agir"))
        );
    }
}

#[test]
fn build_rs_export_writes_the_same_agir_as_the_macro() {
    let dir = tempfile::tempdir().unwrap();
    let sources: BTreeSet<String> = EXAMPLES
        .iter()
        .map(|ex| format!("{}/examples/{}", env!("CARGO_MANIFEST_DIR"), ex.source))
        .collect();
    let sources: Vec<&str> = sources.iter().map(String::as_str).collect();
    let written = ais::syntax::export(&sources, dir.path()).expect("exports");
    assert_eq!(written.len(), EXAMPLES.len(), "{written:?}");
    for ex in &EXAMPLES {
        let exported = std::fs::read_to_string(dir.path().join(ex.file))
            .unwrap_or_else(|e| panic!("export wrote no {}: {e}", ex.file));
        assert!(
            exported == ex.agir,
            "build.rs export and the macro disagree on {}:\n{exported}",
            ex.file
        );
    }
}

#[test]
fn the_examples_use_every_opcode() {
    let used: BTreeSet<String> = EXAMPLES
        .iter()
        .flat_map(|ex| {
            let doc = agir::read(ex.agir).expect("reads");
            doc.program
                .instructions()
                .iter()
                .map(|i| i.opcode.as_str().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    let missing: Vec<&str> = ais::Opcode::ALL
        .iter()
        .map(|o| o.as_str())
        .filter(|m| !used.contains(*m))
        .collect();
    assert!(missing.is_empty(), "no example uses {missing:?}");
    // The README's table names each example's opcodes; keep it true.
    let readme = include_str!("../examples/README.md");
    for ex in &EXAMPLES {
        let doc = agir::read(ex.agir).expect("reads");
        let name = ex.file.trim_end_matches(".agir");
        let row = readme
            .lines()
            .find(|l| l.starts_with(&format!("| `{name}`")))
            .unwrap_or_else(|| panic!("examples/README.md has no row for `{name}`"));
        for i in doc.program.instructions() {
            assert!(
                row.contains(&format!("`{}`", i.opcode.as_str())),
                "examples/README.md's row for `{name}` does not name `{}`",
                i.opcode.as_str()
            );
        }
    }
}

#[test]
fn writing_plans_is_appendix_c_up_to_its_tool_bodies() {
    let appendix_c = agir::read(include_str!("../examples/writing_plans.agir"))
        .expect("Appendix C reads")
        .program;
    let mut ours = WritingPlans::program().clone();
    let mut theirs = appendix_c;
    for p in [&mut ours, &mut theirs] {
        for t in p.tools.iter_mut().flatten() {
            // Rust versus Python: the bodies, their language and the typed signature differ.
            (t.body, t.lang, t.sig) = (None, None, None);
        }
        // Ours carries a provenance record (the obligations `ais runs certify` checks a run
        // against); Appendix C has none.
        p.faithfulness = None;
        for n in p.nodes.iter_mut().flatten() {
            n.traces_to = None;
        }
        for k in p.knowledge.iter_mut().flatten() {
            k.traces_to = None;
        }
    }
    assert_eq!(ours, theirs);
}

#[tokio::test]
async fn writing_plans_runs_end_to_end_on_the_scripted_model() {
    let dir = tempfile::tempdir().unwrap();
    let responses = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/writing_plans.responses.json"
    );
    let model = ais::rt::llm::from_spec(&format!("scripted:{responses}")).unwrap();
    let runtime = WritingPlans::runtime()
        .model(model)
        .out_dir(dir.path().to_path_buf())
        .build();
    let input = WritingPlansInput {
        task: "Plan a CSV export and save it to docs/plans/csv.md".into(),
    };
    let report = WritingPlans::run(input, &runtime)
        .await
        .expect("the run reports");
    assert_eq!(report.plan_ok, Some(true));
    assert_eq!(report.plan_file.as_deref(), Some("docs/plans/csv.md"));
    let written = std::fs::read_to_string(dir.path().join("docs/plans/csv.md")).unwrap();
    assert!(
        written.starts_with("# CSV Export Implementation Plan"),
        "{written}"
    );
    assert_eq!(Some(written), report.plan_md);
}

fn args(pairs: &[(&str, &str)]) -> ToolArgs {
    ToolArgs {
        params: pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), Value::from(*v)))
            .collect(),
    }
}

#[tokio::test]
async fn writing_plans_tools_run_natively() {
    let dir = tempfile::tempdir().unwrap();
    let tools = WritingPlans::tools();
    let assemble = tools.get("assemble_plan").expect("registered");
    let out = assemble
        .call(
            args(&[("header_md", "# Plan\n\n"), ("tasks_md", "\n### Task 1\n")]),
            &ToolContext::new(dir.path()),
        )
        .await;
    assert_eq!(out, Ok(Value::from("# Plan\n\n### Task 1\n")));

    let save = tools.get("save_plan").expect("registered");
    let saved = save
        .call(
            args(&[("plan_md", "# Plan\n"), ("path", "docs/plan.md")]),
            &ToolContext::new(dir.path()),
        )
        .await;
    assert_eq!(saved, Ok(Value::from("docs/plan.md")));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("docs/plan.md")).unwrap(),
        "# Plan\n"
    );

    let escape = save
        .call(
            args(&[("plan_md", "x"), ("path", "../outside.md")]),
            &ToolContext::new(dir.path()),
        )
        .await
        .unwrap_err();
    assert_eq!(escape.kind, ToolErrorKind::PathEscape);

    let wrong = tools
        .get("verify_has_tasks")
        .unwrap()
        .call(
            ToolArgs {
                params: [("plan_md".to_owned(), Value::Int(3))]
                    .into_iter()
                    .collect(),
            },
            &ToolContext::new(dir.path()),
        )
        .await
        .unwrap_err();
    assert_eq!(wrong.kind, ToolErrorKind::BadArguments);
    assert!(
        wrong.message.contains("parameter `plan_md`"),
        "{}",
        wrong.message
    );
}
