//! Where results go: stdout, or `--output FILE` (written whole to a fresh temporary file, then
//! renamed into place so a reader never sees half a file, see [`dbio_sys::atomic`]).
//! Progress and warnings go to stderr.

use anyhow::Context;
use dbio_report::export::{Exporters, Format, Render};
use dbio_sys::atomic::AtomicFile;
use std::io::Write;
use std::path::{Path, PathBuf};

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

/// Bytes [`check_output`] writes into its probe: a filesystem with less than this free is
/// taken as full (a result with interval histograms is tens to hundreds of KiB).
pub const PROBE_BYTES: usize = 64 * 1024;

/// Checks, before a command runs for long, that its result can be written to `path` (`-o
/// FILE`), so a benchmark never runs to its end to lose its result: creates a temporary in
/// FILE's directory as the real write will (O_CREAT|O_EXCL|O_NOFOLLOW, an unpredictable name),
/// writes [`PROBE_BYTES`] into it, flushes it to disk and removes it. A missing or read-only
/// directory, a full filesystem, or a FILE that is a directory is an error (exit 1, as for
/// any path that does not exist) that names the path. `None` or `-` (stdout) is always fine. FILE itself is not touched.
pub fn check_output(path: Option<&Path>) -> anyhow::Result<()> {
    check_output_under(path, None)
}

/// [`check_output`] for a command that creates directory `made` (with its missing parents)
/// before it writes FILE: when FILE's directory is `made` or inside it and does not exist yet,
/// the probe goes in the nearest directory above it that exists, where it will be created
/// (`dbio sweep --output-dir new -o new/table.txt`).
pub fn check_output_under(path: Option<&Path>, made: Option<&Path>) -> anyhow::Result<()> {
    let Some(path) = path.filter(|p| *p != Path::new("-")) else {
        return Ok(());
    };
    let fail = |why: String| {
        anyhow::anyhow!(
            "--output {}: {why}: check that its directory exists, is writable and has free \
             space, or give another --output (checked before anything ran: nothing was run)",
            path.display()
        )
    };
    if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(fail("it is a directory: give a file name in it".into()));
    }
    // A device, a FIFO or a socket (`-o /dev/null`, `-o >(gzip > f)`) is written into, not
    // replaced: nothing to probe (opening a FIFO here would block until its reader opens it).
    {
        use std::os::unix::fs::FileTypeExt;
        if let Ok(m) = std::fs::metadata(path) {
            let t = m.file_type();
            if t.is_block_device() {
                return Err(fail(
                    "it is a block device: dbio does not write a result onto a disk (give a file name)".into(),
                ));
            }
            if t.is_char_device() || t.is_fifo() || t.is_socket() {
                return Ok(());
            }
        }
    }
    // Where the probe goes: FILE's directory, or the directory that will hold it.
    let mut at = path.to_path_buf();
    if let (Some(made), Some(name)) = (made, path.file_name()) {
        let mut dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
        if dir.starts_with(made) {
            while !dir.as_os_str().is_empty() && !dir.exists() {
                dir.pop();
            }
            at = dir.join(name);
        }
    }
    let mut probe = AtomicFile::create(&at).map_err(|e| fail(format!("{e}: {}", e.source)))?;
    probe
        .write_all(&[0u8; PROBE_BYTES])
        .and_then(|()| probe.sync())
        .map_err(|e| {
            fail(format!(
                "writing {PROBE_BYTES} bytes into a temporary file beside it failed: {e}"
            ))
        })?;
    // Dropped uncommitted: the temporary is removed.
    Ok(())
}

/// Output written as it is produced (innodb grep's hits): stdout, or `--output FILE` streamed
/// into an [`AtomicFile`] (a temporary created O_EXCL|O_NOFOLLOW under an unpredictable name)
/// and renamed into place by [`Stream::finish`]; dropped unfinished, the temporary is removed.
pub struct Stream {
    w: std::io::BufWriter<Sink>,
}

enum Sink {
    Stdout(std::io::Stdout),
    File(AtomicFile),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Stdout(o) => o.write(buf),
            Sink::File(f) => f.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Stdout(o) => o.flush(),
            Sink::File(f) => f.flush(),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.w.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.w.flush()
    }
}

impl Stream {
    /// Opens stdout (`None` or `-`) or a temporary for `path`, after [`check_output`].
    pub fn open(path: Option<&Path>) -> anyhow::Result<Stream> {
        check_output(path)?;
        let sink = match path.filter(|p| *p != Path::new("-")) {
            None => Sink::Stdout(std::io::stdout()),
            Some(path) => Sink::File(AtomicFile::create(path).with_context(|| {
                format!(
                    "--output {}: check that the directory exists and is writable",
                    path.display()
                )
            })?),
        };
        Ok(Stream {
            w: std::io::BufWriter::with_capacity(1 << 16, sink),
        })
    }

