//! F1, structure (§9.5): the record sound, every obligation realized in its required shape,
//! nothing added, nothing re-modalized.

use super::realize::realized;
use super::text::{digest, is_digest, normalize_space};
use super::{Auditor, ObligationStatus, Subject, describe};
use crate::check::index::quote_list;
use crate::diag::CheckId;
use crate::program::{Bearer, DeviationKind, ElementRef, Modality, ObligationKind, Opcode};
use crate::source::{Element, FieldKey, Locus};
use crate::suggest::did_you_mean;

/// Runs F1's parts in order: the record, the source, realization, added, re-modalized.
pub(super) fn run(a: &mut Auditor) {
    record_sound(a);
    deviations_sound(a);
    source_agrees(a);
    dangling_traces(a);
    realized_by_agrees(a);
    obligations_realized(a);
    not_vacuous(a);
    instructions_traced(a);
    transitions_keep_force(a);
}

fn f1(a: &mut Auditor, locus: Locus, message: String, repair: String) {
    a.report(CheckId::F1, locus, None, message, repair);
}

/// Every obligation has a unique id, a kind and a force spelled as the schema spells them, and
/// a known bearer.
fn record_sound(a: &mut Auditor) {
    let record = a.record;
    for (i, o) in record.obligation_list().iter().enumerate() {
        let el = Element::Obligation(i);
        if o.id.trim().is_empty() {
            f1(
                a,
                Locus::field(el, FieldKey::Id),
                format!("obligation {i} has an empty `id`: no element can trace to it"),
                "give it a stable rule id (`r1`, `r_validate`)".into(),
            );
        } else if a.by_id.get(o.id.as_str()) != Some(&i) {
            f1(
                a,
                Locus::field(el, FieldKey::Id),
                format!(
                    "obligation id `{}` is used twice; `traces_to` cannot tell them apart",
                    o.id
                ),
                format!("rename one of the obligations `{}`", o.id),
            );
        }
        match &o.kind {
            None => f1(
                a,
                Locus::element(el),
                format!(
                    "obligation `{}` has no `kind`, so its required realization is unknown",
                    o.id
                ),
                format!(
                    "add `kind:` ({})",
                    spellings(ObligationKind::ALL.iter().map(|k| k.as_str()))
                ),
            ),
            Some(ObligationKind::Unknown(k)) => misspelled(
                a,
                el,
                FieldKey::Kind,
                &o.id,
                k,
                &ObligationKind::ALL.map(|k| k.as_str().to_owned()),
            ),
            Some(_) => {}
        }
        match &o.force {
            None => f1(
                a,
                Locus::element(el),
                format!("obligation `{}` has no `force`, so the audit cannot tell a must from a may", o.id),
                "add `force: mandatory`, `forbidden` or `discretionary`, read from the source's words".into(),
            ),
            Some(Modality::Unknown(m)) => misspelled(a, el, FieldKey::Force, &o.id, m, &Modality::ALL.map(|m| m.as_str().to_owned())),
            Some(_) => {}
        }
        if let Some(Bearer::Unknown(b)) = &o.bearer {
            misspelled(
                a,
                el,
                FieldKey::Bearer,
                &o.id,
                b,
                &Bearer::ALL.map(|b| b.as_str().to_owned()),
            );
        }
    }
}

fn spellings<'s>(all: impl Iterator<Item = &'s str>) -> String {
    all.map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
}

fn misspelled(a: &mut Auditor, el: Element, field: FieldKey, id: &str, got: &str, all: &[String]) {
    let name = field.as_str().to_owned();
    let mut f = crate::diag::Finding::new(
        CheckId::F1,
        crate::diag::Severity::Warn,
        Locus::field(el, field),
        format!("obligation `{id}` has `{name}: {got}`, which the schema does not spell"),
    );
    f.did_you_mean = did_you_mean(got, all.iter().map(String::as_str));
    f.repair = Some(crate::diag::Repair::manual(format!(
        "write one of {}",
        spellings(all.iter().map(String::as_str))
    )));
    a.findings.push(f);
}

