//! The compiled form and the evaluator.
//!
//! [`Compiled`] is a checked expression lowered for evaluation: names resolved to carries or
//! constants, enum members to strings, calls to library entries, constant collections folded.
//! Evaluation borrows carry values instead of copying them, counts every operation and every
//! byte it allocates against the [`Limits`], and never panics.

use super::ast::BinOp;
use super::library::{self, Builtin};
use super::limits::{Limits, deeper, tall_tree_node};
use super::ops::{self, Ctx, rt_err};
use super::types::Ty;
use super::{Category, ExprError};
use crate::program::Type;
use crate::source::Pos;
use crate::value::Value;
use indexmap::IndexMap;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;

/// A read-only view of carry values by name.
pub trait Carries {
    /// The value of a carry, or `None` when it has none (it then reads as `null`).
    fn carry(&self, name: &str) -> Option<&Value>;
}

impl<S: BuildHasher> Carries for IndexMap<String, Value, S> {
    fn carry(&self, name: &str) -> Option<&Value> {
        self.get(name)
    }
}

impl<S: BuildHasher> Carries for HashMap<String, Value, S> {
    fn carry(&self, name: &str) -> Option<&Value> {
        self.get(name)
    }
}

impl Carries for BTreeMap<String, Value> {
    fn carry(&self, name: &str) -> Option<&Value> {
        self.get(name)
    }
}

impl<T: Carries + ?Sized> Carries for &T {
    fn carry(&self, name: &str) -> Option<&Value> {
        (**self).carry(name)
    }
}

/// A lowered node.
pub(crate) struct Node {
    pub(crate) kind: NodeKind,
    pub(crate) pos: Pos,
}

tall_tree_node!(Node);

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum NodeKind {
    Const(Value),
    Carry(String),
    List(Vec<Node>),
    /// A set literal: a list with later duplicates dropped.
    Set(Vec<Node>),
    Dict(Vec<(Node, Node)>),
    Field(Box<Node>, String),
    Index(Box<Node>, Box<Node>),
    Slice(Box<Node>, [Option<Box<Node>>; 3]),
    Call(Builtin, Vec<Node>),
    Neg(Box<Node>),
    Not(Box<Node>),
    Binary(BinOp, Box<Node>, Box<Node>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    If(Box<Node>, Box<Node>, Box<Node>),
}

impl Node {
    pub(crate) fn new(kind: NodeKind, pos: Pos) -> Self {
        Node { kind, pos }
    }
}

/// A checked, lowered expression, ready to evaluate any number of times.
#[derive(Clone, Debug, PartialEq)]
pub struct Compiled {
    pub(crate) node: Node,
    pub(crate) ty: Type,
    pub(crate) checked: Ty,
    pub(crate) limits: Limits,
}

impl Compiled {
    /// The expression's static type.
    pub fn ty(&self) -> &Type {
        &self.ty
    }

    /// The expression's checker type (tells enums and objects apart, and `null`).
    pub fn checked_ty(&self) -> &Ty {
        &self.checked
    }

    /// The carries the expression reads, in order of first appearance.
    pub fn carries_read(&self) -> Vec<&str> {
        let mut out = Vec::new();
        let mut stack = vec![&self.node];
        while let Some(n) = stack.pop() {
            match &n.kind {
                NodeKind::Const(_) => {}
                NodeKind::Carry(name) => {
                    if !out.contains(&name.as_str()) {
                        out.push(name.as_str());
                    }
                }
                NodeKind::List(xs) | NodeKind::Set(xs) | NodeKind::Call(_, xs) => {
                    stack.extend(xs.iter().rev());
                }
                NodeKind::Dict(kv) => {
                    for (k, v) in kv.iter().rev() {
                        stack.push(v);
                        stack.push(k);
                    }
                }
                NodeKind::Field(x, _) | NodeKind::Neg(x) | NodeKind::Not(x) => stack.push(x),
                NodeKind::Index(x, i) => {
                    stack.push(i);
                    stack.push(x);
                }
                NodeKind::Slice(x, parts) => {
                    stack.extend(parts.iter().rev().flatten().map(|p| &**p));
                    stack.push(x);
                }
                NodeKind::Binary(_, l, r) | NodeKind::And(l, r) | NodeKind::Or(l, r) => {
                    stack.push(r);
                    stack.push(l);
                }
                NodeKind::If(c, t, e) => {
                    stack.push(e);
                    stack.push(t);
                    stack.push(c);
                }
            }
        }
        out
    }

    /// The limits evaluation runs under.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Evaluates against carry values. A carry with no value reads as `null`.
    pub fn eval<C: Carries + ?Sized>(&self, carries: &C) -> Result<Value, ExprError> {
        let mut cx = Ctx::new(&self.limits);
        // One evaluator for every kind of carry map: it is compiled once, in this crate.
        let carries: &dyn Carries = &carries;
        let v = eval(&self.node, carries, &mut cx)?;
        own(v, &mut cx, self.node.pos)
    }

    /// Evaluates a guard: the result must be a `bool` (a guard over an untyped carry is
    /// checked here, at run time).
    pub fn eval_bool<C: Carries + ?Sized>(&self, carries: &C) -> Result<bool, ExprError> {
        let mut cx = Ctx::new(&self.limits);
        let carries: &dyn Carries = &carries;
        eval_cond(&self.node, carries, &mut cx, "a guard")
    }
}

type R<'a> = Result<Cow<'a, Value>, ExprError>;

/// Turns a result into an owned value, charging a copy of a borrowed one.
fn own(v: Cow<'_, Value>, cx: &mut Ctx, pos: Pos) -> Result<Value, ExprError> {
    match v {
        Cow::Owned(v) => Ok(v),
        Cow::Borrowed(v) => {
            cx.charge_value(v, pos)?;
            Ok(v.clone())
        }
    }
}

fn want_bool(v: &Value, pos: Pos, what: &str) -> Result<bool, ExprError> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Null => Err(rt_err(
            Category::TypeError,
            pos,
            format!(
                "{what} needs a bool, not null (a carry that has not been written yet is null)"
            ),
        )),
        other => Err(rt_err(
            Category::TypeError,
            pos,
            format!("{what} needs a bool, not a {}", other.kind_name()),
        )),
    }
}

