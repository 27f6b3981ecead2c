//! Queries: semantic questions about a program, answered from the model the validator checks.

use crate::address::Address;
use crate::model;
use ais_core::bind::ProgramIndex;
use ais_core::{Opcode, Program};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, VecDeque};

/// The most entries a list answer holds; `count` is the total, `truncated` says when more
/// exist.
pub const PAGE: usize = 200;

/// A question.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Query {
    /// Who reads a carry: instructions reading it (operands, verdicts, counters, CODE bodies)
    /// and edges whose guards read it.
    Readers {
        /// The carry.
        carry: String,
    },
    /// Who writes a carry.
    Writers {
        /// The carry.
        carry: String,
    },
    /// The carry's declared `produced_by` and its actual writers.
    Producer {
        /// The carry.
        carry: String,
    },
    /// The edges into and out of an instruction.
    Edges {
        /// The instruction.
        instruction: String,
    },
    /// The simple paths from one instruction to another (at most 200).
    Paths {
        /// From.
        from: String,
        /// To.
        to: String,
    },
    /// The instructions no path from the entry (`nodes[0]`) reaches.
    Unreachable,
    /// Where a tool is used: instructions bound to it, slots with it in `autonomy`, and the
    /// instructions it `serves`.
    ToolUses {
        /// The tool.
        tool: String,
    },
    /// Elements whose address contains a fragment (case-insensitive).
    Search {
        /// The fragment.
        q: String,
    },
    /// The elements that trace to an obligation.
    TracedBy {
        /// The obligation id.
        obligation: String,
    },
    /// The obligations an element traces to.
    Traces {
        /// The element's address.
        target: String,
    },
    /// Every place that refers to an instruction, carry, tool or type.
    References {
        /// The element's address.
        target: String,
    },
}

/// One hit of a query.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Hit {
    /// The element.
    pub at: Address,
    /// How it relates (`reads`, `guard`, `body`, `writes`, `produced_by`, `in`, `out`, …).
    pub how: String,
}

fn hit(at: Address, how: impl Into<String>) -> Hit {
    Hit {
        at,
        how: how.into(),
    }
}

fn expr_reads(text: &str, carry: &str) -> bool {
    crate::exprs::names(text).is_ok_and(|ns| ns.iter().any(|(n, _)| n == carry))
}

/// The readers of a carry.
pub fn readers(p: &Program, carry: &str) -> Vec<Hit> {
    let mut out = Vec::new();
    for n in p.instructions() {
        let a = Address::Instruction(n.id.clone());
        if n.reads.iter().any(|r| r == carry) {
            out.push(hit(a.clone(), "reads"));
        }
        if n.verdict.as_deref() == Some(carry) {
            out.push(hit(a.clone(), "verdict"));
        }
        if n.counter.as_deref() == Some(carry) {
            out.push(hit(a.clone(), "counter"));
        }
        if n.body.as_deref().is_some_and(|b| expr_reads(b, carry)) {
            out.push(hit(a, "body"));
        }
    }
    for (i, e) in p.edge_list().iter().enumerate() {
        if let Some(g) = &e.guard
            && !ais_core::expr::is_sentinel(g)
            && expr_reads(g, carry)
        {
            out.push(hit(model::edge_address(p, i), "guard"));
        }
    }
    out
}

/// The writers of a carry.
pub fn writers(p: &Program, carry: &str) -> Vec<Hit> {
    p.instructions()
        .iter()
        .filter(|n| n.writes.iter().any(|w| w == carry))
        .map(|n| hit(Address::Instruction(n.id.clone()), "writes"))
        .collect()
}

/// The instructions reachable from the entry.
fn reachable(p: &Program) -> BTreeSet<&str> {
    let mut seen = BTreeSet::new();
    let Some(entry) = p.instructions().first() else {
        return seen;
    };
    let mut queue = VecDeque::from([entry.id.as_str()]);
    while let Some(id) = queue.pop_front() {
        if !seen.insert(id) {
            continue;
        }
        for e in p.edge_list().iter().filter(|e| e.from == id) {
            queue.push_back(e.to.as_str());
        }
    }
    seen
}

/// Simple paths `from` → `to`, depth first, at most [`PAGE`] of them and 100,000 steps.
fn paths(p: &Program, from: &str, to: &str) -> (Vec<Vec<String>>, bool) {
    let mut out = Vec::new();
    let mut steps = 0usize;
    let mut stack: Vec<(String, Vec<String>)> = vec![(from.to_owned(), vec![from.to_owned()])];
    let mut cut = false;
    while let Some((at, path)) = stack.pop() {
        steps += 1;
        if steps > 100_000 || out.len() >= PAGE {
            cut = true;
            break;
        }
        if at == to && path.len() > 1 {
            out.push(path);
            continue;
        }
        for e in p.edge_list().iter().filter(|e| e.from == at).rev() {
            if e.to == to || !path.contains(&e.to) {
                let mut next = path.clone();
                next.push(e.to.clone());
                stack.push((e.to.clone(), next));
            }
        }
    }
    (out, cut)
}

/// An unknown name in a query: the qualified addresses it could mean.
pub struct Unknown {
    /// The field.
    pub field: &'static str,
    /// The name.
    pub name: String,
    /// Close names.
    pub candidates: Vec<String>,
}

fn need<'a>(
    exists: bool,
    field: &'static str,
    name: &str,
    all: impl IntoIterator<Item = &'a str>,
) -> Result<(), Unknown> {
    if exists {
        Ok(())
    } else {
        Err(Unknown {
            field,
            name: name.to_owned(),
            candidates: ais_core::did_you_mean(name, all),
        })
    }
}

