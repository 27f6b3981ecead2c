//! The faults of §10.1 and the constructs the machine refuses: each aborts the run naming the
//! instruction and its source line, never a silent skip.

use crate::common;

use ais_core::Value;
use ais_rt::{FaultKind, Status};
use common::{Bench, tool};

#[test]
fn a_loop_that_never_converges_exhausts_the_step_budget() {
    let text = r#"---
name: spin
description: A clarify loop with no converging guard.
---
walker:
  name: Spin
  carries:
    task: {type: str, role: input}
    notes: {type: str, produced_by: assess}
nodes:
  - {id: assess, type: CODE, owner: code, reads: [task, notes], writes: [notes], body: "notes + '.'"}
  - {id: loop_route, type: ROUTE, owner: code, reads: [notes]}
  - {id: done, type: TERMINAL, reads: [notes]}
edges:
  - {from: assess, to: loop_route}
  - {from: loop_route, to: assess, guard: "notes != 'never'"}
  - {from: loop_route, to: done, guard: "notes == 'never'"}
"#;
    let mut bench = Bench::new();
    bench.max_steps = 25;
    let out = bench.run(text, "go", &[]);
    assert_eq!(out.status, Status::Fault, "{out:?}");
    assert_eq!(out.steps, 25);
    let f = out.fault.unwrap();
    assert_eq!(f.kind, FaultKind::BudgetExhausted);
    assert!(f.message.contains("step budget exhausted"), "{}", f.message);
    assert!(f.line.is_some());
    assert!(out.report.is_empty(), "a fault never reports success");
}

#[test]
fn a_read_path_that_resolves_empty_is_an_unresolvable_operand() {
    let text = r#"---
name: t
description: Read a file named by the task.
---
walker:
  name: T
  carries:
    task: {type: str, role: input}
    rows: {type: str, produced_by: load}
tools:
  load_csv: {sig: "(path) -> str", surface: SENSE, serves: [load]}
nodes:
  - {id: load, type: SENSE, owner: code, reads: [task], writes: [rows]}
  - {id: done, type: TERMINAL, reads: [rows]}
edges:
  - {from: load, to: done}
"#;
    let load = tool(|a, _| Ok(Value::from(format!("read {}", common::arg(a, "path")))));
    let bench = Bench::new().with("load_csv", load.clone());
    let out = bench.run(text, "summarize the numbers", &[]);
    assert_eq!(out.status, Status::Fault, "{out:?}");
    let f = out.fault.unwrap();
    assert_eq!(
        (f.kind, f.instruction.as_str(), f.line),
        (FaultKind::UnresolvableOperand, "load", Some(13))
    );
    assert_eq!(
        load.calls.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the tool never ran"
    );
    // With a file in the task, the read side binds it (§7.3).
    let out = bench.run(text, "clean data.csv and save as out.csv", &[]);
    assert_eq!(out.report["rows"], "read data.csv");
}

#[test]
fn an_unknown_opcode_is_never_skipped() {
    let text = r#"---
name: t
description: An opcode from the future.
---
walker:
  name: T
  carries:
    task: {type: str, role: input}
nodes:
  - {id: dream, type: DREAM, owner: code, reads: [task]}
  - {id: done, type: TERMINAL}
edges:
  - {from: dream, to: done}
"#;
    let out = Bench::new().run(text, "go", &[]);
    assert_eq!(out.status, Status::Fault, "{out:?}");
    let f = out.fault.unwrap();
    assert_eq!(
        (f.kind, f.instruction.as_str(), f.line),
        (FaultKind::Unsupported, "dream", Some(10))
    );
    assert!(f.message.contains("DREAM"));
}

#[test]
fn a_hollow_instruction_faults_when_reached() {
    let text = r#"---
name: t
description: A check with nothing behind it.
---
walker:
  name: T
  carries:
    task: {type: str, role: input}
    ok: {type: bool, produced_by: verify}
tools:
  verify_it: {sig: "(task) -> bool", surface: SENSE, serves: [verify]}
nodes:
  - {id: verify, type: SENSE, owner: code, reads: [task], writes: [ok]}
  - {id: done, type: TERMINAL, reads: [ok]}
edges:
  - {from: verify, to: done}
"#;
    let out = Bench::new().run(text, "go", &[]);
    assert_eq!(out.status, Status::Fault, "{out:?}");
    let f = out.fault.unwrap();
    assert_eq!(
        (f.kind, f.instruction.as_str()),
        (FaultKind::Unsupported, "verify")
    );
    assert!(f.message.contains("hollow"), "{}", f.message);
    assert!(
        out.findings.iter().any(|x| x.id == ais_core::CheckId::X1),
        "degraded: the findings come with the report"
    );
}

#[test]
fn a_failed_program_does_not_run() {
    let text = r#"---
name: t
description: A guard over nothing.
---
walker:
  name: T
  carries:
    task: {type: str, role: input}
nodes:
  - {id: route, type: ROUTE, owner: code, reads: [task]}
  - {id: done, type: TERMINAL}
edges:
  - {from: route, to: done, guard: "finished"}
"#;
    let out = Bench::new().run(text, "go", &[]);
    assert_eq!(out.status, Status::Fault, "{out:?}");
    assert_eq!(out.steps, 0);
    let f = out.fault.unwrap();
    assert_eq!(f.kind, FaultKind::NotRunnable);
    assert!(f.message.contains("failed"), "{}", f.message);
    assert!(out.findings.iter().any(|x| x.id == ais_core::CheckId::X5));
}

#[test]
fn a_program_with_slots_and_no_model_stops_before_the_first_step() {
    let text = r#"---
name: t
description: Draft something.
---
walker:
  name: T
  carries:
    task: {type: str, role: input}
    n: {type: int, produced_by: count}
    draft: {type: str, produced_by: write}
nodes:
  - {id: count, type: CODE, owner: code, reads: [task], writes: [n], body: "len(task)"}
  - {id: write, type: GEN-RAW, reads: [task], writes: [draft], doc: "Write a draft."}
  - {id: done, type: TERMINAL, reads: [draft]}
edges:
  - {from: count, to: write}
  - {from: write, to: done}
"#;
    let out = Bench::new().run(text, "go", &[]);
    assert_eq!(out.status, Status::Fault, "{out:?}");
    assert_eq!(out.steps, 0);
    let f = out.fault.unwrap();
    assert_eq!(
        (f.kind, f.instruction.as_str()),
        (FaultKind::NotRunnable, "write")
    );
    assert!(f.message.contains("--model"), "{}", f.message);
}
