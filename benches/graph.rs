//! `ais graph --format svg`'s layout time by program size (criterion): a chain of 100, 500,
//! 1,000, 2,000 and 4,000 CODE steps. Up to
//! `MAX_SVG_NODES` the SVG is laid out; past it, `Graph::svg` refuses at once (the time shown is
//! the refusal's), so no size makes `ais graph` or `ais report` wait unbounded. `mermaid` is
//! the writer with no limit, for comparison.
//!
//! Run with `cargo bench --bench graph`.

use ais::graph::{Graph, MAX_SVG_NODES};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

fn program(n: usize) -> String {
    let mut t = String::from(
        "walker:\n  carries:\n    task: {type: str, role: input}\n    k: {type: int}\nnodes:\n",
    );
    for i in 0..n {
        t.push_str(&format!(
            "  - {{id: s{i}, type: CODE, owner: code, reads: [k], writes: [k], body: \"k + 1\"}}\n"
        ));
    }
    t.push_str("  - {id: done, type: TERMINAL, reads: [k]}\nedges:\n");
    for i in 0..n {
        let to = if i + 1 == n {
            "done".to_owned()
        } else {
            format!("s{}", i + 1)
        };
        t.push_str(&format!("  - {{from: s{i}, to: {to}}}\n"));
    }
    t
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("svg_layout");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(6));
    for n in [100usize, 500, 1_000, 2_000, 4_000] {
        let g = Graph::from_agir(&program(n), &[], &mut |_| None).expect("reads");
        let laid_out = g.nodes.len() <= MAX_SVG_NODES;
        let name = if laid_out { "svg" } else { "svg_refused" };
        group.bench_with_input(BenchmarkId::new(name, n), &g, |b, g| {
            b.iter(|| black_box(g.svg().map(|s| s.len()).unwrap_or(0)));
        });
        group.bench_with_input(BenchmarkId::new("mermaid", n), &g, |b, g| {
            b.iter(|| black_box(g.mermaid().len()));
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
