//! The model stages of `ais lift` and the whole compile: a skill in, a checked, audited AG-IR
//! program with its provenance record and a compile report out.
//!
//! The stages, in order (each reported with its counts, model calls and time):
//!
//! 1. **Spec loop** — the extractor (slot `extract`) proposes obligations with verbatim quotes;
//!    code grounds them ([`Skill::ground`]); the coverage critic (slot `critic`) is shown the
//!    sentences no kept quote covers and proposes what was missed, grounded again; until a
//!    critic round adds nothing (*dry*) or [`Options::max_critic_rounds`] is spent
//!    (*exhausted*, said so in the verdict, never a silent success). The deontic audit
//!    ([`crate::audit`]) then sets each drifted force back to what the skill states.
//! 2. **Adjudication** of the residue (obligations proposed binding whose force the skill states
//!    nowhere): the adjudicator (slot `adjudicate`) must cite a verbatim span outside the
//!    obligation's own sentence, else its answer is rejected and the obligation is
//!    discretionary; [`Adjudicate::Nobody`] makes no call. Every decision is in the report with
//!    who made it and the span it rests on.
//! 3. **Spine and flows** — the designer (slot `design`) proposes typed steps; [`spine`] keeps
//!    what traces to grounded obligations and places what code owns.
//! 4. **Assembly and gates** — the provenance record (`faithfulness`, `traces_to` everywhere),
//!    `ais_core::check` with the mechanical repairs, and the faithfulness audit against the
//!    skill's text. The model repair rung is not here (see the crate docs).
//!
//! Every model call goes through the runtime's slot machinery ([`ais_rt::model::slot::fill`]):
//! the answer's JSON Schema (schemars, [`answers`]) is sent and enforced with repair rounds, so
//! a scripted model's file (`scripted:FILE.json`) is keyed by the slot ids of
//! [`prompts::SLOTS`], like any program's.

pub mod answers;
pub mod prompts;
mod recheck;
pub mod spine;

pub use recheck::{NoRecord, Recheck, recheck};

use crate::model::{Bearer, Cohesion, Force, Kind, Proposal};
use crate::text::{Span, normalize};
use crate::{DriftKind, Skill, audit};
use ais_core::{
    AuditConfig, ElementRef, Obligation as RecordObligation, Outcome, Program, Provenance, Repairs,
    SourceMap, SourceRef, Value,
};
use ais_rt::model::slot::{SlotOptions, SlotToolFuture, SlotTools};
use ais_rt::model::{Model, Operand, SlotRequest};
use answers::{Adjudication, Design, Extraction, schema_of};
use serde::Serialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Instant;

/// Who settles the residue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Adjudicate {
    /// The adjudicator model, citing the skill.
    #[default]
    Model,
    /// Nobody: every residue item is discretionary, no model call.
    Nobody,
}

/// How a lift runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Who settles the residue.
    pub adjudicate: Adjudicate,
    /// The most coverage-critic rounds (default 3).
    pub max_critic_rounds: u32,
    /// The skill's path as the program's `faithfulness.source.path` records it (relative to
    /// the program file).
    pub source_path: Option<String>,
    /// The program's name (default: the frontmatter's `name`, else the skill's file stem).
    pub name: Option<String>,
    /// Whether a program still degraded or failed after the mechanical repairs goes through
    /// the model repair rung (`ais_repair::repair`, default true).
    pub model_repair: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            adjudicate: Adjudicate::Model,
            max_critic_rounds: 3,
            source_path: None,
            name: None,
            model_repair: true,
        }
    }
}

/// An obligation as the program records it: grounded, its force settled.
#[derive(Clone, Debug, Serialize)]
pub struct Final {
    /// Its rule id.
    pub rule: String,
    /// What it is.
    pub kind: Kind,
    /// Its force, as settled.
    pub force: Force,
    /// On whom.
    pub bearer: Bearer,
    /// The skill's words.
    pub quote: String,
    /// Its condition, verbatim, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// One move or an adaptive unit.
    pub cohesion: Cohesion,
    /// Where its quote stands.
    pub span: Span,
    /// Who settled its force, and from what.
    pub force_from: String,
}

