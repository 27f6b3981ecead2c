//! What a task node's judge decides when the node's attempt ends (SPEC.md §9.3, §10.3, §14.2):
//! its `file` outputs written, its required outputs checked (`RT033`), their `type` (`RT031`)
//! and `schema` (`RT032`), its criteria evaluated
//! per `success.mode`, and — when it failed — whether `failure.retry` gives it another attempt,
//! with which feedback.

use super::{human, judge_writes};
use crate::graph::{
    Backoff, Criterion, CriterionKind, CriterionSeverity, Feedback, Graph, Int, Node, OnExhausted,
    RetryPolicy, Success, SuccessMode, ValueType,
};
use crate::run::criterion;
use crate::translate::carry_name;
use serde_json::{Map, Value as Json, json};
use std::path::Path;

/// Writes a file under the output root (relative path, content); the CLI confines it.
pub type Writer<'w> = dyn FnMut(&str, &str) -> Result<(), String> + 'w;

/// One judge call: the graph, the node, the call's arguments by carry name, the output root.
pub struct Call<'a> {
    /// The graph.
    pub graph: &'a Graph,
    /// The judged node's id.
    pub node: &'a str,
    /// The judge's arguments: the node's output carries and its previous verdict.
    pub args: &'a Map<String, Json>,
    /// The output root criteria paths resolve under.
    pub root: &'a Path,
    /// The time of the call (RFC 3339).
    pub now: String,
    /// The tier of the run's model ([`super::routing`]).
    pub tier: String,
    /// What each `command` criterion's command did, by criterion id: `exit` (null when it did
    /// not exit), `output`, `error` (see [`super::commands`]).
    pub commands: &'a Map<String, Json>,
}

fn present(v: &Json) -> bool {
    !v.is_null() && v != "" && v != &json!([])
}

/// The node's outputs by AGS name, with each `file` output that has a `path_hint` written
/// there (its value becomes the path, §9.1); and what could not be written.
fn collect(call: &Call, node: &Node, write: &mut Writer) -> (Map<String, Json>, Vec<String>) {
    let mut outputs = Map::new();
    let mut problems = Vec::new();
    for (name, spec) in node.outputs.iter().flatten() {
        let Some(v) = call
            .args
            .get(&carry_name(call.node, name))
            .filter(|v| present(v))
        else {
            continue;
        };
        match (spec.ty, spec.path_hint.as_deref(), v) {
            (ValueType::File, Some(hint), Json::String(content)) => match write(hint, content) {
                Ok(()) => {
                    outputs.insert(name.clone(), json!(hint));
                }
                Err(e) => problems.push(format!("output `{name}`: {e}")),
            },
            (ty, _, Json::String(text)) if structured(ty.as_str()) => {
                // A model answers in text: JSON text is the structured value it stands for.
                let parsed = serde_json::from_str(text.trim()).unwrap_or_else(|_| v.clone());
                outputs.insert(name.clone(), parsed);
            }
            _ => {
                outputs.insert(name.clone(), v.clone());
            }
        }
    }
    (outputs, problems)
}

/// Whether values of AGS type `ty` are structured (read from JSON text when a model wrote them).
pub(crate) fn structured(ty: &str) -> bool {
    matches!(
        ty,
        "object" | "array" | "json" | "file_set" | "number" | "integer" | "boolean"
    )
}

/// Writes node `nid`'s produced `file` outputs that have a `path_hint` (errors are reported
/// when the judge collects them).
pub fn write_files(nid: &str, node: &Node, args: &Map<String, Json>, write: &mut Writer) {
    for (name, spec) in node.outputs.iter().flatten() {
        let value = args.get(&carry_name(nid, name));
        if let (ValueType::File, Some(hint), Some(Json::String(content))) =
            (spec.ty, spec.path_hint.as_deref(), value)
        {
            let _ = write(hint, content);
        }
    }
}

/// Whether a produced value fits its AGS type (§9.1; a `file` is its path once written).
pub(crate) fn fits(ty: &str, v: &Json) -> bool {
    match ty {
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "file_set" => v.as_array().is_some_and(|a| a.iter().all(Json::is_string)),
        "artifact" => v.get("id").is_some_and(Json::is_string),
        "json" | "any" => true,
        _ => v.is_string(),
    }
}

/// Each produced output that fails its `type` (`RT031`), described.
fn mistyped(node: &Node, outputs: &Map<String, Json>) -> Vec<String> {
    outputs
        .iter()
        .filter_map(|(name, v)| {
            let ty = node.outputs.as_ref()?.get(name)?.ty;
            (!fits(ty.as_str(), v)).then(|| format!("output `{name}` is not of type `{ty}`: {v}"))
        })
        .collect()
}

