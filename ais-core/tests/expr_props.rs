//! Properties of the expression language over generated trees and values:
//! printing then parsing gives the same tree; checking and evaluating never panic; and what
//! type-checks evaluates (when it succeeds) to a value of its static type.

use ais_core::expr::{self, BinOp, Category, Expr, ExprKind, Limits, LogicOp, Ty, TypeEnv, UnOp};
use ais_core::{Pos, Type, Value};
use indexmap::IndexMap;
use proptest::prelude::*;

const NAMES: &[&str] = &[
    "s", "n", "f", "b", "xs", "ns", "d", "o", "op", "u", "nope", "Op",
];
const FIELDS: &[&str] = &["ok", "error", "value", "merge", "split", "k", "lower", "x"];
const FUNCS: &[&str] = &[
    "len", "str", "int", "float", "bool", "abs", "round", "min", "max", "sum", "sorted",
    "reversed", "any", "all", "nope",
];
const METHODS: &[&str] = &[
    "lower",
    "upper",
    "strip",
    "split",
    "join",
    "replace",
    "startswith",
    "find",
    "contains",
    "count",
    "index",
    "keys",
    "values",
    "items",
    "get",
    "isdigit",
    "nope",
];

fn at(kind: ExprKind) -> Expr {
    Expr::new(kind, Pos::new(1, 1))
}

fn pick(list: &'static [&'static str]) -> impl Strategy<Value = String> {
    proptest::sample::select(list).prop_map(str::to_owned)
}

fn leaf() -> impl Strategy<Value = Expr> {
    prop_oneof![
        Just(at(ExprKind::Null)),
        any::<bool>().prop_map(|b| at(ExprKind::Bool(b))),
        any::<i64>().prop_map(|i| at(ExprKind::Int(i))),
        (-3i64..4).prop_map(|i| at(ExprKind::Int(i))),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| at(ExprKind::Float(f))),
        any::<String>().prop_map(|s| at(ExprKind::Str(s))),
        "[a-c,]{0,3}".prop_map(|s| at(ExprKind::Str(s))),
        pick(NAMES).prop_map(|n| at(ExprKind::Name(n))),
        pick(NAMES).prop_map(|n| at(ExprKind::Name(n))),
    ]
}

fn binop() -> impl Strategy<Value = BinOp> {
    proptest::sample::select(vec![
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::FloorDiv,
        BinOp::Mod,
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::In,
        BinOp::NotIn,
    ])
}

fn tree() -> impl Strategy<Value = Expr> {
    leaf().prop_recursive(5, 48, 3, |inner| {
        let b = |e: Expr| Box::new(e);
        let opt = proptest::option::of(inner.clone().prop_map(Box::new));
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(|v| at(ExprKind::List(v))),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|v| at(ExprKind::Set(v))),
            prop::collection::vec((inner.clone(), inner.clone()), 0..3)
                .prop_map(|v| at(ExprKind::Dict(v))),
            (inner.clone(), pick(FIELDS)).prop_map(move |(x, f)| at(ExprKind::Attr(b(x), f))),
            (inner.clone(), inner.clone()).prop_map(move |(x, i)| at(ExprKind::Index(b(x), b(i)))),
            (inner.clone(), opt.clone(), opt.clone(), opt)
                .prop_map(move |(x, p, q, r)| at(ExprKind::Slice(b(x), [p, q, r]))),
            (pick(FUNCS), prop::collection::vec(inner.clone(), 0..3))
                .prop_map(|(f, a)| at(ExprKind::Call(f, a))),
            (
                inner.clone(),
                pick(METHODS),
                prop::collection::vec(inner.clone(), 0..3)
            )
                .prop_map(move |(x, m, a)| at(ExprKind::Method(b(x), m, a))),
            (proptest::bool::ANY, inner.clone()).prop_map(move |(neg, x)| {
                at(ExprKind::Unary(
                    if neg { UnOp::Neg } else { UnOp::Not },
                    b(x),
                ))
            }),
            (binop(), inner.clone(), inner.clone())
                .prop_map(move |(op, l, r)| at(ExprKind::Binary(op, b(l), b(r)))),
            (proptest::bool::ANY, inner.clone(), inner.clone()).prop_map(move |(and, l, r)| {
                let op = if and { LogicOp::And } else { LogicOp::Or };
                at(ExprKind::Logic(op, b(l), b(r)))
            }),
            (inner.clone(), inner.clone(), inner).prop_map(move |(c, t, o)| {
                at(ExprKind::IfElse {
                    cond: b(c),
                    then: b(t),
                    otherwise: b(o),
                })
            }),
        ]
    })
}

