//! A tiny crate that depends on this workspace's `ais`, checked by a real `cargo check` in a
//! temporary directory — for what only a real compilation shows (where rustc's own errors
//! land, a `build.rs` that exports AG-IR).
//!
//! The crate builds in trybuild's target directory with trybuild's flags, so cargo reuses the
//! dependencies the `tests/ui/` run compiled: no target directory of its own, and after the
//! first run a check costs about a second.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// The flags trybuild passes (its `rustflags.rs` and `cargo.rs`): the same flags make cargo
/// reuse the artifacts trybuild compiled.
const TRYBUILD_RUSTFLAGS: &str =
    r#"["--cfg", "trybuild", "--verbose", "-A", "dead_code", "--diagnostic-width=140"]"#;

/// A crate to check: its `src/main.rs`, and optionally a `build.rs`.
pub struct Case<'a> {
    /// `src/main.rs`.
    pub main: &'a str,
    /// `build.rs`, which gets `ais-syntax` as its build-dependency.
    pub build_rs: Option<&'a str>,
    /// More `[dependencies]` lines (`csv = "1.3"\n`), or nothing.
    pub deps: &'a str,
}

/// What `cargo check` said: whether it succeeded, and rustc's messages (JSON).
pub struct Checked {
    /// The exit status was success.
    pub success: bool,
    /// Each `compiler-message`'s `message` object.
    pub messages: Vec<Value>,
    /// The whole output, for assertion messages.
    pub output: Output,
}

impl Checked {
    /// The error messages, rendered as rustc prints them.
    pub fn rendered_errors(&self) -> String {
        let rendered: Vec<&str> = self
            .messages
            .iter()
            .filter(|m| m["level"] == "error")
            .filter_map(|m| m["rendered"].as_str())
            .collect();
        format!(
            "{}\n{}",
            rendered.join("\n"),
            String::from_utf8_lossy(&self.output.stderr)
        )
    }
}

/// The workspace's target directory, as trybuild finds it: `CARGO_TARGET_DIR` when set (a
/// relative one is under the workspace), else `target/`.
fn target_dir(ws: &Path) -> std::path::PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => ws.join(dir),
        None => ws.join("target"),
    }
}

/// Writes the crate into a temporary directory and runs `cargo check` on it.
pub fn check(case: &Case) -> Checked {
    let ws = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut manifest = format!(
        "[package]\nname = \"ais-case\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\
         publish = false\n\n[dependencies]\nais = {{ path = {:?} }}\n",
        ws.join("ais").display().to_string()
    );
    // tokio for an async `main`; always, so every case shares one build of the dependencies.
    manifest.push_str("tokio = { version = \"1\", features = [\"rt\", \"macros\"] }\n");
    manifest.push_str(case.deps);
    if let Some(build) = case.build_rs {
        manifest.push_str(&format!(
            "\n[build-dependencies]\nais-syntax = {{ path = {:?} }}\n",
            ws.join("ais-syntax").display().to_string()
        ));
        std::fs::write(dir.path().join("build.rs"), build).expect("writes build.rs");
    }
    manifest.push_str("\n[workspace]\n");
    std::fs::write(dir.path().join("Cargo.toml"), manifest).expect("writes Cargo.toml");
    std::fs::copy(ws.join("Cargo.lock"), dir.path().join("Cargo.lock")).expect("copies the lock");
    std::fs::create_dir(dir.path().join("src")).expect("creates src");
    std::fs::write(dir.path().join("src/main.rs"), case.main).expect("writes main.rs");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(dir.path())
        .env(
            "CARGO_TARGET_DIR",
            target_dir(ws).join("tests").join("trybuild"),
        )
        .env_remove("RUSTFLAGS")
        .env("CARGO_INCREMENTAL", "0")
        .args(["check", "--offline", "--quiet", "--color=never"])
        .arg("--message-format=json")
        .arg(format!("--config=build.rustflags={TRYBUILD_RUSTFLAGS}"))
        .output()
        .expect("cargo runs");
    let messages = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-message")
        .map(|m| m["message"].clone())
        .collect();
    Checked {
        success: output.status.success(),
        messages,
        output,
    }
}
