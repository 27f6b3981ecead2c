//! The trace: one event per step (spec §10.5).
//!
//! The machine emits a [`StepEvent`] for every instruction it executes; a [`TraceSink`] takes
//! them — to `tracing` ([`TracingSink`]), to a JSON Lines file ([`JsonLinesSink`], `ais run
//! --trace FILE`), to several sinks ([`Tee`]), or nowhere ([`NoTrace`]). A slot's event carries
//! the full request and the raw and parsed response. No secret (an API key, an `Authorization`
//! header) is ever in a trace: providers strip them from the [`Exchange`]s they return, and the
//! sinks scrub every event again before writing it ([`Scrubber`]).

use crate::llm::{Exchange, Usage};
use serde::Serialize;

/// What one step did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepEvent {
    /// The step's number in the run, from 1: one per instruction visit. A SPAWN sibling
    /// carries its SPAWN's number, a CALLed program's step its CALL's (each is a sub-step of
    /// it, as [`label`](Self::label) shows).
    pub step: u64,
    /// For a step of a CALLed program: its own step number under the CALL at `step` — after
    /// the numbers of the CALLs further in, for a program CALLed by a CALLed program —
    /// (sub-step `step.sub…`; empty for the run's own steps).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sub: Vec<u64>,
    /// The instruction's id.
    pub instruction: String,
    /// Its opcode, as spelled.
    pub opcode: String,
    /// The unit that executed it: `code` or `model`.
    pub unit: &'static str,
    /// For a SPAWN sibling: its index, from 0 (sub-step `step.(sibling + 1)`, after `sub` for a
    /// SPAWN of a CALLed program).
    pub sibling: Option<usize>,
    /// The bound operands: (parameter or carry name, value).
    pub operands: Vec<(String, serde_json::Value)>,
    /// The values written back: (carry, value).
    pub written: Vec<(String, serde_json::Value)>,
    /// The tool that ran, if one did.
    pub tool: Option<String>,
    /// For a slot: its exchanges, parsed value, repairs and usage.
    pub slot: Option<SlotTrace>,
    /// The error value or fault message of this step, if it failed.
    pub error: Option<String>,
    /// When the step started, in milliseconds since the Unix epoch.
    pub started_ms: u64,
    /// How long it took, in microseconds.
    pub elapsed_us: u64,
}

impl StepEvent {
    /// The step's number as every surface shows it ([`step_label`]): `3`, `3.2` for the
    /// second sibling of the SPAWN at step 3 or the second step of the program the CALL at
    /// step 3 runs.
    pub fn label(&self) -> String {
        step_label(self.step, &self.sub, self.sibling)
    }

    /// Whether this is a step of the run's own (no SPAWN sibling, no step of a CALLed program).
    pub fn is_own(&self) -> bool {
        self.sub.is_empty() && self.sibling.is_none()
    }
}

/// The one spelling of a step's number — in the trace, the report, `ais runs show` and MCP
/// progress: `step` for a step; a sub-step after it for each level below: the step of a
/// CALLed program (`sub`, its numbers under the CALL at `step`), then `sibling + 1` for a SPAWN
/// sibling (index from 0).
///
/// ```
/// use ais_rt::trace::step_label;
/// assert_eq!(step_label(3, &[], None), "3");
/// assert_eq!(step_label(3, &[], Some(0)), "3.1");
/// // Step 2 of the program the CALL at step 3 runs, and its SPAWN's first sibling.
/// assert_eq!(step_label(3, &[2], None), "3.2");
/// assert_eq!(step_label(3, &[2], Some(0)), "3.2.1");
/// ```
pub fn step_label(step: u64, sub: &[u64], sibling: Option<usize>) -> String {
    let mut label = step.to_string();
    for s in sub {
        label += &format!(".{s}");
    }
    if let Some(i) = sibling {
        label += &format!(".{}", i + 1);
    }
    label
}

/// What a slot exchanged with its model.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SlotTrace {
    /// The model's name (`scripted:…` for a scripted model).
    pub model: String,
    /// True when the model is scripted.
    pub scripted: bool,
    /// Every exchange of the slot (tool rounds and repair rounds included), in order.
    pub exchanges: Vec<Exchange>,
    /// The value that landed, after validation.
    pub parsed: Option<serde_json::Value>,
    /// Repair rounds used.
    pub repairs: u32,
    /// Tool rounds used.
    pub tool_rounds: u32,
    /// Token usage summed over the exchanges.
    pub usage: Usage,
    /// The tier the slot named (the chain's name); empty for a lone model.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub tier: String,
    /// Each move to the next model of the tier's fallback chain.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failovers: Vec<crate::llm::slot::Failover>,
    /// The slot's cost in US dollars, when every model asked has a price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

