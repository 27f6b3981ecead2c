//! Human checkpoints of every mode, and human timeouts (SPEC.md §15, §7.3). A checkpoint at
//! `before_start` or `after_outputs` of `mode: approve` with no timeout is asked as an approve
//! gate is ([`super::human::approval`]). Any other is lowered here, around the same ask:
//!
//! - `notify`: the ask becomes a native `SENSE` that sends the prompt (the CLI prints it on
//!   stderr, `notify[NODE/CHECKPOINT]: …`) and approves at once — the run does not wait.
//! - `review` and `input`: a native `SENSE` reads the answer (`gates::decide`): a
//!   review may edit the node's declared outputs, an input supplies the values of `collect`;
//!   either way the values become the node's outputs — the node's judge lays them over what
//!   the model produced before it checks types, schemas and criteria.
//! - a timeout that does not `hold` (`timeout_seconds`, else `policy.default_human_timeout_seconds`;
//!   `on_timeout`, else `policy.on_human_timeout`): a native `SENSE` notes when the question
//!   was asked ([`clock`]; the journal replays it, so a resumed run keeps the first time), and
//!   the answer that comes later than the timeout is not taken: `fail` rejects, `approve`
//!   approves, `escalate` tells the operator and rejects (`gates::timed_out`). A
//!   paused run has no one to wake it, so the timeout is applied when the answer arrives
//!   (`ais resume … --answer`); until then the run is `awaiting_human`, as with `hold`.

use super::gates::{Decision, decide, timed_out};
use super::{Harness, human, own};
use crate::graph::{
    GateBlock, Graph, HumanAt, HumanCheckpoint, HumanMode, Node, NodeType, OnExpressionError,
    OnTimeout,
};
use crate::translate::{CARRY_SEP, carry_name};
use ais_core::{Carry, Instruction, Opcode, Owner, Tool, ToolSurface};
use serde_json::{Map, Number, Value as Json, json};

/// What a question to a person says about itself, whether a gate's block or a node's human
/// checkpoint asks it.
pub(crate) trait Ask {
    /// Its `prompt` template.
    fn prompt(&self) -> Option<&str>;
    /// The material it shows (`present`; a checkpoint shows none).
    fn present(&self) -> &[String];
    /// Its `timeout_seconds`.
    fn timeout_seconds(&self) -> Option<&Number>;
    /// Its `on_timeout`.
    fn on_timeout(&self) -> Option<OnTimeout>;
}

impl Ask for GateBlock {
    fn prompt(&self) -> Option<&str> {
        self.prompt.as_deref()
    }
    fn present(&self) -> &[String] {
        self.present.as_deref().unwrap_or_default()
    }
    fn timeout_seconds(&self) -> Option<&Number> {
        self.timeout_seconds.as_ref()
    }
    fn on_timeout(&self) -> Option<OnTimeout> {
        self.on_timeout
    }
}

impl Ask for HumanCheckpoint {
    fn prompt(&self) -> Option<&str> {
        self.prompt.as_deref()
    }
    fn present(&self) -> &[String] {
        &[]
    }
    fn timeout_seconds(&self) -> Option<&Number> {
        self.timeout_seconds.as_ref()
    }
    fn on_timeout(&self) -> Option<OnTimeout> {
        self.on_timeout
    }
}

/// The timeout of a checkpoint or gate block `spec` (none: a gate without its block), when it
/// does not hold: (seconds, `on_timeout`). None when it holds, or when no timeout is set
/// (nothing times out then).
pub fn timeout(doc: &Graph, spec: Option<&dyn Ask>) -> Option<(f64, OnTimeout)> {
    let policy = doc.policy.as_ref();
    let on = spec
        .and_then(Ask::on_timeout)
        .or_else(|| policy?.on_human_timeout)
        .unwrap_or(OnTimeout::Hold);
    let secs = spec
        .and_then(Ask::timeout_seconds)
        .or_else(|| policy?.default_human_timeout_seconds.as_ref())
        .and_then(Number::as_f64)?;
    (on != OnTimeout::Hold).then_some((secs, on))
}

