//! Unit tests over programs built in Rust (the AG-IR fixtures live in `tests/`).

use super::*;
use crate::plan::{self as lower, builtins, lower};
use crate::program::{
    Carry, Concurrency, Edge, Instruction, Isolation, Knowledge, Opcode, Owner, Role, Type,
    TypeDecl, TypeKind, Walker,
};
use crate::source::SourceMap;
use crate::value::Value;

/// A terse program builder.
#[derive(Default)]
struct B(Program);

impl B {
    fn new() -> Self {
        let mut b = B(Program::default());
        // The names §8.2 requires (S1), so that only the finding under test shows.
        b.0.name = Some("t".into());
        b.0.description = Some("A test module.".into());
        b.0.walker = Some(Walker {
            name: Some("t".into()),
            ..Walker::default()
        });
        b.input("task", "str")
    }
    fn carries(&mut self) -> &mut Vec<Carry> {
        self.0
            .walker
            .get_or_insert_with(Walker::default)
            .carries
            .get_or_insert_with(Vec::new)
    }
    fn input(mut self, name: &str, ty: &str) -> Self {
        self.carries().push(Carry {
            name: name.into(),
            ty: Some(Type::parse(ty)),
            role: Some(Role::Input),
            ..Carry::default()
        });
        self
    }
    fn carry(mut self, name: &str, ty: &str, by: &str) -> Self {
        self.carries().push(Carry {
            name: name.into(),
            ty: (!ty.is_empty()).then(|| Type::parse(ty)),
            produced_by: (!by.is_empty()).then(|| by.into()),
            ..Carry::default()
        });
        self
    }
    fn node(mut self, id: &str, op: &str, owner: &str, reads: &[&str], writes: &[&str]) -> Self {
        self.0.nodes.get_or_insert_with(Vec::new).push(Instruction {
            id: id.into(),
            opcode: Opcode::parse(op),
            owner: (!owner.is_empty()).then(|| Owner::parse(owner)),
            reads: reads.iter().map(|s| s.to_string()).collect(),
            writes: writes.iter().map(|s| s.to_string()).collect(),
            doc: Some(format!("Do the {id} step.")),
            ..Instruction::default()
        });
        self
    }
    fn with(mut self, f: impl FnOnce(&mut Instruction)) -> Self {
        if let Some(n) = self.0.nodes.as_mut().and_then(|n| n.last_mut()) {
            f(n);
        }
        self
    }
    fn edge(mut self, from: &str, to: &str) -> Self {
        self.0.edges.get_or_insert_with(Vec::new).push(Edge {
            from: from.into(),
            to: to.into(),
            ..Edge::default()
        });
        self
    }
    fn chain(mut self, ids: &[&str]) -> Self {
        for w in ids.windows(2) {
            self = self.edge(w[0], w[1]);
        }
        self
    }
    fn done(self) -> Program {
        self.0
    }
}

/// The canonical small program: draft (GEN-RAW) → done.
fn good() -> B {
    B::new()
        .carry("note", "str", "draft")
        .node("draft", "GEN-RAW", "model", &["task"], &["note"])
        .node("done", "TERMINAL", "", &["note"], &[])
        .chain(&["draft", "done"])
}

fn ids(c: &Checked) -> Vec<CheckId> {
    c.findings.iter().filter_map(|f| f.id.check()).collect()
}

/// Asserts the program's only error-or-worse findings are `id`, at least one.
fn only(p: &Program, id: CheckId) -> Checked {
    let c = check(p, &SourceMap::new(), Repairs::Off);
    assert!(
        ids(&c).contains(&id),
        "expected {id}, got {:#?}",
        c.findings
    );
    for f in &c.findings {
        assert!(
            f.id == id || f.severity == Severity::Warn,
            "unexpected {} ({}): {}",
            f.id,
            f.severity,
            f.message
        );
    }
    c
}

#[test]
fn a_minimal_pipeline_is_clean() {
    let c = check(&good().done(), &SourceMap::new(), Repairs::Mechanical);
    assert_eq!(c.outcome, Outcome::Clean, "{:#?}", c.findings);
    assert!(c.deviations.is_empty());
}

