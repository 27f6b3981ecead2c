//! Reading a file the runtime is *named* (a scripted-responses file, a resume handle, a run
//! record, a CALL target): only a regular file, only up to a size limit — the one bounded
//! reader every part of ais uses, [`ais_core::files`].

pub use ais_core::files::{ReadError, read_regular, read_regular_text};