    /// Flushes; renames a file into place.
    pub fn finish(self) -> anyhow::Result<()> {
        let name = match self.w.get_ref() {
            Sink::Stdout(_) => "stdout".to_string(),
            Sink::File(f) => f.path().display().to_string(),
        };
        let sink = self
            .w
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(|| format!("cannot write {name}"))?;
        if let Sink::File(f) = sink {
            f.commit()
                .with_context(|| format!("cannot move the output into place as {name}"))?;
        }
        Ok(())
    }
}

/// Where human-readable lines go: stdout for text output, stderr when stdout carries JSON/CSV.
pub struct Console {
    /// stdout (text output) or stderr (stdout carries JSON/CSV).
    pub to_stdout: bool,
}

impl Console {
    /// Writes a line. A failed write to stdout is an error (a closed stdout ends the run);
    /// one to stderr is not (see [`to_stderr`]).
    pub fn line(&self, s: &str) -> anyhow::Result<()> {
        if self.to_stdout {
            let mut o = std::io::stdout().lock();
            o.write_all(s.as_bytes())?;
            o.flush()?;
        } else {
            to_stderr(s);
        }
        Ok(())
    }
}

/// Writes progress, warnings or a summary to stderr. A write error there (a reader of `2>&1`
/// that went away) never stops the run nor loses the result on stdout: it is ignored, where
/// `eprint!` would panic.
pub fn to_stderr(s: &str) {
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(s.as_bytes()).and_then(|()| e.flush());
}

/// A clap parser that accepts the formats result `R` renders in, listing each with its help line.
pub fn format_parser<R: Render>() -> impl clap::builder::TypedValueParser<Value = Format> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        R::FORMATS
            .iter()
            .map(|f| PossibleValue::new(f.name()).help(f.help())),
    )
    .map(|s| s.parse::<Format>().expect("clap checked the name"))
}

/// The one `--format`/`-o/--output` group every command flattens into its arguments: the
/// result in the chosen format goes to stdout, or to FILE instead (written atomically; `-` is
/// stdout). Never both: a command that shows live lines shows them on stderr when the result
/// goes to a file or is for machines.
///
/// `R` is the command's result: the formats offered are those it renders in
/// ([`Render::FORMATS`], the first the default).
#[derive(clap::Args)]
pub struct OutputArgs<R: Render + 'static> {
    /// Output format.
    #[arg(long, value_name = "FORMAT", default_value = R::FORMATS[0].name(), value_parser = format_parser::<R>())]
    pub format: Format,
    /// Write the result to FILE instead of stdout (atomically: a reader never sees half a
    /// file; `-` is stdout).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[arg(skip)]
    _result: std::marker::PhantomData<fn() -> R>,
}

impl<R: Render> Clone for OutputArgs<R> {
    fn clone(&self) -> Self {
        OutputArgs {
            format: self.format,
            output: self.output.clone(),
            _result: std::marker::PhantomData,
        }
    }
}

impl<R: Render> std::fmt::Debug for OutputArgs<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputArgs")
            .field("format", &self.format)
            .field("output", &self.output)
            .finish()
    }
}

impl<R: Render> OutputArgs<R> {
    /// The output file, `None` for stdout (also when `-o -`).
    pub fn file(&self) -> Option<&Path> {
        self.output.as_deref().filter(|p| *p != Path::new("-"))
    }

    /// Whether the result goes to stdout.
    pub fn to_stdout(&self) -> bool {
        self.file().is_none()
    }

    /// Whether human-readable lines (live intervals, notes) may go to stdout: the result goes
    /// there and is for people.
    pub fn people_on_stdout(&self) -> bool {
        self.to_stdout() && !self.format.is_machine()
    }

    /// [`check_output`] of FILE: call it before a long run.
    pub fn check(&self) -> anyhow::Result<()> {
        check_output(self.file())
    }

    /// [`check_output_under`] of FILE, for a command that creates directory `made` first.
    pub fn check_under(&self, made: &Path) -> anyhow::Result<()> {
        check_output_under(self.file(), Some(made))
    }

    /// Writes the whole result: to FILE atomically, else to stdout.
    pub fn emit(&self, bytes: &[u8]) -> anyhow::Result<()> {
        emit(self.file(), bytes)
    }

    /// The result in the chosen format, rendered by the default exporters.
    pub fn render(&self, r: &R) -> anyhow::Result<Vec<u8>> {
        self.render_with(&Exporters::default(), r)
    }

    /// The result in the chosen format, rendered by `with` (exporters with options).
    pub fn render_with(&self, with: &Exporters, r: &R) -> anyhow::Result<Vec<u8>> {
        let mut buf = Vec::new();
        r.render(with, self.format, &mut buf)
            .with_context(|| format!("cannot render the result as {}", self.format))?;
        Ok(buf)
    }

    /// Renders the result in the chosen format and writes it: to FILE atomically, else to
    /// stdout.
    pub fn emit_result(&self, r: &R) -> anyhow::Result<()> {
        self.emit(&self.render(r)?)
    }
}