#[test]
fn w1_reports_a_duplicate_id() {
    let p = good()
        .node("draft", "GEN-RAW", "model", &["task"], &["note"])
        .edge("draft", "done")
        .done();
    let c = only(&p, CheckId::W1);
    assert_eq!(
        c.findings[0].locus,
        Locus::field(Element::Instruction(2), FieldKey::Id)
    );
}

#[test]
fn w2_reports_an_unknown_opcode_with_a_suggestion() {
    let mut p = good().done();
    p.nodes.as_mut().unwrap()[0].opcode = Opcode::parse("GEN_RAW");
    let c = check(&p, &SourceMap::new(), Repairs::Off);
    let f = c.findings.iter().find(|f| f.id == CheckId::W2).unwrap();
    assert_eq!(f.did_you_mean.first().map(String::as_str), Some("GEN-RAW"));
    assert_eq!(f.instruction.as_deref(), Some("draft"));
}

#[test]
fn w3_reports_a_mind_instruction_owned_by_code() {
    let mut p = good().done();
    p.nodes.as_mut().unwrap()[0].owner = Some(Owner::Code);
    only(&p, CheckId::W3);
}

#[test]
fn w4_reports_a_dangling_edge_with_a_suggestion() {
    let p = good().edge("draft", "dnoe").done();
    let c = only(&p, CheckId::W4);
    assert_eq!(c.findings[0].did_you_mean, ["done"]);
    assert_eq!(
        c.findings[0].locus,
        Locus::field(Element::Edge(1), FieldKey::To)
    );
}

#[test]
fn w5_reports_a_module_without_edges() {
    let mut p = good().done();
    p.edges = Some(Vec::new());
    let c = check(&p, &SourceMap::new(), Repairs::Off);
    assert!(ids(&c).contains(&CheckId::W5));
}

#[test]
fn w6_reports_a_missing_terminal() {
    let p = B::new()
        .carry("note", "str", "draft")
        .node("draft", "GEN-RAW", "model", &["task"], &["note"])
        .done();
    only(&p, CheckId::W6);
}

#[test]
fn w7_reports_an_unreachable_instruction() {
    let p = good()
        .carry("other", "str", "stray")
        .node("stray", "GEN-RAW", "model", &["task"], &["other"])
        .edge("stray", "done")
        .done();
    only(&p, CheckId::W7);
}

#[test]
fn w8_reports_a_dangling_read_at_its_entry() {
    let p = good()
        .with(|n| n.reads = vec!["note".into(), "nte".into()])
        .done();
    let c = only(&p, CheckId::W8);
    let f = &c.findings[0];
    assert_eq!(
        f.locus,
        Locus::entry(Element::Instruction(1), FieldKey::Reads, 1)
    );
    assert_eq!(f.did_you_mean, ["note"]);
}

#[test]
fn w8_accepts_an_object_field_of_a_read_carry() {
    let mut p = good()
        .with(|n| n.reads = vec!["note".into(), "ok".into()])
        .done();
    if let Some(c) = p.walker.as_mut().and_then(|w| w.carries.as_mut()) {
        c[1].ty = Some(Type::Named("outcome".into()));
    }
    p.nodes.as_mut().unwrap()[0].output = None;
    let c = check(&p, &SourceMap::new(), Repairs::Off);
    assert!(!ids(&c).contains(&CheckId::W8), "{:#?}", c.findings);
}

#[test]
fn w9_mints_a_missing_carry_and_records_a_deviation() {
    let p = B::new()
        .node("draft", "GEN-RAW", "model", &["task"], &["plan_md"])
        .node("done", "TERMINAL", "", &[], &[])
        .chain(&["draft", "done"])
        .done();
    only(&p, CheckId::W9);
    let c = check(&p, &SourceMap::new(), Repairs::Mechanical);
    assert_eq!(c.outcome, Outcome::Fixed, "{:#?}", c.findings);
    assert_eq!(c.deviations.len(), 1);
    assert_eq!(c.deviations[0].subject, "plan_md");
    let (_, minted) = c
        .repaired
        .as_ref()
        .expect("repaired")
        .carry("plan_md")
        .unwrap();
    assert_eq!(minted.ty, Some(Type::Str));
    assert_eq!(minted.produced_by.as_deref(), Some("draft"));
}

