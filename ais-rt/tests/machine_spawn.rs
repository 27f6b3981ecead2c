//! SPAWN (§4.4.4): fan-out sources, real concurrency under a parallelism limit, each isolation
//! mode, the join into a list or a text, and the structural fan-out of the reference programs.

use crate::common;

use ais_core::Value;
use ais_rt::{FaultKind, Status};
use ais_rt::{Tool, ToolArgs, ToolContext, ToolFuture};
use common::{Bench, arg, tool};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn fan(isolation: &str, results_ty: &str, extra: &str) -> String {
    format!(
        r#"---
name: t
description: A fan-out.
---
walker:
  name: T
  carries:
    task: {{type: str, role: input}}
    items: {{type: list[str], produced_by: make}}
    results: {{type: {results_ty}, produced_by: fan}}
tools:
  work: {{sig: "(items) -> str", surface: ACT, serves: [fan]}}
nodes:
  - {{id: make, type: CODE, owner: code, reads: [task], writes: [items], body: "task.split(',')"}}
  - {{id: fan, type: SPAWN, owner: code, reads: [items], writes: [results], concurrency: {{isolation: {isolation}{extra}}}}}
  - {{id: done, type: TERMINAL, reads: [results]}}
edges:
  - {{from: make, to: fan}}
  - {{from: fan, to: done}}
"#
    )
}

/// Writes `<item>.txt` relative to where the sibling may write, and returns the item shouted.
fn writer() -> Arc<common::FnTool> {
    tool(|a, ctx| {
        let item = arg(a, "items").to_owned();
        let dir = ctx.scratch.clone().unwrap_or_else(|| ctx.root.clone());
        std::fs::write(dir.join(format!("{item}.txt")), &item)
            .map_err(|e| common::failed(&e.to_string(), ""))?;
        Ok(Value::from(item.to_uppercase()))
    })
}

#[test]
fn private_write_siblings_write_only_to_their_own_scratch_directories() {
    let bench = Bench::new().with("work", writer());
    let out = bench.run(&fan("private_write", "list[str]", ""), "a,b,c", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["results"], serde_json::json!(["A", "B", "C"]));
    let root = bench.out.path();
    for (i, item) in ["a", "b", "c"].iter().enumerate() {
        let own = root.join(format!(".ais/spawn/fan/{i}/{item}.txt"));
        assert_eq!(std::fs::read_to_string(&own).unwrap(), *item);
        assert!(
            !root.join(format!("{item}.txt")).exists(),
            "nothing lands in the shared root"
        );
        for j in 0..3 {
            if j != i {
                assert!(!root.join(format!(".ais/spawn/fan/{j}/{item}.txt")).exists());
            }
        }
    }
}

#[test]
fn orchestrator_owned_effects_are_applied_once_after_the_barrier() {
    let bench = Bench::new().with("work", writer());
    let out = bench.run(&fan("orchestrator_owned", "list[str]", ""), "a,b", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    let root = bench.out.path();
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "a");
    assert_eq!(std::fs::read_to_string(root.join("b.txt")).unwrap(), "b");
    assert!(
        !root.join(".ais/stage/fan/0").exists(),
        "the staging area is emptied"
    );
}

#[test]
fn shared_read_siblings_see_one_frozen_snapshot_and_no_scratch() {
    let seen = tool(|a, ctx| {
        assert!(ctx.scratch.is_none());
        Ok(Value::from(format!(
            "{}:{}",
            arg(a, "items"),
            arg(a, "label")
        )))
    });
    let text = fan("shared_read", "str", "").replace(
        "work: {sig: \"(items) -> str\"",
        "work: {sig: \"(items, label) -> str\"",
    );
    let text = text
        .replace("    results: {type: str, produced_by: fan}", "    results: {type: str, produced_by: fan}\n    label: {type: str, produced_by: make}")
        .replace("writes: [items], body: \"task.split(',')\"", "writes: [items], body: \"task.split(',')\"}\n  - {id: name_it, type: CODE, owner: code, reads: [task], writes: [label], body: \"'v1'\"")
        .replace("reads: [items], writes: [results]", "reads: [items, label], writes: [results]")
        .replace("  - {from: make, to: fan}", "  - {from: make, to: name_it}\n  - {from: name_it, to: fan}");
    let out = Bench::new().with("work", seen).run(&text, "x,y", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    // A text carry joins the siblings' results one per line, in sibling order.
    assert_eq!(out.report["results"], "x:v1\ny:v1");
}

/// An async tool that sleeps and records how many calls ran at once.
struct Slow {
    now: AtomicUsize,
    peak: AtomicUsize,
}

impl Tool for Slow {
    fn call<'a>(&'a self, args: ToolArgs, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
            self.peak.fetch_max(n, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(60)).await;
            self.now.fetch_sub(1, Ordering::SeqCst);
            Ok(args.params.get("items").cloned().unwrap_or_default())
        })
    }
}

#[test]
fn siblings_run_concurrently_up_to_the_declared_parallelism() {
    let slow = Arc::new(Slow {
        now: AtomicUsize::new(0),
        peak: AtomicUsize::new(0),
    });
    let mut bench = Bench::new();
    bench.tools.register("work", slow.clone());
    let start = Instant::now();
    let out = bench.run(
        &fan("shared_read", "list[str]", ", max_parallel: 3"),
        "a,b,c,d,e,f",
        &[],
    );
    let took = start.elapsed();
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(
        out.report["results"],
        serde_json::json!(["a", "b", "c", "d", "e", "f"])
    );
    assert_eq!(
        slow.peak.load(Ordering::SeqCst),
        3,
        "three at once, never more"
    );
    assert!(
        took >= Duration::from_millis(120),
        "two waves of 60 ms: {took:?}"
    );
    assert!(
        took < Duration::from_millis(360),
        "not one after another: {took:?}"
    );
}

