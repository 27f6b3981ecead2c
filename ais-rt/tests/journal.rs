//! The journal seam: every step committed, every effect journaled once; a run stopped at any
//! step boundary resumes without repeating what completed; an effect in flight at a crash is
//! retried only when safe; a malformed, foreign or contradicting journal is refused by name.

use crate::common;

use ais_core::Value;
use ais_rt::journal::MemoryJournal;
use ais_rt::journal::sqlite::{Durability, SqliteStore};
use ais_rt::journal::{InFlight, Journal, JournalError, Json};
use ais_rt::{FaultKind, Inputs, Status};
use common::{Bench, DiesAt, arg, block_on, program, tool};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Polishes a draft until it is long enough; `polish` appends (an effect that must not
/// repeat), `judge_it` is declared idempotent in the AG-IR.
const LOOP: &str = r#"walker:
  name: Polish
  carries:
    task: {type: str, role: input}
    draft: {type: str, produced_by: improve}
    good: {type: bool, produced_by: judge}
    rounds: {type: int, produced_by: improve}
tools:
  polish: {sig: "(draft) -> str", surface: ACT, serves: [improve]}
  judge_it: {sig: "(draft) -> bool", surface: SENSE, serves: [judge], idempotent: true}
nodes:
  - {id: improve, type: LOOP, owner: code, reads: [draft], writes: [draft], verdict: good, cap: 20, counter: rounds}
  - {id: judge, type: SENSE, owner: code, reads: [draft], writes: [good]}
  - {id: done, type: TERMINAL, reads: [draft, rounds]}
edges:
  - {from: improve, to: judge}
  - {from: judge, to: improve}
  - {from: improve, to: done}
"#;

struct Fixture {
    bench: Bench,
    polish: Arc<common::FnTool>,
    judge: Arc<common::FnTool>,
}

fn fixture() -> Fixture {
    let polish = tool(|a, _| Ok(Value::from(format!("{}+", arg(a, "draft")))));
    let judge = tool(|a, _| Ok(Value::Bool(arg(a, "draft").len() >= 5)));
    let bench = Bench::new()
        .with("polish", polish.clone())
        .with("judge_it", judge.clone());
    Fixture {
        bench,
        polish,
        judge,
    }
}

fn run_on(f: &Fixture, journal: Arc<dyn Journal>) -> ais_rt::RunOutcome {
    let doc = program(LOOP);
    let rt = f.bench.runtime();
    let prep = rt.prepare(&doc.program, Some(&doc.source_map));
    block_on(rt.run_journaled(&prep, Inputs::task("polish it"), journal))
}

fn resume_on(f: &Fixture, journal: Arc<dyn Journal>) -> ais_rt::RunOutcome {
    let doc = program(LOOP);
    let rt = f.bench.runtime();
    let prep = rt.prepare(&doc.program, Some(&doc.source_map));
    let start = rt.run_start(
        journal.run_id(),
        &prep,
        &Inputs::task("polish it"),
        Json::Null,
    );
    block_on(rt.resume_journaled(&prep, journal, &start, None))
}

#[test]
fn a_journaled_run_commits_each_step_and_reports_as_an_unjournaled_one() {
    let plain = fixture();
    let doc = program(LOOP);
    let expected = block_on(plain.bench.runtime().run(
        &doc.program,
        Some(&doc.source_map),
        Inputs::task("polish it"),
    ));
    assert_eq!(expected.status, Status::Ok, "{expected:?}");

    let f = fixture();
    let journal = Arc::new(MemoryJournal::new("r1"));
    let out = run_on(&f, journal.clone());
    assert_eq!(out.report, expected.report);
    assert_eq!(out.steps, expected.steps);
    let history = block_on(journal.history()).unwrap();
    // Every step but the TERMINAL's commits (the end records the TERMINAL).
    assert_eq!(history.commits.len() as u64, out.steps - 1);
    let first = &history.commits[0];
    assert_eq!(first.instruction, "improve");
    assert_eq!(first.cursor, 1, "the LOOP continues at `judge`");
    // A delta: the loop step wrote its draft and its counter, nothing else.
    let names: Vec<&str> = first.written.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["draft", "rounds"]);
    let effects = journal.effects();
    assert_eq!(
        effects.len(),
        f.polish.calls.load(Ordering::SeqCst) + f.judge.calls.load(Ordering::SeqCst)
    );
    assert!(effects.iter().all(|(_, r)| r.is_some()));
    assert_eq!(journal.ended().unwrap().status, ais_rt::Status::Ok);
}

