//! The parser: `syn` over the token stream of one `ais! { ... }`, into the [`crate::ast`].
//!
//! Each construct has one function; attributes are read once per item and checked against the
//! attributes that item accepts, so a misplaced `#[cap(3)]` on a tool is an error at its name.
//!
//! The files follow the grammar: `program` (the `program Name (..) { .. }` header and the
//! dispatch over its items), `items` (carries, declared types, knowledge, tools), `instruction`
//! (`id: OPCODE tool(reads) -> writes = body;` with its attributes), `edges` (`a -> b if g;`,
//! `forbid a -> b;`), `attrs` (an item's doc comment and `#[..]` attributes), and the shared
//! pieces: `values` (words, type expressions, literal values) and `tokens` (any identifier, raw
//! token runs and their sites).

mod attrs;
mod edges;
mod instruction;
mod items;
mod mcp;
mod obligation;
mod program;
mod tokens;
mod values;

use crate::ast::File;
use syn::parse::{Parse, ParseStream};

pub(crate) use tokens::site_of;

/// The DSL's keywords (everything else is an ordinary Rust token).
#[allow(missing_docs)]
pub mod kw {
    syn::custom_keyword!(program);
    syn::custom_keyword!(carries);
    syn::custom_keyword!(knowledge);
    syn::custom_keyword!(tool);
    syn::custom_keyword!(input);
    syn::custom_keyword!(command);
    syn::custom_keyword!(mcp);
    syn::custom_keyword!(mcp_server);
    syn::custom_keyword!(forbid);
    syn::custom_keyword!(obligation);
    syn::custom_keyword!(source);
    syn::custom_keyword!(deviation);
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
