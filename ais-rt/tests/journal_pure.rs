//! Pure steps in the SQLite journal (contract 5 of `ais_rt::journal`): a CODE step's commit
//! is held and written with the next transaction that happens anyway — never later than the
//! next `once` effect's intent —, and a crash that loses held steps costs nothing but
//! computing them again: no effect runs twice, the resumed run ends as an uninterrupted one.

use crate::common;

use ais_core::Value;
use ais_rt::journal::sqlite::{Durability, SqliteStore};
use ais_rt::journal::{InFlight, Journal};
use ais_rt::{Inputs, Status};
use common::{Bench, FnTool, arg, block_on, program, tool};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// An effect, two CODE steps, a read, a CODE step, an effect.
const PURE: &str = r#"walker:
  name: Pure
  carries:
    task: {type: str, role: input}
    sent: {type: str, produced_by: send}
    a: {type: str, produced_by: c1}
    b: {type: str, produced_by: c2}
    seen: {type: str, produced_by: peek}
    c: {type: str, produced_by: c3}
    kept: {type: str, produced_by: keep}
tools:
  send: {sig: "(task) -> str", surface: ACT, serves: [send]}
  peek: {sig: "(b) -> str", surface: SENSE, serves: [peek]}
  keep: {sig: "(c) -> str", surface: ACT, serves: [keep]}
nodes:
  - {id: send, type: ACT, owner: code, reads: [task], writes: [sent]}
  - {id: c1, type: CODE, owner: code, reads: [sent], writes: [a], body: "sent + '1'"}
  - {id: c2, type: CODE, owner: code, reads: [a], writes: [b], body: "a + '2'"}
  - {id: peek, type: SENSE, owner: code, reads: [b], writes: [seen]}
  - {id: c3, type: CODE, owner: code, reads: [seen], writes: [c], body: "seen + '3'"}
  - {id: keep, type: ACT, owner: code, reads: [c], writes: [kept]}
  - {id: done, type: TERMINAL, reads: [kept]}
edges:
  - {from: send, to: c1}
  - {from: c1, to: c2}
  - {from: c2, to: peek}
  - {from: peek, to: c3}
  - {from: c3, to: keep}
  - {from: keep, to: done}
"#;

/// The instructions of the committed steps another connection sees, in order.
fn committed(db: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut s = conn
        .prepare("SELECT instruction FROM steps ORDER BY seq")
        .unwrap();
    s.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

struct Tools {
    send: Arc<FnTool>,
    peek: Arc<FnTool>,
    keep: Arc<FnTool>,
}

fn bench(db: &Path, seen: &Arc<Mutex<Vec<String>>>, crash: &Arc<AtomicBool>) -> (Bench, Tools) {
    let watch = |name: &'static str| {
        let (db, seen) = (db.to_owned(), seen.clone());
        move || {
            let steps = committed(&db);
            seen.lock()
                .unwrap()
                .push(format!("{name}: {}", steps.join(" ")));
        }
    };
    let send = {
        let w = watch("send");
        tool(move |_, _| {
            w();
            Ok(Value::from("s"))
        })
    };
    let peek = {
        let (w, crash) = (watch("peek"), crash.clone());
        tool(move |args, _| {
            w();
            // The process dies while the read is in flight.
            assert!(!crash.swap(false, Ordering::SeqCst), "killed in `peek`");
            Ok(Value::from(format!("{}p", arg(args, "b"))))
        })
    };
    let keep = {
        let w = watch("keep");
        tool(move |args, _| {
            w();
            Ok(Value::from(arg(args, "c")))
        })
    };
    let b = Bench::new()
        .with("send", send.clone())
        .with("peek", peek.clone())
        .with("keep", keep.clone());
    (b, Tools { send, peek, keep })
}

#[test]
fn a_pure_step_rides_in_the_next_transaction_and_never_past_an_intent() {
    let dir = tempfile::tempdir().unwrap();
    let db: PathBuf = dir.path().join("runs.db");
    let seen = Arc::default();
    let (bench, _) = bench(&db, &seen, &Arc::new(AtomicBool::new(false)));
    let doc = program(PURE);
    let rt = bench.runtime();
    let prep = rt.prepare(&doc.program, Some(&doc.source_map));
    let store = SqliteStore::open(&db, Durability::Normal).unwrap();
    let start = rt.run_start("p1", &prep, &Inputs::task("go"), serde_json::Value::Null);
    let journal = Arc::new(store.begin(&start).unwrap());
    let out = block_on(rt.run_journaled(&prep, Inputs::task("go"), journal));
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["kept"], "s12p3");
    assert_eq!(out.steps, 7);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "send: ",
            // `c1` and `c2` are held: a read's start writes nothing.
            "peek: send",
            // They went with `peek`'s commit; `c3` went with `keep`'s intent.
            "keep: send c1 c2 peek c3",
        ]
    );
    assert_eq!(
        committed(&db),
        ["send", "c1", "c2", "peek", "c3", "keep"],
        "every step is in the journal once the run ended"
    );
}

