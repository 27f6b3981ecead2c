//! The provenance record (spec §9.5): `obligation r_id { kind: step, force: mandatory, bearer:
//! agent, quote: "..", realized_by: [step], at: "12:3", .. }`, `source { path: "..", digest:
//! ".." }` and `deviation { obligation: r_id, kind: dropped, reason: ".." }`.

use super::tokens::ParseAnyIdent;
use super::values::{parse_value, parse_word};
use crate::ast::{DeviationDef, Name, OBLIGATION_NOTES, ObligationDef, Site, SourceDef};
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::punctuated::Punctuated;
use syn::{Ident, LitStr, Token, braced, bracketed};

/// `{ key: value, .. }`: calls `field` with each key (the value follows at the stream), each
/// key at most once.
fn fields(
    input: ParseStream,
    mut field: impl FnMut(&Ident, ParseStream) -> syn::Result<()>,
) -> syn::Result<()> {
    let content;
    braced!(content in input);
    let mut seen: Vec<String> = Vec::new();
    while !content.is_empty() {
        let key: Ident = syn::ext::IdentExt::parse_any(&content)?;
        content.parse::<Token![:]>()?;
        let k = key.to_string();
        if seen.contains(&k) {
            return Err(syn::Error::new(key.span(), format!("`{k}` is given twice")));
        }
        seen.push(k);
        field(&key, &content)?;
        if !content.is_empty() {
            content.parse::<Token![,]>()?;
        }
    }
    Ok(())
}

/// A string literal, with what it is for in the error.
fn text(input: ParseStream, key: &Ident, what: &str) -> syn::Result<(String, Site)> {
    let q: LitStr = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), format!("`{key}` is {what} as a string literal")))?;
    Ok((q.value(), Site::one(q.span())))
}

fn unknown(key: &Ident, item: &str, expected: &[&str]) -> syn::Error {
    syn::Error::new(
        key.span(),
        crate::words::unknown(&format!("{item} field"), &key.to_string(), expected),
    )
}

/// The fields an `obligation` item takes.
const OBLIGATION_FIELDS: &[&str] = &[
    "kind",
    "force",
    "bearer",
    "quote",
    "realized_by",
    "at",
    "force_from",
    "condition",
    "cohesion",
];

/// One `obligation` item (the fields in any order, each at most once, commas between).
pub(super) fn parse_obligation(input: ParseStream) -> syn::Result<ObligationDef> {
    input.parse::<super::kw::obligation>()?;
    let name: Ident = input.parse()?;
    let mut def = ObligationDef {
        name: Name::from_ident(&name),
        kind: None,
        force: None,
        bearer: None,
        quote: None,
        realized_by: None,
        notes: Vec::new(),
    };
    fields(input, |key, content| {
        let k = key.to_string();
        match k.as_str() {
            "kind" => def.kind = Some(parse_word(content)?),
            "force" => def.force = Some(parse_word(content)?),
            "bearer" => def.bearer = Some(parse_word(content)?),
            "quote" => def.quote = Some(text(content, key, "the source's words")?),
            "realized_by" => def.realized_by = Some(parse_elements(content)?),
            _ if OBLIGATION_NOTES.contains(&k.as_str()) => {
                let value = if content.peek(LitStr) {
                    parse_value(content)?
                } else if content.peek(Ident::peek_any) {
                    let (word, site) = parse_word(content)?;
                    crate::ast::ValueLit {
                        value: ais_core::Value::Str(word),
                        site,
                    }
                } else {
                    return Err(content.error(format!(
                        "`{k}` is the lift's note as a string literal: `{k}: \"..\"`"
                    )));
                };
                def.notes.push((Name::from_ident(key), value));
            }
            _ => return Err(unknown(key, "obligation", OBLIGATION_FIELDS)),
        }
        Ok(())
    })?;
    Ok(def)
}

/// `[step, "tool:name", "edge:a->b"]`: elements, an instruction by its id and anything else as
/// a string with its plane in front.
fn parse_elements(input: ParseStream) -> syn::Result<(Vec<Name>, Site)> {
    let content;
    let bracket = bracketed!(content in input);
    let items = Punctuated::<Name, Token![,]>::parse_terminated_with(&content, |i| {
        if i.peek(LitStr) {
            let s: LitStr = i.parse()?;
            Ok(Name {
                text: s.value(),
                span: s.span(),
            })
        } else {
            let id: Ident = i.call(Ident::parse_any_ident).map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "expected an element: an instruction's id, or a string such as \
                     \"tool:name\", \"knowledge:name\", \"carry:name\" or \"edge:a->b\"",
                )
            })?;
            Ok(Name::from_ident(&id))
        }
    })?;
    Ok((
        items.into_iter().collect(),
        Site::range(bracket.span.open(), bracket.span.close()),
    ))
}

/// `source { path: "SKILL.md", digest: "sha256:.." }`.
pub(super) fn parse_source(input: ParseStream) -> syn::Result<SourceDef> {
    let keyword = input.parse::<super::kw::source>()?.span;
    let mut def = SourceDef {
        keyword,
        path: None,
        digest: None,
    };
    fields(input, |key, content| {
        match key.to_string().as_str() {
            "path" => def.path = Some(text(content, key, "the source's path")?),
            "digest" => def.digest = Some(text(content, key, "`sha256:` and 64 hex digits")?),
            _ => return Err(unknown(key, "source", &["path", "digest"])),
        }
        Ok(())
    })?;
    Ok(def)
}

/// `deviation { obligation: r_id, kind: dropped, element: "tool:x", reason: ".." }`.
pub(super) fn parse_deviation(input: ParseStream) -> syn::Result<DeviationDef> {
    let keyword = input.parse::<super::kw::deviation>()?.span;
    let mut def = DeviationDef {
        keyword,
        obligation: None,
        kind: None,
        element: None,
        reason: None,
    };
    fields(input, |key, content| {
        match key.to_string().as_str() {
            "obligation" => def.obligation = Some(parse_word(content)?),
            "kind" => def.kind = Some(parse_word(content)?),
            "element" => def.element = Some(parse_word(content)?),
            "reason" => def.reason = Some(text(content, key, "why it is accepted")?),
            _ => {
                return Err(unknown(
                    key,
                    "deviation",
                    &["obligation", "kind", "element", "reason"],
                ));
            }
        }
        Ok(())
    })?;
    Ok(def)
}
