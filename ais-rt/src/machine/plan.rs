//! The runtime plan: the checked program lowered once by [`ais_core::plan::lower`] (guards and
//! CODE bodies compiled, bindings resolved, LOOP and SPAWN control found) and then resolved for
//! interpretation — carries to indices of the run's carry file, tools to runnable
//! implementations, human inputs and tested carries per step, source lines looked up. Nothing
//! here is redone per step.

use super::carries::{self, Names};
use super::effects::ToolClass;
use crate::tools::{Tool, ToolRegistry};
use ais_core::bind::{self, Access, BindSource, ProgramIndex, SlotOperand};
use ais_core::expr::Compiled;
use ais_core::plan::{self as lower, Executor, FanOut, ToolKind};
use ais_core::sig::{self, Return};
use ais_core::{Element, Isolation, Opcode, Program, SourceMap, Type};
use std::borrow::Cow;
use std::collections::HashMap;
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
    /// What the journal must know of it: declared idempotent, a read, bound to an MCP server
    /// ([`tool_class`]).
    pub class: ToolClass,
    /// For a tool only Rust runs (`lang: rust`, [`ais_core::Tool::is_native`]) and nothing here
    /// implements: the Rust call that runs the program with it ([`ais_core::native_entry`]).
    pub native_entry: Option<String>,
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
    /// The first guarded edge whose guard holds, else the default (§4.4.1, via the core
    /// step's `next`).
    Edges,
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
    pub model: bool,
    /// The model tier its slot names (`model:`); none: the run's default.
    pub tier: Option<String>,
    pub line: Option<usize>,
    pub work: Work,
    pub control: Control,
    /// A SPAWN's control, boxed: most steps have none.
    pub spawn: Option<Box<SpawnCtl>>,
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
    /// Carries whose *error value* this step tests (a guard reading `c.ok` or `c.error`, the
    /// LOOP verdict): only this routes a failure that landed there (§10.2).
    pub routes: Vec<usize>,
    /// Human-input carries this step needs (§7.5): unsupplied, the run pauses here.
    pub human: Vec<usize>,
    /// The `doc`.
    pub doc: String,
    /// Knowledge folded into a slot: (name, content).
    pub knowledge: Vec<(String, String)>,
    /// `autonomy.tools`.
    pub autonomy: Vec<String>,
    pub access: Access,
    /// The core step's guarded transitions (compiled guards, tried in edge order) and its
    /// default ones, for [`lower::next`] (§4.4.1). The rest of the core step is resolved into
    /// the fields above, not kept beside them.
    pub guarded: Box<[lower::Transition]>,
    pub default: Box<[lower::Transition]>,
}

impl Step {
    /// The opcode's mnemonic, as written (`CODE`, `GEN-FILL`, an unknown opcode's own text).
    pub(crate) fn mnemonic(&self) -> &str {
        self.opcode.as_str()
    }
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
    /// The SHA-256 of the program's canonical AG-IR, binding resume handles and journals to
    /// it: computed on first use ([`Prepared::digest`]), since writing a large program's
    /// canonical text costs more than checking it, and a run that neither journals nor pauses
    /// never needs it.
    digest: std::sync::OnceLock<String>,
    /// The carries declared `role: input` (task excluded), by index.
    pub(crate) inputs: Vec<usize>,
    pub(crate) task: usize,
    /// Slot schemas by result type, compiled once.
    pub(crate) schemas: crate::llm::schema::SchemaCache,
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
    /// The SHA-256 (hex) of the program's canonical AG-IR: what a journal compares to refuse
    /// resuming a run against a changed program.
    pub fn digest(&self) -> &str {
        self.digest.get_or_init(|| digest(&self.program))
    }

    /// Whether the program has a runnable form (else a run faults `NotRunnable` at once,
    /// saying why).
    pub fn runnable(&self) -> bool {
        self.not_runnable.is_none()
    }

    /// The program's canonical AG-IR and its [`digest`](Prepared::digest), the text written
    /// once for both (a journal records the text).
    pub(crate) fn canonical(&self) -> (String, &str) {
        let text = ais_core::agir::write(&self.program);
        let digest = self.digest.get_or_init(|| digest_of(&text));
        (text, digest)
    }

