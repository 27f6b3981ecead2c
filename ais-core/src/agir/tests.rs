//! Reader and writer tests on the project's own small documents.

use super::*;
use crate::program::{
    ContentKind, Isolation, Modality, Opcode, Owner, SpawnSource, Surface, ToolSurface, Type,
    TypeKind,
};
use crate::source::{Element, Locus};
use crate::value::Value;

fn ok(text: &str) -> Document {
    read(text).unwrap_or_else(|e| panic!("{e:?}\n{text}"))
}

fn err(text: &str) -> ReadError {
    match read(text) {
        Ok(doc) => panic!("expected an error, read {:?}", doc.program),
        Err(e) => e,
    }
}

#[test]
fn a_fence_and_a_frontmatter_are_accepted_and_positions_stay_true() {
    let text = "```yaml\n---\nname: demo\ndescription: Does it.\nowner_team: core\n---\nagir_version: 0.1\nnodes:\n  - id: a\n    type: GEN-RAW\n```\n";
    let doc = ok(text);
    let p = &doc.program;
    assert_eq!(p.name.as_deref(), Some("demo"));
    assert_eq!(p.description.as_deref(), Some("Does it."));
    assert_eq!(
        p.frontmatter_extra,
        vec![("owner_team".into(), Value::from("core"))]
    );
    assert_eq!(p.agir_version.as_deref(), Some("0.1"));
    let sm = &doc.source_map;
    assert_eq!(
        sm.lookup(&Locus::field(Element::Frontmatter, "name")),
        Some(Pos::new(3, 7))
    );
    assert_eq!(
        sm.lookup(&Locus::element(Element::Instruction(0))),
        Some(Pos::new(9, 5))
    );
    assert_eq!(
        sm.lookup(&Locus::field(Element::Instruction(0), "type")),
        Some(Pos::new(10, 11))
    );
}

#[test]
fn name_and_description_may_stand_at_top_level_without_a_frontmatter() {
    let p = ok("name: demo\ndescription: Does it.\nshape: pipeline\n").program;
    assert_eq!(p.name.as_deref(), Some("demo"));
    assert_eq!(p.description.as_deref(), Some("Does it."));
    assert!(p.extra.is_empty());
    // With a frontmatter, a top-level `name` is an unknown section, kept.
    let p = ok("---\nname: a\n---\nname: b\n").program;
    assert_eq!(p.name.as_deref(), Some("a"));
    assert_eq!(p.extra, vec![("name".into(), Value::from("b"))]);
    assert_eq!(read(&write(&p)).unwrap().program, p);
}

#[test]
fn every_mapping_section_reads_alike_in_all_three_spellings() {
    let spellings = [
        "types:\n  Op: {kind: enum, members: [merge, split]}\n  Args:\n    kind: object\n    fields:\n      out: {type: str, doc: path}\ntools:\n  up: {sig: \"(s) -> str\"}\nknowledge:\n  fmt: {resident_on: [a], template: T}\nwalker:\n  carries:\n    task: {type: str, role: input}\n",
        "types:\n  - {name: Op, kind: enum, members: [{name: merge}, {name: split}]}\n  - name: Args\n    kind: object\n    fields:\n      - {name: out, type: str, doc: path}\ntools:\n  - {name: up, sig: \"(s) -> str\"}\nknowledge:\n  - {id: fmt, resident_on: [a], template: T}\nwalker:\n  carries:\n    - {name: task, type: str, role: input}\n",
        "types:\n  - Op: {kind: enum, members: [merge: , split: ]}\n  - Args:\n      kind: object\n      fields:\n        - out: {type: str, doc: path}\ntools:\n  - up: {sig: \"(s) -> str\"}\nknowledge:\n  - fmt: {resident_on: [a], template: T}\nwalker:\n  carries:\n    - task: {type: str, role: input}\n",
    ];
    let programs: Vec<Program> = spellings.iter().map(|t| ok(t).program).collect();
    assert_eq!(programs[0], programs[1]);
    assert_eq!(programs[0], programs[2]);
    let p = &programs[0];
    let TypeKind::Enum(members) = &p.type_list()[0].kind else {
        panic!("enum expected")
    };
    assert_eq!(members.len(), 2);
    let TypeKind::Object(fields) = &p.type_list()[1].kind else {
        panic!("object expected")
    };
    assert_eq!(fields[0].ty, Some(Type::Str));
    assert_eq!(fields[0].doc.as_deref(), Some("path"));
    assert_eq!(
        p.knowledge_list()[0].content,
        vec![(ContentKind::Template, Value::from("T"))]
    );
    assert!(p.carries()[0].is_input());
}

