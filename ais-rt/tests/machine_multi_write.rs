//! Instructions with several writes (§2.3 step 4): a Mind slot whose result type does not hold
//! its writes contracts for an object of them (a recorded deviation), and a CALL fills each
//! write from the callee's report by name, then by the position of the callee's TERMINAL reads.

use crate::common;

use ais_core::Value;
use ais_rt::Status;
use ais_rt::llm::ScriptedModel;
use common::{Bench, arg, block_on, failed, program, tool};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// The cookbook's contact program: a GEN-FILL writes three `str` carries, with no `output`.
const CONTACTS: &str = r#"---
name: contacts
description: Append the contact named in the task to contacts.csv.
---
walker:
  name: Contacts
  carries:
    task: {type: str, role: input}
    name: {type: str, produced_by: extract, doc: "the contact's full name"}
    email: {type: str, produced_by: extract}
    company: {type: str, produced_by: extract}
    row: {type: str, produced_by: format_row}
    saved: {type: str, produced_by: append}
tools:
  append_row: {sig: "(row) -> str", surface: ACT, serves: [append]}
nodes:
  - {id: extract, type: GEN-FILL, reads: [task], writes: [name, email, company], doc: "The contact the task names."}
  - {id: format_row, type: CODE, owner: code, reads: [name, email, company], writes: [row], body: "name + ',' + email + ',' + company"}
  - {id: append, type: ACT, owner: code, reads: [row], writes: [saved]}
  - {id: done, type: TERMINAL, reads: [saved, name, email, company]}
edges:
  - {from: extract, to: format_row}
  - {from: format_row, to: append}
  - {from: append, to: done}
"#;

fn contacts_bench(responses: serde_json::Value) -> (Bench, Arc<common::FnTool>) {
    let append = tool(|a, ctx| {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(ctx.root.join("contacts.csv"))
            .map_err(|e| failed(&e.to_string(), ""))?;
        writeln!(f, "{}", arg(a, "row")).map_err(|e| failed(&e.to_string(), ""))?;
        Ok(Value::from("contacts.csv"))
    });
    let mut bench = Bench::new().with("append_row", append.clone());
    std::fs::write(
        bench.out.path().join("contacts.csv"),
        "name,email,company\n",
    )
    .unwrap();
    let path = bench.out.path().join("responses.json");
    bench.model = Some(Arc::new(
        ScriptedModel::from_json(&path, responses).unwrap(),
    ));
    (bench, append)
}

#[test]
fn a_gen_fill_writing_three_carries_asks_for_their_object_and_appends_the_row() {
    let (bench, append) = contacts_bench(serde_json::json!({"extract": [
        {"name": "Ada Lovelace", "email": "ada@example.org", "company": "Analytical Engines"}
    ]}));
    let out = bench.run(
        CONTACTS,
        "add Ada Lovelace (ada@example.org) of Analytical Engines",
        &[],
    );
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(append.calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        std::fs::read_to_string(bench.out.path().join("contacts.csv")).unwrap(),
        "name,email,company\nAda Lovelace,ada@example.org,Analytical Engines\n"
    );
    assert_eq!(out.report["email"], "ada@example.org");
    assert_eq!(out.usage.slots, 1, "one slot, not one per write");
    let d = out
        .deviations
        .iter()
        .find(|d| d.subject == "extract")
        .unwrap_or_else(|| panic!("the deviation is recorded: {:#?}", out.deviations));
    assert!(d.intended.contains("`str`"), "{}", d.intended);
    assert!(
        d.substituted
            .contains("{name: str, email: str, company: str}"),
        "{}",
        d.substituted
    );
}

#[test]
fn the_object_the_slot_is_sent_is_closed_and_a_missing_field_is_repaired() {
    // A model that leaves `company` out is asked again (the field is required); one that
    // never gives it fails the slot, and the run stops before the ACT (fail closed).
    let (bench, append) = contacts_bench(serde_json::json!({"extract": [
        {"name": "Ada", "email": "ada@example.org"},
        {"name": "Ada", "email": "ada@example.org", "company": "AE"}
    ]}));
    let out = bench.run(CONTACTS, "add Ada", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["company"], "AE");
    assert_eq!(append.calls.load(Ordering::SeqCst), 1);

    let (bench, append) = contacts_bench(serde_json::json!({"extract": [
        "Ada, ada@example.org, AE",
        {"name": "Ada", "email": "ada@example.org", "company": "AE", "admin": true},
        {"name": 7, "email": "ada@example.org", "company": "AE"}
    ]}));
    let out = bench.run(CONTACTS, "add Ada", &[]);
    assert_eq!(out.status, Status::Error, "{out:?}");
    assert_eq!(append.calls.load(Ordering::SeqCst), 0);
    assert_eq!(
        std::fs::read_to_string(bench.out.path().join("contacts.csv")).unwrap(),
        "name,email,company\n"
    );
}

