//! Each example program run end to end through the library (`Program::run(input, &runtime)`)
//! on its scripted responses — and on variations of them written here — asserting on the
//! values its Rust tools and scripted slots produced.

use super::approve_refund::{self, ApproveRefund};
use super::extract_invoice::{ExtractInvoice, ExtractInvoiceInput, INVOICE_TEXT};
use super::fix_failing_test::{
    BUGGY_MODULE, FixFailingTest, FixFailingTestInput, MODULE_FILE, TASK, TESTS,
};
use super::release_notes::{LOG, ReleaseNotes, ReleaseNotesInput};
use super::review_files::{ReviewFiles, ReviewFilesInput, write_change};
use super::sales_question::{QUESTION, SALES_CSV, SalesQuestion, SalesQuestionInput};
use super::triage_ticket::{Category, TICKET, TriageTicket, TriageTicketInput};
use ais::RunError;
use ais::rt::llm::Model;
use ais::rt::{Runtime, RuntimeBuilder};
use ais::rt::{ToolArgs, ToolContext};
use std::path::Path;
use std::sync::Arc;

/// The scripted model of the example's own responses file.
pub(crate) fn shipped(example: &str) -> Arc<dyn Model> {
    let file = format!(
        "{}/examples/{example}.responses.json",
        env!("CARGO_MANIFEST_DIR")
    );
    ais::rt::llm::from_spec(&format!("scripted:{file}")).expect("the shipped responses read")
}

/// The runtime `builder` with `example`'s shipped scripted model, writing under `out`.
fn on_shipped(builder: RuntimeBuilder, example: &str, out: &Path) -> Runtime {
    builder.model(shipped(example)).out_dir(out.into()).build()
}

/// A scripted model of `responses`, written to a file in `dir`.
fn scripted(dir: &Path, responses: serde_json::Value) -> Arc<dyn Model> {
    let file = dir.join("responses.json");
    std::fs::write(&file, responses.to_string()).unwrap();
    ais::rt::llm::from_spec(&format!("scripted:{}", file.display())).unwrap()
}

#[tokio::test]
async fn triage_routes_a_double_charge_to_billing() {
    let out = tempfile::tempdir().unwrap();
    let runtime = on_shipped(TriageTicket::runtime(), "triage_ticket", out.path());
    let input = TriageTicketInput {
        task: TICKET.into(),
    };
    let report = TriageTicket::run(input, &runtime).await.expect("reports");
    assert_eq!(report.category, Some(Category::billing));
    assert_eq!(report.queue.as_deref(), Some("support-billing"));
    let reply = report.reply.unwrap();
    assert!(reply.contains("order #88412"), "{reply}");
}

