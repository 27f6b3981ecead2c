//! CALL (§4.4.3): a target program run as a sub-run, or, with no target, a nested slot over the
//! CALL's operands (with `task` bound when none binds). A produced program carry (`script`) is
//! executed, as §4.1's author-then-run pattern requires.
//!
//! A target is a program registered with the runtime by name, else a `.agir` path relative to
//! the runtime's program directory, else — for a target that is a bare name, as the `ais!`
//! macro writes a CALL of another program (its Rust type name) — the one `.agir` file directly
//! in the program directory whose `walker.name` or frontmatter `name` it is. The sub-run's `role: input` carries bind from the CALL's
//! reads by name, its `task` is the caller's; it spends the caller's remaining step budget; its
//! report's first TERMINAL read (or the whole report) lands in `writes[0]`; a first read the
//! target did not produce leaves `writes[0]` unproduced.

use super::plan::{Prepared, Step, Work};
use super::{Run, Stop};
use crate::report::{FaultKind, RunOutcome, Status};
use ais_core::Value;
use ais_core::bind::SlotOperand;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// How deep CALLs may nest.
const MAX_DEPTH: usize = 8;
/// The most bytes a CALL target's AG-IR file may have (the CLI's own reading limit).
const MAX_PROGRAM_BYTES: u64 = 64 * 1024 * 1024;

impl Run {
    pub(crate) async fn call(&mut self, step: &Step, target: Option<&str>) -> Result<(), Stop> {
        match target {
            None => {
                let mut ops: Vec<SlotOperand> = step
                    .reads
                    .iter()
                    .map(|&c| SlotOperand::Carry(self.prep.names.list[c].clone()))
                    .collect();
                if ops.is_empty() {
                    ops.push(SlotOperand::Carry("task".into()));
                }
                self.slot(step, &ops).await?;
                self.run_produced(step).await
            }
            Some(t) => self.sub_run(step, t).await,
        }
    }

    /// Executes the program carry a CALL produced (`writes[0]` named `script` or `*_script`);
    /// its `{ok, error, output}` lands in `writes[1]` when there is one.
    async fn run_produced(&mut self, step: &Step) -> Result<(), Stop> {
        let Some((&c, name)) = step.writes.first().zip(step.write_names.first()) else {
            return Ok(());
        };
        if name == "script" || name.ends_with("_script") {
            let dest = step.writes.get(1).copied();
            self.exec_program(step, c, dest).await?;
        }
        Ok(())
    }

    /// Lands a target's report in the CALL's writes. One write: the target's first TERMINAL
    /// read (or the whole report when it has no TERMINAL). Several writes: each by name from
    /// the report, else the TERMINAL read at its position (§2.3 step 4). A write the target did
    /// not produce stays unproduced.
    fn land_report(
        &mut self,
        step: &Step,
        prep: &Prepared,
        report: &serde_json::Map<String, serde_json::Value>,
    ) {
        let terminal: Vec<&str> = prep
            .steps
            .iter()
            .find(|s| matches!(s.work, Work::Terminal))
            .map(|t| {
                t.reads
                    .iter()
                    .map(|&c| prep.names.list[c].as_str())
                    .collect()
            })
            .unwrap_or_default();
        if step.writes.len() < 2 {
            // The target's first TERMINAL read is its result; when the target did not
            // produce it, the CALL produces nothing either (its writes keep unproduced).
            let value = match terminal.first() {
                Some(f) => report.get(*f).map(Value::from_json),
                None => Some(Value::from_json(&serde_json::Value::Object(report.clone()))),
            };
            if let Some(value) = value {
                self.write_back(step, value, &ais_core::sig::Return::None);
            }
            return;
        }
        for (k, (&c, name)) in step.writes.iter().zip(&step.write_names).enumerate() {
            let found = report
                .get(name.as_str())
                .or_else(|| terminal.get(k).and_then(|t| report.get(*t)));
            if let Some(v) = found {
                let v = self.conform(c, Value::from_json(v));
                self.set(c, v);
            }
        }
    }

