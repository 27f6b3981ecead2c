//! Conformance fixtures for the faithfulness audit (spec §9.5): for each kind × force, a program
//! that realizes the obligation and one that drops it; an added instruction; re-modalized
//! transitions both ways; a prose pointer to the source; a sibling file referenced and not
//! embodied; a deliverable with no typed carrier; G10 over and under the cap; G11 with and
//! without the file touched; the source checks; accepted deviations.

use ais_core::{
    AuditConfig, CheckId, Element, FieldKey, FindingKind, Locus, Modality, ObligationKind,
    Realization, Repairs, SourceMap, agir, audit, check,
};

/// A program with one realization of every shape, each element tracing to `r_base` (a
/// mandatory constraint, realized by any traced instruction) and, where `{X}` is substituted,
/// to `r`. It checks clean.
const SINK: &str = r#"---
name: sink
description: Every kind of realization in one program.
---
knowledge:
  guide:
    resident_on: [work]
    template: |
      A note has a title line, a blank line, and at most three short paragraphs.
    traces_to: [r_base{KN}]
tools:
  fetch_page:
    sig: "(url) -> str"
    surface: SENSE
    traces_to: [r_base{FT}]
    body: |
      def fetch_page(url):
          import urllib.request
          return urllib.request.urlopen(url).read().decode()
  write_note:
    sig: "(note, note_path) -> str"
    surface: ACT·artifact
    traces_to: [r_base{WT}]
    body: |
      def write_note(note, note_path):
          with open(note_path, "w") as f:
              f.write(note)
          return note_path
walker:
  name: Sink
  carries:
    task: {type: str, role: input}
    url: {type: str, role: input}
    note_path: {type: str, role: input}
    page: {type: str, produced_by: fetch}
    note: {type: str, produced_by: work}
    answer: {type: str, produced_by: ask}
    saved: {type: str, produced_by: save}
nodes:
  - id: fetch
    type: SENSE
    owner: code
    tool: fetch_page
    reads: [url]
    writes: [page]
    traces_to: [r_base{FETCH}]
  - id: work
    type: GEN-RAW
    reads: [task, page]
    writes: [note]
    doc: Write the note.
    traces_to: [r_base{WORK}]
  - id: ask
    type: SENSE
    owner: code
    tool: ask_user
    reads: [note]
    writes: [answer]
    traces_to: [r_base{ASK}]
  - id: gate
    type: ROUTE
    owner: code
    reads: [answer]
    traces_to: [r_base{GATE}]
  - id: save
    type: ACT
    owner: code
    tool: write_note
    reads: [note, note_path]
    writes: [saved]
    traces_to: [r_base{SAVE}]
  - id: done
    type: TERMINAL
    reads: [note]
edges:
  - {from: fetch, to: work}
  - {from: work, to: ask}
  - {from: ask, to: gate}
  - {from: gate, to: save, guard: answer == "yes"}
  - {from: gate, to: done}
  - {from: save, to: done}
faithfulness:
  obligations:
    - {id: r_base, kind: constraint, force: mandatory, quote: Keep it short.}
"#;

const SLOTS: [&str; 8] = ["KN", "FT", "WT", "FETCH", "WORK", "ASK", "GATE", "SAVE"];

/// The sink program with `r` traced on the elements named in `on`, and `extra` appended to
/// the record's obligations.
fn sink(on: &[&str], extra: &str) -> String {
    let mut text = SINK.to_owned();
    for slot in SLOTS {
        let with = if on.contains(&slot) { ", r" } else { "" };
        text = text.replace(&format!("{{{slot}}}"), with);
    }
    text + extra
}

fn read(text: &str) -> agir::Document {
    agir::read(text).unwrap_or_else(|e| panic!("fixture reads: {e:?}\n{text}"))
}

/// The audit of a program text, with a source text and the default configuration.
fn audit_text(text: &str, source: Option<&str>) -> ais_core::Audit {
    audit_with(text, source, &AuditConfig::default())
}

fn audit_with(text: &str, source: Option<&str>, config: &AuditConfig) -> ais_core::Audit {
    let doc = read(text);
    let a = audit(&doc.program, &doc.source_map, source, config);
    for f in &a.findings {
        assert!(f.pos.is_some(), "every finding is located: {f:?}");
        assert!(
            f.repair.is_some(),
            "every finding says what resolves it: {f:?}"
        );
        assert_eq!(f.severity, ais_core::Severity::Warn, "{f:?}");
    }
    a
}

