//! What the Restate tests share: the `ais` binary run as a user runs it, `ais serve --restate`
//! endpoint processes (started, registered, killed), the engine flags, the part of a report two
//! engines must agree on, and a round-robin TCP balancer in front of several endpoints.
//!
//! Each test binary uses part of it.
#![allow(dead_code)]

use ais::restate::server::{RestateServer, free_port};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `ais ARGS` from the repository root, with no standard input.
pub fn ais(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .output()
        .expect("the ais binary runs")
}

/// An output's exit status and both streams, for a failed assertion's message.
pub fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// An output's standard output as JSON (a failure names what it was instead).
pub fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("no JSON ({e}): {}", text(o)))
}

/// What must be equal between two engines' reports: all but where the run lives.
pub fn comparable(mut v: Value) -> Value {
    let map = v.as_object_mut().unwrap();
    for k in ["run", "journal", "workflow", "engine"] {
        map.remove(k);
    }
    v
}

/// `--engine restate --ingress URL --admin URL` of `server`.
pub fn engine(server: &RestateServer) -> Vec<String> {
    vec![
        "--engine".into(),
        "restate".into(),
        "--ingress".into(),
        server.ingress_url(),
        "--admin".into(),
        server.admin_url(),
    ]
}

/// Waits (a minute at most) until `done`.
pub fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An `ais serve --restate` endpoint process whose standard error goes to `log`; killed
/// (SIGKILL) when dropped, so a failed assertion leaves no endpoint running.
pub struct Served {
    /// The process.
    pub child: Child,
    /// The port it listens on (loopback).
    pub port: u16,
    /// Its standard error.
    pub log: PathBuf,
    /// The log's temporary file, when the log is one (removed when dropped).
    _temp: Option<tempfile::TempPath>,
}

impl Served {
    /// `ais serve --restate --bind 127.0.0.1:PORT --out OUT ARGS…` (the programs and flags in
    /// `args`), its standard error into `log`; waits until it listens.
    pub fn start(port: u16, out: &Path, args: &[&str], log: &Path) -> Served {
        let child = Command::new(env!("CARGO_BIN_EXE_ais"))
            .args(["serve", "--restate", "--bind"])
            .arg(format!("127.0.0.1:{port}"))
            .arg("--out")
            .arg(out)
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .unwrap();
        let served = Served {
            child,
            port,
            log: log.to_owned(),
            _temp: None,
        };
        wait_for("the endpoint to listen", || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        served
    }

    /// Kills the process with SIGKILL and waits for it.
    pub fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// Every sibling this endpoint noted running: its pid, the sibling's index and its run.
    pub fn noted(&self) -> Vec<(u32, usize, String)> {
        let log = std::fs::read_to_string(&self.log).unwrap();
        log.lines()
            .filter_map(|line| {
                // "ais serve: pid P runs sibling N of SPAWN `fan` of run R", N counted from 1
                // (the sibling's index is N - 1).
                let words: Vec<&str> = line.split_whitespace().collect();
                (words.get(4) == Some(&"runs") && words.get(5) == Some(&"sibling")).then(|| {
                    let run = line.rsplit_once(" of run ").unwrap().1.to_owned();
                    let n: usize = words[6].parse().unwrap();
                    (words[3].parse().unwrap(), n - 1, run)
                })
            })
            .collect()
    }

    /// The siblings of run `run` this endpoint noted, by index, and the pids it noted them with.
    pub fn siblings_of(&self, run: &str) -> (Vec<usize>, Vec<u32>) {
        self.noted()
            .into_iter()
            .filter(|(_, _, r)| r == run)
            .map(|(pid, index, _)| (index, pid))
            .unzip()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An endpoint serving `args` (programs and flags) on a free port, writing under `out` (its
/// standard error in a temporary file), registered with `server`.
pub async fn serve(server: &RestateServer, out: &Path, args: &[&str]) -> Served {
    let port = free_port().unwrap();
    let log = tempfile::Builder::new()
        .prefix("ais-serve-")
        .suffix(".log")
        .tempfile()
        .unwrap()
        .into_temp_path();
    let mut served = Served::start(port, out, args, &log);
    served._temp = Some(log);
    server
        .register(&format!("http://127.0.0.1:{port}"))
        .await
        .unwrap();
    served
}

/// A server on `bin` for endpoints behind a [`Balancer`]: each invocation in flight opens an
/// HTTP/2 connection of its own (`http2-streams-per-connection-limit = 1`), so consecutive
/// invocations land on alternate endpoints.
pub async fn balanced_server(bin: &Path) -> RestateServer {
    RestateServer::start_with(
        bin,
        &[(
            "RESTATE_WORKER__INVOKER__HTTP2_STREAMS_PER_CONNECTION_LIMIT",
            "1",
        )],
    )
    .await
    .unwrap()
}

/// A round-robin TCP proxy on loopback (an L4 load balancer): each connection goes to the
/// next upstream port that accepts it, so an upstream that died is passed over.
/// [`Balancer::set`] drops the connections open so far, so the server connects anew.
pub struct Balancer {
    /// The port it listens on.
    pub port: u16,
    upstreams: Arc<Mutex<(Vec<u16>, tokio::task::JoinSet<()>)>>,
    accept: tokio::task::JoinHandle<()>,
}

impl Balancer {
    /// A balancer over `upstreams` (loopback ports), in that order.
    pub async fn start(upstreams: Vec<u16>) -> Balancer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(Mutex::new((upstreams, tokio::task::JoinSet::new())));
        let state = shared.clone();
        let accept = tokio::spawn(async move {
            let mut next = 0usize;
            while let Ok((mut inbound, _)) = listener.accept().await {
                let mut s = state.lock().unwrap();
                let order: Vec<u16> = (0..s.0.len())
                    .map(|k| s.0[(next + k) % s.0.len()])
                    .collect();
                next += 1;
                s.1.spawn(async move {
                    for to in order {
                        if let Ok(mut outbound) =
                            tokio::net::TcpStream::connect(("127.0.0.1", to)).await
                        {
                            let _ =
                                tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                            return;
                        }
                    }
                });
            }
        });
        Balancer {
            port,
            upstreams: shared,
            accept,
        }
    }

    /// Sends new connections to `upstreams`, and drops the open ones.
    pub fn set(&self, upstreams: Vec<u16>) {
        let mut s = self.upstreams.lock().unwrap();
        s.0 = upstreams;
        s.1.abort_all();
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        self.accept.abort();
        self.upstreams.lock().unwrap().1.abort_all();
    }
}
