//! `dbio iostat`: iostat -x (sysstat 12.x) and pt-diskstats figures from /proc/diskstats, live
//! or replayed from a pt-stalk / pt-diskstats / `--record` samples file.

use crate::cli::{parse_duration_arg, parse_size_arg, usage};
use anyhow::Context;
use dbio_report::export::{csv_row, JsonLinesExporter};
use dbio_report::{Document, Exporter};
use dbio_sys::diskstats::{self, DiskStat};
use dbio_sys::iostat::prometheus::Exposition;
use dbio_sys::iostat::table::{render_text, Columns};
use dbio_sys::iostat::{self, ExplainWith, Report, Reporter, Selection};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Output formats of `dbio iostat`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// An aligned table per sample (the header repeats, like iostat's).
    Text,
    /// One JSON object per sample per line.
    Json,
    /// One row per device per sample, header once.
    Csv,
    /// Prometheus text exposition: node_exporter's `node_disk_*` counters plus `dbio_disk_*`
    /// interval gauges (for the node_exporter textfile collector: use --output). Several
    /// reports on stdout make one exposition, each line stamped with its sample's time.
    Prometheus,
}

/// Arguments of `dbio iostat`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Devices to show (vda, /dev/vda, /dev/mapper/vg-lv, dm-0). Named devices are shown even
    /// when idle or partitions. Default: every whole disk, dm and md device with activity.
    pub devices: Vec<String>,
    /// Time between samples.
    #[arg(long, short = 'i', default_value = "1s", value_parser = parse_duration_arg)]
    pub interval: Duration,
    /// Number of reports (each covers one interval); default: until interrupted (live) or
    /// the end of the file (--replay).
    #[arg(long, short = 'c')]
    pub count: Option<u64>,
    /// Also show idle devices.
    #[arg(long)]
    pub all: bool,
    /// Also show partitions (hidden by default so nothing is counted twice).
    #[arg(long)]
    pub partitions: bool,
    /// Sum devices into one row: NAME=dev1,dev2 (repeatable). %util, rd_cnc and wr_cnc are
    /// divided by the number of devices.
    #[arg(long, value_name = "NAME=DEV,DEV")]
    pub group: Vec<String>,
    /// Append every sample to FILE in the `TS <epoch> <date>` + raw lines format that pt-stalk
    /// writes and pt-diskstats reads.
    #[arg(long, value_name = "FILE", conflicts_with = "replay")]
    pub record: Option<PathBuf>,
    /// With --record: write the first N fields of each line (14: the classic format of
    /// kernels before 4.18, which pt-diskstats reads; 18: with the discard counters, which
    /// pt-diskstats 3.2.1 also reads) instead of all the kernel prints (20 since Linux 5.5,
    /// lines pt-diskstats skips).
    #[arg(long, value_name = "N", requires = "record", value_parser = parse_record_fields)]
    pub record_fields: Option<usize>,
    /// Read samples from FILE (pt-stalk `*-diskstats`, pt-diskstats --save-samples, or
    /// `--record`) instead of the live system; intervals come from its TS lines.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Add a short reading of each device per sample (queue depth vs disks, read vs write
    /// await, merges, request size vs page size, what %util means).
    #[arg(long)]
    pub explain: bool,
    /// The table's columns, in this order: names as the header prints them, comma separated
    /// (e.g. r/s,w/s,r_await,w_await,aqu-sz,%util). Default: all 27.
    #[arg(long, value_name = "LIST")]
    pub columns: Option<String>,
    /// Database page size that --explain compares request sizes with.
    #[arg(long, default_value = "16k", value_parser = parse_size_arg)]
    pub page_size: u64,
    /// Write to FILE instead of stdout (prometheus: rewritten atomically at every sample, for
    /// the textfile collector; other formats: appended as they come).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Say what was skipped without being an error (partition lines of 7 fields that kernels
    /// before 2.6.25 print), once.
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

fn parse_record_fields(s: &str) -> Result<usize, String> {
    match s {
        "14" => Ok(14),
        "18" => Ok(18),
        "20" => Ok(20),
        _ => Err(
            "give 14 (major minor name and 11 counters, as kernels before 4.18 print \
                  and pt-diskstats reads), 18 (with the discard counters) or 20 (all, as \
                  Linux 5.5+ prints)"
                .to_string(),
        ),
    }
}

/// CSV header (once) and rows, as [`iostat::table::csv_records`] gives them.
fn render_csv(r: &Report, header: bool) -> anyhow::Result<String> {
    let mut buf = Vec::new();
    for rec in iostat::table::csv_records(r, header) {
        csv_row(&mut buf, rec)?;
    }
    Ok(String::from_utf8(buf)?)
}