/// The findings as (id, element, field) triples, for compact assertions.
fn shape(a: &ais_core::Audit) -> Vec<(CheckId, Element, Option<String>)> {
    a.findings
        .iter()
        .map(|f| {
            (
                f.id.check().expect("a check"),
                f.locus.element,
                f.locus.field.as_ref().map(|k| k.as_str().to_owned()),
            )
        })
        .collect()
}

fn id(f: &str) -> Option<String> {
    Some(f.to_owned())
}

#[test]
fn the_sink_program_is_clean_and_fully_realized() {
    let text = sink(&[], "");
    let doc = read(&text);
    let checked = check(&doc.program, &doc.source_map, Repairs::Off);
    assert!(checked.findings.is_empty(), "{:#?}", checked.findings);
    let a = audit_text(&text, None);
    assert!(a.findings.is_empty());
    assert_eq!(a.obligations.len(), 1);
    assert!(a.obligations[0].realized);
    assert_eq!(a.obligations[0].required, Some(Realization::Constraint));
    assert_eq!(a.obligations[0].traced_by.len(), 8);
}

/// Where an obligation of each kind and force is realized in the sink, and the realization it
/// requires.
fn realizing(kind: &ObligationKind, force: &Modality) -> (&'static [&'static str], Realization) {
    use ObligationKind as K;
    match (force, kind) {
        (Modality::Discretionary, K::Knowledge) => (&["KN"], Realization::Optional),
        // Behind the gate's guard: a run may skip it, so nothing is hardened.
        (Modality::Discretionary, _) => (&["SAVE"], Realization::Optional),
        (_, K::Knowledge) => (&["KN"], Realization::EmbodiedKnowledge),
        (Modality::Forbidden, _) => (&["WORK"], Realization::Constraint),
        (_, K::Step) => (&["WORK"], Realization::Instruction),
        (_, K::Io) => (&["SAVE"], Realization::WrittenArtifact),
        (_, K::HumanGate) => (&["GATE"], Realization::CodeGate),
        (_, K::Grounding) => (&["FT"], Realization::LiveTool),
        (_, K::Constraint) => (&["WORK"], Realization::Constraint),
        _ => unreachable!(),
    }
}

#[test]
fn every_kind_and_force_realized_is_clean_and_dropped_is_reported_at_the_obligation() {
    for kind in ObligationKind::ALL {
        for force in Modality::ALL {
            let line = format!(
                "    - {{id: r, kind: {}, force: {}, quote: The rule.}}\n",
                kind.as_str(),
                force.as_str()
            );
            let (on, want) = realizing(&kind, &force);
            let realized = audit_text(&sink(on, &line), None);
            assert!(
                realized.findings.is_empty(),
                "{kind:?} {force:?} realized on {on:?}: {:#?}",
                realized.findings
            );
            assert_eq!(realized.obligations[1].required, Some(want));
            assert!(realized.obligations[1].realized);

            let dropped = audit_text(&sink(&[], &line), None);
            let mut expected = Vec::new();
            if want.is_required() {
                expected.push((CheckId::F1, Element::Obligation(1), id("id")));
            }
            if want == Realization::WrittenArtifact {
                expected.push((CheckId::F4, Element::Obligation(1), id("id")));
            }
            assert_eq!(shape(&dropped), expected, "{kind:?} {force:?} dropped");
            assert_eq!(dropped.obligations[1].realized, !want.is_required());
            if want.is_required() {
                assert!(dropped.findings[0].message.contains("is dropped"));
            }
        }
    }
}

