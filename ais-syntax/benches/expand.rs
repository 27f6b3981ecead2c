//! The front end's share of expanding `ais!`: parse, lower, validate and write the AG-IR of a
//! generated 200-instruction program (the code the macro then emits is a linear walk over the
//! same tree).

use ais_syntax::Site;
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

/// A valid program of `n` instructions (n a multiple of 4, plus a TERMINAL): blocks of a
/// GEN-RAW draft, a SENSE check through a Rust tool, a CODE body and a code-owned ROUTE with a
/// guard and a default edge.
fn program(n: usize) -> String {
    let blocks = n / 4;
    let mut carries = String::from("task: str = input,\n");
    let mut body = String::new();
    let mut edges = String::new();
    let mut prev = "task".to_owned();
    for i in 0..blocks {
        carries.push_str(&format!("draft_{i}: str,\nok_{i}: bool,\nsize_{i}: int,\n"));
        body.push_str(&format!(
            "/// Revise the text of step {i}: keep its structure, fix its wording.\n\
             d{i}: GEN-RAW({prev}) -> draft_{i};\n\
             s{i}: SENSE long_enough(draft_{i}) -> ok_{i};\n\
             c{i}: CODE(draft_{i}) -> size_{i} = len(draft_{i});\n\
             r{i}: ROUTE(ok_{i});\n"
        ));
        let next = if i + 1 == blocks {
            "done".to_owned()
        } else {
            format!("d{}", i + 1)
        };
        edges.push_str(&format!(
            "d{i} -> s{i} -> c{i} -> r{i};\nr{i} -> {next} if ok_{i} and size_{i} > 3;\nr{i} -> d{i} else;\n"
        ));
        prev = format!("draft_{i}");
    }
    format!(
        "/// A generated program.\nprogram Big {{\ncarries {{\n{carries}}}\n\
         #[surface(SENSE)]\ntool long_enough(text: &str) -> bool {{ text.len() > 3 }}\n\
         {body}done: TERMINAL({prev});\n{edges}}}\n"
    )
}

fn bench(c: &mut Criterion) {
    let text = program(200);
    let tokens: proc_macro2::TokenStream = text.parse().expect("tokens");
    let file = ais_syntax::parse(tokens.clone()).expect("parses");
    let lowered = ais_syntax::lower(&file.programs[0]).expect("lowers");
    assert_eq!(lowered.program.instructions().len(), 201);
    let site = Site::one(proc_macro2::Span::call_site());
    let errors = ais_syntax::diagnose(&lowered, site);
    assert!(
        errors.iter().all(|d| !d.is_error()),
        "{:?}",
        errors.first().map(|d| &d.message)
    );

    c.bench_function("expand_front_end_200", |b| {
        b.iter(|| {
            let file = ais_syntax::parse(black_box(tokens.clone())).expect("parses");
            let lowered = ais_syntax::lower(&file.programs[0]).expect("lowers");
            let found = ais_syntax::diagnose(&lowered, site);
            let agir = ais_core::agir::write(&lowered.program);
            black_box((found, agir))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
