//! `dbio iostat`: iostat -x (sysstat 12.x) and pt-diskstats figures from /proc/diskstats, live
//! or replayed from a pt-stalk / pt-diskstats / `--record` samples file. The reports are built
//! by `dbio_sys::iostat` and written by dbio-report's iostat exporters as they come.

mod args;

pub use args::Args;

use crate::cli::usage;
use crate::output::{to_stderr, Stream};
use anyhow::Context;
use dbio_report::export::text::iostat::Columns;
use dbio_report::export::{Exporters, Format, Prometheus, Render, Text};
use dbio_schema::iostat::DiskStat;
use dbio_schema::iostat::Report;
use dbio_sys::diskstats;
use dbio_sys::iostat::{self, Reporter};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Where the reports go: stdout or `-o FILE` as one stream (the file renamed into place at
/// the end), or, for Prometheus with `-o FILE`, the file rewritten whole at every report.
struct Sink {
    with: Exporters,
    format: Format,
    to: Result<Stream, PathBuf>,
}

impl Sink {
    /// `reports`: how many reports will come, if known. Prometheus on stdout: more than one
    /// (or an unknown number) make one stream (families declared once, lines timestamped); one
    /// report is a plain exposition, as the file written for the textfile collector.
    fn new(args: &Args, columns: Columns, reports: Option<u64>) -> anyhow::Result<Sink> {
        let (format, file) = (args.out.format, args.out.file());
        let with = Exporters {
            text: Text { columns },
            prometheus: if file.is_none() && reports != Some(1) {
                Prometheus::stream()
            } else {
                Prometheus::file()
            },
            ..Exporters::default()
        };
        let to = match (format, file) {
            (Format::Prometheus, Some(p)) => Err(p.to_path_buf()),
            (_, file) => Ok(Stream::open(file)?),
        };
        Ok(Sink { with, format, to })
    }

    fn write(&mut self, r: &Report) -> anyhow::Result<()> {
        match &mut self.to {
            Ok(s) => {
                r.render(&self.with, self.format, s)?;
                Ok(s.flush()?)
            }
            Err(p) => {
                let mut bytes = Vec::new();
                r.render(&self.with, self.format, &mut bytes)?;
                crate::output::write_file(p, &bytes)
            }
        }
    }

    /// Flushes, and renames `-o FILE` into place.
    fn finish(self) -> anyhow::Result<()> {
        self.to.map_or(Ok(()), Stream::finish)
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
            Some(c) => c.clone(),
            None => Columns::default(),
        };
    match &args.replay {
        Some(p) => replay(&args, p, columns),
        None => live(&args, columns),
    }
}

/// The reporter of the devices and groups named in `args`, resolved in the first sample. An
/// unknown device is a failure (exit 1, as in `dbio stack`); a malformed --group was refused
/// by the argument parser (exit 2).
fn reporter(args: &Args, first: &[DiskStat], live: bool) -> anyhow::Result<Reporter> {
    Ok(Reporter::from_options(&args.options(), first, live)?)
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
    let intervals = saved.intervals();
    let planned = intervals.iter().filter(|i| i.is_ok()).count() as u64;
    let planned = args.count.map_or(planned, |c| c.min(planned));
    let mut sink = Sink::new(args, columns, Some(planned))?;
    let mut reports = 0u64;
    for i in intervals {
        match i {
            Err(note) => to_stderr(&format!("dbio: {name}: {note}\n")),
            Ok((a, b)) => {
                let r = reporter.report(&a.stats, &b.stats, b.ts, b.ts - a.ts);
                sink.write(&r)?;
                reports += 1;
                if reports == planned {
                    break;
                }
            }
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
    let record = |ts: f64, raw: &str| match &args.record {
        Some(p) => diskstats::append_saved(p, ts, raw, args.record_fields).with_context(|| {
            format!(
                "cannot append to record file {}: check the directory exists and is writable",
                p.display()
            )
        }),
        None => Ok(()),
    };
    let (raw, mut prev, ts0, mut t_prev) = take()?;
    let old = diskstats::old_partition_lines(&raw);
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
    crate::signals::install();
    let mut due = Instant::now();
    let mut reports = 0u64;
    loop {
        due = due.checked_add(args.interval).ok_or_else(|| {
            usage(format!(
                "--interval {:?} is too long for this system's clock",
                args.interval
            ))
        })?;
        if crate::signals::sleep_until(due) {
            sink.finish()?;
            return Ok(crate::signals::EXIT_INTERRUPTED);
        }
        let (raw, cur, ts, t) = take()?;
        record(ts, &raw)?;
        let interval = t.duration_since(t_prev).as_secs_f64();
        sink.write(&reporter.report(&prev, &cur, ts, interval))?;
        reports += 1;
        (prev, t_prev) = (cur, t);
        if args.count.is_some_and(|c| reports >= c) {
            sink.finish()?;
            return Ok(0);
        }
    }
}
