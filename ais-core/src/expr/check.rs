//! The static checker: types an [`Expr`] in a [`TypeEnv`] and lowers it to a [`Node`].
//!
//! Names resolve to carries; `Enum.member` and, where an enum-typed operand is compared, a
//! bare member name or a string literal resolve to members (a string that is no member is an
//! error). Sub-expressions made only of constants are evaluated here, so `1 / 0` is reported
//! before anything runs.

use super::ast::{BinOp, Expr, ExprKind, LogicOp, UnOp};
use super::eval::{Node, NodeKind, eval};
use super::library::{self, Builtin};
use super::limits::{Limits, deeper};
use super::ops::Ctx;
use super::parser::{too_deep, too_tall};
use super::types::{Ty, TypeEnv, comparable, join, join_all, orderable};
use super::{Category, ExprError};
use crate::source::Pos;
use crate::suggest::{CarryNames, Suggester};
use crate::value::Value;
use indexmap::IndexMap;
use std::cell::OnceCell;

pub(crate) struct Checker<'e> {
    pub(crate) env: &'e TypeEnv,
    pub(crate) limits: &'e Limits,
    /// The did-you-mean index of the carry names: the caller's, shared by every expression of
    /// a program, else one built on the first unknown name of this expression.
    carry_names: Option<&'e dyn CarryNames>,
    own_names: OnceCell<Suggester<'e>>,
    /// Real nesting, counted as the parser counts it (an operator chain is flat).
    depth: usize,
    /// The height of the tree above the node being checked.
    height: usize,
    /// One budget for all constant folding of an expression, so that many folded constants
    /// cannot together exceed the allocation bound.
    cx: Ctx<'e>,
}

fn err(category: Category, pos: Pos, message: impl Into<String>) -> ExprError {
    ExprError::new(category, pos, message)
}