impl SlotTrace {
    /// What a filled slot's trace says: the model that answered, its exchanges, the parsed
    /// value, the rounds, the usage, the tier, the failovers and the cost.
    pub fn of(out: &crate::llm::slot::SlotOutcome) -> Self {
        SlotTrace {
            model: out.model.clone(),
            scripted: out.scripted,
            exchanges: out.exchanges.clone(),
            parsed: out.value.as_ref().ok().cloned(),
            repairs: out.repairs,
            tool_rounds: out.tool_rounds,
            usage: out.usage,
            tier: out.tier.clone(),
            failovers: out.failovers.clone(),
            cost: out.cost,
        }
    }
}

/// Where step events go.
pub trait TraceSink: Send + Sync {
    /// Takes one event.
    fn event(&self, event: &StepEvent);
}

/// A sink that drops every event (tracing off).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTrace;

impl TraceSink for NoTrace {
    fn event(&self, _event: &StepEvent) {}
}

/// Removes secrets from a trace event before any sink writes it — defensively, on top of the
/// providers never putting them in an [`Exchange`]:
///
/// - the value of any object key that names a credential (`authorization`,
///   `proxy-authorization`, `x-api-key`, `api_key`, `apikey`, `x-goog-api-key`, `cookie`,
///   `set-cookie`, `access_token`, `refresh_token`, `client_secret`, `password`, `secret`;
///   case, `-` and `_` ignored) becomes `"[redacted]"`;
/// - in every string, the credential after `Authorization:` (with or without a `Bearer`,
///   `Basic` or `Token` scheme), a token of 16 or more characters after `Bearer `, and anything
///   shaped like an API key (`sk-…`, `sk-ant-…`, `sk-proj-…` of 16 or more characters) become
///   `[redacted]`;
/// - in every string, the value of each environment variable whose name looks secret
///   (`is_secret_name`: `*SECRET*`, `*PASSWORD*`, `*TOKEN*`, `*CREDENTIAL*`, `*_KEY`, …; a
///   value of 8 characters or more), as read when the scrubber was made, becomes `[redacted]`.
#[derive(Clone, Debug, Default)]
pub struct Scrubber {
    secrets: Vec<String>,
}

/// A credential after `Authorization:` (or `authorization=`), a long token after `Bearer `,
/// and API-key-shaped tokens. The part named `keep` stays.
static PATTERNS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(concat!(
        r#"(?P<keep>(?i:authorization)["']?\s*[:=]\s*["']?(?i:(?:bearer|basic|token)\s+)?)[^\s"',;]{6,}"#,
        r"|(?P<keep2>\bBearer\s+)[A-Za-z0-9._~+/=-]{16,}",
        r"|\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}",
    ))
    .unwrap_or_else(|e| unreachable!("the secret patterns are a valid constant: {e}"))
});

/// What a scrubbed secret is replaced with.
pub(crate) const REDACTED: &str = "[redacted]";

impl Scrubber {
    /// A scrubber for the secrets in this process's environment.
    pub fn from_env() -> Self {
        Self::from_vars(std::env::vars_os())
    }

    /// A scrubber for the secrets among `vars` (name, value), picked as [`Scrubber::from_env`]
    /// picks them.
    pub fn from_vars(
        vars: impl IntoIterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
    ) -> Self {
        let secrets = vars
            .into_iter()
            .filter_map(|(name, value)| {
                let secret = is_secret_name(name.to_str()?);
                let value = value.into_string().ok()?;
                (secret && value.trim().len() >= 8).then(|| value.trim().to_owned())
            })
            .collect();
        Self::with_secrets(secrets)
    }

    /// A scrubber for `secrets` (each replaced wherever it appears), besides the fixed rules.
    pub fn with_secrets(mut secrets: Vec<String>) -> Self {
        secrets.retain(|s| !s.is_empty());
        // Longest first, so that a secret containing another is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Scrubber { secrets }
    }

