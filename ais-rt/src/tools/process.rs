//! Running one subprocess for a tool: a scrubbed environment, its own process group, a
//! wall-clock limit and a cap on the bytes it may print.
//!
//! Every subprocess a tool starts (a `command` tool, a Python `body`, `run_command`) goes through
//! [`run`]. The process is the leader of a new process group, so a timeout or an output overrun
//! kills it *and everything it started* (`kill(-pgid, SIGKILL)`); the group is killed again
//! after a normal exit, so no tool leaves a background process behind.

use super::{ToolError, ToolErrorKind, ToolLimits};
use crate::sandbox;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStderr, ChildStdout, Command};

/// The environment variables a tool subprocess inherits from the runtime's own environment;
/// every other variable (API keys, tokens, `LD_PRELOAD`, …) is dropped.
pub const INHERITED_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
    "TMPDIR",
    "USER",
    "LOGNAME",
];

/// One subprocess to run.
#[derive(Debug)]
pub(crate) struct ProcessSpec<'a> {
    /// The tool's name, for messages.
    pub tool: &'a str,
    /// The program (looked up on the scrubbed `PATH`).
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Its working directory.
    pub cwd: &'a Path,
    /// Bytes written to its standard input, which is then closed (`None`: no standard input).
    pub stdin: Option<Vec<u8>>,
    /// Variables set on top of [`INHERITED_ENV`].
    pub env: &'a [(&'a str, &'a str)],
    /// The directories it may write beneath (besides its private `TMPDIR`); see
    /// [`crate::sandbox`].
    pub writable: Vec<PathBuf>,
}

/// What a finished subprocess printed, and how it ended.
#[derive(Debug)]
pub(crate) struct Finished {
    /// Standard output.
    pub stdout: Vec<u8>,
    /// Standard error.
    pub stderr: Vec<u8>,
    /// Its exit status.
    pub status: ExitStatus,
}

impl Finished {
    /// Standard output then standard error, as text (invalid UTF-8 replaced).
    pub(crate) fn combined(&self) -> String {
        combine(&self.stdout, &self.stderr)
    }
}

/// `stdout` then `stderr` as one text, invalid UTF-8 replaced.
pub(crate) fn combine(stdout: &[u8], stderr: &[u8]) -> String {
    let mut text = String::from_utf8_lossy(stdout).into_owned();
    if !stderr.is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&String::from_utf8_lossy(stderr));
    }
    text
}

/// Describes an exit status for a message: `exit status 3`, `signal 9`.
pub(crate) fn describe_status(status: &ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(sig)) => format!("signal {sig}"),
        (None, None) => "an unknown status".to_owned(),
    }
}

