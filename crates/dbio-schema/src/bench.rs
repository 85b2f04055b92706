//! The result of `dbio bench`: the spec that was run, the environment it ran in, every report
//! interval and the final summary with full histograms. Schema `dbio.bench/1`: field names are
//! stable and carry units (`iops`, `bytes_per_s`, `lat_ns`); new fields may be added, existing
//! ones keep their meaning.

use crate::hist::{HistogramData, LatencyHistogram};
use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::path::PathBuf;
use std::time::Duration;

/// The schema name and version of [`BenchResult`] (see [`crate::doc`]).
pub const BENCH_SCHEMA: &str = crate::doc::BENCH;

/// The percentiles reported when `--percentiles` is not given.
pub const DEFAULT_PERCENTILES: [f64; 6] = [50.0, 90.0, 95.0, 99.0, 99.9, 99.99];

/// An enum of the schema that people name by its result name (`rndrw`, `uring`, ...): the
/// command line parses it from these names, and help lists them with their descriptions.
pub trait Named: Sized + Copy + 'static {
    /// Every value, in the order help lists them.
    const ALL: &'static [Self];
    /// The name used on the command line and in results.
    fn name(self) -> &'static str;
    /// One line for help.
    fn help(self) -> &'static str;
    /// The value with this name.
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.name() == name)
    }
}

/// What the benchmark does (sysbench's mode names, plus `commit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Sequential write over the file set.
    Seqwr,
    /// Sequential rewrite of the file set.
    Seqrewr,
    /// Sequential read.
    Seqrd,
    /// Random read.
    Rndrd,
    /// Random write.
    Rndwr,
    /// Random reads and writes, `rw_ratio` reads per write.
    Rndrw,
    /// Each thread appends records to its own log file and makes each durable.
    Commit,
}

impl Named for Mode {
    const ALL: &'static [Mode] = &[
        Mode::Seqwr,
        Mode::Seqrewr,
        Mode::Seqrd,
        Mode::Rndrd,
        Mode::Rndwr,
        Mode::Rndrw,
        Mode::Commit,
    ];
    fn name(self) -> &'static str {
        match self {
            Mode::Seqwr => "seqwr",
            Mode::Seqrewr => "seqrewr",
            Mode::Seqrd => "seqrd",
            Mode::Rndrd => "rndrd",
            Mode::Rndwr => "rndwr",
            Mode::Rndrw => "rndrw",
            Mode::Commit => "commit",
        }
    }
    fn help(self) -> &'static str {
        match self {
            Mode::Seqwr => "sequential write",
            Mode::Seqrewr => "sequential rewrite",
            Mode::Seqrd => "sequential read",
            Mode::Rndrd => "random read",
            Mode::Rndwr => "random write",
            Mode::Rndrw => "random read/write mix (--rw-ratio reads per write)",
            Mode::Commit => {
                "each thread appends --block-size records to its own log and makes each durable"
            }
        }
    }
}

impl Mode {
    /// The name used on the command line and in results.
    pub fn name(self) -> &'static str {
        Named::name(self)
    }
    /// Whether the mode writes.
    pub fn writes(self) -> bool {
        !matches!(self, Mode::Seqrd | Mode::Rndrd)
    }
    /// Whether the mode reads.
    pub fn reads(self) -> bool {
        matches!(self, Mode::Seqrd | Mode::Rndrd | Mode::Rndrw)
    }
    /// Whether offsets are random.
    pub fn random(self) -> bool {
        matches!(self, Mode::Rndrd | Mode::Rndwr | Mode::Rndrw)
    }
}

/// How I/O is issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// pread/pwrite, one I/O at a time per thread.
    Sync,
    /// io_uring with `iodepth` I/Os in flight per thread.
    Uring,
    /// No I/O at all: for testing everything above the engine.
    Null,
}

impl Named for EngineKind {
    const ALL: &'static [EngineKind] = &[EngineKind::Sync, EngineKind::Uring, EngineKind::Null];
    fn name(self) -> &'static str {
        match self {
            EngineKind::Sync => "sync",
            EngineKind::Uring => "uring",
            EngineKind::Null => "null",
        }
    }
    fn help(self) -> &'static str {
        match self {
            EngineKind::Sync => "pread/pwrite, one I/O in flight per thread",
            EngineKind::Uring => "io_uring, --iodepth I/Os in flight per thread",
            EngineKind::Null => "no I/O (tests the layers above the engine)",
        }
    }
}

impl EngineKind {
    /// The name used on the command line and in results.
    pub fn name(self) -> &'static str {
        Named::name(self)
    }
}

/// fsync or fdatasync.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsyncMode {
    /// fsync(2): data and all metadata.
    Fsync,
    /// fdatasync(2): data and the metadata needed to read it.
    Fdatasync,
}

impl Named for FsyncMode {
    const ALL: &'static [FsyncMode] = &[FsyncMode::Fsync, FsyncMode::Fdatasync];
    fn name(self) -> &'static str {
        match self {
            FsyncMode::Fsync => "fsync",
            FsyncMode::Fdatasync => "fdatasync",
        }
    }
    fn help(self) -> &'static str {
        match self {
            FsyncMode::Fsync => "fsync(2): data and all metadata",
            FsyncMode::Fdatasync => "fdatasync(2): data and the metadata needed to read it",
        }
    }
}

/// Where offsets fall in the data set.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Distribution {
    /// Every block equally likely.
    Uniform,
    /// Zipf with exponent `theta` (> 0): block of rank k has weight 1/k^theta.
    Zipf {
        /// The exponent.
        theta: f64,
    },
    /// `io_pct`% of I/Os go to `data_pct`% of the blocks, the rest to the others.
    Hotspot {
        /// Share of I/Os that go to the hot blocks, in percent.
        io_pct: f64,
        /// Share of the blocks that are hot, in percent.
        data_pct: f64,
    },
}

