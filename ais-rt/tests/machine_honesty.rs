//! The runtime is honest about what a run did: the report holds only the carries the run
//! produced (spec §4.5), never a starting value in place of one no step wrote.

use crate::common;

use ais_core::Value;
use ais_rt::Status;
use common::{Bench, arg, block_on, program, tool};

/// A filing program: a ROUTE sends a rejected invoice past the step that files it, so on that
/// path `ledger_file` and `filed` are never written.
const FILING: &str = r#"---
name: filing
description: File an invoice when its total is positive.
---
walker:
  name: Filing
  carries:
    task: {type: str, role: input}
    vendor: {type: str, role: input}
    total: {type: int, produced_by: parse}
    ledger_file: {type: str, produced_by: file}
    filed: {type: bool, produced_by: file_flag}
    verdict: {type: str, produced_by: judge}
nodes:
  - {id: parse, type: CODE, owner: code, reads: [task], writes: [total], body: "int(task)"}
  - {id: judge, type: CODE, owner: code, reads: [total], writes: [verdict], body: "'ok' if total > 0 else 'rejected'"}
  - {id: gate, type: ROUTE, owner: code, reads: [verdict]}
  - {id: file, type: CODE, owner: code, reads: [vendor], writes: [ledger_file], body: "'ledger/' + vendor + '.csv'"}
  - {id: file_flag, type: CODE, owner: code, reads: [ledger_file], writes: [filed], body: "true"}
  - {id: done, type: TERMINAL, reads: [verdict, ledger_file, filed, vendor]}
edges:
  - {from: parse, to: judge}
  - {from: judge, to: gate}
  - {from: gate, to: file, guard: "verdict == 'ok'"}
  - {from: gate, to: done, guard: otherwise}
  - {from: file, to: file_flag}
  - {from: file_flag, to: done}
"#;

#[test]
fn a_terminal_read_no_step_wrote_is_absent_from_the_report() {
    let bench = Bench::new();
    let out = bench.run(FILING, "-5", &[("vendor", "Nordlicht")]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["verdict"], "rejected");
    assert!(
        !out.report.contains_key("ledger_file") && !out.report.contains_key("filed"),
        "no step on this path wrote them, so they are not reported as \"\" and false: {:?}",
        out.report
    );
    assert_eq!(out.unproduced, ["ledger_file", "filed"]);
    assert_eq!(
        out.report["vendor"], "Nordlicht",
        "an input the caller gave is produced"
    );
    let keys: Vec<&str> = out.report.keys().map(String::as_str).collect();
    assert_eq!(keys, ["verdict", "vendor", "total"]);
}

#[test]
fn the_path_that_writes_them_reports_them() {
    let bench = Bench::new();
    let out = bench.run(FILING, "12", &[("vendor", "Nordlicht")]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["ledger_file"], "ledger/Nordlicht.csv");
    assert_eq!(out.report["filed"], true);
    assert!(out.unproduced.is_empty(), "{:?}", out.unproduced);
}

#[test]
fn a_written_value_equal_to_the_default_is_still_reported() {
    // `filed` written `false` by a step is a produced `false`, not an unset one.
    let text = FILING.replace("body: \"true\"", "body: \"false\"");
    let out = Bench::new().run(&text, "3", &[("vendor", "V")]);
    assert_eq!(out.report["filed"], false);
    assert!(out.unproduced.is_empty());
}

#[test]
fn an_input_filled_by_its_declared_default_is_produced() {
    let text = FILING.replace(
        "vendor: {type: str, role: input}",
        "vendor: {type: str, role: input, default: Acme}",
    );
    let out = Bench::new().run(&text, "-1", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["vendor"], "Acme");
    assert_eq!(out.unproduced, ["ledger_file", "filed"]);
}

