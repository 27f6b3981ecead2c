//! The Deterministic Unit's work: tool pipelines (§5.4), inline CODE bodies (§4.3), the
//! write-out of a tool-less ACT and the execution of a produced program (§4.2.2, §4.1).

use super::carries::{self, Lookup};
use super::effects::{Effects, ToolClass, tool_spec};
use super::plan::{Arg, ArgSource, Step, ToolStep};
use super::{Run, Stop};
use crate::report::FaultKind;
pub(crate) use crate::tools::destination::file_safe;
use crate::tools::destination::{self};
use crate::tools::{ArtifactRoot, ToolArgs, ToolContext, ToolError};
use ais_core::bind::{Access, invocation_filename};
use ais_core::expr::Compiled;
use ais_core::sig::Return;
use ais_core::{Type, Value};
use indexmap::IndexMap;

/// The value of one bound argument (§7.1–§7.3). A path parameter that resolves empty is the
/// fault "unresolvable operand" on the read side (§10.1); on the write side it stays empty here
/// and [`destination::settle_writes`] gives it its destination (the task's, when safe, else a
/// program-controlled one).
pub(crate) fn arg_value<C: Lookup + ?Sized>(
    step: &Step,
    arg: &Arg,
    carries: &C,
    task: &str,
) -> Result<Value, Stop> {
    let v = match &arg.source {
        ArgSource::Carry(c) => carries.value(*c).clone(),
        ArgSource::Field(c, f) => match carries.value(*c) {
            Value::Map(m) => m.get(f).cloned().unwrap_or(Value::Null),
            _ => Value::Null,
        },
        ArgSource::Invocation(Access::Write) => Value::Null,
        ArgSource::Invocation(side) => {
            invocation_filename(task, *side).map_or(Value::Null, Value::Str)
        }
        ArgSource::Null => Value::Null,
    };
    let empty = matches!(&v, Value::Null) || matches!(&v, Value::Str(s) if s.trim().is_empty());
    if !(arg.is_path && empty) {
        return Ok(v);
    }
    match step.access {
        Access::Write => Ok(v),
        Access::Read => Err(Stop::Fault(
            FaultKind::UnresolvableOperand,
            format!(
                "unresolvable operand: the path parameter `{}` of `{}` resolved empty (no carry binds it and the task names no file to read); name the file in the task, or read a path-shaped carry such as `input_path`",
                arg.param, step.id
            ),
        )),
    }
}

/// Confines every path argument of a write-side call (an `ACT`, or a `CODE` served by an
/// `ACT·artifact` tool) under the call's write root before the tool sees it (§4.2.2): each
/// string bound to a path parameter is checked by [`ArtifactRoot::confine`] and replaced by
/// the checked path, relative to the tool's working directory. A refusal is the tool call's
/// error (a routable value), and the tool does not run.
pub(crate) fn confine_paths(
    tool: &str,
    args: &mut ToolArgs,
    is_path: impl Fn(&str) -> bool,
    ctx: &ToolContext,
) -> Result<(), ToolError> {
    let root = ArtifactRoot::for_writes(ctx);
    // A staged sibling's file lands in the output root after the barrier: it must pass there too.
    let output = ctx.scratch.as_ref().map(|_| ArtifactRoot::new(&ctx.root));
    for (param, value) in args.params.iter_mut() {
        if !is_path(param) {
            continue;
        }
        if let Value::Str(raw) = value {
            let checked = match &output {
                Some(out) => out.confine(raw).and_then(|_| root.confine(raw)),
                None => root.confine(raw),
            };
            let dest = checked.map_err(|mut e| {
                e.message = format!("tool `{tool}`, parameter `{param}`: {}", e.message);
                e
            })?;
            *raw = dest.as_path_string();
        }
    }
    Ok(())
}

/// Binds a tool's arguments by name, in signature order.
pub(crate) fn bind_args<C: Lookup + ?Sized>(
    step: &Step,
    call: &ToolStep,
    carries: &C,
    task: &str,
) -> Result<ToolArgs, Stop> {
    let mut params = IndexMap::with_capacity(call.args.len());
    for arg in &call.args {
        params.insert(arg.param.clone(), arg_value(step, arg, carries, task)?);
    }
    Ok(ToolArgs { params })
}

/// What a pipeline reports to and resumes from: the trace notes (when tracing), the answer of
/// the `ask_user` call it resumes at, the effects its calls go through.
pub(crate) struct Hooks<'h> {
    pub trace: Option<&'h mut super::StepNotes>,
    pub answer: &'h mut Option<super::Answer>,
    pub effects: &'h Effects,
}