/// Something the compile refused, degraded or embodied on its own, with the reason.
#[derive(Clone, Debug, Serialize)]
pub struct Note {
    /// What happened.
    pub action: NoteAction,
    /// The element or obligation concerned.
    pub subject: String,
    /// Why.
    pub reason: String,
}

/// What a [`Note`] records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoteAction {
    /// A proposed element (or part of one) was refused.
    Refused,
    /// An obligation the design left out was realized plainly by code (the degrade rung).
    Degraded,
    /// A sibling file was embodied.
    Embodied,
    /// A carry's type was set by code.
    Typed,
}

impl Note {
    fn refused(subject: impl Into<String>, reason: impl Into<String>) -> Note {
        Note {
            action: NoteAction::Refused,
            subject: subject.into(),
            reason: reason.into(),
        }
    }
    fn degraded(rule: &str, reason: impl Into<String>) -> Note {
        Note {
            action: NoteAction::Degraded,
            subject: rule.to_owned(),
            reason: reason.into(),
        }
    }
    fn typed(subject: impl Into<String>, reason: impl Into<String>) -> Note {
        Note {
            action: NoteAction::Typed,
            subject: subject.into(),
            reason: reason.into(),
        }
    }
    fn embodied(file: &str, reason: impl Into<String>) -> Note {
        Note {
            action: NoteAction::Embodied,
            subject: file.to_owned(),
            reason: reason.into(),
        }
    }
}

/// One stage of the compile, as it ran.
#[derive(Clone, Debug, Serialize)]
pub struct Stage {
    /// Its name.
    pub name: &'static str,
    /// Model calls (slots filled) it made.
    pub model_calls: u32,
    /// Model exchanges (a slot may need repair rounds).
    pub exchanges: u32,
    /// Its counts.
    pub counts: BTreeMap<&'static str, usize>,
    /// Its time, in milliseconds.
    pub millis: u64,
}

/// A proposal dropped, with the stage that dropped it.
#[derive(Clone, Debug, Serialize)]
pub struct DroppedProposal {
    /// The stage (`extract`, `critic`).
    pub stage: &'static str,
    /// Its rule id, as proposed.
    pub rule: String,
    /// Its quote, as proposed.
    pub quote: String,
    /// Why.
    pub reason: String,
}

/// A force the deontic audit set back to the skill's.
#[derive(Clone, Debug, Serialize)]
pub struct Correction {
    /// The rule id.
    pub rule: String,
    /// What kind of drift.
    pub drift: DriftKind,
    /// What the audit says.
    pub message: String,
}

/// One adjudication decision.
#[derive(Clone, Debug, Serialize)]
pub struct AdjudicationDecision {
    /// The rule id.
    pub rule: String,
    /// The force settled.
    pub force: Force,
    /// Who decided (`adjudicator openai:…`, `nobody (--no-adjudicate)`, `fallback`).
    pub by: String,
    /// The span it rests on, verbatim, and where it stands.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cite: Option<String>,
    /// Where the cite stands (`line:column`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cite_at: Option<String>,
    /// Why an answer was rejected, when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected: Option<String>,
}

/// How the spec loop ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum SpecVerdict {
    /// A critic round added nothing.
    Dry {
        /// Critic rounds run.
        rounds: u32,
    },
    /// The cap was reached while critic rounds still added obligations: coverage is not
    /// confirmed.
    Exhausted {
        /// Critic rounds run.
        rounds: u32,
        /// Obligations the last round added.
        last_added: usize,
    },
}

/// The gates' verdict on the assembled program.
#[derive(Clone, Debug, Serialize)]
pub struct Gates {
    /// `ais check`'s outcome (with the mechanical repairs).
    pub outcome: Outcome,
    /// The findings left, one line each (`id severity at: message`).
    pub findings: Vec<String>,
    /// The repairs applied.
    pub repairs: Vec<String>,
    /// The obligations in the record.
    pub obligations: usize,
    /// The obligations whose required realization is missing.
    pub dropped: Vec<String>,
    /// Instructions with no obligation behind them.
    pub added: Vec<String>,
    /// The quotes verbatim in the skill, of all.
    pub verbatim_quotes: usize,
    /// The model repair rung's record, when it ran (the program was degraded or failed after
    /// the mechanical repairs): every attempt with its verdict, and the adopted deviations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_repair: Option<serde_json::Value>,
}

