//! Addresses: what a call names (an instruction, a carry, an edge, …), as text.
//!
//! The spelling is `KIND:NAME` — `instruction:draft`, `carry:plan_md`, `tool:save_plan`,
//! `knowledge:task_format`, `type:Verdict`, `type:Verdict.pass` (a member or field),
//! `edge:verify->save` (`edge:verify->save#1` for the second edge between the same two
//! instructions), `obligation:O3`, and `program` (the module: frontmatter and walker). A bare
//! name is accepted where exactly one element has it (`draft`, `verify->save`); an ambiguous or
//! unknown bare name is rejected with the qualified addresses it could mean.

use ais_core::Program;
use schemars::JsonSchema;
use std::fmt;

/// One addressable element of a program.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Address {
    /// The module as a whole: frontmatter, `walker.name`, the top-level flags.
    Program,
    /// `nodes[i]` by id.
    Instruction(String),
    /// `walker.carries` by name.
    Carry(String),
    /// `tools` by name.
    Tool(String),
    /// `knowledge` by name.
    Knowledge(String),
    /// `types` by name.
    Type(String),
    /// A member of an enum or a field of an object type.
    Member(String, String),
    /// An edge by its ends, and its index among the edges with the same ends (0 first).
    Edge {
        /// Source instruction id.
        from: String,
        /// Target instruction id.
        to: String,
        /// Which of the edges `from -> to` (0 is the first).
        index: usize,
    },
    /// A faithfulness obligation (§9.5) by id: what `traces_to` entries name.
    Obligation(String),
}

/// The kinds of address, as spelled before the `:`.
pub const KINDS: [&str; 8] = [
    "instruction",
    "carry",
    "tool",
    "knowledge",
    "type",
    "edge",
    "obligation",
    "program",
];

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Address::Program => f.write_str("program"),
            Address::Instruction(n) => write!(f, "instruction:{n}"),
            Address::Carry(n) => write!(f, "carry:{n}"),
            Address::Tool(n) => write!(f, "tool:{n}"),
            Address::Knowledge(n) => write!(f, "knowledge:{n}"),
            Address::Type(n) => write!(f, "type:{n}"),
            Address::Member(t, m) => write!(f, "type:{t}.{m}"),
            Address::Edge { from, to, index: 0 } => write!(f, "edge:{from}->{to}"),
            Address::Edge { from, to, index } => write!(f, "edge:{from}->{to}#{index}"),
            Address::Obligation(n) => write!(f, "obligation:{n}"),
        }
    }
}

impl serde::Serialize for Address {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Why a text is not an address.
#[derive(Clone, Debug, PartialEq)]
pub enum AddressError {
    /// `KIND:` names no kind.
    UnknownKind(String),
    /// The text is not shaped like an address (`edge:` without `->`, an empty name).
    Malformed(String),
    /// A bare name no element has; the qualified addresses of names close to it.
    Unknown(Vec<String>),
    /// A bare name several elements have; their qualified addresses.
    Ambiguous(Vec<String>),
}

/// An edge spelled `FROM->TO` or `FROM->TO#N`.
fn edge(text: &str) -> Option<Address> {
    let (ends, index) = match text.rsplit_once('#') {
        Some((ends, n)) => (ends, n.trim().parse().ok()?),
        None => (text, 0),
    };
    let (from, to) = ends.split_once("->")?;
    let (from, to) = (from.trim(), to.trim());
    if from.is_empty() || to.is_empty() {
        return None;
    }
    Some(Address::Edge {
        from: from.to_owned(),
        to: to.to_owned(),
        index,
    })
}

impl Address {
    /// Parses an address; a bare name is resolved against `program` (see the module docs).
    pub fn parse(text: &str, program: &Program) -> Result<Address, AddressError> {
        let text = text.trim();
        if text == "program" {
            return Ok(Address::Program);
        }
        let Some((kind, name)) = text.split_once(':') else {
            return bare(text, program);
        };
        let name = name.trim();
        if name.is_empty() {
            return Err(AddressError::Malformed(format!(
                "`{text}` names no element after `{kind}:`"
            )));
        }
        let own = |n: &str| n.to_owned();
        Ok(match kind.trim() {
            "instruction" | "node" => Address::Instruction(own(name)),
            "carry" => Address::Carry(own(name)),
            "tool" => Address::Tool(own(name)),
            "knowledge" => Address::Knowledge(own(name)),
            "type" => match name.split_once('.') {
                Some((t, m)) if !t.is_empty() && !m.is_empty() => Address::Member(own(t), own(m)),
                Some(_) => {
                    return Err(AddressError::Malformed(format!(
                        "`{text}`: a member is addressed `type:TYPE.MEMBER`"
                    )));
                }
                None => Address::Type(own(name)),
            },
            "edge" => edge(name).ok_or_else(|| {
                AddressError::Malformed(format!(
                    "`{text}`: an edge is addressed `edge:FROM->TO` (or `edge:FROM->TO#N`)"
                ))
            })?,
            "obligation" => Address::Obligation(own(name)),
            other => return Err(AddressError::UnknownKind(other.to_owned())),
        })
    }

