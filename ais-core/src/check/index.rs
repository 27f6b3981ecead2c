//! One pass over a program that every check shares: elements indexed by name (the calling
//! convention's [`ProgramIndex`], which the checks and the bindings share), the control graph
//! with reachability and strongly connected components, who writes and who reads each carry,
//! and each instruction's tool binding (§5.4). Building it is linear in the program's size; the
//! checks then never search a list by name.

pub(crate) use crate::bind::Map;
use crate::bind::index::push_unique;
use crate::bind::{ParamBinding, ProgramIndex};
use crate::expr::TypeEnv;
use crate::plan::builtins::{Builtin, builtin};
use crate::program::{Instruction, Modality, Program, Tool, Type, TypeKind};
use crate::sig::{Param, Return, SigError, Signature};
use crate::suggest::Suggester;
use Map as HashMap;
use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use std::cell::OnceCell;

/// A tool an instruction runs: a declared tool (by index) or a built-in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum ToolRef {
    /// `tools[i]`.
    Declared(usize),
    /// A built-in the program does not declare.
    Builtin(&'static Builtin),
}

/// How one instruction binds to the tool plane.
#[derive(Clone, Debug, Default)]
pub(crate) struct ToolBinding {
    /// The tools it runs, in pipeline (declaration) order.
    pub pipeline: Vec<ToolRef>,
    /// Its `tool` field names a tool that is neither declared nor built in.
    pub unknown_tool: Option<String>,
    /// The binding mechanisms disagree: what they each say.
    pub conflict: Option<String>,
}

/// Fields of an object type, as (name, type) pairs.
pub(crate) type Fields = Vec<(String, Option<Type>)>;

/// The shared index.
pub(crate) struct Index<'p> {
    pub p: &'p Program,
    /// Instruction id → its first declaration.
    pub instr: HashMap<&'p str, usize>,
    /// Carries, tools, types and knowledge by name; binds tools and slots (§7).
    pub bind: ProgramIndex<'p>,
    /// Per instruction: the indices of its outgoing edges that are transitions (both endpoints
    /// exist, modality not `forbidden`), in edge order.
    pub out: Vec<Vec<usize>>,
    /// Per edge: (from, to) instruction indices when both endpoints exist.
    pub ends: Vec<Option<(usize, usize)>>,
    /// Per instruction: reachable from the entry (`nodes[0]`).
    pub reachable: Vec<bool>,
    /// Per instruction: the id of its strongly connected component.
    pub scc: Vec<usize>,
    /// Carry name → instructions that write it, in program order.
    pub writers: HashMap<&'p str, Vec<usize>>,
    /// Carry name → instructions that read it, in program order.
    pub readers: HashMap<&'p str, Vec<usize>>,
    /// Per instruction: its tool binding.
    pub binding: Vec<ToolBinding>,
    /// Per declared tool: the instructions it serves (by any mechanism), in program order.
    pub tool_users: Vec<Vec<usize>>,
    /// Per declared tool: its signature — parsed from `sig`, else derived from the body's
    /// `def`, else the built-in's canonical one; `None` when there is none to parse.
    pub sigs: Vec<Option<Result<Signature, SigError>>>,
    /// Per instruction: each tool of its pipeline with its parameter bindings (§7); a tool
    /// whose signature does not parse is left out (X5 reports it).
    pub calls: Vec<Vec<Call>>,
    /// The expression environment (carries and types), built once for every guard and body.
    pub env: TypeEnv,
    /// Per instruction: the type of its CODE body, or why the body does not check, found on
    /// first use ([`Index::check_body`]) and shared by every check that asks.
    body_types: Vec<OnceCell<Result<Type, crate::expr::ExprError>>>,
    /// Did-you-mean over the carry names (the names of `env`), built on the first unknown
    /// name and shared by every check and expression of the program.
    carry_names: OnceCell<Suggester<'p>>,
    /// Did-you-mean over the instruction ids, likewise.
    ids: OnceCell<Suggester<'p>>,
    /// Did-you-mean over the declared and built-in tool names, likewise.
    tools: OnceCell<Suggester<'p>>,
}

