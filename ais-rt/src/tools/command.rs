//! `command` tools (rung 2 of the embodiment ladder): a real command line with `{param}`
//! placeholders, run as a subprocess.
//!
//! # How a command runs
//!
//! - **Placeholders.** `{name}` where `name` is one of the tool's parameters is replaced by that
//!   argument's text: a string as it is, `null` as the empty string, a number or bool as its JSON
//!   spelling (`3`, `2.5`, `true`), a list or map as compact JSON. Other braces (`awk '{print
//!   $1}'`, `find -exec {} \;`) are left alone. An argument whose parameter has no placeholder is
//!   appended at the end, in signature order (a `null` one is not), as the reference
//!   implementation does.
//! - **No shell unless the command asks for one.** A command whose text uses shell syntax —
//!   any of `| & ; < > ( ) $ `` ` `` * ? [ ] ~ #`, a newline, a leading `VAR=value`, or a first
//!   word that is a shell builtin (`cd`, `export`, `source`, `.`, `set`, `ulimit`, `umask`,
//!   `exec`, `eval`, `alias`) — runs under `bash -c` (`sh -c` when bash is not installed) with
//!   every placeholder replaced by its **single-quoted** value, so a value can never become
//!   syntax; a placeholder written inside quotes (`'{x}'`, `"at {x}"`) stays one literal piece
//!   of that word. Any other command is split into words (POSIX quoting rules) and executed
//!   directly, each placeholder replaced inside its word with no quoting at all.
//! - **One pass, literal values, no options** (see `command_line.rs` for the whole rule):
//!   placeholders are filled in one pass (a value containing `{other}` stays that text); a
//!   placeholder where a quoted value would not stay literal (inside backquotes, in a `$(…)` or
//!   `${…}` within double quotes, in `$'…'`, after `<<`, `[[` or `((`) makes the call fail
//!   naming the place; and a value that would *begin* an argument with `-` is refused
//!   ([`ToolErrorKind::BadArguments`], a routable error value) unless the command has a `--`
//!   word before it — write `-- {x}` where a value may start with `-`, or `--opt={x}`.
//!   What the command itself does with an argument (`eval`, `bash -c {x}`) is the author's.
//! - **Result.** On exit status 0 the tool's value is its standard output with trailing
//!   newlines removed (standard error is progress and warnings, not the value). Any other exit
//!   is a [`ToolErrorKind::Failed`] error carrying stdout and stderr.
//! - The environment, the working directory, the timeout and the output cap are those of every
//!   tool subprocess (see the [module docs](super)).

use super::command_line::{self, FillError};
use super::process::{self, ProcessSpec};
use super::{Tool, ToolArgs, ToolContext, ToolError, ToolErrorKind, ToolFuture};
use ais_core::Value;
use std::ffi::OsString;

/// A tool that runs a command line (a program's `command` field).
#[derive(Clone, Debug)]
pub struct CommandTool {
    name: String,
    template: String,
    params: Vec<String>,
    always_shell: bool,
}

/// The shell a command that uses shell syntax runs under: `bash` when it is on `PATH`
/// (programs written for the reference implementation assume bash), else `sh`.
pub(crate) fn shell() -> &'static str {
    static SHELL: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
    SHELL.get_or_init(|| {
        let found = std::env::var_os("PATH").is_some_and(|paths| {
            std::env::split_paths(&paths).any(|dir| dir.join("bash").is_file())
        });
        if found { "bash" } else { "sh" }
    })
}

const SHELL_BUILTINS: &[&str] = &[
    "cd", "export", "source", ".", "set", "ulimit", "umask", "exec", "eval", "alias", "unset",
];

impl CommandTool {
    /// A command tool named `name` running `template`, whose parameters (in signature order) are
    /// `params`. With no declared signature, pass the parameters the calls will bind (an empty
    /// list means every argument of a call is a parameter).
    pub fn new(name: impl Into<String>, template: impl Into<String>, params: Vec<String>) -> Self {
        CommandTool {
            name: name.into(),
            template: template.into(),
            params,
            always_shell: false,
        }
    }

    /// A tool whose body is a shell script (`lang: sh`, `bash` or `shell`): like a command,
    /// but always run under the shell, with `{param}` placeholders shell-quoted.
    pub fn script(name: impl Into<String>, script: impl Into<String>, params: Vec<String>) -> Self {
        CommandTool {
            always_shell: true,
            ..CommandTool::new(name, script, params)
        }
    }

