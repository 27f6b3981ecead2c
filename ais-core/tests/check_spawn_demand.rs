//! G9 over a SPAWN's fan-out source (§4.4.4, §6.3): the SPAWN's tool runs once per element of
//! the list it fans out over, so what the tool's parameter demands is a demand on the list's
//! elements. Reading it as a demand on the list made a correct `list[str]` source a "conflict"
//! whose mechanical repair retyped it `str` — which turned the data-parallel fan-out into a
//! fan-out of one over the task.

use ais_core::{CheckId, Edit, Finding, Repairs, Type, check};

/// A SPAWN `fan` over the input `items` (`list[str]`) running `shout` per element, `shout`'s
/// `def` line annotated `annotation`. Nothing but the tool constrains `items`' type, so a
/// mechanical repair of it is applied.
fn fan_out(annotation: &str) -> String {
    format!(
        r#"---
name: fan
description: Shout each comma-separated item.
---
tools:
  shout:
    sig: "(items) -> str"
    surface: ACT
    serves: [fan]
    body: |
      def shout(items{annotation}):
          return str(items).upper()
walker:
  name: Fan
  carries:
    task: {{type: str, role: input}}
    items: {{type: list[str], role: input}}
    results: {{type: list[str], produced_by: fan}}
nodes:
  - {{id: fan, type: SPAWN, owner: code, reads: [items], writes: [results], concurrency: {{isolation: private_write}}}}
  - {{id: done, type: TERMINAL, reads: [results]}}
edges:
  - {{from: fan, to: done}}
"#
    )
}

fn g9(text: &str, repairs: Repairs) -> (Vec<Finding>, Option<Type>) {
    let doc = ais_core::agir::read(text).unwrap_or_else(|e| panic!("reads: {e}\n{text}"));
    let checked = check(&doc.program, &doc.source_map, repairs);
    let items = checked
        .program(&doc.program)
        .carries()
        .iter()
        .find(|c| c.name == "items")
        .and_then(|c| c.ty.clone());
    let g9 = checked
        .findings
        .into_iter()
        .filter(|f| f.id == CheckId::G9)
        .collect();
    (g9, items)
}

#[test]
fn an_element_annotation_that_fits_the_list_is_no_conflict_and_keeps_the_list() {
    let (findings, items) = g9(&fan_out(": str"), Repairs::Mechanical);
    assert!(findings.is_empty(), "{findings:#?}");
    assert_eq!(
        items,
        Some(Type::parse("list[str]")),
        "the source stays a list"
    );
}

#[test]
fn an_element_annotation_that_does_not_fit_names_the_element_and_repairs_to_a_list() {
    let (findings, _) = g9(&fan_out(": int"), Repairs::Off);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(
        findings[0].message,
        "carry `items` is `list[str]` but `fan` passes each element of it to `shout`, whose \
         `items` parameter demands `int`; the call crashes or misbehaves at run time"
    );
    let repair = findings[0].repair.as_ref().expect("a repair");
    assert!(
        matches!(&repair.edit, Some(Edit::AdoptType { carry, ty }) if carry == "items" && *ty == Type::parse("list[int]")),
        "{repair:#?}"
    );
    let (_, items) = g9(&fan_out(": int"), Repairs::Mechanical);
    assert_eq!(
        items,
        Some(Type::parse("list[int]")),
        "repaired to a list, never a scalar"
    );
}
