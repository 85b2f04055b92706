//! `innodb pages`: pages found in the sources -> a plan (page sizes per space, the newest LSN
//! of each page kept, the dictionary, pages grouped by index) -> page files and a manifest
//! tracing every page back to its source offset.
//!
//! Sources are opened read-only. Page files are created `O_CREAT|O_EXCL|O_NOFOLLOW`
//! ([`dbio_sys::atomic::create_new`]), the manifest is written whole through a temporary
//! renamed into place ([`dbio_sys::atomic::write_atomic`]). An interrupt (the `stop` test
//! passed in) ends the writing between pages: every page written is whole and listed in the
//! manifest, which is then marked interrupted.

use crate::checksum::Algorithm;
use crate::dict::{Dictionary, SYS_FIELDS_ID, SYS_TABLES_ID};
use crate::io::read_full_at;
use crate::page::{is_blob_type, page_type_name, physical_page_size_from_flags, RowFormat};
use crate::scan::{self, FoundPage, ScanOptions, ScanWarning, Status};
pub use dbio_schema::innodb::{
    DictIndex, DictTable, IndexRow, PageFileRow, PagesReport, SourceRow, SpaceRow, StatusCounts,
};
use dbio_schema::units::format_size;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Errors of a recovery. Each names the file or directory at fault and says what to do.
#[derive(Debug, thiserror::Error)]
pub enum RecoverError {
    /// A source cannot be opened.
    #[error("cannot open source {} read-only: check the path and permissions", .path.display())]
    Open {
        /// The source.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A source cannot be stat'ed.
    #[error("cannot stat source {}", .path.display())]
    Stat {
        /// The source.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The size of a block device cannot be read.
    #[error("cannot read the size of block device {}", .path.display())]
    DeviceSize {
        /// The source.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Encrypted pages were found but the keys given decrypt none of them.
    #[error(transparent)]
    Crypt(#[from] crate::crypt::CryptError),
    /// A source is a directory, a FIFO, ...
    #[error("source {} is neither a regular file nor a block device", .path.display())]
    NotFileOrDevice {
        /// The source.
        path: PathBuf,
    },
    /// Reading a source failed.
    #[error("cannot read source {}: check the device", .path.display())]
    Read {
        /// The source.
        path: PathBuf,
        /// What failed.
        source: crate::Error,
    },
    /// The output directory cannot be listed.
    #[error("--output-dir {} is not a readable directory", .path.display())]
    OutDir {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A directory cannot be created.
    #[error("cannot create {}", .path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The output directory cannot be created.
    #[error("cannot create --output-dir directory {}", .path.display())]
    CreateOutDir {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// An index page file cannot be created.
    #[error("cannot create {}: check permissions and free space (dbio never writes over a file or link it did not create)", .path.display())]
    CreateIndexFile {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A single-page file cannot be created.
    #[error("cannot create {} (dbio never writes over a file or link it did not create)", .path.display())]
    CreatePageFile {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A page cannot be read again from its source.
    #[error("cannot re-read page at offset {offset} of {}", .path.display())]
    ReRead {
        /// Offset of the page in the source.
        offset: u64,
        /// The source.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Writing a page file failed.
    #[error("cannot write {file} in {}: check free space", .out.display())]
    WritePage {
        /// The file, relative to `out`.
        file: String,
        /// The output directory.
        out: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The manifest cannot be written.
    #[error("{} was not written (nothing was left behind): check that its directory exists, is writable and has free space", .path.display())]
    Manifest {
        /// manifest.json.
        path: PathBuf,
        /// What failed.
        source: dbio_sys::atomic::WriteError,
    },
    /// The manifest cannot be serialised.
    #[error("cannot serialise the manifest")]
    Json(#[from] serde_json::Error),
    /// A page file of a previous run into the output directory holds other pages than this
    /// run would write there (other sources, or sources that changed).
    #[error("{file} in --output-dir {} holds other pages than this run finds in the sources (page {position} of the file: {found}): the previous run read other sources; choose an empty directory, or pass --force to write over it", .out.display())]
    PreviousRun {
        /// The file, relative to `out`.
        file: String,
        /// The output directory.
        out: PathBuf,
        /// The first page (0-based) that differs.
        position: usize,
        /// What differs.
        found: String,
    },
    /// A page file of a previous run cannot be opened to continue it.
    #[error("cannot continue {} written by the previous run (a regular file dbio wrote, not a link, is expected)", .path.display())]
    Continue {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// A source opened read-only.
pub struct Source {
    /// Its path.
    pub path: PathBuf,
    /// The open file.
    pub file: File,
    /// Its size in bytes.
    pub len: u64,
    /// Regular files are memory-mapped (read-only) unless some process has them open for
    /// writing (a live server's tablespace: a truncation would SIGBUS a map); block devices
    /// are read with pread so a bad sector is an I/O error, not a SIGBUS.
    pub mmap: bool,
}

impl Source {
    /// Opens `path` read-only (a regular file or a block device) and reads its first byte, so
    /// an unreadable source fails here. `no_mmap`: never map it.
    pub fn open(path: &Path, no_mmap: bool) -> Result<Source, RecoverError> {
        let p = || path.to_path_buf();
        let file = File::open(path).map_err(|source| RecoverError::Open { path: p(), source })?;
        let meta = file
            .metadata()
            .map_err(|source| RecoverError::Stat { path: p(), source })?;
        let len = if meta.file_type().is_block_device() {
            use std::io::Seek;
            (&file)
                .seek(std::io::SeekFrom::End(0))
                .map_err(|source| RecoverError::DeviceSize { path: p(), source })?
        } else if meta.is_file() {
            meta.len()
        } else {
            return Err(RecoverError::NotFileOrDevice { path: p() });
        };
        let mut b = [0u8; 1];
        if len > 0 {
            read_full_at(&file, &mut b, 0).map_err(|e| RecoverError::Read {
                path: p(),
                source: e.into(),
            })?;
        }
        let mmap = meta.is_file() && !no_mmap && crate::io::open_for_writing(&file) != Some(true);
        Ok(Source {
            path: p(),
            file,
            len,
            mmap,
        })
    }

    fn name(&self) -> String {
        self.path.display().to_string()
    }
}

/// Why `--output-dir` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum OutDirError {
    /// The overlap check itself failed.
    #[error("cannot tell whether --output-dir {} is on the device stack of {}: pass --allow-same-device if you know it is not", .out.display(), .source_path.display())]
    Check {
        /// The output directory.
        out: PathBuf,
        /// The source.
        source_path: PathBuf,
        /// What failed.
        source: dbio_sys::Error,
    },
    /// The directory is on the stack of a source.
    #[error("--output-dir {} is on the filesystem or device being scanned ({}: {}; --output-dir is on {}): writing there can overwrite the data being recovered; choose a directory on another device, or pass --allow-same-device", .out.display(), .source_path.display(), .overlap.source_chain, .overlap.out_chain)]
    Overlap {
        /// The output directory.
        out: PathBuf,
        /// The source.
        source_path: PathBuf,
        /// Where they meet.
        overlap: dbio_sys::inuse::Overlap,
    },
    /// The directory holds files and `force` was not given.
    #[error("--output-dir {} is not empty{}: choose an empty directory, or pass --force to write into it", .out.display(), .why)]
    NotEmpty {
        /// The output directory.
        out: PathBuf,
        /// Why it is not taken for the directory of a previous run.
        why: String,
    },
    /// Listing or creating the directory failed.
    #[error(transparent)]
    Io(#[from] RecoverError),
}

/// A page a previous run into the output directory wrote, as its manifest lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeptPage {
    /// Offset in its file.
    pub file_offset: u64,
    /// Source path.
    pub source: String,
    /// Offset in the source.
    pub source_offset: u64,
    /// Space id.
    pub space_id: u32,
    /// Page number.
    pub page_no: u32,
    /// Its LSN.
    pub lsn: u64,
    /// Page size.
    pub page_size: u32,
    /// Its entry in the manifest, as it was.
    pub raw: serde_json::Value,
}

/// What a previous run left in the output directory: its manifest.json's pages by file, in
/// file order. A run into the same directory keeps them (each is whole: the manifest lists
/// only whole pages) and writes the rest.
#[derive(Clone, Debug, Default)]
pub struct PreviousRun {
    /// Pages per file (relative to the output directory), by file offset.
    pub files: BTreeMap<String, Vec<KeptPage>>,
}

impl PreviousRun {
    /// The previous run described by the text of a manifest.json, or why it is not one that
    /// `innodb pages` wrote.
    pub fn parse(text: &str) -> Result<PreviousRun, String> {
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        if v["version"] != 1 || !v["interrupted"].is_boolean() {
            return Err("no version 1 and interrupted keys".into());
        }
        if v.get("written_by").is_some_and(|w| w != WRITTEN_BY) {
            return Err(format!("written by {}", v["written_by"]));
        }
        let pages = v["pages"].as_array().ok_or("no pages list")?;
        let mut r = PreviousRun::default();
        for (i, p) in pages.iter().enumerate() {
            let n = |k: &str| p[k].as_u64().ok_or(format!("page {i}: no {k}"));
            let s = |k: &str| {
                p[k].as_str()
                    .map(str::to_string)
                    .ok_or(format!("page {i}: no {k}"))
            };
            let file = s("file")?;
            if file.starts_with('/') || file.split('/').any(|c| c == ".." || c.is_empty()) {
                return Err(format!("page {i}: file {file} is not inside the directory"));
            }
            let small = |k: &str| n(k).and_then(|x| u32::try_from(x).map_err(|e| e.to_string()));
            r.files.entry(file).or_default().push(KeptPage {
                file_offset: n("file_offset")?,
                source: s("source")?,
                source_offset: n("source_offset")?,
                space_id: small("space_id")?,
                page_no: small("page_no")?,
                lsn: n("lsn")?,
                page_size: small("page_size")?,
                raw: p.clone(),
            });
        }
        for list in r.files.values_mut() {
            list.sort_by_key(|k| k.file_offset);
        }
        Ok(r)
    }

    /// Pages listed.
    pub fn pages(&self) -> usize {
        self.files.values().map(Vec::len).sum()
    }
}

/// The `written_by` of every manifest.json: how a later run recognises the directory as one
/// `innodb pages` wrote.
pub const WRITTEN_BY: &str = "dbio innodb pages";

/// Checks that `out` shares nothing with the whole device stack of any source (unless
/// `allow_same`) and is empty (unless `force`), then creates it. A non-empty `out` holding
/// the manifest.json of an earlier `innodb pages` run (stopped by a full filesystem, a signal,
/// or complete) is taken without `force`: the pages it lists are returned, to be kept.
pub fn prepare_out_dir(
    sources: &[Source],
    out: &Path,
    allow_same: bool,
    force: bool,
) -> Result<Option<PreviousRun>, OutDirError> {
    if !allow_same {
        for s in sources {
            let overlap =
                dbio_sys::inuse::output_overlap(out, &s.path).map_err(|e| OutDirError::Check {
                    out: out.to_path_buf(),
                    source_path: s.path.clone(),
                    source: e,
                })?;
            if let Some(o) = overlap {
                return Err(OutDirError::Overlap {
                    out: out.to_path_buf(),
                    source_path: s.path.clone(),
                    overlap: o,
                });
            }
        }
    }
    if out.exists() {
        let non_empty = std::fs::read_dir(out)
            .map_err(|source| RecoverError::OutDir {
                path: out.to_path_buf(),
                source,
            })?
            .next()
            .is_some();
        if non_empty && !force {
            let manifest = out.join("manifest.json");
            let not_ours = |why: String| OutDirError::NotEmpty {
                out: out.to_path_buf(),
                why,
            };
            // Only a regular file, not a link, is read.
            let text = match std::fs::symlink_metadata(&manifest) {
                Ok(m) if m.is_file() => std::fs::read_to_string(&manifest)
                    .map_err(|e| not_ours(format!(" (its manifest.json cannot be read: {e})")))?,
                Ok(_) => {
                    return Err(not_ours(
                        " (its manifest.json is not a regular file)".into(),
                    ))
                }
                Err(_) => {
                    return Err(not_ours(
                        " and holds no manifest.json of an earlier `innodb pages` run".into(),
                    ))
                }
            };
            let prev = PreviousRun::parse(&text).map_err(|why| {
                not_ours(format!(
                    " and its manifest.json is not one `innodb pages` wrote ({why})"
                ))
            })?;
            return Ok(Some(prev));
        }
    }
    std::fs::create_dir_all(out).map_err(|source| RecoverError::CreateOutDir {
        path: out.to_path_buf(),
        source,
    })?;
    Ok(None)
}

/// The pages found in every source.
#[derive(Debug, Default)]
pub struct Scanned {
    /// Each page with the index of its source.
    pub found: Vec<(usize, FoundPage)>,
    /// One row per source scanned.
    pub sources: Vec<SourceRow>,
    /// Problems noticed.
    pub warnings: Vec<String>,
    /// `stop` was set during the scan: nothing is to be written.
    pub interrupted: bool,
    /// Bytes scanned, over all sources: their length, or up to where a signal stopped the
    /// scan.
    pub bytes_scanned: u64,
}

/// The warning of a scan that found no page.
pub const NO_PAGES_FOUND: &str = "no InnoDB pages found in the sources";

/// Scans every source in turn. `progress(bytes_done, pages_found)` counts over all sources;
/// `guard(source)` is held while a source is read (a SIGBUS handler for mapped sources).
pub fn scan_sources<G>(
    sources: &[Source],
    opts: &ScanOptions,
    threads: usize,
    stop: &AtomicBool,
    progress: &(dyn Fn(u64, u64) + Sync),
    guard: impl Fn(&Source) -> G,
) -> Result<Scanned, RecoverError> {
    let mut r = Scanned::default();
    let mut done_before = 0u64;
    let mut encrypted = Vec::new();
    for (si, s) in sources.iter().enumerate() {
        let cb = |d: u64, f: u64| progress(done_before + d, f);
        let _guard = guard(s);
        let outcome =
            scan::scan_file(&s.file, s.len, opts, threads, s.mmap, stop, &cb).map_err(|e| {
                RecoverError::Read {
                    path: s.path.clone(),
                    source: e.into(),
                }
            })?;
        if outcome.cancelled {
            r.interrupted = true;
            r.found.clear();
            r.sources.clear();
            r.bytes_scanned = done_before + outcome.bytes_scanned;
            r.warnings.push(format!(
                "interrupted while scanning {} at byte {} of {} ({} of {} scanned over all sources): no page was written",
                s.path.display(),
                outcome.bytes_scanned,
                s.len,
                format_size(r.bytes_scanned),
                format_size(sources.iter().map(|s| s.len).sum())
            ));
            break;
        }
        done_before += s.len;
        r.bytes_scanned = done_before;
        for ScanWarning { offset, message } in outcome.warnings {
            r.warnings.push(format!(
                "{} at offset {offset}: {message}",
                s.path.display()
            ));
        }
        r.sources.push(SourceRow {
            path: s.name(),
            bytes: s.len,
            pages_found: outcome.pages.len(),
        });
        r.found.extend(outcome.pages.into_iter().map(|p| (si, p)));
        encrypted.extend(
            outcome
                .encrypted
                .into_iter()
                .map(|c| crate::crypt::Candidate { src: si, ..c }),
        );
    }
    if !r.interrupted {
        decrypt(&mut r, sources, opts, &encrypted)?;
    }
    if r.found.is_empty() && !r.interrupted {
        r.warnings.push(NO_PAGES_FOUND.to_string());
    }
    Ok(r)
}

/// The encrypted pages of a scan: without keys, a warning for each encrypted tablespace
/// whose page 0 was found (what key it needs); with keys, the `candidates` decrypted with the
/// tablespace keys the pages 0 hold, put among the pages found (in place of anything the scan
/// took for a page inside them), each with its key so that every later read decrypts it.
fn decrypt(
    r: &mut Scanned,
    sources: &[Source],
    opts: &ScanOptions,
    candidates: &[crate::crypt::Candidate],
) -> Result<(), RecoverError> {
    use crate::crypt;
    let page0s: Vec<crypt::Page0> = r
        .found
        .iter()
        .filter_map(|(si, p)| {
            let flags = p.fsp_flags?;
            Some(crypt::Page0 {
                src: *si,
                offset: p.offset,
                size: physical_page_size_from_flags(flags).unwrap_or(p.page_size as usize),
                space: p.space_id,
                full_crc32: crate::page::flags_are_full_crc32(flags),
            })
        })
        .collect();
    let read = |si: usize, off: u64, buf: &mut [u8]| read_full_at(&sources[si].file, buf, off);
    let keys = match &opts.keys {
        Some(k) if !k.is_empty() => k,
        _ => {
            let mut buf = Vec::new();
            for p in &page0s {
                buf.resize(p.size, 0);
                if read(p.src, p.offset, &mut buf).ok() != Some(p.size) {
                    continue;
                }
                if let Some(info) = crypt::space_info(&buf, p.size) {
                    r.warnings.push(format!(
                        "{} at offset {}: space {} is encrypted ({}); without the key its pages are not found",
                        sources[p.src].path.display(),
                        p.offset,
                        p.space,
                        crypt::needs(&info)
                    ));
                }
            }
            return Ok(());
        }
    };
    if candidates.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = sources.iter().map(|s| s.name()).collect();
    let mut plain: Vec<(usize, FoundPage)> = Vec::new();
    let mut on_page =
        |si: usize, offset: u64, page: &[u8], key: &std::sync::Arc<crypt::PageKey>| {
            let algo = crate::checksum::verify(page);
            let mut p = scan::classify(page, offset, Status::Intact, algo);
            p.decrypt = Some(std::sync::Arc::clone(key));
            plain.push((si, p));
        };
    let done = crypt::resolve(keys, &page0s, candidates, &names, &read, &mut on_page)?;
    r.warnings.extend(done.warnings);
    if plain.is_empty() {
        return Ok(());
    }
    // Whatever the scan found inside a decrypted page was its encrypted bytes.
    plain.sort_by_key(|(si, p)| (*si, p.offset));
    let inside = |si: usize, p: &FoundPage| {
        let i = plain.partition_point(|(sj, q)| (*sj, q.offset) <= (si, p.offset));
        let before = i.checked_sub(1).map(|j| &plain[j]);
        let after = plain.get(i);
        [before, after].into_iter().flatten().any(|(sj, q)| {
            *sj == si && p.offset < q.offset + q.extent() && q.offset < p.offset + p.extent()
        })
    };
    r.found.retain(|(si, p)| !inside(*si, p));
    r.found.extend(plain);
    r.found.sort_by_key(|(si, p)| (*si, p.offset));
    for (si, row) in r.sources.iter_mut().enumerate() {
        row.pages_found = r.found.iter().filter(|(s, _)| *s == si).count();
    }
    Ok(())
}

/// A copy of a page found in a source.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct Copy {
    /// Source path.
    pub source: String,
    /// Offset in the source.
    pub source_offset: u64,
    /// Its LSN.
    pub lsn: u64,
    /// How it was recognised.
    pub status: Status,
}

/// One page written.
#[derive(Serialize, Clone, Debug)]
pub struct ManifestEntry {
    /// The file, relative to the output directory.
    pub file: String,
    /// Offset of the page in that file.
    pub file_offset: u64,
    /// Source path.
    pub source: String,
    /// Offset in the source.
    pub source_offset: u64,
    /// Space id.
    pub space_id: u32,
    /// Page number.
    pub page_no: u32,
    /// Page type name.
    pub page_type: String,
    /// Index id (INDEX pages).
    pub index_id: Option<u64>,
    /// B-tree level (INDEX pages).
    pub level: Option<u16>,
    /// Page size.
    pub page_size: u32,
    /// Payload bytes of a MariaDB page_compressed page.
    pub compressed_bytes: Option<u32>,
    /// Its LSN.
    pub lsn: u64,
    /// How it was recognised.
    pub status: Status,
    /// The checksum algorithm that validates it.
    pub checksum: Option<Algorithm>,
    /// Older copies of the same (space id, page number) that were not kept.
    pub older_copies: Vec<Copy>,
}

/// manifest.json.
#[derive(Serialize, Clone, Debug)]
pub struct Manifest {
    /// Format version (1).
    pub version: u32,
    /// [`WRITTEN_BY`]: the directory is one `innodb pages` wrote.
    pub written_by: &'static str,
    /// Why the writing stopped before every page was written (a full filesystem): the pages
    /// listed are whole, and a run into the same directory continues after them.
    pub stopped_by: Option<String>,
    /// SIGINT/SIGTERM stopped the run: only the pages listed were written (each whole).
    pub interrupted: bool,
    /// Every page written.
    pub pages: Vec<ManifestEntry>,
    /// Entries of a previous run's manifest whose files this run did not reach (it was
    /// stopped): written after `pages`, as they were.
    #[serde(skip)]
    pub carried: Vec<serde_json::Value>,
}

/// The name of a page type, `TYPE_n` when unknown.
pub fn type_name(t: u16) -> String {
    page_type_name(t).map_or_else(|| format!("TYPE_{t}"), str::to_string)
}

/// What to write: pages kept after the LSN dedupe, grouped. Indices are into `found`.
#[derive(Debug, Default)]
pub struct Plan {
    /// One row per tablespace, by space id.
    pub spaces: BTreeMap<u32, SpaceRow>,
    /// Kept page -> the older copies dropped for it.
    pub kept: BTreeMap<usize, Vec<Copy>>,
    /// Copies dropped.
    pub duplicates: usize,
    /// INDEX pages per (space id, index id), in (level, page number) order.
    pub index_groups: BTreeMap<(u32, u64), Vec<usize>>,
    /// BLOB and page_compressed pages per (space id, kind).
    pub page_groups: BTreeMap<(u32, &'static str), Vec<usize>>,
    /// Pages of other types, per type name (not written).
    pub other: BTreeMap<String, usize>,
    /// Kept pages per checksum algorithm (or status).
    pub algorithms: BTreeMap<String, usize>,
    /// Problems noticed.
    pub warnings: Vec<String>,
}

impl Plan {
    /// Pages the plan writes.
    pub fn to_write(&self) -> usize {
        self.kept.len() - self.other.values().sum::<usize>()
    }
}

fn status_rank(s: Status) -> u8 {
    match s {
        Status::Intact => 3,
        Status::Torn => 2,
        Status::Heuristic => 1,
    }
}

/// Plans the writing of `found` (each page with the index of its source in `names`): page
/// sizes per space (FSP flags of page 0, else the size the checksums gave), the newest LSN of
/// each (space id, page number, page size) kept (a better status wins a tie), pages grouped by
/// index or kind.
pub fn plan(found: &[(usize, FoundPage)], names: &[String]) -> Plan {
    let mut plan = Plan::default();
    let mut flags_size: BTreeMap<u32, u32> = BTreeMap::new();
    for (_, p) in found {
        if let Some(sz) = p.fsp_flags.and_then(physical_page_size_from_flags) {
            flags_size.insert(p.space_id, sz as u32);
        }
    }
    for (_, p) in found {
        let r = plan.spaces.entry(p.space_id).or_insert(SpaceRow {
            space_id: p.space_id,
            page_size: flags_size.get(&p.space_id).copied().unwrap_or(p.page_size),
            page_size_from: if flags_size.contains_key(&p.space_id) {
                "fsp_flags"
            } else {
                "checksum"
            },
            pages: 0,
        });
        r.pages += 1;
    }
    for r in plan.spaces.values() {
        if r.page_size_from == "checksum" {
            plan.warnings.push(format!(
                "space {}: page 0 not found; page size {} inferred from the pages' checksums",
                r.space_id,
                format_size(r.page_size as u64)
            ));
        }
    }
    // Keep the newest LSN of each (space id, page number) (and page size: pages of different
    // sizes cannot belong to one tablespace).
    let copy = |si: usize, p: &FoundPage| Copy {
        source: names[si].clone(),
        source_offset: p.offset,
        lsn: p.lsn,
        status: p.status,
    };
    let mut best: BTreeMap<(u32, u32, u32), (usize, Vec<Copy>)> = BTreeMap::new();
    for (i, (si, p)) in found.iter().enumerate() {
        match best.get_mut(&(p.space_id, p.page_no, p.page_size)) {
            None => {
                best.insert((p.space_id, p.page_no, p.page_size), (i, Vec::new()));
            }
            Some((j, older)) => {
                plan.duplicates += 1;
                let (qsi, q) = &found[*j];
                if (p.lsn, status_rank(p.status)) > (q.lsn, status_rank(q.status)) {
                    older.push(copy(*qsi, q));
                    *j = i;
                } else {
                    older.push(copy(*si, p));
                }
            }
        }
    }
    if plan.duplicates > 0 {
        plan.warnings.push(format!(
            "{} page(s) were found more than once (same space id and page number); the copy with the newest LSN is kept, the others are listed in manifest.json",
            plan.duplicates
        ));
    }
    for (i, _) in best.values() {
        let p = &found[*i].1;
        *plan
            .algorithms
            .entry(p.checksum.map_or(p.status.name(), |a| a.name()).to_string())
            .or_default() += 1;
        if let Some(ix) = &p.index {
            plan.index_groups
                .entry((p.space_id, ix.index_id))
                .or_default()
                .push(*i);
        } else if p.compressed_bytes.is_some() {
            plan.page_groups
                .entry((p.space_id, "COMPRESSED"))
                .or_default()
                .push(*i);
        } else if is_blob_type(p.page_type) {
            plan.page_groups
                .entry((p.space_id, "BLOB"))
                .or_default()
                .push(*i);
        } else {
            *plan.other.entry(type_name(p.page_type)).or_default() += 1;
        }
    }
    for list in plan.index_groups.values_mut() {
        list.sort_by_key(|&i| {
            let p = &found[i].1;
            (p.index.map_or(0, |x| x.level), p.page_no)
        });
    }
    plan.kept = best.into_values().collect();
    plan
}

/// Reads the dictionary from the kept SYS_TABLES/SYS_COLUMNS/SYS_INDEXES/SYS_FIELDS pages of
/// space 0.
pub fn read_dictionary(
    plan: &Plan,
    found: &[(usize, FoundPage)],
    sources: &[Source],
) -> Result<Dictionary, RecoverError> {
    let mut dict = Dictionary::default();
    for i in plan.kept.keys() {
        let (si, p) = &found[*i];
        let Some(ix) = &p.index else { continue };
        if p.space_id == 0 && (SYS_TABLES_ID..=SYS_FIELDS_ID).contains(&ix.index_id) {
            let mut buf = vec![0u8; p.page_size as usize];
            p.read(&sources[*si].file, &mut buf)
                .map_err(|source| RecoverError::ReRead {
                    offset: p.offset,
                    path: sources[*si].path.clone(),
                    source,
                })?;
            dict.add_page(&buf);
        }
    }
    Ok(dict)
}

/// Creates a page file: `O_CREAT|O_EXCL|O_NOFOLLOW`, so a file or link that is already there
/// is never written through. With `force` (the user let dbio write into a non-empty
/// directory) an existing entry of that name is first removed, a link as a link: its target
/// is never touched.
pub fn create_page_file(path: &Path, force: bool) -> std::io::Result<File> {
    if force {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    dbio_sys::atomic::create_new(path)
}

/// What [`write()`] wrote.
#[derive(Debug, Default)]
pub struct Written {
    /// One row per index file.
    pub indexes: Vec<IndexRow>,
    /// One row per directory of single-page files.
    pub page_files: Vec<PageFileRow>,
    /// Every page written (or kept from the previous run).
    pub manifest: Manifest,
    /// Pages written or kept.
    pub pages: usize,
    /// Of them, pages a previous run had written and that were kept.
    pub kept: usize,
    /// The error that stopped the writing (a full filesystem): the pages listed are whole, the
    /// page being written when it happened was removed.
    pub failed: Option<RecoverError>,
}

impl Default for Manifest {
    fn default() -> Manifest {
        Manifest {
            version: 1,
            written_by: WRITTEN_BY,
            stopped_by: None,
            interrupted: false,
            pages: Vec::new(),
            carried: Vec::new(),
        }
    }
}

struct Writer<'a> {
    found: &'a [(usize, FoundPage)],
    sources: &'a [Source],
    kept: &'a BTreeMap<usize, Vec<Copy>>,
    out: &'a Path,
    buf: Vec<u8>,
}

/// Whether the open `file` is still the entry at `path` (same device and inode, not a link).
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => b.is_file() && a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

impl Writer<'_> {
    /// The manifest entry of page `i` at `off` in `rel`.
    fn entry(&self, i: usize, rel: &str, off: u64) -> ManifestEntry {
        let (si, p) = &self.found[i];
        ManifestEntry {
            file: rel.to_string(),
            file_offset: off,
            source: self.sources[*si].name(),
            source_offset: p.offset,
            space_id: p.space_id,
            page_no: p.page_no,
            page_type: type_name(p.page_type),
            index_id: p.index.map(|x| x.index_id),
            level: p.index.map(|x| x.level),
            page_size: p.page_size,
            compressed_bytes: p.compressed_bytes,
            lsn: p.lsn,
            status: p.status,
            checksum: p.checksum,
            older_copies: self.kept.get(&i).cloned().unwrap_or_default(),
        }
    }

    /// Whether page `i` is the page `k` a previous run wrote.
    fn is_kept(&self, i: usize, k: &KeptPage) -> bool {
        let (si, p) = &self.found[i];
        self.sources[*si].name() == k.source
            && (p.offset, p.space_id, p.page_no, p.lsn, p.page_size)
                == (k.source_offset, k.space_id, k.page_no, k.lsn, k.page_size)
    }

    /// Appends page `i` to `file` (`rel` under the output directory) at `off`. When the write
    /// fails (a full filesystem), the file is cut back to its whole pages, or removed when it
    /// held none (it is then the file this run created): no part of a page is left.
    fn page(
        &mut self,
        file: &mut File,
        rel: &str,
        off: &mut u64,
        i: usize,
        manifest: &mut Vec<ManifestEntry>,
    ) -> Result<(), RecoverError> {
        let (si, p) = &self.found[i];
        let src = &self.sources[*si];
        self.buf.resize(p.page_size as usize, 0);
        let n = p
            .read(&src.file, &mut self.buf)
            .map_err(|source| RecoverError::ReRead {
                offset: p.offset,
                path: src.path.clone(),
                source,
            })?;
        // A page_compressed page is its payload; the rest of its slot is a hole in the
        // tablespace file, written as zeros (what a read of the file returns).
        let n = match p.compressed_bytes {
            Some(c) => {
                self.buf[(c as usize).min(n)..].fill(0);
                self.buf.len()
            }
            None => n,
        };
        if let Err(source) = file.write_all(&self.buf[..n]) {
            let path = self.out.join(rel);
            if *off == 0 {
                if same_file(file, &path) {
                    let _ = std::fs::remove_file(&path);
                }
            } else {
                let _ = file.set_len(*off);
            }
            return Err(RecoverError::WritePage {
                file: rel.to_string(),
                out: self.out.to_path_buf(),
                source,
            });
        }
        manifest.push(self.entry(i, rel, *off));
        *off += n as u64;
        Ok(())
    }
}

fn create_dir(path: PathBuf) -> Result<(), RecoverError> {
    std::fs::create_dir_all(&path).map_err(|source| RecoverError::CreateDir { path, source })
}

/// Opens the index file `rel` to write its pages after `kept` (those a previous run wrote):
/// created when there are none, else opened (never through a link) and cut back to the end
/// of the last kept page (a part of a page after it is dropped). Returns the file and where
/// the next page goes.
fn open_index_file(
    out: &Path,
    rel: &str,
    kept: &[KeptPage],
    force: bool,
) -> Result<(File, u64), RecoverError> {
    let path = out.join(rel);
    let Some(last) = kept.last() else {
        let f = create_page_file(&path, force)
            .map_err(|source| RecoverError::CreateIndexFile { path, source })?;
        return Ok((f, 0));
    };
    use std::io::Seek;
    use std::os::unix::fs::OpenOptionsExt;
    let err = |source| RecoverError::Continue {
        path: path.clone(),
        source,
    };
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .map_err(err)?;
    let len = f.metadata().map_err(err)?;
    if !len.is_file() {
        return Err(err(std::io::Error::other("not a regular file")));
    }
    // The last kept page is whole; a page cut short at the end of its source is shorter.
    let end = (last.file_offset + last.page_size as u64).min(len.len());
    if end < last.file_offset + 1 {
        return Err(err(std::io::Error::other(format!(
            "it is {} bytes long, shorter than its pages in manifest.json",
            len.len()
        ))));
    }
    f.set_len(end).map_err(err)?;
    f.seek(std::io::SeekFrom::Start(end)).map_err(err)?;
    Ok((f, end))
}

/// Writes the planned pages under `out`: one `SPACE/INDEX_ID.pages` file per index, one
/// `SPACE/KIND/PAGE_NO.page` file per BLOB or page_compressed page. `stop()` is asked before
/// each page but the first of a file (no empty file is left): once it says true, writing ends
/// with every page written whole, and `manifest.interrupted` is set. The pages `prev` (a
/// previous run into `out`) lists are kept where they are and not written again; they must
/// be the first pages this run puts in their file. An error while writing (a full
/// filesystem) ends the writing too: the pages written are whole and listed, the error is in
/// [`Written::failed`].
#[allow(clippy::too_many_arguments)]
pub fn write(
    plan: &Plan,
    found: &[(usize, FoundPage)],
    sources: &[Source],
    dict: &Dictionary,
    out: &Path,
    force: bool,
    prev: Option<&PreviousRun>,
    stop: &dyn Fn() -> bool,
) -> Result<Written, RecoverError> {
    let mut w = Writer {
        found,
        sources,
        kept: &plan.kept,
        out,
        buf: Vec::new(),
    };
    let empty = PreviousRun::default();
    let prev = prev.unwrap_or(&empty);
    let mut r = Written::default();
    let mut interrupted = false;
    // Files of the previous run whose pages are in `r.manifest.pages` by now.
    let mut visited: std::collections::HashSet<String> = std::collections::HashSet::new();
    for (&(space, index_id), list) in &plan.index_groups {
        if stop() {
            interrupted = true;
            break;
        }
        let rel = format!("{space}/{index_id}.pages");
        let kept = prev.files.get(&rel).map_or(&[][..], Vec::as_slice);
        if let Some(k) = (0..kept.len()).find(|&k| k >= list.len() || !w.is_kept(list[k], &kept[k]))
        {
            r.failed = Some(RecoverError::PreviousRun {
                file: rel.clone(),
                out: out.to_path_buf(),
                position: k,
                found: match list.get(k) {
                    Some(&i) => format!(
                        "manifest.json lists page {} of space {} at offset {} of {}, this run finds page {} of space {} at offset {} of {}",
                        kept[k].page_no, kept[k].space_id, kept[k].source_offset, kept[k].source,
                        found[i].1.page_no, found[i].1.space_id, found[i].1.offset, sources[found[i].0].name()
                    ),
                    None => format!("manifest.json lists {} pages, this run finds {}", kept.len(), list.len()),
                },
            });
            break;
        }
        let opened = create_dir(out.join(space.to_string()))
            .and_then(|()| open_index_file(out, &rel, kept, force));
        let (mut f, mut off) = match opened {
            Ok(x) => x,
            Err(e) => {
                r.failed = Some(e);
                break;
            }
        };
        visited.insert(rel.clone());
        let mut counts = StatusCounts::default();
        let (mut recs, mut deleted, mut max_level) = (0u64, 0u64, 0u16);
        let mut format = RowFormat::Compact;
        let mut n = 0;
        for (k, &i) in list.iter().enumerate() {
            if k < kept.len() {
                r.manifest.pages.push(w.entry(i, &rel, kept[k].file_offset));
                r.kept += 1;
            } else {
                // The first page goes with the file just created (no empty file is left).
                if n > 0 && stop() {
                    interrupted = true;
                    break;
                }
                if let Err(e) = w.page(&mut f, &rel, &mut off, i, &mut r.manifest.pages) {
                    r.failed = Some(e);
                    break;
                }
            }
            n += 1;
            r.pages += 1;
            let p = &found[i].1;
            counts.add(p.status);
            if let Some(ix) = p.index {
                if ix.level == 0 {
                    recs += ix.n_recs as u64;
                    deleted += ix.deleted_recs as u64;
                }
                max_level = max_level.max(ix.level);
                format = ix.format;
            }
        }
        if n > 0 {
            let names = dict.name_of(space, index_id);
            r.indexes.push(IndexRow {
                space_id: space,
                index_id,
                table: names.as_ref().map(|n| n.0.clone()),
                index: names.map(|n| n.1),
                dropped: dict.is_dropped(index_id),
                format,
                pages: n,
                records: recs,
                levels: max_level + 1,
                deleted_records: deleted,
                checksum: counts,
                file: rel,
            });
        }
        if interrupted || r.failed.is_some() {
            break;
        }
    }
    for (&(space, kind), list) in &plan.page_groups {
        if r.failed.is_some() {
            break;
        }
        if interrupted || stop() {
            interrupted = true;
            break;
        }
        let reldir = format!("{space}/{kind}");
        if let Err(e) = create_dir(out.join(&reldir)) {
            r.failed = Some(e);
            break;
        }
        let mut n = 0;
        for &i in list {
            let rel = format!("{reldir}/{}.page", found[i].1.page_no);
            if let Some([k]) = prev.files.get(&rel).map(Vec::as_slice) {
                if w.is_kept(i, k) {
                    visited.insert(rel.clone());
                    r.manifest.pages.push(w.entry(i, &rel, 0));
                    r.kept += 1;
                    r.pages += 1;
                    n += 1;
                    continue;
                }
            }
            if n > 0 && stop() {
                interrupted = true;
                break;
            }
            let path = out.join(&rel);
            let written = create_page_file(&path, force)
                .map_err(|source| RecoverError::CreatePageFile { path, source })
                .and_then(|mut f| {
                    let mut off = 0;
                    w.page(&mut f, &rel, &mut off, i, &mut r.manifest.pages)
                });
            if let Err(e) = written {
                r.failed = Some(e);
                break;
            }
            r.pages += 1;
            n += 1;
        }
        r.page_files.push(PageFileRow {
            space_id: space,
            kind,
            pages: n,
            dir: reldir,
        });
    }
    r.manifest.interrupted = interrupted;
    r.manifest.stopped_by = r.failed.as_ref().map(error_chain);
    // The pages of the previous run in files not reached stay listed: they are still there.
    for (file, list) in &prev.files {
        if !visited.contains(file) {
            r.manifest
                .carried
                .extend(list.iter().map(|k| k.raw.clone()));
        }
    }
    Ok(r)
}

/// An error and its causes, one line.
fn error_chain(e: &RecoverError) -> String {
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(c) = src {
        s.push_str(": ");
        s.push_str(&c.to_string());
        src = c.source();
    }
    s
}

/// Writes `manifest` as `out/manifest.json` (pretty JSON, whole, through a temporary renamed
/// into place).
pub fn write_manifest(out: &Path, manifest: &Manifest) -> Result<(), RecoverError> {
    let mut v = serde_json::to_value(manifest)?;
    if let Some(pages) = v["pages"].as_array_mut() {
        pages.extend(manifest.carried.iter().cloned());
    }
    let mut bytes = serde_json::to_vec_pretty(&v)?;
    bytes.push(b'\n');
    let path = out.join("manifest.json");
    dbio_sys::atomic::write_atomic(&path, &bytes)
        .map_err(|source| RecoverError::Manifest { path, source })
}

/// Plans, writes the pages and the manifest, and builds the report. `elapsed_s` is the scan
/// time; `stop()` ends the writing between pages (see [`write()`]).
pub fn recover(
    scanned: Scanned,
    sources: &[Source],
    out: &Path,
    force: bool,
    prev: Option<&PreviousRun>,
    elapsed_s: f64,
    stop: &dyn Fn() -> bool,
) -> Result<PagesReport, RecoverError> {
    let names: Vec<String> = sources.iter().map(Source::name).collect();
    let found = &scanned.found;
    let plan = plan(found, &names);
    let mut warnings = scanned.warnings;
    warnings.extend(plan.warnings.iter().cloned());
    let dict = read_dictionary(&plan, found, sources)?;
    let mut written = write(&plan, found, sources, &dict, out, force, prev, stop)?;
    let interrupted = scanned.interrupted || written.manifest.interrupted;
    if interrupted {
        warnings.push(format!(
            "interrupted: {} of {} pages written (each whole), all listed in manifest.json",
            written.pages,
            plan.to_write()
        ));
    }
    let mut manifest = std::mem::take(&mut written.manifest);
    manifest.interrupted = interrupted;
    // On a full filesystem the manifest may not fit either: the pages written last are
    // dropped again, one by one, until it does (the manifest lists whole pages only).
    let mut dropped = 0;
    loop {
        match write_manifest(out, &manifest) {
            Ok(()) => break,
            Err(RecoverError::Manifest { source, .. })
                if source.source.raw_os_error() == Some(libc::ENOSPC)
                    && manifest.pages.len() > written.kept =>
            {
                let Some(last) = manifest.pages.pop() else {
                    break;
                };
                drop_page(out, &last, &mut written);
                dropped += 1;
                if manifest.stopped_by.is_none() {
                    manifest.stopped_by =
                        Some(format!("manifest.json: {source}: {}", source.source));
                }
            }
            Err(e) => return Err(e),
        }
    }
    if dropped > 0 {
        warnings.push(format!(
            "{dropped} page(s) written last were removed again to make room for manifest.json"
        ));
    }
    // Said by the caller (the binary: an error after the report).
    let write_error = manifest.stopped_by.clone();
    let dictionary = dictionary_rows(&dict, &written.indexes);
    let total: u64 = sources.iter().map(|s| s.len).sum();
    Ok(PagesReport {
        out_dir: out.display().to_string(),
        sources: scanned.sources,
        bytes_scanned: scanned.bytes_scanned,
        source_bytes: total,
        elapsed_s,
        bytes_per_s: scanned.bytes_scanned as f64 / elapsed_s.max(1e-9),
        pages_found: found.len(),
        pages_written: written.pages,
        pages_kept: written.kept,
        duplicates_dropped: plan.duplicates,
        checksum_algorithms: plan.algorithms,
        spaces: plan.spaces.into_values().collect(),
        indexes: written.indexes,
        page_files: written.page_files,
        other_pages: plan.other,
        dictionary,
        warnings,
        interrupted,
        write_error,
    })
}

/// Removes page `e` (the last written to its file) from the output directory: its file is cut
/// back to the page's offset, or removed when the page was its only one; the counts in
/// `written` follow.
fn drop_page(out: &Path, e: &ManifestEntry, written: &mut Written) {
    let path = out.join(&e.file);
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
        if e.file_offset == 0 {
            let _ = std::fs::remove_file(&path);
        } else if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&path) {
            let _ = f.set_len(e.file_offset);
        }
    }
    written.pages -= 1;
    if let Some(r) = written.indexes.iter_mut().find(|r| r.file == e.file) {
        r.pages -= 1;
    } else if let Some(r) = written
        .page_files
        .iter_mut()
        .find(|r| e.file.starts_with(&format!("{}/", r.dir)))
    {
        r.pages -= 1;
    }
}

fn dictionary_rows(dict: &Dictionary, indexes: &[IndexRow]) -> Vec<DictTable> {
    let found_per_index: BTreeMap<(u32, u64), usize> = indexes
        .iter()
        .map(|r| ((r.space_id, r.index_id), r.pages))
        .collect();
    dict.tables
        .values()
        .map(|t| DictTable {
            table_id: t.id,
            name: t.name.clone(),
            space_id: t.space,
            dropped: t.dropped,
            indexes: dict
                .indexes
                .values()
                .filter(|ix| ix.table_id == t.id)
                .map(|ix| DictIndex {
                    index_id: ix.id,
                    name: ix.name.clone(),
                    root_page: ix.page_no,
                    pages_found: found_per_index
                        .get(&(ix.space, ix.id))
                        .copied()
                        .unwrap_or(0),
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::page_type;
    use crate::scan::IndexInfo;
    use std::cell::Cell;

    const S: u32 = 16384;

    fn page(offset: u64, space_id: u32, page_no: u32, lsn: u64) -> FoundPage {
        FoundPage {
            offset,
            page_size: S,
            status: Status::Intact,
            checksum: Some(Algorithm::Crc32),
            space_id,
            page_no,
            page_type: page_type::ALLOCATED,
            lsn,
            index: None,
            fsp_flags: None,
            compressed_bytes: None,
            zip: false,
            decrypt: None,
        }
    }

    fn index_page(offset: u64, page_no: u32, level: u16, n_recs: u16) -> FoundPage {
        FoundPage {
            page_type: page_type::INDEX,
            index: Some(IndexInfo {
                format: RowFormat::Redundant,
                index_id: 23,
                level,
                n_recs,
                deleted_recs: 1,
            }),
            ..page(offset, 5, page_no, 100)
        }
    }

    fn names() -> Vec<String> {
        vec!["a.img".to_string(), "b.img".to_string()]
    }

    #[test]
    fn dedupe_keeps_the_newest_lsn_and_lists_the_older_copies() {
        let mut eight_k = page(0, 7, 5, 1);
        eight_k.page_size = 8192;
        let found = vec![
            (0, page(0, 7, 5, 10)),
            (1, page(16384, 7, 5, 30)),
            (0, page(32768, 7, 5, 20)),
            // Another page size is another tablespace: not a copy.
            (1, eight_k),
        ];
        let plan = plan(&found, &names());
        assert_eq!(plan.duplicates, 2);
        assert_eq!(plan.kept.len(), 2);
        let older = &plan.kept[&1];
        let offsets: Vec<(String, u64, u64)> = older
            .iter()
            .map(|c| (c.source.clone(), c.source_offset, c.lsn))
            .collect();
        assert_eq!(
            offsets,
            vec![("a.img".into(), 0, 10), ("a.img".into(), 32768, 20)]
        );
        assert!(plan.kept[&3].is_empty());
        assert!(plan.warnings.iter().any(|w| w.starts_with(
            "2 page(s) were found more than once (same space id and page number); the copy with the newest LSN is kept"
        )));
    }

    #[test]
    fn equal_lsn_prefers_an_intact_copy_to_a_torn_one() {
        let mut torn = page(0, 7, 5, 10);
        torn.status = Status::Torn;
        torn.checksum = None;
        let found = vec![(0, torn), (1, page(16384, 7, 5, 10))];
        let plan = plan(&found, &names());
        assert_eq!(plan.kept.keys().copied().collect::<Vec<_>>(), vec![1]);
        assert_eq!(plan.kept[&1][0].status, Status::Torn);
        // A torn copy never replaces an intact one of the same LSN.
        let found = vec![(1, found[1].1.clone()), (0, found[0].1.clone())];
        let plan = super::plan(&found, &names());
        assert_eq!(plan.kept.keys().copied().collect::<Vec<_>>(), vec![0]);
    }

    #[test]
    fn pages_are_grouped_by_index_in_level_and_page_order_and_by_kind() {
        let mut blob = page(0, 5, 9, 1);
        blob.page_type = page_type::BLOB;
        let mut compressed = page(0, 5, 10, 1);
        compressed.page_type = page_type::PAGE_COMPRESSED;
        compressed.compressed_bytes = Some(100);
        let mut fsp = page(0, 5, 0, 1);
        fsp.page_type = page_type::FSP_HDR;
        fsp.fsp_flags = Some(0); // 16 KiB
        let found = vec![
            (0, index_page(0, 4, 1, 2)),
            (0, index_page(0, 8, 0, 3)),
            (0, index_page(0, 3, 0, 4)),
            (0, blob),
            (0, compressed),
            (0, fsp),
        ];
        let plan = plan(&found, &names());
        assert_eq!(plan.index_groups[&(5, 23)], vec![2, 1, 0]);
        assert_eq!(plan.page_groups[&(5, "BLOB")], vec![3]);
        assert_eq!(plan.page_groups[&(5, "COMPRESSED")], vec![4]);
        assert_eq!(plan.other.get("FSP_HDR"), Some(&1));
        assert_eq!(plan.to_write(), 5);
        assert_eq!(plan.algorithms.get("crc32"), Some(&6));
        assert_eq!(plan.spaces[&5].page_size_from, "fsp_flags");
        assert!(plan.warnings.is_empty());
    }

    #[test]
    fn without_page_zero_the_page_size_comes_from_the_checksums() {
        let mut p = page(0, 9, 3, 1);
        p.page_size = 8192;
        let plan = plan(&[(0, p)], &names());
        assert_eq!(plan.spaces[&9].page_size, 8192);
        assert_eq!(plan.spaces[&9].page_size_from, "checksum");
        assert_eq!(
            plan.warnings,
            vec![
                "space 9: page 0 not found; page size 8KiB inferred from the pages' checksums"
                    .to_string()
            ]
        );
    }

    /// A source of `n` pages, page `i` filled with byte `i + 1`.
    fn source(dir: &Path, n: u8) -> Source {
        let path = dir.join("src.img");
        let mut bytes = Vec::new();
        for i in 0..n {
            bytes.extend(std::iter::repeat_n(i + 1, S as usize));
        }
        std::fs::write(&path, &bytes).unwrap();
        Source::open(&path, true).unwrap()
    }

    fn scanned(found: Vec<(usize, FoundPage)>) -> Scanned {
        Scanned {
            found,
            ..Scanned::default()
        }
    }

    #[test]
    fn pages_manifest_and_report_are_written() {
        let dir = tempfile::tempdir().unwrap();
        let src = source(dir.path(), 4);
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let mut blob = page(3 * S as u64, 5, 9, 1);
        blob.page_type = page_type::BLOB;
        blob.compressed_bytes = Some(100);
        let found = vec![
            (0, index_page(S as u64, 8, 0, 3)),
            (0, index_page(0, 3, 0, 4)),
            (0, index_page(2 * S as u64, 3, 0, 4)), // page 3 again, same LSN: the first copy stays
            (0, blob),
        ];
        let sources = [src];
        let r = recover(scanned(found), &sources, &out, false, None, 1.0, &|| false).unwrap();
        assert!(!r.interrupted);
        assert_eq!(
            (r.pages_found, r.pages_written, r.duplicates_dropped),
            (4, 3, 1)
        );
        let idx = std::fs::read(out.join("5/23.pages")).unwrap();
        assert_eq!(idx.len(), 2 * S as usize);
        assert!(idx[..S as usize].iter().all(|&b| b == 1), "page 3 first");
        assert!(idx[S as usize..].iter().all(|&b| b == 2), "then page 8");
        assert_eq!(r.indexes[0].records, 7);
        assert_eq!(r.indexes[0].deleted_records, 2);
        // page_compressed: the payload, then zeros to the page size.
        let c = std::fs::read(out.join("5/COMPRESSED/9.page")).unwrap();
        assert_eq!(c.len(), S as usize);
        assert!(c[..100].iter().all(|&b| b == 4) && c[100..].iter().all(|&b| b == 0));
        let m: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(m["version"], 1);
        assert_eq!(m["interrupted"], false);
        let pages = m["pages"].as_array().unwrap();
        assert_eq!(pages.len(), 3);
        assert_eq!(pages[0]["file"], "5/23.pages");
        assert_eq!(pages[0]["file_offset"], 0);
        assert_eq!(pages[0]["source_offset"], 0);
        assert_eq!(pages[0]["older_copies"][0]["source_offset"], 2 * S as u64);
        assert_eq!(pages[1]["file_offset"], S as u64);
        assert_eq!(pages[2]["file"], "5/COMPRESSED/9.page");
        assert_eq!(pages[2]["compressed_bytes"], 100);
    }

    #[test]
    fn an_interrupt_mid_write_keeps_whole_pages_and_marks_the_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let src = source(dir.path(), 3);
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let found = (0..3)
            .map(|i| (0, index_page(i as u64 * S as u64, i + 3, 0, 1)))
            .collect();
        // Asked before the index file (no), before its 2nd page (no), before its 3rd (yes).
        let calls = Cell::new(0);
        let stop = || {
            calls.set(calls.get() + 1);
            calls.get() >= 3
        };
        let sources = [src];
        let r = recover(scanned(found), &sources, &out, false, None, 1.0, &stop).unwrap();
        assert!(r.interrupted);
        assert_eq!(r.pages_written, 2);
        assert_eq!(
            r.warnings.last().unwrap(),
            "interrupted: 2 of 3 pages written (each whole), all listed in manifest.json"
        );
        let idx = std::fs::read(out.join("5/23.pages")).unwrap();
        assert_eq!(idx.len(), 2 * S as usize);
        assert!(idx[S as usize..].iter().all(|&b| b == 2));
        let m: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(m["interrupted"], true);
        assert_eq!(m["pages"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn an_interrupted_scan_writes_nothing_and_an_interrupted_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let s = Scanned {
            interrupted: true,
            ..Scanned::default()
        };
        let r = recover(s, &[], &out, false, None, 1.0, &|| true).unwrap();
        assert!(r.interrupted);
        let m: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(m["interrupted"], true);
        assert!(m["pages"].as_array().unwrap().is_empty());
    }

    #[test]
    fn page_files_never_write_through_an_existing_entry() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, b"keep").unwrap();
        let link = dir.path().join("1.page");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = create_page_file(&link, false).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        // --force removes the link itself, never its target.
        let mut f = create_page_file(&link, true).unwrap();
        f.write_all(b"new").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        assert!(!std::fs::symlink_metadata(&link).unwrap().is_symlink());
    }

    #[test]
    fn a_non_empty_out_dir_needs_force() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x"), b"").unwrap();
        let e = prepare_out_dir(&[], dir.path(), true, false).unwrap_err();
        assert!(matches!(e, OutDirError::NotEmpty { .. }), "{e}");
        assert!(prepare_out_dir(&[], dir.path(), true, true)
            .unwrap()
            .is_none());
        let fresh = dir.path().join("a/b");
        prepare_out_dir(&[], &fresh, true, false).unwrap();
        assert!(fresh.is_dir());
    }
}
