//! The reference implementation's faithfulness verdicts (sigil `faith.test.jac`, G10/G11 in
//! `gates.test.jac`) reproduced: each case's program (the corpus copy where there is one, read
//! in place from `../shared/corpus/sigil-fixtures`, else the case's own nodes written as
//! AG-IR) with the case's rule set as the program's provenance record. Where our verdict
//! differs, the test says so and why (the spec wins); the note of issue 33 lists them.
//!
//! And the audit over every corpus program: no panic, every finding located.

use ais_core::{AuditConfig, CheckId, Element, Realization, SourceMap, agir, audit};

use crate::support;
use support::{agir_files, corpus};

/// A corpus program's text, with `record` (the body of a `faithfulness:` section) appended.
fn corpus_with(rel: &str, record: &str) -> Option<String> {
    let root = corpus()?;
    let text = std::fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    Some(format!("{}\nfaithfulness:\n{record}", text.trim_end()))
}

fn run(text: &str, cap: usize) -> ais_core::Audit {
    let doc = agir::read(text).unwrap_or_else(|e| panic!("reads: {e:?}\n{text}"));
    let a = audit(
        &doc.program,
        &doc.source_map,
        None,
        &AuditConfig { fan_out_cap: cap },
    );
    for f in &a.findings {
        assert!(f.pos.is_some(), "located: {f:?}");
    }
    a
}

/// The obligations reported dropped, by id.
fn dropped(a: &ais_core::Audit) -> Vec<&str> {
    a.dropped().map(|o| o.id.as_str()).collect()
}

/// The instructions reported added, by id.
fn added(a: &ais_core::Audit) -> Vec<String> {
    a.findings
        .iter()
        .filter(|f| f.id == CheckId::F1 && f.message.contains("is added"))
        .filter_map(|f| f.instruction.clone())
        .collect()
}

#[test]
fn required_shape_covers_every_kind_and_force_never_outranks_knowledge() {
    use ais_core::{Bearer, Modality as M, ObligationKind as K};
    let r = |k, m, b| Realization::required(&k, &m, &b);
    let agent = Bearer::Agent;
    assert_eq!(
        r(K::Constraint, M::Forbidden, agent.clone()),
        Some(Realization::Constraint)
    );
    assert_eq!(
        r(K::Step, M::Forbidden, agent.clone()),
        Some(Realization::Constraint)
    );
    assert_eq!(
        r(K::Knowledge, M::Forbidden, agent.clone()),
        Some(Realization::EmbodiedKnowledge)
    );
    assert_eq!(
        r(K::Step, M::Discretionary, agent.clone()),
        Some(Realization::Optional)
    );
    assert_eq!(
        r(K::Io, M::Discretionary, agent.clone()),
        Some(Realization::Optional)
    );
    assert_eq!(
        r(K::Step, M::Mandatory, agent.clone()),
        Some(Realization::Instruction)
    );
    assert_eq!(
        r(K::Io, M::Mandatory, agent.clone()),
        Some(Realization::WrittenArtifact)
    );
    assert_eq!(
        r(K::HumanGate, M::Mandatory, agent.clone()),
        Some(Realization::CodeGate)
    );
    assert_eq!(
        r(K::Knowledge, M::Mandatory, agent.clone()),
        Some(Realization::EmbodiedKnowledge)
    );
    assert_eq!(
        r(K::Grounding, M::Mandatory, agent),
        Some(Realization::LiveTool)
    );
    // A non-agent bearer is carried, not obligated — except facts, still embodied.
    assert_eq!(
        r(K::Step, M::Mandatory, Bearer::Environment),
        Some(Realization::Carried)
    );
    assert_eq!(
        r(K::Step, M::Forbidden, Bearer::User),
        Some(Realization::Carried)
    );
    assert_eq!(
        r(K::Knowledge, M::Forbidden, Bearer::Environment),
        Some(Realization::EmbodiedKnowledge)
    );
}

