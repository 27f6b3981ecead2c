//! Evaluating AGX (expressions.md §4–§6): strictly typed, no truthiness, no coercion; every
//! failure an [`EvalError`], never a panic.

use super::{BinOp, Expr, UnOp};
use serde_json::Value as Json;

/// What an expression can read while it is evaluated.
pub trait Env {
    /// The value at a dotted path (`params.x`, `nodes.a.outputs.b`); `None` when absent (read as
    /// `null`).
    fn lookup(&self, path: &[String]) -> Option<Json>;
    /// The terminal state of a node in the current scope (`succeeded`, `failed`, `skipped`, …).
    fn state(&self, node: &str) -> Option<String>;
}

/// An evaluation error (expressions.md §6).
#[derive(Clone, Debug, PartialEq)]
pub struct EvalError(pub String);

type R = Result<Json, EvalError>;

fn err<T>(msg: impl Into<String>) -> Result<T, EvalError> {
    Err(EvalError(msg.into()))
}

/// Evaluates `e` in `env`.
pub fn eval(e: &Expr, env: &dyn Env) -> R {
    match e {
        Expr::Lit(v) => Ok(v.clone()),
        Expr::List(items) => items
            .iter()
            .map(|i| eval(i, env))
            .collect::<Result<_, _>>()
            .map(Json::Array),
        Expr::Ref { path, .. } => Ok(env.lookup(path).unwrap_or(Json::Null)),
        Expr::Unary(UnOp::Not, a) => match eval(a, env)? {
            Json::Bool(b) => Ok(Json::Bool(!b)),
            other => err(format!("`!` needs a boolean, found {}", kind(&other))),
        },
        Expr::Unary(UnOp::Neg, a) => match eval(a, env)? {
            Json::Number(n) => num(-n.as_f64().unwrap_or(0.0), n.is_i64()),
            other => err(format!("unary `-` needs a number, found {}", kind(&other))),
        },
        Expr::Binary(BinOp::And, a, b) => match eval(a, env)? {
            Json::Bool(false) => Ok(Json::Bool(false)),
            Json::Bool(true) => boolean(eval(b, env)?, "&&"),
            other => err(format!("`&&` needs booleans, found {}", kind(&other))),
        },
        Expr::Binary(BinOp::Or, a, b) => match eval(a, env)? {
            Json::Bool(true) => Ok(Json::Bool(true)),
            Json::Bool(false) => boolean(eval(b, env)?, "||"),
            other => err(format!("`||` needs booleans, found {}", kind(&other))),
        },
        Expr::Binary(op, a, b) => binary(*op, eval(a, env)?, eval(b, env)?),
        Expr::Call { name, args, .. } => call(name, args, env),
    }
}

fn boolean(v: Json, op: &str) -> R {
    match v {
        Json::Bool(_) => Ok(v),
        other => err(format!("`{op}` needs booleans, found {}", kind(&other))),
    }
}

fn kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

fn num(f: f64, int: bool) -> R {
    if int && f.fract() == 0.0 && f.abs() < 9.0e15 {
        #[allow(clippy::cast_possible_truncation)]
        return Ok(Json::from(f as i64));
    }
    serde_json::Number::from_f64(f)
        .map(Json::Number)
        .ok_or_else(|| EvalError("the result is not a finite number".into()))
}

fn binary(op: BinOp, a: Json, b: Json) -> R {
    use std::cmp::Ordering;
    match op {
        BinOp::Eq => Ok(Json::Bool(equal(&a, &b))),
        BinOp::Ne => Ok(Json::Bool(!equal(&a, &b))),
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
            let ord = match (&a, &b) {
                (Json::Number(x), Json::Number(y)) => x
                    .as_f64()
                    .partial_cmp(&y.as_f64())
                    .unwrap_or(Ordering::Equal),
                (Json::String(x), Json::String(y)) => x.cmp(y),
                _ => return err(format!("cannot order {} and {}", kind(&a), kind(&b))),
            };
            Ok(Json::Bool(match op {
                BinOp::Lt => ord == Ordering::Less,
                BinOp::Le => ord != Ordering::Greater,
                BinOp::Gt => ord == Ordering::Greater,
                _ => ord != Ordering::Less,
            }))
        }
        BinOp::In => contains(&b, &a),
        BinOp::Add => match (a, b) {
            (Json::String(x), Json::String(y)) => Ok(Json::String(x + &y)),
            (Json::Array(mut x), Json::Array(y)) => {
                x.extend(y);
                Ok(Json::Array(x))
            }
            (Json::Number(x), Json::Number(y)) => arith(op, &x, &y),
            (x, y) => err(format!("cannot add {} and {}", kind(&x), kind(&y))),
        },
        _ => match (a, b) {
            (Json::Number(x), Json::Number(y)) => arith(op, &x, &y),
            (x, y) => err(format!(
                "arithmetic needs numbers, found {} and {}",
                kind(&x),
                kind(&y)
            )),
        },
    }
}

