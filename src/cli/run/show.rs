//! How a run shows itself: the human report, the JSON report, and progress on a terminal.

use super::Setup;
use crate::cli::{Output, shown};
use ais::render;
use ais::rt::trace::{Scrubber, StepEvent, TraceSink};
use ais::rt::{RunOutcome, Status};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{self, IsTerminal, Write};

/// ` --journal PATH` when the run's journal is not the one `ais resume` finds by default
/// (`./.ais/runs.db`).
pub(super) fn journal_flag(j: &super::journal::Journaled) -> String {
    let default = std::fs::canonicalize(".ais/runs.db").ok();
    let this = std::fs::canonicalize(j.store.path()).ok();
    if default.is_some() && default == this {
        String::new()
    } else {
        format!(" --journal {}", shown(j.store.path()))
    }
}

/// Redacts every secret in what a run shows (the human report, the JSON report, a pause's
/// prompt): the report's values, the fault's message, the deviations and the prompt go
/// through the trace's [`Scrubber`] (secret-looking environment values, credentials,
/// API-key-shaped tokens), so a tool that printed `$AWS_SECRET_ACCESS_KEY` shows
/// `[redacted]`.
pub(super) fn redact(outcome: &mut RunOutcome, scrubber: &Scrubber) {
    let clean = |text: &mut String| {
        if let Some(c) = scrubber.scrub_str(text) {
            *text = c;
        }
    };
    for value in outcome.report.values_mut() {
        scrubber.scrub(value);
    }
    if let Some(f) = &mut outcome.fault {
        clean(&mut f.message);
    }
    if let Some(p) = &mut outcome.pause {
        clean(&mut p.prompt);
    }
    for d in &mut outcome.deviations {
        clean(&mut d.intended);
        clean(&mut d.substituted);
    }
}

pub(super) fn scripted_note(setup: &Setup) -> String {
    format!(
        "note: scripted run: the model's answers are canned responses from `{}`, not a live model",
        setup
            .model_spec
            .as_deref()
            .and_then(|s| s.strip_prefix("scripted:"))
            .unwrap_or("?")
    )
}

/// What a run spent, as the summary line says it: `, 120 prompt + 30 completion tokens,
/// $0.0012 (1 slot unpriced), 1 failover` — each part only when there is something to say.
pub(crate) fn spent(usage: &ais::rt::RunUsage) -> String {
    let mut s = String::new();
    if usage.prompt_tokens + usage.completion_tokens > 0 {
        s += &format!(
            ", {} prompt + {} completion tokens",
            usage.prompt_tokens, usage.completion_tokens
        );
    }
    if let Some(cost) = usage.cost {
        s += &format!(", ${cost:.4}");
        match usage.unpriced_slots {
            0 => {}
            1 => s += " (1 slot unpriced)",
            n => s += &format!(" ({n} slots unpriced)"),
        }
    }
    match usage.failovers {
        0 => {}
        1 => s += ", 1 failover",
        n => s += &format!(", {n} failovers"),
    }
    s
}

/// A run's status as its human report's first line words it (the embedded and the Restate
/// engine alike).
pub(super) fn status_words(status: Status) -> &'static str {
    match status {
        Status::Ok => "ok",
        Status::Error => "error (a step failed and no ROUTE tested it)",
        Status::Fault => "fault",
        Status::InputRequired => "input required",
        Status::Interrupted => "interrupted (an effect may have run once)",
    }
}

