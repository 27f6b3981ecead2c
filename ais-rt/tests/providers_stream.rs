//! Streamed answers against real HTTP servers on 127.0.0.1 sending SSE (OpenAI-compatible,
//! Anthropic) and NDJSON (Ollama) pieces with delays: with a watcher the pieces reach it as
//! they arrive, before the slot ends; the answer the slot lands, traces and journals is the
//! pieces put together, byte for byte; a stream cut mid-way is retried and nothing of it is
//! journaled; without a watcher nothing streams.

use crate::providers_support;

use ais_rt::journal::MemoryJournal;
use ais_rt::journal::{EffectKind, Journal};
use ais_rt::llm::Live;
use ais_rt::trace::{StepEvent, TraceSink};
use ais_rt::{Inputs, Runtime, Status};
use providers_support::*;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the watcher saw: each piece, when it came.
#[derive(Default)]
struct Watcher(Mutex<Vec<(Instant, String)>>);

impl Live for Watcher {
    fn text(&self, instruction: &str, sibling: Option<usize>, text: &str) {
        assert_eq!((instruction, sibling), ("write", None));
        self.0
            .lock()
            .unwrap()
            .push((Instant::now(), text.to_owned()));
    }
}

#[derive(Default)]
struct Events(Mutex<Vec<StepEvent>>);

impl TraceSink for Events {
    fn event(&self, event: &StepEvent) {
        self.0.lock().unwrap().push(event.clone());
    }
}

/// The answer text of a response body as each protocol carries it.
fn answer_text(proto: Proto, response: &Value) -> String {
    match proto {
        Proto::OpenAi => response["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .to_owned(),
        Proto::Ollama => response["message"]["content"].as_str().unwrap().to_owned(),
        Proto::Anthropic => response["content"][0]["input"].to_string(),
    }
}

struct Ran {
    status: Status,
    report: serde_json::Map<String, Value>,
    seen: Vec<(Instant, String)>,
    ended: Instant,
    exchanges: Vec<Value>,
    journaled: Vec<Value>,
    requests: Vec<Received>,
}

async fn run(proto: Proto, answers: Vec<Answer>, watch: bool) -> Ran {
    let (server, base) = serve(answers).await;
    let watcher = Arc::new(Watcher::default());
    let events = Arc::new(Events::default());
    let out = tempfile::tempdir().unwrap();
    let mut builder = Runtime::builder()
        .model(model(proto, &base, fast_options()))
        .trace(events.clone())
        .out_dir(out.path().to_path_buf());
    if watch {
        builder = builder.live(watcher.clone());
    }
    let runtime = builder.build();
    let doc = ais_core::agir::read(ONE_SLOT).unwrap();
    let prep = runtime.prepare(&doc.program, Some(&doc.source_map));
    let journal = Arc::new(MemoryJournal::new("stream"));
    let outcome = runtime
        .run_journaled(
            &prep,
            Inputs::task("go"),
            journal.clone() as Arc<dyn Journal>,
        )
        .await;
    let ended = Instant::now();
    let exchanges = events
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| e.slot.as_ref())
        .flat_map(|s| s.exchanges.iter().map(|x| x.response.clone()))
        .collect();
    let journaled = journal
        .effects()
        .into_iter()
        .filter(|(e, _)| e.kind == EffectKind::Slot)
        .filter_map(|(_, r)| r)
        .collect();
    let seen = watcher.0.lock().unwrap().clone();
    Ran {
        status: outcome.status,
        report: outcome.report,
        seen,
        ended,
        exchanges,
        journaled,
        requests: received(&server),
    }
}

