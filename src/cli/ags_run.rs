//! `ais run` / `ais resume` on an AGS graph: the graph is checked, its features matched against
//! what this harness executes, imported to AG-IR and run; afterwards its `file` outputs are
//! written under the output root and, with `--run-record PATH`, the AGS run record is written.

use super::{CliError, Failure, Output, shown};
use ais::agir;
use ais::ags::Ended;
use ais::render::{self, SourceLines};
use ais::rt::{RunOutcome, Status};
use std::io::Write;
use std::path::Path;
use std::time::SystemTime;

/// Whether this process's AGS run may execute the graph's `command` criteria (`ais run
/// --allow-commands`); set by [`program`], read by the judges [`register_tools`] makes.
static COMMANDS_ALLOWED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The program an AGS graph runs as: its AG-IR text and the document read from it. A graph with
/// errors, or using features this harness does not execute, is refused with what to do.
pub fn program(
    file: &Path,
    allow_commands: bool,
    output: &mut Output,
) -> Result<(String, agir::Document), Failure> {
    COMMANDS_ALLOWED.store(allow_commands, std::sync::atomic::Ordering::Relaxed);
    let name = shown(file);
    let (source, checked) = ais::ags::check_path(file)
        .map_err(|e| CliError::new(format!("cannot read `{name}`: {e}"), "check the path"))?;
    let Some(graph) = &checked.graph else {
        let lines = SourceLines::new(&source);
        for f in checked
            .findings
            .iter()
            .filter(|f| f.severity >= ais::Severity::Error)
        {
            writeln!(
                output.err,
                "{}\n",
                render::render_finding_in(f, &lines, &name, output.color_err)
            )?;
        }
        writeln!(
            output.err,
            "{name}: not run; a graph with errors must not execute (`ais check {name}`)"
        )?;
        return Err(Failure::Exit(2));
    };
    // `defaults` merged into the nodes: what the harness runs (SPEC.md §6.3).
    let graph = &graph.merged();
    ais::ags::model_tier().map_err(|e| {
        CliError::new(
            e,
            "state the run model's AGS intelligence tier, e.g. `AIS_MODEL_TIER=advanced`",
        )
    })?;
    let mut missing = ais::ags::unsupported_features(graph);
    if !allow_commands {
        missing.extend(ais::ags::required_commands(graph).into_iter().map(|c| {
            format!(
                "{c} (it runs a command line from the graph: pass `--allow-commands` to let it)"
            )
        }));
    }
    if !missing.is_empty() {
        return Err(CliError::new(
            format!("`{name}` uses features this harness does not execute: {}", missing.join("; ")),
            format!("ais runs AGS task nodes, approve gates and sequence edges ({}); run this graph on a harness at a higher AGS conformance level, or `ais check` it here", ais::ags::SUPPORTED_FEATURES.join(", ")),
        )
        .into());
    }
    let mut program = ais::ags::import(graph).map_err(|e| {
        CliError::new(
            format!("cannot import `{name}`: {}", e.0),
            "run `ais check` on it",
        )
    })?;
    ais::ags::lower_for_harness(graph, &mut program, allow_commands);
    let text = agir::write(&program);
    let doc = agir::read(&text).map_err(|e| {
        CliError::new(
            format!("the import of `{name}` does not read back: {e}"),
            "report this as a bug",
        )
    })?;
    Ok((text, doc))
}

/// The graph of an AGS document's text as it runs (`defaults` merged, SPEC.md §6.3), when the
/// text reads as one.
fn running_graph(text: &str) -> Option<ais::ags::Graph> {
    let data = ais::ags::load_text(text).data?;
    Some(ais::ags::Graph::read(&data).ok()?.merged())
}

/// After a run of an AGS graph: its run record, written to `record` when asked; returns the
/// record's status (`succeeded`, `partial`, `failed`, `awaiting_human`), which decides the exit
/// code (a run the record does not call `succeeded` is no success, even when the program
/// reached its end).
pub fn finish(
    file: &Path,
    outcome: &RunOutcome,
    started: SystemTime,
    root: &Path,
    record: Option<&Path>,
) -> Result<Option<String>, Failure> {
    let name = shown(file);
    let text = ais::ags::read_document(file)
        .map_err(|e| CliError::new(format!("cannot read `{name}`: {e}"), "check the path"))?;
    let Some(graph) = running_graph(&text) else {
        return Ok(None);
    };
    let status = match outcome.status {
        Status::Ok => Ended::Ok,
        Status::InputRequired => Ended::AwaitingHuman,
        Status::Error | Status::Fault | Status::Interrupted => Ended::Failed,
    };
    let (stopped_at, message) = match (&outcome.fault, &outcome.pause) {
        (Some(f), _) => (Some(f.instruction.as_str()), Some(f.message.clone())),
        (None, Some(p)) => (
            Some(p.instruction.as_str()),
            Some(format!(
                "{} awaits a human answer: {}",
                p.asker(),
                p.prompt.trim()
            )),
        ),
        _ => (None, None),
    };
    let nanos = started
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let ran = ais::ags::Ran {
        status,
        // A paused or faulted run reports nothing; what it wrote before it stopped says how
        // each node before the stop ended.
        report: if outcome.report.is_empty() {
            &outcome.written
        } else {
            &outcome.report
        },
        stopped_at,
        message,
        started,
        finished: SystemTime::now(),
        root,
        run_id: format!("ais-{nanos:x}-{}", std::process::id()),
    };
    let rec = ais::ags::run_record(&graph, &ais::ags::schedule(&graph), &ran);
    let verdict = rec
        .get("status")
        .and_then(|s| s.as_str())
        .map(str::to_owned);
    let Some(path) = record else {
        return Ok(verdict);
    };
    if let Err(errors) = ais::ags::validate_run_record(&rec) {
        return Err(CliError::new(
            format!(
                "the run record of `{name}` fails the AGS run schema: {}",
                errors.join("; ")
            ),
            "report this as a bug",
        )
        .into());
    }
    let body = serde_json::to_string_pretty(&rec).unwrap_or_default();
    std::fs::write(path, body + "\n").map_err(|e| {
        CliError::new(
            format!("cannot write the run record `{}`: {e}", shown(path)),
            "name a writable file with `--run-record PATH`",
        )
    })?;
    Ok(verdict)
}

