//! The binding behaviour the reference implementation's tests expect of the corpus programs
//! that exercise the calling convention (corpus README: ACT_PATH_IR, ACT_PATHFIRST_IR,
//! SENSE_PATH_IR, MIXED_INPUT_IR, MULTI_WRITE_IR, BUDGET_ROUTE_IR, REPAIR_IR, CMD_IR,
//! CARRY_IR, MULTIWRITE_IR). The programs are restated here in code, element for element (the
//! corpus is data and is not copied into the project), so these tests stand without the AG-IR
//! reader and without the corpus; `bind_corpus.rs` checks the files themselves.

use crate::bind_common;

use ais_core::bind::*;
use ais_core::sig::{Return, parse};
use ais_core::{Opcode, Value};
use bind_common::*;

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn json(s: &str) -> Value {
    Value::from_json(&serde_json::from_str(s).unwrap())
}

/// ACT_PATH_IR: "an ACT tool's destination param resolves to a real path, never None".
#[test]
fn act_path_ir_content_by_role_and_path_from_the_task() {
    let p = program(
        vec![
            input("task", "str"),
            input("note", "str"),
            carry("saved", "str"),
        ],
        vec![
            with_tool(
                instr("save_it", Opcode::Act, &["note"], &["saved"]),
                "write_note",
            ),
            instr("done", Opcode::Terminal, &[], &[]),
        ],
        vec![tool(
            "write_note",
            "(content: str, path: str) -> str",
            "ACT·artifact",
        )],
    );
    assert_eq!(
        pairs(&bind(&p, "save_it", None)),
        [to_carry(Rule::Role, "note"), inv(None)]
    );
    assert_eq!(
        pairs(&bind(
            &p,
            "save_it",
            Some("save the note to notes/today.md")
        )),
        [to_carry(Rule::Role, "note"), inv(Some("notes/today.md"))]
    );
}

/// ACT_PATHFIRST_IR: "a path-first write tool binds content by ROLE, not position".
#[test]
fn act_pathfirst_ir_binds_content_by_role_not_position() {
    let p = program(
        vec![
            input("task", "str"),
            input("philosophy_md", "str"),
            carry("exported", "str"),
        ],
        vec![
            instr("export_it", Opcode::Act, &["philosophy_md"], &["exported"]),
            instr("done", Opcode::Terminal, &["exported"], &[]),
        ],
        vec![serving(
            tool(
                "write_file",
                "(path: str, content: str) -> str",
                "ACT·artifact",
            ),
            &["export_it"],
        )],
    );
    let b = bind(
        &p,
        "export_it",
        Some("export the philosophy to philosophy.md"),
    );
    assert_eq!(
        pairs(&b),
        [
            inv(Some("philosophy.md")),
            to_carry(Rule::Role, "philosophy_md")
        ]
    );
}

