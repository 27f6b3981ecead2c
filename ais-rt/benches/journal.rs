//! The cost of journaling a step: the 10,000-step LOOP of the `machine` bench run with no
//! journal, the in-memory journal, and the SQLite journal (`synchronous=NORMAL`, the default,
//! and `FULL`). Each step calls a native `SENSE` tool — an effect: a read, whose result the
//! journal records but which needs no intent — so with SQLite a step is one transaction: its
//! delta and its call's result (a `once` effect adds its intent's transaction). This is the
//! whole per-step cost of an effectful step.
//!
//! The `pure_*` cases run a 10,000-step loop of two CODE bodies and a code-decided ROUTE
//! instead: every step is pure (a deterministic function of journaled values, §4.3), the cost of a pure
//! step. Also prints the size of the SQLite journal of one 10,000-step run of each (and the
//! longest its WAL grew), and the CPU time of a step with no journal and with the SQLite one
//! (`NORMAL`) measured on this thread (the runs are on a current-thread runtime, SQLite
//! included), which a loaded machine inflates far less than the wall time — and the whole
//! process's, which adds the journal's checkpoint thread.
//!
//! `raw_sqlite_10000_commits_of_a_step_row` is the floor beside them, measured in the same run:
//! SQLite alone (rusqlite, the journal's pragmas, cached statements) committing 10,000
//! transactions of one step row each, a row taken from a journaled run — what a commit per
//! step costs on this machine before the journal adds anything. It checkpoints as SQLite does
//! by default, in the committing thread; the journal checkpoints on a thread of its own.
//!
//! `cargo bench -p ais-rt --bench journal`

use ais_core::Value;
use ais_rt::journal::MemoryJournal;
use ais_rt::journal::sqlite::{Durability, SqliteStore};
use ais_rt::journal::{Journal, new_run_id};
use ais_rt::{Inputs, Prepared, Runtime, Status};
use ais_rt::{Tool, ToolArgs, ToolContext, ToolFuture, ToolRegistry};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::sync::Arc;
use std::time::Duration;

/// `(n) -> int`: n + 1.
struct Inc;
impl Tool for Inc {
    fn call<'a>(&'a self, args: ToolArgs, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        let n = match args.params.get_index(0).map(|(_, v)| v) {
            Some(Value::Int(i)) => *i,
            _ => 0,
        };
        Box::pin(std::future::ready(Ok(Value::Int(n + 1))))
    }
}

/// `(n) -> bool`: n reached the target.
struct Reached(i64);
impl Tool for Reached {
    fn call<'a>(&'a self, args: ToolArgs, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        let done =
            matches!(args.params.get_index(0).map(|(_, v)| v), Some(Value::Int(i)) if *i >= self.0);
        Box::pin(std::future::ready(Ok(Value::Bool(done))))
    }
}

const ITER: i64 = 5_000;

/// The loop with tools (`pure` false: each step an effect) or CODE bodies (each step pure).
fn program(pure: bool) -> ais_core::agir::Document {
    if pure {
        // bump, check, gate: three pure steps a round (a LOOP's work is a tool or a slot).
        let text = format!(
            r#"---
name: bench_pure
description: A benchmark program of pure steps.
---
walker:
  name: Loop
  carries:
    task: {{type: str, role: input}}
    n: {{type: int, produced_by: bump}}
    done_yet: {{type: bool, produced_by: check}}
nodes:
  - {{id: bump, type: CODE, owner: code, reads: [n], writes: [n], body: "n + 1"}}
  - {{id: check, type: CODE, owner: code, reads: [n], writes: [done_yet], body: "n >= {rounds}"}}
  - {{id: gate, type: ROUTE, owner: code, reads: [done_yet]}}
  - {{id: done, type: TERMINAL, reads: [n]}}
edges:
  - {{from: bump, to: check}}
  - {{from: check, to: gate}}
  - {{from: gate, to: done, guard: "done_yet == true"}}
  - {{from: gate, to: bump, guard: otherwise}}
"#,
            rounds = (2 * ITER) / 3 + 1
        );
        return ais_core::agir::read(&text).expect("the pure bench program reads");
    }
    let text = format!(
        r#"---
name: bench
description: A benchmark program.
---
walker:
  name: Loop
  carries:
    task: {{type: str, role: input}}
    n: {{type: int, produced_by: work}}
    done_yet: {{type: bool, produced_by: check}}
    rounds: {{type: int, produced_by: work}}
tools:
  inc: {{sig: "(n) -> int", surface: SENSE, serves: [work]}}
  reached: {{sig: "(n) -> bool", surface: SENSE, serves: [check]}}
nodes:
  - {{id: work, type: LOOP, owner: code, reads: [n], writes: [n], verdict: done_yet, cap: {cap}, counter: rounds}}
  - {{id: check, type: SENSE, owner: code, reads: [n], writes: [done_yet]}}
  - {{id: done, type: TERMINAL, reads: [n]}}
edges:
  - {{from: work, to: check}}
  - {{from: check, to: work}}
  - {{from: work, to: done}}
"#,
        cap = ITER + 1
    );
    ais_core::agir::read(&text).expect("the bench program reads")
}