#[test]
fn a_run_stopped_at_any_step_boundary_resumes_without_repeating_a_call() {
    let plain = fixture();
    let reference = run_on(&plain, Arc::new(MemoryJournal::new("ref")));
    let (polish_calls, judge_calls) = (
        plain.polish.calls.load(Ordering::SeqCst),
        plain.judge.calls.load(Ordering::SeqCst),
    );
    for n in 1..reference.steps as usize {
        let f = fixture();
        let inner = Arc::new(MemoryJournal::new(format!("r{n}")));
        let dying = Arc::new(DiesAt {
            inner: inner.clone(),
            n,
            commits: AtomicUsize::new(0),
        });
        let first = run_on(&f, dying);
        assert_eq!(first.status, Status::Fault, "killed at commit {n}");
        assert_eq!(first.fault.as_ref().unwrap().kind, FaultKind::Journal);
        let out = resume_on(&f, inner);
        assert_eq!(out.status, Status::Ok, "resumed after commit {n}: {out:?}");
        assert_eq!(out.report, reference.report, "after commit {n}");
        assert_eq!(out.steps, reference.steps);
        assert_eq!(
            (
                f.polish.calls.load(Ordering::SeqCst),
                f.judge.calls.load(Ordering::SeqCst)
            ),
            (polish_calls, judge_calls),
            "no call ran twice (killed at commit {n})"
        );
    }
}

#[test]
fn an_effect_in_flight_is_retried_only_when_it_is_idempotent() {
    // Killed at the commit of step 1 (`improve`, whose `polish` call is effectful), with the
    // call's result lost: its intent alone is in the journal.
    let f = fixture();
    let inner = Arc::new(MemoryJournal::new("r"));
    let dying = Arc::new(DiesAt {
        inner: inner.clone(),
        n: 1,
        commits: AtomicUsize::new(0),
    });
    run_on(&f, dying);
    inner.crash();
    let out = resume_on(&f, inner);
    assert_eq!(out.status, Status::Interrupted, "{out:?}");
    let fault = out.fault.unwrap();
    assert_eq!(fault.kind, FaultKind::EffectInFlight);
    assert_eq!(fault.instruction, "improve");
    for needle in [
        "`polish`",
        "ais resume r --retry",
        "ais resume r --mark-done",
    ] {
        assert!(
            fault.message.contains(needle),
            "{needle}: {}",
            fault.message
        );
    }
    assert_eq!(f.polish.calls.load(Ordering::SeqCst), 1, "not run again");

    // Killed at the commit of step 2 (`judge`, declared idempotent): simply retried.
    let g = fixture();
    let inner = Arc::new(MemoryJournal::new("s"));
    let dying = Arc::new(DiesAt {
        inner: inner.clone(),
        n: 2,
        commits: AtomicUsize::new(0),
    });
    run_on(&g, dying);
    inner.crash();
    let out = resume_on(&g, inner);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert_eq!(
        g.judge.calls.load(Ordering::SeqCst),
        5 + 1,
        "one retry of the judge"
    );
}

/// Counts the words of the task in a CODE step: a deterministic function of its operand
/// (§4.3), bound to a tool that is neither a read nor declared idempotent.
const CODE: &str = r#"walker:
  name: Count
  carries:
    task: {type: str, role: input}
    n: {type: int, produced_by: count}
tools:
  count_words: {sig: "(task) -> int", serves: [count]}
nodes:
  - {id: count, type: CODE, owner: code, reads: [task], writes: [n]}
  - {id: done, type: TERMINAL, reads: [n]}
edges:
  - {from: count, to: done}
"#;

