//! The static worst case of a run (`ais check --budget`): at most how many steps, slot fills,
//! model exchanges, tool calls and completion tokens a run of a program can spend.
//!
//! The bound is derived from the plan's control graph. LOOP back edges are the only bounded
//! way round: the runtime counts a LOOP's iterations over the whole run (its counter carry, or
//! an internal counter, is never reset), so its back edges are taken at most `cap` times in all.
//! With the back edges taken out the graph must be acyclic; a cycle that remains (a ROUTE back
//! edge over a counter, say) is **unbounded** by the program, and is reported with its
//! instructions and what would bound it. The step budget of the runtime (`--max-steps`) still
//! stops such a run.
//!
//! Visits are bounded per instruction: a visit is either the first the run makes with no LOOP
//! iteration since (at most one per walk: after it the instruction never comes round again
//! unless a LOOP it can reach iterates), or follows a last back edge of a LOOP `L` that can
//! reach it through the acyclic rest, which happens at most `iterations(L)` times, and only
//! counts when the instruction can reach `L` again. The bound is exact for a program whose
//! loops are not nested and whose LOOPs run to their caps; for nested loops it is an upper
//! bound. A structural fan-out (a SPAWN with neither tools nor writes) walks each branch; every
//! branch after the first is one more walk.
//!
//! Per visit, a step spends: a slot fill for a model step (an SU ROUTE with writes fills a value
//! slot and, with two or more targets, a choice slot; an SU SENSE or ROUTE with no writes fills
//! none), one per sibling for a SPAWN's worker slot; each tool of its pipeline (per sibling for a
//! SPAWN); and a CALL spends its target's budget, to the runtime's nesting limit. A slot fill
//! is at most `1 + max_repairs` exchanges, plus `max_tool_rounds` when it has tools, each
//! round running at most `max_calls_per_round` tools; completion tokens are at most
//! `max_tokens` per exchange — which holds where the provider enforces the limit.

use crate::bind::ProgramIndex;
use crate::plan::{Executor, FanOut, Plan, Step, Unit};
use crate::program::{Opcode, Program};
use petgraph::Direction;
use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::{Dfs, Reversed, Walker};
use serde::Serialize;

/// The runtime limits a budget is computed under. The defaults are the runtime's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BudgetLimits {
    /// Repair rounds per slot fill (the runtime's default: 2).
    pub max_repairs: u64,
    /// Tool rounds per slot fill with tools (default 8).
    pub max_tool_rounds: u64,
    /// Tool calls run per tool round (default 32).
    pub max_calls_per_round: u64,
    /// Completion tokens per model exchange (the providers' default `max_tokens`: 4096).
    pub max_tokens: u64,
    /// The cap the runtime imposes on a LOOP that declares none (10).
    pub imposed_loop_cap: u64,
    /// How deep CALLs nest before the runtime faults (8).
    pub max_call_depth: usize,
}

impl Default for BudgetLimits {
    fn default() -> Self {
        BudgetLimits {
            max_repairs: 2,
            max_tool_rounds: 8,
            max_calls_per_round: 32,
            max_tokens: 4096,
            imposed_loop_cap: 10,
            max_call_depth: 8,
        }
    }
}

/// A program's static worst case. A metric is `None` when the program does not bound it (see
/// [`Budget::unbounded`] for why).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Budget {
    /// Steps (instructions executed, CALL sub-runs included).
    pub steps: Option<u64>,
    /// Slot fills.
    pub slot_calls: Option<u64>,
    /// Model exchanges (a slot fill's first answer, its repair and tool rounds).
    pub model_exchanges: Option<u64>,
    /// Tool calls (pipelines, SPAWN siblings' tools, slots' tool rounds).
    pub tool_calls: Option<u64>,
    /// Completion tokens: `model_exchanges × max_tokens`.
    pub completion_tokens: Option<u64>,
    /// Per LOOP: its cap and the iterations it can run.
    pub loops: Vec<LoopBudget>,
    /// Per instruction (program order): its id and the most times a run executes it.
    pub visits: Vec<(String, Option<u64>)>,
    /// Why a metric is unbounded, one entry per cause.
    pub unbounded: Vec<Unbounded>,
}

/// A LOOP's share of the budget.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LoopBudget {
    /// The LOOP's id.
    pub instruction: String,
    /// Its cap (`imposed` when the runtime imposes it).
    pub cap: u64,
    /// Whether the program declares no cap and the runtime's is used.
    pub imposed: bool,
    /// The iterations it runs at most (its cap, less a non-negative starting counter).
    pub iterations: Option<u64>,
}

