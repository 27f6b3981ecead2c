//! The human-input pause and its record.
//!
//! A run that needs an answer it was not given stops *before* the instruction that needs it
//! (an unsupplied `role: input` carry) or at it (an `ask_user` call, a SPAWN sibling's, or a
//! question of a program it CALLs), and saves its state ([`Saved`], with where it waits): in its
//! journal as the run's pause record, or — with no journal — as a handle file under the output
//! root, `.ais/resume/<instruction>-<time>-<pid>.json`, written atomically (a temp file in the
//! same directory, then a rename). Both are the same record, rebuilt by the same function
//! ([`super::saved::rebuild`]).
//!
//! Resuming reads the record and fails closed: a handle that does not parse, that names
//! another format, another program (or this program changed), an instruction that is not at
//! its index, or a carry the program does not declare is refused with status `fault`
//! ([`FaultKind::InvalidHandle`]) and nothing runs; an answer longer than the largest model
//! answer (`max_answer_bytes`) or not of the type of what it fills is refused, and the run
//! keeps waiting. Otherwise the answer fills the carry or becomes the `ask_user` call's result
//! (in the CALLed program that asked), and the run continues at that instruction: nothing
//! before it runs again — nor, for an `ask_user` call inside a pipeline, the tools before the
//! call (the record keeps its position).

use super::plan::Prepared;
use super::saved::{Saved, Unfit, Waits, rebuild};
use super::{Run, Settings};
use crate::report::{FaultKind, Pause, RunOutcome, Status};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const FORMAT: &str = "ais-resume/2";
/// The largest handle read back.
const MAX_HANDLE_BYTES: u64 = 256 * 1024 * 1024;

/// A paused run's record: its [`Saved`] state under a format tag. The journal keeps it as the
/// run's pause record; a run with no journal writes it as the handle file.
#[derive(Serialize, Deserialize)]
struct Handle {
    format: String,
    #[serde(flatten)]
    saved: Saved,
}

impl Handle {
    /// The record of `json` (a journal's pause record, a handle file's text read as JSON).
    fn read(json: serde_json::Value) -> Result<Saved, String> {
        let format = json
            .get("format")
            .and_then(|f| f.as_str())
            .unwrap_or_default();
        if format != FORMAT {
            return Err(format!("its format is `{format}`, not `{FORMAT}`"));
        }
        let h: Handle =
            serde_json::from_value(json).map_err(|e| format!("it is no pause record ({e})"))?;
        Ok(h.saved)
    }
}

impl Run {
    /// Pauses where `waits` says: records the run's state — in its journal when it has one
    /// (`ais resume RUN_ID`), else as a handle file under the output root — and returns
    /// `input_required`.
    pub(crate) async fn pause(mut self, waits: Waits) -> RunOutcome {
        let prep = self.prep.clone();
        let step = &prep.steps[waits.cursor];
        let handle = Handle {
            format: FORMAT.to_owned(),
            saved: self.saved(Some(waits)),
        };
        let journal = self
            .durable
            .as_deref()
            .filter(|d| d.commits)
            .and(self.effects.journal().cloned());
        let handle_path = match &journal {
            Some(_) => None,
            None => match write_handle(self.settings.out_dir.clone(), &step.id, &handle).await {
                Ok(p) => Some(p),
                Err(e) => {
                    self.deviate(
                        &step.id,
                        "a resumable handle under the output root".into(),
                        format!("the handle could not be written ({e}); the run must start again"),
                    );
                    None
                }
            },
        };
        let mut out = self.outcome(Status::InputRequired);
        out.written = self.report(None).0;
        out.pause = handle.saved.shown(&prep, handle_path);
        if let Some(journal) = journal {
            let end = crate::journal::RunEnd {
                status: Status::InputRequired,
                steps: self.steps,
                outcome: serde_json::to_value(&out).unwrap_or_default(),
                pause: serde_json::to_value(&handle).ok(),
            };
            if let Err(e) = journal.end(&end).await {
                out.status = Status::Fault;
                out.fault = Some(crate::report::Fault {
                    kind: FaultKind::Journal,
                    instruction: step.id.clone(),
                    line: step.line,
                    message: format!(
                        "the pause could not be journaled, so the run cannot resume: {e}"
                    ),
                });
            }
        }
        out
    }
}

