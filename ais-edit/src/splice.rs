//! Keeping the text of what a patch did not touch: the canonical text of the patched program,
//! with each top-level section whose content did not change put back exactly as it was written
//! (its formatting, alignment and comments). The result is used only if it reads back to the
//! patched program.

use ais_core::{Program, agir};

/// The text split into top-level sections: `(key, text)`, the frontmatter keyed `---`. Blank
/// and comment lines at the left margin go with the section after them.
fn sections(text: &str) -> Option<Vec<(String, String)>> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut pending = String::new();
    let mut lines = text.split_inclusive('\n').peekable();
    if text.starts_with("---") {
        let mut front = String::new();
        front.push_str(lines.next()?);
        loop {
            let line = lines.next()?;
            front.push_str(line);
            if line.trim_end() == "---" {
                break;
            }
        }
        out.push(("---".to_owned(), front));
    }
    for line in lines {
        let first = line.chars().next();
        let margin_key =
            first.is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && line.contains(':');
        if margin_key {
            let key = line.split(':').next().unwrap_or_default().trim().to_owned();
            let mut chunk = std::mem::take(&mut pending);
            chunk.push_str(line);
            out.push((key, chunk));
        } else if first.is_none_or(|c| c == '#' || c == '\n' || c == '\r') {
            pending.push_str(line);
        } else {
            match out.last_mut() {
                Some((_, chunk)) => {
                    chunk.push_str(&pending);
                    pending.clear();
                    chunk.push_str(line);
                }
                None => return None,
            }
        }
    }
    if let Some((_, chunk)) = out.last_mut() {
        chunk.push_str(&pending);
    } else if !pending.is_empty() {
        return None;
    }
    Some(out)
}

/// True when the section `key` holds the same content in both programs.
fn same(key: &str, a: &Program, b: &Program) -> bool {
    match key {
        "---" => {
            a.name == b.name
                && a.description == b.description
                && a.frontmatter_extra == b.frontmatter_extra
        }
        "name" => a.name == b.name,
        "description" => a.description == b.description,
        "agir_version" => a.agir_version == b.agir_version,
        "standalone" => a.standalone == b.standalone,
        "shape" => a.shape == b.shape,
        "types" => a.types == b.types,
        "knowledge" => a.knowledge == b.knowledge,
        "tools" => a.tools == b.tools,
        "walker" => a.walker == b.walker,
        "nodes" => a.nodes == b.nodes,
        "edges" => a.edges == b.edges,
        "concurrency" => a.concurrency == b.concurrency,
        "faithfulness" => a.faithfulness == b.faithfulness,
        "mcp_servers" => a.mcp_servers == b.mcp_servers,
        other => {
            let find = |p: &Program| {
                p.extra
                    .iter()
                    .find(|(k, _)| k == other)
                    .map(|(_, v)| v.clone())
            };
            find(a).is_some() && find(a) == find(b)
        }
    }
}

/// `new_text` (the canonical text of `new`) with every unchanged section of `old_text` put
/// back as written; `None` when that does not read back to `new`.
pub fn keep_unchanged(
    old_text: &str,
    old: &Program,
    new_text: &str,
    new: &Program,
) -> Option<String> {
    let old_sections = sections(old_text)?;
    let new_sections = sections(new_text)?;
    let mut out = String::with_capacity(new_text.len());
    let mut kept = 0;
    for (key, text) in &new_sections {
        let mut olds = old_sections.iter().filter(|(k, _)| k == key);
        match (olds.next(), olds.next()) {
            (Some((_, old_chunk)), None) if same(key, old, new) => {
                out.push_str(old_chunk);
                if !old_chunk.ends_with('\n') {
                    out.push('\n');
                }
                kept += 1;
            }
            _ => out.push_str(text),
        }
    }
    if kept == 0 {
        return None;
    }
    let limits = agir::Limits::default();
    let back = agir::read_with_limits(&out, &limits).ok()?;
    (back.program == *new && back.relaxations.is_empty()).then_some(out)
}
