//! The calling convention of spec §7: one test per binding rule and per example of the section.

use crate::bind_common;

use ais_core::bind::*;
use ais_core::{Field, OUTCOME_FIELDS, Opcode, Type, TypeDecl, TypeKind};
use bind_common::*;

// ---------------------------------------------------------------------------------------------
// §7.1 rule 1 — by name

#[test]
fn rule_1_binds_the_carry_named_like_the_parameter() {
    let p = program(
        vec![carry("plan_md", "str"), carry("plan_ok", "bool")],
        vec![with_tool(
            instr("verify", Opcode::Sense, &["plan_md"], &["plan_ok"]),
            "verify_has_tasks",
        )],
        vec![tool("verify_has_tasks", "(plan_md) -> bool", "SENSE")],
    );
    assert_eq!(
        pairs(&bind(&p, "verify", None)),
        [to_carry(Rule::Name, "plan_md")]
    );
}

#[test]
fn rule_1_outranks_position_and_role() {
    // reads in the opposite order of the parameters: names win over positions.
    let p = program(
        vec![carry("header_md", "str"), carry("tasks_md", "str")],
        vec![instr(
            "assemble",
            Opcode::Act,
            &["tasks_md", "header_md"],
            &[],
        )],
        vec![],
    );
    let b = bind_sig(&p, "assemble", "(header_md, tasks_md) -> str", None);
    assert_eq!(
        pairs(&b),
        [
            to_carry(Rule::Name, "header_md"),
            to_carry(Rule::Name, "tasks_md")
        ]
    );
}

#[test]
fn a_carry_bound_by_name_is_not_also_bound_by_role_to_an_earlier_parameter() {
    // `content` would take `note` by role; `note` is reserved for the parameter named `note`.
    let p = program(
        vec![carry("note", "str"), carry("draft", "str")],
        vec![instr("save", Opcode::Act, &["note", "draft"], &[])],
        vec![],
    );
    let b = bind_sig(&p, "save", "(content, note)", None);
    assert_eq!(
        pairs(&b),
        [to_carry(Rule::Role, "draft"), to_carry(Rule::Name, "note")]
    );
}

// ---------------------------------------------------------------------------------------------
// §7.4 — the carry-naming rule and the hijack

/// A search directory held in a carry named `path` redirects a later write (§7.4); renamed
/// `search_path`, it binds the search by role and leaves the write to the invocation.
#[test]
fn the_search_path_hijack_and_its_fix() {
    let build = |dir: &str| {
        program(
            vec![
                input("task", "str"),
                carry(dir, "str"),
                carry("hits", "str"),
                carry("report_md", "str"),
                carry("saved", "str"),
            ],
            vec![
                with_tool(instr("search", Opcode::Sense, &[dir], &["hits"]), "grep"),
                with_tool(
                    instr("save", Opcode::Act, &["report_md"], &["saved"]),
                    "write_file",
                ),
            ],
            vec![
                tool("grep", "(pattern, path) -> str", "SENSE"),
                tool("write_file", "(path, content) -> str", "ACT·artifact"),
            ],
        )
    };

    let hijacked = build("path");
    assert!(is_bare_param_name("path"));
    let save = bind(&hijacked, "save", Some("find TODOs and save as todo.md"));
    // The write's destination is the search directory: rule 1 reaches a carry `save` never reads.
    assert_eq!(save[0].rule, Rule::Name);
    assert_eq!(save[0].source, BindSource::Carry("path".into()));
    assert_eq!(save[1].source, BindSource::Carry("report_md".into()));

    let fixed = build("search_path");
    assert!(!is_bare_param_name("search_path"));
    let search = bind(&fixed, "search", None);
    assert_eq!(
        search[0],
        ParamBinding {
            param: "pattern".into(),
            rule: Rule::Unbound,
            source: BindSource::Null
        }
    );
    assert_eq!(search[1].rule, Rule::Role);
    assert_eq!(search[1].source, BindSource::Carry("search_path".into()));
    let save = bind(&fixed, "save", Some("find TODOs and save as todo.md"));
    assert_eq!(
        pairs(&save),
        [inv(Some("todo.md")), to_carry(Rule::Role, "report_md")]
    );
}

