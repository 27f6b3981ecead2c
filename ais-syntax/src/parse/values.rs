//! The shared pieces of the grammar that hold a value: a word (`dispatch-router`, `"0.1"`), an
//! AIS type expression (`dict[str, int]`), and a literal value (`["a", "b"]`, `Verdict::ok`).

use super::tokens::ParseAnyIdent;
use crate::ast::*;
use ais_core::Value;
use syn::parse::ParseStream;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Ident, Lit, LitStr, Path, Token, braced, bracketed};

/// A word: a string literal, a number, or identifiers joined by `-` (`dispatch-router`).
pub(super) fn parse_word(input: ParseStream) -> syn::Result<(String, Site)> {
    if input.peek(LitStr) {
        let s: LitStr = input.parse()?;
        return Ok((s.value(), Site::one(s.span())));
    }
    if input.peek(syn::LitFloat) {
        let f: syn::LitFloat = input.parse()?;
        return Ok((f.base10_digits().to_owned(), Site::one(f.span())));
    }
    let first: Ident = input.call(Ident::parse_any_ident)?;
    let mut text = first.to_string();
    let mut end = first.span();
    while input.peek(Token![-]) {
        input.parse::<Token![-]>()?;
        let next: Ident = input.call(Ident::parse_any_ident)?;
        text.push('-');
        text.push_str(&next.to_string());
        end = next.span();
    }
    Ok((text, Site::range(first.span(), end)))
}

/// An AIS type expression: `str`, `list[str]`, `dict[str, int]`, `Verdict`.
pub(super) fn parse_type_expr(input: ParseStream) -> syn::Result<TypeExpr> {
    let head: Ident = input.call(Ident::parse_any_ident)?;
    let mut text = head.to_string();
    let mut end = head.span();
    if input.peek(syn::token::Bracket) {
        let content;
        let bracket = bracketed!(content in input);
        let inner =
            Punctuated::<TypeExpr, Token![,]>::parse_terminated_with(&content, parse_type_expr)?;
        let parts: Vec<&str> = inner.iter().map(|t| t.text.as_str()).collect();
        text = format!("{text}[{}]", parts.join(", "));
        end = bracket.span.close();
    }
    Ok(TypeExpr {
        text,
        site: Site::range(head.span(), end),
    })
}

/// A literal value: a string, a number, `true`/`false`, `None`, a list `[..]`, a map
/// `{"k": v}`, or an enum member `Type::member` (held as its name).
pub(super) fn parse_value(input: ParseStream) -> syn::Result<ValueLit> {
    let start = input.span();
    if input.peek(syn::token::Bracket) {
        let content;
        let bracket = bracketed!(content in input);
        let items =
            Punctuated::<ValueLit, Token![,]>::parse_terminated_with(&content, parse_value)?;
        return Ok(ValueLit {
            value: Value::List(items.into_iter().map(|v| v.value).collect()),
            site: Site::range(start, bracket.span.close()),
        });
    }
    if input.peek(syn::token::Brace) {
        let content;
        let brace = braced!(content in input);
        let mut map = indexmap::IndexMap::new();
        while !content.is_empty() {
            let key: LitStr = content.parse()?;
            content.parse::<Token![:]>()?;
            map.insert(key.value(), parse_value(&content)?.value);
            if !content.is_empty() {
                content.parse::<Token![,]>()?;
            }
        }
        return Ok(ValueLit {
            value: Value::Map(map),
            site: Site::range(start, brace.span.close()),
        });
    }
    let negative = input.peek(Token![-]);
    if negative {
        input.parse::<Token![-]>()?;
    }
    if input.peek(Ident) && !negative {
        let path: Path = input.parse()?;
        let last = path.segments.last().map(|s| s.ident.to_string());
        let value = match (path.segments.len(), last.as_deref()) {
            (1, Some("None")) => Value::Null,
            (n, Some(member)) if n >= 2 => Value::Str(member.to_owned()),
            _ => {
                return Err(syn::Error::new(
                    path.span(),
                    "expected a value: a literal, `None`, `[..]`, or an enum member `Type::member`",
                ));
            }
        };
        return Ok(ValueLit {
            value,
            site: Site::range(start, path.span()),
        });
    }
    let lit: Lit = input.parse()?;
    let span = lit.span();
    let value = match &lit {
        Lit::Str(s) if !negative => Value::Str(s.value()),
        Lit::Int(i) => {
            let v: i64 = i.base10_parse()?;
            Value::Int(if negative { -v } else { v })
        }
        Lit::Float(f) => {
            let v: f64 = f.base10_parse()?;
            Value::Float(if negative { -v } else { v })
        }
        Lit::Bool(b) if !negative => Value::Bool(b.value),
        _ => {
            return Err(syn::Error::new(
                span,
                "expected a value: a string, a number, `true`/`false`, `None`, `[..]` or `{..}`",
            ));
        }
    };
    Ok(ValueLit {
        value,
        site: Site::range(start, span),
    })
}
