//! One program as one Restate workflow: the service a program is served as, built at run time
//! (the SDK's `#[workflow]` macro names its services at compile time; a program's name is
//! known only once its file is read).
//!
//! Handlers (the workflow's key is the run's id):
//!
//! - `run` (the workflow's one run): takes `{"task": TEXT, "inputs": {NAME: VALUE}}` — each
//!   input typed by its carry's declaration, as `ais run --input` types it — runs the program
//!   with every effect journaled through `ctx.run`, and returns the report object of
//!   `ais run --format json` ([`ais_rt::RunOutcome::to_json`]). A pause for human input waits
//!   on a durable promise (`answer-N` for the run's N-th pause) and continues with the answer.
//!   Given `{"call": CallJob}` instead ([`ais_rt::CallJob`]), the run is a
//!   CALL's callee ([`crate::siblings`]): the job's values bound by name, the caller's
//!   remaining step budget; it returns a [`ais_rt::CallOutcome`], and a pause ends
//!   it `input_required` with its saved state rather than waiting (the caller waits).
//! - `answer` (shared): the human's answer (a JSON string) to the pause the run waits on.
//! - `pause` (shared): the pause the run waits on (`{"n", "carry", "prompt", "instruction",
//!   "outcome"}`, the last the run's object as `ais run --format json` prints it paused), or
//!   `null`.

use crate::journal::RestateJournal;
use crate::siblings::RestatePlacement;
use ais_core::Program;
use ais_rt::CallJob;
use ais_rt::{Inputs, Prepared, Runtime, Status};
use restate_sdk::discovery::{self, HandlerName, HandlerType, InputPayload, OutputPayload};
use restate_sdk::endpoint::{ContextInternal, Error as EndpointError};
use restate_sdk::errors::{HandlerError, TerminalError};
use restate_sdk::serde::Json;
use restate_sdk::service::macro_support::{ServiceBoxFuture, service_definition};
use restate_sdk::service::{Service, ServiceDefinition};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;

/// The state key holding the pause a run waits on.
const PAUSE: &str = "pause";

/// What the `run` handler takes.
#[derive(Clone, Debug, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    /// The task text (seeds the `task` carry).
    #[serde(default)]
    pub task: Option<String>,
    /// The input carries' values, by name: a JSON string is read as `--input NAME=TEXT`
    /// reads its text, any other JSON value as its JSON text.
    #[serde(default)]
    pub inputs: serde_json::Map<String, Value>,
}

/// A program served as a workflow.
pub(crate) struct ProgramWorkflow {
    program: Program,
    prepared: Arc<Prepared>,
    runtime: Runtime,
    /// The service that runs this program's SPAWN siblings ([`crate::siblings`]).
    siblings: String,
    /// The endpoint's workflows by the digest of their program (a CALL's callees).
    workflows: Arc<HashMap<String, String>>,
}

/// The workflow definition of `program` (prepared as `prepared`), served as the service
/// `name`; its SPAWN siblings run as invocations of the service `siblings`.
pub(crate) fn definition(
    name: &str,
    program: Program,
    prepared: Arc<Prepared>,
    runtime: Runtime,
    siblings: String,
    workflows: Arc<HashMap<String, String>>,
) -> Result<ServiceDefinition, String> {
    let service = discovery::ServiceName::try_from(name.to_owned())
        .map_err(|e| format!("`{name}` cannot name a Restate service: {e}"))?;
    let dispatcher = Dispatcher(Arc::new(ProgramWorkflow {
        program,
        prepared,
        runtime,
        siblings,
        workflows,
    }));
    let json_in = InputPayload::from_metadata::<Json<Value>>;
    let json_out = OutputPayload::from_metadata::<Json<Value>>;
    let discovery = discovery_service(
        discovery::ServiceType::Workflow,
        service,
        vec![
            handler("run", HandlerType::Workflow, json_in(), json_out()),
            handler(
                "answer",
                HandlerType::Shared,
                json_in(),
                OutputPayload::empty(),
            ),
            handler(
                "pause",
                HandlerType::Shared,
                InputPayload::empty(),
                json_out(),
            ),
        ],
        format!("The ais program `{name}`"),
    );
    Ok(service_definition(dispatcher, discovery))
}

