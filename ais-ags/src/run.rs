//! Running an AGS graph through its import (docs/AGS.md, "Running"): which features this
//! harness executes, the criteria its judges evaluate, time stamps; the program a run executes
//! and its run record are [`crate::harness`]'s.

use serde_json::{Map, Value as Json, json};
use std::path::{Component, Path};
use std::time::{SystemTime, UNIX_EPOCH};

/// The conformance level this harness claims in its run records: 1 — everything SPEC.md §19
/// lists for level 1 (see [`SUPPORTED_FEATURES`]), and a refusal by name of every feature above
/// it ([`unsupported`]); docs/AGS.md, "Conformance level", says what level 2 would need.
pub const CLAIMED_LEVEL: u64 = 1;

/// What this harness executes, as published in `harness.supported_features`.
pub const SUPPORTED_FEATURES: &[&str] = &[
    "node:task",
    "node:gate:approve",
    "node:gate:notify",
    "node:gate:review",
    "node:gate:input",
    "gate:prompt-template,present",
    "edge:sequence",
    "join:all",
    "scheduling:sequential",
    "defaults:merge",
    "params:bind-and-validate",
    "inputs:from",
    "inputs:template",
    "inputs:value",
    "inputs:default",
    "inputs:implicit-binding",
    "outputs:file-by-path_hint",
    "outputs:type-check",
    "outputs:schema-check",
    "criterion:file_exists",
    "criterion:artifact_present",
    "criterion:human",
    "criterion:command",
    "human:before_start,after_outputs",
    "human:mode:approve,review,input,notify",
    "human:when",
    "human:timeout:hold,fail,approve,escalate-to-operator",
    "failure:retry",
    "failure:retry:backoff",
    "failure:on_exhausted:fail,skip,succeed_degraded,escalate-to-operator",
    "gate:on_reject:fail,skip_dependents,route",
    "policy:on_node_failure:isolate,halt",
    "policy:on_expression_error",
    "intelligence:routing",
];

/// The graph as it runs: `defaults` merged into every node (SPEC.md §6.3) — per block, shallow
/// (the node's keys over the defaults'), arrays (and `human`, an array) replaced, never
/// joined. A gate never takes `intelligence` or `human` from them (it calls no model, AG102,
/// and is itself the human checkpoint). Fragments keep their own (this harness runs none).
pub fn merged(doc: &Json) -> Json {
    let mut out = doc.clone();
    let Some(defaults) = doc.get("defaults").and_then(Json::as_object) else {
        return out;
    };
    let Some(nodes) = out.get_mut("nodes").and_then(Json::as_object_mut) else {
        return out;
    };
    for node in nodes.values_mut().filter_map(Json::as_object_mut) {
        let gate = node.get("type").and_then(Json::as_str) == Some("gate");
        for block in [
            "intelligence",
            "requirements",
            "constraints",
            "failure",
            "human",
            "join",
        ] {
            let Some(d) = defaults.get(block) else {
                continue;
            };
            if gate && matches!(block, "intelligence" | "human") {
                continue;
            }
            let merged = match (d, node.get(block)) {
                (Json::Object(d), Some(Json::Object(n))) => {
                    let mut m = d.clone();
                    m.extend(n.iter().map(|(k, v)| (k.clone(), v.clone())));
                    Json::Object(m)
                }
                (_, Some(n)) => n.clone(),
                (d, None) => d.clone(),
            };
            node.insert(block.to_owned(), merged);
        }
    }
    out
}