#[test]
fn w10_sets_the_only_writer_as_producer() {
    let p = good().done();
    let mut p = p;
    p.walker.as_mut().unwrap().carries.as_mut().unwrap()[1].produced_by = None;
    only(&p, CheckId::W10);
    let c = check(&p, &SourceMap::new(), Repairs::Mechanical);
    assert_eq!(c.outcome, Outcome::Fixed);
    assert_eq!(
        c.repaired
            .as_ref()
            .expect("repaired")
            .carry("note")
            .unwrap()
            .1
            .produced_by
            .as_deref(),
        Some("draft")
    );
}

#[test]
fn w12_reports_knowledge_without_residency_or_content() {
    let mut p = good().done();
    p.knowledge = Some(vec![Knowledge {
        name: "fmt".into(),
        resident_on: vec!["drfat".into()],
        ..Knowledge::default()
    }]);
    let c = only(&p, CheckId::W12);
    assert_eq!(c.findings.len(), 2);
    assert!(c.findings.iter().any(|f| f.did_you_mean == ["draft"]));
}

#[test]
fn w13_reports_a_carry_named_path() {
    let p = good().carry("path", "str", "draft").done();
    let mut p = p;
    p.nodes.as_mut().unwrap()[0].writes.push("path".into());
    let c = only(&p, CheckId::W13);
    let repair = c.findings[0].repair.as_ref().unwrap();
    assert!(repair.summary.contains("draft_path"), "{}", repair.summary);
}

#[test]
fn w14_reports_an_empty_enum() {
    let mut p = good().done();
    p.types = Some(vec![TypeDecl {
        name: "Op".into(),
        kind: TypeKind::Enum(Vec::new()),
        ..TypeDecl::default()
    }]);
    only(&p, CheckId::W14);
}

#[test]
fn x1_reports_a_hollow_sense_and_re_owns_it_to_a_slot() {
    let p = B::new()
        .carry("facts", "str", "look")
        .node("look", "SENSE", "code", &["task"], &["facts"])
        .node("done", "TERMINAL", "", &["facts"], &[])
        .chain(&["look", "done"])
        .done();
    only(&p, CheckId::X1);
    let c = check(&p, &SourceMap::new(), Repairs::Mechanical);
    assert_eq!(c.outcome, Outcome::Fixed, "{:#?}", c.findings);
    assert_eq!(
        c.repaired.as_ref().expect("repaired").instructions()[0].owner,
        Some(Owner::Model)
    );
    assert_eq!(c.deviations[0].check, Some(CheckId::X1));
}

#[test]
fn x1_does_not_re_own_a_doc_less_instruction() {
    let p = B::new()
        .carry("facts", "str", "look")
        .node("look", "SENSE", "code", &["task"], &["facts"])
        .with(|n| n.doc = None)
        .node("done", "TERMINAL", "", &["facts"], &[])
        .chain(&["look", "done"])
        .done();
    let c = check(&p, &SourceMap::new(), Repairs::Mechanical);
    assert_eq!(c.outcome, Outcome::Degraded);
    assert!(c.deviations.is_empty());
    let f = c.findings.iter().find(|f| f.id == CheckId::X1).unwrap();
    assert!(f.repair.as_ref().unwrap().summary.contains("doc"));
}

#[test]
fn x1_accepts_a_tool_less_act_that_writes_out_a_text_carry() {
    let p = good()
        .carry("note_file", "str", "save")
        .node("save", "ACT", "code", &["note"], &["note_file"])
        .done();
    let mut p = p;
    p.edges = None;
    let p = B(p).chain(&["draft", "save", "done"]).done();
    let c = check(&p, &SourceMap::new(), Repairs::Off);
    assert!(!ids(&c).contains(&CheckId::X1), "{:#?}", c.findings);
    let plan = lower(&p).unwrap();
    assert_eq!(
        plan.steps[2].executor,
        lower::Executor::WriteOut(lower::CarryRef {
            name: "note".into(),
            index: Some(1)
        })
    );
}

