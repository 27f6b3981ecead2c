//! Tool signatures: `"(param, …) -> type"` (spec §5.4).
//!
//! A tool's `sig` names its parameters — the binding surface of the calling convention
//! ([`crate::bind`], spec §7) — and its result. [`parse`] reads one; [`Signature`]'s
//! `Display` prints it back in canonical form, which `parse` reads back to the same value.
//!
//! # Grammar
//!
//! ```text
//! signature := "(" [ param { "," param } [","] ] ")" [ "->" result ]
//! param     := NAME [ ":" TYPE ]
//! result    := TYPE | NAME | "(" NAME { "," NAME } [","] ")"
//! ```
//!
//! Whitespace is free between tokens. `NAME` is an identifier (a letter or `_`, then letters,
//! digits or `_`). `TYPE` is a type expression of §6.1 as [`Type::parse`] reads it: `str`,
//! `int`, `float`, `bool`, `any`, `path`, `list`, `list[T]`, `dict`, `dict[str, V]`, or the name
//! of a declared type.
//!
//! ```
//! use ais_core::sig::{parse, Return};
//! use ais_core::Type;
//!
//! let sig = parse("(header_md, tasks_md) -> str").unwrap();
//! assert_eq!(sig.param_names(), ["header_md", "tasks_md"]);
//! assert_eq!(sig.ret, Return::Type(Type::Str));
//!
//! let sig = parse("(task) -> (errors,ok)").unwrap();
//! assert_eq!(sig.ret, Return::Tuple(vec!["errors".into(), "ok".into()]));
//! assert_eq!(sig.to_string(), "(task) -> (errors, ok)");
//! ```
//!
//! # Decisions where the spec is silent
//!
//! - **A bare result naming a parameter is a one-name tuple.** `(round) -> round` returns the
//!   new value of `round`, not a value of a type called `round`: a result that is a single
//!   identifier equal to one of the parameters' names (and is not a primitive type keyword)
//!   parses as `Return::Tuple(["round"])`, printed canonically as `-> (round)`. A bare result
//!   naming a *carry* (`(c1, c2) -> all_ok`) cannot be told from a declared type's name without
//!   the program; [`Return::resolved`] makes that decision once the program is known.
//! - **`-> None`** (the Python spelling of "no result") is [`Return::None`], as is a missing
//!   `->`.
//! - **Default values are not part of a signature.** `(x: int = 3)` is rejected with a message
//!   saying to remove the default: the calling convention passes null to a parameter nothing
//!   binds (§7.1 rule 6), and a default in the signature would promise otherwise.
//! - Parameter names and result names must be unique within their list; `*args`, `**kwargs` and
//!   parenthesized types are rejected with a message naming the offset.

use crate::program::{Program, Type};
use std::fmt;

/// A parsed tool signature.
#[derive(Clone, Debug, PartialEq)]
pub struct Signature {
    /// The parameters, in order: the binding surface of §7.
    pub params: Vec<Param>,
    /// The result: a type, or a tuple of names (`-> (errors, ok)`) for a multi-write tool.
    pub ret: Return,
}

/// One parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// Its annotated type (`text: str`), if annotated.
    pub ty: Option<Type>,
}

impl Param {
    /// A parameter with this name and (optional) annotated type.
    pub fn new(name: impl Into<String>, ty: Option<Type>) -> Param {
        Param {
            name: name.into(),
            ty,
        }
    }
}

/// A signature's result.
#[derive(Clone, Debug, PartialEq)]
pub enum Return {
    /// No `->` given.
    None,
    /// A single type (`-> str`).
    Type(Type),
    /// A tuple of result names (`-> (errors, ok)`), recovered into `writes` by name.
    Tuple(Vec<String>),
}

impl Return {
    /// The result names of a tuple result (empty for any other result).
    pub fn names(&self) -> &[String] {
        match self {
            Return::Tuple(names) => names,
            _ => &[],
        }
    }

    /// True when the result declares several components (`-> (errors, ok)`): the tool returns
    /// one value per name, and write-back destructures it (see [`crate::bind::recover_writes`]).
    /// A one-name tuple (`-> (round)`) is a single value.
    pub fn is_multi(&self) -> bool {
        self.names().len() >= 2
    }

