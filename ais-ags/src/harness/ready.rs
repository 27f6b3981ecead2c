//! Readiness and failure isolation (SPEC.md §17.3–§17.6, §5.5 `policy.on_node_failure`): before
//! each node with predecessors a native step checks that every one of them succeeded; when one
//! did not (failed, blocked, skipped, rejected, never reached), the node is skipped and the run
//! goes on to the next node of the schedule, so a skip propagates to the node's own dependents.
//! Under the default `isolate` every failure goes on that way; under `halt` a failure ends the
//! run, and only the dispositions that absorb one (`on_exhausted: skip`, `on_reject:
//! skip_dependents`) go on.

use super::{CARRY_SEP, TERMINAL_ID, judge_writes, own, step};
use crate::translate::carry_name;
use ais_core::{Carry, Instruction, Opcode, Tool};
use serde_json::{Map, Value as Json};
use std::collections::HashMap;

/// The carries node `nid`'s ready step writes: (nothing), whether it may run, why not.
pub fn ready_writes(nid: &str) -> [String; 3] {
    [
        own(nid, "ready"),
        own(nid, "ready_ok"),
        own(nid, "ready_error"),
    ]
}

/// Whether the graph says `policy.on_node_failure: halt` (the default is `isolate`).
pub fn halts(doc: &Json) -> bool {
    doc.pointer("/policy/on_node_failure")
        .and_then(Json::as_str)
        == Some("halt")
}

/// The nodes with an effective edge into `nid` (`depends_on` and `edges`), in schedule order.
pub fn predecessors(doc: &Json, nid: &str) -> Vec<String> {
    let mut from: Vec<String> = doc
        .pointer(&format!("/nodes/{nid}/depends_on"))
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(|d| d.as_str().map(str::to_owned))
        .collect();
    for e in doc
        .get("edges")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        if e.get("to").and_then(Json::as_str) == Some(nid)
            && let Some(f) = e.get("from").and_then(Json::as_str)
        {
            from.push(f.to_owned());
        }
    }
    crate::translate::schedule_json(doc)
        .into_iter()
        .filter(|id| from.contains(id))
        .collect()
}

fn is_gate(doc: &Json, nid: &str) -> bool {
    doc.pointer(&format!("/nodes/{nid}/type"))
        .and_then(Json::as_str)
        == Some("gate")
}

/// The carry that says whether node `nid` succeeded: a task's verdict, a gate's approval.
pub fn state_carry(doc: &Json, nid: &str) -> String {
    if is_gate(doc, nid) {
        carry_name(nid, "approved")
    } else {
        judge_writes(nid)[3].clone()
    }
}

/// Node `nid`'s ready check over the state carries its step read: `Err` names each
/// predecessor that did not succeed, and how.
pub fn check(doc: &Json, nid: &str, args: &Map<String, Json>) -> Result<Map<String, Json>, String> {
    let mut not = Vec::new();
    for p in predecessors(doc, nid) {
        let state = args.get(&state_carry(doc, &p)).unwrap_or(&Json::Null);
        let how = if is_gate(doc, &p) {
            match state {
                Json::Bool(true) => continue,
                Json::Bool(false) => "was rejected",
                _ => "was not reached",
            }
        } else {
            match state.get("status").and_then(Json::as_str) {
                Some("succeeded") => continue,
                Some("skipped") => "was skipped",
                Some(_) => "failed",
                None => "did not run",
            }
        };
        not.push(format!("`{p}` {how}"));
    }
    if not.is_empty() {
        Ok(Map::new())
    } else {
        Err(format!("it depends on {}", not.join(" and ")))
    }
}

/// Whether a failure at route `route` of node `nid` is absorbed (the run goes on under `halt`
/// too): an exhausted task with `on_exhausted: skip`, a rejected gate with `on_reject:
/// skip_dependents`, and the node's own ready check (a skip is no failure).
fn absorbed(doc: &Json, nid: &str, route: &str) -> bool {
    let node = doc.pointer(&format!("/nodes/{nid}")).unwrap_or(&Json::Null);
    let text = |p: &str| node.pointer(p).and_then(Json::as_str);
    route == format!("{}{CARRY_SEP}route", own(nid, "ready"))
        || route == format!("{}{CARRY_SEP}route", own(nid, "judge"))
            && text("/failure/on_exhausted") == Some("skip")
        || route == format!("{nid}{CARRY_SEP}route")
            && text("/gate/on_reject") == Some("skip_dependents")
}

/// Puts a ready step before each node with predecessors (`starts`: each scheduled node's first
/// instruction) and returns, for every ROUTE, where it goes when its guard does not hold: the
/// next node's first instruction when the failure is isolated or absorbed, else the report.
pub fn insert(
    doc: &Json,
    instructions: &mut Vec<Instruction>,
    carries: &mut Vec<Carry>,
    tools: &mut Vec<Tool>,
    starts: &mut HashMap<String, String>,
) -> HashMap<String, String> {
    let order: Vec<String> = crate::translate::schedule_json(doc)
        .into_iter()
        .filter(|n| starts.contains_key(n))
        .collect();
    for nid in &order {
        let preds = predecessors(doc, nid);
        if preds.is_empty() {
            continue;
        }
        let Some(at) = instructions.iter().position(|i| i.id == starts[nid]) else {
            continue;
        };
        let reads = preds.iter().map(|p| state_carry(doc, p)).collect();
        let (ins, mut cs, tool) = step(
            &own(nid, "ready"),
            reads,
            &ready_writes(nid),
            &format!("Check that every node `{nid}` depends on succeeded, else skip it"),
        );
        starts.insert(nid.clone(), ins[0].id.clone());
        instructions.splice(at..at, ins);
        carries.append(&mut cs);
        tools.push(tool);
    }
    let halt = halts(doc);
    let mut otherwise = HashMap::new();
    let at = |id: &str| instructions.iter().position(|i| i.id == id);
    for (k, nid) in order.iter().enumerate() {
        let next = order
            .get(k + 1)
            .map_or(TERMINAL_ID.to_owned(), |n| starts[n].clone());
        let (Some(from), Some(to)) = (at(&starts[nid]), at(&next)) else {
            continue;
        };
        for ins in &instructions[from..to] {
            if ins.opcode == Opcode::Route && (!halt || absorbed(doc, nid, &ins.id)) {
                otherwise.insert(ins.id.clone(), next.clone());
            }
        }
    }
    otherwise
}