fn now_epoch() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

struct Sink {
    format: Format,
    output: Option<PathBuf>,
    file: Option<std::fs::File>,
    csv_header_done: bool,
    columns: Columns,
    prom: Exposition,
}

impl Sink {
    fn new(format: Format, output: Option<PathBuf>, columns: Columns) -> anyhow::Result<Self> {
        let file = match (&output, format) {
            (Some(p), f) if f != Format::Prometheus && p != Path::new("-") => {
                Some(std::fs::File::create(p).with_context(|| {
                    format!(
                        "cannot create output file {}: check the directory exists and is writable",
                        p.display()
                    )
                })?)
            }
            _ => None,
        };
        Ok(Sink {
            format,
            output,
            file,
            csv_header_done: false,
            columns,
            prom: Exposition::file(),
        })
    }

    fn to_file(&self) -> Option<&Path> {
        self.output.as_deref().filter(|p| *p != Path::new("-"))
    }

    /// Prometheus on stdout: more than one report (or an unknown number) make one stream
    /// (families declared once, lines timestamped); one report is a plain exposition, as the
    /// file written for the textfile collector.
    fn plan(&mut self, reports: Option<u64>) {
        if self.to_file().is_none() && reports != Some(1) {
            self.prom = Exposition::stream();
        }
    }

    fn write(&mut self, r: &Report, cur: &[DiskStat]) -> anyhow::Result<()> {
        let text = match self.format {
            Format::Text => render_text(r, &self.columns),
            Format::Json => {
                JsonLinesExporter.to_string(&Document::new(dbio_report::doc::IOSTAT, r))?
            }
            Format::Csv => {
                let t = render_csv(r, !self.csv_header_done)?;
                self.csv_header_done = true;
                t
            }
            Format::Prometheus => {
                let t = self.prom.render(r, cur);
                if let Some(p) = self.to_file() {
                    return crate::output::write_file(p, t.as_bytes());
                }
                t
            }
        };
        match &mut self.file {
            Some(f) => {
                f.write_all(text.as_bytes())?;
                f.flush()?;
            }
            None => {
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes())?;
                out.flush()?;
            }
        }
        Ok(())
    }
}

/// Runs `dbio iostat`.
pub fn run(args: Args) -> anyhow::Result<u8> {
    if args.count == Some(0) {
        return Err(usage("--count 0: give at least 1 report"));
    }
    if args.interval.is_zero() && args.replay.is_none() {
        return Err(usage("--interval must be longer than 0 (e.g. 1s, 500ms)"));
    }
    let columns =
        match &args.columns {
            Some(_) if args.format != Format::Text => return Err(usage(
                "--columns chooses the columns of the table (--format text); the other formats \
                 have every figure, named by its key",
            )),
            Some(list) => Columns::parse(list).map_err(|e| usage(e.to_string()))?,
            None => Columns::default(),
        };
    let mut sink = Sink::new(args.format, args.output.clone(), columns)?;
    match &args.replay {
        Some(p) => replay(&args, p, &mut sink),
        None => live(&args, &mut sink),
    }
}

/// The reporter of the devices and groups named in `args`, resolved in the first sample.
fn reporter(args: &Args, first: &[DiskStat], live: bool) -> anyhow::Result<Reporter> {
    let u = |e: iostat::Error| usage(e.to_string());
    let named = args
        .devices
        .iter()
        .map(|d| iostat::resolve_name(d, first, live))
        .collect::<Result<Vec<_>, _>>()
        .map_err(u)?;
    let groups = iostat::parse_groups(&args.group, first, live).map_err(u)?;
    let explain = args.explain.then(|| ExplainWith {
        info: if live {
            let names: Vec<String> = first.iter().map(|d| d.name.clone()).collect();
            iostat::dev_info(&names)
        } else {
            Default::default()
        },
        page_size: args.page_size,
    });
    let sel = Selection {
        named,
        groups,
        all: args.all,
        partitions: args.partitions,
        live,
        keep_shown: args.format == Format::Prometheus,
    };
    Ok(Reporter::new(sel, explain))
}