#[test]
fn a_call_whose_target_did_not_produce_its_result_produces_nothing() {
    let child = program(
        r#"---
name: child
description: Looks a value up, and may find nothing.
---
walker:
  name: Child
  carries:
    task: {type: str, role: input}
    found: {type: bool, produced_by: look}
    line: {type: str, produced_by: write}
nodes:
  - {id: look, type: SENSE, owner: code, reads: [task], writes: [found]}
  - {id: gate, type: ROUTE, owner: code, reads: [found]}
  - {id: write, type: CODE, owner: code, reads: [task], writes: [line], body: "'found ' + task"}
  - {id: fin, type: TERMINAL, reads: [line, found]}
tools:
  lookup: {sig: "(task) -> bool", surface: SENSE, serves: [look]}
edges:
  - {from: look, to: gate}
  - {from: gate, to: write, guard: "found == true"}
  - {from: gate, to: fin, guard: otherwise}
  - {from: write, to: fin}
"#,
    );
    let parent = program(
        r#"---
name: parent
description: Delegates a lookup.
---
walker:
  name: Parent
  carries:
    task: {type: str, role: input}
    answer: {type: str, produced_by: delegate}
nodes:
  - {id: delegate, type: CALL, owner: model, reads: [task], writes: [answer], target: child, doc: "Delegate the lookup."}
  - {id: done, type: TERMINAL, reads: [answer]}
edges:
  - {from: delegate, to: done}
"#,
    );
    for (task, answer) in [("known", Some("found known")), ("unknown", None)] {
        let out_dir = tempfile::tempdir().unwrap();
        let mut tools = ais_rt::ToolRegistry::new();
        tools.register(
            "lookup",
            tool(|a, _| Ok(Value::Bool(arg(a, "task") == "known"))),
        );
        let rt = ais_rt::Runtime::builder()
            .out_dir(out_dir.path().into())
            .tools(tools)
            .program("child", child.program.clone())
            .build();
        let out = block_on(rt.run(&parent.program, None, ais_rt::Inputs::task(task)));
        assert_eq!(out.status, Status::Ok, "{out:?}");
        match answer {
            Some(a) => assert_eq!(out.report["answer"], a),
            None => {
                assert!(
                    !out.report.contains_key("answer"),
                    "the child's report is not passed off as its result: {:?}",
                    out.report
                );
                assert_eq!(out.unproduced, ["answer"]);
            }
        }
    }
}

/// A step whose pipeline logs the visit to a file (a real side effect), then asks a human.
const LOG_THEN_ASK: &str = r#"---
name: log_then_ask
description: Log a visit, then ask who is visiting.
---
walker:
  name: LogThenAsk
  carries:
    task: {type: str, role: input}
    question: {type: str, produced_by: frame}
    visitor: {type: str, produced_by: ask}
    line: {type: str, produced_by: greet}
tools:
  log_visit: {sig: "(question) -> str", surface: ACT, serves: [ask]}
  ask_user: {sig: "(prompt) -> str", surface: SENSE, serves: [ask]}
nodes:
  - {id: frame, type: CODE, owner: code, reads: [task], writes: [question], body: "'Who is ' + task + '?'"}
  - {id: ask, type: SENSE, owner: code, reads: [question], writes: [visitor]}
  - {id: greet, type: CODE, owner: code, reads: [visitor], writes: [line], body: "'hello ' + visitor"}
  - {id: done, type: TERMINAL, reads: [line]}
edges:
  - {from: frame, to: ask}
  - {from: ask, to: greet}
  - {from: greet, to: done}
"#;

/// Appends one line to `visits.log` under the output root.
fn visit_logger() -> std::sync::Arc<common::FnTool> {
    tool(|a, ctx| {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(ctx.root.join("visits.log"))
            .map_err(|e| common::failed(&e.to_string(), ""))?;
        writeln!(f, "{}", arg(a, "question")).map_err(|e| common::failed(&e.to_string(), ""))?;
        Ok(Value::from("logged"))
    })
}

