//! The validator over the Sigil corpus (`../shared/corpus/sigil-fixtures`, see its README).
//!
//! Every file that reads is checked, with and without repair, without panicking; the
//! deliberately defective ones produce the findings the README names, and the valid ones come
//! out without error findings. Where the README and the spec disagree the spec wins; each such
//! place is commented below.

use ais_core::{CheckId, Checked, Outcome, Repairs, Severity, check};
use std::path::Path;

use crate::support;
use support::{agir_files, corpus};

fn checked(root: &Path, rel: &str, repair: bool) -> Checked {
    let path = root.join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let doc = ais_core::agir::read(&text).unwrap_or_else(|e| panic!("{rel} does not read: {e}"));
    check(
        &doc.program,
        &doc.source_map,
        if repair {
            Repairs::Mechanical
        } else {
            Repairs::Off
        },
    )
}

fn ids(c: &Checked) -> Vec<CheckId> {
    c.findings.iter().filter_map(|f| f.id.check()).collect()
}

fn errors(c: &Checked) -> Vec<String> {
    c.findings
        .iter()
        .filter(|f| f.severity >= Severity::Error)
        .map(|f| format!("{} {}", f.id, f.message))
        .collect()
}

#[test]
fn every_corpus_file_that_reads_checks_without_panicking() {
    let Some(root) = corpus() else { return };
    let all = agir_files(&root);
    assert!(all.len() >= 50, "only {} corpus files found", all.len());
    let mut read = 0;
    for path in all {
        let text = std::fs::read_to_string(&path).expect("readable");
        let Ok(doc) = ais_core::agir::read(&text) else {
            continue; // the syntax fixtures are deliberately not AG-IR
        };
        read += 1;
        // Lowering fails exactly when checking finds the program has no plan (X5, fatal).
        let lowered = ais_core::plan::lower(&doc.program);
        let plain = check(&doc.program, &doc.source_map, Repairs::Off);
        assert_eq!(
            lowered.is_err(),
            plain.outcome == Outcome::Failed,
            "{}",
            path.display()
        );
        for repair in [false, true] {
            let c = check(
                &doc.program,
                &doc.source_map,
                if repair {
                    Repairs::Mechanical
                } else {
                    Repairs::Off
                },
            );
            let mut sorted = c.findings.clone();
            sorted.sort_by_key(|f| (f.pos.is_none(), f.pos));
            let positions: Vec<_> = c.findings.iter().map(|f| f.pos).collect();
            let expected: Vec<_> = sorted.iter().map(|f| f.pos).collect();
            assert_eq!(
                positions,
                expected,
                "{}: findings out of order",
                path.display()
            );
        }
    }
    assert!(read >= 45, "only {read} corpus files read");
}

#[test]
fn the_valid_programs_have_no_error_findings() {
    let Some(root) = corpus() else { return };
    for rel in [
        "gates_test/GOOD_IR.agir",
        "eject_test/TOY_IR.agir",
        "autofix_test/CLEAN_IR.agir",
        "repair_test/FIXED_IR.agir",
        "compiler_test/GEN_IR.agir",
        "lowering_fix_tests/SKILL_TOOL_IR.agir",
    ] {
        let c = checked(&root, rel, false);
        assert!(errors(&c).is_empty(), "{rel}: {:#?}", errors(&c));
        assert_ne!(c.outcome, Outcome::Failed, "{rel}");
    }
}

#[test]
fn a_str_carry_feeding_a_list_tool_is_g9_and_adopts_the_consumer_type() {
    let Some(root) = corpus() else { return };
    let rel = "gates_test/TY_CONFLICT_IR.agir";
    let c = checked(&root, rel, false);
    let g9 = c.findings.iter().find(|f| f.id == CheckId::G9).expect("G9");
    assert_eq!(g9.severity, Severity::Error);
    let fixed = checked(&root, rel, true);
    assert!(!ids(&fixed).contains(&CheckId::G9), "{:#?}", fixed.findings);
    assert!(
        fixed
            .deviations
            .iter()
            .any(|d| d.subject == "proposed" && d.check == Some(CheckId::G9))
    );
    // The README says the patched IR "passes clean"; the spec's outcome for a program that is
    // clean only because a repair landed is `fixed` (§9.1).
    assert_eq!(fixed.outcome, Outcome::Fixed, "{:#?}", fixed.findings);
}

