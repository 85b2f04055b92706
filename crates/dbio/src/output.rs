//! Where results go: stdout, or `--output FILE` (written whole, then renamed into place so a
//! reader never sees half a file). Progress and warnings go to stderr.

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

/// Writes a whole file atomically.
pub fn write_file(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("output path {} has no file name", path.display()))?;
    let tmp = dir.join(format!(".{}.dbio-tmp", name.to_string_lossy()));
    std::fs::write(&tmp, bytes).with_context(|| {
        format!(
            "cannot write output file {}: check that the directory exists and is writable",
            path.display()
        )
    })?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot move {} into place as {}", tmp.display(), path.display()))?;
    Ok(())
}
