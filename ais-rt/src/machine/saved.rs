//! The one saved run state, and the one rebuild of a run from it.
//!
//! A run is saved as a [`Saved`]: its invocation (task and inputs), what its completed steps
//! changed ([`Folded`], what a journal's step commits fold to) and, when it paused for a human,
//! where in its next step it waits ([`Waits`]). Every way a run continues rebuilds it from
//! one, through [`rebuild`]:
//!
//! - a run that crashed, from its journal: the start row and the commits, folded;
//! - a run paused for a human, from its pause record — kept by the journal when the run has
//!   one, else written as a handle file under the output root (`pause.rs`): the same record;
//! - a CALL whose program paused, from the callee's own [`Saved`], nested in the caller's
//!   [`Waits`] (a CALLed program shares the caller's state, spec §4.4.3: its question is the
//!   run's question, and the answer continues the callee, then the caller).
//!
//! Rebuilding fails closed: a record that does not fit the program (another program, an
//! instruction not at its index, a carry the program does not declare, a value that does not
//! fit its carry's type, loop or branch state naming steps the program lacks) is
//! [`Unfit::Record`] and nothing runs; an answer that does not fit what it fills is
//! [`Unfit::Answer`], and the run keeps waiting.

use super::carries::{self, CarryFile};
use super::plan::{Prepared, Work};
use super::{Answer, Run, Settings, Unrouted, spawn};
use crate::journal::{Folded, Json, spend_of, usage_of};
use crate::report::{Called, Pause};
use ais_core::sig::Return;
use ais_core::{Deviation, Type, Value};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;

/// A run's saved state: what a resume rebuilds it from ([`rebuild`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Saved {
    /// The SHA-256 of the program's canonical AG-IR: a record of another program (or of this
    /// one, changed) is refused.
    pub program: String,
    /// The program's name, as a pause inside a CALL names the program that asked (a record of
    /// an older ais has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The task text.
    pub task: String,
    /// The invocation's values, and every other carry supplied before the state was saved.
    pub inputs: Vec<(String, Json)>,
    /// What the completed steps changed.
    pub state: Folded,
    /// Paused: where in its next step the run waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits: Option<Waits>,
}

/// Where a paused run waits: the step, what it asks, and what the step did before it paused
/// (the calls of its pipeline before an `ask_user`, a SPAWN's finished siblings, a CALLed
/// program's own saved state).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Waits {
    /// The instruction that waits.
    pub instruction: String,
    /// Its step index.
    pub cursor: usize,
    /// The carry the answer fills (for an `ask_user` call, the step's first write).
    pub carry: String,
    /// What the human is asked.
    pub prompt: String,
    /// What an answer must be (`an integer`), when it is typed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expects: Option<String>,
    /// An `ask_user` call: its position in the step's pipeline (the calls before it ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask: Option<usize>,
    /// A SPAWN paused for its siblings: the finished and the waiting ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spawn: Option<spawn::Pending>,
    /// A CALL whose program paused: the callee's saved state, its own pause inside.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<Box<Saved>>,
}

impl Waits {
    /// Where the run waits at step `cursor` of `prep`: for `carry` (an unsupplied input), for
    /// the `ask_user` call at position `ask` of the step's pipeline, or for the question a
    /// CALLed program asks (`call`, whose innermost pause says what the answer must be).
    pub(crate) fn new(
        prep: &Prepared,
        cursor: usize,
        carry: String,
        prompt: String,
        ask: Option<usize>,
        call: Option<Box<Saved>>,
    ) -> Waits {
        let expects = match &call {
            Some(callee) => callee.waits.as_ref().and_then(|w| w.expects.clone()),
            None => {
                let ty = answer_type(prep, cursor, &carry, ask);
                carries::expected(&prep.program, ty.as_ref()).map(|e| e.what)
            }
        };
        Waits {
            instruction: prep.steps[cursor].id.clone(),
            cursor,
            carry,
            prompt,
            expects,
            ask,
            spawn: None,
            call,
        }
    }

    /// The pause the question comes from: this one, or the innermost of the CALLs it waits in.
    pub(crate) fn innermost(&self) -> &Waits {
        let mut w = self;
        while let Some(inner) = w.call.as_ref().and_then(|c| c.waits.as_ref()) {
            w = inner;
        }
        w
    }
}

