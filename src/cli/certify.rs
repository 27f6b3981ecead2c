//! `ais runs certify`: a run's compliance certificate ([`ais::eval::certificate`]) as text, JSON
//! or an HTML page, and `--verify` of a certificate against the journal.
//!
//! Everything on the certificate that came from the run — obligation quotes, instruction ids,
//! the program's name — is hostile text: the text form prints it through
//! [`crate::cli::escape_controls`], the page through the report's [`esc`] under its
//! Content-Security-Policy ([`head`]).

use super::report::html::{esc, head};
use super::{CliError, Output};
use ais::eval::certificate::{self, Certificate, CertifyError, Standing};
use ais::rt::journal::Recording;
use ais::rt::journal::sqlite::SqliteStore;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

/// How `ais runs certify` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CertFormat {
    /// A table per obligation and the tally.
    Text,
    /// The certificate as JSON (what `--verify` reads).
    Json,
    /// A self-contained HTML page (no script, no fetch).
    Html,
}

fn cli_error(e: CertifyError) -> CliError {
    CliError::new(e.message, e.help)
}

/// The run `id` as the journal holds it.
fn recording(store: &SqliteStore, id: &str) -> Result<Recording, CliError> {
    Recording::from_sqlite(store, id).map_err(|e| {
        CliError::new(
            e.to_string(),
            "list the runs with `ais runs`; name the journal with `--journal PATH` or the output root with `--out DIR`",
        )
    })
}

/// `ais runs certify ID` (or `--verify CERT.json`): prints the certificate; exit 0, or 1 when a
/// certificate does not verify.
pub fn run(
    store: &SqliteStore,
    id: Option<&str>,
    verify: Option<&Path>,
    format: CertFormat,
    output: &mut Output,
) -> Result<u8, super::Failure> {
    let cert = match verify {
        Some(path) => {
            let claimed = certificate::read(path).map_err(cli_error)?;
            if let Some(id) = id.filter(|id| *id != claimed.run) {
                return Err(CliError::new(
                    format!(
                        "the certificate `{}` is of run {}, not of run {}",
                        super::shown(path),
                        super::escape_controls(&claimed.run),
                        super::escape_controls(id)
                    ),
                    "leave the run id out: `--verify` takes it from the certificate",
                )
                .into());
            }
            let rec = recording(store, &claimed.run)?;
            if let Err(e) = certificate::verify(&claimed, &rec) {
                let text = ais::render::render_error(
                    &super::escape_controls(&e.message),
                    Some(&e.help),
                    output.color_err,
                );
                writeln!(output.err, "{text}")?;
                return Ok(1);
            }
            claimed
        }
        None => {
            let id = id.ok_or_else(|| {
                CliError::new(
                    "`ais runs certify` needs a run id, or `--verify CERT.json`",
                    "list the runs with `ais runs`",
                )
            })?;
            certificate::certify(&recording(store, id)?).map_err(cli_error)?
        }
    };
    match format {
        CertFormat::Json => writeln!(
            output.out,
            "{}",
            serde_json::to_string_pretty(&cert).unwrap_or_default()
        )?,
        CertFormat::Text => output
            .out
            .write_all(text(&cert, verify.is_some()).as_bytes())?,
        CertFormat::Html => output
            .out
            .write_all(page(&cert, verify.is_some()).as_bytes())?,
    }
    Ok(0)
}

fn standing_word(s: Standing) -> &'static str {
    match s {
        Standing::Guaranteed => "guaranteed",
        Standing::ObservableOnly => "observable only",
        Standing::NotReached => "not reached",
        Standing::NotRealized => "not realized",
    }
}

