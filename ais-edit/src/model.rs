//! What the edit language needs to know of the model: elements by address, their canonical
//! text and generation, and who refers to them.
//!
//! **Generations** are content digests: the first 16 hex digits of the SHA-256 of the
//! element's canonical AG-IR text (as `agir::write` prints a module holding that element
//! alone), prefixed `g`. An instruction's text includes its outgoing edges in order (its
//! guards are parts of its view), a member's is its type's, the program's is its frontmatter,
//! flags and `walker.name`; a file's generation is the digest of its bytes. A digest needs no
//! counter stored anywhere, is the same in every process that reads the same file, and changes
//! exactly when the element's content does — so an accepted patch "bumps" what it touched and
//! nothing else. Two versions with the same content share a generation, which is what a stale
//! check needs: a view taken of that content is still true of it.

use crate::address::Address;
use ais_core::{Edge, Program, TypeDecl, TypeKind, Walker, agir};
use sha2::{Digest, Sha256};

/// The names of a type's members (enum) or fields (object).
pub fn member_names(t: &TypeDecl) -> Box<dyn Iterator<Item = &str> + '_> {
    match &t.kind {
        TypeKind::Enum(m) => Box::new(m.iter().map(|m| m.name.as_str())),
        TypeKind::Object(f) => Box::new(f.iter().map(|f| f.name.as_str())),
        TypeKind::Unknown(_) => Box::new(std::iter::empty()),
    }
}

/// The index in `edges` of the edge an [`Address::Edge`] names.
pub fn edge_index(program: &Program, a: &Address) -> Option<usize> {
    let Address::Edge { from, to, index } = a else {
        return None;
    };
    program
        .edge_list()
        .iter()
        .enumerate()
        .filter(|(_, e)| e.from == *from && e.to == *to)
        .nth(*index)
        .map(|(i, _)| i)
}

/// The address of `edges[i]`.
pub fn edge_address(program: &Program, i: usize) -> Address {
    let e = &program.edge_list()[i];
    let index = program.edge_list()[..i]
        .iter()
        .filter(|x| x.from == e.from && x.to == e.to)
        .count();
    Address::Edge {
        from: e.from.clone(),
        to: e.to.clone(),
        index,
    }
}

/// Every edge's address, in order.
pub fn edge_addresses(program: &Program) -> impl Iterator<Item = Address> + '_ {
    (0..program.edge_list().len()).map(|i| edge_address(program, i))
}

/// Every `traces_to` entry of the program, with the element it is on.
pub fn all_traces(program: &Program) -> impl Iterator<Item = (Address, &str)> + '_ {
    fn list(l: &Option<Vec<String>>) -> std::slice::Iter<'_, String> {
        l.as_deref().unwrap_or(&[]).iter()
    }
    let nodes = program.instructions().iter().flat_map(move |i| {
        list(&i.traces_to).map(move |t| (Address::Instruction(i.id.clone()), t.as_str()))
    });
    let carries = program.carries().iter().flat_map(move |c| {
        list(&c.traces_to).map(move |t| (Address::Carry(c.name.clone()), t.as_str()))
    });
    let tools = program.tool_list().iter().flat_map(move |c| {
        list(&c.traces_to).map(move |t| (Address::Tool(c.name.clone()), t.as_str()))
    });
    let knowledge = program.knowledge_list().iter().flat_map(move |c| {
        list(&c.traces_to).map(move |t| (Address::Knowledge(c.name.clone()), t.as_str()))
    });
    let edges = program
        .edge_list()
        .iter()
        .enumerate()
        .flat_map(move |(i, e)| {
            list(&e.traces_to).map(move |t| (edge_address(program, i), t.as_str()))
        });
    nodes
        .chain(carries)
        .chain(tools)
        .chain(knowledge)
        .chain(edges)
}

/// The module holding only what `a` names (see the module docs); `None` when it does not
/// exist.
pub fn alone(program: &Program, a: &Address) -> Option<Program> {
    let mut p = Program::default();
    match a {
        Address::Program => {
            p.name.clone_from(&program.name);
            p.description.clone_from(&program.description);
            p.frontmatter_extra.clone_from(&program.frontmatter_extra);
            p.agir_version.clone_from(&program.agir_version);
            p.standalone = program.standalone;
            p.shape.clone_from(&program.shape);
            p.concurrency.clone_from(&program.concurrency);
            p.walker = program.walker.as_ref().map(|w| Walker {
                name: w.name.clone(),
                carries: None,
                extra: w.extra.clone(),
            });
        }
        Address::Instruction(id) => {
            let (_, n) = program.instruction(id)?;
            p.nodes = Some(vec![n.clone()]);
            let out: Vec<Edge> = program
                .edge_list()
                .iter()
                .filter(|e| e.from == *id)
                .cloned()
                .collect();
            if !out.is_empty() {
                p.edges = Some(out);
            }
        }
        Address::Carry(n) => {
            let (_, c) = program.carry(n)?;
            p.walker = Some(Walker {
                carries: Some(vec![c.clone()]),
                ..Walker::default()
            });
        }
        Address::Tool(n) => p.tools = Some(vec![program.tool(n)?.1.clone()]),
        Address::Knowledge(n) => p.knowledge = Some(vec![program.knowledge_item(n)?.1.clone()]),
        Address::Type(n) | Address::Member(n, _) => {
            p.types = Some(vec![program.type_decl(n)?.1.clone()]);
        }
        Address::Edge { .. } => {
            p.edges = Some(vec![program.edge_list()[edge_index(program, a)?].clone()]);
        }
        Address::Obligation(_) => return None,
    }
    Some(p)
}

