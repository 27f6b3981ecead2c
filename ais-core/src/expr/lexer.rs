//! The lexer: expression text to tokens, each with its 1-based line and column.
//!
//! The lexer enforces the source-level limits (source bytes, identifier length, token count)
//! and rejects raw control characters, tabs inside strings and invalid escapes. Integer
//! literals are kept as unsigned text values so that `-9223372036854775808` can be read.

use super::limits::Limits;
use super::{Category, ExprError};
use crate::source::Pos;

/// A token kind.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    /// An identifier (not a keyword).
    Ident(String),
    /// An integer literal's magnitude (the sign is a separate token).
    Int(u64),
    /// A float literal.
    Float(f64),
    /// A string literal, unescaped.
    Str(String),
    /// A keyword.
    Kw(Kw),
    /// Punctuation or an operator.
    Punct(P),
    /// The end of the text.
    End,
}

/// A keyword.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kw {
    And,
    Or,
    Not,
    In,
    Is,
    If,
    Else,
    True,
    False,
    Null,
}

/// Punctuation and operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum P {
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Colon,
    Dot,
    Plus,
    Minus,
    Star,
    Slash,
    SlashSlash,
    Percent,
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
}

impl P {
    /// The operator as written.
    pub(crate) fn text(self) -> &'static str {
        match self {
            P::LParen => "(",
            P::RParen => ")",
            P::LBracket => "[",
            P::RBracket => "]",
            P::LBrace => "{",
            P::RBrace => "}",
            P::Comma => ",",
            P::Colon => ":",
            P::Dot => ".",
            P::Plus => "+",
            P::Minus => "-",
            P::Star => "*",
            P::Slash => "/",
            P::SlashSlash => "//",
            P::Percent => "%",
            P::EqEq => "==",
            P::NotEq => "!=",
            P::Lt => "<",
            P::Le => "<=",
            P::Gt => ">",
            P::Ge => ">=",
        }
    }
}

/// A token with its position.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Token {
    pub(crate) tok: Tok,
    pub(crate) pos: Pos,
}

/// A character as shown in a message: itself when it is visible (`π`, `€`), escaped when it
/// is a control character, invisible, or a space other than the ASCII one (`\u{1b}`,
/// `\u{200b}`, `\u{a0}`), so that a message never carries something the reader cannot see.
fn visible(c: char) -> String {
    if c.is_whitespace() && c != ' ' {
        c.escape_unicode().to_string()
    } else {
        c.escape_debug().to_string()
    }
}

fn err(category: Category, pos: Pos, message: impl Into<String>) -> ExprError {
    ExprError::new(category, pos, message)
}

/// Reads a keyword; `true`/`True`, `false`/`False` and `null`/`None` are both accepted.
fn keyword(word: &str) -> Option<Kw> {
    Some(match word {
        "and" => Kw::And,
        "or" => Kw::Or,
        "not" => Kw::Not,
        "in" => Kw::In,
        "is" => Kw::Is,
        "if" => Kw::If,
        "else" => Kw::Else,
        "true" | "True" => Kw::True,
        "false" | "False" => Kw::False,
        "null" | "None" => Kw::Null,
        _ => return None,
    })
}

struct Lexer<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    line: u32,
    column: u32,
    limits: &'a Limits,
}

