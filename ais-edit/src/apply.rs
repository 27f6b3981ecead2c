//! Applying one operation to the in-memory program.

use crate::address::{Address, AddressError};
use crate::exprs::{self, RenameError};
use crate::model::{self, Reference};
use crate::ops::{CarrySpec, InstructionSpec, KnowledgeSpec, MemberSpec, Op, ToolSpec, TypeSpec};
use crate::reject::{Diagnostic, Reason};
use crate::view::{self, Part};
use ais_core::expr::{self, TypeEnv};
use ais_core::{
    Autonomy, Edge, EnumMember, Field, Instruction, Modality, Owner, Program, Type, TypeKind,
    Walker, agir,
};
use serde_json::{Value as Json, json};

/// What an operation did.
#[derive(Clone, Debug, Default)]
pub struct Applied {
    /// The element it created, when it created one (what `$N` names).
    pub created: Option<Address>,
    /// The elements it changed or created (deleted ones included).
    pub touched: Vec<Address>,
}

/// Why an operation does not apply, with what the patch layer needs to answer with the next
/// call.
#[derive(Clone, Debug)]
pub struct OpFail {
    /// Why.
    pub reason: Reason,
    /// What, in words.
    pub detail: String,
    /// The operation's field holding the name that failed, for a corrected patch.
    pub field: Option<&'static str>,
    /// The name that failed.
    pub name: Option<String>,
    /// Names close to it.
    pub candidates: Vec<String>,
    /// Where.
    pub diagnostics: Vec<Diagnostic>,
    /// An element to re-view.
    pub view: Option<Address>,
    /// A name to search for.
    pub search: Option<String>,
    /// Operations that, put before this one, make it apply (removing references).
    pub prepend: Vec<Json>,
    /// Operations that do what this one meant, in its place.
    pub instead: Vec<Json>,
}

impl OpFail {
    /// A failure with a reason and a detail.
    pub fn new(reason: Reason, detail: impl Into<String>) -> Box<Self> {
        Box::new(OpFail {
            reason,
            detail: detail.into(),
            field: None,
            name: None,
            candidates: Vec::new(),
            diagnostics: Vec::new(),
            view: None,
            search: None,
            prepend: Vec::new(),
            instead: Vec::new(),
        })
    }

    fn unknown(kind: &str, field: &'static str, name: &str, candidates: Vec<String>) -> Box<Self> {
        let mut f = OpFail::new(
            Reason::UnknownTarget,
            format!("`{field}`: no {kind} `{name}`"),
        );
        f.field = Some(field);
        f.name = Some(name.to_owned());
        f.candidates = candidates;
        f.search = Some(name.to_owned());
        f
    }

    fn view(mut self: Box<Self>, a: Address) -> Box<Self> {
        self.view = Some(a);
        self
    }
}

type R<T> = Result<T, Box<OpFail>>;

/// The patch's state: the program as the operations change it, and the program as it was
/// (generations and handles are judged against what the caller viewed).
pub struct State<'a> {
    /// The program being edited.
    pub program: Program,
    /// The program before the patch.
    pub original: &'a Program,
}

/// `hit`, or an unknown-name failure with the names close to `name` among `all`.
fn found<'a>(
    kind: &str,
    field: &'static str,
    name: &str,
    hit: Option<usize>,
    all: impl IntoIterator<Item = &'a str>,
) -> R<usize> {
    hit.ok_or_else(|| OpFail::unknown(kind, field, name, ais_core::did_you_mean(name, all)))
}

fn find_instruction(p: &Program, field: &'static str, id: &str) -> R<usize> {
    let all = p.instructions().iter().map(|i| i.id.as_str());
    found(
        "instruction",
        field,
        id,
        p.instruction(id).map(|x| x.0),
        all,
    )
}

fn find_carry(p: &Program, field: &'static str, name: &str) -> R<usize> {
    let all = p.carries().iter().map(|c| c.name.as_str());
    found("carry", field, name, p.carry(name).map(|x| x.0), all)
}

fn find_tool(p: &Program, field: &'static str, name: &str) -> R<usize> {
    let all = p.tool_list().iter().map(|c| c.name.as_str());
    found("tool", field, name, p.tool(name).map(|x| x.0), all)
}

fn find_knowledge(p: &Program, field: &'static str, name: &str) -> R<usize> {
    let all = p.knowledge_list().iter().map(|c| c.name.as_str());
    let hit = p.knowledge_item(name).map(|x| x.0);
    found("knowledge item", field, name, hit, all)
}

fn find_type(p: &Program, field: &'static str, name: &str) -> R<usize> {
    let all = p.type_list().iter().map(|c| c.name.as_str());
    found(
        "declared type",
        field,
        name,
        p.type_decl(name).map(|x| x.0),
        all,
    )
}

fn find_edge(p: &Program, from: &str, to: &str, index: usize) -> R<usize> {
    find_instruction(p, "from", from)?;
    find_instruction(p, "to", to)?;
    let a = Address::Edge {
        from: from.to_owned(),
        to: to.to_owned(),
        index,
    };
    model::edge_index(p, &a).ok_or_else(|| {
        let targets: Vec<&str> = p
            .edge_list()
            .iter()
            .filter(|e| e.from == from)
            .map(|e| e.to.as_str())
            .collect();
        let mut f = OpFail::unknown(
            "edge",
            "to",
            to,
            ais_core::did_you_mean(to, targets.clone()),
        );
        f.detail = if targets.is_empty() {
            format!("no edge `{a}`: `{from}` has no outgoing edge")
        } else {
            format!(
                "no edge `{a}`; the edges out of `{from}` go to: {}",
                targets.join(", ")
            )
        };
        f.search = None;
        f.view(Address::Instruction(from.to_owned()))
    })
}

/// Rejects a generation that is not the element's as the caller viewed it (in the program
/// before the patch).
fn check_generation(st: &State, a: &Address, given: &Option<String>) -> R<()> {
    let Some(given) = given else { return Ok(()) };
    let current = model::generation(st.original, a);
    if current.as_deref() == Some(given.as_str()) {
        return Ok(());
    }
    let detail = match current {
        Some(c) => format!(
            "stale generation: `{a}` is at {c}, not {given}; it changed since it was viewed — re-view it"
        ),
        None => format!("stale generation: `{a}` did not exist before this patch"),
    };
    Err(OpFail::new(Reason::StaleGeneration, detail).view(a.clone()))
}

/// A new name must be usable as one: not empty, no path or control characters, a plain
/// identifier where guards name it.
fn check_new_name(kind: &str, name: &str, identifier: bool) -> R<()> {
    let bad = name.is_empty()
        || name.len() > 256
        || name
            .chars()
            .any(|c| c.is_control() || c.is_whitespace() || "/\\:#$".contains(c))
        || name.contains("..")
        || name.contains("->");
    if bad || (identifier && !exprs::is_plain_name(name)) {
        let what = if identifier {
            "an identifier (`[A-Za-z_][A-Za-z0-9_]*`, no keyword or guard sentinel)"
        } else {
            "a name of at most 256 characters with no whitespace, control or path characters (`/ \\ : # $ .. ->`)"
        };
        return Err(OpFail::new(
            Reason::InvalidName,
            format!("{kind} name `{}` is not {what}", name.escape_debug()),
        ));
    }
    Ok(())
}

