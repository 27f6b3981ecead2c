//! `ais run` on an AGS graph, end to end through the real binary on a scripted model: the
//! minimal example pauses at its gate, resumes with the approver's answer, writes its file
//! output and an AGS run record that validates against the run schema; retries, checkpoints,
//! params and inputs, tiers, command criteria (their sandbox and their journal class); a graph
//! using features this harness does not execute is refused, naming them.

use crate::ags;

use ags::*;

#[test]
fn minimal_runs_end_to_end_and_its_run_records_validate() {
    let body = format!(
        "# Contributing\n\n{}",
        "Build with cargo build, test with cargo test, and open a pull request against main. "
            .repeat(10)
    );
    let Some((tmp, paused, done)) = run_minimal("approve", &body) else {
        return;
    };
    assert_eq!(paused["status"], "awaiting_human");
    assert_eq!(
        states(&paused)[1],
        ("maintainer_approval".into(), "awaiting_human".into())
    );
    assert_eq!(done["status"], "succeeded", "{done:#}");
    assert_eq!(
        states(&done),
        [
            ("draft_contributing".into(), "succeeded".into()),
            ("maintainer_approval".into(), "succeeded".into())
        ]
    );
    assert_eq!(done["outputs"]["contributing_guide"], "CONTRIBUTING.md");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("out/CONTRIBUTING.md")).unwrap(),
        body
    );
    let results = &done["nodes"][0]["attempts"][0]["success"]["results"];
    assert_eq!(results[0]["id"], "file_written");
    assert_eq!(results[0]["passed"], true);
    assert_eq!(done["nodes"][1]["human_events"][0]["outcome"], "approved");
}

