//! The compliance certificate of a journaled run (`ais runs certify RUN_ID`): what the run did
//! about each obligation of its program's provenance record (spec §9.5), with the journal rows
//! that show it, hash-chained so that a row edited after the fact breaks verification.
//!
//! Each obligation stands as one of four [`Standing`]s (the guarantee classes of spec §2.4, as
//! one run shows them):
//!
//! | standing | when | evidence |
//! |---|---|---|
//! | `guaranteed` | a code-owned instruction realizing it ran (an instruction, a tool it calls, an edge it decided, a carry it wrote — a code verdict) | its step commits and tool effects |
//! | `observable_only` | only a model-owned instruction realizing it ran | the slot's exchanges with the model: the journal rows of each |
//! | `not_reached` | the program realizes it, but nothing realizing it ran on this run's path | — |
//! | `not_realized` | the program does not realize it in the shape its kind and force require (the audit's F1) | — |
//!
//! The tally counts the **mandatory** obligations the agent bears (force `mandatory`, bearer
//! `agent`, a realization the audit requires): `performed` are those `guaranteed` or
//! `observable_only`, and `performed_percent` is their share. A mandatory obligation the run
//! did not reach is not performed — a branch not taken and a run that stopped early look
//! alike to a journal, and the certificate does not guess which it was.
//!
//! **The chain.** Every cited row (the run's start — which holds the program's text and
//! digest —, then the step commits and effects, in journal order) is hashed on its own
//! (SHA-256 of its JSON as the journal reads it), and the chain folds them in order:
//! `h0 = sha256("ais-certificate/1" ‖ run ‖ digest)`, `hᵢ = sha256(hᵢ₋₁ ‖ labelᵢ ‖ rowᵢ)`.
//! [`verify`] computes the certificate again from the journal and names the first row whose
//! hash differs, or the first claim that does.
//!
//! ```
//! use ais_eval::certificate::{Standing, certify};
//! use ais_rt::journal::{Effect, EffectKey, EffectKind, Idempotency, RunStart, StepCommit};
//! use ais_rt::journal::Recording;
//!
//! let source = r#"
//! walker:
//!   carries:
//!     task: {type: str, role: input}
//!     note: {type: str, produced_by: draft}
//!     size: {type: int, produced_by: count}
//! nodes:
//!   - {id: draft, type: GEN-RAW, reads: [task], writes: [note], doc: Draft the note., traces_to: [r_draft]}
//!   - {id: count, type: CODE, owner: code, reads: [note], writes: [size], body: len(note), traces_to: [r_count]}
//!   - {id: done, type: TERMINAL, reads: [size]}
//! edges:
//!   - {from: draft, to: count}
//!   - {from: count, to: done}
//! faithfulness:
//!   obligations:
//!     - {id: r_draft, kind: step, force: mandatory, quote: Draft the note.}
//!     - {id: r_count, kind: step, force: mandatory, quote: Count its characters.}
//! "#;
//! let commit = |step, instruction: &str, cursor| StepCommit {
//!     step, instruction: instruction.into(), cursor, ..Default::default()
//! };
//! let slot = Effect {
//!     key: EffectKey { step: 1, path: String::new(), index: 0 },
//!     kind: EffectKind::Slot,
//!     instruction: "draft".into(),
//!     name: "draft".into(),
//!     idempotency: Idempotency::Retry,
//!     request: None,
//! };
//! let run = Recording {
//!     start: RunStart {
//!         id: "r1".into(), program: "notes".into(), digest: "d".into(),
//!         source: source.into(), task: "t".into(), inputs: vec![], meta: serde_json::json!({}),
//!     },
//!     status: ais_rt::journal::RunState::Ended(ais_rt::Status::Ok),
//!     effects: vec![(slot, Some(serde_json::json!({"completion": {"text": "A note."}})))],
//!     commits: vec![commit(1, "draft", 1), commit(2, "count", 2), commit(3, "done", 2)],
//!     outcome: Some(serde_json::json!({"status": "ok"})),
//! };
//! let cert = certify(&run)?;
//! assert_eq!(cert.obligations[0].standing, Standing::ObservableOnly);
//! assert_eq!(cert.obligations[1].standing, Standing::Guaranteed);
//! assert_eq!(cert.mandatory.performed_percent, 100.0);
//!
//! // A model answer rewritten after the fact no longer matches the certificate.
//! let mut edited = run.clone();
//! edited.effects[0].1 = Some(serde_json::json!({"completion": {"text": "Another note."}}));
//! let err = ais_eval::certificate::verify(&cert, &edited).unwrap_err();
//! assert!(err.message.contains("step 1 effect 0"), "{}", err.message);
//! # Ok::<(), ais_eval::certificate::CertifyError>(())
//! ```

