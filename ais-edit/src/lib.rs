//! # ais-edit — a semantic edit language for AG-IR programs
//!
//! Programs are changed by operations, not by rewriting their text: `view` shows an element
//! with its generation (and, for an instruction, handles `n1`, `n2`, … for its parts),
//! `query` answers questions about the checked program, and `patch` applies an ordered list of
//! operations ([`ops::Op`]) to an in-memory copy, checks the result once with the validator,
//! and writes it only if every operation applied and the program got no worse — all or
//! nothing, byte for byte, under a lock, by atomic replace. Every rejection ([`Rejection`])
//! says what the correct next call is: the corrected patch, the re-view, the help for the
//! operation, the query that locates an unknown name.
//!
//! One implementation, offered three ways: this API ([`Editor`]), the CLI (`ais edit VERB
//! JSON`) and an MCP server ([`mcp::EditServer`], `ais mcp edit --root DIR`), whose tools are
//! the verbs.
//!
//! - **Verbs**: `status`, `help`, `query`, `view`, `patch`, and sugar verbs — `rename`,
//!   `set_doc`, `set_guard`, `insert_between`, `set_body`, `add_edge`, `remove_edge`,
//!   `delete_instruction` — each exactly a one-operation patch (`{"file", "dry_run"}` plus the
//!   operation's fields).
//! - **Addressing**: [`address::Address`].
//! - **Generations**: content digests ([`model`]).
//! - **Acceptance**: a patch is rejected when the program it leaves has a finding of severity
//!   `error` or `fatal` it did not have before (`new_findings`); findings it already had never
//!   block it, and new warnings are reported, not refused.
//!
//! ```
//! use ais_edit::Editor;
//! use serde_json::json;
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::copy(
//!     concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/writing_plans.agir"),
//!     dir.path().join("plan.agir"),
//! )?;
//! let editor = Editor::new(dir.path())?;
//!
//! // View an instruction: its generation and handles.
//! let view = editor.call("view", &json!({"file": "plan.agir", "target": "instruction:verify"}));
//! let generation = view["generation"].as_str().unwrap().to_owned();
//!
//! // Rename a carry: every reader, writer and guard follows.
//! let done = editor.call("patch", &json!({
//!     "file": "plan.agir",
//!     "ops": [{"op": "rename", "target": "carry:plan_ok", "to": "has_tasks"}],
//! }));
//! assert_eq!(done["status"], "ok");
//!
//! // A misspelled name is rejected, with the corrected patch as a possible repair.
//! let no = editor.call("patch", &json!({
//!     "file": "plan.agir",
//!     "ops": [{"op": "set_owner", "id": "verfy", "owner": "code", "generation": generation}],
//! }));
//! assert_eq!(no["status"], "rejected");
//! assert_eq!(no["did_you_mean"][0], "verify");
//! assert_eq!(no["possible_repairs"][0]["call"]["args"]["ops"][0]["id"], "verify");
//! # Ok::<(), std::io::Error>(())
//! ```

pub mod address;
mod apply;
mod exprs;
mod files;
pub mod mcp;
pub mod model;
pub mod ops;
pub mod query;
pub mod reject;
mod splice;
pub mod view;

pub use reject::{Call, Diagnostic, PossibleRepair, Reason, Rejection};

use address::Address;
use ais_core::{Finding, Program, Repairs, Severity, agir, check};
use apply::{OpFail, State};
use ops::Op;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value as Json, json};
use std::path::{Path, PathBuf};

/// The most bytes of a call's arguments (as JSON text).
pub const MAX_REQUEST_BYTES: usize = 8 * 1024 * 1024;
/// The most operations in one patch.
pub const MAX_OPS: usize = 10_000;

/// The sugar verbs: each is exactly a one-operation patch.
pub const SUGAR: [&str; 8] = [
    "rename",
    "set_doc",
    "set_guard",
    "insert_between",
    "set_body",
    "add_edge",
    "remove_edge",
    "delete_instruction",
];

/// The verbs besides the sugar.
pub const VERBS: [&str; 5] = ["status", "help", "query", "view", "patch"];

/// Arguments of `status`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusArgs {
    /// One program (relative to the root): its findings and every element's generation. Left
    /// out: every `.agir` under the root, with its outcome and generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// Arguments of `help`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HelpArgs {
    /// One operation; left out, the whole catalog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
}

/// Arguments of `view`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ViewArgs {
    /// The program, relative to the root.
    pub file: String,
    /// The element (`instruction:ID`, `carry:NAME`, `edge:A->B`, `program`, …).
    pub target: String,
}

