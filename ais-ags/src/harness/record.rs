//! The run record of a run (SPEC.md §20, `agentic-graph-run-1.0.schema.json`), rebuilt from
//! what the runtime reported: each task node's verdict (its attempts, criterion results and
//! outputs, written by its judge), each gate's answer, the instruction a pause or a fault
//! stopped at.

use super::{human, inputs, judge_writes};
use crate::graph::{Graph, HumanMode, Node, NodeType, OnReject};
use crate::run::{CLAIMED_LEVEL, Ended, Ran, SUPPORTED_FEATURES, rfc3339};
use crate::translate::carry_name;
use serde_json::{Map, Value as Json, json};

/// Where the walk through the schedule stands.
struct Walk<'a> {
    doc: &'a Graph,
    ran: &'a Ran<'a>,
    /// When the last node before this one finished (a node starts when it does).
    last_finished: Json,
    /// Why the nodes from here on did not run, once a node failed.
    halted: Option<String>,
    diagnostics: Vec<Json>,
    any_failed: bool,
    /// A node ended `succeed_degraded` (the run is at best `partial`).
    degraded: bool,
    /// `policy.on_node_failure: halt`: a failure skips every later node.
    halt: bool,
    /// Whether the walk has passed the node a pause or a fault stopped at.
    past_stop: bool,
}

