//! The runs on Restate themselves: submit, follow, answer, list (feature `restate`).

use super::super::super::files::read_source;
use super::super::super::runs::RunsArgs;
use super::super::super::{CliError, Failure, Output, shown};
use super::super::show::{shown_value, status_words};
use super::super::{Format, ResumeArgs, RunArgs, exit_code, tokio_runtime};
use super::{EngineArgs, refuse_local, workflow_name};
use crate::cli::escape_block as escape_controls;
use ais::agir::{self, Limits};
use ais::restate::client::pause_number;
use ais::restate::{Admin, ClientError, Followed, Ingress, RunRequest};
use ais::rt::{FaultKind, Status};
use serde::Deserialize;
use serde_json::Value;
use std::io::{self, BufRead, IsTerminal, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// How often a followed run shown as text says it is still running.
const HEARTBEAT: Duration = Duration::from_secs(5);

/// One followed run.
struct Run<'a> {
    tokio: tokio::runtime::Runtime,
    ingress: Ingress,
    engine: &'a EngineArgs,
    workflow: String,
    id: String,
    /// The program's file, for the human report's first line (the workflow's name otherwise).
    file: Option<&'a Path>,
    format: Format,
}

/// `ais run --engine restate`.
pub(in crate::cli::run) fn run(args: RunArgs, output: &mut Output) -> Result<u8, Failure> {
    refuse_local(
        &args.options,
        &[
            ("--no-journal", args.no_journal),
            ("--journal-full", args.journal_full),
        ],
    )?;
    let doc = read_program(&args.file, output)?;
    let mut pairs = Vec::with_capacity(args.inputs.len());
    for pair in &args.inputs {
        let Some((name, value)) = pair.split_once('=') else {
            return Err(CliError::new(
                format!("`--input {pair}` has no `=`"),
                "write `--input NAME=VALUE`, e.g. `--input approved=true`",
            )
            .into());
        };
        pairs.push((name.trim().to_owned(), value.to_owned()));
    }
    // The endpoint types the inputs with the same parser; checked here first, so a bad value is
    // this command's error, not a run that fails on the server.
    ais::rt::Inputs::parse(&doc.program, Some(args.task.clone()), &pairs).map_err(|e| {
        CliError::new(
            format!("`--input {}`: {}", e.name, e.message),
            "each `--input` names a `role: input` carry and a value of its type",
        )
    })?;
    let request = RunRequest {
        task: Some(args.task.clone()),
        inputs: pairs
            .into_iter()
            .map(|(n, v)| (n, Value::String(v)))
            .collect(),
    };
    let run = Run {
        tokio: tokio_runtime()?,
        ingress: Ingress::new(&args.options.engine.ingress),
        engine: &args.options.engine,
        workflow: workflow_name(&args.file, &doc.program),
        id: ais::rt::journal::new_run_id(),
        file: Some(&args.file),
        format: args.options.format,
    };
    run.tokio
        .block_on(run.ingress.submit(&run.workflow, &run.id, &request))
        .map_err(|e| run.client_error(e))?;
    if run.format == Format::Human {
        writeln!(
            output.err,
            "run {} of `{}` submitted to Restate at {}",
            run.id, run.workflow, run.engine.ingress
        )?;
    }
    let code = run.follow(0, output);
    run.tokio.shutdown_background();
    code
}