#[test]
fn a_code_step_in_flight_runs_again_on_resume_without_asking() {
    for policy in [InFlight::Stop, InFlight::MarkDone] {
        let count = tool(|a, _| Ok(Value::Int(arg(a, "task").split_whitespace().count() as i64)));
        let bench = Bench::new().with("count_words", count.clone());
        let doc = program(CODE);
        let rt = bench.runtime();
        let prep = rt.prepare(&doc.program, Some(&doc.source_map));
        // Killed at the commit of the CODE step, its call's result lost: an intent alone.
        let inner = Arc::new(MemoryJournal::new("c").with_in_flight(policy));
        let dying = Arc::new(DiesAt {
            inner: inner.clone(),
            n: 1,
            commits: AtomicUsize::new(0),
        });
        block_on(rt.run_journaled(&prep, Inputs::task("one two three"), dying));
        inner.crash();
        let start = rt.run_start("c", &prep, &Inputs::task("one two three"), Json::Null);
        let out = block_on(rt.resume_journaled(&prep, inner, &start, None));
        // Neither stopped for a decision nor marked done with a null: run again.
        assert_eq!(out.status, Status::Ok, "{policy:?}: {out:?}");
        assert_eq!(out.report["n"], serde_json::json!(3), "{policy:?}");
        assert_eq!(count.calls.load(Ordering::SeqCst), 2, "{policy:?}");
    }
}

fn store(dir: &std::path::Path) -> SqliteStore {
    SqliteStore::open(&dir.join(".ais/runs.db"), Durability::Normal).unwrap()
}

fn sqlite_run(f: &Fixture, store: &SqliteStore, id: &str) -> ais_rt::RunOutcome {
    let doc = program(LOOP);
    let rt = f.bench.runtime();
    let prep = rt.prepare(&doc.program, Some(&doc.source_map));
    let start = rt.run_start(
        id,
        &prep,
        &Inputs::task("polish it"),
        serde_json::json!({"k": 1}),
    );
    let journal = Arc::new(store.begin(&start).unwrap());
    block_on(rt.run_journaled(&prep, Inputs::task("polish it"), journal))
}

#[test]
fn the_sqlite_journal_lists_runs_steps_and_effects_and_resumes_in_flight_by_choice() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    let out = sqlite_run(&f, &db, "a1");
    assert_eq!(out.status, Status::Ok, "{out:?}");
    let db = store(dir.path());
    let runs = db.runs().unwrap();
    assert_eq!(runs.len(), 1);
    let r = &runs[0];
    assert_eq!(
        (r.id.as_str(), r.status.as_str(), r.program.as_str()),
        ("a1", "ok", "Polish")
    );
    assert_eq!(r.lease, None, "a finished run holds no lease");
    assert_eq!(r.meta, serde_json::json!({"k": 1}));
    let steps = db.steps("a1").unwrap();
    assert_eq!(steps.len() as u64, out.steps - 1);
    assert_eq!(steps[0].commit.instruction, "improve");
    let effects = db.effects("a1").unwrap();
    assert_eq!(effects.len(), 10, "5 polish calls, 5 judgements");
    assert!(effects.iter().all(|e| e.result.is_some()));

    // The last `polish` loses its result, as when the process died during the call.
    let conn = rusqlite::Connection::open(db.path()).unwrap();
    let last: u64 = conn
        .query_row(
            "SELECT MAX(step) FROM effects WHERE name='polish'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    conn.execute("UPDATE effects SET result=NULL WHERE step=?1", [last])
        .unwrap();
    conn.execute("DELETE FROM steps WHERE step>=?1", [last])
        .unwrap();
    conn.execute(
        "UPDATE runs SET status='running', steps=?1 WHERE id='a1'",
        [last - 1],
    )
    .unwrap();
    let g = fixture();
    let resume = |policy: InFlight| {
        let doc = program(LOOP);
        let rt = g.bench.runtime();
        let prep = rt.prepare(&doc.program, Some(&doc.source_map));
        let (_, start, journal) = db.resume("a1", policy).unwrap();
        block_on(rt.resume_journaled(&prep, Arc::new(journal), &start, None))
    };
    let stopped = resume(InFlight::Stop);
    assert_eq!(stopped.status, Status::Interrupted, "{stopped:?}");
    assert_eq!(
        db.run("a1").unwrap().unwrap().status.as_str(),
        "interrupted"
    );
    assert_eq!(g.polish.calls.load(Ordering::SeqCst), 0);
    let retried = resume(InFlight::Retry);
    assert_eq!(retried.status, Status::Ok, "{retried:?}");
    assert_eq!(retried.report, out.report);
    assert_eq!(
        g.polish.calls.load(Ordering::SeqCst),
        1,
        "only the in-flight call"
    );
}

