//! What a journal keeps of an effect's request: a hash of the whole request, and a short hash
//! of each of its parts — enough to say *which* part changed when a replay finds another
//! request at an instruction (another doc, another operand, another schema), without storing
//! the request itself (operands can be large, and may hold what a trace would redact).
//!
//! The form, stored in [`Effect::request`](super::Effect::request), is one JSON object:
//! `{"h": "<32 hex digits>", "doc": "<8 hex>", "op.text": "<8 hex>", …}`. `h` hashes the whole
//! request; two requests are the same when their texts are. A bare hash (a journal written
//! before the parts were kept) still compares; it just cannot say which part differs.

use super::{Json, hash};
use serde_json::Map;

/// The whole request's hash under `h`, then each part's short hash, in order: the text of a
/// JSON object (part names are distinct).
fn digest(whole: &[u8], parts: impl IntoIterator<Item = (String, String)>) -> String {
    let mut out = String::with_capacity(64);
    out.push_str("{\"h\":\"");
    out.push_str(&hash(whole));
    out.push('"');
    for (name, text) in parts {
        out.push(',');
        // A JSON string of a `String` is always written.
        out.push_str(&serde_json::to_string(&name).unwrap_or_default());
        out.push_str(":\"");
        out.push_str(&hash(text.as_bytes())[..8]);
        out.push('"');
    }
    out.push('}');
    out
}

/// The digest of a slot's (or a model-owned ROUTE's) request: its doc, opcode, knowledge,
/// schema, choices, tools, sibling index, history, and each operand by name.
pub(crate) fn slot(request: &crate::llm::SlotRequest) -> String {
    let whole = serde_json::to_string(request).unwrap_or_default();
    let mut parts = vec![
        ("doc".to_owned(), request.doc.clone()),
        ("opcode".to_owned(), request.opcode.clone()),
        ("knowledge".to_owned(), text(&request.knowledge)),
        ("schema".to_owned(), request.schema.to_string()),
        ("choices".to_owned(), text(&request.choices)),
        ("tools".to_owned(), text(&request.tools)),
        ("sibling".to_owned(), text(&request.sibling)),
        ("history".to_owned(), text(&request.history)),
    ];
    for op in &request.operands {
        parts.push((format!("op.{}", op.name), text(op)));
    }
    digest(whole.as_bytes(), parts)
}

/// The digest of a tool call's arguments: the whole object, and each argument by name.
pub(crate) fn tool(args: &serde_json::Map<String, Json>) -> String {
    let whole = text(args);
    let parts = args
        .iter()
        .map(|(k, v)| (format!("arg.{k}"), v.to_string()));
    digest(whole.as_bytes(), parts)
}

/// Compact JSON text of a part (what its hash is of).
fn text<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// What differs between a recorded request digest and a new one, in words: `the doc`,
/// `operand `text``, `the schema`, `argument `path``… — empty when they are the same.
pub(crate) fn differences(recorded: Option<&str>, now: Option<&str>) -> Vec<String> {
    if recorded == now {
        return Vec::new();
    }
    let parse = |s: Option<&str>| -> Option<Map<String, Json>> {
        match serde_json::from_str(s?) {
            Ok(Json::Object(m)) => Some(m),
            _ => None,
        }
    };
    let (Some(then), Some(now)) = (parse(recorded), parse(now)) else {
        return vec!["the request (the journal keeps only its hash, not its parts)".into()];
    };
    let mut out = Vec::new();
    for (k, v) in &now {
        if k == "h" {
            continue;
        }
        match then.get(k) {
            Some(old) if old == v => {}
            Some(_) => out.push(format!("{} changed", part_name(k))),
            None => out.push(format!("{} is new", part_name(k))),
        }
    }
    for k in then.keys() {
        if k != "h" && !now.contains_key(k) {
            out.push(format!("{} is gone", part_name(k)));
        }
    }
    if out.is_empty() {
        out.push("the request changed (no part the journal keeps a hash of)".into());
    }
    out
}

/// A part's key in words.
fn part_name(key: &str) -> String {
    if let Some(op) = key.strip_prefix("op.") {
        return format!("operand `{op}`");
    }
    if let Some(arg) = key.strip_prefix("arg.") {
        return format!("argument `{arg}`");
    }
    match key {
        "doc" => "the doc".into(),
        "opcode" => "the opcode".into(),
        "knowledge" => "the resident knowledge".into(),
        "schema" => "the result schema".into(),
        "choices" => "the choices".into(),
        "tools" => "the tools it may call".into(),
        "sibling" => "the sibling index".into(),
        "history" => "the earlier turns".into(),
        other => format!("`{other}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Operand, SlotRequest};

    fn request(doc: &str, value: &str) -> SlotRequest {
        SlotRequest {
            instruction: "draft".into(),
            opcode: "GEN-FILL".into(),
            doc: doc.into(),
            knowledge: Vec::new(),
            operands: vec![Operand {
                name: "task".into(),
                ty: "str".into(),
                doc: None,
                value: Json::String(value.into()),
            }],
            schema: serde_json::json!({"type": "string"}),
            choices: None,
            tools: Vec::new(),
            sibling: None,
            siblings: None,
            history: Vec::new(),
        }
    }

    /// The digest as journals of earlier builds hold it (a JSON object built by `serde_json`),
    /// which a replay compares with the digest of the request it makes now.
    fn digest_as_before(whole: &[u8], parts: Vec<(String, String)>) -> String {
        let mut m = Map::new();
        m.insert("h".into(), Json::String(hash(whole)));
        for (name, text) in parts {
            m.insert(name, Json::String(hash(text.as_bytes())[..8].to_owned()));
        }
        Json::Object(m).to_string()
    }

    #[test]
    fn a_digest_is_the_text_earlier_journals_hold() {
        let parts = vec![
            ("arg.n".to_owned(), "2500".to_owned()),
            ("arg.\"odd\" ✓\n".to_owned(), "[1]".to_owned()),
            ("op.x".to_owned(), String::new()),
        ];
        assert_eq!(
            digest(b"{\"n\":2500}", parts.clone()),
            digest_as_before(b"{\"n\":2500}", parts)
        );
        let mut args = Map::new();
        args.insert("n".into(), Json::from(2500));
        args.insert("path".into(), Json::String("a/\"b\"".into()));
        let whole = Json::Object(args.clone()).to_string();
        let parts = args
            .iter()
            .map(|(k, v)| (format!("arg.{k}"), v.to_string()))
            .collect();
        assert_eq!(tool(&args), digest_as_before(whole.as_bytes(), parts));
        assert_eq!(digest(b"", Vec::new()), digest_as_before(b"", Vec::new()));
    }

    #[test]
    fn names_the_part_that_changed() {
        let a = slot(&request("Write it.", "x"));
        assert!(differences(Some(&a), Some(&slot(&request("Write it.", "x")))).is_empty());
        assert_eq!(
            differences(Some(&a), Some(&slot(&request("Write it well.", "x")))),
            ["the doc changed"]
        );
        assert_eq!(
            differences(Some(&a), Some(&slot(&request("Write it.", "y")))),
            ["operand `task` changed"]
        );
        let mut args = Map::new();
        args.insert("path".into(), Json::String("a".into()));
        let t = tool(&args);
        args.insert("path".into(), Json::String("b".into()));
        args.insert("mode".into(), Json::String("w".into()));
        assert_eq!(
            differences(Some(&t), Some(&tool(&args))),
            ["argument `path` changed", "argument `mode` is new"]
        );
        assert_eq!(
            differences(Some("0123"), Some(&a)),
            ["the request (the journal keeps only its hash, not its parts)"]
        );
    }
}