struct Setup {
    rt: Runtime,
    prep: Arc<Prepared>,
    trt: tokio::runtime::Runtime,
    dir: tempfile::TempDir,
}

fn setup(pure: bool) -> Setup {
    let d = program(pure);
    let mut tools = ToolRegistry::new();
    tools.register("inc", Arc::new(Inc));
    tools.register("reached", Arc::new(Reached(ITER)));
    let dir = tempfile::tempdir().expect("a temp dir");
    let rt = Runtime::builder()
        .tools(tools)
        .out_dir(dir.path().into())
        .max_steps(20_000)
        .build();
    let prep = rt.prepare(&d.program, Some(&d.source_map));
    let trt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");
    Setup { rt, prep, trt, dir }
}

impl Setup {
    async fn sqlite(&self, store: &SqliteStore) -> ais_rt::RunOutcome {
        let inputs = Inputs::task("go");
        let start = self
            .rt
            .run_start(new_run_id(), &self.prep, &inputs, serde_json::Value::Null);
        let journal: Arc<dyn Journal> = Arc::new(store.begin(&start).expect("begin"));
        self.rt.run_journaled(&self.prep, inputs, journal).await
    }
}

fn journal_loop(c: &mut Criterion) {
    for (pure, prefix) in [(false, ""), (true, "pure_")] {
        bench_loop(c, pure, prefix);
    }
}

fn bench_loop(c: &mut Criterion, pure: bool, prefix: &str) {
    let s = setup(pure);
    let steps = s
        .trt
        .block_on(s.rt.run_prepared(&s.prep, Inputs::task("go")))
        .steps;
    assert!(steps >= 10_000, "{steps} steps");

    // The size of one run's journal.
    let size_db = s.dir.path().join("size.db");
    let store = SqliteStore::open(&size_db, Durability::Normal).expect("open");
    let out = s.trt.block_on(s.sqlite(&store));
    assert_eq!((out.status, out.steps), (Status::Ok, steps), "{out:?}");
    // The WAL's length while the journal is open (its file keeps its longest length): bounded
    // by the checkpoints, which start it over.
    let wal = std::fs::metadata(format!("{}-wal", size_db.display())).map_or(0, |m| m.len());
    drop(store);
    let size: u64 = ["", "-wal"]
        .iter()
        .filter_map(|ext| std::fs::metadata(format!("{}{ext}", size_db.display())).ok())
        .map(|m| m.len())
        .sum();
    println!(
        "journal of one {steps}-step {prefix}run: {:.2} MB ({} bytes per step; its WAL at most {:.2} MB)",
        size as f64 / 1e6,
        size / steps,
        wal as f64 / 1e6
    );

    // CPU time per step, this thread's and the whole process's (the journal's checkpoints run
    // on a thread of their own): five runs of each journal.
    let cpu = |run: &dyn Fn()| {
        let (t0, p0) = (
            cpu_time(libc::CLOCK_THREAD_CPUTIME_ID),
            cpu_time(libc::CLOCK_PROCESS_CPUTIME_ID),
        );
        for _ in 0..5 {
            run();
        }
        let per_step = |d: Duration| d.as_secs_f64() * 1e6 / (5 * steps) as f64;
        (
            per_step(cpu_time(libc::CLOCK_THREAD_CPUTIME_ID) - t0),
            per_step(cpu_time(libc::CLOCK_PROCESS_CPUTIME_ID) - p0),
        )
    };
    let (none, _) = cpu(&|| {
        s.trt
            .block_on(s.rt.run_prepared(&s.prep, Inputs::task("go")));
    });
    // (`FULL` waits on the disk, which this does not count.)
    let store = SqliteStore::open(&s.dir.path().join("cpu.db"), Durability::Normal).expect("open");
    let (normal, process) = cpu(&|| {
        s.trt.block_on(s.sqlite(&store));
    });
    println!(
        "CPU per {prefix}step (this thread): none {none:.2} µs, sqlite normal {normal:.2} µs; the process's with sqlite normal {process:.2} µs (load {})",
        load()
    );

    let mut g = c.benchmark_group("journal");
    g.throughput(Throughput::Elements(steps));
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(8));
    g.bench_function(format!("{prefix}loop_10000_steps_none"), |b| {
        b.to_async(&s.trt)
            .iter(|| s.rt.run_prepared(&s.prep, Inputs::task("go")))
    });
    g.bench_function(format!("{prefix}loop_10000_steps_memory"), |b| {
        b.to_async(&s.trt).iter(|| {
            let j: Arc<dyn Journal> = Arc::new(MemoryJournal::new("bench"));
            s.rt.run_journaled(&s.prep, Inputs::task("go"), j)
        })
    });
    for (name, durability) in [("normal", Durability::Normal), ("full", Durability::Full)] {
        let db = s.dir.path().join(format!("{name}.db"));
        let store = SqliteStore::open(&db, durability).expect("open");
        g.bench_function(format!("{prefix}loop_10000_steps_sqlite_{name}"), |b| {
            b.to_async(&s.trt).iter(|| s.sqlite(&store))
        });
    }
    if !pure {
        // The floor on this machine: SQLite alone committing one such step row per transaction.
        let (conn, row) = floor_db(&s.dir.path().join("floor.db"), &size_db);
        let mut run = 0u64;
        g.bench_function("raw_sqlite_10000_commits_of_a_step_row", |b| {
            b.iter(|| {
                run += 1;
                floor_commits(&conn, run, &row, steps)
            })
        });
    }
    g.finish();
}

