//! The program: its header `program Name (name = "..", shape = .., standalone)` and its body,
//! dispatched item by item to the parsers of carries, types, knowledge, tools, instructions
//! and edges.

use super::attrs::Attrs;
use super::edges::parse_edges;
use super::instruction::parse_instruction;
use super::items::{parse_carry, parse_knowledge, parse_tool, parse_type_def};
use super::kw;
use super::values::parse_word;
use crate::ast::*;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitStr, Token, Visibility, braced};

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
            mcp_servers: Vec::new(),
            mcp_lock: None,
            instructions: Vec::new(),
            edges: Vec::new(),
            obligations: Vec::new(),
            source: None,
            deviations: Vec::new(),
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
                "mcp_lock" => {
                    let s: LitStr = input.parse()?;
                    def.mcp_lock = Some((s.value(), Site::one(s.span())));
                }
                "agir_version" => def.agir_version = Some(parse_word(input)?),
                "standalone" => {
                    let b: syn::LitBool = input.parse()?;
                    def.standalone = Some((b.value, Site::one(b.span)));
                }
                _ => {
                    return Err(syn::Error::new(
                        key.span(),
                        crate::words::unknown(
                            "program setting",
                            &key_text,
                            &["name", "shape", "standalone", "agir_version", "mcp_lock"],
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

/// One item of the program's body, told apart by its first tokens.
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
    if input.peek(kw::mcp_server) && input.peek2(Ident) {
        attrs.only(&[], "an MCP server")?;
        def.mcp_servers
            .push(super::mcp::parse_mcp_server(input, attrs.doc)?);
        return Ok(());
    }
    if input.peek(kw::obligation) && input.peek2(Ident) {
        attrs.only(&[], "an obligation")?;
        def.obligations
            .push(super::obligation::parse_obligation(input)?);
        return Ok(());
    }
    if input.peek(kw::source) && input.peek2(syn::token::Brace) {
        attrs.only(&[], "the source")?;
        let source = super::obligation::parse_source(input)?;
        if def.source.is_some() {
            return Err(syn::Error::new(
                source.keyword,
                "a program is lifted from one source; `source { .. }` is given twice",
            ));
        }
        def.source = Some(source);
        return Ok(());
    }
    if input.peek(kw::deviation) && input.peek2(syn::token::Brace) {
        attrs.only(&[], "an accepted deviation")?;
        def.deviations
            .push(super::obligation::parse_deviation(input)?);
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
    let message = "expected a program item: `carries { .. }`, `enum`, `struct`, `knowledge`, \
         `tool`, `mcp_server`, `obligation`, `source { .. }`, `deviation { .. }`, an instruction \
         `id: OPCODE(reads) -> writes;` or an edge `a -> b;`"
        .to_owned();
    // A misspelled item keyword (`carrise { .. }`, `toool f(..)`) is offered the keyword.
    let message = match input.fork().call(Ident::parse_any) {
        Ok(word) => crate::words::suggest(message, &word.to_string(), ITEM_KEYWORDS),
        Err(_) => message,
    };
    Err(input.error(message))
}

/// The keywords that begin a program item.
const ITEM_KEYWORDS: &[&str] = &[
    "carries",
    "enum",
    "struct",
    "knowledge",
    "tool",
    "mcp_server",
    "obligation",
    "source",
    "deviation",
    "forbid",
];
