//! `dbio bench [prepare|run|cleanup]`: database-shaped I/O with exact latency histograms.

use crate::cli::usage;
use crate::output::{self, to_stderr, Console};
use crate::signals;

pub mod args;
pub mod like_server;
use anyhow::Context;
pub use args::{Args, Phase};
use dbio_bench::options::engine_spec;
use dbio_bench::plan::{self, Plan};
use dbio_bench::{fileset, BenchError};
use dbio_report::export::sysbench::bench as bench_sysbench;
use dbio_report::export::text::bench as bench_text;
use dbio_report::export::text::bench_fileset;
use dbio_report::export::Format;
use dbio_schema::bench::{Interval, Mode, Spec};

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

/// Runs `dbio bench`.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let stop = signals::install();
    let phase = args.phase.map(|p| match p {
        Phase::Prepare => plan::Phase::Prepare,
        Phase::Run => plan::Phase::Run,
        Phase::Cleanup => plan::Phase::Cleanup,
    });
    // A run on a prepared file set takes its geometry from the set's marker.
    let mut opts = args.options();
    if let Some(v) = &args.w.like_server {
        (opts.huge_pages, opts.buffers) = like_server::resolve(v).map(|(h, c)| (h, Some(c)))?;
    }
    let (spec, set) = plan::spec_and_set(phase, &opts).map_err(bench_err)?;
    if spec.report_interval_s.is_zero() && args.out.format != Format::Sysbench {
        return Err(usage(format!(
            "--report-interval 0 (no interval lines, sysbench's default) goes with --format sysbench; \
             the {} result is reported per interval: give an interval such as 1s",
            if args.out.format == Format::Text {
                "text".to_string()
            } else {
                args.out.format.name().to_uppercase()
            }
        )));
    }
    dbio_bench::spec::validate(&engine_spec(&spec)).map_err(bench_err)?;
    if matches!(args.phase, None | Some(Phase::Run)) {
        dbio_bench::spec::check_resources(&spec).map_err(bench_err)?;
        // The result is written at the end: where it goes is checked now, not after the run
        // (-o may name a file in the --dir that prepare creates).
        match &spec.target {
            dbio_schema::bench::Target::Dir(d) => args.out.check_under(d)?,
            dbio_schema::bench::Target::Device(_) => args.out.check()?,
        }
    }
    let console = Console {
        to_stdout: args.out.people_on_stdout(),
    };
    // Prepare and cleanup lines belong to the text output only: in sysbench format stdout keeps
    // sysbench's exact layout, so they go to stderr there (as they do for JSON and CSV).
    let notes = Console {
        to_stdout: args.out.people_on_stdout() && args.out.format == Format::Text,
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
        to_stderr(&format!("warning: {}\n", bench_fileset::left_replaced(p)));
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
    let setup =
        dbio_bench::result::setup(spec, args.w.allow_device_writes, prepared).map_err(bench_err)?;
    for w in &setup.warnings {
        to_stderr(&format!("warning: {w}\n"));
    }
    let shown = setup.warnings.len();
    // Live output: the header and one line per interval as it completes. Text and sysbench
    // formats print them on stdout (they are the result); JSON and CSV show them on stderr as
    // progress, keeping stdout for the machine-readable result.
    let (head, line): (String, fn(&Interval, &Spec) -> String) =
        if args.out.format == Format::Sysbench {
            (
                bench_sysbench::header(spec, &setup.environment, &[]),
                bench_sysbench::interval_line,
            )
        } else {
            (
                bench_text::header(spec, &setup.environment, &[]),
                bench_text::interval_line,
            )
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
    // cache during the run: a warning added to the result, shown now.
    let (result, run_error) =
        dbio_bench::result::measure(spec, setup, stop, &mut on_interval).map_err(bench_err)?;
    for w in &result.warnings[shown..] {
        to_stderr(&format!("warning: {w}\n"));
    }
    let interrupted = result.interrupted;
    // stdout: the summary after the live lines (text, sysbench), or the whole result (JSON,
    // CSV). -o/--output FILE: the whole result in the chosen format goes there instead, and
    // the live lines and the text summary were shown on stderr.
    let whole = String::from_utf8(args.out.render(&result)?)?;
    // The summary that ends the live lines: sysbench's after sysbench's lines, else dbio's.
    let summary = if args.out.format == Format::Sysbench {
        bench_sysbench::summary(&result)
    } else {
        bench_text::summary(&result)
    };
    if !console.to_stdout {
        to_stderr(&summary);
    }
    let tail = if args.out.format.is_machine() {
        whole.clone()
    } else {
        summary
    };
    let printed = match (live_error, args.out.file()) {
        (Some(e), _) => Err(e),
        (None, None) => output::emit(None, tail.as_bytes()),
        (None, Some(p)) => output::write_file(p, whole.as_bytes()).with_context(|| {
            format!(
                "the summary is on stderr above; writing the result to {} failed",
                p.display()
            )
        }),
    };
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
