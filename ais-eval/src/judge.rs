//! Judged rubrics: the judge is itself a tiny ais program ([`JUDGE_AGIR`]) — one GEN-FILL slot
//! that reads the rubric and the report carries judged and writes a typed `Verdict` (`pass`,
//! `reason`) — run by the same runtime, so its exchange is validated, repaired, traced and
//! journaled like any slot's. An answer that does not fit `Verdict` (after the slot's repair
//! rounds) is a failed assertion saying so, never a crash.

use ais_rt::journal::sqlite::SqliteStore;
use ais_rt::llm::Model;
use ais_rt::trace::{StepEvent, TraceSink};
use ais_rt::{Inputs, Runtime, Status};
use serde_json::Value as Json;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

/// The judge program.
pub const JUDGE_AGIR: &str = r#"---
name: ais_test_judge
description: "Judge a run's report against a rubric, with a typed verdict."
---
agir_version: 0.1
shape: pipeline
types:
  Verdict:
    kind: object
    fields:
      pass:
        type: bool
        doc: "true when the subject satisfies the rubric in every respect, false otherwise."
      reason:
        type: str
        doc: "Why, in one or two sentences that quote the subject where it decides."
    doc: "A judge's verdict on one rubric."
walker:
  name: Judge
  carries:
    task:
      type: str
      role: input
      doc: "What is judged."
    rubric:
      type: str
      role: input
      doc: "The rubric the subject must satisfy."
    subject:
      type: str
      role: input
      doc: "The report carries judged, as JSON."
    verdict:
      type: Verdict
      produced_by: judge
      doc: "The verdict."
nodes:
  - id: judge
    type: GEN-FILL
    owner: model
    reads: [rubric, subject]
    writes: [verdict]
    doc: "Judge whether the subject satisfies the rubric. Be strict: pass only when every part of the rubric holds."
  - id: done
    type: TERMINAL
    owner: code
    reads: [verdict]
edges:
  - {from: judge, to: done, modality: mandatory}
"#;

fn program() -> &'static Arc<ais_core::Program> {
    static PROGRAM: OnceLock<Arc<ais_core::Program>> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        let doc = ais_core::agir::read(JUDGE_AGIR).unwrap_or_else(|e| {
            // The text is a constant of this crate, pinned by a test.
            unreachable!("the judge program does not read: {e}")
        });
        Arc::new(doc.program)
    })
}

/// A judge's answer: whether the rubric held and why, and how the judge ran.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgment {
    /// The verdict: `None` when the judge gave no usable one.
    pub pass: Option<bool>,
    /// The judge's reason, or why there is no verdict.
    pub reason: String,
    /// The judge's run in the journal, when journaled.
    pub run: Option<String>,
    /// Exchanges with a live (not scripted) model.
    pub live_calls: u64,
}

/// Collects step events.
#[derive(Default)]
pub(crate) struct Collect(pub(crate) Mutex<Vec<StepEvent>>);

impl TraceSink for Collect {
    fn event(&self, event: &StepEvent) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(event.clone());
    }
}

impl Collect {
    pub(crate) fn take(&self) -> Vec<StepEvent> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Asks `model` whether `subject` satisfies `rubric`, running the judge program under `out`,
/// journaled in `store` (with `meta`) when given.
pub async fn judge(
    model: Arc<dyn Model>,
    rubric: &str,
    subject: &Json,
    out: &Path,
    store: Option<(&SqliteStore, Json)>,
) -> Judgment {
    let sink = Arc::new(Collect::default());
    let runtime = Runtime::builder()
        .tools(ais_rt::ToolRegistry::new())
        .out_dir(out.to_owned())
        .max_steps(10)
        .model(model)
        .trace(sink.clone())
        .build();
    let program = program();
    let subject_text = serde_json::to_string_pretty(subject).unwrap_or_default();
    let inputs = match Inputs::parse(
        program,
        Some("Judge a test run's report.".to_owned()),
        &[
            ("rubric".to_owned(), rubric.to_owned()),
            ("subject".to_owned(), subject_text),
        ],
    ) {
        Ok(i) => i,
        Err(e) => {
            return Judgment {
                pass: None,
                reason: format!("the judge's inputs do not bind: {}", e.message),
                run: None,
                live_calls: 0,
            };
        }
    };
    let prep = runtime.prepare_shared(program.clone(), None);
    let mut run = None;
    let outcome = match store {
        Some((store, meta)) => {
            let start = runtime.run_start(ais_rt::journal::new_run_id(), &prep, &inputs, meta);
            match store.begin(&start) {
                Ok(j) => {
                    run = Some(start.id.clone());
                    runtime.run_journaled(&prep, inputs, Arc::new(j)).await
                }
                Err(e) => {
                    return Judgment {
                        pass: None,
                        reason: format!("the judge's run cannot be journaled: {e}"),
                        run: None,
                        live_calls: 0,
                    };
                }
            }
        }
        None => runtime.run_prepared(&prep, inputs).await,
    };
    let events = sink.take();
    let live_calls = events
        .iter()
        .filter_map(|e| e.slot.as_ref())
        .filter(|s| !s.scripted)
        .map(|s| s.exchanges.len() as u64)
        .sum();
    let verdict = outcome.report.get("verdict");
    let (pass, reason) = match (outcome.status, verdict) {
        (Status::Ok, Some(v)) => (
            v.get("pass").and_then(Json::as_bool),
            v.get("reason")
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_owned(),
        ),
        _ => {
            let why = events
                .iter()
                .find_map(|e| e.error.clone())
                .or_else(|| outcome.fault.as_ref().map(|f| f.message.clone()))
                .unwrap_or_else(|| "the judge's run gave no verdict".to_owned());
            (None, format!("the judge's answer is not a verdict: {why}"))
        }
    };
    Judgment {
        pass,
        reason,
        run,
        live_calls,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_judge_program_checks_clean() {
        let doc = ais_core::agir::read(super::JUDGE_AGIR).unwrap();
        let checked = ais_core::check(&doc.program, &doc.source_map, ais_core::Repairs::Off);
        assert!(checked.findings.is_empty(), "{:?}", checked.findings);
    }
}
