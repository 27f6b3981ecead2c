//! Checkpoints off the step's path: the WAL of a journal is copied into its database by a
//! thread of its own, on its own connection, so a step's commit never waits for one.
//!
//! SQLite's default checkpoints inline: the commit that grows the WAL past its bound copies
//! every page of it into the database and syncs twice, and the step that made that commit
//! waits for it (in the journal bench that was an eighth of a journaled step's time, spread
//! over the steps). SQLite's documentation suggests the alternative taken here: turn the
//! automatic checkpoint off on the writing connection and run `PASSIVE` checkpoints from
//! another one. A commit's durability does not change — a committed step is in the WAL,
//! which survives the process, before the next step starts; a checkpoint only moves it into
//! the database file, and a crash during one is one SQLite recovers from.
//!
//! The writer learns the WAL's length from SQLite's WAL hook at each commit
//! ([`after_commit`] says what it does with it): past [`CHECKPOINT`] frames it wakes the
//! checkpointer, never waiting for it, and finishes its work with the few frames committed
//! meanwhile; past [`BOUND`] frames — the checkpointer could not start or keep up — it
//! checkpoints inline itself, at each commit, as SQLite's default does past its threshold. (A
//! reader holding an old snapshot keeps any checkpoint from copying past it, inline or not,
//! as with SQLite's default.)

use super::{CHECKPOINT, store_err};
use crate::journal::JournalError;
use rusqlite::Connection;
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;

/// The WAL's length, in frames, past which the writer checkpoints inline: four times
/// [`CHECKPOINT`] (16 MiB of 1 KiB pages).
pub(super) const BOUND: u32 = 4 * CHECKPOINT;

thread_local! {
    /// The WAL's length, in frames, after the last commit on this thread (the WAL hook's
    /// report; 0 when no commit reported since it was reset).
    static FRAMES: Cell<u32> = const { Cell::new(0) };
}

/// The WAL hook of a writing connection: notes the WAL's length for [`after_commit`]. (It
/// replaces SQLite's automatic checkpoint, which is a WAL hook too.)
fn note_frames(_wal: &rusqlite::hooks::Wal, frames: std::ffi::c_int) -> rusqlite::Result<()> {
    FRAMES.with(|f| f.set(u32::try_from(frames).unwrap_or(0)));
    Ok(())
}

/// Takes over the checkpoints of `conn`, a connection that writes a journal: its automatic
/// checkpoint is replaced by [`note_frames`].
pub(super) fn hook(conn: &Connection) {
    conn.wal_hook(Some(note_frames));
}

/// Forgets what the last commit on this thread reported: called before a commit whose report
/// [`after_commit`] reads.
pub(super) fn before_commit() {
    FRAMES.with(|f| f.set(0));
}

/// What the commit just made on `conn` (with [`hook`] on it) asks of the checkpoints.
///
/// Below [`CHECKPOINT`] frames, nothing. Past it, the checkpointer is woken to copy the WAL
/// into the database (once per WAL). When it has, the writer checkpoints what was committed
/// meanwhile itself, a few frames: a WAL is only started over by a write that finds it copied
/// whole, which a writer committing while the thread copies would never find. Past [`BOUND`],
/// or with no checkpointer, the writer checkpoints inline, as SQLite's default does.
pub(super) fn after_commit(conn: &Connection, checkpointer: Option<&Checkpointer>) {
    let frames = FRAMES.with(Cell::get);
    if frames < CHECKPOINT {
        return;
    }
    if frames < BOUND
        && let Some(c) = checkpointer
    {
        match c.state.load(Ordering::Acquire) {
            IDLE => {
                if c.wake() {
                    return;
                }
            }
            ASKED => return,
            _ => c.state.store(IDLE, Ordering::Release),
        }
    }
    // A busy database (another connection writing or checkpointing) is not an error here:
    // the next commit past the bound tries again.
    if let Err(e) = passive(conn) {
        tracing::debug!("an inline checkpoint did not run: {e}");
    }
}

/// The checkpointer has nothing to do.
const IDLE: u8 = 0;
/// A writer woke it; it is copying the WAL.
const ASKED: u8 = 1;
/// It copied the WAL; the writer copies the rest and starts it over.
const DONE: u8 = 2;

/// One `PASSIVE` checkpoint on `conn`: copies what no reader still needs, waiting for no one.
fn passive(conn: &Connection) -> rusqlite::Result<()> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
}

/// A thread checkpointing one journal database, woken by its writers; stopped and joined when
/// dropped.
pub(super) struct Checkpointer {
    /// [`IDLE`], [`ASKED`] or [`DONE`].
    state: Arc<AtomicU8>,
    wake: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts the checkpointer of the database at `path`, on a connection of its own.
    pub(super) fn start(path: &Path) -> Result<Checkpointer, JournalError> {
        let conn = Connection::open(path).map_err(store_err(path))?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(store_err(path))?;
        // One wake pending at most: a writer that finds one pending has nothing to add.
        let (wake, woken) = sync_channel(1);
        let owned: PathBuf = path.to_owned();
        let state = Arc::new(AtomicU8::new(IDLE));
        let shared = state.clone();
        let thread = std::thread::Builder::new()
            .name("ais-journal-checkpoint".into())
            .spawn(move || run(&owned, &conn, &woken, &shared))
            .map_err(|e| JournalError::Store(format!("{}: {e}", path.display())))?;
        Ok(Checkpointer {
            state,
            wake: Some(wake),
            thread: Some(thread),
        })
    }

    /// Asks for a checkpoint; false when the thread is gone (the caller checkpoints itself).
    fn wake(&self) -> bool {
        self.state.store(ASKED, Ordering::Release);
        match self.wake.as_ref().map(|w| w.try_send(())) {
            Some(Ok(()) | Err(TrySendError::Full(()))) => true,
            Some(Err(TrySendError::Disconnected(()))) | None => {
                self.state.store(IDLE, Ordering::Release);
                false
            }
        }
    }
}

/// The checkpointer's loop: a checkpoint per wake, until its writers are gone.
fn run(path: &Path, conn: &Connection, woken: &Receiver<()>, state: &AtomicU8) {
    while woken.recv().is_ok() {
        if let Err(e) = passive(conn) {
            tracing::debug!("a checkpoint of {} did not run: {e}", path.display());
        }
        // Done or not, the writer's next commit past the threshold finishes the job inline.
        state.store(DONE, Ordering::Release);
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        // Closing the channel ends the loop; its connection closes with the thread.
        drop(self.wake.take());
        if let Some(t) = self.thread.take()
            && t.join().is_err()
        {
            tracing::warn!("the journal's checkpoint thread panicked");
        }
    }
}
