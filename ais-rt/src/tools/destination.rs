//! Where a write goes when the program does not say, and where a relative read is looked for.
//!
//! # Destinations the program does not name (spec §7.3, §4.2.2)
//!
//! A path parameter of a write (an `ACT`, or a `CODE` served by an `ACT·artifact` tool) that
//! no carry binds falls to the invocation fallback of §7.3: the filename that follows a save
//! verb in the task, else its first bare filename. That is an *inference*, and an inference
//! never destroys a user's file. A name recovered from the task is **refused** when
//!
//! - it is a file the run reads: a filename the task claims with a read verb ("load
//!   `reviews.csv`"), or a path a read-side step of this run was given (the read side's own
//!   fallback included, once it has read); or
//! - a file of that name already exists under the output root and this run did not create it —
//!   unless the task claims it with a save verb ("save to `report.md`") **and** the run was
//!   started with `--overwrite` ([`AccessPolicy::overwrite`](super::AccessPolicy::overwrite)):
//!   the one way the program's invocation says to replace a file.
//!
//! A refused name is treated as an unresolved destination (§7.3's last paragraph): the write
//! takes the program-controlled destination derived from the instruction (`save.txt`), and
//! the run records a deviation saying which name was refused and why (§10.3). This narrows
//! §7.3's "else the first bare filename" for safety; it is a choice within the spec, which
//! lets an implementation derive a destination whenever the write's cannot be resolved.
//!
//! The derived destination is the program's own name for its artifact (`<instruction>.txt`,
//! or `<carry>.md` for a carry written out by a tool-less ACT), and is written like any
//! program-controlled path: it replaces a file of that name under the output root. Keep a run's
//! artifacts apart from other files with `--out DIR`.
//!
//! *Created by this run* is known to the process running it: after a crash and `ais resume`,
//! a file the run wrote before the interruption counts as existing, so a write that names it
//! again from the task takes the derived destination (with its deviation) — nothing is
//! replaced.
//!
//! A destination a carry holds (`--input out_path=reviews.csv`, a path a step computed) is the
//! program's own choice and is written as given, over an existing file too: that is how a
//! program asks for an in-place rewrite (the `fix_failing_test` example carries its module's
//! path, `module_file`, to read it and to save the repair over it). A task naming the file is
//! never enough.
//!
//! # Relative reads
//!
//! A relative path a read-side step is given is looked for in the directory the runtime was
//! started in ([`AccessPolicy::start`](super::AccessPolicy::start), `ais run`'s working
//! directory), then under the output root (where the run's own files are): a file found in the
//! start directory is handed to the tool as that absolute path. When it is in neither, the
//! tool runs on the path as given, and its failure says where the file was looked for.

use super::{ToolArgs, ToolContext, ToolError};
use crate::tools::RelativeDest;
use ais_core::bind::{Access, filename_mentions, invocation_filename};
use ais_core::{Deviation, Value};
use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

/// What one run's tool calls have done with files, shared by the clones of its
/// [`ToolContext`]: the destinations it handed out (so its own files may be written again),
/// the paths it read, and the deviations resolving them recorded, until the machine takes them.
#[derive(Debug, Default)]
pub(crate) struct RunFiles {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Inferred destinations handed out, as paths under the output root.
    created: HashSet<PathBuf>,
    /// Paths read-side steps were given, as absolute (lexically normal) paths.
    read: HashSet<PathBuf>,
    /// Deviations not yet taken by the machine.
    deviations: Vec<Deviation>,
}

impl RunFiles {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The deviations recorded since the last call, in order.
    pub(crate) fn take_deviations(&self) -> Vec<Deviation> {
        std::mem::take(&mut self.lock().deviations)
    }
}

/// The destination a write's task names (§7.3), re-rooted inside the output root: a task
/// that says "save as /srv/www/plan.md" (or `~/plan.md`, `../plan.md`) gets `plan.md` — the
/// task's file name, never its directory (§4.2.2). `None` when the task names no file, or
/// only one no destination may have (say `.git/hooks/x.sh`'s file name is kept, its directory
/// is not).
pub(crate) fn invocation_dest(task: &str) -> Option<String> {
    let name = invocation_filename(task, Access::Write)?;
    if RelativeDest::parse(&name).is_ok() {
        return Some(name);
    }
    let base = name.rsplit('/').next().unwrap_or(&name);
    RelativeDest::parse(base).ok().map(|d| d.as_path_string())
}