/// Every accepted deviation has a reason, a known kind, and names an obligation that exists.
fn deviations_sound(a: &mut Auditor) {
    let record = a.record;
    for (i, d) in record.deviation_list().iter().enumerate() {
        let el = Element::AcceptedDeviation(i);
        if d.reason.as_deref().is_none_or(|r| r.trim().is_empty()) {
            f1(
                a,
                Locus::element(el),
                format!(
                    "accepted deviation {i} gives no `reason`; it silences nothing until it does"
                ),
                "add `reason:` saying why the program departs from its source here".into(),
            );
        }
        match &d.kind {
            None => f1(
                a,
                Locus::element(el),
                format!("accepted deviation {i} has no `kind`"),
                format!(
                    "add `kind:` ({})",
                    spellings(DeviationKind::ALL.iter().map(|k| k.as_str()))
                ),
            ),
            Some(DeviationKind::Unknown(k)) => f1(
                a,
                Locus::field(el, FieldKey::Kind),
                format!("accepted deviation {i} has `kind: {k}`, which the schema does not spell"),
                format!(
                    "write one of {}",
                    spellings(DeviationKind::ALL.iter().map(|k| k.as_str()))
                ),
            ),
            Some(_) => {}
        }
        if let Some(o) = &d.obligation
            && !a.by_id.contains_key(o.as_str())
        {
            f1(
                a,
                Locus::field(el, FieldKey::Obligation),
                format!(
                    "accepted deviation {i} names obligation `{o}`, which the record does not list"
                ),
                "name an obligation of `faithfulness.obligations` by its id".into(),
            );
        }
        if d.obligation.is_none() && d.element.is_none() {
            f1(
                a,
                Locus::element(el),
                format!("accepted deviation {i} names neither an obligation nor an element, so it silences nothing"),
                "add `obligation:` (a rule id) or `element:` (an instruction id, `tool:x`, `edge:a->b`, …)".into(),
            );
        }
    }
}

/// With the source text: the recorded digest matches it, and every quote is in it verbatim
/// (runs of whitespace compared as one space).
fn source_agrees(a: &mut Auditor) {
    let Some(source) = a.source else { return };
    let record = a.record;
    if let Some(d) = record.source.as_ref().and_then(|s| s.digest.as_deref()) {
        let actual = digest(source);
        let at = Locus::field(Element::Faithfulness, FieldKey::Digest);
        if !is_digest(d) {
            f1(
                a,
                at,
                format!("the source digest `{d}` is not `sha256:` and 64 hex digits"),
                format!("write `digest: \"{actual}\"`"),
            );
        } else if !d.eq_ignore_ascii_case(&actual) {
            f1(
                a,
                at,
                format!("the source has changed since the lift: its digest is `{actual}`, the record says `{d}`"),
                "lift the program again from the current source, or check every quote and update the digest".into(),
            );
        }
    }
    let text = normalize_space(source);
    for (i, o) in record.obligation_list().iter().enumerate() {
        let el = Element::Obligation(i);
        match o.quote.as_deref().map(normalize_space) {
            None => f1(
                a,
                Locus::element(el),
                format!("obligation `{}` has no `quote`, so it cannot be shown to come from the source", o.id),
                "add `quote:` with the source's words, verbatim".into(),
            ),
            Some(q) if q.is_empty() || !text.contains(&q) => f1(
                a,
                Locus::field(el, FieldKey::Quote),
                format!("the quote of obligation `{}` is not in the source verbatim: the obligation may be invented or paraphrased", o.id),
                "copy the source's words exactly (whitespace may differ), or drop the obligation if the source does not state it".into(),
            ),
            Some(_) => {}
        }
    }
}

