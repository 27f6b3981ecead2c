//! One diagnostic shape for every front end: the validator located by another front end's
//! [`Locator`], and read, signature and expression errors as findings.

use ais_core::expr::{Category, Limits, TypeEnv};
use ais_core::render::finding_json;
use ais_core::{
    CheckId, Code, Element, FieldKey, Finding, Locator, Locus, Repairs, Severity, SubRange, Type,
    check,
};

/// A stand-in for the macro's span map: a "span" is the index of the token a locus names.
struct Spans;

#[derive(Clone, Debug, PartialEq)]
struct Span {
    token: String,
    sub: Option<(u32, u32)>,
}

impl Locator for Spans {
    type Location = Span;

    fn locate(&self, locus: &Locus) -> Option<Span> {
        Some(Span {
            token: format!(
                "{:?}.{}",
                locus.element,
                locus.field_str().unwrap_or("<element>")
            ),
            sub: None,
        })
    }

    fn locate_inner(&self, locus: &Locus, range: SubRange, _token: Option<&str>) -> Option<Span> {
        let mut span = self.locate(locus)?;
        span.sub = Some((range.column, range.len));
        Some(span)
    }
}

const PROGRAM: &str = r#"---
name: shout
description: Upper-case the task.
---
walker:
  name: Shout
  carries:
    task: {type: str, role: input}
    loud: {type: str, produced_by: draft}
    ok: {type: bool, produced_by: draft}
nodes:
  - id: draft
    type: GEN-RAW
    reads: [taks]
    writes: [loud]
    doc: "Say the task loudly."
  - id: gate
    type: ROUTE
    owner: code
    reads: [ok]
  - id: done
    type: TERMINAL
    reads: [loud]
edges:
  - {from: draft, to: gate}
  - {from: gate, to: done, guard: "ok and lod == \"x\""}
  - {from: gate, to: done, guard: otherwise}
"#;

#[test]
fn the_validator_is_written_once_and_located_by_any_front_end() {
    let doc = ais_core::agir::read(PROGRAM).expect("reads");
    let by_file = check(&doc.program, &doc.source_map, Repairs::Off);
    let by_span = check(&doc.program, &Spans, Repairs::Off);
    assert_eq!(by_file.outcome, by_span.outcome);
    fn ids<L>(fs: &[Finding<L>]) -> Vec<Code> {
        let mut v: Vec<Code> = fs.iter().map(|f| f.id).collect();
        v.sort();
        v
    }
    assert_eq!(
        ids(&by_file.findings),
        ids(&by_span.findings),
        "the same findings"
    );

    let w8 = by_span
        .findings
        .iter()
        .find(|f| f.id == CheckId::W8)
        .expect("W8");
    assert_eq!(w8.pos.as_ref().unwrap().token, "Instruction(0).reads");
    assert_eq!(w8.did_you_mean, ["task"]);

    // Inside the guard: the span front end is told the range of `lod`.
    let x5 = by_span
        .findings
        .iter()
        .find(|f| f.id == CheckId::X5)
        .expect("X5");
    let span = x5.pos.as_ref().unwrap();
    assert_eq!(span.token, "Edge(1).guard");
    assert_eq!(span.sub, Some((8, 3)));
    assert_eq!(x5.did_you_mean, ["loud"]);
    let edit = x5.repair.as_ref().and_then(|r| r.edit.as_ref());
    assert!(edit.is_some(), "a structured rename: {x5:#?}");
}

#[test]
fn read_expression_and_signature_errors_are_findings_too() {
    let err = ais_core::agir::read("walker: [unclosed").unwrap_err();
    let f = Finding::from(&err);
    assert_eq!((f.id, f.severity), (Code::Read, Severity::Fatal));
    assert_eq!(f.pos, err.pos);
    let json = finding_json(&f);
    assert_eq!(json["id"], "read");
    assert_eq!(json, ais_core::render::read_error_json(&err));

    let mut env = TypeEnv::new();
    env.add_carry("plan_ok", &Type::Bool);
    let err =
        ais_core::expr::compile_str("plan_okk == true", &env, &Limits::default()).unwrap_err();
    let f = Finding::from(&err);
    assert_eq!(f.id, Code::Expr(Category::NameError));
    assert_eq!(f.id.as_str(), "name_error");
    assert_eq!(f.did_you_mean, ["plan_ok"]);
    assert_eq!(
        f.inner,
        Some(SubRange {
            line: 1,
            column: 1,
            len: 8
        })
    );

    let text = "(a b) -> str";
    let err = ais_core::sig::parse(text).unwrap_err();
    let f: Finding =
        Finding::from_sig_error(&err, text, Locus::field(Element::Tool(0), FieldKey::Sig));
    assert_eq!(f.id, Code::Signature);
    assert_eq!(
        f.inner,
        Some(SubRange {
            line: 1,
            column: 4,
            len: 1
        })
    );
}

#[test]
fn a_bad_signature_is_pointed_into() {
    let text = PROGRAM.replace(
        "nodes:\n",
        "tools:\n  - name: draft\n    sig: \"(task task2) -> str\"\n    body: |\n      def draft(task):\n          return task\nnodes:\n",
    );
    let doc = ais_core::agir::read(&text).expect("reads");
    let checked = check(&doc.program, &doc.source_map, Repairs::Off);
    let x5 = checked
        .findings
        .iter()
        .find(|f| f.id == CheckId::X5 && f.locus.field == Some(FieldKey::Sig))
        .expect("the signature does not parse");
    let pos = x5.pos.expect("located");
    let row = text.lines().nth(pos.line as usize - 1).unwrap();
    let at: String = row.chars().skip(pos.column as usize - 1).take(5).collect();
    assert_eq!(at, "task2", "{x5:#?}");
}

