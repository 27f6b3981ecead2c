//! # ais — agents as typed programs
//!
//! The facade of the ais toolkit for the Agent Instruction Set (AIS). It re-exports the language
//! core ([`ais_core`]); the `ais` binary (`ais check`, `ais fmt`, `ais fix`, `ais eval`) is built
//! from this package.
#![deny(missing_docs)]

pub use ais_core as core;
pub use ais_core::*;
