//! Evaluating a case's assertions against what one trial observed: the outcome, the trace of
//! its steps, its output root, its wall time.

use crate::certificate::Certificate;
use crate::load::{Check, Compiled};
use crate::suite::{ArtifactCheck, Assertion, CertificateBound, DataFormat};
use ais_core::Value;
use ais_rt::RunOutcome;
use ais_rt::trace::StepEvent;
use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The largest artifact an assertion reads, in bytes.
pub const MAX_ARTIFACT_BYTES: u64 = 64 * 1024 * 1024;

/// What one trial showed.
#[derive(Clone, Debug)]
pub struct Observation {
    /// The run's outcome.
    pub outcome: RunOutcome,
    /// Its steps, in the order they ran.
    pub events: Vec<StepEvent>,
    /// Its output root.
    pub out: PathBuf,
    /// Its wall-clock time.
    pub wall: Duration,
    /// For a recorded case: the requests that differed from the recording, in words.
    pub misses: Option<Vec<String>>,
}

impl Observation {
    /// Exchanges with the model (scripted or live). A recorded case asks none: its replay
    /// answers every exchange from the recording (the trace still lists them, as the journal
    /// answered them), so it counts 0.
    pub fn model_calls(&self) -> u64 {
        if self.misses.is_some() {
            return 0;
        }
        self.events
            .iter()
            .filter_map(|e| e.slot.as_ref())
            .map(|s| s.exchanges.len() as u64)
            .sum()
    }

    /// Exchanges with a live (not scripted) model; none for a recorded case, as for
    /// [`Observation::model_calls`].
    pub fn live_calls(&self) -> u64 {
        if self.misses.is_some() {
            return 0;
        }
        self.events
            .iter()
            .filter_map(|e| e.slot.as_ref())
            .filter(|s| !s.scripted)
            .map(|s| s.exchanges.len() as u64)
            .sum()
    }

    /// Prompt and completion tokens.
    pub fn tokens(&self) -> u64 {
        self.outcome.usage.prompt_tokens + self.outcome.usage.completion_tokens
    }

    /// The instructions in the order they ran.
    fn path(&self) -> Vec<&str> {
        self.events.iter().map(|e| e.instruction.as_str()).collect()
    }

    fn path_shown(&self) -> String {
        let path = self.path();
        if path.is_empty() {
            return "no step ran".into();
        }
        let shown: Vec<&str> = path.iter().take(40).copied().collect();
        let more = if path.len() > 40 { " → …" } else { "" };
        format!("the path was {}{more}", shown.join(" → "))
    }
}

/// One assertion's verdict on one trial.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckResult {
    /// The assertion's index in its case's `expect`, from 0.
    pub index: usize,
    /// Its kind (`report`, `visited_in_order`, …).
    pub kind: &'static str,
    /// The assertion as written, on one line.
    pub assertion: String,
    /// Its line in the suite file.
    pub line: Option<u32>,
    /// Whether it held.
    pub passed: bool,
    /// What the run showed: the value seen, or why it failed.
    pub seen: String,
}

/// The verdict of `check` (index `index`) on `obs`; the verdict of an assertion the runner
/// decides is given as `judged`: a judged rubric (it needs a model) and a certificate (it needs
/// the run's journal), whose verdict is [`certificate_verdict`].
pub fn evaluate(
    index: usize,
    check: &Check,
    obs: &Observation,
    suite_dir: &Path,
    judged: Option<(bool, String)>,
) -> CheckResult {
    let (passed, seen) = verdict(check, obs, suite_dir, judged);
    CheckResult {
        index,
        kind: check.assertion.kind(),
        assertion: check.assertion.label(),
        line: check.place.pos.map(|p| p.line),
        passed,
        seen: clip(&seen, 400),
    }
}

/// `text` cut to `max` characters, with `…` when cut.
fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// A value on one line of at most ~160 characters.
pub fn short(v: &Json) -> String {
    let text = v.to_string();
    if text.chars().count() <= 160 {
        return text;
    }
    let head: String = text.chars().take(160).collect();
    format!("{head}…")
}