    /// This result with a bare name resolved against `program`: `-> all_ok`, where `all_ok` is
    /// not a declared type (nor the built-in `outcome`) but is a carry of the program, is the
    /// one-name tuple `-> (all_ok)` — the tool returns that carry's value. Any other result is
    /// returned unchanged, so an unknown type name stays a [`Type::Named`] for the validator to
    /// report.
    ///
    /// ```
    /// use ais_core::{Carry, Program, Type, Walker};
    /// use ais_core::sig::{parse, Return};
    ///
    /// let program = Program {
    ///     walker: Some(Walker {
    ///         carries: Some(vec![Carry { name: "all_ok".into(), ty: Some(Type::Bool), ..Default::default() }]),
    ///         ..Default::default()
    ///     }),
    ///     ..Default::default()
    /// };
    /// let sig = parse("(c1, c2) -> all_ok").unwrap();
    /// assert_eq!(sig.ret, Return::Type(Type::Named("all_ok".into())));
    /// assert_eq!(sig.ret.resolved(&program), Return::Tuple(vec!["all_ok".into()]));
    /// ```
    pub fn resolved(&self, program: &Program) -> Return {
        if let Return::Type(Type::Named(name)) = self {
            let declared = program.type_decl(name).is_some() || name == crate::program::OUTCOME;
            if !declared && program.carry(name).is_some() {
                return Return::Tuple(vec![name.clone()]);
            }
        }
        self.clone()
    }
}

impl Signature {
    /// The parameter names, in order.
    pub fn param_names(&self) -> Vec<&str> {
        self.params.iter().map(|p| p.name.as_str()).collect()
    }

    /// The parameter with this name.
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }
}

/// A signature that does not parse: what and where (a byte offset into the text).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct SigError {
    /// What is wrong.
    pub message: String,
    /// Byte offset in the signature text.
    pub offset: usize,
}

impl SigError {
    fn at(offset: usize, message: impl Into<String>) -> SigError {
        SigError {
            message: message.into(),
            offset,
        }
    }
}

/// The primitive type keywords, which a bare result always means as a type.
const TYPE_KEYWORDS: [&str; 8] = ["str", "int", "float", "bool", "any", "path", "list", "dict"];

