//! A human-approval gate written with `ais!`: before a refund goes out, a person says yes or
//! no. The question goes to the built-in `ask_user` tool, which pauses the run: the runtime
//! writes a resume handle under the output root and `run` returns `RunError::Paused`. The
//! answer comes back through `ApproveRefund::resume` (the runtime's `Runtime::resume`, typed), a
//! Rust tool parses it, and a code-owned ROUTE branches on the parsed answer — never the model
//! (spec §4.4.1, G6).
//!
//! The example answers for the human from its command line (default `yes`), so it runs
//! non-interactively: `cargo run --example approve_refund [ANSWER]`. Print its AG-IR:
//! `cargo run --example approve_refund -- --agir`. Canned model answers (SCRIPTED, no API key,
//! no network) are in `examples/approve_refund.responses.json`.

use ais::ais;

ais! {
    /// Refund a customer only after a person approves: ask, parse the answer, and reply to
    /// the customer either way.
    pub program ApproveRefund (name = "approve_refund", shape = "human-gate") {
        carries {
            /// The refund request as the customer sent it.
            task: str = input,
            /// What the approver is asked.
            question: str,
            /// The approver's answer, as typed.
            answer: str,
            /// True when the answer approves the refund.
            approved: bool,
            /// The reply to send the customer.
            reply: str,
        }

        #[surface(SENSE)]
        tool ask_user;

        /// Read an approver's answer: its first word decides (`yes`, `y`, `approve`,
        /// `approved`, `ok`); anything else — `no`, a question, an empty answer — is a refusal.
        #[surface(SENSE)]
        tool parse_approval(answer: &str) -> bool {
            let first = answer
                .trim()
                .split(|c: char| !c.is_alphanumeric())
                .next()
                .unwrap_or_default()
                .to_lowercase();
            matches!(first.as_str(), "yes" | "y" | "approve" | "approved" | "ok")
        }

        frame: CODE(task) -> question =
            "Approve this refund? Answer yes, or no with a reason.\n\n" + task;
        ask: SENSE ask_user(question) -> answer;
        parse: CODE parse_approval(answer) -> approved;
        gate: ROUTE(code)(approved);
        /// Tell the customer the refund is approved: the amount, that it reaches their
        /// account in 5-10 business days, and nothing else.
        confirm: GEN-RAW(task) -> reply;
        /// Tell the customer, kindly, that the refund was declined, with the approver's reason
        /// in your own words, and how to reply if they disagree.
        decline: GEN-RAW(task, answer) -> reply;
        done: TERMINAL(approved, reply);

        frame -> ask -> parse -> gate;
        gate -> confirm if approved;
        gate -> decline else;
        confirm -> done;
        decline -> done;
    }
}

/// The refund request the example gates.
pub const REQUEST: &str = "Order #55120: the blender (EUR 89.00) arrived with a cracked jar. \
    I'd like a refund rather than a replacement. — Marta";

/// Runs the program until it pauses at `ask`, then resumes it with `answer` (what the human
/// typed) and returns the typed report.
pub async fn run_with_answer(
    runtime: &ais::rt::Runtime,
    answer: &str,
) -> Result<(String, ApproveRefundReport), Box<dyn std::error::Error>> {
    let input = ApproveRefundInput {
        task: REQUEST.into(),
    };
    let pause = match ApproveRefund::run(input, runtime).await {
        Err(ais::RunError::Paused(pause)) => pause,
        Err(e) => return Err(e.into()),
        Ok(_) => return Err("the run finished without asking for approval".into()),
    };
    let handle = pause
        .handle
        .ok_or("the runtime could not write the resume handle")?;
    let report = ApproveRefund::resume(&handle, answer.to_owned(), runtime).await?;
    Ok((pause.prompt, report))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arg = std::env::args().nth(1);
    if arg.as_deref() == Some("--agir") {
        print!("{}", ApproveRefund::AGIR);
        return Ok(());
    }
    let answer = arg.unwrap_or_else(|| "yes".into());
    let responses = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/approve_refund.responses.json"
    );
    let model = ais::rt::llm::from_spec(&format!("scripted:{responses}"))?;
    let out_dir = tempfile::tempdir()?;
    let runtime = ApproveRefund::runtime()
        .model(model)
        .out_dir(out_dir.path().to_path_buf())
        .build();
    println!("model: SCRIPTED ({responses}), not a live model");
    let (prompt, report) = run_with_answer(&runtime, &answer).await?;
    println!("paused to ask:\n{prompt}\nanswered: {answer}");
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}
