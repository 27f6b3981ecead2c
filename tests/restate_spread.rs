//! SPAWN siblings as Restate invocations of their own, spread over two real `ais serve
//! --restate` endpoint processes behind one deployment URL, against a real Restate server on
//! loopback (feature `restate`; skipped with a notice when no server is installed, a failure
//! under CI=true: `.ci/run` installs it).
//!
//! Restate sends a deployment's invocations to its one URL; spreading them over processes is a
//! load balancer's job. The test's balancer is a round-robin TCP proxy (an L4 load balancer),
//! and the server opens one HTTP/2 connection per invocation in flight
//! (`http2-streams-per-connection-limit = 1`), so consecutive invocations land on alternate
//! endpoints. Each endpoint notes on its standard error every sibling it runs, with its pid:
//! that is what shows where the work landed.

use ais::restate::server::{RestateServer, free_port, server_for_tests};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const PROGRAM: &str = "tests/fixtures/restate/spread.agir";
const SIBLINGS: usize = 100;
/// Each sibling's slot takes this long (the scripted model's `$latency_ms`).
const LATENCY_MS: u64 = 50;
/// Siblings one endpoint runs at once (`ais serve --max-parallel`).
const LANES: usize = 4;

fn ais(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .output()
        .expect("the ais binary runs")
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("no JSON ({e}): {}", text(o)))
}

/// An `ais serve --restate` endpoint process whose standard error goes to `log`; killed when
/// dropped.
struct Endpoint {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Endpoint {
    fn start(dir: &Path, name: &str, responses: &Path) -> Endpoint {
        Endpoint::start_with(dir, name, responses, &[])
    }

    fn start_with(dir: &Path, name: &str, responses: &Path, args: &[&str]) -> Endpoint {
        let port = free_port().unwrap();
        let out = dir.join(format!("out-{name}"));
        std::fs::create_dir_all(&out).unwrap();
        let log = dir.join(format!("{name}.log"));
        let child = Command::new(env!("CARGO_BIN_EXE_ais"))
            .args(["serve", "--restate", "--bind"])
            .arg(format!("127.0.0.1:{port}"))
            .arg("--out")
            .arg(&out)
            .arg("--model")
            .arg(format!("scripted:{}", responses.display()))
            .args(["--max-parallel", &LANES.to_string()])
            .args(args)
            .arg(PROGRAM)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the endpoint did not listen"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Endpoint { child, port, log }
    }