use ais_core::{
    AuditConfig, ElementRef, Instruction, ObligationStatus, Opcode, Program, Provenance,
    Realization,
};
use ais_rt::journal::Recording;
use ais_rt::journal::{Effect, Json, RunState, StepCommit};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;

/// The format tag of a certificate.
pub const CERTIFICATE_FORMAT: &str = "ais-certificate/1";

/// The largest certificate file `--verify` reads, in bytes.
pub const MAX_CERTIFICATE_BYTES: u64 = 16 * 1024 * 1024;

/// What one run did about each obligation of its program's provenance record, with the
/// journal rows it rests on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Certificate {
    /// [`CERTIFICATE_FORMAT`].
    pub format: String,
    /// The run's id.
    pub run: String,
    /// The program's name.
    pub program: String,
    /// The SHA-256 of the program's canonical AG-IR, as the run recorded it.
    pub digest: String,
    /// How the run stands (`ok`, `error`, `fault`, `input_required`, …, or `running`).
    pub status: RunState,
    /// Each obligation, in the record's order.
    pub obligations: Vec<Entry>,
    /// The mandatory obligations the agent bears, counted.
    pub mandatory: Tally,
    /// The journal rows the certificate cites, in chain order.
    pub rows: Vec<Row>,
    /// The last link of the chain over `rows` (hex SHA-256).
    pub chain: String,
}

/// How one obligation stands after one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// Realized by code that ran: performed by construction.
    Guaranteed,
    /// Realized only by a model slot that ran: the exchange is the evidence.
    ObservableOnly,
    /// Realized by the program, but nothing realizing it ran on this run's path.
    NotReached,
    /// Not realized by the program in the shape its kind and force require.
    NotRealized,
}

impl Standing {
    /// As the certificate spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Standing::Guaranteed => "guaranteed",
            Standing::ObservableOnly => "observable_only",
            Standing::NotReached => "not_reached",
            Standing::NotRealized => "not_realized",
        }
    }

    /// True when the run performed it (guaranteed or observable).
    pub fn performed(self) -> bool {
        matches!(self, Standing::Guaranteed | Standing::ObservableOnly)
    }
}

/// One obligation on the certificate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Its id.
    pub id: String,
    /// Its kind, force and bearer as the record spells them (`?` when missing).
    pub kind: String,
    /// Its force.
    pub force: String,
    /// Its bearer.
    pub bearer: String,
    /// The source's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
    /// The realization its kind, force and bearer require (`None` when the record does not
    /// say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<String>,
    /// True when it is counted in the tally (mandatory, borne by the agent).
    pub counted: bool,
    /// How it stands after the run.
    pub standing: Standing,
    /// The instructions realizing it that ran, each with its owner and the rows that show it.
    pub by: Vec<Realizer>,
    /// Why it stands so, in words.
    pub why: String,
    /// The reason of an accepted deviation about it, when the record has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted: Option<String>,
}

/// An instruction that realized an obligation on this run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Realizer {
    /// The instruction.
    pub instruction: String,
    /// `code` or `model`.
    pub owner: String,
    /// The rows (indices into [`Certificate::rows`]) that show it ran.
    pub rows: Vec<usize>,
}

/// The mandatory obligations the agent bears, by standing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tally {
    /// How many there are.
    pub total: usize,
    /// Guaranteed.
    pub guaranteed: usize,
    /// Observable only.
    pub observable_only: usize,
    /// Not reached.
    pub not_reached: usize,
    /// Not realized.
    pub not_realized: usize,
    /// Guaranteed or observable.
    pub performed: usize,
    /// `performed / total` in percent (100 when there are none).
    pub performed_percent: f64,
}

impl Tally {
    /// `3/4 (75%)`.
    pub fn share(&self) -> String {
        format!(
            "{}/{} ({:.0}%)",
            self.performed, self.total, self.performed_percent
        )
    }

