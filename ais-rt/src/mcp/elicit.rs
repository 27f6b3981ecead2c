//! A served run that pauses for human input (§7.5) asks the MCP client through elicitation,
//! when the client declares the capability (form mode), and resumes with the answer.
//!
//! - **A client on a protocol with sessions** (`initialize`, up to `2025-11-25`): the server
//!   sends `elicitation/create` while the call is open, and resumes the run with the answer.
//! - **A client on `2026-07-28` or later**, which forbids server-to-client requests: the call
//!   answers an `InputRequiredResult` (SEP-2322) holding the elicitation under the key
//!   [`ANSWER_KEY`], and an opaque `requestState`; the client retries the call with its
//!   answer and that state. The state names a pending pause this server keeps (at most
//!   [`MAX_PENDING`]); the client's text is never trusted for anything but that lookup.
//!
//! An answer accepted resumes the run from its handle (it may pause again, and ask again). A
//! client that declines or cancels, or one without the capability, gets the tool error that
//! names the question and how to resume (`ais resume HANDLE --answer TEXT`): the handle is
//! kept for that.

use crate::RunOutcome;
use ais_core::Program;
use indexmap::IndexMap;
use rmcp::RoleServer;
use rmcp::model::{
    CallToolResult, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
};
use rmcp::service::RequestContext;
use std::hash::BuildHasher;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The key of the one elicitation in an `InputRequiredResult`'s `inputRequests`.
pub(crate) const ANSWER_KEY: &str = "answer";

/// The most pauses a server keeps waiting for a client's retry; past it the oldest is
/// forgotten (its handle stays, for `ais resume`).
pub(crate) const MAX_PENDING: usize = 256;

/// How this call's client can be asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Asking {
    /// An `elicitation/create` request while the call is open.
    Inline,
    /// An `InputRequiredResult` the client answers by retrying the call.
    Rounds,
}

/// How the client of `context` can be asked, `None` when it declares no form elicitation.
pub(super) fn asking(context: &RequestContext<RoleServer>) -> Option<Asking> {
    let caps = context.client_capabilities()?;
    let e = caps.elicitation.as_ref()?;
    // A capability naming neither mode means form (the 2025-06-18 shape).
    if e.form.is_none() && e.url.is_some() {
        return None;
    }
    let sessions = context
        .protocol_version()
        .is_some_and(|v| v.has_initialize());
    Some(if sessions {
        Asking::Inline
    } else {
        Asking::Rounds
    })
}

/// A pause waiting for a client's retry.
#[derive(Clone, Debug)]
pub(super) struct Pending {
    /// The tool (program) the call ran.
    pub tool: String,
    /// The run's resume handle.
    pub handle: PathBuf,
    /// The carry the answer fills.
    pub carry: String,
    /// The question and how to resume, for the tool error when the client does not answer.
    pub message: String,
}

/// The pauses waiting for a retry, by their `requestState`; shared by every session.
#[derive(Clone, Debug, Default)]
pub(super) struct PendingPauses {
    /// In the order kept: the first is the oldest.
    map: Arc<Mutex<IndexMap<String, Pending>>>,
}

impl PendingPauses {
    /// Keeps `p` and returns its `requestState`: 128 random bits, hex.
    pub(crate) fn keep(&self, p: Pending) -> String {
        let random = || std::collections::hash_map::RandomState::new().hash_one(p.handle.clone());
        let state = format!("{:016x}{:016x}", random(), random());
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= MAX_PENDING {
            map.shift_remove_index(0);
        }
        map.insert(state.clone(), p);
        state
    }

    /// The pause `state` names, taken (a state answers once).
    pub(crate) fn take(&self, state: &str) -> Option<Pending> {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.shift_remove(state)
    }
}

/// The form that asks for the pause of `outcome` (its prompt as the message, one property
/// named after the carry, typed as the carry when that is a primitive type, else a string
/// read as the carry's type). `None` when the run did not pause.
pub(super) fn request(program: &Program, outcome: &RunOutcome) -> Option<ElicitRequestParams> {
    let p = outcome.pause.as_ref()?;
    let ty = program.carry(&p.carry).and_then(|(_, c)| c.ty.clone());
    let mut field = match &ty {
        Some(ty) => crate::llm::slot::schema_for(program, ty),
        None => serde_json::json!({"type": "string"}),
    };
    let primitive = field
        .get("type")
        .and_then(|t| t.as_str())
        .is_some_and(|t| matches!(t, "string" | "number" | "integer" | "boolean"));
    if !primitive {
        field = serde_json::json!({
            "type": "string",
            "description": format!("{} (as JSON)", p.prompt.trim()),
        });
    } else if let Some(o) = field.as_object_mut() {
        o.entry("description").or_insert(p.prompt.trim().into());
    }
    let schema = serde_json::json!({
        "type": "object",
        "properties": {p.carry.clone(): field},
        "required": [p.carry.clone()],
    });
    let requested_schema: ElicitationSchema =
        serde_json::from_value(schema).ok().or_else(|| {
            serde_json::from_value(serde_json::json!({
                "type": "object",
                "properties": {p.carry.clone(): {"type": "string"}},
                "required": [p.carry.clone()],
            }))
            .ok()
        })?;
    Some(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: p.question(None),
        requested_schema,
    })
}

/// The answer text for `carry` in an elicitation's result (a string as it is, any other
/// value as its JSON, read as the carry's type on resume), or why there is none.
pub(super) fn answer(carry: &str, result: &ElicitResult) -> Result<String, String> {
    match result.action {
        ElicitationAction::Accept => {}
        ElicitationAction::Decline => return Err("the client declined to answer".into()),
        ElicitationAction::Cancel => return Err("the client cancelled the question".into()),
        _ => return Err("the client answered with an action this server does not know".into()),
    }
    match result.content.as_ref().and_then(|c| c.get(carry)) {
        Some(serde_json::Value::String(s)) => Ok(s.clone()),
        Some(v) => Ok(v.to_string()),
        None => Err(format!("the client's answer has no `{carry}`")),
    }
}

/// An answer in a retry's `inputResponses` (under [`ANSWER_KEY`]), read as an elicitation's
/// result.
pub(super) fn response(
    responses: Option<&rmcp::model::InputResponses>,
) -> Result<ElicitResult, String> {
    let v = responses
        .and_then(|r| r.get(ANSWER_KEY))
        .ok_or_else(|| format!("the retry has no input response `{ANSWER_KEY}`"))?;
    serde_json::from_value(v.clone())
        .map_err(|e| format!("the input response `{ANSWER_KEY}` is not an elicitation result: {e}"))
}

/// The tool error a paused call answers when the client gives no answer: `message` (the
/// question and how to resume) and why.
pub(super) fn unanswered(message: &str, why: &str) -> CallToolResult {
    super::serve::failure(
        crate::Status::InputRequired.as_str(),
        &format!("{message} ({why})"),
    )
}
