//! The Stochastic Unit's seam: what a model provider implements.
//!
//! The machine builds a [`SlotRequest`] for each slot — the semantic operand (the instruction's
//! `doc` and every resident knowledge item in full), the bound operands (at most 12, the excess
//! folded into one context operand), the result's JSON Schema and the tools the slot may call —
//! and asks a [`Model`] for one [`Completion`]: either a value or tool calls. The tool loop and
//! the repair rounds (a schema-invalid value sent back with the exact validation error) are run
//! by [`slot::fill`], the same for every provider; a provider does one exchange.
//! [`slot::schema_for`] gives the schema of an AIS type; [`ScriptedModel`] answers from a file;
//! [`from_spec`] turns a `--model` spec into a model.

pub(crate) mod config;
mod conform;
pub(crate) mod live;
pub(crate) mod providers;
pub(crate) mod schema;
pub(crate) mod scripted;
mod shape;
pub(crate) mod slot;
pub(crate) mod tiers;

pub use config::{ModelRef, ModelsFile, Opener, open, open_with};
pub use live::Live;
pub use providers::{
    Env, MODEL_ENV, ProviderOptions, StrictSchema, default_spec, process_env, strict_schema,
};
pub use scripted::ScriptedModel;
pub use slot::{
    Failover, MAX_CALLS_PER_ROUND, SlotError, SlotOptions, SlotOutcome, SlotToolFuture, SlotTools,
    fill, fill_chain, schema_for,
};
pub use tiers::{Chain, Link, Models, Price, Unavailable};

use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// One operand of a slot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Operand {
    /// The carry's name (or `context` for the folded excess).
    pub name: String,
    /// The carry's declared type, as AG-IR spells it (`str`, `list[str]`, a declared name).
    pub ty: String,
    /// The carry's `doc`, when it has one.
    pub doc: Option<String>,
    /// Its value.
    pub value: serde_json::Value,
}

/// A tool a slot may call (`autonomy.tools`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The JSON Schema of its arguments (an object, one property per parameter).
    pub parameters: serde_json::Value,
}

/// One earlier turn of the same slot, sent back to the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "turn", rename_all = "snake_case")]
pub enum Turn {
    /// What the model answered before (its raw value, or its tool calls).
    Assistant {
        /// The value it returned, when it returned one.
        value: Option<serde_json::Value>,
        /// The tool calls it made, when it made some.
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one of its tool calls.
    ToolResult {
        /// The call's id.
        call_id: String,
        /// The tool's name.
        name: String,
        /// The result, as JSON (`{ok, error, output}` for a failure).
        output: serde_json::Value,
    },
    /// What the model answered before as text that held no value (not JSON): sent back as it
    /// came, before the [`Turn::Repair`] that says what is wrong with it.
    Unparsed {
        /// The text, as the model wrote it.
        text: String,
    },
    /// Its last value did not validate against the schema; the exact error, to repair it.
    Repair {
        /// The validation error.
        error: String,
    },
}

/// What a slot asks of a model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlotRequest {
    /// The instruction's id.
    pub instruction: String,
    /// Its opcode, as spelled (`GEN-FILL`, `ROUTE`, …).
    pub opcode: String,
    /// The semantic operand: the instruction's `doc`.
    pub doc: String,
    /// Every knowledge item resident on the instruction, in full: (name, content).
    pub knowledge: Vec<(String, String)>,
    /// The bound operands, at most 12 (spec §7.6, Appendix A.2).
    pub operands: Vec<Operand>,
    /// The JSON Schema of the result (the value itself, not wrapped).
    pub schema: serde_json::Value,
    /// The closed set of answers, when there is one: an enum's members, or the target ids an
    /// SU ROUTE chooses among.
    pub choices: Option<Vec<String>>,
    /// The tools the slot may call.
    pub tools: Vec<ToolSpec>,
    /// For a SPAWN sibling: its index among the siblings, from 0 (the key journals and traces
    /// use; a prompt numbers it from 1).
    pub sibling: Option<usize>,
    /// For a SPAWN sibling: how many siblings its SPAWN forks, for the prompt's "sibling 1 of
    /// 3". Not part of the request's identity (not serialized, so the journal's digest of a
    /// request is the one it was before this was kept): the index and the sub-task are.
    #[serde(skip)]
    pub siblings: Option<usize>,
    /// Earlier turns of this slot (tool results, repair requests), oldest first.
    pub history: Vec<Turn>,
}

/// A tool call a model asked for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call (made up when the provider has none).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, as the model sent them (untrusted).
    pub arguments: serde_json::Value,
}

/// What the model answered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reply {
    /// A value for the slot (untrusted: the machine validates it against the schema).
    Value {
        /// The value.
        value: serde_json::Value,
    },
    /// Tool calls to run before answering.
    ToolCalls {
        /// The calls.
        calls: Vec<ToolCall>,
    },
    /// Text that holds no value (not JSON, no answer call): repaired like a value that does
    /// not validate.
    Unparsed {
        /// The text, as the model wrote it.
        text: String,
        /// What is wrong with it.
        error: String,
    },
}