    /// The siblings of run `run` this endpoint noted, by index, and the pids it noted them with.
    fn siblings_of(&self, run: &str) -> (Vec<usize>, Vec<u32>) {
        let log = std::fs::read_to_string(&self.log).unwrap();
        let (mut indexes, mut pids) = (Vec::new(), Vec::new());
        for line in log
            .lines()
            .filter(|l| l.ends_with(&format!(" of run {run}")))
        {
            let words: Vec<&str> = line.split_whitespace().collect();
            // "ais serve: pid P runs sibling I of SPAWN `fan` of run R"
            pids.push(words[3].parse().unwrap());
            indexes.push(words[6].parse().unwrap());
        }
        (indexes, pids)
    }
}

/// A child process killed when dropped, so a failed assertion leaves no endpoint running.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A round-robin TCP proxy on loopback: each connection goes to the next upstream port.
/// Changing the upstreams drops the connections open so far, so the server connects anew.
struct Balancer {
    port: u16,
    upstreams: Arc<Mutex<(Vec<u16>, tokio::task::JoinSet<()>)>>,
    accept: tokio::task::JoinHandle<()>,
}

impl Balancer {
    async fn start(upstreams: Vec<u16>) -> Balancer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(Mutex::new((upstreams, tokio::task::JoinSet::new())));
        let state = shared.clone();
        let accept = tokio::spawn(async move {
            let mut next = 0usize;
            while let Ok((mut inbound, _)) = listener.accept().await {
                let mut s = state.lock().unwrap();
                let to = s.0[next % s.0.len()];
                next += 1;
                s.1.spawn(async move {
                    if let Ok(mut outbound) =
                        tokio::net::TcpStream::connect(("127.0.0.1", to)).await
                    {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        });
        Balancer {
            port,
            upstreams: shared,
            accept,
        }
    }

    fn set(&self, upstreams: Vec<u16>) {
        let mut s = self.upstreams.lock().unwrap();
        s.0 = upstreams;
        s.1.abort_all();
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        self.accept.abort();
        self.upstreams.lock().unwrap().1.abort_all();
    }
}

/// What must be equal between the two engines' reports: all but where the run lives.
fn comparable(mut v: Value) -> Value {
    let map = v.as_object_mut().unwrap();
    for k in ["run", "journal", "workflow", "engine"] {
        map.remove(k);
    }
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spawn_of_100_runs_on_both_endpoints_and_reports_as_ais_run() {
    let Some(bin) = server_for_tests("restate_spread::spawn_of_100") else {
        return;
    };
    let server = RestateServer::start_with(
        &bin,
        &[(
            "RESTATE_WORKER__INVOKER__HTTP2_STREAMS_PER_CONNECTION_LIMIT",
            "1",
        )],
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Sibling i answers from `fan[i]` wherever it runs; each endpoint process reads the whole
    // script, and three copies leave a response for every run of the test.
    let mut script = serde_json::Map::new();
    script.insert("$latency_ms".into(), json!(LATENCY_MS));
    for i in 0..SIBLINGS {
        let answer = format!("answer {i}");
        script.insert(format!("fan[{i}]"), json!([answer, answer, answer]));
    }
    let responses = dir.path().join("responses.json");
    std::fs::write(&responses, Value::Object(script).to_string()).unwrap();
    let items: Vec<String> = (0..SIBLINGS).map(|i| format!("item {i}")).collect();
    let items = format!("items={}", serde_json::to_string(&items).unwrap());

    let a = Endpoint::start(dir.path(), "a", &responses);
    let b = Endpoint::start(dir.path(), "b", &responses);
    let balancer = Balancer::start(vec![a.port]).await;
    server
        .register(&format!("http://127.0.0.1:{}", balancer.port))
        .await
        .unwrap();
    let run = ["run", PROGRAM, "--task", "spread", "--input", &items];
    let engine = [
        "--engine",
        "restate",
        "--ingress",
        &server.ingress_url(),
        "--format",
        "json",
    ];
    let remote = || {
        let started = Instant::now();
        let o = ais(&[&run[..], &engine[..]].concat());
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        (json_of(&o), started.elapsed())
    };
    // Warm up (the server's first invocations), then one endpoint, then both.
    let _ = remote();
    let (one, one_time) = remote();
    balancer.set(vec![a.port, b.port]);
    let (two, two_time) = remote();

    let local_out = dir.path().join("out-local");
    let model = format!("scripted:{}", responses.display());
    let started = Instant::now();
    let local = ais(&[
        &run[..],
        &[
            "--model",
            &model,
            "--out",
            local_out.to_str().unwrap(),
            "--format",
            "json",
        ],
    ]
    .concat());
    let local_time = started.elapsed();
    assert_eq!(local.status.code(), Some(0), "{}", text(&local));
    let local = json_of(&local);
    assert_eq!(local["report"]["count"], json!(SIBLINGS), "{local}");
    let answers: Vec<Value> = (0..SIBLINGS)
        .map(|i| json!(format!("answer {i}")))
        .collect();
    assert_eq!(local["report"]["answers"], json!(answers), "{local}");
    assert_eq!(comparable(one.clone()), comparable(local.clone()));
    assert_eq!(comparable(two.clone()), comparable(local));

    // Where the work landed: one endpoint ran all of the first run's siblings; both ran some
    // of the second's, each sibling once, each under its own process id.
    let run_of = |v: &Value| v["run"].as_str().unwrap().to_owned();
    let (on_a, _) = a.siblings_of(&run_of(&one));
    let (on_b, _) = b.siblings_of(&run_of(&one));
    assert_eq!((on_a.len(), on_b.len()), (SIBLINGS, 0), "one endpoint");
    let (on_a, pids_a) = a.siblings_of(&run_of(&two));
    let (on_b, pids_b) = b.siblings_of(&run_of(&two));
    assert!(
        !on_a.is_empty() && !on_b.is_empty(),
        "both endpoints run siblings: a ran {on_a:?}, b ran {on_b:?}"
    );
    let mut all: Vec<usize> = on_a.iter().chain(&on_b).copied().collect();
    all.sort_unstable();
    assert_eq!(all, (0..SIBLINGS).collect::<Vec<_>>(), "each sibling once");
    assert!(pids_a.iter().all(|p| *p == a.child.id()), "{pids_a:?}");
    assert!(pids_b.iter().all(|p| *p == b.child.id()), "{pids_b:?}");

    let ideal = |endpoints: usize| {
        Duration::from_millis(LATENCY_MS * SIBLINGS as u64 / (LANES * endpoints) as u64)
    };
    eprintln!(
        "SPAWN of {SIBLINGS} siblings × {LATENCY_MS} ms, {LANES} lanes per endpoint: one endpoint {one_time:?} (ideal {:?}), two endpoints {two_time:?} (ideal {:?}; a ran {}, b ran {}); ais run in process, 16 at a time: {local_time:?}",
        ideal(1),
        ideal(2),
        on_a.len(),
        on_b.len()
    );
}

/// The script of `n` siblings, each answering from `fan[i]`, with the keys in `missing` left
/// out (a sibling with no response left fails: its slot's error is the join's error value).
fn script(dir: &Path, n: usize, missing: &[usize]) -> PathBuf {
    let mut script = serde_json::Map::new();
    for i in (0..n).filter(|i| !missing.contains(i)) {
        script.insert(format!("fan[{i}]"), json!([format!("answer {i}")]));
    }
    let path = dir.join(format!("responses-{n}-{}.json", missing.len()));
    std::fs::write(&path, Value::Object(script).to_string()).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_sibling_and_the_step_budget_end_a_restate_run_as_they_end_ais_run() {
    let Some(bin) = server_for_tests("restate_spread::faults") else {
        return;
    };
    let server = RestateServer::start(&bin).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let items: Vec<String> = (0..6).map(|i| format!("item {i}")).collect();
    let items = format!("items={}", serde_json::to_string(&items).unwrap());
    let run = ["run", PROGRAM, "--task", "spread", "--input", &items];
    let ingress = server.ingress_url();
    let engine = [
        "--engine",
        "restate",
        "--ingress",
        &ingress,
        "--format",
        "json",
    ];
    // (what, the script's missing siblings, the step budget, the exit both give)
    let cases: [(&str, &[usize], &str, i32); 2] = [
        ("sibling 4 fails", &[4], "100", 1),
        ("six siblings, four steps left", &[], "5", 1),
    ];
    for (what, missing, steps, exit) in cases {
        let responses = script(dir.path(), 6, missing);
        let served = Endpoint::start_with(dir.path(), what, &responses, &["--max-steps", steps]);
        server
            .register(&format!("http://127.0.0.1:{}", served.port))
            .await
            .unwrap();
        let remote = ais(&[&run[..], &engine[..]].concat());
        let out = dir.path().join(format!("local {what}"));
        let model = format!("scripted:{}", responses.display());
        let local_flags = ["--model", &model, "--out", out.to_str().unwrap()];
        let local_flags = [
            &local_flags[..],
            &["--max-steps", steps, "--format", "json"],
        ]
        .concat();
        let local = ais(&[&run[..], &local_flags[..]].concat());
        assert_eq!(local.status.code(), Some(exit), "{what}: {}", text(&local));
        assert_eq!(
            remote.status.code(),
            Some(exit),
            "{what}: {}",
            text(&remote)
        );
        let (r, l) = (json_of(&remote), json_of(&local));
        assert_eq!(comparable(r.clone()), comparable(l.clone()), "{what}");
        let (ran, _) = served.siblings_of(r["run"].as_str().unwrap());
        if missing.is_empty() {
            assert_eq!(l["fault"]["kind"], "budget_exhausted", "{what}: {l}");
            assert!(
                ran.is_empty(),
                "{what}: the budget is checked before any sibling: {ran:?}"
            );
        } else {
            assert_eq!(l["status"], "error", "{what}: {l}");
            assert_eq!(ran.len(), 6, "{what}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_is_a_workflow_call_and_reports_as_ais_run() {
    let Some(bin) = server_for_tests("restate_spread::call") else {
        return;
    };
    let server = RestateServer::start(&bin).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, "{}").unwrap();
    let model = format!("scripted:{}", empty.display());
    let (outer, inner) = (
        "tests/fixtures/restate/call_outer.agir",
        "tests/fixtures/restate/call_inner.agir",
    );
    let port = free_port().unwrap();
    let log = dir.path().join("serve.log");
    let child = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(["serve", "--restate", "--bind"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--out")
        .arg(dir.path())
        .args(["--model", &model, outer, inner])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let child = Killed(child);
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(60), "no endpoint");
        std::thread::sleep(Duration::from_millis(20));
    }
    server
        .register(&format!("http://127.0.0.1:{port}"))
        .await
        .unwrap();
    let run = ["run", outer, "--task", "world", "--format", "json"];
    let remote = ais(&[
        &run[..],
        &["--engine", "restate", "--ingress", &server.ingress_url()],
    ]
    .concat());
    let out = dir.path().join("local");
    let local = ais(&[
        &run[..],
        &["--model", &model, "--out", out.to_str().unwrap()],
    ]
    .concat());
    drop(child);
    assert_eq!(remote.status.code(), Some(0), "{}", text(&remote));
    assert_eq!(local.status.code(), Some(0), "{}", text(&local));
    let (r, l) = (json_of(&remote), json_of(&local));
    assert_eq!(l["report"]["result"], "HELLO, WORLD!", "{l}");
    assert_eq!(comparable(r.clone()), comparable(l));

    // The callee ran as a workflow run of its own, keyed by the caller's run and its step
    // count at the CALL (`greet` is step 1, the CALL step 2).
    let id = r["run"].as_str().unwrap();
    let admin = ais::restate::Admin::new(&server.admin_url());
    let callee = format!("{id}/c2");
    let runs = admin.runs(Some(&callee)).await.unwrap();
    assert_eq!(runs.len(), 1, "{runs:?} of {:?}", admin.runs(None).await);
    assert_eq!(runs[0].workflow, "call_inner", "{runs:?}");
    assert_eq!(runs[0].id, callee, "{runs:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn siblings_that_ask_a_human_pause_the_run_and_each_answer_resumes_one() {
    let Some(bin) = server_for_tests("restate_spread::sibling_pause") else {
        return;
    };
    let server = RestateServer::start(&bin).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let program = "tests/fixtures/restate/ask_fan.agir";
    let port = free_port().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(["serve", "--restate", "--bind"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--out")
        .arg(dir.path())
        .arg(program)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let child = Killed(child);
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(60), "no endpoint");
        std::thread::sleep(Duration::from_millis(20));
    }
    server
        .register(&format!("http://127.0.0.1:{port}"))
        .await
        .unwrap();
    let (ingress, admin) = (server.ingress_url(), server.admin_url());
    let engine = [
        "--engine",
        "restate",
        "--ingress",
        &ingress,
        "--admin",
        &admin,
        "--format",
        "json",
    ];
    let o = ais(&[
        &[
            "run",
            program,
            "--task",
            "go",
            "--input",
            r#"items=["first?","second?"]"#,
        ][..],
        &engine[..],
    ]
    .concat());
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let v = json_of(&o);
    assert_eq!(v["pause"]["carry"], "answers[0]", "{v}");
    assert_eq!(v["pause"]["prompt"], "first?", "{v}");
    let id = v["run"].as_str().unwrap().to_owned();
    let o = ais(&[&["resume", &id, "--answer", "one"][..], &engine[..]].concat());
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let v = json_of(&o);
    assert_eq!(v["pause"]["carry"], "answers[1]", "{v}");
    assert_eq!(v["pause"]["prompt"], "second?", "{v}");
    let o = ais(&[&["resume", &id, "--answer", "two"][..], &engine[..]].concat());
    drop(child);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = json_of(&o);
    assert_eq!(v["report"]["answers"], json!(["one", "two"]), "{v}");
}