fn need_address(p: &Program, field: &'static str, text: &str) -> Result<Address, Unknown> {
    let every: Vec<String> = crate::address::all(p)
        .iter()
        .map(ToString::to_string)
        .collect();
    match Address::parse(text, p) {
        Ok(a) if a.exists(p) => Ok(a),
        _ => Err(Unknown {
            field,
            name: text.to_owned(),
            candidates: ais_core::did_you_mean(text, every.iter().map(String::as_str)),
        }),
    }
}

/// Answers a query: `(hits, extra)` where `extra` holds paths for [`Query::Paths`].
pub fn answer(p: &Program, q: &Query) -> Result<serde_json::Value, Unknown> {
    let carries = || p.carries().iter().map(|c| c.name.as_str());
    let ids = || p.instructions().iter().map(|c| c.id.as_str());
    let hits: Vec<Hit> = match q {
        Query::Readers { carry } => {
            need(p.carry(carry).is_some(), "carry", carry, carries())?;
            readers(p, carry)
        }
        Query::Writers { carry } => {
            need(p.carry(carry).is_some(), "carry", carry, carries())?;
            writers(p, carry)
        }
        Query::Producer { carry } => {
            need(p.carry(carry).is_some(), "carry", carry, carries())?;
            let mut out: Vec<Hit> = p
                .carry(carry)
                .and_then(|(_, c)| c.produced_by.clone())
                .map(|by| hit(Address::Instruction(by), "produced_by"))
                .into_iter()
                .collect();
            out.extend(writers(p, carry));
            out
        }
        Query::Edges { instruction } => {
            need(
                p.instruction(instruction).is_some(),
                "instruction",
                instruction,
                ids(),
            )?;
            p.edge_list()
                .iter()
                .enumerate()
                .filter_map(|(i, e)| {
                    let how = if e.from == *instruction {
                        "out"
                    } else if e.to == *instruction {
                        "in"
                    } else {
                        return None;
                    };
                    Some(hit(model::edge_address(p, i), how))
                })
                .collect()
        }
        Query::Paths { from, to } => {
            need(p.instruction(from).is_some(), "from", from, ids())?;
            need(p.instruction(to).is_some(), "to", to, ids())?;
            let (found, truncated) = paths(p, from, to);
            return Ok(serde_json::json!({
                "status": "ok", "count": found.len(), "truncated": truncated, "paths": found,
            }));
        }
        Query::Unreachable => {
            let seen = reachable(p);
            p.instructions()
                .iter()
                .filter(|n| !seen.contains(n.id.as_str()))
                .map(|n| hit(Address::Instruction(n.id.clone()), "unreachable"))
                .collect()
        }
        Query::ToolUses { tool } => {
            need(
                p.tool(tool).is_some() || ais_core::plan::builtins::builtin(tool).is_some(),
                "tool",
                tool,
                p.tool_list().iter().map(|t| t.name.as_str()),
            )?;
            let index = ProgramIndex::new(p);
            let mut out = Vec::new();
            for n in p.instructions() {
                let a = Address::Instruction(n.id.clone());
                if n.opcode != Opcode::Code && index.bound_tools(n).iter().any(|t| t.name == *tool)
                    || n.tool.as_deref() == Some(tool)
                {
                    out.push(hit(a.clone(), "runs"));
                }
                if n.autonomy.iter().flat_map(|a| &a.tools).any(|t| t == tool) {
                    out.push(hit(a, "autonomy"));
                }
            }
            if let Some((_, t)) = p.tool(tool) {
                for s in t.serves.iter().flatten() {
                    out.push(hit(Address::Instruction(s.clone()), "served"));
                }
            }
            out.dedup();
            out
        }
        Query::Search { q } => {
            let q = q.to_lowercase();
            crate::address::all(p)
                .into_iter()
                .filter(|a| a.to_string().to_lowercase().contains(&q))
                .map(|a| hit(a, "name"))
                .collect()
        }
        Query::TracedBy { obligation } => model::all_traces(p)
            .filter(|(_, o)| o == obligation)
            .map(|(a, _)| hit(a, "traces_to"))
            .collect(),
        Query::Traces { target } => {
            let a = need_address(p, "target", target)?;
            model::all_traces(p)
                .filter(|(x, _)| *x == a)
                .map(|(_, o)| hit(Address::Obligation(o.to_owned()), "traces_to"))
                .collect()
        }
        Query::References { target } => {
            let a = need_address(p, "target", target)?;
            match &a {
                Address::Instruction(id) => model::instruction_references(p, id)
                    .into_iter()
                    .map(|r| hit(r.at, r.field))
                    .collect(),
                Address::Carry(c) => {
                    let mut out = readers(p, c);
                    out.extend(writers(p, c));
                    out
                }
                Address::Tool(t) => {
                    return answer(p, &Query::ToolUses { tool: t.clone() });
                }
                Address::Type(t) => model::type_references(p, t)
                    .into_iter()
                    .map(|r| hit(r.at, r.field))
                    .collect(),
                _ => Vec::new(),
            }
        }
    };
    let count = hits.len();
    let truncated = count > PAGE;
    let shown: Vec<Hit> = hits.into_iter().take(PAGE).collect();
    Ok(serde_json::json!({"status": "ok", "count": count, "truncated": truncated, "hits": shown}))
}
