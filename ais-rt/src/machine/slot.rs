//! The Stochastic Unit's work: a slot request built from the step (§2.2: the doc and every
//! resident knowledge item in full, the operands capped per §7.6, the result's JSON Schema, the
//! tool surface), filled through `model::slot::fill`; an SU ROUTE's choice among its edges.

use super::carries::{CarryFile, Lookup};
use super::effects::{Asked, Effects, exchange_spec, tool_spec};
use super::exec::text_of;
use super::plan::{Prepared, Step};
use super::{Flow, Run, Settings, Stop};
use crate::journal::EffectKind;
use crate::llm::schema::{Compiled, SlotSchema};
use crate::llm::slot::{self, SlotOptions, SlotOutcome, SlotToolFuture, SlotTools};
use crate::llm::tiers::{Link, Price};
use crate::llm::{
    Chain, Model, ModelError, ModelErrorKind, ModelFuture, Operand, SlotRequest, ToolSpec,
};
use crate::report::FaultKind;
use crate::tools::{ToolArgs, ToolContext};
use crate::trace::SlotTrace;
use ais_core::bind::SlotOperand;
use ais_core::sig::Return;
use ais_core::{Opcode, Type, TypeKind, Value};
use indexmap::IndexMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

/// The operands of a slot: each read carry (its type, its doc, its value), the folded
/// context operand as a map.
pub(crate) fn operands<C: Lookup + ?Sized>(
    prep: &Prepared,
    ops: &[SlotOperand],
    carries: &C,
) -> Vec<Operand> {
    ops.iter()
        .map(|op| match op {
            SlotOperand::Carry(name) => {
                let c = prep.names.index(name);
                Operand {
                    name: name.clone(),
                    ty: c
                        .and_then(|c| prep.names.types.get(c).cloned().flatten())
                        .map_or_else(|| "any".to_owned(), |t| type_label(prep, &t)),
                    doc: prep.program.carry(name).and_then(|(_, k)| k.doc.clone()),
                    value: c.map_or(serde_json::Value::Null, |c| carries.value(c).to_json()),
                }
            }
            SlotOperand::Context {
                name,
                carries: held,
            } => {
                let value: serde_json::Map<String, serde_json::Value> = held
                    .iter()
                    .map(|h| {
                        let v = prep
                            .names
                            .index(h)
                            .map_or(serde_json::Value::Null, |c| carries.value(c).to_json());
                        (h.clone(), v)
                    })
                    .collect();
                Operand {
                    name: name.clone(),
                    ty: "dict".to_owned(),
                    doc: Some("the reads beyond the slot's operand cap, by name".to_owned()),
                    value: serde_json::Value::Object(value),
                }
            }
        })
        .collect()
}

/// A type as a slot's prompt labels an operand of it: as AG-IR spells it (`str`,
/// `list[str]`, `Sentiment`), and for each declared enum it names, the members —
/// `list[Sentiment]; Sentiment is one of: positive, negative, neutral` — so the model reads
/// what the value may be, not only a name.
pub(crate) fn type_label(prep: &Prepared, ty: &Type) -> String {
    fn enums<'t>(ty: &'t Type, out: &mut Vec<&'t str>) {
        match ty {
            Type::Named(n) if !out.contains(&n.as_str()) => out.push(n),
            Type::List(Some(t)) | Type::Dict(Some(t)) => enums(t, out),
            _ => {}
        }
    }
    let mut named = Vec::new();
    enums(ty, &mut named);
    let mut label = ty.to_string();
    for n in named {
        if let Some(TypeKind::Enum(members)) = prep.program.type_decl(n).map(|(_, d)| &d.kind) {
            let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
            let _ = write!(label, "; {n} is one of: {}", names.join(", "));
        }
    }
    label
}

/// The slot request of a step answering a `ty`, with that type's schema (compiled once per
/// run, `Prepared::schemas`).
pub(crate) fn request<C: Lookup + ?Sized>(
    prep: &Prepared,
    step: &Step,
    ops: &[SlotOperand],
    carries: &C,
    ty: &Type,
) -> (SlotRequest, Arc<SlotSchema>) {
    let schema = prep.schemas.get(&prep.program, ty);
    let request = SlotRequest {
        instruction: step.id.clone(),
        opcode: step.mnemonic().to_owned(),
        doc: step.doc.clone(),
        knowledge: step.knowledge.clone(),
        operands: operands(prep, ops, carries),
        schema: schema.schema.clone(),
        choices: enum_members(prep, ty),
        tools: tool_specs(prep, &step.autonomy),
        sibling: None,
        siblings: None,
        history: Vec::new(),
    };
    (request, schema)
}

