//! The words a DSL item accepts, listed and offered back when an author writes one that is
//! none of them: one wording for every "unknown …" error of the front end, with the shared
//! did-you-mean of the core ([`ais_core::did_you_mean`]).

/// `words` as prose: `` `a`, `b` or `c` `` (`` `a` `` alone).
pub(crate) fn one_of(words: &[&str]) -> String {
    let list: Vec<String> = words.iter().map(|w| format!("`{w}`")).collect();
    match list.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// `message`, ending with `; did you mean `x`?` when one of `allowed` is close to `got`.
pub(crate) fn suggest(message: String, got: &str, allowed: &[&str]) -> String {
    match ais_core::did_you_mean(got, allowed.iter().copied()).first() {
        Some(close) => format!("{message}; did you mean `{close}`?"),
        None => message,
    }
}

/// ``unknown {what} `{got}`; expected `a`, `b` or `c` `` and the closest allowed word.
pub(crate) fn unknown(what: &str, got: &str, allowed: &[&str]) -> String {
    suggest(
        format!("unknown {what} `{got}`; expected {}", one_of(allowed)),
        got,
        allowed,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_close_word_is_offered_after_the_list() {
        assert_eq!(
            unknown("obligation field", "cohesian", &["kind", "cohesion"]),
            "unknown obligation field `cohesian`; expected `kind` or `cohesion`; did you mean `cohesion`?"
        );
    }

    #[test]
    fn a_word_close_to_nothing_gets_the_list_alone() {
        assert_eq!(
            unknown("MCP server field", "zzz", &["command", "url"]),
            "unknown MCP server field `zzz`; expected `command` or `url`"
        );
        assert_eq!(one_of(&["url"]), "`url`");
    }
}