impl Walk<'_> {
    /// Whether the run stopped (paused or faulted) at one of the instructions of node `id`.
    fn stopped_here(&self, id: &str) -> bool {
        self.ran.stopped_at.is_some_and(|s| {
            // The node's own instructions are named by its id, the harness's by the id as
            // an identifier (`crate::translate::ident`).
            let named = crate::translate::ident(id);
            s == id || s.starts_with(&format!("{id}__")) || s.starts_with(&format!("{named}__"))
        })
    }

    /// The state of a node no verdict or answer decides: awaiting its human, failed where the
    /// run faulted, else not reached (a node before a pause or a fault has its verdict in the
    /// carries written by then, [`Ran::report`], so it is never guessed here).
    fn unfinished(&mut self, id: &str, nr: &mut Json) {
        let here = self.stopped_here(id);
        let stopped = self.ran.stopped_at.is_some();
        nr["status"] = json!(if here && self.ran.status == Ended::AwaitingHuman {
            "awaiting_human"
        } else if here || (self.ran.status != Ended::Ok && !stopped && !self.past_stop) {
            "failed"
        } else {
            "pending"
        });
        self.past_stop |= here || nr["status"] == "failed";
        if nr["status"] == "failed" {
            self.fail(id, "the run faulted here");
        }
    }

    fn fail(&mut self, id: &str, why: &str) {
        self.any_failed = true;
        if self.halt {
            self.halted = Some(format!(
                "node `{id}` failed ({why}); `policy.on_node_failure: halt` stops the run"
            ));
        }
    }

    /// Whether node `id`'s ready check skipped it (a node it depends on did not succeed).
    fn skipped(&self, id: &str, nr: &mut Json) -> bool {
        let [_, ok, error] = super::ready::ready_writes(id);
        if self.ran.report.get(&ok) != Some(&json!(false)) {
            return false;
        }
        let why = self.ran.report.get(&error).and_then(Json::as_str);
        nr["status"] = json!("skipped");
        nr["skip_reason"] = json!(why.unwrap_or("a node it depends on did not succeed"));
        true
    }

    /// The node's checkpoint answers as human events; true when one did not let it go on
    /// (a rejection, or a late answer under `on_timeout: fail` or `escalate`).
    fn checkpoints(&mut self, id: &str, node: &Node, nr: &mut Json) -> bool {
        let mut events = Vec::new();
        let mut rejected = false;
        let at = json!(rfc3339(self.ran.finished));
        for stage in human::STAGES {
            for h in node.checkpoints().filter(|h| h.at == stage) {
                if let Some((why, fatal)) =
                    super::checkpoint::when_error(self.ran.report, id, node, h)
                {
                    let severity = if fatal { "error" } else { "warning" };
                    self.diagnostics.push(json!({"code": "RT062", "severity": severity, "node_id": id, "message": format!("node `{id}`: {why}")}));
                    if fatal {
                        rejected = true;
                        self.halted = Some(format!(
                            "node `{id}`: an expression could not be evaluated, which is run-fatal (`policy.on_expression_error: fail`)"
                        ));
                    }
                }
                let Some((e, approved, escalated)) =
                    super::checkpoint::event(self.ran.report, id, node, h, &at)
                else {
                    continue;
                };
                rejected |= !approved;
                if escalated {
                    self.escalated(id, &e);
                }
                events.push(e);
            }
        }
        if !events.is_empty() {
            nr["human_events"] = Json::Array(events);
        }
        rejected
    }

    /// A late answer escalated to the operator (`on_timeout: escalate`), as a diagnostic.
    fn escalated(&mut self, id: &str, event: &Json) {
        let what = event["checkpoint_id"].as_str().map_or_else(
            || format!("gate `{id}`"),
            |h| format!("checkpoint `{h}` of node `{id}`"),
        );
        let note = event["note"].as_str().unwrap_or_default();
        self.diagnostics.push(
            json!({"code": "ais:escalated", "severity": "warning", "node_id": id,
            "message": format!("{what}: {note}")}),
        );
    }

    fn task(&mut self, id: &str, node: &Node, nr: &mut Json) {
        if self.skipped(id, nr) {
            return;
        }
        if self.checkpoints(id, node, nr) {
            nr["status"] = json!("failed");
            return self.fail(id, "a human checkpoint was rejected");
        }
        let [_, ok, error] = inputs::input_writes(id);
        if self.ran.report.get(&ok) == Some(&json!(false)) {
            let e = self
                .ran
                .report
                .get(&error)
                .and_then(Json::as_str)
                .unwrap_or_default();
            if let Some(why) = e.strip_prefix("RT011: ") {
                self.diagnostics.push(json!({"code": "RT011", "severity": "error", "node_id": id, "message": format!("node `{id}`: {why}")}));
                nr["status"] = json!("blocked");
                return self.fail(id, "its intelligence tier cannot be satisfied");
            }
            self.diagnostics.push(json!({"code": "RT033", "severity": "error", "node_id": id, "message": format!("node `{id}`: {e}")}));
            nr["status"] = json!("failed");
            return self.fail(id, "a required input is missing");
        }
        let verdict = self.ran.report.get(&judge_writes(id)[3]);
        let Some(Json::Object(v)) = verdict else {
            return self.unfinished(id, nr);
        };
        let mut attempts = v
            .get("attempts")
            .and_then(Json::as_array)
            .cloned()
            .unwrap_or_default();
        if let Some(first) = attempts.first_mut() {
            first["started_at"] = self.last_finished.clone();
        }
        let status = v.get("status").and_then(Json::as_str).unwrap_or("failed");
        nr["status"] = json!(match status {
            "succeeded" => "succeeded",
            "skipped" => "skipped",
            // Judged and sent back, then the run stopped: the next attempt never finished.
            "retrying" if self.stopped_here(id) && self.ran.status == Ended::AwaitingHuman => {
                "awaiting_human"
            }
            _ => "failed",
        });
        if let Some(first) = attempts.first() {
            nr["started_at"] = first["started_at"].clone();
        }
        if let Some(last) = attempts.last() {
            nr["finished_at"] = last["finished_at"].clone();
            self.last_finished = last["finished_at"].clone();
        }
        nr["outputs"] = v.get("outputs").cloned().unwrap_or(json!({}));
        if let Some(why) = v.get("refused").and_then(Json::as_str) {
            let why = why.strip_prefix("RT011: ").unwrap_or(why);
            self.diagnostics.push(json!({"code": "RT011", "severity": "error", "node_id": id, "message": format!("node `{id}`: the retry is refused: {why}")}));
        }
        nr["attempts"] = Json::Array(attempts.clone());
        if nr["status"] == "skipped" {
            nr["skip_reason"] = json!(format!(
                "`on_exhausted: skip` after {} attempt(s)",
                attempts.len()
            ));
        }
        if v.get("escalated") == Some(&json!(true)) {
            nr["escalated"] = json!(true);
            self.diagnostics.push(json!({"code": "ais:escalated", "severity": "warning", "node_id": id, "message": format!("node `{id}` did not succeed in {} attempt(s) and was escalated to the operator (`on_exhausted: escalate`; no one took it over, so it failed)", attempts.len())}));
        }
        if v.get("degraded") == Some(&json!(true)) {
            self.degraded = true;
            self.diagnostics.push(json!({"code": "RT042", "severity": "warning", "node_id": id, "message": format!("node `{id}` did not succeed in {} attempt(s) and is accepted as it is (`on_exhausted: succeed_degraded`)", attempts.len())}));
        }
        if nr["status"] == "failed" {
            let error = attempts
                .last()
                .and_then(|a| a.get("error"))
                .and_then(Json::as_str);
            if let Some(e) = error {
                let (code, e) = ["RT031", "RT032"]
                    .into_iter()
                    .find_map(|c| Some((c, e.strip_prefix(c)?.strip_prefix(": ")?)))
                    .unwrap_or(("RT033", e));
                self.diagnostics.push(json!({"code": code, "severity": "error", "node_id": id, "message": format!("node `{id}`: {e}")}));
            }
            let why = format!(
                "{} attempt(s), the last {}",
                attempts.len(),
                if error.is_some() {
                    "missing outputs"
                } else {
                    "failing its criteria"
                }
            );
            self.fail(id, &why);
        }
    }

    fn gate(&mut self, id: &str, node: &Node, nr: &mut Json) {
        if self.skipped(id, nr) {
            return;
        }
        let Some(approved) = self.ran.report.get(&carry_name(id, "approved")) else {
            return self.unfinished(id, nr);
        };
        nr["started_at"] = self.last_finished.clone();
        nr["finished_at"] = json!(rfc3339(self.ran.finished));
        let block = node.gate.as_ref();
        let mode = block.map_or(HumanMode::Approve, |g| g.mode);
        let on_reject = block.and_then(|g| g.on_reject);
        let answered = self.ran.report.get(&super::own(id, "gate"));
        let outcome = match (mode, answered.and_then(|a| a["outcome"].as_str())) {
            (HumanMode::Notify, _) => "notified",
            (_, Some(o)) => o,
            _ if approved == &json!(true) => "approved",
            _ => "rejected",
        };
        // With `on_reject: route` the gate succeeds either way; its `decision` says which.
        let routes = on_reject == Some(OnReject::Route);
        let skips = on_reject == Some(OnReject::SkipDependents);
        // A late answer (`timed_out`) passes only when its `on_timeout` approved it.
        let passed = routes || (outcome != "rejected" && approved == &json!(true));
        nr["status"] = json!(match (passed, skips) {
            (true, _) => "succeeded",
            (false, true) => "skipped",
            (false, false) => "failed",
        });
        let mut event =
            json!({"at_stage": "gate", "mode": mode, "outcome": outcome, "at": nr["finished_at"]});
        if let Some(note) = answered.and_then(|a| a["note"].as_str()) {
            event["note"] = json!(note);
        }
        if answered.is_some_and(|a| a["escalated"] == json!(true)) {
            self.escalated(id, &event);
        }
        nr["human_events"] = json!([event]);
        let outputs: Map<String, Json> = super::gates::answer_outputs(self.doc, id)
            .into_iter()
            .filter_map(|o| {
                let v = self.ran.report.get(&carry_name(id, &o))?;
                (!v.is_null()).then(|| (o.clone(), v.clone()))
            })
            .collect();
        if !outputs.is_empty() {
            nr["outputs"] = Json::Object(outputs);
        }
        if passed {
        } else if skips {
            nr["skip_reason"] = json!("its approver rejected it (`on_reject: skip_dependents`)");
        } else {
            self.fail(id, "its approver rejected it");
        }
    }
}

