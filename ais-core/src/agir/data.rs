//! A YAML or JSON text read as plain JSON data, with where each value stood — for formats other
//! than AG-IR that sit on the same reader stack (the AGS graph documents of `ais-ags`).
//!
//! The text goes through the one YAML parser (granit-parser, within the same [`Limits`], aliases
//! expanded the same way) and plain scalars resolve by the YAML 1.2 core schema, so a JSON text
//! (JSON is YAML 1.2) and the YAML spelling of the same document read to the same data. Nothing
//! is relaxed: the text must be strictly valid YAML. A key written twice in one mapping is not
//! an error here but a [`Duplicate`] the caller reports (the first value is kept).

use super::relax::ColumnMap;
use super::tree::{self, Kind, Node, Style};
use super::{Limits, ReadError};
use crate::source::Pos;
use crate::value::Value;
use serde_json::{Map, Number, Value as Json};
use std::collections::HashMap;

/// Where one value of the data stood in the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataPos {
    /// Where its key starts, for a mapping entry.
    pub key: Option<Pos>,
    /// Where the value starts.
    pub value: Pos,
}

/// A key written twice in one mapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Duplicate {
    /// The JSON Pointer (RFC 6901) of the mapping.
    pub pointer: String,
    /// The key.
    pub key: String,
    /// Where the second spelling of the key starts.
    pub pos: Pos,
    /// Where the first spelling starts.
    pub first: Pos,
}

/// A text read as JSON data.
#[derive(Clone, Debug, PartialEq)]
pub struct Data {
    /// The data.
    pub value: Json,
    /// The position of every value, by JSON Pointer (`""` is the root, `/nodes/a/title` a field).
    pub positions: HashMap<String, DataPos>,
    /// Keys written twice, in source order.
    pub duplicates: Vec<Duplicate>,
}

impl Data {
    /// Where the value at `pointer` stands, or its nearest enclosing value's place.
    pub fn pos_of(&self, pointer: &str) -> Option<Pos> {
        let mut p = pointer;
        loop {
            if let Some(at) = self.positions.get(p) {
                return Some(at.value);
            }
            p = &p[..p.rfind('/')?];
        }
    }

    /// Where the key of the entry at `pointer` stands (its value's place for a list item), or
    /// its nearest enclosing value's place.
    pub fn key_pos_of(&self, pointer: &str) -> Option<Pos> {
        match self.positions.get(pointer) {
            Some(at) => Some(at.key.unwrap_or(at.value)),
            None => self.pos_of(pointer),
        }
    }
}

/// Escapes one JSON Pointer reference token (RFC 6901: `~` as `~0`, `/` as `~1`).
pub fn pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Reads one YAML (or JSON) document as JSON data within the limits.
///
/// Fails with a located [`ReadError`] on text larger than `limits.max_bytes`, on invalid YAML, on
/// more than one document, on a mapping key that is not a scalar, and on the limits of nesting,
/// alias expansion and size that AG-IR reading applies.
pub fn read_data(text: &str, limits: &Limits) -> Result<Data, ReadError> {
    if text.len() > limits.max_bytes {
        return Err(ReadError {
            message: format!(
                "the text is {} bytes, more than the {} this reader accepts",
                text.len(),
                limits.max_bytes
            ),
            pos: None,
            help: Some("split the document, or raise the limit".to_owned()),
        });
    }
    let map = ColumnMap::default();
    let stream = match tree::parse(text, &map, limits) {
        Ok(result) => result?,
        Err(e) => return Err(tree::scan_error(&e, text, &map, limits)),
    };
    let root = match stream.docs.as_slice() {
        [] => None,
        [one] => Some(one),
        [_, second, ..] => {
            return Err(ReadError {
                message: "a second YAML document starts here; a data file is one document"
                    .to_owned(),
                pos: Some(second.pos),
                help: Some("remove this `---` line, or split the text into files".to_owned()),
            });
        }
    };
    let mut data = Data {
        value: Json::Null,
        positions: HashMap::new(),
        duplicates: Vec::new(),
    };
    if let Some(root) = root {
        data.value = convert(root, String::new(), None, &mut data)?;
    }
    Ok(data)
}