    /// `2 guaranteed, 1 observable only, 1 not reached, 0 not realized`.
    pub fn breakdown(&self) -> String {
        format!(
            "{} guaranteed, {} observable only, {} not reached, {} not realized",
            self.guaranteed, self.observable_only, self.not_reached, self.not_realized
        )
    }
}

/// One cited journal row and its hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// Which row: `start`, `step 3 commit (classify)`, `step 2 effect 0 (slot classify)`.
    pub label: String,
    /// The SHA-256 of the row's JSON, hex.
    pub sha256: String,
}

/// Why a run cannot be certified, or a certificate does not verify: what, and the next step.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CertifyError {
    /// What is wrong.
    pub message: String,
    /// The next step.
    pub help: String,
}

impl CertifyError {
    fn new(message: impl Into<String>, help: impl Into<String>) -> Self {
        CertifyError {
            message: message.into(),
            help: help.into(),
        }
    }
}

/// The help of a program with no provenance record.
pub const NO_RECORD_HELP: &str = "a certificate checks a run against the obligations of the source its program was lifted from: lift the program from its skill with `ais lift SKILL.md` (which writes the record), or add a `faithfulness:` section listing the `obligations` and `traces_to: [ID]` on the elements that realize them (in `ais!`: `obligation ID { kind: step, force: mandatory, quote: \"...\" }` and `#[traces_to(\"ID\")]`), then check it with `ais check --source SKILL.md`";

/// The program a run recorded, with its provenance record; a clear error when it has none.
pub fn program_of(run: &Recording) -> Result<Program, CertifyError> {
    let doc = ais_core::agir::read(&run.start.source).map_err(|e| {
        CertifyError::new(
            format!(
                "run {}: the program it recorded does not read ({e})",
                run.start.id
            ),
            "the journal row of the run's start was changed; certify a run the journal holds intact",
        )
    })?;
    let has_record = doc
        .program
        .faithfulness
        .as_ref()
        .is_some_and(|r| !r.obligation_list().is_empty());
    if !has_record {
        return Err(CertifyError::new(
            format!(
                "run {} of `{}` cannot be certified: its program has no provenance record (no `faithfulness.obligations`)",
                run.start.id, run.start.program
            ),
            NO_RECORD_HELP,
        ));
    }
    Ok(doc.program)
}

/// The certificate of a journaled run: each obligation of its program's provenance record with
/// its standing and evidence, the tally, and the chain over the cited rows.
pub fn certify(run: &Recording) -> Result<Certificate, CertifyError> {
    let program = program_of(run)?;
    let record = program
        .faithfulness
        .as_ref()
        .ok_or_else(|| CertifyError::new("the program has no provenance record", NO_RECORD_HELP))?;
    let audit = ais_core::audit(
        &program,
        &ais_core::SourceMap::default(),
        None,
        &AuditConfig::default(),
    );
    let mut rows = Rows::new(run);
    let mut obligations = Vec::new();
    for (i, o) in record.obligation_list().iter().enumerate() {
        let status = audit.obligations.get(i);
        obligations.push(entry(&program, record, o, status, run, &mut rows));
    }
    let (rows, remap) = rows.finish();
    for e in &mut obligations {
        for r in &mut e.by {
            r.rows = r.rows.iter().map(|&k| remap[k]).collect();
            r.rows.sort_unstable();
        }
    }
    let mandatory = tally(&obligations);
    let chain = chain(&run.start.id, &run.start.digest, &rows);
    Ok(Certificate {
        format: CERTIFICATE_FORMAT.to_owned(),
        run: run.start.id.clone(),
        program: run.start.program.clone(),
        digest: run.start.digest.clone(),
        status: run.status,
        obligations,
        mandatory,
        rows,
        chain,
    })
}