#[tokio::test]
async fn triage_takes_the_guarded_edge_for_its_category_and_the_default_otherwise() {
    for (category, slot, queue) in [
        ("bug", "bug_reply", "support-bug-urgent"),
        ("account", "account_reply", "support-account-urgent"),
        ("other", "general_reply", "support-other"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let reply = format!("the {slot} reply");
        let model = scripted(
            dir.path(),
            serde_json::json!({"classify": [category], slot: [reply]}),
        );
        let runtime = TriageTicket::runtime()
            .model(model)
            .out_dir(dir.path().into())
            .build();
        let input = TriageTicketInput {
            task: "The export button does nothing".into(),
        };
        let report = TriageTicket::run(input, &runtime)
            .await
            .unwrap_or_else(|e| panic!("{category}: {e}"));
        assert_eq!(report.queue.as_deref(), Some(queue), "{category}");
        assert_eq!(report.reply, Some(reply), "{category}");
    }
}

#[tokio::test]
async fn the_test_runner_tool_runs_the_tests_under_python() {
    let dir = tempfile::tempdir().unwrap();
    let tools = FixFailingTest::tools();
    let run_tests = tools.get("run_tests").expect("registered");
    let args = |source: &str| ToolArgs {
        params: [("source", source), ("tests", TESTS)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), ais::Value::from(v)))
            .collect(),
    };
    // The tool's `TestRun`, as the runtime receives it: an object.
    let run = |v: ais::Value| -> (bool, String) {
        let json = v.to_json();
        let passing = json["passing"].as_bool().expect("a passing flag");
        (
            passing,
            json["failures"].as_str().unwrap_or_default().to_owned(),
        )
    };
    let (passing, failures) = run(run_tests
        .call(args(BUGGY_MODULE), &ToolContext::new(dir.path()))
        .await
        .expect("the runner runs"));
    assert!(!passing);
    let names: Vec<&str> = failures
        .lines()
        .map(|l| l.split(':').next().unwrap())
        .collect();
    assert_eq!(
        names,
        ["test_collapses_repeated_spaces", "test_drops_punctuation"],
        "{failures}"
    );
    assert!(
        failures.contains("at `assert slugify(\"Rust, Python & Go!\") == \"rust-python-go\"`"),
        "{failures}"
    );
    let fixed =
        "import re\ndef slugify(t):\n    return '-'.join(re.findall('[a-z0-9]+', t.lower()))\n";
    let (passing, failures) = run(run_tests
        .call(args(fixed), &ToolContext::new(dir.path()))
        .await
        .unwrap());
    assert!(passing && failures.is_empty(), "{failures}");
    let (passing, broken) = run(run_tests
        .call(args("def slugify(:\n"), &ToolContext::new(dir.path()))
        .await
        .unwrap());
    assert!(!passing);
    assert!(
        broken.starts_with("module_source.py does not load: SyntaxError"),
        "{broken}"
    );
    let (passing, dead) = run(run_tests
        .call(
            args("import os\nos._exit(3)\n"),
            &ToolContext::new(dir.path()),
        )
        .await
        .unwrap());
    assert!(!passing);
    assert!(
        dead.starts_with("the tests could not run (exit status: 3)"),
        "{dead}"
    );
}

#[tokio::test]
async fn the_repair_loop_goes_round_until_the_tests_pass() {
    let out = tempfile::tempdir().unwrap();
    std::fs::write(out.path().join("text_utils.py"), BUGGY_MODULE).unwrap();
    let runtime = on_shipped(FixFailingTest::runtime(), "fix_failing_test", out.path());
    let input = FixFailingTestInput {
        task: TASK.into(),
        module_file: MODULE_FILE.into(),
        tests: TESTS.into(),
    };
    let report = FixFailingTest::run(input, &runtime).await.expect("reports");
    assert_eq!(report.passing, Some(true));
    assert_eq!(report.attempts, Some(2));
    assert_eq!(report.failures.as_deref(), Some(""));
    assert_eq!(report.saved_to.as_deref(), Some("text_utils.py"));
    let saved = std::fs::read_to_string(out.path().join("text_utils.py")).unwrap();
    assert!(saved.contains("re.findall(r\"[a-z0-9]+\""), "{saved}");
    assert_eq!(Some(saved), report.source);
}

#[tokio::test]
async fn the_repair_loop_stops_at_its_cap_and_saves_nothing() {
    for (module, why) in [
        (BUGGY_MODULE, "test_drops_punctuation"),
        // A module that kills the test runner: the tests cannot run, which is no pass.
        ("import os\nos._exit(3)\n", "could not run"),
    ] {
        let out = tempfile::tempdir().unwrap();
        std::fs::write(out.path().join("text_utils.py"), module).unwrap();
        let model = scripted(
            out.path(),
            serde_json::json!({"repair": [module, module, module, module]}),
        );
        let runtime = FixFailingTest::runtime()
            .model(model)
            .out_dir(out.path().into())
            .build();
        let input = FixFailingTestInput {
            task: TASK.into(),
            module_file: MODULE_FILE.into(),
            tests: TESTS.into(),
        };
        let report = FixFailingTest::run(input, &runtime).await.expect("reports");
        assert_eq!(report.passing, Some(false), "{why}");
        assert_eq!(report.attempts, Some(3), "the cap is 3");
        assert!(report.failures.unwrap().contains(why));
        assert_eq!(report.saved_to, None, "nothing saved it: {why}");
        let on_disk = std::fs::read_to_string(out.path().join("text_utils.py")).unwrap();
        assert_eq!(on_disk, module, "a failing module is not saved");
    }
}

