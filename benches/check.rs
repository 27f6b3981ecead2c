//! `read + check` on synthetic programs of 10,000 and 20,000 instructions (criterion).
//!
//! Run with `cargo bench --bench check`. The programs come from `support/synth.rs`: a realistic
//! mix of GEN-RAW/GEN-FILL/GEN-ENUM slots, SENSE/ACT/CODE with tools, code-owned ROUTEs with a
//! guard and a default edge, and one TERMINAL. Growth from 10k to 20k should be linear.
//!
//! `yaml-events` drains the YAML parser the reader is built on, with no tree or model built:
//! the floor under `read`.
//!
//! `many_findings` is the scale of did-you-mean and rendering (`support/many.rs`): 10,000
//! misspelled reads against 10,000 carries, 10,000 guards each misspelling one of 10,000
//! carries, and 20,000 findings on one long line rendered as text and as JSON.

use ais::{Repairs, agir, check, render};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

#[path = "support/synth.rs"]
mod synth;

#[path = "support/many.rs"]
mod many;

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

fn many_findings(c: &mut Criterion) {
    let mut group = c.benchmark_group("many_findings");
    group.sample_size(10);
    let n = 10_000;
    for (name, text) in [
        ("unknown_reads", many::unknown_reads(n)),
        ("unknown_guard_names", many::unknown_guard_names(n)),
    ] {
        let doc = agir::read(&text).expect("the benchmark program reads");
        let found = check(&doc.program, &doc.source_map, Repairs::Off);
        assert!(
            found.findings.len() >= n,
            "{name}: {}",
            found.findings.len()
        );
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new(name, n), &doc, |b, doc| {
            b.iter(|| {
                check(black_box(&doc.program), &doc.source_map, Repairs::Off)
                    .findings
                    .len()
            })
        });
    }
    let text = many::one_long_line(20_000);
    let doc = agir::read(&text).expect("the benchmark program reads");
    let checked = check(&doc.program, &doc.source_map, Repairs::Off);
    assert!(checked.findings.len() >= 20_000);
    group.throughput(Throughput::Elements(checked.findings.len() as u64));
    group.bench_function("render_one_line_human/20000", |b| {
        b.iter(|| {
            let lines = render::SourceLines::new(&text);
            checked
                .findings
                .iter()
                .map(|f| render::render_finding_in(f, &lines, "p.agir", false).len())
                .sum::<usize>()
        })
    });
    group.bench_function("render_one_line_json/20000", |b| {
        b.iter(|| {
            render::report_json(
                "p.agir",
                checked.outcome,
                &checked.findings,
                &checked.deviations,
            )
            .to_string()
            .len()
        })
    });
    group.finish();
}

criterion_group!(benches, bench, many_findings);
criterion_main!(benches);
