//! The library's run-time behaviour: each builtin on evaluated arguments, within the budget.

use super::Category;
use super::ExprError;
use super::library::{Builtin, type_err, value_err};
use super::ops::{Ctx, equal, order, to_text, truthy};
use crate::source::Pos;
use crate::value::Value;
use std::cmp::Ordering;

fn want_str(b: Builtin, v: &Value, pos: Pos) -> Result<&str, ExprError> {
    v.as_str().ok_or_else(|| {
        type_err(
            pos,
            format!("{} needs a str, not a {}", b.spelled(), v.kind_name()),
        )
    })
}

fn want_list(b: Builtin, v: &Value, pos: Pos) -> Result<&[Value], ExprError> {
    match v {
        Value::List(l) => Ok(l),
        other => Err(type_err(
            pos,
            format!("{} needs a list, not a {}", b.spelled(), other.kind_name()),
        )),
    }
}

fn str_list(parts: Vec<String>, pos: Pos, cx: &mut Ctx) -> Result<Value, ExprError> {
    cx.new_collection(parts.len(), pos)?;
    let mut out = Vec::with_capacity(parts.len());
    for p in parts {
        cx.new_str(p.len(), pos)?;
        out.push(Value::Str(p));
    }
    Ok(Value::List(out))
}

/// Sorts values of one orderable kind; anything else is a type error (checked before sorting,
/// so the comparator is a total order and sorting cannot panic).
fn sort_values(
    b: Builtin,
    items: &[Value],
    pos: Pos,
    cx: &mut Ctx,
) -> Result<Vec<Value>, ExprError> {
    let numeric = |v: &Value| matches!(v, Value::Int(_) | Value::Float(_));
    let all_num = items.iter().all(numeric);
    let all_str = items.iter().all(|v| matches!(v, Value::Str(_)));
    let all_bool = items.iter().all(|v| matches!(v, Value::Bool(_)));
    if !(all_num || all_str || all_bool) {
        return Err(type_err(
            pos,
            format!(
                "{} needs items of one orderable kind (numbers, strings or bools)",
                b.spelled()
            ),
        ));
    }
    if items
        .iter()
        .any(|v| matches!(v, Value::Float(f) if f.is_nan()))
    {
        return Err(value_err(pos, "NaN cannot be ordered"));
    }
    let n = items.len() as u64;
    cx.tick(n.saturating_mul(64 - n.leading_zeros() as u64 + 1), pos)?;
    cx.new_collection(items.len(), pos)?;
    for v in items {
        cx.charge_value(v, pos)?;
    }
    let mut out = items.to_vec();
    out.sort_by(|a, b| {
        super::ops::num_cmp(a, b)
            .flatten()
            .unwrap_or_else(|| match (a, b) {
                (Value::Str(x), Value::Str(y)) => x.cmp(y),
                (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
                _ => Ordering::Equal,
            })
    });
    Ok(out)
}

fn extreme<'v>(
    b: Builtin,
    mut items: impl Iterator<Item = &'v Value>,
    pos: Pos,
    cx: &mut Ctx,
) -> Result<Value, ExprError> {
    let Some(first) = items.next() else {
        return Err(value_err(
            pos,
            format!("{} of an empty list has no value", b.spelled()),
        ));
    };
    let mut best = first;
    for v in items {
        cx.tick(1, pos)?;
        let ord = order(v, best, pos, cx)?;
        let better = if b == Builtin::Min {
            ord == Ordering::Less
        } else {
            ord == Ordering::Greater
        };
        if better {
            best = v;
        }
    }
    cx.charge_value(best, pos)?;
    Ok(best.clone())
}

/// Python's `round`: to the nearest integer, ties to even.
fn round_int(x: f64, pos: Pos) -> Result<Value, ExprError> {
    float_to_int(x.round_ties_even(), pos)
}

fn float_to_int(x: f64, pos: Pos) -> Result<Value, ExprError> {
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    if !(-TWO63..TWO63).contains(&x) {
        return Err(value_err(
            pos,
            format!("{x:?} does not fit a 64-bit integer"),
        ));
    }
    Ok(Value::Int(x.trunc() as i64))
}

