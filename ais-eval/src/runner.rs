//! Running a suite: every case's trials, concurrently up to a bound, each in an output root of
//! its own and journaled; every assertion evaluated on every trial; pass rates with their
//! Wilson intervals.

use crate::check::{self, CheckResult, Observation};
use crate::judge::{self, Collect};
use crate::load::{Case, LoadedProgram, ModelSource, Suite};
use crate::stats::{Z95, wilson};
use crate::suite::Assertion;
use ais_rt::journal::Journal;
use ais_rt::journal::MemoryJournal;
use ais_rt::journal::sqlite::{Durability, SqliteStore};
use ais_rt::journal::{Recording, ToolReplay};
use ais_rt::llm::{Model, ScriptedModel};
use ais_rt::{Inputs, Runtime, RuntimeBuilder};
use serde::Serialize;
use serde_json::{Value as Json, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// What runs a suite's programs: the runtime each run is built from. The default
/// ([`Builtins`]) gives an `.agir` program the built-in tool library and its directory for CALL
/// targets; a host embedding `ais!` programs adds their native tools and callees.
pub trait Host: Send + Sync + 'static {
    /// The builder of a run of `program` (the runner sets the model, output root, trace and
    /// step budget).
    fn builder(&self, program: &LoadedProgram) -> RuntimeBuilder {
        let mut b = Runtime::builder();
        if let Some(dir) = program.file.parent().filter(|d| !d.as_os_str().is_empty()) {
            b = b.program_dir(dir.to_owned());
        }
        b
    }
}

/// The default host: the built-in tools only.
#[derive(Clone, Copy, Debug, Default)]
pub struct Builtins;

impl Host for Builtins {}

/// How a suite runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Trials per case, overriding the suite's.
    pub trials: Option<u32>,
    /// Trials run at once.
    pub jobs: usize,
    /// The directory every trial's output root is made under (`<case>/<trial>/`), and whose
    /// `.ais/runs.db` journals every run.
    pub out: PathBuf,
    /// Journal every run (and every judge's run) in `<out>/.ais/runs.db`.
    pub journal: bool,
}

/// One trial's result.
#[derive(Clone, Debug, Serialize)]
pub struct TrialResult {
    /// The trial's number, from 1.
    pub trial: u32,
    /// The run's id in the journal.
    pub run: Option<String>,
    /// The run's output root.
    pub out: PathBuf,
    /// How the run ended (`None`: it could not start).
    pub status: Option<ais_rt::Status>,
    /// Whether every assertion held.
    pub passed: bool,
    /// Why the trial could not run, when it could not.
    pub error: Option<String>,
    /// Each assertion's verdict.
    pub checks: Vec<CheckResult>,
    /// Steps executed.
    pub steps: u64,
    /// Exchanges with the model, scripted ones included.
    pub model_calls: u64,
    /// Exchanges with a live model (the case's and its judges').
    pub live_calls: u64,
    /// Wall-clock milliseconds.
    pub wall_ms: u64,
}

/// One case's result over its trials.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    /// The case's name.
    pub name: String,
    /// Its line in the suite file.
    pub line: Option<u32>,
    /// Its program.
    pub program: PathBuf,
    /// Its model.
    pub model: String,
    /// Trials run.
    pub trials: u32,
    /// Trials whose every assertion held.
    pub passed: u32,
    /// `passed / trials`.
    pub pass_rate: f64,
    /// The 95% Wilson score interval of the pass rate.
    pub interval: [f64; 2],
    /// The pass rate it had to reach.
    pub threshold: f64,
    /// Whether it reached it.
    pub met: bool,
    /// Each trial.
    pub results: Vec<TrialResult>,
}

/// A suite's result.
#[derive(Clone, Debug, Serialize)]
pub struct SuiteResult {
    /// The suite file.
    pub suite: PathBuf,
    /// Whether every case met its threshold.
    pub passed: bool,
    /// The cases, in the suite's order.
    pub cases: Vec<CaseResult>,
    /// The journal the runs are in.
    pub journal: Option<PathBuf>,
    /// Wall-clock milliseconds of the whole suite.
    pub wall_ms: u64,
}

/// A trial finished: its case and result (for progress).
pub type OnTrial = dyn Fn(&Case, &TrialResult) + Send + Sync;

