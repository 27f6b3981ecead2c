//! AGX, the AGS expression language (`expressions.md`, SPEC.md §16): a tokenizer and a
//! recursive-descent parser with one production per precedence level, the function table with
//! arities, and the references an expression makes (for the scope and dataflow rules).

mod eval;

pub use eval::{Env, EvalError, eval, stringify};

use serde_json::Value as Json;

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum BinOp {
    Or,
    And,
    In,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

/// A unary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `!` / `not`.
    Not,
    /// Unary `-`.
    Neg,
}

/// A parsed expression. `at` is the character offset of the construct in the expression text.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A literal: number, string, `true`, `false`, `null`.
    Lit(Json),
    /// `[a, b]`.
    List(Vec<Expr>),
    /// A dotted reference `a.b.c`.
    Ref {
        /// The segments.
        path: Vec<String>,
        /// Where it starts.
        at: usize,
    },
    /// A function call.
    Call {
        /// The function's name.
        name: String,
        /// The arguments.
        args: Vec<Expr>,
        /// Where the name starts.
        at: usize,
    },
    /// A unary operation.
    Unary(UnOp, Box<Expr>),
    /// A binary operation.
    Binary(BinOp, Box<Expr>, Box<Expr>),
}

/// The functions of expressions.md §5, with their least and most argument counts.
pub const FUNCTIONS: &[(&str, usize, usize)] = &[
    ("len", 1, 1),
    ("count", 1, 1),
    ("contains", 2, 2),
    ("startswith", 2, 2),
    ("endswith", 2, 2),
    ("lower", 1, 1),
    ("upper", 1, 1),
    ("trim", 1, 1),
    ("matches", 2, 2),
    ("split", 2, 2),
    ("join", 2, 2),
    ("int", 1, 1),
    ("float", 1, 1),
    ("bool", 1, 1),
    ("str", 1, 1),
    ("json", 1, 1),
    ("get", 2, 3),
    ("default", 2, 2),
    ("any", 1, 1),
    ("all", 1, 1),
    ("succeeded", 1, 1),
    ("failed", 1, 1),
    ("skipped", 1, 1),
    ("output", 2, 2),
];

/// Why an expression does not parse (AG204): what, and the character offset.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntaxError {
    /// What is wrong.
    pub message: String,
    /// Character offset in the expression text.
    pub at: usize,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(Json),
    Str(String),
    Ident(String),
    Op(&'static str),
}

const OPS: [&str; 21] = [
    "||", "&&", "==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%", "!", "(", ")", "[", "]",
    ",", ".", "${{",
];

fn lex(text: &str) -> Result<Vec<(Tok, usize)>, SyntaxError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c.is_ascii_digit() {
            let mut j = i;
            while j < chars.len() && (chars[j].is_ascii_digit() || chars[j] == '.') {
                j += 1;
            }
            if j < chars.len() && matches!(chars[j], 'e' | 'E') {
                j += 1;
                if j < chars.len() && matches!(chars[j], '+' | '-') {
                    j += 1;
                }
                while j < chars.len() && chars[j].is_ascii_digit() {
                    j += 1;
                }
            }
            let s: String = chars[i..j].iter().collect();
            let n = s
                .parse::<i64>()
                .ok()
                .map(Json::from)
                .or_else(|| {
                    s.parse::<f64>()
                        .ok()
                        .and_then(serde_json::Number::from_f64)
                        .map(Json::Number)
                })
                .ok_or_else(|| SyntaxError {
                    message: format!("`{s}` is not a number"),
                    at: start,
                })?;
            out.push((Tok::Num(n), start));
            i = j;
        } else if c == '"' || c == '\'' {
            let (s, next) = string(&chars, i)?;
            out.push((Tok::Str(s), start));
            i = next;
        } else if c.is_ascii_alphabetic() || c == '_' {
            let mut j = i;
            while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            out.push((Tok::Ident(chars[i..j].iter().collect()), start));
            i = j;
        } else {
            let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
            let Some(op) = OPS.iter().find(|op| rest.starts_with(**op)) else {
                return Err(SyntaxError {
                    message: format!("unexpected character `{c}`"),
                    at: start,
                });
            };
            if *op == "${{" {
                return Err(SyntaxError {
                    message: "`${{ }}` interpolation is for templates, not expressions".into(),
                    at: start,
                });
            }
            out.push((Tok::Op(op), start));
            i += op.chars().count();
        }
    }
    Ok(out)
}

