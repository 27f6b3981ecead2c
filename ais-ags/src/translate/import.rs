//! AGS → AG-IR (`ais import`): each node an instruction, each node output a carry, the
//! sequential schedule of SPEC.md §17.4 as the control plane, and everything AG-IR cannot say
//! carried in `x-ags` unknown fields (see docs/AGS.md for the table).

use super::{CARRY_SEP, TERMINAL_ID, X_AGS, X_AIS, ags_type_to_ais, carry_name};
use crate::scope::Pointer;
use ais_core::{
    Carry, Edge, EnumMember, Instruction, Modality, Opcode, Owner, Program, Role, Tool, TypeDecl,
    TypeKind, Value, Walker,
};
use serde_json::{Map, Value as Json};

/// Why a document cannot be imported.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportError(pub String);

fn obj(v: Option<&Json>) -> Map<String, Json> {
    v.and_then(Json::as_object).cloned().unwrap_or_default()
}

/// The opcode realizing a node type.
pub(crate) fn opcode_of(ty: &str) -> Opcode {
    match ty {
        "decision" => Opcode::GenEnum,
        "gate" => Opcode::Sense,
        "loop" => Opcode::Call,
        "map" => Opcode::Spawn,
        "subgraph" => Opcode::Call,
        _ => Opcode::GenRaw,
    }
}

/// The sequential schedule (§17.4 with `max_parallel_nodes: 1`): topological order over the
/// effective edge set, ties broken by declaration order.
pub fn schedule(doc: &Json) -> Vec<String> {
    let nodes = obj(doc.get("nodes"));
    let ids: Vec<String> = nodes.keys().cloned().collect();
    let mut preds: Vec<(String, String)> = Vec::new();
    for (id, n) in &nodes {
        for d in n
            .get("depends_on")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(d) = d.as_str() {
                preds.push((d.to_owned(), id.clone()));
            }
        }
    }
    for e in doc
        .get("edges")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        if let (Some(f), Some(t)) = (
            e.get("from").and_then(Json::as_str),
            e.get("to").and_then(Json::as_str),
        ) {
            preds.push((f.to_owned(), t.to_owned()));
        }
    }
    let mut done: Vec<String> = Vec::new();
    while done.len() < ids.len() {
        let next = ids.iter().find(|id| {
            !done.contains(id)
                && preds
                    .iter()
                    .all(|(f, t)| t != *id || done.contains(f) || !ids.contains(f))
        });
        match next {
            Some(id) => done.push(id.clone()),
            // A cycle (AG111): the rest in declaration order.
            None => done.extend(
                ids.iter()
                    .filter(|id| !done.contains(id))
                    .cloned()
                    .collect::<Vec<_>>(),
            ),
        }
    }
    done
}

/// The carry an AGX `from` reads, when it is a plain `nodes.X.outputs.Y`.
fn read_of(from: &str) -> Option<String> {
    let parts: Vec<&str> = from.trim().split('.').collect();
    match parts.as_slice() {
        ["nodes", x, "outputs", y] => Some(carry_name(x, y)),
        _ => None,
    }
}

/// The program an exported document carries in `x-ais.agir`, when the document is still exactly
/// what exporting that program gives (an edited document is imported from what it says).
fn carried(doc: &Json) -> Option<Program> {
    let text = doc.get(X_AIS)?.get("agir")?.as_str()?;
    let program = ais_core::agir::read(text).ok()?.program;
    (super::export(&program) == *doc).then_some(program)
}

