//! The text of a `steps` row: its delta and the results of its effects, written and read here
//! only.
//!
//! A step's row is written at every step, so its text is kept short: every WAL frame a commit
//! writes is a page, and the fewer bytes a row takes, the more rows a leaf page holds and the
//! fewer commits start a new one (which rewrites its parent and the header's page too).
//!
//! - **The delta** (`delta`) is the [`StepCommit`] as JSON without what the row's columns say
//!   already — the step count and the instruction — and without a usage of zero (a usage is
//!   the run's total after the step: zero means none yet). A delta that names its step or
//!   instruction is refused.
//! - **The results** (`effects`) are a JSON array of one array per effect, its `effects`
//!   table row in column order: `[step, path, index, kind, instruction, name, idempotency,
//!   request, result]`, the request digest (a JSON object's text) embedded as JSON rather than
//!   as a string of it.

use super::RawEffect;
use crate::journal::{Effect, Json, Spend, StepCommit};
use serde::Serialize;
use serde_json::value::RawValue;
use std::io::Write;

/// A [`StepCommit`] as its row's `delta` holds it: every field but those the row's columns
/// hold, the usage only when it is not zero.
#[derive(Serialize)]
struct Delta<'a> {
    cursor: usize,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    written: &'a [(String, Json)],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    supplied: &'a [(String, Json)],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    loops: &'a [(usize, i64)],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    deviations: &'a [(String, String, String)],
    #[serde(skip_serializing_if = "Option::is_none")]
    unrouted: &'a Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    branches: &'a Option<Vec<(usize, usize)>>,
    #[serde(skip_serializing_if = "is_zero")]
    usage: (u64, u64, u64, u64),
    #[serde(skip_serializing_if = "Spend::is_none")]
    spend: Spend,
    #[serde(skip_serializing_if = "is_zero_count")]
    sub_steps: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    time: Option<(u64, u64)>,
}

fn is_zero(usage: &(u64, u64, u64, u64)) -> bool {
    *usage == (0, 0, 0, 0)
}

fn is_zero_count(n: &u64) -> bool {
    *n == 0
}

/// The `delta` text of `commit`.
pub(super) fn delta(commit: &StepCommit) -> String {
    // Every field named: a field added to `StepCommit` does not compile here until the row
    // holds it too.
    let StepCommit {
        step: _,
        instruction: _,
        cursor,
        written,
        supplied,
        loops,
        deviations,
        unrouted,
        branches,
        usage,
        spend,
        sub_steps,
        time,
    } = commit;
    let row = Delta {
        cursor: *cursor,
        written,
        supplied,
        loops,
        deviations,
        unrouted,
        branches,
        usage: *usage,
        spend: *spend,
        sub_steps: *sub_steps,
        time: *time,
    };
    // A struct of strings, numbers and JSON values: serializing it cannot fail.
    serde_json::to_string(&row).unwrap_or_default()
}

/// The commit a row's `delta` text records, the row saying it is step `step` of
/// `instruction`: an error says what is wrong with it (not JSON, not a commit, or a delta
/// naming a step or instruction, which only the row's columns hold).
pub(super) fn read_delta(text: &str, step: u64, instruction: &str) -> Result<StepCommit, String> {
    let mut fields: serde_json::Map<String, Json> =
        serde_json::from_str(text).map_err(|e| e.to_string())?;
    if let Some(k) = ["step", "instruction"]
        .into_iter()
        .find(|k| fields.contains_key(*k))
    {
        return Err(format!(
            "its delta names its `{k}`, which only the row's columns hold"
        ));
    }
    fields.insert("step".into(), step.into());
    fields.insert("instruction".into(), instruction.into());
    serde_json::from_value(Json::Object(fields)).map_err(|e| e.to_string())
}

/// The `effects` text of a step's row holding `results`, each an effect and its result's JSON
/// text (`None`: it holds none).
pub(super) fn embed<'a>(
    results: impl IntoIterator<Item = (&'a Effect, &'a str)>,
) -> Option<String> {
    let mut out = Vec::with_capacity(160);
    for (e, result) in results {
        out.push(if out.is_empty() { b'[' } else { b',' });
        // Writing into a vector cannot fail.
        let _ = write!(out, "[{},", e.key.step);
        push_str(&mut out, &e.key.path);
        let _ = write!(out, ",{},\"{}\",", e.key.index, e.kind.as_str());
        push_str(&mut out, &e.instruction);
        out.push(b',');
        push_str(&mut out, &e.name);
        let _ = write!(out, ",\"{}\",", e.idempotency.as_str());
        match e.request.as_deref() {
            None => out.extend_from_slice(b"null"),
            // A digest (a JSON object's text) is kept as it is; anything else as a string.
            Some(q) if is_object(q) => out.extend_from_slice(q.as_bytes()),
            Some(q) => push_str(&mut out, q),
        }
        out.push(b',');
        out.extend_from_slice(result.as_bytes());
        out.push(b']');
    }
    if out.is_empty() {
        return None;
    }
    out.push(b']');
    // Made of UTF-8 text and JSON (which `serde_json` writes as UTF-8).
    String::from_utf8(out).ok()
}

