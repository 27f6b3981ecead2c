//! The bounds a run's untrusted input runs under, as `ais run` / `ais resume` flags: the size of
//! a model's answer, the siblings of a SPAWN, what the built-ins may read and fetch, what the
//! models may cost.
//!
//! A run records the bounds it was started with (in its journal row, or beside its resume
//! handle), and `ais resume` runs under them again: a bound given to the resume replaces the
//! recorded one, flag by flag.

use ais::rt::RuntimeBuilder;

/// The flags of a run's bounds.
#[derive(Debug, Clone, Default, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(default)]
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
    /// Let a file the task names after a save verb ("save to report.md") replace a file that
    /// exists and this run did not create. Without it such a write goes to a destination the
    /// program derives (`save.txt`), with a deviation; a file the run reads is never replaced
    /// by a name taken from the task.
    #[arg(long)]
    pub overwrite: bool,
    /// The cost budget in US dollars, across SPAWN siblings, CALL sub-runs and resumes: a call
    /// that may cost more than is left (Anthropic's token limit × the price) is refused before
    /// it is made, else an answer that takes the run past the budget stops it after; either is
    /// the fault `budget_exhausted`. Every model a slot may ask needs a price in ais.toml.
    #[arg(long, value_name = "DOLLARS", value_parser = dollars)]
    pub max_cost: Option<f64>,
}

/// A cost budget as `--max-cost` takes it: a non-negative number of dollars.
fn dollars(text: &str) -> Result<f64, String> {
    let n: f64 = text
        .trim()
        .trim_start_matches('$')
        .parse()
        .map_err(|_| format!("`{text}` is no amount; write dollars, e.g. `--max-cost 0.50`"))?;
    if n.is_finite() && n >= 0.0 {
        Ok(n)
    } else {
        Err(format!(
            "`{text}` is no budget; write a non-negative amount of dollars, e.g. `--max-cost 0.50`"
        ))
    }
}

impl Bounds {
    /// These bounds as a run records them: the read roots absolute, so that a resume from
    /// another directory reads under the same places.
    pub fn recorded(&self) -> Bounds {
        let mut b = self.clone();
        for dir in &mut b.allow_read {
            if let Ok(abs) = std::path::absolute(&*dir) {
                *dir = abs;
            }
        }
        b
    }

    /// The bounds of a resume: each one given on its command line, else the one `recorded`
    /// when the run started.
    pub fn or(self, recorded: Bounds) -> Bounds {
        Bounds {
            max_answer_bytes: self.max_answer_bytes.or(recorded.max_answer_bytes),
            max_siblings: self.max_siblings.or(recorded.max_siblings),
            allow_read: given_or(self.allow_read, recorded.allow_read),
            allow_net: given_or(self.allow_net, recorded.allow_net),
            max_cost: self.max_cost.or(recorded.max_cost),
            overwrite: self.overwrite || recorded.overwrite,
        }
    }

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
        if let Some(dollars) = self.max_cost {
            builder = builder.max_cost(dollars);
        }
        builder.overwrite(self.overwrite)
    }
}

/// The list given, unless it is empty: then the one kept.
fn given_or<T>(given: Vec<T>, kept: Vec<T>) -> Vec<T> {
    if given.is_empty() { kept } else { given }
}