/// The discovery record of one handler (no per-handler options: the server's defaults).
pub(crate) fn handler(
    h: &str,
    ty: HandlerType,
    input: InputPayload,
    output: OutputPayload,
) -> discovery::Handler {
    discovery::Handler {
        name: HandlerName::try_from(h.to_owned()).expect("a fixed handler name"),
        input: Some(input),
        output: Some(output),
        ty: Some(ty),
        documentation: None,
        metadata: Default::default(),
        abort_timeout: None,
        inactivity_timeout: None,
        journal_retention: None,
        idempotency_retention: None,
        workflow_completion_retention: None,
        enable_lazy_state: None,
        ingress_private: None,
        retry_policy_initial_interval: None,
        retry_policy_max_interval: None,
        retry_policy_max_attempts: None,
        retry_policy_exponentiation_factor: None,
        retry_policy_on_max_attempts: None,
    }
}

/// The discovery record of one service (no options: the server's defaults).
pub(crate) fn discovery_service(
    ty: discovery::ServiceType,
    name: discovery::ServiceName,
    handlers: Vec<discovery::Handler>,
    documentation: String,
) -> discovery::Service {
    discovery::Service {
        ty,
        name,
        handlers,
        documentation: Some(documentation),
        metadata: Default::default(),
        abort_timeout: None,
        inactivity_timeout: None,
        journal_retention: None,
        idempotency_retention: None,
        enable_lazy_state: None,
        ingress_private: None,
        retry_policy_initial_interval: None,
        retry_policy_max_interval: None,
        retry_policy_max_attempts: None,
        retry_policy_exponentiation_factor: None,
        retry_policy_on_max_attempts: None,
    }
}

struct Dispatcher(Arc<ProgramWorkflow>);

impl Service for Dispatcher {
    type Future = ServiceBoxFuture;

    fn handle(&self, ctx: ContextInternal) -> ServiceBoxFuture {
        let wf = self.0.clone();
        Box::pin(async move {
            match ctx.handler_name() {
                "run" => {
                    let (Json(req), meta) = ctx.input::<Json<Value>>().await;
                    let res = wf.run(&ctx, meta.key, req).await;
                    ctx.handle_handler_result(res);
                }
                "answer" => {
                    let (Json(answer), _) = ctx.input::<Json<Value>>().await;
                    let res = answer_pause(&ctx, answer).await;
                    ctx.handle_handler_result(res);
                }
                "pause" => {
                    let _ = ctx.input::<()>().await;
                    let res = ctx.get::<Json<Value>>(PAUSE).await;
                    let res = res
                        .map(|p| Json(p.map_or(Value::Null, |j| j.0)))
                        .map_err(HandlerError::from);
                    ctx.handle_handler_result(res);
                }
                _ => {
                    return Err(EndpointError::unknown_handler(
                        ctx.service_name(),
                        ctx.handler_name(),
                    ));
                }
            }
            ctx.end();
            Ok(())
        })
    }
}

