//! The program's declarations: the `carries { .. }` block's carries, declared types (`enum`,
//! `struct`), `knowledge` items, and `tool`s with their parameters, return type and body.

use super::attrs::Attrs;
use super::kw;
use super::tokens::{ParseAnyIdent, raw_between};
use super::values::{parse_type_expr, parse_value};
use crate::ast::*;
use proc_macro2::{Group, TokenTree};
use quote::ToTokens;
use syn::parse::ParseStream;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Ident, Token, braced};

/// One carry in `carries { .. }`: `/// doc` `name: type`, then `= input`, `= input(default)`
/// (an input with a declared default: the run uses it when the caller gives none) or
/// `= default`.
pub(super) fn parse_carry(input: ParseStream) -> syn::Result<CarryDef> {
    let attrs = Attrs::parse(input)?;
    attrs.only(&["traces_to"], "a carry")?;
    let name: Ident = input.parse()?;
    input.parse::<Token![:]>()?;
    let ty = parse_type_expr(input)?;
    let mut input_kw = None;
    let mut default = None;
    if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        if input.peek(kw::input) {
            input_kw = Some(input.parse::<kw::input>()?.span);
            if input.peek(syn::token::Paren) {
                let content;
                syn::parenthesized!(content in input);
                default = Some(parse_value(&content)?);
                if !content.is_empty() {
                    return Err(content.error(
                        "an input's default is one value: `= input(5)`, `= input(\"text\")`",
                    ));
                }
            }
        } else {
            default = Some(parse_value(input)?);
        }
    }
    Ok(CarryDef {
        doc: attrs.doc.clone(),
        name: Name::from_ident(&name),
        ty,
        input: input_kw,
        default,
        traces_to: attrs.traces_to()?,
    })
}

/// A declared type: `enum Name { member, .. }` or `struct Name { field: type = default, .. }`.
pub(super) fn parse_type_def(input: ParseStream, doc: Option<Doc>) -> syn::Result<TypeDef> {
    let is_enum = input.peek(Token![enum]);
    let keyword = if is_enum {
        input.parse::<Token![enum]>()?.span
    } else {
        input.parse::<Token![struct]>()?.span
    };
    let name: Ident = input.parse()?;
    let content;
    braced!(content in input);
    let body = if is_enum {
        let mut members = Vec::new();
        while !content.is_empty() {
            let attrs = Attrs::parse(&content)?;
            attrs.only(&[], "an enum member")?;
            let member: Ident = content.call(Ident::parse_any_ident)?;
            members.push((attrs.doc, Name::from_ident(&member)));
            if !content.is_empty() {
                content.parse::<Token![,]>()?;
            }
        }
        TypeBody::Enum(members)
    } else {
        let mut fields = Vec::new();
        while !content.is_empty() {
            let attrs = Attrs::parse(&content)?;
            attrs.only(&[], "an object field")?;
            let field: Ident = content.call(Ident::parse_any_ident)?;
            content.parse::<Token![:]>()?;
            let ty = parse_type_expr(&content)?;
            let default = if content.peek(Token![=]) {
                content.parse::<Token![=]>()?;
                Some(parse_value(&content)?)
            } else {
                None
            };
            fields.push(FieldDef {
                doc: attrs.doc,
                name: Name::from_ident(&field),
                ty,
                default,
            });
            if !content.is_empty() {
                content.parse::<Token![,]>()?;
            }
        }
        TypeBody::Object(fields)
    };
    Ok(TypeDef {
        doc,
        name: Name::from_ident(&name),
        keyword,
        body,
    })
}

/// `knowledge name: kind = "content";`, with `#[resident_on(..)]` and `#[traces_to(..)]`.
pub(super) fn parse_knowledge(input: ParseStream, attrs: &Attrs) -> syn::Result<KnowledgeDef> {
    attrs.only(&["resident_on", "traces_to"], "a knowledge item")?;
    if let Some(doc) = &attrs.doc {
        return Err(syn::Error::new(
            doc.site.start,
            "a knowledge item has no doc: its content is what the model reads; put the text in the item",
        ));
    }
    let keyword = input.parse::<kw::knowledge>()?.span;
    let name: Ident = input.parse()?;
    let kind = if input.peek(Token![:]) {
        input.parse::<Token![:]>()?;
        let k: Ident = input.call(Ident::parse_any_ident)?;
        Some(Name::from_ident(&k))
    } else {
        None
    };
    input.parse::<Token![=]>()?;
    let content = parse_value(input)?;
    input.parse::<Token![;]>()?;
    Ok(KnowledgeDef {
        name: Name::from_ident(&name),
        keyword,
        resident_on: attrs.names("resident_on")?,
        kind,
        content,
        traces_to: attrs.traces_to()?,
    })
}

