//! The whole `ais check` binary on generated programs of 1,000, 10,000 and 20,000 instructions:
//! process start, file read, YAML parse, validation and rendering, as a user sees it.
//!
//! Run with `cargo bench --bench cli`. It prints the generated files' paths, so the same runs can
//! be repeated with hyperfine: `hyperfine 'target/release/ais check <path>'`.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "support/synth.rs"]
mod synth;

const RUNS: usize = 15;

fn main() {
    let exe = env!("CARGO_BIN_EXE_ais");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    println!("ais check, {RUNS} runs each ({exe})");
    println!(
        "{:>8}  {:>10}  {:>10}  {:>10}  file",
        "n", "min", "median", "max"
    );
    for n in [1_000usize, 10_000, 20_000] {
        let path = dir.join(format!("synthetic_{n}.agir"));
        if let Err(e) = std::fs::write(&path, synth::program(n)) {
            eprintln!("cannot write {}: {e}", path.display());
            std::process::exit(2);
        }
        let mut times: Vec<Duration> = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let start = Instant::now();
            let status = Command::new(exe)
                .args(["check", "--color", "never"])
                .arg(&path)
                .stdout(std::process::Stdio::null())
                .status();
            let took = start.elapsed();
            match status {
                Ok(s) if s.code() == Some(0) => times.push(took),
                Ok(s) => {
                    eprintln!(
                        "`ais check {}` exited with {s}; the program should be clean",
                        path.display()
                    );
                    std::process::exit(2);
                }
                Err(e) => {
                    eprintln!("cannot run {exe}: {e}");
                    std::process::exit(2);
                }
            }
        }
        times.sort();
        let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1000.0);
        println!(
            "{n:>8}  {:>10}  {:>10}  {:>10}  {}",
            ms(times[0]),
            ms(times[RUNS / 2]),
            ms(times[RUNS - 1]),
            path.display()
        );
    }
}