/// A program whose second `verify` repeats the first's id and whose last edge leads nowhere.
const DUPLICATE_AND_DANGLING: &str = r#"---
name: twice
description: Two steps share an id, and an edge leads nowhere.
---
walker:
  name: Twice
  carries:
    task: {type: str, role: input}
    note: {type: str, produced_by: verify}
nodes:
  - id: verify
    type: GEN-RAW
    reads: [task]
    writes: [note]
    doc: "Write a note."
  - id: verify
    type: GEN-RAW
    reads: [task]
    doc: "Again."
  - id: done
    type: TERMINAL
    reads: [note]
edges:
  - {from: verify, to: done}
  - {from: done, to: nowhere}
"#;

#[test]
fn a_duplicate_id_points_at_the_first_and_a_dangling_edge_at_its_source() {
    let doc = ais_core::agir::read(DUPLICATE_AND_DANGLING).expect("reads");
    let checked = check(&doc.program, &doc.source_map, Repairs::Off);
    let w1 = checked
        .findings
        .iter()
        .find(|f| f.id == CheckId::W1)
        .expect("W1");
    assert_eq!(w1.pos.map(|p| p.line), Some(16), "{w1:#?}");
    let [first] = w1.related.as_slice() else {
        panic!("one related place: {w1:#?}")
    };
    assert_eq!(
        first.locus,
        Locus::field(Element::Instruction(0), FieldKey::Id)
    );
    assert_eq!(first.pos.map(|p| (p.line, p.column)), Some((11, 9)));
    assert_eq!(first.label, "`verify` is first used here");

    let w4 = checked
        .findings
        .iter()
        .find(|f| f.id == CheckId::W4)
        .expect("W4");
    let [source] = w4.related.as_slice() else {
        panic!("one related place: {w4:#?}")
    };
    assert_eq!(
        source.locus,
        Locus::field(Element::Instruction(2), FieldKey::Id)
    );
    assert_eq!(source.pos.map(|p| p.line), Some(20));

    // Rendered as rustc's secondary labels; the JSON contract keeps its keys.
    let text = ais_core::render::render_finding(w1, DUPLICATE_AND_DANGLING, "twice.agir", false);
    assert!(text.contains("::: twice.agir:11:9"), "{text}");
    assert!(text.contains("- `verify` is first used here"), "{text}");
    let json = finding_json(w1);
    assert!(json.get("related").is_none(), "{json}");

    // Another front end locates the related places with its own locator.
    let spanned = check(&doc.program, &Spans, Repairs::Off);
    let w1 = spanned
        .findings
        .iter()
        .find(|f| f.id == CheckId::W1)
        .expect("W1");
    assert_eq!(
        w1.related[0].pos.as_ref().map(|s| s.token.as_str()),
        Some("Instruction(0).id")
    );
}

#[test]
fn read_and_expression_errors_render_through_the_finding_renderer() {
    let err = ais_core::agir::read("nodes: [\n").unwrap_err();
    let text = ais_core::render::render_read_error(&err, "nodes: [\n", "bad.agir", false);
    assert_eq!(
        text,
        ais_core::render::render_finding(&Finding::from(&err), "nodes: [\n", "bad.agir", false)
    );
    assert!(
        text.starts_with("error[read]: cannot read AG-IR: "),
        "{text}"
    );
    assert!(
        text.contains("= note: fatal: there is no program to check"),
        "{text}"
    );

    let mut env = TypeEnv::new();
    env.add_carry("plan_ok", &Type::Bool);
    let src = "plan_okk == true";
    let err = ais_core::expr::compile_str(src, &env, &Limits::default()).unwrap_err();
    let text = ais_core::render::render_expr_error(&err, src, "<expression>", false);
    assert!(
        text.starts_with("error[name_error]: `plan_okk` names no carry. Did you mean `plan_ok`?"),
        "{text}"
    );
    assert!(text.contains("^^^^^^^^"), "{text}");
    // The suggestion is in the message already; it is not repeated as a help line.
    assert!(!text.contains("= help: did you mean"), "{text}");
}

#[test]
fn a_misspelled_read_carries_a_structured_rename_worded_per_front_end() {
    let text = DUPLICATE_AND_DANGLING.replace("    reads: [note]", "    reads: [note, taks]");
    let doc = ais_core::agir::read(&text).expect("reads");
    let checked = check(&doc.program, &doc.source_map, Repairs::Mechanical);
    let w8 = checked
        .findings
        .iter()
        .find(|f| f.id == CheckId::W8)
        .expect("W8 stays: the rename is offered, not applied");
    let repair = w8.repair.as_ref().expect("a repair");
    assert!(!repair.mechanical);
    assert_eq!(
        repair.edit,
        Some(ais_core::Edit::RenameRead {
            instruction: 2,
            id: "done".into(),
            index: 1,
            name: "taks".into(),
            to: "task".into(),
        })
    );
    assert_eq!(repair.summary, "change `taks` to `task` in `done`.reads");
    assert_eq!(
        repair.words(ais_core::Wording::RustDsl),
        "write `task` instead of `taks` in the operands of `done`"
    );
}
