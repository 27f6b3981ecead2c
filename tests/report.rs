//! `ais report` end to end: a scripted run whose model answers with markup and script, its
//! trace turned into a page, and the page loaded by headless Chromium (Debian's `chromium`,
//! which `.ci/run` installs) from a file URL with the network off, driven over the DevTools
//! protocol (`--remote-debugging-pipe`): the step table's rows, a slot's response once its
//! summary is clicked, the path marked in the graph, nothing run or fetched, and a screenshot
//! that is not blank.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn ais_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(dir)
        .env_remove("AIS_MODEL")
        .env("OPENAI_API_KEY", "sk-test-0123456789abcdefghijklmnop")
        .output()
        .expect("the ais binary runs")
}

/// A draft slot, a CODE step over it, and the TERMINAL.
const PROGRAM: &str = r#"---
name: hostile_answer
description: A model answer that tries to run script in the report.
---
walker:
  name: HostileAnswer
  carries:
    task: {type: str, role: input}
    draft: {type: str, produced_by: write}
    size: {type: int, produced_by: measure}
nodes:
  - {id: write, type: GEN-RAW, owner: model, reads: [task], writes: [draft], doc: "Write a draft."}
  - {id: measure, type: CODE, owner: code, reads: [draft], writes: [size], body: "len(draft)"}
  - {id: done, type: TERMINAL, owner: code, reads: [draft, size]}
  - {id: never, type: TERMINAL, owner: code, reads: [draft]}
edges:
  - {from: write, to: measure}
  - {from: measure, to: done}
  - {from: measure, to: never, modality: forbidden}
"#;

/// The hostile answer: closes the script element the page does not have, opens one, an image
/// whose error handler runs script, and a fetch of `url` (a listener on loopback that must
/// never be called).
fn attack(url: &str) -> String {
    format!(
        "</script><script>window.pwned=1;document.title='pwned'</script>\
         <img src=\"{url}/img\" onerror=\"window.pwned=2\"><link rel=stylesheet href=\"{url}/css\">\
         sk-live-abcdefghijklmnop0123456789 done"
    )
}