/// A database set up as a journal is (page size, WAL, `synchronous=NORMAL`, checkpoint length)
/// with one table shaped like its `steps` (integer key), and a step row (delta, effects) taken
/// from the middle of a journaled run.
fn floor_db(
    path: &std::path::Path,
    journal: &std::path::Path,
) -> (rusqlite::Connection, (String, String)) {
    let row = rusqlite::Connection::open(journal)
        .expect("open the journal")
        .query_row(
            "SELECT delta, COALESCE(effects, '') FROM steps ORDER BY key LIMIT 1 OFFSET 5000",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("a step row");
    let conn = rusqlite::Connection::open(path).expect("open");
    conn.execute_batch(
        "PRAGMA page_size=1024; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=4096;
         CREATE TABLE steps (key INTEGER PRIMARY KEY, run TEXT NOT NULL, seq INTEGER NOT NULL, step INTEGER NOT NULL,
           instruction TEXT NOT NULL, delta TEXT NOT NULL, effects TEXT);",
    )
    .expect("set up");
    (conn, row)
}

/// `n` transactions, each inserting one step row of run `run` (cached statements).
fn floor_commits(conn: &rusqlite::Connection, run: u64, row: &(String, String), n: u64) {
    let id = format!("6b1016aa-{run:06x}");
    for seq in 1..=n {
        conn.prepare_cached("BEGIN")
            .expect("begin")
            .execute([])
            .expect("begin");
        conn.prepare_cached("INSERT INTO steps VALUES (?1, ?2, ?3, ?4, 'sense', ?5, ?6)")
            .expect("insert")
            .execute(rusqlite::params![
                ((run as i64) << 32) | seq as i64,
                id,
                seq,
                seq,
                row.0,
                row.1
            ])
            .expect("insert");
        conn.prepare_cached("COMMIT")
            .expect("commit")
            .execute([])
            .expect("commit");
    }
}

/// The CPU time so far of `clock`: this thread's (`CLOCK_THREAD_CPUTIME_ID`) or the
/// process's (`CLOCK_PROCESS_CPUTIME_ID`).
fn cpu_time(clock: libc::clockid_t) -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(clock, &mut t) };
    assert_eq!(rc, 0, "clock_gettime({clock})");
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// The one-minute load average, as `/proc/loadavg` says.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

criterion_group!(benches, journal_loop);
criterion_main!(benches);