/// A cause of an unbounded metric.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unbounded {
    /// What is unbounded: `cycle`, `counter`, `fan_out` or `call`.
    pub kind: &'static str,
    /// The instructions involved (a cycle in order, from the one nearest the entry).
    pub instructions: Vec<String>,
    /// Why, in a sentence.
    pub message: String,
    /// What would bound it.
    pub help: String,
}

/// Spends a CALL's target: its budget when it can be found, at nesting `depth`, else why not.
pub type Targets<'a> = dyn FnMut(&str, usize) -> Result<Budget, String> + 'a;

/// The budget of `program` lowered to `plan`, at CALL nesting `depth` (0 for the program run),
/// asking `targets` for each CALL target's budget at `depth + 1`.
pub fn budget(
    program: &Program,
    plan: &Plan,
    limits: &BudgetLimits,
    depth: usize,
    targets: &mut Targets<'_>,
) -> Budget {
    let mut out = Budget::default();
    let control = Control::new(plan);
    let iters = loop_iterations(plan, limits, &control, &mut out);
    let visits = visits(plan, &control, &iters, &mut out);
    let ix = ProgramIndex::new(program);
    let mut total = Costs::zero();
    for (i, step) in plan.steps.iter().enumerate() {
        let Some(v) = visits[i] else {
            total.steps = None;
            total.add_scaled(&step_costs(program, &ix, step, limits, &mut out), None);
            continue;
        };
        if v == 0 {
            continue;
        }
        // A LOOP works only on the visits that iterate.
        let working = match (&step.looping, iters.get(&i)) {
            (Some(_), Some(it)) => it.map_or(v, |it| it.min(v)),
            _ => v,
        };
        total.steps = add(total.steps, Some(v));
        total.add_scaled(
            &step_costs(program, &ix, step, limits, &mut out),
            Some(working),
        );
        if let Executor::Call(call) = &step.executor
            && let Some(target) = &call.target
        {
            total.add_call(step, target, v, depth, limits, targets, &mut out);
        }
    }
    out.steps = total.steps;
    out.slot_calls = total.slots;
    out.model_exchanges = total.exchanges;
    out.tool_calls = total.tools;
    out.completion_tokens = mul(total.exchanges, Some(limits.max_tokens));
    out.visits = plan
        .steps
        .iter()
        .zip(&visits)
        .map(|(s, v)| (s.id.clone(), *v))
        .collect();
    out
}

/// Saturating addition over bounds (`None`: unbounded).
fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    Some(a?.saturating_add(b?))
}

/// Saturating multiplication over bounds; zero times anything is zero.
fn mul(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(0), _) | (_, Some(0)) => Some(0),
        (Some(a), Some(b)) => Some(a.saturating_mul(b)),
        _ => None,
    }
}

/// The spendable metrics, summed.
#[derive(Clone, Copy, Debug)]
struct Costs {
    steps: Option<u64>,
    slots: Option<u64>,
    exchanges: Option<u64>,
    tools: Option<u64>,
}

impl Costs {
    fn zero() -> Self {
        Costs {
            steps: Some(0),
            slots: Some(0),
            exchanges: Some(0),
            tools: Some(0),
        }
    }

    /// Adds `c` (steps aside) `times` times.
    fn add_scaled(&mut self, c: &Costs, times: Option<u64>) {
        self.slots = add(self.slots, mul(c.slots, times));
        self.exchanges = add(self.exchanges, mul(c.exchanges, times));
        self.tools = add(self.tools, mul(c.tools, times));
    }

    /// Adds a CALL target's budget per visit of the CALL step.
    #[allow(clippy::too_many_arguments)]
    fn add_call(
        &mut self,
        step: &Step,
        target: &str,
        visits: u64,
        depth: usize,
        limits: &BudgetLimits,
        targets: &mut Targets<'_>,
        out: &mut Budget,
    ) {
        if depth + 1 >= limits.max_call_depth {
            // The runtime faults at the CALL: nothing of the target runs.
            return;
        }
        match targets(target, depth + 1) {
            Ok(b) => {
                let sub = Costs {
                    steps: b.steps,
                    slots: b.slot_calls,
                    exchanges: b.model_exchanges,
                    tools: b.tool_calls,
                };
                self.steps = add(self.steps, mul(sub.steps, Some(visits)));
                self.add_scaled(&sub, Some(visits));
                for u in b.unbounded {
                    if !out.unbounded.contains(&u) {
                        out.unbounded.push(u);
                    }
                }
            }
            Err(why) => {
                *self = Costs {
                    steps: None,
                    slots: None,
                    exchanges: None,
                    tools: None,
                };
                out.unbounded.push(Unbounded {
                    kind: "call",
                    instructions: vec![step.id.clone()],
                    message: format!("CALL `{}` runs `{target}`, which {why}", step.id),
                    help: format!(
                        "make `{target}` a readable program beside this one, so its budget can be counted"
                    ),
                });
            }
        }
    }
}

