//! The compile's stages between its model slots: a skill in, a checked, audited AG-IR program
//! with its provenance record and a compile report out.
//!
//! The compiler itself is an ais program (`ais::lift::LiftCompiler`, written with `ais!` in the
//! facade crate): its slots ask the model (their docs are the prompts), and its native tools
//! call the stages here over [`Compile`], the state it carries from step to step. The stages,
//! in order (each reported with its counts, model calls and time):
//!
//! 1. **Spec loop** — the extractor (slot `extract`) proposes obligations with verbatim quotes;
//!    code grounds them ([`Skill::ground`]); the coverage critic (slot `critic`) is shown the
//!    sentences no kept quote covers and proposes what was missed, grounded again; until a
//!    critic round adds nothing (*dry*) or the round cap is spent (*exhausted*, said so in the
//!    verdict, never a silent success). The deontic audit ([`crate::audit`]) then sets each
//!    drifted force back to what the skill states.
//! 2. **Adjudication** of the residue (obligations proposed binding whose force the skill states
//!    nowhere): the adjudicator (slot `adjudicate`) must cite a verbatim span outside the
//!    obligation's own sentence, else its answer is rejected and the obligation is
//!    discretionary; the author may answer instead ([`Settled::Person`], `--clarify`);
//!    [`Adjudicate::Nobody`] makes no call. Every decision is in the report with who made it
//!    and the span it rests on.
//! 3. **Spine and flows** — the designer (slot `design`) proposes typed steps; [`spine`] keeps
//!    what traces to grounded obligations and places what code owns.
//! 4. **Assembly and gates** — the provenance record (`faithfulness`, `traces_to` everywhere),
//!    `ais_core::check` with the mechanical repairs, the model repair rung
//!    ([`Compile::model_repair`]) when the program is still degraded or failed, and the
//!    faithfulness audit against the skill's text.
//!
//! The answer types ([`answers`]) are what the slots' answers deserialize into; a valid answer
//! is still hostile, and every id, quote and name in it is checked here.

pub mod answers;
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
use ais_rt::llm::Model;
use answers::{Adjudication, Design, Extraction};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeMap;

/// Who settles the residue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Adjudicate {
    /// The adjudicator model, citing the skill.
    #[default]
    Model,
    /// Nobody: every residue item is discretionary, no model call.
    Nobody,
    /// The author, asked through the runtime's human pause (`--clarify`).
    Person,
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
#[derive(Clone, Debug, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Note {
    /// What happened.
    pub action: NoteAction,
    /// The element or obligation concerned.
    pub subject: String,
    /// Why.
    pub reason: String,
}

/// What a [`Note`] records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Stage {
    /// Its name.
    pub name: String,
    /// Model calls (slots filled) it made.
    pub model_calls: u32,
    /// Its counts.
    pub counts: BTreeMap<String, usize>,
    /// Its time, in milliseconds (wall clock: a lift resumed after a crash counts the time
    /// between).
    pub millis: u64,
}

/// A proposal dropped, with the stage that dropped it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DroppedProposal {
    /// The stage (`extract`, `critic`).
    pub stage: String,
    /// Its rule id, as proposed.
    pub rule: String,
    /// Its quote, as proposed.
    pub quote: String,
    /// Why.
    pub reason: String,
}

/// A force the deontic audit set back to the skill's.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Correction {
    /// The rule id.
    pub rule: String,
    /// What kind of drift.
    pub drift: DriftKind,
    /// What the audit says.
    pub message: String,
}

/// One adjudication decision.
#[derive(Clone, Debug, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Serialize, Deserialize)]
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
        slot: String,
        /// The model.
        model: String,
        /// Why.
        message: String,
    },
    /// The skill changed while the lift ran (a lift resumed after its skill was edited).
    #[error(
        "the skill changed since the lift began ({began}, now {now}): a lift compiles one text"
    )]
    SkillChanged {
        /// Its digest when the lift began.
        began: String,
        /// Its digest now.
        now: String,
    },
    /// The compiler program's run ended without a program (a fault, a budget, a refusal).
    #[error("the compiler's run ended without a program: {0}")]
    Run(String),
}

