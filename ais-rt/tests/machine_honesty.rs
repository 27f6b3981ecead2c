//! The runtime is honest about what a run did: the report holds only the carries the run
//! produced (spec §4.5), never a starting value in place of one no step wrote.

mod common;

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
        let mut tools = ais_rt::tools::ToolRegistry::new();
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
