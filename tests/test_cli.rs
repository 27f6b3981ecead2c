//! `ais test` as a user runs it: a recorded run added as a case re-runs with no model call and
//! catches a changed doc; trials against an OpenAI-compatible server on loopback that answers
//! right 7 times in 10 report that pass rate and its Wilson interval; a judge's malformed answer
//! is a failed assertion; bad suites are refused with located errors.

use crate::providers_support;

use providers_support::Proto;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

fn ais(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ais"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("AIS_MODEL")
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1");
    cmd
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn examples() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples")
}

/// A project with the triage example's program and answers.
fn triage_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        examples().join("agir/triage_ticket.agir"),
        dir.path().join("triage.agir"),
    )
    .unwrap();
    std::fs::copy(
        examples().join("triage_ticket.responses.json"),
        dir.path().join("answers.json"),
    )
    .unwrap();
    dir
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}\n{}", text(o)))
}

#[test]
fn a_recorded_run_becomes_a_case_that_replays_with_no_model_and_catches_a_changed_doc() {
    let dir = triage_project();
    let root = dir.path();
    let run = |task: &str| {
        let o = ais(
            root,
            &[
                "run",
                "triage.agir",
                "--task",
                task,
                "--model",
                "scripted:answers.json",
                "--out",
                "out",
                "--format",
                "json",
            ],
        )
        .output()
        .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        json_of(&o)["run"].as_str().unwrap().to_owned()
    };
    let first = run("I was charged twice for order #88412.");
    let second = run("Charged twice again.");
    for (id, name) in [(&first, "double charge"), (&second, "again")] {
        let o = ais(
            root,
            &[
                "test",
                "add",
                id,
                "--to",
                "evals/triage.aistest.yaml",
                "--out",
                "out",
                "--name",
                name,
            ],
        )
        .output()
        .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    }
    let suite = std::fs::read_to_string(root.join("evals/triage.aistest.yaml")).unwrap();
    assert!(suite.contains("program: \"../triage.agir\""), "{suite}");
    assert!(
        suite.contains(&format!(
            "model: \"recorded:triage.recordings/{first}.json\""
        )),
        "{suite}"
    );
    assert!(
        suite.contains("- report_equals: {\"category\":\"billing\""),
        "{suite}"
    );
    assert!(
        root.join(format!("evals/triage.recordings/{second}.json"))
            .is_file()
    );

    // A judged rubric with a scripted judge, added to the recorded cases.
    std::fs::write(
        root.join("evals/judge.json"),
        r#"{"judge": [{"pass": true, "reason": "No refund is promised."}]}"#,
    )
    .unwrap();
    let suite = format!("judge: scripted:judge.json\n{suite}").replacen(
        "      - same_requests: true\n",
        "      - same_requests: true\n      - judged: {rubric: The reply promises no refund., of: [reply]}\n",
        1,
    );
    std::fs::write(root.join("evals/triage.aistest.yaml"), &suite).unwrap();

    // It re-runs with every slot answered from the recording, the judge's from its script:
    // no model call at all.
    let o = ais(
        root,
        &["test", "evals/triage.aistest.yaml", "--format", "json"],
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let result = json_of(&o);
    let cases = result["suites"][0]["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    for case in cases {
        let trial = &case["results"][0];
        assert_eq!(trial["model_calls"], 0, "{case}");
        assert_eq!(trial["live_calls"], 0, "{case}");
        assert_eq!(case["pass_rate"], 1.0);
    }
    let judged = &cases[0]["results"][0]["checks"];
    let verdict = judged
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "judged")
        .expect("the judged rubric");
    assert_eq!(verdict["passed"], true);
    assert!(
        verdict["seen"]
            .as_str()
            .unwrap()
            .starts_with("No refund is promised. (judge run "),
        "{verdict}"
    );

    // An edit of the classifier's doc: the recorded answers no longer answer what is asked.
    let program = std::fs::read_to_string(root.join("triage.agir")).unwrap();
    let edited = program.replacen(
        "Classify the ticket by what the customer needs from us",
        "Classify the ticket by its tone",
        1,
    );
    assert_ne!(edited, program);
    std::fs::write(root.join("triage.agir"), edited).unwrap();
    let o = ais(root, &["test", "evals/triage.aistest.yaml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("case `double charge`, trial 1:"), "{out}");
    assert!(
        out.contains("`same_requests: true`") && out.contains("seen: `classify` (slot `classify`"),
        "{out}"
    );
    assert!(out.contains("the doc changed"), "{out}");
}

/// A suite's trials and journal go beside the suite (`<its directory>/.ais/test/<suite>/`), not
/// into the directory `ais test` is run from: from a read-only directory it runs, and writes
/// nothing there; `--out DIR` still chooses the place.
#[test]
fn trials_go_beside_the_suite_and_a_read_only_working_directory_is_left_alone() {
    use std::os::unix::fs::PermissionsExt;
    let dir = triage_project();
    let root = dir.path();
    std::fs::create_dir_all(root.join("evals")).unwrap();
    std::fs::write(
        root.join("evals/triage.aistest.yaml"),
        "program: ../triage.agir\nmodel: scripted:../answers.json\ncases:\n  - name: billing\n    task: I was charged twice.\n    expect:\n      - status: ok\n",
    )
    .unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let cwd = elsewhere.path();
    std::fs::set_permissions(cwd, std::fs::Permissions::from_mode(0o555)).unwrap();
    let suite = root.join("evals/triage.aistest.yaml");
    let o = ais(cwd, &["test", suite.to_str().unwrap()])
        .output()
        .unwrap();
    std::fs::set_permissions(cwd, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let left: Vec<_> = std::fs::read_dir(cwd).unwrap().collect();
    assert!(
        left.is_empty(),
        "ais test wrote into its working directory: {left:?}"
    );
    let beside = root.join("evals/.ais/test/triage");
    assert!(beside.join(".ais/runs.db").is_file(), "{}", text(&o));
    assert!(beside.join("01-billing/1").is_dir(), "{}", text(&o));

    // `--out DIR` is where they go when named.
    let o = ais(
        root,
        &["test", "evals/triage.aistest.yaml", "--out", "trials"],
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(root.join("trials/triage/.ais/runs.db").is_file());
}

#[test]
fn adding_an_unfinished_or_unknown_run_says_why_and_writes_nothing() {
    let dir = triage_project();
    let root = dir.path();
    std::fs::create_dir_all(root.join("out/.ais")).unwrap();
    // A journal with no such run.
    let o = ais(
        root,
        &[
            "run",
            "triage.agir",
            "--task",
            "x",
            "--model",
            "scripted:answers.json",
            "--out",
            "out",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = ais(
        root,
        &[
            "test",
            "add",
            "no-such-run",
            "--to",
            "s.aistest.yaml",
            "--out",
            "out",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no-such-run"),
        "{}",
        text(&o)
    );
    assert!(!root.join("s.aistest.yaml").exists());
}

const CLASSIFY: &str = r#"---
name: classify
description: Sort a ticket.
---
types:
  Category:
    kind: enum
    members: [billing, bug]
walker:
  carries:
    task: {type: str, role: input}
    category: {type: Category, produced_by: classify}
nodes:
  - {id: classify, type: GEN-ENUM, owner: model, reads: [task], writes: [category], doc: "Classify the ticket."}
  - {id: done, type: TERMINAL, reads: [category]}
edges:
  - {from: classify, to: done, modality: mandatory}
"#;

#[test]
fn trials_against_a_loopback_model_right_seven_times_in_ten_report_that_rate_and_interval() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("classify.agir"), CLASSIFY).unwrap();
    std::fs::write(
        root.join("classify.aistest.yaml"),
        "program: classify.agir\nmodel: openai:gpt-test\nthreshold: 0.6\ncases:\n  - name: a double charge\n    task: charged twice\n    expect:\n      - report: category == Category.billing\n",
    )
    .unwrap();
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    let (server, base) = tokio.block_on(providers_support::serve_fn(move |request| {
        // The 8th, 9th and 10th request (in arrival order) are answered wrong.
        let n = seen.fetch_add(1, Ordering::SeqCst) + 1;
        let member = if n <= 7 { "billing" } else { "bug" };
        let user = request["messages"][1]["content"]
            .as_str()
            .unwrap_or_default();
        let value = if user.contains("Put the result under the key \"value\"") {
            serde_json::json!({ "value": member })
        } else {
            Value::from(member)
        };
        Proto::OpenAi.answer(value)
    }));
    let o = ais(
        root,
        &[
            "test",
            "classify.aistest.yaml",
            "--trials",
            "10",
            "-j",
            "4",
            "--format",
            "json",
        ],
    )
    .envs(Proto::OpenAi.env(&base))
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(providers_support::received(&server).len(), 10);
    let result = json_of(&o);
    let case = &result["suites"][0]["cases"][0];
    assert_eq!(case["trials"], 10);
    assert_eq!(case["passed"], 7);
    assert_eq!(case["pass_rate"], 0.7);
    // The Wilson score interval of 7 in 10 at 95%, computed here by hand:
    // center = (p + z²/2n) / (1 + z²/n), half = z / (1 + z²/n) · √(p(1-p)/n + z²/4n²).
    let (z, n, p) = (1.959_963_984_540_054_f64, 10.0, 0.7);
    let d = 1.0 + z * z / n;
    let center = (p + z * z / (2.0 * n)) / d;
    let half = z / d * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    let interval = case["interval"].as_array().unwrap();
    assert!(
        (interval[0].as_f64().unwrap() - (center - half)).abs() < 1e-9,
        "{case}"
    );
    assert!(
        (interval[1].as_f64().unwrap() - (center + half)).abs() < 1e-9,
        "{case}"
    );
    assert!((center - half - 0.3968).abs() < 1e-4 && (center + half - 0.8922).abs() < 1e-4);
    let live: u64 = case["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["live_calls"].as_u64().unwrap())
        .sum();
    assert_eq!(live, 10);

    // Above the threshold it passes; at 0.8 the same rate fails the suite (exit 1), in JUnit too.
    count.store(0, Ordering::SeqCst);
    let suite = std::fs::read_to_string(root.join("classify.aistest.yaml")).unwrap();
    std::fs::write(
        root.join("classify.aistest.yaml"),
        suite.replace("threshold: 0.6", "threshold: 0.8"),
    )
    .unwrap();
    let o = ais(
        root,
        &[
            "test",
            "classify.aistest.yaml",
            "--trials",
            "10",
            "--format",
            "junit",
        ],
    )
    .envs(Proto::OpenAi.env(&base))
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let xml = String::from_utf8_lossy(&o.stdout);
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let failure = doc
        .descendants()
        .find(|n| n.has_tag_name("failure"))
        .expect("a failure element");
    assert!(
        failure
            .attribute("message")
            .unwrap()
            .starts_with("pass rate 70% (7 of 10), 95% interval [39.7%, 89.2%], threshold 80%"),
        "{xml}"
    );
    assert!(
        failure.text().unwrap().contains("seen: category = \"bug\""),
        "{xml}"
    );
}

#[test]
fn a_judges_malformed_answer_is_a_failed_assertion_with_the_reason() {
    let dir = triage_project();
    let root = dir.path();
    std::fs::write(
        root.join("judge.json"),
        r#"{"judge": [{"pass": "maybe"}, {"verdict": 3}, {"pass": "maybe"}]}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("good_judge.json"),
        r#"{"judge": [{"pass": false, "reason": "It promises a refund."}]}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("judged.aistest.yaml"),
        "program: triage.agir\nmodel: scripted:answers.json\ncases:\n  - name: malformed\n    task: charged twice\n    judge: scripted:judge.json\n    expect:\n      - judged: {rubric: The reply never promises a refund., of: [reply]}\n  - name: fails\n    task: charged twice\n    judge: scripted:good_judge.json\n    expect:\n      - status: ok\n      - judged: {rubric: The reply never promises a refund.}\n",
    )
    .unwrap();
    let o = ais(root, &["test", "judged.aistest.yaml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("case `malformed`, trial 1:\n  assertion 1 `judged: {\"rubric\":\"The reply never promises a refund.\",\"of\":[\"reply\"]}` (line 8) failed\n    seen: the judge's answer is not a verdict: "),
        "{out}"
    );
    assert!(
        out.contains("case `fails`, trial 1:\n  assertion 2 `judged: {\"rubric\":\"The reply never promises a refund.\"}` (line 14) failed\n    seen: It promises a refund. (judge run "),
        "{out}"
    );
}

#[test]
fn bad_suites_are_refused_with_located_errors() {
    let dir = triage_project();
    let root = dir.path();
    let cases: [(&str, &str, &str); 5] = [
        (
            "program: nope.agir\nmodel: scripted:answers.json\ncases:\n  - name: a\n    task: t\n",
            "bad.aistest.yaml:1:1: there is no program `./nope.agir`",
            "relative to the suite file",
        ),
        (
            "program: triage.agir\nmodel: scripted:answers.json\ncases:\n  - name: a\n    task: t\n    expect:\n      - report: categry == Category.billing\n",
            "bad.aistest.yaml:7:9: name_error at column 1 of `categry == Category.billing`",
            "Did you mean `category`?",
        ),
        (
            "program: triage.agir\nmodel: scripted:answers.json\ncases:\n  - name: a\n    task: t\n    expect:\n      - report_equals: {queu: x}\n",
            "bad.aistest.yaml:7:25: `queu` is no carry of the program (did you mean `queue`?)",
            "its carries are: task, category, reply, queue",
        ),
        (
            "program: triage.agir\nmodel: scripted:answers.json\ncases:\n  - name: a\n    task: t\n    expect:\n      - artifact: {path: x.txt, matches: \"(unclosed\"}\n",
            "bad.aistest.yaml:7:33: `(unclosed` is not a regular expression: unclosed group",
            "Rust `regex` syntax",
        ),
        (
            "program: triage.agir\nmodel: scripted:answers.json\ncases:\n  - name: a\n    task: t\n    expect:\n      - visited: [clasify]\n",
            "bad.aistest.yaml:7:19: `clasify` is no instruction of the program (did you mean `classify`?)",
            "its instructions are",
        ),
    ];
    for (suite, what, help) in cases {
        std::fs::write(root.join("bad.aistest.yaml"), suite).unwrap();
        let o = ais(root, &["test", "bad.aistest.yaml"]).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(what) && err.contains(help),
            "{what}\n{}",
            text(&o)
        );
        assert!(o.stdout.is_empty(), "{}", text(&o));
    }
    // A 50 MB suite is refused unread, saying why and what to do.
    let big = std::fs::File::create(root.join("big.aistest.yaml")).unwrap();
    big.set_len(50 * 1024 * 1024).unwrap();
    let o = ais(root, &["test", "big.aistest.yaml"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("big.aistest.yaml: the suite cannot be read: it is larger than the 4194304 bytes ais reads from it")
            && err.contains("split a larger one into several suites"),
        "{}",
        text(&o)
    );
}