fn replay(args: &Args, path: &Path, sink: &mut Sink) -> anyhow::Result<u8> {
    let bytes = std::fs::read(path).with_context(|| {
        format!(
            "cannot read replay file {}: check the path and permissions",
            path.display()
        )
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let saved = diskstats::parse_saved(&text);
    for p in &saved.problems {
        eprintln!(
            "dbio: {} line {}: {}; skipped",
            path.display(),
            p.line,
            p.msg
        );
    }
    if args.verbose && !saved.old_partition_lines.is_empty() {
        eprintln!(
            "dbio: {}: {}",
            path.display(),
            iostat::old_partitions_note(&saved.old_partition_lines)
        );
    }
    if saved.samples.len() < 2 {
        anyhow::bail!(
            "{} holds {} usable sample(s): a replay needs at least two `TS` samples (pt-stalk *-diskstats, pt-diskstats --save-samples or dbio iostat --record)",
            path.display(),
            saved.samples.len()
        );
    }
    let mut reporter = reporter(args, &saved.samples[0].stats, false)?;
    let intervals = saved.samples.windows(2).filter(|w| w[1].ts > w[0].ts);
    let planned = intervals.count() as u64;
    sink.plan(Some(args.count.map_or(planned, |c| c.min(planned))));
    let mut reports = 0u64;
    for w in saved.samples.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let interval = b.ts - a.ts;
        if interval <= 0.0 {
            eprintln!(
                "dbio: {}: sample at TS {} is not after the one before ({}); interval skipped",
                path.display(),
                b.ts,
                a.ts
            );
            continue;
        }
        let r = reporter.report(&a.stats, &b.stats, b.ts, interval);
        sink.write(&r, &b.stats)?;
        reports += 1;
        if args.count.is_some_and(|c| reports >= c) {
            break;
        }
    }
    Ok(if saved.problems.is_empty() {
        0
    } else {
        crate::cli::EXIT_FAILURE
    })
}

fn live(args: &Args, sink: &mut Sink) -> anyhow::Result<u8> {
    let take = || -> anyhow::Result<(String, Vec<DiskStat>, f64, Instant)> {
        let raw =
            diskstats::read_raw().context("cannot read /proc/diskstats: is /proc mounted?")?;
        let stats =
            diskstats::parse(&raw).context("/proc/diskstats has a line dbio cannot parse")?;
        Ok((raw, stats, now_epoch(), Instant::now()))
    };
    let record = |ts: f64, raw: &str| -> anyhow::Result<()> {
        if let Some(p) = &args.record {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .with_context(|| format!("cannot append to record file {}: check the directory exists and is writable", p.display()))?;
            let raw = match args.record_fields {
                Some(n) => std::borrow::Cow::Owned(diskstats::limit_fields(raw, n)),
                None => std::borrow::Cow::Borrowed(raw),
            };
            f.write_all(diskstats::format_saved(ts, &raw).as_bytes())
                .with_context(|| format!("cannot write record file {}", p.display()))?;
        }
        Ok(())
    };
    let (raw, mut prev, ts0, mut t_prev) = take()?;
    if args.verbose {
        let old: Vec<usize> = raw
            .lines()
            .enumerate()
            .filter(|(_, l)| diskstats::is_old_partition_line(l))
            .map(|(i, _)| i + 1)
            .collect();
        if !old.is_empty() {
            eprintln!(
                "dbio: /proc/diskstats: {}",
                iostat::old_partitions_note(&old)
            );
        }
    }
    record(ts0, &raw)?;
    let mut reporter = reporter(args, &prev, true)?;
    sink.plan(args.count);
    // Ctrl-C (SIGINT) or SIGTERM ends the loop between reports, so a line is never cut in
    // half in --output or --record; the exit code is 130 as for every interrupted command.
    let stop = crate::signals::install();
    let stopped = || stop.load(std::sync::atomic::Ordering::SeqCst);
    let mut due = Instant::now();
    let mut reports = 0u64;
    loop {
        due = due.checked_add(args.interval).ok_or_else(|| {
            usage(format!(
                "--interval {:?} is too long for this system's clock",
                args.interval
            ))
        })?;
        loop {
            if stopped() {
                return Ok(crate::signals::EXIT_INTERRUPTED);
            }
            let now = Instant::now();
            if due <= now {
                break;
            }
            std::thread::sleep((due - now).min(std::time::Duration::from_millis(50)));
        }
        let (raw, cur, ts, t) = take()?;
        record(ts, &raw)?;
        let interval = t.duration_since(t_prev).as_secs_f64();
        let r = reporter.report(&prev, &cur, ts, interval);
        sink.write(&r, &cur)?;
        reports += 1;
        prev = cur;
        t_prev = t;
        if args.count.is_some_and(|c| reports >= c) {
            return Ok(0);
        }
    }
}
