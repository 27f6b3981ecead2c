//! Reading the `faithfulness` section, the provenance record (§9.5): `source`, `obligations`,
//! `deviations`, every other key kept in `extra`. The schema is documented on
//! [`Provenance`](crate::program::Provenance).

use super::read::{Path, R, fields, name_list, opt_text, wrong};
use super::tree::{Kind, Node};
use crate::program::{
    AcceptedDeviation, Bearer, DeviationKind, ElementRef, Modality, Obligation, ObligationKind,
    Provenance, SourceRef,
};
use crate::source::{Element, Locus, SourceMap};

/// `faithfulness`.
pub(crate) fn faithfulness(node: &Node, sm: &mut SourceMap) -> R<Provenance> {
    let el = Element::Faithfulness;
    sm.insert(Locus::element(el), node.pos);
    let mut p = Provenance::default();
    let expected = "a mapping of `source`, `obligations` and `deviations`";
    for (key, value) in fields(node, "faithfulness", expected)? {
        sm.insert(Locus::field(el, key), value.pos);
        match key {
            "source" => p.source = Some(source(value, sm)?),
            "obligations" => p.obligations = Some(obligations(value, sm)?),
            "deviations" => p.deviations = Some(deviations(value, sm)?),
            _ => p.extra.push((key.to_owned(), value.to_value()?)),
        }
    }
    Ok(p)
}

fn source(node: &Node, sm: &mut SourceMap) -> R<SourceRef> {
    let el = Element::Faithfulness;
    let mut s = SourceRef::default();
    for (key, value) in fields(
        node,
        "faithfulness.source",
        "a mapping of `path` and `digest`",
    )? {
        let p = Path("faithfulness.source", key);
        match key {
            "path" => {
                sm.insert(Locus::field(el, crate::source::FieldKey::Path), value.pos);
                s.path = opt_text(value, p)?;
            }
            "digest" => {
                sm.insert(Locus::field(el, crate::source::FieldKey::Digest), value.pos);
                s.digest = opt_text(value, p)?;
            }
            _ => s.extra.push((key.to_owned(), value.to_value()?)),
        }
    }
    Ok(s)
}

/// The entries of a list-valued key (`obligations`, `deviations`); an absent value is empty.
fn items<'n>(node: &'n Node<'n>, path: &str, entry: &str) -> R<&'n [Node<'n>]> {
    match &node.kind {
        _ if node.is_null() => Ok(&[]),
        Kind::Seq(items) => Ok(items),
        _ => Err(wrong(
            path,
            node,
            "a list",
            format!("write each entry of `{path}` as a `- {entry}` line"),
        )),
    }
}

fn obligations(node: &Node, sm: &mut SourceMap) -> R<Vec<Obligation>> {
    let items = items(
        node,
        "faithfulness.obligations",
        "{id: r1, kind: step, force: mandatory, quote: \"…\"}",
    )?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let el = Element::Obligation(i);
        let at = format!("faithfulness.obligations[{i}]");
        sm.insert(Locus::element(el), item.pos);
        let mut o = Obligation::default();
        let mut has_id = false;
        for (key, value) in fields(item, &at, "an obligation (a mapping with `id`)")? {
            sm.insert(Locus::field(el, key), value.pos);
            let p = Path(&at, key);
            match key {
                "id" => {
                    o.id = super::read::text(value, p)?;
                    has_id = true;
                }
                "kind" => o.kind = opt_text(value, p)?.map(|t| ObligationKind::parse(&t)),
                "force" => o.force = opt_text(value, p)?.map(|t| Modality::parse(&t)),
                "bearer" => o.bearer = opt_text(value, p)?.map(|t| Bearer::parse(&t)),
                "quote" => o.quote = opt_text(value, p)?,
                "realized_by" => {
                    let names = name_list(value, p, el, "realized_by", sm)?;
                    o.realized_by = Some(names.iter().map(|n| ElementRef::parse(n)).collect());
                }
                _ => o.extra.push((key.to_owned(), value.to_value()?)),
            }
        }
        if !has_id {
            return Err(super::ReadError {
                message: format!("{at} has no `id`: an obligation needs a stable rule id"),
                pos: Some(item.pos),
                help: Some("add `id: <rule id>` (the name elements use in `traces_to`)".to_owned()),
            });
        }
        out.push(o);
    }
    Ok(out)
}

fn deviations(node: &Node, sm: &mut SourceMap) -> R<Vec<AcceptedDeviation>> {
    let items = items(
        node,
        "faithfulness.deviations",
        "{obligation: r1, kind: dropped, reason: \"…\"}",
    )?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let el = Element::AcceptedDeviation(i);
        let at = format!("faithfulness.deviations[{i}]");
        sm.insert(Locus::element(el), item.pos);
        let mut d = AcceptedDeviation::default();
        for (key, value) in fields(item, &at, "a deviation (a mapping)")? {
            sm.insert(Locus::field(el, key), value.pos);
            let p = Path(&at, key);
            match key {
                "obligation" => d.obligation = opt_text(value, p)?,
                "kind" => d.kind = opt_text(value, p)?.map(|t| DeviationKind::parse(&t)),
                "element" => d.element = opt_text(value, p)?.map(|t| ElementRef::parse(&t)),
                "reason" => d.reason = opt_text(value, p)?,
                _ => d.extra.push((key.to_owned(), value.to_value()?)),
            }
        }
        out.push(d);
    }
    Ok(out)
}
