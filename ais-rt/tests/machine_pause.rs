//! Human input (§7.5): a run that needs an answer it was not given pauses with a resumable
//! handle; resuming continues at that instruction without re-running anything before it, and a
//! malformed or mismatched handle is refused before anything runs.

use crate::common;

use ais_core::Value;
use ais_rt::{FaultKind, Inputs, Status};
use common::{Bench, arg, block_on, program, tool};
use std::sync::atomic::Ordering;

const GATED: &str = r#"---
name: cleanup
description: Delete old files after a human confirms.
---
walker:
  name: Cleanup
  carries:
    task: {type: str, role: input}
    confirm: {type: str, role: input, doc: "Type yes to delete the old files."}
    found: {type: str, produced_by: scan}
    approved: {type: bool, produced_by: parse}
    result: {type: str, produced_by: act}
tools:
  scan_files: {sig: "(task) -> str", surface: SENSE, serves: [scan]}
nodes:
  - {id: scan, type: SENSE, owner: code, reads: [task], writes: [found]}
  - {id: parse, type: CODE, owner: code, reads: [confirm], writes: [approved], body: "confirm == 'yes'"}
  - {id: gate, type: ROUTE, owner: code, reads: [approved]}
  - {id: act, type: CODE, owner: code, reads: [found], writes: [result], body: "'deleted ' + found"}
  - {id: keep, type: CODE, owner: code, reads: [found], writes: [result], body: "'kept ' + found"}
  - {id: done, type: TERMINAL, reads: [result]}
edges:
  - {from: scan, to: parse}
  - {from: parse, to: gate}
  - {from: gate, to: act, guard: "approved == true"}
  - {from: gate, to: keep, guard: otherwise}
  - {from: act, to: done}
  - {from: keep, to: done}
"#;

fn scanner() -> std::sync::Arc<common::FnTool> {
    tool(|a, _| Ok(Value::from(format!("3 files for {}", arg(a, "task")))))
}

#[test]
fn a_missing_human_input_pauses_and_resume_runs_nothing_before_it() {
    let scan = scanner();
    let bench = Bench::new().with("scan_files", scan.clone());
    let out = bench.run(GATED, "approve and delete the old files", &[]);
    assert_eq!(
        out.status,
        Status::InputRequired,
        "the task text never answers the gate: {out:?}"
    );
    let pause = out.pause.expect("a pause");
    assert_eq!(
        (pause.carry.as_str(), pause.instruction.as_str()),
        ("confirm", "parse")
    );
    assert_eq!(pause.prompt, "Type yes to delete the old files.");
    assert_eq!(pause.line, Some(17));
    let handle = pause.handle.expect("a handle");
    assert!(
        handle.starts_with(bench.out.path().join(".ais/resume")),
        "{handle:?}"
    );
    assert_eq!(out.steps, 1);
    assert_eq!(scan.calls.load(Ordering::SeqCst), 1);

    let doc = program(GATED);
    let rt = bench.runtime();
    let out = block_on(rt.resume(&doc.program, Some(&doc.source_map), &handle, "yes".into()));
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(
        out.report["result"],
        "deleted 3 files for approve and delete the old files"
    );
    assert_eq!(out.steps, 5, "the steps before the pause count once");
    assert_eq!(
        scan.calls.load(Ordering::SeqCst),
        1,
        "the scan did not run again"
    );

    let out = block_on(rt.resume(&doc.program, Some(&doc.source_map), &handle, "no".into()));
    assert_eq!(
        out.report["result"],
        "kept 3 files for approve and delete the old files"
    );
}

#[test]
fn a_supplied_input_does_not_pause() {
    let bench = Bench::new().with("scan_files", scanner());
    let out = bench.run(GATED, "tidy up", &[("confirm", "yes")]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["result"], "deleted 3 files for tidy up");
}

#[test]
fn a_str_input_the_entry_reads_falls_back_to_the_task_unless_it_gates_a_decision() {
    let text = r#"---
name: t
description: Greet.
---
walker:
  name: T
  carries:
    task: {type: str, role: input}
    who: {type: str, role: input}
    line: {type: str, produced_by: greet}
nodes:
  - {id: greet, type: CODE, owner: code, reads: [who], writes: [line], body: "'hello ' + who"}
  - {id: done, type: TERMINAL, reads: [line]}
edges:
  - {from: greet, to: done}
"#;
    let out = Bench::new().run(text, "world", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["line"], "hello world");
}

