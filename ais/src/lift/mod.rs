//! `ais lift`, the skill compiler: the code-owned stages of [`ais_lift`] (re-exported here)
//! and the compiler itself, an ais program ([`LiftCompiler`]) the runtime runs — so a lift is
//! journaled, resumable and replayable like any run.
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! use ais::lift::{Lift, lift};
//! let model = ais::rt::llm::from_spec("scripted:answers.json")?;
//! let lifted = lift(&Lift::new("skills/csv-clean/SKILL.md"), model, "out".as_ref()).await?;
//! println!("{}", lifted.agir);
//! # Ok(()) }
//! ```

mod compiler;

pub use ais_lift::*;
pub use compiler::{
    LiftCompiler, LiftCompilerInput, LiftCompilerReport, is_compiler, lifted, register_tools,
};

use ais_lift::compile::{Adjudicate, LiftError, Lifted};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What to lift, and how.
#[derive(Clone, Debug)]
pub struct Lift {
    /// The skill's path.
    pub skill: PathBuf,
    /// Who settles the residue.
    pub adjudicate: Adjudicate,
    /// The most coverage-critic rounds.
    pub max_critic_rounds: u32,
    /// The lifted program's name (default: the frontmatter's `name`, else the file stem).
    pub name: Option<String>,
    /// The skill's path as the provenance record names it.
    pub source_path: Option<String>,
}

impl Lift {
    /// A lift of the skill at `skill` with the defaults (the adjudicator model, three critic
    /// rounds).
    pub fn new(skill: impl Into<PathBuf>) -> Lift {
        Lift {
            skill: skill.into(),
            adjudicate: Adjudicate::Model,
            max_critic_rounds: 3,
            name: None,
            source_path: None,
        }
    }

    /// The compiler's inputs for this lift, asking `model`.
    pub fn input(&self, model: &str) -> LiftCompilerInput {
        LiftCompilerInput {
            task: std::path::absolute(&self.skill)
                .unwrap_or_else(|_| self.skill.clone())
                .display()
                .to_string(),
            adjudicator: Some(
                match self.adjudicate {
                    Adjudicate::Model => "model",
                    Adjudicate::Nobody => "nobody",
                    Adjudicate::Person => "person",
                }
                .to_owned(),
            ),
            max_rounds: Some(i64::from(self.max_critic_rounds)),
            name: self.name.clone(),
            source_path: self.source_path.clone(),
            model: Some(model.to_owned()),
            program_file: None,
            report_file: None,
            strict: None,
        }
    }
}

/// Lifts a skill in this process: the compiler program run by a runtime on `model`, its
/// artifacts (none) under `out`, not journaled. A slot with no acceptable answer, or a tool
/// that refuses (the skill changed mid-lift), ends it with the reason.
pub async fn lift(
    lift: &Lift,
    model: Arc<dyn ais_rt::llm::Model>,
    out: &Path,
) -> Result<Lifted, LiftError> {
    let mut tools = ais_rt::ToolRegistry::with_builtins();
    register_tools(&mut tools, Some(model.clone()));
    let runtime = LiftCompiler::add_programs(ais_rt::Runtime::builder().tools(tools))
        .model(model.clone())
        .out_dir(out.to_owned())
        .build();
    let input = lift.input(model.name());
    let report = LiftCompiler::run(input, &runtime)
        .await
        .map_err(|e| LiftError::Run(e.to_string()))?;
    let mut map = serde_json::Map::new();
    map.insert("agir".into(), report.agir.unwrap_or_default().into());
    map.insert("report".into(), report.report.unwrap_or_default());
    lifted(&map)
}
