//! `dbio sweep` as text: what was swept, then a table of every point (throughput, latency
//! percentiles per operation, machine CPU and device %util), in the order the points ran.

use crate::export::table::{Column, Table};
use crate::export::Exporter;
use crate::export::Text;
use dbio_schema::sweep::{Figures, OpFigures, Status, SweepResult};
use dbio_schema::units::{format_ns, format_size};
use std::io::{self, Write};

/// The latency cells of an operation: p50, p99, max.
fn lat(o: Option<&OpFigures>) -> [String; 3] {
    match o {
        Some(o) => [
            format_ns(o.p50_ns as f64),
            format_ns(o.p99_ns as f64),
            format_ns(o.max_ns as f64),
        ],
        None => ["-".into(), "-".into(), "-".into()],
    }
}

fn pct(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.1}")).unwrap_or_else(|| "-".into())
}

/// The points of a `--workload sysbench-oltp` sweep: sysbench's figures.
fn oltp_table(r: &SweepResult) -> Table {
    let mut t = Table::new(vec![
        Column::left("point"),
        Column::left("status"),
        Column::right("threads"),
        Column::right("tps"),
        Column::right("qps"),
        Column::right("lat avg"),
        Column::right("p95"),
        Column::right("p99"),
        Column::right("max"),
        Column::right("usr%"),
        Column::right("sys%"),
        Column::right("iowait%"),
        Column::right("util%"),
    ]);
    let ms = |v: Option<f64>| v.map(|v| format_ns(v * 1e6)).unwrap_or_else(|| "-".into());
    for p in &r.points {
        let mut row = vec![
            p.point.id.clone(),
            status(p.status).to_string(),
            p.point.threads.to_string(),
        ];
        match &p.oltp {
            Some(o) => row.extend([
                format!("{:.1}", o.transactions_per_s),
                format!("{:.1}", o.queries_per_s),
                ms(Some(o.lat_avg_ms)),
                ms(o.lat_p95_ms),
                ms(o.lat_p99_ms),
                ms(Some(o.lat_max_ms)),
                pct(o.cpu_usr_pct),
                pct(o.cpu_sys_pct),
                pct(o.cpu_iowait_pct),
                pct(o.device_util_pct),
            ]),
            None => row.extend(std::iter::repeat_n("-".to_string(), 10)),
        }
        t.row(row);
    }
    t
}

fn status(s: Status) -> &'static str {
    match s {
        Status::Done => "done",
        Status::Pending => "pending",
        Status::Failed => "failed",
    }
}

/// The rows of the points table.
pub fn table(r: &SweepResult) -> Table {
    if r.workload == "sysbench-oltp" {
        return oltp_table(r);
    }
    let mut t = Table::new(vec![
        Column::left("point"),
        Column::left("status"),
        Column::right("IOPS"),
        Column::right("MiB/s"),
        Column::right("rd p50"),
        Column::right("rd p99"),
        Column::right("rd max"),
        Column::right("wr p50"),
        Column::right("wr p99"),
        Column::right("wr max"),
        Column::right("usr%"),
        Column::right("sys%"),
        Column::right("iowait%"),
        Column::right("util%"),
    ]);
    for p in &r.points {
        let mut row = vec![p.point.id.clone(), status(p.status).to_string()];
        match &p.figures {
            Some(f) => {
                let Figures {
                    iops, bytes_per_s, ..
                } = f;
                row.push(format!("{iops:.0}"));
                row.push(format!("{:.1}", bytes_per_s / 1048576.0));
                row.extend(lat(f.read.as_ref()));
                row.extend(lat(f.write.as_ref()));
                row.extend([
                    pct(f.cpu_usr_pct),
                    pct(f.cpu_sys_pct),
                    pct(f.cpu_iowait_pct),
                    pct(f.device_util_pct),
                ]);
            }
            None => row.extend(std::iter::repeat_n("-".to_string(), 12)),
        }
        t.row(row);
    }
    t
}

impl Exporter<SweepResult> for Text {
    fn export(&self, r: &SweepResult, out: &mut dyn Write) -> io::Result<()> {
        let a = &r.axes;
        let list = |v: Vec<String>| v.join(",");
        let per_point = r
            .base
            .time_s
            .map(dbio_schema::units::format_duration)
            .unwrap_or_else(|| format!("{} events", r.base.events));
        if r.workload == "sysbench-oltp" {
            writeln!(
                out,
                "dbio sweep: {} points x {} ({} done), sysbench oltp_read_write, {per_point} per point",
                a.len(),
                r.repeat,
                r.done(),
            )?;
        } else {
            writeln!(
                out,
                "dbio sweep: {} points x {} ({} done), {} engine, {per_point} per point, target {}",
                a.len(),
                r.repeat,
                r.done(),
                r.base.engine.name(),
                r.base.target.path().display()
            )?;
        }
        let sched = if a.scheduler.is_empty() {
            String::new()
        } else {
            format!("  scheduler {}", a.scheduler.join(","))
        };
        if r.workload == "sysbench-oltp" {
            let threads: Vec<String> = a.threads.iter().map(|t| t.to_string()).collect();
            writeln!(out, "  threads {}{sched}", threads.join(","))?;
        } else {
            writeln!(
                out,
                "  mode {}  block size {}  misalign {}  iodepth {}  threads {}{sched}",
                list(a.mode.iter().map(|m| m.name().to_string()).collect()),
                list(a.block_size_bytes.iter().map(|b| format_size(*b)).collect()),
                list(a.misalign_bytes.iter().map(|b| b.to_string()).collect()),
                list(a.iodepth.iter().map(|b| b.to_string()).collect()),
                list(a.threads.iter().map(|b| b.to_string()).collect()),
            )?;
        }
        writeln!(out)?;
        out.write_all(table(r).render().as_bytes())?;
        for p in r.points.iter().filter(|p| p.error.is_some()) {
            writeln!(
                out,
                "{} failed: {}",
                p.point.id,
                p.error.as_deref().unwrap_or("")
            )?;
        }
        if r.interrupted {
            writeln!(
                out,
                "interrupted: {} of {} points done; run the same command with --resume to finish",
                r.done(),
                r.points.len()
            )?;
        }
        Ok(())
    }
}
