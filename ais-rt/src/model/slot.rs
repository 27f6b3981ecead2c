//! Filling one slot: the tool loop and the repair rounds around a [`Model`]'s exchanges, the
//! schema validation every value passes before it lands in a carry, and the opcode-specific
//! post-processing (GEN-RAW's fence stripping, GEN-EDIT's check against the prior value).

use super::{Exchange, Model, SlotRequest, Usage};
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
}

impl Default for SlotOptions {
    fn default() -> Self {
        SlotOptions {
            max_repairs: 2,
            max_tool_rounds: 8,
            prior: None,
        }
    }
}

/// Why a slot yielded no value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SlotError {
    /// What went wrong (the last validation error, the model's failure, the exhausted rounds).
    pub message: String,
}

/// What filling a slot produced.
#[derive(Clone, Debug, PartialEq)]
pub struct SlotOutcome {
    /// The validated value, or why there is none.
    pub value: Result<serde_json::Value, SlotError>,
    /// Usage summed over the exchanges.
    pub usage: Usage,
    /// Every exchange, in order.
    pub exchanges: Vec<Exchange>,
    /// Repair rounds used.
    pub repairs: u32,
    /// Tool rounds used.
    pub tool_rounds: u32,
}

/// Fills one slot.
pub async fn fill(
    _model: &dyn Model,
    _request: SlotRequest,
    _tools: &dyn SlotTools,
    _options: &SlotOptions,
) -> SlotOutcome {
    unimplemented!("model::slot::fill is being written on the `su` branch")
}

/// The JSON Schema of a value of type `ty` in `program` (declared enums and objects included;
/// the built-in `outcome` too).
pub fn schema_for(_program: &ais_core::Program, _ty: &ais_core::model::Type) -> serde_json::Value {
    unimplemented!("model::slot::schema_for is being written on the `su` branch")
}