const FOLD_RULES: &str = "  obligations:\n    - {id: r_step, kind: step, force: mandatory, quote: Resolve the residue}\n    - {id: r_forbid, kind: constraint, force: forbidden, quote: do not solve the same thing 12 different ways}\n";

#[test]
fn fold_ir_an_untraced_prohibition_is_dropped_until_it_is_folded_onto_the_slot() {
    let Some(text) = corpus_with("faith_test/FOLD_IR.agir", FOLD_RULES) else {
        return;
    };
    let a = run(&text, 12);
    // The reference: r_forbid DROPPED (CONSTRAINT). Ours: the same — and r_step too, because
    // FOLD_IR has no edges, so `fix` is on no path to TERMINAL (spec W5/W6: with no edges no
    // run reaches anything past the entry). Argued in the note; with edges, r_step is realized.
    assert_eq!(dropped(&a), ["r_step", "r_forbid"]);
    let edges = "edges:\n  - {from: fix, to: verify}\n  - {from: verify, to: done}\n";
    let text = text.replace("faithfulness:\n", &format!("{edges}faithfulness:\n"));
    assert_eq!(dropped(&run(&text, 12)), ["r_forbid"]);
    // Folded (r_forbid traced on the model slot): the closure passes.
    let folded = text.replace(
        "    traces_to: [r_step]",
        "    traces_to: [r_step, r_forbid]",
    );
    let a = run(&folded, 12);
    assert!(dropped(&a).is_empty());
    // `verify` traces to r_check, which this rule set does not list: dangling, as the
    // reference's soundness check says too.
    assert!(
        a.findings
            .iter()
            .any(|f| f.message.contains("`r_check`, which is no obligation"))
    );
}

#[test]
fn all_code_ir_a_constraint_folds_onto_code_nodes() {
    let rules = "  obligations:\n    - {id: r_step, kind: step, force: mandatory, quote: Parse the route table}\n    - {id: r_write, kind: step, force: mandatory, quote: Write the report}\n    - {id: r_policy, kind: constraint, force: mandatory, quote: Fix problems using routing policy rather than changing topology}\n";
    let Some(text) = corpus_with("faith_test/ALL_CODE_IR.agir", rules) else {
        return;
    };
    let edges = "edges:\n  - {from: parse, to: emit}\n  - {from: emit, to: done}\n";
    let text = text.replace("faithfulness:\n", &format!("{edges}faithfulness:\n"));
    assert_eq!(dropped(&run(&text, 12)), ["r_policy"]);
    let folded = text.replace("traces_to: [r_step]", "traces_to: [r_step, r_policy]");
    assert!(dropped(&run(&folded, 12)).is_empty());
}

#[test]
fn inline_l144_a_parseable_program_with_real_gaps_drops_both_and_adds_one() {
    let rules = "  obligations:\n    - {id: r1, kind: step, force: mandatory, quote: Parse the route table}\n    - {id: r2, kind: step, force: mandatory, quote: Write the report}\n";
    let Some(text) = corpus_with("faith_test/inline_L144.agir", rules) else {
        return;
    };
    let a = run(&text, 12);
    assert_eq!(dropped(&a), ["r1", "r2"]);
    assert_eq!(added(&a), ["x"]);
}

#[test]
fn a_non_agent_step_is_skipped_but_its_knowledge_is_demanded() {
    let text = "nodes:\n  - {id: fix, type: GEN-RAW, doc: Resolve the residue., traces_to: [r_step]}\n  - {id: done, type: TERMINAL}\nedges:\n  - {from: fix, to: done}\nfaithfulness:\n  obligations:\n    - {id: r_env, kind: step, force: mandatory, bearer: environment, quote: the harness rewrites the imports}\n    - {id: r_fact, kind: knowledge, force: forbidden, bearer: environment, quote: it never silently guesses}\n    - {id: r_step, kind: step, force: mandatory, quote: Resolve the residue}\n";
    let a = run(text, 12);
    assert_eq!(dropped(&a), ["r_fact"]);
    assert_eq!(
        a.obligations[1].required,
        Some(Realization::EmbodiedKnowledge)
    );
}

