//! Rendering findings: rustc-style text for people, JSON for tools.
//!
//! Every driver that shows a finding uses these functions — the `ais` CLI, `build.rs` export —
//! so a finding reads the same wherever it surfaces. They are pure: they take the finding and
//! the source text it points into and return a `String`; whether it goes to a terminal, a file
//! or a compiler diagnostic is the caller's choice.
//!
//! Text is laid out by [annotate-snippets](https://docs.rs/annotate-snippets), rustc's own
//! renderer:
//!
//! ```text
//! error[W8]: `plan_mdd` in `verify.reads` is not a carry, a knowledge key, or a field of a read carry
//!   --> plan.agir:77:13
//!    |
//! 77 |     reads: [plan_mdd]
//!    |             ^^^^^^^^
//!    |
//!    = help: did you mean `plan_md`?
//! ```
//!
//! The JSON encoding ([`finding_json`], [`report_json`]) is a stable interface: tools build on
//! it. Its keys and their order do not change within a major version.
//!
//! ```
//! use ais_core::{CheckId, Finding, Severity};
//! use ais_core::render::{finding_json, render_finding};
//! use ais_core::{Element, FieldKey, Locus, Pos};
//!
//! let source = "nodes:\n  - id: verify\n    reads: [plan_mdd]\n";
//! let mut finding = Finding::new(
//!     CheckId::W8,
//!     Severity::Error,
//!     Locus::entry(Element::Instruction(0), FieldKey::Reads, 0),
//!     "`plan_mdd` is not a carry",
//! )
//! .with_suggestions(vec!["plan_md".into()]);
//! finding.pos = Some(Pos::new(3, 13));
//!
//! let text = render_finding(&finding, source, "plan.agir", false);
//! assert!(text.starts_with("error[W8]: `plan_mdd` is not a carry"));
//! assert!(text.contains("--> plan.agir:3:13"));
//! assert!(text.contains("^^^^^^^^"));
//! assert!(text.contains("= help: did you mean `plan_md`?"));
//!
//! let json = finding_json(&finding);
//! assert_eq!(json["id"], "W8");
//! assert_eq!(json["line"], 3);
//! ```

#[cfg(feature = "agir")]
use crate::agir::{ReadError, Relaxation};
use crate::diag::{Code, Deviation, Finding, Outcome, Repair, Severity};
use crate::expr::ExprError;
use crate::source::Pos;
use annotate_snippets::{
    AnnotationKind, Group, Level, Origin, Renderer, Snippet, normalize_untrusted_str,
};
use serde_json::{Value as Json, json};

/// The file name shown for an expression given on its own (`ais eval`).
pub const EXPRESSION_ORIGIN: &str = "<expression>";

/// A source text indexed by line, so that rendering many findings over one large file costs
/// one pass over the text rather than one per finding.
#[derive(Clone, Debug)]
pub struct SourceLines<'a> {
    text: &'a str,
    /// Byte offset of the start of each line.
    starts: Vec<usize>,
    /// The lines longer than [`crate::long_line::LONG_LINE`] bytes (by 0-based index), where
    /// finding a column by counting characters would cost a pass over the line per finding.
    long: std::collections::HashMap<usize, LongLine>,
}

/// What finds a column on a long line without counting from its start.
#[derive(Clone, Debug)]
struct LongLine {
    /// Every character is one byte: a column is a byte offset.
    ascii: bool,
    /// Otherwise the byte offset of every [`MARK_EVERY`]th character, made on first use.
    marks: std::sync::OnceLock<Vec<usize>>,
}

const MARK_EVERY: usize = 64;

