//! `innodb rows` in one call: a [`Request`] (the sources, where the definition comes from,
//! the options) in; the definition read, the sources scanned, the rows decoded and written to
//! the output the [`Host`] opens; the summary out. The host is what only the caller can do:
//! show progress, guard memory-mapped reads, show warnings as they come, open and commit the
//! output.

use super::def::{self, DefError, TableDef};
use super::dict_def::{self, DictDef, DictDefError};
use super::frm::{self, FrmError};
use super::inputs::expand_inputs;
use super::run::{self, Deleted, Options, PageStore, RowsError};
use super::sdi_def::{self, FoundSdiError};
use super::temporal;
use super::write::RowWriter;
use crate::recover::{self, RecoverError, Scanned, Source};
use crate::scan::ScanOptions;
use dbio_schema::rows::{RowFormat, RowsSummary};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Where the table definition comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Definition {
    /// A file holding CREATE TABLE statements (SHOW CREATE TABLE output); `table` chooses one
    /// when it holds several (`db/name` or `name`).
    CreateTable {
        /// The file.
        path: PathBuf,
        /// The table.
        table: Option<String>,
    },
    /// The data dictionary of this system tablespace (ibdata1, or an image holding its
    /// pages); `table` is `db/name` (without it, the error lists the tables).
    Dictionary {
        /// The system tablespace.
        path: PathBuf,
        /// The table.
        table: Option<String>,
    },
    /// The SDI of MySQL 8 tablespaces among the sources (an .ibd, an image, a PAGES_DIR
    /// holding its SDI pages): the table's definition, its clustered index and tablespace.
    /// `table` (`db/name` or `name`) chooses one when the sources describe several.
    Sdi {
        /// The table.
        table: Option<String>,
    },
    /// A MySQL 5.x / MariaDB `.frm` file (the table's binary definition).
    Frm {
        /// The file.
        path: PathBuf,
    },
}

/// What `innodb rows` is asked to do.
#[derive(Clone, Debug)]
pub struct Request {
    /// A PAGES_DIR written by `innodb pages`, or .ibd files, ibdata files, images, devices.
    pub sources: Vec<PathBuf>,
    /// Where the definition comes from.
    pub definition: Definition,
    /// Every DATETIME/TIME/TIMESTAMP column is in the format before MySQL 5.6 (without it,
    /// only the columns the statement marks so are; the others are tried when no index fits).
    pub old_temporal: bool,
    /// Which records become rows.
    pub deleted: Deleted,
    /// Decode this index id (default: the index whose records fit best; the dictionary's).
    pub index_id: Option<u64>,
    /// Decode only pages of this tablespace id (default: all; the dictionary's).
    pub space_id: Option<u32>,
    /// The format of the rows.
    pub format: RowFormat,
    /// How the sources are scanned for pages.
    pub scan: ScanOptions,
    /// Threads that scan and decode.
    pub threads: usize,
    /// Read regular files with pread instead of a memory map.
    pub no_mmap: bool,
}

/// What only the caller can do, asked for by [`rows`] when it is needed.
pub trait Host: Sync {
    /// What the caller's own operations fail with.
    type Error;
    /// What [`Host::guard`] returns: alive while a source is scanned.
    type Guard;
    /// Where the rows go.
    type Out: Write;
    /// A scan of `total` bytes begins (`what`: `"dictionary "` for the dictionary's, `""`
    /// for the sources').
    fn scan_begin(&mut self, what: &'static str, total: u64);
    /// `done` bytes of the scan read, `found` pages found.
    fn scan_progress(&self, done: u64, found: u64);
    /// The scan ended.
    fn scan_end(&mut self);
    /// Held while source `s` is scanned (a memory-mapped source's read faults named).
    fn guard(&self, s: &Source) -> Self::Guard;
    /// Something the dictionary could not tell about a column of `table`, as soon as known.
    fn warning(&mut self, table: &str, warning: &str);
    /// Opens the output, once the definition is read and the sources scanned.
    fn output(&mut self) -> Result<Self::Out, Self::Error>;
    /// Commits the output after the last row (not called when the run fails before).
    fn finish(&mut self, out: Self::Out) -> Result<(), Self::Error>;
}

/// Why [`rows`] failed.
#[derive(Debug, thiserror::Error)]
pub enum JobError<E> {
    /// The host failed (opening or committing the output).
    #[error("{0}")]
    Host(E),
    /// Opening, scanning or reading the sources failed.
    #[error(transparent)]
    Recover(#[from] RecoverError),
    /// The CREATE TABLE file could not be read.
    #[error("cannot read {}: {err}", path.display())]
    DefUnreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        err: std::io::Error,
    },
    /// The CREATE TABLE file holds no definition dbio decodes.
    #[error("{}: {err}", path.display())]
    Def {
        /// The file.
        path: PathBuf,
        /// Why.
        err: DefError,
    },
    /// The dictionary does not describe the table (or no table was named).
    #[error("{}: {err}", path.display())]
    Dictionary {
        /// The system tablespace.
        path: PathBuf,
        /// Why.
        err: DictDefError,
    },
    /// The sources' SDI gives no definition.
    #[error(transparent)]
    Sdi(FoundSdiError),
    /// The `.frm` file cannot be read or used.
    #[error("{}: {err}", path.display())]
    Frm {
        /// The file.
        path: PathBuf,
        /// Why.
        err: FrmError,
    },
    /// A directory of the sources could not be listed.
    #[error("cannot list the page files of the sources: {0}")]
    Inputs(std::io::Error),
    /// The sources hold no file to read (an empty PAGES_DIR).
    #[error("no .pages or .page files under the given directory")]
    NoInputs,
    /// Decoding failed (no index fits the definition, or writing a row failed).
    #[error(transparent)]
    Rows(RowsError),
    /// No index fits the definition, but the records fit it with the DATETIME/TIME/TIMESTAMP
    /// formats before MySQL 5.6.
    #[error("{0}")]
    OldTemporal(RowsError),
}

/// Which scan a signal stopped (no row was written).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// The scan of the dictionary.
    Dictionary,
    /// The scan of the sources.
    Scan,
}

