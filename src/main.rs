//! The `ais` command-line tool: `ais check`, `ais fmt`, `ais fix`, `ais eval`, `ais run`, `ais resume`.
//!
//! Run `ais --help` for the commands; the README lists them with example output, the JSON
//! shape of `ais check --format json`, and the exit codes.
#![deny(missing_docs)]

mod cli;

fn main() -> std::process::ExitCode {
    // Before anything else: no process of this user may read this one's memory or environment
    // (a tool reading `/proc/<ais>/environ`), and SIGINT / SIGTERM take every tool down first.
    ais_rt::sandbox::harden_process();
    if let Err(e) = ais_rt::sandbox::exit_on_signals() {
        eprintln!(
            "ais: warning: cannot install the SIGINT/SIGTERM handler ({e}); a tool still running when ais is stopped dies with it only through its parent-death signal"
        );
    }
    cli::main()
}
