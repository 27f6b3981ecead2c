//! The run-time program of an AGS graph (docs/AGS.md, "Running"): the import, plus what the
//! harness does between nodes. After every task node a *judge* — a SENSE calling the native
//! tool `<node>__judge`, which the CLI registers ([`judge`]) — collects the node's outputs,
//! writes its `file` outputs under the output root, evaluates its success criteria and
//! decides; a ROUTE then goes on to the next node (passed), back to the node for another
//! attempt with the failed criteria as feedback (retry), or — exhausted — on to the next node
//! under the default `policy.on_node_failure: isolate` (whose ready check skips it when it
//! depends on the failure, [`ready`]) or to the report under `halt`. So each node's criteria
//! are evaluated before the next node starts (SPEC.md §10.3), inside the runtime's journal: a
//! paused or resumed run replays them.

pub(crate) mod checkpoint;
pub(crate) mod gates;
pub(crate) mod human;
pub(crate) mod inputs;
pub(crate) mod judge;
pub(crate) mod ready;
pub(crate) mod record;
pub(crate) mod routing;

/// The longest wait between two attempts of a node, whatever `failure.retry` asks for.
pub const MAX_RETRY_DELAY_SECONDS: f64 = 3600.0;

/// The longest a `command` criterion may run, whatever its `timeout_seconds` (`ais run
/// --tool-timeout`'s own ceiling).
pub const MAX_COMMAND_SECONDS: f64 = 86_400.0;

/// A number of seconds a graph wrote, as a [`std::time::Duration`]: never a panic — negative,
/// zero and non-finite values are zero, and a value past `cap` is `cap` (a graph may write
/// `1.0e300`).
pub fn seconds(secs: f64, cap: f64) -> std::time::Duration {
    if secs.is_nan() || secs <= 0.0 {
        return std::time::Duration::ZERO;
    }
    std::time::Duration::try_from_secs_f64(secs.min(cap)).unwrap_or(std::time::Duration::ZERO)
}

use crate::graph::{CriterionKind, Graph, HumanAt, Node, NodeType};
use crate::translate::{CARRY_SEP, TERMINAL_ID, carry_name, ident, node_id};
use ais_core::{Carry, Edge, Instruction, Modality, Opcode, Owner, Program, Tool, ToolSurface};
use serde_json::{Map, Value as Json};
use std::collections::{HashMap, HashSet};

/// The prefix of the names this harness gives its own carries and instructions under a node
/// (an output name starting with it is refused, so none collides with a node output).
pub const OWN: &str = "ags_";

/// The name of the harness's own carry or instruction `name` of node `nid` (the node's id as
/// an identifier, so the name reads as one in a guard).
pub fn own(nid: &str, name: &str) -> String {
    format!("{}{CARRY_SEP}{OWN}{name}", ident(nid))
}

/// The node a judge tool `tool` judges (none for another tool).
pub fn judged_node(tool: &str) -> Option<String> {
    owner_of(tool, "judge")
}

/// The signature of a native step's tool, `(reads) -> (writes)`, built as a value and
/// written by the one signature writer ([`ais_core::sig::Signature`]'s canonical form), so it
/// reads back to the same parameters and results.
pub(crate) fn native_sig(reads: &[String], writes: &[String]) -> String {
    use ais_core::sig::{Param, Return, Signature};
    Signature {
        params: reads.iter().map(|r| Param::new(r.clone(), None)).collect(),
        ret: Return::Tuple(writes.to_vec()),
    }
    .to_string()
}

/// The node whose harness step `own(node, step)` is named `name`.
pub(crate) fn owner_of(name: &str, step: &str) -> Option<String> {
    name.strip_suffix(&format!("{CARRY_SEP}{OWN}{step}"))
        .map(node_id)
}

/// The carries a judge writes for node `nid`, in its signature's order: whether the node
/// passed, whether it is retried, the feedback its next attempt reads, and its verdict (the
/// record of every attempt so far).
pub fn judge_writes(nid: &str) -> [String; 4] {
    ["passed", "retry", "feedback", "verdict"].map(|w| own(nid, w))
}

/// The name of the judge tool (and instruction) of node `nid`.
pub fn judge_name(nid: &str) -> String {
    own(nid, "judge")
}