#[tokio::test]
async fn reviews_fan_out_one_per_file_and_join_in_file_order() {
    let work = tempfile::tempdir().unwrap();
    let paths = write_change(work.path()).unwrap();
    let runtime = ReviewFiles::runtime()
        .model(shipped("review_files"))
        .out_dir(work.path().into())
        .build();
    let input = ReviewFilesInput {
        task: "Retry failed requests with exponential backoff".into(),
        checkout: work.path().display().to_string(),
        paths,
    };
    let report = ReviewFiles::run(input, &runtime).await.expect("reports");
    let files = report.files.unwrap();
    assert!(
        files[0].starts_with("src/retry.rs\n```\npub fn backoff"),
        "{files:?}"
    );
    let reviews = report.reviews.unwrap();
    assert_eq!(reviews.len(), 3);
    assert!(reviews[0].starts_with("verdict: request-changes"));
    let summary = report.summary.unwrap();
    let rows: Vec<&str> = summary.lines().skip(2).collect();
    assert_eq!(rows.len(), 3, "{summary}");
    assert!(
        rows[0].starts_with("| src/retry.rs | request-changes | line 2: "),
        "{summary}"
    );
    assert!(
        rows[1].starts_with("| src/config.rs | approve | Five attempts"),
        "{summary}"
    );
    assert!(rows[2].starts_with("| README.md | approve |"), "{summary}");
    assert_eq!(report.approved, Some(false));
}

#[tokio::test]
async fn a_file_that_cannot_be_read_goes_to_its_reviewer_with_the_reason() {
    let work = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let review = "verdict: approve\n- The file is deleted; nothing to review.";
    let model = scripted(dir.path(), serde_json::json!({"review": [review]}));
    let runtime = ReviewFiles::runtime()
        .model(model)
        .out_dir(work.path().into())
        .build();
    let input = ReviewFilesInput {
        task: "Remove the legacy client".into(),
        checkout: work.path().display().to_string(),
        paths: vec!["src/legacy.rs".into()],
    };
    let report = ReviewFiles::run(input, &runtime).await.expect("reports");
    let files = report.files.unwrap();
    assert!(
        files[0].starts_with("src/legacy.rs\n(this file cannot be read: "),
        "{files:?}"
    );
    assert_eq!(report.approved, Some(true));
    assert!(
        report
            .summary
            .unwrap()
            .contains("| src/legacy.rs | approve | The file is deleted; nothing to review. |")
    );
}

#[tokio::test]
async fn release_notes_call_the_registered_changelog_program() {
    let out = tempfile::tempdir().unwrap();
    let runtime = on_shipped(ReleaseNotes::runtime(), "release_notes", out.path());
    let input = ReleaseNotesInput {
        task: "Release 2.4.0 and write its notes to CHANGELOG-2.4.0.md".into(),
        version: "2.4.0".into(),
        log: LOG.into(),
    };
    let report = ReleaseNotes::run(input, &runtime).await.expect("reports");
    assert_eq!(
        report.commits.as_deref(),
        Some(
            "feat: export orders as CSV from the account page\n\
             fix: keep the cart when a session expires during checkout\n\
             feat(search): search orders by SKU"
        )
    );
    let entries = report.entries.unwrap();
    assert!(
        entries.contains("- Search your orders by SKU."),
        "the GEN-EDIT's revision: {entries}"
    );
    let notes = report.notes.unwrap();
    assert_eq!(notes, format!("## 2.4.0\n\n{entries}\n"));
    assert_eq!(report.notes_file.as_deref(), Some("CHANGELOG-2.4.0.md"));
    let saved = std::fs::read_to_string(out.path().join("CHANGELOG-2.4.0.md")).unwrap();
    assert_eq!(saved, notes);
}

