//! Gate modes beyond `approve` (SPEC.md §7.3). A `notify` gate is fire-and-forget: instead of
//! pausing for an answer, its step — a native `SENSE` — sends its prompt (the CLI prints it on
//! stderr, `notify[G]: …`) and succeeds at once, so the run goes on without a person. A
//! `review` or `input` gate, or one with `on_reject: route`, pauses like an `approve` gate, and a
//! native `SENSE` reads its answer ([`read_answer`]) into its approval and its outputs.

use super::checkpoint::Ask;
use super::{Harness, own};
use crate::graph::{GateBlock, Graph, HumanMode, NodeType, OnReject, OnTimeout, ParamSpec};
use crate::translate::{CARRY_SEP, carry_name};
use ais_core::{Instruction, Tool, ToolSurface};
use indexmap::IndexMap;
use serde_json::{Map, Value as Json, json};

/// The gate block of node `nid`, when it is a gate that has one.
fn block<'g>(doc: &'g Graph, nid: &str) -> Option<&'g GateBlock> {
    doc.node(nid)?.gate.as_ref()
}

/// The gate mode of node `nid` (`approve` when unset).
pub fn mode(doc: &Graph, nid: &str) -> HumanMode {
    block(doc, nid).map_or(HumanMode::Approve, |g| g.mode)
}

/// The gates of the graph for which `which` holds, in the schedule's order.
fn gates_where(hs: &Harness, which: impl Fn(&str) -> bool) -> Vec<String> {
    hs.schedule
        .iter()
        .filter(|n| hs.graph.node(n).is_some_and(|g| g.kind() == NodeType::Gate) && which(n))
        .cloned()
        .collect()
}

/// The notify gates of the graph, in the schedule's order.
pub(crate) fn notify_gates(hs: &Harness) -> Vec<String> {
    gates_where(hs, |n| mode(hs.graph, n) == HumanMode::Notify)
}

/// The native tool a notify gate `nid` calls.
pub fn notify_tool(nid: &str) -> String {
    own(nid, "notify")
}

