//! `dbio sweep`: benchmarks over threads, iodepth, block size, mode, misalignment and I/O
//! scheduler, one bench run per point on one prepared file set. The flags become
//! [`SweepOptions`]; `dbio_bench::sweep::run` does the work and writes `DIR/sweep.json` and
//! `DIR/points/*.json`; this file shows progress and renders the result.

use crate::cli::{named, parse_size_arg, usage};
use crate::cmd::bench::args::WorkloadArgs;
use crate::output::{to_stderr, OutputArgs};
use crate::progress::Progress;
use crate::signals;
use dbio_bench::sweep::{Events, SweepOptions, Workload};
use dbio_schema::bench::{BufferLayout, Interval, Mode};
use dbio_schema::sweep::{Axes, Point, PointResult, Status, SweepResult};
use std::path::PathBuf;

/// What each point of a sweep runs (`--workload`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum WorkloadKind {
    /// A dbio bench run.
    Bench,
    /// Debian's sysbench oltp_read_write against MySQL/MariaDB.
    SysbenchOltp,
}

/// Arguments of `dbio sweep`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Every combination of the comma-separated values is one dbio bench run (a point), on one file set \
prepared once in --dir (removed at the end unless --keep; a set already there is used and kept).\n\
Each point's complete result goes to DIR/points/ID.json and the sweep's to DIR/sweep.json, after every point: \
an interrupted sweep continues with the same command and --resume."
)]
pub struct Args {
    #[command(flatten)]
    w: WorkloadArgs,
    /// Workloads, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "rndrw", value_parser = named::<Mode>())]
    mode: Vec<Mode>,
    /// Worker threads, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16,32,64")]
    threads: Vec<u32>,
    /// I/Os in flight per thread (uring, null), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    iodepth: Vec<u32>,
    /// Bytes per I/O, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "16k", value_parser = parse_size_arg)]
    block_size: Vec<u64>,
    /// Offsets added to every I/O (0,512: the aligned/misaligned A/B), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "0", value_parser = parse_size_arg)]
    misalign: Vec<u64>,
    /// I/O schedulers to set on the disks under the target for each point (root), restored
    /// at the end, also on error and Ctrl-C.
    #[arg(long, value_delimiter = ',')]
    scheduler: Vec<String>,
    /// I/O buffer layouts (sync, uring), comma-separated: 4k (ordinary pages, as a buffer
    /// pool without large pages) and huge (huge pages, as with large_pages=ON). The report
    /// says when they differ by more than the noise.
    #[arg(long, value_delimiter = ',', value_parser = named::<BufferLayout>())]
    buffers: Vec<BufferLayout>,
    /// Runs of every point (the whole plan is run this many times, one after the other).
    #[arg(long, default_value = "1")]
    repeat: u32,
    /// Directory for sweep.json and points/ (created if missing).
    #[arg(long, value_name = "DIR")]
    output_dir: PathBuf,
    /// Continue the sweep in --output-dir: finished points are kept, the rest run.
    #[arg(long)]
    resume: bool,
    /// Keep the file set at the end.
    #[arg(long)]
    keep: bool,
    /// Start the first point at this UTC time (RFC 3339, e.g. 2026-11-24T10:00:00Z), so one
    /// sweep started on many hosts runs in step.
    #[arg(long, value_name = "TIME")]
    start_at: Option<jiff::Timestamp>,
    /// What each point runs: bench (a dbio bench run), or sysbench-oltp (Debian's sysbench
    /// oltp_read_write against MySQL/MariaDB at each --threads value, for --time; tables
    /// prepared once and dropped at the end unless --keep or they were there).
    #[arg(long, value_enum, default_value = "bench")]
    workload: WorkloadKind,
    /// The server for --workload sysbench-oltp (the database must exist).
    #[arg(
        long,
        value_name = "DSN",
        default_value = "mysql://root@127.0.0.1:3306/test"
    )]
    mysql: String,
    /// sysbench tables (--workload sysbench-oltp).
    #[arg(long, default_value = "4")]
    oltp_tables: u32,
    /// Rows per sysbench table (--workload sysbench-oltp).
    #[arg(long, default_value = "10000")]
    oltp_table_size: u64,
    /// The server's datadir (--workload sysbench-oltp): its device's %util is recorded and
    /// --scheduler switches its disks.
    #[arg(long, value_name = "DIR")]
    datadir: Option<PathBuf>,
    #[command(flatten)]
    out: OutputArgs<SweepResult>,
}

