//! The first agent of the ais book, written with `ais!`: read the CSV of reviews the task
//! names, label each review with a model (a SPAWN of one slot per row), count the labels in
//! code, and save `summary.md` only when the counts add up to the number of reviews.
//!
//! It is the program of `examples/sentiment.agir` instruction for instruction (a test compares
//! them); here the two tools are Rust instead of Python.
//!
//! Run it on the SCRIPTED model shipped beside it (canned answers, no API key, no network):
//! `cargo run --example sentiment [OUT_DIR]`; print its AG-IR: `cargo run --example sentiment
//! -- --agir`; against a live model: `cargo run --example sentiment -- --model
//! openai:gpt-4o-mini OUT_DIR`.

use ais::ais;

ais! {
    /// Read the CSV of reviews the task names, label each review with a model, count the labels
    /// in code, and save summary.md only when the counts add up.
    pub program Sentiment (name = "sentiment", shape = "fan-out") {
        carries {
            /// What to summarize, naming the CSV file: `Summarize reviews.csv`.
            task: str = input,
            /// Where the summary is saved, under the output directory.
            summary_path: str = input("summary.md"),
            /// The reviews, or why the file could not be read.
            loaded: outcome,
            /// One review per row of the CSV.
            rows: list[str],
            /// One label per review, in row order.
            labels: list[str],
            /// The three counts, as text.
            counts: str,
            /// The summary in markdown.
            summary_md: str,
            /// The path the summary was saved to, or why it was not.
            saved: outcome,
            /// Why no summary was saved.
            problem: str,
        }

        /// Read the CSV file the task names and return the text of its `review` column, one
        /// entry per row.
        #[surface(SENSE)]
        tool load_reviews(path: &str) -> Result<Vec<String>, csv::Error> {
            let mut reader = csv::Reader::from_path(path)?;
            let column = reader.headers()?.iter().position(|h| h == "review").unwrap_or(0);
            reader
                .records()
                .map(|row| Ok(row?.get(column).unwrap_or_default().to_owned()))
                .collect()
        }

        /// Write the summary to a markdown file and return its path.
        #[surface(ACT, artifact)]
        tool save_summary(summary_md: &str, path: &ais::ArtifactPath) -> std::io::Result<String> {
            path.write(summary_md)
        }

        load: SENSE load_reviews(task) -> loaded;
        unpack: CODE(loaded) -> rows = loaded.value;
        /// Label this one customer review `positive`, `negative` or `neutral`. Answer with the
        /// label only.
        #[concurrency(isolation = shared_read, max_parallel = 4)]
        classify: SPAWN(rows) -> labels;
        tally: CODE(labels) -> counts = str(labels.count("positive")) + " positive, "
            + str(labels.count("negative")) + " negative, "
            + str(labels.count("neutral")) + " neutral";
        write: CODE(counts, rows) -> summary_md =
            "# Review sentiment\n\n" + str(len(rows)) + " reviews: " + counts + "\n";
        save: ACT(artifact) save_summary(summary_md, summary_path) -> saved;
        unreadable: CODE(loaded) -> problem = "cannot read the reviews: " + loaded.error;
        refuse: CODE(labels, rows) -> problem = "refused: the labels do not add up to the "
            + str(len(rows)) + " reviews: " + str(labels);
        not_saved: CODE(saved) -> problem = "not saved: " + saved.error;
        done: TERMINAL(saved, counts, problem);

        load -> unpack if loaded.ok;
        load -> unreadable else;
        unpack -> classify;
        classify -> tally;
        tally -> write if labels.count("positive") + labels.count("negative")
            + labels.count("neutral") == len(rows);
        tally -> refuse else;
        write -> save;
        save -> done if saved.ok;
        save -> not_saved else;
        unreadable -> done;
        refuse -> done;
        not_saved -> done;
    }
}

/// The reviews the example reads: `examples/reviews.csv`.
pub const REVIEWS: &str = include_str!("reviews.csv");

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--agir") {
        print!("{}", Sentiment::AGIR);
        return Ok(());
    }
    let responses = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/sentiment.responses.json"
    );
    let mut spec = format!("scripted:{responses}");
    if let Some(i) = args.iter().position(|a| a == "--model") {
        args.remove(i);
        if i < args.len() {
            spec = args.remove(i);
        }
    }
    let out_dir = match args.first() {
        Some(dir) => std::path::PathBuf::from(dir),
        None => tempfile::tempdir()?.keep(),
    };
    std::fs::create_dir_all(&out_dir)?;
    let csv_path = out_dir.join("reviews.csv");
    std::fs::write(&csv_path, REVIEWS)?;
    let runtime = Sentiment::runtime()
        .model(ais::rt::llm::from_spec(&spec)?)
        .out_dir(out_dir.clone())
        .build();
    println!("model: {spec}");
    let input = SentimentInput {
        task: format!("Summarize {}", csv_path.display()),
        summary_path: None,
    };
    let report = Sentiment::run(input, &runtime).await?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    if let Some(problem) = &report.problem {
        return Err(problem.clone().into());
    }
    println!(
        "summary written to {}",
        out_dir.join("summary.md").display()
    );
    Ok(())
}