/// Lowers each notify gate: its `ask_user` step becomes a call of [`notify_tool`], writing the
/// answer `notified` and the approval itself, so the gate's verdict over an answer goes.
pub(crate) fn lower_notify(
    hs: &Harness,
    instructions: &mut Vec<Instruction>,
    tools: &mut Vec<Tool>,
) {
    for nid in notify_gates(hs) {
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
            sig: Some(super::native_sig(
                std::slice::from_ref(&prompt),
                &[answer.clone(), approved.clone()],
            )),
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

/// The gates whose verdict is the native step [`answer_tool`] instead of the import's CODE: a
/// `review` gate (its answer may edit outputs), an `input` gate (its answer is the values of
/// `gate.collect`), any gate with `on_reject: route` (it records its `decision`), and one whose
/// timeout does not hold (its answer may come too late, [`super::checkpoint::timeout`]).
pub(crate) fn answered_gates(hs: &Harness) -> Vec<String> {
    let doc = hs.graph;
    gates_where(hs, |n| {
        let mode = mode(doc, n);
        matches!(mode, HumanMode::Review | HumanMode::Input)
            || routes(doc, n)
            || (mode != HumanMode::Notify && timeout(doc, n).is_some())
    })
}

/// The timeout of gate `nid` ([`super::checkpoint::timeout`]).
fn timeout(doc: &Graph, nid: &str) -> Option<(f64, OnTimeout)> {
    super::checkpoint::timeout(doc, block(doc, nid).map(|g| g as &dyn Ask))
}

fn routes(doc: &Graph, nid: &str) -> bool {
    block(doc, nid).and_then(|g| g.on_reject) == Some(OnReject::Route)
}

/// The native tool that reads gate `nid`'s answer.
pub fn answer_tool(nid: &str) -> String {
    own(nid, "answer")
}

/// The outputs gate `nid`'s answer may set, by name: `gate.collect` (input), the declared
/// `outputs` (review: the edits), and `decision` with `on_reject: route`.
pub(crate) fn answer_outputs(doc: &Graph, nid: &str) -> Vec<String> {
    let node = doc.node(nid);
    let mut names: Vec<String> = match mode(doc, nid) {
        HumanMode::Input => block(doc, nid)
            .and_then(|g| g.collect.as_ref())
            .map(|c| c.keys().cloned().collect())
            .unwrap_or_default(),
        HumanMode::Review => node
            .into_iter()
            .flat_map(|n| n.output_names())
            .cloned()
            .collect(),
        _ => Vec::new(),
    };
    if routes(doc, nid) && !names.iter().any(|n| n == "decision") {
        names.push("decision".into());
    }
    names
}

/// Lowers each [`answered_gates`] gate: the `ask_user` step writes only the answer, and the
/// verdict becomes a call of [`answer_tool`] writing the approval and the outputs.
pub(crate) fn lower_answers(
    hs: &Harness,
    instructions: &mut Vec<Instruction>,
    carries: &mut Vec<ais_core::Carry>,
    tools: &mut Vec<Tool>,
) {
    let doc = hs.graph;
    for nid in answered_gates(hs) {
        let answer = carry_name(&nid, "answer");
        let verdict_id = format!("{nid}{CARRY_SEP}verdict");
        let mut writes = vec![carry_name(&nid, "approved"), own(&nid, "gate")];
        writes.extend(
            answer_outputs(doc, &nid)
                .iter()
                .map(|o| carry_name(&nid, o)),
        );
        if let Some(ask) = instructions.iter_mut().find(|i| i.id == nid) {
            ask.writes = vec![answer.clone()];
        }
        let mut reads = vec![answer.clone()];
        if timeout(doc, &nid).is_some()
            && let Some(at) = instructions.iter().position(|i| i.id == nid)
        {
            let (clock, mut cs, tool) = super::checkpoint::clock(&nid);
            reads.push(cs[0].name.clone());
            instructions.insert(at, clock);
            carries.append(&mut cs);
            tools.push(tool);
        }
        let Some(verdict) = instructions.iter_mut().find(|i| i.id == verdict_id) else {
            continue;
        };
        let name = answer_tool(&nid);
        verdict.opcode = ais_core::Opcode::Sense;
        verdict.body = None;
        verdict.tool = Some(name.clone());
        verdict.reads = reads.clone();
        verdict.writes = writes.clone();
        for w in &writes {
            match carries.iter_mut().find(|c| &c.name == w) {
                Some(c) => c.produced_by = Some(verdict_id.clone()),
                None => carries.push(ais_core::Carry {
                    name: w.clone(),
                    ty: Some(ais_core::Type::Any),
                    produced_by: Some(verdict_id.clone()),
                    doc: Some(format!("What gate `{nid}`'s answer sets.")),
                    ..ais_core::Carry::default()
                }),
            }
        }
        tools.push(Tool {
            name,
            sig: Some(super::native_sig(&reads, &writes)),
            surface: Some(ToolSurface::Sense),
            doc: Some(format!(
                "Read gate `{nid}`'s answer (native, registered by `ais run`)."
            )),
            ..Tool::default()
        });
    }
}

/// What one answer decides (a gate's or a checkpoint's, SPEC.md §7.3, §15).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Decision {
    /// Whether it lets the node go on.
    pub approved: bool,
    /// The human event's outcome: `approved`, `rejected`, `edited`, `provided`, `timed_out`.
    pub outcome: &'static str,
    /// Why, when the answer was not taken as it is.
    pub note: Option<String>,
    /// The outputs it sets: a review's edits, an input's collected values.
    pub values: Map<String, Json>,
    /// An `on_timeout: escalate` reached its operator.
    pub escalated: bool,
}

/// What the answer `text` decides for a `mode` (`approve`, `review`, `input`): `approve`: an
/// approving word; `review`: that, or a JSON object of edits to the `declared` outputs
/// (approval with edits); `input`: a JSON object of the `collect` values — or the bare value
/// when there is one — each checked against its spec (a missing required one, or one outside
/// its `type`, `enum` or `schema`, rejects).
pub(crate) fn decide(
    mode: HumanMode,
    collect: &IndexMap<String, ParamSpec>,
    declared: &[String],
    text: &str,
) -> Decision {
    let text = text.trim();
    let word = matches!(
        text.to_lowercase().as_str(),
        "approve" | "approved" | "yes" | "y" | "ok"
    );
    let object = serde_json::from_str::<Json>(text)
        .ok()
        .and_then(|v| v.as_object().cloned());
    let mut d = Decision::default();
    d.approved = match mode {
        HumanMode::Input => {
            d.outcome = "provided";
            let supplied = object.unwrap_or_else(|| {
                let only = collect.keys().next().cloned().unwrap_or_default();
                let v = serde_json::from_str(text).unwrap_or(Json::String(text.to_owned()));
                Map::from_iter([(only, v)])
            });
            let mut why: Vec<String> = supplied
                .iter()
                .filter_map(|(k, v)| {
                    let ty = collect.get(k)?.ty.as_str();
                    (!super::judge::fits(ty, v))
                        .then(|| format!("value `{k}` is not of type `{ty}`: {v}"))
                })
                .collect();
            match super::inputs::bind_specs(collect, &supplied, "value") {
                Ok(bound) if why.is_empty() => d.values = bound,
                Ok(_) => {}
                Err(errors) => why.extend(errors.into_iter().map(|(_, m)| m)),
            }
            d.note = (!why.is_empty()).then(|| why.join("; "));
            why.is_empty()
        }
        HumanMode::Review => match object {
            Some(edits) if !edits.is_empty() && edits.keys().all(|k| declared.contains(k)) => {
                d.values = edits;
                d.outcome = "edited";
                true
            }
            Some(edits) => {
                let names: Vec<&String> = edits.keys().filter(|k| !declared.contains(k)).collect();
                d.note = Some(format!(
                    "the edit names outputs this node does not declare: {names:?}"
                ));
                false
            }
            _ => word,
        },
        _ => word,
    };
    if !d.approved || d.outcome.is_empty() {
        d.outcome = if d.approved { "approved" } else { "rejected" };
    }
    d
}

/// The decision of an answer that came after its time ran out (`timeout` seconds, SPEC.md §15),
/// by `on_timeout`: `fail` rejects; `approve` approves; `escalate` tells the operator (the CLI
/// prints it) and — no one taking it over — rejects. None for `hold` (the answer is taken).
pub(crate) fn timed_out(on_timeout: OnTimeout, timeout: f64, waited: f64) -> Option<Decision> {
    if on_timeout == OnTimeout::Hold || waited <= timeout {
        return None;
    }
    let late = format!("no answer within {timeout}s (it came after {waited:.0}s)");
    let (approved, then) = match on_timeout {
        OnTimeout::Approve => (true, "approved by `on_timeout: approve`"),
        OnTimeout::Escalate => (
            false,
            "escalated to the operator by `on_timeout: escalate`; no one took it over",
        ),
        OnTimeout::Fail | OnTimeout::Hold => (false, "rejected by `on_timeout: fail`"),
    };
    Some(Decision {
        approved,
        outcome: "timed_out",
        note: Some(format!("{late}: {then}")),
        values: Map::new(),
        escalated: on_timeout == OnTimeout::Escalate,
    })
}

/// What gate `nid`'s answer decides (`decide`, or `timed_out` past its timeout): the
/// approval (for `on_reject: route`, whether the run goes on: always), and its outputs.
pub fn read_answer(doc: &Graph, nid: &str, args: &Map<String, Json>) -> Map<String, Json> {
    let text = args
        .get(&carry_name(nid, "answer"))
        .and_then(Json::as_str)
        .unwrap_or_default();
    let declared = answer_outputs(doc, nid);
    let empty = IndexMap::new();
    let collect = block(doc, nid)
        .and_then(|g| g.collect.as_ref())
        .unwrap_or(&empty);
    let mode = mode(doc, nid);
    let spec = block(doc, nid).map(|g| g as &dyn Ask);
    let d = super::checkpoint::late(doc, spec, args.get(&own(nid, "asked")))
        .unwrap_or_else(|| decide(mode, collect, &declared, text));
    let mut values = d.values;
    let mut out = Map::new();
    out.insert(
        own(nid, "gate"),
        json!({"mode": mode, "outcome": d.outcome, "note": d.note, "escalated": d.escalated}),
    );
    if routes(doc, nid) {
        values.insert(
            "decision".into(),
            json!(if d.approved { "approved" } else { "rejected" }),
        );
    }
    out.insert(
        carry_name(nid, "approved"),
        json!(d.approved || routes(doc, nid)),
    );
    for name in declared {
        out.insert(
            carry_name(nid, &name),
            values.get(&name).cloned().unwrap_or(Json::Null),
        );
    }
    out
}

/// The escalation a judge's writes `out` (of node `nid`) raise, when its node exhausted its
/// attempts under `on_exhausted: escalate`: the text the operator is shown — the node, its
/// attempts and what failed in the last one (§14.2: `failed_criteria` and `diagnostics`).
pub fn escalation(nid: &str, out: &Map<String, Json>) -> Option<String> {
    let verdict = out.get(&super::judge_writes(nid)[3])?;
    if verdict.get("escalated") != Some(&json!(true)) {
        return None;
    }
    let attempts = verdict["attempts"].as_array().map_or(0, Vec::len);
    let last = verdict["attempts"].as_array().and_then(|a| a.last());
    let mut text = format!("node `{nid}` did not succeed in {attempts} attempt(s)");
    if let Some(e) = last.and_then(|a| a["error"].as_str()) {
        text.push_str(&format!(": {e}"));
    }
    for r in last
        .and_then(|a| a["success"]["results"].as_array())
        .into_iter()
        .flatten()
        .filter(|r| r["passed"] == false && r["severity"] == "required")
    {
        let evidence = r["evidence"].as_str().or(r["error"].as_str()).unwrap_or("");
        text.push_str(&format!(
            "; `{}` failed ({evidence})",
            r["id"].as_str().unwrap_or("?")
        ));
    }
    Some(text)
}
