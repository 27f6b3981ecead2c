//! M1–M2: MCP bindings, checked offline against the lock ([`crate::mcp::Lock`]); no server
//! is started. One function for both front ends: `ais check` and the `ais!` macro call
//! [`check_mcp`](super::check_mcp).

use super::index::{Index, ToolRef};
use crate::diag::{CheckId, Finding, Severity};
use crate::mcp::{Lock, ToolSchema};
use crate::program::{Opcode, Program, ToolSurface};
use crate::source::{Element, Locus};
use crate::suggest::did_you_mean;

/// Every M finding of `program`, unplaced. Nothing when it binds no tool to a server.
pub(super) fn findings(program: &Program, lock: Option<&Lock>) -> Vec<Finding> {
    let mut out = Vec::new();
    if !program.tool_list().iter().any(|t| t.mcp.is_some()) {
        return out;
    }
    servers_declared_right(program, &mut out);
    if lock.is_none()
        && let Some(t) = program.tool_list().iter().position(|t| t.mcp.is_some())
    {
        out.push(Finding::new(
            CheckId::M1,
            Severity::Warn,
            Locus::field(Element::Tool(t), "mcp"),
            "there is no MCP lock file, so the server tools' names and parameters are not checked; run `ais mcp lock PROGRAM` to record them",
        ));
    }
    let ix = Index::new(program);
    for (t, tool) in program.tool_list().iter().enumerate() {
        let Some(m) = &tool.mcp else { continue };
        let locus = Locus::field(Element::Tool(t), "mcp");
        let servers = program.mcp_server_list();
        if !servers.iter().any(|s| s.name == m.server) {
            let names = servers.iter().map(|s| s.name.as_str());
            out.push(
                Finding::new(
                    CheckId::M1,
                    Severity::Error,
                    locus,
                    format!(
                        "tool `{}` is bound to MCP server `{}`, which `mcp_servers` does not declare",
                        tool.name, m.server
                    ),
                )
                .with_suggestions(did_you_mean(&m.server, names)),
            );
            continue;
        }
        let remote = m.remote(&tool.name);
        let Some(lock) = lock else {
            continue;
        };
        let Some(locked) = lock.tool(&m.server, remote) else {
            let known = lock.servers.get(&m.server);
            let message = match known {
                Some(_) => format!(
                    "MCP server `{}` has no tool `{remote}` (as locked); tool `{}` cannot be called",
                    m.server, tool.name
                ),
                None => format!(
                    "the lock has no entry for MCP server `{}`; run `ais mcp lock PROGRAM` to record its tools",
                    m.server
                ),
            };
            let names = known.into_iter().flat_map(|k| k.keys().map(String::as_str));
            out.push(
                Finding::new(CheckId::M1, Severity::Error, locus, message)
                    .with_suggestions(did_you_mean(remote, names)),
            );
            continue;
        };
        params_match(&tool.name, tool.sig.as_deref(), &locked.schema, t, &mut out);
        sense_is_read_only(&ix, t, remote, &m.server, &locked.schema, &mut out);
    }
    out
}

/// M1: each server declares exactly one of `command` (stdio) and `url` (streamable HTTP).
fn servers_declared_right(program: &Program, out: &mut Vec<Finding>) {
    for s in program.mcp_server_list() {
        let given = |v: &Option<String>| v.as_deref().is_some_and(|c| !c.trim().is_empty());
        let problem = match (given(&s.command), given(&s.url)) {
            (true, true) => "declares both `command` and `url`; a server is one or the other",
            (false, false) => {
                "declares neither `command` (a stdio server) nor `url` (streamable HTTP)"
            }
            _ => continue,
        };
        out.push(Finding::new(
            CheckId::M1,
            Severity::Error,
            Locus::field(Element::Program, "mcp_servers"),
            format!("MCP server `{}` {problem}", s.name),
        ));
    }
}

/// M1: an author-written `sig` names only properties of the locked `inputSchema`, and leaves
/// out none it requires.
fn params_match(
    tool: &str,
    sig: Option<&str>,
    schema: &ToolSchema,
    t: usize,
    out: &mut Vec<Finding>,
) {
    let props: Vec<&str> = schema.properties().into_iter().map(|(k, _)| k).collect();
    let locus = Locus::field(Element::Tool(t), "sig");
    let Some(Ok(sig)) = sig.map(crate::sig::parse) else {
        for r in schema.required() {
            if !crate::mcp::is_param_name(r) {
                out.push(Finding::new(
                    CheckId::M1,
                    Severity::Error,
                    Locus::field(Element::Tool(t), "mcp"),
                    format!("tool `{tool}`: the server requires parameter `{r}`, whose name no carry can bind"),
                ));
            }
        }
        return;
    };
    for p in &sig.params {
        if !props.contains(&p.name.as_str()) {
            out.push(
                Finding::new(
                    CheckId::M1,
                    Severity::Error,
                    locus.clone(),
                    format!(
                        "tool `{tool}` has parameter `{}`, which the server's (locked) input schema does not have; its parameters are: {}",
                        p.name,
                        if props.is_empty() { "none".to_owned() } else { props.join(", ") }
                    ),
                )
                .with_suggestions(did_you_mean(&p.name, props.iter().copied())),
            );
        }
    }
    for r in schema.required() {
        if !sig.params.iter().any(|p| p.name == r) {
            out.push(Finding::new(
                CheckId::M1,
                Severity::Error,
                locus.clone(),
                format!(
                    "tool `{tool}`: the server requires parameter `{r}`, which its `sig` leaves out"
                ),
            ));
        }
    }
}

/// M2 (§4.2.1): a SENSE (an instruction, or a tool declared `surface: SENSE`) bound to a server
/// tool the server does not mark `readOnlyHint: true`.
fn sense_is_read_only(
    ix: &Index,
    t: usize,
    remote: &str,
    server: &str,
    schema: &ToolSchema,
    out: &mut Vec<Finding>,
) {
    if schema.is_read_only() {
        return;
    }
    let Some(tool) = ix.tool_at(t) else { return };
    let sense_users: Vec<usize> = (0..ix.p.instructions().len())
        .filter(|&i| {
            ix.node(i).is_some_and(|n| n.opcode == Opcode::Sense)
                && ix
                    .binding
                    .get(i)
                    .is_some_and(|b| b.pipeline.contains(&ToolRef::Declared(t)))
        })
        .collect();
    let why = "a SENSE must not mutate (§4.2.1); bind an ACT to it, or a read-only tool";
    for i in &sense_users {
        let id = ix.node(*i).map(|n| n.id.clone()).unwrap_or_default();
        out.push(
            Finding::new(
                CheckId::M2,
                Severity::Warn,
                Locus::element(Element::Instruction(*i)),
                format!(
                    "SENSE `{id}` calls `{}`, bound to `{server}`'s tool `{remote}`, which the server does not mark read-only (readOnlyHint); {why}",
                    tool.name
                ),
            )
            .with_instruction(id),
        );
    }
    if sense_users.is_empty() && tool.surface == Some(ToolSurface::Sense) {
        out.push(Finding::new(
            CheckId::M2,
            Severity::Warn,
            Locus::field(Element::Tool(t), "surface"),
            format!(
                "tool `{}` is declared SENSE but `{server}`'s tool `{remote}` is not marked read-only (readOnlyHint); {why}",
                tool.name
            ),
        ));
    }
}
