//! The parser: `syn` over the token stream of one `ais! { ... }`, into the [`crate::ast`].
//!
//! Each construct has one function; attributes are read once per item and checked against the
//! attributes that item accepts, so a misplaced `#[cap(3)]` on a tool is an error at its name.

use crate::ast::*;
use ais_core::Value;
use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, Ident, Lit, LitStr, Path, Token, Visibility, braced, bracketed};

/// The DSL's keywords (everything else is an ordinary Rust token).
#[allow(missing_docs)]
pub mod kw {
    syn::custom_keyword!(program);
    syn::custom_keyword!(carries);
    syn::custom_keyword!(knowledge);
    syn::custom_keyword!(tool);
    syn::custom_keyword!(input);
    syn::custom_keyword!(command);
    syn::custom_keyword!(forbid);
}

impl Parse for File {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut programs = Vec::new();
        while !input.is_empty() {
            programs.push(input.parse()?);
        }
        if programs.is_empty() {
            return Err(input.error(
                "expected a program: `/// What it does.\\n program Name { ... }` inside `ais!`",
            ));
        }
        Ok(File { programs })
    }
}

/// Attributes read off an item: its doc comment and the rest, by name.
struct Attrs {
    doc: Option<Doc>,
    other: Vec<Attribute>,
}

