//! What the `ais mcp serve` tests share: the programs they offer, and `ais mcp serve --http`
//! started on a free loopback port (killed when dropped).

#![allow(dead_code)] // each test binary uses part of it

use std::io::BufRead;
use std::path::{Path, PathBuf};

/// A read-only program: one input, two steps.
pub const SHOUT: &str = r#"---
name: shout
description: Shout a phrase back, louder.
---
walker:
  name: Shout
  carries:
    phrase: {type: str, role: input, doc: "The phrase to shout."}
    loud: {type: str, produced_by: up}
    louder: {type: str, produced_by: more}
nodes:
  - {id: up, type: CODE, owner: code, reads: [phrase], writes: [loud], body: "phrase + '!'"}
  - {id: more, type: CODE, owner: code, reads: [loud], writes: [louder], body: "loud + '!'"}
  - {id: done, type: TERMINAL, reads: [louder]}
edges:
  - {from: up, to: more}
  - {from: more, to: done}
"#;

/// A program that acts: it writes its note out.
pub const NOTE: &str = r#"---
name: note
description: Write a note out to a file.
---
walker:
  name: Note
  carries:
    text_in: {type: str, role: input, doc: "The note's text."}
    note_md: {type: str, produced_by: draft}
    saved: {type: str, produced_by: save}
nodes:
  - {id: draft, type: CODE, owner: code, reads: [text_in], writes: [note_md], body: "'# ' + text_in"}
  - {id: save, type: ACT, owner: code, reads: [note_md], writes: [saved]}
  - {id: done, type: TERMINAL, reads: [saved]}
edges:
  - {from: draft, to: save}
  - {from: save, to: done}
"#;

/// Writes `text` to `dir/name` and gives its path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    file
}

/// `ais mcp serve --http 127.0.0.1:0 ARGS…` running, with the URL it named.
pub struct Http {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl Http {
    /// Starts the server with `args` (the programs, `--out`, …) and waits for the line that
    /// names its URL (`serving N program(s) at URL`).
    pub fn start<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Http {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ais"))
            .args(["mcp", "serve"])
            .args(args)
            .args(["--http", "127.0.0.1:0"])
            .env_remove("AIS_MODEL")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(stderr)
            .read_line(&mut line)
            .unwrap();
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://127.0.0.1:"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .to_owned();
        assert!(line.starts_with("serving "), "{line}");
        assert!(url.ends_with("/mcp"), "{url}");
        Http { child, url }
    }

    /// The port it listens on.
    pub fn port(&self) -> &str {
        self.url
            .trim_start_matches("http://127.0.0.1:")
            .trim_end_matches("/mcp")
    }
}

impl Drop for Http {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