/// `ais resume ID --engine restate`: answers the run's pause (with `--answer`), then follows it.
pub(in crate::cli::run) fn resume(args: ResumeArgs, output: &mut Output) -> Result<u8, Failure> {
    refuse_local(
        &args.options,
        &[
            ("--retry", args.retry),
            ("--mark-done", args.mark_done),
            ("--accept-changed-program", args.accept_changed_program),
        ],
    )?;
    let tokio = tokio_runtime()?;
    let engine = &args.options.engine;
    let workflow = match &args.program {
        Some(file) => workflow_name(file, &read_program(file, output)?.program),
        None => {
            let listed = tokio
                .block_on(Admin::new(&engine.admin).runs(Some(&args.run)))
                .map_err(|e| admin_error(e, engine))?;
            match listed.as_slice() {
                [one] => one.workflow.clone(),
                [] => {
                    return Err(CliError::new(
                        format!("the Restate server at {} holds no run {}", engine.admin, args.run),
                        "list its runs with `ais runs --engine restate` (`--admin URL` names the server)",
                    )
                    .into());
                }
                _ => {
                    return Err(CliError::new(
                        format!("more than one program has a run {} on the server", args.run),
                        "name the program: `ais resume ID --engine restate --program FILE.agir`",
                    )
                    .into());
                }
            }
        }
    };
    let run = Run {
        tokio,
        ingress: Ingress::new(&engine.ingress),
        engine,
        workflow,
        id: args.run.clone(),
        file: args.program.as_deref(),
        format: args.options.format,
    };
    let mut answered = 0;
    if let Some(answer) = &args.answer {
        let pause = run
            .tokio
            .block_on(run.ingress.pause(&run.workflow, &run.id))
            .map_err(|e| run.client_error(e))?;
        answered = pause.as_ref().map_or(0, pause_number);
        run.tokio
            .block_on(run.ingress.answer(&run.workflow, &run.id, answer))
            .map_err(|e| run.client_error(e))?;
    }
    let code = run.follow(answered, output);
    run.tokio.shutdown_background();
    code
}

/// `ais runs --engine restate`: the runs the server holds.
pub(crate) fn runs(args: &RunsArgs, output: &mut Output) -> Result<u8, Failure> {
    if args.action.is_some() || args.journal.is_some() || args.out.is_some() {
        return Err(CliError::new(
            "`ais runs --engine restate` lists the server's runs; `show`, `rm`, `gc`, `--journal` and `--out` are for a local journal",
            "drop them; Restate's own CLI (`restate invocations`) inspects and cancels invocations",
        )
        .into());
    }
    let engine = &args.engine;
    let listed = tokio_runtime()?
        .block_on(Admin::new(&engine.admin).runs(None))
        .map_err(|e| admin_error(e, engine))?;
    writeln!(
        output.out,
        "{:<18} {:<20} {:<12} {:>7}  {:<24}  completion",
        "id", "program", "status", "entries", "submitted"
    )?;
    for r in listed {
        let completion = match (&r.completion, &r.last_failure) {
            (Some(c), _) => c.clone(),
            (None, Some(f)) => format!("retrying: {}", clip_line(f)),
            (None, None) => String::new(),
        };
        let line = format!(
            "{:<18} {:<20} {:<12} {:>7}  {:<24}  {completion}",
            r.id, r.workflow, r.status, r.journal_size, r.created_at
        );
        writeln!(output.out, "{}", crate::cli::escape_controls(&line))?;
    }
    Ok(0)
}

fn clip_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_owned(),
    }
}

/// Reads an AG-IR program (a read error is rendered as `ais run` renders it).
fn read_program(file: &Path, output: &mut Output) -> Result<agir::Document, Failure> {
    if ais::ags::is_ags_path(file) {
        return Err(CliError::new(
            format!(
                "`{}` is an AGS graph; Restate endpoints serve AG-IR programs",
                shown(file)
            ),
            "translate it (`ais import GRAPH > PROGRAM.agir`), serve and run the AG-IR",
        )
        .into());
    }
    let limits = Limits::default();
    let source = read_source(file, &limits)?;
    agir::read_with_limits(&source, &limits).map_err(|err| {
        let text = ais::render::render_read_error(&err, &source, &shown(file), output.color_err);
        match writeln!(output.err, "{text}") {
            Ok(()) => Failure::Exit(2),
            Err(e) => Failure::Io(e),
        }
    })
}

fn admin_error(e: ClientError, engine: &EngineArgs) -> Failure {
    CliError::new(
        e.to_string(),
        format!(
            "name the server's admin API with `--admin URL` (now {}; Restate's default port is 9070)",
            engine.admin
        ),
    )
    .into()
}