/// The declared types of the carries the generated trees name.
const CARRIES: &[(&str, &str)] = &[
    ("s", "str"),
    ("n", "int"),
    ("f", "float"),
    ("b", "bool"),
    ("xs", "list[str]"),
    ("ns", "list[int]"),
    ("d", "dict[str, int]"),
    ("o", "outcome"),
    ("op", "Op"),
    ("u", "any"),
];

fn typed_env() -> TypeEnv {
    let mut env = TypeEnv::new();
    env.add_enum("Op", ["merge".to_owned(), "split".to_owned()]);
    for (name, ty) in CARRIES {
        env.add_carry(*name, &Type::parse(ty));
    }
    env
}

fn untyped_env() -> TypeEnv {
    let mut env = TypeEnv::new();
    for (name, _) in CARRIES {
        env.add_carry(*name, &Type::Any);
    }
    env
}

fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        (-2i64..3).prop_map(Value::Int),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::Float),
        "[a-c, ]{0,4}".prop_map(Value::Str),
    ];
    leaf.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::List),
            prop::collection::vec(("[a-c]{1,2}", inner), 0..3)
                .prop_map(|kv| Value::Map(kv.into_iter().collect())),
        ]
    })
}

/// Carry values that conform to [`CARRIES`] (any carry may also be unwritten: null).
fn carries() -> impl Strategy<Value = IndexMap<String, Value>> {
    carries_with(true)
}

/// Carry values that conform to [`CARRIES`]; with `nulls`, any carry may be unwritten (null).
fn carries_with(nulls: bool) -> impl Strategy<Value = IndexMap<String, Value>> {
    let null_or = move |s: BoxedStrategy<Value>| {
        if nulls {
            prop_oneof![1 => Just(Value::Null), 6 => s].boxed()
        } else {
            s
        }
    };
    let strs = || "[a-c, ]{0,4}".prop_map(Value::Str).boxed();
    (
        null_or(strs()),
        null_or(any::<i64>().prop_map(Value::Int).boxed()),
        null_or(
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::Float)
                .boxed(),
        ),
        null_or(any::<bool>().prop_map(Value::Bool).boxed()),
        null_or(
            prop::collection::vec(strs(), 0..4)
                .prop_map(Value::List)
                .boxed(),
        ),
        null_or(
            prop::collection::vec((-3i64..4).prop_map(Value::Int), 0..4)
                .prop_map(Value::List)
                .boxed(),
        ),
        null_or(
            prop::collection::vec(("[a-c]{1,2}", (-3i64..4).prop_map(Value::Int)), 0..3)
                .prop_map(|kv| Value::Map(kv.into_iter().collect()))
                .boxed(),
        ),
        null_or(
            (any::<bool>(), "[a-c]{0,2}", any_value())
                .prop_map(|(ok, e, v)| {
                    let mut m = IndexMap::new();
                    m.insert("ok".to_owned(), Value::Bool(ok));
                    m.insert("error".to_owned(), Value::Str(e));
                    m.insert("output".to_owned(), Value::Str(String::new()));
                    m.insert("value".to_owned(), v);
                    Value::Map(m)
                })
                .boxed(),
        ),
        null_or(
            proptest::sample::select(vec!["merge", "split"])
                .prop_map(Value::from)
                .boxed(),
        ),
        any_value(),
    )
        .prop_map(|(s, n, f, b, xs, ns, d, o, op, u)| {
            let mut m = IndexMap::new();
            for (name, v) in CARRIES
                .iter()
                .map(|(n, _)| *n)
                .zip([s, n, f, b, xs, ns, d, o, op, u])
            {
                m.insert(name.to_owned(), v);
            }
            m
        })
}

