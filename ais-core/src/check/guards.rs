//! Guard *shapes*, read through the expression parser ([`crate::expr::parse`]): enough to tell
//! when a set of guards is exhaustive over a bool or enum carry (X4) and which carries a guard
//! tests (G6, G9). The language is exactly the one guards run in — a guard the expression
//! language rejects (`!c`, `c is True`) has no shape here either; X5 reports it.

use super::index::Index;
use crate::expr::{self, BinOp, Expr, ExprKind, Limits, UnOp};
use crate::program::Type;

/// What one guard says, when it has a recognized shape.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Shape {
    /// `c`, `not c`, `c == true`, `c != false`, `true == c`: the carry holds this bool.
    Bool(String, bool),
    /// `c == "m"`, `c == E.m`, `c == m`, `c in {m, n}`: the carry holds one of these members.
    Members(String, Vec<String>),
}

/// Parses a guard with the expression language's own parser (`None` when it does not parse).
fn parsed(guard: &str) -> Option<Expr> {
    expr::parse(guard, &Limits::default()).ok()
}

/// Recognizes a guard's shape (`None` for anything else, and for text that does not parse).
pub(crate) fn shape(guard: &str) -> Option<Shape> {
    shape_of(&parsed(guard)?)
}

fn shape_of(e: &Expr) -> Option<Shape> {
    match &e.kind {
        ExprKind::Name(c) => Some(Shape::Bool(c.clone(), true)),
        ExprKind::Unary(UnOp::Not, inner) => match shape_of(inner)? {
            Shape::Bool(c, b) => Some(Shape::Bool(c, !b)),
            Shape::Members(..) => None,
        },
        ExprKind::Binary(op @ (BinOp::Eq | BinOp::Ne), lhs, rhs) => {
            let positive = *op == BinOp::Eq;
            let (carry, other) = match (&lhs.kind, &rhs.kind) {
                (ExprKind::Name(c), _) => (c, rhs),
                (_, ExprKind::Name(c)) => (c, lhs),
                _ => return None,
            };
            match &other.kind {
                ExprKind::Bool(b) => Some(Shape::Bool(carry.clone(), *b == positive)),
                _ if positive => Some(Shape::Members(carry.clone(), vec![member(other)?])),
                _ => None,
            }
        }
        ExprKind::Binary(BinOp::In, lhs, rhs) => {
            let ExprKind::Name(carry) = &lhs.kind else {
                return None;
            };
            let (ExprKind::Set(items) | ExprKind::List(items)) = &rhs.kind else {
                return None;
            };
            let members: Option<Vec<String>> = items.iter().map(member).collect();
            Some(Shape::Members(carry.clone(), members?))
        }
        _ => None,
    }
}

/// An enum member as a guard spells it: `"m"`, `E.m` or a bare `m`.
fn member(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Str(m) | ExprKind::Name(m) => Some(m.clone()),
        ExprKind::Attr(base, m) if matches!(base.kind, ExprKind::Name(_)) => Some(m.clone()),
        _ => None,
    }
}

/// The bare names a guard reads — the carries it tests (and enum names), not fields after a
/// `.` nor function names — in order of appearance, each once. Empty when it does not parse.
pub(crate) fn names(guard: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(e) = parsed(guard) {
        collect_names(&e, &mut out);
    }
    out
}