    /// Whether step `step` is the SPAWN `instruction` and `orchestrator_owned`: its siblings
    /// stage their writes ([`crate::stage_dir`]) for the orchestrator to apply after the join.
    pub fn stages_writes(&self, step: usize, instruction: &str) -> bool {
        self.steps
            .get(step)
            .filter(|s| s.id == instruction)
            .and_then(|s| s.spawn.as_ref())
            .is_some_and(|c| c.isolation == Isolation::OrchestratorOwned)
    }

    /// Checks (with the mechanical repairs of ladder step 1, each a deviation), lowers and
    /// resolves `program`.
    ///
    /// `program` is shared, not copied, when neither a repair nor the runtime's own marking
    /// changes it: a caller holding it in an [`Arc`] holds one copy with the plan. The source
    /// map serves the check and each step's line, and is let go (when owned) before the plan
    /// is built.
    pub(crate) fn new(
        program: Arc<Program>,
        map: Option<Cow<'_, SourceMap>>,
        registry: &ToolRegistry,
    ) -> Prepared {
        let map = map.unwrap_or_default();
        let native = mark_native(&program, registry);
        let input = native.as_ref().unwrap_or(&program);
        let (mut checked, lowered) =
            ais_core::check_lowering(input, &*map, ais_core::Repairs::Mechanical, true);
        let lines = instruction_lines(&map, input.instructions().len());
        drop(map);
        let mut program = match (checked.repaired.take(), native) {
            (Some(repaired), _) => Arc::new(repaired),
            (None, Some(marked)) => Arc::new(marked),
            (None, None) => program,
        };
        // The digest is of the program as checked: when the runtime's own marking below changes
        // it, the digest is taken first (else on first use, of the same program).
        let digest = std::sync::OnceLock::new();
        let contracted = super::object_of_writes::needed(&program);
        if contracted {
            let _ = digest.set(self::digest(&program));
        }
        // The check's plan is of the program checked: kept unless the contract changes it.
        let lowered = lowered.filter(|_| !contracted);
        super::object_of_writes::apply(&mut program, &mut checked.deviations);
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
            schemas: Default::default(),
            program,
        };
        prepared.task = prepared.names.index("task").unwrap_or(0);
        prepared.inputs = prepared
            .program
            .carries()
            .iter()
            .zip(&prepared.names.by_decl)
            .filter(|(c, _)| c.is_input() && c.name != "task")
            .map(|(_, &i)| i)
            .collect();
        if checked.outcome == ais_core::Outcome::Failed {
            let fatal: Vec<String> = prepared
                .findings
                .iter()
                .filter(|f| {
                    f.severity == ais_core::Severity::Fatal
                        || f.severity == ais_core::Severity::Error
                })
                .take(3)
                .map(|f| format!("{}: {}", f.id, f.message))
                .collect();
            prepared.not_runnable = Some(format!(
                "the program's check outcome is `failed`, so it has no runnable form ({}); run `ais check` on it and resolve the fatal findings",
                fatal.join("; ")
            ));
            return prepared;
        }
        let plan = match lowered.unwrap_or_else(|| lower::lower(&prepared.program)) {
            Ok(plan) => plan,
            Err(findings) => {
                prepared.not_runnable = Some(format!(
                    "the program does not lower: {}",
                    findings
                        .first()
                        .map_or(String::new(), |f| f.message.clone())
                ));
                return prepared;
            }
        };
        // A carry a step reads or writes without declaring it is kept by name, untyped (W8/W9
        // report it; its value is never dropped).
        // The names are extended in place (nothing shares them yet), and the initial values
        // made again only when a name was added.
        let names = Arc::get_mut(&mut prepared.names).expect("the names are not shared yet");
        let declared = names.list.len();
        for r in plan
            .steps
            .iter()
            .flat_map(|s| s.reads.iter().chain(&s.writes))
        {
            if names.of_ref(r).is_none() {
                names.map.insert(r.name.clone(), names.list.len());
                names.list.push(r.name.clone());
                names.types.push(None);
            }
        }
        if names.list.len() > declared {
            prepared.initial = carries::initial_values(&prepared.program, names);
        }
        match resolve(&prepared.program, &prepared.names, plan, lines, registry) {
            Ok(steps) => {
                prepared.has_slots = steps.iter().any(|s| {
                    matches!(s.work, Work::Slot(_) | Work::Call(None))
                        || matches!(s.control, Control::Choose(ref t) if t.len() > 1)
                });
                prepared.steps = steps;
            }
            Err(e) => prepared.not_runnable = Some(e),
        }
        prepared
    }
}

