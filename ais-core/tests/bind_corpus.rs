//! The calling convention over the corpus files themselves, read by the AG-IR reader: the
//! programs the corpus README lists as exercising binding bind as its tests expect, and every
//! tool-bound instruction of every readable corpus program binds without breaking an
//! invariant.

use ais_core::Program;
use ais_core::bind::*;
use ais_core::sig::{Return, Signature, parse};

use crate::support;
use support::{agir_files, corpus};

fn load(rel: &str) -> Option<Program> {
    let dir = corpus()?;
    let path = dir.join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc = ais_core::agir::read(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Some(doc.program)
}

/// The signature of the (first) tool bound to `id`, and the bindings for it.
fn bind_at(p: &Program, id: &str, invocation: Option<&str>) -> (Signature, Vec<ParamBinding>) {
    let (_, i) = p.instruction(id).expect("instruction");
    let t = ProgramIndex::new(p)
        .bound_tools(i)
        .into_iter()
        .next()
        .expect("a bound tool");
    let sig = parse(t.sig.as_deref().expect("sig")).expect("sig parses");
    let b = ProgramIndex::new(p).bind_tool(i, &sig, invocation);
    (sig, b)
}

fn summary(b: &[ParamBinding]) -> Vec<(String, Rule, BindSource)> {
    b.iter()
        .map(|x| (x.param.clone(), x.rule, x.source.clone()))
        .collect()
}

fn carry(param: &str, rule: Rule, c: &str) -> (String, Rule, BindSource) {
    (param.into(), rule, BindSource::Carry(c.into()))
}

fn invoked(param: &str, file: Option<&str>) -> (String, Rule, BindSource) {
    (
        param.into(),
        Rule::InvocationFallback,
        BindSource::Invocation(file.map(str::to_owned)),
    )
}

fn json(s: &str) -> ais_core::Value {
    ais_core::Value::from_json(&serde_json::from_str(s).unwrap())
}

#[test]
fn act_path_ir() {
    let Some(p) = load("compiler_test/ACT_PATH_IR.agir") else {
        return;
    };
    let (_, b) = bind_at(&p, "save_it", None);
    assert_eq!(
        summary(&b),
        [carry("content", Rule::Role, "note"), invoked("path", None)]
    );
    let (_, b) = bind_at(&p, "save_it", Some("save the note as note.txt"));
    assert_eq!(b[1].source, BindSource::Invocation(Some("note.txt".into())));
}

#[test]
fn act_pathfirst_ir() {
    let Some(p) = load("compiler_test/ACT_PATHFIRST_IR.agir") else {
        return;
    };
    let (_, b) = bind_at(&p, "export_it", None);
    assert_eq!(
        summary(&b),
        [
            invoked("path", None),
            carry("content", Rule::Role, "philosophy_md")
        ]
    );
}

#[test]
fn sense_path_ir() {
    let Some(p) = load("compiler_test/SENSE_PATH_IR.agir") else {
        return;
    };
    let (_, b) = bind_at(&p, "read_it", Some("clean data.csv and save as out.csv"));
    assert_eq!(summary(&b), [invoked("path", Some("data.csv"))]);
    let (_, i) = p.instruction("read_it").unwrap();
    assert_eq!(ProgramIndex::new(&p).access(i), Access::Read);
}

#[test]
fn mixed_input_ir() {
    let Some(p) = load("compiler_test/MIXED_INPUT_IR.agir") else {
        return;
    };
    let (_, b) = bind_at(&p, "peek_it", None);
    assert_eq!(summary(&b), [carry("src_path", Rule::Name, "src_path")]);
}

#[test]
fn multi_write_ir() {
    let Some(p) = load("compiler_test/MULTI_WRITE_IR.agir") else {
        return;
    };
    let (sig, b) = bind_at(&p, "check_it", None);
    assert_eq!(summary(&b), [carry("sentence", Rule::Name, "sentence")]);
    let (_, i) = p.instruction("check_it").unwrap();
    let got = recover_writes(
        &i.writes,
        &json(r#"{"verdict_report": "too long", "ok": false}"#),
        &sig.ret.resolved(&p),
    );
    assert_eq!(got, [Some("too long".into()), Some(false.into())]);
}

#[test]
fn budget_route_ir() {
    let Some(p) = load("compiler_test/BUDGET_ROUTE_IR.agir") else {
        return;
    };
    let (sig, b) = bind_at(&p, "check_it", None);
    assert_eq!(summary(&b), [carry("task", Rule::Name, "task")]);
    let (_, i) = p.instruction("check_it").unwrap();
    assert_eq!(
        recover_writes(&i.writes, &json(r#"["", true]"#), &sig.ret.resolved(&p)),
        [Some("".into()), Some(true.into())]
    );
    let (sig, b) = bind_at(&p, "bump", None);
    assert_eq!(summary(&b), [carry("round", Rule::Name, "round")]);
    assert_eq!(sig.ret, Return::Tuple(vec!["round".into()]));
    let (_, i) = p.instruction("bump").unwrap();
    assert_eq!(
        recover_writes(&i.writes, &json("2"), &sig.ret),
        [Some(json("2"))]
    );
}

#[test]
fn repair_ir() {
    let Some(p) = load("compiler_test/REPAIR_IR.agir") else {
        return;
    };
    let (sig, b) = bind_at(&p, "gate", None);
    assert_eq!(b.len(), 6);
    assert!(b.iter().all(|x| x.rule == Rule::Name));
    assert_eq!(sig.ret.resolved(&p), Return::Tuple(vec!["all_ok".into()]));
    let (sig, _) = bind_at(&p, "checks", None);
    let (_, i) = p.instruction("checks").unwrap();
    let got = recover_writes(
        &i.writes,
        &json("[true, true, false, false, false, false]"),
        &sig.ret,
    );
    assert_eq!(got.len(), 6);
    assert_eq!(got[1], Some(true.into()));
    assert_eq!(got[2], Some(false.into()));
    // "a slot keeps every declared read, and its call site matches its arity"
    let (_, fixit) = p.instruction("fixit").unwrap();
    let slot = ProgramIndex::new(&p).bind_slot(fixit);
    assert_eq!(slot.names(), fixit.reads);
}

#[test]
fn cmd_ir() {
    let Some(p) = load("lowering_fix_tests/CMD_IR.agir") else {
        return;
    };
    let (_, b) = bind_at(&p, "look", Some("report on the site"));
    assert_eq!(summary(&b), [carry("target_dir", Rule::Name, "target_dir")]);
    assert!(ProgramIndex::new(&p).is_path_shaped_carry("target_dir"));
}

#[test]
fn carry_ir_and_multiwrite_ir() {
    let Some(p) = load("lowering_fix_tests/CARRY_IR.agir") else {
        return;
    };
    let (sig, _) = bind_at(&p, "collect", None);
    let (_, i) = p.instruction("collect").unwrap();
    assert_eq!(
        recover_writes(
            &i.writes,
            &json(r#"{"bundle": {"n": 1}, "rounds": 1}"#),
            &sig.ret
        ),
        [Some(json(r#"{"n": 1}"#)), Some(json("1"))]
    );
    let Some(p) = load("lowering_fix_tests/MULTIWRITE_IR.agir") else {
        return;
    };
    let (_, choose) = p.instruction("choose").unwrap();
    let got = recover_writes(
        &choose.writes,
        &json(r#"{"chosen_file": "a.txt", "note": "n"}"#),
        &Return::None,
    );
    assert_eq!(got[1], Some("a.txt".into()));
    assert_eq!(got[2], Some("n".into()));
    let (_, b) = bind_at(&p, "store", None);
    assert!(b.iter().all(|x| x.rule == Rule::Name));
}

/// Every instruction of every corpus program the reader accepts: each bound tool with a
/// parsable signature binds one entry per parameter, never a carry twice, and every SU
/// instruction's slot stays within the cap.
#[test]
fn every_corpus_instruction_binds() {
    let Some(dir) = corpus() else { return };
    let files = agir_files(&dir);
    let mut bound = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let Ok(doc) = ais_core::agir::read(&text) else {
            continue; // deliberately malformed fixtures
        };
        let p = &doc.program;
        for i in p.instructions() {
            for t in ProgramIndex::new(p).bound_tools(i) {
                let Some(Ok(sig)) = t.sig.as_deref().map(parse) else {
                    continue;
                };
                for invocation in [None, Some("clean data.csv and save as out.csv")] {
                    let b = ProgramIndex::new(p).bind_tool(i, &sig, invocation);
                    assert_eq!(b.len(), sig.params.len(), "{}: {}", f.display(), i.id);
                    let mut whole: Vec<&str> = b
                        .iter()
                        .filter_map(|x| match &x.source {
                            BindSource::Carry(c) => Some(c.as_str()),
                            _ => None,
                        })
                        .collect();
                    let n = whole.len();
                    whole.sort_unstable();
                    whole.dedup();
                    assert_eq!(whole.len(), n, "{}: {}", f.display(), i.id);
                    bound += 1;
                }
            }
            if i.is_su() {
                assert!(ProgramIndex::new(p).bind_slot(i).operands.len() <= SLOT_ARITY_CAP);
            }
        }
    }
    assert!(bound > 20, "only {bound} tool bindings checked");
}
