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

mod restate_support;

use ais::restate::server::{RestateServer, free_port, server_for_tests};
use restate_support::{Balancer, Served, ais, comparable, json_of, serve, text};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const PROGRAM: &str = "tests/fixtures/restate/spread.agir";
const SIBLINGS: usize = 100;
/// Each sibling's slot takes this long (the scripted model's `$latency_ms`).
const LATENCY_MS: u64 = 50;
/// Siblings one endpoint runs at once (`ais serve --max-parallel`).
const LANES: usize = 4;

/// The timed test takes this for writing, every other test of this binary for reading: the
/// wall time is never measured beside another test's server and endpoints on the same cores.
static ALONE: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

/// An endpoint serving the spread program on the scripted model `responses`, writing under
/// `dir/out-NAME`, its standard error in `dir/NAME.log` (not registered).
fn spread_endpoint(dir: &Path, name: &str, responses: &Path, args: &[&str]) -> Served {
    let out = dir.join(format!("out-{name}"));
    std::fs::create_dir_all(&out).unwrap();
    let model = format!("scripted:{}", responses.display());
    let lanes = LANES.to_string();
    let flags = ["--model", &model, "--max-parallel", &lanes];
    let args = [&flags[..], args, &[PROGRAM]].concat();
    Served::start(
        free_port().unwrap(),
        &out,
        &args,
        &dir.join(format!("{name}.log")),
    )
}

