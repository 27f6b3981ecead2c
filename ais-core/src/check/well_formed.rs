//! Well-formedness (spec §9.2): W1–W14, properties of the program text that need no lowering.

use super::Ctx;
use super::index::quote_list;
use crate::bind::is_bare_param_name;
use crate::diag::{CheckId, Finding, Repair};
use crate::edit::{Edit, Wording};
use crate::program::{Modality, Opcode, Owner, Program, Role, TypeKind};
use crate::source::{Element, FieldKey, Locus};
use crate::suggest::Suggester;
use crate::suggest::did_you_mean;
use std::collections::HashSet;

/// Runs W1–W14.
pub(super) fn run(cx: &mut Ctx) {
    w1_unique_ids(cx);
    w2_defined_opcodes(cx);
    w3_owner_permitted(cx);
    w4_edge_endpoints(cx);
    w5_edges_present(cx);
    w6_one_reachable_terminal(cx);
    w7_all_reachable(cx);
    w8_reads_resolve(cx);
    w9_writes_declared(cx);
    w10_carry_origin(cx);
    w11_tools_bound(cx);
    w12_knowledge_resident_and_embodied(cx);
    w13_no_bare_param_carry_names(cx);
    w14_types_well_formed(cx);
}

/// The ids of `p`'s instructions, in program order: the candidates for a did-you-mean.
fn instruction_ids(p: &Program) -> Vec<&str> {
    p.instructions().iter().map(|n| n.id.as_str()).collect()
}

/// W1: every instruction has a unique, non-empty `id`.
fn w1_unique_ids(cx: &mut Ctx) {
    let n = cx.ix.p.instructions().len();
    let mut seen: HashSet<&str, foldhash::fast::RandomState> =
        HashSet::with_capacity_and_hasher(n, Default::default());
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        let locus = Locus::field(Element::Instruction(i), FieldKey::Id);
        if n.id.trim().is_empty() {
            cx.report(
                CheckId::W1,
                locus,
                format!(
                    "instruction #{} has no `id`; edges, `serves` and `produced_by` cannot name it",
                    i + 1
                ),
            )
            .repair = Some(Repair::manual(format!(
                "give nodes[{i}] an `id` such as `step_{}`",
                i + 1
            )));
        } else if !seen.insert(n.id.as_str()) {
            let first = cx.ix.instr.get(n.id.as_str()).copied();
            let f = cx.report_instr(
                CheckId::W1,
                i,
                locus,
                format!(
                    "the id `{}` is used by more than one instruction; edges and `produced_by` naming it are ambiguous",
                    n.id
                ),
            );
            f.repair = Some(Repair::manual(format!(
                "rename this `{}` to a unique id such as `{}_{}` (and the edges that mean it)",
                n.id,
                n.id,
                i + 1
            )));
            if let Some(first) = first {
                f.relate(
                    Locus::field(Element::Instruction(first), FieldKey::Id),
                    format!("`{}` is first used here", n.id),
                );
            }
        }
    }
}

/// W2: every instruction's `type` is a defined opcode, spelled exactly (an unknown opcode is
/// unsupported and never skipped, §11.2).
fn w2_defined_opcodes(cx: &mut Ctx) {
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        let Opcode::Unknown(text) = &n.opcode else {
            continue;
        };
        let locus = Locus::field(Element::Instruction(i), FieldKey::Type);
        let mnemonics = Opcode::ALL.iter().map(|o| o.as_str());
        let suggestions = did_you_mean(text, mnemonics);
        let message = if text.is_empty() {
            format!(
                "instruction `{}` has no `type`; it cannot be executed",
                n.id
            )
        } else {
            format!(
                "`{text}` is not an opcode, so instruction `{}` is unsupported and cannot run",
                n.id
            )
        };
        let repair = match suggestions.first() {
            Some(s) => format!("set `type: {s}` on `{}`", n.id),
            None => format!(
                "set `type` on `{}` to one of GEN-ENUM, GEN-FILL, GEN-EDIT, GEN-RAW, SENSE, ACT, CODE, ROUTE, LOOP, SPAWN, CALL, TERMINAL",
                n.id
            ),
        };
        let f = cx.report_instr(CheckId::W2, i, locus, message);
        f.did_you_mean = suggestions;
        f.repair = Some(Repair::manual(repair));
    }
}

