//! Evaluating typical guards and CODE bodies against a carry file (goal: well under a
//! microsecond per guard evaluation), and the one-time cost of parsing and checking one.

use ais_core::expr::{self, Limits, TypeEnv};
use ais_core::{Type, Value};
use criterion::{Criterion, criterion_group, criterion_main};
use indexmap::IndexMap;
use std::hint::black_box;

/// A carry file of a typical size: twenty carries, a few of them sizeable.
fn fixture() -> (TypeEnv, IndexMap<String, Value>) {
    let mut env = TypeEnv::new();
    env.add_enum("Op", ["merge", "split", "keep"].map(str::to_owned));
    let mut carries = IndexMap::new();
    let mut add = |name: &str, ty: &str, v: Value| {
        env.add_carry(name, &Type::parse(ty));
        carries.insert(name.to_owned(), v);
    };
    add(
        "task",
        "str",
        Value::from("Rename the files in the inbox by date."),
    );
    add("plan_ok", "bool", Value::Bool(true));
    add("op", "Op", Value::from("split"));
    add("round", "int", Value::Int(2));
    add("errors", "str", Value::from(""));
    add("loud", "str", Value::from("ALPHA,BETA,GAMMA,DELTA"));
    add(
        "rows",
        "list[str]",
        Value::List((0..50).map(|i| Value::Str(format!("row {i}"))).collect()),
    );
    for i in 0..13 {
        add(&format!("c{i}"), "str", Value::Str(format!("value {i}")));
    }
    (env, carries)
}

fn guards(c: &mut Criterion) {
    let (env, carries) = fixture();
    let limits = Limits::default();
    // The floor: looking the carry up and comparing it by hand.
    c.bench_function("baseline: carries[\"plan_ok\"] == true by hand", |b| {
        b.iter(|| black_box(&carries).get(black_box("plan_ok")) == Some(&Value::Bool(true)))
    });
    for src in [
        "plan_ok",
        "plan_ok == true",
        "op == Op.merge",
        "round < 3",
        "op in {Op.merge, Op.split}",
        "round < 3 and errors != \"\"",
    ] {
        let guard = expr::compile_str(src, &env, &limits).unwrap();
        c.bench_function(&format!("guard: {src}"), |b| {
            b.iter(|| black_box(&guard).eval_bool(black_box(&carries)))
        });
    }
}

fn bodies(c: &mut Criterion) {
    let (env, carries) = fixture();
    let limits = Limits::default();
    for src in [
        "len(rows)",
        "loud.split(\",\")",
        "loud.lower().replace(\",\", \";\")",
    ] {
        let body = expr::compile_str(src, &env, &limits).unwrap();
        c.bench_function(&format!("body: {src}"), |b| {
            b.iter(|| black_box(&body).eval(black_box(&carries)))
        });
    }
}

fn compile(c: &mut Criterion) {
    let (env, _) = fixture();
    let limits = Limits::default();
    c.bench_function("parse and check: round < 3 and errors != \"\"", |b| {
        b.iter(|| expr::compile_str(black_box("round < 3 and errors != \"\""), &env, &limits))
    });
}

criterion_group!(benches, guards, bodies, compile);
criterion_main!(benches);
