//! `ais mcp serve --http` as a hostile client meets it: a request from a foreign browser
//! `Origin` (DNS rebinding) is refused, sessions are capped, a token set with `--token-env` is
//! required, and a bind beyond loopback is warned about.

use crate::support::mcp_serve;

use std::io::{BufRead, Read, Write};
use std::process::{Child, Command, Stdio};

struct Server {
    child: Child,
    port: u16,
    /// What it said on standard error after its first line.
    rest: std::sync::mpsc::Receiver<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(addr: &str, args: &[&str], env: &[(&str, &str)]) -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().unwrap();
    let program = mcp_serve::write(dir.path(), "shout.agir", mcp_serve::SHOUT);
    let mut child = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(["mcp", "serve"])
        .arg(&program)
        .arg("--out")
        .arg(dir.path())
        .args(["--http", addr])
        .args(args)
        .envs(env.iter().copied())
        .env_remove("AIS_MODEL")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let port = first
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .and_then(|a| a.trim_end_matches("/mcp").rsplit(':').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no URL in {first:?}"));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    (
        dir,
        Server {
            child,
            port,
            rest: rx,
        },
    )
}

/// POSTs an `initialize` to the server with `headers`; the HTTP status.
fn initialize(port: u16, headers: &[&str]) -> u16 {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"attacker","version":"1"}}}"#;
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut first = [0u8; 12];
    s.read_exact(&mut first).unwrap();
    let line = String::from_utf8_lossy(&first).into_owned();
    line[9..12].parse().unwrap_or_else(|_| panic!("{line:?}"))
}

#[test]
fn a_foreign_origin_is_refused_and_a_loopback_one_served() {
    let (_dir, server) = start("127.0.0.1:0", &[], &[]);
    assert_eq!(
        initialize(server.port, &["Origin: https://attacker.example"]),
        403
    );
    assert_eq!(
        initialize(server.port, &["Origin: http://evil.localhost.example:80"]),
        403
    );
    assert_eq!(
        initialize(server.port, &["Origin: http://localhost:5173"]),
        200
    );
    // A client that is no browser sends no Origin.
    assert_eq!(initialize(server.port, &[]), 200);
    // An origin the operator allows is served.
    let (_dir, server) = start(
        "127.0.0.1:0",
        &["--allow-origin", "https://app.example.com:443"],
        &[],
    );
    assert_eq!(
        initialize(server.port, &["Origin: https://app.example.com"]),
        200
    );
    assert_eq!(
        initialize(server.port, &["Origin: https://attacker.example"]),
        403
    );
}

#[test]
fn sessions_are_capped() {
    let (_dir, server) = start("127.0.0.1:0", &["--max-sessions", "3"], &[]);
    for _ in 0..3 {
        assert_eq!(initialize(server.port, &[]), 200);
    }
    for _ in 0..5 {
        assert_eq!(initialize(server.port, &[]), 503);
    }
}

#[test]
fn a_token_is_required_when_one_is_set() {
    let token = "s3cret-token-for-the-test";
    let (_dir, server) = start(
        "127.0.0.1:0",
        &["--token-env", "AIS_TEST_MCP_TOKEN"],
        &[("AIS_TEST_MCP_TOKEN", token)],
    );
    assert_eq!(initialize(server.port, &[]), 401);
    assert_eq!(
        initialize(server.port, &["Authorization: Bearer wrong"]),
        401
    );
    let good = format!("Authorization: Bearer {token}");
    assert_eq!(initialize(server.port, &[&good]), 200);
    // The variable must be set.
    let dir = tempfile::tempdir().unwrap();
    let program = mcp_serve::write(dir.path(), "shout.agir", mcp_serve::SHOUT);
    let o = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(["mcp", "serve"])
        .arg(&program)
        .args([
            "--http",
            "127.0.0.1:0",
            "--token-env",
            "AIS_TEST_UNSET_TOKEN",
        ])
        .env_remove("AIS_TEST_UNSET_TOKEN")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("AIS_TEST_UNSET_TOKEN is not set"));
}

#[test]
fn a_bind_beyond_loopback_is_warned_about() {
    let (_dir, server) = start("0.0.0.0:0", &[], &[]);
    let said = server
        .rest
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("a warning");
    assert!(said.contains("WARNING: 0.0.0.0:"), "{said}");
    assert!(said.contains("not a loopback address"), "{said}");
    assert!(said.contains("--token-env"), "{said}");
    let (_dir, quiet) = start("127.0.0.1:0", &[], &[]);
    assert!(
        quiet
            .rest
            .recv_timeout(std::time::Duration::from_millis(500))
            .is_err()
    );
}
