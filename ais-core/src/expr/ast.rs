//! The abstract syntax tree, and its printer.
//!
//! [`Expr`]'s `Display` prints canonical source that [`parse`](super::parse) reads back to the
//! same tree (positions aside): minimal parentheses by precedence, strings in double quotes with
//! JSON escapes, `true`/`false`/`null`, floats in their shortest round-trip form.

use super::limits::{deeper, tall_tree_node};
use crate::source::Pos;
use std::fmt;

/// An expression node with the position of its first token (1-based, within the expression).
pub struct Expr {
    /// What the node is.
    pub kind: ExprKind,
    /// Where it starts.
    pub pos: Pos,
}

tall_tree_node!(Expr);

/// The kinds of expression.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// `null` / `None`.
    Null,
    /// `true` / `false` (also `True` / `False`).
    Bool(bool),
    /// An integer literal (a literal directly after unary `-` is read as a negative literal).
    Int(i64),
    /// A finite float literal.
    Float(f64),
    /// A string literal.
    Str(String),
    /// `[a, b]`.
    List(Vec<Expr>),
    /// `{a, b}`: a set literal (a list without duplicates at run time).
    Set(Vec<Expr>),
    /// `{"k": v}`; `{}` is an empty dict.
    Dict(Vec<(Expr, Expr)>),
    /// A bare name: a carry (or, compared with an enum-typed operand, a member of that enum).
    Name(String),
    /// `x.name`: a field of an object or dict, or `Enum.member`.
    Attr(Box<Expr>, String),
    /// `x[i]`.
    Index(Box<Expr>, Box<Expr>),
    /// `x[a:b]` or `x[a:b:c]`, each bound optional.
    Slice(Box<Expr>, [Option<Box<Expr>>; 3]),
    /// `f(args)`: a library function.
    Call(String, Vec<Expr>),
    /// `x.m(args)`: a library method.
    Method(Box<Expr>, String, Vec<Expr>),
    /// `-x` or `not x`.
    Unary(UnOp, Box<Expr>),
    /// `a op b` for arithmetic, comparison and membership operators.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `a and b`, `a or b` (short-circuit).
    Logic(LogicOp, Box<Expr>, Box<Expr>),
    /// `then if cond else otherwise`.
    IfElse {
        /// The condition (a bool).
        cond: Box<Expr>,
        /// The value when it holds.
        then: Box<Expr>,
        /// The value when it does not.
        otherwise: Box<Expr>,
    },
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `-x`.
    Neg,
    /// `not x`.
    Not,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`: numbers, string and list concatenation.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/`: always a float.
    Div,
    /// `//`: floor division.
    FloorDiv,
    /// `%`: remainder with the divisor's sign.
    Mod,
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `in`.
    In,
    /// `not in`.
    NotIn,
}

impl BinOp {
    /// The operator as written.
    pub fn text(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::FloorDiv => "//",
            BinOp::Mod => "%",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::In => "in",
            BinOp::NotIn => "not in",
        }
    }

    /// True for the comparison and membership operators (which do not chain).
    pub fn is_comparison(self) -> bool {
        !matches!(
            self,
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::FloorDiv | BinOp::Mod
        )
    }

    pub(crate) fn prec(self) -> u8 {
        match self {
            BinOp::Add | BinOp::Sub => PREC_ADD,
            BinOp::Mul | BinOp::Div | BinOp::FloorDiv | BinOp::Mod => PREC_MUL,
            _ => PREC_CMP,
        }
    }
}

/// `and` / `or`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LogicOp {
    /// `and`.
    And,
    /// `or`.
    Or,
}

impl LogicOp {
    /// The operator as written.
    pub fn text(self) -> &'static str {
        match self {
            LogicOp::And => "and",
            LogicOp::Or => "or",
        }
    }
}

// Precedence, low to high, as in Python.
pub(crate) const PREC_IF: u8 = 1;
pub(crate) const PREC_OR: u8 = 2;
pub(crate) const PREC_AND: u8 = 3;
pub(crate) const PREC_NOT: u8 = 4;
pub(crate) const PREC_CMP: u8 = 5;
pub(crate) const PREC_ADD: u8 = 6;
pub(crate) const PREC_MUL: u8 = 7;
pub(crate) const PREC_NEG: u8 = 8;
pub(crate) const PREC_POSTFIX: u8 = 9;

