//! Warm Python workers: Python `body` tools run in a long-lived worker instead of a fresh
//! interpreter per call.
//!
//! A run's [`ToolContext`](super::ToolContext) holds a [`Pool`]; a call takes an idle worker
//! started for the same interpreter, working directory and writable roots, or starts one (a
//! SPAWN's siblings calling at once each get their own, and up to [`Pool::KEEP`] idle workers
//! are kept). The worker (`driver.py`) is started like every tool subprocess — scrubbed
//! environment, its own process group under a guard, confined by Landlock (see
//! [`crate::sandbox`]) — and runs each call in a child of its own, forked before the call is
//! asked for (a call pays no fork; no tool code runs while that spare child waits), so each
//! call runs in fresh globals and
//! nothing it changes (globals, imported modules, the working directory, the environment, its
//! `TMPDIR`) reaches the next. The call's limits are enforced here: past the timeout or the
//! output cap, or when the worker dies, its whole process group is killed and the worker is
//! dropped (the next call starts another); a call that leaves a process behind retires its
//! worker the same way.

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
    /// It printed past the cap.
    OverCap,
    /// The worker went away (`true`: before answering anything).
    Died(bool),
}

impl Pool {
    /// The most idle workers kept per run.
    pub(crate) const KEEP: usize = 4;

    fn take(&self, key: &Key) -> Option<Worker> {
        let mut idle = self.idle.lock().ok()?;
        let i = idle.iter().position(|w| &w.key == key)?;
        Some(idle.swap_remove(i))
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
        loop {
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
                // A worker kept idle may have died meanwhile: start another, once.
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
            env: &[
                ("PYTHONIOENCODING", "utf-8"),
                ("PYTHONDONTWRITEBYTECODE", "1"),
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
        let mut answered = false;
        let mut result = Vec::new();
        let cap = capture.cap();
        loop {
            let mut head = [0u8; 5];
            if self.frames.read_exact(&mut head).await.is_err() {
                return Served::Died(!answered);
            }
            answered = true;
            let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
            if len > cap.saturating_add(64 * 1024) {
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
                b'R' => result = payload,
                b'E' => {
                    let end: serde_json::Value =
                        serde_json::from_slice(&payload).unwrap_or_default();
                    let status = end["status"]
                        .as_i64()
                        .and_then(|s| i32::try_from(s).ok())
                        .unwrap_or(0x7f00);
                    let dirty = end["dirty"].as_bool().unwrap_or(true);
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
