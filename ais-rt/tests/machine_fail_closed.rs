//! Fail closed (spec §10.2): a failure that no guard or LOOP verdict of the program tests ends
//! the run at the failing step with status `error`, so no later instruction — above all no
//! effect — runs on the empty values the failure left behind. A routed failure goes on as the
//! program says.

use crate::common;

use ais_core::Value;
use ais_rt::Status;
use ais_rt::llm::ScriptedModel;
use common::{Bench, arg, failed, tool};
use std::sync::Arc;
use std::sync::atomic::Ordering;

fn scripted(bench: &mut Bench, json: serde_json::Value) {
    let path = bench.out.path().join("responses.json");
    bench.model = Some(Arc::new(
        ScriptedModel::from_json(&path, json).expect("scripted responses"),
    ));
}

/// Extract a contact, build its CSV row, append the row to `contacts.csv`.
const CONTACTS: &str = r#"---
name: contacts
description: Append the contact named in the task to contacts.csv.
---
types:
  Contact:
    kind: object
    fields:
      name: {type: str}
      email: {type: str}
      company: {type: str}
walker:
  name: Contacts
  carries:
    task: {type: str, role: input}
    contact: {type: Contact, produced_by: extract}
    row: {type: str, produced_by: format_row}
    saved: {type: str, produced_by: append}
tools:
  append_row: {sig: "(row) -> str", surface: ACT, serves: [append]}
nodes:
  - {id: extract, type: GEN-FILL, reads: [task], writes: [contact], doc: "The contact the task names."}
  - {id: format_row, type: CODE, owner: code, reads: [contact], writes: [row], body: "contact.name + ',' + contact.email + ',' + contact.company"}
  - {id: append, type: ACT, owner: code, reads: [row], writes: [saved]}
  - {id: done, type: TERMINAL, reads: [saved]}
edges:
  - {from: extract, to: format_row}
  - {from: format_row, to: append}
  - {from: append, to: done}
"#;

/// A bench whose `append_row` really appends to `contacts.csv` under the output root.
fn contacts_bench() -> (Bench, Arc<common::FnTool>) {
    let append = tool(|a, ctx| {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(ctx.root.join("contacts.csv"))
            .map_err(|e| failed(&e.to_string(), ""))?;
        writeln!(f, "{}", arg(a, "row")).map_err(|e| failed(&e.to_string(), ""))?;
        Ok(Value::from("contacts.csv"))
    });
    let bench = Bench::new().with("append_row", append.clone());
    std::fs::write(
        bench.out.path().join("contacts.csv"),
        "name,email,company\n",
    )
    .unwrap();
    (bench, append)
}

#[test]
fn a_slot_that_never_validates_stops_the_run_before_the_act_appends_an_empty_row() {
    let (mut bench, append) = contacts_bench();
    // A hostile model: three answers, none of them a Contact (the first and the two repairs).
    scripted(
        &mut bench,
        serde_json::json!({"extract": ["Ada Lovelace", {"name": "Ada"}, 42]}),
    );
    let out = bench.run(
        CONTACTS,
        "add Ada Lovelace, ada@example.org, Analytical",
        &[],
    );
    assert_eq!(out.status, Status::Error, "{out:?}");
    assert_eq!(
        append.calls.load(Ordering::SeqCst),
        0,
        "the ACT must not run on the empty contact"
    );
    assert_eq!(
        std::fs::read_to_string(bench.out.path().join("contacts.csv")).unwrap(),
        "name,email,company\n",
        "no `,,` row was appended"
    );
    assert_eq!(out.steps, 1, "only `extract` ran: {out:?}");
    assert!(!out.report.contains_key("row"), "{:?}", out.report);
    let stopped = out
        .deviations
        .iter()
        .find(|d| d.subject == "extract" && d.substituted.contains("stopped at `extract`"))
        .unwrap_or_else(|| panic!("a deviation names the step: {:#?}", out.deviations));
    assert!(stopped.substituted.contains("no later instruction ran"));
    let failure = out
        .deviations
        .iter()
        .find(|d| d.subject == "extract" && d.substituted.starts_with("unrouted failure"))
        .unwrap_or_else(|| panic!("a deviation names the failure: {:#?}", out.deviations));
    assert!(
        failure.substituted.contains("extract"),
        "{}",
        failure.substituted
    );
    // The failure is a value too: the step and its error, no message to parse.
    assert_eq!(out.failures.len(), 1, "{:?}", out.failures);
    assert_eq!(out.failures[0].instruction, "extract");
    assert!(
        failure.substituted.ends_with(&out.failures[0].message),
        "{:?}",
        out.failures
    );
}

