//! Checking cost against program size: a generated pipeline of `n` instructions (model slots,
//! code steps with tools, guarded routes, knowledge) checked at several sizes, and one whose code
//! steps bind fields of object-typed carries (`check_objects`). The time per
//! instruction should stay flat (linear checking); 10,000 instructions should check in well
//! under 100 ms in release. Programs with many findings (did-you-mean and rendering at scale)
//! are benchmarked by the root's `cargo bench --bench check` (`many_findings`).

use ais_core::{
    Carry, ContentKind, Edge, Field, Instruction, Knowledge, Opcode, Owner, Program, Repairs, Role,
    SourceMap, Tool, ToolSurface, Type, TypeDecl, TypeKind, Value, Walker, check,
};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

/// A valid program of about `n` instructions: blocks of (slot, code step, route) ending in a
/// TERMINAL, every route guarded on a bool with a default edge.
fn generate(n: usize) -> Program {
    let blocks = n.max(4) / 3;
    let mut carries = vec![Carry {
        name: "task".into(),
        ty: Some(Type::Str),
        role: Some(Role::Input),
        ..Carry::default()
    }];
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    let mut tools = Vec::new();
    let mut knowledge = Vec::new();
    let mut prev_text = "task".to_owned();
    for b in 0..blocks {
        let (draft, check, gate) = (
            format!("draft_{b}"),
            format!("check_{b}"),
            format!("gate_{b}"),
        );
        let text = format!("text_{b}");
        let ok = format!("ok_{b}");
        carries.push(Carry {
            name: text.clone(),
            ty: Some(Type::Str),
            produced_by: Some(draft.clone()),
            ..Carry::default()
        });
        carries.push(Carry {
            name: ok.clone(),
            ty: Some(Type::Bool),
            produced_by: Some(check.clone()),
            ..Carry::default()
        });
        nodes.push(Instruction {
            id: draft.clone(),
            opcode: Opcode::GenRaw,
            reads: vec![prev_text.clone()],
            writes: vec![text.clone()],
            doc: Some(format!("Write section {b}.")),
            ..Instruction::default()
        });
        nodes.push(Instruction {
            id: check.clone(),
            opcode: Opcode::Sense,
            owner: Some(Owner::Code),
            tool: Some(format!("verify_{b}")),
            reads: vec![text.clone()],
            writes: vec![ok.clone()],
            ..Instruction::default()
        });
        nodes.push(Instruction {
            id: gate.clone(),
            opcode: Opcode::Route,
            owner: Some(Owner::Code),
            reads: vec![ok.clone()],
            ..Instruction::default()
        });
        tools.push(Tool {
            name: format!("verify_{b}"),
            sig: Some(format!("({text}: str) -> bool")),
            surface: Some(ToolSurface::Sense),
            body: Some(format!(
                "def verify_{b}({text}):\n    return bool({text})\n"
            )),
            ..Tool::default()
        });
        knowledge.push(Knowledge {
            name: format!("style_{b}"),
            resident_on: vec![draft.clone()],
            content: vec![(ContentKind::Template, Value::Str("Short sentences.".into()))],
            ..Knowledge::default()
        });
        let next = if b + 1 < blocks {
            format!("draft_{}", b + 1)
        } else {
            "done".into()
        };
        edges.push(Edge {
            from: draft,
            to: check.clone(),
            ..Edge::default()
        });
        edges.push(Edge {
            from: check,
            to: gate.clone(),
            ..Edge::default()
        });
        edges.push(Edge {
            from: gate.clone(),
            to: next.clone(),
            guard: Some(format!("{ok} == true")),
            ..Edge::default()
        });
        edges.push(Edge {
            from: gate,
            to: next,
            ..Edge::default()
        });
        prev_text = text;
    }
    nodes.push(Instruction {
        id: "done".into(),
        opcode: Opcode::Terminal,
        reads: vec![prev_text],
        ..Instruction::default()
    });
    Program {
        name: Some("generated".into()),
        description: Some("A generated pipeline.".into()),
        tools: Some(tools),
        knowledge: Some(knowledge),
        walker: Some(Walker {
            name: Some("Generated".into()),
            carries: Some(carries),
            ..Walker::default()
        }),
        nodes: Some(nodes),
        edges: Some(edges),
        ..Program::default()
    }
}