#[test]
fn a_result_type_that_holds_the_writes_is_used_as_written() {
    // `output: Contact` holds `email` and `company`: no substitution, no deviation.
    let text = CONTACTS
        .replace(
            "walker:\n",
            "types:\n  Contact:\n    kind: object\n    fields:\n      name: {type: str}\n      email: {type: str}\n      company: {type: str}\nwalker:\n",
        )
        .replace(
            "doc: \"The contact the task names.\"}",
            "output: Contact, doc: \"The contact the task names.\"}",
        );
    let (bench, _) = contacts_bench(serde_json::json!({"extract": [
        {"name": "Ada", "email": "ada@example.org", "company": "AE"}
    ]}));
    let out = bench.run(&text, "add Ada", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["name"], "Ada");
    assert!(
        out.deviations.iter().all(|d| d.subject != "extract"),
        "{:#?}",
        out.deviations
    );
}

const CHILD: &str = r#"---
name: split_name
description: Split a full name.
---
walker:
  name: SplitName
  carries:
    task: {type: str, role: input}
    first: {type: str, produced_by: f}
    last: {type: str, produced_by: l}
    initials: {type: str, produced_by: i}
nodes:
  - {id: f, type: CODE, owner: code, reads: [task], writes: [first], body: "task.split()[0]"}
  - {id: l, type: CODE, owner: code, reads: [task], writes: [last], body: "task.split()[-1]"}
  - {id: i, type: CODE, owner: code, reads: [first, last], writes: [initials], body: "first[0] + last[0]"}
  - {id: fin, type: TERMINAL, reads: [first, last, initials]}
edges:
  - {from: f, to: l}
  - {from: l, to: i}
  - {from: i, to: fin}
"#;

fn parent(writes: &str) -> String {
    format!(
        r#"---
name: greet
description: Greets by a split name.
---
walker:
  name: Greet
  carries:
    task: {{type: str, role: input}}
    first: {{type: str, produced_by: split}}
    last: {{type: str, produced_by: split}}
    initials: {{type: str, produced_by: split}}
    given: {{type: str, produced_by: split}}
    family: {{type: str, produced_by: split}}
    mono: {{type: str, produced_by: split}}
    gate_ok: {{type: bool, produced_by: check}}
nodes:
  - {{id: split, type: CALL, owner: model, reads: [task], writes: [{writes}], target: split_name, doc: "Split the name."}}
  - {{id: check, type: CODE, owner: code, reads: [{writes}], writes: [gate_ok], body: "true"}}
  - {{id: done, type: TERMINAL, reads: [{writes}]}}
edges:
  - {{from: split, to: check}}
  - {{from: check, to: done}}
"#
    )
}

fn run_parent(writes: &str) -> ais_rt::RunOutcome {
    let child = program(CHILD);
    let parent = program(&parent(writes));
    let out_dir = tempfile::tempdir().unwrap();
    let rt = ais_rt::Runtime::builder()
        .out_dir(out_dir.path().into())
        .program("split_name", child.program)
        .build();
    block_on(rt.run(
        &parent.program,
        None,
        ais_rt::Inputs::task("Ada King Lovelace"),
    ))
}

#[test]
fn a_call_with_three_writes_fills_each_from_the_callee_report_by_name() {
    // Written in another order than the callee's TERMINAL: by name wins over position.
    let out = run_parent("initials, first, last");
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["first"], "Ada");
    assert_eq!(out.report["last"], "Lovelace");
    assert_eq!(out.report["initials"], "AL");
    assert!(out.unproduced.is_empty(), "{:?}", out.unproduced);
}

#[test]
fn a_call_whose_writes_are_named_otherwise_fills_them_by_position() {
    let out = run_parent("given, family, mono");
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["given"], "Ada");
    assert_eq!(out.report["family"], "Lovelace");
    assert_eq!(out.report["mono"], "AL");
}