#[test]
fn resuming_at_ask_user_does_not_repeat_the_pipelines_earlier_tools() {
    let log = visit_logger();
    let bench = Bench::new().with("log_visit", log.clone());
    let out = bench.run(LOG_THEN_ASK, "the reviewer", &[]);
    assert_eq!(out.status, Status::InputRequired, "{out:?}");
    let pause = out.pause.expect("a pause");
    assert_eq!(
        (pause.instruction.as_str(), pause.prompt.as_str()),
        ("ask", "Who is the reviewer?")
    );
    let logged = bench.out.path().join("visits.log");
    assert_eq!(
        std::fs::read_to_string(&logged).unwrap(),
        "Who is the reviewer?\n"
    );

    let doc = program(LOG_THEN_ASK);
    let handle = pause.handle.expect("a handle");
    let out = block_on(
        bench
            .runtime()
            .resume(&doc.program, None, &handle, "Ada".into()),
    );
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["line"], "hello Ada");
    assert_eq!(
        std::fs::read_to_string(&logged).unwrap(),
        "Who is the reviewer?\n",
        "the visit was logged once: the tool before `ask_user` does not run again on resume"
    );
    assert_eq!(log.calls.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[test]
fn a_handle_whose_ask_position_is_no_ask_user_call_is_refused() {
    let log = visit_logger();
    let bench = Bench::new().with("log_visit", log.clone());
    let out = bench.run(LOG_THEN_ASK, "the reviewer", &[]);
    let handle = out.pause.and_then(|p| p.handle).expect("a handle");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&handle).unwrap()).unwrap();
    assert_eq!(
        json["waits"]["ask"], 1,
        "`ask_user` is the pipeline's second tool"
    );
    json["waits"]["ask"] = 0.into();
    std::fs::write(&handle, json.to_string()).unwrap();
    let doc = program(LOG_THEN_ASK);
    let out = block_on(
        bench
            .runtime()
            .resume(&doc.program, None, &handle, "Ada".into()),
    );
    assert_eq!(out.status, Status::Fault);
    let fault = out.fault.unwrap();
    assert_eq!(fault.kind, ais_rt::FaultKind::InvalidHandle);
    assert!(
        fault.message.contains("no `ask_user` call"),
        "{}",
        fault.message
    );
    assert_eq!(
        log.calls.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "nothing ran"
    );
}

/// A SPAWN that claims two writes: the join fills `results`; `count` has no source.
const FAN_TWO_WRITES: &str = r#"---
name: fan_two
description: Shout each item.
---
walker:
  name: FanTwo
  carries:
    task: {type: str, role: input}
    items: {type: "list[str]", produced_by: make}
    results: {type: "list[str]", produced_by: fan}
    count: {type: int, produced_by: fan}
tools:
  shout: {sig: "(items) -> str", surface: SENSE, serves: [fan]}
nodes:
  - {id: make, type: CODE, owner: code, reads: [task], writes: [items], body: "task.split(',')"}
  - {id: fan, type: SPAWN, owner: code, reads: [items], writes: [results, count], concurrency: {isolation: shared_read}}
  - {id: done, type: TERMINAL, reads: [results, count]}
edges:
  - {from: make, to: fan}
  - {from: fan, to: done}
"#;

#[test]
fn a_spawn_joins_into_writes_0_only_and_the_check_says_so() {
    let bench = Bench::new().with(
        "shout",
        tool(|a, _| Ok(Value::from(arg(a, "items").to_uppercase()))),
    );
    let out = bench.run(FAN_TWO_WRITES, "a,b", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["results"], serde_json::json!(["A", "B"]));
    assert!(!out.report.contains_key("count"), "{:?}", out.report);
    assert_eq!(out.unproduced, ["count"]);
    let g8 = out
        .findings
        .iter()
        .find(|f| f.id == ais_core::CheckId::G8)
        .expect("the check names the writes the join cannot fill");
    assert_eq!(g8.severity, ais_core::Severity::Warn);
    assert!(
        g8.message
            .contains("into `writes[0]` (`results`) only (spec §4.4.4)")
            && g8.message.contains("never writes `count`"),
        "{}",
        g8.message
    );
}

/// A SPAWN whose siblings each log their item (a real side effect), then ask a human.
const FAN_ASKS: &str = r#"---
name: fan_asks
description: Ask a human about each item.
---
walker:
  name: FanAsks
  carries:
    task: {type: str, role: input}
    items: {type: "list[str]", produced_by: make}
    answers: {type: "list[str]", produced_by: fan}
tools:
  log_visit: {sig: "(items) -> str", surface: ACT, serves: [fan]}
  ask_user: {sig: "(prompt) -> str", surface: SENSE, serves: [fan]}
nodes:
  - {id: make, type: CODE, owner: code, reads: [task], writes: [items], body: "task.split(',')"}
  - {id: fan, type: SPAWN, owner: code, reads: [items], writes: [answers], concurrency: {isolation: orchestrator_owned}}
  - {id: done, type: TERMINAL, reads: [answers]}
edges:
  - {from: make, to: fan}
  - {from: fan, to: done}
"#;

