//! A test per operation: each catalog example applies (in its patch) to
//! `examples/writing_plans.agir`, and each operation's rejections answer with the next call.

use crate::support;
use serde_json::{Value as Json, json};
use support::*;

/// The example patch of `op`, with `GEN` replaced by the generation of the instruction the
/// operation names.
fn example_patch(f: &Fixture, op: &str) -> Json {
    let info = ais_edit::ops::catalog()
        .into_iter()
        .find(|o| o.op == op)
        .unwrap();
    let text = info.in_patch.to_string();
    if text.contains("\"GEN\"") {
        let id = info.example["id"].as_str().unwrap();
        let g = f.generation(&format!("instruction:{id}"));
        return serde_json::from_str(&text.replace("\"GEN\"", &format!("\"{g}\""))).unwrap();
    }
    info.in_patch
}

#[test]
fn every_operation_has_an_example_that_is_accepted_and_changes_the_file() {
    let catalog = ais_edit::ops::catalog();
    assert_eq!(catalog.len(), 35);
    let mut unchanged = Vec::new();
    for info in &catalog {
        let f = Fixture::new();
        assert!(
            info.schema["properties"]["op"].is_object(),
            "{} has no schema",
            info.op
        );
        assert!(!info.summary.is_empty(), "{}", info.op);
        let r = f.ok(example_patch(&f, info.op));
        if r["written"] != true {
            unchanged.push(info.op);
            continue;
        }
        assert!(r["diff"].as_str().unwrap().contains("@@"), "{}", info.op);
        assert_ne!(f.text(), PLAN, "{}", info.op);
        // Each example's own schema accepts it.
        let ops: Vec<ais_edit::ops::Op> = serde_json::from_value(example_patch(&f, info.op))
            .unwrap_or_else(|e| panic!("{}: {e}", info.op));
        assert!(!ops.is_empty());
    }
    assert!(unchanged.is_empty(), "{unchanged:?}");
}

#[test]
fn dry_run_writes_nothing_and_reports_the_same_diff() {
    let f = Fixture::new();
    let ops = json!([{"op": "rename", "target": "carry:plan_md", "to": "plan"}]);
    let dry = f.call(
        "patch",
        json!({"file": "plan.agir", "ops": ops, "dry_run": true}),
    );
    assert_eq!(dry["status"], "ok");
    assert_eq!(dry["written"], false);
    assert_eq!(f.text(), PLAN);
    let wet = f.ok(ops);
    assert_eq!(dry["diff"], wet["diff"]);
    assert_eq!(dry["generation"], wet["generation"]);
}

#[test]
fn set_program_rejects_a_name_with_path_characters() {
    let f = Fixture::new();
    let r = f.rejected(
        json!([{"op": "set_program", "name": "../../etc/passwd"}]),
        "invalid_name",
    );
    assert!(
        repairs(&r)
            .iter()
            .any(|(v, a)| v == "help" && a["op"] == "set_program")
    );
}

#[test]
fn add_instruction_rejects_a_collision_and_an_unknown_anchor() {
    let f = Fixture::new();
    let spec = json!({"id": "verify", "type": "GEN-RAW", "doc": "x"});
    let r = f.rejected(
        json!([{"op": "add_instruction", "instruction": spec}]),
        "collision",
    );
    assert!(
        repairs(&r)
            .iter()
            .any(|(v, a)| v == "view" && a["target"] == "instruction:verify")
    );
    let spec = json!({"id": "fresh", "type": "GEN-RAW", "doc": "x"});
    let r = f.rejected(
        json!([{"op": "add_instruction", "instruction": spec, "after": "verfy"}]),
        "unknown_target",
    );
    assert_eq!(r["did_you_mean"][0], "verify");
    // Not connected: the validator's W7 is new, so the corrected call is rejected for that,
    // never again for the name.
    let (verb, args) = &repairs(&r)[0];
    let again = f.call(verb, args.clone());
    assert_eq!(again["reason"], "new_findings");
    assert!(again["diagnostics"][0]["line"].is_number());
}

#[test]
fn add_instruction_rejects_an_unknown_field_naming_it_with_the_help() {
    let f = Fixture::new();
    let spec = json!({"id": "x", "type": "GEN-RAW", "dok": "x"});
    let r = f.rejected(
        json!([{"op": "add_instruction", "instruction": spec}]),
        "bad_shape",
    );
    assert!(r["detail"].as_str().unwrap().contains("dok"), "{r}");
    assert!(
        repairs(&r)
            .iter()
            .any(|(v, a)| v == "help" && a["op"] == "add_instruction")
    );
    let r = f.rejected(
        json!([{"op": "add_instrution", "instruction": spec}]),
        "bad_shape",
    );
    assert_eq!(r["did_you_mean"][0], "add_instruction");
}

