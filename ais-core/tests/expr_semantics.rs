//! The expression language end to end: guards and bodies against a program's carries,
//! evaluation results, and the category and position of every kind of error.

use ais_core::expr::{self, Category, ExprError, Guard, Limits, TypeEnv, eval_str, is_sentinel};
use ais_core::{Carry, EnumMember, Field, Program, Type, TypeDecl, TypeKind, Value, Walker};
use indexmap::IndexMap;

use crate::expr_common;
use expr_common::{check_body, check_guard};

fn carry(name: &str, ty: Option<&str>) -> Carry {
    Carry {
        name: name.to_owned(),
        ty: ty.map(Type::parse),
        ..Carry::default()
    }
}

/// A program with carries of every kind, an enum `Op` and an object `Spec`.
fn program() -> Program {
    let members = ["merge", "split", "keep"]
        .iter()
        .map(|m| EnumMember {
            name: (*m).to_owned(),
            doc: None,
        })
        .collect();
    let field = |name: &str, ty: &str| Field {
        name: name.to_owned(),
        ty: Some(Type::parse(ty)),
        ..Field::default()
    };
    Program {
        types: Some(vec![
            TypeDecl {
                name: "Op".into(),
                kind: TypeKind::Enum(members),
                ..TypeDecl::default()
            },
            TypeDecl {
                name: "Spec".into(),
                kind: TypeKind::Object(vec![field("width", "int"), field("title", "str")]),
                ..TypeDecl::default()
            },
        ]),
        walker: Some(Walker {
            name: Some("T".into()),
            carries: Some(vec![
                carry("plan_ok", Some("bool")),
                carry("op", Some("Op")),
                carry("round", Some("int")),
                carry("ratio", Some("float")),
                carry("loud", Some("str")),
                carry("out_path", Some("path")),
                carry("rows", Some("list[dict]")),
                carry("names", Some("list[str]")),
                carry("counts", Some("dict[str, int]")),
                carry("spec", Some("Spec")),
                carry("result", Some("outcome")),
                carry("ops", Some("list[Op]")),
                carry("loose", None),
            ]),
            extra: Vec::new(),
        }),
        ..Program::default()
    }
}

fn values() -> IndexMap<String, Value> {
    let json = r#"{
        "plan_ok": true, "op": "merge", "round": 2, "ratio": 0.5, "loud": "A,B, C",
        "out_path": "out/report.md",
        "rows": [{"name": "a", "n": 1}, {"name": "b", "n": 2}],
        "names": ["x", "y"], "counts": {"x": 3, "y": 4},
        "spec": {"width": 80, "title": "Report"},
        "result": {"ok": false, "error": "boom", "output": "", "value": null},
        "ops": ["merge", "keep"], "loose": [1, "two"]
    }"#;
    match Value::from_json(&serde_json::from_str(json).unwrap()) {
        Value::Map(m) => m,
        _ => unreachable!(),
    }
}

fn ev(src: &str) -> Result<Value, ExprError> {
    eval_str(src, &values(), Some(&program()))
}

fn ok(src: &str) -> Value {
    ev(src).unwrap_or_else(|e| panic!("{src}: {} {e}", e.category))
}

fn json(text: &str) -> Value {
    Value::from_json(&serde_json::from_str(text).unwrap())
}

fn fails(src: &str) -> ExprError {
    match ev(src) {
        Ok(v) => panic!("{src} evaluated to {v}"),
        Err(e) => e,
    }
}

