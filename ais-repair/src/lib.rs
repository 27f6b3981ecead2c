//! # ais-repair — the model repair rung (spec §9.1, rung 2)
//!
//! The validation ladder of §9.1 is mechanical repair, then **scoped repair** — "a bounded
//! model pass over just the failing view" —, then faithful degradation, then the report. This
//! crate is rung 2. [`repair`] takes a program, the findings no mechanical repair resolved, a
//! model (`ais_rt`'s [`Model`]: a `scripted:` answers file or a live provider) and a
//! [`Config`] with the budget, and for each finding:
//!
//! 1. builds the finding's [`View`] — the instructions it names, their edges, the carries and
//!    tools they touch, the knowledge resident on them, the obligations they trace to — and
//!    shows the model that cut of the program, never the whole program text;
//! 2. asks for a patch: operations of the `ais edit` catalog (`ais_edit::ops`, `ais-edit/1`),
//!    applied in memory by [`ais_edit::apply_ops`] — there is no second patch language;
//! 3. judges the answer as hostile input: malformed or oversized answers, operations that do
//!    not apply, and patches that change anything outside the view ([`judge::outside`],
//!    decided by comparing the programs, not by trusting what the operations report) are
//!    discarded, each with its reason named ([`Discarded`]);
//! 4. re-checks the patched program through the validator and the faithfulness audit, and
//!    **adopts it only when it strictly reduces the findings, adds no error-severity finding,
//!    and keeps the obligation closure** ([`judge::Closure`]: the record unchanged, no realized
//!    obligation dropped, none re-modalized, no obligation added); otherwise the program stays
//!    byte for byte what it was;
//! 5. records each adoption as a deviation (§10.3) naming the finding and the patch.
//!
//! Attempts per finding and model calls in all are bounded ([`Budget`]); a discarded attempt's
//! reason is sent back with the next attempt for the same finding.
//!
//! `ais fix --model SPEC [--dry-run]` is this function after the mechanical rung. A producer —
//! the skill compiler, `ais lift` — calls the same [`repair`] on the program it assembled: its
//! text, the findings [`findings_of`] gives for it (with [`Config::source`] set to the skill,
//! so the audit checks quotes), its model and a budget; it keeps [`Repaired::text`] and
//! surfaces [`Repaired::deviations`] with the program.
//!
//! ```
//! use ais_repair::{Config, repair};
//! use ais_rt::llm::ScriptedModel;
//! use serde_json::json;
//!
//! // `draft` traces to no obligation of the record: an added instruction (F1).
//! let text = "\
//! ---
//! name: note
//! description: Use to draft a note.
//! ---
//! walker: {name: note}
//! nodes:
//!   - {id: draft, type: GEN-RAW, doc: Draft the note.}
//!   - {id: done, type: TERMINAL}
//! edges:
//!   - {from: draft, to: done}
//! faithfulness:
//!   obligations:
//!     - {id: r_draft, kind: step, force: mandatory, quote: Draft the note.}
//! ";
//! let findings = ais_repair::findings_of(&ais_core::agir::read(text)?, &Config::default());
//! assert_eq!(findings.len(), 2); // `draft` is added, `r_draft` is dropped
//!
//! // The model answers with one operation of the edit catalog.
//! let model = ScriptedModel::from_json(
//!     "answers.json".as_ref(),
//!     json!({"repair": [{"ops": [
//!         {"op": "set_traces_to", "target": "instruction:draft", "traces_to": ["r_draft"]}
//!     ]}]}),
//! )?;
//! let done = tokio::runtime::Builder::new_current_thread()
//!     .build()?
//!     .block_on(repair("note.agir", text, &findings, &model, &Config::default()))?;
//! assert!(done.findings.is_empty());
//! assert_eq!(done.adopted().count(), 1);
//! assert_eq!(done.deviations.len(), 1);
//! assert!(done.text.contains("traces_to: [r_draft]"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod judge;
pub mod view;

pub use judge::Closure;
pub use view::View;

use ais_core::agir::{self, Document};
use ais_core::{AuditConfig, Deviation, Finding, Repairs, Severity, audit, check, is_audit_check};
use ais_rt::llm::{Model, Operand, Reply, SlotRequest, Turn};
use serde::Serialize;
use serde_json::{Value as Json, json};

