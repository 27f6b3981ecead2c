//! The opcode-specific shaping of a model's value before it is validated: GEN-RAW's code-fence
//! stripping and contentless-element dropping (spec §4.1), the closed set of choices of a
//! GEN-ENUM or an SU ROUTE, and GEN-EDIT's check against the value it revises.
//!
//! # The GEN-EDIT rule
//!
//! Spec §4.1 asks that a GEN-EDIT be checked against the prior value so that a silent
//! truncation is a rejection, not a result. A revision is rejected (as a repairable validation
//! error: the model is told why and asked again) when, the prior value being non-empty:
//!
//! 1. it is empty (a blank string, an empty list or object); or
//! 2. it keeps less than half of the prior's size, the prior being big enough for the
//!    comparison to mean something — a string of at least 80 characters (sizes in characters,
//!    surrounding whitespace ignored), a list of at least 4 elements (sizes in elements), any
//!    other value whose JSON text has at least 80 characters (sizes in JSON characters); or
//! 3. it is text with an elision placeholder line the prior does not have: a line that,
//!    comment markers aside, is `...` or `…` (optionally in brackets), or that holds `...`/`…`
//!    together with words like "rest", "unchanged", "remaining", "omitted", "truncated" or
//!    "same as" — the way a model says "and the rest stays as it was" instead of writing it.
//!
//! A revision that restructures its input past these bounds is a GEN-RAW (§4.1), not a
//! GEN-EDIT.

use serde_json::Value;

/// The smallest prior string (in characters) rule 2 compares against.
const EDIT_MIN_CHARS: usize = 80;
/// The smallest prior list (in elements) rule 2 compares against.
const EDIT_MIN_ITEMS: usize = 4;

/// The text inside one code fence that surrounds the whole of `text` (```` ```lang ```` …
/// ```` ``` ````, or `~~~`), or `None` when `text` is not fenced as a whole.
pub(crate) fn strip_fence(text: &str) -> Option<String> {
    let trimmed = text.trim();
    let fence = if trimmed.starts_with("```") {
        "```"
    } else if trimmed.starts_with("~~~") {
        "~~~"
    } else {
        return None;
    };
    let (opening, rest) = trimmed.split_once('\n')?;
    // The opening line is the fence and at most an info string (a language tag).
    let info = opening.trim_start_matches(fence.chars().next()?);
    if info.contains(fence) {
        return None;
    }
    let body = rest.trim_end().strip_suffix(fence)?;
    let body = body.trim_end_matches(fence.chars().next()?);
    // A fence inside the body means the text holds several blocks, not one fenced whole.
    if body.lines().any(|l| l.trim_start().starts_with(fence)) {
        return None;
    }
    Some(body.trim_end_matches(['\n', '\r']).to_owned())
}

/// Whether `value` carries no content: null, a blank string, an empty list or object.
pub(crate) fn is_contentless(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Bool(_) | Value::Number(_) => false,
    }
}

/// GEN-RAW's post-processing: a string loses a code fence around it; a list loses its
/// contentless elements (and a fence around each string element).
pub(crate) fn raw(value: Value) -> Value {
    match value {
        Value::String(s) => Value::String(strip_fence(&s).unwrap_or(s)),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .filter(|v| !is_contentless(v))
                .map(|v| match v {
                    Value::String(s) => Value::String(strip_fence(&s).unwrap_or(s)),
                    other => other,
                })
                .collect(),
        ),
        other => other,
    }
}

