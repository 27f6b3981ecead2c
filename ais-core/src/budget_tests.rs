//! Budgets of small programs whose worst case is known by hand.

use super::*;

fn budget_of(text: &str) -> Budget {
    let doc = crate::agir::read(text).expect("the test program reads");
    let plan = crate::plan::lower(&doc.program).expect("the test program lowers");
    budget(
        &doc.program,
        &plan,
        &BudgetLimits::default(),
        0,
        &mut |t, _| Err(format!("`{t}` is not available in this test")),
    )
}

const HEAD: &str = "---\nname: t\ndescription: A test program.\n---\n";

/// write → judge → again (LOOP, cap 3) ⇄ judge; again → done.
const LOOPING: &str = r#"walker:
  name: T
  carries:
    task: {type: str, role: input}
    draft: {type: str, produced_by: write}
    ok: {type: bool, produced_by: judge}
    n: {type: int, produced_by: again}
nodes:
  - {id: write, type: GEN-RAW, owner: model, reads: [task], writes: [draft], doc: "Write."}
  - {id: judge, type: CODE, owner: code, reads: [draft], writes: [ok], body: "len(draft) > 100000"}
  - {id: again, type: LOOP, owner: model, reads: [draft], writes: [draft], verdict: ok, cap: 3, counter: n, doc: "Improve."}
  - {id: done, type: TERMINAL, owner: code, reads: [draft]}
edges:
  - {from: write, to: judge}
  - {from: judge, to: again}
  - {from: again, to: judge}
  - {from: again, to: done}
"#;

#[test]
fn a_loop_run_to_its_cap_is_counted_exactly() {
    let b = budget_of(&format!("{HEAD}{LOOPING}"));
    assert!(b.unbounded.is_empty(), "{:#?}", b.unbounded);
    // write 1, judge 1 + 3, again 1 + 3 (3 of them work), done 1.
    assert_eq!(b.steps, Some(10));
    assert_eq!(b.slot_calls, Some(4));
    assert_eq!(b.model_exchanges, Some(4 * 3));
    assert_eq!(b.completion_tokens, Some(12 * 4096));
    assert_eq!(b.tool_calls, Some(0));
    let visits: Vec<(String, Option<u64>)> = b.visits.clone();
    assert_eq!(visits[2], ("again".to_owned(), Some(4)));
    assert_eq!(
        b.loops,
        vec![LoopBudget {
            instruction: "again".into(),
            cap: 3,
            imposed: false,
            iterations: Some(3)
        }]
    );
}

#[test]
fn a_counter_written_elsewhere_bounds_nothing() {
    let text = LOOPING.replace(
        "  - {id: done,",
        "  - {id: reset, type: CODE, owner: code, reads: [n], writes: [n], body: \"0\"}\n  - {id: done,",
    );
    let text = text.replace(
        "{from: judge, to: again}",
        "{from: judge, to: reset}\n  - {from: reset, to: again}",
    );
    let b = budget_of(&format!("{HEAD}{text}"));
    assert_eq!(b.steps, None);
    let u = &b.unbounded[0];
    assert_eq!(u.kind, "counter");
    assert_eq!(u.instructions, ["again", "reset"]);
    assert!(
        u.message.contains("also written by `reset`"),
        "{}",
        u.message
    );
}

#[test]
fn a_route_back_edge_is_unbounded_and_named() {
    let text = r#"walker:
  name: T
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
    let b = budget_of(&format!("{HEAD}{text}"));
    assert_eq!(b.steps, None);
    assert_eq!(b.slot_calls, Some(0), "no slot in the cycle: none spent");
    let u = &b.unbounded[0];
    assert_eq!(u.kind, "cycle");
    assert_eq!(u.instructions, ["count", "gate"]);
    assert!(
        u.message.contains("`count` -> `gate` -> `count`"),
        "{}",
        u.message
    );
    assert!(u.help.contains("`gate` -> `count`"), "{}", u.help);
    assert_eq!(b.visits[2], ("done".to_owned(), Some(1)));
}

#[test]
fn sequential_loops_add_and_a_literal_fan_out_multiplies() {
    let text = r#"walker:
  name: T
  carries:
    task: {type: str, role: input}
    ok: {type: bool, produced_by: judge}
    notes: {type: "list[str]", produced_by: fan}
concurrency: {spawn: none, reason: "one fan-out below"}
nodes:
  - {id: judge, type: CODE, owner: code, reads: [task], writes: [ok], body: "False"}
  - {id: first, type: LOOP, owner: code, reads: [task], verdict: ok, cap: 2}
  - {id: second, type: LOOP, owner: code, reads: [task], verdict: ok}
  - {id: fan, type: SPAWN, owner: model, reads: [task], writes: [notes], doc: "Note.", concurrency: {isolation: shared_read, spawn: [a, b, c]}}
  - {id: done, type: TERMINAL, owner: code, reads: [notes]}
edges:
  - {from: judge, to: first}
  - {from: first, to: first}
  - {from: first, to: second}
  - {from: second, to: second}
  - {from: second, to: fan}
  - {from: fan, to: done}
"#;
    let b = budget_of(&format!("{HEAD}{text}"));
    assert!(b.unbounded.is_empty(), "{:#?}", b.unbounded);
    // judge 1, first 1 + 2, second 1 + 10 (imposed cap), fan 1, done 1.
    assert_eq!(b.steps, Some(1 + 3 + 11 + 1 + 1));
    assert_eq!(b.slot_calls, Some(3));
    assert!(b.loops[1].imposed);
}
