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
    let mut tools = ais_rt::tools::ToolRegistry::new();
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