#[test]
fn enum_members_may_carry_docs() {
    let p = ok("types:\n  Op:\n    kind: enum\n    members:\n      merge: Combine the files.\n      split:\n").program;
    let TypeKind::Enum(m) = &p.type_list()[0].kind else {
        panic!()
    };
    assert_eq!(m[0].doc.as_deref(), Some("Combine the files."));
    assert_eq!(m[1].doc, None);
    let written = write(&p);
    assert!(
        written.contains("    members:\n      merge: \"Combine the files.\"\n      split: null\n"),
        "{written}"
    );
    assert_eq!(ok(&written).program, p);
    let e = err("types:\n  Op: {kind: enum, members: [{name: a, doc: x, weight: 2}]}\n");
    assert!(
        e.message.contains("`types.Op.members[0].weight`"),
        "{}",
        e.message
    );
}

#[test]
fn every_instruction_field_is_read_and_unknown_fields_are_kept_in_order() {
    let text = r#"nodes:
  - id: fan
    type: SPAWN
    concurrency: {isolation: private_write, spawn: [a, b], max_parallel: 2}
  - id: again
    type: LOOP
    owner: code
    verdict: done_ok
    cap: 3
    counter: rounds
    zeta: 1
    alpha: [x]
  - id: sub
    type: CALL
    target: ./sub.agir
    autonomy: {tools: [read_rows]}
    output: list[str]
  - id: save
    type: ACT
    surface: workspace
    tool: save_plan
    op: save
    reads: plan
    writes: [path]
    body: "x + 1"
    traces_to: [r1]
  - id: odd
    type: GEN-MAGIC
concurrency: {spawn: none, reason: "One pass."}
"#;
    let doc = ok(text);
    let n = doc.program.instructions();
    let c = n[0].concurrency.as_ref().unwrap();
    assert_eq!(c.isolation, Some(Isolation::PrivateWrite));
    assert_eq!(
        c.spawn,
        Some(SpawnSource::List(vec!["a".into(), "b".into()]))
    );
    assert_eq!(c.max_parallel, Some(2));
    assert_eq!(n[1].verdict.as_deref(), Some("done_ok"));
    assert_eq!(n[1].cap, Some(3));
    assert_eq!(n[1].counter.as_deref(), Some("rounds"));
    assert_eq!(n[1].owner, Some(Owner::Code));
    let keys: Vec<&str> = n[1].extra.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["zeta", "alpha"]);
    assert_eq!(n[2].target.as_deref(), Some("./sub.agir"));
    assert_eq!(n[2].autonomy.as_ref().unwrap().tools, ["read_rows"]);
    assert_eq!(n[2].output, Some(Type::List(Some(Box::new(Type::Str)))));
    assert_eq!(n[3].surface, Some(Surface::Workspace));
    assert_eq!(n[3].reads, ["plan"], "a single name is a one-element list");
    assert_eq!(n[3].body.as_deref(), Some("x + 1"));
    assert_eq!(n[4].opcode, Opcode::Unknown("GEN-MAGIC".into()));
    let module = doc.program.concurrency.as_ref().unwrap();
    assert_eq!(module.spawn, Some(SpawnSource::None));
    assert_eq!(module.reason.as_deref(), Some("One pass."));
    let sm = &doc.source_map;
    assert_eq!(
        sm.lookup(&Locus::entry(
            Element::Instruction(0),
            "concurrency.spawn",
            1
        )),
        Some(Pos::new(4, 56))
    );
    assert_eq!(
        sm.lookup(&Locus::field(Element::Concurrency, "reason")),
        Some(Pos::new(29, 36))
    );
    assert_eq!(ok(&write(&doc.program)).program, doc.program);
}

