//! `dbio report --format csv`: a table of every run (each point of a sweep is a run) with its
//! parameters, figures and verdicts, units in the column names. Statistics that do not apply
//! are empty cells.

use crate::export::csv::opt;
use crate::export::Csv;
use crate::export::{csv_row, Exporter};
use dbio_schema::report::Report;
use std::io::{self, Write};

const HEADER: [&str; 35] = [
    "run",
    "point",
    "host",
    "target",
    "device",
    "filesystem",
    "scheduler",
    "mode",
    "engine",
    "block_size_bytes",
    "threads",
    "iodepth",
    "misalign_bytes",
    "flags",
    "fsync_every",
    "started_at",
    "interval_s",
    "intervals",
    "iops",
    "bytes_per_s",
    "p50_ns",
    "p95_ns",
    "p99_ns",
    "p99_9_ns",
    "max_ns",
    "device_util_pct",
    "stall_intervals",
    "stalled_s",
    "median_iops",
    "periodic_period_s",
    "periodic_depth_pct",
    "steady",
    "steady_from_s",
    "steady_iops",
    "p99_steady_from_s",
];

impl Exporter<Report> for Csv {
    fn export(&self, r: &Report, out: &mut dyn Write) -> io::Result<()> {
        csv_row(out, HEADER)?;
        for x in &r.runs {
            let p = &x.params;
            // Latency percentiles of the run's one operation; empty when it has several (the
            // JSON has each operation's).
            let one = (x.ops.len() == 1).then(|| &x.ops[0].lat_ns);
            let lat = |q: f64| opt(one.and_then(|l| l.get(q)));
            let periodic = x.stalls.periodic.as_ref();
            let row: [String; 35] = [
                x.label.clone(),
                x.point.to_string(),
                p.host.clone(),
                p.target.clone(),
                p.device.clone().unwrap_or_default(),
                p.filesystem.clone().unwrap_or_default(),
                p.scheduler.clone().unwrap_or_default(),
                p.mode.clone(),
                p.engine.clone(),
                p.block_size_bytes.to_string(),
                p.threads.to_string(),
                p.iodepth.to_string(),
                p.misalign_bytes.to_string(),
                p.flags.clone(),
                p.fsync_every.to_string(),
                x.started_at.clone(),
                x.interval_s.to_string(),
                x.intervals.len().to_string(),
                x.iops.to_string(),
                x.bytes_per_s.to_string(),
                lat(50.0),
                lat(95.0),
                lat(99.0),
                lat(99.9),
                opt(one.map(|l| l.max)),
                opt(x.device_util_pct),
                x.stalls.intervals.to_string(),
                x.stalls.stalled_s.to_string(),
                x.stalls.median_iops.to_string(),
                opt(periodic.map(|p| p.period_s)),
                opt(periodic.map(|p| p.depth_pct)),
                x.steady.reached.to_string(),
                opt(x.steady.from_s),
                x.steady.iops.to_string(),
                opt(x.steady.p99_from_s),
            ];
            csv_row(out, row)?;
        }
        Ok(())
    }
}
