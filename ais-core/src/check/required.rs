//! The parts of a module that spec §8.2 marks REQUIRED, and the program every module must have.
//!
//! - **S1** (warn): frontmatter `name`, frontmatter `description` and `walker.name` are REQUIRED
//!   (§8.2) but appear in none of W1–W14, X1–X5; a missing one is reported as `S1`, severity
//!   `warn` — the program still runs (the runtime names it by its file), so the outcome is
//!   `degraded`, not `failed`; each finding's repair says what to add.
//! - **X5** (fatal): a module with no instructions has no entry instruction (§8.3: `nodes[0]` is
//!   the entry), so nothing lowers and no runnable program exists (§9.3). An empty file, one
//!   holding only whitespace, `~`, a frontmatter, or `nodes: []` is `failed`, never `clean`.
//!   [`no_program`] is part of the compile oracle, so [`lower()`](crate::plan::lower) fails exactly
//!   when the outcome is `failed`.
//! - **W6** (error): the same empty module has no TERMINAL; W6's own check skips a module with
//!   no instructions, so it is reported here.

use super::Ctx;
use super::index::Index;
use crate::diag::{CheckId, Finding, Repair, Severity};
use crate::source::{Element, Locus};

/// Runs the checks of this module that are not part of the lowering: S1, and W6 for a module
/// with no instructions.
pub(super) fn run(cx: &mut Ctx) {
    s1_required_names(cx);
    w6_empty_module_has_no_terminal(cx);
}

/// S1: frontmatter `name` and `description`, and `walker.name`, are present and not blank.
fn s1_required_names(cx: &mut Ctx) {
    let p = cx.ix.p;
    let blank = |t: &Option<String>| t.as_deref().is_none_or(|t| t.trim().is_empty());
    let mut missing = Vec::new();
    if blank(&p.name) {
        missing.push((
            Locus::field(Element::Frontmatter, "name"),
            "the module has no frontmatter `name`, its identifier (REQUIRED by §8.2)",
            "add `name: <module id>` to the frontmatter, a `---` block at the top of the file"
                .to_owned(),
        ));
    }
    if blank(&p.description) {
        missing.push((
            Locus::field(Element::Frontmatter, "description"),
            "the module has no frontmatter `description`, which says when to invoke it \
             (REQUIRED by §8.2)",
            "add `description: <when to invoke it>` to the frontmatter, a `---` block at the \
             top of the file"
                .to_owned(),
        ));
    }
    let walker_name = p.walker.as_ref().and_then(|w| w.name.clone());
    if blank(&walker_name) {
        let suggestion = p
            .name
            .as_deref()
            .filter(|n| !n.trim().is_empty())
            .unwrap_or("<program name>");
        missing.push((
            Locus::field(Element::Walker, "name"),
            "the walker has no `name`, the program's name in the target (REQUIRED by §8.2)",
            format!("add `name: {suggestion}` under `walker:`"),
        ));
    }
    for (locus, message, repair) in missing {
        cx.findings.push(
            Finding::new(CheckId::S1, Severity::Warn, locus, message)
                .with_repair(Repair::manual(repair)),
        );
    }
}

/// W6 for a module with no instructions: there is no TERMINAL.
fn w6_empty_module_has_no_terminal(cx: &mut Ctx) {
    if !cx.ix.p.instructions().is_empty() {
        return;
    }
    cx.report(
        CheckId::W6,
        Locus::field(Element::Program, "nodes"),
        "the module has no TERMINAL (it has no instructions at all), so a run never reports a \
         result",
    )
    .repair = Some(Repair::manual(
        "add `{id: done, type: TERMINAL}` to `nodes`, after the instructions that do the work",
    ));
}

/// X5 for a module with no instructions: no entry instruction, so no runnable program.
pub(super) fn no_program(ix: &Index) -> Option<Finding> {
    if !ix.p.instructions().is_empty() {
        return None;
    }
    let what = if ix.p.nodes.is_some() {
        "`nodes` is empty"
    } else {
        "the module has no `nodes` section"
    };
    Some(
        Finding::new(
            CheckId::X5,
            Severity::Fatal,
            Locus::field(Element::Program, "nodes"),
            format!(
                "{what}: there is no entry instruction, so no runnable program exists \
                 (an empty or truncated file reads as an empty module)"
            ),
        )
        .with_repair(Repair::manual(
            "write the program's instructions under `nodes:` (the first is the entry), with \
             `walker.carries` and `edges`; if the file was truncated, restore it from version \
             control",
        )),
    )
}
