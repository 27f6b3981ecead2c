//! `ask_user` answers in the journal: the human's answer is journaled as the call's result, a
//! pipeline resumed at its `ask_user` call keeps its journal keys (the tool before it is not
//! confused with the answer), and a replay gives every answer back — two asks, in order —
//! without running the tool before the ask again.

use crate::common;

use ais_core::Value;
use ais_rt::journal::sqlite::{Durability, SqliteStore};
use ais_rt::journal::{EffectKind, InFlight};
use ais_rt::journal::{Recording, ToolReplay};
use ais_rt::{Inputs, Status};
use common::{Bench, arg, block_on, program, tool};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// A pipeline that logs the visit, then asks who visits; a second step asks to confirm.
const ASKS: &str = r#"---
name: asks
description: Log a visit, ask who is visiting, ask to confirm.
---
walker:
  name: Asks
  carries:
    task: {type: str, role: input}
    question: {type: str, produced_by: frame}
    visitor: {type: str, produced_by: ask}
    line: {type: str, produced_by: greet}
    sure: {type: str, produced_by: confirm}
tools:
  log_visit: {sig: "(question) -> str", surface: ACT, serves: [ask]}
  ask_user: {sig: "(prompt) -> str", surface: SENSE, serves: [ask, confirm]}
nodes:
  - {id: frame, type: CODE, owner: code, reads: [task], writes: [question], body: "'Who is ' + task + '?'"}
  - {id: ask, type: SENSE, owner: code, reads: [question], writes: [visitor]}
  - {id: greet, type: CODE, owner: code, reads: [visitor], writes: [line], body: "'hello ' + visitor"}
  - {id: confirm, type: SENSE, owner: code, reads: [line], writes: [sure]}
  - {id: done, type: TERMINAL, reads: [line, sure]}
edges:
  - {from: frame, to: ask}
  - {from: ask, to: greet}
  - {from: greet, to: confirm}
  - {from: confirm, to: done}
"#;

#[test]
fn ask_user_answers_are_journaled_and_a_replay_gives_them_back() {
    let log = tool(|a, _| Ok(Value::from(format!("logged {}", arg(a, "question")))));
    let bench = Bench::new().with("log_visit", log.clone());
    let doc = program(ASKS);
    let rt = bench.runtime();
    let prep = rt.prepare(&doc.program, Some(&doc.source_map));
    let db = bench.out.path().join("runs.db");
    let store = SqliteStore::open(&db, Durability::Normal).unwrap();
    let inputs = Inputs::task("the reviewer");
    let start = rt.run_start("a1", &prep, &inputs, serde_json::Value::Null);
    let journal = Arc::new(store.begin(&start).unwrap());
    let out = block_on(rt.run_journaled(&prep, inputs, journal));
    assert_eq!(out.status, Status::InputRequired, "{out:?}");
    assert_eq!(out.pause.as_ref().unwrap().instruction, "ask");

    for (answer, next) in [("Ada", Status::InputRequired), ("yes", Status::Ok)] {
        let (_, start, journal) = store.resume("a1", InFlight::Stop).unwrap();
        let out =
            block_on(rt.resume_journaled(&prep, Arc::new(journal), &start, Some(answer.into())));
        assert_eq!(out.status, next, "after {answer:?}: {out:?}");
        if next == Status::Ok {
            assert_eq!(out.report["line"], "hello Ada");
            assert_eq!(out.report["sure"], "yes");
        }
    }
    assert_eq!(log.calls.load(Ordering::SeqCst), 1, "logged once");

    // Each answer is the result of its `ask_user` call, keyed after the tool before it.
    let effects = store.effects("a1").unwrap();
    let asked: Vec<_> = effects
        .iter()
        .filter(|r| r.effect.kind == EffectKind::Tool)
        .map(|r| {
            (
                r.effect.instruction.as_str(),
                r.effect.name.as_str(),
                r.effect.key.index,
                r.result.clone().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        asked,
        [
            (
                "ask",
                "log_visit",
                0,
                serde_json::json!({"ok": "logged Who is the reviewer?"})
            ),
            ("ask", "ask_user", 1, serde_json::json!({"ok": "Ada"})),
            ("confirm", "ask_user", 0, serde_json::json!({"ok": "yes"})),
        ]
    );

    // The replay answers both asks from the journal, in order, and logs nothing.
    let recording = Recording::from_sqlite(&store, "a1").unwrap();
    let replay = block_on(rt.replay(&prep, &recording, ToolReplay::Journal)).unwrap();
    assert!(
        replay.matches(),
        "misses {:?}, unasked {:?}, differences {:?}",
        replay.misses,
        replay.unasked,
        replay.differences
    );
    assert_eq!(replay.outcome.status, Status::Ok);
    assert_eq!(replay.outcome.report["sure"], "yes");
    assert_eq!(
        log.calls.load(Ordering::SeqCst),
        1,
        "the replay logged nothing"
    );

    // A replay of a program whose prompt changed misses the ask there, and names it.
    let changed = program(&ASKS.replace("'Who is '", "'Who are '"));
    let prep2 = rt.prepare(&changed.program, Some(&changed.source_map));
    let replay = block_on(rt.replay(&prep2, &recording, ToolReplay::Journal)).unwrap();
    assert!(!replay.matches());
    let missed: Vec<_> = replay
        .misses
        .iter()
        .map(|m| (m.effect.instruction.as_str(), m.effect.name.as_str()))
        .collect();
    assert_eq!(missed, [("ask", "log_visit"), ("ask", "ask_user")]);
}
