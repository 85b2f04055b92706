//! The command line of `dbio bench`: the clap flags and their plain [`Options`].

use crate::cli::{named, parse_duration_arg, parse_size_arg};
use crate::output::OutputArgs;
use clap::ValueEnum;
use dbio_bench::options::{self, Options};
use dbio_schema::bench::{Distribution, EngineKind, FsyncMode, Mode};
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

/// Arguments of `dbio bench`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Without a phase, dbio bench prepares the file set, runs, and removes the files (--keep keeps them); \
on a file set already prepared in --dir (by bench prepare, or kept with --keep) it runs on that set and keeps it.\n\
bench run (and bench on a prepared set) takes --file-num and --file-total-size from the set; given, they must match it.\n\
Without --mode (the default run, on a --dir): 16 KiB random read/write mix (1.5 reads per write, as --mode rndrw) for 5 s, \
then commits (as --mode commit: each thread appends records to its own log and syncs each) for 5 s on the same file system, \
then a verdict: how long a transaction with one commit and --page-misses page reads waits. --time, --events and every other flag apply to each phase. \
--mode MODE runs that one phase alone (10 s); so do --device, --engine null and --format sysbench (the data-page phase).\n\
Defaults: 64 files, 1 GiB in ./dbio-data, O_DIRECT, 1 thread."
)]
pub struct Args {
    /// prepare, run or cleanup; omit for all three.
    #[arg(value_enum)]
    pub phase: Option<Phase>,
    #[command(flatten)]
    pub w: WorkloadArgs,
    /// Workload [default: the default run: rndrw, then commit, then a verdict].
    #[arg(long, value_parser = named::<Mode>())]
    pub mode: Option<Mode>,
    /// The default run's verdict: page reads (buffer-pool misses) a transaction waits for
    /// besides its commit [default: 10].
    #[arg(long, value_name = "N")]
    pub page_misses: Option<u32>,
    /// I/Os in flight per thread (uring, null).
    #[arg(long, default_value = "1")]
    pub iodepth: u32,
    /// Bytes per I/O (16k is an InnoDB page).
    #[arg(long, default_value = "16k", value_parser = parse_size_arg)]
    pub block_size: u64,
    /// Worker threads.
    #[arg(long, default_value = "1")]
    pub threads: u32,
    /// Add this many bytes to every offset (what a misaligned partition costs).
    #[arg(long, default_value = "0", value_parser = parse_size_arg)]
    pub misalign: u64,
    #[command(flatten)]
    pub out: OutputArgs<dbio_schema::bench::BenchResult>,
    /// Keep the file set after a full run.
    #[arg(long)]
    pub keep: bool,
}