fn collision(kind: &str, name: &str, a: Address) -> Box<OpFail> {
    OpFail::new(
        Reason::Collision,
        format!("a {kind} named `{name}` exists already"),
    )
    .view(a)
}

/// Reads an element given as JSON through the AG-IR reader: `section` is the YAML around
/// it.
fn read_element(section: &str, element: &Json, what: &str) -> R<Program> {
    let json = serde_json::to_string(element).unwrap_or_default();
    let text = section.replace("{}", &json);
    let doc = agir::read(&text).map_err(|e| {
        OpFail::new(
            Reason::InvalidElement,
            format!("the {what} does not read as AG-IR: {}", e.message),
        )
    })?;
    Ok(doc.program)
}

/// A whole element given as JSON (`spec`), read through the AG-IR reader as the one entry of
/// `section`, and taken out of the program read by `take`.
fn element_of<E: Clone>(
    spec: &impl serde::Serialize,
    section: &str,
    what: &str,
    take: impl Fn(&Program) -> Option<&E>,
) -> R<E> {
    let json = serde_json::to_value(spec).unwrap_or_default();
    let p = read_element(section, &json, what)?;
    take(&p)
        .cloned()
        .ok_or_else(|| OpFail::new(Reason::InvalidElement, format!("no {what} given")))
}

fn instruction_of(spec: &InstructionSpec) -> R<Instruction> {
    check_new_name("instruction", &spec.id, false)?;
    element_of(spec, "nodes:\n  - {}\n", "instruction", |p| {
        p.instructions().first()
    })
}

fn carry_of(spec: &CarrySpec) -> R<ais_core::Carry> {
    check_new_name("carry", &spec.name, true)?;
    element_of(spec, "walker:\n  carries:\n    - {}\n", "carry", |p| {
        p.carries().first()
    })
}

fn tool_of(spec: &ToolSpec) -> R<ais_core::Tool> {
    check_new_name("tool", &spec.name, false)?;
    element_of(spec, "tools:\n  - {}\n", "tool", |p| p.tool_list().first())
}

fn knowledge_of(spec: &KnowledgeSpec) -> R<ais_core::Knowledge> {
    check_new_name("knowledge item", &spec.name, false)?;
    element_of(spec, "knowledge:\n  - {}\n", "knowledge item", |p| {
        p.knowledge_list().first()
    })
}

fn member_json(m: &MemberSpec, object: bool) -> Json {
    let mut o = serde_json::Map::new();
    if object {
        if let Some(t) = &m.ty {
            o.insert("type".into(), t.clone().into());
        }
        if let Some(d) = &m.doc {
            o.insert("doc".into(), d.clone().into());
        }
        if let Some(d) = &m.default {
            o.insert("default".into(), d.clone());
        }
        Json::Object(o)
    } else {
        m.doc.clone().map_or(Json::Null, Json::String)
    }
}

fn type_of(spec: &TypeSpec) -> R<ais_core::TypeDecl> {
    check_new_name("type", &spec.name, true)?;
    let object = spec.kind == crate::ops::TypeKindSpec::Object;
    let mut members = serde_json::Map::new();
    for m in &spec.members {
        check_new_name(if object { "field" } else { "member" }, &m.name, true)?;
        if !object && (m.ty.is_some() || m.default.is_some()) {
            return Err(OpFail::new(
                Reason::BadShape,
                format!("enum member `{}` takes `name` and `doc` only", m.name),
            ));
        }
        members.insert(m.name.clone(), member_json(m, object));
    }
    let mut o = serde_json::Map::new();
    o.insert("name".into(), spec.name.clone().into());
    o.insert("kind".into(), if object { "object" } else { "enum" }.into());
    o.insert(
        if object { "fields" } else { "members" }.into(),
        Json::Object(members),
    );
    if let Some(d) = &spec.doc {
        o.insert("doc".into(), d.clone().into());
    }
    let p = read_element("types:\n  - {}\n", &Json::Object(o), "type")?;
    p.type_list()
        .first()
        .cloned()
        .ok_or_else(|| OpFail::new(Reason::InvalidElement, "no type given"))
}

fn modality(text: &str) -> R<Modality> {
    match Modality::parse(text) {
        Modality::Unknown(m) => {
            let mut f = OpFail::new(
                Reason::BadShape,
                format!("`modality`: `{m}` is not mandatory, discretionary or forbidden"),
            );
            f.field = Some("modality");
            f.name = Some(m.clone());
            f.candidates = ais_core::did_you_mean(&m, ["mandatory", "discretionary", "forbidden"]);
            Err(f)
        }
        m => Ok(m),
    }
}

fn owner(text: &str) -> R<Owner> {
    match Owner::parse(text) {
        Owner::Unknown(o) => {
            let mut f = OpFail::new(
                Reason::BadShape,
                format!("`owner`: `{o}` is not `code` or `model`"),
            );
            f.field = Some("owner");
            f.name = Some(o.clone());
            f.candidates = ais_core::did_you_mean(&o, ["code", "model"]);
            Err(f)
        }
        o => Ok(o),
    }
}

fn parse_type(field: &'static str, text: &str) -> R<Type> {
    match Type::parse(text) {
        Type::Invalid(t) => {
            let mut f = OpFail::new(
                Reason::BadShape,
                format!(
                    "`{field}`: `{t}` is not a type expression (`str`, `list[str]`, `dict[str, int]`, a declared type)"
                ),
            );
            f.field = Some(field);
            Err(f)
        }
        t => Ok(t),
    }
}

/// Checks a guard or body in scope: parsed, names resolved, types checked against the program
/// as it stands at this operation.
fn check_expr(p: &Program, field: &'static str, text: &str, guard: bool) -> R<()> {
    if guard && expr::is_sentinel(text) {
        return Ok(());
    }
    let env = TypeEnv::from_program(p);
    let limits = expr::Limits::default();
    let result = if guard {
        expr::compile_guard(&env, text, &limits).map(drop)
    } else {
        expr::compile_str(text, &env, &limits).map(drop)
    };
    result.map_err(|e| {
        let mut f = OpFail::new(
            if e.category.as_str() == "limit_error" {
                Reason::TooLarge
            } else {
                Reason::InvalidExpression
            },
            format!("`{field}`: {}", e.message),
        );
        f.diagnostics.push(Diagnostic {
            code: Some(e.category.as_str().to_owned()),
            severity: None,
            message: e.message.clone(),
            at: Some(field.to_owned()),
            line: Some(e.line),
            column: Some(e.column),
        });
        f.field = Some(field);
        f.candidates.clone_from(&e.did_you_mean);
        if e.category.as_str() == "name_error" {
            let name: String = text
                .lines()
                .nth(e.line.saturating_sub(1) as usize)
                .unwrap_or_default()
                .chars()
                .skip(e.column.saturating_sub(1) as usize)
                .take(e.len as usize)
                .collect();
            if !name.is_empty() {
                f.search = Some(name.clone());
                f.name = Some(name);
            }
        }
        f
    })
}

fn nodes(p: &mut Program) -> &mut Vec<Instruction> {
    p.nodes.get_or_insert_with(Vec::new)
}

fn edges(p: &mut Program) -> &mut Vec<Edge> {
    p.edges.get_or_insert_with(Vec::new)
}

fn touched(a: Address) -> Applied {
    Applied {
        created: None,
        touched: vec![a],
    }
}

