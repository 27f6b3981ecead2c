//! The built-in library of spec §5.4 against real files in temp directories, real
//! subprocesses and a real HTTP server on 127.0.0.1 started by the test.

use ais_core::Value;
use ais_rt::AccessPolicy;
use ais_rt::{ToolArgs, ToolContext, ToolError, ToolErrorKind, ToolLimits, ToolRegistry};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

fn args(pairs: &[(&str, Value)]) -> ToolArgs {
    let mut a = ToolArgs::default();
    for (k, v) in pairs {
        a.params.insert((*k).to_owned(), v.clone());
    }
    a
}

async fn call(name: &str, a: ToolArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
    let registry = ToolRegistry::with_builtins();
    let tool = registry
        .get(name)
        .unwrap_or_else(|| panic!("no built-in `{name}`"));
    assert!(registry.is_builtin(name));
    tool.call(a, ctx).await
}

fn text(v: Result<Value, ToolError>) -> String {
    match v {
        Ok(Value::Str(s)) => s,
        other => panic!("expected text, got {other:?}"),
    }
}

fn tree(root: &Path) {
    for (path, body) in [
        ("src/main.rs", "fn main() {\n    println!(\"needle\");\n}\n"),
        ("src/lib/util.rs", "// no match here\npub fn needle() {}\n"),
        ("README.md", "A needle in a haystack\n"),
        (".hidden/secret.rs", "needle\n"),
        ("node_modules/dep/index.rs", "needle\n"),
        ("data.bin", "needle\0binary"),
    ] {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
}

#[tokio::test]
async fn read_file_reads_relative_to_the_root_and_absolute_paths_too() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let ctx = ToolContext::new(dir.path());
    let got = text(call("read_file", args(&[("path", "README.md".into())]), &ctx).await);
    assert_eq!(got, "A needle in a haystack\n");
    let abs = dir
        .path()
        .join("src/main.rs")
        .to_string_lossy()
        .into_owned();
    let got = text(call("read_file", args(&[("path", abs.into())]), &ctx).await);
    assert!(got.contains("needle"));
    // Positional when the canonical name is not used.
    let got = text(call("read_file", args(&[("p", "README.md".into())]), &ctx).await);
    assert!(got.starts_with("A needle"));
}

#[tokio::test]
async fn read_file_failures_are_routable_errors() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let mut ctx = ToolContext::new(dir.path());
    let err = call("read_file", args(&[("path", "nope.txt".into())]), &ctx)
        .await
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Io);
    assert!(err.message.contains("nope.txt"), "{}", err.message);
    let err = call("read_file", args(&[("path", "src".into())]), &ctx)
        .await
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed);
    assert!(err.message.contains("list_dir"), "{}", err.message);
    let err = call("read_file", args(&[]), &ctx).await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::BadArguments);
    assert!(err.message.contains("`path`"), "{}", err.message);
    ctx.limits.max_output_bytes = 10;
    let err = call("read_file", args(&[("path", "README.md".into())]), &ctx)
        .await
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::OutputLimit);
    assert_eq!(err.output, "A needle i");
}

#[tokio::test]
async fn list_dir_lists_one_level_sorted_with_directories_marked() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let ctx = ToolContext::new(dir.path());
    let got = text(call("list_dir", args(&[("path", ".".into())]), &ctx).await);
    assert_eq!(
        got,
        ".hidden/\nREADME.md\ndata.bin\nempty/\nnode_modules/\nsrc/"
    );
    let got = text(call("list_dir", args(&[("path", "empty".into())]), &ctx).await);
    assert_eq!(got, "");
    let err = call("list_dir", args(&[("path", "missing".into())]), &ctx)
        .await
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Io);
}

#[tokio::test]
async fn glob_files_matches_at_any_depth_and_skips_hidden_and_vendored() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let ctx = ToolContext::new(dir.path());
    let got = text(
        call(
            "glob_files",
            args(&[("pattern", "*.rs".into()), ("path", "src".into())]),
            &ctx,
        )
        .await,
    );
    assert_eq!(got, "src/lib/util.rs\nsrc/main.rs");
    let got = text(
        call(
            "glob_files",
            args(&[("pattern", "*.rs".into()), ("path", ".".into())]),
            &ctx,
        )
        .await,
    );
    assert_eq!(got, "./src/lib/util.rs\n./src/main.rs");
    let got = text(
        call(
            "glob_files",
            args(&[("pattern", "*.none".into()), ("path", ".".into())]),
            &ctx,
        )
        .await,
    );
    assert_eq!(got, "");
    let err = call(
        "glob_files",
        args(&[("pattern", "[".into()), ("path", ".".into())]),
        &ctx,
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::BadArguments);
}

