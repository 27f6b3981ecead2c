//! The run-time program of an AGS graph (docs/AGS.md, "Running"): the import, plus what the
//! harness does between nodes. After every task node a *judge* — a SENSE calling the native
//! tool `<node>__judge`, which the CLI registers ([`judge`]) — collects the node's outputs,
//! writes its `file` outputs under the output root, evaluates its success criteria and
//! decides; a ROUTE then goes on to the next node (passed), back to the node for another
//! attempt with the failed criteria as feedback (retry), or to the report (exhausted: the run
//! stops there). So each node's criteria are evaluated before the next node starts
//! (SPEC.md §10.3), inside the runtime's journal: a paused or resumed run replays them.

pub mod human;
pub mod judge;
pub mod record;

use crate::translate::{CARRY_SEP, TERMINAL_ID, carry_name};
use ais_core::{Carry, Edge, Instruction, Modality, Opcode, Owner, Program, Tool, ToolSurface};
use serde_json::{Map, Value as Json};

/// The carries a judge writes for node `nid`, in its signature's order: whether the node
/// passed, whether it is retried, the feedback its next attempt reads, and its verdict (the
/// record of every attempt so far).
pub fn judge_writes(nid: &str) -> [String; 4] {
    ["passed", "retry", "feedback", "verdict"].map(|w| carry_name(nid, w))
}

/// The name of the judge tool (and instruction) of node `nid`.
pub fn judge_name(nid: &str) -> String {
    carry_name(nid, "judge")
}

/// The task nodes a judge follows, in the schedule's order.
pub fn judged(doc: &Json) -> Vec<String> {
    let nodes = doc.get("nodes").and_then(Json::as_object);
    crate::schedule(doc)
        .into_iter()
        .filter(|id| {
            nodes
                .and_then(|n| n.get(id))
                .and_then(|n| n.get("type"))
                .and_then(Json::as_str)
                .is_none_or(|t| t == "task")
        })
        .collect()
}

