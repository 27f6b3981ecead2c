//! The validator (spec §9), documented on [`check`]: well-formedness (W1–W14), executability
//! (X1–X5), the validation battery (G1, G3–G9) and mechanical repair (ladder step 1, §9.1).
//!
//! Each check is a small named function whose doc comment states the rule it enforces; they
//! are grouped by phase in `well_formed`, `executable`, `types` and `battery`, with the shared
//! index in `index`, repairs in `repair` and the compile oracle in `x5`.
mod audit;
pub(crate) mod battery;
mod calls;
pub(crate) mod executable;
mod fill;
mod guards;
pub(crate) mod index;
pub(crate) mod mcp;
mod repair;
mod required;
mod tiers;
pub(crate) mod types;
mod well_formed;
pub(crate) mod x5;

use crate::diag::{CheckId, Deviation, Finding, Outcome, Severity};
use crate::program::Program;
use crate::source::{Element, FieldKey, Locator, Locus, Pos, SubRange};
use index::Index;

pub use audit::{Audit, AuditConfig, ObligationStatus, Realization, audit, is_audit_check};
pub use calls::check_calls;

/// Whether [`check`] applies mechanical repairs (ladder step 1, §9.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Repairs {
    /// Report the program exactly as given; nothing is copied.
    #[default]
    Off,
    /// Apply each mechanical repair that re-checks, and record it as a deviation.
    Mechanical,
}

/// What validating a program found; `L` is the front end's location ([`Pos`] for a file).
#[derive(Clone, Debug)]
pub struct Checked<L = Pos> {
    /// The outcome (§9.1).
    pub outcome: Outcome,
    /// The findings that remain, ordered by position.
    pub findings: Vec<Finding<L>>,
    /// The repairs applied (ladder step 1), each recorded as a deviation.
    pub deviations: Vec<Deviation>,
    /// The program after the repairs, when any landed; `None` when the program stands as it
    /// was given (see [`Checked::program`]).
    pub repaired: Option<Program>,
    /// The faithfulness audit (§9.5) of that program when its provenance record lists
    /// obligations — each obligation's standing and the accepted deviations that silenced a
    /// finding — as `check` runs it (no source text, the default [`AuditConfig`]); its
    /// findings are also among [`Checked::findings`]. `None` for a program with nothing to
    /// audit.
    pub faithfulness: Option<Audit<L>>,
}

impl<L> Checked<L> {
    /// The program the findings are about: the repaired one, or else `input` (the program that
    /// was checked).
    pub fn program<'a>(&'a self, input: &'a Program) -> &'a Program {
        self.repaired.as_ref().unwrap_or(input)
    }
}

