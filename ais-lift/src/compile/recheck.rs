//! `ais lift --check-only`: a lifted program re-audited against its skill, after either
//! changed — no model. Each recorded obligation's quote is grounded in the skill as it is now
//! (a sentence edited away drops it), its recorded force is compared with what the skill states
//! now (a "must" turned "may" is drift), the digest says whether the skill changed at all, the
//! faithfulness audit runs against the skill's text, and the sentences no recorded quote covers
//! are listed (what the skill gained).

use super::{Correction, DroppedProposal, Uncovered, digest, uncovered};
use crate::model::{Cohesion, Force, Kind, Proposal};
use crate::{DriftKind, Skill, audit};
use ais_core::{AuditConfig, Program, SourceMap, Value};
use serde::Serialize;

/// What `--check-only` found.
#[derive(Clone, Debug, Serialize)]
pub struct Recheck {
    /// The obligations in the program's record.
    pub obligations: usize,
    /// Whether the skill's digest differs from the recorded one (`None`: none recorded).
    pub skill_changed: Option<bool>,
    /// Recorded obligations whose quote is no longer in the skill.
    pub dropped: Vec<DroppedProposal>,
    /// Recorded forces the skill now states otherwise.
    pub drift: Vec<Correction>,
    /// The faithfulness audit's findings against the skill's text, one line each.
    pub audit: Vec<String>,
    /// The skill's sentences no recorded quote covers.
    pub uncovered: Vec<Uncovered>,
}

impl Recheck {
    /// Whether anything needs a look: a dropped quote, drift, or an audit finding.
    pub fn has_findings(&self) -> bool {
        !self.dropped.is_empty() || !self.drift.is_empty() || !self.audit.is_empty()
    }
}

/// Why a program cannot be rechecked.
#[derive(Debug, thiserror::Error)]
#[error("the program has no provenance record (`faithfulness.obligations`) to check against")]
pub struct NoRecord;

/// Re-audits `program` against `skill` (see the module docs).
pub fn recheck(skill: &Skill, program: &Program) -> Result<Recheck, NoRecord> {
    let record = program
        .faithfulness
        .as_ref()
        .filter(|r| r.obligations.is_some())
        .ok_or(NoRecord)?;
    let text_of = |extra: &[(String, Value)], key: &str| {
        extra.iter().find_map(|(k, v)| match v {
            Value::Str(s) if k == key => Some(s.clone()),
            _ => None,
        })
    };
    let proposals: Vec<Proposal> = record
        .obligation_list()
        .iter()
        .map(|o| Proposal {
            rule: o.id.clone(),
            kind: o.kind.clone().unwrap_or(Kind::Unknown(String::new())),
            force: o.force.clone().unwrap_or(Force::Unknown(String::new())),
            bearer: o.effective_bearer(),
            quote: o.quote.clone().unwrap_or_default(),
            condition: text_of(&o.extra, "condition"),
            cohesion: match text_of(&o.extra, "cohesion").as_deref() {
                Some("adaptive") => Cohesion::Adaptive,
                _ => Cohesion::Atomic,
            },
        })
        .collect();
    let grounding = skill.ground(proposals);
    let dropped = grounding
        .dropped
        .iter()
        .map(|d| DroppedProposal {
            stage: "recheck".to_owned(),
            rule: d.proposal.rule.clone(),
            quote: d.proposal.quote.clone(),
            reason: d.reason.describe(),
        })
        .collect();
    // A force the skill states no word for was settled at lift time (adjudicated or assumed,
    // and recorded): only a stated force that disagrees is drift now.
    let drift = audit(&grounding.kept)
        .into_iter()
        .filter(|d| d.kind != DriftKind::Unstated)
        .map(|d| Correction {
            rule: d.rule,
            drift: d.kind,
            message: d.message,
        })
        .collect();
    let audited = ais_core::audit(
        program,
        &SourceMap::new(),
        Some(skill.text()),
        &AuditConfig::default(),
    );
    Ok(Recheck {
        obligations: record.obligation_list().len(),
        skill_changed: record
            .source
            .as_ref()
            .and_then(|s| s.digest.as_deref())
            .map(|d| d != digest(skill.text())),
        dropped,
        drift,
        audit: audited
            .findings
            .iter()
            .map(|f| format!("{} {}", f.id, f.message))
            .collect(),
        uncovered: uncovered(skill, &grounding.kept),
    })
}
