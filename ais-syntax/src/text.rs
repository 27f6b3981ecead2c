//! Tokens back to text: a guard, a CODE body or a Rust tool body, as the author wrote it.
//!
//! Tokens do not keep their whitespace, but with span locations every token knows its line and
//! column, and the text between two tokens on one line is spaces. So the layout is rebuilt from
//! positions: the same text from the proc macro and from `build.rs` export, which is what makes
//! their AG-IR byte-identical. Comments inside a body are not tokens and are not kept. When
//! positions are unknown (tokens built by another macro), the tokens are printed with
//! single spaces where Rust needs them.

use proc_macro2::{Delimiter, LineColumn, Span, TokenStream, TokenTree};

/// One piece of text with its source extent.
struct Piece {
    text: String,
    span: Span,
    start: LineColumn,
    end: LineColumn,
    /// A punctuation joined to the next one (`=` of `==`).
    joint: bool,
}

fn flatten(tokens: TokenStream, out: &mut Vec<Piece>) {
    for tt in tokens {
        match tt {
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::None => {
                        flatten(g.stream(), out);
                        continue;
                    }
                };
                let o = g.span_open();
                out.push(Piece {
                    text: open.to_owned(),
                    span: o,
                    start: o.start(),
                    end: o.end(),
                    joint: false,
                });
                flatten(g.stream(), out);
                let c = g.span_close();
                out.push(Piece {
                    text: close.to_owned(),
                    span: c,
                    start: c.start(),
                    end: c.end(),
                    joint: false,
                });
            }
            other => {
                let span = other.span();
                let joint = matches!(&other, TokenTree::Punct(p) if p.spacing() == proc_macro2::Spacing::Joint);
                out.push(Piece {
                    text: other.to_string(),
                    span,
                    start: span.start(),
                    end: span.end(),
                    joint,
                });
            }
        }
    }
}

/// The text of `tokens` laid out as written. Continuation lines lose `base_column` columns of
/// indentation (the column of the item the text belongs to), so a body written inside the
/// macro reads as if written at the left margin. With `one_line`, line breaks become single
/// spaces (a guard, a CODE body).
pub fn source_text(tokens: TokenStream, base_column: usize, one_line: bool) -> String {
    layout(tokens, base_column, one_line).0
}

/// [`source_text`], with each token's byte offset in the text and its span.
pub fn layout(
    tokens: TokenStream,
    base_column: usize,
    one_line: bool,
) -> (String, Vec<(usize, Span)>) {
    let mut pieces = Vec::new();
    flatten(tokens, &mut pieces);
    // Starts must not go backwards. Two tokens may share a span (syn keeps one span for a
    // multi-character punctuation such as `->`), which lays them out with no gap.
    let located = pieces.iter().all(|p| p.start.line > 0)
        && pieces
            .windows(2)
            .all(|w| (w[1].start.line, w[1].start.column) >= (w[0].start.line, w[0].start.column));
    if !located {
        return spaced(&pieces);
    }
    let mut offsets = Vec::with_capacity(pieces.len());
    let mut out = String::new();
    let mut prev: Option<LineColumn> = None;
    for piece in &pieces {
        if let Some(prev) = prev {
            if piece.start.line > prev.line {
                if one_line {
                    out.push(' ');
                } else {
                    for _ in prev.line..piece.start.line {
                        out.push('\n');
                    }
                    let indent = piece.start.column.saturating_sub(base_column);
                    out.extend(std::iter::repeat_n(' ', indent));
                }
            } else {
                let gap = piece.start.column.saturating_sub(prev.column);
                out.extend(std::iter::repeat_n(' ', gap));
            }
        }
        offsets.push((out.len(), piece.span));
        out.push_str(&piece.text);
        prev = Some(match prev {
            Some(p) if (p.line, p.column) > (piece.end.line, piece.end.column) => p,
            _ => piece.end,
        });
    }
    (out, offsets)
}

/// Tokens with a space between them except where Rust and the expression language read
/// better without one.
fn spaced(pieces: &[Piece]) -> (String, Vec<(usize, Span)>) {
    let mut out = String::new();
    let mut offsets = Vec::with_capacity(pieces.len());
    let mut prev: Option<&str> = None;
    let mut glued = false;
    for piece in pieces {
        let t = piece.text.as_str();
        if let Some(p) = prev {
            let tight = matches!(t, ")" | "]" | "," | "." | ";" | ":")
                || matches!(p, "(" | "[" | ".")
                || (t == "(" || t == "[")
                    && p.chars()
                        .last()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_');
            if !tight && !glued {
                out.push(' ');
            }
        }
        offsets.push((out.len(), piece.span));
        out.push_str(t);
        prev = Some(t);
        glued = piece.joint;
    }
    (out, offsets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn layout_is_rebuilt_from_positions() {
        let src = "foo(a,  b)\n        .bar()   == \"x y\"";
        let ts = TokenStream::from_str(src).unwrap();
        assert_eq!(source_text(ts.clone(), 0, false), src);
        assert_eq!(source_text(ts, 4, true), "foo(a,  b) .bar()   == \"x y\"");
    }

    #[test]
    fn continuation_lines_are_dedented_by_the_base_column() {
        let src = "{\n            x + 1\n        }";
        let ts = TokenStream::from_str(src).unwrap();
        assert_eq!(source_text(ts, 8, false), "{\n    x + 1\n}");
    }

    #[test]
    fn tokens_without_positions_are_spaced_readably() {
        let ts: TokenStream = quote::quote!(len(items) > 0 and op == Op.merge);
        let text = spaced_of(ts);
        assert_eq!(text, "len(items) > 0 and op == Op.merge");
    }

    fn spaced_of(ts: TokenStream) -> String {
        let mut pieces = Vec::new();
        flatten(ts, &mut pieces);
        spaced(&pieces).0
    }
}
