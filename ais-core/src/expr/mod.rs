//! The expression language of guards and CODE bodies.
//!
//! Edges carry guards (`plan_ok == true`, `op == Op.merge`, `round < 3`, `x in {a, b}`) and a
//! `CODE` instruction may carry a single-expression `body` (`loud.split(",")`, `len(rows)`).
//! Both run on the Deterministic Unit, so both are as safe and predictable as code we wrote:
//! a closed AST over plain [`Value`]s, never `eval`, never a host call, parsed and type-checked
//! whole before anything runs, and bounded by host-set [`Limits`].
//!
//! ```
//! use ais_core::expr::{self, Limits, TypeEnv};
//! use ais_core::Type;
//! use ais_core::Value;
//! use indexmap::IndexMap;
//!
//! let mut env = TypeEnv::new();
//! env.add_enum("Op", ["merge".to_owned(), "split".to_owned()]);
//! env.add_carry("op", &Type::parse("Op"));
//! env.add_carry("round", &Type::Int);
//! let limits = Limits::default();
//! let guard = expr::compile_str("op == Op.merge and round < 3", &env, &limits).unwrap();
//!
//! let mut carries = IndexMap::new();
//! carries.insert("op".to_owned(), Value::from("merge"));
//! carries.insert("round".to_owned(), Value::Int(1));
//! assert_eq!(guard.eval_bool(&carries), Ok(true));
//!
//! // Checked before it runs: no such member, with the place and a suggestion.
//! let e = expr::compile_str("op == Op.merg", &env, &limits).unwrap_err();
//! assert_eq!((e.category.as_str(), e.line, e.column), ("name_error", 1, 10)); // at `merg`
//! assert!(e.message.contains("Did you mean `merge`?"));
//! ```
//!
//! # Use
//!
//! - The validator: [`compile_guard`] for each non-sentinel edge guard and [`compile_str`]
//!   for each `CODE` body, in one [`TypeEnv`] built per program ([`TypeEnv::from_program`]); each error is an
//!   [`ExprError`] whose line, column and token length are within the expression text (the
//!   finding points inside the guard or body).
//! - The runtime: the [`Plan`](crate::plan::Plan) holds every guard and body compiled; it
//!   evaluates them with [`Compiled::eval_bool`] / [`Compiled::eval`] against the carry file
//!   (any [`Carries`]). [`compile_guard`], [`compile_str`] and [`choose_edge`] serve a caller
//!   without a plan.
//! - The macro: [`parse`] (one grammar for `.agir` files and Rust programs), then
//!   [`compile`] against a [`TypeEnv`].
//! - The CLI: [`eval_str`].
//!
//! # Grammar
//!
//! A Python-shaped expression subset, with Python's precedence (lowest first):
//!
//! ```text
//! expr       := or_expr [ "if" or_expr "else" expr ]
//! or_expr    := and_expr { "or" and_expr }                  short-circuit
//! and_expr   := not_expr { "and" not_expr }                 short-circuit
//! not_expr   := "not" not_expr | comparison
//! comparison := arith [ cmp_op arith ]                      no chaining: a < b < c is an error
//! cmp_op     := "==" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "not" "in"
//!             | "is" ["not"] None                           `x is None` is `x == null`
//! arith      := term { ("+" | "-") term }
//! term       := unary { ("*" | "/" | "//" | "%") unary }
//! unary      := "-" unary | postfix                         `-` before a number is a negative literal
//! postfix    := primary { "." NAME [ "(" args ")" ] | "[" subscript "]" }
//! subscript  := expr | [expr] ":" [expr] [ ":" [expr] ]     index, or slice a[start:stop:step]
//! primary    := literal | NAME | NAME "(" args ")" | "(" expr ")"
//!             | "[" args "]"                                list
//!             | "{" "}" | "{" expr ":" expr { "," expr ":" expr } [","] "}"   dict
//!             | "{" args "}"                                set (a list without duplicates)
//! args       := [ expr { "," expr } [","] ]
//! literal    := INT | FLOAT | STRING | true | false | True | False | null | None
//! ```
//!
//! - Names are ASCII `[A-Za-z_][A-Za-z0-9_]*`; the keywords above are reserved.
//! - Integers are decimal without leading zeros and fit `i64`; floats have a fraction and/or
//!   an exponent (`3.5`, `1e3`, `1.5e-2`) and are finite. There is no `**`.
//! - Strings use double or single quotes and JSON escapes (`\n \t \" \' \\ \/ \b \f \r
//!   \uXXXX`, surrogate pairs included); raw control characters are rejected.
//! - Whitespace is spaces and newlines (a tab is an error); there are no comments.
//! - Positions are 1-based line and column (in characters) within the expression.
//!
//! # Names
//!
//! - A bare name is a **carry**. One that names no carry is a `name_error` (with the closest
//!   carry suggested) — except where it is compared with an enum-typed operand
//!   (`op == merge`, `op in {merge, split}`) and is a member of that enum.
//! - `Enum.member` is an **enum member**; a member is a string at run time, so an enum-typed
//!   carry also compares with a string literal, which must then be a member
//!   (`op == "merge"`; `op == "merg"` is a `type_error`). String operations apply to members
//!   (`op.upper()`, `"mer" in op`, `op[0]`) and give a `str`; members are not ordered.
//! - `x.field` reads a field of an object-typed carry (checked against the declared fields;
//!   the built-in object `outcome` has `ok: bool`, `error: str`, `output: str`, `value: any`),
//!   a key of a dict (missing: `value_error` at run time), or anything of an untyped carry.
//! - A carry with no value yet reads as `null`.
//!
//! # Types and semantics
//!
//! Carries are typed by their declarations (`path` is a `str`; an untyped carry is `any` and
//! checked at run time). A guard must be a `bool` and must read at least one carry; a body's
//! type must be assignable to its `writes[0]` carry ([`TypeEnv::assignable`]).
//!
//! - `==`/`!=`: operands of compatible types — numbers with numbers (`1 == 1.0`), strings
//!   with strings and enum members, lists and dicts element-wise, anything with `null`
//!   (`x == null` is true only for `null`). Comparing a `str` with an `int` is a `type_error`,
//!   statically or, for untyped carries, at run time.
//! - `< <= > >=`: numbers (int and float compare exactly), strings (by code point), bools.
//! - `in`/`not in`: a substring of a `str`, an item of a list (items of another kind are not
//!   equal), a key of a dict.
//! - `and`/`or`/`not` and the condition of `a if c else b` take `bool`s only (no
//!   truthiness); `and`/`or` short-circuit.
//! - `+`: numbers, `str + str`, `list + list`; `- * % //` numbers; `/` always gives a float;
//!   `//` and `%` round toward negative infinity as in Python. `int` and `float` promote to
//!   `float`. There is no implicit conversion to text and no repetition.
//! - Errors, with a category: division by zero, integer overflow, a non-finite float result,
//!   an index out of range, a missing key, a slice step of 0 are `value_error`s.
//! - Indexing takes negative indices; slicing follows Python (`s[1:]`, `xs[::-1]`); strings
//!   index and slice by character.
//!
//! Sub-expressions made only of constants are evaluated while checking, so `round < 1 / 0`
//! is reported before a run.
//!
//! # Library
//!
//! Functions:
//!
//! | call | takes | gives |
//! |---|---|---|
//! | `len(x)` | str (characters), list, dict | int |
//! | `str(x)` | anything: strings as they are, `true`/`false`/`null`, numbers, lists and dicts as JSON | str |
//! | `int(x)` | int, float (truncated), bool, str (decimal, trimmed) | int |
//! | `float(x)` | int, float, bool, str | float |
//! | `bool(x)` | anything: false for `null`, `false`, 0, empty str/list/dict | bool |
//! | `abs(n)` | number | same |
//! | `round(n)` | number, to the nearest int, ties to even | int |
//! | `min(xs)`, `max(xs)`, `min(a, b, …)`, `max(a, b, …)` | numbers, strings or bools | an item |
//! | `sum(xs)` | list of numbers | int or float |
//! | `sorted(xs)`, `reversed(xs)` | list (sorted: of one orderable kind) | list |
//! | `any(xs)`, `all(xs)` | list of bools | bool |
//!
//! Methods:
//!
//! | call | receiver | gives |
//! |---|---|---|
//! | `s.lower()`, `s.upper()` | str | str |
//! | `s.strip([chars])`, `s.lstrip([chars])`, `s.rstrip([chars])` | str | str |
//! | `s.split([sep])` | str; no `sep`: split on runs of whitespace | list[str] |
//! | `s.splitlines()` | str | list[str] |
//! | `sep.join(xs)` | str separator; a list of str | str |
//! | `s.replace(old, new)` | str | str |
//! | `s.startswith(p)`, `s.endswith(p)` | str | bool |
//! | `s.find(sub)` | str: character index or -1 | int |
//! | `s.isdigit()`, `s.isalpha()`, `s.isspace()` | str (non-empty) | bool |
//! | `x.contains(y)` | str (substring), list (item), dict (key): same as `y in x` | bool |
//! | `x.count(y)` | str (non-overlapping substrings), list (items) | int |
//! | `xs.index(y)` | list: first position, `value_error` when absent | int |
//! | `d.keys()`, `d.values()`, `d.items()` | dict (items: `[key, value]` pairs) | list |
//! | `d.get(key[, default])` | dict: the value, or `default` (`null`) when absent | value |
//!
//! # Guard sentinels
//!
//! A guard whose text, lowercased and trimmed, is one of `""`, `otherwise`, `default`,
//! `else`, `always`, `true`, `_` (spec Appendix A.3) is a default edge, recognized before
//! parsing: see [`is_sentinel`] and [`Guard::Default`].
//!
//! # Limits and errors
//!
//! [`Limits`] bound source bytes, identifier length, nesting depth (a flat operator chain is
//! one level), tree height (nesting plus chain links), tokens, operations per evaluation, cumulative allocation, string bytes and
//! collection items. Exceeding one is a `limit_error`. Every error is an [`ExprError`] with
//! a [`Category`] (`syntax_error`, `name_error`, `type_error`, `value_error`, `limit_error`),
//! the line and column within the expression, and a message that says what to do.

