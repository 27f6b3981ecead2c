//! Running an `ais!` program with its typed `Input` and `Report`.

use ais_core::Program;
use ais_rt::journal::{Recording, Replay, ReplayError, ToolReplay};
use ais_rt::{Fault, Inputs, Pause, RunOutcome, Runtime, Status};
use std::fmt;

/// Why a run of an `ais!` program did not produce its report.
#[derive(Debug)]
pub enum RunError {
    /// An input value did not fit its carry's type.
    Input(ais_rt::InputError),
    /// The run faulted (spec §10.1): a route dead-end, an unresolvable operand, the step
    /// budget, or a program that has no runnable form.
    Fault(Fault),
    /// A tool, script or slot failed and no route tested it (spec §10.2): the run stopped at
    /// that step when nothing in the program tests the failure (fail closed), or finished with
    /// it untested; the whole outcome is kept, its `failures` naming each step and its error.
    Failed(Box<RunOutcome>),
    /// The run needs a human answer it was not given; resume it with the handle.
    Paused(Box<Pause>),
    /// The report does not fit the program's `Report` type.
    Report(serde_json::Error),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Input(e) => write!(f, "input `{}`: {}", e.name, e.message),
            RunError::Fault(fault) => write!(
                f,
                "the run faulted at `{}`: {}",
                fault.instruction, fault.message
            ),
            RunError::Failed(outcome) => {
                write!(
                    f,
                    "the run ended after {} steps: a step failed and no route tested it",
                    outcome.steps
                )?;
                match outcome.failures.first() {
                    Some(failure) => {
                        write!(f, " (`{}`: {})", failure.instruction, failure.message)
                    }
                    None => Ok(()),
                }
            }
            RunError::Paused(p) => write!(
                f,
                "the run waits for `{}` at `{}`: {}",
                p.carry, p.instruction, p.prompt
            ),
            RunError::Report(e) => write!(f, "the report does not fit its type: {e}"),
        }
    }
}

impl std::error::Error for RunError {}

/// The invocation of a program from its typed input: `task` is the task text, every other
/// field an `input` carry (a string as written, anything else as JSON); `None` is not given.
fn inputs<I: serde::Serialize>(program: &Program, input: &I) -> Result<Inputs, RunError> {
    let json = serde_json::to_value(input).map_err(RunError::Report)?;
    let mut task = None;
    let mut pairs = Vec::new();
    if let serde_json::Value::Object(fields) = json {
        for (name, value) in fields {
            let text = match value {
                serde_json::Value::Null => continue,
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            };
            if name == "task" {
                task = Some(text);
            } else {
                pairs.push((name, text));
            }
        }
    }
    Inputs::parse(program, task, &pairs).map_err(RunError::Input)
}

/// Runs `program` with a typed input and reads its report into the typed `Report`.
pub async fn run<I, R>(program: &Program, input: &I, runtime: &Runtime) -> Result<R, RunError>
where
    I: serde::Serialize,
    R: serde::de::DeserializeOwned,
{
    let inputs = inputs(program, input)?;
    report(runtime.run(program, None, inputs).await)
}

/// Resumes a paused run of `program` from its handle with the human's answer and reads its
/// report into the typed `Report`.
pub async fn resume<R>(
    program: &Program,
    handle: &std::path::Path,
    answer: String,
    runtime: &Runtime,
) -> Result<R, RunError>
where
    R: serde::de::DeserializeOwned,
{
    report(runtime.resume(program, None, handle, answer).await)
}

/// A replay of a recorded run of an `ais!` program (its generated `replay`): what the replay
/// found, and the replayed run's typed report.
///
/// A run recorded in memory with a scripted model, replayed with no model at all:
///
/// ```
/// use ais::ais;
/// use ais::rt::journal::{MemoryJournal, Recording, ToolReplay};
/// use ais::rt::llm::ScriptedModel;
/// use std::sync::Arc;
///
/// ais! {
///     /// Draft a note.
///     program Noter {
///         carries { task: str = input, note: str }
///         /// Write a one-line note on the task.
///         write: GEN-RAW(task) -> note;
///         done: TERMINAL(note);
///         write -> done;
///     }
/// }
///
/// # let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
/// # rt.block_on(async {
/// let out = tempfile::tempdir()?;
/// let script = ScriptedModel::from_json("s.json".as_ref(), serde_json::json!({"write": ["Rivers run."]}))?;
/// let recorder = Noter::runtime().model(Arc::new(script)).out_dir(out.path().into()).build();
/// let prepared = recorder.prepare(Noter::program(), None);
/// let inputs = ais::rt::Inputs::parse(Noter::program(), Some("rivers".into()), &[])?;
/// let start = recorder.run_start("n1", &prepared, &inputs, serde_json::Value::Null);
/// let journal = Arc::new(MemoryJournal::new("n1"));
/// recorder.run_journaled(&prepared, inputs, journal.clone()).await;
/// let recording = Recording::from_memory(&journal, start).await?;
///
/// // No model: every slot is answered from the recording.
/// let runtime = Noter::runtime().out_dir(out.path().into()).build();
/// let replayed = Noter::replay(&recording, ToolReplay::Journal, &runtime).await?;
/// assert!(replayed.matches());
/// assert_eq!(replayed.report?.note.as_deref(), Some("Rivers run."));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Replayed<R> {
    /// What the replay found: its misses, the recorded effects it never asked for, how its
    /// outcome differs from the recorded one — and that outcome.
    pub replay: Replay,
    /// The replayed run's typed report, or why there is none.
    pub report: Result<R, RunError>,
}

impl<R> Replayed<R> {
    /// True when the replay met the recording exactly ([`Replay::matches`]).
    pub fn matches(&self) -> bool {
        self.replay.matches()
    }
}

/// Replays a finished, journaled run of `program` ([`Runtime::replay`]) and reads the replayed
/// report into the typed `Report`.
pub async fn replay<R>(
    program: &Program,
    recording: &Recording,
    tools: ToolReplay,
    runtime: &Runtime,
) -> Result<Replayed<R>, ReplayError>
where
    R: serde::de::DeserializeOwned,
{
    let prepared = runtime.prepare(program, None);
    let replay = runtime.replay(&prepared, recording, tools).await?;
    let report = report(replay.outcome.clone());
    Ok(Replayed { replay, report })
}

/// A run's outcome as the typed report, or why there is none.
fn report<R: serde::de::DeserializeOwned>(outcome: RunOutcome) -> Result<R, RunError> {
    match outcome.status {
        Status::Ok => serde_json::from_value(serde_json::Value::Object(outcome.report))
            .map_err(RunError::Report),
        Status::Error => Err(RunError::Failed(Box::new(outcome))),
        Status::Fault | Status::Interrupted => {
            Err(RunError::Fault(outcome.fault.unwrap_or(Fault {
                kind: ais_rt::FaultKind::NotRunnable,
                instruction: String::new(),
                line: None,
                message: "the run faulted without saying where".into(),
            })))
        }
        Status::InputRequired => match outcome.pause {
            Some(p) => Err(RunError::Paused(Box::new(p))),
            None => Err(RunError::Failed(Box::new(outcome))),
        },
    }
}
