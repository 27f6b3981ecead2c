//! The `ais` command-line tool: `ais check`, `ais fmt`, `ais fix`, `ais eval`, `ais run`, `ais resume`.
//!
//! Run `ais --help` for the commands; the book (`book/`) describes them with example output,
//! the JSON shape of `ais check --format json`, and the exit codes.
#![deny(missing_docs)]

mod cli;

fn main() -> std::process::ExitCode {
    no_fast_bins();
    // Before anything else: no process of this user may read this one's memory or environment
    // (a tool reading `/proc/<ais>/environ`), and SIGINT / SIGTERM take every tool down first.
    ais::rt::harden_process();
    if let Err(e) = ais::rt::exit_on_signals() {
        eprintln!(
            "ais: warning: cannot install the SIGINT/SIGTERM handler ({e}); a tool still running when ais is stopped dies with it only through its parent-death signal"
        );
    }
    cli::main()
}

/// Turns off glibc's fast bins. Freeing a large chunk makes glibc consolidate every small chunk
/// freed into them since: a run drops a large program's index, plan and tree as many small
/// chunks scattered over the heap, and the consolidation walked them, cache-missing, for up to
/// 40% of a 20,000-instruction chain's run and more the larger the program
/// (`benches/run_scale.sh`). Without them a small chunk is merged when freed (the per-thread
/// cache still serves the common sizes). Peak memory is unchanged.
fn no_fast_bins() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets an allocator parameter; it is called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MXFAST, 0);
    }
}
