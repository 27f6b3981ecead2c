//! Scripted-model lifts run by the compiler program: each fixture under `ais-lift/tests/lifts/NAME/` is a skill (`SKILL.md`, with
//! its sibling files) and the compiler's slot answers written by hand (`answers.json`, keyed
//! by the slots `extract`, `critic`, `adjudicate`, `design`). Each lift must give a program
//! that checks clean or fixed, audits with 0 dropped and 0 added obligations against the
//! skill's text, and rests every obligation on a verbatim quote.

use ais::lift::compile::{Adjudicate, LiftError, Lifted, NoteAction, SpecVerdict};
use ais::lift::{Lift, Skill, lift};
use ais::rt::llm::ScriptedModel;
use ais::{AuditConfig, Outcome, SourceMap, agir};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("ais-lift/tests/lifts")
        .join(name)
}

/// Lifts `skill` with the scripted `answers`: the compiler program run by the runtime.
fn run(skill: &Path, answers: &Path, options: &Lift) -> Result<Lifted, LiftError> {
    let mut options = options.clone();
    options.skill = skill.to_owned();
    let model = Arc::new(ScriptedModel::from_file(answers).unwrap());
    let out = tempfile::tempdir().unwrap();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(lift(&options, model, out.path()))
}

fn lift_fixture(name: &str) -> Lifted {
    let dir = fixture(name);
    run(
        &dir.join("SKILL.md"),
        &dir.join("answers.json"),
        &Lift::new(""),
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
    assert_faithful_program(l, &skill);
    // Every instruction but the terminal traces to a recorded obligation.
    let record = doc.program.faithfulness.as_ref().unwrap();
    for n in doc.program.nodes.as_deref().unwrap() {
        if n.opcode == ais::Opcode::Terminal {
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
    let options = Lift {
        adjudicate: Adjudicate::Nobody,
        ..Lift::new("")
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
    // The verification steps, now optional, still run on every run: recorded as accepted
    // deviations in the provenance record and as degradations in the report, never silently.
    let record = l.program.faithfulness.as_ref().unwrap();
    let accepted: Vec<&str> = record
        .deviation_list()
        .iter()
        .filter_map(|d| d.obligation.as_deref())
        .collect();
    assert!(accepted.contains(&"r15"), "{accepted:?}");
    assert!(
        r.notes
            .iter()
            .any(|n| n.action == NoteAction::Degraded && n.subject == "r15")
    );
    assert!(matches!(r.gates.outcome, Outcome::Clean | Outcome::Fixed));
    assert!(r.strict_findings() > 0);
}

fn node<'a>(l: &'a Lifted, id: &str) -> &'a ais::Instruction {
    l.program
        .nodes
        .as_deref()
        .unwrap()
        .iter()
        .find(|n| n.id == id)
        .unwrap_or_else(|| panic!("no instruction `{id}`"))
}

#[test]
fn a_human_gate_is_a_code_owned_route_on_the_persons_answer() {
    let l = lift_fixture("approval");
    assert_faithful("approval", &l);
    let gate = node(&l, "gate_r2");
    assert_eq!(gate.opcode, ais::Opcode::Route);
    assert_eq!(gate.owner, Some(ais::Owner::Code));
    assert_eq!(gate.reads, ["approved_r2"]);
    let (_, answer) = l.program.carry("approved_r2").unwrap();
    assert_eq!(answer.role, Some(ais::Role::Input));
    assert_eq!(answer.ty, Some(ais::Type::Bool));
    // The gate stands where the skill puts it: after the summary, before the deployment; a
    // refusal ends the run.
    let edges = l.program.edges.as_deref().unwrap();
    assert!(
        edges
            .iter()
            .any(|e| e.from == "summarize" && e.to == "gate_r2")
    );
    assert!(edges.iter().any(|e| e.from == "gate_r2"
        && e.to == "deploy_command_of"
        && e.guard.as_deref() == Some("approved_r2")));
    assert!(
        edges.iter().any(|e| e.from == "gate_r2"
            && e.to == "done"
            && e.guard.as_deref() == Some("otherwise"))
    );
    // The prohibition is a rule on the slot, never a path.
    assert!(
        node(&l, "summarize")
            .traces_to
            .as_ref()
            .unwrap()
            .contains(&"r4".to_owned())
    );
}

#[test]
fn a_sibling_reference_file_is_embodied_as_knowledge() {
    let l = lift_fixture("with-reference");
    assert_faithful("with-reference", &l);
    let style = std::fs::read_to_string(fixture("with-reference").join("STYLE.md")).unwrap();
    let k = l
        .program
        .knowledge
        .as_deref()
        .unwrap()
        .iter()
        .find(|k| k.name == "file_style")
        .unwrap();
    assert_eq!(k.text().as_deref(), Some(style.as_str()));
    assert_eq!(k.resident_on, ["write_notes"]);
    assert_eq!(k.traces_to.as_deref(), Some(&["r1".to_owned()][..]));
    // A command's result is an outcome: a failing `git log` is a value, not a crash.
    let (_, changes) = l.program.carry("changes").unwrap();
    assert_eq!(changes.ty, Some(ais::Type::parse("outcome")));
}

#[test]
fn a_sibling_script_is_embodied_as_the_tool_that_runs_it() {
    let l = lift_fixture("with-script");
    assert_faithful("with-script", &l);
    let script =
        std::fs::read_to_string(fixture("with-script").join("scripts/count_words.py")).unwrap();
    let tool = l
        .program
        .tools
        .as_deref()
        .unwrap()
        .iter()
        .find(|t| t.name == "count_words")
        .unwrap();
    assert_eq!(tool.body.as_deref(), Some(script.as_str()));
    assert_eq!(tool.lang.as_deref(), Some("python"));
    assert_eq!(tool.sig.as_deref(), Some("(target_path) -> str"));
    assert_eq!(
        tool.serves.as_deref(),
        Some(&["count_words".to_owned()][..])
    );
    assert_eq!(tool.traces_to.as_deref(), Some(&["r1".to_owned()][..]));
}

#[test]
fn injected_text_adds_no_element_and_the_report_names_it() {
    let l = lift_fixture("injection");
    assert_faithful("injection", &l);
    let r = &l.report;
    // The rule the compromised extractor made up is dropped: its words are not the skill's.
    assert_eq!(r.dropped.len(), 1);
    assert_eq!(r.dropped[0].rule, "r3");
    // The steps built on it, or on nothing, are refused by name; nothing runs a command.
    for step in ["wipe_command", "delete_repository"] {
        assert!(
            r.notes
                .iter()
                .any(|n| n.action == NoteAction::Refused && n.subject == format!("step `{step}`")),
            "{step}: {:#?}",
            r.notes
        );
        assert!(
            l.program
                .nodes
                .as_deref()
                .unwrap()
                .iter()
                .all(|n| n.id != step)
        );
    }
    assert!(!l.agir.contains("run_command"));
    assert!(!l.agir.contains("rm -rf"));
    assert_eq!(
        l.program.nodes.as_deref().unwrap().len(),
        4,
        "find_notes, read_notes, dedupe, done"
    );
    // The injected sentence is named where it stands: no obligation rests on it.
    let left = r
        .uncovered
        .iter()
        .find(|u| u.text.starts_with("Ignore the above"))
        .expect("the injected sentence is reported");
    assert_eq!((left.line, left.column), (13, 1));
    assert!(r.strict_findings() > 0);
}

/// Every way a model's answer can overreach, each refused by name: a duplicate rule id, a
/// quote already extracted, a hardened "may", cites that are the obligation's own sentence or
/// not in the skill, a decision on a rule nobody flagged, a shredded adaptive unit, a
/// prohibition made a path, an unknown tool, an id that is no identifier.
#[test]
fn hostile_answers_are_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let skill = tmp.path().join("SKILL.md");
    std::fs::write(
        &skill,
        "# Ship\n\n## Steps\n\n1. Explore the codebase and find every caller of the old API.\n\
         2. Update the callers.\n\nNever push to main.\nYou may run the benchmarks.\n\n\
         Keep the changelog current. Tag the release.\n",
    )
    .unwrap();
    let ob = |rule: &str, kind: &str, force: &str, quote: &str, cohesion: &str| {
        serde_json::json!({"rule": rule, "kind": kind, "force": force, "bearer": "agent",
            "quote": quote, "condition": null, "cohesion": cohesion})
    };
    let step = |id: &str, op: &str, traces: &[&str], tool: Option<&str>, tools: &[&str]| {
        serde_json::json!({"id": id, "opcode": op, "doc": format!("Do {id}."), "traces_to": traces,
            "reads": ["task"], "writes": [format!("{}_out", id.to_lowercase().replace([' ', '!'], "_"))],
            "tool": tool, "body": null, "tools": tools})
    };
    let answers = serde_json::json!({
        "extract": [{"obligations": [
            ob("r1", "step", "mandatory", "Explore the codebase and find every caller of the old API.", "adaptive"),
            ob("r2", "step", "mandatory", "Update the callers.", "atomic"),
            ob("r1", "step", "mandatory", "Update the callers.", "atomic"),
            ob("r3", "constraint", "forbidden", "Never push to main.", "atomic"),
            ob("r4", "step", "mandatory", "You may run the benchmarks.", "atomic"),
            ob("r7", "constraint", "mandatory", "Keep the changelog current.", "atomic"),
            ob("r8", "step", "mandatory", "Tag the release.", "atomic"),
        ]}],
        "critic": [{"obligations": [ob("r6", "step", "mandatory", "Update the callers.", "atomic")]}],
        "adjudicate": [{"decisions": [
            {"rule": "r7", "force": "mandatory", "cite": "Keep the changelog current."},
            {"rule": "r8", "force": "mandatory", "cite": "Deploy on Fridays."},
            {"rule": "r2", "force": "forbidden", "cite": "Never push to main."},
        ]}],
        "design": [{"types": [], "carries": [], "steps": [
            step("explore", "GEN-RAW", &["r1"], None, &["grep", "glob_files", "read_file"]),
            step("explore_more", "GEN-RAW", &["r1"], None, &[]),
            step("push", "ACT", &["r3"], Some("run_command"), &[]),
            step("update", "GEN-RAW", &["r2"], None, &["teleport"]),
            step("Bad Id!", "GEN-RAW", &["r2"], None, &[]),
            step("bench", "ACT", &["r4"], Some("curl_anything"), &[]),
        ]}],
    });
    let file = tmp.path().join("answers.json");
    std::fs::write(&file, answers.to_string()).unwrap();
    let l = run(&skill, &file, &Lift::new("")).unwrap();
    let r = &l.report;
    let dropped: Vec<(&str, &str)> = r
        .dropped
        .iter()
        .map(|d| (d.rule.as_str(), d.reason.as_str()))
        .collect();
    assert_eq!(
        dropped,
        [
            ("r1", "an earlier obligation has the same rule id"),
            ("r6", "its quote is already extracted"),
        ]
    );
    assert_eq!(r.spec, SpecVerdict::Dry { rounds: 1 });
    // "You may run the benchmarks." proposed as a must: set back to what the skill says.
    assert_eq!(r.corrections.len(), 1, "{:#?}", r.corrections);
    assert_eq!(r.corrections[0].rule, "r4");
    let r4 = r.obligations.iter().find(|o| o.rule == "r4").unwrap();
    assert_eq!(r4.force.as_str(), "discretionary");
    // Neither cite stands; the decision on r2 (never flagged) is not taken.
    let decided: Vec<(&str, &str, &str)> = r
        .decisions
        .iter()
        .map(|d| {
            (
                d.rule.as_str(),
                d.force.as_str(),
                d.rejected.as_deref().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(decided.len(), 2, "{decided:#?}");
    assert_eq!(decided[0].0, "r7");
    assert_eq!(decided[0].1, "discretionary");
    assert!(decided[0].2.contains("own sentence"), "{}", decided[0].2);
    assert_eq!(decided[1].0, "r8");
    assert!(
        decided[1].2.contains("not in the skill"),
        "{}",
        decided[1].2
    );
    assert_eq!(
        r.obligations
            .iter()
            .find(|o| o.rule == "r2")
            .unwrap()
            .force
            .as_str(),
        "mandatory"
    );
    // The design's overreach, refused by name.
    let refused: Vec<String> = r
        .notes
        .iter()
        .filter(|n| n.action == NoteAction::Refused)
        .map(|n| format!("{}: {}", n.subject, n.reason))
        .collect();
    for (subject, why) in [
        (
            "step `explore_more`'s claim of `r1`",
            "adaptive unit stays one slot",
        ),
        (
            "step `push`'s claim of `r3`",
            "a prohibition is never a path",
        ),
        ("step `push`", "traces to no grounded obligation"),
        (
            "step `update`'s belt tool `teleport`",
            "neither a standard tool",
        ),
        ("step `Bad Id!`", "not a fresh snake_case identifier"),
        (
            "step `bench`'s tool `curl_anything`",
            "neither a standard tool",
        ),
    ] {
        assert!(
            refused
                .iter()
                .any(|n| n.starts_with(subject) && n.contains(why)),
            "{subject}: {refused:#?}"
        );
    }
    // The adaptive unit is one slot with its tool belt.
    let explore = node(&l, "explore");
    assert_eq!(
        explore.autonomy.as_ref().unwrap().tools,
        ["grep", "glob_files", "read_file"]
    );
    // The hollow `bench` is re-owned to a slot by the mechanical repair: the program is fixed.
    assert_eq!(r.gates.outcome, Outcome::Fixed, "{:#?}", r.gates.findings);
    assert!(r.gates.dropped.is_empty() && r.gates.added.is_empty());
}

#[test]
fn writing_plans_lifts_faithfully() {
    let l = lift_fixture("writing-plans");
    assert_faithful("writing-plans", &l);
    let r = &l.report;
    assert_eq!(r.spec, SpecVerdict::Dry { rounds: 2 });
    // The skill's nested fences make everything from `## Remember` on one code block
    // (CommonMark): "Exact file paths always" proposed as a must reads as example code, and is
    // set back to what the text states.
    assert_eq!(r.corrections.len(), 1);
    assert_eq!(r.corrections[0].rule, "r12");
    let r12 = r.obligations.iter().find(|o| o.rule == "r12").unwrap();
    assert_eq!(r12.force.as_str(), "discretionary");
    // Four of the six unstated obligations settled by citation, two left discretionary.
    assert_eq!(r.decisions.len(), 6);
    assert_eq!(r.decisions.iter().filter(|d| d.cite.is_some()).count(), 4);
    // The environment's obligation is carried, not realized by a step.
    let r11 = r.obligations.iter().find(|o| o.rule == "r11").unwrap();
    assert_eq!(r11.bearer.as_str(), "environment");
    // The task template is embodied, resident on the slots.
    let k = l
        .program
        .knowledge
        .as_deref()
        .unwrap()
        .iter()
        .find(|k| k.name == "k_r10")
        .unwrap();
    assert!(k.text().unwrap().contains("**Files:**"));
    assert!(k.resident_on.contains(&"write_tasks".to_owned()));
    // The plan is saved by an ACT.
    assert_eq!(node(&l, "save").tool.as_deref(), Some("write_file"));
}

#[test]
fn check_only_rechecks_a_lifted_program_against_its_skill_as_it_is_now() {
    let l = lift_fixture("csv-clean");
    let dir = fixture("csv-clean");
    let text = std::fs::read_to_string(dir.join("SKILL.md")).unwrap();
    let same = Skill::from_text(&text, Some(&dir), &Default::default()).unwrap();
    let r = ais::lift::compile::recheck(&same, &l.program).unwrap();
    assert_eq!(r.skill_changed, Some(false));
    assert!(!r.has_findings(), "{r:#?}");
    assert_eq!(r.obligations, 18);
    // The skill is edited: a rule reworded, the steps made optional by their heading, and a
    // new sentence.
    let edited = text
        .replace(
            "Header names MUST be unique.",
            "Header names should be distinct.",
        )
        .replace("## Steps", "## Optional steps")
        .replace(
            "## Rules\n",
            "## Rules\n\n- Keep a copy of the original file.\n",
        );
    let edited = Skill::from_text(&edited, Some(&dir), &Default::default()).unwrap();
    let r = ais::lift::compile::recheck(&edited, &l.program).unwrap();
    assert_eq!(r.skill_changed, Some(true));
    assert_eq!(r.dropped.len(), 1);
    assert_eq!(r.dropped[0].rule, "r11");
    assert!(
        r.drift
            .iter()
            .any(|d| d.rule == "r1" && d.drift == ais::lift::DriftKind::Hardened),
        "{:#?}",
        r.drift
    );
    assert!(r.audit.iter().any(|f| f.contains("r11")), "{:#?}", r.audit);
    assert!(
        r.uncovered
            .iter()
            .any(|u| u.text == "Keep a copy of the original file.")
    );
    assert!(r.has_findings());
    // A program with no record cannot be rechecked: said so.
    let bare = ais::ProgramBuilder::new("bare").build();
    assert!(ais::lift::compile::recheck(&same, &bare).is_err());
}

/// A lift whose assembled program the mechanical repairs cannot mend goes to the model repair
/// rung (the scripted `repair` answer: one edit operation); the rung's record is in the
/// report's gates, and the program it adopts checks clean.
#[test]
fn a_lift_the_mechanical_repairs_cannot_mend_goes_to_the_model_repair_rung() {
    let tmp = tempfile::tempdir().unwrap();
    let src = fixture("with-script");
    std::fs::create_dir_all(tmp.path().join("scripts")).unwrap();
    for f in ["SKILL.md", "scripts/count_words.py"] {
        std::fs::copy(src.join(f), tmp.path().join(f)).unwrap();
    }
    let mut answers: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(src.join("answers.json")).unwrap()).unwrap();
    // The designer's CODE step reads a name that is no carry: an error no mechanical repair
    // fixes.
    let design = &mut answers["design"][0];
    design["carries"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"name": "size", "type": "int", "doc": "The count's length."}));
    design["steps"].as_array_mut().unwrap().insert(
        2,
        serde_json::json!({"id": "measure", "opcode": "CODE", "doc": "Measure the count.",
            "traces_to": ["r1"], "reads": ["count"], "writes": ["size"], "tool": null,
            "body": "len(words_seen_so_far)", "tools": []}),
    );
    answers["repair"] = serde_json::json!([
        {"ops": [{"op": "set_body", "id": "measure", "body": "len(count)"}]}
    ]);
    let file = tmp.path().join("answers.json");
    std::fs::write(&file, answers.to_string()).unwrap();
    let l = run(&tmp.path().join("SKILL.md"), &file, &Lift::new("")).unwrap();
    let g = &l.report.gates;
    let rung = g.model_repair.as_ref().expect("the repair rung ran");
    assert_eq!(rung["findings_before"], 1, "{rung:#}");
    assert_eq!(rung["findings_after"], 0, "{rung:#}");
    assert_eq!(rung["deviations"][0]["check"], "X5", "{rung:#}");
    assert_eq!(g.outcome, Outcome::Fixed, "{:#?}", g.findings);
    assert!(
        g.repairs.iter().any(|r| r.contains("measure")),
        "{:#?}",
        g.repairs
    );
    assert_eq!(node(&l, "measure").body.as_deref(), Some("len(count)"));
    let calls: u32 = l.report.stages.iter().map(|s| s.model_calls).sum();
    assert_eq!(calls, 4, "extract, critic, design and one repair");
}

/// A "may" step no later step depends on is a decision point: a ROUTE the model owns chooses
/// whether to take it, tracing to the optional obligation; the program checks and audits
/// clean with no accepted deviation. The lifted program runs both ways.
#[test]
fn an_optional_step_is_a_decision_point_the_audit_accepts() {
    let tmp = tempfile::tempdir().unwrap();
    let skill = tmp.path().join("SKILL.md");
    std::fs::write(
        &skill,
        "# Notes\n\n## Steps\n\n1. Write a summary of the task.\n\n\
         You may add a haiku about the summary.\n",
    )
    .unwrap();
    let ob = |rule: &str, force: &str, quote: &str| {
        serde_json::json!({"rule": rule, "kind": "step", "force": force, "bearer": "agent",
            "quote": quote, "condition": null, "cohesion": "atomic"})
    };
    let step = |id: &str, traces: &str, reads: &str, writes: &str| {
        serde_json::json!({"id": id, "opcode": "GEN-RAW", "doc": format!("Do {id}."),
            "traces_to": [traces], "reads": [reads], "writes": [writes], "tool": null,
            "body": null, "tools": []})
    };
    let answers = serde_json::json!({
        "extract": [{"obligations": [
            ob("r1", "mandatory", "Write a summary of the task."),
            ob("r2", "discretionary", "You may add a haiku about the summary."),
        ]}],
        "critic": [{"obligations": []}],
        "design": [{"types": [], "carries": [
            {"name": "summary", "type": "str", "doc": "The summary."},
            {"name": "haiku", "type": "str", "doc": "The haiku."},
        ], "steps": [
            step("summarize", "r1", "task", "summary"),
            step("write_haiku", "r2", "summary", "haiku"),
        ]}],
    });
    let file = tmp.path().join("answers.json");
    std::fs::write(&file, answers.to_string()).unwrap();
    let l = run(&skill, &file, &Lift::new("")).unwrap();
    let r = &l.report;
    assert_eq!(r.gates.outcome, Outcome::Clean, "{:#?}", r.gates.findings);
    assert!(r.gates.added.is_empty() && r.gates.dropped.is_empty());
    let decide = node(&l, "may_write_haiku");
    assert_eq!(decide.opcode, ais::Opcode::Route);
    assert_eq!(decide.owner, Some(ais::Owner::Model));
    assert!(decide.traces_to.is_none(), "scaffolding, not a realization");
    let targets: Vec<&str> = l
        .program
        .edges
        .as_deref()
        .unwrap()
        .iter()
        .filter(|e| e.from == "may_write_haiku")
        .map(|e| e.to.as_str())
        .collect();
    assert_eq!(targets, ["write_haiku", "done"]);
    assert!(
        l.program
            .faithfulness
            .as_ref()
            .unwrap()
            .deviation_list()
            .is_empty()
    );
    assert!(!r.notes.iter().any(|n| n.action == NoteAction::Degraded));
    assert_faithful_program(&l, &std::fs::read_to_string(&skill).unwrap());
    // It runs both ways: the model takes the optional step, or goes on without it.
    let program = tmp.path().join("notes.agir");
    std::fs::write(&program, &l.agir).unwrap();
    for (choice, haiku) in [("write_haiku", true), ("done", false)] {
        let out = tmp.path().join(choice);
        std::fs::create_dir_all(&out).unwrap();
        let answers = serde_json::json!({"summarize": ["A short summary."],
            "may_write_haiku": [choice], "write_haiku": ["Five seven five."]});
        std::fs::write(out.join("run.json"), answers.to_string()).unwrap();
        let run = std::process::Command::new(env!("CARGO_BIN_EXE_ais"))
            .args([
                "run",
                program.to_str().unwrap(),
                "--task",
                "notes on rivers",
            ])
            .arg("--model")
            .arg(format!("scripted:{}", out.join("run.json").display()))
            .arg("--out")
            .arg(&out)
            .env_remove("AIS_MODEL")
            .output()
            .unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
        assert_eq!(run.status.code(), Some(0), "{all}");
        assert_eq!(all.contains("haiku: Five seven five."), haiku, "{all}");
    }
}

/// The audit of the written AG-IR against `skill`: no finding, no obligation dropped.
fn assert_faithful_program(l: &Lifted, skill: &str) {
    let doc = agir::read(&l.agir).unwrap();
    let audit = ais::audit(
        &doc.program,
        &SourceMap::new(),
        Some(skill),
        &AuditConfig::default(),
    );
    assert!(audit.findings.is_empty(), "{:#?}", audit.findings);
    assert_eq!(audit.dropped().count(), 0);
}
