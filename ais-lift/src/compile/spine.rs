//! The spine, the annotator flows and assembly: a designed program checked element by element
//! against the obligations, and everything code owns placed by code.
//!
//! The designer's answer is hostile. A step is kept only when it traces to a grounded
//! obligation (an element with none would be *added*); a prohibition is never a path (its id is
//! removed from any step that claims to perform it and folded onto the model slots as a rule);
//! an adaptive obligation stays one slot (a second step claiming it loses the claim); a tool
//! is the standard library's or one the skill embodies; names are identifiers. Code then
//! places what it owns: human gates (an input the person answers and a code-owned `ROUTE` on
//! it), knowledge items (the quote, the code block or the sibling file, embodied and resident
//! on the slots), the prohibitions and constraints folded onto the slots, the `TERMINAL`, the
//! edges in order, and — the degrade rung — a plain realization of each mandatory obligation
//! the design left out, recorded as such.

use super::answers::{Design, StepDesign, StepOpcode};
use super::{Final, Note};
use crate::bundle::BundleFile;
use crate::model::{Bearer, Cohesion, Force, Kind};
use crate::snippet::{Runtime, Sort};
use crate::{Skill, text};
use ais_core::plan::builtins::BUILTINS;
use ais_core::{
    Autonomy, Carry, ContentKind, Field, Instruction, Knowledge, Opcode, Owner, Program,
    ProgramBuilder, Role, Tool, ToolSurface, Type, TypeDecl, TypeKind, Value,
};
use std::collections::{BTreeSet, HashMap};

/// A tool the skill embodies: a runnable code block or a sibling script.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Offered {
    /// The tool's name.
    pub name: String,
    /// Where it comes from (`code block at 12:1`, `scripts/check.py`).
    pub from: String,
    /// Its language (`python`, `sh`).
    pub lang: String,
    /// Its body.
    #[serde(skip)]
    pub body: String,
    /// Its first line, to recognize it by.
    pub head: String,
}

/// The tools a skill embodies.
pub fn offered_tools(skill: &Skill) -> Vec<Offered> {
    let mut out: Vec<Offered> = Vec::new();
    let doc = skill.document();
    for s in crate::snippet::sort_all(doc) {
        if let Sort::Tool { runtime, .. } = s.sort {
            let block = &doc.blocks[s.block];
            let body = block.text.clone();
            out.push(Offered {
                name: format!("snippet_{}", s.span.line),
                from: format!("code block at {}:{}", s.span.line, s.span.column),
                lang: lang_of(runtime).to_owned(),
                head: first_line(&body),
                body,
            });
        }
    }
    for f in &skill.bundle().files {
        if let Some(lang) = script_lang(&f.path) {
            out.push(Offered {
                name: identifier(stem(&f.path)),
                from: f.path.clone(),
                lang: lang.to_owned(),
                head: first_line(&f.text),
                body: f.text.clone(),
            });
        }
    }
    out
}

fn lang_of(r: Runtime) -> &'static str {
    match r {
        Runtime::Python => "python",
        Runtime::Shell => "sh",
    }
}

fn script_lang(path: &str) -> Option<&'static str> {
    if path.ends_with(".py") {
        Some("python")
    } else if path.ends_with(".sh") || path.ends_with(".bash") {
        Some("sh")
    } else {
        None
    }
}

fn stem(path: &str) -> &str {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.split('.').next().unwrap_or(file)
}

fn first_line(text: &str) -> String {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .chars()
        .take(120)
        .collect()
}

/// `text` as an identifier: lower case, `[a-z0-9_]`, starting with a letter, at most 48 long.
pub fn identifier(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let mut out = out.trim_matches('_').to_owned();
    if !out.starts_with(|c: char| c.is_ascii_lowercase()) {
        out.insert_str(0, "x_");
    }
    out.truncate(48);
    out.trim_end_matches('_').to_owned()
}

