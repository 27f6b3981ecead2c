//! Placement (`ais_rt`), the scheduler's seam apart from the journal's: a placement
//! that runs a SPAWN's siblings and a CALL's callee on another runtime — through JSON, as
//! across a network — gives the report of the in-process run over a plain memory journal; the
//! orchestrator's own model is never asked for a sibling's answer; a job for another program is
//! refused by name; the cap and the step budget are checked before any job is handed over; a
//! placement that fails stops the run with the fault `placement`; a run with no journal keeps
//! its work here; a callee elsewhere that asks a human pauses the caller with its saved state,
//! and the answer continues it, then the caller — a saved state of another program is refused.

use crate::common;

use ais_rt::journal::MemoryJournal;
use ais_rt::journal::{BoxFuture, Json};
use ais_rt::llm::ScriptedModel;
use ais_rt::{CallJob, CallOutcome, Placement, PlacementError, SiblingJob, SiblingOutcome};
use ais_rt::{FaultKind, Inputs, Prepared, Runtime, Status};
use common::{block_on, program};
use serde_json::json;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// A SPAWN of one worker slot per item, then a CALL of `Shout` over the answers.
const FAN: &str = r#"walker:
  name: Fan
  carries:
    task: {type: str, role: input}
    items: {type: "list[str]", role: input}
    answers: {type: "list[str]", produced_by: fan}
    joined: {type: str, produced_by: join}
    shouted: {type: str, produced_by: call}
nodes:
  - {id: fan, type: SPAWN, owner: code, reads: [items], writes: [answers], doc: "Answer this item.", concurrency: {isolation: shared_read}}
  - {id: join, type: CODE, owner: code, reads: [answers], writes: [joined], body: "', '.join(answers)"}
  - {id: call, type: CALL, owner: model, reads: [joined], writes: [shouted], doc: "Shout it.", target: Shout}
  - {id: done, type: TERMINAL, reads: [answers, shouted]}
edges:
  - {from: fan, to: join}
  - {from: join, to: call}
  - {from: call, to: done}
"#;

const SHOUT: &str = r#"walker:
  name: Shout
  carries:
    task: {type: str, role: input}
    joined: {type: str, role: input}
    shouted: {type: str, produced_by: shout}
nodes:
  - {id: shout, type: CODE, owner: code, reads: [joined], writes: [shouted], body: "joined.upper()"}
  - {id: done, type: TERMINAL, reads: [shouted]}
edges:
  - {from: shout, to: done}
"#;

fn model(n: usize) -> Arc<ScriptedModel> {
    let mut script = serde_json::Map::new();
    for i in 0..n {
        script.insert(format!("fan[{i}]"), json!([format!("answer {i}")]));
    }
    Arc::new(ScriptedModel::from_json(Path::new("fan.json"), Json::Object(script)).unwrap())
}

fn runtime(model: Arc<ScriptedModel>, max_steps: u64) -> Runtime {
    Runtime::builder()
        .model(model)
        .max_steps(max_steps)
        .program("Shout", program(SHOUT).program)
        .build()
}

/// A placement whose siblings and callees run on `other` (another process, as far as the run
/// can tell: every job and outcome crosses as JSON).
struct Elsewhere {
    other: Runtime,
    fan: Arc<Prepared>,
    shout: Arc<Prepared>,
    jobs: Mutex<Vec<SiblingJob>>,
    calls: Mutex<Vec<CallJob>>,
}

fn across<T: serde::Serialize, U: serde::de::DeserializeOwned>(t: &T) -> U {
    serde_json::from_value(serde_json::to_value(t).unwrap()).unwrap()
}

impl Placement for Elsewhere {
    fn places_siblings(&self) -> bool {
        true
    }

    fn siblings<'a>(
        &'a self,
        jobs: Vec<SiblingJob>,
        _limit: Option<usize>,
    ) -> BoxFuture<'a, Result<Vec<SiblingOutcome>, PlacementError>> {
        Box::pin(async move {
            let mut out = Vec::new();
            for job in jobs {
                self.jobs.lock().unwrap().push(job.clone());
                let outcome = self.other.run_sibling(&self.fan, across(&job), None).await;
                out.push(across(&outcome));
            }
            Ok(out)
        })
    }

    fn places_call(&self, callee: &Prepared) -> bool {
        callee.digest() == self.shout.digest()
    }

    fn call<'a>(&'a self, job: CallJob) -> BoxFuture<'a, Result<CallOutcome, PlacementError>> {
        Box::pin(async move {
            self.calls.lock().unwrap().push(job.clone());
            let callee = Arc::new(MemoryJournal::new(format!("{}/c{}", job.run, job.at_step)));
            let outcome = self
                .other
                .run_callee(&self.shout, &across(&job), callee)
                .await;
            Ok(across(&outcome))
        })
    }
}

