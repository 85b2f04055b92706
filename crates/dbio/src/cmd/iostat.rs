//! `dbio iostat`: iostat -x (sysstat 12.x) and pt-diskstats figures from /proc/diskstats, live
//! or replayed from a pt-stalk / pt-diskstats / `--record` samples file. The reports are built
//! by `dbio_sys::iostat` and written by dbio-report's iostat exporters as they come.

use crate::cli::{parse_duration_arg, parse_size_arg, usage};
use crate::output::{to_stderr, OutputArgs, Stream};
use anyhow::Context;
use dbio_report::export::prometheus::iostat::PrometheusExporter;
use dbio_report::export::text::iostat::{Columns, TextExporter};
use dbio_report::export::{csv::iostat::CsvExporter, Format, JsonLinesExporter};
use dbio_report::{Document, Exporter};
use dbio_sys::diskstats::{self, DiskStat};
use dbio_sys::iostat::{self, ExplainWith, Report, Reporter, Selection};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

// Text: a table per report (the header repeats, like iostat's). Jsonl: one document per
// report per line. Csv: one row per device per report, header once. Prometheus:
// node_exporter's `node_disk_*` counters plus `dbio_disk_*` interval gauges; several reports
// on stdout make one exposition (lines timestamped), `-o FILE` is rewritten atomically at
// every report for the node_exporter textfile collector.
crate::formats!(IostatFormats: Text, Jsonl, Csv, Prometheus);

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
    /// Say what was skipped without being an error (partition lines of 7 fields that kernels
    /// before 2.6.25 print), once.
    #[arg(long, short = 'v')]
    pub verbose: bool,
    #[command(flatten)]
    pub out: OutputArgs<IostatFormats>,
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

/// One JSON document per report per line.
struct JsonLines;

impl Exporter<Report> for JsonLines {
    fn export(&self, r: &Report, out: &mut dyn Write) -> std::io::Result<()> {
        JsonLinesExporter.export(&Document::new(dbio_report::doc::IOSTAT, r), out)
    }
}

/// Where the reports go: stdout or `-o FILE` as one stream (the file renamed into place at
/// the end), or, for Prometheus with `-o FILE`, the file rewritten whole at every report.
struct Sink {
    exporter: Box<dyn Exporter<Report>>,
    stream: Option<Stream>,
}

impl Sink {
    /// `reports`: how many reports will come, if known. Prometheus on stdout: more than one
    /// (or an unknown number) make one stream (families declared once, lines timestamped); one
    /// report is a plain exposition, as the file written for the textfile collector.
    fn new(args: &Args, columns: Columns, reports: Option<u64>) -> anyhow::Result<Sink> {
        let out = &args.out;
        let exporter: Box<dyn Exporter<Report>> = match out.format {
            Format::Prometheus if out.to_stdout() && reports != Some(1) => {
                Box::new(PrometheusExporter::stream())
            }
            Format::Prometheus => Box::new(PrometheusExporter::file()),
            Format::Jsonl => Box::new(JsonLines),
            Format::Csv => Box::new(CsvExporter::default()),
            _ => Box::new(TextExporter { columns }),
        };
        let stream = match (out.format, out.file()) {
            (Format::Prometheus, Some(_)) => None,
            (_, file) => Some(Stream::open(file)?),
        };
        Ok(Sink { exporter, stream })
    }

    fn write(&mut self, r: &Report, out: &OutputArgs<IostatFormats>) -> anyhow::Result<()> {
        match (&mut self.stream, out.file()) {
            (Some(s), _) => {
                self.exporter.export(r, s)?;
                s.flush()?;
            }
            (None, Some(p)) => {
                crate::output::write_file(p, self.exporter.to_string(r)?.as_bytes())?
            }
            (None, None) => unreachable!("Sink::new opens a stream unless there is a file"),
        }
        Ok(())
    }

    /// Flushes, and renames `-o FILE` into place.
    fn finish(self) -> anyhow::Result<()> {
        self.stream.map_or(Ok(()), Stream::finish)
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
            Some(_) if args.out.format != Format::Text => return Err(usage(
                "--columns chooses the columns of the table (--format text); the other formats \
                 have every figure, named by its key",
            )),
            Some(list) => Columns::parse(list).map_err(|e| usage(e.to_string()))?,
            None => Columns::default(),
        };
    match &args.replay {
        Some(p) => replay(&args, p, columns),
        None => live(&args, columns),
    }
}