/// Progress on stderr: a bar over the points, the point being run and its last interval.
struct Show {
    bar: Progress,
    current: String,
}

impl Events for Show {
    fn prepared(&mut self, p: Option<&dbio_bench::fileset::Prepared>) {
        if p.is_none() {
            self.bar.message("using the file set already prepared");
        }
    }
    fn point_start(&mut self, index: usize, _of: usize, point: &Point) {
        self.bar.set(index as u64);
        self.current = point.id.clone();
        self.bar.message(&point.id);
    }
    fn interval(&mut self, iv: &Interval) {
        self.bar.message(&format!(
            "{}: {:.0} IOPS at {:.1} s",
            self.current, iv.total.iops, iv.end_s
        ));
    }
    fn point_end(&mut self, r: &PointResult) {
        if let Some(e) = &r.error {
            to_stderr(&format!("dbio: point {} failed: {e}\n", r.point.id));
        }
    }
    fn warning(&mut self, w: &str) {
        self.bar.message(&format!("{}: warning: {w}", self.current));
    }
}

/// Runs `dbio sweep`.
pub fn run(a: Args) -> anyhow::Result<u8> {
    let stop = signals::install();
    let workload = match a.workload {
        WorkloadKind::SysbenchOltp => Workload::SysbenchOltp {
            sysbench: dbio_bench::oltp::Sysbench::from_dsn(
                &a.mysql,
                a.oltp_tables,
                a.oltp_table_size,
            )
            .map_err(|e| usage(e.to_string()))?,
            datadir: a.datadir.clone(),
            secs: a
                .w
                .time
                .map_or(10, |t| t.as_secs_f64().ceil().max(1.0) as u64),
        },
        WorkloadKind::Bench => Workload::Bench,
    };
    // The swept values of each point replace the first ones.
    let mut base = a.w.options(
        a.mode[0],
        a.iodepth[0],
        a.block_size[0],
        a.threads[0],
        a.misalign[0],
    );
    if let Some(v) = &a.w.like_server {
        if !a.buffers.is_empty() {
            return Err(usage(
                "--like-server and --buffers both set the buffers' layout: give one".to_string(),
            ));
        }
        (base.huge_pages, base.buffers) =
            crate::cmd::bench::like_server::resolve(v).map(|(h, c)| (h, Some(c)))?;
    }
    let opts = SweepOptions {
        base,
        axes: Axes {
            mode: a.mode,
            block_size_bytes: a.block_size,
            misalign_bytes: a.misalign,
            scheduler: a.scheduler,
            iodepth: a.iodepth,
            threads: a.threads,
            buffers: a.buffers,
        },
        repeat: a.repeat,
        output_dir: a.output_dir,
        resume: a.resume,
        keep: a.keep,
        allow_device_writes: a.w.allow_device_writes,
        start_at: a.start_at.map(std::time::SystemTime::from),
        workload,
    };
    let sweep_err = |e: dbio_bench::BenchError| match e {
        e if e.is_usage() => usage(e.to_string()),
        e => anyhow::Error::msg(e.to_string()),
    };
    // The result is written at the end: where it goes is checked now, not after the sweep
    // (-o may name a file in the --output-dir the sweep creates).
    a.out.check_under(&opts.output_dir)?;
    let total = (opts.axes.len() * opts.repeat as usize) as u64;
    let mut show = Show {
        bar: Progress::steps("sweep: ", total),
        current: String::new(),
    };
    let res = dbio_bench::sweep::run(&opts, stop, &mut show).map_err(sweep_err)?;
    show.bar.finish();
    a.out.emit_result(&res)?;
    let failed = res.points.iter().any(|p| p.status == Status::Failed);
    Ok(if res.interrupted {
        signals::EXIT_INTERRUPTED
    } else if failed {
        crate::cli::EXIT_FAILURE
    } else {
        0
    })
}
