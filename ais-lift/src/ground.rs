//! Grounding and the deontic audit: the model proposes, code disposes.
//!
//! [`ground`] keeps a proposed obligation only when its quote is verbatim in the skill's body
//! (by [`crate::text::normalize`], on both sides) and returns the span it rests on; everything
//! else is dropped with a [`DropReason`]. Grounding never creates, merges or rewrites an
//! obligation: what it keeps is a subset of what it was given, each with the span of the
//! skill's own words.
//!
//! [`audit`] then compares each kept obligation's proposed force and condition with what the
//! text states ([`crate::structure::read_span`]) and reports the drift: a "may" hardened into
//! a must, a must softened into a may, a mandate turned into a prohibition (or back), a
//! conditional or exemplary span extracted as unconditional, and — not drift but residue for
//! adjudication — a binding force the skill states nowhere.

use crate::Skill;
use crate::deontic::Stated;
use crate::model::{Force, ForceExt, Proposal};
use crate::structure::{ForceReading, Source};
use crate::text::{Span, normalize};
use serde::Serialize;

/// A proposal whose quote is verbatim in the skill.
#[derive(Clone, Debug, Serialize)]
pub struct Obligation {
    /// The proposal, as given (its condition removed when that was not verbatim).
    #[serde(flatten)]
    pub proposal: Proposal,
    /// Where its quote stands (the first occurrence).
    pub span: Span,
    /// How many times its quote occurs in the skill.
    pub occurrences: usize,
    /// Where its condition stands, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition_span: Option<Span>,
    /// What the skill states about the quote's force.
    pub reading: ForceReading,
}

/// Why a proposal was dropped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum DropReason {
    /// It has no rule id.
    NoRuleId,
    /// An earlier proposal has the same rule id.
    DuplicateRule,
    /// Its quote is empty once normalized.
    EmptyQuote,
    /// Its quote is only in the frontmatter (the router's contract, not the procedure).
    InFrontmatter,
    /// Its kind, force or bearer is not one of the record's spellings.
    UnknownSpelling {
        /// The field (`kind`, `force`, `bearer`).
        field: &'static str,
        /// What it said.
        text: String,
    },
    /// Its quote is not in the skill.
    NotVerbatim {
        /// The longest run of its leading words that is in the skill (empty when not even
        /// its first word is).
        longest_prefix: String,
    },
}

impl DropReason {
    /// A one-line explanation.
    pub fn describe(&self) -> String {
        match self {
            DropReason::NoRuleId => "it has no rule id".to_owned(),
            DropReason::DuplicateRule => "an earlier obligation has the same rule id".to_owned(),
            DropReason::EmptyQuote => "its quote is empty".to_owned(),
            DropReason::UnknownSpelling { field, text } => {
                format!("its {field} `{text}` is not one of the record's spellings")
            }
            DropReason::InFrontmatter => {
                "its quote is only in the frontmatter, which is the router's contract, not the procedure"
                    .to_owned()
            }
            DropReason::NotVerbatim { longest_prefix } if longest_prefix.is_empty() => {
                "its quote is not in the skill (not even its first word)".to_owned()
            }
            DropReason::NotVerbatim { longest_prefix } => format!(
                "its quote is not in the skill: the skill's words stop after \"{longest_prefix}\""
            ),
        }
    }
}

/// A proposal that grounding dropped.
#[derive(Clone, Debug, Serialize)]
pub struct Dropped {
    /// The proposal.
    #[serde(flatten)]
    pub proposal: Proposal,
    /// Why.
    #[serde(flatten)]
    pub reason: DropReason,
}

/// A condition removed from a kept obligation because it is not verbatim in the skill.
#[derive(Clone, Debug, Serialize)]
pub struct ConditionDropped {
    /// The obligation's rule id.
    pub rule: String,
    /// The condition as proposed.
    pub condition: String,
}

