//! `dbio innodb rows`: recovered InnoDB pages decoded back into rows (SQL, TSV or JSON Lines)
//! with a table definition from a CREATE TABLE statement or from the data dictionary of an
//! ibdata1 (dropped tables too). The decoding lives in `dbio_innodb::rows`; this file maps
//! flags to options and writes.

use super::scan::{exit_code, map_guard, ScanFlags};
use crate::cli::usage;
use crate::output::{to_stderr, OutputArgs, Stream};
use crate::progress::Progress;
use dbio_innodb::recover::{self, Scanned, Source};
use dbio_innodb::rows::def::TableDef;
use dbio_innodb::rows::dict_def::{self, DictDefError};
use dbio_innodb::rows::run::{self, Deleted, Options, PageStore};
use dbio_innodb::rows::write::{RowFormat, RowWriter};
use dbio_innodb::rows::{def, temporal};
use dbio_report::export::{Exporter, Format, Json, Render};
use dbio_schema::Document;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// The row formats of `--format`: rows are written by the decoder's [`RowWriter`] as they are
/// decoded, never rendered from a whole result.
pub struct RowData;

impl Render for RowData {
    const FORMATS: &'static [Format] = &[Format::Sql, Format::Tsv, Format::Jsonl];
    fn render(
        &self,
        _: &dbio_report::Exporters,
        format: Format,
        _: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        Err(dbio_report::export::unsupported(format, Self::FORMATS))
    }
}

/// Arguments of `dbio innodb rows`.
#[derive(clap::Args, Debug)]
pub struct RowsArgs {
    /// A PAGES_DIR written by `innodb pages`, or .ibd files, ibdata files, disk images or
    /// block devices (read-only).
    #[arg(required = true, value_name = "PAGES_DIR|SOURCE")]
    sources: Vec<PathBuf>,
    /// A file with the table's CREATE TABLE statement (SHOW CREATE TABLE output).
    #[arg(
        long,
        value_name = "FILE.sql",
        required_unless_present = "dictionary",
        conflicts_with = "dictionary"
    )]
    table_def: Option<PathBuf>,
    /// Take the definition from the data dictionary (SYS_TABLES, SYS_COLUMNS, SYS_INDEXES,
    /// SYS_FIELDS) in this system tablespace (ibdata1 of MariaDB or MySQL <= 5.7, or an
    /// image holding its pages); a dropped table is described there until purge processes
    /// the DROP (MariaDB 10.11 then zeroes its dictionary records). Needs --table.
    #[arg(long, value_name = "IBDATA1")]
    dictionary: Option<PathBuf>,
    /// The table: `db/name` in the --dictionary (without it, the error lists the tables), or
    /// the CREATE TABLE to use when FILE.sql defines several (`db/name` or `name`).
    #[arg(long, value_name = "NAME")]
    table: Option<String>,
    /// Write deleted rows too (delete-marked, or on the page's free list), marked as such
    /// (TSV: a last column dbio_deleted, 1 or 0, that the LOAD DATA printed skips).
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
    out: OutputArgs<RowData>,
}

