//! `dbio innodb rows`: recovered InnoDB pages decoded back into rows (SQL, TSV or JSON Lines)
//! with a table definition from a CREATE TABLE statement or from the data dictionary of an
//! ibdata1 (dropped tables too). The whole command is one library call,
//! `dbio_innodb::rows::job::rows`: this file maps flags to its request, gives it the progress,
//! the output and the signal handling, and shows the summary it returns.

use super::scan::{exit_code, map_guard, KeyFlags, ScanFlags};
use crate::cli::usage;
use crate::output::{to_stderr, Stream};
use crate::progress::Progress;
use dbio_innodb::recover::Source;
use dbio_innodb::rows::dict_def::DictDefError;
use dbio_innodb::rows::frm::FrmError;
use dbio_innodb::rows::job::{self, Definition, Host, JobError, Outcome, Request, Stopped};
use dbio_innodb::rows::run::Deleted;
use dbio_innodb::rows::sdi_def::{FoundSdiError, SdiDefError};
use dbio_innodb::scan::ScanOptions;
use dbio_report::export::{Exporter, Json, Text};
use dbio_schema::rows::RowFormat;
use dbio_schema::Document;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// Arguments of `dbio innodb rows`.
#[derive(clap::Args, Debug)]
pub struct RowsArgs {
    /// A PAGES_DIR written by `innodb pages`, or .ibd files, ibdata files, disk images or
    /// block devices (read-only).
    #[arg(required = true, value_name = "PAGES_DIR|SOURCE")]
    sources: Vec<PathBuf>,
    /// A file with the table's CREATE TABLE statement (SHOW CREATE TABLE output). Without
    /// --table-def, --frm or --dictionary, the .frm beside a source X.ibd (X.frm) is used, else
    /// the definition MySQL 8 tablespaces among the sources carry (their SDI).
    #[arg(long, value_name = "FILE.sql", conflicts_with = "dictionary")]
    table_def: Option<PathBuf>,
    /// The table's .frm file (MySQL 5.x, MariaDB): column types, charsets, NULL-ability, the
    /// primary key and the pre-5.6 DATETIME/TIME/TIMESTAMP formats are read from it.
    #[arg(long, value_name = "FILE.frm", conflicts_with_all = ["table_def", "dictionary", "table"])]
    frm: Option<PathBuf>,
    /// Take the definition from the data dictionary (SYS_TABLES, SYS_COLUMNS, SYS_INDEXES,
    /// SYS_FIELDS) in this system tablespace (ibdata1 of MariaDB or MySQL <= 5.7, or an
    /// image holding its pages); a dropped table is described there until purge processes
    /// the DROP (MariaDB 10.11 then zeroes its dictionary records). Needs --table.
    #[arg(long, value_name = "IBDATA1")]
    dictionary: Option<PathBuf>,
    /// The table: `db/name` in the --dictionary (without it, the error lists the tables), the
    /// CREATE TABLE to use when FILE.sql defines several (`db/name` or `name`), or the table
    /// whose SDI to use when the sources hold several MySQL 8 tablespaces.
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
    keys: KeyFlags,
    #[command(flatten)]
    out: RowsOutput,
}

/// `--format` (a row format) and `-o/--output` of `dbio innodb rows`.
#[derive(clap::Args, Debug)]
struct RowsOutput {
    /// Output format.
    #[arg(long, value_name = "FORMAT", default_value = RowFormat::ALL[0].name(), value_parser = row_format_parser())]
    format: RowFormat,
    /// Write the result to FILE instead of stdout (atomically: a reader never sees half a
    /// file; `-` is stdout).
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
}

impl RowsOutput {
    /// The output file, `None` for stdout (also when `-o -`).
    fn file(&self) -> Option<&Path> {
        self.output.as_deref().filter(|p| *p != Path::new("-"))
    }
}

/// A clap parser of the row formats, listing each with its help line.
fn row_format_parser() -> impl clap::builder::TypedValueParser<Value = RowFormat> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        RowFormat::ALL
            .iter()
            .map(|f| PossibleValue::new(f.name()).help(f.help())),
    )
    .map(|s| s.parse::<RowFormat>().expect("clap checked the name"))
}

