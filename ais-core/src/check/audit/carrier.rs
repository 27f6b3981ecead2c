//! F4, carrier completeness (§9.5): every required deliverable is held by a typed carry, and a
//! writer on a path to `TERMINAL` produces it — reachable from the typed carries alone, not
//! from the raw invocation text.

use super::realize::Realization;
use super::{Auditor, Subject};
use crate::diag::CheckId;
use crate::program::{DeviationKind, Opcode, Type};
use crate::source::{Element, FieldKey, Locus};

/// F4 over every mandatory `io` obligation of the agent.
pub(super) fn run(a: &mut Auditor) {
    let p = a.ix.p;
    let record = a.record;
    for (i, o) in record.obligation_list().iter().enumerate() {
        if a.required(i) != Some(Realization::WrittenArtifact)
            || a.by_id.get(o.id.as_str()) != Some(&i)
        {
            continue;
        }
        let t = a.traced(&o.id);
        // The carries that may hold the deliverable: traced carries, what the traced
        // instructions write, and what traced ACTs write out — the invocation's inputs aside.
        let mut carriers: Vec<&str> = t
            .carries
            .iter()
            .map(|&c| p.carries()[c].name.as_str())
            .collect();
        for &n in &t.nodes {
            let node = &p.instructions()[n];
            carriers.extend(node.writes.iter().map(String::as_str));
            if node.opcode == Opcode::Act {
                carriers.extend(node.reads.iter().map(String::as_str));
            }
        }
        carriers.retain(|c| p.carry(c).is_some_and(|(_, carry)| !carry.is_input()));
        carriers.dedup();
        let typed = |c: &&str| {
            a.ix.carry_type(c)
                .is_some_and(|ty| !matches!(ty, Type::Any))
        };
        let produced = |c: &&str| {
            a.ix.writers
                .get(*c)
                .is_some_and(|ws| ws.iter().any(|&w| a.on_path(w)))
        };
        if carriers.iter().any(|c| typed(c) && produced(c)) {
            continue;
        }
        let why = if carriers.is_empty() {
            "no carry holds it: the deliverable exists only inside a tool call, or in the raw invocation text".to_owned()
        } else if let Some(c) = carriers.iter().find(|c| typed(c)) {
            format!(
                "its carry `{c}` is typed, but no writer on a path from the entry to TERMINAL produces it"
            )
        } else {
            format!(
                "what holds it ({}) is untyped",
                carriers
                    .iter()
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        a.report(
            CheckId::F4,
            Locus::field(Element::Obligation(i), FieldKey::Id),
            Some(Subject {
                obligation: Some(&o.id),
                element: None,
                kind: DeviationKind::Weakened,
            }),
            format!(
                "deliverable `{}` cannot be produced from the typed carries alone: {why}",
                o.id
            ),
            format!(
                "widen the typed carrier: declare the deliverable as a typed carry (`traces_to: [{}]`) and add an instruction on the path to TERMINAL that emits it — never loosen the scoping back out",
                o.id
            ),
        );
    }
}