/// Seconds since the epoch, now.
fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The decision of an answer to `spec` asked at `asked` (seconds since the epoch) when it comes
/// too late; None when it is on time or nothing times out.
pub(crate) fn late(doc: &Graph, spec: Option<&dyn Ask>, asked: Option<&Json>) -> Option<Decision> {
    let (secs, on) = timeout(doc, spec)?;
    let waited = now() - asked?.as_f64()?;
    timed_out(on, secs, waited)
}

/// The carries the clock step of `id` writes: when it asked, in seconds since the epoch and as
/// RFC 3339 text.
fn clock_writes(id: &str) -> [String; 2] {
    [own(id, "asked"), own(id, "asked_at")]
}

/// The clock step before the question of `id` (a gate's id or a checkpoint's prefix): a native
/// `SENSE` writing when it was asked (`clock_writes`; its instruction and tool are named as
/// its first carry), its carries and its tool.
pub fn clock(id: &str) -> (Instruction, Vec<Carry>, Tool) {
    let writes = clock_writes(id);
    let name = writes[0].clone();
    let ins = Instruction {
        id: name.clone(),
        opcode: Opcode::Sense,
        owner: Some(Owner::Code),
        tool: Some(name.clone()),
        writes: writes.to_vec(),
        doc: Some(format!(
            "Note when `{id}` is asked (its timeout counts from here)."
        )),
        ..Instruction::default()
    };
    let carries = writes
        .iter()
        .zip([ais_core::Type::Float, ais_core::Type::Str])
        .map(|(w, ty)| Carry {
            name: w.clone(),
            ty: Some(ty),
            produced_by: Some(name.clone()),
            doc: Some("When the question was asked.".into()),
            ..Carry::default()
        })
        .collect();
    let tool = Tool {
        name: name.clone(),
        sig: Some(super::native_sig(&[], &writes)),
        surface: Some(ToolSurface::Sense),
        doc: Some("The time now (native, registered by `ais run`).".into()),
        ..Tool::default()
    };
    (ins, carries, tool)
}

/// The name of checkpoint `h` of `node`, which its instructions and carries are named by: its
/// `id`; one without is `checkpoint` — or `checkpoint_N`, N its place in the node's `human`
/// (from 0), when the node has more than one without (each is asked, none in another's place).
pub(crate) fn id_of<'h>(node: &Node, h: &'h HumanCheckpoint) -> std::borrow::Cow<'h, str> {
    if let Some(id) = &h.id {
        return id.as_str().into();
    }
    let unnamed = || node.checkpoints().filter(|c| c.id.is_none());
    match unnamed().nth(1) {
        None => "checkpoint".into(),
        Some(_) => {
            let at = node.checkpoints().position(|c| std::ptr::eq(c, h));
            format!("checkpoint_{}", at.unwrap_or_default()).into()
        }
    }
}

/// The checkpoints of node `node` at `stage`.
fn at_stage(node: &Node, stage: HumanAt) -> impl Iterator<Item = &HumanCheckpoint> {
    node.checkpoints().filter(move |h| h.at == stage)
}

/// Whether checkpoint `h` is lowered here (a mode other than approve, or a timeout).
fn native(doc: &Graph, h: &HumanCheckpoint) -> bool {
    h.mode != HumanMode::Approve || timeout(doc, Some(h)).is_some()
}

/// The carries a checkpoint's answer step writes beyond its approval: the human event and the
/// values it sets.
fn answer_writes(prefix: &str) -> [String; 2] {
    [carry_name(prefix, "event"), carry_name(prefix, "values")]
}

/// The carries of node `nid`'s checkpoints that set its outputs (reviews and inputs), in the
/// order they are asked: its judge reads them and lays them over the model's outputs.
pub fn values_carries(doc: &Graph, nid: &str, node: &Node) -> Vec<String> {
    human::STAGES
        .iter()
        .flat_map(|s| at_stage(node, *s))
        .filter(|h| native(doc, h) && matches!(h.mode, HumanMode::Review | HumanMode::Input))
        .map(|h| answer_writes(&human::checkpoint_id(nid, &id_of(node, h)))[1].clone())
        .collect()
}