impl Lexer<'_> {
    fn pos(&self) -> Pos {
        Pos::new(self.line, self.column)
    }

    fn peek(&mut self) -> Option<char> {
        self.chars.peek().copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        if c == '\n' {
            self.line = self.line.saturating_add(1);
            self.column = 1;
        } else {
            self.column = self.column.saturating_add(1);
        }
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn ident(&mut self, start: Pos) -> Result<Tok, ExprError> {
        let mut word = String::new();
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == '_' {
                word.push(c);
                self.bump();
            } else {
                break;
            }
        }
        if word.len() > self.limits.max_identifier_bytes {
            return Err(err(
                Category::LimitError,
                start,
                format!(
                    "identifier `{}…` is longer than {} characters",
                    word.get(..16).unwrap_or(&word),
                    self.limits.max_identifier_bytes
                ),
            ));
        }
        Ok(match keyword(&word) {
            Some(kw) => Tok::Kw(kw),
            None => Tok::Ident(word),
        })
    }

    fn number(&mut self, start: Pos) -> Result<Tok, ExprError> {
        let mut text = String::new();
        let mut is_float = false;
        while let Some(c) = self.peek().filter(char::is_ascii_digit) {
            text.push(c);
            self.bump();
        }
        if self.peek() == Some('.') {
            // `1.` and `1.x` are not floats: a fraction needs digits (`1.5`), and `xs.1` is no
            // field. Look one character past the dot without consuming it.
            let mut ahead = self.chars.clone();
            ahead.next();
            if ahead.next().is_some_and(|c| c.is_ascii_digit()) {
                is_float = true;
                text.push('.');
                self.bump();
                while let Some(c) = self.peek().filter(char::is_ascii_digit) {
                    text.push(c);
                    self.bump();
                }
            } else {
                return Err(err(
                    Category::SyntaxError,
                    self.pos(),
                    format!("`{text}.` is not a number: write `{text}.0`"),
                ));
            }
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            is_float = true;
            text.push('e');
            self.bump();
            if let Some(sign @ ('+' | '-')) = self.peek() {
                text.push(sign);
                self.bump();
            }
            let mut digits = 0;
            while let Some(c) = self.peek().filter(char::is_ascii_digit) {
                text.push(c);
                self.bump();
                digits += 1;
            }
            if digits == 0 {
                return Err(err(
                    Category::SyntaxError,
                    start,
                    format!("`{text}`: an exponent needs digits (`1e3`, `2.5e-4`)"),
                ));
            }
        }
        if self
            .peek()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        {
            return Err(err(
                Category::SyntaxError,
                self.pos(),
                format!(
                    "a number cannot run into a name (`{text}…`): put a space or an operator between them"
                ),
            ));
        }
        if text.len() > 1 && text.starts_with('0') && !is_float {
            return Err(err(
                Category::SyntaxError,
                start,
                format!("`{text}`: integers have no leading zeros"),
            ));
        }
        if is_float {
            match text.parse::<f64>() {
                Ok(f) if f.is_finite() => Ok(Tok::Float(f)),
                _ => Err(err(
                    Category::ValueError,
                    start,
                    format!("`{text}` is not a finite float"),
                )),
            }
        } else {
            match text.parse::<u64>() {
                Ok(i) if i <= 1 << 63 => Ok(Tok::Int(i)),
                _ => Err(err(
                    Category::ValueError,
                    start,
                    format!("`{text}` does not fit a 64-bit integer"),
                )),
            }
        }
    }

    fn string(&mut self, start: Pos, quote: char) -> Result<Tok, ExprError> {
        self.bump();
        let mut out = String::new();
        loop {
            let here = self.pos();
            let Some(c) = self.bump() else {
                return Err(err(
                    Category::SyntaxError,
                    start,
                    format!("string is not closed: add `{quote}`"),
                ));
            };
            match c {
                c if c == quote => break,
                '\\' => {
                    let Some(e) = self.bump() else {
                        return Err(err(
                            Category::SyntaxError,
                            start,
                            format!("string is not closed: add `{quote}`"),
                        ));
                    };
                    match e {
                        '"' => out.push('"'),
                        '\'' => out.push('\''),
                        '\\' => out.push('\\'),
                        '/' => out.push('/'),
                        'b' => out.push('\u{8}'),
                        'f' => out.push('\u{c}'),
                        'n' => out.push('\n'),
                        'r' => out.push('\r'),
                        't' => out.push('\t'),
                        'u' => out.push(self.unicode_escape(here)?),
                        other => {
                            return Err(err(
                                Category::SyntaxError,
                                here,
                                format!(
                                    "`\\{other}` is not an escape: use \\n \\t \\\" \\\\ \\uXXXX …"
                                ),
                            ));
                        }
                    }
                }
                c if c.is_control() => {
                    return Err(err(
                        Category::SyntaxError,
                        here,
                        format!(
                            "a raw control character (U+{:04X}) in a string: write it as an escape",
                            c as u32
                        ),
                    ));
                }
                c => out.push(c),
            }
            if out.len() > self.limits.max_string_bytes {
                return Err(err(
                    Category::LimitError,
                    start,
                    format!(
                        "string literal is longer than {} bytes",
                        self.limits.max_string_bytes
                    ),
                ));
            }
        }
        Ok(Tok::Str(out))
    }

    fn hex4(&mut self, at: Pos) -> Result<u32, ExprError> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = self.bump().and_then(|c| c.to_digit(16)).ok_or_else(|| {
                err(
                    Category::SyntaxError,
                    at,
                    "`\\u` needs four hex digits (`\\u00e9`)",
                )
            })?;
            v = v * 16 + d;
        }
        Ok(v)
    }

    fn unicode_escape(&mut self, at: Pos) -> Result<char, ExprError> {
        let hi = self.hex4(at)?;
        let code = if (0xD800..0xDC00).contains(&hi) {
            if !(self.eat('\\') && self.eat('u')) {
                return Err(err(
                    Category::SyntaxError,
                    at,
                    "a high surrogate escape must be followed by a low one (`\\ud83d\\ude00`)",
                ));
            }
            let lo = self.hex4(at)?;
            if !(0xDC00..0xE000).contains(&lo) {
                return Err(err(
                    Category::SyntaxError,
                    at,
                    "a high surrogate escape must be followed by a low one (`\\ud83d\\ude00`)",
                ));
            }
            0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
        } else {
            hi
        };
        char::from_u32(code).ok_or_else(|| {
            err(
                Category::SyntaxError,
                at,
                format!("`\\u{hi:04x}` is not a Unicode scalar value"),
            )
        })
    }

    fn punct(&mut self, start: Pos, c: char) -> Result<Tok, ExprError> {
        self.bump();
        let p = match c {
            '(' => P::LParen,
            ')' => P::RParen,
            '[' => P::LBracket,
            ']' => P::RBracket,
            '{' => P::LBrace,
            '}' => P::RBrace,
            ',' => P::Comma,
            ':' => P::Colon,
            '.' => P::Dot,
            '+' => P::Plus,
            '-' => P::Minus,
            '*' => {
                if self.peek() == Some('*') {
                    return Err(err(
                        Category::SyntaxError,
                        start,
                        "`**` (power) is not in the expression language: multiply instead",
                    ));
                }
                P::Star
            }
            '/' => {
                if self.eat('/') {
                    P::SlashSlash
                } else {
                    P::Slash
                }
            }
            '%' => P::Percent,
            '=' => {
                if self.eat('=') {
                    P::EqEq
                } else {
                    return Err(err(
                        Category::SyntaxError,
                        start,
                        "`=` assigns, and expressions do not assign: compare with `==`",
                    ));
                }
            }
            '!' => {
                if self.eat('=') {
                    P::NotEq
                } else {
                    return Err(err(
                        Category::SyntaxError,
                        start,
                        "`!` is not an operator: write `not x` or `a != b`",
                    ));
                }
            }
            '<' => {
                if self.eat('=') {
                    P::Le
                } else {
                    P::Lt
                }
            }
            '>' => {
                if self.eat('=') {
                    P::Ge
                } else {
                    P::Gt
                }
            }
            '&' | '|' => {
                let word = if c == '&' { "and" } else { "or" };
                return Err(err(
                    Category::SyntaxError,
                    start,
                    format!("`{c}` is not an operator: write `{word}`"),
                ));
            }
            other if other.is_alphanumeric() => {
                return Err(err(
                    Category::SyntaxError,
                    start,
                    format!(
                        "`{other}` cannot be part of a name: names in expressions are ASCII \
                         letters, digits and `_`; give the carry an ASCII name"
                    ),
                ));
            }
            other => {
                return Err(err(
                    Category::SyntaxError,
                    start,
                    format!("unexpected character `{}`", visible(other)),
                ));
            }
        };
        Ok(Tok::Punct(p))
    }
}

