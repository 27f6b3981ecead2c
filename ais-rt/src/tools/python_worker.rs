//! Warm Python workers: Python `body` tools run in a long-lived worker instead of a fresh
//! interpreter per call.
//!
//! A run's [`ToolContext`](super::ToolContext) holds a [`Pool`]; a call takes an idle worker
//! started for the same interpreter, working directory and writable roots, or starts one (a
//! SPAWN's siblings calling at once each get their own, and up to [`Pool::KEEP`] idle workers
//! are kept). The worker (`driver.py`) is started like every tool subprocess — scrubbed
//! environment, its own process group under a guard, confined by Landlock (see
//! [`crate::sandbox`]) — and runs each call in a child of its own, forked before the call is
//! asked for (a call pays no fork), so each call runs in fresh globals and nothing it changes
//! (globals, imported modules, the working directory, the environment, its `TMPDIR`) reaches
//! the next. The call's limits are enforced here: past the timeout or the output cap, or when
//! the worker dies, its whole process group is killed and the worker is dropped (the next call
//! starts another); a call that leaves a process behind, or changes its worker's resource
//! limits or scheduling, retires its worker the same way.
//!
//! # The next call's child waits beside the running call
//!
//! When calls come back to back (a request within 5 ms of the worker's being ready for it), the
//! worker forks the child for the next call (its *spare*) as soon as it has handed the current
//! call its request, so the fork and the spare's setup run beside the call, not between one
//! call's answer and the next call's start; otherwise it forks it once the call has ended
//! (while it would wait anyway: a fork before the relay delays that call's answer), and that
//! spare warms up on a trivial call of the driver's own, so the pages a call writes are copied
//! before it comes. Either way
//! a spare may exist while tool code runs, as a process of the same user. Nothing that code can
//! do reaches the call the spare later runs (`tools_python_spare.rs` and `tools_python_warm.rs`
//! try each of these as attacks):
//!
//! - **Memory.** The spare is a copy of the worker, and the worker holds nothing of any call
//!   when it forks: a request is read into one buffer, written to its child and zeroed there;
//!   a call's output and result pass through one buffer, zeroed after the call; both are
//!   mapped `MADV_DONTFORK`, so no child has them at all, and neither's contents are ever
//!   parsed into Python objects (freed memory is not cleared, so a copy left anywhere would be
//!   readable by a later call through `/proc/self/mem`). The worker and its children
//!   are non-dumpable, so no other process of the user can read or write their memory
//!   (`ptrace`, `/proc/<pid>/mem`, `process_vm_writev`).
//! - **Descriptors.** Only the worker writes the spare's request pipe and reads its output and
//!   result pipes; the running call's child was forked before those pipes existed and holds
//!   none of them.
//! - **Signals.** A signal sent to a waiting spare kills it (it handles none while it waits:
//!   `SIGINT` is reset to its default until it takes a request), stops it (the worker sends it
//!   `SIGCONT` before handing it a request) or is ignored by default; none is left pending for
//!   the call it takes later. A spare that died took no request and ran no tool code: the
//!   worker says so (`"taken": false`) and [`Pool::call`] sends the request again, to the spare
//!   the worker forked meanwhile, up to three times.
//! - **What a process may change in another of its user's** — resource limits (`prlimit`),
//!   control group (a delegated one's `cgroup.procs`), nice value, scheduling policy, CPU
//!   affinity: a spare that takes a request first compares its own with the worker's at start
//!   and dies without taking it if any differs (the request goes to the next spare); the worker
//!   checks its own after every call, and a changed worker is retired. (I/O priority is not
//!   compared: it changes how fast a call runs, not what it computes.)
//! - **`TMPDIR`.** The worker prepares it only once the call before has ended and whatever it
//!   left has been killed (no tool code runs): the same directory is passed on when the call
//!   left it as it found it (same directory, mode and owner, empty, no extended attributes;
//!   its timestamps are not compared), else it is removed and a new one made, passing over a
//!   name that something made already. The spare is told its path with the request.
//! - **Leftovers.** After a call the worker (a subreaper, so orphans come to it) kills every
//!   child of its own but the spare.
//!
//! Not covered, as for the worker itself: a process outside the worker's tree acting for the
//! call (a daemon it asked to start one), and root, which `CAP_SYS_PTRACE` and
//! `CAP_SYS_RESOURCE` put beyond all of this.
//!
//! # Forking cheaply
//!
//! A call's child pays, in page faults, for every page of the worker it writes (copy on
//! write), and those faults are most of a call's cost. So the worker builds what a call's
//! globals start with once (the child uses it as it finds it), runs a trivial call of its own
//! once so that the interpreter's caches a call fills are filled in the worker, is started with
//! `LD_BIND_NOW` (the driver drops it from the calls' environment) so that no child binds
//! symbols, and — a single-threaded CPython with the GIL — forks through libc's `fork` rather
//! than `os.fork`, whose after-fork handlers (threading's re-made locks, random's re-seeding)
//! were half of the pages a child copied: with one thread they have nothing to re-make, and the
//! worker re-seeds `random` just before each fork (each child gets a state of its own; the
//! worker overwrites it before the next fork). A call decodes its arguments and encodes its
//! result with `json`'s C scanner and encoder, made once, not through `json.loads` and
//! `json.dumps`.

