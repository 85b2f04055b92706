//! `dbio innodb pages` and `dbio innodb grep`: find lost InnoDB data on a raw device, a disk
//! image, ibdata files or .ibd files. Sources are always opened read-only.

use crate::cli::usage;
use crate::progress::Progress;
use dbio_innodb::recover::{self, OutDirError, Source};
use dbio_innodb::scan::ScanOptions;
use dbio_innodb::search::{self, PatternSpec, SearchOptions};
use dbio_report::export::{Exporter, JsonExporter};
use dbio_report::Document;
use std::io::Write;
use std::path::{Path, PathBuf};
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
    Grep(Box<GrepArgs>),
    /// Decode recovered pages back into rows (SQL INSERTs, TSV or JSON Lines) with the table's
    /// CREATE TABLE statement.
    Rows(Box<super::innodb_rows::RowsArgs>),
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
        Sub::Rows(a) => super::innodb_rows::rows(*a),
    }
}

fn open_sources<P: AsRef<Path>>(paths: &[P], no_mmap: bool) -> anyhow::Result<Vec<Source>> {
    let open = |p: &P| Source::open(p.as_ref(), no_mmap).map_err(anyhow::Error::from);
    paths.iter().map(open).collect()
}

fn scan_options(f: &ScanFlags) -> anyhow::Result<ScanOptions> {
    ScanOptions::new(f.step, f.page_size).map_err(|e| usage(e.to_string()))
}

fn threads(f: &ScanFlags) -> usize {
    f.threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .max(1)
}

/// A mapped source is read with a SIGBUS handler naming it.
fn map_guard(s: &Source) -> Option<crate::signals::MapFaultGuard> {
    s.mmap.then(|| crate::signals::catch_map_faults(&s.path))
}

fn pages(a: PagesArgs) -> anyhow::Result<u8> {
    let opts = scan_options(&a.scan)?;
    if a.scan.format == Format::Jsonl {
        return Err(usage(
            "--format jsonl is for innodb grep: innodb pages writes one report, use --format json",
        ));
    }
    let sources = open_sources(&a.sources, a.scan.no_mmap)?;
    recover::prepare_out_dir(&sources, &a.out, a.allow_same_device, a.force).map_err(
        |e| match e {
            OutDirError::Overlap { .. } | OutDirError::NotEmpty { .. } => usage(e.to_string()),
            e => e.into(),
        },
    )?;
    // Ctrl-C/SIGTERM: stop the scan, or finish the page being written and stop; the manifest
    // then lists what was written, marked interrupted. A second signal kills.
    let stop = crate::signals::install();
    let start = Instant::now();
    let progress = Progress::bytes("", sources.iter().map(|s| s.len).sum());
    let cb = |d: u64, f: u64| progress.set_found(d, f, "pages");
    let scanned = recover::scan_sources(&sources, &opts, threads(&a.scan), stop, &cb, map_guard)?;
    progress.finish();
    let elapsed = start.elapsed().as_secs_f64();
    let stopped = || stop.load(Ordering::SeqCst);
    let report = recover::recover(scanned, &sources, &a.out, a.force, elapsed, &stopped)?;
    for w in &report.warnings {
        crate::output::to_stderr(&format!("dbio: warning: {w}\n"));
    }
    let bytes = match a.scan.format {
        Format::Json | Format::Jsonl => JsonExporter
            .to_string(&Document::new(dbio_report::doc::INNODB_PAGES, &report))?
            .into_bytes(),
        Format::Text => recover::render_text(&report).into_bytes(),
    };
    crate::output::emit(a.scan.output.as_deref(), &bytes)?;
    Ok(if report.interrupted {
        crate::signals::EXIT_INTERRUPTED
    } else {
        0
    })
}

fn pattern_spec(a: &GrepArgs) -> PatternSpec {
    PatternSpec {
        args: a.args.clone(),
        hex: a.hex.clone(),
        text: a.text.clone(),
        ints: [&a.tinyint, &a.smallint, &a.mediumint, &a.int, &a.bigint].map(Clone::clone),
        unsigned: a.unsigned,
        date: a.date.clone(),
        datetime: a.datetime.clone(),
        timestamp: a.timestamp.clone(),
        tz: a.tz.clone(),
        time: a.time.clone(),
        fsp: a.fsp,
        decimal: a.decimal.clone(),
        char_: a.char_.clone(),
        varchar: a.varchar.clone(),
        charset: a.charset.clone(),
    }
}

fn grep_cmd(a: GrepArgs) -> anyhow::Result<u8> {
    let opts = scan_options(&a.scan)?;
    let (pats, source_names) = search::build_patterns(&pattern_spec(&a)).map_err(|e| usage(e.0))?;
    if a.show_bytes {
        let mut s = String::new();
        for p in &pats {
            s.push_str(&format!("{}: {}\n", p.label, p.to_hex()));
        }
        if source_names.is_empty() {
            crate::output::emit(None, s.as_bytes())?;
            return Ok(0);
        }
        crate::output::to_stderr(&s);
    }
    if source_names.is_empty() {
        return Err(usage(
            "no SOURCE given: name a device, image or tablespace file to search",
        ));
    }
    if a.max_count == Some(0) {
        return Err(usage("--max-count 0 would print nothing: give 1 or more"));
    }
    let sources = open_sources(&source_names, a.scan.no_mmap)?;
    let stop = crate::signals::install();
    let mut out = crate::output::Stream::open(a.scan.output.as_deref())?;
    let progress = Progress::bytes("", sources.iter().map(|s| s.len).sum());
    let all_in = a.all_in.map(|m| match m {
        AllIn::Record => search::AllIn::Record,
        AllIn::Page => search::AllIn::Page,
    });
    if a.scan.format == Format::Json {
        // One JSON document, streamed: the hits array is written as hits are found and the
        // totals follow it.
        let head = search::json_head(&search::pattern_rows(&pats), all_in);
        out.write_all(head.as_bytes())?;
    }
    let sopts = SearchOptions {
        threads: threads(&a.scan),
        scan: &opts,
        all_in,
        context: a.context,
        max_count: a.max_count,
        stop,
    };
    let format = a.scan.format;
    let mut sink = |n: u64, mut row: search::HitRow| -> anyhow::Result<()> {
        let w = &mut out;
        match format {
            Format::Text => w.write_all(search::render_hit(&row).as_bytes())?,
            Format::Json => {
                w.write_all(search::json_separator(n).as_bytes())?;
                serde_json::to_writer(&mut *w, &row)?;
            }
            Format::Jsonl => {
                row.kind = Some("hit");
                serde_json::to_writer(&mut *w, &row)?;
                w.write_all(b"\n")?;
            }
        }
        Ok(())
    };
    let cb = |d: u64| progress.set(d);
    let summary = search::run(&sources, &pats, &sopts, &cb, map_guard, &mut sink)?;
    progress.finish();
    match format {
        Format::Text => {}
        Format::Json => out.write_all(search::json_tail(&summary).as_bytes())?,
        Format::Jsonl => {
            let doc = Document::new(dbio_report::doc::INNODB_GREP_JSONL, &summary);
            serde_json::to_writer(&mut out, &doc)?;
            out.write_all(b"\n")?;
        }
    }
    out.finish()?;
    crate::output::to_stderr(&format!("dbio: {}\n", search::summary_line(&summary)));
    Ok(if summary.interrupted {
        crate::signals::EXIT_INTERRUPTED
    } else {
        0
    })
}