fn inputs(n: usize) -> Inputs {
    let items: Vec<String> = (0..n).map(|i| format!("item {i}")).collect();
    let pairs = [("items".to_owned(), serde_json::to_string(&items).unwrap())];
    Inputs::parse(&program(FAN).program, Some("go".into()), &pairs).unwrap()
}

/// The placement, and the orchestrator's runtime placing its work there.
fn elsewhere(n: usize, max_steps: u64) -> (Arc<Elsewhere>, Runtime, Arc<Prepared>) {
    // The orchestrator's model has no answers: a sibling run here would fail.
    let here = runtime(model(0), max_steps);
    let other = runtime(model(n), max_steps);
    let fan = here.prepare(&program(FAN).program, None);
    let shout = here.prepare(&program(SHOUT).program, None);
    let placement = Arc::new(Elsewhere {
        other,
        fan: fan.clone(),
        shout,
        jobs: Mutex::default(),
        calls: Mutex::default(),
    });
    let here = here.placed(placement.clone());
    (placement, here, fan)
}

fn journal() -> Arc<MemoryJournal> {
    Arc::new(MemoryJournal::new("run-1"))
}

#[test]
fn siblings_and_a_callee_run_elsewhere_give_the_in_process_report() {
    let n = 7;
    let local = runtime(model(n), 1000);
    let prepared = local.prepare(&program(FAN).program, None);
    let expected = block_on(local.run_prepared(&prepared, inputs(n)));
    assert_eq!(expected.status, Status::Ok, "{:?}", expected.fault);
    assert_eq!(
        expected.report["shouted"],
        json!("ANSWER 0, ANSWER 1, ANSWER 2, ANSWER 3, ANSWER 4, ANSWER 5, ANSWER 6")
    );

    let (placement, here, fan) = elsewhere(n, 1000);
    let got = block_on(here.run_journaled(&fan, inputs(n), journal()));
    assert_eq!(got.to_json(), expected.to_json());
    let jobs = placement.jobs.lock().unwrap();
    assert_eq!(
        jobs.iter().map(|j| j.index).collect::<Vec<_>>(),
        (0..n).collect::<Vec<_>>()
    );
    assert!(
        jobs.iter()
            .all(|j| j.instruction == "fan" && j.run == "run-1")
    );
    let calls = placement.calls.lock().unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0].values,
        vec![(
            "joined".to_owned(),
            json!("answer 0, answer 1, answer 2, answer 3, answer 4, answer 5, answer 6")
        )]
    );
    assert_eq!(calls[0].depth, 1);
}

#[test]
fn the_step_budget_is_checked_before_any_sibling_is_handed_over() {
    let (placement, here, fan) = elsewhere(9, 5);
    let got = block_on(here.run_journaled(&fan, inputs(9), journal()));
    assert_eq!(got.status, Status::Fault);
    assert_eq!(got.fault.as_ref().unwrap().kind, FaultKind::BudgetExhausted);
    assert!(placement.jobs.lock().unwrap().is_empty());
}

#[test]
fn a_job_of_another_program_or_step_is_refused_by_name() {
    let (placement, _, fan) = elsewhere(2, 100);
    let job = SiblingJob {
        run: "run-1".into(),
        digest: fan.digest().to_owned(),
        step: 0,
        instruction: "fan".into(),
        at_step: 1,
        index: 0,
        subtask: json!("item 0"),
        task: "go".into(),
        carries: vec![],
        answer: None,
    };
    let ok = block_on(placement.other.run_sibling(&fan, job.clone(), None));
    assert!(
        matches!(&ok, SiblingOutcome::Done { value: Ok(v), .. } if *v == json!("answer 0")),
        "{ok:?}"
    );
    for (bad, why) in [
        (
            SiblingJob {
                digest: "0000".into(),
                ..job.clone()
            },
            "another version of the program",
        ),
        (
            SiblingJob {
                step: 1,
                ..job.clone()
            },
            "is not that SPAWN",
        ),
        (
            SiblingJob {
                instruction: "join".into(),
                ..job.clone()
            },
            "is not that SPAWN",
        ),
    ] {
        match block_on(placement.other.run_sibling(&fan, bad, None)) {
            SiblingOutcome::Fault { kind, message } => {
                assert_eq!(kind, FaultKind::InvalidHandle);
                assert!(
                    message.contains(why) && message.contains("SPAWN `"),
                    "{message}"
                );
            }
            other => panic!("refused, not {other:?}"),
        }
    }
}

