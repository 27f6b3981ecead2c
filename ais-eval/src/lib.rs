//! # ais-eval — eval suites for AIS programs (`ais test`)
//!
//! A suite (`*.aistest.yaml`, [`suite`]) states what a program must do, case by case: its
//! inputs, the model that answers its slots (canned answers, a recorded run, or a live
//! provider), and assertions —
//!
//! - on the **report**: expressions in the program's own guard language over its carries
//!   (`category == Category.billing`, `len(rows) >= 3`), exact values, a JSON Schema;
//! - on **artifacts** under the run's output root: exists, equals a file, contains, matches a
//!   regex, parses as JSON or CSV;
//! - on the **trajectory**: instructions visited, never visited, visited in order, a loop's
//!   bound, no fault, no deviation, a tool called with given arguments;
//! - on **cost**: steps, model calls, tokens, wall time;
//! - **judged**: a rubric a judge model answers with a typed verdict — the judge is a tiny ais
//!   program itself ([`judge`]), so its exchange is validated and journaled like any slot's.
//!
//! [`Suite::load`] checks a suite against its programs before anything runs (a misspelled carry
//! gets a did-you-mean, a malformed regex its place); [`runner::run`] runs every case's trials
//! concurrently up to a bound, each journaled in an output root of its own, and gives each
//! case's pass rate with its 95% Wilson interval ([`stats`]); [`output`] writes the result as
//! a table, JSON or JUnit XML. [`record`] turns a journaled run into a case whose slots are
//! answered from the recording (`ais test add`). [`certificate`] certifies a journaled run
//! against its program's provenance record (`ais runs certify`, and the suite assertion
//! `certificate: {mandatory_performed: 100%}`).
//!
//! ```
//! use ais_eval::{Suite, runner};
//! use std::sync::Arc;
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("shout.agir"), r#"---
//! name: shout
//! description: Upper-case the task.
//! ---
//! walker:
//!   carries:
//!     task: {type: str, role: input}
//!     loud: {type: str, produced_by: shout}
//! nodes:
//!   - {id: shout, type: CODE, owner: code, reads: [task], writes: [loud], body: "task.upper()"}
//!   - {id: done, type: TERMINAL, reads: [loud]}
//! edges:
//!   - {from: shout, to: done}
//! "#)?;
//! let path = dir.path().join("shout.aistest.yaml");
//! std::fs::write(&path, r#"
//! program: shout.agir
//! cases:
//!   - name: shouts
//!     task: hello
//!     expect:
//!       - report: loud == "HELLO"
//!       - visited_in_order: [shout, done]
//!       - cost: {steps: 2, model_calls: 0}
//! "#)?;
//! let suite = Suite::load(&path)?;
//! let options = runner::Options { trials: None, jobs: 2, out: dir.path().join("out"), journal: true };
//! let result = runner::run(&suite, Arc::new(runner::Builtins), &options, Arc::new(|_, _| {}))?;
//! assert!(result.passed);
//! assert_eq!(result.cases[0].pass_rate, 1.0);
//!
//! // A misspelled carry is found before anything runs, with its place and a suggestion.
//! std::fs::write(&path, "program: shout.agir\ncases:\n  - name: x\n    expect:\n      - report: lod == 'X'\n")?;
//! let err = Suite::load(&path).unwrap_err();
//! assert_eq!(err.place.pos.map(|p| p.line), Some(5));
//! assert!(err.message.contains("Did you mean `loud`?"), "{}", err.message);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod certificate;
pub mod check;
pub mod judge;
mod load;
pub mod output;
pub mod record;
pub mod runner;
pub mod stats;
pub mod suite;

pub use load::{Case, Check, LoadedProgram, ModelSource, Suite};
pub use suite::{SuiteError, schema};