impl Saved {
    /// The pause as a report shows it: the run's own step that waits (for a CALL, the CALL),
    /// and what the innermost question asks and expects. `None` when the run does not wait.
    pub(crate) fn shown(&self, prep: &Prepared, handle: Option<PathBuf>) -> Option<Pause> {
        let w = self.waits.as_ref()?;
        let asked = w.innermost();
        // The CALLed programs it waits in, each named by its record (else the CALL's target).
        let mut called = Vec::new();
        let mut target = match prep.steps.get(w.cursor).map(|s| &s.work) {
            Some(Work::Call(Some(t))) => t.clone(),
            _ => String::new(),
        };
        let mut at = w;
        while let Some((callee, inner)) =
            at.call.as_ref().and_then(|c| Some((c, c.waits.as_ref()?)))
        {
            called.push(Called {
                program: callee.name.clone().unwrap_or(std::mem::take(&mut target)),
                instruction: inner.instruction.clone(),
            });
            at = inner;
        }
        Some(Pause {
            carry: asked.carry.clone(),
            prompt: asked.prompt.clone(),
            instruction: w.instruction.clone(),
            called,
            line: prep.steps.get(w.cursor).and_then(|s| s.line),
            handle,
            expects: asked.expects.clone(),
            refused: None,
        })
    }
}

/// The type the answer to a pause at step `cursor` is parsed by: the carry's declared type,
/// or for an `ask_user` call, the call's declared result (`None`: any text, kept as text).
fn answer_type(prep: &Prepared, cursor: usize, carry: &str, ask: Option<usize>) -> Option<Type> {
    if let Some(tool) = ask {
        return match &prep.steps.get(cursor)?.work {
            Work::Tools(calls) => match &calls.get(tool)?.ret {
                Return::Type(t) => Some(t.clone()),
                _ => None,
            },
            _ => None,
        };
    }
    let c = prep.names.index(carry)?;
    prep.names.types.get(c).cloned().flatten()
}

impl Run {
    /// What the run has spent toward `--max-cost`: its own slots' cost and, resumed at a CALL
    /// whose program waited, what that program spent before (its steps' usage joins the run's
    /// when it ends).
    pub(crate) fn cost_spent(&self) -> f64 {
        self.usage.cost.unwrap_or(0.0) + self.callee.as_ref().map_or(0.0, |c| c.run.cost_spent())
    }

    /// This run's state as a [`Saved`] (paused: `waits` says where).
    pub(crate) fn saved(&self, waits: Option<Waits>) -> Saved {
        let names = &self.carries.names.list;
        let task = self.prep.task;
        let inputs = (0..names.len())
            .filter(|&c| self.supplied[c] && c != task)
            .map(|c| (names[c].clone(), self.carries.get(c).to_json()))
            .collect();
        let written = (0..names.len())
            .filter(|&c| self.written[c] > 0)
            .map(|c| {
                let value = self.carries.get(c).to_json();
                (names[c].clone(), (value, self.written[c]))
            })
            .collect();
        let state = Folded {
            steps: self.steps,
            cursor: waits.as_ref().map(|w| w.cursor),
            written,
            supplied: Vec::new(),
            loops: (self.loop_counts.iter().enumerate())
                .filter(|(_, n)| **n != 0)
                .map(|(at, n)| (at, *n))
                .collect(),
            deviations: (self.deviations.iter())
                .map(|d| (d.subject.clone(), d.intended.clone(), d.substituted.clone()))
                .collect(),
            unrouted: (!self.unrouted.is_empty())
                .then(|| serde_json::to_value(&self.unrouted).unwrap_or(Json::Null)),
            branches: (!self.branches.is_empty()).then(|| self.branches.clone()),
            usage: (
                self.usage.prompt_tokens,
                self.usage.completion_tokens,
                self.usage.cached_tokens,
                self.usage.slots,
            ),
            spend: spend_of(&self.usage),
            sub_steps: self.sub_steps,
        };
        let program = &self.prep.program;
        Saved {
            program: self.prep.digest().to_owned(),
            name: (program.name.clone()).or_else(|| program.walker.as_ref()?.name.clone()),
            task: self.task.clone(),
            inputs,
            state,
            waits,
        }
    }
}

/// Why a saved run cannot continue.
#[derive(Debug)]
pub(crate) enum Unfit {
    /// The answer does not fit (too long, or not of the type of what it fills): the run still
    /// waits, and another answer may.
    Answer(String),
    /// The record does not fit this program: no answer can continue it.
    Record(String),
}

impl From<String> for Unfit {
    fn from(m: String) -> Unfit {
        Unfit::Record(m)
    }
}

/// A run rebuilt from its saved state.
pub(crate) struct Rebuilt {
    pub run: Run,
    /// The step it continues at.
    pub cursor: usize,
    /// The carry the answer supplied (none for an `ask_user` answer, the call's result, or an
    /// answer to a CALLed program).
    pub supplied: Option<usize>,
}