/// A run of [`rows`] that wrote rows.
#[derive(Clone, Debug)]
pub struct Done {
    /// What was read, written, rejected and dropped.
    pub summary: RowsSummary,
    /// The definition the rows were decoded with.
    pub def: TableDef,
    /// The format they were written in.
    pub format: RowFormat,
    /// TSV with a last column `dbio_deleted` (live and deleted rows were written).
    pub deleted_column: bool,
}

impl Done {
    /// For TSV, the statements that load the rows from `file` back.
    pub fn load_data(&self, file: &str) -> Option<String> {
        (self.format == RowFormat::Tsv)
            .then(|| RowWriter::<Vec<u8>>::load_data(&self.def, file, self.deleted_column))
    }
}

/// What [`rows`] did.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Rows were written (the summary says whether a signal stopped the decoding early).
    Done(Box<Done>),
    /// A signal stopped a scan: no row was written, the output not opened.
    Stopped(Stopped),
}

/// Runs `innodb rows`: reads the definition, scans the sources (the dictionary's file, when
/// it is a source too, is not scanned twice), decodes the rows of the index that fits and
/// writes them to the host's output. Once `stop` is set, no further page is read.
pub fn rows<H: Host>(
    req: &Request,
    host: &mut H,
    stop: &AtomicBool,
) -> Result<Outcome, JobError<H::Error>> {
    let (def, dict) = match &req.definition {
        Definition::CreateTable { path, table } => (
            Some(create_table(path, table.as_deref(), req.old_temporal)?),
            None,
        ),
        // Read from the sources once they are scanned.
        Definition::Sdi { .. } => (None, None),
        Definition::Frm { path } => (Some(frm_def(path, req.old_temporal)?), None),
        Definition::Dictionary { path, table } => {
            let Some((d, scanned)) = dictionary(req, host, path, table.as_deref(), stop)? else {
                return Ok(Outcome::Stopped(Stopped::Dictionary));
            };
            for w in &d.warnings {
                host.warning(&d.table.name, w);
            }
            let mut def = d.def;
            temporal::apply(&mut def, &[], req.old_temporal);
            (
                Some(def),
                Some(((d.index.space, d.index.id), path, scanned)),
            )
        }
    };
    let mut files = expand_inputs(&req.sources).map_err(JobError::Inputs)?;
    if files.is_empty() {
        return Err(JobError::NoInputs);
    }
    // The dictionary's file, when it is a source too (tables in ibdata1), is not scanned
    // again: its pages found for the dictionary are used.
    let mut dict_index = dict.as_ref().map(|d| d.0);
    let (mut sources, mut scanned) = match dict {
        Some((_, path, ds)) if remove_same_file(&mut files, path) => ds,
        _ => (Vec::new(), Scanned::default()),
    };
    let rest = open(&files, req.no_mmap)?;
    if !rest.is_empty() {
        host.scan_begin("", rest.iter().map(|s| s.len).sum());
        let more = scan(req, host, &rest, stop);
        host.scan_end();
        merge(&mut scanned, more?, sources.len());
        sources.extend(rest);
    }
    if scanned.interrupted {
        return Ok(Outcome::Stopped(Stopped::Scan));
    }
    let def = match (def, &req.definition) {
        (Some(def), _) => def,
        (None, Definition::Sdi { table }) => {
            let d = sdi_def::from_found(&scanned.found, &sources, req.space_id, table.as_deref())
                .map_err(JobError::Sdi)?;
            // The SDI names the clustered index and its tablespace, like the dictionary.
            dict_index = Some((d.space_id, d.index_id));
            let mut def = d.def;
            temporal::apply(&mut def, &[], req.old_temporal);
            def
        }
        (None, _) => unreachable!("only the SDI's definition is read after the scan"),
    };
    let store = PageStore::new(&scanned, &sources);
    let opts = Options {
        def: def.clone(),
        deleted: req.deleted,
        // The dictionary names the clustered index and its tablespace.
        index_id: req.index_id.or(dict_index.map(|d| d.1)),
        space_id: req.space_id.or(dict_index.map(|d| d.0)),
    };
    decode(req, host, &store, opts, stop)
}