#[test]
fn the_bare_parameter_names_are_exactly_the_spec_list() {
    assert_eq!(
        BARE_PARAM_NAMES,
        ["path", "content", "text", "data", "file", "out", "dest"]
    );
    for n in BARE_PARAM_NAMES {
        assert!(is_bare_param_name(n));
    }
    for n in [
        "body",
        "filename",
        "target",
        "input_text",
        "csv_row",
        "out_file",
        "PATH",
        "",
    ] {
        assert!(!is_bare_param_name(n), "{n}");
    }
}

// ---------------------------------------------------------------------------------------------
// §7.1 rule 2 — by object field

fn args_program(read_spec: bool) -> ais_core::Program {
    let mut p = program(
        vec![
            carry("task", "str"),
            carry("spec", "Args"),
            carry("other", "Args"),
            carry("result", "outcome"),
        ],
        vec![instr(
            "render",
            Opcode::Code,
            if read_spec {
                &["other", "spec"]
            } else {
                &["task"]
            },
            &[],
        )],
        vec![],
    );
    p.types = Some(vec![TypeDecl {
        name: "Args".into(),
        kind: TypeKind::Object(vec![
            Field {
                name: "out".into(),
                ty: Some(Type::Str),
                ..Default::default()
            },
            Field {
                name: "width".into(),
                ty: Some(Type::Int),
                ..Default::default()
            },
        ]),
        ..Default::default()
    }]);
    p
}

#[test]
fn rule_2_binds_a_field_of_an_object_typed_read_carry_first() {
    let p = args_program(true);
    let b = bind_sig(&p, "render", "(width: int) -> str", None);
    // `other` is read first and has the field too.
    assert_eq!(b[0].rule, Rule::ObjectField);
    assert_eq!(
        b[0].source,
        BindSource::Field {
            carry: "other".into(),
            field: "width".into()
        }
    );
}

#[test]
fn rule_2_reaches_module_carries_like_rule_1() {
    let p = args_program(false);
    let b = bind_sig(&p, "render", "(width, error)", None);
    assert_eq!(
        b[0].source,
        BindSource::Field {
            carry: "spec".into(),
            field: "width".into()
        }
    );
    // The built-in `outcome` object has `ok`, `error`, `output`, `value`.
    assert_eq!(
        b[1].source,
        BindSource::Field {
            carry: "result".into(),
            field: "error".into()
        }
    );
}

#[test]
fn rule_2_outranks_role_and_does_not_use_up_the_carry() {
    // `out` is a path name, but the field `spec.out` binds first; `spec` itself stays available.
    let p = args_program(true);
    let b = bind_sig(&p, "render", "(out, data)", None);
    assert_eq!(b[0].rule, Rule::ObjectField);
    assert_eq!(b[0].carry(), Some("other"));
    assert_eq!(pairs(&b)[1], to_carry(Rule::Role, "other"));
}

#[test]
fn object_fields_reads_declared_objects_and_outcome() {
    let p = args_program(true);
    assert_eq!(
        ProgramIndex::new(&p).object_fields(&Type::Named("Args".into())),
        Some(vec!["out", "width"])
    );
    assert_eq!(
        ProgramIndex::new(&p).object_fields(&Type::Named("outcome".into())),
        Some(OUTCOME_FIELDS.iter().map(|(n, _)| *n).collect())
    );
    assert_eq!(
        ProgramIndex::new(&p).object_fields(&Type::Named("Nope".into())),
        None
    );
    assert_eq!(ProgramIndex::new(&p).object_fields(&Type::Str), None);
}

// ---------------------------------------------------------------------------------------------
// §7.1 rule 3 / §7.2 — by role

