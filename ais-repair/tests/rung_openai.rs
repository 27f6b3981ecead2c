//! The rung against a real OpenAI-compatible server on loopback: the request carries the view
//! (not the whole program) and the catalog, and the answer is applied and adopted.

use crate::providers_support;

use ais_core::agir;
use ais_repair::{Config, findings_of, repair};
use providers_support::{Proto, fast_options, model, received, serve};
use serde_json::json;

const PROGRAM: &str = include_str!("../../tests/fixtures/repair/notes.agir");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_compatible_server_answers_a_patch_that_is_adopted() {
    let patch = json!({"ops": [
        {"op": "set_traces_to", "target": "instruction:polish", "traces_to": ["r_polish"]}
    ]});
    // First a chatty non-answer, then the patch.
    let (server, base) = serve(vec![
        providers_support::ok(json!({
            "id": "chatcmpl-0",
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": "I would trace polish to r_polish."}}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 9},
        })),
        Proto::OpenAi.answer(patch),
    ])
    .await;
    let model = model(Proto::OpenAi, &base, fast_options());
    let doc = agir::read(PROGRAM).unwrap();
    let findings = findings_of(&doc, &Config::default());
    assert_eq!(findings.len(), 2);
    let done = repair(
        "notes.agir",
        PROGRAM,
        &findings,
        model.as_ref(),
        &Config::default(),
    )
    .await
    .unwrap();
    assert_eq!(done.calls, 2, "{:#?}", done.attempts);
    assert_eq!(
        done.attempts[0].discarded,
        Some(ais_repair::Discarded::Malformed)
    );
    assert_eq!(done.attempts[1].discarded, None, "{:#?}", done.attempts);
    assert!(done.findings.is_empty());
    assert_eq!(done.deviations.len(), 1);
    assert!(done.deviations[0].substituted.contains("openai:gpt-test"));
    let requests = received(&server);
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert_eq!(r.path, "/v1/chat/completions");
        let texts = Proto::OpenAi.texts(&r.body);
        assert!(texts.contains("Polish the note."), "{texts}");
        assert!(texts.contains("set_traces_to"));
        assert!(
            !texts.contains("wiki page"),
            "an instruction outside the view reached the model: {texts}"
        );
    }
    // The second request says why the first answer was discarded.
    let second = Proto::OpenAi.texts(&requests[1].body);
    assert!(second.contains("discarded (malformed)"), "{second}");
}
