//! `dbio bench [prepare|run|cleanup]`: database-shaped I/O with exact latency histograms.

use crate::cli::{parse_duration_arg, parse_size_arg, usage};
use crate::{output, signals};
use anyhow::Context;
use clap::ValueEnum;
use dbio_bench::options::{self, engine_spec, Options};
use dbio_bench::plan::{self, Plan};
use dbio_bench::{fileset, run as brun, BenchError};
use dbio_report::bench::{Distribution, EngineKind, FsyncMode, Interval, Mode, Named, Spec};
use dbio_report::bench_csv::CsvExporter;
use dbio_report::bench_fileset;
use dbio_report::bench_sysbench::{self, SysbenchExporter};
use dbio_report::bench_text::{self, TextExporter};
use dbio_report::{Exporter, JsonExporter};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// Which phase to run; without one, `dbio bench` prepares, runs and cleans up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Phase {
    /// Write the file set (random data), then drop it from the page cache.
    Prepare,
    /// Run the workload on a prepared file set (or a device).
    Run,
    /// Remove the files dbio created (and nothing else).
    Cleanup,
}

/// A clap parser for a schema enum, by its result names, with their help lines.
fn named<T: Named + Send + Sync>() -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        T::ALL
            .iter()
            .map(|v| PossibleValue::new(v.name()).help(v.help())),
    )
    .map(|s| T::from_name(&s).expect("clap checked the name"))
}

/// Output format of the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// For people.
    Text,
    /// Versioned JSON (schema dbio.bench/1) with full histograms.
    Json,
    /// The time series, one row per interval.
    Csv,
    /// The sysbench 1.0.20 fileio layout.
    Sysbench,
}

/// Arguments of `dbio bench`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Without a phase, dbio bench prepares the file set, runs, and removes the files (--keep keeps them); \
on a file set already prepared in --dir (by bench prepare, or kept with --keep) it runs on that set and keeps it.\n\
bench run (and bench on a prepared set) takes --file-num and --file-total-size from the set; given, they must match it.\n\
Defaults: 16 KiB random read/write mix (1.5 reads per write), 64 files, 1 GiB in ./dbio-data, O_DIRECT, 1 thread, 10 s."
)]
pub struct Args {
    /// prepare, run or cleanup; omit for all three.
    #[arg(value_enum)]
    pub phase: Option<Phase>,
    /// Directory of the file set.
    #[arg(long, default_value = "dbio-data", conflicts_with = "device")]
    pub dir: PathBuf,
    /// Benchmark this block device instead of files (reads only, unless --allow-device-writes).
    #[arg(long)]
    pub device: Option<PathBuf>,
    /// Allow write modes on --device (destroys its data; refused while it is mounted).
    #[arg(long)]
    pub allow_device_writes: bool,
    /// Workload.
    #[arg(long, default_value = "rndrw", value_parser = named::<Mode>())]
    pub mode: Mode,
    /// Reads per write in rndrw (sysbench's --file-rw-ratio).
    #[arg(long, default_value = "1.5")]
    pub rw_ratio: f64,
    /// I/O engine.
    #[arg(long, default_value = "sync", value_parser = named::<EngineKind>())]
    pub engine: EngineKind,
    /// I/Os in flight per thread (uring, null).
    #[arg(long, default_value = "1")]
    pub iodepth: u32,
    /// Async engines: submit once this many I/Os are queued (1: each as soon as it is queued,
    /// like fio's iodepth_batch_submit=1; --iodepth: one submission per refill).
    #[arg(long, default_value = "1")]
    pub submit_batch: u32,
    /// Async engines: completions handled per pass, at most (1: each finished I/O is replaced
    /// before the next completion is looked at, like fio's iodepth_batch_complete_max=1, so
    /// --iodepth I/Os stay in flight; N: up to N finished I/Os are taken and refilled together)
    /// [default: --submit-batch, so that a submit batch has that many free slots to fill].
    #[arg(long)]
    pub reap_batch: Option<u32>,
    /// Open with O_DIRECT (the default): bypass the page cache as InnoDB does.
    #[arg(long, overrides_with = "buffered")]
    pub direct: bool,
    /// Go through the page cache instead of O_DIRECT.
    #[arg(long)]
    pub buffered: bool,
    /// Open with O_DSYNC: every write is durable when it returns.
    #[arg(long)]
    pub dsync: bool,
    /// Open with O_SYNC.
    #[arg(long)]
    pub sync: bool,
    /// Let reads update the files' access times (by default dbio opens with O_NOATIME, so
    /// atime bookkeeping, which a datadir mounted noatime never does, stays out of the figures).
    #[arg(long)]
    pub atime: bool,
    /// Sync a file after every N writes to it by the same thread (0: never).
    #[arg(long, default_value = "0")]
    pub fsync_every: u64,
    /// fsync or fdatasync (for --fsync-every, --fsync-end and commit).
    #[arg(long, default_value = "fdatasync", value_parser = named::<FsyncMode>())]
    pub fsync_mode: FsyncMode,
    /// Sync every written file when the run ends.
    #[arg(long)]
    pub fsync_end: bool,
    /// Bytes per I/O (16k is an InnoDB page).
    #[arg(long, default_value = "16k", value_parser = parse_size_arg)]
    pub block_size: u64,
    /// Number of files [default: 64; on a prepared file set: its number of files].
    #[arg(long)]
    pub file_num: Option<u64>,
    /// Size of the whole file set [default: 1G; on a prepared file set: its size; for --device:
    /// the whole device].
    #[arg(long, value_parser = parse_size_arg)]
    pub file_total_size: Option<u64>,
    /// Worker threads.
    #[arg(long, default_value = "1")]
    pub threads: u32,
    /// Measured run time (after --warmup) [default: 10s, or none when --events is given].
    #[arg(long, value_parser = parse_duration_arg)]
    pub time: Option<Duration>,
    /// Stop after this many reads+writes over all threads (0: no limit).
    #[arg(long, default_value = "0")]
    pub events: u64,
    /// Run this long before measuring (shown, excluded from the summary).
    #[arg(long, default_value = "0s", value_parser = parse_duration_arg)]
    pub warmup: Duration,
    /// Add this many bytes to every offset (what a misaligned partition costs).
    #[arg(long, default_value = "0", value_parser = parse_size_arg)]
    pub misalign: u64,
    /// uniform, zipf:THETA, or hotspot:P/Q (P% of I/Os go to Q% of the data).
    #[arg(long, default_value = "uniform", value_parser = options::parse_distribution)]
    pub distribution: Distribution,
    /// Open loop at this many I/Os per second over all threads; latency is then measured from
    /// each I/O's intended start (and, separately, from its submission).
    #[arg(long)]
    pub rate: Option<f64>,
    /// Seed of every random choice.
    #[arg(long, default_value = "1")]
    pub seed: u64,
    /// Report interval (fractions allowed: 0.5, 250ms); 0 with --format sysbench: no interval
    /// lines, as sysbench's default.
    #[arg(long, default_value = "1s", value_parser = parse_duration_arg)]
    pub report_interval: Duration,
    /// Percentiles of the summary, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "50,90,95,99,99.9,99.99")]
    pub percentiles: Vec<f64>,
    /// Result format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Also write the result to this file (in --format).
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Keep the file set after a full run.
    #[arg(long)]
    pub keep: bool,
}

