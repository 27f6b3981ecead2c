//! A support-ticket router written with `ais!`: the model sorts the ticket into a declared
//! enum (GEN-ENUM), and a code-owned ROUTE sends it down one branch per category, with a
//! default for whatever the guards do not name.
//!
//! The program has no Rust tools, so its checked-in AG-IR (`examples/agir/triage_ticket.agir`)
//! runs the same under the CLI: `ais run examples/agir/triage_ticket.agir --task '...' --model
//! scripted:examples/triage_ticket.responses.json`.
//!
//! Run it on the SCRIPTED model shipped beside it (canned answers, no API key, no network):
//! `cargo run --example triage_ticket`; print its AG-IR: `cargo run --example triage_ticket --
//! --agir`.

use ais::ais;

ais! {
    /// Triage a customer support ticket: classify it, then draft the reply its category needs.
    pub program TriageTicket (name = "triage_ticket", shape = "dispatch-router") {
        carries {
            /// The ticket as the customer wrote it.
            task: str = input,
            /// What kind of ticket it is.
            category: Category,
            /// The reply to send the customer.
            reply: str,
            /// The queue the ticket goes to next.
            queue: str,
        }

        /// The kinds of ticket the support team handles differently.
        enum Category {
            /// A charge, a refund, an invoice or a plan change.
            billing,
            /// Something in the product does not work as documented.
            bug,
            /// Sign-in, password, two-factor or account deletion.
            account,
            /// Anything else: questions, praise, feature ideas.
            other,
        }

        // The provenance record: the support team's triage rules this program realizes
        // (`ais runs certify RUN_ID` shows which of them a run performed, and how).
        obligation r_classify { kind: step, force: mandatory, quote: "Classify the ticket by what the customer needs, not by their tone." }
        obligation r_route { kind: step, force: mandatory, quote: "Each category of ticket gets the reply its category needs." }
        // A reply rule applies only to its category: a guarded (discretionary) transition.
        obligation r_billing { kind: step, force: discretionary, quote: "For a billing ticket, restate the charge and say billing reviews it within two business days." }
        obligation r_bug { kind: step, force: discretionary, quote: "For a bug report, restate the steps to reproduce and ask for the app version." }
        obligation r_account { kind: step, force: discretionary, quote: "For an account ticket, point to the self-service recovery page." }
        obligation r_general { kind: step, force: discretionary, quote: "For anything else, answer briefly and point to the help center." }
        obligation r_queue { kind: step, force: mandatory, quote: "Assign the ticket to its category's queue; bugs and account tickets are urgent." }

        /// Classify the ticket by what the customer needs from us, not by their tone.
        #[traces_to("r_classify")]
        classify: GEN-ENUM(task) -> category;
        #[traces_to("r_route")]
        route: ROUTE(category);
        /// Reply to a billing ticket: restate the charge in question, say that billing will
        /// review it within two business days, and never promise a refund.
        #[traces_to("r_billing")]
        billing_reply: GEN-RAW(task) -> reply;
        /// Reply to a bug report: thank the customer, restate the steps to reproduce as you
        /// understood them, and ask for the app version if the ticket does not give it.
        #[traces_to("r_bug")]
        bug_reply: GEN-RAW(task) -> reply;
        /// Reply to an account ticket: point to the self-service recovery page and say that
        /// support will never ask for a password.
        #[traces_to("r_account")]
        account_reply: GEN-RAW(task) -> reply;
        /// Reply to any other ticket: answer briefly and point to the help center.
        #[traces_to("r_general")]
        general_reply: GEN-RAW(task) -> reply;
        #[traces_to("r_queue")]
        assign: CODE(category) -> queue = "support-" + category
            + ("-urgent" if category in [Category.bug, Category.account] else "");
        done: TERMINAL(category, queue, reply);

        classify -> route;
        route -> billing_reply if category == Category.billing;
        route -> bug_reply if category == Category.bug;
        route -> account_reply if category == Category.account;
        route -> general_reply else;
        billing_reply -> assign;
        bug_reply -> assign;
        account_reply -> assign;
        general_reply -> assign;
        assign -> done;
    }
}

/// The ticket the example triages.
pub const TICKET: &str = "Hi, I was charged twice for my Pro plan this month (two charges of \
    $29 on March 3rd). Can you look into it? Order #88412.";

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().nth(1).as_deref() == Some("--agir") {
        print!("{}", TriageTicket::AGIR);
        return Ok(());
    }
    let responses = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/triage_ticket.responses.json"
    );
    let model = ais::rt::llm::from_spec(&format!("scripted:{responses}"))?;
    let out_dir = tempfile::tempdir()?;
    let runtime = TriageTicket::runtime()
        .model(model)
        .out_dir(out_dir.path().to_path_buf())
        .build();
    println!("model: SCRIPTED ({responses}), not a live model");
    let input = TriageTicketInput {
        task: TICKET.into(),
    };
    let report = TriageTicket::run(input, &runtime).await?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}