/// Runs a pipeline (§5.4): each tool in order over the shared workspace; the last result is
/// the step's. A failure stops the pipeline. An `ask_user` call with no answer pauses the run
/// (its position in the pipeline goes with the pause); resumed with the `answer`, the pipeline
/// starts at that call — the tools before it ran before the pause, and their effects are not
/// repeated (their results are not the step's: only the last one is).
pub(crate) async fn run_pipeline<'a, C: Lookup + ?Sized>(
    step: &Step,
    calls: &'a [ToolStep],
    carries: &C,
    task: &str,
    ctx: &ToolContext,
    hooks: Hooks<'_>,
) -> Result<Result<(Value, &'a Return), ToolError>, Stop> {
    let Hooks {
        mut trace,
        answer,
        effects,
    } = hooks;
    let mut last = Ok((Value::Null, &Return::None));
    let start = answer.as_ref().map_or(0, |a| a.tool);
    // Resumed at its `ask_user` call: each call before it took one effect index.
    effects.skip(start);
    for (k, call) in calls.iter().enumerate().skip(start) {
        let mut args = bind_args(step, call, carries, task)?;
        let paths = || call.args.iter().filter(|a| a.is_path);
        let mut hint = None;
        if step.access == Access::Write && !call.class.mcp {
            let from_task = |a: &&super::plan::Arg| matches!(a.source, ArgSource::Invocation(_));
            let unresolved = paths().map(|a| (a.param.as_str(), from_task(&a)));
            destination::settle_writes(&step.id, None, task, &mut args, unresolved, ctx);
        } else if !call.class.mcp {
            hint = destination::resolve_reads(&mut args, paths().map(|a| a.param.as_str()), ctx);
        }
        if step.access == Access::Write
            && !call.class.mcp
            && let Err(e) = confine_paths(
                &call.name,
                &mut args,
                |p| call.args.iter().any(|a| a.is_path && a.param == p),
                ctx,
            )
        {
            return Ok(Err(e));
        }
        if call.ask_user {
            if let Some(a) = answer.take() {
                // The human's answer is the call's result, journaled as one: a replay gives
                // it back.
                let class = ToolClass {
                    idempotent: true,
                    ..Default::default()
                };
                let given = effects
                    .run(
                        a.value,
                        |_| tool_spec(&step.id, &call.name, class, &args),
                        |v| async { Ok::<Value, ToolError>(v) },
                    )
                    .await?;
                match given {
                    Ok(v) => last = Ok((v, &call.ret)),
                    Err(e) => return Ok(Err(e)),
                }
                continue;
            }
            let prompt = args
                .params
                .values()
                .next()
                .map(|v| match v {
                    Value::Str(s) => s.clone(),
                    other => other.to_string(),
                })
                .unwrap_or_default();
            let carry = step
                .write_names
                .first()
                .cloned()
                .unwrap_or_else(|| "answer".to_owned());
            return Err(Stop::Pause {
                carry,
                prompt,
                ask: true,
                tool: k,
                call: None,
            });
        }
        let Some(imp) = &call.imp else {
            return Err(Stop::Fault(
                FaultKind::Unsupported,
                match &call.native_entry {
                    Some(entry) => format!(
                        "`{}` calls tool `{}`, whose body is Rust (`lang: rust`): only the `ais!` program it comes from runs it; run that program from Rust with {entry}, or give the tool a Python `body` or a `command`",
                        step.id, call.name
                    ),
                    None if call.class.mcp => format!(
                        "`{}` calls tool `{}`, bound to an MCP server that nothing started: start the program's servers with `ais::rt::mcp::McpServers` and register their tools{}, or run it with `ais run`",
                        step.id,
                        call.name,
                        no_mcp()
                    ),
                    None => format!(
                        "`{}` calls tool `{}`, which nothing implements here: register a native tool named `{}`, or give it a `body` or a `command`",
                        step.id, call.name, call.name
                    ),
                },
            ));
        };
        if let Some(notes) = trace.as_deref_mut() {
            notes.tool = Some(call.name.clone());
            notes.operands = args
                .params
                .iter()
                .map(|(k, v)| (k.clone(), v.to_json()))
                .collect();
        }
        // A CODE step's work is a deterministic function of its operands (§4.3): in flight
        // at a crash, it simply runs again.
        let class = ToolClass {
            idempotent: call.class.idempotent || step.opcode == ais_core::Opcode::Code,
            ..call.class
        };
        // The call is made inside the future: a replayed effect never calls the tool.
        let called = effects
            .run(
                args,
                |args| tool_spec(&step.id, &call.name, class, args),
                |args| imp.call(args, ctx),
            )
            .await?;
        match called {
            Ok(v) => last = Ok((v, &call.ret)),
            Err(e) => return Ok(Err(destination::with_hint(e, hint))),
        }
    }
    Ok(last)
}

