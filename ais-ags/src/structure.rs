//! Layer 2 (SPEC.md §18.1, `AG1xx`, and the version rule `AG002`): the cross-references the
//! schema cannot express, per scope.

use crate::codes::Sink;
use crate::scope::{Model, Pointer, Scope};
use ais_core::agir::pointer_token;
use ais_core::did_you_mean;
use serde_json::{Map, Value as Json};
use std::collections::{HashMap, HashSet};

/// AG002: the document targets a MAJOR.MINOR this harness does not implement (§21.3).
pub(crate) fn version(doc: &Json, sink: &mut Sink) {
    let Some(v) = doc.get("ags_version") else {
        return;
    };
    let text = match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    };
    if text != crate::AGS_VERSION {
        sink.push(
            "AG002",
            "/ags_version",
            format!("`ags_version` is `{text}`; this harness implements AGS {} only", crate::AGS_VERSION),
            format!("write `ags_version: \"{}\"` if the document uses only AGS 1.0, or run it on a harness that supports {text}", crate::AGS_VERSION),
        );
    }
}

/// Every layer 2 rule over every scope.
pub(crate) fn check(model: &Model, sink: &mut Sink) {
    for scope in &model.scopes {
        references(scope, sink);
        cycles(scope, sink);
        for (id, node) in scope.nodes() {
            let np = scope.node_ptr(id);
            node_rules(model, scope, id, node, &np, sink);
        }
    }
    fragment_recursion(model, sink);
}

fn names<'a>(scope: &'a Scope) -> Vec<&'a str> {
    scope.nodes().map(|(id, _)| id.as_str()).collect()
}

fn unknown(sink: &mut Sink, code: &str, ptr: &str, what: &str, id: &str, known: &[&str]) {
    let hint = did_you_mean(id, known.iter().copied());
    let repair = match hint.first() {
        Some(close) => format!(
            "did you mean `{close}`? otherwise declare a node `{id}` in this scope or remove the reference"
        ),
        None => format!(
            "declare a node `{id}` in this scope, or remove the reference (nodes here: {})",
            list(known)
        ),
    };
    sink.push(
        code,
        ptr,
        format!("{what} `{id}`, which is not a node of this scope"),
        repair,
    );
}