/// The compile between its model slots: everything code decides, carried from stage to stage
/// as one value (the compiler program's `state` carry, journaled with every step), so a lift
/// resumed after a crash goes on from the last finished step.
///
/// The stages in order: [`Compile::begin`], [`Compile::extracted`] (the extractor's answer),
/// [`Compile::criticized`] per critic round (with [`Compile::critic_input`] before each),
/// [`Compile::settle`], [`Compile::adjudicated`], [`Compile::design_input`],
/// [`Compile::assemble`], [`Compile::model_repair`] and [`Compile::finish`]. Each checks that
/// the skill is the one the lift began with ([`LiftError::SkillChanged`]).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Compile {
    /// The skill's digest when the lift began.
    pub digest: String,
    kept: Vec<Proposal>,
    proposed: usize,
    extracted: usize,
    rounds: u32,
    last_added: usize,
    dry: bool,
    /// Model calls made since the last stage closed.
    calls: u32,
    /// When the last stage closed (milliseconds since the Unix epoch).
    mark: u64,
    stages: Vec<Stage>,
    dropped: Vec<DroppedProposal>,
    spec: Option<SpecVerdict>,
    finals: Vec<Final>,
    corrections: Vec<Correction>,
    residue: Vec<String>,
    decisions: Vec<AdjudicationDecision>,
    notes: Vec<Note>,
    uncovered: Vec<Uncovered>,
    repairs: Vec<String>,
    outcome: Option<Outcome>,
    model_repair: Option<serde_json::Value>,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Who settled a residue item, for [`Compile::adjudicated`].
#[derive(Clone, Debug)]
pub enum Settled {
    /// The adjudicator model answered (or failed: the error's text).
    Model {
        /// The model's name.
        model: String,
        /// Its answer, or why there is none.
        answer: Result<Adjudication, String>,
    },
    /// The author answered the compiler's question (`--clarify`): their text, one
    /// `RULE: force` line per item they settle.
    Person(String),
    /// Nobody was asked (`--no-adjudicate`, or no residue).
    Nobody,
}

impl Compile {
    /// Starts a compile of `skill`.
    pub fn begin(skill: &Skill) -> Compile {
        Compile {
            digest: digest(skill.text()),
            mark: now_ms(),
            ..Compile::default()
        }
    }

    /// Refuses a skill that is not the one the lift began with.
    pub fn same_skill(&self, skill: &Skill) -> Result<(), LiftError> {
        let now = digest(skill.text());
        if now == self.digest {
            Ok(())
        } else {
            Err(LiftError::SkillChanged {
                began: self.digest.clone(),
                now,
            })
        }
    }

    fn close(&mut self, name: &str, counts: &[(&str, usize)]) {
        let now = now_ms();
        self.stages.push(Stage {
            name: name.to_owned(),
            model_calls: std::mem::take(&mut self.calls),
            counts: counts.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect(),
            millis: now.saturating_sub(self.mark),
        });
        self.mark = now;
    }

    /// The extractor's answer: grounded, the kept proposals admitted.
    pub fn extracted(&mut self, skill: &Skill, answer: Extraction) -> Result<(), LiftError> {
        self.same_skill(skill)?;
        self.calls += 1;
        self.proposed = answer.obligations.len();
        admit(
            skill,
            &mut self.kept,
            answer.obligations,
            "extract",
            &mut self.dropped,
        );
        self.extracted = self.kept.len();
        Ok(())
    }

    /// What the coverage critic is shown: the obligations kept so far (`rule`, `quote`) and
    /// the sentences no kept quote covers.
    pub fn critic_input(&self, skill: &Skill) -> (Vec<serde_json::Value>, Vec<Uncovered>) {
        let grounding = skill.ground(self.kept.clone());
        let listed = grounding
            .kept
            .iter()
            .map(|o| json!({"rule": o.proposal.rule, "quote": o.proposal.quote}))
            .collect();
        (listed, uncovered(skill, &grounding.kept))
    }

    /// One critic round's answer, grounded and admitted. True when another round is due: this
    /// one added an obligation and fewer than `max_rounds` ran.
    pub fn criticized(
        &mut self,
        skill: &Skill,
        answer: Extraction,
        max_rounds: u32,
    ) -> Result<bool, LiftError> {
        self.same_skill(skill)?;
        self.calls += 1;
        self.rounds += 1;
        let before = self.kept.len();
        admit(
            skill,
            &mut self.kept,
            answer.obligations,
            "critic",
            &mut self.dropped,
        );
        self.last_added = self.kept.len() - before;
        self.dry = self.last_added == 0;
        Ok(!self.dry && self.rounds < max_rounds)
    }

