//! The runtime plan: the checked program lowered once (by `ais_core::check::lower`) and then
//! resolved for interpretation — carry names to indices, guards and CODE bodies compiled,
//! tools resolved to runnable implementations, LOOP and SPAWN operands resolved, the back edge
//! of each LOOP found, source lines looked up. Nothing here is redone per step.

use super::carries::{self, Names};
use crate::tools::{self, Tool, ToolRegistry};
use ais_core::bind::{self, Access, BindSource, ProgramIndex, SlotOperand};
use ais_core::check::lower::{self, Executor, ToolKind};
use ais_core::expr::{self, Compiled, Guard, Limits, TypeEnv};
use ais_core::model::{Isolation, Opcode, Program, SpawnSource, Type};
use ais_core::sig::{self, Return};
use ais_core::{Element, Locus, SourceMap};
use std::sync::Arc;

/// Where a tool parameter's value comes from at run time.
#[derive(Clone, Debug)]
pub(crate) enum ArgSource {
    /// A carry, by index.
    Carry(usize),
    /// A field of an object-typed carry.
    Field(usize, String),
    /// A filename recovered from the task text (§7.3), on this side.
    Invocation(Access),
    /// Nothing bound.
    Null,
}

/// One parameter of a resolved tool call.
#[derive(Clone, Debug)]
pub(crate) struct Arg {
    pub param: String,
    pub source: ArgSource,
    /// A path parameter (§7.2): an empty value is derived (write) or a fault (read).
    pub is_path: bool,
}

/// One resolved tool call of a pipeline.
#[derive(Clone)]
pub(crate) struct ToolStep {
    pub name: String,
    pub args: Vec<Arg>,
    /// The implementation; `None` when nothing implements it (a fault when reached).
    pub imp: Option<Arc<dyn Tool>>,
    /// The signature's result (resolved), for write-back.
    pub ret: Return,
    /// The built-in `ask_user`: the machine pauses for a human instead of calling a tool.
    pub ask_user: bool,
}

/// What a step runs.
#[derive(Clone)]
pub(crate) enum Work {
    Tools(Vec<ToolStep>),
    Inline(Box<Compiled>),
    Slot(Vec<SlotOperand>),
    WriteOut(usize),
    RunProgram(usize),
    None,
    Call(Option<String>),
    Terminal,
    Hollow(String),
    Unsupported(String),
}

/// How control leaves a step.
#[derive(Clone)]
pub(crate) enum Control {
    /// Guards in edge order, then the defaults (§4.4.1 via `expr::choose_edge`).
    Guards {
        guards: Vec<Guard>,
        targets: Vec<usize>,
    },
    /// An SU ROUTE: the model chooses among these targets.
    Choose(Vec<usize>),
    /// A LOOP (§4.4.2).
    Loop(LoopCtl),
}

/// A LOOP's operands, resolved.
#[derive(Clone, Debug)]
pub(crate) struct LoopCtl {
    pub verdict: Option<usize>,
    pub cap: i64,
    /// True when the program declared no cap and the runtime imposed one (a deviation).
    pub cap_imposed: bool,
    pub counter: Option<usize>,
    pub back: Option<usize>,
    pub advance: Option<usize>,
}

/// A SPAWN's operands, resolved.
#[derive(Clone, Debug)]
pub(crate) struct SpawnCtl {
    pub isolation: Isolation,
    /// The list-typed read carry that is the fan-out source, when there is one.
    pub list: Option<usize>,
    /// Else the literal sub-tasks.
    pub literal: Option<Vec<String>>,
    pub max_parallel: Option<usize>,
    /// For a structural fan-out (no work of its own, several unguarded edges): the first step
    /// every branch reaches.
    pub join: Option<usize>,
}

/// One step of the plan.
#[derive(Clone)]
pub(crate) struct Step {
    pub id: String,
    pub opcode: Opcode,
    pub mnemonic: String,
    pub model: bool,
    pub line: Option<usize>,
    pub work: Work,
    pub control: Control,
    pub spawn: Option<SpawnCtl>,
    /// `writes`, as carry indices (an undeclared write has no slot and is skipped).
    pub writes: Vec<usize>,
    pub write_names: Vec<String>,
    /// The result type (§6.4) of `writes[0]`.
    pub result: Option<Type>,
    /// The `reads` that are carries, as indices.
    pub reads: Vec<usize>,
    /// Carries whose value this step tests (guards, the LOOP verdict): reading an error value
    /// here routes it (§10.2).
    pub tests: Vec<usize>,
    /// Human-input carries this step needs (§7.5): unsupplied, the run pauses here.
    pub human: Vec<usize>,
    /// The `doc`.
    pub doc: String,
    /// Knowledge folded into a slot: (name, content).
    pub knowledge: Vec<(String, String)>,
    /// `autonomy.tools`.
    pub autonomy: Vec<String>,
    pub access: Access,
}

