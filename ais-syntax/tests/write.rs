//! The writer (`ais_syntax::write`) over every program the repository and the reference corpus
//! hold: each program the DSL can say is written, lowered again without a crate build
//! (`export::export_text`, the macro's front end) and compared with the canonical AG-IR; each it
//! cannot say is refused with reasons naming where.

use std::path::{Path, PathBuf};

fn agir_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            agir_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "agir") {
            out.push(path);
        }
    }
}

/// The fewest corpus documents, made explicit, the writer must write back.
const MIN_EXPLICIT: usize = 15;

/// Writes the document at `path`: `Ok(true)` written and equal, `Ok(false)` refused (with
/// reasons), `Err` on a document that does not read.
fn round_trip(path: &Path) -> Result<bool, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let program = ais_core::agir::read(&text)
        .map_err(|e| format!("{e:?}"))?
        .program;
    Ok(round_trip_program(&path.display().to_string(), &program))
}

/// Writes `program`: true when written (and its module's AG-IR, lowered again, is the
/// program's canonical AG-IR), false when refused (each reason naming something).
fn round_trip_program(name: &str, program: &ais_core::Program) -> bool {
    let canonical = ais_core::agir::write(program);
    match ais_syntax::write_module(program) {
        Ok(module) => {
            let exported = ais_syntax::export_text(&module, "program.rs").unwrap_or_else(|e| {
                panic!("{name}: the written module does not lower:\n{e}\n{module}")
            });
            assert_eq!(exported.len(), 1, "{name}");
            assert_eq!(exported[0].agir, canonical, "{name}:\n{module}");
            true
        }
        Err(refused) => {
            assert!(!refused.reasons.is_empty(), "{name}");
            for r in &refused.reasons {
                assert!(r.contains('`'), "{name}: a reason names nothing: {r}");
            }
            eprintln!("{name}: {refused}");
            false
        }
    }
}

#[test]
fn every_example_program_is_written_back_to_the_same_program() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut files = Vec::new();
    agir_files(&examples, &mut files);
    let mcp = examples.join("mcp");
    let (refused, files): (Vec<PathBuf>, Vec<PathBuf>) =
        files.into_iter().partition(|f| f.starts_with(&mcp));
    assert!(files.len() >= 10, "{files:?}");
    for f in &files {
        assert_eq!(round_trip(f), Ok(true), "{}", f.display());
    }
    // The MCP example is refused, by name: the writer does not write MCP servers yet.
    assert!(!refused.is_empty());
    for f in &refused {
        let text = std::fs::read_to_string(f).unwrap();
        let program = ais_core::agir::read(&text).unwrap().program;
        let err = ais_syntax::write_module(&program).unwrap_err();
        assert!(
            err.to_string().contains("the program's `mcp_servers`"),
            "{}: {err}",
            f.display()
        );
    }
}

/// The corpus documents, each as read and made explicit (`Program::make_explicit`: what an
/// absent field means, written out — the form `ais lift` assembles): written back to the same
/// program, or refused with reasons naming where. As read, most leave out sections the DSL
/// always writes, and are refused for it.
#[test]
fn corpus_documents_are_written_back_or_refused_by_name() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
    let mut files = Vec::new();
    agir_files(&dir, &mut files);
    if files.is_empty() {
        eprintln!("no corpus at {}; skipped", dir.display());
        return;
    }
    let mut counts = [[0usize; 2]; 2];
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        let Ok(doc) = ais_core::agir::read(&text) else {
            continue;
        };
        let mut explicit = doc.program.clone();
        explicit.make_explicit();
        for (i, program) in [doc.program, explicit].iter().enumerate() {
            let written = round_trip_program(&f.display().to_string(), program);
            counts[i][usize::from(written)] += 1;
        }
    }
    eprintln!(
        "corpus as read: {} written, {} refused; made explicit: {} written, {} refused",
        counts[0][1], counts[0][0], counts[1][1], counts[1][0]
    );
    assert!(counts[1][1] >= MIN_EXPLICIT, "{counts:?}");
}

/// A program whose text fields hold Rust syntax meant to break out of a string literal or the
/// macro: written as data, it lowers to exactly the same program (the module holds one program,
/// and nothing else of it is code).
#[test]
fn text_that_looks_like_rust_stays_text() {
    let hostile = "\"#); } } fn evil() { std::process::exit(1) } ais! { r##\"";
    let agir = format!(
        "---\nname: breakout\ndescription: {q}\n---\nagir_version: 0.1\ntypes: {{}}\n\
         knowledge:\n  notes:\n    resident_on: [draft]\n    template: |\n      line one {h}\n      \"## and \"### end\n\
         tools: {{}}\nwalker:\n  name: Breakout\n  carries:\n    task:\n      type: str\n      role: input\n      doc: {q}\n\
         \x20   note:\n      type: str\n      produced_by: draft\nnodes:\n  - id: draft\n    type: GEN-RAW\n    owner: model\n\
         \x20   reads: [task]\n    writes: [note]\n    doc: |-\n      Draft it.\n        {h}\n  - id: done\n    type: TERMINAL\n    owner: code\n    reads: [note]\n\
         edges:\n  - {{from: draft, to: done, modality: mandatory}}\n",
        q = serde_quote(hostile),
        h = hostile
    );
    let program = ais_core::agir::read(&agir).unwrap().program;
    let module = ais_syntax::write_module(&program).unwrap();
    assert!(!module.contains("\nfn evil"), "{module}");
    let exported = ais_syntax::export_text(&module, "breakout.rs").unwrap();
    assert_eq!(exported.len(), 1, "one program, nothing else: {module}");
    assert_eq!(exported[0].agir, ais_core::agir::write(&program));
}

fn serde_quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// What the DSL cannot say is refused, every part named — never written partly or dropped.
#[test]
fn what_the_dsl_cannot_say_is_refused_by_name() {
    let agir = "---\nname: odd\n---\nagir_version: 0.1\ntypes: {}\nknowledge: {}\n\
        tools:\n  split:\n    sig: \"(text: str) -> (left, right)\"\n    command: \"split {text}\"\n\
        \x20 script:\n    sig: \"(x)  -> str\"\n    body: |\n      def run(x): return x\n\
        walker:\n  name: Odd\n  carries:\n    type:\n      type: str\n      role: input\n\
        nodes:\n  - id: done\n    type: TERMINAL\n    owner: code\n    reads: [type]\n    x-colour: blue\n\
        edges: []\n";
    let program = ais_core::agir::read(agir).unwrap().program;
    let err = ais_syntax::write_module(&program).unwrap_err();
    let said = err.to_string();
    for part in [
        "tool `split`: a tuple result `(left, right)` has no Rust type in the DSL",
        "carry `type`: `type` is not a Rust identifier",
        "tool `script`: its `sig` `(x)  -> str` is not spelled as the DSL spells it (`(x) -> str`)",
        "nodes[0] `done`: the field `x-colour` has no DSL spelling",
    ] {
        assert!(said.contains(part), "{part}\n{said}");
    }
}
