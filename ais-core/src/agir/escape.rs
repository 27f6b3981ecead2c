//! Finding a bad escape in a double-quoted scalar: the YAML scanner reports every escape error
//! at the scalar's opening quote, which in a long scalar is far from the mistake.

/// A bad escape in a double-quoted scalar: where its `\` is and what is written there.
#[derive(Debug, PartialEq)]
pub(crate) struct BadEscape {
    /// 1-based line.
    pub line: usize,
    /// 0-based character column.
    pub col0: usize,
    /// The escape as written, up to where it goes wrong (at most ten characters).
    pub written: String,
}

/// Characters of a text with their 1-based line and 0-based character column.
struct Cursor<'t> {
    chars: std::str::Chars<'t>,
    line: usize,
    col0: usize,
}

impl Cursor<'_> {
    fn next(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        if c == '\n' {
            self.line += 1;
            self.col0 = 0;
        } else {
            self.col0 += 1;
        }
        Some(c)
    }
}

/// The first bad escape (YAML 1.2 §5.7, with `\u` surrogate pairs as the scanner reads them)
/// of the double-quoted scalar whose opening quote is at a 1-based line and a 0-based character
/// column of `text`; `None` when there is no quote there or every escape is good.
pub(crate) fn bad_escape(text: &str, line: usize, col0: usize) -> Option<BadEscape> {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let mut at = Cursor {
        chars: text.get(start..)?.chars(),
        line,
        col0: 0,
    };
    for _ in 0..col0 {
        at.next()?;
    }
    if at.next()? != '"' {
        return None;
    }
    // A high surrogate escape waiting for its low half.
    let mut high: Option<BadEscape> = None;
    loop {
        let (line, col0) = (at.line, at.col0);
        let rest = at.chars.as_str();
        let c = at.next()?;
        if c != '\\' {
            if c == '"' || high.is_some() {
                return high;
            }
            continue;
        }
        // The escape as consumed up to `now`.
        let bad = |now: &str| BadEscape {
            line,
            col0,
            written: rest[..rest.len() - now.len()].chars().take(10).collect(),
        };
        let digits = match at.next()? {
            'x' => 2,
            'u' => 4,
            'U' => 8,
            '0' | 'a' | 'b' | 't' | '\t' | 'n' | 'v' | 'f' | 'r' | 'e' | ' ' | '"' | '/' | '\\'
            | 'N' | '_' | 'L' | 'P' | '\n' | '\r' => 0,
            _ => return Some(bad(at.chars.as_str())),
        };
        let mut value = 0u32;
        for _ in 0..digits {
            match at.next().and_then(|d| d.to_digit(16)) {
                Some(d) => value = value * 16 + d,
                None => return Some(bad(at.chars.as_str())),
            }
        }
        let surrogate_pair = digits == 4 && high.is_some();
        match high.take() {
            Some(_) if surrogate_pair && (0xDC00..=0xDFFF).contains(&value) => {}
            Some(h) => return Some(h),
            None if digits == 4 && (0xD800..=0xDBFF).contains(&value) => {
                high = Some(bad(at.chars.as_str()));
            }
            None if digits > 0 && char::from_u32(value).is_none() => {
                return Some(bad(at.chars.as_str()));
            }
            None => {}
        }
    }
}
