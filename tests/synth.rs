//! The benchmark's program generator makes what it promises: valid programs of exactly N
//! instructions, with the advertised mix, that check without errors.

use ais::{Opcode, Repairs, Severity, agir, check};

use crate::support::synth;

#[test]
fn generated_programs_have_exactly_n_instructions_and_check_without_errors() {
    for n in [2usize, 9, 10, 11, 19, 137] {
        let text = synth::program(n);
        let doc = agir::read(&text).unwrap_or_else(|e| panic!("n = {n}: {e:?}"));
        let program = &doc.program;
        assert_eq!(program.instructions().len(), n, "n = {n}");
        let terminals = program
            .instructions()
            .iter()
            .filter(|i| i.opcode == Opcode::Terminal)
            .count();
        assert_eq!(terminals, 1, "n = {n}");
        let checked = check(program, &doc.source_map, Repairs::Off);
        let errors: Vec<_> = checked
            .findings
            .iter()
            .filter(|f| f.severity >= Severity::Error)
            .collect();
        assert!(errors.is_empty(), "n = {n}: {errors:#?}");
    }
}

#[test]
fn generated_programs_have_the_realistic_mix() {
    let doc = agir::read(&synth::program(100)).expect("reads");
    let count = |op: Opcode| {
        doc.program
            .instructions()
            .iter()
            .filter(|i| i.opcode == op)
            .count()
    };
    for op in [
        Opcode::GenRaw,
        Opcode::GenFill,
        Opcode::GenEnum,
        Opcode::Sense,
        Opcode::Act,
        Opcode::Code,
        Opcode::Route,
    ] {
        assert!(count(op.clone()) >= 10, "{op}: {}", count(op.clone()));
    }
    assert!(
        doc.program
            .edge_list()
            .iter()
            .any(|e| e.guard.as_deref() == Some("else"))
    );
    assert!(doc.program.tool_list().len() >= 20);
}
