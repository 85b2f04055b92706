//! `dbio innodb rows`: recovered InnoDB pages decoded back into rows (SQL, TSV or JSON Lines)
//! with a table definition from a CREATE TABLE statement. The decoding lives in
//! `dbio_innodb::rows`; this file maps flags to options and writes.

use super::{exit_code, map_guard, ScanFlags};
use crate::cli::usage;
use crate::output::{to_stderr, OutputArgs, Stream};
use crate::progress::Progress;
use dbio_innodb::recover;
use dbio_innodb::rows::run::{self, Deleted, Options, PageStore};
use dbio_innodb::rows::write::{RowFormat, RowWriter};
use dbio_innodb::rows::{def, temporal};
use dbio_report::export::{Exporter, Format, JsonExporter};
use dbio_report::Document;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

crate::formats!(RowsFormats: Sql, Tsv, Jsonl);

/// Arguments of `dbio innodb rows`.
#[derive(clap::Args, Debug)]
pub struct RowsArgs {
    /// A PAGES_DIR written by `innodb pages`, or .ibd files, ibdata files, disk images or
    /// block devices (read-only).
    #[arg(required = true, value_name = "PAGES_DIR|SOURCE")]
    sources: Vec<PathBuf>,
    /// A file with the table's CREATE TABLE statement (SHOW CREATE TABLE output).
    #[arg(long, value_name = "FILE.sql", required = true)]
    table_def: PathBuf,
    /// The table to decode when FILE.sql defines several (`db/name` or `name`).
    #[arg(long, value_name = "NAME")]
    table: Option<String>,
    /// Write deleted rows too (delete-marked, or on the page's free list), marked as such.
    #[arg(long, conflicts_with = "deleted_only")]
    include_deleted: bool,
    /// Write only deleted rows (to undo a DELETE).
    #[arg(long)]
    deleted_only: bool,
    /// DATETIME, TIME and TIMESTAMP columns are in the format before MySQL 5.6 (tables of
    /// MySQL 5.5 and older, or of MariaDB with mysql56_temporal_format=OFF). Without it only
    /// the columns whose type carries MariaDB's `/* mariadb-5.3 */` comment are.
    #[arg(long)]
    old_temporal: bool,
    /// Decode this index id (default: the index whose records fit the definition best).
    #[arg(long, value_name = "ID")]
    index_id: Option<u64>,
    /// Decode only pages of this tablespace id.
    #[arg(long, value_name = "ID")]
    space_id: Option<u32>,
    /// Also write the summary as a JSON document (schema dbio.innodb.rows/1) to FILE.
    #[arg(long, value_name = "FILE")]
    summary: Option<PathBuf>,
    #[command(flatten)]
    scan: ScanFlags,
    #[command(flatten)]
    out: OutputArgs<RowsFormats>,
}

/// Runs `dbio innodb rows`.
pub fn rows(a: RowsArgs) -> anyhow::Result<u8> {
    let sql = std::fs::read_to_string(&a.table_def).map_err(|e| {
        anyhow::anyhow!(
            "cannot read --table-def {}: {e}; give a file holding the CREATE TABLE statement",
            a.table_def.display()
        )
    })?;
    let name = a.table_def.display().to_string();
    let mut table = def::parse(&sql, a.table.as_deref(), &name)
        .map_err(|e| usage(format!("--table-def {name}: {e}")))?;
    temporal::apply(&mut table, &temporal::marked_columns(&sql), a.old_temporal);
    let format = match a.out.format {
        Format::Sql => RowFormat::Sql,
        Format::Tsv => RowFormat::Tsv,
        _ => RowFormat::Jsonl,
    };
    let scan = a.scan.options()?;
    let files = run::expand_inputs(&a.sources).map_err(|e| {
        anyhow::anyhow!("cannot list the page files of the sources: {e}; check the PAGES_DIR")
    })?;
    if files.is_empty() {
        anyhow::bail!("no .pages or .page files under the given directory: give the --output-dir of `innodb pages`, or .ibd files, images or devices");
    }
    let sources = a.scan.open(&files)?;
    let stop = crate::signals::install();
    let progress = Progress::bytes("", sources.iter().map(|s| s.len).sum());
    let cb = |d: u64, f: u64| progress.set_found(d, f, "pages");
    let scanned = recover::scan_sources(&sources, &scan, a.scan.threads(), stop, &cb, map_guard)?;
    progress.finish();
    if scanned.interrupted {
        to_stderr("dbio: interrupted while scanning: no row was written\n");
        return Ok(crate::signals::EXIT_INTERRUPTED);
    }
    let store = PageStore::new(&scanned, &sources);
    let opts = Options {
        def: table.clone(),
        deleted: match (a.include_deleted, a.deleted_only) {
            (true, _) => Deleted::Include,
            (_, true) => Deleted::Only,
            _ => Deleted::Exclude,
        },
        index_id: a.index_id,
        space_id: a.space_id,
    };
    let mut writer = RowWriter::new(Stream::open(a.out.file())?, format, &table);
    // The decoding reads pages with pread (no memory map, no SIGBUS).
    let summary = match run::run(&store, &opts, stop, &mut writer) {
        Err(e @ run::RowsError::NoIndex { .. }) if !a.old_temporal => {
            // The old temporal formats, which the definition may not show: tried, and named
            // when the records fit them.
            let mut old = opts.clone();
            if temporal::apply(&mut old.def, &[], true).is_empty()
                || run::run(
                    &store,
                    &old,
                    stop,
                    &mut RowWriter::new(std::io::sink(), format, &old.def),
                )
                .is_err()
            {
                return Err(e.into());
            }
            anyhow::bail!("{e}. The records fit the DATETIME/TIME/TIMESTAMP formats before MySQL 5.6 (MySQL 5.5 and older, MariaDB with mysql56_temporal_format=OFF): add --old-temporal");
        }
        r => r?,
    };
    writer.into_inner().finish()?;
    for w in &summary.warnings {
        to_stderr(&format!("dbio: warning: {w}\n"));
    }
    to_stderr(&format!("dbio: {}", run::summary_text(&summary)));
    if format == RowFormat::Tsv {
        let file = a
            .out
            .file()
            .map_or("FILE".into(), |p| p.display().to_string());
        to_stderr(&format!(
            "dbio: load it with: {}\n",
            RowWriter::<Vec<u8>>::load_data(&table, &file)
        ));
    }
    if let Some(path) = &a.summary {
        let doc =
            JsonExporter.to_string(&Document::new(dbio_report::doc::INNODB_ROWS, &summary))?;
        crate::output::write_file(path, doc.as_bytes())?;
    }
    Ok(exit_code(
        summary.interrupted || stop.load(Ordering::SeqCst),
    ))
}