#[tokio::test]
async fn without_its_callee_registered_the_call_faults_naming_it() {
    let out = tempfile::tempdir().unwrap();
    let runtime = ais::rt::Runtime::builder()
        .tools(ReleaseNotes::tools())
        .model(shipped("release_notes"))
        .out_dir(out.path().into())
        .build();
    let input = ReleaseNotesInput {
        task: "Release 2.4.0 to CHANGELOG.md".into(),
        version: "2.4.0".into(),
        log: LOG.into(),
    };
    match ReleaseNotes::run(input, &runtime).await {
        Err(RunError::Fault(f)) => {
            assert_eq!(f.instruction, "changelog");
            assert!(f.message.contains("`DraftChangelog`"), "{}", f.message);
        }
        other => panic!("expected a fault at the CALL, got {other:?}"),
    }
}

#[tokio::test]
async fn the_refund_gate_pauses_for_the_human_and_routes_on_the_parsed_answer() {
    for (answer, approved, reply_has) in [
        ("yes", true, "is approved"),
        ("Approved, thanks", true, "is approved"),
        ("no, the warranty covers it", false, "warranty"),
        ("why is this a refund?", false, "warranty"),
    ] {
        let out = tempfile::tempdir().unwrap();
        let runtime = on_shipped(ApproveRefund::runtime(), "approve_refund", out.path());
        let (prompt, report) = approve_refund::run_with_answer(&runtime, answer)
            .await
            .unwrap_or_else(|e| panic!("{answer}: {e}"));
        assert!(
            prompt.starts_with(
                "Approve this refund? Answer yes, or no with a reason.\n\nOrder #55120"
            ),
            "{prompt}"
        );
        assert_eq!(report.question.as_deref(), Some(prompt.as_str()));
        assert_eq!(report.answer.as_deref(), Some(answer));
        assert_eq!(report.approved, Some(approved), "{answer}");
        assert!(report.reply.unwrap().contains(reply_has), "{answer}");
    }
}

#[tokio::test]
async fn the_invoice_fills_its_declared_object_with_defaults_and_files_a_row() {
    let out = tempfile::tempdir().unwrap();
    let runtime = on_shipped(ExtractInvoice::runtime(), "extract_invoice", out.path());
    let input = ExtractInvoiceInput {
        task: "File this invoice in ledger/2026-03.csv".into(),
        invoice_text: INVOICE_TEXT.into(),
    };
    let report = ExtractInvoice::run(input, &runtime).await.expect("reports");
    let invoice = report.invoice.unwrap();
    assert_eq!(invoice.number, "NB-2026-0417");
    assert_eq!(invoice.total, 984.13);
    assert_eq!((invoice.currency.as_str(), invoice.due_days), ("EUR", 30));
    assert_eq!(invoice.lines.len(), 3);
    assert!(report.checked.unwrap().ok);
    assert_eq!(report.ledger_file.as_deref(), Some("ledger/2026-03.csv"));
    let row = std::fs::read_to_string(out.path().join("ledger/2026-03.csv")).unwrap();
    assert_eq!(
        row,
        "vendor,number,issued,due_days,total,currency,lines\n\
         \"Nordlicht Bürobedarf GmbH\",\"NB-2026-0417\",2026-03-09,30,984.13,EUR,3\n"
    );
}

#[tokio::test]
async fn an_invoice_with_impossible_figures_is_not_filed() {
    let out = tempfile::tempdir().unwrap();
    let model = scripted(
        out.path(),
        serde_json::json!({"extract": [{
            "vendor": "Nordlicht", "number": "NB-1", "issued": "9 March", "total": 10.0
        }]}),
    );
    let runtime = ExtractInvoice::runtime()
        .model(model)
        .out_dir(out.path().into())
        .build();
    let input = ExtractInvoiceInput {
        task: "File this invoice in ledger.csv".into(),
        invoice_text: INVOICE_TEXT.into(),
    };
    let report = ExtractInvoice::run(input, &runtime).await.expect("reports");
    let checked = report.checked.unwrap();
    assert!(!checked.ok);
    assert!(
        checked
            .error
            .contains("invoice NB-1 has the date `9 March`"),
        "{checked:?}"
    );
    assert_eq!(report.ledger_row, None, "the row is never unwrapped");
    assert_eq!(report.ledger_file, None, "nothing is filed");
    assert!(!out.path().join("ledger.csv").exists());
}

