//! The README's example (`examples/writing_plans.agir`) run end to end by the runtime with each
//! real provider, against a server on 127.0.0.1 that answers each slot with the example's
//! shipped responses — and, when `AIS_LIVE_MODEL` names a provider, against that live model.

use crate::providers_support;

use ais_rt::llm::from_spec;
use ais_rt::llm::{Model, ModelErrorKind};
use ais_rt::{Inputs, RunOutcome, Runtime, Status};
use providers_support::*;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;

const TASK: &str = "Add a CSV export of the order history to the account page";

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name)
}

/// The instruction a request is for, as the system prompt names it.
fn instruction_of(body: &Value) -> Option<String> {
    let text = body.to_string();
    let start = text.find("# Instruction `")? + "# Instruction `".len();
    let len = text[start..].find('`')?;
    Some(text[start..start + len].to_string())
}

async fn run_example(model: Arc<dyn Model>) -> (RunOutcome, tempfile::TempDir) {
    let text = std::fs::read_to_string(example("writing_plans.agir")).unwrap();
    let doc = ais_core::agir::read(&text).unwrap();
    let out = tempfile::tempdir().unwrap();
    let runtime = Runtime::builder()
        .model(model)
        .out_dir(out.path().to_path_buf())
        .build();
    let inputs = Inputs::parse(&doc.program, Some(TASK.into()), &[]).unwrap();
    let outcome = runtime
        .run(&doc.program, Some(&doc.source_map), inputs)
        .await;
    (outcome, out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_example_runs_end_to_end_over_each_protocol() {
    let responses: Value = serde_json::from_str(
        &std::fs::read_to_string(example("writing_plans.responses.json")).unwrap(),
    )
    .unwrap();
    for proto in ALL {
        let canned = responses.clone();
        let (server, base) = serve_fn(move |body| {
            let id = instruction_of(body).unwrap_or_default();
            match canned.get(&id).and_then(|list| list.get(0)) {
                Some(value) => proto.answer(json!({ "value": value })),
                None => Answer::Raw(404, vec![], format!("no response for `{id}`")),
            }
        })
        .await;
        let env = proto.env(&base);
        let lookup = move |name: &str| env.get(name).cloned();
        let model = ais_rt::llm::from_spec_with(proto.spec(), &lookup, fast_options()).unwrap();
        let (outcome, _out) = run_example(model).await;
        assert_eq!(outcome.status, Status::Ok, "{proto:?}: {outcome:#?}");
        assert!(
            !outcome.scripted,
            "a provider's run is not labelled scripted"
        );
        let plan = outcome.report["plan_md"].as_str().unwrap();
        assert!(plan.contains("# CSV Export Implementation Plan"), "{plan}");
        assert!(plan.contains("### Task 2: download route"), "{plan}");
        assert_eq!(outcome.report["plan_ok"], json!(true));
        assert_eq!(outcome.usage.slots, 2);
        assert_eq!(
            outcome.usage.prompt_tokens, 84,
            "{proto:?}: {:?}",
            outcome.usage
        );
        assert_eq!(outcome.usage.completion_tokens, 14);

        let got = received(&server);
        let ids: Vec<String> = got.iter().filter_map(|r| instruction_of(&r.body)).collect();
        assert_eq!(ids, ["draft_header", "write_tasks"], "{proto:?}");
        for request in got.iter() {
            assert_eq!(request.path, proto.path());
            let schema = proto.schema_sent(&request.body);
            assert_eq!(
                schema["properties"]["value"]["type"], "string",
                "a str slot is wrapped"
            );
            assert_no_key("a request body", &request.body.to_string());
        }
        // The resident knowledge reaches the slot it is resident on, and only that one.
        assert!(!proto.texts(&got[0].body).contains("bite-sized tasks"));
        assert!(proto.texts(&got[1].body).contains("bite-sized tasks"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_that_is_not_set_up_fails_before_any_step() {
    // The CLI calls `from_spec` before it runs anything: a missing key stops it there.
    let lookup = |_: &str| None;
    let err = ais_rt::llm::from_spec_with("anthropic:claude-test", &lookup, fast_options())
        .err()
        .unwrap();
    assert_eq!(err.kind, ModelErrorKind::Config);
    assert_eq!(
        err.message,
        "ANTHROPIC_API_KEY is not set; `anthropic:claude-test` needs it (export ANTHROPIC_API_KEY=...)"
    );
}

/// The README's example against a live model: runs only when `AIS_LIVE_MODEL` names one, e.g.
/// `AIS_LIVE_MODEL=openai:gpt-4o-mini` with `OPENAI_API_KEY` set, or `ollama:llama3.2` with a
/// local Ollama. Skipped otherwise (CI has no key and no network).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_the_readme_example_runs_against_a_real_provider() {
    let Ok(spec) = std::env::var("AIS_LIVE_MODEL") else {
        eprintln!("skipped: set AIS_LIVE_MODEL (and the provider's key) to run the live check");
        return;
    };
    let model = from_spec(&spec).unwrap();
    let (outcome, _out) = run_example(model).await;
    assert_eq!(outcome.status, Status::Ok, "{spec}: {outcome:#?}");
    let plan = outcome.report["plan_md"].as_str().unwrap_or_default();
    assert!(!plan.trim().is_empty(), "{spec} wrote an empty plan");
    assert!(outcome.usage.prompt_tokens > 0 && outcome.usage.completion_tokens > 0);
    eprintln!(
        "{spec}: {} slots, {} prompt + {} completion tokens",
        outcome.usage.slots, outcome.usage.prompt_tokens, outcome.usage.completion_tokens
    );
}