/// Splits `src` into tokens, ending with [`Tok::End`].
pub(crate) fn tokenize(src: &str, limits: &Limits) -> Result<Vec<Token>, ExprError> {
    if src.len() > limits.max_source_bytes {
        return Err(err(
            Category::LimitError,
            Pos::new(1, 1),
            format!(
                "expression is {} bytes, more than the limit of {}",
                src.len(),
                limits.max_source_bytes
            ),
        ));
    }
    let mut lx = Lexer {
        chars: src.chars().peekable(),
        line: 1,
        column: 1,
        limits,
    };
    let mut out = Vec::new();
    loop {
        while let Some(c) = lx.peek() {
            match c {
                ' ' | '\n' | '\r' => {
                    lx.bump();
                }
                '\t' => {
                    return Err(err(
                        Category::SyntaxError,
                        lx.pos(),
                        "a tab character: indent with spaces",
                    ));
                }
                _ => break,
            }
        }
        let start = lx.pos();
        let Some(c) = lx.peek() else {
            out.push(Token {
                tok: Tok::End,
                pos: start,
            });
            return Ok(out);
        };
        let tok = if c.is_ascii_alphabetic() || c == '_' {
            lx.ident(start)?
        } else if c.is_ascii_digit() {
            lx.number(start)?
        } else if c == '"' || c == '\'' {
            lx.string(start, c)?
        } else if c == '#' {
            return Err(err(
                Category::SyntaxError,
                start,
                "`#` comments are not part of an expression",
            ));
        } else {
            lx.punct(start, c)?
        };
        out.push(Token { tok, pos: start });
        if out.len() > limits.max_tokens {
            return Err(err(
                Category::LimitError,
                start,
                format!("expression has more than {} tokens", limits.max_tokens),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok> {
        tokenize(src, &Limits::default())
            .unwrap()
            .into_iter()
            .map(|t| t.tok)
            .collect()
    }

    fn fails(src: &str) -> ExprError {
        tokenize(src, &Limits::default()).unwrap_err()
    }

    #[test]
    fn unexpected_characters_are_shown_as_themselves_unless_invisible() {
        let e = fails("len(π_md) > 0");
        assert_eq!((e.line, e.column), (1, 5));
        assert!(
            e.message.starts_with("`π` cannot be part of a name"),
            "{}",
            e.message
        );
        assert!(!e.message.contains("\\u"), "{}", e.message);
        assert_eq!(fails("x € 2").message, "unexpected character `€`");
        for (src, shown) in [
            ("a \u{1b} b", "`\\u{1b}`"),
            ("a\u{200b}", "`\\u{200b}`"),
            ("a\u{a0}+ b", "`\\u{a0}`"),
            ("a $ b", "`$`"),
        ] {
            let e = fails(src);
            assert_eq!(
                e.message,
                format!("unexpected character {shown}"),
                "{src:?}"
            );
        }
    }

    #[test]
    fn reads_every_token_kind() {
        assert_eq!(
            toks("a.b(1, 2.5) // \"x\\n\" <= None"),
            vec![
                Tok::Ident("a".into()),
                Tok::Punct(P::Dot),
                Tok::Ident("b".into()),
                Tok::Punct(P::LParen),
                Tok::Int(1),
                Tok::Punct(P::Comma),
                Tok::Float(2.5),
                Tok::Punct(P::RParen),
                Tok::Punct(P::SlashSlash),
                Tok::Str("x\n".into()),
                Tok::Punct(P::Le),
                Tok::Kw(Kw::Null),
                Tok::End,
            ]
        );
        assert_eq!(toks("'it\\'s'"), vec![Tok::Str("it's".into()), Tok::End]);
        assert_eq!(toks("1e3"), vec![Tok::Float(1000.0), Tok::End]);
        assert_eq!(
            toks("\"\\ud83d\\ude00\\u00e9\""),
            vec![Tok::Str("😀é".into()), Tok::End]
        );
        assert_eq!(
            toks("9223372036854775808"),
            vec![Tok::Int(1 << 63), Tok::End]
        );
    }

    #[test]
    fn positions_are_line_and_column() {
        let t = tokenize("a ==\n  b", &Limits::default()).unwrap();
        assert_eq!(t[1].pos, Pos::new(1, 3));
        assert_eq!(t[2].pos, Pos::new(2, 3));
    }

    #[test]
    fn rejects_what_is_not_a_token() {
        assert_eq!(fails("a = 1").category, Category::SyntaxError);
        assert_eq!(fails("\"open").category, Category::SyntaxError);
        assert_eq!(fails("\"\\q\"").category, Category::SyntaxError);
        assert_eq!(fails("\"a\u{1}\"").category, Category::SyntaxError);
        assert_eq!(fails("1.").category, Category::SyntaxError);
        assert_eq!(fails("007").category, Category::SyntaxError);
        assert_eq!(fails("1e").category, Category::SyntaxError);
        assert_eq!(fails("2x").category, Category::SyntaxError);
        assert_eq!(fails("a\tb").category, Category::SyntaxError);
        assert_eq!(fails("a && b").category, Category::SyntaxError);
        assert_eq!(fails("2 ** 3").category, Category::SyntaxError);
        assert_eq!(fails("\"\\ud83d\"").category, Category::SyntaxError);
        assert_eq!(fails("99999999999999999999").category, Category::ValueError);
        assert_eq!(fails("1e999").category, Category::ValueError);
        let e = fails("x @ y");
        assert_eq!((e.line, e.column), (1, 3));
    }
}