    /// Scrubs `value` in place.
    pub fn scrub(&self, value: &mut serde_json::Value) {
        use serde_json::Value;
        // Iterative, so a deeply nested value cannot overflow the stack.
        let mut stack = vec![value];
        while let Some(v) = stack.pop() {
            match v {
                Value::String(s) => {
                    if let Some(clean) = self.scrub_str(s) {
                        *s = clean;
                    }
                }
                Value::Array(items) => stack.extend(items.iter_mut()),
                Value::Object(map) => {
                    for (key, v) in map.iter_mut() {
                        if is_credential_key(key) && !v.is_null() {
                            *v = Value::String(REDACTED.to_owned());
                        } else {
                            stack.push(v);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// `text` with its secrets replaced, or `None` when it has none.
    pub fn scrub_str(&self, text: &str) -> Option<String> {
        let mut out = std::borrow::Cow::Borrowed(text);
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = std::borrow::Cow::Owned(out.replace(secret.as_str(), REDACTED));
            }
        }
        if PATTERNS.is_match(&out) {
            let replaced = PATTERNS
                .replace_all(&out, |c: &regex::Captures<'_>| {
                    let keep = c.name("keep").or_else(|| c.name("keep2"));
                    format!("{}{REDACTED}", keep.map_or("", |k| k.as_str()))
                })
                .into_owned();
            out = std::borrow::Cow::Owned(replaced);
        }
        match out {
            std::borrow::Cow::Borrowed(_) => None,
            std::borrow::Cow::Owned(s) => Some(s),
        }
    }

    /// `event` as JSON, scrubbed.
    pub fn event_json(&self, event: &StepEvent) -> serde_json::Value {
        let mut json = serde_json::to_value(event).unwrap_or_else(|e| {
            serde_json::json!({"step": event.step, "instruction": event.instruction, "error": format!("the event could not be serialized: {e}")})
        });
        self.scrub(&mut json);
        bound_values(&mut json, MAX_TRACE_VALUE_BYTES);
        json
    }
}

/// Whether an environment variable's name looks like it holds a secret: it contains `SECRET`,
/// `PASSWORD`, `PASSWD`, `PASSPHRASE`, `TOKEN`, `CREDENTIAL`, `APIKEY`, `API_KEY` or
/// `PRIVATE_KEY`, or ends in `_KEY`, `_PAT` or `_AUTH` (case ignored): `AWS_SECRET_ACCESS_KEY`,
/// `GITHUB_TOKEN`, `PGPASSWORD`, `STRIPE_KEY`, `GOOGLE_APPLICATION_CREDENTIALS`.
pub(crate) fn is_secret_name(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    const INSIDE: &[&str] = &[
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "TOKEN",
        "CREDENTIAL",
        "APIKEY",
        "API_KEY",
        "PRIVATE_KEY",
    ];
    INSIDE.iter().any(|s| name.contains(s))
        || ["_KEY", "_PAT", "_AUTH"].iter().any(|s| name.ends_with(s))
}

/// The most bytes of one string a trace event keeps (64 KiB); a longer one is cut at a
/// character boundary and ends with a note of its full size.
pub(crate) const MAX_TRACE_VALUE_BYTES: usize = 64 * 1024;

/// Cuts every string in `value` longer than `max` bytes to its first `max` bytes (at a
/// character boundary) followed by `… [N bytes in all]`, so one huge operand, answer or
/// output cannot make the trace huge.
pub(crate) fn bound_values(value: &mut serde_json::Value, max: usize) {
    use serde_json::Value;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) if s.len() > max => {
                let mut cut = max;
                while !s.is_char_boundary(cut) {
                    cut -= 1;
                }
                let total = s.len();
                s.truncate(cut);
                s.push_str(&format!("… [truncated: {total} bytes in all]"));
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            _ => {}
        }
    }
}

/// Whether an object key names a credential (see [`Scrubber`]).
fn is_credential_key(key: &str) -> bool {
    let norm: String = key
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect();
    matches!(
        norm.as_str(),
        "authorization"
            | "proxyauthorization"
            | "xapikey"
            | "apikey"
            | "xgoogapikey"
            | "cookie"
            | "setcookie"
            | "accesstoken"
            | "refreshtoken"
            | "clientsecret"
            | "password"
            | "secret"
    )
}

/// Writes each event as one line of JSON to a file (`ais run --trace FILE`), scrubbed, and
/// flushed to the operating system at once, so that a run that crashes keeps every step that
/// ran. A write that fails is remembered ([`JsonLinesSink::error`]); the events after it are
/// dropped, never half-written.
#[derive(Debug)]
pub struct JsonLinesSink {
    path: std::path::PathBuf,
    state: std::sync::Mutex<(std::fs::File, Option<String>)>,
    scrubber: Scrubber,
}

impl JsonLinesSink {
    /// Creates (or truncates) the file at `path`; secrets are scrubbed by
    /// [`Scrubber::from_env`].
    pub fn create(path: &std::path::Path) -> std::io::Result<Self> {
        Self::with_scrubber(path, Scrubber::from_env())
    }

