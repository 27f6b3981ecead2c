//! The `ais` command-line tool. INTERFACE STUB — the cli helper builds it.
fn main() {
    eprintln!("ais: not built yet");
    std::process::exit(2);
}
