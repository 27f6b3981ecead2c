//! The bounds a run's untrusted input runs under, as `ais run` / `ais resume` flags: the size of
//! a model's answer, the siblings of a SPAWN, what the built-ins may read and fetch.

use ais_rt::RuntimeBuilder;

/// The flags of a run's bounds.
#[derive(Debug, Clone, clap::Args)]
pub struct Bounds {
    /// The largest model answer a slot accepts, in bytes [default: 8388608]; a larger one
    /// fails the slot with an error saying so.
    #[arg(long, value_name = "BYTES")]
    pub max_answer_bytes: Option<usize>,
    /// The most siblings one SPAWN may fork [default: 1000]; each sibling also counts as a
    /// step toward `--max-steps`.
    #[arg(long, value_name = "N")]
    pub max_siblings: Option<usize>,
    /// Let the built-in reads (`read_file`, `list_dir`, `glob_files`, `grep`) reach under PATH
    /// too (repeatable); by default they read under the working directory and `--out` only.
    #[arg(long, value_name = "PATH")]
    pub allow_read: Vec<std::path::PathBuf>,
    /// Let `http_get` fetch HOST even when it is a loopback, private or link-local address
    /// (repeatable; the host as the URL writes it: `localhost`, `127.0.0.1`, `[::1]`).
    #[arg(long, value_name = "HOST")]
    pub allow_net: Vec<String>,
}

impl Bounds {
    /// `builder` with these bounds applied (the runtime's defaults where a flag is absent).
    pub fn apply(&self, mut builder: RuntimeBuilder) -> RuntimeBuilder {
        if let Some(n) = self.max_answer_bytes {
            builder = builder.max_answer_bytes(n);
        }
        if let Some(n) = self.max_siblings {
            builder = builder.max_siblings(n);
        }
        for dir in &self.allow_read {
            builder = builder.allow_read(dir.clone());
        }
        for host in &self.allow_net {
            builder = builder.allow_net(host.clone());
        }
        builder
    }
}