/// Arguments of `query`: the program and a question (`kind` and its fields).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct QueryArgs {
    /// The program, relative to the root.
    pub file: String,
    /// The question.
    #[serde(flatten)]
    pub query: query::Query,
}

/// Arguments of `patch`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchArgs {
    /// The program, relative to the root (created when it does not exist).
    pub file: String,
    /// The operations, applied in order (see `help`).
    pub ops: Vec<Json>,
    /// Run everything and write nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// The file's generation as `status` or `view` reported it; a mismatch is rejected as
    /// stale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<String>,
}

/// Arguments of a sugar verb: the operation's fields, with the file and `dry_run`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SugarArgs {
    /// The program, relative to the root.
    pub file: String,
    /// Run everything and write nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// The operation's fields (see `help` for the operation of the same name).
    #[serde(flatten)]
    pub fields: serde_json::Map<String, Json>,
}

/// A finding, as a patch reports it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reported {
    /// The check (`W8`, `X5`, …).
    pub code: String,
    /// `fatal`, `error` or `warn`.
    pub severity: String,
    /// What.
    pub message: String,
    /// The instruction, when about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instruction: Option<String>,
    /// Line, in the file as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// Column.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
}

fn reported(f: &Finding) -> Reported {
    Reported {
        code: f.id.as_str().to_owned(),
        severity: f.severity.to_string(),
        message: f.message.clone(),
        instruction: f.instruction.clone(),
        line: f.pos.map(|p| p.line),
        column: f.pos.map(|p| p.column),
    }
}

fn same(a: &Reported, b: &Reported) -> bool {
    a.code == b.code && a.message == b.message && a.instruction == b.instruction
}

/// The editor: every verb, on the programs under one root directory.
#[derive(Clone, Debug)]
pub struct Editor {
    root: PathBuf,
}

/// A program as read: its text (empty when the file does not exist), the document, the
/// file's generation.
struct Loaded {
    path: PathBuf,
    text: String,
    doc: agir::Document,
    generation: String,
}

