//! Reading a suite file into runnable [`Case`]s: the YAML read with positions, the format
//! checked by serde, and every assertion checked against its program before anything runs — a
//! report expression type-checked in the program's own guard language, every carry, instruction
//! and tool named checked to exist (with a did-you-mean), every regex and JSON Schema compiled,
//! every input parsed against its carry, every model file read.

use crate::record::Recording;
use crate::suite::{Assertion, CaseFile, MAX_SUITE_BYTES, Place, SuiteError, SuiteFile};
use ais_core::agir::{self, Data, Limits};
use ais_core::expr::{self, TypeEnv};
use ais_core::{Pos, Program, Type};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a case's slots are answered from.
#[derive(Clone)]
pub enum ModelSource {
    /// No model (a program without slots).
    None,
    /// Canned answers: the file, and its JSON (a fresh [`ais_rt::llm::ScriptedModel`] per
    /// trial, so every trial starts at the first answer).
    Scripted(PathBuf, serde_json::Value),
    /// A run recorded by `ais test add`: every slot answered from it, no model asked.
    Recorded(PathBuf, Arc<Recording>),
    /// A live provider (shared by the trials).
    Live(String, Arc<dyn ais_rt::llm::Model>),
}

impl ModelSource {
    /// The source as a suite spells it.
    pub fn spec(&self) -> String {
        match self {
            ModelSource::None => "none".into(),
            ModelSource::Scripted(p, _) => format!("scripted:{}", p.display()),
            ModelSource::Recorded(p, _) => format!("recorded:{}", p.display()),
            ModelSource::Live(s, _) => s.clone(),
        }
    }
}

impl std::fmt::Debug for ModelSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.spec())
    }
}

/// An assertion ready to evaluate: as written, where it stands, and what was compiled of it.
#[derive(Clone, Debug)]
pub struct Check {
    /// The assertion as written.
    pub assertion: Assertion,
    /// Its place in the suite file.
    pub place: Place,
    /// Its expression, regex or schema, compiled.
    pub(crate) compiled: Compiled,
}

#[derive(Clone, Debug)]
pub(crate) enum Compiled {
    None,
    Expr(Arc<expr::Compiled>),
    Regex(regex::Regex),
    Schema(Arc<jsonschema::Validator>),
}

/// A program a suite names, read once.
#[derive(Clone, Debug)]
pub struct LoadedProgram {
    /// Its file.
    pub file: PathBuf,
    /// The program.
    pub program: Arc<Program>,
}

/// A case ready to run.
#[derive(Clone, Debug)]
pub struct Case {
    /// Its name.
    pub name: String,
    /// Its place in the suite file.
    pub place: Place,
    /// Its program.
    pub program: LoadedProgram,
    /// The task text.
    pub task: String,
    /// The other inputs, as `name=value` texts (checked against their carries).
    pub inputs: Vec<(String, String)>,
    /// The same inputs as the suite wrote them.
    pub input_values: Vec<(String, serde_json::Value)>,
    /// Files written under the output root before the run.
    pub files: Vec<(String, String)>,
    /// Human answers, in order.
    pub answers: Vec<String>,
    /// Where its slots are answered from.
    pub model: ModelSource,
    /// Where its judged rubrics are answered from.
    pub judge: ModelSource,
    /// The pass rate it must reach.
    pub threshold: f64,
    /// Its trials.
    pub trials: u32,
    /// The step budget.
    pub max_steps: Option<u64>,
    /// Its assertions.
    pub checks: Vec<Check>,
}

/// A suite ready to run.
#[derive(Clone, Debug)]
pub struct Suite {
    /// The suite file.
    pub path: PathBuf,
    /// Its cases.
    pub cases: Vec<Case>,
}

impl Suite {
    /// Reads and checks the suite at `path`.
    pub fn load(path: &Path) -> Result<Suite, SuiteError> {
        let shown = path.display().to_string();
        let whole = |message: String, help: &str| SuiteError {
            place: Place {
                file: shown.clone(),
                pos: None,
            },
            message,
            help: help.to_owned(),
        };
        let text = ais_core::files::read_regular_text(path, MAX_SUITE_BYTES).map_err(|e| {
            if e.is_not_found() {
                whole(
                    "there is no such suite file".into(),
                    "name an existing `*.aistest.yaml` file",
                )
            } else {
                whole(
                    format!("the suite cannot be read: {e}"),
                    "a suite is a YAML file of at most 4 MiB: split a larger one into several suites",
                )
            }
        })?;
        Suite::parse(path, &text)
    }

