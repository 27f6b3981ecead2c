//! Effects through the machine with the real built-in library and real subprocesses: the
//! tool-less ACT's write-out (§4.2.2), a produced program executed (§4.1, §4.4.3), path escapes
//! a model's output tries, and Python tools that fail, hang or flood.

use crate::common;

use ais_rt::llm::ScriptedModel;
use ais_rt::{Inputs, Runtime, Status};
use ais_rt::{ToolLimits, ToolRegistry};
use common::{block_on, program};
use std::sync::Arc;
use std::time::Duration;

fn runtime(dir: &std::path::Path, responses: serde_json::Value) -> Runtime {
    let model = ScriptedModel::from_json(&dir.join("responses.json"), responses).unwrap();
    Runtime::builder()
        .tools(ToolRegistry::with_builtins())
        .out_dir(dir.to_path_buf())
        .model(Arc::new(model))
        .limits(ToolLimits {
            timeout: Duration::from_secs(2),
            max_output_bytes: 64 * 1024,
        })
        .build()
}

#[test]
fn a_tool_less_act_writes_its_text_carry_to_a_program_controlled_file() {
    let doc = program(
        r#"---
name: t
description: Draft and deliver.
---
walker:
  name: T
  carries:
    task: {type: str, role: input}
    report_md: {type: str, produced_by: draft}
    saved: {type: str, produced_by: deliver}
nodes:
  - {id: draft, type: GEN-RAW, reads: [task], writes: [report_md], doc: "Write the report."}
  - {id: deliver, type: ACT, owner: code, surface: artifact, reads: [report_md], writes: [saved]}
  - {id: done, type: TERMINAL, reads: [saved]}
edges:
  - {from: draft, to: deliver}
  - {from: deliver, to: done}
"#,
    );
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(
        dir.path(),
        serde_json::json!({"draft": ["# Report\n\nAll good."]}),
    );
    let out = block_on(rt.run(&doc.program, None, Inputs::task("write the weekly report")));
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("report_md.md")).unwrap(),
        "# Report\n\nAll good."
    );
    // The task names the file: that is the destination (§7.3).
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(dir.path(), serde_json::json!({"draft": ["# Report"]}));
    let out = block_on(rt.run(
        &doc.program,
        None,
        Inputs::task("write the report and save as weekly.md"),
    ));
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("weekly.md")).unwrap(),
        "# Report"
    );
}

const SCRIPTED: &str = r#"---
name: t
description: Author a script, run it, branch on the result.
---
walker:
  name: T
  carries:
    task: {type: str, role: input}
    script: {type: str, produced_by: author}
    ran: {type: outcome, produced_by: execute}
    verdict: {type: str, produced_by: judge_ok}
nodes:
  - {id: author, type: GEN-RAW, reads: [task], writes: [script], doc: "Write a Python script that does the task."}
  - {id: execute, type: ACT, owner: code, reads: [script], writes: [ran]}
  - {id: check, type: ROUTE, owner: code, reads: [ran]}
  - {id: judge_ok, type: CODE, owner: code, reads: [ran], writes: [verdict], body: "'ran: ' + ran.output"}
  - {id: judge_bad, type: CODE, owner: code, reads: [ran], writes: [verdict], body: "'failed: ' + ran.error"}
  - {id: done, type: TERMINAL, reads: [verdict]}
edges:
  - {from: author, to: execute}
  - {from: execute, to: check}
  - {from: check, to: judge_ok, guard: "ran.ok == true"}
  - {from: check, to: judge_bad, guard: "ran.ok == false"}
  - {from: judge_ok, to: done}
  - {from: judge_bad, to: done}
"#;

#[test]
fn a_produced_script_runs_and_its_result_is_a_value_to_route_on() {
    let doc = program(SCRIPTED);
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(
        dir.path(),
        serde_json::json!({"author": ["```python\nprint(6 * 7)\n```"]}),
    );
    let out = block_on(rt.run(&doc.program, None, Inputs::task("compute")));
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(
        out.report["verdict"].as_str().map(str::trim),
        Some("ran: 42")
    );
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(
        dir.path(),
        serde_json::json!({"author": ["import sys\nprint('partial')\nsys.exit(3)"]}),
    );
    let out = block_on(rt.run(&doc.program, None, Inputs::task("compute")));
    assert_eq!(out.status, Status::Ok, "a routed failure: {out:?}");
    assert!(
        out.report["verdict"]
            .as_str()
            .unwrap()
            .starts_with("failed: "),
        "{out:?}"
    );
}