impl Editor {
    /// An editor over `root` (which must be a directory).
    pub fn new(root: impl AsRef<Path>) -> std::io::Result<Editor> {
        let root = root.as_ref().canonicalize()?;
        if !root.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                format!("{} is not a directory", root.display()),
            ));
        }
        Ok(Editor { root })
    }

    /// The root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Runs a verb with its arguments; the answer is a JSON object whose `status` is `ok` or
    /// `rejected` (a [`Rejection`]).
    pub fn call(&self, verb: &str, args: &Json) -> Json {
        // Arguments that arrive parsed (from an MCP client) are bounded as text would be.
        let mut size = Counter(0);
        if serde_json::to_writer(&mut size, args).is_err() || size.0 > MAX_REQUEST_BYTES {
            return serde_json::to_value(Rejection::new(
                Reason::TooLarge,
                format!("the arguments are more than the {MAX_REQUEST_BYTES} bytes accepted: split the patch into several"),
            ))
            .unwrap_or_default();
        }
        let call = Call {
            tool: verb.to_owned(),
            args: args.clone(),
        };
        match self.dispatch(&call) {
            Ok(v) => v,
            Err(r) => serde_json::to_value(r.without_call(&call)).unwrap_or_default(),
        }
    }

    /// [`Editor::call`] with the arguments as JSON text, bounded by [`MAX_REQUEST_BYTES`]
    /// before it is parsed.
    pub fn call_text(&self, verb: &str, args: &str) -> Json {
        if args.len() > MAX_REQUEST_BYTES {
            return serde_json::to_value(Rejection::new(
                Reason::TooLarge,
                format!(
                    "the arguments are {} bytes, more than the {MAX_REQUEST_BYTES} accepted: split the patch into several",
                    args.len()
                ),
            ))
            .unwrap_or_default();
        }
        match serde_json::from_str::<Json>(args) {
            Ok(v) => self.call(verb, &v),
            Err(e) => serde_json::to_value(
                Rejection::new(Reason::BadShape, format!("the arguments are not JSON: {e}"))
                    .repair("the verbs and operations", "help", json!({})),
            )
            .unwrap_or_default(),
        }
    }

    fn dispatch(&self, call: &Call) -> Result<Json, Rejection> {
        let args = &call.args;
        match call.tool.as_str() {
            "status" => self.status(&decode(args, "status")?),
            "help" => help(&decode(args, "help")?),
            "view" => self.view(&decode(args, "view")?),
            "query" => self.query(args),
            "patch" => self.patch(&decode(args, "patch")?),
            verb if SUGAR.contains(&verb) => {
                let sugar: SugarArgs = decode(args, verb)?;
                let mut op = sugar.fields;
                op.insert("op".into(), verb.into());
                self.patch(&PatchArgs {
                    file: sugar.file,
                    ops: vec![Json::Object(op)],
                    dry_run: sugar.dry_run,
                    generation: None,
                })
                .map_err(|mut r| {
                    // The repairs are patches; a one-operation repair is offered as the verb.
                    for rep in &mut r.possible_repairs {
                        sugar_again(&mut rep.call, verb);
                    }
                    r
                })
            }
            other => {
                let all: Vec<&str> = VERBS.iter().chain(SUGAR.iter()).copied().collect();
                let close = ais_core::did_you_mean(other, all.iter().copied());
                let mut r = Rejection::new(
                    Reason::UnknownVerb,
                    format!("no verb `{other}`: the verbs are {}", all.join(", ")),
                )
                .suggest(close.clone());
                if let Some(c) = close.first() {
                    r = r.repair(format!("`{c}` is a verb"), c, args.clone());
                }
                Err(r.repair("the operation catalog", "help", json!({})))
            }
        }
    }

    fn load(&self, file: &str) -> Result<Loaded, Rejection> {
        let path = files::resolve(&self.root, file)?;
        let text = files::read(&path, file)?.unwrap_or_default();
        let doc = agir::read(&text).map_err(|e| {
            let mut r = Rejection::new(
                Reason::Unreadable,
                format!("`{file}` does not read as AG-IR: {}", e.message),
            );
            r.diagnostics.push(Diagnostic {
                code: Some("read".into()),
                severity: Some("fatal".into()),
                message: e.message.clone(),
                at: Some(file.to_owned()),
                line: e.pos.map(|p| p.line),
                column: e.pos.map(|p| p.column),
            });
            if let Some(h) = e.help {
                r.diagnostics.push(Diagnostic::msg(h));
            }
            r
        })?;
        Ok(Loaded {
            path,
            generation: model::digest(text.as_bytes()),
            text,
            doc,
        })
    }

    /// `status`: the programs under the root, or one program's findings and generations.
    pub fn status(&self, args: &StatusArgs) -> Result<Json, Rejection> {
        let Some(file) = &args.file else {
            let list: Vec<Json> = files::programs(&self.root, 1000)
                .iter()
                .map(|p| {
                    let rel = p
                        .strip_prefix(&self.root)
                        .unwrap_or(p)
                        .display()
                        .to_string();
                    match self.load(&rel) {
                        Ok(l) => {
                            let c = check(&l.doc.program, &l.doc.source_map, Repairs::Off);
                            json!({"file": rel, "generation": l.generation, "outcome": c.outcome,
                                   "findings": c.findings.len()})
                        }
                        Err(r) => json!({"file": rel, "unreadable": r.detail}),
                    }
                })
                .collect();
            return Ok(
                json!({"status": "ok", "root": self.root, "catalog": ops::CATALOG_VERSION, "programs": list}),
            );
        };
        let l = self.load(file)?;
        let c = check(&l.doc.program, &l.doc.source_map, Repairs::Off);
        let findings: Vec<Reported> = c.findings.iter().map(reported).collect();
        let generations: serde_json::Map<String, Json> = model::generations(&l.doc.program)
            .into_iter()
            .map(|(a, g)| (a.to_string(), g.into()))
            .collect();
        Ok(json!({
            "status": "ok", "file": file, "generation": l.generation, "outcome": c.outcome,
            "findings": findings, "generations": generations,
        }))
    }

    /// `view`: an element with its generation (and an instruction's handles).
    pub fn view(&self, args: &ViewArgs) -> Result<Json, Rejection> {
        let l = self.load(&args.file)?;
        let p = &l.doc.program;
        let target = address_in(
            p,
            &args.target,
            |fixed| json!({"file": args.file, "target": fixed}),
            "view",
            &args.file,
        )?;
        let v = view::view(p, &target, l.generation).ok_or_else(|| {
            Rejection::new(
                Reason::UnknownTarget,
                format!(
                    "`{target}` cannot be viewed: an obligation is found with `query traced_by`"
                ),
            )
            .repair(
                "the elements that trace to it",
                "query",
                json!({"file": args.file, "kind": "traced_by", "obligation": target.name()}),
            )
        })?;
        Ok(serde_json::to_value(v).unwrap_or_default())
    }

    /// `query`: a semantic question.
    pub fn query(&self, args: &Json) -> Result<Json, Rejection> {
        let mut obj = args
            .as_object()
            .cloned()
            .ok_or_else(|| shape("query", "an object"))?;
        let file = match obj.remove("file") {
            Some(Json::String(f)) => f,
            _ => return Err(shape("query", "`file`, a string")),
        };
        let q: query::Query = serde_json::from_value(Json::Object(obj.clone())).map_err(|e| {
            Rejection::new(Reason::BadShape, format!("query: {e}")).repair(
                "the queries and their fields",
                "help",
                json!({"op": "query"}),
            )
        })?;
        let l = self.load(&file)?;
        query::answer(&l.doc.program, &q).map_err(|u| {
            let mut r = Rejection::new(
                Reason::UnknownTarget,
                format!("`{}`: nothing is named `{}`", u.field, u.name),
            )
            .suggest(u.candidates.clone());
            if let Some(c) = u.candidates.first() {
                let mut fixed = obj.clone();
                let bare = c.split_once(':').map_or(c.as_str(), |(_, n)| n);
                let value = if u.field == "target" {
                    c.as_str()
                } else {
                    bare
                };
                fixed.insert(u.field.into(), value.into());
                fixed.insert("file".into(), file.clone().into());
                r = r.repair(format!("`{c}` exists"), "query", Json::Object(fixed));
            }
            r.repair(
                format!("elements whose name contains `{}`", u.name),
                "query",
                json!({"file": file, "kind": "search", "q": u.name}),
            )
        })
    }

    /// `patch`: applies the operations; see the crate docs. A rejection's corrected patches
    /// are themselves tried (without writing): one that would fail again at the same operation
    /// for the same reason is completed with that failure's own correction (a second
    /// misspelled name in the operation) or dropped, so a repair never repeats its rejection.
    pub fn patch(&self, args: &PatchArgs) -> Result<Json, Rejection> {
        let mut r = match self.patch_once(args) {
            Ok(v) => return Ok(v),
            Err(r) => r,
        };
        let key = (r.reason, r.op_index);
        let repairs = std::mem::take(&mut r.possible_repairs);
        for mut rep in repairs {
            if rep.call.tool != "patch" {
                r.possible_repairs.push(rep);
                continue;
            }
            let mut kept = false;
            for _ in 0..8 {
                let Ok(mut trial) = serde_json::from_value::<PatchArgs>(rep.call.args.clone())
                else {
                    break;
                };
                trial.dry_run = true;
                match self.patch_once(&trial) {
                    Ok(_) => kept = true,
                    Err(again) if (again.reason, again.op_index) != key => kept = true,
                    Err(again) => {
                        let next = again
                            .possible_repairs
                            .into_iter()
                            .find(|x| x.call.tool == "patch");
                        if let Some(next) = next {
                            let mut args = next.call.args;
                            args["dry_run"] = args_dry(&rep.call.args);
                            if let Some(o) = args.as_object_mut()
                                && !args_dry(&rep.call.args).as_bool().unwrap_or(false)
                            {
                                o.remove("dry_run");
                            }
                            rep.call.args = args;
                            continue;
                        }
                    }
                }
                break;
            }
            if kept {
                r.possible_repairs.push(rep);
            }
        }
        Err(r)
    }

    fn patch_once(&self, args: &PatchArgs) -> Result<Json, Rejection> {
        if args.ops.len() > MAX_OPS {
            return Err(Rejection::new(
                Reason::TooLarge,
                format!(
                    "{} operations, more than the {MAX_OPS} one patch may hold: split it into several patches",
                    args.ops.len()
                ),
            ));
        }
        let path = files::resolve(&self.root, &args.file)?;
        let _lock = if args.dry_run {
            None
        } else {
            Some(files::lock(&path)?)
        };
        let l = self.load(&args.file)?;
        if let Some(g) = &args.generation
            && *g != l.generation
        {
            return Err(Rejection::new(
                Reason::StaleGeneration,
                format!(
                    "stale generation: `{}` is at {}, not {g}; it changed since it was read — re-view it",
                    args.file, l.generation
                ),
            )
            .repair("the program as it is now", "view", json!({"file": args.file, "target": "program"}))
            .repair("its findings and generations", "status", json!({"file": args.file})));
        }
        let before = check(&l.doc.program, &l.doc.source_map, Repairs::Off);
        let findings_before: Vec<Reported> = before.findings.iter().map(reported).collect();
        let mut st = State {
            program: l.doc.program.clone(),
            original: &l.doc.program,
        };
        let mut results: Vec<Json> = Vec::new();
        let mut created: Vec<Option<Address>> = Vec::new();
        let mut touched: Vec<Address> = Vec::new();
        for (i, raw) in args.ops.iter().enumerate() {
            let raw = substitute(raw, &created);
            let op: Op = decode_op(&raw, i, args)?;
            let applied = apply::apply(&mut st, &op).map_err(|f| op_rejection(f, i, &raw, args))?;
            results.push(json!({"op_index": i, "op": raw.get("op"), "created": applied.created}));
            touched.extend(applied.touched);
            created.push(applied.created);
        }
        let limits = agir::Limits::default();
        let text = if st.program == l.doc.program {
            l.text.clone()
        } else if let Some(t) = agir::edit_minimally(&l.text, &l.doc, &st.program) {
            t
        } else {
            let canonical = agir::write_keeping(&st.program, &l.doc, &limits).map_err(|e| {
                Rejection::new(
                    Reason::TooLarge,
                    format!("the program cannot be written: {}", e.message),
                )
            })?;
            let fenced = !l.doc.relaxations.is_empty() || l.text.trim_start().starts_with("```");
            match fenced {
                false => splice::keep_unchanged(&l.text, &l.doc.program, &canonical, &st.program)
                    .unwrap_or(canonical),
                true => canonical,
            }
        };
        let back = agir::read(&text).map_err(|e| {
            Rejection::new(
                Reason::Io,
                format!("the written text does not read back: {}", e.message),
            )
        })?;
        let after = check(&back.program, &back.source_map, Repairs::Off);
        let findings_after: Vec<Reported> = after.findings.iter().map(reported).collect();
        let introduced: Vec<(usize, &Reported)> = findings_after
            .iter()
            .enumerate()
            .filter(|(_, f)| !findings_before.iter().any(|b| same(b, f)))
            .collect();
        let blocking: Vec<usize> = introduced
            .iter()
            .filter(|(k, _)| after.findings[*k].severity >= Severity::Error)
            .map(|(k, _)| *k)
            .collect();
        if !blocking.is_empty() {
            return Err(new_findings(
                args,
                &blocking,
                &after.findings,
                &back.program,
            ));
        }
        let resolved: Vec<&Reported> = findings_before
            .iter()
            .filter(|b| !findings_after.iter().any(|a| same(a, b)))
            .collect();
        let new_generation = model::digest(text.as_bytes());
        let diff = similar::TextDiff::from_lines(&l.text, &text)
            .unified_diff()
            .context_radius(2)
            .header(&args.file, &args.file)
            .to_string();
        let changed = text != l.text;
        if changed && !args.dry_run {
            files::write_atomically(&l.path, &text)?;
        }
        touched.sort();
        touched.dedup();
        let generations: serde_json::Map<String, Json> = touched
            .iter()
            .map(|a| {
                (
                    a.to_string(),
                    model::generation(&back.program, a).map_or(Json::Null, Json::String),
                )
            })
            .collect();
        let introduced: Vec<&Reported> = introduced.into_iter().map(|(_, f)| f).collect();
        Ok(json!({
            "status": "ok",
            "dry_run": args.dry_run,
            "written": changed && !args.dry_run,
            "file": args.file,
            "generation": new_generation,
            "previous_generation": l.generation,
            "applied": results,
            "generations": generations,
            "outcome_before": before.outcome,
            "outcome": after.outcome,
            "findings_before": findings_before,
            "findings_after": findings_after,
            "introduced": introduced,
            "resolved": resolved,
            "diff": diff,
        }))
    }
}