fn created(a: Address) -> Applied {
    Applied {
        created: Some(a.clone()),
        touched: vec![a],
    }
}

fn instr(id: &str) -> Address {
    Address::Instruction(id.to_owned())
}

/// Applies one operation.
pub fn apply(st: &mut State, op: &Op) -> R<Applied> {
    match op {
        Op::SetProgram {
            name,
            description,
            walker,
            shape,
            standalone,
            generation,
        } => {
            check_generation(st, &Address::Program, generation)?;
            let p = &mut st.program;
            if let Some(n) = name {
                check_new_name("program", n, false)?;
                p.name = Some(n.clone());
            }
            if let Some(d) = description {
                p.description = Some(d.clone());
            }
            if let Some(w) = walker {
                check_new_name("walker", w, false)?;
                p.walker.get_or_insert_with(Walker::default).name = Some(w.clone());
            }
            if let Some(s) = shape {
                p.shape = Some(s.clone());
            }
            if let Some(s) = standalone {
                p.standalone = Some(*s);
            }
            Ok(touched(Address::Program))
        }
        Op::AddInstruction {
            instruction,
            before,
            after,
        } => {
            let i = instruction_of(instruction)?;
            if st.program.instruction(&i.id).is_some() {
                return Err(collision("instruction", &i.id, instr(&i.id)));
            }
            let at = match (before, after) {
                (Some(_), Some(_)) => {
                    return Err(OpFail::new(
                        Reason::BadShape,
                        "give `before` or `after`, not both",
                    ));
                }
                (Some(b), None) => find_instruction(&st.program, "before", b)?,
                (None, Some(a)) => find_instruction(&st.program, "after", a)? + 1,
                (None, None) => st.program.instructions().len(),
            };
            let id = i.id.clone();
            nodes(&mut st.program).insert(at, i);
            Ok(created(instr(&id)))
        }
        Op::ReplaceInstruction {
            id,
            instruction,
            generation,
        } => {
            let n = find_instruction(&st.program, "id", id)?;
            check_generation(st, &instr(id), generation)?;
            if instruction.id != *id {
                let mut f = OpFail::new(
                    Reason::BadShape,
                    format!(
                        "`instruction.id` is `{}`, not `{id}`: replace keeps the id; rename it with `rename`",
                        instruction.id
                    ),
                );
                f.instead.push(json!({"op": "rename", "target": format!("instruction:{id}"), "to": instruction.id}));
                f.instead.push(json!({"op": "replace_instruction", "id": instruction.id, "instruction": instruction}));
                return Err(f);
            }
            let i = instruction_of(instruction)?;
            nodes(&mut st.program)[n] = i;
            Ok(touched(instr(id)))
        }
        Op::DeleteInstruction { ids } => delete_instructions(st, ids),
        Op::InsertBetween {
            from,
            to,
            index,
            instruction,
            generation,
        } => {
            let e = find_edge(&st.program, from, to, *index)?;
            check_generation(st, &instr(from), generation)?;
            let i = instruction_of(instruction)?;
            if st.program.instruction(&i.id).is_some() {
                return Err(collision("instruction", &i.id, instr(&i.id)));
            }
            let new_id = i.id.clone();
            let at = find_instruction(&st.program, "to", to)?;
            nodes(&mut st.program).insert(at, i);
            let es = edges(&mut st.program);
            es[e].to.clone_from(&new_id);
            es.insert(
                e + 1,
                Edge {
                    from: new_id.clone(),
                    to: to.clone(),
                    modality: Some(Modality::Mandatory),
                    ..Edge::default()
                },
            );
            Ok(Applied {
                created: Some(instr(&new_id)),
                touched: vec![instr(&new_id), instr(from)],
            })
        }
        Op::SetOwner {
            id,
            owner: o,
            generation,
        } => {
            let n = find_instruction(&st.program, "id", id)?;
            check_generation(st, &instr(id), generation)?;
            nodes(&mut st.program)[n].owner = Some(owner(o)?);
            Ok(touched(instr(id)))
        }
        Op::SetReads {
            id,
            reads,
            generation,
        } => {
            let n = find_instruction(&st.program, "id", id)?;
            check_generation(st, &instr(id), generation)?;
            for r in reads {
                find_carry(&st.program, "reads", r)?;
            }
            nodes(&mut st.program)[n].reads.clone_from(reads);
            Ok(touched(instr(id)))
        }
        Op::SetWrites {
            id,
            writes,
            generation,
        } => {
            let n = find_instruction(&st.program, "id", id)?;
            check_generation(st, &instr(id), generation)?;
            for w in writes {
                find_carry(&st.program, "writes", w)?;
            }
            nodes(&mut st.program)[n].writes.clone_from(writes);
            Ok(touched(instr(id)))
        }
        Op::SetOutput { id, ty, generation } => {
            let n = find_instruction(&st.program, "id", id)?;
            check_generation(st, &instr(id), generation)?;
            let t = ty.as_deref().map(|t| parse_type("type", t)).transpose()?;
            nodes(&mut st.program)[n].output = t;
            Ok(touched(instr(id)))
        }
        Op::SetBody {
            id,
            body,
            generation,
        } => {
            let n = find_instruction(&st.program, "id", id)?;
            check_generation(st, &instr(id), generation)?;
            check_expr(&st.program, "body", body, false)?;
            nodes(&mut st.program)[n].body = Some(body.clone());
            Ok(touched(instr(id)))
        }
        Op::Bind {
            id,
            tool,
            generation,
        } => {
            let n = find_instruction(&st.program, "id", id)?;
            check_generation(st, &instr(id), generation)?;
            if ais_core::plan::builtins::builtin(tool).is_none() {
                find_tool(&st.program, "tool", tool)?;
            }
            nodes(&mut st.program)[n].tool = Some(tool.clone());
            Ok(touched(instr(id)))
        }
        Op::SetAutonomy {
            id,
            tools,
            generation,
        } => {
            let n = find_instruction(&st.program, "id", id)?;
            check_generation(st, &instr(id), generation)?;
            for t in tools {
                if ais_core::plan::builtins::builtin(t).is_none() {
                    find_tool(&st.program, "tools", t)?;
                }
            }
            let a = nodes(&mut st.program)[n]
                .autonomy
                .get_or_insert_with(Autonomy::default);
            a.tools.clone_from(tools);
            Ok(touched(instr(id)))
        }
        Op::SetPart {
            id,
            at,
            value,
            generation,
        } => set_part(st, id, at, Some(value), generation),
        Op::RemovePart { id, at, generation } => set_part(st, id, at, None, generation),
        Op::AddEdge {
            from,
            to,
            modality: m,
            guard,
            position,
        } => {
            find_instruction(&st.program, "from", from)?;
            find_instruction(&st.program, "to", to)?;
            let m = m.as_deref().map(modality).transpose()?;
            if let Some(g) = guard {
                check_expr(&st.program, "guard", g, true)?;
            }
            let outgoing: Vec<usize> = st
                .program
                .edge_list()
                .iter()
                .enumerate()
                .filter(|(_, e)| e.from == *from)
                .map(|(i, _)| i)
                .collect();
            let at = match position {
                None => st.program.edge_list().len(),
                Some(k) if *k < outgoing.len() => outgoing[*k],
                Some(k) if *k == outgoing.len() => outgoing
                    .last()
                    .map_or(st.program.edge_list().len(), |l| l + 1),
                Some(k) => {
                    return Err(OpFail::new(
                        Reason::BadShape,
                        format!(
                            "`position` {k}: `{from}` has {} outgoing edges (0 to {} allowed)",
                            outgoing.len(),
                            outgoing.len()
                        ),
                    )
                    .view(instr(from)));
                }
            };
            edges(&mut st.program).insert(
                at,
                Edge {
                    from: from.clone(),
                    to: to.clone(),
                    modality: Some(m.unwrap_or(if guard.is_some() {
                        Modality::Discretionary
                    } else {
                        Modality::Mandatory
                    })),
                    guard: guard.clone(),
                    ..Edge::default()
                },
            );
            let a = model::edge_address(&st.program, at);
            Ok(Applied {
                created: Some(a.clone()),
                touched: vec![a, instr(from)],
            })
        }
        Op::RemoveEdge {
            from,
            to,
            index,
            generation,
        } => {
            let e = find_edge(&st.program, from, to, *index)?;
            let a = model::edge_address(&st.program, e);
            check_generation(st, &a, generation)?;
            edges(&mut st.program).remove(e);
            Ok(Applied {
                created: None,
                touched: vec![a, instr(from)],
            })
        }
        Op::SetGuard {
            from,
            to,
            index,
            guard,
            generation,
        } => {
            let e = find_edge(&st.program, from, to, *index)?;
            let a = model::edge_address(&st.program, e);
            check_generation(st, &a, generation)?;
            if let Some(g) = guard {
                check_expr(&st.program, "guard", g, true)?;
            }
            edges(&mut st.program)[e].guard.clone_from(guard);
            Ok(Applied {
                created: None,
                touched: vec![a, instr(from)],
            })
        }
        Op::SetModality {
            from,
            to,
            index,
            modality: m,
            generation,
        } => {
            let e = find_edge(&st.program, from, to, *index)?;
            let a = model::edge_address(&st.program, e);
            check_generation(st, &a, generation)?;
            edges(&mut st.program)[e].modality = Some(modality(m)?);
            Ok(Applied {
                created: None,
                touched: vec![a, instr(from)],
            })
        }
        Op::ReorderEdges {
            from,
            order,
            generation,
        } => reorder(st, from, order, generation),
        Op::AddCarry { carry } => {
            let c = carry_of(carry)?;
            if st.program.carry(&c.name).is_some() {
                return Err(collision("carry", &c.name, Address::Carry(c.name.clone())));
            }
            // `produced_by` may name an instruction a later operation adds: the validator
            // judges it once, at the end.
            let name = c.name.clone();
            st.program
                .walker
                .get_or_insert_with(Walker::default)
                .carries
                .get_or_insert_with(Vec::new)
                .push(c);
            Ok(created(Address::Carry(name)))
        }
        Op::RetypeCarry {
            carry,
            ty,
            generation,
        } => {
            let k = find_carry(&st.program, "carry", carry)?;
            check_generation(st, &Address::Carry(carry.clone()), generation)?;
            let t = parse_type("type", ty)?;
            carries_mut(&mut st.program)[k].ty = Some(t);
            Ok(touched(Address::Carry(carry.clone())))
        }
        Op::SetProducedBy {
            carry,
            instruction,
            generation,
        } => {
            let k = find_carry(&st.program, "carry", carry)?;
            check_generation(st, &Address::Carry(carry.clone()), generation)?;
            if let Some(i) = instruction {
                find_instruction(&st.program, "instruction", i)?;
            }
            carries_mut(&mut st.program)[k]
                .produced_by
                .clone_from(instruction);
            Ok(touched(Address::Carry(carry.clone())))
        }
        Op::AddTool { tool } => {
            let t = tool_of(tool)?;
            if st.program.tool(&t.name).is_some() {
                return Err(collision("tool", &t.name, Address::Tool(t.name.clone())));
            }
            let name = t.name.clone();
            st.program.tools.get_or_insert_with(Vec::new).push(t);
            Ok(created(Address::Tool(name)))
        }
        Op::ReplaceTool {
            name,
            tool,
            generation,
        } => {
            let k = find_tool(&st.program, "name", name)?;
            check_generation(st, &Address::Tool(name.clone()), generation)?;
            if tool.name != *name {
                let mut f = OpFail::new(
                    Reason::BadShape,
                    format!(
                        "`tool.name` is `{}`, not `{name}`: replace keeps the name; rename it with `rename`",
                        tool.name
                    ),
                );
                f.instead.push(
                    json!({"op": "rename", "target": format!("tool:{name}"), "to": tool.name}),
                );
                f.instead
                    .push(json!({"op": "replace_tool", "name": tool.name, "tool": tool}));
                return Err(f);
            }
            let t = tool_of(tool)?;
            tools_mut(&mut st.program)[k] = t;
            Ok(touched(Address::Tool(name.clone())))
        }
        Op::SetToolBody {
            name,
            body,
            lang,
            generation,
        } => {
            let k = find_tool(&st.program, "name", name)?;
            check_generation(st, &Address::Tool(name.clone()), generation)?;
            let t = &mut tools_mut(&mut st.program)[k];
            t.body = Some(body.clone());
            if lang.is_some() {
                t.lang.clone_from(lang);
            }
            Ok(touched(Address::Tool(name.clone())))
        }
        Op::SetCommand {
            name,
            command,
            generation,
        } => {
            let k = find_tool(&st.program, "name", name)?;
            check_generation(st, &Address::Tool(name.clone()), generation)?;
            tools_mut(&mut st.program)[k].command = Some(command.clone());
            Ok(touched(Address::Tool(name.clone())))
        }
        Op::AddKnowledge { knowledge } => {
            let k = knowledge_of(knowledge)?;
            if st.program.knowledge_item(&k.name).is_some() {
                return Err(collision(
                    "knowledge item",
                    &k.name,
                    Address::Knowledge(k.name.clone()),
                ));
            }
            for r in &k.resident_on {
                find_instruction(&st.program, "resident_on", r)?;
            }
            let name = k.name.clone();
            st.program.knowledge.get_or_insert_with(Vec::new).push(k);
            Ok(created(Address::Knowledge(name)))
        }
        Op::SetResidency {
            name,
            resident_on,
            generation,
        } => {
            let k = find_knowledge(&st.program, "name", name)?;
            check_generation(st, &Address::Knowledge(name.clone()), generation)?;
            for r in resident_on {
                find_instruction(&st.program, "resident_on", r)?;
            }
            st.program.knowledge.get_or_insert_with(Vec::new)[k]
                .resident_on
                .clone_from(resident_on);
            Ok(touched(Address::Knowledge(name.clone())))
        }
        Op::AddType { ty } => {
            let t = type_of(ty)?;
            if st.program.type_decl(&t.name).is_some() {
                return Err(collision("type", &t.name, Address::Type(t.name.clone())));
            }
            let name = t.name.clone();
            st.program.types.get_or_insert_with(Vec::new).push(t);
            Ok(created(Address::Type(name)))
        }
        Op::RemoveType { name, generation } => {
            let k = find_type(&st.program, "name", name)?;
            check_generation(st, &Address::Type(name.clone()), generation)?;
            let refs = model::type_references(&st.program, name);
            if !refs.is_empty() {
                return Err(referenced(&format!("type:{name}"), &refs, Vec::new()));
            }
            st.program.types.get_or_insert_with(Vec::new).remove(k);
            Ok(touched(Address::Type(name.clone())))
        }
        Op::AddMember {
            ty,
            member,
            generation,
        } => {
            let k = find_type(&st.program, "type", ty)?;
            check_generation(st, &Address::Type(ty.clone()), generation)?;
            let decl = &mut st.program.types.get_or_insert_with(Vec::new)[k];
            if model::member_names(decl).any(|m| m == member.name) {
                return Err(collision("member", &member.name, Address::Type(ty.clone())));
            }
            check_new_name("member", &member.name, true)?;
            match &mut decl.kind {
                TypeKind::Enum(ms) => {
                    if member.ty.is_some() || member.default.is_some() {
                        return Err(OpFail::new(
                            Reason::BadShape,
                            format!("`{ty}` is an enum: a member takes `name` and `doc` only"),
                        ));
                    }
                    ms.push(EnumMember {
                        name: member.name.clone(),
                        doc: member.doc.clone(),
                    });
                }
                TypeKind::Object(fs) => {
                    let t = member
                        .ty
                        .as_deref()
                        .map(|t| parse_type("member.type", t))
                        .transpose()?;
                    fs.push(Field {
                        name: member.name.clone(),
                        ty: t,
                        doc: member.doc.clone(),
                        default: member.default.as_ref().map(ais_core::Value::from_json),
                        extra: Vec::new(),
                    });
                }
                TypeKind::Unknown(_) => {
                    return Err(OpFail::new(
                        Reason::BadShape,
                        format!("`{ty}` has no known `kind`; replace it with `add_type` first"),
                    ));
                }
            }
            Ok(Applied {
                created: Some(Address::Member(ty.clone(), member.name.clone())),
                touched: vec![Address::Type(ty.clone())],
            })
        }
        Op::RemoveMember {
            ty,
            member,
            generation,
        } => remove_member(st, ty, member, generation),
        Op::Rename {
            target,
            to,
            generation,
        } => rename(st, target, to, generation),
        Op::SetDoc {
            target,
            doc,
            generation,
        } => set_doc(st, target, doc, generation),
        Op::SetTracesTo {
            target,
            traces_to,
            generation,
        } => set_traces(st, target, traces_to, generation),
    }
}