#[test]
fn a_dropped_prohibition_is_caught_and_traced_onto_its_slot_is_realized() {
    let rules = "faithfulness:\n  obligations:\n    - {id: r_forbid, kind: constraint, force: forbidden, quote: Never use Unicode subscript/superscript characters}\n    - {id: r_step, kind: step, force: mandatory, quote: Merge the PDFs}\n";
    let dropped_text = format!(
        "nodes:\n  - {{id: merge, type: CODE, body: \"1\", traces_to: [r_step]}}\n  - {{id: done, type: TERMINAL}}\nedges:\n  - {{from: merge, to: done}}\n{rules}"
    );
    let a = run(&dropped_text, 12);
    assert_eq!(dropped(&a), ["r_forbid"]);
    assert_eq!(a.obligations[0].required, Some(Realization::Constraint));
    assert!(a.findings[0].message.contains("is dropped"));
    let traced = format!(
        "nodes:\n  - {{id: create, type: GEN-RAW, doc: Author the PDF. NEVER use Unicode subscripts., traces_to: [r_step, r_forbid]}}\n  - {{id: done, type: TERMINAL}}\nedges:\n  - {{from: create, to: done}}\n{rules}"
    );
    assert!(dropped(&run(&traced, 12)).is_empty());
}

#[test]
fn a_human_gate_is_a_code_owned_route_not_a_model_that_asks() {
    let rules = "faithfulness:\n  obligations:\n    - {id: r_gate, kind: human_gate, force: mandatory, quote: confirm before deleting}\n";
    let model = format!(
        "nodes:\n  - {{id: ask, type: GEN-RAW, doc: Ask., traces_to: [r_gate]}}\n  - {{id: done, type: TERMINAL}}\nedges:\n  - {{from: ask, to: done}}\n{rules}"
    );
    let a = run(&model, 12);
    assert_eq!(dropped(&a), ["r_gate"]);
    assert_eq!(a.obligations[0].required, Some(Realization::CodeGate));
    let code = format!(
        "walker:\n  carries:\n    ok: {{type: bool, role: input}}\nnodes:\n  - {{id: gate, type: ROUTE, owner: code, reads: [ok], traces_to: [r_gate]}}\n  - {{id: done, type: TERMINAL}}\nedges:\n  - {{from: gate, to: done, guard: ok == true}}\n  - {{from: gate, to: done}}\n{rules}"
    );
    assert!(dropped(&run(&code, 12)).is_empty());
}

#[test]
fn a_mandatory_io_rule_needs_a_write_not_just_a_node() {
    let rules = "faithfulness:\n  obligations:\n    - {id: r_io, kind: io, force: mandatory, quote: save the result to the output file}\n";
    let authored = format!(
        "walker:\n  carries:\n    out: {{type: str, produced_by: draft}}\nnodes:\n  - {{id: draft, type: GEN-RAW, doc: Draft., writes: [out], traces_to: [r_io]}}\n  - {{id: done, type: TERMINAL}}\nedges:\n  - {{from: draft, to: done}}\n{rules}"
    );
    assert_eq!(dropped(&run(&authored, 12)), ["r_io"]);
    let written = authored
        .replace(
            "  - {id: done, type: TERMINAL}",
            "  - {id: save, type: ACT, owner: code, tool: write_file, reads: [out], writes: [saved]}\n  - {id: done, type: TERMINAL}",
        )
        .replace("  - {from: draft, to: done}", "  - {from: draft, to: save}\n  - {from: save, to: done}")
        .replace("walker:\n", "tools:\n  write_file:\n    surface: ACT\n    serves: [save]\n    body: |\n      def write_file(content, path):\n          open(path,'w').write(content)\n          return path\nwalker:\n");
    assert!(dropped(&run(&written, 12)).is_empty());
}

