//! The machine's side of a replay ([`crate::journal::replay`]): a fresh run of the program on
//! a [`ReplayJournal`], with a model that refuses every exchange (every slot is answered from
//! the journal, or the replay stops), and the human answers the recorded run was given
//! supplied again where it paused.

use super::plan::Prepared;
use super::{Settings, durable};
use crate::journal::replay::{Recording, Replay, ReplayError, ReplayJournal, ToolReplay, compare};
use crate::model::{Model, ModelError, ModelErrorKind, ModelFuture, SlotRequest};
use crate::report::Status;
use ais_core::Value;
use std::sync::Arc;

/// The model of a replay: it answers nothing. A slot reaches it only when the journal let the
/// effect run, which a replay journal never does.
struct Offline;

impl Model for Offline {
    fn name(&self) -> &str {
        "replay"
    }

    fn complete<'a>(&'a self, request: &'a SlotRequest) -> ModelFuture<'a> {
        let message = format!(
            "a replay answers slots from the journal and asks no model, and `{}` reached the model",
            request.instruction
        );
        Box::pin(async move { Err(ModelError::new(ModelErrorKind::Config, message)) })
    }
}

/// `settings` with the offline model.
fn offline(s: &Settings) -> Settings {
    Settings {
        model: Some(Arc::new(Offline)),
        tools: s.tools.clone(),
        out_dir: s.out_dir.clone(),
        max_steps: s.max_steps,
        max_parallel: s.max_parallel,
        trace: s.trace.clone(),
        pulse: s.pulse.clone(),
        limits: s.limits.clone(),
        program_dir: s.program_dir.clone(),
        programs: s.programs.clone(),
        max_answer_bytes: s.max_answer_bytes,
        max_siblings: s.max_siblings,
        policy: s.policy.clone(),
    }
}

/// The answers the recorded run was given on resume, in order: (carry, answer text).
fn answers(recording: &Recording) -> Vec<(String, String)> {
    recording
        .commits
        .iter()
        .flat_map(|c| c.supplied.iter())
        .map(|(name, v)| {
            let text = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (name.clone(), text)
        })
        .collect()
}

/// Replays `recording` on `prep`; see [`crate::Runtime::replay`].
pub(crate) async fn replay(
    settings: &Settings,
    prep: Arc<Prepared>,
    recording: &Recording,
    tools: ToolReplay,
) -> Result<Replay, ReplayError> {
    let recorded = recording.finished()?.clone();
    let settings = Arc::new(offline(settings));
    let journal = Arc::new(ReplayJournal::new(recording, tools));
    let values: Vec<(usize, Value)> = recording
        .start
        .inputs
        .iter()
        .filter_map(|(n, v)| prep.names.index(n).map(|c| (c, Value::from_json(v))))
        .collect();
    let run = durable::fresh(
        settings.clone(),
        prep.clone(),
        Some(recording.start.task.clone()),
        &values,
        journal.clone(),
    );
    let mut outcome = run.drive(0).await;
    let mut answers = answers(recording).into_iter();
    while outcome.status == Status::InputRequired {
        let Some(pause) = &outcome.pause else { break };
        let Some((_, answer)) = answers.by_ref().find(|(c, _)| *c == pause.carry) else {
            break;
        };
        outcome = durable::resume(
            settings.clone(),
            prep.clone(),
            journal.clone(),
            &recording.start,
            Some(answer),
        )
        .await;
    }
    let replayed = serde_json::to_value(&outcome).unwrap_or_default();
    Ok(Replay {
        differences: compare(&recorded, &replayed),
        misses: journal.misses(),
        unasked: journal.unasked(),
        program_changed: prep.digest != recording.start.digest,
        outcome,
    })
}