#[test]
fn a_run_held_by_a_live_process_is_refused_and_a_dead_holder_is_taken_over() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    sqlite_run(&f, &db, "h1");
    let conn = rusqlite::Connection::open(db.path()).unwrap();
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    conn.execute(
        "UPDATE runs SET lease_pid=?1, status='running' WHERE id='h1'",
        [child.id()],
    )
    .unwrap();
    match db.resume("h1", InFlight::Stop) {
        Err(JournalError::Held { pid, .. }) => assert_eq!(pid, child.id()),
        other => panic!("expected Held, got {:?}", other.map(|r| r.0)),
    }
    let holder = child.id();
    child.kill().unwrap();
    child.wait().unwrap();
    let (record, _, _) = db
        .resume("h1", InFlight::Stop)
        .expect("a dead holder's lease is taken over");
    assert_eq!(record.lease, Some(holder));
    assert_eq!(
        db.run("h1").unwrap().unwrap().lease,
        Some(std::process::id())
    );
}

#[test]
fn a_malformed_foreign_or_contradicting_journal_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    // Not a journal.
    let other = dir.path().join("other.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE orders (id INTEGER);")
        .unwrap();
    let e = SqliteStore::open(&other, Durability::Normal)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("not an ais journal") && e.contains("orders"),
        "{e}"
    );
    // Another schema version.
    let f = fixture();
    let db = store(dir.path());
    sqlite_run(&f, &db, "m1");
    let conn = rusqlite::Connection::open(db.path()).unwrap();
    conn.execute(
        "UPDATE meta SET value='ais-journal/9' WHERE key='schema'",
        [],
    )
    .unwrap();
    let e = SqliteStore::open(db.path(), Durability::Full)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("ais-journal/9"), "{e}");
    conn.execute(
        "UPDATE meta SET value=?1 WHERE key='schema'",
        [ais_rt::journal::sqlite::SCHEMA],
    )
    .unwrap();
    // A meta table with no version in it.
    conn.execute("DELETE FROM meta WHERE key='schema'", [])
        .unwrap();
    let e = SqliteStore::open(db.path(), Durability::Normal)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("no schema version"), "{e}");
    conn.execute(
        "INSERT INTO meta VALUES ('schema', ?1)",
        [ais_rt::journal::sqlite::SCHEMA],
    )
    .unwrap();
    // A step row whose key is not the sequence number it says, and one that says it is
    // another run's.
    // (Rows are addressed by key: the run's number, shifted, and the sequence number.)
    let row_2 = "key = ((SELECT num FROM runs WHERE id='m1') << 32) | 2";
    conn.execute(&format!("UPDATE steps SET seq=7 WHERE {row_2}"), [])
        .unwrap();
    let e = db.steps("m1").unwrap_err().to_string();
    assert!(
        e.contains("run m1") && e.contains("steps row 7") && e.contains("is not sequence number 7"),
        "{e}"
    );
    conn.execute(
        &format!("UPDATE steps SET seq=2, run='m0' WHERE {row_2}"),
        [],
    )
    .unwrap();
    let e = db.effects("m1").unwrap_err().to_string();
    assert!(
        e.contains("steps row 2") && e.contains("it is run m0's"),
        "{e}"
    );
    conn.execute("UPDATE steps SET run='m1' WHERE run='m0'", [])
        .unwrap();
    // A run row without its number.
    conn.execute("UPDATE runs SET num=NULL WHERE id='m1'", [])
        .unwrap();
    let e = db.steps("m1").unwrap_err().to_string();
    assert!(
        e.contains("run m1") && e.contains("its number is None"),
        "{e}"
    );
    conn.execute("UPDATE runs SET num=1 WHERE id='m1'", [])
        .unwrap();
    // A malformed step row.
    conn.execute(
        "UPDATE steps SET delta='{oops' WHERE run='m1' AND seq=2",
        [],
    )
    .unwrap();
    let e = db.steps("m1").unwrap_err().to_string();
    assert!(e.contains("run m1") && e.contains("steps row 2"), "{e}");
    // A row whose delta names its step or instruction, which only the row's columns hold:
    // refused, whatever it says.
    conn.execute("UPDATE steps SET delta=(SELECT delta FROM steps WHERE run='m1' AND seq=1) WHERE run='m1' AND seq=2", []).unwrap();
    for (set, says) in [
        ("'$.step', step", "its delta names its `step`"),
        (
            "'$.instruction', 'send_mail'",
            "its delta names its `instruction`",
        ),
    ] {
        conn.execute(
            &format!("UPDATE steps SET delta=json_set(delta, {set}) WHERE run='m1' AND seq=2"),
            [],
        )
        .unwrap();
        let e = db.steps("m1").unwrap_err().to_string();
        assert!(
            e.contains("run m1") && e.contains("steps row 2") && e.contains(says),
            "{set}: {e}"
        );
        conn.execute(
            "UPDATE steps SET delta=json_remove(delta, '$.step', '$.instruction') WHERE run='m1' AND seq=2",
            [],
        )
        .unwrap();
    }
    // The results a step's row holds that are not JSON.
    conn.execute("UPDATE steps SET delta=(SELECT delta FROM steps WHERE run='m1' AND seq=1) WHERE run='m1' AND seq=2", []).unwrap();
    let judged: String = conn
        .query_row(
            "SELECT effects FROM steps WHERE run='m1' AND seq=4",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(judged.contains("\"judge_it\""), "step 4 judges: {judged}");
    conn.execute(
        "UPDATE steps SET effects='[[oops' WHERE run='m1' AND seq=4",
        [],
    )
    .unwrap();
    let e = db.effects("m1").unwrap_err().to_string();
    assert!(
        e.contains("run m1") && e.contains("steps row 4") && e.contains("its effects"),
        "{e}"
    );
    // A result recorded twice: in its step's row and as an effects row.
    conn.execute(
        "UPDATE steps SET effects=?1 WHERE run='m1' AND seq=4",
        [&judged],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO effects SELECT 'm1', json_extract(effects, '$[0][0]'), '', 0, 'tool', 'judge', 'judge_it', 'retry', NULL, 'true' FROM steps WHERE run='m1' AND seq=4",
        [],
    )
    .unwrap();
    let e = db.effects("m1").unwrap_err().to_string();
    assert!(
        e.contains("steps row 4") && e.contains("which an effects row records already"),
        "{e}"
    );
    conn.execute(
        "DELETE FROM effects WHERE run='m1' AND kind='tool' AND name='judge_it'",
        [],
    )
    .unwrap();
    // An effect recorded for another tool at the key the program now asks for: step 2's
    // result written outside its step's commit (an effects row), naming another tool.
    conn.execute(
        "INSERT INTO effects SELECT 'm1', json_extract(effects, '$[0][0]'), '', 0, 'tool', 'judge', 'send_mail', 'retry', NULL, json_extract(effects, '$[0][8]') FROM steps WHERE run='m1' AND seq=2",
        [],
    )
    .unwrap();
    conn.execute("DELETE FROM steps WHERE run='m1' AND seq>=2", [])
        .unwrap();
    let g = fixture();
    let doc = program(LOOP);
    let rt = g.bench.runtime();
    let prep = rt.prepare(&doc.program, Some(&doc.source_map));
    let (_, start, journal) = db.resume("m1", InFlight::Stop).unwrap();
    let out = block_on(rt.resume_journaled(&prep, Arc::new(journal), &start, None));
    assert_eq!(out.status, Status::Fault);
    let fault = out.fault.unwrap();
    assert_eq!(fault.kind, FaultKind::Journal);
    assert!(
        fault.message.contains("run m1") && fault.message.contains("send_mail"),
        "{}",
        fault.message
    );
    assert_eq!(
        g.judge.calls.load(Ordering::SeqCst),
        0,
        "nothing guessed, nothing run"
    );
}