fn is_identifier(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 64
        && text.starts_with(|c: char| c.is_ascii_lowercase())
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn is_type_name(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 64
        && text.starts_with(|c: char| c.is_ascii_uppercase())
        && text.chars().all(|c| c.is_ascii_alphanumeric())
}

const PRIMITIVES: [&str; 8] = [
    "str",
    "int",
    "float",
    "bool",
    "list[str]",
    "list[int]",
    "dict",
    "any",
];

/// What assembly built.
pub struct Assembly {
    /// The program, before `check`.
    pub program: Program,
    /// What it refused or added on its own, each with the reason.
    pub notes: Vec<Note>,
    /// The deviations from the skill it accepted, for the provenance record.
    pub deviations: Vec<ais_core::AcceptedDeviation>,
}

struct Step {
    ins: Instruction,
    /// Where in the skill the step's first obligation stands.
    key: usize,
}

/// Builds the program from the obligations and the design (see the module docs).
pub fn assemble(
    skill: &Skill,
    name: &str,
    obligations: &[Final],
    design: Design,
    offered: &[Offered],
) -> Assembly {
    let mut notes = Vec::new();
    let by_rule: HashMap<&str, &Final> = obligations.iter().map(|o| (o.rule.as_str(), o)).collect();
    let mut b = ProgramBuilder::new(name).input("task", Type::Str);
    // When to invoke it (§8.2): the frontmatter's description, else the skill's first heading.
    let first_heading = skill
        .document()
        .blocks
        .iter()
        .find(|b| matches!(b.kind, crate::markdown::BlockKind::Heading { .. }))
        .map(|b| b.text.trim().to_owned());
    if let Some(d) = skill
        .document()
        .frontmatter
        .as_ref()
        .and_then(|f| f.description.clone())
        .or(first_heading)
    {
        b = b.description(d);
    }

    // Types and carries.
    let mut types: Vec<String> = Vec::new();
    for t in design.types {
        if !is_type_name(&t.name) || types.contains(&t.name) {
            notes.push(Note::refused(
                format!("type `{}`", clip(&t.name)),
                "not a PascalCase name, or declared twice",
            ));
            continue;
        }
        let fields: Vec<Field> = t
            .fields
            .into_iter()
            .filter(|f| is_identifier(&f.name))
            .map(|f| Field {
                name: f.name,
                ty: Some(Type::parse(if PRIMITIVES.contains(&f.ty.as_str()) {
                    &f.ty
                } else {
                    "str"
                })),
                ..Field::default()
            })
            .collect();
        if fields.is_empty() {
            notes.push(Note::refused(
                format!("type `{}`", t.name),
                "it has no field with an identifier name",
            ));
            continue;
        }
        types.push(t.name.clone());
        b = b.type_decl(TypeDecl {
            name: t.name,
            kind: TypeKind::Object(fields),
            ..TypeDecl::default()
        });
    }
    let mut carries: Vec<String> = vec!["task".to_owned()];
    for c in design.carries {
        if !is_identifier(&c.name) || carries.contains(&c.name) {
            notes.push(Note::refused(
                format!("carry `{}`", clip(&c.name)),
                "not a snake_case identifier, `task`, or declared twice",
            ));
            continue;
        }
        let ty = if PRIMITIVES.contains(&c.ty.as_str()) || types.contains(&c.ty) {
            c.ty
        } else {
            notes.push(Note::refused(
                format!("type of carry `{}`", c.name),
                format!(
                    "`{}` is no primitive or declared type: `str` kept",
                    clip(&c.ty)
                ),
            ));
            "str".to_owned()
        };
        carries.push(c.name.clone());
        b = b.carry_with(Carry {
            name: c.name,
            ty: Some(Type::parse(&ty)),
            doc: Some(clip_doc(&c.doc)),
            ..Carry::default()
        });
    }

    // Steps, each checked.
    let tool_names: BTreeSet<String> = BUILTINS
        .iter()
        .filter(|t| t.name != "ask_user")
        .map(|t| t.name.to_owned())
        .chain(offered.iter().map(|o| o.name.clone()))
        .collect();
    let mut steps: Vec<Step> = Vec::new();
    let mut ids: BTreeSet<String> = BTreeSet::new();
    let mut adaptive_taken: BTreeSet<String> = BTreeSet::new();
    for d in design.steps {
        if let Some(step) = check_step(
            d,
            &by_rule,
            &tool_names,
            &mut ids,
            &mut adaptive_taken,
            &mut notes,
        ) {
            steps.push(step);
        }
    }
    let mut program = b.build();

    // The degrade rung: a plain realization of each mandatory agent obligation the design left
    // out.
    let traced: BTreeSet<String> = steps
        .iter()
        .flat_map(|s| s.ins.traces_to.clone().unwrap_or_default())
        .collect();
    let mut added_carries: Vec<(String, String)> = Vec::new();
    for o in obligations {
        if o.force != Force::Mandatory || o.bearer != Bearer::Agent || traced.contains(&o.rule) {
            continue;
        }
        let id = unique(&mut ids, &format!("do_{}", identifier(&o.rule)));
        let out = format!("{id}_result");
        match o.kind {
            Kind::Step => {
                steps.push(Step {
                    ins: slot(&id, &o.quote, &out, &o.rule),
                    key: o.span.start,
                });
                added_carries.push((out, o.quote.clone()));
                notes.push(Note::degraded(
                    &o.rule,
                    format!("the design left it out: realized as the slot `{id}`"),
                ));
            }
            Kind::Io => {
                steps.push(Step {
                    ins: slot(&id, &o.quote, &out, &o.rule),
                    key: o.span.start,
                });
                let write = unique(&mut ids, &format!("write_{}", identifier(&o.rule)));
                steps.push(Step {
                    ins: Instruction {
                        id: write.clone(),
                        opcode: Opcode::Act,
                        owner: Some(Owner::Code),
                        doc: Some(format!("Write what `{id}` produced.")),
                        reads: vec![out.clone()],
                        writes: vec![format!("{write}_path")],
                        tool: Some("write_file".to_owned()),
                        traces_to: Some(vec![o.rule.clone()]),
                        ..Instruction::default()
                    },
                    key: o.span.start,
                });
                added_carries.push((out, o.quote.clone()));
                added_carries.push((format!("{write}_path"), "Where it was written.".into()));
                notes.push(Note::degraded(
                    &o.rule,
                    format!("the design left it out: realized as `{id}` then `{write}`"),
                ));
            }
            _ => {}
        }
    }
    for (name, doc) in added_carries {
        push_carry(&mut program, &name, "str", &doc);
    }
    for s in &steps {
        for c in s.ins.reads.iter().chain(&s.ins.writes) {
            if program.carry(c).is_none() {
                push_carry(
                    &mut program,
                    c,
                    "str",
                    "Declared by the lift (the design used it undeclared).",
                );
                notes.push(Note::refused(
                    format!("carry `{c}`"),
                    "used by a step but not declared: declared as `str`",
                ));
            }
        }
    }

    // Human gates, in the skill's order among the steps.
    let mut order: Vec<Step> = Vec::new();
    let mut gates: Vec<Step> = Vec::new();
    for o in obligations {
        if o.kind != Kind::HumanGate || o.force != Force::Mandatory {
            continue;
        }
        let id = unique(&mut ids, &format!("gate_{}", identifier(&o.rule)));
        let answer = format!("approved_{}", identifier(&o.rule));
        push_input(
            &mut program,
            &answer,
            &format!("{} (true to go on, false to stop)", o.quote.trim()),
        );
        gates.push(Step {
            ins: Instruction {
                id,
                opcode: Opcode::Route,
                owner: Some(Owner::Code),
                doc: Some(format!("The person decides: {}", o.quote.trim())),
                reads: vec![answer],
                traces_to: Some(vec![o.rule.clone()]),
                ..Instruction::default()
            },
            key: o.span.start,
        });
    }
    for s in steps {
        while gates.first().is_some_and(|g| g.key < s.key) {
            order.push(gates.remove(0));
        }
        order.push(s);
    }
    order.extend(gates);

    // Rules folded onto the slots: prohibitions and constraints.
    let slots: Vec<usize> = order
        .iter()
        .enumerate()
        .filter(|(_, s)| s.ins.opcode.is_mind())
        .map(|(i, _)| i)
        .collect();
    let fold_targets: Vec<usize> = if slots.is_empty() {
        (0..order.len().min(1)).collect()
    } else {
        slots.clone()
    };
    for o in obligations {
        let fold = match (&o.kind, &o.force) {
            (Kind::Knowledge, _) | (Kind::HumanGate, _) => false,
            (_, Force::Forbidden) => true,
            (Kind::Constraint, Force::Mandatory) => !traced.contains(&o.rule),
            _ => false,
        };
        if !fold || o.bearer != Bearer::Agent {
            continue;
        }
        for &i in &fold_targets {
            let ins = &mut order[i].ins;
            // "Never violate …" is how a folded rule reads, to the model and to G5 alike.
            let doc = ins.doc.get_or_insert_with(String::new);
            doc.push_str(&format!("\nNever violate this rule: {}", o.quote.trim()));
            push_trace(ins, &o.rule);
        }
    }

    // Knowledge: the quote (or the code block it stands in), resident on the slots.
    let resident: Vec<String> = fold_targets
        .iter()
        .map(|&i| order[i].ins.id.clone())
        .collect();
    let mut knowledge_names: BTreeSet<String> = BTreeSet::new();
    for o in obligations.iter().filter(|o| o.kind == Kind::Knowledge) {
        let content = code_block_around(skill, o).unwrap_or_else(|| o.quote.clone());
        let name = unique(&mut knowledge_names, &format!("k_{}", identifier(&o.rule)));
        push_knowledge(
            &mut program,
            &name,
            content,
            resident.clone(),
            vec![o.rule.clone()],
        );
    }
    let bundle = skill.bundle();
    let mut used_tools: BTreeSet<String> = BTreeSet::new();
    for s in &order {
        if let Some(t) = &s.ins.tool {
            used_tools.insert(t.clone());
        }
        if let Some(a) = &s.ins.autonomy {
            used_tools.extend(a.tools.iter().cloned());
        }
    }
    for f in &bundle.files {
        let embodied_as_tool = offered
            .iter()
            .any(|t| t.from == f.path && used_tools.contains(&t.name));
        if embodied_as_tool {
            continue;
        }
        let traces = tracing_file(obligations, f);
        let name = unique(
            &mut knowledge_names,
            &format!("file_{}", identifier(stem(&f.path))),
        );
        push_knowledge(
            &mut program,
            &name,
            f.text.clone(),
            resident.clone(),
            traces,
        );
        notes.push(Note::embodied(&f.path, format!("knowledge `{name}`")));
    }

    // Tools: the standard ones bound by name, the skill's own with their bodies.
    for name in &used_tools {
        let serves: Vec<String> = order
            .iter()
            .filter(|s| {
                s.ins.tool.as_deref() == Some(name.as_str())
                    || s.ins
                        .autonomy
                        .as_ref()
                        .is_some_and(|a| a.tools.contains(name))
            })
            .map(|s| s.ins.id.clone())
            .collect();
        let traces: BTreeSet<String> = order
            .iter()
            .filter(|s| serves.contains(&s.ins.id))
            .flat_map(|s| s.ins.traces_to.clone().unwrap_or_default())
            .filter(|r| {
                by_rule
                    .get(r.as_str())
                    .is_some_and(|o| o.force != Force::Forbidden)
            })
            .collect();
        let tool = if let Some(bi) = BUILTINS.iter().find(|t| t.name == name) {
            Tool {
                name: name.clone(),
                sig: Some(bi.sig.to_owned()),
                surface: Some(bi.surface.to_surface()),
                serves: Some(serves),
                ..Tool::default()
            }
        } else if let Some(o) = offered.iter().find(|o| &o.name == name) {
            let user = order
                .iter()
                .find(|s| s.ins.tool.as_deref() == Some(name.as_str()));
            let params = user.map(|s| s.ins.reads.join(", ")).unwrap_or_default();
            let surface = match user.map(|s| s.ins.opcode.clone()) {
                Some(Opcode::Sense) => ToolSurface::Sense,
                _ => ToolSurface::ActArtifact,
            };
            Tool {
                name: name.clone(),
                sig: Some(format!("({params}) -> str")),
                surface: Some(surface),
                serves: Some(serves),
                body: Some(o.body.clone()),
                lang: Some(o.lang.clone()),
                doc: Some(format!("Embodied from {}.", o.from)),
                traces_to: Some(traces.into_iter().collect()),
                ..Tool::default()
            }
        } else {
            continue;
        };
        program.tools.get_or_insert_with(Vec::new).push(tool);
    }

    // A step that runs a program (a command, a script) can fail: its result lands in an
    // `outcome` carry, so a failure is a value the run can see, not a crash (§10.2).
    for s in &order {
        let runs = s
            .ins
            .tool
            .as_deref()
            .is_some_and(|t| t == "run_command" || offered.iter().any(|o| o.name == t));
        if let (true, Some(w)) = (runs, s.ins.writes.first())
            && let Some(c) = program
                .walker
                .as_mut()
                .and_then(|wk| wk.carries.as_mut())
                .and_then(|cs| cs.iter_mut().find(|c| &c.name == w))
            && c.ty != Some(Type::parse(ais_core::OUTCOME))
        {
            c.ty = Some(Type::parse(ais_core::OUTCOME));
            notes.push(Note::typed(
                format!("carry `{w}`"),
                format!("`{}` runs a program: its result is an `outcome`", s.ins.id),
            ));
        }
    }
    // Carries no kept step uses (a refused step's) are not declared.
    if let Some(cs) = program.walker.as_mut().and_then(|w| w.carries.as_mut()) {
        cs.retain(|c| {
            let used = c.role.is_some()
                || order
                    .iter()
                    .any(|s| s.ins.reads.contains(&c.name) || s.ins.writes.contains(&c.name));
            if !used {
                notes.push(Note::refused(
                    format!("carry `{}`", c.name),
                    "no kept step reads or writes it",
                ));
            }
            used
        });
    }

    // A step that realizes only what the skill leaves optional is a decision point: a ROUTE
    // the model owns chooses, on the step's own reads, whether to take it — when no later step
    // reads what it writes. The ROUTE traces to nothing (it is the audit's decision-point
    // scaffolding); the optional step keeps its trace. Otherwise it still runs on every run, and the lift records that as
    // an accepted deviation rather than leave a later step without its input.
    let mut deviations = Vec::new();
    let mut decided: Vec<Step> = Vec::with_capacity(order.len());
    let total = order.len();
    let steps: Vec<(usize, Step)> = order.into_iter().enumerate().collect();
    // What the steps after each one read.
    let mut read_after: Vec<BTreeSet<String>> = vec![BTreeSet::new(); total + 1];
    for (i, s) in steps.iter().rev() {
        let mut r = read_after[i + 1].clone();
        r.extend(s.ins.reads.iter().cloned());
        read_after[*i] = r;
    }
    for (i, s) in steps {
        let traces = s.ins.traces_to.as_deref().unwrap_or_default();
        let own: Vec<&Final> = traces
            .iter()
            .filter_map(|r| by_rule.get(r.as_str()).copied())
            .filter(|o| o.kind != Kind::Constraint && o.force != Force::Forbidden)
            .collect();
        let optional = !own.is_empty() && own.iter().all(|o| o.force == Force::Discretionary);
        if !optional || s.ins.opcode == Opcode::Route {
            decided.push(s);
            continue;
        }
        let first = own[0];
        let unread = s.ins.writes.iter().all(|w| !read_after[i + 1].contains(w));
        if unread {
            let id = unique(&mut ids, &format!("may_{}", s.ins.id));
            decided.push(Step {
                ins: Instruction {
                    id,
                    opcode: Opcode::Route,
                    owner: Some(Owner::Model),
                    reads: s.ins.reads.clone(),
                    doc: Some(format!(
                        "The skill leaves this step optional (\"{}\"): decide whether to take \
                         `{}` ({}) or to go on without it.",
                        super::one_line(&first.quote),
                        s.ins.id,
                        s.ins.doc.as_deref().unwrap_or("no doc").trim()
                    )),
                    ..Instruction::default()
                },
                key: s.key,
            });
            decided.push(s);
            continue;
        }
        deviations.push(ais_core::AcceptedDeviation {
            obligation: Some(first.rule.clone()),
            kind: Some(ais_core::DeviationKind::Remodalized),
            element: Some(ais_core::ElementRef::Node(s.ins.id.clone())),
            reason: Some(
                "the skill leaves it optional; a later step reads what it writes, so the lifted \
                 program performs it on every run"
                    .to_owned(),
            ),
            extra: Vec::new(),
        });
        notes.push(Note::degraded(
            &first.rule,
            format!(
                "optional in the skill, performed on every run by `{}` (an accepted deviation: \
                 a later step reads what it writes)",
                s.ins.id
            ),
        ));
        decided.push(s);
    }
    let order = decided;

    // The terminal and the edges, in order.
    let done = unique(&mut ids, "done");
    let last_writes: Vec<String> = order
        .iter()
        .rev()
        .find(|s| !s.ins.writes.is_empty())
        .map(|s| s.ins.writes.clone())
        .unwrap_or_default();
    let nodes: Vec<Instruction> = order.into_iter().map(|s| s.ins).collect();
    let mut edges = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let next = nodes.get(i + 1).map_or(done.clone(), |m| m.id.clone());
        if n.opcode == Opcode::Route && n.owner == Some(Owner::Model) {
            // A decision point: the optional step, or the step after it.
            let skip = nodes.get(i + 2).map_or(done.clone(), |m| m.id.clone());
            for to in [next, skip] {
                edges.push(ais_core::Edge {
                    from: n.id.clone(),
                    to,
                    ..ais_core::Edge::default()
                });
            }
        } else if n.opcode == Opcode::Route {
            let answer = n.reads[0].clone();
            edges.push(ais_core::Edge {
                from: n.id.clone(),
                to: next,
                guard: Some(answer),
                ..ais_core::Edge::default()
            });
            edges.push(ais_core::Edge {
                from: n.id.clone(),
                to: done.clone(),
                guard: Some("otherwise".to_owned()),
                ..ais_core::Edge::default()
            });
        } else {
            edges.push(ais_core::Edge {
                from: n.id.clone(),
                to: next,
                ..ais_core::Edge::default()
            });
        }
    }
    let mut all = nodes;
    all.push(Instruction {
        id: done,
        opcode: Opcode::Terminal,
        reads: last_writes,
        ..Instruction::default()
    });
    // Each carry's origin: its only writer.
    if let Some(cs) = program.walker.as_mut().and_then(|w| w.carries.as_mut()) {
        for c in cs
            .iter_mut()
            .filter(|c| c.role.is_none() && c.produced_by.is_none())
        {
            let mut writers = all.iter().filter(|n| n.writes.contains(&c.name));
            if let (Some(only), None) = (writers.next(), writers.next()) {
                c.produced_by = Some(only.id.clone());
            }
        }
    }
    program.nodes = Some(all);
    program.edges = Some(edges);
    // The skill states its steps in an order; the lift keeps it (a fan-out is not the lift's
    // to invent).
    program.concurrency = Some(ais_core::Concurrency {
        spawn: Some(ais_core::SpawnSource::None),
        reason: Some("the steps run in the order the skill states them".to_owned()),
        ..ais_core::Concurrency::default()
    });
    // The explicit form the `ais!` DSL writes, so `--emit rust` says it exactly.
    program.make_explicit();
    Assembly {
        program,
        notes,
        deviations,
    }
}