#[test]
fn paths_from_a_model_never_leave_the_output_root() {
    let text = r#"---
name: t
description: Save where the model says.
---
walker:
  name: T
  carries:
    task: {type: str, role: input}
    dest_path: {type: str, produced_by: pick}
    saved: {type: outcome, produced_by: save}
nodes:
  - {id: pick, type: GEN-RAW, reads: [task], writes: [dest_path], doc: "Pick a file name."}
  - {id: save, type: ACT, owner: code, tool: write_file, reads: [dest_path, task], writes: [saved]}
  - {id: check, type: ROUTE, owner: code, reads: [saved]}
  - {id: done, type: TERMINAL, reads: [saved]}
edges:
  - {from: pick, to: save}
  - {from: save, to: check}
  - {from: check, to: done, guard: "saved.ok == true"}
  - {from: check, to: done, guard: otherwise}
"#;
    let doc = program(text);
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.txt");
    let root = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), root.path().join("link")).unwrap();
    let attempts = [
        victim.display().to_string(),
        "../victim.txt".to_owned(),
        "notes/../../victim.txt".to_owned(),
        "link/victim.txt".to_owned(),
    ];
    for attempt in attempts {
        let rt = runtime(root.path(), serde_json::json!({"pick": [attempt.clone()]}));
        let out = block_on(rt.run(&doc.program, None, Inputs::task("hello")));
        assert_eq!(out.status, Status::Ok, "{attempt}: {out:?}");
        assert_eq!(
            out.report["saved"]["ok"], false,
            "{attempt} is refused: {out:?}"
        );
        assert!(!victim.exists(), "{attempt} wrote outside the root");
    }
    let rt = runtime(root.path(), serde_json::json!({"pick": ["inside.txt"]}));
    let out = block_on(rt.run(&doc.program, None, Inputs::task("hello")));
    assert_eq!(out.report["saved"]["ok"], true, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(root.path().join("inside.txt")).unwrap(),
        "hello"
    );
}

fn python_tool(body: &str) -> String {
    format!(
        r#"---
name: t
description: A Python tool that misbehaves.
---
tools:
  work:
    sig: "(task) -> str"
    surface: SENSE
    serves: [run_it]
    body: |
{}
walker:
  name: T
  carries:
    task: {{type: str, role: input}}
    result: {{type: outcome, produced_by: run_it}}
nodes:
  - {{id: run_it, type: SENSE, owner: code, reads: [task], writes: [result]}}
  - {{id: done, type: TERMINAL, reads: [result]}}
edges:
  - {{from: run_it, to: done}}
"#,
        body.lines()
            .map(|l| format!("      {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    )
}

#[test]
fn python_tools_that_fail_hang_or_flood_are_error_values_and_the_run_goes_on() {
    let cases = [
        ("def work(task):\n    raise RuntimeError('boom')", "boom"),
        ("def work(task):\n    import sys\n    sys.exit(4)", "exit"),
        (
            "def work(task):\n    import time\n    time.sleep(30)",
            "longer than",
        ),
        (
            "def work(task):\n    import sys\n    sys.stdout.write('x' * 100_000_000)\n    return 'done'",
            "output",
        ),
    ];
    for (body, says) in cases {
        let doc = program(&python_tool(body));
        let dir = tempfile::tempdir().unwrap();
        let rt = runtime(dir.path(), serde_json::json!({}));
        let started = std::time::Instant::now();
        let out = block_on(rt.run(&doc.program, None, Inputs::task("go")));
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{says}: bounded"
        );
        assert_eq!(
            out.status,
            Status::Error,
            "{says}: unrouted, never ok: {out:?}"
        );
        assert_eq!(out.report["result"]["ok"], false, "{says}");
        let error = out.report["result"]["error"]
            .as_str()
            .unwrap()
            .to_lowercase();
        assert!(error.contains(says), "{says}: {error}");
    }
}