/// W3: every instruction's `owner` is `code` or `model` and is permitted by its opcode; a dual
/// opcode (SENSE, ACT, ROUTE, LOOP) must say which.
fn w3_owner_permitted(cx: &mut Ctx) {
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        if matches!(n.opcode, Opcode::Unknown(_)) {
            continue;
        }
        let locus = Locus::field(Element::Instruction(i), FieldKey::Owner);
        let fixed = n.opcode.fixed_owner();
        let (message, repair) = match (&n.owner, &fixed) {
            (Some(Owner::Unknown(o)), _) => (
                format!(
                    "`{o}` is not an owner; `{}` must run on `code` or `model`",
                    n.id
                ),
                match &fixed {
                    Some(f) => format!("set `owner: {}` on `{}`", f.as_str(), n.id),
                    None => format!("set `owner: code` or `owner: model` on `{}`", n.id),
                },
            ),
            (Some(o), Some(f)) if o != f => (
                format!(
                    "{} always runs on `{}`, but `{}` declares `owner: {}`",
                    n.opcode,
                    f.as_str(),
                    n.id,
                    o.as_str()
                ),
                format!(
                    "set `owner: {}` on `{}` (or drop the field)",
                    f.as_str(),
                    n.id
                ),
            ),
            (None, None) => (
                format!(
                    "{} runs on code or a model, and `{}` does not say which",
                    n.opcode, n.id
                ),
                format!(
                    "set `owner: code` on `{}` when its result is a total function of its operands, else `owner: model`",
                    n.id
                ),
            ),
            _ => continue,
        };
        let close = match &n.owner {
            Some(Owner::Unknown(o)) => did_you_mean(o, Owner::ALL.iter().map(Owner::as_str)),
            _ => Vec::new(),
        };
        let f = cx.report_instr(CheckId::W3, i, locus, message);
        f.did_you_mean = close;
        f.repair = Some(Repair::manual(repair));
    }
}

/// W4: every `edges` endpoint names an existing instruction, and a `modality` is one of
/// `mandatory`, `discretionary`, `forbidden` (an unknown one is reported and read as
/// `mandatory`, §12.2).
fn w4_edge_endpoints(cx: &mut Ctx) {
    for (e, edge) in cx.ix.p.edge_list().iter().enumerate() {
        if let Some(Modality::Unknown(m)) = &edge.modality {
            let suggestions = did_you_mean(m, Modality::ALL.iter().map(Modality::as_str));
            let f = cx.report(
                CheckId::W4,
                Locus::field(Element::Edge(e), FieldKey::Modality),
                format!(
                    "edge `{}` -> `{}` has modality `{m}`, which is not a modality; it is read as `mandatory`",
                    edge.from, edge.to
                ),
            );
            f.did_you_mean = suggestions;
            f.repair = Some(Repair::manual(format!(
                "set `modality` of edges[{e}] to `mandatory`, `discretionary` or `forbidden`"
            )));
        }
        for (field, name) in [("from", &edge.from), ("to", &edge.to)] {
            if cx.ix.instr.contains_key(name.as_str()) {
                continue;
            }
            let suggestions = cx.ix.suggest_id(name);
            let repair = match suggestions.first() {
                Some(s) => format!("change `{field}: {name}` to `{field}: {s}` in edges[{e}]"),
                None => format!(
                    "point edges[{e}].{field} at an existing instruction id, or remove the edge"
                ),
            };
            // The end that does exist: where the broken edge leaves from, or would lead to.
            let (other, label) = if field == "to" {
                (&edge.from, "the edge leaves from here")
            } else {
                (&edge.to, "the edge would lead here")
            };
            let other = cx.ix.instr.get(other.as_str()).copied();
            let f = cx.report(
                CheckId::W4,
                Locus::field(Element::Edge(e), field),
                format!(
                    "edge `{}` -> `{}` names `{name}`, which is no instruction; the transition can never happen",
                    edge.from, edge.to
                ),
            );
            f.did_you_mean = suggestions;
            f.repair = Some(Repair::manual(repair));
            if let Some(o) = other {
                f.relate(Locus::field(Element::Instruction(o), FieldKey::Id), label);
            }
        }
    }
}