/// Imports a graph document (already checked) as an AIS program.
pub fn import(doc: &Json) -> Result<Program, ImportError> {
    let Some(top) = doc.as_object() else {
        return Err(ImportError("the document is not a mapping".into()));
    };
    if let Some(p) = carried(doc) {
        return Ok(p);
    }
    let id = top
        .get("id")
        .and_then(Json::as_str)
        .ok_or_else(|| ImportError("the graph has no `id`".into()))?;
    let nodes = obj(top.get("nodes"));
    let mut residue = top.clone();
    residue.remove("id");
    residue.remove("objective");
    residue.remove("nodes");
    residue.insert(
        "x-ags-node-order".into(),
        Json::from(nodes.keys().cloned().collect::<Vec<_>>()),
    );
    let mut p = Program {
        name: Some(id.to_owned()),
        description: top
            .get("objective")
            .and_then(Json::as_str)
            .map(str::to_owned),
        ..Program::default()
    };
    let mut carries = vec![Carry {
        name: "task".into(),
        ty: Some(ais_core::Type::Str),
        role: Some(Role::Input),
        doc: Some(
            "The invocation's task text (an AGS graph takes its goal from `objective`).".into(),
        ),
        ..Carry::default()
    }];
    let mut instructions = Vec::new();
    let mut types = Vec::new();
    let order = schedule(doc);
    for nid in &order {
        let node = obj(nodes.get(nid));
        let (mut ins, mut cs, ty) = instruction(nid, &node);
        let gate = ins.tool.as_deref() == Some("ask_user");
        if gate {
            let (ask, prompt) = gate_prompt(nid, &node);
            ins.reads.insert(0, prompt.name.clone());
            instructions.push(ask);
            carries.push(prompt);
        }
        instructions.push(ins);
        carries.append(&mut cs);
        types.extend(ty);
        if gate {
            let (verdict, route, approved) = gate_verdict(nid);
            instructions.push(verdict);
            instructions.push(route);
            carries.push(approved);
        }
    }
    // A read of an output no carry realizes (an external subgraph's, say) binds nothing.
    for ins in &mut instructions {
        ins.reads.retain(|r| carries.iter().any(|c| &c.name == r));
    }
    // The report holds every node output (a run record needs them all), graph outputs first.
    let mut done_reads: Vec<String> = Vec::new();
    for (_, o) in obj(top.get("outputs")) {
        if let Some(r) = o.get("from").and_then(Json::as_str).and_then(read_of)
            && carries.iter().any(|c| c.name == r)
            && !done_reads.contains(&r)
        {
            done_reads.push(r);
        }
    }
    for c in carries.iter().filter(|c| c.produced_by.is_some()) {
        if !done_reads.contains(&c.name) {
            done_reads.push(c.name.clone());
        }
    }
    instructions.push(Instruction {
        id: TERMINAL_ID.into(),
        opcode: Opcode::Terminal,
        reads: done_reads,
        doc: Some("Report the graph's outputs.".into()),
        ..Instruction::default()
    });
    let edges = schedule_edges(&instructions);
    if instructions
        .iter()
        .any(|i| i.tool.as_deref() == Some("ask_user"))
    {
        p.tools = Some(vec![Tool {
            name: "ask_user".into(),
            doc: Some("Ask the gate's approver (a built-in tool).".into()),
            ..Tool::default()
        }]);
    }
    if !types.is_empty() {
        p.types = Some(types);
    }
    p.walker = Some(Walker {
        name: Some("AgsGraph".into()),
        carries: Some(carries),
        extra: Vec::new(),
    });
    p.nodes = Some(instructions);
    p.edges = Some(edges);
    p.extra = vec![(X_AGS.into(), Value::from_json(&Json::Object(residue)))];
    Ok(p)
}

/// The control plane of the schedule: each instruction to the next, except that a gate's ROUTE
/// goes on only when the gate was approved and otherwise to the report (a rejected gate,
/// `on_reject: fail`, ends the run).
fn schedule_edges(instructions: &[Instruction]) -> Vec<Edge> {
    let mut edges = Vec::new();
    for w in instructions.windows(2) {
        // A gate's ROUTE decides in code even when both ways lead to the report (the gate
        // is the last node): a guarded edge and a default edge, never one unguarded edge (G6).
        let route = w[0].opcode == Opcode::Route;
        edges.push(Edge {
            from: w[0].id.clone(),
            to: w[1].id.clone(),
            modality: Some(if route {
                Modality::Discretionary
            } else {
                Modality::Mandatory
            }),
            guard: route.then(|| w[0].reads.first().cloned()).flatten(),
            ..Edge::default()
        });
        if route {
            edges.push(Edge {
                from: w[0].id.clone(),
                to: TERMINAL_ID.into(),
                modality: Some(Modality::Mandatory),
                ..Edge::default()
            });
        }
    }
    edges
}