impl Expr {
    /// A node at a position.
    pub fn new(kind: ExprKind, pos: Pos) -> Self {
        Expr { kind, pos }
    }

    /// A copy with every position set to 1:1, for comparing trees by shape alone.
    pub fn without_positions(&self) -> Expr {
        deeper(|| self.without_positions_here())
    }

    fn without_positions_here(&self) -> Expr {
        let b = |e: &Expr| Box::new(e.without_positions());
        let v = |es: &[Expr]| es.iter().map(Expr::without_positions).collect();
        let kind = match &self.kind {
            ExprKind::Null => ExprKind::Null,
            ExprKind::Bool(x) => ExprKind::Bool(*x),
            ExprKind::Int(x) => ExprKind::Int(*x),
            ExprKind::Float(x) => ExprKind::Float(*x),
            ExprKind::Str(x) => ExprKind::Str(x.clone()),
            ExprKind::List(xs) => ExprKind::List(v(xs)),
            ExprKind::Set(xs) => ExprKind::Set(v(xs)),
            ExprKind::Dict(kv) => ExprKind::Dict(
                kv.iter()
                    .map(|(k, x)| (k.without_positions(), x.without_positions()))
                    .collect(),
            ),
            ExprKind::Name(n) => ExprKind::Name(n.clone()),
            ExprKind::Attr(x, n) => ExprKind::Attr(b(x), n.clone()),
            ExprKind::Index(x, i) => ExprKind::Index(b(x), b(i)),
            ExprKind::Slice(x, parts) => {
                ExprKind::Slice(b(x), parts.clone().map(|p| p.map(|p| b(&p))))
            }
            ExprKind::Call(f, args) => ExprKind::Call(f.clone(), v(args)),
            ExprKind::Method(x, m, args) => ExprKind::Method(b(x), m.clone(), v(args)),
            ExprKind::Unary(op, x) => ExprKind::Unary(*op, b(x)),
            ExprKind::Binary(op, l, r) => ExprKind::Binary(*op, b(l), b(r)),
            ExprKind::Logic(op, l, r) => ExprKind::Logic(*op, b(l), b(r)),
            ExprKind::IfElse {
                cond,
                then,
                otherwise,
            } => ExprKind::IfElse {
                cond: b(cond),
                then: b(then),
                otherwise: b(otherwise),
            },
        };
        Expr::new(kind, Pos::new(1, 1))
    }

    /// The precedence of this node as printed: an operand printed where a higher one is needed
    /// is parenthesized.
    fn prec(&self) -> u8 {
        match &self.kind {
            ExprKind::IfElse { .. } => PREC_IF,
            ExprKind::Logic(LogicOp::Or, ..) => PREC_OR,
            ExprKind::Logic(LogicOp::And, ..) => PREC_AND,
            ExprKind::Unary(UnOp::Not, _) => PREC_NOT,
            ExprKind::Binary(op, ..) => op.prec(),
            ExprKind::Unary(UnOp::Neg, _) => PREC_NEG,
            ExprKind::Int(i) if *i < 0 => PREC_NEG,
            ExprKind::Float(f) if f.is_sign_negative() => PREC_NEG,
            _ => PREC_POSTFIX,
        }
    }

    /// The names this expression reads as carries (bare names, in order of first appearance).
    pub fn names(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.visit_names(&mut out);
        out
    }

    fn visit_names<'a>(&'a self, out: &mut Vec<&'a str>) {
        let all = |es: &'a [Expr], out: &mut Vec<&'a str>| {
            for e in es {
                e.visit_names(out);
            }
        };
        match &self.kind {
            ExprKind::Name(n) => {
                if !out.contains(&n.as_str()) {
                    out.push(n);
                }
            }
            ExprKind::Null
            | ExprKind::Bool(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Str(_) => {}
            ExprKind::List(xs) | ExprKind::Set(xs) | ExprKind::Call(_, xs) => all(xs, out),
            ExprKind::Dict(kv) => {
                for (k, v) in kv {
                    k.visit_names(out);
                    v.visit_names(out);
                }
            }
            ExprKind::Attr(x, _) | ExprKind::Unary(_, x) => x.visit_names(out),
            ExprKind::Index(x, i) => {
                x.visit_names(out);
                i.visit_names(out);
            }
            ExprKind::Slice(x, parts) => {
                x.visit_names(out);
                for p in parts.iter().flatten() {
                    p.visit_names(out);
                }
            }
            ExprKind::Method(x, _, args) => {
                x.visit_names(out);
                all(args, out);
            }
            ExprKind::Binary(_, l, r) | ExprKind::Logic(_, l, r) => {
                l.visit_names(out);
                r.visit_names(out);
            }
            ExprKind::IfElse {
                cond,
                then,
                otherwise,
            } => {
                then.visit_names(out);
                cond.visit_names(out);
                otherwise.visit_names(out);
            }
        }
    }
}

