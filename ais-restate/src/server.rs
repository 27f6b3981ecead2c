//! A local Restate server as a child process: what the tests (and a developer trying the
//! endpoint) start, on loopback, with a data directory of its own and free ports.
//!
//! The server is the `restate-server` binary of the npm package `@restatedev/restate-server`
//! (or Restate's own packages). [`server_binary`] finds it: `$AIS_RESTATE_SERVER`, else
//! `restate-server` on `PATH`. [`RestateServer::start`] starts it with its ingress, admin and
//! node ports on `127.0.0.1`, waits until both the admin API and the ingress answer, and kills it
//! when dropped (the data directory goes with it unless [`RestateServer::keep_data`] was asked).
//! [`RestateServer::register`] registers an endpoint through the admin API (`POST /deployments`).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The environment variable naming the `restate-server` binary.
pub const SERVER_ENV: &str = "AIS_RESTATE_SERVER";

/// How long a start may take before it is an error.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// Why the local server could not be started or used.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The binary could not be started.
    #[error("could not start the Restate server `{bin}`: {source}")]
    Spawn {
        /// The binary.
        bin: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The server did not become ready.
    #[error(
        "the Restate server did not become ready in {secs} s ({why}); its log ends with:\n{log}"
    )]
    NotReady {
        /// How long it was given.
        secs: u64,
        /// What was seen last.
        why: String,
        /// The tail of its log.
        log: String,
    },
    /// The admin API refused or failed a request.
    #[error("the Restate admin API at {url} answered {status}: {body}")]
    Admin {
        /// The request's URL.
        url: String,
        /// The HTTP status (or the transport error).
        status: String,
        /// The response body.
        body: String,
    },
    /// A file or a port could not be had.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The `restate-server` binary to use: `$AIS_RESTATE_SERVER`, else `restate-server` on `PATH`.
pub fn server_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(SERVER_ENV).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("restate-server"))
        .find(|p| p.is_file())
}

/// The server binary for a test, or `None` with a printed notice (the test then skips). Under
/// `CI=true` a missing server is a failure: `.ci/run` installs it.
pub fn server_for_tests(test: &str) -> Option<PathBuf> {
    match server_binary() {
        Some(p) if p.is_file() => Some(p),
        found => {
            let why = match found {
                Some(p) => format!("${SERVER_ENV} names {}, which is not a file", p.display()),
                None => format!(
                    "no Restate server found (${SERVER_ENV} unset, no `restate-server` on PATH)"
                ),
            };
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{test}: {why}; `.ci/run` installs it (step `restate-server`)");
            }
            eprintln!(
                "note: skipping {test}: {why}; install it with `npm install --prefix target/restate @restatedev/restate-server@1.7.12` and set {SERVER_ENV}"
            );
            None
        }
    }
}

/// A free TCP port on loopback (the port is released before the server binds it).
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// `N` distinct free ports on loopback: all held at once while they are picked, then released.
fn free_ports<const N: usize>() -> std::io::Result<[u16; N]> {
    let held = (0..N)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<std::io::Result<Vec<_>>>()?;
    let mut ports = [0; N];
    for (port, l) in ports.iter_mut().zip(&held) {
        *port = l.local_addr()?.port();
    }
    Ok(ports)
}

/// How many times [`RestateServer::start_with`] picks fresh ports when one it picked was taken
/// by another process between the pick and the server's bind.
const PORT_ATTEMPTS: usize = 5;

/// A running local Restate server; killed when dropped.
pub struct RestateServer {
    bin: PathBuf,
    data: Option<tempfile::TempDir>,
    base: PathBuf,
    ingress: u16,
    admin: u16,
    node: u16,
    /// Settings of the server's own (`RESTATE_…` variables), beside the loopback ones.
    env: Vec<(String, String)>,
    child: Option<Child>,
}

impl RestateServer {
    /// Starts `bin` on loopback with a fresh data directory and free ports, and waits until it
    /// is ready.
    pub async fn start(bin: &Path) -> Result<RestateServer, ServerError> {
        RestateServer::start_with(bin, &[]).await
    }

    /// Starts `bin` as [`RestateServer::start`] does, with the server settings `env` too
    /// (`RESTATE_…` variables, e.g. `RESTATE_WORKER__INVOKER__HTTP2_STREAMS_PER_CONNECTION_LIMIT`),
    /// kept across [`RestateServer::restart`].
    pub async fn start_with(
        bin: &Path,
        env: &[(&str, &str)],
    ) -> Result<RestateServer, ServerError> {
        let mut attempt = 1;
        loop {
            let data = tempfile::Builder::new().prefix("ais-restate-").tempdir()?;
            let [ingress, admin, node] = free_ports()?;
            let mut server = RestateServer {
                bin: bin.to_owned(),
                base: data.path().to_owned(),
                data: Some(data),
                ingress,
                admin,
                node,
                env: env
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
                child: None,
            };
            match server.spawn().await {
                Ok(()) => return Ok(server),
                // A port released by `free_ports` was taken before the server bound it (a
                // parallel test's listener): pick others.
                Err(ServerError::NotReady { ref log, .. })
                    if attempt < PORT_ATTEMPTS && log.contains("Address in use") =>
                {
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Keeps the data directory when the server is dropped, and returns its path.
    pub fn keep_data(&mut self) -> PathBuf {
        if let Some(d) = self.data.take() {
            let _ = d.keep();
        }
        self.base.clone()
    }

    /// The ingress URL (`http://127.0.0.1:PORT`).
    pub fn ingress_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.ingress)
    }

    /// The admin API's URL (`http://127.0.0.1:PORT`).
    pub fn admin_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.admin)
    }

