//! Reading each kind of element: types, knowledge, tools, walker and carries, instructions,
//! edges, and `concurrency`. Every field of the model is read here; every other field goes to
//! the element's `extra`, in document order.

use super::read::{
    Path, R, fields, name_list, named, opt_int, opt_text, opt_type, scalar_is, text, wrong,
};
use super::tree::{Kind, Node};
use crate::program::{
    Autonomy, Carry, Concurrency, ContentKind, Edge, EnumMember, Field, Instruction, Isolation,
    Knowledge, Modality, Opcode, Owner, Role, SpawnSource, Surface, Tool, ToolSurface, TypeDecl,
    TypeKind, Walker,
};
use crate::source::{Element, Locus, SourceMap};

/// Records an element's position and its name's (a lookup of the name falls back to the
/// element, so the name is recorded only where it stands apart, as in `- name: x`).
fn mark(sm: &mut SourceMap, el: Element, n: &super::read::Named<'_>) {
    sm.insert(Locus::element(el), n.pos);
    if n.name_pos != n.pos {
        sm.insert(Locus::field(el, "name"), n.name_pos);
    }
}

/// `types` (§6.2).
pub(crate) fn types(node: &Node, sm: &mut SourceMap) -> R<Vec<TypeDecl>> {
    let mut out = Vec::new();
    for (i, n) in named(node, "types")?.into_iter().enumerate() {
        let el = Element::Type(i);
        mark(sm, el, &n);
        let mut t = TypeDecl {
            name: n.name.clone(),
            ..TypeDecl::default()
        };
        let kind = match n.fields.iter().find(|(k, _)| *k == "kind") {
            Some((_, v)) => opt_text(v, format!("{}.kind", n.path))?.unwrap_or_default(),
            None => String::new(),
        };
        t.kind = match kind.as_str() {
            "enum" => TypeKind::Enum(Vec::new()),
            "object" => TypeKind::Object(Vec::new()),
            _ => TypeKind::Unknown(kind),
        };
        for &(key, value) in &n.fields {
            sm.insert(Locus::field(el, key), value.pos);
            let path = Path(&n.path, key);
            match (key, &mut t.kind) {
                ("kind", _) => {}
                ("doc", _) => t.doc = opt_text(value, path)?,
                ("members", TypeKind::Enum(members)) => {
                    *members = enum_members(value, &path.to_string(), i, sm)?
                }
                ("fields", TypeKind::Object(fs)) => {
                    *fs = object_fields(value, &path.to_string(), i, sm)?
                }
                _ => t.extra.push((key.to_owned(), value.to_value()?)),
            }
        }
        out.push(t);
    }
    Ok(out)
}

/// An enum's `members`: a list of names, a mapping name → doc, or a list of single-entry
/// mappings name → doc (or entries `{name, doc}`).
fn enum_members(node: &Node, path: &str, ty: usize, sm: &mut SourceMap) -> R<Vec<EnumMember>> {
    let member_doc = |v: &Node, p: &str| -> R<Option<String>> {
        match &v.kind {
            Kind::Map(_) => {
                let mut doc = None;
                for (k, fv) in fields(v, p, "a mapping")? {
                    if k == "doc" {
                        doc = opt_text(fv, format!("{p}.doc"))?;
                    } else {
                        return Err(wrong(
                            format!("{p}.{k}"),
                            fv,
                            "absent (an enum member has only a `doc`)",
                            format!("write `{p}` as `name: doc text`"),
                        ));
                    }
                }
                Ok(doc)
            }
            _ => opt_text(v, p),
        }
    };
    let mut out = Vec::new();
    let mut push = |out: &mut Vec<EnumMember>, name: String, doc, pos| {
        sm.insert(Locus::element(Element::TypeField(ty, out.len())), pos);
        out.push(EnumMember { name, doc });
    };
    match &node.kind {
        _ if node.is_null() => {}
        Kind::Seq(items) => {
            for (j, item) in items.iter().enumerate() {
                let at = format!("{path}[{j}]");
                match &item.kind {
                    Kind::Scalar(..) => push(&mut out, text(item, &at)?, None, item.pos),
                    Kind::Map(entries) => {
                        let fs = fields(item, &at, "a member")?;
                        let has_name = fs.iter().any(|(k, _)| *k == "name");
                        if let Some((k, v)) = fs
                            .iter()
                            .find(|(k, _)| has_name && *k != "name" && *k != "doc")
                        {
                            return Err(wrong(
                                format!("{at}.{k}"),
                                v,
                                "absent (an enum member has only a `name` and a `doc`)",
                                format!("remove `{k}`, or make the member's type an object"),
                            ));
                        }
                        if let Some((_, name)) = fs.iter().find(|(k, _)| *k == "name") {
                            let doc = match fs.iter().find(|(k, _)| *k == "doc") {
                                Some((_, d)) => opt_text(d, format!("{at}.doc"))?,
                                None => None,
                            };
                            push(&mut out, text(name, format!("{at}.name"))?, doc, item.pos);
                        } else if let [(k, v)] = entries.as_slice() {
                            let name = text(k, &at)?;
                            let doc = member_doc(v, &format!("{path}.{name}"))?;
                            push(&mut out, name, doc, k.pos);
                        } else {
                            return Err(wrong(
                                &at,
                                item,
                                "a member name, or `name: doc`",
                                format!("write `{path}` as `[a, b]` or as a mapping name → doc"),
                            ));
                        }
                    }
                    Kind::Seq(_) => {
                        return Err(wrong(
                            &at,
                            item,
                            "a member name",
                            format!("write `{path}` as `[a, b]`"),
                        ));
                    }
                }
            }
        }
        Kind::Map(entries) => {
            for (k, v) in entries {
                let name = text(k, path)?;
                let doc = member_doc(v, &format!("{path}.{name}"))?;
                push(&mut out, name, doc, k.pos);
            }
        }
        Kind::Scalar(..) => {
            return Err(wrong(
                path,
                node,
                "a list of member names",
                format!("write `{path}: [a, b]`"),
            ));
        }
    }
    Ok(out)
}

