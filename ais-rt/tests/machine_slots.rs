//! The Stochastic Unit's opcodes through the machine (spec §4.1, §4.2, §4.4): each Mind opcode,
//! an SU SENSE with nothing to compute, an SU ROUTE choosing among its edges, SPAWN worker
//! slots keyed per sibling, a CALL with no target as a nested slot — all against the scripted
//! model, whose answers are validated like any model's.

use crate::common;

use ais_rt::llm::ScriptedModel;
use ais_rt::{FaultKind, Status};
use common::Bench;
use std::sync::Arc;

fn scripted(bench: &mut Bench, json: serde_json::Value) {
    let path = bench.out.path().join("responses.json");
    bench.model = Some(Arc::new(
        ScriptedModel::from_json(&path, json).expect("scripted responses"),
    ));
}

const MIND: &str = r#"---
name: triage
description: Triage a request.
---
types:
  Kind:
    kind: enum
    members: [bug, feature, question]
  Ticket:
    kind: object
    fields:
      title: {type: str, doc: "a short title"}
      priority: {type: int, doc: "1 (urgent) to 4"}
knowledge:
  style:
    resident_on: [draft]
    template: "Write plainly."
walker:
  name: Triage
  carries:
    task: {type: str, role: input}
    kind: {type: Kind, produced_by: classify}
    ticket: {type: Ticket, produced_by: fill}
    reply: {type: str, produced_by: draft}
    final_reply: {type: str, produced_by: edit}
nodes:
  - {id: classify, type: GEN-ENUM, reads: [task], writes: [kind], doc: "Classify the request."}
  - {id: fill, type: GEN-FILL, reads: [task, kind], writes: [ticket], doc: "File a ticket."}
  - {id: draft, type: GEN-RAW, reads: [task, ticket], writes: [reply], doc: "Draft a reply."}
  - {id: edit, type: GEN-EDIT, reads: [reply], writes: [final_reply], doc: "Polish the reply without dropping anything."}
  - {id: done, type: TERMINAL, reads: [final_reply, kind, ticket]}
edges:
  - {from: classify, to: fill}
  - {from: fill, to: draft}
  - {from: draft, to: edit}
  - {from: edit, to: done}
"#;

