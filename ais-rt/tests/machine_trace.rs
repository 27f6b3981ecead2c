//! The trace (§10.5): one event per step — the instruction, its unit, the bound operands, the
//! values written, the tool — through the runtime's `TraceSink`.

use crate::common;

use ais_core::Value;
use ais_rt::trace::{StepEvent, TraceSink};
use ais_rt::{Inputs, Runtime, Status};
use common::{arg, block_on, program, tool};
use std::sync::{Arc, Mutex};

#[derive(Default)]
struct Collect(Mutex<Vec<StepEvent>>);

impl TraceSink for Collect {
    fn event(&self, event: &StepEvent) {
        self.0.lock().unwrap().push(event.clone());
    }
}

#[test]
fn every_step_emits_one_event_with_its_operands_and_writes() {
    let doc = program(
        r#"---
name: t
description: Shout, then count.
---
walker:
  name: T
  carries:
    task: {type: str, role: input}
    loud: {type: str, produced_by: shout}
    n: {type: int, produced_by: count}
tools:
  upper: {sig: "(text) -> str", surface: SENSE, serves: [shout]}
nodes:
  - {id: shout, type: SENSE, owner: code, reads: [task], writes: [loud]}
  - {id: count, type: CODE, owner: code, reads: [loud], writes: [n], body: "len(loud)"}
  - {id: done, type: TERMINAL, reads: [n]}
edges:
  - {from: shout, to: count}
  - {from: count, to: done}
"#,
    );
    let mut tools = ais_rt::ToolRegistry::new();
    tools.register(
        "upper",
        tool(|a, _| Ok(Value::from(arg(a, "text").to_uppercase()))),
    );
    let sink = Arc::new(Collect::default());
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::builder()
        .tools(tools)
        .out_dir(dir.path().into())
        .trace(sink.clone())
        .build();
    let out = block_on(rt.run(&doc.program, Some(&doc.source_map), Inputs::task("hey")));
    assert_eq!(out.status, Status::Ok, "{out:?}");
    let events = sink.0.lock().unwrap();
    assert_eq!(events.len() as u64, out.steps);
    let ids: Vec<&str> = events.iter().map(|e| e.instruction.as_str()).collect();
    assert_eq!(ids, ["shout", "count", "done"]);
    assert_eq!(events.iter().map(|e| e.step).collect::<Vec<_>>(), [1, 2, 3]);
    let shout = &events[0];
    assert_eq!(
        (shout.unit, shout.opcode.as_str(), shout.tool.as_deref()),
        ("code", "SENSE", Some("upper"))
    );
    assert_eq!(
        shout.operands,
        [("text".to_owned(), serde_json::json!("hey"))]
    );
    assert_eq!(
        shout.written,
        [("loud".to_owned(), serde_json::json!("HEY"))]
    );
    assert_eq!(
        events[1].operands,
        [("loud".to_owned(), serde_json::json!("HEY"))]
    );
    assert_eq!(events[1].written, [("n".to_owned(), serde_json::json!(3))]);
    assert!(events.iter().all(|e| e.error.is_none() && e.slot.is_none()));
}

/// Picks a topic, CALLs `Inner` with it, wraps what came back.
const OUTER: &str = r#"walker:
  name: Outer
  carries:
    task: {type: str, role: input}
    topic: {type: str, produced_by: pick}
    got: {type: str, produced_by: call}
    final: {type: str, produced_by: wrap}
nodes:
  - {id: pick, type: CODE, owner: code, reads: [task], writes: [topic], body: "'topic of ' + task"}
  - {id: call, type: CALL, owner: model, reads: [topic], writes: [got], doc: "Look it up.", target: Inner}
  - {id: wrap, type: CODE, owner: code, reads: [got], writes: [final], body: "'done: ' + got"}
  - {id: done, type: TERMINAL, reads: [final]}
