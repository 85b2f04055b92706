//! `dbio bench --format csv`: the time series, one row per report interval (warmup ones
//! included and flagged), with the units in the column names.

use crate::export::Csv;
use crate::export::{csv_row, Exporter};
use dbio_schema::bench::{BenchResult, DeviceInterval, Interval, OpInterval};
use std::io::{self, Write};

const OPS: [&str; 4] = ["read", "write", "fsync", "total"];
const FIELDS: [&str; 6] = ["count", "iops", "bytes_per_s", "p50_ns", "p99_ns", "max_ns"];
const DEV_FIELDS: [&str; 9] = [
    "r_per_s",
    "w_per_s",
    "r_await_ms",
    "w_await_ms",
    "rareq_sz_kb",
    "wareq_sz_kb",
    "aqu_sz",
    "util_pct",
    "f_per_s",
];

fn dev_values(d: Option<&DeviceInterval>) -> [String; 9] {
    match d {
        None => Default::default(),
        Some(d) => [
            d.r_per_s,
            d.w_per_s,
            d.r_await_ms,
            d.w_await_ms,
            d.rareq_sz_kb,
            d.wareq_sz_kb,
            d.aqu_sz,
            d.util_pct,
            d.f_per_s,
        ]
        .map(|v| v.to_string()),
    }
}

/// The device names of a result's time series (from its first interval with devices).
pub fn device_names(r: &BenchResult) -> Vec<String> {
    r.intervals
        .iter()
        .find(|i| !i.devices.is_empty())
        .map(|i| i.devices.iter().map(|d| d.name.clone()).collect())
        .unwrap_or_default()
}

/// The header row: `start_s,end_s,warmup`, then `count`, `iops`, `bytes_per_s`, `p50_ns`,
/// `p99_ns`, `max_ns` for `read`, `write`, `fsync` and `total`, then for each device under
/// the target `<dev>_r_per_s`, `<dev>_w_per_s`, `<dev>_r_await_ms`, ... (iostat -x figures).
pub fn header_row(devices: &[String]) -> Vec<String> {
    let mut h = vec!["start_s".to_string(), "end_s".into(), "warmup".into()];
    for op in OPS {
        for f in FIELDS {
            h.push(format!("{op}_{f}"));
        }
    }
    for d in devices {
        for f in DEV_FIELDS {
            h.push(format!("{d}_{f}"));
        }
    }
    h
}

/// The row of one interval, in the order of [`header_row`]. A statistic that is not defined
/// is an empty cell, never 0: the latencies of an operation with no I/O in the interval, the
/// bytes of fsyncs (they move none), and the device columns of an interval with no figures for
/// that device.
pub fn interval_row(i: &Interval, devices: &[String]) -> Vec<String> {
    let mut r = vec![
        i.start_s.to_string(),
        i.end_s.to_string(),
        i.warmup.to_string(),
    ];
    let ops: [(&OpInterval, bool); 4] = [
        (&i.read, true),
        (&i.write, true),
        (&i.fsync, false),
        (&i.total, true),
    ];
    for (o, moves_bytes) in ops {
        r.push(o.count.to_string());
        r.push(o.iops.to_string());
        r.push(if moves_bytes {
            o.bytes_per_s.to_string()
        } else {
            String::new()
        });
        for v in [o.lat_ns.p50, o.lat_ns.p99, o.lat_ns.max] {
            r.push(if o.count == 0 {
                String::new()
            } else {
                v.to_string()
            });
        }
    }
    for name in devices {
        r.extend(dev_values(i.devices.iter().find(|d| &d.name == name)));
    }
    r
}

/// A single-phase result: the header and one row per interval. The default run (no
/// `--mode`): the same columns and a last one, `phase` (`pages`, then `commit`), with the
/// commit phase's rows after the data-page phase's (its devices are the same file system's).
impl Exporter<BenchResult> for Csv {
    fn export(&self, r: &BenchResult, out: &mut dyn Write) -> io::Result<()> {
        let devices = device_names(r);
        let Some(d) = &r.default_run else {
            csv_row(out, header_row(&devices))?;
            for i in &r.intervals {
                csv_row(out, interval_row(i, &devices))?;
            }
            return Ok(());
        };
        let mut h = header_row(&devices);
        h.push("phase".into());
        csv_row(out, h)?;
        let commit = d.commit.as_deref().map_or(&[][..], |c| &c.intervals[..]);
        let rows = r
            .intervals
            .iter()
            .map(|i| (i, "pages"))
            .chain(commit.iter().map(|i| (i, "commit")));
        for (i, phase) in rows {
            let mut row = interval_row(i, &devices);
            row.push(phase.into());
            csv_row(out, row)?;
        }
        Ok(())
    }
}