/// The compile report.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The skill.
    pub skill: String,
    /// The model that compiled it.
    pub model: String,
    /// Whether that model is scripted.
    pub scripted: bool,
    /// The stages, in order.
    pub stages: Vec<Stage>,
    /// How the spec loop ended.
    pub spec: SpecVerdict,
    /// The obligations, in the skill's order, forces settled.
    pub obligations: Vec<Final>,
    /// The proposals dropped.
    pub dropped: Vec<DroppedProposal>,
    /// The sentences of the skill no obligation rests on (headings included): what the
    /// program does not realize, for a reader to judge.
    pub uncovered: Vec<Uncovered>,
    /// The forces the deontic audit set back.
    pub corrections: Vec<Correction>,
    /// The adjudication decisions.
    pub decisions: Vec<AdjudicationDecision>,
    /// What assembly refused, degraded or embodied.
    pub notes: Vec<Note>,
    /// The gates.
    pub gates: Gates,
}

impl Report {
    /// The findings `--strict` fails on: dropped proposals, corrections, adjudicated or
    /// assumed forces, refusals and degradations, an exhausted spec loop, and every finding of
    /// the gates.
    pub fn strict_findings(&self) -> usize {
        self.dropped.len()
            + self.corrections.len()
            + self.decisions.len()
            + self
                .notes
                .iter()
                .filter(|n| matches!(n.action, NoteAction::Refused | NoteAction::Degraded))
                .count()
            + usize::from(matches!(self.spec, SpecVerdict::Exhausted { .. }))
            + self.gates.findings.len()
    }
}

/// A compiled skill.
#[derive(Debug)]
pub struct Lifted {
    /// The program (repaired when a mechanical repair landed).
    pub program: Program,
    /// Its canonical AG-IR.
    pub agir: String,
    /// The compile report.
    pub report: Report,
}

/// Why a lift produced no program.
#[derive(Debug, thiserror::Error)]
pub enum LiftError {
    /// A slot got no acceptable answer.
    #[error("the `{slot}` stage got no acceptable answer from {model}: {message}")]
    Slot {
        /// The slot.
        slot: &'static str,
        /// The model.
        model: String,
        /// Why.
        message: String,
    },
}

struct NoTools;

impl SlotTools for NoTools {
    fn call<'a>(&'a self, name: &'a str, _: serde_json::Value) -> SlotToolFuture<'a> {
        Box::pin(async move {
            json!({"ok": false, "error": format!("no tool `{name}`: this slot has no tools"), "output": ""})
        })
    }
}

struct Asker<'m> {
    model: &'m dyn Model,
    calls: u32,
    exchanges: u32,
}

impl Asker<'_> {
    async fn ask<T: serde::de::DeserializeOwned + schemars::JsonSchema>(
        &mut self,
        slot: &'static str,
        doc: &str,
        operands: Vec<(&str, &str, serde_json::Value)>,
    ) -> Result<T, LiftError> {
        let request = SlotRequest {
            instruction: slot.to_owned(),
            opcode: "GEN-FILL".to_owned(),
            doc: doc.to_owned(),
            knowledge: Vec::new(),
            operands: operands
                .into_iter()
                .map(|(name, ty, value)| Operand {
                    name: name.to_owned(),
                    ty: ty.to_owned(),
                    doc: None,
                    value,
                })
                .collect(),
            schema: schema_of::<T>(),
            choices: None,
            tools: Vec::new(),
            sibling: None,
            history: Vec::new(),
        };
        let out =
            ais_rt::model::slot::fill(self.model, request, &NoTools, &SlotOptions::default()).await;
        self.calls += 1;
        self.exchanges += out.exchanges.len() as u32;
        let err = |message: String| LiftError::Slot {
            slot,
            model: self.model.name().to_owned(),
            message,
        };
        let value = out.value.map_err(|e| err(e.message))?;
        serde_json::from_value(value).map_err(|e| err(format!("the answer does not read: {e}")))
    }
}

struct Clock {
    at: Instant,
    calls: u32,
    exchanges: u32,
}