/// The instructions, carries and tools asking node `nid`'s checkpoint `h`: frame, (clock), ask
/// or notify, verdict, and the ROUTE that goes on only when it approved.
pub fn lower(
    hs: &Harness,
    nid: &str,
    h: &HumanCheckpoint,
) -> (Vec<Instruction>, Vec<Carry>, Vec<Tool>) {
    let doc = hs.graph;
    let hid = hs
        .graph
        .node(nid)
        .map_or("checkpoint".into(), |n| id_of(n, h));
    let prefix = human::checkpoint_id(nid, &hid);
    let prompt = h.prompt.as_deref().unwrap_or("Proceed?");
    let (mut ins, mut carries) = human::approval(&prefix, prompt, true);
    let mut tools = Vec::new();
    frame_natively(hs, nid, &prefix, h, &mut ins, &mut tools);
    if h.when.is_some() {
        let (mut guard, mut cs, tool) = when_step(hs, nid, h, &prefix);
        guard.append(&mut ins);
        ins = guard;
        carries.append(&mut cs);
        tools.push(tool);
    }
    if !native(doc, h) {
        return (ins, carries, tools);
    }
    let [answer, approved] = human::answer_carries(&prefix);
    let prompt_carry = carry_name(&prefix, "prompt");
    let verdict_id = format!("{prefix}{CARRY_SEP}verdict");
    if h.mode == HumanMode::Notify {
        let name = own(&prefix, "notify");
        if let Some(ask) = ins.iter_mut().find(|i| i.id == prefix) {
            ask.tool = Some(name.clone());
            ask.writes = vec![answer.clone(), approved.clone()];
            ask.doc = Some(format!(
                "Notify checkpoint `{hid}`'s audience; it does not wait."
            ));
        }
        ins.retain(|i| i.id != verdict_id);
        if let Some(c) = carries.iter_mut().find(|c| c.name == approved) {
            c.produced_by = Some(prefix.clone());
        }
        tools.push(native_tool(
            &name,
            &[prompt_carry],
            &[answer, approved],
            "Send the checkpoint's notification",
        ));
        return (ins, carries, tools);
    }
    let mut reads = vec![answer];
    if timeout(doc, Some(h)).is_some() {
        let (clock, mut cs, tool) = clock(&prefix);
        reads.push(cs[0].name.clone());
        let at = ins.iter().position(|i| i.id == prefix).unwrap_or(1);
        ins.insert(at, clock);
        carries.append(&mut cs);
        tools.push(tool);
    }
    let name = own(&prefix, "answer");
    let mut writes = vec![approved];
    writes.extend(answer_writes(&prefix));
    if let Some(v) = ins.iter_mut().find(|i| i.id == verdict_id) {
        v.opcode = Opcode::Sense;
        v.body = None;
        v.tool = Some(name.clone());
        v.reads = reads.clone();
        v.writes = writes.clone();
    }
    for w in &writes[1..] {
        carries.push(Carry {
            name: w.clone(),
            ty: Some(ais_core::Type::Any),
            produced_by: Some(verdict_id.clone()),
            doc: Some(format!("What checkpoint `{hid}`'s answer sets.")),
            ..Carry::default()
        });
    }
    tools.push(native_tool(
        &name,
        &reads,
        &writes,
        "Read the checkpoint's answer",
    ));
    (ins, carries, tools)
}

/// The carries checkpoint `prefix`'s `when` step writes: ask it, skip it, the evaluation error.
fn when_writes(prefix: &str) -> [String; 3] {
    [
        own(prefix, "ask"),
        own(prefix, "skip"),
        own(prefix, "when_error"),
    ]
}

