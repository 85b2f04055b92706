//! `dbio innodb pages` and `dbio innodb grep`: find lost InnoDB data on a raw device, a disk
//! image, ibdata files or .ibd files. Sources are always opened read-only.

use crate::cli::usage;
use crate::progress::Progress;
use anyhow::{bail, Context};
use dbio_innodb::checksum::Algorithm;
use dbio_innodb::dict::{Dictionary, SYS_INDEXES_ID, SYS_TABLES_ID};
use dbio_innodb::encode::{self, IntType};
use dbio_innodb::grep::{self, Location, Pattern};
use dbio_innodb::page::{
    is_blob_type, page_type_name, physical_page_size_from_flags, RowFormat, PAGE_SIZES,
};
use dbio_innodb::scan::{self, read_full_at, FoundPage, ScanOptions, ScanWarning, Status};
use dbio_report::export::{Exporter, JsonExporter};
use dbio_report::units::{format_size, format_size_approx};
use dbio_sys::atomic::{create_new, AtomicFile};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
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
    Grep(Box<GrepArgs>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Text,
    Json,
    /// JSON Lines (innodb grep): one object per hit, then a summary object.
    Jsonl,
}

#[derive(clap::Args, Debug)]
struct ScanFlags {
    /// Candidate page starts are multiples of this many bytes.
    #[arg(long, default_value = "512", value_parser = crate::cli::parse_size_arg)]
    step: u64,
    /// Page size (4k, 8k, 16k, 32k, 64k); default: auto (FSP flags of page 0, else checksums).
    #[arg(long, value_parser = crate::cli::parse_size_arg)]
    page_size: Option<u64>,
    /// Worker threads (default: all CPUs).
    #[arg(long)]
    threads: Option<usize>,
    /// Read regular files with pread instead of a read-only memory map (block devices, and
    /// files some process has open for writing, are always read with pread). Use it when
    /// another process may truncate a file while it is read: a mapped read of a truncated
    /// file stops dbio with an error.
    #[arg(long)]
    no_mmap: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Write the result to FILE instead of stdout.
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct PagesArgs {
    /// Block devices, disk images, ibdata files or .ibd files (read-only).
    #[arg(required = true)]
    sources: Vec<PathBuf>,
    /// Directory for the recovered pages and manifest.json.
    #[arg(long)]
    out: PathBuf,
    /// Allow DIR on the filesystem or device being scanned (it may overwrite the very data
    /// being recovered).
    #[arg(long)]
    allow_same_device: bool,
    /// Write into a non-empty DIR.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    scan: ScanFlags,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum AllIn {
    Record,
    Page,
}

#[derive(clap::Args, Debug)]
struct GrepArgs {
    /// A hex pattern (when no -e/--text/typed pattern is given), then the sources.
    #[arg(value_name = "PATTERN|SOURCE")]
    args: Vec<String>,
    /// Hex pattern: bytes, `??` wildcards, a count in braces repeats the byte or `??` before
    /// it (`80 07 ??{22} 80 03`). Repeatable.
    #[arg(short = 'e', long = "hex", value_name = "HEX")]
    hex: Vec<String>,
    /// Text, as UTF-8 bytes.
    #[arg(long)]
    text: Vec<String>,
    /// INT value(s); a comma list is one pattern of adjacent columns (`7,3,7,8`).
    #[arg(long, allow_hyphen_values = true)]
    int: Vec<String>,
    /// SMALLINT value(s); a comma list is one pattern of adjacent columns.
    #[arg(long, allow_hyphen_values = true)]
    smallint: Vec<String>,
    /// TINYINT value(s); a comma list is one pattern of adjacent columns.
    #[arg(long, allow_hyphen_values = true)]
    tinyint: Vec<String>,
    /// MEDIUMINT value(s); a comma list is one pattern of adjacent columns.
    #[arg(long, allow_hyphen_values = true)]
    mediumint: Vec<String>,
    /// BIGINT value(s); a comma list is one pattern of adjacent columns.
    #[arg(long, allow_hyphen_values = true)]
    bigint: Vec<String>,
    /// The integer columns are UNSIGNED.
    #[arg(long)]
    unsigned: bool,
    /// DATE value (YYYY-MM-DD).
    #[arg(long)]
    date: Vec<String>,
    /// DATETIME value ('YYYY-MM-DD hh:mm:ss[.ffffff]'); fsp = --fsp or the digits given.
    #[arg(long)]
    datetime: Vec<String>,
    /// TIMESTAMP value in --tz (converted to UTC).
    #[arg(long)]
    timestamp: Vec<String>,
    /// Time zone of --timestamp values: UTC, +05:30, or a name like Europe/Berlin.
    #[arg(long, default_value = "UTC")]
    tz: String,
    /// TIME value ('[-]hh:mm:ss[.ffffff]').
    #[arg(long, allow_hyphen_values = true)]
    time: Vec<String>,
    /// Fractional seconds precision of the DATETIME/TIMESTAMP/TIME column (0-6).
    #[arg(long)]
    fsp: Option<u8>,
    /// DECIMAL as P,S:VALUE (`10,2:1234.56`).
    #[arg(long, allow_hyphen_values = true)]
    decimal: Vec<String>,
    /// CHAR as N:VALUE (`10:abc`), space-padded to N bytes, in --charset.
    #[arg(long = "char")]
    char_: Vec<String>,
    /// VARCHAR/TEXT value, in --charset.
    #[arg(long)]
    varchar: Vec<String>,
    /// Character set of --char/--varchar values: utf8mb4, utf8mb3, latin1, ascii, binary.
    #[arg(long, default_value = "utf8mb4")]
    charset: String,
    /// Print the bytes each pattern becomes (on stdout and exit when no source is given).
    #[arg(long)]
    show_bytes: bool,
    /// Keep only hits where every pattern occurs in one record or one page.
    #[arg(long, value_enum)]
    all_in: Option<AllIn>,
    /// Show a hex dump of N bytes either side of each hit.
    #[arg(short = 'C', long, default_value = "0")]
    context: usize,
    /// Stop after N hits (the hits kept by --all-in), as grep -m.
    #[arg(short = 'm', long, value_name = "N")]
    max_count: Option<u64>,
    #[command(flatten)]
    scan: ScanFlags,
}

/// Runs `dbio innodb`.
pub fn run(args: Args) -> anyhow::Result<u8> {
    match args.cmd {
        Sub::Pages(a) => pages(*a),
        Sub::Grep(a) => grep_cmd(*a),
    }
}

// ------------------------------------------------------------------ sources

struct Source {
    path: PathBuf,
    file: File,
    len: u64,
    /// Regular files are memory-mapped (read-only) unless some process has them open for
    /// writing (a live server's tablespace: a truncation would SIGBUS a map); block devices
    /// are read with pread so a bad sector is an I/O error, not a SIGBUS.
    mmap: bool,
}

fn open_source(path: &Path, no_mmap: bool) -> anyhow::Result<Source> {
    // Read-only, always.
    let file = File::open(path).with_context(|| {
        format!(
            "cannot open source {} read-only: check the path and permissions",
            path.display()
        )
    })?;
    let meta = file
        .metadata()
        .with_context(|| format!("cannot stat source {}", path.display()))?;
    let len = if meta.file_type().is_block_device() {
        use std::io::Seek;
        (&file)
            .seek(std::io::SeekFrom::End(0))
            .with_context(|| format!("cannot read the size of block device {}", path.display()))?
    } else if meta.is_file() {
        meta.len()
    } else {
        bail!(
            "source {} is neither a regular file nor a block device",
            path.display()
        );
    };
    // Read one byte to fail early on unreadable sources (EIO, directories opened as files).
    let mut b = [0u8; 1];
    if len > 0 {
        read_full_at(&file, &mut b, 0)
            .with_context(|| format!("cannot read source {}: check the device", path.display()))?;
    }
    let mmap = meta.is_file() && !no_mmap && dbio_innodb::io::open_for_writing(&file) != Some(true);
    Ok(Source {
        path: path.to_path_buf(),
        file,
        len,
        mmap,
    })
}

fn scan_options(f: &ScanFlags) -> anyhow::Result<ScanOptions> {
    if f.step == 0 || !f.step.is_multiple_of(512) {
        return Err(usage(format!(
            "--step {} must be a positive multiple of 512",
            f.step
        )));
    }
    let page_sizes = match f.page_size {
        None => PAGE_SIZES.to_vec(),
        Some(s) if PAGE_SIZES.contains(&(s as usize)) => vec![s as usize],
        Some(s) => {
            return Err(usage(format!(
                "--page-size {s} is not an InnoDB page size: use 4k, 8k, 16k, 32k or 64k"
            )))
        }
    };
    Ok(ScanOptions {
        step: f.step as usize,
        page_sizes,
    })
}

fn threads(f: &ScanFlags) -> usize {
    f.threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .max(1)
}

// ------------------------------------------------------------------ same-device check

fn check_out_dir(
    sources: &[Source],
    out: &Path,
    allow_same: bool,
    force: bool,
) -> anyhow::Result<()> {
    // Nothing of DIR's filesystem or the devices under it may be in the whole device stack of
    // a source (dbio_sys::inuse: below it, above it, other partitions of its disk).
    if !allow_same {
        for s in sources {
            let overlap = dbio_sys::inuse::output_overlap(out, &s.path).with_context(|| {
                format!(
                    "cannot tell whether --out {} is on the device stack of {}: pass \
                     --allow-same-device if you know it is not",
                    out.display(),
                    s.path.display()
                )
            })?;
            if let Some(o) = overlap {
                return Err(usage(format!(
                    "--out {} is on the filesystem or device being scanned ({}: {}; --out is on {}): writing there can overwrite the data being recovered; choose a directory on another device, or pass --allow-same-device",
                    out.display(),
                    s.path.display(),
                    o.source_chain,
                    o.out_chain
                )));
            }
        }
    }
    if out.exists() {
        let non_empty = std::fs::read_dir(out)
            .with_context(|| format!("--out {} is not a readable directory", out.display()))?
            .next()
            .is_some();
        if non_empty && !force {
            return Err(usage(format!(
                "--out {} is not empty: choose an empty directory, or pass --force to write into it",
                out.display()
            )));
        }
    }
    std::fs::create_dir_all(out)
        .with_context(|| format!("cannot create --out directory {}", out.display()))?;
    Ok(())
}

// ------------------------------------------------------------------ pages

#[derive(Serialize)]
struct SourceRow {
    path: String,
    bytes: u64,
    pages_found: usize,
}

#[derive(Serialize)]
struct SpaceRow {
    space_id: u32,
    page_size: u32,
    /// "fsp_flags" (page 0 found) or "checksum" (inferred from the pages found).
    page_size_from: &'static str,
    pages: usize,
}

#[derive(Serialize, Default, Clone)]
struct StatusCounts {
    intact: usize,
    torn: usize,
    heuristic: usize,
}

impl StatusCounts {
    fn add(&mut self, s: Status) {
        match s {
            Status::Intact => self.intact += 1,
            Status::Torn => self.torn += 1,
            Status::Heuristic => self.heuristic += 1,
        }
    }
}

#[derive(Serialize)]
struct IndexRow {
    space_id: u32,
    index_id: u64,
    table: Option<String>,
    index: Option<String>,
    /// The dictionary rows naming it are delete-marked or purged (DROP TABLE/DATABASE).
    dropped: bool,
    format: RowFormat,
    pages: usize,
    records: u64,
    levels: u16,
    deleted_records: u64,
    checksum: StatusCounts,
    file: String,
}

/// Pages written one file per page: BLOB/LOB pages, and MariaDB page_compressed pages
/// (written as found, still compressed).
#[derive(Serialize)]
struct PageFileRow {
    space_id: u32,
    kind: &'static str,
    pages: usize,
    dir: String,
}

/// A table named by the dictionary (SYS_TABLES/SYS_INDEXES) read from the sources.
#[derive(Serialize)]
struct DictTable {
    table_id: u64,
    name: String,
    space_id: u32,
    dropped: bool,
    indexes: Vec<DictIndex>,
}

#[derive(Serialize)]
struct DictIndex {
    index_id: u64,
    name: String,
    root_page: u32,
    /// Pages of this index found in the sources.
    pages_found: usize,
}

#[derive(Serialize)]
struct PagesReport {
    out_dir: String,
    sources: Vec<SourceRow>,
    bytes_scanned: u64,
    elapsed_s: f64,
    bytes_per_s: f64,
    pages_found: usize,
    pages_written: usize,
    duplicates_dropped: usize,
    checksum_algorithms: BTreeMap<String, usize>,
    spaces: Vec<SpaceRow>,
    indexes: Vec<IndexRow>,
    page_files: Vec<PageFileRow>,
    other_pages: BTreeMap<String, usize>,
    /// Every table the dictionary names (dropped ones too), with its indexes.
    dictionary: Vec<DictTable>,
    warnings: Vec<String>,
    /// SIGINT/SIGTERM stopped the run: what was written is listed, the rest was not done.
    interrupted: bool,
}

#[derive(Serialize, Clone)]
struct Copy {
    source: String,
    source_offset: u64,
    lsn: u64,
    status: Status,
}

#[derive(Serialize)]
struct ManifestEntry {
    file: String,
    file_offset: u64,
    source: String,
    source_offset: u64,
    space_id: u32,
    page_no: u32,
    page_type: String,
    index_id: Option<u64>,
    level: Option<u16>,
    page_size: u32,
    /// Payload bytes of a MariaDB page_compressed page.
    compressed_bytes: Option<u32>,
    lsn: u64,
    status: Status,
    checksum: Option<Algorithm>,
    /// Older copies of the same (space id, page number) that were not kept.
    older_copies: Vec<Copy>,
}

#[derive(Serialize)]
struct Manifest {
    version: u32,
    /// SIGINT/SIGTERM stopped the run: only the pages listed were written (each whole).
    interrupted: bool,
    pages: Vec<ManifestEntry>,
}

fn type_name(t: u16) -> String {
    page_type_name(t).map_or_else(|| format!("TYPE_{t}"), str::to_string)
}

fn pages(a: PagesArgs) -> anyhow::Result<u8> {
    let opts = scan_options(&a.scan)?;
    if a.scan.format == Format::Jsonl {
        return Err(usage(
            "--format jsonl is for innodb grep: innodb pages writes one report, use --format json",
        ));
    }
    let sources: Vec<Source> = a
        .sources
        .iter()
        .map(|p| open_source(p, a.scan.no_mmap))
        .collect::<anyhow::Result<_>>()?;
    check_out_dir(&sources, &a.out, a.allow_same_device, a.force)?;
    // Ctrl-C/SIGTERM: stop the scan, or finish the page being written and stop; the manifest
    // then lists what was written, marked interrupted. A second signal kills.
    let stop = crate::signals::install();
    let mut interrupted = false;
    let nthreads = threads(&a.scan);
    let start = Instant::now();
    let total: u64 = sources.iter().map(|s| s.len).sum();
    let progress = Progress::bytes("", total);
    let mut found: Vec<(usize, FoundPage)> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    let mut rows = Vec::new();
    let mut done_before = 0u64;
    for (si, s) in sources.iter().enumerate() {
        let cb = |d: u64, f: u64| progress.set_found(done_before + d, f, "pages");
        let _map_faults = s.mmap.then(|| crate::signals::catch_map_faults(&s.path));
        let outcome = scan::scan_file(&s.file, s.len, &opts, nthreads, s.mmap, stop, &cb)
            .with_context(|| {
                format!("cannot read source {}: check the device", s.path.display())
            })?;
        if outcome.cancelled {
            interrupted = true;
            found.clear();
            rows.clear();
            warnings.push(format!(
                "interrupted while scanning {}: no page was written",
                s.path.display()
            ));
            break;
        }
        done_before += s.len;
        for ScanWarning { offset, message } in outcome.warnings {
            warnings.push(format!(
                "{} at offset {offset}: {message}",
                s.path.display()
            ));
        }
        rows.push(SourceRow {
            path: s.path.display().to_string(),
            bytes: s.len,
            pages_found: outcome.pages.len(),
        });
        found.extend(outcome.pages.into_iter().map(|p| (si, p)));
    }
    progress.finish();
    let elapsed = start.elapsed().as_secs_f64();
    let pages_found = found.len();
    if pages_found == 0 && !interrupted {
        warnings.push("no InnoDB pages found in the sources".to_string());
    }

    // Page sizes per space: FSP flags of page 0 where present, else what the checksums said.
    let mut flags_size: BTreeMap<u32, u32> = BTreeMap::new();
    for (_, p) in &found {
        if let Some(f) = p.fsp_flags {
            if let Some(sz) = physical_page_size_from_flags(f) {
                flags_size.insert(p.space_id, sz as u32);
            }
        }
    }
    let mut space_rows: BTreeMap<u32, SpaceRow> = BTreeMap::new();
    for (_, p) in &found {
        let r = space_rows.entry(p.space_id).or_insert(SpaceRow {
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
    for r in space_rows.values() {
        if r.page_size_from == "checksum" {
            warnings.push(format!(
                "space {}: page 0 not found; page size {} inferred from the pages' checksums",
                r.space_id,
                format_size(r.page_size as u64)
            ));
        }
    }

    // Keep the newest LSN of each (space id, page number) (and page size: pages of different
    // sizes cannot belong to one tablespace).
    let mut best: BTreeMap<(u32, u32, u32), (usize, Vec<Copy>)> = BTreeMap::new();
    let mut dups = 0usize;
    for (i, (si, p)) in found.iter().enumerate() {
        let copy = Copy {
            source: sources[*si].path.display().to_string(),
            source_offset: p.offset,
            lsn: p.lsn,
            status: p.status,
        };
        match best.get_mut(&(p.space_id, p.page_no, p.page_size)) {
            None => {
                best.insert((p.space_id, p.page_no, p.page_size), (i, Vec::new()));
            }
            Some((j, older)) => {
                dups += 1;
                let q = &found[*j].1;
                let newer = (p.lsn, status_rank(p.status)) > (q.lsn, status_rank(q.status));
                if newer {
                    let qsi = found[*j].0;
                    older.push(Copy {
                        source: sources[qsi].path.display().to_string(),
                        source_offset: q.offset,
                        lsn: q.lsn,
                        status: q.status,
                    });
                    *j = i;
                } else {
                    older.push(copy);
                }
            }
        }
    }
    if dups > 0 {
        warnings.push(format!(
            "{dups} page(s) were found more than once (same space id and page number); the copy with the newest LSN is kept, the others are listed in manifest.json"
        ));
    }

    // Dictionary from space 0.
    let mut dict = Dictionary::default();
    for (i, _) in best.values() {
        let (si, p) = &found[*i];
        if p.space_id == 0 {
            if let Some(ix) = &p.index {
                if ix.index_id == SYS_TABLES_ID || ix.index_id == SYS_INDEXES_ID {
                    let mut buf = vec![0u8; p.page_size as usize];
                    read_full_at(&sources[*si].file, &mut buf, p.offset)?;
                    dict.add_page(&buf);
                }
            }
        }
    }

    // Group and write.
    let mut index_groups: BTreeMap<(u32, u64), Vec<usize>> = BTreeMap::new();
    let mut blob_groups: BTreeMap<(u32, &'static str), Vec<usize>> = BTreeMap::new();
    let mut other: BTreeMap<String, usize> = BTreeMap::new();
    let mut algos: BTreeMap<String, usize> = BTreeMap::new();
    for (i, _) in best.values() {
        let p = &found[*i].1;
        *algos
            .entry(p.checksum.map_or(p.status.name(), |a| a.name()).to_string())
            .or_default() += 1;
        if let Some(ix) = &p.index {
            index_groups
                .entry((p.space_id, ix.index_id))
                .or_default()
                .push(*i);
        } else if p.compressed_bytes.is_some() {
            blob_groups
                .entry((p.space_id, "COMPRESSED"))
                .or_default()
                .push(*i);
        } else if is_blob_type(p.page_type) {
            blob_groups
                .entry((p.space_id, "BLOB"))
                .or_default()
                .push(*i);
        } else {
            *other.entry(type_name(p.page_type)).or_default() += 1;
        }
    }
    let mut manifest = Vec::new();
    let mut written = 0usize;
    let mut index_rows = Vec::new();
    let mut buf = Vec::new();
    let older_of: BTreeMap<usize, Vec<Copy>> =
        best.values().map(|(i, o)| (*i, o.clone())).collect();
    let mut write_page = |file: &mut File,
                          rel: &str,
                          off: &mut u64,
                          i: usize,
                          manifest: &mut Vec<ManifestEntry>|
     -> anyhow::Result<()> {
        let (si, p) = &found[i];
        buf.resize(p.page_size as usize, 0);
        let n = read_full_at(&sources[*si].file, &mut buf, p.offset).with_context(|| {
            format!(
                "cannot re-read page at offset {} of {}",
                p.offset,
                sources[*si].path.display()
            )
        })?;
        // A page_compressed page is its payload; the rest of its slot is a hole in the
        // tablespace file, written as zeros (what a read of the file returns).
        let n = match p.compressed_bytes {
            Some(c) => {
                buf[(c as usize).min(n)..].fill(0);
                buf.len()
            }
            None => n,
        };
        file.write_all(&buf[..n]).with_context(|| {
            format!(
                "cannot write {rel} in {}: check free space",
                a.out.display()
            )
        })?;
        manifest.push(ManifestEntry {
            file: rel.to_string(),
            file_offset: *off,
            source: sources[*si].path.display().to_string(),
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
            older_copies: older_of.get(&i).cloned().unwrap_or_default(),
        });
        *off += n as u64;
        Ok(())
    };
    for ((space, index_id), mut list) in index_groups {
        list.sort_by_key(|&i| {
            let p = &found[i].1;
            (p.index.map_or(0, |x| x.level), p.page_no)
        });
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            interrupted = true;
            break;
        }
        let dir = a.out.join(space.to_string());
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let rel = format!("{space}/{index_id}.pages");
        let path = a.out.join(&rel);
        let mut f = create_page_file(&path, a.force).with_context(|| {
            format!(
                "cannot create {}: check permissions and free space (dbio never writes over a file or link it did not create)",
                path.display()
            )
        })?;
        let mut off = 0u64;
        let mut counts = StatusCounts::default();
        let (mut recs, mut deleted, mut max_level) = (0u64, 0u64, 0u16);
        let mut format = RowFormat::Compact;
        let mut n = 0;
        for &i in &list {
            // The first page goes with the file just created (no empty file is left).
            if n > 0 && stop.load(std::sync::atomic::Ordering::SeqCst) {
                interrupted = true;
                break;
            }
            write_page(&mut f, &rel, &mut off, i, &mut manifest)?;
            n += 1;
            written += 1;
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
        let names = dict.name_of(space, index_id);
        index_rows.push(IndexRow {
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
        if interrupted {
            break;
        }
    }
    let mut blob_rows = Vec::new();
    for ((space, kind), list) in blob_groups {
        if interrupted || stop.load(std::sync::atomic::Ordering::SeqCst) {
            interrupted = true;
            break;
        }
        let reldir = format!("{space}/{kind}");
        std::fs::create_dir_all(a.out.join(&reldir))
            .with_context(|| format!("cannot create {}", a.out.join(&reldir).display()))?;
        let mut n = 0;
        for &i in &list {
            if n > 0 && stop.load(std::sync::atomic::Ordering::SeqCst) {
                interrupted = true;
                break;
            }
            let p = &found[i].1;
            let rel = format!("{reldir}/{}.page", p.page_no);
            let path = a.out.join(&rel);
            let mut f = create_page_file(&path, a.force).with_context(|| {
                format!(
                    "cannot create {} (dbio never writes over a file or link it did not create)",
                    path.display()
                )
            })?;
            let mut off = 0;
            write_page(&mut f, &rel, &mut off, i, &mut manifest)?;
            written += 1;
            n += 1;
        }
        blob_rows.push(PageFileRow {
            space_id: space,
            kind,
            pages: n,
            dir: reldir,
        });
    }
    if interrupted {
        warnings.push(format!(
            "interrupted: {written} of {} pages written (each whole), all listed in manifest.json",
            best.len() - other.values().sum::<usize>()
        ));
    }
    let man = Manifest {
        version: 1,
        interrupted,
        pages: manifest,
    };
    let mpath = a.out.join("manifest.json");
    crate::output::write_file(&mpath, JsonExporter.to_string(&man)?.as_bytes())?;

    let found_per_index: BTreeMap<(u32, u64), usize> = index_rows
        .iter()
        .map(|r| ((r.space_id, r.index_id), r.pages))
        .collect();
    let dictionary: Vec<DictTable> = dict
        .tables
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
        .collect();
    let report = PagesReport {
        out_dir: a.out.display().to_string(),
        sources: rows,
        bytes_scanned: total,
        elapsed_s: elapsed,
        bytes_per_s: total as f64 / elapsed.max(1e-9),
        pages_found,
        pages_written: written,
        duplicates_dropped: dups,
        checksum_algorithms: algos,
        spaces: space_rows.into_values().collect(),
        indexes: index_rows,
        page_files: blob_rows,
        other_pages: other,
        dictionary,
        warnings,
        interrupted,
    };
    for w in &report.warnings {
        eprintln!("dbio: warning: {w}");
    }
    let bytes = match a.scan.format {
        Format::Json | Format::Jsonl => JsonExporter.to_string(&report)?.into_bytes(),
        Format::Text => render_pages(&report).into_bytes(),
    };
    crate::output::emit(a.scan.output.as_deref(), &bytes)?;
    Ok(if interrupted { 130 } else { 0 })
}

fn status_rank(s: Status) -> u8 {
    match s {
        Status::Intact => 3,
        Status::Torn => 2,
        Status::Heuristic => 1,
    }
}

fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut w: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    let line = |cells: Vec<String>, out: &mut String| {
        let s: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:<width$}", width = w[i]))
            .collect();
        out.push_str(s.join("  ").trim_end());
        out.push('\n');
    };
    line(header.iter().map(|s| s.to_string()).collect(), &mut out);
    for r in rows {
        line(r.clone(), &mut out);
    }
    out
}

fn render_pages(r: &PagesReport) -> String {
    let mut s = String::new();
    for src in &r.sources {
        s.push_str(&format!(
            "source {}: {}, {} pages\n",
            src.path,
            format_size(src.bytes),
            src.pages_found
        ));
    }
    s.push_str(&format!(
        "scanned {} in {:.2}s ({}/s); {} pages found, {} written to {}, {} duplicates dropped\n",
        format_size(r.bytes_scanned),
        r.elapsed_s,
        format_size_approx(r.bytes_per_s),
        r.pages_found,
        r.pages_written,
        r.out_dir,
        r.duplicates_dropped
    ));
    let algos: Vec<String> = r
        .checksum_algorithms
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    s.push_str(&format!("checksums: {}\n\n", algos.join(", ")));
    let rows: Vec<Vec<String>> = r
        .spaces
        .iter()
        .map(|x| {
            vec![
                x.space_id.to_string(),
                format_size(x.page_size as u64),
                x.page_size_from.to_string(),
                x.pages.to_string(),
            ]
        })
        .collect();
    s.push_str(&table(&["SPACE", "PAGE_SIZE", "FROM", "PAGES"], &rows));
    s.push('\n');
    let rows: Vec<Vec<String>> = r
        .indexes
        .iter()
        .map(|x| {
            vec![
                x.space_id.to_string(),
                x.index_id.to_string(),
                match (&x.table, x.dropped) {
                    (Some(t), true) => format!("{t} (dropped)"),
                    (Some(t), false) => t.clone(),
                    (None, _) => "-".into(),
                },
                x.index.clone().unwrap_or_else(|| "-".into()),
                format!("{:?}", x.format).to_uppercase(),
                x.pages.to_string(),
                x.records.to_string(),
                x.levels.to_string(),
                x.deleted_records.to_string(),
                x.checksum.intact.to_string(),
                x.checksum.torn.to_string(),
                x.checksum.heuristic.to_string(),
            ]
        })
        .collect();
    s.push_str(&table(
        &[
            "SPACE",
            "INDEX_ID",
            "TABLE",
            "INDEX",
            "FORMAT",
            "PAGES",
            "RECORDS",
            "LEVELS",
            "DELETED",
            "INTACT",
            "TORN",
            "HEURISTIC",
        ],
        &rows,
    ));
    if !r.page_files.is_empty() {
        s.push('\n');
        for b in &r.page_files {
            s.push_str(&format!(
                "space {}: {} {} pages in {}/\n",
                b.space_id, b.pages, b.kind, b.dir
            ));
        }
    }
    if !r.dictionary.is_empty() {
        let dropped: Vec<&str> = r
            .dictionary
            .iter()
            .filter(|t| t.dropped)
            .map(|t| t.name.as_str())
            .collect();
        let missing = r
            .dictionary
            .iter()
            .filter(|t| t.indexes.iter().all(|i| i.pages_found == 0))
            .count();
        s.push_str(&format!(
            "\ndictionary: {} tables named ({} dropped{}), {} without any page found (--format json lists them)\n",
            r.dictionary.len(),
            dropped.len(),
            if dropped.is_empty() {
                String::new()
            } else {
                format!(": {}", dropped.join(", "))
            },
            missing
        ));
    }
    if !r.other_pages.is_empty() {
        let o: Vec<String> = r
            .other_pages
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        s.push_str(&format!("\nother pages (not written): {}\n", o.join(", ")));
    }
    s
}

// ------------------------------------------------------------------ grep

fn build_patterns(a: &GrepArgs) -> anyhow::Result<(Vec<Pattern>, Vec<String>)> {
    let enc = |r: Result<Vec<u8>, dbio_innodb::Error>| r.map_err(|e| usage(e.to_string()));
    let mut pats = Vec::new();
    for h in &a.hex {
        pats.push(Pattern::parse_hex(h).map_err(|e| usage(e.to_string()))?);
    }
    for t in &a.text {
        pats.push(Pattern::literal(format!("text:{t}"), t.as_bytes().to_vec()));
    }
    let ints = [
        (&a.tinyint, IntType::Tiny, "tinyint"),
        (&a.smallint, IntType::Small, "smallint"),
        (&a.mediumint, IntType::Medium, "mediumint"),
        (&a.int, IntType::Int, "int"),
        (&a.bigint, IntType::Big, "bigint"),
    ];
    for (vals, ty, name) in ints {
        for v in vals {
            let mut bytes = Vec::new();
            for part in v.split(',') {
                bytes.extend(enc(encode::int(ty, a.unsigned, part))?);
            }
            pats.push(Pattern::literal(format!("{name}:{v}"), bytes));
        }
    }
    for v in &a.date {
        pats.push(Pattern::literal(format!("date:{v}"), enc(encode::date(v))?));
    }
    for v in &a.datetime {
        pats.push(Pattern::literal(
            format!("datetime:{v}"),
            enc(encode::datetime(v, a.fsp))?,
        ));
    }
    for v in &a.timestamp {
        let t = encode::parse_local(v).map_err(|e| usage(e.to_string()))?;
        let instants = encode::instants_in_tz(&t, &a.tz).map_err(|e| match e {
            dbio_innodb::Error::TimeZone { .. } => usage(format!("--tz: {e}")),
            e => usage(format!("--timestamp: {e}")),
        })?;
        // A time in the hour repeated when the clocks go back stands for two instants: either
        // may be stored, so both are searched, each labelled with its UTC offset.
        let label_offset = instants.len() > 1;
        for i in instants {
            let label = if label_offset {
                format!("timestamp:{v} {} ({})", a.tz, i.offset)
            } else {
                format!("timestamp:{v} {}", a.tz)
            };
            pats.push(Pattern::literal(
                label,
                enc(encode::timestamp(v, i.epoch, t.usec, t.digits, a.fsp))?,
            ));
        }
    }
    for v in &a.time {
        pats.push(Pattern::literal(
            format!("time:{v}"),
            enc(encode::time(v, a.fsp))?,
        ));
    }
    for v in &a.decimal {
        let bad = || {
            usage(format!(
                "--decimal {v:?}: write it as P,S:VALUE, e.g. 10,2:1234.56"
            ))
        };
        let (ps, val) = v.split_once(':').ok_or_else(bad)?;
        let (p, s) = ps.split_once(',').ok_or_else(bad)?;
        let (p, s): (u32, u32) = (
            p.trim().parse().map_err(|_| bad())?,
            s.trim().parse().map_err(|_| bad())?,
        );
        pats.push(Pattern::literal(
            format!("decimal({p},{s}):{val}"),
            enc(encode::decimal(p, s, val))?,
        ));
    }
    for v in &a.char_ {
        let bad = || usage(format!("--char {v:?}: write it as N:VALUE, e.g. 10:abc"));
        let (n, val) = v.split_once(':').ok_or_else(bad)?;
        let n: usize = n.trim().parse().map_err(|_| bad())?;
        pats.push(Pattern::literal(
            format!("char({n}):{val}"),
            enc(encode::char_n(n, val, &a.charset))?,
        ));
    }
    for v in &a.varchar {
        pats.push(Pattern::literal(
            format!("varchar:{v}"),
            enc(encode::charset_bytes(v, &a.charset))?,
        ));
    }
    let mut sources = a.args.clone();
    if pats.is_empty() {
        if sources.is_empty() {
            return Err(usage(
                "no pattern given: pass a hex PATTERN, -e HEX, --text or a typed value such as --int 837492636",
            ));
        }
        let first = sources.remove(0);
        pats.push(Pattern::parse_hex(&first).map_err(|e| usage(e.to_string()))?);
    }
    Ok((pats, sources))
}

#[derive(Serialize)]
struct PatternRow {
    label: String,
    hex: String,
}

#[derive(Serialize)]
struct HitRow {
    /// "hit" in JSON Lines (the last line is the "summary").
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    source: String,
    offset: u64,
    pattern: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    page: Option<HitPage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    context_hex: Option<String>,
}

#[derive(Serialize)]
struct HitPage {
    page_offset_in_source: u64,
    page_size: u32,
    space_id: u32,
    page_no: u32,
    page_type: String,
    index_id: Option<u64>,
    level: Option<u16>,
    status: Status,
    checksum: Option<Algorithm>,
    offset_in_page: u32,
    record: Option<dbio_innodb::page::Record>,
}

/// Creates a page file under `--out`: `O_CREAT|O_EXCL|O_NOFOLLOW`, so a file or link that is
/// already there is never written through. With `--force` (the user let dbio write into a
/// non-empty directory) an existing entry of that name is first removed, a link as a link:
/// its target is never touched.
fn create_page_file(path: &Path, force: bool) -> std::io::Result<File> {
    if force {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    create_new(path)
}

/// Where grep output goes: stdout, or `--output FILE` streamed into an [`AtomicFile`]
/// (a temporary created O_EXCL|O_NOFOLLOW under an unpredictable name) and renamed into place
/// at the end; dropped unfinished, the temporary is removed.
struct GrepOut {
    w: std::io::BufWriter<GrepSink>,
}

enum GrepSink {
    Stdout(std::io::Stdout),
    File(AtomicFile),
}

impl Write for GrepSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            GrepSink::Stdout(o) => o.write(buf),
            GrepSink::File(f) => f.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            GrepSink::Stdout(o) => o.flush(),
            GrepSink::File(f) => f.flush(),
        }
    }
}

impl GrepOut {
    fn open(path: Option<&Path>) -> anyhow::Result<GrepOut> {
        let sink = match path.filter(|p| *p != Path::new("-")) {
            None => GrepSink::Stdout(std::io::stdout()),
            Some(path) => GrepSink::File(AtomicFile::create(path).with_context(|| {
                format!(
                    "--output {}: check that the directory exists and is writable",
                    path.display()
                )
            })?),
        };
        Ok(GrepOut {
            w: std::io::BufWriter::with_capacity(1 << 16, sink),
        })
    }

    /// Flushes; renames a file into place.
    fn finish(self) -> anyhow::Result<()> {
        let name = match self.w.get_ref() {
            GrepSink::Stdout(_) => "stdout".to_string(),
            GrepSink::File(f) => f.path().display().to_string(),
        };
        let sink = self
            .w
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(|| format!("cannot write {name}"))?;
        if let GrepSink::File(f) = sink {
            f.commit()
                .with_context(|| format!("cannot move the output into place as {name}"))?;
        }
        Ok(())
    }
}

/// `--all-in`: keeps a hit when its group (page, or record) holds every pattern. Hits arrive
/// in offset order and a page holds offsets `[page, page + size)`, so a hit is decided once a
/// later hit lies past its page's end (or the source ends): only the hits of the last 64 KiB
/// are held.
struct AllInFilter {
    mode: AllIn,
    npat: usize,
    pending: std::collections::VecDeque<(grep::Hit, (u64, u16), u64)>,
    groups: std::collections::HashMap<(u64, u16), (BTreeSet<usize>, usize)>,
}

impl AllInFilter {
    fn new(mode: AllIn, npat: usize) -> AllInFilter {
        AllInFilter {
            mode,
            npat,
            pending: Default::default(),
            groups: Default::default(),
        }
    }

    /// Adds a hit; hands the hits now decided and kept to `out` (false from `out`: stop).
    fn push(
        &mut self,
        h: &grep::Hit,
        out: &mut dyn FnMut(grep::Hit) -> bool,
    ) -> anyhow::Result<bool> {
        let key = h.location.as_ref().and_then(|l| match self.mode {
            AllIn::Page => Some((l.page.offset, 0)),
            AllIn::Record => l.record.map(|r| (l.page.offset, r.origin)),
        });
        let Some(key) = key else {
            return self.release(h.offset, out); // never kept
        };
        let end = h
            .location
            .as_ref()
            .map_or(h.offset, |l| l.page.offset + l.page.page_size as u64);
        let g = self.groups.entry(key).or_default();
        g.0.insert(h.pattern);
        g.1 += 1;
        let go = self.release(h.offset, out)?;
        self.pending.push_back((h.clone(), key, end));
        Ok(go)
    }

    /// Decides the held hits whose page ends at or before `upto`, in order.
    fn release(
        &mut self,
        upto: u64,
        out: &mut dyn FnMut(grep::Hit) -> bool,
    ) -> anyhow::Result<bool> {
        while let Some((_, _, end)) = self.pending.front() {
            if *end > upto {
                break;
            }
            let (h, key, _) = self.pending.pop_front().expect("front exists");
            let g = self.groups.get_mut(&key).expect("group of a held hit");
            let keep = g.0.len() == self.npat;
            g.1 -= 1;
            if g.1 == 0 {
                self.groups.remove(&key);
            }
            if keep && !out(h) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

#[derive(Serialize)]
struct GrepSummary<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    patterns: &'a [PatternRow],
    all_in: Option<String>,
    /// Named as in `--format json`, where `hits` is the array of hits.
    hit_count: u64,
    hits_in_pages: u64,
    bytes_searched: u64,
    elapsed_s: f64,
    bytes_per_s: f64,
    /// `--max-count` was reached: the search stopped there.
    max_count_reached: bool,
    /// SIGINT/SIGTERM stopped the search: the hits before it were all printed.
    interrupted: bool,
}

fn grep_cmd(a: GrepArgs) -> anyhow::Result<u8> {
    let opts = scan_options(&a.scan)?;
    let (pats, source_names) = build_patterns(&a)?;
    if a.show_bytes {
        let mut s = String::new();
        for p in &pats {
            s.push_str(&format!("{}: {}\n", p.label, p.to_hex()));
        }
        if source_names.is_empty() {
            crate::output::emit(None, s.as_bytes())?;
            return Ok(0);
        }
        eprint!("{s}");
    }
    if source_names.is_empty() {
        return Err(usage(
            "no SOURCE given: name a device, image or tablespace file to search",
        ));
    }
    if a.max_count == Some(0) {
        return Err(usage("--max-count 0 would print nothing: give 1 or more"));
    }
    let sources: Vec<Source> = source_names
        .iter()
        .map(|p| open_source(Path::new(p), a.scan.no_mmap))
        .collect::<anyhow::Result<_>>()?;
    let nthreads = threads(&a.scan);
    let stop = crate::signals::install();
    let mut out = GrepOut::open(a.scan.output.as_deref())?;
    let start = Instant::now();
    let total: u64 = sources.iter().map(|s| s.len).sum();
    let progress = Progress::bytes("", total);
    let pattern_rows: Vec<PatternRow> = pats
        .iter()
        .map(|p| PatternRow {
            label: p.label.clone(),
            hex: p.to_hex(),
        })
        .collect();
    let all_in = a.all_in.map(|x| format!("{x:?}").to_lowercase());
    if a.scan.format == Format::Json {
        // One JSON document, streamed: the hits array is written as hits are found and the
        // totals follow it.
        write!(
            out.w,
            "{{\n  \"patterns\": {},\n  \"all_in\": {},\n  \"hits\": [",
            serde_json::to_string(&pattern_rows)?,
            serde_json::to_string(&all_in)?
        )?;
    }
    let (mut nhits, mut in_pages) = (0u64, 0u64);
    let mut searched = 0u64;
    let (mut max_reached, mut interrupted) = (false, false);
    let mut write_err: Option<anyhow::Error> = None;
    for s in &sources {
        let mut filter = a.all_in.map(|m| AllInFilter::new(m, pats.len()));
        let source_name = s.path.display().to_string();
        let mut emit = |h: grep::Hit| -> bool {
            let r = emit_hit(&mut out.w, &a, s, &source_name, &pats, h, nhits == 0);
            match r {
                Ok(inside) => {
                    nhits += 1;
                    in_pages += inside as u64;
                    if a.max_count.is_some_and(|m| nhits >= m) {
                        max_reached = true;
                        return false;
                    }
                    true
                }
                Err(e) => {
                    write_err = Some(e);
                    false
                }
            }
        };
        let _map_faults = s.mmap.then(|| crate::signals::catch_map_faults(&s.path));
        let done_before = searched;
        let cb = |d: u64| progress.set(done_before + d);
        let sopts = grep::StreamOptions {
            threads: nthreads,
            use_mmap: s.mmap,
            locate: Some((opts.step, &opts.page_sizes)),
            cancel: stop,
        };
        let mut filter_err = None;
        let mut sink = |batch: &[grep::Hit]| -> bool {
            for h in batch {
                let go = match &mut filter {
                    None => emit(h.clone()),
                    Some(f) => match f.push(h, &mut emit) {
                        Ok(go) => go,
                        Err(e) => {
                            filter_err = Some(e);
                            false
                        }
                    },
                };
                if !go {
                    return false;
                }
            }
            !stop.load(std::sync::atomic::Ordering::SeqCst)
        };
        let end = grep::stream_file(&s.file, s.len, &pats, &sopts, &cb, &mut sink).with_context(
            || format!("cannot read source {}: check the device", s.path.display()),
        )?;
        if let Some(e) = filter_err {
            return Err(e);
        }
        if !end.stopped {
            if let Some(f) = &mut filter {
                f.release(u64::MAX, &mut emit)?;
            }
        }
        if let Some(e) = write_err.take() {
            return Err(e);
        }
        searched += end.bytes_searched;
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            interrupted = true;
        }
        if max_reached || interrupted {
            break;
        }
    }
    progress.finish();
    let elapsed = start.elapsed().as_secs_f64();
    let summary = GrepSummary {
        kind: "summary",
        patterns: &pattern_rows,
        all_in,
        hit_count: nhits,
        hits_in_pages: in_pages,
        bytes_searched: searched,
        elapsed_s: elapsed,
        bytes_per_s: searched as f64 / elapsed.max(1e-9),
        max_count_reached: max_reached,
        interrupted,
    };
    match a.scan.format {
        Format::Text => {}
        Format::Json => {
            let f = |x: f64| serde_json::to_string(&x).unwrap_or_else(|_| "null".into());
            write!(
                out.w,
                "\n  ],\n  \"hit_count\": {nhits},\n  \"hits_in_pages\": {in_pages},\n  \"bytes_searched\": {searched},\n  \"elapsed_s\": {},\n  \"bytes_per_s\": {},\n  \"max_count_reached\": {max_reached},\n  \"interrupted\": {interrupted}\n}}\n",
                f(elapsed),
                f(summary.bytes_per_s)
            )?;
        }
        Format::Jsonl => {
            serde_json::to_writer(&mut out.w, &summary)?;
            out.w.write_all(b"\n")?;
        }
    }
    out.finish()?;
    eprintln!(
        "dbio: {} {} ({} inside InnoDB pages) in {} searched in {:.2}s ({}/s){}",
        nhits,
        if nhits == 1 { "hit" } else { "hits" },
        in_pages,
        format_size(searched),
        elapsed,
        format_size_approx(summary.bytes_per_s),
        if interrupted {
            "; interrupted"
        } else if max_reached {
            "; stopped at --max-count"
        } else {
            ""
        }
    );
    Ok(if interrupted { 130 } else { 0 })
}

/// Writes one hit in the chosen format; returns whether it lies inside a page.
fn emit_hit(
    w: &mut dyn Write,
    a: &GrepArgs,
    s: &Source,
    source_name: &str,
    pats: &[Pattern],
    h: grep::Hit,
    first: bool,
) -> anyhow::Result<bool> {
    let context_hex = if a.context > 0 {
        Some(hexdump(&s.file, s.len, h.offset, a.context)?)
    } else {
        None
    };
    let row = HitRow {
        kind: (a.scan.format == Format::Jsonl).then_some("hit"),
        source: source_name.to_string(),
        offset: h.offset,
        pattern: pats[h.pattern].label.clone(),
        page: h.location.map(hit_page),
        context_hex,
    };
    match a.scan.format {
        Format::Text => w.write_all(render_hit(&row).as_bytes())?,
        Format::Json => {
            w.write_all(if first { b"\n    " } else { b",\n    " })?;
            serde_json::to_writer(&mut *w, &row)?;
        }
        Format::Jsonl => {
            serde_json::to_writer(&mut *w, &row)?;
            w.write_all(b"\n")?;
        }
    }
    Ok(row.page.is_some())
}

fn hit_page(l: Location) -> HitPage {
    HitPage {
        page_offset_in_source: l.page.offset,
        page_size: l.page.page_size,
        space_id: l.page.space_id,
        page_no: l.page.page_no,
        page_type: type_name(l.page.page_type),
        index_id: l.page.index.map(|x| x.index_id),
        level: l.page.index.map(|x| x.level),
        status: l.page.status,
        checksum: l.page.checksum,
        offset_in_page: l.page_offset,
        record: l.record,
    }
}

fn hexdump(file: &File, len: u64, at: u64, n: usize) -> anyhow::Result<String> {
    let lo = at.saturating_sub(n as u64) / 16 * 16;
    let hi = (at + n as u64).min(len);
    let mut buf = vec![0u8; (hi - lo) as usize];
    let got = read_full_at(file, &mut buf, lo)?;
    buf.truncate(got);
    let mut s = String::new();
    for (i, line) in buf.chunks(16).enumerate() {
        let off = lo + i as u64 * 16;
        let hex: Vec<String> = line.iter().map(|b| format!("{b:02x}")).collect();
        let asc: String = line
            .iter()
            .map(|&b| {
                if (0x20..0x7f).contains(&b) {
                    b as char
                } else {
                    '.'
                }
            })
            .collect();
        s.push_str(&format!("{off:012x}  {:<47}  |{asc}|\n", hex.join(" ")));
    }
    Ok(s)
}

fn render_hit(h: &HitRow) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "{}:{} (0x{:x}) {}",
        h.source, h.offset, h.offset, h.pattern
    ));
    match &h.page {
        Some(p) => {
            s.push_str(&format!(
                "  space {} page {} {} ",
                p.space_id, p.page_no, p.page_type
            ));
            if let Some(ix) = p.index_id {
                s.push_str(&format!("index {ix} level {} ", p.level.unwrap_or(0)));
            }
            s.push_str(&format!(
                "({}{}) page@{} +0x{:x}",
                p.status.name(),
                p.checksum
                    .map(|a| format!(" {}", a.name()))
                    .unwrap_or_default(),
                p.page_offset_in_source,
                p.offset_in_page
            ));
            if let Some(rec) = &p.record {
                s.push_str(&format!(
                    " record heap {} at 0x{:x}{}",
                    rec.heap_no,
                    rec.origin,
                    if rec.purged {
                        " purged"
                    } else if rec.deleted {
                        " deleted"
                    } else {
                        ""
                    }
                ));
            }
        }
        None => s.push_str("  (not inside a recognised page)"),
    }
    s.push('\n');
    if let Some(c) = &h.context_hex {
        s.push_str(c);
    }
    s
}