/// A declared tool with neither `body` nor `command` that the registry implements is a live
/// tool (rung 0 of §5.4's ladder): it is marked as natively embodied (`lang: rust`, as the
/// `ais!` macro marks its tools) so the validator does not call its instructions hollow, and
/// no repair re-owns them to a model. `None` when no tool needs marking.
fn mark_native(program: &Program, registry: &ToolRegistry) -> Option<Program> {
    let needs = |t: &ais_core::Tool| {
        let empty = |s: &Option<String>| s.as_deref().is_none_or(|b| b.trim().is_empty());
        empty(&t.body)
            && empty(&t.command)
            && registry.get(&t.name).is_some()
            && !registry.is_builtin(&t.name)
    };
    if !program.tool_list().iter().any(needs) {
        return None;
    }
    let mut p = program.clone();
    for t in p.tools.iter_mut().flatten() {
        if needs(t) {
            t.lang = Some("rust".to_owned());
            t.body = Some(format!(
                "// `{}` runs natively: the runtime's tool registry implements it.",
                t.name
            ));
        }
    }
    Some(p)
}

/// SHA-256 of the canonical AG-IR text, hex.
pub(crate) fn digest(program: &Program) -> String {
    digest_of(&ais_core::agir::write(program))
}

/// SHA-256 of a canonical AG-IR text, hex.
fn digest_of(text: &str) -> String {
    use sha2::Digest;
    let hash = sha2::Sha256::digest(text.as_bytes());
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

/// Resolves every step of the lowered plan for interpretation (see [`Resolver::step`]).
fn resolve(
    program: &Program,
    names: &Names,
    plan: lower::Plan,
    lines: Vec<Option<u32>>,
    registry: &ToolRegistry,
) -> Result<Vec<Step>, String> {
    let r = Resolver {
        program,
        names,
        registry,
        ix: ProgramIndex::new(program),
        reach: Reach::new(&plan),
        human: human_inputs(program, names),
        lines,
    };
    let mut steps = Vec::with_capacity(plan.steps.len());
    // Each core step is consumed as it is resolved: the plan and the resolved steps are never
    // held whole side by side.
    for (i, ls) in plan.steps.into_iter().enumerate() {
        steps.push(r.step(i, ls)?);
    }
    Ok(steps)
}

/// A core step's transitions as the machine keeps them: exactly sized (the lowering's
/// vectors have room to grow; 20,000 steps of that spare room were 20 MB).
fn exact(v: Vec<lower::Transition>) -> Box<[lower::Transition]> {
    v.into_boxed_slice()
}

/// The source line of each of the first `n` instructions (its `id` field, else the element),
/// found in one pass over the source map.
fn instruction_lines(map: &SourceMap, n: usize) -> Vec<Option<u32>> {
    let id = ais_core::FieldKey::from("id");
    map.lines_of(n, |l| match l.element {
        Element::Instruction(i)
            if l.index.is_none() && l.field.as_ref().is_none_or(|f| *f == id) =>
        {
            Some(i)
        }
        _ => None,
    })
}

/// What resolving a plan's steps looks up, computed once for the whole plan.
struct Resolver<'p> {
    program: &'p Program,
    names: &'p Names,
    registry: &'p ToolRegistry,
    ix: ProgramIndex<'p>,
    /// Which steps reach which ([`Reach`]).
    reach: Reach,
    /// [`human_inputs`] of the program.
    human: Vec<usize>,
    /// [`instruction_lines`] of the program.
    lines: Vec<Option<u32>>,
}