/// The expression as written, shortened for a message.
fn shown(e: &Expr) -> String {
    let s = e.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

/// " Did you mean `x`?" for the closest candidate, if one is close ([`crate::suggest::did_you_mean`]:
/// a difference of case alone, `Op.MERGE` for `merge`, scores highest).
pub(crate) fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> String {
    match crate::suggest::did_you_mean(name, candidates).first() {
        Some(c) => format!(" Did you mean `{c}`?"),
        None => String::new(),
    }
}

fn list_names(names: &[String]) -> String {
    let shown: Vec<&str> = names.iter().take(12).map(String::as_str).collect();
    let more = if names.len() > 12 { ", …" } else { "" };
    format!("{}{more}", shown.join(", "))
}

fn is_const(n: &Node) -> bool {
    matches!(n.kind, NodeKind::Const(_))
}

impl<'e> Checker<'e> {
    /// A checker in `env`; `carry_names`, when given, indexes `env`'s carry names for
    /// did-you-mean (built once per program by the caller).
    pub(crate) fn new(
        env: &'e TypeEnv,
        limits: &'e Limits,
        carry_names: Option<&'e dyn CarryNames>,
    ) -> Self {
        Checker {
            env,
            limits,
            carry_names,
            own_names: OnceCell::new(),
            depth: 0,
            height: 0,
            cx: Ctx::new(limits),
        }
    }

    /// The carries whose names are close to `name`, best first.
    fn close_carries(&self, name: &str) -> Vec<String> {
        let names = match self.carry_names {
            Some(names) => names.suggester(),
            None => self
                .own_names
                .get_or_init(|| Suggester::new(self.env.carry_names())),
        };
        names.suggest(name)
    }

    /// Checks `e`, one level of nesting deeper; `hint` is the type an enclosing comparison
    /// expects (it lets a bare name or a string literal stand for a member of an enum).
    pub(crate) fn check(&mut self, e: &Expr, hint: Option<&Ty>) -> Result<(Node, Ty), ExprError> {
        self.check_at(e, hint, 1)
    }

    /// Checks an operand of a binary operator, `and` or `or`, or the condition or first
    /// branch of a conditional: no deeper nesting (the parser reads these in a loop, so a
    /// chain `a + b + c` is flat), only one level taller.
    fn check_flat(&mut self, e: &Expr, hint: Option<&Ty>) -> Result<(Node, Ty), ExprError> {
        self.check_at(e, hint, 0)
    }

    fn check_at(
        &mut self,
        e: &Expr,
        hint: Option<&Ty>,
        nests: usize,
    ) -> Result<(Node, Ty), ExprError> {
        self.depth += nests;
        self.height += 1;
        let r = if self.depth > self.limits.max_depth {
            Err(too_deep(e.pos, self.limits.max_depth))
        } else if self.height > self.limits.max_height {
            Err(too_tall(e.pos, self.limits.max_height))
        } else {
            deeper(|| self.check_kind(e, hint))
        };
        self.depth -= nests;
        self.height -= 1;
        let (node, ty) = r?;
        Ok((self.fold(node)?, ty))
    }

    /// Evaluates a node whose operands are all constants.
    fn fold(&mut self, node: Node) -> Result<Node, ExprError> {
        let foldable = match &node.kind {
            NodeKind::Const(_) | NodeKind::Carry(_) => false,
            NodeKind::List(xs) | NodeKind::Set(xs) | NodeKind::Call(_, xs) => {
                xs.iter().all(is_const)
            }
            NodeKind::Dict(kv) => kv.iter().all(|(k, v)| is_const(k) && is_const(v)),
            NodeKind::Field(x, _) | NodeKind::Neg(x) | NodeKind::Not(x) => is_const(x),
            NodeKind::Index(x, i) => is_const(x) && is_const(i),
            NodeKind::Slice(x, parts) => is_const(x) && parts.iter().flatten().all(|p| is_const(p)),
            NodeKind::Binary(_, l, r) | NodeKind::And(l, r) | NodeKind::Or(l, r) => {
                is_const(l) && is_const(r)
            }
            NodeKind::If(c, t, f) => is_const(c) && is_const(t) && is_const(f),
        };
        if !foldable {
            return Ok(node);
        }
        let none: IndexMap<String, Value> = IndexMap::new();
        let v = eval(&node, &none, &mut self.cx)?;
        let v = match v {
            std::borrow::Cow::Owned(v) => v,
            std::borrow::Cow::Borrowed(v) => {
                self.cx.charge_value(v, node.pos)?;
                v.clone()
            }
        };
        Ok(Node::new(NodeKind::Const(v), node.pos))
    }

    fn check_kind(&mut self, e: &Expr, hint: Option<&Ty>) -> Result<(Node, Ty), ExprError> {
        let pos = e.pos;
        let node = |kind| Node::new(kind, pos);
        let konst = |v: Value| Node::new(NodeKind::Const(v), pos);
        Ok(match &e.kind {
            ExprKind::Null => (konst(Value::Null), Ty::Null),
            ExprKind::Bool(b) => (konst(Value::Bool(*b)), Ty::Bool),
            ExprKind::Int(i) => (konst(Value::Int(*i)), Ty::Int),
            ExprKind::Float(f) => {
                if !f.is_finite() {
                    return Err(err(
                        Category::ValueError,
                        pos,
                        "a float literal must be finite",
                    ));
                }
                (konst(Value::Float(*f)), Ty::Float)
            }
            ExprKind::Str(s) => self.str_literal(s, pos, hint)?,
            ExprKind::List(items) | ExprKind::Set(items) => self.collection(e, items, hint)?,
            ExprKind::Dict(pairs) => self.dict(pairs, pos)?,
            ExprKind::Name(name) => self.name(name, pos, hint)?,
            ExprKind::Attr(x, field) => self.attr(x, field, pos)?,
            ExprKind::Index(x, i) => self.index(x, i, pos)?,
            ExprKind::Slice(x, parts) => self.slice(x, parts, pos)?,
            ExprKind::Call(name, args) => self.function(name, args, pos)?,
            ExprKind::Method(x, name, args) => self.method(x, name, args, pos)?,
            ExprKind::Unary(UnOp::Neg, x) => {
                let (xn, xt) = self.check(x, None)?;
                if !matches!(xt, Ty::Int | Ty::Float | Ty::Any) {
                    return Err(err(
                        Category::TypeError,
                        pos,
                        format!("`-` needs a number, and `{}` is a {xt}", shown(x)),
                    ));
                }
                (node(NodeKind::Neg(Box::new(xn))), xt)
            }
            ExprKind::Unary(UnOp::Not, x) => {
                let (xn, xt) = self.check(x, None)?;
                self.want_bool(&xt, x, "`not`")?;
                (node(NodeKind::Not(Box::new(xn))), Ty::Bool)
            }
            ExprKind::Logic(op, l, r) => {
                let what = format!("`{}`", op.text());
                let (ln, lt) = self.check_flat(l, None)?;
                self.want_bool(&lt, l, &what)?;
                let (rn, rt) = self.check_flat(r, None)?;
                self.want_bool(&rt, r, &what)?;
                let kind = match op {
                    LogicOp::And => NodeKind::And(Box::new(ln), Box::new(rn)),
                    LogicOp::Or => NodeKind::Or(Box::new(ln), Box::new(rn)),
                };
                (node(kind), Ty::Bool)
            }
            ExprKind::IfElse {
                cond,
                then,
                otherwise,
            } => self.if_else(cond, then, otherwise, pos, hint)?,
            ExprKind::Binary(op, l, r) => self.binary(*op, l, r, pos)?,
        })
    }

    /// A string literal: a member when an enum is expected.
    fn str_literal(
        &mut self,
        s: &str,
        pos: Pos,
        hint: Option<&Ty>,
    ) -> Result<(Node, Ty), ExprError> {
        let konst = |v: Value| Node::new(NodeKind::Const(v), pos);
        if s.len() > self.limits.max_string_bytes {
            return Err(err(
                Category::LimitError,
                pos,
                format!(
                    "string literal is longer than {} bytes",
                    self.limits.max_string_bytes
                ),
            ));
        }
        let ty = match hint {
            Some(Ty::Enum(name)) => {
                self.member(name, s, Self::quoted(s, pos), Category::TypeError)?;
                Ty::Enum(name.clone())
            }
            _ => Ty::Str,
        };
        Ok((konst(Value::Str(s.to_owned())), ty))
    }

    /// A list or set display.
    fn collection(
        &mut self,
        e: &Expr,
        items: &[Expr],
        hint: Option<&Ty>,
    ) -> Result<(Node, Ty), ExprError> {
        let pos = e.pos;
        let node = |kind| Node::new(kind, pos);
        self.check_len(items.len(), pos)?;
        let item_hint = match hint {
            Some(Ty::List(t)) => Some(&**t),
            _ => None,
        };
        let mut nodes = Vec::with_capacity(items.len());
        let mut tys = Vec::with_capacity(items.len());
        for item in items {
            let (n, t) = self.check(item, item_hint)?;
            nodes.push(n);
            tys.push(t);
        }
        let ty = Ty::list(join_all(&tys));
        let kind = if matches!(e.kind, ExprKind::Set(_)) {
            NodeKind::Set(nodes)
        } else {
            NodeKind::List(nodes)
        };
        Ok((node(kind), ty))
    }

    /// A dict display: string keys.
    fn dict(&mut self, pairs: &[(Expr, Expr)], pos: Pos) -> Result<(Node, Ty), ExprError> {
        let node = |kind| Node::new(kind, pos);
        self.check_len(pairs.len(), pos)?;
        let mut nodes = Vec::with_capacity(pairs.len());
        let mut tys = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            let (kn, kt) = self.check(k, None)?;
            if !matches!(kt, Ty::Str | Ty::Enum(_) | Ty::Any) {
                return Err(err(
                    Category::TypeError,
                    k.pos,
                    format!("dict keys are strings, and `{}` is a {kt}", shown(k)),
                ));
            }
            let (vn, vt) = self.check(v, None)?;
            nodes.push((kn, vn));
            tys.push(vt);
        }
        Ok((
            node(NodeKind::Dict(nodes)),
            Ty::Dict(Box::new(join_all(&tys))),
        ))
    }

    /// `x[start:stop:step]`: a string or a list, int bounds.
    fn slice(
        &mut self,
        x: &Expr,
        parts: &[Option<Box<Expr>>; 3],
        pos: Pos,
    ) -> Result<(Node, Ty), ExprError> {
        let node = |kind| Node::new(kind, pos);
        let (xn, xt) = self.check(x, None)?;
        if !matches!(xt, Ty::Str | Ty::Enum(_) | Ty::List(_) | Ty::Any) {
            return Err(err(
                Category::TypeError,
                pos,
                format!(
                    "`{}` is a {xt}, and only strings and lists can be sliced",
                    shown(x)
                ),
            ));
        }
        let mut out: [Option<Box<Node>>; 3] = [None, None, None];
        for (slot, part) in out.iter_mut().zip(parts) {
            if let Some(p) = part {
                let (pn, pt) = self.check(p, None)?;
                if !matches!(pt, Ty::Int | Ty::Null | Ty::Any) {
                    return Err(err(
                        Category::TypeError,
                        p.pos,
                        format!("slice bounds are ints, and `{}` is a {pt}", shown(p)),
                    ));
                }
                *slot = Some(Box::new(pn));
            }
        }
        let ty = if let Ty::Enum(_) = xt { Ty::Str } else { xt };
        Ok((node(NodeKind::Slice(Box::new(xn), out)), ty))
    }

    /// A call of a library function.
    fn function(&mut self, name: &str, args: &[Expr], pos: Pos) -> Result<(Node, Ty), ExprError> {
        let node = |kind| Node::new(kind, pos);
        let Some(b) = library::function(name) else {
            let why = if library::method(name).is_some() {
                format!(" `{name}` is a method: call it on a value, `x.{name}()`.")
            } else if self.env.carry(name).is_some() {
                format!(" `{name}` is a carry, and carries cannot be called.")
            } else {
                did_you_mean(name, library::FUNCTIONS.iter().map(|(n, _)| *n))
            };
            return Err(err(
                Category::NameError,
                pos,
                format!("`{name}` is no library function.{why}"),
            ));
        };
        let mut nodes = Vec::with_capacity(args.len());
        let mut tys = Vec::with_capacity(args.len());
        for a in args {
            let (n, t) = self.check(a, None)?;
            nodes.push(n);
            tys.push(t);
        }
        let ty = library::check(b, &tys, pos)?;
        Ok((node(NodeKind::Call(b, nodes)), ty))
    }

    /// A call of a library method on a receiver.
    fn method(
        &mut self,
        x: &Expr,
        name: &str,
        args: &[Expr],
        pos: Pos,
    ) -> Result<(Node, Ty), ExprError> {
        let node = |kind| Node::new(kind, pos);
        let Some(b) = library::method(name) else {
            let why = if library::function(name).is_some() {
                format!(" `{name}` is a function: `{name}(x)`.")
            } else {
                did_you_mean(name, library::METHODS.iter().map(|(n, _)| *n))
            };
            return Err(err(
                Category::NameError,
                pos,
                format!("`.{name}()` is no library method.{why}"),
            ));
        };
        let (xn, xt) = self.check(x, None)?;
        let item_hint = match (&xt, b) {
            (Ty::List(t), Builtin::Contains | Builtin::Count | Builtin::Index) => {
                Some((**t).clone())
            }
            _ => None,
        };
        let mut nodes = vec![xn];
        let mut tys = vec![xt];
        for a in args {
            let (n, t) = self.check(a, item_hint.as_ref())?;
            nodes.push(n);
            tys.push(t);
        }
        let ty = library::check(b, &tys, pos)?;
        Ok((node(NodeKind::Call(b, nodes)), ty))
    }

    /// `then if cond else otherwise`: a bool condition, branches of one type.
    fn if_else(
        &mut self,
        cond: &Expr,
        then: &Expr,
        otherwise: &Expr,
        pos: Pos,
        hint: Option<&Ty>,
    ) -> Result<(Node, Ty), ExprError> {
        let node = |kind| Node::new(kind, pos);
        // The parser reads the condition and the first branch at the conditional's own
        // nesting, and the `else` branch one level deeper; count them the same way.
        let (cn, ct) = self.check_flat(cond, None)?;
        self.want_bool(&ct, cond, "a conditional expression")?;
        let (tn, tt) = self.check_flat(then, hint)?;
        let (on, ot) = self.check(otherwise, hint)?;
        let Some(ty) = join(&tt, &ot) else {
            return Err(err(
                Category::TypeError,
                pos,
                format!("the two branches of a conditional have different types ({tt} and {ot})"),
            ));
        };
        Ok((
            node(NodeKind::If(Box::new(cn), Box::new(tn), Box::new(on))),
            ty,
        ))
    }

    fn check_len(&self, n: usize, pos: Pos) -> Result<(), ExprError> {
        if n > self.limits.max_collection_len {
            return Err(err(
                Category::LimitError,
                pos,
                format!("more than {} items", self.limits.max_collection_len),
            ));
        }
        Ok(())
    }

    fn want_bool(&self, t: &Ty, e: &Expr, what: &str) -> Result<(), ExprError> {
        if matches!(t, Ty::Bool | Ty::Any) {
            return Ok(());
        }
        let hint = match t {
            Ty::Str => format!(": compare it, e.g. `{} != \"\"`", shown(e)),
            Ty::Int | Ty::Float => format!(": compare it, e.g. `{} > 0`", shown(e)),
            Ty::List(_) | Ty::Dict(_) => format!(": test its length, e.g. `len({}) > 0`", shown(e)),
            Ty::Null => String::new(),
            _ => ": compare it with a value".to_owned(),
        };
        Err(err(
            Category::TypeError,
            e.pos,
            format!("{what} needs a bool, and `{}` is a {t}{hint}", shown(e)),
        ))
    }

    /// Checks that `member` is a member of enum `name`. The error points at the member as
    /// written, `len` characters at `at`, and offers the close members spelled as they are
    /// written there (`prefix` before each: `Verdict.` for a qualified member, none for a bare
    /// or quoted one), so a misspelling gets its rename.
    fn member(
        &self,
        name: &str,
        member: &str,
        (at, len, prefix): (Pos, usize, &str),
        category: Category,
    ) -> Result<(), ExprError> {
        let members = self.env.enum_members(name).unwrap_or_default();
        if members.iter().any(|m| m == member) {
            return Ok(());
        }
        let close = crate::suggest::did_you_mean(member, members.iter().map(String::as_str));
        Err(err(
            category,
            at,
            format!(
                "enum `{name}` has no member `{member}`.{} Its members: {}.",
                did_you_mean(member, members.iter().map(String::as_str)),
                list_names(members)
            ),
        )
        .about_span(len, close.iter().map(|c| format!("{prefix}{c}")).collect()))
    }

    /// Where a quoted member's text starts (after the quote) and how long it is.
    fn quoted(s: &str, pos: Pos) -> (Pos, usize, &'static str) {
        (
            Pos::new(pos.line, pos.column.saturating_add(1)),
            s.chars().count(),
            "",
        )
    }

    fn name(&self, name: &str, pos: Pos, hint: Option<&Ty>) -> Result<(Node, Ty), ExprError> {
        if let Some(ty) = self.env.carry(name) {
            return Ok((Node::new(NodeKind::Carry(name.to_owned()), pos), ty.clone()));
        }
        if let Some(Ty::Enum(e)) = hint
            && self
                .env
                .enum_members(e)
                .is_some_and(|ms| ms.iter().any(|m| m == name))
        {
            return Ok((
                Node::new(NodeKind::Const(Value::Str(name.to_owned())), pos),
                Ty::Enum(e.clone()),
            ));
        }
        let close = self.close_carries(name);
        if let Some(Ty::Enum(e)) = hint
            && let Some(members) = self.env.enum_members(e)
        {
            // Compared with an enum: a misspelled member is likelier than a misspelled carry,
            // unless no member is close and a carry is.
            let near = crate::suggest::did_you_mean(name, members.iter().map(String::as_str));
            if !near.is_empty() || close.is_empty() {
                return Err(err(
                    Category::NameError,
                    pos,
                    format!(
                        "`{name}` is no member of enum `{e}` (and names no carry).{} Its members: {}.",
                        did_you_mean(name, members.iter().map(String::as_str)),
                        list_names(members)
                    ),
                )
                .about_name(name, near));
            }
        }
        let why = if self.env.enum_members(name).is_some() {
            format!(" `{name}` is an enum: name one of its members, `{name}.member`.")
        } else if self.env.object_fields(name).is_some() {
            format!(" `{name}` is an object type, not a value.")
        } else if library::function(name).is_some() {
            format!(" `{name}` is a function: call it, `{name}(x)`.")
        } else {
            match close.first() {
                Some(first) => format!(" Did you mean `{first}`?"),
                None => {
                    // Twelve are shown (and an ellipsis for more): take no more than that.
                    let names: Vec<String> =
                        self.env.carry_names().take(13).map(str::to_owned).collect();
                    if names.is_empty() {
                        " There are no carries.".to_owned()
                    } else {
                        format!(" The carries are: {}.", list_names(&names))
                    }
                }
            }
        };
        Err(err(
            Category::NameError,
            pos,
            format!("`{name}` names no carry.{why}"),
        )
        .about_name(name, close))
    }

    fn attr(&mut self, x: &Expr, field: &str, pos: Pos) -> Result<(Node, Ty), ExprError> {
        if let ExprKind::Name(t) = &x.kind
            && self.env.carry(t).is_none()
        {
            if self.env.enum_members(t).is_some() {
                // A misspelled member is pointed at, not the enum's name before it (written
                // `Enum.member`, the member starts one past the dot; with spaces around the
                // dot the place is not the member's, and a locator that verifies the token
                // there falls back to the whole guard).
                let skip = u32::try_from(t.chars().count() + 1).unwrap_or(u32::MAX);
                let at = Pos::new(pos.line, pos.column.saturating_add(skip));
                self.member(
                    t,
                    field,
                    (at, field.chars().count(), ""),
                    Category::NameError,
                )?;
                return Ok((
                    Node::new(NodeKind::Const(Value::Str(field.to_owned())), pos),
                    Ty::Enum(t.clone()),
                ));
            }
            if self.env.object_fields(t).is_some() {
                return Err(err(
                    Category::TypeError,
                    pos,
                    format!("`{t}` is an object type, not a value: read the field of a carry"),
                ));
            }
        }
        let (xn, xt) = self.check(x, None)?;
        let ty = match &xt {
            Ty::Object(o) => {
                let fields = self.env.object_fields(o).unwrap_or_default();
                match fields.iter().find(|(n, _)| n == field) {
                    Some((_, t)) => t.clone(),
                    None => {
                        let names: Vec<String> = fields.iter().map(|(n, _)| n.clone()).collect();
                        return Err(err(
                            Category::NameError,
                            pos,
                            format!(
                                "object `{o}` has no field `{field}`.{} Its fields: {}.",
                                did_you_mean(field, names.iter().map(String::as_str)),
                                list_names(&names)
                            ),
                        ));
                    }
                }
            }
            Ty::Dict(v) => (**v).clone(),
            Ty::Any => Ty::Any,
            other => {
                let why = if library::method(field).is_some() {
                    format!(" To call the method, write `.{field}()`.")
                } else {
                    String::new()
                };
                return Err(err(
                    Category::TypeError,
                    pos,
                    format!("`{}` is a {other}, which has no fields.{why}", shown(x)),
                ));
            }
        };
        Ok((
            Node::new(NodeKind::Field(Box::new(xn), field.to_owned()), pos),
            ty,
        ))
    }

    fn index(&mut self, x: &Expr, i: &Expr, pos: Pos) -> Result<(Node, Ty), ExprError> {
        let (xn, xt) = self.check(x, None)?;
        let (in_, it) = self.check(i, None)?;
        let int_ok = matches!(it, Ty::Int | Ty::Any);
        let str_ok = matches!(it, Ty::Str | Ty::Enum(_) | Ty::Any);
        let bad = |want: &str| {
            err(
                Category::TypeError,
                i.pos,
                format!(
                    "`{}` is a {xt} and takes {want} indices; `{}` is a {it}",
                    shown(x),
                    shown(i)
                ),
            )
        };
        let ty = match &xt {
            Ty::List(t) if int_ok => (**t).clone(),
            Ty::List(_) | Ty::Str | Ty::Enum(_) if !int_ok => return Err(bad("int")),
            Ty::Str | Ty::Enum(_) => Ty::Str,
            Ty::Dict(v) if str_ok => (**v).clone(),
            Ty::Object(o) if str_ok => match &in_.kind {
                NodeKind::Const(Value::Str(k)) => {
                    let fields = self.env.object_fields(o).unwrap_or_default();
                    match fields.iter().find(|(n, _)| n == k) {
                        Some((_, t)) => t.clone(),
                        None => {
                            return Err(err(
                                Category::NameError,
                                i.pos,
                                format!("object `{o}` has no field `{k}`"),
                            ));
                        }
                    }
                }
                _ => Ty::Any,
            },
            Ty::Dict(_) | Ty::Object(_) => return Err(bad("str")),
            Ty::Any if int_ok || str_ok => Ty::Any,
            _ => {
                return Err(err(
                    Category::TypeError,
                    pos,
                    format!("`{}` is a {xt}, which cannot be indexed", shown(x)),
                ));
            }
        };
        Ok((
            Node::new(NodeKind::Index(Box::new(xn), Box::new(in_)), pos),
            ty,
        ))
    }

    /// A constant string compared with (or looked for among) enum members must be one.
    fn literal_members(&self, enum_ty: &Ty, other: &Node) -> Result<(), ExprError> {
        let Ty::Enum(name) = enum_ty else {
            return Ok(());
        };
        match &other.kind {
            NodeKind::Const(Value::Str(s)) => {
                self.member(name, s, Self::quoted(s, other.pos), Category::TypeError)
            }
            NodeKind::Const(Value::List(items)) => {
                for item in items {
                    if let Value::Str(s) = item {
                        let at = (other.pos, 0, "");
                        self.member(name, s, at, Category::TypeError)?;
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn binary(&mut self, op: BinOp, l: &Expr, r: &Expr, pos: Pos) -> Result<(Node, Ty), ExprError> {
        let (ln, lt) = self.check_flat(l, None)?;
        let enum_hint = matches!(lt, Ty::Enum(_)).then(|| lt.clone());
        match op {
            BinOp::Eq | BinOp::Ne => {
                let (rn, rt) = self.check_flat(r, enum_hint.as_ref())?;
                if !comparable(&lt, &rt) {
                    return Err(self.mismatch(op, l, &lt, r, &rt, pos));
                }
                self.literal_members(&lt, &rn)?;
                self.literal_members(&rt, &ln)?;
                Ok(self.bin_node(op, ln, rn, pos, Ty::Bool))
            }
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let (rn, rt) = self.check_flat(r, None)?;
                if !orderable(&lt, &rt) {
                    return Err(self.mismatch(op, l, &lt, r, &rt, pos));
                }
                Ok(self.bin_node(op, ln, rn, pos, Ty::Bool))
            }
            BinOp::In | BinOp::NotIn => {
                let list_hint = enum_hint.map(Ty::list);
                let (rn, rt) = self.check_flat(r, list_hint.as_ref())?;
                if !matches!(
                    rt,
                    Ty::Str | Ty::Enum(_) | Ty::List(_) | Ty::Dict(_) | Ty::Object(_) | Ty::Any
                ) {
                    return Err(err(
                        Category::TypeError,
                        r.pos,
                        format!(
                            "`{}` needs a str, list or dict on its right, and `{}` is a {rt}",
                            op.text(),
                            shown(r)
                        ),
                    ));
                }
                library::member_check(&rt, &lt, pos, Builtin::Contains)?;
                self.literal_members(&lt, &rn)?;
                if let Ty::List(e) = &rt {
                    self.literal_members(e, &ln)?;
                }
                Ok(self.bin_node(op, ln, rn, pos, Ty::Bool))
            }
            _ => {
                let (rn, rt) = self.check_flat(r, None)?;
                let ty = arith_type(op, &lt, &rt)
                    .ok_or_else(|| self.mismatch(op, l, &lt, r, &rt, pos))?;
                Ok(self.bin_node(op, ln, rn, pos, ty))
            }
        }
    }

    fn bin_node(&self, op: BinOp, l: Node, r: Node, pos: Pos, ty: Ty) -> (Node, Ty) {
        (
            Node::new(NodeKind::Binary(op, Box::new(l), Box::new(r)), pos),
            ty,
        )
    }

    fn mismatch(&self, op: BinOp, l: &Expr, lt: &Ty, r: &Expr, rt: &Ty, pos: Pos) -> ExprError {
        let extra = match (op, lt, rt) {
            (BinOp::Add, Ty::Str, _) | (BinOp::Add, _, Ty::Str) => {
                " There is no implicit conversion to text: use `str(x)`."
            }
            (BinOp::Mul, Ty::Str | Ty::List(_), _) => " There is no repetition.",
            (_, Ty::Null, _) | (_, _, Ty::Null) => " Only `==` and `!=` take null.",
            (_, Ty::Enum(_), _) | (_, _, Ty::Enum(_)) => {
                " Enum members are compared with `==`, `!=` and `in`."
            }
            _ => "",
        };
        let verb = if op.is_comparison() {
            "compare"
        } else {
            "apply"
        };
        err(
            Category::TypeError,
            pos,
            format!(
                "cannot {verb} `{}` ({lt}) and `{}` ({rt}) {} `{}`.{extra}",
                shown(l),
                shown(r),
                if op.is_comparison() { "with" } else { "to" },
                op.text()
            ),
        )
    }
}

/// The result type of an arithmetic operator, or `None` when the operands do not fit it.
fn arith_type(op: BinOp, l: &Ty, r: &Ty) -> Option<Ty> {
    let num = |t: &Ty| matches!(t, Ty::Int | Ty::Float | Ty::Any);
    match op {
        BinOp::Add => match (l, r) {
            (Ty::Int, Ty::Int) => Some(Ty::Int),
            (a, b) if a.is_numeric() && b.is_numeric() => Some(Ty::Float),
            (a, b) if a.is_stringy() && b.is_stringy() => Some(Ty::Str),
            (Ty::List(a), Ty::List(b)) => Some(Ty::list(join(a, b).unwrap_or(Ty::Any))),
            (Ty::Any, Ty::Any) => Some(Ty::Any),
            (Ty::Any, t) | (t, Ty::Any) => match t {
                Ty::Int | Ty::Float => Some(Ty::Any),
                Ty::Str | Ty::Enum(_) => Some(Ty::Str),
                Ty::List(_) => Some(Ty::list(Ty::Any)),
                _ => None,
            },
            _ => None,
        },
        BinOp::Div => (num(l) && num(r)).then_some(Ty::Float),
        _ => match (l, r) {
            (Ty::Int, Ty::Int) => Some(Ty::Int),
            (a, b) if a.is_numeric() && b.is_numeric() => Some(Ty::Float),
            (a, b) if num(a) && num(b) => Some(Ty::Any),
            _ => None,
        },
    }
}