fn carries_mut(p: &mut Program) -> &mut Vec<ais_core::Carry> {
    p.walker
        .get_or_insert_with(Walker::default)
        .carries
        .get_or_insert_with(Vec::new)
}

fn tools_mut(p: &mut Program) -> &mut Vec<ais_core::Tool> {
    p.tools.get_or_insert_with(Vec::new)
}

fn referenced(what: &str, refs: &[Reference], prepend: Vec<Json>) -> Box<OpFail> {
    let list: Vec<String> = refs
        .iter()
        .map(|r| format!("{} ({})", r.at, r.field))
        .collect();
    let mut f = OpFail::new(
        Reason::Referenced,
        format!("`{what}` is still referred to by: {}", list.join(", ")),
    );
    f.diagnostics = refs
        .iter()
        .map(|r| Diagnostic {
            at: Some(r.at.to_string()),
            ..Diagnostic::msg(format!("`{}` refers to `{what}` in `{}`", r.at, r.field))
        })
        .collect();
    f.prepend = prepend;
    f
}

fn delete_instructions(st: &mut State, ids: &[String]) -> R<Applied> {
    if ids.is_empty() {
        return Err(OpFail::new(Reason::BadShape, "`ids` is empty"));
    }
    for id in ids {
        find_instruction(&st.program, "ids", id)?;
    }
    let inside = |s: &str| ids.iter().any(|i| i == s);
    let mut refs = Vec::new();
    let mut prepend = Vec::new();
    for id in ids {
        for r in model::instruction_references(&st.program, id) {
            let internal = match &r.at {
                Address::Edge { from, to, .. } => inside(from) && inside(to),
                _ => false,
            };
            if internal || refs.contains(&r) {
                continue;
            }
            prepend.push(match &r.at {
                Address::Edge { from, to, index } => {
                    json!({"op": "remove_edge", "from": from, "to": to, "index": index})
                }
                Address::Carry(c) => {
                    json!({"op": "set_produced_by", "carry": c, "instruction": null})
                }
                Address::Knowledge(k) => {
                    let kept: Vec<&String> = st
                        .program
                        .knowledge_item(k)
                        .map(|(_, k)| k.resident_on.iter().filter(|r| !inside(r)).collect())
                        .unwrap_or_default();
                    json!({"op": "set_residency", "name": k, "resident_on": kept})
                }
                Address::Tool(t) => {
                    let mut tool = st
                        .program
                        .tool(t)
                        .map(|(_, t)| t.clone())
                        .unwrap_or_default();
                    tool.serves = tool
                        .serves
                        .map(|s| s.into_iter().filter(|x| !inside(x)).collect());
                    json!({"op": "replace_tool", "name": t, "tool": tool_spec(&tool)})
                }
                _ => Json::Null,
            });
            refs.push(r);
        }
    }
    if !refs.is_empty() {
        // Edges are removed from the last, so earlier indices stay right.
        prepend.retain(|o| !o.is_null());
        prepend
            .sort_by_key(|o| std::cmp::Reverse(o.get("index").and_then(Json::as_u64).unwrap_or(0)));
        prepend.dedup();
        let what = ids.join("`, `");
        return Err(referenced(&what, &refs, prepend));
    }
    let mut touched: Vec<Address> = ids.iter().map(|i| instr(i)).collect();
    edges(&mut st.program).retain(|e| {
        let gone = inside(&e.from) && inside(&e.to);
        if gone {
            touched.push(Address::Edge {
                from: e.from.clone(),
                to: e.to.clone(),
                index: 0,
            });
        }
        !gone
    });
    nodes(&mut st.program).retain(|n| !inside(&n.id));
    Ok(Applied {
        created: None,
        touched,
    })
}