/// Runs `dbio innodb rows`.
pub fn rows(a: RowsArgs) -> anyhow::Result<u8> {
    let req = request(&a)?;
    let stop = crate::signals::install();
    let mut host = Terminal {
        output: a.out.file().map(Path::to_path_buf),
        progress: None,
    };
    let done = match job::rows(&req, &mut host, stop) {
        Ok(Outcome::Done(d)) => d,
        Ok(Outcome::Stopped(at)) => {
            to_stderr(match at {
                Stopped::Dictionary => {
                    "dbio: interrupted while reading the dictionary: no row was written\n"
                }
                Stopped::Scan => "dbio: interrupted while scanning: no row was written\n",
            });
            return Ok(crate::signals::EXIT_INTERRUPTED);
        }
        Err(e) => return Err(error(e)),
    };
    let summary = &done.summary;
    for w in &summary.warnings {
        to_stderr(&format!("dbio: warning: {w}\n"));
    }
    to_stderr(&format!("dbio: {}", Text::default().to_string(summary)?));
    let file = a
        .out
        .file()
        .map_or("FILE".into(), |p| p.display().to_string());
    if let Some(load) = done.load_data(&file) {
        to_stderr(&format!("dbio: load it with: {load}\n"));
    }
    if let Some(path) = &a.summary {
        let doc = Json.to_string(&Document::new(dbio_schema::doc::INNODB_ROWS, summary))?;
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

/// The library's request, from the flags.
fn request(a: &RowsArgs) -> anyhow::Result<Request> {
    let table = a.table.clone();
    let definition = match (&a.table_def, &a.dictionary) {
        (Some(path), _) => Definition::CreateTable {
            path: path.clone(),
            table,
        },
        (None, Some(path)) => Definition::Dictionary {
            path: path.clone(),
            table,
        },
        (None, None) => match &a.frm {
            Some(path) => Definition::Frm { path: path.clone() },
            None => match frm_beside(&a.sources)? {
                Some(path) => Definition::Frm { path },
                None => Definition::Sdi { table },
            },
        },
    };
    Ok(Request {
        sources: a.sources.clone(),
        definition,
        old_temporal: a.old_temporal,
        deleted: match (a.include_deleted, a.deleted_only) {
            (true, _) => Deleted::Include,
            (_, true) => Deleted::Only,
            _ => Deleted::Exclude,
        },
        index_id: a.index_id,
        space_id: a.space_id,
        format: a.out.format,
        scan: ScanOptions {
            keys: a.keys.keys()?,
            ..a.scan.options()?
        },
        threads: a.scan.threads(),
        no_mmap: a.scan.no_mmap,
    })
}

/// The .frm beside a source X.ibd, said on stderr; a usage error when there is none.
fn frm_beside(sources: &[PathBuf]) -> anyhow::Result<Option<PathBuf>> {
    match dbio_innodb::rows::frm::beside(sources) {
        Ok(Some(p)) => {
            to_stderr(&format!(
                "dbio: note: table definition from {} (beside the .ibd)\n",
                p.display()
            ));
            Ok(Some(p))
        }
        // No .frm: the SDI of MySQL 8 tablespaces, if the sources have one.
        Ok(None) => Ok(None),
        Err((a, b)) => Err(usage(format!(
            "the sources have different .frm files beside them ({} and {}): decode one table at a time, or give --table-def/--frm",
            a.display(),
            b.display()
        ))),
    }
}

/// The library's errors, named with the flags that gave the values.
fn error(e: JobError<anyhow::Error>) -> anyhow::Error {
    match e {
        JobError::Host(e) => e,
        JobError::Recover(e) => e.into(),
        JobError::DefUnreadable { path, err } => anyhow::anyhow!(
            "cannot read --table-def {}: {err}; give a file holding the CREATE TABLE statement",
            path.display()
        ),
        JobError::Def { path, err } => usage(format!("--table-def {}: {err}", path.display())),
        JobError::Dictionary { path, err } => match err {
            DictDefError::TableNeeded(_) | DictDefError::NoTable(..) => {
                usage(format!("--dictionary {}: --table: {err}", path.display()))
            }
            err => anyhow::anyhow!("--dictionary {}: {err}", path.display()),
        },
        JobError::Sdi(e) => match e {
            FoundSdiError::NoSdi => usage(format!("{e}: MariaDB and MySQL 5.x tablespaces do not carry their definition; give --table-def FILE.sql, --frm FILE.frm (or put X.frm beside X.ibd) or --dictionary IBDATA1")),
            FoundSdiError::Several(_)
            | FoundSdiError::Def {
                err: SdiDefError::TableNeeded(_) | SdiDefError::NotFound(..),
                ..
            } => usage(e.to_string()),
            e @ FoundSdiError::Read { .. } => {
                anyhow::anyhow!("{e}; give the definition with --table-def FILE.sql")
            }
            e => e.into(),
        },
        JobError::Frm { path, err } => match err {
            FrmError::Io(_) => anyhow::anyhow!("--frm {}: {err}", path.display()),
            err => usage(format!("--frm {}: {err}", path.display())),
        },
        JobError::Inputs(err) => anyhow::anyhow!(
            "cannot list the page files of the sources: {err}; check the PAGES_DIR"
        ),
        JobError::NoInputs => anyhow::anyhow!("no .pages or .page files under the given directory: give the --output-dir of `innodb pages`, or .ibd files, images or devices"),
        JobError::Rows(e) => e.into(),
        JobError::OldTemporal(e) => anyhow::anyhow!("{e}. The records fit the DATETIME/TIME/TIMESTAMP formats before MySQL 5.6 (MySQL 5.5 and older, MariaDB with mysql56_temporal_format=OFF): add --old-temporal"),
    }
}

/// What the library asks of the terminal: progress on stderr, the SIGBUS guard of mapped
/// sources, warnings as they come, the output (stdout, or FILE written atomically).
struct Terminal {
    output: Option<PathBuf>,
    progress: Option<Progress>,
}

impl Host for Terminal {
    type Error = anyhow::Error;
    type Guard = Option<crate::signals::MapFaultGuard>;
    type Out = Stream;

    fn scan_begin(&mut self, what: &'static str, total: u64) {
        self.progress = Some(Progress::bytes(what, total));
    }

    fn scan_progress(&self, done: u64, found: u64) {
        if let Some(p) = &self.progress {
            p.set_found(done, found, "pages");
        }
    }

    fn scan_end(&mut self) {
        if let Some(p) = self.progress.take() {
            p.finish();
        }
    }

    fn guard(&self, s: &Source) -> Self::Guard {
        map_guard(s)
    }

    fn warning(&mut self, table: &str, warning: &str) {
        to_stderr(&format!("dbio: warning: {table}: {warning}\n"));
    }

    fn output(&mut self) -> anyhow::Result<Stream> {
        Stream::open(self.output.as_deref())
    }

    fn finish(&mut self, out: Stream) -> anyhow::Result<()> {
        out.finish()
    }
}