/// Validates a program: every check, then mechanical repair when `repairs` says so.
///
/// Findings are ordered by source position, then id; positions come from `locator`: a
/// [`SourceMap`](crate::source::SourceMap) (an empty one for a program built in code), or a
/// front end's own [`Locator`]. The program is copied only when a repair lands.
///
/// The validator (spec §9): well-formedness (W1–W14), executability (X1–X5), the validation
/// battery (G1, G3–G9) and mechanical repair (ladder step 1, §9.1).
///
/// # Use
///
/// - `check(program, locator, repairs)` runs every check and, with
///   [`Repairs::Mechanical`], applies mechanical repairs; it returns [`Checked`]: the
///   [`Outcome`], the residual findings (ordered by source position, then id), the deviations
///   recorded for the repairs that landed, and the repaired program when one landed.
/// - The runnable form of a program that passes is built by [`crate::plan::lower`]; the X5
///   checks here are exactly the conditions under which it refuses.
///
/// ```
/// use ais_core::{Repairs, check};
/// use ais_core::{CheckId, Outcome};
/// use ais_core::{Edge, Instruction, Opcode, Program, Walker};
/// use ais_core::SourceMap;
///
/// let draft = Instruction {
///     id: "draft".into(),
///     opcode: Opcode::GenRaw,
///     reads: vec!["task".into()],
///     writes: vec!["note".into()],
///     doc: Some("Write the note.".into()),
///     ..Instruction::default()
/// };
/// let done = Instruction { id: "done".into(), opcode: Opcode::Terminal, ..Instruction::default() };
/// let program = Program {
///     name: Some("note".into()),
///     description: Some("Write a note.".into()),
///     walker: Some(Walker { name: Some("note".into()), ..Walker::default() }),
///     nodes: Some(vec![draft, done]),
///     edges: Some(vec![Edge { from: "draft".into(), to: "done".into(), ..Edge::default() }]),
///     ..Program::default()
/// };
/// let checked = check(&program, &SourceMap::new(), Repairs::Off);
/// assert_eq!(checked.outcome, Outcome::Degraded); // `note` is written but not declared (W9)
/// assert_eq!(checked.findings[0].id, CheckId::W9);
///
/// let repaired = check(&program, &SourceMap::new(), Repairs::Mechanical);
/// assert_eq!(repaired.outcome, Outcome::Fixed); // the carry was minted, and recorded
/// assert_eq!(repaired.deviations[0].subject, "note");
/// ```
///
/// # Decisions where the spec leaves room
///
/// - **G4 is X5.** The compile oracle is reported as `X5` (fatal): it is the failure of
///   [`crate::plan::lower`] — a tool signature that does not parse or is missing, bindings that transpose a
///   path and its content, a type that does not resolve, a guard or CODE body that does not
///   parse or type-check, binding mechanisms that disagree, an `autonomy` tool that does not
///   exist, a GEN-ENUM with no enum to produce (or with a tool loop). A hollow DU instruction is
///   reported as `X1` — the condition it violates, after §9.2's preference for naming the
///   condition over its consequence — and not again as X5: the plan lowers it to
///   [`Executor::Hollow`](crate::plan::Executor::Hollow), which yields an error value at run time.
///   An unknown opcode is W2 and lowers to [`Executor::Unsupported`](crate::plan::Executor::Unsupported).
/// - **Severities** follow §9.4: W and X1–X4 are errors, X5 is fatal, G1/G5/G7 warn, G3/G6/G9
///   error, G8 error for false parallelism and warn for a missed opportunity.
/// - **Outcome** (§9.1): any fatal finding → `failed`; else any residual finding (of any
///   severity) → `degraded`; else repairs applied → `fixed`; else `clean`.
/// - **Encodings** (the design's choices): LOOP carries `verdict` (a bool carry produced by a
///   DU instruction), `cap` (≥ 1) and `counter` (an int carry), and needs a back edge (an edge
///   into its own strongly connected component) and an advance edge; SPAWN carries
///   `concurrency.isolation`; a `role: input` carry other than `task`, or one written by the
///   built-in `ask_user`, is human input, and a ROUTE deciding on it must be `owner: code` with
///   explicit guards (G6); `outcome` is a built-in object type (`ok`, `error`, `output`,
///   `value`), and a step that runs a program (a `command`, `run_command`, a produced script)
///   must land in an `outcome` carry or be tested by a ROUTE (G9, §10.2).
/// - **X4** accepts guards that are exhaustive over one bool or enum carry (`ok == true` /
///   `ok == false`) in place of a default edge; it applies to code-owned branching, not to a
///   model-owned ROUTE (which chooses itself) nor to LOOP and SPAWN (their own control).
/// - **G9 demands** come from a tool's signature annotations, then its body's `def` line, then
///   an `isinstance` test that raises (a test that coerces is not a demand).
/// - **Repairs** (ladder step 1): mint an undeclared written carry (typed from its writer's
///   result where known), name a carry's only writer as its producer, re-own a hollow SENSE /
///   ACT / ROUTE / LOOP to a model slot when it has a `doc` (none is synthesized: a doc-less
///   one keeps its X1, whose repair says to write one), and adopt the type every consumer
///   agrees on. Each is tried on a copy and kept only when its finding is gone and no new error
///   appeared; passes and attempts are bounded.
pub fn check<M: Locator>(program: &Program, locator: &M, repairs: Repairs) -> Checked<M::Location> {
    check_lowering(program, locator, repairs, false).0
}

