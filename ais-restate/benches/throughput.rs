//! Throughput: 200 concurrent runs of a 5-step program (five native tool calls, each one
//! journaled effect) through a Restate server's ingress on one endpoint, beside the same 200 on
//! the embedded runtime (no journal). Prints runs per second and p50/p99 latency.
//!
//! Needs a `restate-server` (`$AIS_RESTATE_SERVER` or on PATH): `cargo bench -p ais-restate
//! --bench throughput` (`RUNS=N` to change the count). It starts its own server on loopback with
//! a temporary data directory (killed and removed at the end, a panic included: the server is
//! killed when dropped) and serves the endpoint in process; the machine's load average is printed
//! before and after, since the figures are only as quiet as the machine. A bench target: `cargo
//! test` does not build or run it.

use ais_restate::server::{RestateServer, server_binary};
use ais_restate::{Endpoint, Ingress, RunRequest};
use ais_rt::{Inputs, Runtime, Status};
use ais_rt::{Tool, ToolArgs, ToolContext, ToolFuture, ToolRegistry};
use std::sync::Arc;
use std::time::{Duration, Instant};

const PROGRAM: &str = r#"---
name: five_steps
description: Five tool steps in a row.
---
walker:
  name: FiveSteps
  carries:
    task: {type: str, role: input}
    a: {type: str, produced_by: s1}
    b: {type: str, produced_by: s2}
    c: {type: str, produced_by: s3}
    d: {type: str, produced_by: s4}
    e: {type: str, produced_by: s5}
tools:
  t1: {sig: "(task) -> str", surface: SENSE}
  t2: {sig: "(a) -> str", surface: SENSE}
  t3: {sig: "(b) -> str", surface: SENSE}
  t4: {sig: "(c) -> str", surface: SENSE}
  t5: {sig: "(d) -> str", surface: SENSE}
nodes:
  - {id: s1, type: SENSE, owner: code, tool: t1, reads: [task], writes: [a]}
  - {id: s2, type: SENSE, owner: code, tool: t2, reads: [a], writes: [b]}
  - {id: s3, type: SENSE, owner: code, tool: t3, reads: [b], writes: [c]}
  - {id: s4, type: SENSE, owner: code, tool: t4, reads: [c], writes: [d]}
  - {id: s5, type: SENSE, owner: code, tool: t5, reads: [d], writes: [e]}
  - {id: done, type: TERMINAL, reads: [e]}
edges:
  - {from: s1, to: s2}
  - {from: s2, to: s3}
  - {from: s3, to: s4}
  - {from: s4, to: s5}
  - {from: s5, to: done}
"#;

/// Appends a dot to its one argument.
struct Dot;

impl Tool for Dot {
    fn call<'a>(&'a self, args: ToolArgs, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        let v = args
            .params
            .values()
            .next()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        Box::pin(async move { Ok(ais_core::Value::from(format!("{v}."))) })
    }
}

fn runtime() -> ais_rt::RuntimeBuilder {
    let mut tools = ToolRegistry::with_builtins();
    for t in ["t1", "t2", "t3", "t4", "t5"] {
        tools.register_idempotent(t, Arc::new(Dot));
    }
    Runtime::builder().tools(tools)
}

fn summary(what: &str, wall: Duration, mut lat: Vec<Duration>) {
    lat.sort();
    let pct = |p: f64| lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)];
    println!(
        "{what:<10} {n} runs in {wall:>8.2?}: {rps:>8.1} runs/s, p50 {p50:>9.2?}, p99 {p99:>9.2?}",
        n = lat.len(),
        rps = lat.len() as f64 / wall.as_secs_f64(),
        p50 = pct(0.50),
        p99 = pct(0.99),
    );
}

async fn on_restate(bin: &std::path::Path, runs: usize) {
    let server = RestateServer::start(bin).await.unwrap();
    let program = ais_core::agir::read(PROGRAM).unwrap().program;
    let endpoint = Endpoint::new(runtime()).program(program).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || endpoint.serve_until(listener, stopped).unwrap());
    server.register(&url).await.unwrap();
    let ingress = Ingress::new(&server.ingress_url());
    // The first run after a registration pays the server's set-up (its connection to the
    // endpoint, the deployment's schema reaching the partitions): timed apart, as the cold start.
    let t = Instant::now();
    let req = RunRequest {
        task: Some("warm".into()),
        inputs: Default::default(),
    };
    ingress.submit("five_steps", "warm-1", &req).await.unwrap();
    ingress.output("five_steps", "warm-1").await.unwrap();
    let cold = t.elapsed();
    let t = Instant::now();
    ingress.submit("five_steps", "warm-2", &req).await.unwrap();
    ingress.output("five_steps", "warm-2").await.unwrap();
    println!(
        "restate    first run after registration {cold:.2?}, the next one alone {:.2?}",
        t.elapsed()
    );
    let started = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..runs {
        let ingress = ingress.clone();
        set.spawn(async move {
            let t = Instant::now();
            let id = format!("bench-{i}");
            let req = RunRequest {
                task: Some(format!("run {i}")),
                inputs: Default::default(),
            };
            ingress.submit("five_steps", &id, &req).await.unwrap();
            let out = ingress.output("five_steps", &id).await.unwrap();
            assert_eq!(out["status"], "ok", "{out}");
            t.elapsed()
        });
    }
    let lat: Vec<Duration> = set.join_all().await;
    summary("restate", started.elapsed(), lat);
    let _ = stop.send(());
    thread.join().unwrap();
}

async fn embedded(runs: usize) {
    let doc = ais_core::agir::read(PROGRAM).unwrap();
    let rt = runtime().build();
    let prepared = rt.prepare(&doc.program, None);
    let started = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..runs {
        let (rt, prepared) = (rt.clone(), prepared.clone());
        set.spawn(async move {
            let t = Instant::now();
            let out = rt
                .run_prepared(&prepared, Inputs::task(format!("run {i}")))
                .await;
            assert_eq!(out.status, Status::Ok, "{out:?}");
            t.elapsed()
        });
    }
    let lat: Vec<Duration> = set.join_all().await;
    summary("embedded", started.elapsed(), lat);
}

fn main() {
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    let Some(bin) = server_binary() else {
        eprintln!("no restate-server: set AIS_RESTATE_SERVER (see README, `ais serve --restate`)");
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    println!("load before: {}", load());
    rt.block_on(async {
        embedded(runs).await;
        on_restate(&bin, runs).await;
    });
    println!("load after:  {}", load());
}

/// The machine's load averages (1, 5, 15 min) and its CPU count, as `/proc/loadavg` gives them.
fn load() -> String {
    let avg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let avg: Vec<&str> = avg.split_whitespace().take(3).collect();
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{} on {cpus} CPUs", avg.join(" "))
}