#[test]
fn a_realization_of_the_wrong_shape_is_a_drop() {
    // io traced to the SENSE that fetches the page: nothing writes it out.
    let io = "    - {id: r, kind: io, force: mandatory, quote: Save it.}\n";
    let a = audit_text(&sink(&["FETCH"], io), None);
    assert_eq!(
        shape(&a)[0],
        (CheckId::F1, Element::Obligation(1), id("id"))
    );
    assert!(
        a.findings[0].message.contains("no `ACT` that writes"),
        "{}",
        a.findings[0].message
    );
    assert!(!a.obligations[1].realized);
    // Traced to the model step that authors the note, it is realized through the carry the
    // ACT `save` writes out.
    assert!(audit_text(&sink(&["WORK"], io), None).findings.is_empty());
    // A human gate traced to the model step: the decision is the model's.
    let gate = "    - {id: r, kind: human_gate, force: mandatory, quote: Ask first.}\n";
    let a = audit_text(&sink(&["WORK"], gate), None);
    assert_eq!(shape(&a), [(CheckId::F1, Element::Obligation(1), id("id"))]);
    // The ask step, whose answer the code ROUTE decides on, is a gate.
    let a = audit_text(&sink(&["ASK"], gate), None);
    assert!(a.findings.is_empty(), "{:#?}", a.findings);
    // A step traced only to an instruction no run reaches.
    let step = "    - {id: r, kind: step, force: mandatory, quote: Do it.}\n";
    let text = sink(&["WORK"], step).replace(
        "  - {from: fetch, to: work}\n",
        "  - {from: fetch, to: ask}\n",
    );
    let a = audit_text(&text, None);
    let f = a
        .findings
        .iter()
        .find(|f| f.locus.element == Element::Obligation(1))
        .expect("dropped");
    assert!(f.message.contains("not on a path"), "{}", f.message);
}

#[test]
fn a_bearer_other_than_the_agent_is_carried_not_required() {
    let text = sink(
        &[],
        "    - {id: r, kind: step, force: mandatory, bearer: user, quote: The user signs.}\n    - {id: r2, kind: knowledge, force: forbidden, bearer: environment, quote: The harness never guesses.}\n",
    );
    let a = audit_text(&text, None);
    assert_eq!(a.obligations[1].required, Some(Realization::Carried));
    assert_eq!(
        a.obligations[2].required,
        Some(Realization::EmbodiedKnowledge)
    );
    assert_eq!(shape(&a), [(CheckId::F1, Element::Obligation(2), id("id"))]);
}

#[test]
fn an_added_instruction_is_reported_and_scaffolding_is_not() {
    let text = sink(&[], "").replace(
        "  - id: done\n",
        "  - id: joke\n    type: GEN-RAW\n    reads: [note]\n    writes: [note]\n    doc: Add a joke.\n  - id: done\n",
    ).replace("  - {from: save, to: done}\n", "  - {from: save, to: joke}\n  - {from: joke, to: done}\n");
    let a = audit_text(&text, None);
    assert_eq!(shape(&a), [(CheckId::F1, Element::Instruction(5), None)]);
    assert!(a.findings[0].message.contains("`joke` is added"));
    assert_eq!(a.findings[0].instruction.as_deref(), Some("joke"));
    assert_eq!(a.findings[0].kind, Some(FindingKind::AddedElement));
    // The gate routes a traced step's result: scaffolding, even untraced; TERMINAL too.
    let text = sink(&[], "").replace("    traces_to: [r_base]\n  - id: save", "  - id: save");
    let a = audit_text(&text, None);
    assert!(a.findings.is_empty(), "{:#?}", a.findings);
    // An empty `traces_to` is pointed at itself.
    let text = sink(&[], "").replace(
        "    doc: Write the note.\n    traces_to: [r_base]",
        "    doc: Write the note.\n    traces_to: []",
    );
    let a = audit_text(&text, None);
    assert_eq!(
        shape(&a),
        [(CheckId::F1, Element::Instruction(1), id("traces_to"))]
    );
}

#[test]
fn an_edge_mandatory_where_the_source_says_may_is_re_modalized() {
    let may = "    - {id: r, kind: step, force: discretionary, quote: You may save it.}\n";
    // The unguarded edge save → done traces the optional obligation: mandatory by default.
    let text = sink(&["SAVE"], may).replace(
        "  - {from: save, to: done}",
        "  - {from: save, to: done, traces_to: [r]}",
    );
    let a = audit_text(&text, None);
    assert_eq!(shape(&a), [(CheckId::F1, Element::Edge(5), None)]);
    assert!(
        a.findings[0]
            .message
            .contains("is mandatory but realizes `r` (step, discretionary)")
    );
    // Stated as discretionary, it agrees.
    let text = sink(&["SAVE"], may).replace(
        "  - {from: save, to: done}",
        "  - {from: save, to: done, modality: discretionary, traces_to: [r]}",
    );
    assert!(audit_text(&text, None).findings.is_empty());
    // A step every run performs that the source leaves optional is hardened.
    let a = audit_text(&sink(&["WORK"], may), None);
    assert_eq!(
        shape(&a),
        [(CheckId::F1, Element::Instruction(1), id("traces_to"))]
    );
    assert!(a.findings[0].message.contains("hardened from may to must"));
}