#[test]
fn x2_reports_a_loop_without_verdict_cap_or_counter() {
    let p = good()
        .node("again", "LOOP", "model", &["note"], &["note"])
        .edge("draft", "again")
        .edge("again", "draft")
        .done();
    let c = only(&p, CheckId::X2);
    assert_eq!(c.findings.iter().filter(|f| f.id == CheckId::X2).count(), 4);
}

#[test]
fn x3_reports_a_spawn_without_isolation_and_accepts_one_with() {
    let p = B::new()
        .carry("a", "str", "wa")
        .carry("b", "str", "wb")
        .node("fan", "SPAWN", "", &["task"], &[])
        .node("wa", "GEN-RAW", "", &["task"], &["a"])
        .node("wb", "GEN-RAW", "", &["task"], &["b"])
        .node("done", "TERMINAL", "", &["a", "b"], &[])
        .edge("fan", "wa")
        .edge("fan", "wb")
        .edge("wa", "done")
        .edge("wb", "done")
        .done();
    only(&p, CheckId::X3);
    let mut ok = p.clone();
    ok.nodes.as_mut().unwrap()[0].concurrency = Some(Concurrency {
        isolation: Some(Isolation::PrivateWrite),
        ..Concurrency::default()
    });
    let c = check(&ok, &SourceMap::new(), Repairs::Off);
    assert_eq!(c.outcome, Outcome::Clean, "{:#?}", c.findings);
}

#[test]
fn g8_reports_siblings_that_depend_on_each_other() {
    let p = B::new()
        .carry("a", "str", "wa")
        .carry("b", "str", "wb")
        .node("fan", "SPAWN", "", &["task"], &[])
        .with(|n| {
            n.concurrency = Some(Concurrency {
                isolation: Some(Isolation::SharedRead),
                ..Concurrency::default()
            })
        })
        .node("wa", "GEN-RAW", "", &["task"], &["a"])
        .node("wb", "GEN-RAW", "", &["a"], &["b"])
        .node("done", "TERMINAL", "", &["b"], &[])
        .edge("fan", "wa")
        .edge("fan", "wb")
        .edge("wa", "done")
        .edge("wb", "done")
        .done();
    only(&p, CheckId::G8);
}

#[test]
fn g8_advises_on_independent_consecutive_slots() {
    let p = B::new()
        .carry("a", "str", "wa")
        .carry("b", "str", "wb")
        .node("wa", "GEN-RAW", "", &["task"], &["a"])
        .node("wb", "GEN-RAW", "", &["task"], &["b"])
        .node("done", "TERMINAL", "", &["a", "b"], &[])
        .chain(&["wa", "wb", "done"])
        .done();
    let c = check(&p, &SourceMap::new(), Repairs::Off);
    assert_eq!(c.outcome, Outcome::Degraded);
    assert_eq!(ids(&c), [CheckId::G8]);
    assert_eq!(c.findings[0].severity, Severity::Warn);
}

#[test]
fn g1_reports_a_prose_pointer() {
    let mut p = good().done();
    p.knowledge = Some(vec![Knowledge {
        name: "fmt".into(),
        resident_on: vec!["draft".into()],
        content: vec![(
            crate::program::ContentKind::Template,
            Value::Str("See FORMS.md for the format.".into()),
        )],
        ..Knowledge::default()
    }]);
    let c = check(&p, &SourceMap::new(), Repairs::Off);
    assert_eq!(ids(&c), [CheckId::G1]);
    assert_eq!(c.findings[0].severity, Severity::Warn);
}

#[test]
fn g5_reports_a_monolithic_slot_but_not_folded_prohibitions() {
    let mut p = good().done();
    p.nodes.as_mut().unwrap()[0].traces_to = Some(vec!["r1".into(), "r2".into(), "r3".into()]);
    let c = check(&p, &SourceMap::new(), Repairs::Off);
    assert_eq!(ids(&c), [CheckId::G5]);
    p.nodes.as_mut().unwrap()[0].doc =
        Some("Draft the summary. Never invent numbers. Never speculate.".into());
    let c = check(&p, &SourceMap::new(), Repairs::Off);
    assert_eq!(c.outcome, Outcome::Clean, "{:#?}", c.findings);
}