impl std::fmt::Display for Distribution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Distribution::Uniform => write!(f, "uniform"),
            Distribution::Zipf { theta } => write!(f, "zipf:{theta}"),
            Distribution::Hotspot { io_pct, data_pct } => write!(f, "hotspot:{io_pct}/{data_pct}"),
        }
    }
}

/// What is benchmarked: files in a directory, or a block device.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "path", rename_all = "lowercase")]
pub enum Target {
    /// A file set in this directory.
    Dir(PathBuf),
    /// This block device, used whole.
    Device(PathBuf),
}

impl Target {
    /// The path of the directory or device.
    pub fn path(&self) -> &std::path::Path {
        match self {
            Target::Dir(p) | Target::Device(p) => p,
        }
    }
}

/// A benchmark specification: everything needed to run it again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spec {
    /// What to benchmark.
    pub target: Target,
    /// The workload.
    pub mode: Mode,
    /// The I/O engine.
    pub engine: EngineKind,
    /// Bytes per I/O.
    pub block_size_bytes: u64,
    /// Number of files in the set (1 for a device).
    pub file_num: u64,
    /// Bytes in the whole file set (for a device: the part of it used).
    pub file_total_size_bytes: u64,
    /// Worker threads.
    pub threads: u32,
    /// I/Os in flight per thread (1 for the sync engine).
    pub iodepth: u32,
    /// Async engines: I/Os queued before they are submitted together (1: each at once).
    #[serde(default = "one")]
    pub submit_batch: u32,
    /// Async engines: completions taken per pass, at most (1: each is answered with a new I/O
    /// before the next is looked at, so `iodepth` I/Os stay in flight, as fio does).
    #[serde(default = "one")]
    pub reap_batch: u32,
    /// io_uring: READ_FIXED/WRITE_FIXED on buffers registered with the ring (fio's
    /// `--fixedbufs`); false: plain READ/WRITE from ordinary aligned buffers, as MariaDB and
    /// MySQL submit them.
    #[serde(default)]
    pub fixed_buffers: bool,
    /// io_uring: the files are registered with the ring and addressed by index (fio's
    /// `--registerfiles`); false: by descriptor, as MariaDB and MySQL do.
    #[serde(default)]
    pub register_files: bool,
    /// sync and io_uring: the I/O buffers are advised into transparent huge pages, so each
    /// I/O's buffer is physically contiguous (one segment per request; `--huge-pages`, or a
    /// server with large pages under `--like-server`); false: ordinary 4 KiB pages in 16 KiB
    /// frames, as InnoDB's buffer pool without large pages. Whether the kernel granted huge
    /// pages is in the environment's `engine`. Before issue 27 true was the default.
    #[serde(default)]
    pub huge_pages: bool,
    /// Why the buffers have the layout `huge_pages` says; `None` in results made before this
    /// existed.
    #[serde(default)]
    pub buffers: Option<BufferChoice>,
    /// io_uring: how many times a reap polls for completions (io_uring_enter without waiting)
    /// before it sleeps, backing off while polls find nothing; 0: it sleeps at once, as fio
    /// does. 0 in results made before this existed (they slept at once).
    #[serde(default)]
    pub spin_polls: u32,
    /// Measured run time, after warmup; `None` when only `events` limits the run.
    #[serde(with = "opt_secs")]
    pub time_s: Option<Duration>,
    /// Total I/O limit over all threads, 0 for none.
    pub events: u64,
    /// Time run before measuring, excluded from the summary.
    #[serde(with = "secs")]
    pub warmup_s: Duration,
    /// O_DIRECT.
    pub direct: bool,
    /// O_DSYNC.
    pub dsync: bool,
    /// O_SYNC.
    pub sync: bool,
    /// O_NOATIME: reads do not touch the files' access times (as on a datadir mounted noatime).
    #[serde(default)]
    pub noatime: bool,
    /// After this many writes to one file by one thread, that thread syncs that file (0: never).
    pub fsync_every: u64,
    /// How files are synced.
    pub fsync_mode: FsyncMode,
    /// Sync every written file when the run ends.
    pub fsync_end: bool,
    /// Bytes added to every offset.
    pub misalign_bytes: u64,
    /// Where offsets fall.
    pub distribution: Distribution,
    /// Open-loop target rate over all threads (I/Os per second); `None`: as fast as possible.
    pub rate_iops: Option<f64>,
    /// Reads per write in `rndrw` (sysbench's --file-rw-ratio).
    pub rw_ratio: f64,
    /// Seed of every random choice.
    pub seed: u64,
    /// Length of a report interval.
    #[serde(with = "secs")]
    pub report_interval_s: Duration,
    /// Percentiles reported in the summary.
    pub percentiles: Vec<f64>,
}

/// How the I/O buffers lie in memory (`dbio sweep --buffers 4k,huge`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BufferLayout {
    /// Ordinary 4 KiB pages in 16 KiB frames: InnoDB's buffer pool with `large_pages=OFF`.
    #[serde(rename = "4k")]
    Pages4k,
    /// Huge pages: each buffer physically contiguous, as with `large_pages=ON`.
    #[serde(rename = "huge")]
    Huge,
}

impl Named for BufferLayout {
    const ALL: &'static [Self] = &[BufferLayout::Pages4k, BufferLayout::Huge];
    fn name(self) -> &'static str {
        match self {
            BufferLayout::Pages4k => "4k",
            BufferLayout::Huge => "huge",
        }
    }
    fn help(self) -> &'static str {
        match self {
            BufferLayout::Pages4k => "4 KiB pages: a buffer pool without large pages",
            BufferLayout::Huge => "huge pages, each buffer contiguous: large_pages=ON",
        }
    }
}

/// What chose the I/O buffers' layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BufferSource {
    /// Nothing asked: 4 KiB pages, the layout of a buffer pool without large pages.
    Default,
    /// `--huge-pages` (or a sweep's `--buffers`).
    Flag,
    /// `--like-server`: the running server's own layout.
    Server,
}

