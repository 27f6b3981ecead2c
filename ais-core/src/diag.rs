//! Findings, repairs, deviations and outcomes: what the validator says about a program.
//!
//! One [`Finding`] type serves every driver: the CLI renders it rustc-style or as JSON, the
//! `ais!` macro turns it into a compile error at the token its [`Locus`] maps to, and `build.rs`
//! export prints it. Its shape follows the ago seed's rule that a rejection always answers "what
//! is the correct next call": every finding says what is wrong, where, and — in `repair` — the
//! exact change that resolves it.

use crate::edit::{Edit, Wording};
use crate::expr::{Category, ExprError};
use crate::sig::SigError;
use crate::source::{Locus, Pos, SubRange};
use serde::Serialize;
use std::fmt;

spelled! {
    /// The stable identifier of a check (spec §9.2–§9.4), printed `W8`, `X5`, `G9`; `ALL` is the
    /// report order. `G2` is unassigned; G4 (the compile oracle) is reported as
    /// [`CheckId::X5`], which is the same condition.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
    #[allow(missing_docs)]
    pub enum CheckId {
        W1 => "W1",
        W2 => "W2",
        W3 => "W3",
        W4 => "W4",
        W5 => "W5",
        W6 => "W6",
        W7 => "W7",
        W8 => "W8",
        W9 => "W9",
        W10 => "W10",
        W11 => "W11",
        W12 => "W12",
        W13 => "W13",
        W14 => "W14",
        X1 => "X1",
        X2 => "X2",
        X3 => "X3",
        X4 => "X4",
        X5 => "X5",
        G1 => "G1",
        G3 => "G3",
        G5 => "G5",
        G6 => "G6",
        G7 => "G7",
        G8 => "G8",
        G9 => "G9",
        /// Faithfulness audit, structure (§9.5): an obligation dropped, an instruction added, a
        /// transition re-modalized, or the provenance record unsound.
        F1 => "F1",
        /// Faithfulness audit, delete-the-source (§9.5): the program points at its source or a
        /// sibling document instead of carrying it.
        F2 => "F2",
        /// Faithfulness audit, bundle depth (§9.5): a sibling file the source names is neither
        /// embodied, nor a sub-program, nor live.
        F3 => "F3",
        /// Faithfulness audit, carrier completeness (§9.5): a required deliverable no typed
        /// carry holds, or no writer on a path to TERMINAL produces.
        F4 => "F4",
        /// Trace fan-out (an extension beyond the spec, from the reference implementation): one
        /// instruction or tool claims more distinct procedural obligations than the cap.
        G10 => "G10",
        /// Artifact embodiment (an extension beyond the spec, from the reference
        /// implementation): an obligation naming a bundle file is realized by nothing that
        /// touches the file.
        G11 => "G11",
        /// A section or field that spec §8.2 marks REQUIRED is missing (frontmatter `name` or
        /// `description`, `walker.name`).
        S1 => "S1",
        /// An MCP binding does not resolve: a tool's `mcp.server` names no declared server, a
        /// server declares neither `command` nor `url`, or the lock has no such server tool or
        /// parameter (`ais_core::check_mcp`).
        M1 => "M1",
        /// A SENSE is bound to an MCP tool its server does not mark `readOnlyHint` (§4.2.1: a
        /// SENSE must not mutate).
        M2 => "M2",
        /// A slot's `model` names a tier the run's model configuration does not define, or a
        /// code-owned instruction names one (`ais_core::check_tiers`).
        T1 => "T1",
    }
}

impl fmt::Display for CheckId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for CheckId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// How bad a residual finding is (spec §9.4; the meanings are normative).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// A faithfulness or quality deficit: the program runs and is weaker than its source.
    Warn,
    /// A runtime crash or a violated mandate riding a green compile: the program runs and is
    /// wrong.
    Error,
    /// There is no program.
    Fatal,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Warn => "warn",
            Severity::Error => "error",
            Severity::Fatal => "fatal",
        })
    }
}

/// The exact change that resolves a finding.
#[derive(Clone, Debug, PartialEq)]
pub struct Repair {
    /// The change, in AG-IR words a user can act on: "add `plan_md: {type: str, produced_by:
    /// assemble}` to walker.carries". Another front end words it with [`Repair::words`].
    pub summary: String,
    /// The change as an edit on the model, when it is one.
    pub edit: Option<Edit>,
    /// True when the validator applies [`Repair::edit`] itself (ladder step 1, §9.1).
    pub mechanical: bool,
}

