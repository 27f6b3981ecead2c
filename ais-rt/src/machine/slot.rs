//! The Stochastic Unit's work: a slot request built from the step (§2.2: the doc and every
//! resident knowledge item in full, the operands capped per §7.6, the result's JSON Schema, the
//! tool surface), filled through `model::slot::fill`; an SU ROUTE's choice among its edges.

use super::carries::{CarryFile, Lookup};
use super::exec::text_of;
use super::plan::{Prepared, Step};
use super::{Flow, Run, Settings, Stop};
use crate::model::schema::SlotSchema;
use crate::model::slot::{self, SlotOptions, SlotOutcome, SlotToolFuture, SlotTools};
use crate::model::{Chain, Operand, SlotRequest, ToolSpec};
use crate::report::FaultKind;
use crate::tools::{ToolArgs, ToolContext};
use crate::trace::SlotTrace;
use ais_core::bind::SlotOperand;
use ais_core::sig::Return;
use ais_core::{Opcode, Type, TypeKind, Value};
use indexmap::IndexMap;
use std::sync::Arc;

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
                        .map_or_else(|| "any".to_owned(), |t| t.to_string()),
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

/// The slot's reach into the Deterministic Unit: only the tools its `autonomy.tools` names,
/// each bound from the model's (untrusted) arguments by parameter name and run like any DU
/// call; a failure comes back as `{ok: false, error, output}`.
pub(crate) struct SlotReach {
    pub settings: Arc<Settings>,
    pub prep: Arc<Prepared>,
    pub allowed: Vec<String>,
    pub ctx: ToolContext,
}

impl SlotTools for SlotReach {
    fn call<'a>(&'a self, name: &'a str, arguments: serde_json::Value) -> SlotToolFuture<'a> {
        Box::pin(async move {
            let err =
                |error: String| serde_json::json!({"ok": false, "error": error, "output": ""});
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
            match imp.call(args, &self.ctx).await {
                Ok(v) => v.to_json(),
                Err(e) => serde_json::json!({"ok": false, "error": e.message, "output": e.output}),
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

    pub(crate) fn reach(&self, step: &Step, ctx: ToolContext) -> SlotReach {
        SlotReach {
            settings: self.settings.clone(),
            prep: self.prep.clone(),
            allowed: step.autonomy.clone(),
            ctx,
        }
    }

    /// Counts a slot's usage and notes it for the trace.
    pub(crate) fn account(&mut self, outcome: &SlotOutcome) {
        self.usage.add_slot(outcome);
        if self.tracing {
            self.notes.slot = Some(SlotTrace::of(outcome));
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
        let reach = self.reach(step, self.ctx());
        let spec = super::durable::slot_spec(crate::journal::EffectKind::Slot, step, &request);
        let mut scope = self.scope();
        let outcome = super::durable::guard(
            scope.as_mut(),
            spec,
            slot::fill_chain_compiled(&chain, request, &reach, &options, &schema.compiled),
        )
        .await;
        self.unscope(scope);
        let outcome = outcome?;
        self.account(&outcome);
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
            history: Vec::new(),
        };
        let reach = self.reach(step, self.ctx());
        let spec = super::durable::slot_spec(crate::journal::EffectKind::Choice, step, &request);
        let mut scope = self.scope();
        let outcome = super::durable::guard(
            scope.as_mut(),
            spec,
            slot::fill_chain(
                &chain,
                request,
                &reach,
                &SlotOptions {
                    max_answer_bytes: self.settings.max_answer_bytes,
                    ..SlotOptions::default()
                },
            ),
        )
        .await;
        self.unscope(scope);
        let outcome = outcome?;
        self.account(&outcome);
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
