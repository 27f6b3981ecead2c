//! When the SQLite journal's WAL is copied into its database: by a thread of its own while a
//! run commits, which keeps the WAL short (it starts over once copied), and for the last time
//! when the journal closes, which leaves no WAL behind.

use ais_rt::journal::sqlite::{Durability, SqliteStore};
use ais_rt::journal::{Journal, RunStart, StepCommit};

fn len(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

#[test]
fn the_wal_is_copied_into_the_database_while_a_run_commits_and_stays_short() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let wal = dir.path().join("runs.db-wal");
    let store = SqliteStore::open(&db, Durability::Normal).unwrap();
    let start = RunStart {
        id: "c1".into(),
        program: "p".into(),
        digest: "d".into(),
        source: String::new(),
        task: "t".into(),
        inputs: Vec::new(),
        meta: serde_json::Value::Null,
    };
    let journal = store.begin(&start).unwrap();
    let steps = 30_000u64;
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        for step in 1..=steps {
            let commit = StepCommit {
                step,
                instruction: "work".into(),
                cursor: 0,
                written: vec![("n".into(), step.into())],
                ..StepCommit::default()
            };
            journal.commit(&commit).await.unwrap();
        }
    });
    // Each commit writes at least one 1 KiB page to the WAL (30 MB in all): a WAL that never
    // started over would be that long. Started over once copied, it stays near 4 MiB; it may
    // never pass 16 MiB of pages (past that the writer checkpoints itself).
    let frame = 1024 + 24;
    assert!(len(&wal) < 16_400 * frame, "the WAL is {} bytes", len(&wal));
    // The database file only grows by checkpoints: the steps were copied into it while the
    // run committed.
    assert!(len(&db) > 1_000_000, "the database is {} bytes", len(&db));
    assert_eq!(store.steps("c1").unwrap().len() as u64, steps);
    // The last connection to close — the checkpointer's is stopped with the store — copies
    // the rest and removes the WAL.
    drop(journal);
    drop(store);
    assert!(!wal.exists(), "a WAL of {} bytes was left", len(&wal));
    let again = SqliteStore::open(&db, Durability::Normal).unwrap();
    assert_eq!(again.steps("c1").unwrap().len() as u64, steps);
}