#[test]
fn the_mind_opcodes_fill_typed_slots_and_the_values_land_in_carries() {
    let mut bench = Bench::new();
    scripted(
        &mut bench,
        serde_json::json!({
            "classify": ["bug"],
            "fill": [{"title": "Crash on save", "priority": 1}],
            "draft": ["```\nThanks, we are on it.\n```"],
            "edit": ["Thanks, we are on it. A fix ships this week."]
        }),
    );
    let out = bench.run(MIND, "the app crashes when I save", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert!(out.scripted);
    assert_eq!(out.usage.slots, 4);
    assert_eq!(out.report["kind"], "bug");
    assert_eq!(out.report["ticket"]["priority"], 1);
    assert_eq!(
        out.report["reply"], "Thanks, we are on it.",
        "GEN-RAW strips the fence"
    );
    assert_eq!(
        out.report["final_reply"],
        "Thanks, we are on it. A fix ships this week."
    );
}

#[test]
fn a_gen_enum_answer_outside_the_members_is_repaired_or_an_error_value() {
    let mut bench = Bench::new();
    scripted(
        &mut bench,
        serde_json::json!({
            "classify": ["complaint", "rant", "nonsense"],
            "fill": [{"title": "x", "priority": 2}],
            "draft": ["ok"],
            "edit": ["ok"]
        }),
    );
    let out = bench.run(MIND, "meh", &[]);
    assert_eq!(
        out.status,
        Status::Error,
        "an unrouted slot failure: {out:?}"
    );
    assert!(
        out.deviations.iter().any(|d| d.subject == "classify"),
        "{:?}",
        out.deviations
    );
    assert!(
        !out.report.contains_key("kind"),
        "the failed slot produced no member: {:?}",
        out.report
    );
}

#[test]
fn a_gen_edit_that_silently_truncates_is_rejected() {
    let mut bench = Bench::new();
    let long = "First point. Second point. Third point, with detail. Fourth point, also detailed.";
    scripted(
        &mut bench,
        serde_json::json!({
            "classify": ["bug"],
            "fill": [{"title": "x", "priority": 2}],
            "draft": [long],
            "edit": ["First.", "First.", "First."]
        }),
    );
    let out = bench.run(MIND, "meh", &[]);
    assert_eq!(out.status, Status::Error, "{out:?}");
    assert!(
        out.deviations.iter().any(|d| d.subject == "edit"),
        "{:?}",
        out.deviations
    );
    assert!(
        !out.report.contains_key("final_reply"),
        "the truncation never landed"
    );
}

/// What the user reads when a GEN-EDIT's only scripted answer is rejected: the run's deviations
/// for `edit`.
fn edit_failure(edit_answer: &str) -> String {
    let mut bench = Bench::new();
    let long = "First point. Second point. Third point, with detail. Fourth point, also detailed.";
    scripted(
        &mut bench,
        serde_json::json!({
            "classify": ["bug"],
            "fill": [{"title": "x", "priority": 2}],
            "draft": [long],
            "edit": [edit_answer]
        }),
    );
    let out = bench.run(MIND, "meh", &[]);
    assert_eq!(out.status, Status::Error, "{out:?}");
    assert!(!out.report.contains_key("final_reply"), "{out:?}");
    let said: Vec<String> = out
        .deviations
        .iter()
        .filter(|d| d.subject == "edit")
        .map(|d| format!("{} {}", d.intended, d.substituted))
        .collect();
    assert!(
        !said.is_empty(),
        "no deviation for `edit`: {:?}",
        out.deviations
    );
    said.join("\n")
}

#[test]
fn a_rejected_gen_edit_says_why_when_the_responses_then_run_out() {
    // Truncated: 6 of the prior's 81 characters kept. The scripted list has no second answer
    // for the repair round, and the error still says why the first was refused.
    let why = edit_failure("First.");
    assert!(
        why.contains("its answer was rejected: the revision keeps 6 of the prior value's 81 characters, less than half"),
        "{why}"
    );
    assert!(why.contains("no response left for `edit`"), "{why}");
    // Elided: a placeholder line stands for the rest.
    let why = edit_failure("First point, sharpened.\n... rest unchanged ...");
    assert!(
        why.contains("its answer was rejected: the revision elides part of the value with the placeholder line `... rest unchanged ...`"),
        "{why}"
    );
}

#[test]
fn an_su_route_follows_the_edge_the_model_chooses() {
    let text = r#"---
name: t
description: Pick a path.
---
walker:
  name: T
  carries:
    task: {type: str, role: input}
    answer: {type: str, produced_by: short}
nodes:
  - {id: pick, type: ROUTE, owner: model, reads: [task], doc: "Short or long answer?"}
  - {id: short, type: CODE, owner: code, reads: [task], writes: [answer], body: "'short'"}
  - {id: long, type: CODE, owner: code, reads: [task], writes: [answer], body: "'long'"}
  - {id: done, type: TERMINAL, reads: [answer]}
edges:
  - {from: pick, to: short}
  - {from: pick, to: long}
  - {from: short, to: done}
  - {from: long, to: done}
"#;
    let mut bench = Bench::new();
    scripted(&mut bench, serde_json::json!({"pick": ["long"]}));
    let out = bench.run(text, "explain", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["answer"], "long");
    let mut bench = Bench::new();
    scripted(
        &mut bench,
        serde_json::json!({"pick": ["sideways", "nowhere", "up"]}),
    );
    let out = bench.run(text, "explain", &[]);
    assert_eq!(out.status, Status::Fault, "{out:?}");
    assert_eq!(out.fault.unwrap().kind, FaultKind::RouteDeadEnd);
}

#[test]
fn spawn_worker_slots_answer_per_sibling_and_join_into_a_list() {
    let text = r#"---
name: t
description: Review each file.
---
walker:
  name: T
  carries:
    task: {type: str, role: input}
    files: {type: list[str], produced_by: list_them}
    reviews: {type: list[str], produced_by: review}
nodes:
  - {id: list_them, type: CODE, owner: code, reads: [task], writes: [files], body: "task.split(' ')"}
  - {id: review, type: SPAWN, owner: code, reads: [files], writes: [reviews], doc: "Review one file.", concurrency: {isolation: shared_read}}
  - {id: done, type: TERMINAL, reads: [reviews]}
edges:
  - {from: list_them, to: review}
  - {from: review, to: done}
"#;
    let mut bench = Bench::new();
    scripted(
        &mut bench,
        serde_json::json!({"review[0]": ["a.rs is fine"], "review[1]": ["b.rs leaks"], "review[2]": ["c.rs is long"]}),
    );
    let out = bench.run(text, "a.rs b.rs c.rs", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(
        out.report["reviews"],
        serde_json::json!(["a.rs is fine", "b.rs leaks", "c.rs is long"])
    );
    assert_eq!(out.usage.slots, 3);
}

#[test]
fn a_call_with_no_target_is_a_nested_slot_bound_to_the_task() {
    let text = r#"---
name: t
description: Summarize.
---
walker:
  name: T
  carries:
    task: {type: str, role: input}
    summary: {type: str, produced_by: sub}
nodes:
  - {id: sub, type: CALL, doc: "Summarize the task."}
  - {id: done, type: TERMINAL, reads: [summary]}
edges:
  - {from: sub, to: done}
"#
    .replace(
        "{id: sub, type: CALL,",
        "{id: sub, type: CALL, writes: [summary],",
    );
    let mut bench = Bench::new();
    scripted(&mut bench, serde_json::json!({"sub": ["a summary"]}));
    let out = bench.run(&text, "a long text", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["summary"], "a summary");
}

#[test]
fn an_su_sense_with_no_tool_and_no_writes_makes_no_call() {
    let text = r#"---
name: t
description: Context only.
---
knowledge:
  rules:
    resident_on: [look]
    template: "Be brief."
walker:
  name: T
  carries:
    task: {type: str, role: input}
nodes:
  - {id: look, type: SENSE, owner: model, reads: [task], doc: "Keep the rules in mind."}
  - {id: done, type: TERMINAL, reads: [task]}
edges:
  - {from: look, to: done}
"#;
    let mut bench = Bench::new();
    scripted(&mut bench, serde_json::json!({}));
    let out = bench.run(text, "go", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.usage.slots, 0);
}
