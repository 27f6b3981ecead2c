//! Run-time operations on values: the budget, equality, ordering, arithmetic, truthiness and
//! conversion to text. Every one returns an error with a category instead of panicking.

use super::ast::BinOp;
use super::limits::Limits;
use super::{Category, ExprError};
use crate::source::Pos;
use crate::value::Value;
use std::cmp::Ordering;

/// How deep a value may be for the recursive operations (equality, ordering, text).
const MAX_VALUE_DEPTH: usize = 128;

pub(crate) fn rt_err(category: Category, pos: Pos, message: impl Into<String>) -> ExprError {
    ExprError::new(category, pos, message)
}

/// The running budget of one evaluation.
pub(crate) struct Ctx<'l> {
    pub(crate) limits: &'l Limits,
    ops: u64,
    alloc: u64,
}

impl<'l> Ctx<'l> {
    #[inline]
    pub(crate) fn new(limits: &'l Limits) -> Self {
        Ctx {
            limits,
            ops: 0,
            alloc: 0,
        }
    }

    /// Counts `n` operations.
    #[inline]
    pub(crate) fn tick(&mut self, n: u64, pos: Pos) -> Result<(), ExprError> {
        self.ops = self.ops.saturating_add(n);
        if self.ops > self.limits.max_operations {
            return Err(rt_err(
                Category::LimitError,
                pos,
                format!(
                    "evaluation took more than {} operations",
                    self.limits.max_operations
                ),
            ));
        }
        Ok(())
    }

    /// Counts work proportional to `bytes` bytes (one operation per 64).
    #[inline]
    pub(crate) fn tick_bytes(&mut self, bytes: usize, pos: Pos) -> Result<(), ExprError> {
        self.tick(1 + (bytes as u64) / 64, pos)
    }

    /// Charges `bytes` bytes of allocation.
    pub(crate) fn alloc(&mut self, bytes: usize, pos: Pos) -> Result<(), ExprError> {
        self.alloc = self.alloc.saturating_add(bytes as u64);
        if self.alloc > self.limits.max_allocation_bytes {
            return Err(rt_err(
                Category::LimitError,
                pos,
                format!(
                    "evaluation allocated more than {} bytes",
                    self.limits.max_allocation_bytes
                ),
            ));
        }
        Ok(())
    }

    /// Checks and charges a string of `len` bytes about to be produced.
    pub(crate) fn new_str(&mut self, len: usize, pos: Pos) -> Result<(), ExprError> {
        if len > self.limits.max_string_bytes {
            return Err(rt_err(
                Category::LimitError,
                pos,
                format!(
                    "a string of {len} bytes is longer than the limit of {}",
                    self.limits.max_string_bytes
                ),
            ));
        }
        self.tick_bytes(len, pos)?;
        self.alloc(len.saturating_add(24), pos)
    }

    /// Checks and charges a list or dict of `len` items about to be produced (the items'
    /// own storage is charged when they are produced).
    pub(crate) fn new_collection(&mut self, len: usize, pos: Pos) -> Result<(), ExprError> {
        if len > self.limits.max_collection_len {
            return Err(rt_err(
                Category::LimitError,
                pos,
                format!(
                    "a collection of {len} items is longer than the limit of {}",
                    self.limits.max_collection_len
                ),
            ));
        }
        self.tick(1 + len as u64, pos)?;
        self.alloc(len.saturating_mul(48).saturating_add(24), pos)
    }

    /// Charges a deep copy of `v` (one operation per node and per 64 bytes of text, and its
    /// size in bytes), before it is copied. Iterative, so any depth of value is safe.
    pub(crate) fn charge_value(&mut self, v: &Value, pos: Pos) -> Result<(), ExprError> {
        let mut stack = vec![v];
        while let Some(v) = stack.pop() {
            let bytes = match v {
                Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) => 16,
                Value::Str(s) => 24 + s.len(),
                Value::List(items) => {
                    stack.extend(items.iter());
                    24 + 16 * items.len()
                }
                Value::Map(map) => {
                    for (k, item) in map {
                        self.alloc(24 + k.len(), pos)?;
                        stack.push(item);
                    }
                    48 + 16 * map.len()
                }
            };
            self.tick_bytes(bytes, pos)?;
            self.alloc(bytes, pos)?;
        }
        Ok(())
    }
}

