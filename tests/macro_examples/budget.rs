//! `ais check --budget` against real runs: every example program run on its scripted
//! responses (and its LOOP example driven to its cap) spends no more steps, slot fills or
//! visits of any instruction than its static budget allows, and a program built to run its
//! LOOP to the cap spends exactly its budget.

use super::approve_refund::{self, ApproveRefund};
use super::extract_invoice::{ExtractInvoice, INVOICE_TEXT};
use super::fix_failing_test::{BUGGY_MODULE, FixFailingTest, MODULE_FILE, TASK, TESTS};
use super::release_notes::{DraftChangelog, LOG, ReleaseNotes};
use super::review_files::{ReviewFiles, write_change};
use super::sales_question::{QUESTION, SALES_CSV, SalesQuestion};
use super::triage_ticket::{TICKET, TriageTicket};
use super::writing_plans::WritingPlans;
use ais::budget::{Budget, BudgetLimits, budget};
use ais::rt::trace::{StepEvent, TraceSink};
use ais::rt::{Inputs, RuntimeBuilder};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Counts what a run spent, from its trace: steps (events of no SPAWN sibling), slot fills
/// (events with a slot) and visits per instruction.
#[derive(Default)]
struct Spent(Mutex<(u64, u64, BTreeMap<String, u64>)>);

impl TraceSink for Spent {
    fn event(&self, e: &StepEvent) {
        let mut s = self.0.lock().unwrap();
        if e.sibling.is_none() {
            s.0 += 1;
            *s.2.entry(e.instruction.clone()).or_default() += 1;
        }
        if e.slot.is_some() {
            s.1 += 1;
        }
    }
}

/// The budget of `program` under the runtime's limits; `DraftChangelog` is the one CALL
/// target among the examples.
fn budget_of(program: &ais::Program) -> Budget {
    let plan = ais::plan::lower(program).expect("the example lowers");
    let limits = BudgetLimits::default();
    budget(program, &plan, &limits, 0, &mut |target, depth| {
        assert_eq!(target, "DraftChangelog");
        let callee = DraftChangelog::program();
        let plan = ais::plan::lower(callee).unwrap();
        Ok(budget(callee, &plan, &limits, depth, &mut |t, _| {
            Err(t.into())
        }))
    })
}

/// Runs `program` on `builder` (tools and callees registered) with `model` and `inputs` in
/// `out`, then checks what it spent against the budget; returns (spent steps, budget).
async fn within_budget(
    name: &str,
    program: &ais::Program,
    builder: RuntimeBuilder,
    model: &str,
    out: &Path,
    inputs: Inputs,
) -> (u64, Budget) {
    let spent = Arc::new(Spent::default());
    let runtime = builder
        .model(super::runs::shipped(model))
        .out_dir(out.into())
        .trace(spent.clone())
        .build();
    let outcome = runtime.run(program, None, inputs).await;
    assert_eq!(outcome.status, ais::rt::Status::Ok, "{name}: {outcome:?}");
    check_spent(name, program, &spent, budget_of(program))
}

fn check_spent(name: &str, program: &ais::Program, spent: &Spent, b: Budget) -> (u64, Budget) {
    let (steps, slots, visits) = spent.0.lock().unwrap().clone();
    assert!(
        steps <= b.steps.expect("bounded steps"),
        "{name}: {steps} steps > {b:?}"
    );
    if let Some(bound) = b.slot_calls {
        assert!(slots <= bound, "{name}: {slots} slots > {bound}");
    }
    let calls = program.instructions().iter().any(|n| n.target.is_some());
    if !calls {
        for (id, bound) in &b.visits {
            let n = visits.get(id).copied().unwrap_or(0);
            assert!(
                n <= bound.expect("bounded visits"),
                "{name}: `{id}` ran {n} times > {bound:?}"
            );
        }
    }
    (steps, b)
}

fn inputs(program: &ais::Program, task: &str, pairs: &[(&str, &str)]) -> Inputs {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| ((*k).into(), (*v).into()))
        .collect();
    Inputs::parse(program, Some(task.into()), &pairs).expect("the inputs parse")
}

