//! The result of `dbio sweep`: the plan (the swept values and the workload they share), one
//! entry per point with its summary figures and the file of its complete bench result, and
//! the environment once. Written as `DIR/sweep.json` after every point, so an interrupted
//! sweep can be resumed and read by `dbio report` and `dbio model usl`.

use crate::bench::{BenchResult, BufferLayout, Environment, Mode, Named, OpSummary, Spec};
use crate::hist::LatencyHistogram;
use serde::{Deserialize, Serialize};

/// `DIR/sweep.json`.
pub const SWEEP_SCHEMA: &str = crate::doc::SWEEP;

/// The values swept, each a list (one value: not swept).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Axes {
    /// `--mode`.
    pub mode: Vec<Mode>,
    /// `--block-size`, bytes.
    pub block_size_bytes: Vec<u64>,
    /// `--misalign`, bytes.
    pub misalign_bytes: Vec<u64>,
    /// `--scheduler` (empty: the scheduler is left alone).
    pub scheduler: Vec<String>,
    /// `--iodepth`.
    pub iodepth: Vec<u32>,
    /// `--threads`.
    pub threads: Vec<u32>,
    /// `--buffers` (empty: the layout of the base workload, not swept).
    #[serde(default)]
    pub buffers: Vec<BufferLayout>,
}

impl Axes {
    /// The number of points of one repetition.
    pub fn len(&self) -> usize {
        self.mode.len()
            * self.block_size_bytes.len()
            * self.misalign_bytes.len()
            * self.scheduler.len().max(1)
            * self.iodepth.len()
            * self.threads.len()
            * self.buffers.len().max(1)
    }

    /// Whether a list is empty (no point at all).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One point of a sweep: one bench run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Name of the point, unique in the sweep, also its file name (`points/ID.json`).
    pub id: String,
    /// Repetition, from 1.
    pub repeat: u32,
    /// `--mode`.
    pub mode: Mode,
    /// `--block-size`, bytes.
    pub block_size_bytes: u64,
    /// `--misalign`, bytes.
    pub misalign_bytes: u64,
    /// The I/O scheduler set for the run (`None`: left as it was).
    pub scheduler: Option<String>,
    /// `--iodepth`.
    pub iodepth: u32,
    /// `--threads`.
    pub threads: u32,
    /// The I/O buffers' layout (`None`: the base workload's, not swept).
    #[serde(default)]
    pub buffers: Option<BufferLayout>,
}

impl Point {
    /// The load of the point: threads x iodepth I/Os in flight at most.
    pub fn load(&self) -> u64 {
        u64::from(self.threads) * u64::from(self.iodepth)
    }
}

/// A size as a short name part: `16k`, `1m`, `512`.
fn size_id(b: u64) -> String {
    for (shift, unit) in [(30, 'g'), (20, 'm'), (10, 'k')] {
        if b >= 1 << shift && b.is_multiple_of(1 << shift) {
            return format!("{}{unit}", b >> shift);
        }
    }
    b.to_string()
}

