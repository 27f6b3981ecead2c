//! Issue 7, bug 2: formatting keeps comments (attached to the element they precede or trail)
//! and the text of unknown sections as written; a repaired program keeps them too.

use crate::support;

use ais_core::Pos;
use ais_core::agir::{Limits, read, write, write_keeping};
use std::collections::BTreeSet;

const COMMENTED: &str = "---
# module header
name: demo   # the id
description: Does it.
---
agir_version: 0.1
# the data plane
walker:
  name: demo
  carries:
    # the input
    task: {type: str, role: input}   # given by the user
    note: {type: str, produced_by: draft}
nodes:
  # reviewed by legal
  - id: draft
    type: GEN-RAW
    reads: [task]  # only the task
    writes: [note]
    # what to write
    doc: |
      Write the note. # not a comment: block text
  - {id: done, type: TERMINAL, reads: [note]}
edges:
  - {from: draft, to: done}  # the only edge
x_extra: &d
  big: 99999999999999999999
  inf: .inf   # stays
  tagged: !custom value
x_more: *d
# the end
";

#[test]
fn every_comment_is_kept_next_to_its_element() {
    let doc = read(COMMENTED).unwrap();
    let texts: Vec<&str> = doc
        .layout
        .comments()
        .iter()
        .map(|c| c.text.as_str())
        .collect();
    assert!(texts.contains(&" reviewed by legal"), "{texts:?}");
    assert!(
        !texts.iter().any(|t| t.contains("not a comment")),
        "{texts:?}"
    );
    let c = doc
        .layout
        .comments()
        .iter()
        .find(|c| c.text == " the id")
        .unwrap();
    assert!(c.trailing);
    assert_eq!(c.pos, Pos::new(3, 14));
    let out = write_keeping(&doc.program, &doc, &Limits::default()).unwrap();
    for wanted in [
        "# module header\nname: demo # the id\n",
        "# the data plane\nwalker:\n",
        "    # the input\n    task: # given by the user\n      type: str\n",
        "  # reviewed by legal\n  - id: draft\n",
        "    reads: [task] # only the task\n",
        "    # what to write\n    doc: |\n      Write the note. # not a comment: block text\n",
        "  - {from: draft, to: done} # the only edge\n",
        "\n# the end\n",
    ] {
        assert!(out.contains(wanted), "missing {wanted:?} in\n{out}");
    }
    // It reads back to the same program, and formatting it again changes nothing.
    let back = read(&out).unwrap();
    assert_eq!(back.program, doc.program);
    assert_eq!(
        write_keeping(&back.program, &back, &Limits::default()).unwrap(),
        out
    );
}

#[test]
fn unknown_sections_keep_their_text_anchors_tags_and_numbers() {
    let doc = read(COMMENTED).unwrap();
    let out = write_keeping(&doc.program, &doc, &Limits::default()).unwrap();
    assert!(
        out.contains(
            "x_extra: &d\n  big: 99999999999999999999\n  inf: .inf   # stays\n  tagged: !custom value\nx_more: *d\n"
        ),
        "{out}"
    );
    // Plain canonical writing expands and quotes them (what `fmt` used to write).
    assert!(!write(&doc.program).contains("*d"));
}

#[test]
fn a_repaired_program_keeps_the_comments_of_the_original() {
    let doc = read(COMMENTED).unwrap();
    let mut repaired = doc.program.clone();
    let carries = repaired.walker.as_mut().unwrap().carries.as_mut().unwrap();
    carries[1].ty = Some(ais_core::Type::parse("list[str]"));
    let out = write_keeping(&repaired, &doc, &Limits::default()).unwrap();
    assert!(out.contains("# reviewed by legal"), "{out}");
    assert!(out.contains("type: list[str]"), "{out}");
    assert_eq!(read(&out).unwrap().program, repaired);
}