pub(crate) fn enum_members(prep: &Prepared, ty: &Type) -> Option<Vec<String>> {
    let Type::Named(n) = ty else { return None };
    match prep.program.type_decl(n).map(|(_, d)| &d.kind) {
        Some(TypeKind::Enum(members)) => Some(members.iter().map(|m| m.name.clone()).collect()),
        _ => None,
    }
}

/// The tool surface of a slot (`autonomy.tools`): each tool's doc and a JSON Schema of its
/// parameters (typed where the signature annotates them).
fn tool_specs(prep: &Prepared, names: &[String]) -> Vec<ToolSpec> {
    names
        .iter()
        .map(|name| {
            let declared = prep.program.tool(name).map(|(_, t)| t);
            let sig_text = declared
                .and_then(|t| t.sig.clone())
                .or_else(|| ais_core::plan::builtin(name).map(|b| b.sig.to_owned()));
            let sig = sig_text.as_deref().and_then(|s| ais_core::sig::parse(s).ok());
            let mut props = serde_json::Map::new();
            let mut required = Vec::new();
            for p in sig.iter().flat_map(|s| s.params.iter()) {
                let schema = match &p.ty {
                    Some(t) => slot::schema_for(&prep.program, t),
                    None => serde_json::json!({}),
                };
                props.insert(p.name.clone(), schema);
                required.push(serde_json::Value::String(p.name.clone()));
            }
            ToolSpec {
                name: name.clone(),
                description: declared.and_then(|t| t.doc.clone()).unwrap_or_default(),
                parameters: serde_json::json!({"type": "object", "properties": props, "required": required}),
            }
        })
        .collect()
}

/// The slot's reach into the Deterministic Unit — only the tools its `autonomy.tools` names,
/// each bound from the model's (untrusted) arguments by parameter name and run like any DU
/// call, a failure coming back as `{ok: false, error, output}` — and its seam: each exchange
/// with the model and each tool call the model makes is an effect of its own
/// ([`Effects::run`]), so a resume continues a slot mid-conversation, asking the model nothing
/// it answered and running none of its tools again (an ACT or a tool of unknown surface runs at
/// most once; a read may run again).
pub(crate) struct SlotReach {
    settings: Arc<Settings>,
    prep: Arc<Prepared>,
    instruction: String,
    allowed: Vec<String>,
    ctx: ToolContext,
    seam: Arc<Seam>,
}

/// What a slot's exchanges and tool calls share: the effects they go through, and the first
/// stop the journal gave among them (an effect in flight that may not run again, a corrupt
/// row). Once stopped, the slot asks and runs nothing more, and the run stops with it.
struct Seam {
    effects: Arc<Effects>,
    kind: EffectKind,
    stopped: Mutex<Option<Stop>>,
}

impl Seam {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Stop>> {
        self.stopped.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn is_stopped(&self) -> bool {
        self.lock().is_some()
    }

    /// Keeps the first stop.
    fn stop(&self, stop: Stop) {
        self.lock().get_or_insert(stop);
    }
}

/// A slot the journal or the cost budget stopped: why, and what it spent before (the answers
/// it got were paid for, and count in the run's usage).
pub(crate) struct Stopped {
    pub stop: Stop,
    pub spent: SlotOutcome,
}

/// What a slot's exchange or tool call answers once the journal stopped the slot.
const STOPPED: &str = "not run: the journal stopped this slot";

/// A slot's model behind its seam: each exchange is an effect, recorded with the model that
/// answered and what the answer cost, and counted toward the run's cost budget.
struct Journaled {
    model: Arc<dyn Model>,
    price: Option<Price>,
    /// The run's cost budget (`--max-cost`), in US dollars.
    limit: Option<f64>,
    /// Who watches the answer stream in.
    live: Option<Arc<dyn crate::llm::live::Live>>,
    seam: Arc<Seam>,
}

impl Journaled {
    /// What the next exchange may cost at most, when that is known before it is made (a price
    /// and a completion-token limit): the completion at its limit. (The prompt's tokens are
    /// known only once the provider counted them.)
    fn worst(&self) -> f64 {
        match (self.price, self.model.max_completion_tokens()) {
            (Some(p), Some(tokens)) => tokens as f64 * p.output / 1e6,
            _ => 0.0,
        }
    }

