//! `ais runs certify`: the compliance certificate of a real run (`ais run` as a subprocess, its
//! SQLite journal on disk), counted against a count made by hand, broken by a journal row
//! edited after the fact, refused for a program without a provenance record, and rendered as a
//! page that escapes what the program and the model wrote.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn ais(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ais"));
    c.env_remove("AIS_MODEL")
        .env_remove("RUST_LOG")
        .env("AIS_STATE_DIR", dir.join("keys"))
        .env("NO_COLOR", "1");
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs `program` on the triage example's scripted answers with the output root `out`; the
/// run's id.
fn run(dir: &Path, program: &Path, out: &Path) -> String {
    let o = ais(dir)
        .arg("run")
        .arg(program)
        .args([
            "--task",
            "I was charged twice for my Pro plan. Order #88412.",
            "--format",
            "json",
            "--model",
        ])
        .arg(format!(
            "scripted:{ROOT}/examples/triage_ticket.responses.json"
        ))
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["run"].as_str().unwrap().to_owned()
}

fn certify(dir: &Path, out: &Path, args: &[&str]) -> Output {
    ais(dir)
        .args(["runs", "certify"])
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

fn certificate(dir: &Path, out: &Path, id: &str) -> serde_json::Value {
    let o = certify(dir, out, &[id, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Each obligation's standing, by id.
fn standings(cert: &serde_json::Value) -> Vec<(String, String)> {
    cert["obligations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["id"].as_str().unwrap().to_owned(),
                o["standing"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// `ais test SUITE` refusing the suite before it runs (exit 2): its error text.
fn refused(dir: &Path, suite: &Path) -> String {
    let o = ais(dir)
        .current_dir(dir)
        .arg("test")
        .arg(suite)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    text(&o.stderr)
}

fn triage() -> PathBuf {
    Path::new(ROOT).join("examples/agir/triage_ticket.agir")
}

/// The triage example on a billing ticket: its record lists 7 obligations, 3 of them
/// mandatory (classify, route, queue). By hand: `classify` is a model slot that ran
/// (observable only), `route` and `assign` are code that ran (guaranteed); of the four
/// discretionary reply rules only billing's ran. 3 of 3 mandatory performed: 100%. Then a
/// model answer edited in the SQLite journal breaks `--verify`, naming the row; and a claim
/// edited in the certificate does too.
#[test]
fn the_triage_certificate_matches_a_hand_count_and_an_edited_journal_row_breaks_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let id = run(dir.path(), &triage(), &out);
    let cert = certificate(dir.path(), &out, &id);
    assert_eq!(
        standings(&cert),
        pairs(&[
            ("r_classify", "observable_only"),
            ("r_route", "guaranteed"),
            ("r_billing", "observable_only"),
            ("r_bug", "not_reached"),
            ("r_account", "not_reached"),
            ("r_general", "not_reached"),
            ("r_queue", "guaranteed"),
        ])
    );
    let m = &cert["mandatory"];
    assert_eq!(
        (m["total"].as_u64(), m["performed"].as_u64()),
        (Some(3), Some(3))
    );
    assert_eq!(m["performed_percent"].as_f64(), Some(100.0));
    assert_eq!(
        (m["guaranteed"].as_u64(), m["observable_only"].as_u64()),
        (Some(2), Some(1))
    );
    // The evidence of an observable obligation is its slot's exchange.
    let classify = &cert["obligations"][0]["by"][0];
    assert_eq!(classify["owner"], "model");
    let labels: Vec<&str> = classify["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            cert["rows"][i.as_u64().unwrap() as usize]["label"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert!(
        labels.contains(&"step 1 effect 0 (slot classify)"),
        "{labels:?}"
    );

    let file = dir.path().join("cert.json");
    std::fs::write(&file, serde_json::to_string_pretty(&cert).unwrap()).unwrap();
    let verify = |args: &[&str]| certify(dir.path(), &out, args);
    let file_arg = file.to_str().unwrap();
    let ok = verify(&["--verify", file_arg]);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
    assert!(text(&ok.stdout).contains("verified against the journal"));

    // An attacker rewrites the billing reply the model gave, in the journal itself.
    let db = rusqlite::Connection::open(out.join(".ais/runs.db")).unwrap();
    let changed = db
        .execute(
            "UPDATE steps SET effects = replace(effects, 'two business days', 'one hour') WHERE instruction = 'billing_reply'",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(db);
    let broken = verify(&["--verify", file_arg]);
    assert_eq!(broken.status.code(), Some(1), "{}", text(&broken.stdout));
    let err = text(&broken.stderr);
    assert!(
        err.contains("the journal row `step 3 effect 0 (slot billing_reply)` was changed"),
        "{err}"
    );

    // A claim edited in the certificate (an observable obligation promoted to guaranteed) does
    // not verify either, even against an intact journal.
    let out2 = dir.path().join("out2");
    let id2 = run(dir.path(), &triage(), &out2);
    let mut forged = certificate(dir.path(), &out2, &id2);
    forged["obligations"][0]["standing"] = "guaranteed".into();
    std::fs::write(&file, forged.to_string()).unwrap();
    let o = certify(dir.path(), &out2, &["--verify", file_arg]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    assert!(
        text(&o.stderr).contains("obligation `r_classify` (guaranteed on the certificate, observable_only in the journal)"),
        "{}",
        text(&o.stderr)
    );
}

/// A mandatory obligation whose only realization is off this run's path is *not reached*, and
/// it is not performed: with the bug-report rule made mandatory, the billing run performs 3
/// of 4 (75%), and the suite assertion `certificate: {mandatory_performed: 100%}` fails naming
/// it, while `75%` passes.
#[test]
fn a_mandatory_obligation_off_the_path_is_not_reached_and_not_performed() {
    let dir = tempfile::tempdir().unwrap();
    let source = std::fs::read_to_string(triage()).unwrap();
    let needle = "force: discretionary\n      quote: \"For a bug report";
    assert!(source.contains(needle));
    let program = dir.path().join("triage.agir");
    std::fs::write(
        &program,
        source.replace(needle, "force: mandatory\n      quote: \"For a bug report"),
    )
    .unwrap();
    let out = dir.path().join("out");
    let id = run(dir.path(), &program, &out);
    let cert = certificate(dir.path(), &out, &id);
    let m = &cert["mandatory"];
    assert_eq!(
        (
            m["total"].as_u64(),
            m["performed"].as_u64(),
            m["not_reached"].as_u64()
        ),
        (Some(4), Some(3), Some(1))
    );
    assert_eq!(m["performed_percent"].as_f64(), Some(75.0));
    let text_form = certify(dir.path(), &out, &[&id]);
    assert!(
        text(&text_form.stdout).contains("mandatory obligations performed: 3/4 (75%)"),
        "{}",
        text(&text_form.stdout)
    );

    // The same as a suite assertion, failing and passing.
    let suite = dir.path().join("triage.aistest.yaml");
    std::fs::write(
        &suite,
        format!(
            "program: triage.agir\nmodel: scripted:{ROOT}/examples/triage_ticket.responses.json\ncases:\n  - name: all of it\n    task: I was charged twice.\n    expect:\n      - certificate: {{mandatory_performed: 100%}}\n  - name: three of four\n    task: I was charged twice.\n    expect:\n      - certificate: {{mandatory_performed: 75%}}\n"
        ),
    )
    .unwrap();
    let o = ais(dir.path())
        .args(["test", "--format", "json"])
        .arg(&suite)
        .arg("--out")
        .arg(dir.path().join("test-out"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let result: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let check = |case: usize| &result["suites"][0]["cases"][case]["results"][0]["checks"][0];
    assert_eq!(check(0)["passed"], false);
    let seen = check(0)["seen"].as_str().unwrap();
    assert!(
        seen.starts_with("3/4 mandatory obligations performed (75.0%: 2 guaranteed, 1 observable only); not performed: `r_bug` not reached"),
        "{seen}"
    );
    assert_eq!(check(1)["passed"], true, "{}", check(1));
}

/// A run of a program with no provenance record cannot be certified: the error says why and
/// how to give the program one (`ais lift`, or a `faithfulness` section).
#[test]
fn a_program_without_a_provenance_record_is_refused_naming_ais_lift() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("plain.agir");
    std::fs::write(
        &program,
        "walker:\n  carries:\n    task: {type: str, role: input}\nnodes:\n  - {id: done, type: TERMINAL, reads: [task]}\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let id = run(dir.path(), &program, &out);
    let o = certify(dir.path(), &out, &[&id]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("has no provenance record"), "{err}");
    assert!(err.contains("ais lift SKILL.md"), "{err}");
    assert!(err.contains("faithfulness:"), "{err}");
    // And a suite that asks for a certificate of it is refused before it runs, located.
    let suite = dir.path().join("plain.aistest.yaml");
    std::fs::write(
        &suite,
        "program: plain.agir\ncases:\n  - name: x\n    expect:\n      - certificate: {mandatory_performed: 100%}\n",
    )
    .unwrap();
    let err = refused(dir.path(), &suite);
    assert!(err.contains("plain.aistest.yaml:5:"), "{err}");
    assert!(err.contains("provenance record"), "{err}");
}

/// `mandatory_performed` takes a percentage: a bare number, a number over 100 and a word are
/// refused at their line and column, saying what to write.
#[test]
fn a_bad_certificate_bound_is_refused_where_it_stands() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(triage(), dir.path().join("triage.agir")).unwrap();
    for (value, says) in [
        ("100", "`100` is a number, not a percentage: write `100%`"),
        ("120%", "`120%` is out of range"),
        ("all", "`all` is no percentage"),
    ] {
        let suite = dir.path().join("bad.aistest.yaml");
        std::fs::write(
            &suite,
            format!("program: triage.agir\ncases:\n  - name: x\n    expect:\n      - certificate: {{mandatory_performed: {value}}}\n"),
        )
        .unwrap();
        let err = refused(dir.path(), &suite);
        assert!(err.contains("bad.aistest.yaml:5:"), "{value}: {err}");
        assert!(err.contains(says), "{value}: {err}");
    }
}

/// The page escapes what the program says (a quote from a hostile skill, an obligation id)
/// and declares the report's Content-Security-Policy: no markup of the program reaches it.
#[test]
fn the_certificate_page_escapes_hostile_text() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("shout.agir");
    std::fs::write(
        &program,
        r#"walker:
  carries:
    task: {type: str, role: input}
    loud: {type: str, produced_by: shout}
nodes:
  - {id: shout, type: CODE, owner: code, reads: [task], writes: [loud], body: "task.upper()", traces_to: [r1]}
  - {id: done, type: TERMINAL, reads: [loud]}
edges:
  - {from: shout, to: done}
faithfulness:
  obligations:
    - {id: r1, kind: step, force: mandatory, quote: "Shout it. <script>alert(1)</script><img src=x onerror=alert(2)> \"'&"}
"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    let id = run(dir.path(), &program, &out);
    let o = certify(dir.path(), &out, &[&id, "--format", "html"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let page = text(&o.stdout);
    assert!(page.contains("Content-Security-Policy\" content=\"default-src 'none'"));
    assert!(!page.contains("<script"), "{page}");
    assert!(!page.contains("<img"), "{page}");
    assert!(page.contains(
        "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt; &quot;&#39;&amp;"
    ));
    assert!(page.contains("<b id=\"percent\">1/1 (100%)</b>"), "{page}");
    assert!(
        page.contains("<tr class=\"guaranteed\"><td><code>r1</code>"),
        "{page}"
    );
}