fn type_err(pos: Pos, message: impl Into<String>) -> ExprError {
    rt_err(Category::TypeError, pos, message)
}

fn null_hint(a: &Value, b: &Value) -> &'static str {
    if matches!(a, Value::Null) || matches!(b, Value::Null) {
        " (a carry that has not been written yet is null)"
    } else {
        ""
    }
}

/// Compares an integer with a float exactly (no rounding of the integer).
fn int_float_cmp(i: i64, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    // 2^63 as a float; every float at or beyond it is larger than any i64.
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    if f >= TWO63 {
        return Some(Ordering::Less);
    }
    if f < -TWO63 {
        return Some(Ordering::Greater);
    }
    let t = f.trunc();
    // `t` is integral and within i64 range here.
    let ti = t as i64;
    Some(i.cmp(&ti).then_with(|| {
        let frac = f - t;
        if frac > 0.0 {
            Ordering::Less
        } else if frac < 0.0 {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    }))
}

/// Numeric ordering with int/float promotion, exact; `None` when a NaN is involved.
pub(crate) fn num_cmp(a: &Value, b: &Value) -> Option<Option<Ordering>> {
    Some(match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
        (Value::Int(x), Value::Float(y)) => int_float_cmp(*x, *y),
        (Value::Float(x), Value::Int(y)) => int_float_cmp(*y, *x).map(Ordering::reverse),
        _ => return None,
    })
}

/// `a == b`: `null` equals only `null`; numbers compare by value across int and float;
/// other kinds must match (a type error otherwise); lists element-wise, dicts by key set
/// and values.
pub(crate) fn equal(
    a: &Value,
    b: &Value,
    pos: Pos,
    cx: &mut Ctx,
    depth: usize,
) -> Result<bool, ExprError> {
    if depth > MAX_VALUE_DEPTH {
        return Err(rt_err(
            Category::LimitError,
            pos,
            format!("values nest deeper than {MAX_VALUE_DEPTH} levels"),
        ));
    }
    if let Some(ord) = num_cmp(a, b) {
        return Ok(ord == Some(Ordering::Equal));
    }
    Ok(match (a, b) {
        (Value::Null, _) | (_, Value::Null) => matches!((a, b), (Value::Null, Value::Null)),
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => {
            cx.tick_bytes(x.len().min(y.len()), pos)?;
            x == y
        }
        (Value::List(x), Value::List(y)) => {
            if x.len() != y.len() {
                return Ok(false);
            }
            for (p, q) in x.iter().zip(y) {
                cx.tick(1, pos)?;
                if !equal(p, q, pos, cx, depth + 1)? {
                    return Ok(false);
                }
            }
            true
        }
        (Value::Map(x), Value::Map(y)) => {
            if x.len() != y.len() {
                return Ok(false);
            }
            for (k, p) in x {
                cx.tick(1, pos)?;
                match y.get(k) {
                    Some(q) if equal(p, q, pos, cx, depth + 1)? => {}
                    _ => return Ok(false),
                }
            }
            true
        }
        _ => {
            return Err(type_err(
                pos,
                format!(
                    "cannot compare a {} with a {}: equality needs compatible types",
                    a.kind_name(),
                    b.kind_name()
                ),
            ));
        }
    })
}

