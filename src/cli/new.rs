//! `ais new NAME [--rust]`: a working first agent in a new directory — the CSV-sentiment agent
//! of the book's tutorial (`examples/sentiment.agir`, `examples/sentiment.rs`), renamed after
//! `NAME`, with scripted answers, a sample CSV and a README; with `--rust`, a crate with its
//! dependencies, a `build.rs` that exports the program's `.agir`, and a test.
//!
//! The scaffold is made from the examples themselves, so what `ais new` writes is what the
//! examples' tests run. It never writes into an existing directory or over a file.

use super::{CliError, CmdResult, Output, Status, shown};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The agent in AG-IR, with Python tools: what `ais run` executes.
const AGIR: &str = include_str!("../../examples/sentiment.agir");
/// The agent in Rust: the `ais!` program is taken from it.
const RUST: &str = include_str!("../../examples/sentiment.rs");
/// The scripted answers to the sample CSV's four reviews.
const RESPONSES: &str = include_str!("../../examples/sentiment.responses.json");
/// The sample CSV.
const REVIEWS: &str = include_str!("../../examples/reviews.csv");

/// Arguments of `ais new`.
#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// The agent's name, which is also the directory created for it (`review-digest`,
    /// `path/to/review_digest`): letters, digits, `-` and `_`, starting with a letter.
    pub name: PathBuf,
    /// Scaffold a Rust crate (the agent written with `ais!`, a `build.rs` export, a test)
    /// instead of an `.agir` file.
    #[arg(long)]
    pub rust: bool,
    /// With `--rust`: depend on the ais checkout at DIR (path dependencies) instead of the
    /// crates.io release this `ais` was built from.
    #[arg(long, value_name = "DIR", requires = "rust")]
    pub ais_path: Option<PathBuf>,
}

/// The names one agent goes by.
struct Names {
    /// As given: the crate's and the directory's name (`review-digest`).
    given: String,
    /// The program's name and file stem (`review_digest`).
    snake: String,
    /// The walker's and Rust type's name (`ReviewDigest`).
    camel: String,
}

impl Names {
    fn parse(name: &str) -> Result<Names, CliError> {
        let valid = name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid {
            return Err(CliError::new(
                format!("`{}` cannot name an agent", super::escape_controls(name)),
                "use letters, digits, `-` and `_`, starting with a letter: `ais new review-digest`",
            ));
        }
        let snake = name.replace('-', "_").to_ascii_lowercase();
        let camel = snake
            .split('_')
            .filter(|w| !w.is_empty())
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                    .unwrap_or_default()
            })
            .collect();
        Ok(Names {
            given: name.to_owned(),
            snake,
            camel,
        })
    }

    /// `text` with the example's names replaced by this agent's.
    fn rename(&self, text: &str) -> String {
        text.replace("name: sentiment\n", &format!("name: {}\n", self.snake))
            .replace("name: Sentiment\n", &format!("name: {}\n", self.camel))
            .replace(
                "program Sentiment (name = \"sentiment\"",
                &format!("program {} (name = \"{}\"", self.camel, self.snake),
            )
    }
}

/// Creates the agent's directory and writes the scaffold into it.
pub fn run(args: &NewArgs, o: &mut Output) -> CmdResult {
    let name = args
        .name
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| {
            CliError::new(
                format!("`{}` names no directory to create", shown(&args.name)),
                "give the agent a name: `ais new review-digest`",
            )
        })?;
    let names = Names::parse(name)?;
    let dir = &args.name;
    std::fs::create_dir(dir).map_err(|e| {
        let help = if e.kind() == std::io::ErrorKind::AlreadyExists {
            "ais new writes only into a directory it creates: choose another name, or move the existing one away"
        } else {
            "check that the parent directory exists and is writable"
        };
        CliError::new(format!("cannot create `{}`: {e}", shown(dir)), help)
    })?;
    let files = if args.rust {
        rust_files(&names, args.ais_path.as_deref())?
    } else {
        agir_files(&names)
    };
    for (path, text) in &files {
        write_new(&dir.join(path), text)?;
    }
    let shown_dir = shown(dir);
    writeln!(o.out, "created `{shown_dir}`:")?;
    for (path, _) in &files {
        writeln!(o.out, "  {path}")?;
    }
    if args.rust {
        writeln!(
            o.out,
            "next: cd {shown_dir} && cargo run   # runs on the scripted answers; `cargo test` tests it"
        )?;
    } else {
        writeln!(
            o.out,
            "next: cd {shown_dir} && ais run {}.agir --task \"Summarize reviews.csv\" --model scripted:{}.responses.json",
            names.snake, names.snake
        )?;
    }
    Ok(Status::Ok)
}