#[test]
fn replace_instruction_keeps_the_id_and_offers_a_rename() {
    let f = Fixture::new();
    let spec = json!({"id": "check", "type": "SENSE", "owner": "code", "tool": "verify_has_tasks", "reads": ["plan_md"], "writes": ["plan_ok"]});
    let r = f.rejected(
        json!([{"op": "replace_instruction", "id": "verify", "instruction": spec}]),
        "bad_shape",
    );
    let (verb, args) = &repairs(&r)[0];
    assert_eq!(verb, "patch");
    assert_eq!(args["ops"][0]["op"], "rename");
    assert_eq!(args["ops"][1]["id"], "check");
    assert_eq!(f.call(verb, args.clone())["status"], "ok");
    assert!(f.program().instruction("check").is_some());
}

#[test]
fn delete_instruction_is_refused_while_referenced_and_the_repair_removes_the_references() {
    let f = Fixture::new();
    f.ok(json!([
        {"op": "insert_between", "from": "verify", "to": "save", "instruction": {"id": "x", "type": "GEN-EDIT", "reads": ["plan_md"], "writes": ["plan_md"], "doc": "a"}},
        {"op": "insert_between", "from": "x", "to": "save", "instruction": {"id": "y", "type": "GEN-EDIT", "reads": ["plan_md"], "writes": ["plan_md"], "doc": "b"}},
    ]));
    let r = f.rejected(
        json!([{"op": "delete_instruction", "ids": ["x", "y"]}]),
        "referenced",
    );
    let detail = r["detail"].as_str().unwrap();
    assert!(
        detail.contains("edge:verify->x") && detail.contains("edge:y->save"),
        "{detail}"
    );
    assert!(
        !detail.contains("edge:x->y"),
        "an edge inside the set is no reference: {detail}"
    );
    // The repair removes the references first; then the program is left with no way to
    // `save` — a new finding, never `referenced` again.
    let (verb, args) = &repairs(&r)[0];
    let again = f.call(verb, args.clone());
    assert_ne!(again["reason"], "referenced", "{again}");
    // With the bypass edge the batch goes through; the edge inside the set goes with it.
    f.ok(json!([
        {"op": "remove_edge", "from": "verify", "to": "x"},
        {"op": "remove_edge", "from": "y", "to": "save"},
        {"op": "add_edge", "from": "verify", "to": "save"},
        {"op": "delete_instruction", "ids": ["x", "y"]},
    ]));
    let p = f.program();
    assert!(p.instruction("x").is_none() && p.instruction("y").is_none());
    assert!(!p.edge_list().iter().any(|e| e.from == "x"));
}

#[test]
fn insert_between_rejects_an_edge_that_does_not_exist_with_the_view() {
    let f = Fixture::new();
    let spec = json!({"id": "z", "type": "GEN-RAW", "doc": "x"});
    let r = f.rejected(
        json!([{"op": "insert_between", "from": "verify", "to": "done", "instruction": spec}]),
        "unknown_target",
    );
    assert!(r["detail"].as_str().unwrap().contains("save"), "{r}");
    assert!(
        repairs(&r)
            .iter()
            .any(|(v, a)| v == "view" && a["target"] == "instruction:verify")
    );
}

#[test]
fn set_owner_rejects_a_misspelled_owner_with_the_corrected_patch() {
    let f = Fixture::new();
    let r = f.rejected(
        json!([{"op": "set_owner", "id": "verify", "owner": "cod"}]),
        "bad_shape",
    );
    assert_eq!(r["did_you_mean"][0], "code");
    let (verb, args) = &repairs(&r)[0];
    assert_eq!(args["ops"][0]["owner"], "code");
    assert_eq!(f.call(verb, args.clone())["status"], "ok");
}

#[test]
fn set_reads_and_set_writes_reject_unknown_carries() {
    let f = Fixture::new();
    let r = f.rejected(
        json!([{"op": "set_reads", "id": "verify", "reads": ["plan_mdd"]}]),
        "unknown_target",
    );
    assert_eq!(r["did_you_mean"][0], "plan_md");
    let (verb, args) = &repairs(&r)[0];
    assert_eq!(args["ops"][0]["reads"], json!(["plan_md"]));
    assert_eq!(f.call(verb, args.clone())["status"], "ok");
    let r = f.rejected(
        json!([{"op": "set_writes", "id": "verify", "writes": ["plan_okk"]}]),
        "unknown_target",
    );
    assert_eq!(r["did_you_mean"][0], "plan_ok");
}

