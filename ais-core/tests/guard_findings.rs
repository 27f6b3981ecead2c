//! A finding inside a guard points at the offending name — caret, JSON column and
//! did-you-mean — and carries a structured rename that the validator applies when it is
//! unambiguous, worded for AG-IR and for the Rust DSL.

use ais_core::render::{finding_json, render_finding};
use ais_core::{CheckId, Edit, Outcome, Repairs, Wording, check};

/// The writing-plans program with a gate whose guard is `guard` (as written, quotes included).
fn program(guard: &str) -> String {
    program_with_edge(&format!("- {{from: gate, to: save, guard: {guard}}}"))
}

/// The writing-plans program with `edge` (an entry of `edges`, as written) from the gate.
fn program_with_edge(edge: &str) -> String {
    format!(
        r#"---
name: writing_plans
description: Draft a plan, verify it, and save it only when it has tasks.
---
walker:
  name: WritingPlans
  carries:
    task:      {{ type: str,  role: input }}
    plan_md:   {{ type: str,  produced_by: draft }}
    plan_ok:   {{ type: bool, produced_by: verify }}
    plan_file: {{ type: str,  produced_by: save }}
tools:
  - name: verify
    sig: "(plan_md) -> bool"
    surface: SENSE
    body: |
      def verify(plan_md):
          return "Task" in plan_md
nodes:
  - id: draft
    type: GEN-RAW
    reads: [task]
    writes: [plan_md]
    doc: "Write the plan."
  - id: verify
    type: SENSE
    owner: code
    reads: [plan_md]
    writes: [plan_ok]
  - id: gate
    type: ROUTE
    owner: code
    reads: [plan_ok]
  - id: save
    type: ACT
    owner: code
    tool: write_file
    reads: [plan_md]
    writes: [plan_file]
  - id: done
    type: TERMINAL
    reads: [plan_file]
edges:
  - {{from: draft, to: verify}}
  - {{from: verify, to: gate}}
  {edge}
  - {{from: gate, to: done, guard: otherwise}}
  - {{from: save, to: done}}
"#
    )
}

#[test]
fn a_misspelled_name_in_a_guard_is_located_suggested_and_renamed() {
    let text = program(r#""plan_okk == true""#);
    let doc = ais_core::agir::read(&text).expect("reads");
    let checked = check(&doc.program, &doc.source_map, Repairs::Off);
    assert_eq!(checked.outcome, Outcome::Failed);
    let x5 = checked
        .findings
        .iter()
        .find(|f| f.id == CheckId::X5)
        .expect("an X5 finding");

    // The line and column are those of `plan_okk`, not of the opening quote.
    let line = text
        .lines()
        .position(|l| l.contains("plan_okk"))
        .expect("the guard line")
        + 1;
    let column = text
        .lines()
        .nth(line - 1)
        .unwrap()
        .find("plan_okk")
        .unwrap()
        + 1;
    let pos = x5.pos.expect("located");
    assert_eq!((pos.line as usize, pos.column as usize), (line, column));
    let inner = x5.inner.expect("a range inside the guard");
    assert_eq!((inner.line, inner.column, inner.len), (1, 1, 8));

    let json = finding_json(x5);
    assert_eq!(json["column"], column);
    assert_eq!(json["did_you_mean"][0], "plan_ok");
    assert_eq!(json["repair"]["mechanical"], true);
    assert_eq!(
        json["repair"]["summary"],
        "change `plan_okk` to `plan_ok` in the guard of edge `gate` -> `save`"
    );

    let rendered = render_finding(x5, &text, "plans.agir", false);
    assert!(
        rendered.contains(&format!("--> plans.agir:{line}:{column}")),
        "{rendered}"
    );
    let caret_line = format!("{}^^^^^^^^", " ".repeat(column - 1));
    assert!(
        rendered.lines().any(|l| l.ends_with(&caret_line)),
        "{rendered}"
    );

    // The same structured repair, in both front ends' words.
    let repair = x5.repair.as_ref().expect("a repair");
    assert!(matches!(
        repair.edit,
        Some(Edit::RenameInGuard { ref name, ref to, .. }) if name == "plan_okk" && to == "plan_ok"
    ));
    assert_eq!(repair.words(Wording::Agir), repair.summary);
    assert_eq!(
        repair.words(Wording::RustDsl),
        "change `plan_okk` to `plan_ok` in the condition of `gate -> save if …;`"
    );

    // Ladder step 1 applies it: the program runs, and the rename is recorded.
    let repaired = check(&doc.program, &doc.source_map, Repairs::Mechanical);
    assert_ne!(
        repaired.outcome,
        Outcome::Failed,
        "{:#?}",
        repaired.findings
    );
    let guard = repaired.repaired.as_ref().expect("repaired").edge_list()[2]
        .guard
        .clone();
    assert_eq!(guard.as_deref(), Some("plan_ok == true"));
    assert_eq!(repaired.deviations[0].subject, "gate -> save");
    ais_core::plan::lower(repaired.program(&doc.program)).expect("the repaired program lowers");
}

#[test]
fn an_ambiguous_name_gets_suggestions_but_no_mechanical_rename() {
    // `plan_mk` is one edit from `plan_md` and one from `plan_ok`: no rename is safe.
    let text = program(r#""plan_mk == true""#);
    let doc = ais_core::agir::read(&text).expect("reads");
    let checked = check(&doc.program, &doc.source_map, Repairs::Mechanical);
    let x5 = checked
        .findings
        .iter()
        .find(|f| f.id == CheckId::X5)
        .expect("X5 stays");
    assert!(x5.did_you_mean.iter().any(|n| n == "plan_md"), "{x5:#?}");
    assert!(x5.did_you_mean.iter().any(|n| n == "plan_ok"), "{x5:#?}");
    let repair = x5.repair.as_ref().expect("a repair");
    assert!(!repair.mechanical, "{repair:#?}");
    assert_eq!(checked.outcome, Outcome::Failed);
    assert!(checked.repaired.is_none());
}

#[test]
fn plain_and_block_guards_are_located_inside_too() {
    for (edge, needle) in [
        (
            "- {from: gate, to: save, guard: plan_ok and plan_okk}",
            "plan_okk",
        ),
        (
            "- from: gate\n    to: save\n    guard: |\n      plan_ok ==\n        plan_okk\n",
            "plan_okk",
        ),
        (
            "- {from: gate, to: save, guard: 'plan_ok == plan_okk'}",
            "plan_okk",
        ),
    ] {
        let text = program_with_edge(edge);
        let doc = ais_core::agir::read(&text).expect("reads");
        let checked = check(&doc.program, &doc.source_map, Repairs::Off);
        let x5 = checked
            .findings
            .iter()
            .find(|f| f.id == CheckId::X5)
            .unwrap_or_else(|| panic!("X5 for {edge}: {:#?}", checked.findings));
        let pos = x5.pos.expect("located");
        let row = text.lines().nth(pos.line as usize - 1).unwrap();
        let at: String = row
            .chars()
            .skip(pos.column as usize - 1)
            .take(needle.len())
            .collect();
        assert_eq!(at, needle, "{edge}: at {pos}");
    }
}