#[test]
fn findings_are_ordered_by_position_then_id() {
    let p = good().edge("draft", "nowhere").edge("ghost", "done").done();
    let mut map = SourceMap::new();
    map.insert(
        Locus::element(Element::Edge(1)),
        crate::source::Pos::new(30, 3),
    );
    map.insert(
        Locus::element(Element::Edge(2)),
        crate::source::Pos::new(20, 3),
    );
    let c = check(&p, &map, Repairs::Off);
    let lines: Vec<u32> = c
        .findings
        .iter()
        .filter_map(|f| f.pos.map(|p| p.line))
        .collect();
    assert_eq!(lines, [20, 30]);
}

#[test]
fn the_plan_splits_edges_and_names_units() {
    let plan = lower(&good().done()).unwrap();
    assert_eq!(plan.entry, Some(0));
    assert_eq!(plan.steps[0].unit, lower::Unit::Model);
    assert_eq!(plan.steps[0].result, Some(Type::Str));
    assert_eq!(plan.steps[0].default.len(), 1);
    assert!(matches!(plan.steps[0].executor, lower::Executor::Slot(_)));
    assert_eq!(plan.steps[1].executor, lower::Executor::Terminal);
}

#[test]
fn a_gen_enum_without_an_enum_does_not_lower() {
    let p = B::new()
        .carry("pick", "str", "choose")
        .node("choose", "GEN-ENUM", "", &["task"], &["pick"])
        .node("done", "TERMINAL", "", &["pick"], &[])
        .chain(&["choose", "done"])
        .done();
    let c = only(&p, CheckId::X5);
    assert_eq!(c.outcome, Outcome::Failed);
    assert!(lower(&p).is_err());
}

/// A CODE step whose tool `emit(content)` reads `carry`, declared `type: path`.
fn emit_reading_a_path(carry: &str) -> Program {
    let mut b = B::new();
    if carry == "task" {
        b.carries()[0].ty = Some(Type::Path);
    } else {
        b = b.input(carry, "path");
    }
    let mut p = b
        .carry("out", "str", "emit")
        .node("emit", "CODE", "code", &[carry], &["out"])
        .with(|n| n.tool = Some("emit".into()))
        .node("done", "TERMINAL", "", &["out"], &[])
        .chain(&["emit", "done"])
        .done();
    p.tools = Some(vec![crate::program::Tool {
        name: "emit".into(),
        sig: Some("(content) -> str".into()),
        body: Some("def emit(content):\n    return str(content)\n".into()),
        ..crate::program::Tool::default()
    }]);
    p
}

#[test]
fn a_path_carry_in_a_content_parameter_does_not_lower_but_task_is_never_a_path() {
    let transposed = |p: &Program| match lower(p) {
        Ok(_) => false,
        Err(fs) => fs
            .iter()
            .any(|f| f.message.contains("in its content parameter")),
    };
    assert!(transposed(&emit_reading_a_path("src_file")));
    // `task` is never path-shaped (§7.2, as the binder judges it), whatever its declared type:
    // it is the invocation's text.
    assert!(!transposed(&emit_reading_a_path("task")));
}

#[test]
fn an_unresolved_type_is_x5_with_a_suggestion() {
    let mut p = good().done();
    p.types = Some(vec![TypeDecl {
        name: "Plan".into(),
        kind: TypeKind::Object(vec![crate::program::Field {
            name: "title".into(),
            ty: Some(Type::Str),
            ..Default::default()
        }]),
        ..TypeDecl::default()
    }]);
    p.walker.as_mut().unwrap().carries.as_mut().unwrap()[1].ty = Some(Type::Named("Plna".into()));
    let c = only(&p, CheckId::X5);
    assert_eq!(c.findings[0].did_you_mean, ["Plan"]);
}