static NULL: Value = Value::Null;

/// Evaluates a node: constants and carries are borrowed, everything else is produced (and
/// charged to the budget).
pub(crate) fn eval<'a>(node: &'a Node, carries: &'a dyn Carries, cx: &mut Ctx) -> R<'a> {
    let pos = node.pos;
    cx.tick(1, pos)?;
    Ok(match &node.kind {
        NodeKind::Const(v) => Cow::Borrowed(v),
        NodeKind::Carry(name) => Cow::Borrowed(carries.carry(name).unwrap_or(&NULL)),
        NodeKind::List(_) | NodeKind::Set(_) | NodeKind::Dict(_) => {
            Cow::Owned(eval_collection(node, carries, cx)?)
        }
        NodeKind::Field(x, name) => {
            let base = eval(x, carries, cx)?;
            project(base, |v| field_of(v, name, pos), |v| take_key(v, name))?
        }
        NodeKind::Index(x, i) => {
            let base = eval(x, carries, cx)?;
            let index = eval(i, carries, cx)?;
            index_value(base, index.as_ref(), pos, cx)?
        }
        NodeKind::Slice(..) | NodeKind::Call(..) => {
            Cow::Owned(eval_slice_or_call(node, carries, cx)?)
        }
        NodeKind::Neg(x) => Cow::Owned(ops::negate(eval(x, carries, cx)?.as_ref(), pos)?),
        NodeKind::Not(_) | NodeKind::And(..) | NodeKind::Or(..) => {
            Cow::Owned(Value::Bool(eval_cond(node, carries, cx, "")?))
        }
        NodeKind::If(c, t, e) => {
            let cond = eval_cond(c, carries, cx, "a conditional")?;
            eval(if cond { t } else { e }, carries, cx)?
        }
        NodeKind::Binary(op, l, r) => {
            let a = operand(l, carries, cx)?;
            let b = operand(r, carries, cx)?;
            Cow::Owned(if op.is_comparison() {
                Value::Bool(compare(*op, &a, &b, pos, cx)?)
            } else {
                ops::arith(*op, &a, &b, pos, cx)?
            })
        }
    })
}

/// A constant's or a carry's value, by reference: the operands that need no evaluation.
#[inline]
fn leaf<'a>(node: &'a Node, carries: &'a dyn Carries) -> Option<&'a Value> {
    match &node.kind {
        NodeKind::Const(v) => Some(v),
        NodeKind::Carry(name) => Some(carries.carry(name).unwrap_or(&NULL)),
        _ => None,
    }
}

/// The value of a binary operator's operand: a leaf by reference, anything else evaluated.
/// Operands of a chain `a + b + …` recurse along it: `deeper` keeps that off the thread's
/// stack.
#[inline]
fn operand<'a>(node: &'a Node, carries: &'a dyn Carries, cx: &mut Ctx) -> R<'a> {
    match leaf(node, carries) {
        Some(v) => Ok(Cow::Borrowed(v)),
        None => deeper(|| eval(node, carries, cx)),
    }
}