const GAP: Duration = Duration::from_millis(40);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pieces_reach_the_watcher_as_they_come_and_the_whole_is_what_lands() {
    let value = "a streamed answer, \"quoted\", with ünïcödé and a\nnew line";
    for proto in ALL {
        let (answer, pieces) = proto.streamed(json!({"value": value}), 6, GAP, false);
        let ran = run(proto, vec![answer], true).await;
        assert_eq!(ran.status, Status::Ok, "{proto:?}");
        assert_eq!(ran.report["answer"], json!(value), "{proto:?}");
        // The request asked for a stream.
        assert_eq!(ran.requests.len(), 1);
        assert_eq!(ran.requests[0].body["stream"], true, "{proto:?}");
        // Every piece reached the watcher, in order, the first well before the slot ended.
        let seen: Vec<&str> = ran.seen.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(seen, pieces, "{proto:?}");
        let first = ran.seen[0].0;
        assert!(
            ran.ended.duration_since(first) >= GAP * (pieces.len() as u32 - 1),
            "{proto:?}: the first piece came {:?} before the end",
            ran.ended.duration_since(first)
        );
        // The answer traced and journaled is the pieces put together, byte for byte.
        let whole = pieces.concat();
        assert_eq!(ran.exchanges.len(), 1, "{proto:?}");
        let traced = answer_text(proto, &ran.exchanges[0]);
        match proto {
            // Anthropic's tool input is parsed JSON: compared as JSON.
            Proto::Anthropic => assert_eq!(
                serde_json::from_str::<Value>(&traced).unwrap(),
                serde_json::from_str::<Value>(&whole).unwrap()
            ),
            _ => assert_eq!(traced, whole, "{proto:?}"),
        }
        assert_eq!(ran.journaled.len(), 1, "{proto:?}");
        let kept = &ran.journaled[0]["completion"];
        assert_eq!(kept["reply"]["value"], json!(value), "{proto:?}");
        assert_eq!(answer_text(proto, &kept["response"]), traced, "{proto:?}");
        assert_eq!(kept["usage"]["completion_tokens"], 7, "{proto:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_midway_is_retried_and_never_journaled_half() {
    let value = "the whole answer, sent twice";
    for proto in ALL {
        let (cut, half) = proto.streamed(json!({"value": value}), 6, GAP, true);
        let (whole, pieces) = proto.streamed(json!({"value": value}), 6, GAP, false);
        let ran = run(proto, vec![cut, whole], true).await;
        assert_eq!(ran.status, Status::Ok, "{proto:?}");
        assert_eq!(ran.report["answer"], json!(value), "{proto:?}");
        assert_eq!(
            ran.requests.len(),
            2,
            "{proto:?}: the cut stream was asked again"
        );
        // The watcher saw some of the half (the server's last piece may be lost in the drop),
        // then the whole.
        let seen: String = ran.seen.iter().map(|(_, t)| t.as_str()).collect();
        let before = seen
            .strip_suffix(&pieces.concat())
            .unwrap_or_else(|| panic!("{proto:?}: {seen}"));
        assert!(
            !before.is_empty() && half.concat().starts_with(before),
            "{proto:?}: {seen}"
        );
        // One exchange journaled: the whole one.
        assert_eq!(ran.journaled.len(), 1, "{proto:?}");
        let kept = &ran.journaled[0]["completion"];
        assert_eq!(kept["reply"]["value"], json!(value), "{proto:?}");
        assert_eq!(ran.exchanges.len(), 1, "{proto:?}");
    }
    // A stream cut every time fails the slot with a transport error after the retries.
    let (cut, _) = Proto::OpenAi.streamed(json!({"value": "x"}), 4, Duration::ZERO, true);
    let ran = run(Proto::OpenAi, vec![cut.clone(), cut.clone(), cut], true).await;
    assert_eq!(ran.status, Status::Error);
    assert_eq!(ran.requests.len(), 3);
    assert!(
        ran.journaled.iter().all(|r| r.get("failed").is_some()),
        "{:?}",
        ran.journaled
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_watcher_nothing_streams() {
    for proto in ALL {
        let ran = run(proto, vec![proto.answer(json!({"value": "plain"}))], false).await;
        assert_eq!(ran.status, Status::Ok, "{proto:?}");
        assert_eq!(ran.report["answer"], json!("plain"));
        assert_ne!(ran.requests[0].body["stream"], true, "{proto:?}");
        assert!(ran.seen.is_empty());
    }
}