/// Runs `suite` on a multi-threaded async runtime of its own.
pub fn run(
    suite: &Suite,
    host: Arc<dyn Host>,
    options: &Options,
    on_trial: Arc<OnTrial>,
) -> Result<SuiteResult, String> {
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let result = tokio.block_on(run_async(suite, host, options, on_trial));
    // A tool stopped at its timeout may still block in the kernel: do not wait for it.
    tokio.shutdown_background();
    result
}

/// Runs `suite`: every trial of every case, at most `options.jobs` at once.
pub async fn run_async(
    suite: &Suite,
    host: Arc<dyn Host>,
    options: &Options,
    on_trial: Arc<OnTrial>,
) -> Result<SuiteResult, String> {
    let started = Instant::now();
    std::fs::create_dir_all(&options.out).map_err(|e| {
        format!(
            "cannot create the output directory `{}`: {e}",
            options.out.display()
        )
    })?;
    let store = if options.journal {
        let path = options.out.join(".ais").join("runs.db");
        Some(SqliteStore::open(&path, Durability::Normal).map_err(|e| e.to_string())?)
    } else {
        None
    };
    let suite_dir = suite
        .path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_owned();
    let permits = Arc::new(tokio::sync::Semaphore::new(options.jobs.max(1)));
    let mut set = tokio::task::JoinSet::new();
    for (ci, case) in suite.cases.iter().enumerate() {
        let trials = options.trials.unwrap_or(case.trials);
        for t in 1..=trials {
            let case = case.clone();
            let host = host.clone();
            let permits = permits.clone();
            let store = store.clone();
            let on_trial = on_trial.clone();
            let suite_dir = suite_dir.clone();
            let out = options.out.join(slug(&case.name, ci)).join(t.to_string());
            let suite_path = suite.path.clone();
            set.spawn(async move {
                let _permit = permits.acquire_owned().await;
                let ctx = Trial {
                    case: &case,
                    trial: t,
                    out,
                    host,
                    store: store.as_ref(),
                    suite_dir: &suite_dir,
                    suite_path: &suite_path,
                };
                let result = ctx.run().await;
                on_trial(&case, &result);
                (ci, result)
            });
        }
    }
    let mut per_case: Vec<Vec<TrialResult>> = vec![Vec::new(); suite.cases.len()];
    while let Some(joined) = set.join_next().await {
        let (ci, result) = joined.map_err(|e| format!("a trial's task failed: {e}"))?;
        per_case[ci].push(result);
    }
    let mut cases = Vec::with_capacity(suite.cases.len());
    for (case, mut results) in suite.cases.iter().zip(per_case) {
        results.sort_by_key(|r| r.trial);
        let trials = results.len() as u32;
        let passed = results.iter().filter(|r| r.passed).count() as u32;
        let pass_rate = if trials == 0 {
            0.0
        } else {
            f64::from(passed) / f64::from(trials)
        };
        let (low, high) = wilson(passed, trials, Z95);
        cases.push(CaseResult {
            name: case.name.clone(),
            line: case.place.pos.map(|p| p.line),
            program: case.program.file.clone(),
            model: case.model.spec(),
            trials,
            passed,
            pass_rate,
            interval: [low, high],
            threshold: case.threshold,
            met: pass_rate + 1e-12 >= case.threshold,
            results,
        });
    }
    Ok(SuiteResult {
        suite: suite.path.clone(),
        passed: cases.iter().all(|c| c.met),
        cases,
        journal: store.map(|s| s.path().to_owned()),
        wall_ms: started.elapsed().as_millis() as u64,
    })
}

/// A directory name for case `i`: its name made file-safe.
fn slug(name: &str, i: usize) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    s.truncate(48);
    format!("{:02}-{}", i + 1, s.trim_matches('-'))
}

struct Trial<'a> {
    case: &'a Case,
    trial: u32,
    out: PathBuf,
    host: Arc<dyn Host>,
    store: Option<&'a SqliteStore>,
    suite_dir: &'a Path,
    suite_path: &'a Path,
}