    /// The fault of a budget that the next exchange may not fit in, or that is spent.
    fn refused(
        &self,
        request: &SlotRequest,
        limit: f64,
        worst: f64,
        (spent, held): (f64, f64),
    ) -> Stop {
        let asking = format!(
            "slot `{}` would ask `{}`",
            request.instruction,
            self.model.name()
        );
        let why = if spent >= limit {
            format!("{asking}, and the run has spent {} already", dollars(spent))
        } else {
            let tokens = self.model.max_completion_tokens().unwrap_or(0);
            let note = if held > 0.0 {
                format!(" ({} held for calls in flight)", dollars(held))
            } else {
                String::new()
            };
            format!(
                "{asking} for up to {tokens} completion tokens, which may cost {}, and only {} is left{note}",
                dollars(worst),
                dollars((limit - spent - held).max(0.0))
            )
        };
        Stop::Fault(
            FaultKind::BudgetExhausted,
            format!(
                "cost budget exhausted before the call: {why} of `--max-cost` {}; raise it with `--max-cost`, or use a cheaper model for this slot",
                dollars(limit)
            ),
        )
    }
}

/// An amount in US dollars, as budgets and reports print it.
pub(crate) fn dollars(x: f64) -> String {
    format!("${x:.4}")
}

impl Model for Journaled {
    fn name(&self) -> &str {
        self.model.name()
    }

    fn is_scripted(&self) -> bool {
        self.model.is_scripted()
    }

    fn complete<'a>(&'a self, request: &'a SlotRequest) -> ModelFuture<'a> {
        Box::pin(async move {
            let stopped = || Err(ModelError::new(ModelErrorKind::Protocol, STOPPED));
            if self.seam.is_stopped() {
                return stopped();
            }
            let meter = self.seam.effects.meter();
            let worst = self.worst();
            if let Some(limit) = self.limit
                && let Err(state) = meter.reserve(limit, worst)
            {
                self.seam.stop(self.refused(request, limit, worst, state));
                return stopped();
            }
            let kind = self.seam.kind;
            let price = self.price;
            let asked = self
                .seam
                .effects
                .run(
                    request,
                    |r| exchange_spec(kind, r),
                    |r| async move {
                        let live = self.live.clone();
                        let answer = crate::llm::live::watched(live, self.model.complete(r)).await;
                        let cost = price
                            .zip(answer.as_ref().ok())
                            .map(|(p, c)| p.cost(&c.usage));
                        Asked {
                            model: Some(self.model.name().to_owned()),
                            cost,
                            answer,
                        }
                    },
                )
                .await;
            let asked = match asked {
                Ok(asked) => asked,
                Err(stop) => {
                    meter.settle(worst, 0.0);
                    self.seam.stop(stop);
                    return stopped();
                }
            };
            let spent = meter.settle(worst, asked.cost.unwrap_or(0.0));
            if let Some(limit) = self.limit
                && spent > limit
            {
                self.seam.stop(Stop::Fault(
                    FaultKind::BudgetExhausted,
                    format!(
                        "cost budget exceeded: slot `{}`'s call to `{}` cost {}, which brings the run to {} of `--max-cost` {}; raise it with `--max-cost`",
                        request.instruction,
                        self.model.name(),
                        dollars(asked.cost.unwrap_or(0.0)),
                        dollars(spent),
                        dollars(limit)
                    ),
                ));
            }
            asked.answer
        })
    }
}

impl SlotReach {
    /// The reach of `step`'s slot (of `kind`: a slot, or an SU ROUTE's choice), its tools run
    /// in `ctx`, its effects through `effects`.
    pub(crate) fn new(
        settings: &Arc<Settings>,
        prep: &Arc<Prepared>,
        step: &Step,
        ctx: ToolContext,
        effects: &Arc<Effects>,
        kind: EffectKind,
    ) -> SlotReach {
        SlotReach {
            settings: settings.clone(),
            prep: prep.clone(),
            instruction: step.id.clone(),
            allowed: step.autonomy.clone(),
            ctx,
            seam: Arc::new(Seam {
                effects: effects.clone(),
                kind,
                stopped: Mutex::new(None),
            }),
        }
    }