impl Args {
    /// The workload flags as plain values.
    fn options(&self) -> Options {
        Options {
            dir: self.dir.clone(),
            device: self.device.clone(),
            mode: self.mode,
            rw_ratio: self.rw_ratio,
            engine: self.engine,
            iodepth: self.iodepth,
            submit_batch: self.submit_batch,
            reap_batch: self.reap_batch,
            buffered: self.buffered,
            dsync: self.dsync,
            sync: self.sync,
            atime: self.atime,
            fsync_every: self.fsync_every,
            fsync_mode: self.fsync_mode,
            fsync_end: self.fsync_end,
            block_size: self.block_size,
            file_num: self.file_num,
            file_total_size: self.file_total_size,
            threads: self.threads,
            time: self.time,
            events: self.events,
            warmup: self.warmup,
            misalign: self.misalign,
            distribution: self.distribution,
            rate: self.rate,
            seed: self.seed,
            report_interval: self.report_interval,
            percentiles: self.percentiles.clone(),
        }
    }
}

/// Turns an engine error into an anyhow error with the right exit code. The engine's messages
/// already quote the OS error they wrap, so the error becomes one message: kept as a chain,
/// the OS error text would be printed twice.
fn bench_err(e: BenchError) -> anyhow::Error {
    if e.is_usage() {
        usage(e.to_string())
    } else {
        anyhow::Error::msg(e.to_string())
    }
}

/// Where human-readable lines go: stdout for text output, stderr when stdout carries JSON/CSV.
struct Console {
    to_stdout: bool,
}

impl Console {
    /// Writes a line. A failed write to stdout is an error (a closed stdout ends the run);
    /// one to stderr is not (see [`to_stderr`]).
    fn line(&self, s: &str) -> anyhow::Result<()> {
        if self.to_stdout {
            let mut o = std::io::stdout().lock();
            o.write_all(s.as_bytes())?;
            o.flush()?;
        } else {
            to_stderr(s);
        }
        Ok(())
    }
}

