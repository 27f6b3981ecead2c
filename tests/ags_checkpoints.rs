//! `ais run` on AGS graphs, end to end: human checkpoints of every mode at `before_start` and
//! `after_outputs` (SPEC.md §15, §7.3), and human timeouts (`on_timeout` and the policy's
//! defaults) on checkpoints and gates — each run's record validated against the run schema,
//! its exit code matched to its status.

use crate::ags;

use ags::*;
use std::time::Duration;

const START: &str = "Start drafting the release notes? (approve/reject)";
const LOOK: &str = "Does the draft look right? (approve/reject)";
const SIGN: &str = "Sign off the release notes? (approve/reject)";

/// human-review.agraph.yaml with each `(from, to)` edit made.
fn human_review(edits: &[(&str, &str)]) -> String {
    let text = std::fs::read_to_string(fixture("human-review.agraph.yaml")).unwrap();
    edits.iter().fold(text, |t, (from, to)| {
        assert!(t.contains(from), "no `{from}`");
        t.replacen(from, to, 1)
    })
}

/// Runs `source` answering `answers`, each after `wait`: the prompts, the last run's output
/// and the record.
fn run(
    source: &str,
    answers: &[&str],
    wait: Duration,
) -> (Vec<String>, Output, serde_json::Value, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let graph = tmp.path().join("g.agraph.yaml");
    std::fs::write(&graph, source).unwrap();
    let script =
        serde_json::json!({"draft": ["# Notes v1", "# Notes v2"], "summarize": ["It ships."]});
    let (prompts, o, rec) = answering(tmp.path(), &graph, script, answers, wait);
    (prompts, o, rec, tmp)
}

/// The `look` checkpoint (after_outputs) of mode `mode` with `extra` fields.
fn look(mode: &str, extra: &str) -> (&'static str, String) {
    (
        "        mode: approve\n        prompt: \"Does the draft look right?\"",
        format!("        mode: {mode}\n        prompt: \"Does the draft look right?\"{extra}"),
    )
}

