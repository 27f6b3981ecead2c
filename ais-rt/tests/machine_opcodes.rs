//! One test per Deterministic-Unit opcode behaviour of the machine (spec §4), the three
//! degenerate ROUTE cases (§4.4.1), LOOP (§4.4.2), CALL (§4.4.3) and TERMINAL (§4.5).

use crate::common;

use ais_core::Value;
use ais_rt::{FaultKind, Status};
use common::{Bench, arg, failed, tool};

const HEAD: &str = "---\nname: t\ndescription: A test program.\n---\n";

fn prog(body: &str) -> String {
    format!("{HEAD}{body}")
}

#[test]
fn code_bodies_chain_through_the_carry_file_to_the_terminal_report() {
    let text = prog(
        r#"walker:
  name: T
  carries:
    task: {type: str, role: input}
    words: {type: list[str], produced_by: split}
    count: {type: int, produced_by: count}
nodes:
  - {id: split, type: CODE, owner: code, reads: [task], writes: [words], body: "task.split(' ')"}
  - {id: count, type: CODE, owner: code, reads: [words], writes: [count], body: "len(words)"}
  - {id: done, type: TERMINAL, reads: [count]}
edges:
  - {from: split, to: count}
  - {from: count, to: done}
"#,
    );
    let out = Bench::new().run(&text, "one two three", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["count"], 3);
    assert_eq!(
        out.report["words"],
        serde_json::json!(["one", "two", "three"])
    );
    // The TERMINAL's read leads the report.
    assert_eq!(out.report.keys().next().map(String::as_str), Some("count"));
    assert_eq!(out.steps, 3);
}

#[test]
fn sense_runs_its_tool_and_a_multi_write_is_recovered_by_field_name() {
    let text = prog(
        r#"walker:
  name: T
  carries:
    task: {type: str, role: input}
    size: {type: int, produced_by: measure}
    shout: {type: str, produced_by: measure}
tools:
  measure: {sig: "(task) -> (size, shout)", surface: SENSE, serves: [measure]}
nodes:
  - {id: measure, type: SENSE, owner: code, reads: [task], writes: [size, shout]}
  - {id: done, type: TERMINAL, reads: [size, shout]}
edges:
  - {from: measure, to: done}
"#,
    );
    let measure = tool(|a, _| {
        let t = arg(a, "task");
        let mut m = indexmap::IndexMap::new();
        m.insert("shout".to_owned(), Value::from(t.to_uppercase()));
        m.insert("size".to_owned(), Value::Int(t.len() as i64));
        Ok(Value::Map(m))
    });
    let out = Bench::new().with("measure", measure).run(&text, "abc", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["size"], 3);
    assert_eq!(out.report["shout"], "ABC");
}

#[test]
fn act_with_an_unbound_path_writes_to_a_program_controlled_destination() {
    let text = prog(
        r#"walker:
  name: T
  carries:
    task: {type: str, role: input}
    plan_md: {type: str, produced_by: draft}
    saved: {type: str, produced_by: save}
tools:
  save_plan: {sig: "(plan_md, path) -> str", surface: ACT·artifact, serves: [save]}
nodes:
  - {id: draft, type: CODE, owner: code, reads: [task], writes: [plan_md], body: "'# ' + task"}
  - {id: save, type: ACT, owner: code, reads: [plan_md], writes: [saved]}
  - {id: done, type: TERMINAL, reads: [saved]}
edges:
  - {from: draft, to: save}
  - {from: save, to: done}
"#,
    );
    let save = tool(|a, _| {
        Ok(Value::from(format!(
            "{}|{}",
            arg(a, "path"),
            arg(a, "plan_md")
        )))
    });
    // No file named in the task: a derived destination, never an empty path.
    let out = Bench::new()
        .with("save_plan", save.clone())
        .run(&text, "plan it", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["saved"], "save.txt|# plan it");
    // A file named after a save verb is the destination (§7.3).
    let out = Bench::new()
        .with("save_plan", save)
        .run(&text, "plan it and save as plan.md", &[]);
    assert_eq!(out.report["saved"], "plan.md|# plan it and save as plan.md");
}