#[test]
fn discretionary_guidance_is_never_required() {
    let text = "nodes:\n  - {id: done, type: TERMINAL}\nfaithfulness:\n  obligations:\n    - {id: r_may, kind: step, force: discretionary, quote: you may compress the output}\n";
    let a = run(text, 12);
    assert!(dropped(&a).is_empty());
    // The reference reports nothing; we add that the verdict is vacuous (its `vacuous` flag).
    assert_eq!(a.findings.len(), 1);
    assert!(a.findings[0].message.contains("vacuous"));
}

#[test]
fn an_untraced_node_is_added_terminal_is_exempt_and_dangling_provenance_is_caught() {
    let text = "nodes:\n  - {id: a, type: CODE, body: \"1\", traces_to: [r1]}\n  - {id: b, type: GEN-RAW, doc: x, traces_to: []}\n  - {id: done, type: TERMINAL, traces_to: []}\nedges:\n  - {from: a, to: b}\n  - {from: b, to: done}\nfaithfulness:\n  obligations:\n    - {id: r1, kind: step, force: mandatory, quote: x}\n";
    assert_eq!(added(&run(text, 12)), ["b"]);
    let dangling = "nodes:\n  - {id: a, type: CODE, body: \"1\", traces_to: [r_nope]}\nfaithfulness:\n  obligations:\n    - {id: r1, kind: step, force: mandatory, quote: x}\n";
    let a = run(dangling, 12);
    assert!(
        a.findings
            .iter()
            .any(|f| f.message.contains("`r_nope`, which is no obligation"))
    );
}

const IR_YAML_RULES: &str = "  obligations:\n    - {id: r_step, kind: step, force: mandatory, quote: build it}\n    - {id: r_io, kind: io, force: mandatory, quote: write it}\n";

#[test]
fn ir_yaml_unfaithful_with_a_dropped_prohibition_faithful_without_it() {
    let forbid = format!(
        "{IR_YAML_RULES}    - {{id: r_forbid, kind: constraint, force: forbidden, quote: never overwrite the input}}\n"
    );
    let Some(text) = corpus_with("faith_test/IR_YAML.agir", &forbid) else {
        return;
    };
    // As written, IR_YAML has no edges: no instruction past the entry runs. The reference
    // (which reads no control flow) realizes r_step and r_io; we report both dropped too,
    // since neither is on a path to TERMINAL (W5, W7 report the missing edges).
    assert_eq!(dropped(&run(&text, 12)), ["r_step", "r_io", "r_forbid"]);
    let edges = "edges:\n  - {from: build, to: write_out}\n  - {from: write_out, to: done}\n";
    let with_edges = text.replace("faithfulness:\n", &format!("{edges}faithfulness:\n"));
    let a = run(&with_edges, 12);
    assert_eq!(dropped(&a), ["r_forbid"]);
    let realized = a.obligations.iter().filter(|o| o.realized).count();
    assert_eq!((a.obligations.len(), realized), (3, 2));
    let faithful = with_edges.replace(
        "    - {id: r_forbid, kind: constraint, force: forbidden, quote: never overwrite the input}\n",
        "",
    );
    assert!(dropped(&run(&faithful, 12)).is_empty());
}