#[tokio::test]
async fn grep_reports_file_line_text_and_skips_binary_hidden_and_vendored() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let mut ctx = ToolContext::new(dir.path());
    let got = text(
        call(
            "grep",
            args(&[("pattern", "need(le)".into()), ("path", ".".into())]),
            &ctx,
        )
        .await,
    );
    assert_eq!(
        got,
        "./README.md:1: A needle in a haystack\n./src/lib/util.rs:2: pub fn needle() {}\n\
         ./src/main.rs:2: println!(\"needle\");"
    );
    let got = text(
        call(
            "grep",
            args(&[
                ("pattern", "haystack$".into()),
                ("path", "README.md".into()),
            ]),
            &ctx,
        )
        .await,
    );
    assert_eq!(got, "README.md:1: A needle in a haystack");
    let err = call(
        "grep",
        args(&[("pattern", "(".into()), ("path", ".".into())]),
        &ctx,
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::BadArguments);
    ctx.limits.max_output_bytes = 40;
    let err = call(
        "grep",
        args(&[("pattern", "needle".into()), ("path", ".".into())]),
        &ctx,
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::OutputLimit);
    assert_eq!(err.output, "./README.md:1: A needle in a haystack");
}

#[tokio::test]
async fn write_file_writes_under_the_root_and_refuses_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path().join("out"));
    let got = text(
        call(
            "write_file",
            args(&[
                ("path", "./docs/plan.md".into()),
                ("content", "# Plan".into()),
            ]),
            &ctx,
        )
        .await,
    );
    assert_eq!(got, "docs/plan.md");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out/docs/plan.md")).unwrap(),
        "# Plan"
    );
    for bad in ["../escape.md", "/tmp/escape.md", "docs/../../escape.md"] {
        let err = call(
            "write_file",
            args(&[("path", bad.into()), ("content", "x".into())]),
            &ctx,
        )
        .await
        .unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::PathEscape, "{bad}");
    }
    assert!(!dir.path().join("escape.md").exists());
}

#[tokio::test]
async fn run_command_runs_a_shell_line_and_fails_routably() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let got = text(
        call(
            "run_command",
            args(&[("command", "echo a | tr a b && pwd".into())]),
            &ctx,
        )
        .await,
    );
    let cwd = dir.path().canonicalize().unwrap();
    assert_eq!(got, format!("b\n{}", cwd.display()));
    let err = call(
        "run_command",
        args(&[("command", "ls /nonexistent-ais".into())]),
        &ctx,
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed);
    assert!(err.output.contains("nonexistent-ais"), "{}", err.output);
}

/// A tiny HTTP/1.1 server on 127.0.0.1 answering a few fixed paths, one thread per connection.
fn serve() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request = String::new();
                if reader.read_line(&mut request).is_err() {
                    return;
                }
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                let path = request.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let (status, extra, body): (&str, String, Vec<u8>) = match path.as_str() {
                    "/ok" => ("200 OK", String::new(), "hello from loopback".into()),
                    "/missing" => ("404 Not Found", String::new(), "no such page".into()),
                    "/big" => ("200 OK", String::new(), vec![b'z'; 2 * 1024 * 1024]),
                    "/moved" => ("302 Found", "Location: /ok\r\n".into(), Vec::new()),
                    "/to-loopback" => (
                        "302 Found",
                        format!("Location: http://{addr}/ok\r\n"),
                        Vec::new(),
                    ),
                    "/slow" => {
                        std::thread::sleep(Duration::from_secs(5));
                        ("200 OK", String::new(), "late".into())
                    }
                    _ => ("500 Internal Server Error", String::new(), Vec::new()),
                };
                let mut out = stream;
                let head = format!(
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n",
                    body.len()
                );
                let _ = out.write_all(head.as_bytes());
                let _ = out.write_all(&body);
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn http_get_fetches_from_a_loopback_server() {
    let base = serve();
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ToolContext::new(dir.path());
    ctx.policy = Arc::new(AccessPolicy::new(Vec::new(), vec!["127.0.0.1".into()]));
    let got = text(
        call(
            "http_get",
            args(&[("url", format!("{base}/ok").into())]),
            &ctx,
        )
        .await,
    );
    assert_eq!(got, "hello from loopback");
    let got = text(
        call(
            "http_get",
            args(&[("url", format!("{base}/moved").into())]),
            &ctx,
        )
        .await,
    );
    assert_eq!(got, "hello from loopback");
    let err = call(
        "http_get",
        args(&[("url", format!("{base}/missing").into())]),
        &ctx,
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed);
    assert!(err.message.contains("404"), "{}", err.message);
    assert_eq!(err.output, "no such page");
    ctx.limits.max_output_bytes = 1024;
    let err = call(
        "http_get",
        args(&[("url", format!("{base}/big").into())]),
        &ctx,
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::OutputLimit);
    assert_eq!(err.output.len(), 1024);
    ctx.limits = ToolLimits {
        timeout: Duration::from_millis(300),
        ..ToolLimits::default()
    };
    let err = call(
        "http_get",
        args(&[("url", format!("{base}/slow").into())]),
        &ctx,
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Timeout);
}

#[tokio::test]
async fn http_get_refuses_what_is_not_an_http_url() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    for url in ["file:///etc/passwd", "not a url", "ftp://127.0.0.1/x"] {
        let err = call("http_get", args(&[("url", url.into())]), &ctx)
            .await
            .unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::BadArguments, "{url}");
    }
}