#[test]
fn a_failed_tool_is_an_error_value_a_route_can_branch_on() {
    let text = prog(
        r#"walker:
  name: T
  carries:
    task: {type: str, role: input}
    result: {type: outcome, produced_by: try_it}
    note: {type: str, produced_by: recover}
tools:
  flaky: {sig: "(task) -> str", surface: SENSE, serves: [try_it]}
nodes:
  - {id: try_it, type: SENSE, owner: code, reads: [task], writes: [result]}
  - {id: check, type: ROUTE, owner: code, reads: [result]}
  - {id: recover, type: CODE, owner: code, reads: [result], writes: [note], body: "'recovered: ' + result.error"}
  - {id: done, type: TERMINAL, reads: [note, result]}
edges:
  - {from: try_it, to: check}
  - {from: check, to: done, guard: "result.ok == true"}
  - {from: check, to: recover, guard: "result.ok == false"}
  - {from: recover, to: done}
"#,
    );
    let flaky = tool(|_, _| Err(failed("exit status 3", "partial output")));
    let out = Bench::new().with("flaky", flaky).run(&text, "go", &[]);
    assert_eq!(
        out.status,
        Status::Ok,
        "a routed failure is not an error: {out:?}"
    );
    assert_eq!(out.report["result"]["ok"], false);
    assert_eq!(out.report["result"]["output"], "partial output");
    assert!(
        out.report["note"]
            .as_str()
            .unwrap()
            .contains("exit status 3")
    );
    let ok = tool(|a, _| Ok(Value::from(arg(a, "task").to_owned())));
    let out = Bench::new().with("flaky", ok).run(&text, "go", &[]);
    assert_eq!(out.report["result"]["ok"], true);
    assert_eq!(out.report["result"]["value"], "go");
    assert!(
        !out.report.contains_key("note"),
        "the recovery did not run, so `note` is not produced"
    );
    assert_eq!(out.unproduced, ["note"]);
}

#[test]
fn an_unrouted_failure_makes_the_status_error_never_ok() {
    let text = prog(
        r#"walker:
  name: T
  carries:
    task: {type: str, role: input}
    listing: {type: str, produced_by: look}
tools:
  look: {sig: "(task) -> str", surface: SENSE, serves: [look]}
nodes:
  - {id: look, type: SENSE, owner: code, reads: [task], writes: [listing]}
  - {id: done, type: TERMINAL, reads: [listing]}
edges:
  - {from: look, to: done}
"#,
    );
    let look = tool(|_, _| Err(failed("no such directory", "")));
    let out = Bench::new().with("look", look).run(&text, "go", &[]);
    assert_eq!(out.status, Status::Error, "{out:?}");
    assert!(
        out.deviations
            .iter()
            .any(|d| d.subject == "look" && d.substituted.contains("no such directory"))
    );
}

const ROUTES: &str = r#"walker:
  name: T
  carries:
    task: {type: str, role: input}
    level: {type: int, produced_by: measure}
nodes:
  - {id: measure, type: CODE, owner: code, reads: [task], writes: [level], body: "len(task)"}
  - {id: gate, type: ROUTE, owner: code, reads: [level]}
  - {id: low, type: CODE, owner: code, reads: [level], writes: [level], body: "level"}
  - {id: high, type: CODE, owner: code, reads: [level], writes: [level], body: "level * 100"}
  - {id: done, type: TERMINAL, reads: [level]}
edges:
  - {from: measure, to: gate}
  - {from: low, to: done}
  - {from: high, to: done}
"#;

fn routes(extra: &str) -> String {
    prog(&format!("{ROUTES}{extra}"))
}

#[test]
fn route_with_several_guards_and_no_default_faults_when_none_holds() {
    let text = routes(
        "  - {from: gate, to: low, guard: \"level < 3\"}\n  - {from: gate, to: high, guard: \"level > 10\"}\n",
    );
    let out = Bench::new().run(&text, "abcdef", &[]);
    assert_eq!(out.status, Status::Fault, "{out:?}");
    let fault = out.fault.expect("a fault");
    assert_eq!(fault.kind, FaultKind::RouteDeadEnd);
    assert_eq!(fault.instruction, "gate");
    assert!(fault.line.is_some(), "the fault names the source line");
    assert!(fault.message.contains("level = 6"), "{}", fault.message);
    // The same route, with a discriminator inside the guard set, branches.
    let out = Bench::new().run(&text, "abcdefghijkl", &[]);
    assert_eq!(out.report["level"], 1200);
}

#[test]
fn route_with_exactly_one_guard_and_no_default_takes_it_unconditionally() {
    let text = routes("  - {from: gate, to: high, guard: \"level > 10\"}\n");
    let out = Bench::new().run(&text, "ab", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["level"], 200);
}

#[test]
fn route_with_no_guards_transitions_unconditionally() {
    let text = routes("  - {from: gate, to: low}\n");
    let out = Bench::new().run(&text, "ab", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["level"], 2);
}

#[test]
fn route_takes_the_first_holding_guard_else_the_default() {
    let text = routes(
        "  - {from: gate, to: high, guard: \"level > 3\"}\n  - {from: gate, to: low, guard: otherwise}\n",
    );
    assert_eq!(Bench::new().run(&text, "abcd", &[]).report["level"], 400);
    assert_eq!(Bench::new().run(&text, "ab", &[]).report["level"], 2);
}

