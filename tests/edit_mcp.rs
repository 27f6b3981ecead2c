//! `ais mcp edit` driven by the official MCP Inspector's CLI (`@modelcontextprotocol/inspector
//! --cli`, pinned in `.ci/run`): the spec's Appendix C program (`examples/writing_plans.agir`)
//! built from an empty file by `patch` calls alone, then checked clean by `ais check` and run
//! (scripted) to the same report as the example.

use crate::mcp_support;

use serde_json::{Value as Json, json};
use std::path::Path;
use std::process::Command;

const EXAMPLE: &str = "examples/writing_plans.agir";
const RESPONSES: &str = "examples/writing_plans.responses.json";

/// One Inspector call against `ais mcp edit --root DIR`: its JSON answer.
fn inspect(inspector: &Path, root: &Path, args: &[&str]) -> Json {
    let ais = env!("CARGO_BIN_EXE_ais");
    let root_arg = root.display().to_string();
    let o = Command::new(inspector)
        .arg("--cli")
        .args([ais, "mcp", "edit", "--root", &root_arg])
        .args(args)
        .current_dir(root)
        .output()
        .unwrap();
    // A tool error (a rejection) makes the Inspector exit non-zero; the answer is printed
    // first all the same.
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let start = stdout.find('{').unwrap_or(0);
    serde_json::Deserializer::from_str(&stdout[start..])
        .into_iter::<Json>()
        .next()
        .and_then(Result::ok)
        .unwrap_or_else(|| panic!("{stdout}{}", String::from_utf8_lossy(&o.stderr)))
}

fn patch(inspector: &Path, root: &Path, ops: &Json) -> Json {
    let ops = format!("ops={ops}");
    let r = inspect(
        inspector,
        root,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "patch",
            "--tool-arg",
            "file=plan.agir",
            "--tool-arg",
            &ops,
        ],
    );
    assert_eq!(r["isError"], false, "{r:#}");
    assert_eq!(r["structuredContent"]["status"], "ok", "{r:#}");
    r["structuredContent"].clone()
}

/// The ops that build Appendix C, in four patches.
fn patches() -> [Json; 4] {
    let carry = |name: &str, ty: &str, by: Option<&str>| match by {
        Some(by) => {
            json!({"op": "add_carry", "carry": {"name": name, "type": ty, "produced_by": by}})
        }
        None => json!({"op": "add_carry", "carry": {"name": name, "type": ty, "role": "input"}}),
    };
    let node = |spec: Json| json!({"op": "add_instruction", "instruction": spec});
    let edge = |from: &str, to: &str| json!({"op": "add_edge", "from": from, "to": to, "modality": "mandatory"});
    [
        json!([{"op": "set_program", "name": "writing_plans",
                "description": "Create a detailed implementation plan with bite-sized TDD tasks.",
                "walker": "WritingPlans"}]),
        json!([
            carry("task", "str", None),
            carry("header_md", "str", Some("draft_header")),
            carry("tasks_md", "str", Some("write_tasks")),
            carry("plan_md", "str", Some("assemble")),
            carry("plan_ok", "bool", Some("verify")),
            carry("plan_file", "str", Some("save")),
            node(json!({"id": "draft_header", "type": "GEN-RAW", "owner": "model", "reads": ["task"], "writes": ["header_md"],
                "doc": "Write the plan's header: a real feature name, a one-sentence goal, a 2-3 sentence architecture, and the tech stack. Output only the header markdown."})),
            node(json!({"id": "write_tasks", "type": "GEN-RAW", "owner": "model", "reads": ["task", "header_md"], "writes": ["tasks_md"],
                "doc": "Write the bite-sized, test-driven task sections. Follow the task format exactly. Output only the task markdown, no header."})),
            node(json!({"id": "assemble", "type": "ACT", "owner": "code", "tool": "assemble_plan", "reads": ["header_md", "tasks_md"], "writes": ["plan_md"]})),
            node(json!({"id": "verify", "type": "SENSE", "owner": "code", "tool": "verify_has_tasks", "reads": ["plan_md"], "writes": ["plan_ok"]})),
            node(json!({"id": "save", "type": "ACT", "surface": "artifact", "owner": "code", "tool": "save_plan", "reads": ["plan_md"], "writes": ["plan_file"]})),
            node(json!({"id": "done", "type": "TERMINAL", "owner": "code", "reads": ["plan_file"]})),
            {"op": "add_tool", "tool": {"name": "assemble_plan", "sig": "(header_md, tasks_md) -> str", "surface": "ACT",
                "doc": "Join the header and the task sections into one plan document.",
                "body": "def assemble_plan(header_md: str, tasks_md: str) -> str:\n    return (header_md or \"\").rstrip() + \"\\n\\n\" + (tasks_md or \"\").strip() + \"\\n\"\n"}},
            {"op": "add_tool", "tool": {"name": "verify_has_tasks", "sig": "(plan_md) -> bool", "surface": "SENSE",
                "doc": "True when the plan actually contains task sections with code.",
                "body": "def verify_has_tasks(plan_md: str) -> bool:\n    import re\n    text = plan_md or \"\"\n    return bool(re.search(r'^###\\s+Task\\s', text, re.M)) and \"```\" in text\n"}},
            {"op": "add_tool", "tool": {"name": "save_plan", "sig": "(plan_md, path) -> str", "surface": "ACT·artifact",
                "doc": "Write the finished plan to a markdown file and return its path.",
                "body": "def save_plan(plan_md: str, path: str) -> str:\n    import os\n    d = os.path.dirname(path)\n    if d:\n        os.makedirs(d, exist_ok=True)\n    with open(path, \"w\", encoding=\"utf-8\") as f:\n        f.write(plan_md or \"\")\n    return path\n"}},
            edge("draft_header", "write_tasks"),
            edge("write_tasks", "assemble"),
            edge("assemble", "verify"),
            edge("verify", "save"),
            edge("save", "done"),
        ]),
        json!([{"op": "add_knowledge", "knowledge": {"name": "task_format", "resident_on": ["write_tasks"],
            "template": "Break the work into bite-sized tasks. Each task is one component; each\nstep inside it is one 2-5 minute action. Exact file paths always; complete\ncode, never \"add validation\"; exact commands with expected output.\n"}}]),
        json!([{"op": "set_program", "shape": "pipeline", "standalone": true}]),
    ]
}

