//! # ais — agents as typed programs
//!
//! The facade of the ais toolkit for the Agent Instruction Set (AIS). It re-exports the language
//! core ([`ais_core`]), the runtime ([`rt`]) and the [`ais!`] macro, which writes an agent as
//! Rust (see the README and the `ais-syntax` crate for the language); the `ais` binary (`ais
//! check`, `ais fmt`, `ais fix`, `ais eval`, `ais run`) is built from this package.
//!
//! Read an AG-IR program, validate it, and show what the validator found:
//!
//! ```
//! let text = include_str!("../examples/writing_plans.agir");
//! let doc = ais::agir::read(text)?;
//! assert_eq!(doc.program.instructions().len(), 6);
//!
//! let checked = ais::check(&doc.program, &doc.source_map, ais::Repairs::Off);
//! for finding in &checked.findings {
//!     println!("{}", ais::render::render_finding(finding, text, "writing_plans.agir", false));
//! }
//! assert_eq!(checked.outcome, ais::Outcome::Clean);
//!
//! // The canonical text reads back to the same program.
//! let canonical = ais::agir::write(&doc.program);
//! assert_eq!(ais::agir::read(&canonical)?.program, doc.program);
//! # Ok::<(), ais::agir::ReadError>(())
//! ```
#![deny(missing_docs)]

// The compiler program (`lift`) is written with `ais!`, whose expansion names `::ais`.
extern crate self as ais;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
pub mod graph;
pub mod lift;
mod outcome;
mod run;

pub use ais_core as core;
pub use ais_core::*;
/// The semantic edit language for AG-IR programs: view, query, patch (`ais edit`).
pub use ais_edit as edit;
pub use ais_macros::ais;
/// The model repair rung (spec §9.1 rung 2, `ais fix --model`): crate `ais-repair`.
pub use ais_repair as repair;
/// Programs as Restate workflows: the `Endpoint` builder, the ingress client (feature `restate`).
#[cfg(feature = "restate")]
pub use ais_restate as restate;
pub use ais_rt as rt;
pub use ais_rt::tools::ArtifactPath;
pub use outcome::OutcomeValue;
pub use run::{Replayed, RunError};
