//! Reading and writing a 10,000-instruction AG-IR program (the `ais check` budget is 100 ms in
//! all; reading should take well under 50 ms).

use ais_core::agir::{read, write};
use criterion::{Criterion, criterion_group, criterion_main};
use std::fmt::Write as _;
use std::hint::black_box;

/// A pipeline of `n` instructions with a carry and an edge per step, and `tools` tools.
fn program_text(n: usize, tools: usize) -> String {
    let mut t = String::from(
        "---\nname: big\ndescription: A long pipeline.\n---\nagir_version: 0.1\ntools:\n",
    );
    for i in 0..tools {
        let _ = write!(
            t,
            "  tool_{i}:\n    sig: \"(c{i}) -> str\"\n    surface: SENSE\n    body: |\n      def tool_{i}(c{i}):\n          return (c{i} or \"\").upper()\n"
        );
    }
    t.push_str("walker:\n  name: Big\n  carries:\n    c0: {type: str, role: input}\n");
    for i in 1..=n {
        let _ = writeln!(t, "    c{i}: {{type: str, produced_by: s{}}}", i - 1);
    }
    t.push_str("nodes:\n");
    for i in 0..n {
        let _ = write!(
            t,
            "  - id: s{i}\n    type: SENSE\n    owner: code\n    tool: tool_{}\n    reads: [c{i}]\n    writes: [c{}]\n    doc: \"Step {i}: upper-case the text.\"\n",
            i % tools.max(1),
            i + 1
        );
    }
    t.push_str("  - id: done\n    type: TERMINAL\nedges:\n");
    for i in 0..n {
        let to = if i + 1 == n {
            "done".to_owned()
        } else {
            format!("s{}", i + 1)
        };
        let _ = writeln!(t, "  - {{from: s{i}, to: {to}, modality: mandatory}}");
    }
    t
}

fn bench(c: &mut Criterion) {
    for (label, tools) in [
        ("10k instructions, 100 tools", 100),
        ("10k instructions, 10k tools", 10_000),
    ] {
        let text = program_text(10_000, tools);
        let program = read(&text).expect("the generated program reads").program;
        assert_eq!(program.instructions().len(), 10_001);
        assert_eq!(
            read(&write(&program)).map(|d| d.program).ok(),
            Some(program.clone())
        );
        c.bench_function(&format!("read {label} ({} bytes)", text.len()), |b| {
            b.iter(|| read(black_box(&text)).map(|d| d.program.instructions().len()))
        });
        c.bench_function(&format!("write {label}"), |b| {
            b.iter(|| write(black_box(&program)).len())
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
