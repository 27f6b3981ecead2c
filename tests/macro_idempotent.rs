//! `#[idempotent]` on an `ais!` tool: emitted as the AG-IR field `idempotent: true`, and what
//! lets a journaled resume run the tool again when it was in flight at a crash — where a tool
//! without it stops the run `interrupted`, naming the call that may have run once.

use ais::ais;
use ais::rt::journal::MemoryJournal;
use ais::rt::journal::{
    BoxFuture, Effect, History, Journal, JournalError, Json, RunEnd, StepCommit,
};
use ais::rt::{Inputs, Status};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

static STAMPS: AtomicUsize = AtomicUsize::new(0);
static SENDS: AtomicUsize = AtomicUsize::new(0);

ais! {
    /// Stamp a note, then send it.
    program Stamper {
        carries { task: str = input, stamped: str, sent: str }

        /// Writes the stamp: the same note gives the same stamp, however often.
        #[surface(ACT)]
        #[idempotent]
        tool stamp(task: &str) -> String {
            STAMPS.fetch_add(1, Ordering::SeqCst);
            format!("[stamped] {task}")
        }

        /// Sends the note: twice is twice.
        #[surface(ACT)]
        tool send(stamped: &str) -> String {
            SENDS.fetch_add(1, Ordering::SeqCst);
            format!("sent {stamped}")
        }

        mark: ACT stamp(task) -> stamped;
        post: ACT send(stamped) -> sent;
        done: TERMINAL(sent);
        mark -> post;
        post -> done;
    }
}

/// A journal whose process "dies" when step `n` commits: the effect of that step has its
/// result recorded, and `crash()` then leaves only its intent — in flight.
struct DiesAt {
    inner: Arc<MemoryJournal>,
    n: u64,
}

impl Journal for DiesAt {
    fn run_id(&self) -> &str {
        self.inner.run_id()
    }
    fn effect<'a>(
        &'a self,
        effect: Effect,
        work: BoxFuture<'a, Json>,
    ) -> BoxFuture<'a, Result<Json, JournalError>> {
        self.inner.effect(effect, work)
    }
    fn commit<'a>(&'a self, commit: &'a StepCommit) -> BoxFuture<'a, Result<(), JournalError>> {
        if commit.step == self.n {
            return Box::pin(async { Err(JournalError::Store("killed".into())) });
        }
        self.inner.commit(commit)
    }
    fn end<'a>(&'a self, _end: &'a RunEnd) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async { Ok(()) })
    }
    fn history(&self) -> BoxFuture<'_, Result<History, JournalError>> {
        self.inner.history()
    }
}

#[test]
fn the_attribute_is_the_agir_field_on_that_tool_only() {
    let doc = ais::agir::read(Stamper::AGIR).unwrap();
    let field = |name: &str| {
        let tool = doc.program.tool(name).map(|(_, t)| t.clone()).unwrap();
        tool.extra
            .iter()
            .any(|(k, v)| k == "idempotent" && *v == ais::Value::Bool(true))
    };
    assert!(field("stamp"), "{}", Stamper::AGIR);
    assert!(!field("send"), "{}", Stamper::AGIR);
    assert!(
        Stamper::AGIR.contains("idempotent: true"),
        "{}",
        Stamper::AGIR
    );
}

type Calls = (usize, usize);

/// Runs `Stamper` until it dies at step `n`, crashes the journal, resumes it; returns the
/// first outcome, the (stamp, send) calls made by then, and the resumed outcome.
async fn die_and_resume(n: u64) -> (ais::rt::RunOutcome, Calls, ais::rt::RunOutcome) {
    let out = tempfile::tempdir().unwrap();
    let runtime = Stamper::runtime().out_dir(out.path().into()).build();
    let prepared = runtime.prepare(Stamper::program(), None);
    let inputs = Inputs::parse(Stamper::program(), Some("hello".into()), &[]).unwrap();
    let start = runtime.run_start("r1", &prepared, &inputs, Json::Null);
    let inner = Arc::new(MemoryJournal::new("r1"));
    let dying = Arc::new(DiesAt {
        inner: inner.clone(),
        n,
    });
    let first = runtime.run_journaled(&prepared, inputs, dying).await;
    let before = (STAMPS.load(Ordering::SeqCst), SENDS.load(Ordering::SeqCst));
    inner.crash();
    let again = runtime
        .resume_journaled(&prepared, inner, &start, None)
        .await;
    (first, before, again)
}

#[tokio::test]
async fn a_journaled_resume_retries_an_idempotent_tool_in_flight_and_stops_at_another() {
    // Killed while `stamp` (idempotent) was in flight: the resume stamps again and finishes.
    let (first, before, again) = die_and_resume(1).await;
    assert_eq!(first.status, Status::Fault, "{first:?}");
    assert_eq!(before, (1, 0));
    assert_eq!(again.status, Status::Ok, "{again:?}");
    assert_eq!(again.report["sent"], "sent [stamped] hello");
    assert_eq!(
        STAMPS.load(Ordering::SeqCst),
        2,
        "the in-flight stamp ran again"
    );
    assert_eq!(SENDS.load(Ordering::SeqCst), 1);

    // Killed while `send` (not idempotent) was in flight: the resume does not send again.
    let (_, before, again) = die_and_resume(2).await;
    assert_eq!(before, (3, 2));
    assert_eq!(again.status, Status::Interrupted, "{again:?}");
    let fault = again.fault.unwrap();
    assert!(fault.message.contains("`post`"), "{}", fault.message);
    assert!(fault.message.contains("--mark-done"), "{}", fault.message);
    assert_eq!(
        SENDS.load(Ordering::SeqCst),
        2,
        "send ran once per attempt, never on resume"
    );
    assert_eq!(
        STAMPS.load(Ordering::SeqCst),
        3,
        "the committed stamp was not repeated"
    );
}
