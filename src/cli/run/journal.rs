//! `ais run`'s journal: every run journaled by default in `<out>/.ais/runs.db` (or
//! `--journal PATH`), and what `ais resume RUN_ID` needs to continue one — recorded in the
//! run's row, so nothing but the id (and where the journal is) must be given again.

use super::Setup;
use crate::cli::{CliError, shown};
use ais::rt::journal::sqlite::{Durability, SqliteStore};
use ais::rt::journal::{EffectKind, InFlight, JournalError, RunStart, new_run_id};
use ais::rt::llm::ScriptedModel;
use ais::rt::{Inputs, Prepared, Runtime};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What `ais resume` needs of the command that started a run.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Meta {
    pub(super) format: String,
    pub(super) program: PathBuf,
    pub(super) model: Option<String>,
    /// The model configuration it read (absent: none, or a record of an older `ais`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) models: Option<PathBuf>,
    pub(super) out: PathBuf,
    pub(super) max_steps: u64,
    /// The bounds it was started with (absent in a record of an older `ais`: the defaults).
    #[serde(default)]
    pub(super) bounds: super::bounds::Bounds,
    /// The seal of a journaled run's record ([`super::seal`]); a handle's record has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) seal: Option<ais::rt::journal::Seal>,
}

const META_FORMAT: &str = "ais-run-cli/3";

impl Meta {
    /// What `setup` records about the command that started a run, in `format`: the program,
    /// the model (a scripted model's file made absolute), the output root, the step budget and
    /// the bounds, so a resume from any directory finds them again and runs under them.
    pub(super) fn new(setup: &Setup, format: &str) -> Meta {
        let model = setup
            .model_spec
            .as_ref()
            .map(|spec| match spec.strip_prefix("scripted:") {
                Some(file) => format!("scripted:{}", absolute(Path::new(file)).display()),
                None => spec.clone(),
            });
        Meta {
            format: format.to_owned(),
            program: absolute(&setup.file),
            model,
            models: setup.models_file.as_deref().map(absolute),
            out: absolute(&setup.out),
            max_steps: setup.max_steps,
            bounds: setup.bounds.recorded(),
            seal: None,
        }
    }
}

/// A journaled run: the store, the run's id and journal, what it started with.
pub(super) struct Journaled {
    pub(super) store: SqliteStore,
    pub(super) id: String,
    pub(super) journal: Arc<ais::rt::journal::sqlite::SqliteJournal>,
    pub(super) start: RunStart,
}

/// The journal a command uses: `--journal PATH`, else `<out>/.ais/runs.db`.
pub(crate) fn journal_path(journal: Option<&Path>, out: &Path) -> PathBuf {
    journal.map_or_else(|| out.join(".ais").join("runs.db"), Path::to_owned)
}

/// Opens the journal at `path`.
pub(crate) fn open(path: &Path, full: bool) -> Result<SqliteStore, CliError> {
    let durability = if full {
        Durability::Full
    } else {
        Durability::Normal
    };
    SqliteStore::open(path, durability).map_err(|e| {
        CliError::new(
            e.to_string(),
            "name another journal with `--journal PATH`, or run with `--no-journal`",
        )
    })
}

/// A journal error as the CLI reports it.
pub(super) fn cli_error(e: JournalError) -> CliError {
    let help = match &e {
        JournalError::Held { .. } => {
            "wait for the other `ais resume` to finish; a holder that died is taken over by the next resume"
        }
        JournalError::NoRun(_) => {
            "list the runs with `ais runs` (add `--journal PATH` for another journal)"
        }
        _ => "inspect the run with `ais runs show RUN_ID`, or remove it with `ais runs rm RUN_ID`",
    };
    CliError::new(e.to_string(), help)
}

fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned())
}

/// Records a new run of `prep` in the journal at `path`.
pub(super) fn begin(
    setup: &Setup,
    runtime: &Runtime,
    prep: &Prepared,
    inputs: &Inputs,
    path: &Path,
    full: bool,
) -> Result<Journaled, CliError> {
    let inside = |root: &Path| {
        let canon = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
        let (root, path) = (canon(root), canon(path));
        path.starts_with(&root) && !path.starts_with(root.join(".ais"))
    };
    if inside(&setup.out) {
        return Err(CliError::new(
            format!(
                "the journal `{}` lies in the output root `{}`, where the run's tools may write",
                shown(path),
                shown(&setup.out)
            ),
            "keep it under the root's `.ais/` (the default), which tools cannot write, or outside the root",
        ));
    }
    let store = open(path, full)?;
    let meta = Meta::new(setup, META_FORMAT);
    let mut start = runtime.run_start(new_run_id(), prep, inputs, serde_json::Value::Null);
    super::seal::seal(&mut start, meta)?;
    let journal = store.begin(&start).map_err(cli_error)?;
    Ok(Journaled {
        id: start.id.clone(),
        store,
        journal: Arc::new(journal),
        start,
    })
}