use super::process::{self, Capture, Finished, GroupGuard, ProcessSpec};
use super::{ToolError, ToolErrorKind, ToolLimits};
use crate::sandbox::Confinement;
use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// The worker's program, run by `python3 -c`.
const DRIVER: &str = include_str!("driver.py");

/// The idle workers of one run.
#[derive(Clone, Default)]
pub(crate) struct Pool {
    idle: Arc<Mutex<Vec<Worker>>>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.idle.lock().map_or(0, |v| v.len());
        write!(f, "Pool({n} idle)")
    }
}

/// What a worker is started for: a worker serves only calls with the same key.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Key {
    program: OsString,
    cwd: PathBuf,
    writable: Vec<PathBuf>,
}

struct Worker {
    key: Key,
    child: Child,
    stdin: ChildStdin,
    frames: BufReader<ChildStdout>,
    /// The worker's own standard error (its start-up failure, if any), kept bounded.
    stderr: Arc<Mutex<Vec<u8>>>,
    _group: GroupGuard,
    _confinement: Confinement,
}

/// How one served call ended.
enum Served {
    /// The call ended: its result bytes, its raw wait status, whether it left processes.
    Done {
        result: Vec<u8>,
        status: i32,
        dirty: bool,
    },
    /// The child waiting for the call died before it took the request (no tool code ran);
    /// `dirty`: the worker itself must be retired too.
    NotTaken { dirty: bool },
    /// It printed past the cap.
    OverCap,
    /// The worker went away (`true`: before the request could be sent, so no tool code ran).
    Died(bool),
}

impl Pool {
    /// The most idle workers kept per run.
    pub(crate) const KEEP: usize = 4;

    /// How many times a call is sent to a worker whose waiting child dies before taking it.
    const ASKS: usize = 3;

    /// An idle worker for `key` that is still alive. One that died while idle (killed from
    /// outside) is dropped here rather than sent the request: a write to its pipe can still
    /// succeed while another process holds the pipe's reading end for a moment (its spare
    /// child, dying with it), and a request that was written is never sent again.
    fn take(&self, key: &Key) -> Option<Worker> {
        let mut idle = self.idle.lock().ok()?;
        loop {
            let i = idle.iter().position(|w| &w.key == key)?;
            let mut worker = idle.swap_remove(i);
            if matches!(worker.child.try_wait(), Ok(None)) {
                return Some(worker);
            }
        }
    }

    fn put(&self, worker: Worker) {
        if let Ok(mut idle) = self.idle.lock()
            && idle.len() < Self::KEEP
        {
            idle.push(worker);
        }
    }

    /// Runs one call (`request`: the tool's JSON line, then the arguments' JSON line) in a worker of `program` working
    /// in `cwd` and allowed to write beneath `writable`, under `limits`. `Ok` with the call's
    /// result (`stdout`), what it printed (`stderr`) and its exit status when it ended within
    /// the limits; a [`ToolError`] of kind `Timeout`, `OutputLimit`, `Io` or `Failed` (the
    /// worker died) otherwise, with what it printed.
    pub(crate) async fn call(
        &self,
        tool: &str,
        program: OsString,
        cwd: &Path,
        writable: Vec<PathBuf>,
        request: &[u8],
        limits: &ToolLimits,
    ) -> Result<Finished, ToolError> {
        let key = Key {
            program,
            cwd: cwd.to_owned(),
            writable,
        };
        let mut capture = Capture::new(limits.max_output_bytes);
        let deadline = tokio::time::Instant::now() + limits.timeout;
        let (mut worker, mut reused) = match self.take(&key) {
            Some(w) => (w, true),
            None => (Worker::start(tool, &key)?, false),
        };
        let mut asked = 0;
        loop {
            asked += 1;
            let served =
                tokio::time::timeout_at(deadline, worker.serve(request, &mut capture)).await;
            let printed = process::combine(&capture.stdout, &capture.stderr);
            return match served {
                Ok(Served::Done {
                    result,
                    status,
                    dirty,
                }) => {
                    if !dirty {
                        self.put(worker);
                    }
                    Ok(Finished {
                        stdout: result,
                        stderr: capture.stderr,
                        status: ExitStatus::from_raw(status),
                    })
                }
                // The child that waited for the call was killed (or changed) from outside before
                // it took the request, so no tool code ran: ask again (the worker forked the
                // next one meanwhile), in a new worker when the worker itself was touched.
                Ok(Served::NotTaken { dirty }) if asked < Self::ASKS => {
                    if dirty {
                        worker = Worker::start(tool, &key)?;
                        reused = false;
                    }
                    capture = Capture::new(limits.max_output_bytes);
                    continue;
                }
                Ok(Served::NotTaken { .. }) => Err(ToolError {
                    kind: ToolErrorKind::Failed,
                    message: format!(
                        "tool `{tool}` did not run: the Python worker's child for it was \
                         killed before it started, {} times",
                        Self::ASKS
                    ),
                    output: printed,
                }),
                // A worker kept idle may have died meanwhile (the request could not be sent):
                // start another, once.
                Ok(Served::Died(true)) if reused => {
                    worker = Worker::start(tool, &key)?;
                    reused = false;
                    continue;
                }
                Ok(Served::Died(_)) => {
                    let status = worker.exit_status().await;
                    let mut output = printed;
                    output.push_str(&String::from_utf8_lossy(&worker.stderr_text()));
                    Ok(Finished {
                        stdout: Vec::new(),
                        stderr: output.into_bytes(),
                        status,
                    })
                }
                Ok(Served::OverCap) => Err(ToolError {
                    kind: ToolErrorKind::OutputLimit,
                    message: format!(
                        "tool `{tool}` printed more than {} bytes and was stopped; raise the \
                         output cap or make the tool print less",
                        limits.max_output_bytes
                    ),
                    output: printed,
                }),
                Err(_) => Err(ToolError {
                    kind: ToolErrorKind::Timeout,
                    message: format!(
                        "tool `{tool}` ran longer than {:?} and was stopped",
                        limits.timeout
                    ),
                    output: printed,
                }),
            };
        }
    }
}