/// A tool as the spec JSON `add_tool`/`replace_tool` take.
fn tool_spec(t: &ais_core::Tool) -> Json {
    let text = agir::write(&Program {
        tools: Some(vec![t.clone()]),
        ..Program::default()
    });
    let mut o = serde_json::Map::new();
    o.insert("name".into(), t.name.clone().into());
    let mut put = |k: &str, v: &Option<String>| {
        if let Some(v) = v {
            o.insert(k.into(), v.clone().into());
        }
    };
    put("sig", &t.sig);
    put(
        "surface",
        &t.surface.as_ref().map(|s| s.as_str().to_owned()),
    );
    put("body", &t.body);
    put("lang", &t.lang);
    put("command", &t.command);
    put("doc", &t.doc);
    if let Some(s) = &t.serves {
        o.insert("serves".into(), json!(s));
    }
    if let Some(s) = &t.traces_to {
        o.insert("traces_to".into(), json!(s));
    }
    if t.mcp.is_some() {
        // Spelled as the writer spells it.
        if let Ok(doc) = agir::read(&text)
            && let Some(m) = doc.program.tool_list().first().and_then(|t| t.mcp.as_ref())
        {
            o.insert("mcp".into(), json!({"server": m.server, "tool": m.tool}));
        }
    }
    Json::Object(o)
}

