//! The record a paused run leaves beside its resume handle, for `ais resume`.

use super::{Failure, Setup};
use crate::cli::{CliError, shown};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// What a paused run records beside its handle for `ais resume`.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct Record {
    pub(super) format: String,
    pub(super) program: PathBuf,
    pub(super) model: Option<String>,
    pub(super) out: PathBuf,
    pub(super) max_steps: u64,
    /// The bounds it was started with (absent in a record of an older `ais`: the defaults).
    #[serde(default)]
    pub(super) bounds: super::bounds::Bounds,
    pub(super) scripted_used: BTreeMap<String, usize>,
}

pub(super) const RECORD_FORMAT: &str = "ais-run-cli/1";

/// `<handle>.cli.json` for `<handle>.json`.
pub(super) fn record_path(handle: &Path) -> PathBuf {
    handle.with_extension("cli.json")
}

pub(super) fn write_record(setup: &Setup, handle: &Path) -> Result<(), Failure> {
    let absolute = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
    let model = setup
        .model_spec
        .as_ref()
        .map(|spec| match spec.strip_prefix("scripted:") {
            Some(file) => format!("scripted:{}", absolute(Path::new(file)).display()),
            None => spec.clone(),
        });
    let record = Record {
        format: RECORD_FORMAT.to_owned(),
        program: absolute(&setup.file),
        model,
        out: absolute(&setup.out),
        max_steps: setup.max_steps,
        bounds: setup.bounds.recorded(),
        scripted_used: setup
            .scripted
            .as_ref()
            .map(|s| s.used())
            .unwrap_or_default(),
    };
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

pub(super) fn read_record(path: &Path) -> Result<Option<Record>, CliError> {
    let text = match ais_rt::files::read_regular_text(path, MAX_RECORD_BYTES) {
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
    if record.format != RECORD_FORMAT {
        return Err(CliError::new(
            format!(
                "the run record `{}` has format `{}`, not `{RECORD_FORMAT}`",
                shown(path),
                record.format
            ),
            "resume with the version of ais that paused the run",
        ));
    }
    Ok(Some(record))
}

/// Removes a used handle and its record: a handle resumes a run once.
pub(super) fn remove_handle(handle: &Path) {
    // Best effort: a leftover handle is refused by a later resume only if the program changed.
    let _ = std::fs::remove_file(handle);
    let _ = std::fs::remove_file(record_path(handle));
}
