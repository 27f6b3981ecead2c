//! Cost where a user sees it, on real runs of the binary against an OpenAI-compatible server on
//! 127.0.0.1 priced in ais.toml: the run's JSON and summary line, `ais runs` and `ais runs
//! show` (which model answered each exchange, and what it cost), the journal's HTML report,
//! and `--max-cost` stopping a run with the fault `budget_exhausted`.

use crate::providers_support;

use providers_support::{OwnServer, Proto};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

const PROGRAM: &str = r#"walker:
  name: Two
  carries:
    task: {type: str, role: input}
    draft: {type: str, produced_by: write}
    final: {type: str, produced_by: polish}
nodes:
  - {id: write, type: GEN-RAW, reads: [task], writes: [draft], doc: Write a first draft.}
  - {id: polish, type: GEN-RAW, reads: [draft], writes: [final], doc: Polish the draft.}
  - {id: done, type: TERMINAL, reads: [final]}
edges:
  - {from: write, to: polish}
  - {from: polish, to: done}
"#;

/// What one answer of the server costs at the prices below: 42 prompt tokens (16 cached at
/// $10, 26 at $100 per million) and 7 completion tokens at $1000 per million.
const CALL: f64 = (26.0 * 100.0 + 16.0 * 10.0 + 7.0 * 1000.0) / 1e6;

/// The model server: the same answer to every slot.
fn model_server() -> OwnServer {
    providers_support::serve_blocking(|_| Proto::OpenAi.answer(json!({"value": "some text"})))
}

/// A project: the program and an ais.toml whose default model is the server, priced.
fn project(server: &OwnServer) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("two.agir"), PROGRAM).unwrap();
    std::fs::write(
        dir.path().join("ais.toml"),
        format!(
            "default = \"main\"\n[models]\nmain = {{ spec = \"openai:priced\", base_url = \"{}/v1\" }}\n\
             [prices.\"openai:priced\"]\ninput = 100\noutput = 1000\ncached_input = 10\n",
            server.base
        ),
    )
    .unwrap();
    dir
}

fn ais(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(dir)
        .env_remove("AIS_MODEL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn the_run_the_listing_the_step_table_and_the_report_say_what_it_cost() {
    let server = model_server();
    let dir = project(&server);
    let o = ais(
        dir.path(),
        &["run", "two.agir", "--task", "go", "--format", "json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let cost = v["usage"]["cost"].as_f64().unwrap();
    assert!((cost - 2.0 * CALL).abs() < 1e-12, "{v:#}");
    let id = v["run"].as_str().unwrap().to_owned();

    // The summary line of a run shown as text.
    let o = ais(dir.path(), &["run", "two.agir", "--task", "go"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("84 prompt + 14 completion tokens, $0.0195"),
        "{}",
        text(&o)
    );

    // `ais runs`: a cost column.
    let o = ais(dir.path(), &["runs"]);
    let listing = text(&o);
    assert!(
        listing.lines().next().unwrap().contains("cost"),
        "{listing}"
    );
    let row = listing.lines().find(|l| l.starts_with(&id)).unwrap();
    assert!(row.contains("$0.0195"), "{listing}");

    // `ais runs show`: the totals, each step's cost, and which model answered each exchange.
    let o = ais(dir.path(), &["runs", "show", &id]);
    let shown = text(&o);
    assert!(shown.contains("$0.0195"), "{shown}");
    let step = shown.lines().find(|l| l.contains(" write ")).unwrap();
    assert!(step.contains("$0.0098"), "{shown}");
    let exchange = shown.lines().find(|l| l.contains(" slot ")).unwrap();
    assert!(
        exchange.contains("recorded · openai:priced $0.0098"),
        "{shown}"
    );
    let o = ais(dir.path(), &["runs", "show", &id, "--format", "json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["effects"][0]["result"]["completion"]["model"],
        "openai:priced"
    );
    assert!(v["steps"][1]["commit"]["spend"]["cost"].as_f64().unwrap() > 0.019);

    // The HTML report of the journaled run: the model that answered each slot, its cost and
    // the run's.
    let o = ais(dir.path(), &["report", &id, "-o", "page.html"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let page = std::fs::read_to_string(dir.path().join("page.html")).unwrap();
    assert!(page.contains("openai:priced · $0.0098"), "{page}");
    assert!(
        page.contains("<td class=\"n\" id=\"cost\">0.0195</td>"),
        "{page}"
    );
}

#[test]
fn max_cost_stops_the_run_with_the_budget_fault() {
    let server = model_server();
    let dir = project(&server);
    // Room for one answer and a half: the second takes the run past it.
    let budget = format!("{}", 1.5 * CALL);
    let o = ais(
        dir.path(),
        &[
            "run",
            "two.agir",
            "--task",
            "go",
            "--max-cost",
            &budget,
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["status"], "fault");
    assert_eq!(v["fault"]["kind"], "budget_exhausted");
    assert_eq!(v["fault"]["instruction"], "polish");
    assert!(
        v["fault"]["message"]
            .as_str()
            .unwrap()
            .contains("cost budget exceeded"),
        "{v:#}"
    );
    assert_eq!(providers_support::received(&server.server).len(), 2);

    // A budget that is no amount is refused before the run, as a usage error.
    let o = ais(
        dir.path(),
        &["run", "two.agir", "--task", "go", "--max-cost=-1"],
    );
    assert_eq!(o.status.code(), Some(64), "{}", text(&o));
    assert!(
        text(&o).contains("`-1` is no budget; write a non-negative amount of dollars"),
        "{}",
        text(&o)
    );
    assert!(providers_support::received(&server.server).is_empty());
}