/// [`check`], and with `lower` the plan of the program as given ([`crate::plan::lower`]'s
/// answer) when no mechanical repair was on offer: lowered from the index the checks built, so
/// that the program is indexed, and its bodies checked, once. `None` when not asked, or when a
/// repair was on offer (lower the program the check returns, repaired or not).
pub fn check_lowering<M: Locator>(
    program: &Program,
    locator: &M,
    repairs: Repairs,
    lower: bool,
) -> (Checked<M::Location>, Option<Lowered>) {
    let (repaired, findings, deviations, plan) = match repairs {
        Repairs::Mechanical => repair::repair(program, lower),
        Repairs::Off => {
            let (findings, plan) = run_checks_lowering(program, lower);
            (None, findings, Vec::new(), plan)
        }
    };
    let plan = plan.filter(|_| repaired.is_none());
    (
        finish_checked(program, locator, repaired, findings, deviations),
        plan,
    )
}

/// What [`crate::plan::lower`] answers: the plan, or the X5 findings that keep it from lowering.
pub type Lowered = Result<crate::plan::Plan, Vec<Finding>>;

fn finish_checked<M: Locator>(
    program: &Program,
    locator: &M,
    repaired: Option<Program>,
    findings: Vec<Finding>,
    deviations: Vec<Deviation>,
) -> Checked<M::Location> {
    let checked = repaired.as_ref().unwrap_or(program);
    let findings = finish(findings, locator, checked);
    let outcome = outcome_of(&findings, &deviations);
    let faithfulness = checked
        .faithfulness
        .as_ref()
        .is_some_and(|r| r.obligations.is_some())
        .then(|| audit(checked, locator, None, &AuditConfig::default()));
    Checked {
        outcome,
        findings,
        deviations,
        repaired,
        faithfulness,
    }
}

/// The MCP checks (M1, M2) of `program` against its lock, placed by `locator`: a tool's
/// `mcp.server` names a declared server, each server is a command or a URL, and — with the
/// lock — each bound server tool exists, an author-written `sig` names only the tool's
/// parameters and all it requires, and a SENSE calls only read-only tools. No server is
/// started. `ais check` and the `ais!` macro merge these with [`check`]'s findings; a program
/// that binds no tool to a server has none. Apply the lock's signatures first
/// ([`crate::mcp::apply_lock`]) so [`check`] binds the same parameters as the runtime.
pub fn check_mcp<M: Locator>(
    program: &Program,
    lock: Option<&crate::mcp::Lock>,
    locator: &M,
) -> Vec<Finding<M::Location>> {
    finish(mcp::findings(program, lock), locator, program)
}

/// The model-tier check (T1) of `program` against the tiers a model configuration defines,
/// placed by `locator`: each slot's `model` names one of `tiers` (with a did-you-mean when it
/// does not), and only slots name one. Run it only when a configuration is given: without
/// one, every tier name is the runtime's to resolve.
pub fn check_tiers<'a, M: Locator>(
    program: &Program,
    tiers: impl IntoIterator<Item = &'a str> + Clone,
    locator: &M,
) -> Vec<Finding<M::Location>> {
    finish(tiers::findings(program, tiers), locator, program)
}

/// X1 for a front end that runs programs without their Rust tools — `ais check`, `ais run`:
/// each tool whose body is Rust (`lang: rust`, no `command`, no MCP server), which only the
/// `ais!` program it was exported from can run (it registers the tool), located at its `lang`
/// and naming that program's Rust entry point ([`native_entry`]). A warning: the program is
/// valid, but a run from AG-IR that reaches the tool faults `unsupported`. The macro does not
/// run it: there, the tools are the program's own.
pub fn check_native_tools<M: Locator>(program: &Program, locator: &M) -> Vec<Finding<M::Location>> {
    let entry = native_entry(program);
    let found = program
        .tool_list()
        .iter()
        .enumerate()
        .filter(|(_, t)| t.is_native())
        .map(|(i, t)| {
            Finding::new(
                CheckId::X1,
                Severity::Warn,
                Locus::field(Element::Tool(i), FieldKey::Lang),
                format!(
                    "tool `{}` has a Rust body (`lang: rust`), which `ais run` cannot execute: a run reaching it faults `unsupported`; run the program from Rust, where the `ais!` program registers it ({entry}), or give the tool a Python `body` or a `command`",
                    t.name
                ),
            )
        })
        .collect();
    finish(found, locator, program)
}