/// Runs the program on the attack and writes its report; the listener's URL goes into the
/// answer.
fn report_of_attack(dir: &Path, url: &str) -> PathBuf {
    std::fs::write(dir.join("p.agir"), PROGRAM).unwrap();
    std::fs::write(
        dir.join("r.json"),
        json!({"write": [attack(url)]}).to_string(),
    )
    .unwrap();
    let o = ais_in(
        dir,
        &[
            "run",
            "p.agir",
            "--task",
            "go",
            "--model",
            "scripted:r.json",
            "--trace",
            "t.jsonl",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::write(dir.join("run.json"), &o.stdout).unwrap();
    let o = ais_in(
        dir,
        &[
            "report",
            "t.jsonl",
            "--outcome",
            "run.json",
            "--program",
            "p.agir",
            "-o",
            "report.html",
            "--price-in",
            "3",
            "--price-out",
            "15",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    dir.join("report.html")
}

#[test]
fn the_page_escapes_the_run_and_keeps_secrets_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let page = std::fs::read_to_string(report_of_attack(dir.path(), "http://127.0.0.1:9")).unwrap();
    assert!(!page.contains("<script"), "no script element at all");
    assert!(!page.contains("<img"), "no image element");
    assert!(!page.contains("<link"), "no link element");
    assert!(page.contains("&lt;/script&gt;&lt;script&gt;window.pwned=1"));
    assert!(
        !page.contains("sk-live-abcdefghijklmnop0123456789"),
        "the trace scrubbed it"
    );
    assert!(page.contains("[redacted]"));
    assert!(
        page.contains("default-src 'none'"),
        "a CSP that forbids every fetch and script"
    );
    assert!(!page.contains("http-equiv=\"refresh\""));
}

#[test]
fn a_trace_line_that_is_not_an_event_is_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.jsonl"), "{\"step\": 1}\nnot json\n").unwrap();
    let o = ais_in(dir.path(), &["report", "t.jsonl", "-o", "r.html"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("`t.jsonl` line 2: not a trace event"), "{err}");
    assert!(!dir.path().join("r.html").exists());
    let o = ais_in(dir.path(), &["report", "gone.jsonl", "-o", "r.html"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("gone.jsonl"));
}

/// The Chromium binary, if installed; CI must have it.
fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
    });
    if found.is_none() && std::env::var_os("CI").is_some() {
        panic!("chromium is not installed; .ci/run installs Debian's `chromium`");
    }
    found
}

/// Headless Chromium driven over the DevTools protocol on a pipe (fds 3 and 4).
struct Browser {
    child: std::process::Child,
    to: std::io::PipeWriter,
    from: BufReader<std::io::PipeReader>,
    next: u64,
    events: Vec<Value>,
    _profile: tempfile::TempDir,
}

impl Browser {
    fn start(bin: &Path) -> Browser {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        let profile = tempfile::tempdir().unwrap();
        let (their_in, to) = std::io::pipe().unwrap();
        let (from, their_out) = std::io::pipe().unwrap();
        let (i, o) = (their_in.as_raw_fd(), their_out.as_raw_fd());
        let mut cmd = Command::new(bin);
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--remote-debugging-pipe",
            "--window-size=1200,1600",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        // SAFETY: fcntl and dup2 are async-signal-safe; the closure touches nothing else. The
        // pipe ends are first moved above 10, so that placing one at 3 cannot close the other.
        unsafe {
            cmd.pre_exec(move || {
                let (i, o) = (
                    libc::fcntl(i, libc::F_DUPFD, 10),
                    libc::fcntl(o, libc::F_DUPFD, 10),
                );
                if i < 0 || o < 0 || libc::dup2(i, 3) < 0 || libc::dup2(o, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("chromium starts");
        drop((their_in, their_out));
        Browser {
            child,
            to,
            from: BufReader::new(from),
            next: 0,
            events: Vec::new(),
            _profile: profile,
        }
    }

    /// Sends a command (to a page's session, when given) and waits for its result, keeping
    /// the events that arrive meanwhile.
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next += 1;
        let mut msg = json!({"id": self.next, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        let mut bytes = msg.to_string().into_bytes();
        bytes.push(0);
        self.to.write_all(&bytes).unwrap();
        loop {
            let reply = self.read();
            if reply["id"] == json!(self.next) {
                assert!(reply["error"].is_null(), "{method}: {reply}");
                return reply["result"].clone();
            }
            self.events.push(reply);
        }
    }

    fn read(&mut self) -> Value {
        let mut buf = Vec::new();
        let n = self.from.read_until(0, &mut buf).unwrap();
        assert!(n > 0, "chromium closed the pipe");
        buf.pop();
        serde_json::from_slice(&buf).unwrap()
    }

    /// Waits for the event `method`.
    fn wait(&mut self, method: &str) {
        if self.events.iter().any(|e| e["method"] == method) {
            return;
        }
        loop {
            let e = self.read();
            let done = e["method"] == method;
            self.events.push(e);
            if done {
                return;
            }
        }
    }

    fn eval(&mut self, session: &str, expression: &str) -> Value {
        let r = self.call(
            Some(session),
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        assert!(r["exceptionDetails"].is_null(), "{expression}: {r}");
        r["result"]["value"].clone()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn chromium_renders_the_report_offline_and_runs_nothing_from_the_run() {
    let Some(bin) = chromium() else {
        eprintln!("skipped: no chromium (CI installs it)");
        return;
    };
    // A listener on loopback: any fetch the page made would land here.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let page = report_of_attack(dir.path(), &url);
    let mut b = Browser::start(&bin);
    let target = b.call(None, "Target.createTarget", json!({"url": "about:blank"}));
    let attached = b.call(
        None,
        "Target.attachToTarget",
        json!({"targetId": target["targetId"], "flatten": true}),
    );
    let s = attached["sessionId"].as_str().unwrap().to_owned();
    b.call(Some(&s), "Network.enable", json!({}));
    b.call(
        Some(&s),
        "Network.emulateNetworkConditions",
        json!({"offline": true, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}),
    );
    b.call(Some(&s), "Page.enable", json!({}));
    let file_url = format!("file://{}", page.display());
    b.call(Some(&s), "Page.navigate", json!({"url": file_url}));
    b.wait("Page.loadEventFired");

    // The step table: one row per step.
    assert_eq!(
        b.eval(&s, "document.querySelectorAll('#steps tbody tr').length"),
        3
    );
    assert_eq!(
        b.eval(&s, "[...document.querySelectorAll('#steps tbody tr td:nth-child(2)')].map(td => td.innerText).join(' ')"),
        "write measure done"
    );
    // A slot's response is not rendered until its summary is clicked; then it shows the
    // model's markup as text.
    let visible = "document.querySelector('details.slot pre.response').checkVisibility()";
    assert_eq!(b.eval(&s, visible), false);
    b.eval(&s, "document.querySelector('details.slot summary').click()");
    assert_eq!(
        b.eval(&s, "document.querySelector('details.slot').open"),
        true
    );
    assert_eq!(b.eval(&s, visible), true);
    let shown = b.eval(
        &s,
        "document.querySelector('details.slot pre.parsed').innerText",
    );
    let shown = shown.as_str().unwrap();
    assert!(
        shown.starts_with("</script><script>window.pwned=1;"),
        "{shown}"
    );
    assert!(
        shown.contains("[redacted]") && !shown.contains("sk-live-"),
        "{shown}"
    );
    // The path: the three steps taken are marked in the graph, the untaken TERMINAL is not.
    assert_eq!(
        b.eval(
            &s,
            "[...document.querySelectorAll('#graph .taken')].map(g => g.dataset.node).join(',')"
        ),
        "0,1,2"
    );
    assert_eq!(
        b.eval(
            &s,
            "getComputedStyle(document.querySelector('#graph .taken rect')).stroke"
        ),
        "rgb(180, 83, 9)"
    );
    assert_eq!(
        b.eval(&s, "document.querySelectorAll('#graph [data-node]').length"),
        4
    );
    // The SVG graph renders: it has a size on the page.
    assert_eq!(
        b.eval(
            &s,
            "document.querySelector('#graph svg').getBoundingClientRect().height > 200"
        ),
        true
    );
    // Nothing of the run ran or loaded.
    assert_eq!(b.eval(&s, "typeof window.pwned"), "undefined");
    assert_eq!(b.eval(&s, "document.title"), "ais run report: t.jsonl");
    assert_eq!(b.eval(&s, "document.scripts.length + document.images.length + document.querySelectorAll('link').length"), 0);
    assert_eq!(
        b.eval(&s, "document.querySelector('#cost').innerText"),
        "0.0000"
    );
    let fetched: Vec<String> = b
        .events
        .iter()
        .filter(|e| e["method"] == "Network.requestWillBeSent")
        .filter_map(|e| e["params"]["request"]["url"].as_str().map(str::to_owned))
        .filter(|u| !u.starts_with("file:") && !u.starts_with("data:"))
        .collect();
    assert!(fetched.is_empty(), "the page fetched {fetched:?}");
    assert!(
        listener.accept().is_err(),
        "nothing connected to the listener"
    );

    // A screenshot that is not blank.
    let shot = b.call(Some(&s), "Page.captureScreenshot", json!({"format": "png"}));
    use base64::Engine;
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot["data"].as_str().unwrap())
        .unwrap();
    let decoder = png::Decoder::new(std::io::Cursor::new(png));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let pixels = &pixels[..info.buffer_size()];
    let step = info.color_type.samples();
    let first = &pixels[..step];
    let differing = pixels.chunks(step).filter(|p| *p != first).count();
    let total = pixels.len() / step;
    assert!(
        differing * 50 > total,
        "{differing} of {total} pixels differ from the first"
    );
    let _ = b.call(None, "Browser.close", json!({}));
    let mut rest = Vec::new();
    let _ = b.from.read_to_end(&mut rest);
}

/// Opens `page` in headless Chromium with the network off; returns the browser and the
/// page's session.
fn open_offline(bin: &Path, page: &Path) -> (Browser, String) {
    let mut b = Browser::start(bin);
    let target = b.call(None, "Target.createTarget", json!({"url": "about:blank"}));
    let attached = b.call(
        None,
        "Target.attachToTarget",
        json!({"targetId": target["targetId"], "flatten": true}),
    );
    let s = attached["sessionId"].as_str().unwrap().to_owned();
    b.call(Some(&s), "Network.enable", json!({}));
    b.call(
        Some(&s),
        "Network.emulateNetworkConditions",
        json!({"offline": true, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}),
    );
    b.call(Some(&s), "Page.enable", json!({}));
    let file_url = format!("file://{}", page.display());
    b.call(Some(&s), "Page.navigate", json!({"url": file_url}));
    b.wait("Page.loadEventFired");
    (b, s)
}

#[test]
fn chromium_renders_the_report_of_a_journaled_run_by_its_id() {
    let Some(bin) = chromium() else {
        eprintln!("skipped: no chromium (CI installs it)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // The same hostile run, journaled by default under the output root; the report needs
    // only its id: the journal holds the program, the steps and their times, the slot's
    // exchanges and value, and the outcome.
    report_of_attack(dir.path(), "http://127.0.0.1:9");
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("run.json")).unwrap())
            .unwrap();
    let id = run["run"].as_str().unwrap();
    let o = ais_in(dir.path(), &["report", id, "-o", "journal.html"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let html = std::fs::read_to_string(dir.path().join("journal.html")).unwrap();
    assert!(!html.contains("sk-live-"), "secrets stay redacted");
    assert!(!html.contains("<script"), "no script element at all");

    let (mut b, s) = open_offline(&bin, &dir.path().join("journal.html"));
    assert_eq!(
        b.eval(&s, "[...document.querySelectorAll('#steps tbody tr td:nth-child(2)')].map(td => td.innerText).join(' ')"),
        "write measure done"
    );
    assert_eq!(
        b.eval(&s, "document.querySelector('#status').innerText"),
        "ok"
    );
    let visible = "document.querySelector('details.slot pre.parsed').checkVisibility()";
    assert_eq!(b.eval(&s, visible), false);
    b.eval(&s, "document.querySelector('details.slot summary').click()");
    assert_eq!(b.eval(&s, visible), true);
    let shown = b.eval(
        &s,
        "document.querySelector('details.slot pre.parsed').innerText",
    );
    let shown = shown.as_str().unwrap();
    assert!(
        shown.starts_with("</script><script>window.pwned=1;") && shown.contains("[redacted]"),
        "{shown}"
    );
    assert_eq!(
        b.eval(
            &s,
            "document.querySelector('details.slot summary').innerText.includes('1 exchange(s)')"
        ),
        true
    );
    // The exchange itself: the request the model was sent (the slot's doc and the task) and
    // its response, the hostile text shown as text, the secret redacted.
    let request = b.eval(
        &s,
        "document.querySelector('details.slot pre.request').innerText",
    );
    let request = request.as_str().unwrap();
    assert!(
        request.contains("Write a draft.") && request.contains("go"),
        "{request}"
    );
    let response = b.eval(
        &s,
        "document.querySelector('details.slot pre.response').innerText",
    );
    let response = response.as_str().unwrap();
    assert!(
        response.contains("window.pwned=1") && response.contains("[redacted]"),
        "{response}"
    );
    assert!(!response.contains("sk-live-"), "{response}");
    assert_eq!(
        b.eval(
            &s,
            "document.querySelectorAll('details.slot p.note').length"
        ),
        0,
        "no note that the journal lacks the exchanges"
    );
    // Step times: the slot step's is journaled (the TERMINAL commits none).
    let times = b.eval(
        &s,
        "[...document.querySelectorAll('#steps tbody tr td:nth-child(5)')].map(td => td.innerText).join(' ')",
    );
    let times: Vec<f64> = times
        .as_str()
        .unwrap()
        .split(' ')
        .map(|t| t.parse().unwrap())
        .collect();
    assert_eq!(times.len(), 3, "{times:?}");
    assert!(times[0] > 0.0, "the slot step took time: {times:?}");
    // The graph comes from the journaled program, with the path marked.
    assert_eq!(
        b.eval(
            &s,
            "[...document.querySelectorAll('#graph .taken')].map(g => g.dataset.node).join(',')"
        ),
        "0,1,2"
    );
    assert_eq!(b.eval(&s, "typeof window.pwned"), "undefined");
    assert_eq!(
        b.eval(&s, "document.title"),
        format!("ais run report: run {id} of `hostile_answer`")
    );
    let fetched = b
        .events
        .iter()
        .filter(|e| e["method"] == "Network.requestWillBeSent")
        .filter_map(|e| e["params"]["request"]["url"].as_str())
        .filter(|u| !u.starts_with("file:") && !u.starts_with("data:"))
        .count();
    assert_eq!(fetched, 0, "the page fetched nothing");

    // A run id the journal does not have is named, with the next step.
    let o = ais_in(dir.path(), &["report", "nosuchrun", "-o", "x.html"]);
    assert_ne!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no run `nosuchrun`") && err.contains("ais runs"),
        "{err}"
    );
    let _ = b.call(None, "Browser.close", json!({}));
    let mut rest = Vec::new();
    let _ = b.from.read_to_end(&mut rest);
}

/// A CALLed program's steps are sub-steps of the CALL: in the trace (`step` the CALL's, `sub`
/// the callee's own number), and on the page, where they follow the CALL's row as `2.1`,
/// `2.2`, … and do not count as steps of the run.
#[test]
fn a_called_programs_steps_are_sub_steps_of_the_call_in_the_trace_and_the_report() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/call_trace");
    let dir = tempfile::tempdir().unwrap();
    let (outer, responses) = (root.join("outer.agir"), root.join("responses.json"));
    let (outer, responses) = (outer.to_str().unwrap(), responses.to_str().unwrap());
    let model = format!("scripted:{responses}");
    let run = [
        "run", outer, "--task", "the fair", "--model", &model, "--trace", "t.jsonl", "--format",
        "json",
    ];
    let o = ais_in(dir.path(), &run);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::write(dir.path().join("run.json"), &o.stdout).unwrap();
    let trace = std::fs::read_to_string(dir.path().join("t.jsonl")).unwrap();
    let events: Vec<Value> = trace
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let placed: Vec<(Value, Value, &str)> = events
        .iter()
        .map(|e| {
            let sub = e.get("sub").cloned().unwrap_or(Value::Null);
            (e["step"].clone(), sub, e["instruction"].as_str().unwrap())
        })
        .collect();
    assert_eq!(
        placed,
        [
            (json!(1), Value::Null, "pick"),
            (json!(2), json!([1]), "look"),
            (json!(2), json!([2]), "say"),
            (json!(2), json!([3]), "fin"),
            (json!(2), Value::Null, "call"),
            (json!(3), Value::Null, "wrap"),
            (json!(4), Value::Null, "done"),
        ]
    );

    let o = ais_in(
        dir.path(),
        &[
            "report",
            "t.jsonl",
            "--outcome",
            "run.json",
            "--program",
            outer,
            "-o",
            "r.html",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let page = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert_eq!(
        step_rows(&page),
        [
            "1 pick", "2 call", "2.1 look", "2.2 say", "2.3 fin", "3 wrap", "4 done"
        ]
    );
    assert!(page.contains(" · 4 steps · "), "the run's own steps");
    assert!(
        page.contains("step 2.1 <code>look</code> (in a CALLed program)"),
        "the callee's slot"
    );

    // From the journal, which keeps the steps that did something outside (here the callee's
    // slot): the callee's effects are on its own step, under the CALL.
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("run.json")).unwrap())
            .unwrap();
    let o = ais_in(
        dir.path(),
        &["report", run["run"].as_str().unwrap(), "-o", "j.html"],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let page = std::fs::read_to_string(dir.path().join("j.html")).unwrap();
    assert_eq!(
        step_rows(&page),
        ["1 pick", "2 call", "2.1 look", "3 wrap", "4 done"]
    );
    assert!(
        page.contains("step 2.1 <code>look</code> (in a CALLed program)"),
        "the callee's slot"
    );
}

/// The step table's rows of a report page: `LABEL INSTRUCTION`, in order.
fn step_rows(page: &str) -> Vec<String> {
    page.split("<tr id=\"event-")
        .skip(1)
        .map(|row| {
            let cell = |from: &str, to: &str| {
                let at = row.find(from).unwrap() + from.len();
                row[at..at + row[at..].find(to).unwrap()].to_owned()
            };
            format!("{} {}", cell("<td class=\"n\">", "<"), cell("<code>", "<"))
        })
        .collect()
}
