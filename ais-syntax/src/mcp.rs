//! Lowering the DSL's MCP items: `mcp_server` declarations into `mcp_servers`, and the
//! program's lock (`mcp_lock = "path"`, relative to the crate's manifest directory) read at
//! expansion time, so the locked schemas give MCP tools their signatures and the checks of
//! [`ais_core::check_mcp`] run with no server started.

use crate::ast::{McpServerDef, ProgramDef};
use ais_core::McpServer;
use ais_core::mcp::Lock;
use std::path::PathBuf;

/// The `mcp_servers` section of a program's `mcp_server` items.
pub(crate) fn servers(def: &ProgramDef) -> Option<Vec<McpServer>> {
    if def.mcp_servers.is_empty() {
        return None;
    }
    Some(def.mcp_servers.iter().map(server).collect())
}

fn server(s: &McpServerDef) -> McpServer {
    McpServer {
        name: s.name.to_string(),
        command: s.command.as_ref().map(|c| c.value()),
        args: s
            .args
            .as_ref()
            .map(|a| a.iter().map(|a| a.value()).collect()),
        env: s
            .env
            .as_ref()
            .map(|e| e.iter().map(|(k, v)| (k.value(), v.value())).collect()),
        cwd: s.cwd.as_ref().map(|c| c.value()),
        url: s.url.as_ref().map(|u| u.value()),
        doc: s.doc.as_ref().map(|d| d.text.clone()),
        extra: Vec::new(),
    }
}

/// The program's lock, when it names one: an error at the `mcp_lock` setting when the file
/// cannot be read or is not a lock.
pub(crate) fn lock(def: &ProgramDef) -> Result<Option<Lock>, syn::Error> {
    let Some((path, site)) = &def.mcp_lock else {
        return Ok(None);
    };
    let base = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_default();
    let file = base.join(path);
    let text = std::fs::read_to_string(&file).map_err(|e| {
        syn::Error::new(
            site.start,
            format!(
                "cannot read the MCP lock file `{}`: {e}; write it with `ais mcp lock PROGRAM.agir` (the path is relative to the crate's Cargo.toml)",
                file.display()
            ),
        )
    })?;
    Lock::parse(&text).map(Some).map_err(|e| {
        syn::Error::new(
            site.start,
            format!("the MCP lock file `{}` is not valid: {e}", file.display()),
        )
    })
}
