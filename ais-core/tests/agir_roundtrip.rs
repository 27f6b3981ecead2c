//! Property tests: for generated programs covering every field of the model (unknown extras,
//! unicode, multi-line text with and without trailing newlines, text that needs quoting), the
//! canonical writer produces strict YAML that reads back as the same program, and writing that
//! again gives the same bytes.

use ais_core::agir::{read, write};
use ais_core::{
    AcceptedDeviation, Bearer, DeviationKind, ElementRef, Obligation, ObligationKind, Provenance,
    SourceRef,
};
use ais_core::{
    Autonomy, Carry, Concurrency, ContentKind, Edge, EnumMember, Field, Instruction, Isolation,
    Knowledge, McpBinding, McpServer, Modality, Opcode, Owner, Program, Role, SpawnSource, Surface,
    Tool, ToolSurface, Type, TypeDecl, TypeKind, Value, Walker,
};
use indexmap::IndexMap;
use proptest::collection::vec;
use proptest::option::of;
use proptest::prelude::*;

/// Text that exercises the writer's quoting and block choices.
fn text() -> impl Strategy<Value = String> {
    let tricky = prop::sample::select(vec![
        "",
        "true",
        "False",
        "null",
        "~",
        "NULL",
        "12",
        "-3",
        "0.1",
        "1e3",
        ".inf",
        ".nan",
        "0x1F",
        "yes",
        "off",
        "a: b",
        "a:b",
        "a #b",
        "#x",
        " lead",
        "trail ",
        "[x]",
        "{x}",
        "a,b",
        "-x",
        "- x",
        "? x",
        "*x",
        "&x",
        "!x",
        "|x",
        ">x",
        "%x",
        "@x",
        "`x",
        "'q'",
        "\"dq\"",
        "\\back",
        "a\tb",
        "\u{85}",
        "\u{2028}x",
        "\u{1}",
        "\u{FEFF}",
        "---",
        "...",
        "ünïcødé",
        "名前",
        "emoji 🎉",
        "x\ny",
        "x\n",
        "x\n\n",
        "\nx",
        "x\n  y\n",
        "a \nb",
        "def f():\n\treturn 1\n",
        "\n",
        " \nx",
        "a:{x",
        "b:[y]",
        "c:{ d: e }",
        "x\n \ny",
        "x\r\ny",
        "<<",
        "=",
    ])
    .prop_map(String::from);
    prop_oneof![
        3 => "[a-z_][a-z0-9_]{0,8}",
        2 => tricky,
        1 => "\\PC{0,12}",
        1 => any::<String>().prop_map(|s| s.chars().take(12).collect()),
        1 => vec("[ -~]{0,10}", 1..4).prop_map(|lines| lines.join("\n")),
    ]
}

fn names() -> impl Strategy<Value = Vec<String>> {
    vec(text(), 0..3)
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::Float),
        text().prop_map(Value::Str),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..3).prop_map(Value::List),
            vec((text(), inner), 0..3)
                .prop_map(|kv| Value::Map(kv.into_iter().collect::<IndexMap<_, _>>())),
        ]
    })
}

/// Unknown fields: keys that no element knows, unique.
fn extras() -> impl Strategy<Value = Vec<(String, Value)>> {
    vec(("x_[a-z]{1,4}", value()), 0..2).prop_map(|kv| {
        let mut seen = Vec::new();
        kv.into_iter()
            .filter(|(k, _)| {
                let fresh = !seen.contains(k);
                seen.push(k.clone());
                fresh
            })
            .collect()
    })
}

/// Frontmatter keys may also be spelled like body sections.
fn front_extras() -> impl Strategy<Value = Vec<(String, Value)>> {
    vec(
        (
            prop_oneof![
                "x_[a-z]{1,4}",
                prop::sample::select(vec!["nodes", "tools", "shape"]).prop_map(String::from)
            ],
            value(),
        ),
        0..2,
    )
    .prop_map(|kv| {
        let mut seen = Vec::new();
        kv.into_iter()
            .filter(|(k, _)| {
                let fresh = !seen.contains(k);
                seen.push(k.clone());
                fresh
            })
            .collect()
    })
}

fn ty() -> impl Strategy<Value = Type> {
    prop::sample::select(vec![
        "str",
        "int",
        "float",
        "bool",
        "any",
        "path",
        "list",
        "list[str]",
        "dict",
        "dict[str, int]",
        "list[list[Op]]",
        "Args",
        "outcome",
        "not a type",
        "list[",
    ])
    .prop_map(Type::parse)
}