#[test]
fn the_same_program_appends_the_row_when_the_slot_validates() {
    let (mut bench, append) = contacts_bench();
    scripted(
        &mut bench,
        serde_json::json!({"extract": [{"name": "Ada", "email": "ada@example.org", "company": "Analytical"}]}),
    );
    let out = bench.run(CONTACTS, "add Ada", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(append.calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        std::fs::read_to_string(bench.out.path().join("contacts.csv")).unwrap(),
        "name,email,company\nAda,ada@example.org,Analytical\n"
    );
}

/// A tool failure in an `outcome` carry: tested by the gate, untested without it.
const SAVE: &str = r#"---
name: save
description: Save, then tell someone.
---
walker:
  name: Save
  carries:
    task: {type: str, role: input}
    saved: {type: outcome, produced_by: save}
    note: {type: str, produced_by: notify}
tools:
  save_it: {sig: "(task) -> str", surface: ACT, serves: [save]}
  notify_it: {sig: "(task) -> str", surface: ACT, serves: [notify]}
nodes:
  - {id: save, type: ACT, owner: code, reads: [task], writes: [saved]}
  - {id: gate, type: ROUTE, owner: code, reads: [saved]}
  - {id: notify, type: ACT, owner: code, reads: [task], writes: [note]}
  - {id: done, type: TERMINAL, reads: [note, saved]}
edges:
  - {from: save, to: gate}
  - {from: gate, to: notify, guard: "saved.ok"}
  - {from: gate, to: done, guard: otherwise}
  - {from: notify, to: done}
"#;

fn save_bench() -> (Bench, Arc<common::FnTool>) {
    let notify = tool(|_, _| Ok(Value::from("sent")));
    let bench = Bench::new()
        .with("save_it", tool(|_, _| Err(failed("disk full", "ENOSPC"))))
        .with("notify_it", notify.clone());
    (bench, notify)
}

#[test]
fn a_routed_failure_goes_on_by_the_edge_that_tests_it() {
    let (bench, notify) = save_bench();
    let out = bench.run(SAVE, "x", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(notify.calls.load(Ordering::SeqCst), 0);
    assert_eq!(out.report["saved"]["ok"], false);
    assert_eq!(out.report["saved"]["error"], "at `save`: disk full");
    assert_eq!(out.steps, 3, "save, gate, done");
}

#[test]
fn an_untested_tool_failure_stops_at_its_step_and_the_next_effect_never_runs() {
    // Without the gate, nothing tests `saved`: `notify` would tell someone a save happened.
    let text = SAVE
        .replace("  - {id: gate, type: ROUTE, owner: code, reads: [saved]}\n", "")
        .replace(
            "  - {from: save, to: gate}\n  - {from: gate, to: notify, guard: \"saved.ok\"}\n  - {from: gate, to: done, guard: otherwise}\n",
            "  - {from: save, to: notify}\n",
        );
    let (bench, notify) = save_bench();
    let out = bench.run(&text, "x", &[]);
    assert_eq!(out.status, Status::Error, "{out:?}");
    assert_eq!(notify.calls.load(Ordering::SeqCst), 0, "{out:?}");
    assert_eq!(out.steps, 1);
    assert_eq!(
        out.report["saved"]["error"], "at `save`: disk full",
        "what the failure produced is reported"
    );
    assert!(
        out.deviations
            .iter()
            .any(|d| d.subject == "save" && d.substituted.contains("stopped at `save`")),
        "{:#?}",
        out.deviations
    );
}

#[test]
fn a_failure_tested_later_is_routable_and_the_run_goes_on_to_the_test() {
    // The program tests `saved` only after `notify`: that is its decision (§10.2 asks for a
    // route, not for one next to the failure), so the run goes on as today.
    let text = SAVE
        .replace(
            "  - {from: save, to: gate}\n",
            "  - {from: save, to: notify}\n",
        )
        .replace(
            "  - {from: gate, to: notify, guard: \"saved.ok\"}\n  - {from: gate, to: done, guard: otherwise}\n  - {from: notify, to: done}\n",
            "  - {from: notify, to: gate}\n  - {from: gate, to: done, guard: \"saved.ok\"}\n  - {from: gate, to: give_up, guard: otherwise}\n",
        )
        .replace(
            "  - {id: done, type: TERMINAL, reads: [note, saved]}\n",
            "  - {id: done, type: TERMINAL, reads: [note, saved]}\n  - {id: give_up, type: TERMINAL, reads: [saved]}\n",
        );
    let (bench, notify) = save_bench();
    let out = bench.run(&text, "x", &[]);
    assert_eq!(notify.calls.load(Ordering::SeqCst), 1, "{out:?}");
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.steps, 4);
}
