//! `ais run` on AGS graphs, end to end: what AGS conformance level 1 adds beyond tasks and
//! approve gates — output schemas (`RT032`), failure isolation and `policy.on_node_failure`,
//! `failure.on_exhausted`, gate modes `notify`, `review`, `input` and `on_reject` — each run's
//! record validated against the run schema, its exit code matched to its status.

use crate::ags;

use ags::*;

#[test]
fn an_output_that_breaks_its_schema_fails_its_node_with_rt032_and_one_that_fits_passes() {
    let text_of = std::fs::read_to_string(fixture("tiers.agraph.yaml")).unwrap();
    let typed = text_of.replace(
        "{ type: string, description: The review.",
        "{ type: object, schema: { type: object, required: [score], properties: { score: { type: integer, minimum: 1, maximum: 5 } } }, description: The review.",
    );
    let env = [("AIS_MODEL_TIER", "frontier")];
    for (answer, status) in [
        (r#"{"score": 9}"#, "failed"),
        (r#"{"score": 4}"#, "succeeded"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let graph = tmp.path().join("typed.agraph.yaml");
        std::fs::write(&graph, &typed).unwrap();
        let script = serde_json::json!({"plan": ["p"], "review": [answer]});
        let (o, rec) = run_with(tmp.path(), &graph, script, &[], &env);
        let rec = rec.expect("a record");
        assert_eq!(rec["status"], status, "{}\n{rec:#}", text(&o));
        if status == "failed" {
            let m = message(&rec, "RT032");
            assert!(m.contains("breaks its schema") && m.contains('9'), "{m}");
            assert_eq!(rec["nodes"][1]["attempts"][0]["status"], "failed");
        } else {
            assert!(diagnostic(&rec, "RT032").is_none(), "{rec:#}");
            assert_eq!(rec["nodes"][1]["outputs"]["verdict"]["score"], 4);
        }
    }
}

#[test]
fn a_failed_node_skips_only_its_dependents_unless_the_graph_halts_and_on_exhausted_decides() {
    let base = std::fs::read_to_string(fixture("isolate.agraph.yaml")).unwrap();
    let exhausted = |how: &str| {
        base.replace(
            "          min_bytes: 10\n",
            &format!("          min_bytes: 10\n    failure: {{ on_exhausted: {how} }}\n"),
        )
    };
    let halt = base.replace(
        "entrypoints:",
        "policy: { on_node_failure: halt }\nentrypoints:",
    );
    let script = serde_json::json!({
        "first": ["short"], "first-review": ["fine"], "second": ["done"], "second_review": ["good"]
    });
    // (variant, graph, run status, the four node states, a diagnostic the record must hold)
    type Case<'a> = (&'a str, String, &'a str, [&'a str; 4], Option<&'a str>);
    let cases: [Case; 6] = [
        (
            "isolate (the default)",
            base.clone(),
            "failed",
            ["failed", "skipped", "succeeded", "succeeded"],
            None,
        ),
        (
            "halt",
            halt,
            "failed",
            ["failed", "skipped", "skipped", "skipped"],
            None,
        ),
        (
            "on_exhausted: fail",
            exhausted("fail"),
            "failed",
            ["failed", "skipped", "succeeded", "succeeded"],
            None,
        ),
        (
            "on_exhausted: skip",
            exhausted("skip"),
            "succeeded",
            ["skipped", "skipped", "succeeded", "succeeded"],
            None,
        ),
        (
            "on_exhausted: succeed_degraded",
            exhausted("succeed_degraded"),
            "partial",
            ["succeeded", "succeeded", "succeeded", "succeeded"],
            Some("RT042"),
        ),
        (
            "on_exhausted: escalate",
            exhausted("escalate"),
            "failed",
            ["failed", "skipped", "succeeded", "succeeded"],
            Some("ais:escalated"),
        ),
    ];
    for (variant, graph, status, nodes, code) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("g.agraph.yaml");
        std::fs::write(&path, &graph).unwrap();
        let (o, rec) = run_with(tmp.path(), &path, script.clone(), &[], &[]);
        let rec = rec.unwrap_or_else(|| panic!("{variant}: no record: {}", text(&o)));
        assert_eq!(rec["status"], status, "{variant}: {}\n{rec:#}", text(&o));
        let ids = ["first", "first-review", "second", "second_review"];
        let want: Vec<(String, String)> = ids
            .iter()
            .zip(nodes)
            .map(|(i, s)| (i.to_string(), s.to_string()))
            .collect();
        assert_eq!(states(&rec), want, "{variant}: {rec:#}");
        if let Some(code) = code {
            message(&rec, code);
        }
        // Escalated to the operator: told on stderr what failed, the node marked `escalated`.
        let escalated = code == Some("ais:escalated");
        assert_eq!(
            rec["nodes"][0]["escalated"] == true,
            escalated,
            "{variant}: {rec:#}"
        );
        let told = "escalate: node `first` did not succeed in 1 attempt(s); `long_enough` failed (first.txt: 5 bytes";
        assert_eq!(
            text(&o).contains(told),
            escalated,
            "{variant}: {}",
            text(&o)
        );
        let reason = rec["nodes"][1]["skip_reason"].as_str().unwrap_or_default();
        if nodes[1] == "skipped" {
            assert!(reason.contains("`first`"), "{variant}: {reason}");
        }
        if nodes[3] == "succeeded" {
            assert_eq!(rec["outputs"]["review"], "good", "{variant}");
        }
    }
}

