//! Command injection attempts against real `command` tools, through every quoting form a
//! command can put a placeholder in, through re-substitution, and through a leading `-`. Each
//! attack tries to create a file (`pwned`); none may, and each value arrives as one literal
//! argument.

use ais_core::Value;
use ais_rt::{CommandTool, Tool, ToolArgs, ToolContext, ToolErrorKind};

fn args(pairs: &[(&str, &str)]) -> ToolArgs {
    let mut a = ToolArgs::default();
    for (k, v) in pairs {
        a.params.insert((*k).to_owned(), Value::from(*v));
    }
    a
}

fn tool(template: &str, params: &[&str]) -> CommandTool {
    CommandTool::new(
        "cmd",
        template,
        params.iter().map(|s| (*s).to_owned()).collect(),
    )
}

/// Values that would run `touch pwned` if they became shell syntax.
const HOSTILE: &[&str] = &[
    "x'; touch pwned; '",
    "x\"; touch pwned; \"",
    "$(touch pwned)",
    "`touch pwned`",
    "x\ntouch pwned",
    "' $(touch pwned) '",
    "\\'; touch pwned #",
];

#[tokio::test]
async fn a_value_stays_one_literal_argument_in_every_quoting_form() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let forms = [
        ("printf '[%s]' {v}", "[{}]"),
        ("printf '[%s]' '{v}'", "[{}]"),
        ("printf '[%s]' \"{v}\"", "[{}]"),
        ("printf '[%s]' 'pre {v} post'", "[pre {} post]"),
        ("printf '[%s]' \"pre {v} post\"", "[pre {} post]"),
        ("printf '[%s]' {v} | cat", "[{}]"),
        ("printf '[%s]' '{v}' | cat", "[{}]"),
        ("printf '[%s]' \"{v}\" | cat", "[{}]"),
        ("printf [%s] x{v}y", "[x{}y]"),
    ];
    for (form, shape) in forms {
        for hostile in HOSTILE {
            let got = tool(form, &["v"])
                .call(args(&[("v", hostile)]), &ctx)
                .await
                .unwrap_or_else(|e| panic!("{form} with {hostile:?}: {e:?}"));
            let want = shape.replace("{}", hostile);
            assert_eq!(got, Value::from(want.as_str()), "{form} with {hostile:?}");
        }
    }
    assert!(!dir.path().join("pwned").exists());
}

#[tokio::test]
async fn a_value_holding_another_placeholder_is_not_substituted_again() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    for form in [
        "printf '[%s]' {a} {b}",
        "printf '[%s]' {a} {b} | cat",
        "printf '[%s]' '{a}' \"{b}\" | cat",
    ] {
        let got = tool(form, &["a", "b"])
            .call(args(&[("a", "{b}"), ("b", "$(touch pwned)")]), &ctx)
            .await
            .unwrap();
        assert_eq!(got, Value::from("[{b}][$(touch pwned)]"), "{form}");
    }
    assert!(!dir.path().join("pwned").exists());
}

#[tokio::test]
async fn a_placeholder_where_no_value_stays_literal_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    for form in [
        "echo \"$(echo {v})\"",
        "echo `echo {v}`",
        "cat <<EOF\n{v}\nEOF",
        "[[ {v} -eq 1 ]] && echo one",
    ] {
        let err = tool(form, &["v"])
            .call(args(&[("v", "a[$(touch pwned)]")]), &ctx)
            .await
            .unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::Failed, "{form}");
        assert!(
            err.message.contains("fix the `command` field"),
            "{}",
            err.message
        );
    }
    assert!(!dir.path().join("pwned").exists());
}

#[tokio::test]
async fn a_value_never_becomes_an_option_of_the_command() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.txt"), "b\na\n").unwrap();
    let ctx = ToolContext::new(dir.path());
    // `sort -o FILE` would write a file of the model's choosing.
    for (form, params) in [
        ("sort {v} in.txt", &["v"][..]),
        ("sort '{v}' in.txt | cat", &["v"][..]),
        ("sort in.txt", &["v"][..]),
    ] {
        let err = tool(form, params)
            .call(args(&[("v", "-opwned")]), &ctx)
            .await
            .unwrap_err();
        assert_eq!(
            err.kind,
            ToolErrorKind::BadArguments,
            "{form}: {}",
            err.message
        );
        assert!(err.message.contains("-- {v}"), "{}", err.message);
    }
    assert!(!dir.path().join("pwned").exists());
    // After `--` the same value is an operand: sort reads a file named `-opwned`.
    std::fs::write(dir.path().join("-opwned"), "z\ny\n").unwrap();
    let got = tool("sort -- {v}", &["v"])
        .call(args(&[("v", "-opwned")]), &ctx)
        .await
        .unwrap();
    assert_eq!(got, Value::from("y\nz"));
}
