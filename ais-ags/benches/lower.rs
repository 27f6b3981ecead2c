//! Lowering an AGS graph into the program a harness run executes, by graph size (criterion):
//! a generated graph of 100, 1,000 and 5,000 nodes — a chain of task nodes with params, inputs
//! read from the node before, review checkpoints with a `when`, and an approve or review gate
//! every 25 nodes — imported and lowered ([`ais_ags::lower_for_harness`]), and the harness's
//! native tools listed ([`ais_ags::harness_tools`], what `ais run` registers).
//!
//! Lowering used to read the graph back from JSON once per node, so its time grew with the
//! square of the graph; it is now near linear. A size too slow for criterion's ten samples can
//! be timed once: `AIS_BENCH_LOWER_ONCE=5000 cargo bench -p ais-ags --bench lower`.
//!
//! Run with `cargo bench -p ais-ags --bench lower`.

use ais_ags::Graph;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::{Map, Value as Json, json};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The id of node `i`.
fn id(i: usize) -> String {
    format!("n{i:05}")
}

/// A checked graph of `n` nodes in a chain.
fn graph(n: usize) -> Graph {
    let mut nodes = Map::new();
    for i in 0..n {
        let mut node = if i % 25 == 24 {
            let mode = if i % 50 == 49 { "review" } else { "approve" };
            json!({"type": "gate", "title": format!("Gate {i}"), "description": "Approve the work so far.",
                   "gate": {"mode": mode, "prompt": "Go on?"}})
        } else {
            let mut task = json!({"title": format!("Step {i}"), "description": "Do the step.",
                "outputs": {"out": {"type": "string", "description": "What it made."}},
                "success": {"criteria": [{"id": "made", "kind": "artifact_present", "output": "out", "description": "It made something."}]}});
            if i % 10 == 1 {
                task["inputs"] = json!({"topic": {"type": "string", "description": "The topic.", "from": "params.topic"}});
            }
            if i % 20 == 3 {
                task["human"] = json!([{"id": "look", "at": "after_outputs", "mode": "review",
                                        "prompt": "Look at it.", "when": "params.careful"}]);
            }
            task
        };
        if i > 0 {
            node["depends_on"] = json!([id(i - 1)]);
        }
        nodes.insert(id(i), node);
    }
    let doc = json!({
        "ags_version": "1.0", "kind": "AgenticGraph", "id": "bench", "title": "Bench",
        "objective": "A long chain.", "entrypoints": [id(0)],
        "params": {"topic": {"type": "string", "description": "The topic.", "default": "x"},
                   "careful": {"type": "boolean", "description": "Look closely.", "default": false}},
        "nodes": Json::Object(nodes),
    });
    let checked = ais_ags::check_text(&doc.to_string(), None);
    checked
        .graph
        .unwrap_or_else(|| panic!("the generated graph checks: {:?}", checked.findings))
}

/// Imports and lowers `g`: the program's instruction count and the reads of its instructions.
fn lower(g: &Graph) -> (usize, usize) {
    let mut program = ais_ags::import(g).expect("imports");
    ais_ags::lower_for_harness(g, &mut program, false);
    let nodes = program.nodes.unwrap_or_default();
    (nodes.len(), nodes.iter().map(|i| i.reads.len()).sum())
}

fn bench(c: &mut Criterion) {
    if let Some(n) = std::env::var("AIS_BENCH_LOWER_ONCE")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        let g = graph(n);
        let start = Instant::now();
        let imported = black_box(ais_ags::import(&g).expect("imports"));
        let import = start.elapsed();
        let start = Instant::now();
        let (len, reads) = black_box(lower(&g));
        let lowered = start.elapsed();
        println!(
            "import/{n} (once): {:.3} s, {} instructions",
            import.as_secs_f64(),
            imported.nodes.map_or(0, |n| n.len())
        );
        let start = Instant::now();
        let tools = black_box(ais_ags::harness_tools(&g).len());
        println!(
            "lower/{n} (once): {:.3} s, {len} instructions reading {reads} carries; tools/{n} (once): {:.3} s, {tools} tools",
            lowered.as_secs_f64(),
            start.elapsed().as_secs_f64()
        );
        return;
    }
    let mut group = c.benchmark_group("ags_harness");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(5));
    for n in [100usize, 1_000, 5_000] {
        let g = graph(n);
        group.bench_with_input(BenchmarkId::new("lower", n), &g, |b, g| {
            b.iter(|| black_box(lower(g)));
        });
        group.bench_with_input(BenchmarkId::new("tools", n), &g, |b, g| {
            b.iter(|| black_box(ais_ags::harness_tools(g).len()));
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
