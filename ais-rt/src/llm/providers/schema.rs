//! The one transform from a slot's JSON Schema to what a provider's structured output accepts.
//!
//! OpenAI's strict mode (`response_format: {type: "json_schema", json_schema: {strict: true}}`)
//! accepts a subset of JSON Schema, and the same subset works for Anthropic's tool
//! `input_schema` and Ollama's `format`, so every provider sends the output of
//! [`strict_schema`]. Its documented rules, each applied here:
//!
//! - the root is an object, never `anyOf`: a result that is not an object with properties is
//!   wrapped in `{"value": ...}` (and [`unwrap_value`] takes it out of the answer);
//! - every property is listed in `required` (an optional property becomes required — a value
//!   with it present still satisfies the original schema, which is what the slot validates
//!   against);
//! - every object says `additionalProperties: false`;
//! - `$ref` stands alone, with no sibling keywords;
//! - `oneOf` is not supported (it becomes `anyOf`, which is; where both are present the
//!   `oneOf` is dropped), and neither are `format`, `$schema` or any other keyword outside the
//!   supported set ([`SUPPORTED_KEYWORDS`]), which are dropped. A dropped keyword only loosens
//!   what the model is constrained to; the slot still validates the answer against the
//!   original schema, and a violation gets a repair round.
//!
//! A schema strict mode cannot express at all — a free-form map (an object without
//! `properties`), an array without `items`, the schema `true` or `{}` — is still sent, with
//! [`StrictSchema::strict`] false: OpenAI then treats it as guidance, not as a constraint.

use serde_json::{Map, Value, json};

/// The keywords strict mode supports; every other keyword is dropped.
pub(crate) const SUPPORTED_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "description",
    "title",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// The name of the property a wrapped result travels under.
pub(crate) const WRAP_KEY: &str = "value";

/// A slot schema made fit for strict structured output.
#[derive(Clone, Debug, PartialEq)]
pub struct StrictSchema {
    /// The schema to send.
    pub schema: Value,
    /// True when the result was wrapped in `{"value": ...}`: take it out with `unwrap_value`.
    pub wrapped: bool,
    /// False when some part of the schema cannot be expressed in strict mode (it is sent
    /// as guidance instead).
    pub strict: bool,
}

/// Transforms `schema` (the result's own schema, unwrapped) for strict structured output.
pub fn strict_schema(schema: &Value) -> StrictSchema {
    let mut strict = true;
    // The definitions live at the root whatever the root becomes (a `$ref` root keeps no
    // siblings, a wrapped root moves down a level): take them out first.
    let mut rest = schema.clone();
    let defs: Vec<(String, Value)> = match &mut rest {
        Value::Object(map) => take_defs(map)
            .into_iter()
            .map(|(key, defs)| (key, clean_defs(&defs, &mut strict)))
            .collect(),
        _ => Vec::new(),
    };
    let root = clean(&rest, &mut strict);
    let is_object = root.get("type").and_then(Value::as_str) == Some("object")
        && root.get("properties").is_some()
        && root.get("anyOf").is_none();
    let (mut out, wrapped) = if is_object {
        (root, false)
    } else {
        let wrapper = json!({
            "type": "object",
            "properties": { WRAP_KEY: root },
            "required": [WRAP_KEY],
            "additionalProperties": false,
        });
        (wrapper, true)
    };
    if let Value::Object(map) = &mut out {
        for (key, value) in defs {
            map.insert(key, value);
        }
    }
    StrictSchema {
        schema: out,
        wrapped,
        strict,
    }
}

/// Takes a result out of its `{"value": ...}` wrapper. An answer that is not an object with
/// exactly that one key is returned as it came (the slot's validation then judges it).
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn unwrap_value(wrapped: bool, value: Value) -> Value {
    if !wrapped {
        return value;
    }
    match value {
        Value::Object(mut map) if map.len() == 1 && map.contains_key(WRAP_KEY) => {
            map.remove(WRAP_KEY).unwrap_or(Value::Null)
        }
        other => other,
    }
}

/// Puts a result back into its wrapper, as the model sent it (for the history of a slot).
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn wrap_value(wrapped: bool, value: &Value) -> Value {
    if wrapped {
        json!({ WRAP_KEY: value })
    } else {
        value.clone()
    }
}

fn take_defs(map: &mut Map<String, Value>) -> Vec<(String, Value)> {
    ["$defs", "definitions"]
        .into_iter()
        .filter_map(|key| map.remove(key).map(|defs| (key.to_string(), defs)))
        .collect()
}

