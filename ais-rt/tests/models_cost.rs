//! Cost against real HTTP servers on 127.0.0.1: each answer priced from ais.toml's price
//! table, the cost per slot in the trace and per run in the usage (SPAWN siblings' cost and
//! failovers included; a resumed run's including the steps before the resume), and
//! `--max-cost` (`RuntimeBuilder::max_cost`) as a budget: a call that may not fit is refused
//! before it is made where its worst case is known (Anthropic's token limit × the price), an
//! answer that takes the run past the budget stops it after the call, and a model without a
//! price under a budget stops the run before its first step.

use crate::common;
use crate::providers_support;

use common::DiesAt;

use ais_rt::journal::MemoryJournal;
use ais_rt::journal::{Journal, Json};
use ais_rt::llm::Models;
use ais_rt::llm::{ModelsFile, open_with};
use ais_rt::trace::{StepEvent, TraceSink};
use ais_rt::{FaultKind, Inputs, RunOutcome, Runtime, Status};
use providers_support::*;
use serde_json::json;
use std::path::Path;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

/// Three slots in a row.
const THREE: &str = r#"walker:
  name: Three
  carries:
    task: {type: str, role: input}
    a: {type: str, produced_by: one}
    b: {type: str, produced_by: two}
    c: {type: str, produced_by: three}
nodes:
  - {id: one, type: GEN-RAW, reads: [task], writes: [a], doc: First.}
  - {id: two, type: GEN-RAW, reads: [a], writes: [b], doc: Second.}
  - {id: three, type: GEN-RAW, reads: [b], writes: [c], doc: Third.}
  - {id: done, type: TERMINAL, reads: [c]}
edges:
  - {from: one, to: two}
  - {from: two, to: three}
  - {from: three, to: done}
"#;

/// A SPAWN whose worker slot answers once per file.
const FAN: &str = r#"walker:
  name: Fan
  carries:
    task: {type: str, role: input}
    files: {type: list[str], produced_by: list_them}
    reviews: {type: list[str], produced_by: review}
nodes:
  - {id: list_them, type: CODE, owner: code, reads: [task], writes: [files], body: "task.split(' ')"}
  - {id: review, type: SPAWN, owner: code, reads: [files], writes: [reviews], doc: "Review one file.", concurrency: {isolation: shared_read, max_parallel: 1}}
  - {id: done, type: TERMINAL, reads: [reviews]}
edges:
  - {from: list_them, to: review}
  - {from: review, to: done}
"#;

/// An OpenAI-compatible answer: 42 prompt tokens (16 cached), 7 completion tokens.
/// At $100 / $1000 per million (cached at $10): (26 × 100 + 16 × 10 + 7 × 1000) / 1e6.
const OPENAI_CALL: f64 = (26.0 * 100.0 + 16.0 * 10.0 + 7.0 * 1000.0) / 1e6;

/// An Anthropic answer: 26 prompt tokens and 16 read from the cache, 7 completion tokens, at
/// $10 / $100 per million (no cache price: cached at the input price): (42 × 10 + 7 × 100) / 1e6.
const ANTHROPIC_CALL: f64 = (42.0 * 10.0 + 7.0 * 100.0) / 1e6;

/// What an Anthropic call may cost at most: the tests' 512-token limit at $100 per million.
const ANTHROPIC_WORST: f64 = 512.0 * 100.0 / 1e6;