impl Worker {
    /// Starts a worker for `key`.
    fn start(tool: &str, key: &Key) -> Result<Worker, ToolError> {
        let spec = ProcessSpec {
            tool,
            program: key.program.clone(),
            args: vec![
                "-X".into(),
                "utf8".into(),
                "-u".into(),
                "-c".into(),
                DRIVER.into(),
            ],
            cwd: &key.cwd,
            stdin: None,
            // LD_BIND_NOW: the worker's symbols are bound once, in the worker, not in each
            // call's child (the driver drops it from the calls' environment).
            env: &[
                ("PYTHONIOENCODING", "utf-8"),
                ("PYTHONDONTWRITEBYTECODE", "1"),
                ("LD_BIND_NOW", "1"),
            ],
            writable: key.writable.clone(),
        };
        let (mut child, confinement) = process::spawn_confined(&spec, true)?;
        let group = GroupGuard::new(child.id());
        let (Some(stdin), Some(stdout), Some(mut err_pipe)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(ToolError::new(
                ToolErrorKind::Io,
                format!("tool `{tool}`: the Python worker's pipes are missing"),
            ));
        };
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let kept = stderr.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err_pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                if let Ok(mut k) = kept.lock()
                    && k.len() < 64 * 1024
                {
                    k.extend_from_slice(&buf[..n]);
                }
            }
        });
        Ok(Worker {
            key: key.clone(),
            child,
            stdin,
            frames: BufReader::new(stdout),
            stderr,
            _group: group,
            _confinement: confinement,
        })
    }

    /// Sends `request` and reads the call's frames until its end.
    async fn serve(&mut self, request: &[u8], capture: &mut Capture) -> Served {
        let sent = async {
            self.stdin.write_all(request).await?;
            self.stdin.flush().await
        };
        if sent.await.is_err() {
            return Served::Died(true);
        }
        let mut result = Vec::new();
        let cap = capture.cap();
        loop {
            let mut head = [0u8; 5];
            if self.frames.read_exact(&mut head).await.is_err() {
                // Once the request is sent, a call may have run (and, say, killed its worker):
                // it is not sent again.
                return Served::Died(false);
            }
            let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
            // The result comes in frames as it is written: bounded like the output, in total.
            if len > cap.saturating_add(64 * 1024)
                || (head[0] == b'R' && result.len() + len > cap.saturating_add(64 * 1024))
            {
                return Served::OverCap;
            }
            let mut payload = vec![0u8; len];
            if self.frames.read_exact(&mut payload).await.is_err() {
                return Served::Died(false);
            }
            match head[0] {
                b'O' => {
                    if !capture.push(false, &payload) {
                        return Served::OverCap;
                    }
                }
                b'R' => result.extend_from_slice(&payload),
                b'E' => {
                    let end: serde_json::Value =
                        serde_json::from_slice(&payload).unwrap_or_default();
                    let status = end["status"]
                        .as_i64()
                        .and_then(|s| i32::try_from(s).ok())
                        .unwrap_or(0x7f00);
                    let dirty = end["dirty"].as_bool().unwrap_or(true);
                    if end["taken"].as_bool() == Some(false) {
                        return Served::NotTaken { dirty };
                    }
                    return Served::Done {
                        result,
                        status,
                        dirty,
                    };
                }
                _ => return Served::Died(false),
            }
        }
    }

    /// The worker's exit status, once it has gone away.
    async fn exit_status(&mut self) -> ExitStatus {
        let waited = tokio::time::timeout(std::time::Duration::from_secs(2), self.child.wait());
        match waited.await {
            Ok(Ok(status)) => status,
            _ => ExitStatus::from_raw(libc::SIGKILL),
        }
    }

    fn stderr_text(&self) -> Vec<u8> {
        self.stderr.lock().map(|e| e.clone()).unwrap_or_default()
    }
}