/// Every `traces_to` entry names an obligation of the record.
fn dangling_traces(a: &mut Auditor) {
    let p = a.ix.p;
    let ids: Vec<&str> = a
        .record
        .obligation_list()
        .iter()
        .map(|o| o.id.as_str())
        .collect();
    let check = |a: &mut Auditor, el: Element, what: String, list: &Option<Vec<String>>| {
        for (j, t) in list.iter().flatten().enumerate() {
            if a.by_id.contains_key(t.as_str()) {
                continue;
            }
            let mut f = crate::diag::Finding::new(
                CheckId::F1,
                crate::diag::Severity::Warn,
                Locus::entry(el, FieldKey::TracesTo, j),
                format!(
                    "{what} traces to `{t}`, which is no obligation of the record (dangling provenance)"
                ),
            );
            f.did_you_mean = did_you_mean(t, ids.iter().copied());
            f.repair = Some(crate::diag::Repair::manual(format!(
                "name an obligation of `faithfulness.obligations`, or add `{t}` to it with its quote"
            )));
            if let Element::Instruction(i) = el {
                f.instruction = a.ix.node(i).map(|n| n.id.clone());
            }
            a.findings.push(f);
        }
    };
    for (i, n) in p.instructions().iter().enumerate() {
        check(
            a,
            Element::Instruction(i),
            format!("`{}`", n.id),
            &n.traces_to,
        );
    }
    for (i, e) in p.edge_list().iter().enumerate() {
        check(
            a,
            Element::Edge(i),
            format!("edge `{}` → `{}`", e.from, e.to),
            &e.traces_to,
        );
    }
    for (i, c) in p.carries().iter().enumerate() {
        check(
            a,
            Element::Carry(i),
            format!("carry `{}`", c.name),
            &c.traces_to,
        );
    }
    for (i, t) in p.tool_list().iter().enumerate() {
        check(
            a,
            Element::Tool(i),
            format!("tool `{}`", t.name),
            &t.traces_to,
        );
    }
    for (i, k) in p.knowledge_list().iter().enumerate() {
        check(
            a,
            Element::Knowledge(i),
            format!("knowledge `{}`", k.name),
            &k.traces_to,
        );
    }
}

/// The `traces_to` of the element an [`ElementRef`] names; `None` when no such element exists.
fn traces_of<'p>(a: &Auditor<'_, 'p>, r: &ElementRef) -> Option<&'p [String]> {
    let p = a.ix.p;
    let list = match r {
        ElementRef::Node(id) => &p.instruction(id)?.1.traces_to,
        ElementRef::Tool(n) => &p.tool(n)?.1.traces_to,
        ElementRef::Knowledge(n) => &p.knowledge_item(n)?.1.traces_to,
        ElementRef::Carry(n) => &p.carry(n)?.1.traces_to,
        ElementRef::Edge { from, to } => {
            &p.edge_list()
                .iter()
                .find(|e| &e.from == from && &e.to == to)?
                .traces_to
        }
    };
    Some(list.as_deref().unwrap_or(&[]))
}

/// `realized_by` agrees with `traces_to`: each element it names exists and traces to the
/// obligation.
fn realized_by_agrees(a: &mut Auditor) {
    let record = a.record;
    for (i, o) in record.obligation_list().iter().enumerate() {
        for (j, r) in o.realized_by.iter().flatten().enumerate() {
            let at = Locus::entry(Element::Obligation(i), FieldKey::RealizedBy, j);
            match traces_of(a, r) {
                None => f1(
                    a,
                    at,
                    format!("`realized_by` of `{}` names `{r}`, which is no element of the program", o.id),
                    "name an existing element (an instruction id, `tool:x`, `knowledge:x`, `carry:x`, `edge:a->b`), or remove the entry".into(),
                ),
                Some(traces) if !traces.iter().any(|t| t == &o.id) => f1(
                    a,
                    at,
                    format!("`realized_by` of `{}` names `{r}`, which does not trace to it", o.id),
                    format!("add `{}` to the `traces_to` of `{r}`, or remove it from `realized_by`", o.id),
                ),
                Some(_) => {}
            }
        }
    }
}

