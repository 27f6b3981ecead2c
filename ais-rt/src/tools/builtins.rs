//! The built-in tool library of spec §5.4: `read_file`, `list_dir`, `glob_files`, `grep`,
//! `write_file`, `run_command`, `http_get`. (`ask_user` pauses the run; the machine owns it.)
//!
//! Each takes its arguments by the canonical parameter names of
//! [`ais_core::plan::BUILTINS`] (falling back to position), runs under the call's
//! [`ToolLimits`], and fails with a routable [`ToolError`] — never a message
//! dressed up as data:
//!
//! | tool | value | limits |
//! |---|---|---|
//! | `read_file(path)` | the file's text (invalid UTF-8 replaced) | a file larger than the output cap is `OutputLimit` |
//! | `list_dir(path)` | one name per line, sorted, directories with a trailing `/`; `""` when empty | output cap |
//! | `glob_files(pattern, path)` | matching files under `path` at any depth, one per line, sorted, as `path/rel`; `""` when none | output cap, timeout |
//! | `grep(pattern, path)` | `file:line: text` for each line matching the regex (Rust `regex` syntax), in a file or under a directory | output cap (partial hits in the error's output), timeout |
//! | `write_file(path, content)` | the path written, relative to the output root | an [`ArtifactRoot`] write |
//! | `run_command(command)` | stdout then stderr, trailing newlines removed | a subprocess under `bash -c` (see the module docs) |
//! | `http_get(url)` | the response body as text | `http`/`https` only; a non-2xx status is `Failed` with the body as output; timeout, body cap |
//!
//! `read_file`, `list_dir`, `glob_files` and `grep` resolve a relative path against the call's
//! working directory (a sibling's scratch directory when the path exists there, else the output
//! root) and accept an absolute one, but only under a read root — the output root, the working
//! directory, and each `--allow-read PATH` — and read only regular files; `http_get` refuses
//! internal addresses (see [`super::policy`]). Writes are confined to the output root. `grep` and `glob_files` skip hidden
//! entries and `.git`, `node_modules`, `target`, `__pycache__`, `venv`, `dist`, `build`; `grep`
//! skips files with a NUL byte in their first KiB (binary).

use super::artifact::ArtifactRoot;
use super::process::{self, ProcessSpec};
use super::{Tool, ToolArgs, ToolContext, ToolError, ToolErrorKind, ToolFuture, ToolLimits};
use ais_core::Value;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One built-in tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// `read_file(path) -> str`.
    ReadFile,
    /// `list_dir(path) -> str`.
    ListDir,
    /// `glob_files(pattern, path) -> str`.
    GlobFiles,
    /// `grep(pattern, path) -> str`.
    Grep,
    /// `write_file(path, content) -> str`.
    WriteFile,
    /// `run_command(command) -> str`.
    RunCommand,
    /// `http_get(url) -> str`.
    HttpGet,
}

impl Builtin {
    /// Every built-in, in the order of spec §5.4.
    pub const ALL: [Builtin; 7] = [
        Builtin::ReadFile,
        Builtin::ListDir,
        Builtin::GlobFiles,
        Builtin::Grep,
        Builtin::WriteFile,
        Builtin::RunCommand,
        Builtin::HttpGet,
    ];

