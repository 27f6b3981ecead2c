//! `ais run` on a terminal (a pty, through `script(1)`) against an OpenAI-compatible server on
//! 127.0.0.1 that streams its answer in pieces with delays: the pieces are shown, dimmed,
//! under the spinner before the slot's step line is printed; the answer that lands is the whole;
//! where standard error is no terminal nothing streams and no piece is printed.

use crate::providers_support;

use providers_support::{ONE_SLOT, OwnServer, Proto};
use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const VALUE: &str = "alpha bravo charlie delta echo foxtrot golf hotel";

/// A server streaming every answer in 8 pieces, 150 ms apart, when asked to stream; a plain
/// answer otherwise.
fn model_server() -> OwnServer {
    providers_support::serve_blocking(|body| {
        let value = json!({"value": VALUE});
        if body["stream"] == true {
            Proto::OpenAi
                .streamed(value, 8, Duration::from_millis(150), false)
                .0
        } else {
            Proto::OpenAi.answer(value)
        }
    })
}

fn project(server: &OwnServer) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("one.agir"), ONE_SLOT).unwrap();
    std::fs::write(
        dir.path().join("ais.toml"),
        format!(
            "default = \"main\"\n[models]\nmain = {{ spec = \"openai:streamer\", base_url = \"{}/v1\" }}\n",
            server.base
        ),
    )
    .unwrap();
    dir
}

fn command(dir: &Path, program: &str, args: &[&str]) -> Command {
    let mut c = Command::new(program);
    c.args(args)
        .current_dir(dir)
        .env_remove("AIS_MODEL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR")
        .env("TERM", "xterm-256color")
        .env("CLICOLOR_FORCE", "1");
    c
}

#[test]
fn a_terminal_shows_the_answer_streaming_in_dimmed_before_the_slot_ends() {
    if Command::new("script").arg("--version").output().is_err() {
        // CI has util-linux's script(1); elsewhere a missing one skips the test.
        assert!(
            std::env::var_os("CI").is_none(),
            "script(1) is needed to give the run a terminal (util-linux)"
        );
        eprintln!("skipped: no script(1) to give the run a terminal");
        return;
    }
    let server = model_server();
    let dir = project(&server);
    let ais = env!("CARGO_BIN_EXE_ais");
    let line = format!("{ais} run one.agir --task go");
    // `script` runs the command on a pty and copies what it draws to its standard output.
    let o = command(dir.path(), "script", &["-qefc", &line, "/dev/null"])
        .output()
        .unwrap();
    let drawn = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{drawn}");
    let got = providers_support::received(&server.server);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].body["stream"], true, "a terminal run streams");
    // A piece of the answer is drawn under the spinner, dimmed, before the step line
    // `    1  write …` that is printed once the slot ended.
    // (The model's raw output: the JSON text of its answer, as it streams.)
    let piece = drawn
        .find(r#"write: {"value":"alpha"#)
        .unwrap_or_else(|| panic!("no streamed piece drawn: {drawn:?}"));
    let step = drawn
        .find("1  write")
        .unwrap_or_else(|| panic!("no step line: {drawn:?}"));
    assert!(
        piece < step,
        "the piece came after the step line: {drawn:?}"
    );
    let dim = drawn[..piece]
        .rfind("\u{1b}[2m")
        .expect("a dim style before the piece");
    assert!(piece - dim < 80, "the piece is drawn dimmed: {drawn:?}");
    // The whole answer landed (the run's summary comes after the slot).
    assert!(drawn.contains("ok after 2 steps"), "{drawn}");

    // Not a terminal: nothing streams, no piece is printed.
    let o = command(dir.path(), ais, &["run", "one.agir", "--task", "go"])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(!text.contains(r#""value":"alpha"#), "{text}");
    let got = providers_support::received(&server.server);
    assert_ne!(got[0].body["stream"], true, "no terminal, no stream");
}