#[test]
fn a_gate_rejected_with_skip_dependents_is_skipped_and_the_run_goes_on() {
    let Some(source) = minimal_edited(&[("on_reject: fail", "on_reject: skip_dependents")]) else {
        return;
    };
    let body = format!("# Contributing\n\n{}", "Run cargo test first. ".repeat(40));
    let (_tmp, _, done) = run_gated(&source, "draft_contributing", "reject", &[&body]);
    assert_eq!(done["status"], "succeeded", "{done:#}");
    assert_eq!(
        states(&done)[1],
        ("maintainer_approval".into(), "skipped".into())
    );
    assert_eq!(done["nodes"][1]["human_events"][0]["outcome"], "rejected");
    assert!(
        done["nodes"][1]["skip_reason"]
            .as_str()
            .unwrap()
            .contains("skip_dependents")
    );
}

#[test]
fn what_level_1_does_not_execute_is_refused_by_name() {
    let Some(source) = minimal_edited(&[
        (
            "      on_exhausted: fail\n",
            "      on_exhausted: fail\n      fallback:\n        - strategy: skip\n",
        ),
        (
            "entrypoints:",
            "policy: { on_node_failure: continue }\nentrypoints:",
        ),
        (
            "    type: task\n",
            "    type: task\n    human:\n      - { id: pre, at: before_side_effects, mode: approve, prompt: Write? }\n",
        ),
    ]) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let graph = tmp.path().join("g.agraph.yaml");
    std::fs::write(&graph, source).unwrap();
    let (o, rec) = run_with(tmp.path(), &graph, serde_json::json!({}), &[], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(rec.is_none());
    for named in [
        "node `draft_contributing`: `failure.fallback`",
        "`policy.on_node_failure: continue`",
        "node `draft_contributing`: human checkpoint `pre` `at: before_side_effects`",
    ] {
        assert!(text(&o).contains(named), "{named}: {}", text(&o));
    }
}

#[test]
fn a_notify_gate_sends_its_prompt_and_does_not_wait() {
    let Some(source) = minimal_edited(&[("mode: approve", "mode: notify")]) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let graph = tmp.path().join("g.agraph.yaml");
    std::fs::write(&graph, source).unwrap();
    let body = format!("# Contributing\n\n{}", "Run cargo test first. ".repeat(40));
    let script = serde_json::json!({"draft_contributing": [body]});
    let (o, rec) = run_with(tmp.path(), &graph, script, &[], &[]);
    let rec = rec.expect("a record");
    assert_eq!(rec["status"], "succeeded", "{}\n{rec:#}", text(&o));
    assert!(
        text(&o).contains("notify[maintainer_approval]: Approve the new CONTRIBUTING.md?"),
        "{}",
        text(&o)
    );
    assert_eq!(
        states(&rec)[1],
        ("maintainer_approval".into(), "succeeded".into())
    );
    let event = &rec["nodes"][1]["human_events"][0];
    assert_eq!(
        (&event["mode"], &event["outcome"]),
        (&"notify".into(), &"notified".into())
    );
}

#[test]
fn input_review_and_route_gates_read_their_answers_into_outputs_and_decisions() {
    let input = (
        "mode: approve",
        "mode: input\n      collect:\n        reviewer: { type: string, description: Who reviewed it. }\n        score: { type: integer, description: A score., schema: { minimum: 1, maximum: 5 } }",
    );
    let review = ("mode: approve", "mode: review");
    let declares = (
        "    gate:\n      mode: review",
        "    outputs:\n      notes: { type: string, description: The reviewer's notes. }\n    gate:\n      mode: review",
    );
    let route = ("on_reject: fail", "on_reject: route");
    // (edits, answer, run status, gate status, outcome, the gate's outputs, a note says)
    type Case<'a> = (
        Vec<(&'a str, &'a str)>,
        &'a str,
        &'a str,
        &'a str,
        &'a str,
        serde_json::Value,
        &'a str,
    );
    let cases: [Case; 7] = [
        (
            vec![input],
            r#"{"reviewer": "ana", "score": 4}"#,
            "succeeded",
            "succeeded",
            "provided",
            serde_json::json!({"reviewer": "ana", "score": 4}),
            "",
        ),
        (
            vec![input],
            r#"{"reviewer": "ana", "score": 9}"#,
            "failed",
            "failed",
            "rejected",
            serde_json::Value::Null,
            "breaks its schema",
        ),
        (
            vec![input],
            r#"{"score": "four"}"#,
            "failed",
            "failed",
            "rejected",
            serde_json::Value::Null,
            "not of type `integer`",
        ),
        (
            vec![review, declares],
            r#"{"notes": "Fine, ship it."}"#,
            "succeeded",
            "succeeded",
            "edited",
            serde_json::json!({"notes": "Fine, ship it."}),
            "",
        ),
        (
            vec![review, declares],
            "approve",
            "succeeded",
            "succeeded",
            "approved",
            serde_json::Value::Null,
            "",
        ),
        (
            vec![review, declares],
            r#"{"title": "x"}"#,
            "failed",
            "failed",
            "rejected",
            serde_json::Value::Null,
            "does not declare",
        ),
        (
            vec![route],
            "reject",
            "succeeded",
            "succeeded",
            "rejected",
            serde_json::json!({"decision": "rejected"}),
            "",
        ),
    ];
    let body = format!("# Contributing\n\n{}", "Run cargo test first. ".repeat(40));
    for (edits, answer, status, gate, outcome, outputs, note) in cases {
        let Some(source) = minimal_edited(&edits) else {
            return;
        };
        let (_tmp, _, done) = run_gated(&source, "draft_contributing", answer, &[&body]);
        let case = format!("{edits:?} answered {answer}");
        assert_eq!(done["status"], status, "{case}: {done:#}");
        let g = &done["nodes"][1];
        assert_eq!(g["status"], gate, "{case}: {done:#}");
        assert_eq!(g["human_events"][0]["outcome"], outcome, "{case}: {done:#}");
        if !outputs.is_null() {
            assert_eq!(g["outputs"], outputs, "{case}: {done:#}");
        }
        let said = g["human_events"][0]["note"].as_str().unwrap_or_default();
        assert!(said.contains(note), "{case}: {said}");
    }
}

