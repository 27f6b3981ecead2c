//! # ais-syntax — the `ais!` DSL front end
//!
//! One front end, two drivers: the `ais!` proc macro (`ais-macros`) and `build.rs` export
//! ([`export()`]) both parse with [`parse()`], lower with [`lower()`] into the core's
//! [`Program`](ais_core::Program) and a [`SpanMap`], and place the validator's findings
//! with [`diagnose()`] — as cxx shares its bridge parser between its macro and
//! cxx-build. Every item has one path, at the crate root.
//!
//! It is a crate of its own rather than a feature of `ais-core` so that the core never sees
//! `syn`: a core built for the runtime or the CLI compiles no parser for Rust, and the DSL's
//! grammar can change without touching the language core's feature set.
//!
//! # The language
//!
//! ```text
//! ais! {
//!     /// Description (the frontmatter `description`).
//!     pub program Name (name = "snake_name", shape = pipeline, standalone) {
//!         carries { task: str = input, /** doc */ note: str, round: int = 0, limit: int = input(5) }
//!         /// An enum's doc.           enum Verdict { /** member doc */ approve, reject }
//!         /// An object's doc.         struct Args { /** field doc */ width: int = 80 }
//!         #[resident_on(draft)]        knowledge style = "Plain words.";
//!         /// Tool doc.  #[surface(ACT, artifact)]
//!         tool save(text: &str, path: &ais::ArtifactPath) -> std::io::Result<String> { .. }
//!         tool fetch(url: &str) -> String = crate::web::fetch;   // defined elsewhere
//!         tool test(target) = command "cargo test {target}";      // a subprocess
//!         #[idempotent] tool stamp(path) = command "touch {path}"; // may rerun after a crash
//!         tool read_file;                                          // a built-in
//!         tool count(path) -> String = python r#"def run(path): .."#;  // a Python body
//!         tool shout(text) -> String = "def run(text): .."; // no `lang` (the runtime: Python)
//!
//!         /// Doc: the semantic operand of a slot.
//!         draft: GEN-RAW(task) -> note;
//!         #[allow(unrouted_failure)]   // `save` is fallible; a failure here ends the run
//!         save_it: ACT(artifact) save(note) -> saved;
//!         total: CODE(a, b) -> sum = a + b;
//!         #[verdict(ok)] #[cap(3)] #[counter(round)]   fix: LOOP(code) repair(note) -> note;
//!         #[concurrency(isolation = private_write, max_parallel = 4)]  fan: SPAWN(items) -> out;
//!         sub: CALL Other(task) -> report;
//!         gate: ROUTE(ok);
//!         done: TERMINAL(note);
//!
//!         draft -> save_it -> gate;
//!         gate -> done if ok;
//!         gate -> draft else;
//!         forbid draft -> done;
//!
//!         // The provenance record of a lifted program (spec §9.5):
//!         source { path: "SKILL.md", digest: "sha256:9f86d0.." }
//!         obligation r1 { kind: step, force: mandatory, bearer: agent, quote: "Draft it.",
//!                         realized_by: [draft], at: "10:4", force_from: "..", cohesion: adaptive }
//!         deviation { obligation: r1, kind: weakened, element: "tool:save", reason: ".." }
//!     }
//! }
//! ```
//!
//! A program is written back out as `ais!` source by [`write_module`], the inverse of
//! lowering (`ais lift --emit rust`).
//!
//! Lowering decisions are listed in [`lower()`]. A Rust tool returning `Result` is *fallible*:
//! its `Err` is a routable error value, and [`unrouted_failures`] warns (G9, a compiler
//! warning) where no guard or LOOP verdict tests the carry it lands in.
#![deny(missing_docs)]

mod ast;
mod diagnose;
mod export;
mod lower;
mod mcp;
mod parse;
mod routing;
mod rust_types;
mod spans;
mod text;
mod words;
mod write;

pub use ast::*;
pub use diagnose::{Diagnostic, diagnose, diagnose_with, help as dsl_help};
pub use export::{ExportError, Exported, export, export_text};
pub use lower::{ALLOWABLE, Errors, Lowered, lower, lower_all, snake_case, value_text};
pub use routing::unrouted_failures;
pub use rust_types::{RustReturn, ais_return, ais_type, named_args};
pub use spans::SpanMap;
pub use text::{layout, source_text};
pub use write::{NotWritable, write_module};

use proc_macro2::TokenStream;

/// Parses the body of one `ais! { ... }`.
pub fn parse(tokens: TokenStream) -> syn::Result<File> {
    syn::parse2(tokens)
}

/// Parses the body of one `ais! { ... }` given as text (tests and tools).
pub fn parse_str(text: &str) -> syn::Result<File> {
    syn::parse_str(text)
}