/// A program-controlled destination inside the output root (§7.3): named after the
/// instruction (and the carry written out, when there is one), never a model's value.
pub(crate) fn derived_destination(id: &str, carry: Option<&str>) -> String {
    let base = carry.unwrap_or(id);
    let ext = [
        ("_md", "md"),
        ("_html", "html"),
        ("_json", "json"),
        ("_csv", "csv"),
        ("_py", "py"),
        ("_yaml", "yaml"),
    ]
    .iter()
    .find(|(suffix, _)| base.ends_with(suffix))
    .map_or("txt", |(_, e)| e);
    let stem = file_safe(base);
    format!("{stem}.{ext}")
}

/// `text` as a file name part: ASCII letters, digits, `_` and `-` kept, anything else `_`.
pub(crate) fn file_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Fills each write-side path parameter of `args` the program left unresolved (null or
/// empty): from the task when `from_task` says the parameter fell to §7.3's fallback and the
/// name is safe to write, else a derived destination named after `step` (and `carry`, for a
/// tool-less ACT writing a carry out). See the module docs for what is refused.
pub(crate) fn settle_writes<'p>(
    step: &str,
    carry: Option<&str>,
    task: &str,
    args: &mut ToolArgs,
    unresolved: impl IntoIterator<Item = (&'p str, bool)>,
    ctx: &ToolContext,
) {
    for (param, from_task) in unresolved {
        let Some(value) = args.params.get_mut(param) else {
            continue;
        };
        let empty = match &*value {
            Value::Null => true,
            Value::Str(s) => s.trim().is_empty(),
            _ => false,
        };
        if empty {
            *value = Value::Str(destination(step, carry, task, from_task, ctx));
        }
    }
}

/// The destination of one unresolved write: the task's name when it is safe, else a derived
/// one; either recorded as created by this run.
pub(crate) fn destination(
    step: &str,
    carry: Option<&str>,
    task: &str,
    from_task: bool,
    ctx: &ToolContext,
) -> String {
    let root = absolute(ctx.work_dir());
    let root = root.as_path();
    let mut files = ctx.files.lock();
    let named = from_task.then(|| invocation_dest(task)).flatten();
    let mut refused = None;
    if let Some(name) = named {
        match refusal(&name, task, root, &files, ctx.policy.overwrite) {
            None => {
                files.created.insert(lexical(&root.join(&name)));
                return name;
            }
            Some(why) => refused = Some((name, why)),
        }
    }
    let chosen = derived_destination(step, carry);
    files.created.insert(lexical(&root.join(&chosen)));
    if let Some((name, why)) = refused {
        let d = Deviation {
            check: None,
            subject: step.to_owned(),
            intended: format!("the destination `{name}` the task names (§7.3)"),
            substituted: format!("`{chosen}`, a destination the program controls: `{name}` {why}"),
        };
        if !files.deviations.contains(&d) {
            files.deviations.push(d);
        }
    }
    chosen
}

/// Why the task's `name` may not be written, or `None` when it may.
fn refusal(name: &str, task: &str, root: &Path, files: &Inner, overwrite: bool) -> Option<String> {
    let mentions = filename_mentions(task);
    // A read verb's claim ("load `reviews.csv`") or a path a read step was given. The read
    // side's bare fallback ("the first bare filename") is no claim: a task that says only
    // "File this invoice in ledger/2026-03.csv" names a destination, and were that name a file
    // the run reads, the read has recorded it, or it exists and is refused below.
    let claimed_for_reading = mentions
        .iter()
        .any(|m| m.claim == Some(Access::Read) && m.name == name);
    let path = lexical(&root.join(name));
    if claimed_for_reading || files.read.contains(&path) {
        return Some(
            "is a file this run reads, and an inferred destination never replaces its input; to write elsewhere, name the destination after a save verb (\"save to summary.md\") or in a path-shaped carry"
                .to_owned(),
        );
    }
    if !exists_foreign(&path, files) {
        return None;
    }
    let claimed_by_save = mentions
        .iter()
        .any(|m| m.claim == Some(Access::Write) && m.name == name);
    if claimed_by_save && overwrite {
        return None;
    }
    Some(if claimed_by_save {
        "already exists and this run did not create it; pass `--overwrite` to let a file the task names after a save verb replace it".to_owned()
    } else {
        format!(
            "already exists and this run did not create it; a bare filename in the task never replaces a file — to replace it, write \"save to {name}\" and pass `--overwrite`"
        )
    })
}

/// True when `path` exists (as anything, a dangling symlink included) and this run did not
/// create it.
fn exists_foreign(path: &Path, files: &Inner) -> bool {
    path.symlink_metadata().is_ok() && !files.created.contains(&lexical(path))
}

/// `path` with `.` components dropped and `..` applied lexically (no file system access).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Resolves each read-side path parameter of `args` (see the module docs): a relative path
/// found in the start directory becomes that absolute path; every path is recorded as read by
/// this run. Returns a hint for the call's error when some path was found nowhere.
pub(crate) fn resolve_reads<'p>(
    args: &mut ToolArgs,
    path_params: impl IntoIterator<Item = &'p str>,
    ctx: &ToolContext,
) -> Option<String> {
    let work = ctx.work_dir();
    let start = ctx.policy.start.as_deref();
    let mut missing = Vec::new();
    let mut files = ctx.files.lock();
    for param in path_params {
        let Some(Value::Str(raw)) = args.params.get_mut(param) else {
            continue;
        };
        let given = Path::new(raw.as_str());
        if given.is_absolute() || raw.trim().is_empty() {
            files.read.insert(lexical(given));
            continue;
        }
        let in_work = lexical(&absolute(work).join(given));
        let climbs = given.components().any(|c| c == Component::ParentDir);
        let in_start = start.map(|s| lexical(&absolute(s).join(given)));
        match in_start {
            Some(s) if !climbs && s != in_work && s.symlink_metadata().is_ok() => {
                *raw = s.to_string_lossy().into_owned();
                files.read.insert(s);
                // The name as given is the run's input wherever it was found: a write the
                // task names the same is refused under the output root too.
                files.read.insert(in_work);
            }
            _ => {
                if in_work.symlink_metadata().is_err() {
                    let looked = match &in_start {
                        Some(s) if *s != in_work => format!(
                            "{} (the directory ais was started in) nor at {} (the output root)",
                            s.display(),
                            in_work.display()
                        ),
                        _ => in_work.display().to_string(),
                    };
                    missing.push(format!("`{param}` = `{raw}`: there is no file at {looked}"));
                }
                files.read.insert(in_work);
            }
        }
    }
    (!missing.is_empty()).then(|| {
        format!(
            "{}; a relative path to read resolves against the directory ais was started in, then the output root",
            missing.join("; ")
        )
    })
}

