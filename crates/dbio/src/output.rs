//! Where results go: stdout, or `--output FILE` (written whole to a fresh temporary file, then
//! renamed into place so a reader never sees half a file, see [`dbio_sys::atomic`]).
//! Progress and warnings go to stderr.

use anyhow::Context;
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically (temp file in the same directory, then rename), or to
/// stdout when `path` is `None` or `-`.
pub fn emit(path: Option<&Path>, bytes: &[u8]) -> anyhow::Result<()> {
    match path {
        None => write_stdout(bytes),
        Some(p) if p == Path::new("-") => write_stdout(bytes),
        Some(p) => write_file(p, bytes),
    }
}

fn write_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()?;
    Ok(())
}

/// Writes a whole file atomically: a temporary created O_EXCL|O_NOFOLLOW under an
/// unpredictable name in the same directory, flushed, then renamed into place; on any error the
/// temporary is removed and `path` is left as it was.
pub fn write_file(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    dbio_sys::atomic::write_atomic(path, bytes).with_context(|| {
        format!(
            "{} was not written (nothing was left behind): check that its directory exists, is writable and has free space",
            path.display()
        )
    })
}
