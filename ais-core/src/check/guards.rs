//! A small reader of guard *shapes*, enough to tell when a set of guards is exhaustive over a
//! bool or enum carry (X4) and which carry a guard tests (G6). Guards are parsed and
//! type-checked for real by [`crate::expr`]; this only recognizes the common comparison forms.

use super::index::Index;
use crate::model::Type;

/// What one guard says, when it has a recognized shape.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Shape {
    /// `c`, `not c`, `c == true`, `c != false`, `c is True`, …: the carry holds this bool.
    Bool(String, bool),
    /// `c == "m"`, `c == E.m`, `c == m`: the carry holds this enum member.
    Member(String, String),
}

/// Recognizes a guard's shape (`None` for anything else).
pub(crate) fn shape(guard: &str) -> Option<Shape> {
    let g = strip_parens(guard.trim());
    if let Some(rest) = g.strip_prefix("not ").or_else(|| g.strip_prefix('!')) {
        let name = strip_parens(rest.trim());
        return is_ident(name).then(|| Shape::Bool(name.to_owned(), false));
    }
    if is_ident(g) {
        return Some(Shape::Bool(g.to_owned(), true));
    }
    for (op, positive) in [
        ("==", true),
        ("!=", false),
        (" is not ", false),
        (" is ", true),
    ] {
        let Some((lhs, rhs)) = g.split_once(op) else {
            continue;
        };
        let (lhs, rhs) = (lhs.trim(), rhs.trim());
        if !is_ident(lhs) {
            return None;
        }
        return match rhs {
            "true" | "True" => Some(Shape::Bool(lhs.to_owned(), positive)),
            "false" | "False" => Some(Shape::Bool(lhs.to_owned(), !positive)),
            _ if positive => {
                let member = rhs
                    .trim_matches(|c| c == '"' || c == '\'')
                    .rsplit('.')
                    .next()
                    .unwrap_or(rhs);
                is_ident(member).then(|| Shape::Member(lhs.to_owned(), member.to_owned()))
            }
            _ => None,
        };
    }
    None
}

/// The names a guard mentions outside string literals and after no `.`: the carries (and enum
/// or function names) it reads, in order, each once.
pub(crate) fn names(guard: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut chars = guard.char_indices().peekable();
    let mut prev = ' ';
    while let Some((i, c)) = chars.next() {
        if c == '"' || c == '\'' {
            for (_, d) in chars.by_ref() {
                if d == c {
                    break;
                }
            }
            prev = c;
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if d.is_alphanumeric() || d == '_' {
                    end = j + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            let word = &guard[i..end];
            if prev != '.' && is_ident(word) && !out.iter().any(|w| w == word) {
                out.push(word.to_owned());
            }
            prev = 'a';
            continue;
        }
        if !c.is_whitespace() {
            prev = c;
        }
    }
    out
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
        Shape::Bool(c, _) | Shape::Member(c, _) => c.clone(),
    };
    if !shapes
        .iter()
        .all(|s| matches!(s, Shape::Bool(c, _) | Shape::Member(c, _) if *c == carry))
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
                    .any(|s| matches!(s, Shape::Member(_, x) if x == m))
            }),
            None => false,
        },
        None => false,
    }
}

fn strip_parens(mut s: &str) -> &str {
    while let Some(inner) = s.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
        s = inner.trim();
    }
    s
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
        && !matches!(
            s,
            "not" | "and" | "or" | "true" | "false" | "True" | "False"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(
            shape("op == Op.merge"),
            Some(Shape::Member("op".into(), "merge".into()))
        );
        assert_eq!(
            shape("status == \"ok\""),
            Some(Shape::Member("status".into(), "ok".into()))
        );
        assert_eq!(shape("round < 3"), None);
        assert_eq!(shape("a and b"), None);
        assert_eq!(names("(x == true)"), ["x"]);
        assert_eq!(names("run.ok == false and n < 3"), ["run", "n"]);
        assert_eq!(names("status == \"not ok\""), ["status"]);
    }
}