#[test]
fn an_edge_discretionary_where_the_source_says_must_is_re_modalized() {
    let must = "    - {id: r, kind: step, force: mandatory, quote: Save it.}\n";
    let text = sink(&["WORK"], must).replace(
        "  - {from: fetch, to: work}",
        "  - {from: fetch, to: work, modality: discretionary, traces_to: [r]}",
    );
    let a = audit_text(&text, None);
    let got = shape(&a);
    assert!(
        got.contains(&(CheckId::F1, Element::Edge(0), id("modality"))),
        "{got:?}"
    );
    // Every edge into `work` is discretionary: the step itself is softened.
    assert!(
        got.contains(&(CheckId::F1, Element::Instruction(1), id("traces_to"))),
        "{got:?}"
    );
    assert!(
        a.findings
            .iter()
            .any(|f| f.message.contains("softened from must to may"))
    );
    // A forbidden obligation traced on a transition the program takes.
    let never = "    - {id: r, kind: step, force: forbidden, quote: Never save without asking.}\n";
    let text = sink(&["WORK"], never).replace(
        "  - {from: save, to: done}",
        "  - {from: save, to: done, traces_to: [r]}",
    );
    let a = audit_text(&text, None);
    assert_eq!(shape(&a), [(CheckId::F1, Element::Edge(5), None)]);
    assert!(a.findings[0].message.contains("which the source forbids"));
    // Marked forbidden, the edge is a record, not a transition.
    let text = sink(&["WORK"], never).replace(
        "  - {from: save, to: done}",
        "  - {from: save, to: done}\n  - {from: work, to: save, modality: forbidden, traces_to: [r]}",
    );
    assert!(audit_text(&text, None).findings.is_empty());
}

#[test]
fn a_prose_pointer_to_the_source_is_delete_the_source() {
    let text = sink(&[], "").replace(
        "doc: Write the note.",
        "doc: Write the note as SKILL.md describes.",
    );
    let a = audit_text(&text, None);
    assert_eq!(
        shape(&a),
        [(CheckId::F2, Element::Instruction(1), id("doc"))]
    );
    assert!(
        a.findings[0]
            .message
            .contains("points at the source (`skill.md`)")
    );
    // The recorded source's own name counts too, and a pointer to a sibling document.
    let text = sink(&[], "").replace("doc: Write the note.", "doc: See guide.md for the format.")
        + "  source: {path: docs/GUIDE-SKILL.md}\n";
    let text = text.replace(
        "faithfulness:\n  obligations:",
        "faithfulness:\n  source: {path: skills/notes.md}\n  obligations:",
    );
    let text = text.replace("  source: {path: docs/GUIDE-SKILL.md}\n", "");
    let a = audit_text(&text, None);
    assert_eq!(
        shape(&a),
        [(CheckId::F2, Element::Instruction(1), id("doc"))]
    );
    let text = sink(&[], "")
        .replace("doc: Write the note.", "doc: Follow notes.md.")
        .replace(
            "faithfulness:\n  obligations:",
            "faithfulness:\n  source: {path: skills/notes.md}\n  obligations:",
        );
    let a = audit_text(&text, None);
    assert!(
        a.findings[0].message.contains("`notes.md`"),
        "{:#?}",
        a.findings
    );
}

