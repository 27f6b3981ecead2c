//! Properties of the calling convention over generated programs, signatures and texts.

use crate::bind_common;

use ais_core::bind::*;
use ais_core::sig::{Param, Return, Signature};
use ais_core::{Opcode, Program, Value};
use bind_common::*;
use proptest::prelude::*;

/// Names drawn from a small pool mixing plain, content, path and path-shaped names, so that
/// every rule gets exercised and names collide often.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("task"),
        Just("path"),
        Just("content"),
        Just("text"),
        Just("out"),
        Just("file"),
        Just("target"),
        Just("doc_md"),
        Just("notes"),
        Just("out_file"),
        Just("src_path"),
        Just("spec"),
        Just("width"),
        Just("k_rules"),
        Just("a"),
        Just("b"),
    ]
    .prop_map(str::to_owned)
}

fn opcode() -> impl Strategy<Value = Opcode> {
    prop_oneof![
        Just(Opcode::Act),
        Just(Opcode::Sense),
        Just(Opcode::Code),
        Just(Opcode::Route),
        Just(Opcode::GenFill),
    ]
}

#[derive(Debug, Clone)]
struct Case {
    program: Program,
    sig: Signature,
    invocation: Option<String>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        proptest::collection::vec(
            (
                name(),
                prop_oneof![Just(""), Just("str"), Just("path"), Just("Args")],
            ),
            0..8,
        ),
        proptest::collection::vec(name(), 0..16),
        proptest::collection::vec(
            (
                name(),
                proptest::option::of(prop_oneof![Just("str"), Just("path")]),
            ),
            0..6,
        ),
        opcode(),
        proptest::option::of(prop_oneof![
            Just("clean data.csv and save as out.csv".to_owned()),
            Just("say hello".to_owned()),
            "[ a-z./]{0,30}",
        ]),
        prop_oneof![Just("ACT·artifact"), Just("ACT"), Just("SENSE")],
    )
        .prop_map(|(carries, reads, params, op, invocation, surface)| {
            let reads: Vec<&str> = reads.iter().map(String::as_str).collect();
            let mut params_unique: Vec<Param> = Vec::new();
            for (n, ty) in params {
                if params_unique.iter().all(|p| p.name != n) {
                    params_unique.push(Param::new(n, ty.map(ais_core::Type::parse)));
                }
            }
            let mut p = program(
                carries.iter().map(|(n, t)| carry(n, t)).collect(),
                vec![instr("x", op, &reads, &[])],
                vec![serving(tool("t", "()", surface), &["x"])],
            );
            p.knowledge = Some(vec![knowledge("k_rules", &["x"])]);
            p.types = Some(vec![ais_core::TypeDecl {
                name: "Args".into(),
                kind: ais_core::TypeKind::Object(vec![ais_core::Field {
                    name: "width".into(),
                    ..Default::default()
                }]),
                ..Default::default()
            }]);
            Case {
                program: p,
                sig: Signature {
                    params: params_unique,
                    ret: Return::None,
                },
                invocation,
            }
        })
}