edges:
  - {from: pick, to: call}
  - {from: call, to: wrap}
  - {from: wrap, to: done}
"#;

/// Fans out over two items (a worker slot each), then CALLs `Leaf`.
const INNER: &str = r#"walker:
  name: Inner
  carries:
    task: {type: str, role: input}
    topic: {type: str, role: input}
    items: {type: "list[str]", produced_by: split}
    answers: {type: "list[str]", produced_by: fan}
    got: {type: str, produced_by: leaf}
nodes:
  - {id: split, type: CODE, owner: code, reads: [topic], writes: [items], body: "[topic, topic + '!']"}
  - {id: fan, type: SPAWN, owner: code, reads: [items], writes: [answers], doc: "Answer this item.", concurrency: {isolation: shared_read}}
  - {id: leaf, type: CALL, owner: model, reads: [answers], writes: [got], doc: "Join them.", target: Leaf}
  - {id: fin, type: TERMINAL, reads: [got]}
edges:
  - {from: split, to: fan}
  - {from: fan, to: leaf}
  - {from: leaf, to: fin}
"#;

const LEAF: &str = r#"walker:
  name: Leaf
  carries:
    task: {type: str, role: input}
    answers: {type: "list[str]", role: input}
    got: {type: str, produced_by: join}
nodes:
  - {id: join, type: CODE, owner: code, reads: [answers], writes: [got], body: "' + '.join(answers)"}
  - {id: end, type: TERMINAL, reads: [got]}
edges:
  - {from: join, to: end}
"#;

#[test]
fn a_called_programs_steps_are_numbered_as_sub_steps_of_its_call() {
    let dir = tempfile::tempdir().unwrap();
    let model = ais_rt::llm::ScriptedModel::from_json(
        &dir.path().join("r.json"),
        serde_json::json!({"fan[0]": ["one"], "fan[1]": ["two"]}),
    )
    .unwrap();
    let sink = Arc::new(Collect::default());
    let rt = Runtime::builder()
        .model(Arc::new(model))
        .program("Inner", program(INNER).program)
        .program("Leaf", program(LEAF).program)
        .out_dir(dir.path().into())
        .trace(sink.clone())
        .build();
    let doc = program(OUTER);
    let out = block_on(rt.run(&doc.program, None, Inputs::task("the fair")));
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["final"], "done: one + two");
    let events = sink.0.lock().unwrap();
    let mut shown: Vec<(String, &str)> = events
        .iter()
        .map(|e| (e.label(), e.instruction.as_str()))
        .collect();
    // The siblings finish in any order.
    shown[2..4].sort();
    assert_eq!(
        shown,
        [
            ("1", "pick"),
            ("2.1", "split"),
            ("2.2.1", "fan"),
            ("2.2.2", "fan"),
            ("2.2", "fan"),
            ("2.3.1", "join"),
            ("2.3.2", "end"),
            ("2.3", "leaf"),
            ("2.4", "fin"),
            ("2", "call"),
            ("3", "wrap"),
            ("4", "done"),
        ]
        .map(|(l, i)| (l.to_owned(), i))
    );
    // Each names its CALL's step in `step` and its place under it in `sub`; the run's own
    // steps carry no `sub` in the trace's JSON.
    let json = |e: &StepEvent| serde_json::to_value(e).unwrap();
    let join = json(&events[5]);
    assert_eq!(
        (&join["step"], &join["sub"]),
        (&2.into(), &serde_json::json!([3, 1]))
    );
    let second = events.iter().find(|e| e.sibling == Some(1)).unwrap();
    assert_eq!(
        (&json(second)["step"], &json(second)["sub"]),
        (&2.into(), &serde_json::json!([2]))
    );
    assert!(
        json(&events[0]).get("sub").is_none(),
        "{}",
        json(&events[0])
    );
    assert!(
        events
            .iter()
            .filter(|e| e.is_own())
            .map(|e| e.step)
            .eq(1..=4)
    );
}