/// Another skill's `SKILL.md`, named by its directory (the writing-plans header template hands
/// over to `superpowers:executing-plans/SKILL.md`), is not the source: no F2. The source's own
/// directory, or no directory, still is.
#[test]
fn another_skills_skill_md_is_not_the_source() {
    let with = |doc: &str| {
        sink(&[], "").replace("doc: Write the note.", doc).replace(
            "faithfulness:\n  obligations:",
            "faithfulness:\n  source: {path: ../skills/writing-plans/SKILL.md}\n  obligations:",
        )
    };
    let other = with("doc: \"Write the note; hand over to superpowers:executing-plans/SKILL.md.\"");
    let a = audit_text(&other, None);
    assert!(a.findings.is_empty(), "{:#?}", a.findings);
    for own in [
        "doc: \"Write the note as writing-plans/SKILL.md says.\"",
        "doc: \"Write the note as SKILL.md says.\"",
    ] {
        let a = audit_text(&with(own), None);
        assert_eq!(
            shape(&a),
            [(CheckId::F2, Element::Instruction(1), id("doc"))],
            "{own}"
        );
    }
}

#[test]
fn a_sibling_file_referenced_and_not_embodied_is_bundle_depth() {
    let rule = "    - {id: r, kind: knowledge, force: mandatory, quote: Read forms.md completely before filling the form.}\n";
    // Only a tool that opens the file: a pointer, so F1 (dropped) and F3.
    let pointer = sink(&[], rule).replace(
        "walker:",
        "  read_forms:\n    surface: SENSE\n    traces_to: [r]\n    body: |\n      def read_forms():\n          return open(\"forms.md\").read()\nwalker:",
    );
    let a = audit_text(&pointer, None);
    let got = shape(&a);
    assert!(
        got.contains(&(CheckId::F1, Element::Obligation(1), id("id"))),
        "{got:?}"
    );
    assert!(
        got.contains(&(CheckId::F3, Element::Obligation(1), id("quote"))),
        "{got:?}"
    );
    let f3 = a.findings.iter().find(|f| f.id == CheckId::F3).unwrap();
    assert!(
        f3.message.contains("`forms.md`") && f3.message.contains("`read_forms`"),
        "{}",
        f3.message
    );
    // Its content carried as knowledge traced to the rule: embodied.
    let embodied = sink(&[], rule).replace(
        "tools:",
        "  forms:\n    resident_on: [work]\n    template: Set each field by field_id; mark checkboxes with their checked_value.\n    traces_to: [r]\ntools:",
    );
    assert!(audit_text(&embodied, None).findings.is_empty());
    // Named only in the source text, on a line that sends the reader to it.
    let source =
        "Keep it short.\nRead references/style.md before writing.\nSave the note to note.md.\n";
    let a = audit_text(&sink(&[], ""), Some(source));
    assert_eq!(
        shape(&a),
        [(CheckId::F3, Element::Faithfulness, id("path"))]
    );
    assert!(a.findings[0].message.contains("references/style.md"));
}

#[test]
fn a_deliverable_with_no_typed_carrier_is_carrier_completeness() {
    let io = "    - {id: r, kind: io, force: mandatory, quote: Save the note.}\n";
    // `saved` untyped: the only carry that holds the deliverable has no type.
    let text = sink(&["SAVE"], io)
        .replace(
            "saved: {type: str, produced_by: save}",
            "saved: {produced_by: save}",
        )
        .replace(
            "note: {type: str, produced_by: work}",
            "note: {produced_by: work}",
        );
    let a = audit_text(&text, None);
    assert_eq!(shape(&a), [(CheckId::F4, Element::Obligation(1), id("id"))]);
    assert!(
        a.findings[0].message.contains("untyped"),
        "{}",
        a.findings[0].message
    );
    assert!(
        a.findings[0]
            .repair
            .as_ref()
            .unwrap()
            .summary
            .contains("widen the typed carrier")
    );
    // Typed: complete.
    assert!(audit_text(&sink(&["SAVE"], io), None).findings.is_empty());
}