/// W5: `edges` is non-empty whenever the module has more than one instruction (there is no
/// implicit fall-through by program order).
fn w5_edges_present(cx: &mut Ctx) {
    let nodes = cx.ix.p.instructions();
    if nodes.len() > 1 && cx.ix.p.edge_list().is_empty() {
        let chain: Vec<String> = nodes
            .windows(2)
            .map(|w| format!("{{from: {}, to: {}}}", w[0].id, w[1].id))
            .collect();
        cx.report(
            CheckId::W5,
            Locus::field(Element::Program, FieldKey::Edges),
            format!(
                "the module has {} instructions and no edges, so a run executes `{}` and halts",
                nodes.len(),
                nodes[0].id
            ),
        )
        .repair = Some(Repair::manual(format!(
            "add the transitions under `edges`, e.g. {}",
            chain.join(", ")
        )));
    }
}

/// W6: exactly one `TERMINAL` exists, and it is reachable from the entry instruction.
fn w6_one_reachable_terminal(cx: &mut Ctx) {
    let nodes = cx.ix.p.instructions();
    let terminals: Vec<usize> = (0..nodes.len())
        .filter(|&i| nodes[i].opcode == Opcode::Terminal)
        .collect();
    if terminals.is_empty() {
        if nodes.is_empty() {
            return;
        }
        let last = nodes
            .iter()
            .rev()
            .find(|n| !n.id.is_empty())
            .map(|n| n.id.clone());
        cx.report(
            CheckId::W6,
            Locus::field(Element::Program, FieldKey::Nodes),
            "the module has no TERMINAL, so a run never reports its result",
        )
        .repair = Some(Repair::manual(match last {
            Some(l) => format!(
                "add `{{id: done, type: TERMINAL}}` to nodes and an edge `{{from: {l}, to: done}}`"
            ),
            None => "add `{id: done, type: TERMINAL}` to nodes".into(),
        }));
        return;
    }
    for &t in terminals.iter().skip(1) {
        let first = nodes[terminals[0]].id.clone();
        cx.report_instr(
            CheckId::W6,
            t,
            Locus::field(Element::Instruction(t), FieldKey::Type),
            format!(
                "`{}` is a second TERMINAL (the first is `{first}`); a module has exactly one",
                nodes[t].id
            ),
        )
        .repair = Some(Repair::manual(format!(
            "remove `{}` and point its incoming edges at `{first}`",
            nodes[t].id
        )));
    }
    // With no edges at all W5 says why nothing is reachable; do not repeat it per instruction.
    if cx.ix.p.edge_list().is_empty() {
        return;
    }
    for &t in &terminals {
        if !cx.ix.reachable[t] {
            cx.report_instr(
                CheckId::W6,
                t,
                Locus::element(Element::Instruction(t)),
                format!(
                    "TERMINAL `{}` cannot be reached from the entry `{}`, so no run reports a result",
                    nodes[t].id, nodes[0].id
                ),
            )
            .repair = Some(Repair::manual(format!(
                "add an edge to `{}` from the last step of the program",
                nodes[t].id
            )));
        }
    }
}

/// W7: every instruction is reachable from the entry instruction (`nodes[0]`).
/// An unreachable TERMINAL is reported by W6, and a second instruction with a duplicate id
/// (which no edge can name) by W1.
fn w7_all_reachable(cx: &mut Ctx) {
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        let duplicate = cx.ix.instr.get(n.id.as_str()) != Some(&i);
        if cx.ix.p.edge_list().is_empty() {
            return; // W5 reports the missing edges
        }
        if cx.ix.reachable[i] || n.opcode == Opcode::Terminal || duplicate {
            continue;
        }
        let entry = cx.ix.p.instructions()[0].id.clone();
        cx.report_instr(
            CheckId::W7,
            i,
            Locus::element(Element::Instruction(i)),
            format!(
                "`{}` cannot be reached from the entry `{entry}`; it never runs",
                n.id
            ),
        )
        .repair = Some(Repair::manual(format!(
            "add an edge into `{}` from the step that should precede it, or remove it",
            n.id
        )));
    }
}