    /// Checks the suite text `text`, read from `path` (files it names resolve beside `path`).
    pub fn parse(path: &Path, text: &str) -> Result<Suite, SuiteError> {
        let file = path.display().to_string();
        let at = |pos: Option<Pos>, message: String, help: &str| SuiteError {
            place: Place {
                file: file.clone(),
                pos,
            },
            message,
            help: help.to_owned(),
        };
        let data = agir::read_data(text, &Limits::default()).map_err(|e| {
            at(
                e.pos,
                e.message.clone(),
                e.help
                    .as_deref()
                    .unwrap_or("write the suite as one YAML document"),
            )
        })?;
        if let Some(d) = data.duplicates.first() {
            return Err(at(
                Some(d.pos),
                format!(
                    "`{}` is written twice in this mapping (first at line {})",
                    d.key, d.first.line
                ),
                "keep one of them",
            ));
        }
        let suite: SuiteFile = serde_path_to_error::deserialize(&data.value).map_err(|e| {
            let pointer = pointer_of(e.path());
            at(
                data.key_pos_of(&pointer),
                format!("{}: {}", describe(&pointer), e.inner()),
                "see the suite format: `ais test --schema` prints its JSON Schema",
            )
        })?;
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_owned();
        let mut loader = Loader {
            file: file.clone(),
            dir,
            data: &data,
            programs: HashMap::new(),
        };
        let mut cases = Vec::with_capacity(suite.cases.len());
        let mut names: HashMap<&str, usize> = HashMap::new();
        for (i, case) in suite.cases.iter().enumerate() {
            if let Some(first) = names.insert(case.name.as_str(), i) {
                return Err(at(
                    data.pos_of(&format!("/cases/{i}/name")),
                    format!(
                        "a second case is named `{}` (the first is case {})",
                        case.name,
                        first + 1
                    ),
                    "give every case a name of its own: results are reported by name",
                ));
            }
            cases.push(loader.case(&suite, case, i)?);
        }
        if cases.is_empty() {
            return Err(at(
                data.key_pos_of("/cases"),
                "the suite has no cases".into(),
                "add a case under `cases:` with a `name`, a `task` and what to `expect`",
            ));
        }
        Ok(Suite {
            path: path.to_owned(),
            cases,
        })
    }
}

/// A JSON Pointer from serde's path.
fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => out.push_str(&format!("/{index}")),
            Segment::Map { key } => out.push_str(&format!("/{}", agir::pointer_token(key))),
            Segment::Enum { variant } => {
                out.push_str(&format!("/{}", agir::pointer_token(variant)))
            }
            Segment::Unknown => {}
        }
    }
    out
}

/// A pointer in words: `cases[2].expect[0]`.
fn describe(pointer: &str) -> String {
    if pointer.is_empty() {
        return "the suite".into();
    }
    let mut out = String::new();
    for token in pointer.split('/').skip(1) {
        if token.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{token}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&token.replace("~1", "/").replace("~0", "~"));
        }
    }
    format!("`{out}`")
}

struct Loader<'a> {
    file: String,
    dir: PathBuf,
    data: &'a Data,
    programs: HashMap<PathBuf, LoadedProgram>,
}