#[tokio::test]
async fn every_example_run_stays_within_its_static_budget() {
    let out = tempfile::tempdir().unwrap();
    let o = out.path();
    let p = WritingPlans::program();
    within_budget(
        "writing_plans",
        p,
        WritingPlans::runtime(),
        "writing_plans",
        o,
        inputs(p, "A CSV export", &[]),
    )
    .await;
    let p = TriageTicket::program();
    within_budget(
        "triage_ticket",
        p,
        TriageTicket::runtime(),
        "triage_ticket",
        o,
        inputs(p, TICKET, &[]),
    )
    .await;
    let p = ExtractInvoice::program();
    let i = inputs(
        p,
        "File this invoice in ledger.csv",
        &[("invoice_text", INVOICE_TEXT)],
    );
    within_budget(
        "extract_invoice",
        p,
        ExtractInvoice::runtime(),
        "extract_invoice",
        o,
        i,
    )
    .await;
    std::fs::write(o.join("sales.csv"), SALES_CSV).unwrap();
    let p = SalesQuestion::program();
    within_budget(
        "sales_question",
        p,
        SalesQuestion::runtime(),
        "sales_question",
        o,
        inputs(p, QUESTION, &[]),
    )
    .await;
    let p = ReleaseNotes::program();
    let i = inputs(
        p,
        "Release 2.4.0 to CHANGELOG.md",
        &[("version", "2.4.0"), ("log", LOG)],
    );
    let (steps, b) = within_budget(
        "release_notes",
        p,
        ReleaseNotes::runtime(),
        "release_notes",
        o,
        i,
    )
    .await;
    assert_eq!(
        Some(steps),
        b.steps,
        "a straight line with a CALL: exact, callee included"
    );
    std::fs::write(o.join("text_utils.py"), BUGGY_MODULE).unwrap();
    let p = FixFailingTest::program();
    let i = inputs(p, TASK, &[("module_file", MODULE_FILE), ("tests", TESTS)]);
    within_budget(
        "fix_failing_test",
        p,
        FixFailingTest::runtime(),
        "fix_failing_test",
        o,
        i,
    )
    .await;
    let work = tempfile::tempdir().unwrap();
    let paths = serde_json::to_string(&write_change(work.path()).unwrap()).unwrap();
    let checkout = work.path().display().to_string();
    let p = ReviewFiles::program();
    let i = inputs(
        p,
        "Retry with backoff",
        &[("checkout", &checkout), ("paths", &paths)],
    );
    let (_, b) = within_budget(
        "review_files",
        p,
        ReviewFiles::runtime(),
        "review_files",
        work.path(),
        i,
    )
    .await;
    assert_eq!(
        b.slot_calls, None,
        "a fan-out over a list carry bounds no slots"
    );
    assert_eq!(b.unbounded[0].kind, "fan_out");
}

#[tokio::test]
async fn a_paused_and_resumed_run_stays_within_its_budget() {
    let out = tempfile::tempdir().unwrap();
    let spent = Arc::new(Spent::default());
    let runtime = ApproveRefund::runtime()
        .model(super::runs::shipped("approve_refund"))
        .out_dir(out.path().into())
        .trace(spent.clone())
        .build();
    approve_refund::run_with_answer(&runtime, "yes")
        .await
        .unwrap();
    // The trace keeps the attempt of the step that paused; the run counts the step once, when
    // the resume runs it (`RunOutcome::steps`).
    {
        let mut s = spent.0.lock().unwrap();
        assert_eq!(s.2["ask"], 2, "the paused attempt and the resumed step");
        s.0 -= 1;
        *s.2.get_mut("ask").unwrap() -= 1;
    }
    let p = ApproveRefund::program();
    check_spent("approve_refund", p, &spent, budget_of(p));
}

#[tokio::test]
async fn the_repair_loop_run_to_its_cap_stays_within_its_budget() {
    let out = tempfile::tempdir().unwrap();
    std::fs::write(out.path().join("text_utils.py"), BUGGY_MODULE).unwrap();
    let file = out.path().join("responses.json");
    let m = BUGGY_MODULE;
    std::fs::write(
        &file,
        serde_json::json!({"repair": [m, m, m, m]}).to_string(),
    )
    .unwrap();
    let spent = Arc::new(Spent::default());
    let runtime = FixFailingTest::runtime()
        .model(ais::rt::llm::from_spec(&format!("scripted:{}", file.display())).unwrap())
        .out_dir(out.path().into())
        .trace(spent.clone())
        .build();
    let p = FixFailingTest::program();
    let outcome = runtime
        .run(
            p,
            None,
            inputs(p, TASK, &[("module_file", MODULE_FILE), ("tests", TESTS)]),
        )
        .await;
    assert_eq!(outcome.status, ais::rt::Status::Ok, "{outcome:?}");
    let (steps, b) = check_spent("fix_failing_test at its cap", p, &spent, budget_of(p));
    // Everything but the save the failing module never reaches.
    assert_eq!(Some(steps + 1), b.steps);
    assert_eq!(
        b.visits.iter().find(|(id, _)| id == "repair").unwrap().1,
        Some(4)
    );
    assert_eq!(
        spent.0.lock().unwrap().2["repair"],
        4,
        "the cap of 3, and the visit that advances"
    );
}