/// Which lines of canonical text are the content of a `|` block (the writer's only block style).
fn block_content(lines: &[&str]) -> Vec<bool> {
    let indent = |l: &str| l.len() - l.trim_start_matches(' ').len();
    let mut out = vec![false; lines.len()];
    let mut open: Option<usize> = None;
    for (i, line) in lines.iter().enumerate() {
        if let Some(at) = open {
            if line.trim().is_empty() || indent(line) > at {
                out[i] = true;
                continue;
            }
            open = None;
        }
        let t = line.trim_end();
        if t.ends_with(": |")
            || t.ends_with(": |-")
            || t.ends_with(": |+")
            || t.ends_with("- |")
            || t.ends_with("- |-")
            || t.ends_with("- |+")
        {
            open = Some(indent(line));
        }
    }
    out
}

/// Every corpus program, with a comment above and beside every line where an element, field or
/// entry starts, formats to text that keeps every comment and reads back to the same program,
/// and formatting that text again changes nothing.
#[test]
fn comments_on_every_element_of_the_corpus_survive_formatting() {
    let Some(dir) = support::corpus() else { return };
    let mut files = 0;
    for path in support::agir_files(&dir) {
        let text = std::fs::read_to_string(&path).unwrap();
        let Ok(doc) = read(&text) else { continue };
        let canonical = write(&doc.program);
        let canon_doc = read(&canonical).unwrap();
        let all: Vec<&str> = canonical.split_inclusive('\n').collect();
        let in_block = block_content(&all);
        let lines: BTreeSet<u32> = canon_doc
            .source_map
            .iter()
            .map(|(_, p)| p.line)
            .filter(|n| !in_block[*n as usize - 1])
            .collect();
        let mut commented = String::new();
        for (i, line) in canonical.split_inclusive('\n').enumerate() {
            let n = u32::try_from(i + 1).unwrap();
            if lines.contains(&n) {
                let indent = line.len() - line.trim_start_matches(' ').len();
                commented.push_str(&format!("{}# above {n}\n", &line[..indent]));
                commented.push_str(&format!("{} # beside {n}\n", line.trim_end_matches('\n')));
            } else {
                commented.push_str(line);
            }
        }
        let with =
            read(&commented).unwrap_or_else(|e| panic!("{}: {e:?}\n{commented}", path.display()));
        assert_eq!(with.program, doc.program, "{}", path.display());
        let out = write_keeping(&with.program, &with, &Limits::default())
            .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
        for n in &lines {
            assert!(
                out.contains(&format!("# above {n}\n")),
                "{}: above {n}\n{out}",
                path.display()
            );
            assert!(
                out.contains(&format!(" # beside {n}\n")),
                "{}: beside {n}\n{out}",
                path.display()
            );
        }
        let again = read(&out).unwrap();
        assert_eq!(again.program, doc.program, "{}", path.display());
        assert_eq!(
            write_keeping(&again.program, &again, &Limits::default()).unwrap(),
            out,
            "{}",
            path.display()
        );
        files += 1;
    }
    assert!(files > 40, "only {files} corpus files read");
}

const UNKNOWN_FIELDS: &str = "---
name: demo
description: Does it.
x_owner: &team   # who owns it
  name: core
---
types:
  Verdict:
    kind: object
    fields:
      - name: ok
        type: bool
        x_hint: !note   \"kept\"
    x_since: &since 0.2
knowledge:
  style:
    template: Be brief.
    x_source:
      - https://example.com/a   # the first
      - .inf
tools:
  save:
    sig: \"(text) -> str\"
    surface: ACT
    x_audit: {level: high,   since: *since}
walker:
  name: demo
  carries:
      task:   {type: str, role: input}
      note:
          type: str
          produced_by: draft
          # reviewed by legal
          x_review:
              by: legal   # who
              on: 2024-01-01
              big: 123456789012345678901234567890
