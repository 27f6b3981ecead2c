//! A parallel code review written with `ais!`: load the files of a change, fan out one model
//! reviewer per file (SPAWN over a list, `shared_read` isolation, at most four at once), join
//! the reviews in file order, and tally them into a summary table with a Rust tool.
//!
//! Run it on the SCRIPTED model shipped beside it (canned answers, no API key, no network):
//! `cargo run --example review_files`; print its AG-IR: `cargo run --example review_files --
//! --agir`.

use ais::ais;

ais! {
    /// Review the files of a change in parallel, one reviewer per file, and summarize the
    /// verdicts.
    pub program ReviewFiles (name = "review_files", shape = "fan-out") {
        carries {
            /// What the change is for, as its author described it.
            task: str = input,
            /// The checkout the files are in.
            checkout: str = input,
            /// The files to review, relative to the checkout.
            paths: list[str] = input,
            /// Each file as its path and its contents in a fenced block.
            files: list[str],
            /// One review per file, in the order of `paths`.
            reviews: list[str],
            /// A Markdown table: one row per file with its verdict and first comment.
            summary: str,
            /// True when every reviewer approved.
            approved: bool,
        }

        /// Read each file of the checkout and present it as its path followed by its contents
        /// in a fenced block; a file that cannot be read is presented with the reason, for its
        /// reviewer to judge (a path the change deletes, say).
        #[surface(SENSE)]
        tool load_files(checkout: &str, paths: &[String]) -> Vec<String> {
            let root = std::path::Path::new(checkout);
            paths
                .iter()
                .map(|path| match std::fs::read_to_string(root.join(path)) {
                    Ok(text) => format!("{path}\n```\n{}\n```", text.trim_end()),
                    Err(e) => format!("{path}\n(this file cannot be read: {e})"),
                })
                .collect()
        }

        /// Tally the reviews: a table row per file with the verdict on the review's first line
        /// (`approve` or `request-changes`) and its first comment.
        #[surface(SENSE)]
        tool tally_reviews(paths: &[String], reviews: &[String]) -> String {
            let mut table = String::from("| file | verdict | first comment |\n|---|---|---|\n");
            for (path, review) in paths.iter().zip(reviews) {
                let mut lines = review.lines().map(str::trim).filter(|l| !l.is_empty());
                let verdict = lines
                    .next()
                    .and_then(|l| l.strip_prefix("verdict:"))
                    .map_or("unclear", str::trim);
                let comment = lines.next().unwrap_or("").trim_start_matches("- ");
                table.push_str(&format!("| {path} | {verdict} | {comment} |\n"));
            }
            table
        }

        gather: SENSE load_files(checkout, paths) -> files;
        /// Review this one file of the change. Start with a line `verdict: approve` or
        /// `verdict: request-changes`, then list concrete comments as `- ` bullets, most
        /// important first, each naming the line it is about. Judge only this file.
        #[concurrency(isolation = shared_read, max_parallel = 4)]
        review: SPAWN(task, files) -> reviews;
        tally: CODE tally_reviews(paths, reviews) -> summary;
        decide: CODE(summary) -> approved = "request-changes" not in summary;
        done: TERMINAL(approved, summary, reviews);

        gather -> review -> tally -> decide -> done;
    }
}

/// The change the example reviews: its files' names and contents.
pub const CHANGE: [(&str, &str); 3] = [
    (
        "src/retry.rs",
        "pub fn backoff(attempt: u32) -> u64 {\n    100 * 2u64.pow(attempt)\n}\n",
    ),
    (
        "src/config.rs",
        "pub const MAX_ATTEMPTS: u32 = 5;\npub const TIMEOUT_MS: u64 = 30_000;\n",
    ),
    (
        "README.md",
        "# fetcher\n\nRetries failed requests with exponential backoff.\n",
    ),
];

/// Writes the change's files into the checkout `dir` and returns their relative paths.
pub fn write_change(dir: &std::path::Path) -> std::io::Result<Vec<String>> {
    CHANGE
        .iter()
        .map(|(name, text)| {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap_or(dir))?;
            std::fs::write(&path, text)?;
            Ok((*name).to_owned())
        })
        .collect()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().nth(1).as_deref() == Some("--agir") {
        print!("{}", ReviewFiles::AGIR);
        return Ok(());
    }
    let work = tempfile::tempdir()?;
    let paths = write_change(work.path())?;
    let responses = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/review_files.responses.json"
    );
    let model = ais::rt::llm::from_spec(&format!("scripted:{responses}"))?;
    let runtime = ReviewFiles::runtime()
        .model(model)
        .out_dir(work.path().to_path_buf())
        .build();
    println!("model: SCRIPTED ({responses}), not a live model");
    let input = ReviewFilesInput {
        task: "Retry failed requests with exponential backoff".into(),
        checkout: work.path().display().to_string(),
        paths,
    };
    let report = ReviewFiles::run(input, &runtime).await?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}