fn search(
    b: Builtin,
    hay: &Value,
    needle: &Value,
    pos: Pos,
    cx: &mut Ctx,
) -> Result<Value, ExprError> {
    match hay {
        Value::Str(s) => {
            let sub = want_str(b, needle, pos)?;
            cx.tick_bytes(s.len(), pos)?;
            Ok(match b {
                Builtin::Contains => Value::Bool(s.contains(sub)),
                Builtin::Find => Value::Int(match s.find(sub) {
                    Some(byte) => s[..byte].chars().count() as i64,
                    None => -1,
                }),
                _ if sub.is_empty() => Value::Int(s.chars().count() as i64 + 1),
                _ => Value::Int(s.matches(sub).count() as i64),
            })
        }
        Value::List(items) => {
            let mut count = 0i64;
            for (i, item) in items.iter().enumerate() {
                cx.tick(1, pos)?;
                // Items of another kind are simply not the one looked for.
                let same = match equal(item, needle, pos, cx, 0) {
                    Ok(same) => same,
                    Err(e) if e.category == Category::TypeError => false,
                    Err(e) => return Err(e),
                };
                if same {
                    match b {
                        Builtin::Contains => return Ok(Value::Bool(true)),
                        Builtin::Index => return Ok(Value::Int(i as i64)),
                        _ => count += 1,
                    }
                }
            }
            match b {
                Builtin::Contains => Ok(Value::Bool(false)),
                Builtin::Index => Err(value_err(pos, format!("{needle} is not in the list"))),
                _ => Ok(Value::Int(count)),
            }
        }
        Value::Map(map) if b == Builtin::Contains => {
            let key = want_str(b, needle, pos)?;
            Ok(Value::Bool(map.contains_key(key)))
        }
        other => Err(type_err(
            pos,
            format!("{} cannot search a {}", b.spelled(), other.kind_name()),
        )),
    }
}

/// Calls a builtin on evaluated arguments (already arity-checked statically).
pub(crate) fn call(
    b: Builtin,
    args: &[&Value],
    pos: Pos,
    cx: &mut Ctx,
) -> Result<Value, ExprError> {
    let null = Value::Null;
    let arg = |i: usize| args.get(i).copied().unwrap_or(&null);
    cx.tick(1, pos)?;
    match b {
        Builtin::Len
        | Builtin::Str
        | Builtin::Int
        | Builtin::Float
        | Builtin::Bool
        | Builtin::Abs
        | Builtin::Round => convert(b, arg(0), pos, cx),
        Builtin::Min
        | Builtin::Max
        | Builtin::Sum
        | Builtin::Sorted
        | Builtin::Reversed
        | Builtin::Any
        | Builtin::All => aggregate(b, args, pos, cx),
        Builtin::Lower
        | Builtin::Upper
        | Builtin::Strip
        | Builtin::Lstrip
        | Builtin::Rstrip
        | Builtin::Split
        | Builtin::Splitlines
        | Builtin::Join
        | Builtin::Replace
        | Builtin::Startswith
        | Builtin::Endswith
        | Builtin::Isdigit
        | Builtin::Isalpha
        | Builtin::Isspace => text(b, args, pos, cx),
        Builtin::Contains | Builtin::Count | Builtin::Find | Builtin::Index => {
            search(b, arg(0), arg(1), pos, cx)
        }
        Builtin::Keys | Builtin::Values | Builtin::Items | Builtin::Get => dict(b, args, pos, cx),
    }
}

/// `len`, the conversions (`str`, `int`, `float`, `bool`) and the numeric `abs`, `round`.
fn convert(b: Builtin, a0: &Value, pos: Pos, cx: &mut Ctx) -> Result<Value, ExprError> {
    Ok(match b {
        Builtin::Len => Value::Int(match a0 {
            Value::Str(s) => {
                cx.tick_bytes(s.len(), pos)?;
                s.chars().count() as i64
            }
            Value::List(l) => l.len() as i64,
            Value::Map(m) => m.len() as i64,
            other => {
                return Err(type_err(
                    pos,
                    format!(
                        "`len()` needs a str, list or dict, not a {}",
                        other.kind_name()
                    ),
                ));
            }
        }),
        Builtin::Str => {
            let s = to_text(a0, pos, cx)?;
            cx.new_str(s.len(), pos)?;
            Value::Str(s)
        }
        Builtin::Int => match a0 {
            Value::Int(i) => Value::Int(*i),
            Value::Bool(x) => Value::Int(i64::from(*x)),
            Value::Float(f) => float_to_int(*f, pos)?,
            Value::Str(s) => s.trim().parse::<i64>().map(Value::Int).map_err(|_| {
                value_err(
                    pos,
                    format!("`int()` cannot read {:?} as an integer", clip(s)),
                )
            })?,
            other => {
                return Err(type_err(
                    pos,
                    format!("`int()` cannot convert a {}", other.kind_name()),
                ));
            }
        },
        Builtin::Float => match a0 {
            Value::Int(i) => Value::Float(*i as f64),
            Value::Float(f) => Value::Float(*f),
            Value::Bool(x) => Value::Float(f64::from(u8::from(*x))),
            Value::Str(s) => match s.trim().parse::<f64>() {
                Ok(f) if f.is_finite() => Value::Float(f),
                _ => {
                    return Err(value_err(
                        pos,
                        format!("`float()` cannot read {:?} as a finite number", clip(s)),
                    ));
                }
            },
            other => {
                return Err(type_err(
                    pos,
                    format!("`float()` cannot convert a {}", other.kind_name()),
                ));
            }
        },
        Builtin::Bool => Value::Bool(truthy(a0)),
        Builtin::Abs => match a0 {
            Value::Int(i) => Value::Int(
                i.checked_abs()
                    .ok_or_else(|| value_err(pos, "integer overflow in `abs()`"))?,
            ),
            Value::Float(f) => Value::Float(f.abs()),
            other => {
                return Err(type_err(
                    pos,
                    format!("`abs()` needs a number, not a {}", other.kind_name()),
                ));
            }
        },
        // The last builtins `call` routes here: Builtin::Round.
        _ => match a0 {
            Value::Int(i) => Value::Int(*i),
            Value::Float(f) => round_int(*f, pos)?,
            other => {
                return Err(type_err(
                    pos,
                    format!("`round()` needs a number, not a {}", other.kind_name()),
                ));
            }
        },
    })
}

