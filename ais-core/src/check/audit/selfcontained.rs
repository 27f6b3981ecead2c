//! F2, delete-the-source, and F3, bundle depth (§9.5): the program carries what it needs
//! instead of pointing at its source or at the files beside it.

use super::text::{FileRef, files_named, mentions, mentions_file};
use super::{Auditor, Subject};
use crate::check::battery::{body_only_opens_a_document, is_prose_pointer};
use crate::diag::CheckId;
use crate::program::{DeviationKind, ElementRef, ObligationKind, Opcode};
use crate::source::{Element, FieldKey, Locus};
use crate::value::Value;

/// The directory the source stands in, as its recorded path names it (lowercased): a mention
/// of `DIR/SKILL.md` names the source only when `DIR` is this one.
fn source_dir(a: &Auditor) -> Option<String> {
    let path = a.record.source.as_ref()?.path.as_deref()?;
    let mut parts = path.rsplit(['/', '\\']).skip(1);
    parts
        .next()
        .filter(|d| !d.is_empty() && *d != "." && *d != "..")
        .map(str::to_lowercase)
}

/// The names the source goes by: its recorded file name, and `SKILL.md`, the name a skill's
/// source has.
fn source_names(a: &Auditor) -> Vec<String> {
    let mut names = vec!["skill.md".to_owned()];
    if let Some(path) = a.record.source.as_ref().and_then(|s| s.path.as_deref()) {
        let base = path
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(path)
            .to_lowercase();
        if !base.is_empty() && !names.contains(&base) {
            names.push(base);
        }
    }
    names
}

/// F2: no text of the program names the source (a doc, a tool's body or command, knowledge,
/// a carry's doc or default), and no instruction's or carry's doc is a pointer to a sibling
/// document. (Pointer knowledge items and tools are G1's.)
pub(super) fn delete_the_source(a: &mut Auditor) {
    let p = a.ix.p;
    let names = source_names(a);
    let dir = source_dir(a);
    let mut texts: Vec<(Locus, ElementRef, String, &str)> = Vec::new();
    for (i, n) in p.instructions().iter().enumerate() {
        let r = ElementRef::Node(n.id.clone());
        if let Some(d) = &n.doc {
            texts.push((
                Locus::field(Element::Instruction(i), FieldKey::Doc),
                r.clone(),
                format!("`{}`", n.id),
                d,
            ));
        }
        if let Some(b) = &n.body {
            texts.push((
                Locus::field(Element::Instruction(i), FieldKey::Body),
                r,
                format!("`{}`", n.id),
                b,
            ));
        }
    }
    for (i, t) in p.tool_list().iter().enumerate() {
        let r = ElementRef::Tool(t.name.clone());
        for (field, text) in [
            (FieldKey::Body, &t.body),
            (FieldKey::Command, &t.command),
            (FieldKey::Doc, &t.doc),
        ] {
            if let Some(text) = text {
                texts.push((
                    Locus::field(Element::Tool(i), field),
                    r.clone(),
                    format!("tool `{}`", t.name),
                    text,
                ));
            }
        }
    }
    for (i, k) in p.knowledge_list().iter().enumerate() {
        for (kind, v) in &k.content {
            if let Value::Str(text) = v {
                texts.push((
                    Locus::field(Element::Knowledge(i), kind.as_str()),
                    ElementRef::Knowledge(k.name.clone()),
                    format!("knowledge `{}`", k.name),
                    text,
                ));
            }
        }
    }
    for (i, c) in p.carries().iter().enumerate() {
        let r = ElementRef::Carry(c.name.clone());
        if let Some(d) = &c.doc {
            texts.push((
                Locus::field(Element::Carry(i), FieldKey::Doc),
                r.clone(),
                format!("carry `{}`", c.name),
                d,
            ));
        }
        if let Some(Value::Str(d)) = &c.default {
            texts.push((
                Locus::field(Element::Carry(i), FieldKey::Default),
                r,
                format!("carry `{}`", c.name),
                d,
            ));
        }
    }
    for (locus, element, what, text) in texts {
        let lower = text.to_lowercase();
        let named = names
            .iter()
            .find(|n| mentions_file(&lower, n, dir.as_deref()));
        let pointer = matches!(locus.element, Element::Instruction(_) | Element::Carry(_))
            && locus.field == Some(FieldKey::Doc)
            && is_prose_pointer(text);
        let message = match (named, pointer) {
            (Some(n), _) => format!(
                "{what} points at the source (`{n}`): delete the source and the program no longer has what it names"
            ),
            (None, true) => format!(
                "the doc of {what} points elsewhere (\"{}\") instead of stating what to do: the program depends on a document it does not carry",
                text.trim()
            ),
            (None, false) => continue,
        };
        a.report(
            CheckId::F2,
            locus,
            Some(Subject {
                obligation: None,
                element: Some(element),
                kind: DeviationKind::Weakened,
            }),
            message,
            "embody what it points at: the content as a knowledge item resident on the instructions that use it, a procedure as its own instructions, a script as a tool's body".into(),
        );
    }
}

