//! Filling a `command` tool's `{param}` placeholders: one pass, quoting that keeps every value
//! one literal piece of text, and no value turned into an option.
//!
//! - **One pass.** The command is scanned once; a value is emitted, never scanned again, so a
//!   value containing the text of another placeholder (`{b}`) stays that text.
//! - **Under a shell** every value is single-quoted (`'…'`, a `'` inside as `'\''`). A
//!   placeholder inside single or double quotes in the command (`'{x}'`, `"at {x}"`) closes the
//!   quote, inserts the quoted value and reopens it, so the value is still literal text of that
//!   one word. Where a quoted value would not stay literal the command is refused with a repair:
//!   a placeholder inside backquotes, inside a `$(…)`, `${…}` or backquote within double quotes,
//!   inside `$'…'`, after a here-document (`<<`), or after `[[` / `((` (bash evaluates their
//!   operands as arithmetic, running what a value names). A placeholder in a comment is left
//!   as it is.
//! - **No value becomes an option.** A value that would begin an argument with `-` (the
//!   argument's text in the command did not begin with `-`) is refused unless the command has a
//!   `--` word before it (the end of options: what follows is an operand). Write `--` before
//!   the placeholders that may take such values, or put the value after the option's `=`
//!   (`--name={x}`).

/// Why a command could not be filled.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FillError {
    /// The value of `param` would start an argument with `-`.
    Option { param: String, value: String },
    /// A placeholder for `param` sits where a quoted value would not stay literal (`why`).
    Context { param: String, why: &'static str },
}

/// The values of one call: each parameter's name and text (`None`: no value, the empty string).
pub(crate) type Values<'a> = [(&'a str, Option<String>)];

/// `text` single-quoted for a POSIX shell.
pub(crate) fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The parameter whose placeholder begins `rest`, with its value.
fn placeholder_at<'v>(rest: &str, values: &'v Values<'_>) -> Option<(&'v str, &'v str, usize)> {
    let inner = rest.strip_prefix('{')?;
    let end = inner.find('}')?;
    let name = &inner[..end];
    let (p, v) = values.iter().find(|(p, _)| *p == name)?;
    Some((p, v.as_deref().unwrap_or(""), end + 2))
}

fn dash(param: &str, value: &str) -> FillError {
    FillError::Option {
        param: param.to_owned(),
        value: value.to_owned(),
    }
}

