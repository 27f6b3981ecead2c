//! MCP tools as seen offline: a server tool's schemas ([`ToolSchema`]), the lock file that
//! records them ([`Lock`]), and the signature a schema gives a tool ([`signature`]).
//!
//! A program binds a tool to a server's tool with `mcp: {server, tool}` (see
//! [`McpServer`](crate::McpServer)). The server's `inputSchema` is the tool's parameter list:
//! [`signature`] turns it into the `sig` the calling convention (§7) binds by, so MCP tools bind
//! exactly like any other tool. [`apply`] fills that `sig` into every MCP tool that has none,
//! from the live servers (the runtime) or from the lock (`ais check`, `ais!`), so the validator
//! and the runtime bind the same parameters.
//!
//! # Which parameters a signature has
//!
//! The schema's **required** properties, in the schema's property order, then each optional
//! property that a carry of the program names (it binds by name, rule 1). An optional property
//! no carry names is left out: binding it by role or position (rules 3–4) would hand it an
//! unrelated carry, and the server applies its own default. A property whose name is not an
//! identifier cannot be a parameter; when it is required, [`crate::check_mcp`] reports it. An
//! author who writes a `sig` chooses the parameters; each must then be a property of the schema.
//!
//! Types: `string` → `str` (`path` for a property named `path` or ending in `_path`), `integer`
//! → `int`, `number` → `float`, `boolean` → `bool`, `array` → `list[T]`, `object` → `dict`,
//! anything else unannotated. The result is the `outputSchema`'s type when the server gives
//! one, else `str` (the text content).
//!
//! # The lock file
//!
//! `ais mcp lock PROGRAM` writes `<stem>.mcp.lock` beside the program: JSON, server → tool →
//! `{description, inputSchema, outputSchema, readOnlyHint, hash}`, where `hash` is the SHA-256
//! of the tool's schemas as the runtime computes it (the core only compares). [`lock_path`]
//! names the file.

use crate::program::{Program, Type};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a server says about one tool: what binding, typing and the SENSE check need.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSchema {
    /// The tool's description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its `inputSchema` (a JSON Schema object).
    pub input_schema: serde_json::Value,
    /// Its `outputSchema`, when it declares one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<serde_json::Value>,
    /// Its `readOnlyHint` annotation, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
}

impl ToolSchema {
    /// The input schema's properties, in order (empty when it has none).
    pub fn properties(&self) -> Vec<(&str, &serde_json::Value)> {
        self.input_schema
            .get("properties")
            .and_then(|p| p.as_object())
            .map(|o| o.iter().map(|(k, v)| (k.as_str(), v)).collect())
            .unwrap_or_default()
    }

    /// The input schema's required property names.
    pub fn required(&self) -> Vec<&str> {
        self.input_schema
            .get("required")
            .and_then(|r| r.as_array())
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default()
    }

    /// True when the server marks the tool read-only (`readOnlyHint: true`).
    pub fn is_read_only(&self) -> bool {
        self.read_only_hint == Some(true)
    }
}

/// One locked tool: its schemas and their hash.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct LockedTool {
    /// The schemas, as the server listed them when the lock was written.
    #[serde(flatten)]
    pub schema: ToolSchema,
    /// SHA-256 (hex) of the schemas, as the runtime computes it.
    pub hash: String,
}

/// The lock file: each used tool's schemas per server, so checks need no server.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct Lock {
    /// The lock format's version (1).
    pub version: u32,
    /// Server name → server tool name → locked tool.
    pub servers: BTreeMap<String, BTreeMap<String, LockedTool>>,
}

impl Lock {
    /// The locked tool `tool` of `server`.
    pub fn tool(&self, server: &str, tool: &str) -> Option<&LockedTool> {
        self.servers.get(server)?.get(tool)
    }

    /// Reads a lock file's text; the error says what is wrong and where.
    pub fn parse(text: &str) -> Result<Lock, String> {
        serde_json::from_str(text).map_err(|e| {
            format!(
                "line {}, column {}: {e}; rewrite it with `ais mcp lock PROGRAM`",
                e.line(),
                e.column()
            )
        })
    }