nodes:
    - id: draft
      type: GEN-RAW
      reads: [task]
      writes: [note]
      x_meta: !tag
        note: \"keep   me\"   # trailing
        text: |
          two
            lines
      autonomy:
        tools: []
        x_budget: 3
    - {id: done, type: TERMINAL, reads: [note]}
edges:
  - from: draft
    to: done
    x_weight: 0.50
  - {from: done, to: done, x_flow: 1}
";

#[test]
fn unknown_fields_of_elements_keep_their_text_and_comments() {
    let doc = read(UNKNOWN_FIELDS).unwrap();
    let out = write_keeping(&doc.program, &doc, &Limits::default()).unwrap();
    for kept in [
        "x_owner: &team   # who owns it\n  name: core\n",
        "        x_hint: !note   \"kept\"\n",
        "    x_since: &since 0.2\n",
        "    x_source:\n      - https://example.com/a   # the first\n      - .inf\n",
        "    x_audit: {level: high,   since: *since}\n",
        // Moved from column 10 to column 6, its own lines with it.
        "      # reviewed by legal\n      x_review:\n          by: legal   # who\n          on: 2024-01-01\n          big: 123456789012345678901234567890\n",
        // From column 6 to 4; the block text keeps its inner indentation.
        "    x_meta: !tag\n      note: \"keep   me\"   # trailing\n      text: |\n        two\n          lines\n",
        "      x_budget: 3\n",
    ] {
        assert!(out.contains(kept), "missing {kept:?} in\n{out}");
    }
    // Known fields are canonical; so is an unknown field of an edge (canonically a flow
    // mapping, where a field cannot keep its own lines).
    assert!(
        out.contains("    task:\n      type: str\n      role: input\n"),
        "{out}"
    );
    assert!(
        out.contains("  - {from: draft, to: done, x_weight: 0.5}\n"),
        "{out}"
    );
    let back = read(&out).unwrap();
    assert_eq!(back.program, doc.program);
    assert_eq!(
        write_keeping(&back.program, &back, &Limits::default()).unwrap(),
        out,
        "formatting twice changes nothing"
    );
    // A repaired program keeps them too.
    let mut repaired = doc.program.clone();
    let carries = repaired.walker.as_mut().unwrap().carries.as_mut().unwrap();
    carries[1].ty = Some(ais_core::Type::parse("list[str]"));
    let out = write_keeping(&repaired, &doc, &Limits::default()).unwrap();
    assert!(
        out.contains("      x_review:\n          by: legal   # who\n"),
        "{out}"
    );
    assert_eq!(read(&out).unwrap().program, repaired);
}

#[test]
fn an_unknown_field_that_cannot_stand_as_written_is_written_canonically() {
    // The alias names an anchor in a known field, which canonical writing drops: kept as
    // written, the field would not read back, so it is written from its value instead.
    let text = "walker:\n  name: w\n  carries:\n    a: {type: str, role: input, doc: &d \"x\"}\n    b:\n      type: str\n      x_copy: *d   # a copy\n";
    let doc = read(text).unwrap();
    let out = write_keeping(&doc.program, &doc, &Limits::default()).unwrap();
    assert!(out.contains("x_copy: x # a copy"), "{out}");
    assert_eq!(read(&out).unwrap().program, doc.program);
}

#[test]
fn a_field_of_a_flow_mapping_over_several_lines_is_written_canonically_and_others_kept() {
    let text = "walker:\n  name: w\n  carries:\n    a: {\n      type: str,\n      x_flow: 1,\n      role: input\n    }\n    b:\n      type: str\n      x_kept: &k [1,   2]\n";
    let doc = read(text).unwrap();
    let out = write_keeping(&doc.program, &doc, &Limits::default()).unwrap();
    assert!(out.contains("      x_flow: 1\n"), "{out}");
    assert!(out.contains("      x_kept: &k [1,   2]\n"), "{out}");
    assert_eq!(read(&out).unwrap().program, doc.program);
}
