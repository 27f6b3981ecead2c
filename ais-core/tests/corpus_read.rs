//! Reads every AG-IR document of the reference corpus (`../shared/corpus/sigil-fixtures/`) and
//! checks what its README states about each: which parse strictly, which need the §8.1
//! relaxations, which opcodes and owners each holds; that the section spellings read alike;
//! that the nameless entry is reported as such; and that every readable document round-trips
//! through the canonical writer.

use ais_core::agir::{read, write};
use ais_core::{Opcode, Owner, Program, ToolSurface, Type};
use std::collections::BTreeSet;
use std::path::Path;

use crate::support;
use support::{agir_files, corpus};

fn load(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap()
}

fn program(dir: &Path, rel: &str) -> Program {
    read(&load(dir, rel))
        .unwrap_or_else(|e| panic!("{rel}: {e:?}"))
        .program
}

/// One row of the README's fixture table.
struct Row {
    file: String,
    opcodes: String,
    parse: String,
}

fn readme_rows(dir: &Path) -> Vec<Row> {
    let readme = std::fs::read_to_string(dir.join("../README.md")).unwrap();
    readme
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            Row {
                file: cells[1]
                    .trim_matches('`')
                    .trim_start_matches("fixtures/")
                    .to_owned(),
                opcodes: cells[3].to_owned(),
                parse: cells[4].to_owned(),
            }
        })
        .collect()
}