/// W8: every name in `reads` resolves to a carry, a knowledge key, the invocation input
/// (`task`), or an object field of another read carry.
fn w8_reads_resolve(cx: &mut Ctx) {
    let mut findings = Vec::new();
    // One index of the names in scope for every unknown read (built on the first).
    let p = cx.ix.p;
    let mut scope: Option<Suggester> = None;
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        // The object fields of the carries this instruction reads, gathered once (not once per
        // unknown read: an instruction with 20,000 reads would cost 4·10⁸ steps).
        let mut fields: Option<HashSet<String>> = None;
        for (j, r) in n.reads.iter().enumerate() {
            if cx.ix.is_carry(r) || cx.ix.bind.knowledge_item(r).is_some() || r == "task" {
                continue;
            }
            let is_field = fields
                .get_or_insert_with(|| {
                    n.reads
                        .iter()
                        .filter_map(|other| cx.ix.carry_type(other))
                        .filter_map(|t| cx.ix.object_fields(t))
                        .flat_map(|fs| fs.iter().map(|(f, _)| f.to_string()).collect::<Vec<_>>())
                        .collect()
                })
                .contains(r.as_str());
            if is_field {
                continue;
            }
            let suggestions = scope
                .get_or_insert_with(|| {
                    Suggester::new(
                        p.carries()
                            .iter()
                            .map(|c| c.name.as_str())
                            .chain(p.knowledge_list().iter().map(|k| k.name.as_str())),
                    )
                })
                .suggest(r);
            let written = cx
                .ix
                .writers
                .get(r.as_str())
                .and_then(|w| w.first())
                .copied();
            let repair = match (suggestions.first(), written) {
                // A structured rename a front end can offer and word; the validator does not
                // apply it (see `Repair::suggested` on why a read stays as written).
                (Some(s), _) => {
                    let edit = Edit::RenameRead {
                        instruction: i,
                        id: n.id.clone(),
                        index: j,
                        name: r.clone(),
                        to: s.clone(),
                    };
                    let summary = edit.describe(Wording::Agir);
                    Repair::suggested(edit, summary)
                }
                (None, Some(w)) => Repair::manual(format!(
                    "add `{r}: {{type: <type>, produced_by: {}}}` to walker.carries",
                    cx.ix.p.instructions()[w].id
                )),
                (None, None) => Repair::manual(format!(
                    "declare `{r}` in walker.carries (with `role: input` or the `produced_by` that writes it), or remove it from `{}`.reads",
                    n.id
                )),
            };
            findings.push((i, j, r.clone(), suggestions, repair));
        }
    }
    for (i, j, r, suggestions, repair) in findings {
        let id = cx.ix.p.instructions()[i].id.clone();
        let f = cx.report_instr(
            CheckId::W8,
            i,
            Locus::entry(Element::Instruction(i), FieldKey::Reads, j),
            format!("`{id}` reads `{r}`, which is no carry or knowledge item; the operand would be empty"),
        );
        f.did_you_mean = suggestions;
        f.repair = Some(repair);
    }
}

