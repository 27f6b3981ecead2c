//! The faithfulness audit (spec §9.5): a program checked against the obligations of the source
//! it was lifted from, as its provenance record ([`Provenance`]) lists them.
//!
//! It runs whenever a program's `faithfulness` section lists `obligations` — inside [`check`]
//! (with no source text and the default [`AuditConfig`]), and on its own through [`audit`],
//! which also takes the source text (`ais check --source FILE`). The four checks of §9.5, in
//! the spec's order, then two extensions:
//!
//! | id | check | question |
//! |---|---|---|
//! | `F1` | structure | every obligation realized in the shape its kind and force require; no instruction without an obligation (added) unless it is scaffolding the spec asks for; no transition whose modality differs from its obligation's force (re-modalized); the record itself sound (ids, spellings, `realized_by`, and with the source: verbatim quotes and the digest) |
//! | `F2` | delete-the-source | nothing in the program points at the source, or at a sibling document, in place of carrying it |
//! | `F3` | bundle depth | every sibling file the source names is embodied (a tool body, a knowledge item), a sub-program (`CALL`), or live |
//! | `F4` | carrier completeness | every required deliverable is held by a typed carry that a writer on a path to `TERMINAL` produces |
//! | `G10` | trace fan-out (extension) | no instruction or tool claims more than [`AuditConfig::fan_out_cap`] distinct procedural obligations |
//! | `G11` | artifact embodiment (extension) | an obligation whose quote names a bundle file is realized by something that touches that file |
//!
//! G10 and G11 are not in the spec: they come from the reference implementation, which found
//! one element claiming fifty rules (coverage without performance) and graphs that never touch
//! the scripts their rules name. Every finding is a `warn` (§9.1: a faithfulness deficit — the
//! program runs and is weaker than its source), located at the element or the obligation it is
//! about, with the change that resolves it. An accepted deviation in the record
//! (`faithfulness.deviations`, with a `reason`) silences the finding it names; the audit lists
//! it as accepted instead.
//!
//! # The required realization (kind × force × bearer)
//!
//! | obligation | required realization ([`Realization`]) |
//! |---|---|
//! | `discretionary`, any kind | `optional` — realizing it is allowed, never required |
//! | bearer `user` or `environment` | `carried` — not required of the agent; a `knowledge` obligation is still `embodied_knowledge` |
//! | `forbidden` `knowledge` | `embodied_knowledge` (a descriptive "never" is a fact to carry) |
//! | `forbidden`, other kinds | `constraint` — folded onto a traced instruction; no transition performs it (an edge tracing it is `modality: forbidden`) |
//! | `mandatory` `step` | `instruction` — a traced instruction on a path from the entry to `TERMINAL` |
//! | `mandatory` `io` | `written_artifact` — a traced `ACT` that writes (a tool whose body writes, a `command`, an MCP tool, `write_file`), or a traced instruction whose carry such an `ACT` writes out |
//! | `mandatory` `human_gate` | `code_gate` — a traced code-owned `ROUTE`, or a traced `ask_user` step whose answer a code-owned `ROUTE` decides on |
//! | `mandatory` `knowledge` | `embodied_knowledge` — a traced knowledge item with content (not a pointer) resident on an instruction, or a traced tool that computes |
//! | `mandatory` `grounding` | `live_tool` — a traced tool, or a traced `SENSE` |
//! | `mandatory` `constraint` | `constraint` — a traced instruction |
//!
//! [`check`]: crate::check()

mod carrier;
mod extensions;
mod realize;
mod selfcontained;
mod structure;
mod text;

use super::Ctx;
use super::index::Index;
use crate::diag::{CheckId, Finding, Repair, Severity};
use crate::program::{
    Bearer, DeviationKind, ElementRef, Modality, ObligationKind, Program, Provenance,
};
use crate::source::{Locator, Locus};
use std::collections::HashMap;

pub use realize::Realization;

/// How the audit is run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditConfig {
    /// G10: the most distinct procedural obligations (those realized as an instruction, a
    /// written artifact, a code gate or a live tool) one instruction or tool may claim in its
    /// `traces_to`. Prohibitions and knowledge folded onto a slot are not counted.
    pub fan_out_cap: usize,
}

