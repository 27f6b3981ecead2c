//! Reading the `mcp_servers` section and a tool's `mcp` binding ([`crate::program::McpServer`],
//! [`crate::program::McpBinding`]). Unknown fields go to each element's `extra`.

use super::read::{Path, R, fields, named, opt_text, text, wrong};
use super::tree::{Kind, Node};
use crate::program::{McpBinding, McpServer};

/// `mcp_servers`: name → `{command, args, env, cwd, url, doc}`, in any of the three spellings
/// of a name-keyed section.
pub(crate) fn servers(node: &Node) -> R<Vec<McpServer>> {
    let mut out = Vec::new();
    for n in named(node, "mcp_servers")? {
        let mut s = McpServer {
            name: n.name.clone(),
            ..McpServer::default()
        };
        for (key, value) in n.fields {
            let p = Path(&n.path, key);
            match key {
                "command" => s.command = opt_text(value, p)?,
                "args" => s.args = Some(texts(value, p)?),
                "env" => s.env = Some(env(value, p)?),
                "cwd" => s.cwd = opt_text(value, p)?,
                "url" => s.url = opt_text(value, p)?,
                "doc" => s.doc = opt_text(value, p)?,
                _ => s.extra.push((key.to_owned(), value.to_value()?)),
            }
        }
        out.push(s);
    }
    Ok(out)
}

/// A tool's `mcp`: `{server: NAME, tool: NAME}` (`tool` optional), or the server's name alone.
pub(crate) fn binding(node: &Node, path: &str) -> R<Option<McpBinding>> {
    if node.is_null() {
        return Ok(None);
    }
    if let Kind::Scalar(..) = node.kind {
        return Ok(Some(McpBinding {
            server: text(node, path)?,
            ..McpBinding::default()
        }));
    }
    let mut b = McpBinding::default();
    let mut server = None;
    for (key, value) in fields(node, path, "a mapping `{server: NAME, tool: NAME}`")? {
        let p = Path(path, key);
        match key {
            "server" => server = opt_text(value, p)?,
            "tool" => b.tool = opt_text(value, p)?,
            _ => b.extra.push((key.to_owned(), value.to_value()?)),
        }
    }
    b.server = server.ok_or_else(|| {
        wrong(
            path,
            node,
            "a mapping with a `server`",
            format!("name the server from `mcp_servers`: `{path}: {{server: NAME}}`"),
        )
    })?;
    Ok(Some(b))
}

/// A list of texts (`[-y, pkg]`); a single text is a one-element list.
fn texts(node: &Node, path: Path<'_>) -> R<Vec<String>> {
    match &node.kind {
        _ if node.is_null() => Ok(Vec::new()),
        Kind::Scalar(..) => Ok(vec![text(node, path)?]),
        Kind::Seq(items) => items
            .iter()
            .enumerate()
            .map(|(j, item)| text(item, format!("{path}[{j}]")))
            .collect(),
        Kind::Map(_) => Err(wrong(
            path,
            node,
            "a list of arguments",
            format!("write `{path}` as a list: `[-y, some-package]`"),
        )),
    }
}

/// `env`: a mapping of variable name → text.
fn env(node: &Node, path: Path<'_>) -> R<Vec<(String, String)>> {
    fields(node, path, "a mapping of variable name → value")?
        .into_iter()
        .map(|(k, v)| Ok((k.to_owned(), text(v, format!("{path}.{k}"))?)))
        .collect()
}