impl Loader<'_> {
    fn err(&self, pointer: &str, message: String, help: impl Into<String>) -> SuiteError {
        SuiteError {
            place: self.place(pointer),
            message,
            help: help.into(),
        }
    }

    fn place(&self, pointer: &str) -> Place {
        Place {
            file: self.file.clone(),
            pos: self.data.key_pos_of(pointer),
        }
    }

    fn case(&mut self, suite: &SuiteFile, case: &CaseFile, i: usize) -> Result<Case, SuiteError> {
        let here = format!("/cases/{i}");
        let (program_text, program_at) = match (&case.program, &suite.program) {
            (Some(p), _) => (p, format!("{here}/program")),
            (None, Some(p)) => (p, "/program".to_owned()),
            (None, None) => {
                return Err(self.err(
                    &here,
                    format!("case `{}` names no program", case.name),
                    "name it with `program: FILE.agir` on the case or at the top of the suite",
                ));
            }
        };
        let program = self.program(program_text, &program_at)?;
        let threshold = case.threshold.or(suite.threshold).unwrap_or(1.0);
        if !(0.0..=1.0).contains(&threshold) {
            let at = if case.threshold.is_some() {
                format!("{here}/threshold")
            } else {
                "/threshold".into()
            };
            return Err(self.err(
                &at,
                format!("the threshold {threshold} is not a pass rate between 0 and 1"),
                "write e.g. `threshold: 0.9` for 90%",
            ));
        }
        let trials = case.trials.or(suite.trials).unwrap_or(1);
        if !(1..=10_000).contains(&trials) {
            return Err(self.err(
                &format!("{here}/trials"),
                format!("{trials} trials: a case runs from 1 to 10000 times"),
                "write e.g. `trials: 10`",
            ));
        }
        let has_slots = program.program.instructions().iter().any(|n| n.is_su());
        let model = match (&case.model, &suite.model) {
            (Some(m), _) => self.model(m, &format!("{here}/model"))?,
            (None, Some(m)) => self.model(m, "/model")?,
            (None, None) if has_slots => {
                return Err(self.err(
                    &here,
                    format!(
                        "case `{}` runs `{}`, which has model slots, and names no model",
                        case.name,
                        program.file.display()
                    ),
                    "name one with `model: scripted:FILE.json` (canned answers), `model: recorded:FILE.json` (`ais test add`) or a provider (`model: openai:gpt-4o-mini`)",
                ));
            }
            (None, None) => ModelSource::None,
        };
        let judged = case
            .expect
            .iter()
            .any(|a| matches!(a, Assertion::Judged(_)));
        let judge = match (&case.judge, &suite.judge) {
            (Some(m), _) => self.model(m, &format!("{here}/judge"))?,
            (None, Some(m)) if judged => self.model(m, "/judge")?,
            _ if judged && matches!(model, ModelSource::None | ModelSource::Recorded(..)) => {
                return Err(self.err(
                    &here,
                    format!(
                        "case `{}` has a judged rubric and no judge model",
                        case.name
                    ),
                    "name one with `judge: scripted:FILE.json` or a provider spec",
                ));
            }
            _ => model.clone(),
        };
        let mut inputs = Vec::with_capacity(case.inputs.len());
        for (name, value) in &case.inputs {
            let text = match value {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            inputs.push((name.clone(), text));
        }
        if let Err(e) = ais_rt::Inputs::parse(&program.program, Some(case.task.clone()), &inputs) {
            return Err(self.err(
                &format!("{here}/inputs/{}", agir::pointer_token(&e.name)),
                format!("input `{}`: {}", e.name, e.message),
                "each input names a `role: input` carry of the program and a value of its type",
            ));
        }
        let env = TypeEnv::from_program(&program.program);
        let mut checks = Vec::with_capacity(case.expect.len());
        for (j, assertion) in case.expect.iter().enumerate() {
            let at = format!("{here}/expect/{j}/{}", assertion.kind());
            if matches!(assertion, Assertion::SameRequests(_))
                && !matches!(model, ModelSource::Recorded(..))
            {
                return Err(self.err(
                    &at,
                    "`same_requests` compares a run with its recording, and this case's model is not `recorded:`".into(),
                    "drop it, or record the case with `ais test add RUN_ID --to SUITE`",
                ));
            }
            if matches!(assertion, Assertion::Certificate(_))
                && matches!(model, ModelSource::Recorded(..))
            {
                return Err(self.err(
                    &at,
                    "`certificate` certifies a journaled run, and a `recorded:` case replays its recording without a journal of its own".into(),
                    "certify the recorded run itself with `ais runs certify RUN_ID`, or give this case a `scripted:` or live model",
                ));
            }
            let compiled = self.assertion(assertion, &program.program, &env, &at)?;
            checks.push(Check {
                assertion: assertion.clone(),
                place: self.place(&format!("{here}/expect/{j}")),
                compiled,
            });
        }
        for path in case.files.keys() {
            if !safe_relative(path) {
                return Err(self.err(
                    &format!("{here}/files/{}", agir::pointer_token(path)),
                    format!("`{path}` leaves the run's output root"),
                    "name the file relative to the output root, without `..`",
                ));
            }
        }
        Ok(Case {
            files: case
                .files
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            answers: case.answers.clone(),
            name: case.name.clone(),
            place: self.place(&here),
            program,
            task: case.task.clone(),
            inputs,
            input_values: case
                .inputs
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            model,
            judge,
            threshold,
            trials,
            max_steps: suite.max_steps,
            checks,
        })
    }

    fn path(&self, text: &str) -> PathBuf {
        let p = Path::new(text);
        if p.is_absolute() {
            p.to_owned()
        } else {
            self.dir.join(p)
        }
    }

    fn program(&mut self, text: &str, at: &str) -> Result<LoadedProgram, SuiteError> {
        let file = self.path(text);
        if let Some(p) = self.programs.get(&file) {
            return Ok(p.clone());
        }
        let limits = Limits::default();
        let source =
            ais_core::files::read_regular_text(&file, limits.max_bytes as u64).map_err(|e| {
                let (message, help) = if e.is_not_found() {
                    (
                        format!("there is no program `{}`", file.display()),
                        "a program is named by its `.agir` file, relative to the suite file",
                    )
                } else {
                    (
                        format!("the program `{}` cannot be read: {e}", file.display()),
                        "name a readable `.agir` file",
                    )
                };
                self.err(at, message, help)
            })?;
        let doc = agir::read_with_limits(&source, &limits).map_err(|e| {
            let line = e.pos.map(|p| format!(":{}:{}", p.line, p.column));
            self.err(
                at,
                format!(
                    "the program `{}{}` does not read as AG-IR: {}",
                    file.display(),
                    line.unwrap_or_default(),
                    e.message
                ),
                format!(
                    "see the whole diagnostic with `ais check {}`",
                    file.display()
                ),
            )
        })?;
        let loaded = LoadedProgram {
            file: file.clone(),
            program: Arc::new(doc.program),
        };
        self.programs.insert(file, loaded.clone());
        Ok(loaded)
    }

    fn model(&self, spec: &str, at: &str) -> Result<ModelSource, SuiteError> {
        let spec = spec.trim();
        if let Some(file) = spec.strip_prefix("scripted:") {
            let path = self.path(file);
            let text = ais_core::files::read_regular_text(&path, MAX_SUITE_BYTES).map_err(|e| {
                self.err(
                    at,
                    format!(
                        "the scripted answers `{}` cannot be read: {e}",
                        path.display()
                    ),
                    "name a JSON file of canned answers, relative to the suite file",
                )
            })?;
            let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
                self.err(
                    at,
                    format!(
                        "the scripted answers `{}` are not JSON: {e}",
                        path.display()
                    ),
                    "a scripted file maps each instruction id to a list of answers",
                )
            })?;
            ais_rt::llm::ScriptedModel::from_json(&path, json.clone())
                .map_err(|e| self.err(at, e.message, "fix the scripted file"))?;
            return Ok(ModelSource::Scripted(path, json));
        }
        if let Some(file) = spec.strip_prefix("recorded:") {
            let path = self.path(file);
            let recording = Recording::read(&path).map_err(|e| {
                self.err(
                    at,
                    e,
                    "record a run as a case with `ais test add RUN_ID --to SUITE`",
                )
            })?;
            return Ok(ModelSource::Recorded(path, Arc::new(recording)));
        }
        let model = ais_rt::llm::from_spec(spec).map_err(|e| {
            self.err(
                at,
                e.message,
                "write `scripted:FILE.json`, `recorded:FILE.json` or a provider spec such as `openai:gpt-4o-mini`",
            )
        })?;
        Ok(ModelSource::Live(spec.to_owned(), model))
    }

    fn assertion(
        &self,
        assertion: &Assertion,
        program: &Program,
        env: &TypeEnv,
        at: &str,
    ) -> Result<Compiled, SuiteError> {
        let carries: Vec<&str> = program.carries().iter().map(|c| c.name.as_str()).collect();
        let carry = |name: &str, at: &str| -> Result<(), SuiteError> {
            if carries.contains(&name) {
                return Ok(());
            }
            Err(self.err(
                at,
                format!(
                    "`{name}` is no carry of the program{}",
                    hint(name, &carries)
                ),
                format!("its carries are: {}", carries.join(", ")),
            ))
        };
        let ids: Vec<&str> = program
            .instructions()
            .iter()
            .map(|n| n.id.as_str())
            .collect();
        let instructions = |names: &[String]| -> Result<(), SuiteError> {
            for (k, name) in names.iter().enumerate() {
                if !ids.contains(&name.as_str()) {
                    return Err(self.err(
                        &format!("{at}/{k}"),
                        format!(
                            "`{name}` is no instruction of the program{}",
                            hint(name, &ids)
                        ),
                        format!("its instructions are: {}", ids.join(", ")),
                    ));
                }
            }
            Ok(())
        };
        Ok(match assertion {
            Assertion::Report(text) => {
                let compiled = expr::compile_str(text, env, &expr::Limits::default()).map_err(|e| {
                    self.err(
                        at,
                        format!(
                            "{} at column {} of `{text}`: {}",
                            e.category, e.column, e.message
                        ),
                        "a report assertion is an expression of the program's guard language over its carries (`ais eval` tries one)",
                    )
                })?;
                if !matches!(compiled.ty(), Type::Bool | Type::Any) {
                    return Err(self.err(
                        at,
                        format!("`{text}` is a {}, not a bool", compiled.ty()),
                        "compare it: `len(reply) > 0`, `category == Category.billing`",
                    ));
                }
                Compiled::Expr(Arc::new(compiled))
            }
            Assertion::ReportEquals(map) => {
                for name in map.keys() {
                    carry(name, &format!("{at}/{}", agir::pointer_token(name)))?;
                }
                Compiled::None
            }
            Assertion::ReportSchema(s) => {
                if let Some(name) = &s.carry {
                    carry(name, &format!("{at}/carry"))?;
                }
                let validator = jsonschema::validator_for(&s.schema).map_err(|e| {
                    self.err(
                        &format!("{at}/schema"),
                        format!("the schema is not a valid JSON Schema: {e}"),
                        "write a JSON Schema (draft 2020-12) as YAML",
                    )
                })?;
                Compiled::Schema(Arc::new(validator))
            }
            Assertion::Artifact(a) => {
                if !safe_relative(&a.path) {
                    return Err(self.err(
                        &format!("{at}/path"),
                        format!("`{}` leaves the run's output root", a.path),
                        "name the artifact relative to the output root, without `..`",
                    ));
                }
                if let Some(f) = &a.equals_file {
                    let p = self.path(f);
                    if !p.is_file() {
                        return Err(self.err(
                            &format!("{at}/equals_file"),
                            format!("there is no file `{}` to compare with", p.display()),
                            "name the expected file relative to the suite file",
                        ));
                    }
                }
                match &a.matches {
                    Some(re) => Compiled::Regex(regex::Regex::new(re).map_err(|e| {
                        self.err(
                            &format!("{at}/matches"),
                            format!(
                                "`{re}` is not a regular expression: {}",
                                e.to_string()
                                    .lines()
                                    .last()
                                    .unwrap_or_default()
                                    .trim_start_matches("error: ")
                            ),
                            "write it in Rust `regex` syntax (quote it in YAML when it has `:` or `#`)",
                        )
                    })?),
                    None => Compiled::None,
                }
            }
            Assertion::Visited(names)
            | Assertion::NotVisited(names)
            | Assertion::VisitedInOrder(names) => {
                instructions(names)?;
                Compiled::None
            }
            Assertion::LoopAtMost(b) => {
                if !ids.contains(&b.instruction.as_str()) {
                    return Err(self.err(
                        &format!("{at}/instruction"),
                        format!(
                            "`{}` is no instruction of the program{}",
                            b.instruction,
                            hint(&b.instruction, &ids)
                        ),
                        format!("its instructions are: {}", ids.join(", ")),
                    ));
                }
                Compiled::None
            }
            Assertion::ToolCalled(t) => {
                let builtins = ais_rt::ToolRegistry::with_builtins();
                let mut tools: Vec<&str> = program
                    .tool_list()
                    .iter()
                    .map(|t| t.name.as_str())
                    .collect();
                tools.extend(builtins.names());
                if !tools.contains(&t.tool.as_str()) {
                    return Err(self.err(
                        &format!("{at}/tool"),
                        format!(
                            "`{}` is neither a tool of the program nor a built-in{}",
                            t.tool,
                            hint(&t.tool, &tools)
                        ),
                        "name a tool of the program's `tools` section or of the built-in library",
                    ));
                }
                Compiled::None
            }
            Assertion::Judged(j) => {
                for (k, name) in j.of.iter().enumerate() {
                    carry(name, &format!("{at}/of/{k}"))?;
                }
                Compiled::None
            }
            Assertion::Certificate(_) => {
                let recorded = program
                    .faithfulness
                    .as_ref()
                    .is_some_and(|r| !r.obligation_list().is_empty());
                if !recorded {
                    return Err(self.err(
                        at,
                        "`certificate` needs the program's provenance record, and the program has none (no `faithfulness.obligations`)".into(),
                        crate::certificate::NO_RECORD_HELP,
                    ));
                }
                Compiled::None
            }
            Assertion::Status(ais_rt::Status::Interrupted) => {
                return Err(self.err(
                    at,
                    "a test run is never `interrupted` (that needs a killed run)".into(),
                    "expect `ok`, `error`, `fault` or `input_required`",
                ));
            }
            Assertion::Status(_)
            | Assertion::NoFault(_)
            | Assertion::NoDeviation(_)
            | Assertion::Cost(_)
            | Assertion::SameRequests(_) => Compiled::None,
        })
    }
}

/// Whether `path` is relative and stays under its root (no `..`).
fn safe_relative(path: &str) -> bool {
    let p = Path::new(path);
    !path.is_empty()
        && p.components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        })
}

/// ` (did you mean `x`?)` when a name is close.
fn hint(name: &str, names: &[&str]) -> String {
    ais_core::did_you_mean(name, names.iter().copied())
        .first()
        .map(|h| format!(" (did you mean `{h}`?)"))
        .unwrap_or_default()
}