/// Every obligation has its required realization (dropped otherwise).
fn obligations_realized(a: &mut Auditor) {
    let record = a.record;
    for (i, o) in record.obligation_list().iter().enumerate() {
        let required = a.required(i);
        let mut realized_ok = true;
        if let Some(shape) = required
            && shape.is_required()
            && a.by_id.get(o.id.as_str()) == Some(&i)
            && let Err(why) = realized(a, &o.id, shape)
        {
            realized_ok = false;
            let before = a.findings.len();
            a.report(
                CheckId::F1,
                Locus::field(Element::Obligation(i), FieldKey::Id),
                Some(Subject {
                    obligation: Some(&o.id),
                    element: None,
                    kind: DeviationKind::Dropped,
                }),
                format!(
                    "obligation {} is dropped: {why} (it needs {})",
                    describe(&o.id, o.kind.as_ref(), o.force.as_ref()),
                    shape.as_str().replace('_', " ")
                ),
                shape.repair(&o.id),
            );
            if a.findings.len() == before {
                realized_ok = true; // accepted
            }
        }
        let t = a.traced(&o.id);
        let p = a.ix.p;
        let mut traced_by: Vec<ElementRef> = Vec::new();
        traced_by.extend(
            t.nodes
                .iter()
                .map(|&k| ElementRef::Node(p.instructions()[k].id.clone())),
        );
        traced_by.extend(
            t.tools
                .iter()
                .map(|&k| ElementRef::Tool(p.tool_list()[k].name.clone())),
        );
        traced_by.extend(
            t.knowledge
                .iter()
                .map(|&k| ElementRef::Knowledge(p.knowledge_list()[k].name.clone())),
        );
        traced_by.extend(
            t.carries
                .iter()
                .map(|&k| ElementRef::Carry(p.carries()[k].name.clone())),
        );
        traced_by.extend(t.edges.iter().map(|&k| {
            let e = &p.edge_list()[k];
            ElementRef::Edge {
                from: e.from.clone(),
                to: e.to.clone(),
            }
        }));
        a.statuses.push(ObligationStatus {
            id: o.id.clone(),
            required,
            realized: realized_ok,
            traced_by,
            remodalized: false,
        });
    }
}

/// A record whose obligations are all optional or carried makes the audit vacuous: nothing is
/// required of the agent, so nothing can be dropped.
fn not_vacuous(a: &mut Auditor) {
    let n = a.record.obligation_list().len();
    let all_known = a.statuses.iter().all(|s| s.required.is_some());
    if n == 0
        || !all_known
        || a.statuses
            .iter()
            .any(|s| s.required.is_some_and(|r| r.is_required()))
    {
        return;
    }
    f1(
        a,
        Locus::field(Element::Faithfulness, FieldKey::Obligations),
        format!("all {n} obligations of the record are optional or borne by someone else: the audit is vacuous, nothing is required of the agent"),
        "check the force of each obligation against the source's words: an unmarked imperative (\"Run the validator.\") under a heading that mandates its section is `mandatory`".into(),
    );
}

/// Scaffolding an instruction may be without an obligation: `TERMINAL` (§4.5), a code-owned
/// ROUTE that routes the results of traced steps (error routing, §10.2), and a ROUTE that is
/// the decision point of what the source leaves optional (below).
fn is_scaffolding(a: &Auditor, i: usize) -> bool {
    let nodes = a.ix.p.instructions();
    let n = &nodes[i];
    if n.opcode == Opcode::Terminal || decides_an_option(a, i) {
        return true;
    }
    if n.opcode != Opcode::Route || !n.is_du() {
        return false;
    }
    let traced_writes: Vec<&str> = nodes
        .iter()
        .filter(|m| m.traces_to.as_ref().is_some_and(|t| !t.is_empty()))
        .flat_map(|m| m.writes.iter().map(String::as_str))
        .collect();
    a.ix.out.get(i).into_iter().flatten().any(|&e| {
        a.ix.p.edge_list()[e].guard.as_deref().is_some_and(|g| {
            crate::check::guards::names(g)
                .iter()
                .any(|name| traced_writes.contains(&name.as_str()))
        })
    })
}

/// A ROUTE with a choice of at least two targets, one of which realizes only discretionary
/// obligations: the decision a "may" asks for (take the optional step, or go on without it).
/// The optional step keeps its own trace; the ROUTE adds no behavior of its own.
fn decides_an_option(a: &Auditor, i: usize) -> bool {
    let nodes = a.ix.p.instructions();
    if nodes[i].opcode != Opcode::Route {
        return false;
    }
    let edges = a.ix.p.edge_list();
    let targets: Vec<&str> =
        a.ix.out
            .get(i)
            .into_iter()
            .flatten()
            .map(|&e| edges[e].to.as_str())
            .collect();
    let optional = |to: &str| {
        nodes.iter().find(|m| m.id == to).is_some_and(|m| {
            let t = m.traces_to.as_deref().unwrap_or_default();
            !t.is_empty()
                && t.iter().all(|r| {
                    a.record
                        .obligation(r)
                        .is_some_and(|(_, o)| o.force == Some(Modality::Discretionary))
                })
        })
    };
    targets.len() >= 2 && targets.iter().any(|t| optional(t))
}

