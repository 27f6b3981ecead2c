//! Human checkpoints on a task node (SPEC.md §15: `before_start`, `after_outputs`, mode
//! `approve`) and `human` criteria (§10.2), lowered as a gate is: the prompt framed by a CODE,
//! asked by a SENSE calling the built-in `ask_user` — the runtime pauses there (exit 3, `ais
//! resume HANDLE --answer approve`) — and the answer turned into a verdict. A checkpoint's
//! ROUTE goes on only when approved (a rejection fails the node); a criterion's verdict is read
//! by the node's judge.

use crate::graph::{CriterionKind, HumanAt, Node};
use crate::translate::{carry_name, gate_prompt, gate_verdict};
use ais_core::{Carry, Instruction, Opcode, Owner};
use serde_json::{Map, Value as Json, json};

/// The stages of a node's life a checkpoint may name that this harness presents.
pub const STAGES: [HumanAt; 2] = [HumanAt::BeforeStart, HumanAt::AfterOutputs];

/// The instruction-id prefix of checkpoint `hid` of node `nid`.
pub fn checkpoint_id(nid: &str, hid: &str) -> String {
    super::own(nid, &format!("h_{hid}"))
}

/// The instruction-id prefix of `human` criterion `cid` of node `nid`.
pub fn criterion_id(nid: &str, cid: &str) -> String {
    super::own(nid, &format!("c_{cid}"))
}

/// The carries an approval at `prefix` writes: the answer and whether it approved.
pub fn answer_carries(prefix: &str) -> [String; 2] {
    [carry_name(prefix, "answer"), carry_name(prefix, "approved")]
}

/// The node's `human` criteria, as (id, prompt).
pub fn criteria(node: &Node) -> Vec<(&str, &str)> {
    node.criteria()
        .filter(|c| c.kind == CriterionKind::Human)
        .map(|c| (c.id.as_str(), c.prompt.as_deref().unwrap_or("Confirm?")))
        .collect()
}

/// The instructions and carries asking one approval at `prefix`: frame, ask, verdict, and —
/// when `route` — the ROUTE that goes on only when approved.
pub fn approval(prefix: &str, prompt: &str, route: bool) -> (Vec<Instruction>, Vec<Carry>) {
    let (ask, prompt_carry) = gate_prompt(prefix, prompt);
    let [answer, _] = answer_carries(prefix);
    let sense = Instruction {
        id: prefix.to_owned(),
        opcode: Opcode::Sense,
        owner: Some(Owner::Code),
        tool: Some("ask_user".into()),
        reads: vec![prompt_carry.name.clone()],
        writes: vec![answer.clone()],
        doc: Some(format!("Ask for the approval `{prefix}`.")),
        ..Instruction::default()
    };
    let answer_carry = Carry {
        name: answer,
        ty: Some(ais_core::Type::Str),
        produced_by: Some(prefix.to_owned()),
        doc: Some(format!("The answer to `{prefix}`.")),
        ..Carry::default()
    };
    let (verdict, route_ins, approved) = gate_verdict(prefix);
    let mut ins = vec![ask, sense, verdict];
    if route {
        ins.push(route_ins);
    }
    (ins, vec![prompt_carry, answer_carry, approved])
}

/// What one recorded approval says, as a run record's human event, when it was answered.
pub fn event(
    report: &Map<String, Json>,
    prefix: &str,
    id: &str,
    stage: HumanAt,
    at: &Json,
) -> Option<Json> {
    let [answer, approved] = answer_carries(prefix);
    let approved = report.get(&approved)?;
    let mut e = json!({"checkpoint_id": id, "at_stage": stage, "mode": "approve",
        "outcome": if approved == &json!(true) { "approved" } else { "rejected" }, "at": at});
    if let Some(Json::String(a)) = report.get(&answer) {
        e["note"] = json!(a);
    }
    Some(e)
}