#[test]
fn rule_3_content_takes_the_first_non_path_carry_and_path_a_path_shaped_one() {
    let p = program(
        vec![carry("out_file", "str"), carry("document", "str")],
        vec![instr("save", Opcode::Act, &["out_file", "document"], &[])],
        vec![],
    );
    for sig in ["(content, path)", "(path, content)", "(Markdown, OUT_PATH)"] {
        let b = bind_sig(&p, "save", sig, None);
        let content = b.iter().position(|x| !is_path_name(&x.param)).unwrap();
        let path = 1 - content;
        assert_eq!(
            pairs(&b)[content],
            to_carry(Rule::Role, "document"),
            "{sig}"
        );
        assert_eq!(pairs(&b)[path], to_carry(Rule::Role, "out_file"), "{sig}");
    }
}

#[test]
fn rule_3_task_is_never_path_shaped() {
    let p = program(
        vec![input("task", "path"), carry("x_path", "str")],
        vec![instr("w", Opcode::Act, &["task", "x_path"], &[])],
        vec![],
    );
    let b = bind_sig(&p, "w", "(text, dest)", None);
    assert_eq!(
        pairs(&b),
        [to_carry(Rule::Role, "task"), to_carry(Rule::Role, "x_path")]
    );
}

#[test]
fn rule_3_typed_paths_count_as_paths() {
    // A carry declared `type: path` is path-shaped; a parameter annotated `: path` is a path
    // parameter, whatever their names.
    let p = program(
        vec![carry("target_dir", "path"), carry("notes", "str")],
        vec![instr("w", Opcode::Act, &["notes", "target_dir"], &[])],
        vec![],
    );
    assert!(ProgramIndex::new(&p).is_path_shaped_carry("target_dir"));
    assert!(!is_path_shaped("target_dir"));
    let b = bind_sig(&p, "w", "(where: path, body)", None);
    assert_eq!(
        pairs(&b),
        [
            to_carry(Rule::Role, "target_dir"),
            to_carry(Rule::Role, "notes")
        ]
    );
}

#[test]
fn rule_3_does_not_give_one_carry_to_two_parameters() {
    let p = program(
        vec![carry("a", "str"), carry("b", "str")],
        vec![instr("w", Opcode::Code, &["a", "b"], &[])],
        vec![],
    );
    let b = bind_sig(&p, "w", "(content, text)", None);
    assert_eq!(
        pairs(&b),
        [to_carry(Rule::Role, "a"), to_carry(Rule::Role, "b")]
    );
}

#[test]
fn the_vocabularies_are_the_appendix_a4_lists() {
    assert_eq!(
        CONTENT_NAMES,
        [
            "content", "text", "data", "body", "code", "source", "markdown", "html", "payload"
        ]
    );
    assert_eq!(PATH_NAMES.len(), 12);
    for n in [
        "path",
        "out",
        "dest",
        "outfile",
        "filename",
        "file",
        "out_path",
        "output_path",
        "outpath",
        "target",
        "target_path",
        "dest_path",
    ] {
        assert!(is_path_name(n), "{n}");
        assert!(!is_content_name(n), "{n}");
    }
    for n in [
        "path",
        "filename",
        "a_path",
        "in_file",
        "x_filename",
        "y_dest",
        "z_out",
        "w_target",
    ] {
        assert!(is_path_shaped(n), "{n}");
    }
    for n in [
        "task", "TASK", "out", "dest", "file", "pathway", "outfile", "_out", "",
    ] {
        assert!(!is_path_shaped(n), "{n}");
    }
}

// ---------------------------------------------------------------------------------------------
// §7.1 rule 4 — positionally

#[test]
fn rule_4_binds_the_ith_read_carry() {
    let p = program(
        vec![carry("rows", "list"), carry("limit", "int")],
        vec![instr("take", Opcode::Code, &["rows", "limit"], &[])],
        vec![],
    );
    let b = bind_sig(&p, "take", "(items, n)", None);
    assert_eq!(
        pairs(&b),
        [
            to_carry(Rule::Position, "rows"),
            to_carry(Rule::Position, "limit")
        ]
    );
}

