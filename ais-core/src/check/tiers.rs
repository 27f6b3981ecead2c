//! T1: a slot's `model` names a tier the run's model configuration defines. The tiers come
//! from outside the program (the runtime's `ais.toml`, or the macro user's runtime), so this
//! check runs only when a configuration is given: [`check_tiers`](super::check_tiers).

use crate::diag::{CheckId, Finding, Severity};
use crate::program::Program;
use crate::source::{Element, FieldKey, Locus};
use crate::suggest::did_you_mean;

/// Every T1 finding of `program` against the tier names `tiers`, unplaced.
pub(super) fn findings<'a>(
    program: &Program,
    tiers: impl IntoIterator<Item = &'a str> + Clone,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, n) in program.instructions().iter().enumerate() {
        let Some(tier) = n.model.as_deref() else {
            continue;
        };
        let locus = Locus::field(Element::Instruction(i), FieldKey::Model);
        if !n.is_su() {
            out.push(Finding::new(
                CheckId::T1,
                Severity::Warn,
                locus,
                format!(
                    "`{}` is run by code, so its `model: {tier}` picks nothing; only a model-owned instruction (a slot) asks a model",
                    n.id
                ),
            ));
            continue;
        }
        if tiers.clone().into_iter().any(|t| t == tier) {
            continue;
        }
        let mut known: Vec<&str> = tiers.clone().into_iter().collect();
        known.sort_unstable();
        let listed = if known.is_empty() {
            "it defines none".to_owned()
        } else {
            format!("it defines {}", known.join(", "))
        };
        out.push(
            Finding::new(
                CheckId::T1,
                Severity::Error,
                locus,
                format!(
                    "slot `{}` names the model tier `{tier}`, which the model configuration does not define ({listed}); define it under `[models]` in ais.toml, or name a defined tier",
                    n.id
                ),
            )
            .with_suggestions(did_you_mean(tier, known.iter().copied())),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::agir;
    use crate::diag::{CheckId, Severity};

    const PROGRAM: &str = "walker:\n  name: W\n  carries:\n    task: {type: str, role: input}\n    a: {type: str}\n    b: {type: str}\nnodes:\n  - {id: first, type: GEN-RAW, reads: [task], writes: [a], doc: Draft., model: smal}\n  - {id: second, type: GEN-RAW, reads: [a], writes: [b], doc: Polish., model: frontier}\n  - {id: done, type: TERMINAL, reads: [b]}\nedges:\n  - {from: first, to: second}\n  - {from: second, to: done}\n";

    #[test]
    fn an_unknown_tier_is_an_error_at_its_field_with_a_did_you_mean() {
        let doc = agir::read(PROGRAM).unwrap();
        assert_eq!(doc.program.instructions()[0].model.as_deref(), Some("smal"));
        let found = super::super::check_tiers(&doc.program, ["small", "frontier"], &doc.source_map);
        assert_eq!(found.len(), 1, "{found:#?}");
        let f = &found[0];
        assert_eq!(f.id.as_str(), CheckId::T1.as_str());
        assert_eq!(f.severity, Severity::Error);
        assert!(
            f.message.contains("`first`") && f.message.contains("`smal`"),
            "{}",
            f.message
        );
        assert_eq!(f.did_you_mean, vec!["small".to_owned()]);
        assert_eq!(f.pos.map(|p| p.line), Some(8));
        // Every tier defined: nothing to say.
        let fine = super::super::check_tiers(&doc.program, ["smal", "frontier"], &doc.source_map);
        assert!(fine.is_empty(), "{fine:#?}");
    }

    #[test]
    fn the_tier_round_trips_through_the_writer() {
        let doc = agir::read(PROGRAM).unwrap();
        let text = agir::write(&doc.program);
        assert!(text.contains("model: frontier"), "{text}");
        assert_eq!(agir::read(&text).unwrap().program, doc.program);
    }
}