impl<'a> SourceLines<'a> {
    /// Indexes a text by line.
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        let mut lines = SourceLines {
            text,
            starts,
            long: std::collections::HashMap::new(),
        };
        for index in 0..lines.starts.len() {
            let line = u32::try_from(index + 1).ok().and_then(|n| lines.line(n));
            if let Some(line) = line.filter(|l| l.len() > crate::long_line::LONG_LINE) {
                let ascii = line.is_ascii();
                lines.long.insert(
                    index,
                    LongLine {
                        ascii,
                        marks: std::sync::OnceLock::new(),
                    },
                );
            }
        }
        lines
    }

    /// The text of a 1-based line, without its line break; `None` past the end.
    pub fn line(&self, line: u32) -> Option<&'a str> {
        let index = usize::try_from(line).ok()?.checked_sub(1)?;
        let start = *self.starts.get(index)?;
        let end = self
            .starts
            .get(index + 1)
            .map_or(self.text.len(), |next| next - 1);
        let raw = self.text.get(start..end)?;
        Some(raw.strip_suffix('\r').unwrap_or(raw))
    }

    /// A 1-based line's text and the byte offset in it of a 1-based character column (its
    /// end, past the last character): without counting from the line's start on a long line,
    /// so that many findings on one long line cost time in proportion to their number.
    pub(crate) fn column_at(&self, line: u32, column: u32) -> Option<(&'a str, usize)> {
        let text = self.line(line)?;
        let index = usize::try_from(line).ok()?.checked_sub(1)?;
        let skip = usize::try_from(column.saturating_sub(1)).unwrap_or(usize::MAX);
        let at = match self.long.get(&index) {
            None => crate::long_line::byte_of_column(text, column),
            Some(long) if long.ascii => skip.min(text.len()),
            Some(long) => {
                let marks = long.marks.get_or_init(|| {
                    text.char_indices()
                        .step_by(MARK_EVERY)
                        .map(|(i, _)| i)
                        .collect()
                });
                match marks.get(skip / MARK_EVERY) {
                    Some(&base) => text[base..]
                        .char_indices()
                        .nth(skip % MARK_EVERY)
                        .map_or(text.len(), |(i, _)| base + i),
                    None => text.len(),
                }
            }
        };
        Some((text, at))
    }
}

/// The byte range to underline on a line for a 1-based character column: the name or word that
/// starts there, else the one character there, else an empty range at the end of the line.
fn span_at(line: &str, column: u32) -> std::ops::Range<usize> {
    let skip = usize::try_from(column.saturating_sub(1)).unwrap_or(usize::MAX);
    let Some((start, first)) = line.char_indices().nth(skip) else {
        return line.len()..line.len();
    };
    let is_word = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '·');
    if !is_word(first) {
        return start..start + first.len_utf8();
    }
    let end = line[start..]
        .char_indices()
        .find(|(_, c)| !is_word(*c))
        .map_or(line.len(), |(i, _)| start + i);
    start..end
}

fn renderer(color: bool) -> Renderer {
    if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    }
}

/// Text from a program or a user, made safe to print (control characters neutralized).
fn clean(text: &str) -> String {
    normalize_untrusted_str(text)
}

/// One line of text from a program, a user or a model, made safe to print on a terminal
/// (control characters neutralized): what a front end prints of a model's answer.
pub fn clean_line(text: &str) -> String {
    clean(text)
}

/// A snippet showing one line of the source, underlined at `pos` (as the primary place, or a
/// secondary one); or, when the line is not in the source, just the origin `file:line:col`.
fn located<'a>(
    group: Group<'a>,
    lines: &SourceLines<'a>,
    file_name: &'a str,
    pos: Option<Pos>,
    kind: AnnotationKind,
    label: Option<String>,
) -> Group<'a> {
    let Some(pos) = pos else {
        return group.element(Origin::path(file_name));
    };
    match lines.line(pos.line) {
        Some(text) if text.len() > crate::long_line::LONG_LINE => {
            // Rendering shows only a window of a long line (the renderer's cost grows with
            // the line, once per finding); `long_line::true_column` puts the true column back
            // into the ` --> file:line:col` header.
            let line_start = usize::try_from(pos.line).unwrap_or(usize::MAX);
            let at = lines
                .column_at(pos.line, pos.column)
                .map_or(text.len(), |(_, at)| at);
            let span = span_at(&text[at..], 1);
            let (window, span) = crate::long_line::window(text, at + span.start..at + span.end);
            let annotation = kind.span(span).label(label);
            group.element(
                Snippet::source(window)
                    .line_start(line_start)
                    .path(file_name)
                    .annotation(annotation),
            )
        }
        Some(text) => {
            let line_start = usize::try_from(pos.line).unwrap_or(usize::MAX);
            let span = span_at(text, pos.column);
            let annotation = kind.span(span).label(label);
            group.element(
                Snippet::source(text)
                    .line_start(line_start)
                    .path(file_name)
                    .annotation(annotation),
            )
        }
        None => group.element(
            Origin::path(file_name)
                .line(usize::try_from(pos.line).unwrap_or(usize::MAX))
                .char_column(usize::try_from(pos.column).unwrap_or(usize::MAX)),
        ),
    }
}