    /// Ends the spec loop: the verdict, the obligations with their forces (drift set back to
    /// the skill's), and the residue. Returns the residue as the adjudicator is shown it
    /// (empty when nothing is left to settle).
    pub fn settle(&mut self, skill: &Skill) -> Result<Vec<serde_json::Value>, LiftError> {
        self.same_skill(skill)?;
        self.spec = Some(if self.dry {
            SpecVerdict::Dry {
                rounds: self.rounds,
            }
        } else {
            SpecVerdict::Exhausted {
                rounds: self.rounds,
                last_added: self.last_added,
            }
        });
        let grounding = skill.ground(self.kept.clone());
        self.uncovered = uncovered(skill, &grounding.kept);
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
        let mut residue: Vec<usize> = Vec::new();
        for d in &drift {
            let Some(i) = finals.iter().position(|f| f.rule == d.rule) else {
                continue;
            };
            let correction = Correction {
                rule: d.rule.clone(),
                drift: d.kind,
                message: d.message.clone(),
            };
            match d.kind {
                DriftKind::Hardened | DriftKind::Softened | DriftKind::Inverted => {
                    if let Some(f) = grounding.kept[i].reading.force() {
                        finals[i].force = f;
                        finals[i].force_from =
                            format!("the skill: {}", grounding.kept[i].reading.source.describe());
                    }
                    self.corrections.push(correction);
                }
                DriftKind::Unconditioned => {
                    if let Some(c) = &grounding.kept[i].reading.condition {
                        finals[i]
                            .condition
                            .get_or_insert_with(|| c.marker.to_owned());
                    }
                    self.corrections.push(correction);
                }
                DriftKind::Unstated => residue.push(i),
            }
        }
        self.residue = residue
            .iter()
            .map(|&i| grounding.kept[i].proposal.rule.trim().to_owned())
            .collect();
        finals.sort_by_key(|f| f.span.start);
        self.finals = finals;
        let counts = [
            ("proposed", self.proposed),
            ("extracted", self.extracted),
            ("kept", self.finals.len()),
            ("dropped", self.dropped.len()),
            ("critic_rounds", self.rounds as usize),
            ("corrected", self.corrections.len()),
            ("residue", self.residue.len()),
        ];
        self.close("spec loop", &counts);
        Ok(self
            .residue
            .iter()
            .filter_map(|r| self.finals.iter().find(|f| &f.rule == r))
            .map(|f| {
                json!({
                    "rule": f.rule,
                    "quote": f.quote,
                    "line": f.span.line,
                    "proposed": f.force.as_str(),
                    "context": context(skill, &f.span),
                })
            })
            .collect())
    }

    /// The residue's rule ids (after [`Compile::settle`]).
    pub fn residue(&self) -> &[String] {
        &self.residue
    }

    /// The question the author is asked under `--clarify`: each residue item with its quote,
    /// and how to answer.
    pub fn question(&self) -> String {
        let mut q = String::from(
            "The skill states no force for these obligations, and no heading or list intro \
             settles one. For each you settle, answer one line `RULE: mandatory`, `RULE: \
             forbidden` or `RULE: discretionary`; an item you leave out is discretionary.\n",
        );
        for r in &self.residue {
            if let Some(f) = self.finals.iter().find(|f| &f.rule == r) {
                q.push_str(&format!(
                    "\n{} (line {}): \"{}\"",
                    f.rule,
                    f.span.line,
                    one_line(&f.quote)
                ));
            }
        }
        q
    }

