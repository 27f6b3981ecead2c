//! A journaled run as a report's [`RunRecord`]: the step commits and effects `ais runs show`
//! reads, the program the run started with (for the graph, the opcodes and the units), and
//! the outcome it ended with.
//!
//! The journal keeps each slot's value, usage and exchanges (at most 32, each string cut at
//! 16 KiB, secrets scrubbed when written, as the trace scrubs them), each step's start and
//! duration, and each tool's result — but not a tool's operands, nor the TERMINAL's time (it
//! commits nothing). A journal of an older ais kept no exchanges: the page says so and where
//! they are (`ais run --trace FILE`).

use super::{Event, ExchangeEvent, RunRecord, SlotEvent, UsageEvent};
use crate::cli::{CliError, shown};
use ais_rt::journal::sqlite::{Durability, EffectRow, SqliteStore, recorded_outcome};
use ais_rt::journal::{EffectKind, JournalError, Json};
use std::path::Path;

fn journal_error(e: JournalError) -> CliError {
    CliError::new(
        e.to_string(),
        "list the runs with `ais runs` (name the journal with `--journal PATH`, or the output root with `--out DIR`)",
    )
}

/// Each instruction's id, opcode and unit, in program order (a commit's cursor indexes it).
fn instructions(source: &str) -> Vec<(String, String, &'static str)> {
    let Ok(doc) = ais_core::agir::read(source) else {
        return Vec::new();
    };
    match ais_core::plan::lower(&doc.program) {
        Ok(plan) => plan
            .steps
            .iter()
            .map(|s| {
                let unit = match s.unit {
                    ais_core::plan::Unit::Model => "model",
                    ais_core::plan::Unit::Code => "code",
                };
                (s.id.clone(), s.opcode.as_str().to_owned(), unit)
            })
            .collect(),
        Err(_) => doc
            .program
            .instructions()
            .iter()
            .map(|i| (i.id.clone(), i.opcode.as_str().to_owned(), ""))
            .collect(),
    }
}

/// The sibling a key's path names (`s3`, `c7/s2`: its last segment).
fn sibling(path: &str) -> Option<usize> {
    path.rsplit('/').next()?.strip_prefix('s')?.parse().ok()
}

/// A slot's journaled record as the report's slot part.
fn slot_event(result: &Json, model: &str, scripted: bool) -> SlotEvent {
    let parsed = match &result["value"] {
        Json::Object(m) if m.contains_key("Ok") => m.get("Ok").cloned(),
        Json::Object(m) => m.get("Err").map(|e| serde_json::json!({"error": e})),
        _ => None,
    };
    let exchanges = result["log"]
        .as_array()
        .map(|log| {
            log.iter()
                .map(|x| ExchangeEvent {
                    request: x["request"].clone(),
                    response: x["response"].clone(),
                })
                .collect()
        })
        .unwrap_or_default();
    // The model that answered, as the journal recorded it (a run's own model before tiers).
    let (model, scripted) = match result["model"].as_str() {
        Some(answered) => (answered, result["scripted"].as_bool().unwrap_or(false)),
        None => (model, scripted),
    };
    SlotEvent {
        model: model.to_owned(),
        scripted,
        exchanges,
        recorded: result["exchanges"].as_u64().unwrap_or(0) as usize,
        parsed,
        repairs: result["repairs"].as_u64().unwrap_or(0) as u32,
        tool_rounds: result["tool_rounds"].as_u64().unwrap_or(0) as u32,
        usage: serde_json::from_value::<UsageEvent>(result["usage"].clone()).unwrap_or_default(),
    }
}

/// Lays a journaled effect on its step's event (a sibling's slot becomes an event of its own).
fn apply(events: &mut Vec<Event>, at: usize, row: &EffectRow, model: &str, scripted: bool) {
    let e = &row.effect;
    let Some(result) = &row.result else {
        events[at].error = Some(format!(
            "{} `{}` was in flight when the run stopped",
            e.kind.as_str(),
            e.name
        ));
        return;
    };
    match e.kind {
        EffectKind::Slot | EffectKind::Choice => {
            let slot = slot_event(result, model, scripted);
            match sibling(&e.key.path) {
                Some(s) => {
                    let mut ev = events[at].clone();
                    ev.sibling = Some(s);
                    ev.written = Vec::new();
                    ev.slot = Some(slot);
                    events.push(ev);
                }
                None => events[at].slot = Some(slot),
            }
        }
        EffectKind::Tool | EffectKind::Artifact | EffectKind::Mcp => {
            let ev = &mut events[at];
            ev.tool = Some(e.name.clone());
            if let Some(err) = result.get("err") {
                ev.error = Some(err["message"].as_str().unwrap_or_default().to_owned());
            }
        }
    }
}