impl Expr {
    /// The carries whose *error value* this expression tests (spec §10.2): those it reads as
    /// `c.ok` or `c.error` (or `c["ok"]`, `c["error"]`) — the fields of the error value
    /// `{ok, error, output}` a failure lands. Reading a carry any other way (`len(rows) > 0`,
    /// `saved.value`) does not test whether the step that wrote it failed. In order of first
    /// appearance, each once.
    ///
    /// ```
    /// use ais_core::expr::{parse, Limits};
    /// let g = parse("saved.ok and len(rows) == 3", &Limits::default()).unwrap();
    /// assert_eq!(g.errors_tested(), ["saved"]);
    /// let g = parse("len(rows) == len(labels)", &Limits::default()).unwrap();
    /// assert!(g.errors_tested().is_empty());
    /// ```
    pub fn errors_tested(&self) -> Vec<&str> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(e) = stack.pop() {
            let field = match &e.kind {
                ExprKind::Attr(base, f) => Some((base, f.as_str())),
                ExprKind::Index(base, i) => match &i.kind {
                    ExprKind::Str(f) => Some((base, f.as_str())),
                    _ => None,
                },
                _ => None,
            };
            if let Some((base, f)) = field
                && let ExprKind::Name(c) = &base.kind
                && matches!(f, "ok" | "error")
                && !out.contains(&c.as_str())
            {
                out.push(c.as_str());
            }
            e.push_children(&mut stack);
        }
        out
    }

    /// Pushes the direct subexpressions of `self` onto `stack`, last first.
    fn push_children<'a>(&'a self, stack: &mut Vec<&'a Expr>) {
        let start = stack.len();
        match &self.kind {
            ExprKind::Null
            | ExprKind::Bool(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Str(_)
            | ExprKind::Name(_) => {}
            ExprKind::List(xs) | ExprKind::Set(xs) | ExprKind::Call(_, xs) => stack.extend(xs),
            ExprKind::Dict(kv) => {
                for (k, v) in kv {
                    stack.push(k);
                    stack.push(v);
                }
            }
            ExprKind::Attr(x, _) | ExprKind::Unary(_, x) => stack.push(x),
            ExprKind::Index(x, i) => stack.extend([&**x, &**i]),
            ExprKind::Slice(x, parts) => {
                stack.push(x);
                stack.extend(parts.iter().flatten().map(|p| &**p));
            }
            ExprKind::Method(x, _, args) => {
                stack.push(x);
                stack.extend(args);
            }
            ExprKind::Binary(_, l, r) | ExprKind::Logic(_, l, r) => stack.extend([&**l, &**r]),
            ExprKind::IfElse {
                cond,
                then,
                otherwise,
            } => stack.extend([&**cond, &**then, &**otherwise]),
        }
        stack[start..].reverse();
    }
}

/// Writes the base of `.field` or `.method()`: a number literal is parenthesized, since
/// `5.x` would read as a malformed number.
fn dot_base(f: &mut fmt::Formatter<'_>, e: &Expr) -> fmt::Result {
    if matches!(e.kind, ExprKind::Int(_) | ExprKind::Float(_)) {
        write!(f, "({e})")
    } else {
        operand(f, e, PREC_POSTFIX)
    }
}

/// Writes `e`, in parentheses when its precedence is below `min`.
fn operand(f: &mut fmt::Formatter<'_>, e: &Expr, min: u8) -> fmt::Result {
    if e.prec() < min {
        write!(f, "({e})")
    } else {
        write!(f, "{e}")
    }
}

fn list(f: &mut fmt::Formatter<'_>, items: &[Expr]) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        // A conditional expression is a full expression inside brackets; no parentheses needed.
        operand(f, item, PREC_IF)?;
    }
    Ok(())
}