/// The Rust call that runs `program` with its native tools registered, named by its walker
/// (the `ais!` program's type): `` `Walker::run(input, &Walker::runtime().build())` ``.
pub fn native_entry(program: &Program) -> String {
    let entry = program
        .walker
        .as_ref()
        .and_then(|w| w.name.as_deref())
        .filter(|n| !n.is_empty())
        .unwrap_or("Program");
    format!("`{entry}::run(input, &{entry}::runtime().build())`")
}

/// Every check over one program, unordered and without positions.
pub(crate) fn run_checks(program: &Program) -> Vec<Finding> {
    run_checks_lowering(program, false).0
}

/// [`run_checks`], and with `lower` the program lowered from the same index (unless a
/// mechanical repair is on offer).
pub(crate) fn run_checks_lowering(
    program: &Program,
    lower: bool,
) -> (Vec<Finding>, Option<Lowered>) {
    let ix = Index::new(program);
    let mut cx = Ctx {
        ix,
        findings: Vec::new(),
    };
    well_formed::run(&mut cx);
    executable::run(&mut cx);
    types::run(&mut cx);
    fill::run(&mut cx);
    battery::run(&mut cx);
    required::run(&mut cx);
    audit::run(&mut cx);
    let x5 = x5::x5_findings(&cx.ix);
    // Lowered only when no mechanical repair is on offer, since one would change the program.
    let repairable = cx
        .findings
        .iter()
        .chain(&x5)
        .any(|f| repair::offered(f).is_some());
    let plan = (lower && !repairable).then(|| crate::plan::lower_indexed(&cx.ix, &x5));
    cx.findings.extend(x5);
    (cx.findings, plan)
}

/// The outcome of §9.1 for a set of residual findings and applied repairs.
pub fn outcome_of<L>(findings: &[Finding<L>], deviations: &[Deviation]) -> Outcome {
    if findings.iter().any(|f| f.severity == Severity::Fatal) {
        Outcome::Failed
    } else if !findings.is_empty() {
        Outcome::Degraded
    } else if !deviations.is_empty() {
        Outcome::Fixed
    } else {
        Outcome::Clean
    }
}

/// Fills positions and orders findings by position (unplaced last), then id, then locus.
///
/// A finding about an instruction as a whole points at its id (`- id: draft` → `draft`), the
/// name a user looks for, rather than at the start of its entry. A finding about a range inside
/// a field points at that range when the front end can place it.
fn finish<M: Locator>(
    findings: Vec<Finding>,
    map: &M,
    program: &Program,
) -> Vec<Finding<M::Location>> {
    let mut located: Vec<Finding<M::Location>> = findings
        .into_iter()
        .map(|f| {
            let inner = f.inner.and_then(|inner| {
                let token = inner_text(program, &f.locus, inner);
                map.locate_inner(&f.locus, inner, token.as_deref())
            });
            let at = inner.or_else(|| locate(map, &f.locus));
            let related: Vec<Option<M::Location>> =
                f.related.iter().map(|r| locate(map, &r.locus)).collect();
            let mut f = f.map_location(|_: Pos| None);
            f.pos = at;
            for (r, at) in f.related.iter_mut().zip(related) {
                r.pos = at;
            }
            f
        })
        .collect();
    located.sort_by(|a, b| {
        let by_pos = match (&a.pos, &b.pos) {
            (Some(x), Some(y)) => map.order(x, y),
            (x, y) => x.is_none().cmp(&y.is_none()),
        };
        by_pos
            .then(a.id.cmp(&b.id))
            .then_with(|| locus_key(&a.locus).cmp(&locus_key(&b.locus)))
    });
    located.dedup();
    located
}

