//! ais programs as Restate workflows, against a real `restate-server` on loopback (skipped with
//! a notice when none is installed; `.ci/run` installs it).

mod support;

use ais_restate::{Endpoint, RunRequest, outcome_json};
use ais_rt::Inputs;
use serde_json::{Value, json};
use support::*;

/// What must be equal between two runs of one program: all but where the pause handle lives.
fn comparable(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("pause");
    v
}

async fn embedded(name: &str, responses: &str, task: &str, inputs: &[(&str, &str)]) -> Value {
    let out = tempfile::tempdir().unwrap();
    let doc = example(name);
    let pairs: Vec<(String, String)> = inputs
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    let inputs = Inputs::parse(&doc.program, Some(task.into()), &pairs).unwrap();
    let rt = runtime(responses, out.path()).build();
    outcome_json(&rt.run(&doc.program, Some(&doc.source_map), inputs).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_example_gives_the_same_report_on_restate_as_on_the_embedded_runtime() {
    let Some(server) = server("restate::same_report").await else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let cases = [
        (
            "writing_plans",
            "writing_plans.responses.json",
            "Add a CSV export of a user's orders to the account page",
            vec![],
        ),
        (
            "draft_changelog",
            "release_notes.responses.json",
            "Release 2.4.0",
            vec![("commits", "feat: export orders as CSV\nfix: keep the cart")],
        ),
    ];
    for (name, responses, task, inputs) in cases {
        let endpoint = Endpoint::new(runtime(responses, out.path()))
            .program(example(name).program)
            .unwrap();
        let workflow = endpoint.names()[0].clone();
        let served = Served::start(endpoint);
        server.register(&served.url).await.unwrap();
        let ingress = ingress(&server);
        let request = RunRequest {
            task: Some(task.into()),
            inputs: inputs
                .iter()
                .map(|(n, v)| (n.to_string(), json!(v)))
                .collect(),
        };
        ingress.submit(&workflow, "r1", &request).await.unwrap();
        let on_restate = ingress.output(&workflow, "r1").await.unwrap();
        let local = embedded(name, responses, task, &inputs).await;
        assert_eq!(on_restate["status"], "ok", "{name}: {on_restate:#}");
        assert_eq!(comparable(on_restate), comparable(local), "{name}");
        drop(served);
    }
}