/// Each produced output of the right type that breaks its `schema` (`RT032`), described
/// (the `jsonschema` crate; a `file` output is checked as its path).
fn off_schema(node: &Node, outputs: &Map<String, Json>) -> Vec<String> {
    outputs
        .iter()
        .filter_map(|(name, v)| {
            let schema = node.outputs.as_ref()?.get(name)?.schema.clone()?;
            let why: Vec<String> = match jsonschema::validator_for(&Json::Object(schema)) {
                Ok(validator) => validator.iter_errors(v).map(|e| e.to_string()).collect(),
                Err(e) => vec![format!("its schema does not compile: {e}")],
            };
            (!why.is_empty())
                .then(|| format!("output `{name}` breaks its schema: {}", why.join("; ")))
        })
        .collect()
}

/// Whether the required results pass under the block's `mode` (`all`, `any`, `n_of`).
fn combine(block: &Success, results: &[Json]) -> bool {
    let required: Vec<bool> = results
        .iter()
        .filter(|r| r["severity"] == "required")
        .map(|r| r["passed"] == true)
        .collect();
    let passing = required.iter().filter(|p| **p).count();
    match block.mode.unwrap_or(SuccessMode::All) {
        SuccessMode::Any => required.is_empty() || passing >= 1,
        SuccessMode::NOf => passing as u64 >= block.count.as_ref().and_then(Int::get).unwrap_or(1),
        SuccessMode::All => passing == required.len(),
    }
}

/// The feedback the next attempt reads (`retry.feedback`, default `failed_criteria`).
fn feedback(
    mode: Feedback,
    attempt: u64,
    error: Option<&str>,
    results: &[Json],
    criteria: &[Criterion],
) -> String {
    if mode == Feedback::None {
        return String::new();
    }
    let mut text = format!("Attempt {attempt} of this task did not succeed.");
    if let Some(e) = error {
        text.push_str(&format!(" {e}."));
    }
    let failed: Vec<&Json> = results
        .iter()
        .filter(|r| r["severity"] == "required" && r["passed"] == false)
        .collect();
    if mode == Feedback::FailureSummary {
        if !failed.is_empty() {
            text.push_str(&format!(" {} criteria failed.", failed.len()));
        }
        return text;
    }
    if !failed.is_empty() {
        text.push_str(" These success criteria failed; meet them this time:");
        for r in failed {
            let description = criteria
                .iter()
                .find(|c| r["id"] == c.id.as_str())
                .map_or("", |c| c.description.as_str());
            let evidence = r
                .get("evidence")
                .or_else(|| r.get("error"))
                .and_then(Json::as_str)
                .unwrap_or("");
            text.push_str(&format!(
                "\n- {}: {} (evidence: {evidence})",
                r["id"].as_str().unwrap_or(""),
                description
            ));
        }
    }
    text
}

/// A `human` criterion's result: the person's answer, asked before the judge ran.
fn human_result(call: &Call, c: &Criterion) -> Json {
    let cid = c.id.as_str();
    let [answer, approved] = human::answer_carries(&human::criterion_id(call.node, cid));
    let severity = CriterionSeverity::of(c.severity);
    let passed = call.args.get(&approved) == Some(&json!(true));
    let said = call.args.get(&answer).and_then(Json::as_str).unwrap_or("");
    json!({"id": cid, "kind": "human", "severity": severity, "passed": passed,
        "evidence": format!("the reviewer answered `{}`", said.trim())})
}

/// A `command` criterion's result (§10.2): the exit code equals `expect_exit_code` (default
/// 0) and, when set, stdout matches `expect_stdout_matches`; the output is the evidence.
fn command_result(call: &Call, c: &Criterion) -> Json {
    let cid = c.id.as_str();
    let severity = CriterionSeverity::of(c.severity);
    let mut r = json!({"id": cid, "kind": "command", "severity": severity, "passed": false});
    let ran = call
        .commands
        .get(cid)
        .cloned()
        .unwrap_or(json!({"error": "not run"}));
    let Some(exit) = ran.get("exit").and_then(Json::as_i64) else {
        r["error"] = ran
            .get("error")
            .cloned()
            .unwrap_or(json!("the command did not exit"));
        if let Some(o) = ran
            .get("output")
            .and_then(Json::as_str)
            .filter(|o| !o.is_empty())
        {
            r["evidence"] = json!(cap(o));
        }
        return r;
    };
    let want = c
        .expect_exit_code
        .as_ref()
        .and_then(Int::signed)
        .unwrap_or(0);
    let output = ran.get("output").and_then(Json::as_str).unwrap_or("");
    let matches = match c.expect_stdout_matches.as_deref() {
        None => true,
        Some(p) => regex::Regex::new(p).is_ok_and(|re| re.is_match(output)),
    };
    r["passed"] = json!(exit == want && matches);
    r["evidence"] = json!(format!(
        "exit status {exit} (expected {want}){}\n{}",
        if matches {
            ""
        } else {
            "; stdout does not match `expect_stdout_matches`"
        },
        cap(output)
    ));
    r
}