#[test]
fn ask_user_pauses_with_its_prompt_and_the_answer_is_its_result() {
    let text = r#"---
name: t
description: Ask for a name.
---
walker:
  name: T
  carries:
    task: {type: str, role: input}
    question: {type: str, produced_by: frame}
    name_given: {type: str, produced_by: ask}
    line: {type: str, produced_by: greet}
nodes:
  - {id: frame, type: CODE, owner: code, reads: [task], writes: [question], body: "'Who is ' + task + '?'"}
  - {id: ask, type: SENSE, owner: code, tool: ask_user, reads: [question], writes: [name_given]}
  - {id: greet, type: CODE, owner: code, reads: [name_given], writes: [line], body: "'hello ' + name_given"}
  - {id: done, type: TERMINAL, reads: [line]}
edges:
  - {from: frame, to: ask}
  - {from: ask, to: greet}
  - {from: greet, to: done}
"#;
    let bench = Bench::new();
    let out = bench.run(text, "the reviewer", &[]);
    assert_eq!(out.status, Status::InputRequired, "{out:?}");
    let pause = out.pause.unwrap();
    assert_eq!(
        (pause.instruction.as_str(), pause.prompt.as_str()),
        ("ask", "Who is the reviewer?")
    );
    let doc = program(text);
    let out = block_on(bench.runtime().resume(
        &doc.program,
        None,
        &pause.handle.unwrap(),
        "Ada".into(),
    ));
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["line"], "hello Ada");
    assert_eq!(out.steps, 4);
}

#[test]
fn a_malformed_or_mismatched_handle_is_refused_and_nothing_runs() {
    let scan = scanner();
    let bench = Bench::new().with("scan_files", scan.clone());
    let out = bench.run(GATED, "tidy", &[]);
    let handle = out.pause.unwrap().handle.unwrap();
    let doc = program(GATED);
    let rt = bench.runtime();
    let refused = |out: ais_rt::RunOutcome, what: &str| {
        assert_eq!(out.status, Status::Fault, "{what}: {out:?}");
        assert_eq!(
            out.fault.as_ref().unwrap().kind,
            FaultKind::InvalidHandle,
            "{what}"
        );
        assert_eq!(out.steps, 0, "{what}");
    };
    // Another program (the same one, changed).
    let changed = program(&GATED.replace("'deleted '", "'removed '"));
    refused(
        block_on(rt.resume(&changed.program, None, &handle, "yes".into())),
        "changed program",
    );
    // A tampered handle.
    let text = std::fs::read_to_string(&handle).unwrap();
    let bad = bench.out.path().join("bad.json");
    std::fs::write(&bad, text.replace("\"cursor\": 1", "\"cursor\": 3")).unwrap();
    refused(
        block_on(rt.resume(&doc.program, None, &bad, "yes".into())),
        "moved cursor",
    );
    std::fs::write(&bad, "{not json").unwrap();
    refused(
        block_on(rt.resume(&doc.program, None, &bad, "yes".into())),
        "garbage",
    );
    refused(
        block_on(rt.resume(
            &doc.program,
            None,
            &bench.out.path().join("missing.json"),
            "yes".into(),
        )),
        "missing",
    );
    // An answer that does not parse as the carry's type is refused, and the run still waits
    // at the same pause, on the same handle, saying why and what fits.
    let typed = GATED
        .replace("confirm: {type: str,", "confirm: {type: int,")
        .replace("confirm == 'yes'", "confirm == 1");
    let tdoc = program(&typed);
    let out = bench.run(&typed, "tidy", &[]);
    let h = out.pause.unwrap().handle.unwrap();
    let out = block_on(rt.resume(&tdoc.program, None, &h, "yes".into()));
    assert_eq!(out.status, Status::InputRequired, "{out:?}");
    assert!(out.fault.is_none(), "{out:?}");
    let pause = out.pause.unwrap();
    assert_eq!(pause.carry, "confirm");
    assert_eq!(pause.handle.as_deref(), Some(h.as_path()));
    assert_eq!(pause.expects.as_deref(), Some("an integer"));
    assert_eq!(
        pause.refused.as_deref(),
        Some(
            "`yes` does not fit carry `confirm`, declared `int`: answer with an integer, such as `--answer 42`"
        )
    );
    assert_eq!(
        scan.calls.load(Ordering::SeqCst),
        2,
        "only the two fresh runs scanned"
    );
    let out = block_on(rt.resume(&tdoc.program, None, &h, "1".into()));
    assert_eq!(out.status, Status::Ok, "{out:?}");
}

