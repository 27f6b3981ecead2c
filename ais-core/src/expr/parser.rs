//! The parser: tokens to an [`Expr`], by recursive descent with Python's precedence.
//!
//! The parser's own recursion follows real nesting only — parentheses, brackets, calls,
//! subscripts, field access, unary operators, the `else` branch of a conditional — bounded by
//! [`Limits::max_depth`]. A chain of binary operators (`a + b + c`) is parsed by a loop, so it
//! is no deeper however long it is; the height of the tree it builds is bounded by
//! [`Limits::max_height`], which bounds every later pass (checker, evaluator, printer, drop).

use super::ast::{BinOp, Expr, ExprKind, LogicOp, UnOp};
use super::lexer::{Kw, P, Tok, Token, tokenize};
use super::limits::Limits;
use super::{Category, ExprError};
use crate::source::Pos;

/// Parses one expression. The whole text must be the expression.
pub fn parse(src: &str, limits: &Limits) -> Result<Expr, ExprError> {
    let tokens = tokenize(src, limits)?;
    if tokens.first().is_some_and(|t| t.tok == Tok::End) {
        return Err(err(Pos::new(1, 1), "the expression is empty"));
    }
    let mut p = Parser {
        tokens,
        at: 0,
        nesting: 0,
        limits,
    };
    let (e, _) = p.expr()?;
    let t = p.peek();
    if t.tok != Tok::End {
        let hint = match t.tok {
            Tok::Punct(P::RParen | P::RBracket | P::RBrace) => {
                "a closing bracket with no opening one"
            }
            Tok::Punct(P::Comma) => "one expression only: a tuple is not a value here",
            _ => "an operator is missing before it, or the expression ended early",
        };
        return Err(err(
            t.pos,
            format!(
                "unexpected {} after a complete expression: {hint}",
                show(&t.tok)
            ),
        ));
    }
    Ok(e)
}

fn err(pos: Pos, message: impl Into<String>) -> ExprError {
    ExprError::new(Category::SyntaxError, pos, message)
}

/// The error for nesting deeper than `max_depth` (shared with the checker).
pub(crate) fn too_deep(pos: Pos, max_depth: usize) -> ExprError {
    ExprError::new(
        Category::LimitError,
        pos,
        format!(
            "expression nests deeper than {max_depth} levels (parentheses, brackets, calls, \
             subscripts, field access, `-` and `not` each nest one level): \
             compute a part in an earlier step"
        ),
    )
}

/// The error for a tree taller than `max_height` (shared with the checker).
pub(crate) fn too_tall(pos: Pos, max_height: usize) -> ExprError {
    ExprError::new(
        Category::LimitError,
        pos,
        format!(
            "expression chains more than {max_height} operations: split the chain into \
             parenthesized parts, `(a + b) + (c + d)`, or compute a part in an earlier step"
        ),
    )
}

fn show(t: &Tok) -> String {
    match t {
        Tok::Ident(n) => format!("name `{n}`"),
        Tok::Int(i) => format!("number `{i}`"),
        Tok::Float(f) => format!("number `{f:?}`"),
        Tok::Str(_) => "string".to_owned(),
        Tok::Kw(k) => format!("`{}`", format!("{k:?}").to_lowercase()),
        Tok::Punct(p) => format!("`{}`", p.text()),
        Tok::End => "end of expression".to_owned(),
    }
}

/// A parsed node and the depth of the tree under it.
type Parsed = Result<(Expr, usize), ExprError>;