/// A journal of another schema version — here `ais-journal/3`, which an unreleased build
/// wrote — is refused when opened: the error names the file, the version, and the two ways on
/// (`rm` it, or another `--journal`); the file is left exactly as it was.
#[test]
fn a_journal_of_another_schema_is_refused_with_the_command_that_starts_afresh() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    assert_eq!(sqlite_run(&f, &db, "v1").status, Status::Ok);
    drop(db);
    let path = dir.path().join(".ais/runs.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "UPDATE meta SET value='ais-journal/3' WHERE key='schema'",
        [],
    )
    .unwrap();
    let rows = |conn: &rusqlite::Connection| -> (i64, i64, String) {
        conn.query_row(
            "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM steps), (SELECT value FROM meta WHERE key='schema')",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap()
    };
    let before = rows(&conn);
    let e = SqliteStore::open(&path, Durability::Normal)
        .err()
        .expect("another schema is refused")
        .to_string();
    let shown = path.display().to_string();
    for says in [
        "has journal schema `ais-journal/3`",
        ais_rt::journal::sqlite::SCHEMA,
        &format!("`rm {shown}`"),
        "--journal PATH",
    ] {
        assert!(e.contains(says), "{says}: {e}");
    }
    assert_eq!(rows(&conn), before, "nothing upgraded, nothing overwritten");
    assert!(before.1 > 0, "{before:?}");
}