fn equal(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn arith(op: BinOp, x: &serde_json::Number, y: &serde_json::Number) -> R {
    let int = x.is_i64() && y.is_i64();
    let (a, b) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
    if matches!(op, BinOp::Div | BinOp::Mod) && b == 0.0 {
        return err("division by zero");
    }
    match op {
        BinOp::Add => num(a + b, int),
        BinOp::Sub => num(a - b, int),
        BinOp::Mul => num(a * b, int),
        BinOp::Div => num(a / b, int && (a / b).fract() == 0.0),
        _ => num(a % b, int),
    }
}

fn contains(hay: &Json, needle: &Json) -> R {
    match (hay, needle) {
        (Json::Array(items), n) => Ok(Json::Bool(items.iter().any(|i| equal(i, n)))),
        (Json::String(s), Json::String(n)) => Ok(Json::Bool(s.contains(n.as_str()))),
        (Json::Object(m), Json::String(k)) => Ok(Json::Bool(m.contains_key(k))),
        _ => err(format!("cannot look for {} in {}", kind(needle), kind(hay))),
    }
}

/// A value as template text: scalars directly, `null` as empty, the rest as compact JSON.
pub fn stringify(v: &Json) -> String {
    match v {
        Json::Null => String::new(),
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn text<'a>(v: &'a Json, f: &str) -> Result<&'a str, EvalError> {
    v.as_str()
        .ok_or_else(|| EvalError(format!("`{f}` needs a string, found {}", kind(v))))
}

fn call(name: &str, args: &[Expr], env: &dyn Env) -> R {
    if name == "default" {
        let v = eval(&args[0], env)?;
        return if v.is_null() {
            eval(&args[1], env)
        } else {
            Ok(v)
        };
    }
    let v: Vec<Json> = args
        .iter()
        .map(|a| eval(a, env))
        .collect::<Result<_, _>>()?;
    let arg = |i: usize| v.get(i).unwrap_or(&Json::Null);
    match name {
        "len" | "count" => match arg(0) {
            Json::Array(a) => Ok(Json::from(a.len())),
            Json::String(s) if name == "len" => Ok(Json::from(s.chars().count())),
            Json::Object(m) if name == "len" => Ok(Json::from(m.len())),
            other => err(format!("`{name}` cannot measure {}", kind(other))),
        },
        "contains" => contains(arg(0), arg(1)),
        "startswith" => Ok(Json::Bool(
            text(arg(0), name)?.starts_with(text(arg(1), name)?),
        )),
        "endswith" => Ok(Json::Bool(
            text(arg(0), name)?.ends_with(text(arg(1), name)?),
        )),
        "lower" => Ok(Json::String(text(arg(0), name)?.to_lowercase())),
        "upper" => Ok(Json::String(text(arg(0), name)?.to_uppercase())),
        "trim" => Ok(Json::String(text(arg(0), name)?.trim().to_owned())),
        "matches" => {
            let re = regex::RegexBuilder::new(text(arg(1), name)?)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| EvalError(format!("`matches`: bad pattern: {e}")))?;
            Ok(Json::Bool(re.is_match(text(arg(0), name)?)))
        }
        "split" => Ok(Json::Array(
            text(arg(0), name)?
                .split(text(arg(1), name)?)
                .map(|s| Json::String(s.to_owned()))
                .collect(),
        )),
        "join" => match arg(0) {
            Json::Array(items) => Ok(Json::String(
                items
                    .iter()
                    .map(stringify)
                    .collect::<Vec<_>>()
                    .join(text(arg(1), name)?),
            )),
            other => err(format!("`join` needs an array, found {}", kind(other))),
        },
        "int" | "float" | "bool" | "str" | "json" => convert(name, arg(0)),
        "get" => {
            let mut cur = arg(0).clone();
            for seg in text(arg(1), name)?.split('.') {
                cur = match &cur {
                    Json::Object(m) => m.get(seg).cloned().unwrap_or(Json::Null),
                    Json::Array(a) => seg
                        .parse::<usize>()
                        .ok()
                        .and_then(|i| a.get(i).cloned())
                        .unwrap_or(Json::Null),
                    _ => Json::Null,
                };
            }
            Ok(if cur.is_null() { arg(2).clone() } else { cur })
        }
        "any" | "all" => match arg(0) {
            Json::Array(items) => {
                let mut bools = Vec::with_capacity(items.len());
                for i in items {
                    bools.push(i.as_bool().ok_or_else(|| {
                        EvalError(format!("`{name}` needs booleans, found {}", kind(i)))
                    })?);
                }
                Ok(Json::Bool(if name == "any" {
                    bools.iter().any(|b| *b)
                } else {
                    bools.iter().all(|b| *b)
                }))
            }
            other => err(format!("`{name}` needs an array, found {}", kind(other))),
        },
        "succeeded" | "failed" | "skipped" => {
            let state = env.state(text(arg(0), name)?);
            Ok(Json::Bool(state.as_deref() == Some(name)))
        }
        "output" => {
            let path =
                ["nodes", text(arg(0), name)?, "outputs", text(arg(1), name)?].map(str::to_owned);
            Ok(env.lookup(&path).unwrap_or(Json::Null))
        }
        other => err(format!("`{other}` is not an AGX function")),
    }
}