/// A valid program of about `n` instructions in which every code step binds a field of an
/// object-typed carry (rule 2 of §7.1): blocks of (GEN-FILL writing `spec_b: Args`, CODE whose
/// tool takes `width`). Rule 2 may bind a field of any carry of the module, so this is where a
/// binder that scans the carries per instruction goes quadratic.
fn generate_objects(n: usize) -> Program {
    let blocks = n.max(4) / 2;
    let mut carries = vec![Carry {
        name: "task".into(),
        ty: Some(Type::Str),
        role: Some(Role::Input),
        ..Carry::default()
    }];
    let (mut nodes, mut edges, mut tools) = (Vec::new(), Vec::new(), Vec::new());
    for b in 0..blocks {
        let (make, render) = (format!("make_{b}"), format!("render_{b}"));
        let (spec, out) = (format!("spec_{b}"), format!("out_{b}"));
        carries.push(Carry {
            name: spec.clone(),
            ty: Some(Type::Named("Args".into())),
            produced_by: Some(make.clone()),
            ..Carry::default()
        });
        carries.push(Carry {
            name: out.clone(),
            ty: Some(Type::Str),
            produced_by: Some(render.clone()),
            ..Carry::default()
        });
        nodes.push(Instruction {
            id: make.clone(),
            opcode: Opcode::GenFill,
            reads: vec!["task".into()],
            writes: vec![spec.clone()],
            doc: Some(format!("Plan section {b}.")),
            ..Instruction::default()
        });
        nodes.push(Instruction {
            id: render.clone(),
            opcode: Opcode::Code,
            owner: Some(Owner::Code),
            tool: Some(render.clone()),
            reads: vec![spec],
            writes: vec![out],
            ..Instruction::default()
        });
        tools.push(Tool {
            name: render.clone(),
            sig: Some("(width: int) -> str".into()),
            surface: Some(ToolSurface::Sense),
            body: Some(format!("def {render}(width):\n    return str(width)\n")),
            ..Tool::default()
        });
        let next = if b + 1 < blocks {
            format!("make_{}", b + 1)
        } else {
            "done".into()
        };
        edges.push(Edge {
            from: make,
            to: render.clone(),
            ..Edge::default()
        });
        edges.push(Edge {
            from: render,
            to: next,
            ..Edge::default()
        });
    }
    nodes.push(Instruction {
        id: "done".into(),
        opcode: Opcode::Terminal,
        reads: vec![format!("out_{}", blocks - 1)],
        ..Instruction::default()
    });
    Program {
        name: Some("generated_objects".into()),
        description: Some("A generated pipeline over object carries.".into()),
        types: Some(vec![TypeDecl {
            name: "Args".into(),
            kind: TypeKind::Object(vec![Field {
                name: "width".into(),
                ty: Some(Type::Int),
                ..Field::default()
            }]),
            ..TypeDecl::default()
        }]),
        tools: Some(tools),
        walker: Some(Walker {
            name: Some("GeneratedObjects".into()),
            carries: Some(carries),
            ..Walker::default()
        }),
        nodes: Some(nodes),
        edges: Some(edges),
        ..Program::default()
    }
}

fn bench(c: &mut Criterion) {
    let map = SourceMap::new();
    let mut group = c.benchmark_group("check");
    group.sample_size(10);
    for n in [1_000, 5_000, 10_000, 20_000] {
        let p = generate(n);
        let count = p.instructions().len() as u64;
        group.throughput(Throughput::Elements(count));
        group.bench_with_input(BenchmarkId::from_parameter(n), &p, |b, p| {
            b.iter(|| check(black_box(p), &map, Repairs::Off))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("check_objects");
    group.sample_size(10);
    for n in [10_000, 20_000] {
        let p = generate_objects(n);
        group.throughput(Throughput::Elements(p.instructions().len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &p, |b, p| {
            b.iter(|| check(black_box(p), &map, Repairs::Off))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
