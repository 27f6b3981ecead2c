//! # ais-macros — the `ais!` procedural macro
//!
//! The macro that lets an agent be written as Rust will live here: it parses the DSL with the
//! front end in `ais-core`, runs the same validator as the `ais` CLI, and generates the AG-IR
//! text and native tool bindings. It is not built yet; this crate exists so the workspace has
//! its final shape, and exports nothing.
