//! The validator over its own AG-IR fixtures (`tests/fixtures/check/`): one fixture per check,
//! named `<ID>_<what>.agir`, produces that finding and no other error; the `clean_*` fixtures
//! (one per opcode family, a routed failure, an object into several writes, a SPAWN tool
//! joined into a list and into text) check clean; the
//! `repair_*` fixtures exercise ladder step 1.

use ais_core::plan::lower;
use ais_core::{CheckId, Checked, Outcome, Owner, Program, Repairs, Severity, Type, check};
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/check")
}

/// A checked fixture: what checking found, and the program it is about (repaired or not).
struct Run {
    checked: Checked,
    program: Program,
}

impl std::ops::Deref for Run {
    type Target = Checked;
    fn deref(&self) -> &Checked {
        &self.checked
    }
}

fn run(name: &str, repair: bool) -> Run {
    let path = dir().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let doc = ais_core::agir::read(&text)
        .unwrap_or_else(|e| panic!("{} does not read: {e} at {:?}", path.display(), e.pos));
    let repairs = if repair {
        Repairs::Mechanical
    } else {
        Repairs::Off
    };
    let checked = check(&doc.program, &doc.source_map, repairs);
    let program = checked.program(&doc.program).clone();
    Run { checked, program }
}

fn fixtures(prefix: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .expect("the fixture directory exists")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".agir") && n.starts_with(prefix))
        .collect();
    names.sort();
    names
}

#[test]
fn every_check_has_a_fixture_that_produces_exactly_it() {
    let mut covered = Vec::new();
    for name in fixtures("") {
        let Some(id) = name.split('_').next().and_then(CheckId::parse) else {
            continue;
        };
        let c = run(&name, false);
        let summary: Vec<String> = c
            .findings
            .iter()
            .map(|f| format!("{} {} {}", f.id, f.severity, f.message))
            .collect();
        assert!(
            c.findings.iter().any(|f| f.id == id),
            "{name}: expected {id}, got {summary:#?}"
        );
        for f in &c.findings {
            assert!(
                f.id == id || f.severity == Severity::Warn,
                "{name}: unexpected {} ({}) {}",
                f.id,
                f.severity,
                f.message
            );
            assert!(f.pos.is_some(), "{name}: {} has no position", f.id);
            assert!(f.repair.is_some(), "{name}: {} has no repair", f.id);
        }
        let expected = match id {
            CheckId::X5 => Outcome::Failed,
            _ => Outcome::Degraded,
        };
        assert_eq!(c.outcome, expected, "{name}");
        covered.push(id);
    }
    // M1 and M2 judge MCP bindings against a lock file, which `check` alone never sees: they
    // come from `check_mcp`, and `tests/mcp_check.rs` gives each its program and lock. T1
    // judges tier names against a model configuration: `check_tiers`, tested in `tiers.rs`.
    for id in CheckId::ALL
        .into_iter()
        .filter(|id| !matches!(id, CheckId::M1 | CheckId::M2 | CheckId::T1))
    {
        assert!(covered.contains(&id), "no fixture for {id}");
    }
}

#[test]
fn the_clean_fixtures_check_clean_and_lower() {
    let names = fixtures("clean_");
    assert_eq!(names.len(), 7);
    for name in names {
        for repair in [false, true] {
            let c = run(&name, repair);
            assert_eq!(c.outcome, Outcome::Clean, "{name}: {:#?}", c.findings);
            assert!(c.deviations.is_empty());
        }
        let c = run(&name, false);
        let plan = lower(&c.program).unwrap_or_else(|f| panic!("{name}: {f:#?}"));
        assert_eq!(plan.steps.len(), c.program.instructions().len());
    }
}

#[test]
fn a_missing_carry_is_minted() {
    let before = run("repair_mint_carry.agir", false);
    assert!(before.findings.iter().any(|f| f.id == CheckId::W9));
    let c = run("repair_mint_carry.agir", true);
    assert_eq!(c.outcome, Outcome::Fixed, "{:#?}", c.findings);
    assert_eq!(c.deviations.len(), 1);
    assert_eq!(c.deviations[0].check, Some(CheckId::W9));
    let (_, note) = c.program.carry("note").expect("minted");
    assert_eq!(note.ty, Some(Type::Str));
    assert_eq!(note.produced_by.as_deref(), Some("draft"));
}

#[test]
fn a_hollow_du_instruction_is_re_owned_to_a_slot() {
    let c = run("repair_reown_hollow.agir", true);
    assert_eq!(c.outcome, Outcome::Fixed, "{:#?}", c.findings);
    assert_eq!(c.deviations.len(), 1);
    assert_eq!(c.deviations[0].subject, "look");
    let (_, look) = c.program.instruction("look").expect("kept");
    assert_eq!(look.owner, Some(Owner::Model));
}

#[test]
fn an_agreeing_consumer_type_is_adopted() {
    let before = run("repair_adopt_type.agir", false);
    let g9 = before
        .findings
        .iter()
        .find(|f| f.id == CheckId::G9)
        .expect("G9 before repair");
    assert_eq!(g9.instruction.as_deref(), Some("emit"));
    let c = run("repair_adopt_type.agir", true);
    assert_eq!(c.outcome, Outcome::Fixed, "{:#?}", c.findings);
    let (_, proposed) = c.program.carry("proposed").expect("kept");
    assert_eq!(proposed.ty, Some(Type::List(Some(Box::new(Type::Str)))));
}

#[test]
fn the_appendix_c_program_checks_clean() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/writing_plans.agir");
    let text = std::fs::read_to_string(&path).expect("examples/writing_plans.agir exists");
    let doc = ais_core::agir::read(&text).expect("it reads");
    let c = check(&doc.program, &doc.source_map, Repairs::Mechanical);
    assert_eq!(c.outcome, Outcome::Clean, "{:#?}", c.findings);
    let plan = lower(&doc.program).expect("it lowers");
    assert_eq!(plan.steps.len(), 6);
}