/// The step that evaluates checkpoint `h`'s `when` (§15) and its ROUTE: on to the question
/// when it holds, past the checkpoint when it does not, to the report when it cannot be
/// evaluated ([`past`]; with `policy.on_expression_error: false` it does not hold, RT062).
fn when_step(
    hs: &Harness,
    nid: &str,
    h: &HumanCheckpoint,
    prefix: &str,
) -> (Vec<Instruction>, Vec<Carry>, Tool) {
    let mut reads = super::scope_reads(hs, nid);
    let node = hs.graph.node(nid);
    if node
        .and_then(|n| n.inputs.as_ref())
        .is_some_and(|i| !i.is_empty())
    {
        reads.push(super::inputs::input_writes(nid)[0].clone());
    }
    if h.at == HumanAt::AfterOutputs {
        reads.extend(
            node.into_iter()
                .flat_map(Node::output_names)
                .map(|o| carry_name(nid, o)),
        );
    }
    let writes = when_writes(prefix);
    let name = own(prefix, "when");
    let sense = Instruction {
        id: name.clone(),
        opcode: Opcode::Sense,
        owner: Some(Owner::Code),
        tool: Some(name.clone()),
        reads: reads.clone(),
        writes: writes.to_vec(),
        doc: Some(format!(
            "Whether checkpoint `{}` is asked (its `when`).",
            node.map_or("checkpoint".into(), |n| id_of(n, h))
        )),
        ..Instruction::default()
    };
    let route = Instruction {
        id: format!("{name}{CARRY_SEP}route"),
        opcode: Opcode::Route,
        owner: Some(Owner::Code),
        reads: writes[..2].to_vec(),
        doc: Some("Ask the checkpoint when its `when` holds, else go past it.".into()),
        ..Instruction::default()
    };
    let carries = writes
        .iter()
        .zip([
            ais_core::Type::Bool,
            ais_core::Type::Bool,
            ais_core::Type::Str,
        ])
        .map(|(w, ty)| Carry {
            name: w.clone(),
            ty: Some(ty),
            produced_by: Some(name.clone()),
            ..Carry::default()
        })
        .collect();
    let tool = native_tool(&name, &reads, &writes, "Evaluate the checkpoint's `when`");
    (vec![sense, route], carries, tool)
}

/// For the ROUTE of a checkpoint's `when` step, named `route`: the guard that skips the
/// checkpoint and the first instruction past it.
pub(crate) fn past(instructions: &[Instruction], route: &str) -> Option<(String, String)> {
    let when = route.strip_suffix(&format!("{CARRY_SEP}route"))?;
    let prefix = when.strip_suffix(&format!("{CARRY_SEP}{}when", super::OWN))?;
    let own_route = format!("{prefix}{CARRY_SEP}route");
    let at = instructions.iter().position(|i| i.id == own_route)?;
    let next = instructions
        .get(at + 1)
        .map_or(crate::translate::TERMINAL_ID, |i| i.id.as_str());
    Some((when_writes(prefix)[1].clone(), next.to_owned()))
}

/// What the question of `frame_of` (a gate's id, or a checkpoint's prefix) is framed from,
/// when it needs the run's values: its prompt holds `${{ }}`, or it has material to `present`.
fn framing(spec: &dyn Ask) -> Option<(String, Vec<String>)> {
    let prompt = spec.prompt()?;
    let present = spec.present().to_vec();
    (prompt.contains("${{") || !present.is_empty()).then(|| (prompt.to_owned(), present))
}

