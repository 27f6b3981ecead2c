//! A program's SPAWN siblings as Restate invocations of their own.
//!
//! Beside each program's workflow the endpoint serves the service `<program>_siblings`, whose
//! one handler `run` takes a sibling job ([`SiblingJob`]) and returns what the sibling did
//! ([`SiblingOutcome`]), running it with [`ais_rt::Runtime::run_sibling`] over the same
//! program; its effects are journaled in its own invocation. A workflow run's placement
//! ([`RestatePlacement`], the runtime's [`ais_rt`] seam, beside the run's journal)
//! calls that service once per sibling, so Restate dispatches the siblings to the service's
//! deployment — every endpoint process behind it — and joins them through their results.
//!
//! An `orchestrator_owned` SPAWN's siblings run so too. Each stages its writes on the endpoint
//! that runs it, every effect's journal entry holding the stage's files ([`crate::stage`]); the
//! invocation returns its stage's files with its outcome and removes the stage; the
//! orchestrating run writes them into its own stage for that sibling (`.ais/stage/<id>/<i>/`
//! under its output root), from which the SPAWN applies every sibling's writes after the join
//! in sibling order, as in process. A replay of the orchestrating run gets the same bytes from
//! the call's journal entry and writes them again: the apply publishes the same files.
//!
//! # The context, serially (restatedev/sdk-rust #89)
//!
//! The calls are made in sibling order, within the journal's turn, and awaited one at a time
//! in the same order (a window of at most the SPAWN's own `max_parallel` calls in flight, all
//! of them when it declares none): no two futures of the context are ever polled at once, and
//! a replay asks for the same call entries in the same order. The siblings themselves run
//! concurrently — on the endpoints, not in this handler.
//!
//! # A CALL, workflow to workflow
//!
//! A CALL whose callee is a program the endpoint serves (found by its digest) is a call of
//! that program's workflow, keyed `<run>/c<step>` (the caller's run and step count), with the
//! input `{"call": CallJob}`: the callee runs as a workflow run of its own — its steps
//! journaled there, its SPAWNs spread, its budget the caller's remainder — and returns its
//! report, which the caller lands as it lands an in-process sub-run's. A callee that needs a
//! human's answer ends its run `input_required` and returns its saved state
//! ([`ais_rt::CallPause`]); the caller's run pauses with it, as it pauses for an
//! in-process callee, and the answer given to the caller continues the callee from that state
//! — in the caller's invocation, its effects journaled there (the callee's own workflow run
//! has ended) — and then the caller.
//!
//! # Each endpoint's share
//!
//! An endpoint does the work of at most `max_parallel` (the runtime's setting; `ais serve
//! --max-parallel`) siblings at a time: each effect's work — a slot's model exchange, a tool
//! call — takes one of the endpoint's lanes and holds it while it runs; more wait for a lane.
//! A sibling holds no lane while it waits on the server: to start, for the server to record an
//! effect's result (the acknowledgement of its `ctx.run`), or to deliver its outcome — so those
//! round trips overlap the other siblings' work instead of idling a lane (a lane held for the
//! whole invocation cost a round trip per sibling per lane). Two endpoints behind the
//! deployment double the work that runs at once. Each sibling an endpoint runs is noted on its
//! standard error (`ais serve: pid P runs sibling I of SPAWN `S` of run R`).

use crate::journal::RestateJournal;
use crate::stage::StagedFile;
use crate::workflow::{discovery_service, handler};
use ais_rt::journal::BoxFuture;
use ais_rt::{CallJob, CallOutcome, Placement, PlacementError, SiblingJob, SiblingOutcome};
use ais_rt::{Prepared, Runtime};
use restate_sdk::context::RequestTarget;
use restate_sdk::discovery::{self, HandlerType, InputPayload, OutputPayload};
use restate_sdk::endpoint::{ContextInternal, Error as EndpointError};
use restate_sdk::errors::{HandlerError, TerminalError};
use restate_sdk::serde::Json;
use restate_sdk::service::macro_support::{ServiceBoxFuture, service_definition};
use restate_sdk::service::{Service, ServiceDefinition};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::Semaphore;

/// The name of the service that runs the SPAWN siblings of the workflow `program`.
pub fn service_name(program: &str) -> String {
    format!("{program}_siblings")
}