/// One of the harness's native tools (see `ais::ags::harness_tools`): a params step, a node's inputs
/// step or its judge, writing files through the runtime's confined output root.
struct HarnessTool {
    doc: std::sync::Arc<ais::ags::Graph>,
    tier: String,
    name: String,
    commands: bool,
}

/// Runs one `command` criterion as a `command` tool runs (ais-rt's `CommandTool`: a shell only
/// when the text needs one, the scrubbed environment, kernel-confined writes under the output
/// root, the timeout), in its `cwd` under the root: its exit code and output.
async fn run_command(
    c: &ais::ags::CommandCriterion,
    ctx: &ais::rt::ToolContext,
) -> serde_json::Value {
    use ais::rt::Tool;
    let mut ctx = ctx.clone();
    if let Some(cwd) = &c.cwd {
        ctx.root = ctx.root.join(cwd);
        let _ = std::fs::create_dir_all(&ctx.root);
    }
    if let Some(secs) = c.timeout_seconds {
        ctx.limits.timeout = ais::ags::capped_seconds(secs, ais::ags::MAX_COMMAND_SECONDS)
            .max(std::time::Duration::from_secs(1));
    }
    let tool = ais::rt::CommandTool::new(format!("criterion {}", c.id), &c.run, Vec::new());
    match tool.call(ais::rt::ToolArgs::default(), &ctx).await {
        Ok(v) => serde_json::json!({"exit": 0, "output": v.to_json()}),
        Err(e) => {
            let exit = ais::ags::command_exit_code(&e.message);
            serde_json::json!({"exit": exit, "output": e.output, "error": e.message})
        }
    }
}

impl ais::rt::Tool for HarnessTool {
    fn call<'a>(
        &'a self,
        args: ais::rt::ToolArgs,
        ctx: &'a ais::rt::ToolContext,
    ) -> ais::rt::ToolFuture<'a> {
        Box::pin(async move {
            let args: serde_json::Map<String, serde_json::Value> = args
                .params
                .iter()
                .map(|(k, v)| (k.clone(), v.to_json()))
                .collect();
            if let Some((gate, text)) = ais::ags::notice(&self.doc, &self.name, &args) {
                // A notify gate's channel: the operator's terminal (it does not wait).
                eprintln!("notify[{gate}]: {text}");
            }
            let root = ais::rt::ArtifactRoot::for_writes(ctx);
            let mut write = |path: &str, content: &str| {
                root.write(path, content.as_bytes())
                    .map(|_| ())
                    .map_err(|e| e.message)
            };
            ais::ags::write_file_outputs(&self.doc, &self.name, &args, &mut write);
            let mut commands = serde_json::Map::new();
            for c in ais::ags::command_criteria(&self.doc, &self.name) {
                let result = if self.commands {
                    run_command(&c, ctx).await
                } else {
                    serde_json::json!({"error": "not run: `ais run --allow-commands` was not given"})
                };
                commands.insert(c.id.clone(), result);
            }
            let out = ais::ags::call_harness_tool(
                &self.doc,
                &self.tier,
                &self.name,
                &args,
                &commands,
                root.dir(),
                &mut write,
            );
            if let Some(node) = ais::ags::judged_node(&self.name) {
                // `failure.retry`'s backoff: wait before the node is attempted again.
                let verdict = out.get(&ais::ags::judge_writes(&node)[3]);
                let secs = verdict
                    .and_then(|v| v["retry_delay_seconds"].as_f64())
                    .unwrap_or(0.0);
                if secs > 0.0 {
                    let pause = ais::ags::capped_seconds(secs, ais::ags::MAX_RETRY_DELAY_SECONDS);
                    let _ = tokio::task::spawn_blocking(move || std::thread::sleep(pause)).await;
                }
            }
            if let Some(text) = ais::ags::escalation(&self.name, &out) {
                // `on_exhausted: escalate`: the operator is the human it goes to.
                eprintln!("escalate: {text}");
            }
            // A step that writes one carry takes the whole result: its value, bare.
            let result = match (out.len(), out.values().next()) {
                (1, Some(only)) => only.clone(),
                _ => serde_json::Value::Object(out),
            };
            Ok(ais::Value::from_json(&result))
        })
    }
}

/// Registers the harness's native tools for an AGS graph (nothing for any other program).
pub fn register_tools(file: &Path, tools: &mut ais::rt::ToolRegistry) {
    if !ais::ags::is_ags_path(file) {
        return;
    }
    let Ok(text) = ais::ags::read_document(file) else {
        return;
    };
    let Some(graph) = running_graph(&text) else {
        return;
    };
    let doc = std::sync::Arc::new(graph);
    // `program` refused an unknown tier before the run started.
    let tier = ais::ags::model_tier().unwrap_or_else(|_| "standard".into());
    for name in ais::ags::harness_tools(&doc) {
        let tool = HarnessTool {
            commands: COMMANDS_ALLOWED.load(std::sync::atomic::Ordering::Relaxed),
            tier: tier.clone(),
            doc: doc.clone(),
            name: name.clone(),
        };
        tools.register(name, std::sync::Arc::new(tool));
    }
}