#[allow(clippy::too_many_arguments)]
fn check_step(
    d: StepDesign,
    by_rule: &HashMap<&str, &Final>,
    tools: &BTreeSet<String>,
    ids: &mut BTreeSet<String>,
    adaptive_taken: &mut BTreeSet<String>,
    notes: &mut Vec<Note>,
) -> Option<Step> {
    let what = format!("step `{}`", clip(&d.id));
    if !is_identifier(&d.id) || d.id == "done" || d.id.starts_with("gate_") || ids.contains(&d.id) {
        notes.push(Note::refused(
            what,
            "its id is not a fresh snake_case identifier",
        ));
        return None;
    }
    let mut traces: Vec<String> = Vec::new();
    for r in &d.traces_to {
        let Some(o) = by_rule.get(r.as_str()) else {
            notes.push(Note::refused(
                format!("{what}'s claim of `{}`", clip(r)),
                "no grounded obligation has that rule id",
            ));
            continue;
        };
        if o.force == Force::Forbidden && o.kind != Kind::Knowledge {
            notes.push(Note::refused(
                format!("{what}'s claim of `{r}`"),
                "a prohibition is never a path: it is folded onto the slots as a rule",
            ));
            continue;
        }
        if o.kind == Kind::HumanGate {
            notes.push(Note::refused(
                format!("{what}'s claim of `{r}`"),
                "a human gate is placed by code",
            ));
            continue;
        }
        if o.cohesion == Cohesion::Adaptive && !adaptive_taken.insert(r.clone()) {
            notes.push(Note::refused(
                format!("{what}'s claim of `{r}`"),
                "an adaptive unit stays one slot: an earlier step realizes it",
            ));
            continue;
        }
        if !traces.contains(r) {
            traces.push(r.clone());
        }
    }
    if traces.is_empty() {
        notes.push(Note::refused(
            what,
            "it traces to no grounded obligation (it would be an added element)",
        ));
        return None;
    }
    let key = traces
        .iter()
        .filter_map(|r| by_rule.get(r.as_str()).map(|o| o.span.start))
        .min()
        .unwrap_or(usize::MAX);
    let names = |list: Vec<String>, field: &str, notes: &mut Vec<Note>| -> Vec<String> {
        let mut out = Vec::new();
        for c in list {
            if !is_identifier(&c) {
                notes.push(Note::refused(
                    format!("{what}'s {field} `{}`", clip(&c)),
                    "not a snake_case identifier",
                ));
            } else if field == "write" && c == "task" {
                notes.push(Note::refused(
                    format!("{what}'s write of `task`"),
                    "the request is an input",
                ));
            } else if !out.contains(&c) {
                out.push(c);
            }
        }
        out
    };
    let reads = names(d.reads, "read", notes);
    let writes = names(d.writes, "write", notes);
    let mut tool = None;
    if matches!(d.opcode, StepOpcode::Sense | StepOpcode::Act) {
        match d.tool {
            Some(t) if tools.contains(&t) => tool = Some(t),
            Some(t) => notes.push(Note::refused(
                format!("{what}'s tool `{}`", clip(&t)),
                "neither a standard tool nor one the skill embodies",
            )),
            None => {}
        }
    }
    let belt: Vec<String> = d
        .tools
        .into_iter()
        .filter(|t| {
            let ok = tools.contains(t);
            if !ok {
                notes.push(Note::refused(
                    format!("{what}'s belt tool `{}`", clip(t)),
                    "neither a standard tool nor one the skill embodies",
                ));
            }
            ok
        })
        .collect();
    ids.insert(d.id.clone());
    let mind = d.opcode.is_mind();
    Some(Step {
        ins: Instruction {
            id: d.id,
            opcode: d.opcode.opcode(),
            owner: Some(if mind { Owner::Model } else { Owner::Code }),
            doc: Some(clip_doc(&d.doc)),
            reads,
            writes,
            tool,
            body: if d.opcode == StepOpcode::Code {
                d.body
            } else {
                None
            },
            autonomy: (mind && !belt.is_empty()).then(|| Autonomy {
                tools: belt,
                ..Autonomy::default()
            }),
            traces_to: Some(traces),
            ..Instruction::default()
        },
        key,
    })
}

