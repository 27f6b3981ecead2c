//! AIS → AGS (`ais export --ags`): a program imported from AGS is rebuilt from its realization
//! and its `x-ags` fields; any other program becomes a sequential graph of task nodes, one per
//! instruction, with the exact program carried in `x-ais` (AGS cannot say carries, guards, back
//! edges, tools or knowledge).

use super::{X_AGS, X_AIS, carry_name};
use ais_core::{Instruction, Program, Value};
use serde_json::{Map, Value as Json, json};
use std::collections::HashSet;

fn x_ags(extra: &[(String, Value)]) -> Option<Json> {
    extra
        .iter()
        .find(|(k, _)| k == X_AGS)
        .map(|(_, v)| v.to_json())
}

/// Writes a program as an AGS 1.0 graph document.
pub fn export(p: &Program) -> Json {
    match x_ags(&p.extra) {
        Some(Json::Object(residue)) => rebuild(p, residue),
        _ => native(p),
    }
}

/// A program [`super::import`] made: the graph back from the realization and the residue.
fn rebuild(p: &Program, mut top: Map<String, Json>) -> Json {
    let order: Vec<String> = top
        .remove("x-ags-node-order")
        .and_then(|o| serde_json::from_value(o).ok())
        .unwrap_or_default();
    let mut doc = Map::new();
    for key in ["ags_version", "kind"] {
        if let Some(v) = top.remove(key) {
            doc.insert(key.into(), v);
        }
    }
    if let Some(name) = &p.name {
        doc.insert("id".into(), Json::String(name.clone()));
    }
    if let Some(v) = top.remove("title") {
        doc.insert("title".into(), v);
    }
    if let Some(d) = &p.description {
        doc.insert("objective".into(), Json::String(d.clone()));
    }
    let mut nodes = Map::new();
    for id in &order {
        if let Some(ins) = p.instructions().iter().find(|i| &i.id == id) {
            nodes.insert(id.clone(), node_of(p, ins));
        }
    }
    let rest: Vec<(String, Json)> = top.into_iter().collect();
    for (k, v) in rest {
        if k == "entrypoints" {
            doc.insert(k, v);
            doc.insert("nodes".into(), Json::Object(nodes.clone()));
        } else {
            doc.insert(k, v);
        }
    }
    if !doc.contains_key("nodes") {
        doc.insert("nodes".into(), Json::Object(nodes));
    }
    Json::Object(doc)
}

fn node_of(p: &Program, ins: &Instruction) -> Json {
    let mut node = match x_ags(&ins.extra) {
        Some(Json::Object(m)) => m,
        _ => Map::new(),
    };
    let mut out = Map::new();
    let names: Vec<String> = node
        .get("outputs")
        .and_then(|o| serde_json::from_value(o.clone()).ok())
        .unwrap_or_default();
    for name in &names {
        let c = carry_name(&ins.id, name);
        let Some(carry) = p.carries().iter().find(|k| k.name == c) else {
            continue;
        };
        let mut spec = match x_ags(&carry.extra) {
            Some(Json::Object(m)) => m,
            _ => Map::new(),
        };
        let mut ordered = Map::new();
        if let Some(t) = spec.remove("type") {
            ordered.insert("type".into(), t);
        }
        if let Some(d) = &carry.doc {
            ordered.insert("description".into(), Json::String(d.clone()));
        }
        ordered.extend(spec);
        out.insert(name.clone(), Json::Object(ordered));
    }
    let mut rebuilt = Map::new();
    for (k, v) in node.iter_mut() {
        if k == "outputs" {
            rebuilt.insert(k.clone(), Json::Object(out.clone()));
        } else {
            rebuilt.insert(k.clone(), v.take());
        }
        if k == "title"
            && let Some(d) = &ins.doc
        {
            rebuilt.insert("description".into(), Json::String(d.clone()));
        }
    }
    if !rebuilt.contains_key("description")
        && let Some(d) = &ins.doc
    {
        rebuilt.insert("description".into(), Json::String(d.clone()));
    }
    Json::Object(rebuilt)
}

/// A node id AGS accepts (`^[a-z0-9](?:[a-z0-9_-]{0,62}[a-z0-9])?$`), distinct from `taken`.
fn node_id(id: &str, taken: &mut HashSet<String>) -> String {
    let mut s: String = id
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    s = s
        .trim_matches(|c| c == '_' || c == '-')
        .chars()
        .take(56)
        .collect();
    if s.is_empty() || s == "self" {
        s = format!("n{}", taken.len());
    }
    let mut out = s.clone();
    let mut n = 2;
    while !taken.insert(out.clone()) {
        out = format!("{s}-{n}");
        n += 1;
    }
    out
}

/// Any other program: one task node per instruction, in program order, each depending on the
/// instructions with an unguarded edge into it from earlier in the order (the rest of the control
/// plane — guards, back edges — is carried); the program itself in `x-ais.agir`.
fn native(p: &Program) -> Json {
    let mut taken = HashSet::new();
    let ids: Vec<String> = p
        .instructions()
        .iter()
        .map(|i| node_id(&i.id, &mut taken))
        .collect();
    let pos = |id: &str| p.instructions().iter().position(|i| i.id == id);
    let mut nodes = Map::new();
    for (i, ins) in p.instructions().iter().enumerate() {
        let deps: Vec<String> = p
            .edges
            .iter()
            .flatten()
            .filter(|e| e.to == ins.id && e.guard.is_none())
            .filter_map(|e| pos(&e.from).filter(|f| *f < i).map(|f| ids[f].clone()))
            .fold(Vec::new(), |mut v, d| {
                if !v.contains(&d) {
                    v.push(d);
                }
                v
            });
        let title: String = format!("{} {}", ins.opcode, ins.id)
            .chars()
            .take(200)
            .collect();
        let description = ins
            .doc
            .clone()
            .filter(|d| !d.trim().is_empty())
            .unwrap_or_else(|| {
                format!(
                    "Carry out the AIS instruction `{}` ({}).",
                    ins.id, ins.opcode
                )
            });
        let mut node = json!({"title": title, "description": description, "x-ais-id": ins.id});
        if !deps.is_empty() {
            node["depends_on"] = json!(deps);
        }
        nodes.insert(ids[i].clone(), node);
    }
    let mut ids = ids;
    if nodes.is_empty() {
        // AGS needs a node; the program has none to give.
        nodes.insert("empty".into(), json!({"title": "No instructions", "description": "The AIS program has no instructions; there is nothing to do.", "x-ais-placeholder": true}));
        ids.push("empty".into());
    }
    let name = p.name.clone().unwrap_or_else(|| "ais-program".into());
    let id: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._:/-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    let id = if id.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        id
    } else {
        format!("ais-{id}")
    };
    let entry: Vec<String> = ids.first().cloned().into_iter().collect();
    let mut doc = json!({
        "ags_version": "1.0",
        "kind": "AgenticGraph",
        "id": id.chars().take(200).collect::<String>(),
        "title": name.chars().take(200).collect::<String>(),
        "objective": p.description.clone().filter(|d| !d.trim().is_empty()).unwrap_or_else(|| format!("Run the AIS program `{name}`.")),
        "entrypoints": entry,
        "nodes": nodes,
    });
    doc[X_AIS] = json!({"agir": ais_core::agir::write(p)});
    doc
}