impl Resolver<'_> {
    /// Resolves step `i` of the plan: its work, how control leaves it, its carries as indices,
    /// the human inputs it needs, its folded knowledge and its source line.
    fn step(&self, i: usize, mut ls: lower::Step) -> Result<Step, String> {
        let Some(n) = self.program.instructions().get(i) else {
            return Err(format!("the plan has a step {i} with no instruction"));
        };
        let line = self.lines.get(i).copied().flatten().map(|l| l as usize);
        // A compiled body is moved into the step, not copied (the core step is consumed here;
        // nothing below looks at an inline executor).
        let work = match std::mem::replace(&mut ls.executor, Executor::Branch) {
            Executor::Inline(body) => Work::Inline(Box::new(body.compiled)),
            executor => {
                ls.executor = executor;
                self.work(n, &ls)
            }
        };
        let model = ls.unit == lower::Unit::Model;
        let (control, tests) = self.control(i, n, &ls, model);
        let routes = self.routes(&control, &ls);
        let reads: Vec<usize> = ls.reads.iter().filter_map(|c| self.index(c)).collect();
        let human = self.human_needs(&reads, &tests, &work);
        let writes: Vec<(usize, String)> = ls
            .writes
            .iter()
            .filter_map(|w| self.index(w).map(|c| (c, w.name.clone())))
            .collect();
        Ok(Step {
            id: n.id.clone(),
            opcode: n.opcode.clone(),
            model,
            tier: n.model.clone(),
            line,
            spawn: match &ls.executor {
                Executor::Spawn(sp) => Some(Box::new(spawn_ctl(sp, self.names, &ls, &self.reach))),
                _ => None,
            },
            work,
            control,
            writes: writes.iter().map(|(c, _)| *c).collect(),
            write_names: writes.into_iter().map(|(_, n)| n).collect(),
            result: ls.result.clone(),
            reads,
            tests,
            routes,
            human,
            doc: n.doc.clone().unwrap_or_default(),
            knowledge: self.knowledge(n, &ls),
            autonomy: n
                .autonomy
                .as_ref()
                .map(|a| a.tools.clone())
                .unwrap_or_default(),
            access: ls.access,
            guarded: exact(ls.guarded),
            default: exact(ls.default),
        })
    }

    /// A carry reference's index in the run's carry file.
    fn index(&self, c: &lower::CarryRef) -> Option<usize> {
        self.names.of_ref(c)
    }

    /// What the step runs, from its executor.
    fn work(&self, n: &ais_core::Instruction, ls: &lower::Step) -> Work {
        let (program, names, registry, access) =
            (self.program, self.names, self.registry, ls.access);
        match &ls.executor {
            Executor::Tools(calls) => Work::Tools(
                calls
                    .iter()
                    .map(|c| tool_step(program, names, c, access, registry))
                    .collect(),
            ),
            Executor::Inline(body) => Work::Inline(Box::new(body.compiled.clone())), // moved in `step`
            Executor::Slot(slot) => Work::Slot(slot.operands.operands.clone()),
            Executor::WriteOut(c) => Work::WriteOut(self.index(c).unwrap_or(0)),
            Executor::RunProgram(c) => Work::RunProgram(self.index(c).unwrap_or(0)),
            Executor::Branch => Work::None,
            Executor::Spawn(sp) => spawn_work(program, &self.ix, n, names, access, registry, sp),
            Executor::Call(c) => Work::Call(c.target.clone()),
            Executor::Terminal => Work::Terminal,
            Executor::Hollow(r) => Work::Hollow(r.clone()),
            Executor::Unsupported(op) => Work::Unsupported(op.clone()),
        }
    }

    /// The carries whose error value the step tests on the way out (§10.2): the LOOP verdict,
    /// and what its guards read as `c.ok`/`c.error` ([`ais_core::expr::errors_tested`]) — a
    /// guard that merely reads a carry (`len(rows) > 0`) does not route a failure landed there.
    fn routes(&self, control: &Control, ls: &lower::Step) -> Vec<usize> {
        let mut routes: Vec<usize> = match control {
            Control::Loop(ctl) => ctl.verdict.into_iter().collect(),
            Control::Choose(_) => Vec::new(),
            Control::Edges => ls
                .guarded
                .iter()
                .filter_map(|t| t.guard.as_ref())
                .flat_map(|g| ais_core::expr::errors_tested(&g.text))
                .filter_map(|c| self.names.index(&c))
                .collect(),
        };
        routes.sort_unstable();
        routes.dedup();
        routes
    }

    /// How control leaves step `i` (a LOOP, a model's ROUTE choice, else its edges), and the
    /// carries the step tests on the way (the LOOP verdict, the guards' reads), sorted.
    fn control(
        &self,
        i: usize,
        n: &ais_core::Instruction,
        ls: &lower::Step,
        model: bool,
    ) -> (Control, Vec<usize>) {
        let mut tests = Vec::new();
        let control = if let Some(lc) = &ls.looping {
            let ctl = loop_ctl(lc, self.names, self.program, i, &self.reach);
            tests.extend(ctl.verdict);
            Control::Loop(ctl)
        } else if n.opcode == Opcode::Route && model {
            let mut t: Vec<usize> = ls.guarded.iter().chain(&ls.default).map(|t| t.to).collect();
            t.sort_unstable();
            t.dedup();
            Control::Choose(t)
        } else {
            for g in ls.guarded.iter().filter_map(|t| t.guard.as_ref()) {
                let read = g.compiled.carries_read();
                tests.extend(read.iter().filter_map(|r| self.names.index(r)));
            }
            Control::Edges
        };
        tests.sort_unstable();
        tests.dedup();
        (control, tests)
    }

    /// The human-input carries a step needs (§7.5): those among its reads, its tests and its
    /// tools' arguments, sorted.
    fn human_needs(&self, reads: &[usize], tests: &[usize], work: &Work) -> Vec<usize> {
        let mut needs: Vec<usize> = reads
            .iter()
            .chain(tests)
            .copied()
            .filter(|c| self.human.contains(c))
            .collect();
        if let Work::Tools(ts) = work {
            for a in ts.iter().flat_map(|t| &t.args) {
                if let ArgSource::Carry(c) | ArgSource::Field(c, _) = a.source
                    && self.human.contains(&c)
                {
                    needs.push(c);
                }
            }
        }
        needs.sort_unstable();
        needs.dedup();
        needs
    }

    /// The knowledge folded into the step, as (name, content): a slot's, a SPAWN worker's or a
    /// CALL's own list, else the knowledge resident on the instruction.
    fn knowledge(&self, n: &ais_core::Instruction, ls: &lower::Step) -> Vec<(String, String)> {
        let program = self.program;
        let folded = match &ls.executor {
            Executor::Slot(slot) => slot.operands.knowledge.clone(),
            Executor::Spawn(sp) => sp.worker.knowledge.clone(),
            Executor::Call(c) => c.operands.knowledge.clone(),
            _ => self
                .ix
                .resident_on(&n.id)
                .iter()
                .filter_map(|&k| program.knowledge_list().get(k))
                .map(|k| k.name.clone())
                .collect(),
        };
        folded
            .iter()
            .filter_map(|k| program.knowledge_item(k))
            .map(|(_, k)| (k.name.clone(), k.text().unwrap_or_default()))
            .collect()
    }
}

