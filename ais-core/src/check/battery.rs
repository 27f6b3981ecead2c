//! The validation battery (spec §9.4) beyond type unification: G1 standalone, G3 artifact
//! boundary, G5 structural coverage, G6 human-in-the-loop, G7 environment, G8 concurrency.

use super::Ctx;
use super::executable::{is_program_carry, real_guard};
use super::guards;
use super::index::{ToolRef, quote_list};
use crate::bind::is_artifact_surface;
use crate::diag::{CheckId, FindingKind, Repair, Severity};
use crate::plan::builtins::{ASK_USER, builtin};
use crate::program::{Isolation, Opcode, Owner, Surface, ToolSurface};
use crate::source::{Element, FieldKey, Locus};
use crate::suggest::did_you_mean;
use std::collections::HashMap;

/// Runs G1, G3, G5, G6, G7 and G8.
pub(super) fn run(cx: &mut Ctx) {
    g1_knowledge_embodied(cx);
    g1_tools_embodied(cx);
    g3_surfaces_known(cx);
    g3_artifact_acts_write(cx);
    g3_programs_run(cx);
    g5_slots_state_one_obligation(cx);
    g6_human_routes_are_code(cx);
    g7_imports_resolve(cx);
    g8_parallelism_is_real(cx);
    g8_spawn_joins_one_write(cx);
    g8_missed_parallelism(cx);
}

/// Phrases that point at content instead of carrying it.
const POINTER_PHRASES: [&str; 10] = [
    "see ",
    "refer to",
    "as described in",
    "described in",
    "follow the format in",
    "follow the instructions in",
    "the section above",
    "the section below",
    "defined in",
    "consult ",
];

/// File extensions of documents a pointer names.
const DOC_EXTENSIONS: [&str; 6] = [".md", ".txt", ".rst", ".pdf", ".html", ".docx"];

/// True when a text is a prose pointer (§5.2): short, and it sends the reader elsewhere — to a
/// named document or a section — rather than stating the content.
pub(crate) fn is_prose_pointer(text: &str) -> bool {
    let t = text.trim().to_ascii_lowercase();
    if t.is_empty() || t.len() > 240 {
        return false;
    }
    let names_doc = t
        .split(|c: char| c.is_whitespace() || "()[]`'\",;".contains(c))
        .any(|w| {
            DOC_EXTENSIONS
                .iter()
                .any(|e| w.trim_end_matches('.').ends_with(e))
        });
    let points = POINTER_PHRASES.iter().any(|p| t.contains(p));
    points && (names_doc || t.contains("section") || t.contains("above") || t.contains("below"))
}

/// G1: every knowledge item carries its content rather than a pointer to it (§5.2).
fn g1_knowledge_embodied(cx: &mut Ctx) {
    for (k, item) in cx.ix.p.knowledge_list().iter().enumerate() {
        let Some(text) = item.text() else { continue };
        if !is_prose_pointer(&text) {
            continue;
        }
        let field = item
            .content
            .first()
            .map(|(k, _)| k.as_str())
            .unwrap_or("template");
        cx.report(
            CheckId::G1,
            Locus::field(Element::Knowledge(k), field),
            format!(
                "knowledge `{}` is a prose pointer (\"{}\"): the content it names lives outside the program, so the slots never see it",
                item.name,
                text.trim()
            ),
        )
        .repair = Some(Repair::manual(format!(
            "paste the referenced content verbatim into `{}`.{field}; keep the reference as `source:` if you want the provenance",
            item.name
        )));
    }
}

/// G1: every tool is embodied — a `body`, a `command`, or a built-in name — and a body does
/// not merely open a sibling document and hand back its text. Built-ins need no body (§5.4),
/// nor does a tool an MCP server implements (`mcp:`).
fn g1_tools_embodied(cx: &mut Ctx) {
    for (t, tool) in cx.ix.p.tool_list().iter().enumerate() {
        if builtin(&tool.name).is_some() || tool.mcp.is_some() {
            continue;
        }
        let body = tool.body.as_deref().map(str::trim).unwrap_or_default();
        let command = tool.command.as_deref().map(str::trim).unwrap_or_default();
        if body.is_empty() && command.is_empty() {
            cx.report(
                CheckId::G1,
                Locus::element(Element::Tool(t)),
                format!(
                    "tool `{}` has no `body` or `command`; it is not embodied and would run as an authored-at-run-time script",
                    tool.name
                ),
            )
            .repair = Some(Repair::manual(format!(
                "give tool `{}` a `body` (a function `def {}(…)`) or a `command`",
                tool.name, tool.name
            )));
        } else if body_only_opens_a_document(body) {
            cx.report(
                CheckId::G1,
                Locus::field(Element::Tool(t), FieldKey::Body),
                format!(
                    "tool `{}` only opens a sibling document and returns it; the know-how stays outside the program",
                    tool.name
                ),
            )
            .repair = Some(Repair::manual(format!(
                "move the document's content into a knowledge item resident on the instructions that need it, and drop tool `{}`",
                tool.name
            )));
        }
    }
}

