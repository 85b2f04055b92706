//! `dbio bench --format csv`: the time series, one row per report interval (warmup ones
//! included and flagged), with the units in the column names.

use crate::bench::{BenchResult, Interval, OpInterval};
use crate::export::{csv_row, Exporter};
use std::io::{self, Write};

const OPS: [&str; 4] = ["read", "write", "fsync", "total"];
const FIELDS: [&str; 6] = ["count", "iops", "bytes_per_s", "p50_ns", "p99_ns", "max_ns"];

/// The header row: `start_s,end_s,warmup`, then `count`, `iops`, `bytes_per_s`, `p50_ns`,
/// `p99_ns`, `max_ns` for `read`, `write`, `fsync` and `total`.
pub fn header_row() -> Vec<String> {
    let mut h = vec!["start_s".to_string(), "end_s".into(), "warmup".into()];
    for op in OPS {
        for f in FIELDS {
            h.push(format!("{op}_{f}"));
        }
    }
    h
}

/// The row of one interval, in the order of [`header_row`].
pub fn interval_row(i: &Interval) -> Vec<String> {
    let mut r = vec![
        i.start_s.to_string(),
        i.end_s.to_string(),
        i.warmup.to_string(),
    ];
    let ops: [&OpInterval; 4] = [&i.read, &i.write, &i.fsync, &i.total];
    for o in ops {
        r.push(o.count.to_string());
        r.push(o.iops.to_string());
        r.push(o.bytes_per_s.to_string());
        r.push(o.lat_ns.p50.to_string());
        r.push(o.lat_ns.p99.to_string());
        r.push(o.lat_ns.max.to_string());
    }
    r
}

/// The time series as CSV (RFC 4180): a header row, then one row per interval.
#[derive(Clone, Copy, Debug, Default)]
pub struct CsvExporter;

impl Exporter<BenchResult> for CsvExporter {
    fn export(&self, r: &BenchResult, out: &mut dyn Write) -> io::Result<()> {
        csv_row(out, header_row())?;
        for i in &r.intervals {
            csv_row(out, interval_row(i))?;
        }
        Ok(())
    }
}