/// Every point of `axes`, `repeat` times: repetition outermost (so a drift over the sweep
/// shows as a difference between repetitions), threads innermost (each curve of throughput
/// against threads is measured in one go).
pub fn points(axes: &Axes, repeat: u32) -> Vec<Point> {
    let scheds: Vec<Option<String>> = if axes.scheduler.is_empty() {
        vec![None]
    } else {
        axes.scheduler.iter().cloned().map(Some).collect()
    };
    let bufs: Vec<Option<BufferLayout>> = if axes.buffers.is_empty() {
        vec![None]
    } else {
        axes.buffers.iter().copied().map(Some).collect()
    };
    let mut out = Vec::new();
    for r in 1..=repeat {
        for &mode in &axes.mode {
            for &bs in &axes.block_size_bytes {
                for &mis in &axes.misalign_bytes {
                    for sched in &scheds {
                        for &buf in &bufs {
                            for &qd in &axes.iodepth {
                                for &t in &axes.threads {
                                    let n = out.len() + 1;
                                    let mut id = format!(
                                        "{n:03}-{}-{}-m{mis}-qd{qd}-t{t}",
                                        mode.name(),
                                        size_id(bs)
                                    );
                                    if let Some(s) = sched {
                                        id.push('-');
                                        id.push_str(s);
                                    }
                                    if let Some(b) = buf {
                                        id.push('-');
                                        id.push_str(b.name());
                                    }
                                    if repeat > 1 {
                                        id.push_str(&format!("-r{r}"));
                                    }
                                    out.push(Point {
                                        id,
                                        repeat: r,
                                        mode,
                                        block_size_bytes: bs,
                                        misalign_bytes: mis,
                                        scheduler: sched.clone(),
                                        iodepth: qd,
                                        threads: t,
                                        buffers: buf,
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

/// Where a point stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Not run yet (or interrupted: it runs again on `--resume`).
    Pending,
    /// Run to its end; its result is in its file.
    Done,
    /// The run failed; the error says why.
    Failed,
}

/// One operation's figures at a point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpFigures {
    /// Operations per second.
    pub iops: f64,
    /// Mean latency.
    pub mean_ns: f64,
    /// Median latency.
    pub p50_ns: u64,
    /// 95th percentile.
    pub p95_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p99_9_ns: u64,
    /// Maximum.
    pub max_ns: u64,
}

impl OpFigures {
    /// The figures of one operation of a result (`None` when it did not occur).
    pub fn of(op: &OpSummary) -> Option<Self> {
        if op.count == 0 {
            return None;
        }
        let h = LatencyHistogram::from_data(&op.histogram);
        Some(OpFigures {
            iops: op.iops,
            mean_ns: h.mean(),
            p50_ns: h.percentile(50.0),
            p95_ns: h.percentile(95.0),
            p99_ns: h.percentile(99.0),
            p99_9_ns: h.percentile(99.9),
            max_ns: h.max(),
        })
    }
}

/// The summary of a point's bench result, for tables and curves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// All operations per second.
    pub iops: f64,
    /// Bytes read and written per second.
    pub bytes_per_s: f64,
    /// Reads.
    pub read: Option<OpFigures>,
    /// Writes.
    pub write: Option<OpFigures>,
    /// fsync/fdatasync.
    pub fsync: Option<OpFigures>,
    /// Mean of the measured intervals' machine CPU in user mode.
    pub cpu_usr_pct: Option<f64>,
    /// Mean of the measured intervals' machine CPU in kernel mode.
    pub cpu_sys_pct: Option<f64>,
    /// Mean of the measured intervals' iowait.
    pub cpu_iowait_pct: Option<f64>,
    /// Mean %util of the device the files sit on over the measured intervals.
    pub device_util_pct: Option<f64>,
    /// Mean aqu-sz of that device.
    pub device_aqu_sz: Option<f64>,
}

fn mean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let (n, s) = v.fold((0u32, 0.0), |(n, s), x| (n + 1, s + x));
    (n > 0).then(|| s / f64::from(n))
}

impl Figures {
    /// The figures of a bench result.
    pub fn of(r: &BenchResult) -> Self {
        let measured = || r.intervals.iter().filter(|i| !i.warmup);
        Figures {
            iops: r.summary.total.iops,
            bytes_per_s: r.summary.total.bytes_per_s,
            read: OpFigures::of(&r.summary.read),
            write: OpFigures::of(&r.summary.write),
            fsync: OpFigures::of(&r.summary.fsync),
            cpu_usr_pct: mean(measured().filter_map(|i| i.cpu.map(|c| c.usr_pct))),
            cpu_sys_pct: mean(measured().filter_map(|i| i.cpu.map(|c| c.sys_pct))),
            cpu_iowait_pct: mean(measured().filter_map(|i| i.cpu.map(|c| c.iowait_pct))),
            device_util_pct: mean(measured().filter_map(|i| i.devices.first().map(|d| d.util_pct))),
            device_aqu_sz: mean(measured().filter_map(|i| i.devices.first().map(|d| d.aqu_sz))),
        }
    }
}

/// A point of `--workload sysbench-oltp`: sysbench's own figures of one oltp_read_write run,
/// with the machine's CPU and the datadir's device over the same time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OltpFigures {
    /// Transactions committed.
    pub transactions: u64,
    /// Transactions per second.
    pub transactions_per_s: f64,
    /// Queries run.
    pub queries: u64,
    /// Queries per second.
    pub queries_per_s: f64,
    /// Ignored errors (deadlocks sysbench retries) per second.
    pub errors_per_s: f64,
    /// Reconnects.
    pub reconnects: u64,
    /// sysbench's total time.
    pub time_s: f64,
    /// Fastest transaction.
    pub lat_min_ms: f64,
    /// Mean transaction latency.
    pub lat_avg_ms: f64,
    /// Slowest transaction.
    pub lat_max_ms: f64,
    /// Median, from sysbench's latency histogram.
    pub lat_p50_ms: Option<f64>,
    /// 95th percentile, from the histogram.
    pub lat_p95_ms: Option<f64>,
    /// 99th percentile, sysbench's own.
    pub lat_p99_ms: Option<f64>,
    /// The machine's CPU in user mode over the run.
    pub cpu_usr_pct: Option<f64>,
    /// In kernel mode.
    pub cpu_sys_pct: Option<f64>,
    /// iowait.
    pub cpu_iowait_pct: Option<f64>,
    /// %util of the device under `--datadir` over the run.
    pub device_util_pct: Option<f64>,
    /// aqu-sz of that device.
    pub device_aqu_sz: Option<f64>,
}

/// A point and how it went.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointResult {
    /// The point.
    #[serde(flatten)]
    pub point: Point,
    /// Where it stands.
    pub status: Status,
    /// Its bench result, relative to the sweep directory (`points/ID.json`), once done.
    pub file: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
    /// Its figures, once done (bench workload).
    pub figures: Option<Figures>,
    /// Its figures, once done (`--workload sysbench-oltp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oltp: Option<OltpFigures>,
}

fn bench_workload() -> String {
    "bench".into()
}

/// `DIR/sweep.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepResult {
    /// [`SWEEP_SCHEMA`].
    pub schema: String,
    /// The dbio version that wrote it.
    pub dbio_version: String,
    /// When the sweep started (RFC 3339, UTC).
    pub started_at: String,
    /// What each point runs: `bench` (a dbio bench run) or `sysbench-oltp`.
    #[serde(default = "bench_workload")]
    pub workload: String,
    /// The values swept.
    pub axes: Axes,
    /// How many times every point runs.
    pub repeat: u32,
    /// The spec of the first point: the workload every point shares, but for the swept values.
    pub base: Spec,
    /// The environment of the first point run (the same machine and target for all).
    pub environment: Option<Environment>,
    /// Every point, in the order they run.
    pub points: Vec<PointResult>,
    /// The sweep was interrupted (Ctrl-C, SIGTERM) before every point ran.
    pub interrupted: bool,
}

impl SweepResult {
    /// Points done.
    pub fn done(&self) -> usize {
        self.points
            .iter()
            .filter(|p| p.status == Status::Done)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_nest_threads_innermost_and_repeat_outermost() {
        let axes = Axes {
            mode: vec![Mode::Rndrd],
            block_size_bytes: vec![16384],
            misalign_bytes: vec![0, 512],
            scheduler: vec![],
            iodepth: vec![1],
            threads: vec![1, 2],
            buffers: vec![],
        };
        assert_eq!(axes.len(), 4);
        let p = points(&axes, 2);
        assert_eq!(p.len(), 8);
        let ids: Vec<&str> = p.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(
            ids[..3],
            [
                "001-rndrd-16k-m0-qd1-t1-r1",
                "002-rndrd-16k-m0-qd1-t2-r1",
                "003-rndrd-16k-m512-qd1-t1-r1"
            ]
        );
        assert_eq!(p[4].repeat, 2);
        assert_eq!(p[7].load(), 2);
        let with_sched = Axes {
            scheduler: vec!["none".into(), "mq-deadline".into()],
            ..axes
        };
        assert_eq!(
            points(&with_sched, 1)[2].id,
            "003-rndrd-16k-m0-qd1-t1-mq-deadline"
        );
    }
}
