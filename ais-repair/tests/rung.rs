//! The model repair rung with a scripted model: a good patch adopted; worse, unparseable,
//! oversized, out-of-view and obligation-breaking answers discarded with the program byte for
//! byte as it was; the view is all the model sees; the budget holds.

use ais_core::{CheckId, Finding, agir};
use ais_repair::{Budget, Config, Discarded, Repaired, findings_of, repair};
use ais_rt::llm::{Model, ModelFuture, ScriptedModel, SlotRequest, Turn};
use serde_json::{Value, json};
use std::sync::Mutex;

/// `polish` traces to nothing (F1 added) and `r_polish` is realized by nothing (F1 dropped);
/// `publish` is two steps away from `polish`, outside its view (the CLI tests' fixture).
const PROGRAM: &str = include_str!("../../tests/fixtures/repair/notes.agir");

fn findings() -> Vec<Finding> {
    findings_of(&agir::read(PROGRAM).unwrap(), &Config::default())
}

/// A model that answers from a script and keeps every request.
struct Recording {
    inner: ScriptedModel,
    seen: Mutex<Vec<SlotRequest>>,
}

impl Recording {
    fn new(answers: Vec<Value>) -> Recording {
        Recording {
            inner: ScriptedModel::from_json("answers.json".as_ref(), json!({"repair": answers}))
                .unwrap(),
            seen: Mutex::new(Vec::new()),
        }
    }
}

impl Model for Recording {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn is_scripted(&self) -> bool {
        true
    }
    fn complete<'a>(&'a self, request: &'a SlotRequest) -> ModelFuture<'a> {
        self.seen.lock().unwrap().push(request.clone());
        self.inner.complete(request)
    }
}

fn run_with(model: &dyn Model, targets: &[Finding], config: &Config) -> Repaired {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(repair("notes.agir", PROGRAM, targets, model, config))
        .unwrap()
}

/// One call in all: the first finding (`polish` is added) gets one answer.
fn one_answer(answer: Value) -> Repaired {
    let config = Config {
        budget: Budget {
            calls: 1,
            attempts: 1,
        },
        ..Config::default()
    };
    run_with(&Recording::new(vec![answer]), &findings(), &config)
}

/// The answer was discarded for `why`, and nothing changed: not a byte.
fn assert_discarded(done: &Repaired, why: Discarded, needle: &str) {
    assert_eq!(done.calls, 1);
    let attempt = &done.attempts[0];
    assert_eq!(attempt.discarded, Some(why), "{attempt:?}");
    assert!(
        attempt.detail.contains(needle),
        "`{needle}` not in: {}",
        attempt.detail
    );
    assert_eq!(done.text, PROGRAM, "the program must stay byte-identical");
    assert!(done.deviations.is_empty());
    assert_eq!(done.findings.len(), done.before.len());
}

#[test]
fn the_fixture_has_the_two_findings_the_tests_repair() {
    let f = findings();
    let shown: Vec<String> = f
        .iter()
        .map(|f| format!("{} {}", f.id.as_str(), f.message))
        .collect();
    assert_eq!(f.len(), 2, "{shown:#?}");
    assert!(f.iter().all(|f| f.id.check() == Some(CheckId::F1)));
    assert_eq!(f[0].instruction.as_deref(), Some("polish"));
}

#[test]
fn a_good_patch_is_adopted_the_findings_drop_and_a_deviation_is_recorded() {
    let done = one_answer(json!({"ops": [
        {"op": "set_traces_to", "target": "instruction:polish", "traces_to": ["r_polish"]}
    ]}));
    assert_eq!(done.attempts[0].discarded, None, "{:?}", done.attempts[0]);
    assert_eq!(done.attempts[0].findings, Some((2, 0)));
    assert!(done.findings.is_empty());
    assert_ne!(done.text, PROGRAM);
    assert!(done.text.contains("traces_to: [r_polish]"));
    // The text is the patched program: it reads back and the validator agrees.
    assert!(findings_of(&agir::read(&done.text).unwrap(), &Config::default()).is_empty());
    // The sections the patch did not change are as written (the edit layer rewrites a changed
    // section canonically).
    let tail = &PROGRAM[PROGRAM.find("edges:").unwrap()..];
    assert!(done.text.ends_with(tail), "{}", done.text);
    let d = &done.deviations[..];
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].check, Some(CheckId::F1));
    assert_eq!(d[0].subject, "polish");
    assert!(d[0].intended.contains("`polish` is added"));
    assert!(
        d[0].substituted.contains("set_traces_to"),
        "{}",
        d[0].substituted
    );
    assert!(d[0].substituted.contains("scripted:answers.json"));
    // The second finding went with the first: not asked about.
    assert_eq!(done.skipped.len(), 1);
    assert_eq!(done.skipped[0].why, "resolved");
    assert!(
        done.attempts[0]
            .diff
            .as_deref()
            .unwrap()
            .contains("+    traces_to: [r_polish]")
    );
}