/// The I/O buffers' layout, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BufferChoice {
    /// What chose it.
    pub source: BufferSource,
    /// In words: the flag, or what was read from the server (`large_pages=ON on
    /// 127.0.0.1:3307`, `AnonHugePages 0 kB in the 128 MiB mapping of pid 812`).
    pub why: String,
}

/// A block device under the target, as far as it matters to a benchmark.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceEnv {
    /// Kernel name (`vda`, `dm-0`, `md0`, `sda1`).
    pub name: String,
    /// `disk`, `partition`, `dm`, `md`, `loop`, ...
    pub kind: String,
    /// Active I/O scheduler.
    pub scheduler: Option<String>,
    /// Whether the kernel thinks it is rotational.
    pub rotational: Option<bool>,
    /// `write back` (volatile cache) or `write through`.
    pub write_cache: Option<String>,
    /// Logical block size.
    pub logical_block_size_bytes: Option<u64>,
    /// Physical block size.
    pub physical_block_size_bytes: Option<u64>,
}

/// Where the benchmark ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// Host name.
    pub hostname: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// Online CPUs.
    pub cpus: u32,
    /// Memory (MemTotal).
    pub mem_total_bytes: u64,
    /// Filesystem type of the target (`ext4`, `xfs`, `tmpfs`; `None` for a raw device).
    pub filesystem: Option<String>,
    /// Mount point of the target's filesystem.
    pub mount_point: Option<String>,
    /// Mount options of the target's filesystem.
    pub mount_options: Option<String>,
    /// The block devices under the target, top (the filesystem's device) to bottom (disks).
    pub devices: Vec<DeviceEnv>,
    /// The flags the benchmark files were opened with.
    pub open_flags: Vec<String>,
    /// What is true of the page cache: `in memory` on tmpfs/ramfs (their files live in it),
    /// else how prepare left it when it ran just before (`dropped ...`: the run starts cold).
    pub page_cache: Option<String>,
    /// The clock that timed every I/O: `tsc (<rate> MHz, calibrated against CLOCK_MONOTONIC)`
    /// or `CLOCK_MONOTONIC` (absent in results of older versions).
    #[serde(default)]
    pub clock: Option<String>,
    /// How the I/O engine was set up (io_uring setup flags, registrations, io-wq limits).
    #[serde(default)]
    pub engine: Option<String>,
}

/// Latency statistics of one operation in one interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalLat {
    /// Median.
    pub p50: u64,
    /// 95th percentile (sysbench's default, for its interval lines).
    #[serde(default)]
    pub p95: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Maximum.
    pub max: u64,
}

/// One operation (read, write or fsync) in one interval: not cumulative.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OpInterval {
    /// Operations completed in the interval.
    pub count: u64,
    /// Bytes moved in the interval.
    pub bytes: u64,
    /// Operations per second over the interval.
    pub iops: f64,
    /// Bytes per second over the interval.
    pub bytes_per_s: f64,
    /// Latency in nanoseconds.
    pub lat_ns: IntervalLat,
}

impl OpInterval {
    /// Builds the interval figures from a histogram, bytes and the interval length.
    pub fn from_hist(h: &LatencyHistogram, bytes: u64, secs: f64) -> Self {
        let per_s = |v: f64| if secs > 0.0 { v / secs } else { 0.0 };
        OpInterval {
            count: h.count(),
            bytes,
            iops: per_s(h.count() as f64),
            bytes_per_s: per_s(bytes as f64),
            lat_ns: IntervalLat {
                p50: h.percentile(50.0),
                p95: h.percentile(95.0),
                p99: h.percentile(99.0),
                max: h.max(),
            },
        }
    }
}

/// One report interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Start, seconds since the run started (warmup included).
    pub start_s: f64,
    /// End, seconds since the run started.
    pub end_s: f64,
    /// Inside the warmup: shown, but not in the summary.
    pub warmup: bool,
    /// Reads.
    pub read: OpInterval,
    /// Writes.
    pub write: OpInterval,
    /// fsync/fdatasync calls.
    pub fsync: OpInterval,
    /// All operations together (one histogram over reads, writes and fsyncs).
    pub total: OpInterval,
    /// What the block devices under the target did over the same interval (from
    /// /proc/diskstats, the iostat -x formulas), top device first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceInterval>,
    /// The whole machine's CPU time over the same interval (from /proc/stat, iostat -c's
    /// shares), for service demands (`dbio model`: Dcpu = (%usr + %sys) / throughput).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuShares>,
    /// The interval's latency histograms, per operation: what `dbio report` merges across
    /// threads, intervals, runs and hosts, and computes per-interval percentiles from (absent in
    /// results of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histograms: Option<IntervalHistograms>,
}

/// The latency histograms of one interval; an operation that completed nothing has none.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalHistograms {
    /// Reads.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "compact_hist"
    )]
    pub read: Option<HistogramData>,
    /// Writes.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "compact_hist"
    )]
    pub write: Option<HistogramData>,
    /// fsync/fdatasync calls.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "compact_hist"
    )]
    pub fsync: Option<HistogramData>,
}

impl IntervalHistograms {
    /// The histograms of read, write and fsync (in that order), `None` where an operation
    /// completed nothing.
    pub fn of(read: &LatencyHistogram, write: &LatencyHistogram, fsync: &LatencyHistogram) -> Self {
        let data = |h: &LatencyHistogram| (h.count() > 0).then(|| h.to_data());
        IntervalHistograms {
            read: data(read),
            write: data(write),
            fsync: data(fsync),
        }
    }

