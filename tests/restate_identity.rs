//! `ais serve --restate` attacked directly (feature `restate`): with a request identity key set,
//! a request that the Restate server did not sign is refused before it reaches a workflow — a
//! real Restate server signing with the matching private key registers the endpoint and runs a
//! workflow through it, one without the key (or with another) cannot register it; a malformed
//! key is refused at start; a bind beyond loopback without a key is warned about.
#![cfg(feature = "restate")]

use ais::restate::server::{RestateServer, server_for_tests};
use ais::restate::{Ingress, RunRequest};
use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn program(dir: &std::path::Path) -> std::path::PathBuf {
    let p = dir.join("hello.agir");
    std::fs::write(
        &p,
        "walker:\n  name: hello\n  carries:\n    task: {type: str, role: input}\nnodes:\n  - {id: done, type: TERMINAL, reads: [task]}\n",
    )
    .unwrap();
    p
}

fn serve(
    bind: &str,
    args: &[&str],
    dir: &std::path::Path,
) -> (Served, std::sync::mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(["serve", "--restate", "--bind", bind])
        .args(args)
        .arg(program(dir))
        .arg("--out")
        .arg(dir)
        .env_remove("AIS_MODEL")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    (Served(child), rx)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_malformed_key_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args([
            "serve",
            "--restate",
            "--bind",
            "127.0.0.1:0",
            "--identity-key",
            "publickeyv1_nope",
        ])
        .arg(program(dir.path()))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no Restate request identity key"));
}

#[test]
fn a_bind_beyond_loopback_without_a_key_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let (_served, err) = serve(&format!("0.0.0.0:{port}"), &[], dir.path());
    let said = err.recv_timeout(Duration::from_secs(30)).expect("a line");
    assert!(
        said.contains("WARNING") && said.contains("--identity-key"),
        "{said}"
    );
}

/// An Ed25519 key pair made by `openssl`: the private key's PEM file (what the Restate server
/// signs with) and the public key as the SDK reads it (`publickeyv1_` and the base58 of its 32
/// bytes). `None` with a notice when there is no `openssl`.
fn key_pair(dir: &std::path::Path, name: &str) -> Option<(std::path::PathBuf, String)> {
    let pem = dir.join(format!("{name}.pem"));
    let made = Command::new("openssl")
        .args(["genpkey", "-algorithm", "ed25519", "-out"])
        .arg(&pem)
        .output();
    if !made.as_ref().is_ok_and(|o| o.status.success()) {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("no openssl to make a key pair with (`.ci/run` installs it): {made:?}");
        }
        eprintln!("note: skipping: no openssl to make a key pair with");
        return None;
    }
    let der = Command::new("openssl")
        .args(["pkey", "-pubout", "-outform", "DER", "-in"])
        .arg(&pem)
        .output()
        .unwrap();
    assert!(der.status.success(), "{der:?}");
    // The SubjectPublicKeyInfo of an Ed25519 key ends with the key's 32 bytes.
    let raw = &der.stdout[der.stdout.len() - 32..];
    Some((
        pem,
        format!("publickeyv1_{}", bs58::encode(raw).into_string()),
    ))
}

/// A Restate server signing its requests with `pem` (none: unsigned).
async fn restate(bin: &std::path::Path, pem: Option<&std::path::Path>) -> RestateServer {
    let var = "RESTATE_WORKER__INVOKER__REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE";
    let pem = pem.map(|p| p.to_str().unwrap().to_owned());
    let env: Vec<(&str, &str)> = pem.iter().map(|p| (var, p.as_str())).collect();
    RestateServer::start_with(bin, &env).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_restate_server_holding_the_private_key_reaches_the_endpoint() {
    let Some(bin) = server_for_tests("restate_identity::real_server") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let Some((pem, public)) = key_pair(dir.path(), "ours") else {
        return;
    };
    let (other_pem, _) = key_pair(dir.path(), "theirs").unwrap();
    let port = free_port();
    let (_served, _err) = serve(
        &format!("127.0.0.1:{port}"),
        &["--identity-key", &public],
        dir.path(),
    );
    let uri = format!("http://127.0.0.1:{port}");
    // A server that signs with another key, or signs nothing (what any other client of the
    // port is), cannot even register it: the endpoint answers its discovery request with 401.
    for pem in [Some(other_pem.as_path()), None] {
        let server = restate(&bin, pem).await;
        let refused = server.register(&uri).await;
        let said = format!("{refused:?}");
        assert!(refused.is_err() && said.contains("401"), "{pem:?}: {said}");
    }
    // The server holding the private key registers it and runs a workflow through it.
    let server = restate(&bin, Some(&pem)).await;
    server.register(&uri).await.unwrap();
    let ingress = Ingress::new(&server.ingress_url());
    let request = RunRequest {
        task: Some("signed".to_owned()),
        inputs: Default::default(),
    };
    ingress.submit("hello", "signed-1", &request).await.unwrap();
    let report = tokio::time::timeout(Duration::from_secs(60), ingress.output("hello", "signed-1"))
        .await
        .expect("the run ends")
        .unwrap();
    assert_eq!(report["status"], "ok", "{report:#}");
}