fn collect_names(e: &Expr, out: &mut Vec<String>) {
    let mut stack = vec![e];
    // Children are pushed in reverse so they are visited in source order.
    while let Some(e) = stack.pop() {
        match &e.kind {
            ExprKind::Name(n) => {
                if !out.contains(n) {
                    out.push(n.clone());
                }
            }
            ExprKind::List(xs) | ExprKind::Set(xs) | ExprKind::Call(_, xs) => {
                stack.extend(xs.iter().rev());
            }
            ExprKind::Dict(kvs) => {
                for (k, v) in kvs.iter().rev() {
                    stack.push(v);
                    stack.push(k);
                }
            }
            ExprKind::Attr(x, _) | ExprKind::Unary(_, x) => stack.push(x),
            ExprKind::Index(x, i) => {
                stack.push(i);
                stack.push(x);
            }
            ExprKind::Slice(x, bounds) => {
                stack.extend(bounds.iter().rev().flatten().map(|b| &**b));
                stack.push(x);
            }
            ExprKind::Method(x, _, args) => {
                stack.extend(args.iter().rev());
                stack.push(x);
            }
            ExprKind::Binary(_, a, b) | ExprKind::Logic(_, a, b) => {
                stack.push(b);
                stack.push(a);
            }
            ExprKind::IfElse {
                cond,
                then,
                otherwise,
            } => {
                stack.push(otherwise);
                stack.push(cond);
                stack.push(then);
            }
            ExprKind::Null
            | ExprKind::Bool(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Str(_) => {}
        }
    }
}

/// True when the guards, taken together, cover every value of the one bool or enum carry they
/// all test, so some guard always holds and no default edge is needed.
pub(crate) fn exhaustive<'g>(ix: &Index, guards: impl IntoIterator<Item = &'g str>) -> bool {
    let shapes: Option<Vec<Shape>> = guards.into_iter().map(shape).collect();
    let Some(shapes) = shapes else { return false };
    let Some(first) = shapes.first() else {
        return false;
    };
    let carry = match first {
        Shape::Bool(c, _) | Shape::Members(c, _) => c.clone(),
    };
    if !shapes
        .iter()
        .all(|s| matches!(s, Shape::Bool(c, _) | Shape::Members(c, _) if *c == carry))
    {
        return false;
    }
    match ix.carry_type(&carry) {
        Some(Type::Bool) => {
            let t = shapes.iter().any(|s| matches!(s, Shape::Bool(_, true)));
            let f = shapes.iter().any(|s| matches!(s, Shape::Bool(_, false)));
            t && f
        }
        Some(ty) => match ix.enum_members(ty) {
            Some(members) => members.iter().all(|m| {
                shapes
                    .iter()
                    .any(|s| matches!(s, Shape::Members(_, xs) if xs.iter().any(|x| x == m)))
            }),
            None => false,
        },
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(c: &str, ms: &[&str]) -> Option<Shape> {
        Some(Shape::Members(
            c.into(),
            ms.iter().map(|m| (*m).to_owned()).collect(),
        ))
    }

    #[test]
    fn shapes_are_recognized() {
        assert_eq!(shape("plan_ok"), Some(Shape::Bool("plan_ok".into(), true)));
        assert_eq!(
            shape("not plan_ok"),
            Some(Shape::Bool("plan_ok".into(), false))
        );
        assert_eq!(
            shape("all_ok == false"),
            Some(Shape::Bool("all_ok".into(), false))
        );
        assert_eq!(shape("ok != True"), Some(Shape::Bool("ok".into(), false)));
        assert_eq!(shape("(true == ok)"), Some(Shape::Bool("ok".into(), true)));
        assert_eq!(shape("op == Op.merge"), members("op", &["merge"]));
        assert_eq!(shape("status == \"ok\""), members("status", &["ok"]));
        assert_eq!(
            shape("op in {merge, split}"),
            members("op", &["merge", "split"])
        );
        assert_eq!(shape("round < 3"), None);
        assert_eq!(shape("a and b"), None);
        assert_eq!(names("(x == true)"), ["x"]);
        assert_eq!(names("run.ok == false and n < 3"), ["run", "n"]);
        assert_eq!(names("status == \"not ok\""), ["status"]);
        assert_eq!(names("len(rows) > n"), ["rows", "n"]);
    }

    #[test]
    fn what_the_expression_language_rejects_has_no_shape() {
        // `!c` and `c is True` are not in the guard language (`ais eval` rejects them too).
        assert_eq!(shape("!plan_ok"), None);
        assert_eq!(shape("plan_ok is True"), None);
        assert!(names("!plan_ok").is_empty());
        for g in ["!plan_ok", "plan_ok is True"] {
            let carries = indexmap::IndexMap::new();
            assert!(crate::expr::eval_str(g, &carries, None).is_err(), "{g}");
        }
    }
}
