//! Watching a slot's answer arrive: a [`Live`] watcher given to the runtime
//! ([`crate::RuntimeBuilder::live`]) makes the providers stream (OpenAI-compatible and Anthropic
//! over server-sent events, Ollama over NDJSON) and hands it each piece of text as it comes —
//! for a terminal to show under the running step. The answer a slot validates and the journal
//! keeps is the whole one, assembled from the stream once it ended; a stream cut before its end
//! is an error of the exchange (retried like a dropped connection) and nothing of it is kept.
//!
//! The watcher reaches the provider through the task that asks the model (a tokio task-local
//! set around each exchange), so a run without one streams nothing and sends the requests it
//! always sent.

use std::future::Future;
use std::sync::Arc;

/// Takes the text of answers as it streams in.
pub trait Live: Send + Sync {
    /// `text` arrived for the slot of `instruction` (of SPAWN sibling `sibling`). It is the
    /// model's raw output (JSON, as the slot's protocol asks for it), untrusted: a display
    /// must make its control characters harmless.
    fn text(&self, instruction: &str, sibling: Option<usize>, text: &str);
}

tokio::task_local! {
    static WATCHER: Arc<dyn Live>;
}

/// Runs `exchange` with `live` watching it (none: nothing streams).
pub(crate) async fn watched<F: Future>(live: Option<Arc<dyn Live>>, exchange: F) -> F::Output {
    match live {
        Some(live) => WATCHER.scope(live, exchange).await,
        None => exchange.await,
    }
}

#[cfg(feature = "http")]
/// Whether the current exchange is watched: the providers stream only then.
pub(crate) fn watching() -> bool {
    WATCHER.try_with(|_| ()).is_ok()
}

#[cfg(feature = "http")]
/// Hands `text` of the slot of `instruction` to the watcher, if there is one.
pub(crate) fn show(instruction: &str, sibling: Option<usize>, text: &str) {
    if !text.is_empty() {
        let _ = WATCHER.try_with(|w| w.text(instruction, sibling, text));
    }
}