#[test]
fn no_loading_step_is_unfaithful_and_demoted_it_stops_being_checked() {
    let rules = "  obligations:\n    - {id: r1, kind: step, force: mandatory, quote: Load the rows from data.csv.}\n    - {id: r2, kind: io, force: mandatory, quote: You must always emit a CSV with a header row.}\n";
    let Some(text) = corpus_with("faith_test/_IR_NO_LOADING.agir", rules) else {
        return;
    };
    // The reference: only r1 dropped (r2's ACT counts through its `_write_artifact` fallback
    // for an ACT that reads content). Ours: r2 dropped too — `emit_csv` returns the CSV and
    // writes nothing, and our runtime has no implicit write (the reference's own
    // REPORT_ONLY case says a reporting ACT realizes no deliverable).
    assert_eq!(dropped(&run(&text, 12)), ["r1", "r2"]);
    // r1 demoted to a may (what the reference's unmarked-imperative fallback does): only r2
    // is required now.
    let demoted = text.replace(
        "{id: r1, kind: step, force: mandatory",
        "{id: r1, kind: step, force: discretionary",
    );
    let a = run(&demoted, 12);
    assert_eq!(dropped(&a), ["r2"]);
    let required = a
        .obligations
        .iter()
        .filter(|o| o.required.is_some_and(Realization::is_required))
        .count();
    assert_eq!(required, 1);
    // Everything demoted: vacuous.
    let all = demoted.replace(
        "{id: r2, kind: io, force: mandatory",
        "{id: r2, kind: io, force: discretionary",
    );
    assert!(
        run(&all, 12)
            .findings
            .iter()
            .any(|f| f.message.contains("vacuous"))
    );
}

const GUIDE_RULE: &str = "  obligations:\n    - {id: r_guide, kind: knowledge, force: mandatory, quote: Read forms.md completely before filling the form.}\n";

#[test]
fn pointer_ir_a_tool_that_only_opens_a_sibling_doc_does_not_embody_it() {
    let Some(text) = corpus_with("faith_test/POINTER_IR.agir", GUIDE_RULE) else {
        return;
    };
    let a = run(&text, 12);
    assert_eq!(dropped(&a), ["r_guide"]);
    assert_eq!(
        a.obligations[0].required,
        Some(Realization::EmbodiedKnowledge)
    );
    assert!(
        a.findings
            .iter()
            .any(|f| f.id == CheckId::F3 && f.message.contains("forms.md"))
    );
    // A tool that computes still counts as embodiment.
    let computes = text.replace(
        "      for candidate in (\"forms.md\", \"./forms.md\"):\n          if os.path.exists(candidate):\n              return open(candidate).read()\n      return \"forms.md was not found\"\n",
        "      return {\"field_id\": fid, \"checked_value\": \"On\"}\n",
    );
    assert_ne!(computes, text);
    assert!(dropped(&run(&computes, 12)).is_empty());
}

#[test]
fn embodied_ir_the_rule_passes_once_the_content_is_carried_where_it_is_used() {
    let Some(text) = corpus_with("faith_test/EMBODIED_IR.agir", GUIDE_RULE) else {
        return;
    };
    // The reference passes it as written. Here the item holds its text under `content:`,
    // which is not one of §5.2's content fields (`template`, `pattern`, `body`, `value`; W12
    // reports it), and it has no `resident_on`, so no slot would see it: dropped.
    let a = run(&text, 12);
    assert_eq!(dropped(&a), ["r_guide"]);
    let template = text.replace("    content: |", "    template: |");
    assert_ne!(template, text);
    let a = run(&template, 12);
    assert_eq!(dropped(&a), ["r_guide"]);
    assert!(
        a.findings[0].message.contains("resident on no instruction"),
        "{:#?}",
        a.findings
    );
    // With §5.2's field and resident where it is used: realized, as the reference says.
    let resident = template.replace(
        "    traces_to: [r_guide]\n    template:",
        "    resident_on: [fill]\n    traces_to: [r_guide]\n    template:",
    );
    assert_ne!(resident, template);
    let a = run(&resident, 12);
    assert!(dropped(&a).is_empty(), "{:#?}", a.findings);
}

const DELIVER_RULE: &str = "  obligations:\n    - {id: r_deliver, kind: io, force: mandatory, quote: Write the farthest earthquake to answer.json.}\n";