#[test]
fn fan_out_over_the_cap_is_g10_and_under_it_is_not() {
    let rules = "    - {id: r1, kind: step, force: mandatory, quote: One.}\n    - {id: r2, kind: step, force: mandatory, quote: Two.}\n    - {id: r3, kind: io, force: mandatory, quote: Three.}\n    - {id: r4, kind: constraint, force: forbidden, quote: Never four.}\n";
    let text = sink(&[], rules)
        .replace(
            "    doc: Write the note.\n    traces_to: [r_base]",
            "    doc: Write the note.\n    traces_to: [r_base, r1, r2, r4]",
        )
        .replace(
            "    writes: [saved]\n    traces_to: [r_base]",
            "    writes: [saved]\n    traces_to: [r_base, r3]",
        );
    let cap = |n| AuditConfig { fan_out_cap: n };
    // Two procedures on `work` (the prohibition is not counted): over a cap of 1, not of 2.
    let a = audit_with(&text, None, &cap(1));
    assert_eq!(
        shape(&a),
        [(CheckId::G10, Element::Instruction(1), id("traces_to"))]
    );
    assert!(
        a.findings[0]
            .message
            .contains("claims 2 distinct procedural obligations")
    );
    assert!(audit_with(&text, None, &cap(2)).findings.is_empty());
    // A tool claiming them, likewise.
    let text = text.replace(
        "    traces_to: [r_base]\n    body: |\n      def write_note",
        "    traces_to: [r_base, r1, r2, r3]\n    body: |\n      def write_note",
    );
    let a = audit_with(&text, None, &cap(2));
    assert_eq!(
        shape(&a),
        [(CheckId::G10, Element::Tool(1), id("traces_to"))]
    );
}

#[test]
fn a_rule_naming_a_bundle_file_is_g11_unless_something_touches_it() {
    let rule = "    - {id: r, kind: step, force: mandatory, quote: \"Run `scripts/check.py` on the note.\"}\n";
    let untouched = sink(&["WORK"], rule);
    let a = audit_text(&untouched, None);
    let got = shape(&a);
    assert!(
        got.contains(&(CheckId::G11, Element::Obligation(1), id("quote"))),
        "{got:?}"
    );
    assert!(
        got.contains(&(CheckId::F3, Element::Obligation(1), id("quote"))),
        "{got:?}"
    );
    // A tool whose command runs it touches it (G11); running it from the bundle is still F3.
    let touched = untouched.replace(
        "walker:",
        "  check_note:\n    sig: \"(note) -> outcome\"\n    command: \"python scripts/check.py {note}\"\n    traces_to: [r]\nwalker:",
    );
    let a = audit_text(&touched, None);
    assert_eq!(
        shape(&a),
        [(CheckId::F3, Element::Obligation(1), id("quote"))]
    );
    // The script's text as the tool's body: embodied, both satisfied.
    let embodied = untouched.replace(
        "walker:",
        "  check_py:\n    sig: \"(note) -> str\"\n    traces_to: [r]\n    body: |\n      def check_py(note):\n          return \"ok\" if note.strip() else \"empty\"\nwalker:",
    );
    let a = audit_text(&embodied, None);
    assert!(a.findings.is_empty(), "{:#?}", a.findings);
}