/// Orders two values: numbers (int/float promote), strings by code point, bools
/// (false < true). Anything else is a type error; a NaN is a value error.
pub(crate) fn order(a: &Value, b: &Value, pos: Pos, cx: &mut Ctx) -> Result<Ordering, ExprError> {
    if let Some(ord) = num_cmp(a, b) {
        return ord.ok_or_else(|| rt_err(Category::ValueError, pos, "NaN cannot be ordered"));
    }
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => {
            cx.tick_bytes(x.len().min(y.len()), pos)?;
            Ok(x.as_str().cmp(y.as_str()))
        }
        (Value::Bool(x), Value::Bool(y)) => Ok(x.cmp(y)),
        _ => Err(type_err(
            pos,
            format!(
                "cannot order a {} and a {}{}",
                a.kind_name(),
                b.kind_name(),
                null_hint(a, b)
            ),
        )),
    }
}

/// Python truthiness: `null`, `false`, zero, and empty strings and collections are false.
pub(crate) fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Int(i) => *i != 0,
        Value::Float(f) => *f != 0.0,
        Value::Str(s) => !s.is_empty(),
        Value::List(l) => !l.is_empty(),
        Value::Map(m) => !m.is_empty(),
    }
}

fn finite(x: f64, pos: Pos) -> Result<Value, ExprError> {
    if x.is_finite() {
        Ok(Value::Float(x))
    } else {
        Err(rt_err(
            Category::ValueError,
            pos,
            "the result is not a finite number",
        ))
    }
}

fn overflow(pos: Pos, op: BinOp) -> ExprError {
    rt_err(
        Category::ValueError,
        pos,
        format!("integer overflow in `{}`", op.text()),
    )
}

fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

/// Applies an arithmetic operator.
pub(crate) fn arith(
    op: BinOp,
    a: &Value,
    b: &Value,
    pos: Pos,
    cx: &mut Ctx,
) -> Result<Value, ExprError> {
    match (op, a, b) {
        (BinOp::Add, Value::Str(x), Value::Str(y)) => {
            let len = x.len().saturating_add(y.len());
            cx.new_str(len, pos)?;
            let mut s = String::with_capacity(len);
            s.push_str(x);
            s.push_str(y);
            return Ok(Value::Str(s));
        }
        (BinOp::Add, Value::List(x), Value::List(y)) => {
            let len = x.len().saturating_add(y.len());
            cx.new_collection(len, pos)?;
            cx.charge_value(a, pos)?;
            cx.charge_value(b, pos)?;
            let mut out = Vec::with_capacity(len);
            out.extend(x.iter().cloned());
            out.extend(y.iter().cloned());
            return Ok(Value::List(out));
        }
        _ => {}
    }
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        let (x, y) = (*x, *y);
        let r = match op {
            BinOp::Add => x.checked_add(y),
            BinOp::Sub => x.checked_sub(y),
            BinOp::Mul => x.checked_mul(y),
            BinOp::Div => {
                if y == 0 {
                    return Err(zero(pos));
                }
                return finite(x as f64 / y as f64, pos);
            }
            BinOp::FloorDiv => {
                if y == 0 {
                    return Err(zero(pos));
                }
                let q = x.checked_div(y).ok_or_else(|| overflow(pos, op))?;
                // Round toward negative infinity, as Python does.
                Some(if (x % y != 0) && ((x < 0) != (y < 0)) {
                    q - 1
                } else {
                    q
                })
            }
            BinOp::Mod => {
                if y == 0 {
                    return Err(zero(pos));
                }
                // The remainder takes the divisor's sign, as in Python.
                let r = x.checked_rem(y).unwrap_or(0);
                Some(if r != 0 && ((r < 0) != (y < 0)) {
                    r + y
                } else {
                    r
                })
            }
            _ => None,
        };
        return r.map(Value::Int).ok_or_else(|| overflow(pos, op));
    }
    let (Some(x), Some(y)) = (as_f64(a), as_f64(b)) else {
        return Err(type_err(pos, arith_mismatch(op, a, b)));
    };
    match op {
        BinOp::Add => finite(x + y, pos),
        BinOp::Sub => finite(x - y, pos),
        BinOp::Mul => finite(x * y, pos),
        BinOp::Div | BinOp::FloorDiv | BinOp::Mod if y == 0.0 => Err(zero(pos)),
        BinOp::Div => finite(x / y, pos),
        BinOp::FloorDiv => finite((x / y).floor(), pos),
        BinOp::Mod => {
            let r = x % y;
            finite(
                if r != 0.0 && ((r < 0.0) != (y < 0.0)) {
                    r + y
                } else {
                    r
                },
                pos,
            )
        }
        _ => Err(type_err(pos, arith_mismatch(op, a, b))),
    }
}

