//! What a program written with `ais!` costs to run, against the same program read from its
//! `.agir` text (the macro's `AGIR`), with the same native tool adapters in the registry
//! (`Chain::tools()`: the adapters the macro generated, found by name as a `.agir` program's
//! tools are). No model: every step is DU work.
//!
//! - `native_step/{macro,agir}`: one run of the prepared program (two native tool steps and
//!   the TERMINAL) — the per-run cost of the machine with the macro's adapters;
//! - `typed_run/macro`: `Chain::run(ChainInput { .. }, &rt)`, the typed API (it prepares the
//!   program — check, lower, resolve — on each call, then converts the input and the report
//!   through serde), against `typed_run/agir`: `rt.run(&program, None, Inputs::task(..))`,
//!   which also prepares on each call.
//!
//! Run briefly: `cargo bench --bench macro_run -- --warm-up-time 1 --measurement-time 3`.
//! Measured on the 2-core development machine under load: `native_step` 1.64 µs (macro) and
//! 1.67 µs (`.agir`) per run; `typed_run` about 50 µs on both paths (within noise), nearly all
//! of it the preparation both paths repeat per call.

use ais::ais;
use ais::rt::{Inputs, Status};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

ais! {
    /// Count the task's words and describe the count.
    program Chain {
        carries { task: str = input, words: int, label: str }
        #[surface(SENSE)]
        tool count_words(task: &str) -> i64 { task.split_whitespace().count() as i64 }
        #[surface(ACT)]
        tool describe(words: i64) -> String { format!("{words} words") }
        measure: SENSE count_words(task) -> words;
        say: ACT describe(words) -> label;
        done: TERMINAL(label);
        measure -> say -> done;
    }
}

const TASK: &str = "count the words of this task";

fn bench(c: &mut Criterion) {
    let trt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime");
    let out_dir = tempfile::tempdir().expect("a temporary directory");
    let rt = Chain::runtime().out_dir(out_dir.path().into()).build();
    let from_agir = ais::agir::read(Chain::AGIR)
        .expect("the macro's AG-IR reads")
        .program;

    let prep_macro = rt.prepare(Chain::program(), None);
    let prep_agir = rt.prepare(&from_agir, None);
    for prep in [&prep_macro, &prep_agir] {
        let out = trt.block_on(rt.run_prepared(prep, Inputs::task(TASK)));
        assert_eq!(out.status, Status::Ok, "{out:?}");
        assert_eq!(out.report["label"], serde_json::json!("6 words"));
    }
    let report = trt
        .block_on(Chain::run(ChainInput { task: TASK.into() }, &rt))
        .expect("the typed run succeeds");
    assert_eq!(report.label.as_deref(), Some("6 words"));

    let mut group = c.benchmark_group("native_step");
    group.bench_function("macro", |b| {
        b.iter(|| trt.block_on(rt.run_prepared(black_box(&prep_macro), Inputs::task(TASK))))
    });
    group.bench_function("agir", |b| {
        b.iter(|| trt.block_on(rt.run_prepared(black_box(&prep_agir), Inputs::task(TASK))))
    });
    group.finish();

    let mut group = c.benchmark_group("typed_run");
    group.bench_function("macro", |b| {
        b.iter(|| trt.block_on(Chain::run(ChainInput { task: TASK.into() }, black_box(&rt))))
    });
    group.bench_function("agir", |b| {
        b.iter(|| trt.block_on(rt.run(black_box(&from_agir), None, Inputs::task(TASK))))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
