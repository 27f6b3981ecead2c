//! The way to a journal file: no symbolic link is followed on it.
//!
//! A journal's directory (`<out>/.ais` by default) and its file sit in the output root, where a
//! tool of an earlier run — or of another run into the same root — could have planted a link:
//! opening through it would create or rewrite a SQLite file wherever the link points. So
//! [`check`] refuses, before anything is created, a journal directory named `.ais` that is a
//! symbolic link, and a journal file or one of SQLite's companion files (`-wal`, `-shm`,
//! `-journal`) that is a link or no regular file; the store then opens the file with
//! `SQLITE_OPEN_NOFOLLOW`.

use super::JournalError;
use std::path::Path;

/// SQLite's files beside a journal in WAL mode (and the rollback journal of an older file).
const COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// Checks the way to the journal at `path` (see the module docs).
pub(crate) fn check(path: &Path) -> Result<(), JournalError> {
    let refuse = |what: &Path, why: &str| {
        JournalError::Store(format!(
            "{} {why}; ais opens no journal through a link (a tool may have planted it) — \
             remove it",
            what.display()
        ))
    };
    if let Some(dir) = path
        .parent()
        .filter(|d| d.file_name() == Some(".ais".as_ref()))
        && std::fs::symlink_metadata(dir).is_ok_and(|m| !m.is_dir())
    {
        return Err(refuse(dir, "is a symbolic link or a file, not a directory"));
    }
    let mut files = vec![path.to_owned()];
    for suffix in COMPANIONS {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        files.push(name.into());
    }
    for file in &files {
        match std::fs::symlink_metadata(file) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(refuse(file, "is a symbolic link"));
            }
            Ok(m) if !m.file_type().is_file() => {
                return Err(refuse(file, "is not a regular file"));
            }
            _ => {}
        }
    }
    Ok(())
}