/// Makes the frame instruction `{id}__ask` of a gate or checkpoint (`spec`, of node `nid`) a
/// native `SENSE` that interpolates its prompt and shows its `present` material
/// ([`super::inputs::frame`]), when it needs to; its tool is pushed on `tools`.
pub(crate) fn frame_natively(
    hs: &Harness,
    nid: &str,
    id: &str,
    spec: &dyn Ask,
    instructions: &mut [Instruction],
    tools: &mut Vec<Tool>,
) {
    if framing(spec).is_none() {
        return;
    }
    let ask = format!("{id}{CARRY_SEP}ask");
    let Some(frame) = instructions.iter_mut().find(|i| i.id == ask) else {
        return;
    };
    let mut reads = super::scope_reads(hs, nid);
    let node = hs.graph.node(nid);
    if node.map(Node::kind) != Some(NodeType::Gate) {
        // A checkpoint's prompt may read its node's inputs and (after outputs) its outputs.
        if node
            .and_then(|n| n.inputs.as_ref())
            .is_some_and(|i| !i.is_empty())
        {
            reads.push(super::inputs::input_writes(nid)[0].clone());
        }
        reads.extend(
            node.into_iter()
                .flat_map(Node::output_names)
                .map(|o| carry_name(nid, o)),
        );
    }
    let name = own(id, "frame");
    frame.opcode = Opcode::Sense;
    frame.body = None;
    frame.tool = Some(name.clone());
    frame.reads = reads.clone();
    tools.push(native_tool(
        &name,
        &reads,
        &frame.writes,
        "Frame the question with the run's values",
    ));
}

/// Every gate or checkpoint whose question is framed natively: (its node, the frame's tool,
/// the block).
fn frames(doc: &Graph) -> Vec<(&str, String, &dyn Ask)> {
    let mut out: Vec<(&str, String, &dyn Ask)> = Vec::new();
    for (nid, node) in &doc.nodes {
        if let Some(g) = node.gate.as_ref().filter(|g| framing(*g).is_some()) {
            out.push((nid, own(nid, "frame"), g));
        }
        for h in node.checkpoints().filter(|h| framing(*h).is_some()) {
            let prefix = human::checkpoint_id(nid, &id_of(node, h));
            out.push((nid, own(&prefix, "frame"), h));
        }
    }
    out
}

fn native_tool(name: &str, reads: &[String], writes: &[String], doc: &str) -> Tool {
    Tool {
        name: name.to_owned(),
        sig: Some(super::native_sig(reads, writes)),
        surface: Some(ToolSurface::Sense),
        doc: Some(format!("{doc} (native, registered by `ais run`).")),
        ..Tool::default()
    }
}

/// Every checkpoint of the graph this module lowers: (node id, checkpoint block).
fn all<'g>(hs: &Harness<'g>) -> Vec<(&'g str, &'g Node, &'g HumanCheckpoint)> {
    let mut out = Vec::new();
    for (nid, node) in hs
        .judged
        .iter()
        .filter_map(|n| hs.graph.nodes.get_key_value(n))
    {
        for stage in human::STAGES {
            for h in at_stage(node, stage).filter(|h| native(hs.graph, h) || h.when.is_some()) {
                out.push((nid.as_str(), node, h));
            }
        }
    }
    out
}

/// The native tools of this module the graph calls: each clock (of a checkpoint or a gate),
/// each checkpoint's notify or answer step.
pub(crate) fn tools(hs: &Harness) -> Vec<String> {
    let doc = hs.graph;
    let mut out = Vec::new();
    for (nid, node, h) in all(hs) {
        let prefix = human::checkpoint_id(nid, &id_of(node, h));
        if h.when.is_some() {
            out.push(own(&prefix, "when"));
        }
        if !native(doc, h) {
            continue;
        }
        let notify = h.mode == HumanMode::Notify;
        if timeout(doc, Some(h)).is_some() && !notify {
            out.push(own(&prefix, "asked"));
        }
        out.push(own(&prefix, if notify { "notify" } else { "answer" }));
    }
    out.extend(frames(doc).into_iter().map(|(_, tool, _)| tool));
    for g in super::gates::answered_gates(hs) {
        let spec = doc.node(&g).and_then(|n| n.gate.as_ref());
        if timeout(doc, spec.map(|s| s as &dyn Ask)).is_some() {
            out.push(own(&g, "asked"));
        }
    }
    out
}

/// A step of a checkpoint's own.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    /// It sends a notification.
    Notify,
    /// It reads the answer.
    Answer,
    /// It evaluates the `when`.
    When,
}