/// The features a graph uses that this harness does not execute, each with where it is used.
/// A graph using any is refused before it runs (SPEC.md §19: a harness MUST reject documents
/// that use features it lacks, and say which).
pub fn unsupported(doc: &Json) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(p) = doc
        .pointer("/policy/on_node_failure")
        .and_then(Json::as_str)
        && p == "continue"
    {
        out.push("`policy.on_node_failure: continue`".to_owned());
    }
    if let Some(level) = doc.get("requires_conformance").and_then(Json::as_u64)
        && level > 1
    {
        out.push(format!(
            "`requires_conformance: {level}` (AG303: this harness executes level 1 graphs)"
        ));
    }
    let nodes = doc
        .get("nodes")
        .and_then(Json::as_object)
        .cloned()
        .unwrap_or_default();
    for name in crate::harness::inputs::param_names(doc) {
        if name == "task" || name.contains("__") || name == crate::harness::inputs::PARAMS {
            out.push(format!("param `{name}`: a name this harness reserves (`task`, `ags_params`, or one containing `__`)"));
        }
    }
    for (id, node) in &nodes {
        let ty = node.get("type").and_then(Json::as_str).unwrap_or("task");
        for o in node
            .get("outputs")
            .and_then(Json::as_object)
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
        {
            if o.starts_with(crate::harness::OWN) {
                out.push(format!(
                    "node `{id}`: output `{o}` (names starting `{}` are this harness's own)",
                    crate::harness::OWN
                ));
            }
        }
        if !matches!(ty, "task" | "gate") {
            out.push(format!("node `{id}`: `type: {ty}`"));
        }
        let mode = node.pointer("/gate/mode").and_then(Json::as_str);
        if ty == "gate" && !matches!(mode, Some("approve" | "notify" | "review" | "input")) {
            out.push(format!(
                "node `{id}`: a gate of `mode: {}`",
                mode.unwrap_or("?")
            ));
        }
        if let Some(r) = node.pointer("/gate/on_reject").and_then(Json::as_str)
            && !matches!(r, "fail" | "skip_dependents" | "route")
        {
            out.push(format!("node `{id}`: `on_reject: {r}`"));
        }
        if node.get("when").is_some() {
            out.push(format!("node `{id}`: `when`"));
        }
        // `failure`: `retry`, and an `on_exhausted` of `fail`, `skip` or `succeed_degraded`.
        for (k, v) in node
            .get("failure")
            .and_then(Json::as_object)
            .into_iter()
            .flatten()
        {
            match (k.as_str(), v.as_str()) {
                ("retry", _)
                | ("on_exhausted", Some("fail" | "skip" | "succeed_degraded" | "escalate")) => {}
                ("on_exhausted", Some(how)) => {
                    out.push(format!("node `{id}`: `failure.on_exhausted: {how}`"));
                }
                _ => out.push(format!("node `{id}`: `failure.{k}`")),
            }
        }
        for h in node
            .get("human")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let hid = h.get("id").and_then(Json::as_str).unwrap_or("?");
            let at = h.get("at").and_then(Json::as_str).unwrap_or_default();
            if ty != "task" || !crate::harness::human::STAGES.contains(&at) {
                out.push(format!("node `{id}`: human checkpoint `{hid}` `at: {at}`"));
            }
        }
        if node
            .get("join")
            .and_then(Json::as_str)
            .is_some_and(|j| j != "all")
        {
            out.push(format!("node `{id}`: `join` other than `all`"));
        }
        for c in node
            .pointer("/success/criteria")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let kind = c.get("kind").and_then(Json::as_str).unwrap_or_default();
            let advisory = c.get("severity").and_then(Json::as_str) == Some("advisory");
            let cwd = c.get("cwd").and_then(Json::as_str);
            if kind == "command" && cwd.is_some_and(|d| safe_relative(d).is_none()) {
                out.push(format!(
                    "node `{id}`: a `command` criterion whose `cwd` leaves the output root"
                ));
            }
            if !matches!(
                kind,
                "file_exists" | "artifact_present" | "human" | "command"
            ) && !advisory
            {
                out.push(format!("node `{id}`: a required `{kind}` criterion"));
            }
        }
    }
    for (i, e) in doc
        .get("edges")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let kind = e.get("kind").and_then(Json::as_str).unwrap_or("sequence");
        if kind != "sequence" {
            out.push(format!("edge {i}: `kind: {kind}`"));
        }
    }
    out
}

