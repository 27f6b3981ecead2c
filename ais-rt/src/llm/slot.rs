//! Filling one slot: the tool loop and the repair rounds around a [`Model`]'s exchanges, the
//! schema validation every value passes before it lands in a carry, and the opcode-specific
//! post-processing (GEN-RAW's fence stripping, GEN-EDIT's check against the prior value).

use super::schema::{self, Compiled};
use super::tiers::Chain;
use super::{Exchange, Model, ModelErrorKind, Reply, SlotRequest, ToolCall, Turn, Usage, shape};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;

/// The future a [`SlotTools`] call returns: the tool's result as JSON (`{ok: false, error,
/// output}` for a failure).
pub type SlotToolFuture<'a> = Pin<Box<dyn Future<Output = serde_json::Value> + Send + 'a>>;

/// How a slot reaches the tools its `autonomy.tools` names: the machine binds and runs each
/// call like any DU call.
pub trait SlotTools: Send + Sync {
    /// Runs tool `name` with the model's (untrusted) `arguments`.
    fn call<'a>(&'a self, name: &'a str, arguments: serde_json::Value) -> SlotToolFuture<'a>;
}

/// Bounds of one slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotOptions {
    /// Repair rounds after a schema-invalid value (default 2).
    pub max_repairs: u32,
    /// Tool rounds (default 8).
    pub max_tool_rounds: u32,
    /// The prior value a GEN-EDIT revises, when there is one.
    pub prior: Option<serde_json::Value>,
    /// The largest answer accepted, in bytes of JSON text (default
    /// [`DEFAULT_MAX_ANSWER_BYTES`]): a larger one fails the slot with an error saying so, and
    /// is not kept in the exchange.
    pub max_answer_bytes: usize,
}

/// The default of [`SlotOptions::max_answer_bytes`]: 8 MiB.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;

impl Default for SlotOptions {
    fn default() -> Self {
        SlotOptions {
            max_repairs: 2,
            max_tool_rounds: 8,
            prior: None,
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
        }
    }
}

/// Why a slot yielded no value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SlotError {
    /// What went wrong (the last validation error, the model's failure, the exhausted rounds).
    pub message: String,
    /// The kind of the model's failure when it gave no completion (a transport error, a
    /// scripted model with no response left); `None` when the answers it gave were not
    /// acceptable.
    pub model: Option<ModelErrorKind>,
}

impl SlotError {
    /// A slot whose answers were not acceptable.
    pub fn invalid(message: impl Into<String>) -> Self {
        SlotError {
            message: message.into(),
            model: None,
        }
    }
}

/// What filling a slot produced.
#[derive(Clone, Debug, PartialEq)]
pub struct SlotOutcome {
    /// The validated value, or why there is none.
    pub value: Result<serde_json::Value, SlotError>,
    /// Usage summed over the exchanges (of every model asked).
    pub usage: Usage,
    /// Every exchange, in order.
    pub exchanges: Vec<Exchange>,
    /// Repair rounds used.
    pub repairs: u32,
    /// Tool rounds used.
    pub tool_rounds: u32,
    /// The model that answered (the last one asked, when none did).
    pub model: String,
    /// True when that model is scripted.
    pub scripted: bool,
    /// The tier (the chain's name) the slot was filled from; empty for a lone model.
    pub tier: String,
    /// Each move to the next model of the chain, in order.
    pub failovers: Vec<Failover>,
    /// The cost in US dollars, when every model asked has a price.
    pub cost: Option<f64>,
}

impl SlotOutcome {
    /// An outcome with nothing in it yet, for the model named `model`.
    fn empty(model: &str, scripted: bool) -> Self {
        SlotOutcome {
            value: Ok(serde_json::Value::Null),
            usage: Usage::default(),
            exchanges: Vec::new(),
            repairs: 0,
            tool_rounds: 0,
            model: model.to_owned(),
            scripted,
            tier: String::new(),
            failovers: Vec::new(),
            cost: None,
        }
    }
}

/// A move from one model of a chain to the next: which, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failover {
    /// The model that gave no acceptable value.
    pub from: String,
    /// The model asked next.
    pub to: String,
    /// Why (the slot's error with that model).
    pub reason: String,
    /// The kind of the model's failure when it gave no completion; `None` when its answers
    /// were not acceptable.
    pub kind: Option<ModelErrorKind>,
}

