//! The cost of one Python `body` tool call (`return n + 1`), end to end through
//! [`PythonTool::call`]:
//!
//! - `warm`: the calls of one run (one [`ToolContext`]): each is served by the run's warm worker,
//!   in a fresh child the worker forked for it ahead of the call;
//! - `cold`: a fresh context per call, so every call starts its own interpreter — the cost every
//!   call paid before workers were warm.
//!
//! Run briefly: `cargo bench -p ais-rt --bench python_call -- --warm-up-time 1 --measurement-time 5`.

use ais_core::Value;
use ais_rt::{PythonTool, Tool, ToolArgs, ToolContext};
use criterion::{Criterion, criterion_group, criterion_main};

fn args(n: i64) -> ToolArgs {
    let mut a = ToolArgs::default();
    a.params.insert("n".into(), Value::Int(n));
    a
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let dir = tempfile::tempdir().expect("a temp dir");
    let tool = PythonTool::new("inc", "return n + 1", Some(vec!["n".into()]));
    let ctx = ToolContext::new(dir.path());
    let mut group = c.benchmark_group("python_body_call");
    group.sample_size(20);
    group.bench_function("warm", |b| {
        b.to_async(&rt).iter(|| async {
            let v = tool.call(args(1), &ctx).await.expect("the call succeeds");
            assert_eq!(v, Value::Int(2));
        });
    });
    group.sample_size(10);
    group.bench_function("cold", |b| {
        b.to_async(&rt).iter(|| async {
            let fresh = ToolContext::new(dir.path());
            let v = tool.call(args(1), &fresh).await.expect("the call succeeds");
            assert_eq!(v, Value::Int(2));
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