/// Writes a file that must not exist yet (the directory is new, so none does; a link planted
/// meanwhile is not followed).
fn write_new(path: &Path, text: &str) -> Result<(), CliError> {
    let fail = |e: std::io::Error| {
        CliError::new(
            format!("cannot write `{}`: {e}", shown(path)),
            "check that the directory is writable and has room",
        )
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(fail)?;
    file.write_all(text.as_bytes()).map_err(fail)
}

/// The `.agir` form: the program, its scripted answers, the sample CSV and a README.
fn agir_files(n: &Names) -> Vec<(String, String)> {
    let s = &n.snake;
    let readme = format!(
        "# {given}\n\n\
An agent written in AG-IR (`{s}.agir`): it reads the CSV of reviews the task names, labels each\n\
review with a model (one slot per row, a SPAWN), counts the labels in code, and saves\n\
`summary.md` only when the counts add up.\n\n\
Run it on the scripted answers in `{s}.responses.json` (written by hand, not a model's output;\n\
no API key, no network):\n\n\
```sh\n\
ais run {s}.agir --task \"Summarize reviews.csv\" --model scripted:{s}.responses.json\n\
cat summary.md\n\
```\n\n\
Against a live model, name one instead: `--model openai:gpt-4o-mini` (with `OPENAI_API_KEY`),\n\
`--model anthropic:claude-3-5-haiku-latest` (with `ANTHROPIC_API_KEY`) or\n\
`--model ollama:llama3.2` (a local Ollama).\n\n\
Check it without running it, and draw it:\n\n\
```sh\n\
ais check {s}.agir\n\
ais graph {s}.agir\n\
```\n\n\
The reviews are in `reviews.csv`; a relative path in the task is read from the directory you\n\
run `ais` in. `summary.md` is written under `--out` (default: this directory).\n",
        given = n.given
    );
    vec![
        (format!("{s}.agir"), n.rename(AGIR)),
        (format!("{s}.responses.json"), RESPONSES.to_owned()),
        ("reviews.csv".to_owned(), REVIEWS.to_owned()),
        ("README.md".to_owned(), readme),
    ]
}

/// The `ais!` program of `examples/sentiment.rs`: from `ais! {` to its closing brace.
fn program_block() -> Result<&'static str, CliError> {
    let start = RUST.find("ais! {\n");
    let end = start.and_then(|s| RUST[s..].find("\n}\n").map(|e| s + e + 3));
    match (start, end) {
        (Some(s), Some(e)) => Ok(&RUST[s..e]),
        _ => Err(CliError::new(
            "this ais was built without its sentiment example's program",
            "report it: examples/sentiment.rs must hold one `ais! { … }` block",
        )),
    }
}