impl crate::suggest::CarryNames for Index<'_> {
    fn suggester(&self) -> &Suggester<'_> {
        self.carry_suggester()
    }
}

/// One tool call of an instruction's pipeline, bound.
#[derive(Clone, Debug)]
pub(crate) struct Call {
    /// The tool.
    pub tool: ToolRef,
    /// Its signature.
    pub sig: Signature,
    /// Its parameters' bindings, in signature order.
    pub bindings: Vec<ParamBinding>,
}

impl<'p> Index<'p> {
    /// Builds the index in one pass over each section.
    pub fn new(p: &'p Program) -> Self {
        let nodes = p.instructions();
        let mut instr = HashMap::with_capacity_and_hasher(nodes.len(), Default::default());
        for (i, n) in nodes.iter().enumerate() {
            instr.entry(n.id.as_str()).or_insert(i);
        }
        let bind = ProgramIndex::new(p);
        let Graph {
            out,
            ends,
            reachable,
            scc,
        } = graph(p, &instr);
        let (writers, readers) = data_flow(nodes);
        let (binding, tool_users) = tool_bindings(p, &instr, &bind);
        let sigs: Vec<Option<Result<Signature, SigError>>> =
            p.tool_list().iter().map(tool_signature).collect();
        let calls = bound_calls(nodes, &binding, &sigs, &bind);
        Index {
            p,
            instr,
            bind,
            out,
            ends,
            reachable,
            scc,
            writers,
            readers,
            binding,
            tool_users,
            sigs,
            calls,
            env: TypeEnv::from_program(p),
            body_types: std::iter::repeat_with(OnceCell::new)
                .take(nodes.len())
                .collect(),
            carry_names: OnceCell::new(),
            ids: OnceCell::new(),
            tools: OnceCell::new(),
        }
    }