    /// The name a program calls it by.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::ReadFile => "read_file",
            Builtin::ListDir => "list_dir",
            Builtin::GlobFiles => "glob_files",
            Builtin::Grep => "grep",
            Builtin::WriteFile => "write_file",
            Builtin::RunCommand => "run_command",
            Builtin::HttpGet => "http_get",
        }
    }

    /// The parameters, in signature order.
    pub fn params(self) -> &'static [&'static str] {
        match self {
            Builtin::ReadFile | Builtin::ListDir => &["path"],
            Builtin::GlobFiles | Builtin::Grep => &["pattern", "path"],
            Builtin::WriteFile => &["path", "content"],
            Builtin::RunCommand => &["command"],
            Builtin::HttpGet => &["url"],
        }
    }

    async fn run(self, args: ToolArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
        let name = self.name();
        let text = |i: usize| arg_text(name, self.params(), &args, i);
        match self {
            Builtin::ReadFile => {
                let path = read_path(ctx, name, &text(0)?)?;
                blocking(name, &ctx.limits, move |limits, _| read_file(&path, limits)).await
            }
            Builtin::ListDir => {
                let path = read_path(ctx, name, &or_dot(text(0)?))?;
                blocking(name, &ctx.limits, move |limits, _| list_dir(&path, limits)).await
            }
            Builtin::GlobFiles => {
                let (pattern, shown) = (text(0)?, or_dot(text(1)?));
                let path = read_path(ctx, name, &shown)?;
                blocking(name, &ctx.limits, move |limits, deadline| {
                    glob_files(&pattern, &path, &shown, limits, deadline)
                })
                .await
            }
            Builtin::Grep => {
                let (pattern, shown) = (text(0)?, or_dot(text(1)?));
                let path = read_path(ctx, name, &shown)?;
                blocking(name, &ctx.limits, move |limits, deadline| {
                    grep(&pattern, &path, &shown, limits, deadline)
                })
                .await
            }
            Builtin::WriteFile => {
                let path = text(0)?;
                let content = text(1)?;
                let root = ArtifactRoot::for_writes(ctx);
                blocking(name, &ctx.limits, move |_, _| {
                    root.write(&path, content.as_bytes()).map(Value::Str)
                })
                .await
            }
            Builtin::RunCommand => run_command(&text(0)?, ctx).await,
            #[cfg(feature = "http")]
            Builtin::HttpGet => super::http::get(&text(0)?, &ctx.limits, &ctx.policy).await,
            #[cfg(not(feature = "http"))]
            Builtin::HttpGet => Err(ToolError::new(
                ToolErrorKind::NotFound,
                format!(
                    "tool `http_get` is not in this build: {}",
                    crate::feature::turn_on(crate::feature::Feature::Http)
                ),
            )),
        }
    }
}

impl Tool for Builtin {
    fn call<'a>(&'a self, args: ToolArgs, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(self.run(args, ctx))
    }
}

/// Argument `i` of a built-in as text: by its canonical name, else by position; `null` and a
/// missing argument are the empty string, a non-string value its JSON text.
fn arg_text(tool: &str, params: &[&str], args: &ToolArgs, i: usize) -> Result<String, ToolError> {
    let value = args
        .params
        .get(params[i])
        .or_else(|| args.params.get_index(i).map(|(_, v)| v));
    Ok(match value {
        None | Some(Value::Null) => {
            if params[i] == "content" {
                String::new()
            } else {
                return Err(ToolError::new(
                    ToolErrorKind::BadArguments,
                    format!(
                        "tool `{tool}` needs its `{}` argument, and nothing was bound to it",
                        params[i]
                    ),
                ));
            }
        }
        Some(Value::Str(s)) => s.clone(),
        Some(other) => other.to_json().to_string(),
    })
}

fn or_dot(path: String) -> String {
    if path.trim().is_empty() {
        ".".to_owned()
    } else {
        path
    }
}

/// Where a read of `raw` looks: an absolute path as is; a relative one under the scratch
/// directory when it exists there, else under the output root. Either way it must then lie
/// under a read root ([`super::policy::confine_read`]).
fn read_path(ctx: &ToolContext, tool: &str, raw: &str) -> Result<PathBuf, ToolError> {
    let path = Path::new(raw);
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        match &ctx.scratch {
            Some(scratch) if scratch.join(path).exists() => scratch.join(path),
            _ => ctx.root.join(path),
        }
    };
    super::policy::confine_read(ctx, tool, &joined)
}