/// Where `locus` is: a whole instruction at its `id`.
fn locate<M: Locator>(map: &M, locus: &Locus) -> Option<M::Location> {
    match locus {
        Locus {
            element: e @ Element::Instruction(_),
            field: None,
            ..
        } => map.locate(&Locus::field(*e, FieldKey::Id)),
        locus => map.locate(locus),
    }
}

/// The text of `range` inside the field at `locus` (a guard, a CODE body, a tool's `sig`), to
/// confirm a position found inside the field's source.
fn inner_text(program: &Program, locus: &Locus, range: SubRange) -> Option<String> {
    let field = match (locus.element, locus.field.as_ref()?) {
        (Element::Edge(e), FieldKey::Guard) => program.edge_list().get(e)?.guard.as_deref()?,
        (Element::Instruction(i), FieldKey::Body) => {
            program.instructions().get(i)?.body.as_deref()?
        }
        (Element::Tool(t), FieldKey::Sig) => program.tool_list().get(t)?.sig.as_deref()?,
        _ => return None,
    };
    if range.len == 0 {
        return None;
    }
    let line = field
        .lines()
        .nth(usize::try_from(range.line.checked_sub(1)?).ok()?)?;
    let skip = usize::try_from(range.column.checked_sub(1)?).ok()?;
    let len = usize::try_from(range.len).ok()?;
    Some(line.chars().skip(skip).take(len).collect())
}

fn locus_key(l: &Locus) -> (u8, usize, usize, &str, usize) {
    let (k, a, b) = match l.element {
        Element::Program => (0, 0, 0),
        Element::Frontmatter => (1, 0, 0),
        Element::Type(i) => (2, i, 0),
        Element::TypeField(i, j) => (3, i, j),
        Element::Knowledge(i) => (4, i, 0),
        Element::Tool(i) => (5, i, 0),
        Element::Walker => (6, 0, 0),
        Element::Carry(i) => (7, i, 0),
        Element::Instruction(i) => (8, i, 0),
        Element::Edge(i) => (9, i, 0),
        Element::Concurrency => (10, 0, 0),
        Element::Faithfulness => (11, 0, 0),
        Element::Obligation(i) => (12, i, 0),
        Element::AcceptedDeviation(i) => (13, i, 0),
    };
    (k, a, b, l.field_str().unwrap_or(""), l.index.unwrap_or(0))
}

/// The severity a check's residual finding has (§9.4). G8 is an error here; its advisory form
/// (a missed opportunity) is pushed as a warning by the check itself.
pub(crate) fn severity_of(id: CheckId) -> Severity {
    match id {
        CheckId::X5 => Severity::Fatal,
        CheckId::G1 | CheckId::G5 | CheckId::G7 => Severity::Warn,
        id if audit::is_audit_check(id) => Severity::Warn,
        _ => Severity::Error,
    }
}

/// The state the checks share: the index and the findings so far.
pub(crate) struct Ctx<'p> {
    pub ix: Index<'p>,
    pub findings: Vec<Finding>,
}

impl Ctx<'_> {
    /// Records a finding with its check's default severity.
    pub fn report(
        &mut self,
        id: CheckId,
        locus: Locus,
        message: impl Into<String>,
    ) -> &mut Finding {
        self.findings
            .push(Finding::new(id, severity_of(id), locus, message));
        let last = self.findings.len() - 1;
        &mut self.findings[last]
    }

    /// Records a finding about instruction `i` (its id is attached).
    pub fn report_instr(
        &mut self,
        id: CheckId,
        i: usize,
        locus: Locus,
        message: impl Into<String>,
    ) -> &mut Finding {
        let name = self.ix.node(i).map(|n| n.id.clone());
        let f = self.report(id, locus, message);
        f.instruction = name;
        f
    }
}

#[cfg(test)]
mod tests;
