//! The DSL's MCP items: `mcp_server` and `= mcp(server, "tool")` lower to the AG-IR's
//! `mcp_servers` and `mcp:` binding, the lock named by `mcp_lock` gives the tools their
//! signatures at expansion time, and the lock's checks (M1, M2) land at the DSL's tokens.

use ais_syntax::diagnose;
use ais_syntax::lower;

/// The program with `$REMOTE` as the adder's server tool and `$SIG` as its parameters.
const SUMS: &str = r#"
    /// Echo a greeting and add two numbers on the everything server.
    program Sums (mcp_lock = "../tests/fixtures/mcp/sums.mcp.lock") {
        carries {
            greeting: str = input,
            x: float = input,
            y: float = input,
            echoed: str,
            total: str,
        }

        /// The reference server with every kind of tool.
        mcp_server every { command: "mcp-server-everything", env: { "LOG": "warn" } }

        #[surface(SENSE)]
        tool echo = mcp(every);
        #[surface(SENSE)]
        tool add$SIG = mcp(every, "$REMOTE");

        say: SENSE echo(greeting) -> echoed;
        sum: SENSE add(x, y) -> total;
        done: TERMINAL(echoed, total);

        say -> sum -> done;
    }
"#;

fn sums(remote: &str, sig: &str) -> ais_syntax::Lowered {
    let text = SUMS.replace("$REMOTE", remote).replace("$SIG", sig);
    let file = ais_syntax::parse_str(&text).expect("parses");
    lower(&file.programs[0]).expect("lowers")
}

#[test]
fn mcp_items_lower_to_the_agir_sections_with_the_locked_signatures() {
    let l = sums("get-sum", "");
    let p = &l.program;
    let servers = p.mcp_servers.as_deref().unwrap();
    assert_eq!(servers[0].name, "every");
    assert_eq!(servers[0].command.as_deref(), Some("mcp-server-everything"));
    assert_eq!(
        servers[0].env.as_deref(),
        Some(&[("LOG".to_owned(), "warn".to_owned())][..])
    );
    let (_, add) = p.tool("add").unwrap();
    assert_eq!(add.mcp.as_ref().unwrap().remote("add"), "get-sum");
    assert_eq!(add.sig.as_deref(), Some("(a: float, b: float) -> str"));
    // The AG-IR the macro emits reads back as the same program (the export is byte-equal).
    let text = ais_core::agir::write(p);
    assert_eq!(&ais_core::agir::read(&text).unwrap().program, p, "{text}");
    let d = diagnose(&l, ais_syntax::Site::one(proc_macro2::Span::call_site()));
    assert!(
        d.is_empty(),
        "{:#?}",
        d.iter().map(|d| &d.message).collect::<Vec<_>>()
    );
}

#[test]
fn a_misspelled_server_tool_or_parameter_is_a_finding_with_did_you_mean() {
    let d = diagnose(
        &sums("get-summ", ""),
        ais_syntax::Site::one(proc_macro2::Span::call_site()),
    );
    let m1 = d.iter().find(|d| d.id.as_str() == "M1").expect("M1");
    assert!(m1.message.contains("no tool `get-summ`"), "{}", m1.message);
    assert!(
        m1.full_message().contains("did you mean `get-sum`?"),
        "{}",
        m1.full_message()
    );
    assert!(m1.is_error());

    let d = diagnose(
        &sums("get-sum", "(a: f64, bb: f64) -> String"),
        ais_syntax::Site::one(proc_macro2::Span::call_site()),
    );
    let m1 = d
        .iter()
        .find(|d| d.message.contains("`bb`"))
        .expect("M1 on bb");
    assert!(
        m1.full_message().contains("did you mean `b`?"),
        "{}",
        m1.full_message()
    );
}