/// `tool name(params) -> Ret` with an inline `{ .. }` body, `= path;`, `= command "..";`,
/// `= python "..";` (a body in another language; `= "..";` a body with no `lang`), or `;` for
/// a built-in; the tokens are kept
/// as written for the tool's text.
pub(super) fn parse_tool(input: ParseStream, attrs: &Attrs) -> syn::Result<ToolDef> {
    attrs.only(&["surface", "serves", "traces_to", "idempotent"], "a tool")?;
    let keyword = input.parse::<kw::tool>()?.span;
    let ident: Ident = input.parse()?;
    let mut tokens = ident.to_token_stream();
    let (params, params_span) = if input.peek(syn::token::Paren) {
        let group: Group = input.parse()?;
        group.to_tokens(&mut tokens);
        let params = syn::parse::Parser::parse2(
            |i: ParseStream| {
                Punctuated::<ParamDef, Token![,]>::parse_terminated_with(i, parse_param)
            },
            group.stream(),
        )?;
        (params.into_iter().collect(), group.span())
    } else {
        (Vec::new(), ident.span())
    };
    // The tokens are kept as written (not re-printed by syn, which loses the closing spans of
    // groups), so the body's text can be laid out from their positions.
    let ret = if input.peek(Token![->]) {
        let begin = input.cursor();
        input.parse::<Token![->]>()?;
        let ty: syn::Type = input.parse()?;
        tokens.extend(raw_between(begin, input.cursor()));
        Some(ty)
    } else {
        None
    };
    let imp = if input.peek(syn::token::Brace) {
        let group: Group = input.parse()?;
        let block: syn::Block = syn::parse2(group.to_token_stream())?;
        tokens.extend([TokenTree::Group(group)]);
        ToolImpl::Inline(Box::new(block))
    } else if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        let imp = if input.peek(kw::command) {
            input.parse::<kw::command>()?;
            ToolImpl::Command(input.parse()?)
        } else if input.peek(kw::mcp) && input.peek2(syn::token::Paren) {
            input.parse::<kw::mcp>()?;
            super::mcp::parse_mcp_tool(input)?
        } else if input.peek(Ident) && input.peek2(syn::LitStr) {
            let lang: Ident = input.parse()?;
            if lang == "rust" {
                return Err(syn::Error::new(
                    lang.span(),
                    "a Rust tool is written with its body in braces: \
                     `tool name(x: &str) -> String { .. }`, or `= path::to::function;`",
                ));
            }
            ToolImpl::Script {
                lang: Some(lang),
                body: input.parse()?,
            }
        } else if input.peek(syn::LitStr) {
            ToolImpl::Script {
                lang: None,
                body: input.parse()?,
            }
        } else {
            let path: syn::Path = input.parse()?;
            if let Some(lang) = path.get_ident()
                && !input.peek(Token![;])
            {
                return Err(input.error(format!(
                    "expected `;` after `{lang}`; a tool's body in another language is a string \
                     literal: `= {lang} r#\"def run(..): ..\"#;`"
                )));
            }
            ToolImpl::Path(path)
        };
        input.parse::<Token![;]>()?;
        imp
    } else {
        input.parse::<Token![;]>().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected the tool's body `{ .. }`, `= path::to::function;`, `= command \"..\";`, \
                 `= python \"..\";`, `= mcp(server, \"tool\");`, or `;` for a built-in tool",
            )
        })?;
        ToolImpl::Builtin
    };
    let surface = attrs
        .get("surface")
        .map(|a| {
            let span = a.span();
            a.parse_args_with(|i: ParseStream| {
                let words = Punctuated::<Ident, Token![,]>::parse_terminated(i)?;
                Ok(words
                    .iter()
                    .map(Ident::to_string)
                    .collect::<Vec<_>>()
                    .join(" "))
            })
            .map(|text| (text, Site::one(span)))
        })
        .transpose()?;
    Ok(ToolDef {
        doc: attrs.doc.clone(),
        keyword,
        ident,
        surface,
        serves: attrs.names("serves")?.map(|(_, n)| n),
        traces_to: attrs.traces_to()?,
        idempotent: attrs.flag("idempotent")?,
        params,
        params_span,
        ret,
        imp,
        tokens,
    })
}

/// A tool parameter: `name` or `name: Type`.
fn parse_param(input: ParseStream) -> syn::Result<ParamDef> {
    let name: Ident = input.parse()?;
    let ty = if input.peek(Token![:]) {
        input.parse::<Token![:]>()?;
        Some(input.parse()?)
    } else {
        None
    };
    Ok(ParamDef { name, ty })
}