fn string(chars: &[char], open: usize) -> Result<(String, usize), SyntaxError> {
    let quote = chars[open];
    let mut s = String::new();
    let mut i = open + 1;
    while i < chars.len() {
        match chars[i] {
            c if c == quote => return Ok((s, i + 1)),
            '\\' => {
                let Some(&e) = chars.get(i + 1) else { break };
                s.push(match e {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    '0' => '\0',
                    other => other,
                });
                i += 2;
            }
            c => {
                s.push(c);
                i += 1;
            }
        }
    }
    Err(SyntaxError {
        message: "this string is never closed".into(),
        at: open,
    })
}

/// Parses an expression (expression position).
/// Whether `name` is an AGX identifier (`[A-Za-z_][A-Za-z0-9_]*`), so a reference can name it:
/// a node id with a `-` or a leading digit (which the schema allows) is not one.
pub fn is_ident(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The reference `nodes.<node>.outputs.<name>` when AGX can write it; otherwise why not and
/// what to do instead (rename the node to an identifier), as a repair's words.
pub fn output_reference(node: &str, name: &str) -> Result<String, String> {
    if is_ident(node) {
        return Ok(format!("nodes.{node}.outputs.{name}"));
    }
    let mut renamed: String = node
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if renamed.starts_with(|c: char| c.is_ascii_digit()) {
        // A node id starts with a letter or a digit (the schema), an identifier not a digit.
        renamed.insert_str(0, "n_");
    }
    Err(format!(
        "no expression can name node `{node}` (AGX names are identifiers, `[A-Za-z_][A-Za-z0-9_]*`): rename it `{renamed}` (in `nodes`, `entrypoints`, `depends_on` and edges) and read `nodes.{renamed}.outputs.{name}`"
    ))
}

pub fn parse(text: &str) -> Result<Expr, SyntaxError> {
    let toks = lex(text)?;
    let mut p = Parser {
        toks,
        i: 0,
        end: text.chars().count(),
        depth: 0,
    };
    if p.toks.is_empty() {
        return Err(SyntaxError {
            message: "the expression is empty".into(),
            at: 0,
        });
    }
    let e = p.or()?;
    if let Some((t, at)) = p.toks.get(p.i) {
        return Err(SyntaxError {
            message: format!("unexpected {} after a complete expression", describe(t)),
            at: *at,
        });
    }
    Ok(e)
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Num(n) => format!("number `{n}`"),
        Tok::Str(s) => format!("string `{s:?}`"),
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Op(o) => format!("`{o}`"),
    }
}

/// The most nested parentheses, lists and unary operators accepted.
const MAX_DEPTH: usize = 64;

struct Parser {
    toks: Vec<(Tok, usize)>,
    i: usize,
    end: usize,
    depth: usize,
}