/// True when `v` is a value of static type `ty` (`null` is any carry's unwritten value, and
/// an int is a float by promotion).
fn conforms(v: &Value, ty: &Ty, env: &TypeEnv) -> bool {
    match (ty, v) {
        (Ty::Any, _) | (_, Value::Null) => true,
        (Ty::Bool, Value::Bool(_)) => true,
        (Ty::Int, Value::Int(_)) => true,
        (Ty::Float, Value::Float(_) | Value::Int(_)) => true,
        (Ty::Str, Value::Str(_)) => true,
        (Ty::Enum(e), Value::Str(s)) => env
            .enum_members(e)
            .is_some_and(|ms| ms.iter().any(|m| m == s)),
        (Ty::List(t), Value::List(items)) => items.iter().all(|i| conforms(i, t, env)),
        (Ty::Dict(t), Value::Map(m)) => m.values().all(|i| conforms(i, t, env)),
        (Ty::Object(o), Value::Map(m)) => env.object_fields(o).is_some_and(|fields| {
            fields
                .iter()
                .all(|(f, t)| m.get(f).is_none_or(|x| conforms(x, t, env)))
        }),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn printing_then_parsing_gives_the_same_tree(e in tree()) {
        let limits = Limits::default();
        let printed = e.to_string();
        let parsed = expr::parse(&printed, &limits);
        prop_assert!(parsed.is_ok(), "{printed:?}: {parsed:?}");
        let parsed = parsed.unwrap();
        prop_assert_eq!(parsed.without_positions(), e.without_positions(), "{}", printed);
        // And printing is stable.
        prop_assert_eq!(parsed.to_string(), printed);
    }

    #[test]
    fn checking_and_evaluating_never_panic_and_keep_their_types(
        e in tree(),
        values in carries(),
    ) {
        let limits = Limits::default();
        let typed = typed_env();
        if let Ok(c) = expr::compile(&e, &typed, &limits) {
            match c.eval(&values) {
                Ok(v) => prop_assert!(
                    conforms(&v, c.checked_ty(), &typed),
                    "{} : {} gave {}", e, c.checked_ty(), v
                ),
                Err(err) => prop_assert!(!err.message.is_empty()),
            }
        }
        if let Ok(c) = expr::compile(&e, &untyped_env(), &limits) {
            let _ = c.eval(&values);
            let _ = c.eval_bool(&values);
        }
    }

    #[test]
    fn parsing_any_text_never_panics(src in "\\PC{0,40}") {
        let limits = Limits::default();
        if let Ok(e) = expr::parse(&src, &limits) {
            let again = expr::parse(&e.to_string(), &limits);
            prop_assert!(
                again.is_ok() || again.as_ref().is_err_and(|x| x.category == Category::LimitError),
                "{src:?}"
            );
        }
    }

    #[test]
    fn untyped_carries_of_any_shape_never_panic(e in tree(), u in any_value()) {
        let limits = Limits::default();
        let mut values = IndexMap::new();
        for (name, _) in CARRIES {
            values.insert((*name).to_owned(), u.clone());
        }
        if let Ok(c) = expr::compile(&e, &untyped_env(), &limits) {
            let _ = c.eval(&values);
        }
    }
}

/// Strategies for well-typed expressions over [`CARRIES`], by result type.
#[derive(Clone)]
struct Typed {
    b: BoxedStrategy<Expr>,
    i: BoxedStrategy<Expr>,
    f: BoxedStrategy<Expr>,
    s: BoxedStrategy<Expr>,
    ls: BoxedStrategy<Expr>,
    li: BoxedStrategy<Expr>,
}

fn name(n: &str) -> Expr {
    at(ExprKind::Name(n.to_owned()))
}

fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
    at(ExprKind::Binary(op, Box::new(l), Box::new(r)))
}

fn call(f: &str, args: Vec<Expr>) -> Expr {
    at(ExprKind::Call(f.to_owned(), args))
}

fn meth(x: Expr, m: &str, args: Vec<Expr>) -> Expr {
    at(ExprKind::Method(Box::new(x), m.to_owned(), args))
}

fn cond(c: Expr, t: Expr, o: Expr) -> Expr {
    at(ExprKind::IfElse {
        cond: Box::new(c),
        then: Box::new(t),
        otherwise: Box::new(o),
    })
}