/// The graph as the harness's steps read it, with what each of them asks of it worked out
/// once: the schedule, each node's place in it, the judged nodes, each node's predecessors.
/// (Lowering asks these of every node; working them out per node made it quadratic.)
pub(crate) struct Harness<'g> {
    /// The graph.
    pub graph: &'g Graph,
    /// The sequential schedule ([`crate::schedule`]).
    pub schedule: Vec<String>,
    /// The task nodes a judge follows, in the schedule's order.
    pub judged: Vec<String>,
    /// Whether the graph declares params (the params step runs first).
    pub has_params: bool,
    /// Each node's place in the schedule.
    rank: HashMap<&'g str, usize>,
    /// The judged nodes, for lookup.
    judged_set: HashSet<&'g str>,
    /// Each node's incoming `edges` (their `from`), in edge order.
    incoming: HashMap<&'g str, Vec<&'g str>>,
    /// What the nodes of the schedule make readable, in its order (each node's outputs, then a
    /// task's verdict), and how much of it comes before each node ([`scope_reads`]).
    readable: std::cell::OnceCell<(Vec<String>, Vec<usize>)>,
}

impl<'g> Harness<'g> {
    /// Works out the schedule and what hangs on it for `graph`.
    pub fn new(graph: &'g Graph) -> Self {
        let schedule = crate::schedule(graph);
        let rank: HashMap<&'g str, usize> = schedule
            .iter()
            .enumerate()
            .filter_map(|(i, id)| Some((graph.nodes.get_key_value(id)?.0.as_str(), i)))
            .collect();
        let judged: Vec<String> = schedule
            .iter()
            .filter(|id| graph.node(id).is_some_and(|n| n.kind() == NodeType::Task))
            .cloned()
            .collect();
        let judged_set = judged
            .iter()
            .filter_map(|id| Some(graph.nodes.get_key_value(id)?.0.as_str()))
            .collect();
        let mut incoming: HashMap<&'g str, Vec<&'g str>> = HashMap::new();
        for e in graph.edge_list() {
            incoming
                .entry(e.to.as_str())
                .or_default()
                .push(e.from.as_str());
        }
        Harness {
            graph,
            has_params: graph.params.as_ref().is_some_and(|p| !p.is_empty()),
            schedule,
            judged,
            rank,
            judged_set,
            incoming,
            readable: std::cell::OnceCell::new(),
        }
    }

    /// Whether node `id` is followed by a judge.
    pub fn is_judged(&self, id: &str) -> bool {
        self.judged_set.contains(id)
    }

    /// The nodes with an effective edge into `nid` (`depends_on` and `edges`), each once, in
    /// schedule order.
    pub fn predecessors(&self, nid: &str) -> Vec<String> {
        let declared = self
            .graph
            .node(nid)
            .and_then(|n| n.depends_on.as_ref())
            .into_iter()
            .flatten()
            .map(String::as_str);
        let edges = self.incoming.get(nid).into_iter().flatten().copied();
        let mut at: Vec<usize> = declared
            .chain(edges)
            .filter_map(|id| self.rank.get(id).copied())
            .collect();
        at.sort_unstable();
        at.dedup();
        at.into_iter().map(|i| self.schedule[i].clone()).collect()
    }
}