/// Runs blocking file work on the blocking pool under the call's timeout. The work gets the
/// limits and the deadline, and checks the deadline as it goes.
async fn blocking<F>(tool: &'static str, limits: &ToolLimits, work: F) -> Result<Value, ToolError>
where
    F: FnOnce(&ToolLimits, Instant) -> Result<Value, ToolError> + Send + 'static,
{
    let deadline = Instant::now() + limits.timeout;
    let owned = limits.clone();
    let task = tokio::task::spawn_blocking(move || work(&owned, deadline));
    match tokio::time::timeout(limits.timeout, task).await {
        Ok(Ok(result)) => result.map_err(|mut e| {
            if !e.message.starts_with("tool `") {
                e.message = format!("tool `{tool}`: {}", e.message);
            }
            e
        }),
        Ok(Err(join)) => Err(ToolError::new(
            ToolErrorKind::Io,
            format!("tool `{tool}` stopped unexpectedly: {join}"),
        )),
        Err(_) => Err(timeout(tool, limits)),
    }
}

fn timeout(tool: &str, limits: &ToolLimits) -> ToolError {
    ToolError::new(
        ToolErrorKind::Timeout,
        format!(
            "tool `{tool}` ran longer than {:?} and was stopped",
            limits.timeout
        ),
    )
}

fn io_error(what: &str, path: &Path, e: &std::io::Error) -> ToolError {
    ToolError::new(ToolErrorKind::Io, format!("{what} {}: {e}", path.display()))
}

fn read_file(path: &Path, limits: &ToolLimits) -> Result<Value, ToolError> {
    if path.is_dir() {
        return Err(ToolError::new(
            ToolErrorKind::Failed,
            format!(
                "{} is a directory; use `list_dir` to see what it holds",
                path.display()
            ),
        ));
    }
    let file = super::policy::open_regular(path).map_err(|e| io_error("cannot read", path, &e))?;
    let mut bytes = Vec::new();
    file.take(limits.max_output_bytes as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error("cannot read", path, &e))?;
    if bytes.len() > limits.max_output_bytes {
        bytes.truncate(limits.max_output_bytes);
        return Err(ToolError {
            kind: ToolErrorKind::OutputLimit,
            message: format!(
                "{} is larger than the {}-byte output cap",
                path.display(),
                limits.max_output_bytes
            ),
            output: String::from_utf8_lossy(&bytes).into_owned(),
        });
    }
    Ok(Value::Str(String::from_utf8_lossy(&bytes).into_owned()))
}

fn list_dir(path: &Path, limits: &ToolLimits) -> Result<Value, ToolError> {
    let entries = std::fs::read_dir(path).map_err(|e| io_error("cannot list", path, &e))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io_error("cannot list", path, &e))?;
        let mut name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_dir() {
            name.push('/');
        }
        names.push(name);
    }
    names.sort();
    capped(names.join("\n"), limits, path)
}

fn capped(text: String, limits: &ToolLimits, path: &Path) -> Result<Value, ToolError> {
    if text.len() > limits.max_output_bytes {
        let mut cut = limits.max_output_bytes;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        return Err(ToolError {
            kind: ToolErrorKind::OutputLimit,
            message: format!(
                "the listing of {} is larger than the {}-byte output cap",
                path.display(),
                limits.max_output_bytes
            ),
            output: text[..cut].to_owned(),
        });
    }
    Ok(Value::Str(text))
}

/// Directory names `glob_files` and `grep` never descend into (besides hidden ones).
const SKIPPED_DIRS: &[&str] = &[
    "node_modules",
    "target",
    "__pycache__",
    "venv",
    "dist",
    "build",
];

/// Whether a walk leaves out `entry`: a hidden entry, or a vendored/build directory.
fn skipped(entry: &walkdir::DirEntry) -> bool {
    let name = entry.file_name().to_string_lossy();
    let vendored = entry.file_type().is_dir() && SKIPPED_DIRS.contains(&name.as_ref());
    name.starts_with('.') || vendored
}

fn walk(root: &Path) -> impl Iterator<Item = walkdir::DirEntry> {
    walkdir::WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !skipped(e))
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
}

/// Collects lines under the output cap; `Err` with the partial text once past it.
struct Lines<'a> {
    text: String,
    limits: &'a ToolLimits,
    what: String,
}

impl Lines<'_> {
    fn push(&mut self, line: &str) -> Result<(), ToolError> {
        let extra = line.len() + usize::from(!self.text.is_empty());
        if self.text.len() + extra > self.limits.max_output_bytes {
            return Err(ToolError {
                kind: ToolErrorKind::OutputLimit,
                message: format!(
                    "{} yields more than the {}-byte output cap; narrow the pattern or the path",
                    self.what, self.limits.max_output_bytes
                ),
                output: std::mem::take(&mut self.text),
            });
        }
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        self.text.push_str(line);
        Ok(())
    }
}

