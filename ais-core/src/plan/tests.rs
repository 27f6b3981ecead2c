//! Lowering real AG-IR programs and driving the plan the way an interpreter does.

use super::*;
use crate::bind::BindSource;
use crate::diag::CheckId;
use crate::value::Value;
use indexmap::IndexMap;

fn lowered(text: &str) -> Plan {
    let doc = crate::agir::read(text).expect("the test program reads");
    match lower(&doc.program) {
        Ok(plan) => plan,
        Err(f) => panic!("does not lower: {f:#?}"),
    }
}

const REVIEW: &str = r#"---
name: review
description: Draft, check, loop, fan out and route.
---
walker:
  name: Review
  carries:
    task: {type: str, role: input}
    draft: {type: str, produced_by: write}
    plan_ok: {type: bool, produced_by: verify}
    round: {type: int, produced_by: improve}
    parts: {type: "list[str]", produced_by: split}
    notes: {type: str, produced_by: fan}
    report_path: {type: path, role: input}
tools:
  - name: verify
    sig: "(draft) -> bool"
    surface: SENSE
    body: |
      def verify(draft):
          return len(draft) > 3
nodes:
  - id: write
    type: GEN-RAW
    reads: [task]
    writes: [draft]
    doc: "Write a draft."
    autonomy: {tools: [read_file]}
  - id: verify
    type: SENSE
    owner: code
    reads: [draft]
    writes: [plan_ok]
  - id: improve
    type: LOOP
    owner: model
    reads: [draft]
    writes: [draft]
    verdict: plan_ok
    cap: 3
    counter: round
    doc: "Improve the draft."
  - id: split
    type: CODE
    reads: [draft]
    writes: [parts]
    body: 'draft.split(",")'
  - id: fan
    type: SPAWN
    reads: [parts]
    writes: [notes]
    doc: "Note on each part."
    concurrency: {isolation: private_write, max_parallel: 2}
  - id: save
    type: ACT
    owner: code
    tool: write_file
    reads: [notes, report_path]
    writes: [unknown_sink]
  - id: gate
    type: ROUTE
    owner: code
    reads: [plan_ok]
  - id: done
    type: TERMINAL
    reads: [notes]
  - id: retry
    type: TERMINAL
    reads: [draft]
edges:
  - {from: write, to: verify}
  - {from: verify, to: improve}
  - {from: improve, to: write}
  - {from: improve, to: split}
  - {from: split, to: fan}
  - {from: fan, to: save}
  - {from: save, to: gate}
  - {from: gate, to: done, guard: "plan_ok == true"}
  - {from: gate, to: retry, guard: otherwise}
"#;

#[test]
fn the_plan_is_send_and_sync() {
    fn shared<T: Send + Sync + 'static>() {}
    shared::<Plan>();
    shared::<Step>();
    shared::<Executor>();
}

#[test]
fn steps_resolve_carries_to_indices_and_keep_undeclared_ones_by_name() {
    let plan = lowered(REVIEW);
    assert_eq!(plan.entry, Some(0));
    assert_eq!(plan.carries.len(), 7);
    assert!(plan.carries[0].input && plan.carries[0].name == "task");
    let save = &plan.steps[5];
    assert_eq!(save.reads[1].index, Some(6));
    assert_eq!(
        save.writes[0],
        CarryRef {
            name: "unknown_sink".into(),
            index: None
        }
    );
}