/// What a run's row says about the command that started it.
pub(super) fn meta(start: &RunStart) -> Result<Meta, CliError> {
    let meta: Meta = serde_json::from_value(start.meta.clone()).map_err(|e| {
        CliError::new(
            format!(
                "run {} was not started by `ais run` (its record does not read: {e})",
                start.id
            ),
            "continue it from the program that started it (the `Runtime` API)",
        )
    })?;
    if meta.format != META_FORMAT {
        return Err(CliError::new(
            format!(
                "run {} was recorded as `{}`, not `{META_FORMAT}`",
                start.id, meta.format
            ),
            "resume it with the version of ais that started it",
        ));
    }
    Ok(meta)
}

/// Takes run `id` over for a resume: refused when it finished, when it waits for an answer and
/// none is given (or is given one it does not wait for), and when a live process holds it.
pub(super) fn take(
    store: SqliteStore,
    id: &str,
    answer: bool,
    in_flight: InFlight,
) -> Result<Journaled, CliError> {
    let record = store
        .run(id)
        .map_err(cli_error)?
        .ok_or_else(|| cli_error(JournalError::NoRun(id.to_owned())))?;
    use ais::rt::Status;
    use ais::rt::journal::RunState;
    let waits = RunState::Ended(Status::InputRequired);
    let stopped = |s| matches!(s, RunState::Running | RunState::Ended(Status::Interrupted));
    match (record.status, answer) {
        (s, false) if s == waits => {
            return Err(CliError::new(
                format!("run {id} is paused for a human answer"),
                format!("give it: `ais resume {id} --answer TEXT`"),
            ));
        }
        (s, true) if stopped(s) => {
            return Err(CliError::new(
                format!(
                    "run {id} is not waiting for an answer (it is `{}`)",
                    record.status
                ),
                format!("resume it without one: `ais resume {id}`"),
            ));
        }
        (s, _) if s == waits || stopped(s) => {}
        (status, _) => {
            return Err(CliError::new(
                format!("run {id} finished with status `{status}`; nothing is left to resume"),
                format!("replay it with `ais replay {id}`, or start a new run with `ais run`"),
            ));
        }
    }
    let (_, start, journal) = store.resume(id, in_flight).map_err(cli_error)?;
    Ok(Journaled {
        id: id.to_owned(),
        store,
        journal: Arc::new(journal),
        start,
    })
}

/// Advances a scripted model past the exchanges the run's journal answered: each is an
/// effect of its own, answered from the journal on resume, and the script continues where the
/// run stopped.
pub(super) fn skip_scripted(j: &Journaled, scripted: &ScriptedModel) -> Result<(), CliError> {
    for row in j.store.effects(&j.id).map_err(cli_error)? {
        let e = &row.effect;
        if !matches!(e.kind, EffectKind::Slot | EffectKind::Choice) {
            continue;
        }
        // A completion took a response; a failure (none left) took none.
        if row
            .result
            .as_ref()
            .is_none_or(|r| r.get("completion").is_none())
        {
            continue;
        }
        let sibling = e
            .key
            .path
            .rsplit('/')
            .next()
            .and_then(|seg| seg.strip_prefix('s'))
            .and_then(|i| i.parse().ok());
        scripted.skip_exchanges(&e.instruction, sibling, 1);
    }
    Ok(())
}

/// What changed between the program a run started with and `now`: the instructions added,
/// removed and changed, by id.
pub(super) fn changes(start: &RunStart, now: &ais::Program) -> String {
    let Ok(then) = ais::agir::read(&start.source) else {
        return "its recorded program no longer reads".into();
    };
    let ids = |p: &ais::Program| -> Vec<(String, String)> {
        p.instructions()
            .iter()
            .map(|i| (i.id.clone(), format!("{i:?}")))
            .collect()
    };
    let (before, after) = (ids(&then.program), ids(now));
    let mut parts = Vec::new();
    let named = |v: Vec<&String>| {
        v.iter()
            .map(|s| format!("`{s}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let added: Vec<&String> = after
        .iter()
        .filter(|(id, _)| !before.iter().any(|(b, _)| b == id))
        .map(|(id, _)| id)
        .collect();
    let removed: Vec<&String> = before
        .iter()
        .filter(|(id, _)| !after.iter().any(|(a, _)| a == id))
        .map(|(id, _)| id)
        .collect();
    let changed: Vec<&String> = after
        .iter()
        .filter(|(id, text)| before.iter().any(|(b, t)| b == id && t != text))
        .map(|(id, _)| id)
        .collect();
    if !added.is_empty() {
        parts.push(format!("added {}", named(added)));
    }
    if !removed.is_empty() {
        parts.push(format!("removed {}", named(removed)));
    }
    if !changed.is_empty() {
        parts.push(format!("changed {}", named(changed)));
    }
    if parts.is_empty() {
        parts.push("its carries, tools or edges changed".into());
    }
    parts.join("; ")
}

/// The line that says where a run is journaled.
pub(super) fn note(j: &Journaled) -> String {
    format!("run {} (journal {})", j.id, shown(j.store.path()))
}