/// Every instruction traces to an obligation, or is scaffolding (added otherwise).
fn instructions_traced(a: &mut Auditor) {
    let p = a.ix.p;
    for (i, n) in p.instructions().iter().enumerate() {
        let traced = n.traces_to.as_ref().is_some_and(|t| !t.is_empty());
        if traced || is_scaffolding(a, i) {
            continue;
        }
        let locus = if n.traces_to.is_some() {
            Locus::field(Element::Instruction(i), FieldKey::TracesTo)
        } else {
            Locus::element(Element::Instruction(i))
        };
        a.report(
            CheckId::F1,
            locus,
            Some(Subject {
                obligation: None,
                element: Some(ElementRef::Node(n.id.clone())),
                kind: DeviationKind::Added,
            }),
            format!(
                "`{}` is added: it traces to no obligation of the source, and is not scaffolding the spec asks for (TERMINAL, the routing of a traced step's result)",
                n.id
            ),
            format!(
                "add the obligation `{}` realizes to its `traces_to`, remove it, or record it in `faithfulness.deviations` as `{{element: {}, kind: added, reason: …}}`",
                n.id, n.id
            ),
        );
    }
}

/// The force an edge gives its transition: its `modality`, else discretionary when it has a
/// guard and mandatory when it has none.
fn edge_force(e: &crate::program::Edge) -> Option<Modality> {
    match &e.modality {
        Some(Modality::Unknown(_)) => None,
        Some(m) => Some(m.clone()),
        None if e.guard.as_deref().is_some_and(|g| !g.trim().is_empty()) => {
            Some(Modality::Discretionary)
        }
        None => Some(Modality::Mandatory),
    }
}