impl ProgramWorkflow {
    async fn run(
        &self,
        ctx: &ContextInternal,
        id: String,
        req: Value,
    ) -> Result<Json<Value>, HandlerError> {
        if let Some(call) = req.get("call") {
            return self.run_called(ctx, id, call.clone()).await;
        }
        let req: RunRequest = serde_json::from_value(req).map_err(|e| {
            TerminalError::new_with_code(
                400,
                format!(
                    "the run's input is not `{{\"task\": TEXT, \"inputs\": {{NAME: VALUE}}}}`: {e}"
                ),
            )
        })?;
        let pairs: Vec<(String, String)> = req
            .inputs
            .iter()
            .map(|(n, v)| match v {
                Value::String(s) => (n.clone(), s.clone()),
                other => (n.clone(), other.to_string()),
            })
            .collect();
        let inputs = Inputs::parse(&self.program, req.task, &pairs).map_err(|e| {
            TerminalError::new_with_code(400, format!("input `{}`: {}", e.name, e.message))
        })?;
        let start = self
            .runtime
            .run_start(id.clone(), &self.prepared, &inputs, Value::Null);
        let (runtime, journal) = self.journaled(id, ctx);
        let mut outcome = runtime
            .run_journaled(&self.prepared, inputs, journal.clone())
            .await;
        let mut n = 0u32;
        while outcome.status == Status::InputRequired {
            n += 1;
            let p = outcome.pause.as_ref();
            let pause = json!({
                "n": n,
                "carry": p.map(|p| p.carry.clone()),
                "prompt": p.map(|p| p.prompt.clone()),
                "instruction": p.map(|p| p.instruction.clone()),
                "outcome": outcome.to_json(),
            });
            let jctx = journal.ctx();
            jctx.set(PAUSE, Json(pause));
            let answer = jctx.promise::<Json<String>>(&format!("answer-{n}")).await?;
            jctx.clear(PAUSE);
            outcome = runtime
                .resume_journaled(&self.prepared, journal.clone(), &start, Some(answer.0))
                .await;
        }
        Ok(Json(outcome.to_json()))
    }
}

impl ProgramWorkflow {
    /// The journal of run `id`, and the runtime placing the run's siblings and CALLs as
    /// invocations of their own on the same context ([`RestatePlacement`]).
    fn journaled(&self, id: String, ctx: &ContextInternal) -> (Runtime, Arc<RestateJournal>) {
        let journal = Arc::new(RestateJournal::new(id, ctx.clone()));
        let placement = RestatePlacement::new(
            journal.clone(),
            self.siblings.clone(),
            self.workflows.clone(),
            self.runtime.out_dir().to_owned(),
        );
        (self.runtime.placed(Arc::new(placement)), journal)
    }

    /// The run of a CALL's callee (`{"call": CallJob}`): to its end, or to a pause, which ends
    /// it `input_required` with its saved state, which the caller pauses with.
    async fn run_called(
        &self,
        ctx: &ContextInternal,
        id: String,
        call: Value,
    ) -> Result<Json<Value>, HandlerError> {
        let job: CallJob = serde_json::from_value(call).map_err(|e| {
            TerminalError::new_with_code(400, format!("the input's `call` is not a CALL job: {e}"))
        })?;
        if job.digest != self.prepared.digest() {
            return Err(TerminalError::new_with_code(
                409,
                format!(
                    "the callee's program has digest {}, this workflow's is {}; serve the same program on every endpoint",
                    job.digest,
                    self.prepared.digest()
                ),
            )
            .into());
        }
        let (runtime, journal) = self.journaled(id, ctx);
        let outcome = runtime.run_callee(&self.prepared, &job, journal).await;
        let json = serde_json::to_value(&outcome)
            .map_err(|e| TerminalError::new(format!("the callee's outcome: {e}")))?;
        Ok(Json(json))
    }
}

/// Resolves the promise of the pause the run waits on with `answer` (a JSON string).
async fn answer_pause(ctx: &ContextInternal, answer: Value) -> Result<(), HandlerError> {
    let Value::String(answer) = answer else {
        return Err(TerminalError::new_with_code(
            400,
            format!("the answer is a JSON string, not `{answer}`"),
        )
        .into());
    };
    let pause = ctx.get::<Json<Value>>(PAUSE).await?;
    let Some(n) = pause.as_ref().and_then(|p| p.0.get("n")?.as_u64()) else {
        return Err(TerminalError::new_with_code(
            409,
            "this run is not waiting for an answer (it has not paused, or it was answered)",
        )
        .into());
    };
    ctx.resolve_promise(&format!("answer-{n}"), Json(answer));
    Ok(())
}