/// Applies a comparison or membership operator.
fn compare(op: BinOp, a: &Value, b: &Value, pos: Pos, cx: &mut Ctx) -> Result<bool, ExprError> {
    Ok(match op {
        BinOp::Eq => ops::equal(a, b, pos, cx, 0)?,
        BinOp::Ne => !ops::equal(a, b, pos, cx, 0)?,
        BinOp::Lt => ops::order(a, b, pos, cx)?.is_lt(),
        BinOp::Le => ops::order(a, b, pos, cx)?.is_le(),
        BinOp::Gt => ops::order(a, b, pos, cx)?.is_gt(),
        BinOp::Ge => ops::order(a, b, pos, cx)?.is_ge(),
        BinOp::In | BinOp::NotIn => {
            if matches!(b, Value::Null) {
                return Err(rt_err(
                    Category::TypeError,
                    pos,
                    "`in` a null value (a carry that has not been written yet is null)",
                ));
            }
            let found = library::call(Builtin::Contains, &[b, a], pos, cx)?;
            matches!(found, Value::Bool(true)) == (op == BinOp::In)
        }
        _ => {
            return Err(rt_err(
                Category::TypeError,
                pos,
                format!("`{}` is not a comparison", op.text()),
            ));
        }
    })
}

/// Evaluates a node that must give a bool — a guard, a condition, an operand of `and`, `or`
/// or `not` — without building a value for comparisons and logic. `what` names the place,
/// for the message when the value is not a bool.
pub(crate) fn eval_cond(
    node: &Node,
    carries: &dyn Carries,
    cx: &mut Ctx,
    what: &str,
) -> Result<bool, ExprError> {
    let pos = node.pos;
    match &node.kind {
        NodeKind::Binary(op, l, r) if op.is_comparison() => {
            cx.tick(1, pos)?;
            let a = operand(l, carries, cx)?;
            let b = operand(r, carries, cx)?;
            compare(*op, &a, &b, pos, cx)
        }
        NodeKind::And(l, r) => {
            cx.tick(1, pos)?;
            Ok(deeper(|| eval_cond(l, carries, cx, "`and`"))?
                && deeper(|| eval_cond(r, carries, cx, "`and`"))?)
        }
        NodeKind::Or(l, r) => {
            cx.tick(1, pos)?;
            Ok(deeper(|| eval_cond(l, carries, cx, "`or`"))?
                || deeper(|| eval_cond(r, carries, cx, "`or`"))?)
        }
        NodeKind::Not(x) => {
            cx.tick(1, pos)?;
            Ok(!eval_cond(x, carries, cx, "`not`")?)
        }
        _ => {
            if let Some(v) = leaf(node, carries) {
                cx.tick(1, pos)?;
                return want_bool(v, pos, what);
            }
            let v = eval(node, carries, cx)?;
            want_bool(v.as_ref(), pos, what)
        }
    }
}

/// Evaluates a list, set or dict literal (kept out of [`eval`] so its frame stays small).
#[inline(never)]
fn eval_collection(node: &Node, carries: &dyn Carries, cx: &mut Ctx) -> Result<Value, ExprError> {
    let pos = node.pos;
    Ok(match &node.kind {
        NodeKind::List(items) => {
            cx.new_collection(items.len(), pos)?;
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                let v = eval(item, carries, cx)?;
                out.push(own(v, cx, item.pos)?);
            }
            Value::List(out)
        }
        NodeKind::Set(items) => {
            cx.new_collection(items.len(), pos)?;
            let mut out: Vec<Value> = Vec::with_capacity(items.len());
            for item in items {
                let v = eval(item, carries, cx)?;
                let mut dup = false;
                for seen in &out {
                    cx.tick(1, pos)?;
                    if matches!(ops::equal(seen, &v, pos, cx, 0), Ok(true)) {
                        dup = true;
                        break;
                    }
                }
                if !dup {
                    out.push(own(v, cx, item.pos)?);
                }
            }
            Value::List(out)
        }
        NodeKind::Dict(pairs) => {
            cx.new_collection(pairs.len(), pos)?;
            let mut out = IndexMap::with_capacity(pairs.len());
            for (k, v) in pairs {
                let key = match eval(k, carries, cx)?.as_ref() {
                    Value::Str(s) => s.clone(),
                    other => {
                        return Err(rt_err(
                            Category::TypeError,
                            k.pos,
                            format!("dict keys are strings, not a {}", other.kind_name()),
                        ));
                    }
                };
                let value = eval(v, carries, cx)?;
                out.insert(key, own(value, cx, v.pos)?);
            }
            Value::Map(out)
        }
        _ => return Err(rt_err(Category::TypeError, pos, "not a collection literal")),
    })
}