fn parsed<T: 'static + Clone + std::fmt::Debug>(
    words: &'static [&'static str],
    parse: fn(&str) -> T,
) -> impl Strategy<Value = T> {
    prop::sample::select(words).prop_map(parse)
}

fn carry() -> impl Strategy<Value = Carry> {
    (
        text(),
        of(ty()),
        of(parsed(&["input", "output", ""], Role::parse)),
        of(text()),
        of(text()),
        of(value()),
        of(names()),
        extras(),
    )
        .prop_map(
            |(name, ty, role, produced_by, doc, default, traces_to, extra)| Carry {
                name,
                ty,
                role,
                produced_by,
                doc,
                default,
                traces_to,
                extra,
            },
        )
}

fn concurrency() -> impl Strategy<Value = Concurrency> {
    let spawn = prop_oneof![
        Just(SpawnSource::None),
        names().prop_map(SpawnSource::List),
        any::<i64>().prop_map(|i| SpawnSource::Other(Value::Int(i))),
        Just(SpawnSource::Other(Value::Map(
            [("each".to_owned(), Value::from("file"))]
                .into_iter()
                .collect()
        ))),
    ];
    (
        of(parsed(
            &["private_write", "shared_read", "orchestrator_owned", "lax"],
            Isolation::parse,
        )),
        of(spawn),
        of(any::<i64>()),
        of(text()),
        extras(),
    )
        .prop_map(
            |(isolation, spawn, max_parallel, reason, extra)| Concurrency {
                isolation,
                spawn,
                max_parallel,
                reason,
                extra,
            },
        )
}

fn instruction() -> impl Strategy<Value = Instruction> {
    let opcode = prop_oneof![
        prop::sample::select(Opcode::ALL.to_vec()),
        Just(Opcode::Unknown("GEN-MAGIC".into())),
        Just(Opcode::Unknown(String::new())),
    ];
    (
        (
            text(),
            opcode,
            of(parsed(&["code", "model", "human"], Owner::parse)),
            names(),
            names(),
            of(text()),
            of(text()),
            of(text()),
            of(parsed(&["artifact", "workspace", "disk"], Surface::parse)),
            of(ty()),
        ),
        (
            of(text()),
            of((names(), extras()).prop_map(|(tools, extra)| Autonomy { tools, extra })),
            of(concurrency()),
            of(text()),
            of(any::<i64>()),
            of(text()),
            of(text()),
            of(names()),
            of(text()),
            extras(),
        ),
    )
        .prop_map(
            |(
                (id, opcode, owner, reads, writes, doc, tool, op, surface, output),
                (
                    body,
                    autonomy,
                    concurrency,
                    verdict,
                    cap,
                    counter,
                    target,
                    traces_to,
                    model,
                    extra,
                ),
            )| Instruction {
                id,
                opcode,
                owner,
                reads,
                writes,
                doc,
                tool,
                op,
                surface,
                output,
                body,
                autonomy,
                concurrency,
                verdict,
                cap,
                counter,
                target,
                traces_to,
                model,
                extra,
            },
        )
}

fn edge() -> impl Strategy<Value = Edge> {
    (
        text(),
        text(),
        of(parsed(
            &["mandatory", "discretionary", "forbidden", "maybe"],
            Modality::parse,
        )),
        of(text()),
        of(names()),
        extras(),
    )
        .prop_map(|(from, to, modality, guard, traces_to, extra)| Edge {
            from,
            to,
            modality,
            guard,
            traces_to,
            extra,
        })
}

/// An element reference: names are identifiers, so that no name reads as another plane's prefix.
fn element_ref() -> impl Strategy<Value = ElementRef> {
    let id = "[a-z_][a-z0-9_]{0,8}";
    prop_oneof![
        id.prop_map(ElementRef::Node),
        id.prop_map(ElementRef::Tool),
        id.prop_map(ElementRef::Knowledge),
        id.prop_map(ElementRef::Carry),
        (id, id).prop_map(|(from, to)| ElementRef::Edge { from, to }),
    ]
}