/// Writes progress, warnings or a summary to stderr. A write error there (a reader of `2>&1`
/// that went away) never stops the run nor loses the result on stdout: it is ignored, where
/// `eprint!` would panic.
fn to_stderr(s: &str) {
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(s.as_bytes()).and_then(|()| e.flush());
}

/// Runs `dbio bench`.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let stop = signals::install();
    let phase = args.phase.map(|p| match p {
        Phase::Prepare => plan::Phase::Prepare,
        Phase::Run => plan::Phase::Run,
        Phase::Cleanup => plan::Phase::Cleanup,
    });
    // A run on a prepared file set takes its geometry from the set's marker.
    let (spec, set) = plan::spec_and_set(phase, &args.options()).map_err(bench_err)?;
    if spec.report_interval_s.is_zero() && args.format != Format::Sysbench {
        return Err(usage(format!(
            "--report-interval 0 (no interval lines, sysbench's default) goes with --format sysbench; \
             the {} result is reported per interval: give an interval such as 1s",
            match args.format {
                Format::Text => "text",
                Format::Json => "JSON",
                _ => "CSV",
            }
        )));
    }
    dbio_bench::spec::validate(&engine_spec(&spec)).map_err(bench_err)?;
    if matches!(args.phase, None | Some(Phase::Run)) {
        dbio_bench::spec::check_resources(&spec).map_err(bench_err)?;
    }
    let console = Console {
        to_stdout: matches!(args.format, Format::Text | Format::Sysbench),
    };
    // Prepare and cleanup lines belong to the text output only: in sysbench format stdout keeps
    // sysbench's exact layout, so they go to stderr there (as they do for JSON and CSV).
    let notes = Console {
        to_stdout: args.format == Format::Text,
    };
    let code = match plan::plan(phase, &spec, set.as_ref()).map_err(bench_err)? {
        Plan::Prepare(d) => prepare(&spec, &d, &notes, stop).map(|_| 0),
        Plan::Cleanup(d) => cleanup(&d, &notes).map(|_| 0),
        Plan::Run => run_phase(&args, &spec, &console, stop, None),
        Plan::Reuse { dir: d, complete } => {
            // Run on the set and keep it; an interrupted prepare is completed first.
            let (prepared, fresh) = if complete {
                (true, None)
            } else {
                let p = prepare(&spec, &d, &notes, stop)?;
                (p.is_some(), p)
            };
            let summary = bench_fileset::set_summary(
                spec.mode,
                spec.file_num,
                dbio_bench::spec::file_size(&spec),
            );
            notes.line(&bench_fileset::using_set(complete, &d, &summary))?;
            if prepared {
                run_phase(&args, &spec, &console, stop, fresh.as_ref())
            } else {
                Ok(signals::EXIT_INTERRUPTED)
            }
        }
        Plan::Full(d) => {
            let prepared = prepare(&spec, &d, &notes, stop);
            let result = match prepared {
                Ok(Some(p)) => run_phase(&args, &spec, &console, stop, Some(&p)),
                Ok(None) => Ok(signals::EXIT_INTERRUPTED),
                Err(e) => Err(e),
            };
            if !args.keep && d.join(fileset::MARKER).exists() {
                let c = cleanup(&d, &notes);
                if let (Ok(_), Err(e)) = (&result, c) {
                    return Err(e);
                }
            }
            result
        }
    }?;
    // Whatever phase the signal stopped (or arrived during), an interrupted command exits 130.
    Ok(
        if code == 0 && stop.load(std::sync::atomic::Ordering::SeqCst) {
            signals::EXIT_INTERRUPTED
        } else {
            code
        },
    )
}

/// Prepares the file set; returns what prepare did, or `None` when interrupted.
fn prepare(
    spec: &Spec,
    dir: &std::path::Path,
    console: &Console,
    stop: &std::sync::atomic::AtomicBool,
) -> anyhow::Result<Option<fileset::Prepared>> {
    let size = dbio_bench::spec::file_size(spec);
    let (files, total) = if spec.mode == Mode::Commit {
        (0, 0)
    } else {
        (spec.file_num, spec.file_num * size)
    };
    let bar = crate::progress::Progress::bytes("prepare: ", total);
    let progress = |done: u64| bar.set(done);
    let p = fileset::prepare(dir, files, size, spec.seed, stop, &progress).map_err(bench_err)?;
    bar.finish();
    if p.interrupted {
        console.line(bench_fileset::PREPARE_INTERRUPTED)?;
        return Ok(None);
    }
    if files > 0 {
        let cache = bench_fileset::prepared_cache(&p.fs, p.in_memory, p.resident_bytes);
        console.line(&bench_fileset::prepared(
            p.files,
            p.file_size_bytes,
            p.bytes,
            dir,
            p.elapsed.as_secs_f64(),
            &cache,
        ))?;
    } else {
        console.line(&bench_fileset::prepared_for_commit(dir))?;
    }
    Ok(Some(p))
}