fn convert(
    node: &Node,
    pointer: String,
    key: Option<Pos>,
    data: &mut Data,
) -> Result<Json, ReadError> {
    data.positions.insert(
        pointer.clone(),
        DataPos {
            key,
            value: node.pos,
        },
    );
    Ok(match &node.kind {
        Kind::Scalar(text, Style::Text) => Json::String(text.to_string()),
        Kind::Scalar(text, Style::Plain) => plain(text),
        Kind::Seq(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                out.push(convert(item, format!("{pointer}/{i}"), None, data)?);
            }
            Json::Array(out)
        }
        Kind::Map(entries) => {
            let mut out = Map::with_capacity(entries.len());
            let mut first: HashMap<&str, Pos> = HashMap::new();
            for (k, v) in entries {
                let Kind::Scalar(name, _) = &k.kind else {
                    return Err(ReadError {
                        message: format!("a mapping key must be text, found {}", k.describe()),
                        pos: Some(k.pos),
                        help: Some("write the key as plain or quoted text".to_owned()),
                    });
                };
                if let Some(at) = first.get(name.as_ref()) {
                    data.duplicates.push(Duplicate {
                        pointer: pointer.clone(),
                        key: name.to_string(),
                        pos: k.pos,
                        first: *at,
                    });
                    continue;
                }
                first.insert(name, k.pos);
                let child = format!("{pointer}/{}", pointer_token(name));
                let value = convert(v, child, Some(k.pos), data)?;
                out.insert(name.to_string(), value);
            }
            Json::Object(out)
        }
    })
}

/// A plain scalar by the YAML 1.2 core schema; an integer beyond `i64` stays a number when it
/// fits `u64` or `f64`.
fn plain(text: &str) -> Json {
    match tree::resolve_plain(text) {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(b),
        Value::Int(i) => Json::Number(i.into()),
        Value::Float(f) => Number::from_f64(f).map_or(Json::String(text.to_owned()), Json::Number),
        Value::Str(s) => match s.parse::<u64>() {
            Ok(u) if s.bytes().all(|b| b.is_ascii_digit()) => Json::Number(u.into()),
            _ => Json::String(s),
        },
        other => Json::String(format!("{other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_and_json_read_to_the_same_data_with_positions() {
        let yaml = "a: 1\nb:\n  - x\n  - 2.5\nc: {d: null, e: 'true'}\n";
        let json = r#"{"a": 1, "b": ["x", 2.5], "c": {"d": null, "e": "true"}}"#;
        let y = read_data(yaml, &Limits::default()).unwrap();
        let j = read_data(json, &Limits::default()).unwrap();
        assert_eq!(y.value, j.value);
        assert_eq!(j.value, serde_json::from_str::<Json>(json).unwrap());
        assert_eq!(y.pos_of("/b/1"), Some(Pos::new(4, 5)));
        assert_eq!(y.key_pos_of("/c"), Some(Pos::new(5, 1)));
        assert_eq!(y.pos_of("/c/e/deeper"), Some(Pos::new(5, 17)));
    }

    #[test]
    fn duplicate_keys_are_reported_not_fatal() {
        let d = read_data("a: 1\nb: 2\na: 3\n", &Limits::default()).unwrap();
        assert_eq!(d.value["a"], 1);
        assert_eq!(d.duplicates.len(), 1);
        assert_eq!(d.duplicates[0].pos, Pos::new(3, 1));
        assert_eq!(d.duplicates[0].first, Pos::new(1, 1));
    }

    #[test]
    fn bad_yaml_and_two_documents_are_located_errors() {
        let e = read_data("a: [1, 2\n", &Limits::default()).unwrap_err();
        assert!(e.pos.is_some(), "{e:?}");
        let e = read_data("a: 1\n---\nb: 2\n", &Limits::default()).unwrap_err();
        assert_eq!(e.pos.map(|p| p.line), Some(3));
    }
}