/// The carries that hold a human's answer (§7.5, DESIGN "Human input"): `role: input`
/// carries other than `task`, as indices in `names`.
fn human_inputs(program: &Program, names: &Names) -> Vec<usize> {
    program
        .carries()
        .iter()
        .zip(&names.by_decl)
        .filter(|(c, _)| c.is_input() && c.name != "task")
        .map(|(_, &i)| i)
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
    let args = call
        .bindings
        .iter()
        .map(|b| {
            let is_path = call
                .signature
                .param(&b.param)
                .map_or_else(|| bind::is_path_name(&b.param), bind::is_path_param);
            let source = match &b.source {
                BindSource::Carry(c) => names.index(c).map_or(ArgSource::Null, ArgSource::Carry),
                BindSource::Field { carry, field } => names
                    .index(carry)
                    .map_or(ArgSource::Null, |c| ArgSource::Field(c, field.clone())),
                BindSource::Invocation(_) => ArgSource::Invocation(access),
                BindSource::Null => ArgSource::Null,
            };
            Arg {
                param: b.param.clone(),
                source,
                is_path,
            }
        })
        .collect();
    let ret = call.signature.ret.resolved(program);
    let imp = registry
        .lookup(&call.tool, declared)
        .map(|imp| registry.held_to_signature(&call.tool, imp, &ret, program));
    let ask_user = call.tool == lower::builtins::ASK_USER && imp.is_none();
    let native_entry = declared
        .filter(|t| imp.is_none() && t.is_native())
        .map(|_| ais_core::native_entry(program));
    ToolStep {
        name: call.tool.clone(),
        args,
        imp,
        ret,
        ask_user,
        class: tool_class(&call.tool, declared, registry),
        native_entry,
    }
}

