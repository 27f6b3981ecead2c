//! Reading an AGS document: YAML or JSON, through the project's reader stack.

use ais_core::agir::{Data, Limits, ReadError, read_data};
use std::path::Path;

/// A document as read: its data, or why the text could not be read.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The text (without a byte order mark).
    pub text: String,
    /// The data and where each value stood.
    pub data: Option<Data>,
    /// Why the text is not readable YAML/JSON.
    pub error: Option<ReadError>,
}

/// Reads a YAML or JSON text (JSON is YAML 1.2, so one reader serves both and the same
/// document reads to the same data either way).
pub fn load_text(text: &str) -> Loaded {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match read_data(text, &Limits::default()) {
        Ok(data) => Loaded {
            text: text.to_owned(),
            data: Some(data),
            error: None,
        },
        Err(e) => Loaded {
            text: text.to_owned(),
            data: None,
            error: Some(ReadError {
                message: format!("cannot read the AGS document: {}", e.message),
                pos: e.pos,
                help: e.help,
            }),
        },
    }
}

/// Reads the AGS document at `path`.
pub fn load_path(path: &Path) -> Result<(String, Loaded), std::io::Error> {
    let text = crate::read_document(path)?;
    let loaded = load_text(&text);
    Ok((text, loaded))
}