/// Writes a handle atomically under `root/.ais/resume/` (on the blocking pool).
async fn write_handle(root: PathBuf, id: &str, handle: &Handle) -> std::io::Result<PathBuf> {
    let mut bytes = serde_json::to_vec_pretty(handle).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    let safe = super::exec::file_safe(id);
    let write = move || {
        use std::io::Write;
        let dir = root.join(".ais").join("resume");
        std::fs::create_dir_all(&dir)?;
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path = dir.join(format!("{safe}-{stamp}-{}.json", std::process::id()));
        let mut tmp = tempfile::NamedTempFile::new_in(&dir)?;
        tmp.write_all(&bytes)?;
        tmp.as_file().sync_all()?;
        tmp.persist(&path).map_err(|e| e.error)?;
        Ok(path)
    };
    tokio::task::spawn_blocking(write)
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e)))
}

/// Resumes a paused run of `prep` from the handle at `path` with `answer`.
pub(crate) async fn resume(
    settings: Arc<Settings>,
    prep: Arc<Prepared>,
    path: &Path,
    answer: String,
) -> RunOutcome {
    let invalid = |message: String| {
        super::durable::refused(&settings, &prep, FaultKind::InvalidHandle, message)
    };
    if let Some(why) = &prep.not_runnable {
        return invalid(format!(
            "the program cannot run, so nothing can resume: {why}"
        ));
    }
    let saved = match read_handle(path) {
        Ok(s) => s,
        Err(e) => {
            return invalid(format!(
                "the resume handle {} is unusable: {e}",
                path.display()
            ));
        }
    };
    let shown = saved.shown(&prep, Some(path.to_owned()));
    let steps = saved.state.steps;
    match rebuild(settings.clone(), prep.clone(), saved, Some(&answer), 0) {
        Ok(r) => r.run.drive(r.cursor).await,
        Err(Unfit::Record(e)) => invalid(format!(
            "the resume handle {} does not fit this run: {e}",
            path.display()
        )),
        Err(Unfit::Answer(e)) => match shown {
            Some(pause) => still_waiting(&settings, &prep, pause, steps, e),
            None => invalid(e),
        },
    }
}

/// The saved state of a journal's pause record.
pub(crate) fn read_record(record: serde_json::Value) -> Result<Saved, String> {
    Handle::read(record)
}

/// `saved` as a pause record ([`read_record`] reads it back).
pub(crate) fn record(saved: Saved) -> serde_json::Value {
    let handle = Handle {
        format: FORMAT.to_owned(),
        saved,
    };
    serde_json::to_value(handle).unwrap_or_default()
}

/// The outcome of a resume whose answer was refused: the run still waits at the same pause,
/// which now says why the answer did not fit (`refused`) and what would.
pub(crate) fn still_waiting(
    settings: &Settings,
    prep: &Prepared,
    mut pause: Pause,
    steps: u64,
    why: String,
) -> RunOutcome {
    let mut out = super::durable::refused(settings, prep, FaultKind::InvalidHandle, String::new());
    out.status = Status::InputRequired;
    out.fault = None;
    out.steps = steps;
    pause.refused = Some(why);
    out.pause = Some(pause);
    out
}

fn read_handle(path: &Path) -> Result<Saved, String> {
    let text =
        ais_core::files::read_regular_text(path, MAX_HANDLE_BYTES).map_err(|e| e.to_string())?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("it is not a resume handle ({e})"))?;
    Handle::read(json)
}