impl Trial<'_> {
    fn failed(&self, error: String) -> TrialResult {
        TrialResult {
            trial: self.trial,
            run: None,
            out: self.out.clone(),
            status: None,
            passed: false,
            error: Some(error),
            checks: Vec::new(),
            steps: 0,
            model_calls: 0,
            live_calls: 0,
            wall_ms: 0,
        }
    }

    fn meta(&self, extra: Json) -> Json {
        let mut meta = json!({
            "format": "ais-test/1",
            "suite": absolute(self.suite_path),
            "case": self.case.name,
            "trial": self.trial,
            "program": absolute(&self.case.program.file),
            "model": self.case.model.spec(),
            "out": absolute(&self.out),
        });
        if let (Some(m), Some(e)) = (meta.as_object_mut(), extra.as_object()) {
            m.extend(e.clone());
        }
        meta
    }

    async fn run(&self) -> TrialResult {
        // The trial's own directory: what an earlier run left there must not pass an artifact
        // assertion.
        if self.out.is_dir()
            && let Err(e) = std::fs::remove_dir_all(&self.out)
        {
            return self.failed(format!(
                "cannot clear the output root `{}` of an earlier run: {e}",
                self.out.display()
            ));
        }
        if let Err(e) = std::fs::create_dir_all(&self.out) {
            return self.failed(format!(
                "cannot create the output root `{}`: {e}",
                self.out.display()
            ));
        }
        let case = self.case;
        for (path, text) in &case.files {
            let file = self.out.join(path);
            let written = file
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(&file, text));
            if let Err(e) = written {
                return self.failed(format!("cannot write the case's file `{path}`: {e}"));
            }
        }
        let sink = Arc::new(Collect::default());
        let mut builder = self
            .host
            .builder(&case.program)
            .out_dir(self.out.clone())
            .trace(sink.clone());
        if let Some(n) = case.max_steps {
            builder = builder.max_steps(n);
        }
        let model = match open(&case.model) {
            Ok(m) => m,
            Err(e) => return self.failed(e),
        };
        if let Some(m) = &model {
            builder = builder.model(m.clone());
        }
        let runtime = builder.build();
        let inputs =
            match Inputs::parse(&case.program.program, Some(case.task.clone()), &case.inputs) {
                Ok(i) => i,
                Err(e) => return self.failed(format!("input `{}`: {}", e.name, e.message)),
            };
        let prep = runtime.prepare_shared(case.program.program.clone(), None);
        let started = Instant::now();
        let mut run = None;
        let mut memory: Option<(Arc<MemoryJournal>, ais_rt::journal::RunStart)> = None;
        let (outcome, misses) = match &case.model {
            ModelSource::Recorded(_, recording) => {
                let values = case.input_values.clone();
                let rec = recording.to_replay(Some(&case.task), Some(values));
                match runtime.replay(&prep, &rec, ToolReplay::Live).await {
                    Ok(r) => {
                        let mut misses: Vec<String> =
                            r.misses.iter().map(|m| m.to_string()).collect();
                        misses.extend(r.unasked.iter().map(|e| {
                            format!(
                                "`{}` ({} `{}`) was recorded and never asked",
                                e.instruction,
                                e.kind.as_str(),
                                e.name
                            )
                        }));
                        (r.outcome, Some(misses))
                    }
                    Err(e) => return self.failed(e.to_string()),
                }
            }
            _ => {
                let start = runtime.run_start(
                    ais_rt::journal::new_run_id(),
                    &prep,
                    &inputs,
                    self.meta(Json::Null),
                );
                let journal: Arc<dyn Journal> = match self.store {
                    Some(store) => match store.begin(&start) {
                        Ok(j) => {
                            run = Some(start.id.clone());
                            Arc::new(j)
                        }
                        Err(e) => return self.failed(format!("the run cannot be journaled: {e}")),
                    },
                    None => {
                        let m = Arc::new(MemoryJournal::new(start.id.clone()));
                        memory = Some((m.clone(), start.clone()));
                        m
                    }
                };
                let mut outcome = runtime.run_journaled(&prep, inputs, journal.clone()).await;
                let mut answers = case.answers.iter();
                while outcome.status == ais_rt::Status::InputRequired {
                    let Some(answer) = answers.next() else { break };
                    outcome = runtime
                        .resume_journaled(&prep, journal.clone(), &start, Some(answer.clone()))
                        .await;
                }
                (outcome, None)
            }
        };
        let wall = started.elapsed();
        let obs = Observation {
            outcome,
            events: sink.take(),
            out: self.out.clone(),
            wall,
            misses,
        };
        let mut live_calls = obs.live_calls();
        // The judge: one model per trial, so a scripted judge's answers go in order.
        let judged = case
            .checks
            .iter()
            .any(|c| matches!(c.assertion, Assertion::Judged(_)));
        let judge_model = if judged { open(&case.judge) } else { Ok(None) };
        let certified = case
            .checks
            .iter()
            .any(|c| matches!(c.assertion, Assertion::Certificate(_)));
        let certificate = if certified {
            Some(self.certify(run.as_deref(), memory).await)
        } else {
            None
        };
        let mut checks = Vec::with_capacity(case.checks.len());
        for (i, check) in case.checks.iter().enumerate() {
            let verdict = match &check.assertion {
                Assertion::Certificate(bound) => certificate
                    .as_ref()
                    .map(|c| check::certificate_verdict(bound, c)),
                Assertion::Judged(j) => {
                    let subject = if j.of.is_empty() {
                        Json::Object(obs.outcome.report.clone())
                    } else {
                        Json::Object(
                            j.of.iter()
                                .map(|n| {
                                    (
                                        n.clone(),
                                        obs.outcome.report.get(n).cloned().unwrap_or(Json::Null),
                                    )
                                })
                                .collect(),
                        )
                    };
                    Some(match &judge_model {
                        Err(e) => (false, e.clone()),
                        Ok(None) => (false, "there is no judge model".to_owned()),
                        Ok(Some(m)) => {
                            let meta = self
                                .meta(json!({"judge_of": run, "assertion": i, "program": null}));
                            let out = self.out.join(".ais").join("judge").join(i.to_string());
                            let got = judge::judge(
                                m.clone(),
                                &j.rubric,
                                &subject,
                                &out,
                                self.store.map(|s| (s, meta)),
                            )
                            .await;
                            live_calls += got.live_calls;
                            let run = got
                                .run
                                .map(|r| format!(" (judge run {r})"))
                                .unwrap_or_default();
                            match got.pass {
                                Some(p) => (p, format!("{}{run}", got.reason)),
                                None => (false, format!("{}{run}", got.reason)),
                            }
                        }
                    })
                }
                _ => None,
            };
            checks.push(check::evaluate(i, check, &obs, self.suite_dir, verdict));
        }
        TrialResult {
            trial: self.trial,
            run,
            out: self.out.clone(),
            status: Some(obs.outcome.status),
            passed: checks.iter().all(|c| c.passed),
            error: None,
            checks,
            steps: obs.outcome.steps,
            model_calls: obs.model_calls(),
            live_calls,
            wall_ms: wall.as_millis() as u64,
        }
    }
}