fn run_json(program: &Path, out: &Path) -> Json {
    let root = env!("CARGO_MANIFEST_DIR");
    let o = Command::new(env!("CARGO_BIN_EXE_ais"))
        .arg("run")
        .arg(program)
        .args([
            "--task",
            "Add a CSV export of a user's orders to the account page",
            "--format",
            "json",
            "--model",
        ])
        .arg(format!("scripted:{root}/{RESPONSES}"))
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn the_inspector_builds_appendix_c_from_an_empty_file_by_patches_alone() {
    let Some(inspector) = mcp_support::bin("mcp-inspector") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plan.agir");
    std::fs::write(&file, "").unwrap();
    let listed = inspect(&inspector, dir.path(), &["--method", "tools/list"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for verb in [
        "status",
        "help",
        "query",
        "view",
        "patch",
        "rename",
        "set_doc",
        "set_guard",
        "insert_between",
    ] {
        assert!(names.contains(&verb), "{names:?}");
    }
    for ops in patches() {
        patch(&inspector, dir.path(), &ops);
    }
    // A rejection through the Inspector is a tool error naming the next call.
    let r = inspect(
        &inspector,
        dir.path(),
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "rename",
            "--tool-arg",
            "file=plan.agir",
            "--tool-arg",
            "target=carry:plan_okk",
            "--tool-arg",
            "to=ok",
        ],
    );
    assert_eq!(r["isError"], true, "{r:#}");
    assert_eq!(
        r["structuredContent"]["possible_repairs"][0]["call"]["args"]["target"],
        "carry:plan_ok"
    );
    // `ais check` finds it clean.
    let o = Command::new(env!("CARGO_BIN_EXE_ais"))
        .arg("check")
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let check: Json = serde_json::from_slice(
        &Command::new(env!("CARGO_BIN_EXE_ais"))
            .args(["check", "--format", "json"])
            .arg(&file)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(check["outcome"], "clean", "{check:#}");
    // The same program as the example (what the model cannot tell apart aside: `types: {}`
    // and `agir_version`, which no operation writes).
    let built = ais::agir::read(&std::fs::read_to_string(&file).unwrap())
        .unwrap()
        .program;
    let mut example = ais::agir::read(&std::fs::read_to_string(EXAMPLE).unwrap())
        .unwrap()
        .program;
    example.types = None;
    example.agir_version = None;
    assert_eq!(built, example);
    // The same report, scripted.
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let built_run = run_json(&file, a.path());
    let example_run = run_json(Path::new(EXAMPLE), b.path());
    assert_eq!(built_run["status"], "ok", "{built_run:#}");
    assert_eq!(built_run["report"], example_run["report"]);
}
