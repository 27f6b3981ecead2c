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
