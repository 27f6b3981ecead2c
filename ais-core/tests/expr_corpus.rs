//! Every guard and CODE body in the Sigil corpus parses and type-checks against its file's
//! carries, except the ones the corpus marks as deliberately bad, which are reported with the
//! reason.
//!
//! One test reads the corpus with the AG-IR reader; another with a light line scan of the
//! corpus's own shapes (carries with their types, edge guards, `CODE` bodies), so that the
//! two readings of what the corpus contains check each other.

use ais_core::expr::{Category, is_sentinel};
use ais_core::{Carry, Program, Type, Walker};

use crate::support;
use support::{agir_files, corpus};

use crate::expr_common;
use expr_common::{check_body, check_guard};

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Unquotes a YAML scalar written plain, single- or double-quoted.
fn scalar(text: &str) -> String {
    let t = text.trim();
    if let Some(inner) = t.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        inner.replace("\\\"", "\"").replace("\\\\", "\\")
    } else if let Some(inner) = t.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        inner.replace("''", "'")
    } else {
        t.to_owned()
    }
}

/// The value of `key:` inside a flow mapping `{a: 1, key: "v", …}` (quotes respected).
fn flow_field(line: &str, key: &str) -> Option<String> {
    let start = line.find(&format!("{key}:"))? + key.len() + 1;
    let rest = line[start..].trim_start();
    let end = if rest.starts_with('"') {
        let mut escaped = false;
        let mut end = rest.len();
        for (i, c) in rest.char_indices().skip(1) {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    end = i + 1;
                    break;
                }
                _ => escaped = false,
            }
        }
        end
    } else {
        rest.find([',', '}']).unwrap_or(rest.len())
    };
    Some(scalar(&rest[..end]))
}

struct Scanned {
    carries: Vec<Carry>,
    guards: Vec<(usize, String)>,
    bodies: Vec<(usize, String)>,
}

fn scan(text: &str) -> Scanned {
    let mut carries = Vec::new();
    let mut guards = Vec::new();
    let mut bodies = Vec::new();
    let mut section = "";
    let mut in_carries = false;
    let mut current: Option<Carry> = None;
    let mut node_is_code = false;
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if indent(line) == 0 {
            section = trimmed.split(':').next().unwrap_or("");
            in_carries = false;
            continue;
        }
        match section {
            "walker" => {
                if indent(line) == 2 {
                    in_carries = trimmed.starts_with("carries:");
                    continue;
                }
                if !in_carries {
                    continue;
                }
                let ind = indent(line);
                if let Some(rest) = trimmed.strip_prefix("- name:") {
                    // Sequence form: `- name: x` then `type: T` lines.
                    carries.extend(current.take());
                    current = Some(Carry {
                        name: scalar(rest),
                        ..Carry::default()
                    });
                } else if ind == 4 && trimmed.contains(':') {
                    carries.extend(current.take());
                    let (name, rest) = trimmed.split_once(':').unwrap();
                    let mut c = Carry {
                        name: name.trim().to_owned(),
                        ..Carry::default()
                    };
                    if rest.trim_start().starts_with('{') {
                        c.ty = flow_field(rest, "type").map(|t| Type::parse(&t));
                        carries.push(c);
                    } else {
                        current = Some(c);
                    }
                } else if let Some(t) = trimmed.strip_prefix("type:")
                    && let Some(c) = current.as_mut()
                {
                    c.ty = Some(Type::parse(&scalar(t)));
                }
            }
            "nodes" => {
                if trimmed.starts_with("- ") {
                    node_is_code = false;
                }
                let field = trimmed.trim_start_matches("- ");
                if let Some(t) = field.strip_prefix("type:") {
                    node_is_code = scalar(t) == "CODE";
                }
                if let Some(b) = field.strip_prefix("body:")
                    && node_is_code
                {
                    let b = b.trim();
                    let body = if b == "|" || b == ">" {
                        let base = lines.get(i + 1).map_or(0, |l| indent(l));
                        lines[i + 1..]
                            .iter()
                            .take_while(|l| l.trim().is_empty() || indent(l) >= base)
                            .map(|l| l.trim())
                            .collect::<Vec<_>>()
                            .join("\n")
                    } else {
                        scalar(b)
                    };
                    bodies.push((i + 1, body.trim().to_owned()));
                }
            }
            "edges" => {
                if let Some(g) = flow_field(trimmed, "guard") {
                    guards.push((i + 1, g));
                }
            }
            _ => {}
        }
    }
    carries.extend(current);
    Scanned {
        carries,
        guards,
        bodies,
    }
}