impl Repair {
    /// A repair a user applies by hand, with no structured edit.
    pub fn manual(summary: impl Into<String>) -> Self {
        Repair {
            summary: summary.into(),
            edit: None,
            mechanical: false,
        }
    }

    /// A repair the validator applies itself (ladder step 1), re-checked before it is kept.
    pub fn mechanical(edit: Edit, summary: impl Into<String>) -> Self {
        Repair {
            summary: summary.into(),
            edit: Some(edit),
            mechanical: true,
        }
    }

    /// A structured repair a front end may offer (a quick fix), which the validator does not
    /// apply itself: a misspelled read (W8). Ladder step 1 (§9.1) exists to reach a runnable
    /// program, re-checked through the compile oracle; a dangling read leaves the program
    /// runnable (degraded, the operand empty), so the validator reports the likely rename
    /// instead of guessing it — unlike a name in a guard, which leaves no program at all.
    pub fn suggested(edit: Edit, summary: impl Into<String>) -> Self {
        Repair {
            summary: summary.into(),
            edit: Some(edit),
            mechanical: false,
        }
    }

    /// The repair in a front end's words: the AG-IR summary for [`Wording::Agir`]; for
    /// [`Wording::RustDsl`] the edit described in the macro's terms (the summary when the
    /// repair has no structured edit).
    pub fn words(&self, wording: Wording) -> String {
        match (&self.edit, wording) {
            (Some(edit), Wording::RustDsl) => edit.describe(wording),
            _ => self.summary.clone(),
        }
    }
}

/// What kind of diagnostic a [`Finding`] is: a validator check, or an error reading a
/// program, a tool signature or an expression. One type for all of them, so every front end
/// renders, locates and serializes them alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Code {
    /// A validator check (spec §9).
    Check(CheckId),
    /// The text could not be read as a program (AG-IR, later the macro's DSL).
    Read,
    /// A tool signature does not parse.
    Signature,
    /// An expression (a guard, a CODE body, `ais eval`) does not parse, check or evaluate.
    Expr(Category),
    /// A rule of another format's own catalogue, printed as that format numbers it: an AGS 1.0
    /// rule (`AG111`, `AG204`) for a finding about an Agentic Graph document (crate `ais-ags`).
    Foreign(&'static str),
}

impl Code {
    /// The code as printed: `W8`, `X5`, `read`, `signature`, `name_error`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Code::Check(id) => id.as_str(),
            Code::Read => "read",
            Code::Signature => "signature",
            Code::Expr(c) => c.as_str(),
            Code::Foreign(code) => code,
        }
    }

    /// The check, for a validator finding.
    pub fn check(&self) -> Option<CheckId> {
        match self {
            Code::Check(id) => Some(*id),
            _ => None,
        }
    }
}

impl From<CheckId> for Code {
    fn from(id: CheckId) -> Code {
        Code::Check(id)
    }
}

impl PartialEq<CheckId> for Code {
    fn eq(&self, other: &CheckId) -> bool {
        *self == Code::Check(*other)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One diagnostic: a validator finding, or a read, signature or expression error.
///
/// The location type `L` is the front end's: a line and column ([`Pos`], the default) for a
/// `.agir` file, a token span for the `ais!` macro. The validator names a [`Locus`] (and, for a
/// place inside a guard, body or signature, an [`inner`](Finding::inner) range); the front
/// end's [`Locator`](crate::source::Locator) turns them into `L`.
///
/// `Finding<Pos>` serializes (with serde) in the documented JSON shape of `ais check --format
/// json`: keys `id`, `severity`, `message`, `instruction`, `line`, `column`, `did_you_mean`,
/// `repair` (`{"summary", "mechanical"}` or null), in that order.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding<L = Pos> {
    /// The stable id: a check (`W8`), or `read`, `signature`, an expression error category.
    pub id: Code,
    /// Its severity (§9.4).
    pub severity: Severity,
    /// What is wrong, in words a user understands.
    pub message: String,
    /// The element (and field) the finding is about.
    pub locus: Locus,
    /// The range inside the field's text (a name inside a guard, a CODE body, a signature)
    /// the finding is about, when it is about part of the field.
    pub inner: Option<SubRange>,
    /// The id of the instruction the finding is about, when it is about one.
    pub instruction: Option<String>,
    /// Where it is in the source, when known: at [`Finding::inner`] when the front end can
    /// place it, else at the locus.
    pub pos: Option<L>,
    /// Secondary places, each with a label ("first used here").
    pub related: Vec<Related<L>>,
    /// Names close to a misspelled one.
    pub did_you_mean: Vec<String>,
    /// The change that resolves it.
    pub repair: Option<Repair>,
    /// Which of its check's kinds of finding it is, when a front end needs to tell them apart (one check,
    /// such as G9, has several findings); `None` for most findings.
    pub kind: Option<FindingKind>,
}

/// A finding's kind within its check, for the findings a front end treats specially: it
/// words their repair in its own terms, or accepts them where the user marked them allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FindingKind {
    /// G9: a step runs a program (a `command`, `run_command`, a produced script) and no guard
    /// tests the carry its failure lands in; or a fallible step's write is read by a guard that
    /// does not test its error value.
    UnroutedProgramFailure,
    /// G9: a GEN-FILL whose result type is not an object (§4.1).
    FillNotObject,
    /// G9: a read (a DSL operand) that no parameter of the step's tool takes: it is dropped.
    ReadUnbound,
    /// G9: a CALL write the callee can never produce.
    CallWriteUnproduced,
    /// X5: a GEN-ENUM whose result type is not a declared enum.
    GenEnumNotEnum,
    /// X2: a LOOP whose verdict a model writes, not code (§4.4.2).
    LoopVerdictNotCode,
    /// G6: a ROUTE deciding on a value computed from a human answer (not on the answer itself)
    /// that is not `owner: code` with guards.
    HumanGateOnDerived,
    /// F1: an instruction that traces to no obligation of the source and is not scaffolding
    /// (an added element).
    AddedElement,
}

