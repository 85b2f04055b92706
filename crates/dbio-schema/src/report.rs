//! The result of `dbio report` (schema `dbio.report/1`): bench runs read back, each with its
//! per-interval series, stalls and steady state; the points they make (runs of the same
//! workload merged exactly: histograms add); scaling curves with their knee; and A/B
//! comparisons of points that differ in one parameter. Built by dbio-report's `analysis`.

use crate::bench::{IntervalLat, LatStats};
use serde::{Deserialize, Serialize};

/// The thresholds the analysis used (the defaults, or the user's flags).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReportOptions {
    /// The p99 latency a load must stay under to be within the SLO (`--slo-p99`); `None`:
    /// twice the p99 at the lowest load of each curve.
    pub slo_p99_ns: Option<u64>,
    /// Throughput that stops growing by more than this per doubling of the load has saturated.
    pub saturation_growth_pct: f64,
    /// An interval whose throughput is below this share of the run's median is a stall.
    pub stall_throughput_fraction: f64,
    /// An interval whose p99 is above this many times the run's median p99 is a stall.
    pub stall_p99_factor: f64,
    /// A periodic pattern is reported when its dips are at least this deep (share of the median).
    pub periodic_min_depth_pct: f64,
    /// Steady-state window in intervals (0: a fifth of the run, 5 to 60 intervals).
    pub steady_window_intervals: usize,
    /// Steady state: the least-squares drift of throughput across the window, as a share of
    /// the window's mean, at most this (fio's `iops_slope`, over the window, not per second).
    pub steady_slope_pct: f64,
    /// Steady state: (max - min) / mean of throughput over the window at most this (fio's `iops`).
    pub steady_range_pct: f64,
    /// A/B: the level below which a difference is called significant.
    pub alpha: f64,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            slo_p99_ns: None,
            saturation_growth_pct: 5.0,
            stall_throughput_fraction: 0.5,
            stall_p99_factor: 10.0,
            periodic_min_depth_pct: 15.0,
            steady_window_intervals: 0,
            steady_slope_pct: 10.0,
            steady_range_pct: 20.0,
            alpha: 0.05,
        }
    }
}

/// The parameters that tell runs apart: what was run and where.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Host name.
    pub host: String,
    /// Directory or device benchmarked.
    pub target: String,
    /// The block device the target sits on (top of the stack), if any.
    pub device: Option<String>,
    /// Filesystem type (`None` for a raw device).
    pub filesystem: Option<String>,
    /// The device's I/O scheduler.
    pub scheduler: Option<String>,
    /// The device's cache mode (`write back`, `write through`).
    pub write_cache: Option<String>,
    /// Workload mode (`rndrd`, ...).
    pub mode: String,
    /// I/O engine.
    pub engine: String,
    /// Bytes per I/O.
    pub block_size_bytes: u64,
    /// Worker threads.
    pub threads: u32,
    /// I/Os in flight per thread.
    pub iodepth: u32,
    /// Bytes added to every offset.
    pub misalign_bytes: u64,
    /// Open flags that change what is measured (`direct`, `dsync`, `sync`, `noatime`).
    pub flags: String,
    /// Sync every N writes per file (0: never).
    pub fsync_every: u64,
    /// Offset distribution.
    pub distribution: String,
    /// Reads per write (rndrw).
    pub rw_ratio: f64,
    /// Open-loop rate, if any.
    pub rate_iops: Option<f64>,
    /// Size of the file set.
    pub file_total_size_bytes: u64,
    /// The I/O buffers' layout: `4k` (ordinary pages, as a buffer pool with large_pages=OFF)
    /// or `huge` (physically contiguous, as with large_pages=ON); `unknown` for results made
    /// before dbio recorded why (its default was huge pages then).
    pub buffers: String,
}

/// One operation's latency over a run or a point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpStats {
    /// `read`, `write` or `fsync`.
    pub op: String,
    /// Operations.
    pub count: u64,
    /// Operations per second.
    pub iops: f64,
    /// Bytes per second.
    pub bytes_per_s: f64,
    /// Latency: exact min, mean, max; percentiles from the histogram (1% error).
    pub lat_ns: LatStats,
    /// The histogram on a log axis: counts in bins of a tenth of a decade.
    pub distribution: Vec<Bin>,
}

/// One bin of a latency distribution.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bin {
    /// Values above the previous bin's bound, up to this one.
    pub le_ns: u64,
    /// Values in the bin.
    pub count: u64,
}