fn output_names(node: &Json) -> Vec<String> {
    node.get("outputs")
        .and_then(Json::as_object)
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

/// Lowers the imported program of `doc` into the program the harness runs: a judge and a
/// route after every task node, the node reading its feedback, the report reading every
/// verdict.
pub fn lower(doc: &Json, program: &mut Program) {
    let nodes: Map<String, Json> = doc
        .get("nodes")
        .and_then(Json::as_object)
        .cloned()
        .unwrap_or_default();
    let mut instructions = program.nodes.take().unwrap_or_default();
    let mut carries = program
        .walker
        .as_mut()
        .and_then(|w| w.carries.take())
        .unwrap_or_default();
    let mut tools = program.tools.take().unwrap_or_default();
    let mut verdicts = Vec::new();
    for nid in judged(doc) {
        let Some(at) = instructions.iter().position(|i| i.id == nid) else {
            continue;
        };
        let node = nodes.get(&nid).cloned().unwrap_or(Json::Null);
        let writes = judge_writes(&nid);
        let [passed, _, feedback, verdict] = &writes;
        instructions[at].reads.push(feedback.clone());
        let mut reads: Vec<String> = output_names(&node)
            .iter()
            .map(|o| carry_name(&nid, o))
            .collect();
        let mut before = Vec::new();
        let mut after = Vec::new();
        for (stage, list) in [("before_start", &mut before), ("after_outputs", &mut after)] {
            for (hid, prompt) in human::checkpoints(&node, stage) {
                let (mut ins, mut cs) =
                    human::approval(&human::checkpoint_id(&nid, &hid), &prompt, true);
                list.append(&mut ins);
                carries.append(&mut cs);
            }
        }
        for (cid, prompt) in human::criteria(&node) {
            let prefix = human::criterion_id(&nid, &cid);
            let (mut ins, mut cs) = human::approval(&prefix, &prompt, false);
            after.append(&mut ins);
            carries.append(&mut cs);
            reads.extend(human::answer_carries(&prefix));
        }
        reads.push(verdict.clone());
        let name = judge_name(&nid);
        tools.push(Tool {
            name: name.clone(),
            sig: Some(format!("({}) -> ({})", reads.join(", "), writes.join(", "))),
            surface: Some(ToolSurface::Sense),
            doc: Some(format!(
                "The harness's judge of node `{nid}`: writes its file outputs, evaluates its success criteria, decides (native, registered by `ais run`)."
            )),
            ..Tool::default()
        });
        let judge = Instruction {
            id: name.clone(),
            opcode: Opcode::Sense,
            owner: Some(Owner::Code),
            tool: Some(name.clone()),
            reads,
            writes: writes.to_vec(),
            doc: Some(format!("Judge node `{nid}` against its success criteria.")),
            ..Instruction::default()
        };
        let route = Instruction {
            id: format!("{nid}{CARRY_SEP}route"),
            opcode: Opcode::Route,
            owner: Some(Owner::Code),
            reads: vec![passed.clone()],
            doc: Some(format!(
                "Go on when `{nid}` passed, retry it while attempts remain, else stop."
            )),
            ..Instruction::default()
        };
        let task = instructions.remove(at);
        let segment: Vec<Instruction> = before
            .into_iter()
            .chain([task])
            .chain(after)
            .chain([judge, route])
            .collect();
        instructions.splice(at..at, segment);
        for (w, ty, doc) in [
            (
                &writes[0],
                "bool",
                "True when the node passed its criteria.",
            ),
            (&writes[1], "bool", "True when the node is attempted again."),
            (
                &writes[2],
                "str",
                "What the next attempt is told of the last one's failure.",
            ),
            (
                &writes[3],
                "any",
                "The node's attempts and their criterion results.",
            ),
        ] {
            carries.push(Carry {
                name: w.clone(),
                ty: Some(ais_core::Type::parse(ty)),
                produced_by: Some(name.clone()),
                doc: Some(doc.into()),
                ..Carry::default()
            });
        }
        verdicts.push(verdict.clone());
    }
    if let Some(report) = instructions.iter_mut().find(|i| i.id == TERMINAL_ID) {
        report.reads.extend(verdicts);
    }
    let asks = instructions
        .iter()
        .any(|i| i.tool.as_deref() == Some("ask_user"));
    program.edges = Some(edges(&instructions));
    program.nodes = Some(instructions);
    if let Some(w) = program.walker.as_mut() {
        w.carries = Some(carries);
    }
    if asks && !tools.iter().any(|t| t.name == "ask_user") {
        tools.push(Tool {
            name: "ask_user".into(),
            doc: Some("Ask a person (a built-in tool).".into()),
            ..Tool::default()
        });
    }
    program.tools = (!tools.is_empty()).then_some(tools);
}

/// The control plane: each instruction to the next; a ROUTE goes on under its guard (a gate's
/// approval, a judge's pass), a judge's route also back to its node under `retry`, and every
/// route otherwise to the report.
fn edges(instructions: &[Instruction]) -> Vec<Edge> {
    let edge = |from: &str, to: &str, guard: Option<String>| Edge {
        from: from.to_owned(),
        to: to.to_owned(),
        modality: Some(if guard.is_some() {
            Modality::Discretionary
        } else {
            Modality::Mandatory
        }),
        guard,
        ..Edge::default()
    };
    let mut out = Vec::new();
    for w in instructions.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        if a.opcode != Opcode::Route {
            out.push(edge(&a.id, &b.id, None));
            continue;
        }
        let node =
            a.id.strip_suffix(&format!("{CARRY_SEP}route"))
                .unwrap_or(&a.id);
        let judged = a
            .reads
            .first()
            .is_some_and(|r| *r == carry_name(node, "passed"));
        if judged {
            out.push(edge(&a.id, node, Some(carry_name(node, "retry"))));
        }
        if b.id != TERMINAL_ID {
            out.push(edge(&a.id, &b.id, a.reads.first().cloned()));
        }
        out.push(edge(&a.id, TERMINAL_ID, None));
    }
    out
}
