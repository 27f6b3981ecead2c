//! The machine's speed, tracing off, with native tools:
//!
//! - `chain`: a 3-instruction chain (two native tools and the TERMINAL), per run;
//! - `loop_step`: a LOOP-driven loop of 10,000 steps (the LOOP's tool and its verdict's
//!   SENSE), reported per step;
//! - `spawn5`: a 5-way SPAWN of native DU work with its join, per run;
//! - `spawn1000`: a 1,000-sibling SPAWN of worker slots against a model that sleeps 20 ms per
//!   answer, at parallelism 64 (ideal: 16 waves × 20 ms ≈ 312 ms), per run.
//!
//! Run briefly: `cargo bench -p ais-rt --bench machine -- --warm-up-time 1 --measurement-time 3`.

use ais_core::Value;
use ais_rt::model::{Completion, Exchange, Model, ModelFuture, Reply, SlotRequest, Usage};
use ais_rt::tools::{Tool, ToolArgs, ToolContext, ToolFuture, ToolRegistry};
use ais_rt::{Inputs, Runtime, Status};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::sync::Arc;
use std::time::Duration;

/// `(n) -> int`: n + 1.
struct Inc;
impl Tool for Inc {
    fn call<'a>(&'a self, args: ToolArgs, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        let n = match args
            .params
            .get("n")
            .or_else(|| args.params.get_index(0).map(|(_, v)| v))
        {
            Some(Value::Int(i)) => *i,
            _ => 0,
        };
        Box::pin(std::future::ready(Ok(Value::Int(n + 1))))
    }
}

/// `(n) -> bool`: n reached the target.
struct Reached(i64);
impl Tool for Reached {
    fn call<'a>(&'a self, args: ToolArgs, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        let done =
            matches!(args.params.get_index(0).map(|(_, v)| v), Some(Value::Int(i)) if *i >= self.0);
        Box::pin(std::future::ready(Ok(Value::Bool(done))))
    }
}

/// `(item) -> str`: the item, upper-cased.
struct Upper;
impl Tool for Upper {
    fn call<'a>(&'a self, args: ToolArgs, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        let s = args
            .params
            .get_index(0)
            .and_then(|(_, v)| v.as_str())
            .unwrap_or_default()
            .to_uppercase();
        Box::pin(std::future::ready(Ok(Value::Str(s))))
    }
}

/// A model that answers every slot with its sub-task after sleeping.
struct Sleepy(Duration);
impl Model for Sleepy {
    fn name(&self) -> &str {
        "scripted:bench"
    }
    fn is_scripted(&self) -> bool {
        true
    }
    fn complete<'a>(&'a self, request: &'a SlotRequest) -> ModelFuture<'a> {
        Box::pin(async move {
            tokio::time::sleep(self.0).await;
            let value = request
                .operands
                .first()
                .map(|o| o.value.clone())
                .unwrap_or_default();
            Ok(Completion {
                reply: Reply::Value { value },
                usage: Usage::default(),
                exchange: Exchange::default(),
            })
        })
    }
}

const HEAD: &str = "---\nname: bench\ndescription: A benchmark program.\n---\n";

fn doc(body: &str) -> ais_core::agir::Document {
    ais_core::agir::read(&format!("{HEAD}{body}")).expect("the bench program reads")
}

fn runtime(tools: ToolRegistry, max_steps: u64) -> (Runtime, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let rt = Runtime::builder()
        .tools(tools)
        .out_dir(dir.path().into())
        .max_steps(max_steps)
        .max_parallel(64)
        .build();
    (rt, dir)
}

fn tokio_rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio")
}