/// A prepared program: checked, lowered and resolved.
pub struct Prepared {
    pub(crate) program: Arc<Program>,
    pub(crate) names: Arc<Names>,
    pub(crate) steps: Vec<Step>,
    pub(crate) initial: Vec<ais_core::Value>,
    pub(crate) findings: Vec<ais_core::Finding>,
    pub(crate) deviations: Vec<ais_core::Deviation>,
    /// Why it cannot run, when it cannot.
    pub(crate) not_runnable: Option<String>,
    pub(crate) has_slots: bool,
    /// The SHA-256 of the program's canonical AG-IR, binding resume handles to it.
    pub(crate) digest: String,
    /// The carries declared `role: input` (task excluded), by index.
    pub(crate) inputs: Vec<usize>,
    pub(crate) task: usize,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("name", &self.program.name)
            .field("steps", &self.steps.len())
            .field("runnable", &self.not_runnable.is_none())
            .finish()
    }
}

/// The cap imposed on a LOOP that declares none (§10.3: recorded as a deviation).
pub(crate) const IMPOSED_CAP: i64 = 10;

impl Prepared {
    /// Checks (with the mechanical repairs of ladder step 1, each a deviation), lowers and
    /// resolves `program`.
    pub(crate) fn new(program: &Program, map: Option<&SourceMap>, registry: &ToolRegistry) -> Prepared {
        let empty = SourceMap::new();
        let map = map.unwrap_or(&empty);
        let checked = ais_core::check::check(program, map, true);
        let program = checked.program;
        let digest = digest(&program);
        let names = carries::names(&program);
        let initial = carries::initial_values(&program, &names);
        let mut prepared = Prepared {
            names: Arc::new(names),
            steps: Vec::new(),
            initial,
            findings: checked.findings,
            deviations: checked.deviations,
            not_runnable: None,
            has_slots: false,
            digest,
            inputs: Vec::new(),
            task: 0,
            program: Arc::new(program),
        };
        prepared.task = prepared.names.index("task").unwrap_or(0);
        prepared.inputs = prepared
            .program
            .carries()
            .iter()
            .filter(|c| c.is_input() && c.name != "task")
            .filter_map(|c| prepared.names.index(&c.name))
            .collect();
        if checked.outcome == ais_core::Outcome::Failed {
            let fatal: Vec<String> = prepared
                .findings
                .iter()
                .filter(|f| f.severity == ais_core::Severity::Fatal || f.severity == ais_core::Severity::Error)
                .take(3)
                .map(|f| format!("{}: {}", f.id, f.message))
                .collect();
            prepared.not_runnable = Some(format!(
                "the program's check outcome is `failed`, so it has no runnable form ({}); run `ais check` on it and resolve the fatal findings",
                fatal.join("; ")
            ));
            return prepared;
        }
        let plan = match lower::lower(&prepared.program) {
            Ok(plan) => plan,
            Err(findings) => {
                prepared.not_runnable = Some(format!(
                    "the program does not lower: {}",
                    findings.first().map_or(String::new(), |f| f.message.clone())
                ));
                return prepared;
            }
        };
        match resolve(&prepared.program, &prepared.names, &plan, map, registry) {
            Ok(steps) => {
                prepared.has_slots = steps.iter().any(|s| {
                    matches!(s.work, Work::Slot(_) | Work::Call(None))
                        || matches!(s.control, Control::Choose(_))
                        || (s.opcode == Opcode::Spawn && !matches!(s.work, Work::Tools(_)))
                });
                prepared.steps = steps;
            }
            Err(e) => prepared.not_runnable = Some(e),
        }
        prepared
    }
}