fn list(names: &[&str]) -> String {
    if names.is_empty() {
        return "none".into();
    }
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// AG112–AG115, AG117, AG133.
fn references(scope: &Scope, sink: &mut Sink) {
    let known = names(scope);
    let is_node = |id: &str| known.contains(&id);
    for e in &scope.edges {
        if e.explicit && e.kind == "sequence" && e.when.is_some() {
            sink.push("AG103", &format!("{}/when", e.pointer),
                format!("the sequence edge `{}` → `{}` declares `when`; a sequence edge is taken whenever its source succeeds", e.from, e.to),
                "set `kind: conditional` to guard the edge, or remove `when`");
        }
        if e.explicit {
            for (end, id) in [("from", &e.from), ("to", &e.to)] {
                if !is_node(id) {
                    unknown(
                        sink,
                        "AG113",
                        &format!("{}/{end}", e.pointer),
                        &format!("this edge's `{end}` names"),
                        id,
                        &known,
                    );
                }
            }
        } else if !is_node(&e.from) {
            unknown(
                sink,
                "AG114",
                &e.pointer,
                "`depends_on` names",
                &e.from,
                &known,
            );
        }
    }
    let eps: Vec<String> = scope
        .value
        .get("entrypoints")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    for (i, ep) in eps.iter().enumerate() {
        let ptr = format!("{}/entrypoints/{i}", scope.pointer);
        if !is_node(ep) {
            let code = if scope.root { "AG115" } else { "AG133" };
            unknown(sink, code, &ptr, "`entrypoints` names", ep, &known);
        } else if let Some(e) = scope.edges.iter().find(|e| &e.to == ep && is_node(&e.from)) {
            sink.push("AG112", &ptr,
                format!("entrypoint `{ep}` has an incoming edge from `{}`; an entrypoint is ready at the start, so nothing may lead into it", e.from),
                format!("remove `{ep}` from `entrypoints`, or remove the edge from `{}`", e.from));
        }
    }
    for id in &known {
        if *id == "self" {
            sink.push(
                "AG117",
                &scope.node_ptr(id),
                "`self` is a reserved namespace root and cannot be a node id",
                "rename the node (and every reference to it)",
            );
        }
    }
}

/// AG111: the effective edge set is acyclic (§8.4).
fn cycles(scope: &Scope, sink: &mut Sink) {
    let known: HashSet<&str> = names(scope).into_iter().collect();
    let ids: Vec<&str> = names(scope);
    let mut g = petgraph::Graph::<&str, ()>::new();
    let idx: HashMap<&str, petgraph::graph::NodeIndex> =
        ids.iter().map(|n| (*n, g.add_node(*n))).collect();
    for e in scope
        .edges
        .iter()
        .filter(|e| known.contains(e.from.as_str()) && known.contains(e.to.as_str()))
    {
        g.add_edge(idx[e.from.as_str()], idx[e.to.as_str()], ());
    }
    for scc in petgraph::algo::tarjan_scc(&g) {
        let cyclic = scc.len() > 1 || scc.first().is_some_and(|n| g.contains_edge(*n, *n));
        if !cyclic {
            continue;
        }
        let mut members: Vec<&str> = scc.iter().map(|i| g[*i]).collect();
        members.sort_by_key(|m| scope.nodes().position(|(id, _)| id == m));
        let edge = scope
            .edges
            .iter()
            .find(|e| members.contains(&e.from.as_str()) && members.contains(&e.to.as_str()));
        let ptr = edge.map_or_else(|| scope.node_ptr(members[0]), |e| e.pointer.clone());
        sink.push("AG111", &ptr,
            format!("the edges of this scope form a cycle through {}", list(&members)),
            "remove one of these dependencies; iteration belongs in a `loop` node, whose body the graph runs again");
    }
}

const TYPE_BLOCKS: [&str; 5] = ["decision", "gate", "loop", "map", "subgraph"];

fn node_rules(
    model: &Model,
    scope: &Scope,
    id: &str,
    node: &Map<String, Json>,
    np: &str,
    sink: &mut Sink,
) {
    let ty = node.get("type").and_then(Json::as_str).unwrap_or("task");
    for block in TYPE_BLOCKS {
        if block != ty && node.contains_key(block) {
            sink.push(
                "AG101",
                &format!("{np}/{block}"),
                format!("node `{id}` is a `{ty}` node but declares a `{block}` block"),
                format!("remove the `{block}` block, or set `type: {block}`"),
            );
        }
    }
    if ty == "gate" && node.contains_key("intelligence") {
        sink.push("AG102", &format!("{np}/intelligence"), format!("gate `{id}` declares `intelligence`; a gate is a human decision and never calls a model"), "remove `intelligence` from the gate");
    }
    for (name, input) in node
        .get("inputs")
        .and_then(Json::as_object)
        .into_iter()
        .flatten()
    {
        let given: Vec<&str> = ["from", "template", "value"]
            .into_iter()
            .filter(|k| input.get(*k).is_some())
            .collect();
        if given.len() > 1 {
            sink.push(
                "AG104",
                &format!("{np}/inputs/{}", pointer_token(name)),
                format!(
                    "input `{name}` declares {}; at most one may say where the value comes from",
                    list(&given)
                ),
                format!("keep one of {} and remove the others", list(&given)),
            );
        }
    }
    join(scope, id, node, np, sink);
    decision(id, node, np, sink);
    intelligence(node, np, sink);
    for block in ["loop", "map", "subgraph"] {
        if let Some(name) = node
            .get(block)
            .and_then(|b| b.get("use"))
            .and_then(Json::as_str)
            && !model.fragments.contains_key(name)
        {
            let known: Vec<&str> = model.fragments.keys().map(String::as_str).collect();
            let hint = did_you_mean(name, known.iter().copied());
            sink.push(
                "AG132",
                &format!("{np}/{block}/use"),
                format!(
                    "`{block}.use` names the fragment `{name}`, which `subgraphs` does not declare"
                ),
                match hint.first() {
                    Some(h) => {
                        format!("did you mean `{h}`? otherwise add `{name}` under `subgraphs`")
                    }
                    None => format!(
                        "add a fragment `{name}` under `subgraphs` (declared: {})",
                        list(&known)
                    ),
                },
            );
        }
    }
    failure(model, scope, id, node, np, sink);
}

fn join(scope: &Scope, id: &str, node: &Map<String, Json>, np: &str, sink: &mut Sink) {
    let incoming = scope.edges.iter().filter(|e| e.to == id).count();
    if node.get("join").and_then(Json::as_str) == Some("n_of")
        && let Some(k) = node.get("join_count").and_then(Json::as_u64)
        && usize::try_from(k).unwrap_or(usize::MAX) > incoming
    {
        sink.push("AG116", &format!("{np}/join_count"),
            format!("`join_count` is {k} but node `{id}` has {incoming} incoming edge(s), so it could never become ready"),
            format!("set `join_count` to at most {incoming}, or add the missing dependencies"));
    }
}

fn decision(id: &str, node: &Map<String, Json>, np: &str, sink: &mut Sink) {
    let ty = node.get("type").and_then(Json::as_str).unwrap_or("task");
    if matches!(ty, "decision" | "gate")
        && node
            .get("outputs")
            .and_then(|o| o.get("decision"))
            .is_some()
    {
        sink.push("AG122", &format!("{np}/outputs/decision"),
            format!("node `{id}` declares an output `decision`, which a {ty} node reserves for its selected label"),
            "rename the output (for example `decision_reason`)");
    }
    let Some(d) = node.get("decision").and_then(Json::as_object) else {
        return;
    };
    let expression = d.get("evaluator").and_then(Json::as_str) == Some("expression");
    let branches = d
        .get("branches")
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, b) in branches.iter().enumerate() {
        let bp = format!("{np}/decision/branches/{i}");
        let label = b.get("label").and_then(Json::as_str).unwrap_or_default();
        if expression && b.get("when").is_none() {
            sink.push("AG121", &bp,
                format!("branch `{label}` of decision `{id}` has no `when`, and an expression-evaluated decision selects branches only by their conditions"),
                format!("add `when: <expression>` to branch `{label}` (use `default_branch` for a fallback)"));
        }
        if let Some(first) = seen.insert(label.to_owned(), i) {
            sink.push(
                "AG124",
                &format!("{bp}/label"),
                format!(
                    "decision `{id}` declares the branch `{label}` twice (first as branch {first})"
                ),
                "give each branch a distinct label, or merge the two",
            );
        }
    }
    if let Some(default) = d.get("default_branch").and_then(Json::as_str)
        && !seen.contains_key(default)
    {
        let labels: Vec<&str> = seen.keys().map(String::as_str).collect();
        sink.push(
            "AG123",
            &format!("{np}/decision/default_branch"),
            format!("`default_branch` is `{default}`, which is not one of the branches"),
            format!("use one of {}", list(&labels)),
        );
    }
}

