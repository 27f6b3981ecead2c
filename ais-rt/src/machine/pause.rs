//! The human-input pause and its resumable handle.
//!
//! A run that needs an answer it was not given stops *before* the instruction that needs it
//! (an unsupplied `role: input` carry) or at it (an `ask_user` call), and writes a handle under
//! the output root: `.ais/resume/<instruction>-<time>-<pid>.json`, written atomically (a temp
//! file in the same directory, then a rename). The handle holds the run's whole state — the
//! carry file, what was supplied and written, the step count, the deviations and unrouted
//! failures, loop counters — and the SHA-256 of the program's canonical AG-IR.
//!
//! Resuming reads the handle and fails closed: a handle that does not parse, that names
//! another format, another program (or this program changed), an instruction that is not at
//! its index, or a carry the program does not declare is refused with status `fault`
//! ([`FaultKind::InvalidHandle`]) and nothing runs; so is an answer longer than the largest
//! model answer (`max_answer_bytes`). Otherwise the answer fills the carry
//! (typed by its declaration) or becomes the `ask_user` call's result, and the run continues
//! at that instruction: nothing before it runs again — nor, for an `ask_user` call inside a
//! pipeline, the tools before the call (the handle records its position).

use super::carries::{self, CarryFile};
use super::plan::Prepared;
use super::{Run, Settings, Unrouted};
use crate::report::{FaultKind, Pause, RunOutcome, Status};
use ais_core::sig::Return;
use ais_core::{Deviation, Type, Value};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const FORMAT: &str = "ais-resume/1";
/// The largest handle read back.
const MAX_HANDLE_BYTES: u64 = 256 * 1024 * 1024;

#[derive(Serialize, Deserialize)]
struct Handle {
    format: String,
    program: String,
    instruction: String,
    cursor: usize,
    carry: String,
    prompt: String,
    ask: bool,
    /// For an `ask_user` pause: the call's position in the step's pipeline.
    #[serde(default)]
    tool: usize,
    task: String,
    carries: IndexMap<String, serde_json::Value>,
    supplied: Vec<String>,
    written: Vec<(String, u64)>,
    steps: u64,
    /// SPAWN siblings and CALLed steps counted against the budget so far.
    #[serde(default)]
    sub_steps: u64,
    deviations: Vec<(String, String, String)>,
    unrouted: Vec<Unrouted>,
    usage: (u64, u64, u64, u64),
    /// The cost and failovers so far.
    #[serde(default)]
    spend: crate::journal::Spend,
    loop_counts: Vec<i64>,
    branches: Vec<(usize, usize)>,
    /// A SPAWN paused for a sibling: its finished and waiting siblings.
    #[serde(default)]
    spawn: Option<super::spawn::Pending>,
}

