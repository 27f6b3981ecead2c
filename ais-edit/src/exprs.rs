//! Renames inside guards and CODE bodies, through the expression parser (so a name inside a
//! string literal or a method name is never touched).

use ais_core::expr::{self, Expr, ExprError, ExprKind, Limits};

/// Every node of `e`, visited without recursion (an operator chain may be tall).
fn nodes_mut(e: &mut Expr, mut f: impl FnMut(&mut ExprKind, ais_core::Pos)) {
    let mut stack: Vec<&mut Expr> = vec![e];
    while let Some(e) = stack.pop() {
        f(&mut e.kind, e.pos);
        match &mut e.kind {
            ExprKind::List(xs) | ExprKind::Set(xs) | ExprKind::Call(_, xs) => stack.extend(xs),
            ExprKind::Dict(kv) => {
                for (k, v) in kv {
                    stack.push(k);
                    stack.push(v);
                }
            }
            ExprKind::Attr(x, _) | ExprKind::Unary(_, x) => stack.push(x),
            ExprKind::Index(x, i) => {
                stack.push(x);
                stack.push(i);
            }
            ExprKind::Slice(x, parts) => {
                stack.push(x);
                stack.extend(parts.iter_mut().flatten().map(|b| &mut **b));
            }
            ExprKind::Method(x, _, args) => {
                stack.push(x);
                stack.extend(args);
            }
            ExprKind::Binary(_, l, r) | ExprKind::Logic(_, l, r) => {
                stack.push(l);
                stack.push(r);
            }
            ExprKind::IfElse {
                cond,
                then,
                otherwise,
            } => {
                stack.push(cond);
                stack.push(then);
                stack.push(otherwise);
            }
            ExprKind::Null
            | ExprKind::Bool(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Str(_)
            | ExprKind::Name(_) => {}
        }
    }
}

/// Parses an expression with the default limits.
pub fn parse(text: &str) -> Result<Expr, ExprError> {
    expr::parse(text, &Limits::default())
}

/// The bare names of an expression (the names it reads as carries), with their positions.
pub fn names(text: &str) -> Result<Vec<(String, ais_core::Pos)>, ExprError> {
    let mut e = parse(text)?;
    let mut out = Vec::new();
    nodes_mut(&mut e, |k, pos| {
        if let ExprKind::Name(n) = k {
            out.push((n.clone(), pos));
        }
    });
    Ok(out)
}

/// The byte offset of a 1-based line and character column in `text`.
fn offset(text: &str, line: u32, column: u32) -> Option<usize> {
    let mut start = 0;
    for _ in 1..line {
        start += text[start..].find('\n')? + 1;
    }
    let rest = &text[start..];
    let skip = usize::try_from(column.checked_sub(1)?).ok()?;
    let within = rest
        .char_indices()
        .nth(skip)
        .map(|(i, _)| i)
        .or((skip == rest.chars().count()).then_some(rest.len()))?;
    Some(start + within)
}

/// Why a name cannot be renamed in an expression.
#[derive(Debug)]
pub enum RenameError {
    /// The expression does not parse.
    Parse(ExprError),
    /// `to` already stands in the expression as a name of something else: it would be
    /// captured.
    Capture,
}

/// `text` with the bare name `from` renamed to `to` wherever it stands; `Ok(None)` when it
/// does not stand there.
pub fn rename_name(text: &str, from: &str, to: &str) -> Result<Option<String>, RenameError> {
    let found = names(text).map_err(RenameError::Parse)?;
    if !found.iter().any(|(n, _)| n == from) {
        return Ok(None);
    }
    if found.iter().any(|(n, _)| n == to) {
        return Err(RenameError::Capture);
    }
    let mut at: Vec<usize> = found
        .iter()
        .filter(|(n, _)| n == from)
        .filter_map(|(_, p)| offset(text, p.line, p.column))
        .filter(|&o| text[o..].starts_with(from))
        .collect();
    at.sort_unstable_by(|a, b| b.cmp(a));
    at.dedup();
    let mut out = text.to_owned();
    for o in at {
        out.replace_range(o..o + from.len(), to);
    }
    Ok(Some(out))
}

/// `text` with the member `from` of the enum `ty` renamed to `to`: `Ty.from`, and the bare
/// name or string literal `from` when `text` also reads one of `carries_of_ty` (the carries
/// typed `ty`, against which a bare member or a literal is compared). The expression is printed
/// canonically. `Ok(None)` when nothing changes.
pub fn rename_member(
    text: &str,
    ty: &str,
    from: &str,
    to: &str,
    carries_of_ty: &[&str],
) -> Result<Option<String>, RenameError> {
    let mut e = parse(text).map_err(RenameError::Parse)?;
    let mut reads_ty = false;
    nodes_mut(&mut e, |k, _| {
        if let ExprKind::Name(n) = k
            && carries_of_ty.contains(&n.as_str())
        {
            reads_ty = true;
        }
    });
    let mut changed = false;
    nodes_mut(&mut e, |k, _| match k {
        ExprKind::Attr(base, m)
            if m == from && matches!(&base.kind, ExprKind::Name(b) if b == ty) =>
        {
            *m = to.to_owned();
            changed = true;
        }
        ExprKind::Name(n) | ExprKind::Str(n) if reads_ty && n == from => {
            *n = to.to_owned();
            changed = true;
        }
        _ => {}
    });
    Ok(changed.then(|| e.to_string()))
}

/// `text` with the type name `from` renamed to `to` where it stands as `from.member`.
pub fn rename_type_in(text: &str, from: &str, to: &str) -> Result<Option<String>, RenameError> {
    let mut e = parse(text).map_err(RenameError::Parse)?;
    let mut changed = false;
    nodes_mut(&mut e, |k, _| {
        if let ExprKind::Attr(base, _) = k
            && let ExprKind::Name(b) = &mut base.kind
            && b == from
        {
            *b = to.to_owned();
            changed = true;
        }
    });
    Ok(changed.then(|| e.to_string()))
}

/// True when `name` is a valid expression identifier that is no keyword or guard sentinel.
pub fn is_plain_name(name: &str) -> bool {
    const KEYWORDS: [&str; 13] = [
        "and", "or", "not", "in", "is", "if", "else", "None", "True", "False", "null", "true",
        "false",
    ];
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&name)
        && !expr::is_sentinel(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_only_the_carry() {
        let r = rename_name(r#"plan_ok == true and "plan_ok" in notes"#, "plan_ok", "ok")
            .unwrap()
            .unwrap();
        assert_eq!(r, r#"ok == true and "plan_ok" in notes"#);
        assert!(rename_name("a == b", "c", "d").unwrap().is_none());
        assert!(matches!(
            rename_name("a == b", "a", "b"),
            Err(RenameError::Capture)
        ));
        let multi = rename_name("len(xs) > 1\n  and xs[0] == \"x\"", "xs", "ys")
            .unwrap()
            .unwrap();
        assert_eq!(multi, "len(ys) > 1\n  and ys[0] == \"x\"");
    }

    #[test]
    fn renames_a_member() {
        let r = rename_member(
            "v == Verdict.pass or v == \"pass\"",
            "Verdict",
            "pass",
            "ok",
            &["v"],
        )
        .unwrap()
        .unwrap();
        assert_eq!(r, "v == Verdict.ok or v == \"ok\"");
    }
}