const TIERS: [&str; 4] = ["minimal", "standard", "advanced", "frontier"];

fn intelligence(node: &Map<String, Json>, np: &str, sink: &mut Sink) {
    let Some(i) = node.get("intelligence") else {
        return;
    };
    let tier = i
        .get("tier")
        .and_then(Json::as_str)
        .and_then(|t| TIERS.iter().position(|x| *x == t));
    if let (Some(t), Some(level)) = (tier, i.get("level").and_then(Json::as_u64))
        && level != t as u64 + 1
    {
        sink.push(
            "AG141",
            &format!("{np}/intelligence/level"),
            format!(
                "`level: {level}` disagrees with `tier: {}`, which is level {}",
                TIERS[t],
                t + 1
            ),
            format!(
                "set `level: {}`, or remove `level` (it only mirrors the tier)",
                t + 1
            ),
        );
    }
    let up = i
        .get("escalate_to")
        .and_then(Json::as_str)
        .and_then(|t| TIERS.iter().position(|x| *x == t));
    if let (Some(t), Some(u)) = (tier, up)
        && u < t
    {
        sink.push(
            "AG142",
            &format!("{np}/intelligence/escalate_to"),
            format!(
                "`escalate_to: {}` is below `tier: {}`; escalation must not lower the tier",
                TIERS[u], TIERS[t]
            ),
            format!(
                "set `escalate_to` to `{}` or higher, or remove it",
                TIERS[t]
            ),
        );
    }
}

