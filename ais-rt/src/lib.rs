//! # ais-rt — the ais runtime
//!
//! The machine that executes AIS programs — from the `ais!` macro or from any `.agir` file:
//! the twelve opcodes, the Deterministic Unit's tools, the Stochastic Unit's model seam, faults,
//! budgets, deviations and traces (spec §10).
//!
//! - [`tools`]: the Deterministic Unit's tool seam — the [`tools::Tool`] trait, the
//!   [`tools::ToolRegistry`] (native Rust tools, the built-in library of spec §5.4), `command`
//!   and Python `body` tools, and the artifact root that keeps every write inside the output
//!   directory.
//! - [`model`]: the Stochastic Unit's seam — the [`model::Model`] trait a provider implements,
//!   the slot request it receives and the completion it returns.
#![deny(missing_docs)]

pub mod model;
pub mod report;
pub mod tools;
pub mod trace;

pub use report::{Fault, FaultKind, Pause, RunOutcome, RunUsage, Status};