/// The `--rust` form: a crate whose library holds the program, whose binary runs it, whose
/// `build.rs` exports its `.agir`, and whose test runs it on the scripted answers.
fn rust_files(n: &Names, ais_path: Option<&Path>) -> Result<Vec<(String, String)>, CliError> {
    let (given, s, c) = (&n.given, &n.snake, &n.camel);
    let (ais, syntax) = match ais_path {
        Some(dir) => {
            let dir = std::fs::canonicalize(dir).map_err(|e| {
                CliError::new(
                    format!("--ais-path `{}`: {e}", shown(dir)),
                    "name the directory of an ais checkout (the one holding ais-syntax/)",
                )
            })?;
            let dir = dir.display().to_string().replace('\\', "/");
            (
                format!("{{ path = \"{dir}/ais\" }}"),
                format!("{{ path = \"{dir}/ais-syntax\" }}"),
            )
        }
        None => {
            let v = env!("CARGO_PKG_VERSION");
            (format!("\"{v}\""), format!("\"{v}\""))
        }
    };
    let cargo = format!(
        "[package]\n\
name = \"{given}\"\n\
version = \"0.1.0\"\n\
edition = \"2024\"\n\
publish = false\n\n\
[features]\n\
# Live models (`--model openai:…`, `anthropic:…`, `ollama:…`): `cargo run --features live`.\n\
live = [\"ais/http\"]\n\n\
[dependencies]\n\
ais = {ais}\n\
csv = \"1.3\"\n\
tokio = {{ version = \"1\", features = [\"rt\", \"macros\"] }}\n\n\
[build-dependencies]\n\
ais-syntax = {syntax}\n\n\
[dev-dependencies]\n\
tempfile = \"3\"\n"
    );
    let lib = format!(
        "//! The {given} agent: read the CSV of reviews the task names, label each review with a\n\
//! model (one slot per row, a SPAWN), count the labels in code, and save `summary.md` only\n\
//! when the counts add up.\n\n\
use ais::ais;\n\n\
{program}\n\
/// The sample reviews (`reviews.csv`).\n\
pub const REVIEWS: &str = include_str!(\"../reviews.csv\");\n\n\
/// The scripted answers to the sample reviews (`{s}.responses.json`).\n\
pub const RESPONSES: &str = concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/{s}.responses.json\");\n",
        program = n.rename(program_block()?)
    );
    let main = format!(
        "//! `cargo run [-- --model SPEC] [OUT_DIR]`: summarizes the sample reviews into\n\
//! OUT_DIR/summary.md, on the scripted answers unless `--model` names a live model\n\
//! (`openai:gpt-4o-mini`, `anthropic:claude-3-5-haiku-latest`, `ollama:llama3.2`), which\n\
//! needs the `live` feature: `cargo run --features live -- --model SPEC`.\n\n\
use {crate_}::{{{c}, {c}Input, RESPONSES, REVIEWS}};\n\n\
#[tokio::main(flavor = \"current_thread\")]\n\
async fn main() -> Result<(), Box<dyn std::error::Error>> {{\n\
    let mut args: Vec<String> = std::env::args().skip(1).collect();\n\
    let mut spec = format!(\"scripted:{{RESPONSES}}\");\n\
    if let Some(i) = args.iter().position(|a| a == \"--model\") {{\n\
        args.remove(i);\n\
        spec = args.get(i).cloned().ok_or(\"--model needs a SPEC\")?;\n\
        args.remove(i);\n\
    }}\n\
    let out_dir = std::path::PathBuf::from(args.first().map_or(\"target/{s}\", String::as_str));\n\
    std::fs::create_dir_all(&out_dir)?;\n\
    let csv = out_dir.join(\"reviews.csv\");\n\
    std::fs::write(&csv, REVIEWS)?;\n\
    let runtime = {c}::runtime()\n\
        .model(ais::rt::llm::from_spec(&spec)?)\n\
        .out_dir(out_dir.clone())\n\
        .build();\n\
    println!(\"model: {{spec}}\");\n\
    let input = {c}Input {{\n\
        task: format!(\"Summarize {{}}\", csv.display()),\n\
        summary_path: None,\n\
    }};\n\
    let report = {c}::run(input, &runtime).await?;\n\
    match report.problem {{\n\
        Some(problem) => Err(problem.into()),\n\
        None => {{\n\
            println!(\"{{}}\", report.counts.unwrap_or_default());\n\
            println!(\"summary written to {{}}\", out_dir.join(\"summary.md\").display());\n\
            Ok(())\n\
        }}\n\
    }}\n\
}}\n",
        crate_ = s
    );
    let build = format!(
        "//! Writes the program's AG-IR to $OUT_DIR/agir/{s}.agir: what `ais check`, `ais graph`\n\
//! and `ais run` read (its Rust tools run only from Rust).\n\n\
fn main() {{\n\
    println!(\"cargo::rerun-if-changed=src/lib.rs\");\n\
    let out = std::path::Path::new(&std::env::var(\"OUT_DIR\").unwrap()).join(\"agir\");\n\
    if let Err(e) = ais_syntax::export(&[\"src/lib.rs\"], &out) {{\n\
        panic!(\"{{e}}\");\n\
    }}\n\
}}\n"
    );
    let test = format!(
        "//! The agent end to end on its scripted answers, and its exported AG-IR.\n\n\
use {s}::{{{c}, {c}Input, RESPONSES, REVIEWS}};\n\n\
fn runtime(out: &std::path::Path) -> ais::rt::Runtime {{\n\
    let model = ais::rt::llm::from_spec(&format!(\"scripted:{{RESPONSES}}\")).unwrap();\n\
    {c}::runtime().model(model).out_dir(out.to_path_buf()).build()\n\
}}\n\n\
#[tokio::test]\n\
async fn summarizes_the_sample_reviews() {{\n\
    let dir = tempfile::tempdir().unwrap();\n\
    let csv = dir.path().join(\"reviews.csv\");\n\
    std::fs::write(&csv, REVIEWS).unwrap();\n\
    let input = {c}Input {{ task: format!(\"Summarize {{}}\", csv.display()), summary_path: None }};\n\
    let report = {c}::run(input, &runtime(dir.path())).await.unwrap();\n\
    assert_eq!(report.problem, None);\n\
    assert_eq!(report.counts.as_deref(), Some(\"2 positive, 1 negative, 1 neutral\"));\n\
    let summary = std::fs::read_to_string(dir.path().join(\"summary.md\")).unwrap();\n\
    assert!(summary.contains(\"4 reviews\"), \"{{summary}}\");\n\
}}\n\n\
#[tokio::test]\n\
async fn a_missing_file_is_a_problem_not_a_summary() {{\n\
    let dir = tempfile::tempdir().unwrap();\n\
    let task = format!(\"Summarize {{}}\", dir.path().join(\"gone.csv\").display());\n\
    let input = {c}Input {{ task, summary_path: None }};\n\
    let report = {c}::run(input, &runtime(dir.path())).await.unwrap();\n\
    assert!(report.problem.unwrap().starts_with(\"cannot read the reviews\"));\n\
    assert!(!dir.path().join(\"summary.md\").exists());\n\
}}\n\n\
#[test]\n\
fn build_rs_exports_the_macros_agir() {{\n\
    let exported = include_str!(concat!(env!(\"OUT_DIR\"), \"/agir/{s}.agir\"));\n\
    assert_eq!(exported, {c}::AGIR);\n\
}}\n"
    );
    let readme = format!(
        "# {given}\n\n\
An agent written in Rust with the `ais!` macro (`src/lib.rs`): it reads the CSV of reviews the\n\
task names, labels each review with a model (one slot per row, a SPAWN), counts the labels in\n\
code, and saves `summary.md` only when the counts add up. A mistake in the program is a\n\
compile error at the token that broke it.\n\n\
```sh\n\
cargo run                                                 # on the scripted answers in {s}.responses.json\n\
cargo run --features live -- --model openai:gpt-4o-mini   # a live model (OPENAI_API_KEY)\n\
cargo test                                                # runs it end to end, checks the exported AG-IR\n\
```\n\n\
`build.rs` writes the program's AG-IR to `$OUT_DIR/agir/{s}.agir` (byte for byte `{c}::AGIR`);\n\
`ais check` and `ais graph` read it.\n"
    );
    Ok(vec![
        ("Cargo.toml".to_owned(), cargo),
        ("build.rs".to_owned(), build),
        ("src/lib.rs".to_owned(), lib),
        ("src/main.rs".to_owned(), main),
        (format!("tests/{s}.rs"), test),
        (format!("{s}.responses.json"), RESPONSES.to_owned()),
        ("reviews.csv".to_owned(), REVIEWS.to_owned()),
        ("README.md".to_owned(), readme),
        (".gitignore".to_owned(), "/target\n".to_owned()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_and_derived() {
        let n = Names::parse("review-digest").unwrap();
        assert_eq!(
            (n.snake.as_str(), n.camel.as_str()),
            ("review_digest", "ReviewDigest")
        );
        for bad in ["1agent", "-x", "a b", "a/b", "", "ag\u{1b}[2J"] {
            assert!(Names::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_program_block_is_the_examples_whole_program() {
        let block = program_block().unwrap();
        assert!(block.starts_with("ais! {\n"));
        assert!(block.ends_with("\n}\n"));
        assert!(block.contains("done: TERMINAL"));
        let renamed = Names::parse("digest").unwrap().rename(block);
        assert!(
            renamed.contains("program Digest (name = \"digest\""),
            "{renamed}"
        );
    }
}