impl Run<'_> {
    fn client_error(&self, e: ClientError) -> Failure {
        let next = match &e {
            ClientError::Status { status: 404, .. } => format!(
                "is an endpoint serving `{}` registered with the server? `ais serve --restate PROGRAM`, then `curl -X POST ADMIN/deployments -d '{{\"uri\": \"http://ENDPOINT\"}}'`",
                self.workflow
            ),
            ClientError::Status { status: 409, .. } => format!(
                "see where the run stands: `ais resume {} --engine restate` follows it",
                self.id
            ),
            _ => format!(
                "start the server (`restate-server`) and name its ingress with `--ingress URL` (now {})",
                self.engine.ingress
            ),
        };
        CliError::new(e.to_string(), next).into()
    }

    /// `--ingress`/`--admin` as the next command needs them (nothing for the defaults).
    fn flags(&self) -> String {
        let d = EngineArgs {
            engine: super::Engine::Restate,
            ingress: "http://127.0.0.1:8080".into(),
            admin: "http://127.0.0.1:9070".into(),
        };
        let mut f = String::new();
        if self.engine.ingress != d.ingress {
            f.push_str(&format!(" --ingress {}", self.engine.ingress));
        }
        if self.engine.admin != d.admin {
            f.push_str(&format!(" --admin {}", self.engine.admin));
        }
        f
    }

    /// Follows the run to its end; a pause is asked on a terminal, else reported (exit 3).
    /// `answered`: the number of the last pause answered.
    fn follow(&self, mut answered: u64, output: &mut Output) -> Result<u8, Failure> {
        let started = Instant::now();
        loop {
            let followed = self.tokio.block_on(async {
                let follow = self
                    .ingress
                    .follow_after(&self.workflow, &self.id, answered);
                tokio::pin!(follow);
                let mut beat =
                    tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
                loop {
                    tokio::select! {
                        f = &mut follow => return f,
                        _ = beat.tick() => if self.format == Format::Human {
                            let _ = writeln!(
                                io::stderr(),
                                "… run {} of `{}` running on Restate ({} s)",
                                self.id, self.workflow, started.elapsed().as_secs()
                            );
                        }
                    }
                }
            });
            match followed.map_err(|e| self.client_error(e))? {
                Followed::Ended(report) => return self.ended(report, output),
                Followed::Paused(pause) => {
                    let Some(answer) = self.ask(&pause, output)? else {
                        return self.paused(&pause, output);
                    };
                    answered = pause_number(&pause);
                    self.tokio
                        .block_on(self.ingress.answer(&self.workflow, &self.id, &answer))
                        .map_err(|e| self.client_error(e))?;
                }
            }
        }
    }

    /// The answer to `pause` from a terminal, or `None` (no terminal, or end of input).
    fn ask(&self, pause: &Value, output: &mut Output) -> Result<Option<String>, Failure> {
        if !io::stdin().is_terminal() {
            return Ok(None);
        }
        let question = format!("\n{}\n> ", question(pause));
        write!(output.err, "{}", escape_controls(&question))?;
        output.err.flush()?;
        let mut answer = String::new();
        if io::stdin().lock().read_line(&mut answer)? == 0 {
            writeln!(output.err)?;
            return Ok(None);
        }
        Ok(Some(answer.trim_end_matches(['\n', '\r']).to_owned()))
    }

    /// Reports a run left waiting for an answer on the server.
    fn paused(&self, pause: &Value, output: &mut Output) -> Result<u8, Failure> {
        let field = |k: &str| pause.get(k).cloned().unwrap_or(Value::Null);
        let resume = format!(
            "ais resume {} --engine restate --answer TEXT{}",
            self.id,
            self.flags()
        );
        match self.format {
            Format::Json => {
                // The run's object as `ais run` prints it paused; only what the pause record
                // names when the endpoint recorded no outcome (an older endpoint).
                let mut v = match pause.get("outcome") {
                    Some(Value::Object(o)) => Value::Object(o.clone()),
                    _ => serde_json::json!({
                        "status": Status::InputRequired,
                        "pause": {
                            "carry": field("carry"),
                            "prompt": field("prompt"),
                            "instruction": field("instruction"),
                        },
                    }),
                };
                if let Some(map) = v.as_object_mut() {
                    map.insert("run".into(), self.id.clone().into());
                    map.insert("workflow".into(), self.workflow.clone().into());
                    map.insert("engine".into(), "restate".into());
                }
                writeln!(output.out, "{v}")?;
            }
            Format::Human => {
                let text = format!(
                    "{}: input required (run {} waits on Restate)\n{}\nresume with: {resume}\n",
                    self.shown_file(),
                    self.id,
                    question(pause),
                );
                output.out.write_all(escape_controls(&text).as_bytes())?;
            }
        }
        Ok(3)
    }

    fn shown_file(&self) -> String {
        self.file
            .map_or_else(|| format!("`{}`", self.workflow), shown)
    }

    /// Reports an ended run; the exit status is `ais run`'s for its status.
    fn ended(&self, mut report: Value, output: &mut Output) -> Result<u8, Failure> {
        let ended = Ended::of(&report).map_err(|e| {
            CliError::new(
                format!(
                    "run {} on Restate returned a report this build does not read: {e}",
                    self.id
                ),
                "serve the program with the same version of ais as this one",
            )
        })?;
        match self.format {
            Format::Json => {
                if let Some(map) = report.as_object_mut() {
                    map.insert("run".into(), self.id.clone().into());
                    map.insert("workflow".into(), self.workflow.clone().into());
                    map.insert("engine".into(), "restate".into());
                }
                writeln!(output.out, "{report}")?;
            }
            Format::Human => {
                let text = human(&report, ended.status, &self.shown_file(), &self.id);
                output.out.write_all(escape_controls(&text).as_bytes())?;
            }
        }
        Ok(exit_code(ended.status, ended.fault.map(|f| f.kind)))
    }
}