    /// Boxed, so the recursion run → CALL → run has a nameable, `Send` future.
    fn sub_run<'a>(
        &'a mut self,
        step: &'a Step,
        target: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<(), Stop>> + Send + 'a>> {
        Box::pin(self.sub_run_inner(step, target))
    }

    async fn sub_run_inner(&mut self, step: &Step, target: &str) -> Result<(), Stop> {
        if self.depth >= MAX_DEPTH {
            return Err(Stop::Fault(
                FaultKind::Unsupported,
                format!(
                    "CALL `{}` nests deeper than {MAX_DEPTH} programs; a program that calls itself needs a base case",
                    step.id
                ),
            ));
        }
        // Resumed at this CALL with its program's answer: the program continues where it
        // waited; else it starts afresh.
        let resumed = self
            .callee
            .take()
            .filter(|c| self.prep.steps.get(c.at).is_some_and(|s| s.id == step.id));
        let (prep, out) = match resumed {
            Some(c) => {
                let out = self.drive_callee(*c.run, c.cursor).await?;
                (c.prep, out)
            }
            None => self.start_callee(step, target).await?,
        };
        self.sub_steps += out.steps;
        self.usage.add(&out.usage);
        self.deviations
            .extend(out.deviations.iter().skip(prep.deviations.len()).cloned());
        match out.status {
            Status::Ok | Status::Error => {
                self.land_report(step, &prep, &out.report);
                if out.status == Status::Error {
                    self.fail(
                        step,
                        format!(
                            "the program `{target}` called by `{}` ended with an unrouted failure",
                            step.id
                        ),
                        String::new(),
                    );
                }
                self.run_produced(step).await
            }
            Status::Fault | Status::Interrupted => {
                let f = out.fault.unwrap_or_else(|| crate::report::Fault {
                    kind: FaultKind::Unsupported,
                    instruction: String::new(),
                    line: None,
                    message: String::new(),
                });
                Err(Stop::Fault(
                    f.kind,
                    format!(
                        "in `{target}` called by `{}`, at `{}`: {}",
                        step.id, f.instruction, f.message
                    ),
                ))
            }
            // A callee's pause pauses this run (in process, or with the saved state a
            // placement sent back): only a placement's callee that paused and sent back no
            // state ends here.
            Status::InputRequired => Err(Stop::Fault(
                FaultKind::Placement,
                format!(
                    "the program `{target}` called by `{}` paused for a human answer and its placement sent back no saved state to continue it from",
                    step.id
                ),
            )),
        }
    }

    /// Starts the CALL's program: through the run's placement when it places CALLs elsewhere,
    /// else as a sub-run here.
    async fn start_callee(
        &mut self,
        step: &Step,
        target: &str,
    ) -> Result<(Arc<Prepared>, RunOutcome), Stop> {
        let prep = self.load_target(step, target)?;
        if prep.not_runnable.is_some() {
            let why = prep.not_runnable.clone().unwrap_or_default();
            return Err(Stop::Fault(
                FaultKind::NotRunnable,
                format!(
                    "CALL `{}`: the target `{target}` cannot run: {why}",
                    step.id
                ),
            ));
        }
        let values: Vec<(usize, Value)> = step
            .reads
            .iter()
            .filter_map(|&c| {
                let name = &self.prep.names.list[c];
                let sub = prep.names.index(name)?;
                // Only what this run produced is passed: a starting value is no argument.
                (name != "task" && self.produced(c)).then(|| (sub, self.carries.get(c).clone()))
            })
            .collect();
        let elsewhere = match self.call_job(step, &prep, &values) {
            Some((runner, job)) => Some(super::handover::call_elsewhere(runner, job, &prep).await),
            None => None,
        };
        let out = match elsewhere {
            Some(out) => out?,
            None => {
                let sub = Run::new(
                    self.settings.clone(),
                    prep.clone(),
                    Some(self.task.clone()),
                    &values,
                    self.depth + 1,
                );
                self.drive_callee(sub, 0).await?
            }
        };
        Ok((prep, out))
    }

    /// Drives a CALL's sub-run `sub` from `cursor` on this run's remaining step budget, its
    /// effects journaled below this step. The program shares this run's state (§4.4.3): when
    /// it waits for a human, this run waits, its pause holding the sub-run's saved state.
    async fn drive_callee(&mut self, mut sub: Run, cursor: usize) -> Result<RunOutcome, Stop> {
        sub.max_steps = self.max_steps.saturating_sub(self.budget_spent());
        sub.under = self.under.clone();
        sub.under.push(self.steps);
        sub.durable = self.call_durable();
        sub.effects = self.effects.below(&format!("c{}", self.steps), 0);
        match sub.drive_steps(cursor).await {
            Ok(out) => Ok(out),
            Err(waits) => {
                let asked = waits.innermost();
                Err(Stop::Pause {
                    carry: asked.carry.clone(),
                    prompt: asked.prompt.clone(),
                    ask: false,
                    tool: 0,
                    call: Some(Box::new(sub.saved(Some(*waits)))),
                })
            }
        }
    }

    /// The prepared target: a registered program, else a `.agir` file under the program
    /// directory (never outside it).
    pub(super) fn load_target(&self, step: &Step, target: &str) -> Result<Arc<Prepared>, Stop> {
        if let Some(p) = self.settings.programs.get(target) {
            return Ok(Arc::new(Prepared::new(
                p.clone(),
                None,
                &self.settings.tools,
            )));
        }
        let rel = std::path::Path::new(target);
        let escapes = rel.is_absolute()
            || rel
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir));
        let not_found = |why: String| {
            Stop::Fault(
                FaultKind::Unsupported,
                format!(
                    "CALL `{}` names the target `{target}`, which {why}; register the program with the runtime, or put `{target}` under {}",
                    step.id,
                    self.settings.program_dir.display()
                ),
            )
        };
        if escapes {
            return Err(not_found("leaves the program directory".into()));
        }
        let path = self.settings.program_dir.join(rel);
        let named = if path.is_file() {
            None
        } else {
            by_name(&self.settings.program_dir, target)
        };
        let doc = match named {
            Some(found) => found.map_err(not_found)?,
            None => {
                let text = ais_core::files::read_regular_text(&path, MAX_PROGRAM_BYTES)
                    .map_err(|e| not_found(format!("cannot be read ({e})")))?;
                ais_core::agir::read(&text)
                    .map_err(|e| not_found(format!("does not read as AG-IR ({e})")))?
            }
        };
        Ok(Arc::new(Prepared::new(
            Arc::new(doc.program),
            Some(std::borrow::Cow::Owned(doc.source_map)),
            &self.settings.tools,
        )))
    }
}