pub(super) fn print_human(
    setup: &Setup,
    outcome: &RunOutcome,
    output: &mut Output,
) -> io::Result<()> {
    // Model output is hostile: the report is built, then printed with its control characters
    // made visible, so an answer cannot drive the terminal.
    let mut text: Vec<u8> = Vec::new();
    let out = &mut text;
    if outcome.scripted {
        writeln!(out, "{}", scripted_note(setup))?;
    }
    let slots = match outcome.usage.slots {
        0 => String::new(),
        1 => ", 1 slot filled".to_owned(),
        n => format!(", {n} slots filled"),
    };
    let tokens = spent(&outcome.usage);
    let status = status_words(outcome.status);
    writeln!(
        out,
        "{}: {status} after {} step{}{slots}{tokens}",
        shown(&setup.file),
        outcome.steps,
        if outcome.steps == 1 { "" } else { "s" }
    )?;
    if let Some(fault) = &outcome.fault {
        let at = match (fault.instruction.as_str(), fault.line) {
            ("", _) => String::new(),
            (id, Some(line)) => format!(" at `{id}` ({}:{line})", shown(&setup.file)),
            (id, None) => format!(" at `{id}`"),
        };
        writeln!(out, "fault[{}]{at}: {}", fault.kind, fault.message)?;
    }
    if let Some(pause) = &outcome.pause {
        let at = pause.line.map(|l| format!("{}:{l}", shown(&setup.file)));
        if let Some(why) = &pause.refused {
            writeln!(out, "answer refused: {why}")?;
        }
        writeln!(out, "{}", pause.question(at.as_deref()))?;
        if let Some(handle) = &pause.handle {
            writeln!(
                out,
                "resume with: ais resume {} --answer TEXT",
                shown(handle)
            )?;
        } else if let Some(j) = &setup.journaled {
            writeln!(
                out,
                "resume with: ais resume {} --answer TEXT{}",
                j.id,
                journal_flag(j)
            )?;
        }
    }
    if outcome.status == Status::Interrupted
        && let Some(j) = &setup.journaled
    {
        writeln!(
            out,
            "continue with: ais resume {id} --retry{flag}   (run it again), or ais resume {id} --mark-done{flag}   (go on)",
            id = j.id,
            flag = journal_flag(j)
        )?;
    }
    if !outcome.report.is_empty() {
        writeln!(out, "report:")?;
        for (name, value) in &outcome.report {
            writeln!(out, "  {name}: {}", shown_value(value))?;
        }
    }
    if !outcome.unproduced.is_empty() {
        let names: Vec<String> = outcome
            .unproduced
            .iter()
            .map(|n| format!("`{n}`"))
            .collect();
        writeln!(
            out,
            "not produced: {} (no step on the path this run took wrote {}, so the report leaves {} out)",
            names.join(", "),
            if names.len() == 1 { "it" } else { "them" },
            if names.len() == 1 { "it" } else { "them" },
        )?;
    }
    if !outcome.deviations.is_empty() {
        writeln!(out, "deviations:")?;
        for d in &outcome.deviations {
            writeln!(out, "  - {}", render::deviation_line(d))?;
        }
    }
    let text = String::from_utf8_lossy(&text);
    output
        .out
        .write_all(crate::cli::escape_block(&text).as_bytes())
}

/// The most characters of a value the human report shows.
pub(super) const SHOWN_CHARS: usize = 100;

/// A report value for the human report, on one line: a text as it is, a multi-line text as
/// its first non-blank line and its line count, anything else as JSON; clipped to
/// [`SHOWN_CHARS`]. `--format json` has every value whole.
pub(super) fn shown_value(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) if s.is_empty() => "\"\"".to_owned(),
        serde_json::Value::String(s) if !s.trim().contains('\n') => clip(s.trim()),
        serde_json::Value::String(s) => {
            let first = s.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            format!(
                "{} … ({} lines)",
                clip(first.trim()),
                s.trim().lines().count()
            )
        }
        other => clip(&other.to_string()),
    }
}