/// A placement that takes the siblings and cannot hand them over.
struct Unreachable;

impl Placement for Unreachable {
    fn places_siblings(&self) -> bool {
        true
    }

    fn siblings<'a>(
        &'a self,
        jobs: Vec<SiblingJob>,
        _limit: Option<usize>,
    ) -> BoxFuture<'a, Result<Vec<SiblingOutcome>, PlacementError>> {
        let n = jobs.len();
        Box::pin(async move {
            Err(PlacementError::new(format!(
                "{n} siblings: the other side does not answer"
            )))
        })
    }
}

#[test]
fn a_placement_that_cannot_hand_the_siblings_over_stops_the_run_with_the_fault_placement() {
    let here = Runtime::builder()
        .model(model(3))
        .program("Shout", program(SHOUT).program)
        .placement(Arc::new(Unreachable))
        .build();
    let fan = here.prepare(&program(FAN).program, None);
    let got = block_on(here.run_journaled(&fan, inputs(3), journal()));
    assert_eq!(got.status, Status::Fault);
    let fault = got.fault.as_ref().unwrap();
    assert_eq!(fault.kind, FaultKind::Placement);
    assert_eq!(fault.instruction, "fan");
    assert!(
        fault
            .message
            .contains("3 siblings: the other side does not answer"),
        "{}",
        fault.message
    );
    assert_eq!(got.to_json()["fault"]["kind"], json!("placement"));
}

#[test]
fn a_run_without_a_journal_keeps_its_siblings_and_callee_here() {
    let n = 3;
    let (placement, _, fan) = elsewhere(n, 1000);
    // The same placement, on a runtime whose own model answers: the run names no journal,
    // so there is no run for a job to name, and everything runs in process.
    let here = runtime(model(n), 1000).placed(placement.clone());
    let got = block_on(here.run_prepared(&fan, inputs(n)));
    assert_eq!(got.status, Status::Ok, "{:?}", got.fault);
    assert_eq!(got.report["shouted"], json!("ANSWER 0, ANSWER 1, ANSWER 2"));
    assert!(placement.jobs.lock().unwrap().is_empty());
    assert!(placement.calls.lock().unwrap().is_empty());
}

/// CALLs `Confirm`, which needs a human's `confirm`, and wraps its verdict.
const ASKING: &str = r#"walker:
  name: Publish
  carries:
    task: {type: str, role: input}
    topic: {type: str, produced_by: pick}
    verdict: {type: str, produced_by: check}
    final: {type: str, produced_by: wrap}
nodes:
  - {id: pick, type: CODE, owner: code, reads: [task], writes: [topic], body: "'topic of ' + task"}
  - {id: check, type: CALL, owner: model, reads: [topic], writes: [verdict], doc: "Have it confirmed.", target: Confirm}
  - {id: wrap, type: CODE, owner: code, reads: [verdict], writes: [final], body: "'published: ' + verdict"}
  - {id: done, type: TERMINAL, reads: [final]}
edges:
  - {from: pick, to: check}
  - {from: check, to: wrap}
  - {from: wrap, to: done}
"#;

const CONFIRM: &str = r#"walker:
  name: Confirm
  carries:
    task: {type: str, role: input}
    topic: {type: str, role: input}
    confirm: {type: str, role: input, doc: "Publish it? (yes/no)"}
    seen: {type: str, produced_by: look}
    verdict: {type: str, produced_by: review}
nodes:
  - {id: look, type: CODE, owner: code, reads: [topic], writes: [seen], body: "topic + ' looked up'"}
  - {id: review, type: CODE, owner: code, reads: [seen, confirm], writes: [verdict], body: "seen + ' / ' + confirm"}
  - {id: done, type: TERMINAL, reads: [verdict]}
edges:
  - {from: look, to: review}
  - {from: review, to: done}
"#;

/// An edit of a callee's outcome on its way back.
type Tamper = fn(&mut Json);

/// A placement running `Confirm` on another runtime; `tamper` edits the outcome's JSON on the
/// way back, as a hostile or broken endpoint would.
struct AskElsewhere {
    other: Runtime,
    confirm: Arc<Prepared>,
    tamper: Tamper,
    calls: Mutex<usize>,
}

impl Placement for AskElsewhere {
    fn places_call(&self, callee: &Prepared) -> bool {
        callee.digest() == self.confirm.digest()
    }