fn typed_leaves() -> Typed {
    Typed {
        b: prop_oneof![
            any::<bool>().prop_map(|b| at(ExprKind::Bool(b))),
            Just(name("b")),
            Just(at(ExprKind::Attr(Box::new(name("o")), "ok".into()))),
            proptest::sample::select(vec!["merge", "split"]).prop_map(|m| bin(
                BinOp::Eq,
                name("op"),
                at(ExprKind::Attr(Box::new(name("Op")), m.into()))
            )),
        ]
        .boxed(),
        i: prop_oneof![
            any::<i64>().prop_map(|i| at(ExprKind::Int(i))),
            (-3i64..4).prop_map(|i| at(ExprKind::Int(i))),
            Just(name("n")),
        ]
        .boxed(),
        f: prop_oneof![
            (-1e6f64..1e6).prop_map(|f| at(ExprKind::Float(f))),
            Just(name("f")),
        ]
        .boxed(),
        s: prop_oneof![
            "[a-c, ]{0,3}".prop_map(|s| at(ExprKind::Str(s))),
            Just(name("s")),
            Just(at(ExprKind::Attr(Box::new(name("o")), "error".into()))),
        ]
        .boxed(),
        ls: prop_oneof![
            Just(name("xs")),
            Just(meth(
                name("s"),
                "split",
                vec![at(ExprKind::Str(",".into()))]
            )),
            Just(meth(name("d"), "keys", vec![])),
        ]
        .boxed(),
        li: prop_oneof![Just(name("ns")), Just(meth(name("d"), "values", vec![]))].boxed(),
    }
}

fn typed_level(t: &Typed) -> Typed {
    let Typed { b, i, f, s, ls, li } = t.clone();
    let cmp = proptest::sample::select(vec![
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
    ]);
    let arith = proptest::sample::select(vec![
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::FloorDiv,
        BinOp::Mod,
    ]);
    Typed {
        b: prop_oneof![
            b.clone(),
            (cmp.clone(), i.clone(), f.clone()).prop_map(|(op, l, r)| bin(op, l, r)),
            (cmp, s.clone(), s.clone()).prop_map(|(op, l, r)| bin(op, l, r)),
            (s.clone(), ls.clone()).prop_map(|(x, xs)| bin(BinOp::In, x, xs)),
            (s.clone(), s.clone()).prop_map(|(x, y)| bin(BinOp::NotIn, x, y)),
            (i.clone(), li.clone()).prop_map(|(x, xs)| bin(BinOp::In, x, xs)),
            b.clone()
                .prop_map(|x| at(ExprKind::Unary(UnOp::Not, Box::new(x)))),
            (any::<bool>(), b.clone(), b.clone()).prop_map(|(and, l, r)| {
                let op = if and { LogicOp::And } else { LogicOp::Or };
                at(ExprKind::Logic(op, Box::new(l), Box::new(r)))
            }),
            (s.clone(), s.clone()).prop_map(|(x, p)| meth(x, "startswith", vec![p])),
            (ls.clone(), s.clone()).prop_map(|(x, p)| meth(x, "contains", vec![p])),
            (b.clone(), b.clone(), b.clone()).prop_map(|(c, t, o)| cond(c, t, o)),
        ]
        .boxed(),
        i: prop_oneof![
            i.clone(),
            (arith, i.clone(), i.clone()).prop_map(|(op, l, r)| bin(op, l, r)),
            s.clone().prop_map(|x| call("len", vec![x])),
            ls.clone().prop_map(|x| call("len", vec![x])),
            i.clone()
                .prop_map(|x| at(ExprKind::Unary(UnOp::Neg, Box::new(x)))),
            f.clone().prop_map(|x| call("round", vec![x])),
            f.clone().prop_map(|x| call("int", vec![x])),
            (li.clone(), i.clone())
                .prop_map(|(xs, k)| at(ExprKind::Index(Box::new(xs), Box::new(k)))),
            li.clone().prop_map(|x| call("sum", vec![x])),
            (i.clone(), i.clone()).prop_map(|(a, b)| call("min", vec![a, b])),
            (s.clone(), s.clone()).prop_map(|(x, y)| meth(x, "find", vec![y])),
            (b.clone(), i.clone(), i.clone()).prop_map(|(c, t, o)| cond(c, t, o)),
        ]
        .boxed(),
        f: prop_oneof![
            f.clone(),
            (i.clone(), i.clone()).prop_map(|(l, r)| bin(BinOp::Div, l, r)),
            (f.clone(), i.clone()).prop_map(|(l, r)| bin(BinOp::Add, l, r)),
            (f.clone(), f.clone()).prop_map(|(l, r)| bin(BinOp::Mul, l, r)),
            i.clone().prop_map(|x| call("float", vec![x])),
            f.clone().prop_map(|x| call("abs", vec![x])),
            (b.clone(), f.clone(), i.clone()).prop_map(|(c, t, o)| cond(c, t, o)),
        ]
        .boxed(),
        s: prop_oneof![
            s.clone(),
            (s.clone(), s.clone()).prop_map(|(l, r)| bin(BinOp::Add, l, r)),
            s.clone().prop_map(|x| meth(x, "upper", vec![])),
            s.clone().prop_map(|x| meth(x, "strip", vec![])),
            i.clone().prop_map(|x| call("str", vec![x])),
            (s.clone(), i.clone()).prop_map(|(x, k)| at(ExprKind::Index(Box::new(x), Box::new(k)))),
            (
                s.clone(),
                proptest::option::of(i.clone()),
                proptest::option::of(i.clone())
            )
                .prop_map(|(x, a, b)| at(ExprKind::Slice(
                    Box::new(x),
                    [a.map(Box::new), b.map(Box::new), None]
                ))),
            (ls.clone(), i.clone())
                .prop_map(|(xs, k)| at(ExprKind::Index(Box::new(xs), Box::new(k)))),
            (s.clone(), ls.clone()).prop_map(|(sep, xs)| meth(sep, "join", vec![xs])),
            (s.clone(), s.clone(), s.clone()).prop_map(|(x, a, b)| meth(x, "replace", vec![a, b])),
            // An enum member is a string (though members are not ordered).
            Just(call("str", vec![name("op")])),
            (b.clone(), s.clone(), s.clone()).prop_map(|(c, t, o)| cond(c, t, o)),
        ]
        .boxed(),
        ls: prop_oneof![
            ls.clone(),
            s.clone().prop_map(|x| meth(x, "split", vec![])),
            ls.clone().prop_map(|x| call("sorted", vec![x])),
            (ls.clone(), ls.clone()).prop_map(|(l, r)| bin(BinOp::Add, l, r)),
            prop::collection::vec(s.clone(), 0..3).prop_map(|v| at(ExprKind::List(v))),
            (ls.clone(), proptest::option::of(i.clone()))
                .prop_map(|(x, a)| at(ExprKind::Slice(Box::new(x), [a.map(Box::new), None, None]))),
        ]
        .boxed(),
        li: prop_oneof![
            li.clone(),
            li.clone().prop_map(|x| call("reversed", vec![x])),
            prop::collection::vec(i, 0..3).prop_map(|v| at(ExprKind::List(v))),
        ]
        .boxed(),
    }
}