#[test]
fn a_worse_patch_is_discarded() {
    // A new instruction nothing reaches and that traces to nothing: more findings.
    let done = one_answer(json!({"ops": [
        {"op": "add_instruction", "instruction": {"id": "tidy", "type": "GEN-RAW", "reads": ["note"], "writes": ["note"], "doc": "Tidy the note."}}
    ]}));
    let attempt = &done.attempts[0];
    let (before, after) = attempt.findings.unwrap();
    assert!(after > before, "{attempt:?}");
    assert!(matches!(
        attempt.discarded,
        Some(Discarded::NotBetter | Discarded::AddsError)
    ));
    assert_eq!(done.text, PROGRAM);
    assert!(done.deviations.is_empty());
}

#[test]
fn a_patch_that_changes_nothing_for_the_better_is_discarded() {
    let done = one_answer(json!({"ops": [
        {"op": "set_doc", "target": "instruction:polish", "doc": "Polish the note carefully."}
    ]}));
    assert_discarded(&done, Discarded::NotBetter, "2 findings before, 2 after");
}

#[test]
fn a_patch_that_adds_an_error_is_discarded_even_when_it_reduces_the_findings() {
    // Resolves both F1s, and makes the GEN-RAW `polish` code-owned: W3, an error.
    let done = one_answer(json!({"ops": [
        {"op": "set_traces_to", "target": "instruction:polish", "traces_to": ["r_polish"]},
        {"op": "set_owner", "id": "polish", "owner": "code"}
    ]}));
    assert_eq!(done.attempts[0].findings, Some((2, 1)));
    assert_discarded(&done, Discarded::AddsError, "adds W3");
}

#[test]
fn unparseable_answers_are_discarded_and_named() {
    for (answer, why, needle) in [
        (
            json!("Sure! Here is the patch: set traces"),
            Discarded::Malformed,
            "not JSON",
        ),
        (
            json!({"ops": "set_traces_to"}),
            Discarded::Malformed,
            "without an `ops` list",
        ),
        (json!({"ops": [], }), Discarded::Malformed, "no operations"),
        (
            json!({"ops": [7]}),
            Discarded::Malformed,
            "operation 0 is a number",
        ),
        (json!(42), Discarded::Malformed, "a number"),
        (
            json!({"ops": [{"op": "set_traces_to", "target": "instruction:polish", "traces_to": ["r_polish"]}], "then": "rm -rf /"}),
            Discarded::Malformed,
            "unknown fields beside `ops`: then",
        ),
        (
            json!({"$tool_calls": [{"name": "write_file", "arguments": {"path": "/etc/x"}}]}),
            Discarded::Malformed,
            "tool calls",
        ),
        (
            json!({"ops": [{"op": "teleport", "target": "instruction:polish"}]}),
            Discarded::Rejected,
            "operation 0",
        ),
        (
            json!({"ops": [{"op": "set_traces_to", "target": "instruction:polsh", "traces_to": ["r_polish"]}]}),
            Discarded::Rejected,
            "operation 0: `target`: no `instruction:polsh`; did you mean",
        ),
        (
            json!(
                "{\"ops\": [{\"op\": \"set_doc\", \"target\": \"instruction:polish\", \"doc\": 3}]}"
            ),
            Discarded::Rejected,
            "operation 0",
        ),
    ] {
        let done = one_answer(answer.clone());
        assert_eq!(
            done.attempts[0].discarded,
            Some(why),
            "{answer}: {:?}",
            done.attempts[0]
        );
        assert_discarded(&done, why, needle);
    }
}