/// W9: every name in `writes` is a declared carry. Mechanical repair: mint the carry, produced
/// by its first writer, typed from that writer's result where it can be inferred.
fn w9_writes_declared(cx: &mut Ctx) {
    let mut found = Vec::new();
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        for (j, w) in n.writes.iter().enumerate() {
            if cx.ix.is_carry(w) {
                continue;
            }
            let first_writer = cx
                .ix
                .writers
                .get(w.as_str())
                .and_then(|v| v.first())
                .copied();
            let ty = if j == 0 {
                super::types::result_type_of(&cx.ix, i)
            } else {
                None
            };
            let suggestions = cx.ix.carry_suggester().suggest(w);
            found.push((i, j, w.clone(), first_writer == Some(i), ty, suggestions));
        }
    }
    for (i, j, w, is_first, ty, suggestions) in found {
        let id = cx.ix.p.instructions()[i].id.clone();
        let ty_text = ty
            .as_ref()
            .map(|t| t.to_string())
            .unwrap_or_else(|| "<type>".into());
        let mechanical = is_first.then(|| Edit::MintCarry {
            name: w.clone(),
            ty: ty.clone(),
            produced_by: Some(id.clone()),
        });
        let f = cx.report_instr(
            CheckId::W9,
            i,
            Locus::entry(Element::Instruction(i), FieldKey::Writes, j),
            format!("`{id}` writes `{w}`, which is not a declared carry; the value has no slot to land in"),
        );
        f.did_you_mean = suggestions;
        let summary =
            format!("add `{w}: {{type: {ty_text}, produced_by: {id}}}` to walker.carries");
        f.repair = Some(match mechanical {
            Some(edit) => Repair::mechanical(edit, summary),
            None => Repair::manual(summary),
        });
    }
}

/// W10: every carry declares `role: input` or `produced_by`, and every `produced_by` names an
/// existing instruction. Mechanical repair: when exactly one instruction writes the carry, name
/// it as the producer.
fn w10_carry_origin(cx: &mut Ctx) {
    let ids = instruction_ids(cx.ix.p);
    for (c, carry) in cx.ix.p.carries().iter().enumerate() {
        let writers = cx
            .ix
            .writers
            .get(carry.name.as_str())
            .cloned()
            .unwrap_or_default();
        let sole_writer = match writers.as_slice() {
            [w] => Some(ids[*w].to_owned()),
            _ => None,
        };
        let set_producer = |summary: String| match &sole_writer {
            Some(w) => Repair::mechanical(
                Edit::SetProducer {
                    carry: carry.name.clone(),
                    instruction: w.clone(),
                },
                summary,
            ),
            None => Repair::manual(summary),
        };
        if let Some(Role::Unknown(r)) = &carry.role {
            let close = did_you_mean(r, Role::ALL.iter().map(Role::as_str));
            let f = cx.report(
                CheckId::W10,
                Locus::field(Element::Carry(c), FieldKey::Role),
                format!(
                    "carry `{}` has `role: {r}`; the only role is `input`",
                    carry.name
                ),
            );
            f.did_you_mean = close;
            f.repair = Some(Repair::manual(format!(
                "set `role: input` on `{}`, or replace it with `produced_by: <writer>`",
                carry.name
            )));
            continue;
        }
        match (&carry.role, &carry.produced_by) {
            (Some(Role::Input), _) => {}
            (_, Some(p)) if cx.ix.instr.contains_key(p.as_str()) => {}
            (_, Some(p)) => {
                let suggestions = cx.ix.suggest_id(p);
                let summary = match (&sole_writer, suggestions.first()) {
                    (Some(w), _) => format!("set `produced_by: {w}` on carry `{}`", carry.name),
                    (None, Some(s)) => format!("set `produced_by: {s}` on carry `{}`", carry.name),
                    (None, None) => format!(
                        "set `produced_by` on carry `{}` to the instruction that writes it",
                        carry.name
                    ),
                };
                let f = cx.report(
                    CheckId::W10,
                    Locus::field(Element::Carry(c), FieldKey::ProducedBy),
                    format!(
                        "carry `{}` is produced by `{p}`, which is no instruction",
                        carry.name
                    ),
                );
                f.did_you_mean = suggestions;
                f.repair = Some(set_producer(summary));
            }
            (_, None) => {
                let summary = match &sole_writer {
                    Some(w) => format!("set `produced_by: {w}` on carry `{}`", carry.name),
                    None if writers.is_empty() => format!(
                        "declare `role: input` on carry `{}` if the caller supplies it, else add the instruction that writes it and name it in `produced_by`",
                        carry.name
                    ),
                    None => format!(
                        "set `produced_by` on carry `{}` to one of its writers ({})",
                        carry.name,
                        quote_list(
                            &writers
                                .iter()
                                .map(|&w| ids[w].to_owned())
                                .collect::<Vec<_>>()
                        )
                    ),
                };
                cx.report(
                    CheckId::W10,
                    Locus::element(Element::Carry(c)),
                    format!(
                        "carry `{}` declares neither `role: input` nor `produced_by`, so nothing says where its value comes from",
                        carry.name
                    ),
                )
                .repair = Some(set_producer(summary));
            }
        }
    }
}