/// Writes a string literal: double quotes, JSON escapes.
pub(crate) fn write_str_literal(f: &mut impl fmt::Write, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if c.is_control() => write!(f, "\\u{:04x}", c as u32)?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

/// Writes a float so that it reads back as the same float and as a float (never `1`).
pub(crate) fn write_float(f: &mut impl fmt::Write, x: f64) -> fmt::Result {
    // `{:?}` is the shortest round-trip form and always has a `.` or an exponent.
    write!(f, "{x:?}")
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ExprKind::Null => f.write_str("null"),
            ExprKind::Bool(b) => write!(f, "{b}"),
            ExprKind::Int(i) => write!(f, "{i}"),
            ExprKind::Float(x) => write_float(f, *x),
            ExprKind::Str(s) => write_str_literal(f, s),
            ExprKind::List(xs) => {
                f.write_str("[")?;
                list(f, xs)?;
                f.write_str("]")
            }
            ExprKind::Set(xs) => {
                f.write_str("{")?;
                list(f, xs)?;
                f.write_str("}")
            }
            ExprKind::Dict(kv) => {
                f.write_str("{")?;
                for (i, (k, v)) in kv.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    operand(f, k, PREC_IF)?;
                    f.write_str(": ")?;
                    operand(f, v, PREC_IF)?;
                }
                f.write_str("}")
            }
            ExprKind::Name(n) => f.write_str(n),
            ExprKind::Attr(x, n) => {
                dot_base(f, x)?;
                write!(f, ".{n}")
            }
            ExprKind::Index(x, i) => {
                operand(f, x, PREC_POSTFIX)?;
                f.write_str("[")?;
                operand(f, i, PREC_IF)?;
                f.write_str("]")
            }
            ExprKind::Slice(x, parts) => {
                operand(f, x, PREC_POSTFIX)?;
                f.write_str("[")?;
                for (i, p) in parts.iter().enumerate() {
                    if i == 2 && p.is_none() {
                        break;
                    }
                    if i > 0 {
                        f.write_str(":")?;
                    }
                    if let Some(p) = p {
                        operand(f, p, PREC_IF)?;
                    }
                }
                f.write_str("]")
            }
            ExprKind::Call(name, args) => {
                write!(f, "{name}(")?;
                list(f, args)?;
                f.write_str(")")
            }
            ExprKind::Method(x, m, args) => {
                dot_base(f, x)?;
                write!(f, ".{m}(")?;
                list(f, args)?;
                f.write_str(")")
            }
            ExprKind::Unary(UnOp::Neg, x) => {
                f.write_str("-")?;
                // `-` directly before a number literal is read as a negative literal, and `--x`
                // is rejected: parenthesize both.
                let literal = matches!(x.kind, ExprKind::Int(_) | ExprKind::Float(_));
                let neg = matches!(x.kind, ExprKind::Unary(UnOp::Neg, _));
                if literal || neg {
                    write!(f, "({x})")
                } else {
                    operand(f, x, PREC_NEG)
                }
            }
            ExprKind::Unary(UnOp::Not, x) => {
                f.write_str("not ")?;
                operand(f, x, PREC_NOT)
            }
            ExprKind::Binary(op, l, r) => {
                let p = op.prec();
                // Comparisons do not chain: both operands must bind tighter.
                let left_min = if op.is_comparison() { p + 1 } else { p };
                deeper(|| operand(f, l, left_min))?;
                write!(f, " {} ", op.text())?;
                deeper(|| operand(f, r, p + 1))
            }
            ExprKind::Logic(op, l, r) => {
                let p = if *op == LogicOp::And {
                    PREC_AND
                } else {
                    PREC_OR
                };
                // A chain `a and b and …` recurses along it: `deeper` keeps that off the
                // thread's stack.
                deeper(|| operand(f, l, p))?;
                write!(f, " {} ", op.text())?;
                deeper(|| operand(f, r, p + 1))
            }
            ExprKind::IfElse {
                cond,
                then,
                otherwise,
            } => {
                operand(f, then, PREC_OR)?;
                f.write_str(" if ")?;
                operand(f, cond, PREC_OR)?;
                f.write_str(" else ")?;
                operand(f, otherwise, PREC_IF)
            }
        }
    }
}
