//! Every tool signature in the corpus parses, and prints back to text that parses the same.
//!
//! The signatures are picked out of the `.agir` files line by line (`sig: …`), so this test
//! needs no AG-IR reader.

use ais_core::sig::parse;
use std::path::{Path, PathBuf};

fn corpus_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/sigil-fixtures");
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("the corpus is missing at {}", dir.display());
    }
    eprintln!(
        "notice: corpus not found at {}; skipping the corpus signature test",
        dir.display()
    );
    None
}

fn agir_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            agir_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "agir") {
            out.push(p);
        }
    }
}

/// The `sig:` values of a document, unquoted.
fn sigs(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("sig:"))
        .map(|v| {
            let v = v.trim();
            v.strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(v)
                .to_owned()
        })
        .collect()
}

#[test]
fn every_corpus_signature_parses_and_round_trips() {
    let Some(dir) = corpus_dir() else { return };
    let mut files = Vec::new();
    agir_files(&dir, &mut files);
    files.sort();
    assert!(!files.is_empty(), "no .agir files under {}", dir.display());
    let mut seen = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for s in sigs(&text) {
            let sig = parse(&s).unwrap_or_else(|e| {
                panic!(
                    "{}: `{s}` does not parse: {e} (byte {})",
                    f.display(),
                    e.offset
                )
            });
            assert_eq!(parse(&sig.to_string()).as_ref(), Ok(&sig), "{s}");
            seen += 1;
        }
    }
    // The corpus holds 41 signatures; a drop means the extraction broke.
    assert!(seen >= 40, "only {seen} signatures found");
}