impl AuditConfig {
    /// The reference implementation's cap: 12.
    pub const DEFAULT_FAN_OUT_CAP: usize = 12;
}

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig {
            fan_out_cap: Self::DEFAULT_FAN_OUT_CAP,
        }
    }
}

/// What the audit found: its findings (located), each obligation's status, and the accepted
/// deviations that silenced a finding.
#[derive(Clone, Debug)]
pub struct Audit<L = crate::source::Pos> {
    /// The findings (F1–F4, G10, G11), ordered by position.
    pub findings: Vec<Finding<L>>,
    /// Per obligation of the record, in its order: what it requires and what realizes it.
    pub obligations: Vec<ObligationStatus>,
    /// The accepted deviations (`faithfulness.deviations[i]`) that silenced a finding, by index,
    /// with the message of each finding silenced.
    pub accepted: Vec<(usize, String)>,
}

impl<L> Audit<L> {
    /// The obligations whose required realization is missing (and not accepted).
    pub fn dropped(&self) -> impl Iterator<Item = &ObligationStatus> {
        self.obligations
            .iter()
            .filter(|o| o.required.is_some_and(Realization::is_required) && !o.realized)
    }
}

/// One obligation's standing in the program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObligationStatus {
    /// The obligation's id.
    pub id: String,
    /// The realization its kind, force and bearer require; `None` when the record does not say
    /// (a missing or misspelled kind or force, reported as F1).
    pub required: Option<Realization>,
    /// True when the required realization is there (always for `optional` and `carried`).
    pub realized: bool,
    /// The elements that trace to it.
    pub traced_by: Vec<ElementRef>,
    /// True when a transition or step realizing it has another force than the source's (an F1
    /// re-modalized finding about it that no accepted deviation silences).
    pub remodalized: bool,
}

/// Audits `program` against its provenance record: the four checks of §9.5 and G10/G11, with
/// `source` (the text of the document it was lifted from) also checking every quote is in it
/// verbatim (whitespace aside) and the recorded digest. A program without `obligations` in a
/// `faithfulness` section has nothing to audit: the answer is empty.
///
/// ```
/// use ais_core::{AuditConfig, SourceMap, agir, audit};
///
/// let text = r#"
/// nodes:
///   - {id: draft, type: GEN-RAW, doc: Draft the note., traces_to: [r_draft]}
///   - {id: done, type: TERMINAL}
/// edges:
///   - {from: draft, to: done}
/// faithfulness:
///   obligations:
///     - {id: r_draft, kind: step, force: mandatory, quote: Draft the note.}
///     - {id: r_sign, kind: step, force: mandatory, quote: Sign it.}
/// "#;
/// let doc = agir::read(text)?;
/// let audit = audit(&doc.program, &doc.source_map, Some("Draft the note. Sign it."), &AuditConfig::default());
/// let dropped: Vec<&str> = audit.dropped().map(|o| o.id.as_str()).collect();
/// assert_eq!(dropped, ["r_sign"]);
/// assert_eq!(audit.findings[0].id, ais_core::CheckId::F1);
/// # Ok::<(), agir::ReadError>(())
/// ```
pub fn audit<M: Locator>(
    program: &Program,
    locator: &M,
    source: Option<&str>,
    config: &AuditConfig,
) -> Audit<M::Location> {
    let ix = Index::new(program);
    let raw = run_audit(&ix, source, config);
    Audit {
        findings: super::finish(raw.findings, locator, program),
        obligations: raw.obligations,
        accepted: raw.accepted,
    }
}

/// True for the ids of the audit's findings (F1–F4, G10, G11).
pub fn is_audit_check(id: CheckId) -> bool {
    matches!(
        id,
        CheckId::F1 | CheckId::F2 | CheckId::F3 | CheckId::F4 | CheckId::G10 | CheckId::G11
    )
}

/// The audit inside [`check`](crate::check()): no source text, the default configuration.
pub(super) fn run(cx: &mut Ctx) {
    let raw = run_audit(&cx.ix, None, &AuditConfig::default());
    cx.findings.extend(raw.findings);
}

/// The audit, unlocated.
pub(crate) struct RawAudit {
    pub findings: Vec<Finding>,
    pub obligations: Vec<ObligationStatus>,
    pub accepted: Vec<(usize, String)>,
}

