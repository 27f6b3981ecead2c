//! Runs ais programs as Restate workflows.
//!
//! [Restate](https://restate.dev) is a durable execution engine: one server binary that
//! journals each step of an invocation and replays the journal after a failure, and endpoints
//! (this crate's) that run the handlers. This crate is the second backend of the runtime's
//! journal seam ([`ais_rt::journal`]): every effect of a run (a slot's exchanges, a tool call,
//! an artifact write) goes through Restate's `ctx.run`, so a completed effect is never repeated
//! and an endpoint that dies mid-run is replaced by any registered endpoint, which replays the
//! run up to where it was. The machine, the binder, the validator and the expression language
//! stay the runtime's: the report is that of `ais run`.
//!
//! - [`Endpoint`]: serves programs as workflows (`ais serve --restate`).
//! - [`Ingress`]: submits, follows and answers runs (`ais run --engine restate`).
//! - [`Admin`]: the runs a server holds (`ais runs --engine restate`).
//! - [`journal`]: the seam on `ctx.run`.
//! - [`siblings`]: the placement seam on Restate ([`siblings::RestatePlacement`]): SPAWN
//!   siblings and CALL callees as invocations of their own, over every endpoint.
//! - [`stage`]: an `orchestrator_owned` sibling's staged writes, carried through the journal.
//! - [`server`]: a local `restate-server` child process (tests, trying it out).
#![deny(missing_docs)]

pub mod admin;
pub mod client;
pub mod endpoint;
pub mod journal;
pub mod server;
pub mod siblings;
pub mod stage;
pub mod workflow;

pub use admin::{Admin, RunListing};
pub use client::{ClientError, Followed, Ingress};
pub use endpoint::{Endpoint, EndpointError, service_name};
pub use workflow::RunRequest;