/// Words of a line that sends the reader to a document.
const SENDING_WORDS: [&str; 8] = [
    "read", "see", "refer", "consult", "follow", "load", "use", "check",
];

/// The sibling files the source names that F3 follows: files under a bundle directory, and
/// Markdown documents, other than the source itself. A deliverable's own name (an `io`
/// obligation's) is an output, not a sibling.
fn siblings(a: &Auditor) -> Vec<(FileRef, Option<usize>)> {
    let names = source_names(a);
    let keep = |f: &FileRef| {
        let base = f.base().to_lowercase();
        (f.in_bundle_dir || base.ends_with(".md")) && !names.contains(&base)
    };
    let mut out: Vec<(FileRef, Option<usize>)> = Vec::new();
    for (i, o) in a.record.obligation_list().iter().enumerate() {
        if o.kind == Some(ObligationKind::Io) {
            continue;
        }
        for f in files_named(o.quote.as_deref().unwrap_or_default()) {
            if keep(&f) && !out.iter().any(|(g, _)| g.path == f.path) {
                out.push((f, Some(i)));
            }
        }
    }
    // In the source's own text, a Markdown file outside the bundle directories is followed
    // only on a line that sends the reader to it ("Read forms.md"): a line that names an
    // output ("Save the note to note.md") does not.
    if let Some(source) = a.source {
        for line in source.lines() {
            let lower = line.to_lowercase();
            let sends = SENDING_WORDS.iter().any(|w| mentions(&lower, w));
            for f in files_named(line) {
                if keep(&f)
                    && (f.in_bundle_dir || sends)
                    && !out.iter().any(|(g, _)| g.path == f.path)
                {
                    out.push((f, None));
                }
            }
        }
    }
    out
}

/// F3: every sibling file the source names is embodied — a knowledge item with its content, a
/// tool whose body does the work itself — or a sub-program (`CALL`).
pub(super) fn bundle_depth(a: &mut Auditor) {
    let p = a.ix.p;
    for (file, quoted_by) in siblings(a) {
        let quoting: Vec<&str> = a
            .record
            .obligation_list()
            .iter()
            .filter(|o| files_named(o.quote.as_deref().unwrap_or_default()).contains(&file))
            .map(|o| o.id.as_str())
            .collect();
        let traced = |list: &Option<Vec<String>>| {
            list.iter().flatten().any(|t| quoting.contains(&t.as_str()))
        };
        let named = |name: &str| file.names(name);
        let knowledge = p.knowledge_list().iter().any(|k| {
            let text = k.text().unwrap_or_default();
            let carried = !text.trim().is_empty() && !is_prose_pointer(&text);
            let about = traced(&k.traces_to)
                || named(&k.name)
                || k.extra
                    .iter()
                    .any(|(_, v)| matches!(v, Value::Str(s) if s == &file.path));
            carried && about
        });
        let tool = p.tool_list().iter().any(|t| {
            let body = t.body.as_deref().unwrap_or_default();
            let real = !body.trim().is_empty()
                && !body_only_opens_a_document(body)
                && !mentions(body, file.base());
            real && (traced(&t.traces_to) || named(&t.name))
        });
        let sub_program = p.instructions().iter().any(|n| {
            n.opcode == Opcode::Call && n.target.as_deref().is_some_and(|t| t.contains(file.stem()))
        });
        if knowledge || tool || sub_program {
            continue;
        }
        let runs: Vec<String> = p
            .tool_list()
            .iter()
            .filter(|t| {
                [&t.body, &t.command]
                    .into_iter()
                    .flatten()
                    .any(|x| mentions(x, file.base()))
            })
            .map(|t| format!("`{}`", t.name))
            .collect();
        let how = if runs.is_empty() {
            String::new()
        } else {
            format!(
                " (tool {} reaches for it in the bundle at run time)",
                runs.join(", ")
            )
        };
        let (locus, subject) = match quoted_by {
            Some(i) => (
                Locus::field(Element::Obligation(i), FieldKey::Quote),
                Some(Subject {
                    obligation: Some(&a.record.obligation_list()[i].id),
                    element: None,
                    kind: DeviationKind::Weakened,
                }),
            ),
            None => (Locus::field(Element::Faithfulness, FieldKey::Path), None),
        };
        let script = [".py", ".sh", ".js", ".ts"]
            .iter()
            .any(|e| file.base().ends_with(e));
        let repair = if script {
            format!(
                "put the text of `{}` into a tool's `body` (bound where it runs) instead of running the file from the bundle",
                file.path
            )
        } else {
            format!(
                "carry the content of `{}` as a knowledge item (resident on the instructions that use it, traced to the obligation), or lift it as a sub-program and `CALL` it",
                file.path
            )
        };
        a.report(
            CheckId::F3,
            locus,
            subject,
            format!(
                "the source names the sibling file `{}`, which the program neither embodies nor calls as a sub-program{how}: without the bundle it is gone",
                file.path
            ),
            repair,
        );
    }
}