/// Decodes the rows of `opts.def` from `store` into the host's output, and commits it.
fn decode<H: Host>(
    req: &Request,
    host: &mut H,
    store: &PageStore,
    opts: Options,
    stop: &AtomicBool,
) -> Result<Outcome, JobError<H::Error>> {
    // TSV of live and deleted rows says which is which in a last column.
    let deleted_column = req.format == RowFormat::Tsv && opts.deleted == Deleted::Include;
    let out = host.output().map_err(JobError::Host)?;
    let mut writer = RowWriter::new(out, req.format, &opts.def).deleted_column(deleted_column);
    // The decoding reads pages with pread (no memory map, no SIGBUS).
    let summary = match run::run_threads(store, &opts, req.threads, stop, &mut writer) {
        Err(e @ RowsError::NoIndex { .. }) if !req.old_temporal => {
            // The old temporal formats, which the definition may not show: tried, and named
            // when the records fit them.
            let mut old = opts.clone();
            if temporal::apply(&mut old.def, &[], true).is_empty()
                || run::run_threads(
                    store,
                    &old,
                    req.threads,
                    stop,
                    &mut RowWriter::new(std::io::sink(), req.format, &old.def),
                )
                .is_err()
            {
                return Err(JobError::Rows(e));
            }
            return Err(JobError::OldTemporal(e));
        }
        r => r.map_err(JobError::Rows)?,
    };
    host.finish(writer.into_inner()).map_err(JobError::Host)?;
    Ok(Outcome::Done(Box::new(Done {
        summary,
        def: opts.def,
        format: req.format,
        deleted_column,
    })))
}

/// Sources and the pages found in them.
type ScannedSources = (Vec<Source>, Scanned);

/// Opens `paths` read-only.
fn open(paths: &[PathBuf], no_mmap: bool) -> Result<Vec<Source>, RecoverError> {
    paths.iter().map(|p| Source::open(p, no_mmap)).collect()
}

/// Scans `sources` with the host's progress and guard.
fn scan<H: Host>(
    req: &Request,
    host: &H,
    sources: &[Source],
    stop: &AtomicBool,
) -> Result<Scanned, RecoverError> {
    let cb = |d: u64, f: u64| host.scan_progress(d, f);
    recover::scan_sources(sources, &req.scan, req.threads, stop, &cb, |s| {
        host.guard(s)
    })
}

/// Adds the pages `more` found in the sources after the first `base` ones to `scanned`.
fn merge(scanned: &mut Scanned, more: Scanned, base: usize) {
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
}

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

/// The definition in a CREATE TABLE file, with the old temporal formats the statement marks
/// (or every temporal column, with `old_temporal`).
fn create_table<E>(
    path: &Path,
    table: Option<&str>,
    old_temporal: bool,
) -> Result<TableDef, JobError<E>> {
    let sql = std::fs::read_to_string(path).map_err(|err| JobError::DefUnreadable {
        path: path.to_path_buf(),
        err,
    })?;
    let name = path.display().to_string();
    let mut def = def::parse(&sql, table, &name).map_err(|err| JobError::Def {
        path: path.to_path_buf(),
        err,
    })?;
    temporal::apply(&mut def, &temporal::marked_columns(&sql), old_temporal);
    Ok(def)
}

/// The definition in a `.frm` file (an InnoDB table's), its old temporal columns switched
/// (every temporal column, with `old_temporal`).
fn frm_def<E>(path: &Path, old_temporal: bool) -> Result<TableDef, JobError<E>> {
    let err = |err| JobError::Frm {
        path: path.to_path_buf(),
        err,
    };
    let f = frm::read(path).map_err(err)?;
    if !f.is_innodb() {
        return Err(err(FrmError::NotInnodb(f.engine)));
    }
    let mut def = f.def;
    temporal::apply(&mut def, &[], old_temporal);
    Ok(def)
}

/// The definition of `table` in the data dictionary of `path`: its pages found by the
/// scanner (so an image or a damaged ibdata1 works too); `None` when a signal stopped the
/// scan.
fn dictionary<H: Host>(
    req: &Request,
    host: &mut H,
    path: &Path,
    table: Option<&str>,
    stop: &AtomicBool,
) -> Result<Option<(DictDef, ScannedSources)>, JobError<H::Error>> {
    let src = open(&[path.to_path_buf()], req.no_mmap)?;
    host.scan_begin("dictionary ", src[0].len);
    let scanned = scan(req, host, &src, stop);
    host.scan_end();
    let scanned = scanned?;
    if scanned.interrupted {
        return Ok(None);
    }
    let names = [path.display().to_string()];
    let plan = recover::plan(&scanned.found, &names);
    let dict = recover::read_dictionary(&plan, &scanned.found, &src)?;
    let file = path.display().to_string();
    dict_def::table_def(&dict, table, &file)
        .map(|d| Some((d, (src, scanned))))
        .map_err(|err| JobError::Dictionary {
            path: path.to_path_buf(),
            err,
        })
}