    /// The histograms as (operation name, histogram), read, write, fsync.
    pub fn ops(&self) -> [(&'static str, Option<&HistogramData>); 3] {
        [
            ("read", self.read.as_ref()),
            ("write", self.write.as_ref()),
            ("fsync", self.fsync.as_ref()),
        ]
    }
}

/// One block device over one interval, as `iostat -x` would print it for the same two samples.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceInterval {
    /// Kernel name.
    pub name: String,
    /// Reads completed per second.
    pub r_per_s: f64,
    /// Writes completed per second.
    pub w_per_s: f64,
    /// Flushes per second.
    pub f_per_s: f64,
    /// KiB read per second.
    pub rkb_per_s: f64,
    /// KiB written per second.
    pub wkb_per_s: f64,
    /// Share of read requests merged (%).
    pub rrqm_pct: f64,
    /// Share of write requests merged (%).
    pub wrqm_pct: f64,
    /// Mean read time, queue included (ms).
    pub r_await_ms: f64,
    /// Mean write time, queue included (ms).
    pub w_await_ms: f64,
    /// Mean read request size (KiB).
    pub rareq_sz_kb: f64,
    /// Mean write request size (KiB).
    pub wareq_sz_kb: f64,
    /// Mean requests queued or in service.
    pub aqu_sz: f64,
    /// Share of time with a request in flight (%): not saturation on SSD/NVMe/RAID.
    pub util_pct: f64,
}

/// The application's figures against the device's over the measured run: Little's law and
/// request counts, with a plain reading when they disagree.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceCheck {
    /// The device compared (the one the filesystem sits on, or the `--device`).
    pub device: String,
    /// Reads, writes and syncs (fsync/fdatasync) dbio completed in the measured window.
    pub app_ios: u64,
    /// Read, write and flush requests the device completed in the same window.
    pub device_requests: u64,
    /// Requests merged by the block layer in the window.
    pub device_merged: u64,
    /// Flush requests the device completed.
    pub device_flushes: u64,
    /// Operations (reads, writes, syncs) dbio kept in flight on average (Little's law: the
    /// sum of their latencies over the measured time).
    pub app_in_flight: f64,
    /// The device's mean queue size (aqu-sz) over the window.
    pub device_aqu_sz: f64,
    /// True when requests and queue sizes agree within a factor of 1.5.
    pub agree: bool,
    /// What the comparison says, in words.
    pub notes: Vec<String>,
}

impl DeviceCheck {
    /// How far apart two figures may be and still agree: a factor of 1.5 either way.
    pub const AGREE: std::ops::RangeInclusive<f64> = 0.67..=1.5;

    /// Requests the device completed per I/O dbio completed (0 when dbio completed none).
    pub fn requests_per_io(&self) -> f64 {
        if self.app_ios == 0 {
            0.0
        } else {
            self.device_requests as f64 / self.app_ios as f64
        }
    }

    /// The request counts agree: one device request per dbio I/O, within the factor.
    pub fn requests_agree(&self) -> bool {
        self.app_ios > 0 && Self::AGREE.contains(&self.requests_per_io())
    }

    /// Whether dbio's I/Os in flight (Little's law) and the device's aqu-sz agree; `None`
    /// when dbio kept none in flight (nothing to compare).
    pub fn in_flight_agree(&self) -> Option<bool> {
        (self.app_in_flight > 0.0)
            .then(|| Self::AGREE.contains(&(self.device_aqu_sz / self.app_in_flight)))
    }
}

/// Latency statistics: exact min, mean and max, percentiles within the histogram's 1% error.
/// Serialised flat: `{"min": .., "mean": .., "p50": .., "p99_9": .., "max": ..}` (the
/// percentile's point is an underscore, so `jq .lat_ns.p99_9` addresses it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LatStats {
    /// Smallest value.
    pub min: u64,
    /// Mean.
    pub mean: f64,
    /// `(percentile, value)` in the order asked for.
    pub percentiles: Vec<(f64, u64)>,
    /// Largest value.
    pub max: u64,
}

impl LatStats {
    /// Computes the statistics of a histogram at the given percentiles.
    pub fn from_hist(h: &LatencyHistogram, percentiles: &[f64]) -> Self {
        LatStats {
            min: h.min(),
            mean: h.mean(),
            percentiles: percentiles.iter().map(|&p| (p, h.percentile(p))).collect(),
            max: h.max(),
        }
    }

    /// The value at percentile `p`, if it was computed.
    pub fn get(&self, p: f64) -> Option<u64> {
        self.percentiles
            .iter()
            .find(|(q, _)| (q - p).abs() < 1e-9)
            .map(|&(_, v)| v)
    }
}

/// The name of a percentile for people (text headers): `p50`, `p99.9`.
pub fn percentile_key(p: f64) -> String {
    format!("p{p}")
}

/// The JSON key of a percentile: `p50`, `p99_9` (a jq dot path cannot hold a `.`).
pub fn percentile_json_key(p: f64) -> String {
    percentile_key(p).replace('.', "_")
}

impl Serialize for LatStats {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.percentiles.len() + 3))?;
        m.serialize_entry("min", &self.min)?;
        m.serialize_entry("mean", &self.mean)?;
        for (p, v) in &self.percentiles {
            m.serialize_entry(&percentile_json_key(*p), v)?;
        }
        m.serialize_entry("max", &self.max)?;
        m.end()
    }
}

impl<'de> Deserialize<'de> for LatStats {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
        let num = |k: &str| -> Result<&serde_json::Value, D::Error> {
            map.get(k)
                .ok_or_else(|| D::Error::missing_field("min/mean/max"))
        };
        let as_u64 = |v: &serde_json::Value| {
            v.as_u64()
                .ok_or_else(|| D::Error::custom("latency must be an integer of ns"))
        };
        let mut out = LatStats {
            min: as_u64(num("min")?)?,
            mean: num("mean")?
                .as_f64()
                .ok_or_else(|| D::Error::custom("mean must be a number"))?,
            percentiles: Vec::new(),
            max: as_u64(num("max")?)?,
        };
        for (k, v) in &map {
            if let Some(p) = k.strip_prefix('p') {
                // `p99_9`; `p99.9` as results before schema dbio.bench/1 wrote it.
                let p: f64 = p
                    .replace('_', ".")
                    .parse()
                    .map_err(|_| D::Error::custom(format!("bad percentile key {k}")))?;
                out.percentiles.push((p, as_u64(v)?));
            }
        }
        Ok(out)
    }
}

