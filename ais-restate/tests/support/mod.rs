//! What the Restate tests share: a local server, an in-process endpoint, the example programs.
#![allow(dead_code)]

use ais_restate::server::{RestateServer, server_for_tests};
use ais_restate::{Endpoint, Ingress};
use ais_rt::Runtime;
use ais_rt::llm::ScriptedModel;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// An example program: `examples/NAME.agir` (the README's main job), else
/// `examples/agir/NAME.agir`.
pub fn example(name: &str) -> ais_core::agir::Document {
    let top = repo().join("examples").join(format!("{name}.agir"));
    let path = if top.is_file() {
        top
    } else {
        repo().join("examples/agir").join(format!("{name}.agir"))
    };
    let text = std::fs::read_to_string(&path).unwrap();
    ais_core::agir::read(&text).unwrap()
}

/// A runtime builder on a fresh scripted model from `responses` (a file under `examples/`).
pub fn runtime(responses: &str, out: &Path) -> ais_rt::RuntimeBuilder {
    let model = ScriptedModel::from_file(&repo().join("examples").join(responses)).unwrap();
    Runtime::builder()
        .model(Arc::new(model))
        .out_dir(out.to_owned())
        .program_dir(repo().join("examples/agir"))
}

/// An endpoint served on a free loopback port from a thread of its own; stopped when dropped.
pub struct Served {
    pub url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Served {
    pub fn start(endpoint: Endpoint) -> Served {
        Served::start_on(endpoint, 0)
    }

    /// Serves on `port` (0: a free one).
    pub fn start_on(endpoint: Endpoint, port: u16) -> Served {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            endpoint.serve_until(listener, rx).unwrap();
        });
        Served {
            url,
            stop: Some(tx),
            thread: Some(thread),
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A started server, or `None` (the test skips, with a notice) when there is none.
pub async fn server(test: &str) -> Option<RestateServer> {
    let bin = server_for_tests(test)?;
    Some(RestateServer::start(&bin).await.unwrap())
}

/// The server's ingress.
pub fn ingress(server: &RestateServer) -> Ingress {
    Ingress::new(&server.ingress_url())
}