    /// Kills the server (SIGKILL) and waits for it.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Kills the server and starts it again on the same data directory and ports: what it
    /// held (invocations, journals, promises, deployments) survives.
    pub async fn restart(&mut self) -> Result<(), ServerError> {
        self.kill();
        self.spawn().await
    }

    /// Registers the endpoint at `uri` (e.g. `http://127.0.0.1:9080`) through the admin API,
    /// replacing an earlier registration of the same URI; returns the admin API's answer.
    pub async fn register(&self, uri: &str) -> Result<serde_json::Value, ServerError> {
        register(&self.admin_url(), uri).await
    }

    async fn spawn(&mut self) -> Result<(), ServerError> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.base.join("server.log"))?;
        let child = Command::new(&self.bin)
            .args(["--no-logo", "--listen-mode", "tcp", "--node-name", "ais"])
            .arg("--base-dir")
            .arg(&self.base)
            .env("RESTATE_BIND_ADDRESS", format!("127.0.0.1:{}", self.node))
            .env(
                "RESTATE_ADVERTISED_ADDRESS",
                format!("http://127.0.0.1:{}", self.node),
            )
            .env(
                "RESTATE_ADMIN__BIND_ADDRESS",
                format!("127.0.0.1:{}", self.admin),
            )
            .env(
                "RESTATE_INGRESS__BIND_ADDRESS",
                format!("127.0.0.1:{}", self.ingress),
            )
            // Frugal: the default budget is sized for a production node.
            .env("RESTATE_ROCKSDB_TOTAL_MEMORY_SIZE", "256MiB")
            // One node on loopback: two partitions, not the default 24, each of which starts
            // its own processor and log before it takes an invocation.
            .env("RESTATE_DEFAULT_NUM_PARTITIONS", "2")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .map_err(|source| ServerError::Spawn {
                bin: self.bin.clone(),
                source,
            })?;
        self.child = Some(child);
        self.wait_ready().await
    }

    async fn wait_ready(&mut self) -> Result<(), ServerError> {
        let client = crate::client::http_client();
        let started = Instant::now();
        let urls = [
            format!("{}/health", self.admin_url()),
            format!("{}/restate/health", self.ingress_url()),
        ];
        let mut why = String::from("no answer yet");
        while started.elapsed() < READY_TIMEOUT {
            if let Some(c) = self.child.as_mut()
                && let Ok(Some(status)) = c.try_wait()
            {
                why = format!("it exited with {status}");
                break;
            }
            let mut ready = true;
            for url in &urls {
                match client.get(url).send().await {
                    Ok(r) if r.status().is_success() => {}
                    Ok(r) => {
                        why = format!("{url} answered {}", r.status());
                        ready = false;
                    }
                    Err(e) => {
                        why = format!("{url}: {e}");
                        ready = false;
                    }
                }
            }
            if ready {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let log = std::fs::read_to_string(self.base.join("server.log")).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(20).collect();
        self.kill();
        Err(ServerError::NotReady {
            secs: READY_TIMEOUT.as_secs(),
            why,
            log: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
        })
    }
}

impl Drop for RestateServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Registers the endpoint at `uri` with the Restate server whose admin API is at `admin`
/// (`POST /deployments`, forcing a re-registration of the same URI).
pub async fn register(admin: &str, uri: &str) -> Result<serde_json::Value, ServerError> {
    let url = format!("{}/deployments", admin.trim_end_matches('/'));
    let body = serde_json::json!({ "uri": uri, "force": true });
    // The server may still be settling its partitions: retry a refusal for a few seconds.
    let mut last = String::new();
    for _ in 0..50 {
        match crate::client::http_client()
            .post(&url)
            .json(&body)
            .send()
            .await
        {
            Ok(r) if r.status().is_success() => {
                return r.json().await.map_err(|e| ServerError::Admin {
                    url: url.clone(),
                    status: "200".into(),
                    body: e.to_string(),
                });
            }
            Ok(r) => {
                let status = r.status().to_string();
                let text = r.text().await.unwrap_or_default();
                if status.starts_with('4') && !text.contains("discover") {
                    return Err(ServerError::Admin {
                        url,
                        status,
                        body: text,
                    });
                }
                last = format!("{status}: {text}");
            }
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Err(ServerError::Admin {
        url,
        status: "no success after 10 s".into(),
        body: last,
    })
}