/// The list builtins: `min`, `max`, `sum`, `sorted`, `reversed`, `any`, `all`.
fn aggregate(b: Builtin, args: &[&Value], pos: Pos, cx: &mut Ctx) -> Result<Value, ExprError> {
    let null = Value::Null;
    let a0 = args.first().copied().unwrap_or(&null);
    Ok(match b {
        Builtin::Min | Builtin::Max => {
            if args.len() == 1 {
                extreme(b, want_list(b, a0, pos)?.iter(), pos, cx)?
            } else {
                extreme(b, args.iter().copied(), pos, cx)?
            }
        }
        Builtin::Sum => {
            let mut acc = Value::Int(0);
            for v in want_list(b, a0, pos)? {
                cx.tick(1, pos)?;
                if !matches!(v, Value::Int(_) | Value::Float(_)) {
                    return Err(type_err(
                        pos,
                        format!("`sum()` needs numbers, not a {}", v.kind_name()),
                    ));
                }
                acc = super::ops::arith(super::ast::BinOp::Add, &acc, v, pos, cx)?;
            }
            acc
        }
        Builtin::Sorted => Value::List(sort_values(b, want_list(b, a0, pos)?, pos, cx)?),
        Builtin::Reversed => {
            let l = want_list(b, a0, pos)?;
            cx.charge_value(a0, pos)?;
            Value::List(l.iter().rev().cloned().collect())
        }
        // The last builtins `call` routes here: Builtin::Any | Builtin::All.
        _ => {
            let want = b == Builtin::Any;
            for v in want_list(b, a0, pos)? {
                cx.tick(1, pos)?;
                match v {
                    Value::Bool(x) if *x == want => return Ok(Value::Bool(want)),
                    Value::Bool(_) => {}
                    other => {
                        return Err(type_err(
                            pos,
                            format!("{} needs bools, not a {}", b.spelled(), other.kind_name()),
                        ));
                    }
                }
            }
            Value::Bool(!want)
        }
    })
}

