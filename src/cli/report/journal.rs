//! A journaled run as a report's [`RunRecord`]: the step commits and effects `ais runs show`
//! reads, the program the run started with (for the graph, the opcodes and the units), and
//! the outcome it ended with.
//!
//! The journal keeps each exchange of a slot with its model as an effect of its own (the
//! reply, the usage, the model asked and what its answer cost, the request and response with each string cut at 16 KiB and secrets
//! scrubbed when written, as the trace scrubs them), each step's start and
//! duration, and each tool's result — but not a tool's operands, nor the TERMINAL's time (it
//! commits nothing). A journal of an older ais kept no exchanges: the page says so and where
//! they are (`ais run --trace FILE`).

use super::{Event, ExchangeEvent, FailoverEvent, RunRecord, SlotEvent, UsageEvent};
use crate::cli::{CliError, shown};
use ais::rt::journal::sqlite::{Durability, EffectRow, SqliteStore, recorded_outcome};
use ais::rt::journal::{EffectKind, JournalError, Json};
use std::path::Path;

fn journal_error(e: JournalError) -> CliError {
    CliError::new(
        e.to_string(),
        "list the runs with `ais runs` (name the journal with `--journal PATH`, or the output root with `--out DIR`)",
    )
}

/// Each instruction's id, opcode and unit, in program order (a commit's cursor indexes it).
fn instructions(source: &str) -> Vec<(String, String, &'static str)> {
    let Ok(doc) = ais::agir::read(source) else {
        return Vec::new();
    };
    match ais::plan::lower(&doc.program) {
        Ok(plan) => plan
            .steps
            .iter()
            .map(|s| {
                let unit = match s.unit {
                    ais::plan::Unit::Model => "model",
                    ais::plan::Unit::Code => "code",
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
pub(crate) fn sibling(path: &str) -> Option<usize> {
    path.rsplit('/').next()?.strip_prefix('s')?.parse().ok()
}

/// The step a journaled effect's key places it at, and its sub-steps there: a CALLed program's
/// effect (`c2`, its own step 3) is at the CALL's step 2, sub-step 3 (`c2/c1` at step 4: step
/// 2, sub-steps 1 and 4) — the numbers the trace gives ([`ais::rt::trace::StepEvent::sub`]).
fn placed(key: &ais::rt::journal::EffectKey) -> (u64, Vec<u64>) {
    let calls: Vec<u64> = key
        .path
        .split('/')
        .filter_map(|seg| seg.strip_prefix('c')?.parse().ok())
        .collect();
    match calls.split_first() {
        None => (key.step, Vec::new()),
        Some((&top, inner)) => {
            let mut sub = inner.to_vec();
            sub.push(key.step);
            (top, sub)
        }
    }
}

/// Adds one journaled exchange of a slot (`{completion: {reply, usage, request, response}}`,
/// or `{failed: {kind, message}}`) to the slot's part of its event.
fn add_exchange(slot: &mut SlotEvent, result: &Json) {
    slot.recorded += 1;
    let r = result.get("failed").unwrap_or(&result["completion"]);
    // Each exchange names the model asked (a journal of an older ais does not): a change of
    // model within a slot is a failover, and the last one asked is the one that answered.
    if let Some(model) = r["model"].as_str() {
        let first = slot.recorded == 1;
        if !first && model != slot.model {
            slot.failovers.push(FailoverEvent {
                from: std::mem::take(&mut slot.model),
                to: model.to_owned(),
                reason: String::new(),
            });
        }
        model.clone_into(&mut slot.model);
    }
    if let Some(f) = result.get("failed") {
        slot.parsed = Some(serde_json::json!({"error": f["message"]}));
        return;
    }
    let c = &result["completion"];
    slot.cost = match (slot.cost, c["cost"].as_f64()) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    };
    slot.exchanges.push(ExchangeEvent {
        request: c["request"].clone(),
        response: c["response"].clone(),
    });
    let usage = serde_json::from_value::<UsageEvent>(c["usage"].clone()).unwrap_or_default();
    slot.usage.prompt_tokens += usage.prompt_tokens;
    slot.usage.completion_tokens += usage.completion_tokens;
    match c["reply"]["kind"].as_str() {
        Some("tool_calls") => slot.tool_rounds += 1,
        Some("value") => {
            // A value after an earlier one answers a repair request.
            if slot.parsed.is_some() {
                slot.repairs += 1;
            }
            slot.parsed = Some(c["reply"]["value"].clone());
        }
        _ => {}
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
            // Each exchange is an effect of its own; a slot's exchanges gather on one event.
            let ev = match sibling(&e.key.path) {
                Some(s) => {
                    let (step, instruction) = (events[at].step, events[at].instruction.clone());
                    match events.iter().rposition(|ev| {
                        ev.sibling == Some(s) && ev.step == step && ev.instruction == instruction
                    }) {
                        Some(k) => k,
                        None => {
                            let mut ev = events[at].clone();
                            ev.sibling = Some(s);
                            ev.written = Vec::new();
                            ev.slot = None;
                            events.push(ev);
                            events.len() - 1
                        }
                    }
                }
                None => at,
            };
            let slot = events[ev].slot.get_or_insert_with(|| SlotEvent {
                model: model.to_owned(),
                scripted,
                ..SlotEvent::default()
            });
            add_exchange(slot, result);
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
        // A CALLed program's effects (`c…` paths) are on its own step, a sub-step of the CALL's.
        let (step, sub) = placed(&row.effect.key);
        let Some(&(_, at)) = at_step.iter().find(|(s, _)| *s == step) else {
            continue;
        };
        let at = match sub.is_empty() {
            true => at,
            false => {
                let instruction = &row.effect.instruction;
                match events.iter().rposition(|e| {
                    e.step == step
                        && e.sub == sub
                        && e.sibling.is_none()
                        && e.instruction == *instruction
                }) {
                    Some(k) => k,
                    None => {
                        events.push(Event {
                            sub,
                            ..event(step, instruction)
                        });
                        events.len() - 1
                    }
                }
            }
        };
        apply(&mut events, at, row, &model, scripted);
    }
    let mut outcome = outcome.or_else(|| Some(serde_json::json!({"status": record.status})));
    // The journal keeps values as the run had them: secrets leave as the trace lets them.
    let scrub = ais::rt::trace::Scrubber::from_env();
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