#[test]
fn edges_tools_and_carries_keep_their_fields_and_positions() {
    let text = "tools:\n  save:\n    sig: \"(p) -> str\"\n    surface: ACT artifact\n    serves: [s1, s2]\n    lang: python\n    command: \"cp {p} out\"\n    extra_note: kept\nwalker:\n  name: W\n  carries:\n    n: {type: int, default: 0, doc: Rounds.}\nedges:\n  - {from: a, to: b, modality: discretionary, guard: \"n < 3\", traces_to: [r2]}\n  - {from: b, to: c, modality: sometimes}\n";
    let doc = ok(text);
    let t = &doc.program.tool_list()[0];
    assert_eq!(t.surface, Some(ToolSurface::ActArtifact));
    assert_eq!(
        t.serves.as_deref(),
        Some(&["s1".to_owned(), "s2".to_owned()][..])
    );
    assert_eq!(t.command.as_deref(), Some("cp {p} out"));
    assert_eq!(t.extra, vec![("extra_note".into(), Value::from("kept"))]);
    let c = &doc.program.carries()[0];
    assert_eq!(
        (c.ty.clone(), c.default.clone()),
        (Some(Type::Int), Some(Value::Int(0)))
    );
    let e = doc.program.edge_list();
    assert_eq!(e[0].guard.as_deref(), Some("n < 3"));
    assert_eq!(e[1].modality, Some(Modality::Unknown("sometimes".into())));
    let sm = &doc.source_map;
    assert_eq!(
        sm.lookup(&Locus::element(Element::Tool(0))),
        Some(Pos::new(2, 3))
    );
    assert_eq!(
        sm.lookup(&Locus::entry(Element::Tool(0), "serves", 1)),
        Some(Pos::new(5, 18))
    );
    assert_eq!(
        sm.lookup(&Locus::element(Element::Carry(0))),
        Some(Pos::new(12, 5))
    );
    assert_eq!(
        sm.lookup(&Locus::field(Element::Edge(0), "guard")),
        Some(Pos::new(14, 54))
    );
    assert_eq!(
        sm.lookup(&Locus::element(Element::Edge(1))),
        Some(Pos::new(15, 5))
    );
}

#[test]
fn text_fields_keep_the_text_as_written_and_values_follow_the_core_schema() {
    let doc = ok(
        "agir_version: 0.10\nnodes:\n  - id: 007\n    doc:\n    tool: ~\n    x_a: 007\n    x_b: '007'\n    x_c: 1.50\n    x_d: yes\n",
    );
    let p = &doc.program;
    assert_eq!(p.agir_version.as_deref(), Some("0.10"));
    let i = &p.instructions()[0];
    assert_eq!(i.id, "007");
    assert_eq!((i.doc.clone(), i.tool.clone()), (None, None));
    let values: Vec<&Value> = i.extra.iter().map(|(_, v)| v).collect();
    assert_eq!(
        values,
        [
            &Value::Int(7),
            &Value::from("007"),
            &Value::Float(1.5),
            &Value::from("yes")
        ]
    );
}

#[test]
fn wrong_kinds_of_values_are_located_errors_naming_the_field() {
    let e = err("nodes:\n  - id: a\n  - id: b\n  - id: c\n    reads: {x: 1}\n");
    assert!(e.message.contains("`nodes[2].reads`"), "{}", e.message);
    assert!(e.message.contains("a list of names") && e.message.contains("a mapping"));
    assert_eq!(e.pos, Some(Pos::new(5, 12)));
    assert!(e.help.unwrap().contains("[a, b]"));

    let e = err("nodes: {}\n");
    assert!(
        e.message
            .contains("`nodes` should be a list of instructions"),
        "{}",
        e.message
    );
    assert_eq!(e.pos, Some(Pos::new(1, 8)));

    let e = err("nodes:\n  - id: a\n    reads: [x, [y]]\n");
    assert!(e.message.contains("`nodes[0].reads[1]`"), "{}", e.message);

    let e = err("nodes:\n  - id: {a: 1}\n");
    assert!(e.message.contains("a piece of text"), "{}", e.message);

    let e = err("nodes:\n  - id: a\n    type: LOOP\n    cap: lots\n");
    assert!(e.message.contains("`nodes[0].cap`") && e.message.contains("whole number"));
    assert_eq!(e.pos, Some(Pos::new(4, 10)));

    let e = err("standalone: 5\n");
    assert!(e.message.contains("`true` or `false`"), "{}", e.message);

    let e = err("walker:\n  carries:\n    task: [str]\n");
    assert!(e.message.contains("`walker.carries.task`"), "{}", e.message);

    let e = err("tools: upcase\n");
    assert!(e.message.contains("`tools`"), "{}", e.message);

    let e = err("- a\n- b\n");
    assert!(e.message.contains("the document"), "{}", e.message);
}