/// SENSE_PATH_IR: "a SENSE tool's input path resolves from the task, never None".
#[test]
fn sense_path_ir_reads_the_task_named_file() {
    let p = program(
        vec![input("task", "str"), carry("rows", "list")],
        vec![
            with_tool(
                instr("read_it", Opcode::Sense, &[], &["rows"]),
                "read_input_csv",
            ),
            instr("done", Opcode::Terminal, &["rows"], &[]),
        ],
        vec![serving(
            tool("read_input_csv", "(path: str) -> list", "SENSE"),
            &["read_it"],
        )],
    );
    assert_eq!(pairs(&bind(&p, "read_it", None)), [inv(None)]);
    assert_eq!(
        pairs(&bind(
            &p,
            "read_it",
            Some("clean data.csv and save as out.csv")
        )),
        [inv(Some("data.csv"))]
    );
    // The list result goes whole into `rows`.
    let rows = json(r#"[["a", "b"], ["1", "2"]]"#);
    let sig = parse("(path: str) -> list").unwrap();
    assert_eq!(
        recover_writes(&strings(&["rows"]), &rows, &sig.ret),
        [Some(rows.clone())]
    );
}

/// MIXED_INPUT_IR: a path-shaped input carry binds its parameter by name.
#[test]
fn mixed_input_ir_binds_src_path_by_name() {
    let p = program(
        vec![
            input("task", "str"),
            input("src_path", "str"),
            input("retries", "int"),
            carry("seen", "bool"),
        ],
        vec![with_tool(
            instr("peek_it", Opcode::Sense, &["src_path"], &["seen"]),
            "peek",
        )],
        vec![tool("peek", "(src_path: str) -> bool", "SENSE")],
    );
    assert_eq!(
        pairs(&bind(&p, "peek_it", Some("peek at x.csv"))),
        [to_carry(Rule::Name, "src_path")]
    );
}

/// MULTI_WRITE_IR: "a multi-write tool is destructured into EVERY carry it writes".
#[test]
fn multi_write_ir_destructures_into_every_carry() {
    let sig = parse("(sentence: str) -> (verdict_report, ok)").unwrap();
    let p = program(
        vec![
            input("task", "str"),
            input("sentence", "str"),
            carry("verdict_report", "str"),
            carry("ok", "bool"),
        ],
        vec![with_tool(
            instr(
                "check_it",
                Opcode::Sense,
                &["sentence"],
                &["verdict_report", "ok"],
            ),
            "verify_all",
        )],
        vec![tool("verify_all", &sig.to_string(), "SENSE")],
    );
    assert_eq!(
        pairs(&bind(&p, "check_it", None)),
        [to_carry(Rule::Name, "sentence")]
    );
    let writes = &p.instruction("check_it").unwrap().1.writes;
    let result = json(r#"{"verdict_report": "words ok", "ok": true}"#);
    assert_eq!(
        recover_writes(writes, &result, &sig.ret.resolved(&p)),
        [Some("words ok".into()), Some(true.into())]
    );
}

/// BUDGET_ROUTE_IR: `(task) -> (errors,ok)` returning a tuple, and `(round) -> round` writing
/// its own read carry, so the round budget can move.
#[test]
fn budget_route_ir_recovers_tuple_and_bare_name_results() {
    let p = program(
        vec![
            input("task", "str"),
            carry("errors", "str"),
            carry("ok", "bool"),
            carry("round", "int"),
        ],
        vec![
            with_tool(
                instr("check_it", Opcode::Route, &["task"], &["errors", "ok"]),
                "check_it",
            ),
            with_tool(instr("bump", Opcode::Code, &["round"], &["round"]), "bump"),
            instr("done", Opcode::Terminal, &[], &[]),
        ],
        vec![
            tool("check_it", "(task) -> (errors,ok)", ""),
            tool("bump", "(round) -> round", ""),
        ],
    );
    assert_eq!(
        pairs(&bind(&p, "check_it", None)),
        [to_carry(Rule::Name, "task")]
    );
    assert_eq!(
        pairs(&bind(&p, "bump", None)),
        [to_carry(Rule::Name, "round")]
    );
    let check = parse("(task) -> (errors,ok)").unwrap().ret;
    assert_eq!(
        recover_writes(&strings(&["errors", "ok"]), &json(r#"["", true]"#), &check),
        [Some("".into()), Some(true.into())]
    );
    let bump = parse("(round) -> round").unwrap().ret;
    assert_eq!(bump, Return::Tuple(strings(&["round"])));
    assert_eq!(
        recover_writes(&strings(&["round"]), &Value::Int(1), &bump),
        [Some(Value::Int(1))]
    );
}

/// REPAIR_IR: six verdicts recovered by position; the gate's parameters bind by name and its
/// bare result names a carry; "a slot keeps every declared read, and its call site matches its
/// arity".
#[test]
fn repair_ir_binds_verdicts_and_keeps_every_slot_read() {
    let verdicts = ["c1", "c2", "c3", "c4", "c5", "c6"];
    let mut carries = vec![
        input("task", "str"),
        input("source", "list[str]"),
        carry("answer", "list[str]"),
        carry("all_ok", "bool"),
    ];
    carries.extend(verdicts.iter().map(|c| carry(c, "bool")));
    let mut fixit_reads = vec!["answer"];
    fixit_reads.extend(verdicts);
    let p = program(
        carries,
        vec![
            instr("propose", Opcode::GenFill, &["source"], &["answer"]),
            with_tool(
                instr("checks", Opcode::Code, &["answer"], &verdicts),
                "run_checks",
            ),
            with_tool(
                instr("gate", Opcode::Route, &verdicts, &["all_ok"]),
                "gate_all",
            ),
            instr("fixit", Opcode::GenEdit, &fixit_reads, &["answer"]),
            instr("done", Opcode::Terminal, &[], &[]),
        ],
        vec![
            tool("run_checks", "(answer) -> (c1,c2,c3,c4,c5,c6)", "SENSE"),
            tool("gate_all", "(c1,c2,c3,c4,c5,c6) -> all_ok", "SENSE"),
        ],
    );
    assert_eq!(
        pairs(&bind(&p, "checks", None)),
        [to_carry(Rule::Name, "answer")]
    );
    let gate = bind(&p, "gate", None);
    assert_eq!(
        pairs(&gate),
        verdicts
            .iter()
            .map(|c| to_carry(Rule::Name, c))
            .collect::<Vec<_>>()
    );
    let gate_ret = parse("(c1,c2,c3,c4,c5,c6) -> all_ok")
        .unwrap()
        .ret
        .resolved(&p);
    assert_eq!(gate_ret, Return::Tuple(strings(&["all_ok"])));
    assert_eq!(
        recover_writes(&strings(&["all_ok"]), &Value::Bool(false), &gate_ret),
        [Some(Value::Bool(false))]
    );

    let checks_ret = parse("(answer) -> (c1,c2,c3,c4,c5,c6)").unwrap().ret;
    let got = recover_writes(
        &strings(&verdicts),
        &json("[true, true, true, false, false, false]"),
        &checks_ret,
    );
    assert_eq!(got[2], Some(true.into()));
    assert_eq!(got[3], Some(false.into()));

    let fixit = ProgramIndex::new(&p).bind_slot(p.instruction("fixit").unwrap().1);
    assert_eq!(fixit.names(), fixit_reads);
    let propose = ProgramIndex::new(&p).bind_slot(p.instruction("propose").unwrap().1);
    assert_eq!(propose.names(), ["source"]);
}

/// CMD_IR: the `command` placeholder `{target_dir}` is filled by name from a `path`-typed
/// input carry.
#[test]
fn cmd_ir_binds_the_placeholder_parameter_by_name() {
    let p = program(
        vec![
            input("task", "str"),
            input("target_dir", "path"),
            carry("out", "str"),
        ],
        vec![with_tool(
            instr("look", Opcode::Sense, &["target_dir"], &["out"]),
            "report",
        )],
        vec![tool("report", "(target_dir) -> str", "SENSE")],
    );
    assert_eq!(
        pairs(&bind(&p, "look", Some("report on ./site"))),
        [to_carry(Rule::Name, "target_dir")]
    );
    assert!(ProgramIndex::new(&p).is_path_shaped_carry("target_dir"));
    // CMD_IR's carry named `out` is a bare parameter name (§7.4).
    assert!(is_bare_param_name("out"));
}

/// CARRY_IR: "a dict carry is ASSIGNED … an int carry is ASSIGNED".
#[test]
fn carry_ir_assigns_both_carries_from_a_dict_result() {
    let ret = parse("(task) -> dict").unwrap().ret;
    let result = json(r#"{"bundle": {"n": 1}, "rounds": 1}"#);
    assert_eq!(
        recover_writes(&strings(&["bundle", "rounds"]), &result, &ret),
        [Some(json(r#"{"n": 1}"#)), Some(Value::Int(1))]
    );
}

/// MULTIWRITE_IR: "a model node's writes AFTER the first are resolved, not left empty"; the
/// save then binds both by name.
#[test]
fn multiwrite_ir_resolves_the_later_writes_of_a_slot() {
    let p = program(
        vec![
            input("task", "str"),
            carry("choice", "dict"),
            carry("chosen_file", "path"),
            carry("note", "str"),
            carry("saved", "str"),
        ],
        vec![
            instr(
                "choose",
                Opcode::GenFill,
                &["task"],
                &["choice", "chosen_file", "note"],
            ),
            with_tool(
                instr("store", Opcode::Act, &["chosen_file", "note"], &["saved"]),
                "save",
            ),
        ],
        vec![tool("save", "(chosen_file, note) -> str", "ACT")],
    );
    let writes = &p.instruction("choose").unwrap().1.writes;
    let result = json(r#"{"chosen_file": "pick.txt", "note": "because"}"#);
    let got = recover_writes(writes, &result, &Return::None);
    assert_eq!(got[0], Some(result.clone()));
    assert_eq!(got[1], Some("pick.txt".into()));
    assert_eq!(got[2], Some("because".into()));
    assert_eq!(
        pairs(&bind(&p, "store", None)),
        [
            to_carry(Rule::Name, "chosen_file"),
            to_carry(Rule::Name, "note")
        ]
    );
    assert_eq!(
        ProgramIndex::new(&p)
            .bind_slot(p.instruction("choose").unwrap().1)
            .names(),
        ["task"]
    );
}