/// An object's `fields`, in any of the three spellings.
fn object_fields(node: &Node, path: &str, ty: usize, sm: &mut SourceMap) -> R<Vec<Field>> {
    let mut out = Vec::new();
    for (j, n) in named(node, path)?.into_iter().enumerate() {
        let el = Element::TypeField(ty, j);
        mark(sm, el, &n);
        let mut f = Field {
            name: n.name.clone(),
            ..Field::default()
        };
        for (key, value) in n.fields {
            sm.insert(Locus::field(el, key), value.pos);
            let p = Path(&n.path, key);
            match key {
                "type" => f.ty = opt_type(value, p)?,
                "doc" => f.doc = opt_text(value, p)?,
                "default" => f.default = Some(value.to_value()?),
                _ => f.extra.push((key.to_owned(), value.to_value()?)),
            }
        }
        out.push(f);
    }
    Ok(out)
}

/// `knowledge` (§5.2).
pub(crate) fn knowledge(node: &Node, sm: &mut SourceMap) -> R<Vec<Knowledge>> {
    let mut out = Vec::new();
    for (i, n) in named(node, "knowledge")?.into_iter().enumerate() {
        let el = Element::Knowledge(i);
        mark(sm, el, &n);
        let mut k = Knowledge {
            name: n.name.clone(),
            ..Knowledge::default()
        };
        for (key, value) in n.fields {
            sm.insert(Locus::field(el, key), value.pos);
            let p = Path(&n.path, key);
            match key {
                "resident_on" => k.resident_on = name_list(value, p, el, "resident_on", sm)?,
                "traces_to" => k.traces_to = Some(name_list(value, p, el, "traces_to", sm)?),
                other => match ContentKind::parse(other) {
                    Some(kind) => k.content.push((kind, value.to_value()?)),
                    None => k.extra.push((key.to_owned(), value.to_value()?)),
                },
            }
        }
        out.push(k);
    }
    Ok(out)
}

/// `tools` (§5.4).
pub(crate) fn tools(node: &Node, sm: &mut SourceMap) -> R<Vec<Tool>> {
    let mut out = Vec::new();
    for (i, n) in named(node, "tools")?.into_iter().enumerate() {
        let el = Element::Tool(i);
        mark(sm, el, &n);
        let mut t = Tool {
            name: n.name.clone(),
            ..Tool::default()
        };
        for (key, value) in n.fields {
            sm.insert(Locus::field(el, key), value.pos);
            let p = Path(&n.path, key);
            match key {
                "sig" => t.sig = opt_text(value, p)?,
                "surface" => t.surface = opt_text(value, p)?.map(|s| ToolSurface::parse(&s)),
                "serves" => t.serves = Some(name_list(value, p, el, "serves", sm)?),
                "body" => t.body = opt_text(value, p)?,
                "lang" => t.lang = opt_text(value, p)?,
                "command" => t.command = opt_text(value, p)?,
                "doc" => t.doc = opt_text(value, p)?,
                "mcp" => t.mcp = super::mcp::binding(value, &p.to_string())?,
                "traces_to" => t.traces_to = Some(name_list(value, p, el, "traces_to", sm)?),
                _ => t.extra.push((key.to_owned(), value.to_value()?)),
            }
        }
        out.push(t);
    }
    Ok(out)
}

