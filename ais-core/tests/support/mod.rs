//! Shared by the integration tests that read the reference corpus of AG-IR programs.
//!
//! The corpus lives beside the repository, at `<workspace root>/../shared/corpus/sigil-fixtures/`
//! (it is data from the reference implementation, read in place and never copied here). When it
//! is missing, a test prints a notice and passes — except under `CI=true`, where a missing corpus
//! is a failure, so CI can never go green without having read it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The corpus directory, or `None` (after a notice) when it is absent outside CI.
pub fn corpus() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/sigil-fixtures");
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "the corpus is missing at {} (CI=true requires it)",
        dir.display()
    );
    eprintln!("notice: corpus not found at {}; skipping", dir.display());
    None
}

/// Every `.agir` file under `dir`, recursively, in sorted order.
pub fn agir_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for entry in entries {
            let path = entry
                .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
                .path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "agir") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}