/// How many model calls the rung may make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Model calls in all, over every finding.
    pub calls: usize,
    /// Attempts (model calls) per finding.
    pub attempts: usize,
}

impl Default for Budget {
    /// 8 calls in all, 2 per finding.
    fn default() -> Self {
        Budget {
            calls: 8,
            attempts: 2,
        }
    }
}

/// The most a model's answer may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of the answer, as JSON text.
    pub answer_bytes: usize,
    /// Operations in one patch.
    pub ops: usize,
}

impl Default for Limits {
    /// 64 KiB, 32 operations: a repair of one view is a handful of operations.
    fn default() -> Self {
        Limits {
            answer_bytes: 64 * 1024,
            ops: 32,
        }
    }
}

/// How the rung runs.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// The budget of model calls.
    pub budget: Budget,
    /// The bounds on an answer.
    pub limits: Limits,
    /// The source document the program was lifted from (its quotes are then checked
    /// verbatim by the audit, as `ais check --source` does).
    pub source: Option<String>,
    /// The audit's configuration (G10's cap).
    pub audit: AuditConfig,
}

/// Why an answer was discarded: one spelling each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Discarded {
    /// The model gave no answer (transport, timeout, an exhausted script).
    Model,
    /// Not a patch: not JSON, not `{"ops": [...]}`, an operation that is not an object, no
    /// operations, tool calls.
    Malformed,
    /// More bytes or operations than [`Limits`] allows.
    Oversized,
    /// An operation does not apply (unknown element, bad shape, invalid expression, …).
    Rejected,
    /// The patch changes an element outside the finding's view.
    OutOfView,
    /// The patched program has an error- or fatal-severity finding it did not have.
    AddsError,
    /// The patch adds, drops or re-modalizes an obligation, or changes the record.
    Obligation,
    /// The patched program has no fewer findings.
    NotBetter,
}

impl Discarded {
    /// The spelling (`out_of_view`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Discarded::Model => "model",
            Discarded::Malformed => "malformed",
            Discarded::Oversized => "oversized",
            Discarded::Rejected => "rejected",
            Discarded::OutOfView => "out_of_view",
            Discarded::AddsError => "adds_error",
            Discarded::Obligation => "obligation",
            Discarded::NotBetter => "not_better",
        }
    }
}

/// A finding as the rung's output names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Named {
    /// Its check (`F1`, `W8`, …).
    pub code: String,
    /// Its message.
    pub message: String,
    /// Its instruction, when about one.
    pub instruction: Option<String>,
}

impl Named {
    fn of(f: &Finding) -> Named {
        Named {
            code: f.id.as_str().to_owned(),
            message: f.message.clone(),
            instruction: f.instruction.clone(),
        }
    }

    fn matches(&self, f: &Finding) -> bool {
        self.code == f.id.as_str() && self.message == f.message && self.instruction == f.instruction
    }
}

/// One model call and what became of its answer.
#[derive(Clone, Debug, Serialize)]
pub struct Attempt {
    /// The finding it was for.
    pub finding: Named,
    /// Which attempt for that finding (1 first).
    pub attempt: usize,
    /// `None` when adopted; else why it was discarded.
    pub discarded: Option<Discarded>,
    /// What, in words: the reason for a discard, the change in findings for an adoption.
    pub detail: String,
    /// The operations the model proposed, when its answer was a patch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ops: Option<Vec<Json>>,
    /// The patch as a unified diff of the program text, when it applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Findings before and after, when the patched program was checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub findings: Option<(usize, usize)>,
}

/// A finding the rung did not ask the model about, and why.
#[derive(Clone, Debug, Serialize)]
pub struct Skipped {
    /// The finding.
    pub finding: Named,
    /// Why: `resolved` (an earlier adoption resolved it), `no_view` (it names nothing a patch
    /// could change), `budget` (the calls ran out), `not_found` (the program does not have
    /// it).
    pub why: &'static str,
}