    /// The did-you-mean index of the carry names.
    pub fn carry_suggester(&self) -> &Suggester<'p> {
        self.carry_names
            .get_or_init(|| Suggester::new(self.p.carries().iter().map(|c| c.name.as_str())))
    }

    /// The instruction ids closest to `name`, best first.
    pub fn suggest_id(&self, name: &str) -> Vec<String> {
        self.ids
            .get_or_init(|| Suggester::new(self.p.instructions().iter().map(|n| n.id.as_str())))
            .suggest(name)
    }

    /// The tool names, declared or built in, closest to `name`, best first.
    pub fn suggest_tool(&self, name: &str) -> Vec<String> {
        self.tools
            .get_or_init(|| {
                Suggester::new(
                    self.p
                        .tool_list()
                        .iter()
                        .map(|t| t.name.as_str())
                        .chain(crate::plan::builtins::BUILTINS.iter().map(|b| b.name)),
                )
            })
            .suggest(name)
    }

    /// The instruction at an index.
    pub fn node(&self, i: usize) -> Option<&'p Instruction> {
        self.p.instructions().get(i)
    }

    /// Parses and type-checks a guard in the program's environment (the guard must be a `bool`
    /// reading a carry).
    pub fn check_guard(&self, guard: &str) -> Result<(), crate::expr::ExprError> {
        let limits = crate::expr::Limits::default();
        crate::expr::compile_guard_with(&self.env, guard, &limits, Some(self)).map(|_| ())
    }

    /// Parses and type-checks instruction `i`'s CODE body (empty when it has none) in the
    /// program's environment; returns its type. Checked once per index, however many checks
    /// ask. `i` is an instruction's index (from [`Index::node`]).
    pub fn check_body(&self, i: usize) -> Result<&Type, &crate::expr::ExprError> {
        self.body_types[i]
            .get_or_init(|| {
                let body = self.node(i).and_then(|n| n.body.as_deref()).unwrap_or("");
                let limits = crate::expr::Limits::default();
                crate::expr::compile_str_with(body, &self.env, &limits, Some(self)).map(|c| c.ty)
            })
            .as_ref()
    }

    /// The index of the declared tool with this name.
    pub fn tool_index(&self, name: &str) -> Option<usize> {
        self.bind.tool(name).map(|(t, _)| t)
    }

    /// The declared tool at an index.
    pub fn tool_at(&self, t: usize) -> Option<&'p Tool> {
        self.p.tool_list().get(t)
    }

    /// The declared type of a carry, by name (`None` when undeclared or untyped).
    pub fn carry_type(&self, name: &str) -> Option<&'p Type> {
        self.bind.carry(name)?.1.ty.as_ref()
    }

    /// True when a name is a declared carry.
    pub fn is_carry(&self, name: &str) -> bool {
        self.bind.carry(name).is_some()
    }

    /// The fields of an object type (a declared object or the built-in `outcome`).
    pub fn object_fields(&self, ty: &Type) -> Option<Fields> {
        let fields = self.bind.object_field_types(ty)?;
        Some(
            fields
                .into_iter()
                .map(|(n, t)| (n.to_owned(), t.cloned()))
                .collect(),
        )
    }

    /// The members of an enum type, when `ty` names a declared enum.
    pub fn enum_members(&self, ty: &Type) -> Option<Vec<&'p str>> {
        let Type::Named(n) = ty else { return None };
        match &self.bind.type_decl(n)?.1.kind {
            TypeKind::Enum(m) => Some(m.iter().map(|m| m.name.as_str()).collect()),
            _ => None,
        }
    }

    /// True when a type resolves: a primitive, a well-formed list/dict, a declared type or
    /// `outcome`.
    pub fn type_resolves(&self, ty: &Type) -> bool {
        match ty {
            Type::List(Some(t)) | Type::Dict(Some(t)) => self.type_resolves(t),
            Type::Named(n) => self.bind.type_decl(n).is_some() || n == crate::program::OUTCOME,
            Type::Invalid(_) => false,
            _ => true,
        }
    }

    /// The instructions whose out-edges are transitions, with the edges' targets.
    pub fn targets(&self, i: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.out
            .get(i)
            .into_iter()
            .flatten()
            .filter_map(|&e| self.ends.get(e).copied().flatten().map(|(_, t)| (e, t)))
    }
}

/// The control plane: outgoing edges, edge ends, reachability from the entry, and strongly
/// connected components.
struct Graph {
    out: Vec<Vec<usize>>,
    ends: Vec<Option<(usize, usize)>>,
    reachable: Vec<bool>,
    scc: Vec<usize>,
}

/// The control plane of `p`, its instructions indexed by id (`instr`).
fn graph(p: &Program, instr: &HashMap<&str, usize>) -> Graph {
    let nodes = p.instructions();
    let mut out = vec![Vec::new(); nodes.len()];
    let mut ends = Vec::with_capacity(p.edge_list().len());
    let mut graph: DiGraph<(), ()> = DiGraph::with_capacity(nodes.len(), p.edge_list().len());
    let ids: Vec<NodeIndex> = (0..nodes.len()).map(|_| graph.add_node(())).collect();
    for (e, edge) in p.edge_list().iter().enumerate() {
        let pair = match (instr.get(edge.from.as_str()), instr.get(edge.to.as_str())) {
            (Some(&f), Some(&t)) => Some((f, t)),
            _ => None,
        };
        ends.push(pair);
        if let Some((f, t)) = pair
            && edge.modality != Some(Modality::Forbidden)
        {
            out[f].push(e);
            graph.add_edge(ids[f], ids[t], ());
        }
    }
    let mut reachable = vec![false; nodes.len()];
    if !nodes.is_empty() {
        let mut stack = vec![0usize];
        reachable[0] = true;
        while let Some(n) = stack.pop() {
            for &e in &out[n] {
                if let Some((_, t)) = ends[e]
                    && !reachable[t]
                {
                    reachable[t] = true;
                    stack.push(t);
                }
            }
        }
    }
    let mut scc = vec![0usize; nodes.len()];
    for (c, comp) in tarjan_scc(&graph).into_iter().enumerate() {
        for n in comp {
            scc[n.index()] = c;
        }
    }
    Graph {
        out,
        ends,
        reachable,
        scc,
    }
}