/// isolate.agraph.yaml with `edits`, and a gate `sign_off` after `second_review`.
fn isolate_gated(edits: &[(&str, &str)]) -> String {
    let base = std::fs::read_to_string(fixture("isolate.agraph.yaml")).unwrap();
    let gate = "  sign_off:\n    type: gate\n    title: Sign off\n    description: A person signs the reviews off.\n    depends_on: [second_review]\n    gate: { mode: approve, prompt: Sign the reviews off? }\noutputs:";
    edits.iter().fold(
        base.replacen("outputs:\n  review:", &format!("{gate}\n  review:"), 1),
        |t, (f, to)| {
            assert!(t.contains(f), "no `{f}`");
            t.replace(f, to)
        },
    )
}

#[test]
fn a_paused_runs_record_shows_each_earlier_node_as_it_ended_not_as_succeeded() {
    let skip = (
        "          min_bytes: 10\n",
        "          min_bytes: 10\n    failure: { on_exhausted: skip }\n",
    );
    // (variant, edits, the states before the gate while it waits, the run's final status)
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, [&'a str; 4], &'a str);
    let cases: [Case; 2] = [
        (
            "isolate",
            vec![],
            ["failed", "skipped", "succeeded", "succeeded"],
            "failed",
        ),
        (
            "on_exhausted: skip",
            vec![skip],
            ["skipped", "skipped", "succeeded", "succeeded"],
            "succeeded",
        ),
    ];
    let script = serde_json::json!({"first": ["short"], "first-review": ["fine"], "second": ["done"], "second_review": ["good"]});
    for (variant, edits, before, status) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let graph = tmp.path().join("g.agraph.yaml");
        std::fs::write(&graph, isolate_gated(&edits)).unwrap();
        let (o, paused) = run_with(tmp.path(), &graph, script.clone(), &[], &[]);
        let paused = paused.expect("a record");
        assert_eq!(
            paused["status"],
            "awaiting_human",
            "{variant}: {}",
            text(&o)
        );
        let mut expected: Vec<(String, String)> =
            ["first", "first-review", "second", "second_review"]
                .iter()
                .zip(before)
                .map(|(n, s)| (n.to_string(), s.to_string()))
                .collect();
        expected.push(("sign_off".into(), "awaiting_human".into()));
        assert_eq!(states(&paused), expected, "{variant}: {paused:#}");
        // The failed node's attempt and its failed criterion are in the paused record too.
        let first = &paused["nodes"][0];
        assert_eq!(
            first["attempts"][0]["success"]["results"][0]["passed"], false,
            "{variant}: {paused:#}"
        );
        assert_eq!(
            paused["nodes"][3]["outputs"]["review"], "good",
            "{variant}: {paused:#}"
        );
        let o = resume(tmp.path(), &run_id(&o), "approve", "done.json");
        assert!(
            tmp.path().join("done.json").exists(),
            "{variant}: {}",
            text(&o)
        );
        let done = record(&tmp.path().join("done.json"));
        assert_exit_matches(&o, &done);
        assert_eq!(done["status"], status, "{variant}: {done:#}");
        expected[4].1 = "succeeded".into();
        assert_eq!(states(&done), expected, "{variant}: {done:#}");
    }
}