    /// The lock as pretty JSON with a final newline.
    pub fn to_text(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// The lock file of the program at `program`: `<stem>.mcp.lock` beside it.
pub fn lock_path(program: &Path) -> PathBuf {
    let stem = program
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".to_owned());
    program.with_file_name(format!("{stem}.mcp.lock"))
}

/// True when `name` can be a signature parameter (an identifier).
pub fn is_param_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The AIS type of a JSON Schema (see the module docs); `None` when it has no simple one.
pub fn schema_type(name: &str, schema: &serde_json::Value) -> Option<Type> {
    let ty = match schema.get("type") {
        Some(serde_json::Value::String(t)) => t.as_str(),
        _ => return None,
    };
    Some(match ty {
        "string" if name == "path" || name.ends_with("_path") => Type::Path,
        "string" => Type::Str,
        "integer" => Type::Int,
        "number" => Type::Float,
        "boolean" => Type::Bool,
        "array" => Type::List(
            schema
                .get("items")
                .and_then(|i| schema_type("", i))
                .map(Box::new),
        ),
        "object" => Type::Dict(None),
        _ => return None,
    })
}

/// The signature a tool's schemas give it, for `program` (see the module docs):
/// `"(path: path, content: str) -> str"`.
pub fn signature(schema: &ToolSchema, program: &Program) -> String {
    let required = schema.required();
    let params: Vec<String> = schema
        .properties()
        .into_iter()
        .filter(|(name, _)| is_param_name(name))
        .filter(|(name, _)| required.contains(name) || program.carry(name).is_some())
        .map(|(name, s)| match schema_type(name, s) {
            Some(t) => format!("{name}: {t}"),
            None => name.to_owned(),
        })
        .collect();
    let ret = schema
        .output_schema
        .as_ref()
        .and_then(|s| schema_type("", s))
        .unwrap_or(Type::Str);
    format!("({}) -> {ret}", params.join(", "))
}

/// Fills the `sig` of every MCP-bound tool that has none from `schemas(server, tool)`; returns
/// how many it filled. A tool the lookup does not know is left as it is (the check reports it).
pub fn apply<'a>(
    program: &mut Program,
    schemas: impl Fn(&str, &str) -> Option<&'a ToolSchema>,
) -> usize {
    let mut sigs = Vec::new();
    for (i, t) in program.tool_list().iter().enumerate() {
        let Some(m) = &t.mcp else { continue };
        if t.sig.as_deref().is_some_and(|s| !s.trim().is_empty()) {
            continue;
        }
        if let Some(schema) = schemas(&m.server, m.remote(&t.name)) {
            sigs.push((i, signature(schema, program)));
        }
    }
    let filled = sigs.len();
    if let Some(tools) = program.tools.as_mut() {
        for (i, sig) in sigs {
            tools[i].sig = Some(sig);
        }
    }
    filled
}

/// [`apply`] from a lock.
pub fn apply_lock(program: &mut Program, lock: &Lock) -> usize {
    apply(program, |server, tool| {
        lock.tool(server, tool).map(|t| &t.schema)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(input: serde_json::Value) -> ToolSchema {
        ToolSchema {
            input_schema: input,
            ..ToolSchema::default()
        }
    }

    #[test]
    fn a_signature_has_the_required_params_and_optional_ones_a_carry_names() {
        let s = schema(json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "head": {"type": "number"},
                "tail": {"type": "number"},
                "edits": {"type": "array", "items": {"type": "string"}},
                "dry-run": {"type": "boolean"},
            },
            "required": ["path", "edits"],
        }));
        let mut p = Program::default();
        assert_eq!(signature(&s, &p), "(path: path, edits: list[str]) -> str");
        p.walker = Some(crate::Walker {
            carries: Some(vec![crate::Carry {
                name: "tail".into(),
                ..Default::default()
            }]),
            ..Default::default()
        });
        assert_eq!(
            signature(&s, &p),
            "(path: path, tail: float, edits: list[str]) -> str"
        );
        let sig = crate::sig::parse(&signature(&s, &p)).unwrap();
        assert_eq!(sig.param_names(), ["path", "tail", "edits"]);
    }

    #[test]
    fn an_output_schema_types_the_result() {
        let mut s = schema(json!({"type": "object", "properties": {}}));
        s.output_schema = Some(json!({"type": "object"}));
        assert_eq!(signature(&s, &Program::default()), "() -> dict");
    }

    #[test]
    fn a_lock_reads_back_and_a_bad_one_names_the_line() {
        let mut lock = Lock {
            version: 1,
            ..Lock::default()
        };
        let mut tools = BTreeMap::new();
        tools.insert(
            "echo".to_owned(),
            LockedTool {
                schema: schema(json!({"type": "object"})),
                hash: "ab".into(),
            },
        );
        lock.servers.insert("every".into(), tools);
        assert_eq!(Lock::parse(&lock.to_text()).unwrap(), lock);
        let err = Lock::parse("{\n  \"version\": \"x\"}").unwrap_err();
        assert!(err.starts_with("line 2"), "{err}");
        assert_eq!(
            lock_path(Path::new("dir/agent.agir")),
            Path::new("dir/agent.mcp.lock")
        );
    }
}
