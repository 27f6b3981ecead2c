//! Write-back (spec §2.3 step 4): a result, assigned across an instruction's `writes`.

use crate::program::Type;
use crate::sig::Return;
use crate::value::Value;

/// Recovers the value of each carry in `writes` from `result`, the value an instruction
/// produced, whose declared shape is `ret` (the tool signature's result, resolved with
/// [`Return::resolved`]; [`Return::None`] when there is no signature, as for a slot).
///
/// One entry per carry of `writes`, in order; `None` means the carry could not be recovered
/// and keeps its current value (its default).
///
/// - **One write, single result** (`writes` has one carry and `ret` is not a tuple of two or
///   more names): `writes[0]` receives the whole result.
/// - **Several writes, or a multi-name result** (`-> (errors, ok)`): the result is taken apart.
///   Each carry is recovered **by field name** — the entry of a map result with the carry's
///   name — **then by position**: for a list result, the element at the carry's index among the
///   declared result names (else at its index in `writes`); for a map result of a declared
///   multi-name signature, the entry named by the declared name at the carry's index, else the
///   entry at that index. `writes[0]` always receives something: its component when one is
///   found, else the whole result (§2.3: "the result is assigned to `writes[0]`"), so a slot
///   writing `[plan, title]` puts the whole plan in `plan` and its `title` field in `title`.
/// - A list is a tuple of components unless `ret` declares a list type (`-> list`): then it is
///   one value, and the carries after the first are recovered only by name (never).
///
/// An explicit `null` component is recovered as `Some(Value::Null)`.
///
/// ```
/// use ais_core::bind::recover_writes;
/// use ais_core::sig::parse;
/// use ais_core::Value;
///
/// let writes = ["errors".to_string(), "ok".to_string()];
/// let ret = parse("(task) -> (errors, ok)").unwrap().ret;
/// let result = Value::List(vec!["".into(), true.into()]);
/// assert_eq!(recover_writes(&writes, &result, &ret), [Some("".into()), Some(true.into())]);
/// ```
pub fn recover_writes(writes: &[String], result: &Value, ret: &Return) -> Vec<Option<Value>> {
    let multi = writes.len() >= 2 || ret.is_multi();
    if !multi {
        return writes.iter().map(|_| Some(result.clone())).collect();
    }
    let names: &[String] = if ret.is_multi() { ret.names() } else { &[] };
    let list_is_tuple = !matches!(ret, Return::Type(Type::List(_)));
    writes
        .iter()
        .enumerate()
        .map(|(k, w)| {
            let component = match result {
                Value::Map(m) => m.get(w).or_else(|| {
                    if names.is_empty() {
                        None
                    } else {
                        names
                            .get(k)
                            .and_then(|n| m.get(n))
                            .or_else(|| m.get_index(k).map(|(_, v)| v))
                    }
                }),
                Value::List(items) if list_is_tuple => {
                    let at = names.iter().position(|n| n == w).unwrap_or(k);
                    items.get(at)
                }
                _ => None,
            };
            match component {
                Some(v) => Some(v.clone()),
                None if k == 0 => Some(result.clone()),
                None => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sig::parse;

    fn w(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }
    fn json(s: &str) -> Value {
        Value::from_json(&serde_json::from_str(s).unwrap())
    }
    fn ret(sig: &str) -> Return {
        parse(sig).unwrap().ret
    }

    #[test]
    fn a_single_write_takes_the_whole_result() {
        let r = json(r#"{"a": 1}"#);
        assert_eq!(
            recover_writes(&w(&["x"]), &r, &ret("(t) -> dict")),
            [Some(r.clone())]
        );
        assert_eq!(
            recover_writes(&w(&["x"]), &r, &Return::None),
            [Some(r.clone())]
        );
        // `(round) -> round`: a one-name tuple is one value.
        let r = Value::Int(2);
        assert_eq!(
            recover_writes(&w(&["round"]), &r, &ret("(round) -> round")),
            [Some(r)]
        );
        assert!(recover_writes(&[], &Value::Null, &Return::None).is_empty());
    }

    #[test]
    fn a_declared_tuple_is_recovered_by_name_from_a_map() {
        // MULTI_WRITE_IR: `(sentence) -> (verdict_report, ok)` returning a dict.
        let r = json(r#"{"verdict_report": "words ok", "ok": true}"#);
        let got = recover_writes(
            &w(&["verdict_report", "ok"]),
            &r,
            &ret("(sentence: str) -> (verdict_report, ok)"),
        );
        assert_eq!(got, [Some("words ok".into()), Some(true.into())]);
    }

    #[test]
    fn a_declared_tuple_is_recovered_by_position_from_a_list() {
        // BUDGET_ROUTE_IR's check_it returns `"", True`; REPAIR_IR's run_checks six bools.
        let r = json(r#"["", true]"#);
        let got = recover_writes(&w(&["errors", "ok"]), &r, &ret("(task) -> (errors,ok)"));
        assert_eq!(got, [Some("".into()), Some(true.into())]);
        let r = json("[true, true, false, false, false, false]");
        let six = w(&["c1", "c2", "c3", "c4", "c5", "c6"]);
        let got = recover_writes(&six, &r, &ret("(answer) -> (c1,c2,c3,c4,c5,c6)"));
        assert_eq!(got[1], Some(true.into()));
        assert_eq!(got[5], Some(false.into()));
        // Writes in another order than the declared names follow the names.
        let got = recover_writes(
            &w(&["ok", "errors"]),
            &json(r#"["e", false]"#),
            &ret("(t) -> (errors, ok)"),
        );
        assert_eq!(got, [Some(false.into()), Some("e".into())]);
        // A short list leaves the missing carries at their defaults.
        let got = recover_writes(&w(&["a", "b", "c"]), &json("[1]"), &ret("(t) -> (a, b, c)"));
        assert_eq!(got, [Some(Value::Int(1)), None, None]);
    }

    #[test]
    fn a_declared_tuple_returned_as_a_map_with_other_keys_goes_by_position() {
        let r = json(r#"{"report": "r", "status": "s"}"#);
        let got = recover_writes(&w(&["rep", "st"]), &r, &ret("(t) -> (report, status)"));
        assert_eq!(got, [Some("r".into()), Some("s".into())]);
        let r = json(r#"{"x": 1, "y": 2}"#);
        let got = recover_writes(&w(&["a", "b"]), &r, &ret("(t) -> (a, b)"));
        assert_eq!(got, [Some(Value::Int(1)), Some(Value::Int(2))]);
    }

    #[test]
    fn several_writes_of_a_dict_result_are_recovered_by_field_name() {
        // CARRY_IR: `(task) -> dict` returning {"bundle": {...}, "rounds": 1}.
        let r = json(r#"{"bundle": {"n": 1}, "rounds": 1}"#);
        let got = recover_writes(&w(&["bundle", "rounds"]), &r, &ret("(task) -> dict"));
        assert_eq!(got, [Some(json(r#"{"n": 1}"#)), Some(Value::Int(1))]);
    }

    #[test]
    fn a_slot_writing_several_carries_keeps_the_whole_result_in_the_first() {
        // MULTIWRITE_IR: a GEN-FILL writing [choice, chosen_file, note].
        let r = json(r#"{"chosen_file": "a.txt", "note": "n", "why": "w"}"#);
        let got = recover_writes(
            &w(&["choice", "chosen_file", "note", "missing"]),
            &r,
            &Return::None,
        );
        assert_eq!(got[0], Some(r.clone()));
        assert_eq!(got[1], Some("a.txt".into()));
        assert_eq!(got[2], Some("n".into()));
        assert_eq!(got[3], None);
    }

    #[test]
    fn a_declared_list_is_one_value() {
        let r = json("[1, 2]");
        let got = recover_writes(&w(&["rows", "count"]), &r, &ret("(p) -> list"));
        assert_eq!(got, [Some(r), None]);
        // Without that declaration a list is a tuple.
        let got = recover_writes(&w(&["a", "b"]), &json("[1, 2]"), &Return::None);
        assert_eq!(got, [Some(Value::Int(1)), Some(Value::Int(2))]);
    }

    #[test]
    fn a_scalar_result_fills_only_the_first_carry() {
        let got = recover_writes(&w(&["a", "b"]), &Value::Int(3), &ret("(t) -> (a, b)"));
        assert_eq!(got, [Some(Value::Int(3)), None]);
        let got = recover_writes(&w(&["a"]), &Value::Null, &ret("(t) -> (a, b)"));
        assert_eq!(got, [Some(Value::Null)]);
        let got = recover_writes(&w(&["a", "b"]), &json(r#"{"b": null}"#), &Return::None);
        assert_eq!(got[1], Some(Value::Null));
    }
}