/// Parses a signature.
///
/// Errors name the byte offset where parsing stopped and what was expected there:
///
/// ```
/// let e = ais_core::sig::parse("(a b) -> str").unwrap_err();
/// assert_eq!(e.offset, 3);
/// assert_eq!(e.message, "expected `,` or `)` to close the parameter list at byte 3, found `b`");
/// ```
pub fn parse(text: &str) -> Result<Signature, SigError> {
    let mut p = Parser { text, pos: 0 };
    p.skip_ws();
    if p.peek() != Some('(') {
        return Err(p.expected("`(` to open the parameter list, as in `(path, content) -> str`"));
    }
    p.bump();
    let params = p.params()?;
    p.skip_ws();
    let ret = if p.eat("->") {
        p.skip_ws();
        p.result(&params)?
    } else {
        Return::None
    };
    p.skip_ws();
    if let Some(c) = p.peek() {
        let what = if ret == Return::None {
            "`->` and a result, or the end of the signature"
        } else {
            "the end of the signature"
        };
        return Err(SigError::at(
            p.pos,
            format!("expected {what}, found `{c}` at byte {}", p.pos),
        ));
    }
    Ok(Signature { params, ret })
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        self.text.get(self.pos..).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn bump(&mut self) {
        if let Some(c) = self.peek() {
            self.pos += c.len_utf8();
        }
    }

    fn eat(&mut self, s: &str) -> bool {
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.bump();
        }
    }

    fn expected(&self, what: &str) -> SigError {
        let found = match self.peek() {
            Some(c) => format!("found `{c}`"),
            None => "found the end of the signature".to_owned(),
        };
        SigError::at(
            self.pos,
            format!("expected {what} at byte {}, {found}", self.pos),
        )
    }

    fn ident(&mut self) -> Option<(usize, String)> {
        let start = self.pos;
        let mut chars = self.rest().char_indices();
        match chars.next() {
            Some((_, c)) if c.is_alphabetic() || c == '_' => {}
            _ => return None,
        }
        let len = chars
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
            .map(|(i, _)| i)
            .unwrap_or(self.rest().len());
        let name = self.rest().get(..len)?.to_owned();
        self.pos += len;
        Some((start, name))
    }

    /// Parameters up to and including the closing `)`.
    fn params(&mut self) -> Result<Vec<Param>, SigError> {
        let mut params: Vec<Param> = Vec::new();
        loop {
            self.skip_ws();
            if self.eat(")") {
                return Ok(params);
            }
            if self.peek() == Some('*') {
                return Err(SigError::at(
                    self.pos,
                    format!(
                        "`*args` and `**kwargs` are not supported at byte {}: name each parameter",
                        self.pos
                    ),
                ));
            }
            let Some((start, name)) = self.ident() else {
                return Err(self.expected(if params.is_empty() {
                    "a parameter name or `)`"
                } else {
                    "a parameter name or `)` after `,`"
                }));
            };
            if params.iter().any(|p| p.name == name) {
                return Err(SigError::at(
                    start,
                    format!(
                        "parameter `{name}` is declared twice (byte {start}): rename one of them"
                    ),
                ));
            }
            self.skip_ws();
            let ty = if self.eat(":") {
                self.skip_ws();
                Some(self.ty(&[',', ')', '='])?)
            } else {
                None
            };
            self.skip_ws();
            if self.peek() == Some('=') {
                return Err(SigError::at(
                    self.pos,
                    format!(
                        "a default value is not part of a signature (byte {}): remove `= …` from \
                         `{name}`; a parameter nothing binds is passed null (spec §7.1)",
                        self.pos
                    ),
                ));
            }
            params.push(Param { name, ty });
            if self.eat(",") {
                continue;
            }
            if self.eat(")") {
                return Ok(params);
            }
            return Err(self.expected("`,` or `)` to close the parameter list"));
        }
    }

    /// A type expression ending (at bracket depth 0) before one of `stops` or at the end.
    fn ty(&mut self, stops: &[char]) -> Result<Type, SigError> {
        let start = self.pos;
        let mut depth = 0usize;
        let mut end = self.text.len();
        for (i, c) in self.rest().char_indices() {
            match c {
                '[' => depth += 1,
                ']' => {
                    if depth == 0 {
                        return Err(SigError::at(
                            start + i,
                            format!("unbalanced `]` at byte {} in a type", start + i),
                        ));
                    }
                    depth -= 1;
                }
                ')' if depth > 0 => {
                    let open = self.text.get(start..start + i).unwrap_or("").trim();
                    return Err(SigError::at(
                        start + i,
                        format!(
                            "expected `]` to close `{open}` before `)` at byte {}",
                            start + i
                        ),
                    ));
                }
                c if depth == 0 && stops.contains(&c) => {
                    end = start + i;
                    break;
                }
                _ => {}
            }
        }
        let raw = self.text.get(start..end).unwrap_or("");
        if depth > 0 {
            return Err(SigError::at(
                end,
                format!("expected `]` to close `{}` at byte {end}", raw.trim()),
            ));
        }
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            return Err(self.expected("a type"));
        }
        let ty = Type::parse(trimmed);
        if let Type::Invalid(_) = ty {
            return Err(SigError::at(
                start + (raw.len() - raw.trim_start().len()),
                format!(
                    "`{trimmed}` at byte {start} is not a type: expected str, int, float, bool, \
                     any, path, list, list[T], dict, dict[str, V] or a declared type's name"
                ),
            ));
        }
        self.pos = end;
        Ok(ty)
    }

    fn result(&mut self, params: &[Param]) -> Result<Return, SigError> {
        if self.eat("(") {
            let mut names: Vec<String> = Vec::new();
            loop {
                self.skip_ws();
                if self.eat(")") {
                    break;
                }
                let Some((start, name)) = self.ident() else {
                    return Err(self.expected("a result name, as in `-> (errors, ok)`"));
                };
                if names.contains(&name) {
                    return Err(SigError::at(
                        start,
                        format!("result `{name}` is named twice (byte {start})"),
                    ));
                }
                names.push(name);
                self.skip_ws();
                if self.eat(",") {
                    continue;
                }
                if self.eat(")") {
                    break;
                }
                return Err(self.expected("`,` or `)` to close the result names"));
            }
            if names.is_empty() {
                return Err(SigError::at(
                    self.pos.saturating_sub(1),
                    "`-> ()` names no result: write the result names, or drop `->`",
                ));
            }
            return Ok(Return::Tuple(names));
        }
        if self.peek().is_none() {
            return Err(self.expected("a result type or names after `->`"));
        }
        let ty = self.ty(&[')', ','])?;
        Ok(match ty {
            Type::Named(name) if name == "None" => Return::None,
            Type::Named(name)
                if !TYPE_KEYWORDS.contains(&name.as_str())
                    && params.iter().any(|p| p.name == name) =>
            {
                Return::Tuple(vec![name])
            }
            ty => Return::Type(ty),
        })
    }
}