fn glob_files(
    pattern: &str,
    root: &Path,
    shown: &str,
    limits: &ToolLimits,
    deadline: Instant,
) -> Result<Value, ToolError> {
    let pattern = pattern.trim();
    let pattern = if pattern.is_empty() { "*" } else { pattern };
    let anywhere = format!("**/{}", pattern.trim_start_matches("./"));
    let matcher = globset::GlobBuilder::new(&anywhere)
        .literal_separator(true)
        .build()
        .map_err(|e| {
            ToolError::new(
                ToolErrorKind::BadArguments,
                format!("`{pattern}` is not a glob pattern: {e}"),
            )
        })?
        .compile_matcher();
    if !root.is_dir() {
        return Err(ToolError::new(
            ToolErrorKind::Failed,
            format!("{} is not a directory", root.display()),
        ));
    }
    let mut lines = Lines {
        text: String::new(),
        limits,
        what: format!("glob `{pattern}` under {shown}"),
    };
    for entry in walk(root) {
        if Instant::now() > deadline {
            return Err(timeout("glob_files", limits));
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        if matcher.is_match(rel) {
            lines.push(&Path::new(shown).join(rel).to_string_lossy())?;
        }
    }
    Ok(Value::Str(lines.text))
}

fn grep(
    pattern: &str,
    root: &Path,
    shown: &str,
    limits: &ToolLimits,
    deadline: Instant,
) -> Result<Value, ToolError> {
    let regex = regex::Regex::new(pattern).map_err(|e| {
        ToolError::new(
            ToolErrorKind::BadArguments,
            format!("`{pattern}` is not a regular expression: {e}"),
        )
    })?;
    let files: Box<dyn Iterator<Item = PathBuf>> = if root.is_file() {
        Box::new(std::iter::once(root.to_path_buf()))
    } else if root.is_dir() {
        Box::new(walk(root).map(walkdir::DirEntry::into_path))
    } else {
        return Err(ToolError::new(
            ToolErrorKind::Io,
            format!("{} does not exist", root.display()),
        ));
    };
    let mut lines = Lines {
        text: String::new(),
        limits,
        what: format!("grep `{pattern}` under {shown}"),
    };
    for file in files {
        if Instant::now() > deadline {
            return Err(timeout("grep", limits));
        }
        let shown_file = match file.strip_prefix(root) {
            Ok(rel) if !rel.as_os_str().is_empty() => Path::new(shown).join(rel),
            _ => PathBuf::from(shown),
        };
        grep_file(&regex, &file, &shown_file, &mut lines)?;
    }
    Ok(Value::Str(lines.text))
}

fn grep_file(
    regex: &regex::Regex,
    file: &Path,
    shown: &Path,
    lines: &mut Lines<'_>,
) -> Result<(), ToolError> {
    let Ok(handle) = super::policy::open_regular(file) else {
        return Ok(());
    };
    let mut reader = std::io::BufReader::new(handle);
    if reader
        .fill_buf()
        .is_ok_and(|head| head[..head.len().min(1024)].contains(&0))
    {
        return Ok(());
    }
    let mut buf = Vec::new();
    let mut number = 0usize;
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return Ok(()),
            Ok(_) => {}
        }
        number += 1;
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end_matches(['\n', '\r']);
        if regex.is_match(line) {
            let text: String = line.trim().chars().take(500).collect();
            lines.push(&format!("{}:{number}: {text}", shown.display()))?;
        }
    }
}

async fn run_command(command: &str, ctx: &ToolContext) -> Result<Value, ToolError> {
    if command.trim().is_empty() {
        return Err(ToolError::new(
            ToolErrorKind::BadArguments,
            "tool `run_command` was given an empty command",
        ));
    }
    let cwd = ctx.work_dir_created("run_command")?;
    let finished = process::run(
        ProcessSpec {
            tool: "run_command",
            program: super::command::shell().into(),
            args: vec!["-c".into(), command.into()],
            cwd: &cwd,
            stdin: None,
            env: &[],
            writable: ctx.writable_roots(),
        },
        &ctx.limits,
    )
    .await?;
    let mut output = finished.combined();
    if !finished.status.success() {
        return Err(ToolError {
            kind: ToolErrorKind::Failed,
            message: format!(
                "tool `run_command`: `{command}` failed with {}",
                process::describe_status(&finished.status)
            ),
            output,
        });
    }
    let keep = output.trim_end_matches(['\n', '\r']).len();
    output.truncate(keep);
    Ok(Value::Str(output))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_of_the_core_but_ask_user_is_here_with_the_canonical_parameters() {
        for b in ais_core::plan::BUILTINS {
            if b.name == ais_core::plan::builtins::ASK_USER {
                continue;
            }
            let here = Builtin::ALL
                .into_iter()
                .find(|h| h.name() == b.name)
                .unwrap_or_else(|| panic!("no built-in `{}` in the runtime", b.name));
            let sig = ais_core::sig::parse(b.sig).unwrap();
            assert_eq!(sig.param_names(), here.params(), "{}", b.name);
        }
        assert_eq!(Builtin::ALL.len(), ais_core::plan::BUILTINS.len() - 1);
    }
}