/// Per carry name, instruction indices in program order.
pub(crate) type ByCarry<'p> = HashMap<&'p str, Vec<usize>>;

/// Per carry name: the instructions that write it and those that read it.
pub(crate) fn data_flow(nodes: &[Instruction]) -> (ByCarry<'_>, ByCarry<'_>) {
    let mut writers: HashMap<&str, Vec<usize>> = HashMap::default();
    let mut readers: HashMap<&str, Vec<usize>> = HashMap::default();
    for (i, n) in nodes.iter().enumerate() {
        for w in &n.writes {
            push_unique(writers.entry(w.as_str()).or_default(), i);
        }
        for r in &n.reads {
            push_unique(readers.entry(r.as_str()).or_default(), i);
        }
    }
    (writers, readers)
}

/// Per instruction its tool binding, and per declared tool the instructions it serves.
fn tool_bindings(
    p: &Program,
    instr: &HashMap<&str, usize>,
    bind: &ProgramIndex<'_>,
) -> (Vec<ToolBinding>, Vec<Vec<usize>>) {
    let nodes = p.instructions();
    // The tools serving each instruction. A `serves` entry names an id, and an id names its
    // first declaration (a repeated id is reported by W1), so a later instruction with the
    // same id is served by none.
    let served_by: Vec<&[usize]> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if instr.get(n.id.as_str()) == Some(&i) {
                bind.serving(&n.id)
            } else {
                &[]
            }
        })
        .collect();
    let mut tool_users = vec![Vec::new(); p.tool_list().len()];
    let binding: Vec<ToolBinding> = nodes
        .iter()
        .zip(&served_by)
        .map(|(n, served)| resolve_binding(bind, n, served))
        .collect();
    for (i, b) in binding.iter().enumerate() {
        for r in &b.pipeline {
            if let ToolRef::Declared(t) = r
                && let Some(users) = tool_users.get_mut(*t)
            {
                push_unique(users, i);
            }
        }
    }
    // A tool that lists an instruction in `serves` is used by it even when a binding
    // conflict dropped it from the pipeline.
    for (i, tools_serving) in served_by.iter().enumerate() {
        for &t in *tools_serving {
            if let Some(users) = tool_users.get_mut(t)
                && !users.contains(&i)
            {
                users.push(i);
            }
        }
    }
    (binding, tool_users)
}

/// Per instruction: each tool of its pipeline that has a signature, with its bindings (§7).
fn bound_calls(
    nodes: &[Instruction],
    binding: &[ToolBinding],
    sigs: &[Option<Result<Signature, SigError>>],
    bind: &ProgramIndex<'_>,
) -> Vec<Vec<Call>> {
    nodes
        .iter()
        .zip(binding)
        .map(|(n, b)| {
            b.pipeline
                .iter()
                .filter_map(|&tool| {
                    let sig = match tool {
                        ToolRef::Declared(t) => sigs.get(t)?.clone()?.ok()?,
                        ToolRef::Builtin(b) => builtin_signature(b),
                    };
                    let bindings = bind.bind_tool(n, &sig, None);
                    Some(Call {
                        tool,
                        sig,
                        bindings,
                    })
                })
                .collect()
        })
        .collect()
}