#[test]
fn rule_4_never_hands_a_non_path_carry_to_a_path_parameter() {
    let p = program(
        vec![carry("document", "str")],
        vec![instr("w", Opcode::Sense, &["document"], &[])],
        vec![],
    );
    let b = bind_sig(&p, "w", "(filename)", None);
    assert_eq!(pairs(&b), [inv(None)]);
    // A path-shaped carry is fine positionally (here rule 3 takes it first).
    let p = program(
        vec![carry("in_file", "str")],
        vec![instr("w", Opcode::Sense, &["in_file"], &[])],
        vec![],
    );
    assert_eq!(
        pairs(&bind_sig(&p, "w", "(path)", None)),
        [to_carry(Rule::Role, "in_file")]
    );
}

#[test]
fn rule_4_skips_knowledge_keys_and_carries_already_bound() {
    let mut p = program(
        vec![carry("a", "str"), carry("b", "str")],
        vec![instr("f", Opcode::Code, &["style_guide", "a", "b"], &[])],
        vec![],
    );
    p.knowledge = Some(vec![knowledge("style_guide", &["f"])]);
    let (_, f) = p.instruction("f").unwrap();
    assert_eq!(ProgramIndex::new(&p).read_carries(f), ["a", "b"]);
    // `x` is 0th: `a`. `b` is taken by name, so `y` (1st) finds it used and is unbound.
    let b = bind_sig(&p, "f", "(x, y, b)", None);
    assert_eq!(
        pairs(&b),
        [
            to_carry(Rule::Position, "a"),
            null(),
            to_carry(Rule::Name, "b")
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// §7.1 — the transposition example

#[test]
fn save_content_path_and_save_path_content_both_bind_the_document_to_content() {
    let p = program(
        vec![input("task", "str"), carry("document", "str")],
        vec![instr("save", Opcode::Act, &["document"], &[])],
        vec![],
    );
    let task = Some("write the memo and save as memo.md");
    let cp = bind_sig(&p, "save", "(content, path) -> str", task);
    assert_eq!(
        pairs(&cp),
        [to_carry(Rule::Role, "document"), inv(Some("memo.md"))]
    );
    let pc = bind_sig(&p, "save", "(path, content) -> str", task);
    assert_eq!(
        pairs(&pc),
        [inv(Some("memo.md")), to_carry(Rule::Role, "document")]
    );
    // Without role binding, position would have put the document into `path`.
    assert_ne!(pc[0].source, BindSource::Carry("document".into()));
}

// ---------------------------------------------------------------------------------------------
// §7.2 / Appendix C — save_plan(plan_md, path) reading [plan_md]

#[test]
fn save_plan_path_falls_to_the_invocation() {
    let p = program(
        vec![
            input("task", "str"),
            carry("plan_md", "str"),
            carry("plan_file", "str"),
        ],
        vec![with_tool(
            instr("save", Opcode::Act, &["plan_md"], &["plan_file"]),
            "save_plan",
        )],
        vec![tool("save_plan", "(plan_md, path) -> str", "ACT·artifact")],
    );
    assert_eq!(
        pairs(&bind(&p, "save", None)),
        [to_carry(Rule::Name, "plan_md"), inv(None)]
    );
    assert_eq!(
        pairs(&bind(
            &p,
            "save",
            Some("Plan the auth feature; save it to docs/plans/auth.md")
        )),
        [
            to_carry(Rule::Name, "plan_md"),
            inv(Some("docs/plans/auth.md"))
        ]
    );
    // Invocation text naming no file: rule 5 does not apply; the runtime derives a destination.
    assert_eq!(
        pairs(&bind(&p, "save", Some("plan the auth feature"))),
        [to_carry(Rule::Name, "plan_md"), null()]
    );
}

// ---------------------------------------------------------------------------------------------
// §7.3 — the invocation fallback

#[test]
fn clean_data_csv_and_save_as_out_csv() {
    let p = program(
        vec![
            input("task", "str"),
            carry("rows", "list"),
            carry("clean_rows", "list"),
            carry("written", "str"),
        ],
        vec![
            with_tool(instr("load", Opcode::Sense, &[], &["rows"]), "read_csv"),
            with_tool(
                instr("save", Opcode::Act, &["clean_rows"], &["written"]),
                "write_csv",
            ),
        ],
        vec![
            tool("read_csv", "(path: str) -> list", "SENSE"),
            tool(
                "write_csv",
                "(table: list, out_path: str) -> str",
                "ACT·artifact",
            ),
        ],
    );
    let task = Some("clean data.csv and save as out.csv");
    assert_eq!(pairs(&bind(&p, "load", task)), [inv(Some("data.csv"))]);
    // (A parameter named `rows` would bind the carry `rows` by name, not `clean_rows`: rule 1
    // reaches every carry of the module.)
    assert_eq!(
        pairs(&bind(&p, "save", task)),
        [to_carry(Rule::Position, "clean_rows"), inv(Some("out.csv"))]
    );
}

#[test]
fn a_code_served_by_an_act_artifact_tool_resolves_write_side() {
    let task = Some("clean data.csv and save as out.csv");
    for surface in ["ACT·artifact", "ACT artifact", "Act-Artifact"] {
        let p = program(
            vec![input("task", "str"), carry("report", "str")],
            vec![instr("export", Opcode::Code, &["report"], &[])],
            vec![serving(
                tool("export_csv", "(content, path) -> str", surface),
                &["export"],
            )],
        );
        let (_, i) = p.instruction("export").unwrap();
        assert_eq!(ProgramIndex::new(&p).access(i), Access::Write, "{surface}");
        assert_eq!(
            pairs(&bind(&p, "export", task)),
            [to_carry(Rule::Role, "report"), inv(Some("out.csv"))]
        );
    }
    // The same CODE served by a workspace ACT tool, or a SENSE tool, reads side.
    for surface in ["ACT", "SENSE", ""] {
        let p = program(
            vec![input("task", "str"), carry("report", "str")],
            vec![instr("export", Opcode::Code, &["report"], &[])],
            vec![serving(
                tool("export_csv", "(content, path) -> str", surface),
                &["export"],
            )],
        );
        let (_, i) = p.instruction("export").unwrap();
        assert_eq!(ProgramIndex::new(&p).access(i), Access::Read, "{surface}");
        assert_eq!(
            bind(&p, "export", task)[1].source,
            BindSource::Invocation(Some("data.csv".into()))
        );
    }
}

#[test]
fn access_follows_the_opcode_then_the_tool_surface() {
    let p = program(
        vec![],
        vec![
            instr("a", Opcode::Act, &[], &[]),
            instr("s", Opcode::Sense, &[], &[]),
            with_tool(instr("s2", Opcode::Sense, &[], &[]), "art"),
            with_tool(instr("r", Opcode::Route, &[], &[]), "art"),
            instr("c", Opcode::Code, &[], &[]),
            instr("g", Opcode::GenRaw, &[], &[]),
            instr("u", Opcode::Code, &[], &[]),
        ],
        vec![
            tool("art", "(path)", "ACT·artifact"),
            tool("u", "(path)", "SOMETHING"),
        ],
    );
    let side = |id: &str| ProgramIndex::new(&p).access(p.instruction(id).unwrap().1);
    assert_eq!(side("a"), Access::Write);
    assert_eq!(side("s"), Access::Read);
    assert_eq!(side("s2"), Access::Read); // a SENSE is a read whatever its tool says
    assert_eq!(side("r"), Access::Write);
    assert_eq!(side("c"), Access::Read);
    assert_eq!(side("g"), Access::Read);
    assert_eq!(side("u"), Access::Write); // an unknown surface is treated as ACT·artifact
}

#[test]
fn bound_tools_union_the_three_mechanisms_in_declaration_order() {
    let p = program(
        vec![],
        vec![with_tool(instr("step", Opcode::Code, &[], &[]), "c")],
        vec![
            serving(tool("a", "()", "ACT"), &["step", "other"]),
            tool("b", "()", "ACT"),
            tool("c", "()", "ACT"),
            tool("step", "()", "ACT"),
        ],
    );
    let (_, i) = p.instruction("step").unwrap();
    let names: Vec<&str> = ProgramIndex::new(&p)
        .bound_tools(i)
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(names, ["a", "c", "step"]);
}

// ---------------------------------------------------------------------------------------------
// §7.1 rule 6 — unbound

#[test]
fn rule_6_leaves_the_rest_null() {
    let p = program(
        vec![carry("a", "str")],
        vec![instr("f", Opcode::Code, &["a"], &[])],
        vec![],
    );
    let b = bind_sig(&p, "f", "(x, y, z)", Some("open in.txt"));
    assert_eq!(pairs(&b), [to_carry(Rule::Position, "a"), null(), null()]);
    assert_eq!(b[2].param, "z");
    assert!(bind_sig(&p, "f", "()", None).is_empty());
}

#[test]
fn a_weaker_rule_never_takes_a_carry_a_stronger_rule_bound() {
    // `content` takes `x` by role before `a` could take it positionally; `a` stays unbound
    // rather than receive the same value twice.
    let p = program(
        vec![carry("x", "str"), carry("y", "str")],
        vec![instr("f", Opcode::Code, &["x", "y"], &[])],
        vec![],
    );
    let b = bind_sig(&p, "f", "(a, content)", None);
    assert_eq!(pairs(&b), [null(), to_carry(Rule::Role, "x")]);
}

#[test]
fn rules_number_and_describe_themselves() {
    let all = [
        Rule::Name,
        Rule::ObjectField,
        Rule::Role,
        Rule::Position,
        Rule::InvocationFallback,
        Rule::Unbound,
    ];
    for (i, r) in all.into_iter().enumerate() {
        assert_eq!(usize::from(r.number()), i + 1);
    }
    assert_eq!(Rule::Position.describe(), "positionally");
}

// ---------------------------------------------------------------------------------------------
// §7.1 last paragraph / §7.6 — SU slots

fn slot_program(n: usize, extra: &[&str]) -> ais_core::Program {
    let mut names: Vec<String> = (1..=n).map(|i| format!("c{i}")).collect();
    names.extend(extra.iter().map(|s| s.to_string()));
    let reads: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut carries: Vec<_> = names
        .iter()
        .filter(|n| !n.starts_with("kb"))
        .map(|n| carry(n, "str"))
        .collect();
    carries.push(carry("out", "str"));
    let mut p = program(
        carries,
        vec![instr("fill", Opcode::GenFill, &reads, &["out"])],
        vec![],
    );
    p.knowledge = Some(vec![
        knowledge("kb_read", &[]),
        knowledge("kb_resident", &["fill"]),
        knowledge("kb_elsewhere", &["other"]),
    ]);
    p
}

#[test]
fn a_slot_takes_its_read_carries_in_order_without_knowledge() {
    let p = slot_program(12, &["kb_read"]);
    let slot = ProgramIndex::new(&p).bind_slot(p.instruction("fill").unwrap().1);
    assert_eq!(slot.operands.len(), 12);
    assert!(
        slot.operands
            .iter()
            .all(|o| matches!(o, SlotOperand::Carry(_)))
    );
    assert_eq!(slot.names()[0], "c1");
    assert_eq!(slot.names()[11], "c12");
    assert_eq!(slot.knowledge, ["kb_read", "kb_resident"]);
}

#[test]
fn thirteen_reads_fold_the_excess_into_one_context_operand() {
    let p = slot_program(13, &[]);
    let slot = ProgramIndex::new(&p).bind_slot(p.instruction("fill").unwrap().1);
    assert_eq!(slot.operands.len(), SLOT_ARITY_CAP);
    assert_eq!(slot.names()[10], "c11");
    assert_eq!(
        slot.operands[11],
        SlotOperand::Context {
            name: "context".into(),
            carries: vec!["c12".into(), "c13".into()]
        }
    );
    let p = slot_program(30, &[]);
    let slot = ProgramIndex::new(&p).bind_slot(p.instruction("fill").unwrap().1);
    assert_eq!(slot.operands.len(), SLOT_ARITY_CAP);
    let SlotOperand::Context { carries, .. } = &slot.operands[11] else {
        panic!("context expected")
    };
    assert_eq!(carries.len(), 30 - 11);
}

#[test]
fn the_context_operand_never_shadows_a_carry_operand() {
    let p = slot_program(12, &["context"]);
    let p = {
        let mut p = p;
        // put `context` among the first eleven reads
        if let Some(nodes) = p.nodes.as_mut() {
            nodes[0].reads.rotate_right(1);
        }
        p
    };
    let slot = ProgramIndex::new(&p).bind_slot(p.instruction("fill").unwrap().1);
    assert_eq!(slot.names()[0], "context");
    assert_eq!(slot.operands[11].name(), "context_2");
}

#[test]
fn a_slot_binds_the_same_operands_however_often_it_is_asked() {
    // Declaration and call site use the same function: they cannot disagree.
    let p = slot_program(20, &["kb_read"]);
    let i = p.instruction("fill").unwrap().1;
    assert_eq!(
        ProgramIndex::new(&p).bind_slot(i),
        ProgramIndex::new(&p).bind_slot(i)
    );
}

#[test]
fn duplicate_and_dangling_reads_are_not_operands() {
    let p = program(
        vec![carry("a", "str"), carry("b", "str")],
        vec![instr(
            "g",
            Opcode::GenRaw,
            &["a", "ghost", "a", "b", "task"],
            &[],
        )],
        vec![],
    );
    let slot = ProgramIndex::new(&p).bind_slot(p.instruction("g").unwrap().1);
    // `task` is the invocation input even when undeclared.
    assert_eq!(slot.names(), ["a", "b", "task"]);
}

// ---------------------------------------------------------------------------------------------
// Appendix C — the conforming plan writer, every DU instruction bound

#[test]
fn appendix_c_binds_every_du_instruction() {
    let mut p = program(
        vec![
            input("task", "str"),
            carry("header_md", "str"),
            carry("tasks_md", "str"),
            carry("plan_md", "str"),
            carry("plan_ok", "bool"),
            carry("plan_file", "str"),
        ],
        vec![
            instr("draft_header", Opcode::GenRaw, &["task"], &["header_md"]),
            instr(
                "write_tasks",
                Opcode::GenRaw,
                &["task", "header_md"],
                &["tasks_md"],
            ),
            with_tool(
                instr(
                    "assemble",
                    Opcode::Act,
                    &["header_md", "tasks_md"],
                    &["plan_md"],
                ),
                "assemble_plan",
            ),
            with_tool(
                instr("verify", Opcode::Sense, &["plan_md"], &["plan_ok"]),
                "verify_has_tasks",
            ),
            with_tool(
                instr("save", Opcode::Act, &["plan_md"], &["plan_file"]),
                "save_plan",
            ),
            instr("done", Opcode::Terminal, &["plan_file"], &[]),
        ],
        vec![
            tool("assemble_plan", "(header_md, tasks_md) -> str", "ACT"),
            tool("verify_has_tasks", "(plan_md) -> bool", "SENSE"),
            tool("save_plan", "(plan_md, path) -> str", "ACT·artifact"),
        ],
    );
    p.knowledge = Some(vec![knowledge("task_format", &["write_tasks"])]);
    let task = Some("Write an implementation plan for login; save it as plans/login.md");
    assert_eq!(
        pairs(&bind(&p, "assemble", task)),
        [
            to_carry(Rule::Name, "header_md"),
            to_carry(Rule::Name, "tasks_md")
        ]
    );
    assert_eq!(
        pairs(&bind(&p, "verify", task)),
        [to_carry(Rule::Name, "plan_md")]
    );
    assert_eq!(
        pairs(&bind(&p, "save", task)),
        [to_carry(Rule::Name, "plan_md"), inv(Some("plans/login.md"))]
    );
    let slot = ProgramIndex::new(&p).bind_slot(p.instruction("write_tasks").unwrap().1);
    assert_eq!(slot.names(), ["task", "header_md"]);
    assert_eq!(slot.knowledge, ["task_format"]);
}