/// True when a body's only work is reading a document named by a literal (`open("forms.md")`).
pub(crate) fn body_only_opens_a_document(body: &str) -> bool {
    let lower = body.to_ascii_lowercase();
    let opens = lower.contains("open(") || lower.contains("read_text(");
    let literal_doc = DOC_EXTENSIONS
        .iter()
        .any(|e| lower.contains(&format!("{e}\"")) || lower.contains(&format!("{e}'")));
    let lines = body.lines().filter(|l| !l.trim().is_empty()).count();
    opens && literal_doc && lines <= 8 && !lower.contains("write")
}

/// G3: every `surface` is a known value — `artifact`/`workspace` on an ACT, `SENSE`/`ACT`/
/// `ACT·artifact` on a tool; an unknown one is reported and read as the artifact side (§12.2).
fn g3_surfaces_known(cx: &mut Ctx) {
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        if let Some(Surface::Unknown(s)) = &n.surface {
            let close = did_you_mean(s, Surface::ALL.iter().map(Surface::as_str));
            let f = cx.report_instr(
                CheckId::G3,
                i,
                Locus::field(Element::Instruction(i), FieldKey::Surface),
                format!(
                    "`{}` has `surface: {s}`, which is not a surface; it is read as `artifact`",
                    n.id
                ),
            );
            f.did_you_mean = close;
            f.repair = Some(Repair::manual(format!(
                "set `surface: artifact` or `surface: workspace` on `{}`",
                n.id
            )));
        }
    }
    for (t, tool) in cx.ix.p.tool_list().iter().enumerate() {
        if let Some(ToolSurface::Unknown(s)) = &tool.surface {
            let close = did_you_mean(s, ToolSurface::ALL.iter().map(ToolSurface::as_str));
            let f = cx.report(
                CheckId::G3,
                Locus::field(Element::Tool(t), FieldKey::Surface),
                format!("tool `{}` has `surface: {s}`, which is not a surface; it is read as `ACT·artifact`", tool.name),
            );
            f.did_you_mean = close;
            f.repair = Some(Repair::manual(format!(
                "set `surface` of tool `{}` to `SENSE`, `ACT` or `ACT·artifact`",
                tool.name
            )));
        }
    }
}

/// G3: an ACT declared `surface: artifact` actually writes across the user line: its tool is
/// `ACT·artifact` (or a command or built-in write), or, tool-less, it writes out a carry.
fn g3_artifact_acts_write(cx: &mut Ctx) {
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        if n.opcode != Opcode::Act || n.surface != Some(crate::program::Surface::Artifact) {
            continue;
        }
        let Some(last) = cx.ix.binding[i].pipeline.last().copied() else {
            continue;
        };
        let (name, surface) = match last {
            ToolRef::Declared(t) => match cx.ix.tool_at(t) {
                Some(tl) if tl.command.is_some() => continue,
                Some(tl) => (
                    tl.name.clone(),
                    tl.surface
                        .clone()
                        .or_else(|| builtin(&tl.name).map(|b| b.surface.to_surface())),
                ),
                None => continue,
            },
            ToolRef::Builtin(b) => (b.name.to_owned(), Some(b.surface.to_surface())),
        };
        if surface.as_ref().is_some_and(is_artifact_surface) {
            continue;
        }
        let shown = surface
            .as_ref()
            .map(|s| s.as_str().to_owned())
            .unwrap_or_else(|| "undeclared".into());
        cx.report_instr(
            CheckId::G3,
            i,
            Locus::field(Element::Instruction(i), FieldKey::Surface),
            format!(
                "`{}` is the artifact step, but its tool `{name}` has surface `{shown}`, not `ACT·artifact`: the deliverable is never written where the user gets it",
                n.id
            ),
        )
        .repair = Some(Repair::manual(format!(
            "bind `{}` to a tool that writes the deliverable (`surface: ACT·artifact`, e.g. the built-in `write_file`)",
            n.id
        )));
    }
}

