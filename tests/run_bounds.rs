//! `ais run` against hostile input, end to end: a task naming an absolute destination, huge
//! and endless model answers, control characters in a report, a symlinked trace, scripted files
//! that are devices or FIFOs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const EXAMPLE: &str = "examples/writing_plans.agir";
const RESPONSES: &str = "examples/writing_plans.responses.json";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `ais` in `dir` with no model configured in the environment.
fn ais_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(dir)
        .env_remove("AIS_MODEL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("NO_COLOR")
        .env_remove("RUST_LOG")
        .output()
        .expect("the ais binary runs")
}

fn both(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temp path")
}

#[test]
fn appendix_c_given_an_absolute_destination_writes_inside_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let abs = dir.path().join("elsewhere/plan.md");
    let task = format!("Add a CSV export and save as {}", abs.display());
    let example = root().join(EXAMPLE);
    let responses = format!("scripted:{}", root().join(RESPONSES).display());
    let o = ais_in(
        dir.path(),
        &[
            "run",
            path(&example),
            "--task",
            &task,
            "--model",
            &responses,
            "--out",
            path(&out),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert!(!abs.exists(), "the plan was written where the task said");
    assert!(!dir.path().join("elsewhere").exists());
    let plan = std::fs::read_to_string(out.join("plan.md")).expect("the plan is in the root");
    assert!(plan.starts_with("# CSV Export"), "{plan}");
    assert!(both(&o).contains("plan_file: plan.md"), "{}", both(&o));
}

/// A program with one GEN-RAW slot `draft` whose answer is the report.
const DRAFT: &str = r#"
walker:
  carries:
    task: {type: str, role: input}
    draft_md: {type: str, produced_by: draft}
nodes:
  - {id: draft, type: GEN-RAW, reads: [task], writes: [draft_md], doc: "Write it."}
  - {id: done, type: TERMINAL, reads: [draft_md]}
edges:
  - {from: draft, to: done}
"#;

/// Writes the DRAFT program and a scripted file answering `answer` in `dir`.
fn draft_run(dir: &Path, answer: &str) -> (PathBuf, String) {
    let program = dir.join("draft.agir");
    std::fs::write(&program, DRAFT).unwrap();
    let responses = dir.join("responses.json");
    let json = serde_json::json!({ "draft": [answer] });
    std::fs::write(&responses, serde_json::to_vec(&json).unwrap()).unwrap();
    (program, format!("scripted:{}", responses.display()))
}

#[test]
fn a_60_mb_answer_is_refused_with_a_clear_error_and_a_bounded_trace() {
    let dir = tempfile::tempdir().unwrap();
    let answer = "A".repeat(60 * 1024 * 1024);
    let (program, model) = draft_run(dir.path(), &answer);
    drop(answer);
    let trace = dir.path().join("trace.jsonl");
    let o = ais_in(
        dir.path(),
        &[
            "run",
            path(&program),
            "--task",
            "go",
            "--model",
            &model,
            "--trace",
            path(&trace),
        ],
    );
    let text = both(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("larger than the limit of 8388608 bytes"),
        "{text}"
    );
    assert!(text.contains("--max-answer-bytes"), "{text}");
    let size = std::fs::metadata(&trace).unwrap().len();
    assert!(size < 1024 * 1024, "the trace is {size} bytes");
    // Raised, the limit lets the answer through, and the trace still bounds the value.
    let o = ais_in(
        dir.path(),
        &[
            "run",
            path(&program),
            "--task",
            "go",
            "--model",
            &model,
            "--trace",
            path(&trace),
            "--max-answer-bytes",
            "70000000",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let line = std::fs::read_to_string(&trace).unwrap();
    assert!(
        line.len() < 1024 * 1024,
        "the trace is {} bytes",
        line.len()
    );
    assert!(line.contains("bytes in all]"), "the full size is noted");
}

#[test]
fn control_characters_in_an_answer_are_escaped_in_the_human_report() {
    let dir = tempfile::tempdir().unwrap();
    let (program, model) = draft_run(
        dir.path(),
        "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[31mred\u{202e}",
    );
    let o = ais_in(
        dir.path(),
        &["run", path(&program), "--task", "go", "--model", &model],
    );
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    assert!(
        !out.contains('\u{1b}') && !out.contains('\u{7}') && !out.contains('\u{202e}'),
        "{out:?}"
    );
    assert!(
        out.contains("\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31mred\\u{202e}"),
        "{out}"
    );
}

/// Runs `ais` in `dir`, killing it if it has not finished within `secs`.
fn ais_bounded(dir: &Path, args: &[&str], secs: u64) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(dir)
        .env_remove("AIS_MODEL")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("ais {args:?} hung");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_device_or_a_fifo_as_the_scripted_file_is_a_clear_error_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let (program, _) = draft_run(dir.path(), "x");
    let fifo = dir.path().join("fifo.json");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    for (file, what) in [
        (PathBuf::from("/dev/zero"), "a character device"),
        (fifo, "a FIFO"),
    ] {
        let model = format!("scripted:{}", file.display());
        let o = ais_bounded(
            dir.path(),
            &["run", path(&program), "--task", "go", "--model", &model],
            20,
        );
        let text = both(&o);
        assert_eq!(o.status.code(), Some(2), "{text}");
        assert!(
            text.contains(what) && text.contains("not a regular file"),
            "{text}"
        );
    }
}

#[test]
fn a_symlinked_trace_is_refused_and_its_target_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (program, model) = draft_run(dir.path(), "x");
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "keep").unwrap();
    let link = dir.path().join("trace.jsonl");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let o = ais_in(
        dir.path(),
        &[
            "run",
            path(&program),
            "--task",
            "go",
            "--model",
            &model,
            "--trace",
            path(&link),
        ],
    );
    let text = both(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(text.contains("symbolic link"), "{text}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
}

#[test]
fn a_trace_that_cannot_be_written_is_an_error_exit() {
    // The file-size limit makes the trace's first write fail (EFBIG; SIGXFSZ is ignored).
    let dir = tempfile::tempdir().unwrap();
    let (program, model) = draft_run(dir.path(), &"y".repeat(20_000));
    let trace = dir.path().join("trace.jsonl");
    let script = format!(
        // No journal: the file-size limit would stop the journal's first write before the trace's.
        "trap '' XFSZ; ulimit -f 4; exec '{}' run '{}' --task go --model '{model}' --no-journal --trace '{}'",
        env!("CARGO_BIN_EXE_ais"),
        program.display(),
        trace.display()
    );
    let o = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .current_dir(dir.path())
        .env_remove("AIS_MODEL")
        .output()
        .unwrap();
    let text = both(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("cannot write the trace"), "{text}");
}

/// A tiny HTTP server on 127.0.0.1: `/ok` answers, `/moved` redirects to `/ok`.
fn serve() -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request = String::new();
            let _ = reader.read_line(&mut request);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let (status, extra, body) = match request.split_whitespace().nth(1) {
                Some("/ok") => ("200 OK", "", "internal secret"),
                _ => ("302 Found", "Location: /ok\r\n", ""),
            };
            let mut out = stream;
            let _ = write!(
                out,
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://{addr}")
}

#[test]
fn http_get_reaches_loopback_only_with_allow_net() {
    let program = r#"
walker:
  carries:
    task: {type: str, role: input}
    page: {type: outcome, produced_by: fetch}
nodes:
  - {id: fetch, type: SENSE, owner: code, tool: http_get, reads: [task], writes: [page]}
  - {id: check, type: ROUTE, owner: code, reads: [page]}
  - {id: done, type: TERMINAL, reads: [page]}
edges:
  - {from: fetch, to: check}
  - {from: check, to: done, guard: "page.ok == true"}
  - {from: check, to: done, guard: otherwise}
"#;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fetch.agir");
    std::fs::write(&file, program).unwrap();
    let base = serve();
    for url in [format!("{base}/ok"), format!("{base}/moved")] {
        let run = |extra: &[&str]| {
            let mut args = vec!["run", path(&file), "--task", &url, "--format", "json"];
            args.extend_from_slice(extra);
            let o = ais_in(dir.path(), &args);
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
            (v["report"]["page"].clone(), both(&o))
        };
        let (page, text) = run(&[]);
        assert_eq!(page["ok"], false, "{url} refused: {text}");
        assert!(
            page["error"].as_str().unwrap().contains("--allow-net"),
            "{text}"
        );
        assert!(!text.contains("internal secret"), "{text}");
        let (page, text) = run(&["--allow-net", "127.0.0.1"]);
        assert_eq!(page["ok"], true, "{url} allowed: {text}");
        assert_eq!(page["value"], "internal secret", "{text}");
    }
}