/// Runs `dbio innodb rows`.
pub fn rows(a: RowsArgs) -> anyhow::Result<u8> {
    let scan = a.scan.options()?;
    let stop = crate::signals::install();
    let (table, dict_index, dict_scan) = match (&a.table_def, &a.dictionary) {
        (Some(path), _) => (
            table_def(path, a.table.as_deref(), a.old_temporal)?,
            None,
            None,
        ),
        (None, Some(path)) => {
            let Some((d, scanned)) = dictionary_def(&a, path, &scan, stop)? else {
                to_stderr("dbio: interrupted while reading the dictionary: no row was written\n");
                return Ok(crate::signals::EXIT_INTERRUPTED);
            };
            for w in &d.warnings {
                to_stderr(&format!("dbio: warning: {}: {w}\n", d.table.name));
            }
            let mut def = d.def;
            temporal::apply(&mut def, &[], a.old_temporal);
            (def, Some((d.index.space, d.index.id)), Some(scanned))
        }
        (None, None) => return Err(usage("give --table-def FILE.sql or --dictionary IBDATA1")),
    };
    let format = match a.out.format {
        Format::Sql => RowFormat::Sql,
        Format::Tsv => RowFormat::Tsv,
        _ => RowFormat::Jsonl,
    };
    let files = run::expand_inputs(&a.sources).map_err(|e| {
        anyhow::anyhow!("cannot list the page files of the sources: {e}; check the PAGES_DIR")
    })?;
    if files.is_empty() {
        anyhow::bail!("no .pages or .page files under the given directory: give the --output-dir of `innodb pages`, or .ibd files, images or devices");
    }
    // The dictionary's file, when it is a source too (tables in ibdata1), is not scanned
    // again: its pages found for the dictionary are used.
    let mut files = files;
    let (mut sources, mut scanned) = match (dict_scan, &a.dictionary) {
        (Some(ds), Some(dp)) if remove_same_file(&mut files, dp) => ds,
        _ => (Vec::new(), Scanned::default()),
    };
    let rest = a.scan.open(&files)?;
    if !rest.is_empty() {
        let progress = Progress::bytes("", rest.iter().map(|s| s.len).sum());
        let cb = |d: u64, f: u64| progress.set_found(d, f, "pages");
        let more = recover::scan_sources(&rest, &scan, a.scan.threads(), stop, &cb, map_guard)?;
        progress.finish();
        let base = sources.len();
        let had_pages = !scanned.found.is_empty();
        scanned.interrupted |= more.interrupted;
        scanned.sources.extend(more.sources);
        scanned.warnings.extend(more.warnings);
        scanned
            .found
            .extend(more.found.into_iter().map(|(i, p)| (base + i, p)));
        if had_pages {
            scanned.warnings.retain(|w| w != recover::NO_PAGES_FOUND);
        }
        sources.extend(rest);
    }
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
        // The dictionary names the clustered index and its tablespace.
        index_id: a.index_id.or(dict_index.map(|d| d.1)),
        space_id: a.space_id.or(dict_index.map(|d| d.0)),
    };
    // TSV of live and deleted rows says which is which in a last column.
    let deleted_column = format == RowFormat::Tsv && opts.deleted == Deleted::Include;
    let mut writer =
        RowWriter::new(Stream::open(a.out.file())?, format, &table).deleted_column(deleted_column);
    // The decoding reads pages with pread (no memory map, no SIGBUS).
    let summary = match run::run_threads(&store, &opts, a.scan.threads(), stop, &mut writer) {
        Err(e @ run::RowsError::NoIndex { .. }) if !a.old_temporal => {
            // The old temporal formats, which the definition may not show: tried, and named
            // when the records fit them.
            let mut old = opts.clone();
            if temporal::apply(&mut old.def, &[], true).is_empty()
                || run::run_threads(
                    &store,
                    &old,
                    a.scan.threads(),
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
            RowWriter::<Vec<u8>>::load_data(&table, &file, deleted_column)
        ));
    }
    if let Some(path) = &a.summary {
        let doc = Json.to_string(&Document::new(dbio_schema::doc::INNODB_ROWS, &summary))?;
        crate::output::write_file(path, doc.as_bytes())?;
    }
    if let Some(m) = &summary.misfit {
        // Most records rejected: the definition is not the table's; the rows that passed
        // are written, but the run failed.
        anyhow::bail!(
            "{m} ({} row(s) that passed every check were written: check them before loading them)",
            summary.rows_written
        );
    }
    Ok(exit_code(
        summary.interrupted || stop.load(Ordering::SeqCst),
    ))
}

/// Sources and the pages found in them.
type ScannedSources = (Vec<Source>, Scanned);

/// Removes `path` from `files` when one of them is the same file (same device and inode);
/// whether it did.
fn remove_same_file(files: &mut Vec<PathBuf>, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let id = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    let Some(want) = id(path) else {
        return false;
    };
    let before = files.len();
    files.retain(|f| id(f) != Some(want));
    files.len() != before
}

/// The definition in a CREATE TABLE file.
fn table_def(path: &Path, table: Option<&str>, old_temporal: bool) -> anyhow::Result<TableDef> {
    let sql = std::fs::read_to_string(path).map_err(|e| {
        anyhow::anyhow!(
            "cannot read --table-def {}: {e}; give a file holding the CREATE TABLE statement",
            path.display()
        )
    })?;
    let name = path.display().to_string();
    let mut def =
        def::parse(&sql, table, &name).map_err(|e| usage(format!("--table-def {name}: {e}")))?;
    temporal::apply(&mut def, &temporal::marked_columns(&sql), old_temporal);
    Ok(def)
}

/// The definition of --table in the data dictionary of `path`: its pages found by the
/// scanner (so an image or a damaged ibdata1 works too); `None` when a signal stopped the
/// scan.
fn dictionary_def(
    a: &RowsArgs,
    path: &Path,
    scan: &dbio_innodb::scan::ScanOptions,
    stop: &std::sync::atomic::AtomicBool,
) -> anyhow::Result<Option<(dict_def::DictDef, ScannedSources)>> {
    let src = a.scan.open(&[path])?;
    let progress = Progress::bytes("dictionary ", src[0].len);
    let cb = |d: u64, f: u64| progress.set_found(d, f, "pages");
    let scanned = recover::scan_sources(&src, scan, a.scan.threads(), stop, &cb, map_guard)?;
    progress.finish();
    if scanned.interrupted {
        return Ok(None);
    }
    let names = [path.display().to_string()];
    let plan = recover::plan(&scanned.found, &names);
    let dict = recover::read_dictionary(&plan, &scanned.found, &src)?;
    let file = path.display().to_string();
    dict_def::table_def(&dict, a.table.as_deref(), &file)
        .map(|d| Some((d, (src, scanned))))
        .map_err(|e| match e {
            DictDefError::TableNeeded(_) | DictDefError::NoTable(..) => {
                usage(format!("--dictionary {file}: --table: {e}"))
            }
            e => anyhow::anyhow!("--dictionary {file}: {e}"),
        })
}