#[test]
fn a_guard_raise_is_a_demand_and_a_coercion_is_not() {
    let raise = "def w(names):\n    if not isinstance(names, list) or not all(isinstance(h, str) for h in names):\n        raise TypeError('x')\n    return 1\n";
    assert_eq!(
        types::body_demand(raise, "w", "names"),
        Some(Type::List(Some(Box::new(Type::Str))))
    );
    let coerce = "def w(names):\n    if not isinstance(names, list):\n        names = [names]\n    return names\n";
    assert_eq!(types::body_demand(coerce, "w", "names"), None);
    let annotated = "def w(count: int, label):\n    return label * count\n";
    assert_eq!(types::body_demand(annotated, "w", "count"), Some(Type::Int));
    assert_eq!(types::body_demand(annotated, "w", "label"), None);
}

#[test]
fn types_are_compatible_where_values_flow_safely() {
    let mut p = good().done();
    p.types = Some(vec![TypeDecl {
        name: "Op".into(),
        kind: TypeKind::Enum(vec![crate::program::EnumMember {
            name: "merge".into(),
            doc: None,
        }]),
        ..TypeDecl::default()
    }]);
    let ix = index::Index::new(&p);
    let ok = |a: &str, b: &str| types::compatible(&ix, &Type::parse(a), &Type::parse(b));
    assert!(ok("str", "path") && ok("int", "float") && ok("list[str]", "list"));
    assert!(ok("Op", "str") && ok("outcome", "dict") && ok("any", "int"));
    assert!(!ok("str", "list[str]") && !ok("float", "int") && !ok("list[int]", "list[str]"));
}

#[test]
fn prose_pointers_are_told_from_content() {
    assert!(battery::is_prose_pointer("See FORMS.md"));
    assert!(battery::is_prose_pointer(
        "Follow the format in the section above."
    ));
    assert!(!battery::is_prose_pointer(
        "Every plan MUST open with exactly this header: # [Feature Name] Implementation Plan"
    ));
    assert!(!battery::is_prose_pointer(""));
}

#[test]
fn builtins_have_canonical_signatures() {
    let b = builtins::builtin("write_file").unwrap();
    let sig = index::builtin_signature(b);
    let names: Vec<&str> = sig.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["path", "content"]);
    assert!(builtins::builtin("ask_user").is_some());
    assert!(builtins::builtin("eval").is_none());
}

#[test]
fn repair_discards_a_mint_that_would_break_the_naming_rule() {
    // Minting `path` would declare a carry with a bare parameter name (W13): not kept.
    let p = B::new()
        .node("draft", "GEN-RAW", "model", &["task"], &["path"])
        .node("done", "TERMINAL", "", &[], &[])
        .chain(&["draft", "done"])
        .done();
    let c = check(&p, &SourceMap::new(), Repairs::Mechanical);
    assert!(c.deviations.is_empty());
    assert!(ids(&c).contains(&CheckId::W9));
    assert_eq!(c.repaired, None, "nothing landed, nothing was copied");
    assert_eq!(c.program(&p), &p);
}

#[test]
fn an_autonomy_tool_that_does_not_exist_does_not_lower() {
    let p = good().done();
    let mut p = p;
    p.nodes.as_mut().unwrap()[0].autonomy = Some(crate::program::Autonomy {
        tools: vec!["reed_file".into()],
        ..Default::default()
    });
    let c = only(&p, CheckId::X5);
    assert_eq!(c.findings[0].did_you_mean, ["read_file"]);
    assert_eq!(
        c.findings[0].locus,
        Locus::entry(Element::Instruction(0), FieldKey::Autonomy, 0)
    );
}

mod no_panic {
    use super::*;
    use crate::program::{Tool, ToolSurface};
    use proptest::prelude::*;

    const NAMES: [&str; 8] = ["task", "a", "b", "path", "x_file", "done", "draft", ""];
    const OPS: [&str; 14] = [
        "GEN-ENUM", "GEN-FILL", "GEN-EDIT", "GEN-RAW", "SENSE", "ACT", "CODE", "ROUTE", "LOOP",
        "SPAWN", "CALL", "TERMINAL", "gen-raw", "",
    ];
    const TYPES: [&str; 7] = ["str", "bool", "int", "list[str]", "outcome", "Nope", "any"];

    fn name() -> impl Strategy<Value = String> {
        prop::sample::select(NAMES.to_vec()).prop_map(str::to_owned)
    }