fn typed_trees() -> Typed {
    let mut t = typed_leaves();
    for _ in 0..3 {
        t = typed_level(&t);
    }
    t
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// Well-typed expressions are accepted by the checker, and with every carry written they
    /// never fail with a type error at run time: what checks, runs (or fails on a value).
    #[test]
    fn well_typed_expressions_do_not_go_wrong(
        (e, want) in {
            let t = typed_trees();
            prop_oneof![
                t.b.prop_map(|e| (e, Ty::Bool)),
                t.i.prop_map(|e| (e, Ty::Int)),
                t.f.prop_map(|e| (e, Ty::Float)),
                t.s.prop_map(|e| (e, Ty::Str)),
                t.ls.prop_map(|e| (e, Ty::List(Box::new(Ty::Str)))),
                t.li.prop_map(|e| (e, Ty::List(Box::new(Ty::Int)))),
            ]
        },
        values in carries_with(false),
    ) {
        let limits = Limits::default();
        let env = typed_env();
        let c = match expr::compile(&e, &env, &limits) {
            Ok(c) => c,
            Err(err) => {
                // Constant sub-expressions are evaluated while checking.
                prop_assert!(
                    matches!(err.category, Category::ValueError | Category::LimitError),
                    "{e} was rejected: {} {}", err.category, err.message
                );
                return Ok(());
            }
        };
        prop_assert!(env.assignable(c.checked_ty(), &want), "{e}: {} is not {want}", c.checked_ty());
        match c.eval(&values) {
            Ok(v) => prop_assert!(conforms(&v, &want, &env), "{e} gave {v}, not a {want}"),
            Err(err) => prop_assert!(
                matches!(err.category, Category::ValueError | Category::LimitError),
                "{e} went wrong: {} {}", err.category, err.message
            ),
        }
    }
}