/// What the exit status of a run that ended on Restate is made of: its report's `status` and
/// fault kind, read as the runtime's types (the report is `RunOutcome::to_json`).
#[derive(serde::Deserialize)]
struct Ended {
    status: Status,
    fault: Option<EndedFault>,
}

#[derive(serde::Deserialize)]
struct EndedFault {
    kind: FaultKind,
}

impl Ended {
    fn of(report: &Value) -> Result<Ended, serde_json::Error> {
        Ended::deserialize(report)
    }
}

/// The report object shown as text, as `ais run` shows a report.
fn human(v: &Value, status: Status, file: &str, id: &str) -> String {
    let mut out = String::new();
    let steps = v["steps"].as_u64().unwrap_or(0);
    let status = status_words(status);
    out.push_str(&format!(
        "{file}: {status} after {steps} step{} (run {id} on Restate)\n",
        if steps == 1 { "" } else { "s" }
    ));
    if let Some(f) = v["fault"].as_object() {
        let s = |k: &str| f.get(k).and_then(Value::as_str).unwrap_or_default();
        let at = match s("instruction") {
            "" => String::new(),
            i => format!(" at `{i}`"),
        };
        out.push_str(&format!("fault[{}]{at}: {}\n", s("kind"), s("message")));
    }
    if let Some(report) = v["report"].as_object().filter(|r| !r.is_empty()) {
        out.push_str("report:\n");
        for (name, value) in report {
            out.push_str(&format!("  {name}: {}\n", shown_value(value)));
        }
    }
    if let Some(names) = v["unproduced"].as_array().filter(|u| !u.is_empty()) {
        let names: Vec<String> = names
            .iter()
            .map(|n| format!("`{}`", n.as_str().unwrap_or_default()))
            .collect();
        out.push_str(&format!("not produced: {}\n", names.join(", ")));
    }
    if let Some(devs) = v["deviations"].as_array().filter(|d| !d.is_empty()) {
        out.push_str("deviations:\n");
        for d in devs {
            let s = |k: &str| d[k].as_str().unwrap_or_default().to_owned();
            out.push_str(&format!(
                "  - {} {}: {} -> {}\n",
                s("check"),
                s("subject"),
                s("intended"),
                s("substituted")
            ));
        }
    }
    out
}

/// The question of a pause record, as the run's paused outcome asks it
/// ([`ais::rt::Pause::question`]); from the record's own fields when the endpoint recorded no
/// outcome (an older endpoint).
fn question(pause: &Value) -> String {
    let field = |k: &str| pause[k].as_str().unwrap_or_default().to_owned();
    let shown = pause
        .get("outcome")
        .and_then(|o| o.get("pause"))
        .and_then(|p| serde_json::from_value::<ais::rt::Pause>(p.clone()).ok())
        .unwrap_or_else(|| ais::rt::Pause {
            carry: field("carry"),
            prompt: field("prompt"),
            instruction: field("instruction"),
            called: Vec::new(),
            line: None,
            handle: None,
            expects: None,
            refused: None,
        });
    shown.question(None)
}