#[test]
fn a_crash_that_loses_held_pure_steps_reruns_only_them() {
    let dir = tempfile::tempdir().unwrap();
    let db: PathBuf = dir.path().join("runs.db");
    let seen = Arc::default();
    let crash = Arc::new(AtomicBool::new(true));
    let (bench, tools) = bench(&db, &seen, &crash);
    let doc = program(PURE);
    let rt = bench.runtime();
    let prep = rt.prepare(&doc.program, Some(&doc.source_map));
    let store = SqliteStore::open(&db, Durability::Normal).unwrap();
    let start = rt.run_start("p2", &prep, &Inputs::task("go"), serde_json::Value::Null);
    let journal: Arc<dyn Journal> = Arc::new(store.begin(&start).unwrap());
    // A kill writes nothing more: this handle never drops, so nothing held is flushed.
    std::mem::forget(journal.clone());
    let died = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        block_on(rt.run_journaled(&prep, Inputs::task("go"), journal))
    }));
    assert!(died.is_err(), "the run died in `peek`");
    assert_eq!(committed(&db), ["send"], "the held pure steps were lost");

    // A new process resumes: the pure steps are computed again, no effect reruns.
    let store = SqliteStore::open(&db, Durability::Normal).unwrap();
    let (_, start, journal) = store.resume("p2", InFlight::Stop).unwrap();
    let out = block_on(rt.resume_journaled(&prep, Arc::new(journal), &start, None));
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(out.report["kept"], "s12p3");
    assert_eq!(
        out.steps, 7,
        "the uninterrupted run's count: six steps and the TERMINAL"
    );
    let calls = |t: &FnTool| t.calls.load(Ordering::SeqCst);
    assert_eq!(
        (calls(&tools.send), calls(&tools.peek), calls(&tools.keep)),
        (1, 2, 1),
        "the effect before the crash ran once; the read in flight ran again"
    );
    assert_eq!(
        committed(&db),
        ["send", "c1", "c2", "peek", "c3", "keep"],
        "each step committed once, in order"
    );
}

/// The WAL is checkpointed as the run goes — by the journal's checkpoint thread, which copies
/// it into the database so that it starts over — and stays bounded: 6,000 step commits, a
/// 1 KiB frame each at least (three when one starts a new leaf page), never grow it past
/// about 4 MiB (the checkpoint length), where unchecked they would make over 7 MB. The last
/// connection to close copies the rest and leaves no WAL.
#[test]
fn the_wal_is_checkpointed_as_a_run_goes_and_stays_bounded() {
    use ais_rt::journal::{RunStart, StepCommit};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let store = SqliteStore::open(&db, Durability::Normal).unwrap();
    let start = RunStart {
        id: "w1".into(),
        program: "P".into(),
        digest: "d".into(),
        source: String::new(),
        task: "t".into(),
        inputs: Vec::new(),
        meta: serde_json::Value::Null,
    };
    let journal = store.begin(&start).unwrap();
    let wal = std::path::PathBuf::from(format!("{}-wal", db.display()));
    let mut most = 0;
    for step in 1..=6000u64 {
        let commit = StepCommit {
            step,
            instruction: "work".into(),
            cursor: 0,
            written: vec![("n".into(), serde_json::json!(step))],
            ..StepCommit::default()
        };
        block_on(journal.commit(&commit)).unwrap();
        most = most.max(std::fs::metadata(&wal).map_or(0, |m| m.len()));
    }
    assert_eq!(store.steps("w1").unwrap().len(), 6000);
    assert!(most < 6 * 1024 * 1024, "the WAL grew to {most} bytes");
    // The database file only grows by checkpoints: steps were copied into it while the run
    // committed.
    let len = |p: &std::path::Path| std::fs::metadata(p).map_or(0, |m| m.len());
    assert!(len(&db) > 100_000, "the database is {} bytes", len(&db));
    // The checkpointer's connection is stopped with the store; the last to close removes the
    // WAL.
    drop(journal);
    drop(store);
    assert!(!wal.exists(), "a WAL of {} bytes was left", len(&wal));
    let again = SqliteStore::open(&db, Durability::Normal).unwrap();
    assert_eq!(again.steps("w1").unwrap().len(), 6000);
}