/// A report carry that is not there, and why the report may lack it.
fn absent(name: &str, outcome: &RunOutcome) -> String {
    format!(
        "`{name}` is absent from the report ({})",
        status_seen(outcome)
    )
}

fn status_seen(outcome: &RunOutcome) -> String {
    let mut s = format!("status {}", outcome.status);
    if let Some(f) = &outcome.fault {
        s.push_str(&format!(
            " ({} at `{}`: {})",
            f.kind, f.instruction, f.message
        ));
    } else if let Some(p) = &outcome.pause {
        s.push_str(&format!(
            " (waits for `{}` at `{}`)",
            p.carry, p.instruction
        ));
    } else if let Some(f) = outcome.failures.first() {
        s.push_str(&format!(
            " (`{}`: unrouted failure: {})",
            f.instruction, f.message
        ));
    }
    s
}

fn verdict(
    check: &Check,
    obs: &Observation,
    suite_dir: &Path,
    judged: Option<(bool, String)>,
) -> (bool, String) {
    let outcome = &obs.outcome;
    let report = &outcome.report;
    match &check.assertion {
        Assertion::Status(want) => (outcome.status == *want, status_seen(outcome)),
        Assertion::Report(text) => {
            let Compiled::Expr(compiled) = &check.compiled else {
                return (false, format!("`{text}` was not compiled"));
            };
            let carries: IndexMap<String, Value> = report
                .iter()
                .map(|(k, v)| (k.clone(), Value::from_json(v)))
                .collect();
            let read: Vec<String> = compiled
                .carries_read()
                .iter()
                .map(|name| match report.get(*name) {
                    Some(v) => format!("{name} = {}", short(v)),
                    None => format!("{name} is absent from the report"),
                })
                .collect();
            let mut seen = read.join(", ");
            if report.is_empty() {
                seen = format!("the report is empty ({})", status_seen(outcome));
            }
            match compiled.eval_bool(&carries) {
                Ok(b) => (b, seen),
                Err(e) => (false, format!("{}: {} ({seen})", e.category, e.message)),
            }
        }
        Assertion::ReportEquals(want) => {
            for (name, value) in want {
                match report.get(name) {
                    Some(v) if v == value => {}
                    Some(v) => return (false, format!("`{name}` is {}", short(v))),
                    None => {
                        return (false, absent(name, outcome));
                    }
                }
            }
            (true, "equal".into())
        }
        Assertion::ReportSchema(s) => {
            let Compiled::Schema(validator) = &check.compiled else {
                return (false, "the schema was not compiled".into());
            };
            let whole = Json::Object(report.clone());
            let instance = match &s.carry {
                Some(name) => match report.get(name) {
                    Some(v) => v,
                    None => {
                        return (false, absent(name, outcome));
                    }
                },
                None => &whole,
            };
            let errors: Vec<String> = validator
                .iter_errors(instance)
                .take(3)
                .map(|e| {
                    let at = e.instance_path().to_string();
                    if at.is_empty() {
                        e.to_string()
                    } else {
                        format!("at `{at}`: {e}")
                    }
                })
                .collect();
            if errors.is_empty() {
                (true, "valid".into())
            } else {
                (false, errors.join("; "))
            }
        }
        Assertion::Artifact(a) => artifact(a, &check.compiled, &obs.out, suite_dir),
        Assertion::Visited(names) => {
            let path = obs.path();
            match names.iter().find(|n| !path.contains(&n.as_str())) {
                Some(n) => (false, format!("`{n}` never ran; {}", obs.path_shown())),
                None => (true, obs.path_shown()),
            }
        }
        Assertion::NotVisited(names) => {
            let hit = obs.events.iter().find(|e| names.contains(&e.instruction));
            match hit {
                Some(e) => (
                    false,
                    format!(
                        "`{}` ran at step {}; {}",
                        e.instruction,
                        e.step,
                        obs.path_shown()
                    ),
                ),
                None => (true, obs.path_shown()),
            }
        }
        Assertion::VisitedInOrder(names) => {
            let mut want = names.iter().peekable();
            for id in obs.path() {
                if want.peek().is_some_and(|n| *n == id) {
                    want.next();
                }
            }
            match want.next() {
                Some(n) => (
                    false,
                    format!(
                        "`{n}` did not run where the order needs it; {}",
                        obs.path_shown()
                    ),
                ),
                None => (true, obs.path_shown()),
            }
        }
        Assertion::LoopAtMost(b) => {
            let times = obs
                .events
                .iter()
                .filter(|e| e.instruction == b.instruction && e.sibling.is_none())
                .count() as u64;
            (
                times <= b.times,
                format!("`{}` ran {times} time{}", b.instruction, plural(times)),
            )
        }
        Assertion::NoFault(want) => {
            let none = outcome.fault.is_none();
            (none == *want, status_seen(outcome))
        }
        Assertion::NoDeviation(want) => {
            let none = outcome.deviations.is_empty();
            let seen = match outcome.deviations.first() {
                None => "no deviation".to_owned(),
                Some(d) => format!(
                    "{} deviation{}, the first at `{}`: `{}` instead of `{}`",
                    outcome.deviations.len(),
                    plural(outcome.deviations.len() as u64),
                    d.subject,
                    d.substituted,
                    d.intended
                ),
            };
            (none == *want, seen)
        }
        Assertion::ToolCalled(t) => {
            let calls: Vec<&StepEvent> = obs
                .events
                .iter()
                .filter(|e| e.tool.as_deref() == Some(t.tool.as_str()))
                .collect();
            let fits = |e: &StepEvent| {
                t.args
                    .iter()
                    .all(|(name, value)| e.operands.iter().any(|(n, v)| n == name && v == value))
            };
            if calls.iter().any(|e| fits(e)) {
                return (
                    true,
                    format!("called {} time{}", calls.len(), plural(calls.len() as u64)),
                );
            }
            match calls.first() {
                None => (
                    false,
                    format!("`{}` was never called; {}", t.tool, obs.path_shown()),
                ),
                Some(e) => {
                    let args: serde_json::Map<String, Json> = e.operands.iter().cloned().collect();
                    (
                        false,
                        format!(
                            "`{}` was called {} time{}, never with those arguments; the first call had {}",
                            t.tool,
                            calls.len(),
                            plural(calls.len() as u64),
                            short(&Json::Object(args))
                        ),
                    )
                }
            }
        }
        Assertion::Cost(c) => {
            let mut over = Vec::new();
            let mut seen = Vec::new();
            let mut bound = |what: &str, value: f64, max: Option<f64>, unit: &str| {
                if let Some(max) = max {
                    seen.push(format!("{what} {value}{unit}"));
                    if value > max {
                        over.push(format!("{what} {value}{unit} (at most {max}{unit})"));
                    }
                }
            };
            bound(
                "steps",
                obs.outcome.steps as f64,
                c.steps.map(|v| v as f64),
                "",
            );
            bound(
                "model calls",
                obs.model_calls() as f64,
                c.model_calls.map(|v| v as f64),
                "",
            );
            bound(
                "tokens",
                obs.tokens() as f64,
                c.tokens.map(|v| v as f64),
                "",
            );
            let secs = (obs.wall.as_secs_f64() * 1000.0).round() / 1000.0;
            bound("wall time", secs, c.wall_secs, " s");
            if over.is_empty() {
                (true, seen.join(", "))
            } else {
                (false, over.join(", "))
            }
        }
        Assertion::Judged(_) => judged.unwrap_or((false, "the judge was not asked".into())),
        Assertion::Certificate(_) => judged.unwrap_or((false, "the run was not certified".into())),
        Assertion::SameRequests(want) => match &obs.misses {
            None => (
                false,
                "the case is not recorded: its model asks anew".into(),
            ),
            Some(m) if m.is_empty() => (*want, "every request as recorded".into()),
            Some(m) => (!*want, m.join("; ")),
        },
    }
}