#[tokio::test]
async fn a_siblings_reads_see_its_scratch_first_then_the_root() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("root")).unwrap();
    std::fs::create_dir_all(dir.path().join("scratch")).unwrap();
    std::fs::write(dir.path().join("root/shared.txt"), "from the root").unwrap();
    std::fs::write(dir.path().join("root/mine.txt"), "stale").unwrap();
    std::fs::write(dir.path().join("scratch/mine.txt"), "my own write").unwrap();
    let mut ctx = ToolContext::new(dir.path().join("root"));
    ctx.scratch = Some(dir.path().join("scratch"));
    let got = text(call("read_file", args(&[("path", "mine.txt".into())]), &ctx).await);
    assert_eq!(got, "my own write");
    let got = text(call("read_file", args(&[("path", "shared.txt".into())]), &ctx).await);
    assert_eq!(got, "from the root");
}

#[tokio::test]
async fn http_get_refuses_internal_addresses_directly_by_name_and_after_a_redirect() {
    let base = serve();
    let port = base.rsplit(':').next().unwrap().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    // An IP literal, a name resolving to loopback, the metadata address: all refused, nothing
    // fetched (the metadata address is refused before any connection is tried).
    for url in [
        format!("{base}/ok"),
        format!("http://localhost:{port}/ok"),
        format!("http://[::ffff:127.0.0.1]:{port}/ok"),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
    ] {
        let err = call("http_get", args(&[("url", url.clone().into())]), &ctx)
            .await
            .unwrap_err();
        assert_eq!(
            err.kind,
            ToolErrorKind::PathEscape,
            "{url}: {}",
            err.message
        );
        assert!(
            err.message.contains("--allow-net"),
            "{url}: {}",
            err.message
        );
    }
    // `localhost` allowed, a redirect from it to 127.0.0.1 (not allowed) is refused.
    let mut ctx = ToolContext::new(dir.path());
    ctx.policy = Arc::new(AccessPolicy::new(Vec::new(), vec!["localhost".into()]));
    let got = call(
        "http_get",
        args(&[("url", format!("http://localhost:{port}/ok").into())]),
        &ctx,
    )
    .await;
    assert_eq!(text(got), "hello from loopback");
    let err = call(
        "http_get",
        args(&[("url", format!("http://localhost:{port}/to-loopback").into())]),
        &ctx,
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::PathEscape, "{}", err.message);
    assert!(err.message.contains("redirect"), "{}", err.message);
}

#[tokio::test]
async fn reads_stay_under_the_read_roots_and_read_only_regular_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "needle secret").unwrap();
    std::fs::write(root.join("mine.txt"), "needle mine").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
    let mut ctx = ToolContext::new(&root);
    ctx.policy = Arc::new(AccessPolicy::new(Vec::new(), Vec::new()));
    let secret = outside.join("secret.txt").display().to_string();
    for (tool, a) in [
        ("read_file", args(&[("path", secret.clone().into())])),
        (
            "read_file",
            args(&[("path", "../outside/secret.txt".into())]),
        ),
        ("read_file", args(&[("path", "link/secret.txt".into())])),
        ("read_file", args(&[("path", "/etc/passwd".into())])),
        (
            "list_dir",
            args(&[("path", outside.display().to_string().into())]),
        ),
        (
            "grep",
            args(&[("pattern", "needle".into()), ("path", "link".into())]),
        ),
        (
            "glob_files",
            args(&[("pattern", "*.txt".into()), ("path", "..".into())]),
        ),
    ] {
        let err = call(tool, a, &ctx).await.unwrap_err();
        assert_eq!(
            err.kind,
            ToolErrorKind::PathEscape,
            "{tool}: {}",
            err.message
        );
        assert!(err.message.contains("--allow-read"), "{}", err.message);
    }
    assert_eq!(
        text(call("read_file", args(&[("path", "mine.txt".into())]), &ctx).await),
        "needle mine"
    );
    // Allowed, the outside directory reads.
    ctx.policy = Arc::new(AccessPolicy::new(vec![outside.clone()], Vec::new()));
    assert_eq!(
        text(call("read_file", args(&[("path", secret.into())]), &ctx).await),
        "needle secret"
    );
    // A FIFO (no writer) and a device are refused at once, not read forever.
    let fifo = root.join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    ctx.policy = Arc::new(AccessPolicy::new(vec!["/dev".into()], Vec::new()));
    for path in [fifo.display().to_string(), "/dev/zero".to_owned()] {
        let err = tokio::time::timeout(
            Duration::from_secs(5),
            call("read_file", args(&[("path", path.clone().into())]), &ctx),
        )
        .await
        .expect("no hang")
        .unwrap_err();
        assert!(
            err.message.contains("not a regular file"),
            "{path}: {}",
            err.message
        );
    }
    let hits = text(
        call(
            "grep",
            args(&[("pattern", "needle".into()), ("path", ".".into())]),
            &ctx,
        )
        .await,
    );
    assert_eq!(
        hits, "./mine.txt:1: needle mine",
        "the FIFO is skipped, the link not followed"
    );
}
