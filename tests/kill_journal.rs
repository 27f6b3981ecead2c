//! The kill test: a program of 22 steps — a slot, a SPAWN of 8 worker slots, a LOOP whose
//! Python tool appends a line per note to `lines.txt`, a closing slot and a write-out — is
//! killed with SIGKILL at random moments and resumed (`ais resume RUN_ID`) after each kill until
//! it finishes. Its artifacts must be byte-identical to an uninterrupted run's, no line may
//! appear twice, and every slot's exchange must be journaled exactly once.
//!
//! An append in flight at a kill (intent journaled, no result) stops the resumed run with exit 4
//! (`interrupted`); the test then acts as an operator would: it looks at `lines.txt`, and
//! continues with `--mark-done` when the line is there and `--retry` when it is not. A kill
//! that lands after the run's end was committed, while the process exits, leaves a finished
//! run (`ais resume` says so and exits 2): the test takes it as finished, as an operator
//! reading `ais runs` would, and checks its artifacts as any other's.
//!
//! The model is a real HTTP server on loopback speaking OpenAI's chat completions (`openai:`
//! with `OPENAI_BASE_URL`), answering each slot after a short wait so that kills land inside
//! slots too, and counting the requests it is sent: the total, over every process of every
//! round, must be the uninterrupted runs' plus at most one retry per slot the journal had in
//! flight at a kill.
//!
//! `AIS_KILLS=100 cargo test --test kill kill_journal -- --nocapture` runs the full hundred;
//! `cargo test` runs 20.

use crate::providers_support;

use providers_support::{Answer, Proto};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long the model takes to answer each slot.
const ANSWER_WAIT: Duration = Duration::from_millis(60);

/// The model: the provider tests' OpenAI-compatible server on 127.0.0.1, answering from the
/// fixture's `responses.json` (by the instruction and sibling each request names), after
/// [`ANSWER_WAIT`].
struct ModelServer {
    server: providers_support::OwnServer,
    /// The requests taken from `server` so far.
    seen: AtomicUsize,
}

impl ModelServer {
    fn start() -> ModelServer {
        let text = std::fs::read_to_string(fixture().join("responses.json")).unwrap();
        let script: serde_json::Value = serde_json::from_str(&text).unwrap();
        let server = providers_support::serve_blocking(move |request| {
            let answer = Proto::OpenAi.answer(answer(&script, request));
            Answer::Slow(ANSWER_WAIT, Box::new(answer))
        });
        ModelServer {
            server,
            seen: AtomicUsize::new(0),
        }
    }

    /// The requests it was sent, in all.
    fn requests(&self) -> usize {
        let new = providers_support::received(&self.server.server).len();
        self.seen.fetch_add(new, Ordering::SeqCst) + new
    }
}

/// The scripted answer to a slot request: the instruction from the system prompt
/// (`# Instruction `plan``), the sibling from the user message, wrapped under `value` when the
/// request asks for that.
fn answer(script: &serde_json::Value, request: &serde_json::Value) -> serde_json::Value {
    let messages = request["messages"].as_array().unwrap();
    let system = messages[0]["content"].as_str().unwrap();
    let user = messages[1]["content"].as_str().unwrap();
    let instruction = system
        .split("# Instruction `")
        .nth(1)
        .and_then(|r| r.split('`').next())
        .unwrap();
    // The prompt counts siblings from 1; the script's keys index them from 0.
    let key = match providers_support::sibling_number(user) {
        Some(n) => format!("{instruction}[{}]", n - 1),
        None => instruction.to_owned(),
    };
    let value = script[&key][0].clone();
    assert!(!value.is_null(), "no answer for `{key}` in {user}");
    if user.contains("Put the result under the key \"value\"") {
        serde_json::json!({ "value": value })
    } else {
        value
    }
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kill")
}