#[test]
fn downstream_inputs_read_a_structured_output_as_its_value_and_a_file_output_as_its_path() {
    let source = isolate_gated(&[
        (
            "report: { type: string, description: The second report. }",
            "report: { type: object, description: The second report., schema: { type: object, required: [score] } }",
        ),
        (
            "      report: { type: string, description: The report., from: nodes.second.outputs.report }",
            "      report: { type: object, description: The report., from: nodes.second.outputs.report }\n      score: { type: integer, description: Its score., from: nodes.second.outputs.report.score }\n      line: { type: string, description: A line., template: \"score ${{ nodes.second.outputs.report.score }} of ${{ nodes.second.outputs.report.of }}\" }",
        ),
        (
            "    depends_on: [first]\n",
            "    depends_on: [first]\n    inputs:\n      report: { type: file, description: The first report., from: nodes.first.outputs.report }\n",
        ),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let graph = tmp.path().join("g.agraph.yaml");
    std::fs::write(&graph, source).unwrap();
    let script = serde_json::json!({"first": ["A first report, long enough."], "first-review": ["fine"],
        "second": [r#" {"score": 4, "of": 5} "#], "second_review": ["good"]});
    let (o, rec) = run_with(tmp.path(), &graph, script, &[], &[]);
    let rec = rec.expect("a record");
    assert_eq!(rec["status"], "awaiting_human", "{}\n{rec:#}", text(&o));
    let trace = std::fs::read_to_string(tmp.path().join("trace.jsonl")).unwrap();
    let inputs = |step: &str| -> serde_json::Value {
        let line = trace
            .lines()
            .find(|l| l.contains(&format!("\"written\":[[\"{step}\"")))
            .unwrap_or_else(|| panic!("no `{step}` in the trace"));
        serde_json::from_str::<serde_json::Value>(line).unwrap()["written"][0][1].clone()
    };
    assert_eq!(
        inputs("second_review__ags_inputs"),
        serde_json::json!({"report": {"score": 4, "of": 5}, "score": 4, "line": "score 4 of 5"})
    );
    // A `file` output is its workspace-relative path downstream (§9.1), not its content.
    assert_eq!(
        inputs("first_H_review__ags_inputs"),
        serde_json::json!({"report": "first.txt"})
    );
}

#[test]
fn routing_refuses_before_any_model_call_a_node_without_inputs_a_context_floor_and_a_default_tier()
{
    let base = std::fs::read_to_string(fixture("tiers.agraph.yaml")).unwrap();
    let plan_intel = "    intelligence: { tier: advanced, allow_downgrade: true, rationale: Ordering matters. }\n";
    let edit = |to: &str| base.replace(plan_intel, to);
    let defaults = base.replace(plan_intel, "").replace(
        "entrypoints:",
        "defaults: { intelligence: { tier: frontier, rationale: Inherited. } }\nentrypoints:",
    );
    let floor = "    intelligence: { tier: minimal, min_context_tokens: 100000 }\n";
    // (case, graph, AIS_MODEL_TIER, AIS_MODEL_CONTEXT_TOKENS, plan's state, RT011 says)
    type Case<'a> = (&'a str, String, &'a str, Option<&'a str>, &'a str, &'a str);
    let cases: [Case; 5] = [
        (
            "a tier above, no inputs, no downgrade",
            edit("    intelligence: { tier: advanced }\n"),
            "standard",
            None,
            "blocked",
            "demands tier `advanced`",
        ),
        (
            "a tier from the graph's defaults",
            defaults,
            "standard",
            None,
            "blocked",
            "demands tier `frontier`",
        ),
        (
            "a context floor, the window unstated",
            edit(floor),
            "frontier",
            None,
            "blocked",
            "AIS_MODEL_CONTEXT_TOKENS=100000",
        ),
        (
            "a context floor above the window",
            edit(floor),
            "frontier",
            Some("8000"),
            "blocked",
            "has 8000",
        ),
        (
            "a context floor within the window",
            edit(floor),
            "frontier",
            Some("200000"),
            "succeeded",
            "",
        ),
    ];
    for (case, graph_text, tier, window, state, says) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let graph = tmp.path().join("g.agraph.yaml");
        std::fs::write(&graph, graph_text).unwrap();
        let script = serde_json::json!({"plan": ["1. Copy. 2. Switch."], "review": ["Safe."]});
        let mut env = vec![("AIS_MODEL_TIER", tier)];
        env.extend(window.map(|w| ("AIS_MODEL_CONTEXT_TOKENS", w)));
        let (o, rec) = run_with(tmp.path(), &graph, script, &[], &env);
        let rec = rec.unwrap_or_else(|| panic!("{case}: no record: {}", text(&o)));
        assert_eq!(rec["nodes"][0]["status"], state, "{case}: {rec:#}");
        let trace = std::fs::read_to_string(tmp.path().join("trace.jsonl")).unwrap();
        let asked = trace.contains("\"instruction\":\"plan\",");
        assert_eq!(
            asked,
            state == "succeeded",
            "{case}: the model asked for `plan`"
        );
        if state == "blocked" {
            assert_eq!(rec["status"], "failed", "{case}");
            assert_eq!(rec["nodes"][1]["status"], "skipped", "{case}: {rec:#}");
            let m = message(&rec, "RT011");
            assert!(m.contains(says), "{case}: {m}");
        }
    }
}

#[test]
fn a_retry_waits_its_backoff_before_the_next_attempt() {
    let Some(source) = minimal_edited(&[(
        "        retry_on: [transient, criteria_failed]\n",
        "        retry_on: [transient, criteria_failed]\n        backoff: fixed\n        initial_delay_seconds: 1.5\n        jitter: false\n",
    )]) else {
        return;
    };
    let body = format!("# Contributing\n\n{}", "Run cargo test first. ".repeat(40));
    let tmp = tempfile::tempdir().unwrap();
    let graph = tmp.path().join("g.agraph.yaml");
    std::fs::write(&graph, source).unwrap();
    let script = serde_json::json!({"draft_contributing": [STUB, body]});
    let started = std::time::Instant::now();
    let (o, rec) = run_with(tmp.path(), &graph, script, &[], &[]);
    let took = started.elapsed();
    assert_eq!(o.status.code(), Some(3), "pauses at the gate: {}", text(&o));
    let rec = rec.expect("a record");
    assert_eq!(
        rec["nodes"][0]["attempts"].as_array().unwrap().len(),
        2,
        "{rec:#}"
    );
    assert!(
        took >= std::time::Duration::from_millis(1500),
        "the retry did not wait: {took:?}"
    );
}
