//! # ais — agents as typed programs
//!
//! The facade of the ais toolkit for the Agent Instruction Set (AIS). It re-exports the language
//! core ([`ais_core`]), the runtime ([`rt`]) and the [`ais!`] macro, which writes an agent as
//! Rust (see the README and the `ais-syntax` crate for the language). The `ais` command-line
//! tool is the package `ais-cli`.
//!
//! Read an AG-IR program, validate it, and show what the validator found:
//!
//! ```
//! let text = r#"---
//! name: shout
//! description: Upper-case the task.
//! ---
//! walker:
//!   name: Shout
//!   carries:
//!     task: {type: str, role: input}
//!     loud: {type: str, produced_by: shout}
//! nodes:
//!   - {id: shout, type: CODE, owner: code, reads: [task], writes: [loud], body: "task.upper()"}
//!   - {id: done, type: TERMINAL, reads: [loud]}
//! edges:
//!   - {from: shout, to: done}
//! "#;
//! let doc = ais::agir::read(text)?;
//! assert_eq!(doc.program.instructions().len(), 2);
//!
//! let checked = ais::check(&doc.program, &doc.source_map, ais::Repairs::Off);
//! for finding in &checked.findings {
//!     println!("{}", ais::render::render_finding(finding, text, "shout.agir", false));
//! }
//! assert_eq!(checked.outcome, ais::Outcome::Clean);
//!
//! // The canonical text reads back to the same program.
//! let canonical = ais::agir::write(&doc.program);
//! assert_eq!(ais::agir::read(&canonical)?.program, doc.program);
//! # Ok::<(), ais::agir::ReadError>(())
//! ```
//!
//! ## Features
//!
//! By default the crate is light: the language, the macro, and a runtime that runs programs
//! on native Rust tools, Python `body` and `command` tools, and scripted models
//! (`scripted:FILE.json`). Each feature adds one heavy part:
//!
//! | feature | adds |
//! |---|---|
//! | `http` | live models — `openai:`, `anthropic:`, `ollama:`, any OpenAI-compatible server, `ais.toml` — and the `http_get` built-in (reqwest on rustls) |
//! | `mcp` | `ais::rt::mcp`: tools bound to MCP servers, programs served as MCP tools (rmcp, axum; turns on `http`) |
//! | `sqlite` | `ais::rt::journal::sqlite`: durable runs on a SQLite journal (bundled SQLite) |
//! | `otlp` | `ais::rt::otlp`: runs exported as OpenTelemetry traces (turns on `http`) |
//! | `json-schema` | answers to slots you fill by hand (`ais::rt::llm::fill`) checked against any JSON Schema (the `jsonschema` crate); a program's slots never need it |
//! | `graph` | `ais::graph`: a program drawn as DOT, Mermaid or SVG |
//! | `edit` | `ais::edit`: the semantic edit language |
//! | `repair` | `ais::repair`: the model repair rung (turns on `edit`) |
//! | `lift` | `ais::lift`: the skill compiler (turns on `repair`) |
//! | `restate` | `ais::restate`: programs as Restate workflows (turns on `http`) |
//! | `ags` | `ais::ags`: AGS 1.0 graphs read, checked and translated |
//! | `eval` | `ais::eval`: eval suites, trials and certificates (turns on `sqlite`) |
//! | `syntax` | `ais::syntax`: the `ais!` front end as a library (`export`, `write`) |
#![deny(missing_docs)]

// The compiler program (`lift`) is written with `ais!`, whose expansion names `::ais`.
extern crate self as ais;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
#[cfg(feature = "graph")]
pub mod graph;
#[cfg(feature = "lift")]
pub mod lift;
mod outcome;
mod run;

/// AGS 1.0 interop: `.agraph` documents read, checked and translated (feature `ags`).
#[cfg(feature = "ags")]
pub use ais_ags as ags;
pub use ais_core::*;
/// The semantic edit language for AG-IR programs: view, query, patch (`ais edit`; feature
/// `edit`).
#[cfg(feature = "edit")]
pub use ais_edit as edit;
/// Eval suites (`ais test`): the suite format, trials, judges, certificates (feature `eval`).
#[cfg(feature = "eval")]
pub use ais_eval as eval;
pub use ais_macros::ais;
/// The model repair rung (spec §9.1 rung 2, `ais fix --model`): crate `ais-repair` (feature
/// `repair`).
#[cfg(feature = "repair")]
pub use ais_repair as repair;
/// Programs as Restate workflows: the `Endpoint` builder, the ingress client (feature `restate`).
#[cfg(feature = "restate")]
pub use ais_restate as restate;
/// The runtime: [`Runtime`](rt::Runtime), tools, the report; `rt::llm`, `rt::journal`,
/// `rt::trace` (crate `ais-rt`).
pub use ais_rt as rt;
/// The DSL's spelling of a path parameter (`path: &ais::ArtifactPath`); the one item of the
/// runtime also at the facade's root.
pub use ais_rt::ArtifactPath;
/// The `ais!` front end as a library: `export` for build.rs, `write` (feature `syntax`).
#[cfg(feature = "syntax")]
pub use ais_syntax as syntax;
pub use outcome::OutcomeValue;
pub use run::{Replayed, RunError};