fn ais(dir: &Path, args: &[&str], model: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ais"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("AIS_MODEL")
        .envs(Proto::OpenAi.env(model))
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(
            std::fs::File::create(dir.join("attempt.err"))
                .map_or_else(|_| Stdio::null(), Stdio::from),
        );
    cmd
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture().join("kill.agir"), dir.path().join("kill.agir")).unwrap();
    dir
}

const RUN: [&str; 8] = [
    "run",
    "kill.agir",
    "--task",
    "go",
    "--model",
    "openai:kill-test",
    "--out",
    "out",
];

/// A small deterministic generator (xorshift), seeded per test run and printed.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// The journal's view of the run: its id and status, the appends and slots recorded.
struct Journal {
    run: Option<(String, String)>,
    /// The run's step count (every SPAWN sibling is a step).
    steps: i64,
    appends: usize,
    slot_exchanges: u64,
    slots: usize,
    slots_in_flight: usize,
}

fn journal(out: &Path) -> Journal {
    let db = out.join(".ais/runs.db");
    let mut j = Journal {
        run: None,
        steps: 0,
        appends: 0,
        slot_exchanges: 0,
        slots: 0,
        slots_in_flight: 0,
    };
    if !db.exists() {
        return j;
    }
    // Killed after SQLite made the file and before the schema's transaction committed, or
    // before the run's row was written: no run yet (opening the store makes the schema, as the
    // next `ais run` would).
    let store = ais::rt::journal::sqlite::SqliteStore::open(
        &db,
        ais::rt::journal::sqlite::Durability::Normal,
    )
    .unwrap();
    let Some(run) = store.runs().unwrap().into_iter().next() else {
        return j;
    };
    // The run's steps as the store counts them (its row, or its last step row when that
    // counts more), and its effects, wherever their results live.
    j.steps = run.steps as i64;
    j.run = Some((run.id.clone(), run.status.to_string()));
    let id = run.id;
    let effects = store.effects(&id).unwrap();
    j.appends = effects
        .iter()
        .filter(|e| e.effect.name == "append_note" && e.result.is_some())
        .count();
    for e in effects
        .iter()
        .filter(|e| e.effect.kind == ais::rt::journal::EffectKind::Slot)
    {
        // Each exchange of a slot is an effect of its own.
        match &e.result {
            Some(_) => {
                j.slots += 1;
                j.slot_exchanges += 1;
            }
            None => j.slots_in_flight += 1,
        }
    }
    j
}