/// Counts the bytes written to it, failing once past [`MAX_REQUEST_BYTES`].
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        if self.0 > MAX_REQUEST_BYTES {
            return Err(std::io::Error::other("too large"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn args_dry(args: &Json) -> Json {
    Json::Bool(args.get("dry_run").and_then(Json::as_bool).unwrap_or(false))
}

fn shape(verb: &str, what: &str) -> Rejection {
    Rejection::new(
        Reason::BadShape,
        format!("{verb}: the arguments must be {what}"),
    )
    .repair(format!("what `{verb}` takes"), "help", json!({"op": verb}))
}

fn decode<T: serde::de::DeserializeOwned>(args: &Json, verb: &str) -> Result<T, Rejection> {
    let args = if args.is_null() {
        json!({})
    } else {
        args.clone()
    };
    serde_json::from_value(args).map_err(|e| {
        Rejection::new(Reason::BadShape, format!("{verb}: {e}")).repair(
            format!("what `{verb}` takes"),
            "help",
            json!({"op": verb}),
        )
    })
}

/// `help`: the catalog, or one operation (or verb).
pub fn help(args: &HelpArgs) -> Result<Json, Rejection> {
    let catalog = ops::catalog();
    let verbs = json!({
        "status": schemars::schema_for!(StatusArgs),
        "help": schemars::schema_for!(HelpArgs),
        "view": schemars::schema_for!(ViewArgs),
        "query": schemars::schema_for!(QueryArgs),
        "patch": schemars::schema_for!(PatchArgs),
    });
    let Some(op) = &args.op else {
        return Ok(json!({
            "status": "ok",
            "catalog": ops::CATALOG_VERSION,
            "verbs": verbs,
            "sugar": SUGAR,
            "expression_form": schemars::schema_for!(ops::ExprNode),
            "operations": catalog,
        }));
    };
    if let Some(v) = verbs.get(op) {
        return Ok(
            json!({"status": "ok", "catalog": ops::CATALOG_VERSION, "verb": op, "schema": v}),
        );
    }
    match catalog.into_iter().find(|o| o.op == op) {
        Some(info) => {
            Ok(json!({"status": "ok", "catalog": ops::CATALOG_VERSION, "operation": info}))
        }
        None => {
            let names: Vec<&str> = ops::names().chain(VERBS).collect();
            let close = ais_core::did_you_mean(op, names.iter().copied());
            let mut r = Rejection::new(Reason::UnknownVerb, format!("no operation or verb `{op}`"))
                .suggest(close.clone());
            if let Some(c) = close.first() {
                r = r.repair(format!("`{c}` exists"), "help", json!({"op": c}));
            }
            Err(r.repair("the whole catalog", "help", json!({})))
        }
    }
}

/// Parses an address in a verb's argument, with the re-issued call as the repair.
fn address_in(
    p: &Program,
    text: &str,
    again: impl Fn(&str) -> Json,
    verb: &str,
    file: &str,
) -> Result<Address, Rejection> {
    use address::AddressError;
    let candidates = match Address::parse(text, p) {
        Ok(a) if a.exists(p) => return Ok(a),
        Ok(a) => {
            let same_kind: Vec<String> = address::all(p)
                .iter()
                .filter(|x| std::mem::discriminant(*x) == std::mem::discriminant(&a))
                .map(ToString::to_string)
                .collect();
            ais_core::did_you_mean(&a.to_string(), same_kind.iter().map(String::as_str))
        }
        Err(AddressError::Unknown(c) | AddressError::Ambiguous(c)) => c,
        Err(AddressError::UnknownKind(_) | AddressError::Malformed(_)) => Vec::new(),
    };
    let mut r = Rejection::new(
        Reason::UnknownTarget,
        format!("`target`: no element `{text}` in `{file}`"),
    )
    .suggest(candidates.clone());
    for c in candidates.iter().take(3) {
        r = r.repair(format!("`{c}` exists"), verb, again(c));
    }
    let bare = text.split_once(':').map_or(text, |(_, n)| n);
    Err(r.repair(
        format!("elements whose name contains `{bare}`"),
        "query",
        json!({"file": file, "kind": "search", "q": bare}),
    ))
}

/// Replaces `$N` (and `KIND:$N`) in every string of an operation with what operation N
/// created.
fn substitute(op: &Json, created: &[Option<Address>]) -> Json {
    let one = |s: &str| -> Option<String> {
        let (prefix, n) = match s.rsplit_once('$') {
            Some((p, n)) if p.is_empty() || p.ends_with(':') => (p, n),
            _ => return None,
        };
        let k: usize = n.parse().ok()?;
        let a = created.get(k.checked_sub(1)?)?.as_ref()?;
        Some(if prefix.is_empty() {
            a.name()
        } else {
            format!("{prefix}{}", a.name())
        })
    };
    match op {
        Json::String(s) => one(s).map_or_else(|| op.clone(), Json::String),
        Json::Array(xs) => Json::Array(xs.iter().map(|x| substitute(x, created)).collect()),
        Json::Object(m) => Json::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), substitute(v, created)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn patch_call(args: &PatchArgs, ops: Vec<Json>) -> Json {
    let mut v = json!({"file": args.file, "ops": ops});
    if args.dry_run {
        v["dry_run"] = true.into();
    }
    if let Some(g) = &args.generation {
        v["generation"] = g.clone().into();
    }
    v
}

fn decode_op(raw: &Json, i: usize, args: &PatchArgs) -> Result<Op, Rejection> {
    serde_json::from_value(raw.clone()).map_err(|e| {
        let name = raw.get("op").and_then(Json::as_str).unwrap_or_default();
        let mut r = Rejection::new(Reason::BadShape, format!("operation {i}: {e}"));
        r.op_index = Some(i);
        if !ops::names().any(|n| n == name) {
            let close = ais_core::did_you_mean(name, ops::names());
            r = r.suggest(close.clone());
            if let Some(c) = close.first() {
                let mut ops = args.ops.clone();
                ops[i]["op"] = c.clone().into();
                r = r.repair(
                    format!("`{c}` is an operation"),
                    "patch",
                    patch_call(args, ops),
                );
                r = r.repair(format!("what `{c}` takes"), "help", json!({"op": c}));
            }
            r.repair("the operation catalog", "help", json!({}))
        } else {
            r.repair(format!("what `{name}` takes"), "help", json!({"op": name}))
        }
    })
}

/// `value` with the name `from` at the field replaced by `to` (a string equal to it, an
/// entry of a list, a name inside an expression).
fn corrected(value: &Json, from: &str, to: &str) -> Option<Json> {
    match value {
        Json::String(s) if s == from => Some(to.into()),
        Json::String(s) => {
            if let Some(rest) = s.strip_suffix(from)
                && rest.ends_with(':')
            {
                return Some(format!("{rest}{to}").into());
            }
            exprs::rename_name(s, from, to)
                .ok()
                .flatten()
                .map(Json::String)
        }
        Json::Array(xs) => {
            let mut hit = false;
            let out: Vec<Json> = xs
                .iter()
                .map(|x| match x {
                    Json::String(s) if s == from => {
                        hit = true;
                        to.into()
                    }
                    other => other.clone(),
                })
                .collect();
            hit.then_some(Json::Array(out))
        }
        _ => None,
    }
}

fn op_rejection(f: Box<OpFail>, i: usize, raw: &Json, args: &PatchArgs) -> Rejection {
    let f = *f;
    let mut r = Rejection::new(f.reason, format!("operation {i}: {}", f.detail));
    r.op_index = Some(i);
    r.diagnostics = f.diagnostics;
    r.did_you_mean = f.candidates.clone();
    let opname = raw.get("op").and_then(Json::as_str).unwrap_or_default();
    if let (Some(field), Some(name)) = (f.field, &f.name) {
        for c in f.candidates.iter().take(3) {
            let bare = c.split_once(':').map_or(c.as_str(), |(_, n)| n);
            let to = if field == "target" { c.as_str() } else { bare };
            if let Some(v) = raw.get(field).and_then(|v| corrected(v, name, to)) {
                let mut ops = args.ops.clone();
                ops[i] = raw.clone();
                ops[i][field] = v;
                r = r.repair(
                    format!("`{c}` exists: operation {i} with `{name}` corrected"),
                    "patch",
                    patch_call(args, ops),
                );
            }
        }
    }
    if !f.prepend.is_empty() {
        let mut ops = args.ops.clone();
        let k = f.prepend.len();
        for (j, o) in f.prepend.into_iter().enumerate() {
            ops.insert(i + j, o);
        }
        let why = format!("the same patch, first removing the {k} reference(s) listed");
        r = r.repair(why, "patch", patch_call(args, ops));
    }
    if !f.instead.is_empty() {
        let mut ops = args.ops.clone();
        ops.splice(i..=i, f.instead);
        r = r.repair(
            "the same patch, with the operations that do what was meant",
            "patch",
            patch_call(args, ops),
        );
    }
    if let Some(a) = &f.view {
        r = r.repair(
            format!("`{a}` as it is now: its generation and handles"),
            "view",
            json!({"file": args.file, "target": a.to_string()}),
        );
    }
    if let Some(name) = &f.search {
        r = r.repair(
            format!("elements whose name contains `{name}`"),
            "query",
            json!({"file": args.file, "kind": "search", "q": name}),
        );
    }
    if matches!(
        f.reason,
        Reason::BadShape | Reason::InvalidElement | Reason::InvalidName
    ) {
        r = r.repair(
            format!("what `{opname}` takes"),
            "help",
            json!({"op": opname}),
        );
    }
    r
}

/// The operations that make a validator's structured repair ([`ais_core::Edit`]).
fn ops_for_edit(edit: &ais_core::Edit, p: &Program) -> Vec<Json> {
    use ais_core::Edit;
    match edit {
        Edit::MintCarry {
            name,
            ty,
            produced_by,
        } => {
            let mut c = json!({"name": name});
            if let Some(t) = ty {
                c["type"] = t.to_string().into();
            }
            if let Some(b) = produced_by {
                c["produced_by"] = b.clone().into();
            }
            vec![json!({"op": "add_carry", "carry": c})]
        }
        Edit::ReownToModel { instruction, .. } => {
            vec![json!({"op": "set_owner", "id": instruction, "owner": "model"})]
        }
        Edit::SetProducer { carry, instruction } => {
            vec![json!({"op": "set_produced_by", "carry": carry, "instruction": instruction})]
        }
        Edit::AdoptType { carry, ty } => {
            vec![json!({"op": "retype_carry", "carry": carry, "type": ty.to_string()})]
        }
        Edit::RenameRead {
            instruction,
            index,
            to,
            ..
        } => {
            let Some(n) = p.instructions().get(*instruction) else {
                return Vec::new();
            };
            let mut reads = n.reads.clone();
            if let Some(r) = reads.get_mut(*index) {
                r.clone_from(to);
            }
            vec![json!({"op": "set_reads", "id": n.id, "reads": reads})]
        }
        Edit::RenameInGuard { edge, .. } => {
            let mut q = p.clone();
            if edit.apply(&mut q).is_none() {
                return Vec::new();
            }
            let Address::Edge { from, to, index } = model::edge_address(&q, *edge) else {
                return Vec::new();
            };
            vec![
                json!({"op": "set_guard", "from": from, "to": to, "index": index,
                        "guard": q.edge_list()[*edge].guard}),
            ]
        }
        Edit::ObjectOfWrites {
            instruction,
            ty,
            fields,
        } => {
            let members: Vec<Json> = fields
                .iter()
                .map(|f| {
                    let mut m = json!({"name": f.name});
                    if let Some(t) = &f.ty {
                        m["type"] = t.to_string().into();
                    }
                    m
                })
                .collect();
            vec![
                json!({"op": "add_type", "type": {"name": ty, "kind": "object", "members": members}}),
                json!({"op": "set_output", "id": instruction, "type": ty}),
            ]
        }
    }
}

fn new_findings(
    args: &PatchArgs,
    blocking: &[usize],
    findings: &[Finding],
    p: &Program,
) -> Rejection {
    let first = &findings[blocking[0]];
    let mut r = Rejection::new(
        Reason::NewFindings,
        format!(
            "the patch leaves {} new finding(s) of severity error or fatal (first: {} {}); nothing was written",
            blocking.len(),
            first.id.as_str(),
            first.message
        ),
    );
    let mut fixes: Vec<Json> = Vec::new();
    for &k in blocking {
        let f = &findings[k];
        r.diagnostics.push(Diagnostic {
            code: Some(f.id.as_str().to_owned()),
            severity: Some(f.severity.to_string()),
            message: f.message.clone(),
            at: f.instruction.clone(),
            line: f.pos.map(|p| p.line),
            column: f.pos.map(|p| p.column),
        });
        for d in &f.did_you_mean {
            if !r.did_you_mean.contains(d) {
                r.did_you_mean.push(d.clone());
            }
        }
        if let Some(edit) = f.repair.as_ref().and_then(|x| x.edit.as_ref()) {
            for o in ops_for_edit(edit, p) {
                if !fixes.contains(&o) {
                    fixes.push(o);
                }
            }
        }
    }
    if !fixes.is_empty() {
        let mut ops = args.ops.clone();
        ops.extend(fixes);
        r = r.repair(
            "the same patch with the validator's repairs of what it introduced",
            "patch",
            patch_call(args, ops),
        );
    }
    r.repair(
        "the program's findings as they stand",
        "status",
        json!({"file": args.file}),
    )
}

/// A patch repair of a one-operation sugar call, offered as the sugar verb again when it is
/// still one operation of that verb.
fn sugar_again(call: &mut Call, verb: &str) {
    if call.tool != "patch" {
        return;
    }
    let Some(ops) = call.args.get("ops").and_then(Json::as_array) else {
        return;
    };
    if let [op] = ops.as_slice()
        && op.get("op").and_then(Json::as_str) == Some(verb)
        && let Some(mut fields) = op.as_object().cloned()
    {
        fields.remove("op");
        fields.insert("file".into(), call.args["file"].clone());
        if call.args.get("dry_run") == Some(&Json::Bool(true)) {
            fields.insert("dry_run".into(), true.into());
        }
        call.tool = verb.to_owned();
        call.args = Json::Object(fields);
    }
}
