//! Service demands from a `dbio bench` result (`dbio model bounds|mva --from-bench`), by the
//! utilisation law D_k = U_k / X over the measured (not warmup) intervals, each weighted by its
//! length:
//!
//! - CPU: the machine's busy share (iostat -c's %user + %system + %steal, recorded per
//!   interval) over the operations per second: the CPUs seen as one server ncpu times as fast,
//!   as the seed's Dcpu = (%usr+%sys)/TPS;
//! - disks: each physical disk under the target (`disk` in the environment; the bottom device
//!   when there is none), %util over the operations per second. Upper layers (partitions, dm,
//!   md) are left out: their busy time is their disks' and would be counted twice.
//!
//! The run's own concurrency and throughput come along as [`Measured`], to set beside what
//! the model says of that concurrency.

use crate::{points, queueing, ModelError};
use dbio_schema::bench::BenchResult;
use dbio_schema::model::{Centre, Measured};

/// The demands measured in `b` and the run's own point.
pub fn demands(b: &BenchResult, source: &str) -> Result<(Vec<Centre>, Measured), ModelError> {
    let point = points::from_bench(b, 0)?;
    if point.x <= 0.0 {
        return Err(ModelError::BadMeasurement(format!(
            "{source}: the run completed no operations: no demand per operation"
        )));
    }
    let measured: Vec<_> = b.intervals.iter().filter(|i| !i.warmup).collect();
    let weight = |i: &&dbio_schema::bench::Interval| (i.end_s - i.start_s).max(0.0);
    let mut notes = Vec::new();
    let mut centres = Vec::new();
    let cpu: Vec<_> = measured.iter().filter(|i| i.cpu.is_some()).collect();
    let t_cpu: f64 = cpu.iter().map(|i| weight(i)).sum();
    if t_cpu > 0.0 {
        let busy = cpu
            .iter()
            .map(|i| {
                let c = i.cpu.as_ref().expect("filtered");
                weight(i) * (c.usr_pct + c.sys_pct + c.steal_pct) / 100.0
            })
            .sum::<f64>()
            / t_cpu;
        centres.push(queueing("cpu", busy / point.x));
        notes.push(format!(
            "cpu: {:.1}% busy on average over {} CPUs (usr + sys + steal, the whole machine: other processes count too) / {:.1} ops/s",
            100.0 * busy,
            b.environment.cpus,
            point.x
        ));
    } else {
        notes.push("no CPU figures in this result (written before dbio recorded them): the CPU is not a centre".into());
    }
    let devs = &b.environment.devices;
    let mut disks: Vec<&str> = devs
        .iter()
        .filter(|d| d.kind == "disk")
        .map(|d| d.name.as_str())
        .collect();
    if disks.is_empty() {
        disks.extend(devs.last().map(|d| d.name.as_str()));
    }
    for name in disks {
        let seen: Vec<(f64, f64)> = measured
            .iter()
            .filter_map(|i| {
                i.devices
                    .iter()
                    .find(|d| d.name == name)
                    .map(|d| (weight(i), d.util_pct))
            })
            .collect();
        let t: f64 = seen.iter().map(|(w, _)| w).sum();
        if t <= 0.0 {
            notes.push(format!("{name}: no figures in the intervals: not a centre"));
            continue;
        }
        let util = seen.iter().map(|(w, u)| w * u / 100.0).sum::<f64>() / t;
        centres.push(queueing(name, util.min(1.0) / point.x));
        notes.push(format!(
            "{name}: {:.1}% util on average / {:.1} ops/s",
            100.0 * util,
            point.x
        ));
    }
    if devs.is_empty() {
        notes.push(
            "no block device under the target (tmpfs, or the null engine): no disk centre".into(),
        );
    }
    Ok((
        centres,
        Measured {
            source: source.to_string(),
            n: point.n,
            x_per_s: point.x,
            r_s: point.r,
            notes,
        },
    ))
}