/// "did you mean `a`?", "did you mean `a` or `b`?", "did you mean `a`, `b` or `c`?"
fn did_you_mean_text(names: &[String]) -> Option<String> {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{}`", clean(n))).collect();
    let (last, rest) = quoted.split_last()?;
    Some(if rest.is_empty() {
        format!("did you mean {last}?")
    } else {
        format!("did you mean {} or {last}?", rest.join(", "))
    })
}

fn repair_text(repair: &Repair) -> String {
    if repair.mechanical {
        format!(
            "repair (mechanical; `ais fix` applies it): {}",
            clean(&repair.summary)
        )
    } else {
        format!("repair: {}", clean(&repair.summary))
    }
}

fn level_of(severity: Severity) -> Level<'static> {
    match severity {
        Severity::Warn => Level::WARNING,
        Severity::Error | Severity::Fatal => Level::ERROR,
    }
}

fn finding_group<'a>(finding: &Finding, lines: &SourceLines<'a>, file_name: &'a str) -> Group<'a> {
    // A read error has no program behind it: its title says so, and its repair is the next
    // step to take with the text.
    let read = finding.id == Code::Read;
    let message = clean(&finding.message);
    let title = level_of(finding.severity)
        .primary_title(if read {
            format!("cannot read AG-IR: {message}")
        } else {
            message
        })
        .id(finding.id.as_str());
    let mut group = located(
        Group::with_title(title),
        lines,
        file_name,
        finding.pos,
        AnnotationKind::Primary,
        None,
    );
    for related in &finding.related {
        if let Some(pos) = related.pos {
            let label = Some(clean(&related.label));
            group = located(
                group,
                lines,
                file_name,
                Some(pos),
                AnnotationKind::Context,
                label,
            );
        }
    }
    if finding.severity == Severity::Fatal {
        group = group.element(Level::NOTE.message(if read {
            "fatal: there is no program to check"
        } else {
            "fatal: no runnable program exists until this is resolved"
        }));
    }
    if finding.pos.is_none()
        && let Some(id) = &finding.instruction
    {
        group = group.element(Level::NOTE.message(format!("in instruction `{}`", clean(id))));
    }
    // An expression error already words its suggestion in its message.
    if let Some(text) = did_you_mean_text(&finding.did_you_mean)
        && !finding.did_you_mean.first().is_some_and(|first| {
            finding
                .message
                .contains(&format!("Did you mean `{first}`?"))
        })
    {
        group = group.element(Level::HELP.message(text));
    }
    match &finding.repair {
        Some(repair) if read => group = group.element(Level::HELP.message(clean(&repair.summary))),
        Some(repair) => group = group.element(Level::HELP.message(repair_text(repair))),
        None => {}
    }
    group
}

/// Renders one finding rustc-style: `error[W8]: message`, ` --> file:line:col`, the source line
/// with the offending name underlined, then `= help:` lines for did-you-mean and the repair.
/// A fatal finding is titled `error[..]` and carries a `= note: fatal: …` line. `color` selects
/// ANSI styling. The result ends without a trailing newline.
pub fn render_finding(finding: &Finding, source: &str, file_name: &str, color: bool) -> String {
    let lines = SourceLines::new(source);
    render_finding_in(finding, &lines, file_name, color)
}

/// Renders one finding over a source already indexed with [`SourceLines`] (use this when
/// rendering many findings over one file).
pub fn render_finding_in(
    finding: &Finding,
    lines: &SourceLines<'_>,
    file_name: &str,
    color: bool,
) -> String {
    let text = renderer(color).render(&[finding_group(finding, lines, file_name)]);
    crate::long_line::true_column(text, finding.pos, lines, file_name)
}

/// Renders every finding of a file, each followed by a blank line.
pub fn render_findings(findings: &[Finding], source: &str, file_name: &str, color: bool) -> String {
    let lines = SourceLines::new(source);
    let mut out = String::new();
    for finding in findings {
        out.push_str(&render_finding_in(finding, &lines, file_name, color));
        out.push_str("\n\n");
    }
    out
}

#[cfg(feature = "agir")]
/// Renders why a text could not be read as AG-IR — the finding of id `read` that
/// `Finding::from(&ReadError)` makes, through the one renderer: `error[read]: cannot read
/// AG-IR: message`, where, a note that there is no program, and `= help:` with the next step.
pub fn render_read_error(err: &ReadError, source: &str, file_name: &str, color: bool) -> String {
    render_finding(&Finding::from(err), source, file_name, color)
}

#[cfg(feature = "agir")]
/// Renders a relaxation of strict YAML that reading needed (spec §8.1) as a note.
pub fn render_relaxation(
    relaxation: &Relaxation,
    source: &str,
    file_name: &str,
    color: bool,
) -> String {
    let lines = SourceLines::new(source);
    let title = Level::NOTE.primary_title(format!(
        "read through a relaxation of strict YAML: {}",
        clean(&relaxation.what)
    ));
    let group = located(
        Group::with_title(title),
        &lines,
        file_name,
        Some(relaxation.pos),
        AnnotationKind::Primary,
        None,
    )
    .element(Level::HELP.message("`ais fmt -w` rewrites the file as strictly valid YAML"));
    renderer(color).render(&[group])
}

/// Renders an expression error — as the finding `Finding::from(&ExprError)` makes, through
/// the one renderer — with a caret under the expression: `error[type_error]: message`,
/// ` --> <expression>:1:5`, the expression line, the caret. `origin` names where the
/// expression came from ([`EXPRESSION_ORIGIN`] when given alone).
pub fn render_expr_error(err: &ExprError, expr: &str, origin: &str, color: bool) -> String {
    let mut finding = Finding::from(err);
    finding.pos = finding
        .pos
        .map(|p| Pos::new(p.line.max(1), p.column.max(1)));
    render_finding(&finding, expr, origin, color)
}

/// Renders an error that is not about a place in a program — a missing file, bad command-line
/// input — as `error: what` followed by `= help: next step`.
pub fn render_error(what: &str, help: Option<&str>, color: bool) -> String {
    let mut group = Group::with_title(Level::ERROR.primary_title(clean(what)));
    if let Some(help) = help {
        group = group.element(Level::HELP.message(clean(help)));
    }
    renderer(color).render(&[group])
}

/// Renders a note that is not about a place in a program: `note: text`.
pub fn render_note(text: &str, color: bool) -> String {
    renderer(color).render(&[Group::with_title(Level::NOTE.primary_title(clean(text)))])
}

/// The per-file summary line: `plan.agir: degraded (2 errors, 1 warning)`. Fatal findings are
/// counted apart: `plan.agir: failed (1 fatal, 0 errors, 0 warnings)`.
pub fn summary_line(file_name: &str, outcome: Outcome, findings: &[Finding]) -> String {
    let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    let plural = |n: usize, word: &str| {
        if n == 1 {
            format!("{n} {word}")
        } else {
            format!("{n} {word}s")
        }
    };
    let fatal = count(Severity::Fatal);
    let counts = format!(
        "{}, {}",
        plural(count(Severity::Error), "error"),
        plural(count(Severity::Warn), "warning")
    );
    if fatal > 0 {
        format!("{file_name}: {outcome} ({fatal} fatal, {counts})")
    } else {
        format!("{file_name}: {outcome} ({counts})")
    }
}

/// One deviation as a line of text. A validator's repair (it names its check) reads
/// `repaired W9 on `verify`: <intended> -> <substituted>`; a substitution the runtime made
/// while running (no check: a failure that ended the run, a destination it could not take, a
/// cap it imposed) reads `at `save`: <substituted> (instead of <intended>)` — nothing was
/// repaired there.
pub fn deviation_line(deviation: &Deviation) -> String {
    match deviation.check {
        Some(c) => format!(
            "repaired {c} on `{}`: {} -> {}",
            clean(&deviation.subject),
            clean(&deviation.intended),
            clean(&deviation.substituted)
        ),
        None => format!(
            "at `{}`: {} (instead of {})",
            clean(&deviation.subject),
            clean(&deviation.substituted),
            clean(&deviation.intended)
        ),
    }
}

/// One finding as JSON, keys in this order: `id`, `severity` (`"error"`, `"warn"`,
/// `"fatal"`), `message`, `instruction` (string or null), `line` and `column` (numbers or null),
/// `did_you_mean` (list of strings), `repair` (`{"summary", "mechanical"}` or null).
pub fn finding_json(finding: &Finding) -> Json {
    // `Finding`'s `Serialize` is the contract; it cannot fail (every key is a string).
    serde_json::to_value(finding).unwrap_or(Json::Null)
}

#[cfg(feature = "agir")]
/// A read error as a finding in JSON: id `"read"`, severity `"fatal"`, the error's help as the
/// repair summary.
pub fn read_error_json(err: &ReadError) -> Json {
    finding_json(&Finding::from(err))
}

/// One deviation as JSON: `check` (id or null), `subject`, `intended`, `substituted`.
pub fn deviation_json(deviation: &Deviation) -> Json {
    json!({
        "check": deviation.check.map(|c| c.as_str()),
        "subject": deviation.subject,
        "intended": deviation.intended,
        "substituted": deviation.substituted,
    })
}

/// The report for one checked file: `{"file", "outcome", "findings", "deviations"}`.
pub fn report_json(
    file_name: &str,
    outcome: Outcome,
    findings: &[Finding],
    deviations: &[Deviation],
) -> Json {
    json!({
        "file": file_name,
        "outcome": outcome.to_string(),
        "findings": findings.iter().map(finding_json).collect::<Vec<_>>(),
        "deviations": deviations.iter().map(deviation_json).collect::<Vec<_>>(),
    })
}

#[cfg(feature = "agir")]
/// The report for a file that could not be read as AG-IR: outcome `failed`, one `read` finding.
pub fn read_failure_json(file_name: &str, err: &ReadError) -> Json {
    json!({
        "file": file_name,
        "outcome": Outcome::Failed.to_string(),
        "findings": [read_error_json(err)],
        "deviations": [],
    })
}

#[cfg(all(test, feature = "agir"))]
mod tests {
    use super::*;
    use crate::diag::CheckId;
    use crate::edit::Edit;
    use crate::expr::Category;
    use crate::source::{Element, FieldKey, Locus};

    fn w8() -> Finding {
        let mut f = Finding::new(
            CheckId::W8,
            Severity::Error,
            Locus::entry(Element::Instruction(1), FieldKey::Reads, 0),
            "`plan_mdd` is not a carry",
        )
        .with_instruction("verify")
        .with_suggestions(vec!["plan_md".into(), "plan_ok".into()]);
        f.pos = Some(Pos::new(2, 13));
        f
    }

    const SOURCE: &str = "nodes:\n  - reads: [plan_mdd, task]\n";

    #[test]
    fn renders_title_origin_caret_and_help() {
        let text = render_finding(&w8(), SOURCE, "p.agir", false);
        let expected = "\
error[W8]: `plan_mdd` is not a carry
 --> p.agir:2:13
  |
2 |   - reads: [plan_mdd, task]
  |             ^^^^^^^^
  |
  = help: did you mean `plan_md` or `plan_ok`?";
        assert_eq!(text, expected);
    }

    #[test]
    fn color_only_when_asked() {
        assert!(!render_finding(&w8(), SOURCE, "p.agir", false).contains('\x1b'));
        assert!(render_finding(&w8(), SOURCE, "p.agir", true).contains('\x1b'));
    }

    #[test]
    fn fatal_says_fatal_and_warn_says_warning() {
        let mut f = w8();
        f.severity = Severity::Fatal;
        f.id = CheckId::X5.into();
        let text = render_finding(&f, SOURCE, "p.agir", false);
        assert!(text.starts_with("error[X5]: "), "{text}");
        assert!(text.contains("= note: fatal:"), "{text}");
        f.severity = Severity::Warn;
        f.id = CheckId::G1.into();
        let text = render_finding(&f, SOURCE, "p.agir", false);
        assert!(text.starts_with("warning[G1]: "), "{text}");
    }

    #[test]
    fn repair_is_a_help_line_and_says_when_it_is_mechanical() {
        let mut f = w8();
        f.repair = Some(Repair::mechanical(
            Edit::MintCarry {
                name: "plan_mdd".into(),
                ty: None,
                produced_by: None,
            },
            "declare `plan_mdd`",
        ));
        let text = render_finding(&f, SOURCE, "p.agir", false);
        assert!(
            text.contains("= help: repair (mechanical; `ais fix` applies it): declare `plan_mdd`"),
            "{text}"
        );
        f.repair = Some(Repair::manual("rename it"));
        let text = render_finding(&f, SOURCE, "p.agir", false);
        assert!(text.contains("= help: repair: rename it"), "{text}");
    }

    #[test]
    fn a_finding_without_position_names_the_file_and_instruction() {
        let mut f = w8();
        f.pos = None;
        let text = render_finding(&f, SOURCE, "p.agir", false);
        assert!(text.contains("--> p.agir"), "{text}");
        assert!(text.contains("= note: in instruction `verify`"), "{text}");
    }

    #[test]
    fn a_position_past_the_source_still_renders() {
        let mut f = w8();
        f.pos = Some(Pos::new(99, 4));
        let text = render_finding(&f, SOURCE, "p.agir", false);
        assert!(text.contains("p.agir:99:4"), "{text}");
        f.pos = Some(Pos::new(2, 400));
        let text = render_finding(&f, SOURCE, "p.agir", false);
        assert!(text.contains("p.agir:2:"), "{text}");
        f.pos = Some(Pos::new(0, 0));
        let _ = render_finding(&f, SOURCE, "p.agir", false);
    }

    #[test]
    fn control_characters_in_messages_are_neutralized() {
        let mut f = w8();
        f.message = "bad \x1b[31mred".into();
        let text = render_finding(&f, SOURCE, "p.agir", false);
        assert!(!text.contains('\x1b'), "{text:?}");
    }

    #[test]
    fn spans_cover_the_word_at_the_column_counting_characters() {
        assert_eq!(span_at("reads: [plan_md]", 9), 8..15);
        assert_eq!(span_at("reads: [plan_md]", 8), 7..8);
        assert_eq!(span_at("surface: ACT·artifact", 10), 9..22);
        assert_eq!(span_at("é: [x]", 5), 5..6);
        assert_eq!(span_at("abc", 10), 3..3);
    }

    #[test]
    fn source_lines_handle_crlf_and_the_last_line() {
        let lines = SourceLines::new("a\r\nbc\nd");
        assert_eq!(lines.line(1), Some("a"));
        assert_eq!(lines.line(2), Some("bc"));
        assert_eq!(lines.line(3), Some("d"));
        assert_eq!(lines.line(4), None);
        assert_eq!(lines.line(0), None);
    }

    #[test]
    fn read_errors_render_with_help() {
        let err = ReadError {
            message: "expected a mapping".into(),
            pos: Some(Pos::new(1, 1)),
            help: Some("start the file with `nodes:`".into()),
        };
        let text = render_read_error(&err, SOURCE, "p.agir", false);
        assert!(text.starts_with("error[read]: cannot read AG-IR: expected a mapping"));
        assert!(text.contains("--> p.agir:1:1"));
        assert!(text.contains("= note: fatal:"));
        assert!(text.contains("= help: start the file with `nodes:`"));
        let json = read_failure_json("p.agir", &err);
        assert_eq!(json["outcome"], "failed");
        assert_eq!(json["findings"][0]["id"], "read");
        assert_eq!(json["findings"][0]["severity"], "fatal");
    }

    #[test]
    fn expression_errors_put_a_caret_under_the_expression() {
        let err = ExprError {
            category: Category::NameError,
            line: 1,
            column: 5,
            message: "no carry named `plan`".into(),
            len: 4,
            did_you_mean: Vec::new(),
        };
        let text = render_expr_error(&err, "1 + plan", EXPRESSION_ORIGIN, false);
        let expected = "\
error[name_error]: no carry named `plan`
 --> <expression>:1:5
  |
1 | 1 + plan
  |     ^^^^";
        assert_eq!(text, expected);
    }

    #[test]
    fn finding_json_has_the_documented_keys_in_order() {
        let json = finding_json(&w8());
        let keys: Vec<&str> = json
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(
            keys,
            [
                "id",
                "severity",
                "message",
                "instruction",
                "line",
                "column",
                "did_you_mean",
                "repair"
            ]
        );
        assert_eq!(json["severity"], "error");
        assert_eq!(json["instruction"], "verify");
        assert_eq!(json["column"], 13);
        assert_eq!(json["repair"], Json::Null);
        let mut f = w8();
        f.pos = None;
        assert_eq!(finding_json(&f)["line"], Json::Null);
    }

    #[test]
    fn plain_errors_say_what_and_the_next_step() {
        let text = render_error("cannot open `x.agir`", Some("check the path"), false);
        assert_eq!(
            text,
            "error: cannot open `x.agir`\n |\n = help: check the path"
        );
        assert_eq!(render_note("hello", false), "note: hello");
    }

    #[test]
    fn summary_lines_count_by_severity() {
        let mut warn = w8();
        warn.severity = Severity::Warn;
        assert_eq!(
            summary_line("p.agir", Outcome::Degraded, &[w8(), w8(), warn]),
            "p.agir: degraded (2 errors, 1 warning)"
        );
        assert_eq!(
            summary_line("p.agir", Outcome::Clean, &[]),
            "p.agir: clean (0 errors, 0 warnings)"
        );
        let mut fatal = w8();
        fatal.severity = Severity::Fatal;
        assert_eq!(
            summary_line("p.agir", Outcome::Failed, &[fatal]),
            "p.agir: failed (1 fatal, 0 errors, 0 warnings)"
        );
    }

    proptest::proptest! {
        #[test]
        fn rendering_never_panics_and_always_says_where(
            source in "(?s).{0,200}",
            message in "(?s).{0,60}",
            line in 0u32..20,
            column in 0u32..90,
        ) {
            let mut f = w8();
            f.message = message;
            f.pos = Some(Pos::new(line, column));
            let text = render_finding(&f, &source, "p.agir", false);
            proptest::prop_assert!(text.contains(&format!("p.agir:{line}:")), "{}", text);
            let err = ReadError { message: f.message.clone(), pos: f.pos, help: None };
            let _ = render_read_error(&err, &source, "p.agir", true);
            let e = ExprError {
                category: Category::SyntaxError,
                line,
                column,
                message: f.message.clone(),
                len: 0,
                did_you_mean: Vec::new(),
            };
            let _ = render_expr_error(&e, &source, EXPRESSION_ORIGIN, false);
        }
    }

    #[test]
    fn deviations_read_as_one_line_and_as_json() {
        let d = Deviation {
            check: Some(crate::diag::CheckId::W9),
            subject: "plan_md".into(),
            intended: "undeclared carry".into(),
            substituted: "carry `plan_md: str`".into(),
        };
        assert_eq!(
            deviation_line(&d),
            "repaired W9 on `plan_md`: undeclared carry -> carry `plan_md: str`"
        );
        assert_eq!(deviation_json(&d)["check"], "W9");
        let run = Deviation {
            check: None,
            subject: "load".into(),
            intended: "a failure routed by a ROUTE that tests it (§10.2)".into(),
            substituted: "unrouted failure: at `load`: FileNotFoundError".into(),
        };
        let line = deviation_line(&run);
        assert!(!line.contains("repaired"), "{line}");
        assert_eq!(
            line,
            "at `load`: unrouted failure: at `load`: FileNotFoundError (instead of a failure routed by a ROUTE that tests it (§10.2))"
        );
    }
}