/// The signature of a declared tool: its `sig`; else, for a built-in name, the canonical one
/// (it wins: the library's body and the call must agree); else the `def` line of its body.
pub(crate) fn tool_signature(t: &Tool) -> Option<Result<Signature, SigError>> {
    if let Some(b) = builtin(&t.name)
        && t.body.as_deref().is_none_or(|b| b.trim().is_empty())
    {
        return Some(Ok(builtin_signature(b)));
    }
    if let Some(sig) = &t.sig {
        return Some(crate::sig::parse(sig));
    }
    let body = t.body.as_deref()?;
    let prefix = format!("def {}(", t.name);
    let start = body.find(&prefix)? + prefix.len();
    let rest = body.get(start..)?;
    let close = rest.find(')')?;
    let params = rest.get(..close)?;
    let after = rest.get(close + 1..)?;
    let ret = after
        .split_once("->")
        .and_then(|(_, r)| r.split(':').next())
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .unwrap_or("any");
    Some(crate::sig::parse(&format!("({params}) -> {ret}")))
}

/// The canonical signature of a built-in: its parameters, untyped, returning `str`.
pub(crate) fn builtin_signature(b: &Builtin) -> Signature {
    let inner = b
        .sig
        .trim_start_matches('(')
        .split(')')
        .next()
        .unwrap_or_default();
    Signature {
        params: inner
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|name| Param {
                name: name.to_owned(),
                ty: None,
            })
            .collect(),
        ret: Return::Type(Type::Str),
    }
}

/// Resolves §5.4's three binding mechanisms for one instruction: its `tool` field, the tools
/// whose `serves` list it (a pipeline, in declaration order), and a tool named like its id.
/// When several apply they must agree.
fn resolve_binding(bind: &ProgramIndex, n: &Instruction, served_by: &[usize]) -> ToolBinding {
    let p = bind.program();
    let mut b = ToolBinding::default();
    let by_field = n.tool.as_deref().map(|name| match bind.tool(name) {
        Some((t, _)) => Some(ToolRef::Declared(t)),
        None => builtin(name).map(ToolRef::Builtin),
    });
    let by_name = bind.tool(&n.id).map(|(t, _)| t);
    let tool_name = |t: usize| {
        p.tool_list()
            .get(t)
            .map(|t| t.name.clone())
            .unwrap_or_default()
    };
    match by_field {
        Some(None) => {
            b.unknown_tool = n.tool.clone();
        }
        Some(Some(r)) => {
            if served_by.is_empty() {
                b.pipeline = vec![r];
            } else if matches!(r, ToolRef::Declared(t) if served_by.contains(&t)) {
                b.pipeline = served_by.iter().map(|&t| ToolRef::Declared(t)).collect();
            } else {
                let names: Vec<String> = served_by.iter().map(|&t| tool_name(t)).collect();
                b.conflict = Some(format!(
                    "its `tool` field names `{}` but the tools serving it are {}",
                    n.tool.as_deref().unwrap_or_default(),
                    quote_list(&names)
                ));
                b.pipeline = vec![r];
            }
        }
        None => {
            if !served_by.is_empty() {
                b.pipeline = served_by.iter().map(|&t| ToolRef::Declared(t)).collect();
                if let Some(t) = by_name
                    && !served_by.contains(&t)
                    && p.tool_list().get(t).is_some_and(|t| t.serves.is_none())
                {
                    let names: Vec<String> = served_by.iter().map(|&t| tool_name(t)).collect();
                    b.conflict = Some(format!(
                        "the tool `{}` shares its id but the tools serving it are {}",
                        tool_name(t),
                        quote_list(&names)
                    ));
                }
            } else if let Some(t) = by_name {
                b.pipeline = vec![ToolRef::Declared(t)];
            }
        }
    }
    b
}

/// `a`, `b` and `c`, each in backticks.
pub(crate) fn quote_list(names: &[String]) -> String {
    let q: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match q.len() {
        0 => "none".into(),
        1 => q[0].clone(),
        _ => {
            let (last, rest) = q.split_last().unwrap_or((&q[0], &[]));
            format!("{} and {last}", rest.join(", "))
        }
    }
}
