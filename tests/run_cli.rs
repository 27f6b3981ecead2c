//! End-to-end tests of `ais run` and `ais resume`: the binary as a real subprocess, real
//! programs and scripted responses in temporary directories, exit codes, the JSON shape, the
//! trace file, pause and resume.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const EXAMPLE: &str = "examples/writing_plans.agir";
const RESPONSES: &str = "examples/writing_plans.responses.json";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `ais` in `dir` with no model configured in the environment.
fn ais_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(dir)
        .env_remove("AIS_MODEL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("NO_COLOR")
        .env_remove("RUST_LOG")
        .output()
        .expect("the ais binary runs")
}

fn ais(args: &[&str]) -> Output {
    ais_in(&root(), args)
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("stderr is UTF-8")
}

fn both(o: &Output) -> String {
    format!("{}{}", stdout(o), stderr(o))
}

fn json(o: &Output) -> Value {
    let out = stdout(o);
    let mut lines = out.lines();
    let value = serde_json::from_str(lines.next().expect("one line")).expect("a JSON object");
    assert_eq!(lines.next(), None, "exactly one JSON object: {out}");
    value
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temp path")
}

/// A program that routes on the task's length: `small` under 3 characters, `big` over 100,
/// no default edge (a dead end in between).
const DEAD_END: &str = r#"
walker:
  carries:
    task: {type: str, role: input}
    n: {type: int, produced_by: count}
nodes:
  - {id: count, type: CODE, owner: code, reads: [task], writes: [n], body: "len(task)"}
  - {id: gate, type: ROUTE, owner: code, reads: [n]}
  - {id: big, type: TERMINAL, reads: [n]}
  - {id: small, type: TERMINAL, reads: [n]}
edges:
  - {from: count, to: gate}
  - {from: gate, to: big, guard: "n > 100"}
  - {from: gate, to: small, guard: "n < 3"}
"#;

/// A program that drafts with a model, asks a human to approve, then polishes.
const APPROVAL: &str = r#"
walker:
  carries:
    task: {type: str, role: input}
    approved: {type: bool, role: input, doc: "Approve the draft? (true/false)"}
    draft: {type: str, produced_by: write}
    final: {type: str, produced_by: polish}
nodes:
  - {id: write, type: GEN-RAW, doc: "Write the draft.", reads: [task], writes: [draft]}
  - {id: gate, type: ROUTE, owner: code, reads: [approved]}
  - {id: polish, type: GEN-RAW, doc: "Polish the draft.", reads: [draft], writes: [final]}
  - {id: done, type: TERMINAL, reads: [final]}
  - {id: rejected, type: TERMINAL, reads: [draft]}
edges:
  - {from: write, to: gate}
  - {from: gate, to: polish, guard: "approved"}
  - {from: gate, to: rejected}
  - {from: polish, to: done}
"#;

/// The arguments of `ais run approval.agir` on the task `x` with the responses in `s.json`,
/// then `extra`.
fn run_approval<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    [
        &[
            "run",
            "approval.agir",
            "--task",
            "x",
            "--model",
            "scripted:s.json",
        ],
        extra,
    ]
    .concat()
}

/// Writes `files` into a fresh temporary directory.
fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temp dir");
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).expect("write a file");
    }
    dir
}