#[test]
fn inputs_are_typed_by_their_carries() {
    let doc = program(&GATED.replace("confirm: {type: str,", "confirm: {type: int,"));
    let e = Inputs::parse(&doc.program, None, &[("confirm".into(), "many".into())]).unwrap_err();
    assert!(e.message.contains("integer"), "{}", e.message);
    let e = Inputs::parse(&doc.program, None, &[("confrim".into(), "1".into())]).unwrap_err();
    assert!(
        e.message.contains("did you mean `confirm`"),
        "{}",
        e.message
    );
    let e = Inputs::parse(&doc.program, None, &[("found".into(), "x".into())]).unwrap_err();
    assert!(e.message.contains("not an input"), "{}", e.message);
    assert!(Inputs::parse(&doc.program, None, &[("confirm".into(), "7".into())]).is_ok());
}

/// A callee that looks its topic up, then needs a human's `confirm` (typed `CONFIRM_TY`).
const CONFIRM: &str = r#"walker:
  name: Confirm
  carries:
    task: {type: str, role: input}
    topic: {type: str, role: input}
    confirm: {type: CONFIRM_TY, role: input, doc: "Confirm publishing the topic."}
    seen: {type: str, produced_by: look}
    verdict: {type: str, produced_by: decide}
tools:
  look_up: {sig: "(topic) -> str", surface: SENSE, serves: [look]}
nodes:
  - {id: look, type: SENSE, owner: code, reads: [topic], writes: [seen]}
  - {id: decide, type: CODE, owner: code, reads: [seen, confirm], writes: [verdict], body: "seen + ': ' + str(confirm)"}
  - {id: fin, type: TERMINAL, reads: [verdict]}
edges:
  - {from: look, to: decide}
  - {from: decide, to: fin}
"#;

/// A caller that picks a topic, CALLs `TARGET` with it, and wraps the callee's verdict.
const PUBLISH: &str = r#"walker:
  name: Publish
  carries:
    task: {type: str, role: input}
    topic: {type: str, produced_by: pick}
    answer: {type: str, produced_by: ask}
    final: {type: str, produced_by: wrap}
tools:
  pick_topic: {sig: "(task) -> str", surface: SENSE, serves: [pick]}
nodes:
  - {id: pick, type: SENSE, owner: code, reads: [task], writes: [topic]}
  - {id: ask, type: CALL, owner: model, reads: [topic], writes: [answer], target: TARGET, doc: "Have it confirmed."}
  - {id: wrap, type: CODE, owner: code, reads: [answer], writes: [final], body: "'published ' + answer"}
  - {id: done, type: TERMINAL, reads: [final]}
edges:
  - {from: pick, to: ask}
  - {from: ask, to: wrap}
  - {from: wrap, to: done}
"#;

/// Programs that CALL each other, written into the bench's output root (the program
/// directory): `confirm.agir`, `middle.agir` (which CALLs `confirm.agir`), and the caller of
/// `target`.
struct Calls {
    bench: Bench,
    pick: std::sync::Arc<common::FnTool>,
    look: std::sync::Arc<common::FnTool>,
}

impl Calls {
    fn new(confirm_ty: &str) -> Calls {
        let pick = tool(|a, _| Ok(Value::from(format!("topic of {}", arg(a, "task")))));
        let look = tool(|a, _| Ok(Value::from(format!("{} looked up", arg(a, "topic")))));
        let bench = Bench::new()
            .with("pick_topic", pick.clone())
            .with("look_up", look.clone());
        let dir = bench.out.path();
        std::fs::write(
            dir.join("confirm.agir"),
            CONFIRM.replace("CONFIRM_TY", confirm_ty),
        )
        .unwrap();
        // The middle program passes the topic on to `confirm.agir` and keeps its verdict.
        let middle = PUBLISH
            .replace("name: Publish", "name: Middle")
            .replace("TARGET", "confirm.agir")
            .replace(
                "    task: {type: str, role: input}\n",
                "    task: {type: str, role: input}\n    outer: {type: str, role: input}\n",
            )
            .replace(
                "reads: [task], writes: [topic]",
                "reads: [outer], writes: [topic]",
            )
            .replace("'published ' + answer", "'checked ' + answer");
        std::fs::write(dir.join("middle.agir"), middle).unwrap();
        Calls { bench, pick, look }
    }