/// The most tool calls run in one round; the excess get an error result instead of running.
pub const MAX_CALLS_PER_ROUND: usize = 32;

/// Fills one slot: asks `model` for a value, runs the tool calls it makes (at most
/// `options.max_tool_rounds` rounds, each call through `tools`, only the tools the request
/// names), and checks each value it gives before accepting it:
///
/// 0. nesting at most 128 lists or objects deep (as deep as `serde_json` parses);
/// 1. GEN-RAW's post-processing (a code fence around a `str` stripped, contentless list
///    elements dropped);
/// 2. for a closed set of choices (a GEN-ENUM's members, an SU ROUTE's targets), the member
///    the value names (exact, else ignoring quotes, a final period and case when exactly one
///    member matches);
/// 3. the schema's declared defaults filled in for the object properties left out;
/// 4. validation against the request's JSON Schema (draft 2020-12);
/// 5. for a GEN-EDIT with a prior value, the truncation check (see `shape`'s docs: a revision
///    that is empty, keeps less than half of a sizeable prior, or elides with a placeholder
///    line is rejected).
///
/// A value that fails a check is sent back with the exact error as a [`Turn::Repair`], at
/// most `options.max_repairs` times; then the slot fails with that error. Tool calls on a slot
/// without tools, an empty reply, and tool calls past the round limit are repaired the same
/// way. A model that gives no completion fails the slot at once. Model output is untrusted:
/// nothing in it can make this panic.
pub async fn fill(
    model: &dyn Model,
    request: SlotRequest,
    tools: &dyn SlotTools,
    options: &SlotOptions,
) -> SlotOutcome {
    let compiled = Compiled::new(&request.schema);
    fill_compiled(model, request, tools, options, &compiled).await
}

/// [`fill`] with the request's schema already compiled (the machine compiles each result
/// type's schema once per run: `schema::SchemaCache`).
pub(crate) async fn fill_compiled(
    model: &dyn Model,
    mut request: SlotRequest,
    tools: &dyn SlotTools,
    options: &SlotOptions,
    compiled: &Result<Compiled, String>,
) -> SlotOutcome {
    let mut out = SlotOutcome::empty(model.name(), model.is_scripted());
    let slot = format!("slot `{}` ({})", request.instruction, request.opcode);
    let compiled = match compiled {
        Ok(c) => c,
        Err(e) => {
            out.value = Err(SlotError::invalid(format!("{slot}: {e}")));
            return out;
        }
    };
    loop {
        let completion = match model.complete(&request).await {
            Ok(c) => c,
            Err(e) => {
                // Asked again after a rejected answer: why it was rejected is the news.
                let rejected = match request.history.last() {
                    Some(Turn::Repair { error }) => {
                        format!("its answer was rejected: {error}; asked again, ")
                    }
                    _ => String::new(),
                };
                out.value = Err(SlotError {
                    message: format!(
                        "{slot}: {rejected}the model `{}` gave no answer: {e}",
                        model.name()
                    ),
                    model: Some(e.kind),
                });
                return out;
            }
        };
        add_usage(&mut out.usage, completion.usage);
        let size = json_size(&completion.exchange.response, options.max_answer_bytes)
            .max(reply_size(&completion.reply, options.max_answer_bytes));
        if size > options.max_answer_bytes {
            let limit = options.max_answer_bytes;
            out.exchanges.push(Exchange {
                request: completion.exchange.request,
                response: serde_json::json!({
                    "$omitted": format!("an answer of more than {limit} bytes, not kept")
                }),
            });
            out.value = Err(SlotError::invalid(format!(
                "{slot}: the model's answer is larger than the limit of {limit} bytes; raise it \
                 with `--max-answer-bytes`, or ask for a shorter answer"
            )));
            return out;
        }
        out.exchanges.push(completion.exchange);
        let problem = match completion.reply {
            Reply::Value { value } => match accept(&request, compiled, options, value.clone()) {
                Ok(accepted) => {
                    out.value = Ok(accepted);
                    return out;
                }
                Err(problem) => {
                    request.history.push(Turn::Assistant {
                        value: Some(value),
                        tool_calls: Vec::new(),
                    });
                    problem
                }
            },
            Reply::Unparsed { text, error } => {
                request.history.push(Turn::Unparsed { text });
                error
            }
            Reply::ToolCalls { calls } => {
                match tool_round_problem(&request, &calls, out.tool_rounds, options) {
                    None => {
                        out.tool_rounds += 1;
                        run_tool_round(&mut request, calls, tools).await;
                        continue;
                    }
                    Some(problem) => {
                        request.history.push(Turn::Assistant {
                            value: None,
                            tool_calls: calls,
                        });
                        problem
                    }
                }
            }
        };
        if out.repairs >= options.max_repairs {
            let rounds = match out.repairs {
                1 => "1 repair round".to_owned(),
                n => format!("{n} repair rounds"),
            };
            out.value = Err(SlotError::invalid(format!(
                "{slot}: the model's answer is still not acceptable after {rounds}: {problem}"
            )));
            return out;
        }
        out.repairs += 1;
        request.history.push(Turn::Repair { error: problem });
    }
}