/// G3: a program authored into a carry (`script`) by a model is run (§4.1 author-then-run): an
/// ACT reads it, or its writer's `autonomy.tools` names a runner (`run`/`exec`).
fn g3_programs_run(cx: &mut Ctx) {
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        if !(n.opcode.is_mind() || n.opcode == Opcode::Call) {
            continue;
        }
        for (j, w) in n.writes.iter().enumerate() {
            if !is_program_carry(w) {
                continue;
            }
            let run_by_act = cx.ix.readers.get(w.as_str()).is_some_and(|rs| {
                rs.iter()
                    .any(|&r| cx.ix.node(r).is_some_and(|r| r.opcode == Opcode::Act))
            });
            let runner = n.autonomy.as_ref().is_some_and(|a| {
                a.tools
                    .iter()
                    .any(|t| t.contains("run") || t.contains("exec"))
            });
            if run_by_act || runner {
                continue;
            }
            cx.report_instr(
                CheckId::G3,
                i,
                Locus::entry(Element::Instruction(i), FieldKey::Writes, j),
                format!(
                    "`{}` authors a program into `{w}` that nothing runs; the program's purpose is never served",
                    n.id
                ),
            )
            .repair = Some(Repair::manual(format!(
                "add an `ACT` after `{}` that reads `{w}` (or give `{}` `autonomy: {{tools: [run_command]}}`)",
                n.id, n.id
            )));
        }
    }
}

/// True when a sentence of a doc is a prohibition (a constraint folded onto the step, not a
/// step of its own).
fn is_prohibition(sentence: &str) -> bool {
    let s = sentence.trim().to_ascii_lowercase();
    ["never ", "do not ", "don't ", "must not ", "avoid "]
        .iter()
        .any(|p| s.starts_with(p))
}

/// G5: each SU instruction states its obligation (`doc`), and realizes at most one traced
/// obligation of its own — traces beyond one that are not folded prohibitions mark a
/// monolithic realization (§2.4).
fn g5_slots_state_one_obligation(cx: &mut Ctx) {
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        if !n.is_su() {
            continue;
        }
        let doc = n.doc.as_deref().map(str::trim).unwrap_or_default();
        if doc.is_empty() {
            if n.opcode == Opcode::Sense && n.writes.is_empty() {
                continue; // a pure knowledge carrier (§4.2.1)
            }
            cx.report_instr(
                CheckId::G5,
                i,
                Locus::element(Element::Instruction(i)),
                format!(
                    "model instruction `{}` has no `doc`; its slot's behaviour is left entirely to the model",
                    n.id
                ),
            )
            .repair = Some(Repair::manual(format!(
                "add a `doc` to `{}` stating exactly what the slot must produce",
                n.id
            )));
            continue;
        }
        let traces = n.traces_to.as_ref().map(Vec::len).unwrap_or(0);
        let prohibitions = doc
            .split(['.', ';', '\n'])
            .filter(|s| is_prohibition(s))
            .count();
        let own = traces.saturating_sub(prohibitions);
        if own > 1 {
            let rules = n.traces_to.clone().unwrap_or_default();
            cx.report_instr(
                CheckId::G5,
                i,
                Locus::field(Element::Instruction(i), FieldKey::TracesTo),
                format!(
                    "`{}` realizes {own} obligations ({}) in one model slot: a monolithic realization, observable only as prose",
                    n.id,
                    quote_list(&rules)
                ),
            )
            .repair = Some(Repair::manual(format!(
                "split `{}` into one instruction per obligation, each with its own `doc` and `traces_to`",
                n.id
            )));
        }
    }
}