#[test]
fn a_sibling_that_asks_pauses_the_spawn_and_resumes_only_that_sibling() {
    let logged = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen = logged.clone();
    let log = tool(move |a, _| {
        seen.lock().unwrap().push(arg(a, "items").to_owned());
        Ok(Value::from("logged"))
    });
    let bench = Bench::new().with("log_visit", log.clone());
    let doc = program(FAN_ASKS);
    let mut out = bench.run(FAN_ASKS, "a,b,c", &[]);
    let mut asked = Vec::new();
    while out.status == Status::InputRequired {
        let pause = out.pause.clone().expect("a pause");
        assert_eq!(pause.instruction, "fan");
        asked.push((pause.carry.clone(), pause.prompt.clone()));
        assert!(
            asked.len() <= 3,
            "one question per sibling, never again: {asked:?}"
        );
        let answer = format!("{}!", pause.prompt.to_uppercase());
        let handle = pause.handle.expect("a handle");
        out = block_on(bench.runtime().resume(&doc.program, None, &handle, answer));
    }
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(
        asked,
        [
            ("answers[0]".to_owned(), "a".to_owned()),
            ("answers[1]".to_owned(), "b".to_owned()),
            ("answers[2]".to_owned(), "c".to_owned()),
        ]
    );
    assert_eq!(out.report["answers"], serde_json::json!(["A!", "B!", "C!"]));
    let mut visits = logged.lock().unwrap().clone();
    visits.sort();
    assert_eq!(
        visits,
        ["a", "b", "c"],
        "each sibling's tools before its question ran once, across three resumes"
    );
    assert_eq!(
        out.steps, 3,
        "make, fan and done, each counted once; the siblings are sub-steps of fan's step"
    );
}

#[test]
fn a_handle_whose_paused_siblings_do_not_fit_the_spawn_is_refused() {
    let log = tool(|_, _| Ok(Value::from("logged")));
    let bench = Bench::new().with("log_visit", log.clone());
    let out = bench.run(FAN_ASKS, "a,b", &[]);
    let handle = out.pause.and_then(|p| p.handle).expect("a handle");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&handle).unwrap()).unwrap();
    assert_eq!(json["waits"]["spawn"]["waiting"][1]["index"], 1, "{json}");
    json["waits"]["spawn"]["waiting"][1]["index"] = 0.into();
    std::fs::write(&handle, json.to_string()).unwrap();
    let doc = program(FAN_ASKS);
    let out = block_on(
        bench
            .runtime()
            .resume(&doc.program, None, &handle, "x".into()),
    );
    assert_eq!(out.status, Status::Fault, "{out:?}");
    let fault = out.fault.unwrap();
    assert_eq!(fault.kind, ais_rt::FaultKind::InvalidHandle);
    assert!(fault.message.contains("do not match"), "{}", fault.message);
    assert_eq!(
        log.calls.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "no sibling ran again"
    );
}

/// A program whose native `label` tool declares `-> str`: a native tool that breaks its
/// signature is an error value naming the tool and both types (routable like any tool failure,
/// §10.1; unrouted here, so the run ends `error`), never a value converted and passed on.
const LABEL: &str = r#"---
name: label
description: Label the task.
---
tools:
  label:
    sig: "(task) -> str"
    surface: SENSE
    lang: rust
    body: "// native"
walker:
  carries:
    task: {type: str, role: input}
    name: {type: str, produced_by: call}
nodes:
  - {id: call, type: SENSE, owner: code, tool: label, reads: [task], writes: [name]}
  - {id: done, type: TERMINAL, reads: [name]}
edges:
  - {from: call, to: done}
"#;

#[test]
fn a_native_tool_returning_another_type_than_its_signature_is_an_error_naming_both() {
    // 42 where `-> str` is declared: before, it became the text "42" and flowed on.
    let wrong = Bench::new().with("label", tool(|_, _| Ok(Value::Int(42))));
    let out = wrong.run(LABEL, "hello", &[]);
    assert_eq!(out.status, Status::Error, "{out:?}");
    let failure = format!("{out:?}");
    assert!(
        failure
            .contains("tool `label` returned an int, not `str`: its signature declares `-> str`"),
        "{failure}"
    );
    assert!(!out.report.contains_key("name"), "{:?}", out.report);
    // The right type passes untouched.
    let right = Bench::new().with(
        "label",
        tool(|a, _| Ok(Value::Str(arg(a, "task").to_uppercase()))),
    );
    let out = right.run(LABEL, "hello", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["name"], "HELLO");
}
