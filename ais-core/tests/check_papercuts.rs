//! Mistakes a new user made, as `ais check` and `ais!` both see them (one validator): a
//! model-owned ROUTE deciding on a value computed from a human answer (G6, through CODE and
//! SENSE steps), a misspelled enum member in a guard (X5, pointed at and renamed), and a LOOP
//! whose verdict a model writes (X2, said as what is wrong); and a misspelled word of a fixed
//! list (an owner, a surface, a role, an isolation mode, a type kind) offered the close one.

use ais_core::{CheckId, Edit, Finding, FindingKind, Repairs, Severity, check};

/// The findings of `text` (AG-IR) with no repairs applied.
fn findings(text: &str) -> Vec<Finding> {
    let doc = ais_core::agir::read(text).unwrap_or_else(|e| panic!("reads: {e}\n{text}"));
    check(&doc.program, &doc.source_map, Repairs::Off).findings
}

fn of(fs: &[Finding], id: CheckId) -> Vec<&Finding> {
    fs.iter().filter(|f| f.id == id).collect()
}

/// A program that takes a human's `approval`, computes `steps` from it and routes on the last
/// one with a ROUTE of `owner` (and `guard` on its edge to `ship`, when given).
fn gate(steps: &str, decides_on: &str, owner: &str, guard: Option<&str>) -> String {
    let guard = guard.map_or(String::new(), |g| format!(", guard: \"{g}\""));
    format!(
        r#"---
name: ship
description: Ship after a human says yes.
---
walker:
  name: Ship
  carries:
    task: {{type: str, role: input}}
    approval: {{type: str, role: input, doc: "Ship it? (yes/no)"}}
    answer: {{type: str, produced_by: clean}}
    approved: {{type: bool, produced_by: parse}}
    shipped: {{type: str, produced_by: ship}}
tools:
  - name: tidy
    sig: "(approval) -> str"
    surface: SENSE
    body: |
      def tidy(approval):
          return approval.strip().lower()
nodes:
{steps}
  - {{id: gate, type: ROUTE, owner: {owner}, reads: [{decides_on}], doc: "Decide whether to ship."}}
  - {{id: ship, type: GEN-RAW, reads: [task], writes: [shipped], doc: "Write the release notes."}}
  - {{id: done, type: TERMINAL, reads: [shipped]}}
edges:
  - {{from: clean, to: parse}}
  - {{from: parse, to: gate}}
  - {{from: gate, to: ship{guard}}}
  - {{from: gate, to: done}}
  - {{from: ship, to: done}}
"#
    )
}

/// `clean` (a SENSE running `tidy` on the answer) then `parse` (a CODE over its result).
const THROUGH_SENSE_AND_CODE: &str = r#"  - {id: clean, type: SENSE, owner: code, tool: tidy, reads: [approval], writes: [answer]}
  - {id: parse, type: CODE, owner: code, reads: [answer], writes: [approved], body: "answer == 'yes'"}"#;

/// `clean` and `parse` reading only the task: nothing computed from the human.
const FROM_THE_TASK: &str = r#"  - {id: clean, type: SENSE, owner: code, tool: tidy, reads: [task], writes: [answer]}
  - {id: parse, type: CODE, owner: code, reads: [answer], writes: [approved], body: "answer == 'yes'"}"#;

#[test]
fn g6_follows_a_human_answer_through_sense_and_code_steps() {
    let fs = findings(&gate(THROUGH_SENSE_AND_CODE, "approved", "model", None));
    let g6 = of(&fs, CheckId::G6);
    assert_eq!(g6.len(), 1, "{fs:#?}");
    assert_eq!(g6[0].severity, Severity::Error);
    assert_eq!(g6[0].instruction.as_deref(), Some("gate"));
    assert_eq!(
        g6[0].message,
        "ROUTE `gate` decides on `approved`, computed from human input `approval` by `clean` then \
         `parse`, but is not `owner: code`; a model reading the answer turns the gate into a \
         suggestion"
    );
    let repair = g6[0].repair.as_ref().expect("a repair");
    assert!(
        repair.summary.contains("guard its edges on `approved`"),
        "{repair:?}"
    );
}

#[test]
fn g6_catches_a_code_route_with_no_guards_over_a_value_computed_from_a_human_answer() {
    // `owner: code` but no guard: the route takes its edges as they come, so the answer
    // decides nothing (the exemption for a derived value is gone).
    let fs = findings(&gate(THROUGH_SENSE_AND_CODE, "approved", "code", None));
    let g6 = of(&fs, CheckId::G6);
    assert_eq!(g6.len(), 1, "{fs:#?}");
    assert_eq!(g6[0].severity, Severity::Error);
    assert_eq!(g6[0].instruction.as_deref(), Some("gate"));
    assert_eq!(
        g6[0].message,
        "ROUTE `gate` reads `approved`, computed from human input `approval` by `clean` then \
         `parse`, but has no explicit guards, so the answer decides nothing"
    );
    assert_eq!(g6[0].kind, Some(FindingKind::HumanGateOnDerived));
    let repair = g6[0].repair.as_ref().expect("a repair");
    assert_eq!(
        repair.summary,
        "guard `gate`'s edges on `approved` (e.g. `approved == true`) and give it a default edge"
    );
    // The answer itself, read by a guard-less code route, is caught as before.
    let fs = findings(&gate(THROUGH_SENSE_AND_CODE, "approval", "code", None));
    let g6 = of(&fs, CheckId::G6);
    assert_eq!(g6.len(), 1, "{fs:#?}");
    assert!(g6[0].message.contains("has no explicit guards"), "{g6:#?}");
}

