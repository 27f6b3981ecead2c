//! The integrity of a journaled run's record: what `ais resume RUN_ID` takes from the journal —
//! the program (its path and digest), the model, the model configuration, the output root, the step budget, the bounds,
//! the task and inputs — is sealed with the user's key when the run starts
//! ([`ais::rt::journal`]: where the key lives and why a tool cannot read it), and checked
//! before a resume runs anything. A row whose field does not match its seal, a row with no seal,
//! and a recorded output root that is not the one the invocation names (`--out`, or the
//! directory holding the journal's `.ais/`) refuse the resume, naming the field.
//!
//! A run started with `--no-journal` that pauses leaves a resume handle and, beside it, the
//! record of its command (`<handle>.cli.json`): that record is sealed the same way, with the
//! handle's whole text as one more field, so neither file can be rewritten unnoticed.

use super::journal::Meta;
use crate::cli::{CliError, shown};
use ais::rt::journal::RunStart;
use ais::rt::journal::{SealKey, seal_key_dir};
use serde_json::Value as Json;
use std::path::Path;

/// The user's sealing key, or the error that says where it should be.
fn key() -> Result<SealKey, CliError> {
    SealKey::load_or_create().map_err(|e| {
        let at = seal_key_dir().map_or_else(|| "(no HOME)".to_owned(), |d| shown(&d));
        CliError::new(
            format!("cannot use the journal's sealing key in {at}: {e}"),
            "set AIS_STATE_DIR to a private directory of yours, or run with `--no-journal`",
        )
    })
}

/// The sealed fields of a command's record: what a resume runs with.
fn meta_fields(meta: &Meta) -> Vec<(&'static str, Json)> {
    vec![
        ("program", json(&meta.program)),
        ("model", json(&meta.model)),
        ("models", json(&meta.models)),
        ("out", json(&meta.out)),
        ("max_steps", Json::from(meta.max_steps)),
        ("bounds", json(&meta.bounds)),
    ]
}

/// The sealed fields of a journaled run's record.
fn fields(start: &RunStart, meta: &Meta) -> Vec<(&'static str, Json)> {
    let mut fields = meta_fields(meta);
    fields.extend([
        ("digest", Json::from(start.digest.clone())),
        ("task", Json::from(start.task.clone())),
        ("inputs", json(&start.inputs)),
    ]);
    fields
}

/// The sealed fields of a handle's record: the command's, what the scripted model had used,
/// and the handle's text (its program digest, carries, task, cursor).
fn handle_fields(meta: &Meta, scripted_used: &Json, handle: &str) -> Vec<(&'static str, Json)> {
    let mut fields = meta_fields(meta);
    fields.extend([
        ("scripted_used", scripted_used.clone()),
        ("handle", Json::from(handle)),
    ]);
    fields
}

/// The name a handle's record is sealed under: its file name, so a record cannot stand beside
/// another handle.
fn handle_id(handle: &Path) -> String {
    let name = handle.file_name().map(|n| n.to_string_lossy().into_owned());
    format!("handle:{}", name.unwrap_or_default())
}

/// Seals `meta` for the paused run whose handle is `handle` (its text `text`).
pub(super) fn seal_handle(
    meta: &mut Meta,
    scripted_used: &Json,
    handle: &Path,
    text: &str,
) -> Result<(), CliError> {
    let key = key()?;
    meta.seal = None;
    meta.seal = Some(key.seal(
        &handle_id(handle),
        &handle_fields(meta, scripted_used, text),
    ));
    Ok(())
}

/// Checks a handle's record (`meta`, read from `record`) against its seal and the handle's
/// text.
pub(super) fn verify_handle(
    meta: &Meta,
    scripted_used: &Json,
    handle: &Path,
    text: &str,
    record: &Path,
) -> Result<(), CliError> {
    let refuse = |what: String| {
        CliError::new(
            what,
            format!(
                "the handle or its record was changed by something other than the `ais` that \
                 paused the run; do not resume it — start the run again (`{}` shows the \
                 command it was started with)",
                shown(record)
            ),
        )
    };
    let Some(seal) = &meta.seal else {
        return Err(refuse(format!(
            "the run record `{}` carries no seal",
            shown(record)
        )));
    };
    key()?
        .check(
            &handle_id(handle),
            &handle_fields(meta, scripted_used, text),
            seal,
        )
        .map_err(|field| {
            let what = if field == "handle" {
                format!("the resume handle `{}`", shown(handle))
            } else {
                format!("`{field}` in the run record `{}`", shown(record))
            };
            refuse(format!("{what} does not match its seal (it was rewritten)"))
        })
}

/// A value as JSON.
fn json<T: serde::Serialize>(v: &T) -> Json {
    serde_json::to_value(v).unwrap_or(Json::Null)
}

/// Seals `meta` for the run `start` begins (its `meta` is replaced by the sealed record).
pub(super) fn seal(start: &mut RunStart, mut meta: Meta) -> Result<(), CliError> {
    let key = key()?;
    meta.seal = Some(key.seal(&start.id, &fields(start, &meta)));
    start.meta = serde_json::to_value(&meta).unwrap_or_default();
    Ok(())
}

/// Checks a resumed run's record against its seal and against the invocation: `out_given`
/// (its `--out`) and `journal` (the journal it was found in).
pub(super) fn verify(
    start: &RunStart,
    meta: &Meta,
    journal: &Path,
    out_given: Option<&Path>,
) -> Result<(), CliError> {
    let id = &start.id;
    let refuse = |what: String| {
        CliError::new(
            what,
            format!(
                "the journal was changed by something other than the `ais` that ran it; do not \
                 resume it — inspect it with `ais runs show {id}`, and start the run again"
            ),
        )
    };
    let Some(seal) = &meta.seal else {
        return Err(refuse(format!("run {id}'s record carries no seal")));
    };
    key()?
        .check(id, &fields(start, meta), seal)
        .map_err(|field| {
            refuse(format!(
                "run {id}'s recorded `{field}` does not match its seal (the journal row was \
                 rewritten)"
            ))
        })?;
    // The output root the invocation names: `--out`, else the root whose `.ais/` holds the
    // journal.
    let implied = out_given.map(Path::to_owned).or_else(|| {
        let dir = journal.parent()?;
        (dir.file_name()? == ".ais").then(|| dir.parent().map(Path::to_owned))?
    });
    if let Some(implied) = implied {
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
        let here = canon(if implied.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &implied
        });
        if here != canon(&meta.out) {
            return Err(CliError::new(
                format!(
                    "run {id} was started with the output root `{}`, and this resume names `{}` \
                     (`out` differs)",
                    shown(&meta.out),
                    shown(&here)
                ),
                format!(
                    "resume it from its own output root: `ais resume {id} --out {}`",
                    shown(&meta.out)
                ),
            ));
        }
    }
    Ok(())
}
