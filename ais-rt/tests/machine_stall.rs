//! Stall detection (an extension of §10.4): a cycle of pure steps that comes back to an
//! instruction with every carry unchanged faults at once, naming the cycle and the carries;
//! a cycle through a SENSE, or one whose carries change, is not stalled.

use crate::common;

use ais_core::Value;
use ais_rt::ToolRegistry;
use ais_rt::llm::ScriptedModel;
use ais_rt::{FaultKind, Inputs, Runtime, Status};
use common::{Bench, block_on, program, tool};
use std::sync::Arc;

/// A retry cycle of Python steps: `verify` says whether the draft is done, `tidy` "fixes" it
/// by stripping whitespace — which never removes the TODO, so nothing can change.
const RETRY: &str = r#"---
name: retry
description: Tidy a draft until it has no TODO.
---
tools:
  is_done:
    sig: "(draft) -> bool"
    surface: SENSE
    serves: [verify]
    body: |
      def is_done(draft):
          return "TODO" not in draft
  tidy:
    sig: "(draft) -> str"
    surface: ACT
    serves: [fix]
    body: |
      def tidy(draft):
          return draft.strip()
walker:
  name: Retry
  carries:
    task: {type: str, role: input}
    draft: {type: str, produced_by: start}
    done_ok: {type: bool, produced_by: verify}
nodes:
  - {id: start, type: CODE, owner: code, reads: [task], writes: [draft], body: "task.strip()"}
  - {id: verify, type: CODE, owner: code, reads: [draft], writes: [done_ok]}
  - {id: gate, type: ROUTE, owner: code, reads: [done_ok]}
  - {id: fix, type: CODE, owner: code, reads: [draft], writes: [draft]}
  - {id: done, type: TERMINAL, reads: [draft]}
edges:
  - {from: start, to: verify}
  - {from: verify, to: gate}
  - {from: gate, to: done, guard: "done_ok"}
  - {from: gate, to: fix, guard: otherwise}
  - {from: fix, to: verify}
"#;

fn python_runtime(dir: &std::path::Path) -> Runtime {
    Runtime::builder()
        .tools(ToolRegistry::with_builtins())
        .out_dir(dir.to_path_buf())
        .build()
}

#[test]
fn a_retry_cycle_of_python_steps_that_changes_nothing_faults_at_once() {
    let doc = program(RETRY);
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let out = block_on(python_runtime(dir.path()).run(
        &doc.program,
        None,
        Inputs::task("TODO: write the intro"),
    ));
    assert_eq!(out.status, Status::Fault, "{out:?}");
    let fault = out.fault.as_ref().unwrap();
    assert_eq!(fault.kind, FaultKind::Stalled, "{fault:?}");
    assert!(
        out.steps <= 8,
        "found on the first revisit, not at the budget: {} steps",
        out.steps
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    for id in ["`verify`", "`gate`", "`fix`"] {
        assert!(fault.message.contains(id), "{id}: {}", fault.message);
    }
    assert!(
        fault.message.contains("`draft`") && fault.message.contains("`done_ok`"),
        "{}",
        fault.message
    );
    assert!(!fault.message.contains("`start`"), "{}", fault.message);
}

#[test]
fn the_same_cycle_that_makes_progress_is_not_stalled() {
    // The task has trailing spaces: the first `tidy` changes the draft, the loop goes on, and
    // only once nothing changes any more does it stall; with a fixable draft it finishes.
    let doc = program(&RETRY.replace(
        "return draft.strip()",
        "return draft.replace('TODO', 'DONE')",
    ));
    let dir = tempfile::tempdir().unwrap();
    let out = block_on(python_runtime(dir.path()).run(
        &doc.program,
        None,
        Inputs::task("TODO: write the intro"),
    ));
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["draft"], "DONE: write the intro");
}

/// A counter loop of CODE and ROUTE: every turn changes `n`, so it runs to its end.
const COUNT: &str = r#"---
name: count
description: Count to a limit.
---
walker:
  name: Count
  carries:
    task: {type: str, role: input}
    n: {type: int, produced_by: step}
nodes:
  - {id: step, type: CODE, owner: code, reads: [n], writes: [n], body: "n + 1"}
  - {id: gate, type: ROUTE, owner: code, reads: [n]}
  - {id: done, type: TERMINAL, reads: [n]}
edges:
  - {from: step, to: gate}
  - {from: gate, to: step, guard: "n < 300"}
  - {from: gate, to: done, guard: otherwise}
"#;

#[test]
fn a_pure_loop_whose_counter_changes_runs_to_its_end() {
    let out = Bench::new().run(COUNT, "go", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["n"], 300);
    // The same loop with the increment gone is caught on its first revisit.
    let out = Bench::new().run(&COUNT.replace("body: \"n + 1\"", "body: \"n\""), "go", &[]);
    assert_eq!(
        out.fault.as_ref().map(|f| f.kind),
        Some(FaultKind::Stalled),
        "{out:?}"
    );
    assert!(out.steps <= 3, "{}", out.steps);
}