/// `walker` (§5.1, §8.2).
pub(crate) fn walker(node: &Node, sm: &mut SourceMap) -> R<Walker> {
    let el = Element::Walker;
    sm.insert(Locus::element(el), node.pos);
    let mut w = Walker::default();
    for (key, value) in fields(node, "walker", "a mapping with `name` and `carries`")? {
        sm.insert(Locus::field(el, key), value.pos);
        match key {
            "name" => w.name = opt_text(value, "walker.name")?,
            "carries" => w.carries = Some(carries(value, sm)?),
            _ => w.extra.push((key.to_owned(), value.to_value()?)),
        }
    }
    Ok(w)
}

fn carries(node: &Node, sm: &mut SourceMap) -> R<Vec<Carry>> {
    let entries = named(node, "walker.carries")?;
    // Sized exactly: a long carry list grown by doubling kept up to half again its size.
    let mut out = Vec::with_capacity(entries.len());
    for (i, n) in entries.into_iter().enumerate() {
        let el = Element::Carry(i);
        mark(sm, el, &n);
        let mut c = Carry {
            name: n.name.clone(),
            ..Carry::default()
        };
        for (key, value) in n.fields {
            sm.insert(Locus::field(el, key), value.pos);
            let p = Path(&n.path, key);
            match key {
                "type" => c.ty = opt_type(value, p)?,
                "role" => c.role = opt_text(value, p)?.map(|r| Role::parse(&r)),
                "produced_by" => c.produced_by = opt_text(value, p)?,
                "doc" => c.doc = opt_text(value, p)?,
                "default" => c.default = Some(value.to_value()?),
                "traces_to" => c.traces_to = Some(name_list(value, p, el, "traces_to", sm)?),
                _ => c.extra.push((key.to_owned(), value.to_value()?)),
            }
        }
        out.push(c);
    }
    Ok(out)
}

