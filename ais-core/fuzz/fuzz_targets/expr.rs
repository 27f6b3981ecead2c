//! Parses arbitrary text as an expression; whatever parses must print and parse back to the
//! same tree, and must check, compile and evaluate (typed and untyped) without panicking.
#![no_main]

use ais_core::{Type, Value};
use ais_core::expr::{self, Limits, TypeEnv};
use indexmap::IndexMap;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

struct Fixture {
    typed: TypeEnv,
    untyped: TypeEnv,
    carries: IndexMap<String, Value>,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let json = r#"{
            "s": "a,b, c", "n": 3, "f": 2.5, "b": true, "z": null,
            "xs": ["x", "y", "x"], "ns": [3, 1, 2], "d": {"k": 1, "j": [true]},
            "o": {"ok": false, "error": "boom", "output": "", "value": 7},
            "op": "merge", "u": [1, "two", 3.0, null, {"a": []}]
        }"#;
        let carries = match Value::from_json(&serde_json::from_str(json).unwrap()) {
            Value::Map(m) => m,
            _ => unreachable!(),
        };
        let mut typed = TypeEnv::new();
        typed.add_enum("Op", ["merge".to_owned(), "split".to_owned()]);
        for (name, ty) in [
            ("s", "str"),
            ("n", "int"),
            ("f", "float"),
            ("b", "bool"),
            ("z", "int"),
            ("xs", "list[str]"),
            ("ns", "list[int]"),
            ("d", "dict"),
            ("o", "outcome"),
            ("op", "Op"),
            ("u", "any"),
        ] {
            typed.add_carry(name, &Type::parse(ty));
        }
        let mut untyped = TypeEnv::new();
        for name in carries.keys() {
            untyped.add_carry(name.as_str(), &Type::Any);
        }
        Fixture {
            typed,
            untyped,
            carries,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let limits = Limits::default();
    let Ok(tree) = expr::parse(src, &limits) else {
        return;
    };
    let printed = tree.to_string();
    match expr::parse(&printed, &limits) {
        Ok(again) => assert_eq!(
            again.without_positions(),
            tree.without_positions(),
            "{src:?} printed as {printed:?}"
        ),
        // Printing may add parentheses, which can cross a nesting or token limit.
        Err(e) => assert_eq!(
            e.category,
            expr::Category::LimitError,
            "{src:?} printed as {printed:?}: {e:?}"
        ),
    }
    let f = fixture();
    for env in [&f.typed, &f.untyped] {
        if let Ok(compiled) = expr::compile(&tree, env, &limits) {
            let _ = compiled.eval(&f.carries);
            let _ = compiled.eval_bool(&f.carries);
        }
    }
});