/// What the rung did.
#[derive(Clone, Debug)]
pub struct Repaired {
    /// The program's text: the input byte for byte when nothing was adopted.
    pub text: String,
    /// [`Repaired::text`] read.
    pub doc: Document,
    /// The findings before the rung.
    pub before: Vec<Finding>,
    /// The findings that remain.
    pub findings: Vec<Finding>,
    /// Every model call, in order.
    pub attempts: Vec<Attempt>,
    /// The findings not attempted.
    pub skipped: Vec<Skipped>,
    /// One deviation per adoption (§10.3).
    pub deviations: Vec<Deviation>,
    /// Model calls made.
    pub calls: usize,
}

impl Repaired {
    /// The adopted attempts.
    pub fn adopted(&self) -> impl Iterator<Item = &Attempt> {
        self.attempts.iter().filter(|a| a.discarded.is_none())
    }

    /// The rung's record as JSON (counts, every attempt with its verdict, the skipped
    /// findings, the deviations): what a caller logs or shows beside the program.
    pub fn json(&self) -> Json {
        json!({
            "findings_before": self.before.len(),
            "findings_after": self.findings.len(),
            "calls": self.calls,
            "attempts": self.attempts,
            "skipped": self.skipped,
            "deviations": self.deviations,
        })
    }
}

/// Why the rung could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum RepairError {
    /// The program text does not read as AG-IR.
    #[error("the program does not read as AG-IR: {0}")]
    Unreadable(#[from] agir::ReadError),
}

/// The findings the rung judges by: the validator's (no repairs), with the audit run with the
/// source and configuration of `config`.
pub fn findings_of(doc: &Document, config: &Config) -> Vec<Finding> {
    let mut found = check(&doc.program, &doc.source_map, Repairs::Off).findings;
    let audited = doc
        .program
        .faithfulness
        .as_ref()
        .is_some_and(|r| r.obligations.is_some());
    if audited && (config.source.is_some() || config.audit != AuditConfig::default()) {
        found.retain(|f| !f.id.check().is_some_and(is_audit_check));
        let a = audit(
            &doc.program,
            &doc.source_map,
            config.source.as_deref(),
            &config.audit,
        );
        found.extend(a.findings);
        found.sort_by_key(|f| (f.pos.is_none(), f.pos));
    }
    found
}

/// The instructions the model is given (the slot's `doc`).
const TASK: &str = "You repair one finding of an AIS program (AG-IR). You are shown the finding, \
the view — the part of the program the finding is about: its instructions, their edges, the \
carries, tools and knowledge they touch, and the obligations of the source they trace to — and \
the catalog of edit operations. Answer with a JSON object {\"ops\": [...]}: the operations, \
applied in order, that resolve the finding. Change only elements shown in the view (new \
elements may be added; an edge may reach an instruction named as outside the view). Do not add, \
drop or re-modalize an obligation: every obligation realized now must stay realized, with the \
force the source gives it. The patch is checked and kept only if the program has fewer findings \
and no new error.";

