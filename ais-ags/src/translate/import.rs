//! AGS → AG-IR (`ais import`): each node an instruction, each node output a carry, the
//! sequential schedule of SPEC.md §17.4 as the control plane, and everything AG-IR cannot say
//! carried in `x-ags` unknown fields (see docs/AGS.md for the table).

use super::{CARRY_SEP, TERMINAL_ID, X_AGS, X_AIS, ags_type_to_ais, carry_name};
use crate::graph::{Graph, Node, NodeType};
use ais_core::{
    Carry, Edge, EnumMember, Instruction, Modality, Opcode, Owner, Program, Role, Tool, TypeDecl,
    TypeKind, Value, Walker,
};
use serde_json::{Map, Value as Json};

/// Why a document cannot be imported.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportError(pub String);

/// The opcode realizing a node type.
pub(crate) fn opcode_of(ty: NodeType) -> Opcode {
    match ty {
        NodeType::Decision => Opcode::GenEnum,
        NodeType::Gate => Opcode::Sense,
        NodeType::Loop | NodeType::Subgraph => Opcode::Call,
        NodeType::Map => Opcode::Spawn,
        NodeType::Task => Opcode::GenRaw,
    }
}

/// The sequential schedule (§17.4 with `max_parallel_nodes: 1`): topological order over the
/// effective edge set, ties broken by declaration order. Kahn's algorithm with the ready nodes
/// in a heap by declaration index: `O((nodes + edges) log nodes)`.
pub fn schedule(doc: &Graph) -> Vec<String> {
    let index = |id: &str| doc.nodes.get_index_of(id);
    let mut preds: Vec<(usize, usize)> = Vec::new();
    for (to, n) in doc.nodes.values().enumerate() {
        preds.extend(
            n.depends_on
                .iter()
                .flatten()
                .filter_map(|d| Some((index(d)?, to))),
        );
    }
    for e in doc.edge_list() {
        if let (Some(f), Some(t)) = (index(&e.from), index(&e.to)) {
            preds.push((f, t));
        }
    }
    order(doc.nodes.len(), &preds)
        .into_iter()
        .filter_map(|i| doc.nodes.get_index(i).map(|(id, _)| id.clone()))
        .collect()
}

/// Topological order of the indices `0..n` under `preds` (from, to), the lowest ready index
/// first; a cycle (AG111) leaves the rest in index order.
fn order(n: usize, preds: &[(usize, usize)]) -> Vec<usize> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut waiting = vec![0usize; n];
    let mut after: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(f, t) in preds {
        waiting[t] += 1;
        after[f].push(t);
    }
    let mut ready: BinaryHeap<Reverse<usize>> =
        (0..n).filter(|&i| waiting[i] == 0).map(Reverse).collect();
    let mut done = vec![false; n];
    let mut out = Vec::with_capacity(n);
    while let Some(Reverse(i)) = ready.pop() {
        done[i] = true;
        out.push(i);
        for &t in &after[i] {
            waiting[t] -= 1;
            if waiting[t] == 0 {
                ready.push(Reverse(t));
            }
        }
    }
    // A cycle (AG111): the rest in declaration order.
    out.extend((0..n).filter(|&i| !done[i]));
    out
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
fn carried(doc: &Graph, data: &Json) -> Option<Program> {
    let text = doc.extra.get(X_AIS)?.get("agir")?.as_str()?;
    let program = ais_core::agir::read(text).ok()?.program;
    (super::export(&program) == *data).then_some(program)
}

/// The fields of a value as data (a struct of this crate's graph written back).
fn fields(v: &impl serde::Serialize) -> Map<String, Json> {
    match serde_json::to_value(v) {
        Ok(Json::Object(m)) => m,
        _ => Map::new(),
    }
}