impl Run {
    /// A DU step's tool pipeline, written back; a failure becomes an error value.
    pub(crate) async fn run_tools(&mut self, step: &Step, calls: &[ToolStep]) -> Result<(), Stop> {
        let ctx = self.ctx();
        let mut answer = self.answer.take();
        let effects = self.effects.clone();
        let notes = if self.tracing {
            Some(&mut self.notes)
        } else {
            None
        };
        let ran = run_pipeline(
            step,
            calls,
            &self.carries,
            &self.task,
            &ctx,
            Hooks {
                trace: notes,
                answer: &mut answer,
                effects: &effects,
            },
        )
        .await;
        self.take_file_deviations();
        match ran? {
            Ok((v, ret)) => {
                let v = self.wrap_outcome(step, v);
                self.write_back(step, v, ret);
            }
            Err(e) => {
                // Every tool error names the tool that failed (see `ToolError::message`), so
                // the step adds only itself: the tool is named once, and it is the one that
                // failed, not merely the pipeline's last.
                let message = format!("at `{}`: {}", step.id, e.message);
                self.fail(step, message, e.output);
            }
        }
        Ok(())
    }

    /// A successful result bound for an `outcome` carry becomes `{ok: true, …, value}`.
    fn wrap_outcome(&self, step: &Step, v: Value) -> Value {
        let outcome_typed = step.writes.first().is_some_and(|&c| {
            matches!(self.carries.names.types.get(c).and_then(Option::as_ref), Some(Type::Named(n)) if n == "outcome")
        });
        if outcome_typed && step.writes.len() == 1 && !carries::is_outcome(&v) {
            let output = match &v {
                Value::Str(s) => s.clone(),
                other => other.to_string(),
            };
            carries::outcome(true, "", &output, v)
        } else {
            v
        }
    }

    /// A CODE body (§4.3), evaluated over the carry file; an evaluation error is an error value.
    pub(crate) fn inline(&mut self, step: &Step, body: &Compiled) {
        if self.tracing {
            self.notes.operands = step
                .reads
                .iter()
                .map(|&c| {
                    (
                        self.carries.names.list[c].clone(),
                        self.carries.get(c).to_json(),
                    )
                })
                .collect();
        }
        match body.eval(&self.carries) {
            Ok(v) => self.write_back(step, v, &Return::None),
            Err(e) => {
                let message = format!(
                    "the body of CODE `{}` failed ({} at {}:{}): {}",
                    step.id, e.category, e.line, e.column, e.message
                );
                self.fail(step, message, String::new());
            }
        }
    }

    /// A tool-less ACT that reads a text carry (§4.2.2, third rung): its contents are written
    /// to a program-controlled path — the file the task names for a write, else one named after
    /// the carry — through the registry's `write_file` (atomic, confined to the output root).
    pub(crate) async fn write_out(&mut self, step: &Step, c: usize) -> Result<(), Stop> {
        let content = text_of(self.carries.get(c));
        let name = self.carries.names.list[c].clone();
        let path = destination::destination(&step.id, Some(&name), &self.task, true, &self.ctx());
        self.take_file_deviations();
        let result = self
            .builtin(
                step,
                "write_file",
                [("path", Value::Str(path)), ("content", Value::Str(content))],
            )
            .await?;
        match result {
            Ok(v) => {
                let v = self.wrap_outcome(step, v);
                self.write_back(step, v, &Return::None);
            }
            Err(e) => {
                let message = format!(
                    "writing `{name}` out for `{}` failed: {}",
                    step.id, e.message
                );
                self.fail(step, message, e.output);
            }
        }
        Ok(())
    }

    /// Executes a produced program (§4.1 author-then-run): the program carry's text is written
    /// under `.ais/scripts/` in the output root and run (`sh` for a shell shebang, else
    /// `python3`); its result is the value `{ok, error, output}` the program can route on.
    pub(crate) async fn run_program(&mut self, step: &Step, c: usize) -> Result<(), Stop> {
        self.exec_program(step, c, step.writes.first().copied())
            .await
    }