/// One operation over the whole measured run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OpSummary {
    /// Operations completed.
    pub count: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// Operations per second.
    pub iops: f64,
    /// Bytes per second.
    pub bytes_per_s: f64,
    /// Latency in ns. With `--rate`, measured from the intended start time (what a client
    /// waiting for the I/O sees, coordinated omission included); otherwise from submission.
    pub lat_ns: LatStats,
    /// With `--rate` only: latency from the actual submission to completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_lat_ns: Option<LatStats>,
    /// The full histogram of `lat_ns`, for merging and comparing runs.
    pub histogram: HistogramData,
    /// With `--rate` only: the full histogram of `service_lat_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_histogram: Option<HistogramData>,
}

/// All operations together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TotalSummary {
    /// Reads + writes + fsyncs.
    pub count: u64,
    /// Operations per second.
    pub iops: f64,
    /// Bytes read and written per second.
    pub bytes_per_s: f64,
}

/// What one worker thread did in the measured run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadSummary {
    /// Thread index.
    pub thread: u32,
    /// Reads + writes completed (fsyncs not counted).
    pub events: u64,
    /// fsyncs completed.
    pub fsyncs: u64,
    /// Sum of this thread's I/O latencies, in seconds (sysbench's "execution time").
    pub busy_s: f64,
}

/// Mean and standard deviation of per-thread figures: how evenly the threads were served.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Fairness {
    /// Mean events per thread.
    pub events_mean: f64,
    /// Population standard deviation of events per thread.
    pub events_stddev: f64,
    /// Mean busy time per thread.
    pub busy_mean_s: f64,
    /// Population standard deviation of busy time per thread.
    pub busy_stddev_s: f64,
}

impl Fairness {
    /// Computes the fairness figures of a set of threads.
    pub fn of(threads: &[ThreadSummary]) -> Self {
        fn mean_sd(v: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
            let n = v.clone().count() as f64;
            if n == 0.0 {
                return (0.0, 0.0);
            }
            let mean = v.clone().sum::<f64>() / n;
            let var = v.map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
            (mean, var.sqrt())
        }
        let (events_mean, events_stddev) = mean_sd(threads.iter().map(|t| t.events as f64));
        let (busy_mean_s, busy_stddev_s) = mean_sd(threads.iter().map(|t| t.busy_s));
        Fairness {
            events_mean,
            events_stddev,
            busy_mean_s,
            busy_stddev_s,
        }
    }
}

/// Calls the engine made, counted inside the engine (no strace needed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineCalls {
    /// Reads issued.
    pub reads: u64,
    /// Writes issued.
    pub writes: u64,
    /// fsync/fdatasync issued.
    pub fsyncs: u64,
    /// System calls that submitted or waited for I/O (io_uring_enter; for sync, one per I/O).
    pub syscalls: u64,
}

impl EngineCalls {
    /// Adds another thread's counts.
    pub fn add(&mut self, o: &EngineCalls) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.fsyncs += o.fsyncs;
        self.syscalls += o.syscalls;
    }
}

/// The kernel's own I/O accounting of the dbio process over the run (/proc/self/io deltas):
/// an independent check of what the engine claims it did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessIo {
    /// Bytes passed to read-like system calls (rchar; JSON `rchar_bytes`).
    #[serde(rename = "rchar_bytes", alias = "rchar")]
    pub rchar: u64,
    /// Bytes passed to write-like system calls (wchar; JSON `wchar_bytes`).
    #[serde(rename = "wchar_bytes", alias = "wchar")]
    pub wchar: u64,
    /// Read-like system calls (syscr).
    pub syscr: u64,
    /// Write-like system calls (syscw).
    pub syscw: u64,
    /// Bytes the process caused to be read from storage (read_bytes).
    pub read_bytes: u64,
    /// Bytes the process caused to be written to storage (write_bytes).
    pub write_bytes: u64,
}

/// The final summary of a run (warmup excluded).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Measured time: from the end of the warmup to the last I/O.
    pub measured_s: f64,
    /// Whole run time, warmup included.
    pub total_s: f64,
    /// Reads.
    pub read: OpSummary,
    /// Writes.
    pub write: OpSummary,
    /// fsync/fdatasync calls.
    pub fsync: OpSummary,
    /// All operations.
    pub total: TotalSummary,
    /// Each thread.
    pub threads: Vec<ThreadSummary>,
    /// How evenly the threads were served.
    pub fairness: Fairness,
    /// Calls counted inside the engine over the whole run, warmup included.
    pub engine_calls: EngineCalls,
    /// The kernel's accounting of this process over the whole run, warmup included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_io: Option<ProcessIo>,
    /// The application's figures against the device's (absent without a block device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_check: Option<DeviceCheck>,
}

/// The result of `dbio bench run` (and of plain `dbio bench`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchResult {
    /// [`BENCH_SCHEMA`].
    pub schema: String,
    /// The dbio version that ran it.
    pub dbio_version: String,
    /// When the run started (UTC, RFC 3339).
    pub started_at: String,
    /// What was run.
    pub spec: Spec,
    /// Where it ran.
    pub environment: Environment,
    /// Things the run measured that the user probably did not mean to measure.
    pub warnings: Vec<String>,
    /// True when Ctrl-C (SIGINT) or SIGTERM ended the run early: the figures cover what ran.
    pub interrupted: bool,
    /// Every report interval, in order (warmup ones flagged).
    pub intervals: Vec<Interval>,
    /// The whole measured run.
    pub summary: Summary,
    /// Plain `dbio bench` without `--mode` (the default run): the data-page phase is this
    /// document, and this field carries the commit phase that followed it on the same file
    /// system and the verdict over both. Absent in every single-phase result (`--mode` given,
    /// a `--device`, `--engine null`, `--format sysbench`) and in results of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_run: Option<DefaultRun>,
}