#[test]
fn a_key_written_twice_is_an_error_but_a_repeated_name_is_kept() {
    let e = err("nodes:\n  - id: a\n    doc: x\n    doc: y\n");
    assert!(
        e.message.contains("`doc` is written twice"),
        "{}",
        e.message
    );
    assert_eq!(e.pos, Some(Pos::new(4, 5)));
    let p = ok("tools:\n  up: {}\n  up: {sig: \"() -> str\"}\n").program;
    assert_eq!(p.tool_list().len(), 2);
}

#[test]
fn a_third_document_and_broken_yaml_are_located_errors() {
    let e = err("---\nname: a\n---\nnodes: []\n---\nx: 1\n");
    assert!(e.message.contains("third"), "{}", e.message);
    assert_eq!(e.pos.map(|p| p.line), Some(5));
    let e = err("nodes:\n  - id: a\n     type: CODE\n");
    assert!(e.message.starts_with("not valid YAML"), "{}", e.message);
    assert_eq!(e.pos.map(|p| p.line), Some(3));
}

#[test]
fn relaxations_are_recorded_where_they_apply_and_only_where_parsing_failed() {
    let text = "walker:\n  carries:\n    a: { type: list[str], role: input }\n    b:{ type: dict[str, int] }\nknowledge:\n  k: {resident_on: [x]}\nnodes:\n  - id: x\n    doc: Note: keep it short\n";
    let doc = ok(text);
    let at: Vec<(u32, u32)> = doc
        .relaxations
        .iter()
        .map(|r| (r.pos.line, r.pos.column))
        .collect();
    assert_eq!(
        at,
        [(3, 16), (4, 6), (4, 15), (9, 10)],
        "{:?}",
        doc.relaxations
    );
    let p = &doc.program;
    assert_eq!(
        p.carries()[1].ty,
        Some(Type::Dict(Some(Box::new(Type::Int))))
    );
    assert_eq!(
        p.instructions()[0].doc.as_deref(),
        Some("Note: keep it short")
    );
    // Positions after a relaxation on the same line are those of the original text.
    assert_eq!(
        doc.source_map
            .lookup(&Locus::field(Element::Carry(0), "role")),
        Some(Pos::new(3, 33))
    );
    let strict = write(p);
    let again = ok(&strict);
    assert!(again.relaxations.is_empty());
    assert_eq!(&again.program, p);
}

#[test]
fn the_writer_uses_a_fixed_order_and_block_scalars_that_keep_the_text() {
    let mut p = ok("edges: []\nnodes:\n  - doc: x\n    id: a\nwalker: {name: W}\nagir_version: 0.1\nx_later: 1\n").program;
    p.nodes.as_mut().unwrap()[0].doc = Some("line one\nline two\n\n".into());
    p.nodes.as_mut().unwrap()[0].body = Some("a\nb".into());
    let text = write(&p);
    assert_eq!(
        text,
        "agir_version: 0.1\nwalker:\n  name: W\nnodes:\n  - id: a\n    doc: |+\n      line one\n      line two\n\n    body: |-\n      a\n      b\nedges: []\nx_later: 1\n"
    );
    assert_eq!(ok(&text).program, p);
    assert_eq!(write(&Program::default()), "{}\n");
    assert_eq!(ok("{}\n").program, Program::default());
    assert_eq!(ok("").program, Program::default());
}

#[test]
fn structured_values_are_written_in_block_style() {
    let p = ok("faithfulness:\n  verdict: FAITHFUL\n  rules:\n    - {id: r1, realized_by: [a, b]}\n    - [1, 2.5, null, true]\n    - []\n    - text: |\n        two\n        lines\n").program;
    let text = write(&p);
    assert_eq!(
        text,
        "faithfulness:\n  verdict: FAITHFUL\n  rules:\n    - id: r1\n      realized_by:\n        - a\n        - b\n    - - 1\n      - 2.5\n      - null\n      - true\n    - []\n    - text: |\n        two\n        lines\n"
    );
    assert_eq!(ok(&text).program, p);
}

