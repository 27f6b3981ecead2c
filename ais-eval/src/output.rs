//! A suite's result for people (a table and every failed assertion with the value seen), as
//! JSON (the [`SuiteResult`] itself), and as JUnit XML for CI systems.

use crate::runner::{CaseResult, SuiteResult, TrialResult};
use std::fmt::Write as _;

fn pct(x: f64) -> String {
    let p = x * 100.0;
    if (p - p.round()).abs() < 0.05 {
        format!("{:.0}%", p)
    } else {
        format!("{p:.1}%")
    }
}

/// The result as text: one table row per case, then every failed trial's failed assertions
/// (case, trial, assertion, its line, the value seen), then the verdict.
pub fn human(r: &SuiteResult) -> String {
    let mut out = String::new();
    let width = r
        .cases
        .iter()
        .map(|c| c.name.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 48);
    let _ = writeln!(
        out,
        "{:<width$}  {:>6}  {:>6}  {:>6}  {:<17}  {:>9}  result",
        "case", "trials", "passed", "rate", "95% interval", "threshold"
    );
    for c in &r.cases {
        let name: String = c.name.chars().take(width).collect();
        let _ = writeln!(
            out,
            "{name:<width$}  {:>6}  {:>6}  {:>6}  {:<17}  {:>9}  {}",
            c.trials,
            c.passed,
            pct(c.pass_rate),
            format!("[{}, {}]", pct(c.interval[0]), pct(c.interval[1])),
            pct(c.threshold),
            if c.met { "ok" } else { "FAILED" }
        );
    }
    for c in &r.cases {
        failures(&mut out, c);
    }
    let failed = r.cases.iter().filter(|c| !c.met).count();
    let _ = writeln!(
        out,
        "\n{}: {} case{}, {} below {} threshold ({:.1} s)",
        if r.passed { "ok" } else { "FAILED" },
        r.cases.len(),
        if r.cases.len() == 1 { "" } else { "s" },
        failed,
        if failed == 1 { "its" } else { "their" },
        r.wall_ms as f64 / 1000.0
    );
    if let Some(j) = &r.journal {
        let _ = writeln!(
            out,
            "runs journaled in {} (`ais runs --journal {}`)",
            j.display(),
            j.display()
        );
    }
    out
}

fn failures(out: &mut String, c: &CaseResult) {
    // Failing trials with the same failures are shown once, with their count.
    let mut shown: Vec<(String, Vec<u32>)> = Vec::new();
    for t in c.results.iter().filter(|t| !t.passed) {
        let text = trial_failures(t);
        match shown.iter_mut().find(|(s, _)| *s == text) {
            Some((_, trials)) => trials.push(t.trial),
            None => shown.push((text, vec![t.trial])),
        }
    }
    for (text, trials) in shown {
        let which = if trials.len() == 1 {
            format!("trial {}", trials[0])
        } else {
            format!(
                "trials {}",
                trials
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let _ = write!(out, "\ncase `{}`, {which}:\n{text}", c.name);
    }
}

fn trial_failures(t: &TrialResult) -> String {
    let mut out = String::new();
    if let Some(e) = &t.error {
        let _ = writeln!(out, "  cannot run: {e}");
    }
    for k in t.checks.iter().filter(|k| !k.passed) {
        let line = k.line.map(|l| format!(" (line {l})")).unwrap_or_default();
        let _ = writeln!(
            out,
            "  assertion {} `{}`{line} failed\n    seen: {}",
            k.index + 1,
            k.assertion,
            k.seen
        );
    }
    out
}

/// The results of one or more suites as one JSON object: `passed` (every case of every suite
/// met its threshold) and `suites` (each a [`SuiteResult`]'s fields).
pub fn json(results: &[SuiteResult]) -> serde_json::Value {
    serde_json::json!({
        "passed": results.iter().all(|r| r.passed),
        "suites": results,
    })
}

/// Text escaped for XML content and attributes; characters XML 1.0 cannot hold are dropped.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

/// The results as JUnit XML: each suite a `testsuite`, each case a `testcase` (failed when it
/// missed its threshold, the failed assertions in the failure's text).
pub fn junit(results: &[SuiteResult]) -> String {
    let tests: usize = results.iter().map(|r| r.cases.len()).sum();
    let failures: usize = results
        .iter()
        .map(|r| r.cases.iter().filter(|c| !c.met).count())
        .sum();
    let wall: u64 = results.iter().map(|r| r.wall_ms).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"ais test\" tests=\"{tests}\" failures=\"{failures}\" time=\"{:.3}\">",
        wall as f64 / 1000.0
    );
    for r in results {
        junit_suite(&mut out, r);
    }
    out.push_str("</testsuites>\n");
    out
}

fn junit_suite(out: &mut String, r: &SuiteResult) {
    let name = r.suite.display().to_string();
    let failed = r.cases.iter().filter(|c| !c.met).count();
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failed}\" time=\"{:.3}\">",
        xml(&name),
        r.cases.len(),
        r.wall_ms as f64 / 1000.0
    );
    for c in &r.cases {
        let time: u64 = c.results.iter().map(|t| t.wall_ms).sum();
        let _ = write!(
            out,
            "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
            xml(&name),
            xml(&c.name),
            time as f64 / 1000.0
        );
        let summary = format!(
            "pass rate {} ({} of {}), 95% interval [{}, {}], threshold {}",
            pct(c.pass_rate),
            c.passed,
            c.trials,
            pct(c.interval[0]),
            pct(c.interval[1]),
            pct(c.threshold)
        );
        if c.met {
            let _ = writeln!(
                out,
                ">\n      <system-out>{}</system-out>\n    </testcase>",
                xml(&summary)
            );
        } else {
            let mut text = String::new();
            failures(&mut text, c);
            let _ = writeln!(
                out,
                ">\n      <failure message=\"{}\" type=\"threshold\">{}</failure>\n    </testcase>",
                xml(&summary),
                xml(text.trim_start())
            );
        }
    }
    out.push_str("  </testsuite>\n");
}
