//! The endpoint: an HTTP/2 server (the SDK's) that serves each program as a workflow.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let doc = ais_core::agir::read(&std::fs::read_to_string("examples/writing_plans.agir")?)?;
//! ais_restate::Endpoint::new(ais_rt::Runtime::builder())
//!     .program(doc.program)?
//!     .serve("127.0.0.1:9080".parse()?)?;
//! # Ok(()) }
//! ```
//!
//! The endpoint runs on a current-thread runtime of its own. A program's SPAWN siblings run as
//! Restate invocations of their own ([`crate::siblings`]), the work of at most
//! [`Endpoint::sibling_lanes`] at a time on each endpoint; work that stays in the run's own
//! invocation (a CALL's sub-run's siblings) runs one sibling at a time, so the order of a run's
//! entries in Restate's journal is the program's own in every attempt (see [`crate::journal`]).
//! Scale out with more endpoint processes behind the deployment's URL (a load balancer: Restate
//! sends a deployment's invocations to its one URL).

use crate::workflow;
use ais_core::Program;
use ais_core::SourceMap;
use ais_rt::RuntimeBuilder;
use restate_sdk::endpoint::Endpoint as SdkEndpoint;
use restate_sdk::http_server::HttpServer;
use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::Semaphore;

/// Why an endpoint could not be built or served.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    /// A program cannot be served (no name, a name Restate refuses, a duplicate).
    #[error("{0}")]
    Program(String),
    /// The address could not be bound, or the runtime not started.
    #[error("cannot serve on {addr}: {source}")]
    Io {
        /// The address.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
    /// A request identity key does not read as one (`publickeyv1_…`).
    #[error("`{key}` is no Restate request identity key: {reason}")]
    IdentityKey {
        /// The key as given.
        key: String,
        /// What the SDK said.
        reason: String,
    },
}

/// Programs to serve as Restate workflows, with the runtime settings they run with.
pub struct Endpoint {
    runtime: RuntimeBuilder,
    programs: Vec<(String, Program, Option<SourceMap>)>,
    lanes: usize,
    identity_keys: Vec<String>,
}

impl Endpoint {
    /// An endpoint whose programs run with `runtime`'s model, tools, output root and budget.
    pub fn new(runtime: RuntimeBuilder) -> Endpoint {
        Endpoint {
            runtime,
            programs: Vec::new(),
            lanes: ais_rt::DEFAULT_MAX_PARALLEL,
            identity_keys: Vec::new(),
        }
    }

    /// Accepts only requests signed by the Restate server holding the private half of `key`
    /// (a request identity key, `publickeyv1_…`; repeatable, for a key rotation): any other
    /// request is refused before it reaches a workflow. Checked here, so a malformed key is an
    /// error before anything is served.
    pub fn identity_key(mut self, key: &str) -> Result<Endpoint, EndpointError> {
        restate_sdk::endpoint::Endpoint::builder()
            .identity_key(key)
            .map_err(|e| EndpointError::IdentityKey {
                key: key.to_owned(),
                reason: e.to_string(),
            })?;
        self.identity_keys.push(key.to_owned());
        Ok(self)
    }

    /// Whether requests must be signed ([`Endpoint::identity_key`]).
    pub fn verifies_identity(&self) -> bool {
        !self.identity_keys.is_empty()
    }

    /// At most `n` SPAWN siblings do their work at once on this endpoint (default
    /// [`ais_rt::DEFAULT_MAX_PARALLEL`]; at least one): each effect of a sibling (a model
    /// exchange, a tool call) runs in one of `n` lanes, and more wait for a lane; a sibling
    /// waiting on the Restate server holds none ([`crate::siblings`]).
    pub fn sibling_lanes(mut self, n: usize) -> Endpoint {
        self.lanes = n.max(1);
        self
    }

    /// Serves `program` as the workflow named by the program's name.
    pub fn program(self, program: Program) -> Result<Endpoint, EndpointError> {
        let name = service_name(&program).ok_or_else(|| {
            EndpointError::Program(
                "the program has no name to serve it under; give it one (`name:` in AG-IR) or use Endpoint::program_named".into(),
            )
        })?;
        self.program_named(name, program)
    }