/// Evaluates a slice or a library call (kept out of [`eval`] so its frame stays small).
#[inline(never)]
fn eval_slice_or_call(
    node: &Node,
    carries: &dyn Carries,
    cx: &mut Ctx,
) -> Result<Value, ExprError> {
    let pos = node.pos;
    Ok(match &node.kind {
        NodeKind::Slice(x, parts) => {
            let base = eval(x, carries, cx)?;
            let mut bounds = [None, None, None];
            for (slot, part) in bounds.iter_mut().zip(parts) {
                if let Some(p) = part {
                    *slot = match eval(p, carries, cx)?.as_ref() {
                        Value::Int(i) => Some(*i),
                        Value::Null => None,
                        other => {
                            return Err(rt_err(
                                Category::TypeError,
                                p.pos,
                                format!("slice bounds are ints, not a {}", other.kind_name()),
                            ));
                        }
                    };
                }
            }
            slice_value(base.as_ref(), bounds, pos, cx)?
        }
        NodeKind::Call(b, args) => {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                vals.push(eval(a, carries, cx)?);
            }
            let refs: Vec<&Value> = vals.iter().map(|v| v.as_ref()).collect();
            library::call(*b, &refs, pos, cx)?
        }
        _ => return Err(rt_err(Category::TypeError, pos, "not a slice or call")),
    })
}

/// Takes a part of a value: borrowed from a borrowed value, moved out of an owned one (never
/// copied).
fn project<'a>(
    base: Cow<'a, Value>,
    pick: impl for<'v> Fn(&'v Value) -> Result<&'v Value, ExprError>,
    take: impl FnOnce(Value) -> Option<Value>,
) -> R<'a> {
    Ok(match base {
        Cow::Borrowed(v) => Cow::Borrowed(pick(v)?),
        Cow::Owned(v) => {
            pick(&v)?;
            Cow::Owned(take(v).unwrap_or_default())
        }
    })
}

fn field_of<'v>(v: &'v Value, name: &str, pos: Pos) -> Result<&'v Value, ExprError> {
    match v {
        Value::Map(m) => m.get(name).ok_or_else(|| {
            rt_err(
                Category::ValueError,
                pos,
                format!("the value has no field `{name}`"),
            )
        }),
        Value::Null => Err(rt_err(
            Category::TypeError,
            pos,
            format!("`.{name}` of null (a carry that has not been written yet is null)"),
        )),
        other => Err(rt_err(
            Category::TypeError,
            pos,
            format!("a {} has no field `{name}`", other.kind_name()),
        )),
    }
}

fn take_key(v: Value, key: &str) -> Option<Value> {
    match v {
        Value::Map(mut m) => m.swap_remove(key),
        _ => None,
    }
}

/// Resolves a possibly negative index into `0..len`.
fn resolve_index(i: i64, len: usize, pos: Pos) -> Result<usize, ExprError> {
    let n = i64::try_from(len).unwrap_or(i64::MAX);
    let j = if i < 0 { i.checked_add(n) } else { Some(i) };
    match j {
        Some(j) if (0..n).contains(&j) => Ok(usize::try_from(j).unwrap_or(usize::MAX)),
        _ => Err(rt_err(
            Category::ValueError,
            pos,
            format!("index {i} is out of range for length {len}"),
        )),
    }
}

fn index_value<'a>(base: Cow<'a, Value>, index: &Value, pos: Pos, cx: &mut Ctx) -> R<'a> {
    let key_err = |k: &str| {
        rt_err(
            Category::ValueError,
            pos,
            format!("no key {k:?} (use `.get(\"{k}\")` to read a key that may be missing)"),
        )
    };
    match (base.as_ref(), index) {
        (Value::Str(s), Value::Int(i)) => {
            cx.tick_bytes(s.len(), pos)?;
            let n = s.chars().count();
            let at = resolve_index(*i, n, pos)?;
            let c = s.chars().nth(at).unwrap_or_default();
            Ok(Cow::Owned(Value::Str(c.to_string())))
        }
        (Value::List(l), Value::Int(i)) => {
            let at = resolve_index(*i, l.len(), pos)?;
            project(
                base,
                |v| match v {
                    Value::List(l) => l
                        .get(at)
                        .ok_or_else(|| rt_err(Category::ValueError, pos, "index out of range")),
                    _ => Err(rt_err(Category::TypeError, pos, "not a list")),
                },
                |v| match v {
                    Value::List(mut l) => (at < l.len()).then(|| l.swap_remove(at)),
                    _ => None,
                },
            )
        }
        (Value::Map(m), Value::Str(k)) => {
            if !m.contains_key(k) {
                return Err(key_err(k));
            }
            project(
                base,
                |v| match v {
                    Value::Map(m) => m.get(k).ok_or_else(|| key_err(k)),
                    _ => Err(rt_err(Category::TypeError, pos, "not a dict")),
                },
                |v| take_key(v, k),
            )
        }
        (Value::Null, _) => Err(rt_err(
            Category::TypeError,
            pos,
            "indexing null (a carry that has not been written yet is null)",
        )),
        (b, i) => Err(rt_err(
            Category::TypeError,
            pos,
            format!(
                "a {} cannot be indexed by a {} (lists and strings take ints, dicts take strings)",
                b.kind_name(),
                i.kind_name()
            ),
        )),
    }
}