/// What one visit of `step` spends besides itself: slot fills, exchanges and tool calls.
fn step_costs(
    program: &Program,
    ix: &ProgramIndex<'_>,
    step: &Step,
    limits: &BudgetLimits,
    out: &mut Budget,
) -> Costs {
    let per_slot =
        |tools: bool| 1 + limits.max_repairs + if tools { limits.max_tool_rounds } else { 0 };
    let slot_tools = |tools: bool| {
        if tools {
            limits.max_tool_rounds * limits.max_calls_per_round
        } else {
            0
        }
    };
    let mut c = Costs::zero();
    let slots = |c: &mut Costs, n: u64, tools: bool| {
        c.slots = add(c.slots, Some(n));
        c.exchanges = add(c.exchanges, Some(n * per_slot(tools)));
        c.tools = add(c.tools, Some(n * slot_tools(tools)));
    };
    let silent = step.writes.is_empty() && matches!(step.opcode, Opcode::Sense | Opcode::Route);
    match &step.executor {
        Executor::Tools(calls) => c.tools = Some(calls.len() as u64),
        Executor::WriteOut(_) | Executor::RunProgram(_) => c.tools = Some(1),
        Executor::Slot(slot) if !silent => slots(&mut c, 1, !slot.tools.is_empty()),
        Executor::Call(call) if call.target.is_none() => {
            slots(&mut c, 1, false);
            // A produced script is run.
            c.tools = add(c.tools, Some(1));
        }
        Executor::Spawn(sp) => {
            let instr = program.instructions().iter().find(|n| n.id == step.id);
            let tools = instr.map_or(0, |n| ix.bound_tools(n).len() as u64);
            let siblings = match &sp.source {
                FanOut::List(items) => Some(items.len() as u64),
                FanOut::Task => Some(1),
                FanOut::Carry(carry) => {
                    if tools > 0 || !step.writes.is_empty() {
                        out.unbounded.push(Unbounded {
                            kind: "fan_out",
                            instructions: vec![step.id.clone()],
                            message: format!(
                                "SPAWN `{}` runs one sibling per element of `{}`, whose length is known only at run time",
                                step.id, carry.name
                            ),
                            help: "list the sub-tasks in `concurrency.spawn` to bound the siblings".into(),
                        });
                    }
                    None
                }
            };
            if tools > 0 {
                c.tools = mul(siblings, Some(tools));
            } else if !step.writes.is_empty() {
                c.slots = siblings;
                c.exchanges = mul(siblings, Some(per_slot(false)));
            }
        }
        _ => {}
    }
    if step.opcode == Opcode::Route && step.unit == Unit::Model && successors(step).len() > 1 {
        slots(&mut c, 1, false);
    }
    c
}

/// A step's distinct successors.
fn successors(step: &Step) -> Vec<usize> {
    let mut t: Vec<usize> = step
        .guarded
        .iter()
        .chain(&step.default)
        .map(|t| t.to)
        .collect();
    t.sort_unstable();
    t.dedup();
    t
}

/// The control graph: every transition (`full`), and the same without the LOOPs' back edges
/// (`rest`), over one node per step.
struct Control {
    full: DiGraph<(), usize>,
    rest: DiGraph<(), usize>,
    /// Per LOOP step: the targets of its back edges.
    back: Vec<(usize, Vec<usize>)>,
    /// Reachable from the entry in `full`.
    reachable: Vec<bool>,
    entry: Option<usize>,
}

impl Control {
    fn new(plan: &Plan) -> Self {
        let n = plan.steps.len();
        let mut full = DiGraph::with_capacity(n, n);
        let mut rest = DiGraph::with_capacity(n, n);
        for _ in 0..n {
            full.add_node(());
            rest.add_node(());
        }
        let mut back = Vec::new();
        for (i, step) in plan.steps.iter().enumerate() {
            let back_edges = step
                .looping
                .as_ref()
                .map(|l| l.back.as_slice())
                .unwrap_or(&[]);
            let mut targets = Vec::new();
            for t in step.guarded.iter().chain(&step.default) {
                full.add_edge(NodeIndex::new(i), NodeIndex::new(t.to), t.edge);
                if back_edges.contains(&t.edge) {
                    targets.push(t.to);
                } else {
                    rest.add_edge(NodeIndex::new(i), NodeIndex::new(t.to), t.edge);
                }
            }
            if step.looping.is_some() {
                back.push((i, targets));
            }
        }
        let mut reachable = vec![false; n];
        if let Some(e) = plan.entry.filter(|&e| e < n) {
            for v in Dfs::new(&full, NodeIndex::new(e)).iter(&full) {
                reachable[v.index()] = true;
            }
        }
        Control {
            full,
            rest,
            back,
            reachable,
            entry: plan.entry.filter(|&e| e < n),
        }
    }