/// A CALLed program rebuilt from its pause with the answer: the CALL at `at` continues it
/// instead of starting its program afresh.
pub(crate) struct Callee {
    /// The CALL's step index in the caller.
    pub at: usize,
    pub prep: Arc<Prepared>,
    pub run: Box<Run>,
    pub cursor: usize,
}

/// Rebuilds the run `saved` describes, over `prep`, `depth` CALLs deep; paused, with `answer`
/// applied to the innermost question, parsed by the type of what it fills. A journaled run's
/// caller sets its journal afterwards.
pub(crate) fn rebuild(
    settings: Arc<Settings>,
    prep: Arc<Prepared>,
    saved: Saved,
    answer: Option<&str>,
    depth: usize,
) -> Result<Rebuilt, Unfit> {
    let Saved {
        program,
        name: _,
        task,
        inputs,
        state,
        waits,
    } = saved;
    if let (Some(answer), Some(_)) = (answer, &waits) {
        // A human answer is bounded as a model's is: it fills a carry, the journal and the
        // report.
        if answer.len() > settings.max_answer_bytes {
            return Err(Unfit::Answer(format!(
                "the answer is {} bytes, more than the {} a human answer may have (the limit of a model's answer, `--max-answer-bytes`); answer again, shorter, or raise the limit",
                answer.len(),
                settings.max_answer_bytes
            )));
        }
    }
    if program != prep.digest() {
        return Err(Unfit::Record(
            "it belongs to another program, or the program changed since the run paused".into(),
        ));
    }
    let names = prep.names.clone();
    let n = prep.steps.len();
    let carry = |name: &str, what: &str| {
        names
            .index(name)
            .ok_or_else(|| format!("{what} carry `{name}`, which this program does not declare"))
    };
    // Every value is checked against its carry's declared type: the record is data on disk.
    let value = |c: usize, name: &str, v: &Json| -> Result<Value, String> {
        let value = Value::from_json(v);
        if let Some(Some(ty)) = names.types.get(c) {
            crate::journal::fits(&prep.program, ty, &value)
                .map_err(|e| format!("it holds carry `{name}` as {e}"))?;
        }
        Ok(value)
    };
    let mut values = Vec::with_capacity(inputs.len());
    for (name, v) in &inputs {
        let c = carry(name, "it supplies")?;
        values.push((c, value(c, name, v)?));
    }
    let mut run = Run::new(settings, prep.clone(), Some(task), &values, depth);
    let mut file = run.carries.values.clone();
    for (name, (v, at)) in &state.written {
        let c = carry(name, "it writes")?;
        file[c] = value(c, name, v)?;
        run.written[c] = *at;
    }
    for (name, v) in &state.supplied {
        let c = carry(name, "it supplies")?;
        file[c] = value(c, name, v)?;
        run.supplied[c] = true;
    }
    run.carries = CarryFile {
        names: names.clone(),
        values: file,
    };
    let cursor = waits
        .as_ref()
        .map(|w| w.cursor)
        .or(state.cursor)
        .unwrap_or(0);
    if cursor >= n {
        return Err(Unfit::Record(format!(
            "it continues at step index {cursor}, and this program has {n} steps"
        )));
    }
    for &(at, count) in &state.loops {
        *run.loop_counts.get_mut(at).ok_or_else(|| {
            format!("it counts a LOOP at step index {at}, and this program has {n} steps")
        })? = count;
    }
    if let Some(b) = state.branches {
        if b.iter().any(|&(a, j)| a >= n || j >= n) {
            return Err(Unfit::Record(
                "its pending branches name steps this program does not have".into(),
            ));
        }
        run.branches = b;
    }
    if let Some(u) = state.unrouted {
        run.unrouted = serde_json::from_value::<Vec<Unrouted>>(u)
            .map_err(|e| format!("its unrouted failures do not parse ({e})"))?;
        if run
            .unrouted
            .iter()
            .any(|u| u.carry.is_some_and(|c| c >= names.list.len()))
        {
            return Err(Unfit::Record(
                "its unrouted failures name carries this program does not have".into(),
            ));
        }
    }
    run.deviations = (state.deviations.into_iter())
        .map(|(subject, intended, substituted)| Deviation {
            check: None,
            subject,
            intended,
            substituted,
        })
        .collect();
    run.steps = state.steps;
    run.sub_steps = state.sub_steps;
    run.usage = usage_of(state.usage, state.spend);
    run.effects.meter().restart(run.usage.cost.unwrap_or(0.0));
    let Some(w) = waits else {
        return Ok(Rebuilt {
            run,
            cursor,
            supplied: None,
        });
    };
    let answer = answer.ok_or_else(|| Unfit::Answer("the run waits for an answer".into()))?;
    let supplied = wait(&mut run, &prep, w, answer)?;
    run.effects.meter().restart(run.cost_spent());
    Ok(Rebuilt {
        run,
        cursor,
        supplied,
    })
}