/// G6: a ROUTE whose decision consumes human input — a `role: input` carry other than `task`,
/// a carry written by the `ask_user` tool, or a value computed from one through CODE or SENSE
/// steps (their operands taint their writes) — is `owner: code` with explicit guards (§4.4.1).
fn g6_human_routes_are_code(cx: &mut Ctx) {
    let human = human_values(cx);
    let edges = cx.ix.p.edge_list();
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        if n.opcode != Opcode::Route {
            continue;
        }
        let guard_texts: Vec<&str> = cx.ix.out[i]
            .iter()
            .filter_map(|&e| real_guard(edges[e].guard.as_deref()))
            .collect();
        let guard_subjects: Vec<String> =
            guard_texts.iter().flat_map(|g| guards::names(g)).collect();
        let Some((h, from)) = n
            .reads
            .iter()
            .chain(&guard_subjects)
            .find_map(|r| human.get(r.as_str()).map(|f| (r.clone(), f.clone())))
        else {
            continue;
        };
        let what = match &from {
            None => format!("human input `{h}`"),
            Some(t) => format!(
                "`{h}`, computed from human input `{}` by {},",
                t.origin,
                t.via
                    .iter()
                    .map(|v| format!("`{v}`"))
                    .collect::<Vec<_>>()
                    .join(" then ")
            ),
        };
        let on = match from {
            None => format!("a carry a DU step parses from `{h}`"),
            Some(_) => format!("`{h}`"),
        };
        // A model-owned ROUTE is reported at its owner; a code ROUTE with no guards takes its
        // edges as they come, whatever the answer was, and is reported at the route itself. A
        // code ROUTE with guards decides in code (they may test another carry than the answer).
        let (at, message, repair) = if n.effective_owner() != Some(Owner::Code) {
            (
                FieldKey::Owner,
                format!(
                    "ROUTE `{}` decides on {what} but is not `owner: code`; a model reading the answer turns the gate into a suggestion",
                    n.id
                ),
                format!(
                    "set `owner: code` on `{}` and guard its edges on {on} (e.g. `approved == true`)",
                    n.id
                ),
            )
        } else if guard_texts.is_empty() {
            (
                FieldKey::Id,
                format!(
                    "ROUTE `{}` reads {what} but has no explicit guards, so the answer decides nothing",
                    n.id
                ),
                format!(
                    "guard `{}`'s edges on {on} (e.g. `approved == true`) and give it a default edge",
                    n.id
                ),
            )
        } else {
            continue;
        };
        let f = cx.report_instr(
            CheckId::G6,
            i,
            Locus::field(Element::Instruction(i), at),
            message,
        );
        f.repair = Some(Repair::manual(repair));
        if from.is_some() {
            f.kind = Some(FindingKind::HumanGateOnDerived);
        }
    }
}

/// How a carry's value comes from a human answer it is not itself.
#[derive(Clone, Debug)]
struct Derived {
    /// The human input it is computed from.
    origin: String,
    /// The CODE and SENSE steps that computed it, in order.
    via: Vec<String>,
}

/// The carries holding human input (G6), each with `None` when it is the answer itself (a
/// `role: input` carry other than `task`, a write of `ask_user`), or how it was computed from
/// one: a CODE or SENSE step that reads a human value makes its writes human values too.
fn human_values<'p>(cx: &Ctx<'p>) -> HashMap<&'p str, Option<Derived>> {
    let p = cx.ix.p;
    let mut human: HashMap<&str, Option<Derived>> = p
        .carries()
        .iter()
        .filter(|c| c.is_input() && c.name != "task")
        .map(|c| (c.name.as_str(), None))
        .collect();
    for (i, n) in p.instructions().iter().enumerate() {
        let asks = cx.ix.binding[i].pipeline.iter().any(|r| match r {
            ToolRef::Builtin(b) => b.name == ASK_USER,
            ToolRef::Declared(t) => cx.ix.tool_at(*t).is_some_and(|t| t.name == ASK_USER),
        });
        if asks {
            human.extend(n.writes.iter().map(|w| (w.as_str(), None)));
        }
    }
    // To a fixed point: each round taints the writes of the steps reading a tainted value.
    loop {
        let mut grew = false;
        for n in p.instructions() {
            if !matches!(n.opcode, Opcode::Code | Opcode::Sense) {
                continue;
            }
            let Some(derived) = n.reads.iter().find_map(|r| {
                human.get(r.as_str()).map(|from| match from {
                    None => Derived {
                        origin: r.clone(),
                        via: vec![n.id.clone()],
                    },
                    Some(d) => Derived {
                        origin: d.origin.clone(),
                        via: d.via.iter().cloned().chain([n.id.clone()]).collect(),
                    },
                })
            }) else {
                continue;
            };
            for w in &n.writes {
                if !human.contains_key(w.as_str()) {
                    human.insert(w.as_str(), Some(derived.clone()));
                    grew = true;
                }
            }
        }
        if !grew {
            return human;
        }
    }
}