/// SHA-256 of the canonical AG-IR text, hex.
pub(crate) fn digest(program: &Program) -> String {
    use sha2::Digest;
    let text = ais_core::agir::write(program);
    let hash = sha2::Sha256::digest(text.as_bytes());
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

fn resolve(
    program: &Program,
    names: &Names,
    plan: &lower::Plan,
    map: &SourceMap,
    registry: &ToolRegistry,
) -> Result<Vec<Step>, String> {
    let ix = ProgramIndex::new(program);
    let env = TypeEnv::from_program(program);
    let limits = Limits::default();
    let reach = reachability(plan);
    let human = human_inputs(program);
    let mut steps = Vec::with_capacity(plan.steps.len());
    for (i, ls) in plan.steps.iter().enumerate() {
        let Some(n) = program.instructions().get(i) else {
            return Err(format!("the plan has a step {i} with no instruction"));
        };
        let line = map
            .lookup(&Locus::field(Element::Instruction(i), "id"))
            .map(|p| p.line as usize);
        let access = ix.access(n);
        let work = match &ls.executor {
            Executor::Tools(calls) => Work::Tools(
                calls
                    .iter()
                    .map(|c| tool_step(program, names, c, access, registry))
                    .collect(),
            ),
            Executor::Inline(body) => {
                let c = expr::compile_str(body, &env, &limits)
                    .map_err(|e| format!("the body of CODE `{}` does not compile: {e}", n.id))?;
                Work::Inline(Box::new(c))
            }
            Executor::Slot(ops) => Work::Slot(ops.operands.clone()),
            Executor::WriteOut(c) => Work::WriteOut(names.index(c).unwrap_or(0)),
            Executor::RunProgram(c) => Work::RunProgram(names.index(c).unwrap_or(0)),
            Executor::Branch => Work::None,
            Executor::Spawn => spawn_work(program, &ix, n, names, access, registry),
            Executor::Call(t) => Work::Call(t.clone()),
            Executor::Terminal => Work::Terminal,
            Executor::Hollow(r) => Work::Hollow(r.clone()),
            Executor::Unsupported(op) => Work::Unsupported(op.clone()),
        };
        let model = ls.unit == lower::Unit::Model;
        let mut tests = Vec::new();
        let control = if n.opcode == Opcode::Loop {
            let ctl = loop_ctl(n, names, ls, i, &reach);
            tests.extend(ctl.verdict);
            Control::Loop(ctl)
        } else if n.opcode == Opcode::Route && model {
            let mut t: Vec<usize> = ls.guarded.iter().chain(&ls.default).map(|t| t.to).collect();
            t.sort_unstable();
            t.dedup();
            Control::Choose(t)
        } else {
            // Guards in edge order (guarded and defaults interleaved as in `edges`).
            let mut all: Vec<&lower::Transition> = ls.guarded.iter().chain(&ls.default).collect();
            all.sort_by_key(|t| t.edge);
            let mut guards = Vec::with_capacity(all.len());
            let mut targets = Vec::with_capacity(all.len());
            for t in all {
                let g = match &t.guard {
                    None => Guard::Default,
                    Some(text) => expr::compile_guard_in(&env, text, &limits)
                        .map_err(|e| format!("the guard `{text}` on `{}` does not compile: {e}", n.id))?,
                };
                if let Guard::Cond(c) = &g {
                    tests.extend(c.carries_read().iter().filter_map(|r| names.index(r)));
                }
                guards.push(g);
                targets.push(t.to);
            }
            Control::Guards { guards, targets }
        };
        tests.sort_unstable();
        tests.dedup();
        let reads: Vec<usize> = ix.read_carries(n).iter().filter_map(|r| names.index(r)).collect();
        let mut needs: Vec<usize> = reads.iter().chain(&tests).copied().filter(|c| human.contains(c)).collect();
        if let Work::Tools(ts) = &work {
            for t in ts {
                for a in &t.args {
                    if let ArgSource::Carry(c) | ArgSource::Field(c, _) = a.source
                        && human.contains(&c)
                    {
                        needs.push(c);
                    }
                }
            }
        }
        needs.sort_unstable();
        needs.dedup();
        let knowledge = match &ls.executor {
            Executor::Slot(ops) => ops
                .knowledge
                .iter()
                .filter_map(|k| program.knowledge_item(k))
                .map(|(_, k)| (k.name.clone(), k.text().unwrap_or_default()))
                .collect(),
            _ => ix
                .resident_on(&n.id)
                .iter()
                .filter_map(|&k| program.knowledge_list().get(k))
                .map(|k| (k.name.clone(), k.text().unwrap_or_default()))
                .collect(),
        };
        steps.push(Step {
            id: n.id.clone(),
            opcode: n.opcode.clone(),
            mnemonic: n.opcode.mnemonic().to_owned(),
            model,
            line,
            spawn: (n.opcode == Opcode::Spawn).then(|| spawn_ctl(n, names, ls, &reach, plan)),
            work,
            control,
            writes: n.writes.iter().filter_map(|w| names.index(w)).collect(),
            write_names: n.writes.iter().filter(|w| names.index(w).is_some()).cloned().collect(),
            result: ls.result.clone(),
            reads,
            tests,
            human: needs,
            doc: n.doc.clone().unwrap_or_default(),
            knowledge,
            autonomy: n.autonomy.as_ref().map(|a| a.tools.clone()).unwrap_or_default(),
            access,
        });
    }
    Ok(steps)
}

/// The carries that hold a human's answer (§7.5, DESIGN "Human input"): `role: input`
/// carries other than `task`.
fn human_inputs(program: &Program) -> Vec<usize> {
    let names = carries::names(program);
    program
        .carries()
        .iter()
        .filter(|c| c.is_input() && c.name != "task")
        .filter_map(|c| names.index(&c.name))
        .collect()
}

/// Resolves one bound tool of a pipeline: its arguments, its implementation (a registered
/// native or built-in tool first, else the program's declared `command` / `body`), its result.
pub(crate) fn tool_step(
    program: &Program,
    names: &Names,
    call: &lower::ToolCall,
    access: Access,
    registry: &ToolRegistry,
) -> ToolStep {
    let declared = call.index.and_then(|t| program.tool_list().get(t));
    let sig_text = declared
        .and_then(|t| t.sig.clone())
        .or_else(|| ais_core::check::builtins::builtin(&call.tool).map(|b| b.sig.to_owned()));
    let parsed = sig_text.as_deref().and_then(|s| sig::parse(s).ok());
    let ret = parsed
        .as_ref()
        .map(|s| s.ret.resolved(program))
        .unwrap_or_else(|| call.returns.clone().map_or(Return::None, Return::Type));
    let args = call
        .bindings
        .iter()
        .map(|b| {
            let is_path = parsed
                .as_ref()
                .and_then(|s| s.param(&b.param))
                .map_or_else(|| bind::is_path_name(&b.param), bind::is_path_param);
            let source = match &b.source {
                BindSource::Carry(c) => names.index(c).map_or(ArgSource::Null, ArgSource::Carry),
                BindSource::Field { carry, field } => names
                    .index(carry)
                    .map_or(ArgSource::Null, |c| ArgSource::Field(c, field.clone())),
                BindSource::Invocation(_) => ArgSource::Invocation(access),
                BindSource::Null => ArgSource::Null,
            };
            Arg { param: b.param.clone(), source, is_path }
        })
        .collect();
    let ask_user = call.tool == ais_core::check::builtins::ASK_USER && registry.get(&call.tool).is_none();
    let imp = registry
        .get(&call.tool)
        .cloned()
        .or_else(|| declared.and_then(tools::declared_tool));
    ToolStep {
        name: call.tool.clone(),
        args,
        imp,
        ret,
        ask_user,
    }
}

/// A SPAWN's work: its bound tools (DU siblings), else a worker slot per sibling.
fn spawn_work(
    program: &Program,
    ix: &ProgramIndex,
    n: &ais_core::model::Instruction,
    names: &Names,
    access: Access,
    registry: &ToolRegistry,
) -> Work {
    let tools = ix.bound_tools(n);
    if tools.is_empty() {
        if n.writes.is_empty() {
            return Work::None;
        }
        return Work::Slot(ix.bind_slot(n).operands);
    }
    let mut steps = Vec::new();
    for t in tools {
        let text = t.sig.clone().unwrap_or_else(|| "() -> str".to_owned());
        let Ok(sig) = sig::parse(&text) else {
            continue;
        };
        let bindings = ix.bind_tool(n, &sig, None);
        let kind = if t.body.as_deref().is_some_and(|b| !b.trim().is_empty()) {
            ToolKind::Body(t.lang.clone().unwrap_or_else(|| "python".into()))
        } else if t.command.as_deref().is_some_and(|b| !b.trim().is_empty()) {
            ToolKind::Command
        } else {
            ToolKind::Builtin
        };
        let call = lower::ToolCall {
            tool: t.name.clone(),
            index: program.tool(&t.name).map(|(i, _)| i),
            kind,
            bindings,
            returns: match &sig.ret {
                Return::Type(t) => Some(t.clone()),
                _ => None,
            },
        };
        steps.push(tool_step(program, names, &call, access, registry));
    }
    Work::Tools(steps)
}

fn spawn_ctl(
    n: &ais_core::model::Instruction,
    names: &Names,
    ls: &lower::Step,
    reach: &[Vec<bool>],
    plan: &lower::Plan,
) -> SpawnCtl {
    let conc = n.concurrency.as_ref();
    let list = n
        .reads
        .iter()
        .filter_map(|r| names.index(r))
        .find(|&c| names.types.get(c).and_then(Option::as_ref).is_some_and(Type::is_list));
    let literal = match conc.and_then(|c| c.spawn.as_ref()) {
        Some(SpawnSource::List(items)) => Some(items.clone()),
        _ => None,
    };
    let branches: Vec<usize> = ls.default.iter().map(|t| t.to).collect();
    let join = (branches.len() >= 2)
        .then(|| {
            // The first step, in breadth-first order from the first branch, that every branch
            // reaches and that is no branch itself.
            let mut seen = vec![false; reach.len()];
            let mut queue = std::collections::VecDeque::from([branches[0]]);
            let succ = |v: usize| -> Vec<usize> {
                plan.steps
                    .get(v)
                    .map(|s| s.guarded.iter().chain(&s.default).map(|t| t.to).collect())
                    .unwrap_or_default()
            };
            while let Some(v) = queue.pop_front() {
                if v >= reach.len() || seen[v] {
                    continue;
                }
                seen[v] = true;
                if !branches.contains(&v) && branches.iter().all(|&b| reach[b][v]) {
                    return Some(v);
                }
                queue.extend(succ(v));
            }
            None
        })
        .flatten();
    SpawnCtl {
        join,
        isolation: conc
            .and_then(|c| c.isolation.clone())
            .unwrap_or(Isolation::OrchestratorOwned),
        list,
        literal,
        max_parallel: conc
            .and_then(|c| c.max_parallel)
            .and_then(|m| usize::try_from(m).ok())
            .filter(|&m| m > 0),
    }
}

fn loop_ctl(
    n: &ais_core::model::Instruction,
    names: &Names,
    ls: &lower::Step,
    i: usize,
    reach: &[Vec<bool>],
) -> LoopCtl {
    let mut all: Vec<&lower::Transition> = ls.guarded.iter().chain(&ls.default).collect();
    all.sort_by_key(|t| t.edge);
    let back = all
        .iter()
        .find(|t| t.to != i && reach.get(t.to).is_some_and(|r| r[i]))
        .map(|t| t.to);
    let advance = all
        .iter()
        .find(|t| !reach.get(t.to).is_some_and(|r| r[i]) && t.to != i)
        .map(|t| t.to);
    LoopCtl {
        verdict: n.verdict.as_deref().and_then(|v| names.index(v)),
        cap: n.cap.filter(|&c| c >= 1).unwrap_or(IMPOSED_CAP),
        cap_imposed: n.cap.filter(|&c| c >= 1).is_none(),
        counter: n.counter.as_deref().and_then(|c| names.index(c)),
        back,
        advance,
    }
}

/// `reach[a][b]`: step `b` is reachable from step `a` (through at least zero edges).
fn reachability(plan: &lower::Plan) -> Vec<Vec<bool>> {
    let n = plan.steps.len();
    let succ: Vec<Vec<usize>> = plan
        .steps
        .iter()
        .map(|s| s.guarded.iter().chain(&s.default).map(|t| t.to).collect())
        .collect();
    (0..n)
        .map(|start| {
            let mut seen = vec![false; n];
            let mut stack = vec![start];
            while let Some(v) = stack.pop() {
                if v < n && !seen[v] {
                    seen[v] = true;
                    stack.extend(succ[v].iter().copied());
                }
            }
            seen
        })
        .collect()
}