#[test]
fn guards_of_the_issue_evaluate() {
    for (src, want) in [
        ("plan_ok == true", true),
        ("plan_ok", true),
        ("op == Op.merge", true),
        ("op == \"merge\"", true),
        ("\"split\" == op", false),
        ("op == merge", true),
        ("op in {merge, split}", true),
        ("op in {Op.split, Op.keep}", false),
        ("op not in [\"split\"]", true),
        ("round < 3", true),
        ("round >= 3 or not plan_ok", false),
        ("ratio == 0.5 and round == 2.0", true),
        ("result.ok", false),
        ("result.error != \"\"", true),
        ("spec.width > 72", true),
        ("\"x\" in names", true),
        ("\"z\" in counts", false),
        ("\"B\" in loud", true),
        ("Op.keep in ops", true),
        ("loose == [1, \"two\"]", true),
        ("out_path.endswith(\".md\")", true),
        ("len(rows) > 1 if plan_ok else false", true),
    ] {
        assert_eq!(ok(src), Value::Bool(want), "{src}");
        assert_eq!(check_guard(&program(), src), Ok(()), "{src}");
    }
}

#[test]
fn bodies_evaluate_and_have_the_type_they_produce() {
    let p = program();
    for (src, want, ty) in [
        ("loud.split(\",\")", r#"["A","B"," C"]"#, "list[str]"),
        ("len(rows)", "2", "int"),
        (
            "rows",
            r#"[{"name":"a","n":1},{"name":"b","n":2}]"#,
            "list[dict]",
        ),
        ("spec.title.lower()", r#""report""#, "str"),
    ] {
        assert_eq!(ok(src), json(want), "{src}");
        assert_eq!(check_body(&p, src), Ok(Type::parse(ty)), "{src}");
    }
    // Comprehensions are not part of the language.
    assert_eq!(fails("[r for r in rows]").category, Category::SyntaxError);
    assert_eq!(ok("sum(counts.values())"), Value::Int(7));
    assert_eq!(ok("\", \".join(sorted(counts.keys()))"), json(r#""x, y""#));
    assert_eq!(
        ok("loud.lower().replace(\",\", \";\")"),
        json(r#""a;b; c""#)
    );
    assert_eq!(ok("[loud.strip(), names[0]]"), json(r#"["A,B, C","x"]"#));
}

#[test]
fn arithmetic_and_conversions() {
    for (src, want) in [
        ("7 // 2", "3"),
        ("-7 // 2", "-4"),
        ("-7 % 3", "2"),
        ("7 / 2", "3.5"),
        ("1 + 2.5", "3.5"),
        ("round * 10 - 1", "19"),
        ("int(\" 42 \") + 1", "43"),
        ("int(3.9)", "3"),
        ("float(\"2.5\") * 2", "5.0"),
        ("str(round) + \"x\"", r#""2x""#),
        ("str(ratio)", r#""0.5""#),
        ("str(plan_ok)", r#""true""#),
        ("str(names)", r#""[\"x\",\"y\"]""#),
        ("bool(\"\")", "false"),
        ("abs(-3)", "3"),
        ("round(2.5)", "2"),
        ("round(3.5)", "4"),
        ("min(3, 1.5)", "1.5"),
        ("max(names)", r#""y""#),
        ("sorted([3, 1, 2])", "[1,2,3]"),
        ("reversed(names)", r#"["y","x"]"#),
        ("any([false, true])", "true"),
        ("all([])", "true"),
        ("loud[0]", r#""A""#),
        ("loud[-1]", r#""C""#),
        ("loud[2:]", r#""B, C""#),
        ("names[::-1]", r#"["y","x"]"#),
        ("rows[1][\"n\"]", "2"),
        ("rows[0].name", r#""a""#),
        ("counts.get(\"zz\", 0)", "0"),
        ("counts.get(\"x\")", "3"),
        ("counts.items()[0]", r#"["x",3]"#),
        ("loud.find(\"B\")", "2"),
        ("\"a-b-c\".count(\"-\")", "2"),
        ("names.index(\"y\")", "1"),
        ("\"  a  b \".split()", r#"["a","b"]"#),
        ("\"l1\\nl2\".splitlines()", r#"["l1","l2"]"#),
        ("\"xxhixx\".strip(\"x\")", r#""hi""#),
        ("\"42\".isdigit()", "true"),
        (
            "{\"a\": 1, \"b\": [true, null]}",
            r#"{"a":1,"b":[true,null]}"#,
        ),
        ("{1, 1.0, 2}", "[1,2]"),
        ("names + [\"z\"]", r#"["x","y","z"]"#),
        ("\"é\" + 'ü'", r#""éü""#),
        ("len(\"héllo\")", "5"),
        ("null == None", "true"),
        ("loose is None", "false"),
    ] {
        assert_eq!(ok(src), json(want), "{src}");
    }
}

fn at(src: &str, category: Category, line: u32, column: u32, needle: &str) {
    let e = fails(src);
    assert_eq!(
        (e.category, e.line, e.column),
        (category, line, column),
        "{src}: {}",
        e.message
    );
    assert!(
        e.message.contains(needle),
        "{src}: {:?} lacks {needle:?}",
        e.message
    );
}

#[test]
fn static_errors_name_the_place_and_the_fix() {
    at(
        "plan_k == true",
        Category::NameError,
        1,
        1,
        "Did you mean `plan_ok`?",
    );
    // A qualified member is pointed at, past the enum's name and the dot.
    at(
        "op == Op.merg",
        Category::NameError,
        1,
        10,
        "Did you mean `merge`?",
    );
    at("op == Op.MERGE", Category::NameError, 1, 10, "`merge`?");
    // A quoted member is pointed at inside its quotes, where its rename goes.
    at(
        "op == \"merg\"",
        Category::TypeError,
        1,
        8,
        "no member `merg`",
    );
    at(
        "op in {\"merge\", \"splt\"}",
        Category::TypeError,
        1,
        18,
        "no member `splt`",
    );
    at("loud == 3", Category::TypeError, 1, 1, "(str)");
    at("round < \"3\"", Category::TypeError, 1, 1, "(int)");
    at(
        "spec.height > 1",
        Category::NameError,
        1,
        1,
        "no field `height`",
    );
    at(
        "result.okay",
        Category::NameError,
        1,
        1,
        "Did you mean `ok`?",
    );
    at("loud + 1", Category::TypeError, 1, 1, "str(x)");
    at("loud * 2", Category::TypeError, 1, 1, "repetition");
    at("not loud", Category::TypeError, 1, 5, "loud != \"\"");
    at("plan_ok and round", Category::TypeError, 1, 13, "round > 0");
    at(
        "lenn(rows)",
        Category::NameError,
        1,
        1,
        "Did you mean `len`?",
    );
    at("lower(loud)", Category::NameError, 1, 1, "is a method");
    at("rows.len()", Category::NameError, 1, 1, "is a function");
    at("len(round)", Category::TypeError, 1, 1, "not an int");
    at("loud.split(1)", Category::TypeError, 1, 1, "separator");
    at(
        "len()",
        Category::TypeError,
        1,
        1,
        "takes 1 argument, not 0",
    );
    at("rows[\"a\"]", Category::TypeError, 1, 6, "int indices");
    at("op < Op.split", Category::TypeError, 1, 1, "Enum members");
    at("Op", Category::NameError, 1, 1, "is an enum");
    at("Spec.width", Category::TypeError, 1, 1, "object type");
    at(
        "1 if plan_ok else \"x\"",
        Category::TypeError,
        1,
        1,
        "different types",
    );
    at(
        "round == 1 == 1",
        Category::SyntaxError,
        1,
        12,
        "do not chain",
    );
    at(
        "round <\n  1 / 0",
        Category::ValueError,
        2,
        3,
        "division by zero",
    );
    at(
        "plan_ok ==",
        Category::SyntaxError,
        1,
        11,
        "expected a value",
    );
}

#[test]
fn run_time_errors_have_a_category() {
    for (src, category, needle) in [
        ("rows[5]", Category::ValueError, "out of range"),
        ("rows[0][\"missing\"]", Category::ValueError, ".get("),
        ("rows[0].missing", Category::ValueError, "no field"),
        (
            "round // (round - 2)",
            Category::ValueError,
            "division by zero",
        ),
        (
            "round * 9223372036854775807",
            Category::ValueError,
            "overflow",
        ),
        ("ratio / 0", Category::ValueError, "division by zero"),
        ("int(loud)", Category::ValueError, "cannot read"),
        (
            "names.index(\"q\")",
            Category::ValueError,
            "not in the list",
        ),
        ("min([])", Category::ValueError, "empty"),
        ("loud.split(\"\")", Category::ValueError, "non-empty"),
        ("loose[0] == \"1\"", Category::TypeError, "compatible"),
        ("loose + 1", Category::TypeError, "cannot take"),
        ("sorted(loose)", Category::TypeError, "one orderable kind"),
        ("names[::0]", Category::ValueError, "step"),
        (
            "loose and plan_ok",
            Category::TypeError,
            "`and` needs a bool, not a list",
        ),
        (
            "not loose[0]",
            Category::TypeError,
            "`not` needs a bool, not an int",
        ),
        (
            "1 if loose else 2",
            Category::TypeError,
            "a conditional needs a bool",
        ),
        ("loose[0] in loose[1]", Category::TypeError, "needs a str"),
    ] {
        let e = fails(src);
        assert_eq!(e.category, category, "{src}: {}", e.message);
        assert!(e.message.contains(needle), "{src}: {:?}", e.message);
    }
}

#[test]
fn unwritten_carries_read_as_null() {
    let p = program();
    let mut carries = IndexMap::new();
    carries.insert("plan_ok".to_owned(), Value::Bool(true));
    let limits = Limits::default();
    let Guard::Cond(g) =
        expr::compile_guard(&TypeEnv::from_program(&p), "round < 3", &limits).unwrap()
    else {
        panic!("not a condition")
    };
    let e = g.eval_bool(&carries).unwrap_err();
    assert_eq!(e.category, Category::TypeError);
    assert!(e.message.contains("not been written"), "{}", e.message);
    let Guard::Cond(g) = expr::compile_guard(
        &TypeEnv::from_program(&p),
        "not result.ok or round < 1",
        &limits,
    )
    .unwrap() else {
        panic!("not a condition")
    };
    let e = g.eval_bool(&carries).unwrap_err();
    assert!(e.message.contains("not been written"), "{}", e.message);
    carries.insert("result".to_owned(), Value::Map(IndexMap::new()));
    let e = g.eval_bool(&carries).unwrap_err();
    assert_eq!(e.category, Category::ValueError, "{}", e.message);
    let Guard::Cond(g) =
        expr::compile_guard(&TypeEnv::from_program(&p), "round == None", &limits).unwrap()
    else {
        panic!("not a condition")
    };
    assert_eq!(g.eval_bool(&carries), Ok(true));
    assert_eq!(g.carries_read(), vec!["round"]);
}

#[test]
fn sentinels_are_default_edges() {
    for s in [
        "",
        "  ",
        "otherwise",
        "Default",
        " ELSE ",
        "always",
        "True",
        "true",
        "_",
    ] {
        assert!(is_sentinel(s), "{s:?}");
        assert_eq!(
            expr::compile_guard(&TypeEnv::from_program(&program()), s, &Limits::default()),
            Ok(Guard::Default)
        );
        assert_eq!(check_guard(&program(), s), Ok(()));
    }
    for s in ["false", "plan_ok", "otherwise!", "defaults"] {
        assert!(!is_sentinel(s), "{s:?}");
    }
}

#[test]
fn guards_must_be_bools_over_carries() {
    let p = program();
    let e = check_guard(&p, "round").unwrap_err();
    assert_eq!(e.category, Category::TypeError);
    assert!(e.message.contains("round > 0"), "{}", e.message);
    let e = check_guard(&p, "1 < 2").unwrap_err();
    assert_eq!(e.category, Category::NameError);
    assert!(e.message.contains("reads no carry"), "{}", e.message);
    let e = check_guard(&p, "false").unwrap_err();
    assert_eq!(e.category, Category::NameError);
    // An untyped carry is checked when the guard runs.
    assert_eq!(check_guard(&p, "loose"), Ok(()));
    let Guard::Cond(g) =
        expr::compile_guard(&TypeEnv::from_program(&p), "loose", &Limits::default()).unwrap()
    else {
        panic!()
    };
    assert_eq!(
        g.eval_bool(&values()).unwrap_err().category,
        Category::TypeError
    );
}

#[test]
fn bodies_are_typed_and_their_types_fit_their_targets() {
    let p = program();
    let env = TypeEnv::from_program(&p);
    let fits =
        |from: &Type, to: &str| env.assignable(&env.resolve(from), &env.resolve(&Type::parse(to)));
    let ty = check_body(&p, "len(rows)").unwrap();
    assert_eq!(ty, Type::Int);
    assert!(fits(&ty, "int") && fits(&ty, "float"));
    let ty = check_body(&p, "loud.lower()").unwrap();
    assert_eq!(ty, Type::Str);
    assert!(
        fits(&ty, "Op"),
        "a str may be written to an enum carry (checked at run time)"
    );
    let ty = check_body(&p, "loud.split(\",\")").unwrap();
    assert_eq!(ty, Type::parse("list[str]"));
    assert!(!fits(&ty, "str"));
    assert!(fits(&Type::parse("list[str]"), "list"));
    assert!(!fits(&Type::Float, "int"));
    assert_eq!(check_body(&p, "op"), Ok(Type::parse("Op")));
    assert_eq!(check_body(&p, "result"), Ok(Type::parse("outcome")));
    assert_eq!(check_body(&p, "null"), Ok(Type::Any));
}

#[test]
fn eval_without_a_program_infers_types_from_values() {
    let mut carries = IndexMap::new();
    carries.insert("n".to_owned(), Value::Int(4));
    carries.insert("s".to_owned(), Value::from("a b"));
    assert_eq!(
        eval_str("n * 2 + len(s.split())", &carries, None),
        Ok(Value::Int(10))
    );
    assert_eq!(eval_str("1 + 2", &IndexMap::new(), None), Ok(Value::Int(3)));
    let e = eval_str("n == s", &carries, None).unwrap_err();
    assert_eq!(e.category, Category::TypeError);
    let e = eval_str("m", &carries, None).unwrap_err();
    assert_eq!(e.category, Category::NameError);
    assert_eq!(Category::NameError.as_str(), "name_error");
    // A program's types win; carries it does not declare are typed from their values.
    let mut extra = values();
    extra.insert("k".to_owned(), Value::Int(1));
    assert_eq!(
        eval_str("k + round", &extra, Some(&program())),
        Ok(Value::Int(3))
    );
}

#[test]
fn compiled_guards_accept_any_carry_map() {
    let env = TypeEnv::from_program(&program());
    let g = expr::compile_str("round < 3", &env, &Limits::default()).unwrap();
    let mut hm = std::collections::HashMap::new();
    hm.insert("round".to_owned(), Value::Int(5));
    assert_eq!(g.eval_bool(&hm), Ok(false));
    let mut bt = std::collections::BTreeMap::new();
    bt.insert("round".to_owned(), Value::Int(1));
    assert_eq!(g.eval_bool(&bt), Ok(true));
    assert_eq!(g.ty(), &Type::Bool);
}

#[test]
fn edges_are_chosen_in_order_with_the_spec_fallbacks() {
    use ais_core::expr::{Choice, choose_edge};
    let p = program();
    let limits = Limits::default();
    let env = TypeEnv::from_program(&p);
    let g = |src: &str| expr::compile_guard(&env, src, &limits).unwrap();
    let mut v = values();
    // BUDGET_ROUTE's shape: first holding guard wins.
    let edges = [g("plan_ok == false"), g("round < 3"), g("loud != \"\"")];
    assert_eq!(choose_edge(&edges, &v), Ok(Choice::Edge(1)));
    v.insert("round".into(), Value::Int(5));
    assert_eq!(choose_edge(&edges, &v), Ok(Choice::Edge(2)));
    v.insert("loud".into(), Value::from(""));
    assert_eq!(choose_edge(&edges, &v), Ok(Choice::DeadEnd));
    // A default edge catches what no guard matches, wherever it stands.
    let with_default = [g("otherwise"), g("plan_ok == false"), g("round < 3")];
    assert_eq!(choose_edge(&with_default, &v), Ok(Choice::Edge(0)));
    // One guarded edge and no default: a precondition, taken unconditionally.
    assert_eq!(choose_edge(&[g("round < 3")], &v), Ok(Choice::Edge(0)));
    assert_eq!(choose_edge(&[], &v), Ok(Choice::Halt));
    // A guard that fails to evaluate names its edge.
    v.shift_remove("round");
    let e = choose_edge(&edges, &v).unwrap_err();
    assert_eq!((e.0, e.1.category), (1, Category::TypeError));
}

#[test]
fn every_library_entry_runs() {
    for (src, want) in [
        ("\"abc\".isalpha()", "true"),
        ("\" \\n\".isspace()", "true"),
        ("\"\".isdigit()", "false"),
        ("\"xxhixx\".lstrip(\"x\")", r#""hixx""#),
        ("\"  hi  \".rstrip()", r#""  hi""#),
        ("loud.upper()", r#""A,B, C""#),
        ("\"straße\".upper()", r#""STRASSE""#),
        ("loud.startswith(\"A,\")", "true"),
        ("names.contains(\"y\")", "true"),
        ("counts.contains(\"x\")", "true"),
        ("loud.contains(\"Z\")", "false"),
        ("[1, 2, 1.0].count(1)", "2"),
        ("counts.values()", "[3,4]"),
        ("sorted(counts.keys(), )", r#"["x","y"]"#),
        ("abs(-2.5)", "2.5"),
        ("round(-0.5)", "0"),
        ("int(true) + int(-2.7)", "-1"),
        ("float(2)", "2.0"),
        ("bool([0])", "true"),
        ("max([1, 5.5, 3])", "5.5"),
        ("min(\"b\", \"a\")", r#""a""#),
        ("sum([0.5, 1])", "1.5"),
        ("any([])", "false"),
        ("all([true, false])", "false"),
        ("reversed([])", "[]"),
        ("str(null) + str(1.0) + str(-3)", r#""null1.0-3""#),
        ("str({\"a\": [1]})", r#""{\"a\":[1]}""#),
        ("loud.replace(\"\", \"-\")", r#""-A-,-B-,- -C-""#),
        ("\"a\" if round > 1 else \"b\"", r#""a""#),
        ("names[-2:]", r#"["x","y"]"#),
        ("loud[::-2]", r#""C,,""#),
        ("rows[0][\"n\"] / 4", "0.25"),
        ("-ratio", "-0.5"),
        ("not plan_ok or round == 2", "true"),
    ] {
        assert_eq!(ok(src), json(want), "{src}");
    }
    for (src, category) in [
        ("round(1e300)", Category::ValueError),
        ("float(\"inf\")", Category::ValueError),
        ("abs(-9223372036854775807 - 1)", Category::ValueError),
        ("sum(names)", Category::TypeError),
        ("any([1])", Category::TypeError),
        (", ", Category::SyntaxError),
        ("\",\".join([1])", Category::TypeError),
        ("counts.get(1)", Category::TypeError),
        ("names.index(1)", Category::TypeError),
        ("min()", Category::TypeError),
        ("loud.strip(1)", Category::TypeError),
    ] {
        assert_eq!(fails(src).category, category, "{src}");
    }
}