fn obligation() -> impl Strategy<Value = Obligation> {
    (
        text(),
        of(parsed(
            &[
                "step",
                "io",
                "human_gate",
                "knowledge",
                "grounding",
                "constraint",
                "HIL",
            ],
            ObligationKind::parse,
        )),
        of(parsed(
            &["mandatory", "forbidden", "discretionary", "may"],
            Modality::parse,
        )),
        of(parsed(
            &["agent", "user", "environment", "tool"],
            Bearer::parse,
        )),
        of(text()),
        of(vec(element_ref(), 0..3)),
        extras(),
    )
        .prop_map(
            |(id, kind, force, bearer, quote, realized_by, extra)| Obligation {
                id,
                kind,
                force,
                bearer,
                quote,
                realized_by,
                extra,
            },
        )
}

fn provenance() -> impl Strategy<Value = Provenance> {
    let source = (of(text()), of(text()), extras()).prop_map(|(path, digest, extra)| SourceRef {
        path,
        digest,
        extra,
    });
    let deviation = (
        of(text()),
        of(parsed(
            &["dropped", "added", "remodalized", "weakened", "moved"],
            DeviationKind::parse,
        )),
        of(element_ref()),
        of(text()),
        extras(),
    )
        .prop_map(
            |(obligation, kind, element, reason, extra)| AcceptedDeviation {
                obligation,
                kind,
                element,
                reason,
                extra,
            },
        );
    (
        of(source),
        of(vec(obligation(), 0..3)),
        of(vec(deviation, 0..2)),
        extras(),
    )
        .prop_map(|(source, obligations, deviations, extra)| Provenance {
            source,
            obligations,
            deviations,
            extra,
        })
}

fn knowledge() -> impl Strategy<Value = Knowledge> {
    let content = (
        Just(ContentKind::ALL.to_vec()).prop_shuffle(),
        0..4usize,
        vec(value(), 4),
    )
        .prop_map(|(kinds, n, values)| kinds.into_iter().take(n).zip(values).collect());
    (text(), names(), content, of(names()), extras()).prop_map(
        |(name, resident_on, content, traces_to, extra)| Knowledge {
            name,
            resident_on,
            content,
            traces_to,
            extra,
        },
    )
}

fn tool() -> impl Strategy<Value = Tool> {
    (
        text(),
        of(text()),
        of(parsed(
            &["SENSE", "ACT", "ACT·artifact", "PEEK"],
            ToolSurface::parse,
        )),
        of(names()),
        of(text()),
        of(text()),
        of(text()),
        of(text()),
        of(names()),
        extras(),
        of(mcp_binding()),
    )
        .prop_map(
            |(name, sig, surface, serves, body, lang, command, doc, traces_to, extra, mcp)| Tool {
                name,
                sig,
                surface,
                serves,
                body,
                lang,
                command,
                doc,
                mcp,
                traces_to,
                extra,
            },
        )
}

fn mcp_binding() -> impl Strategy<Value = McpBinding> {
    (text(), of(text()), extras()).prop_map(|(server, tool, extra)| McpBinding {
        server,
        tool,
        extra,
    })
}

/// Environment variables: unique names, any values.
fn env() -> impl Strategy<Value = Vec<(String, String)>> {
    vec(("[A-Z_]{1,6}", text()), 0..3).prop_map(|kv| {
        let mut seen = Vec::new();
        kv.into_iter()
            .filter(|(k, _)| {
                let fresh = !seen.contains(k);
                seen.push(k.clone());
                fresh
            })
            .collect()
    })
}

fn mcp_server() -> impl Strategy<Value = McpServer> {
    (
        text(),
        of(text()),
        of(names()),
        of(env()),
        of(text()),
        of(text()),
        of(text()),
        extras(),
    )
        .prop_map(
            |(name, command, args, env, cwd, url, doc, extra)| McpServer {
                name,
                command,
                args,
                env,
                cwd,
                url,
                doc,
                extra,
            },
        )
}

fn type_decl() -> impl Strategy<Value = TypeDecl> {
    let member = (text(), of(text())).prop_map(|(name, doc)| EnumMember { name, doc });
    let field = (text(), of(ty()), of(text()), of(value()), extras()).prop_map(
        |(name, ty, doc, default, extra)| Field {
            name,
            ty,
            doc,
            default,
            extra,
        },
    );
    let kind = prop_oneof![
        vec(member, 0..3).prop_map(TypeKind::Enum),
        vec(field, 0..3).prop_map(TypeKind::Object),
        Just(TypeKind::Unknown(String::new())),
        Just(TypeKind::Unknown("record".into())),
    ];
    (text(), kind, of(text()), extras()).prop_map(|(name, kind, doc, extra)| TypeDecl {
        name,
        kind,
        doc,
        extra,
    })
}

