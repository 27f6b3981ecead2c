//! The AGnnn codes (SPEC.md §18.1) and the sink findings are collected in.

use ais_core::agir::Data;
use ais_core::{Code, Element, Finding, Locus, Pos, Repair, Severity};
use std::collections::HashSet;

/// The severity SPEC.md §18.1 gives a code: `warn` for the advisory `AG9xx`, else `error`.
pub fn rule_severity(code: &str) -> Severity {
    if code.starts_with("AG9") {
        Severity::Warn
    } else {
        Severity::Error
    }
}

/// Interns a code as the `&'static str` [`Code::Foreign`] holds (codes are a fixed catalogue).
fn intern(code: &str) -> &'static str {
    const ALL: &[&str] = &[
        "AG001", "AG002", "AG003", "AG004", "AG005", "AG101", "AG102", "AG103", "AG104", "AG111",
        "AG112", "AG113", "AG114", "AG115", "AG116", "AG117", "AG121", "AG122", "AG123", "AG124",
        "AG131", "AG132", "AG133", "AG141", "AG142", "AG151", "AG152", "AG153", "AG201", "AG202",
        "AG203", "AG204", "AG205", "AG206", "AG211", "AG301", "AG302", "AG303", "AG901", "AG902",
        "AG903", "AG904", "AG905", "AG906", "AG907", "AG908", "AG909", "RT052",
    ];
    ALL.iter().find(|c| **c == code).copied().unwrap_or("AG001")
}

/// Where findings are collected, placed by JSON Pointer into the document.
pub(crate) struct Sink<'a> {
    data: Option<&'a Data>,
    source: &'a str,
    pub findings: Vec<Finding>,
    /// Pointers a specific rule already reported, so the schema's generic finding there is not
    /// repeated.
    pub covered: HashSet<String>,
}

impl<'a> Sink<'a> {
    pub fn new(data: Option<&'a Data>, source: &'a str) -> Self {
        Sink {
            data,
            source,
            findings: Vec::new(),
            covered: HashSet::new(),
        }
    }

    fn make(
        code: &str,
        severity: Severity,
        pos: Option<Pos>,
        message: String,
        repair: String,
    ) -> Finding {
        let mut f = Finding::new(
            Code::Foreign(intern(code)),
            severity,
            Locus::element(Element::Program),
            message,
        )
        .with_repair(Repair::manual(repair));
        f.pos = pos;
        f
    }

    /// A finding about the value at `pointer`, with the catalogue's severity.
    pub fn push(
        &mut self,
        code: &str,
        pointer: &str,
        message: impl Into<String>,
        repair: impl Into<String>,
    ) {
        self.push_sev(code, rule_severity(code), pointer, message, repair);
    }

    /// A finding about the value at `pointer` with an explicit severity.
    pub fn push_sev(
        &mut self,
        code: &str,
        severity: Severity,
        pointer: &str,
        message: impl Into<String>,
        repair: impl Into<String>,
    ) {
        let pos = self.data.and_then(|d| d.key_pos_of(pointer));
        self.covered.insert(pointer.to_owned());
        self.findings.push(Self::make(
            code,
            severity,
            pos,
            message.into(),
            repair.into(),
        ));
    }

    /// A finding at an exact place (inside an expression).
    pub fn push_at(
        &mut self,
        code: &str,
        pos: Pos,
        message: impl Into<String>,
        repair: impl Into<String>,
    ) {
        self.findings.push(Self::make(
            code,
            rule_severity(code),
            Some(pos),
            message.into(),
            repair.into(),
        ));
    }

    /// Where character `offset` of the text `text` (the value at `pointer`) stands in the
    /// source: exact when the value is written on one line, plain or quoted without escapes;
    /// else where the value starts.
    pub fn inner_pos(&self, pointer: &str, text: &str, offset: usize) -> Pos {
        let start = self.value_pos(pointer).unwrap_or(Pos::new(1, 1));
        let line = self
            .source
            .lines()
            .nth(start.line.saturating_sub(1) as usize)
            .unwrap_or("");
        let rest: String = line
            .chars()
            .skip(start.column.saturating_sub(1) as usize)
            .collect();
        let shift = if rest.starts_with(text) {
            Some(0)
        } else if (rest.starts_with('"') || rest.starts_with('\'')) && rest[1..].starts_with(text) {
            Some(1)
        } else {
            None
        };
        match shift {
            Some(s) => Pos::new(
                start.line,
                start.column + u32::try_from(offset + s).unwrap_or(0),
            ),
            None => start,
        }
    }

    /// Where the value at `pointer` starts.
    pub fn value_pos(&self, pointer: &str) -> Option<Pos> {
        self.data.and_then(|d| d.pos_of(pointer))
    }

    /// The findings, duplicates (same code and place) dropped.
    /// True when an error has been reported.
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(|f| f.severity >= Severity::Error)
    }

    pub fn finish(self) -> Vec<Finding> {
        let mut seen = HashSet::new();
        self.findings
            .into_iter()
            .filter(|f| seen.insert((f.id, f.pos.map(|p| (p.line, p.column)), f.message.clone())))
            .collect()
    }
}