impl Trial<'_> {
    /// The certificate of this trial's run, from the journal it was recorded in.
    async fn certify(
        &self,
        run: Option<&str>,
        memory: Option<(Arc<MemoryJournal>, ais_rt::journal::RunStart)>,
    ) -> Result<crate::certificate::Certificate, String> {
        let recording = match (self.store, run, memory) {
            (Some(store), Some(id), _) => Recording::from_sqlite(store, id),
            (_, _, Some((journal, start))) => Recording::from_memory(&journal, start).await,
            _ => return Err("the run was not journaled, so there is nothing to certify".into()),
        }
        .map_err(|e| format!("the run's journal cannot be read: {e}"))?;
        crate::certificate::certify(&recording).map_err(|e| e.message)
    }
}

/// The model of one trial: a fresh scripted model (answers from the first), the shared live
/// one, none for a recorded case (the runtime's replay answers from the recording).
fn open(source: &ModelSource) -> Result<Option<Arc<dyn Model>>, String> {
    Ok(match source {
        ModelSource::None | ModelSource::Recorded(..) => None,
        ModelSource::Scripted(path, json) => Some(Arc::new(
            ScriptedModel::from_json(path, json.clone()).map_err(|e| e.message)?,
        )),
        ModelSource::Live(_, m) => Some(m.clone()),
    })
}

fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned())
}
