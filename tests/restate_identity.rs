//! `ais serve --restate` attacked directly (feature `restate`): with a request identity key set,
//! a request that the Restate server did not sign is refused before it reaches a workflow; a
//! malformed key is refused at start; a bind beyond loopback without a key is warned about.
#![cfg(feature = "restate")]

use std::io::{BufRead, Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A request identity key (the restate-sdk's documented example; any well-formed key works).
const KEY: &str = "publickeyv1_ChjENKeMvCtRnqG2mrBK1HmPKufgFUc98K8B3ononQvp";

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

/// The status of `GET /discover` (HTTP/1.1, unsigned), once the endpoint answers.
fn discover(port: u16) -> u16 {
    let start = Instant::now();
    loop {
        if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let req = format!(
                "GET /discover HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/vnd.restate.endpointmanifest.v3+json\r\nConnection: close\r\n\r\n"
            );
            s.write_all(req.as_bytes()).unwrap();
            let mut head = [0u8; 12];
            if s.read_exact(&mut head).is_ok() {
                return String::from_utf8_lossy(&head)[9..12].parse().unwrap();
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the endpoint never answered"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn an_unsigned_request_is_refused_when_an_identity_key_is_set() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let (_served, _err) = serve(
        &format!("127.0.0.1:{port}"),
        &["--identity-key", KEY],
        dir.path(),
    );
    assert_eq!(discover(port), 401);
    // Without a key the same request is answered: the refusal is the key's.
    let port = free_port();
    let (_served, _err) = serve(&format!("127.0.0.1:{port}"), &[], dir.path());
    assert_eq!(discover(port), 200);
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
