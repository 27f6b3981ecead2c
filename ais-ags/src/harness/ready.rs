//! Readiness and failure isolation (SPEC.md §17.3–§17.6, §5.5 `policy.on_node_failure`): before
//! each node with predecessors a native step checks that every one of them succeeded; when one
//! did not (failed, blocked, skipped, rejected, never reached), the node is skipped and the run
//! goes on to the next node of the schedule, so a skip propagates to the node's own dependents.
//! Under the default `isolate` every failure goes on that way; under `halt` a failure ends the
//! run, and only the dispositions that absorb one (`on_exhausted: skip`, `on_reject:
//! skip_dependents`) go on.

use super::{CARRY_SEP, Harness, TERMINAL_ID, judge_writes, own, step};
use crate::graph::{Graph, NodeType, OnExhausted, OnNodeFailure, OnReject};
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
pub fn halts(doc: &Graph) -> bool {
    doc.policy.as_ref().and_then(|p| p.on_node_failure) == Some(OnNodeFailure::Halt)
}

fn is_gate(doc: &Graph, nid: &str) -> bool {
    doc.node(nid).is_some_and(|n| n.kind() == NodeType::Gate)
}

/// The carry that says whether node `nid` succeeded: a task's verdict, a gate's approval.
pub fn state_carry(doc: &Graph, nid: &str) -> String {
    if is_gate(doc, nid) {
        carry_name(nid, "approved")
    } else {
        judge_writes(nid)[3].clone()
    }
}

/// Node `nid`'s ready check over the state carries its step read: `Err` names each
/// predecessor that did not succeed, and how.
pub(crate) fn check(
    hs: &Harness,
    nid: &str,
    args: &Map<String, Json>,
) -> Result<Map<String, Json>, String> {
    let doc = hs.graph;
    let mut not = Vec::new();
    for p in hs.predecessors(nid) {
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
fn absorbed(doc: &Graph, nid: &str, route: &str) -> bool {
    let node = doc.node(nid);
    let exhausted = node.and_then(|n| n.failure.as_ref()?.on_exhausted);
    let rejected = node.and_then(|n| n.gate.as_ref()?.on_reject);
    route == format!("{}{CARRY_SEP}route", own(nid, "ready"))
        || route == format!("{}{CARRY_SEP}route", own(nid, "judge"))
            && exhausted == Some(OnExhausted::Skip)
        || route == format!("{nid}{CARRY_SEP}route") && rejected == Some(OnReject::SkipDependents)
}

/// Puts a ready step before each node with predecessors (`starts`: each scheduled node's first
/// instruction) and returns, for every ROUTE, where it goes when its guard does not hold: the
/// next node's first instruction when the failure is isolated or absorbed, else the report.
pub(crate) fn insert(
    hs: &Harness,
    instructions: &mut Vec<Instruction>,
    carries: &mut Vec<Carry>,
    tools: &mut Vec<Tool>,
    starts: &mut HashMap<String, String>,
) -> HashMap<String, String> {
    let doc = hs.graph;
    let order: Vec<String> = hs
        .schedule
        .iter()
        .filter(|n| starts.contains_key(*n))
        .cloned()
        .collect();
    let mut position: HashMap<&str, usize> = HashMap::new();
    for (i, ins) in instructions.iter().enumerate() {
        position.entry(ins.id.as_str()).or_insert(i);
    }
    // Each ready step goes before the instruction it is put in front of, laid in one pass.
    let mut before: HashMap<usize, Vec<Instruction>> = HashMap::new();
    for nid in &order {
        let preds = hs.predecessors(nid);
        if preds.is_empty() {
            continue;
        }
        let Some(&at) = position.get(starts[nid].as_str()) else {
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
        before.entry(at).or_default().extend(ins);
        carries.append(&mut cs);
        tools.push(tool);
    }
    drop(position);
    if !before.is_empty() {
        let mut laid = Vec::with_capacity(instructions.len() + 2 * before.len());
        for (i, ins) in std::mem::take(instructions).into_iter().enumerate() {
            laid.extend(before.remove(&i).into_iter().flatten());
            laid.push(ins);
        }
        *instructions = laid;
    }
    let halt = halts(doc);
    let mut otherwise = HashMap::new();
    let mut position: HashMap<&str, usize> = HashMap::new();
    for (i, ins) in instructions.iter().enumerate() {
        position.entry(ins.id.as_str()).or_insert(i);
    }
    for (k, nid) in order.iter().enumerate() {
        let next = order
            .get(k + 1)
            .map_or(TERMINAL_ID.to_owned(), |n| starts[n].clone());
        let (Some(&from), Some(&to)) = (
            position.get(starts[nid].as_str()),
            position.get(next.as_str()),
        ) else {
            continue;
        };
        for ins in instructions.get(from..to).into_iter().flatten() {
            if ins.opcode == Opcode::Route && (!halt || absorbed(doc, nid, &ins.id)) {
                otherwise.insert(ins.id.clone(), next.clone());
            }
        }
    }
    otherwise
}
