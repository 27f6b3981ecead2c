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
//! The endpoint runs on a current-thread runtime of its own and runs a program's SPAWN
//! siblings one at a time: the order of a run's entries in Restate's journal is then the
//! program's own in every attempt (see [`crate::journal`]). Scale out with more endpoints: any
//! registered endpoint continues any invocation.

use crate::workflow;
use ais_core::Program;
use ais_rt::RuntimeBuilder;
use restate_sdk::endpoint::Endpoint as SdkEndpoint;
use restate_sdk::http_server::HttpServer;
use std::future::Future;
use std::net::SocketAddr;

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
}

/// Programs to serve as Restate workflows, with the runtime settings they run with.
pub struct Endpoint {
    runtime: RuntimeBuilder,
    programs: Vec<(String, Program)>,
}

impl Endpoint {
    /// An endpoint whose programs run with `runtime`'s model, tools, output root and budget.
    pub fn new(runtime: RuntimeBuilder) -> Endpoint {
        Endpoint {
            runtime,
            programs: Vec::new(),
        }
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
        mut self,
        name: impl Into<String>,
        program: Program,
    ) -> Result<Endpoint, EndpointError> {
        let name = name.into();
        if self.programs.iter().any(|(n, _)| *n == name) {
            return Err(EndpointError::Program(format!(
                "two programs would be served as the workflow `{name}`; serve one of them under another name"
            )));
        }
        self.programs.push((name, program));
        Ok(self)
    }

    /// The workflow names served, in order.
    pub fn names(&self) -> Vec<String> {
        self.programs.iter().map(|(n, _)| n.clone()).collect()
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
        let mut builder = SdkEndpoint::builder();
        for (name, program) in self.programs {
            let def = workflow::definition(&name, program, runtime.clone())
                .map_err(EndpointError::Program)?;
            builder = builder.bind(def);
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