/// One node: keywords filtered, children cleaned, objects closed.
fn clean(node: &Value, strict: &mut bool) -> Value {
    let Value::Object(map) = node else {
        // `true`, `false` or garbage: nothing strict mode can hold.
        *strict = false;
        return node.clone();
    };
    if let Some(reference) = map.get("$ref") {
        return json!({ "$ref": reference });
    }
    let mut out = Map::new();
    for (key, value) in map {
        match key.as_str() {
            "properties" => {
                let props = value.as_object().map(|props| {
                    props
                        .iter()
                        .map(|(name, schema)| (name.clone(), clean(schema, strict)))
                        .collect::<Map<_, _>>()
                });
                out.insert(key.clone(), props.map_or(json!({}), Value::Object));
            }
            "items" | "additionalProperties" if value.is_object() => {
                out.insert(key.clone(), clean(value, strict));
            }
            "anyOf" => {
                out.insert(key.clone(), clean_list(value, strict));
            }
            "oneOf" if !map.contains_key("anyOf") => {
                out.insert("anyOf".to_string(), clean_list(value, strict));
            }
            "const" if !map.contains_key("enum") => {
                out.insert("enum".to_string(), json!([value]));
            }
            "$defs" | "definitions" => {
                out.insert(key.clone(), clean_defs(value, strict));
            }
            "required" => {}
            _ if SUPPORTED_KEYWORDS.contains(&key.as_str()) => {
                out.insert(key.clone(), value.clone());
            }
            _ => {}
        }
    }
    close_object(&mut out, strict);
    if is_array(&out) && !out.contains_key("items") {
        *strict = false;
    }
    if out.is_empty() || only_annotations(&out) {
        *strict = false;
    }
    Value::Object(out)
}

fn clean_defs(defs: &Value, strict: &mut bool) -> Value {
    let defs = defs.as_object().map(|defs| {
        defs.iter()
            .map(|(name, schema)| (name.clone(), clean(schema, strict)))
            .collect::<Map<_, _>>()
    });
    defs.map_or(json!({}), Value::Object)
}

fn clean_list(value: &Value, strict: &mut bool) -> Value {
    match value.as_array() {
        Some(items) => Value::Array(items.iter().map(|item| clean(item, strict)).collect()),
        None => {
            *strict = false;
            json!([])
        }
    }
}

/// Every property required, no others allowed; a map (no `properties`) cannot be strict.
fn close_object(out: &mut Map<String, Value>, strict: &mut bool) {
    let is_object = has_type(out, "object") || out.contains_key("properties");
    if !is_object {
        return;
    }
    match out.get("properties").and_then(Value::as_object) {
        Some(props) => {
            let required: Vec<Value> = props.keys().cloned().map(Value::String).collect();
            out.insert("required".to_string(), Value::Array(required));
            out.insert("additionalProperties".to_string(), Value::Bool(false));
        }
        None if out.get("additionalProperties") == Some(&Value::Bool(false)) => {
            out.insert("properties".to_string(), json!({}));
            out.insert("required".to_string(), json!([]));
        }
        None => *strict = false,
    }
}

fn has_type(out: &Map<String, Value>, ty: &str) -> bool {
    match out.get("type") {
        Some(Value::String(t)) => t == ty,
        Some(Value::Array(types)) => types.iter().any(|t| t.as_str() == Some(ty)),
        _ => false,
    }
}

fn is_array(out: &Map<String, Value>) -> bool {
    has_type(out, "array")
}