    /// Fills the slot of `request` with `model` through this reach ([`slot::fill`]); the
    /// journal's stop, when it gave one, stops the run.
    pub(crate) async fn fill(
        &self,
        chain: &Chain,
        request: SlotRequest,
        options: &SlotOptions,
        compiled: &Result<Compiled, String>,
    ) -> Result<SlotOutcome, Box<Stopped>> {
        // Every model of the chain asks through the seam: a failover's exchanges are journaled
        // like the first model's, so a resume replays the same failovers without asking.
        let links = chain
            .links()
            .iter()
            .map(|link| Link {
                model: Arc::new(Journaled {
                    model: link.model.clone(),
                    price: link.price,
                    limit: self.settings.max_cost,
                    live: self.settings.live.clone(),
                    seam: self.seam.clone(),
                }) as Arc<dyn Model>,
                price: link.price,
            })
            .collect();
        let journaled = Chain::new(chain.name().to_owned(), links);
        let out = slot::fill_chain_compiled(&journaled, request, self, options, compiled).await;
        match self.seam.lock().take() {
            Some(stop) => Err(Box::new(Stopped { stop, spent: out })),
            None => Ok(out),
        }
    }
}

impl SlotTools for SlotReach {
    fn call<'a>(&'a self, name: &'a str, arguments: serde_json::Value) -> SlotToolFuture<'a> {
        Box::pin(async move {
            let err =
                |error: String| serde_json::json!({"ok": false, "error": error, "output": ""});
            if self.seam.is_stopped() {
                return err(STOPPED.to_owned());
            }
            if !self.allowed.iter().any(|a| a == name) {
                return err(format!(
                    "tool `{name}` is not in this slot's autonomy.tools ({})",
                    self.allowed.join(", ")
                ));
            }
            let declared = self.prep.program.tool(name).map(|(_, t)| t);
            let Some(imp) = self.settings.tools.lookup(name, declared) else {
                return err(format!(
                    "tool `{name}` has no implementation in this runtime"
                ));
            };
            let sig_text = declared
                .and_then(|t| t.sig.clone())
                .or_else(|| ais_core::plan::builtin(name).map(|b| b.sig.to_owned()));
            let sig = sig_text
                .as_deref()
                .and_then(|s| ais_core::sig::parse(s).ok());
            let serde_json::Value::Object(given) = arguments else {
                return err(format!(
                    "the arguments of `{name}` must be a JSON object of its parameters"
                ));
            };
            let params: IndexMap<String, Value> = match &sig {
                Some(sig) => sig
                    .params
                    .iter()
                    .map(|p| {
                        (
                            p.name.clone(),
                            given.get(&p.name).map_or(Value::Null, Value::from_json),
                        )
                    })
                    .collect(),
                None => given
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::from_json(v)))
                    .collect(),
            };
            let mut args = ToolArgs { params };
            // A model-chosen path never picks where an effect lands (§4.2.2): the path
            // parameters of an ACT tool are confined under the write root, as on the DU side.
            let writes = declared.and_then(|t| t.surface.as_ref()).is_some_and(|s| {
                matches!(s, ais_core::ToolSurface::Act) || ais_core::bind::is_artifact_surface(s)
            });
            if writes {
                let is_path = |p: &str| match &sig {
                    Some(sig) => sig
                        .params
                        .iter()
                        .any(|q| q.name == p && ais_core::bind::is_path_param(q)),
                    None => ais_core::bind::is_path_name(p),
                };
                if let Err(e) = super::exec::confine_paths(name, &mut args, is_path, &self.ctx) {
                    return serde_json::json!({"ok": false, "error": e.message, "output": ""});
                }
            }
            let class = super::plan::tool_class(name, declared, &self.settings.tools);
            let called = self
                .seam
                .effects
                .run(
                    args,
                    |args| tool_spec(&self.instruction, name, class, args),
                    |args| imp.call(args, &self.ctx),
                )
                .await;
            match called {
                Ok(Ok(v)) => v.to_json(),
                Ok(Err(e)) => {
                    serde_json::json!({"ok": false, "error": e.message, "output": e.output})
                }
                Err(stop) => {
                    self.seam.stop(stop);
                    err(STOPPED.to_owned())
                }
            }
        })
    }
}

/// The prior value a GEN-EDIT revises: `writes[0]` when the step also reads it, else its
/// first read.
fn prior(step: &Step, carries: &CarryFile) -> Option<serde_json::Value> {
    if step.opcode != Opcode::GenEdit {
        return None;
    }
    let c = step
        .writes
        .first()
        .copied()
        .filter(|w| step.reads.contains(w))
        .or_else(|| step.reads.first().copied())?;
    Some(carries.get(c).to_json())
}

impl Run {
    /// The models that fill `step`'s slot (its tier's chain, else the default), or the fault
    /// that says how to name them.
    pub(crate) fn chain(&self, step: &Step) -> Result<Arc<Chain>, Stop> {
        self.settings
            .models
            .for_slot(step.tier.as_deref())
            .map_err(|why| {
                Stop::Fault(
                    FaultKind::NotRunnable,
                    format!("the model slot `{}` cannot be filled: {why}", step.id),
                )
            })
    }

    /// The reach of `step`'s slot of `kind`, run by the run itself.
    pub(crate) fn reach(&self, step: &Step, kind: EffectKind) -> SlotReach {
        SlotReach::new(
            &self.settings,
            &self.prep,
            step,
            self.ctx(),
            &self.effects,
            kind,
        )
    }