#[test]
fn du_route_runs_its_bound_tool_before_its_guards() {
    let text = prog(
        r#"walker:
  name: T
  carries:
    task: {type: str, role: input}
    approved: {type: bool, produced_by: gate}
    verdict: {type: str, produced_by: yes}
tools:
  decide: {sig: "(task) -> bool", surface: SENSE, serves: [gate]}
nodes:
  - {id: gate, type: ROUTE, owner: code, reads: [task], writes: [approved]}
  - {id: yes, type: CODE, owner: code, reads: [approved], writes: [verdict], body: "'approved'"}
  - {id: no, type: CODE, owner: code, reads: [approved], writes: [verdict], body: "'rejected'"}
  - {id: done, type: TERMINAL, reads: [verdict]}
edges:
  - {from: gate, to: yes, guard: "approved == true"}
  - {from: gate, to: no, guard: "approved == false"}
  - {from: yes, to: done}
  - {from: no, to: done}
"#,
    );
    let decide = tool(|a, _| Ok(Value::Bool(arg(a, "task") == "ship it")));
    let bench = Bench::new().with("decide", decide);
    assert_eq!(
        bench.run(&text, "ship it", &[]).report["verdict"],
        "approved"
    );
    assert_eq!(bench.run(&text, "hold", &[]).report["verdict"], "rejected");
}

const LOOP: &str = r#"walker:
  name: T
  carries:
    task: {type: str, role: input}
    draft: {type: str, produced_by: improve}
    good: {type: bool, produced_by: judge}
    rounds: {type: int, produced_by: improve}
tools:
  polish: {sig: "(draft) -> str", surface: SENSE, serves: [improve]}
  judge_it: {sig: "(draft) -> bool", surface: SENSE, serves: [judge]}
nodes:
  - {id: improve, type: LOOP, owner: code, reads: [draft], writes: [draft], verdict: good, cap: CAP, counter: rounds}
  - {id: judge, type: SENSE, owner: code, reads: [draft], writes: [good]}
  - {id: done, type: TERMINAL, reads: [draft, rounds]}
edges:
  - {from: improve, to: judge}
  - {from: judge, to: improve}
  - {from: improve, to: done}
"#;

fn looping(cap: u32, needed: usize) -> (ais_rt::RunOutcome, usize) {
    let polish = tool(|a, _| Ok(Value::from(format!("{}+", arg(a, "draft")))));
    let judge = tool(move |a, _| Ok(Value::Bool(arg(a, "draft").len() >= needed)));
    let bench = Bench::new()
        .with("polish", polish.clone())
        .with("judge_it", judge);
    let out = bench.run(&prog(&LOOP.replace("CAP", &cap.to_string())), "x", &[]);
    (out, polish.calls.load(std::sync::atomic::Ordering::SeqCst))
}

#[test]
fn loop_advances_when_its_verdict_passes() {
    let (out, calls) = looping(10, 3);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["draft"], "+++");
    assert_eq!(out.report["rounds"], 3);
    assert_eq!(calls, 3);
    assert!(!out.deviations.iter().any(|d| d.subject == "improve"));
}

#[test]
fn loop_advances_at_its_cap_and_records_a_deviation() {
    let (out, calls) = looping(2, 100);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["draft"], "++");
    assert_eq!(out.report["rounds"], 2);
    assert_eq!(calls, 2);
    let d = out
        .deviations
        .iter()
        .find(|d| d.subject == "improve")
        .expect("a cap deviation");
    assert!(d.substituted.contains("cap of 2"), "{d:?}");
}

/// A program, with walker name `WALKER`, whose `write` step joins its `topic` input and the task
/// into `line`.
const CHILD: &str = r#"walker:
  name: WALKER
  carries:
    task: {type: str, role: input}
    topic: {type: str, role: input}
    line: {type: str, produced_by: write}
nodes:
  - {id: write, type: CODE, owner: code, reads: [topic, task], writes: [line], body: "topic + ' for ' + task"}
  - {id: fin, type: TERMINAL, reads: [line]}
edges:
  - {from: write, to: fin}
"#;

/// A program that picks the topic `notes` and hands it to a CALL of `TARGET` for `answer`.
const PARENT: &str = r#"walker:
  name: Parent
  carries:
    task: {type: str, role: input}
    topic: {type: str, produced_by: pick}
    answer: {type: str, produced_by: delegate}