fn run_audit(ix: &Index, source: Option<&str>, config: &AuditConfig) -> RawAudit {
    let record = ix.p.faithfulness.as_ref();
    let Some(record) = record.filter(|r| r.obligations.is_some()) else {
        return RawAudit {
            findings: Vec::new(),
            obligations: Vec::new(),
            accepted: Vec::new(),
        };
    };
    let mut a = Auditor::new(ix, record, source, config);
    structure::run(&mut a);
    selfcontained::delete_the_source(&mut a);
    selfcontained::bundle_depth(&mut a);
    carrier::run(&mut a);
    extensions::fan_out(&mut a);
    extensions::artifact_embodiment(&mut a);
    RawAudit {
        findings: a.findings,
        obligations: a.statuses,
        accepted: a.accepted,
    }
}

/// What a finding deviates in, for matching it against the accepted deviations.
pub(super) struct Subject<'a> {
    /// The obligation concerned, if one.
    pub obligation: Option<&'a str>,
    /// The element concerned, if one.
    pub element: Option<ElementRef>,
    /// The kind of deviation.
    pub kind: DeviationKind,
}

/// The elements that trace to one obligation, by plane (indices into the program's lists).
#[derive(Clone, Debug, Default)]
pub(super) struct Traces {
    pub nodes: Vec<usize>,
    pub edges: Vec<usize>,
    pub carries: Vec<usize>,
    pub tools: Vec<usize>,
    pub knowledge: Vec<usize>,
}

/// The state the audit's checks share.
pub(super) struct Auditor<'a, 'p> {
    pub ix: &'a Index<'p>,
    pub record: &'p Provenance,
    pub source: Option<&'a str>,
    pub config: &'a AuditConfig,
    /// Obligation id → its first index in the record.
    pub by_id: HashMap<&'p str, usize>,
    /// Obligation id → the elements tracing to it (ids the record does not list included).
    pub traces: HashMap<&'p str, Traces>,
    /// Per instruction: a `TERMINAL` is reachable from it over transitions.
    pub reaches_terminal: Vec<bool>,
    /// Per obligation: its status, filled by the structure check.
    pub statuses: Vec<ObligationStatus>,
    pub findings: Vec<Finding>,
    pub accepted: Vec<(usize, String)>,
}

