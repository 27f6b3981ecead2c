//! `ais fmt` (the writer that keeps comments, `write_keeping`) keeps block scalars: multi-line
//! text written as a `|` or `>` block is written back as a block, and code — a CODE or tool
//! `body`, a tool's `command` — is a `|` block even on one line (§8.1: "put code in block
//! scalars"), so its quotes and backslashes read as written. Over every example and every
//! readable corpus document: the document reads back equal and formatting is idempotent.

use ais_core::agir::{Limits, read, write_keeping};
use std::path::{Path, PathBuf};

use crate::support;
use support::{agir_files, corpus};

/// `key: |` / `key: >-` / `- key: |+` … : the keys whose value is a block scalar, in order.
fn block_keys(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim_start().trim_start_matches("- ");
            let (key, rest) = l.split_once(':')?;
            let rest = rest.trim();
            let header = rest.strip_prefix(['|', '>'])?;
            header
                .chars()
                .all(|c| matches!(c, '-' | '+' | '0'..='9'))
                .then(|| key.trim().to_owned())
        })
        .collect()
}

fn fmt(text: &str, what: &Path) -> String {
    let doc = read(text).unwrap_or_else(|e| panic!("{}: {e:?}", what.display()));
    let out = write_keeping(&doc.program, &doc, &Limits::default())
        .unwrap_or_else(|e| panic!("{}: {e:?}", what.display()));
    let back = read(&out).unwrap_or_else(|e| panic!("{}: {e:?}\n{out}", what.display()));
    assert_eq!(
        back.program,
        doc.program,
        "{}: reads back equal",
        what.display()
    );
    out
}

fn documents() -> Vec<PathBuf> {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut files = agir_files(&examples);
    assert!(files.len() >= 10, "the examples are there: {}", files.len());
    if let Some(dir) = corpus() {
        files.extend(agir_files(&dir));
    }
    files
}

#[test]
fn every_block_scalar_of_every_example_and_corpus_document_stays_a_block() {
    let mut blocks = 0;
    for path in documents() {
        let text = std::fs::read_to_string(&path).unwrap();
        if read(&text).is_err() {
            continue; // the corpus's unreadable documents are another test's
        }
        let once = fmt(&text, &path);
        assert_eq!(
            fmt(&once, &path),
            once,
            "{}: fmt is idempotent",
            path.display()
        );
        // Each block the author wrote is still a block (code may have gained some).
        let mut after = block_keys(&once);
        for key in block_keys(&text) {
            let at = after.iter().position(|k| *k == key).unwrap_or_else(|| {
                panic!(
                    "{}: `{key}:` was a block scalar and is not:\n{once}",
                    path.display()
                )
            });
            after.remove(at);
            blocks += 1;
        }
        // Every body is a block (a `body:` with nothing after it is a carry named `body`).
        for l in once.lines() {
            let l = l.trim_start().trim_start_matches("- ");
            if let Some(v) = l.strip_prefix("body:").filter(|v| !v.trim().is_empty()) {
                assert!(v.trim().starts_with('|'), "{}: {l}", path.display());
            }
        }
    }
    assert!(blocks > 50, "the documents hold block scalars: {blocks}");
}

#[test]
fn a_quoted_one_line_body_and_a_folded_doc_come_back_as_blocks_that_read_as_written() {
    let text = r##"walker:
  name: W
  carries:
    task: {type: str, role: input}
    out: {type: str, produced_by: make}
nodes:
  - id: make
    type: CODE
    owner: code
    reads: [task]
    writes: [out]
    doc: >
      Make the heading
      from the task.
    body: '"# " + task + "\n"'
  - {id: done, type: TERMINAL, reads: [out]}
edges:
  - {from: make, to: done}
"##;
    let out = fmt(text, Path::new("inline"));
    assert!(
        out.contains("    body: |-\n      \"# \" + task + \"\\n\"\n"),
        "the body is a block, its quotes and backslash as written:\n{out}"
    );
    assert!(
        out.contains("    doc: |\n      Make the heading from the task.\n"),
        "the folded doc is still a block:\n{out}"
    );
}
