//! Every host-set limit is hit, and each is a `limit_error` (never a hang or an OOM).

use ais_core::expr::{self, BinOp, Category, Expr, ExprError, ExprKind, Limits, TypeEnv};
use ais_core::{Pos, Type, Value};
use indexmap::IndexMap;

fn env() -> TypeEnv {
    let mut env = TypeEnv::new();
    for (name, ty) in [
        ("s", "str"),
        ("xs", "list[str]"),
        ("ns", "list[int]"),
        ("u", "any"),
    ] {
        env.add_carry(name, &Type::parse(ty));
    }
    env
}

fn carries(s_len: usize, xs_len: usize) -> IndexMap<String, Value> {
    let mut m = IndexMap::new();
    m.insert("s".to_owned(), Value::Str("ab".repeat(s_len / 2)));
    m.insert(
        "xs".to_owned(),
        Value::List(
            (0..xs_len)
                .map(|i| Value::Str(format!("item{i}")))
                .collect(),
        ),
    );
    m.insert(
        "ns".to_owned(),
        Value::List((0..xs_len as i64).rev().map(Value::Int).collect()),
    );
    m
}

fn run(src: &str, limits: &Limits, values: &IndexMap<String, Value>) -> Result<Value, ExprError> {
    expr::compile_str(src, &env(), limits)?.eval(values)
}

fn limit_error(r: Result<Value, ExprError>, needle: &str) {
    match r {
        Err(e) => {
            assert_eq!(e.category, Category::LimitError, "{}", e.message);
            assert!(
                e.message.contains(needle),
                "{:?} lacks {needle:?}",
                e.message
            );
        }
        Ok(v) => panic!("no limit hit; got a value of kind {}", v.kind_name()),
    }
}

#[test]
fn source_bytes() {
    let limits = Limits {
        max_source_bytes: 16,
        ..Limits::default()
    };
    let values = carries(0, 0);
    assert!(run("s == \"abcdefghi\"", &limits, &values).is_ok());
    limit_error(run("s == \"abcdefghij\"", &limits, &values), "bytes");
}

#[test]
fn identifier_length() {
    let limits = Limits::default();
    let long = "a".repeat(limits.max_identifier_bytes + 1);
    limit_error(run(&long, &limits, &carries(0, 0)), "identifier");
    let ok = "a".repeat(limits.max_identifier_bytes);
    let e = run(&ok, &limits, &carries(0, 0)).unwrap_err();
    assert_eq!(e.category, Category::NameError);
}

#[test]
fn nesting_depth_in_the_parser_and_the_checker() {
    let limits = Limits::default();
    let values = carries(0, 0);
    let parens = format!(
        "{}1{}",
        "(".repeat(limits.max_depth + 1),
        ")".repeat(limits.max_depth + 1)
    );
    limit_error(run(&parens, &limits, &values), "nests deeper");
    // A flat chain is one level of nesting, however long; its height has its own bound.
    let chain = vec!["1"; limits.max_depth + 1].join(" + ");
    assert_eq!(run(&chain, &limits, &values), Ok(Value::Int(33)));
    let chain = vec!["1"; limits.max_height + 1].join(" + ");
    limit_error(run(&chain, &limits, &values), "chains more than 1024");
    // A tree built by a host (not parsed) is bounded by the checker.
    let mut e = Expr::new(ExprKind::Int(1), Pos::new(1, 1));
    for _ in 0..(limits.max_depth + 1) {
        e = Expr::new(ExprKind::List(vec![e]), Pos::new(1, 1));
    }
    let err = expr::compile(&e, &env(), &limits).unwrap_err();
    assert_eq!(err.category, Category::LimitError);
    assert!(err.message.contains("nests deeper"), "{}", err.message);
    let one = || Box::new(Expr::new(ExprKind::Int(1), Pos::new(1, 1)));
    let mut e = one();
    for _ in 0..limits.max_height {
        e = Box::new(Expr::new(
            ExprKind::Binary(BinOp::Add, e, one()),
            Pos::new(1, 1),
        ));
    }
    let err = expr::compile(&e, &env(), &limits).unwrap_err();
    assert!(err.message.contains("chains more than"), "{}", err.message);
}

#[test]
fn the_longest_chains_check_print_and_evaluate_on_a_small_stack() {
    // A test thread has a 2 MiB stack; a chain as tall as the limit allows is checked,
    // printed, evaluated, copied and compared in a quarter of that (a debug build's checker
    // frame alone is several KB, so this fails if any pass recurses along the chain on the
    // thread's stack).
    let run_small = |f: fn()| {
        std::thread::Builder::new()
            .stack_size(512 * 1024)
            .spawn(f)
            .unwrap()
            .join()
            .unwrap()
    };
    run_small(|| {
        let limits = Limits::default();
        let n = limits.max_height - 1;
        let sum = vec!["ns[0]"; n].join(" + ");
        let mut values = carries(0, 1);
        values.insert("ns".to_owned(), Value::List(vec![Value::Int(2)]));
        assert_eq!(run(&sum, &limits, &values), Ok(Value::Int(2 * n as i64)));
        // Each operand is three levels tall itself.
        let all = vec!["len(s) == 0"; n - 3].join(" and ");
        assert_eq!(run(&all, &limits, &values), Ok(Value::Bool(true)));
        let parsed = expr::parse(&all, &limits).unwrap();
        assert_eq!(parsed.to_string(), all);
        // Copying, comparing, printing for debugging and dropping the tree are safe too.
        assert_eq!(parsed.names(), ["s"]);
        assert_eq!(
            parsed.without_positions(),
            parsed.clone().without_positions()
        );
        assert!(format!("{parsed:?}").contains("Logic(And"));
        let compiled = expr::compile(&parsed, &env(), &limits).unwrap();
        assert_eq!(compiled.clone(), compiled);
        assert!(format!("{compiled:?}").contains("And("));
    });
}