/// The most `.agir` files a by-name lookup reads, and the largest it reads.
const MAX_SCANNED: usize = 1024;
const MAX_SCANNED_BYTES: u64 = 16 * 1024 * 1024;

/// The program in a `.agir` file directly in `dir` whose `walker.name` or frontmatter `name`
/// is `target`: `None` when `target` is not a bare name or no file names it; an error when two
/// files do.
fn by_name(
    dir: &std::path::Path,
    target: &str,
) -> Option<Result<ais_core::agir::Document, String>> {
    let bare = !target.is_empty()
        && target
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
    if !bare {
        return None;
    }
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "agir"))
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() <= MAX_SCANNED_BYTES))
        .collect();
    files.sort();
    files.truncate(MAX_SCANNED);
    let mut found: Option<(std::path::PathBuf, ais_core::agir::Document)> = None;
    for path in files {
        let Some(doc) = ais_core::files::read_regular_text(&path, MAX_PROGRAM_BYTES)
            .ok()
            .and_then(|text| ais_core::agir::read(&text).ok())
        else {
            continue;
        };
        let p = &doc.program;
        let walker = p.walker.as_ref().and_then(|w| w.name.as_deref());
        if walker != Some(target) && p.name.as_deref() != Some(target) {
            continue;
        }
        if let Some((first, _)) = &found {
            return Some(Err(format!(
                "is the name of two programs, {} and {}",
                first.display(),
                path.display()
            )));
        }
        found = Some((path, doc));
    }
    found.map(|(_, doc)| Ok(doc))
}