/// A secondary place a finding points at, with a label: the first definition of a duplicated
/// id, the instruction an edge leaves from.
#[derive(Clone, Debug, PartialEq)]
pub struct Related<L = Pos> {
    /// The element (and field) it is.
    pub locus: Locus,
    /// Where it is in the source, when the front end can place it.
    pub pos: Option<L>,
    /// What it is, in a few words ("first used here").
    pub label: String,
}

impl Serialize for Finding<Pos> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        #[derive(Serialize)]
        struct RepairJson<'a> {
            summary: &'a str,
            mechanical: bool,
        }
        let mut st = s.serialize_struct("Finding", 8)?;
        st.serialize_field("id", self.id.as_str())?;
        st.serialize_field("severity", &self.severity)?;
        st.serialize_field("message", &self.message)?;
        st.serialize_field("instruction", &self.instruction)?;
        st.serialize_field("line", &self.pos.map(|p| p.line))?;
        st.serialize_field("column", &self.pos.map(|p| p.column))?;
        st.serialize_field("did_you_mean", &self.did_you_mean)?;
        st.serialize_field(
            "repair",
            &self.repair.as_ref().map(|r| RepairJson {
                summary: &r.summary,
                mechanical: r.mechanical,
            }),
        )?;
        st.end()
    }
}

impl<L> Finding<L> {
    /// A finding with no position, suggestion or repair yet.
    pub fn new(
        id: impl Into<Code>,
        severity: Severity,
        locus: Locus,
        message: impl Into<String>,
    ) -> Self {
        Finding {
            id: id.into(),
            severity,
            message: message.into(),
            locus,
            inner: None,
            instruction: None,
            pos: None,
            related: Vec::new(),
            did_you_mean: Vec::new(),
            repair: None,
            kind: None,
        }
    }

    /// Names the instruction the finding is about.
    pub fn with_instruction(mut self, id: impl Into<String>) -> Self {
        self.instruction = Some(id.into());
        self
    }

    /// Adds did-you-mean suggestions.
    pub fn with_suggestions(mut self, names: Vec<String>) -> Self {
        self.did_you_mean = names;
        self
    }

    /// Points the finding at a range inside its field's text.
    pub fn with_inner(mut self, inner: SubRange) -> Self {
        self.inner = Some(inner);
        self
    }

    /// Adds the repair.
    pub fn with_repair(mut self, repair: Repair) -> Self {
        self.repair = Some(repair);
        self
    }

    /// Names the finding's kind within its check.
    pub fn with_kind(mut self, kind: FindingKind) -> Self {
        self.kind = Some(kind);
        self
    }

    /// Adds a secondary place, with its label (located later, as the finding is).
    pub fn with_related(mut self, locus: Locus, label: impl Into<String>) -> Self {
        self.relate(locus, label);
        self
    }

    /// Adds a secondary place to a finding already recorded.
    pub fn relate(&mut self, locus: Locus, label: impl Into<String>) {
        self.related.push(Related {
            locus,
            pos: None,
            label: label.into(),
        });
    }