#[test]
fn tokens() {
    let limits = Limits {
        max_tokens: 10,
        ..Limits::default()
    };
    let values = carries(0, 0);
    assert!(run("[1, 2, 3, 4]", &limits, &values).is_ok());
    limit_error(run("[1, 2, 3, 4, 5]", &limits, &values), "tokens");
}

#[test]
fn operations() {
    let limits = Limits::default();
    // Sorting and searching a big list cost one operation per item (and more).
    let values = carries(0, 300_000);
    limit_error(run("sorted(ns)[0]", &limits, &values), "operations");
    limit_error(run("\"nope\" in xs", &limits, &values), "operations");
    // Every node counts one.
    let tight = Limits {
        max_operations: 5,
        ..Limits::default()
    };
    let small = carries(0, 3);
    assert!(run("len(xs) + 1", &tight, &small).is_ok());
    limit_error(
        run("len(xs) + 1 + 1 + len(xs)", &tight, &small),
        "operations",
    );
}

#[test]
fn allocation() {
    // Copying costs operations too; lift that bound to see the allocation bound.
    let limits = Limits {
        max_operations: u64::MAX,
        ..Limits::default()
    };
    // Copying a big carry into a literal many times is charged, copy by copy.
    let values = carries(1_000_000, 0);
    let src = format!("len([{}])", vec!["s"; 40].join(", "));
    limit_error(run(&src, &limits, &values), "allocated");
}

#[test]
fn string_size() {
    let limits = Limits::default();
    let values = carries(limits.max_string_bytes / 2 + 2, 0);
    assert!(run("len(s)", &limits, &values).is_ok());
    limit_error(run("s + s", &limits, &values), "longer than");
    limit_error(
        run("s.replace(\"a\", \"aaa\")", &limits, &values),
        "longer than",
    );
    limit_error(run("str([s, s])", &limits, &values), "longer than");
    let small = Limits {
        max_string_bytes: 4,
        ..Limits::default()
    };
    limit_error(run("\"abcde\"", &small, &carries(0, 0)), "longer than");
}

#[test]
fn collection_size() {
    let limits = Limits {
        max_collection_len: 100,
        ..Limits::default()
    };
    let values = carries(0, 60);
    assert!(run("len(xs)", &limits, &values).is_ok());
    limit_error(run("len(xs + xs)", &limits, &values), "items");
    limit_error(
        run("len(\" \".join(xs).split(\" \") + xs)", &limits, &values),
        "items",
    );
    let literal = format!("[{}]", vec!["1"; 101].join(", "));
    limit_error(run(&literal, &limits, &values), "items");
}

#[test]
fn value_depth() {
    let mut deep = Value::Int(0);
    for _ in 0..200 {
        deep = Value::List(vec![deep]);
    }
    let mut values = IndexMap::new();
    values.insert("u".to_owned(), deep);
    let limits = Limits::default();
    limit_error(run("u == u", &limits, &values), "nest deeper");
    limit_error(run("str(u)", &limits, &values), "nest deeper");
    // Copying it is fine: copies are charged without recursion.
    assert!(run("[u]", &limits, &values).is_ok());
}

#[test]
fn the_defaults_are_the_documented_ones() {
    let d = Limits::default();
    assert_eq!(d.max_source_bytes, 65_536);
    assert_eq!(d.max_depth, 32);
    assert_eq!(d.max_height, 1_024);
    assert_eq!(d.max_tokens, 8_192);
    assert_eq!(d.max_identifier_bytes, 128);
    assert_eq!(d.max_operations, 200_000);
    assert_eq!(d.max_allocation_bytes, 16 * 1024 * 1024);
    assert_eq!(d.max_string_bytes, 1024 * 1024);
    assert_eq!(d.max_collection_len, 100_000);
}

#[test]
fn constant_folding_shares_one_budget() {
    // Each element folds to a string just under the string bound; together they exceed the
    // allocation bound while the expression is checked, before anything runs.
    let limits = Limits::default();
    let fifteen = ".replace(\"\", \"aaaaaaaaaaaaaaa\")";
    let grow = format!("\"a\"{}.replace(\"\", \"aa\")", fifteen.repeat(4));
    let one = expr::compile_str(&format!("len({grow})"), &env(), &limits)
        .unwrap()
        .eval(&IndexMap::<String, Value>::new())
        .unwrap();
    assert!(matches!(one, Value::Int(n) if n > 200_000), "{one}");
    let many = format!("[{}]", vec![grow.as_str(); 40].join(", "));
    let e = expr::compile_str(&many, &env(), &limits).unwrap_err();
    assert_eq!(e.category, Category::LimitError, "{}", e.message);
}