impl Parser {
    fn peek_op(&self, ops: &[&str]) -> Option<&'static str> {
        match self.toks.get(self.i) {
            Some((Tok::Op(o), _)) if ops.contains(o) => Some(o),
            _ => None,
        }
    }

    fn peek_word(&self, words: &[&str]) -> bool {
        matches!(self.toks.get(self.i), Some((Tok::Ident(w), _)) if words.contains(&w.as_str()))
    }

    fn here(&self) -> usize {
        self.toks.get(self.i).map_or(self.end, |t| t.1)
    }

    fn expect(&mut self, op: &str) -> Result<(), SyntaxError> {
        if self.peek_op(&[op]).is_some() {
            self.i += 1;
            Ok(())
        } else {
            Err(SyntaxError {
                message: match self.toks.get(self.i) {
                    Some((t, _)) => format!("expected `{op}`, found {}", describe(t)),
                    None => format!("expected `{op}`, found the end of the expression"),
                },
                at: self.here(),
            })
        }
    }

    fn or(&mut self) -> Result<Expr, SyntaxError> {
        let mut e = self.and()?;
        while self.peek_op(&["||"]).is_some() || self.peek_word(&["or"]) {
            self.i += 1;
            e = Expr::Binary(BinOp::Or, Box::new(e), Box::new(self.and()?));
        }
        Ok(e)
    }

    fn and(&mut self) -> Result<Expr, SyntaxError> {
        let mut e = self.in_expr()?;
        while self.peek_op(&["&&"]).is_some() || self.peek_word(&["and"]) {
            self.i += 1;
            e = Expr::Binary(BinOp::And, Box::new(e), Box::new(self.in_expr()?));
        }
        Ok(e)
    }

    fn in_expr(&mut self) -> Result<Expr, SyntaxError> {
        let mut e = self.level(0)?;
        while self.peek_word(&["in"]) {
            self.i += 1;
            e = Expr::Binary(BinOp::In, Box::new(e), Box::new(self.level(0)?));
        }
        Ok(e)
    }

    /// The left-associative binary levels below `in`: equality, comparison, additive,
    /// multiplicative.
    fn level(&mut self, n: usize) -> Result<Expr, SyntaxError> {
        const LEVELS: [&[(&str, BinOp)]; 4] = [
            &[("==", BinOp::Eq), ("!=", BinOp::Ne)],
            &[
                ("<=", BinOp::Le),
                (">=", BinOp::Ge),
                ("<", BinOp::Lt),
                (">", BinOp::Gt),
            ],
            &[("+", BinOp::Add), ("-", BinOp::Sub)],
            &[("*", BinOp::Mul), ("/", BinOp::Div), ("%", BinOp::Mod)],
        ];
        let Some(ops) = LEVELS.get(n) else {
            return self.unary();
        };
        let names: Vec<&str> = ops.iter().map(|(s, _)| *s).collect();
        let mut e = self.level(n + 1)?;
        while let Some(op) = self.peek_op(&names) {
            self.i += 1;
            let bin = ops.iter().find(|(s, _)| *s == op).map(|(_, b)| *b);
            let rhs = self.level(n + 1)?;
            if let Some(bin) = bin {
                e = Expr::Binary(bin, Box::new(e), Box::new(rhs));
            }
        }
        Ok(e)
    }

    fn nest(&mut self) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(SyntaxError {
                message: format!("the expression nests deeper than {MAX_DEPTH} levels"),
                at: self.here(),
            });
        }
        Ok(())
    }

    fn unary(&mut self) -> Result<Expr, SyntaxError> {
        let op = if self.peek_op(&["!"]).is_some() || self.peek_word(&["not"]) {
            Some(UnOp::Not)
        } else if self.peek_op(&["-"]).is_some() {
            Some(UnOp::Neg)
        } else {
            None
        };
        match op {
            Some(op) => {
                self.i += 1;
                self.nest()?;
                let e = self.unary()?;
                self.depth -= 1;
                Ok(Expr::Unary(op, Box::new(e)))
            }
            None => self.primary(),
        }
    }

    fn primary(&mut self) -> Result<Expr, SyntaxError> {
        let at = self.here();
        let Some((tok, _)) = self.toks.get(self.i).cloned() else {
            return Err(SyntaxError {
                message: "the expression ends where a value was expected".into(),
                at,
            });
        };
        self.i += 1;
        match tok {
            Tok::Num(n) => Ok(Expr::Lit(n)),
            Tok::Str(s) => Ok(Expr::Lit(Json::String(s))),
            Tok::Op("(") => {
                self.nest()?;
                let e = self.or()?;
                self.expect(")")?;
                self.depth -= 1;
                Ok(e)
            }
            Tok::Op("[") => {
                self.nest()?;
                let items = self.items("]")?;
                self.depth -= 1;
                Ok(Expr::List(items))
            }
            Tok::Ident(w) => self.word(w, at),
            Tok::Op(o) => Err(SyntaxError {
                message: format!("`{o}` cannot start a value"),
                at,
            }),
        }
    }

    fn items(&mut self, close: &str) -> Result<Vec<Expr>, SyntaxError> {
        let mut items = Vec::new();
        if self.peek_op(&[close]).is_some() {
            self.i += 1;
            return Ok(items);
        }
        loop {
            items.push(self.or()?);
            if self.peek_op(&[","]).is_some() {
                self.i += 1;
                continue;
            }
            self.expect(close)?;
            return Ok(items);
        }
    }

    fn word(&mut self, w: String, at: usize) -> Result<Expr, SyntaxError> {
        match w.as_str() {
            "true" => return Ok(Expr::Lit(Json::Bool(true))),
            "false" => return Ok(Expr::Lit(Json::Bool(false))),
            "null" => return Ok(Expr::Lit(Json::Null)),
            "and" | "or" | "not" | "in" => {
                return Err(SyntaxError {
                    message: format!("`{w}` is an operator and cannot start a value"),
                    at,
                });
            }
            _ => {}
        }
        if self.peek_op(&["("]).is_some() {
            self.i += 1;
            self.nest()?;
            let args = self.items(")")?;
            self.depth -= 1;
            let Some((_, min, max)) = FUNCTIONS.iter().find(|(n, _, _)| *n == w) else {
                return Err(SyntaxError {
                    message: format!("`{w}` is not an AGX function"),
                    at,
                });
            };
            if args.len() < *min || args.len() > *max {
                let want = if min == max {
                    format!("{min}")
                } else {
                    format!("{min} or {max}")
                };
                return Err(SyntaxError {
                    message: format!("`{w}` takes {want} argument(s), given {}", args.len()),
                    at,
                });
            }
            return Ok(Expr::Call { name: w, args, at });
        }
        let mut path = vec![w];
        while self.peek_op(&["."]).is_some() {
            self.i += 1;
            match self.toks.get(self.i) {
                Some((Tok::Ident(seg), _)) => {
                    path.push(seg.clone());
                    self.i += 1;
                }
                _ => {
                    return Err(SyntaxError {
                        message: "a name must follow `.`".into(),
                        at: self.here(),
                    });
                }
            }
        }
        Ok(Expr::Ref { path, at })
    }
}