#[test]
fn a_polling_loop_through_a_sense_is_never_stalled() {
    // The world may answer differently next time: only the budget bounds it.
    let text = r#"---
name: poll
description: Poll until ready.
---
tools:
  probe: {sig: "(task) -> bool", surface: SENSE, serves: [look]}
walker:
  name: Poll
  carries:
    task: {type: str, role: input}
    ready: {type: bool, produced_by: look}
nodes:
  - {id: look, type: SENSE, owner: code, reads: [task], writes: [ready]}
  - {id: gate, type: ROUTE, owner: code, reads: [ready]}
  - {id: done, type: TERMINAL, reads: [ready]}
edges:
  - {from: look, to: gate}
  - {from: gate, to: done, guard: "ready"}
  - {from: gate, to: look, guard: otherwise}
"#;
    let mut bench = Bench::new().with("probe", tool(|_, _| Ok(Value::Bool(false))));
    bench.max_steps = 40;
    let out = bench.run(text, "go", &[]);
    assert_eq!(
        out.fault.as_ref().map(|f| f.kind),
        Some(FaultKind::BudgetExhausted),
        "{out:?}"
    );
}

#[test]
fn a_repair_slot_that_keeps_failing_the_same_way_stops_and_one_that_answers_is_not_stalled() {
    let text = r#"---
name: repair
description: Repair a draft until it checks.
---
walker:
  name: Repair
  carries:
    task: {type: str, role: input}
    draft: {type: str, produced_by: rewrite}
    ok: {type: bool, produced_by: judge}
nodes:
  - {id: judge, type: CODE, owner: code, reads: [draft], writes: [ok], body: "draft != ''"}
  - {id: gate, type: ROUTE, owner: code, reads: [ok, draft]}
  - {id: rewrite, type: GEN-RAW, reads: [task, draft], writes: [draft], doc: "Rewrite the draft."}
  - {id: done, type: TERMINAL, reads: [draft]}
edges:
  - {from: judge, to: gate}
  - {from: gate, to: done, guard: "ok and draft != ''"}
  - {from: gate, to: rewrite, guard: otherwise}
  - {from: rewrite, to: judge}
"#;
    let run = |responses: serde_json::Value| {
        let mut bench = Bench::new();
        bench.max_steps = 200;
        let path = bench.out.path().join("responses.json");
        bench.model = Some(Arc::new(
            ScriptedModel::from_json(&path, responses).unwrap(),
        ));
        bench.run(text, "go", &[])
    };
    // No answer left: the slot fails. No guard tests its error value (the gate's guard only
    // reads `draft`, a `str` that cannot hold it), so the failure is unrouted and the run
    // stops there at once (§10.2), before it could go round failing the same way.
    let out = run(serde_json::json!({"rewrite": []}));
    assert_eq!(out.status, Status::Error, "{out:?}");
    assert!(out.fault.is_none(), "{out:?}");
    assert!(out.steps < 20, "{}", out.steps);
    assert!(
        out.deviations
            .iter()
            .any(|d| d.substituted.contains("the run stopped at `rewrite`")),
        "{out:?}"
    );
    // A slot that answers is no pure step: the model may answer differently next time.
    let out = run(serde_json::json!({"rewrite": ["a new draft"]}));
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["draft"], "a new draft");
}

/// A failing slot whose failure *is* routed — its error value lands in an `outcome` carry and
/// the gate's guard tests that carry's `ok` — goes round the retry edge; when every visit fails
/// the same way nothing changes, and the cycle is stalled at once rather than spending the step
/// budget.
#[test]
fn a_routed_failing_slot_that_fails_the_same_way_each_time_is_stalled() {
    let text = r#"---
name: retry_slot
description: Ask for an attempt until one succeeds.
---
walker:
  name: RetrySlot
  carries:
    task: {type: str, role: input}
    attempt: {type: outcome, produced_by: ask}
nodes:
  - {id: ask, type: GEN-FILL, reads: [task], writes: [attempt], doc: "Try the task."}
  - {id: gate, type: ROUTE, owner: code, reads: [attempt]}
  - {id: done, type: TERMINAL, reads: [attempt]}
edges:
  - {from: ask, to: gate}
  - {from: gate, to: done, guard: "attempt.ok"}
  - {from: gate, to: ask, guard: otherwise}
"#;
    let mut bench = Bench::new();
    bench.max_steps = 200;
    let path = bench.out.path().join("responses.json");
    // No answer at all: each visit of `ask` fails with the same error value.
    bench.model = Some(Arc::new(
        ScriptedModel::from_json(&path, serde_json::json!({"ask": []})).unwrap(),
    ));
    let out = bench.run(text, "go", &[]);
    assert_eq!(
        out.fault.as_ref().map(|f| f.kind),
        Some(FaultKind::Stalled),
        "the failure is routed, so the run goes round until the stall is seen: {out:?}"
    );
    assert!(
        out.steps < 10,
        "stalled at once, not at the budget: {}",
        out.steps
    );
    let message = &out.fault.as_ref().unwrap().message;
    assert!(
        message.contains("`ask`") && message.contains("`gate`"),
        "{message}"
    );
    assert!(message.contains("attempt"), "{message}");
}