#[test]
fn every_document_reads_as_the_readme_says() {
    let Some(dir) = corpus() else { return };
    let rows = readme_rows(&dir);
    let all = agir_files(&dir);
    assert_eq!(rows.len(), all.len(), "the README lists every fixture");
    let mut relaxed = BTreeSet::new();
    for row in &rows {
        let text = load(&dir, &row.file);
        if row.file.ends_with("NAMELESS_SEQ_BAD_IR.agir") {
            continue; // checked below
        }
        let doc = read(&text).unwrap_or_else(|e| panic!("{}: {e:?}", row.file));
        match row.parse.as_str() {
            "ok" => assert!(
                doc.relaxations.is_empty(),
                "{}: {:?}",
                row.file,
                doc.relaxations
            ),
            "YAML error (intended)" => {
                assert!(
                    !doc.relaxations.is_empty(),
                    "{} needs a relaxation",
                    row.file
                );
                relaxed.insert(row.file.clone());
            }
            other => panic!("unexpected parse column {other}"),
        }
        // The opcodes the README lists (with their owner where it gives one) are the program's.
        if !row.opcodes.is_empty() {
            let mut listed = BTreeSet::new();
            for entry in row.opcodes.split(", ") {
                let (op, owner) = match entry.split_once('/') {
                    Some((op, owner)) => (op, Some(owner)),
                    None => (entry, None),
                };
                listed.insert(op.to_owned());
                if let Some(owner) = owner {
                    assert!(
                        doc.program.instructions().iter().any(
                            |i| i.opcode.as_str() == op && i.owner == Some(Owner::parse(owner))
                        ),
                        "{}: no {op} owned by {owner}",
                        row.file
                    );
                }
            }
            let found: BTreeSet<String> = doc
                .program
                .instructions()
                .iter()
                .map(|i| i.opcode.as_str().to_owned())
                .collect();
            assert_eq!(found, listed, "{}", row.file);
        }
    }
    let expected: BTreeSet<String> = [
        "autofix_test/MALFORMED_MAP_IR.agir",
        "autofix_test/MALFORMED_SEQ_IR.agir",
        "sigil_agir_yaml_test/MALFORMED_IR.agir",
        "raise2_canonicalize/AUTHORED_MALFORMED.agir",
        "compiler_test/COLON_IR.agir",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(relaxed, expected);
}

#[test]
fn every_readable_document_round_trips_through_the_writer() {
    let Some(dir) = corpus() else { return };
    let mut read_count = 0;
    for path in agir_files(&dir) {
        let text = std::fs::read_to_string(&path).unwrap();
        let Ok(doc) = read(&text) else { continue };
        read_count += 1;
        let written = write(&doc.program);
        let again =
            read(&written).unwrap_or_else(|e| panic!("{}: {e:?}\n{written}", path.display()));
        assert!(
            again.relaxations.is_empty(),
            "{}: the written text is strict YAML",
            path.display()
        );
        assert_eq!(again.program, doc.program, "{}", path.display());
        assert_eq!(write(&again.program), written, "{}", path.display());
    }
    assert_eq!(read_count, 58);
}

#[test]
fn the_clean_document_is_written_back_byte_for_byte() {
    let Some(dir) = corpus() else { return };
    let text = load(&dir, "autofix_test/CLEAN_IR.agir");
    assert_eq!(write(&read(&text).unwrap().program), text);
}

#[test]
fn relaxed_documents_mean_what_their_authors_meant() {
    let Some(dir) = corpus() else { return };
    // The glued flow map encodes the same carry the clean document spells out; canonicalizing
    // it gives the clean document exactly.
    let malformed = program(&dir, "autofix_test/MALFORMED_MAP_IR.agir");
    let clean_text = load(&dir, "autofix_test/CLEAN_IR.agir");
    assert_eq!(malformed, read(&clean_text).unwrap().program);
    assert_eq!(write(&malformed), clean_text);

    let seq = program(&dir, "autofix_test/MALFORMED_SEQ_IR.agir");
    let (_, c) = seq.carry("constraints").unwrap();
    assert_eq!(c.ty, Some(Type::List(Some(Box::new(Type::Str)))));
    assert_eq!(c.produced_by.as_deref(), Some("extract"));

    let doc = read(&load(&dir, "sigil_agir_yaml_test/MALFORMED_IR.agir")).unwrap();
    assert_eq!(doc.relaxations.len(), 1);
    assert_eq!(doc.relaxations[0].pos.line, 17);
    let p = &doc.program;
    assert_eq!(p.name.as_deref(), Some("pdf"));
    assert_eq!(
        p.carry("pdftotext_command")
            .unwrap()
            .1
            .produced_by
            .as_deref(),
        Some("build_command")
    );
    let written = write(p);
    assert!(written.starts_with("---\nname: pdf\ndescription: Extract text from a PDF.\n---\n"));
    assert!(written.contains(
        "    body: |\n      def build_command(task: str) -> str:\n          return \"pdftotext \" + (task or \"\")\n"
    ));

    let authored = program(&dir, "raise2_canonicalize/AUTHORED_MALFORMED.agir");
    assert_eq!(
        authored.tool("format_json").unwrap().1.surface,
        Some(ToolSurface::ActArtifact)
    );
    assert_eq!(authored.instructions().len(), 3);

    let colon = read(&load(&dir, "compiler_test/COLON_IR.agir")).unwrap();
    assert_eq!(colon.relaxations.len(), 2);
    let p = &colon.program;
    assert_eq!(p.name.as_deref(), Some("hn-demo"));
    let docs: Vec<_> = p
        .knowledge_list()
        .iter()
        .map(|k| (k.name.as_str(), k.extra[0].1.as_str().unwrap()))
        .collect();
    assert_eq!(
        docs,
        [
            ("k1", "Title : <title>"),
            ("k2", "Score : <score> points | Comments: <descendants>")
        ]
    );
}

#[test]
fn section_spellings_read_to_the_same_program() {
    let Some(dir) = corpus() else { return };
    let base = program(&dir, "compiler_test/DEF_BODY_IR.agir");
    assert_eq!(base.tool_list().len(), 1);
    assert_eq!(base.carries().len(), 2);
    for variant in [
        "compiler_test/TOOLS_AS_SEQ_IR.agir",
        "compiler_test/TOOLS_AS_NESTED_SEQ_IR.agir",
        "compiler_test/CARRIES_AS_SEQ_IR.agir",
    ] {
        assert_eq!(program(&dir, variant), base, "{variant}");
    }
    let stmt = program(&dir, "compiler_test/STMT_BODY_IR.agir");
    assert_ne!(stmt.tool_list()[0].body, base.tool_list()[0].body);
    assert_eq!(base.instructions()[0].opcode, Opcode::Sense);
}

#[test]
fn a_nameless_sequence_entry_says_no_name_and_lists_its_keys() {
    let Some(dir) = corpus() else { return };
    let err = read(&load(&dir, "compiler_test/NAMELESS_SEQ_BAD_IR.agir")).unwrap_err();
    assert!(err.message.contains("no name"), "{}", err.message);
    for key in ["notaname", "sig", "surface", "doc", "body"] {
        assert!(err.message.contains(&format!("`{key}`")), "{}", err.message);
    }
    let pos = err.pos.unwrap();
    assert_eq!((pos.line, pos.column), (10, 5));
    assert!(err.help.unwrap().contains("name:"));
}