/// The reporter of the devices and groups named in `args`, resolved in the first sample. An
/// unknown device is a failure (exit 1, as in `dbio stack`); a malformed --group is a usage
/// error.
fn reporter(args: &Args, first: &[DiskStat], live: bool) -> anyhow::Result<Reporter> {
    let err = |e: iostat::Error| match e {
        iostat::Error::BadGroup { .. } => usage(e.to_string()),
        e => anyhow::Error::new(e),
    };
    let named = args
        .devices
        .iter()
        .map(|d| iostat::resolve_name(d, first, live))
        .collect::<Result<Vec<_>, _>>()
        .map_err(err)?;
    let groups = iostat::parse_groups(&args.group, first, live).map_err(err)?;
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
        keep_shown: args.out.format == Format::Prometheus,
    };
    Ok(Reporter::new(sel, explain))
}

fn replay(args: &Args, path: &Path, columns: Columns) -> anyhow::Result<u8> {
    let bytes = std::fs::read(path).with_context(|| {
        format!(
            "cannot read replay file {}: check the path and permissions",
            path.display()
        )
    })?;
    let saved = diskstats::parse_saved(&String::from_utf8_lossy(&bytes));
    let name = path.display();
    for p in &saved.problems {
        to_stderr(&format!(
            "dbio: {name} line {}: {}; skipped\n",
            p.line, p.msg
        ));
    }
    if args.verbose && !saved.old_partition_lines.is_empty() {
        let note = iostat::old_partitions_note(&saved.old_partition_lines);
        to_stderr(&format!("dbio: {name}: {note}\n"));
    }
    if saved.samples.len() < 2 {
        anyhow::bail!(
            "{name} holds {} usable sample(s): a replay needs at least two `TS` samples (pt-stalk *-diskstats, pt-diskstats --save-samples or dbio iostat --record)",
            saved.samples.len()
        );
    }
    let mut reporter = reporter(args, &saved.samples[0].stats, false)?;
    let intervals = saved.samples.windows(2).filter(|w| w[1].ts > w[0].ts);
    let planned = intervals.count() as u64;
    let mut sink = Sink::new(
        args,
        columns,
        Some(args.count.map_or(planned, |c| c.min(planned))),
    )?;
    let mut reports = 0u64;
    for w in saved.samples.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let interval = b.ts - a.ts;
        if interval <= 0.0 {
            to_stderr(&format!(
                "dbio: {name}: sample at TS {} is not after the one before ({}); interval skipped\n",
                b.ts, a.ts
            ));
            continue;
        }
        sink.write(
            &reporter.report(&a.stats, &b.stats, b.ts, interval),
            &args.out,
        )?;
        reports += 1;
        if args.count.is_some_and(|c| reports >= c) {
            break;
        }
    }
    sink.finish()?;
    Ok(if saved.problems.is_empty() {
        0
    } else {
        crate::cli::EXIT_FAILURE
    })
}

fn live(args: &Args, columns: Columns) -> anyhow::Result<u8> {
    let take = || -> anyhow::Result<(String, Vec<DiskStat>, f64, Instant)> {
        let raw =
            diskstats::read_raw().context("cannot read /proc/diskstats: is /proc mounted?")?;
        let stats =
            diskstats::parse(&raw).context("/proc/diskstats has a line dbio cannot parse")?;
        let now = SystemTime::now().duration_since(UNIX_EPOCH);
        Ok((
            raw,
            stats,
            now.map_or(0.0, |d| d.as_secs_f64()),
            Instant::now(),
        ))
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
    let old: Vec<usize> = raw
        .lines()
        .enumerate()
        .filter(|(_, l)| diskstats::is_old_partition_line(l))
        .map(|(i, _)| i + 1)
        .collect();
    if args.verbose && !old.is_empty() {
        let note = iostat::old_partitions_note(&old);
        to_stderr(&format!("dbio: /proc/diskstats: {note}\n"));
    }
    record(ts0, &raw)?;
    let mut reporter = reporter(args, &prev, true)?;
    let mut sink = Sink::new(args, columns, args.count)?;
    // Ctrl-C (SIGINT) or SIGTERM ends the loop between reports, so a line is never cut in
    // half in --output or --record; the reports so far are kept (-o FILE is renamed into
    // place) and the exit code is 130 (143 for SIGTERM) as for every interrupted command.
    let stop = crate::signals::install();
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
            if stop.load(std::sync::atomic::Ordering::SeqCst) {
                sink.finish()?;
                return Ok(crate::signals::EXIT_INTERRUPTED);
            }
            let now = Instant::now();
            if due <= now {
                break;
            }
            std::thread::sleep((due - now).min(Duration::from_millis(50)));
        }
        let (raw, cur, ts, t) = take()?;
        record(ts, &raw)?;
        let interval = t.duration_since(t_prev).as_secs_f64();
        sink.write(&reporter.report(&prev, &cur, ts, interval), &args.out)?;
        reports += 1;
        (prev, t_prev) = (cur, t);
        if args.count.is_some_and(|c| reports >= c) {
            sink.finish()?;
            return Ok(0);
        }
    }
}