/// Fans out over three items (each sibling one step of the budget), then three more steps.
const FANNED: &str = r#"walker:
  name: Fanned
  carries:
    task: {type: str, role: input}
    items: {type: list[str], produced_by: make}
    results: {type: list[str], produced_by: fan}
    one: {type: str, produced_by: first}
    two: {type: str, produced_by: second}
    three: {type: str, produced_by: third}
tools:
  work: {sig: "(items) -> str", surface: ACT, serves: [fan]}
nodes:
  - {id: make, type: CODE, owner: code, reads: [task], writes: [items], body: "task.split(',')"}
  - {id: fan, type: SPAWN, owner: code, reads: [items], writes: [results], concurrency: {isolation: shared_read}}
  - {id: first, type: CODE, owner: code, reads: [results], writes: [one], body: "'1'"}
  - {id: second, type: CODE, owner: code, reads: [one], writes: [two], body: "one + '2'"}
  - {id: third, type: CODE, owner: code, reads: [two], writes: [three], body: "two + '3'"}
  - {id: done, type: TERMINAL, reads: [three]}
edges:
  - {from: make, to: fan}
  - {from: fan, to: first}
  - {from: first, to: second}
  - {from: second, to: third}
  - {from: third, to: done}
"#;

#[test]
fn a_run_resumed_after_a_crash_still_counts_the_siblings_it_forked_against_its_budget() {
    let work = tool(|a, _| Ok(Value::from(arg(a, "items").to_uppercase())));
    let mut bench = Bench::new().with("work", work.clone());
    // `make`, `fan` and its 3 siblings, `first`, `second`: 7 of 7; `third` is one too many.
    bench.max_steps = 7;
    let doc = program(FANNED);
    let rt = bench.runtime();
    let prep = rt.prepare(&doc.program, Some(&doc.source_map));
    let inputs = || Inputs::task("a,b,c");
    let whole = block_on(rt.run_journaled(&prep, inputs(), Arc::new(MemoryJournal::new("whole"))));
    assert_eq!(
        whole
            .fault
            .as_ref()
            .map(|f| (f.kind, f.instruction.as_str())),
        Some((FaultKind::BudgetExhausted, "third")),
        "{whole:?}"
    );
    // Killed at each step boundary after the SPAWN: the resumed run knows its siblings ran.
    for n in 2..=4 {
        let inner = Arc::new(MemoryJournal::new(format!("r{n}")));
        let dying = Arc::new(DiesAt {
            inner: inner.clone(),
            n,
            commits: AtomicUsize::new(0),
        });
        let first = block_on(rt.run_journaled(&prep, inputs(), dying));
        assert_eq!(
            first.fault.as_ref().map(|f| f.kind),
            Some(FaultKind::Journal),
            "killed at commit {n}: {first:?}"
        );
        let start = rt.run_start(inner.run_id(), &prep, &inputs(), Json::Null);
        let out = block_on(rt.resume_journaled(&prep, inner, &start, None));
        assert_eq!(
            out.status, whole.status,
            "resumed after commit {n}: {out:?}"
        );
        assert_eq!(out.fault, whole.fault, "resumed after commit {n}");
        assert_eq!(out.steps, whole.steps, "resumed after commit {n}");
    }
    assert_eq!(
        work.calls.load(Ordering::SeqCst),
        3 + 3 * 3,
        "no sibling ran twice"
    );
}
