//! Files under the root: confinement, reading within bounds, the write lock and the atomic
//! replace.

use crate::reject::{Reason, Rejection};
use serde_json::json;
use std::fs::File;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// The most bytes of a program file read (the AG-IR reader's own limit).
pub fn max_file_bytes() -> usize {
    ais_core::agir::Limits::default().max_bytes
}

/// Resolves `file` (relative to `root`) to a path inside the root, or rejects it: an absolute
/// path, a `..` that leaves the root, a symbolic link, a directory, an extension other than
/// `.agir` (a Rust source is refused naming its `.agir` export).
pub fn resolve(root: &Path, file: &str) -> Result<PathBuf, Rejection> {
    let outside = || {
        Rejection::new(
            Reason::OutsideRoot,
            format!(
                "`{}` is not a file under the root `{}`: name a path relative to it, without `..`",
                file.escape_debug(),
                root.display()
            ),
        )
        .repair("the programs under the root", "status", json!({}))
    };
    if file.is_empty() || file.contains('\0') || file.len() > 4096 {
        return Err(outside());
    }
    let rel = Path::new(file);
    let mut clean = PathBuf::new();
    for c in rel.components() {
        match c {
            Component::Normal(p) => clean.push(p),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(outside());
            }
        }
    }
    if clean.as_os_str().is_empty() {
        return Err(outside());
    }
    match clean.extension().and_then(|e| e.to_str()) {
        Some("agir") => {}
        Some("rs") => {
            let stem = clean.with_extension("agir");
            return Err(Rejection::new(
                Reason::NotAgir,
                format!(
                    "`{file}` is Rust: `ais edit` edits AG-IR. Export the program with `ais_syntax::export` in build.rs (it writes `{}` beside the source) and edit that, or change the `ais!` source by hand",
                    stem.display()
                ),
            )
            .repair("the programs under the root", "status", json!({})));
        }
        _ => {
            return Err(Rejection::new(
                Reason::NotAgir,
                format!("`{file}` is not an `.agir` file: `ais edit` edits AG-IR programs"),
            )
            .repair("the programs under the root", "status", json!({})));
        }
    }
    let path = root.join(&clean);
    // No component under the root may be a symbolic link: a write would leave the root.
    let mut at = root.to_path_buf();
    for c in clean.components() {
        at.push(c);
        if at
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
        {
            return Err(Rejection::new(
                Reason::OutsideRoot,
                format!("`{file}` passes through a symbolic link; name the file itself"),
            ));
        }
    }
    if path.is_dir() {
        return Err(outside());
    }
    Ok(path)
}

/// The file's text (`None` when it does not exist), within the size bound.
pub fn read(path: &Path, shown: &str) -> Result<Option<String>, Rejection> {
    let io = |e: std::io::Error| Rejection::new(Reason::Io, format!("cannot read `{shown}`: {e}"));
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    if meta.len() > max_file_bytes() as u64 {
        return Err(Rejection::new(
            Reason::TooLarge,
            format!(
                "`{shown}` is {} bytes, more than the {} bytes the AG-IR reader accepts",
                meta.len(),
                max_file_bytes()
            ),
        ));
    }
    let bytes = std::fs::read(path).map_err(io)?;
    String::from_utf8(bytes).map(Some).map_err(|e| {
        Rejection::new(
            Reason::Unreadable,
            format!(
                "`{shown}` is not UTF-8 (at byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// An exclusive lock on the file's directory, held while a patch reads, checks and writes
/// (every writer through this crate takes it, so two patchers never interleave).
pub struct DirLock {
    _dir: File,
}

/// Takes the lock, waiting for another patcher to finish.
pub fn lock(path: &Path) -> Result<DirLock, Rejection> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let f = File::open(dir).map_err(|e| {
        Rejection::new(
            Reason::Io,
            format!("cannot open `{}` to lock it: {e}", dir.display()),
        )
    })?;
    f.lock()
        .map_err(|e| Rejection::new(Reason::Io, format!("cannot lock `{}`: {e}", dir.display())))?;
    Ok(DirLock { _dir: f })
}

/// Replaces the file atomically: a temporary file in the same directory, written, synced,
/// given the old file's permissions, renamed over it; the directory synced after.
pub fn write_atomically(path: &Path, text: &str) -> Result<(), Rejection> {
    let io = |e: std::io::Error| {
        Rejection::new(
            Reason::Io,
            format!(
                "cannot write `{}`: {e}; the file is unchanged",
                path.display()
            ),
        )
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".ais-edit-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(io)?;
    tmp.write_all(text.as_bytes()).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    if let Ok(meta) = std::fs::metadata(path) {
        std::fs::set_permissions(tmp.path(), meta.permissions()).map_err(io)?;
    }
    tmp.persist(path).map_err(|e| io(e.error))?;
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The `.agir` files under the root (not under hidden directories or `target`), at most
/// `max`, sorted.
pub fn programs(root: &Path, max: usize) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    let mut visited = 0usize;
    while let Some(dir) = stack.pop() {
        visited += 1;
        if visited > 10_000 {
            break;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') || name == "target" || name == "node_modules" {
                continue;
            }
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file() && name.ends_with(".agir") && out.len() < max {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}