/// Runs the repair rung over `findings` of the program `text` (named `file` in messages);
/// see the crate docs. The findings are those to attempt, in order — normally every finding
/// the mechanical rung left ([`findings_of`] on its result); one an earlier adoption resolved
/// is skipped.
pub async fn repair(
    file: &str,
    text: &str,
    findings: &[Finding],
    model: &dyn Model,
    config: &Config,
) -> Result<Repaired, RepairError> {
    let doc = agir::read(text)?;
    let before = findings_of(&doc, config);
    let mut now = State {
        text: text.to_owned(),
        findings: before.clone(),
        closure: Closure::of(&doc.program, config.source.as_deref(), &config.audit),
        doc,
    };
    let mut out = Repaired {
        text: String::new(),
        doc: now.doc.clone(),
        before,
        findings: Vec::new(),
        attempts: Vec::new(),
        skipped: Vec::new(),
        deviations: Vec::new(),
        calls: 0,
    };
    let catalog = catalog_text();
    for target in findings {
        let named = Named::of(target);
        let Some(current) = now.findings.iter().find(|f| named.matches(f)).cloned() else {
            let why = if out.before.iter().any(|f| named.matches(f)) {
                "resolved"
            } else {
                "not_found"
            };
            out.skipped.push(Skipped {
                finding: named,
                why,
            });
            continue;
        };
        let view = View::of(&now.doc.program, &current);
        if view.is_empty() {
            out.skipped.push(Skipped {
                finding: named,
                why: "no_view",
            });
            continue;
        }
        if out.calls >= config.budget.calls {
            out.skipped.push(Skipped {
                finding: named,
                why: "budget",
            });
            continue;
        }
        let mut history: Vec<Turn> = Vec::new();
        for attempt in 1..=config.budget.attempts {
            if out.calls >= config.budget.calls {
                break;
            }
            out.calls += 1;
            let request = request(&current, &view, &now.doc.program, &catalog, &history);
            let reply = match model.complete(&request).await {
                Ok(c) => c.reply,
                Err(e) => {
                    out.attempts.push(Attempt {
                        finding: named.clone(),
                        attempt,
                        discarded: Some(Discarded::Model),
                        detail: format!("the model gave no answer: {e}"),
                        ops: None,
                        diff: None,
                        findings: None,
                    });
                    break;
                }
            };
            let verdict = judge_answer(file, &reply, &view, &now, config);
            let adopted = verdict.next.is_some();
            out.attempts.push(Attempt {
                finding: named.clone(),
                attempt,
                discarded: verdict.discarded,
                detail: verdict.detail.clone(),
                ops: verdict.ops.clone(),
                diff: verdict.diff,
                findings: verdict.counts,
            });
            if let Some(next) = verdict.next {
                out.deviations.push(Deviation {
                    check: current.id.check(),
                    subject: subject_of(&current, &now.doc.program, &view),
                    intended: current.message.clone(),
                    substituted: format!(
                        "a patch by model `{}` ({}): {}",
                        model.name(),
                        op_names(verdict.ops.as_deref().unwrap_or_default()),
                        verdict.detail
                    ),
                });
                now = next;
                break;
            }
            if !adopted {
                history.push(Turn::Assistant {
                    value: Some(answer_value(&reply)),
                    tool_calls: Vec::new(),
                });
                history.push(Turn::Repair {
                    error: format!(
                        "discarded ({}): {}",
                        verdict.discarded.map_or("", Discarded::as_str),
                        verdict.detail
                    ),
                });
            }
        }
    }
    out.text = now.text;
    out.doc = now.doc;
    out.findings = now.findings;
    Ok(out)
}

/// The program as the rung has it: text, document, findings, obligation closure.
struct State {
    text: String,
    doc: Document,
    findings: Vec<Finding>,
    closure: Closure,
}

/// An answer judged: the next state when adopted.
struct Verdict {
    next: Option<State>,
    discarded: Option<Discarded>,
    detail: String,
    ops: Option<Vec<Json>>,
    diff: Option<String>,
    counts: Option<(usize, usize)>,
}

impl Verdict {
    fn discard(why: Discarded, detail: impl Into<String>) -> Verdict {
        Verdict {
            next: None,
            discarded: Some(why),
            detail: detail.into(),
            ops: None,
            diff: None,
            counts: None,
        }
    }
}