/// The node and checkpoint a call of `tool` is for, with the step.
fn find<'g>(
    hs: &Harness<'g>,
    tool: &str,
) -> Option<(&'g str, &'g Node, &'g HumanCheckpoint, Step)> {
    all(hs).into_iter().find_map(|(nid, node, h)| {
        let prefix = human::checkpoint_id(nid, &id_of(node, h));
        [
            (Step::Notify, "notify"),
            (Step::Answer, "answer"),
            (Step::When, "when"),
        ]
        .into_iter()
        .find(|(_, name)| own(&prefix, name) == tool)
        .map(|(step, _)| (nid, node, h, step))
    })
}

/// The bound params among a native step's arguments.
fn params_of(args: &Map<String, Json>) -> Map<String, Json> {
    args.get(super::inputs::PARAMS)
        .and_then(Json::as_object)
        .cloned()
        .unwrap_or_default()
}

/// Answers a call of one of this module's [`tools`], or None for another tool.
pub(crate) fn call(
    hs: &Harness,
    tool: &str,
    args: &Map<String, Json>,
) -> Option<Map<String, Json>> {
    let doc = hs.graph;
    if let Some(id) = tool.strip_suffix(&format!("{CARRY_SEP}{}asked", super::OWN)) {
        let [secs, text] = clock_writes(id);
        let at = crate::run::rfc3339(std::time::SystemTime::now());
        return Some(Map::from_iter([(secs, json!(now())), (text, json!(at))]));
    }
    if let Some((nid, _, spec)) = frames(doc).into_iter().find(|(_, t, _)| t == tool) {
        let (prompt, present) = framing(spec).unwrap_or_default();
        let text = super::inputs::frame(doc, nid, &prompt, &present, &params_of(args), args);
        let id = tool.strip_suffix(&format!("{CARRY_SEP}{}frame", super::OWN))?;
        return Some(Map::from_iter([(carry_name(id, "prompt"), json!(text))]));
    }
    let (nid, node, h, step) = find(hs, tool)?;
    let hid = id_of(node, h);
    let prefix = human::checkpoint_id(nid, &hid);
    let [answer, approved] = human::answer_carries(&prefix);
    match step {
        Step::When => {
            let expr = h.when.as_deref().unwrap_or("true");
            let lenient = doc.policy.as_ref().and_then(|p| p.on_expression_error)
                == Some(OnExpressionError::False);
            let (ask, skip, error) =
                match super::inputs::holds(doc, nid, expr, &params_of(args), args) {
                    Ok(b) => (b, !b, String::new()),
                    Err(e) => (false, lenient, format!("checkpoint `{hid}`'s `when`: {e}")),
                };
            let [a, s, e] = when_writes(&prefix);
            return Some(Map::from_iter([
                (a, json!(ask)),
                (s, json!(skip)),
                (e, json!(error)),
            ]));
        }
        Step::Notify => {
            return Some(Map::from_iter([
                (answer, json!("notified")),
                (approved, json!(true)),
            ]));
        }
        Step::Answer => {}
    }
    let declared: Vec<String> = node.output_names().cloned().collect();
    let empty = Default::default();
    let collect = h.collect.as_ref().unwrap_or(&empty);
    let text = args.get(&answer).and_then(Json::as_str).unwrap_or_default();
    let mut d = late(doc, Some(h), args.get(&own(&prefix, "asked")))
        .unwrap_or_else(|| decide(h.mode, collect, &declared, text));
    if h.at == HumanAt::BeforeStart && h.mode == HumanMode::Review && !d.values.is_empty() {
        // Nothing is produced before the node starts, so there is nothing to edit yet.
        d = Decision {
            outcome: "rejected",
            note: Some(
                "a `before_start` review has no outputs to edit yet: approve or reject".into(),
            ),
            ..Decision::default()
        };
    }
    let [event, values] = answer_writes(&prefix);
    Some(Map::from_iter([
        (approved, json!(d.approved)),
        (
            event,
            json!({"mode": h.mode, "outcome": d.outcome, "note": d.note, "escalated": d.escalated}),
        ),
        (values, Json::Object(d.values)),
    ]))
}