impl Run {
    /// Pauses at step `at` for `carry` — or, with `ask`, for the `ask_user` call at that
    /// position of the step's pipeline: writes the handle and returns `input_required`.
    pub(crate) async fn pause(
        mut self,
        at: usize,
        carry: String,
        prompt: String,
        ask: Option<usize>,
    ) -> RunOutcome {
        let prep = self.prep.clone();
        let step = &prep.steps[at];
        let names = &self.carries.names.list;
        let flagged = |v: &[bool]| -> Vec<String> {
            v.iter()
                .zip(names)
                .filter(|(b, _)| **b)
                .map(|(_, n)| n.clone())
                .collect()
        };
        let handle = Handle {
            format: FORMAT.to_owned(),
            program: self.prep.digest().to_owned(),
            instruction: step.id.clone(),
            cursor: at,
            carry,
            prompt,
            ask: ask.is_some(),
            tool: ask.unwrap_or(0),
            task: self.task.clone(),
            carries: self
                .carries
                .to_map()
                .into_iter()
                .map(|(k, v)| (k, v.to_json()))
                .collect(),
            supplied: flagged(&self.supplied),
            written: self
                .written
                .iter()
                .zip(names)
                .filter(|(w, _)| **w > 0)
                .map(|(w, n)| (n.clone(), *w))
                .collect(),
            steps: self.steps,
            sub_steps: self.sub_steps,
            deviations: self
                .deviations
                .iter()
                .map(|d| (d.subject.clone(), d.intended.clone(), d.substituted.clone()))
                .collect(),
            unrouted: self.unrouted.clone(),
            usage: (
                self.usage.prompt_tokens,
                self.usage.completion_tokens,
                self.usage.cached_tokens,
                self.usage.slots,
            ),
            spend: crate::journal::spend_of(&self.usage),
            loop_counts: self.loop_counts.clone(),
            branches: self.branches.clone(),
            spawn: self.spawn_pending.take(),
        };
        // A journaled run keeps its pause in the journal (`ais resume RUN_ID`); any other
        // writes a handle file.
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
        out.pause = Some(handle.shown(&prep, handle_path));
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
    let handle = match read_handle(path) {
        Ok(h) => h,
        Err(e) => {
            return invalid(format!(
                "the resume handle {} is unusable: {e}",
                path.display()
            ));
        }
    };
    let shown = handle.shown(&prep, Some(path.to_owned()));
    let steps = handle.steps;
    let (run, cursor, _) = match restore(settings.clone(), prep.clone(), handle, &answer) {
        Ok(x) => x,
        Err(Unfit::Record(e)) => {
            return invalid(format!(
                "the resume handle {} does not fit this run: {e}",
                path.display()
            ));
        }
        Err(Unfit::Answer(e)) => return still_waiting(&settings, &prep, shown, steps, e),
    };
    run.drive(cursor).await
}

/// Rebuilds a journaled run from its pause record (the handle's JSON) with `answer`: the run,
/// its cursor, and the carry the answer supplied (none for an `ask_user` answer, which is the
/// call's result). An [`Unfit::Answer`] leaves the run waiting; an [`Unfit::Record`] means the
/// journal's pause record cannot continue in this program.
pub(crate) fn restore_value(
    settings: Arc<Settings>,
    prep: Arc<Prepared>,
    pause: serde_json::Value,
    answer: &str,
) -> Result<(Run, usize, Vec<usize>), Unfit> {
    let h: Handle =
        serde_json::from_value(pause).map_err(|e| format!("it is no pause record ({e})"))?;
    if h.format != FORMAT {
        return Err(Unfit::Record(format!(
            "its format is `{}`, not `{FORMAT}`",
            h.format
        )));
    }
    restore(settings, prep, h, answer)
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

/// The pause a journal's pause record describes, as a report shows it (`None` when the record
/// is no pause record this build reads).
pub(crate) fn shown_value(prep: &Prepared, pause: &serde_json::Value) -> Option<(Pause, u64)> {
    let h: Handle = serde_json::from_value(pause.clone()).ok()?;
    Some((h.shown(prep, None), h.steps))
}

impl Handle {
    /// The pause as a report shows it: what it waits for and what an answer must be.
    fn shown(&self, prep: &Prepared, handle: Option<PathBuf>) -> Pause {
        let ty = answer_type(prep, self);
        let expected = carries::expected(&prep.program, ty.as_ref());
        Pause {
            carry: self.carry.clone(),
            prompt: self.prompt.clone(),
            instruction: self.instruction.clone(),
            line: prep.steps.get(self.cursor).and_then(|s| s.line),
            handle,
            expects: expected.map(|e| e.what),
            refused: None,
        }
    }
}

/// The type the answer to a pause is parsed by: the carry's declared type, or for an
/// `ask_user` call, the call's declared result (`None`: any text, kept as text).
fn answer_type(prep: &Prepared, h: &Handle) -> Option<Type> {
    if h.ask {
        return match &prep.steps.get(h.cursor)?.work {
            super::plan::Work::Tools(calls) => match &calls.get(h.tool)?.ret {
                Return::Type(t) => Some(t.clone()),
                _ => None,
            },
            _ => None,
        };
    }
    let c = prep.names.index(&h.carry)?;
    prep.names.types.get(c).cloned().flatten()
}

fn read_handle(path: &Path) -> Result<Handle, String> {
    let text =
        crate::files::read_regular_text(path, MAX_HANDLE_BYTES).map_err(|e| e.to_string())?;
    let handle: Handle =
        serde_json::from_str(&text).map_err(|e| format!("it is not a resume handle ({e})"))?;
    if handle.format != FORMAT {
        return Err(format!("its format is `{}`, not `{FORMAT}`", handle.format));
    }
    Ok(handle)
}

/// Why a paused run cannot continue with an answer.
#[derive(Debug)]
pub(crate) enum Unfit {
    /// The answer does not fit (too long, or not of the carry's type): the run still waits,
    /// and another answer may.
    Answer(String),
    /// The pause record does not fit this program: no answer can continue it.
    Record(String),
}

impl From<String> for Unfit {
    fn from(m: String) -> Unfit {
        Unfit::Record(m)
    }
}

/// Rebuilds the run a handle describes and applies the answer, parsed by the type of what it
/// fills ([`answer_type`]); returns the run, its cursor, and the carry the answer supplied
/// (none for an `ask_user` answer, which is the call's result).
fn restore(
    settings: Arc<Settings>,
    prep: Arc<Prepared>,
    h: Handle,
    answer: &str,
) -> Result<(Run, usize, Vec<usize>), Unfit> {
    // A human answer is bounded as a model's is: it fills a carry, the journal and the report.
    if answer.len() > settings.max_answer_bytes {
        return Err(Unfit::Answer(format!(
            "the answer is {} bytes, more than the {} a human answer may have (the limit of a model's answer, `--max-answer-bytes`); answer again, shorter, or raise the limit",
            answer.len(),
            settings.max_answer_bytes
        )));
    }
    let ty = answer_type(&prep, &h);
    if h.program != prep.digest() {
        return Err(Unfit::Record(
            "it belongs to another program, or the program changed since the run paused".into(),
        ));
    }
    let step = prep
        .steps
        .get(h.cursor)
        .filter(|s| s.id == h.instruction)
        .ok_or_else(|| {
            format!(
                "instruction `{}` is not step {} of this program",
                h.instruction, h.cursor
            )
        })?;
    let names = prep.names.clone();
    let mut values = prep.initial.clone();
    for (name, v) in &h.carries {
        let c = names.index(name).ok_or_else(|| {
            format!("it holds carry `{name}`, which this program does not declare")
        })?;
        let value = Value::from_json(v);
        if let Some(Some(ty)) = names.types.get(c) {
            crate::journal::fits(&prep.program, ty, &value)
                .map_err(|e| format!("it holds carry `{name}` as {e}"))?;
        }
        values[c] = value;
    }
    let flags = |list: &[String]| -> Result<Vec<bool>, String> {
        let mut out = vec![false; names.list.len()];
        for n in list {
            let c = names.index(n).ok_or_else(|| {
                format!("it names carry `{n}`, which this program does not declare")
            })?;
            out[c] = true;
        }
        Ok(out)
    };
    if h.loop_counts.len() != prep.steps.len()
        || h.branches
            .iter()
            .any(|&(a, b)| a >= prep.steps.len() || b >= prep.steps.len())
    {
        return Err(Unfit::Record(
            "its loop and branch state does not match this program's steps".into(),
        ));
    }
    let mut run = Run::new(settings, prep.clone(), Some(h.task.clone()), &[], 0);
    run.carries = CarryFile {
        names: names.clone(),
        values,
    };
    run.supplied = flags(&h.supplied)?;
    let mut written = vec![0; names.list.len()];
    for (n, at) in &h.written {
        let c = names
            .index(n)
            .ok_or_else(|| format!("it names carry `{n}`, which this program does not declare"))?;
        written[c] = *at;
    }
    run.written = written;
    run.steps = h.steps;
    run.sub_steps = h.sub_steps;
    run.deviations = h
        .deviations
        .into_iter()
        .map(|(subject, intended, substituted)| Deviation {
            check: None,
            subject,
            intended,
            substituted,
        })
        .collect();
    run.unrouted = h.unrouted;
    run.usage = crate::journal::usage_of(h.usage, h.spend);
    run.effects.meter().restart(run.usage.cost.unwrap_or(0.0));
    run.loop_counts = h.loop_counts;
    run.branches = h.branches;
    if let Some(p) = &h.spawn
        && (p.at != h.cursor || step.spawn.is_none() || !h.ask)
    {
        return Err(Unfit::Record(format!(
            "it records paused siblings of step {}, and the run paused at `{}`, which is not that SPAWN",
            p.at, step.id
        )));
    }
    run.spawn_pending = h.spawn;
    if h.ask
        && !matches!(&step.work, super::plan::Work::Tools(calls) if calls.get(h.tool).is_some_and(|c| c.ask_user))
    {
        return Err(Unfit::Record(format!(
            "it says `{}` asked the user with its tool {}, and that tool of the step is no `ask_user` call",
            step.id, h.tool
        )));
    }
    let carry = if h.ask {
        None
    } else {
        Some(names.index(&h.carry).ok_or_else(|| {
            format!(
                "it pauses for carry `{}`, which this program does not declare",
                h.carry
            )
        })?)
    };
    let what = match carry {
        Some(_) => format!("carry `{}`", h.carry),
        None => format!("the answer `{}` asks for", h.instruction),
    };
    let shown: String = answer.chars().take(40).collect();
    let cut = if shown.len() < answer.len() {
        "…"
    } else {
        ""
    };
    let declared = ty.as_ref().map_or("any".to_owned(), Type::to_string);
    let value = carries::parse_typed(&prep.program, ty.as_ref(), answer).map_err(|e| {
        Unfit::Answer(format!(
            "`{shown}{cut}` does not fit {what}, declared `{declared}`: answer with {}, such as `--answer {}`",
            e.what, e.example
        ))
    })?;
    // A list or an object must fit its element and field types too.
    if let Some(ty) = &ty {
        crate::journal::fits(&prep.program, ty, &value).map_err(|e| {
            Unfit::Answer(format!(
                "`{shown}{cut}` does not fit {what}, declared `{declared}`: it is {e}"
            ))
        })?;
    }
    match carry {
        Some(c) => {
            run.carries.set(c, value);
            run.supplied[c] = true;
        }
        None => {
            // The `ask_user` call at the cursor yields the answer instead of pausing again;
            // the pipeline's tools before it already ran.
            run.answer = Some(super::Answer {
                value,
                tool: h.tool,
            });
        }
    }
    Ok((run, h.cursor, carry.into_iter().collect()))
}