/// The fault of a run stopped by its cost budget at `at`, saying `says`.
fn budget_fault(outcome: &RunOutcome, at: &str, says: &str) -> String {
    assert_eq!(outcome.status, Status::Fault, "{outcome:#?}");
    let fault = outcome.fault.as_ref().unwrap();
    assert_eq!(
        (fault.kind, fault.instruction.as_str()),
        (FaultKind::BudgetExhausted, at)
    );
    assert!(fault.message.contains(says), "{}", fault.message);
    fault.message.clone()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

/// The models of a configuration text, each provider with the tests' fast bounds and the
/// Anthropic key from its own variable.
fn models(text: &str) -> Models {
    let file = ModelsFile::parse(text, Path::new("ais.toml"), Path::new(".")).unwrap();
    let env = |name: &str| (name == "AIS_TEST_KEY").then(|| KEY.to_owned());
    file.build(None, &|r| open_with(r, &env, fast_options()))
        .unwrap()
}

/// An OpenAI-compatible server answering every slot, and its priced model as the default.
async fn openai_priced() -> (Arc<Server>, Models) {
    let (server, url) = serve_fn(|_| Proto::OpenAi.answer(json!({"value": "text"}))).await;
    let models = models(&format!(
        "default = \"main\"\n[models]\nmain = {{ spec = \"openai:priced\", base_url = \"{url}/v1\" }}\n\
         [prices.\"openai:priced\"]\ninput = 100\noutput = 1000\ncached_input = 10\n"
    ));
    (server, models)
}

#[derive(Default)]
struct Events(Mutex<Vec<StepEvent>>);

impl TraceSink for Events {
    fn event(&self, event: &StepEvent) {
        self.0.lock().unwrap().push(event.clone());
    }
}

fn runtime(
    models: Models,
    max_cost: Option<f64>,
    events: Arc<Events>,
) -> (Runtime, tempfile::TempDir) {
    let out = tempfile::tempdir().unwrap();
    let mut builder = Runtime::builder()
        .models(models)
        .trace(events)
        .out_dir(out.path().to_path_buf());
    if let Some(dollars) = max_cost {
        builder = builder.max_cost(dollars);
    }
    (builder.build(), out)
}

async fn run(
    text: &str,
    task: &str,
    models: Models,
    max_cost: Option<f64>,
) -> (RunOutcome, Arc<Events>) {
    let doc = ais_core::agir::read(text).unwrap();
    let events = Arc::new(Events::default());
    let (runtime, _out) = runtime(models, max_cost, events.clone());
    let outcome = runtime
        .run(&doc.program, Some(&doc.source_map), Inputs::task(task))
        .await;
    (outcome, events)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_slot_and_the_run_say_what_they_cost() {
    let (server, models) = openai_priced().await;
    let (outcome, events) = run(THREE, "go", models, None).await;
    assert_eq!(outcome.status, Status::Ok, "{outcome:#?}");
    assert_eq!(received(&server).len(), 3);
    for e in events.0.lock().unwrap().iter().filter(|e| e.slot.is_some()) {
        let slot = e.slot.as_ref().unwrap();
        assert_eq!(slot.model, "openai:priced");
        assert!(close(slot.cost.unwrap(), OPENAI_CALL), "{:?}", slot.cost);
    }
    assert!(
        close(outcome.usage.cost.unwrap(), 3.0 * OPENAI_CALL),
        "{:?}",
        outcome.usage
    );
    assert_eq!(outcome.usage.unpriced_slots, 0);
    let json = outcome.to_json();
    assert!(close(
        json["usage"]["cost"].as_f64().unwrap(),
        3.0 * OPENAI_CALL
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_may_not_fit_the_budget_is_refused_before_it_is_made() {
    let (server, url) = serve_fn(|_| Proto::Anthropic.answer(json!({"value": "text"}))).await;
    let models = models(&format!(
        "default = \"main\"\n[models]\n\
         main = {{ spec = \"anthropic:priced\", base_url = \"{url}\", api_key_env = \"AIS_TEST_KEY\" }}\n\
         [prices.\"anthropic:priced\"]\ninput = 10\noutput = 100\n"
    ));
    // Room for the first call's worst case, not for the second's once the first is paid.
    let budget = ANTHROPIC_WORST + ANTHROPIC_CALL / 2.0;
    let (outcome, _) = run(THREE, "go", models, Some(budget)).await;
    let message = budget_fault(&outcome, "two", "before the call");
    assert!(
        message.contains("512 completion tokens") && message.contains("$0.0512"),
        "{message}"
    );
    assert!(message.contains("`--max-cost`"), "{message}");
    assert_eq!(received(&server).len(), 1, "the second call was never made");
    assert!(
        close(outcome.usage.cost.unwrap(), ANTHROPIC_CALL),
        "{:?}",
        outcome.usage
    );
    assert_eq!(
        outcome.usage.slots, 1,
        "the refused slot is not counted as filled"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_past_the_budget_stops_the_run_after_the_call() {
    // The OpenAI-compatible request sets no token limit: the worst case is not known before
    // the call, so the budget is checked after it.
    let (server, models) = openai_priced().await;
    let (outcome, _) = run(THREE, "go", models, Some(1.5 * OPENAI_CALL)).await;
    budget_fault(&outcome, "two", "cost budget exceeded");
    assert_eq!(
        received(&server).len(),
        2,
        "two calls were made, not the third"
    );
    // The call that went past the budget was paid for: it is in the usage.
    assert!(
        close(outcome.usage.cost.unwrap(), 2.0 * OPENAI_CALL),
        "{:?}",
        outcome.usage
    );
    assert!(
        !outcome.report.contains_key("b"),
        "no value of the stopped slot landed"
    );

    // A budget spent to the cent refuses the next call before it is made.
    let (server, models) = openai_priced().await;
    let (outcome, _) = run(THREE, "go", models, Some(2.0 * OPENAI_CALL)).await;
    budget_fault(&outcome, "three", "spent $0.0195 already");
    assert_eq!(received(&server).len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_without_a_price_under_a_budget_stops_the_run_before_its_first_step() {
    let (server, url) = serve_fn(|_| Proto::OpenAi.answer(json!({"value": "text"}))).await;
    let models = models(&format!(
        "default = \"main\"\n[models]\nmain = {{ spec = \"openai:free\", base_url = \"{url}/v1\" }}\n"
    ));
    let (outcome, events) = run(THREE, "go", models, Some(1.0)).await;
    assert_eq!(outcome.status, Status::Fault);
    let fault = outcome.fault.unwrap();
    assert_eq!(fault.kind, FaultKind::NotRunnable);
    assert!(
        fault
            .message
            .contains("`openai:free` it may ask has no price")
            && fault.message.contains("[prices.\"openai:free\"]"),
        "{}",
        fault.message
    );
    assert!(received(&server).is_empty());
    assert!(events.0.lock().unwrap().is_empty(), "no step ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn siblings_spend_toward_the_run_their_cost_and_failovers_and_the_budget() {
    // A chain whose first model is down: each sibling fails over to the priced second.
    let (down, down_url) = serve_fn(|_| {
        Answer::Raw(
            503,
            vec![],
            r#"{"error": {"message": "overloaded"}}"#.into(),
        )
    })
    .await;
    let (up, up_url) = serve_fn(|_| Proto::OpenAi.answer(json!({"value": "fine"}))).await;
    let config = format!(
        "default = \"main\"\n[models]\n\
         down = {{ spec = \"openai:down\", base_url = \"{down_url}/v1\" }}\n\
         up = {{ spec = \"openai:up\", base_url = \"{up_url}/v1\" }}\n\
         main = [\"down\", \"up\"]\n\
         [prices.\"openai:down\"]\ninput = 100\noutput = 1000\ncached_input = 10\n\
         [prices.\"openai:up\"]\ninput = 100\noutput = 1000\ncached_input = 10\n"
    );
    let (outcome, events) = run(FAN, "a.rs b.rs c.rs", models(&config), None).await;
    assert_eq!(outcome.status, Status::Ok, "{outcome:#?}");
    assert_eq!(outcome.report["reviews"], json!(["fine", "fine", "fine"]));
    assert_eq!(outcome.usage.slots, 3);
    assert_eq!(outcome.usage.failovers, 3, "each sibling's failover counts");
    assert!(
        close(outcome.usage.cost.unwrap(), 3.0 * OPENAI_CALL),
        "{:?}",
        outcome.usage
    );
    let siblings: Vec<_> = events
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.sibling.is_some())
        .map(|e| e.slot.clone().unwrap())
        .collect();
    assert_eq!(siblings.len(), 3);
    assert!(
        siblings
            .iter()
            .all(|s| s.model == "openai:up" && s.failovers.len() == 1)
    );
    assert_eq!(received(&up).len(), 3);
    assert_eq!(received(&down).len(), 9, "3 tries per sibling");

    // Under a budget of two and a half answers, the third sibling's answer passes it.
    let (outcome, _) = run(
        FAN,
        "a.rs b.rs c.rs",
        models(&config),
        Some(2.5 * OPENAI_CALL),
    )
    .await;
    budget_fault(&outcome, "review", "cost budget exceeded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_run_counts_what_the_steps_before_the_resume_cost() {
    let (server, models) = openai_priced().await;
    let doc = ais_core::agir::read(THREE).unwrap();
    let inner = Arc::new(MemoryJournal::new("cost"));
    // Dies at the second commit: `two` was answered and journaled, its step not committed.
    let dying: Arc<dyn Journal> = Arc::new(DiesAt {
        inner: inner.clone(),
        n: 2,
        commits: AtomicUsize::new(0),
    });
    // A budget of two and a half answers: the first run spends two.
    let budget = 2.5 * OPENAI_CALL;
    let (first, _out) = runtime(models.clone(), Some(budget), Arc::default());
    let prep = first.prepare(&doc.program, Some(&doc.source_map));
    let died = first.run_journaled(&prep, Inputs::task("go"), dying).await;
    assert_eq!(died.status, Status::Fault, "{died:#?}");
    assert_eq!(received(&server).len(), 2);

    let (again, _out) = runtime(models, Some(budget), Arc::default());
    let journal: Arc<dyn Journal> = inner;
    let start = again.run_start(journal.run_id(), &prep, &Inputs::task("go"), Json::Null);
    let resumed = again.resume_journaled(&prep, journal, &start, None).await;
    // `two` is answered from the journal (asking nobody); `three`'s answer is the third
    // paid for, past the budget only when the first run's spending is counted.
    budget_fault(&resumed, "three", "cost budget exceeded");
    assert_eq!(received(&server).len(), 1, "only `three` was asked");
    assert!(
        close(resumed.usage.cost.unwrap(), 3.0 * OPENAI_CALL),
        "{:?}",
        resumed.usage
    );
    assert_eq!(resumed.usage.prompt_tokens, 3 * 42);
}