struct Parser<'a> {
    tokens: Vec<Token>,
    at: usize,
    nesting: usize,
    limits: &'a Limits,
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        // The token list always ends with `End`, and `at` never moves past it.
        &self.tokens[self.at.min(self.tokens.len() - 1)]
    }

    fn peek2(&self) -> &Tok {
        &self.tokens[(self.at + 1).min(self.tokens.len() - 1)].tok
    }

    fn next(&mut self) -> Token {
        let t = self.peek().clone();
        if t.tok != Tok::End {
            self.at += 1;
        }
        t
    }

    fn at_punct(&self, p: P) -> bool {
        self.peek().tok == Tok::Punct(p)
    }

    fn at_kw(&self, k: Kw) -> bool {
        self.peek().tok == Tok::Kw(k)
    }

    fn expect(&mut self, p: P, what: &str) -> Result<Pos, ExprError> {
        let t = self.next();
        if t.tok == Tok::Punct(p) {
            Ok(t.pos)
        } else {
            Err(err(
                t.pos,
                format!("expected `{}` {what}, found {}", p.text(), show(&t.tok)),
            ))
        }
    }

    /// Builds a node one level above its tallest child, within the height limit.
    fn node(&self, kind: ExprKind, pos: Pos, child_height: usize) -> Parsed {
        let height = child_height + 1;
        if height > self.limits.max_height {
            return Err(too_tall(pos, self.limits.max_height));
        }
        Ok((Expr::new(kind, pos), height))
    }

    /// Enters one level of real nesting, within the depth limit.
    fn enter(&mut self) -> Result<(), ExprError> {
        self.nesting += 1;
        if self.nesting > self.limits.max_depth {
            return Err(too_deep(self.peek().pos, self.limits.max_depth));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.nesting -= 1;
    }

    /// expr := or_expr ['if' or_expr 'else' expr]
    fn expr(&mut self) -> Parsed {
        self.enter()?;
        let r = self.if_expr();
        self.leave();
        r
    }

    fn if_expr(&mut self) -> Parsed {
        let (then, d1) = self.or_expr()?;
        if !self.at_kw(Kw::If) {
            return Ok((then, d1));
        }
        self.next();
        let (cond, d2) = self.or_expr()?;
        if !self.at_kw(Kw::Else) {
            let t = self.peek();
            return Err(err(
                t.pos,
                format!(
                    "a conditional expression needs `else`: `a if cond else b` (found {})",
                    show(&t.tok)
                ),
            ));
        }
        self.next();
        let (otherwise, d3) = self.expr()?;
        let pos = then.pos;
        self.node(
            ExprKind::IfElse {
                cond: Box::new(cond),
                then: Box::new(then),
                otherwise: Box::new(otherwise),
            },
            pos,
            d1.max(d2).max(d3),
        )
    }

    fn or_expr(&mut self) -> Parsed {
        let (mut l, mut d) = self.and_expr()?;
        while self.at_kw(Kw::Or) {
            self.next();
            let (r, dr) = self.and_expr()?;
            let pos = l.pos;
            (l, d) = self.node(
                ExprKind::Logic(LogicOp::Or, Box::new(l), Box::new(r)),
                pos,
                d.max(dr),
            )?;
        }
        Ok((l, d))
    }

    fn and_expr(&mut self) -> Parsed {
        let (mut l, mut d) = self.not_expr()?;
        while self.at_kw(Kw::And) {
            self.next();
            let (r, dr) = self.not_expr()?;
            let pos = l.pos;
            (l, d) = self.node(
                ExprKind::Logic(LogicOp::And, Box::new(l), Box::new(r)),
                pos,
                d.max(dr),
            )?;
        }
        Ok((l, d))
    }

    fn not_expr(&mut self) -> Parsed {
        if self.at_kw(Kw::Not) {
            let pos = self.next().pos;
            self.enter()?;
            let r = self.not_expr();
            self.leave();
            let (x, d) = r?;
            return self.node(ExprKind::Unary(UnOp::Not, Box::new(x)), pos, d);
        }
        self.comparison()
    }

    fn cmp_op(&mut self) -> Result<Option<(BinOp, Pos)>, ExprError> {
        let t = self.peek().clone();
        let op = match t.tok {
            Tok::Punct(P::EqEq) => BinOp::Eq,
            Tok::Punct(P::NotEq) => BinOp::Ne,
            Tok::Punct(P::Lt) => BinOp::Lt,
            Tok::Punct(P::Le) => BinOp::Le,
            Tok::Punct(P::Gt) => BinOp::Gt,
            Tok::Punct(P::Ge) => BinOp::Ge,
            Tok::Kw(Kw::In) => BinOp::In,
            Tok::Kw(Kw::Not) if *self.peek2() == Tok::Kw(Kw::In) => {
                self.next();
                BinOp::NotIn
            }
            Tok::Kw(Kw::Is) => {
                self.next();
                let negated = self.at_kw(Kw::Not);
                if negated {
                    self.next();
                }
                // `is` compares with `None` only; it is `==` / `!=` on null.
                if !self.at_kw(Kw::Null) {
                    return Err(err(
                        t.pos,
                        "`is` / `is not` compare with `None` only: compare values with `==` / `!=`",
                    ));
                }
                return Ok(Some((if negated { BinOp::Ne } else { BinOp::Eq }, t.pos)));
            }
            _ => return Ok(None),
        };
        self.next();
        Ok(Some((op, t.pos)))
    }

    fn comparison(&mut self) -> Parsed {
        let (l, dl) = self.arith()?;
        let Some((op, _)) = self.cmp_op()? else {
            return Ok((l, dl));
        };
        let (r, dr) = self.arith()?;
        if let Some((op2, pos2)) = self.cmp_op()? {
            return Err(err(
                pos2,
                format!(
                    "comparisons do not chain: write `a {} b and b {} c`",
                    op.text(),
                    op2.text()
                ),
            ));
        }
        let pos = l.pos;
        self.node(
            ExprKind::Binary(op, Box::new(l), Box::new(r)),
            pos,
            dl.max(dr),
        )
    }

    fn arith(&mut self) -> Parsed {
        let (mut l, mut d) = self.term()?;
        loop {
            let op = match self.peek().tok {
                Tok::Punct(P::Plus) => BinOp::Add,
                Tok::Punct(P::Minus) => BinOp::Sub,
                _ => return Ok((l, d)),
            };
            self.next();
            let (r, dr) = self.term()?;
            let pos = l.pos;
            (l, d) = self.node(
                ExprKind::Binary(op, Box::new(l), Box::new(r)),
                pos,
                d.max(dr),
            )?;
        }
    }

    fn term(&mut self) -> Parsed {
        let (mut l, mut d) = self.unary()?;
        loop {
            let op = match self.peek().tok {
                Tok::Punct(P::Star) => BinOp::Mul,
                Tok::Punct(P::Slash) => BinOp::Div,
                Tok::Punct(P::SlashSlash) => BinOp::FloorDiv,
                Tok::Punct(P::Percent) => BinOp::Mod,
                _ => return Ok((l, d)),
            };
            self.next();
            let (r, dr) = self.unary()?;
            let pos = l.pos;
            (l, d) = self.node(
                ExprKind::Binary(op, Box::new(l), Box::new(r)),
                pos,
                d.max(dr),
            )?;
        }
    }

    fn unary(&mut self) -> Parsed {
        match self.peek().tok {
            Tok::Punct(P::Minus) => {
                let pos = self.next().pos;
                // `-` directly before a number that no postfix follows is a negative literal.
                let literal = matches!(self.peek().tok, Tok::Int(_) | Tok::Float(_))
                    && !matches!(self.peek2(), Tok::Punct(P::Dot | P::LBracket | P::LParen));
                if literal {
                    let t = self.next();
                    let kind = match t.tok {
                        Tok::Int(i) => {
                            ExprKind::Int(0i64.checked_sub_unsigned(i).ok_or_else(|| {
                                err(t.pos, format!("`-{i}` does not fit a 64-bit integer"))
                            })?)
                        }
                        Tok::Float(f) => ExprKind::Float(-f),
                        _ => return Err(err(t.pos, "expected a number")),
                    };
                    return self.node(kind, pos, 0);
                }
                self.enter()?;
                let r = self.unary();
                self.leave();
                let (x, d) = r?;
                self.node(ExprKind::Unary(UnOp::Neg, Box::new(x)), pos, d)
            }
            Tok::Punct(P::Plus) => Err(err(
                self.peek().pos,
                "unary `+` is not in the expression language: drop it",
            )),
            Tok::Kw(Kw::Not) => Err(err(
                self.peek().pos,
                "`not` binds looser than arithmetic and comparison: parenthesize it, `(not x)`",
            )),
            _ => self.postfix(),
        }
    }

    /// A primary and its postfix links; each link (`.name`, `.m()`, `[i]`) nests one level, as
    /// the checker counts it.
    fn postfix(&mut self) -> Parsed {
        let outer = self.nesting;
        let r = self.postfix_links();
        self.nesting = outer;
        r
    }

    fn postfix_links(&mut self) -> Parsed {
        let (mut x, mut d) = self.primary()?;
        loop {
            match self.peek().tok {
                Tok::Punct(P::Dot) => {
                    self.enter()?;
                    self.next();
                    let t = self.next();
                    let name = match t.tok {
                        Tok::Ident(n) => n,
                        other => {
                            return Err(err(
                                t.pos,
                                format!(
                                    "expected a field or method name after `.`, found {}",
                                    show(&other)
                                ),
                            ));
                        }
                    };
                    let pos = x.pos;
                    if self.at_punct(P::LParen) {
                        let (args, da) = self.args()?;
                        (x, d) =
                            self.node(ExprKind::Method(Box::new(x), name, args), pos, d.max(da))?;
                    } else {
                        (x, d) = self.node(ExprKind::Attr(Box::new(x), name), pos, d)?;
                    }
                }
                Tok::Punct(P::LBracket) => {
                    self.next();
                    self.enter()?;
                    (x, d) = self.subscript(x, d)?;
                }
                Tok::Punct(P::LParen) => {
                    return Err(err(
                        self.peek().pos,
                        "only library functions and methods can be called: `len(x)`, `s.lower()`",
                    ));
                }
                _ => return Ok((x, d)),
            }
        }
    }

    /// After `[`: an index `x[i]` or a slice `x[a:b]` / `x[a:b:c]`.
    fn subscript(&mut self, x: Expr, d: usize) -> Parsed {
        let pos = x.pos;
        let mut parts: [Option<Box<Expr>>; 3] = [None, None, None];
        let mut depth = d;
        let mut colons = 0;
        loop {
            if !self.at_punct(P::Colon) && !self.at_punct(P::RBracket) {
                let (e, de) = self.if_expr()?;
                depth = depth.max(de);
                parts[colons] = Some(Box::new(e));
            }
            if self.at_punct(P::Colon) && colons < 2 {
                self.next();
                colons += 1;
                continue;
            }
            break;
        }
        self.expect(P::RBracket, "to close the subscript")?;
        if colons == 0 {
            let [Some(i), _, _] = parts else {
                return Err(err(pos, "an empty subscript: write `x[i]` or `x[a:b]`"));
            };
            return self.node(ExprKind::Index(Box::new(x), i), pos, depth);
        }
        self.node(ExprKind::Slice(Box::new(x), parts), pos, depth)
    }

    /// `(a, b, …)` after a function or method name; returns the arguments and their depth.
    fn args(&mut self) -> Result<(Vec<Expr>, usize), ExprError> {
        self.expect(P::LParen, "to open the arguments")?;
        self.enter()?;
        let r = self.items(P::RParen, "to close the arguments");
        self.leave();
        let (items, d) = r?;
        Ok((items, d))
    }

    /// Comma-separated expressions up to `close` (a trailing comma is allowed).
    fn items(&mut self, close: P, what: &str) -> Result<(Vec<Expr>, usize), ExprError> {
        let mut items = Vec::new();
        let mut depth = 0;
        while !self.at_punct(close) {
            let (e, d) = self.if_expr()?;
            depth = depth.max(d);
            items.push(e);
            if items.len() > self.limits.max_collection_len {
                return Err(ExprError {
                    category: Category::LimitError,
                    line: self.peek().pos.line,
                    column: self.peek().pos.column,
                    message: format!("more than {} items", self.limits.max_collection_len),
                    len: 0,
                    did_you_mean: Vec::new(),
                });
            }
            if !self.at_punct(P::Comma) {
                break;
            }
            self.next();
        }
        self.expect(close, what)?;
        Ok((items, depth))
    }

    fn primary(&mut self) -> Parsed {
        let t = self.next();
        let pos = t.pos;
        match t.tok {
            Tok::Int(i) => {
                let v = i64::try_from(i)
                    .map_err(|_| err(pos, format!("`{i}` does not fit a 64-bit integer")))?;
                self.node(ExprKind::Int(v), pos, 0)
            }
            Tok::Float(f) => self.node(ExprKind::Float(f), pos, 0),
            Tok::Str(s) => self.node(ExprKind::Str(s), pos, 0),
            Tok::Kw(Kw::True) => self.node(ExprKind::Bool(true), pos, 0),
            Tok::Kw(Kw::False) => self.node(ExprKind::Bool(false), pos, 0),
            Tok::Kw(Kw::Null) => self.node(ExprKind::Null, pos, 0),
            Tok::Ident(name) => {
                if self.at_punct(P::LParen) {
                    let (args, d) = self.args()?;
                    self.node(ExprKind::Call(name, args), pos, d)
                } else {
                    self.node(ExprKind::Name(name), pos, 0)
                }
            }
            Tok::Punct(P::LParen) => {
                if self.at_punct(P::RParen) {
                    return Err(err(pos, "`()` is not a value"));
                }
                let (e, d) = self.expr()?;
                if self.at_punct(P::Comma) {
                    return Err(err(
                        self.peek().pos,
                        "tuples are not values here: use a list `[a, b]`",
                    ));
                }
                self.expect(P::RParen, "to close `(`")?;
                Ok((e, d))
            }
            Tok::Punct(P::LBracket) => {
                self.enter()?;
                let r = self.items(P::RBracket, "to close the list");
                self.leave();
                let (items, d) = r?;
                self.node(ExprKind::List(items), pos, d)
            }
            Tok::Punct(P::LBrace) => {
                self.enter()?;
                let r = self.braces(pos);
                self.leave();
                r
            }
            Tok::Kw(Kw::If | Kw::Else) => Err(err(
                pos,
                "a conditional expression reads `a if cond else b`",
            )),
            other => Err(err(
                pos,
                format!("expected a value, found {}", show(&other)),
            )),
        }
    }

    /// After `{`: a dict `{k: v, …}`, `{}` (an empty dict), or a set `{a, b}`.
    fn braces(&mut self, pos: Pos) -> Parsed {
        if self.at_punct(P::RBrace) {
            self.next();
            return self.node(ExprKind::Dict(Vec::new()), pos, 0);
        }
        let (first, d0) = self.if_expr()?;
        if !self.at_punct(P::Colon) {
            // A set.
            let mut items = vec![first];
            let mut depth = d0;
            if self.at_punct(P::Comma) {
                self.next();
                let (rest, d) = self.items(P::RBrace, "to close the set")?;
                items.extend(rest);
                depth = depth.max(d);
            } else {
                self.expect(P::RBrace, "to close the set")?;
            }
            return self.node(ExprKind::Set(items), pos, depth);
        }
        let mut pairs = Vec::new();
        let mut depth = d0;
        let mut key = first;
        loop {
            self.expect(P::Colon, "between a dict key and its value")?;
            let (value, dv) = self.if_expr()?;
            depth = depth.max(dv);
            pairs.push((key, value));
            if pairs.len() > self.limits.max_collection_len {
                return Err(ExprError {
                    category: Category::LimitError,
                    line: pos.line,
                    column: pos.column,
                    message: format!("more than {} items", self.limits.max_collection_len),
                    len: 0,
                    did_you_mean: Vec::new(),
                });
            }
            if !self.at_punct(P::Comma) {
                break;
            }
            self.next();
            if self.at_punct(P::RBrace) {
                break;
            }
            let (k, dk) = self.if_expr()?;
            depth = depth.max(dk);
            key = k;
        }
        self.expect(P::RBrace, "to close the dict")?;
        self.node(ExprKind::Dict(pairs), pos, depth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(src: &str) -> Expr {
        parse(src, &Limits::default()).unwrap_or_else(|e| panic!("{src}: {e:?}"))
    }

    fn fails(src: &str) -> ExprError {
        parse(src, &Limits::default()).unwrap_err()
    }

    fn round(src: &str) -> String {
        p(src).to_string()
    }

    #[test]
    fn precedence_follows_python() {
        assert_eq!(round("a + b * c"), "a + b * c");
        assert_eq!(round("(a + b) * c"), "(a + b) * c");
        assert_eq!(round("a - (b - c)"), "a - (b - c)");
        assert_eq!(round("not a == b"), "not a == b");
        assert_eq!(round("not a and b or c"), "not a and b or c");
        assert_eq!(round("a or (b and c)"), "a or b and c");
        assert_eq!(round("(a or b) and c"), "(a or b) and c");
        assert_eq!(
            round("x if c else y if d else z"),
            "x if c else y if d else z"
        );
        assert_eq!(round("(x if c else y) + 1"), "(x if c else y) + 1");
        assert_eq!(round("-x.y[0]"), "-x.y[0]");
        assert_eq!(round("(-x).y"), "(-x).y");
        assert_eq!(round("-a * b"), "-a * b");
        assert_eq!(round("a * -b"), "a * -b");
        let e = p("not a == b");
        assert!(matches!(e.kind, ExprKind::Unary(UnOp::Not, _)));
    }

    #[test]
    fn negative_literals_and_negation_are_told_apart() {
        assert_eq!(p("-5").kind, ExprKind::Int(-5));
        assert_eq!(p("-9223372036854775808").kind, ExprKind::Int(i64::MIN));
        assert_eq!(p("- 2.5").kind, ExprKind::Float(-2.5));
        assert!(matches!(p("-(5)").kind, ExprKind::Unary(UnOp::Neg, _)));
        assert_eq!(round("-(5)"), "-(5)");
        assert_eq!(round("1 - -5"), "1 - -5");
        assert_eq!(round("(-5)[0]"), "(-5)[0]");
        assert_eq!(round("--x"), "-(-x)");
        assert_eq!(fails("9223372036854775808").category, Category::SyntaxError);
    }

    #[test]
    fn reads_every_form() {
        for src in [
            "plan_ok == true",
            "op == Op.merge",
            "round < 3",
            "x in {a, b}",
            "x not in [1, 2]",
            "loud.split(\",\")",
            "len(rows)",
            "spec.width * 2 // 3 % 4",
            "rows[0][\"name\"]",
            "s[1:]",
            "s[:-1]",
            "s[::2]",
            "s[a:b:c]",
            "s[:]",
            "{\"a\": 1, \"b\": [true, null]}",
            "{}",
            "max(1, 2.5, x)",
            "\", \".join(sorted(d.keys()))",
            "a if b else c",
            "x is None",
        ] {
            let e = p(src);
            let printed = e.to_string();
            let again = p(&printed);
            assert_eq!(
                e.without_positions(),
                again.without_positions(),
                "{src} -> {printed}"
            );
        }
        assert_eq!(round("x is not None"), "x != null");
        assert_eq!(round("[1, 2,]"), "[1, 2]");
        assert_eq!(round("'a\\'b'"), "\"a'b\"");
    }

    #[test]
    fn syntax_errors_say_where_and_what() {
        let e = fails("a == b == c");
        assert_eq!(e.category, Category::SyntaxError);
        assert_eq!((e.line, e.column), (1, 8));
        assert!(e.message.contains("do not chain"), "{}", e.message);
        for bad in [
            "",
            "   ",
            "a +",
            "(a",
            "a)",
            "[1, 2",
            "{1: 2, 3}",
            "f(x)(y)",
            "a.1",
            "x is 3",
            "a if b",
            "+a",
            "(a, b)",
            "()",
            "a b",
            "x[]",
            "sorted(xs, reverse=True)",
            "1 + not x",
        ] {
            assert_eq!(fails(bad).category, Category::SyntaxError, "{bad:?}");
        }
    }

    #[test]
    fn nesting_is_bounded() {
        let limits = Limits::default();
        let deep = format!("{}x{}", "(".repeat(40), ")".repeat(40));
        assert_eq!(fails(&deep).category, Category::LimitError);
        let deep = format!("{}x", "not ".repeat(40));
        assert_eq!(fails(&deep).category, Category::LimitError);
        let deep = format!("{}x{}", "[".repeat(40), "]".repeat(40));
        assert_eq!(fails(&deep).category, Category::LimitError);
        let deep = format!("x{}", ".f".repeat(40));
        assert!(fails(&deep).message.contains("nests deeper than 32"));
        let deep = format!("x{}", "[0]".repeat(40));
        assert!(fails(&deep).message.contains("nests deeper than 32"));
        let deep = format!("{}x{}", "len(".repeat(40), ")".repeat(40));
        assert!(fails(&deep).message.contains("nests deeper than 32"));
        let ok = format!("{}x{}", "(".repeat(31), ")".repeat(31));
        assert!(parse(&ok, &limits).is_ok());
    }

    #[test]
    fn a_flat_operator_chain_is_not_nesting() {
        let limits = Limits::default();
        for op in [" + ", " - ", " * ", " // ", " and ", " or "] {
            let chain = vec!["x"; 33].join(op);
            assert!(parse(&chain, &limits).is_ok(), "{op}");
            let chain = vec!["x"; limits.max_height].join(op);
            let e = parse(&chain, &limits).unwrap();
            assert_eq!(e.to_string(), chain);
        }
        // A chain inside 31 parentheses, with chains in its operands.
        let inner = vec!["a * b"; 200].join(" + ");
        let nested = format!("{}{inner}{}", "(".repeat(31), ")".repeat(31));
        assert!(parse(&nested, &limits).is_ok());
        let chain = vec!["x"; limits.max_height + 1].join(" + ");
        let e = fails(&chain);
        assert_eq!(e.category, Category::LimitError);
        assert!(e.message.contains("chains more than 1024"), "{}", e.message);
    }

    #[test]
    fn a_100_000_operand_chain_is_rejected_in_linear_time() {
        // Source and token limits raised, so the chain reaches the parser.
        let limits = Limits {
            max_source_bytes: usize::MAX,
            max_tokens: usize::MAX,
            ..Limits::default()
        };
        // The best of three runs, so that other tests running alongside do not count.
        let time = |n: usize| {
            let chain = vec!["1"; n].join(" + ");
            (0..3)
                .map(|_| {
                    let start = std::time::Instant::now();
                    let e = parse(&chain, &limits).unwrap_err();
                    assert!(e.message.contains("chains more than"), "{}", e.message);
                    start.elapsed()
                })
                .min()
                .unwrap_or_default()
        };
        let small = time(100_000);
        let large = time(400_000);
        // Four times the operands: well under the sixteen times a quadratic parser would take.
        assert!(
            large < small * 10 + std::time::Duration::from_millis(100),
            "{small:?} for 100k operands, {large:?} for 400k"
        );
    }
}