#[test]
fn report_only_ir_an_act_that_only_reports_realizes_no_deliverable() {
    let Some(text) = corpus_with("faith_test/REPORT_ONLY_IR.agir", DELIVER_RULE) else {
        return;
    };
    let a = run(&text, 12);
    assert_eq!(dropped(&a), ["r_deliver"]);
    assert_eq!(
        a.obligations[0].required,
        Some(Realization::WrittenArtifact)
    );
    // An external command stays acceptable: opaque, not provably inert.
    let edges = "edges:\n  - {from: compute, to: done}\n";
    let command = text
        .replace(
            "    body: |\n      d = furthest(points, boundaries)\n      return \"report_text=furthest_point_id=%s\" % d[\"id\"]\n",
            "    command: python scripts/emit_answer.py {points} {out}\n",
        )
        .replace("faithfulness:\n", &format!("{edges}faithfulness:\n"));
    assert!(dropped(&run(&command, 12)).is_empty());
}

#[test]
fn real_write_ir_an_act_whose_body_writes_realizes_it() {
    let Some(text) = corpus_with("faith_test/REAL_WRITE_IR.agir", DELIVER_RULE) else {
        return;
    };
    // As written there are no edges, so `emit` (the entry) reaches no TERMINAL: dropped here,
    // realized by the reference. With its one edge, realized.
    assert_eq!(dropped(&run(&text, 12)), ["r_deliver"]);
    let with_edge = text.replace(
        "faithfulness:\n",
        "edges:\n  - {from: emit, to: done}\nfaithfulness:\n",
    );
    assert!(dropped(&run(&with_edge, 12)).is_empty());
}

const SCRIPTS_RULES: &str = "  obligations:\n    - {id: r1, kind: step, force: mandatory, quote: \"Run `scripts/completeness_checker.py` to ensure all sections are present.\"}\n    - {id: r2, kind: step, force: mandatory, quote: \"Run `scripts/control_coverage_validator.py` to validate TSC coverage.\"}\n    - {id: r3, kind: step, force: mandatory, quote: Draft each required section of the description.}\n";

#[test]
fn hollow_ir_g11_catches_the_untouched_scripts_and_g10_the_fan_out() {
    let Some(text) = corpus_with("gates_test/HOLLOW_IR.agir", SCRIPTS_RULES) else {
        return;
    };
    let a = run(&text, 2);
    let g11: Vec<&str> = a
        .findings
        .iter()
        .filter(|f| f.id == CheckId::G11)
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(g11.len(), 2, "{g11:#?}");
    assert!(
        g11[0].contains("completeness_checker.py")
            && g11[1].contains("control_coverage_validator.py")
    );
    let g10: Vec<Element> = a
        .findings
        .iter()
        .filter(|f| f.id == CheckId::G10)
        .map(|f| f.locus.element)
        .collect();
    assert_eq!(g10, [Element::Instruction(0), Element::Tool(0)]);
    // At the reference's default cap (12), no fan-out.
    assert!(run(&text, 12).findings.iter().all(|f| f.id != CheckId::G10));
    // A skeleton — one step per procedure, each script run by its own tool — passes both.
    let skeleton = format!(
        "nodes:\n  - {{id: check_sections, type: SENSE, owner: code, tool: run_checker, traces_to: [r1]}}\n  - {{id: check_coverage, type: SENSE, owner: code, tool: run_validator, traces_to: [r2]}}\n  - {{id: draft, type: GEN-RAW, doc: Draft each section., traces_to: [r3]}}\n  - {{id: done, type: TERMINAL}}\ntools:\n  run_checker: {{sig: \"() -> outcome\", command: python scripts/completeness_checker.py}}\n  run_validator: {{sig: \"() -> outcome\", command: python scripts/control_coverage_validator.py}}\nedges:\n  - {{from: check_sections, to: check_coverage}}\n  - {{from: check_coverage, to: draft}}\n  - {{from: draft, to: done}}\nfaithfulness:\n{SCRIPTS_RULES}"
    );
    let a = run(&skeleton, 2);
    assert!(
        a.findings
            .iter()
            .all(|f| f.id != CheckId::G10 && f.id != CheckId::G11),
        "{:#?}",
        a.findings
    );
}