#[test]
fn an_untyped_model_to_code_carry_is_g9() {
    let Some(root) = corpus() else { return };
    let c = checked(&root, "gates_test/TY_UNTYPED_IR.agir", false);
    assert!(ids(&c).contains(&CheckId::G9), "{:#?}", c.findings);
}

#[test]
fn an_act_reading_a_producer_less_carry_is_g9() {
    let Some(root) = corpus() else { return };
    let c = checked(&root, "gates_test/TY_PROVENANCE_IR.agir", false);
    let g9 = c.findings.iter().find(|f| f.id == CheckId::G9).expect("G9");
    assert_eq!(g9.instruction.as_deref(), Some("emit"));
    // The spec also names what the README calls "writes undeclared carry" (W9), the carry with
    // no origin (W10) and its bare parameter name `content` (W13, §7.4).
    for id in [CheckId::W9, CheckId::W10, CheckId::W13] {
        assert!(ids(&c).contains(&id), "{id}: {:#?}", c.findings);
    }
}

#[test]
fn the_hollow_monolith_is_reported_with_the_spec_checks() {
    let Some(root) = corpus() else { return };
    let c = checked(&root, "gates_test/HOLLOW_IR.agir", false);
    // The README names Sigil's G10/G11 (extensions beyond the spec). The spec's own checks for
    // the same defects: G5 for one slot standing in for three obligations, W11 for the tool
    // the graph never touches, W9 for the undeclared write.
    for id in [CheckId::G5, CheckId::W11, CheckId::W9] {
        assert!(ids(&c).contains(&id), "{id}: {:#?}", c.findings);
    }
    let folded = checked(&root, "gates_test/inline_L496.agir", false);
    assert!(
        !ids(&folded).contains(&CheckId::G5),
        "{:#?}",
        folded.findings
    );
}

#[test]
fn guards_naming_no_carry_are_reported() {
    let Some(root) = corpus() else { return };
    let c = checked(&root, "runtime_budget/LOOP_IR.agir", false);
    // The README expects a run that exhausts its step budget. The spec makes a guard that does
    // not type-check a compile-oracle failure (X5, §9.3), so the program does not lower at all.
    let guards: Vec<_> = c
        .findings
        .iter()
        .filter(|f| f.id == CheckId::X5 && f.locus.field_str() == Some("guard"))
        .collect();
    assert_eq!(guards.len(), 2, "{:#?}", c.findings);
    assert_eq!(c.outcome, Outcome::Failed);
}

#[test]
fn a_spawn_without_concurrency_is_x3() {
    let Some(root) = corpus() else { return };
    let c = checked(&root, "compiler_test/FANOUT_GATE_IR.agir", false);
    let x3 = c.findings.iter().find(|f| f.id == CheckId::X3).expect("X3");
    assert_eq!(x3.instruction.as_deref(), Some("fan"));
}

#[test]
fn a_tool_named_only_by_op_is_not_bound() {
    let Some(root) = corpus() else { return };
    // The README lists DEF_BODY_IR as a working fixture: the reference backend binds `upcase`
    // to `shout_it` through its `op` field. The spec forbids exactly that (§3: `op` is
    // descriptive and an implementation MUST NOT resolve a tool from it), so the SENSE is
    // hollow (X1) and the tool unbound (W11).
    let c = checked(&root, "compiler_test/DEF_BODY_IR.agir", false);
    let x1 = c.findings.iter().find(|f| f.id == CheckId::X1).expect("X1");
    assert_eq!(x1.instruction.as_deref(), Some("shout_it"));
    assert!(ids(&c).contains(&CheckId::W11), "{:#?}", c.findings);
}

#[test]
fn a_route_without_default_over_a_counter_is_x4() {
    let Some(root) = corpus() else { return };
    // BUDGET_ROUTE_IR's guards (`ok == true`, `round < 3`, `errors != ""`) do not cover every
    // state and it declares no default edge: X4 (§4.4.1 makes the uncovered case a fault).
    let c = checked(&root, "compiler_test/BUDGET_ROUTE_IR.agir", false);
    assert!(ids(&c).contains(&CheckId::X4), "{:#?}", c.findings);
    // FANOUT_GATE_IR's `all_ok == true` / `all_ok == false` are exhaustive: no X4.
    let c = checked(&root, "compiler_test/FANOUT_GATE_IR.agir", false);
    assert!(!ids(&c).contains(&CheckId::X4), "{:#?}", c.findings);
}