/// The siblings service of the program served as `program`, prepared as `prepared`; the work
/// of its invocations' effects runs in `lanes`, this endpoint's.
pub(crate) fn definition(
    program: &str,
    prepared: Arc<Prepared>,
    runtime: Runtime,
    lanes: Arc<Semaphore>,
) -> Result<ServiceDefinition, String> {
    let name = service_name(program);
    let service = discovery::ServiceName::try_from(name.clone())
        .map_err(|e| format!("`{name}` cannot name a Restate service: {e}"))?;
    let discovery = discovery_service(
        discovery::ServiceType::Service,
        service,
        vec![discovery::Handler {
            ty: None,
            ..handler(
                "run",
                HandlerType::Shared,
                InputPayload::from_metadata::<Json<Value>>(),
                OutputPayload::from_metadata::<Json<Value>>(),
            )
        }],
        format!("The SPAWN siblings of the ais program `{program}`"),
    );
    let dispatcher = Dispatcher(Arc::new(Siblings {
        prepared,
        runtime,
        lanes,
    }));
    Ok(service_definition(dispatcher, discovery))
}

struct Siblings {
    prepared: Arc<Prepared>,
    runtime: Runtime,
    lanes: Arc<Semaphore>,
}

struct Dispatcher(Arc<Siblings>);

impl Service for Dispatcher {
    type Future = ServiceBoxFuture;

    fn handle(&self, ctx: ContextInternal) -> ServiceBoxFuture {
        let siblings = self.0.clone();
        Box::pin(async move {
            if ctx.handler_name() != "run" {
                return Err(EndpointError::unknown_handler(
                    ctx.service_name(),
                    ctx.handler_name(),
                ));
            }
            let (Json(job), _) = ctx.input::<Json<Value>>().await;
            let res = siblings.run(&ctx, job).await;
            ctx.handle_handler_result(res);
            ctx.end();
            Ok(())
        })
    }
}

impl Siblings {
    async fn run(&self, ctx: &ContextInternal, job: Value) -> Result<Json<Value>, HandlerError> {
        let job: SiblingJob = serde_json::from_value(job).map_err(|e| {
            TerminalError::new_with_code(400, format!("the input is not a sibling job: {e}"))
        })?;
        eprintln!(
            "ais serve: pid {} runs sibling {} of SPAWN `{}` of run {}",
            std::process::id(),
            job.index + 1,
            job.instruction,
            job.run
        );
        let id = format!("{}/s{}", job.run, job.index);
        let stage = self
            .prepared
            .stages_writes(job.step, &job.instruction)
            .then(|| ais_rt::stage_dir(self.runtime.out_dir(), &job.instruction, job.index));
        let mut journal = RestateJournal::new(id, ctx.clone()).with_lanes(self.lanes.clone());
        if let Some(dir) = &stage {
            journal = journal.with_stage(dir.clone());
        }
        let outcome = self
            .runtime
            .run_sibling(&self.prepared, job, Some(Arc::new(journal)))
            .await;
        // The stage leaves with the outcome: the orchestrating run writes it into its own.
        let staged = match &stage {
            Some(dir) => {
                let files = crate::stage::snapshot(dir).map_err(TerminalError::new)?;
                match std::fs::remove_dir_all(dir) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(TerminalError::new(format!(
                            "removing the stage {}: {e}",
                            dir.display()
                        ))
                        .into());
                    }
                    _ => files,
                }
            }
            None => Vec::new(),
        };
        let json = serde_json::to_value(Returned { outcome, staged })
            .map_err(|e| TerminalError::new(format!("the sibling's outcome: {e}")))?;
        Ok(Json(json))
    }
}

/// What a sibling invocation returns: the sibling's outcome and, for an `orchestrator_owned`
/// SPAWN, the files its stage held at its end ([`crate::stage`]).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Returned {
    outcome: SiblingOutcome,
    #[serde(default)]
    staged: Vec<StagedFile>,
}

/// Where a workflow run's SPAWN siblings and CALL callees run: as Restate invocations of their
/// own, called on the run's invocation context within its journal's turn.
pub struct RestatePlacement {
    /// The run's journal: its context makes the calls, its turn orders them among the effects.
    journal: Arc<RestateJournal>,
    /// The service that runs the program's SPAWN siblings.
    siblings: String,
    /// The workflows a CALL's callee runs as, by the digest of their program.
    workflows: Arc<HashMap<String, String>>,
    /// The run's output root, where a placed `orchestrator_owned` sibling's staged files are
    /// written back into its stage.
    stage_root: PathBuf,
}