    /// True when the element exists in `program` (an obligation exists when something
    /// traces to it).
    pub fn exists(&self, program: &Program) -> bool {
        match self {
            Address::Program => true,
            Address::Instruction(n) => program.instruction(n).is_some(),
            Address::Carry(n) => program.carry(n).is_some(),
            Address::Tool(n) => program.tool(n).is_some(),
            Address::Knowledge(n) => program.knowledge_item(n).is_some(),
            Address::Type(n) => program.type_decl(n).is_some(),
            Address::Member(t, m) => program
                .type_decl(t)
                .is_some_and(|(_, d)| crate::model::member_names(d).any(|x| x == m)),
            Address::Edge { .. } => crate::model::edge_index(program, self).is_some(),
            Address::Obligation(o) => crate::model::all_traces(program).any(|(_, t)| t == o),
        }
    }

    /// The element's own name (an id, a carry's name; `FROM->TO` for an edge).
    pub fn name(&self) -> String {
        match self {
            Address::Program => "program".to_owned(),
            Address::Instruction(n)
            | Address::Carry(n)
            | Address::Tool(n)
            | Address::Knowledge(n)
            | Address::Type(n)
            | Address::Obligation(n) => n.clone(),
            Address::Member(t, m) => format!("{t}.{m}"),
            Address::Edge { .. } => self.to_string()["edge:".len()..].to_owned(),
        }
    }
}

/// Every qualified address of `program`'s named elements.
pub fn all(program: &Program) -> Vec<Address> {
    let mut out = vec![Address::Program];
    out.extend(
        program
            .instructions()
            .iter()
            .map(|i| Address::Instruction(i.id.clone())),
    );
    out.extend(
        program
            .carries()
            .iter()
            .map(|c| Address::Carry(c.name.clone())),
    );
    out.extend(
        program
            .tool_list()
            .iter()
            .map(|t| Address::Tool(t.name.clone())),
    );
    out.extend(
        program
            .knowledge_list()
            .iter()
            .map(|k| Address::Knowledge(k.name.clone())),
    );
    for t in program.type_list() {
        out.push(Address::Type(t.name.clone()));
        out.extend(
            crate::model::member_names(t).map(|m| Address::Member(t.name.clone(), m.to_owned())),
        );
    }
    out.extend(crate::model::edge_addresses(program));
    let mut seen = std::collections::BTreeSet::new();
    for (_, o) in crate::model::all_traces(program) {
        if seen.insert(o.to_owned()) {
            out.push(Address::Obligation(o.to_owned()));
        }
    }
    out
}

fn bare(text: &str, program: &Program) -> Result<Address, AddressError> {
    if text.contains("->") {
        return edge(text).ok_or_else(|| {
            AddressError::Malformed(format!("`{text}`: an edge is addressed `FROM->TO`"))
        });
    }
    let every = all(program);
    let hits: Vec<&Address> = every
        .iter()
        .filter(|a| !matches!(a, Address::Program | Address::Edge { .. }) && a.name() == text)
        .collect();
    match hits.as_slice() {
        [one] => Ok((*one).clone()),
        [] => {
            let names: Vec<String> = every.iter().map(Address::name).collect();
            let close = ais_core::did_you_mean(text, names.iter().map(String::as_str));
            Err(AddressError::Unknown(
                every
                    .iter()
                    .filter(|a| close.contains(&a.name()))
                    .map(Address::to_string)
                    .collect(),
            ))
        }
        many => Err(AddressError::Ambiguous(
            many.iter().map(|a| a.to_string()).collect(),
        )),
    }
}

/// An address as a JSON Schema sees it: a string.
#[derive(JsonSchema)]
#[schemars(
    description = "An element: `instruction:ID`, `carry:NAME`, `tool:NAME`, `knowledge:NAME`, `type:NAME`, `type:NAME.MEMBER`, `edge:FROM->TO` (`#N` for the N-th such edge, 0 first), `obligation:ID`, `program`; or a bare name that exactly one element has"
)]
#[allow(dead_code)]
pub struct AddressText(String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_print_and_parse_back() {
        let p = Program::default();
        for text in [
            "instruction:draft",
            "carry:plan_md",
            "tool:save",
            "knowledge:fmt",
            "type:Verdict",
            "type:Verdict.pass",
            "edge:a->b",
            "edge:a->b#2",
            "obligation:O1",
            "program",
        ] {
            let a = Address::parse(text, &p).unwrap();
            assert_eq!(a.to_string(), text);
        }
        assert_eq!(
            Address::parse("bogus:x", &p),
            Err(AddressError::UnknownKind("bogus".into()))
        );
        assert!(matches!(
            Address::parse("edge:ab", &p),
            Err(AddressError::Malformed(_))
        ));
    }
}