fn slot(id: &str, quote: &str, out: &str, rule: &str) -> Instruction {
    Instruction {
        id: id.to_owned(),
        opcode: Opcode::GenRaw,
        owner: Some(Owner::Model),
        doc: Some(quote.trim().to_owned()),
        reads: vec!["task".to_owned()],
        writes: vec![out.to_owned()],
        traces_to: Some(vec![rule.to_owned()]),
        ..Instruction::default()
    }
}

fn unique(taken: &mut BTreeSet<String>, base: &str) -> String {
    let mut name = base.to_owned();
    let mut n = 2;
    while taken.contains(&name) {
        name = format!("{base}_{n}");
        n += 1;
    }
    taken.insert(name.clone());
    name
}

fn push_trace(ins: &mut Instruction, rule: &str) {
    let t = ins.traces_to.get_or_insert_with(Vec::new);
    if !t.iter().any(|r| r == rule) {
        t.push(rule.to_owned());
    }
}

fn push_carry(program: &mut Program, name: &str, ty: &str, doc: &str) {
    if program.carry(name).is_some() {
        return;
    }
    let w = program.walker.get_or_insert_with(Default::default);
    w.carries.get_or_insert_with(Vec::new).push(Carry {
        name: name.to_owned(),
        ty: Some(Type::parse(ty)),
        doc: Some(clip_doc(doc)),
        ..Carry::default()
    });
}

