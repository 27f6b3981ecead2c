//! An item's attributes: its `///` doc comment joined as rustdoc reads it, and the `#[..]`
//! attributes checked against the ones the item accepts and read by name, including the
//! arguments of `#[concurrency(..)]`.

use crate::ast::*;
use proc_macro2::Span;
use syn::parse::ParseStream;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, Ident, Lit, LitStr, Token, bracketed};

/// Attributes read off an item: its doc comment and the rest, by name.
pub(super) struct Attrs {
    /// The `///` lines, joined, with the site from the first to the last.
    pub(super) doc: Option<Doc>,
    /// Every other attribute, in the order written.
    pub(super) other: Vec<Attribute>,
}

impl Attrs {
    /// Reads every outer attribute at `input`, splitting the doc comment from the rest.
    pub(super) fn parse(input: ParseStream) -> syn::Result<Attrs> {
        let all = Attribute::parse_outer(input)?;
        let mut lines = Vec::new();
        let mut other = Vec::new();
        let mut site: Option<Site> = None;
        for attr in all {
            if attr.path().is_ident("doc")
                && let Ok(nv) = attr.meta.require_name_value()
                && let Expr::Lit(lit) = &nv.value
                && let Lit::Str(s) = &lit.lit
            {
                lines.push(s.value());
                let span = attr.span();
                site = Some(match site {
                    None => Site::one(span),
                    Some(s) => Site::range(s.start, span),
                });
                continue;
            }
            other.push(attr);
        }
        let doc = site.map(|site| Doc {
            text: join_doc_lines(&lines),
            site,
        });
        Ok(Attrs { doc, other })
    }

