//! Author-then-run written with `ais!` (spec §4.1): the model writes a Python script that
//! answers a question about a CSV file (GEN-RAW into the program carry `script`), and a
//! tool-less ACT runs it with the runtime's script runner — the text is saved under
//! `.ais/scripts/` in the output root and run by `python3` there. The run's
//! `{ok, error, output}` lands in an `outcome` carry, and a code-owned ROUTE branches on it:
//! the script's output is the answer, or the model explains the failure. Never an exception,
//! never the authored text thrown away.
//!
//! The program has no Rust tools, so its checked-in AG-IR (`examples/agir/sales_question.agir`)
//! runs the same under the CLI. The run needs `python3` on the `PATH`.
//!
//! Run it on the SCRIPTED model shipped beside it (canned answers, no API key, no network):
//! `cargo run --example sales_question [OUT_DIR]`; print its AG-IR: `cargo run --example
//! sales_question -- --agir`.

use ais::ais;

ais! {
    /// Answer a question about `sales.csv` by writing a Python script and running it.
    pub program SalesQuestion (name = "sales_question", shape = "author-then-run") {
        carries {
            /// The question, about `sales.csv` in the working directory.
            task: str = input,
            /// The Python script that answers it.
            script: str,
            /// What running the script gave: `ok`, `error` and its `output`.
            run_result: outcome,
            /// The answer to the question.
            answer: str,
        }

        /// Write a Python 3 script that answers the question from `sales.csv` in the working
        /// directory (columns: `date`, `region`, `product`, `units`, `unit_price`). Use only
        /// the standard library's `csv` module, and print only the answer, one line. Output
        /// only the script.
        author: GEN-RAW(task) -> script;
        run: ACT(code, workspace)(script) -> run_result;
        check: ROUTE(run_result);
        report: CODE(run_result) -> answer = run_result.output.strip();
        /// The script failed. Explain in one or two sentences, for the person who asked,
        /// why the question could not be answered, using the error output.
        explain: GEN-RAW(task, run_result) -> answer;
        done: TERMINAL(answer, script);

        author -> run -> check;
        check -> report if run_result.ok;
        check -> explain else;
        report -> done;
        explain -> done;
    }
}

/// The data the example's question is about.
pub const SALES_CSV: &str = "\
date,region,product,units,unit_price
2026-01-05,north,kettle,12,24.50
2026-01-09,south,kettle,7,24.50
2026-01-12,north,toaster,4,39.00
2026-02-02,south,toaster,9,39.00
2026-02-14,north,kettle,5,24.50
2026-02-20,west,blender,3,89.00
";

/// The question the example asks.
pub const QUESTION: &str = "Which region had the highest revenue, and how much was it?";

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arg = std::env::args().nth(1);
    if arg.as_deref() == Some("--agir") {
        print!("{}", SalesQuestion::AGIR);
        return Ok(());
    }
    let out_dir = match arg {
        Some(dir) => std::path::PathBuf::from(dir),
        None => tempfile::tempdir()?.keep(),
    };
    std::fs::create_dir_all(&out_dir)?;
    std::fs::write(out_dir.join("sales.csv"), SALES_CSV)?;
    let responses = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/sales_question.responses.json"
    );
    let model = ais::rt::llm::from_spec(&format!("scripted:{responses}"))?;
    let runtime = SalesQuestion::runtime()
        .model(model)
        .out_dir(out_dir.clone())
        .build();
    println!("model: SCRIPTED ({responses}), not a live model");
    let input = SalesQuestionInput {
        task: QUESTION.into(),
    };
    let report = SalesQuestion::run(input, &runtime).await?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    println!(
        "script saved and run in {}",
        out_dir.join(".ais/scripts/run.py").display()
    );
    Ok(())
}