#[test]
fn a_byte_order_mark_and_crlf_line_ends_are_read() {
    let text = "\u{FEFF}---\r\nname: demo\r\n---\r\nnodes:\r\n  - id: a\r\n    doc: |\r\n      one\r\n      two\r\n    x_note: Title : t\r\n";
    let doc = ok(text);
    assert_eq!(doc.program.name.as_deref(), Some("demo"));
    let i = &doc.program.instructions()[0];
    assert_eq!(i.doc.as_deref(), Some("one\ntwo\n"));
    assert_eq!(i.extra, vec![("x_note".into(), Value::from("Title : t"))]);
    assert_eq!(doc.relaxations.len(), 1);
}

#[test]
fn columns_count_characters_not_bytes() {
    let doc = ok("nodes:\n  - {id: \"éé\", type: ñ, doc: \"日本\", op: x}\n");
    let sm = &doc.source_map;
    assert_eq!(
        sm.lookup(&Locus::field(Element::Instruction(0), "type")),
        Some(Pos::new(2, 22))
    );
    assert_eq!(
        sm.lookup(&Locus::field(Element::Instruction(0), "op")),
        Some(Pos::new(2, 40))
    );
}

#[test]
fn a_name_written_inside_its_entry_has_its_own_position() {
    let doc = ok("tools:\n  - sig: \"() -> str\"\n    name: up\n  - down: {}\n");
    let sm = &doc.source_map;
    assert_eq!(
        sm.lookup(&Locus::element(Element::Tool(0))),
        Some(Pos::new(2, 5))
    );
    assert_eq!(
        sm.lookup(&Locus::field(Element::Tool(0), "name")),
        Some(Pos::new(3, 11))
    );
    assert_eq!(
        sm.lookup(&Locus::field(Element::Tool(1), "name")),
        Some(Pos::new(4, 5))
    );
    assert_eq!(
        sm.lookup(&Locus::field(Element::Tool(0), "sig")),
        Some(Pos::new(2, 10))
    );
}

#[test]
fn a_body_between_two_rules_is_the_body() {
    let p = ok("---\nname: demo\nnodes:\n  - id: a\n---\n").program;
    assert_eq!(p.name.as_deref(), Some("demo"));
    assert_eq!(p.instructions().len(), 1);
    let p = ok("---\nname: demo\ndescription: Only a frontmatter.\n---\n").program;
    assert_eq!(p.description.as_deref(), Some("Only a frontmatter."));
    assert!(p.nodes.is_none());
    let mut p = Program::default();
    p.frontmatter_extra.push(("nodes".into(), Value::Int(1)));
    assert_eq!(write(&p), "---\nnodes: 1\n---\n{}\n");
    assert_eq!(ok(&write(&p)).program, p);
}

#[test]
fn a_bad_escape_is_placed_at_its_backslash_not_at_the_opening_quote() {
    let far = "x".repeat(5_000);
    for (escape, kind) in [
        ("\\q", "unknown escape"),
        ("\\x4g", "hexadecimal"),
        ("\\ud800 and more", "low surrogate"),
        ("\\udc00", "surrogate"),
        ("\\U00110000", "Unicode"),
    ] {
        // Two good escapes and a line break before the bad one.
        let text = format!(
            "walker:\n  name: w\n  description: \"a \\\" b \\u00e9 {far}\n    π {escape} c\"\n"
        );
        let e = err(&text);
        assert!(e.message.contains(kind), "{escape}: {}", e.message);
        let shown = escape.split(' ').next().unwrap_or(escape);
        assert!(e.message.contains(&format!("`{shown}`")), "{}", e.message);
        assert_eq!(e.pos, Some(Pos::new(4, 7)), "{escape}: {}", e.message);
    }
    // Good escapes everywhere, a surrogate pair among them, read as written.
    let doc = ok("nodes:\n  - id: a\n    doc: \"\\ud83d\\ude00 \\x41 \\U0001F600 \\\n    end\"\n");
    let nodes = doc.program.nodes.unwrap_or_default();
    assert_eq!(nodes[0].doc.as_deref(), Some("😀 A 😀 end"));
}