    /// The same finding located by another front end: `locate` maps the position, if any,
    /// and each secondary place.
    pub fn map_location<M>(self, mut locate: impl FnMut(L) -> Option<M>) -> Finding<M> {
        Finding {
            id: self.id,
            severity: self.severity,
            message: self.message,
            locus: self.locus,
            inner: self.inner,
            instruction: self.instruction,
            pos: self.pos.and_then(&mut locate),
            related: self
                .related
                .into_iter()
                .map(|r| Related {
                    locus: r.locus,
                    pos: r.pos.and_then(&mut locate),
                    label: r.label,
                })
                .collect(),
            did_you_mean: self.did_you_mean,
            repair: self.repair,
            kind: self.kind,
        }
    }

    /// An expression error as a finding about the field at `locus` (a guard, a CODE body): the
    /// error's range inside the field, its did-you-mean, severity `error`.
    pub fn from_expr_error(err: &ExprError, locus: Locus) -> Self {
        let mut f = Finding::new(
            Code::Expr(err.category),
            Severity::Error,
            locus,
            &err.message,
        )
        .with_inner(err.range())
        .with_suggestions(err.did_you_mean.clone());
        f.pos = None;
        f
    }

    /// A signature error as a finding about the `sig` at `locus`, pointing at the place in
    /// `text` (the signature) where parsing stopped; severity `fatal` (the tool cannot be
    /// bound).
    pub fn from_sig_error(err: &SigError, text: &str, locus: Locus) -> Self {
        Finding::new(Code::Signature, Severity::Fatal, locus, &err.message)
            .with_inner(sig_range(err, text))
    }
}

impl From<&ExprError> for Finding<Pos> {
    /// An expression given on its own (`ais eval`): positioned within the expression text.
    fn from(err: &ExprError) -> Self {
        let mut f = Finding::from_expr_error(err, Locus::element(crate::source::Element::Program));
        f.pos = Some(err.pos());
        f
    }
}

/// The range in a signature's text where parsing stopped (its byte offset, as a column).
pub fn sig_range(err: &SigError, text: &str) -> SubRange {
    let mut cut = err.offset.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = &text[..cut];
    let line = head.matches('\n').count() + 1;
    let column = head.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    let len = text[cut..]
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .count()
        .max(1);
    SubRange {
        line: u32::try_from(line).unwrap_or(u32::MAX),
        column: u32::try_from(column).unwrap_or(u32::MAX),
        len: u32::try_from(len).unwrap_or(u32::MAX),
    }
}

#[cfg(feature = "agir")]
impl From<&crate::agir::ReadError> for Finding<Pos> {
    /// A text that could not be read as AG-IR: id `read`, severity `fatal` (there is no
    /// program), the error's help as the repair.
    fn from(err: &crate::agir::ReadError) -> Self {
        let mut f = Finding::new(
            Code::Read,
            Severity::Fatal,
            Locus::element(crate::source::Element::Program),
            &err.message,
        );
        f.pos = err.pos;
        f.repair = err.help.as_ref().map(Repair::manual);
        f
    }
}

/// A recorded weakening of the program (spec §10.3): a repair the validator applied, a weaker
/// lowering a backend took. A backend must never weaken a program silently.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Deviation {
    /// The check whose finding the deviation resolves, if any.
    pub check: Option<CheckId>,
    /// The instruction (or carry) it concerns.
    pub subject: String,
    /// What the program said.
    pub intended: String,
    /// What was done instead.
    pub substituted: String,
}

/// The outcome of validation (spec §9.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Runnable; nothing found, nothing needed.
    Clean,
    /// Runnable and clean, but only because repairs landed.
    Fixed,
    /// Runnable, with residual findings attached.
    Degraded,
    /// No runnable program exists.
    Failed,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Outcome::Clean => "clean",
            Outcome::Fixed => "fixed",
            Outcome::Degraded => "degraded",
            Outcome::Failed => "failed",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_ids_print_and_parse() {
        for id in CheckId::ALL {
            assert_eq!(CheckId::parse(id.as_str()), Some(id));
        }
        assert_eq!(CheckId::parse("G2"), None);
    }

    #[test]
    fn did_you_mean_finds_close_names_only() {
        use crate::suggest::did_you_mean;
        assert_eq!(
            did_you_mean("plan_mdd", ["plan_md", "task", "plan_ok"]),
            ["plan_md", "plan_ok"]
        );
        assert!(did_you_mean("zzz", ["plan_md", "task"]).is_empty());
    }
}
