//! The journal as an attacker reaches it: a model-chosen command rewriting `.ais/runs.db` to
//! move the run's output root (then the resume the run prints), a journal row rewritten the way
//! such a command would on a kernel without user namespaces (refused by the seal), a symbolic
//! link planted where the journal goes, and a pause record whose values contradict their
//! carries' declared types.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// How `ais` is started.
#[derive(Clone, Copy, PartialEq)]
enum Launch {
    /// As the user running the test.
    Direct,
    /// As `nobody` (the test runs as root): an unprivileged user, whose `ais` is not dumpable.
    Nobody,
    /// In a user namespace whose limit of further user namespaces is 0: a kernel that gives
    /// `ais` no user namespace for its tools.
    NoUserNamespaces,
}

struct Case {
    _dir: tempfile::TempDir,
    out: PathBuf,
    outside: PathBuf,
    keys: PathBuf,
    program: PathBuf,
    launch: Launch,
}

impl Case {
    fn new() -> Case {
        Case::launched(Launch::Direct)
    }

    fn launched(launch: Launch) -> Case {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let outside = dir.path().join("outside");
        let keys = dir.path().join("keys");
        for d in [&out, &outside] {
            std::fs::create_dir_all(d).unwrap();
        }
        // Two model steps that may run commands; the second waits for a human approval.
        let program = dir.path().join("p.agir");
        std::fs::write(
            &program,
            "walker:\n  carries:\n    task: {type: str, role: input}\n    approved: {type: bool, role: input, doc: Go on?}\n    a: {type: str, produced_by: first}\n    b: {type: str, produced_by: second}\nnodes:\n  - {id: first, type: GEN-RAW, reads: [task], writes: [a], doc: Do it., autonomy: {tools: [run_command]}}\n  - {id: second, type: GEN-RAW, reads: [a, approved], writes: [b], doc: Then this., autonomy: {tools: [run_command]}}\n  - {id: done, type: TERMINAL, reads: [b]}\nedges:\n  - {from: first, to: second}\n  - {from: second, to: done}\n",
        )
        .unwrap();
        if launch == Launch::Nobody {
            use std::os::unix::fs::PermissionsExt;
            for d in [dir.path(), &out, &outside] {
                std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).unwrap();
            }
        }
        Case {
            _dir: dir,
            out,
            outside,
            keys,
            program,
            launch,
        }
    }

    fn ais(&self) -> Command {
        let ais = env!("CARGO_BIN_EXE_ais");
        let mut c = match self.launch {
            Launch::Direct => Command::new(ais),
            Launch::Nobody => {
                let mut c = Command::new("setpriv");
                c.args(["--reuid=65534", "--regid=65534", "--clear-groups", ais]);
                c
            }
            Launch::NoUserNamespaces => {
                let mut c = Command::new("unshare");
                c.args(["-U", "-r", "sh", "-c", NO_USERNS, "sh", ais]);
                c
            }
        };
        c.env_remove("AIS_MODEL")
            .env_remove("RUST_LOG")
            .env("AIS_STATE_DIR", &self.keys)
            .env("NO_COLOR", "1");
        c
    }

    /// A scripted model: `first` runs `one`, `second` runs `two`.
    fn script(&self, one: &str, two: &str) -> PathBuf {
        let call = |c: &str| serde_json::json!({"$tool_calls": [{"name": "run_command", "arguments": {"command": c}}]});
        let path = self.out.parent().unwrap().join("model.json");
        let body =
            serde_json::json!({"first": [call(one), "did it"], "second": [call(two), "done"]});
        std::fs::write(&path, body.to_string()).unwrap();
        path
    }

    /// `ais run` until its pause; the run's id.
    fn run_to_pause(&self, model: &Path) -> String {
        let out = self
            .ais()
            .arg("run")
            .arg(&self.program)
            .args(["--task", "go", "--format", "json", "--model"])
            .arg(format!("scripted:{}", model.display()))
            .arg("--out")
            .arg(&self.out)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(3), "{text}\n{}", stderr(&out));
        let report: serde_json::Value = serde_json::from_str(&text).unwrap();
        report["run"].as_str().expect("a run id").to_owned()
    }

    fn resume(&self, id: &str) -> Output {
        self.ais()
            .args(["resume", id, "--answer", "true"])
            .current_dir(&self.out)
            .output()
            .unwrap()
    }

    fn sql(&self, statement: &str) {
        let conn = rusqlite::Connection::open(self.out.join(".ais/runs.db")).unwrap();
        conn.execute_batch(statement).unwrap();
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs its arguments with no user namespace left to make.
const NO_USERNS: &str = "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$@\"";

use crate::support::nobody;
use nobody::can_drop_to_nobody;

/// Whether a user namespace can be made here whose limit of user namespaces is 0.
fn can_deny_user_namespaces() -> bool {
    Command::new("unshare")
        .args(["-U", "-r", "sh", "-c", NO_USERNS, "sh", "true"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn have_python() -> bool {
    Command::new("python3")
        .arg("-c")
        .arg("import sqlite3")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The escape of issue 32, end to end: the first model command rewrites the run's recorded
/// `out` in `.ais/runs.db`; after the resume the run prints, the second writes `marker.txt`
/// in its working directory — which must still be the original output root. It also lists the
/// sealing key's directory, which a tool must see empty.
#[test]
fn a_model_command_cannot_rewrite_the_journal_to_move_the_output_root() {
    if !have_python() || !ais::rt::confinement_available() {
        eprintln!("skipped: no python3 with sqlite3, or no Landlock");
        return;
    }
    let case = Case::new();
    let outcome = rewrite_attack(&case);
    assert_eq!(outcome.status.code(), Some(0), "{}", stderr(&outcome));
    assert!(case.out.join("marker.txt").exists());
    if ais::rt::shield_available() {
        let seen = std::fs::read_to_string(case.out.join("seen.txt")).unwrap();
        assert_eq!(seen, "", "a tool saw the sealing key's directory");
        assert!(case.keys.join("journal.key").exists());
    }
}

/// The attack of issue 32 (see above): a model command rewrites the recorded `out`, the resume
/// runs a second command that writes `marker.txt`. The resume's output; the marker must not
/// be outside the output root.
fn rewrite_attack(case: &Case) -> Output {
    let rewrite = format!(
        "python3 -c \"import sqlite3; c = sqlite3.connect('.ais/runs.db', timeout=5); \
         c.execute('UPDATE runs SET meta = json_set(meta, ?, ?)', ('$.out', '{}')); c.commit()\"; \
         ls -A {} > seen.txt",
        case.outside.display(),
        case.keys.display()
    );
    let model = case.script(&rewrite, "echo escaped > marker.txt");
    let id = case.run_to_pause(&model);
    let out = case.resume(&id);
    assert!(
        !case.outside.join("marker.txt").exists(),
        "the resumed run wrote outside its output root: {}",
        stderr(&out)
    );
    out
}

/// The same attack by an unprivileged user (this test as root, `ais` as `nobody`): `ais` is
/// not dumpable, so its tool's namespace must still map its ids (issue 32's shield failed
/// there, and with it every tool call). The rewrite fails on the read-only `.ais/`, the key's
/// directory looks empty, the run resumes where it started.
#[test]
fn an_unprivileged_users_tool_cannot_rewrite_the_journal() {
    if !have_python() || !ais::rt::confinement_available() || !can_drop_to_nobody() {
        eprintln!("skipped: no python3 with sqlite3, no Landlock, or not root (no `nobody`)");
        return;
    }
    let case = Case::launched(Launch::Nobody);
    let outcome = rewrite_attack(&case);
    assert_eq!(outcome.status.code(), Some(0), "{}", stderr(&outcome));
    assert!(case.out.join("marker.txt").exists(), "{}", stderr(&outcome));
    let seen = std::fs::read_to_string(case.out.join("seen.txt")).unwrap();
    assert_eq!(seen, "", "a tool saw the sealing key's directory");
    assert!(case.keys.join("journal.key").exists());
}

/// Where the kernel gives `ais` no user namespace, the run still runs and says on standard
/// error and in its report that `.ais/` is writable to tools; Landlock keeps the sealing key
/// from them (a tool's `cat` of it is denied), and the seal is what stops the rewrite: the
/// resume refuses the row, naming `out`.
#[test]
fn without_user_namespaces_the_seal_refuses_the_rewrite_and_the_run_says_so() {
    if !have_python() || !ais::rt::confinement_available() || !can_deny_user_namespaces() {
        eprintln!("skipped: no python3 with sqlite3, no Landlock, or no user namespace to test in");
        return;
    }
    let case = Case::launched(Launch::NoUserNamespaces);
    let steal = format!(
        "cat {} > stolen.txt 2>&1",
        case.keys.join("journal.key").display()
    );
    let run = case
        .ais()
        .arg("run")
        .arg(&case.program)
        .args(["--task", "go", "--format", "json", "--model"])
        .arg(format!(
            "scripted:{}",
            case.script(&steal, "echo two").display()
        ))
        .arg("--out")
        .arg(&case.out)
        .output()
        .unwrap();
    let said = stderr(&run);
    assert!(
        said.contains("no user namespace for its tools") && said.contains("keeps the sealing key"),
        "{said}"
    );
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert!(
        report["deviations"]
            .to_string()
            .contains("the key kept unread by Landlock"),
        "{report}"
    );
    let key = std::fs::read(case.keys.join("journal.key")).unwrap();
    let stolen = std::fs::read(case.out.join("stolen.txt")).unwrap();
    assert!(
        String::from_utf8_lossy(&stolen).contains("Permission denied"),
        "{}",
        String::from_utf8_lossy(&stolen)
    );
    assert!(
        !stolen.windows(key.len()).any(|w| w == key),
        "the tool read the key"
    );
    let case = Case::launched(Launch::NoUserNamespaces);
    let outcome = rewrite_attack(&case);
    assert_eq!(outcome.status.code(), Some(2), "{}", stderr(&outcome));
    assert!(
        stderr(&outcome).contains("recorded `out` does not match its seal"),
        "{}",
        stderr(&outcome)
    );
    assert!(!case.out.join("marker.txt").exists());
}

/// Where a tool could write the journal anyway (a kernel without user namespaces), the rewrite
/// is refused at the resume, naming the field; so is a row with its seal removed, and a resume
/// that names another output root than the one recorded.
#[test]
fn a_rewritten_journal_row_is_refused_naming_the_field() {
    let case = Case::new();
    let model = case.script("echo one", "echo two > marker.txt");
    let id = case.run_to_pause(&model);
    let outside = case.outside.display().to_string();
    case.sql(&format!(
        "UPDATE runs SET meta = json_set(meta, '$.out', '{outside}')"
    ));
    let out = case.resume(&id);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("recorded `out` does not match its seal"),
        "{}",
        stderr(&out)
    );
    for (what, field) in [
        ("json_set(meta, '$.model', 'openai:gpt-4o')", "model"),
        (
            "json_set(meta, '$.bounds.allow_net', json('[\"169.254.169.254\"]'))",
            "bounds",
        ),
        ("json_set(meta, '$.program', '/tmp/other.agir')", "program"),
    ] {
        let case = Case::new();
        let id = case.run_to_pause(&case.script("echo one", "echo two"));
        case.sql(&format!("UPDATE runs SET meta = {what}"));
        let out = case.resume(&id);
        assert_eq!(out.status.code(), Some(2), "{field}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!("recorded `{field}` does not match")),
            "{field}: {}",
            stderr(&out)
        );
    }
    let case = Case::new();
    let id = case.run_to_pause(&case.script("echo one", "echo two"));
    case.sql("UPDATE runs SET digest = 'ab', meta = json_remove(meta, '$.seal')");
    let out = case.resume(&id);
    assert!(stderr(&out).contains("carries no seal"), "{}", stderr(&out));
    // The invocation names another root than the one recorded.
    let case = Case::new();
    let id = case.run_to_pause(&case.script("echo one", "echo two"));
    let out = case
        .ais()
        .args(["resume", &id, "--answer", "true", "--journal"])
        .arg(case.out.join(".ais/runs.db"))
        .arg("--out")
        .arg(&case.outside)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("`out` differs"), "{}", stderr(&out));
    assert!(!case.outside.join("marker.txt").exists());
}

/// A `.ais` that is a symbolic link out of the root, or a journal file that is one, is never
/// opened: no SQLite file appears where the link points.
#[test]
fn a_symlinked_journal_is_refused() {
    let case = Case::new();
    std::os::unix::fs::symlink(&case.outside, case.out.join(".ais")).unwrap();
    let model = case.script("echo one", "echo two");
    let run = |case: &Case| {
        case.ais()
            .arg("run")
            .arg(&case.program)
            .args(["--task", "go", "--model"])
            .arg(format!("scripted:{}", model.display()))
            .arg("--out")
            .arg(&case.out)
            .output()
            .unwrap()
    };
    let out = run(&case);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    assert_eq!(std::fs::read_dir(&case.outside).unwrap().count(), 0);
    std::fs::remove_file(case.out.join(".ais")).unwrap();
    std::fs::create_dir(case.out.join(".ais")).unwrap();
    let target = case.outside.join("planted.db");
    std::os::unix::fs::symlink(&target, case.out.join(".ais/runs.db")).unwrap();
    let out = run(&case);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    assert!(!target.exists(), "a journal was created through the link");
    // A WAL file planted as a link is refused the same way.
    std::fs::remove_file(case.out.join(".ais/runs.db")).unwrap();
    std::os::unix::fs::symlink(&target, case.out.join(".ais/runs.db-wal")).unwrap();
    let out = run(&case);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!target.exists());
}

/// A pause record whose values contradict their carries' declared types (a `str` carry holding
/// an object, the task `5`) does not resume.
#[test]
fn a_mistyped_pause_record_is_refused() {
    for (carry, path, value, said) in [
        (
            "a",
            "$.state.written.a[0]",
            "json('{\"x\": 1}')",
            "it holds carry `a` as",
        ),
        ("task", "$.task", "5", "it is no pause record"),
    ] {
        let case = Case::new();
        let id = case.run_to_pause(&case.script("echo one", "echo two > marker.txt"));
        case.sql(&format!(
            "UPDATE runs SET pause = json_set(pause, '{path}', {value})"
        ));
        let out = case.resume(&id);
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        assert_ne!(out.status.code(), Some(0), "{carry}: {text}");
        assert!(text.contains(said), "{carry}: {text}");
        assert!(
            !case.out.join("marker.txt").exists(),
            "{carry}: the run went on"
        );
    }
}

/// Two runs into one output root: the second is refused while the first runs (its artifacts
/// could overwrite the first's same-named ones), naming the holder; once the first ended, the
/// root is free again.
#[test]
fn a_second_run_into_the_same_output_root_is_refused() {
    let case = Case::new();
    let release = case.out.parent().unwrap().join("release");
    std::fs::write(
        &case.program,
        format!(
            "tools:\n  t: {{surface: SENSE, sig: \"(task) -> str\", command: \"while [ ! -e {} ]; do sleep 0.05; done; echo {{task}} > started.txt\"}}\nwalker:\n  carries:\n    task: {{type: str, role: input}}\n    o: {{type: str, produced_by: s}}\nnodes:\n  - {{id: s, type: SENSE, owner: code, tool: t, reads: [task], writes: [o]}}\n  - {{id: done, type: TERMINAL, reads: [o]}}\nedges:\n  - {{from: s, to: done}}\n",
            release.display()
        ),
    )
    .unwrap();
    let run = |case: &Case| {
        let mut c = case.ais();
        c.arg("run")
            .arg(&case.program)
            .args(["--task", "go", "--out"])
            .arg(&case.out);
        c
    };
    let mut first = run(&case)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !case.out.join(".ais/runs.db").exists() {
        assert!(
            start.elapsed().as_secs() < 20,
            "the first run never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let second = run(&case).output().unwrap();
    std::fs::write(&release, "").unwrap();
    let status = first.wait().unwrap();
    assert_eq!(second.status.code(), Some(2), "{}", stderr(&second));
    assert!(
        stderr(&second).contains("another run is writing into the output root"),
        "{}",
        stderr(&second)
    );
    assert!(status.success());
    let again = run(&case).output().unwrap();
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
}

/// A run without a journal pauses with a resume handle and its command's record beside it
/// (`<handle>.cli.json`), both under `.ais/`: where a tool could write them (a kernel without
/// user namespaces), a rewritten record field or a rewritten handle is refused at the resume,
/// naming which; so is a record without its seal. The untouched pair resumes.
#[test]
fn a_rewritten_resume_handle_or_its_record_is_refused() {
    let pause = |case: &Case| -> PathBuf {
        let model = case.script("echo one", "echo two > marker.txt");
        let out = case
            .ais()
            .arg("run")
            .arg(&case.program)
            .args([
                "--task",
                "go",
                "--format",
                "json",
                "--no-journal",
                "--model",
            ])
            .arg(format!("scripted:{}", model.display()))
            .arg("--out")
            .arg(&case.out)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let handle = PathBuf::from(report["pause"]["handle"].as_str().expect("a handle"));
        assert!(handle.is_absolute(), "{}", handle.display());
        handle
    };
    let resume = |case: &Case, handle: &Path| {
        case.ais()
            .args(["resume", handle.to_str().unwrap(), "--answer", "true"])
            .output()
            .unwrap()
    };
    let edit = |path: &Path, pointer: &str, value: serde_json::Value| {
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        *v.pointer_mut(pointer)
            .unwrap_or_else(|| panic!("{pointer}: not in {}", path.display())) = value;
        std::fs::write(path, v.to_string()).unwrap();
    };
    let record = |handle: &Path| handle.with_extension("cli.json");
    for (what, pointer, value, said) in [
        (
            "record",
            "/out",
            serde_json::json!("/tmp"),
            "`out` in the run record",
        ),
        (
            "record",
            "/model",
            serde_json::json!("openai:gpt-4o"),
            "`model` in the run record",
        ),
        (
            "record",
            "/seal",
            serde_json::Value::Null,
            "carries no seal",
        ),
        (
            "handle",
            "/task",
            serde_json::json!("another task"),
            "the resume handle",
        ),
        (
            "handle",
            "/state/written/a/0",
            serde_json::json!("forged"),
            "the resume handle",
        ),
    ] {
        let case = Case::new();
        let handle = pause(&case);
        let file = if what == "record" {
            record(&handle)
        } else {
            handle.clone()
        };
        edit(&file, pointer, value);
        let out = resume(&case, &handle);
        assert_eq!(out.status.code(), Some(2), "{pointer}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(said) && stderr(&out).contains("does not match its seal")
                || said == "carries no seal" && stderr(&out).contains(said),
            "{pointer}: {}",
            stderr(&out)
        );
        assert!(!case.out.join("marker.txt").exists(), "{pointer}: it ran");
        assert!(handle.exists(), "{pointer}: a refused handle is kept");
    }
    let case = Case::new();
    let handle = pause(&case);
    let out = resume(&case, &handle);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(case.out.join("marker.txt").exists());
}