/// Puts the rebuilt `run` back where it waited (`w`) with `answer`: the carry it fills (which
/// is returned), the `ask_user` call's result, or the CALLed program's own rebuilt run.
fn wait(
    run: &mut Run,
    prep: &Arc<Prepared>,
    mut w: Waits,
    answer: &str,
) -> Result<Option<usize>, Unfit> {
    let step = prep
        .steps
        .get(w.cursor)
        .filter(|s| s.id == w.instruction)
        .ok_or_else(|| {
            format!(
                "instruction `{}` is not step {} of this program",
                w.instruction, w.cursor
            )
        })?;
    if let Some(p) = &w.spawn
        && (p.at != w.cursor || step.spawn.is_none() || w.ask.is_none())
    {
        return Err(Unfit::Record(format!(
            "it records paused siblings of step {}, and the run paused at `{}`, which is not that SPAWN",
            p.at, step.id
        )));
    }
    run.spawn_pending = w.spawn.take();
    if let Some(callee) = w.call.take() {
        let Work::Call(Some(target)) = &step.work else {
            return Err(Unfit::Record(format!(
                "it says `{}` waits for the program it CALLs, and `{}` CALLs no program",
                step.id, step.id
            )));
        };
        let callee_prep = run.load_target(step, target).map_err(|_| {
            format!(
                "the program `{target}` that `{}` CALLs cannot be loaded",
                step.id
            )
        })?;
        let sub = rebuild(
            run.settings.clone(),
            callee_prep.clone(),
            *callee,
            Some(answer),
            run.depth + 1,
        )
        .map_err(|e| match e {
            Unfit::Record(m) => Unfit::Record(format!(
                "the state of `{target}`, which `{}` CALLs: {m}",
                step.id
            )),
            answered => answered,
        })?;
        run.callee = Some(Box::new(Callee {
            at: w.cursor,
            prep: callee_prep,
            run: Box::new(sub.run),
            cursor: sub.cursor,
        }));
        return Ok(None);
    }
    if let Some(tool) = w.ask
        && !matches!(&step.work, Work::Tools(calls) if calls.get(tool).is_some_and(|c| c.ask_user))
    {
        return Err(Unfit::Record(format!(
            "it says `{}` asked the user with its tool {tool}, and that tool of the step is no `ask_user` call",
            step.id
        )));
    }
    let carry = match w.ask {
        Some(_) => None,
        None => Some(prep.names.index(&w.carry).ok_or_else(|| {
            format!(
                "it pauses for carry `{}`, which this program does not declare",
                w.carry
            )
        })?),
    };
    let value = parse_answer(prep, &w, carry.is_some(), answer)?;
    match carry {
        Some(c) => {
            run.carries.set(c, value);
            run.supplied[c] = true;
        }
        // The `ask_user` call at the cursor yields the answer instead of pausing again; the
        // pipeline's tools before it already ran.
        None => {
            run.answer = Some(Answer {
                value,
                tool: w.ask.unwrap_or(0),
            });
        }
    }
    Ok(carry)
}

/// The answer parsed by the type of what it fills ([`answer_type`]), a list or an object
/// checked against its element and field types too.
fn parse_answer(
    prep: &Prepared,
    w: &Waits,
    fills_carry: bool,
    answer: &str,
) -> Result<Value, Unfit> {
    let ty = answer_type(prep, w.cursor, &w.carry, w.ask);
    let what = match fills_carry {
        true => format!("carry `{}`", w.carry),
        false => format!("the answer `{}` asks for", w.instruction),
    };
    let shown: String = answer.chars().take(40).collect();
    let cut = if shown.len() < answer.len() {
        "…"
    } else {
        ""
    };
    let declared = ty.as_ref().map_or("any".to_owned(), Type::to_string);
    let value = carries::parse_typed(&prep.program, ty.as_ref(), answer).map_err(|e| {
        Unfit::Answer(format!(
            "`{shown}{cut}` does not fit {what}, declared `{declared}`: answer with {}, such as `--answer {}`",
            e.what, e.example
        ))
    })?;
    if let Some(ty) = &ty {
        crate::journal::fits(&prep.program, ty, &value).map_err(|e| {
            Unfit::Answer(format!(
                "`{shown}{cut}` does not fit {what}, declared `{declared}`: it is {e}"
            ))
        })?;
    }
    Ok(value)
}
