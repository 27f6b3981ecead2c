//! Views: an element rendered for reading, with its generation and — for an instruction —
//! handles (`n1`, `n2`, …) for each addressable part.
//!
//! An instruction's parts, in handle order: its `doc`; each `reads` entry; each `writes`
//! entry; its `tool`, `output` and `body` when it has them (a CODE instruction always has a
//! body handle); each `autonomy.tools` entry; and the guard of each outgoing edge, in edge
//! order. The numbering is a function of the content, so a handle means the same part for as
//! long as the instruction's generation is the one the view reported.

use crate::address::Address;
use crate::model;
use ais_core::{Opcode, Program};
use serde::Serialize;

/// One addressable part of an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// `doc`.
    Doc,
    /// `reads[i]`.
    Read(usize),
    /// `writes[i]`.
    Write(usize),
    /// `tool`.
    Tool,
    /// `output`.
    Output,
    /// `body`.
    Body,
    /// `autonomy.tools[i]`.
    Autonomy(usize),
    /// The guard of `edges[i]` (an outgoing edge).
    Guard(usize),
}

impl Part {
    /// The part's name as a view shows it.
    pub fn label(&self, program: &Program) -> String {
        match self {
            Part::Doc => "doc".into(),
            Part::Read(i) => format!("reads[{i}]"),
            Part::Write(i) => format!("writes[{i}]"),
            Part::Tool => "tool".into(),
            Part::Output => "output".into(),
            Part::Body => "body".into(),
            Part::Autonomy(i) => format!("autonomy.tools[{i}]"),
            Part::Guard(e) => format!("guard of {}", model::edge_address(program, *e)),
        }
    }
}

/// The parts of `nodes[n]`, in handle order (`n1` is the first).
pub fn parts(program: &Program, n: usize) -> Vec<Part> {
    let i = &program.instructions()[n];
    let mut out = vec![Part::Doc];
    out.extend((0..i.reads.len()).map(Part::Read));
    out.extend((0..i.writes.len()).map(Part::Write));
    if i.tool.is_some() {
        out.push(Part::Tool);
    }
    if i.output.is_some() {
        out.push(Part::Output);
    }
    if i.body.is_some() || i.opcode == Opcode::Code {
        out.push(Part::Body);
    }
    if let Some(a) = &i.autonomy {
        out.extend((0..a.tools.len()).map(Part::Autonomy));
    }
    out.extend(
        program
            .edge_list()
            .iter()
            .enumerate()
            .filter(|(_, e)| e.from == i.id)
            .map(|(k, _)| Part::Guard(k)),
    );
    out
}

/// The part a handle names, if the view issues it.
pub fn resolve(program: &Program, n: usize, handle: &str) -> Option<Part> {
    let k: usize = handle.strip_prefix('n')?.parse().ok()?;
    parts(program, n).get(k.checked_sub(1)?).copied()
}

/// The text of a part (`None` when absent).
pub fn value(program: &Program, n: usize, part: Part) -> Option<String> {
    let i = &program.instructions()[n];
    match part {
        Part::Doc => i.doc.clone(),
        Part::Read(k) => i.reads.get(k).cloned(),
        Part::Write(k) => i.writes.get(k).cloned(),
        Part::Tool => i.tool.clone(),
        Part::Output => i.output.as_ref().map(ToString::to_string),
        Part::Body => i.body.clone(),
        Part::Autonomy(k) => i.autonomy.as_ref().and_then(|a| a.tools.get(k).cloned()),
        Part::Guard(e) => program.edge_list().get(e).and_then(|e| e.guard.clone()),
    }
}

/// One handle of a view.
#[derive(Clone, Debug, Serialize)]
pub struct Handle {
    /// `n1`, `n2`, …
    pub handle: String,
    /// What part it is (`reads[0]`, `guard of edge:a->b`).
    pub part: String,
    /// Its text, when it has one.
    pub value: Option<String>,
}

/// A view of one element.
#[derive(Clone, Debug, Serialize)]
pub struct View {
    /// Always `ok`.
    pub status: &'static str,
    /// The element.
    pub target: Address,
    /// Its generation: name it in a patch that changes it.
    pub generation: String,
    /// The file's generation.
    pub file_generation: String,
    /// Annotated text: each line of an instruction's view starts with its handle.
    pub text: String,
    /// The handles, for an instruction.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub handles: Vec<Handle>,
    /// Every element's address and generation, for a view of `program`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub elements: Vec<(Address, String)>,
}

/// The view of `target` (which exists).
pub fn view(program: &Program, target: &Address, file_generation: String) -> Option<View> {
    let generation = model::generation(program, target)?;
    let mut handles = Vec::new();
    let text = match target {
        Address::Instruction(id) => {
            let (n, i) = program.instruction(id)?;
            let mut text = format!("gen {generation}\n{}: {}", i.id, i.opcode);
            if let Some(o) = i.effective_owner() {
                text.push_str(&format!(" (owner: {})", o.as_str()));
            }
            text.push('\n');
            for (k, part) in parts(program, n).into_iter().enumerate() {
                let handle = format!("n{}", k + 1);
                let value = value(program, n, part);
                let label = part.label(program);
                let shown = match &value {
                    Some(v) => serde_json::to_string(v).unwrap_or_default(),
                    None => "(none)".into(),
                };
                text.push_str(&format!("{handle}: {label} = {shown}\n"));
                handles.push(Handle {
                    handle,
                    part: label,
                    value,
                });
            }
            text
        }
        _ => format!("gen {generation}\n{}", model::text_of(program, target)?),
    };
    let elements = if *target == Address::Program {
        model::generations(program)
    } else {
        Vec::new()
    };
    Some(View {
        status: "ok",
        target: target.clone(),
        generation,
        file_generation,
        text,
        handles,
        elements,
    })
}