/// `e` with the hint [`resolve_reads`] gave, when there is one.
pub(crate) fn with_hint(mut e: ToolError, hint: Option<String>) -> ToolError {
    if let Some(h) = hint {
        e.message = format!("{} ({h})", e.message);
    }
    e
}

/// `dir` made absolute against the process's working directory (unchanged when it cannot be).
fn absolute(dir: &Path) -> PathBuf {
    std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(name: &str, task: &str, root: &Path, files: &Inner, overwrite: bool) -> bool {
        refusal(name, task, root, files, overwrite).is_some()
    }

    #[test]
    fn a_name_the_task_gives_as_a_destination_is_written_when_nothing_reads_it() {
        let root = tempfile::tempdir().unwrap();
        let files = Inner::default();
        // The invoice example: no save verb, no read verb, no such file: the task's name.
        let task = "File this invoice in ledger/2026-03.csv";
        assert!(!refused(
            "ledger/2026-03.csv",
            task,
            root.path(),
            &files,
            false
        ));
        // Once it exists and this run did not create it, a bare name never replaces it.
        std::fs::create_dir(root.path().join("ledger")).unwrap();
        std::fs::write(root.path().join("ledger/2026-03.csv"), "kept").unwrap();
        assert!(refused(
            "ledger/2026-03.csv",
            task,
            root.path(),
            &files,
            true
        ));
    }

    #[test]
    fn a_name_the_run_reads_is_refused_whatever_the_flags() {
        let root = tempfile::tempdir().unwrap();
        let mut files = Inner::default();
        // Claimed by a read verb: refused even before the read ran, the file absent.
        let task = "Load data.csv and save to data.csv";
        assert!(refused("data.csv", task, root.path(), &files, true));
        // Read by a step (the read fallback of "Summarize data.csv" took it): refused.
        let task = "Summarize data.csv";
        assert!(!refused("data.csv", task, root.path(), &files, true));
        files.read.insert(lexical(&root.path().join("data.csv")));
        assert!(refused("data.csv", task, root.path(), &files, true));
    }
}