#[test]
fn set_output_rejects_text_that_is_no_type() {
    let f = Fixture::new();
    f.rejected(
        json!([{"op": "set_output", "id": "draft_header", "type": "list[str"}]),
        "bad_shape",
    );
    f.rejected(
        json!([{"op": "set_output", "id": "draft_header", "type": "Nope"}]),
        "new_findings",
    );
}

#[test]
fn set_body_checks_the_expression_in_scope() {
    let f = Fixture::new();
    f.ok(example_patch(&f, "set_body"));
    let r = f.rejected(
        json!([{"op": "set_body", "id": "count", "body": "len(plan_mdd)"}]),
        "invalid_expression",
    );
    assert_eq!(r["diagnostics"][0]["code"], "name_error");
    assert_eq!(r["diagnostics"][0]["line"], 1);
    assert_eq!(r["diagnostics"][0]["column"], 5);
    let (verb, args) = &repairs(&r)[0];
    assert_eq!(args["ops"][0]["body"], "len(plan_md)");
    assert_eq!(f.call(verb, args.clone())["status"], "ok");
    assert!(
        repairs(&r)
            .iter()
            .any(|(v, a)| v == "query" && a["q"] == "plan_mdd")
    );
    f.rejected(
        json!([{"op": "set_body", "id": "count", "body": "len(plan_md"}]),
        "invalid_expression",
    );
}

#[test]
fn bind_and_set_autonomy_reject_unknown_tools() {
    let f = Fixture::new();
    let r = f.rejected(
        json!([{"op": "bind", "id": "verify", "tool": "verify_has_task"}]),
        "unknown_target",
    );
    assert_eq!(r["did_you_mean"][0], "verify_has_tasks");
    let r = f.rejected(
        json!([{"op": "set_autonomy", "id": "write_tasks", "tools": ["save_pln"]}]),
        "unknown_target",
    );
    assert_eq!(r["did_you_mean"][0], "save_plan");
}

