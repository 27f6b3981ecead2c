//! ais programs as Restate workflows, against a real `restate-server` on loopback (skipped with
//! a notice when none is installed; `.ci/run` installs it).

use crate::support;

use ais_restate::{Endpoint, RunRequest};
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
    rt.run(&doc.program, Some(&doc.source_map), inputs)
        .await
        .to_json()
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

const GATED: &str = r#"---
name: gated_cleanup
description: Scan, then wait for a human's yes before deleting.
---
walker:
  name: GatedCleanup
  carries:
    task: {type: str, role: input}
    count_file: {type: str, role: input}
    confirm: {type: str, role: input, doc: "Type yes to delete the old files."}
    found: {type: str, produced_by: scan}
    approved: {type: bool, produced_by: parse}
    result: {type: str, produced_by: act}
tools:
  scan_files:
    sig: "(count_file) -> str"
    surface: ACT
    body: |
      def scan_files(count_file: str) -> str:
          with open(count_file, "a", encoding="utf-8") as f:
              f.write("scanned\n")
          return "3 files"
nodes:
  - {id: scan, type: ACT, owner: code, tool: scan_files, reads: [count_file], writes: [found]}
  - {id: parse, type: CODE, owner: code, reads: [confirm], writes: [approved], body: "confirm == 'yes'"}
  - {id: gate, type: ROUTE, owner: code, reads: [approved]}
  - {id: act, type: CODE, owner: code, reads: [found], writes: [result], body: "'deleted ' + found"}
  - {id: keep, type: CODE, owner: code, reads: [found], writes: [result], body: "'kept ' + found"}
  - {id: done, type: TERMINAL, reads: [result]}
edges:
  - {from: scan, to: parse}
  - {from: parse, to: gate}
  - {from: gate, to: act, guard: "approved == true"}
  - {from: gate, to: keep, guard: otherwise}
  - {from: act, to: done}
  - {from: keep, to: done}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_run_survives_a_restart_of_the_endpoint_and_the_server() {
    let Some(mut server) = server("restate::pause_survives_restart").await else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let count = out.path().join("count.txt");
    let program = ais_core::agir::read(GATED).unwrap().program;
    let endpoint = || {
        Endpoint::new(ais_rt::Runtime::builder().out_dir(out.path().to_owned()))
            .program(program.clone())
            .unwrap()
    };
    let served = Served::start(endpoint());
    let port: u16 = served.url.rsplit(':').next().unwrap().parse().unwrap();
    server.register(&served.url).await.unwrap();
    let ingress = ingress(&server);
    let request = RunRequest {
        task: Some("approve and delete the old files".into()),
        inputs: [("count_file".to_owned(), json!(count.to_str().unwrap()))]
            .into_iter()
            .collect(),
    };
    ingress
        .submit("gated_cleanup", "p1", &request)
        .await
        .unwrap();
    let followed = ingress.follow("gated_cleanup", "p1").await.unwrap();
    let ais_restate::Followed::Paused(pause) = followed else {
        panic!("the run should pause for `confirm`: {followed:?}");
    };
    assert_eq!(pause["carry"], "confirm", "{pause}");
    assert_eq!(pause["prompt"], "Type yes to delete the old files.");
    // An answer to a run that is not waiting is refused, not lost.
    assert!(
        ingress
            .answer("gated_cleanup", "nope", "yes")
            .await
            .is_err()
    );

    drop(served);
    server.restart().await.unwrap();
    let served = Served::start_on(endpoint(), port);
    let pause = ingress.pause("gated_cleanup", "p1").await.unwrap();
    assert_eq!(
        pause.as_ref().map(|p| p["carry"].clone()),
        Some(json!("confirm"))
    );
    ingress.answer("gated_cleanup", "p1", "yes").await.unwrap();
    let report = ingress.output("gated_cleanup", "p1").await.unwrap();
    drop(served);
    assert_eq!(report["status"], "ok", "{report:#}");
    assert_eq!(report["report"]["result"], "deleted 3 files", "{report:#}");
    assert_eq!(report["report"]["approved"], true, "{report:#}");
    // The scan ran once: the replay after the restart answered it from Restate's journal.
    assert_eq!(std::fs::read_to_string(&count).unwrap(), "scanned\n");
}