/// What the default run (no `--mode`) adds to its data-page result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DefaultRun {
    /// The commit phase, as `--mode commit` with the same flags records it (a whole
    /// `dbio.bench/1` document); `None` when the run was interrupted before it started.
    pub commit: Option<Box<BenchResult>>,
    /// The verdict over both phases; `None` when a phase measured no page read or no commit.
    pub verdict: Option<Verdict>,
}

/// The default run's answer: how long a transaction waits on storage, from the two phases'
/// histograms. A transaction is `page_misses` page reads (buffer-pool misses, each a read of
/// the data-page phase) and one commit (one record write and its sync, of the commit phase).
/// Means add exactly; percentiles of sums are computed from the histograms taken as
/// independent draws (`samples` transactions drawn with a fixed seed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Page reads per transaction assumed (`--page-misses`).
    pub page_misses: u32,
    /// Page read latency, p99 (measured).
    pub page_read_p99_ns: u64,
    /// Page read latency, mean (measured).
    pub page_read_mean_ns: f64,
    /// One commit (record write + its fsync/fdatasync; the write alone with O_DSYNC/O_SYNC),
    /// p99.
    pub commit_p99_ns: u64,
    /// One commit, mean.
    pub commit_mean_ns: f64,
    /// A transaction's storage wait, mean: page_misses x page read mean + commit mean.
    pub txn_mean_ns: f64,
    /// A transaction's storage wait, p99.
    pub txn_p99_ns: u64,
    /// The commit's share of the mean transaction wait (%).
    pub commit_share_pct: f64,
    /// Transactions drawn for the percentiles.
    pub samples: u64,
    /// The verdict in words.
    pub words: String,
}

/// A value in a bench result file that `dbio bench` never writes (a hand-edited or damaged
/// file): the field's path in the document, the value and what it must be.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{field} is {value}: {want} (dbio bench never writes this value: was the file edited or damaged?)")]
pub struct BadValue {
    /// Where the value is, as a jq path (`intervals[3].end_s`).
    pub field: String,
    /// The value, as read.
    pub value: String,
    /// What the value must be.
    pub want: &'static str,
}

impl BenchResult {
    /// Checks every value the analyses compute with (`dbio report`, `dbio model`): numbers
    /// that must be 0 or more, shares that must be percentages, interval ends after their
    /// starts, histograms whose buckets add up to their count. A result that passes cannot
    /// make them panic or divide by a negative time.
    pub fn check(&self) -> Result<(), BadValue> {
        let s = &self.spec;
        at_least_one("spec.threads", u64::from(s.threads))?;
        at_least_one("spec.iodepth", u64::from(s.iodepth))?;
        if let Some(r) = s.rate_iops {
            if !(r.is_finite() && r > 0.0) {
                return Err(bad("spec.rate_iops", r, "a rate above 0 I/Os per second"));
            }
        }
        non_negative("spec.rw_ratio", s.rw_ratio)?;
        for (i, &p) in s.percentiles.iter().enumerate() {
            if !(0.0..=100.0).contains(&p) {
                return Err(bad(
                    &format!("spec.percentiles[{i}]"),
                    p,
                    "a percentile from 0 to 100",
                ));
            }
        }
        for (i, iv) in self.intervals.iter().enumerate() {
            let f = |name: &str| format!("intervals[{i}].{name}");
            non_negative(&f("start_s"), iv.start_s)?;
            non_negative(&f("end_s"), iv.end_s)?;
            if iv.end_s < iv.start_s {
                return Err(bad(
                    &f("end_s"),
                    iv.end_s,
                    "the end of an interval, not before its start_s",
                ));
            }
            for (name, o) in [
                ("read", &iv.read),
                ("write", &iv.write),
                ("fsync", &iv.fsync),
                ("total", &iv.total),
            ] {
                non_negative(&f(&format!("{name}.iops")), o.iops)?;
                non_negative(&f(&format!("{name}.bytes_per_s")), o.bytes_per_s)?;
            }
            for (j, d) in iv.devices.iter().enumerate() {
                for (name, v) in [
                    ("r_per_s", d.r_per_s),
                    ("w_per_s", d.w_per_s),
                    ("f_per_s", d.f_per_s),
                    ("rkb_per_s", d.rkb_per_s),
                    ("wkb_per_s", d.wkb_per_s),
                    ("rrqm_pct", d.rrqm_pct),
                    ("wrqm_pct", d.wrqm_pct),
                    ("r_await_ms", d.r_await_ms),
                    ("w_await_ms", d.w_await_ms),
                    ("rareq_sz_kb", d.rareq_sz_kb),
                    ("wareq_sz_kb", d.wareq_sz_kb),
                    ("aqu_sz", d.aqu_sz),
                    ("util_pct", d.util_pct),
                ] {
                    non_negative(&f(&format!("devices[{j}].{name}")), v)?;
                }
            }
            if let Some(c) = &iv.cpu {
                for (name, v) in [
                    ("usr_pct", c.usr_pct),
                    ("sys_pct", c.sys_pct),
                    ("iowait_pct", c.iowait_pct),
                    ("steal_pct", c.steal_pct),
                    ("idle_pct", c.idle_pct),
                ] {
                    if !(0.0..=100.0).contains(&v) {
                        return Err(bad(
                            &f(&format!("cpu.{name}")),
                            v,
                            "a share from 0 to 100 %",
                        ));
                    }
                }
            }
            if let Some(h) = &iv.histograms {
                for (name, h) in [("read", &h.read), ("write", &h.write), ("fsync", &h.fsync)] {
                    if let Some(h) = h {
                        histogram(&f(&format!("histograms.{name}")), h)?;
                    }
                }
            }
        }
        let m = &self.summary;
        non_negative("summary.measured_s", m.measured_s)?;
        non_negative("summary.total_s", m.total_s)?;
        let mut count = 0u64;
        for (name, o) in [("read", &m.read), ("write", &m.write), ("fsync", &m.fsync)] {
            let f = |field: &str| format!("summary.{name}.{field}");
            if o.count != o.histogram.count {
                return Err(bad(&f("count"), o.count, "the count of its histogram"));
            }
            count = count
                .checked_add(o.count)
                .ok_or_else(|| bad(&f("count"), o.count, "counts that add up below 2^64"))?;
            non_negative(&f("iops"), o.iops)?;
            non_negative(&f("bytes_per_s"), o.bytes_per_s)?;
            non_negative(&f("lat_ns.mean"), o.lat_ns.mean)?;
            histogram(&f("histogram"), &o.histogram)?;
            if let Some(h) = &o.service_histogram {
                histogram(&f("service_histogram"), h)?;
            }
        }
        if m.total.count != count {
            return Err(bad(
                "summary.total.count",
                m.total.count,
                "the sum of the read, write and fsync counts",
            ));
        }
        non_negative("summary.total.iops", m.total.iops)?;
        non_negative("summary.total.bytes_per_s", m.total.bytes_per_s)?;
        for (i, t) in m.threads.iter().enumerate() {
            non_negative(&format!("summary.threads[{i}].busy_s"), t.busy_s)?;
        }
        if let Some(c) = self.default_run.as_ref().and_then(|d| d.commit.as_ref()) {
            c.check().map_err(|mut b| {
                b.field = format!("default_run.commit.{}", b.field);
                b
            })?;
        }
        Ok(())
    }
}