/// What the journal must know of tool `name` (declared as `declared`, when it is) beyond its
/// name, for a DU call and a call a model makes inside a slot alike:
///
/// - **idempotent**: declared `idempotent: true` (an AG-IR field the spec does not define,
///   kept as the reader keeps unknown fields) or registered so: a call in flight at a crash
///   may simply run again;
/// - **mcp**: bound to an MCP server's tool — its paths name places in the server's own
///   namespace, which the server confines to its allowed directories, not places under the
///   output root;
/// - **read**: a native tool on a `SENSE` surface (§5.4: `SENSE` is for reads), or a tool
///   registered read-only (an MCP tool its server marks `readOnlyHint`). A `command` or
///   Python tool is never one: a process may do anything, whatever its surface says.
pub(crate) fn tool_class(
    name: &str,
    declared: Option<&ais_core::Tool>,
    registry: &ToolRegistry,
) -> ToolClass {
    let idempotent = declared.is_some_and(|t| {
        t.extra
            .iter()
            .any(|(k, v)| k == "idempotent" && matches!(v, ais_core::Value::Bool(true)))
    }) || registry.is_idempotent(name);
    let mcp = declared.is_some_and(|t| t.mcp.is_some());
    let sense = declared.is_some_and(|t| t.surface == Some(ais_core::ToolSurface::Sense));
    let read = registry.is_read_only(name) || (!mcp && sense && registry.is_native(name));
    ToolClass {
        idempotent,
        read,
        mcp,
    }
}

/// A SPAWN's work: its bound tools (DU siblings), else a worker slot per sibling; with
/// neither tools nor writes it is a structural fan-out over its unguarded edges.
fn spawn_work(
    program: &Program,
    ix: &ProgramIndex,
    n: &ais_core::Instruction,
    names: &Names,
    access: Access,
    registry: &ToolRegistry,
    sp: &lower::Spawn,
) -> Work {
    let tools = ix.bound_tools(n);
    if tools.is_empty() {
        if n.writes.is_empty() {
            return Work::None;
        }
        return Work::Slot(sp.worker.operands.clone());
    }
    let mut steps = Vec::new();
    for t in tools {
        let text = t.sig.clone().unwrap_or_else(|| "() -> str".to_owned());
        let Ok(signature) = sig::parse(&text) else {
            continue;
        };
        let bindings = ix.bind_tool(n, &signature, None);
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
            returns: match &signature.ret {
                Return::Type(t) => Some(t.clone()),
                _ => None,
            },
            signature,
            surface: t.surface.clone(),
        };
        steps.push(tool_step(program, names, &call, access, registry));
    }
    Work::Tools(steps)
}

