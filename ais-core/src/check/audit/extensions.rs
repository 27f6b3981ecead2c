//! Two checks beyond the spec, from the reference implementation: G10, trace fan-out, and G11,
//! artifact embodiment.

use super::text::{files_named, mentions};
use super::{Auditor, Subject};
use crate::check::battery::{body_only_opens_a_document, is_prose_pointer};
use crate::diag::CheckId;
use crate::program::{DeviationKind, ElementRef};
use crate::source::{Element, FieldKey, Locus};

/// G10: no instruction or tool claims more than the cap of distinct procedural obligations
/// (realized as an instruction, a written artifact, a code gate or a live tool). Prohibitions
/// and knowledge folded onto a slot are not procedures and are not counted. One element that
/// claims many procedures is coverage without performance.
pub(super) fn fan_out(a: &mut Auditor) {
    let p = a.ix.p;
    let cap = a.config.fan_out_cap;
    let procedural = |a: &Auditor, list: &Option<Vec<String>>| -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for id in list.iter().flatten() {
            let is = a
                .by_id
                .get(id.as_str())
                .and_then(|&i| a.required(i))
                .is_some_and(|r| r.is_procedural());
            if is && !out.contains(id) {
                out.push(id.clone());
            }
        }
        out
    };
    let mut over: Vec<(Locus, ElementRef, String, Vec<String>)> = Vec::new();
    for (i, n) in p.instructions().iter().enumerate() {
        let got = procedural(a, &n.traces_to);
        if got.len() > cap {
            over.push((
                Locus::field(Element::Instruction(i), FieldKey::TracesTo),
                ElementRef::Node(n.id.clone()),
                format!("`{}`", n.id),
                got,
            ));
        }
    }
    for (i, t) in p.tool_list().iter().enumerate() {
        let got = procedural(a, &t.traces_to);
        if got.len() > cap {
            over.push((
                Locus::field(Element::Tool(i), FieldKey::TracesTo),
                ElementRef::Tool(t.name.clone()),
                format!("tool `{}`", t.name),
                got,
            ));
        }
    }
    for (locus, element, what, got) in over {
        let shown: Vec<String> = got.iter().take(4).map(|g| format!("`{g}`")).collect();
        let more = if got.len() > 4 { ", …" } else { "" };
        a.report(
            CheckId::G10,
            locus,
            Some(Subject {
                obligation: None,
                element: Some(element),
                kind: DeviationKind::Weakened,
            }),
            format!(
                "{what} claims {} distinct procedural obligations ({}{more}), more than the cap of {cap}: one element cannot perform them all — coverage without performance (G10 is an extension beyond the spec)",
                got.len(),
                shown.join(", ")
            ),
            format!("decompose {what} so that each procedure has its own instruction (or tool) tracing to it"),
        );
    }
}

/// G11: an obligation whose quote names a file under a bundle directory (`scripts/check.py`,
/// `references/controls.md`) is realized by something that touches that file — a tool whose
/// body or command names it, an instruction tracing to the obligation whose doc names it — or
/// by embodied content tracing to it: a knowledge item that carries content, a tool with a body
/// of its own.
pub(super) fn artifact_embodiment(a: &mut Auditor) {
    let p = a.ix.p;
    let record = a.record;
    for (i, o) in record.obligation_list().iter().enumerate() {
        if !a.required(i).is_some_and(|r| r.is_required()) {
            continue;
        }
        let files = files_named(o.quote.as_deref().unwrap_or_default());
        for file in files.iter().filter(|f| f.in_bundle_dir) {
            let base = file.base();
            let tools = p.tool_list().iter().any(|t| {
                [&t.body, &t.command]
                    .into_iter()
                    .flatten()
                    .any(|x| mentions(x, base))
            });
            let traces = |list: &Option<Vec<String>>| list.iter().flatten().any(|t| t == &o.id);
            let docs = p.instructions().iter().any(|n| {
                traces(&n.traces_to) && n.doc.as_deref().is_some_and(|d| mentions(d, base))
            });
            let knowledge = p.knowledge_list().iter().any(|k| {
                let text = k.text().unwrap_or_default();
                traces(&k.traces_to) && text.trim().len() > 40 && !is_prose_pointer(&text)
            });
            // A tool that is the file's embodiment: named for it, with a body of its own (a
            // generic tool merely claiming the rule is exactly what G11 is for).
            let embodied_tool = p.tool_list().iter().any(|t| {
                let body = t.body.as_deref().unwrap_or_default();
                file.names(&t.name) && !body.trim().is_empty() && !body_only_opens_a_document(body)
            });
            if tools || docs || knowledge || embodied_tool {
                continue;
            }
            a.report(
                CheckId::G11,
                Locus::field(Element::Obligation(i), FieldKey::Quote),
                Some(Subject {
                    obligation: Some(&o.id),
                    element: None,
                    kind: DeviationKind::Weakened,
                }),
                format!(
                    "obligation `{}` names the bundle file `{}`, but nothing that realizes it touches that file (G11 is an extension beyond the spec)",
                    o.id, file.path
                ),
                format!(
                    "bind a tool whose body or command runs or reads `{}`, or carry its content in a knowledge item with `traces_to: [{}]`",
                    file.path, o.id
                ),
            );
        }
    }
}