/// At most 4 KiB of a command's output, for the record.
fn cap(text: &str) -> String {
    let mut end = text.len().min(4096);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

/// Judges one attempt of a node; the map holds the judge's writes by carry name.
pub fn judge(call: &Call, write: &mut Writer) -> Map<String, Json> {
    let Some(node) = call.graph.node(call.node) else {
        return Map::new();
    };
    let [passed_c, retry_c, feedback_c, verdict_c] = judge_writes(call.node);
    let mut attempts: Vec<Json> = call
        .args
        .get(&verdict_c)
        .and_then(|v| v.get("attempts"))
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default();
    let attempt = attempts.len() as u64 + 1;
    let (mut outputs, problems) = collect(call, node, write);
    // An input checkpoint's values that name no declared output are outputs of their own.
    outputs.extend(super::checkpoint::overlay(call.graph, call.node, call.args).1);
    let missing: Vec<&String> = node
        .outputs
        .iter()
        .flatten()
        .filter(|(k, o)| o.required != Some(false) && !outputs.contains_key(*k))
        .map(|(k, _)| k)
        .collect();
    let results: Vec<Json> = node
        .criteria()
        .map(|c| match c.kind {
            CriterionKind::Human => human_result(call, c),
            CriterionKind::Command => command_result(call, c),
            _ => criterion(c, &outputs, call.root),
        })
        .collect();
    let mut error = problems.join("; ");
    if !missing.is_empty() {
        let names: Vec<String> = missing.iter().map(|m| format!("`{m}`")).collect();
        let m = format!("required outputs not produced: {}", names.join(", "));
        error = if error.is_empty() {
            m
        } else {
            format!("{error}; {m}")
        };
    }
    let criteria_pass = results.is_empty()
        || node
            .success
            .as_ref()
            .is_none_or(|block| combine(block, &results));
    let mistyped = mistyped(node, &outputs);
    // The schema is checked on values of the right type (§9.1: `type` first, then `schema`).
    let off_schema = if mistyped.is_empty() {
        off_schema(node, &outputs)
    } else {
        Vec::new()
    };
    let passed = error.is_empty() && mistyped.is_empty() && off_schema.is_empty() && criteria_pass;
    let class = if !error.is_empty() {
        "output_missing"
    } else if !mistyped.is_empty() {
        error = format!("RT031: {}", mistyped.join("; "));
        "validation_error"
    } else if !off_schema.is_empty() {
        error = format!("RT032: {}", off_schema.join("; "));
        "validation_error"
    } else {
        "criteria_failed"
    };
    let retry_spec = node.retry().cloned().unwrap_or_default();
    let max = retry_spec
        .max_attempts
        .as_ref()
        .and_then(Int::get)
        .unwrap_or(1);
    let retry_on: Vec<String> = retry_spec.retry_on.clone().unwrap_or_else(|| {
        vec![
            "transient".into(),
            "tool_error".into(),
            "criteria_failed".into(),
        ]
    });
    let mut retry = !passed && attempt < max && retry_on.iter().any(|r| r == class || r == "any");
    // A retry that would escalate past the model is refused, not run on a lesser one.
    let refused = if retry {
        super::routing::route(node, attempt + 1, &call.tier).err()
    } else {
        None
    };
    retry &= refused.is_none();
    let started = attempts
        .last()
        .and_then(|a| a.get("finished_at"))
        .cloned()
        .unwrap_or(json!(call.now));
    let mut record = json!({"attempt": attempt, "status": if passed { "succeeded" } else if class == "criteria_failed" { "criteria_failed" } else { "failed" },
        "started_at": started, "finished_at": call.now});
    if !results.is_empty() {
        let mode = node
            .success
            .as_ref()
            .and_then(|b| b.mode)
            .unwrap_or(SuccessMode::All);
        record["success"] = json!({"passed": criteria_pass, "mode": mode, "results": results});
    }
    if !error.is_empty() {
        record["error"] = json!(error);
    }
    if let Ok(routed) = super::routing::route(node, attempt, &call.tier) {
        record["routed"] = routed;
    }
    attempts.push(record);
    // Exhausted: the terminal disposition (§14.2 `on_exhausted`; `fail` by default).
    let disposition = (!passed && !retry)
        .then(|| node.failure.as_ref().and_then(|f| f.on_exhausted))
        .flatten()
        .unwrap_or(OnExhausted::Fail);
    let degraded = !passed && !retry && disposition == OnExhausted::SucceedDegraded;
    let status = if passed || degraded {
        "succeeded"
    } else if retry {
        "retrying"
    } else if disposition == OnExhausted::Skip {
        "skipped"
    } else {
        "failed"
    };
    let mode = retry_spec.feedback.unwrap_or(Feedback::FailedCriteria);
    let fb = if retry {
        let error = (!error.is_empty()).then_some(error.as_str());
        let criteria = node.success.as_ref().map_or(&[][..], |b| &b.criteria);
        feedback(mode, attempt, error, &results, criteria)
    } else {
        String::new()
    };
    let delay = if retry {
        retry_delay(&retry_spec, attempt, jitter_draw()).as_secs_f64()
    } else {
        0.0
    };
    let mut out = Map::new();
    out.insert(passed_c, json!(passed || degraded));
    out.insert(retry_c, json!(retry));
    out.insert(feedback_c, json!(fb));
    out.insert(
        verdict_c,
        json!({"status": status, "class": if passed { Json::Null } else { json!(class) }, "attempts": attempts, "outputs": outputs, "refused": refused, "degraded": degraded,
            "escalated": disposition == OnExhausted::Escalate, "retry_delay_seconds": delay}),
    );
    out
}

/// A draw in `[0, 1)` for the retry's jitter, from the clock (no generator to seed: the draw
/// only spreads retries apart).
fn jitter_draw() -> f64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    f64::from(nanos % 1_000_000) / 1_000_000.0
}

