//! The reader's limits: no input can hang it, overflow its stack or exhaust memory; each limit
//! fails with a located error.

use ais_core::agir::{Limits, read, read_with_limits};
use std::time::Instant;

#[test]
fn a_document_over_the_size_limit_fails_fast_with_a_position() {
    let mut text = String::from("nodes:\n");
    while text.len() < 20 * 1024 * 1024 {
        text.push_str("  - {id: a, type: CODE}\n");
    }
    let start = Instant::now();
    let err = read(&text).unwrap_err();
    assert!(
        start.elapsed().as_millis() < 1000,
        "took {:?}",
        start.elapsed()
    );
    assert!(err.message.contains("limit"), "{}", err.message);
    let pos = err.pos.expect("located");
    // The limit (8 MiB) is crossed in the middle of an entry line (24 bytes each, after the
    // 7-byte `nodes:` line).
    assert_eq!(pos.line as usize, (8 * 1024 * 1024 - 7) / 24 + 2);
    assert!(err.help.unwrap().contains("max_bytes"));
}

#[test]
fn deep_nesting_fails_with_a_position_instead_of_overflowing() {
    for open in ["[", "{a: "] {
        let text = format!("x: {}", open.repeat(10_000));
        let err = read(&text).unwrap_err();
        assert!(
            err.message.contains("depth limit") || err.message.contains("nest"),
            "{}",
            err.message
        );
        assert_eq!(err.pos.unwrap().line, 1);
    }
    // Block nesting too.
    let mut text = String::new();
    for i in 0..10_000 {
        text.push_str(&" ".repeat(i));
        text.push_str("a:\n");
    }
    let err = read(&text).unwrap_err();
    assert!(err.pos.is_some(), "{err:?}");
    // A nesting within the limit reads.
    let ok = format!("x: {}{}", "[".repeat(40), "]".repeat(40));
    assert!(read(&ok).is_ok());
}

#[test]
fn an_alias_bomb_fails_fast() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let p = i - 1;
        text.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    let start = Instant::now();
    let err = read(&text).unwrap_err();
    assert!(
        start.elapsed().as_millis() < 1000,
        "took {:?}",
        start.elapsed()
    );
    assert!(err.message.contains("alias"), "{}", err.message);
    assert!(err.pos.unwrap().line > 1);
    // Small aliases are expanded.
    let doc = read("x_defaults: &d {k: 1}\nx_use: *d\n").unwrap();
    assert_eq!(doc.program.extra[0].1, doc.program.extra[1].1);
    let tight = Limits {
        max_alias_nodes: 2,
        ..Limits::default()
    };
    assert!(read_with_limits("x_defaults: &d {k: 1}\nx_use: *d\n", &tight).is_err());
}

/// Issue 7, bug 1: a 100 KB file whose anchor holds a 100,000-character string, aliased
/// 10×10×10×10 in an unknown section, used to expand to gigabytes. The bytes of text aliases
/// expand into are budgeted now, and the budget is crossed at the alias that crosses it.
#[test]
fn aliases_of_a_long_string_fail_at_the_byte_budget() {
    let mut text = format!("x_big: &s0 \"{}\"\n", "y".repeat(100_000));
    for (level, prev) in [(1, "s0"), (2, "l1"), (3, "l2"), (4, "l3")] {
        let items = vec![format!("*{prev}"); 10].join(", ");
        text.push_str(&format!("x_l{level}: &l{level} [{items}]\n"));
    }
    assert!(text.len() < 110_000);
    let start = Instant::now();
    let err = read(&text).unwrap_err();
    assert!(
        start.elapsed().as_millis() < 1000,
        "took {:?}",
        start.elapsed()
    );
    assert!(err.message.contains("bytes of text"), "{}", err.message);
    assert!(err.message.contains("alias limit"), "{}", err.message);
    // 10 aliases of the string (1 MB) fit; the ninth alias of `l1` (1 MB each) crosses 8 MiB.
    let pos = err.pos.expect("located");
    assert_eq!(pos.line, 3, "{err:?}");
    assert!(err.help.unwrap().contains("write the repeated content out"));
    // Within the budget the same shape reads, expanded.
    let small = Limits {
        max_alias_bytes: 2_000_000,
        ..Limits::default()
    };
    let text2: String = text.lines().take(2).map(|l| format!("{l}\n")).collect();
    assert!(read_with_limits(&text2, &small).is_ok());
    let tighter = Limits {
        max_alias_bytes: 999_999,
        ..Limits::default()
    };
    assert!(read_with_limits(&text2, &tighter).is_err());
}

#[test]
fn the_node_budget_counts_alias_expansions() {
    let text = "x_a: &a [1, 2, 3, 4]\nx_b: [*a, *a, *a]\n";
    assert!(read(text).is_ok());
    // The root mapping, `x_a` and its list of 4 (5 nodes), `x_b` and its list of 3 × 5.
    let nodes = 1 + 1 + 5 + 1 + 1 + 15;
    let exact = Limits {
        max_nodes: nodes,
        ..Limits::default()
    };
    assert!(read_with_limits(text, &exact).is_ok());
    let under = Limits {
        max_nodes: nodes - 3,
        ..Limits::default()
    };
    let err = read_with_limits(text, &under).unwrap_err();
    assert!(err.message.contains("node limit"), "{}", err.message);
    assert_eq!(err.pos.unwrap().line, 2);
}