#[test]
fn a_code_body_and_a_guard_are_compiled_once_and_run() {
    let plan = lowered(REVIEW);
    let Executor::Inline(body) = &plan.steps[3].executor else {
        panic!("a compiled body: {:?}", plan.steps[3].executor);
    };
    assert_eq!(body.text, r#"draft.split(",")"#);
    let mut carries: IndexMap<String, Value> = IndexMap::new();
    carries.insert("draft".into(), Value::from("a,b"));
    assert_eq!(
        body.compiled.eval(&carries),
        Ok(Value::List(vec![Value::from("a"), Value::from("b")]))
    );

    let gate = &plan.steps[6];
    assert_eq!(gate.guarded.len(), 1);
    assert_eq!(gate.default.len(), 1);
    assert_eq!(
        gate.guarded[0].guard.as_ref().unwrap().text,
        "plan_ok == true"
    );
    carries.insert("plan_ok".into(), Value::Bool(false));
    // One guarded edge and a default: the guard decides.
    let Ok(Next::Take(t)) = gate.next(&carries) else {
        panic!("a transition")
    };
    assert_eq!(plan.steps[t.to].id, "retry");
    carries.insert("plan_ok".into(), Value::Bool(true));
    let Ok(Next::Take(t)) = gate.next(&carries) else {
        panic!("a transition")
    };
    assert_eq!(plan.steps[t.to].id, "done");
    assert_eq!(plan.steps[7].next(&carries), Ok(Next::Halt));
}

#[test]
fn a_loop_carries_its_verdict_cap_counter_and_splits_back_from_advance() {
    let plan = lowered(REVIEW);
    let improve = &plan.steps[2];
    let control = improve.looping.as_ref().expect("LOOP control");
    assert_eq!(control.verdict.as_ref().unwrap().index, Some(2));
    assert_eq!(control.cap, Some(3));
    assert_eq!(control.counter.as_ref().unwrap().name, "round");
    assert_eq!(control.back, [2]);
    assert_eq!(control.advance, [3]);
    assert!(matches!(improve.executor, Executor::Slot(_)));
    assert_eq!(improve.unit, Unit::Model);
    assert!(plan.steps[0].looping.is_none());
}

#[test]
fn a_spawn_fans_out_over_its_list_read_with_its_isolation() {
    let plan = lowered(REVIEW);
    let Executor::Spawn(spawn) = &plan.steps[4].executor else {
        panic!("a spawn: {:?}", plan.steps[4].executor);
    };
    assert_eq!(
        spawn.source,
        FanOut::Carry(CarryRef {
            name: "parts".into(),
            index: Some(4)
        })
    );
    assert_eq!(spawn.isolation, Isolation::PrivateWrite);
    assert_eq!(spawn.max_parallel, Some(2));
}

#[test]
fn tools_are_bound_with_their_kind_signature_and_surface() {
    let plan = lowered(REVIEW);
    let Executor::Tools(calls) = &plan.steps[1].executor else {
        panic!("tools: {:?}", plan.steps[1].executor);
    };
    assert_eq!(calls[0].tool, "verify");
    assert_eq!(calls[0].index, Some(0));
    assert_eq!(calls[0].kind, ToolKind::Body("python".into()));
    assert_eq!(calls[0].returns, Some(Type::Bool));
    assert_eq!(calls[0].surface, Some(ToolSurface::Sense));
    assert_eq!(
        calls[0].bindings[0].source,
        BindSource::Carry("draft".into())
    );

    // The built-in write_file: its path parameter takes the path carry, its content the text.
    let save = &plan.steps[5];
    let Executor::Tools(calls) = &save.executor else {
        panic!("tools: {:?}", save.executor);
    };
    assert_eq!((calls[0].index, &calls[0].kind), (None, &ToolKind::Builtin));
    assert_eq!(calls[0].surface, Some(ToolSurface::ActArtifact));
    let by_param: Vec<(&str, Option<&str>)> = calls[0]
        .bindings
        .iter()
        .map(|b| (b.param.as_str(), b.carry()))
        .collect();
    assert_eq!(
        by_param,
        [("path", Some("report_path")), ("content", Some("notes"))]
    );
    assert_eq!(save.access, crate::bind::Access::Write);

    let Executor::Slot(slot) = &plan.steps[0].executor else {
        panic!("a slot: {:?}", plan.steps[0].executor);
    };
    assert_eq!(slot.tools.len(), 1);
    assert_eq!(slot.tools[0].name, "read_file");
    assert_eq!(slot.tools[0].signature.param_names(), ["path"]);
}

#[test]
fn several_guards_and_no_default_dead_end_when_none_holds() {
    let text = REVIEW.replace(
        "{from: gate, to: retry, guard: otherwise}",
        "{from: gate, to: retry, guard: \"plan_ok == false\"}",
    );
    let plan = lowered(&text);
    let gate = &plan.steps[6];
    assert_eq!(gate.guarded.len(), 2);
    let carries: IndexMap<String, Value> = IndexMap::new();
    // `plan_ok` unset reads as null: neither guard holds.
    assert_eq!(gate.next(&carries), Ok(Next::DeadEnd));
}

#[test]
fn a_program_with_a_fatal_finding_has_no_plan() {
    let text = REVIEW.replace("plan_ok == true", "plan_okk == true");
    let doc = crate::agir::read(&text).unwrap();
    let errs = lower(&doc.program).unwrap_err();
    assert!(errs.iter().all(|f| f.id == CheckId::X5), "{errs:#?}");
    assert!(!errs.is_empty());
}