fn push_input(program: &mut Program, name: &str, doc: &str) {
    let w = program.walker.get_or_insert_with(Default::default);
    w.carries.get_or_insert_with(Vec::new).push(Carry {
        name: name.to_owned(),
        ty: Some(Type::Bool),
        role: Some(Role::Input),
        doc: Some(clip_doc(doc)),
        ..Carry::default()
    });
}

fn push_knowledge(
    program: &mut Program,
    name: &str,
    content: String,
    resident_on: Vec<String>,
    traces: Vec<String>,
) {
    program
        .knowledge
        .get_or_insert_with(Vec::new)
        .push(Knowledge {
            name: name.to_owned(),
            resident_on,
            content: vec![(ContentKind::Body, Value::Str(content))],
            traces_to: (!traces.is_empty()).then_some(traces),
            ..Knowledge::default()
        });
}

/// The code block a knowledge obligation's quote stands in, when it stands in one.
fn code_block_around(skill: &Skill, o: &Final) -> Option<String> {
    skill
        .document()
        .blocks
        .iter()
        .find(|b| {
            matches!(b.kind, crate::markdown::BlockKind::Code { .. })
                && b.span.start <= o.span.start
                && o.span.end <= b.span.end
        })
        .map(|b| b.text.clone())
}

/// The obligations whose quote names the file.
fn tracing_file(obligations: &[Final], f: &BundleFile) -> Vec<String> {
    let name = f.path.rsplit('/').next().unwrap_or(&f.path);
    obligations
        .iter()
        .filter(|o| text::normalize(&o.quote).text.contains(name))
        .map(|o| o.rule.clone())
        .collect()
}

fn clip(text: &str) -> String {
    let one: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(60)
        .collect();
    one
}

fn clip_doc(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || *c == '\n')
        .take(4000)
        .collect()
}