    /// Whether this command's text asks for a shell.
    pub fn uses_shell(&self) -> bool {
        let params: Vec<&str> = self.params.iter().map(String::as_str).collect();
        self.always_shell || needs_shell(&self.template, &params)
    }

    /// Builds the program and its arguments for one call.
    fn command_line(&self, args: &ToolArgs) -> Result<(OsString, Vec<OsString>), ToolError> {
        let params: Vec<&str> = if self.params.is_empty() {
            args.params.keys().map(String::as_str).collect()
        } else {
            self.params.iter().map(String::as_str).collect()
        };
        let values: Vec<(&str, Option<String>)> = params
            .iter()
            .map(|p| (*p, args.params.get(*p).and_then(arg_text)))
            .collect();
        let trailing: Vec<(&str, &str)> = values
            .iter()
            .filter(|(p, _)| !self.template.contains(&placeholder(p)))
            .filter_map(|(p, v)| Some((*p, v.as_deref()?)))
            .collect();
        if let Some(p) = values
            .iter()
            .find(|(_, v)| v.as_deref().is_some_and(|v| v.contains('\0')))
        {
            return Err(ToolError::new(
                ToolErrorKind::BadArguments,
                format!(
                    "tool `{}`: the argument `{}` contains a NUL byte, which no command line can \
                     carry",
                    self.name, p.0
                ),
            ));
        }
        let operands = command_line::has_end_of_options(&self.template);
        if let Some((p, v)) = trailing.iter().find(|(_, v)| v.starts_with('-'))
            && !operands
        {
            let err = FillError::Option {
                param: (*p).to_owned(),
                value: (*v).to_owned(),
            };
            return Err(self.fill_error(err));
        }
        if self.always_shell || needs_shell(&self.template, &params) {
            let mut line = command_line::fill_shell(&self.template, &values)
                .map_err(|e| self.fill_error(e))?;
            for (_, v) in &trailing {
                line.push(' ');
                line.push_str(&command_line::sh_quote(v));
            }
            return Ok((shell().into(), vec!["-c".into(), line.into()]));
        }
        let words = shlex::split(&self.template).ok_or_else(|| {
            ToolError::new(
                ToolErrorKind::Failed,
                format!(
                    "tool `{}`: its command `{}` has an unclosed quote or a trailing backslash; \
                     fix the `command` field",
                    self.name, self.template
                ),
            )
        })?;
        let mut argv: Vec<OsString> = Vec::with_capacity(words.len() + trailing.len());
        let mut after_dashdash = false;
        for word in words {
            let filled = command_line::fill_word(&word, &values, after_dashdash)
                .map_err(|e| self.fill_error(e))?;
            after_dashdash |= word == "--";
            argv.push(OsString::from(filled));
        }
        argv.extend(trailing.iter().map(|(_, v)| OsString::from(v)));
        if argv.is_empty() {
            return Err(ToolError::new(
                ToolErrorKind::Failed,
                format!(
                    "tool `{}` has an empty command; give its `command` field a program to run",
                    self.name
                ),
            ));
        }
        let program = argv.remove(0);
        Ok((program, argv))
    }

    /// The error a refused fill becomes: a value that would be an option is the call's
    /// argument's fault (routable, [`ToolErrorKind::BadArguments`]); a placeholder the command
    /// puts where no value stays literal is the command's.
    fn fill_error(&self, e: FillError) -> ToolError {
        match e {
            FillError::Option { param, value } => ToolError::new(
                ToolErrorKind::BadArguments,
                format!(
                    "tool `{}`: the value of `{param}` (`{}`) starts with `-` and would be read \
                     as an option of the command; a value may start with `-` only after a `--` \
                     word in the command (write `-- {{{param}}}` in its `command` if the \
                     program allows it)",
                    self.name,
                    value.chars().take(40).collect::<String>()
                ),
            ),
            FillError::Context { param, why } => ToolError::new(
                ToolErrorKind::Failed,
                format!(
                    "tool `{}`: its command places `{{{param}}}` where a value would not stay \
                     literal: {why}; fix the `command` field",
                    self.name
                ),
            ),
        }
    }

    async fn call_inner(&self, args: ToolArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
        let (program, argv) = self.command_line(&args)?;
        let cwd = ctx.work_dir_created(&self.name)?;
        let finished = process::run(
            ProcessSpec {
                tool: &self.name,
                program,
                args: argv,
                cwd: &cwd,
                stdin: None,
                env: &[],
                writable: ctx.writable_roots(),
            },
            &ctx.limits,
        )
        .await?;
        if !finished.status.success() {
            return Err(ToolError {
                kind: ToolErrorKind::Failed,
                message: format!(
                    "tool `{}` failed with {}: `{}`",
                    self.name,
                    process::describe_status(&finished.status),
                    self.template
                ),
                output: finished.combined(),
            });
        }
        let mut text = String::from_utf8_lossy(&finished.stdout).into_owned();
        let trimmed = text.trim_end_matches(['\n', '\r']).len();
        text.truncate(trimmed);
        Ok(Value::Str(text))
    }
}