fn failure(
    model: &Model,
    scope: &Scope,
    id: &str,
    node: &Map<String, Json>,
    np: &str,
    sink: &mut Sink,
) {
    let Some(f) = node.get("failure") else { return };
    let required_outputs: Vec<String> = node
        .get("outputs")
        .and_then(Json::as_object)
        .into_iter()
        .flatten()
        .filter(|(_, o)| o.get("required").and_then(Json::as_bool) != Some(false))
        .map(|(k, _)| k.clone())
        .collect();
    let criteria: HashSet<&str> = node
        .pointer("/success/criteria")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("id")?.as_str())
        .collect();
    let outputs: HashSet<&str> = node
        .get("outputs")
        .and_then(Json::as_object)
        .into_iter()
        .flatten()
        .map(|(k, _)| k.as_str())
        .collect();
    for (i, step) in f
        .get("fallback")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let sp = format!("{np}/failure/fallback/{i}");
        match step.get("strategy").and_then(Json::as_str) {
            Some("alternate_node") => {
                let alt = step.get("node").and_then(Json::as_str).unwrap_or_default();
                let Some(other) = scope.node(alt) else {
                    sink.push(
                        "AG151",
                        &format!("{sp}/node"),
                        format!("the alternate node `{alt}` is not a node of this scope"),
                        "name a node of this scope that declares this node's required outputs",
                    );
                    continue;
                };
                let theirs = model.declared_outputs(scope, other);
                let missing: Vec<&str> = required_outputs
                    .iter()
                    .map(String::as_str)
                    .filter(|o| !theirs.contains(*o))
                    .collect();
                if !missing.is_empty() {
                    sink.push(
                        "AG151",
                        &format!("{sp}/node"),
                        format!(
                            "alternate node `{alt}` does not declare {} that `{id}` requires",
                            list(&missing)
                        ),
                        format!(
                            "declare {} on `{alt}`, or choose another alternate",
                            list(&missing)
                        ),
                    );
                }
            }
            Some(kind @ ("relax_criteria" | "degrade_outputs")) => {
                let (field, have, what) = if kind == "relax_criteria" {
                    ("criteria", &criteria, "criterion")
                } else {
                    ("outputs", &outputs, "output")
                };
                for (j, name) in step
                    .get(field)
                    .and_then(Json::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    let n = name.as_str().unwrap_or_default();
                    if !have.contains(n) {
                        let known: Vec<&str> = have.iter().copied().collect();
                        sink.push("AG153", &format!("{sp}/{field}/{j}"), format!("`{kind}` names the {what} `{n}`, which node `{id}` does not declare"), format!("use one of {}", list(&known)));
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(comp) = f.get("compensation").and_then(Json::as_str) {
        match scope.node(comp) {
            None => unknown(
                sink,
                "AG113",
                &format!("{np}/failure/compensation"),
                "`compensation` names",
                comp,
                &names(scope),
            ),
            Some(c) if c.pointer("/failure/compensation").is_some() => sink.push(
                "AG152",
                &format!("{np}/failure/compensation"),
                format!("compensation node `{comp}` declares its own `compensation`"),
                format!("remove `failure.compensation` from `{comp}`"),
            ),
            Some(_) => {}
        }
    }
}

/// AG131 within a document: named fragments that use each other in a cycle.
fn fragment_recursion(model: &Model, sink: &mut Sink) {
    let mut uses: HashMap<&str, Vec<&str>> = HashMap::new();
    for (name, frag) in &model.fragments {
        let text = Json::Object((*frag).clone()).to_string();
        for other in model.fragments.keys() {
            if text.contains(&format!("\"use\":\"{other}\"")) {
                uses.entry(name.as_str()).or_default().push(other.as_str());
            }
        }
    }
    for name in model.fragments.keys() {
        let mut seen = HashSet::new();
        let mut todo = uses.get(name.as_str()).cloned().unwrap_or_default();
        while let Some(n) = todo.pop() {
            if n == name {
                sink.push(
                    "AG131",
                    &format!("/subgraphs/{}", pointer_token(name)),
                    format!("fragment `{name}` uses itself (directly or through other fragments)"),
                    "break the cycle; a fragment must not run itself",
                );
                break;
            }
            if seen.insert(n) {
                todo.extend(uses.get(n).cloned().unwrap_or_default());
            }
        }
    }
}