fn set_part(
    st: &mut State,
    id: &str,
    at: &str,
    value: Option<&String>,
    generation: &str,
) -> R<Applied> {
    let n = find_instruction(&st.program, "id", id)?;
    check_generation(st, &instr(id), &Some(generation.to_owned()))?;
    let Some((orig_n, _)) = st.original.instruction(id) else {
        return Err(OpFail::new(
            Reason::UnknownHandle,
            format!("`{id}` was created by this patch: it has no view, so no handles"),
        )
        .view(instr(id)));
    };
    let Some(part) = view::resolve(st.original, orig_n, at) else {
        let count = view::parts(st.original, orig_n).len();
        return Err(OpFail::new(
            Reason::UnknownHandle,
            format!("`{at}`: the view of `{id}` at {generation} issues handles n1 to n{count}; re-view it"),
        )
        .view(instr(id)));
    };
    // The part as it was viewed, found again in the program as earlier operations left it.
    let part = match part {
        Part::Guard(e) => {
            let a = model::edge_address(st.original, e);
            Part::Guard(model::edge_index(&st.program, &a).ok_or_else(|| {
                OpFail::new(
                    Reason::UnknownHandle,
                    format!("`{at}`: {a} was removed earlier in this patch"),
                )
            })?)
        }
        p => p,
    };
    let gone = || {
        OpFail::new(
            Reason::UnknownHandle,
            format!("`{at}`: the part it names was removed earlier in this patch"),
        )
        .view(instr(id))
    };
    if let Some(v) = value {
        match part {
            Part::Read(_) | Part::Write(_) => {
                find_carry(&st.program, "value", v)?;
            }
            Part::Tool | Part::Autonomy(_) if ais_core::plan::builtins::builtin(v).is_none() => {
                find_tool(&st.program, "value", v)?;
            }
            Part::Body => check_expr(&st.program, "value", v, false)?,
            Part::Guard(_) => check_expr(&st.program, "value", v, true)?,
            _ => {}
        }
    }
    let output = value
        .map(|v| parse_type("value", v))
        .transpose()
        .ok()
        .flatten();
    if matches!(part, Part::Output) && value.is_some() && output.is_none() {
        return Err(OpFail::new(
            Reason::BadShape,
            "`value` is not a type expression",
        ));
    }
    let mut touched_edge = None;
    {
        let p = &mut st.program;
        if let Part::Guard(e) = part {
            touched_edge = Some(model::edge_address(p, e));
            edges(p)[e].guard = value.cloned();
        } else {
            let i = &mut nodes(p)[n];
            let list_entry = |l: &mut Vec<String>, k: usize| -> R<()> {
                if k >= l.len() {
                    return Err(gone());
                }
                match value {
                    Some(v) => l[k].clone_from(v),
                    None => {
                        l.remove(k);
                    }
                }
                Ok(())
            };
            match part {
                Part::Doc => i.doc = value.cloned(),
                Part::Read(k) => list_entry(&mut i.reads, k)?,
                Part::Write(k) => list_entry(&mut i.writes, k)?,
                Part::Tool => i.tool = value.cloned(),
                Part::Output => i.output = output,
                Part::Body => i.body = value.cloned(),
                Part::Autonomy(k) => match i.autonomy.as_mut() {
                    Some(a) => list_entry(&mut a.tools, k)?,
                    None => return Err(gone()),
                },
                Part::Guard(_) => {}
            }
        }
    }
    let mut touched = vec![instr(id)];
    touched.extend(touched_edge);
    Ok(Applied {
        created: None,
        touched,
    })
}

fn reorder(
    st: &mut State,
    from: &str,
    order: &[String],
    generation: &Option<String>,
) -> R<Applied> {
    find_instruction(&st.program, "from", from)?;
    check_generation(st, &instr(from), generation)?;
    let positions: Vec<usize> = st
        .program
        .edge_list()
        .iter()
        .enumerate()
        .filter(|(_, e)| e.from == from)
        .map(|(i, _)| i)
        .collect();
    let mut current: Vec<Option<Edge>> = positions
        .iter()
        .map(|&i| Some(st.program.edge_list()[i].clone()))
        .collect();
    let targets: Vec<String> = current.iter().flatten().map(|e| e.to.clone()).collect();
    let mut sorted_order = order.to_vec();
    sorted_order.sort();
    let mut sorted_targets = targets.clone();
    sorted_targets.sort();
    if sorted_order != sorted_targets {
        let mut f = OpFail::new(
            Reason::BadShape,
            format!(
                "`order` must name each of `{from}`'s outgoing edges' targets once: {}",
                targets.join(", ")
            ),
        )
        .view(instr(from));
        f.field = Some("order");
        return Err(f);
    }
    let mut new = Vec::new();
    for t in order {
        let k = current
            .iter()
            .position(|e| e.as_ref().is_some_and(|e| e.to == *t))
            .unwrap_or_default();
        if let Some(e) = current[k].take() {
            new.push(e);
        }
    }
    let es = edges(&mut st.program);
    for (slot, e) in positions.iter().zip(new) {
        es[*slot] = e;
    }
    Ok(touched(instr(from)))
}

fn target(st: &State, field: &'static str, text: &str) -> R<Address> {
    let fail = |reason, detail: String, candidates: Vec<String>| {
        let mut f = OpFail::new(reason, detail);
        f.field = Some(field);
        f.name = Some(text.to_owned());
        f.candidates = candidates;
        f
    };
    let a = Address::parse(text, &st.program).map_err(|e| match e {
        AddressError::UnknownKind(k) => fail(
            Reason::BadShape,
            format!("`{field}`: `{k}` is no kind of element (instruction, carry, tool, knowledge, type, edge, obligation, program)"),
            Vec::new(),
        ),
        AddressError::Malformed(m) => fail(Reason::BadShape, format!("`{field}`: {m}"), Vec::new()),
        AddressError::Unknown(c) => {
            let mut f = fail(Reason::UnknownTarget, format!("`{field}`: nothing is named `{text}`"), c);
            f.search = Some(text.to_owned());
            f
        }
        AddressError::Ambiguous(c) => fail(
            Reason::AmbiguousTarget,
            format!("`{field}`: `{text}` names several elements: {}", c.join(", ")),
            c,
        ),
    })?;
    if !a.exists(&st.program) {
        let names: Vec<String> = crate::address::all(&st.program)
            .iter()
            .filter(|x| std::mem::discriminant(*x) == std::mem::discriminant(&a))
            .map(ToString::to_string)
            .collect();
        let mut f = fail(
            Reason::UnknownTarget,
            format!("`{field}`: no `{a}`"),
            ais_core::did_you_mean(&a.to_string(), names.iter().map(String::as_str)),
        );
        f.search = Some(a.name());
        return Err(f);
    }
    Ok(a)
}

