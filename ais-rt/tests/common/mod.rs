//! Shared by the machine's integration tests: native tools from closures, a runtime over a
//! temporary output root, programs read from AG-IR text, whether `python3` runs here.
#![allow(dead_code)]

use ais_core::Value;
use ais_rt::journal::{JournalError, Json};
use ais_rt::{Inputs, RunOutcome, Runtime};
use ais_rt::{Tool, ToolArgs, ToolContext, ToolError, ToolErrorKind, ToolFuture, ToolRegistry};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

type Body = dyn Fn(&ToolArgs, &ToolContext) -> Result<Value, ToolError> + Send + Sync;

/// A native tool from a closure, counting its calls.
pub struct FnTool {
    body: Box<Body>,
    pub calls: AtomicUsize,
}

impl Tool for FnTool {
    fn call<'a>(&'a self, args: ToolArgs, ctx: &'a ToolContext) -> ToolFuture<'a> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let out = (self.body)(&args, ctx);
        Box::pin(async move { out })
    }
}

/// A tool from a closure.
pub fn tool(
    f: impl Fn(&ToolArgs, &ToolContext) -> Result<Value, ToolError> + Send + Sync + 'static,
) -> Arc<FnTool> {
    Arc::new(FnTool {
        body: Box::new(f),
        calls: AtomicUsize::new(0),
    })
}

/// A failure of kind `Failed`.
pub fn failed(message: &str, output: &str) -> ToolError {
    ToolError {
        kind: ToolErrorKind::Failed,
        message: message.into(),
        output: output.into(),
    }
}

/// A string argument.
pub fn arg<'a>(args: &'a ToolArgs, name: &str) -> &'a str {
    args.params
        .get(name)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// A program from AG-IR text (panics on a reading error: the text is the test's own).
pub fn program(text: &str) -> ais_core::agir::Document {
    ais_core::agir::read(text).unwrap_or_else(|e| panic!("test program does not read: {e}"))
}

/// A test bench: a registry, an output root, a runtime builder's options.
pub struct Bench {
    pub tools: ToolRegistry,
    pub out: tempfile::TempDir,
    pub max_steps: u64,
    pub model: Option<Arc<dyn ais_rt::llm::Model>>,
}

impl Bench {
    pub fn new() -> Bench {
        Bench {
            tools: ToolRegistry::new(),
            out: tempfile::tempdir().expect("a temp dir"),
            max_steps: ais_rt::DEFAULT_MAX_STEPS,
            model: None,
        }
    }

    pub fn with(mut self, name: &str, t: Arc<FnTool>) -> Bench {
        self.tools.register(name, t);
        self
    }

    pub fn runtime(&self) -> Runtime {
        self.runtime_with(|b| b)
    }

    /// [`runtime`](Self::runtime) with `f` applied to the builder.
    pub fn runtime_with(
        &self,
        f: impl FnOnce(ais_rt::RuntimeBuilder) -> ais_rt::RuntimeBuilder,
    ) -> Runtime {
        let mut b = Runtime::builder()
            .tools(self.tools.clone())
            .out_dir(self.out.path().to_path_buf())
            .max_steps(self.max_steps);
        if let Some(m) = &self.model {
            b = b.model(m.clone());
        }
        f(b).build()
    }

    /// Runs `text` with a task and `name=value` inputs.
    pub fn run(&self, text: &str, task: &str, pairs: &[(&str, &str)]) -> RunOutcome {
        let doc = program(text);
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let inputs = Inputs::parse(&doc.program, Some(task.into()), &pairs).expect("inputs parse");
        block_on(
            self.runtime()
                .run(&doc.program, Some(&doc.source_map), inputs),
        )
    }
}

/// Runs a future on a fresh multi-threaded runtime.
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
        .block_on(f)
}

/// Whether `python3` runs here; outside CI a missing interpreter skips the test with a notice,
/// under `CI=true` it fails.
pub fn have_python() -> bool {
    let ok = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "python3 is required to test Python tools (CI=true)"
        );
        eprintln!("notice: python3 not found; skipping");
    }
    ok
}

/// A journal that fails the `n`th commit: the process "dies" at that step boundary.
pub struct DiesAt {
    pub inner: Arc<ais_rt::journal::MemoryJournal>,
    pub n: usize,
    pub commits: AtomicUsize,
}

impl ais_rt::journal::Journal for DiesAt {
    fn run_id(&self) -> &str {
        self.inner.run_id()
    }
    fn effect<'a>(
        &'a self,
        effect: ais_rt::journal::Effect,
        work: ais_rt::journal::BoxFuture<'a, Json>,
    ) -> ais_rt::journal::BoxFuture<'a, Result<ais_rt::journal::Json, JournalError>> {
        self.inner.effect(effect, work)
    }
    fn commit<'a>(
        &'a self,
        commit: &'a ais_rt::journal::StepCommit,
    ) -> ais_rt::journal::BoxFuture<'a, Result<(), JournalError>> {
        if self.commits.fetch_add(1, Ordering::SeqCst) + 1 == self.n {
            return Box::pin(async { Err(JournalError::Store("killed".into())) });
        }
        self.inner.commit(commit)
    }
    fn end<'a>(
        &'a self,
        _end: &'a ais_rt::journal::RunEnd,
    ) -> ais_rt::journal::BoxFuture<'a, Result<(), JournalError>> {
        // A dead process records no end.
        Box::pin(async { Ok(()) })
    }
    fn history(
        &self,
    ) -> ais_rt::journal::BoxFuture<'_, Result<ais_rt::journal::History, JournalError>> {
        self.inner.history()
    }
}