    fn program() -> impl Strategy<Value = Program> {
        let node = (
            name(),
            prop::sample::select(OPS.to_vec()),
            prop::option::of(prop::sample::select(vec!["code", "model", "robot"])),
            prop::collection::vec(name(), 0..3),
            prop::collection::vec(name(), 0..3),
            prop::option::of(name()),
            any::<bool>(),
        )
            .prop_map(|(id, op, owner, reads, writes, tool, doc)| Instruction {
                id,
                opcode: Opcode::parse(op),
                owner: owner.map(Owner::parse),
                reads,
                writes,
                tool,
                doc: doc.then(|| "Do it.".to_owned()),
                cap: Some(2),
                verdict: Some("b".into()),
                counter: Some("a".into()),
                body: Some("a + 1".into()),
                ..Instruction::default()
            });
        let carry = (
            name(),
            prop::sample::select(TYPES.to_vec()),
            prop::option::of(name()),
            any::<bool>(),
        )
            .prop_map(|(name, ty, by, input)| Carry {
                name,
                ty: Some(Type::parse(ty)),
                produced_by: by,
                role: input.then_some(Role::Input),
                ..Carry::default()
            });
        let tool = (name(), prop::collection::vec(name(), 0..2), any::<bool>()).prop_map(
            |(name, serves, body)| Tool {
                sig: Some("(a, path) -> str".into()),
                surface: Some(ToolSurface::Sense),
                body: body.then(|| format!("def {name}(a, path):\n    return a\n")),
                name,
                serves: Some(serves),
                ..Tool::default()
            },
        );
        let guard = prop::option::of(prop::sample::select(vec![
            "a == true",
            "else",
            "b",
            "not b",
            "missing",
            "a +",
            "b == Op.x",
            "",
        ]));
        let edge = (name(), name(), guard).prop_map(|(from, to, guard)| Edge {
            from,
            to,
            guard: guard.map(str::to_owned),
            ..Edge::default()
        });
        (
            prop::collection::vec(node, 0..7),
            prop::collection::vec(carry, 0..5),
            prop::collection::vec(tool, 0..3),
            prop::collection::vec(edge, 0..8),
        )
            .prop_map(|(nodes, carries, tools, edges)| Program {
                nodes: Some(nodes),
                walker: Some(Walker {
                    carries: Some(carries),
                    ..Walker::default()
                }),
                tools: Some(tools),
                edges: Some(edges),
                ..Program::default()
            })
    }

    proptest! {
        #[test]
        fn checking_and_repairing_any_program_never_panics(p in program()) {
            let plain = check(&p, &SourceMap::new(), Repairs::Off);
            let repaired = check(&p, &SourceMap::new(), Repairs::Mechanical);
            prop_assert_eq!(plain.outcome == Outcome::Failed, lower(&p).is_err());
            prop_assert!(repaired.deviations.len() <= plain.findings.len());
            // A repaired program never has more errors than the original.
            let errors = |c: &Checked| c.findings.iter().filter(|f| f.severity >= Severity::Error).count();
            prop_assert!(errors(&repaired) <= errors(&plain));
        }
    }
}

#[test]
fn a_slot_past_the_arity_cap_folds_the_excess_into_one_context_operand() {
    let mut b = B::new();
    let names: Vec<String> = (0..14).map(|k| format!("in_{k}")).collect();
    for n in &names {
        b = b.input(n, "str");
    }
    let reads: Vec<&str> = names.iter().map(String::as_str).collect();
    let p = b
        .carry("note", "str", "draft")
        .node("draft", "GEN-RAW", "", &reads, &["note"])
        .node("done", "TERMINAL", "", &["note"], &[])
        .chain(&["draft", "done"])
        .done();
    let plan = lower(&p).unwrap();
    let lower::Executor::Slot(slot) = &plan.steps[0].executor else {
        panic!("not a slot: {:?}", plan.steps[0].executor);
    };
    assert_eq!(slot.operands.operands.len(), crate::bind::SLOT_ARITY_CAP);
    assert!(matches!(
        slot.operands.operands.last(),
        Some(crate::bind::SlotOperand::Context { carries, .. }) if carries.len() == 3
    ));
}