mod ast;
mod calls;
mod check;
mod eval;
mod lexer;
mod library;
mod limits;
mod ops;
mod parser;
mod types;

pub use ast::{BinOp, Expr, ExprKind, LogicOp, UnOp};
pub use eval::{Carries, Compiled};
pub use limits::Limits;
pub use parser::parse;
pub use types::{Ty, TypeEnv};

use crate::program::Program;
use crate::source::Pos;
use crate::suggest::CarryNames;
use crate::value::Value;
use indexmap::IndexMap;
use std::fmt;

spelled! {
    /// An error category (after the Aegis seed), printed `syntax_error`, `name_error`,
    /// `type_error`, `value_error`, `limit_error`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum Category {
        /// The text is not an expression.
        SyntaxError => "syntax_error",
        /// A name that is no carry, enum, function or field.
        NameError => "name_error",
        /// An operation on values of the wrong type.
        TypeError => "type_error",
        /// A right type with a wrong value (division by zero, index out of range, missing key).
        ValueError => "value_error",
        /// A host-set limit was exceeded.
        LimitError => "limit_error",
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An expression error: category, position within the expression, message.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ExprError {
    /// The category.
    pub category: Category,
    /// 1-based line within the expression.
    pub line: u32,
    /// 1-based column within the expression.
    pub column: u32,
    /// What is wrong.
    pub message: String,
    /// The length in characters of the offending name or token at the position (0 when only
    /// the start is known).
    pub len: u32,
    /// Names close to an unknown one, best first (also named in the message).
    pub did_you_mean: Vec<String>,
}

impl ExprError {
    /// An error at a position.
    pub fn new(category: Category, pos: Pos, message: impl Into<String>) -> Self {
        ExprError {
            category,
            line: pos.line,
            column: pos.column,
            message: articles(&message.into()),
            len: 0,
            did_you_mean: Vec::new(),
        }
    }

    /// Marks the error as about the name `name` at its position, with the names close to it.
    pub fn about_name(mut self, name: &str, did_you_mean: Vec<String>) -> Self {
        self.len = u32::try_from(name.chars().count()).unwrap_or(u32::MAX);
        self.did_you_mean = did_you_mean;
        self
    }

    /// Marks the error as about `len` characters of text at its position, with the names it
    /// could have meant (a misspelled `Enum.member`, whose text is longer than the member).
    pub fn about_span(mut self, len: usize, did_you_mean: Vec<String>) -> Self {
        self.len = u32::try_from(len).unwrap_or(u32::MAX);
        self.did_you_mean = did_you_mean;
        self
    }

    /// The range of the offending text within the expression.
    pub fn range(&self) -> crate::source::SubRange {
        crate::source::SubRange::new(self.pos(), self.len)
    }

    /// The position within the expression.
    pub fn pos(&self) -> Pos {
        Pos::new(self.line, self.column)
    }
}

/// Fixes the article before a type name that messages build as "a {type}": "an int",
/// "an Op", and no article before "null". Text in backticks (quoted source) is left alone.
fn articles(message: &str) -> String {
    let mut out = String::with_capacity(message.len() + 8);
    let mut in_code = false;
    let mut rest = message;
    while let Some(c) = rest.chars().next() {
        if c == '`' {
            in_code = !in_code;
        }
        if !in_code && rest.starts_with(" a ") {
            let after = &rest[3..];
            if after.starts_with("null") {
                out.push(' ');
                rest = &rest[3..];
                continue;
            }
            if after.starts_with(['a', 'e', 'i', 'o', 'A', 'E', 'I', 'O']) {
                out.push_str(" an ");
                rest = after;
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The guard sentinels of spec Appendix A.3, lowercased.
pub const SENTINELS: [&str; 7] = ["", "otherwise", "default", "else", "always", "true", "_"];

/// True when a guard's text is a sentinel meaning "default edge" (Appendix A.3).
pub fn is_sentinel(guard: &str) -> bool {
    let g = guard.trim().to_lowercase();
    SENTINELS.contains(&g.as_str())
}

/// The carries whose error value a guard's text tests ([`Expr::errors_tested`]): `c.ok`,
/// `c.error`. Empty for a sentinel or text that does not parse.
///
/// ```
/// assert_eq!(ais_core::expr::errors_tested("not rows_loaded.ok"), ["rows_loaded"]);
/// assert!(ais_core::expr::errors_tested("len(rows) > 0").is_empty());
/// ```
pub fn errors_tested(guard: &str) -> Vec<String> {
    if is_sentinel(guard) {
        return Vec::new();
    }
    parse(guard, &Limits::default())
        .map(|e| e.errors_tested().into_iter().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// Checks an expression and lowers it to its compiled form.
pub fn compile(expr: &Expr, env: &TypeEnv, limits: &Limits) -> Result<Compiled, ExprError> {
    compile_with(expr, env, limits, None)
}

/// [`compile`] with the did-you-mean index of `env`'s carry names, when the caller has one
/// for a whole program (the validator): an unknown name then costs a lookup, not an index.
pub(crate) fn compile_with(
    expr: &Expr,
    env: &TypeEnv,
    limits: &Limits,
    carry_names: Option<&dyn CarryNames>,
) -> Result<Compiled, ExprError> {
    let (node, ty) = check::Checker::new(env, limits, carry_names).check(expr, None)?;
    Ok(Compiled {
        node,
        ty: ty.to_type(),
        checked: ty,
        limits: *limits,
    })
}

/// Parses, checks and compiles expression text.
pub fn compile_str(src: &str, env: &TypeEnv, limits: &Limits) -> Result<Compiled, ExprError> {
    compile(&parse(src, limits)?, env, limits)
}

/// [`compile_str`] with the program's did-you-mean index (see [`compile_with`]).
pub(crate) fn compile_str_with(
    src: &str,
    env: &TypeEnv,
    limits: &Limits,
    carry_names: Option<&dyn CarryNames>,
) -> Result<Compiled, ExprError> {
    compile_with(&parse(src, limits)?, env, limits, carry_names)
}

/// A compiled edge guard.
#[derive(Clone, Debug, PartialEq)]
pub enum Guard {
    /// A sentinel (or absent) guard: the default edge.
    Default,
    /// A condition: take the edge when it evaluates to `true`.
    Cond(Box<Compiled>),
}

/// Which outgoing edge a DU `ROUTE` (or any instruction) takes, by spec §4.4.1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    /// Take the edge at this index (of the guards passed in).
    Edge(usize),
    /// Several guarded edges, none holds, and no default: the run must fault, reporting that
    /// the discriminator fell outside the guard set.
    DeadEnd,
    /// No outgoing edges: the instruction halts.
    Halt,
}

/// Chooses among an instruction's outgoing edges, given their guards in edge order: the first
/// edge whose guard holds; otherwise the first default edge; otherwise, when exactly one edge
/// is guarded, that edge (its guard is a precondition on a transition that must happen);
/// otherwise [`Choice::DeadEnd`]. A guard that fails to evaluate is returned as an error with
/// the index of its edge.
pub fn choose_edge<C: Carries + ?Sized>(
    guards: &[Guard],
    carries: &C,
) -> Result<Choice, (usize, ExprError)> {
    if guards.is_empty() {
        return Ok(Choice::Halt);
    }
    let default = guards.iter().position(|g| matches!(g, Guard::Default));
    let guarded: Vec<usize> = (0..guards.len())
        .filter(|i| matches!(guards[*i], Guard::Cond(_)))
        .collect();
    if default.is_none() && guarded.len() == 1 {
        return Ok(Choice::Edge(guarded[0]));
    }
    for (i, g) in guards.iter().enumerate() {
        if let Guard::Cond(c) = g
            && c.eval_bool(carries).map_err(|e| (i, e))?
        {
            return Ok(Choice::Edge(i));
        }
    }
    Ok(default.map_or(Choice::DeadEnd, Choice::Edge))
}

/// Compiles an edge's guard in a program's environment ([`TypeEnv::from_program`], built once
/// for all of its guards and bodies): a sentinel is [`Guard::Default`]; anything else must
/// type-check as a `bool` and read at least one carry.
pub fn compile_guard(env: &TypeEnv, guard: &str, limits: &Limits) -> Result<Guard, ExprError> {
    compile_guard_with(env, guard, limits, None)
}

/// [`compile_guard`] with the program's did-you-mean index (see [`compile_with`]).
pub(crate) fn compile_guard_with(
    env: &TypeEnv,
    guard: &str,
    limits: &Limits,
    carry_names: Option<&dyn CarryNames>,
) -> Result<Guard, ExprError> {
    if is_sentinel(guard) {
        return Ok(Guard::Default);
    }
    let expr = parse(guard, limits)?;
    let compiled = compile_with(&expr, env, limits, carry_names)?;
    if !matches!(compiled.checked, Ty::Bool | Ty::Any) {
        let hint = match compiled.checked {
            Ty::Str | Ty::Enum(_) => format!(": compare it, e.g. `{expr} == \"…\"`"),
            Ty::Int | Ty::Float => format!(": compare it, e.g. `{expr} > 0`"),
            _ => String::new(),
        };
        return Err(ExprError::new(
            Category::TypeError,
            expr.pos,
            format!(
                "a guard must be a bool, and `{expr}` is a {}{hint}",
                compiled.checked
            ),
        ));
    }
    if compiled.carries_read().is_empty() {
        return Err(ExprError::new(
            Category::NameError,
            expr.pos,
            format!(
                "the guard `{expr}` reads no carry, so it is constant: compare a carry, or write \
                 `otherwise` for a default edge"
            ),
        ));
    }
    Ok(Guard::Cond(Box::new(compiled)))
}

/// Type-checks and evaluates expression text against carry values, for `ais eval`: against
/// the program's carry types when a program is given (carries it does not declare are typed
/// from their values), else against types inferred from the values.
pub fn eval_str(
    src: &str,
    carries: &IndexMap<String, Value>,
    program: Option<&Program>,
) -> Result<Value, ExprError> {
    let limits = Limits::default();
    let env = match program {
        Some(p) => {
            let mut env = TypeEnv::from_program(p);
            let inferred =
                TypeEnv::from_values(carries.iter().filter(|(k, _)| env.carry(k).is_none()));
            for name in inferred.carry_names() {
                if let Some(ty) = inferred.carry(name) {
                    env.add_carry(name, &ty.to_type());
                }
            }
            env
        }
        None => TypeEnv::from_values(carries),
    };
    compile_str(src, &env, &limits)?.eval(carries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn articles_read_right_outside_quoted_source() {
        assert_eq!(articles("not a int"), "not an int");
        assert_eq!(articles("is a Op, not a str"), "is an Op, not a str");
        assert_eq!(
            articles("cannot order a null and a int"),
            "cannot order null and an int"
        );
        assert_eq!(
            articles("`x if a else b` is a any"),
            "`x if a else b` is an any"
        );
        assert_eq!(
            articles("not a Unicode scalar value"),
            "not a Unicode scalar value"
        );
        assert_eq!(articles("é a i"), "é an i");
    }
}
