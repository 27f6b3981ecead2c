//! Model tiers and fallback chains against real HTTP servers on 127.0.0.1: a program whose
//! slots name two tiers is answered by each tier's own server; a tier that is a chain moves to
//! its next model on a 503 past the retries and on an answer still not JSON after the repair
//! rounds, traces and counts each move, and a resume after a death at a step boundary asks no
//! model again for a slot the journal answered.

use crate::common;
use crate::providers_support;

use common::DiesAt;

use ais_rt::journal::MemoryJournal;
use ais_rt::journal::{Journal, Json};
use ais_rt::llm::{ModelErrorKind, Models};
use ais_rt::llm::{ModelsFile, open_with};
use ais_rt::trace::{StepEvent, TraceSink};
use ais_rt::{Inputs, RunOutcome, Runtime, Status};
use providers_support::*;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

const TWO_TIERS: &str = r#"walker:
  name: Two
  carries:
    task: {type: str, role: input}
    draft: {type: str, produced_by: write}
    final: {type: str, produced_by: polish}
nodes:
  - {id: write, type: GEN-RAW, reads: [task], writes: [draft], doc: Write a first draft., model: small}
  - {id: polish, type: GEN-RAW, reads: [draft], writes: [final], doc: Polish the draft., model: big}
  - {id: done, type: TERMINAL, reads: [final]}
edges:
  - {from: write, to: polish}
  - {from: polish, to: done}
"#;

/// The instruction a request is for, as the system prompt names it.
fn instruction_of(body: &Value) -> String {
    let text = body.to_string();
    let start = text
        .find("# Instruction `")
        .map(|s| s + "# Instruction `".len());
    start
        .and_then(|s| text[s..].find('`').map(|len| text[s..s + len].to_string()))
        .unwrap_or_default()
}

/// The models a configuration text defines, each provider with the tests' fast bounds.
fn models(text: &str) -> Models {
    let file = ModelsFile::parse(text, Path::new("ais.toml"), Path::new(".")).unwrap();
    file.build(None, &|r| open_with(r, &|_| None, fast_options()))
        .unwrap()
}

#[derive(Default)]
struct Events(Mutex<Vec<StepEvent>>);

impl TraceSink for Events {
    fn event(&self, event: &StepEvent) {
        self.0.lock().unwrap().push(event.clone());
    }
}

impl Events {
    fn slot(&self, id: &str) -> ais_rt::trace::SlotTrace {
        let events = self.0.lock().unwrap();
        let event = events.iter().rev().find(|e| e.instruction == id).unwrap();
        event.slot.clone().unwrap()
    }
}

