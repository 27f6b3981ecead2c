//! The validator (spec §9).
//!
//! INTERFACE STUB — the check helper replaces this module; keep the public signatures.

use crate::diag::{Deviation, Finding, Outcome};
use crate::model::Program;
use crate::source::SourceMap;

/// What validating a program found.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The outcome (§9.1).
    pub outcome: Outcome,
    /// The findings that remain, ordered by position.
    pub findings: Vec<Finding>,
    /// The repairs applied (ladder step 1), each recorded as a deviation.
    pub deviations: Vec<Deviation>,
    /// The program after the repairs (equal to the input when none applied).
    pub program: Program,
}

/// Validates a program: every check, then mechanical repair when `repair` is true.
pub fn check(_program: &Program, _source_map: &SourceMap, _repair: bool) -> Checked {
    unimplemented!("check is being built")
}