/// The required `command` criteria of a graph, named (`ais run` runs them only when the
/// operator allows it).
pub fn required_commands(doc: &Json) -> Vec<String> {
    let mut out = Vec::new();
    for (id, node) in doc
        .get("nodes")
        .and_then(Json::as_object)
        .into_iter()
        .flatten()
    {
        for c in node
            .pointer("/success/criteria")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let required = c.get("severity").and_then(Json::as_str) != Some("advisory");
            if required && c.get("kind").and_then(Json::as_str) == Some("command") {
                let cid = c.get("id").and_then(Json::as_str).unwrap_or("?");
                out.push(format!("node `{id}`: `command` criterion `{cid}`"));
            }
        }
    }
    out
}

/// A `path_hint` the harness may write under the output root: relative, no `..`.
fn safe_relative(hint: &str) -> Option<&Path> {
    let p = Path::new(hint);
    (!hint.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)))).then_some(p)
}

/// RFC 3339 UTC text of a time (seconds precision).
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Civil from days (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// How the runtime's run ended, as far as a run record tells endings apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The run reached its TERMINAL with no unrouted failure (the runtime's `ok`).
    Ok,
    /// The run waits for a human answer (`input_required`).
    AwaitingHuman,
    /// The run failed, faulted or was interrupted.
    Failed,
}

/// What the runtime reported of one run.
pub struct Ran<'a> {
    /// How it ended.
    pub status: Ended,
    /// The produced carries (for a run stopped at a pause or a fault: those written by then).
    pub report: &'a Map<String, Json>,
    /// The instruction a fault or a pause stopped at.
    pub stopped_at: Option<&'a str>,
    /// The fault's or the pause's message.
    pub message: Option<String>,
    /// When the run started and ended.
    pub started: SystemTime,
    /// When it ended.
    pub finished: SystemTime,
    /// The output root (criteria paths resolve under it).
    pub root: &'a Path,
    /// The run's id.
    pub run_id: String,
}

pub(crate) fn criterion(c: &Json, outputs: &Map<String, Json>, root: &Path) -> Json {
    let kind = c.get("kind").and_then(Json::as_str).unwrap_or_default();
    let severity = c
        .get("severity")
        .and_then(Json::as_str)
        .unwrap_or("required");
    let mut r = json!({"id": c.get("id").cloned().unwrap_or(Json::Null), "kind": kind, "severity": severity, "passed": false});
    match kind {
        "file_exists" => {
            let path = c.get("path").and_then(Json::as_str).unwrap_or_default();
            let min = c.get("min_bytes").and_then(Json::as_u64).unwrap_or(0);
            let size = safe_relative(path)
                .and_then(|p| std::fs::metadata(root.join(p)).ok())
                .filter(|m| m.is_file())
                .map(|m| m.len());
            r["passed"] = json!(size.is_some_and(|s| s >= min));
            r["evidence"] = json!(match size {
                Some(s) => format!("{path}: {s} bytes (at least {min} required)"),
                None => format!("{path}: no such file under the output root"),
            });
        }
        "artifact_present" => {
            let name = c.get("output").and_then(Json::as_str).unwrap_or_default();
            let present = outputs
                .get(name)
                .is_some_and(|v| !v.is_null() && v != "" && v != &json!([]));
            r["passed"] = json!(present);
            r["evidence"] = json!(format!(
                "output `{name}` {}",
                if present {
                    "was produced"
                } else {
                    "is missing or empty"
                }
            ));
        }
        _ => {
            r["error"] = json!(format!(
                "`{kind}` criteria are not evaluated by this harness"
            ));
        }
    }
    r
}

pub use crate::harness::record::run_record;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_is_utc_civil_time() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + std::time::Duration::from_secs(1_764_583_200);
        assert_eq!(rfc3339(t), "2025-12-01T10:00:00Z");
    }

    #[test]
    fn a_path_hint_cannot_leave_the_workspace() {
        assert!(safe_relative("docs/a.md").is_some());
        for bad in ["/etc/passwd", "../x", "a/../../x", ""] {
            assert!(safe_relative(bad).is_none(), "{bad}");
        }
    }
}
