//! Running an AGS graph through its import (docs/AGS.md, "Running"): which features this
//! harness executes, the criteria its judges evaluate, time stamps; the program a run executes
//! and its run record are [`crate::harness`]'s.

use crate::graph::{
    Criterion, CriterionKind, CriterionSeverity, EdgeKind, Graph, Int, Join, NodeType,
    OnNodeFailure,
};
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

/// The features a graph uses that this harness does not execute, each with where it is used.
/// A graph using any is refused before it runs (SPEC.md §19: a harness MUST reject documents
/// that use features it lacks, and say which).
pub fn unsupported(doc: &Graph) -> Vec<String> {
    let mut out = Vec::new();
    let policy = doc.policy();
    if policy.on_node_failure == Some(OnNodeFailure::Continue) {
        out.push("`policy.on_node_failure: continue`".to_owned());
    }
    if let Some(level) = doc.requires_conformance.as_ref().and_then(Int::get)
        && level > 1
    {
        out.push(format!(
            "`requires_conformance: {level}` (AG303: this harness executes level 1 graphs)"
        ));
    }
    for name in doc.params.iter().flat_map(|p| p.keys()) {
        if name == "task" || name.contains("__") || name == crate::harness::inputs::PARAMS {
            out.push(format!("param `{name}`: a name this harness reserves (`task`, `ags_params`, or one containing `__`)"));
        }
    }
    for (id, node) in &doc.nodes {
        let ty = node.kind();
        for o in node.output_names() {
            if o.starts_with(crate::harness::OWN) {
                out.push(format!(
                    "node `{id}`: output `{o}` (names starting `{}` are this harness's own)",
                    crate::harness::OWN
                ));
            }
        }
        if !matches!(ty, NodeType::Task | NodeType::Gate) {
            out.push(format!("node `{id}`: `type: {ty}`"));
        }
        if node.when.is_some() {
            out.push(format!("node `{id}`: `when`"));
        }
        // `failure`: `retry`, and an `on_exhausted` (every one of which this harness runs).
        if let Some(f) = &node.failure {
            for (set, field) in [
                (f.fallback.is_some(), "fallback"),
                (f.escalation.is_some(), "escalation"),
                (f.compensation.is_some(), "compensation"),
                (f.timeout_action.is_some(), "timeout_action"),
            ] {
                if set {
                    out.push(format!("node `{id}`: `failure.{field}`"));
                }
            }
            for k in f.extra.keys() {
                out.push(format!("node `{id}`: `failure.{k}`"));
            }
        }
        for (i, h) in node.checkpoints().enumerate() {
            let name = crate::harness::checkpoint::id_of(node, h);
            if let Some(first) = node
                .checkpoints()
                .take(i)
                .position(|c| crate::harness::checkpoint::id_of(node, c) == name)
            {
                out.push(format!(
                    "node `{id}`: human checkpoint {i} (`/nodes/{id}/human/{i}`) is named `{name}` as checkpoint {first} is; give each checkpoint of a node an `id` of its own"
                ));
            }
        }
        let mut judged = std::collections::HashMap::new();
        for (i, c) in node.criteria().enumerate() {
            if c.kind != CriterionKind::Human {
                continue;
            }
            if let Some(first) = judged.insert(c.id.as_str(), i) {
                out.push(format!(
                    "node `{id}`: `human` criterion {i} (`/nodes/{id}/success/criteria/{i}/id`) has the id `{}` of criterion {first}; give each criterion of a node an `id` of its own",
                    c.id
                ));
            }
        }
        for h in node.checkpoints() {
            let hid = h.id.as_deref().unwrap_or("?");
            if ty != NodeType::Task || !crate::harness::human::STAGES.contains(&h.at) {
                out.push(format!(
                    "node `{id}`: human checkpoint `{hid}` `at: {}`",
                    h.at
                ));
            }
        }
        if node.join.is_some_and(|j| j != Join::All) {
            out.push(format!("node `{id}`: `join` other than `all`"));
        }
        for c in node.criteria() {
            if c.kind == CriterionKind::Command
                && c.cwd.as_deref().is_some_and(|d| safe_relative(d).is_none())
            {
                out.push(format!(
                    "node `{id}`: a `command` criterion whose `cwd` leaves the output root"
                ));
            }
            if !matches!(
                c.kind,
                CriterionKind::FileExists
                    | CriterionKind::ArtifactPresent
                    | CriterionKind::Human
                    | CriterionKind::Command
            ) && c.is_required()
            {
                out.push(format!("node `{id}`: a required `{}` criterion", c.kind));
            }
        }
    }
    for (i, e) in doc.edge_list().enumerate() {
        let kind = e.kind.unwrap_or(EdgeKind::Sequence);
        if kind != EdgeKind::Sequence {
            out.push(format!("edge {i}: `kind: {kind}`"));
        }
    }
    out
}

/// The required `command` criteria of a graph, named (`ais run` runs them only when the
/// operator allows it).
pub fn required_commands(doc: &Graph) -> Vec<String> {
    let mut out = Vec::new();
    for (id, node) in &doc.nodes {
        for c in node.criteria() {
            if c.is_required() && c.kind == CriterionKind::Command {
                out.push(format!("node `{id}`: `command` criterion `{}`", c.id));
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

pub(crate) fn criterion(c: &Criterion, outputs: &Map<String, Json>, root: &Path) -> Json {
    let severity = CriterionSeverity::of(c.severity);
    let mut r = json!({"id": c.id, "kind": c.kind, "severity": severity, "passed": false});
    match c.kind {
        CriterionKind::FileExists => {
            let path = c.path.as_deref().unwrap_or_default();
            let min = c.min_bytes.as_ref().and_then(Int::get).unwrap_or(0);
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
        CriterionKind::ArtifactPresent => {
            let name = c.output.as_deref().unwrap_or_default();
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
        kind => {
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