fn arith_mismatch(op: BinOp, a: &Value, b: &Value) -> String {
    let extra = match (op, a, b) {
        (BinOp::Add, Value::Str(_), _) | (BinOp::Add, _, Value::Str(_)) => {
            ": there is no implicit conversion to text, use `str(x)`"
        }
        (BinOp::Mul, Value::Str(_) | Value::List(_), _) => ": there is no repetition",
        _ => null_hint(a, b),
    };
    format!(
        "`{}` cannot take a {} and a {}{extra}",
        op.text(),
        a.kind_name(),
        b.kind_name()
    )
}

fn zero(pos: Pos) -> ExprError {
    rt_err(Category::ValueError, pos, "division by zero")
}

/// `-x`.
pub(crate) fn negate(v: &Value, pos: Pos) -> Result<Value, ExprError> {
    match v {
        Value::Int(i) => i
            .checked_neg()
            .map(Value::Int)
            .ok_or_else(|| rt_err(Category::ValueError, pos, "integer overflow in `-`")),
        Value::Float(f) => Ok(Value::Float(-f)),
        other => Err(type_err(
            pos,
            format!("`-` needs a number, not a {}", other.kind_name()),
        )),
    }
}

/// The text of a value, as `str(x)` gives it: strings as they are, `true`/`false`/`null`,
/// numbers in decimal (floats in their shortest round-trip form), lists and dicts as
/// compact JSON.
pub(crate) fn to_text(v: &Value, pos: Pos, cx: &mut Ctx) -> Result<String, ExprError> {
    let mut out = String::new();
    write_text(v, &mut out, pos, cx, 0, true)?;
    Ok(out)
}

fn write_text(
    v: &Value,
    out: &mut String,
    pos: Pos,
    cx: &mut Ctx,
    depth: usize,
    top: bool,
) -> Result<(), ExprError> {
    use std::fmt::Write;
    if depth > MAX_VALUE_DEPTH {
        return Err(rt_err(
            Category::LimitError,
            pos,
            format!("values nest deeper than {MAX_VALUE_DEPTH} levels"),
        ));
    }
    cx.tick(1, pos)?;
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(f) => {
            let _ = super::ast::write_float(out, *f);
        }
        Value::Str(s) if top => out.push_str(s),
        Value::Str(s) => {
            cx.tick_bytes(s.len(), pos)?;
            let _ = super::ast::write_str_literal(out, s);
        }
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_text(item, out, pos, cx, depth + 1, false)?;
                check_len(out, pos, cx)?;
            }
            out.push(']');
        }
        Value::Map(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = super::ast::write_str_literal(out, k);
                out.push(':');
                write_text(item, out, pos, cx, depth + 1, false)?;
                check_len(out, pos, cx)?;
            }
            out.push('}');
        }
    }
    check_len(out, pos, cx)
}