#[test]
fn g6_passes_a_code_route_guarding_on_the_parsed_answer_and_values_not_from_a_human() {
    let fs = findings(&gate(
        THROUGH_SENSE_AND_CODE,
        "approved",
        "code",
        Some("approved == true"),
    ));
    assert!(of(&fs, CheckId::G6).is_empty(), "{fs:#?}");
    // A model route on values computed from the task alone decides nothing a human said.
    let fs = findings(&gate(FROM_THE_TASK, "approved", "model", None));
    assert!(of(&fs, CheckId::G6).is_empty(), "{fs:#?}");
}

/// A review program: a GEN-ENUM into `verdict` and a code ROUTE guarded by `guard`.
fn review(guard: &str) -> String {
    format!(
        r#"---
name: review
description: Review a change and merge it when approved.
---
types:
  Verdict: {{kind: enum, members: [approve, reject, needs_work]}}
walker:
  name: Review
  carries:
    task: {{type: str, role: input}}
    verdict: {{type: Verdict, produced_by: judge}}
    merged: {{type: str, produced_by: merge}}
nodes:
  - {{id: judge, type: GEN-ENUM, reads: [task], writes: [verdict], doc: "Decide."}}
  - {{id: gate, type: ROUTE, owner: code, reads: [verdict]}}
  - {{id: merge, type: GEN-RAW, reads: [task], writes: [merged], doc: "Write the merge message."}}
  - {{id: done, type: TERMINAL, reads: [merged]}}
edges:
  - {{from: judge, to: gate}}
  - {{from: gate, to: merge, guard: '{guard}'}}
  - {{from: gate, to: done, guard: otherwise}}
  - {{from: merge, to: done}}
"#
    )
}

/// The X5 finding of a guard, with the text its inner range covers.
fn guard_finding(guard: &str) -> (Finding, String) {
    let fs = findings(&review(guard));
    let x5 = of(&fs, CheckId::X5);
    assert_eq!(x5.len(), 1, "{fs:#?}");
    let f = x5[0].clone();
    let inner = f.inner.expect("a range inside the guard");
    assert_eq!(inner.line, 1);
    let covered: String = guard
        .chars()
        .skip(inner.column as usize - 1)
        .take(inner.len as usize)
        .collect();
    (f, covered)
}

fn rename(f: &Finding) -> Option<(String, String)> {
    match f.repair.as_ref()?.edit.as_ref()? {
        Edit::RenameInGuard { name, to, .. } => Some((name.clone(), to.clone())),
        _ => None,
    }
}

#[test]
fn a_misspelled_bare_member_points_at_it_with_the_enums_members() {
    let (f, covered) = guard_finding("verdict == aprove");
    assert_eq!(covered, "aprove");
    assert!(
        f.message.contains(
            "`aprove` is no member of enum `Verdict` (and names no carry). Did you mean \
             `approve`? Its members: approve, reject, needs_work."
        ),
        "{}",
        f.message
    );
    assert_eq!(f.did_you_mean, ["approve"]);
    assert_eq!(rename(&f), Some(("aprove".into(), "approve".into())));
}