fn set_doc(
    st: &mut State,
    t: &str,
    doc: &Option<String>,
    generation: &Option<String>,
) -> R<Applied> {
    let a = target(st, "target", t)?;
    check_generation(st, &a, generation)?;
    let p = &mut st.program;
    match &a {
        Address::Program => p.description.clone_from(doc),
        Address::Instruction(id) => {
            let n = find_instruction(p, "target", id)?;
            nodes(p)[n].doc.clone_from(doc);
        }
        Address::Carry(c) => {
            let k = find_carry(p, "target", c)?;
            carries_mut(p)[k].doc.clone_from(doc);
        }
        Address::Tool(t) => {
            let k = find_tool(p, "target", t)?;
            tools_mut(p)[k].doc.clone_from(doc);
        }
        Address::Type(t) => {
            let k = find_type(p, "target", t)?;
            p.types.get_or_insert_with(Vec::new)[k].doc.clone_from(doc);
        }
        Address::Member(t, m) => {
            let k = find_type(p, "target", t)?;
            match &mut p.types.get_or_insert_with(Vec::new)[k].kind {
                TypeKind::Enum(ms) => {
                    if let Some(x) = ms.iter_mut().find(|x| x.name == *m) {
                        x.doc.clone_from(doc);
                    }
                }
                TypeKind::Object(fs) => {
                    if let Some(x) = fs.iter_mut().find(|x| x.name == *m) {
                        x.doc.clone_from(doc);
                    }
                }
                TypeKind::Unknown(_) => {}
            }
        }
        Address::Knowledge(_) | Address::Edge { .. } | Address::Obligation(_) => {
            return Err(OpFail::new(
                Reason::BadShape,
                format!(
                    "`{a}` has no doc (a knowledge item's text is its content: replace it; an edge says what it means with its guard)"
                ),
            ));
        }
    }
    let a = if let Address::Member(t, _) = &a {
        Address::Type(t.clone())
    } else {
        a
    };
    Ok(touched(a))
}

fn set_traces(
    st: &mut State,
    t: &str,
    traces: &[String],
    generation: &Option<String>,
) -> R<Applied> {
    let a = target(st, "target", t)?;
    check_generation(st, &a, generation)?;
    for o in traces {
        check_new_name("obligation", o, false)?;
    }
    let v = (!traces.is_empty()).then(|| traces.to_vec());
    let p = &mut st.program;
    match &a {
        Address::Instruction(id) => {
            let n = find_instruction(p, "target", id)?;
            nodes(p)[n].traces_to = v;
        }
        Address::Carry(c) => {
            let k = find_carry(p, "target", c)?;
            carries_mut(p)[k].traces_to = v;
        }
        Address::Tool(t) => {
            let k = find_tool(p, "target", t)?;
            tools_mut(p)[k].traces_to = v;
        }
        Address::Knowledge(k) => {
            let k = find_knowledge(p, "target", k)?;
            p.knowledge.get_or_insert_with(Vec::new)[k].traces_to = v;
        }
        Address::Edge { .. } => {
            let e = model::edge_index(p, &a).unwrap_or_default();
            edges(p)[e].traces_to = v;
        }
        _ => {
            return Err(OpFail::new(
                Reason::BadShape,
                format!(
                    "`{a}` has no `traces_to`: instructions, carries, tools, knowledge items and edges do"
                ),
            ));
        }
    }
    Ok(touched(a))
}

fn remove_member(
    st: &mut State,
    ty: &str,
    member: &str,
    generation: &Option<String>,
) -> R<Applied> {
    let k = find_type(&st.program, "type", ty)?;
    check_generation(st, &Address::Type(ty.to_owned()), generation)?;
    let decl = &st.program.type_list()[k];
    if !model::member_names(decl).any(|m| m == member) {
        let names: Vec<&str> = model::member_names(decl).collect();
        return Err(OpFail::unknown(
            "member",
            "member",
            member,
            ais_core::did_you_mean(member, names),
        ));
    }
    // A guard or body that names the member (`Ty.member`, or the member compared with a
    // carry of the type) refers to it.
    let carries: Vec<&str> = st
        .program
        .carries()
        .iter()
        .filter(|c| c.ty.as_ref().is_some_and(|t| model::type_mentions(t, ty)))
        .map(|c| c.name.as_str())
        .collect();
    let probe = format!("{member}__removed");
    let mut refs = Vec::new();
    for (i, e) in st.program.edge_list().iter().enumerate() {
        if let Some(g) = &e.guard
            && matches!(
                exprs::rename_member(g, ty, member, &probe, &carries),
                Ok(Some(_))
            )
        {
            refs.push(Reference {
                at: model::edge_address(&st.program, i),
                field: "guard",
            });
        }
    }
    for n in st.program.instructions() {
        if let Some(b) = &n.body
            && matches!(
                exprs::rename_member(b, ty, member, &probe, &carries),
                Ok(Some(_))
            )
        {
            refs.push(Reference {
                at: instr(&n.id),
                field: "body",
            });
        }
    }
    if !refs.is_empty() {
        return Err(referenced(
            &format!("type:{ty}.{member}"),
            &refs,
            Vec::new(),
        ));
    }
    match &mut st.program.types.get_or_insert_with(Vec::new)[k].kind {
        TypeKind::Enum(ms) => ms.retain(|m| m.name != member),
        TypeKind::Object(fs) => fs.retain(|f| f.name != member),
        TypeKind::Unknown(_) => {}
    }
    Ok(touched(Address::Type(ty.to_owned())))
}

fn rename_fail(e: RenameError, what: &str, at: &Address, to: &str) -> Box<OpFail> {
    match e {
        RenameError::Capture => OpFail::new(
            Reason::Capture,
            format!("renaming `{what}` to `{to}` would capture: `{at}` already uses `{to}` for something else"),
        )
        .view(at.clone()),
        RenameError::Parse(e) => OpFail::new(
            Reason::InvalidExpression,
            format!("`{at}` does not parse ({}); fix it first", e.message),
        )
        .view(at.clone()),
    }
}

