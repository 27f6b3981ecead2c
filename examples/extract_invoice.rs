//! Invoice extraction written with `ais!`: the model fills a declared object (GEN-FILL) from
//! an invoice's text — its fields documented, some with defaults — and Rust code checks the
//! figures and files the invoice as a CSV ledger row.
//!
//! The object's JSON Schema for the model comes from the same declaration as the Rust struct
//! `Invoice` the tools take. A field the model leaves out takes its declared default. The
//! check is a fallible Rust tool: its failure is a value in an `outcome` carry, and a ROUTE
//! files the invoice only when the check passed (spec §10.2: every error value is routed).
//!
//! Run it on the SCRIPTED model shipped beside it (canned answers, no API key, no network):
//! `cargo run --example extract_invoice [OUT_DIR]`; print its AG-IR: `cargo run --example
//! extract_invoice -- --agir`.

use ais::ais;

ais! {
    /// File a supplier invoice: read its fields off the text, check the figures, and write
    /// its ledger row.
    pub program ExtractInvoice (name = "extract_invoice", shape = pipeline) {
        carries {
            /// Where to file it (`File this invoice in ledger/2026-03.csv`).
            task: str = input,
            /// The invoice's text, as extracted from the PDF or the email.
            invoice_text: str = input,
            /// The invoice's fields.
            invoice: Invoice,
            /// The figures' check: on success its `value` is the CSV ledger row, with its
            /// header; on failure its `error` says what is wrong.
            checked: outcome,
            /// The invoice as a CSV ledger row, with its header.
            ledger_row: str,
            /// Where the ledger row was written.
            ledger_file: str,
        }

        /// A supplier invoice, as the ledger needs it.
        struct Invoice {
            /// The company that issued the invoice, as printed in its header.
            vendor: str,
            /// The invoice number, exactly as printed.
            number: str,
            /// The issue date, as `YYYY-MM-DD`.
            issued: str,
            /// The amount due, taxes included.
            total: float,
            /// The ISO 4217 code of the currency of `total`.
            currency: str = "EUR",
            /// Days from the issue date until payment is due.
            due_days: int = 30,
            /// One entry per invoice line: its description and amount, as printed.
            lines: list[str] = [],
        }

        /// Check the invoice's figures and render it as a ledger row with a header: the
        /// total must be positive and the date well formed.
        #[surface(SENSE)]
        tool to_ledger_row(invoice: &Invoice) -> Result<String, String> {
            if invoice.total.is_nan() || invoice.total <= 0.0 {
                return Err(format!("invoice {} has a total of {}", invoice.number, invoice.total));
            }
            let date: Vec<&str> = invoice.issued.split('-').collect();
            let well_formed = date.len() == 3
                && date.iter().zip([4, 2, 2]).all(|(p, n)| {
                    p.len() == n && p.bytes().all(|b| b.is_ascii_digit())
                });
            if !well_formed {
                return Err(format!("invoice {} has the date `{}`", invoice.number, invoice.issued));
            }
            let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
            Ok(format!(
                "vendor,number,issued,due_days,total,currency,lines\n{},{},{},{},{:.2},{},{}\n",
                quote(&invoice.vendor),
                quote(&invoice.number),
                invoice.issued,
                invoice.due_days,
                invoice.total,
                invoice.currency,
                invoice.lines.len()
            ))
        }

        /// Write the ledger row to the file the task names.
        #[surface(ACT, artifact)]
        tool file_row(ledger_row: &str, path: &ais::ArtifactPath) -> std::io::Result<String> {
            path.write(ledger_row)
        }

        /// Read the invoice's fields off its text. Copy names and numbers exactly; leave a
        /// field out rather than guess it.
        extract: GEN-FILL(invoice_text) -> invoice;
        render: CODE to_ledger_row(invoice) -> checked;
        gate: ROUTE(checked);
        row: CODE(checked) -> ledger_row = checked.value;
        #[allow(unrouted_failure)] // a failed write ends the run as an error
        file: ACT(artifact) file_row(ledger_row) -> ledger_file;
        done: TERMINAL(invoice, ledger_file, checked);

        extract -> render -> gate;
        gate -> row if checked.ok;
        gate -> done else;
        row -> file -> done;
    }
}

/// The invoice the example files.
pub const INVOICE_TEXT: &str = "\
NORDLICHT BÜROBEDARF GmbH · Hafenstraße 12 · 20457 Hamburg
Invoice no. NB-2026-0417            Date: 2026-03-09
Customer: Example Shop Ltd.

  2 x Ergonomic office chair  ......  EUR 498.00
  1 x Standing desk frame     ......  EUR 329.00
  VAT 19%                     ......  EUR 157.13

Total due: EUR 984.13 — payable within 30 days, IBAN DE44 5001 0517 5407 3249 31
";

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arg = std::env::args().nth(1);
    if arg.as_deref() == Some("--agir") {
        print!("{}", ExtractInvoice::AGIR);
        return Ok(());
    }
    let out_dir = match arg {
        Some(dir) => std::path::PathBuf::from(dir),
        None => tempfile::tempdir()?.keep(),
    };
    std::fs::create_dir_all(&out_dir)?;
    let responses = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/extract_invoice.responses.json"
    );
    let model = ais::rt::llm::from_spec(&format!("scripted:{responses}"))?;
    let runtime = ExtractInvoice::runtime()
        .model(model)
        .out_dir(out_dir.clone())
        .build();
    println!("model: SCRIPTED ({responses}), not a live model");
    let input = ExtractInvoiceInput {
        task: "File this invoice in ledger/2026-03.csv".into(),
        invoice_text: INVOICE_TEXT.into(),
    };
    let report = ExtractInvoice::run(input, &runtime).await?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    let ledger = report.ledger_file.unwrap_or_default();
    println!("ledger row written to {}", out_dir.join(ledger).display());
    Ok(())
}
