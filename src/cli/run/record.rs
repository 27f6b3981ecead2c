//! The record a paused run leaves beside its resume handle, for `ais resume`.

use super::journal::Meta;
use super::{Failure, Setup};
use crate::cli::{CliError, shown};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// What a paused run records beside its handle for `ais resume`.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct Record {
    /// The command that started the run, as a journaled run records it.
    #[serde(flatten)]
    pub(super) meta: Meta,
    pub(super) scripted_used: BTreeMap<String, usize>,
}

/// `/2`: sealed ([`super::seal::seal_handle`]); a `/1` record is refused.
pub(super) const RECORD_FORMAT: &str = "ais-run-cli/2";

/// `<handle>.cli.json` for `<handle>.json`.
pub(super) fn record_path(handle: &Path) -> PathBuf {
    handle.with_extension("cli.json")
}

/// The most bytes of a resume handle its record's seal covers: as many as the runtime reads.
const MAX_HANDLE_BYTES: u64 = 256 * 1024 * 1024;

/// The text of the resume handle `handle`, bounded.
fn handle_text(handle: &Path) -> Result<String, CliError> {
    ais::files::read_regular_text(handle, MAX_HANDLE_BYTES).map_err(|e| {
        CliError::new(
            format!("cannot read the resume handle `{}`: {e}", shown(handle)),
            "check that the file is the handle the paused run printed",
        )
    })
}

pub(super) fn write_record(setup: &Setup, handle: &Path) -> Result<(), Failure> {
    let mut record = Record {
        meta: Meta::new(setup, RECORD_FORMAT),
        scripted_used: setup
            .scripted
            .as_ref()
            .map(|s| s.used())
            .unwrap_or_default(),
    };
    let used = serde_json::to_value(&record.scripted_used).unwrap_or_default();
    super::seal::seal_handle(&mut record.meta, &used, handle, &handle_text(handle)?)?;
    let text = serde_json::to_string_pretty(&record).map_err(io::Error::other)?;
    let path = record_path(handle);
    let dir = path.parent().unwrap_or(Path::new("."));
    let write = || -> io::Result<()> {
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        tmp.write_all(text.as_bytes())?;
        tmp.as_file().sync_all()?;
        tmp.persist(&path).map_err(|e| e.error)?;
        Ok(())
    };
    write().map_err(|e| {
        CliError::new(
            format!("cannot record the paused run in `{}`: {e}", shown(&path)),
            "resume with `ais resume HANDLE --answer TEXT --program FILE.agir --model SPEC --out DIR`",
        )
    })?;
    Ok(())
}

/// The most bytes a run record may have (it names a program, a model and a directory).
const MAX_RECORD_BYTES: u64 = 1024 * 1024;

/// The record beside `handle` (`None` when there is none), checked against its seal and the
/// handle's text.
pub(super) fn read_record(handle: &Path) -> Result<Option<Record>, CliError> {
    let path = &record_path(handle);
    let text = match ais::files::read_regular_text(path, MAX_RECORD_BYTES) {
        Ok(t) => t,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => {
            return Err(CliError::new(
                format!("cannot read the run record `{}`: {e}", shown(path)),
                "check its permissions, or pass `--program FILE.agir` and remove it",
            ));
        }
    };
    let record: Record = serde_json::from_str(&text).map_err(|e| {
        CliError::new(
            format!("the run record `{}` is not readable: {e}", shown(path)),
            "pass `--program FILE.agir` (and `--model`, `--out`) and remove the record",
        )
    })?;
    if record.meta.format != RECORD_FORMAT {
        return Err(CliError::new(
            format!(
                "the run record `{}` has format `{}`, not `{RECORD_FORMAT}`",
                shown(path),
                record.meta.format
            ),
            "resume with the version of ais that paused the run",
        ));
    }
    let used = serde_json::to_value(&record.scripted_used).unwrap_or_default();
    super::seal::verify_handle(&record.meta, &used, handle, &handle_text(handle)?, path)?;
    Ok(Some(record))
}

/// Removes a used handle and its record: a handle resumes a run once.
pub(super) fn remove_handle(handle: &Path) {
    // Best effort: a leftover handle is refused by a later resume only if the program changed.
    let _ = std::fs::remove_file(handle);
    let _ = std::fs::remove_file(record_path(handle));
}
