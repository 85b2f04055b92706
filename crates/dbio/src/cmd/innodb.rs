//! `dbio innodb pages`, `grep`, `rows` and `sdi`: find lost InnoDB data on a raw device, a disk
//! image, ibdata files or .ibd files. Sources are always opened read-only. The flags and
//! helpers every subcommand shares live in `innodb/scan.rs`, each subcommand beside it in
//! `innodb/`.

mod frm;
mod grep;
mod rows;
mod scan;
mod sdi;

use crate::cli::usage;
use crate::output::OutputArgs;
use crate::progress::Progress;
use dbio_innodb::recover::{self, OutDirError};
use dbio_schema::innodb::PagesReport;
use scan::{exit_code, map_guard, KeyFlags, ScanFlags};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Arguments of `dbio innodb`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    cmd: Sub,
}

#[derive(clap::Subcommand, Debug)]
enum Sub {
    /// Find InnoDB pages in devices, images, ibdata or .ibd files and write them out grouped by
    /// (space id, index id), with a manifest tracing every page back to its source offset.
    Pages(Box<PagesArgs>),
    /// Binary grep that understands InnoDB: hex patterns, text and typed values, each hit tied
    /// to its page and record.
    Grep(Box<grep::GrepArgs>),
    /// Decode recovered pages back into rows (SQL INSERTs, TSV or JSON Lines) with the table's
    /// CREATE TABLE statement, the data dictionary of ibdata1 (dropped tables too) or, for
    /// MySQL 8, the definition the tablespace carries (SDI).
    Rows(Box<rows::RowsArgs>),
    /// Print the table definition a MySQL 8 tablespace carries (its SDI): as ibd2sdi does
    /// (JSON), or as a CREATE TABLE statement.
    Sdi(Box<sdi::SdiArgs>),
    /// Print the CREATE TABLE statement of MySQL 5.x / MariaDB .frm files.
    Frm(Box<frm::FrmArgs>),
}

#[derive(clap::Args, Debug)]
struct PagesArgs {
    /// Block devices, disk images, ibdata files or .ibd files (read-only).
    #[arg(required = true)]
    sources: Vec<PathBuf>,
    /// Directory for the recovered pages and manifest.json.
    #[arg(long, value_name = "DIR")]
    output_dir: PathBuf,
    /// Allow DIR on the filesystem or device being scanned (it may overwrite the very data
    /// being recovered).
    #[arg(long)]
    allow_same_device: bool,
    /// Write into a non-empty DIR.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    scan: ScanFlags,
    #[command(flatten)]
    keys: KeyFlags,
    #[command(flatten)]
    out: OutputArgs<PagesReport>,
}

/// Runs `dbio innodb`.
pub fn run(args: Args) -> anyhow::Result<u8> {
    match args.cmd {
        Sub::Pages(a) => pages(*a),
        Sub::Grep(a) => grep::run(*a),
        Sub::Rows(a) => rows::rows(*a),
        Sub::Sdi(a) => sdi::run(*a),
        Sub::Frm(a) => frm::run(*a),
    }
}

fn pages(a: PagesArgs) -> anyhow::Result<u8> {
    let mut opts = a.scan.options()?;
    opts.keys = a.keys.keys()?;
    let sources = a.scan.open(&a.sources)?;
    // A directory an earlier run wrote (its manifest.json) is continued: the pages it lists
    // are kept, the rest written.
    let prev = recover::prepare_out_dir(&sources, &a.output_dir, a.allow_same_device, a.force)
        .map_err(|e| match e {
            OutDirError::Overlap { .. } | OutDirError::NotEmpty { .. } => usage(e.to_string()),
            e => e.into(),
        })?;
    // The report is written after the scan: where it goes is checked now (after the output
    // directory was made: -o may name a file beside it, in a directory made with it).
    a.out.check()?;
    // Ctrl-C/SIGTERM: stop the scan, or finish the page being written and stop; the manifest
    // then lists what was written, marked interrupted. A second signal kills.
    let stop = crate::signals::install();
    let start = Instant::now();
    let progress = Progress::bytes("", sources.iter().map(|s| s.len).sum());
    let cb = |d: u64, f: u64| progress.set_found(d, f, "pages");
    let threads = a.scan.threads();
    let scanned = recover::scan_sources(&sources, &opts, threads, stop, &cb, map_guard)?;
    progress.finish();
    let elapsed = start.elapsed().as_secs_f64();
    let stopped = || stop.load(Ordering::SeqCst);
    let report = recover::recover(
        scanned,
        &sources,
        &a.output_dir,
        a.force,
        prev.as_ref(),
        elapsed,
        &stopped,
    )?;
    for w in &report.warnings {
        crate::output::to_stderr(&format!("dbio: warning: {w}\n"));
    }
    a.out.emit_result(&report)?;
    if let Some(e) = &report.write_error {
        anyhow::bail!(
            "writing to --output-dir {} stopped: {e}. {} pages are there, each whole and listed in manifest.json (no part of a page is left). Once the cause is fixed (free space there, or move the directory to a filesystem with room), run the same command again: it keeps those pages and writes the rest",
            a.output_dir.display(),
            report.pages_written
        );
    }
    Ok(exit_code(report.interrupted))
}