/// W11: every tool binds to at least one instruction (by an instruction's `tool`, its own
/// `serves`, a matching id, or an `autonomy.tools` entry), and every id it `serves` exists.
fn w11_tools_bound(cx: &mut Ctx) {
    let autonomy: HashSet<&str> = cx
        .ix
        .p
        .instructions()
        .iter()
        .filter_map(|n| n.autonomy.as_ref())
        .flat_map(|a| a.tools.iter().map(String::as_str))
        .collect();
    for (t, tool) in cx.ix.p.tool_list().iter().enumerate() {
        for (k, s) in tool.serves.iter().flatten().enumerate() {
            if cx.ix.instr.contains_key(s.as_str()) {
                continue;
            }
            let suggestions = cx.ix.suggest_id(s);
            let f = cx.report(
                CheckId::W11,
                Locus::entry(Element::Tool(t), FieldKey::Serves, k),
                format!("tool `{}` serves `{s}`, which is no instruction", tool.name),
            );
            change_or_remove_entry(f, s, &tool.name, "serves", suggestions);
        }
        let used = cx.ix.tool_users.get(t).is_some_and(|u| !u.is_empty())
            || autonomy.contains(tool.name.as_str());
        if !used {
            let suggestions = cx.ix.suggest_id(&tool.name);
            let f = cx.report(
                CheckId::W11,
                Locus::element(Element::Tool(t)),
                format!(
                    "tool `{}` is bound to no instruction, so its code never runs",
                    tool.name
                ),
            );
            f.did_you_mean = suggestions;
            f.repair = Some(Repair::manual(format!(
                "add `serves: [<instruction id>]` to tool `{}` (or `tool: {}` on the instruction it implements), or remove it",
                tool.name, tool.name
            )));
        }
    }
}

/// Completes finding `f` about `entry` of `owner`'s list `list`, an entry that names no
/// instruction: suggests the ids closest to it, and repairs by changing it to the closest one
/// or, when none is close, removing it.
fn change_or_remove_entry(
    f: &mut Finding,
    entry: &str,
    owner: &str,
    list: &str,
    suggestions: Vec<String>,
) {
    f.did_you_mean = suggestions;
    f.repair = Some(Repair::manual(match f.did_you_mean.first() {
        Some(s) => format!("change `{entry}` to `{s}` in `{owner}`.{list}"),
        None => format!("remove `{entry}` from `{owner}`.{list}"),
    }));
}

/// W12: every knowledge item's `resident_on` names existing instructions (at least one), and
/// the item carries content in exactly one of `template`, `pattern`, `body`, `value`.
fn w12_knowledge_resident_and_embodied(cx: &mut Ctx) {
    for (k, item) in cx.ix.p.knowledge_list().iter().enumerate() {
        if item.resident_on.is_empty() {
            cx.report(
                CheckId::W12,
                Locus::element(Element::Knowledge(k)),
                format!(
                    "knowledge `{}` is resident on no instruction, so no slot ever receives it",
                    item.name
                ),
            )
            .repair = Some(Repair::manual(format!(
                "add `resident_on: [<instruction id>]` to knowledge `{}`",
                item.name
            )));
        }
        for (j, r) in item.resident_on.iter().enumerate() {
            if cx.ix.instr.contains_key(r.as_str()) {
                continue;
            }
            let suggestions = cx.ix.suggest_id(r);
            let f = cx.report(
                CheckId::W12,
                Locus::entry(Element::Knowledge(k), FieldKey::ResidentOn, j),
                format!(
                    "knowledge `{}` is resident on `{r}`, which is no instruction",
                    item.name
                ),
            );
            change_or_remove_entry(f, r, &item.name, "resident_on", suggestions);
        }
        match item.content.len() {
            1 => {}
            0 => {
                cx.report(
                    CheckId::W12,
                    Locus::element(Element::Knowledge(k)),
                    format!(
                        "knowledge `{}` has no `template`, `pattern`, `body` or `value`, so it carries no content",
                        item.name
                    ),
                )
                .repair = Some(Repair::manual(format!(
                    "put the content of `{}` verbatim under `template: |`",
                    item.name
                )));
            }
            _ => {
                let fields: Vec<String> = item
                    .content
                    .iter()
                    .map(|(k, _)| k.as_str().to_owned())
                    .collect();
                cx.report(
                    CheckId::W12,
                    Locus::field(Element::Knowledge(k), item.content[1].0.as_str()),
                    format!(
                        "knowledge `{}` has {} content fields ({}); exactly one is allowed",
                        item.name,
                        fields.len(),
                        quote_list(&fields)
                    ),
                )
                .repair = Some(Repair::manual(format!(
                    "keep one content field of `{}` and move the rest into their own knowledge items",
                    item.name
                )));
            }
        }
    }
}