    /// Serves `program` as the workflow `name`.
    pub fn program_named(
        self,
        name: impl Into<String>,
        program: Program,
    ) -> Result<Endpoint, EndpointError> {
        self.add(name.into(), program, None)
    }

    /// Serves the program of the AG-IR document `doc` as the workflow `name`, with its source
    /// map: a fault names the line of its instruction, as `ais run` does.
    pub fn document_named(
        self,
        name: impl Into<String>,
        doc: ais_core::agir::Document,
    ) -> Result<Endpoint, EndpointError> {
        self.add(name.into(), doc.program, Some(doc.source_map))
    }

    fn add(
        mut self,
        name: String,
        program: Program,
        source_map: Option<SourceMap>,
    ) -> Result<Endpoint, EndpointError> {
        let siblings = crate::siblings::service_name(&name);
        if self.programs.iter().any(|(n, _, _)| {
            *n == name || *n == siblings || crate::siblings::service_name(n) == name
        }) {
            return Err(EndpointError::Program(format!(
                "two programs would be served as the workflow `{name}` (or one as the other's siblings service, `{siblings}`); serve one of them under another name"
            )));
        }
        self.programs.push((name, program, source_map));
        Ok(self)
    }

    /// The workflow names served, in order.
    pub fn names(&self) -> Vec<String> {
        self.programs.iter().map(|(n, _, _)| n.clone()).collect()
    }

    /// Serves on `addr` until the process ends (blocks the calling thread).
    pub fn serve(self, addr: SocketAddr) -> Result<(), EndpointError> {
        let listener = std::net::TcpListener::bind(addr).map_err(|source| EndpointError::Io {
            addr: addr.to_string(),
            source,
        })?;
        self.serve_until(listener, std::future::pending::<()>())
    }

    /// Serves on `listener` until `stop` completes (blocks the calling thread).
    pub fn serve_until(
        self,
        listener: std::net::TcpListener,
        stop: impl Future,
    ) -> Result<(), EndpointError> {
        let addr = listener
            .local_addr()
            .map_or_else(|_| "the listener".into(), |a| a.to_string());
        let io = |source| EndpointError::Io {
            addr: addr.clone(),
            source,
        };
        let endpoint = self.build()?;
        listener.set_nonblocking(true).map_err(io)?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(io)?;
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).map_err(io)?;
            HttpServer::new(endpoint)
                .serve_with_cancel(listener, stop)
                .await;
            Ok(())
        })
    }

    fn build(self) -> Result<SdkEndpoint, EndpointError> {
        let runtime = self.runtime.max_parallel(1).build();
        let lanes = Arc::new(Semaphore::new(self.lanes));
        let mut builder = SdkEndpoint::builder();
        let prepared: Vec<_> = self
            .programs
            .into_iter()
            .map(|(name, program, map)| {
                let prepared = runtime.prepare(&program, map.as_ref());
                (name, program, prepared)
            })
            .collect();
        let workflows: Arc<HashMap<String, String>> = Arc::new(
            prepared
                .iter()
                .map(|(name, _, p)| (p.digest().to_owned(), name.clone()))
                .collect(),
        );
        for (name, program, prepared) in prepared {
            let siblings = crate::siblings::service_name(&name);
            let def = workflow::definition(
                &name,
                program,
                prepared.clone(),
                runtime.clone(),
                siblings,
                workflows.clone(),
            )
            .map_err(EndpointError::Program)?;
            builder = builder.bind(def);
            let def = crate::siblings::definition(&name, prepared, runtime.clone(), lanes.clone())
                .map_err(EndpointError::Program)?;
            builder = builder.bind(def);
        }
        for key in &self.identity_keys {
            builder = builder
                .identity_key(key)
                .map_err(|e| EndpointError::IdentityKey {
                    key: key.clone(),
                    reason: e.to_string(),
                })?;
        }
        Ok(builder.build())
    }
}

/// The workflow name of `program`: its name (the walker's when the document has none), with
/// every character Restate does not take in a service name replaced by `_`.
pub fn service_name(program: &Program) -> Option<String> {
    let name = program
        .name
        .clone()
        .or_else(|| program.walker.as_ref()?.name.clone())?;
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic()) {
        out.insert(0, 'p');
    }
    Some(out)
}