/// A draft, then a LOOP (cap 4, counting in `round`) that has the model revise it while a
/// CODE judge finds it too short — which it always does — then the TERMINAL.
const TO_THE_CAP: &str = r#"---
name: to_the_cap
description: Revise a draft until the LOOP's cap.
---
walker:
  name: ToTheCap
  carries:
    task: {type: str, role: input}
    draft: {type: str, produced_by: write}
    long_enough: {type: bool, produced_by: judge}
    round: {type: int, produced_by: revise}
nodes:
  - {id: write, type: GEN-RAW, owner: model, reads: [task], writes: [draft], doc: "Write a draft."}
  - {id: judge, type: CODE, owner: code, reads: [draft], writes: [long_enough], body: "len(draft) > 100000"}
  - {id: revise, type: LOOP, owner: model, reads: [draft], writes: [draft], verdict: long_enough, cap: 4, counter: round, doc: "Make the draft longer."}
  - {id: done, type: TERMINAL, owner: code, reads: [draft, round]}
edges:
  - {from: write, to: judge}
  - {from: judge, to: revise}
  - {from: revise, to: judge}
  - {from: revise, to: done}
"#;

fn ais(dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(dir)
        .env_remove("AIS_MODEL")
        .output()
        .expect("the ais binary runs")
}

#[test]
fn a_program_run_to_its_loop_cap_meets_its_budget_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("cap.agir"), TO_THE_CAP).unwrap();
    let responses = serde_json::json!({
        "write": ["a"], "revise": ["ab", "abc", "abcd", "abcde"]
    });
    std::fs::write(d.join("r.json"), responses.to_string()).unwrap();
    let o = ais(d, &["check", "--budget", "--format", "json", "cap.agir"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let b = &report["budget"];
    // write 1, judge 1 + 4, revise 1 + 4 (4 of them revise), done 1.
    assert_eq!(b["steps"], 12, "{b}");
    assert_eq!(b["slot_calls"], 5, "{b}");
    assert_eq!(b["loops"][0]["iterations"], 4, "{b}");
    let o = ais(
        d,
        &[
            "run",
            "cap.agir",
            "--task",
            "t",
            "--model",
            "scripted:r.json",
            "--format",
            "json",
            "--trace",
            "t.jsonl",
        ],
    );
    let run: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(run["status"], "ok", "{run}");
    assert_eq!(
        run["steps"], b["steps"],
        "the run spends its budget exactly"
    );
    assert_eq!(run["report"]["round"], 4);
    let trace = std::fs::read_to_string(d.join("t.jsonl")).unwrap();
    let slots = trace.lines().filter(|l| l.contains("\"slot\":{")).count();
    assert_eq!(serde_json::json!(slots), b["slot_calls"]);
    // The human form says the same.
    let o = ais(d, &["check", "--budget", "cap.agir"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("budget: at most 12 steps, 5 slot fills (15 model exchanges, 61440 completion tokens at 4096 per exchange), 0 tool calls"), "{text}");
    assert!(
        text.contains("LOOP `revise`: cap 4, at most 4 iterations"),
        "{text}"
    );
}

#[test]
fn a_route_cycle_is_reported_unbounded_with_what_would_bound_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"walker:
  carries:
    task: {type: str, role: input}
    n: {type: int, produced_by: count}
nodes:
  - {id: count, type: CODE, owner: code, reads: [n], writes: [n], body: "n + 1"}
  - {id: gate, type: ROUTE, owner: code, reads: [n]}
  - {id: done, type: TERMINAL, owner: code, reads: [n]}
edges:
  - {from: count, to: gate}
  - {from: gate, to: count, guard: "n < 5"}
  - {from: gate, to: done}
"#;
    std::fs::write(dir.path().join("spin.agir"), text).unwrap();
    let o = ais(
        dir.path(),
        &["check", "--budget", "--format", "json", "spin.agir"],
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let b = &report["budget"];
    assert_eq!(b["steps"], serde_json::Value::Null);
    assert_eq!(b["unbounded"][0]["kind"], "cycle");
    assert_eq!(
        b["unbounded"][0]["instructions"],
        serde_json::json!(["count", "gate"])
    );
    let o = ais(dir.path(), &["check", "--budget", "spin.agir"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("budget: at most unbounded steps"), "{text}");
    assert!(
        text.contains("unbounded: the cycle `count` -> `gate` -> `count` has no LOOP"),
        "{text}"
    );
    assert!(
        text.contains("help: make the edge `gate` -> `count` the back edge of a LOOP"),
        "{text}"
    );
}
