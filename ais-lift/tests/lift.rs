//! Scripted-model lifts: each fixture under `tests/lifts/NAME/` is a skill (`SKILL.md`, with
//! its sibling files) and the compiler's slot answers written by hand (`answers.json`, keyed
//! by the slots `extract`, `critic`, `adjudicate`, `design`). Each lift must give a program
//! that checks clean or fixed, audits with 0 dropped and 0 added obligations against the
//! skill's text, and rests every obligation on a verbatim quote.

use ais_core::{AuditConfig, Outcome, SourceMap, agir};
use ais_lift::Skill;
use ais_lift::compile::{Adjudicate, LiftError, Lifted, NoteAction, Options, SpecVerdict, lift};
use ais_rt::model::ScriptedModel;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/lifts")
        .join(name)
}

fn run(skill: &Path, answers: &Path, options: &Options) -> Result<Lifted, LiftError> {
    let skill = Skill::read(skill).unwrap();
    let model = ScriptedModel::from_file(answers).unwrap();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(lift(&skill, &model, options))
}

fn lift_fixture(name: &str) -> Lifted {
    let dir = fixture(name);
    run(
        &dir.join("SKILL.md"),
        &dir.join("answers.json"),
        &Options::default(),
    )
    .unwrap()
}

/// The guarantees every lift must show, read back from the written AG-IR.
fn assert_faithful(name: &str, l: &Lifted) {
    let r = &l.report;
    assert!(
        matches!(r.gates.outcome, Outcome::Clean | Outcome::Fixed),
        "{name}: {:?}: {:#?}",
        r.gates.outcome,
        r.gates.findings
    );
    assert!(r.gates.dropped.is_empty(), "{name}: {:?}", r.gates.dropped);
    assert!(r.gates.added.is_empty(), "{name}: {:?}", r.gates.added);
    assert_eq!(r.gates.verbatim_quotes, r.obligations.len(), "{name}");
    assert!(!r.obligations.is_empty(), "{name}");
    // The written program reads back to the same program, and audits clean against the skill.
    let doc = agir::read(&l.agir).unwrap();
    assert_eq!(doc.program, l.program, "{name}: the AG-IR reads back");
    let skill = std::fs::read_to_string(fixture(name).join("SKILL.md")).unwrap();
    let audit = ais_core::audit(
        &doc.program,
        &SourceMap::new(),
        Some(&skill),
        &AuditConfig::default(),
    );
    assert!(audit.findings.is_empty(), "{name}: {:#?}", audit.findings);
    assert_eq!(audit.dropped().count(), 0, "{name}");
    // Every instruction but the terminal traces to a recorded obligation.
    let record = doc.program.faithfulness.as_ref().unwrap();
    for n in doc.program.nodes.as_deref().unwrap() {
        if n.opcode == ais_core::Opcode::Terminal {
            continue;
        }
        let traces = n.traces_to.as_deref().unwrap_or_default();
        assert!(!traces.is_empty(), "{name}: `{}` traces to nothing", n.id);
        for t in traces {
            assert!(record.obligation(t).is_some(), "{name}: `{}` → `{t}`", n.id);
        }
    }
}

#[test]
fn csv_clean_lifts_faithfully() {
    let l = lift_fixture("csv-clean");
    assert_faithful("csv-clean", &l);
    let r = &l.report;
    // The hallucinated rule is dropped, with its reason.
    assert_eq!(r.dropped.len(), 1);
    assert_eq!(r.dropped[0].rule, "r13");
    assert!(r.dropped[0].reason.contains("not in the skill"));
    // The critic found six more; its second round found nothing: dry.
    assert_eq!(r.spec, SpecVerdict::Dry { rounds: 2 });
    assert_eq!(r.obligations.len(), 18);
    // The verification list states no force: the adjudicator settled each by citing step 5.
    let r15 = r.decisions.iter().find(|d| d.rule == "r15").unwrap();
    assert_eq!(r15.force.as_str(), "mandatory");
    assert_eq!(
        r15.cite.as_deref(),
        Some("Verify the result before reporting success.")
    );
    assert!(r15.by.starts_with("adjudicator scripted:"));
    // The prohibitions are never paths: folded onto the slots as rules.
    let name_columns = l
        .program
        .nodes
        .as_deref()
        .unwrap()
        .iter()
        .find(|n| n.id == "name_columns")
        .unwrap();
    assert!(
        name_columns
            .doc
            .as_deref()
            .unwrap()
            .contains("Never violate this rule: Do not drop, add, merge or reorder columns.")
    );
    // The deliverable is written by an ACT through write_file.
    assert!(l.agir.contains("tool: write_file"));
    // Four model calls in the spec loop and adjudication (extract, critic ×2, adjudicate) and
    // one for the design.
    let calls: u32 = r.stages.iter().map(|s| s.model_calls).sum();
    assert_eq!(calls, 5);
}

#[test]
fn no_adjudicate_makes_no_call_and_says_so() {
    let dir = fixture("csv-clean");
    // The same answers without the adjudicator's: a call would find none and fail the lift.
    let mut answers: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("answers.json")).unwrap()).unwrap();
    answers.as_object_mut().unwrap().remove("adjudicate");
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("answers.json");
    std::fs::write(&file, answers.to_string()).unwrap();
    let options = Options {
        adjudicate: Adjudicate::Nobody,
        ..Options::default()
    };
    let l = run(&dir.join("SKILL.md"), &file, &options).unwrap();
    let r = &l.report;
    assert_eq!(r.stages[1].model_calls, 0);
    assert_eq!(r.decisions.len(), 7);
    for d in &r.decisions {
        assert_eq!(d.force.as_str(), "discretionary", "{}", d.rule);
        assert!(d.by.contains("--no-adjudicate"), "{}", d.by);
        assert!(d.cite.is_none());
    }
    // Discretionary verification steps on the one path are hardened: the audit says so.
    assert!(
        r.gates
            .findings
            .iter()
            .any(|f| f.starts_with("F1") && f.contains("hardened")),
        "{:#?}",
        r.gates.findings
    );
    assert!(r.strict_findings() > 0);
    let _ = NoteAction::Refused;
}
