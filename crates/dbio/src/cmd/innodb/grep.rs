//! `dbio innodb grep`: patterns from hex, text and typed values; hits streamed to the output
//! as they are found, the summary line on stderr.

use super::scan::{exit_code, map_guard, ScanFlags};
use crate::cli::usage;
use crate::output::{to_stderr, OutputArgs};
use crate::progress::Progress;
use dbio_innodb::search::{self, PatternSpec, SearchOptions};
use dbio_report::export::{Exporter, Exporters, Render, Text};
use dbio_schema::innodb::GrepEvent;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum AllIn {
    Record,
    Page,
}

#[derive(clap::Args, Debug)]
pub(super) struct GrepArgs {
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
    #[command(flatten)]
    out: OutputArgs<GrepEvent<'static>>,
}

impl GrepArgs {
    fn pattern_spec(&self) -> PatternSpec {
        PatternSpec {
            args: self.args.clone(),
            hex: self.hex.clone(),
            text: self.text.clone(),
            ints: [
                &self.tinyint,
                &self.smallint,
                &self.mediumint,
                &self.int,
                &self.bigint,
            ]
            .map(Clone::clone),
            unsigned: self.unsigned,
            date: self.date.clone(),
            datetime: self.datetime.clone(),
            timestamp: self.timestamp.clone(),
            tz: self.tz.clone(),
            time: self.time.clone(),
            fsp: self.fsp,
            decimal: self.decimal.clone(),
            char_: self.char_.clone(),
            varchar: self.varchar.clone(),
            charset: self.charset.clone(),
        }
    }
}

/// Runs `dbio innodb grep`.
pub(super) fn run(a: GrepArgs) -> anyhow::Result<u8> {
    let opts = a.scan.options()?;
    let (pats, source_names) = search::build_patterns(&a.pattern_spec()).map_err(|e| usage(e.0))?;
    let patterns = search::pattern_rows(&pats);
    if a.show_bytes {
        let s = Text::default().to_string(patterns.as_slice())?;
        if source_names.is_empty() {
            a.out.emit(s.as_bytes())?;
            return Ok(0);
        }
        to_stderr(&s);
    }
    if source_names.is_empty() {
        return Err(usage(
            "no SOURCE given: name a device, image or tablespace file to search",
        ));
    }
    if a.max_count == Some(0) {
        return Err(usage("--max-count 0 would print nothing: give 1 or more"));
    }
    let sources = a.scan.open(&source_names)?;
    let stop = crate::signals::install();
    let mut out = crate::output::Stream::open(a.out.file())?;
    let progress = Progress::bytes("", sources.iter().map(|s| s.len).sum());
    let all_in = a.all_in.map(|m| match m {
        AllIn::Record => search::AllIn::Record,
        AllIn::Page => search::AllIn::Page,
    });
    let (with, format) = (Exporters::default(), a.out.format);
    let all_in_name = all_in.map(|m| m.name());
    let start = GrepEvent::Start {
        patterns: &patterns,
        all_in: all_in_name,
    };
    start.render(&with, format, &mut out)?;
    let sopts = SearchOptions {
        threads: a.scan.threads(),
        scan: &opts,
        all_in,
        context: a.context,
        max_count: a.max_count,
        stop,
    };
    let mut sink = |n: u64, hit: search::HitRow| -> anyhow::Result<()> {
        Ok(GrepEvent::Hit { n, hit: &hit }.render(&with, format, &mut out)?)
    };
    let cb = |d: u64| progress.set(d);
    let summary = search::run(&sources, &pats, &sopts, &cb, map_guard, &mut sink)?;
    progress.finish();
    GrepEvent::End(&summary).render(&with, format, &mut out)?;
    out.finish()?;
    let line = Text::default().to_string(&summary)?;
    to_stderr(&format!("dbio: {line}"));
    Ok(exit_code(summary.interrupted))
}
