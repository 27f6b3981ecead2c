//! A journaled run as a case (`ais test add RUN_ID --to SUITE`): the run's recording written
//! beside the suite (`<suite>.recordings/<run>.json`), and a case appended to the suite whose
//! model is `recorded:` that file — every slot answered from the recording, no model asked —
//! and whose assertions start from what the run produced (its status, its report, the path it
//! took), for the user to edit.

use ais_rt::journal::{Effect, Json, RunStart, StepCommit};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The format tag of a recording file.
pub const RECORDING_FORMAT: &str = "ais-test-recording/1";

/// The largest recording read, in bytes.
pub const MAX_RECORDING_BYTES: u64 = 64 * 1024 * 1024;

/// A finished run as `ais test add` keeps it: what the journal recorded, in one JSON file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recording {
    /// [`RECORDING_FORMAT`].
    pub format: String,
    /// What the run started with (program, digest, task, inputs).
    pub start: RunStart,
    /// How it ended (`ok`, `error`, `fault`).
    pub status: ais_rt::journal::RunState,
    /// Every effect with its result, in key order.
    pub effects: Vec<(Effect, Option<Json>)>,
    /// Its step commits, in order.
    pub commits: Vec<StepCommit>,
    /// Its outcome as JSON.
    pub outcome: Option<Json>,
}

impl Recording {
    /// The recording of a run read from a journal; only a finished run.
    pub fn of(rec: ais_rt::journal::Recording) -> Result<Recording, String> {
        rec.finished().map_err(|e| e.to_string())?;
        Ok(Recording {
            format: RECORDING_FORMAT.to_owned(),
            start: rec.start,
            status: rec.status,
            effects: rec.effects,
            commits: rec.commits,
            outcome: rec.outcome,
        })
    }

    /// Reads a recording file; the error says what is wrong with it.
    pub fn read(path: &Path) -> Result<Recording, String> {
        let text = ais_core::files::read_regular_text(path, MAX_RECORDING_BYTES)
            .map_err(|e| format!("the recording `{}` cannot be read: {e}", path.display()))?;
        let rec: Recording = serde_json::from_str(&text).map_err(|e| {
            format!(
                "the recording `{}` does not read (line {}, column {}): {e}",
                path.display(),
                e.line(),
                e.column()
            )
        })?;
        if rec.format != RECORDING_FORMAT {
            return Err(format!(
                "the recording `{}` is `{}`, not `{RECORDING_FORMAT}`",
                path.display(),
                rec.format
            ));
        }
        let replay = rec.to_replay(None, None);
        replay.finished().map_err(|e| {
            format!(
                "the recording `{}` cannot answer a run: {e}",
                path.display()
            )
        })?;
        Ok(rec)
    }

    /// The runtime's recording, with the task and inputs of the case when given.
    pub fn to_replay(
        &self,
        task: Option<&str>,
        inputs: Option<Vec<(String, Json)>>,
    ) -> ais_rt::journal::Recording {
        let mut start = self.start.clone();
        if let Some(t) = task {
            start.task = t.to_owned();
        }
        if let Some(i) = inputs {
            start.inputs = i;
        }
        ais_rt::journal::Recording {
            start,
            status: self.status,
            effects: self.effects.clone(),
            commits: self.commits.clone(),
            outcome: self.outcome.clone(),
        }
    }

    /// The recorded report.
    pub fn report(&self) -> serde_json::Map<String, Json> {
        self.outcome
            .as_ref()
            .and_then(|o| o.get("report"))
            .and_then(Json::as_object)
            .cloned()
            .unwrap_or_default()
    }

    /// The instructions the run committed, in order, each once (its first visit).
    pub fn path(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for c in &self.commits {
            if !out.contains(&c.instruction) {
                out.push(c.instruction.clone());
            }
        }
        out
    }
}

/// Where the recording of run `id` for the suite at `suite` is kept:
/// `<dir>/<stem>.recordings/<id>.json`, and the path the suite names it by.
pub fn recording_path(suite: &Path, id: &str) -> (PathBuf, String) {
    let name = suite
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("suite.aistest.yaml");
    let stem = name
        .strip_suffix(crate::suite::SUITE_SUFFIX)
        .or_else(|| name.strip_suffix(".yaml"))
        .unwrap_or(name);
    let safe: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let rel = format!("{stem}.recordings/{safe}.json");
    let dir = suite.parent().unwrap_or(Path::new(""));
    (dir.join(&rel), rel)
}

/// The YAML of a case made from `rec`: named `name`, running `program` (as the suite names it),
/// answered from `recorded` (as the suite names it), its dash at column `indent`.
pub fn case_yaml(
    rec: &Recording,
    name: &str,
    program: &str,
    recorded: &str,
    indent: usize,
) -> String {
    let q = |s: &str| Json::String(s.to_owned()).to_string();
    let pad = " ".repeat(indent);
    let mut out = format!("{pad}- name: {}\n", q(name));
    out.push_str(&format!("{pad}  program: {}\n", q(program)));
    out.push_str(&format!("{pad}  task: {}\n", q(&rec.start.task)));
    if !rec.start.inputs.is_empty() {
        let map: serde_json::Map<String, Json> = rec.start.inputs.iter().cloned().collect();
        out.push_str(&format!("{pad}  inputs: {}\n", Json::Object(map)));
    }
    out.push_str(&format!(
        "{pad}  model: {}\n",
        q(&format!("recorded:{recorded}"))
    ));
    out.push_str(&format!("{pad}  expect:\n"));
    out.push_str(&format!("{pad}    - status: {}\n", rec.status));
    let report = rec.report();
    if !report.is_empty() {
        out.push_str(&format!(
            "{pad}    - report_equals: {}\n",
            Json::Object(report)
        ));
    }
    let path = rec.path();
    if !path.is_empty() {
        out.push_str(&format!(
            "{pad}    - visited_in_order: {}\n",
            Json::from(path)
        ));
    }
    out.push_str(&format!("{pad}    - same_requests: true\n"));
    out.push_str(&format!("{pad}    - cost: {{model_calls: 0}}\n"));
    out
}
