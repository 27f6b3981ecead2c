//! Every tool signature in the corpus parses, and prints back to text that parses the same.
//!
//! The signatures are picked out of the `.agir` files line by line (`sig: …`), so this test
//! needs no AG-IR reader.

use ais_core::sig::parse;

use crate::support;
use support::{agir_files, corpus};

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
    let Some(dir) = corpus() else { return };
    let files = agir_files(&dir);
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
