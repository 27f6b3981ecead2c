//! Whether a value read back from a journal or a resume handle fits its carry's declared type:
//! a pause record is hostile input (a file on disk), and a resume continues only with carries
//! of the types the program declares — never a `str` carry holding an object.

use ais_core::{Program, Type, TypeKind, Value};

/// How deep a value is followed (deeper values are taken as they are: the model's answers are
/// bounded at 128 levels, and a record this deep was not written by a run of these types).
const MAX_DEPTH: usize = 64;

/// `Ok` when `v` can be a value of `ty` in `program`; else what it is instead, e.g. ``an object,
/// not `str` ``. `null` fits every type (a carry not yet produced: an enum, `any`, an optional
/// field); an `int` fits a `float`; a declared object may carry fields it does not declare,
/// and the `{ok, error, output}` error value fits `outcome`, `dict` and `any`.
pub(crate) fn fits(program: &Program, ty: &Type, v: &Value) -> Result<(), String> {
    fits_at(program, ty, v, 0)
}

fn fits_at(program: &Program, ty: &Type, v: &Value, depth: usize) -> Result<(), String> {
    let wrong = || Err(format!("{} {}, not `{ty}`", article(v), v.kind_name()));
    if matches!(v, Value::Null) || depth > MAX_DEPTH {
        return Ok(());
    }
    match ty {
        Type::Any | Type::Invalid(_) => Ok(()),
        Type::Str | Type::Path => match v {
            Value::Str(_) => Ok(()),
            _ => wrong(),
        },
        Type::Int => match v {
            Value::Int(_) => Ok(()),
            _ => wrong(),
        },
        Type::Float => match v {
            Value::Int(_) | Value::Float(_) => Ok(()),
            _ => wrong(),
        },
        Type::Bool => match v {
            Value::Bool(_) => Ok(()),
            _ => wrong(),
        },
        Type::List(item) => match v {
            Value::List(items) => match item {
                Some(t) => items.iter().enumerate().try_for_each(|(i, x)| {
                    fits_at(program, t, x, depth + 1).map_err(|e| format!("[{i}] is {e}"))
                }),
                None => Ok(()),
            },
            _ => wrong(),
        },
        Type::Dict(value) => match v {
            Value::Map(m) => match value {
                Some(t) => m.iter().try_for_each(|(k, x)| {
                    fits_at(program, t, x, depth + 1).map_err(|e| format!("[{k:?}] is {e}"))
                }),
                None => Ok(()),
            },
            _ => wrong(),
        },
        Type::Named(name) => match program.type_decl(name).map(|(_, d)| &d.kind) {
            Some(TypeKind::Enum(members)) => match v {
                Value::Str(s) if members.iter().any(|m| &m.name == s) => Ok(()),
                Value::Str(s) => Err(format!("`{s}`, no member of `{name}`")),
                _ => wrong(),
            },
            Some(TypeKind::Object(fields)) => match v {
                Value::Map(m) => fields
                    .iter()
                    .try_for_each(|f| match (m.get(&f.name), &f.ty) {
                        (Some(x), Some(t)) => fits_at(program, t, x, depth + 1)
                            .map_err(|e| format!(".{} is {e}", f.name)),
                        _ => Ok(()),
                    }),
                _ => wrong(),
            },
            Some(TypeKind::Unknown(_)) => Ok(()),
            None if name == "outcome" => match v {
                Value::Map(m) if matches!(m.get("ok"), Some(Value::Bool(_))) => Ok(()),
                _ => wrong(),
            },
            None => Ok(()),
        },
    }
}

fn article(v: &Value) -> &'static str {
    match v {
        Value::Int(_) => "an",
        _ => "a",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mistyped_values_are_named() {
        let program = ais_core::agir::read(
            "types:\n  Color: {kind: enum, members: [red, blue]}\n  P: {kind: object, fields: {n: {type: int}}}\nwalker:\n  carries:\n    task: {type: str, role: input}\nnodes:\n  - {id: done, type: TERMINAL, reads: [task]}\n",
        )
        .unwrap()
        .program;
        let v = |j: serde_json::Value| Value::from_json(&j);
        use serde_json::json;
        let ok = |t: &str, j| fits(&program, &Type::parse(t), &v(j));
        assert_eq!(ok("str", json!("x")), Ok(()));
        assert_eq!(ok("str", json!(null)), Ok(()));
        assert_eq!(ok("str", json!({"a": 1})), Err("a dict, not `str`".into()));
        assert_eq!(ok("str", json!(5)), Err("an int, not `str`".into()));
        assert_eq!(ok("float", json!(5)), Ok(()));
        assert_eq!(
            ok("list[int]", json!([1, "2"])),
            Err("[1] is a str, not `int`".into())
        );
        assert_eq!(ok("Color", json!("red")), Ok(()));
        assert!(ok("Color", json!("green")).is_err());
        assert_eq!(ok("P", json!({"n": 1, "extra": true})), Ok(()));
        assert_eq!(
            ok("P", json!({"n": "one"})),
            Err(".n is a str, not `int`".into())
        );
        assert_eq!(ok("outcome", json!({"ok": false, "error": "e"})), Ok(()));
        assert!(ok("outcome", json!("text")).is_err());
        assert_eq!(ok("any", json!({"x": [1]})), Ok(()));
    }
}