#[test]
fn handles_are_checked_against_the_generation_the_view_reported() {
    let f = Fixture::new();
    let v = f.call(
        "view",
        json!({"file": "plan.agir", "target": "instruction:verify"}),
    );
    let g = v["generation"].as_str().unwrap().to_owned();
    assert_eq!(v["handles"][0]["part"], "doc");
    assert_eq!(v["handles"][1]["part"], "reads[0]");
    assert!(
        v["text"]
            .as_str()
            .unwrap()
            .contains("n2: reads[0] = \"plan_md\""),
        "{}",
        v["text"]
    );
    // An unknown handle: the re-view.
    let r = f.rejected(
        json!([{"op": "set_part", "id": "verify", "at": "n99", "value": "x", "generation": g}]),
        "unknown_handle",
    );
    let (verb, args) = &repairs(&r)[0];
    assert_eq!(
        (verb.as_str(), &args["target"]),
        ("view", &json!("instruction:verify"))
    );
    f.ok(json!([{"op": "set_part", "id": "verify", "at": "n1", "value": "Check the plan.", "generation": g}]));
    // The same handle on the old generation: stale, with the re-view.
    let r = f.rejected(
        json!([{"op": "set_part", "id": "verify", "at": "n1", "value": "Again.", "generation": g}]),
        "stale_generation",
    );
    assert!(repairs(&r).iter().all(|(v, _)| v == "view"));
    assert_ne!(f.generation("instruction:verify"), g);
    // A handle on a guard sets the outgoing edge's guard.
    f.ok(
        json!([{"op": "add_edge", "from": "verify", "to": "write_tasks", "guard": "not plan_ok"}]),
    );
    let v = f.call("view", json!({"file": "plan.agir", "target": "verify"}));
    let guard = v["handles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["part"] == "guard of edge:verify->save")
        .unwrap();
    f.ok(json!([{"op": "set_part", "id": "verify", "at": guard["handle"], "value": "plan_ok", "generation": v["generation"]}]));
    assert_eq!(f.program().edge_list()[3].guard.as_deref(), Some("plan_ok"));
}

#[test]
fn remove_part_removes_an_entry() {
    let f = Fixture::new();
    f.ok(example_patch(&f, "remove_part"));
    assert_eq!(
        f.program().instruction("write_tasks").unwrap().1.reads,
        ["task"]
    );
    let g = f.generation("instruction:write_tasks");
    f.rejected(
        json!([{"op": "remove_part", "id": "write_tasks", "at": "n0", "generation": g}]),
        "unknown_handle",
    );
}

#[test]
fn edges_are_added_guarded_reordered_and_removed() {
    let f = Fixture::new();
    let r = f.rejected(
        json!([{"op": "add_edge", "from": "verify", "to": "write_tasks", "guard": "plan_okk == false"}]),
        "invalid_expression",
    );
    assert_eq!(r["did_you_mean"][0], "plan_ok");
    let (verb, args) = &repairs(&r)[0];
    assert_eq!(args["ops"][0]["guard"], "plan_ok == false");
    assert_eq!(f.call(verb, args.clone())["status"], "ok");
    f.ok(json!([{"op": "set_guard", "from": "verify", "to": "save", "guard": "plan_ok"}]));
    f.ok(json!([{"op": "reorder_edges", "from": "verify", "order": ["write_tasks", "save"]}]));
    let p = f.program();
    let out: Vec<&str> = p
        .edge_list()
        .iter()
        .filter(|e| e.from == "verify")
        .map(|e| e.to.as_str())
        .collect();
    assert_eq!(out, ["write_tasks", "save"]);
    f.rejected(
        json!([{"op": "reorder_edges", "from": "verify", "order": ["save"]}]),
        "bad_shape",
    );
    f.rejected(
        json!([{"op": "set_modality", "from": "verify", "to": "save", "modality": "mandatroy"}]),
        "bad_shape",
    );
    f.rejected(
        json!([{"op": "add_edge", "from": "verify", "to": "nowhere"}]),
        "unknown_target",
    );
    // Removing the only way to the TERMINAL is a new finding.
    let r = f.rejected(
        json!([{"op": "remove_edge", "from": "save", "to": "done"}]),
        "new_findings",
    );
    assert_eq!(r["diagnostics"][0]["code"], "W6");
    f.ok(json!([{"op": "remove_edge", "from": "verify", "to": "write_tasks"}, {"op": "set_guard", "from": "verify", "to": "save", "guard": null}]));
    assert_eq!(f.program().edge_list().len(), 5);
}

#[test]
fn carries_are_added_retyped_and_given_a_producer() {
    let f = Fixture::new();
    let r = f.rejected(
        json!([{"op": "add_carry", "carry": {"name": "task", "type": "str"}}]),
        "collision",
    );
    assert!(repairs(&r).iter().any(|(v, _)| v == "view"));
    f.rejected(
        json!([{"op": "add_carry", "carry": {"name": "a/b", "type": "str"}}]),
        "invalid_name",
    );
    f.rejected(
        json!([{"op": "add_carry", "carry": {"name": "and", "type": "str"}}]),
        "invalid_name",
    );
    // No origin: the validator's W10.
    let r = f.rejected(
        json!([{"op": "add_carry", "carry": {"name": "notes", "type": "str"}}]),
        "new_findings",
    );
    assert_eq!(r["diagnostics"][0]["code"], "W10");
    f.rejected(
        json!([{"op": "retype_carry", "carry": "plan_file", "type": "list["}]),
        "bad_shape",
    );
    f.rejected(
        json!([{"op": "set_produced_by", "carry": "plan_file", "instruction": "sav"}]),
        "unknown_target",
    );
}

#[test]
fn a_new_finding_with_a_mechanical_repair_offers_the_patch_with_it() {
    let f = Fixture::new();
    // `count` writes an undeclared carry: a finding with the validator's MintCarry repair.
    let r = f.patch(json!([{"op": "add_instruction", "instruction": {"id": "count", "type": "CODE", "reads": ["plan_md"], "writes": ["words"], "body": "len(plan_md)"}, "after": "assemble"}, {"op": "remove_edge", "from": "assemble", "to": "verify"}, {"op": "add_edge", "from": "assemble", "to": "count"}, {"op": "add_edge", "from": "count", "to": "verify"}]));
    assert_eq!(r["reason"], "new_findings", "{r}");
    let fixed = repairs(&r)
        .into_iter()
        .find(|(v, _)| v == "patch")
        .expect("a corrected patch");
    let last = fixed.1["ops"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["op"], "add_carry", "{last}");
    assert_eq!(last["carry"]["name"], "words");
    let again = f.call(&fixed.0, fixed.1.clone());
    assert_eq!(again["status"], "ok", "{again}");
}

#[test]
fn tools_are_added_replaced_and_given_bodies_and_commands() {
    let f = Fixture::new();
    f.rejected(
        json!([{"op": "add_tool", "tool": {"name": "save_plan", "sig": "(x) -> str"}}]),
        "collision",
    );
    let r = f.rejected(json!([{"op": "add_tool", "tool": {"name": "lonely", "sig": "(plan_md) -> str", "body": "def lonely(plan_md):\n    return plan_md\n"}}]), "new_findings");
    assert_eq!(r["diagnostics"][0]["code"], "W11");
    let r = f.rejected(
        json!([{"op": "replace_tool", "name": "save_plan", "tool": {"name": "save", "sig": "(plan_md, path) -> str"}}]),
        "bad_shape",
    );
    assert_eq!(repairs(&r)[0].1["ops"][0]["op"], "rename");
    f.rejected(
        json!([{"op": "set_tool_body", "name": "nope", "body": "x"}]),
        "unknown_target",
    );
    f.rejected(
        json!([{"op": "set_command", "name": "nope", "command": "x"}]),
        "unknown_target",
    );
}

#[test]
fn knowledge_is_added_and_moved() {
    let f = Fixture::new();
    let r = f.rejected(
        json!([{"op": "add_knowledge", "knowledge": {"name": "k", "resident_on": ["draft_headr"], "template": "t"}}]),
        "unknown_target",
    );
    assert_eq!(r["did_you_mean"][0], "draft_header");
    f.rejected(
        json!([{"op": "add_knowledge", "knowledge": {"name": "task_format", "resident_on": [], "template": "t"}}]),
        "collision",
    );
    f.rejected(
        json!([{"op": "set_residency", "name": "task_format", "resident_on": ["nowhere"]}]),
        "unknown_target",
    );
}

#[test]
fn types_and_members_are_added_renamed_and_removed() {
    let f = Fixture::new();
    f.ok(json!([
        {"op": "add_type", "type": {"name": "Verdict", "kind": "enum", "members": [{"name": "pass"}, {"name": "fail"}]}},
        {"op": "add_carry", "carry": {"name": "verdict", "type": "Verdict", "produced_by": "judge"}},
        {"op": "insert_between", "from": "verify", "to": "save", "instruction": {"id": "judge", "type": "GEN-ENUM", "reads": ["plan_md"], "writes": ["verdict"], "doc": "Is the plan good?"}},
        {"op": "set_guard", "from": "judge", "to": "save", "guard": "verdict == Verdict.pass"},
        {"op": "add_edge", "from": "judge", "to": "write_tasks", "guard": "otherwise"},
    ]));
    f.rejected(
        json!([{"op": "add_type", "type": {"name": "Verdict", "kind": "enum"}}]),
        "collision",
    );
    f.rejected(
        json!([{"op": "add_type", "type": {"name": "V2", "kind": "enum", "members": [{"name": "a", "type": "str"}]}}]),
        "bad_shape",
    );
    let r = f.rejected(
        json!([{"op": "remove_type", "name": "Verdict"}]),
        "referenced",
    );
    assert!(
        r["detail"].as_str().unwrap().contains("carry:verdict"),
        "{r}"
    );
    let r = f.rejected(
        json!([{"op": "remove_member", "type": "Verdict", "member": "pass"}]),
        "referenced",
    );
    assert!(
        r["detail"].as_str().unwrap().contains("edge:judge->save"),
        "{r}"
    );
    f.rejected(
        json!([{"op": "add_member", "type": "Verdict", "member": {"name": "pass"}}]),
        "collision",
    );
    // Renaming a member rewrites the guards that name it.
    f.ok(json!([{"op": "rename", "target": "type:Verdict.pass", "to": "good"}]));
    let p = f.program();
    let guard = p
        .edge_list()
        .iter()
        .find(|e| e.from == "judge" && e.to == "save")
        .unwrap()
        .guard
        .clone();
    assert_eq!(guard.as_deref(), Some("verdict == Verdict.good"));
    // Renaming the type rewrites carries and `Type.member` in guards.
    f.ok(json!([{"op": "rename", "target": "type:Verdict", "to": "Judgement"}]));
    let p = f.program();
    assert_eq!(
        p.carry("verdict")
            .unwrap()
            .1
            .ty
            .as_ref()
            .unwrap()
            .to_string(),
        "Judgement"
    );
    assert!(
        p.edge_list()
            .iter()
            .any(|e| e.guard.as_deref() == Some("verdict == Judgement.good"))
    );
    f.ok(json!([{"op": "add_member", "type": "Judgement", "member": {"name": "unsure"}}]));
    f.ok(json!([{"op": "remove_member", "type": "Judgement", "member": "unsure"}]));
}

#[test]
fn rename_updates_every_reference_and_rejects_collision_and_capture() {
    let f = Fixture::new();
    f.ok(json!([{"op": "add_edge", "from": "verify", "to": "write_tasks", "guard": "not plan_ok", "position": 0}]));
    f.ok(json!([{"op": "rename", "target": "carry:plan_ok", "to": "has_tasks"}]));
    let p = f.program();
    assert_eq!(p.instruction("verify").unwrap().1.writes, ["has_tasks"]);
    assert!(
        p.edge_list()
            .iter()
            .any(|e| e.guard.as_deref() == Some("not has_tasks"))
    );
    let r = f.rejected(
        json!([{"op": "rename", "target": "carry:has_tasks", "to": "plan_md"}]),
        "collision",
    );
    assert!(repairs(&r).iter().any(|(v, _)| v == "view"));
    // Capture: a guard that already reads `task` for something else.
    f.ok(json!([{"op": "set_guard", "from": "verify", "to": "write_tasks", "guard": "not has_tasks and task != \"\""}]));
    let r = f.patch(json!([{"op": "rename", "target": "carry:has_tasks", "to": "task"}]));
    assert_eq!(r["reason"], "collision");
    // An instruction rename follows into edges and produced_by.
    f.ok(json!([{"op": "rename", "target": "instruction:verify", "to": "check"}]));
    let p = f.program();
    assert_eq!(
        p.carry("has_tasks").unwrap().1.produced_by.as_deref(),
        Some("check")
    );
    assert!(
        p.edge_list()
            .iter()
            .any(|e| e.from == "check" && e.to == "save")
    );
    // A tool rename follows into the bindings.
    f.ok(json!([{"op": "rename", "target": "tool:save_plan", "to": "write_plan"}]));
    assert_eq!(
        f.program().instruction("save").unwrap().1.tool.as_deref(),
        Some("write_plan")
    );
    // A bare name that exactly one element has works; an unknown one is corrected.
    let r = f.rejected(
        json!([{"op": "rename", "target": "plan_mdd", "to": "x"}]),
        "unknown_target",
    );
    assert_eq!(r["did_you_mean"][0], "carry:plan_md");
    assert_eq!(repairs(&r)[0].1["ops"][0]["target"], "carry:plan_md");
}

#[test]
fn rename_refuses_a_name_a_guard_uses_for_something_else() {
    let f = Fixture::new();
    f.ok(json!([
        {"op": "add_type", "type": {"name": "Mode", "kind": "enum", "members": [{"name": "fast"}, {"name": "slow"}]}},
        {"op": "add_carry", "carry": {"name": "mode", "type": "Mode", "role": "input"}},
        {"op": "add_edge", "from": "verify", "to": "write_tasks", "guard": "not plan_ok and mode == fast", "position": 0},
    ]));
    // `fast` in the guard is the enum member: a carry renamed to `fast` would capture it.
    let r = f.rejected(
        json!([{"op": "rename", "target": "carry:plan_ok", "to": "fast"}]),
        "capture",
    );
    assert!(repairs(&r).iter().any(|(v, _)| v == "view"));
}

#[test]
fn set_doc_and_set_traces_to() {
    let f = Fixture::new();
    f.ok(json!([{"op": "set_doc", "target": "carry:plan_md", "doc": "The plan."}]));
    assert_eq!(
        f.program().carry("plan_md").unwrap().1.doc.as_deref(),
        Some("The plan.")
    );
    f.rejected(
        json!([{"op": "set_doc", "target": "knowledge:task_format", "doc": "x"}]),
        "bad_shape",
    );
    f.rejected(
        json!([{"op": "set_doc", "target": "bogus:x", "doc": "x"}]),
        "bad_shape",
    );
    f.ok(json!([{"op": "set_traces_to", "target": "instruction:verify", "traces_to": ["O2"]}, {"op": "set_traces_to", "target": "edge:verify->save", "traces_to": ["O2"]}]));
    let q = f.call(
        "query",
        json!({"file": "plan.agir", "kind": "traced_by", "obligation": "O2"}),
    );
    assert_eq!(q["count"], 2, "{q}");
    let q = f.call(
        "query",
        json!({"file": "plan.agir", "kind": "traces", "target": "instruction:verify"}),
    );
    assert_eq!(q["hits"][0]["at"], "obligation:O2");
    f.rejected(
        json!([{"op": "set_traces_to", "target": "type:Nope", "traces_to": ["O1"]}]),
        "unknown_target",
    );
}

#[test]
fn later_operations_address_what_earlier_ones_created() {
    let f = Fixture::new();
    f.ok(json!([
        {"op": "insert_between", "from": "verify", "to": "save", "instruction": {"id": "polish", "type": "GEN-EDIT", "reads": ["plan_md"], "writes": ["plan_md"], "doc": "Polish."}},
        {"op": "set_doc", "target": "instruction:$1", "doc": "Polish the plan."},
        {"op": "set_owner", "id": "$1", "owner": "model"},
    ]));
    assert_eq!(
        f.program().instruction("polish").unwrap().1.doc.as_deref(),
        Some("Polish the plan.")
    );
}

#[test]
fn a_patch_whose_third_of_five_operations_fails_leaves_the_file_byte_identical() {
    let f = Fixture::new();
    let before = std::fs::read(f.path()).unwrap();
    let r = f.rejected(
        json!([
            {"op": "set_doc", "target": "instruction:assemble", "doc": "Join."},
            {"op": "rename", "target": "carry:plan_md", "to": "plan"},
            {"op": "set_reads", "id": "verify", "reads": ["plan_md"]},
            {"op": "set_owner", "id": "verify", "owner": "code"},
            {"op": "set_doc", "target": "program", "doc": "x"},
        ]),
        "unknown_target",
    );
    assert_eq!(r["op_index"], 2);
    assert_eq!(std::fs::read(f.path()).unwrap(), before);
    // The corrected patch names the renamed carry.
    assert_eq!(repairs(&r)[0].1["ops"][2]["reads"], json!(["plan"]));
    let leftovers: Vec<_> = std::fs::read_dir(f.dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
}

#[test]
fn a_stale_generation_is_rejected_with_the_re_view() {
    let f = Fixture::new();
    let g = f.generation("instruction:verify");
    let file_g = f.call("status", json!({"file": "plan.agir"}))["generation"].clone();
    f.ok(json!([{"op": "set_doc", "target": "instruction:verify", "doc": "Changed."}]));
    let r = f.rejected(
        json!([{"op": "set_owner", "id": "verify", "owner": "code", "generation": g}]),
        "stale_generation",
    );
    let rs = repairs(&r);
    assert_eq!(
        rs,
        vec![(
            "view".to_owned(),
            json!({"file": "plan.agir", "target": "instruction:verify"})
        )]
    );
    // Another element's generation is untouched by the patch, so a patch naming it applies.
    let other = f.generation("instruction:save");
    f.ok(json!([{"op": "set_owner", "id": "save", "owner": "code", "generation": other}]));
    let r = f.call("patch", json!({"file": "plan.agir", "generation": file_g, "ops": [{"op": "set_owner", "id": "save", "owner": "code"}]}));
    assert_eq!(r["reason"], "stale_generation");
    assert_eq!(repairs(&r)[0].0, "view");
}

#[test]
fn queries_answer_from_the_program() {
    let f = Fixture::new();
    let q = |args: Json| {
        let mut a = args;
        a["file"] = "plan.agir".into();
        f.call("query", a)
    };
    let r = q(json!({"kind": "readers", "carry": "plan_md"}));
    let at: Vec<&str> = r["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["at"].as_str().unwrap())
        .collect();
    assert_eq!(at, ["instruction:verify", "instruction:save"]);
    assert_eq!(
        q(json!({"kind": "writers", "carry": "plan_md"}))["hits"][0]["at"],
        "instruction:assemble"
    );
    assert_eq!(
        q(json!({"kind": "producer", "carry": "plan_md"}))["hits"][0]["how"],
        "produced_by"
    );
    assert_eq!(
        q(json!({"kind": "edges", "instruction": "verify"}))["count"],
        2
    );
    let paths = q(json!({"kind": "paths", "from": "draft_header", "to": "done"}));
    assert_eq!(paths["paths"][0].as_array().unwrap().len(), 6);
    assert_eq!(q(json!({"kind": "unreachable"}))["count"], 0);
    assert_eq!(
        q(json!({"kind": "tool_uses", "tool": "save_plan"}))["hits"][0]["at"],
        "instruction:save"
    );
    let s = q(json!({"kind": "search", "q": "PLAN"}));
    assert!(s["count"].as_u64().unwrap() >= 5);
    assert_eq!(
        q(json!({"kind": "references", "target": "instruction:verify"}))["count"],
        3
    );
    // Unknown names: the corrected query and the search.
    let r = q(json!({"kind": "readers", "carry": "plan_mdd"}));
    assert_eq!(r["status"], "rejected");
    assert_eq!(repairs(&r)[0].1["carry"], "plan_md");
    assert_eq!(
        f.call(&repairs(&r)[0].0, repairs(&r)[0].1.clone())["status"],
        "ok"
    );
    let r = q(json!({"kind": "readerz", "carry": "plan_md"}));
    assert_eq!(r["reason"], "bad_shape");
}

#[test]
fn view_and_status_and_help() {
    let f = Fixture::new();
    let v = f.call("view", json!({"file": "plan.agir", "target": "program"}));
    assert!(v["elements"].as_array().unwrap().len() > 15);
    let v = f.call(
        "view",
        json!({"file": "plan.agir", "target": "carry:plan_md"}),
    );
    assert!(
        v["text"]
            .as_str()
            .unwrap()
            .contains("produced_by: assemble")
    );
    let r = f.call(
        "view",
        json!({"file": "plan.agir", "target": "instruction:verfy"}),
    );
    assert_eq!(r["reason"], "unknown_target");
    assert_eq!(
        repairs(&r)[0],
        (
            "view".to_owned(),
            json!({"file": "plan.agir", "target": "instruction:verify"})
        )
    );
    let s = f.call("status", json!({}));
    assert_eq!(s["programs"][0]["file"], "plan.agir");
    assert_eq!(s["programs"][0]["outcome"], "clean");
    let h = f.call("help", json!({}));
    assert_eq!(h["catalog"], "ais-edit/1");
    assert_eq!(h["operations"].as_array().unwrap().len(), 35);
    let h = f.call("help", json!({"op": "renam"}));
    assert_eq!(repairs(&h)[0], ("help".to_owned(), json!({"op": "rename"})));
    let r = f.call("renam", json!({}));
    assert_eq!(r["reason"], "unknown_verb");
}

#[test]
fn sugar_verbs_are_one_operation_patches() {
    let f = Fixture::new();
    let r = f.call(
        "rename",
        json!({"file": "plan.agir", "target": "carry:plan_ok", "to": "ok_plan", "dry_run": true}),
    );
    assert_eq!(r["status"], "ok");
    assert_eq!(r["written"], false);
    let r = f.call(
        "set_doc",
        json!({"file": "plan.agir", "target": "instruction:verfy", "doc": "x"}),
    );
    assert_eq!(r["reason"], "unknown_target");
    // The repair is the sugar call again, corrected.
    let (verb, args) = &repairs(&r)[0];
    assert_eq!(verb, "set_doc");
    assert_eq!(args["target"], "instruction:verify");
    assert_eq!(f.call(verb, args.clone())["status"], "ok");
    let r = f.call("set_guard", json!({"file": "plan.agir", "from": "verify", "to": "save", "guard": "plan_ok", "extra": 1}));
    assert_eq!(r["reason"], "bad_shape");
}

#[test]
fn files_outside_the_root_and_rust_sources_are_refused() {
    let f = Fixture::new();
    let ops = json!([{"op": "set_doc", "target": "program", "doc": "x"}]);
    for file in [
        "../plan.agir",
        "/etc/passwd.agir",
        "a/../../x.agir",
        "",
        "plan.agir/..",
    ] {
        let r = f.call("patch", json!({"file": file, "ops": ops}));
        assert_eq!(r["status"], "rejected", "{file}");
        assert!(
            ["outside_root", "not_agir"].contains(&r["reason"].as_str().unwrap()),
            "{file}: {r}"
        );
    }
    let r = f.call("view", json!({"file": "src/main.rs", "target": "program"}));
    assert_eq!(r["reason"], "not_agir");
    assert!(
        r["detail"].as_str().unwrap().contains("src/main.agir"),
        "{r}"
    );
    // A symbolic link to a file outside the root.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("x.agir"), PLAN).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("x.agir"),
        f.dir.path().join("link.agir"),
    )
    .unwrap();
    let r = f.call("patch", json!({"file": "link.agir", "ops": ops}));
    assert_eq!(r["reason"], "outside_root");
    assert_eq!(
        std::fs::read_to_string(outside.path().join("x.agir")).unwrap(),
        PLAN
    );
}

#[test]
fn parsed_arguments_are_bounded_like_text() {
    let f = Fixture::new();
    let doc = "x".repeat(ais_edit::MAX_REQUEST_BYTES + 1);
    let r = f.rejected(
        json!([{"op": "set_doc", "target": "program", "doc": doc}]),
        "too_large",
    );
    assert!(r["detail"].as_str().unwrap().contains("split"));
}

#[test]
fn sections_a_patch_does_not_touch_keep_their_text() {
    let f = Fixture::new();
    let r = f.ok(json!([{"op": "rename", "target": "carry:plan_ok", "to": "has_tasks"}]));
    let text = f.text();
    // The edges, tools and knowledge are as written (aligned flow mappings, block bodies).
    assert!(
        text.contains("  - {from: write_tasks,  to: assemble,    modality: mandatory}"),
        "{text}"
    );
    assert!(
        text.contains("tools:\n  assemble_plan:\n    sig: \"(header_md, tasks_md) -> str\""),
        "{text}"
    );
    let diff = r["diff"].as_str().unwrap();
    assert!(!diff.contains("edges:"), "{diff}");
    assert!(!diff.contains("assemble_plan"), "{diff}");
}