fn program() -> impl Strategy<Value = Program> {
    (
        (
            of(text()),
            of(text()),
            front_extras(),
            of(text()),
            of(any::<bool>()),
            of(text()),
            of(vec(type_decl(), 0..3)),
            of(vec(knowledge(), 0..3)),
        ),
        (
            of(vec(tool(), 0..3)),
            of((of(text()), of(vec(carry(), 0..3)), extras()).prop_map(
                |(name, carries, extra)| Walker {
                    name,
                    carries,
                    extra,
                },
            )),
            of(vec(instruction(), 0..3)),
            of(vec(edge(), 0..3)),
            of(concurrency()),
            of(provenance()),
            extras(),
            of(vec(mcp_server(), 0..3)),
        ),
    )
        .prop_map(
            |(
                (
                    name,
                    description,
                    frontmatter_extra,
                    agir_version,
                    standalone,
                    shape,
                    types,
                    knowledge,
                ),
                (tools, walker, nodes, edges, concurrency, faithfulness, extra, mcp_servers),
            )| Program {
                name,
                description,
                frontmatter_extra,
                agir_version,
                standalone,
                shape,
                types,
                knowledge,
                tools,
                walker,
                nodes,
                edges,
                concurrency,
                faithfulness,
                mcp_servers,
                extra,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn written_programs_read_back_the_same(p in program()) {
        let text = write(&p);
        let doc = read(&text).map_err(|e| TestCaseError::fail(format!("{e:?}\n{text}")))?;
        prop_assert!(doc.relaxations.is_empty(), "relaxed: {:?}\n{}", doc.relaxations, text);
        prop_assert_eq!(&doc.program, &p, "{}", text);
        prop_assert_eq!(write(&doc.program), text);
    }
}

/// A small document touching every relaxation and spelling, for mutation.
const SEED: &str = "```yaml\n---\nname: demo\n---\ntypes:\n  - Op: {kind: enum, members: [a, b]}\nwalker:\n  carries:\n    task: { type: list[str], role: input }\n    out:{ type: str }\nknowledge:\n  - id: k\n    doc: Title : <t>\nnodes:\n  - id: a\n    type: GEN-RAW\n    reads: [task]\n    doc: |\n      two\n      lines\nedges:\n  - {from: a, to: b, guard: \"x == 1\"}\nx_anchor: &a [1, 2]\nx_use: *a\n```\n";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// No text makes the reader panic or hang; every error is located.
    #[test]
    fn any_text_reads_or_fails_with_a_position(text in "\\PC{0,200}|[-:{}\\[\\]#&*!|>'\" \na-z0-9]{0,200}") {
        if let Err(e) = read(&text) {
            prop_assert!(e.pos.is_some() || text.is_empty(), "{e:?}");
        }
    }

    /// Cutting, duplicating or replacing bytes of a realistic document never panics, and
    /// whatever reads also round-trips.
    #[test]
    fn mutated_documents_never_panic(cuts in vec((0..SEED.len(), 0..8usize, "[-:{}\\[\\]#&*| \n\"'a-z]{0,3}"), 1..4)) {
        let mut text = SEED.to_owned();
        for (at, len, insert) in cuts {
            let mut at = at.min(text.len());
            while !text.is_char_boundary(at) { at -= 1; }
            let mut end = (at + len).min(text.len());
            while !text.is_char_boundary(end) { end -= 1; }
            text.replace_range(at..end, &insert);
        }
        match read(&text) {
            Ok(doc) => {
                let written = write(&doc.program);
                let again = read(&written).map_err(|e| TestCaseError::fail(format!("{e:?}\n{written}")))?;
                prop_assert_eq!(again.program, doc.program);
            }
            Err(e) => prop_assert!(e.pos.is_some(), "{:?}", e),
        }
    }
}

#[test]
fn the_mutation_seed_reads_with_its_relaxations() {
    let doc = read(SEED).unwrap();
    assert_eq!(doc.relaxations.len(), 3, "{:?}", doc.relaxations);
    assert_eq!(doc.program.carries().len(), 2);
    assert_eq!(
        doc.program.instructions()[0].doc.as_deref(),
        Some("two\nlines\n")
    );
    assert_eq!(
        doc.program.extra[1].1,
        Value::List(vec![Value::Int(1), Value::Int(2)])
    );
}