/// Verifies `cert` against the run as the journal holds it now: the same rows with the same
/// hashes, the same chain, the same claims. The error names the first difference.
pub fn verify(cert: &Certificate, run: &Recording) -> Result<(), CertifyError> {
    let help = "the journal or the certificate was changed after certification: a certificate is evidence only for the rows it was made from; certify the run again to see what the journal says now (`ais runs certify RUN_ID`)";
    if cert.format != CERTIFICATE_FORMAT {
        return Err(CertifyError::new(
            format!(
                "the certificate is `{}`, not `{CERTIFICATE_FORMAT}`",
                cert.format
            ),
            "make it again with `ais runs certify RUN_ID --format json`",
        ));
    }
    if cert.run != run.start.id {
        return Err(CertifyError::new(
            format!(
                "the certificate is of run {}, not of run {}",
                cert.run, run.start.id
            ),
            "verify it against the journal that holds its run (`--journal PATH` or `--out DIR`)",
        ));
    }
    if chain(&cert.run, &cert.digest, &cert.rows) != cert.chain {
        return Err(CertifyError::new(
            format!(
                "the certificate of run {} does not verify: its chain does not match the rows it lists",
                cert.run
            ),
            help,
        ));
    }
    let now = certify(run)?;
    for row in &cert.rows {
        match now.rows.iter().find(|r| r.label == row.label) {
            None => {
                return Err(CertifyError::new(
                    format!(
                        "the certificate of run {} does not verify: the journal no longer shows the row `{}` it cites",
                        cert.run, row.label
                    ),
                    help,
                ));
            }
            Some(r) if r.sha256 != row.sha256 => {
                return Err(CertifyError::new(
                    format!(
                        "the certificate of run {} does not verify: the journal row `{}` was changed (its SHA-256 was {}, it is now {})",
                        cert.run, row.label, row.sha256, r.sha256
                    ),
                    help,
                ));
            }
            Some(_) => {}
        }
    }
    if now.chain != cert.chain || now.rows.len() != cert.rows.len() {
        return Err(CertifyError::new(
            format!(
                "the certificate of run {} does not verify: the journal now cites other rows than it does",
                cert.run
            ),
            help,
        ));
    }
    if now != *cert {
        let what = cert
            .obligations
            .iter()
            .zip(&now.obligations)
            .find(|(a, b)| a != b)
            .map_or_else(
                || "its tally or its run's facts".to_owned(),
                |(a, b)| {
                    format!(
                        "obligation `{}` ({} on the certificate, {} in the journal)",
                        a.id,
                        a.standing.as_str(),
                        b.standing.as_str()
                    )
                },
            );
        return Err(CertifyError::new(
            format!(
                "the certificate of run {} does not verify: it claims something the journal does not show: {what}",
                cert.run
            ),
            help,
        ));
    }
    Ok(())
}

/// Reads a certificate file (bounded, a regular file).
pub fn read(path: &std::path::Path) -> Result<Certificate, CertifyError> {
    let text = ais_core::files::read_regular_text(path, MAX_CERTIFICATE_BYTES).map_err(|e| {
        CertifyError::new(
            format!("the certificate `{}` cannot be read: {e}", path.display()),
            "name the JSON file `ais runs certify RUN_ID --format json` wrote",
        )
    })?;
    serde_json::from_str(&text).map_err(|e| {
        CertifyError::new(
            format!(
                "the certificate `{}` does not read (line {}, column {}): {e}",
                path.display(),
                e.line(),
                e.column()
            ),
            "name the JSON file `ais runs certify RUN_ID --format json` wrote",
        )
    })
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The chain over `rows` for run `run` of the program with `digest`.
fn chain(run: &str, digest: &str, rows: &[Row]) -> String {
    let mut h = Sha256::new();
    for part in [CERTIFICATE_FORMAT, run, digest] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    let mut link = h.finalize();
    for row in rows {
        let mut h = Sha256::new();
        h.update(link);
        h.update(row.label.as_bytes());
        h.update([0]);
        h.update(row.sha256.as_bytes());
        link = h.finalize();
    }
    hex(&link)
}

/// A cited row's place in journal order: the start, then per step its effects (by key) and its
/// commit.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Cite {
    Start,
    Effect(u64, u8, String, u32),
    Commit(u64, u8),
}

/// The rows cited so far.
struct Rows {
    cited: Vec<(Cite, Row)>,
}

impl Rows {
    fn new(run: &Recording) -> Self {
        let start = serde_json::to_vec(&run.start).unwrap_or_default();
        Rows {
            cited: vec![(
                Cite::Start,
                Row {
                    label: "start".to_owned(),
                    sha256: sha256(&start),
                },
            )],
        }
    }

