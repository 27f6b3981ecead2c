//! Python `body` tools (rung 1 of the embodiment ladder) from foreign `.agir` files.
//!
//! Calls run in a **warm worker** (`python3 -X utf8 -u -c DRIVER`, started once per run and
//! working directory; `python3` is resolved once per process to the interpreter it names, its
//! `sys.executable`, so a version manager's shim is not paid per call). Each call runs in a
//! fresh child forked from the worker (forked ahead of the call, while the call before runs;
//! `python_worker.rs` argues why that call cannot reach it), so every call runs in fresh
//! globals with pristine modules, the worker's working directory and environment, and an empty
//! `TMPDIR`: nothing one call changes reaches the next. The worker compiles each tool's body
//! once; its calls' children inherit the code. A timeout, an output overrun, a crash of the
//! worker or a call that leaves a process behind (or changes its worker's limits or
//! scheduling) kills the worker's process group, and the next call starts another
//! (see `python_worker.rs`; the [module docs](super) give the environment, working directory,
//! sandbox, timeout and output cap). The driver (`driver.py`, beside this file) receives
//! the tool (`{name, params, body}`) and the arguments as two JSON lines, lowers the body
//! exactly as the reference implementation does, calls it with the arguments by parameter name, and answers `{ok,
//! value}` or `{ok: false, error, traceback}` on a channel of its own: whatever the tool or its
//! children print (standard output and error alike) can never corrupt the result; that output
//! comes back as the error's `output` when the call fails.
//!
//! # How a body is lowered (as the reference implementation does)
//!
//! - The body becomes the body of a function over the tool's parameters, each defaulting to
//!   `None` (`def f(text=None): return (text or "").upper()` and a bare `return (text or
//!   "").upper()` both work). An `if __name__ == "__main__":` harness is stripped.
//! - A body made only of imports, docstrings and `def`s is a complete function and is called:
//!   `run` if it defines one, else its **last** `def`; each of that function's parameters gets
//!   the argument of the same name, or `None`.
//! - The body sees `os`, `sys`, `json`, `re`, `csv`, `glob`, `math`, `shutil`, `subprocess` and
//!   `tempfile` already imported (the reference's generated module imports most of them).
//! - A non-Python body that looks like a shell script runs under bash (a non-zero exit is a
//!   failure); any other non-Python body is a template and is returned as a string. A body that
//!   is plainly Python but does not parse fails with the parser's message.
//! - The result crosses as JSON: a tuple becomes a list, a set a sorted list, bytes text, a
//!   non-finite float `null`, any other object its `str()`.
//! - The parameters are the signature's (`sig`); a tool with no signature takes the arguments
//!   of each call as its parameters.

use super::process::{self, ProcessSpec};
use super::{Tool, ToolArgs, ToolContext, ToolError, ToolErrorKind, ToolFuture};
use ais_core::Value;
use serde::Deserialize;
use std::ffi::OsString;

/// A tool whose body is Python source, run under `python3`.
#[derive(Clone, Debug)]
pub struct PythonTool {
    name: String,
    body: String,
    params: Option<Vec<String>>,
    interpreter: Option<String>,
}

/// The interpreter `python3` resolves to (its `sys.executable`), found once per process so that
/// a version-manager shim (pyenv, asdf) is not paid on every call; `python3` itself when that
/// cannot be found.
async fn default_interpreter(cwd: &std::path::Path) -> OsString {
    static RESOLVED: tokio::sync::OnceCell<OsString> = tokio::sync::OnceCell::const_new();
    RESOLVED
        .get_or_init(|| async {
            let limits = super::ToolLimits {
                timeout: std::time::Duration::from_secs(30),
                max_output_bytes: 64 * 1024,
            };
            let probe = process::run(
                ProcessSpec {
                    tool: "python3",
                    program: "python3".into(),
                    args: vec![
                        "-c".into(),
                        "import sys; sys.stdout.write(sys.executable)".into(),
                    ],
                    cwd,
                    stdin: None,
                    env: &[],
                    writable: Vec::new(),
                },
                &limits,
            )
            .await;
            match probe {
                Ok(done) if done.status.success() && !done.stdout.is_empty() => {
                    use std::os::unix::ffi::OsStringExt;
                    OsString::from_vec(done.stdout)
                }
                _ => OsString::from("python3"),
            }
        })
        .await
        .clone()
}

/// What the driver writes on its result channel.
#[derive(Deserialize)]
struct DriverResult {
    ok: bool,
    #[serde(default)]
    value: serde_json::Value,
    #[serde(default)]
    error: String,
    #[serde(default)]
    traceback: String,
}

impl PythonTool {
    /// A Python tool named `name` with source `body`. `params` are the signature's parameter
    /// names in order; `None` when the tool declares no signature (each call's arguments are
    /// then its parameters).
    pub fn new(
        name: impl Into<String>,
        body: impl Into<String>,
        params: Option<Vec<String>>,
    ) -> Self {
        PythonTool {
            name: name.into(),
            body: body.into(),
            params,
            interpreter: None,
        }
    }

    /// Runs the body under `interpreter` (a program name looked up on `PATH`, or a path)
    /// instead of `python3`.
    pub fn with_interpreter(mut self, interpreter: impl Into<String>) -> Self {
        self.interpreter = Some(interpreter.into());
        self
    }

    /// The tool as the worker's request names it, one JSON line: its name, parameters, body.
    fn spec_line(&self) -> String {
        serde_json::json!({"name": self.name, "params": self.params, "body": self.body}).to_string()
    }

    async fn call_inner(&self, args: ToolArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
        let args = args
            .params
            .iter()
            .map(|(k, v)| (k.clone(), v.to_json()))
            .collect::<serde_json::Map<_, _>>();
        // Two lines: the tool (the same for each of its calls: the worker compiles its body
        // once, keyed by this line), then the call's arguments.
        let mut request = self.spec_line();
        request.push('\n');
        request.push_str(&serde_json::Value::Object(args).to_string());
        request.push('\n');
        let cwd = ctx.work_dir_created(&self.name)?;
        let program = match &self.interpreter {
            Some(chosen) => OsString::from(chosen),
            None => default_interpreter(&cwd).await,
        };
        let finished = ctx
            .python
            .call(
                &self.name,
                program.clone(),
                &cwd,
                ctx.writable_roots(),
                request.as_bytes(),
                &ctx.limits,
            )
            .await?;
        let printed = String::from_utf8_lossy(&finished.stderr).into_owned();
        match serde_json::from_slice::<DriverResult>(&finished.stdout) {
            Ok(result) if result.ok && finished.status.success() => {
                Ok(Value::from_json(&result.value))
            }
            Ok(result) => {
                let mut output = printed;
                if !result.traceback.is_empty() {
                    if !output.is_empty() && !output.ends_with('\n') {
                        output.push('\n');
                    }
                    output.push_str(&result.traceback);
                }
                Err(ToolError {
                    kind: ToolErrorKind::Failed,
                    message: format!("tool `{}` raised {}", self.name, result.error),
                    output,
                })
            }
            Err(_) => Err(ToolError {
                kind: ToolErrorKind::Failed,
                message: format!(
                    "tool `{}` ended with {} without returning a result (it exited the \
                     interpreter, or `{}` is not a working Python 3)",
                    self.name,
                    process::describe_status(&finished.status),
                    program.to_string_lossy()
                ),
                output: process::combine(&finished.stdout, &finished.stderr),
            }),
        }
    }
}

impl Tool for PythonTool {
    fn call<'a>(&'a self, args: ToolArgs, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(self.call_inner(args, ctx))
    }
}