/// Lowers the imported program of `doc` into the program the harness runs: a judge and a
/// route after every task node, the node reading its feedback, the report reading every
/// verdict. With `allow_commands` (`ais run --allow-commands`), the judge of a node with `command`
/// criteria is declared an `ACT` tool: a command line may change the world, so the journal
/// runs such a judge at most once (a crash in the middle of it stops the resume at the
/// effect in flight instead of running the commands again); any other judge only reads and
/// writes the node's own file outputs again, so it is a `SENSE` tool, run again after a crash.
pub fn lower(graph: &Graph, program: &mut Program, allow_commands: bool) {
    let hs = Harness::new(graph);
    let mut instructions = program.nodes.take().unwrap_or_default();
    let mut carries = program
        .walker
        .as_mut()
        .and_then(|w| w.carries.take())
        .unwrap_or_default();
    let mut tools = program.tools.take().unwrap_or_default();
    let mut verdicts = Vec::new();
    let mut starts = HashMap::new();
    if hs.has_params {
        let (ins, mut cs, tool) = params_step(graph);
        instructions.splice(0..0, ins);
        carries.append(&mut cs);
        tools.push(tool);
    }
    // Each task's instructions before and after it, laid in one pass at the end.
    let mut position: HashMap<String, usize> = HashMap::new();
    for (i, ins) in instructions.iter().enumerate() {
        position.entry(ins.id.clone()).or_insert(i);
    }
    let mut around: HashMap<usize, (Vec<Instruction>, Vec<Instruction>)> = HashMap::new();
    for nid in &hs.judged {
        let Some(&at) = position.get(nid) else {
            continue;
        };
        let Some(node) = graph.node(nid) else {
            continue;
        };
        let writes = judge_writes(nid);
        let [passed, _, feedback, verdict] = &writes;
        instructions[at].reads.push(feedback.clone());
        let mut reads: Vec<String> = node.output_names().map(|o| carry_name(nid, o)).collect();
        let mut before = Vec::new();
        if starts_with_a_step(node) {
            let (mut ins, mut cs, tool) = input_step(&hs, nid);
            instructions[at].reads.push(cs[0].name.clone());
            before.append(&mut ins);
            carries.append(&mut cs);
            tools.push(tool);
        }
        let mut after = Vec::new();
        for (stage, list) in [
            (HumanAt::BeforeStart, &mut before),
            (HumanAt::AfterOutputs, &mut after),
        ] {
            for h in node.checkpoints().filter(|h| h.at == stage) {
                let (mut ins, mut cs, mut ts) = checkpoint::lower(&hs, nid, h);
                list.append(&mut ins);
                carries.append(&mut cs);
                tools.append(&mut ts);
            }
        }
        reads.extend(checkpoint::values_carries(graph, nid, node));
        for (cid, prompt) in human::criteria(node) {
            let prefix = human::criterion_id(nid, cid);
            let (mut ins, mut cs) = human::approval(&prefix, prompt, false);
            after.append(&mut ins);
            carries.append(&mut cs);
            reads.extend(human::answer_carries(&prefix));
        }
        reads.push(verdict.clone());
        let name = judge_name(nid);
        let acts = allow_commands && !commands(graph, &name).is_empty();
        tools.push(Tool {
            name: name.clone(),
            sig: Some(native_sig(&reads, &writes)),
            surface: Some(if acts {
                ToolSurface::Act
            } else {
                ToolSurface::Sense
            }),
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
            id: format!("{name}{CARRY_SEP}route"),
            opcode: Opcode::Route,
            owner: Some(Owner::Code),
            reads: vec![passed.clone()],
            doc: Some(format!(
                "Go on when `{nid}` passed, retry it while attempts remain, else stop."
            )),
            ..Instruction::default()
        };
        starts.insert(nid.clone(), before.first().map_or(nid, |i| &i.id).clone());
        after.extend([judge, route]);
        around.insert(at, (before, after));
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
    let mut laid = Vec::with_capacity(instructions.len());
    for (i, task) in instructions.into_iter().enumerate() {
        match around.remove(&i) {
            Some((before, after)) => {
                laid.extend(before);
                laid.push(task);
                laid.extend(after);
            }
            None => laid.push(task),
        }
    }
    let mut instructions = laid;
    let ids: HashSet<&str> = instructions.iter().map(|i| i.id.as_str()).collect();
    let mut gate_starts = Vec::new();
    for (nid, _) in graph
        .nodes
        .iter()
        .filter(|(_, n)| n.kind() == NodeType::Gate)
    {
        let ask = format!("{nid}{CARRY_SEP}ask");
        if ids.contains(ask.as_str()) {
            gate_starts.push((nid.clone(), ask));
        }
    }
    starts.extend(gate_starts);
    for (nid, gate) in graph
        .nodes
        .iter()
        .filter_map(|(n, v)| Some((n, v.gate.as_ref()?)))
    {
        checkpoint::frame_natively(&hs, nid, nid, gate, &mut instructions, &mut tools);
    }
    gates::lower_notify(&hs, &mut instructions, &mut tools);
    gates::lower_answers(&hs, &mut instructions, &mut carries, &mut tools);
    verdicts.extend(gates::answered_gates(&hs).iter().map(|g| own(g, "gate")));
    let otherwise = ready::insert(
        &hs,
        &mut instructions,
        &mut carries,
        &mut tools,
        &mut starts,
    );
    // In the schedule's order (not the map's): the program must be the same on every build,
    // or a resume would find it changed.
    let carry_names: HashSet<&str> = carries.iter().map(|c| c.name.as_str()).collect();
    for nid in hs.schedule.iter().filter(|n| starts.contains_key(*n)) {
        let [_, ok, error] = ready::ready_writes(nid);
        if carry_names.contains(ok.as_str()) {
            verdicts.extend([ok, error]);
        }
    }
    if let Some(report) = instructions.iter_mut().find(|i| i.id == TERMINAL_ID) {
        report.reads.extend(verdicts);
    }
    let asks = instructions
        .iter()
        .any(|i| i.tool.as_deref() == Some("ask_user"));
    program.edges = Some(edges(&instructions, &otherwise));
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
/// approval, a judge's pass, a ready check), a judge's route also back to its node under
/// `retry`, and every route otherwise where `otherwise` says (the next node, when the failure
/// is isolated or absorbed, [`ready::insert`]), else to the report.
fn edges(
    instructions: &[Instruction],
    otherwise: &std::collections::HashMap<String, String>,
) -> Vec<Edge> {
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
        let judged =
            a.id.strip_suffix(&format!("{CARRY_SEP}route"))
                .and_then(|p| owner_of(p, "judge"));
        if let Some(node) = judged {
            out.push(edge(&a.id, &node, Some(judge_writes(&node)[1].clone())));
        }
        let mut fallback = otherwise.get(&a.id).map_or(TERMINAL_ID, String::as_str);
        let past = checkpoint::past(instructions, &a.id);
        if past.is_some() {
            // A checkpoint's `when` that cannot be evaluated is run-fatal (§5.5).
            fallback = TERMINAL_ID;
        }
        // Guarded even when both ways lead to the same place: the route decides in code on
        // its verdict (G6), then its default edge.
        out.push(edge(&a.id, &b.id, a.reads.first().cloned()));
        if let Some((skip, to)) = past {
            out.push(edge(&a.id, &to, Some(skip)));
        }
        out.push(edge(&a.id, fallback, None));
    }
    out
}

/// A native SENSE step named `id` reading `reads` and writing `writes` (a bool second), the
/// ROUTE that goes on only when that bool holds, the written carries and the tool declaration.
fn step(
    id: &str,
    reads: Vec<String>,
    writes: &[String; 3],
    doc: &str,
) -> (Vec<Instruction>, Vec<Carry>, Tool) {
    let tool = Tool {
        name: id.to_owned(),
        sig: Some(native_sig(&reads, writes)),
        surface: Some(ToolSurface::Sense),
        doc: Some(format!("{doc} (native, registered by `ais run`).")),
        ..Tool::default()
    };
    let sense = Instruction {
        id: id.to_owned(),
        opcode: Opcode::Sense,
        owner: Some(Owner::Code),
        tool: Some(id.to_owned()),
        reads,
        writes: writes.to_vec(),
        doc: Some(doc.to_owned()),
        ..Instruction::default()
    };
    let route = Instruction {
        id: format!("{id}{CARRY_SEP}route"),
        opcode: Opcode::Route,
        owner: Some(Owner::Code),
        reads: vec![writes[1].clone()],
        doc: Some(format!("Go on only when `{id}` succeeded, else stop.")),
        ..Instruction::default()
    };
    let carries = writes
        .iter()
        .zip(["any", "bool", "str"])
        .map(|(w, ty)| Carry {
            name: w.clone(),
            ty: Some(ais_core::Type::parse(ty)),
            produced_by: Some(id.to_owned()),
            ..Carry::default()
        })
        .collect();
    (vec![sense, route], carries, tool)
}

/// The first step of a graph with params: each param a `role: input` carry, bound and checked.
fn params_step(doc: &Graph) -> (Vec<Instruction>, Vec<Carry>, Tool) {
    let names: Vec<String> = doc.params.iter().flat_map(|p| p.keys().cloned()).collect();
    let (ins, mut carries, tool) = step(
        inputs::PARAMS,
        names.clone(),
        &inputs::params_writes(),
        "Bind the graph's params (AG301, AG302)",
    );
    // Typed `any` with a `null` default: an unsupplied param is bound (or refused, AG301) by
    // the params step — never filled with the task text, never asked for as a human input.
    for name in names {
        let spec = doc.params.as_ref().and_then(|p| p.get(&name));
        carries.push(Carry {
            name: name.clone(),
            ty: Some(ais_core::Type::Any),
            role: Some(ais_core::Role::Input),
            default: Some(ais_core::Value::Null),
            doc: spec.map(|s| s.description.clone()),
            ..Carry::default()
        });
    }
    (ins, carries, tool)
}

/// Whether a task node starts with its start step ([`input_step`]): it has inputs to resolve,
/// or an `intelligence` demand to route before any model call (§11.4 rule 2).
fn starts_with_a_step(node: &Node) -> bool {
    node.intelligence.is_some() || node.inputs.as_ref().is_some_and(|i| !i.is_empty())
}

/// Node `nid`'s start step — its model routed (§11.4), its inputs resolved (§9.2): it reads the
/// bound params, every output of the nodes before it and each earlier task's verdict.
fn input_step(hs: &Harness, nid: &str) -> (Vec<Instruction>, Vec<Carry>, Tool) {
    step(
        &own(nid, "inputs"),
        scope_reads(hs, nid),
        &inputs::input_writes(nid),
        &format!("Resolve the inputs of node `{nid}`"),
    )
}

/// What an expression of node `nid` may read at run time: the bound params, every output of
/// the nodes before it and each earlier task's verdict ([`inputs::resolve`]).
pub(crate) fn scope_reads(hs: &Harness, nid: &str) -> Vec<String> {
    let (readable, before) = hs.readable.get_or_init(|| {
        let mut readable = Vec::new();
        let mut before = Vec::with_capacity(hs.schedule.len());
        for id in &hs.schedule {
            before.push(readable.len());
            let Some(node) = hs.graph.node(id) else {
                continue;
            };
            readable.extend(node.output_names().map(|o| carry_name(id, o)));
            // A task's outputs as its judge collected them (§9.1: a structured value, a
            // file's path), which is what `nodes.X.outputs.Y` reads ([`inputs::resolve`]).
            if hs.is_judged(id) {
                readable.push(judge_writes(id)[3].clone());
            }
        }
        (readable, before)
    });
    // A node outside the schedule reads everything.
    let upto = hs.rank.get(nid).map_or(readable.len(), |&i| before[i]);
    let mut reads = Vec::with_capacity(upto + 1);
    if hs.has_params {
        reads.push(inputs::PARAMS.to_owned());
    }
    reads.extend_from_slice(&readable[..upto]);
    reads
}

/// The native tools the harness program calls: the params step, each node's inputs step and
/// judge.
pub fn tools(graph: &Graph) -> Vec<String> {
    let hs = Harness::new(graph);
    let mut out = Vec::new();
    if hs.has_params {
        out.push(inputs::PARAMS.to_owned());
    }
    for nid in &hs.schedule {
        if !hs.predecessors(nid).is_empty() {
            out.push(own(nid, "ready"));
        }
    }
    out.extend(checkpoint::tools(&hs));
    out.extend(
        gates::notify_gates(&hs)
            .iter()
            .map(|g| gates::notify_tool(g)),
    );
    out.extend(
        gates::answered_gates(&hs)
            .iter()
            .map(|g| gates::answer_tool(g)),
    );
    for nid in &hs.judged {
        if graph.node(nid).is_some_and(starts_with_a_step) {
            out.push(own(nid, "inputs"));
        }
        out.push(judge_name(nid));
    }
    out
}

/// A `command` criterion a judge has run before it judges.
#[derive(Clone, Debug, PartialEq)]
pub struct CommandCriterion {
    /// The criterion's id.
    pub id: String,
    /// The command line.
    pub run: String,
    /// Its working directory under the output root (already checked relative).
    pub cwd: Option<String>,
    /// Its time limit.
    pub timeout_seconds: Option<f64>,
}

/// The `command` criteria the native tool `tool` runs before it judges (a judge's node's).
pub fn commands(doc: &Graph, tool: &str) -> Vec<CommandCriterion> {
    let Some(node) = owner_of(tool, "judge").and_then(|nid| doc.node(&nid)) else {
        return Vec::new();
    };
    node.criteria()
        .filter(|c| c.kind == CriterionKind::Command)
        .map(|c| CommandCriterion {
            id: c.id.clone(),
            run: c.run.clone().unwrap_or_else(|| "false".into()),
            cwd: c.cwd.clone(),
            timeout_seconds: c
                .timeout_seconds
                .as_ref()
                .and_then(serde_json::Number::as_f64),
        })
        .collect()
}

/// Writes the `file` outputs a judge's node produced under the output root before its
/// [`commands`] run, so they see this attempt's files (the judge then collects the same files).
pub fn write_files(doc: &Graph, tool: &str, args: &Map<String, Json>, write: &mut judge::Writer) {
    if let Some(nid) = owner_of(tool, "judge")
        && let Some(node) = doc.node(&nid)
    {
        let (args, _) = checkpoint::overlay(doc, &nid, args);
        judge::write_files(&nid, node, &args, write);
    }
}

/// The notification a call of the native tool `tool` sends, when it is a notify gate's or a
/// notify checkpoint's: who sends it (the gate, or `node/checkpoint`) and its text. A notify
/// step does not wait: the operator's terminal is its channel.
pub fn notice(graph: &Graph, tool: &str, args: &Map<String, Json>) -> Option<(String, String)> {
    checkpoint::notice(graph, tool, args).or_else(|| gates::notice(tool, args))
}

/// What the operator is told when a call of `tool` wrote `out` that escalates: a judge's node
/// exhausted under `on_exhausted: escalate`, or a late answer under `on_timeout: escalate`.
pub fn escalation(tool: &str, out: &Map<String, Json>) -> Option<String> {
    judged_node(tool)
        .and_then(|n| gates::escalation(&n, out))
        .or_else(|| checkpoint::escalation(tool, out))
}

/// The exit code a failed `command` tool's message names (`… failed with exit status N`).
pub fn exit_code(message: &str) -> Option<i64> {
    let re = regex::Regex::new(r"failed with exit status (\d+)").ok()?;
    re.captures(message)?[1].parse().ok()
}

/// Answers a call of the native tool `tool` (one of [`tools`]) for a run whose model is of
/// tier `tier`, given what its [`commands`] did: the carries it writes.
pub fn call(
    graph: &Graph,
    tier: &str,
    tool: &str,
    args: &Map<String, Json>,
    commands: &Map<String, Json>,
    root: &std::path::Path,
    write: &mut judge::Writer,
) -> Map<String, Json> {
    let hs = Harness::new(graph);
    if let Some(out) = checkpoint::call(&hs, tool, args) {
        return out;
    }
    let [value, ok, error] = if tool == inputs::PARAMS {
        inputs::params_writes()
    } else if let Some(nid) = owner_of(tool, "notify") {
        return gates::notified(&nid);
    } else if let Some(nid) = owner_of(tool, "answer") {
        return gates::read_answer(graph, &nid, args);
    } else if let Some(nid) = owner_of(tool, "ready") {
        return answer(
            ready::ready_writes(&nid),
            ready::check(&hs, &nid, args).map_err(Json::String),
        );
    } else if let Some(nid) = owner_of(tool, "inputs") {
        inputs::input_writes(&nid)
    } else {
        let nid = owner_of(tool, "judge").unwrap_or_else(|| tool.to_owned());
        let (args, _) = checkpoint::overlay(graph, &nid, args);
        let call = judge::Call {
            graph,
            node: &nid,
            args: &args,
            root,
            now: crate::run::rfc3339(std::time::SystemTime::now()),
            tier: tier.to_owned(),
            commands,
        };
        return judge::judge(&call, write);
    };
    let result = if tool == inputs::PARAMS {
        inputs::bind_params(graph, args).map_err(|errs| {
            Json::Array(
                errs.into_iter()
                    .map(|(c, m)| serde_json::json!({"code": c, "message": m}))
                    .collect(),
            )
        })
    } else {
        let nid = owner_of(tool, "inputs").unwrap_or_else(|| tool.to_owned());
        let params = args
            .get(inputs::PARAMS)
            .and_then(Json::as_object)
            .cloned()
            .unwrap_or_default();
        // Routing comes first (§17.7 steps 1–2: refused before any model call).
        graph
            .node(&nid)
            .ok_or_else(|| format!("the graph has no node `{nid}`"))
            .and_then(|node| routing::route(node, 1, tier))
            .and_then(|_| inputs::resolve(graph, &nid, &params, args))
            .map_err(Json::String)
    };
    answer([value, ok, error], result)
}

/// The writes of a native step (value, whether it succeeded, why not) for its `result`.
fn answer(writes: [String; 3], result: Result<Map<String, Json>, Json>) -> Map<String, Json> {
    let [value, ok, error] = writes;
    let mut out = Map::new();
    match result {
        Ok(v) => {
            out.insert(value, Json::Object(v));
            out.insert(ok, Json::Bool(true));
            out.insert(error, Json::String(String::new()));
        }
        Err(e) => {
            out.insert(value, Json::Object(Map::new()));
            out.insert(ok, Json::Bool(false));
            out.insert(
                error,
                Json::String(match e {
                    Json::String(s) => s,
                    other => other.to_string(),
                }),
            );
        }
    }
    out
}
