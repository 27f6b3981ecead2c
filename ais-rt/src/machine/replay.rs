//! The machine's side of a replay ([`crate::journal::replay`]): a fresh run of the program on
//! a [`ReplayJournal`], with a model that refuses every exchange (every slot is answered from
//! the journal, or the replay stops), and the human answers the recorded run was given —
//! `role: input` carries and `ask_user` results — supplied again where it paused.

use super::plan::Prepared;
use super::{Settings, durable};
use crate::journal::EffectKind;
use crate::journal::Journal;
use crate::journal::replay::{Recording, Replay, ReplayError, ReplayJournal, ToolReplay, compare};
use crate::llm::{Model, ModelError, ModelErrorKind, ModelFuture, SlotRequest};
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
        models: s.models.all_to(Arc::new(Offline)),
        // A replay asks no model: it spends nothing.
        max_cost: None,
        live: None,
        // Every sibling and callee replays here, against the recording.
        placement: Arc::new(crate::placement::Local),
        ..s.clone()
    }
}

/// What a human answer was given for.
#[derive(Debug, PartialEq)]
enum Given {
    /// A `role: input` carry, by name.
    Carry(String),
    /// An `ask_user` call of an instruction.
    Ask(String),
}

/// The answers the recorded run was given on resume, in order: carries supplied (from its
/// commits) and `ask_user` results (from its effects, in key order, siblings by number).
fn answers(recording: &Recording) -> Vec<(Given, String)> {
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut out: Vec<(Given, String)> = recording
        .commits
        .iter()
        .flat_map(|c| c.supplied.iter())
        .map(|(name, v)| (Given::Carry(name.clone()), text(v)))
        .collect();
    let mut asks: Vec<_> = recording
        .effects
        .iter()
        .filter(|(e, _)| e.kind == EffectKind::Tool && e.name == "ask_user")
        .filter_map(|(e, r)| Some((e, r.as_ref()?.get("ok")?)))
        .collect();
    let sibling = |path: &str| -> u64 {
        path.rsplit('/')
            .next()
            .and_then(|s| s.strip_prefix('s'))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    asks.sort_by_key(|(e, _)| (e.key.step, sibling(&e.key.path), e.key.index));
    out.extend(
        asks.into_iter()
            .map(|(e, v)| (Given::Ask(e.instruction.clone()), text(v))),
    );
    out
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
    let mut answers = answers(recording);
    while outcome.status == Status::InputRequired {
        let Some(pause) = &outcome.pause else { break };
        // The pause record says which question waits: an `ask_user` call's (by the
        // instruction that asked, in a CALLed program when one asked) or a carry's.
        let asked = journal
            .history()
            .await
            .ok()
            .and_then(|h| super::pause::read_record(h.pause?).ok()?.waits);
        let wanted = match asked.as_ref().map(|w| w.innermost()) {
            Some(w) if w.ask.is_some() => Given::Ask(w.instruction.clone()),
            Some(w) => Given::Carry(w.carry.clone()),
            None => Given::Carry(pause.carry.clone()),
        };
        let Some(at) = answers.iter().position(|(g, _)| *g == wanted) else {
            break;
        };
        let (_, answer) = answers.remove(at);
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
        program_changed: prep.digest() != recording.start.digest,
        outcome,
    })
}