/// Reads run `id` from the journal at `db`.
pub(super) fn load(db: &Path, id: &str) -> Result<RunRecord, CliError> {
    if !db.is_file() {
        return Err(CliError::new(
            format!(
                "there is no journal at `{}` to find run `{id}` in",
                shown(db)
            ),
            "give a trace file, name the journal with `--journal PATH` or the output root with `--out DIR`",
        ));
    }
    let store = SqliteStore::open(db, Durability::Normal).map_err(journal_error)?;
    let record = store
        .run(id)
        .map_err(journal_error)?
        .ok_or_else(|| journal_error(JournalError::NoRun(id.to_owned())))?;
    let start = store.start(id).map_err(journal_error)?;
    let steps = store.steps(id).map_err(journal_error)?;
    let effects = store.effects(id).map_err(journal_error)?;
    let outcome = recorded_outcome(&store, id).map_err(journal_error)?;
    let scripted = outcome
        .as_ref()
        .and_then(|o| o["scripted"].as_bool())
        .unwrap_or(false);
    let model = record.meta["model"].as_str().unwrap_or_default().to_owned();
    let nodes = instructions(&start.source);
    let event = |step: u64, instruction: &str| {
        let (opcode, unit) = nodes
            .iter()
            .find(|(i, _, _)| i == instruction)
            .map(|(_, o, u)| (o.clone(), (*u).to_owned()))
            .unwrap_or_default();
        Event {
            step,
            instruction: instruction.to_owned(),
            opcode,
            unit,
            ..Event::default()
        }
    };
    let mut events: Vec<Event> = Vec::new();
    let mut at_step: Vec<(u64, usize)> = Vec::new();
    for s in &steps {
        let mut ev = event(s.commit.step, &s.commit.instruction);
        ev.written = s.commit.written.clone();
        if let Some((started_ms, elapsed_us)) = s.commit.time {
            (ev.started_ms, ev.elapsed_us) = (started_ms, elapsed_us);
        }
        at_step.push((s.commit.step, events.len()));
        events.push(ev);
    }
    // The step that ended the run (a TERMINAL, a fault) commits nothing: the last cursor names it.
    let last = steps.last().map_or(0, |s| s.commit.step);
    if record.steps > last {
        let cursor = steps.last().map_or(0, |s| s.commit.cursor);
        if let Some((id, _, _)) = nodes.get(cursor) {
            at_step.push((record.steps, events.len()));
            events.push(event(record.steps, id));
        }
    }
    for row in &effects {
        // A CALL sub-run's effects (`c…` paths) belong to the CALL's step.
        let step = if row.effect.key.path.starts_with('c') {
            row.effect
                .key
                .path
                .trim_start_matches('c')
                .split('/')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(row.effect.key.step)
        } else {
            row.effect.key.step
        };
        if let Some(&(_, at)) = at_step.iter().find(|(s, _)| *s == step) {
            apply(&mut events, at, row, &model, scripted);
        }
    }
    let mut outcome = outcome.or_else(|| Some(serde_json::json!({"status": record.status})));
    // The journal keeps values as the run had them: secrets leave as the trace lets them.
    let scrub = ais_rt::trace::Scrubber::from_env();
    for e in &mut events {
        for (_, v) in &mut e.written {
            scrub.scrub(v);
        }
        if let Some(slot) = e.slot.as_mut() {
            if let Some(p) = slot.parsed.as_mut() {
                scrub.scrub(p);
            }
            // Scrubbed when journaled; again for secrets of this process's environment.
            for x in &mut slot.exchanges {
                scrub.scrub(&mut x.request);
                scrub.scrub(&mut x.response);
            }
        }
        if let Some(t) = e.error.as_deref().and_then(|t| scrub.scrub_str(t)) {
            e.error = Some(t);
        }
    }
    if let Some(o) = &mut outcome {
        scrub.scrub(o);
    }
    Ok(RunRecord {
        name: format!("run {} of `{}`", record.id, record.program),
        events,
        outcome,
        program: Some(start.source),
    })
}
