//! # ais-rt — the ais runtime
//!
//! The interpreter that executes AIS programs — from the `ais!` macro or from any `.agir` file —
//! will live here: the twelve opcodes, model providers for SU slots, faults, budgets, deviations
//! and traces (spec §10). It is not built yet; this crate exists so the workspace has its final
//! shape, and exports nothing.