/// The outcome of grounding a set of proposals: the model proposes, code disposes.
///
/// A proposal is kept only when its quote is verbatim in the skill's body (by
/// [`crate::text::normalize`], applied to both sides), with the span it rests on and what the
/// skill states about its force; everything else is dropped with a [`DropReason`]. Grounding
/// never creates, merges or rewrites an obligation: what it keeps is a subset of what it was
/// given. A proposed condition that is not verbatim is removed and listed.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Grounding {
    /// The proposals kept, in the order given.
    pub kept: Vec<Obligation>,
    /// The proposals dropped, in the order given.
    pub dropped: Vec<Dropped>,
    /// Conditions removed from kept obligations.
    pub conditions_dropped: Vec<ConditionDropped>,
}

/// Where `needle` (already normalized) occurs in the normalized body: the first occurrence's
/// normalized byte range and the number of occurrences.
fn find(haystack: &str, needle: &str) -> Option<(usize, usize, usize)> {
    let first = haystack.find(needle)?;
    Some((
        first,
        first + needle.len(),
        haystack.matches(needle).count(),
    ))
}

fn longest_prefix(haystack: &str, needle: &str) -> String {
    let words: Vec<&str> = needle.split(' ').collect();
    let (mut lo, mut hi) = (0, words.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if haystack.contains(&words[..mid].join(" ")) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    words[..lo].join(" ")
}

/// The first of a proposal's kind, force and bearer that is not one of the record's spellings.
fn unknown_spelling(p: &Proposal) -> Option<(&'static str, String)> {
    use crate::model::{Bearer, Kind};
    match (&p.kind, &p.force, &p.bearer) {
        (Kind::Unknown(t), _, _) => Some(("kind", t.clone())),
        (_, Force::Unknown(t), _) => Some(("force", t.clone())),
        (_, _, Bearer::Unknown(t)) => Some(("bearer", t.clone())),
        _ => None,
    }
}

/// Grounds `proposals` in `skill`: see [`Grounding`].
pub fn ground(skill: &Skill, proposals: Vec<Proposal>) -> Grounding {
    let body = skill.body_normalized();
    let front = skill
        .document()
        .frontmatter
        .as_ref()
        .map(|f| normalize(&skill.text()[f.span.start..f.span.end]).text);
    let base = skill.document().body_start;
    let mut out = Grounding::default();
    let mut seen: Vec<String> = Vec::new();
    for mut proposal in proposals {
        let rule = proposal.rule.trim().to_owned();
        let quote = normalize(&proposal.quote).text;
        let reason = if rule.is_empty() {
            Some(DropReason::NoRuleId)
        } else if seen.contains(&rule) {
            Some(DropReason::DuplicateRule)
        } else if !quote.chars().any(char::is_alphanumeric) {
            Some(DropReason::EmptyQuote)
        } else if let Some((field, text)) = unknown_spelling(&proposal) {
            Some(DropReason::UnknownSpelling { field, text })
        } else {
            None
        };
        if let Some(reason) = reason {
            out.dropped.push(Dropped { proposal, reason });
            continue;
        }
        seen.push(rule);
        let Some((a, b, occurrences)) = find(&body.text, &quote) else {
            let reason = if front.as_ref().is_some_and(|f| f.contains(&quote)) {
                DropReason::InFrontmatter
            } else {
                DropReason::NotVerbatim {
                    longest_prefix: longest_prefix(&body.text, &quote),
                }
            };
            out.dropped.push(Dropped { proposal, reason });
            continue;
        };
        let Some((s, e)) = body.source_range(a, b) else {
            continue; // unreachable: a non-empty match has a source range
        };
        let span = skill.span(base + s, base + e);
        let mut condition_span = None;
        if let Some(condition) = proposal.condition.take() {
            let c = normalize(&condition).text;
            let found = (!c.is_empty())
                .then(|| find(&body.text, &c))
                .flatten()
                .and_then(|(ca, cb, _)| body.source_range(ca, cb));
            match found {
                Some((cs, ce)) => {
                    condition_span = Some(skill.span(base + cs, base + ce));
                    proposal.condition = Some(condition);
                }
                None if c.is_empty() => {}
                None => out.conditions_dropped.push(ConditionDropped {
                    rule: proposal.rule.clone(),
                    condition,
                }),
            }
        }
        let reading = skill.read_span(&span, &skill.text()[span.start..span.end]);
        out.kept.push(Obligation {
            proposal,
            span,
            occurrences,
            condition_span,
            reading,
        });
    }
    out
}

/// What kind of disagreement the deontic audit found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DriftKind {
    /// The text states discretion; the proposal binds (a "may" hardened into a must).
    Hardened,
    /// The text binds; the proposal is discretionary (a must softened into a may).
    Softened,
    /// The text mandates and the proposal forbids, or the other way round.
    Inverted,
    /// The text is conditional or exemplary; the proposal binds with no condition.
    Unconditioned,
    /// The proposal binds but the skill states no force for it anywhere: not drift, the
    /// residue that adjudication (or the person) settles.
    Unstated,
}

