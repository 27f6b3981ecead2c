//! `ais graph --format svg`'s layout time by program size (criterion): a chain of 100, 500, 800,
//! 1,000 and 2,000 CODE steps laid out whatever the limit (`Graph::svg_unbounded`), and the
//! refusal `Graph::svg` gives past `MAX_SVG_NODES` (at 4,000), so no size makes `ais graph` or
//! `ais report` wait unbounded. `mermaid` is the writer with no limit, for comparison. The
//! layout of 4,000 steps takes minutes, more than criterion's ten samples can wait for: with
//! `AIS_BENCH_GRAPH_4000=1` it is timed once and printed.
//!
//! Run with `cargo bench --bench graph`.

use ais::graph::{Graph, MAX_SVG_NODES};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::{Duration, Instant};

#[path = "../tests/support/chain.rs"]
mod chain;

fn graph(n: usize) -> Graph {
    Graph::from_agir(&chain::long_program(n), &[], &mut |_| None).expect("reads")
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("svg_layout");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(6));
    for n in [100usize, 500, 800, 1_000, 2_000] {
        let g = graph(n);
        group.bench_with_input(BenchmarkId::new("svg", n), &g, |b, g| {
            b.iter(|| black_box(g.svg_unbounded().len()));
        });
        group.bench_with_input(BenchmarkId::new("mermaid", n), &g, |b, g| {
            b.iter(|| black_box(g.mermaid().len()));
        });
    }
    let big = graph(4_000);
    assert!(big.nodes.len() > MAX_SVG_NODES);
    group.bench_with_input(BenchmarkId::new("svg_refused", 4_000), &big, |b, g| {
        b.iter(|| black_box(g.svg().is_err()));
    });
    group.bench_with_input(BenchmarkId::new("mermaid", 4_000), &big, |b, g| {
        b.iter(|| black_box(g.mermaid().len()));
    });
    group.finish();
    if std::env::var("AIS_BENCH_GRAPH_4000").is_ok_and(|v| v == "1") {
        let start = Instant::now();
        let len = black_box(big.svg_unbounded().len());
        println!(
            "svg_layout/svg/4000 (one layout): {:.1} s, {len} bytes",
            start.elapsed().as_secs_f64()
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