/// Starts `spec`'s process in the sandbox: a scrubbed environment, its working directory, its
/// own process group with a guard, the Landlock ruleset over `spec.writable` and a private
/// `TMPDIR` (see [`crate::sandbox`]), standard output and error piped, standard input piped
/// when `piped_input`. The confinement must live as long as the process (it owns `TMPDIR`).
pub(crate) fn spawn_confined(
    spec: &ProcessSpec<'_>,
    piped_input: bool,
) -> Result<(Child, sandbox::Confinement), ToolError> {
    let mut command = Command::new(&spec.program);
    command
        .args(&spec.args)
        .current_dir(spec.cwd)
        .env_clear()
        .stdin(if piped_input {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    // A tool must not outlive a runtime killed with SIGKILL (no drop runs then): an orphan
    // finishing its effect after a journaled run resumed would do it twice.
    // SAFETY: the hook only makes one async-signal-safe system call (prctl).
    unsafe {
        command.pre_exec(|| {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
                .map_err(std::io::Error::from)
        });
    }
    for name in INHERITED_ENV {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    for (name, value) in spec.env {
        command.env(name, value);
    }
    let confinement = sandbox::Confinement::new(&spec.writable).map_err(|e| {
        ToolError::new(
            ToolErrorKind::Io,
            format!(
                "tool `{}`: cannot set up its sandbox (Landlock ruleset, private TMPDIR): {e}",
                spec.tool
            ),
        )
    })?;
    command.env("TMPDIR", confinement.tmp_dir());
    confine(&mut command, &confinement);
    let child = command.spawn().map_err(|e| {
        ToolError::new(
            ToolErrorKind::Io,
            format!(
                "tool `{}` could not start `{}` in {}: {e}; check that the program is installed \
                 and on PATH",
                spec.tool,
                spec.program.to_string_lossy(),
                spec.cwd.display()
            ),
        )
    })?;
    Ok((child, confinement))
}

/// Runs `spec` under `limits`: `Ok` when the process ran to its end within both limits
/// (whatever its exit status), a [`ToolError`] of kind `Timeout`, `OutputLimit` or `Io`
/// otherwise, carrying what it printed before it was stopped.
pub(crate) async fn run(spec: ProcessSpec<'_>, limits: &ToolLimits) -> Result<Finished, ToolError> {
    let piped_input = spec.stdin.is_some();
    let (mut child, _confinement) = spawn_confined(&spec, piped_input)?;
    let pgid = child.id();
    // Should the caller drop this call mid-way (a cancelled run), the group dies with it.
    let _group = GroupGuard::new(pgid);
    if let (Some(input), Some(mut pipe)) = (spec.stdin.clone(), child.stdin.take()) {
        // A process that never reads its input must not block the run: write from a task and
        // ignore a broken pipe (the process exited or closed its input).
        tokio::spawn(async move {
            let _ = pipe.write_all(&input).await;
            let _ = pipe.shutdown().await;
        });
    }
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(ToolError::new(
            ToolErrorKind::Io,
            format!(
                "tool `{}`: the subprocess's output pipes are missing",
                spec.tool
            ),
        ));
    };
    let mut capture = Capture::new(limits.max_output_bytes);
    let outcome = tokio::time::timeout(
        limits.timeout,
        capture_and_wait(&mut child, stdout, stderr, &mut capture),
    )
    .await;
    // Whatever happened, nothing the tool started outlives the call.
    kill_group(pgid);
    match outcome {
        Ok(Ok(Some(status))) => Ok(Finished {
            stdout: capture.stdout,
            stderr: capture.stderr,
            status,
        }),
        Ok(Ok(None)) => {
            let _ = child.wait().await;
            Err(ToolError {
                kind: ToolErrorKind::OutputLimit,
                message: format!(
                    "tool `{}` printed more than {} bytes and was stopped; raise the output \
                     cap or make the tool print less",
                    spec.tool, limits.max_output_bytes
                ),
                output: combine(&capture.stdout, &capture.stderr),
            })
        }
        Ok(Err(e)) => {
            let _ = child.wait().await;
            Err(ToolError {
                kind: ToolErrorKind::Io,
                message: format!("tool `{}`: reading its output failed: {e}", spec.tool),
                output: combine(&capture.stdout, &capture.stderr),
            })
        }
        Err(_) => {
            let _ = child.wait().await;
            Err(ToolError {
                kind: ToolErrorKind::Timeout,
                message: format!(
                    "tool `{}` ran longer than {:?} and was stopped",
                    spec.tool, limits.timeout
                ),
                output: combine(&capture.stdout, &capture.stderr),
            })
        }
    }
}

/// Makes `command`'s child enter the sandbox before it executes (see [`crate::sandbox`]):
/// the guard process, the parent-death signal, the Landlock ruleset of `confinement`.
pub(crate) fn confine(command: &mut Command, confinement: &sandbox::Confinement) {
    let ruleset = confinement.ruleset_fd();
    let shield = confinement.shield();
    // SAFETY: getpid takes nothing and cannot fail.
    let parent = unsafe { libc::getpid() };
    // SAFETY: `enter_child` makes only async-signal-safe calls, as a pre-exec hook must.
    unsafe {
        command.pre_exec(move || sandbox::enter_child(ruleset, parent, shield.as_deref()));
    }
}

/// A live tool process group: registered for [`sandbox::kill_all_tool_groups`], and killed
/// (and forgotten) when dropped.
pub(crate) struct GroupGuard(Option<u32>);

impl GroupGuard {
    /// Registers the group led by `pgid`.
    pub(crate) fn new(pgid: Option<u32>) -> Self {
        if let Some(pid) = pgid.and_then(|p| i32::try_from(p).ok()) {
            sandbox::register_group(pid);
        }
        GroupGuard(pgid)
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        kill_group(self.0);
        if let Some(pid) = self.0.and_then(|p| i32::try_from(p).ok()) {
            sandbox::unregister_group(pid);
        }
    }
}

/// Sends `SIGKILL` to the process group led by `pgid` (a no-op when it is already gone).
pub(crate) fn kill_group(pgid: Option<u32>) {
    let Some(pid) = pgid.and_then(|p| i32::try_from(p).ok()) else {
        return;
    };
    if let Some(pid) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// The bytes captured so far from both pipes, under one shared cap.
pub(crate) struct Capture {
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: Vec<u8>,
    cap: usize,
}

impl Capture {
    pub(crate) fn new(cap: usize) -> Self {
        Capture {
            stdout: Vec::new(),
            stderr: Vec::new(),
            cap,
        }
    }

    /// The cap on both streams together.
    pub(crate) fn cap(&self) -> usize {
        self.cap
    }

    fn total(&self) -> usize {
        self.stdout.len() + self.stderr.len()
    }

    /// Appends `chunk` to one stream, keeping at most the cap in all; `false` when the cap was
    /// passed.
    pub(crate) fn push(&mut self, to_stdout: bool, chunk: &[u8]) -> bool {
        let room = self.cap.saturating_sub(self.total());
        let keep = chunk.len().min(room);
        let buf = if to_stdout {
            &mut self.stdout
        } else {
            &mut self.stderr
        };
        buf.extend_from_slice(&chunk[..keep]);
        keep == chunk.len()
    }
}

/// How long the pipes are still read after the process itself exited: a background process
/// it left behind may hold them open, and must not turn a finished call into a timeout.
const DRAIN_AFTER_EXIT: std::time::Duration = std::time::Duration::from_millis(250);

/// Reads both pipes and waits for the process: until both pipes close, or
/// [`DRAIN_AFTER_EXIT`] after the process exited, whichever comes first. `Ok(None)` when the
/// output passed the cap (reading stops there).
async fn capture_and_wait(
    child: &mut Child,
    mut stdout: ChildStdout,
    mut stderr: ChildStderr,
    capture: &mut Capture,
) -> std::io::Result<Option<ExitStatus>> {
    let mut out_buf = vec![0u8; 16 * 1024];
    let mut err_buf = vec![0u8; 16 * 1024];
    let (mut out_open, mut err_open) = (true, true);
    let mut status = None;
    let drained = tokio::time::sleep(std::time::Duration::from_secs(0));
    tokio::pin!(drained);
    while out_open || err_open {
        tokio::select! {
            read = stdout.read(&mut out_buf), if out_open => {
                let n = read?;
                if n == 0 {
                    out_open = false;
                } else if !capture.push(true, &out_buf[..n]) {
                    return Ok(None);
                }
            }
            read = stderr.read(&mut err_buf), if err_open => {
                let n = read?;
                if n == 0 {
                    err_open = false;
                } else if !capture.push(false, &err_buf[..n]) {
                    return Ok(None);
                }
            }
            exited = child.wait(), if status.is_none() => {
                status = Some(exited?);
                drained.as_mut().reset(tokio::time::Instant::now() + DRAIN_AFTER_EXIT);
            }
            () = &mut drained, if status.is_some() => break,
        }
    }
    match status {
        Some(status) => Ok(Some(status)),
        None => child.wait().await.map(Some),
    }
}