#[test]
fn the_readme_example_runs_end_to_end_with_scripted_responses() {
    let out = tempfile::tempdir().unwrap();
    let trace = out.path().join("trace.jsonl");
    let o = ais(&[
        "run",
        EXAMPLE,
        "--task",
        "Add a CSV export of a user's orders to the account page",
        "--model",
        &format!("scripted:{RESPONSES}"),
        "--out",
        path(out.path()),
        "--trace",
        path(&trace),
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert!(text.starts_with("note: scripted run"), "{text}");
    assert!(
        text.contains(&format!("{EXAMPLE}: ok after 6 steps, 2 slots filled")),
        "{text}"
    );
    assert!(text.contains("plan_ok: true"), "{text}");
    // The plan was written under the output root, and nowhere else.
    let plan_file = text
        .lines()
        .find_map(|l| l.strip_prefix("  plan_file: "))
        .expect("the report names the plan file");
    let plan = std::fs::read_to_string(out.path().join(plan_file)).expect("the plan exists");
    assert!(
        plan.starts_with("# CSV Export Implementation Plan"),
        "{plan}"
    );
    assert!(plan.contains("### Task 2: download route"), "{plan}");
    // One trace line per step, each a JSON object; the slots say they were scripted.
    let lines: Vec<Value> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 6);
    let ids: Vec<&str> = lines
        .iter()
        .map(|l| l["instruction"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "draft_header",
            "write_tasks",
            "assemble",
            "verify",
            "save",
            "done"
        ]
    );
    assert_eq!(lines[0]["slot"]["scripted"], true);
    assert_eq!(lines[0]["unit"], "model");
    assert_eq!(lines[2]["unit"], "code");
    // GEN-RAW stripped the code fence the scripted header came in.
    assert!(
        lines[0]["written"][0][1]
            .as_str()
            .unwrap()
            .starts_with("# CSV Export")
    );
}

#[test]
fn json_format_prints_one_object_with_the_pinned_keys_first() {
    let out = tempfile::tempdir().unwrap();
    let o = ais(&[
        "run",
        EXAMPLE,
        "--task",
        "a plan",
        "--model",
        &format!("scripted:{RESPONSES}"),
        "--out",
        path(out.path()),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let v = json(&o);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        &keys[..5],
        ["status", "report", "deviations", "fault", "steps"]
    );
    assert_eq!(v["status"], "ok");
    assert_eq!(v["steps"], 6);
    assert_eq!(v["fault"], Value::Null);
    assert_eq!(v["scripted"], true);
    assert_eq!(v["report"]["plan_ok"], true);
    assert!(stderr(&o).contains("scripted run"), "{}", stderr(&o));
}

#[test]
fn a_program_with_slots_and_no_model_fails_before_the_first_step() {
    let out = tempfile::tempdir().unwrap();
    let trace = out.path().join("t.jsonl");
    let o = ais(&[
        "run",
        EXAMPLE,
        "--task",
        "x",
        "--out",
        path(out.path()),
        "--trace",
        path(&trace),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", both(&o));
    let err = stderr(&o);
    assert!(err.contains("no model is named"), "{err}");
    assert!(
        err.contains("--model") && err.contains("AIS_MODEL"),
        "{err}"
    );
    assert!(err.contains("scripted:FILE.json"), "{err}");
    assert_eq!(std::fs::read_to_string(&trace).unwrap_or_default(), "");
}

#[test]
fn ais_model_names_the_model_when_model_is_not_given() {
    let out = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(["run", EXAMPLE, "--task", "x", "--out", path(out.path())])
        .current_dir(root())
        .env("AIS_MODEL", format!("scripted:{RESPONSES}"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert!(stdout(&o).contains("scripted run"));
}

#[test]
fn model_specs_that_cannot_be_served_say_what_to_write() {
    let dir = project(&[("bad.json", r#"{"draft_header": "not a list"}"#)]);
    let bad = dir.path().join("bad.json");
    for (spec, needle) in [
        ("openai:gpt-4o-mini", "OPENAI_API_KEY"),
        ("gpt-4o", "names no provider"),
        ("scripted:missing.json", "missing.json"),
        (
            &format!("scripted:{}", path(&bad)),
            "`draft_header` must map to a list",
        ),
    ] {
        let o = ais(&["run", EXAMPLE, "--task", "x", "--model", spec]);
        assert_eq!(o.status.code(), Some(2), "{spec}: {}", both(&o));
        assert!(stderr(&o).contains(needle), "{spec}: {}", stderr(&o));
    }
}

#[test]
fn unreadable_and_unrunnable_programs_exit_2() {
    let dir = project(&[
        ("not.agir", "nodes: [draft, {id: x\n"),
        (
            "x5.agir",
            "tools:\n  shout: {surface: SENSE, body: \"print(1)\"}\nwalker:\n  carries:\n    task: {type: str, role: input}\n    loud: {type: str, produced_by: s}\nnodes:\n  - {id: s, type: SENSE, owner: code, tool: shout, reads: [task], writes: [loud]}\n  - {id: done, type: TERMINAL, reads: [loud]}\nedges:\n  - {from: s, to: done}\n",
        ),
    ]);
    let o = ais_in(dir.path(), &["run", "missing.agir", "--task", "x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot read `missing.agir`"),
        "{}",
        stderr(&o)
    );
    let o = ais_in(dir.path(), &["run", "not.agir", "--task", "x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not.agir:1:"), "{}", stderr(&o));
    let o = ais_in(
        dir.path(),
        &["run", "x5.agir", "--task", "x", "--format", "json"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", both(&o));
    assert!(stderr(&o).contains("error[X5]"), "{}", stderr(&o));
    assert_eq!(json(&o)["fault"]["kind"], "not_runnable");
}

#[test]
fn a_fault_exits_1_naming_the_instruction_and_line() {
    let dir = project(&[("dead.agir", DEAD_END)]);
    let o = ais_in(dir.path(), &["run", "dead.agir", "--task", "hello"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let out = stdout(&o);
    assert!(out.contains("dead.agir: fault after 2 steps"), "{out}");
    assert!(
        out.contains("fault[route_dead_end] at `gate` (dead.agir:"),
        "{out}"
    );
    let o = ais_in(
        dir.path(),
        &["run", "dead.agir", "--task", "hi", "--format", "json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert_eq!(json(&o)["status"], "ok");
    assert_eq!(json(&o)["report"]["n"], 2);
    let o = ais_in(
        dir.path(),
        &[
            "run",
            "dead.agir",
            "--task",
            "hi",
            "--max-steps",
            "1",
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert_eq!(json(&o)["fault"]["kind"], "budget_exhausted");
}

/// A program whose short-task path skips the step that writes `label`.
const SKIPS_A_WRITE: &str = r#"
walker:
  carries:
    task: {type: str, role: input}
    n: {type: int, produced_by: count}
    label: {type: str, produced_by: name_it}
nodes:
  - {id: count, type: CODE, owner: code, reads: [task], writes: [n], body: "len(task)"}
  - {id: gate, type: ROUTE, owner: code, reads: [n]}
  - {id: name_it, type: CODE, owner: code, reads: [n], writes: [label], body: "'long'"}
  - {id: done, type: TERMINAL, reads: [label, n]}
edges:
  - {from: count, to: gate}
  - {from: gate, to: name_it, guard: "n > 3"}
  - {from: gate, to: done, guard: otherwise}
  - {from: name_it, to: done}
"#;

#[test]
fn a_terminal_read_the_run_did_not_produce_is_named_not_reported_as_empty() {
    let dir = project(&[("skip.agir", SKIPS_A_WRITE)]);
    let o = ais_in(dir.path(), &["run", "skip.agir", "--task", "hi"]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let out = stdout(&o);
    assert!(!out.contains("label:"), "{out}");
    assert!(
        out.contains("not produced: `label` (no step on the path this run took wrote it"),
        "{out}"
    );
    let o = ais_in(
        dir.path(),
        &["run", "skip.agir", "--task", "hi", "--format", "json"],
    );
    let v = json(&o);
    assert_eq!(v["report"], serde_json::json!({"n": 2}));
    assert_eq!(v["unproduced"], serde_json::json!(["label"]));
}

#[test]
fn rust_log_sends_one_tracing_line_per_step_to_stderr_and_is_off_by_default() {
    let dir = project(&[("skip.agir", SKIPS_A_WRITE)]);
    let run = |log: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ais"));
        cmd.args(["run", "skip.agir", "--task", "hello", "--format", "json"])
            .current_dir(dir.path())
            .env_remove("AIS_MODEL")
            .env_remove("RUST_LOG");
        if let Some(l) = log {
            cmd.env("RUST_LOG", l);
        }
        cmd.output().expect("the ais binary runs")
    };
    let o = run(Some("ais::trace=info"));
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let err = stderr(&o);
    let steps: Vec<&str> = err.lines().filter(|l| l.contains("ais::trace")).collect();
    assert_eq!(steps.len(), 4, "{err}");
    assert!(steps[0].contains("instruction=count"), "{err}");
    assert_eq!(json(&o)["status"], "ok", "stdout keeps its one object");
    let o = run(None);
    assert_eq!(stderr(&o), "", "off by default");
    let o = run(Some("ais=["));
    assert!(
        stderr(&o).contains("RUST_LOG=`ais=[` does not parse"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bad_inputs_are_usage_errors() {
    let dir = project(&[
        ("approval.agir", APPROVAL),
        ("s.json", r#"{"write": ["d"]}"#),
    ]);
    for (input, needle) in [
        ("approved", "has no `=`"),
        ("approved=maybe", "true or false"),
        ("aproved=true", "did you mean `approved`"),
    ] {
        let o = ais_in(dir.path(), &run_approval(&["--input", input]));
        assert_eq!(o.status.code(), Some(2), "{input}: {}", both(&o));
        assert!(stderr(&o).contains(needle), "{input}: {}", stderr(&o));
    }
}

#[test]
fn a_scripted_slot_with_no_response_left_makes_the_run_an_error_naming_file_and_id() {
    let dir = project(&[
        ("approval.agir", APPROVAL),
        ("s.json", r#"{"write": ["d"]}"#),
    ]);
    let o = ais_in(dir.path(), &run_approval(&["--input", "approved=true"]));
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let text = both(&o);
    assert!(text.contains("error"), "{text}");
    assert!(
        text.contains("s.json") && text.contains("`polish`"),
        "{text}"
    );
}

#[test]
fn a_paused_run_exits_3_and_resumes_where_it_stopped() {
    let dir = project(&[
        ("approval.agir", APPROVAL),
        (
            "s.json",
            r#"{"write": ["first draft"], "polish": ["polished draft"]}"#,
        ),
    ]);
    let o = ais_in(
        dir.path(),
        &run_approval(&["--out", "out", "--format", "json"]),
    );
    assert_eq!(o.status.code(), Some(3), "{}", both(&o));
    let v = json(&o);
    assert_eq!(v["status"], "input_required");
    assert_eq!(v["pause"]["carry"], "approved");
    assert_eq!(v["pause"]["prompt"], "Approve the draft? (true/false)");
    // The pause lives in the run's journal, not in a handle file.
    assert!(v["pause"]["handle"].is_null(), "{v}");
    assert!(!dir.path().join("out/.ais/resume").exists());
    let id = v["run"].as_str().expect("a run id").to_owned();
    let journal = dir.path().join(v["journal"].as_str().expect("the journal"));
    assert!(
        journal.starts_with(dir.path().join("out")),
        "{}",
        journal.display()
    );

    // Resume from another directory: the run's row names the program, the model, the output
    // root, and the journal says how much of the script was used.
    let elsewhere = tempfile::tempdir().unwrap();
    let resume = [
        "resume",
        &id,
        "--journal",
        path(&journal),
        "--answer",
        "true",
        "--format",
        "json",
    ];
    let o = ais_in(elsewhere.path(), &resume);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let v = json(&o);
    assert_eq!(v["status"], "ok");
    assert_eq!(v["report"]["final"], "polished draft");
    assert_eq!(v["report"]["draft"], "first draft");
    assert_eq!(v["steps"], 4, "the steps before the pause count once");

    // A finished run cannot be resumed again.
    let o = ais_in(elsewhere.path(), &resume);
    assert_eq!(o.status.code(), Some(2), "{}", both(&o));
    assert!(
        stderr(&o).contains("finished with status `ok`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_paused_run_resumes_with_the_other_answer_and_a_moved_program() {
    let dir = project(&[
        ("approval.agir", APPROVAL),
        ("s.json", r#"{"write": ["first draft"]}"#),
    ]);
    let o = ais_in(dir.path(), &run_approval(&["--out", "out"]));
    assert_eq!(o.status.code(), Some(3), "{}", both(&o));
    let out = stdout(&o);
    assert!(out.contains("input required after 1 step"), "{out}");
    assert!(
        out.contains("needs `approved` (true or false): Approve the draft?"),
        "{out}"
    );
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("resume with: ais resume "))
        .expect("the resume command is printed");
    let (id, rest) = line.split_once(' ').unwrap();
    assert_eq!(rest, "--answer TEXT --journal out/.ais/runs.db", "{line}");
    assert!(
        stderr(&o).contains(&format!("run {id} (journal out/.ais/runs.db)")),
        "{}",
        stderr(&o)
    );
    // Without an answer the paused run cannot continue.
    let o = ais_in(dir.path(), &["resume", id, "--out", "out"]);
    assert_eq!(o.status.code(), Some(2), "{}", both(&o));
    assert!(stderr(&o).contains("--answer TEXT"), "{}", stderr(&o));
    // The program moved: it must be named.
    std::fs::rename(
        dir.path().join("approval.agir"),
        dir.path().join("moved.agir"),
    )
    .unwrap();
    let o = ais_in(
        dir.path(),
        &["resume", id, "--out", "out", "--answer", "false"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", both(&o));
    assert!(stderr(&o).contains("approval.agir"), "{}", stderr(&o));
    // An answer over the answer limit is refused, and the run still waits for one.
    let long = "false ".repeat(4);
    let o = ais_in(
        dir.path(),
        &[
            "resume",
            id,
            "--out",
            "out",
            "--answer",
            &long,
            "--program",
            "moved.agir",
            "--max-answer-bytes",
            "16",
        ],
    );
    assert_ne!(o.status.code(), Some(0), "{}", both(&o));
    assert!(
        both(&o).contains("the answer is 24 bytes, more than the 16 a human answer may have"),
        "{}",
        both(&o)
    );
    // So is an answer that is not of the carry's type (`approved` is a `bool`).
    let o = ais_in(
        dir.path(),
        &[
            "resume",
            id,
            "--out",
            "out",
            "--answer",
            "maybe",
            "--program",
            "moved.agir",
        ],
    );
    assert_eq!(o.status.code(), Some(3), "still waiting: {}", both(&o));
    assert!(
        stdout(&o).contains("answer refused: `maybe` does not fit carry `approved`, declared `bool`: answer with true or false, such as `--answer true`"),
        "{}",
        both(&o)
    );
    let resume = [
        "resume",
        id,
        "--out",
        "out",
        "--answer",
        "false",
        "--program",
        "moved.agir",
        "--format",
        "json",
    ];
    let o = ais_in(dir.path(), &resume);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert_eq!(json(&o)["report"]["draft"], "first draft");
    // The run is finished: resuming it again cannot start.
    let o = ais_in(dir.path(), &resume);
    assert_eq!(o.status.code(), Some(2), "{}", both(&o));
}

/// Three input carries the run asks for one after the other: an `int`, an enum and a
/// `list[str]`. Each answer is parsed by its carry's declared type; one that does not fit is
/// refused naming the carry, its type and an answer that fits, and the run keeps waiting
/// (exit 3, `input_required` in `ais runs`, the same pause) until one does.
const ASKS3: &str = r#"---
name: asks3
description: Needs a count, a level and tags from whoever runs it, one after the other.
---
types:
  Level:
    kind: enum
    members: [low, high]
walker:
  name: Asks3
  carries:
    task: {type: str, role: input}
    count: {type: int, role: input, doc: "How many copies?"}
    level: {type: Level, role: input, doc: "How loud?"}
    tags: {type: "list[str]", role: input, doc: "Which tags?"}
    twice: {type: int, produced_by: double}
    loud: {type: bool, produced_by: judge}
    first: {type: str, produced_by: pick}
nodes:
  - {id: double, type: CODE, owner: code, reads: [count], writes: [twice], body: "count * 2"}
  - {id: judge, type: CODE, owner: code, reads: [level], writes: [loud], body: "level == Level.high"}
  - {id: pick, type: CODE, owner: code, reads: [tags], writes: [first], body: "tags[0]"}
  - {id: done, type: TERMINAL, reads: [twice, loud, first]}
edges:
  - {from: double, to: judge}
  - {from: judge, to: pick}
  - {from: pick, to: done}
"#;

#[test]
fn answers_are_parsed_by_the_carry_type_and_a_misfit_leaves_the_run_waiting() {
    let dir = project(&[("asks3.agir", ASKS3)]);
    let o = ais_in(
        dir.path(),
        &["run", "asks3.agir", "--task", "go", "--out", "out"],
    );
    let line = stdout(&o)
        .lines()
        .find_map(|l| {
            l.strip_prefix("resume with: ais resume ")
                .map(str::to_owned)
        })
        .unwrap();
    let id = line.split_once(' ').unwrap().0.to_owned();
    // Each pause, the answers it refuses (with why), and the one that fits.
    type Ask<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);
    let asks: [Ask; 3] = [
        (
            "needs `count` (an integer): How many copies?",
            &[(
                "seven",
                "`seven` does not fit carry `count`, declared `int`: answer with an integer, such as `--answer 42`",
            )],
            "7",
        ),
        (
            "needs `level` (one of low, high): How loud?",
            &[(
                "medium",
                "`medium` does not fit carry `level`, declared `Level`: answer with one of low, high, such as `--answer low`",
            )],
            "high",
        ),
        (
            "needs `tags` (a JSON list): Which tags?",
            &[
                (
                    "[\"a\"",
                    "`[\"a\"` does not fit carry `tags`, declared `list[str]`: answer with a JSON list, such as `--answer '[\"a\", \"b\"]'`",
                ),
                (
                    "[1, 2]",
                    "`[1, 2]` does not fit carry `tags`, declared `list[str]`: it is",
                ),
            ],
            "[\"red\", \"blue\"]",
        ),
    ];
    let mut o = o;
    for (needs, refused, fits) in asks {
        assert_eq!(o.status.code(), Some(3), "{}", both(&o));
        assert!(stdout(&o).contains(needs), "{needs}: {}", both(&o));
        for (answer, why) in refused {
            let o = ais_in(
                dir.path(),
                &["resume", &id, "--out", "out", "--answer", answer],
            );
            // Still waiting, at the same pause, saying why.
            assert_eq!(o.status.code(), Some(3), "{}", both(&o));
            assert!(
                stdout(&o).contains(&format!("answer refused: {why}")),
                "{}",
                both(&o)
            );
            assert!(stdout(&o).contains(needs), "{}", both(&o));
            let runs = ais_in(dir.path(), &["runs", "--out", "out"]);
            let row = stdout(&runs);
            assert!(
                row.lines()
                    .any(|l| l.starts_with(id.as_str()) && l.contains("input_required")),
                "{row}"
            );
        }
        o = ais_in(
            dir.path(),
            &["resume", &id, "--out", "out", "--answer", fits],
        );
    }
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    for typed in ["twice: 14", "loud: true", "first: red"] {
        assert!(stdout(&o).contains(typed), "{typed}: {}", both(&o));
    }
}

#[test]
fn a_run_without_a_journal_pauses_with_a_handle_file() {
    let dir = project(&[
        ("approval.agir", APPROVAL),
        (
            "s.json",
            r#"{"write": ["first draft"], "polish": ["polished"]}"#,
        ),
    ]);
    let o = ais_in(
        dir.path(),
        &run_approval(&["--out", "out", "--no-journal", "--format", "json"]),
    );
    assert_eq!(o.status.code(), Some(3), "{}", both(&o));
    let v = json(&o);
    assert!(v.get("run").is_none(), "{v}");
    assert!(!dir.path().join("out/.ais/runs.db").exists());
    let handle = dir
        .path()
        .join(v["pause"]["handle"].as_str().expect("a handle"));
    // An answer that is no `bool` is refused; the run still waits on the same handle.
    let o = ais_in(
        dir.path(),
        &[
            "resume",
            path(&handle),
            "--answer",
            "maybe",
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(3), "{}", both(&o));
    let v = json(&o);
    assert_eq!(v["status"], "input_required", "{v}");
    assert!(
        v["pause"]["refused"]
            .as_str()
            .is_some_and(|r| r.contains("does not fit carry `approved`, declared `bool`")),
        "{v}"
    );
    assert!(handle.exists(), "a refused answer keeps the handle");
    let o = ais_in(
        dir.path(),
        &[
            "resume",
            path(&handle),
            "--answer",
            "true",
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert_eq!(json(&o)["report"]["final"], "polished");
    assert!(!handle.exists(), "a used handle is removed");
}

#[test]
fn no_secret_from_the_environment_reaches_the_trace() {
    let dir = project(&[
        ("approval.agir", APPROVAL),
        ("s.json", r#"{"write": ["d"]}"#),
    ]);
    // Not shaped like a key: only the environment says it is a secret.
    let secret = "opaque-credential-0123456789";
    let task = format!("my key is {secret}; Authorization: Bearer abcdefghijklmnopqrstuvwxyz");
    let o = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args([
            "run",
            "approval.agir",
            "--task",
            &task,
            "--input",
            "approved=false",
            "--model",
            "scripted:s.json",
            "--trace",
            "t.jsonl",
        ])
        .current_dir(dir.path())
        .env("SOME_SERVICE_API_KEY", secret)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let trace = std::fs::read_to_string(dir.path().join("t.jsonl")).unwrap();
    // The task reached the slot's request in the trace, scrubbed.
    assert!(trace.contains("my key is [redacted]"), "{trace}");
    assert!(
        trace.contains("Authorization: Bearer [redacted]"),
        "{trace}"
    );
    assert!(!trace.contains(secret), "{trace}");
    assert!(!trace.contains("abcdefghijklmnopqrstuvwxyz"), "{trace}");
}

#[test]
fn an_unwritable_trace_is_a_usage_error_before_any_step() {
    let dir = project(&[("dead.agir", DEAD_END)]);
    let o = ais_in(
        dir.path(),
        &[
            "run",
            "dead.agir",
            "--task",
            "hi",
            "--trace",
            "no/such/dir/t.jsonl",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", both(&o));
    assert!(
        stderr(&o).contains("cannot create the trace file"),
        "{}",
        stderr(&o)
    );
}

/// Runs `ais` on a pseudo-terminal (through Python's `pty` module), typing `answer` when the
/// prompt appears; returns what the terminal showed and the exit code. `None` when python3 is
/// not available (a notice is printed; under `CI=true` that fails instead).
fn on_a_terminal(dir: &Path, args: &[&str], answer: &str) -> Option<(String, i32)> {
    const HARNESS: &str = r#"
import os, pty, select, sys, time
answer = sys.argv[1].encode() + b"\n"
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
seen, sent, deadline = b"", False, time.time() + 60
while time.time() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.2)
    if not ready:
        continue
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    seen += data
    if not sent and b"\n> " in seen:
        os.write(fd, answer)
        sent = True
_, status = os.waitpid(pid, 0)
sys.stdout.write(seen.decode("utf-8", "replace"))
sys.exit(os.waitstatus_to_exitcode(status))
"#;
    let mut command = Command::new("python3");
    command
        .args(["-c", HARNESS, answer, env!("CARGO_BIN_EXE_ais")])
        .args(args)
        .current_dir(dir)
        .env_remove("AIS_MODEL")
        .env("TERM", "xterm");
    match command.output() {
        Ok(o) => Some((stdout(&o), o.status.code().unwrap_or(-1))),
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("python3 is needed for the terminal test under CI: {e}")
        }
        Err(e) => {
            eprintln!("skipping the terminal test: python3 is not available ({e})");
            None
        }
    }
}

#[test]
fn on_a_terminal_a_run_asks_on_the_spot_and_shows_progress() {
    let dir = project(&[
        ("approval.agir", APPROVAL),
        (
            "s.json",
            r#"{"write": ["first draft"], "polish": ["polished draft"]}"#,
        ),
    ]);
    let Some((screen, code)) = on_a_terminal(dir.path(), &run_approval(&["--out", "out"]), "true")
    else {
        return;
    };
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("`gate` needs `approved` (true or false): Approve the draft? (true/false)"),
        "{screen}"
    );
    // A progress line per step: number, instruction, opcode, unit; slots marked scripted.
    for step in ["1  write", "2  gate", "3  polish", "4  done"] {
        assert!(screen.contains(step), "{step}: {screen}");
    }
    assert!(screen.contains("GEN-RAW   model"), "{screen}");
    assert!(screen.contains("(scripted)"), "{screen}");
    assert!(screen.contains("ok after 4 steps"), "{screen}");
    assert!(screen.contains("final: polished draft"), "{screen}");
    // Answered on the spot: no handle is left behind.
    let left = std::fs::read_dir(dir.path().join("out/.ais/resume"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(left, 0);
}

/// The README's main job prints exactly what the README says it prints.
#[test]
fn the_readme_shows_the_main_jobs_real_output() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let after = readme
        .split_once("It prints\n\n```\n")
        .expect("the README shows the main job's output")
        .1;
    let shown = after.split_once("```").unwrap().0;
    let command = readme
        .split_once("```sh\ncargo run -- run ")
        .expect("the README's main job is `cargo run -- run …`")
        .1;
    assert!(
        command.starts_with("examples/writing_plans.agir")
            && command.contains("--model scripted:examples/writing_plans.responses.json"),
        "{command}"
    );
    let out = tempfile::tempdir().unwrap();
    let o = ais(&[
        "run",
        EXAMPLE,
        "--task",
        "Add a CSV export of a user's orders to the account page",
        "--model",
        &format!("scripted:{RESPONSES}"),
        "--out",
        path(out.path()),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert_eq!(stdout(&o), shown);
}

/// A program CALLed by [`PUBLISH`]: it looks its topic up, then needs a human's `confirm`.
const CONFIRM: &str = r#"---
name: confirm
description: Looks a topic up and has a human confirm it.
---
walker:
  name: Confirm
  carries:
    task: {type: str, role: input}
    topic: {type: str, role: input}
    confirm: {type: str, role: input, doc: "Publish this topic? (yes/no)"}
    seen: {type: str, produced_by: look}
    verdict: {type: str, produced_by: decide}
nodes:
  - {id: look, type: CODE, owner: code, reads: [topic], writes: [seen], body: "topic + ' looked up'"}
  - {id: decide, type: CODE, owner: code, reads: [seen, confirm], writes: [verdict], body: "seen + ': ' + confirm"}
  - {id: fin, type: TERMINAL, reads: [verdict]}
edges:
  - {from: look, to: decide}
  - {from: decide, to: fin}
"#;

/// Picks a topic, CALLs `confirm.agir` with it, wraps the verdict (`CONFIRM_READ`: a read the
/// CALL passes on besides the topic).
const PUBLISH: &str = r#"---
name: publish
description: Publishes a topic once the called program has it confirmed.
---
walker:
  name: Publish
  carries:
    task: {type: str, role: input}
    topic: {type: str, produced_by: pick}
    answer: {type: str, produced_by: ask}
    final: {type: str, produced_by: wrap}
nodes:
  - {id: pick, type: CODE, owner: code, reads: [task], writes: [topic], body: "'topic of ' + task"}
  - {id: ask, type: CALL, owner: model, reads: [topicCONFIRM_READ], writes: [answer], target: confirm.agir, doc: "Have it confirmed."}
  - {id: wrap, type: CODE, owner: code, reads: [answer], writes: [final], body: "'published ' + answer"}
  - {id: done, type: TERMINAL, reads: [final]}
edges:
  - {from: pick, to: ask}
  - {from: ask, to: wrap}
  - {from: wrap, to: done}
"#;

#[test]
fn a_called_program_that_asks_pauses_the_run_and_the_answer_finishes_it_as_if_given_up_front() {
    let upfront = PUBLISH.replace("CONFIRM_READ", ", confirm").replace(
        "    topic: {type: str, produced_by: pick}\n",
        "    topic: {type: str, produced_by: pick}\n    confirm: {type: str, role: input}\n",
    );
    let dir = project(&[
        ("confirm.agir", CONFIRM),
        ("publish.agir", &PUBLISH.replace("CONFIRM_READ", "")),
        ("upfront.agir", &upfront),
        ("s.json", "{}"),
    ]);
    // The CALL is a model's instruction (no slot of it is filled: its target runs).
    let run = |file: &str, out: &str, extra: &[&str]| {
        let mut args = vec!["run", file, "--task", "the fair", "--out", out];
        args.extend_from_slice(&["--model", "scripted:s.json"]);
        args.extend_from_slice(extra);
        ais_in(dir.path(), &args)
    };
    // The answer given up front: the caller passes it to the CALL.
    let o = run(
        "upfront.agir",
        "whole",
        &["--input", "confirm=yes", "--format", "json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let whole = json(&o);
    assert_eq!(
        whole["report"]["final"],
        "published topic of the fair looked up: yes"
    );
    let same = |v: &Value| {
        assert_eq!(v["status"], "ok", "{v}");
        for key in ["report", "steps", "deviations", "usage"] {
            assert_eq!(v[key], whole[key], "{key}: {v}");
        }
    };

    // Journaled: the run pauses at the CALL for the callee's question (exit 3).
    let o = run("publish.agir", "out", &[]);
    assert_eq!(o.status.code(), Some(3), "{}", both(&o));
    let shown = both(&o);
    assert!(
        shown.contains(
            "`decide` (in `confirm`, called by `ask` at publish.agir:14) needs `confirm`: Publish this topic? (yes/no)"
        ),
        "{shown}"
    );
    let o = run("publish.agir", "out", &["--format", "json"]);
    assert_eq!(o.status.code(), Some(3), "{}", both(&o));
    let v = json(&o);
    assert_eq!(v["status"], "input_required");
    assert_eq!(
        (&v["pause"]["instruction"], &v["pause"]["carry"]),
        (&Value::from("ask"), &Value::from("confirm"))
    );
    assert_eq!(
        v["pause"]["called"],
        serde_json::json!([{"program": "confirm", "instruction": "decide"}])
    );
    let id = v["run"].as_str().expect("a run id").to_owned();
    let journal = v["journal"].as_str().expect("its journal").to_owned();
    let o = ais_in(dir.path(), &["runs", "--journal", &journal]);
    let listing = stdout(&o);
    let row = listing
        .lines()
        .find(|l| l.contains(&id))
        .unwrap_or_default();
    assert!(row.contains("input_required"), "{listing}");
    // `ais runs show` says what the run waits on, naming the step that asked.
    let o = ais_in(dir.path(), &["runs", "show", &id, "--journal", &journal]);
    assert!(
        stdout(&o).contains(
            "waits: `decide` (in `confirm`, called by `ask`) needs `confirm`: Publish this topic? (yes/no)"
        ),
        "{}",
        both(&o)
    );
    let o = ais_in(
        dir.path(),
        &[
            "resume",
            &id,
            "--journal",
            &journal,
            "--answer",
            "yes",
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    same(&json(&o));

    // No journal: the same record as a handle file.
    let o = run(
        "publish.agir",
        "plain",
        &["--no-journal", "--format", "json"],
    );
    assert_eq!(o.status.code(), Some(3), "{}", both(&o));
    let handle = dir
        .path()
        .join(json(&o)["pause"]["handle"].as_str().expect("a handle"));
    let o = ais_in(
        dir.path(),
        &[
            "resume",
            path(&handle),
            "--answer",
            "yes",
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    same(&json(&o));
    assert!(!handle.exists(), "a used handle is removed");

    // On a terminal, the question is asked on the spot.
    if let Some((screen, code)) = on_a_terminal(
        dir.path(),
        &[
            "run",
            "publish.agir",
            "--task",
            "the fair",
            "--out",
            "tty",
            "--model",
            "scripted:s.json",
        ],
        "yes",
    ) {
        assert_eq!(code, 0, "{screen}");
        assert!(
            screen.contains(
                "`decide` (in `confirm`, called by `ask`) needs `confirm`: Publish this topic? (yes/no)"
            ),
            "{screen}"
        );
        assert!(
            screen.contains("final: published topic of the fair looked up: yes"),
            "{screen}"
        );
    }
}