pub(super) fn clip(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// The progress display: on a terminal, one line per step (number, instruction, opcode,
/// unit, time) above a spinner, and under it, dimmed, the end of the answer streaming in for
/// the running slot; elsewhere nothing.
pub(super) struct Progress {
    bar: ProgressBar,
    /// The spinner's message (the last step) and the streamed text shown under it.
    shown: std::sync::Mutex<(String, String)>,
}

/// How much of a streaming answer is shown under the spinner: its last characters.
const STREAMED_CHARS: usize = 100;

impl Progress {
    pub(super) fn new() -> Self {
        let bar = match terminal() {
            Some(target) => {
                let bar = ProgressBar::with_draw_target(None, target);
                if let Ok(style) = ProgressStyle::with_template("{spinner} {elapsed} {msg}") {
                    bar.set_style(style);
                }
                bar.enable_steady_tick(std::time::Duration::from_millis(120));
                bar
            }
            None => ProgressBar::hidden(),
        };
        Progress {
            bar,
            shown: std::sync::Mutex::default(),
        }
    }

    fn shown(&self) -> std::sync::MutexGuard<'_, (String, String)> {
        self.shown.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The spinner's message: the step, and under it the streamed text, dimmed.
    fn redraw(&self, (step, streamed): &(String, String)) {
        if streamed.is_empty() {
            self.bar.set_message(step.clone());
        } else {
            let tail = console::style(streamed).dim();
            self.bar.set_message(format!("{step}\n  {tail}"));
        }
    }

    pub(super) fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }

    pub(super) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl TraceSink for Progress {
    fn event(&self, e: &StepEvent) {
        if self.bar.is_hidden() {
            return;
        }
        let scripted = if e.slot.as_ref().is_some_and(|s| s.scripted) {
            " (scripted)"
        } else {
            ""
        };
        let failed = if e.error.is_some() { "  failed" } else { "" };
        let line = format!(
            "{:>5}  {:<28} {:<9} {:<5} {:>9}{scripted}{failed}",
            e.label(),
            e.instruction,
            e.opcode,
            e.unit,
            human_time(e.elapsed_us),
        );
        self.bar.println(line);
        let mut shown = self.shown();
        *shown = (
            format!("step {} {}", e.label(), e.instruction),
            String::new(),
        );
        self.redraw(&shown);
    }
}

/// The answers streaming in, shown under the spinner (the runtime streams only to a watcher:
/// only a terminal's progress display is one). Model output is hostile: control characters
/// become spaces, so an answer cannot drive the terminal.
impl ais::rt::llm::Live for Progress {
    fn text(&self, instruction: &str, sibling: Option<usize>, text: &str) {
        if self.bar.is_hidden() {
            return;
        }
        let mut shown = self.shown();
        let who = match sibling {
            Some(i) => format!("{instruction} (sibling {})", i + 1),
            None => instruction.to_owned(),
        };
        let head = format!("{who}: ");
        if !shown.1.starts_with(&head) {
            shown.1 = head.clone();
        }
        shown
            .1
            .extend(text.chars().map(|c| if c.is_control() { ' ' } else { c }));
        let body = &shown.1[head.len()..];
        if let Some((cut, _)) = body.char_indices().rev().nth(STREAMED_CHARS) {
            shown.1 = format!("{head}…{}", &body[cut..]);
        }
        self.redraw(&shown);
    }
}

/// Standard error as a draw target when it is a terminal. The bar draws through its own
/// handle on the same file descriptor: the command holds the lock on `std::io::stderr` for
/// its whole run, and the bar's ticker thread must not wait on it.
#[cfg(unix)]
pub(super) fn terminal() -> Option<ProgressDrawTarget> {
    use std::os::fd::AsFd;
    if !io::stderr().is_terminal() {
        return None;
    }
    let write = std::fs::File::from(io::stderr().as_fd().try_clone_to_owned().ok()?);
    let read = std::fs::File::from(io::stdin().as_fd().try_clone_to_owned().ok()?);
    Some(ProgressDrawTarget::term(
        console::Term::read_write_pair(read, write),
        20,
    ))
}

/// No progress display where standard error cannot be drawn to without its lock.
#[cfg(not(unix))]
pub(super) fn terminal() -> Option<ProgressDrawTarget> {
    None
}

pub(super) fn human_time(us: u64) -> String {
    if us < 1_000 {
        format!("{us} µs")
    } else if us < 1_000_000 {
        format!("{:.1} ms", us as f64 / 1e3)
    } else {
        format!("{:.2} s", us as f64 / 1e6)
    }
}

/// How often a run that shows no progress bar says where it is.
pub(super) const HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(5);

/// With `--format human` where standard error is no terminal (a log, a CI job), a line every
/// [`HEARTBEAT`] saying how far a long run got, so it is never silent for minutes. It reads
/// the runtime's [`Pulse`](ais::rt::trace::Pulse) — the machine builds no event for it — and
/// writes through its own handle on standard error (the command holds the lock).
pub(super) struct Heartbeat {
    stop: std::sync::Mutex<Option<std::sync::mpsc::Sender<()>>>,
    thread: std::sync::Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Heartbeat {
    /// Starts the watcher over `pulse`; `ids` are the program's instruction ids, by index.
    pub(super) fn start(
        pulse: std::sync::Arc<ais::rt::trace::Pulse>,
        ids: Vec<String>,
        file: String,
    ) -> Heartbeat {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let thread = own_stderr().map(|mut err| {
            std::thread::spawn(move || {
                let started = std::time::Instant::now();
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    rx.recv_timeout(HEARTBEAT)
                {
                    let (steps, at) = pulse.read();
                    let id = ids.get(at).map_or("?", String::as_str);
                    let line = format!(
                        "{file}: still running after {}: step {steps}, at `{id}`\n",
                        human_time(started.elapsed().as_micros() as u64)
                    );
                    if err.write_all(line.as_bytes()).is_err() {
                        return;
                    }
                }
            })
        });
        Heartbeat {
            stop: std::sync::Mutex::new(Some(tx)),
            thread: std::sync::Mutex::new(thread),
        }
    }

    /// Stops the watcher (once the run has ended): no line after the report.
    pub(super) fn finish(&self) {
        if let Ok(mut stop) = self.stop.lock() {
            stop.take();
        }
        if let Some(t) = self.thread.lock().ok().and_then(|mut t| t.take()) {
            let _ = t.join();
        }
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Standard error through a handle of its own.
#[cfg(unix)]
fn own_stderr() -> Option<std::fs::File> {
    use std::os::fd::AsFd;
    Some(std::fs::File::from(
        io::stderr().as_fd().try_clone_to_owned().ok()?,
    ))
}

#[cfg(not(unix))]
fn own_stderr() -> Option<std::fs::File> {
    None
}

impl Progress {
    /// Whether a progress bar is drawn (standard error is a terminal): only then does the
    /// display need the machine's step events.
    pub(super) fn visible(&self) -> bool {
        !self.bar.is_hidden()
    }
}