fn only_annotations(out: &Map<String, Value>) -> bool {
    out.keys()
        .all(|key| matches!(key.as_str(), "description" | "title"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_anywhere(value: &Value, key: &str) -> bool {
        match value {
            Value::Object(map) => {
                map.contains_key(key) || map.values().any(|child| keys_anywhere(child, key))
            }
            Value::Array(items) => items.iter().any(|child| keys_anywhere(child, key)),
            _ => false,
        }
    }

    #[test]
    fn every_property_is_required_and_objects_are_closed_at_every_depth() {
        let schema = json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "meta": {
                    "type": "object",
                    "properties": {"owner": {"type": "string"}, "tags": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}}},
                    "required": []
                }
            },
            "required": ["title"]
        });
        let out = strict_schema(&schema);
        assert!(out.strict && !out.wrapped);
        let s = &out.schema;
        assert_eq!(s["required"], json!(["title", "meta"]));
        assert_eq!(s["additionalProperties"], json!(false));
        let meta = &s["properties"]["meta"];
        assert_eq!(meta["required"], json!(["owner", "tags"]));
        assert_eq!(meta["additionalProperties"], json!(false));
        let item = &meta["properties"]["tags"]["items"];
        assert_eq!(item["required"], json!(["k"]));
        assert_eq!(item["additionalProperties"], json!(false));
    }

    #[test]
    fn non_object_results_are_wrapped_and_unwrapped() {
        for schema in [
            json!({"type": "string"}),
            json!({"type": "array", "items": {"type": "string"}}),
            json!({"enum": ["low", "high"]}),
            json!({"type": "integer"}),
        ] {
            let out = strict_schema(&schema);
            assert!(out.wrapped, "{schema}");
            assert_eq!(out.schema["type"], "object");
            assert_eq!(out.schema["required"], json!(["value"]));
            assert_eq!(out.schema["additionalProperties"], json!(false));
            assert_eq!(out.schema["properties"]["value"], schema);
        }
        assert_eq!(unwrap_value(true, json!({"value": "hi"})), json!("hi"));
        assert_eq!(unwrap_value(true, json!({"value": [1, 2]})), json!([1, 2]));
        // Not in the wrapper: handed on as it came, for the slot's validation to judge.
        assert_eq!(unwrap_value(true, json!("bare")), json!("bare"));
        assert_eq!(
            unwrap_value(true, json!({"value": 1, "extra": 2})),
            json!({"value": 1, "extra": 2})
        );
        assert_eq!(
            unwrap_value(false, json!({"value": 1})),
            json!({"value": 1})
        );
        assert_eq!(wrap_value(true, &json!(3)), json!({"value": 3}));
    }

    #[test]
    fn the_root_is_never_any_of() {
        let schema = json!({"anyOf": [{"type": "string"}, {"type": "integer"}]});
        let out = strict_schema(&schema);
        assert!(out.wrapped);
        assert!(out.schema.get("anyOf").is_none());
        assert_eq!(
            out.schema["properties"]["value"]["anyOf"][1]["type"],
            "integer"
        );
    }

    #[test]
    fn one_of_format_and_schema_are_removed() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "when": {"type": "string", "format": "date-time", "minLength": 3},
                "level": {"oneOf": [{"const": "low", "description": "l"}, {"const": "high"}]}
            }
        });
        let out = strict_schema(&schema);
        for key in ["$schema", "format", "oneOf", "minLength", "const"] {
            assert!(
                !keys_anywhere(&out.schema, key),
                "{key} left in {}",
                out.schema
            );
        }
        assert_eq!(
            out.schema["properties"]["level"]["anyOf"],
            json!([{"enum": ["low"], "description": "l"}, {"enum": ["high"]}])
        );
        assert!(out.strict);
    }

    #[test]
    fn ref_has_no_siblings_and_defs_stay_at_the_root() {
        let schema = json!({
            "$ref": "#/$defs/Plan",
            "description": "the plan",
            "$defs": {
                "Plan": {
                    "type": "object",
                    "properties": {"step": {"$ref": "#/$defs/Step", "description": "x", "default": {}}}
                },
                "Step": {"type": "string", "enum": ["a", "b"]}
            }
        });
        let out = strict_schema(&schema);
        assert!(out.wrapped, "a $ref root is not an object with properties");
        assert_eq!(
            out.schema["properties"]["value"],
            json!({"$ref": "#/$defs/Plan"})
        );
        let plan = &out.schema["$defs"]["Plan"];
        assert_eq!(plan["properties"]["step"], json!({"$ref": "#/$defs/Step"}));
        assert_eq!(plan["required"], json!(["step"]));
        assert_eq!(plan["additionalProperties"], json!(false));
        assert!(out.strict);
    }

    #[test]
    fn an_object_root_keeps_its_defs() {
        let schema = json!({
            "type": "object",
            "properties": {"s": {"$ref": "#/definitions/S"}},
            "definitions": {"S": {"type": "object", "properties": {"n": {"type": "number"}}}}
        });
        let out = strict_schema(&schema);
        assert!(!out.wrapped);
        assert_eq!(out.schema["definitions"]["S"]["required"], json!(["n"]));
    }

    #[test]
    fn what_strict_mode_cannot_express_is_sent_non_strict() {
        let map =
            json!({"type": "object", "additionalProperties": {"type": "string", "format": "uri"}});
        let out = strict_schema(&map);
        assert!(!out.strict);
        assert!(out.wrapped);
        assert!(!keys_anywhere(&out.schema, "format"));
        assert!(!strict_schema(&json!({})).strict);
        assert!(!strict_schema(&json!(true)).strict);
        assert!(!strict_schema(&json!({"type": "array"})).strict);
        let closed_empty = strict_schema(&json!({"type": "object", "additionalProperties": false}));
        assert!(closed_empty.strict && !closed_empty.wrapped);
        assert_eq!(closed_empty.schema["properties"], json!({}));
        assert_eq!(closed_empty.schema["required"], json!([]));
    }

    #[test]
    fn nullable_types_and_numeric_bounds_are_kept() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": ["integer", "null"], "minimum": 0, "maximum": 9},
                "xs": {"type": "array", "items": {"type": "boolean"}, "minItems": 1}
            }
        });
        let out = strict_schema(&schema);
        assert_eq!(
            out.schema["properties"]["n"]["type"],
            json!(["integer", "null"])
        );
        assert_eq!(out.schema["properties"]["n"]["minimum"], json!(0));
        assert_eq!(out.schema["properties"]["xs"]["minItems"], json!(1));
        assert!(out.strict);
    }
}