/// Judges one answer against the current program (see the crate docs, steps 3–4).
fn judge_answer(file: &str, reply: &Reply, view: &View, now: &State, config: &Config) -> Verdict {
    let ops = match patch_of(reply, &config.limits) {
        Ok(ops) => ops,
        Err((why, detail)) => return Verdict::discard(why, detail),
    };
    let with_ops = |mut v: Verdict| {
        v.ops = Some(ops.clone());
        v
    };
    let patched = match ais_edit::apply_ops(file, &now.text, &now.doc, &ops) {
        Ok(p) => p,
        // The edit layer's detail names the operation (`operation 1: …`).
        Err(r) => {
            let mut detail = r.detail;
            if !r.did_you_mean.is_empty() {
                detail.push_str(&format!("; did you mean {}?", r.did_you_mean.join(", ")));
            }
            return with_ops(Verdict::discard(Discarded::Rejected, detail));
        }
    };
    let diff = similar::TextDiff::from_lines(&now.text, &patched.text)
        .unified_diff()
        .context_radius(2)
        .header(file, file)
        .to_string();
    let with_diff = |v: Verdict| {
        let mut v = with_ops(v);
        v.diff = Some(diff.clone());
        v
    };
    if patched.text == now.text {
        return with_diff(Verdict::discard(
            Discarded::NotBetter,
            "the patch changes nothing",
        ));
    }
    let outside = judge::outside(view, &now.doc.program, &patched.doc.program);
    if !outside.is_empty() {
        return with_diff(Verdict::discard(
            Discarded::OutOfView,
            format!("changes what is outside the view: {}", outside.join(", ")),
        ));
    }
    let after = findings_of(&patched.doc, config);
    let counts = (now.findings.len(), after.len());
    let with_counts = |v: Verdict| {
        let mut v = with_diff(v);
        v.counts = Some(counts);
        v
    };
    let new_errors: Vec<String> = after
        .iter()
        .filter(|f| f.severity >= Severity::Error)
        .filter(|f| !now.findings.iter().any(|b| Named::of(b).matches(f)))
        .map(|f| format!("{} {}", f.id.as_str(), f.message))
        .collect();
    if !new_errors.is_empty() {
        return with_counts(Verdict::discard(
            Discarded::AddsError,
            format!("adds {}", new_errors.join("; ")),
        ));
    }
    let closure = Closure::of(
        &patched.doc.program,
        config.source.as_deref(),
        &config.audit,
    );
    let broken = now.closure.broken_by(&closure);
    if !broken.is_empty() {
        return with_counts(Verdict::discard(Discarded::Obligation, broken.join("; ")));
    }
    if after.len() >= now.findings.len() {
        return with_counts(Verdict::discard(
            Discarded::NotBetter,
            format!(
                "{} findings before, {} after: a patch must strictly reduce them",
                counts.0, counts.1
            ),
        ));
    }
    let detail = format!("findings {} → {}", counts.0, counts.1);
    let mut v = with_counts(Verdict::discard(Discarded::NotBetter, detail));
    v.discarded = None;
    v.next = Some(State {
        text: patched.text,
        doc: patched.doc,
        findings: after,
        closure,
    });
    v
}

/// The operations of an answer, or why it is not a patch.
fn patch_of(reply: &Reply, limits: &Limits) -> Result<Vec<Json>, (Discarded, String)> {
    let value = match reply {
        Reply::ToolCalls { calls } => {
            return Err((
                Discarded::Malformed,
                format!(
                    "{} tool calls, where a patch was asked for and no tool is offered",
                    calls.len()
                ),
            ));
        }
        Reply::Unparsed { text, error } => {
            if text.len() > limits.answer_bytes {
                return Err(oversized_bytes(text.len(), limits));
            }
            return Err((Discarded::Malformed, format!("not a patch: {error}")));
        }
        Reply::Value { value } => value,
    };
    let size = serde_json::to_string(value).map_or(usize::MAX, |s| s.len());
    if size > limits.answer_bytes {
        return Err(oversized_bytes(size, limits));
    }
    let parsed;
    let value = match value {
        Json::String(s) => {
            parsed = serde_json::from_str::<Json>(s).map_err(|e| {
                (
                    Discarded::Malformed,
                    format!("text that is not JSON ({e}), where {{\"ops\": [...]}} was asked for"),
                )
            })?;
            &parsed
        }
        v => v,
    };
    let ops = match value {
        Json::Array(ops) => ops,
        Json::Object(o) => match (o.get("ops"), o.len()) {
            (Some(Json::Array(ops)), 1) => ops,
            (Some(Json::Array(_)), _) => {
                let extra: Vec<&str> = o
                    .keys()
                    .filter(|k| *k != "ops")
                    .map(String::as_str)
                    .collect();
                return Err((
                    Discarded::Malformed,
                    format!("unknown fields beside `ops`: {}", extra.join(", ")),
                ));
            }
            _ => {
                return Err((
                    Discarded::Malformed,
                    "an object without an `ops` list, where {\"ops\": [...]} was asked for".into(),
                ));
            }
        },
        other => {
            return Err((
                Discarded::Malformed,
                format!("{}, where {{\"ops\": [...]}} was asked for", kind_of(other)),
            ));
        }
    };
    if ops.is_empty() {
        return Err((Discarded::Malformed, "no operations".into()));
    }
    if ops.len() > limits.ops {
        return Err((
            Discarded::Oversized,
            format!(
                "{} operations, more than the {} one repair may hold",
                ops.len(),
                limits.ops
            ),
        ));
    }
    if let Some(i) = ops.iter().position(|o| !o.is_object()) {
        return Err((
            Discarded::Malformed,
            format!("operation {i} is {}, not an object", kind_of(&ops[i])),
        ));
    }
    Ok(ops.clone())
}