impl fmt::Display for Signature {
    /// The canonical form: `(name, name: type) -> result`, one space after each comma, ` -> `
    /// around the arrow, a tuple result always parenthesized, no arrow when there is no result.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (i, p) in self.params.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(&p.name)?;
            if let Some(ty) = &p.ty {
                write!(f, ": {ty}")?;
            }
        }
        f.write_str(")")?;
        match &self.ret {
            Return::None => Ok(()),
            Return::Type(ty) => write!(f, " -> {ty}"),
            Return::Tuple(names) => write!(f, " -> ({})", names.join(", ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_the_spec_and_corpus_forms() {
        let s = parse("(header_md, tasks_md) -> str").unwrap();
        assert_eq!(s.param_names(), ["header_md", "tasks_md"]);
        assert!(s.params.iter().all(|p| p.ty.is_none()));
        assert_eq!(s.ret, Return::Type(Type::Str));

        let s = parse("(text: str) -> str").unwrap();
        assert_eq!(s.params, vec![Param::new("text", Some(Type::Str))]);

        let s = parse("(task) -> (errors,ok)").unwrap();
        assert_eq!(s.ret, Return::Tuple(names(&["errors", "ok"])));
        assert!(s.ret.is_multi());

        let s = parse("(answer) -> (c1,c2,c3,c4,c5,c6)").unwrap();
        assert_eq!(s.ret.names().len(), 6);

        let s = parse("() -> str").unwrap();
        assert!(s.params.is_empty());

        let s = parse("(path)").unwrap();
        assert_eq!(s.ret, Return::None);

        let s = parse("(rows: list[str], counts: dict[str, int]) -> list[list[str]]").unwrap();
        assert_eq!(s.params[1].ty, Some(Type::Dict(Some(Box::new(Type::Int)))));
        assert_eq!(
            s.ret,
            Return::Type(Type::List(Some(Box::new(Type::List(Some(Box::new(
                Type::Str
            )))))))
        );

        let s = parse("  ( a ,b : path , )->Plan  ").unwrap();
        assert_eq!(s.param_names(), ["a", "b"]);
        assert_eq!(s.params[1].ty, Some(Type::Path));
        assert_eq!(s.ret, Return::Type(Type::Named("Plan".into())));

        assert_eq!(parse("(x) -> None").unwrap().ret, Return::None);
    }

    #[test]
    fn a_bare_result_naming_a_parameter_is_a_one_name_tuple() {
        let s = parse("(round) -> round").unwrap();
        assert_eq!(s.ret, Return::Tuple(names(&["round"])));
        assert!(!s.ret.is_multi());
        assert_eq!(s.to_string(), "(round) -> (round)");
        // A primitive keyword stays a type even when a parameter has that name.
        assert_eq!(
            parse("(path) -> path").unwrap().ret,
            Return::Type(Type::Path)
        );
        // A bare name that is not a parameter is a type name until resolved against a program.
        assert_eq!(
            parse("(c1, c2) -> all_ok").unwrap().ret,
            Return::Type(Type::Named("all_ok".into()))
        );
    }

    #[test]
    fn resolved_turns_a_carry_name_into_a_one_name_tuple_but_not_a_declared_type() {
        use crate::program::{Carry, TypeDecl, TypeKind, Walker};
        let program = Program {
            types: Some(vec![TypeDecl {
                name: "Plan".into(),
                kind: TypeKind::Object(vec![]),
                ..Default::default()
            }]),
            walker: Some(Walker {
                carries: Some(vec![
                    Carry {
                        name: "all_ok".into(),
                        ..Default::default()
                    },
                    Carry {
                        name: "Plan".into(),
                        ..Default::default()
                    },
                ]),
                ..Default::default()
            }),
            ..Default::default()
        };
        let r = parse("(a) -> all_ok").unwrap().ret.resolved(&program);
        assert_eq!(r, Return::Tuple(names(&["all_ok"])));
        let plan = parse("(a) -> Plan").unwrap();
        assert_eq!(plan.ret.resolved(&program), plan.ret);
        let unknown = parse("(a) -> Nope").unwrap().ret;
        assert_eq!(unknown.resolved(&program), unknown);
        let outcome = parse("(a) -> outcome").unwrap().ret;
        assert_eq!(outcome.resolved(&program), outcome);
    }

    #[track_caller]
    fn err(text: &str, offset: usize, needle: &str) {
        let e = parse(text).unwrap_err();
        assert_eq!(e.offset, offset, "{text}: {e}");
        assert!(e.message.contains(needle), "{text}: {}", e.message);
    }

    #[test]
    fn errors_name_the_offset_and_what_was_expected() {
        err("", 0, "expected `(`");
        err("path -> str", 0, "expected `(`");
        err("(a, b", 5, "`,` or `)`");
        err("(a b)", 3, "`,` or `)`");
        err("(a,, b)", 3, "a parameter name");
        err("(a: ) -> str", 4, "expected a type");
        err("(a: list[str) -> str", 12, "expected `]`");
        err("(a: list[str", 12, "expected `]`");
        err("(a: dict[int, str])", 4, "is not a type");
        err("(a: str]) -> str", 7, "unbalanced `]`");
        err("(x: int = 3)", 8, "default value");
        err("(a, a)", 4, "declared twice");
        err("(*args)", 1, "`*args`");
        err("(a) ->", 6, "a result type or names");
        err("(a) -> (x y)", 10, "`,` or `)`");
        err("(a) -> ()", 8, "names no result");
        err("(a) -> (x, x)", 11, "named twice");
        err("(a) -> (list[str])", 12, "`,` or `)`");
        err("(a) -> (1)", 8, "a result name");
        err("(a) -> str extra", 7, "is not a type");
        err("(a) str", 4, "`->` and a result");
        err("(a) -> (x) y", 11, "the end of the signature");
        err("(é: str) -> str)", 16, "end of the signature");
    }

    #[test]
    fn errors_never_panic_on_odd_text() {
        for t in [
            "(", ")", "->", "(((", "(]", "(a:[)", "(a) -> [", "(a) -> ]", "(ü", "(a) -> (", "\u{0}",
        ] {
            let _ = parse(t);
        }
    }

    #[test]
    fn display_is_canonical() {
        for (text, canon) in [
            ("(header_md,tasks_md)->str", "(header_md, tasks_md) -> str"),
            ("(task) -> (errors,ok)", "(task) -> (errors, ok)"),
            ("()", "()"),
            ("( )  -> list[ str ]", "() -> list[str]"),
            ("(a: dict[str,int])", "(a: dict[str, int])"),
        ] {
            let s = parse(text).unwrap();
            assert_eq!(s.to_string(), canon);
            assert_eq!(parse(canon).unwrap(), s);
        }
    }

    fn ident() -> impl Strategy<Value = String> {
        "[a-z_][a-z0-9_]{0,6}".prop_filter("not a keyword or None", |s| {
            !TYPE_KEYWORDS.contains(&s.as_str()) && s != "None"
        })
    }

    fn ty() -> impl Strategy<Value = Type> {
        let leaf = prop_oneof![
            Just(Type::Str),
            Just(Type::Int),
            Just(Type::Float),
            Just(Type::Bool),
            Just(Type::Any),
            Just(Type::Path),
            Just(Type::List(None)),
            Just(Type::Dict(None)),
            "[A-Z][A-Za-z0-9]{0,5}"
                .prop_filter("None means no result", |s| s != "None")
                .prop_map(Type::Named),
        ];
        leaf.prop_recursive(3, 8, 1, |inner| {
            prop_oneof![
                inner.clone().prop_map(|t| Type::List(Some(Box::new(t)))),
                inner.prop_map(|t| Type::Dict(Some(Box::new(t)))),
            ]
        })
    }

    fn signature() -> impl Strategy<Value = Signature> {
        let params = proptest::collection::vec((ident(), proptest::option::of(ty())), 0..6);
        let ret = prop_oneof![
            Just(Return::None),
            ty().prop_map(Return::Type),
            proptest::collection::vec(ident(), 1..5).prop_map(Return::Tuple),
        ];
        (params, ret).prop_map(|(ps, ret)| {
            let mut params: Vec<Param> = Vec::new();
            for (name, ty) in ps {
                if params.iter().all(|p| p.name != name) {
                    params.push(Param { name, ty });
                }
            }
            let ret = match ret {
                Return::Tuple(mut ns) => {
                    let mut seen = Vec::new();
                    ns.retain(|n| {
                        let fresh = !seen.contains(n);
                        seen.push(n.clone());
                        fresh
                    });
                    Return::Tuple(ns)
                }
                other => other,
            };
            Signature { params, ret }
        })
    }

    proptest! {
        #[test]
        fn printing_then_parsing_round_trips(sig in signature()) {
            let printed = sig.to_string();
            let parsed = parse(&printed);
            prop_assert_eq!(parsed, Ok(sig), "{}", printed);
        }

        #[test]
        fn parse_never_panics(text in "\\PC{0,40}") {
            let _ = parse(&text);
        }

        #[test]
        fn parsed_text_prints_to_a_fixed_point(text in "\\(( ?[a-c](: ?(str|int|list\\[str\\]))? ?,){0,3}\\)( ?-> ?(str|\\(x, ?y\\)|a|Plan))?") {
            if let Ok(sig) = parse(&text) {
                let once = sig.to_string();
                let again = parse(&once).map(|s| s.to_string());
                prop_assert_eq!(again, Ok(once));
            }
        }
    }
}