    /// The steps reachable from `from` in the graph without back edges.
    fn rest_reach(&self, from: &[usize]) -> Vec<bool> {
        let mut seen = vec![false; self.rest.node_count()];
        for &f in from {
            if seen[f] {
                continue;
            }
            for v in Dfs::new(&self.rest, NodeIndex::new(f)).iter(&self.rest) {
                seen[v.index()] = true;
            }
        }
        seen
    }

    /// The steps that can reach `to` in the full graph.
    fn reaching(&self, to: usize) -> Vec<bool> {
        let mut seen = vec![false; self.full.node_count()];
        let rev = Reversed(&self.full);
        for v in Dfs::new(rev, NodeIndex::new(to)).iter(rev) {
            seen[v.index()] = true;
        }
        seen
    }
}

/// Per LOOP step: the iterations it runs at most (`None`: unbounded, reported).
fn loop_iterations(
    plan: &Plan,
    limits: &BudgetLimits,
    control: &Control,
    out: &mut Budget,
) -> std::collections::BTreeMap<usize, Option<u64>> {
    let mut iters = std::collections::BTreeMap::new();
    for &(l, _) in &control.back {
        let step = &plan.steps[l];
        let Some(lc) = &step.looping else { continue };
        let (cap, imposed) = lc
            .cap
            .map_or((limits.imposed_loop_cap, true), |c| (c, false));
        let mut it = Some(cap);
        if let Some(counter) = &lc.counter {
            let writers: Vec<&str> = plan
                .steps
                .iter()
                .enumerate()
                .filter(|&(j, s)| j != l && s.writes.iter().any(|w| w.name == counter.name))
                .map(|(_, s)| s.id.as_str())
                .collect();
            let carry = counter.index.and_then(|c| plan.carries.get(c));
            let start = carry
                .and_then(|c| c.default.as_ref())
                .and_then(|d| match d {
                    crate::Value::Int(i) => Some(*i),
                    _ => None,
                })
                .unwrap_or(0);
            if !writers.is_empty() || carry.is_some_and(|c| c.input) {
                it = None;
                let why = if writers.is_empty() {
                    "is an input, which the caller sets".to_owned()
                } else {
                    format!("is also written by {}", quote(&writers))
                };
                out.unbounded.push(Unbounded {
                    kind: "counter",
                    instructions: std::iter::once(step.id.clone())
                        .chain(writers.iter().map(|w| (*w).to_owned()))
                        .collect(),
                    message: format!(
                        "LOOP `{}` counts its iterations in `{}`, which {why}: its cap bounds nothing",
                        step.id, counter.name
                    ),
                    help: "let only the LOOP write its counter (a fresh carry, not an input), or drop `counter` and let the LOOP count".into(),
                });
            } else if start > 0 {
                it = Some(cap.saturating_sub(start as u64));
            } else {
                it = Some(cap.saturating_add(start.unsigned_abs()));
            }
        }
        out.loops.push(LoopBudget {
            instruction: step.id.clone(),
            cap,
            imposed,
            iterations: it,
        });
        iters.insert(l, it);
    }
    iters
}