/// Guards the corpus marks as deliberately bad, with the category each must be reported with.
const EXPECTED_BAD: &[(&str, &str, Category)] = &[
    // "code ROUTE with guards "more"/"finished" naming no carry -> never converges".
    ("runtime_budget/LOOP_IR.agir", "more", Category::NameError),
    (
        "runtime_budget/LOOP_IR.agir",
        "finished",
        Category::NameError,
    ),
];

#[test]
fn every_corpus_guard_and_body_checks_or_is_reported() {
    let Some(dir) = corpus() else {
        return;
    };
    let files = agir_files(&dir);
    assert!(files.len() >= 50, "only {} .agir files", files.len());
    let (mut guards, mut bodies) = (0, 0);
    let mut bad = Vec::new();
    for path in &files {
        let rel = path
            .strip_prefix(&dir)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(path).unwrap();
        let scanned = scan(&text);
        let program = Program {
            walker: Some(Walker {
                carries: Some(scanned.carries),
                ..Walker::default()
            }),
            ..Program::default()
        };
        for (line, guard) in &scanned.guards {
            guards += 1;
            if is_sentinel(guard) {
                continue;
            }
            if let Err(e) = check_guard(&program, guard) {
                eprintln!(
                    "{rel}:{line}: guard {guard:?}: {}: {}",
                    e.category.as_str(),
                    e.message
                );
                bad.push((rel.clone(), guard.clone(), e.category));
            }
        }
        for (line, body) in &scanned.bodies {
            bodies += 1;
            if let Err(e) = check_body(&program, body) {
                eprintln!("{rel}:{line}: body {body:?}: {}: {}", e.category, e.message);
                bad.push((rel.clone(), body.clone(), e.category));
            }
        }
    }
    // The corpus has eleven guards and no inline CODE bodies (its CODE instructions bind tools).
    assert_eq!(guards, 11, "guards found");
    assert_eq!(bodies, 0, "CODE bodies found");
    let expected: Vec<(String, String, Category)> = EXPECTED_BAD
        .iter()
        .map(|(f, g, c)| ((*f).to_owned(), (*g).to_owned(), *c))
        .collect();
    assert_eq!(bad, expected);
}

#[test]
fn the_scan_reads_the_shapes_the_corpus_uses() {
    let text = "walker:\n  name: W\n  carries:\n    a: {type: bool, produced_by: x}\n    b:\n      type: int\n      role: input\n\
                nodes:\n  - id: c\n    type: CODE\n    body: \"len(a)\"\n\
                edges:\n  - {from: x, to: y, guard: \"b != \\\"\\\"\"}\n";
    let s = scan(text);
    let names: Vec<_> = s
        .carries
        .iter()
        .map(|c| (c.name.as_str(), c.ty.clone()))
        .collect();
    assert_eq!(names, vec![("a", Some(Type::Bool)), ("b", Some(Type::Int))]);
    assert_eq!(s.guards, vec![(13, "b != \"\"".to_owned())]);
    assert_eq!(s.bodies, vec![(11, "len(a)".to_owned())]);
    let seq = scan("walker:\n  carries:\n    - name: t\n      type: str\n");
    assert_eq!(seq.carries.len(), 1);
    assert_eq!(seq.carries[0].ty, Some(Type::Str));
}

/// The same, on programs read by the AG-IR reader (types and all): every guard and `CODE` body
/// of every file that reads checks, except the deliberately bad ones.
#[test]
fn every_guard_and_body_of_read_programs_checks() {
    let Some(dir) = corpus() else {
        return;
    };
    let files = agir_files(&dir);
    let (mut read, mut guards, mut bodies) = (0, 0, 0);
    let mut bad = Vec::new();
    for path in &files {
        let rel = path
            .strip_prefix(&dir)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(path).unwrap();
        // Files that are deliberately not AG-IR are the reader's business, not this test's.
        let Ok(doc) = ais_core::agir::read(&text) else {
            continue;
        };
        read += 1;
        let program = &doc.program;
        for edge in program.edge_list() {
            let Some(guard) = edge.guard.as_deref() else {
                continue;
            };
            guards += 1;
            if let Err(e) = check_guard(program, guard) {
                bad.push((rel.clone(), guard.to_owned(), e.category));
            }
        }
        for node in program.instructions() {
            if let Some(body) = node.body.as_deref() {
                bodies += 1;
                if let Err(e) = check_body(program, body) {
                    bad.push((rel.clone(), body.to_owned(), e.category));
                }
            }
        }
    }
    assert!(read >= 50, "only {read} files read");
    assert_eq!((guards, bodies), (11, 0));
    let expected: Vec<(String, String, Category)> = EXPECTED_BAD
        .iter()
        .map(|(f, g, c)| ((*f).to_owned(), (*g).to_owned(), *c))
        .collect();
    assert_eq!(bad, expected);
}