#[test]
fn a_misspelled_quoted_or_qualified_member_points_at_it_and_is_renamed() {
    let (f, covered) = guard_finding(r#"verdict == "aprove""#);
    assert_eq!(covered, "aprove", "the member inside the quotes");
    assert!(
        f.message
            .contains("enum `Verdict` has no member `aprove`. Did you mean `approve`?")
    );
    assert_eq!(rename(&f), Some(("aprove".into(), "approve".into())));

    // Qualified, the member is pointed at, not the enum's name before it.
    let (f, covered) = guard_finding("verdict == Verdict.aprove");
    assert_eq!(covered, "aprove");
    assert_eq!(f.did_you_mean, ["approve"]);
    assert_eq!(rename(&f), Some(("aprove".into(), "approve".into())));
    // The rename lands on the member and the guard then checks.
    let doc = ais_core::agir::read(&review("verdict == Verdict.aprove")).unwrap();
    let checked = check(&doc.program, &doc.source_map, Repairs::Mechanical);
    let guard = checked
        .repaired
        .as_ref()
        .expect("the repaired program")
        .edge_list()
        .iter()
        .find_map(|e| e.guard.clone().filter(|g| g.contains("Verdict")))
        .unwrap();
    assert_eq!(guard, "verdict == Verdict.approve");
}

#[test]
fn a_misspelled_carry_compared_with_an_enum_is_still_a_carry_misspelling() {
    // `verdikt` is close to the carry `verdict` and to no member: the carry is meant.
    let (f, covered) = guard_finding("verdict == verdikt");
    assert_eq!(covered, "verdikt");
    assert!(
        f.message
            .contains("`verdikt` names no carry. Did you mean `verdict`?"),
        "{}",
        f.message
    );
}

/// A repair loop whose verdict `ok` is written by `judge`, a SENSE of `owner`.
fn repair_loop(owner: &str) -> String {
    format!(
        r#"---
name: fix
description: Improve a draft until it passes.
---
walker:
  name: Fix
  carries:
    task: {{type: str, role: input}}
    draft: {{type: str, produced_by: write}}
    ok: {{type: bool, produced_by: judge}}
    round: {{type: int, produced_by: improve}}
nodes:
  - {{id: write, type: GEN-RAW, reads: [task], writes: [draft], doc: "Write a draft."}}
  - {{id: judge, type: SENSE, owner: {owner}, reads: [draft], writes: [ok], doc: "Is the draft good enough?"}}
  - {{id: improve, type: LOOP, owner: model, reads: [draft], writes: [draft], verdict: ok, cap: 3, counter: round, doc: "Improve the draft."}}
  - {{id: done, type: TERMINAL, reads: [draft]}}
edges:
  - {{from: write, to: judge}}
  - {{from: judge, to: improve}}
  - {{from: improve, to: judge}}
  - {{from: improve, to: done}}
"#
    )
}

#[test]
fn a_loop_verdict_a_model_writes_says_so_and_names_the_writer() {
    let fs = findings(&repair_loop("model"));
    let x2 = of(&fs, CheckId::X2);
    assert_eq!(x2.len(), 1, "{fs:#?}");
    assert_eq!(x2[0].kind, Some(FindingKind::LoopVerdictNotCode));
    assert_eq!(
        x2[0].message,
        "the verdict `ok` of LOOP `improve` is written by `judge` on a model, so the loop's exit \
         is a model's opinion; a verdict must be computed by code (§4.4.2)"
    );
    assert!(
        x2[0]
            .repair
            .as_ref()
            .unwrap()
            .summary
            .contains("in place of `judge`"),
        "{:?}",
        x2[0].repair
    );
}

/// Every field whose value is one of a fixed list offers the close spelling when it is
/// misspelled, as a misspelled opcode or modality does: both front ends render it (`ais check`
/// as `help: did you mean`, `ais!` at the end of the error).
#[test]
fn a_misspelled_word_of_a_fixed_list_is_offered_the_close_one() {
    let text = r#"---
name: save
description: Save a note.
---
types:
  Verdict: {kind: enmu, members: [yes, no]}
walker:
  name: Save
  carries:
    task: {type: str, role: inptu}
    note: {type: str, produced_by: draft}
    notes: {type: list[str], produced_by: fan}
    saved: {type: str, produced_by: save}
tools:
  - name: keep
    sig: "(note) -> str"
    surface: SENS
    body: |
      def keep(note):
          return note
nodes:
  - {id: draft, type: GEN-RAW, owner: modle, reads: [task], writes: [note], doc: "Draft it."}
  - {id: fan, type: SPAWN, owner: code, reads: [note], writes: [notes], doc: "Split it.", concurrency: {isolation: shared_raed}}
  - {id: save, type: ACT, owner: code, surface: artefact, tool: keep, reads: [note], writes: [saved]}
  - {id: done, type: TERMINAL, reads: [saved, notes]}
edges:
  - {from: draft, to: fan}
  - {from: fan, to: save}
  - {from: save, to: done}
"#;
    let fs = findings(text);
    for (id, got, meant) in [
        (CheckId::W14, "enmu", "enum"),
        (CheckId::W10, "inptu", "input"),
        (CheckId::G3, "SENS", "SENSE"),
        (CheckId::W3, "modle", "model"),
        (CheckId::X3, "shared_raed", "shared_read"),
        (CheckId::G3, "artefact", "artifact"),
    ] {
        let f = of(&fs, id)
            .into_iter()
            .find(|f| f.message.contains(got))
            .unwrap_or_else(|| panic!("{id} on `{got}`: {fs:#?}"));
        assert_eq!(
            f.did_you_mean.first().map(String::as_str),
            Some(meant),
            "{f:#?}"
        );
        // At the misspelled word itself.
        let pos = f.pos.as_ref().expect("placed");
        let line = text.lines().nth(pos.line as usize - 1).unwrap();
        assert!(
            line[pos.column as usize - 1..].starts_with(got),
            "{line}: {f:#?}"
        );
    }
}