    fn call<'a>(&'a self, job: CallJob) -> BoxFuture<'a, Result<CallOutcome, PlacementError>> {
        Box::pin(async move {
            *self.calls.lock().unwrap() += 1;
            let callee = Arc::new(MemoryJournal::new(format!("{}/c{}", job.run, job.at_step)));
            let outcome = self
                .other
                .run_callee(&self.confirm, &across(&job), callee)
                .await;
            let mut json = serde_json::to_value(&outcome).unwrap();
            (self.tamper)(&mut json);
            serde_json::from_value(json).map_err(|e| PlacementError::new(e.to_string()))
        })
    }
}

fn asking(tamper: Tamper) -> (Arc<AskElsewhere>, Runtime, Arc<Prepared>) {
    let rt = || {
        Runtime::builder()
            .model(model(0))
            .program("Confirm", program(CONFIRM).program)
            .build()
    };
    let here = rt();
    let caller = here.prepare(&program(ASKING).program, None);
    let placement = Arc::new(AskElsewhere {
        other: rt(),
        confirm: here.prepare(&program(CONFIRM).program, None),
        tamper,
        calls: Mutex::default(),
    });
    (placement.clone(), here.placed(placement), caller)
}

#[test]
fn a_callee_elsewhere_that_asks_pauses_the_caller_and_the_answer_continues_it_then_the_caller() {
    let (placement, here, caller) = asking(|_| {});
    let task = || Inputs::parse(&program(ASKING).program, Some("the fair".into()), &[]).unwrap();
    let start = here.run_start("run-1", &caller, &task(), Json::Null);
    let journal = journal();
    let paused = block_on(here.run_journaled(&caller, task(), journal.clone()));
    assert_eq!(
        paused.status,
        Status::InputRequired,
        "{:#}",
        paused.to_json()
    );
    let pause = paused.pause.as_ref().unwrap();
    assert_eq!(
        (
            pause.instruction.as_str(),
            pause.carry.as_str(),
            pause.prompt.as_str()
        ),
        ("check", "confirm", "Publish it? (yes/no)")
    );
    // The question names the callee's step that asked, and the CALL that led there.
    assert_eq!(pause.asker(), "`review` (in `Confirm`, called by `check`)");
    assert_eq!(
        paused.to_json()["pause"]["called"],
        json!([{"program": "Confirm", "instruction": "review"}])
    );
    assert_eq!(*placement.calls.lock().unwrap(), 1);

    let done = block_on(here.resume_journaled(&caller, journal, &start, Some("yes".into())));
    assert_eq!(done.status, Status::Ok, "{:?}", done.fault);
    assert_eq!(
        done.report["final"],
        json!("published: topic of the fair looked up / yes")
    );
    // Continued from its saved state, not handed over again.
    assert_eq!(*placement.calls.lock().unwrap(), 1);
    // As if the callee had run in process.
    let local = Runtime::builder()
        .model(model(0))
        .program("Confirm", program(CONFIRM).program)
        .build();
    let start = local.run_start("run-2", &caller, &task(), Json::Null);
    let journal = self::journal();
    let first = block_on(local.run_journaled(&caller, task(), journal.clone()));
    assert_eq!(first.pause, paused.pause);
    let whole = block_on(local.resume_journaled(&caller, journal, &start, Some("yes".into())));
    assert_eq!(whole.to_json(), done.to_json());
}

#[test]
fn a_saved_state_that_is_not_the_called_programs_pause_is_refused_with_the_fault_placement() {
    let attacks: [(Tamper, &str); 3] = [
        // Another program's state (its digest), or this program's with no pause in it.
        (
            |j| j["pause"]["saved"]["program"] = json!("0".repeat(64)),
            "not a pause of the program called",
        ),
        (
            |j| {
                j["pause"]["saved"].as_object_mut().unwrap().remove("waits");
            },
            "not a pause of the program called",
        ),
        // Not a pause record at all.
        (
            |j| j["pause"]["saved"] = json!({"format": "ais-resume/1"}),
            "ais-resume/2",
        ),
    ];
    for (tamper, why) in attacks {
        let (_, here, caller) = asking(tamper);
        let task = Inputs::parse(&program(ASKING).program, Some("t".into()), &[]).unwrap();
        let got = block_on(here.run_journaled(&caller, task, journal()));
        assert_eq!(got.status, Status::Fault, "{why}");
        let fault = got.fault.as_ref().unwrap();
        assert_eq!(
            (fault.kind, fault.instruction.as_str()),
            (FaultKind::Placement, "check")
        );
        assert!(fault.message.contains(why), "{}", fault.message);
    }
}