#[test]
fn oversized_answers_are_discarded_before_anything_is_applied() {
    let op = json!({"op": "set_doc", "target": "instruction:polish", "doc": "Polish."});
    let many = json!({"ops": vec![op; 33]});
    assert_discarded(&one_answer(many), Discarded::Oversized, "33 operations");
    let huge = json!({"ops": [{"op": "set_doc", "target": "instruction:polish", "doc": "x".repeat(100_000)}]});
    assert_discarded(&one_answer(huge), Discarded::Oversized, "bytes");
    let text = json!("x".repeat(70_000));
    assert_discarded(&one_answer(text), Discarded::Oversized, "bytes");
}

#[test]
fn a_patch_touching_elements_outside_the_view_is_discarded() {
    for (ops, needle) in [
        // Resolves both findings, and rewrites `draft`, outside the view of `polish`.
        (
            json!([
                {"op": "set_traces_to", "target": "instruction:polish", "traces_to": ["r_polish"]},
                {"op": "set_doc", "target": "instruction:draft", "doc": "Draft a short note."}
            ]),
            "instruction:draft",
        ),
        // `publish` is not a neighbour: two steps away.
        (
            json!([
                {"op": "set_traces_to", "target": "instruction:polish", "traces_to": ["r_polish"]},
                {"op": "set_doc", "target": "instruction:publish", "doc": "Publish it."}
            ]),
            "instruction:publish",
        ),
        // A carry outside the view.
        (
            json!([
                {"op": "set_traces_to", "target": "instruction:polish", "traces_to": ["r_polish"]},
                {"op": "set_doc", "target": "carry:page", "doc": "The page."}
            ]),
            "carry:page",
        ),
        // An edge between two instructions outside the view.
        (
            json!([
                {"op": "set_traces_to", "target": "instruction:polish", "traces_to": ["r_polish"]},
                {"op": "set_modality", "from": "publish", "to": "done", "modality": "mandatory"}
            ]),
            "edge:publish->done",
        ),
        // Renaming a carry of the view renames it in `draft` and `publish` too.
        (
            json!([
                {"op": "set_traces_to", "target": "instruction:polish", "traces_to": ["r_polish"]},
                {"op": "rename", "target": "carry:note", "to": "memo"}
            ]),
            "instruction:draft",
        ),
    ] {
        let done = one_answer(json!({ "ops": ops }));
        assert_discarded(&done, Discarded::OutOfView, needle);
    }
}

#[test]
fn a_patch_that_drops_adds_or_re_modalizes_an_obligation_is_discarded() {
    // The dropped `r_polish` finding: its view is `draft` (which realizes the obligation
    // before it). Moving `draft`'s trace to `r_polish` realizes `r_polish` and drops `r_draft`.
    let targets: Vec<Finding> = findings().into_iter().skip(1).collect();
    assert!(targets[0].message.contains("`r_polish`"));
    let config = Config {
        budget: Budget {
            calls: 1,
            attempts: 1,
        },
        ..Config::default()
    };
    let cases = [
        (
            json!([{"op": "set_traces_to", "target": "instruction:draft", "traces_to": ["r_polish"]}]),
            "drops obligation `r_draft`",
        ),
        (
            json!([{"op": "set_traces_to", "target": "instruction:draft", "traces_to": ["r_draft", "r_polish", "r_invented"]}]),
            "adds obligation `r_invented`",
        ),
        (
            json!([{"op": "set_traces_to", "target": "edge:draft->polish", "traces_to": ["r_draft"]},
                   {"op": "set_modality", "from": "draft", "to": "polish", "modality": "discretionary"}]),
            "re-modalizes obligation `r_draft`",
        ),
    ];
    for (ops, needle) in cases {
        let model = Recording::new(vec![json!({ "ops": ops })]);
        let done = run_with(&model, &targets, &config);
        let view = &model.seen.lock().unwrap()[0].knowledge[0].1;
        assert!(view.contains("id: draft"), "{view}");
        assert_discarded(&done, Discarded::Obligation, needle);
    }
}

