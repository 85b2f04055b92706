//! Reading result documents back (`dbio report`, `dbio model`): JSON parsed as it is read, and
//! an error that names the field at fault as a path (`spec.time_s: ...`,
//! `intervals[3].end_s: ...`) besides serde_json's line and column.

use serde::de::DeserializeOwned;
use std::path::Path;

/// A document that does not parse: [`std::fmt::Display`] gives `path: what`.
pub type Error = serde_path_to_error::Error<serde_json::Error>;

/// Why a file could not be read as a document.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The file could not be opened or read.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The document does not parse (the field at fault named).
    #[error(transparent)]
    Json(#[from] Error),
}

/// Parses one JSON document from the file at `path` as it is read (a buffered reader: the file
/// is never held whole in memory beside the result). The fast path tracks no field; when the
/// document does not parse, the file is read again with the field tracked, to name it.
pub fn json_file<T: DeserializeOwned>(path: &Path) -> Result<T, FileError> {
    let open = || std::fs::File::open(path).map(|f| std::io::BufReader::with_capacity(1 << 20, f));
    let first = match serde_json::from_reader(open()?) {
        Ok(v) => return Ok(v),
        Err(e) if e.is_io() => return Err(FileError::Io(e.into())),
        Err(e) => e,
    };
    match json::<T>(open()?) {
        Err(e) if !e.inner().is_io() => Err(FileError::Json(e)),
        // The file changed between the two reads: the first error, without a field.
        _ => Err(FileError::Json(serde_path_to_error::Error::new(
            serde_path_to_error::Track::new().path(),
            first,
        ))),
    }
}

/// Parses one JSON document from `reader`, naming the field at fault.
pub fn json<T: DeserializeOwned>(reader: impl std::io::Read) -> Result<T, Error> {
    let mut de = serde_json::Deserializer::from_reader(reader);
    let v = serde_path_to_error::deserialize(&mut de)?;
    // Trailing characters after the document: serde_json::from_reader refuses them too.
    de.end().map_err(|e| {
        serde_path_to_error::Error::new(serde_path_to_error::Track::new().path(), e)
    })?;
    Ok(v)
}

/// Converts an already parsed JSON value, naming the field at fault.
pub fn value<T: DeserializeOwned>(v: serde_json::Value) -> Result<T, Error> {
    serde_path_to_error::deserialize(v)
}