#[test]
fn a_truncated_file_fails_with_a_position() {
    let full = "walker:\n  carries:\n    task: {type: str, role: input}\nnodes:\n  - id: a\n    doc: \"Write it.\"\nedges:\n  - {from: a, to: b}\n";
    assert!(read(full).is_ok());
    for cut in [40, 50, 90, full.len() - 3] {
        let text = &full[..cut];
        if let Err(err) = read(text) {
            let pos = err.pos.expect("located");
            assert!(
                pos.line >= 1 && pos.line as usize <= text.lines().count() + 1,
                "{err:?}"
            );
        }
    }
    let err = read("nodes:\n  - id: a\n    doc: \"unterminated\n").unwrap_err();
    assert!(err.pos.is_some(), "{err:?}");
    let err = read("edges:\n  - {from: a, to:").unwrap_err();
    assert_eq!(err.pos.unwrap().line, 2, "{err:?}");
}

#[test]
fn relaxations_are_bounded() {
    let mut text = String::from("nodes:\n");
    for i in 0..150 {
        text.push_str(&format!("  - id: n{i}\n    doc: Note: {i}\n"));
    }
    let err = read(&text).unwrap_err();
    assert!(
        err.message.contains("after 100 relaxations"),
        "{}",
        err.message
    );
    assert_eq!(err.pos.unwrap().line, 2 * 100 + 3);
    let doc = read(&text[..text.find("  - id: n100\n").unwrap()]).unwrap();
    assert_eq!(doc.relaxations.len(), 100);
}

/// The book's table of the reader's limits (`book/src/limits.md`): each row names a `Limits` field, its default and
/// the error crossing it gives. Each row is checked against the reader: the default is the
/// field's, and an input crossing the bound (the default one, or for the node and depth bounds
/// a smaller one, with the number in the message replaced) gives exactly that message.
#[test]
fn the_books_limits_table_is_true() {
    let readme = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../book/src/limits.md"
    ))
    .expect("the book's limits chapter");
    let section = readme.as_str();
    let rows: Vec<(String, String, String)> = section
        .lines()
        .skip_while(|l| !l.starts_with("| bound"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            let field = cells[0]
                .split("(`")
                .nth(1)
                .and_then(|f| f.split('`').next());
            let message = cells[2].split('`').nth(1);
            (
                field.expect("a field").to_owned(),
                cells[1].to_owned(),
                message.expect("a message").to_owned(),
            )
        })
        .collect();
    let d = Limits::default();
    let mut seen = Vec::new();
    for (field, default, message) in &rows {
        let (value, err) = match field.as_str() {
            "max_bytes" => {
                let text = format!("x: \"{}\"\n", "y".repeat(d.max_bytes));
                (d.max_bytes, read(&text).unwrap_err().message)
            }
            "max_alias_bytes" => {
                let mut text = format!("x_big: &s0 \"{}\"\n", "y".repeat(100_000));
                for (level, prev) in [(1, "s0"), (2, "l1"), (3, "l2")] {
                    let items = vec![format!("*{prev}"); 10].join(", ");
                    text.push_str(&format!("x_l{level}: &l{level} [{items}]\n"));
                }
                (d.max_alias_bytes, read(&text).unwrap_err().message)
            }
            "max_alias_nodes" => {
                let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
                for i in 1..8 {
                    let items = vec![format!("*a{}", i - 1); 10].join(", ");
                    text.push_str(&format!("a{i}: &a{i} [{items}]\n"));
                }
                (d.max_alias_nodes, read(&text).unwrap_err().message)
            }
            "max_nodes" => {
                let small = Limits {
                    max_nodes: 50,
                    ..Limits::default()
                };
                let text = format!("x: [{}]\n", vec!["1"; 60].join(", "));
                let err = read_with_limits(&text, &small).unwrap_err().message;
                (d.max_nodes, err.replace("50", &d.max_nodes.to_string()))
            }
            "max_depth" => {
                let n = d.max_depth + 1;
                let text = format!("x: {}{}\n", "[".repeat(n), "]".repeat(n));
                (d.max_depth, read(&text).unwrap_err().message)
            }
            other => panic!("the README names a limit `{other}` the test does not know"),
        };
        let number = |s: &str| -> usize {
            let digits: String = s.chars().filter(char::is_ascii_digit).collect();
            digits.parse().unwrap_or_default()
        };
        let shown = if default.contains("MiB") {
            number(default.split(" MiB").next().unwrap_or_default()) * 1024 * 1024
        } else {
            number(default)
        };
        assert_eq!(shown, value, "the README's default for `{field}`");
        // The size message names the size found; compare around it.
        let (head, tail) = message.split_once(" N ").unwrap_or((message, ""));
        assert!(
            err.starts_with(head) && err.ends_with(tail),
            "`{field}`: the README says `{message}`, the reader says `{err}`"
        );
        seen.push(field.as_str());
    }
    seen.sort_unstable();
    assert_eq!(
        seen,
        [
            "max_alias_bytes",
            "max_alias_nodes",
            "max_bytes",
            "max_depth",
            "max_nodes"
        ]
    );
}