/// A reference an expression makes: a dotted path, or the dynamic `output(id, name)` and the
/// node-state functions with literal arguments, normalized to `nodes.<id>.outputs.<name>` /
/// `nodes.<id>`.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// The segments.
    pub path: Vec<String>,
    /// Character offset in the expression text.
    pub at: usize,
}

/// Every reference `e` makes, in order.
pub fn references(e: &Expr) -> Vec<Reference> {
    let mut out = Vec::new();
    walk(e, &mut out);
    out
}

fn walk(e: &Expr, out: &mut Vec<Reference>) {
    match e {
        Expr::Lit(_) => {}
        Expr::List(items) => items.iter().for_each(|i| walk(i, out)),
        Expr::Ref { path, at } => out.push(Reference {
            path: path.clone(),
            at: *at,
        }),
        Expr::Call { name, args, at } => {
            let lit = |i: usize| match args.get(i) {
                Some(Expr::Lit(Json::String(s))) => Some(s.clone()),
                _ => None,
            };
            match (name.as_str(), lit(0), lit(1)) {
                ("output", Some(id), Some(out_name)) => out.push(Reference {
                    path: vec!["nodes".into(), id, "outputs".into(), out_name],
                    at: *at,
                }),
                ("succeeded" | "failed" | "skipped", Some(id), _) => out.push(Reference {
                    path: vec!["nodes".into(), id],
                    at: *at,
                }),
                _ => {}
            }
            args.iter().for_each(|a| walk(a, out));
        }
        Expr::Unary(_, a) => walk(a, out),
        Expr::Binary(_, a, b) => {
            walk(a, out);
            walk(b, out);
        }
    }
}

/// The `${{ … }}` pieces of a template: each expression's text and its character offset, or the
/// offset of an interpolation that is never closed.
pub fn template_parts(text: &str) -> Result<Vec<(String, usize)>, usize> {
    let mut out = Vec::new();
    let mut rest = text;
    let mut base = 0usize;
    while let Some(open) = rest.find("${{") {
        let after = &rest[open + 3..];
        let Some(close) = after.find("}}") else {
            return Err(base + rest[..open].chars().count());
        };
        let inner = &after[..close];
        let at = base + rest[..open + 3].chars().count();
        out.push((inner.to_owned(), at));
        let consumed = open + 3 + close + 2;
        base += rest[..consumed].chars().count();
        rest = &rest[consumed..];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_and_references() {
        let e = parse("a.b == 1 && !(c in [1, 2]) || len(d.e) > 0").unwrap();
        let refs: Vec<String> = references(&e).iter().map(|r| r.path.join(".")).collect();
        assert_eq!(refs, ["a.b", "c", "d.e"]);
        assert!(matches!(e, Expr::Binary(BinOp::Or, _, _)));
    }

    #[test]
    fn bad_syntax_unknown_function_and_arity_are_errors() {
        assert!(parse("a ==").is_err());
        assert_eq!(
            parse("nope(1)").unwrap_err().message,
            "`nope` is not an AGX function"
        );
        assert!(parse("len(1, 2)").unwrap_err().message.contains("takes 1"));
        assert!(parse("'open").is_err());
        assert!(parse("${{ a }}").is_err());
        assert!(parse(&"(".repeat(500)).is_err());
    }

    #[test]
    fn templates_split_into_expressions() {
        let parts = template_parts("A ${{ params.x }} and ${{nodes.a.outputs.b}}.").unwrap();
        assert_eq!(parts[0], (" params.x ".to_owned(), 5));
        assert_eq!(parts[1].0, "nodes.a.outputs.b");
        assert_eq!(template_parts("x ${{ open"), Err(2));
    }
}