/// Per step, the most times a run visits it (`None`: unbounded; each cycle outside the LOOPs
/// is reported).
fn visits(
    plan: &Plan,
    control: &Control,
    iters: &std::collections::BTreeMap<usize, Option<u64>>,
    out: &mut Budget,
) -> Vec<Option<u64>> {
    let n = plan.steps.len();
    let Some(entry) = control.entry else {
        return vec![Some(0); n];
    };
    // Per reachable LOOP: who its back targets reach (without back edges), who reaches it.
    let loops: Vec<(usize, Vec<bool>, Vec<bool>)> = control
        .back
        .iter()
        .filter(|(l, _)| control.reachable[*l])
        .map(|(l, t)| (*l, control.rest_reach(t), control.reaching(*l)))
        .collect();
    let first = control.rest_reach(&[entry]);
    let mut visits = vec![Some(0); n];
    // Tarjan's order is reverse topological: walk it backwards, so a structural fan-out is
    // counted before the branches it starts.
    let mut extra: Vec<Option<u64>> = vec![Some(0); n];
    for comp in tarjan_scc(&control.rest).into_iter().rev() {
        let cyclic = comp.len() > 1
            || control
                .rest
                .neighbors_directed(comp[0], Direction::Outgoing)
                .any(|t| t == comp[0]);
        for &node in &comp {
            let v = node.index();
            if !control.reachable[v] {
                continue;
            }
            if cyclic {
                visits[v] = None;
                continue;
            }
            let walks = first[v] || loops.iter().any(|(_, reach, back)| reach[v] && !back[v]);
            let mut count = Some(0u64);
            for (l, reach, back) in &loops {
                if reach[v] && back[v] {
                    count = add(count, iters.get(l).copied().flatten());
                }
            }
            // The ordinary walk, and one more per later branch of a structural fan-out.
            let w = add(Some(u64::from(walks)), extra[v]);
            let mut total = add(count, w);
            if matches!(plan.steps[v].executor, Executor::Terminal) {
                total = total.map(|t| t.min(1));
            }
            visits[v] = total;
            fan_out(plan, control, v, total, &mut extra);
        }
        if cyclic && comp.iter().any(|c| control.reachable[c.index()]) {
            out.unbounded.push(cycle_finding(plan, control, &comp));
        }
    }
    visits
}

/// Records the walks a structural fan-out at `v` adds to its branches: each branch after the
/// first is a walk per visit.
fn fan_out(
    plan: &Plan,
    control: &Control,
    v: usize,
    visits: Option<u64>,
    extra: &mut [Option<u64>],
) {
    let step = &plan.steps[v];
    let structural = matches!(step.executor, Executor::Spawn(_))
        && step.writes.is_empty()
        && step.default.len() >= 2;
    if !structural {
        return;
    }
    let branches: Vec<usize> = step.default.iter().map(|t| t.to).collect();
    let more = mul(visits, Some(branches.len() as u64 - 1));
    let reach = control.rest_reach(&branches);
    for (w, r) in reach.iter().enumerate() {
        if *r && w != v {
            extra[w] = add(extra[w], more);
        }
    }
}

/// The finding for a strongly connected component that no LOOP bounds: one cycle through it,
/// from the instruction nearest the entry, and the edge that closes it.
fn cycle_finding(plan: &Plan, control: &Control, comp: &[NodeIndex]) -> Unbounded {
    let inside: Vec<bool> = {
        let mut m = vec![false; plan.steps.len()];
        for c in comp {
            m[c.index()] = true;
        }
        m
    };
    let start = comp.iter().map(|c| c.index()).min().unwrap_or(0);
    // Breadth-first from `start` inside the component, back to `start`.
    let mut prev = vec![usize::MAX; plan.steps.len()];
    let mut queue = std::collections::VecDeque::from([start]);
    let mut closing = start;
    'search: while let Some(u) = queue.pop_front() {
        for t in control
            .rest
            .neighbors_directed(NodeIndex::new(u), Direction::Outgoing)
        {
            let t = t.index();
            if t == start {
                closing = u;
                break 'search;
            }
            if inside[t] && prev[t] == usize::MAX {
                prev[t] = u;
                queue.push_back(t);
            }
        }
    }
    let mut path = vec![closing];
    while let Some(&last) = path.last() {
        if last == start || prev[last] == usize::MAX {
            break;
        }
        path.push(prev[last]);
    }
    path.reverse();
    let ids: Vec<String> = path.iter().map(|&i| plan.steps[i].id.clone()).collect();
    let back_from = &plan.steps[closing].id;
    let to = &plan.steps[start].id;
    let mut shown = ids.clone();
    shown.push(to.clone());
    Unbounded {
        kind: "cycle",
        instructions: ids,
        message: format!(
            "the cycle {} has no LOOP: nothing in the program bounds how often it runs",
            shown
                .iter()
                .map(|i| format!("`{i}`"))
                .collect::<Vec<_>>()
                .join(" -> ")
        ),
        help: format!(
            "make the edge `{back_from}` -> `{to}` the back edge of a LOOP with a `cap` (a LOOP verdict and counter), or the run is bounded only by the runtime's step budget (`--max-steps`)"
        ),
    }
}

/// Names as `` `a`, `b` ``.
fn quote(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(all(test, feature = "agir"))]
#[path = "budget_tests.rs"]
mod tests;
