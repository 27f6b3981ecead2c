//! The validator's findings, placed at the DSL's tokens and worded in the DSL's terms.
//!
//! Both drivers use this: the macro turns each [`Diagnostic`] into a compile error (or, for a
//! warn finding, a compiler warning), `build.rs` export prints it with file, line and column.
//! A repair is never applied to Rust source; it is shown as the diagnostic's `help`, written as
//! the line to change in the DSL ([`help`] is the one place the wording lives).

use crate::ast::Site;
use crate::lower::Lowered;
use ais_core::check::check;
use ais_core::diag::{CheckId, Finding, MechanicalRepair, Severity};
use ais_core::model::Program;
use ais_core::source::{Element, Locus, SourceMap};

/// One finding of the validator, where and how the DSL user should read it.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    /// The check.
    pub id: CheckId,
    /// Its severity: `Warn` is a compiler warning, the others are errors.
    pub severity: Severity,
    /// The message, led by the check id: "W8: `draft` reads `taks`, …; did you mean `task`?".
    pub message: String,
    /// The change that resolves it, in the DSL's terms.
    pub help: Option<String>,
    /// The tokens it is about.
    pub site: Site,
}

impl Diagnostic {
    /// True for an error or fatal finding (a compile error); false for a warning.
    pub fn is_error(&self) -> bool {
        self.severity != Severity::Warn
    }

    /// The message with its help on a second line, as a compile error shows it.
    pub fn full_message(&self) -> String {
        match &self.help {
            Some(h) => format!("{}\n  = help: {h}", self.message),
            None => self.message.clone(),
        }
    }
}

/// Validates a lowered program and places every finding at its token. `fallback` is where a
/// finding with no recorded place points (the program's name).
pub fn diagnose(lowered: &Lowered, fallback: Site) -> Vec<Diagnostic> {
    let checked = check(&lowered.program, &SourceMap::new(), false);
    checked
        .findings
        .iter()
        .map(|f| Diagnostic {
            id: f.id,
            severity: f.severity,
            message: message(f),
            help: help(f, &lowered.program),
            site: site(lowered, &f.locus, f).unwrap_or(fallback),
        })
        .collect()
}

fn site(lowered: &Lowered, locus: &Locus, f: &Finding) -> Option<Site> {
    // A finding inside a guard names the offending name in its message; point at that token.
    if let (Element::Edge(e), Some("guard")) = (locus.element, locus.field.as_deref())
        && let Some(guard) = lowered
            .program
            .edge_list()
            .get(e)
            .and_then(|edge| edge.guard.as_deref())
        && let Some(offset) = offending_offset(guard, f)
        && let Some(span) = lowered.spans.guard_token(e, offset)
    {
        return Some(Site::one(span));
    }
    lowered.spans.lookup(locus)
}

/// The offset in a guard of the first name quoted in the finding's message (`plan_okk`).
fn offending_offset(guard: &str, f: &Finding) -> Option<usize> {
    let mut parts = f.message.split('`').skip(1).step_by(2);
    parts.find_map(|name| {
        if name.is_empty() || name == guard {
            return None;
        }
        guard.match_indices(name).map(|(i, _)| i).find(|&i| {
            let before = guard[..i].chars().last();
            let after = guard[i + name.len()..].chars().next();
            let boundary = |c: Option<char>| !c.is_some_and(|c| c.is_alphanumeric() || c == '_');
            boundary(before) && boundary(after)
        })
    })
}

fn message(f: &Finding) -> String {
    let mut m = format!("{}: {}", f.id, f.message);
    if let Some(first) = f.did_you_mean.first()
        && !f.message.contains("did you mean")
    {
        m.push_str(&format!("; did you mean `{first}`?"));
    }
    m
}

/// The repair, worded for the DSL: the line to write, not the YAML to edit.
pub fn help(f: &Finding, program: &Program) -> Option<String> {
    let instr = f
        .instruction
        .as_deref()
        .and_then(|id| program.instruction(id))
        .map(|(_, i)| i);
    if let Some(repair) = f.repair.as_ref().and_then(|r| r.mechanical.as_ref()) {
        return Some(match repair {
            MechanicalRepair::MintCarry { name, ty, .. } => format!(
                "declare it in `carries {{ .. }}`: `{name}: {},`",
                ty.as_ref().map_or("str".to_owned(), ToString::to_string)
            ),
            MechanicalRepair::AdoptType { carry, ty } => {
                format!("declare it as `{carry}: {ty},` in `carries {{ .. }}`")
            }
            MechanicalRepair::ReownToModel { instruction } => {
                let op = instr.map_or("SENSE".to_owned(), |i| i.opcode.to_string());
                format!("let a model do it: write `{instruction}: {op}(model)(..)`")
            }
            MechanicalRepair::SetProducer { carry, instruction } => {
                format!("let only `{instruction}` write `{carry}`")
            }
        });
    }
    if let Some(first) = f.did_you_mean.first() {
        return Some(format!("write `{first}`"));
    }
    let id = instr.map(|i| i.id.clone()).unwrap_or_default();
    let op = instr.map(|i| i.opcode.to_string()).unwrap_or_default();
    let text = match f.id {
        CheckId::W3 => format!("say who runs it: `{id}: {op}(code) ..` or `{id}: {op}(model) ..`"),
        CheckId::W4 => format!("add an edge into it (`previous -> {id};`) or remove it"),
        CheckId::W5 => format!("add a transition out of it (`{id} -> next;`)"),
        CheckId::W6 => {
            "end the program with an instruction such as `done: TERMINAL(result);`".into()
        }
        CheckId::W12 => "give the knowledge item its content: `knowledge name = \"...\";`".into(),
        CheckId::X1 => format!(
            "give `{id}` a tool (`{id}: {op} my_tool(..)`), or let a model do it with a doc comment and `{op}(model)`"
        ),
        CheckId::X2 => {
            format!("bound the loop: `#[verdict(ok)] #[cap(3)] #[counter(round)]` on `{id}`")
        }
        CheckId::X4 => format!("add a default edge: `{id} -> fallback else;`"),
        CheckId::G6 => format!(
            "decide in code: `{id}: ROUTE(code)(..)` with guards over a carry a DU step parses from the answer"
        ),
        CheckId::G8 => {
            format!("declare the isolation: `#[concurrency(isolation = private_write)]` on `{id}`")
        }
        _ => return None,
    };
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ais_core::diag::Severity;

    #[test]
    fn the_offending_name_is_found_inside_a_guard() {
        let f = Finding::new(
            CheckId::X5,
            Severity::Fatal,
            Locus::field(Element::Edge(0), "guard"),
            "guard: `plan_okk` is not a carry",
        );
        assert_eq!(offending_offset("ok and plan_okk == true", &f), Some(7));
        assert_eq!(offending_offset("plan_okkk", &f), None);
    }
}