proptest! {
    #[test]
    fn bindings_keep_the_conventions_invariants(c in case()) {
        let (_, i) = c.program.instruction("x").unwrap();
        let reads = ProgramIndex::new(&c.program).read_carries(i);
        let b = ProgramIndex::new(&c.program).bind_tool(i, &c.sig, c.invocation.as_deref());

        // One binding per parameter, in signature order.
        prop_assert_eq!(b.len(), c.sig.params.len());
        for (x, p) in b.iter().zip(&c.sig.params) {
            prop_assert_eq!(&x.param, &p.name);
        }
        let mut taken: Vec<&str> = Vec::new();
        for (idx, (x, p)) in b.iter().zip(&c.sig.params).enumerate() {
            match (&x.rule, &x.source) {
                (Rule::Name, BindSource::Carry(carry)) => {
                    prop_assert_eq!(carry, &p.name);
                    taken.push(carry);
                }
                (Rule::ObjectField, BindSource::Field { field, .. }) => prop_assert_eq!(field, &p.name),
                (Rule::Role, BindSource::Carry(carry)) => {
                    prop_assert!(reads.contains(&carry.as_str()));
                    prop_assert!(is_content_param(p) || is_path_param(p));
                    prop_assert_eq!(is_path_param(p), ProgramIndex::new(&c.program).is_path_shaped_carry(carry));
                    taken.push(carry);
                }
                (Rule::Position, BindSource::Carry(carry)) => {
                    prop_assert_eq!(reads.get(idx).copied(), Some(carry.as_str()));
                    prop_assert!(!is_path_param(p) || ProgramIndex::new(&c.program).is_path_shaped_carry(carry));
                    taken.push(carry);
                }
                (Rule::InvocationFallback, BindSource::Invocation(f)) => {
                    prop_assert!(is_path_param(p));
                    match (&c.invocation, f) {
                        (None, None) => {}
                        (Some(text), Some(f)) => prop_assert!(text.contains(f.as_str())),
                        other => prop_assert!(false, "invocation {:?}", other),
                    }
                }
                (Rule::Unbound, BindSource::Null) => {}
                other => prop_assert!(false, "rule and source disagree: {:?}", other),
            }
        }
        // No carry is bound whole to two parameters.
        let mut sorted = taken.clone();
        sorted.sort_unstable();
        sorted.dedup();
        prop_assert_eq!(sorted.len(), taken.len());
        // Knowledge keys are never operands.
        prop_assert!(!reads.contains(&"k_rules") || c.program.carry("k_rules").is_some());
    }

    #[test]
    fn slots_hold_every_read_carry_within_the_cap(c in case(), extra in 0usize..20) {
        let mut p = c.program.clone();
        if let Some(nodes) = p.nodes.as_mut() {
            for n in 0..extra {
                nodes[0].reads.push(format!("e{n}"));
            }
        }
        if let Some(w) = p.walker.as_mut() {
            let carries = w.carries.get_or_insert_with(Vec::new);
            carries.extend((0..extra).map(|n| carry(&format!("e{n}"), "str")));
        }
        let (_, i) = p.instruction("x").unwrap();
        let slot = ProgramIndex::new(&p).bind_slot(i);
        prop_assert!(slot.operands.len() <= SLOT_ARITY_CAP);
        let mut flat: Vec<String> = Vec::new();
        for o in &slot.operands {
            match o {
                SlotOperand::Carry(c) => flat.push(c.clone()),
                SlotOperand::Context { carries, .. } => flat.extend(carries.iter().cloned()),
            }
        }
        let reads: Vec<String> = ProgramIndex::new(&p).read_carries(i).into_iter().map(str::to_owned).collect();
        prop_assert_eq!(flat, reads);
        let mut names = slot.names();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        prop_assert_eq!(names.len(), n);
    }

    #[test]
    fn write_back_gives_one_entry_per_write_and_always_fills_the_first(
        writes in proptest::collection::vec("[a-c]", 0..4),
        result in prop_oneof![
            Just(Value::Null),
            Just(Value::Int(1)),
            Just(Value::List(vec![Value::Int(1), Value::Int(2)])),
            Just(Value::from_json(&serde_json::json!({"a": 1, "z": 2}))),
        ],
        ret in prop_oneof![
            Just(Return::None),
            Just(Return::Tuple(vec!["a".into(), "b".into()])),
            Just(Return::Type(ais_core::Type::List(None))),
        ],
    ) {
        let got = recover_writes(&writes, &result, &ret);
        prop_assert_eq!(got.len(), writes.len());
        if !writes.is_empty() {
            prop_assert!(got[0].is_some());
        }
    }

    #[test]
    fn the_invocation_fallback_returns_text_from_the_invocation(text in "\\PC{0,60}") {
        for side in [Access::Read, Access::Write] {
            if let Some(f) = invocation_filename(&text, side) {
                prop_assert!(text.contains(&f));
            }
        }
        for m in filename_mentions(&text) {
            prop_assert_eq!(text.get(m.offset..m.offset + m.name.len()), Some(m.name.as_str()));
        }
    }
}