async fn run(
    models: Models,
    events: Arc<Events>,
    journal: Option<Arc<dyn Journal>>,
) -> (RunOutcome, tempfile::TempDir) {
    let doc = ais_core::agir::read(TWO_TIERS).unwrap();
    let out = tempfile::tempdir().unwrap();
    let runtime = Runtime::builder()
        .models(models)
        .trace(events)
        .out_dir(out.path().to_path_buf())
        .build();
    let prep = runtime.prepare(&doc.program, Some(&doc.source_map));
    let inputs = Inputs::task("a note on tiers");
    let outcome = match journal {
        Some(j) => runtime.run_journaled(&prep, inputs, j).await,
        None => runtime.run_prepared(&prep, inputs).await,
    };
    (outcome, out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_slot_is_answered_by_the_server_of_the_tier_it_names() {
    let (small, small_url) =
        serve_fn(|_| Proto::OpenAi.answer(json!({"value": "draft from the small model"}))).await;
    let (big, big_url) =
        serve_fn(|_| Proto::Anthropic.answer(json!({"value": "polished by the big model"}))).await;
    let config = format!(
        "[models]\nsmall = {{ spec = \"openai:small-model\", base_url = \"{small_url}/v1\" }}\n\
         big = {{ spec = \"anthropic:big-model\", base_url = \"{big_url}\", api_key_env = \"AIS_TEST_BIG_KEY\" }}\n"
    );
    let file = ModelsFile::parse(&config, Path::new("ais.toml"), Path::new(".")).unwrap();
    let env = |name: &str| (name == "AIS_TEST_BIG_KEY").then(|| KEY.to_owned());
    let models = file
        .build(None, &|r| open_with(r, &env, fast_options()))
        .unwrap();
    let events = Arc::new(Events::default());
    let (outcome, _out) = run(models, events.clone(), None).await;
    assert_eq!(outcome.status, Status::Ok, "{outcome:#?}");
    assert_eq!(outcome.report["final"], json!("polished by the big model"));

    let small_got = received(&small);
    let big_got = received(&big);
    assert_eq!(small_got.len(), 1);
    assert_eq!(big_got.len(), 1);
    assert_eq!(instruction_of(&small_got[0].body), "write");
    assert_eq!(small_got[0].body["model"], "small-model");
    assert_eq!(instruction_of(&big_got[0].body), "polish");
    assert_eq!(big_got[0].body["model"], "big-model");
    // The big tier's key came from its own variable.
    assert_eq!(big_got[0].headers["x-api-key"], KEY);

    let write = events.slot("write");
    assert_eq!(
        (write.model.as_str(), write.tier.as_str()),
        ("openai:small-model", "small")
    );
    let polish = events.slot("polish");
    assert_eq!(
        (polish.model.as_str(), polish.tier.as_str()),
        ("anthropic:big-model", "big")
    );
    assert!(write.failovers.is_empty() && polish.failovers.is_empty());
    assert_eq!(outcome.usage.failovers, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tier_naming_no_defined_tier_stops_before_the_first_step() {
    let events = Arc::new(Events::default());
    let models = models("[models]\nsmal = \"ollama:x\"\nbig = \"ollama:y\"\n");
    let (outcome, _out) = run(models, events.clone(), None).await;
    assert_eq!(outcome.status, Status::Fault);
    let fault = outcome.fault.unwrap();
    assert_eq!(fault.instruction, "write");
    assert!(
        fault.message.contains("did you mean `smal`?"),
        "{}",
        fault.message
    );
    assert!(events.0.lock().unwrap().is_empty(), "no step ran");
}

/// A chain whose first model fails `write` with 503s and answers `polish` with prose.
struct Chained {
    first: Arc<Server>,
    second: Arc<Server>,
    models: Models,
}

async fn chained() -> Chained {
    let (first, first_url) = serve_fn(|body| match instruction_of(body).as_str() {
        "write" => Answer::Raw(
            503,
            vec![],
            r#"{"error": {"message": "overloaded"}}"#.into(),
        ),
        _ => ok(json!({
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
                "content": "Sure! Here is the polished draft, as you asked."}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 9},
        })),
    })
    .await;
    let (second, second_url) = serve_fn(|body| {
        let id = instruction_of(body);
        Proto::Ollama.answer(json!({"value": format!("{id} by the steady model")}))
    })
    .await;
    let models = models(&format!(
        "default = \"main\"\n[models]\n\
         flaky = {{ spec = \"openai:flaky\", base_url = \"{first_url}/v1\" }}\n\
         steady = {{ spec = \"ollama:steady\", base_url = \"{second_url}\" }}\n\
         main = [\"flaky\", \"steady\"]\n\
         small = \"main\"\nbig = \"main\"\n"
    ));
    Chained {
        first,
        second,
        models,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chain_moves_on_after_503s_and_after_answers_still_not_json() {
    let c = chained().await;
    let events = Arc::new(Events::default());
    let (outcome, _out) = run(c.models, events.clone(), None).await;
    assert_eq!(outcome.status, Status::Ok, "{outcome:#?}");
    assert_eq!(outcome.report["final"], json!("polish by the steady model"));
    assert_eq!(outcome.usage.failovers, 2);

    let first = received(&c.first);
    let asked = |id: &str| {
        first
            .iter()
            .filter(|r| instruction_of(&r.body) == id)
            .count()
    };
    // write: the first try and the provider's 2 retries, all 503.
    assert_eq!(asked("write"), 3);
    // polish: the answer and 2 repair rounds, each sending the prose back with the error.
    assert_eq!(asked("polish"), 3);
    let last = first
        .iter()
        .rev()
        .find(|r| instruction_of(&r.body) == "polish")
        .unwrap();
    let messages = last.body["messages"].as_array().unwrap();
    assert!(
        messages.iter().any(|m| m["role"] == "assistant"
            && m["content"] == "Sure! Here is the polished draft, as you asked."),
        "{messages:#?}"
    );
    let repair = messages.last().unwrap()["content"].as_str().unwrap();
    assert!(repair.contains("not JSON"), "{repair}");
    assert_eq!(
        received(&c.second).len(),
        2,
        "the second model answered each slot once"
    );

    let write = events.slot("write");
    assert_eq!(write.model, "ollama:steady");
    assert_eq!(
        write.tier, "small",
        "the tier the slot named (an alias of `main`)"
    );
    assert_eq!(write.failovers.len(), 1);
    let moved = &write.failovers[0];
    assert_eq!(
        (moved.from.as_str(), moved.to.as_str()),
        ("openai:flaky", "ollama:steady")
    );
    assert_eq!(moved.kind, Some(ModelErrorKind::Transport));
    assert!(moved.reason.contains("HTTP 503"), "{}", moved.reason);
    let polish = events.slot("polish");
    assert_eq!(polish.model, "ollama:steady");
    assert_eq!(polish.failovers.len(), 1);
    assert_eq!(polish.failovers[0].kind, None);
    assert!(
        polish.failovers[0].reason.contains("after 2 repair rounds"),
        "{}",
        polish.failovers[0].reason
    );
    // The exchanges of both models are kept, in order: 1 failed request is no exchange, so
    // polish has the first model's 3 answers and the second's 1.
    assert_eq!(polish.exchanges.len(), 4);
    assert_eq!(polish.repairs, 2);
    // Usage adds up over both models: 3 × 10 + 42 prompt tokens.
    assert_eq!(polish.usage.prompt_tokens, 72);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_asks_no_model_again_for_a_slot_the_journal_answered() {
    let c = chained().await;
    let inner = Arc::new(MemoryJournal::new("tiers"));
    // Dies at the second commit: `polish` was answered (after its failover) and journaled,
    // its step not committed.
    let dying = Arc::new(DiesAt {
        inner: inner.clone(),
        n: 2,
        commits: AtomicUsize::new(0),
    });
    let (first_run, _out) = run(c.models.clone(), Arc::new(Events::default()), Some(dying)).await;
    assert_eq!(first_run.status, Status::Fault, "{first_run:#?}");
    let (before_first, before_second) = (received(&c.first).len(), received(&c.second).len());
    assert_eq!((before_first, before_second), (6, 2));

    let doc = ais_core::agir::read(TWO_TIERS).unwrap();
    let out = tempfile::tempdir().unwrap();
    let events = Arc::new(Events::default());
    let runtime = Runtime::builder()
        .models(c.models)
        .trace(events.clone())
        .out_dir(out.path().to_path_buf())
        .build();
    let prep = runtime.prepare(&doc.program, Some(&doc.source_map));
    let journal: Arc<dyn Journal> = inner;
    let start = runtime.run_start(
        journal.run_id(),
        &prep,
        &Inputs::task("a note on tiers"),
        Json::Null,
    );
    let resumed = runtime.resume_journaled(&prep, journal, &start, None).await;
    assert_eq!(resumed.status, Status::Ok, "{resumed:#?}");
    assert_eq!(resumed.report["final"], json!("polish by the steady model"));
    assert!(
        received(&c.first).is_empty(),
        "the first model was asked again"
    );
    assert!(
        received(&c.second).is_empty(),
        "the second model was asked again"
    );
    // The journal recorded which model answered, and how it got there.
    let polish = events.slot("polish");
    assert_eq!(polish.model, "ollama:steady");
    assert_eq!(polish.failovers.len(), 1);
    assert_eq!(polish.failovers[0].from, "openai:flaky");
}

/// The part of a request body a provider may cache: Anthropic's tools and system (up to the
/// last `cache_control` marker), OpenAI's leading system message.
fn cacheable_prefix(proto: Proto, body: &Value) -> String {
    match proto {
        Proto::Anthropic => {
            let tools = body["tools"].as_array().unwrap();
            let marked = |v: &Value| v["cache_control"] == json!({"type": "ephemeral"});
            assert!(
                marked(tools.last().unwrap()),
                "the last tool is marked: {body:#}"
            );
            let system = body["system"].as_array().unwrap();
            assert!(
                marked(system.last().unwrap()),
                "the system block is marked: {body:#}"
            );
            format!("{}{}", body["tools"], body["system"])
        }
        _ => {
            let first = &body["messages"][0];
            assert_eq!(first["role"], "system", "the stable part is sent first");
            first.to_string()
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cacheable_prefix_is_marked_and_the_same_on_every_call_of_a_slot() {
    // A program with a LOOP whose model slot runs three times over a changing draft.
    const LOOPING: &str = r#"walker:
  name: Again
  carries:
    task: {type: str, role: input}
    draft: {type: str, produced_by: improve}
    good: {type: bool, produced_by: judge}
    rounds: {type: int, produced_by: improve}
knowledge:
  style: {template: "Short sentences. No jargon.", resident_on: [improve]}
nodes:
  - {id: improve, type: LOOP, owner: model, reads: [task, draft], writes: [draft], doc: Improve the draft., verdict: good, cap: 3, counter: rounds}
  - {id: judge, type: CODE, reads: [rounds], writes: [good], body: "rounds >= 3"}
  - {id: done, type: TERMINAL, reads: [draft]}
edges:
  - {from: improve, to: judge}
  - {from: judge, to: improve}
  - {from: improve, to: done}
"#;
    for proto in [Proto::Anthropic, Proto::OpenAi] {
        let calls = Arc::new(AtomicUsize::new(0));
        let counter = calls.clone();
        let (server, base) = serve_fn(move |_| {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            proto.answer(json!({"value": format!("draft {n}")}))
        })
        .await;
        let env = proto.env(&base);
        let lookup = move |name: &str| env.get(name).cloned();
        let model = ais_rt::llm::from_spec_with(proto.spec(), &lookup, fast_options()).unwrap();
        let doc = ais_core::agir::read(LOOPING).unwrap();
        let out = tempfile::tempdir().unwrap();
        let runtime = Runtime::builder()
            .model(model)
            .out_dir(out.path().to_path_buf())
            .build();
        let outcome = runtime
            .run(
                &doc.program,
                Some(&doc.source_map),
                Inputs::task("explain tiers"),
            )
            .await;
        assert_eq!(outcome.status, Status::Ok, "{proto:?}: {outcome:#?}");
        let got = received(&server);
        assert!(got.len() >= 2, "{proto:?}: {} calls", got.len());
        let first = cacheable_prefix(proto, &got[0].body);
        assert!(
            first.contains("Short sentences. No jargon."),
            "the knowledge is in it"
        );
        for later in &got[1..] {
            assert_eq!(cacheable_prefix(proto, &later.body), first, "{proto:?}");
            assert_ne!(later.body, got[0].body, "the operands changed");
        }
        // Cached tokens are reported: the test server says 16 were read from the cache.
        assert_eq!(
            outcome.usage.cached_tokens,
            16 * got.len() as u64,
            "{proto:?}"
        );
    }
}