/// The workload flags `dbio bench` and `dbio sweep` share: everything but the swept ones
/// (--mode, --threads, --iodepth, --block-size, --misalign) and the output.
#[derive(clap::Args, Debug, Clone)]
pub struct WorkloadArgs {
    /// Directory of the file set.
    #[arg(long, default_value = "dbio-data", conflicts_with = "device")]
    pub dir: PathBuf,
    /// Benchmark this block device instead of files (reads only, unless --allow-device-writes).
    #[arg(long)]
    pub device: Option<PathBuf>,
    /// Allow write modes on --device (destroys its data; refused while it is mounted).
    #[arg(long)]
    pub allow_device_writes: bool,
    /// Reads per write in rndrw (sysbench's --file-rw-ratio).
    #[arg(long, default_value = "1.5")]
    pub rw_ratio: f64,
    /// I/O engine.
    #[arg(long, default_value = "sync", value_parser = named::<EngineKind>())]
    pub engine: EngineKind,
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
    /// io_uring: read and write with READ_FIXED/WRITE_FIXED into buffers registered with the
    /// ring (fio's --fixedbufs). Off: plain READ/WRITE from ordinary aligned buffers, as MariaDB
    /// and MySQL submit them.
    #[arg(long)]
    pub fixed_buffers: bool,
    /// io_uring: register the files with the ring and address them by index (fio's
    /// --registerfiles). Off: by descriptor, as MariaDB and MySQL do.
    #[arg(long)]
    pub register_files: bool,
    /// sync and uring: I/O buffers in ordinary 4 KiB pages, 16 KiB-aligned frames of one
    /// mapping, as InnoDB's buffer pool without large pages. The default; kept for scripts.
    #[arg(long, conflicts_with_all = ["huge_pages", "like_server"])]
    pub no_huge_pages: bool,
    /// sync and uring: I/O buffers in huge pages, each physically contiguous, as a buffer pool
    /// with large_pages=ON. On some virtual disks a 16 KiB read into one contiguous buffer is
    /// much faster than into 4 scattered pages: `dbio sweep --buffers 4k,huge` measures it.
    #[arg(long, conflicts_with = "like_server")]
    pub huge_pages: bool,
    /// sync and uring: lay the I/O buffers out as the running MariaDB/MySQL server's buffer
    /// pool: a DSN (mysql://user:pass@host:port/; reads @@large_pages) or the server's PID
    /// (reads the buffer pool mapping's page sizes in /proc/PID/smaps).
    #[arg(long, value_name = "DSN|PID", value_parser = super::like_server::Server::parse)]
    pub like_server: Option<super::like_server::Server>,
    /// io_uring: poll for completions up to N times (io_uring_enter without waiting, about
    /// 0.2 us each) before sleeping; while polls find nothing (a disk) it polls only every 1, 2,
    /// 4 ... 64 sleeps. Waking a sleeping thread costs more than a tmpfs read; 0 sleeps at once,
    /// as fio does.
    #[arg(long, default_value_t = options::DEFAULT_SPIN_POLLS, value_name = "N")]
    pub spin_polls: u32,
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
    /// Number of files [default: 64; on a prepared file set: its number of files].
    #[arg(long)]
    pub file_num: Option<u64>,
    /// Size of the whole file set [default: 1G; on a prepared file set: its size; for --device:
    /// the whole device].
    #[arg(long, value_parser = parse_size_arg)]
    pub file_total_size: Option<u64>,
    /// Measured run time (after --warmup) [default: 10s; each phase of the default run 5s;
    /// none when --events is given].
    #[arg(long, value_parser = parse_duration_arg)]
    pub time: Option<Duration>,
    /// Stop after this many reads+writes over all threads (0: no limit).
    #[arg(long, default_value = "0")]
    pub events: u64,
    /// Run this long before measuring (shown, excluded from the summary).
    #[arg(long, default_value = "0s", value_parser = parse_duration_arg)]
    pub warmup: Duration,
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
}

impl Args {
    /// The workload flags as plain values.
    pub fn options(&self) -> Options {
        self.w.options(
            self.mode.unwrap_or(Mode::Rndrw),
            self.iodepth,
            self.block_size,
            self.threads,
            self.misalign,
        )
    }
}

impl WorkloadArgs {
    /// The workload flags as plain values, with the values of the flags a sweep varies.
    pub fn options(
        &self,
        mode: Mode,
        iodepth: u32,
        block_size: u64,
        threads: u32,
        misalign: u64,
    ) -> Options {
        Options {
            dir: self.dir.clone(),
            device: self.device.clone(),
            mode,
            rw_ratio: self.rw_ratio,
            engine: self.engine,
            iodepth,
            submit_batch: self.submit_batch,
            reap_batch: self.reap_batch,
            fixed_buffers: self.fixed_buffers,
            register_files: self.register_files,
            huge_pages: self.huge_pages,
            buffers: self.huge_pages.then(|| dbio_schema::bench::BufferChoice {
                source: dbio_schema::bench::BufferSource::Flag,
                why: "--huge-pages".into(),
            }),
            spin_polls: self.spin_polls,
            buffered: self.buffered,
            dsync: self.dsync,
            sync: self.sync,
            atime: self.atime,
            fsync_every: self.fsync_every,
            fsync_mode: self.fsync_mode,
            fsync_end: self.fsync_end,
            block_size,
            file_num: self.file_num,
            file_total_size: self.file_total_size,
            threads,
            time: self.time,
            events: self.events,
            warmup: self.warmup,
            misalign,
            distribution: self.distribution,
            rate: self.rate,
            seed: self.seed,
            report_interval: self.report_interval,
            percentiles: self.percentiles.clone(),
        }
    }
}