    /// Counts a slot's usage and notes it for the trace.
    pub(crate) fn account(&mut self, outcome: &SlotOutcome) {
        self.usage.add_slot(outcome);
        if self.tracing {
            self.notes.slot = Some(SlotTrace::of(outcome));
        }
    }

    /// Counts what a slot spent — also when it was stopped — and gives its outcome, or the
    /// stop.
    fn spent(&mut self, filled: Result<SlotOutcome, Box<Stopped>>) -> Result<SlotOutcome, Stop> {
        match filled {
            Ok(outcome) => {
                self.account(&outcome);
                Ok(outcome)
            }
            Err(stopped) => {
                // Its answers were paid for; it filled nothing.
                let Stopped { stop, spent } = *stopped;
                self.account(&spent);
                self.usage.slots -= 1;
                Err(stop)
            }
        }
    }

    /// Fills a step's slot and writes its value back; a slot that yields no valid value is an
    /// error value.
    pub(crate) async fn slot(&mut self, step: &Step, ops: &[SlotOperand]) -> Result<(), Stop> {
        let chain = self.chain(step)?;
        let ty = step.result.clone().unwrap_or(Type::Str);
        let (request, schema) = request(&self.prep, step, ops, &self.carries, &ty);
        if self.tracing {
            self.notes.operands = request
                .operands
                .iter()
                .map(|o| (o.name.clone(), o.value.clone()))
                .collect();
        }
        let options = SlotOptions {
            prior: prior(step, &self.carries),
            max_answer_bytes: self.settings.max_answer_bytes,
            ..SlotOptions::default()
        };
        let filled = self
            .reach(step, EffectKind::Slot)
            .fill(&chain, request, &options, &schema.compiled)
            .await;
        let outcome = self.spent(filled)?;
        match outcome.value {
            Ok(json) => self.write_back(step, Value::from_json(&json), &Return::None),
            Err(e) => {
                let message = format!(
                    "the slot `{}` yielded no valid value: {}",
                    step.id, e.message
                );
                self.fail(step, message, String::new());
            }
        }
        Ok(())
    }

    /// An SU ROUTE (§4.4.1): with one outgoing edge it transitions unconditionally; otherwise
    /// the model picks a target id given the doc and the reads.
    pub(crate) async fn choose(&mut self, step: &Step, targets: &[usize]) -> Result<Flow, Stop> {
        match targets {
            [] => return Ok(Flow::End),
            [only] => return Ok(Flow::Goto(*only)),
            _ => {}
        }
        let chain = self.chain(step)?;
        let ids: Vec<String> = targets
            .iter()
            .map(|&t| self.prep.steps[t].id.clone())
            .collect();
        let ops: Vec<SlotOperand> = step
            .reads
            .iter()
            .map(|&c| SlotOperand::Carry(self.prep.names.list[c].clone()))
            .collect();
        let request = SlotRequest {
            instruction: step.id.clone(),
            opcode: step.mnemonic().to_owned(),
            doc: step.doc.clone(),
            knowledge: step.knowledge.clone(),
            operands: operands(&self.prep, &ops, &self.carries),
            schema: serde_json::json!({"type": "string", "enum": ids}),
            choices: Some(ids.clone()),
            tools: Vec::new(),
            sibling: None,
            siblings: None,
            history: Vec::new(),
        };
        let compiled = Compiled::new(&request.schema);
        let options = SlotOptions {
            max_answer_bytes: self.settings.max_answer_bytes,
            ..SlotOptions::default()
        };
        let filled = self
            .reach(step, EffectKind::Choice)
            .fill(&chain, request, &options, &compiled)
            .await;
        let outcome = self.spent(filled)?;
        let chosen = match &outcome.value {
            Ok(v) => text_of(&Value::from_json(v)),
            Err(e) => {
                return Err(Stop::Fault(
                    FaultKind::RouteDeadEnd,
                    format!(
                        "route dead-end at model-owned `{}`: the model chose none of its edges ({}): {}",
                        step.id,
                        ids.join(", "),
                        e.message
                    ),
                ));
            }
        };
        match ids.iter().position(|id| *id == chosen) {
            Some(k) => Ok(Flow::Goto(targets[k])),
            None => Err(Stop::Fault(
                FaultKind::RouteDeadEnd,
                format!(
                    "route dead-end at model-owned `{}`: the model chose `{chosen}`, which is none of its edges' targets ({})",
                    step.id,
                    ids.join(", ")
                ),
            )),
        }
    }
}