impl Clock {
    fn start(a: &Asker<'_>) -> Clock {
        Clock {
            at: Instant::now(),
            calls: a.calls,
            exchanges: a.exchanges,
        }
    }
    fn stop(self, name: &'static str, a: &Asker<'_>, counts: &[(&'static str, usize)]) -> Stage {
        Stage {
            name,
            model_calls: a.calls - self.calls,
            exchanges: a.exchanges - self.exchanges,
            counts: counts.iter().copied().collect(),
            millis: self.at.elapsed().as_millis() as u64,
        }
    }
}

/// Compiles `skill` with `model` (see the module docs).
pub async fn lift(
    skill: &Skill,
    model: &dyn Model,
    options: &Options,
) -> Result<Lifted, LiftError> {
    let mut a = Asker {
        model,
        calls: 0,
        exchanges: 0,
    };
    let mut stages = Vec::new();
    let mut dropped = Vec::new();
    let text = skill.text().to_owned();

    // 1. The spec loop.
    let clock = Clock::start(&a);
    let first: Extraction = a
        .ask(
            "extract",
            prompts::EXTRACT,
            vec![("skill", "str", json!(text))],
        )
        .await?;
    let proposed = first.obligations.len();
    let mut kept: Vec<Proposal> = Vec::new();
    admit(skill, &mut kept, first.obligations, "extract", &mut dropped);
    let extracted = kept.len();
    let mut rounds = 0;
    let mut last_added = 0;
    let mut dry = false;
    while rounds < options.max_critic_rounds {
        rounds += 1;
        let grounding = skill.ground(kept.clone());
        let uncovered = uncovered(skill, &grounding.kept);
        let listed: Vec<_> = grounding
            .kept
            .iter()
            .map(|o| json!({"rule": o.proposal.rule, "quote": o.proposal.quote}))
            .collect();
        let answer: Extraction = a
            .ask(
                "critic",
                prompts::CRITIC,
                vec![
                    ("skill", "str", json!(text)),
                    ("obligations", "list[dict]", json!(listed)),
                    ("uncovered", "list[dict]", json!(uncovered)),
                ],
            )
            .await?;
        let before = kept.len();
        admit(skill, &mut kept, answer.obligations, "critic", &mut dropped);
        last_added = kept.len() - before;
        if last_added == 0 {
            dry = true;
            break;
        }
    }
    let spec = if dry {
        SpecVerdict::Dry { rounds }
    } else {
        SpecVerdict::Exhausted { rounds, last_added }
    };
    let grounding = skill.ground(kept);
    let left_uncovered = uncovered(skill, &grounding.kept);
    let drift = audit(&grounding.kept);
    let mut finals: Vec<Final> = grounding
        .kept
        .iter()
        .map(|o| Final {
            rule: o.proposal.rule.trim().to_owned(),
            kind: o.proposal.kind.clone(),
            force: o.proposal.force.clone(),
            bearer: o.proposal.bearer.clone(),
            // The skill's own bytes for the span grounding found: the record quotes the
            // source exactly (markup and all), not the model's rendering of it.
            quote: skill
                .text()
                .get(o.span.start..o.span.end)
                .unwrap_or(&o.proposal.quote)
                .to_owned(),
            condition: o.proposal.condition.clone(),
            cohesion: o.proposal.cohesion,
            span: o.span,
            force_from: match o.reading.force() {
                Some(f) if f == o.proposal.force => {
                    format!("the skill: {}", o.reading.source.describe())
                }
                _ => "the extractor".to_owned(),
            },
        })
        .collect();
    let mut corrections = Vec::new();
    let mut residue: Vec<usize> = Vec::new();
    for d in &drift {
        let Some(i) = finals.iter().position(|f| f.rule == d.rule) else {
            continue;
        };
        match d.kind {
            DriftKind::Hardened | DriftKind::Softened | DriftKind::Inverted => {
                if let Some(f) = grounding.kept[i].reading.force() {
                    finals[i].force = f;
                    finals[i].force_from =
                        format!("the skill: {}", grounding.kept[i].reading.source.describe());
                }
                corrections.push(Correction {
                    rule: d.rule.clone(),
                    drift: d.kind,
                    message: d.message.clone(),
                });
            }
            DriftKind::Unconditioned => {
                if let Some(c) = &grounding.kept[i].reading.condition {
                    finals[i]
                        .condition
                        .get_or_insert_with(|| c.marker.to_owned());
                }
                corrections.push(Correction {
                    rule: d.rule.clone(),
                    drift: d.kind,
                    message: d.message.clone(),
                });
            }
            DriftKind::Unstated => residue.push(i),
        }
    }
    finals.sort_by_key(|f| f.span.start);
    let residue_rules: Vec<String> = residue
        .iter()
        .map(|&i| grounding.kept[i].proposal.rule.trim().to_owned())
        .collect();
    stages.push(clock.stop(
        "spec loop",
        &a,
        &[
            ("proposed", proposed),
            ("extracted", extracted),
            ("kept", finals.len()),
            ("dropped", dropped.len()),
            ("critic_rounds", rounds as usize),
            ("corrected", corrections.len()),
            ("residue", residue_rules.len()),
        ],
    ));

    // 2. Adjudication.
    let clock = Clock::start(&a);
    let decisions = adjudicate(skill, &mut a, options, &mut finals, &residue_rules).await;
    stages.push(clock.stop(
        "adjudication",
        &a,
        &[
            ("residue", residue_rules.len()),
            (
                "settled_by_citation",
                decisions.iter().filter(|d| d.cite.is_some()).count(),
            ),
        ],
    ));

    // 3. Spine and flows.
    let clock = Clock::start(&a);
    let offered = spine::offered_tools(skill);
    let bundle = skill.bundle();
    let files: Vec<_> = bundle
        .files
        .iter()
        .map(|f| json!({"path": f.path, "bytes": f.text.len()}))
        .collect();
    let design: Design = a
        .ask(
            "design",
            prompts::DESIGN,
            vec![
                (
                    "obligations",
                    "list[dict]",
                    json!(finals_for_model(&finals)),
                ),
                ("offered_tools", "list[dict]", json!(offered)),
                ("files", "list[dict]", json!(files)),
            ],
        )
        .await?;
    let designed = design.steps.len();
    let name = options.name.clone().unwrap_or_else(|| program_name(skill));
    let spine::Assembly {
        mut program,
        notes,
        deviations,
    } = spine::assemble(skill, &name, &finals, design, &offered);
    stages.push(
        clock.stop(
            "spine and flows",
            &a,
            &[
                ("designed_steps", designed),
                (
                    "refused",
                    notes
                        .iter()
                        .filter(|n| n.action == NoteAction::Refused)
                        .count(),
                ),
                (
                    "degraded",
                    notes
                        .iter()
                        .filter(|n| n.action == NoteAction::Degraded)
                        .count(),
                ),
                ("instructions", program.nodes.as_ref().map_or(0, Vec::len)),
            ],
        ),
    );

    // 4. Assembly, gates.
    let clock = Clock::start(&a);
    let mut record = provenance(skill, &finals, &program, options);
    record.deviations = (!deviations.is_empty()).then_some(deviations);
    program.faithfulness = Some(record);
    let mut checked = ais_core::check(&program, &SourceMap::new(), Repairs::Mechanical);
    let mut repairs: Vec<String> = checked.deviations.iter().map(repair_line).collect();
    if let Some(repaired) = checked.repaired.take() {
        program = repaired;
    }
    // The model repair rung (§9.1 rung 2): what the mechanical repairs left, one bounded
    // model pass per finding over its view, adopted only when it strictly helps.
    let mut model_repair = None;
    if options.model_repair && matches!(checked.outcome, Outcome::Degraded | Outcome::Failed) {
        let config = ais_repair::Config {
            source: Some(skill.text().to_owned()),
            ..ais_repair::Config::default()
        };
        let text = ais_core::agir::write(&program);
        if let Ok(doc) = ais_core::agir::read(&text) {
            let before = ais_repair::findings_of(&doc, &config);
            if let Ok(rung) = ais_repair::repair("<lifted>", &text, &before, model, &config).await {
                let calls = u32::try_from(rung.calls).unwrap_or(u32::MAX);
                a.calls = a.calls.saturating_add(calls);
                a.exchanges = a.exchanges.saturating_add(calls);
                repairs.extend(rung.deviations.iter().map(repair_line));
                if !rung.deviations.is_empty() {
                    program = rung.doc.program.clone();
                    checked = ais_core::check(&program, &SourceMap::new(), Repairs::Off);
                    checked.outcome = match checked.outcome {
                        Outcome::Clean => Outcome::Fixed,
                        other => other,
                    };
                }
                model_repair = Some(rung.json());
            }
        }
    }
    let outcome = checked.outcome;
    let findings: Vec<String> = checked
        .findings
        .iter()
        .map(|f| {
            format!(
                "{} {} {}: {}",
                f.id,
                f.severity,
                f.instruction.as_deref().unwrap_or("-"),
                f.message
            )
        })
        .collect();
    let audited = ais_core::audit(
        &program,
        &SourceMap::new(),
        Some(skill.text()),
        &AuditConfig::default(),
    );
    let added: Vec<String> = audited
        .findings
        .iter()
        .filter(|f| f.kind == Some(ais_core::FindingKind::AddedElement))
        .map(|f| f.message.clone())
        .collect();
    let gates = Gates {
        outcome,
        findings,
        repairs,
        obligations: audited.obligations.len(),
        dropped: audited.dropped().map(|o| o.id.clone()).collect(),
        added,
        verbatim_quotes: finals
            .iter()
            .filter(|f| skill_contains(skill, &f.quote))
            .count(),
        model_repair,
    };
    stages.push(clock.stop(
        "assemble and gate",
        &a,
        &[
            ("findings", gates.findings.len()),
            ("dropped", gates.dropped.len()),
            ("added", gates.added.len()),
        ],
    ));
    let agir = ais_core::agir::write(&program);
    Ok(Lifted {
        program,
        agir,
        report: Report {
            skill: skill
                .path()
                .map_or_else(|| "<skill>".to_owned(), |p| p.display().to_string()),
            model: model.name().to_owned(),
            scripted: model.is_scripted(),
            stages,
            spec,
            obligations: finals,
            dropped,
            uncovered: left_uncovered,
            corrections,
            decisions,
            notes,
            gates,
        },
    })
}

/// A repair as the gates list it: `subject: intended -> substituted`.
fn repair_line(d: &ais_core::Deviation) -> String {
    format!("{}: {} -> {}", d.subject, d.intended, d.substituted)
}

/// Grounds `new` against the skill with the obligations already `kept`, and keeps the new ones
/// that rest on the skill's words and are not already extracted.
fn admit(
    skill: &Skill,
    kept: &mut Vec<Proposal>,
    new: Vec<Proposal>,
    stage: &'static str,
    dropped: &mut Vec<DroppedProposal>,
) {
    let old = kept.len();
    let mut all = kept.clone();
    all.extend(new);
    let g = skill.ground(all);
    for d in g.dropped {
        dropped.push(DroppedProposal {
            stage,
            rule: d.proposal.rule.clone(),
            quote: d.proposal.quote.clone(),
            reason: d.reason.describe(),
        });
    }
    let spans: Vec<Span> = g.kept[..old.min(g.kept.len())]
        .iter()
        .map(|o| o.span)
        .collect();
    let mut seen = spans;
    for o in g.kept.into_iter().skip(old) {
        if seen.contains(&o.span) {
            dropped.push(DroppedProposal {
                stage,
                rule: o.proposal.rule.clone(),
                quote: o.proposal.quote.clone(),
                reason: "its quote is already extracted".to_owned(),
            });
            continue;
        }
        seen.push(o.span);
        kept.push(o.proposal);
    }
}

/// A sentence of the skill no obligation's quote covers.
#[derive(Clone, Debug, Serialize)]
pub struct Uncovered {
    /// Where it starts.
    pub line: u32,
    /// Its column.
    pub column: u32,
    /// Its text.
    pub text: String,
    /// The force the skill states for it, if any.
    pub force: Option<Force>,
}

/// The sentences no kept quote overlaps, with the force the skill states for each.
fn uncovered(skill: &Skill, kept: &[crate::Obligation]) -> Vec<Uncovered> {
    skill
        .document()
        .sentences
        .iter()
        .filter(|s| s.span.start >= skill.document().body_start)
        .filter(|s| {
            !kept
                .iter()
                .any(|o| o.span.start < s.span.end && s.span.start < o.span.end)
        })
        .filter(|s| s.text.chars().any(char::is_alphanumeric))
        .take(200)
        .map(|s| Uncovered {
            line: s.span.line,
            column: s.span.column,
            text: s.text.clone(),
            force: skill.read_span(&s.span, &s.text).force(),
        })
        .collect()
}

async fn adjudicate(
    skill: &Skill,
    a: &mut Asker<'_>,
    options: &Options,
    finals: &mut [Final],
    residue: &[String],
) -> Vec<AdjudicationDecision> {
    let mut out = Vec::new();
    if residue.is_empty() {
        return out;
    }
    let mut answered: BTreeMap<String, AdjudicationDecision> = BTreeMap::new();
    let mut rejected: BTreeMap<String, String> = BTreeMap::new();
    if options.adjudicate == Adjudicate::Model {
        let items: Vec<_> = residue
            .iter()
            .filter_map(|r| finals.iter().find(|f| &f.rule == r))
            .map(|f| {
                json!({
                    "rule": f.rule,
                    "quote": f.quote,
                    "line": f.span.line,
                    "proposed": f.force.as_str(),
                    "context": context(skill, &f.span),
                })
            })
            .collect();
        let by = format!("adjudicator {}", a.model.name());
        match a
            .ask::<Adjudication>(
                "adjudicate",
                prompts::ADJUDICATE,
                vec![
                    ("skill", "str", json!(skill.text())),
                    ("residue", "list[dict]", json!(items)),
                ],
            )
            .await
        {
            Err(e) => {
                for r in residue {
                    rejected.insert(r.clone(), e.to_string());
                }
            }
            Ok(answer) => {
                for d in answer.decisions {
                    let rule = d.rule.trim().to_owned();
                    if !residue.contains(&rule) {
                        continue; // not flagged: re-modalizing it is refused (reported below)
                    }
                    if answered.contains_key(&rule) {
                        continue;
                    }
                    let f = finals
                        .iter()
                        .find(|f| f.rule == rule)
                        .expect("residue is final");
                    match check_cite(skill, &f.span, &d.cite) {
                        Ok(span) => {
                            answered.insert(
                                rule.clone(),
                                AdjudicationDecision {
                                    rule,
                                    force: d.force,
                                    by: by.clone(),
                                    cite: Some(d.cite),
                                    cite_at: Some(format!("{}:{}", span.line, span.column)),
                                    rejected: None,
                                },
                            );
                        }
                        Err(why) => {
                            rejected.insert(rule, why);
                        }
                    }
                }
            }
        }
    }
    for r in residue {
        let d = answered.remove(r).unwrap_or_else(|| AdjudicationDecision {
            rule: r.clone(),
            force: Force::Discretionary,
            by: match options.adjudicate {
                Adjudicate::Nobody => "nobody (--no-adjudicate): assumed discretionary".to_owned(),
                Adjudicate::Model => "fallback: assumed discretionary".to_owned(),
            },
            cite: None,
            cite_at: None,
            rejected: rejected.remove(r).or_else(|| {
                (options.adjudicate == Adjudicate::Model)
                    .then(|| "the adjudicator did not settle it".to_owned())
            }),
        });
        if let Some(f) = finals.iter_mut().find(|f| &f.rule == r) {
            f.force = d.force.clone();
            f.force_from = match &d.cite {
                Some(c) => format!("{} citing \"{}\"", d.by, c),
                None => d.by.clone(),
            };
        }
        out.push(d);
    }
    out
}

/// The span of `cite` in the skill, when it is verbatim there and outside the sentence(s) of
/// the obligation at `own`.
fn check_cite(skill: &Skill, own: &Span, cite: &str) -> Result<Span, String> {
    let g = skill.ground(vec![Proposal {
        rule: "cite".to_owned(),
        kind: Kind::Step,
        force: Force::Discretionary,
        bearer: Bearer::Agent,
        quote: cite.to_owned(),
        condition: None,
        cohesion: Cohesion::Atomic,
    }]);
    let Some(k) = g.kept.first() else {
        return Err(format!(
            "its cite is not in the skill: {}",
            g.dropped
                .first()
                .map(|d| d.reason.describe())
                .unwrap_or_default()
        ));
    };
    let (start, end) = skill
        .document()
        .sentences
        .iter()
        .filter(|s| s.span.start < own.end && own.start < s.span.end)
        .fold((own.start, own.end), |(a, b), s| {
            (a.min(s.span.start), b.max(s.span.end))
        });
    if k.span.start < end && start < k.span.end {
        return Err("its cite is the obligation's own sentence, which settles nothing".to_owned());
    }
    Ok(k.span)
}

/// Three lines either side of `span`, numbered.
fn context(skill: &Skill, span: &Span) -> String {
    let from = span.line.saturating_sub(3).max(1) as usize;
    let to = span.end_line as usize + 3;
    skill
        .text()
        .lines()
        .enumerate()
        .filter(|(i, _)| (from..=to).contains(&(i + 1)))
        .map(|(i, l)| format!("{:>4}| {l}", i + 1))
        .collect::<Vec<_>>()
        .join("\n")
}

fn finals_for_model(finals: &[Final]) -> Vec<serde_json::Value> {
    finals
        .iter()
        .map(|f| {
            json!({
                "rule": f.rule, "kind": f.kind, "force": f.force, "bearer": f.bearer,
                "quote": f.quote, "condition": f.condition, "cohesion": f.cohesion,
            })
        })
        .collect()
}

fn skill_contains(skill: &Skill, quote: &str) -> bool {
    let q = normalize(quote).text;
    !q.is_empty() && normalize(skill.text()).text.contains(&q)
}

/// The program's name: the frontmatter's `name`, else the file stem, as an identifier.
pub fn program_name(skill: &Skill) -> String {
    let fm = skill
        .document()
        .frontmatter
        .as_ref()
        .and_then(|f| f.name.clone());
    let stem = skill
        .path()
        .and_then(|p| p.file_stem())
        .map(|s| s.to_string_lossy().into_owned());
    spine::identifier(fm.or(stem).as_deref().unwrap_or("skill"))
}

/// `sha256:` and the 64 hex digits of `text`'s bytes, as the record spells a digest.
fn digest(text: &str) -> String {
    use sha2::{Digest, Sha256};
    let hash = Sha256::digest(text.as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// The provenance record: the source, each obligation with `realized_by` read from the
/// program's `traces_to`.
fn provenance(skill: &Skill, finals: &[Final], program: &Program, options: &Options) -> Provenance {
    let mut realized: BTreeMap<&str, Vec<ElementRef>> = BTreeMap::new();
    let traced = program
        .nodes
        .iter()
        .flatten()
        .map(|n| (&n.traces_to, ElementRef::Node(n.id.clone())))
        .chain(
            program
                .tools
                .iter()
                .flatten()
                .map(|t| (&t.traces_to, ElementRef::Tool(t.name.clone()))),
        )
        .chain(
            program
                .knowledge
                .iter()
                .flatten()
                .map(|k| (&k.traces_to, ElementRef::Knowledge(k.name.clone()))),
        );
    for (traces, element) in traced {
        for r in traces.iter().flatten() {
            realized
                .entry(r.as_str())
                .or_default()
                .push(element.clone());
        }
    }
    let obligations = finals
        .iter()
        .map(|f| {
            let mut extra = vec![
                (
                    "at".to_owned(),
                    Value::Str(format!("{}:{}", f.span.line, f.span.column)),
                ),
                ("force_from".to_owned(), Value::Str(f.force_from.clone())),
            ];
            if let Some(c) = &f.condition {
                extra.push(("condition".to_owned(), Value::Str(c.clone())));
            }
            if f.cohesion == Cohesion::Adaptive {
                extra.push(("cohesion".to_owned(), Value::Str("adaptive".to_owned())));
            }
            RecordObligation {
                id: f.rule.clone(),
                kind: Some(f.kind.clone()),
                force: Some(f.force.clone()),
                bearer: Some(f.bearer.clone()),
                quote: Some(f.quote.clone()),
                realized_by: realized.remove(f.rule.as_str()),
                extra,
            }
        })
        .collect();
    Provenance {
        source: Some(SourceRef {
            path: options.source_path.clone(),
            digest: Some(digest(skill.text())),
            extra: Vec::new(),
        }),
        obligations: Some(obligations),
        deviations: None,
        extra: Vec::new(),
    }
}
