//! The machine's speed, tracing off, with native tools:
//!
//! - `chain`: a 3-instruction chain (two native tools and the TERMINAL), per run;
//! - `loop_step`: a LOOP-driven loop of 10,000 steps (the LOOP's tool and its verdict's
//!   SENSE), reported per step;
//! - `spawn5`: a 5-way SPAWN of native DU work with its join, per run;
//! - `spawn1000`: a 1,000-sibling SPAWN of worker slots against the scripted model sleeping
//!   20 ms per answer, at parallelism 64 (ideal: 1000 / 64 × 20 ms ≈ 312 ms), per run.
//!
//! Run briefly: `cargo bench -p ais-rt --bench machine -- --warm-up-time 1 --measurement-time 3`.

use ais_core::Value;
use ais_rt::llm::ScriptedModel;
use ais_rt::{Inputs, Runtime, Status};
use ais_rt::{Tool, ToolArgs, ToolContext, ToolFuture, ToolRegistry};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::path::Path;
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

/// The CPU time this process has used (user + system, all threads), from `/proc/self/stat`:
/// on a machine shared with other work, wall-clock figures overstate the machine's own cost,
/// so each benchmark also prints CPU time per run.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// Runs `f` until about two seconds of CPU time are spent and prints the CPU time per run.
fn report_cpu<F: std::future::Future<Output = ais_rt::RunOutcome>>(
    trt: &tokio::runtime::Runtime,
    name: &str,
    per_run_units: u64,
    mut f: impl FnMut() -> F,
) {
    let Some(start) = cpu_time() else { return };
    let mut runs = 0u64;
    // Reading the clock costs microseconds: check it every `batch` runs.
    let mut batch = 1u64;
    while cpu_time().is_some_and(|t| t - start < Duration::from_secs(2)) {
        for _ in 0..batch {
            trt.block_on(f());
        }
        runs += batch;
        batch = (batch * 2).min(4096);
    }
    if let Some(end) = cpu_time() {
        let per = (end - start).as_nanos() as f64 / (runs * per_run_units) as f64;
        println!(
            "{name}: {:.3} µs CPU per {} ({runs} runs)",
            per / 1000.0,
            if per_run_units > 1 { "step" } else { "run" }
        );
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

/// A single-threaded runtime for the DU benchmarks: the machine runs one cursor, and worker
/// threads parking and waking would be measured instead of it.
fn local_rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio")
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
    let trt = local_rt();
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
    report_cpu(&trt, "chain", 1, || {
        rt.run_prepared(&prep, Inputs::task("go"))
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
    let trt = local_rt();
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
    report_cpu(&trt, "loop", steps, || {
        rt.run_prepared(&prep, Inputs::task("go"))
    });
}

fn spawn5(c: &mut Criterion) {
    let d = doc(r#"walker:
  name: Fan
  carries:
    task: {type: str, role: input}
    items: {type: list[str], role: input, default: [a, b, c, d, e]}
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
    let trt = local_rt();
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
    report_cpu(&trt, "spawn5", 1, || {
        rt.run_prepared(&prep, Inputs::task("go"))
    });
}

fn spawn1000(c: &mut Criterion) {
    let items: Vec<String> = (0..1000).map(|i| format!("t{i}")).collect();
    let d = doc(&format!(
        r#"walker:
  name: Wide
  carries:
    task: {{type: str, role: input}}
    items: {{type: list[str], role: input, default: [{}]}}
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
    // The scripted model: one response per sibling, each after 20 ms. Its responses are used up
    // by a run, so each run gets a fresh model (built outside the timed part).
    let responses: serde_json::Map<String, serde_json::Value> = (0..1000)
        .map(|i| {
            (
                format!("fan[{i}]"),
                serde_json::json!([format!("answer {i}")]),
            )
        })
        .collect();
    let model = || {
        let m = ScriptedModel::from_json(
            Path::new("bench.json"),
            serde_json::Value::Object(responses.clone()),
        )
        .expect("scripted responses")
        .with_latency(Duration::from_millis(20));
        Runtime::builder()
            .model(Arc::new(m))
            .out_dir(dir.path().into())
            .max_parallel(64)
            .build()
    };
    let trt = tokio_rt();
    let rt = model();
    let prep = rt.prepare(&d.program, Some(&d.source_map));
    let out = trt.block_on(rt.run_prepared(&prep, Inputs::task("go")));
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["results"].as_array().map(Vec::len), Some(1000));
    let mut g = c.benchmark_group("spawn1000");
    g.sample_size(10);
    g.bench_function("spawn1000_sleep20ms_par64", |b| {
        b.to_async(&trt).iter_custom(|iters| {
            let runs: Vec<Runtime> = (0..iters).map(|_| model()).collect();
            let prep = prep.clone();
            async move {
                let start = std::time::Instant::now();
                for rt in runs {
                    let out = rt.run_prepared(&prep, Inputs::task("go")).await;
                    assert_eq!(out.status, Status::Ok);
                }
                start.elapsed()
            }
        })
    });
    g.finish();
    // CPU time per run: what the machine itself spends, apart from the model's 20 ms waits.
    if let Some(start) = cpu_time() {
        let wall = std::time::Instant::now();
        for _ in 0..3 {
            let rt = model();
            let out = trt.block_on(rt.run_prepared(&prep, Inputs::task("go")));
            assert_eq!(out.status, Status::Ok);
        }
        if let Some(end) = cpu_time() {
            println!(
                "spawn1000: {:.1} ms CPU and {:.1} ms wall per run (3 runs)",
                (end - start).as_secs_f64() * 1000.0 / 3.0,
                wall.elapsed().as_secs_f64() * 1000.0 / 3.0
            );
        }
    }
}

criterion_group!(benches, chain, loop_step, spawn5, spawn1000);
criterion_main!(benches);
