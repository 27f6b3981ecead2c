//! The `ais` command-line tool: `ais check`, `ais fmt`, `ais fix`, `ais eval`, `ais run`, `ais resume`.
//!
//! Run `ais --help` for the commands; the README lists them with example output, the JSON
//! shape of `ais check --format json`, and the exit codes.
#![deny(missing_docs)]

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
