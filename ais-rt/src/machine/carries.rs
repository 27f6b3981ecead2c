//! The carry file (spec §2.1): one slot per carry, indexed by the plan, seeded per §7.5.
//!
//! Values live in a `Vec` indexed by carry number; names resolve to numbers through one hash
//! map built when the program is prepared, so a step touches no map but that one (and only
//! for guards, which read carries by name through [`ais_core::expr::Carries`]).

use ais_core::expr::Carries;
use ais_core::{Program, Type, TypeKind, Value};
use indexmap::IndexMap;
use std::collections::HashMap;
use std::sync::Arc;

/// Carry names and types, resolved once per program.
#[derive(Debug)]
pub(crate) struct Names {
    /// Name → index.
    pub map: HashMap<String, usize, foldhash::fast::FixedState>,
    /// Index → name.
    pub list: Vec<String>,
    /// Index → declared type (`None`: untyped, i.e. `any`).
    pub types: Vec<Option<Type>>,
    /// Declaration (its place in `walker.carries`) → index: what a plan's resolved carry
    /// reference ([`ais_core::plan::CarryRef::index`]) becomes without hashing its name.
    pub by_decl: Vec<usize>,
}

impl Names {
    /// The index of a carry.
    pub(crate) fn index(&self, name: &str) -> Option<usize> {
        self.map.get(name).copied()
    }

    /// The index of a carry a plan resolved: through its declaration when it has one, else
    /// by name.
    pub(crate) fn of_ref(&self, c: &ais_core::plan::CarryRef) -> Option<usize> {
        match c.index.and_then(|d| self.by_decl.get(d)) {
            Some(&i) => Some(i),
            None => self.index(&c.name),
        }
    }
}

/// The carry file of one run (or one SPAWN sibling's frozen view).
#[derive(Clone, Debug)]
pub(crate) struct CarryFile {
    pub names: Arc<Names>,
    pub values: Vec<Value>,
}

impl Carries for CarryFile {
    fn carry(&self, name: &str) -> Option<&Value> {
        self.names.index(name).and_then(|i| self.values.get(i))
    }
}

impl CarryFile {
    /// The value at an index (`null` past the end, which a plan never produces).
    pub(crate) fn get(&self, i: usize) -> &Value {
        static NULL: Value = Value::Null;
        self.values.get(i).unwrap_or(&NULL)
    }

    /// Sets the value at an index.
    pub(crate) fn set(&mut self, i: usize, v: Value) {
        if let Some(slot) = self.values.get_mut(i) {
            *slot = v;
        }
    }
}

/// Read access to carry values by index: the run's carry file, or a SPAWN sibling's view of
/// its frozen snapshot with one carry replaced (no copy of the rest).
pub(crate) trait Lookup: Sync {
    /// The value at an index.
    fn value(&self, i: usize) -> &Value;
}

impl Lookup for CarryFile {
    fn value(&self, i: usize) -> &Value {
        self.get(i)
    }
}

/// A frozen carry file with one carry overlaid.
pub(crate) struct Overlay<'a> {
    pub base: &'a CarryFile,
    pub at: usize,
    pub value: &'a Value,
}

impl Lookup for Overlay<'_> {
    fn value(&self, i: usize) -> &Value {
        if i == self.at {
            self.value
        } else {
            self.base.get(i)
        }
    }
}

/// Indexes a program's carries; `task` gets a slot (typed `str`) even when undeclared, since it
/// always resolves to the invocation input (§5.1).
pub(crate) fn names(program: &Program) -> Names {
    let mut map = HashMap::with_hasher(foldhash::fast::FixedState::default());
    let mut list = Vec::new();
    let mut types = Vec::new();
    let mut by_decl = Vec::with_capacity(program.carries().len());
    for c in program.carries() {
        let i = *map.entry(c.name.clone()).or_insert_with(|| {
            list.push(c.name.clone());
            types.push(c.ty.clone());
            list.len() - 1
        });
        by_decl.push(i);
    }
    if !map.contains_key("task") {
        map.insert("task".to_owned(), list.len());
        list.push("task".to_owned());
        types.push(Some(Type::Str));
    }
    Names {
        map,
        list,
        types,
        by_decl,
    }
}

/// The starting value of every carry: its declared default (conformed to its type), else its
/// type's zero value.
pub(crate) fn initial_values(program: &Program, names: &Names) -> Vec<Value> {
    // The first declaration of each name, as `Program::carry` finds it, in one pass (a lookup
    // per carry was quadratic in the program's size).
    let mut defaults: HashMap<&str, Option<&Value>> = HashMap::new();
    for c in program.carries() {
        defaults
            .entry(c.name.as_str())
            .or_insert(c.default.as_ref());
    }
    names
        .list
        .iter()
        .zip(&names.types)
        .map(|(name, ty)| {
            let declared = defaults.get(name.as_str()).copied().flatten().cloned();
            match declared {
                Some(v) => match ty {
                    Some(t) => conform(program, v, t),
                    None => v,
                },
                None => ty
                    .as_ref()
                    .map_or(Value::Null, |t| zero_value(program, t, 0)),
            }
        })
        .collect()
}