fn bad(field: &str, value: impl std::fmt::Display, want: &'static str) -> BadValue {
    BadValue {
        field: field.to_string(),
        value: value.to_string(),
        want,
    }
}

fn non_negative(field: &str, v: f64) -> Result<(), BadValue> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(bad(field, v, "a number, 0 or more"))
    }
}

fn at_least_one(field: &str, v: u64) -> Result<(), BadValue> {
    if v >= 1 {
        Ok(())
    } else {
        Err(bad(field, v, "1 or more"))
    }
}

/// A histogram's buckets in increasing order of value, their counts adding up to `count`,
/// `min_ns` <= `max_ns` and `sum_ns` within count x max_ns.
fn histogram(field: &str, h: &HistogramData) -> Result<(), BadValue> {
    let mut total = 0u64;
    for (i, w) in h.buckets.windows(2).enumerate() {
        if w[1].0 <= w[0].0 {
            return Err(bad(
                &format!("{field}.buckets[{}]", i + 1),
                format!("{}:{} after {}:{}", w[1].0, w[1].1, w[0].0, w[0].1),
                "buckets in increasing order of value",
            ));
        }
    }
    for &(_, c) in &h.buckets {
        total = total.checked_add(c).ok_or_else(|| {
            bad(
                &format!("{field}.buckets"),
                "counts above 2^64",
                "counts that add up to count",
            )
        })?;
    }
    if total != h.count {
        return Err(bad(
            &format!("{field}.count"),
            h.count,
            "the sum of the bucket counts",
        ));
    }
    if h.count > 0 && h.min_ns > h.max_ns {
        return Err(bad(&format!("{field}.min_ns"), h.min_ns, "at most max_ns"));
    }
    if h.sum_ns > u128::from(h.count) * u128::from(h.max_ns) {
        return Err(bad(
            &format!("{field}.sum_ns"),
            h.sum_ns,
            "at most count x max_ns",
        ));
    }
    Ok(())
}

/// Interval histograms are many (one per operation per interval): their buckets are written
/// as one string of `value:count` pairs separated by spaces (`"4127:3 4159:10"`), about a tenth
/// of the size of pretty-printed pairs; the other fields are those of [`HistogramData`].
mod compact_hist {
    use crate::hist::HistogramData;
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::fmt::Write as _;

    #[derive(Serialize)]
    struct Compact {
        sigfig: u8,
        min_ns: u64,
        max_ns: u64,
        sum_ns: u128,
        count: u64,
        buckets: String,
    }

    /// Read back: the string, or `[value, count]` pairs as [`HistogramData`] writes them.
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Buckets {
        Text(String),
        Pairs(Vec<(u64, u64)>),
    }

    #[derive(Deserialize)]
    struct Read {
        sigfig: u8,
        min_ns: u64,
        max_ns: u64,
        sum_ns: u128,
        count: u64,
        buckets: Buckets,
    }

