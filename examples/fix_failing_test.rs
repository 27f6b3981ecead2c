//! A repair loop written with `ais!`: run a Python module's tests, and while they fail, have
//! the model repair the module — at most three times — then save it if its tests pass.
//!
//! The verdict (`passing`) comes from a Rust tool that really runs the tests under `python3`
//! and returns a `TestRun` object whose fields land in the carries of their names; the LOOP
//! advances when the verdict passes or its cap is reached, counting its rounds in `attempts`,
//! and a ROUTE saves the module only if its tests pass. The run needs `python3` on the `PATH`.
//!
//! Run it on the SCRIPTED model shipped beside it (canned answers, no API key, no network):
//! `cargo run --example fix_failing_test [OUT_DIR]`; print its AG-IR: `cargo run --example
//! fix_failing_test -- --agir`.

use ais::ais;

ais! {
    /// Make a module's failing tests pass: run them, and while they fail, repair the module
    /// (at most three times); save it only if its tests pass.
    pub program FixFailingTest (name = "fix_failing_test", shape = "repair-loop") {
        carries {
            /// What to fix (`Fix slugify in text_utils.py so its tests pass`).
            task: str = input,
            /// The module to repair. The program reads it and, once its tests pass, saves the
            /// repair over it: a destination the program carries is written as given, which is
            /// how a program asks for an in-place rewrite (a file the task merely names is
            /// never replaced).
            module_file: path = input,
            /// The tests, as Python functions named `test_*` that call the module's functions.
            tests: str = input,
            /// The module's source, as read and then as repaired.
            source: str,
            /// True when every test passed on the last run.
            passing: bool,
            /// The failing tests of the last run, one per line.
            failures: str,
            /// How many repairs the loop made.
            attempts: int,
            /// Where the module was saved.
            saved_to: str,
        }

        /// One run of the tests.
        struct TestRun {
            /// True when every test ran and passed.
            passing: bool,
            /// One line per failing test — its name, the error and the failing line — or why
            /// the tests could not run at all.
            failures: str,
        }

        #[surface(SENSE)]
        tool read_file;

        /// Run every `test_*` function of the tests against the source under `python3`, each
        /// in the module's namespace, with a ten-second alarm. Tests that cannot run at all
        /// (no `python3`, a module that kills the interpreter) fail, with the reason.
        #[surface(SENSE)]
        tool run_tests(source: &str, tests: &str) -> TestRun {
            let ran = tempfile::tempdir().and_then(|dir| {
                std::fs::write(dir.path().join("module_source.py"), source)?;
                std::fs::write(dir.path().join("module_tests.py"), tests)?;
                std::process::Command::new("python3")
                    .args(["-c", PY_TEST_RUNNER])
                    .current_dir(dir.path())
                    .output()
            });
            let failures = match ran {
                Ok(out) if out.status.success() => {
                    String::from_utf8_lossy(&out.stdout).trim().to_owned()
                }
                Ok(out) => format!(
                    "the tests could not run ({}): {}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
                Err(e) => format!("the tests could not run: {e}"),
            };
            TestRun { passing: failures.is_empty(), failures }
        }

        /// Write the repaired module over its file.
        #[surface(ACT, artifact)]
        tool save_source(source: &str, path: &ais::ArtifactPath) -> std::io::Result<String> {
            path.write(source)
        }

        read: SENSE read_file(module_file) -> source;
        test: SENSE run_tests(source, tests) -> (passing, failures);
        /// Repair the module so the failing tests pass. Change only what the failures call
        /// for, keep every function's name and signature, and return the whole module as
        /// plain Python source, without Markdown fences.
        #[verdict(passing)]
        #[cap(3)]
        #[counter(attempts)]
        repair: LOOP(model)(task, source, failures) -> source;
        keep: ROUTE(passing);
        #[allow(unrouted_failure)] // a failed write ends the run as an error
        save: ACT(artifact) save_source(source, module_file) -> saved_to;
        done: TERMINAL(passing, attempts, saved_to, failures, source);

        read -> test -> repair;
        repair -> test;
        repair -> keep;
        keep -> save if passing;
        keep -> done else;
        save -> done;
    }
}

/// Runs the `test_*` functions of `module_tests.py` in the namespace of `module_source.py` and
/// prints one line per failure (nothing when all pass); a module that does not load (a syntax
/// error in a repair, say) is one failure line, so the loop repairs it like any other.
const PY_TEST_RUNNER: &str = r#"
import linecache, signal, traceback
signal.alarm(10)
ns = {"__name__": "module_source"}
for name in ("module_source.py", "module_tests.py"):
    text = open(name, encoding="utf-8").read()
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    try:
        exec(compile(text, name, "exec"), ns)
    except Exception as e:
        print(f"{name} does not load: {type(e).__name__}: {e}")
        raise SystemExit(0)
for name in sorted(n for n in ns if n.startswith("test_") and callable(ns[n])):
    try:
        ns[name]()
    except Exception as e:
        frame = traceback.extract_tb(e.__traceback__)[-1]
        detail = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        print(f"{name}: {detail} at `{(frame.line or '').strip()}`")
"#;

/// The module the example repairs: `slugify` keeps punctuation and repeated spaces.
pub const BUGGY_MODULE: &str = r#"import re


def slugify(title):
    """Turn a title into a URL slug: lowercase words joined by hyphens."""
    return title.lower().replace(" ", "-")
"#;

/// The tests the module must pass.
pub const TESTS: &str = r#"def test_lowercases_and_joins_words():
    assert slugify("Hello World") == "hello-world"


def test_drops_punctuation():
    assert slugify("Rust, Python & Go!") == "rust-python-go"


def test_collapses_repeated_spaces():
    assert slugify("  many   spaces  ") == "many-spaces"
"#;

/// The task the example runs.
pub const TASK: &str = "Fix slugify in text_utils.py so its tests pass";

/// The module the example repairs in place, relative to the output directory.
pub const MODULE_FILE: &str = "text_utils.py";

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arg = std::env::args().nth(1);
    if arg.as_deref() == Some("--agir") {
        print!("{}", FixFailingTest::AGIR);
        return Ok(());
    }
    let out_dir = match arg {
        Some(dir) => std::path::PathBuf::from(dir),
        None => tempfile::tempdir()?.keep(),
    };
    std::fs::create_dir_all(&out_dir)?;
    std::fs::write(out_dir.join(MODULE_FILE), BUGGY_MODULE)?;
    let responses = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/fix_failing_test.responses.json"
    );
    let model = ais::rt::llm::from_spec(&format!("scripted:{responses}"))?;
    let runtime = FixFailingTest::runtime()
        .model(model)
        .out_dir(out_dir.clone())
        .build();
    println!("model: SCRIPTED ({responses}), not a live model");
    let input = FixFailingTestInput {
        task: TASK.into(),
        module_file: MODULE_FILE.into(),
        tests: TESTS.into(),
    };
    let report = FixFailingTest::run(input, &runtime).await?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    println!(
        "repaired module written to {}",
        out_dir.join(MODULE_FILE).display()
    );
    Ok(())
}