/// Fills one slot from a chain of models: [`fill`] with the first; when it yields no value —
/// a transport error, a 429 or 5xx past the provider's retries, a timeout, an answer still
/// invalid after the repair rounds, any failure of that model — the next model is asked,
/// afresh (the same request, no history of the one before), and the move is recorded as a
/// [`Failover`]. Usage and cost add up over every model asked; the exchanges are kept in
/// order. A slot whose schema does not compile fails without asking anyone.
pub async fn fill_chain(
    chain: &Chain,
    request: SlotRequest,
    tools: &dyn SlotTools,
    options: &SlotOptions,
) -> SlotOutcome {
    let compiled = Compiled::new(&request.schema);
    fill_chain_compiled(chain, request, tools, options, &compiled).await
}

/// [`fill_chain`] with the request's schema already compiled.
pub(crate) async fn fill_chain_compiled(
    chain: &Chain,
    request: SlotRequest,
    tools: &dyn SlotTools,
    options: &SlotOptions,
    compiled: &Result<Compiled, String>,
) -> SlotOutcome {
    let links = chain.links();
    let mut total: Option<SlotOutcome> = None;
    let mut cost = Some(0.0);
    for (i, link) in links.iter().enumerate() {
        let one = fill_compiled(
            link.model.as_ref(),
            request.clone(),
            tools,
            options,
            compiled,
        )
        .await;
        cost = match (cost, link.price) {
            (Some(sum), Some(price)) => Some(sum + price.cost(&one.usage)),
            _ if one.exchanges.is_empty() => cost,
            _ => None,
        };
        let asked_nobody =
            one.exchanges.is_empty() && one.value.as_ref().is_err_and(|e| e.model.is_none());
        let mut sum = match total.take() {
            None => one,
            Some(mut sum) => {
                add_usage(&mut sum.usage, one.usage);
                sum.exchanges.extend(one.exchanges);
                sum.repairs += one.repairs;
                sum.tool_rounds += one.tool_rounds;
                sum.value = one.value;
                sum.model = one.model;
                sum.scripted = one.scripted;
                sum
            }
        };
        sum.tier = chain.name().to_owned();
        sum.cost = cost;
        let next = links.get(i + 1);
        match (&sum.value, next) {
            (Err(e), Some(next)) if !asked_nobody => {
                tracing::warn!(
                    from = link.model.name(),
                    to = next.model.name(),
                    error = %e.message,
                    "the model gave no acceptable value; asking the next model of the chain"
                );
                sum.failovers.push(Failover {
                    from: link.model.name().to_owned(),
                    to: next.model.name().to_owned(),
                    reason: e.message.clone(),
                    kind: e.model,
                });
                total = Some(sum);
            }
            _ => return sum,
        }
    }
    total.unwrap_or_else(|| {
        let mut out = SlotOutcome::empty("", false);
        out.tier = chain.name().to_owned();
        out.value = Err(SlotError::invalid(format!(
            "slot `{}`: the model tier `{}` has no model",
            request.instruction,
            chain.name()
        )));
        out
    })
}

/// The size of a reply's values as JSON text, counted up to a little past `limit`.
fn reply_size(reply: &Reply, limit: usize) -> usize {
    match reply {
        Reply::Value { value } => json_size(value, limit),
        Reply::Unparsed { text, .. } => text.len(),
        Reply::ToolCalls { calls } => calls.iter().fold(0, |n, c| {
            if n > limit {
                n
            } else {
                n + c.name.len() + json_size(&c.arguments, limit)
            }
        }),
    }
}