fn lines(out: &Path) -> Vec<String> {
    std::fs::read_to_string(out.join("lines.txt"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Runs (or resumes) once; with `kill_after`, SIGKILLs it then. Returns the exit code, `None`
/// when killed.
fn attempt(dir: &Path, args: &[&str], model: &str, kill_after: Option<Duration>) -> Option<i32> {
    let mut child = ais(dir, args, model).spawn().unwrap();
    if let Some(after) = kill_after {
        let until = Instant::now() + after;
        while Instant::now() < until {
            if let Some(status) = child.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        return None;
    }
    child.wait().unwrap().code()
}

fn resume_args(j: &Journal, policy: Option<&'static str>) -> Vec<String> {
    let (id, _) = j.run.clone().unwrap();
    let mut args = vec!["resume".to_owned(), id, "--out".into(), "out".into()];
    args.extend(policy.map(str::to_owned));
    args
}

#[derive(Default)]
struct Stats {
    killed: usize,
    attempts: usize,
    retried: usize,
    marked: usize,
    in_flight_slots: usize,
    /// Runs that had finished when a kill came (their end committed).
    finished_at_kill: usize,
}

/// Starts the run in `dir` and resumes it after each kill (while fewer than `kills` happened,
/// each attempt is killed at a random moment within `window`) until it finishes.
fn run_to_the_end(
    dir: &Path,
    model: &str,
    kills: usize,
    window: Duration,
    rng: &mut Rng,
    stats: &mut Stats,
) {
    let out = dir.join("out");
    let mut policy: Option<&'static str> = None;
    for attempt_no in 0.. {
        assert!(attempt_no < kills * 3 + 20, "the run never finished");
        let j = journal(&out);
        // Killed after its end was committed, before the process exited: the run finished
        // (the artifacts are checked all the same), and `ais resume` would say so and exit 2.
        if j.run.as_ref().is_some_and(|(_, status)| status == "ok") {
            stats.finished_at_kill += 1;
            return;
        }
        stats.attempts += 1;
        let args: Vec<String> = match &j.run {
            None => RUN.iter().map(|s| s.to_string()).collect(),
            Some(_) => resume_args(&j, policy.take()),
        };
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let kill = (stats.killed < kills)
            .then(|| Duration::from_millis(rng.below(window.as_millis() as u64 + 1)));
        match attempt(dir, &args, model, kill) {
            None => {
                stats.killed += 1;
                stats.in_flight_slots += journal(&out).slots_in_flight;
            }
            Some(0) => return,
            Some(4) => {
                // An append was in flight: its line is there (it ran) or it is not.
                if lines(&out).len() > journal(&out).appends {
                    policy = Some("--mark-done");
                    stats.marked += 1;
                } else {
                    policy = Some("--retry");
                    stats.retried += 1;
                }
            }
            Some(code) => panic!(
                "attempt {attempt_no} ({args:?}) exited {code}: {}",
                std::fs::read_to_string(dir.join("attempt.err")).unwrap_or_default()
            ),
        }
    }
}

#[test]
fn a_run_killed_at_random_moments_finishes_as_if_never_killed() {
    let kills: usize = std::env::var("AIS_KILLS")
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(20);
    let model = ModelServer::start();
    // The uninterrupted run.
    let clean = project();
    let started = Instant::now();
    assert_eq!(
        attempt(clean.path(), &RUN, &model.server.base, None),
        Some(0)
    );
    let clean_requests = model.requests();
    let span = started.elapsed();
    let clean_out = clean.path().join("out");
    let reference = journal(&clean_out);
    assert_eq!((reference.slots, reference.slot_exchanges), (10, 10));
    assert_eq!(
        clean_requests, 10,
        "the model answers each of the 10 slots once"
    );
    let artifacts = ["lines.txt", "summary_md.md"];
    let expected: Vec<Vec<u8>> = artifacts
        .iter()
        .map(|a| std::fs::read(clean_out.join(a)).unwrap())
        .collect();
    assert_eq!(lines(&clean_out).len(), 8);

    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    println!("kill test: {kills} kills, seed {seed}, uninterrupted run {span:?}");
    let mut rng = Rng(seed);
    let mut stats = Stats::default();
    let mut rounds = 0;
    while stats.killed < kills {
        rounds += 1;
        let dir = project();
        let out = dir.path().join("out");
        run_to_the_end(
            dir.path(),
            &model.server.base,
            kills,
            span / 3,
            &mut rng,
            &mut stats,
        );
        let got = lines(&out);
        let mut unique = got.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), got.len(), "a line appears twice: {got:?}");
        for (a, want) in artifacts.iter().zip(&expected) {
            let have = std::fs::read(out.join(a)).unwrap();
            assert_eq!(&have, want, "{a} differs from the uninterrupted run's");
        }
        let j = journal(&out);
        assert_eq!(j.run.as_ref().unwrap().1, "ok");
        // The siblings were counted once per attempt that ran them, from the last commit.
        assert_eq!(j.steps, reference.steps, "the step count differs");
        // Every slot journaled once, with the uninterrupted run's exchanges; the only extra
        // exchanges are the retries of slots in flight at a kill (counted).
        assert_eq!((j.slots, j.slot_exchanges), (10, reference.slot_exchanges));
        assert_eq!(j.slots_in_flight, 0);
    }
    // What the model was really sent, over every process of every round: the uninterrupted
    // runs' exchanges, plus at most one retry per slot in flight at a kill (a kill after the
    // intent and before the request sends none), and nothing else.
    let sent = model.requests() - clean_requests;
    let clean_total = rounds * clean_requests;
    println!(
        "kill test: {} kills over {rounds} runs, {} attempts, {} appends in flight retried, {} marked done, {} slots in flight at a kill, {} kills after the run's end was committed; the model was sent {sent} requests: the uninterrupted runs' {clean_total} + {}",
        stats.killed,
        stats.attempts,
        stats.retried,
        stats.marked,
        stats.in_flight_slots,
        stats.finished_at_kill,
        sent - clean_total.min(sent),
    );
    assert!(
        sent >= clean_total,
        "{sent} requests, fewer than {clean_total}"
    );
    assert!(
        sent <= clean_total + stats.in_flight_slots,
        "{sent} requests: more than the uninterrupted runs' {clean_total} and the {} slots in flight at a kill",
        stats.in_flight_slots
    );
}

/// The ledger test's model: the OpenAI-compatible test server on loopback. Its first exchange
/// of the slot asks for one `pay` call; an exchange that carries the call's result answers
/// with the slot's value — after `hang` while `hang` is set, so that the process can be killed
/// between the two exchanges. Every request is counted, with whether it carried the result.
struct LedgerModel {
    base: String,
    /// The requests so far: whether each carried the tool's result.
    asked: Arc<std::sync::Mutex<Vec<bool>>>,
    hang: Arc<std::sync::atomic::AtomicBool>,
    _server: providers_support::OwnServer,
}

impl LedgerModel {
    fn start() -> LedgerModel {
        let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
        let hang = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let (seen, hanging) = (asked.clone(), hang.clone());
        let server = providers_support::serve_blocking(move |request| {
            let messages = request["messages"].as_array().unwrap();
            let answered = messages.iter().any(|m| m["role"] == "tool");
            seen.lock().unwrap().push(answered);
            if !answered {
                return Proto::OpenAi
                    .tool_call("pay", serde_json::json!({"payee": "acme", "amount": 120}));
            }
            let value = Proto::OpenAi.answer(serde_json::json!({"value": "paid acme 120"}));
            if hanging.load(Ordering::SeqCst) {
                Answer::Slow(Duration::from_secs(60), Box::new(value))
            } else {
                value
            }
        });
        LedgerModel {
            base: server.base.clone(),
            asked,
            hang,
            _server: server,
        }
    }

    fn asked(&self) -> Vec<bool> {
        self.asked.lock().unwrap().clone()
    }
}

fn ledger_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture().join("ledger.agir"),
        dir.path().join("ledger.agir"),
    )
    .unwrap();
    dir
}