/// W13: no carry is named with a bare tool-parameter name (§7.4): rule 1 binds by name, so such
/// a carry hijacks that parameter of every tool in the module.
fn w13_no_bare_param_carry_names(cx: &mut Ctx) {
    for (c, carry) in cx.ix.p.carries().iter().enumerate() {
        if !is_bare_param_name(&carry.name) {
            continue;
        }
        let qualifier = carry
            .produced_by
            .clone()
            .or_else(|| carry.is_input().then(|| "input".to_owned()))
            .or_else(|| {
                let r = cx.ix.readers.get(carry.name.as_str())?.first()?;
                Some(cx.ix.node(*r)?.id.clone())
            })
            .unwrap_or_else(|| "input".into());
        let suggestion = format!("{qualifier}_{}", carry.name);
        cx.report(
            CheckId::W13,
            Locus::element(Element::Carry(c)),
            format!(
                "carry `{}` has a bare tool-parameter name: it binds by name to the `{}` parameter of every tool in the module",
                carry.name, carry.name
            ),
        )
        .repair = Some(Repair::manual(format!(
            "rename carry `{}` to a name qualified by its role, e.g. `{suggestion}` (and its reads/writes)",
            carry.name
        )));
    }
}

/// W14: every declared type is well-formed: an enum has members, an object has fields, and
/// `kind` is `enum` or `object`.
fn w14_types_well_formed(cx: &mut Ctx) {
    for (t, decl) in cx.ix.p.type_list().iter().enumerate() {
        let (message, repair) = match &decl.kind {
            TypeKind::Enum(m) if m.is_empty() => (
                format!(
                    "enum `{}` declares no members, so no value can be produced",
                    decl.name
                ),
                format!("add `members: [<member>, …]` to type `{}`", decl.name),
            ),
            TypeKind::Object(f) if f.is_empty() => (
                format!(
                    "object `{}` declares no fields, so its instances carry nothing",
                    decl.name
                ),
                format!(
                    "add `fields: {{<name>: {{type: <type>}}}}` to type `{}`",
                    decl.name
                ),
            ),
            TypeKind::Unknown(k) if k.is_empty() => (
                format!("type `{}` has no `kind`", decl.name),
                format!(
                    "set `kind: enum` (with members) or `kind: object` (with fields) on `{}`",
                    decl.name
                ),
            ),
            TypeKind::Unknown(k) => (
                format!(
                    "type `{}` has `kind: {k}`; the kinds are `enum` and `object`",
                    decl.name
                ),
                format!("set `kind: enum` or `kind: object` on `{}`", decl.name),
            ),
            _ => continue,
        };
        // A misspelled kind is pointed at and offered the close one.
        let (locus, close) = match &decl.kind {
            TypeKind::Unknown(k) if !k.is_empty() => (
                Locus::field(Element::Type(t), FieldKey::Kind),
                did_you_mean(k, ["enum", "object"]),
            ),
            _ => (Locus::element(Element::Type(t)), Vec::new()),
        };
        let f = cx.report(CheckId::W14, locus, message);
        f.did_you_mean = close;
        f.repair = Some(Repair::manual(repair));
    }
}