/// A SPAWN's control: its fan-out source, its isolation and parallelism, and for a structural
/// fan-out the step where its branches join. `reach` answers which steps reach which.
fn spawn_ctl(sp: &lower::Spawn, names: &Names, ls: &lower::Step, reach: &Reach) -> SpawnCtl {
    let branches: Vec<usize> = ls.default.iter().map(|t| t.to).collect();
    let join = (branches.len() >= 2)
        .then(|| {
            // The first step, in breadth-first order from the first branch, that every branch
            // reaches and that is no branch itself.
            let mut seen = vec![false; reach.len()];
            let mut queue = std::collections::VecDeque::from([branches[0]]);
            while let Some(v) = queue.pop_front() {
                if v >= reach.len() || seen[v] {
                    continue;
                }
                seen[v] = true;
                if !branches.contains(&v) && branches.iter().all(|&b| reach.reaches(b, v)) {
                    return Some(v);
                }
                queue.extend(reach.successors(v).iter().copied());
            }
            None
        })
        .flatten();
    let (list, literal) = match &sp.source {
        FanOut::Carry(c) => (names.of_ref(c), None),
        FanOut::List(items) => (None, Some(items.clone())),
        FanOut::Task => (None, None),
    };
    SpawnCtl {
        isolation: sp.isolation.clone(),
        list,
        literal,
        max_parallel: sp.max_parallel,
        join,
    }
}

/// A LOOP's control at step `i`: its verdict and counter carries, its cap (imposed when the
/// program declares none), and the steps it goes back to and advances to. `reach` answers
/// which steps reach which.
fn loop_ctl(
    lc: &lower::LoopControl,
    names: &Names,
    program: &Program,
    i: usize,
    reach: &Reach,
) -> LoopCtl {
    let target = |e: usize| -> Option<usize> {
        program
            .edge_list()
            .get(e)
            .and_then(|edge| program.instruction(&edge.to))
            .map(|(t, _)| t)
    };
    let back = lc.back.iter().filter_map(|&e| target(e)).find(|&t| t != i);
    let advance = lc
        .advance
        .iter()
        .filter_map(|&e| target(e))
        .find(|&t| !reach.reaches(t, i) || back.is_none());
    let cap = lc
        .cap
        .and_then(|c| i64::try_from(c).ok())
        .filter(|&c| c >= 1);
    LoopCtl {
        verdict: lc.verdict.as_ref().and_then(|v| names.of_ref(v)),
        cap: cap.unwrap_or(IMPOSED_CAP),
        cap_imposed: cap.is_none(),
        counter: lc.counter.as_ref().and_then(|c| names.of_ref(c)),
        back,
        advance,
    }
}

/// Which steps each step reaches (through at least zero edges), computed on demand: a row is
/// one depth-first search, made only for the steps a SPAWN's join or a LOOP's exit asks
/// about and kept for the next question. (Every row up front was n searches of n steps: a
/// 20,000-step chain spent 400 MB and seconds on it.)
pub(crate) struct Reach {
    succ: Vec<Vec<usize>>,
    rows: std::cell::RefCell<HashMap<usize, Vec<bool>>>,
}

impl Reach {
    /// The successors of every step of `plan`; no row yet.
    fn new(plan: &lower::Plan) -> Reach {
        let succ = plan
            .steps
            .iter()
            .map(|s| s.guarded.iter().chain(&s.default).map(|t| t.to).collect())
            .collect();
        Reach {
            succ,
            rows: Default::default(),
        }
    }

    /// The steps `v` has an edge to (guarded ones first, in edge order); none out of range.
    fn successors(&self, v: usize) -> &[usize] {
        self.succ.get(v).map_or(&[], Vec::as_slice)
    }

    /// The number of steps.
    fn len(&self) -> usize {
        self.succ.len()
    }

    /// Whether step `b` is reachable from step `a` (false when either is out of range).
    fn reaches(&self, a: usize, b: usize) -> bool {
        let n = self.len();
        if a >= n || b >= n {
            return false;
        }
        let mut rows = self.rows.borrow_mut();
        let row = rows.entry(a).or_insert_with(|| {
            let mut seen = vec![false; n];
            let mut stack = vec![a];
            while let Some(v) = stack.pop() {
                if v < n && !seen[v] {
                    seen[v] = true;
                    stack.extend(self.succ[v].iter().copied());
                }
            }
            seen
        });
        row[b]
    }
}