/// The notification a call of `tool` sends, when it is a checkpoint's notify step: (the node
/// and checkpoint, `NODE/CHECKPOINT`, the prompt).
pub fn notice(graph: &Graph, tool: &str, args: &Map<String, Json>) -> Option<(String, String)> {
    let hs = Harness::new(graph);
    let (nid, node, h, step) = find(&hs, tool)?;
    if step != Step::Notify {
        return None;
    }
    let hid = id_of(node, h);
    let prompt = args
        .get(&carry_name(&human::checkpoint_id(nid, &hid), "prompt"))
        .and_then(Json::as_str)
        .unwrap_or_default();
    let text = prompt.trim().trim_end_matches("(approve/reject)").trim();
    Some((format!("{nid}/{hid}"), text.to_owned()))
}

/// What the operator is told when a call's writes `out` escalate a late answer (a
/// checkpoint's or a gate's `on_timeout: escalate`).
pub fn escalation(tool: &str, out: &Map<String, Json>) -> Option<String> {
    out.values().find_map(|v| {
        (v.get("escalated") == Some(&json!(true))).then(|| {
            let note = v["note"].as_str().unwrap_or_default();
            format!("`{}` {note}", tool.trim_end_matches("__ags_answer"))
        })
    })
}

/// The human event checkpoint `h` of node `nid` recorded, when it was answered: (the event,
/// whether it let the node go on, whether it was escalated). `at` is the event's time.
pub fn event(
    report: &Map<String, Json>,
    nid: &str,
    node: &Node,
    h: &HumanCheckpoint,
    at: &Json,
) -> Option<(Json, bool, bool)> {
    let hid = id_of(node, h);
    let (mode, stage) = (h.mode, h.at);
    let prefix = human::checkpoint_id(nid, &hid);
    let approved = report.get(&human::answer_carries(&prefix)[1])? == &json!(true);
    let [event, _] = answer_writes(&prefix);
    let Some(e) = report.get(&event) else {
        if mode == HumanMode::Notify {
            let e = json!({"checkpoint_id": hid, "at_stage": stage, "mode": "notify", "outcome": "notified", "at": at});
            return Some((e, true, false));
        }
        return human::event(report, &prefix, &hid, stage, at).map(|e| (e, approved, false));
    };
    let mut out = json!({"checkpoint_id": hid, "at_stage": stage, "mode": mode, "outcome": e["outcome"], "at": at});
    if let Some(n) = e["note"].as_str() {
        out["note"] = json!(n);
    }
    Some((out, approved, e["escalated"] == json!(true)))
}

/// `args` of node `nid`'s judge (or its file writer) with the values its checkpoints set laid
/// over the model's outputs (a review's edits, an input's values, in the order asked), and the
/// values that name no declared output (an input's extra values, outputs of their own).
pub fn overlay(
    doc: &Graph,
    nid: &str,
    args: &Map<String, Json>,
) -> (Map<String, Json>, Map<String, Json>) {
    let mut out = args.clone();
    let mut extra = Map::new();
    let Some(node) = doc.node(nid) else {
        return (out, extra);
    };
    let declared = node.outputs.as_ref();
    for c in values_carries(doc, nid, node) {
        for (k, v) in args.get(&c).and_then(Json::as_object).into_iter().flatten() {
            if declared.is_some_and(|d| d.contains_key(k)) {
                out.insert(carry_name(nid, k), v.clone());
            } else {
                extra.insert(k.clone(), v.clone());
            }
        }
    }
    (out, extra)
}

/// Why checkpoint `h` of node `nid`'s `when` could not be evaluated, when it could not: the
/// message, and whether that was fatal (`policy.on_expression_error: fail`, the default).
pub fn when_error(
    report: &Map<String, Json>,
    nid: &str,
    node: &Node,
    h: &HumanCheckpoint,
) -> Option<(String, bool)> {
    let prefix = human::checkpoint_id(nid, &id_of(node, h));
    let [_, skip, error] = when_writes(&prefix);
    let e = report.get(&error)?.as_str().filter(|e| !e.is_empty())?;
    Some((e.to_owned(), report.get(&skip) != Some(&json!(true))))
}
