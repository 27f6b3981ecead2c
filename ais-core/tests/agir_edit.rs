//! Issue 7, bug 2 (`fix -w`): a repair is applied as a minimal text edit at the repaired span;
//! every other byte of the file stays as it was.

use ais_core::agir::{edit_minimally, read};
use ais_core::{Carry, Owner, Type};

const SOURCE: &str = "---
name: m   # odd  spacing kept
description: d
---
walker:
  name: m
  carries:
    task: {type: str, role: input}    # the input
    note:
      type: str
      role: input
    flagged: {type: bool, role: input}
nodes:
  - id: look      # a SENSE with nothing to run
    type: SENSE
    doc: \"Look at it.\"
    reads: [task]
  - {id: think, type: SENSE, doc: \"Think.\", reads: [task]}
  - {id: done, type: TERMINAL}
edges: [{from: look, to: think}, {from: think, to: done}]
";

/// The lines of `after` that are not lines of `before`, and the reverse, in order.
fn changed(before: &str, after: &str) -> (Vec<String>, Vec<String>) {
    let a: Vec<&str> = before.lines().collect();
    let b: Vec<&str> = after.lines().collect();
    let added = b
        .iter()
        .filter(|l| !a.contains(l))
        .map(|l| l.to_string())
        .collect();
    let removed = a
        .iter()
        .filter(|l| !b.contains(l))
        .map(|l| l.to_string())
        .collect();
    (added, removed)
}

#[test]
fn a_changed_value_is_replaced_in_place_in_flow_and_block_mappings() {
    let doc = read(SOURCE).unwrap();
    let mut p = doc.program.clone();
    let carries = p.walker.as_mut().unwrap().carries.as_mut().unwrap();
    carries[0].ty = Some(Type::parse("list[str]"));
    carries[1].ty = Some(Type::parse("int"));
    let out = edit_minimally(SOURCE, &doc, &p).expect("edited");
    let (added, removed) = changed(SOURCE, &out);
    assert_eq!(
        added,
        vec![
            "    task: {type: \"list[str]\", role: input}    # the input",
            "      type: int"
        ]
    );
    assert_eq!(removed.len(), 2);
    let expected = SOURCE
        .replace("task: {type: str,", "task: {type: \"list[str]\",")
        .replace(
            "    note:\n      type: str\n",
            "    note:\n      type: int\n",
        );
    assert_eq!(out, expected);
    assert_eq!(read(&out).unwrap().program, p);
}

#[test]
fn a_missing_field_is_added_beside_the_element_s_fields() {
    let doc = read(SOURCE).unwrap();
    let mut p = doc.program.clone();
    let nodes = p.nodes.as_mut().unwrap();
    nodes[0].owner = Some(Owner::Model);
    nodes[1].owner = Some(Owner::Model);
    let carries = p.walker.as_mut().unwrap().carries.as_mut().unwrap();
    carries[2].produced_by = Some("look".into());
    let out = edit_minimally(SOURCE, &doc, &p).expect("edited");
    let (added, removed) = changed(SOURCE, &out);
    assert!(removed.len() == 2, "{removed:?}\n{out}");
    assert!(added.contains(&"    owner: model".to_string()), "{out}");
    assert!(
        added.contains(
            &"  - {id: think, type: SENSE, doc: \"Think.\", reads: [task], owner: model}"
                .to_string()
        ),
        "{out}"
    );
    assert!(
        added.contains(&"    flagged: {type: bool, role: input, produced_by: look}".to_string()),
        "{out}"
    );
    // The comment on the edited instruction's line, and every other line, is untouched.
    assert!(
        out.contains("  - id: look      # a SENSE with nothing to run\n    owner: model\n"),
        "{out}"
    );
    assert_eq!(read(&out).unwrap().program, p);
}

#[test]
fn a_new_carry_is_one_new_line_in_the_section_s_spelling() {
    let doc = read(SOURCE).unwrap();
    let mut p = doc.program.clone();
    p.walker
        .as_mut()
        .unwrap()
        .carries
        .as_mut()
        .unwrap()
        .push(Carry {
            name: "verdict".into(),
            ty: Some(Type::Bool),
            produced_by: Some("look".into()),
            ..Carry::default()
        });
    let out = edit_minimally(SOURCE, &doc, &p).expect("edited");
    let expected = SOURCE.replace(
        "    flagged: {type: bool, role: input}\n",
        "    flagged: {type: bool, role: input}\n    verdict: {type: bool, produced_by: look}\n",
    );
    assert_eq!(out, expected);
    // A section spelled as a list gets a list entry.
    let listed = "walker:\n  carries:\n    - {name: task, type: str, role: input}\n    - name: x\n      type: str\n      role: input\nnodes:\n  - {id: done, type: TERMINAL}\n";
    let doc = read(listed).unwrap();
    let mut p = doc.program.clone();
    p.walker
        .as_mut()
        .unwrap()
        .carries
        .as_mut()
        .unwrap()
        .push(Carry {
            name: "verdict".into(),
            ty: Some(Type::Bool),
            produced_by: Some("done".into()),
            ..Carry::default()
        });
    let out = edit_minimally(listed, &doc, &p).expect("edited");
    assert_eq!(
        out,
        listed.replace(
            "      role: input\n",
            "      role: input\n    - {name: verdict, type: bool, produced_by: done}\n"
        )
    );
}

#[test]
fn a_difference_the_edits_do_not_cover_is_declined() {
    let doc = read(SOURCE).unwrap();
    let mut p = doc.program.clone();
    p.agir_version = Some("0.2".into());
    assert_eq!(edit_minimally(SOURCE, &doc, &p), None);
    let mut p = doc.program.clone();
    p.nodes.as_mut().unwrap()[0].doc = Some("Other.".into());
    assert_eq!(edit_minimally(SOURCE, &doc, &p), None);
    // No difference: the text comes back unchanged.
    assert_eq!(
        edit_minimally(SOURCE, &doc, &doc.program).as_deref(),
        Some(SOURCE)
    );
}