fn convert(name: &str, v: &Json) -> R {
    let fail = || EvalError(format!("`{name}` cannot convert {}", kind(v)));
    match (name, v) {
        ("str", _) => Ok(Json::String(stringify(v))),
        ("json", Json::String(s)) => {
            serde_json::from_str(s).map_err(|e| EvalError(format!("`json`: {e}")))
        }
        ("bool", Json::Bool(_)) => Ok(v.clone()),
        ("bool", Json::String(s)) if s == "true" || s == "false" => Ok(Json::Bool(s == "true")),
        ("int", Json::Number(n)) => n
            .as_i64()
            .map(Json::from)
            .or_else(|| {
                #[allow(clippy::cast_possible_truncation)]
                n.as_f64().map(|f| Json::from(f.trunc() as i64))
            })
            .ok_or_else(fail),
        ("int", Json::String(s)) => s.trim().parse::<i64>().map(Json::from).map_err(|_| fail()),
        ("float", Json::Number(n)) => num(n.as_f64().unwrap_or(0.0), false),
        ("float", Json::String(s)) => s
            .trim()
            .parse::<f64>()
            .map_err(|_| fail())
            .and_then(|f| num(f, false)),
        _ => Err(fail()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;
    use serde_json::json;

    struct E;
    impl Env for E {
        fn lookup(&self, path: &[String]) -> Option<Json> {
            match path.join(".").as_str() {
                "nodes.a.outputs.n" => Some(json!(3)),
                "nodes.a.outputs.list" => Some(json!(["x", "auth"])),
                "params.s" => Some(json!("Hello")),
                _ => None,
            }
        }
        fn state(&self, node: &str) -> Option<String> {
            (node == "a").then(|| "succeeded".to_owned())
        }
    }

    fn run(src: &str) -> R {
        eval(&parse(src).unwrap(), &E)
    }

    #[test]
    fn evaluates_strictly_typed() {
        assert_eq!(
            run("nodes.a.outputs.n > 2 && succeeded('a')"),
            Ok(json!(true))
        );
        assert_eq!(run("'auth' in nodes.a.outputs.list"), Ok(json!(true)));
        assert_eq!(run("lower(params.s) + '!'"), Ok(json!("hello!")));
        assert_eq!(run("default(nodes.b.outputs.x, 7) * 2"), Ok(json!(14)));
        assert_eq!(run("all([])"), Ok(json!(true)));
        assert!(run("'a' < 1").is_err());
        assert!(run("1 / 0").is_err());
        assert!(run("params.s && true").is_err());
        assert_eq!(run("1 == '1'"), Ok(json!(false)));
        assert_eq!(run("1.0 == 1"), Ok(json!(true)));
    }
}
