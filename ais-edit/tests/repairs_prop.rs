//! The property of the error channel: for generated programs and generated patches, every
//! `possible_repairs` call of a rejection, when made, is not rejected for the same reason (at
//! the same operation).

use ais_edit::Editor;
use proptest::prelude::*;
use serde_json::{Value as Json, json};

/// A chain of `n` model steps `s0 … s{n-1}`, each reading the previous carry, then `done`;
/// `verify` (a code SENSE writing the bool `ok`) branches back to `s0` or on to `done`.
fn program(n: usize) -> String {
    let mut carries = String::from("    task: {type: str, role: input}\n");
    let mut nodes = String::new();
    let mut edges = String::new();
    for i in 0..n {
        let read = if i == 0 {
            "task".to_owned()
        } else {
            format!("c{}", i - 1)
        };
        carries.push_str(&format!("    c{i}: {{type: str, produced_by: s{i}}}\n"));
        nodes.push_str(&format!(
            "  - id: s{i}\n    type: GEN-RAW\n    reads: [{read}]\n    writes: [c{i}]\n    doc: \"Step {i}.\"\n"
        ));
        if i > 0 {
            edges.push_str(&format!(
                "  - {{from: s{}, to: s{i}, modality: mandatory}}\n",
                i - 1
            ));
        }
    }
    let last = format!("c{}", n - 1);
    carries.push_str("    ok: {type: bool, produced_by: verify}\n");
    nodes.push_str(&format!(
        "  - id: verify\n    type: SENSE\n    owner: code\n    tool: check\n    reads: [{last}]\n    writes: [ok]\n  - id: done\n    type: TERMINAL\n    reads: [{last}]\n"
    ));
    edges.push_str(&format!(
        "  - {{from: s{}, to: verify, modality: mandatory}}\n  - {{from: verify, to: done, modality: discretionary, guard: ok}}\n  - {{from: verify, to: s0, modality: discretionary, guard: otherwise}}\n",
        n - 1
    ));
    format!(
        "---\nname: gen\ndescription: Generated.\n---\ntools:\n  check:\n    sig: \"({last}) -> bool\"\n    surface: SENSE\n    body: |\n      def check({last}):\n          return bool({last})\nwalker:\n  name: Gen\n  carries:\n{carries}nodes:\n{nodes}edges:\n{edges}"
    )
}

/// A name as it stands, or misspelled (a letter dropped, doubled, or appended).
fn name(real: Vec<String>) -> impl Strategy<Value = String> + Clone {
    (proptest::sample::select(real), 0..4usize).prop_map(|(n, how)| match how {
        0 | 1 => n,
        2 if n.len() > 1 => n[..n.len() - 1].to_owned(),
        2 => format!("{n}{n}"),
        _ => format!("{n}x"),
    })
}

fn op(n: usize) -> impl Strategy<Value = Json> {
    let mut ids: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
    ids.extend(["verify".to_owned(), "done".to_owned()]);
    let mut carries: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
    carries.extend(["task".to_owned(), "ok".to_owned()]);
    let id = name(ids.clone());
    let carry = name(carries.clone());
    prop_oneof![
        (id.clone(), proptest::sample::select(vec!["code", "model", "cod", "mdel"]))
            .prop_map(|(id, o)| json!({"op": "set_owner", "id": id, "owner": o})),
        (id.clone(), carry.clone())
            .prop_map(|(id, c)| json!({"op": "set_reads", "id": id, "reads": [c]})),
        (carry.clone(), proptest::sample::select(vec!["renamed", "ok", "task", "a/b"]))
            .prop_map(|(c, to)| json!({"op": "rename", "target": format!("carry:{c}"), "to": to})),
        (id.clone(), proptest::sample::select(vec!["fresh", "done", "s0"]))
            .prop_map(|(i, to)| json!({"op": "rename", "target": format!("instruction:{i}"), "to": to})),
        id.clone().prop_map(|i| json!({"op": "set_doc", "target": i, "doc": "Doc."})),
        (id.clone(), id.clone(), carry.clone()).prop_map(
            |(f, t, c)| json!({"op": "add_edge", "from": f, "to": t, "guard": format!("{c} == \"x\"")})
        ),
        (id.clone(), id.clone()).prop_map(|(f, t)| json!({"op": "remove_edge", "from": f, "to": t})),
        (carry.clone()).prop_map(
            |c| json!({"op": "set_guard", "from": "verify", "to": "done", "guard": format!("not {c}")})
        ),
        id.clone().prop_map(|i| json!({"op": "delete_instruction", "ids": [i]})),
        (proptest::sample::select(vec!["extra", "c0", "bad name"]), id.clone()).prop_map(
            |(c, by)| json!({"op": "add_carry", "carry": {"name": c, "type": "str", "produced_by": by}})
        ),
        id.clone().prop_map(
            |i| json!({"op": "set_owner", "id": i, "owner": "code", "generation": "g0000000000000000"})
        ),
        id.clone().prop_map(|i| json!({"op": "set_part", "id": i, "at": "n42", "value": "x", "generation": "g0"})),
        id.prop_map(|i| json!({"op": "set_ownr", "id": i, "owner": "code"})),
        (carry.clone(), carry).prop_map(|(a, b)| json!({"op": "set_writes", "id": "verify", "writes": [a, b]})),
    ]
}