/// Appends `s` as a JSON string.
fn push_str(out: &mut Vec<u8>, s: &str) {
    // Writing a string into a vector cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

/// Whether `text` is a JSON object, exactly (what a row may hold as it is).
fn is_object(text: &str) -> bool {
    text.starts_with('{') && serde_json::from_str::<&RawValue>(text).is_ok()
}

/// The effects a row's `effects` text holds, each as its `effects` table row would be: an
/// error says why the text is not what this build writes.
pub(super) fn read_embedded(text: &str) -> Result<Vec<RawEffect>, String> {
    let items: Vec<&RawValue> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    items
        .into_iter()
        .map(|item| {
            type Item<'a> = (
                u64,
                String,
                u32,
                String,
                String,
                String,
                String,
                &'a RawValue,
                &'a RawValue,
            );
            let (step, path, index, kind, instruction, name, idem, request, result): Item<'_> =
                serde_json::from_str(item.get()).map_err(|e| e.to_string())?;
            let request = match request.get() {
                "null" => None,
                q if q.starts_with('"') => {
                    Some(serde_json::from_str::<String>(q).map_err(|e| e.to_string())?)
                }
                q => Some(q.to_owned()),
            };
            Ok((
                step,
                path,
                index,
                kind,
                instruction,
                name,
                idem,
                request,
                Some(result.get().to_owned()),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{EffectKey, EffectKind, Idempotency};

    fn effect(path: &str, instruction: &str, request: Option<&str>) -> Effect {
        Effect {
            key: EffectKey {
                step: 7,
                path: path.into(),
                index: 2,
            },
            kind: EffectKind::Tool,
            instruction: instruction.into(),
            name: "send".into(),
            idempotency: Idempotency::Once,
            request: request.map(str::to_owned),
        }
    }

    /// Reads embedded effects back as effects and results.
    fn read_back(text: &str) -> Vec<(Effect, Json)> {
        read_embedded(text)
            .unwrap()
            .into_iter()
            .map(|raw| {
                let row = super::super::parse_effect("r", raw, |k| k.to_string()).unwrap();
                (row.effect, row.result.unwrap())
            })
            .collect()
    }

    #[test]
    fn a_commit_reads_back_as_it_was_written_without_what_its_columns_say() {
        let commit = StepCommit {
            step: 12,
            instruction: "draft".into(),
            cursor: 3,
            written: vec![("text".into(), Json::String("a \"quoted\" ✓".into()))],
            supplied: vec![("answer".into(), Json::Bool(true))],
            loops: vec![(2, 5)],
            deviations: vec![("s".into(), "a".into(), "b".into())],
            unrouted: Some(serde_json::json!([{"x": 1}])),
            branches: Some(vec![(1, 2)]),
            usage: (10, 20, 3, 1),
            spend: Spend {
                cost: Some(0.0125),
                unpriced_slots: 1,
                failovers: 2,
            },
            sub_steps: 3,
            time: Some((1_700_000_000_000, 42)),
        };
        let text = delta(&commit);
        assert!(
            !text.contains("\"step\"") && !text.contains("draft"),
            "{text}"
        );
        assert_eq!(read_delta(&text, 12, "draft").unwrap(), commit);
        // A usage of zero is left out, and read as zero.
        let quiet = StepCommit {
            step: 1,
            instruction: "a".into(),
            ..StepCommit::default()
        };
        let text = delta(&quiet);
        assert_eq!(text, r#"{"cursor":0}"#);
        assert_eq!(read_delta(&text, 1, "a").unwrap(), quiet);
    }

    #[test]
    fn a_delta_naming_its_step_or_instruction_is_refused() {
        for (text, says) in [
            (r#"{"step":4,"instruction":"judge","cursor":1}"#, "`step`"),
            (r#"{"instruction":"judge","cursor":1}"#, "`instruction`"),
        ] {
            let e = read_delta(text, 4, "judge").unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
        assert!(read_delta("[1]", 4, "judge").is_err());
        assert!(read_delta(r#"{"cursor":"x"}"#, 4, "judge").is_err());
    }

    #[test]
    fn effects_read_back_exactly_whatever_their_names_and_requests_hold() {
        let digest = r#"{"h":"295a669d093e48718d945dc573b6c06d","arg.n":"5a0b83e1"}"#;
        // Names and requests a hostile program or caller could choose: JSON of their own, a
        // request that looks like an object and is not one, text that closes the array.
        let effects = [
            effect("", "work", Some(digest)),
            effect("s3/c", "a\"],[1,\"x", Some(r#"{"h":"1"} trailing"#)),
            effect("", "✓ \\ \n", Some("bare-hash")),
            effect("", "none", None),
        ];
        let results = [
            r#"{"ok":2501}"#,
            "null",
            r#"{"err":{"kind":"failed"}}"#,
            "[]",
        ];
        let text = embed(effects.iter().zip(results)).unwrap();
        // The digest is kept as JSON, not as a string of it.
        assert!(text.contains(digest), "{text}");
        let back = read_back(&text);
        assert_eq!(back.len(), 4);
        for ((e, r), (effect, result)) in back.iter().zip(effects.iter().zip(results)) {
            assert_eq!(e, effect);
            assert_eq!(r, &serde_json::from_str::<Json>(result).unwrap());
        }
        assert_eq!(embed([]), None);
    }

    #[test]
    fn effects_of_another_shape_are_refused() {
        // `[effect, result]` pairs, the effect an object, as an unreleased schema wrote them.
        let e = effect("s1", "work", Some(r#"{"h":"ab"}"#));
        let pair = format!("[[{},{{\"ok\":1}}]]", serde_json::to_string(&e).unwrap());
        for bad in [
            &pair[..],
            "[[oops",
            "[[1,2]]",
            r#"[[{"key":1},null]]"#,
            "{}",
        ] {
            assert!(read_embedded(bad).is_err(), "{bad}");
        }
    }
}
