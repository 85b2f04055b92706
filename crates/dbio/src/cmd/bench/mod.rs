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
    // The default run (no --mode, on a --dir, with a real engine): data pages, then commits,
    // then a verdict. The null engine does no I/O: nothing for a verdict to say.
    let default_run = args.mode.is_none()
        && args.w.device.is_none()
        && args.w.engine != dbio_schema::bench::EngineKind::Null
        && args.out.format != Format::Sysbench
        && !matches!(args.phase, Some(Phase::Prepare | Phase::Cleanup));
    let page_misses = match args.page_misses {
        Some(_) if !default_run => {
            return Err(usage(
                "--page-misses sets the default run's verdict (no --mode, on a --dir, not --engine null nor --format sysbench): drop it, or drop --mode",
            ))
        }
        Some(n) if n > dbio_bench::verdict::MAX_PAGE_MISSES => {
            return Err(usage(format!(
                "--page-misses {n} is out of range: use 0 to {}",
                dbio_bench::verdict::MAX_PAGE_MISSES
            )))
        }
        Some(n) => n,
        None => dbio_bench::verdict::DEFAULT_PAGE_MISSES,
    };
    // A run on a prepared file set takes its geometry from the set's marker.
    let mut opts = args.options();
    if default_run && opts.time.is_none() && opts.events == 0 {
        opts.time = Some(dbio_bench::options::DEFAULT_PHASE_TIME);
    }
    if let Some(v) = &args.w.like_server {
        (opts.huge_pages, opts.buffers) = like_server::resolve(v).map(|(h, c)| (h, Some(c)))?;
    }
    let (spec, set) = plan::spec_and_set(phase, &opts).map_err(bench_err)?;
    // The commit phase: `--mode commit` with the same flags, in the same directory.
    let commit = default_run.then(|| {
        let mut o = opts.clone();
        o.mode = Mode::Commit;
        o.spec()
    });
    let job = Job {
        spec: &spec,
        commit: commit.as_ref(),
        page_misses,
    };
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
    if let Some(c) = &commit {
        dbio_bench::spec::validate(&engine_spec(c)).map_err(bench_err)?;
    }
    if matches!(args.phase, None | Some(Phase::Run)) {
        dbio_bench::spec::check_resources(&spec).map_err(bench_err)?;
        if let Some(c) = &commit {
            dbio_bench::spec::check_resources(c).map_err(bench_err)?;
        }
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
        Plan::Run => run_job(&args, &job, &console, stop, None),
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
                run_job(&args, &job, &console, stop, fresh.as_ref())
            } else {
                Ok(signals::EXIT_INTERRUPTED)
            }
        }
        Plan::Full(d) => {
            let prepared = prepare(&spec, &d, &notes, stop);
            let result = match prepared {
                Ok(Some(p)) => run_job(&args, &job, &console, stop, Some(&p)),
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

/// What a run measures: the spec of its one phase, or of the default run's data-page phase
/// with the commit phase that follows it.
struct Job<'a> {
    spec: &'a Spec,
    commit: Option<&'a Spec>,
    page_misses: u32,
}

/// One measured phase: its result, the worker error that stopped it early and the error of a
/// closed stdout while it printed its live lines.
struct Measured {
    result: dbio_schema::bench::BenchResult,
    run_error: Option<BenchError>,
    live_error: Option<anyhow::Error>,
}

/// Runs the job's phases, prints what people read as they end, and writes the result.
fn run_job(
    args: &Args,
    job: &Job,
    console: &Console,
    stop: &std::sync::atomic::AtomicBool,
    prepared: Option<&fileset::Prepared>,
) -> anyhow::Result<u8> {
    let Some(commit) = job.commit else {
        let m = measure(args, job.spec, console, stop, prepared, false)?;
        return finish(args, m, &[job.spec]);
    };
    console.line(&bench_text::default_run_intro(job.spec))?;
    let mut pages = measure(args, job.spec, console, stop, prepared, true)?;
    let mut run = dbio_schema::bench::DefaultRun {
        commit: None,
        verdict: None,
    };
    let go_on = pages.live_error.is_none()
        && pages.run_error.is_none()
        && !stop.load(std::sync::atomic::Ordering::SeqCst);
    let mut specs = vec![job.spec];
    if go_on {
        console.line(bench_text::COMMIT_PHASE)?;
        let c = measure(args, commit, console, stop, None, false)?;
        run.verdict = dbio_bench::verdict::verdict(&pages.result, &c.result, job.page_misses);
        pages.live_error = c.live_error;
        pages.run_error = c.run_error;
        run.commit = Some(Box::new(c.result));
        specs.push(commit);
    }
    pages.result.default_run = Some(run);
    if pages.live_error.is_none() {
        let v = bench_text::verdict(&pages.result);
        if let Err(e) = console.line(&v) {
            pages.live_error = Some(e);
        }
    }
    finish(args, pages, &specs)
}

/// Runs one phase: its warnings, header and live interval lines, then its summary.
fn measure(
    args: &Args,
    spec: &Spec,
    console: &Console,
    stop: &std::sync::atomic::AtomicBool,
    prepared: Option<&fileset::Prepared>,
    default_pages: bool,
) -> anyhow::Result<Measured> {
    let mut setup =
        dbio_bench::result::setup(spec, args.w.allow_device_writes, prepared).map_err(bench_err)?;
    if default_pages {
        setup.warnings = dbio_bench::warn::for_default_run(std::mem::take(&mut setup.warnings));
    }
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
    // The summary that ends the live lines: sysbench's after sysbench's lines, else dbio's;
    // on stdout for text and sysbench, else on stderr (stdout or -o FILE gets the whole
    // result at the end).
    let summary = if args.out.format == Format::Sysbench {
        bench_sysbench::summary(&result)
    } else {
        bench_text::summary(&result)
    };
    if live_error.is_none() {
        if let Err(e) = console.line(&summary) {
            live_error = Some(e);
        }
    }
    Ok(Measured {
        result,
        run_error,
        live_error,
    })
}

/// Writes the whole result (stdout for JSON and CSV, or -o FILE) and chooses the exit code:
/// the run's error, a phase that measured nothing, 130 when interrupted.
fn finish(args: &Args, m: Measured, specs: &[&Spec]) -> anyhow::Result<u8> {
    let Measured {
        result,
        run_error,
        live_error,
    } = m;
    let whole = args.out.render(&result)?;
    let printed = match (live_error, args.out.file()) {
        (Some(e), _) => Err(e),
        (None, None) if args.out.format.is_machine() => output::emit(None, &whole),
        (None, None) => Ok(()),
        (None, Some(p)) => output::write_file(p, &whole).with_context(|| {
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
    let commit = result
        .default_run
        .as_ref()
        .and_then(|d| d.commit.as_deref());
    let phases = std::iter::once(&result).chain(commit);
    let mut interrupted = false;
    for (r, spec) in phases.zip(specs) {
        let ios = r.summary.total.count + r.summary.fsync.count;
        if let Some(e) = dbio_bench::result::nothing_measured(spec, ios, r.interrupted) {
            return Err(bench_err(e));
        }
        interrupted |= r.interrupted;
    }
    Ok(if interrupted {
        signals::EXIT_INTERRUPTED
    } else {
        0
    })
}