fn ledger(out: &Path) -> Vec<String> {
    std::fs::read_to_string(out.join("ledger.txt"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The ledger test: a GEN-RAW slot whose `autonomy.tools` names an ACT tool that appends a
/// payment line to a ledger. The process is SIGKILLed after the model asked for the payment
/// and the tool ran, while the model is thinking over its result (between the slot's two
/// exchanges); `ais resume` then continues the slot mid-conversation: the ledger keeps one
/// line, the status is `ok`, and the model is asked only the second exchange — never the
/// first again.
#[test]
fn a_slot_killed_between_exchanges_pays_once_and_asks_the_model_once_more() {
    let model = LedgerModel::start();
    let dir = ledger_project();
    let out = dir.path().join("out");
    let run = [
        "run",
        "ledger.agir",
        "--task",
        "invoice 7: acme, 120",
        "--model",
        "openai:ledger-test",
        "--out",
        "out",
    ];
    let mut child = ais(dir.path(), &run, &model.base).spawn().unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    while model.asked().len() < 2 {
        assert!(
            Instant::now() < until,
            "the model was never asked the second exchange"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before its second exchange"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        ledger(&out),
        ["acme 120"],
        "the tool ran once before the kill"
    );
    assert_eq!(model.asked(), [false, true]);

    model.hang.store(false, Ordering::SeqCst);
    let j = journal(&out);
    let resume = resume_args(&j, None);
    let resume: Vec<&str> = resume.iter().map(String::as_str).collect();
    let code = attempt(dir.path(), &resume, &model.base, None);
    assert_eq!(
        code,
        Some(0),
        "{}",
        std::fs::read_to_string(dir.path().join("attempt.err")).unwrap_or_default()
    );
    assert_eq!(ledger(&out), ["acme 120"], "the payment ran twice");
    assert_eq!(journal(&out).run.unwrap().1, "ok");
    // The resume asked one exchange, the second: it carried the tool's result.
    assert_eq!(model.asked(), [false, true, true]);
}

/// `ais` in `dir` with no model, its JSON report on stdout.
fn ais_json(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ais"));
    cmd.args(args)
        .args(["--format", "json"])
        .current_dir(dir)
        .env_remove("AIS_MODEL")
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Runs `args` to the end; its exit code and JSON report.
fn finish(dir: &Path, args: &[&str]) -> (Option<i32>, serde_json::Value) {
    let out = ais_json(dir, args).output().unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: no JSON report ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), report)
}

/// Starts `args`, waits until `ready` says so, and SIGKILLs the process.
fn kill_when(dir: &Path, args: &[&str], ready: impl Fn() -> bool) {
    let mut child = ais_json(dir, args).spawn().unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    while !ready() {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            panic!("the run ended ({status}) before the moment to kill it: {err}");
        }
        assert!(Instant::now() < until, "the moment to kill never came");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// What of a JSON report a resumed run must share with an uninterrupted one: all but the
/// run's id and journal path.
fn comparable(mut report: serde_json::Value) -> serde_json::Value {
    let map = report.as_object_mut().unwrap();
    map.remove("run");
    map.remove("journal");
    report
}

/// A project directory holding the kill fixture `name` and an empty output root `out`.
fn kill_project(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture().join(name), dir.path().join(name)).unwrap();
    std::fs::create_dir(dir.path().join("out")).unwrap();
    dir
}

/// The effects a run's journal holds: (name, whether it has a result), in key order (none
/// before the run's row is there).
fn effects_of(out: &Path) -> Vec<(String, bool)> {
    let db = out.join(".ais/runs.db");
    if !db.exists() {
        return Vec::new();
    }
    let store = ais::rt::journal::sqlite::SqliteStore::open(
        &db,
        ais::rt::journal::sqlite::Durability::Normal,
    )
    .unwrap();
    let Some(run) = store.runs().unwrap().into_iter().next() else {
        return Vec::new();
    };
    store
        .effects(&run.id)
        .unwrap()
        .into_iter()
        .map(|e| (e.effect.name, e.result.is_some()))
        .collect()
}

/// A produced program: an ACT saves the program a CODE step authored under `.ais/scripts/`
/// (an artifact effect) and runs it (it appends a line to `ran.txt`); the next step holds
/// until a release file appears. SIGKILLed while it holds, then resumed: the program was
/// saved and ran once (one line; the journal holds the save and the run once each, both
/// done), and the report equals an uninterrupted run's.
#[test]
fn a_produced_program_killed_after_it_ran_is_saved_and_run_once() {
    let clean = kill_project("script.agir");
    let out = clean.path().join("out");
    std::fs::write(out.join("release"), "").unwrap();
    let run = ["run", "script.agir", "--task", "go", "--out", "out"];
    let (code, uninterrupted) = finish(clean.path(), &run);
    assert_eq!(code, Some(0), "{uninterrupted}");
    assert_eq!(
        std::fs::read_to_string(out.join("ran.txt")).unwrap(),
        "ran\n"
    );

    let dir = kill_project("script.agir");
    let out = dir.path().join("out");
    kill_when(dir.path(), &run, || out.join("holding").exists());
    assert_eq!(
        std::fs::read_to_string(out.join("ran.txt")).unwrap(),
        "ran\n"
    );
    std::fs::write(out.join("release"), "").unwrap();
    let id = journal(&out).run.unwrap().0;
    let (code, resumed) = finish(dir.path(), &["resume", &id, "--out", "out"]);
    assert_eq!(code, Some(0), "{resumed}");
    assert_eq!(
        std::fs::read_to_string(out.join("ran.txt")).unwrap(),
        "ran\n",
        "the program ran twice"
    );
    let done = |name: &str| {
        effects_of(&out)
            .iter()
            .filter(|(n, done)| n == name && *done)
            .count()
    };
    assert_eq!(done("save_program"), 1, "{:?}", effects_of(&out));
    assert_eq!(done("run_command"), 1, "{:?}", effects_of(&out));
    assert_eq!(comparable(resumed), comparable(uninterrupted));
}

/// SPAWN staging: three `orchestrator_owned` siblings each stage `<item>.txt` (counting the
/// call in `calls.txt`); the last holds until a release file appears. SIGKILLed while it
/// holds — two siblings done, three files staged, nothing applied —, then resumed: no
/// sibling stages again (three calls), the staged files are applied once, after the
/// barrier (each file one line, the stage emptied), and the report equals an uninterrupted
/// run's.
#[test]
fn a_spawn_killed_before_its_barrier_applies_its_staged_files_once() {
    let applied = |out: &Path| {
        ["a", "b", "c"]
            .iter()
            .map(|i| std::fs::read_to_string(out.join(format!("{i}.txt"))).unwrap_or_default())
            .collect::<Vec<_>>()
    };
    let expected = ["note on a\n", "note on b\n", "note on c\n"];
    let clean = kill_project("staged.agir");
    let out = clean.path().join("out");
    std::fs::write(out.join("release"), "").unwrap();
    let dir_input = |out: &Path| format!("dir={}", out.display());
    let run = |input: &str| {
        [
            "run",
            "staged.agir",
            "--task",
            "a,b,c",
            "--out",
            "out",
            "--input",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([input.to_owned()])
        .collect::<Vec<_>>()
    };
    let args = run(&dir_input(&out));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, uninterrupted) = finish(clean.path(), &args);
    assert_eq!(code, Some(0), "{uninterrupted}");
    assert_eq!(applied(&out), expected);

    let dir = kill_project("staged.agir");
    let out = dir.path().join("out");
    let args = run(&dir_input(&out));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // Killed once the last sibling holds and the journal has every other effect's result.
    let done = |name: &str| {
        effects_of(&out)
            .iter()
            .filter(|(n, done)| n == name && *done)
            .count()
    };
    kill_when(dir.path(), &args, || {
        out.join("holding").exists() && done("stage_note") == 3 && done("wait_release") == 2
    });
    assert_eq!(
        applied(&out),
        ["", "", ""],
        "nothing is applied before the barrier"
    );
    std::fs::write(out.join("release"), "").unwrap();
    let id = journal(&out).run.unwrap().0;
    let (code, resumed) = finish(dir.path(), &["resume", &id, "--out", "out"]);
    assert_eq!(code, Some(0), "{resumed}");
    assert_eq!(applied(&out), expected);
    let mut calls: Vec<String> = std::fs::read_to_string(out.join("calls.txt"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    calls.sort();
    assert_eq!(calls, ["a", "b", "c"], "a sibling staged twice");
    assert!(
        std::fs::read_dir(out.join(".ais/stage/fan")).map_or(true, |mut d| d.next().is_none()),
        "the stage was applied and emptied"
    );
    assert_eq!(done("apply_staged"), 1, "{:?}", effects_of(&out));
    assert_eq!(comparable(resumed), comparable(uninterrupted));
}