/// The element's canonical AG-IR text.
pub fn text_of(program: &Program, a: &Address) -> Option<String> {
    alone(program, a).map(|p| agir::write(&p))
}

/// The digest of some bytes, as a generation: `g` and 16 hex digits.
pub fn digest(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    let mut s = String::with_capacity(17);
    s.push('g');
    for b in &d[..8] {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// The element's generation (see the module docs); `None` when it does not exist.
pub fn generation(program: &Program, a: &Address) -> Option<String> {
    text_of(program, a).map(|t| digest(t.as_bytes()))
}

/// Every element's generation, in address order.
pub fn generations(program: &Program) -> Vec<(Address, String)> {
    crate::address::all(program)
        .into_iter()
        .filter(|a| !matches!(a, Address::Obligation(_) | Address::Member(..)))
        .filter_map(|a| generation(program, &a).map(|g| (a, g)))
        .collect()
}

/// One place that refers to an element: where, and what it says.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Reference {
    /// The element that refers.
    pub at: Address,
    /// The field that refers (`from`, `reads`, `produced_by`, `serves`, …).
    pub field: &'static str,
}

/// Who refers to the instruction `id`: edges (either end), carries' `produced_by`, tools'
/// `serves`, knowledge's `resident_on`.
pub fn instruction_references(program: &Program, id: &str) -> Vec<Reference> {
    let mut out = Vec::new();
    for (i, e) in program.edge_list().iter().enumerate() {
        if e.from == id {
            out.push(Reference {
                at: edge_address(program, i),
                field: "from",
            });
        } else if e.to == id {
            out.push(Reference {
                at: edge_address(program, i),
                field: "to",
            });
        }
    }
    for c in program.carries() {
        if c.produced_by.as_deref() == Some(id) {
            out.push(Reference {
                at: Address::Carry(c.name.clone()),
                field: "produced_by",
            });
        }
    }
    for t in program.tool_list() {
        if t.serves.iter().flatten().any(|s| s == id) {
            out.push(Reference {
                at: Address::Tool(t.name.clone()),
                field: "serves",
            });
        }
    }
    for k in program.knowledge_list() {
        if k.resident_on.iter().any(|s| s == id) {
            out.push(Reference {
                at: Address::Knowledge(k.name.clone()),
                field: "resident_on",
            });
        }
    }
    out
}

/// Who refers to the type `name`: carries, outputs and fields typed by it.
pub fn type_references(program: &Program, name: &str) -> Vec<Reference> {
    let mentions = |t: &ais_core::Type| type_mentions(t, name);
    let mut out = Vec::new();
    for c in program.carries() {
        if c.ty.as_ref().is_some_and(mentions) {
            out.push(Reference {
                at: Address::Carry(c.name.clone()),
                field: "type",
            });
        }
    }
    for n in program.instructions() {
        if n.output.as_ref().is_some_and(mentions) {
            out.push(Reference {
                at: Address::Instruction(n.id.clone()),
                field: "output",
            });
        }
    }
    for t in program.type_list() {
        if let TypeKind::Object(fields) = &t.kind {
            for f in fields {
                if f.ty.as_ref().is_some_and(mentions) {
                    out.push(Reference {
                        at: Address::Member(t.name.clone(), f.name.clone()),
                        field: "type",
                    });
                }
            }
        }
    }
    out
}

/// True when the type expression names `name` anywhere.
pub fn type_mentions(t: &ais_core::Type, name: &str) -> bool {
    use ais_core::Type;
    match t {
        Type::Named(n) => n == name,
        Type::List(Some(inner)) | Type::Dict(Some(inner)) => type_mentions(inner, name),
        _ => false,
    }
}

/// `t` with every mention of the type `from` renamed to `to`.
pub fn rename_type(t: &ais_core::Type, from: &str, to: &str) -> ais_core::Type {
    use ais_core::Type;
    match t {
        Type::Named(n) if n == from => Type::Named(to.to_owned()),
        Type::List(Some(inner)) => Type::List(Some(Box::new(rename_type(inner, from, to)))),
        Type::Dict(Some(inner)) => Type::Dict(Some(Box::new(rename_type(inner, from, to)))),
        other => other.clone(),
    }
}