/// The value of a graph output's `from` (a plain `nodes.X.outputs.Y`): the node's recorded
/// output, else the carry.
fn bound(from: &str, nodes: &[Json], report: &Map<String, Json>) -> Option<Json> {
    let parts: Vec<&str> = from.trim().split('.').collect();
    let ["nodes", x, "outputs", y] = parts.as_slice() else {
        return None;
    };
    // Only a node that succeeded binds anything (a failed node's last try is not an output).
    let node = nodes
        .iter()
        .find(|n| n["node_id"] == *x && n["status"] == "succeeded")?;
    match node.get("outputs") {
        Some(outputs) => outputs.get(*y).cloned(),
        None => report.get(&carry_name(x, y)).cloned(),
    }
}

/// The run record of a run over the sequential `schedule` of `doc`.
pub fn run_record(doc: &Graph, schedule: &[String], ran: &Ran) -> Json {
    // A resumed run starts later than the attempts its journal replays.
    let mut started = rfc3339(ran.started);
    for id in schedule {
        let attempts = ran
            .report
            .get(&judge_writes(id)[3])
            .and_then(|v| v.get("attempts"));
        for a in attempts.and_then(Json::as_array).into_iter().flatten() {
            if let Some(t) = a["finished_at"].as_str().filter(|t| *t < started.as_str()) {
                started = t.to_owned();
            }
        }
    }
    let mut walk = Walk {
        doc,
        ran,
        last_finished: json!(started),
        halted: None,
        diagnostics: Vec::new(),
        any_failed: false,
        degraded: false,
        halt: super::ready::halts(doc),
        past_stop: false,
    };
    let [_, ok, error] = inputs::params_writes();
    if ran.report.get(&ok) == Some(&json!(false)) {
        // The params were rejected (AG301/AG302): no node ran.
        let text = ran
            .report
            .get(&error)
            .and_then(Json::as_str)
            .unwrap_or("[]");
        let found: Vec<Json> = serde_json::from_str(text).unwrap_or_default();
        for f in found {
            walk.diagnostics.push(json!({"code": f["code"], "severity": "error", "message": f["message"], "pointer": "/params"}));
        }
        walk.any_failed = true;
        walk.halted = Some("the run was rejected: its params do not satisfy their specs".into());
    }
    let mut node_runs = Vec::new();
    for id in schedule {
        let Some(node) = doc.node(id) else { continue };
        let ty = node.kind();
        let mut nr = json!({"node_id": id, "type": ty, "status": "pending"});
        if let Some(reason) = &walk.halted {
            nr["status"] = json!("skipped");
            nr["skip_reason"] = json!(reason);
        } else if ty == NodeType::Gate {
            walk.gate(id, node, &mut nr);
        } else {
            walk.task(id, node, &mut nr);
        }
        node_runs.push(nr);
    }
    let mut diagnostics = std::mem::take(&mut walk.diagnostics);
    if let Some(m) = &ran.message {
        // The runtime's own words, under a harness code: AGS has none for a fault or a pause.
        let (code, severity) = if ran.status == Ended::AwaitingHuman {
            ("ais:awaiting_human", "info")
        } else {
            ("ais:fault", "error")
        };
        diagnostics.push(json!({"code": code, "severity": severity, "message": m}));
    }
    let mut outputs = Map::new();
    let mut unbound = false;
    for (name, o) in doc.outputs.iter().flatten() {
        let from = o.from.as_str();
        match bound(from, &node_runs, ran.report) {
            Some(v) => {
                outputs.insert(name.clone(), v);
            }
            None if o.required != Some(false) => {
                unbound = true;
                if ran.status == Ended::Ok {
                    diagnostics.push(json!({"code": "RT041", "severity": "error", "message": format!("graph output `{name}` could not be bound (`{from}`)")}));
                }
            }
            None => {}
        }
    }
    let status = match ran.status {
        Ended::AwaitingHuman => "awaiting_human",
        Ended::Ok if walk.any_failed => "failed",
        Ended::Ok if unbound || walk.degraded => "partial",
        Ended::Ok => "succeeded",
        Ended::Failed => "failed",
    };
    let mut record = json!({
        "ags_version": crate::AGS_VERSION,
        "kind": "AgenticGraphRun",
        "run_id": ran.run_id,
        "graph_id": doc.id,
        "harness": {"name": "ais", "version": env!("CARGO_PKG_VERSION"), "conformance_level": CLAIMED_LEVEL, "supported_features": SUPPORTED_FEATURES},
        "status": status,
        "started_at": started,
        "nodes": node_runs,
        "outputs": outputs,
        "diagnostics": diagnostics,
    });
    if let Some(v) = &doc.version {
        record["graph_version"] = json!(v);
    }
    if status != "awaiting_human" {
        record["finished_at"] = json!(rfc3339(ran.finished));
    }
    record
}
