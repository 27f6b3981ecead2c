//! [`Value`]: the one plain-data value type of ais.
//!
//! Carry values at run time, literal values in expressions, defaults of object fields and the
//! unknown fields an AG-IR document carries (kept and written back out) are all `Value`s. It is
//! JSON-shaped on purpose: it crosses to models as JSON, to Python tools as JSON, and into traces
//! as JSON. Enum members are held as their member name, a [`Value::Str`].

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A plain data value: null, bool, int, float, string, list or string-keyed map.
///
/// Maps keep insertion order, so a value read from a document and written back keeps its key order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(untagged)]
pub enum Value {
    /// `null` / `None` / an absent value.
    #[default]
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A 64-bit signed integer.
    Int(i64),
    /// A finite 64-bit float.
    Float(f64),
    /// A UTF-8 string (also an enum member, by name).
    Str(String),
    /// An ordered list.
    List(Vec<Value>),
    /// A string-keyed map in insertion order.
    Map(IndexMap<String, Value>),
}

impl Value {
    /// The name of this value's kind, as a user would read it in a message: `null`, `bool`,
    /// `int`, `float`, `str`, `list`, `dict`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::List(_) => "list",
            Value::Map(_) => "dict",
        }
    }

    /// The string inside a [`Value::Str`], if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Converts to a `serde_json::Value` (non-finite floats become `null`).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Int(i) => serde_json::Value::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f)
                .map(serde_json::Value::Number)
                .unwrap_or(serde_json::Value::Null),
            Value::Str(s) => serde_json::Value::String(s.clone()),
            Value::List(items) => {
                serde_json::Value::Array(items.iter().map(Value::to_json).collect())
            }
            Value::Map(map) => serde_json::Value::Object(
                map.iter().map(|(k, v)| (k.clone(), v.to_json())).collect(),
            ),
        }
    }

    /// Converts from a `serde_json::Value`. Integers that do not fit `i64` become floats.
    pub fn from_json(json: &serde_json::Value) -> Value {
        match json {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            serde_json::Value::String(s) => Value::Str(s.clone()),
            serde_json::Value::Array(items) => {
                Value::List(items.iter().map(Value::from_json).collect())
            }
            serde_json::Value::Object(map) => Value::Map(
                map.iter()
                    .map(|(k, v)| (k.clone(), Value::from_json(v)))
                    .collect(),
            ),
        }
    }
}

impl fmt::Display for Value {
    /// Displays the value as compact JSON.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.to_json())
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Str(s.to_owned())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Str(s)
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}
impl From<i64> for Value {
    fn from(i: i64) -> Self {
        Value::Int(i)
    }
}
impl From<f64> for Value {
    fn from(f: f64) -> Self {
        Value::Float(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip_keeps_order_and_kinds() {
        let json: serde_json::Value =
            serde_json::from_str(r#"{"z": 1, "a": [true, null, 2.5, "x"], "m": {}}"#).unwrap();
        let v = Value::from_json(&json);
        assert_eq!(v.to_json(), json);
        let Value::Map(m) = &v else {
            panic!("map expected")
        };
        assert_eq!(m.keys().collect::<Vec<_>>(), ["z", "a", "m"]);
        assert_eq!(m["a"].kind_name(), "list");
        assert_eq!(v.to_string(), r#"{"z":1,"a":[true,null,2.5,"x"],"m":{}}"#);
    }
}
