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
//! - [`diag`], [`source`], [`value`]: findings, source positions, plain values.
//! - [`render`]: findings as rustc-style text and as JSON.
#![deny(missing_docs)]

pub mod agir;
pub mod bind;
pub mod check;
pub mod diag;
pub mod expr;
pub mod model;
pub mod render;
pub mod sig;
pub mod source;
pub mod value;

pub use diag::{CheckId, Deviation, Finding, Outcome, Repair, Severity};
pub use model::Program;
pub use source::{Element, Locus, Pos, SourceMap};
pub use value::Value;
