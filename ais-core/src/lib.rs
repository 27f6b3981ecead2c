//! # ais-core — the Agent Instruction Set, as a library
//!
//! The language itself, shared by the `ais!` macro, the runtime, `build.rs` export and the
//! `ais` CLI: one model, one AG-IR reader and writer, one binder, one validator, one
//! expression language.
//!
//! At the crate root, the types a user works with:
//!
//! - the program model: [`Program`] and everything in it ([`Instruction`], [`Opcode`],
//!   [`Owner`], [`Carry`], [`Type`], [`TypeDecl`], [`Knowledge`], [`Tool`], [`Edge`], …), and
//!   [`ProgramBuilder`] to assemble one in Rust (what the `ais!` macro lowers into);
//! - the validator (spec §9): [`check()`] with [`Repairs`], giving [`Checked`] — the
//!   [`Outcome`], the [`Finding`]s (one diagnostic shape for read, signature, expression and
//!   validation errors: a [`Code`], a [`Severity`], a [`Repair`] carrying a structured
//!   [`Edit`] worded per front end by [`Wording`]) and the [`Deviation`]s of repairs applied;
//! - locations: [`Locus`] (element + [`FieldKey`]), [`SubRange`], the [`Locator`] a front end
//!   implements, and [`SourceMap`] with [`Pos`], the `.agir` one;
//! - [`lower`] to the runnable [`Plan`]; plain values ([`Value`]); did-you-mean
//!   ([`did_you_mean`], [`Suggester`]).
//!
//! Namespaces whose items read best qualified:
//!
//! - [`agir`]: reading and writing the `.agir` YAML encoding (spec §8) — `agir::read`,
//!   `agir::write`.
//! - [`sig`] and [`bind`]: tool signatures and the calling convention (spec §7).
//! - [`expr`]: guards and CODE bodies — a closed, bounded expression language.
//! - [`plan`]: the runnable form the runtime interprets, and the built-in tool table.
//! - [`render`]: findings as rustc-style text and as JSON.
//! - [`suggest`]: did-you-mean at scale, and its bounds.
//!
//! Cargo features (both default): `agir` (the reader and writer) and `render` (the renderer);
//! without them the crate builds with no YAML parser and no renderer, as a proc macro wants.
//!
//! A misspelled read is found, located and given a did-you-mean and a repair; a guard is
//! type-checked against the program's carries and evaluated:
//!
//! ```
//! use ais_core::{agir, check, expr, CheckId, Outcome, Repairs, Value};
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
//! let checked = check(&doc.program, &doc.source_map, Repairs::Off);
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
// Without the default features the namespaces they gate are absent from the crate docs' links.
#![cfg_attr(
    not(all(feature = "agir", feature = "render")),
    allow(rustdoc::broken_intra_doc_links)
)]

#[macro_use]
mod spelled;

// The public namespaces: each is an API of its own whose items read best qualified
// (`agir::read`, `sig::parse`, `expr::Limits` beside `agir::Limits`, `plan::Step`).
#[cfg(feature = "agir")]
pub mod agir;
pub mod bind;
pub mod budget;
pub mod expr;
pub mod files;
pub mod mcp;
pub mod plan;
#[cfg(feature = "render")]
pub mod render;
pub mod sig;
pub mod suggest;

// The rest is private; the types a user needs are re-exported below.
mod builder;
mod check;
mod diag;
mod edit;
#[cfg(feature = "render")]
mod long_line;
mod program;
mod source;
mod value;

pub use builder::{ProgramBuilder, StepBuilder};
pub use check::{
    Audit, AuditConfig, Checked, ObligationStatus, Realization, Repairs, audit, check, check_calls,
    check_lowering, check_mcp, check_native_tools, check_tiers, is_audit_check, native_entry,
    outcome_of,
};
pub use diag::{
    CheckId, Code, Deviation, Finding, FindingKind, Outcome, Related, Repair, Severity,
};
pub use edit::{Change, Edit, Wording};
pub use plan::{Plan, lower};
pub use program::{
    AcceptedDeviation, Autonomy, Bearer, Carry, Concurrency, ContentKind, DeviationKind, Edge,
    ElementRef, EnumMember, Extras, Field, Instruction, Isolation, Knowledge, McpBinding,
    McpServer, Modality, OUTCOME, OUTCOME_FIELDS, Obligation, ObligationKind, Opcode, Owner,
    Program, Provenance, Role, SourceRef, SpawnSource, Surface, Tool, ToolSurface, Type, TypeDecl,
    TypeKind, Walker,
};
pub use source::{Element, FieldKey, Locator, Locus, Pos, SourceMap, SubRange};
pub use suggest::{Suggester, did_you_mean};
pub use value::Value;