fn case() -> impl Strategy<Value = (usize, Vec<Json>)> {
    (1..4usize).prop_flat_map(|n| (Just(n), proptest::collection::vec(op(n), 1..5)))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn every_repair_of_a_rejection_is_not_rejected_for_the_same_reason((n, ops) in case()) {
        let dir = tempfile::tempdir().unwrap();
        let text = program(n);
        std::fs::write(dir.path().join("p.agir"), &text).unwrap();
        let editor = Editor::new(dir.path()).unwrap();
        let r = editor.call("patch", &json!({"file": "p.agir", "ops": ops, "dry_run": true}));
        if r["status"] == "rejected" {
            let key = (r["reason"].clone(), r["op_index"].clone());
            for rep in r["possible_repairs"].as_array().unwrap() {
                let call = &rep["call"];
                prop_assert_ne!(call["args"].clone(), json!({"file": "p.agir", "ops": ops, "dry_run": true}));
                let again = editor.call(call["tool"].as_str().unwrap(), &call["args"]);
                if again["status"] == "rejected" {
                    prop_assert_ne!(
                        (again["reason"].clone(), again["op_index"].clone()),
                        key.clone(),
                        "repair {} of {} was rejected the same way: {}", rep, r, again
                    );
                }
            }
        }
        // Nothing was written, whatever happened.
        prop_assert_eq!(std::fs::read_to_string(dir.path().join("p.agir")).unwrap(), text);
    }
}

#[test]
fn the_generated_programs_are_clean() {
    for n in 1..4 {
        let doc = ais_core::agir::read(&program(n)).unwrap();
        let c = ais_core::check(&doc.program, &doc.source_map, ais_core::Repairs::Off);
        assert!(
            c.findings
                .iter()
                .all(|f| f.severity < ais_core::Severity::Error),
            "{n}: {:?}",
            c.findings
        );
    }
}

/// The generator is not vacuous: its patches are rejected for many reasons, with repairs to
/// make.
#[test]
fn the_generated_patches_reach_many_rejections_and_repairs() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut reasons = std::collections::BTreeSet::new();
    let (mut rejected, mut repairs) = (0, 0);
    for _ in 0..64 {
        let (n, ops) = case().new_tree(&mut runner).unwrap().current();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("p.agir"), program(n)).unwrap();
        let editor = Editor::new(dir.path()).unwrap();
        let r = editor.call(
            "patch",
            &json!({"file": "p.agir", "ops": ops, "dry_run": true}),
        );
        if r["status"] == "rejected" {
            rejected += 1;
            repairs += r["possible_repairs"].as_array().unwrap().len();
            reasons.insert(r["reason"].as_str().unwrap().to_owned());
        }
    }
    assert!(rejected >= 20, "{rejected}");
    assert!(repairs >= 40, "{repairs}");
    assert!(reasons.len() >= 5, "{reasons:?}");
    eprintln!("{rejected} rejected, {repairs} repairs, reasons {reasons:?}");
}