/// Python standard-library modules a tool body may import without an install step.
const PY_STDLIB: &[&str] = &[
    "abc",
    "argparse",
    "array",
    "ast",
    "asyncio",
    "base64",
    "bisect",
    "calendar",
    "collections",
    "contextlib",
    "copy",
    "csv",
    "dataclasses",
    "datetime",
    "decimal",
    "difflib",
    "enum",
    "errno",
    "fnmatch",
    "fractions",
    "functools",
    "glob",
    "gzip",
    "hashlib",
    "heapq",
    "hmac",
    "html",
    "http",
    "io",
    "itertools",
    "json",
    "logging",
    "math",
    "mimetypes",
    "operator",
    "os",
    "pathlib",
    "pickle",
    "platform",
    "pprint",
    "random",
    "re",
    "secrets",
    "shlex",
    "shutil",
    "signal",
    "socket",
    "sqlite3",
    "statistics",
    "string",
    "struct",
    "subprocess",
    "sys",
    "tarfile",
    "tempfile",
    "textwrap",
    "threading",
    "time",
    "traceback",
    "typing",
    "unicodedata",
    "urllib",
    "uuid",
    "warnings",
    "xml",
    "zipfile",
    "zlib",
];

/// G7: a tool's environment resolves in the target runtime: a Python body imports only the
/// standard library, and a body's `lang` is one the runtime runs (python, rust). Advisory.
fn g7_imports_resolve(cx: &mut Ctx) {
    for (t, tool) in cx.ix.p.tool_list().iter().enumerate() {
        let Some(body) = tool.body.as_deref() else {
            continue;
        };
        let lang = tool.lang.as_deref().unwrap_or("python");
        if lang == "rust" {
            continue;
        }
        if lang != "python" {
            cx.report(
                CheckId::G7,
                Locus::field(Element::Tool(t), FieldKey::Lang),
                format!(
                    "tool `{}` is written in `{lang}`, which the runtime does not run",
                    tool.name
                ),
            )
            .repair = Some(Repair::manual(format!(
                "rewrite tool `{}` in Python, or give it a `command` that runs it",
                tool.name
            )));
            continue;
        }
        let mut missing: Vec<String> = Vec::new();
        for line in body.lines().map(str::trim) {
            let module = if let Some(rest) = line.strip_prefix("import ") {
                rest.split([',', ' ']).next()
            } else if let Some(rest) = line.strip_prefix("from ") {
                rest.split(' ').next()
            } else {
                None
            };
            let Some(root) = module
                .and_then(|m| m.split('.').next())
                .filter(|m| !m.is_empty())
            else {
                continue;
            };
            if !PY_STDLIB.contains(&root)
                && !root.starts_with(['_', '.'])
                && !missing.iter().any(|m| m == root)
            {
                missing.push(root.to_owned());
            }
        }
        if missing.is_empty() {
            continue;
        }
        cx.report(
            CheckId::G7,
            Locus::field(Element::Tool(t), FieldKey::Body),
            format!(
                "tool `{}` imports {}, outside the Python standard library; the import fails where it is not installed",
                tool.name,
                quote_list(&missing)
            ),
        )
        .repair = Some(Repair::manual(format!(
            "install {} in the target runtime, or rewrite tool `{}` with the standard library",
            quote_list(&missing),
            tool.name
        )));
    }
}