/// The zero value of a type (§ the issue's carry-file rule): `""`, `0`, `0.0`, `false`, `[]`,
/// `{}`, an object with its fields' defaults (else their zero values), `None` for an enum (and
/// for `any`). The built-in `outcome` starts as `{ok: false, error: "", output: "", value: null}`.
pub(crate) fn zero_value(program: &Program, ty: &Type, depth: usize) -> Value {
    match ty {
        Type::Str | Type::Path => Value::Str(String::new()),
        Type::Int => Value::Int(0),
        Type::Float => Value::Float(0.0),
        Type::Bool => Value::Bool(false),
        Type::Any | Type::Invalid(_) => Value::Null,
        Type::List(_) => Value::List(Vec::new()),
        Type::Dict(_) => Value::Map(IndexMap::new()),
        Type::Named(name) => match program.type_decl(name).map(|(_, d)| &d.kind) {
            Some(TypeKind::Object(fields)) if depth < 16 => Value::Map(
                fields
                    .iter()
                    .map(|f| {
                        let v = match (&f.default, &f.ty) {
                            (Some(d), Some(t)) => conform(program, d.clone(), t),
                            (Some(d), None) => d.clone(),
                            (None, Some(t)) => zero_value(program, t, depth + 1),
                            (None, None) => Value::Null,
                        };
                        (f.name.clone(), v)
                    })
                    .collect(),
            ),
            Some(_) => Value::Null,
            None if name == "outcome" => outcome(false, "", "", Value::Null),
            None => Value::Null,
        },
    }
}

/// The built-in `outcome` object: `{ok, error, output, value}`.
pub(crate) fn outcome(ok: bool, error: &str, output: &str, value: Value) -> Value {
    let mut m = IndexMap::with_capacity(4);
    m.insert("ok".to_owned(), Value::Bool(ok));
    m.insert("error".to_owned(), Value::Str(error.to_owned()));
    m.insert("output".to_owned(), Value::Str(output.to_owned()));
    m.insert("value".to_owned(), value);
    Value::Map(m)
}

/// Converts a value to a carry's type where the conversion is lossless and unambiguous (a
/// number in a string to an `int`, `"true"` to a `bool`, an int to a float, any scalar to a
/// `str` for a `str` carry); anything else is kept as it is.
pub(crate) fn conform(program: &Program, v: Value, ty: &Type) -> Value {
    match (ty, v) {
        (Type::Int, Value::Str(s)) => match s.trim().parse::<i64>() {
            Ok(i) => Value::Int(i),
            Err(_) => Value::Str(s),
        },
        (Type::Int, Value::Float(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
            Value::Int(f as i64)
        }
        (Type::Float, Value::Int(i)) => Value::Float(i as f64),
        (Type::Float, Value::Str(s)) => match s.trim().parse::<f64>() {
            Ok(f) if f.is_finite() => Value::Float(f),
            _ => Value::Str(s),
        },
        (Type::Bool, Value::Str(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => Value::Str(s),
        },
        (Type::Str | Type::Path, Value::Int(i)) => Value::Str(i.to_string()),
        (Type::Str | Type::Path, Value::Float(f)) => Value::Str(f.to_string()),
        (Type::Str | Type::Path, Value::Bool(b)) => Value::Str(b.to_string()),
        (Type::Named(n), Value::Str(s)) if n == "outcome" => {
            outcome(true, "", &s, Value::Str(s.clone()))
        }
        (Type::Named(n), v) if n == "outcome" && !is_outcome(&v) => {
            let output = match &v {
                Value::Str(s) => s.clone(),
                other => other.to_string(),
            };
            outcome(true, "", &output, v)
        }
        (Type::List(_), Value::Str(s)) => match serde_json::from_str::<serde_json::Value>(&s) {
            Ok(j @ serde_json::Value::Array(_)) => Value::from_json(&j),
            _ => Value::Str(s),
        },
        (Type::Dict(_), Value::Str(s)) => match serde_json::from_str::<serde_json::Value>(&s) {
            Ok(j @ serde_json::Value::Object(_)) => Value::from_json(&j),
            _ => Value::Str(s),
        },
        (Type::Named(n), Value::Str(s))
            if matches!(
                program.type_decl(n).map(|(_, d)| &d.kind),
                Some(TypeKind::Object(_))
            ) =>
        {
            match serde_json::from_str::<serde_json::Value>(&s) {
                Ok(j @ serde_json::Value::Object(_)) => Value::from_json(&j),
                _ => Value::Str(s),
            }
        }
        (_, v) => v,
    }
}

/// True for a map shaped like an `outcome` (it has a bool `ok`).
pub(crate) fn is_outcome(v: &Value) -> bool {
    matches!(v, Value::Map(m) if matches!(m.get("ok"), Some(Value::Bool(_))))
}

/// Why an invocation value does not fit its carry.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct InputError {
    /// The input's name.
    pub name: String,
    /// What is wrong and what to do.
    pub message: String,
}

/// Parses an invocation value (`--input name=value`) by the carry's declared type (see
/// [`parse_typed`]).
pub(crate) fn parse_input(
    program: &Program,
    name: &str,
    ty: Option<&Type>,
    text: &str,
) -> Result<Value, InputError> {
    parse_typed(program, ty, text).map_err(|e| InputError {
        name: name.to_owned(),
        message: format!(
            "input `{name}` is declared `{}`, and `{text}` is not {}: pass `--input {name}=<{}>`",
            ty.map_or("any".to_owned(), Type::to_string),
            e.what,
            e.what
        ),
    })
}

/// What a text given for a typed carry must be, in words and by example.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Expected {
    /// `an integer`, `true or false`, `one of low, high`, …
    pub what: String,
    /// A text that parses: `42`, `true`, `low`, `'["a", "b"]'` (quoted for a shell).
    pub example: String,
}