/// About how many bytes `value` takes as JSON text (strings by their UTF-8 length plus
/// quotes), counting stops once past `limit`: cheap on a huge answer.
pub(crate) fn json_size(value: &serde_json::Value, limit: usize) -> usize {
    use serde_json::Value as J;
    match value {
        J::Null | J::Bool(_) => 5,
        J::Number(_) => 24,
        J::String(s) => s.len() + 2,
        J::Array(items) => items.iter().fold(2, |n, v| {
            if n > limit {
                n
            } else {
                n + 1 + json_size(v, limit)
            }
        }),
        J::Object(map) => map.iter().fold(2, |n, (k, v)| {
            if n > limit {
                n
            } else {
                n + k.len() + 4 + json_size(v, limit)
            }
        }),
    }
}

/// Why a reply of tool calls cannot be run as a tool round, if it cannot.
fn tool_round_problem(
    request: &SlotRequest,
    calls: &[ToolCall],
    rounds: u32,
    options: &SlotOptions,
) -> Option<String> {
    if calls.is_empty() {
        Some("the reply holds neither a value nor a tool call; answer with the value".to_owned())
    } else if request.tools.is_empty() {
        Some("this slot has no tools; answer with the value itself, not a tool call".to_owned())
    } else if rounds >= options.max_tool_rounds {
        Some(format!(
            "all {} tool rounds of this slot are used; answer with the value now, without tool calls",
            options.max_tool_rounds
        ))
    } else {
        None
    }
}

/// Runs one round of tool calls and records it in the request's history: the model's calls,
/// then each result. A call naming a tool the slot does not have, or past
/// [`MAX_CALLS_PER_ROUND`], gets an error result and runs nothing.
async fn run_tool_round(request: &mut SlotRequest, calls: Vec<ToolCall>, tools: &dyn SlotTools) {
    let mut results = Vec::with_capacity(calls.len());
    for (i, call) in calls.iter().enumerate() {
        let output = if i >= MAX_CALLS_PER_ROUND {
            tool_failure(format!(
                "not run: at most {MAX_CALLS_PER_ROUND} tool calls are run in one round"
            ))
        } else if request.tools.iter().any(|t| t.name == call.name) {
            tools.call(&call.name, call.arguments.clone()).await
        } else {
            let names: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
            tool_failure(format!(
                "no tool `{}` is available to this slot; its tools are: {}",
                call.name,
                names.join(", ")
            ))
        };
        results.push(Turn::ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            output,
        });
    }
    request.history.push(Turn::Assistant {
        value: None,
        tool_calls: calls,
    });
    request.history.extend(results);
}

/// The error value of a tool call that did not run.
fn tool_failure(error: String) -> serde_json::Value {
    serde_json::json!({"ok": false, "error": error, "output": ""})
}

/// The checks a value passes before it is accepted (see [`fill`]).
fn accept(
    request: &SlotRequest,
    compiled: &Compiled,
    options: &SlotOptions,
    value: serde_json::Value,
) -> Result<serde_json::Value, String> {
    shape::check_depth(&value)?;
    let mut value = match request.opcode.as_str() {
        "GEN-RAW" => shape::raw(value),
        _ => value,
    };
    if let Some(choices) = &request.choices {
        value = shape::choose(value, choices)?;
    }
    schema::apply_defaults(&request.schema, &mut value);
    compiled.check(&value)?;
    if request.opcode == "GEN-EDIT"
        && let Some(prior) = &options.prior
    {
        shape::check_edit(prior, &value)?;
    }
    Ok(value)
}

fn add_usage(total: &mut Usage, one: Usage) {
    total.prompt_tokens = total.prompt_tokens.saturating_add(one.prompt_tokens);
    total.completion_tokens = total
        .completion_tokens
        .saturating_add(one.completion_tokens);
    total.cached_tokens = match (total.cached_tokens, one.cached_tokens) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
    };
}

/// The JSON Schema (draft 2020-12) of a value of type `ty` in `program` (declared enums and
/// objects included; the built-in `outcome` too). The mapping is documented on the
/// `schema` module: primitives to their JSON types, `list[T]` to arrays with `items`, `dict`
/// to objects, a declared enum to a string `enum` (the member descriptions kept in the
/// `description`), a declared object to a closed object whose fields keep their `doc` as
/// `description` and their `default`, fields without a default required.
pub fn schema_for(program: &ais_core::Program, ty: &ais_core::Type) -> serde_json::Value {
    schema::schema_for(program, ty)
}

#[cfg(test)]
#[path = "slot_tests.rs"]
mod tests;