/// One report interval of one run, all operations together.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct IntervalPoint {
    /// Start, seconds since the run started.
    pub start_s: f64,
    /// End.
    pub end_s: f64,
    /// Inside the bench's own `--warmup` (not in the run's summary).
    pub warmup: bool,
    /// Operations per second.
    pub iops: f64,
    /// Bytes per second.
    pub bytes_per_s: f64,
    /// Latency percentiles of the interval, from its histogram.
    pub lat_ns: IntervalLat,
    /// A stall interval (see [`Stalls`]).
    pub stall: bool,
}

/// Why an interval is a stall.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StallReason {
    /// Throughput below the fraction of the median.
    Throughput,
    /// p99 above the factor times the median p99.
    Latency,
    /// Both.
    Both,
}

/// A run of consecutive stall intervals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StallEvent {
    /// Start of the first interval.
    pub start_s: f64,
    /// End of the last interval.
    pub end_s: f64,
    /// Lowest throughput in it.
    pub min_iops: f64,
    /// Highest p99 in it.
    pub max_p99_ns: u64,
    /// What made it a stall.
    pub reason: StallReason,
}

/// A dip that comes back at a fixed period (found by autocorrelation of per-interval throughput).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Periodic {
    /// Period in intervals.
    pub period_intervals: usize,
    /// Period in seconds.
    pub period_s: f64,
    /// How far the dip phase falls below the median throughput.
    pub depth_pct: f64,
    /// Autocorrelation of the detrended throughput at the period.
    pub autocorrelation: f64,
    /// When the first dip falls, seconds since the run started.
    pub first_dip_s: f64,
}

/// Stall detection over a run's measured intervals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stalls {
    /// Median throughput.
    pub median_iops: f64,
    /// Median per-interval p99.
    pub median_p99_ns: u64,
    /// Intervals that are stalls.
    pub intervals: usize,
    /// Time in stall intervals.
    pub stalled_s: f64,
    /// Consecutive stall intervals, as events.
    pub events: Vec<StallEvent>,
    /// A periodic pattern, if one was found.
    pub periodic: Option<Periodic>,
}

/// Steady state of a run (fio's ss options, over a window of intervals).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Steady {
    /// Window in intervals.
    pub window_intervals: usize,
    /// Throughput reached a steady state.
    pub reached: bool,
    /// First interval (index among measured intervals) of the first steady window.
    pub from_interval: Option<usize>,
    /// Its start, seconds since the run started: before it is warm-up, excluded from the
    /// steady figures.
    pub from_s: Option<f64>,
    /// Drift of throughput across the deciding window (the steady one, else the last).
    pub slope_pct: f64,
    /// Range of throughput over that window.
    pub range_pct: f64,
    /// Mean throughput from the steady start to the end (the whole run when not reached).
    pub iops: f64,
    /// p99 reached a steady state (the same slope criterion on per-interval p99).
    pub p99_reached: bool,
    /// Start of the first steady p99 window.
    pub p99_from_s: Option<f64>,
}

/// One bench result read back and analysed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// A short unique name (the file name).
    pub label: String,
    /// Where it was read from.
    pub source: String,
    /// The dbio version that ran it.
    pub dbio_version: String,
    /// When it started.
    pub started_at: String,
    /// What was run, where.
    pub params: Params,
    /// Index of its point in [`Report::points`].
    pub point: usize,
    /// Ended early by a signal.
    pub interrupted: bool,
    /// The report interval.
    pub interval_s: f64,
    /// Where the per-interval percentiles come from: `interval histograms`, or `interval
    /// figures` for results written before bench kept interval histograms.
    pub percentiles_from: String,
    /// Operations per second over the measured run.
    pub iops: f64,
    /// Bytes per second over the measured run.
    pub bytes_per_s: f64,
    /// Mean %util of the top device over the measured intervals, when sampled.
    pub device_util_pct: Option<f64>,
    /// Each operation over the measured run.
    pub ops: Vec<OpStats>,
    /// Every interval.
    pub intervals: Vec<IntervalPoint>,
    /// Stalls.
    pub stalls: Stalls,
    /// Steady state.
    pub steady: Steady,
}