#[test]
fn node_ids_with_a_dash_or_a_leading_digit_run_and_translate_back_unchanged() {
    // AGX names are identifiers, so no expression can read such a node: the gate presents
    // nothing and the graph binds no output; every guard and carry of the run names them.
    let Some(source) = minimal_edited(&[
        ("draft_contributing", "draft-contributing"),
        ("maintainer_approval", "1st-maintainer-approval"),
        (
            "      present:\n        - nodes.draft-contributing.outputs.contributing\n",
            "",
        ),
    ]) else {
        return;
    };
    let source = &source[..source.find("\noutputs:\n").expect("graph outputs")];
    let body = format!("# Contributing\n\n{}", "Run cargo test first. ".repeat(40));
    for (answer, status) in [("approve", "succeeded"), ("reject", "failed")] {
        let (tmp, _, done) = run_gated(source, "draft-contributing", answer, &[STUB, &body]);
        assert_eq!(done["status"], status, "{done:#}");
        assert_eq!(
            states(&done),
            [
                ("draft-contributing".into(), "succeeded".into()),
                ("1st-maintainer-approval".into(), status.into())
            ]
        );
        assert_eq!(done["nodes"][0]["attempts"].as_array().unwrap().len(), 2);
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("out/CONTRIBUTING.md")).unwrap(),
            body
        );
    }
    // The import checks clean, and its export is the graph again, ids and all.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("g.agraph.yaml"), source).unwrap();
    let o = ais(tmp.path(), &["import", "g.agraph.yaml"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    std::fs::write(tmp.path().join("g.agir"), &o.stdout).unwrap();
    let o = ais(tmp.path(), &["check", "g.agir"]);
    assert!(text(&o).contains("clean"), "{}", text(&o));
    let o = ais(tmp.path(), &["export", "--ags", "g.agir"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let back: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let original = ais::ags::load_text(source).data.unwrap().value;
    assert_eq!(back, original);
}

#[test]
fn a_rejected_gate_or_a_stub_file_fails_the_run() {
    let body = format!("# Contributing\n\n{}", "Open a pull request. ".repeat(40));
    let Some((_tmp, _, done)) = run_minimal("reject", &body) else {
        return;
    };
    assert_eq!(done["status"], "failed", "{done:#}");
    assert_eq!(
        states(&done)[1],
        ("maintainer_approval".into(), "failed".into())
    );
    assert_eq!(done["nodes"][1]["human_events"][0]["outcome"], "rejected");
}

#[test]
fn a_failed_criterion_is_retried_with_its_feedback_before_the_gate() {
    let good = format!(
        "# Contributing\n\n{}",
        "Run cargo test before you push. ".repeat(30)
    );
    let Some((tmp, _, done)) = run_minimal_with("approve", &[STUB, &good]) else {
        return;
    };
    assert_eq!(done["status"], "succeeded", "{done:#}");
    let attempts = done["nodes"][0]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "{done:#}");
    assert_eq!(attempts[0]["status"], "criteria_failed");
    let evidence = attempts[0]["success"]["results"][0]["evidence"]
        .as_str()
        .unwrap();
    assert!(
        evidence.contains("21 bytes (at least 600 required)"),
        "{evidence}"
    );
    assert_eq!(attempts[1]["status"], "succeeded");
    // The second attempt's prompt carries the failed criterion's description and evidence.
    let trace = std::fs::read_to_string(tmp.path().join("trace.jsonl")).unwrap();
    let feedback = "file_written: CONTRIBUTING.md exists and is more than a stub. (evidence: CONTRIBUTING.md: 21 bytes";
    let slots: Vec<&str> = trace
        .lines()
        .filter(|l| l.contains("\"instruction\":\"draft_contributing\","))
        .collect();
    assert_eq!(slots.len(), 2, "two attempts");
    assert!(
        !slots[0].contains(feedback),
        "the first attempt has no feedback"
    );
    assert!(
        slots[1].contains(feedback),
        "the second attempt's request has the feedback"
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("out/CONTRIBUTING.md")).unwrap(),
        good
    );
}

#[test]
fn a_node_that_exhausts_its_attempts_fails_before_the_gate_is_asked() {
    let Some(dir) = ags() else { return };
    let graph = dir.join("examples/minimal.agraph.yaml");
    let tmp = tempfile::tempdir().unwrap();
    let script = serde_json::json!({"draft_contributing": [STUB, STUB]});
    let (o, rec) = run_with(tmp.path(), &graph, script, &[], &[]);
    // No pause: the gate after a failed node is never asked; the failed run exits 1.
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        !text(&o).contains("Approve the new CONTRIBUTING.md?"),
        "{}",
        text(&o)
    );
    let rec = rec.expect("a record");
    assert_eq!(rec["status"], "failed", "{rec:#}");
    assert_eq!(
        states(&rec),
        [
            ("draft_contributing".into(), "failed".into()),
            ("maintainer_approval".into(), "skipped".into())
        ]
    );
    let attempts = rec["nodes"][0]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "max_attempts: 2");
    assert!(attempts.iter().all(|a| a["status"] == "criteria_failed"));
    message(&rec, "RT041");
}

