//! M1–M2: MCP bindings checked offline against a lock, placed in the AG-IR source, with
//! did-you-mean; and the lock's signatures bind like any tool's.

use ais_core::mcp::{Lock, LockedTool, ToolSchema, apply_lock};
use ais_core::{CheckId, Outcome, Repairs, Severity, agir, check, check_mcp};
use serde_json::json;

const PROGRAM: &str = r#"---
name: notes
description: Read a note and save a copy through an MCP file server.
---
mcp_servers:
  fs:
    command: npx
    args: [-y, "@modelcontextprotocol/server-filesystem", ./data]
tools:
  read_text_file: {surface: SENSE, serves: [read], mcp: {server: fs}}
  save: {surface: ACT, serves: [save], mcp: {server: fs, tool: write_file}}
walker:
  name: Notes
  carries:
    note_path: {type: path, role: input}
    copy_path: {type: path, role: input}
    note_text: {type: str, produced_by: read}
    copy_text: {type: str, produced_by: copy}
    saved: {type: outcome, produced_by: save}
nodes:
  - {id: read, type: SENSE, owner: code, reads: [note_path], writes: [note_text]}
  - {id: copy, type: CODE, owner: code, reads: [note_text], writes: [copy_text], body: "note_text + '!'"}
  - {id: save, type: ACT, owner: code, reads: [copy_path, copy_text], writes: [saved]}
  - {id: done, type: TERMINAL, reads: [saved]}
edges:
  - {from: read, to: copy}
  - {from: copy, to: save}
  - {from: save, to: done}
"#;

fn tool(props: serde_json::Value, required: &[&str], read_only: Option<bool>) -> LockedTool {
    LockedTool {
        schema: ToolSchema {
            description: None,
            input_schema: json!({"type": "object", "properties": props, "required": required}),
            output_schema: None,
            read_only_hint: read_only,
        },
        hash: "0".into(),
    }
}

fn lock(read_only: Option<bool>) -> Lock {
    let mut lock = Lock {
        version: 1,
        ..Lock::default()
    };
    let tools = lock.servers.entry("fs".into()).or_default();
    tools.insert(
        "read_text_file".into(),
        tool(
            json!({"path": {"type": "string"}, "head": {"type": "number"}}),
            &["path"],
            read_only,
        ),
    );
    tools.insert(
        "write_file".into(),
        tool(
            json!({"path": {"type": "string"}, "content": {"type": "string"}}),
            &["path", "content"],
            Some(false),
        ),
    );
    lock
}

#[test]
fn a_locked_program_checks_clean_and_binds_the_schemas_parameters() {
    let mut doc = agir::read(PROGRAM).unwrap();
    let lock = lock(Some(true));
    assert_eq!(apply_lock(&mut doc.program, &lock), 2);
    let (_, save) = doc.program.tool("save").unwrap();
    assert_eq!(
        save.sig.as_deref(),
        Some("(path: path, content: str) -> str")
    );
    let m = check_mcp(&doc.program, Some(&lock), &doc.source_map);
    assert!(m.is_empty(), "{m:#?}");
    let checked = check(&doc.program, &doc.source_map, Repairs::Off);
    assert_eq!(checked.outcome, Outcome::Clean, "{:#?}", checked.findings);
}

#[test]
fn a_misspelled_server_tool_and_parameter_are_reported_with_did_you_mean() {
    let text = PROGRAM
        .replace(
            "mcp: {server: fs, tool: write_file}",
            "mcp: {server: fs, tool: write_fiel}",
        )
        .replace(
            "read_text_file: {surface: SENSE,",
            "read_text_file: {sig: \"(pth: path) -> str\", surface: SENSE,",
        );
    let doc = agir::read(&text).unwrap();
    let m = check_mcp(&doc.program, Some(&lock(Some(true))), &doc.source_map);
    let tool = m
        .iter()
        .find(|f| f.message.contains("write_fiel"))
        .expect("tool");
    assert_eq!(tool.id.check(), Some(CheckId::M1));
    assert_eq!(tool.did_you_mean, ["write_file"]);
    assert_eq!(tool.pos.map(|p| p.line), Some(11), "{tool:#?}");
    let param = m
        .iter()
        .find(|f| f.message.contains("`pth`"))
        .expect("param");
    assert_eq!(param.did_you_mean, ["path"]);
    assert_eq!(param.severity, Severity::Error);
    assert!(
        m.iter()
            .any(|f| f.message.contains("requires parameter `path`")),
        "{m:#?}"
    );
}

#[test]
fn an_undeclared_server_is_reported_without_a_lock() {
    let text = PROGRAM.replace("mcp: {server: fs}", "mcp: {server: fss}");
    let doc = agir::read(&text).unwrap();
    let m = check_mcp(&doc.program, None, &doc.source_map);
    assert_eq!(m.len(), 2, "{m:#?}");
    assert_eq!(m[0].severity, Severity::Warn);
    assert!(m[0].message.contains("ais mcp lock"), "{}", m[0].message);
    assert_eq!(m[1].did_you_mean, ["fs"]);
    assert_eq!(m[1].pos.map(|p| p.line), Some(10));
}

#[test]
fn a_sense_bound_to_a_tool_not_marked_read_only_is_reported() {
    let doc = agir::read(PROGRAM).unwrap();
    for hint in [None, Some(false)] {
        let m = check_mcp(&doc.program, Some(&lock(hint)), &doc.source_map);
        assert_eq!(m.len(), 1, "{m:#?}");
        assert_eq!(m[0].id.check(), Some(CheckId::M2));
        assert_eq!(m[0].instruction.as_deref(), Some("read"));
        assert!(m[0].message.contains("readOnlyHint"), "{}", m[0].message);
    }
}