fn rename(st: &mut State, t: &str, to: &str, generation: &Option<String>) -> R<Applied> {
    let a = target(st, "target", t)?;
    check_generation(st, &a, generation)?;
    let mut touched_all = vec![a.clone()];
    let p = &mut st.program;
    let new_address;
    match &a {
        Address::Instruction(id) => {
            check_new_name("instruction", to, false)?;
            if p.instruction(to).is_some() {
                return Err(collision("instruction", to, instr(to)));
            }
            let id = id.clone();
            for n in nodes(p).iter_mut().filter(|n| n.id == id) {
                n.id = to.to_owned();
            }
            for e in edges(p).iter_mut() {
                if e.from == id {
                    e.from = to.to_owned();
                }
                if e.to == id {
                    e.to = to.to_owned();
                }
            }
            for c in carries_mut(p).iter_mut() {
                if c.produced_by.as_deref() == Some(&id) {
                    c.produced_by = Some(to.to_owned());
                    touched_all.push(Address::Carry(c.name.clone()));
                }
            }
            for tool in tools_mut(p).iter_mut() {
                for s in tool.serves.iter_mut().flatten() {
                    if *s == id {
                        *s = to.to_owned();
                    }
                }
            }
            for k in p.knowledge.iter_mut().flatten() {
                for s in k.resident_on.iter_mut() {
                    if *s == id {
                        *s = to.to_owned();
                    }
                }
            }
            new_address = instr(to);
        }
        Address::Carry(name) => {
            check_new_name("carry", to, true)?;
            if p.carry(to).is_some() {
                return Err(collision("carry", to, Address::Carry(to.to_owned())));
            }
            if p.type_decl(to).is_some() {
                return Err(OpFail::new(
                    Reason::Capture,
                    format!(
                        "`{to}` is a declared type: guards reading `{to}.…` would mean the type"
                    ),
                ));
            }
            let name = name.clone();
            // Expressions first: a capture or a parse failure leaves everything as it was.
            let mut guards = Vec::new();
            for (i, e) in p.edge_list().iter().enumerate() {
                if let Some(g) = &e.guard
                    && !expr::is_sentinel(g)
                {
                    let at = model::edge_address(p, i);
                    if let Some(new) = exprs::rename_name(g, &name, to)
                        .map_err(|e| rename_fail(e, &name, &at, to))?
                    {
                        guards.push((i, new));
                    }
                }
            }
            let mut bodies = Vec::new();
            for (i, n) in p.instructions().iter().enumerate() {
                if let Some(b) = &n.body
                    && let Some(new) = exprs::rename_name(b, &name, to)
                        .map_err(|e| rename_fail(e, &name, &instr(&n.id), to))?
                {
                    bodies.push((i, new));
                }
            }
            for (i, g) in guards {
                let at = model::edge_address(p, i);
                touched_all.push(instr(&at_from(&at)));
                touched_all.push(at);
                edges(p)[i].guard = Some(g);
            }
            for (i, b) in bodies {
                nodes(p)[i].body = Some(b);
                touched_all.push(instr(&p.instructions()[i].id));
            }
            for n in nodes(p).iter_mut() {
                let mut hit = false;
                for r in n.reads.iter_mut().chain(n.writes.iter_mut()) {
                    if *r == name {
                        *r = to.to_owned();
                        hit = true;
                    }
                }
                for f in [&mut n.verdict, &mut n.counter] {
                    if f.as_deref() == Some(&name) {
                        *f = Some(to.to_owned());
                        hit = true;
                    }
                }
                if hit {
                    touched_all.push(instr(&n.id));
                }
            }
            for c in carries_mut(p).iter_mut().filter(|c| c.name == name) {
                c.name = to.to_owned();
            }
            new_address = Address::Carry(to.to_owned());
        }
        Address::Tool(name) => {
            check_new_name("tool", to, false)?;
            if p.tool(to).is_some() {
                return Err(collision("tool", to, Address::Tool(to.to_owned())));
            }
            let name = name.clone();
            for tool in tools_mut(p).iter_mut().filter(|t| t.name == name) {
                tool.name = to.to_owned();
            }
            for n in nodes(p).iter_mut() {
                let mut hit = false;
                if n.tool.as_deref() == Some(&name) {
                    n.tool = Some(to.to_owned());
                    hit = true;
                }
                for t in n.autonomy.iter_mut().flat_map(|a| a.tools.iter_mut()) {
                    if *t == name {
                        *t = to.to_owned();
                        hit = true;
                    }
                }
                if hit {
                    touched_all.push(instr(&n.id));
                }
            }
            new_address = Address::Tool(to.to_owned());
        }
        Address::Knowledge(name) => {
            check_new_name("knowledge item", to, false)?;
            if p.knowledge_item(to).is_some() {
                return Err(collision(
                    "knowledge item",
                    to,
                    Address::Knowledge(to.to_owned()),
                ));
            }
            let name = name.clone();
            for k in p.knowledge.iter_mut().flatten().filter(|k| k.name == name) {
                k.name = to.to_owned();
            }
            new_address = Address::Knowledge(to.to_owned());
        }
        Address::Type(name) => {
            check_new_name("type", to, true)?;
            if p.type_decl(to).is_some() {
                return Err(collision("type", to, Address::Type(to.to_owned())));
            }
            if p.carry(to).is_some() {
                return Err(OpFail::new(
                    Reason::Capture,
                    format!("`{to}` is a carry: `{to}.member` in a guard would read the carry"),
                ));
            }
            let name = name.clone();
            let mut guards = Vec::new();
            for (i, e) in p.edge_list().iter().enumerate() {
                if let Some(g) = &e.guard
                    && !expr::is_sentinel(g)
                {
                    let at = model::edge_address(p, i);
                    if let Some(new) = exprs::rename_type_in(g, &name, to)
                        .map_err(|e| rename_fail(e, &name, &at, to))?
                    {
                        guards.push((i, new));
                    }
                }
            }
            for (i, g) in guards {
                touched_all.push(model::edge_address(p, i));
                edges(p)[i].guard = Some(g);
            }
            for t in p.types.iter_mut().flatten() {
                if t.name == name {
                    t.name = to.to_owned();
                }
                if let TypeKind::Object(fs) = &mut t.kind {
                    for f in fs {
                        f.ty = f.ty.as_ref().map(|x| model::rename_type(x, &name, to));
                    }
                }
            }
            for c in carries_mut(p).iter_mut() {
                c.ty = c.ty.as_ref().map(|x| model::rename_type(x, &name, to));
            }
            for n in nodes(p).iter_mut() {
                n.output = n.output.as_ref().map(|x| model::rename_type(x, &name, to));
            }
            new_address = Address::Type(to.to_owned());
        }
        Address::Member(ty, member) => {
            check_new_name("member", to, true)?;
            let k = find_type(p, "target", ty)?;
            if model::member_names(&p.type_list()[k]).any(|m| m == to) {
                return Err(collision("member", to, Address::Type(ty.clone())));
            }
            let (ty, member) = (ty.clone(), member.clone());
            let carries: Vec<String> = p
                .carries()
                .iter()
                .filter(|c| c.ty.as_ref().is_some_and(|t| model::type_mentions(t, &ty)))
                .map(|c| c.name.clone())
                .collect();
            let carries: Vec<&str> = carries.iter().map(String::as_str).collect();
            if carries.contains(&to) {
                return Err(OpFail::new(
                    Reason::Capture,
                    format!(
                        "`{to}` is a carry of type `{ty}`: a bare `{to}` in a guard would read the carry"
                    ),
                ));
            }
            let mut guards = Vec::new();
            for (i, e) in p.edge_list().iter().enumerate() {
                if let Some(g) = &e.guard
                    && !expr::is_sentinel(g)
                {
                    let at = model::edge_address(p, i);
                    if let Some(new) = exprs::rename_member(g, &ty, &member, to, &carries)
                        .map_err(|e| rename_fail(e, &member, &at, to))?
                    {
                        guards.push((i, new));
                    }
                }
            }
            for (i, g) in guards {
                touched_all.push(model::edge_address(p, i));
                edges(p)[i].guard = Some(g);
            }
            match &mut p.types.get_or_insert_with(Vec::new)[k].kind {
                TypeKind::Enum(ms) => {
                    for m in ms.iter_mut().filter(|m| m.name == member) {
                        m.name = to.to_owned();
                    }
                }
                TypeKind::Object(fs) => {
                    for f in fs.iter_mut().filter(|f| f.name == member) {
                        f.name = to.to_owned();
                    }
                }
                TypeKind::Unknown(_) => {}
            }
            new_address = Address::Member(ty.clone(), to.to_owned());
            touched_all[0] = Address::Type(ty);
        }
        Address::Edge { .. } | Address::Program | Address::Obligation(_) => {
            return Err(OpFail::new(
                Reason::BadShape,
                format!(
                    "`{a}` has no name of its own to rename (an edge is named by its ends; rename an obligation in the faithfulness record)"
                ),
            ));
        }
    }
    touched_all.push(new_address.clone());
    Ok(Applied {
        created: Some(new_address),
        touched: touched_all,
    })
}

fn at_from(a: &Address) -> String {
    match a {
        Address::Edge { from, .. } => from.clone(),
        _ => String::new(),
    }
}
