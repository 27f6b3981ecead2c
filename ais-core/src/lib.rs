//! # ais-core — the Agent Instruction Set, as a library
//!
//! The language itself, shared by the `ais!` macro, the runtime, `build.rs` export and the
//! `ais` CLI: one model, one AG-IR reader and writer, one binder, one validator, one
//! expression language.
//!
//! - [`model`]: the program — instructions, carries, knowledge, tools, edges, types.
//! - [`agir`]: reading and writing the `.agir` YAML encoding (spec §8).
//! - [`sig`] and [`bind`]: tool signatures and the calling convention (spec §7).
//! - [`expr`]: guards and CODE bodies — a closed, bounded expression language.
//! - [`check`]: the validator (spec §9) with its findings, repairs and outcome.
//! - [`plan`]: a checked program lowered to the runnable form the runtime interprets.
//! - [`diag`], [`edit`], [`source`], [`value`]: the one diagnostic shape, structured repairs
//!   worded per front end, source locations (the [`Locator`] a front end implements), plain
//!   values.
//! - [`builder`]: a [`Program`] assembled in Rust (what the `ais!` macro lowers into).
//! - [`render`]: findings as rustc-style text and as JSON.
//!
//! Cargo features (both default): `agir` (the reader and writer) and `render` (the renderer);
//! without them the crate builds with no YAML parser and no renderer, as a proc macro wants.
//! The types most callers need are re-exported here.
//!
//! A misspelled read is found, located and given a did-you-mean and a repair; a guard is
//! type-checked against the program's carries and evaluated:
//!
//! ```
//! use ais_core::{agir, check, expr, CheckId, Outcome, Value};
//!
//! let text = r#"---
//! name: shout
//! description: Upper-case the task.
//! ---
//! walker:
//!   name: Shout
//!   carries:
//!     task: {type: str, role: input}
//!     loud: {type: str, produced_by: draft}
//! nodes:
//!   - id: draft
//!     type: GEN-RAW
//!     reads: [taks]
//!     writes: [loud]
//!     doc: "Say the task loudly."
//!   - id: done
//!     type: TERMINAL
//!     reads: [loud]
//! edges:
//!   - {from: draft, to: done, modality: mandatory}
//! "#;
//! let doc = agir::read(text)?;
//! let checked = check::check(&doc.program, &doc.source_map, check::Repairs::Off);
//! let w8 = checked.findings.iter().find(|f| f.id == CheckId::W8).expect("a dangling read");
//! assert_eq!(w8.did_you_mean, ["task"]);
//! assert_eq!(w8.pos.map(|p| (p.line, p.column)), Some((13, 13)));
//! assert_ne!(checked.outcome, Outcome::Clean);
//!
//! let carries = [("loud".to_owned(), Value::from("HELLO"))].into_iter().collect();
//! let value = expr::eval_str(r#"loud == "HELLO""#, &carries, Some(&doc.program));
//! assert_eq!(value, Ok(Value::Bool(true)));
//! # Ok::<(), agir::ReadError>(())
//! ```
#![deny(missing_docs)]

#[cfg(feature = "agir")]
pub mod agir;
pub mod bind;
pub mod builder;
pub mod check;
pub mod diag;
pub mod edit;
pub mod expr;
#[cfg(feature = "render")]
mod long_line;
pub mod model;
pub mod plan;
#[cfg(feature = "render")]
pub mod render;
pub mod sig;
pub mod source;
pub mod suggest;
pub mod value;

pub use builder::ProgramBuilder;
pub use check::{Checked, Repairs, check};
pub use diag::{CheckId, Code, Deviation, Finding, Outcome, Repair, Severity};
pub use edit::{Edit, Wording};
pub use model::Program;
pub use plan::{Plan, lower};
pub use source::{Element, FieldKey, Locator, Locus, Pos, SourceMap, SubRange};
pub use value::Value;