fn oversized_bytes(n: usize, limits: &Limits) -> (Discarded, String) {
    (
        Discarded::Oversized,
        format!(
            "{n} bytes, more than the {} an answer may hold",
            limits.answer_bytes
        ),
    )
}

fn kind_of(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "an object",
    }
}

/// The answer as sent back in the history of the next attempt (bounded).
fn answer_value(reply: &Reply) -> Json {
    match reply {
        Reply::Value { value } => {
            let text = value.to_string();
            if text.len() > 4096 {
                Json::String(format!("{}… (cut)", cut(&text, 4096)))
            } else {
                value.clone()
            }
        }
        Reply::Unparsed { text, .. } => Json::String(cut(text, 4096).to_owned()),
        Reply::ToolCalls { .. } => Json::String("(tool calls)".into()),
    }
}

fn cut(s: &str, n: usize) -> &str {
    let mut end = n.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The slot request of one attempt.
fn request(
    finding: &Finding,
    view: &View,
    program: &ais_core::Program,
    catalog: &str,
    history: &[Turn],
) -> SlotRequest {
    let mut described = format!(
        "{} ({}): {}",
        finding.id.as_str(),
        finding.severity,
        finding.message
    );
    if let Some(r) = &finding.repair {
        described.push_str(&format!("\nWhat resolves it: {}", r.summary));
    }
    SlotRequest {
        instruction: "repair".into(),
        opcode: "GEN-FILL".into(),
        doc: TASK.into(),
        knowledge: vec![
            ("view".into(), view.text(program)),
            ("operations".into(), catalog.to_owned()),
        ],
        operands: vec![Operand {
            name: "finding".into(),
            ty: "str".into(),
            doc: Some("the finding to resolve".into()),
            value: Json::String(described),
        }],
        schema: json!({
            "type": "object",
            "properties": {"ops": {"type": "array", "items": {"type": "object"}}},
            "required": ["ops"],
            "additionalProperties": false,
        }),
        choices: None,
        tools: Vec::new(),
        sibling: None,
        siblings: None,
        history: history.to_vec(),
    }
}

/// The edit catalog as the model reads it: each operation, what it does, an example.
fn catalog_text() -> String {
    let mut s = format!("Edit operations ({}):\n", ais_edit::ops::CATALOG_VERSION);
    for op in ais_edit::ops::catalog() {
        let summary = op.summary.lines().next().unwrap_or_default();
        s.push_str(&format!("- {}: {summary}\n  e.g. {}\n", op.op, op.example));
    }
    s
}

fn op_names(ops: &[Json]) -> String {
    let names: Vec<&str> = ops
        .iter()
        .filter_map(|o| o.get("op").and_then(Json::as_str))
        .collect();
    names.join(", ")
}

/// What a deviation is about: the finding's instruction, its obligation, else the first
/// element of its view.
fn subject_of(finding: &Finding, program: &ais_core::Program, view: &View) -> String {
    if let Some(id) = &finding.instruction {
        return id.clone();
    }
    if let ais_core::Element::Obligation(i) = finding.locus.element
        && let Some(o) = program
            .faithfulness
            .as_ref()
            .and_then(|r| r.obligation_list().get(i))
    {
        return format!("obligation:{}", o.id);
    }
    view.instructions
        .iter()
        .cloned()
        .chain(view.carries.iter().map(|c| format!("carry:{c}")))
        .chain(view.tools.iter().map(|t| format!("tool:{t}")))
        .chain(view.knowledge.iter().map(|k| format!("knowledge:{k}")))
        .chain(view.types.iter().map(|t| format!("type:{t}")))
        .next()
        .unwrap_or_else(|| "program".into())
}
