//! Gate modes beyond `approve` (SPEC.md §7.3). A `notify` gate is fire-and-forget: instead of
//! pausing for an answer, its step — a native `SENSE` — sends its prompt (the CLI prints it on
//! stderr, `notify[G]: …`) and succeeds at once, so the run goes on without a person.

use super::own;
use crate::translate::{CARRY_SEP, carry_name};
use ais_core::{Instruction, Tool, ToolSurface};
use serde_json::{Map, Value as Json, json};

/// The gate mode of node `nid` (`approve` when unset).
pub fn mode<'d>(doc: &'d Json, nid: &str) -> &'d str {
    doc.pointer(&format!("/nodes/{nid}/gate/mode"))
        .and_then(Json::as_str)
        .unwrap_or("approve")
}

/// The notify gates of `doc`, in the schedule's order.
pub fn notify_gates(doc: &Json) -> Vec<String> {
    crate::schedule(doc)
        .into_iter()
        .filter(|n| {
            doc.pointer(&format!("/nodes/{n}/type"))
                .and_then(Json::as_str)
                == Some("gate")
                && mode(doc, n) == "notify"
        })
        .collect()
}

/// The native tool a notify gate `nid` calls.
pub fn notify_tool(nid: &str) -> String {
    own(nid, "notify")
}

/// Lowers each notify gate: its `ask_user` step becomes a call of [`notify_tool`], writing the
/// answer `notified` and the approval itself, so the gate's verdict over an answer goes.
pub fn lower_notify(doc: &Json, instructions: &mut Vec<Instruction>, tools: &mut Vec<Tool>) {
    for nid in notify_gates(doc) {
        let name = notify_tool(&nid);
        let (prompt, answer, approved) = (
            carry_name(&nid, "prompt"),
            carry_name(&nid, "answer"),
            carry_name(&nid, "approved"),
        );
        let Some(ask) = instructions.iter_mut().find(|i| i.id == nid) else {
            continue;
        };
        ask.tool = Some(name.clone());
        ask.reads = vec![prompt.clone()];
        ask.writes = vec![answer.clone(), approved.clone()];
        ask.doc = Some(format!("Notify gate `{nid}`'s audience; it does not wait."));
        instructions.retain(|i| i.id != format!("{nid}{CARRY_SEP}verdict"));
        tools.push(Tool {
            name: name.clone(),
            sig: Some(format!("({prompt}) -> ({answer}, {approved})")),
            surface: Some(ToolSurface::Sense),
            doc: Some(format!(
                "Send gate `{nid}`'s notification (native, registered by `ais run`)."
            )),
            ..Tool::default()
        });
    }
}

/// What notify gate `nid`'s step writes: the answer `notified` and the approval.
pub fn notified(nid: &str) -> Map<String, Json> {
    let mut out = Map::new();
    out.insert(carry_name(nid, "answer"), json!("notified"));
    out.insert(carry_name(nid, "approved"), json!(true));
    out
}

/// The notification a call of `tool` sends, when it is a notify gate's: its prompt.
pub fn notice(tool: &str, args: &Map<String, Json>) -> Option<(String, String)> {
    let nid = super::owner_of(tool, "notify")?;
    let prompt = args
        .get(&carry_name(&nid, "prompt"))
        .and_then(Json::as_str)
        .unwrap_or_default();
    let text = prompt.trim().trim_end_matches("(approve/reject)").trim();
    Some((nid, text.to_owned()))
}