impl<'a, 'p> Auditor<'a, 'p> {
    fn new(
        ix: &'a Index<'p>,
        record: &'p Provenance,
        source: Option<&'a str>,
        config: &'a AuditConfig,
    ) -> Self {
        let p = ix.p;
        let mut by_id = HashMap::new();
        for (i, o) in record.obligation_list().iter().enumerate() {
            by_id.entry(o.id.as_str()).or_insert(i);
        }
        let mut traces: HashMap<&'p str, Traces> = HashMap::new();
        let mut add = |list: &'p Option<Vec<String>>, push: &dyn Fn(&mut Traces)| {
            for id in list.iter().flatten() {
                push(traces.entry(id.as_str()).or_default());
            }
        };
        for (i, n) in p.instructions().iter().enumerate() {
            add(&n.traces_to, &|t| t.nodes.push(i));
        }
        for (i, e) in p.edge_list().iter().enumerate() {
            add(&e.traces_to, &|t| t.edges.push(i));
        }
        for (i, c) in p.carries().iter().enumerate() {
            add(&c.traces_to, &|t| t.carries.push(i));
        }
        for (i, t) in p.tool_list().iter().enumerate() {
            add(&t.traces_to, &|tr| tr.tools.push(i));
        }
        for (i, k) in p.knowledge_list().iter().enumerate() {
            add(&k.traces_to, &|t| t.knowledge.push(i));
        }
        Auditor {
            ix,
            record,
            source,
            config,
            by_id,
            traces,
            reaches_terminal: reaches_terminal(ix),
            statuses: Vec::new(),
            findings: Vec::new(),
            accepted: Vec::new(),
        }
    }

    /// The elements tracing to obligation `id` (none when nothing does).
    pub fn traced(&self, id: &str) -> &Traces {
        static NONE: std::sync::OnceLock<Traces> = std::sync::OnceLock::new();
        self.traces
            .get(id)
            .unwrap_or_else(|| NONE.get_or_init(Traces::default))
    }

    /// True when instruction `i` is on a path from the entry to a `TERMINAL`.
    pub fn on_path(&self, i: usize) -> bool {
        self.ix.reachable.get(i).copied().unwrap_or(false)
            && self.reaches_terminal.get(i).copied().unwrap_or(false)
    }

    /// The realization obligation `i` requires, `None` when its kind or force is missing or
    /// misspelled.
    pub fn required(&self, i: usize) -> Option<Realization> {
        let o = self.record.obligation_list().get(i)?;
        Realization::required(o.kind.as_ref()?, o.force.as_ref()?, &o.effective_bearer())
    }

    /// Records a finding (severity `warn`) unless an accepted deviation names it; `subject` is
    /// what it deviates in, `None` for a finding about the record itself (never silenced).
    pub fn report(
        &mut self,
        id: CheckId,
        locus: Locus,
        subject: Option<Subject<'_>>,
        message: String,
        repair: String,
    ) {
        if let Some(s) = &subject
            && let Some(d) = self.accepting(s)
        {
            self.accepted.push((d, message));
            return;
        }
        if let Some(s) = &subject
            && s.kind == DeviationKind::Remodalized
            && let Some(o) = s.obligation
            && let Some(status) = self.statuses.iter_mut().find(|x| x.id == o)
        {
            status.remodalized = true;
        }
        let mut f = Finding::new(id, Severity::Warn, locus.clone(), message);
        f.repair = Some(Repair::manual(repair));
        if subject
            .as_ref()
            .is_some_and(|s| s.kind == DeviationKind::Added)
        {
            f.kind = Some(crate::diag::FindingKind::AddedElement);
        }
        if let crate::source::Element::Instruction(i) = locus.element {
            f.instruction = self.ix.node(i).map(|n| n.id.clone());
        }
        self.findings.push(f);
    }

    /// The accepted deviation (with a reason) that names this subject, if any.
    fn accepting(&self, s: &Subject<'_>) -> Option<usize> {
        self.record.deviation_list().iter().position(|d| {
            let reasoned = d.reason.as_deref().is_some_and(|r| !r.trim().is_empty());
            // An obligation accepted as dropped is not realized on purpose: nothing about how
            // it would have been realized is reported either.
            let dropped_on_purpose = d.kind == Some(DeviationKind::Dropped)
                && s.obligation.is_some()
                && d.element.is_none();
            let kind = d.kind.as_ref() == Some(&s.kind) || dropped_on_purpose;
            let names_something = d.obligation.is_some() || d.element.is_some();
            let obligation = d
                .obligation
                .as_deref()
                .is_none_or(|o| Some(o) == s.obligation);
            let element = d
                .element
                .as_ref()
                .is_none_or(|e| Some(e) == s.element.as_ref());
            reasoned && kind && names_something && obligation && element
        })
    }
}

/// Per instruction: whether a `TERMINAL` can be reached from it over transitions.
fn reaches_terminal(ix: &Index) -> Vec<bool> {
    let nodes = ix.p.instructions();
    let mut into: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (f, outs) in ix.out.iter().enumerate() {
        for &e in outs {
            if let Some(Some((_, t))) = ix.ends.get(e) {
                into[*t].push(f);
            }
        }
    }
    let mut seen = vec![false; nodes.len()];
    let mut stack: Vec<usize> = nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.opcode == crate::program::Opcode::Terminal)
        .map(|(i, _)| i)
        .collect();
    for &t in &stack {
        seen[t] = true;
    }
    while let Some(n) = stack.pop() {
        for &f in &into[n] {
            if !seen[f] {
                seen[f] = true;
                stack.push(f);
            }
        }
    }
    seen
}

/// The words of an obligation for a message: `r1 (step, mandatory)`.
pub(super) fn describe(
    id: &str,
    kind: Option<&ObligationKind>,
    force: Option<&Modality>,
) -> String {
    let kind = kind.map_or("?", ObligationKind::as_str);
    let force = force.map_or("?", Modality::as_str);
    format!("`{id}` ({kind}, {force})")
}

/// True when a bearer is the agent's.
pub(super) fn is_agent(b: &Bearer) -> bool {
    matches!(b, Bearer::Agent | Bearer::Unknown(_))
}