impl Attrs {
    fn parse(input: ParseStream) -> syn::Result<Attrs> {
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
    fn only(&self, allowed: &[&str], what: &str) -> syn::Result<()> {
        for attr in &self.other {
            let name = attr
                .path()
                .get_ident()
                .map(Ident::to_string)
                .unwrap_or_default();
            if !allowed.contains(&name.as_str()) {
                let expected = if allowed.is_empty() {
                    "it takes none".to_owned()
                } else {
                    format!(
                        "expected one of {}",
                        allowed
                            .iter()
                            .map(|a| format!("`#[{a}(..)]`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                return Err(syn::Error::new(
                    attr.path().span(),
                    format!("unknown attribute on {what}; {expected}"),
                ));
            }
        }
        Ok(())
    }

    fn get(&self, name: &str) -> Option<&Attribute> {
        self.other.iter().find(|a| a.path().is_ident(name))
    }

    fn names(&self, name: &str) -> syn::Result<Option<(Span, Vec<Name>)>> {
        self.get(name)
            .map(|a| Ok((a.span(), a.parse_args_with(parse_names)?)))
            .transpose()
    }

    fn one_name(&self, name: &str) -> syn::Result<Option<Name>> {
        self.get(name)
            .map(|a| a.parse_args::<Ident>().map(|i| Name::from_ident(&i)))
            .transpose()
    }

    fn traces_to(&self) -> syn::Result<Option<Vec<Name>>> {
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

    fn concurrency(&self) -> syn::Result<Option<ConcurrencyDef>> {
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

fn parse_names(input: ParseStream) -> syn::Result<Vec<Name>> {
    let idents = Punctuated::<Ident, Token![,]>::parse_terminated(input)?;
    Ok(idents.iter().map(Name::from_ident).collect())
}

impl Parse for ProgramDef {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = Attrs::parse(input)?;
        attrs.only(&["concurrency"], "a program")?;
        let vis: Visibility = input.parse()?;
        let program_kw: kw::program = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected `program Name { ... }`: an `ais!` block holds programs",
            )
        })?;
        let ident: Ident = input.parse()?;
        let mut def = ProgramDef {
            doc: attrs.doc.clone(),
            vis,
            program_span: program_kw.span,
            ident,
            name: None,
            shape: None,
            standalone: None,
            agir_version: None,
            concurrency: attrs.concurrency()?,
            carries: Vec::new(),
            types: Vec::new(),
            knowledge: Vec::new(),
            tools: Vec::new(),
            instructions: Vec::new(),
            edges: Vec::new(),
        };
        if input.peek(syn::token::Paren) {
            let content;
            syn::parenthesized!(content in input);
            parse_header(&content, &mut def)?;
        }
        let body;
        braced!(body in input);
        while !body.is_empty() {
            parse_item(&body, &mut def)?;
        }
        Ok(def)
    }
}

/// `name = "...", shape = pipeline, standalone, agir_version = "0.1"`.
fn parse_header(input: ParseStream, def: &mut ProgramDef) -> syn::Result<()> {
    while !input.is_empty() {
        let key: Ident = input.parse()?;
        let key_text = key.to_string();
        if key_text == "standalone" && (input.is_empty() || input.peek(Token![,])) {
            def.standalone = Some((true, Site::one(key.span())));
        } else {
            input.parse::<Token![=]>()?;
            match key_text.as_str() {
                "name" => {
                    let s: LitStr = input.parse()?;
                    def.name = Some((s.value(), Site::one(s.span())));
                }
                "shape" => def.shape = Some(parse_word(input)?),
                "agir_version" => def.agir_version = Some(parse_word(input)?),
                "standalone" => {
                    let b: syn::LitBool = input.parse()?;
                    def.standalone = Some((b.value, Site::one(b.span)));
                }
                _ => {
                    return Err(syn::Error::new(
                        key.span(),
                        format!(
                            "unknown program setting `{key_text}`; expected `name`, `shape`, `standalone` or `agir_version`"
                        ),
                    ));
                }
            }
        }
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
    }
    Ok(())
}

/// A word: a string literal, a number, or identifiers joined by `-` (`dispatch-router`).
fn parse_word(input: ParseStream) -> syn::Result<(String, Site)> {
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

trait ParseAnyIdent {
    fn parse_any_ident(input: ParseStream) -> syn::Result<Ident>;
}

impl ParseAnyIdent for Ident {
    fn parse_any_ident(input: ParseStream) -> syn::Result<Ident> {
        syn::ext::IdentExt::parse_any(input)
    }
}

fn parse_item(input: ParseStream, def: &mut ProgramDef) -> syn::Result<()> {
    let attrs = Attrs::parse(input)?;
    if input.peek(kw::carries) && input.peek2(syn::token::Brace) {
        attrs.only(&[], "a `carries` block")?;
        input.parse::<kw::carries>()?;
        let content;
        braced!(content in input);
        while !content.is_empty() {
            def.carries.push(parse_carry(&content)?);
            if !content.is_empty() {
                content.parse::<Token![,]>()?;
            }
        }
        return Ok(());
    }
    if input.peek(Token![enum]) || input.peek(Token![struct]) {
        attrs.only(&[], "a declared type")?;
        def.types.push(parse_type_def(input, attrs.doc)?);
        return Ok(());
    }
    if input.peek(kw::knowledge) && input.peek2(Ident) {
        def.knowledge.push(parse_knowledge(input, &attrs)?);
        return Ok(());
    }
    if input.peek(kw::tool) && input.peek2(Ident) {
        def.tools.push(parse_tool(input, &attrs)?);
        return Ok(());
    }
    if input.peek(kw::forbid) && input.peek2(Ident) {
        let kw: kw::forbid = input.parse()?;
        attrs.only(&["traces_to"], "an edge")?;
        return parse_edges(input, &attrs, Some(kw.span), def);
    }
    if input.peek(Ident) && input.peek2(Token![:]) && !input.peek2(Token![::]) {
        def.instructions.push(parse_instruction(input, attrs)?);
        return Ok(());
    }
    if input.peek(Ident) && input.peek2(Token![->]) {
        attrs.only(&["traces_to"], "an edge")?;
        return parse_edges(input, &attrs, None, def);
    }
    Err(input.error(
        "expected a program item: `carries { .. }`, `enum`, `struct`, `knowledge`, `tool`, \
         an instruction `id: OPCODE(reads) -> writes;` or an edge `a -> b;`",
    ))
}

fn parse_carry(input: ParseStream) -> syn::Result<CarryDef> {
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

/// An AIS type expression: `str`, `list[str]`, `dict[str, int]`, `Verdict`.
pub(crate) fn parse_type_expr(input: ParseStream) -> syn::Result<TypeExpr> {
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
pub(crate) fn parse_value(input: ParseStream) -> syn::Result<ValueLit> {
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

fn parse_type_def(input: ParseStream, doc: Option<Doc>) -> syn::Result<TypeDef> {
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

fn parse_knowledge(input: ParseStream, attrs: &Attrs) -> syn::Result<KnowledgeDef> {
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

fn parse_tool(input: ParseStream, attrs: &Attrs) -> syn::Result<ToolDef> {
    attrs.only(&["surface", "serves", "traces_to"], "a tool")?;
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
        } else {
            ToolImpl::Path(input.parse()?)
        };
        input.parse::<Token![;]>()?;
        imp
    } else {
        input.parse::<Token![;]>().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected the tool's body `{ .. }`, `= path::to::function;`, `= command \"..\";`, \
                 or `;` for a built-in tool",
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
        params,
        params_span,
        ret,
        imp,
        tokens,
    })
}

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

fn parse_opcode(input: ParseStream) -> syn::Result<OpcodeTok> {
    let first: Ident = input.call(Ident::parse_any_ident).map_err(|e| {
        syn::Error::new(
            e.span(),
            "expected an opcode: GEN-ENUM, GEN-FILL, GEN-EDIT, GEN-RAW, SENSE, ACT, CODE, ROUTE, \
             LOOP, SPAWN, CALL or TERMINAL",
        )
    })?;
    let mut text = first.to_string();
    let mut end = first.span();
    while input.peek(Token![-]) && input.peek2(Ident) {
        input.parse::<Token![-]>()?;
        let next: Ident = input.call(Ident::parse_any_ident)?;
        text.push('-');
        text.push_str(&next.to_string());
        end = next.span();
    }
    Ok(OpcodeTok {
        text,
        site: Site::range(first.span(), end),
    })
}

fn parse_instruction(input: ParseStream, attrs: Attrs) -> syn::Result<InstrDef> {
    attrs.only(
        &[
            "output",
            "autonomy",
            "verdict",
            "cap",
            "counter",
            "concurrency",
            "op",
            "traces_to",
            "allow",
        ],
        "an instruction",
    )?;
    let id: Ident = input.parse()?;
    input.parse::<Token![:]>()?;
    let opcode = parse_opcode(input)?;
    let first = if input.peek(syn::token::Paren) {
        Some(input.parse::<Group>()?)
    } else {
        None
    };
    let mut tool = None;
    let mut target = None;
    if opcode.text == "CALL" && input.peek(LitStr) {
        let lit: LitStr = input.parse()?;
        let span = lit.span();
        target = Some((CallTarget::File(lit), Site::one(span)));
    } else if input.peek(Ident) {
        if opcode.text == "CALL" {
            let path: Path = input.parse()?;
            let first_span = path
                .segments
                .first()
                .map_or(path.span(), |s| s.ident.span());
            let last_span = path.segments.last().map_or(path.span(), |s| s.ident.span());
            target = Some((
                CallTarget::Program(path),
                Site::range(first_span, last_span),
            ));
        } else {
            let t: Ident = input.parse()?;
            tool = Some(Name::from_ident(&t));
        }
    }
    let second = if input.peek(syn::token::Paren) {
        Some(input.parse::<Group>()?)
    } else {
        None
    };
    let named = tool.is_some() || target.is_some();
    let (mods, reads) = match (first, second) {
        (Some(m), Some(r)) => (Some(m), Some(r)),
        (Some(g), None) if named => (Some(g), None),
        (Some(g), None) => (None, Some(g)),
        (None, r) => (None, r),
    };
    let modifiers = match &mods {
        Some(g) => syn::parse::Parser::parse2(parse_names, g.stream())?
            .into_iter()
            .map(|name| Modifier { name })
            .collect(),
        None => Vec::new(),
    };
    let reads_span = reads.as_ref().map(Group::span);
    let reads = match &reads {
        Some(g) => syn::parse::Parser::parse2(parse_names, g.stream())?,
        None => Vec::new(),
    };
    let writes = if input.peek(Token![->]) {
        input.parse::<Token![->]>()?;
        if input.peek(syn::token::Paren) {
            let g: Group = input.parse()?;
            syn::parse::Parser::parse2(parse_names, g.stream())?
        } else {
            let w: Ident = input.parse()?;
            vec![Name::from_ident(&w)]
        }
    } else {
        Vec::new()
    };
    let body = if input.peek(Token![=]) {
        let eq: Token![=] = input.parse()?;
        let tokens = tokens_until_semi(input)?;
        let site = site_of(&tokens).unwrap_or(Site::one(eq.span));
        Some((tokens, site))
    } else {
        None
    };
    // A missing `;` is reported at the instruction's last token, not at whatever follows it
    // (usually the next instruction's id, a line further down).
    let (last_span, last_text) = match (&body, writes.last()) {
        (Some((_, site)), _) => (site.end, "the body".to_owned()),
        (None, Some(w)) => (w.span, format!("`{}`", w.text)),
        (None, None) => match (reads_span, &tool) {
            (Some(span), _) => (span, "the operands".to_owned()),
            (None, Some(t)) => (t.span, format!("`{}`", t.text)),
            (None, None) => (opcode.site.end, format!("`{}`", opcode.text)),
        },
    };
    let end = input
        .parse::<Token![;]>()
        .map_err(|_| {
            syn::Error::new(
                last_span,
                format!(
                    "expected `;` after {last_text} to end the instruction `{id}` \
                     (`id: OPCODE tool(reads) -> writes;`)"
                ),
            )
        })?
        .span;
    let output = attrs
        .get("output")
        .map(|a| a.parse_args_with(parse_type_expr))
        .transpose()?;
    let cap = attrs
        .get("cap")
        .map(|a| {
            a.parse_args::<syn::LitInt>()
                .and_then(|l| Ok((l.base10_parse::<i64>()?, l.span())))
        })
        .transpose()?;
    Ok(InstrDef {
        doc: attrs.doc.clone(),
        id: Name::from_ident(&id),
        opcode,
        modifiers,
        tool,
        target,
        reads,
        reads_span,
        writes,
        body,
        output,
        autonomy: attrs.names("autonomy")?,
        verdict: attrs.one_name("verdict")?,
        cap,
        counter: attrs.one_name("counter")?,
        concurrency: attrs.concurrency()?,
        op: attrs.one_name("op")?,
        traces_to: attrs.traces_to()?,
        allow: attrs.names("allow")?,
        attr_names: attrs
            .other
            .iter()
            .filter_map(|a| a.path().get_ident().map(|i| (i.to_string(), i.span())))
            .collect(),
        end,
    })
}

/// The token trees from `begin` up to (not including) `end`.
fn raw_between(begin: syn::buffer::Cursor, end: syn::buffer::Cursor) -> TokenStream {
    let mut out = TokenStream::new();
    let mut cur = begin;
    while cur != end {
        match cur.token_tree() {
            Some((tt, next)) => {
                out.extend([tt]);
                cur = next;
            }
            None => break,
        }
    }
    out
}

/// The tokens up to (not including) the next top-level `;`.
fn tokens_until_semi(input: ParseStream) -> syn::Result<TokenStream> {
    input.step(|cursor| {
        let mut rest = *cursor;
        let mut out = TokenStream::new();
        while let Some((tt, next)) = rest.token_tree() {
            if let TokenTree::Punct(p) = &tt
                && p.as_char() == ';'
            {
                return Ok((out, rest));
            }
            out.extend([tt]);
            rest = next;
        }
        Ok((out, rest))
    })
}

/// The site from a token stream's first token to its last.
pub(crate) fn site_of(tokens: &TokenStream) -> Option<Site> {
    let mut iter = tokens.clone().into_iter();
    let first = iter.next()?;
    let last = iter.last().unwrap_or_else(|| first.clone());
    let end = match &last {
        TokenTree::Group(g) if g.delimiter() != Delimiter::None => g.span_close(),
        other => other.span(),
    };
    let start = match &first {
        TokenTree::Group(g) if g.delimiter() != Delimiter::None => g.span_open(),
        other => other.span(),
    };
    Some(Site::range(start, end))
}

fn parse_edges(
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
                    format!(
                        "unknown concurrency setting `{other}`; expected `isolation`, `spawn`, `max_parallel` or `reason`"
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