/// One finding of the deontic audit.
#[derive(Clone, Debug, Serialize)]
pub struct Drift {
    /// The obligation's rule id.
    pub rule: String,
    /// What kind.
    pub kind: DriftKind,
    /// The force proposed.
    pub proposed: Force,
    /// What the text states.
    #[serde(flatten)]
    pub stated: Stated,
    /// Where the text states it (for [`DriftKind::Unconditioned`], where the condition is).
    pub source: Source,
    /// Where the obligation's quote stands.
    pub span: Span,
    /// A one-line explanation.
    pub message: String,
}

fn disagreement(stated: &Force, proposed: &Force) -> Option<DriftKind> {
    match (stated, proposed) {
        (s, p) if s == p => None,
        (Force::Discretionary, _) => Some(DriftKind::Hardened),
        (_, Force::Discretionary) => Some(DriftKind::Softened),
        _ => Some(DriftKind::Inverted),
    }
}

/// Audits each obligation's proposed force and condition against what the text states
/// ([`crate::structure::read_span`]): a "may" hardened into a must, a must softened into a may,
/// a mandate turned into a prohibition (or back), a conditional or exemplary span proposed as
/// an unconditional mandate or prohibition, and — not drift but the residue adjudication
/// settles — a binding force the skill states nowhere. See [`DriftKind`].
pub fn audit(obligations: &[Obligation]) -> Vec<Drift> {
    let mut out = Vec::new();
    for o in obligations {
        let p = &o.proposal;
        let r = &o.reading;
        let drift = |kind, stated: Stated, source: Source, message: String| Drift {
            rule: p.rule.clone(),
            kind,
            proposed: p.force.clone(),
            stated,
            source,
            span: o.span,
            message: format!("{}: {message}", p.rule),
        };
        let against = match &r.stated {
            Stated::One(f) => Some(f.clone()),
            Stated::Mixed(fs) if !fs.contains(&p.force) => fs.first().cloned(),
            Stated::Mixed(_) | Stated::Nothing => None,
        };
        if let Some(stated) = against
            && let Some(kind) = disagreement(&stated, &p.force)
        {
            out.push(drift(
                kind,
                r.stated.clone(),
                r.source.clone(),
                format!(
                    "proposed {} but the skill states {} ({})",
                    p.force.as_str(),
                    stated.as_str(),
                    r.source.describe()
                ),
            ));
        }
        if r.stated == Stated::Nothing && p.force.binds() {
            out.push(drift(
                DriftKind::Unstated,
                Stated::Nothing,
                Source::Unstated,
                format!(
                    "proposed {} but the skill states no force for it (no marker, no heading or list intro that states one): the reading is a guess",
                    p.force.as_str()
                ),
            ));
        }
        if let Some(c) = &r.condition
            && p.force.binds()
            && p.condition.is_none()
        {
            let what = if c.example {
                "an example"
            } else {
                "conditional"
            };
            out.push(drift(
                DriftKind::Unconditioned,
                r.stated.clone(),
                c.source.clone(),
                format!(
                    "the skill makes it {what} ('{}', {}) but it was proposed as an unconditional {}",
                    c.marker,
                    c.source.describe(),
                    p.force.as_str()
                ),
            ));
        }
    }
    out
}