/// `nodes` (§3, §4): a list of instructions.
/// The section is consumed: each entry's nodes are freed once it is read.
pub(crate) fn nodes(node: Node, sm: &mut SourceMap) -> R<Vec<Instruction>> {
    let items = match node.kind {
        Kind::Seq(items) => items,
        kind => {
            let node = Node {
                pos: node.pos,
                kind,
            };
            if node.is_null() {
                return Ok(Vec::new());
            }
            return Err(wrong(
                "nodes",
                &node,
                "a list of instructions",
                "write each instruction as a `- id: …` entry under `nodes:`",
            ));
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        out.push(instruction(&item, i, sm)?);
    }
    Ok(out)
}

fn instruction(node: &Node, i: usize, sm: &mut SourceMap) -> R<Instruction> {
    let el = Element::Instruction(i);
    let at = format!("nodes[{i}]");
    sm.insert(Locus::element(el), node.pos);
    let mut ins = Instruction::default();
    for (key, value) in fields(node, &at, "an instruction (a mapping with `id`, `type`, …)")? {
        sm.insert(Locus::field(el, key), value.pos);
        let p = Path(&at, key);
        match key {
            "id" => ins.id = text(value, p)?,
            "type" => ins.opcode = Opcode::parse(&text(value, p)?),
            "owner" => ins.owner = opt_text(value, p)?.map(|o| Owner::parse(&o)),
            "reads" => ins.reads = name_list(value, p, el, "reads", sm)?,
            "writes" => ins.writes = name_list(value, p, el, "writes", sm)?,
            "doc" => ins.doc = opt_text(value, p)?,
            "tool" => ins.tool = opt_text(value, p)?,
            "op" => ins.op = opt_text(value, p)?,
            "surface" => ins.surface = opt_text(value, p)?.map(|s| Surface::parse(&s)),
            "output" => ins.output = opt_type(value, p)?,
            "body" => ins.body = opt_text(value, p)?,
            "autonomy" => ins.autonomy = Some(autonomy(value, &p.to_string(), el, sm)?),
            "concurrency" => {
                ins.concurrency = Some(concurrency(value, &p.to_string(), el, "concurrency.", sm)?)
            }
            "verdict" => ins.verdict = opt_text(value, p)?,
            "cap" => ins.cap = opt_int(value, p)?,
            "counter" => ins.counter = opt_text(value, p)?,
            "target" => ins.target = opt_text(value, p)?,
            "traces_to" => ins.traces_to = Some(name_list(value, p, el, "traces_to", sm)?),
            "model" => ins.model = opt_text(value, p)?,
            _ => ins.extra.push((key.to_owned(), value.to_value()?)),
        }
    }
    Ok(ins)
}

fn autonomy(node: &Node, path: &str, el: Element, sm: &mut SourceMap) -> R<Autonomy> {
    let mut a = Autonomy::default();
    for (key, value) in fields(node, path, "a mapping such as `{tools: [name, …]}`")? {
        let field = format!("autonomy.{key}");
        sm.insert(Locus::field(el, field.as_str()), value.pos);
        match key {
            "tools" => a.tools = name_list(value, format!("{path}.tools"), el, &field, sm)?,
            _ => a.extra.push((key.to_owned(), value.to_value()?)),
        }
    }
    Ok(a)
}

/// `concurrency`, on a SPAWN (`prefix` = `"concurrency."`, fields recorded on the instruction)
/// or on the module (`prefix` = `""`, fields recorded on [`Element::Concurrency`]).
pub(crate) fn concurrency(
    node: &Node,
    path: &str,
    el: Element,
    prefix: &str,
    sm: &mut SourceMap,
) -> R<Concurrency> {
    if prefix.is_empty() {
        sm.insert(Locus::element(el), node.pos);
    }
    let mut c = Concurrency::default();
    for (key, value) in fields(
        node,
        path,
        "a mapping such as `{isolation: …, spawn: […]}` or `{spawn: none, reason: …}`",
    )? {
        let field = format!("{prefix}{key}");
        sm.insert(Locus::field(el, field.as_str()), value.pos);
        let p = Path(path, key);
        match key {
            "isolation" => c.isolation = opt_text(value, p)?.map(|s| Isolation::parse(&s)),
            "spawn" => c.spawn = Some(spawn_source(value, &p.to_string(), el, &field, sm)?),
            "max_parallel" => c.max_parallel = opt_int(value, p)?,
            "reason" => c.reason = opt_text(value, p)?,
            _ => c.extra.push((key.to_owned(), value.to_value()?)),
        }
    }
    Ok(c)
}

fn spawn_source(
    node: &Node,
    path: &str,
    el: Element,
    field: &str,
    sm: &mut SourceMap,
) -> R<SpawnSource> {
    if scalar_is(node, "none") {
        return Ok(SpawnSource::None);
    }
    if let Kind::Seq(items) = &node.kind
        && items.iter().all(|i| matches!(i.kind, Kind::Scalar(..)))
    {
        return Ok(SpawnSource::List(name_list(node, path, el, field, sm)?));
    }
    Ok(SpawnSource::Other(node.to_value()?))
}

/// `edges` (§5.3).
/// The section is consumed: each entry's nodes are freed once it is read.
pub(crate) fn edges(node: Node, sm: &mut SourceMap) -> R<Vec<Edge>> {
    let items = match node.kind {
        Kind::Seq(items) => items,
        kind => {
            let node = Node {
                pos: node.pos,
                kind,
            };
            if node.is_null() {
                return Ok(Vec::new());
            }
            return Err(wrong(
                "edges",
                &node,
                "a list of edges",
                "write each edge as a `- {from: a, to: b, modality: mandatory}` entry",
            ));
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let item = &item;
        let el = Element::Edge(i);
        let at = format!("edges[{i}]");
        sm.insert(Locus::element(el), item.pos);
        let mut e = Edge::default();
        for (key, value) in fields(item, &at, "an edge (a mapping with `from` and `to`)")? {
            sm.insert(Locus::field(el, key), value.pos);
            let p = Path(&at, key);
            match key {
                "from" => e.from = text(value, p)?,
                "to" => e.to = text(value, p)?,
                "modality" => e.modality = opt_text(value, p)?.map(|m| Modality::parse(&m)),
                "guard" => e.guard = opt_text(value, p)?,
                "traces_to" => e.traces_to = Some(name_list(value, p, el, "traces_to", sm)?),
                _ => e.extra.push((key.to_owned(), value.to_value()?)),
            }
        }
        out.push(e);
    }
    Ok(out)
}
