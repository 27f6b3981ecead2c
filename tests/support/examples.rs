//! Every `ais!` example program as a module, for the test crates that run them
//! (`tests/macro_examples.rs`, `tests/evals.rs`): `#[path = "support/examples.rs"] mod
//! examples; use examples::*;`. Each example's `main` is dead code here.

#[allow(dead_code)]
#[path = "../../examples/writing_plans.rs"]
pub mod writing_plans;

#[allow(dead_code)]
#[path = "../../examples/triage_ticket.rs"]
pub mod triage_ticket;

#[allow(dead_code)]
#[path = "../../examples/fix_failing_test.rs"]
pub mod fix_failing_test;

#[allow(dead_code)]
#[path = "../../examples/review_files.rs"]
pub mod review_files;

#[allow(dead_code)]
#[path = "../../examples/release_notes.rs"]
pub mod release_notes;

#[allow(dead_code)]
#[path = "../../examples/approve_refund.rs"]
pub mod approve_refund;

#[allow(dead_code)]
#[path = "../../examples/extract_invoice.rs"]
pub mod extract_invoice;

#[allow(dead_code)]
#[path = "../../examples/sales_question.rs"]
pub mod sales_question;

#[allow(dead_code)]
#[path = "../../examples/sentiment.rs"]
pub mod sentiment;