    /// Creates (or truncates) the file at `path`, scrubbing with `scrubber`. A symbolic link
    /// at `path` is refused, never followed (a trace never overwrites the file a link points
    /// to), and so is anything but a regular file (a FIFO, a device, a directory).
    pub fn with_scrubber(path: &std::path::Path, scrubber: Scrubber) -> std::io::Result<Self> {
        use std::os::unix::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .custom_flags(flags.bits() as i32)
            .open(path)
            .map_err(|e| {
                let link =
                    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
                if link {
                    std::io::Error::other("it is a symbolic link, which a trace never follows")
                } else {
                    e
                }
            })?;
        if !file.metadata()?.is_file() {
            return Err(std::io::Error::other("it is not a regular file"));
        }
        file.set_len(0)?;
        Ok(JsonLinesSink {
            path: path.to_owned(),
            state: std::sync::Mutex::new((file, None)),
            scrubber,
        })
    }

    /// The first write that failed, naming the file, if one did.
    pub fn error(&self) -> Option<String> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.1.clone()
    }
}

impl TraceSink for JsonLinesSink {
    fn event(&self, event: &StepEvent) {
        use std::io::Write;
        let mut line = self.scrubber.event_json(event).to_string();
        line.push('\n');
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.1.is_some() {
            return;
        }
        // One write call per line: the whole line reaches the OS, or the error is kept.
        if let Err(e) = state
            .0
            .write_all(line.as_bytes())
            .and_then(|()| state.0.flush())
        {
            state.1 = Some(format!(
                "cannot write the trace `{}` (step {}): {e}",
                self.path.display(),
                event.step
            ));
        }
    }
}

/// Emits each event through `tracing` (target `ais::trace`, level INFO): the step, the
/// instruction, the opcode, the unit and the time as fields, and the whole scrubbed event as
/// JSON in the field `event`.
#[derive(Clone, Debug)]
pub struct TracingSink {
    scrubber: Scrubber,
}

impl TracingSink {
    /// A sink scrubbing with [`Scrubber::from_env`].
    pub fn new() -> Self {
        TracingSink {
            scrubber: Scrubber::from_env(),
        }
    }

    /// A sink scrubbing with `scrubber`.
    pub fn with_scrubber(scrubber: Scrubber) -> Self {
        TracingSink { scrubber }
    }
}

impl Default for TracingSink {
    fn default() -> Self {
        Self::new()
    }
}

impl TraceSink for TracingSink {
    fn event(&self, event: &StepEvent) {
        if !tracing::enabled!(target: "ais::trace", tracing::Level::INFO) {
            return;
        }
        let json = self.scrubber.event_json(event);
        tracing::info!(
            target: "ais::trace",
            step = event.step,
            instruction = %event.instruction,
            opcode = %event.opcode,
            unit = event.unit,
            scripted = event.slot.as_ref().is_some_and(|s| s.scripted),
            elapsed_us = event.elapsed_us,
            event = %json,
        );
    }
}

/// Hands each event to several sinks, in order.
#[derive(Clone, Default)]
pub struct Tee(pub Vec<std::sync::Arc<dyn TraceSink>>);

impl TraceSink for Tee {
    fn event(&self, event: &StepEvent) {
        for sink in &self.0 {
            sink.event(event);
        }
    }
}

#[cfg(test)]
#[path = "trace_tests.rs"]
mod tests;

/// Where a run is, for a watcher that wants to say so now and then without a trace: the
/// machine stores the step number and the instruction's index (in `nodes`) of the top-level
/// run at each step — two relaxed atomic stores, no event built, no clock read. A CALL's
/// sub-run counts as its CALL step.
#[derive(Debug, Default)]
pub struct Pulse {
    steps: std::sync::atomic::AtomicU64,
    at: std::sync::atomic::AtomicUsize,
}

impl Pulse {
    /// The steps started so far and the index of the instruction the last one visited.
    pub fn read(&self) -> (u64, usize) {
        use std::sync::atomic::Ordering::Relaxed;
        (self.steps.load(Relaxed), self.at.load(Relaxed))
    }

    /// Step `steps` visits the instruction at index `at`.
    #[inline]
    pub(crate) fn beat(&self, steps: u64, at: usize) {
        use std::sync::atomic::Ordering::Relaxed;
        self.at.store(at, Relaxed);
        self.steps.store(steps, Relaxed);
    }
}