/// The verdict of a `certificate` assertion on the run's certificate (or why there is none):
/// the share performed against the bound, and the obligations the run did not perform.
pub fn certificate_verdict(
    bound: &CertificateBound,
    certificate: &Result<Certificate, String>,
) -> (bool, String) {
    let c = match certificate {
        Ok(c) => c,
        Err(e) => return (false, format!("no certificate: {e}")),
    };
    let m = &c.mandatory;
    let missing: Vec<String> = c
        .obligations
        .iter()
        .filter(|o| o.counted && !o.standing.performed())
        .map(|o| format!("`{}` {}", o.id, o.standing.as_str().replace('_', " ")))
        .collect();
    // Compared in hundredths of a percent, so that `66.67%` is met by two of three.
    let met =
        (m.performed_percent * 100.0).round() >= (bound.mandatory_performed.0 * 100.0).round();
    let mut seen = format!(
        "{}/{} mandatory obligations performed ({:.1}%: {} guaranteed, {} observable only)",
        m.performed, m.total, m.performed_percent, m.guaranteed, m.observable_only
    );
    if !missing.is_empty() {
        seen.push_str(&format!("; not performed: {}", missing.join(", ")));
    }
    seen.push_str(&format!(" (run {})", c.run));
    (met, seen)
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn artifact(
    a: &ArtifactCheck,
    compiled: &Compiled,
    out: &Path,
    suite_dir: &Path,
) -> (bool, String) {
    let path = out.join(&a.path);
    let want_exists = a.exists.unwrap_or(true);
    let bytes = match ais_core::files::read_regular(&path, MAX_ARTIFACT_BYTES) {
        Ok(b) => Some(b),
        Err(e) if e.is_not_found() => None,
        Err(e) => return (false, format!("`{}` cannot be read: {e}", a.path)),
    };
    let Some(bytes) = bytes else {
        return (
            !want_exists,
            format!("`{}` does not exist under the output root", a.path),
        );
    };
    if !want_exists {
        return (
            false,
            format!("`{}` exists ({} bytes)", a.path, bytes.len()),
        );
    }
    if let Some(f) = &a.equals_file {
        let expected = suite_dir.join(f);
        match ais_core::files::read_regular(&expected, MAX_ARTIFACT_BYTES) {
            Ok(e) if e == bytes => {}
            Ok(e) => {
                let at = e
                    .iter()
                    .zip(&bytes)
                    .position(|(x, y)| x != y)
                    .unwrap_or(e.len().min(bytes.len()));
                return (
                    false,
                    format!(
                        "`{}` ({} bytes) differs from `{f}` ({} bytes) from byte {at}",
                        a.path,
                        bytes.len(),
                        e.len()
                    ),
                );
            }
            Err(e) => return (false, format!("`{f}` cannot be read: {e}")),
        }
    }
    let text = String::from_utf8_lossy(&bytes);
    let excerpt = || short(&Json::String(text.chars().take(200).collect()));
    if let Some(needle) = &a.contains
        && !text.contains(needle.as_str())
    {
        return (
            false,
            format!("`{}` does not contain it; it begins {}", a.path, excerpt()),
        );
    }
    if let (Some(_), Compiled::Regex(re)) = (&a.matches, compiled)
        && !re.is_match(&text)
    {
        return (
            false,
            format!("`{}` does not match; it begins {}", a.path, excerpt()),
        );
    }
    match a.parses_as {
        Some(DataFormat::Json) => {
            if let Err(e) = serde_json::from_slice::<Json>(&bytes) {
                return (false, format!("`{}` is not JSON: {e}", a.path));
            }
        }
        Some(DataFormat::Csv) => {
            let mut reader = csv::ReaderBuilder::new().from_reader(bytes.as_slice());
            if let Err(e) = reader.headers() {
                return (false, format!("`{}` is not CSV: {e}", a.path));
            }
            for record in reader.records() {
                if let Err(e) = record {
                    return (false, format!("`{}` is not CSV: {e}", a.path));
                }
            }
        }
        None => {}
    }
    (true, format!("`{}` ({} bytes)", a.path, bytes.len()))
}