impl RestatePlacement {
    /// The placement of the run journaled on `journal`: its SPAWN siblings run as invocations
    /// of the service `siblings` (the program's, [`service_name`]) and its CALLs whose callee
    /// is one of `workflows` (workflow names by the digest of their program,
    /// [`ais_rt::Prepared::digest`]) as calls of that workflow — other callees run in the
    /// caller's invocation. A staged sibling's files come back into its stage below
    /// `stage_root` (the run's output root), where the SPAWN applies them.
    pub fn new(
        journal: Arc<RestateJournal>,
        siblings: impl Into<String>,
        workflows: Arc<HashMap<String, String>>,
        stage_root: PathBuf,
    ) -> RestatePlacement {
        RestatePlacement {
            journal,
            siblings: siblings.into(),
            workflows,
            stage_root,
        }
    }
}

impl Placement for RestatePlacement {
    fn places_siblings(&self) -> bool {
        true
    }

    fn siblings<'a>(
        &'a self,
        jobs: Vec<SiblingJob>,
        limit: Option<usize>,
    ) -> BoxFuture<'a, Result<Vec<SiblingOutcome>, PlacementError>> {
        Box::pin(async move {
            let service = &self.siblings;
            let _turn = self.journal.turn.lock().await;
            let window = limit.unwrap_or(usize::MAX).max(1);
            let mut out = Vec::with_capacity(jobs.len());
            let mut jobs = jobs.into_iter();
            let mut in_flight = VecDeque::new();
            loop {
                while in_flight.len() < window {
                    let Some(job) = jobs.next() else { break };
                    let target = RequestTarget::Service {
                        name: service.clone(),
                        handler: "run".into(),
                    };
                    let stage = ais_rt::stage_dir(&self.stage_root, &job.instruction, job.index);
                    let index = job.index;
                    let call = self.journal.ctx().call::<Json<SiblingJob>, Json<Returned>>(
                        target,
                        None,
                        None,
                        None,
                        Vec::new(),
                        Json(job),
                    );
                    in_flight.push_back((call, stage, index));
                }
                // Named for the user as a person counts: the first sibling is sibling 1.
                let Some((call, stage, index)) = in_flight.pop_front() else {
                    break;
                };
                match call.await {
                    Ok(Json(Returned { outcome, staged })) => {
                        // Into this run's stage for the sibling, where the SPAWN applies it
                        // (again, the same bytes, when this run is replayed).
                        if !staged.is_empty() {
                            crate::stage::write(&stage, &staged).map_err(|e| {
                                PlacementError::new(format!(
                                    "the staged files of sibling {} of the SPAWN: {e}",
                                    index + 1
                                ))
                            })?;
                        }
                        out.push(outcome);
                    }
                    Err(e) => {
                        return Err(PlacementError::new(format!(
                            "sibling {} of the SPAWN failed as a Restate invocation of `{service}`: {}",
                            index + 1,
                            e.message()
                        )));
                    }
                }
            }
            Ok(out)
        })
    }

    fn places_call(&self, callee: &Prepared) -> bool {
        self.workflows.contains_key(callee.digest())
    }

    fn call<'a>(&'a self, job: CallJob) -> BoxFuture<'a, Result<CallOutcome, PlacementError>> {
        Box::pin(async move {
            let Some(workflow) = self.workflows.get(&job.digest).cloned() else {
                return Err(PlacementError::new(format!(
                    "CALL `{}`: no workflow of this endpoint serves the callee's program (digest {})",
                    job.instruction, job.digest
                )));
            };
            let _turn = self.journal.turn.lock().await;
            let target = RequestTarget::Workflow {
                name: workflow.clone(),
                key: format!("{}/c{}", job.run, job.at_step),
                handler: "run".into(),
            };
            let instruction = job.instruction.clone();
            let input = serde_json::json!({ "call": job });
            let called = self
                .journal
                .ctx()
                .call::<Json<Value>, Json<Value>>(target, None, None, None, Vec::new(), Json(input))
                .await;
            let failed = |why: String| {
                PlacementError::new(format!(
                    "CALL `{instruction}` of the workflow `{workflow}`: {why}"
                ))
            };
            match called {
                Ok(Json(report)) => serde_json::from_value(report)
                    .map_err(|e| failed(format!("its report does not read: {e}"))),
                Err(e) => Err(failed(e.message().to_owned())),
            }
        })
    }
}