/// The member of `choices` that `value` names. An exact match is taken as is; otherwise
/// surrounding whitespace, quotes, backticks and a final period are ignored, then case, and the
/// one member that matches is taken. The error lists the choices.
pub(crate) fn choose(value: Value, choices: &[String]) -> Result<Value, String> {
    let list = || {
        choices
            .iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Value::String(text) = &value else {
        return Err(format!(
            "the answer must be exactly one of {} as a JSON string, not {}",
            list(),
            kind_of(&value)
        ));
    };
    if choices.iter().any(|c| c == text) {
        return Ok(value);
    }
    let bare = text
        .trim()
        .trim_end_matches('.')
        .trim_matches(|c: char| c == '"' || c == '\'' || c == '`' || c.is_whitespace());
    let exact: Vec<&String> = choices.iter().filter(|c| c.as_str() == bare).collect();
    let folded: Vec<&String> = choices
        .iter()
        .filter(|c| c.to_lowercase() == bare.to_lowercase())
        .collect();
    match (exact.as_slice(), folded.as_slice()) {
        ([one], _) | ([], [one]) => Ok(Value::String((*one).clone())),
        _ => Err(format!(
            "`{}` is not one of the choices; answer with exactly one of {}",
            clip(text, 80),
            list()
        )),
    }
}

/// GEN-EDIT's check of `revised` against `prior` (see the module docs).
pub(crate) fn check_edit(prior: &Value, revised: &Value) -> Result<(), String> {
    if is_contentless(prior) {
        return Ok(());
    }
    const KEEP: &str = "return the whole revised value, keeping every part you were not asked to change (a GEN-EDIT revises the existing value; it does not cut it down)";
    if is_contentless(revised) {
        return Err(format!(
            "the revision is empty but the value it revises is not; {KEEP}"
        ));
    }
    let (before, after, unit) = match (prior, revised) {
        (Value::String(p), Value::String(r)) => (
            p.trim().chars().count(),
            r.trim().chars().count(),
            "characters",
        ),
        (Value::Array(p), Value::Array(r)) => (p.len(), r.len(), "elements"),
        (p, r) => (
            p.to_string().chars().count(),
            r.to_string().chars().count(),
            "characters of JSON",
        ),
    };
    let min = if unit == "elements" {
        EDIT_MIN_ITEMS
    } else {
        EDIT_MIN_CHARS
    };
    if before >= min && after * 2 < before {
        return Err(format!(
            "the revision keeps {after} of the prior value's {before} {unit}, less than half: it looks truncated; {KEEP}"
        ));
    }
    if let (Value::String(p), Value::String(r)) = (prior, revised)
        && let Some(line) = r
            .lines()
            .find(|l| is_elision(l) && !p.lines().any(|pl| pl.trim() == l.trim()))
    {
        return Err(format!(
            "the revision elides part of the value with the placeholder line `{}`; {KEEP}",
            clip(line.trim(), 120)
        ));
    }
    Ok(())
}

/// Whether `line` is an elision placeholder (see the module docs, rule 3).
fn is_elision(line: &str) -> bool {
    let mut t = line.trim();
    for open in ["<!--", "/*", "//", "--", "#", ";", "*"] {
        if let Some(rest) = t.strip_prefix(open) {
            t = rest.trim();
            break;
        }
    }
    for close in ["-->", "*/"] {
        if let Some(rest) = t.strip_suffix(close) {
            t = rest.trim();
        }
    }
    let t = t.to_lowercase();
    let core = t.trim_matches(|c: char| "[]() ".contains(c));
    if core == "..." || core == "…" || core == "etc..." {
        return true;
    }
    let dots = t.contains("...") || t.contains('…');
    dots && [
        "rest",
        "unchanged",
        "remaining",
        "omitted",
        "truncated",
        "same as",
        "as before",
    ]
    .iter()
    .any(|w| t.contains(w))
}

/// The deepest nesting of lists and objects a value may have: what `serde_json` parses.
pub(crate) const MAX_DEPTH: usize = 128;

/// Rejects a value nested deeper than [`MAX_DEPTH`] (measured without recursion, so any value
/// can be measured).
pub(crate) fn check_depth(value: &Value) -> Result<(), String> {
    let mut stack = vec![(value, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        if depth >= MAX_DEPTH {
            return Err(format!(
                "the value is nested more than {MAX_DEPTH} lists or objects deep; give a flatter value"
            ));
        }
        stack.extend(children.map(|c| (c, depth + 1)));
    }
    Ok(())
}

/// What kind of JSON `value` is, for a message.
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// `text` cut to `max` characters.
pub(crate) fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_fence_around_the_whole_text_is_stripped() {
        assert_eq!(
            strip_fence("```python\nprint('hi')\n```").as_deref(),
            Some("print('hi')")
        );
        assert_eq!(
            strip_fence("\n  ```\na\n\nb\n```\n").as_deref(),
            Some("a\n\nb")
        );
        assert_eq!(strip_fence("~~~md\n# T\n~~~").as_deref(), Some("# T"));
        assert_eq!(strip_fence("````\nx\n````").as_deref(), Some("x"));
        assert_eq!(strip_fence("```\n```").as_deref(), Some(""));
    }

    #[test]
    fn text_that_is_not_fenced_as_a_whole_is_kept() {
        for text in [
            "plain text",
            "intro\n```\ncode\n```",
            "```\na\n```\nmiddle\n```\nb\n```",
            "```\nunclosed",
            "```",
            "``` x ```",
            "",
            "ü```\n```",
        ] {
            assert_eq!(strip_fence(text), None, "{text:?}");
        }
    }

    #[test]
    fn gen_raw_drops_contentless_list_elements() {
        assert_eq!(
            raw(json!([
                "a",
                "",
                "  ",
                null,
                [],
                {},
                "```\nb\n```",
                0,
                false
            ])),
            json!(["a", "b", 0, false])
        );
        assert_eq!(raw(json!("```\nx\n```")), json!("x"));
        assert_eq!(raw(json!({"a": ""})), json!({"a": ""}));
    }

    #[test]
    fn a_choice_is_matched_exactly_then_loosely_and_never_guessed() {
        let choices = vec!["merge".to_owned(), "split".to_owned(), "Split".to_owned()];
        assert_eq!(choose(json!("merge"), &choices), Ok(json!("merge")));
        assert_eq!(choose(json!(" `merge`. "), &choices), Ok(json!("merge")));
        assert_eq!(choose(json!("MERGE"), &choices), Ok(json!("merge")));
        assert_eq!(choose(json!("Split"), &choices), Ok(json!("Split")));
        // Two members fold to `SPLIT`: ambiguous, so rejected.
        let err = choose(json!("SPLIT"), &choices).unwrap_err();
        assert!(err.contains("`merge`, `split`, `Split`"), "{err}");
        assert!(choose(json!("rotate"), &choices).is_err());
        let err = choose(json!(3), &choices).unwrap_err();
        assert!(err.contains("not a number"), "{err}");
        let long = "é".repeat(10_000);
        assert!(choose(json!(long), &choices).unwrap_err().len() < 400);
    }

    #[test]
    fn an_edit_that_drops_most_of_the_prior_is_rejected() {
        let prior = json!("line of the plan\n".repeat(20));
        let cut = json!("line of the plan\n".repeat(6));
        let err = check_edit(&prior, &cut).unwrap_err();
        assert!(err.contains("less than half"), "{err}");
        let kept = json!("line of the plan, revised\n".repeat(18));
        assert_eq!(check_edit(&prior, &kept), Ok(()));
        assert!(check_edit(&prior, &json!("   ")).is_err());
        // Short priors are free to shrink; an empty prior accepts anything.
        assert_eq!(
            check_edit(&json!("a long-ish title"), &json!("title")),
            Ok(())
        );
        assert_eq!(check_edit(&json!(""), &json!("anything")), Ok(()));
        assert!(check_edit(&json!("x"), &json!("")).is_err());
    }

    #[test]
    fn values_nested_past_the_limit_are_rejected() {
        let nest = |n: usize| (0..n).fold(json!(0), |acc, _| json!([acc]));
        assert_eq!(check_depth(&nest(MAX_DEPTH)), Ok(()));
        let err = check_depth(&nest(MAX_DEPTH + 1)).unwrap_err();
        assert!(err.contains("nested more than 128"), "{err}");
        assert_eq!(check_depth(&json!({"a": [{"b": 1}]})), Ok(()));
    }

    #[test]
    fn an_edit_of_a_list_or_object_is_sized_in_elements_or_json() {
        let prior = json!(["a", "b", "c", "d", "e", "f"]);
        assert!(check_edit(&prior, &json!(["a", "b"])).is_err());
        assert_eq!(check_edit(&prior, &json!(["a", "b", "c", "x"])), Ok(()));
        assert_eq!(check_edit(&json!(["a", "b"]), &json!(["a"])), Ok(()));
        let obj = json!({"summary": "s".repeat(100), "title": "t"});
        assert!(check_edit(&obj, &json!({"summary": "", "title": "t"})).is_err());
        assert_eq!(
            check_edit(&obj, &json!({"summary": "u".repeat(90), "title": "t2"})),
            Ok(())
        );
    }

    #[test]
    fn an_edit_that_elides_with_a_placeholder_is_rejected() {
        let prior = json!("fn a() {}\nfn b() {}\nfn c() {}\n");
        for marker in [
            "// ... rest unchanged ...",
            "...",
            "[…]",
            "# ... (remaining functions omitted)",
            "<!-- ... same as before ... -->",
        ] {
            let revised = json!(format!("fn a() {{ x }}\n{marker}\n"));
            let err = check_edit(&prior, &revised).unwrap_err();
            assert!(err.contains("placeholder"), "{marker}: {err}");
        }
        // A placeholder the prior already had is content, not an elision.
        let with_dots = json!("step one\n...\nstep two\n");
        assert_eq!(
            check_edit(&with_dots, &json!("step one, done\n...\nstep two\n")),
            Ok(())
        );
        // Words alone are not a placeholder.
        assert_eq!(
            check_edit(
                &prior,
                &json!("fn a() {}\n// the rest is unchanged\nfn b() {}\nfn c() {}")
            ),
            Ok(())
        );
    }
}