    /// Cites a row, once; its index in the (unsorted) list.
    fn cite(&mut self, cite: Cite, label: impl FnOnce() -> String, json: &[u8]) -> usize {
        if let Some(i) = self.cited.iter().position(|(c, _)| *c == cite) {
            return i;
        }
        self.cited.push((
            cite,
            Row {
                label: label(),
                sha256: sha256(json),
            },
        ));
        self.cited.len() - 1
    }

    fn commit(&mut self, c: &StepCommit) -> usize {
        let json = serde_json::to_vec(c).unwrap_or_default();
        self.cite(
            Cite::Commit(c.step, 1),
            || format!("step {} commit ({})", c.step, c.instruction),
            &json,
        )
    }

    fn effect(&mut self, e: &Effect, result: &Option<Json>) -> usize {
        let json = serde_json::to_vec(&(e, result)).unwrap_or_default();
        self.cite(
            Cite::Effect(e.key.step, 0, e.key.path.clone(), e.key.index),
            || format!("{} ({} {})", e.key, e.kind.as_str(), e.name),
            &json,
        )
    }

    /// The rows in journal order, and each old index's new one.
    fn finish(self) -> (Vec<Row>, Vec<usize>) {
        let mut order: Vec<usize> = (0..self.cited.len()).collect();
        order.sort_by(|&a, &b| self.cited[a].0.cmp(&self.cited[b].0));
        let mut remap = vec![0; self.cited.len()];
        for (new, &old) in order.iter().enumerate() {
            remap[old] = new;
        }
        let mut cited: Vec<Option<Row>> = self.cited.into_iter().map(|(_, r)| Some(r)).collect();
        let rows = order.iter().filter_map(|&i| cited[i].take()).collect();
        (rows, remap)
    }
}

/// The instructions an element that traces to an obligation stands for, each with whether it
/// realizes it only when a given transition was taken (an edge).
fn instructions_of<'p>(
    p: &'p Program,
    e: &'p ElementRef,
) -> Vec<(&'p Instruction, Option<&'p str>)> {
    let nodes = p.instructions();
    match e {
        ElementRef::Node(id) => nodes
            .iter()
            .filter(|n| n.id == *id)
            .map(|n| (n, None))
            .collect(),
        ElementRef::Edge { from, to } => nodes
            .iter()
            .filter(|n| n.id == *from)
            .map(|n| (n, Some(to.as_str())))
            .collect(),
        ElementRef::Carry(c) => nodes
            .iter()
            .filter(|n| n.writes.iter().any(|w| w == c))
            .map(|n| (n, None))
            .collect(),
        ElementRef::Tool(t) => nodes
            .iter()
            .filter(|n| {
                n.tool
                    .as_deref()
                    .is_some_and(|tl| tl.split('|').any(|x| x.trim() == t))
                    || n.autonomy.as_ref().is_some_and(|a| a.tools.contains(t))
            })
            .map(|n| (n, None))
            .collect(),
        ElementRef::Knowledge(k) => {
            let resident: Vec<&String> = p
                .knowledge_list()
                .iter()
                .filter(|item| item.name == *k)
                .flat_map(|item| &item.resident_on)
                .collect();
            nodes
                .iter()
                .filter(|n| resident.contains(&&n.id))
                .map(|n| (n, None))
                .collect()
        }
    }
}

/// True when an effect belongs to the run itself or one of its SPAWN siblings (not to a
/// CALL's sub-run, whose instructions are another program's).
fn own_path(e: &Effect) -> bool {
    !e.key.path.split('/').any(|seg| seg == "c")
}