/// The string methods.
fn text(b: Builtin, args: &[&Value], pos: Pos, cx: &mut Ctx) -> Result<Value, ExprError> {
    let null = Value::Null;
    let arg = |i: usize| args.get(i).copied().unwrap_or(&null);
    let a0 = arg(0);
    Ok(match b {
        Builtin::Lower | Builtin::Upper => {
            let s = want_str(b, a0, pos)?;
            // Case mapping can grow a string (at most threefold); charge what it produced.
            cx.tick_bytes(s.len(), pos)?;
            let out = if b == Builtin::Lower {
                s.to_lowercase()
            } else {
                s.to_uppercase()
            };
            cx.new_str(out.len(), pos)?;
            Value::Str(out)
        }
        Builtin::Strip | Builtin::Lstrip | Builtin::Rstrip => {
            let s = want_str(b, a0, pos)?;
            cx.tick_bytes(s.len(), pos)?;
            let chars: Option<Vec<char>> = match arg(1) {
                Value::Null => None,
                v => Some(want_str(b, v, pos)?.chars().collect()),
            };
            let is_strip = |c: char| match &chars {
                Some(set) => set.contains(&c),
                None => c.is_whitespace(),
            };
            let out = match b {
                Builtin::Lstrip => s.trim_start_matches(is_strip),
                Builtin::Rstrip => s.trim_end_matches(is_strip),
                _ => s.trim_matches(is_strip),
            };
            cx.new_str(out.len(), pos)?;
            Value::Str(out.to_owned())
        }
        Builtin::Split => {
            let s = want_str(b, a0, pos)?;
            cx.tick_bytes(s.len(), pos)?;
            let parts: Vec<String> = match arg(1) {
                Value::Null => s.split_whitespace().map(str::to_owned).collect(),
                v => {
                    let sep = want_str(b, v, pos)?;
                    if sep.is_empty() {
                        return Err(value_err(pos, "`.split()` needs a non-empty separator"));
                    }
                    let n = s.matches(sep).count();
                    cx.new_collection(n + 1, pos)?;
                    s.split(sep).map(str::to_owned).collect()
                }
            };
            str_list(parts, pos, cx)?
        }
        Builtin::Splitlines => {
            let s = want_str(b, a0, pos)?;
            cx.tick_bytes(s.len(), pos)?;
            str_list(s.lines().map(str::to_owned).collect(), pos, cx)?
        }
        Builtin::Join => {
            let sep = want_str(b, a0, pos)?;
            let items = want_list(b, arg(1), pos)?;
            let mut len = sep.len().saturating_mul(items.len().saturating_sub(1));
            for v in items {
                cx.tick(1, pos)?;
                len = len.saturating_add(want_str(b, v, pos)?.len());
            }
            cx.new_str(len, pos)?;
            let mut out = String::with_capacity(len);
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(sep);
                }
                out.push_str(v.as_str().unwrap_or_default());
            }
            Value::Str(out)
        }
        Builtin::Replace => {
            let s = want_str(b, a0, pos)?;
            let old = want_str(b, arg(1), pos)?;
            let new = want_str(b, arg(2), pos)?;
            cx.tick_bytes(s.len(), pos)?;
            let n = if old.is_empty() {
                s.chars().count() + 1
            } else {
                s.matches(old).count()
            };
            let len = s
                .len()
                .saturating_sub(n.saturating_mul(old.len()))
                .saturating_add(n.saturating_mul(new.len()));
            cx.new_str(len, pos)?;
            Value::Str(s.replace(old, new))
        }
        Builtin::Startswith | Builtin::Endswith => {
            let s = want_str(b, a0, pos)?;
            let affix = want_str(b, arg(1), pos)?;
            Value::Bool(if b == Builtin::Startswith {
                s.starts_with(affix)
            } else {
                s.ends_with(affix)
            })
        }
        // The last builtins `call` routes here: `isdigit`, `isalpha`, `isspace`.
        _ => {
            let s = want_str(b, a0, pos)?;
            cx.tick_bytes(s.len(), pos)?;
            let test: fn(char) -> bool = match b {
                Builtin::Isdigit => |c| c.is_ascii_digit(),
                Builtin::Isalpha => char::is_alphabetic,
                _ => char::is_whitespace,
            };
            Value::Bool(!s.is_empty() && s.chars().all(test))
        }
    })
}

/// The dict methods: `.keys()`, `.values()`, `.items()`, `.get()`.
fn dict(b: Builtin, args: &[&Value], pos: Pos, cx: &mut Ctx) -> Result<Value, ExprError> {
    let null = Value::Null;
    let arg = |i: usize| args.get(i).copied().unwrap_or(&null);
    let a0 = arg(0);
    Ok(match b {
        Builtin::Keys | Builtin::Values | Builtin::Items => {
            let Value::Map(map) = a0 else {
                return Err(type_err(
                    pos,
                    format!("{} needs a dict, not a {}", b.spelled(), a0.kind_name()),
                ));
            };
            cx.new_collection(map.len(), pos)?;
            if b != Builtin::Keys {
                cx.charge_value(a0, pos)?;
            }
            Value::List(match b {
                Builtin::Keys => map.keys().map(|k| Value::Str(k.clone())).collect(),
                Builtin::Values => map.values().cloned().collect(),
                _ => map
                    .iter()
                    .map(|(k, v)| Value::List(vec![Value::Str(k.clone()), v.clone()]))
                    .collect(),
            })
        }
        // The last builtins `call` routes here: Builtin::Get.
        _ => {
            let Value::Map(map) = a0 else {
                return Err(type_err(
                    pos,
                    format!("`.get()` needs a dict, not a {}", a0.kind_name()),
                ));
            };
            let key = want_str(b, arg(1), pos)?;
            let found = map.get(key).unwrap_or(arg(2));
            cx.charge_value(found, pos)?;
            found.clone()
        }
    })
}

/// A short form of a long string, for messages.
fn clip(s: &str) -> String {
    if s.chars().count() > 40 {
        let head: String = s.chars().take(40).collect();
        format!("{head}…")
    } else {
        s.to_owned()
    }
}