/// A SPAWN of 100 siblings whose model sleeps 50 ms, on one endpoint and then on two (4 lanes
/// each): the report is `ais run`'s, both endpoints ran siblings, each sibling once — and the
/// issue's bound on the wall time.
///
/// What is timed is the whole `ais run --engine restate` (the CLI's start, the submission
/// through the ingress, the run's 100 sibling calls, the siblings on the endpoints, the join,
/// the report back), as a user would time it. The ideal is 100 × 50 ms ÷ the total
/// parallelism, the parallelism being what the endpoints really run: each sibling's model
/// exchange takes one of its endpoint's `--max-parallel` lanes for its 50 ms, so 4 lanes per
/// endpoint. Asserted:
///
/// - each time is at least its ideal (1.25 s on one endpoint, 625 ms on two): the lanes
///   really bound the work, so the ideal is not flattered by more parallelism than claimed;
/// - on two endpoints, the time is within 2× of the ideal (under 1.25 s), as the issue asks.
///
/// Not asserted: the one-endpoint upper bound, and any bound at 0 ms latency (then the time is
/// all Restate's per-invocation round trips and the dev build's work, which the machine's load
/// decides). Measured (dev build, 2 shared cores), the lane held for a sibling's effects only
/// against the lane held for its whole invocation, interleaved at load 3.5–3.9: two endpoints
/// 763–819 ms (1.22–1.31×) against 825–853 ms (1.32–1.36×), one 1.37–1.43 s against
/// 1.47–1.49 s; at load 8–9 (not interleaved) two endpoints took 789 / 827 ms against 0.92–1.02 s,
/// the acknowledgement a lane idled through growing with the load (p50 5 ms, p90 9 ms, max
/// 17 ms at load 8.8). What is left over the ideal: the CLI and the submission (~50 ms), the
/// first wave (each endpoint's one thread takes in its 50 invocations while the first 4 model
/// calls run, which then end 40–90 ms late), ~2 ms a lane cycle (the dev build's slot work and
/// the timer), the last sibling's outcome and the report (~10 ms). This test takes [`ALONE`]
/// for writing, so no other test of this binary runs beside it; the assertion's message gives
/// the machine's load.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spawn_of_100_runs_on_both_endpoints_and_reports_as_ais_run() {
    let _alone = ALONE.write().await;
    let Some(bin) = server_for_tests("restate_spread::spawn_of_100") else {
        return;
    };
    let server = restate_support::balanced_server(&bin).await;
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

    let a = spread_endpoint(dir.path(), "a", &responses, &[]);
    let b = spread_endpoint(dir.path(), "b", &responses, &[]);
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
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let measured = format!(
        "SPAWN of {SIBLINGS} siblings × {LATENCY_MS} ms, {LANES} lanes per endpoint: one endpoint {one_time:?} (ideal {:?}), two endpoints {two_time:?} (ideal {:?}, {:.2}×; a ran {}, b ran {}); ais run in process, 16 at a time: {local_time:?}; load {}",
        ideal(1),
        ideal(2),
        two_time.as_secs_f64() / ideal(2).as_secs_f64(),
        on_a.len(),
        on_b.len(),
        load.trim()
    );
    eprintln!("{measured}");
    assert!(
        one_time >= ideal(1) && two_time >= ideal(2),
        "faster than the lanes allow: {measured}"
    );
    assert!(
        two_time <= 2 * ideal(2),
        "not within 2× of the ideal: {measured}"
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
    let _shared = ALONE.read().await;
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
        let served = spread_endpoint(dir.path(), what, &responses, &["--max-steps", steps]);
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
    let _shared = ALONE.read().await;
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
    let served = serve(&server, dir.path(), &["--model", &model, outer, inner]).await;
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
    drop(served);
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
async fn siblings_that_ask_a_human_pause_the_run_and_each_answer_resumes_one_as_ais_resume() {
    let _shared = ALONE.read().await;
    let Some(bin) = server_for_tests("restate_spread::sibling_pause") else {
        return;
    };
    let server = RestateServer::start(&bin).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let program = "tests/fixtures/restate/ask_fan.agir";
    let served = serve(&server, dir.path(), &[program]).await;
    let engine = restate_support::engine(&server);
    let engine: Vec<&str> = engine.iter().map(String::as_str).collect();
    let local_out = dir.path().join("local");
    let local = ["--out", local_out.to_str().unwrap()];
    let json = ["--format", "json"];
    let run = [
        "run",
        program,
        "--task",
        "go",
        "--input",
        r#"items=["first?","second?"]"#,
    ];
    // Each stage on both engines: the same exit and the same object, but where the run lives.
    let both = |remote: &[&str], local: &[&str], exit: i32| {
        let (r, l) = (
            ais(&[remote, &engine[..], &json[..]].concat()),
            ais(&[local, &json[..]].concat()),
        );
        assert_eq!(r.status.code(), Some(exit), "{}", text(&r));
        assert_eq!(l.status.code(), Some(exit), "{}", text(&l));
        let (r, l) = (json_of(&r), json_of(&l));
        assert_eq!(comparable(r.clone()), comparable(l.clone()), "{remote:?}");
        (r, l)
    };
    let (r, l) = both(&run, &[&run[..], &local[..]].concat(), 3);
    assert_eq!(r["pause"]["carry"], "answers[0]", "{r}");
    assert_eq!(r["pause"]["prompt"], "first?", "{r}");
    let (id, local_id) = (
        r["run"].as_str().unwrap().to_owned(),
        l["run"].as_str().unwrap().to_owned(),
    );
    let answer = |answer: &str, exit: i32| {
        let remote = ["resume", &id, "--answer", answer];
        let local_run = ["resume", &local_id, "--answer", answer];
        both(&remote, &[&local_run[..], &local[..]].concat(), exit).0
    };
    let r = answer("one", 3);
    assert_eq!(r["pause"]["carry"], "answers[1]", "{r}");
    assert_eq!(r["pause"]["prompt"], "second?", "{r}");
    let r = answer("two", 0);
    drop(served);
    assert_eq!(r["report"]["answers"], json!(["one", "two"]), "{r}");
}

/// The kill test's siblings: a quick one is done once it appended its line, a slow one then
/// waits for the release file.
const KILL_ITEMS: [&str; 8] = [
    "quick 0", "slow 1", "quick 2", "slow 3", "quick 4", "slow 5", "quick 6", "slow 7",
];

/// The lines of `dir/lines.txt` (one per sibling's append), sorted.
fn appended(dir: &Path) -> Vec<String> {
    let mut lines: Vec<String> = std::fs::read_to_string(dir.join("lines.txt"))
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect();
    lines.sort();
    lines
}

/// How many invocations of the siblings service `service` the server holds as completed.
async fn completed_siblings(admin: &ais::restate::Admin, service: &str) -> usize {
    let rows = admin
        .query(&format!(
            "SELECT id FROM sys_invocation WHERE target_service_name = '{service}' \
             AND status = 'completed'"
        ))
        .await
        .unwrap();
    rows.len()
}

/// What [`kill_mid_spawn`] leaves for its test to check.
struct KilledMidSpawn {
    /// The run's JSON on Restate (an endpoint killed; it reports as `ais run`'s).
    remote: serde_json::Value,
    /// The two roots: the endpoints' shared one, and `ais run`'s.
    shared: PathBuf,
    local_dir: PathBuf,
    /// The slow siblings the killed endpoint was running.
    lost: Vec<usize>,
    victim: Served,
    survivor: Served,
    _dir: tempfile::TempDir,
    _server: ais::restate::server::RestateServer,
}

/// Runs `program`'s SPAWN over [`KILL_ITEMS`] on two endpoints behind a balancer (both writing
/// under one directory, as one shared volume), and once the quick siblings completed and every
/// slow one waits, SIGKILLs an endpoint running a slow sibling (`b` when both do); `lose` is
/// called with each lost sibling's index (what else its disk loses), then the lost siblings wait
/// again on the survivor and are released. The run must end `ok`, report as `ais run` of the
/// same program does, and have appended each item once.
async fn kill_mid_spawn(
    bin: &Path,
    program: &str,
    task: &str,
    service: &str,
    lose: impl Fn(&Path, usize),
) -> KilledMidSpawn {
    let server = restate_support::balanced_server(bin).await;
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    let start = |name: &str| {
        let log = dir.path().join(format!("{name}.log"));
        Served::start(free_port().unwrap(), &shared, &[program], &log)
    };
    let (a, b) = (start("a"), start("b"));
    let balancer = Balancer::start(vec![a.port, b.port]).await;
    server
        .register(&format!("http://127.0.0.1:{}", balancer.port))
        .await
        .unwrap();
    let items = format!("items={}", json!(KILL_ITEMS));
    let run = |dir: &Path| {
        let dir = format!("dir={}", dir.display());
        [
            "run", program, "--task", task, "--input", &items, "--input", &dir,
        ]
        .map(String::from)
        .to_vec()
    };
    let mut remote = run(&shared);
    remote.extend(restate_support::engine(&server));
    remote.extend(["--format".into(), "json".into()]);
    let remote =
        std::thread::spawn(move || ais(&remote.iter().map(String::as_str).collect::<Vec<_>>()));

    // Mid-SPAWN: the quick siblings completed, every slow one is waiting.
    let slow: Vec<usize> = (0..KILL_ITEMS.len()).filter(|i| i % 2 == 1).collect();
    let marker = |i: usize| shared.join(format!("waiting {}", KILL_ITEMS[i]));
    restate_support::wait_for("every slow sibling to wait", || {
        slow.iter().all(|&i| marker(i).exists())
    });
    let admin = ais::restate::Admin::new(&server.admin_url());
    let started = Instant::now();
    while completed_siblings(&admin, service).await < KILL_ITEMS.len() - slow.len() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "quick siblings"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        appended(&shared).len(),
        KILL_ITEMS.len(),
        "every sibling appended"
    );
    let runs_slow = |e: &Served| -> Vec<usize> {
        e.noted()
            .into_iter()
            .map(|(_, i, _)| i)
            .filter(|i| i % 2 == 1)
            .collect()
    };
    let (mut victim, survivor) = if runs_slow(&b).is_empty() {
        (a, b)
    } else {
        (b, a)
    };
    let lost = runs_slow(&victim);
    assert!(!lost.is_empty(), "neither endpoint runs a slow sibling");
    victim.kill();
    for &i in &lost {
        lose(&shared, i);
        std::fs::remove_file(marker(i)).unwrap();
    }
    // Restate retries the lost siblings on the survivor (the balancer passes the dead
    // endpoint over): each replays its effects from its journal and waits again.
    restate_support::wait_for("the lost siblings to wait again", || {
        lost.iter().all(|&i| marker(i).exists())
    });
    std::fs::write(shared.join("release"), "").unwrap();
    let remote = remote.join().unwrap();
    assert_eq!(remote.status.code(), Some(0), "{}", text(&remote));

    // The same report as `ais run` (nothing killed, released from the start).
    let local_dir = dir.path().join("local");
    std::fs::create_dir_all(&local_dir).unwrap();
    std::fs::write(local_dir.join("release"), "").unwrap();
    let out = local_dir.to_str().unwrap();
    let local = run(&local_dir);
    let local = [
        &local.iter().map(String::as_str).collect::<Vec<_>>()[..],
        &["--out", out, "--format", "json"],
    ]
    .concat();
    let local = ais(&local);
    assert_eq!(local.status.code(), Some(0), "{}", text(&local));
    let (r, l) = (json_of(&remote), json_of(&local));
    assert_eq!(l["report"]["answers"][1], "slow 1: released", "{l}");
    assert_eq!(comparable(r.clone()), comparable(l.clone()), "{r}");

    // Each sibling's append ran once, wherever it ran and however often it was retried.
    let mut expected: Vec<String> = KILL_ITEMS.map(String::from).to_vec();
    expected.sort();
    assert_eq!(appended(&shared), expected, "each append ran once");
    assert_eq!(appended(&local_dir), expected);
    KilledMidSpawn {
        remote: r,
        shared,
        local_dir,
        lost,
        victim,
        survivor,
        _dir: dir,
        _server: server,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_killed_mid_spawn_is_survived_and_no_completed_effect_runs_twice() {
    let _shared = ALONE.read().await;
    let Some(bin) = server_for_tests("restate_spread::kill_mid_spawn") else {
        return;
    };
    let k = kill_mid_spawn(
        &bin,
        "tests/fixtures/restate/append_fan.agir",
        "kill",
        "append_fan_siblings",
        |_, _| {},
    )
    .await;
    // The survivor ran each lost sibling again; every other sibling ran once, on one of them.
    let run_id = k.remote["run"].as_str().unwrap();
    let (on_victim, _) = k.victim.siblings_of(run_id);
    let (on_survivor, pids) = k.survivor.siblings_of(run_id);
    assert!(pids.iter().all(|p| *p == k.survivor.child.id()), "{pids:?}");
    for i in 0..KILL_ITEMS.len() {
        let count = |on: &[usize]| on.iter().filter(|&&n| n == i).count();
        let (v, s) = (count(&on_victim), count(&on_survivor));
        let once = if k.lost.contains(&i) {
            (v, s) == (1, 1)
        } else {
            v + s == 1
        };
        assert!(
            once,
            "sibling {i}: the victim ran {on_victim:?}, the survivor {on_survivor:?}"
        );
    }
    eprintln!(
        "killed the endpoint running siblings {on_victim:?} (slow {:?}); the survivor ran {on_survivor:?}",
        k.lost
    );
}

/// The files under `root` (relative paths, `/`-separated) with their contents, `.ais/` and the
/// kill test's own files (lines, markers, release, logs) left out.
fn published(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut todo = vec![root.to_owned()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let path = e.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == ".ais" {
                continue;
            }
            if path.is_dir() {
                todo.push(path);
            } else if rel.starts_with("staged/") {
                out.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The files left in `root/.ais/stage` (there should be none once a SPAWN applied its stage).
fn left_staged(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![root.join(".ais/stage")];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            if e.path().is_dir() {
                todo.push(e.path());
            } else {
                out.push(e.path());
            }
        }
    }
    out
}

/// `orchestrator_owned` siblings run as invocations of their own too: each stages a file (and
/// appends a line to a shared file, an effect that must not repeat), and the orchestrating run
/// applies every stage after the join, from bytes that came back through Restate's journal.
///
/// An endpoint running a slow sibling — its write staged and journaled, its outcome not yet
/// returned — is killed with SIGKILL, and its disk's share goes with it: the test removes the
/// stage of each sibling it lost (`.ais/stage/fan/<i>/`). The survivor replays each lost
/// sibling's write from its journal entry, which writes the staged file back without running
/// the write again. The report and the published files are `ais run`'s, each line is appended
/// once, and no staged file is left on either root.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn staged_siblings_spread_survive_a_killed_endpoint_and_publish_as_ais_run() {
    let _shared = ALONE.read().await;
    let Some(bin) = server_for_tests("restate_spread::staged_kill") else {
        return;
    };
    let k = kill_mid_spawn(
        &bin,
        "tests/fixtures/restate/staged_fan.agir",
        "staged",
        "staged_fan_siblings",
        |shared, i| {
            let stage = ais::rt::stage_dir(shared, "fan", i);
            assert!(
                stage
                    .join(format!("staged/{}.txt", KILL_ITEMS[i].replace(' ', "_")))
                    .is_file(),
                "sibling {i} staged its file before the kill"
            );
            std::fs::remove_dir_all(stage).unwrap();
        },
    )
    .await;
    let files = published(&k.shared);
    assert_eq!(files.len(), KILL_ITEMS.len(), "{files:?}");
    assert_eq!(files, published(&k.local_dir));
    assert!(
        files.iter().any(
            |(p, text)| p.contains(&KILL_ITEMS[k.lost[0]].replace(' ', "_"))
                && text == &format!("staged by {}\n", KILL_ITEMS[k.lost[0]])
        ),
        "{files:?}"
    );
    assert_eq!(left_staged(&k.shared), Vec::<PathBuf>::new());
    assert_eq!(left_staged(&k.local_dir), Vec::<PathBuf>::new());
    let run_id = k.remote["run"].as_str().unwrap();
    let (on_survivor, _) = k.survivor.siblings_of(run_id);
    assert!(
        k.lost.iter().all(|i| on_survivor.contains(i)),
        "the survivor ran the lost siblings {:?}: {on_survivor:?}",
        k.lost
    );
    eprintln!(
        "staged: killed the endpoint running slow siblings {:?}; the survivor ran {on_survivor:?}; published {files:?}",
        k.lost
    );
}