fn entry(
    program: &Program,
    record: &Provenance,
    o: &ais_core::Obligation,
    status: Option<&ObligationStatus>,
    run: &Recording,
    rows: &mut Rows,
) -> Entry {
    let required = status.and_then(|s| s.required);
    let counted = o.force == Some(ais_core::Modality::Mandatory)
        && required.is_some_and(Realization::is_required);
    let accepted = record
        .deviation_list()
        .iter()
        .find(|d| d.obligation.as_deref() == Some(o.id.as_str()))
        .and_then(|d| d.reason.clone());
    let mut by: Vec<Realizer> = Vec::new();
    let realized = status.is_some_and(|s| s.realized) && required.is_some();
    if realized {
        let traced: Vec<&ElementRef> = status
            .map(|s| s.traced_by.iter().collect())
            .unwrap_or_default();
        let mut seen = BTreeSet::new();
        for element in traced {
            for (n, taken_to) in instructions_of(program, element) {
                if n.opcode == Opcode::Terminal && required == Some(Realization::Instruction) {
                    continue;
                }
                let mut cites = Vec::new();
                for (k, c) in run.commits.iter().enumerate() {
                    if c.instruction != n.id {
                        continue;
                    }
                    if let Some(to) = taken_to {
                        let next = run.commits.get(k + 1);
                        if next.is_none_or(|x| x.instruction != to) {
                            continue;
                        }
                    }
                    cites.push(rows.commit(c));
                }
                if cites.is_empty() {
                    continue;
                }
                for (e, result) in &run.effects {
                    if e.instruction == n.id && own_path(e) {
                        cites.push(rows.effect(e, result));
                    }
                }
                if seen.insert(n.id.clone()) {
                    by.push(Realizer {
                        instruction: n.id.clone(),
                        owner: if n.is_du() { "code" } else { "model" }.to_owned(),
                        rows: cites,
                    });
                } else if let Some(r) = by.iter_mut().find(|r| r.instruction == n.id) {
                    for c in cites {
                        if !r.rows.contains(&c) {
                            r.rows.push(c);
                        }
                    }
                }
            }
        }
    }
    let code: Vec<&str> = by
        .iter()
        .filter(|r| r.owner == "code")
        .map(|r| r.instruction.as_str())
        .collect();
    let model: Vec<&str> = by
        .iter()
        .filter(|r| r.owner == "model")
        .map(|r| r.instruction.as_str())
        .collect();
    let list = |ids: &[&str]| {
        ids.iter()
            .map(|i| format!("`{i}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (standing, why) = if required.is_none() {
        (
            Standing::NotRealized,
            "the record gives it no kind or force the audit knows, so no realization is required of it".to_owned(),
        )
    } else if !realized {
        let finding = status
            .map(|s| {
                if s.traced_by.is_empty() {
                    "nothing in the program traces to it".to_owned()
                } else {
                    "what traces to it is not the realization its kind and force require (see `ais check`)".to_owned()
                }
            })
            .unwrap_or_default();
        (Standing::NotRealized, finding)
    } else if !code.is_empty() {
        (
            Standing::Guaranteed,
            format!("code ran that realizes it: {}", list(&code)),
        )
    } else if !model.is_empty() {
        (
            Standing::ObservableOnly,
            format!(
                "only a model realizes it: {} ran; its exchanges are the evidence",
                list(&model)
            ),
        )
    } else {
        let traced: Vec<String> = status
            .map(|s| {
                s.traced_by
                    .iter()
                    .map(|e| format!("`{}`", e.spelling()))
                    .collect()
            })
            .unwrap_or_default();
        let why = match traced.len() {
            0 => "nothing realizing it ran on this run's path".to_owned(),
            1 => format!(
                "{} realizes it, and did not run on this run's path",
                traced[0]
            ),
            _ => format!(
                "{} realize it, and none ran on this run's path",
                traced.join(", ")
            ),
        };
        (Standing::NotReached, why)
    };
    let spelled = |s: Option<&str>| s.unwrap_or("?").to_owned();
    Entry {
        id: o.id.clone(),
        kind: spelled(o.kind.as_ref().map(|k| k.as_str())),
        force: spelled(o.force.as_ref().map(|f| f.as_str())),
        bearer: o.effective_bearer().as_str().to_owned(),
        quote: o.quote.clone(),
        required: required.map(|r| r.as_str().to_owned()),
        counted,
        standing,
        by,
        why,
        accepted,
    }
}

fn tally(entries: &[Entry]) -> Tally {
    let counted: Vec<&Entry> = entries.iter().filter(|e| e.counted).collect();
    let of = |s: Standing| counted.iter().filter(|e| e.standing == s).count();
    let performed = counted.iter().filter(|e| e.standing.performed()).count();
    let total = counted.len();
    Tally {
        total,
        guaranteed: of(Standing::Guaranteed),
        observable_only: of(Standing::ObservableOnly),
        not_reached: of(Standing::NotReached),
        not_realized: of(Standing::NotRealized),
        performed,
        performed_percent: if total == 0 {
            100.0
        } else {
            performed as f64 * 100.0 / total as f64
        },
    }
}