#[test]
fn quotes_must_be_verbatim_in_the_source_and_the_digest_must_match() {
    let source = "# Notes\n\nKeep it\n   short.\n";
    // Whitespace differs: still verbatim.
    assert!(audit_text(&sink(&[], ""), Some(source)).findings.is_empty());
    let paraphrase = sink(&[], "").replace("quote: Keep it short.", "quote: Keep it brief.");
    let a = audit_text(&paraphrase, Some(source));
    assert_eq!(
        shape(&a),
        [(CheckId::F1, Element::Obligation(0), id("quote"))]
    );
    // The digest of another text.
    let stale = sink(&[], "").replace(
        "faithfulness:\n",
        "faithfulness:\n  source: {path: SKILL.md, digest: \"sha256:0000000000000000000000000000000000000000000000000000000000000000\"}\n",
    );
    let a = audit_text(&stale, Some(source));
    assert_eq!(
        shape(&a),
        [(CheckId::F1, Element::Faithfulness, id("digest"))]
    );
    assert!(a.findings[0].message.contains("has changed since the lift"));
    let digest = {
        use sha2::{Digest, Sha256};
        let h = Sha256::digest(source.as_bytes());
        h.iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    let fresh = stale.replace(&"0".repeat(64), &digest);
    assert!(audit_text(&fresh, Some(source)).findings.is_empty());
    // Without the source, neither is checked.
    assert!(audit_text(&paraphrase, None).findings.is_empty());
}

#[test]
fn an_accepted_deviation_silences_its_finding_and_one_without_a_reason_does_not() {
    let rule = "    - {id: r, kind: step, force: mandatory, quote: Sign it.}\n";
    let accepted = sink(&[], rule)
        + "  deviations:\n    - {obligation: r, kind: dropped, reason: The target has no signing key.}\n";
    let a = audit_text(&accepted, None);
    assert!(a.findings.is_empty(), "{:#?}", a.findings);
    assert_eq!(a.accepted.len(), 1);
    assert!(a.accepted[0].1.contains("is dropped"));
    let unreasoned = sink(&[], rule) + "  deviations:\n    - {obligation: r, kind: dropped}\n";
    let a = audit_text(&unreasoned, None);
    let got = shape(&a);
    assert!(
        got.contains(&(CheckId::F1, Element::AcceptedDeviation(0), None)),
        "{got:?}"
    );
    assert!(
        got.contains(&(CheckId::F1, Element::Obligation(1), id("id"))),
        "{got:?}"
    );
}

#[test]
fn the_record_itself_is_checked() {
    let text = sink(&[], "    - {id: r, kind: procedure, force: must, quote: x}\n    - {id: r_base, kind: step, force: mandatory, quote: y}\n")
        .replace("traces_to: [r_base]\n  - id: ask", "traces_to: [r_bse]\n  - id: ask");
    let a = audit_text(&text, None);
    let got = shape(&a);
    assert!(
        got.contains(&(CheckId::F1, Element::Obligation(1), id("kind"))),
        "{got:?}"
    );
    assert!(
        got.contains(&(CheckId::F1, Element::Obligation(1), id("force"))),
        "{got:?}"
    );
    assert!(
        got.contains(&(CheckId::F1, Element::Obligation(2), id("id"))),
        "{got:?}"
    ); // duplicate
    let dangling = a
        .findings
        .iter()
        .find(|f| f.locus == Locus::entry(Element::Instruction(1), FieldKey::TracesTo, 0))
        .expect("dangling trace");
    assert_eq!(dangling.did_you_mean, ["r_base"]);
    let kind = a
        .findings
        .iter()
        .find(|f| f.locus.field == Some(FieldKey::Kind))
        .unwrap();
    assert!(
        kind.repair
            .as_ref()
            .unwrap()
            .summary
            .contains("`human_gate`")
    );
    // `realized_by` that disagrees with `traces_to`.
    let text = sink(
        &[],
        "    - {id: r, kind: step, force: mandatory, quote: x, realized_by: [work, \"tool:nope\"]}\n",
    );
    let a = audit_text(&text, None);
    let got = shape(&a);
    assert!(
        got.contains(&(CheckId::F1, Element::Obligation(1), id("realized_by"))),
        "{got:?}"
    );
    assert_eq!(
        a.findings
            .iter()
            .filter(|f| f.locus.field == Some(FieldKey::RealizedBy))
            .count(),
        2
    );
    // All optional: vacuous.
    let text = sink(&[], "").replace(
        "kind: constraint, force: mandatory",
        "kind: step, force: discretionary",
    );
    let a = audit_text(&text, None);
    assert!(
        a.findings.iter().any(|f| f.message.contains("vacuous")),
        "{:#?}",
        a.findings
    );
}

#[test]
fn check_runs_the_audit_and_a_program_without_obligations_has_none() {
    let text = sink(
        &[],
        "    - {id: r, kind: step, force: mandatory, quote: Sign it.}\n",
    );
    let doc = read(&text);
    let checked = check(&doc.program, &doc.source_map, Repairs::Off);
    assert_eq!(checked.findings.len(), 1);
    assert_eq!(checked.findings[0].id, CheckId::F1);
    assert_eq!(checked.outcome, ais_core::Outcome::Degraded);
    let bare = text.split("faithfulness:").next().unwrap().to_owned()
        + "faithfulness: {verdict: FAITHFUL}\n";
    let doc = read(&bare);
    assert!(
        check(&doc.program, &doc.source_map, Repairs::Off)
            .findings
            .is_empty()
    );
    assert!(
        audit(
            &doc.program,
            &SourceMap::new(),
            None,
            &AuditConfig::default()
        )
        .findings
        .is_empty()
    );
}

#[test]
fn the_provenance_record_reads_and_writes_canonically() {
    let text = r#"faithfulness:
  source:
    path: "SKILL.md"
    digest: "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
  obligations:
    - id: r_validate
      kind: step
      force: mandatory
      bearer: agent
      quote: "Run the validator before shipping."
      realized_by: [validate, "tool:run_validator", "edge:a->b"]
      statement: run the validator
    - id: r_gate
      kind: human_gate
      force: mandatory
  deviations:
    - obligation: r_gate
      kind: dropped
      element: carry:answer
      reason: "batch runs have no human"
  verdict: FAITHFUL
"#;
    let doc = read(text);
    let f = doc.program.faithfulness.as_ref().unwrap();
    assert_eq!(f.obligation_list()[0].kind, Some(ObligationKind::Step));
    assert_eq!(f.obligation_list()[1].kind, Some(ObligationKind::HumanGate));
    assert_eq!(
        f.obligation_list()[0].realized_by.as_ref().unwrap()[2],
        ais_core::ElementRef::Edge {
            from: "a".into(),
            to: "b".into()
        }
    );
    assert_eq!(f.obligation_list()[0].extra[0].0, "statement");
    assert_eq!(f.extra[0].0, "verdict");
    let written = agir::write(&doc.program);
    assert_eq!(
        written, text,
        "canonical text is written back byte for byte"
    );
    assert_eq!(read(&written).program, doc.program);
    // Positions: each obligation and its fields.
    assert!(
        doc.source_map
            .lookup(&Locus::field(Element::Obligation(1), FieldKey::Id))
            .is_some()
    );
    assert!(
        doc.source_map
            .lookup(&Locus::entry(
                Element::Obligation(0),
                FieldKey::RealizedBy,
                2
            ))
            .is_some()
    );
}

#[test]
fn a_malformed_record_is_a_read_error_that_says_where_and_what_to_write() {
    for (text, says) in [
        (
            "faithfulness: FAITHFUL\n",
            "`faithfulness` should be a mapping",
        ),
        (
            "faithfulness:\n  obligations: {r1: x}\n",
            "`faithfulness.obligations` should be a list",
        ),
        (
            "faithfulness:\n  obligations:\n    - {kind: step}\n",
            "has no `id`",
        ),
        (
            "faithfulness:\n  obligations:\n    - {id: [a]}\n",
            "should be a piece of text",
        ),
        (
            "faithfulness:\n  obligations:\n    - {id: r, realized_by: {a: b}}\n",
            "should be a list of names",
        ),
        (
            "faithfulness:\n  deviations: x\n",
            "`faithfulness.deviations` should be a list",
        ),
    ] {
        let err = agir::read(text).expect_err(text);
        assert!(err.message.contains(says), "{text}: {}", err.message);
        assert!(err.pos.is_some() && err.help.is_some(), "{text}: {err:?}");
    }
}

#[test]
fn check_carries_the_audit_standing_and_its_accepted_deviations() {
    let rule = "    - {id: r, kind: step, force: mandatory, quote: Sign it.}\n";
    let accepted = sink(&[], rule)
        + "  deviations:\n    - {obligation: r, kind: dropped, reason: The target has no signing key.}\n";
    let doc = ais_core::agir::read(&accepted).unwrap();
    let checked = ais_core::check(&doc.program, &doc.source_map, ais_core::Repairs::Off);
    let standing = checked
        .faithfulness
        .as_ref()
        .expect("the program has a record");
    assert_eq!(standing.accepted, audit_text(&accepted, None).accepted);
    assert_eq!(standing.accepted.len(), 1);
    assert!(standing.obligations.iter().any(|o| o.id == "r"));
    // Its findings are the check's own audit findings.
    let audit_findings: Vec<&str> = checked
        .findings
        .iter()
        .filter(|f| f.id.check().is_some_and(ais_core::is_audit_check))
        .map(|f| f.message.as_str())
        .collect();
    let standing_findings: Vec<&str> = standing
        .findings
        .iter()
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(audit_findings, standing_findings);
    // No record, no standing.
    let plain = ais_core::agir::read("nodes:\n  - {id: done, type: TERMINAL}\n").unwrap();
    let checked = ais_core::check(&plain.program, &plain.source_map, ais_core::Repairs::Off);
    assert!(checked.faithfulness.is_none());
}