/// Runs of one workload (same parameters, any host or repeat) merged exactly: histograms add.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointReport {
    /// The parameters that differ between points, in words (`rndrd 16KiB t8 qd1 vda`).
    pub label: String,
    /// The parameters (host: the hosts, comma-separated).
    pub params: Params,
    /// Indexes of its runs in [`Report::runs`].
    pub runs: Vec<usize>,
    /// threads x iodepth.
    pub load: u64,
    /// Mean throughput per run.
    pub iops: f64,
    /// Mean bytes per second per run.
    pub bytes_per_s: f64,
    /// Each operation, merged over the runs.
    pub ops: Vec<OpStats>,
    /// p95 of all operations together, merged over the runs.
    pub p95_ns: u64,
    /// p99 of all operations together, merged over the runs.
    pub p99_ns: u64,
    /// Stall intervals over its runs.
    pub stall_intervals: usize,
}

/// One point of a scaling curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// Worker threads.
    pub threads: u32,
    /// I/Os in flight per thread.
    pub iodepth: u32,
    /// Bytes per I/O.
    pub block_size_bytes: u64,
    /// threads x iodepth.
    pub load: u64,
    /// Index in [`Report::points`].
    pub point: usize,
    /// Throughput.
    pub iops: f64,
    /// Bytes per second.
    pub bytes_per_s: f64,
    /// p95 latency (all operations).
    pub p95_ns: u64,
    /// p99 latency (all operations).
    pub p99_ns: u64,
}

impl CurvePoint {
    /// The point's value on an axis (`threads`, `iodepth` or `block_size_bytes`).
    pub fn x(&self, axis: &str) -> u64 {
        match axis {
            "threads" => self.threads as u64,
            "iodepth" => self.iodepth as u64,
            _ => self.block_size_bytes,
        }
    }
}

/// The knee of a curve over the load (threads x iodepth).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    /// The p99 limit used.
    pub slo_p99_ns: u64,
    /// `--slo-p99`, or `2x p99 at the lowest load`.
    pub slo_from: String,
    /// The highest load whose p99 stays under the limit (with every lower load).
    pub max_load_within_slo: Option<u64>,
    /// The load after which throughput grows by less than the saturation share per doubling.
    pub saturation_load: Option<u64>,
    /// Throughput at that load.
    pub saturation_iops: Option<f64>,
}

/// Throughput and latency against one parameter, one curve per combination of the others.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    /// `threads`, `iodepth` or `block_size_bytes`.
    pub axis: String,
    /// What the curve's points share, in words.
    pub label: String,
    /// Points by increasing value on the axis (see [`CurvePoint::x`]).
    pub points: Vec<CurvePoint>,
    /// For threads and iodepth curves.
    pub knee: Option<Knee>,
}

/// Two points that differ in one parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The parameter that differs.
    pub parameter: String,
    /// What the two points share, in words.
    pub label: String,
    /// Point A (index in [`Report::points`]).
    pub a_point: usize,
    /// A's value of the parameter.
    pub a_value: String,
    /// Point B.
    pub b_point: usize,
    /// B's value of the parameter.
    pub b_value: String,
    /// A's mean throughput.
    pub a_iops: f64,
    /// B's mean throughput.
    pub b_iops: f64,
    /// B / A.
    pub iops_ratio: f64,
    /// A's p99.
    pub a_p99_ns: u64,
    /// B's p99.
    pub b_p99_ns: u64,
    /// B / A.
    pub p99_ratio: f64,
    /// The test: Mann-Whitney U over the per-interval throughput of the two points' measured,
    /// steady intervals (two-sided, normal approximation with tie correction).
    pub test: String,
    /// Intervals of A in the test.
    pub a_intervals: usize,
    /// Intervals of B in the test.
    pub b_intervals: usize,
    /// Two-sided p-value (`None` with fewer than 5 intervals on a side).
    pub p_value: Option<f64>,
    /// The throughput difference is larger than run-to-run noise (p < alpha).
    pub significant: bool,
    /// What the comparison means, where dbio can say (an A/B of the buffers' layout: what
    /// large_pages in the server would change); null otherwise.
    #[serde(default)]
    pub finding: Option<String>,
}

/// The whole report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The thresholds used.
    pub options: ReportOptions,
    /// Every run read.
    pub runs: Vec<RunReport>,
    /// Runs of the same workload merged.
    pub points: Vec<PointReport>,
    /// Scaling curves with their knees.
    pub curves: Vec<Curve>,
    /// A/B comparisons.
    pub comparisons: Vec<Comparison>,
}