#[test]
fn checkpoints_of_every_mode_ask_decide_and_set_the_nodes_outputs() {
    let collect =
        "\n        collect:\n          reviewer: { type: string, description: Who reviewed it. }";
    let go_review = (
        "        at: before_start\n        mode: approve",
        "        at: before_start\n        mode: review".to_owned(),
    );
    // (case, edits, answers, prompts asked, run status, the `look` event's outcome, NOTES.md,
    // the draft's output `reviewer`, a note the event holds)
    type Case<'a> = (
        &'a str,
        Vec<(&'a str, String)>,
        Vec<&'a str>,
        Vec<&'a str>,
        &'a str,
        &'a str,
        Option<&'a str>,
        Option<&'a str>,
        &'a str,
    );
    let cases: Vec<Case> = vec![
        (
            "notify",
            vec![look("notify", "")],
            vec!["approve", "approve"],
            vec![START, SIGN],
            "succeeded",
            "notified",
            Some("# Notes v1"),
            None,
            "",
        ),
        (
            "review edits a file output",
            vec![look("review", "")],
            vec!["approve", r##"{"notes": "# Edited notes"}"##, "approve"],
            vec![START, LOOK, SIGN],
            "succeeded",
            "edited",
            Some("# Edited notes"),
            None,
            "",
        ),
        (
            "review approves as is",
            vec![look("review", "")],
            vec!["approve", "approve", "approve"],
            vec![START, LOOK, SIGN],
            "succeeded",
            "approved",
            Some("# Notes v1"),
            None,
            "",
        ),
        (
            "review edits an undeclared output",
            vec![look("review", "")],
            vec!["approve", r#"{"title": "x"}"#],
            vec![START, LOOK],
            "failed",
            "rejected",
            None,
            None,
            "does not declare",
        ),
        (
            "input",
            vec![look("input", collect)],
            vec!["approve", r#"{"reviewer": "ana"}"#, "approve"],
            vec![START, LOOK, SIGN],
            "succeeded",
            "provided",
            Some("# Notes v1"),
            Some("ana"),
            "",
        ),
        (
            "input of the wrong type",
            vec![look("input", collect)],
            vec!["approve", r#"{"reviewer": 5}"#],
            vec![START, LOOK],
            "failed",
            "rejected",
            None,
            None,
            "not of type `string`",
        ),
        (
            "a review before the start edits nothing",
            vec![go_review],
            vec![r##"{"notes": "# Early"}"##],
            vec![START],
            "failed",
            "",
            None,
            None,
            "no outputs to edit yet",
        ),
    ];
    for (case, edits, answers, asked, status, outcome, notes, reviewer, note) in cases {
        let edits: Vec<(&str, &str)> = edits.iter().map(|(f, t)| (*f, t.as_str())).collect();
        let (prompts, o, rec, tmp) = run(&human_review(&edits), &answers, Duration::ZERO);
        assert_eq!(prompts, asked, "{case}: {}", text(&o));
        assert_eq!(rec["status"], status, "{case}: {rec:#}");
        let events = rec["nodes"][0]["human_events"].as_array().unwrap();
        let event = events
            .iter()
            .find(|e| e["checkpoint_id"] == if outcome.is_empty() { "go" } else { "look" });
        let event = event.unwrap_or_else(|| panic!("{case}: no event: {rec:#}"));
        if !outcome.is_empty() {
            assert_eq!(event["outcome"], outcome, "{case}: {rec:#}");
        }
        assert!(
            event["note"].as_str().unwrap_or_default().contains(note),
            "{case}: {event}"
        );
        let file = std::fs::read_to_string(tmp.path().join("out/NOTES.md")).ok();
        assert_eq!(file.as_deref(), notes, "{case}");
        assert_eq!(
            rec["nodes"][0]["outputs"]["reviewer"].as_str(),
            reviewer,
            "{case}: {rec:#}"
        );
    }
    // A notification is sent on the operator's terminal as the run goes past it.
    let source = human_review(&[(
        "        at: before_start\n        mode: approve",
        "        at: before_start\n        mode: notify",
    )]);
    let tmp = tempfile::tempdir().unwrap();
    let graph = tmp.path().join("g.agraph.yaml");
    std::fs::write(&graph, source).unwrap();
    let script = serde_json::json!({"draft": ["# Notes v1"]});
    let (o, _) = run_with(tmp.path(), &graph, script, &[], &[]);
    assert!(
        text(&o).contains("notify[draft/go]: Start drafting the release notes?"),
        "{}",
        text(&o)
    );
    assert!(
        text(&o).contains(LOOK),
        "it went on to the next checkpoint: {}",
        text(&o)
    );
}

#[test]
fn an_answer_after_the_timeout_is_decided_by_on_timeout_and_one_in_time_is_taken() {
    let timed = |secs: &str, on: &str| {
        (
            "        at: before_start\n        mode: approve",
            format!(
                "        at: before_start\n        mode: approve\n        timeout_seconds: {secs}\n        on_timeout: {on}"
            ),
        )
    };
    let policy = |on: &str| {
        (
            "entrypoints:",
            format!(
                "policy: {{ on_human_timeout: {on}, default_human_timeout_seconds: 0.5 }}\nentrypoints:"
            ),
        )
    };
    let late = Duration::from_millis(1200);
    // (case, edits, wait, run status, the `go` event's outcome, the draft's state, escalated)
    type Case<'a> = (
        &'a str,
        Vec<(&'a str, String)>,
        Duration,
        &'a str,
        &'a str,
        &'a str,
        bool,
    );
    let cases: Vec<Case> = vec![
        (
            "fail, late",
            vec![timed("0.5", "fail")],
            late,
            "failed",
            "timed_out",
            "failed",
            false,
        ),
        (
            "approve, late",
            vec![timed("0.5", "approve")],
            late,
            "succeeded",
            "timed_out",
            "succeeded",
            false,
        ),
        (
            "escalate, late",
            vec![timed("0.5", "escalate")],
            late,
            "failed",
            "timed_out",
            "failed",
            true,
        ),
        (
            "hold, late",
            vec![timed("0.5", "hold")],
            late,
            "succeeded",
            "approved",
            "succeeded",
            false,
        ),
        (
            "fail, in time",
            vec![timed("60", "fail")],
            Duration::ZERO,
            "succeeded",
            "approved",
            "succeeded",
            false,
        ),
        (
            "the policy's defaults, late",
            vec![policy("fail")],
            late,
            "failed",
            "timed_out",
            "failed",
            false,
        ),
    ];
    for (case, edits, wait, status, outcome, state, escalated) in cases {
        let edits: Vec<(&str, &str)> = edits.iter().map(|(f, t)| (*f, t.as_str())).collect();
        let (_, o, rec, tmp) = run(&human_review(&edits), &["approve"; 5], wait);
        assert_eq!(rec["status"], status, "{case}: {rec:#}");
        let draft = &rec["nodes"][0];
        assert_eq!(draft["status"], state, "{case}: {rec:#}");
        let go = &draft["human_events"][0];
        assert_eq!(
            (go["checkpoint_id"].as_str(), go["outcome"].as_str()),
            (Some("go"), Some(outcome)),
            "{case}: {rec:#}"
        );
        if outcome == "timed_out" {
            assert!(
                go["note"]
                    .as_str()
                    .unwrap()
                    .contains("no answer within 0.5s"),
                "{case}: {go}"
            );
        }
        if state == "failed" {
            // Refused before any model call: no attempt, no file.
            assert!(draft.get("attempts").is_none(), "{case}: {rec:#}");
            assert!(!tmp.path().join("out/NOTES.md").exists(), "{case}");
        }
        assert_eq!(
            diagnostic(&rec, "ais:escalated").is_some(),
            escalated,
            "{case}: {rec:#}"
        );
        assert_eq!(
            text(&o).contains("escalate: "),
            escalated,
            "{case}: {}",
            text(&o)
        );
    }
}

#[test]
fn a_gate_answered_after_its_timeout_fails_or_passes_by_on_timeout() {
    for (on, status, gate) in [
        ("fail", "failed", "failed"),
        ("approve", "succeeded", "succeeded"),
        ("hold", "failed", "failed"),
    ] {
        let Some(source) = minimal_edited(&[
            ("timeout_seconds: 86400", "timeout_seconds: 0.5"),
            ("on_timeout: hold", &format!("on_timeout: {on}")),
        ]) else {
            return;
        };
        let tmp = tempfile::tempdir().unwrap();
        let graph = tmp.path().join("g.agraph.yaml");
        std::fs::write(&graph, source).unwrap();
        let body = format!("# Contributing\n\n{}", "Run cargo test first. ".repeat(40));
        let script = serde_json::json!({"draft_contributing": [body]});
        // `hold` takes the late answer as it is: a rejection.
        let answer = if on == "hold" { "reject" } else { "approve" };
        let (_, o, rec) = answering(
            tmp.path(),
            &graph,
            script,
            &[answer],
            Duration::from_millis(1200),
        );
        assert_eq!(rec["status"], status, "{on}: {}\n{rec:#}", text(&o));
        let g = &rec["nodes"][1];
        assert_eq!(g["status"], gate, "{on}: {rec:#}");
        let expected = if on == "hold" {
            "rejected"
        } else {
            "timed_out"
        };
        assert_eq!(g["human_events"][0]["outcome"], expected, "{on}: {rec:#}");
    }
}

#[test]
fn a_checkpoints_when_decides_whether_it_is_asked_and_an_error_in_it_is_run_fatal() {
    let when = |expr: &str| look("approve", &format!("\n        when: \"{expr}\""));
    let lenient = (
        "entrypoints:",
        "policy: { on_expression_error: \"false\" }\nentrypoints:".to_owned(),
    );
    // (case, edits, prompts asked, run status, summarize's state, RT062's severity)
    type Case<'a> = (
        &'a str,
        Vec<(&'a str, String)>,
        Vec<&'a str>,
        &'a str,
        &'a str,
        Option<&'a str>,
    );
    let cases: Vec<Case> = vec![
        (
            "holds",
            vec![when("nodes.self.outputs.notes == '# Notes v1'")],
            vec![START, LOOK, SIGN],
            "succeeded",
            "succeeded",
            None,
        ),
        (
            "does not hold",
            vec![when("self.outputs.notes == 'other'")],
            vec![START, SIGN],
            "succeeded",
            "succeeded",
            None,
        ),
        (
            "cannot be evaluated",
            vec![when("1 / 0 > 1")],
            vec![START],
            "failed",
            "skipped",
            Some("error"),
        ),
        (
            "cannot be evaluated, leniently",
            vec![when("1 / 0 > 1"), lenient],
            vec![START, SIGN],
            "succeeded",
            "succeeded",
            Some("warning"),
        ),
    ];
    for (case, edits, asked, status, summarize, rt062) in cases {
        let edits: Vec<(&str, &str)> = edits.iter().map(|(f, t)| (*f, t.as_str())).collect();
        let (prompts, o, rec, _tmp) = run(&human_review(&edits), &["approve"; 5], Duration::ZERO);
        assert_eq!(prompts, asked, "{case}: {}\n{rec:#}", text(&o));
        assert_eq!(rec["status"], status, "{case}: {rec:#}");
        assert_eq!(rec["nodes"][1]["status"], summarize, "{case}: {rec:#}");
        let severity =
            diagnostic(&rec, "RT062").map(|d| d["severity"].as_str().unwrap().to_owned());
        assert_eq!(severity.as_deref(), rt062, "{case}: {rec:#}");
        if rt062.is_some() {
            assert!(
                message(&rec, "RT062").contains("division"),
                "{case}: {rec:#}"
            );
        }
    }
}

#[test]
fn a_question_is_put_with_its_template_filled_and_the_material_it_presents() {
    let Some(source) = minimal_edited(&[
        (
            "prompt: \"Approve the new CONTRIBUTING.md?\"",
            "prompt: \"Approve the new CONTRIBUTING.md for ${{ context.project }}?\"",
        ),
        ("entrypoints:", "context: { project: ais }\nentrypoints:"),
    ]) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let graph = tmp.path().join("g.agraph.yaml");
    std::fs::write(&graph, source).unwrap();
    let body = format!("# Contributing\n\n{}", "Run cargo test first. ".repeat(40));
    let script = serde_json::json!({"draft_contributing": [body]});
    let (o, _) = run_with(tmp.path(), &graph, script, &[], &[]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let said = text(&o);
    assert!(
        said.contains("Approve the new CONTRIBUTING.md for ais? (approve/reject)"),
        "{said}"
    );
    // The file output it presents is its path under the output root.
    assert!(
        said.lines()
            .any(|l| l == "  nodes.draft_contributing.outputs.contributing: CONTRIBUTING.md"),
        "{said}"
    );
    assert!(!said.contains("${{"), "{said}");
}

/// A graph whose node `a` has the checkpoints `human` (YAML flow mappings, one a line) and the
/// criteria `criteria`.
fn two_checkpoints(human: &[&str], criteria: &str) -> String {
    let human: String = human.iter().map(|h| format!("      - {h}\n")).collect();
    format!(
        "ags_version: '1.0'\nkind: AgenticGraph\nid: two\ntitle: Two\nobjective: Two looks.\n\
         entrypoints: [a]\nnodes:\n  a:\n    title: A\n    description: Do A.\n    outputs:\n      \
         out: {{type: string, description: The result.}}\n    human:\n{human}{criteria}"
    )
}

#[test]
fn two_checkpoints_without_an_id_are_each_asked_in_turn() {
    // The attack: both unnamed, both `checkpoint` to a harness that names them by their id —
    // the first was asked twice and the second never.
    let source = two_checkpoints(
        &[
            "{at: after_outputs, mode: approve, prompt: First look}",
            "{at: after_outputs, mode: review, prompt: Second look}",
        ],
        "",
    );
    let tmp = tempfile::tempdir().unwrap();
    let graph = tmp.path().join("g.agraph.yaml");
    std::fs::write(&graph, source).unwrap();
    let script = serde_json::json!({"a": ["made"]});
    let (prompts, o, rec) = answering(
        tmp.path(),
        &graph,
        script,
        &["approve", "approve"],
        Duration::ZERO,
    );
    assert_eq!(
        prompts,
        [
            "First look (approve/reject)",
            "Second look (approve/reject)"
        ],
        "{}",
        text(&o)
    );
    assert_eq!(rec["status"], "succeeded", "{rec:#}");
    let events: Vec<&str> = rec["nodes"][0]["human_events"]
        .as_array()
        .expect("the checkpoints' events")
        .iter()
        .map(|e| e["checkpoint_id"].as_str().unwrap())
        .collect();
    assert_eq!(events, ["checkpoint_0", "checkpoint_1"], "{rec:#}");
}

#[test]
fn checkpoints_or_human_criteria_sharing_an_id_are_refused_where_they_stand() {
    let same = [
        "{id: look, at: after_outputs, mode: approve, prompt: First look}",
        "{id: look, at: after_outputs, mode: review, prompt: Second look}",
    ];
    let criteria = "    success:\n      criteria:\n        \
        - {id: ok, kind: human, description: Fine., prompt: Fine?}\n        \
        - {id: ok, kind: human, description: Really fine., prompt: Really?}\n";
    for (source, said) in [
        (
            two_checkpoints(&same, ""),
            "node `a`: human checkpoint 1 (`/nodes/a/human/1`) is named `look` as checkpoint 0 is",
        ),
        (
            two_checkpoints(&same[..1], criteria),
            "node `a`: `human` criterion 1 (`/nodes/a/success/criteria/1/id`) has the id `ok` of criterion 0",
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let graph = tmp.path().join("g.agraph.yaml");
        std::fs::write(&graph, &source).unwrap();
        std::fs::write(tmp.path().join("script.json"), r#"{"a": ["made"]}"#).unwrap();
        let o = scripted_run(&graph)
            .current_dir(tmp.path())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{source}\n{}", text(&o));
        assert!(text(&o).contains(said), "{source}\n{}", text(&o));
        assert!(
            !tmp.path().join(".ais").exists(),
            "nothing ran: {}",
            text(&o)
        );
    }
}
