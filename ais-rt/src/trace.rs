//! The trace: one event per step (spec §10.5).
//!
//! The machine emits a [`StepEvent`] for every instruction it executes; a [`TraceSink`] takes
//! them — to `tracing`, to a JSON Lines file (`ais run --trace FILE`), or nowhere. A slot's event
//! carries the full request and the raw and parsed response. No secret (an API key, an
//! `Authorization` header) is ever in an event: providers strip them from the [`Exchange`]s they
//! return, and sinks never add them.

use crate::model::{Exchange, Usage};
use serde::Serialize;

/// What one step did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepEvent {
    /// The step's number in the run, from 1.
    pub step: u64,
    /// The instruction's id.
    pub instruction: String,
    /// Its opcode, as spelled.
    pub opcode: String,
    /// The unit that executed it: `code` or `model`.
    pub unit: &'static str,
    /// For a SPAWN sibling: its index.
    pub sibling: Option<usize>,
    /// The bound operands: (parameter or carry name, value).
    pub operands: Vec<(String, serde_json::Value)>,
    /// The values written back: (carry, value).
    pub written: Vec<(String, serde_json::Value)>,
    /// The tool that ran, if one did.
    pub tool: Option<String>,
    /// For a slot: its exchanges, parsed value, repairs and usage.
    pub slot: Option<SlotTrace>,
    /// The error value or fault message of this step, if it failed.
    pub error: Option<String>,
    /// When the step started, in milliseconds since the Unix epoch.
    pub started_ms: u64,
    /// How long it took, in microseconds.
    pub elapsed_us: u64,
}

/// What a slot exchanged with its model.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SlotTrace {
    /// The model's name (`scripted:…` for a scripted model).
    pub model: String,
    /// True when the model is scripted.
    pub scripted: bool,
    /// Every exchange of the slot (tool rounds and repair rounds included), in order.
    pub exchanges: Vec<Exchange>,
    /// The value that landed, after validation.
    pub parsed: Option<serde_json::Value>,
    /// Repair rounds used.
    pub repairs: u32,
    /// Tool rounds used.
    pub tool_rounds: u32,
    /// Token usage summed over the exchanges.
    pub usage: Usage,
}

/// Where step events go.
pub trait TraceSink: Send + Sync {
    /// Takes one event.
    fn event(&self, event: &StepEvent);
}

/// A sink that drops every event (tracing off).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTrace;

impl TraceSink for NoTrace {
    fn event(&self, _event: &StepEvent) {}
}