    fn caller(target: &str) -> ais_core::agir::Document {
        program(&PUBLISH.replace("TARGET", target))
    }

    fn runtime(&self) -> ais_rt::Runtime {
        self.bench
            .runtime_with(|b| b.program_dir(self.bench.out.path().to_path_buf()))
    }

    fn calls(&self) -> (usize, usize) {
        (
            self.pick.calls.load(Ordering::SeqCst),
            self.look.calls.load(Ordering::SeqCst),
        )
    }
}

#[test]
fn a_called_program_that_needs_a_human_pauses_the_caller_and_the_answer_continues_both() {
    let c = Calls::new("str");
    let rt = c.runtime();
    let doc = Calls::caller("confirm.agir");
    let out = block_on(rt.run(
        &doc.program,
        Some(&doc.source_map),
        Inputs::task("the fair"),
    ));
    assert_eq!(out.status, Status::InputRequired, "{out:?}");
    let pause = out.pause.clone().unwrap();
    // The run's own step waits (the CALL), for the callee's question.
    assert_eq!(
        (
            pause.instruction.as_str(),
            pause.carry.as_str(),
            pause.prompt.as_str()
        ),
        ("ask", "confirm", "Confirm publishing the topic.")
    );
    assert_eq!(pause.line, Some(12));
    assert_eq!(out.steps, 1, "`pick` ran; the CALL waits");
    assert_eq!(
        c.calls(),
        (1, 1),
        "the caller's and the callee's steps before the question ran"
    );
    let handle = pause.handle.unwrap();
    let out = block_on(rt.resume(&doc.program, None, &handle, "yes".into()));
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(
        out.report["final"],
        "published topic of the fair looked up: yes"
    );
    assert_eq!(c.calls(), (1, 1), "nothing before the question ran again");
    // The same answer given up front — the caller passes it to the CALL — reports the same.
    let upfront = PUBLISH
        .replace("TARGET", "confirm.agir")
        .replace(
            "    topic: {type: str, produced_by: pick}\n",
            "    topic: {type: str, produced_by: pick}\n    confirm: {type: str, role: input}\n",
        )
        .replace(
            "reads: [topic], writes: [answer]",
            "reads: [topic, confirm], writes: [answer]",
        );
    let up = program(&upfront);
    let inputs = Inputs::parse(
        &up.program,
        Some("the fair".into()),
        &[("confirm".into(), "yes".into())],
    )
    .unwrap();
    let whole = block_on(rt.run(&up.program, None, inputs));
    assert_eq!(whole.status, Status::Ok, "{whole:?}");
    assert_eq!(out.report, whole.report);
    assert_eq!(out.steps, whole.steps);
    assert_eq!(out.deviations, whole.deviations);
}

#[test]
fn a_question_two_calls_deep_is_answered_in_the_innermost_program_and_a_misfit_keeps_it_waiting() {
    let c = Calls::new("int");
    let rt = c.runtime();
    let doc = Calls::caller("middle.agir");
    let out = block_on(rt.run(
        &doc.program,
        Some(&doc.source_map),
        Inputs::task("the fair"),
    ));
    assert_eq!(out.status, Status::InputRequired, "{out:?}");
    let pause = out.pause.unwrap();
    assert_eq!(
        (pause.instruction.as_str(), pause.carry.as_str()),
        ("ask", "confirm")
    );
    assert_eq!(pause.expects.as_deref(), Some("an integer"));
    let handle = pause.handle.unwrap();
    // An answer that does not fit the innermost carry's type leaves the run waiting.
    let out = block_on(rt.resume(&doc.program, None, &handle, "many".into()));
    assert_eq!(out.status, Status::InputRequired, "{out:?}");
    let refused = out.pause.unwrap().refused.unwrap();
    assert!(
        refused.contains("carry `confirm`, declared `int`"),
        "{refused}"
    );
    let out = block_on(rt.resume(&doc.program, None, &handle, "3".into()));
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(
        out.report["final"],
        "published checked topic of the fair looked up: 3"
    );
    assert_eq!(c.calls(), (2, 1), "each `pick` and the `look` ran once");
    // The callee's state is checked as the caller's is: a changed callee refuses the handle.
    std::fs::write(
        c.bench.out.path().join("confirm.agir"),
        CONFIRM
            .replace("CONFIRM_TY", "int")
            .replace("': '", "' = '"),
    )
    .unwrap();
    let out = block_on(rt.resume(&doc.program, None, &handle, "3".into()));
    assert_eq!(out.status, Status::Fault, "{out:?}");
    let f = out.fault.unwrap();
    assert_eq!(f.kind, FaultKind::InvalidHandle);
    assert!(
        f.message.contains("`confirm.agir`, which `ask` CALLs")
            && f.message.contains("another program"),
        "{}",
        f.message
    );
}