    pub fn serialize<S: Serializer>(h: &Option<HistogramData>, s: S) -> Result<S::Ok, S::Error> {
        let Some(h) = h else {
            return s.serialize_none();
        };
        let mut buckets = String::with_capacity(h.buckets.len() * 10);
        for (i, (v, c)) in h.buckets.iter().enumerate() {
            let sep = if i == 0 { "" } else { " " };
            let _ = write!(buckets, "{sep}{v}:{c}");
        }
        s.serialize_some(&Compact {
            sigfig: h.sigfig,
            min_ns: h.min_ns,
            max_ns: h.max_ns,
            sum_ns: h.sum_ns,
            count: h.count,
            buckets,
        })
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<HistogramData>, D::Error> {
        let Some(c) = Option::<Read>::deserialize(d)? else {
            return Ok(None);
        };
        let text = match c.buckets {
            Buckets::Text(t) => t,
            Buckets::Pairs(buckets) => {
                return Ok(Some(HistogramData {
                    sigfig: c.sigfig,
                    min_ns: c.min_ns,
                    max_ns: c.max_ns,
                    sum_ns: c.sum_ns,
                    count: c.count,
                    buckets,
                }))
            }
        };
        let mut buckets = Vec::new();
        for pair in text.split_ascii_whitespace() {
            let parsed = pair
                .split_once(':')
                .and_then(|(v, n)| Some((v.parse().ok()?, n.parse().ok()?)));
            buckets.push(parsed.ok_or_else(|| {
                D::Error::custom(format!("bad histogram bucket {pair:?}: want value:count"))
            })?);
        }
        Ok(Some(HistogramData {
            sigfig: c.sigfig,
            min_ns: c.min_ns,
            max_ns: c.max_ns,
            sum_ns: c.sum_ns,
            count: c.count,
            buckets,
        }))
    }
}

fn one() -> u32 {
    1
}

/// A duration in seconds read from a result file: `Duration::from_secs_f64` panics on a
/// negative value or one above 1.8e19 s, so a hand-edited or damaged file gets an error with
/// the value instead (the readers of [`crate::read`] put the field's path before it).
fn duration<E: serde::de::Error>(secs: f64) -> Result<Duration, E> {
    Duration::try_from_secs_f64(secs).map_err(|_| {
        E::custom(format!(
            "{secs} is no duration: seconds, 0 or more and below 1.8e19 \
             (dbio bench never writes this value: was the file edited or damaged?)"
        ))
    })
}

/// `spec.warmup_s` and `spec.report_interval_s`: seconds as a number.
mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        super::duration(f64::deserialize(d)?)
    }
}

/// `spec.time_s`: seconds, or null.
mod opt_secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Option::<f64>::deserialize(d)?
            .map(super::duration)
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lat_stats_serialise_flat_and_round_trip() {
        let mut h = LatencyHistogram::new();
        for v in 1..=1000 {
            h.record(v * 1000);
        }
        let s = LatStats::from_hist(&h, &DEFAULT_PERCENTILES);
        let json = serde_json::to_value(&s).unwrap();
        let keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(
            keys,
            ["min", "mean", "p50", "p90", "p95", "p99", "p99_9", "p99_99", "max"]
        );
        assert_eq!(json["min"], 1000);
        assert_eq!(json["max"], 1_000_000);
        let back: LatStats = serde_json::from_value(json).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.get(99.9), s.get(99.9));
        // Results written before the keys became jq paths still read back.
        let old: LatStats =
            serde_json::from_str(r#"{"min":1,"mean":2.0,"p50":2,"p99.9":3,"p99.99":4,"max":5}"#)
                .unwrap();
        assert_eq!((old.get(99.9), old.get(99.99)), (Some(3), Some(4)));
        let io: ProcessIo = serde_json::from_str(
            r#"{"rchar":1,"wchar":2,"syscr":3,"syscw":4,"read_bytes":5,"write_bytes":6}"#,
        )
        .unwrap();
        assert_eq!((io.rchar, io.wchar), (1, 2));
        assert!(serde_json::to_string(&io)
            .unwrap()
            .contains(r#""rchar_bytes":1"#));
    }

    #[test]
    fn interval_histograms_round_trip_in_their_compact_form() {
        let mut r = LatencyHistogram::new();
        for v in [120, 130, 5_000, 5_000, 9_999_999] {
            r.record(v);
        }
        let h = IntervalHistograms::of(&r, &LatencyHistogram::new(), &r);
        let json = serde_json::to_value(&h).unwrap();
        assert!(json.get("write").is_none(), "{json}");
        assert_eq!(json["read"]["buckets"], "120:1 130:1 5023:2 10027007:1");
        assert_eq!(json["read"]["max_ns"], 9_999_999);
        let back: IntervalHistograms = serde_json::from_value(json).unwrap();
        assert_eq!(back, h);
        assert_eq!(LatencyHistogram::from_data(back.read.as_ref().unwrap()), r);
        let bad =
            r#"{"read":{"sigfig":2,"min_ns":1,"max_ns":1,"sum_ns":1,"count":1,"buckets":"1-1"}}"#;
        let e = serde_json::from_str::<IntervalHistograms>(bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad histogram bucket \"1-1\""), "{e}");
        let pairs = r#"{"read":{"sigfig":2,"min_ns":5,"max_ns":7,"sum_ns":12,"count":2,"buckets":[[5,1],[7,1]]}}"#;
        let h: IntervalHistograms = serde_json::from_str(pairs).unwrap();
        assert_eq!(h.read.unwrap().buckets, [(5, 1), (7, 1)]);
    }

    #[test]
    fn fairness_is_population_mean_and_stddev() {
        let t = |events, busy_s| ThreadSummary {
            events,
            busy_s,
            ..Default::default()
        };
        let f = Fairness::of(&[t(10, 1.0), t(20, 3.0)]);
        assert_eq!((f.events_mean, f.events_stddev), (15.0, 5.0));
        assert_eq!((f.busy_mean_s, f.busy_stddev_s), (2.0, 1.0));
    }

    #[test]
    fn interval_rates_divide_by_the_interval_length() {
        let mut h = LatencyHistogram::new();
        for _ in 0..500 {
            h.record(2_000);
        }
        let i = OpInterval::from_hist(&h, 500 * 16384, 0.5);
        assert_eq!(i.iops, 1000.0);
        assert_eq!(i.bytes_per_s, 1000.0 * 16384.0);
        assert_eq!(i.lat_ns.max, 2_000);
    }
}

/// The shares of CPU time between two samples, in percent of all CPUs' time (iostat -c's
/// columns: %user includes nice here, %system includes irq and softirq).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuShares {
    /// User mode, niced included.
    pub usr_pct: f64,
    /// Kernel mode, interrupts included.
    pub sys_pct: f64,
    /// Idle with I/O outstanding.
    pub iowait_pct: f64,
    /// Stolen by the hypervisor.
    pub steal_pct: f64,
    /// Idle.
    pub idle_pct: f64,
}
