//! Finds the AGS material beside the repository (`<workspace>/../shared/ags/`), read in place.
//! When it is missing a test prints a notice and passes — except under `CI=true`, where a
//! missing directory is a failure, as the corpus tests do. The `ais-ags` tests and the CLI's
//! (`tests/ags_*.rs`, through `#[path]`) share it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The AGS material directory, or `None` (after a notice) when it is absent outside CI.
pub fn ags_dir() -> Option<PathBuf> {
    // The including crate is the workspace's root (`ais`) or one of its members (`ais-ags`).
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = if manifest.join("ais-ags").is_dir() {
        manifest
    } else {
        manifest.parent().unwrap_or(manifest)
    };
    let dir = root.join("../shared/ags");
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "the AGS material is missing at {} (CI=true requires it)",
        dir.display()
    );
    eprintln!(
        "notice: AGS material not found at {}; skipping",
        dir.display()
    );
    None
}

/// The `*.agraph.*` files of a subdirectory, sorted.
pub fn graphs(sub: &str) -> Vec<PathBuf> {
    let Some(dir) = ags_dir() else {
        return Vec::new();
    };
    let dir = dir.join(sub);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| ais_ags::is_ags_path(p))
        .collect();
    out.sort();
    out
}

/// One example by file name, when the material is present.
pub fn example(name: &str) -> Option<PathBuf> {
    Some(ags_dir()?.join("examples").join(name))
}

/// Every finding of a check, one per line, for an assertion message.
pub fn listing(checked: &ais_ags::Checked) -> String {
    checked
        .findings
        .iter()
        .map(|f| {
            let at = f
                .pos
                .map(|p| format!("{}:{}", p.line, p.column))
                .unwrap_or_default();
            format!("  {} {} {at}: {}", f.id, f.severity, f.message)
        })
        .collect::<Vec<_>>()
        .join("\n")
}