#[test]
fn a_graph_beyond_what_this_harness_executes_is_refused_naming_the_features() {
    let Some(dir) = ags() else { return };
    let graph = dir.join("examples/test-repair-loop.agraph.yaml");
    let tmp = tempfile::tempdir().unwrap();
    let o = ais(
        tmp.path(),
        &[
            "run",
            graph.to_str().unwrap(),
            "--task",
            "t",
            "--model",
            "scripted:none.json",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("does not execute") && t.contains("type: loop"),
        "{t}"
    );
    // A graph with errors does not run at all.
    let bad = dir.join("conformance/invalid/ag111-cycle.agraph.yaml");
    let o = ais(tmp.path(), &["run", bad.to_str().unwrap(), "--task", "t"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("error[AG111]"), "{}", text(&o));
}

#[test]
fn checkpoints_and_a_human_criterion_pause_the_run_and_a_refusal_is_retried() {
    let tmp = tempfile::tempdir().unwrap();
    let script =
        serde_json::json!({"draft": ["# Notes v1", "# Notes v2"], "summarize": ["It ships."]});
    let answers = ["approve", "approve", "no", "approve", "approve"];
    let graph = fixture("human-review.agraph.yaml");
    let (prompts, code, rec) = run_answering(tmp.path(), &graph, script, &answers);
    let start = "Start drafting the release notes? (approve/reject)";
    let look = "Does the draft look right? (approve/reject)";
    let sign = "Sign off the release notes? (approve/reject)";
    // before_start once; after_outputs and the criterion on each attempt.
    assert_eq!(prompts, [start, look, sign, look, sign], "{rec:#}");
    assert_eq!(code, Some(0));
    assert_eq!(rec["status"], "succeeded", "{rec:#}");
    let draft = &rec["nodes"][0];
    let attempts = draft["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2);
    let signed = &attempts[0]["success"]["results"][1];
    assert_eq!(
        (signed["kind"].as_str(), signed["passed"].as_bool()),
        (Some("human"), Some(false))
    );
    assert_eq!(signed["evidence"], "the reviewer answered `no`");
    let stages: Vec<&str> = draft["human_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["at_stage"].as_str().unwrap())
        .collect();
    assert_eq!(stages, ["before_start", "after_outputs"]);
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("out/NOTES.md")).unwrap(),
        "# Notes v2"
    );
    assert_eq!(rec["outputs"]["summary"], "It ships.");
}

#[test]
fn a_rejected_checkpoint_fails_its_node_before_any_model_call() {
    let tmp = tempfile::tempdir().unwrap();
    let script = serde_json::json!({"draft": ["# Notes"], "summarize": ["It ships."]});
    let graph = fixture("human-review.agraph.yaml");
    let (prompts, _, rec) = run_answering(tmp.path(), &graph, script, &["reject"]);
    assert_eq!(prompts.len(), 1);
    assert_eq!(rec["status"], "failed", "{rec:#}");
    assert_eq!(
        states(&rec),
        [
            ("draft".into(), "failed".into()),
            ("summarize".into(), "skipped".into())
        ]
    );
    assert_eq!(rec["nodes"][0]["human_events"][0]["outcome"], "rejected");
    assert!(
        rec["nodes"][0].get("attempts").is_none(),
        "no attempt ran: {rec:#}"
    );
    assert!(!tmp.path().join("out/NOTES.md").exists());
}

/// Runs the params fixture with `args` appended; returns the temp dir and its run record.
fn run_params(args: &[&str]) -> (tempfile::TempDir, Output, serde_json::Value) {
    let tmp = tempfile::tempdir().unwrap();
    let script = serde_json::json!({"announce": ["ais 1.2.0 is out."], "condense": ["Out now."]});
    let graph = fixture("params-inputs.agraph.yaml");
    let (o, rec) = run_with(tmp.path(), &graph, script, args, &[]);
    (tmp, o, rec.expect("a record"))
}

#[test]
fn params_bind_and_every_kind_of_input_resolves_before_its_node() {
    let (tmp, o, rec) = run_params(&["--input", "version=1.2.0"]);
    assert_eq!(rec["status"], "succeeded", "{}\n{rec:#}", text(&o));
    let trace = std::fs::read_to_string(tmp.path().join("trace.jsonl")).unwrap();
    let line = trace
        .lines()
        .find(|l| l.contains("\"written\":[[\"announce__ags_inputs\""))
        .expect("the inputs step");
    let step: serde_json::Value = serde_json::from_str(line).unwrap();
    // Implicit (params, then context), template, value, and an optional input's default.
    assert_eq!(
        step["written"][0][1],
        serde_json::json!({"version": "1.2.0", "product": "ais", "headline": "ais 1.2.0 on stable",
            "audience": "developers", "tone": "plain"})
    );
    // An AGX `from` over an upstream output.
    assert!(
        trace.contains("\"shout\":\"AIS 1.2.0 IS OUT.\""),
        "no evaluated `from`"
    );
    assert_eq!(rec["outputs"]["sentence"], "Out now.");
}

#[test]
fn a_missing_or_invalid_param_rejects_the_run_before_any_node() {
    let (tmp, _, rec) = run_params(&["--input", "channel=nightly"]);
    assert_eq!(rec["status"], "failed", "{rec:#}");
    let codes: Vec<&str> = rec["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert!(
        codes.contains(&"AG301") && codes.contains(&"AG302"),
        "{codes:?}"
    );
    assert!(
        rec["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n["status"] == "skipped"),
        "{rec:#}"
    );
    let trace = std::fs::read_to_string(tmp.path().join("trace.jsonl")).unwrap();
    assert!(
        !trace.contains("\"instruction\":\"announce\","),
        "no model call"
    );
    // A version breaking its schema is AG302 too.
    let (_, _, rec) = run_params(&["--input", "version=v1"]);
    let d = &rec["diagnostics"][0];
    assert_eq!(
        (d["code"].as_str(), rec["status"].as_str()),
        (Some("AG302"), Some("failed")),
        "{rec:#}"
    );
    assert!(d["message"].as_str().unwrap().contains("breaks its schema"));
}

#[test]
fn a_required_input_that_resolves_to_nothing_fails_its_node_before_the_model() {
    let tmp = tempfile::tempdir().unwrap();
    let graph = tmp.path().join("g.agraph.yaml");
    let text_of = std::fs::read_to_string(fixture("params-inputs.agraph.yaml")).unwrap();
    // `audience` loses its value: nothing named `audience` in params or context binds it.
    std::fs::write(&graph, text_of.replace(", value: developers", "")).unwrap();
    let script = serde_json::json!({"announce": ["x"], "condense": ["y"]});
    let input = ["--input", "version=1.0.0"];
    let (o, rec) = run_with(tmp.path(), &graph, script, &input, &[]);
    let rec = rec.expect("a record");
    assert_eq!(rec["status"], "failed", "{}\n{rec:#}", text(&o));
    assert_eq!(states(&rec)[0], ("announce".into(), "failed".into()));
    let m = message(&rec, "RT033");
    assert!(m.contains("required input `audience`"), "{m}");
    let trace = std::fs::read_to_string(tmp.path().join("trace.jsonl")).unwrap();
    assert!(trace.contains("\"instruction\":\"announce__ags_inputs\","));
    assert!(
        !trace.contains("\"instruction\":\"announce\","),
        "no model call"
    );
}

/// Runs the tiers fixture on a model of tier `tier` (unset: the default); returns the record.
fn run_tiers(tier: Option<&str>) -> (tempfile::TempDir, serde_json::Value) {
    let tmp = tempfile::tempdir().unwrap();
    let script = serde_json::json!({"plan": ["1. Copy. 2. Switch."], "review": ["Safe."]});
    let graph = fixture("tiers.agraph.yaml");
    let env: Vec<(&str, &str)> = tier.map(|t| ("AIS_MODEL_TIER", t)).into_iter().collect();
    let (_, rec) = run_with(tmp.path(), &graph, script, &[], &env);
    (tmp, rec.expect("a record"))
}

#[test]
fn a_tier_above_the_model_is_refused_before_any_token_unless_downgrade_is_allowed() {
    let (tmp, rec) = run_tiers(None);
    assert_eq!(rec["status"], "failed", "{rec:#}");
    assert_eq!(
        states(&rec),
        [
            ("plan".into(), "succeeded".into()),
            ("review".into(), "blocked".into())
        ]
    );
    let routed = &rec["nodes"][0]["attempts"][0]["routed"];
    assert_eq!(routed["requested_tier"], "advanced");
    assert_eq!(routed["effective_tier"], "standard");
    assert_eq!(routed["downgraded"], true);
    assert!(
        routed["reason"]
            .as_str()
            .unwrap()
            .contains("allow_downgrade")
    );
    message(&rec, "RT011");
    assert_eq!(diagnostic(&rec, "RT011").unwrap()["node_id"], "review");
    let trace = std::fs::read_to_string(tmp.path().join("trace.jsonl")).unwrap();
    assert!(
        !trace.contains("\"instruction\":\"review\","),
        "no model call for review"
    );
    // A frontier model satisfies both, without downgrading.
    let (_, rec) = run_tiers(Some("frontier"));
    assert_eq!(rec["status"], "succeeded", "{rec:#}");
    assert_eq!(
        rec["nodes"][1]["attempts"][0]["routed"]["requested_tier"],
        "frontier"
    );
    assert_eq!(
        rec["nodes"][0]["attempts"][0]["routed"]["downgraded"],
        false
    );
}

#[test]
fn command_criteria_run_only_when_allowed_and_gate_the_retry() {
    let tmp = tempfile::tempdir().unwrap();
    let graph = fixture("commands.agraph.yaml");
    let script = serde_json::json!({"report": ["FAIL: disk", "OK: all green"]});
    // Without the operator's opt-in, a graph with required command criteria is refused.
    let (o, rec) = run_with(tmp.path(), &graph, script.clone(), &[], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("`--allow-commands`"), "{}", text(&o));
    assert!(rec.is_none());
    let (o, rec) = run_with(tmp.path(), &graph, script, &["--allow-commands"], &[]);
    let rec = rec.expect("a record");
    assert_eq!(rec["status"], "succeeded", "{}\n{rec:#}", text(&o));
    let attempts = rec["nodes"][0]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2);
    let first = &attempts[0]["success"]["results"];
    assert_eq!(
        first[0]["passed"], false,
        "grep finds no OK in `FAIL: disk`"
    );
    assert!(
        first[1]["evidence"]
            .as_str()
            .unwrap()
            .contains("does not match")
    );
    assert_eq!(attempts[1]["success"]["passed"], true);
}

#[test]
fn a_command_criterion_cannot_write_outside_the_output_root_nor_read_a_secret() {
    if !ais::rt::confinement_available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have the kernel sandbox"
        );
        eprintln!("skipped: no Landlock on this kernel");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside.txt");
    let graph = tmp.path().join("attack.agraph.yaml");
    let text_of = std::fs::read_to_string(fixture("commands.agraph.yaml")).unwrap();
    let attack = format!(
        "        - id: escape\n          kind: command\n          description: Writes outside.\n          run: \"echo pwned > ../outside.txt; echo pwned > {}\"\n        - id: secret\n          kind: command\n          description: Reads a secret.\n          run: printenv AGS_TEST_SECRET\n",
        outside.display()
    );
    let graph_text = text_of.replace("    failure:\n", &format!("{attack}    failure:\n"));
    std::fs::write(&graph, graph_text).unwrap();
    let script = serde_json::json!({"report": ["OK", "OK"]});
    let env = [("AGS_TEST_SECRET", "hunter2-do-not-leak")];
    let (o, rec) = run_with(tmp.path(), &graph, script, &["--allow-commands"], &env);
    let rec = rec.expect("a record");
    assert_eq!(rec["status"], "failed", "{}\n{rec:#}", text(&o));
    assert!(!outside.exists(), "the write left the output root");
    let results = rec["nodes"][0]["attempts"][0]["success"]["results"]
        .as_array()
        .unwrap();
    let by_id = |id: &str| results.iter().find(|r| r["id"] == id).unwrap().clone();
    let escape = by_id("escape");
    assert_eq!(escape["passed"], false);
    let evidence = escape["evidence"].as_str().unwrap_or_default();
    assert!(
        evidence.contains("Permission denied"),
        "the write was tried and refused: {escape}"
    );
    assert_eq!(
        by_id("secret")["passed"],
        false,
        "the secret is not in the environment"
    );
    assert_eq!(by_id("says_ok")["passed"], true);
    let all = format!("{rec}{}", text(&o));
    assert!(!all.contains("hunter2"), "the secret leaked");
}

#[test]
fn an_output_that_fails_its_type_fails_its_node_with_rt031() {
    let tmp = tempfile::tempdir().unwrap();
    let graph = tmp.path().join("typed.agraph.yaml");
    let text_of = std::fs::read_to_string(fixture("tiers.agraph.yaml")).unwrap();
    std::fs::write(
        &graph,
        text_of.replace(
            "{ type: string, description: The review.",
            "{ type: object, description: The review.",
        ),
    )
    .unwrap();
    let script = serde_json::json!({"plan": ["p"], "review": ["just text"]});
    let (o, rec) = run_with(
        tmp.path(),
        &graph,
        script,
        &[],
        &[("AIS_MODEL_TIER", "frontier")],
    );
    let rec = rec.expect("a record");
    assert_eq!(rec["status"], "failed", "{}\n{rec:#}", text(&o));
    let m = message(&rec, "RT031");
    assert!(m.contains("not of type `object`"), "{m}");
    assert_eq!(states(&rec)[1], ("review".into(), "failed".into()));
}

/// The commands fixture with one more criterion, `extra` (YAML list items), before `failure:`.
fn commands_graph(dir: &Path, extra: &str) -> std::path::PathBuf {
    let graph = dir.join("graph.agraph.yaml");
    let text_of = std::fs::read_to_string(fixture("commands.agraph.yaml")).unwrap();
    std::fs::write(
        &graph,
        text_of.replace("    failure:\n", &format!("{extra}    failure:\n")),
    )
    .unwrap();
    graph
}

#[test]
fn a_judge_that_runs_commands_runs_once_and_a_crash_in_it_does_not_run_them_again() {
    let tmp = tempfile::tempdir().unwrap();
    // The criterion counts its runs, names its process group, then waits to be killed.
    let graph = commands_graph(
        tmp.path(),
        "        - id: counts\n          kind: command\n          description: Counts its runs.\n          run: \"echo $$ >> runs.txt; sleep 20\"\n",
    );
    std::fs::write(
        tmp.path().join("script.json"),
        serde_json::json!({"report": ["OK"]}).to_string(),
    )
    .unwrap();
    let mut cmd = scripted_run(&graph);
    cmd.arg("--allow-commands")
        .current_dir(tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let runs = tmp.path().join("out/runs.txt");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !std::fs::read_to_string(&runs).is_ok_and(|t| t.ends_with('\n')) {
        assert!(
            std::time::Instant::now() < deadline,
            "the criterion never ran"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // A crash in the middle of the judge: `ais` killed, then the criterion's own group.
    child.kill().unwrap();
    let o = child.wait_with_output().unwrap();
    let group = std::fs::read_to_string(&runs).unwrap().trim().to_owned();
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{group}")])
        .status();
    let run = run_id(&o);
    // The journal holds the judge as a run-once tool effect, in flight.
    let shown = ais(tmp.path(), &["runs", "show", &run, "--out", "out"]);
    let judge = text(&shown)
        .lines()
        .find(|l| l.contains("report__ags_judge"))
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("the judge's effect: {}", text(&shown)));
    assert!(
        judge.contains(" tool ") && judge.contains(" once ") && judge.ends_with("in flight"),
        "{judge}"
    );
    // The resume stops at the effect in flight instead of running the commands again.
    let o = ais(
        tmp.path(),
        &["resume", &run, "--out", "out", "--allow-commands"],
    );
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(
        text(&o).contains("fault[effect_in_flight] at `report__ags_judge`"),
        "{}",
        text(&o)
    );
    assert_eq!(
        std::fs::read_to_string(&runs).unwrap().lines().count(),
        1,
        "the criterion ran again"
    );
}

#[test]
fn a_judge_without_commands_to_run_is_a_read_the_journal_may_run_again() {
    let tmp = tempfile::tempdir().unwrap();
    let script = serde_json::json!({"plan": ["p"], "review": ["r"]});
    let env = [("AIS_MODEL_TIER", "frontier")];
    let (o, _) = run_with(tmp.path(), &fixture("tiers.agraph.yaml"), script, &[], &env);
    let shown = ais(tmp.path(), &["runs", "show", &run_id(&o), "--out", "out"]);
    let table = String::from_utf8_lossy(&shown.stdout).into_owned();
    let judges: Vec<&str> = table
        .lines()
        .filter(|l| l.contains(" tool ") && l.contains("__ags_judge "))
        .collect();
    assert_eq!(judges.len(), 2, "{}", text(&shown));
    assert!(judges.iter().all(|l| l.contains(" retry ")), "{judges:#?}");
}