nodes:
  - {id: pick, type: CODE, owner: code, reads: [task], writes: [topic], body: "'notes'"}
  - {id: delegate, type: CALL, owner: model, reads: [topic], writes: [answer], target: TARGET, doc: "Delegate the write-up."}
  - {id: done, type: TERMINAL, reads: [answer]}
edges:
  - {from: pick, to: delegate}
  - {from: delegate, to: done}
"#;

fn child(walker: &str) -> String {
    prog(&CHILD.replace("WALKER", walker))
}

fn parent(target: &str) -> String {
    prog(&PARENT.replace("TARGET", target))
}

#[test]
fn call_runs_a_registered_target_as_a_sub_run() {
    let child = common::program(&child("Child"));
    let parent = common::program(&parent("child"));
    let out_dir = tempfile::tempdir().unwrap();
    let rt = ais_rt::Runtime::builder()
        .out_dir(out_dir.path().into())
        .program("child", child.program.clone())
        .build();
    let out = common::block_on(rt.run(&parent.program, None, ais_rt::Inputs::task("the team")));
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["answer"], "notes for the team");
    assert_eq!(
        out.steps, 3,
        "the caller's own steps: pick, delegate, done (the sub-run's are under `delegate`)"
    );
    // The sub-run's two steps count against the caller's budget: 3 + 2.
    let budget = |n: u64| {
        let rt = ais_rt::Runtime::builder()
            .out_dir(out_dir.path().into())
            .program("child", child.program.clone())
            .max_steps(n)
            .build();
        common::block_on(rt.run(&parent.program, None, ais_rt::Inputs::task("the team")))
    };
    let out = budget(4);
    assert_eq!(
        out.fault.as_ref().map(|f| f.kind),
        Some(ais_rt::FaultKind::BudgetExhausted),
        "{out:?}"
    );
    assert_eq!(budget(5).status, Status::Ok);
}

#[test]
fn call_finds_a_target_named_by_its_walker_name_in_the_program_directory() {
    let child = child("WriteUp").replace("name: t\n", "name: write_up\n");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("write_up.agir"), &child).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a program").unwrap();
    let rt = ais_rt::Runtime::builder()
        .out_dir(dir.path().into())
        .build();
    // By its walker name (as `ais!` writes a CALL of another program) and by its `name`.
    for target in ["WriteUp", "write_up"] {
        let p = common::program(&parent(target));
        let out = common::block_on(rt.run(&p.program, None, ais_rt::Inputs::task("the team")));
        assert_eq!(out.status, Status::Ok, "{target}: {out:?}");
        assert_eq!(out.report["answer"], "notes for the team");
    }
    // Two files with the name: the CALL faults naming both rather than picking one.
    std::fs::write(dir.path().join("write_up_copy.agir"), &child).unwrap();
    let p = common::program(&parent("WriteUp"));
    let out = common::block_on(rt.run(&p.program, None, ais_rt::Inputs::task("x")));
    assert_eq!(out.status, Status::Fault, "{out:?}");
    let message = out.fault.unwrap().message;
    assert!(
        message.contains("write_up.agir") && message.contains("write_up_copy.agir"),
        "{message}"
    );
}

#[test]
fn call_of_a_missing_target_faults_naming_the_instruction() {
    let text = prog(
        r#"walker:
  name: T
  carries:
    task: {type: str, role: input}
    answer: {type: str, produced_by: delegate}
nodes:
  - {id: delegate, type: CALL, owner: model, reads: [task], writes: [answer], target: nowhere.agir, doc: "Delegate."}
  - {id: done, type: TERMINAL, reads: [answer]}
edges:
  - {from: delegate, to: done}
"#,
    );
    let out = Bench::new().run(&text, "go", &[]);
    assert_eq!(out.status, Status::Fault, "{out:?}");
    let f = out.fault.unwrap();
    assert_eq!(
        (f.kind, f.instruction.as_str()),
        (FaultKind::Unsupported, "delegate")
    );
    assert!(f.message.contains("nowhere.agir"), "{}", f.message);
}

#[test]
fn a_graph_with_no_edge_out_of_a_step_halts_there_with_a_deviation() {
    let text = prog(
        r#"walker:
  name: T
  carries:
    task: {type: str, role: input}
    n: {type: int, produced_by: count}
nodes:
  - {id: count, type: CODE, owner: code, reads: [task], writes: [n], body: "len(task)"}
  - {id: done, type: TERMINAL, reads: [n]}
"#,
    );
    let out = Bench::new().run(&text, "abc", &[]);
    assert_eq!(out.steps, 1);
    assert_eq!(out.report["n"], 3);
    assert!(
        out.deviations
            .iter()
            .any(|d| d.subject == "count" && d.substituted.contains("no outgoing edge"))
    );
}
