//! Properties of the expression language over generated trees and values:
//! printing then parsing gives the same tree; checking and evaluating never panic; and what
//! type-checks evaluates (when it succeeds) to a value of its static type.

use ais_core::Value;
use ais_core::expr::{self, BinOp, Category, Expr, ExprKind, Limits, LogicOp, Ty, TypeEnv, UnOp};
use ais_core::model::Type;
use ais_core::source::Pos;
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
    let null_or = |s: BoxedStrategy<Value>| prop_oneof![1 => Just(Value::Null), 6 => s];
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