/// What a text given for a carry of type `ty` must be; `None` when any text is (`str`,
/// `path`, `any`, no type).
pub(crate) fn expected(program: &Program, ty: Option<&Type>) -> Option<Expected> {
    let (what, example) = match ty? {
        Type::Str | Type::Path | Type::Any | Type::Invalid(_) => return None,
        Type::Int => ("an integer".to_owned(), "42".to_owned()),
        Type::Float => ("a number".to_owned(), "0.5".to_owned()),
        Type::Bool => ("true or false".to_owned(), "true".to_owned()),
        Type::List(_) => ("a JSON list".to_owned(), r#"'["a", "b"]'"#.to_owned()),
        Type::Dict(_) => (
            "a JSON object".to_owned(),
            r#"'{"key": "value"}'"#.to_owned(),
        ),
        Type::Named(n) => match program.type_decl(n).map(|(_, d)| &d.kind) {
            Some(TypeKind::Enum(members)) => {
                let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
                let first = names.first().copied().unwrap_or_default().to_owned();
                (format!("one of {}", names.join(", ")), first)
            }
            _ => (
                "a JSON object".to_owned(),
                r#"'{"key": "value"}'"#.to_owned(),
            ),
        },
    };
    Some(Expected { what, example })
}

/// Parses a text given for a carry of type `ty` (an invocation value, a human's answer): text
/// for `str`/`path`, a number, `true`/`false` (or yes/no, 1/0), a member of an enum, JSON for
/// lists, dicts and objects; `any` takes JSON when the text is JSON and text otherwise. A
/// refusal says what the text must be ([`expected`]).
pub(crate) fn parse_typed(
    program: &Program,
    ty: Option<&Type>,
    text: &str,
) -> Result<Value, Expected> {
    let bad = || {
        expected(program, ty).unwrap_or_else(|| Expected {
            what: "a value".to_owned(),
            example: "TEXT".to_owned(),
        })
    };
    let Some(ty) = ty else {
        return Ok(json_or_text(text));
    };
    match ty {
        Type::Str | Type::Path => Ok(Value::Str(text.to_owned())),
        Type::Int => text
            .trim()
            .parse::<i64>()
            .map(Value::Int)
            .map_err(|_| bad()),
        Type::Float => match text.trim().parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Value::Float(f)),
            _ => Err(bad()),
        },
        Type::Bool => match text.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" => Ok(Value::Bool(true)),
            "false" | "no" | "0" => Ok(Value::Bool(false)),
            _ => Err(bad()),
        },
        Type::Any | Type::Invalid(_) => Ok(json_or_text(text)),
        Type::List(_) => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(j @ serde_json::Value::Array(_)) => Ok(Value::from_json(&j)),
            _ => Err(bad()),
        },
        Type::Dict(_) => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(j @ serde_json::Value::Object(_)) => Ok(Value::from_json(&j)),
            _ => Err(bad()),
        },
        Type::Named(n) => match program.type_decl(n).map(|(_, d)| &d.kind) {
            Some(TypeKind::Enum(members)) => {
                let t = text.trim();
                let t = t.strip_prefix(&format!("{n}.")).unwrap_or(t);
                if members.iter().any(|m| m.name == t) {
                    Ok(Value::Str(t.to_owned()))
                } else {
                    Err(bad())
                }
            }
            _ => match serde_json::from_str::<serde_json::Value>(text) {
                Ok(j @ serde_json::Value::Object(_)) => Ok(Value::from_json(&j)),
                _ => Err(bad()),
            },
        },
    }
}

fn json_or_text(text: &str) -> Value {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(j) if !j.is_string() => Value::from_json(&j),
        _ => Value::Str(text.to_owned()),
    }
}