#[tokio::test]
async fn the_authored_script_runs_and_its_output_is_the_answer() {
    let out = tempfile::tempdir().unwrap();
    std::fs::write(out.path().join("sales.csv"), SALES_CSV).unwrap();
    let runtime = on_shipped(SalesQuestion::runtime(), "sales_question", out.path());
    let input = SalesQuestionInput {
        task: QUESTION.into(),
    };
    let report = SalesQuestion::run(input, &runtime).await.expect("reports");
    // north: 12 x 24.50 + 4 x 39.00 + 5 x 24.50
    assert_eq!(report.answer.as_deref(), Some("north: 572.50"));
    let result = report.run_result.unwrap();
    assert!(result.ok, "{result:?}");
    let script = report.script.unwrap();
    assert!(
        script.starts_with("import csv"),
        "fences stripped: {script}"
    );
    let saved = std::fs::read_to_string(out.path().join(".ais/scripts/run.py")).unwrap();
    assert_eq!(saved.trim_end(), script.trim_end());
}

#[tokio::test]
async fn a_failing_script_is_routed_to_an_explanation() {
    let out = tempfile::tempdir().unwrap();
    let runtime = on_shipped(SalesQuestion::runtime(), "sales_question", out.path());
    let input = SalesQuestionInput {
        task: QUESTION.into(),
    };
    let report = SalesQuestion::run(input, &runtime).await.expect("reports");
    let result = report.run_result.unwrap();
    assert!(!result.ok);
    assert!(result.output.contains("FileNotFoundError"), "{result:?}");
    assert!(report.answer.unwrap().contains("sales.csv is missing"));
}

#[tokio::test]
async fn the_checked_in_release_notes_find_their_callee_agir_by_name() {
    // The `.agir` pair as `build.rs` export writes it, with only the Rust tools registered:
    // the CALL finds `DraftChangelog` as `draft_changelog.agir` in the program directory.
    let agir_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/agir");
    let text = std::fs::read_to_string(agir_dir.join("release_notes.agir")).unwrap();
    let doc = ais::agir::read(&text).unwrap();
    let out = tempfile::tempdir().unwrap();
    let runtime = ais::rt::Runtime::builder()
        .tools(ReleaseNotes::tools())
        .model(shipped("release_notes"))
        .out_dir(out.path().into())
        .program_dir(agir_dir)
        .build();
    let inputs = ais::rt::Inputs::parse(
        &doc.program,
        Some("Release 2.4.0 to CHANGELOG.md".into()),
        &[
            ("version".into(), "2.4.0".into()),
            ("log".into(), LOG.into()),
        ],
    )
    .unwrap();
    let outcome = runtime
        .run(&doc.program, Some(&doc.source_map), inputs)
        .await;
    assert_eq!(outcome.status, ais::rt::Status::Ok, "{outcome:?}");
    let notes = outcome.report["notes"].as_str().unwrap();
    assert!(
        notes.starts_with("## 2.4.0\n\n### Added\n- Download your order history"),
        "{notes}"
    );
    assert_eq!(
        std::fs::read_to_string(out.path().join("CHANGELOG.md")).unwrap(),
        notes
    );
}

#[tokio::test]
async fn resuming_from_a_handle_that_is_not_one_is_a_fault_and_runs_nothing() {
    let out = tempfile::tempdir().unwrap();
    let bogus = out.path().join("handle.json");
    std::fs::write(&bogus, "{\"format\": \"something else\"}").unwrap();
    let runtime = on_shipped(ApproveRefund::runtime(), "approve_refund", out.path());
    match ApproveRefund::resume(&bogus, "yes".into(), &runtime).await {
        Err(RunError::Fault(f)) => {
            assert_eq!(f.kind, ais::rt::FaultKind::InvalidHandle);
            assert!(f.message.contains("handle.json"), "{}", f.message);
        }
        other => panic!("expected an invalid-handle fault, got {other:?}"),
    }
}