fn check_len(out: &str, pos: Pos, cx: &Ctx) -> Result<(), ExprError> {
    if out.len() > cx.limits.max_string_bytes {
        return Err(rt_err(
            Category::LimitError,
            pos,
            format!(
                "the text is longer than the limit of {} bytes",
                cx.limits.max_string_bytes
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx_run<T>(f: impl FnOnce(&mut Ctx) -> T) -> T {
        let limits = Limits::default();
        let mut cx = Ctx::new(&limits);
        f(&mut cx)
    }

    #[test]
    fn numbers_compare_exactly_across_int_and_float() {
        let big = Value::Int((1 << 53) + 1);
        let f = Value::Float((1u64 << 53) as f64);
        assert_eq!(num_cmp(&big, &f), Some(Some(Ordering::Greater)));
        assert_eq!(
            num_cmp(&Value::Int(1), &Value::Float(1.0)),
            Some(Some(Ordering::Equal))
        );
        assert_eq!(
            num_cmp(&Value::Int(-2), &Value::Float(-1.5)),
            Some(Some(Ordering::Less))
        );
        assert_eq!(
            num_cmp(&Value::Int(i64::MAX), &Value::Float(9.3e18)),
            Some(Some(Ordering::Less))
        );
    }

    #[test]
    fn arithmetic_follows_python_and_fails_with_a_category() {
        let p = Pos::new(1, 1);
        cx_run(|cx| {
            let a =
                |op, x: i64, y: i64, cx: &mut Ctx| arith(op, &Value::Int(x), &Value::Int(y), p, cx);
            assert_eq!(a(BinOp::FloorDiv, -7, 2, cx), Ok(Value::Int(-4)));
            assert_eq!(a(BinOp::Mod, -7, 2, cx), Ok(Value::Int(1)));
            assert_eq!(a(BinOp::Mod, 7, -2, cx), Ok(Value::Int(-1)));
            assert_eq!(a(BinOp::Div, 7, 2, cx), Ok(Value::Float(3.5)));
            assert_eq!(a(BinOp::Mod, i64::MIN, -1, cx), Ok(Value::Int(0)));
            for (op, x, y, cat) in [
                (BinOp::Div, 1, 0, Category::ValueError),
                (BinOp::FloorDiv, 1, 0, Category::ValueError),
                (BinOp::Mod, 1, 0, Category::ValueError),
                (BinOp::Add, i64::MAX, 1, Category::ValueError),
                (BinOp::Mul, i64::MAX, 2, Category::ValueError),
                (BinOp::FloorDiv, i64::MIN, -1, Category::ValueError),
            ] {
                assert_eq!(a(op, x, y, cx).unwrap_err().category, cat, "{op:?} {x} {y}");
            }
            let e = arith(BinOp::Add, &"a".into(), &Value::Int(1), p, cx).unwrap_err();
            assert_eq!(e.category, Category::TypeError);
            assert!(e.message.contains("str(x)"));
            let e = arith(
                BinOp::Mul,
                &Value::Float(1e300),
                &Value::Float(1e300),
                p,
                cx,
            );
            assert_eq!(e.unwrap_err().category, Category::ValueError);
        });
    }

    #[test]
    fn equality_needs_compatible_kinds() {
        let p = Pos::new(1, 1);
        cx_run(|cx| {
            assert_eq!(
                equal(&Value::Int(1), &Value::Float(1.0), p, cx, 0),
                Ok(true)
            );
            assert_eq!(equal(&Value::Null, &Value::Int(1), p, cx, 0), Ok(false));
            let e = equal(&"1".into(), &Value::Int(1), p, cx, 0).unwrap_err();
            assert_eq!(e.category, Category::TypeError);
            let e = order(&Value::Null, &Value::Int(3), p, cx).unwrap_err();
            assert!(e.message.contains("not been written"), "{}", e.message);
        });
    }

    #[test]
    fn text_of_values() {
        let p = Pos::new(1, 1);
        cx_run(|cx| {
            let json: serde_json::Value =
                serde_json::from_str(r#"[1, 2.0, "a\"b", null, {"k": true}]"#).unwrap();
            assert_eq!(
                to_text(&Value::from_json(&json), p, cx).unwrap(),
                r#"[1,2.0,"a\"b",null,{"k":true}]"#
            );
            assert_eq!(to_text(&"x".into(), p, cx).unwrap(), "x");
        });
    }
}