impl Tool for CommandTool {
    fn call<'a>(&'a self, args: ToolArgs, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(self.call_inner(args, ctx))
    }
}

fn placeholder(param: &str) -> String {
    format!("{{{param}}}")
}

/// The text an argument stands for in a command line; `None` for `null`.
fn arg_text(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::Str(s) => Some(s.clone()),
        other => Some(other.to_json().to_string()),
    }
}

/// Whether `template` (with its `{param}` placeholders taken out) uses shell syntax.
fn needs_shell(template: &str, params: &[&str]) -> bool {
    let mut text = template.to_owned();
    for p in params {
        text = text.replace(&placeholder(p), "x");
    }
    if text.contains([
        '|', '&', ';', '<', '>', '(', ')', '$', '`', '*', '?', '[', ']', '~', '#', '\n', '{', '}',
    ]) {
        return true;
    }
    let first = text.split_whitespace().next().unwrap_or("");
    first.contains('=') || SHELL_BUILTINS.contains(&first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use indexmap::IndexMap;

    fn args(pairs: &[(&str, Value)]) -> ToolArgs {
        ToolArgs {
            params: pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect::<IndexMap<_, _>>(),
        }
    }

    #[test]
    fn a_plain_command_is_split_into_words_without_a_shell() {
        let tool = CommandTool::new("t", "echo hello {who}", vec!["who".into()]);
        assert!(!tool.uses_shell());
        let (program, argv) = tool
            .command_line(&args(&[("who", Value::from("a b; rm -rf /"))]))
            .unwrap();
        assert_eq!(program, "echo");
        assert_eq!(argv, vec![OsString::from("hello"), "a b; rm -rf /".into()]);
    }

    #[test]
    fn shell_syntax_runs_under_a_shell_with_every_value_quoted() {
        let tool = CommandTool::new(
            "t",
            "cd tools && npm run report -- {target_dir}",
            vec!["target_dir".into()],
        );
        assert!(tool.uses_shell());
        let (program, argv) = tool
            .command_line(&args(&[("target_dir", Value::from("x'; rm -rf ~"))]))
            .unwrap();
        assert_eq!(program, shell());
        assert_eq!(argv[0], "-c");
        assert_eq!(
            argv[1],
            OsString::from(r"cd tools && npm run report -- 'x'\''; rm -rf ~'")
        );
    }

    #[test]
    fn unplaced_arguments_append_and_nulls_are_dropped() {
        let tool = CommandTool::new("t", "git log", vec!["a".into(), "b".into(), "c".into()]);
        let (_, argv) = tool
            .command_line(&args(&[
                ("a", Value::from("main")),
                ("b", Value::Null),
                ("c", Value::Int(3)),
            ]))
            .unwrap();
        assert_eq!(argv, vec![OsString::from("log"), "main".into(), "3".into()]);
        // An appended value is never an option unless the command ends its options.
        let err = tool
            .command_line(&args(&[("a", Value::from("--output=x"))]))
            .unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::BadArguments, "{}", err.message);
        let ended = CommandTool::new("t", "git log --", vec!["a".into()]);
        let (_, argv) = ended
            .command_line(&args(&[("a", Value::from("--output=x"))]))
            .unwrap();
        assert_eq!(argv.last().unwrap(), "--output=x");
    }

    #[test]
    fn braces_that_are_no_placeholder_ask_for_a_shell_and_stay() {
        let tool = CommandTool::new("t", "awk '{print $1}' {file}", vec!["file".into()]);
        assert!(tool.uses_shell());
        let (_, argv) = tool
            .command_line(&args(&[("file", Value::from("a b.txt"))]))
            .unwrap();
        assert_eq!(argv[1], OsString::from("awk '{print $1}' 'a b.txt'"));
    }

    #[test]
    fn an_unclosed_quote_is_a_clear_error() {
        let tool = CommandTool::new("t", "echo 'oops", vec![]);
        let err = tool.command_line(&args(&[])).unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::Failed);
        assert!(err.message.contains("unclosed quote"), "{}", err.message);
    }
}