#[test]
fn inline_l496_g10_does_not_count_folded_prohibitions() {
    let rules = "  obligations:\n    - {id: r1, kind: step, force: mandatory, quote: Draft the summary.}\n    - {id: r2, kind: constraint, force: forbidden, quote: Never invent numbers.}\n    - {id: r3, kind: constraint, force: forbidden, quote: Never speculate.}\n    - {id: r4, kind: constraint, force: forbidden, quote: Never omit caveats.}\n";
    let Some(text) = corpus_with("gates_test/inline_L496.agir", rules) else {
        return;
    };
    let a = run(&text, 1);
    assert!(
        a.findings.iter().all(|f| f.id != CheckId::G10),
        "{:#?}",
        a.findings
    );
    assert!(dropped(&a).is_empty());
}

/// The audit over every corpus program, twice: as written (none has a provenance record, so
/// the audit has nothing to check: no findings), and against a record that reads every rule
/// id its elements trace to as a mandatory step (quote-less). No panic, every finding located;
/// the per-program counts print with `--nocapture`.
#[test]
fn the_audit_over_every_corpus_program_never_panics_and_locates_every_finding() {
    let Some(root) = corpus() else { return };
    let mut audited = 0;
    let mut table = String::from(
        "| program | obligations | F1 | F2 | F3 | F4 | G10 | G11 |\n|---|---|---|---|---|---|---|---|\n",
    );
    for path in agir_files(&root) {
        let text = std::fs::read_to_string(&path).expect("readable");
        let Ok(doc) = agir::read(&text) else { continue };
        let plain = audit(&doc.program, &doc.source_map, None, &AuditConfig::default());
        assert!(
            plain.findings.is_empty(),
            "{}: no record, no audit",
            path.display()
        );
        let p = &doc.program;
        let mut ids: Vec<&str> = Vec::new();
        let lists = p
            .instructions()
            .iter()
            .map(|n| &n.traces_to)
            .chain(p.tool_list().iter().map(|t| &t.traces_to))
            .chain(p.knowledge_list().iter().map(|k| &k.traces_to))
            .chain(p.carries().iter().map(|c| &c.traces_to))
            .chain(p.edge_list().iter().map(|e| &e.traces_to));
        for list in lists {
            for id in list.iter().flatten() {
                if !ids.contains(&id.as_str()) {
                    ids.push(id);
                }
            }
        }
        let record: String = ids
            .iter()
            .map(|id| format!("    - {{id: \"{id}\", kind: step, force: mandatory}}\n"))
            .collect();
        let body = text.trim_end();
        // A fenced or frontmatter-only document cannot take a section appended; skip those.
        if body.ends_with("```") || body.ends_with("---") {
            continue;
        }
        let with = format!("{body}\nfaithfulness:\n  obligations:\n{record}");
        let with = if ids.is_empty() {
            with.replace("  obligations:\n", "  obligations: []\n")
        } else {
            with
        };
        let Ok(doc) = agir::read(&with) else { continue };
        let a = audit(&doc.program, &doc.source_map, None, &AuditConfig::default());
        for f in &a.findings {
            assert!(f.pos.is_some(), "{}: {f:?}", path.display());
            assert!(f.repair.is_some(), "{}: {f:?}", path.display());
        }
        let count = |id| a.findings.iter().filter(|f| f.id == id).count();
        let rel = path.strip_prefix(&root).unwrap().display().to_string();
        table.push_str(&format!(
            "| {rel} | {} | {} | {} | {} | {} | {} | {} |\n",
            ids.len(),
            count(CheckId::F1),
            count(CheckId::F2),
            count(CheckId::F3),
            count(CheckId::F4),
            count(CheckId::G10),
            count(CheckId::G11)
        ));
        audited += 1;
    }
    assert!(audited >= 50, "only {audited} corpus programs audited");
    let _ = SourceMap::new();
    eprintln!("{table}");
}