/// G8: claimed parallelism is real and isolated enough: the siblings a SPAWN fans out to do
/// not depend on each other's results, and siblings that write the same carry are isolated
/// `orchestrator_owned` (shared writable state otherwise races).
fn g8_parallelism_is_real(cx: &mut Ctx) {
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        if n.opcode != Opcode::Spawn {
            continue;
        }
        let siblings: Vec<usize> = cx
            .ix
            .targets(i)
            .map(|(_, t)| t)
            .filter(|&t| t != i)
            .collect();
        let mut problem = None;
        'outer: for (a_pos, &a) in siblings.iter().enumerate() {
            for &b in siblings.iter().skip(a_pos + 1) {
                let (Some(na), Some(nb)) = (cx.ix.node(a), cx.ix.node(b)) else {
                    continue;
                };
                let dep = na
                    .writes
                    .iter()
                    .find(|w| nb.reads.contains(w))
                    .map(|w| (na, nb, w))
                    .or_else(|| {
                        nb.writes
                            .iter()
                            .find(|w| na.reads.contains(w))
                            .map(|w| (nb, na, w))
                    });
                if let Some((from, to, w)) = dep {
                    problem = Some(format!(
                        "SPAWN `{}` runs `{}` and `{}` in parallel, but `{}` reads `{w}`, which `{}` writes: the work is sequential",
                        n.id, na.id, nb.id, to.id, from.id
                    ));
                    break 'outer;
                }
                let iso = n.concurrency.as_ref().and_then(|c| c.isolation.as_ref());
                if let Some(w) = na.writes.iter().find(|w| nb.writes.contains(w))
                    && matches!(iso, Some(Isolation::PrivateWrite | Isolation::SharedRead))
                {
                    problem = Some(format!(
                        "SPAWN `{}` runs `{}` and `{}` in parallel and both write `{w}`, but its isolation `{}` does not allow shared writes",
                        n.id,
                        na.id,
                        nb.id,
                        iso.map(|i| i.as_str()).unwrap_or_default()
                    ));
                    break 'outer;
                }
            }
        }
        if let Some(message) = problem {
            cx.report_instr(
                CheckId::G8,
                i,
                Locus::element(Element::Instruction(i)),
                message,
            )
            .repair = Some(Repair::manual(format!(
                "chain the dependent steps with edges instead of fanning out from `{}`, or declare `isolation: orchestrator_owned`",
                n.id
            )));
        }
    }
}

/// G8 (advisory): a SPAWN joins its siblings' results into `writes[0]` only (§4.4.4). The
/// join is one list or text value, which has no fields or components to recover further
/// writes from (§2.3 step 4), so `writes[1..]` are never written by the SPAWN and keep their
/// defaults: say so at the first of them.
fn g8_spawn_joins_one_write(cx: &mut Ctx) {
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        if n.opcode != Opcode::Spawn || n.writes.len() < 2 {
            continue;
        }
        let rest = quote_list(&n.writes[1..]);
        let f = cx.report_instr(
            CheckId::G8,
            i,
            Locus::entry(Element::Instruction(i), FieldKey::Writes, 1),
            format!(
                "SPAWN `{}` joins its siblings' results into `writes[0]` (`{}`) only (spec §4.4.4); the join is one list or text, with nothing to recover {rest} from (§2.3), so this SPAWN never writes {rest}",
                n.id, n.writes[0]
            ),
        );
        f.severity = Severity::Warn;
        f.repair = Some(Repair::manual(format!(
            "keep only `{}` in the writes of `{}`, and compute {rest} from it in a step after the SPAWN",
            n.writes[0], n.id
        )));
    }
}

/// G8 (advisory): two consecutive model slots with no data dependence, in a module that
/// declares no concurrency, could run in parallel under a SPAWN.
fn g8_missed_parallelism(cx: &mut Ctx) {
    if cx.ix.p.concurrency.is_some()
        || cx
            .ix
            .p
            .instructions()
            .iter()
            .any(|n| n.opcode == Opcode::Spawn)
    {
        return;
    }
    let edges = cx.ix.p.edge_list();
    let mut found = Vec::new();
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        if !n.opcode.is_mind() || cx.ix.out[i].len() != 1 {
            continue;
        }
        let e = cx.ix.out[i][0];
        if real_guard(edges[e].guard.as_deref()).is_some() {
            continue;
        }
        let Some((_, t)) = cx.ix.ends[e] else {
            continue;
        };
        let Some(next) = cx.ix.node(t) else { continue };
        if t == i || !next.opcode.is_mind() || n.writes.is_empty() {
            continue;
        }
        if next.reads.iter().any(|r| n.writes.contains(r))
            || n.reads.iter().any(|r| next.writes.contains(r))
        {
            continue;
        }
        found.push((i, n.id.clone(), next.id.clone()));
    }
    for (i, a, b) in found {
        let f = cx.report_instr(
            CheckId::G8,
            i,
            Locus::element(Element::Instruction(i)),
            format!("`{a}` and `{b}` are independent model slots run one after the other; they could run in parallel"),
        );
        f.severity = Severity::Warn;
        f.repair = Some(Repair::manual(format!(
            "fan `{a}` and `{b}` out under a `SPAWN` with `concurrency: {{isolation: private_write}}`, or declare `concurrency: {{spawn: none, reason: …}}` at module level"
        )));
    }
}