#[test]
fn a_journaled_call_pause_resumes_from_the_journal_without_repeating_an_effect() {
    let c = Calls::new("str");
    let rt = c.runtime();
    let doc = Calls::caller("middle.agir");
    let prep = rt.prepare(&doc.program, Some(&doc.source_map));
    let journal = std::sync::Arc::new(ais_rt::journal::MemoryJournal::new("j1"));
    let out = block_on(rt.run_journaled(&prep, Inputs::task("the fair"), journal.clone()));
    assert_eq!(out.status, Status::InputRequired, "{out:?}");
    assert!(
        out.pause.as_ref().unwrap().handle.is_none(),
        "the journal keeps the pause"
    );
    let start = rt.run_start(
        "j1",
        &prep,
        &Inputs::task("the fair"),
        serde_json::Value::Null,
    );
    let out = block_on(rt.resume_journaled(&prep, journal.clone(), &start, Some("yes".into())));
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(
        out.report["final"],
        "published checked topic of the fair looked up: yes"
    );
    assert_eq!(c.calls(), (2, 1), "no tool ran twice");
    // Every tool call is one effect: the caller's `pick` and, below the CALLs, the middle
    // program's `pick` and the innermost `look`.
    let effects = journal.effects();
    let mut tools: Vec<(&str, &str)> = effects
        .iter()
        .map(|(e, _)| (e.key.path.as_str(), e.name.as_str()))
        .collect();
    tools.sort_unstable();
    assert_eq!(
        tools,
        [
            ("", "pick_topic"),
            ("c2", "pick_topic"),
            ("c2/c2", "look_up")
        ]
    );
    assert_eq!(journal.ended().unwrap().status, Status::Ok);
}

#[test]
fn a_call_in_a_branch_of_a_structural_fan_out_pauses_the_run_and_the_other_branch_still_runs() {
    let c = Calls::new("str");
    let rt = c.runtime();
    let text = r#"walker:
  name: Fork
  carries:
    task: {type: str, role: input}
    topic: {type: str, produced_by: pick}
    answer: {type: str, produced_by: ask}
    other: {type: str, produced_by: side}
    final: {type: str, produced_by: join}
tools:
  pick_topic: {sig: "(task) -> str", surface: SENSE, serves: [pick]}
nodes:
  - {id: pick, type: SENSE, owner: code, reads: [task], writes: [topic]}
  - {id: fork, type: SPAWN, owner: code, concurrency: {isolation: shared_read}}
  - {id: ask, type: CALL, owner: model, reads: [topic], writes: [answer], target: confirm.agir, doc: "Have it confirmed."}
  - {id: side, type: CODE, owner: code, reads: [topic], writes: [other], body: "'side ' + topic"}
  - {id: join, type: CODE, owner: code, reads: [answer, other], writes: [final], body: "answer + ' / ' + other"}
  - {id: done, type: TERMINAL, reads: [final]}
edges:
  - {from: pick, to: fork}
  - {from: fork, to: ask}
  - {from: fork, to: side}
  - {from: ask, to: join}
  - {from: side, to: join}
  - {from: join, to: done}
"#;
    let doc = program(text);
    let out = block_on(rt.run(&doc.program, None, Inputs::task("the fair")));
    assert_eq!(out.status, Status::InputRequired, "{out:?}");
    assert_eq!(out.pause.as_ref().unwrap().instruction, "ask");
    let handle = out.pause.unwrap().handle.unwrap();
    let out = block_on(rt.resume(&doc.program, None, &handle, "yes".into()));
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(
        out.report["final"],
        "topic of the fair looked up: yes / side topic of the fair"
    );
    assert_eq!(c.calls(), (1, 1));
}