/// The indices a Python slice `[start:stop:step]` selects from a sequence of length `len`.
fn slice_indices(
    len: usize,
    [start, stop, step]: [Option<i64>; 3],
    pos: Pos,
) -> Result<Vec<usize>, ExprError> {
    let n = i64::try_from(len).unwrap_or(i64::MAX);
    let step = step.unwrap_or(1);
    if step == 0 {
        return Err(rt_err(
            Category::ValueError,
            pos,
            "slice step cannot be zero",
        ));
    }
    let clamp = |v: Option<i64>, default: i64, lo: i64, hi: i64| match v {
        None => default,
        Some(v) if v < 0 => v.saturating_add(n).max(lo),
        Some(v) => v.min(hi),
    };
    let mut out = Vec::new();
    if step > 0 {
        let (a, b) = (clamp(start, 0, 0, n), clamp(stop, n, 0, n));
        let mut i = a;
        while i < b {
            out.push(usize::try_from(i).unwrap_or(0));
            i = i.saturating_add(step);
        }
    } else {
        let (a, b) = (clamp(start, n - 1, -1, n - 1), clamp(stop, -1, -1, n - 1));
        let mut i = a;
        while i > b {
            out.push(usize::try_from(i).unwrap_or(0));
            i = i.saturating_add(step);
        }
    }
    Ok(out)
}

fn slice_value(
    base: &Value,
    bounds: [Option<i64>; 3],
    pos: Pos,
    cx: &mut Ctx,
) -> Result<Value, ExprError> {
    match base {
        Value::Str(s) => {
            cx.tick_bytes(s.len(), pos)?;
            let chars: Vec<char> = s.chars().collect();
            let idx = slice_indices(chars.len(), bounds, pos)?;
            let out: String = idx.iter().filter_map(|&i| chars.get(i)).collect();
            cx.new_str(out.len(), pos)?;
            Ok(Value::Str(out))
        }
        Value::List(l) => {
            let idx = slice_indices(l.len(), bounds, pos)?;
            cx.new_collection(idx.len(), pos)?;
            let mut out = Vec::with_capacity(idx.len());
            for i in idx {
                if let Some(v) = l.get(i) {
                    cx.charge_value(v, pos)?;
                    out.push(v.clone());
                }
            }
            Ok(Value::List(out))
        }
        other => Err(rt_err(
            Category::TypeError,
            pos,
            format!(
                "a {} cannot be sliced (strings and lists can)",
                other.kind_name()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_follow_python() {
        let p = Pos::new(1, 1);
        let s = |b: [Option<i64>; 3]| slice_indices(5, b, p).unwrap();
        assert_eq!(s([None, None, None]), vec![0, 1, 2, 3, 4]);
        assert_eq!(s([Some(1), Some(-1), None]), vec![1, 2, 3]);
        assert_eq!(s([None, None, Some(-1)]), vec![4, 3, 2, 1, 0]);
        assert_eq!(s([None, None, Some(2)]), vec![0, 2, 4]);
        assert_eq!(s([Some(-100), Some(100), None]), vec![0, 1, 2, 3, 4]);
        assert_eq!(s([Some(3), Some(1), None]), Vec::<usize>::new());
        assert_eq!(s([Some(i64::MIN), Some(i64::MAX), Some(i64::MAX)]), vec![0]);
        assert_eq!(s([Some(i64::MAX), Some(i64::MIN), Some(i64::MIN)]), vec![4]);
        assert!(slice_indices(5, [None, None, Some(0)], p).is_err());
        assert_eq!(resolve_index(-1, 3, p), Ok(2));
        assert!(resolve_index(3, 3, p).is_err());
        assert!(resolve_index(i64::MIN, 3, p).is_err());
    }
}
