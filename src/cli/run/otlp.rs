//! `ais run --otlp URL`: the run exported as an OpenTelemetry trace ([`ais::rt::otlp`]).

use super::Options;
use crate::cli::{CliError, Failure, Output};
use ais::rt::otlp::{OtlpOptions, OtlpSink};
use std::io::Write;
use std::sync::Arc;

/// The sink `--otlp` asks for, built before the first step (a bad URL stops the run there).
pub fn sink(
    options: &Options,
    doc: &ais::agir::Document,
) -> Result<Option<Arc<OtlpSink>>, CliError> {
    let Some(url) = &options.otlp else {
        return Ok(None);
    };
    let p = &doc.program;
    let program = p
        .walker
        .as_ref()
        .and_then(|w| w.name.clone())
        .or_else(|| p.name.clone())
        .unwrap_or_default();
    let options = OtlpOptions {
        contents: options.otlp_content,
        program,
    };
    OtlpSink::new(url, options)
        .map(|s| Some(Arc::new(s)))
        .map_err(|e| {
            CliError::new(
                e,
                "give the OTLP/HTTP endpoint of a collector, e.g. `--otlp http://127.0.0.1:4318`",
            )
        })
}

/// Ends the run's trace and sends it; a failed export is reported, and does not change how
/// the run ended.
pub fn finish(sink: Option<&OtlpSink>, output: &mut Output) -> Result<(), Failure> {
    if let Some(sink) = sink
        && let Err(e) = sink.finish()
    {
        let text = ais::render::render_error(
            &e,
            Some(
                "the run's OpenTelemetry trace was not sent; check that the collector at `--otlp` is up",
            ),
            output.color_err,
        );
        writeln!(output.err, "{text}")?;
    }
    Ok(())
}
