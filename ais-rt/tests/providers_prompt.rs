//! What a slot's prompt says of its operands, as an OpenAI-compatible server on 127.0.0.1
//! receives it: each operand labelled with its own type — a SPAWN sibling's item as the item's
//! type (once, not again under the list's name and type) and numbered "sibling 1 of 2" as a
//! person counts, a declared enum with its members.

use crate::providers_support;

use ais_rt::llm::from_spec_with;
use ais_rt::{Inputs, Runtime, Status};
use providers_support::*;
use serde_json::{Value, json};

const PROGRAM: &str = r#"types:
  Sentiment:
    kind: enum
    members: [positive, negative, neutral]
walker:
  name: Reviews
  carries:
    task: {type: str, role: input}
    rows: {type: "list[str]", role: input, doc: "The reviews, one per row."}
    labels: {type: "list[Sentiment]", produced_by: classify}
    summary: {type: str, produced_by: sum_up}
nodes:
  - {id: classify, type: SPAWN, reads: [rows], writes: [labels], doc: Label this one review., concurrency: {isolation: shared_read, max_parallel: 1}}
  - {id: sum_up, type: GEN-RAW, reads: [labels], writes: [summary], doc: Sum the labels up.}
  - {id: done, type: TERMINAL, reads: [summary]}
edges:
  - {from: classify, to: sum_up}
  - {from: sum_up, to: done}
"#;

/// The user message of an OpenAI chat request.
fn user(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_operand_is_labelled_with_its_own_type() {
    let (server, base) = serve_fn(|body| {
        let text = user(body);
        let value = if text.contains("Great product") {
            json!("positive")
        } else if text.contains("Broke in a day") {
            json!("negative")
        } else {
            json!("1 positive, 1 negative")
        };
        Proto::OpenAi.answer(json!({ "value": value }))
    })
    .await;
    let env = Proto::OpenAi.env(&base);
    let lookup = move |name: &str| env.get(name).cloned();
    let model = from_spec_with(Proto::OpenAi.spec(), &lookup, fast_options()).unwrap();
    let doc = ais_core::agir::read(PROGRAM).unwrap();
    let out = tempfile::tempdir().unwrap();
    let runtime = Runtime::builder()
        .model(model)
        .out_dir(out.path().to_path_buf())
        .build();
    let inputs = Inputs::parse(
        &doc.program,
        Some("Label the reviews".into()),
        &[(
            "rows".to_owned(),
            r#"["Great product", "Broke in a day"]"#.to_owned(),
        )],
    )
    .unwrap();
    let outcome = runtime
        .run(&doc.program, Some(&doc.source_map), inputs)
        .await;
    assert_eq!(outcome.status, Status::Ok, "{outcome:#?}");
    assert_eq!(outcome.report["labels"], json!(["positive", "negative"]));

    let got = received(&server);
    let mut users: Vec<String> = got.iter().map(|r| user(&r.body)).collect();
    assert_eq!(users.len(), 3, "{users:#?}");
    // The two siblings run in parallel and may reach the server in either order;
    // the joining step asks last.
    if users[1].contains("Great product") {
        users.swap(0, 1);
    }
    // A sibling's item is a `str`, said once, with the list's doc; no `rows (list[str])`.
    assert_eq!(
        users[0],
        "# Operands\n\n\
         ## subtask (str)\n\
         this sibling's own sub-task: one item of `rows` (The reviews, one per row.)\n\
         ```\nGreat product\n```\n\n\
         # Your answer\n\n\
         Answer with exactly one of: positive, negative, neutral.\n\
         You are sibling 1 of 2 in a parallel fan-out; do your share.\n\
         Put the result under the key \"value\"."
    );
    assert!(
        users[1].contains("```\nBroke in a day\n```"),
        "{}",
        users[1]
    );
    assert!(!users[1].contains("## rows"), "{}", users[1]);
    // Siblings are numbered for the model as a person counts them: from 1, out of how many.
    assert!(
        users[1].contains("You are sibling 2 of 2 in a parallel fan-out"),
        "{}",
        users[1]
    );
    // An enum (here a list of one) says its members.
    assert_eq!(
        users[2],
        "# Operands\n\n\
         ## labels (list[Sentiment]; Sentiment is one of: positive, negative, neutral)\n\
         ```json\n[\n  \"positive\",\n  \"negative\"\n]\n```\n\n\
         # Your answer\n\n\
         Put the result under the key \"value\"."
    );
}
