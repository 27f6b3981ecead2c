//! Edges: `a -> b;`, a chain `a -> b -> c if guard;`, a default `a -> b else;`, and a
//! forbidden `forbid a -> b;`; a chain becomes one edge per hop.

use super::attrs::Attrs;
use super::tokens::tokens_until_semi;
use crate::ast::*;
use proc_macro2::Span;
use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::{Ident, Token};

/// One edge statement (after `forbid`, if any, whose span is `forbid`), pushed onto
/// `def.edges` hop by hop; a guard or `else` belongs to the last hop.
pub(super) fn parse_edges(
    input: ParseStream,
    attrs: &Attrs,
    forbid: Option<Span>,
    def: &mut ProgramDef,
) -> syn::Result<()> {
    if let Some(doc) = &attrs.doc {
        return Err(syn::Error::new(
            doc.site.start,
            "an edge has no doc; document the instruction it leaves instead",
        ));
    }
    let first: Ident = input.parse()?;
    let mut hops: Vec<(Span, Name)> = Vec::new();
    while input.peek(Token![->]) {
        let arrow: Token![->] = input.parse()?;
        let to: Ident = input.parse()?;
        hops.push((arrow.span(), Name::from_ident(&to)));
    }
    let kind = if input.peek(Token![if]) {
        let kw: Token![if] = input.parse()?;
        let guard = tokens_until_semi(input)?;
        if guard.is_empty() {
            return Err(syn::Error::new(
                kw.span,
                "expected a guard after `if` (a condition over carries, such as `plan_ok`)",
            ));
        }
        EdgeKind::Guarded(guard, kw.span)
    } else if input.peek(Token![else]) {
        EdgeKind::Default(input.parse::<Token![else]>()?.span)
    } else {
        EdgeKind::Plain
    };
    input.parse::<Token![;]>().map_err(|e| {
        syn::Error::new(
            e.span(),
            "expected `;`, `if <guard>;` or `else;` after the edge",
        )
    })?;
    let kind = match (forbid, kind) {
        (Some(span), EdgeKind::Plain) => EdgeKind::Forbidden(span),
        (Some(span), _) => {
            return Err(syn::Error::new(
                span,
                "a forbidden edge takes no guard: it is never taken",
            ));
        }
        (None, k) => k,
    };
    let traces_to = attrs.traces_to()?;
    let mut from = Name::from_ident(&first);
    let last = hops.len();
    for (i, (arrow, to)) in hops.into_iter().enumerate() {
        // A guard or `else` belongs to the last hop of a chain; the hops before it are
        // mandatory (`a -> b -> c if ok;` is `a -> b; b -> c if ok;`).
        let kind = if i + 1 == last {
            kind.clone()
        } else if let EdgeKind::Forbidden(s) = kind {
            EdgeKind::Forbidden(s)
        } else {
            EdgeKind::Plain
        };
        def.edges.push(EdgeDef {
            from: from.clone(),
            arrow,
            to: to.clone(),
            kind,
            traces_to: traces_to.clone(),
        });
        from = to;
    }
    Ok(())
}
