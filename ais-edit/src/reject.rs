//! Rejections: the error channel of every verb, each answering "what is the correct next
//! call".

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// Why a call was rejected: one spelling each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The call's arguments do not have the shape the verb or operation takes.
    BadShape,
    /// The verb or operation does not exist.
    UnknownVerb,
    /// An address or name that no element has.
    UnknownTarget,
    /// A bare name that several elements have.
    AmbiguousTarget,
    /// The generation named is not the element's (or file's) current one.
    StaleGeneration,
    /// A handle that the instruction's view does not issue.
    UnknownHandle,
    /// An element of that name exists already.
    Collision,
    /// A rename would make a name in a guard or body mean something else.
    Capture,
    /// The element is still referred to; the references are listed.
    Referenced,
    /// A guard or CODE body does not parse or type-check in scope.
    InvalidExpression,
    /// A name is not usable as an id (empty, path characters, a keyword).
    InvalidName,
    /// The element given does not read as AG-IR.
    InvalidElement,
    /// The patch makes the program worse: findings of severity error or fatal that it did not
    /// have.
    NewFindings,
    /// The file is not AG-IR this language edits (a Rust source, another extension).
    NotAgir,
    /// The file does not read as AG-IR.
    Unreadable,
    /// The path leaves the root.
    OutsideRoot,
    /// A bound was exceeded (request size, operation count, expression nesting).
    TooLarge,
    /// Reading or writing the file failed.
    Io,
}

/// A place and what is wrong there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Diagnostic {
    /// The check or error category (`W8`, `X5`, `name_error`, …), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// `fatal`, `error` or `warn`, for a validator finding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    /// What is wrong.
    pub message: String,
    /// The element it is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// 1-based line (in the file as it would be written, or in the expression text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// 1-based character column.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
}

impl Diagnostic {
    /// A diagnostic with a message only.
    pub fn msg(message: impl Into<String>) -> Self {
        Diagnostic {
            code: None,
            severity: None,
            message: message.into(),
            at: None,
            line: None,
            column: None,
        }
    }
}

/// A complete call: the verb and its arguments, paste-ready.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Call {
    /// The verb (`status`, `help`, `query`, `view`, `patch`, or a sugar verb).
    pub tool: String,
    /// Its arguments.
    pub args: Json,
}

/// One possible next call, and why it is right.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PossibleRepair {
    /// Why this call.
    pub why: String,
    /// The call.
    pub call: Call,
}

/// A rejected call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Rejection {
    /// Always `rejected`.
    pub status: RejectedTag,
    /// The index (0 first) of the operation that failed, for a patch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op_index: Option<usize>,
    /// Why.
    pub reason: Reason,
    /// What, in words.
    pub detail: String,
    /// Where.
    pub diagnostics: Vec<Diagnostic>,
    /// Names close to an unknown one.
    pub did_you_mean: Vec<String>,
    /// Complete next calls; never the rejected call again.
    pub possible_repairs: Vec<PossibleRepair>,
}

/// The `status` of a rejection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RejectedTag {
    /// Rejected.
    Rejected,
}

impl Rejection {
    /// A rejection with a reason and a detail, and nothing else yet.
    pub fn new(reason: Reason, detail: impl Into<String>) -> Self {
        Rejection {
            status: RejectedTag::Rejected,
            op_index: None,
            reason,
            detail: detail.into(),
            diagnostics: Vec::new(),
            did_you_mean: Vec::new(),
            possible_repairs: Vec::new(),
        }
    }

    /// Adds a possible next call.
    pub fn repair(mut self, why: impl Into<String>, tool: &str, args: Json) -> Self {
        self.possible_repairs.push(PossibleRepair {
            why: why.into(),
            call: Call {
                tool: tool.to_owned(),
                args,
            },
        });
        self
    }

    /// Adds names close to an unknown one.
    pub fn suggest(mut self, names: Vec<String>) -> Self {
        self.did_you_mean = names;
        self
    }

    /// Adds a diagnostic.
    pub fn diagnostic(mut self, d: Diagnostic) -> Self {
        self.diagnostics.push(d);
        self
    }

    /// Drops every repair whose call is `rejected` itself (a repair never repeats the call it
    /// answers) and duplicates.
    pub fn without_call(mut self, rejected: &Call) -> Self {
        let mut seen: Vec<Call> = Vec::new();
        self.possible_repairs.retain(|r| {
            if r.call == *rejected || seen.contains(&r.call) {
                return false;
            }
            seen.push(r.call.clone());
            true
        });
        self
    }
}