/// The CODE that frames a gate's question (its `prompt` as literal text, or its title), and the
/// carry it writes.
pub(crate) fn gate_prompt(nid: &str, node: &Map<String, Json>) -> (Instruction, Carry) {
    let text = node
        .pointer("/gate/prompt")
        .or_else(|| node.get("title"))
        .and_then(Json::as_str)
        .unwrap_or("Approve?");
    let text = format!("{} (approve/reject)", text.trim());
    let c = carry_name(nid, "prompt");
    let ins = Instruction {
        id: format!("{nid}{CARRY_SEP}ask"),
        opcode: Opcode::Code,
        owner: Some(Owner::Code),
        writes: vec![c.clone()],
        body: Some(serde_json::to_string(&text).unwrap_or_default()),
        doc: Some(format!(
            "Frame the question gate `{nid}` puts to its approver."
        )),
        ..Instruction::default()
    };
    let carry = Carry {
        name: c,
        ty: Some(ais_core::Type::Str),
        produced_by: Some(ins.id.clone()),
        doc: Some(format!("The question gate `{nid}` asks.")),
        ..Carry::default()
    };
    (ins, carry)
}

/// The DU verdict over a gate's answer and the ROUTE that tests it (spec §4.4.1: a route over
/// human feedback is code, guarded by a carry code produced), and the verdict's carry.
pub(crate) fn gate_verdict(nid: &str) -> (Instruction, Instruction, Carry) {
    let answer = carry_name(nid, "answer");
    let approved = carry_name(nid, "approved");
    let verdict = Instruction {
        id: format!("{nid}{CARRY_SEP}verdict"),
        opcode: Opcode::Code,
        owner: Some(Owner::Code),
        reads: vec![answer.clone()],
        writes: vec![approved.clone()],
        body: Some(format!(
            "{answer}.strip().lower() in [\"approve\", \"approved\", \"yes\", \"y\", \"ok\"]"
        )),
        doc: Some(format!("Whether the approver approved gate `{nid}`.")),
        ..Instruction::default()
    };
    let route = Instruction {
        id: format!("{nid}{CARRY_SEP}route"),
        opcode: Opcode::Route,
        owner: Some(Owner::Code),
        reads: vec![approved.clone()],
        doc: Some(format!(
            "Go on past gate `{nid}` only when it was approved."
        )),
        ..Instruction::default()
    };
    let carry = Carry {
        name: approved,
        ty: Some(ais_core::Type::Bool),
        produced_by: Some(verdict.id.clone()),
        doc: Some(format!("True when gate `{nid}` was approved.")),
        ..Carry::default()
    };
    (verdict, route, carry)
}