fn chain(c: &mut Criterion) {
    let d = doc(r#"walker:
  name: Chain
  carries:
    task: {type: str, role: input}
    a: {type: int, produced_by: one}
    b: {type: int, produced_by: two}
tools:
  inc_a: {sig: "(n) -> int", surface: SENSE, serves: [one]}
  inc_b: {sig: "(n) -> int", surface: SENSE, serves: [two]}
nodes:
  - {id: one, type: CODE, owner: code, reads: [b], writes: [a]}
  - {id: two, type: CODE, owner: code, reads: [a], writes: [b]}
  - {id: done, type: TERMINAL, reads: [b]}
edges:
  - {from: one, to: two}
  - {from: two, to: done}
"#);
    let mut tools = ToolRegistry::new();
    tools.register("inc_a", Arc::new(Inc));
    tools.register("inc_b", Arc::new(Inc));
    let (rt, _dir) = runtime(tools, 10_000);
    let prep = rt.prepare(&d.program, Some(&d.source_map));
    let trt = tokio_rt();
    let out = trt.block_on(rt.run_prepared(&prep, Inputs::task("go")));
    assert_eq!(
        (out.status, out.report["b"].clone()),
        (Status::Ok, serde_json::json!(2)),
        "{out:?}"
    );
    c.bench_function("chain", |b| {
        b.to_async(&trt)
            .iter(|| rt.run_prepared(&prep, Inputs::task("go")))
    });
}

fn loop_step(c: &mut Criterion) {
    const ITER: i64 = 5_000;
    let d = doc(&format!(
        r#"walker:
  name: Loop
  carries:
    task: {{type: str, role: input}}
    n: {{type: int, produced_by: work}}
    done_yet: {{type: bool, produced_by: check}}
    rounds: {{type: int, produced_by: work}}
tools:
  inc: {{sig: "(n) -> int", surface: SENSE, serves: [work]}}
  reached: {{sig: "(n) -> bool", surface: SENSE, serves: [check]}}
nodes:
  - {{id: work, type: LOOP, owner: code, reads: [n], writes: [n], verdict: done_yet, cap: {cap}, counter: rounds}}
  - {{id: check, type: SENSE, owner: code, reads: [n], writes: [done_yet]}}
  - {{id: done, type: TERMINAL, reads: [n]}}
edges:
  - {{from: work, to: check}}
  - {{from: check, to: work}}
  - {{from: work, to: done}}
"#,
        cap = ITER + 1
    ));
    let mut tools = ToolRegistry::new();
    tools.register("inc", Arc::new(Inc));
    tools.register("reached", Arc::new(Reached(ITER)));
    let (rt, _dir) = runtime(tools, 20_000);
    let prep = rt.prepare(&d.program, Some(&d.source_map));
    let trt = tokio_rt();
    let out = trt.block_on(rt.run_prepared(&prep, Inputs::task("go")));
    assert_eq!(out.status, Status::Ok, "{out:?}");
    let steps = out.steps;
    assert!(steps >= 10_000, "{steps} steps");
    let mut g = c.benchmark_group("loop");
    g.throughput(Throughput::Elements(steps));
    g.bench_function("loop_10000_steps", |b| {
        b.to_async(&trt)
            .iter(|| rt.run_prepared(&prep, Inputs::task("go")))
    });
    g.finish();
}

fn spawn5(c: &mut Criterion) {
    let d = doc(r#"walker:
  name: Fan
  carries:
    task: {type: str, role: input}
    items: {type: list[str], default: [a, b, c, d, e]}
    results: {type: list[str], produced_by: fan}
tools:
  upper: {sig: "(items) -> str", surface: SENSE, serves: [fan]}
nodes:
  - {id: fan, type: SPAWN, owner: code, reads: [items], writes: [results], concurrency: {isolation: shared_read}}
  - {id: done, type: TERMINAL, reads: [results]}
edges:
  - {from: fan, to: done}
"#);
    let mut tools = ToolRegistry::new();
    tools.register("upper", Arc::new(Upper));
    let (rt, _dir) = runtime(tools, 10_000);
    let prep = rt.prepare(&d.program, Some(&d.source_map));
    let trt = tokio_rt();
    let out = trt.block_on(rt.run_prepared(&prep, Inputs::task("go")));
    assert_eq!(
        out.report["results"],
        serde_json::json!(["A", "B", "C", "D", "E"]),
        "{out:?}"
    );
    c.bench_function("spawn5", |b| {
        b.to_async(&trt)
            .iter(|| rt.run_prepared(&prep, Inputs::task("go")))
    });
}

fn spawn1000(c: &mut Criterion) {
    let items: Vec<String> = (0..1000).map(|i| format!("t{i}")).collect();
    let d = doc(&format!(
        r#"walker:
  name: Wide
  carries:
    task: {{type: str, role: input}}
    items: {{type: list[str], default: [{}]}}
    results: {{type: list[str], produced_by: fan}}
nodes:
  - {{id: fan, type: SPAWN, owner: code, reads: [items], writes: [results], doc: "Answer one sub-task.", concurrency: {{isolation: shared_read, max_parallel: 64}}}}
  - {{id: done, type: TERMINAL, reads: [results]}}
edges:
  - {{from: fan, to: done}}
"#,
        items.join(", ")
    ));
    let dir = tempfile::tempdir().expect("a temp dir");
    let rt = Runtime::builder()
        .model(Arc::new(Sleepy(Duration::from_millis(20))))
        .out_dir(dir.path().into())
        .max_parallel(64)
        .build();
    let prep = rt.prepare(&d.program, Some(&d.source_map));
    let trt = tokio_rt();
    let out = trt.block_on(rt.run_prepared(&prep, Inputs::task("go")));
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["results"].as_array().map(Vec::len), Some(1000));
    let mut g = c.benchmark_group("spawn1000");
    g.sample_size(10);
    g.bench_function("spawn1000_sleep20ms_par64", |b| {
        b.to_async(&trt)
            .iter(|| rt.run_prepared(&prep, Inputs::task("go")))
    });
    g.finish();
}

criterion_group!(benches, chain, loop_step, spawn5, spawn1000);
criterion_main!(benches);