/// No transition's modality differs from its obligation's force: an edge tracing an obligation
/// has its force; a discretionary step is not performed on every run; a mandatory step is not
/// entered only through discretionary edges.
fn transitions_keep_force(a: &mut Auditor) {
    let p = a.ix.p;
    let record = a.record;
    let force_of = |id: &str| -> Option<(&Modality, &crate::program::Obligation)> {
        let o = record.obligation(id)?.1;
        let applies = o.kind.as_ref() != Some(&ObligationKind::Knowledge)
            && super::is_agent(&o.effective_bearer());
        applies.then_some((o.force.as_ref()?, o))
    };
    // Edges that trace obligations.
    for (e, edge) in p.edge_list().iter().enumerate() {
        let Some(have) = edge_force(edge) else {
            continue;
        };
        for id in edge.traces_to.iter().flatten() {
            let Some((want, o)) = force_of(id) else {
                continue;
            };
            if matches!(want, Modality::Unknown(_)) || *want == have {
                continue;
            }
            let locus = if edge.modality.is_some() {
                Locus::field(Element::Edge(e), FieldKey::Modality)
            } else {
                Locus::element(Element::Edge(e))
            };
            let message = if *want == Modality::Forbidden {
                format!(
                    "edge `{}` → `{}` performs {}, which the source forbids: the program can take a transition the source says never to take",
                    edge.from,
                    edge.to,
                    describe(id, o.kind.as_ref(), Some(want))
                )
            } else {
                format!(
                    "edge `{}` → `{}` is {} but realizes {}: the transition is re-modalized",
                    edge.from,
                    edge.to,
                    have.as_str(),
                    describe(id, o.kind.as_ref(), Some(want))
                )
            };
            a.report(
                CheckId::F1,
                locus,
                Some(Subject {
                    obligation: Some(id),
                    element: Some(ElementRef::Edge {
                        from: edge.from.clone(),
                        to: edge.to.clone(),
                    }),
                    kind: DeviationKind::Remodalized,
                }),
                message,
                if *want == Modality::Forbidden {
                    format!("remove the edge (or mark it `modality: forbidden`) and fold `{id}` onto the instruction it governs")
                } else {
                    format!("set `modality: {}` on the edge, with the guard or choice that makes it so", want.as_str())
                },
            );
        }
    }
    // Instructions whose obligations are all discretionary but that every run performs, and
    // mandatory steps entered only through discretionary edges.
    for (i, n) in p.instructions().iter().enumerate() {
        // Constraints govern the slots they are folded onto; they do not make a step of it.
        let forces: Vec<(&String, &Modality)> = n
            .traces_to
            .iter()
            .flatten()
            .filter_map(|id| force_of(id))
            .filter(|(_, o)| o.kind != Some(ObligationKind::Constraint))
            .map(|(m, o)| (&o.id, m))
            .collect();
        if forces.is_empty() || n.opcode == Opcode::Terminal {
            continue;
        }
        let may: Vec<String> = forces
            .iter()
            .filter(|(_, m)| **m == Modality::Discretionary)
            .map(|(id, _)| (*id).clone())
            .collect();
        let all_may = may.len() == forces.len();
        if all_may && a.on_path(i) && unavoidable(a, i) {
            a.report(
                CheckId::F1,
                Locus::field(Element::Instruction(i), FieldKey::TracesTo),
                Some(Subject {
                    obligation: may.first().map(String::as_str),
                    element: Some(ElementRef::Node(n.id.clone())),
                    kind: DeviationKind::Remodalized,
                }),
                format!(
                    "`{}` realizes {}, which the source leaves optional, but every run performs it: the step is hardened from may to must",
                    n.id,
                    quote_list(&may)
                ),
                format!(
                    "enter `{}` through a discretionary edge (a guard, or a model-owned ROUTE choosing it) so a run can skip it",
                    n.id
                ),
            );
        }
        let must: Vec<String> = forces
            .iter()
            .filter(|(id, m)| {
                **m == Modality::Mandatory
                    && record
                        .obligation(id)
                        .is_some_and(|(_, o)| o.kind == Some(ObligationKind::Step))
            })
            .map(|(id, _)| (*id).clone())
            .collect();
        let into: Vec<(usize, &crate::program::Edge)> = p
            .edge_list()
            .iter()
            .enumerate()
            .filter_map(|(e, edge)| match a.ix.ends.get(e) {
                Some(Some((from, t))) if *t == i => Some((*from, edge)),
                _ => None,
            })
            .filter(|(_, edge)| edge.modality != Some(Modality::Forbidden))
            .collect();
        // A guarded edge leaving a human gate's decision conditions the step on the person's
        // answer, as the gate obligation asks; it does not soften the step.
        let gate = |from: usize| {
            p.instructions().get(from).is_some_and(|src| {
                src.traces_to.iter().flatten().any(|id| {
                    record
                        .obligation(id)
                        .is_some_and(|(_, o)| o.kind == Some(ObligationKind::HumanGate))
                })
            })
        };
        if !must.is_empty()
            && !into.is_empty()
            && into
                .iter()
                .all(|(from, e)| e.modality == Some(Modality::Discretionary) && !gate(*from))
        {
            a.report(
                CheckId::F1,
                Locus::field(Element::Instruction(i), FieldKey::TracesTo),
                Some(Subject {
                    obligation: must.first().map(String::as_str),
                    element: Some(ElementRef::Node(n.id.clone())),
                    kind: DeviationKind::Remodalized,
                }),
                format!(
                    "`{}` realizes {}, which the source makes mandatory, but every edge into it is discretionary: the step is softened from must to may",
                    n.id,
                    quote_list(&must)
                ),
                format!("make an edge into `{}` `modality: mandatory`", n.id),
            );
        }
    }
}

/// True when every run from the entry to a `TERMINAL` passes instruction `i`.
fn unavoidable(a: &Auditor, i: usize) -> bool {
    if i == 0 {
        return true;
    }
    let nodes = a.ix.p.instructions();
    let mut seen = vec![false; nodes.len()];
    let mut stack = vec![0usize];
    seen[0] = true;
    seen[i] = true;
    while let Some(n) = stack.pop() {
        if nodes[n].opcode == Opcode::Terminal {
            return false;
        }
        for (_, t) in a.ix.targets(n) {
            if !seen[t] {
                seen[t] = true;
                stack.push(t);
            }
        }
    }
    true
}