/// The certificate as a listing.
pub fn text(c: &Certificate, verified: bool) -> String {
    let e = |s: &str| super::escape_controls(s).into_owned();
    let mut t = String::new();
    let _ = writeln!(
        t,
        "compliance certificate of run {} of `{}` ({}){}",
        e(&c.run),
        e(&c.program),
        c.status,
        if verified {
            ": verified against the journal"
        } else {
            ""
        }
    );
    let m = &c.mandatory;
    let _ = writeln!(
        t,
        "mandatory obligations performed: {} — {}",
        m.share(),
        m.breakdown()
    );
    let _ = writeln!(
        t,
        "{:<16} {:<36} {:<20} evidence",
        "standing", "obligation", "by"
    );
    for o in &c.obligations {
        let by: Vec<String> =
            o.by.iter()
                .map(|r| format!("{} ({})", e(&r.instruction), r.owner))
                .collect();
        let rows: Vec<String> =
            o.by.iter()
                .flat_map(|r| &r.rows)
                .filter_map(|&i| c.rows.get(i))
                .map(|r| e(&r.label))
                .collect();
        let _ = writeln!(
            t,
            "{:<16} {:<36} {:<20} {}",
            standing_word(o.standing),
            format!("{} ({}, {})", e(&o.id), e(&o.kind), e(&o.force)),
            if by.is_empty() {
                "-".to_owned()
            } else {
                by.join(", ")
            },
            if rows.is_empty() {
                e(&o.why)
            } else {
                rows.join("; ")
            }
        );
        if let Some(reason) = &o.accepted {
            let _ = writeln!(t, "{:<16} accepted deviation: {}", "", e(reason));
        }
    }
    let _ = writeln!(
        t,
        "chain {} over {} journal rows (verify with `ais runs certify --verify CERT.json` on the JSON form)",
        c.chain,
        c.rows.len()
    );
    t
}

/// The certificate as a self-contained page.
pub fn page(c: &Certificate, verified: bool) -> String {
    let mut h = String::with_capacity(16 * 1024);
    head(
        &mut h,
        &format!("ais compliance certificate: run {}", c.run),
    );
    let _ = writeln!(
        h,
        "<h1>Compliance certificate: run <code>{}</code> of <code>{}</code></h1>",
        esc(&c.run),
        esc(&c.program)
    );
    let m = &c.mandatory;
    let _ = writeln!(
        h,
        "<p id=\"summary\">Status <b>{}</b> · mandatory obligations performed <b id=\"percent\">{}</b>: {}{}</p>",
        c.status,
        m.share(),
        m.breakdown(),
        if verified {
            " · <b>verified against the journal</b>"
        } else {
            ""
        }
    );
    h.push_str("<table id=\"obligations\"><tr><th>obligation</th><th>kind · force · bearer</th><th>source</th><th>standing</th><th>realized by</th><th>why</th></tr>\n");
    for o in &c.obligations {
        let by: Vec<String> =
            o.by.iter()
                .map(|r| {
                    let rows: Vec<String> = r.rows.iter().map(|i| format!("#{i}")).collect();
                    format!(
                        "<code>{}</code> ({}) rows {}",
                        esc(&r.instruction),
                        esc(&r.owner),
                        rows.join(" ")
                    )
                })
                .collect();
        let accepted = o
            .accepted
            .as_deref()
            .map(|r| format!("<br>accepted deviation: {}", esc(r)))
            .unwrap_or_default();
        let _ = writeln!(
            h,
            "<tr class=\"{}\"><td><code>{}</code></td><td>{} · {} · {}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}{}</td></tr>",
            o.standing.as_str(),
            esc(&o.id),
            esc(&o.kind),
            esc(&o.force),
            esc(&o.bearer),
            if o.counted { " (counted)" } else { "" },
            esc(o.quote.as_deref().unwrap_or("")),
            standing_word(o.standing),
            by.join("<br>"),
            esc(&o.why),
            accepted
        );
    }
    h.push_str("</table>\n<h2>Journal rows</h2>\n<table id=\"rows\"><tr><th>#</th><th>row</th><th>SHA-256</th></tr>\n");
    for (i, r) in c.rows.iter().enumerate() {
        let _ = writeln!(
            h,
            "<tr><td class=\"n\">{i}</td><td>{}</td><td><code>{}</code></td></tr>",
            esc(&r.label),
            esc(&r.sha256)
        );
    }
    let _ = writeln!(
        h,
        "</table>\n<p>Chain <code id=\"chain\">{}</code> (program digest <code>{}</code>)</p>\n</body></html>",
        esc(&c.chain),
        esc(&c.digest)
    );
    h
}