/// Token usage of one exchange, as the provider reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt (input) tokens.
    pub prompt_tokens: u64,
    /// Completion (output) tokens.
    pub completion_tokens: u64,
    /// Prompt tokens served from the provider's cache, when it says.
    pub cached_tokens: Option<u64>,
}

/// The raw request and response of one exchange, for the trace. Secrets (API keys,
/// `Authorization` headers) are never in it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Exchange {
    /// The request body sent.
    pub request: serde_json::Value,
    /// The response body received.
    pub response: serde_json::Value,
}

/// One answer of a model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    /// The value or the tool calls.
    pub reply: Reply,
    /// Token usage.
    pub usage: Usage,
    /// The raw exchange.
    pub exchange: Exchange,
}

/// Why a model gave no completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelErrorKind {
    /// The provider is not set up (a missing key, a bad model spec); found before any step.
    Config,
    /// The connection failed or the server answered 5xx past the retries.
    Transport,
    /// The request or the slot's deadline ran out.
    Timeout,
    /// The provider kept answering 429 past the retries.
    RateLimited,
    /// The provider refused the request (400/401/403), or answered something unreadable.
    Protocol,
    /// A scripted model has no response left for this slot.
    Exhausted,
}

/// A model that could not complete.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ModelError {
    /// The kind of failure.
    pub kind: ModelErrorKind,
    /// What went wrong and what to do about it.
    pub message: String,
}

impl ModelError {
    /// A failure of `kind` with `message`.
    pub fn new(kind: ModelErrorKind, message: impl Into<String>) -> Self {
        ModelError {
            kind,
            message: message.into(),
        }
    }
}

/// The future a [`Model`] call returns.
pub type ModelFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Completion, ModelError>> + Send + 'a>>;

/// A model provider for the Stochastic Unit.
pub trait Model: Send + Sync + 'static {
    /// The model's name as the user named it (`scripted:plan.json`, `openai:gpt-4o-mini`).
    fn name(&self) -> &str;
    /// True for a scripted model: its answers are canned, and every trace and report says so.
    fn is_scripted(&self) -> bool {
        false
    }
    /// Why this model cannot answer at all, when it could not be set up (a configuration's
    /// tier whose key is missing: [`tiers::Unavailable`]).
    fn unavailable(&self) -> Option<&ModelError> {
        None
    }
    /// The most completion tokens one answer may have, when the request sets a limit (Anthropic
    /// always does): with a price, what an exchange may cost at most is known before it is
    /// made, and the cost budget refuses one that may not fit.
    fn max_completion_tokens(&self) -> Option<u64> {
        None
    }
    /// One exchange: answer `request` with a value or tool calls.
    fn complete<'a>(&'a self, request: &'a SlotRequest) -> ModelFuture<'a>;
}

/// The model a spec names: `scripted:FILE.json` (a [`ScriptedModel`]), or a live provider
/// (`openai:MODEL`, `ollama:MODEL`, `anthropic:MODEL`). A spec that cannot be served is a
/// [`ModelErrorKind::Config`] error saying what to write instead — found before any step runs.
pub fn from_spec(spec: &str) -> Result<Arc<dyn Model>, ModelError> {
    let spec = spec.trim();
    if let Some(file) = spec.strip_prefix("scripted:") {
        if file.is_empty() {
            return Err(ModelError::new(
                ModelErrorKind::Config,
                "`scripted:` names no file; write `--model scripted:FILE.json`",
            ));
        }
        return Ok(Arc::new(ScriptedModel::from_file(std::path::Path::new(
            file,
        ))?));
    }
    providers::from_spec(spec)
}

/// [`from_spec`] with a live provider set up by reading variables through `env`, with
/// `options` as its bounds (a `scripted:` spec reads neither).
pub fn from_spec_with(
    spec: &str,
    env: Env<'_>,
    options: ProviderOptions,
) -> Result<Arc<dyn Model>, ModelError> {
    if spec.trim().starts_with("scripted:") {
        return from_spec(spec);
    }
    providers::from_spec_with(spec, env, options)
}

#[cfg(test)]
mod spec_tests {
    use super::*;

    #[test]
    fn specs_resolve_or_say_what_to_write() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.json");
        std::fs::write(&file, r#"{"draft": ["x"]}"#).unwrap();
        let model = from_spec(&format!("scripted:{}", file.display())).unwrap();
        assert!(model.is_scripted());
        assert!(model.name().starts_with("scripted:"));
        for (spec, needle) in [
            ("scripted:", "names no file"),
            ("openai:", "names no model"),
            ("gpt-4o", "names no provider"),
        ] {
            let err = from_spec(spec).err().unwrap();
            assert_eq!(err.kind, ModelErrorKind::Config);
            assert!(err.message.contains(needle), "{spec}: {}", err.message);
        }
    }
}
