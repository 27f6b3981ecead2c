//! `read + check` on synthetic programs of 10,000 and 20,000 instructions (criterion).
//!
//! Run with `cargo bench --bench check`. The programs come from `support/synth.rs`: a realistic
//! mix of GEN-RAW/GEN-FILL/GEN-ENUM slots, SENSE/ACT/CODE with tools, code-owned ROUTEs with a
//! guard and a default edge, and one TERMINAL. Growth from 10k to 20k should be linear.
//!
//! `yaml-events` drains the YAML parser the reader is built on, with no tree or model built:
//! the floor under `read`.

use ais::core::{Repairs, agir, check};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

#[path = "support/synth.rs"]
mod synth;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("check");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(8));
    group.warm_up_time(Duration::from_secs(2));
    for n in [10_000usize, 20_000] {
        let text = synth::program(n);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("yaml-events", n), &text, |b, text| {
            b.iter(|| {
                granit_parser::Parser::new_from_str(black_box(text))
                    .take_while(Result::is_ok)
                    .count()
            })
        });
        group.bench_with_input(BenchmarkId::new("read", n), &text, |b, text| {
            b.iter(|| agir::read(black_box(text)).map(|d| d.program.instructions().len()))
        });
        group.bench_with_input(BenchmarkId::new("read+check", n), &text, |b, text| {
            b.iter(|| {
                agir::read(black_box(text)).map(|doc| {
                    check(&doc.program, &doc.source_map, Repairs::Off)
                        .findings
                        .len()
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