#[test]
fn the_model_sees_the_view_and_never_the_whole_program() {
    let model = Recording::new(vec![json!("not a patch")]);
    let config = Config {
        budget: Budget {
            calls: 1,
            attempts: 1,
        },
        ..Config::default()
    };
    run_with(&model, &findings(), &config);
    let seen = model.seen.lock().unwrap();
    let request = &seen[0];
    assert_eq!(request.instruction, "repair");
    let (name, view) = &request.knowledge[0];
    assert_eq!(name, "view");
    // The finding's instruction, its carries and the obligation nothing realizes.
    for present in ["id: polish", "Polish the note.", "name: note", "r_polish"] {
        assert!(
            view.contains(present),
            "`{present}` missing from the view:\n{view}"
        );
    }
    // The neighbours by name only; nothing further away.
    assert!(view.contains("outside the view"), "{view}");
    for absent in [
        "Draft the note.",
        "wiki page",
        "name: page",
        "r_publish",
        "r_draft",
    ] {
        assert!(
            !view.contains(absent),
            "`{absent}` leaked into the view:\n{view}"
        );
    }
    assert!(
        request.operands[0]
            .value
            .as_str()
            .unwrap()
            .contains("`polish` is added")
    );
    let catalog = &request.knowledge[1].1;
    assert!(catalog.contains("set_traces_to") && catalog.contains("ais-edit/1"));
}

#[test]
fn a_discarded_answer_is_sent_back_and_the_next_attempt_can_be_adopted() {
    let model = Recording::new(vec![
        json!("no idea"),
        json!({"ops": [{"op": "set_traces_to", "target": "instruction:polish", "traces_to": ["r_polish"]}]}),
    ]);
    let done = run_with(&model, &findings(), &Config::default());
    assert_eq!(done.calls, 2);
    assert_eq!(done.attempts[0].discarded, Some(Discarded::Malformed));
    assert_eq!(done.attempts[1].discarded, None);
    assert!(done.findings.is_empty());
    let seen = model.seen.lock().unwrap();
    assert!(seen[0].history.is_empty());
    let repair = seen[1]
        .history
        .iter()
        .find_map(|t| match t {
            Turn::Repair { error } => Some(error.clone()),
            _ => None,
        })
        .unwrap();
    assert!(repair.contains("discarded (malformed)"), "{repair}");
}

#[test]
fn the_budget_bounds_attempts_per_finding_and_calls_in_all() {
    let bad = || json!("no");
    // Two attempts per finding, three calls in all: finding 1 twice, finding 2 once.
    let model = Recording::new(vec![bad(), bad(), bad(), bad(), bad()]);
    let config = Config {
        budget: Budget {
            calls: 3,
            attempts: 2,
        },
        ..Config::default()
    };
    let done = run_with(&model, &findings(), &config);
    assert_eq!(done.calls, 3);
    assert_eq!(model.seen.lock().unwrap().len(), 3);
    let per: Vec<usize> = done.attempts.iter().map(|a| a.attempt).collect();
    assert_eq!(per, [1, 2, 1]);
    assert_eq!(done.text, PROGRAM);
    // No calls at all: every finding is skipped for the budget.
    let none = Config {
        budget: Budget {
            calls: 0,
            attempts: 2,
        },
        ..Config::default()
    };
    let done = run_with(&Recording::new(vec![]), &findings(), &none);
    assert_eq!(done.calls, 0);
    assert!(done.skipped.iter().all(|s| s.why == "budget"));
    assert_eq!(done.skipped.len(), 2);
}

#[test]
fn an_exhausted_model_is_a_named_discard_not_a_crash() {
    let done = run_with(&Recording::new(vec![]), &findings(), &Config::default());
    assert!(
        done.attempts
            .iter()
            .all(|a| a.discarded == Some(Discarded::Model))
    );
    assert!(done.attempts[0].detail.contains("the model gave no answer"));
    assert_eq!(done.text, PROGRAM);
}

#[test]
fn an_unreadable_program_is_an_error_not_a_panic() {
    let model = Recording::new(vec![]);
    let err = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(repair(
            "x.agir",
            "nodes: [",
            &[],
            &model,
            &Config::default(),
        ))
        .unwrap_err();
    assert!(err.to_string().contains("does not read as AG-IR"));
}