fn cleanup(dir: &std::path::Path, console: &Console) -> anyhow::Result<()> {
    let c = match fileset::cleanup(dir) {
        Ok(c) => c,
        // Nothing of dbio's there (a second cleanup, or none prepared): nothing to do.
        Err(BenchError::NoFileSet { path, marker }) => {
            return console.line(&bench_fileset::nothing_to_clean(&path, marker));
        }
        Err(e) => return Err(bench_err(e)),
    };
    let line = bench_fileset::cleaned(
        c.removed.len() as u64,
        c.bytes,
        dir,
        c.removed_dir,
        c.foreign_left,
    );
    for p in &c.replaced {
        eprintln!("warning: {}", bench_fileset::left_replaced(p));
    }
    console.line(&line)
}

fn run_phase(
    args: &Args,
    spec: &Spec,
    console: &Console,
    stop: &std::sync::atomic::AtomicBool,
    prepared: Option<&fileset::Prepared>,
) -> anyhow::Result<u8> {
    let target = brun::open_target(spec, args.allow_device_writes).map_err(bench_err)?;
    let environment =
        dbio_bench::environment::environment(spec, target.open_flags.clone(), &target.fs, prepared);
    let warnings =
        dbio_bench::warn::warnings(spec, &environment, dbio_bench::env::meminfo("MemAvailable"));
    for w in &warnings {
        to_stderr(&format!("warning: {w}\n"));
    }
    // Live output: the header and one line per interval as it completes. Text and sysbench
    // formats print them on stdout (they are the result); JSON and CSV show them on stderr as
    // progress, keeping stdout for the machine-readable result.
    let (head, line): (String, fn(&Interval, &Spec) -> String) = match args.format {
        Format::Sysbench => (
            bench_sysbench::header(spec, &environment, &[]),
            bench_sysbench::interval_line,
        ),
        _ => (
            bench_text::header(spec, &environment, &[]),
            bench_text::interval_line,
        ),
    };
    console.line(&head)?;
    let mut live_error: Option<anyhow::Error> = None;
    let mut on_interval = |i: &Interval| {
        if live_error.is_none() {
            if let Err(e) = console.line(&line(i, spec)) {
                // stdout is gone (a closed pipe): nobody reads the result, so the run ends
                // now, as if interrupted, and the files are still cleaned up.
                live_error = Some(e);
                stop.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
    };
    // O_DIRECT that a filesystem silently ignores shows up as file pages entering the page
    // cache during the run: a warning.
    let (out, direct_ignored) =
        dbio_bench::result::run_checked(spec, &target, &environment, stop, &mut on_interval)
            .map_err(bench_err)?;
    let mut warnings = warnings;
    if let Some(w) = direct_ignored {
        to_stderr(&format!("warning: {w}\n"));
        warnings.push(w);
    }
    let interrupted = stop.load(std::sync::atomic::Ordering::SeqCst);
    let (result, run_error) =
        dbio_bench::result::bench_result(out, spec, environment, warnings, interrupted);
    // stdout: the summary after the live lines (text, sysbench), or the whole result (JSON,
    // CSV). --output FILE: the whole result in the chosen format.
    let (tail, whole) = match args.format {
        Format::Text => (
            bench_text::summary(&result),
            TextExporter.to_string(&result)?,
        ),
        Format::Sysbench => (
            bench_sysbench::summary(&result),
            SysbenchExporter.to_string(&result)?,
        ),
        Format::Json => {
            let j = JsonExporter.to_string(&result)?;
            (j.clone(), j)
        }
        Format::Csv => {
            let c = CsvExporter.to_string(&result)?;
            (c.clone(), c)
        }
    };
    if !console.to_stdout {
        to_stderr(&bench_text::summary(&result));
    }
    // A closed stdout does not keep the result from --output.
    let printed = match live_error {
        Some(e) => Err(e),
        None => output::emit(None, tail.as_bytes()),
    };
    if let Some(p) = &args.output {
        output::write_file(p, whole.as_bytes()).with_context(|| {
            format!(
                "the result is on stdout above; writing {} failed",
                p.display()
            )
        })?;
    }
    printed?;
    if let Some(e) = run_error {
        return Err(bench_err(e))
            .context("the run stopped early; the partial result above covers what ran");
    }
    let ios = result.summary.total.count + result.summary.fsync.count;
    if let Some(e) = dbio_bench::result::nothing_measured(spec, ios, interrupted) {
        return Err(bench_err(e));
    }
    Ok(if interrupted {
        signals::EXIT_INTERRUPTED
    } else {
        0
    })
}
