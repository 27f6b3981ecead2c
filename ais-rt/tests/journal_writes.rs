//! When the SQLite journal writes: watched from inside the tools, through a second connection
//! to the database — as a process resuming after a crash at that moment would see it. A
//! `once` call's intent is durable before the call starts; a read leaves no intent; the result
//! of one call is durable before the next call starts; a step's results land with its commit.

use crate::common;

use ais_core::Value;
use ais_rt::journal::sqlite::{Durability, SqliteStore};
use ais_rt::{Inputs, Status};
use common::{Bench, block_on, program, tool};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// `both` runs a read (`look`) then an effect (`send`); `after` reads once more.
const PIPE: &str = r#"walker:
  name: Pipe
  carries:
    task: {type: str, role: input}
    sent: {type: str, produced_by: both}
    seen: {type: str, produced_by: after}
tools:
  look: {sig: "(task) -> str", surface: SENSE, serves: [both]}
  send: {sig: "(task) -> str", surface: ACT, serves: [both]}
  again: {sig: "(sent) -> str", surface: SENSE, serves: [after]}
nodes:
  - {id: both, type: ACT, owner: code, reads: [task], writes: [sent]}
  - {id: after, type: SENSE, owner: code, reads: [sent], writes: [seen]}
  - {id: done, type: TERMINAL, reads: [seen]}
edges:
  - {from: both, to: after}
  - {from: after, to: done}
"#;

/// What another connection sees of `name`'s effects, wherever their results live (an
/// `effects` row, or the row of the step that ran them): (count, how many have a result).
fn rows(db: &Path, name: &str) -> (i64, i64) {
    let store = SqliteStore::open(db, Durability::Normal).unwrap();
    let effects = store.effects("w1").unwrap();
    let of: Vec<_> = effects.iter().filter(|e| e.effect.name == name).collect();
    let done = of.iter().filter(|e| e.result.is_some()).count();
    (of.len() as i64, done as i64)
}

fn steps(db: &Path) -> i64 {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row("SELECT count(*) FROM steps", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn an_intent_precedes_its_effect_and_a_result_precedes_the_next_effect() {
    let dir = tempfile::tempdir().unwrap();
    let db: PathBuf = dir.path().join("runs.db");
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let watch = |name: &'static str, of: &'static [&'static str]| {
        let (db, seen) = (db.clone(), seen.clone());
        tool(move |_, _| {
            let mut notes = seen.lock().unwrap();
            for other in of {
                let (n, done) = rows(&db, other);
                notes.push(format!("{name}: {other} {n}/{done}"));
            }
            notes.push(format!("{name}: {} steps", steps(&db)));
            Ok(Value::from(name))
        })
    };
    let bench = Bench::new()
        .with("look", watch("look", &["look"]))
        .with("send", watch("send", &["look", "send"]))
        .with("again", watch("again", &["send", "again"]));
    let doc = program(PIPE);
    let rt = bench.runtime();
    let prep = rt.prepare(&doc.program, Some(&doc.source_map));
    let store = SqliteStore::open(&db, Durability::Normal).unwrap();
    let start = rt.run_start("w1", &prep, &Inputs::task("go"), serde_json::Value::Null);
    let journal = Arc::new(store.begin(&start).unwrap());
    let out = block_on(rt.run_journaled(&prep, Inputs::task("go"), journal));
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(
        *seen.lock().unwrap(),
        [
            // A read runs with no intent written.
            "look: look 0/0",
            "look: 0 steps",
            // The read's result was written before the effect started, with its intent.
            "send: look 1/1",
            "send: send 1/0",
            "send: 0 steps",
            // The step committed with the effect's result in the same transaction.
            "again: send 1/1",
            "again: again 0/0",
            "again: 1 steps",
        ]
    );
    // Every result is in the journal once the run ended.
    for name in ["look", "send", "again"] {
        assert_eq!(rows(&db, name), (1, 1), "{name}");
    }
}
