//! [`OutcomeValue`]: the built-in `outcome` object type (spec §10.2) as a Rust type.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The value a failed (or succeeded) tool or program yields for guards to route on: the
/// built-in object type `outcome` (`ok`, `error`, `output`, `value`). A carry typed `outcome`
/// holds it; a tool parameter typed `OutcomeValue` receives it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct OutcomeValue {
    /// True when the step succeeded.
    pub ok: bool,
    /// What went wrong, empty on success.
    pub error: String,
    /// What the step printed or produced as text.
    pub output: String,
    /// The step's result value, when it has one.
    pub value: serde_json::Value,
}