/// One node as an instruction, its output carries, and (for a decision) its label type.
fn instruction(nid: &str, node: &Map<String, Json>) -> (Instruction, Vec<Carry>, Option<TypeDecl>) {
    let ty = node.get("type").and_then(Json::as_str).unwrap_or("task");
    let mut residue = node.clone();
    residue.remove("description");
    let outputs = obj(node.get("outputs"));
    let mut carries = Vec::new();
    let mut writes = Vec::new();
    for (name, spec) in &outputs {
        let mut rest = spec.as_object().cloned().unwrap_or_default();
        let ags_ty = rest
            .remove("type")
            .and_then(|t| t.as_str().map(str::to_owned))
            .unwrap_or_default();
        let doc = rest
            .remove("description")
            .and_then(|d| d.as_str().map(str::to_owned));
        rest.insert("type".into(), Json::String(ags_ty.clone()));
        let c = carry_name(nid, name);
        writes.push(c.clone());
        carries.push(Carry {
            name: c,
            ty: Some(ags_type_to_ais(&ags_ty)),
            produced_by: Some(nid.to_owned()),
            doc,
            extra: vec![(X_AGS.into(), Value::from_json(&Json::Object(rest)))],
            ..Carry::default()
        });
    }
    // Outputs a loop, map, subgraph or input gate produces by collecting: carries too, but
    // written back from their own blocks, not from `outputs`.
    for block in [
        "/loop/collect",
        "/map/collect",
        "/subgraph/outputs_from",
        "/gate/collect",
    ] {
        for name in obj(node.pointer(block)).keys() {
            let c = carry_name(nid, name);
            if !writes.contains(&c) {
                writes.push(c.clone());
                carries.push(Carry {
                    name: c,
                    ty: Some(ais_core::Type::Any),
                    produced_by: Some(nid.to_owned()),
                    doc: Some(format!("`{name}`, as `{nid}` collects it.")),
                    ..Carry::default()
                });
            }
        }
    }
    if let Some(o) = residue.get_mut("outputs").and_then(Json::as_object_mut) {
        // The outputs live in the carries; keep only their order.
        let names: Vec<Json> = o.keys().cloned().map(Json::String).collect();
        residue.insert("outputs".into(), Json::Array(names));
    }
    let mut label_type = None;
    let mut output = None;
    if ty == "gate" {
        // The approver's answer; `gate_verdict` reads it.
        let c = carry_name(nid, "answer");
        writes.insert(0, c.clone());
        carries.insert(
            0,
            Carry {
                name: c,
                ty: Some(ais_core::Type::Str),
                produced_by: Some(nid.to_owned()),
                doc: Some(format!("The approver's answer to `{nid}`.")),
                ..Carry::default()
            },
        );
    }
    if ty == "decision" {
        let c = carry_name(nid, "decision");
        writes.insert(0, c.clone());
        let mut carry = Carry {
            name: c,
            ty: Some(ais_core::Type::Str),
            produced_by: Some(nid.to_owned()),
            doc: Some(format!("The label `{nid}` selected.")),
            ..Carry::default()
        };
        if ty == "decision" {
            let tname = format!("{nid}{CARRY_SEP}label");
            let members = node
                .pointer("/decision/branches")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
                .filter_map(|b| {
                    Some(EnumMember {
                        name: b.get("label")?.as_str()?.to_owned(),
                        doc: b
                            .get("description")
                            .and_then(Json::as_str)
                            .map(str::to_owned),
                    })
                })
                .collect();
            label_type = Some(TypeDecl {
                name: tname.clone(),
                kind: TypeKind::Enum(members),
                doc: None,
                extra: Vec::new(),
            });
            carry.ty = Some(ais_core::Type::parse(&tname));
            output = Some(ais_core::Type::parse(&tname));
        }
        carries.insert(0, carry);
    }
    let reads = obj(node.get("inputs"))
        .values()
        .filter_map(|i| i.get("from").and_then(Json::as_str).and_then(read_of))
        .collect();
    let opcode = opcode_of(ty);
    // Each map item runs in a fresh body scope (§7.5): no sibling writes shared state.
    let concurrency = (ty == "map").then(|| ais_core::Concurrency {
        isolation: Some(ais_core::Isolation::PrivateWrite),
        ..ais_core::Concurrency::default()
    });
    let ins = Instruction {
        id: nid.to_owned(),
        owner: if ty == "gate" {
            Some(Owner::Code)
        } else {
            None
        },
        tool: (ty == "gate").then(|| "ask_user".to_owned()),
        opcode,
        reads,
        writes,
        output,
        concurrency,
        doc: node
            .get("description")
            .and_then(Json::as_str)
            .map(str::to_owned),
        extra: vec![(X_AGS.into(), Value::from_json(&Json::Object(residue)))],
        ..Instruction::default()
    };
    (ins, carries, label_type)
}
