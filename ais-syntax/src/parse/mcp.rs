//! MCP items: `mcp_server name { .. }` and a tool's `= mcp(server, "tool")`.

use crate::ast::{Doc, McpServerDef, ToolImpl};
use syn::parse::ParseStream;
use syn::punctuated::Punctuated;
use syn::{Ident, LitStr, Token, braced, bracketed};

/// `mcp_server name { command: "..", args: [".."], env: {"K": "v"}, cwd: "..", url: ".." }`
/// (the fields in any order, each at most once, commas between).
pub(super) fn parse_mcp_server(input: ParseStream, doc: Option<Doc>) -> syn::Result<McpServerDef> {
    input.parse::<super::kw::mcp_server>()?;
    let name: Ident = input.parse()?;
    let mut def = McpServerDef {
        doc,
        name,
        command: None,
        args: None,
        env: None,
        cwd: None,
        url: None,
    };
    let content;
    braced!(content in input);
    while !content.is_empty() {
        let key: Ident = content.parse()?;
        content.parse::<Token![:]>()?;
        let k = key.to_string();
        let taken = match k.as_str() {
            "command" => def.command.replace(content.parse()?).is_some(),
            "cwd" => def.cwd.replace(content.parse()?).is_some(),
            "url" => def.url.replace(content.parse()?).is_some(),
            "args" => {
                let list;
                bracketed!(list in content);
                let args = Punctuated::<LitStr, Token![,]>::parse_terminated(&list)?;
                def.args.replace(args.into_iter().collect()).is_some()
            }
            "env" => {
                let map;
                braced!(map in content);
                let mut env = Vec::new();
                while !map.is_empty() {
                    let k: LitStr = map.parse()?;
                    map.parse::<Token![:]>()?;
                    env.push((k, map.parse()?));
                    if !map.is_empty() {
                        map.parse::<Token![,]>()?;
                    }
                }
                def.env.replace(env).is_some()
            }
            _ => {
                return Err(syn::Error::new(
                    key.span(),
                    crate::words::unknown(
                        "MCP server field",
                        &k,
                        &["command", "args", "env", "cwd", "url"],
                    ),
                ));
            }
        };
        if taken {
            return Err(syn::Error::new(key.span(), format!("`{k}` is given twice")));
        }
        if !content.is_empty() {
            content.parse::<Token![,]>()?;
        }
    }
    Ok(def)
}

/// `(server)` or `(server, "tool")` after a tool's `= mcp`.
pub(super) fn parse_mcp_tool(input: ParseStream) -> syn::Result<ToolImpl> {
    let args;
    syn::parenthesized!(args in input);
    let server: Ident = args.parse()?;
    let tool = if args.is_empty() {
        None
    } else {
        args.parse::<Token![,]>()?;
        let t: LitStr = args.parse()?;
        if !args.is_empty() {
            args.parse::<Token![,]>()?;
        }
        Some(t)
    };
    if !args.is_empty() {
        return Err(args.error("expected `mcp(server)` or `mcp(server, \"tool\")`"));
    }
    Ok(ToolImpl::Mcp { server, tool })
}
