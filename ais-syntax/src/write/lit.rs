//! The writer's lexical pieces: names, string and value literals, doc comments, and AIS types
//! as the Rust types a tool's parameters are written in.

use ais_core::{Type, Value};

/// Whether `text` is a plain Rust identifier (no keyword, no raw `r#`): what the DSL's carry,
/// instruction, tool and knowledge names are parsed as.
pub(super) fn is_ident(text: &str) -> bool {
    syn::parse_str::<syn::Ident>(text).is_ok()
}

/// Whether `text` is an identifier or a keyword (`type`, `match`): what a struct field, an
/// enum member or an obligation's word is parsed as.
pub(super) fn is_any_ident(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && text != "_"
}

/// A word the DSL reads with its word parser (`step`, `fan-out`): identifiers joined by `-`,
/// written bare, anything else as a string literal.
pub(super) fn word(text: &str) -> String {
    if !text.is_empty() && text.split('-').all(is_any_ident) {
        text.to_owned()
    } else {
        string(text)
    }
}

/// A string literal whose value is `text`: a raw string when the text spans lines (so a body
/// or a long note reads as written), else an escaped one.
pub(super) fn string(text: &str) -> String {
    if text.contains('\n') && !text.contains('\r') {
        let mut hashes = String::from("#");
        while text.contains(&format!("\"{hashes}")) {
            hashes.push('#');
        }
        format!("r{hashes}\"{text}\"{hashes}")
    } else {
        format!("{text:?}")
    }
}

/// A literal value as the DSL's value parser reads it back; `Err` names what has no literal.
pub(super) fn value(v: &Value) -> Result<String, String> {
    Ok(match v {
        Value::Null => "None".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) if *i == i64::MIN => {
            return Err(format!("the integer {i} has no literal in the DSL"));
        }
        Value::Int(i) => i.to_string(),
        Value::Float(f) if !f.is_finite() => {
            return Err(format!("the number {f} has no literal in the DSL"));
        }
        Value::Float(f) => {
            let text = format!("{f:?}");
            if text.contains(['.', 'e']) {
                text
            } else {
                format!("{text}.0")
            }
        }
        Value::Str(s) => string(s),
        Value::List(items) => {
            let items: Result<Vec<String>, String> = items.iter().map(value).collect();
            format!("[{}]", items?.join(", "))
        }
        Value::Map(map) => {
            let entries: Result<Vec<String>, String> = map
                .iter()
                .map(|(k, v)| Ok(format!("{}: {}", string(k), value(v)?)))
                .collect();
            format!("{{{}}}", entries?.join(", "))
        }
    })
}

/// The width a `///` line is wrapped at, indentation included.
const WIDTH: usize = 100;

/// A doc comment reading back as `text`, at `indent`: `///` lines when every paragraph is one
/// line of single spaces (wrapped at [`WIDTH`]), else one `#[doc = ".."]` (which keeps the
/// line breaks and indentation inside a paragraph).
pub(super) fn doc(text: &str, indent: &str) -> String {
    let plain = !text.is_empty()
        && text.split("\n\n").all(|p| {
            !p.is_empty()
                && !p.contains('\n')
                && !p.contains("  ")
                && p.trim() == p
                && !p.contains(|c: char| c.is_whitespace() && c != ' ')
        });
    let edges_clean = text.trim() == text;
    if !plain || !edges_clean {
        return format!("{indent}#[doc = {}]\n", string(text));
    }
    let mut out = String::new();
    for (i, paragraph) in text.split("\n\n").enumerate() {
        if i > 0 {
            out.push_str(&format!("{indent}///\n"));
        }
        let mut line = String::new();
        for w in paragraph.split(' ') {
            if !line.is_empty() && indent.len() + 4 + line.len() + 1 + w.len() > WIDTH {
                out.push_str(&format!("{indent}/// {line}\n"));
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(w);
        }
        out.push_str(&format!("{indent}/// {line}\n"));
    }
    out
}

/// The Rust type a tool parameter of AIS type `ty` is written with (`owned` for a result),
/// read back by [`crate::rust_types`] as `ty`; `Err` says why there is none.
pub(super) fn rust_type(ty: &Type, owned: bool, declared: &[String]) -> Result<String, String> {
    Ok(match ty {
        Type::Str if owned => "String".to_owned(),
        Type::Str => "&str".to_owned(),
        Type::Int => "i64".to_owned(),
        Type::Float => "f64".to_owned(),
        Type::Bool => "bool".to_owned(),
        Type::Any => "ais::Value".to_owned(),
        Type::Path if owned => "std::path::PathBuf".to_owned(),
        Type::Path => "&std::path::Path".to_owned(),
        Type::List(None) => "Vec<ais::Value>".to_owned(),
        Type::List(Some(t)) => format!("Vec<{}>", rust_type(t, true, declared)?),
        Type::Dict(None) => "serde_json::Map<String, ais::Value>".to_owned(),
        Type::Dict(Some(v)) => format!(
            "std::collections::HashMap<String, {}>",
            rust_type(v, true, declared)?
        ),
        Type::Named(n) if n == "outcome" => "ais::OutcomeValue".to_owned(),
        Type::Named(n) if declared.contains(n) => n.clone(),
        Type::Named(n) => return Err(format!("the type `{n}` is not declared")),
        Type::Invalid(t) => return Err(format!("`{t}` is not a type")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_read_back_as_written() {
        for text in [
            "plain",
            "a \"quote\"\\",
            "two\nlines \"# and \"## hashes",
            "tab\there",
        ] {
            let lit: syn::LitStr = syn::parse_str(&string(text)).unwrap();
            assert_eq!(lit.value(), text);
        }
    }

    #[test]
    fn docs_wrap_paragraphs_and_keep_line_breaks_in_an_attribute() {
        let long = "word ".repeat(40);
        let out = doc(long.trim(), "    ");
        assert!(out.lines().all(|l| l.len() <= WIDTH), "{out}");
        assert!(doc("a\n  b", "").starts_with("#[doc = "));
        assert_eq!(doc("One.\n\nTwo.", ""), "/// One.\n///\n/// Two.\n");
    }

    #[test]
    fn lists_become_vecs_of_owned_types() {
        let t = Type::parse("list[dict[str, path]]");
        assert_eq!(
            rust_type(&t, false, &[]).unwrap(),
            "Vec<std::collections::HashMap<String, std::path::PathBuf>>"
        );
        assert!(rust_type(&Type::parse("Verdict"), false, &[]).is_err());
    }
}