/// Imports a graph (already checked) as an AIS program.
pub fn import(doc: &Graph) -> Result<Program, ImportError> {
    let mut residue = fields(doc);
    if let Some(p) = carried(doc, &Json::Object(residue.clone())) {
        return Ok(p);
    }
    residue.remove("id");
    residue.remove("objective");
    residue.remove("nodes");
    residue.insert(
        "x-ags-node-order".into(),
        Json::from(doc.nodes.keys().cloned().collect::<Vec<_>>()),
    );
    let mut p = Program {
        name: Some(doc.id.clone()),
        description: Some(doc.objective.clone()),
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
        let Some(node) = doc.node(nid) else {
            continue;
        };
        let (mut ins, mut cs, ty) = instruction(nid, node);
        let gate = ins.tool.as_deref() == Some("ask_user");
        if gate {
            let text = node.gate.as_ref().and_then(|g| g.prompt.as_deref());
            let (ask, prompt) = gate_prompt(nid, text.unwrap_or(&node.title));
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
    for o in doc.outputs.iter().flat_map(|o| o.values()) {
        if let Some(r) = read_of(&o.from)
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

/// The CODE that frames a gate's question `text` (its `prompt` as literal text, or its title),
/// and the carry it writes.
pub(crate) fn gate_prompt(nid: &str, text: &str) -> (Instruction, Carry) {
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
fn instruction(nid: &str, node: &Node) -> (Instruction, Vec<Carry>, Option<TypeDecl>) {
    let ty = node.kind();
    let mut residue = fields(node);
    residue.remove("description");
    let mut carries = Vec::new();
    let mut writes = Vec::new();
    for (name, spec) in node.outputs.iter().flatten() {
        let mut rest = fields(spec);
        rest.remove("description");
        // `type` last, where the exporter puts it back from.
        rest.remove("type");
        rest.insert("type".into(), Json::String(spec.ty.to_string()));
        let c = carry_name(nid, name);
        writes.push(c.clone());
        carries.push(Carry {
            name: c,
            ty: Some(ags_type_to_ais(spec.ty.as_str())),
            produced_by: Some(nid.to_owned()),
            doc: Some(spec.description.clone()),
            extra: vec![(X_AGS.into(), Value::from_json(&Json::Object(rest)))],
            ..Carry::default()
        });
    }
    // Outputs a loop, map, subgraph or input gate produces by collecting: carries too, but
    // written back from their own blocks, not from `outputs`.
    let collected = [
        node.loop_block.as_ref().and_then(|b| b.collect.as_ref()),
        node.map_block.as_ref().and_then(|b| b.collect.as_ref()),
        node.subgraph.as_ref().and_then(|b| b.outputs_from.as_ref()),
    ]
    .into_iter()
    .flatten()
    .flat_map(indexmap::IndexMap::keys)
    .chain(
        node.gate
            .iter()
            .flat_map(|g| g.collect.iter().flat_map(indexmap::IndexMap::keys)),
    );
    for name in collected {
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
    if residue.contains_key("outputs") {
        // The outputs live in the carries; keep only their order.
        let names: Vec<Json> = node.output_names().cloned().map(Json::String).collect();
        residue.insert("outputs".into(), Json::Array(names));
    }
    let mut label_type = None;
    let mut output = None;
    if ty == NodeType::Gate {
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
    if ty == NodeType::Decision {
        let c = carry_name(nid, "decision");
        writes.insert(0, c.clone());
        let tname = format!("{nid}{CARRY_SEP}label");
        let members = node
            .decision
            .iter()
            .flat_map(|d| &d.branches)
            .map(|b| EnumMember {
                name: b.label.clone(),
                doc: Some(b.description.clone()),
            })
            .collect();
        label_type = Some(TypeDecl {
            name: tname.clone(),
            kind: TypeKind::Enum(members),
            doc: None,
            extra: Vec::new(),
        });
        output = Some(ais_core::Type::parse(&tname));
        carries.insert(
            0,
            Carry {
                name: c,
                ty: Some(ais_core::Type::parse(&tname)),
                produced_by: Some(nid.to_owned()),
                doc: Some(format!("The label `{nid}` selected.")),
                ..Carry::default()
            },
        );
    }
    let reads = node
        .inputs
        .iter()
        .flat_map(|i| i.values())
        .filter_map(|i| i.from.as_deref().and_then(read_of))
        .collect();
    // Each map item runs in a fresh body scope (§7.5): no sibling writes shared state.
    let concurrency = (ty == NodeType::Map).then(|| ais_core::Concurrency {
        isolation: Some(ais_core::Isolation::PrivateWrite),
        ..ais_core::Concurrency::default()
    });
    let gate = ty == NodeType::Gate;
    let ins = Instruction {
        id: nid.to_owned(),
        owner: gate.then_some(Owner::Code),
        tool: gate.then(|| "ask_user".to_owned()),
        opcode: opcode_of(ty),
        reads,
        writes,
        output,
        concurrency,
        doc: Some(node.description.clone()),
        extra: vec![(X_AGS.into(), Value::from_json(&Json::Object(residue)))],
        ..Instruction::default()
    };
    (ins, carries, label_type)
}

#[cfg(test)]
mod schedule_tests {
    use super::order;
    use proptest::prelude::*;

    /// The schedule as it was first written: each step the first node in declaration order
    /// whose predecessors are all done (quadratic and more), a cycle's rest in that order.
    fn first_ready(n: usize, preds: &[(usize, usize)]) -> Vec<usize> {
        let mut done: Vec<usize> = Vec::new();
        while done.len() < n {
            match (0..n).find(|i| {
                !done.contains(i) && preds.iter().all(|(f, t)| t != i || done.contains(f))
            }) {
                Some(i) => done.push(i),
                None => done.extend((0..n).filter(|i| !done.contains(i)).collect::<Vec<_>>()),
            }
        }
        done
    }

    proptest! {
        #[test]
        fn kahns_order_is_the_first_ready_order(
            n in 0usize..12,
            raw in proptest::collection::vec((0usize..12, 0usize..12), 0..30),
        ) {
            // Any edges among the nodes: repeated, self-loops and cycles included.
            let preds: Vec<(usize, usize)> =
                raw.into_iter().filter(|(f, t)| *f < n && *t < n).collect();
            prop_assert_eq!(order(n, &preds), first_ready(n, &preds));
        }
    }
}
