//! G9 for GEN-FILL (§4.1: a GEN-FILL contracts for an object): the cookbook's contact program,
//! a GEN-FILL writing three `str` carries with no `output`, is an error with a mechanical
//! repair that declares the object of its writes; a single write of a scalar is a warning; an
//! object, a list or a dict result passes.

use ais_core::{CheckId, FindingKind, Outcome, Repairs, Severity, Type, TypeKind, check};

const CONTACTS: &str = r#"---
name: contacts
description: Append the contact named in the task to contacts.csv.
---
walker:
  name: Contacts
  carries:
    task: {type: str, role: input}
    name: {type: str, produced_by: extract, doc: "the contact's full name"}
    email: {type: str, produced_by: extract}
    company: {type: str, produced_by: extract}
    row: {type: str, produced_by: format_row}
nodes:
  - {id: extract, type: GEN-FILL, reads: [task], writes: [name, email, company], doc: "The contact the task names."}
  - {id: format_row, type: CODE, owner: code, reads: [name, email, company], writes: [row], body: "name + ',' + email + ',' + company"}
  - {id: done, type: TERMINAL, reads: [row]}
edges:
  - {from: extract, to: format_row}
  - {from: format_row, to: done}
"#;

fn checked(text: &str, repairs: Repairs) -> (ais_core::Program, ais_core::Checked) {
    let doc = ais_core::agir::read(text).expect("reads");
    let c = check(&doc.program, &doc.source_map, repairs);
    (doc.program, c)
}

fn fill_findings(c: &ais_core::Checked) -> Vec<&ais_core::Finding> {
    c.findings
        .iter()
        .filter(|f| f.kind == Some(FindingKind::FillNotObject))
        .collect()
}

#[test]
fn a_gen_fill_writing_three_str_carries_is_g9_with_the_object_of_its_writes_as_repair() {
    let (_, c) = checked(CONTACTS, Repairs::Off);
    let found = fill_findings(&c);
    assert_eq!(found.len(), 1, "{:#?}", c.findings);
    let f = found[0];
    assert_eq!(f.id, CheckId::G9);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.instruction.as_deref(), Some("extract"));
    assert!(f.message.contains("`str`"), "{}", f.message);
    assert!(f.message.contains("`email`, `company`"), "{}", f.message);
    assert_eq!(f.pos.map(|p| p.line), Some(14));
    let r = f.repair.as_ref().expect("a repair");
    assert!(r.mechanical);
    assert_eq!(
        r.summary,
        "add type `ExtractWrites: {kind: object, fields: {name: str, email: str, company: str}}` to types and set `output: ExtractWrites` on `extract`"
    );
}

#[test]
fn the_repair_declares_the_object_and_the_program_comes_out_fixed() {
    let (_, c) = checked(CONTACTS, Repairs::Mechanical);
    assert_eq!(c.outcome, Outcome::Fixed, "{:#?}", c.findings);
    let p = c.repaired.as_ref().expect("repaired");
    let (_, extract) = p.instruction("extract").unwrap();
    assert_eq!(extract.output, Some(Type::Named("ExtractWrites".into())));
    let (_, decl) = p.type_decl("ExtractWrites").expect("declared");
    let TypeKind::Object(fields) = &decl.kind else {
        panic!("an object: {decl:?}")
    };
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["name", "email", "company"]);
    assert_eq!(fields[0].doc.as_deref(), Some("the contact's full name"));
    let d = &c.deviations[0];
    assert_eq!(
        (d.subject.as_str(), d.check),
        ("extract", Some(CheckId::G9))
    );
    assert!(
        d.substituted
            .contains("{name: str, email: str, company: str}"),
        "{}",
        d.substituted
    );
    // The name is free of the declared ones.
    let taken = CONTACTS.replace(
        "walker:\n",
        "types:\n  ExtractWrites: {kind: enum, members: [a]}\nwalker:\n",
    );
    let (_, c) = checked(&taken, Repairs::Off);
    let r = fill_findings(&c)[0].repair.as_ref().unwrap();
    assert!(r.summary.contains("`ExtractWrites2: "), "{}", r.summary);
}

#[test]
fn an_output_object_holding_the_writes_passes() {
    let text = CONTACTS
        .replace(
            "walker:\n",
            "types:\n  Contact:\n    kind: object\n    fields:\n      name: {type: str}\n      email: {type: str}\n      company: {type: str}\nwalker:\n",
        )
        .replace("doc: \"The contact", "output: Contact, doc: \"The contact");
    let (_, c) = checked(&text, Repairs::Off);
    assert!(fill_findings(&c).is_empty(), "{:#?}", c.findings);
}

#[test]
fn one_scalar_write_is_a_warning_and_a_list_passes() {
    let one = CONTACTS
        .replace("writes: [name, email, company]", "writes: [name]")
        .replace(
            "reads: [name, email, company], writes: [row], body: \"name + ',' + email + ',' + company\"",
            "reads: [name], writes: [row], body: \"name\"",
        )
        .replace("    email: {type: str, produced_by: extract}\n    company: {type: str, produced_by: extract}\n", "");
    let (_, c) = checked(&one, Repairs::Mechanical);
    let found = fill_findings(&c);
    assert_eq!(found.len(), 1, "{:#?}", c.findings);
    assert_eq!(found[0].severity, Severity::Warn);
    assert!(
        found[0]
            .repair
            .as_ref()
            .unwrap()
            .summary
            .contains("GEN-RAW"),
        "{:?}",
        found[0].repair
    );
    let list = one
        .replace(
            "name: {type: str, produced_by: extract",
            "name: {type: \"list[str]\", produced_by: extract",
        )
        .replace("body: \"name\"", "body: \"name[0]\"");
    let (_, c) = checked(&list, Repairs::Off);
    assert!(fill_findings(&c).is_empty(), "{:#?}", c.findings);
}