    /// Settles the residue: by the adjudicator's citations, the author's answer, or nobody
    /// (every item discretionary). Every decision is recorded with who made it.
    pub fn adjudicated(&mut self, skill: &Skill, settled: Settled) -> Result<(), LiftError> {
        self.same_skill(skill)?;
        let residue = self.residue.clone();
        let mut answered: BTreeMap<String, AdjudicationDecision> = BTreeMap::new();
        let mut rejected: BTreeMap<String, String> = BTreeMap::new();
        let asked = !matches!(settled, Settled::Nobody) && !residue.is_empty();
        match settled {
            Settled::Nobody => {}
            Settled::Model { model, answer } => {
                self.calls += 1;
                match answer {
                    Err(e) => {
                        for r in &residue {
                            rejected.insert(r.clone(), e.clone());
                        }
                    }
                    Ok(answer) => {
                        let by = format!("adjudicator {model}");
                        for d in answer.decisions {
                            let rule = d.rule.trim().to_owned();
                            // Not flagged: re-modalizing it is refused. Answered: the first
                            // answer stands.
                            if !residue.contains(&rule) || answered.contains_key(&rule) {
                                continue;
                            }
                            let Some(f) = self.finals.iter().find(|f| f.rule == rule) else {
                                continue;
                            };
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
            Settled::Person(text) => {
                for line in text.lines() {
                    let Some((rule, force)) = line.split_once(':') else {
                        continue;
                    };
                    let rule = rule.trim().to_owned();
                    let word = force.trim().to_lowercase();
                    let Some(force) = [Force::Mandatory, Force::Forbidden, Force::Discretionary]
                        .into_iter()
                        .find(|f| f.as_str() == word)
                    else {
                        if residue.contains(&rule) {
                            rejected.insert(
                                rule,
                                format!(
                                    "the answer `{}` is not mandatory, forbidden or discretionary",
                                    one_line(force.trim())
                                ),
                            );
                        }
                        continue;
                    };
                    if !residue.contains(&rule) || answered.contains_key(&rule) {
                        continue;
                    }
                    let Some(f) = self.finals.iter().find(|f| f.rule == rule) else {
                        continue;
                    };
                    answered.insert(
                        rule.clone(),
                        AdjudicationDecision {
                            rule,
                            force,
                            by: "the author (--clarify)".to_owned(),
                            cite: Some(f.quote.clone()),
                            cite_at: Some(format!("{}:{}", f.span.line, f.span.column)),
                            rejected: None,
                        },
                    );
                }
            }
        }
        for r in &residue {
            let d = answered.remove(r).unwrap_or_else(|| AdjudicationDecision {
                rule: r.clone(),
                force: Force::Discretionary,
                by: if asked {
                    "fallback: assumed discretionary".to_owned()
                } else {
                    "nobody (--no-adjudicate): assumed discretionary".to_owned()
                },
                cite: None,
                cite_at: None,
                rejected: rejected
                    .remove(r)
                    .or_else(|| asked.then(|| "the answer did not settle it".to_owned())),
            });
            if let Some(f) = self.finals.iter_mut().find(|f| &f.rule == r) {
                f.force = d.force.clone();
                f.force_from = match &d.cite {
                    Some(c) => format!("{} citing \"{}\"", d.by, c),
                    None => d.by.clone(),
                };
            }
            self.decisions.push(d);
        }
        let counts = [
            ("residue", residue.len()),
            (
                "settled_by_citation",
                self.decisions.iter().filter(|d| d.cite.is_some()).count(),
            ),
        ];
        self.close("adjudication", &counts);
        Ok(())
    }

    /// What the spine designer is shown: the obligations, the tools the skill offers, its
    /// sibling files.
    pub fn design_input(&self, skill: &Skill) -> DesignInput {
        DesignInput {
            obligations: finals_for_model(&self.finals),
            offered_tools: serde_json::to_value(spine::offered_tools(skill)).unwrap_or_default(),
            files: skill
                .bundle()
                .files
                .iter()
                .map(|f| json!({"path": f.path, "bytes": f.text.len()}))
                .collect(),
        }
    }

    /// The designer's answer: the spine assembled, the provenance record attached, checked
    /// with the mechanical repairs. Returns the program.
    pub fn assemble(
        &mut self,
        skill: &Skill,
        design: Design,
        options: &Options,
    ) -> Result<Program, LiftError> {
        self.same_skill(skill)?;
        self.calls += 1;
        let designed = design.steps.len();
        let name = options.name.clone().unwrap_or_else(|| program_name(skill));
        let offered = spine::offered_tools(skill);
        let spine::Assembly {
            mut program,
            notes,
            deviations,
        } = spine::assemble(skill, &name, &self.finals, design, &offered);
        let count = |a: NoteAction| notes.iter().filter(|n| n.action == a).count();
        let counts = [
            ("designed_steps", designed),
            ("refused", count(NoteAction::Refused)),
            ("degraded", count(NoteAction::Degraded)),
            ("instructions", program.nodes.as_ref().map_or(0, Vec::len)),
        ];
        self.notes = notes;
        self.close("spine and flows", &counts);
        let mut record = provenance(skill, &self.finals, &program, options);
        record.deviations = (!deviations.is_empty()).then_some(deviations);
        program.faithfulness = Some(record);
        let mut checked = ais_core::check(&program, &SourceMap::new(), Repairs::Mechanical);
        self.repairs = checked
            .deviations
            .iter()
            .map(ais_core::render::deviation_line)
            .collect();
        if let Some(repaired) = checked.repaired.take() {
            program = repaired;
        }
        self.outcome = Some(checked.outcome);
        Ok(program)
    }

    /// Whether the assembled program is still degraded or failed after the mechanical
    /// repairs: what the model repair rung is for.
    pub fn needs_repair(&self) -> bool {
        matches!(self.outcome, Some(Outcome::Degraded | Outcome::Failed))
    }

    /// The model repair rung (§9.1 rung 2) on what the mechanical repairs left: one bounded
    /// model pass per finding over its view ([`ais_repair::repair`]), adopted only when it
    /// strictly helps. Does nothing (and calls no model) when the program needs no repair.
    pub async fn model_repair(
        &mut self,
        skill: &Skill,
        program: Program,
        model: &dyn Model,
    ) -> Result<Program, LiftError> {
        self.same_skill(skill)?;
        if !self.needs_repair() {
            return Ok(program);
        }
        let config = ais_repair::Config {
            source: Some(skill.text().to_owned()),
            ..ais_repair::Config::default()
        };
        let text = ais_core::agir::write(&program);
        let Ok(doc) = ais_core::agir::read(&text) else {
            return Ok(program);
        };
        let before = ais_repair::findings_of(&doc, &config);
        let Ok(rung) = ais_repair::repair("<lifted>", &text, &before, model, &config).await else {
            return Ok(program);
        };
        self.calls = self
            .calls
            .saturating_add(u32::try_from(rung.calls).unwrap_or(u32::MAX));
        self.repairs
            .extend(rung.deviations.iter().map(ais_core::render::deviation_line));
        self.model_repair = Some(rung.json());
        if rung.deviations.is_empty() {
            return Ok(program);
        }
        let checked = ais_core::check(&rung.doc.program, &SourceMap::new(), Repairs::Off);
        self.outcome = Some(match checked.outcome {
            Outcome::Clean => Outcome::Fixed,
            other => other,
        });
        Ok(rung.doc.program.clone())
    }

    /// The gates on the program (its findings, the faithfulness audit against the skill) and
    /// the compile report.
    pub fn finish(
        mut self,
        skill: &Skill,
        program: Program,
        model: &str,
    ) -> Result<Lifted, LiftError> {
        self.same_skill(skill)?;
        let checked = ais_core::check(&program, &SourceMap::new(), Repairs::Off);
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
        let outcome = match (self.outcome, checked.outcome) {
            (Some(Outcome::Fixed), Outcome::Clean) => Outcome::Fixed,
            (_, now) => now,
        };
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
            repairs: std::mem::take(&mut self.repairs),
            obligations: audited.obligations.len(),
            dropped: audited.dropped().map(|o| o.id.clone()).collect(),
            added,
            verbatim_quotes: self
                .finals
                .iter()
                .filter(|f| skill_contains(skill, &f.quote))
                .count(),
            model_repair: self.model_repair.take(),
        };
        let counts = [
            ("findings", gates.findings.len()),
            ("dropped", gates.dropped.len()),
            ("added", gates.added.len()),
        ];
        self.close("assemble and gate", &counts);
        let agir = ais_core::agir::write(&program);
        Ok(Lifted {
            program,
            agir,
            report: Report {
                skill: skill
                    .path()
                    .map_or_else(|| "<skill>".to_owned(), |p| p.display().to_string()),
                model: model.to_owned(),
                scripted: model.starts_with("scripted:"),
                stages: self.stages,
                spec: self.spec.unwrap_or(SpecVerdict::Dry { rounds: 0 }),
                obligations: self.finals,
                dropped: self.dropped,
                uncovered: self.uncovered,
                corrections: self.corrections,
                decisions: self.decisions,
                notes: self.notes,
                gates,
            },
        })
    }
}

/// What the spine designer (slot `design`) reads.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DesignInput {
    /// The obligations, forces settled.
    pub obligations: Vec<serde_json::Value>,
    /// The skill's own scripts and code blocks a step may bind by name.
    pub offered_tools: serde_json::Value,
    /// The sibling files the skill names (path and size).
    pub files: Vec<serde_json::Value>,
}

/// Grounds `new` against the skill with the obligations already `kept`, and keeps the new ones
/// that rest on the skill's words and are not already extracted.
fn admit(
    skill: &Skill,
    kept: &mut Vec<Proposal>,
    new: Vec<Proposal>,
    stage: &str,
    dropped: &mut Vec<DroppedProposal>,
) {
    let old = kept.len();
    let mut all = kept.clone();
    all.extend(new);
    let g = skill.ground(all);
    for d in g.dropped {
        dropped.push(DroppedProposal {
            stage: stage.to_owned(),
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
                stage: stage.to_owned(),
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
#[derive(Clone, Debug, Serialize, Deserialize)]
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

/// `text` on one line: every run of whitespace one space.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