    /// Errors for every attribute whose name is not in `allowed`.
    pub(super) fn only(&self, allowed: &[&str], what: &str) -> syn::Result<()> {
        for attr in &self.other {
            let name = attr
                .path()
                .get_ident()
                .map(Ident::to_string)
                .unwrap_or_default();
            if name == "idempotent" && !allowed.contains(&"idempotent") {
                return Err(syn::Error::new(
                    attr.path().span(),
                    format!(
                        "`#[idempotent]` marks a tool, not {what}; put it on the `tool` declaration \
                         (`#[idempotent] tool name(..) -> T {{ .. }}`) of a tool that may run \
                         again after a crash"
                    ),
                ));
            }
            if !allowed.contains(&name.as_str()) {
                let expected = if allowed.is_empty() {
                    "it takes none".to_owned()
                } else {
                    format!(
                        "expected one of {}",
                        allowed
                            .iter()
                            .map(|a| match *a {
                                "idempotent" => "`#[idempotent]`".to_owned(),
                                a => format!("`#[{a}(..)]`"),
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                return Err(syn::Error::new(
                    attr.path().span(),
                    crate::words::suggest(
                        format!("unknown attribute on {what}; {expected}"),
                        &name,
                        allowed,
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The attribute called `name`, if the item has one.
    pub(super) fn get(&self, name: &str) -> Option<&Attribute> {
        self.other.iter().find(|a| a.path().is_ident(name))
    }

    /// `#[name(a, b)]`: the attribute's span and its names.
    pub(super) fn names(&self, name: &str) -> syn::Result<Option<(Span, Vec<Name>)>> {
        self.get(name)
            .map(|a| Ok((a.span(), a.parse_args_with(parse_names)?)))
            .transpose()
    }

    /// `#[name]` with no arguments: its span, if the item has it; `#[name(..)]` or
    /// `#[name = ..]` is an error.
    pub(super) fn flag(&self, name: &str) -> syn::Result<Option<Span>> {
        let Some(a) = self.get(name) else {
            return Ok(None);
        };
        match &a.meta {
            syn::Meta::Path(p) => Ok(Some(p.span())),
            other => Err(syn::Error::new(
                other.span(),
                format!("`#[{name}]` takes no arguments; write `#[{name}]`"),
            )),
        }
    }

    /// `#[name(a)]`: its one name.
    pub(super) fn one_name(&self, name: &str) -> syn::Result<Option<Name>> {
        self.get(name)
            .map(|a| a.parse_args::<Ident>().map(|i| Name::from_ident(&i)))
            .transpose()
    }

    /// `#[traces_to("R1", "R2")]`: the requirement ids, each with its span.
    pub(super) fn traces_to(&self) -> syn::Result<Option<Vec<Name>>> {
        self.get("traces_to")
            .map(|a| {
                a.parse_args_with(Punctuated::<LitStr, Token![,]>::parse_terminated)
                    .map(|p| {
                        p.iter()
                            .map(|l| Name {
                                text: l.value(),
                                span: l.span(),
                            })
                            .collect()
                    })
            })
            .transpose()
    }

    /// `#[concurrency(..)]`, read by [`parse_concurrency`].
    pub(super) fn concurrency(&self) -> syn::Result<Option<ConcurrencyDef>> {
        self.get("concurrency")
            .map(|a| {
                let span = a.span();
                a.parse_args_with(|input: ParseStream| parse_concurrency(input, span))
            })
            .transpose()
    }
}

/// Joins `///` lines as rustdoc reads them: one leading space dropped, consecutive lines joined
/// by a space, a blank line kept as a paragraph break.
fn join_doc_lines(lines: &[String]) -> String {
    let mut paragraphs: Vec<String> = vec![String::new()];
    for line in lines {
        let line = line.strip_prefix(' ').unwrap_or(line).trim_end();
        if line.trim().is_empty() {
            if paragraphs.last().is_some_and(|p| !p.is_empty()) {
                paragraphs.push(String::new());
            }
            continue;
        }
        let cur = paragraphs.last_mut().expect("at least one paragraph");
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(line.trim_start());
    }
    paragraphs.retain(|p| !p.is_empty());
    paragraphs.join("\n\n")
}

/// Comma-separated identifiers: `(draft, save_it)`.
pub(super) fn parse_names(input: ParseStream) -> syn::Result<Vec<Name>> {
    let idents = Punctuated::<Ident, Token![,]>::parse_terminated(input)?;
    Ok(idents.iter().map(Name::from_ident).collect())
}

/// The arguments of `#[concurrency(isolation = .., spawn = .., max_parallel = .., reason = ..)]`.
fn parse_concurrency(input: ParseStream, span: Span) -> syn::Result<ConcurrencyDef> {
    let mut def = ConcurrencyDef {
        span,
        isolation: None,
        spawn_none: None,
        spawn_list: None,
        max_parallel: None,
        reason: None,
    };
    while !input.is_empty() {
        let key: Ident = input.parse()?;
        input.parse::<Token![=]>()?;
        match key.to_string().as_str() {
            "isolation" => {
                let v: Ident = input.parse()?;
                def.isolation = Some(Name::from_ident(&v));
            }
            "spawn" => {
                if input.peek(syn::token::Bracket) {
                    let content;
                    let b = bracketed!(content in input);
                    let items = Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?;
                    def.spawn_list = Some((
                        items.iter().map(LitStr::value).collect(),
                        Site::range(b.span.open(), b.span.close()),
                    ));
                } else {
                    let v: Ident = input.parse()?;
                    if v != "none" {
                        return Err(syn::Error::new(
                            v.span(),
                            "expected `spawn = none` or a list of sub-tasks `spawn = [\"a\", \"b\"]`",
                        ));
                    }
                    def.spawn_none = Some(v.span());
                }
            }
            "max_parallel" => {
                let n: syn::LitInt = input.parse()?;
                def.max_parallel = Some((n.base10_parse()?, n.span()));
            }
            "reason" => {
                let s: LitStr = input.parse()?;
                def.reason = Some((s.value(), s.span()));
            }
            other => {
                return Err(syn::Error::new(
                    key.span(),
                    crate::words::unknown(
                        "concurrency setting",
                        other,
                        &["isolation", "spawn", "max_parallel", "reason"],
                    ),
                ));
            }
        }
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
    }
    Ok(def)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_lines_join_into_paragraphs() {
        let lines = [" One line", " and its tail.", "", " Second."].map(String::from);
        assert_eq!(join_doc_lines(&lines), "One line and its tail.\n\nSecond.");
    }
}