/// Fills one word of a command run without a shell (already split by POSIX rules): each
/// placeholder replaced by its value, once. `operands` is whether a `--` word came before.
pub(crate) fn fill_word(
    word: &str,
    values: &Values<'_>,
    operands: bool,
) -> Result<String, FillError> {
    let mut out = String::with_capacity(word.len());
    let mut rest = word;
    while let Some(c) = rest.chars().next() {
        if let Some((p, v, len)) = placeholder_at(rest, values) {
            if out.is_empty() && !operands && v.starts_with('-') {
                return Err(dash(p, v));
            }
            out.push_str(v);
            rest = &rest[len..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    Ok(out)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
    Plain,
    Single,
    Double,
    Ansi,
    Comment,
}

/// The scanner's state over a shell command.
struct Scan {
    quote: Quote,
    /// Nothing of the current word written yet (quotes aside).
    word_start: bool,
    /// The current word's text as written (to spot `--`).
    word: String,
    operands: bool,
    backquote: bool,
    expansion_in_double: bool,
    /// Why no placeholder may follow (a here-document, `[[`, `((`).
    closed: Option<&'static str>,
}

impl Scan {
    fn end_word(&mut self) {
        if self.word == "--" {
            self.operands = true;
        }
        self.word.clear();
        self.word_start = true;
    }

    /// Why a placeholder cannot go here, if it cannot.
    fn refusal(&self) -> Option<&'static str> {
        if let Some(why) = self.closed {
            return Some(why);
        }
        if self.backquote {
            return Some("it is inside backquotes, where quoting is reinterpreted; use `$(…)`");
        }
        match self.quote {
            Quote::Ansi => Some("it is inside `$'…'`; write it bare"),
            Quote::Double if self.expansion_in_double => Some(
                "it is inside a `$(…)`, `${…}` or backquote within double quotes; write it bare \
                 outside the double quotes",
            ),
            _ => None,
        }
    }
}

/// Fills a command run under a shell: every value single-quoted, placeholders inside quotes
/// handled so the value stays literal (see the module docs).
pub(crate) fn fill_shell(template: &str, values: &Values<'_>) -> Result<String, FillError> {
    let mut out = String::with_capacity(template.len() + 16);
    let mut s = Scan {
        quote: Quote::Plain,
        word_start: true,
        word: String::new(),
        operands: false,
        backquote: false,
        expansion_in_double: false,
        closed: None,
    };
    let mut rest = template;
    while let Some(c) = rest.chars().next() {
        if s.quote != Quote::Comment
            && let Some((p, v, len)) = placeholder_at(rest, values)
        {
            if let Some(why) = s.refusal() {
                return Err(FillError::Context {
                    param: p.to_owned(),
                    why,
                });
            }
            if s.word_start && !s.operands && v.starts_with('-') {
                return Err(dash(p, v));
            }
            let quoted = sh_quote(v);
            match s.quote {
                Quote::Single => out.push_str(&format!("'{quoted}'")),
                Quote::Double => out.push_str(&format!("\"{quoted}\"")),
                _ => out.push_str(&quoted),
            }
            s.word_start = false;
            s.word.push('x');
            rest = &rest[len..];
            continue;
        }
        let next = rest[c.len_utf8()..].chars().next();
        let mut taken = c.len_utf8();
        match s.quote {
            Quote::Plain => match c {
                '\\' => {
                    taken += next.map_or(0, char::len_utf8);
                    s.word_start = false;
                    s.word.push('x');
                }
                '\'' => s.quote = Quote::Single,
                '"' => {
                    s.quote = Quote::Double;
                    s.expansion_in_double = false;
                }
                '$' if next == Some('\'') => {
                    s.quote = Quote::Ansi;
                    taken += 1;
                }
                '`' => {
                    s.backquote = !s.backquote;
                    s.word_start = false;
                }
                '#' if s.word_start => s.quote = Quote::Comment,
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => {
                    if c == '<' && rest.starts_with("<<") && !rest.starts_with("<<<") {
                        s.closed = Some(
                            "it follows a here-document (`<<`), whose text the shell expands; pass the value as an argument or on a file",
                        );
                    }
                    if c == '(' && rest.starts_with("((") {
                        s.closed = Some(
                            "it follows `((`, whose operands bash evaluates as arithmetic (running what a value names); compare in the program instead",
                        );
                    }
                    s.end_word();
                }
                '[' if rest.starts_with("[[") && s.word_start => {
                    s.closed = Some(
                        "it follows `[[`, whose operands bash may evaluate as arithmetic (running what a value names); use `[` / `test`, or compare in the program",
                    );
                    s.word_start = false;
                    s.word.push(c);
                }
                _ => {
                    s.word_start = false;
                    s.word.push(c);
                }
            },
            Quote::Single => {
                if c == '\'' {
                    s.quote = Quote::Plain;
                } else {
                    s.word_start = false;
                    s.word.push(c);
                }
            }
            Quote::Ansi => {
                if c == '\\' {
                    taken += next.map_or(0, char::len_utf8);
                } else if c == '\'' {
                    s.quote = Quote::Plain;
                }
                s.word_start = false;
            }
            Quote::Double => {
                match c {
                    '\\' => taken += next.map_or(0, char::len_utf8),
                    '"' => s.quote = Quote::Plain,
                    '`' => s.expansion_in_double = true,
                    '$' if matches!(next, Some('(' | '{')) => s.expansion_in_double = true,
                    _ => {}
                }
                if c != '"' {
                    s.word_start = false;
                    s.word.push(c);
                }
            }
            Quote::Comment => {
                if c == '\n' {
                    s.quote = Quote::Plain;
                    s.end_word();
                }
            }
        }
        out.push_str(&rest[..taken.min(rest.len())]);
        rest = &rest[taken.min(rest.len())..];
    }
    Ok(out)
}

/// Whether `template` has a `--` word (values appended after the command are then operands).
pub(crate) fn has_end_of_options(template: &str) -> bool {
    template.split_whitespace().any(|w| w == "--")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(pairs: &[(&'static str, &str)]) -> Vec<(&'static str, Option<String>)> {
        pairs
            .iter()
            .map(|(k, v)| (*k, Some((*v).to_owned())))
            .collect()
    }

    #[test]
    fn one_pass_never_substitutes_a_value_again() {
        let v = vals(&[("a", "{b}"), ("b", "$(touch pwned)")]);
        let line = fill_shell("echo {a} {b}", &v).unwrap();
        assert_eq!(line, "echo '{b}' '$(touch pwned)'");
        assert_eq!(fill_word("{a}", &v, false).unwrap(), "{b}");
    }

    /// What bash prints for `line`.
    fn bash(line: &str) -> String {
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(line)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn quoted_placeholders_keep_the_value_literal() {
        let dir = tempfile::tempdir().unwrap();
        let pwned = dir.path().join("pwned");
        let hostile = format!(
            "a' ; touch {0} ; '\" $(touch {0}) `touch {0}`",
            pwned.display()
        );
        let v = vec![("x", Some(hostile.clone()))];
        for cmd in [
            "printf '[%s]' '{x}'",
            "printf '[%s]' \"{x}\"",
            "printf '[%s]' {x}",
        ] {
            let line = fill_shell(cmd, &v).unwrap();
            assert_eq!(bash(&line), format!("[{hostile}]"), "{cmd} -> {line}");
        }
        let line = fill_shell("printf '[%s]' 'at {x}!' \"on {x}.\"", &v).unwrap();
        assert_eq!(
            bash(&line),
            format!("[at {hostile}!][on {hostile}.]"),
            "{line}"
        );
        assert!(!pwned.exists());
    }

    #[test]
    fn leading_dashes_are_refused_unless_after_an_end_of_options() {
        let v = vals(&[("x", "--output=/etc/passwd")]);
        assert!(matches!(
            fill_shell("sort {x} | head", &v),
            Err(FillError::Option { .. })
        ));
        assert!(matches!(
            fill_shell("sort '{x}'", &v),
            Err(FillError::Option { .. })
        ));
        assert!(matches!(
            fill_word("{x}", &v, false),
            Err(FillError::Option { .. })
        ));
        assert!(fill_shell("sort -- {x} | head", &v).is_ok());
        assert!(fill_word("{x}", &v, true).is_ok());
        // Inside an argument the author began, a dash is data.
        assert_eq!(
            fill_word("--key={x}", &v, false).unwrap(),
            "--key=--output=/etc/passwd"
        );
        assert!(fill_shell("grep -e{x} f", &v).is_ok());
    }

    #[test]
    fn places_a_quoted_value_would_not_stay_literal_are_refused() {
        let v = vals(&[("x", "a")]);
        for cmd in [
            "echo `echo {x}`",
            "echo \"$(echo {x})\"",
            "echo \"${HOME:-{x}}\"",
            "echo $'{x}'",
            "cat <<EOF\n{x}\nEOF",
            "[[ {x} -eq 1 ]] && echo yes",
            "(( {x} > 1 )) && echo yes",
        ] {
            assert!(
                matches!(fill_shell(cmd, &v), Err(FillError::Context { .. })),
                "{cmd}"
            );
        }
        // A comment keeps its text; a command substitution outside quotes is fine.
        assert_eq!(fill_shell("true # {x}", &v).unwrap(), "true # {x}");
        assert_eq!(
            fill_shell("echo $(echo {x})", &v).unwrap(),
            "echo $(echo 'a')"
        );
    }
}