#[test]
fn a_literal_spawn_list_gives_each_sibling_its_sub_task() {
    let text = r#"---
name: t
description: Fixed branches.
---
walker:
  name: T
  carries:
    task: {type: str, role: input}
    parts: {type: list[str], produced_by: fan}
tools:
  part: {sig: "(task) -> str", surface: SENSE, serves: [fan]}
nodes:
  - {id: fan, type: SPAWN, owner: code, writes: [parts], concurrency: {isolation: shared_read, spawn: [north, south]}}
  - {id: done, type: TERMINAL, reads: [parts]}
edges:
  - {from: fan, to: done}
"#;
    let part = tool(|a, _| Ok(Value::from(format!("<{}>", arg(a, "task")))));
    let out = Bench::new().with("part", part).run(text, "map", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(
        out.report["parts"],
        serde_json::json!(["<north>", "<south>"])
    );
}

#[test]
fn a_failed_sibling_is_an_error_value_in_the_join_and_unrouted_makes_the_run_error() {
    let work = tool(|a, _| match arg(a, "items") {
        "bad" => Err(common::failed("cannot do bad", "")),
        other => Ok(Value::from(other.to_owned())),
    });
    let out = Bench::new()
        .with("work", work)
        .run(&fan("shared_read", "list", ""), "ok,bad", &[]);
    assert_eq!(out.status, Status::Error, "{out:?}");
    assert_eq!(out.report["results"][0], "ok");
    assert_eq!(out.report["results"][1]["ok"], false);
    // The failed sibling is named as a person counts: the second is sibling 2.
    let failed = &out.failures[0].message;
    assert!(failed.contains("sibling 2: cannot do bad"), "{failed}");
}

#[test]
fn a_structural_fan_out_runs_every_branch_before_the_join() {
    let text = r#"---
name: t
description: Branches that meet.
---
walker:
  name: T
  carries:
    task: {type: str, role: input}
    a_ok: {type: bool, produced_by: check_a}
    b_ok: {type: bool, produced_by: check_b}
    all_ok: {type: bool, produced_by: gate}
nodes:
  - {id: fan, type: SPAWN, owner: code}
  - {id: check_a, type: CODE, owner: code, reads: [task], writes: [a_ok], body: "len(task) > 0"}
  - {id: check_b, type: CODE, owner: code, reads: [task], writes: [b_ok], body: "len(task) > 1"}
  - {id: gate, type: CODE, owner: code, reads: [a_ok, b_ok], writes: [all_ok], body: "a_ok and b_ok"}
  - {id: done, type: TERMINAL, reads: [all_ok]}
edges:
  - {from: fan, to: check_a}
  - {from: fan, to: check_b}
  - {from: check_a, to: gate}
  - {from: check_b, to: gate}
  - {from: gate, to: done}
"#;
    let out = Bench::new().run(text, "xy", &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["all_ok"], true);
    assert_eq!(out.report["a_ok"], true);
    assert_eq!(out.report["b_ok"], true);
    assert_eq!(out.steps, 5);
}

#[test]
fn siblings_count_toward_the_step_budget_and_have_a_cap() {
    let counter = Arc::new(AtomicUsize::new(0));
    let seen = counter.clone();
    let work = tool(move |a, _| {
        seen.fetch_add(1, Ordering::SeqCst);
        Ok(Value::from(arg(a, "items").to_owned()))
    });
    let items: Vec<String> = (0..50).map(|i| i.to_string()).collect();
    let task = items.join(",");
    // 50 siblings in a budget of 20 steps: the fan-out alone would overrun it.
    let mut bench = Bench::new().with("work", work.clone());
    bench.max_steps = 20;
    let out = bench.run(&fan("shared_read", "list[str]", ""), &task, &[]);
    assert_eq!(out.status, Status::Fault, "{out:?}");
    let fault = out.fault.as_ref().unwrap();
    assert!(
        fault.message.contains("forks 50 siblings"),
        "{}",
        fault.message
    );
    assert_eq!(counter.load(Ordering::SeqCst), 0, "no sibling ran");
    // Each sibling is one step of the budget: three steps and 50 siblings need 53. The
    // siblings are sub-steps of the SPAWN's step, not numbered among the run's steps.
    bench.max_steps = 52;
    let out = bench.run(&fan("shared_read", "list[str]", ""), &task, &[]);
    assert_eq!(
        out.fault.as_ref().map(|f| f.kind),
        Some(FaultKind::BudgetExhausted),
        "{out:?}"
    );
    assert!(
        out.fault
            .as_ref()
            .unwrap()
            .message
            .contains("2 steps and 50 SPAWN siblings"),
        "{out:?}"
    );
    bench.max_steps = 53;
    let out = bench.run(&fan("shared_read", "list[str]", ""), &task, &[]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.steps, 3, "{out:?}");
    // Past the sibling cap: a fault naming the flag, nothing run.
    counter.store(0, Ordering::SeqCst);
    let rt = bench.runtime_with(|b| b.max_siblings(10));
    let doc = common::program(&fan("shared_read", "list[str]", ""));
    let out = common::block_on(rt.run(&doc.program, None, ais_rt::Inputs::task(task.clone())));
    assert_eq!(out.status, Status::Fault, "{out:?}");
    assert!(out.fault.unwrap().message.contains("--max-siblings"));
    assert_eq!(counter.load(Ordering::SeqCst), 0);
}