/// How long to wait before the retry that follows attempt `attempt` (1-based) under
/// `failure.retry` `spec` (SPEC.md §14.2, Appendix A): `backoff` `none`, `fixed` (the initial
/// delay), `linear` (initial × attempt) or `exponential` (initial × 2^(attempt−1), the
/// default) from `initial_delay_seconds` (2), at most `max_delay_seconds` (60); with `jitter`
/// (the default) somewhere in the upper half of that, by `draw` in `[0, 1)`; never longer than
/// [`super::MAX_RETRY_DELAY_SECONDS`].
pub fn retry_delay(spec: &RetryPolicy, attempt: u64, draw: f64) -> std::time::Duration {
    let num =
        |n: &Option<serde_json::Number>, d: f64| n.as_ref().and_then(|n| n.as_f64()).unwrap_or(d);
    let initial = num(&spec.initial_delay_seconds, 2.0).max(0.0);
    let n = attempt.max(1) as f64;
    let secs = match spec.backoff.unwrap_or(Backoff::Exponential) {
        Backoff::None => 0.0,
        Backoff::Fixed => initial,
        Backoff::Linear => initial * n,
        Backoff::Exponential => initial * 2f64.powf(n - 1.0),
    }
    .min(num(&spec.max_delay_seconds, 60.0).max(0.0));
    let jitter = spec.jitter.unwrap_or(true);
    let secs = if jitter {
        secs * (0.5 + draw.clamp(0.0, 1.0) / 2.0)
    } else {
        secs
    };
    super::seconds(secs, super::MAX_RETRY_DELAY_SECONDS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_retry_delay_follows_backoff_initial_max_and_jitter() {
        let d = |spec: Json, attempt: u64, draw: f64| {
            let spec: RetryPolicy = serde_json::from_value(spec).expect("a retry block");
            retry_delay(&spec, attempt, draw).as_secs_f64()
        };
        // (spec, attempt, draw, seconds)
        let cases = [
            (json!({}), 1, 0.999_999, 2.0),
            (json!({}), 1, 0.0, 1.0),
            (json!({"jitter": false}), 3, 0.3, 8.0),
            (json!({"jitter": false}), 9, 0.3, 60.0),
            (
                json!({"jitter": false, "max_delay_seconds": 5}),
                4,
                0.0,
                5.0,
            ),
            (json!({"backoff": "none"}), 4, 0.7, 0.0),
            (
                json!({"backoff": "fixed", "initial_delay_seconds": 3, "jitter": false}),
                4,
                0.0,
                3.0,
            ),
            (
                json!({"backoff": "linear", "initial_delay_seconds": 3, "jitter": false}),
                4,
                0.0,
                12.0,
            ),
        ];
        for (spec, attempt, draw, secs) in cases {
            let got = d(spec.clone(), attempt, draw);
            assert!(
                (got - secs).abs() < 1e-3,
                "{spec} attempt {attempt}: {got} not {secs}"
            );
        }
    }
}