    /// Runs the program held in carry `c`; its result lands in `dest`.
    pub(crate) async fn exec_program(
        &mut self,
        step: &Step,
        c: usize,
        dest: Option<usize>,
    ) -> Result<(), Stop> {
        let script = text_of(self.carries.get(c));
        let name = self.carries.names.list[c].clone();
        if script.trim().is_empty() {
            let message = format!(
                "the program carry `{name}` of `{}` is empty, so there is nothing to run",
                step.id
            );
            self.fail_into(step, dest, message, String::new());
            return Ok(());
        }
        let shell =
            script.starts_with("#!") && script.lines().next().is_some_and(|l| l.contains("sh"));
        let (file, runner) = if shell {
            (format!(".ais/scripts/{}.sh", step.id), "sh")
        } else {
            (format!(".ais/scripts/{}.py", step.id), "python3")
        };
        // The runtime's own file under `.ais/`, which no model-chosen destination may name.
        let root = ArtifactRoot::for_writes(&self.ctx());
        let saved = self
            .effects
            .save_program(&step.id, root, file.clone(), script)
            .await?;
        if let Err(e) = saved {
            self.fail_into(
                step,
                dest,
                format!("saving `{name}` to run it failed: {}", e.message),
                e.output,
            );
            return Ok(());
        }
        let command = format!("{runner} {file}");
        let result = self
            .builtin(step, "run_command", [("command", Value::Str(command))])
            .await?;
        let target_type = dest.and_then(|w| self.carries.names.types.get(w).cloned().flatten());
        match result {
            Ok(v) => {
                let output = text_of(&v);
                let value = match target_type {
                    Some(Type::Str | Type::Path) => Value::Str(output),
                    _ => carries::outcome(true, "", &output, v),
                };
                if let Some(d) = dest {
                    let value = self.conform(d, value);
                    self.set(d, value);
                }
            }
            Err(e) => {
                let message = format!(
                    "the program in `{name}` run by `{}` failed: {}",
                    step.id, e.message
                );
                self.fail_into(step, dest, message, e.output);
            }
        }
        Ok(())
    }

    /// Moves the deviations the run's tool calls recorded while resolving paths
    /// ([`destination`]) into the run's own, where they are journaled and reported.
    pub(crate) fn take_file_deviations(&mut self) {
        for d in self.tool_ctx.files.take_deviations() {
            self.deviate(&d.subject, d.intended, d.substituted);
        }
    }

    /// Calls a registered tool by name (`write_file`, `run_command`); a missing one is the fault
    /// "unsupported" (the runtime was built without the built-in library).
    async fn builtin<const N: usize>(
        &mut self,
        step: &Step,
        name: &str,
        args: [(&str, Value); N],
    ) -> Result<Result<Value, ToolError>, Stop> {
        let Some(tool) = self.settings.tools.get(name).cloned() else {
            return Err(Stop::Fault(
                FaultKind::Unsupported,
                format!(
                    "`{}` needs the built-in tool `{name}`, which this runtime's tool registry lacks; build the runtime with the built-in library",
                    step.id
                ),
            ));
        };
        let params: IndexMap<String, Value> =
            args.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        if self.tracing {
            self.notes.tool = Some(name.to_owned());
            self.notes.operands = params
                .iter()
                .map(|(k, v)| (k.clone(), v.to_json()))
                .collect();
        }
        let ctx = self.ctx();
        let args = ToolArgs { params };
        self.effects
            .run(
                args,
                |args| tool_spec(&step.id, name, ToolClass::default(), args),
                |args| tool.call(args, &ctx),
            )
            .await
    }
}

/// A value as text: a string as it is, anything else as compact JSON.
pub(crate) fn text_of(v: &Value) -> String {
    match v {
        Value::Str(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// What a fault at an unstarted MCP tool adds in a build without MCP: how to turn it on.
fn no_mcp() -> String {
    if cfg!(feature = "mcp") {
        return String::new();
    }
    format!(
        " (this build has no MCP: {})",
        crate::feature::turn_on(crate::feature::Feature::Mcp)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_keep_only_safe_characters() {
        use crate::tools::destination::derived_destination;
        assert_eq!(file_safe("plan-2_b"), "plan-2_b");
        assert_eq!(file_safe("../a b/é"), "___a_b__");
        assert_eq!(
            derived_destination("write", Some("notes_md")),
            "notes_md.md"
        );
        assert_eq!(derived_destination("go/../x", None), "go____x.txt");
    }
}
