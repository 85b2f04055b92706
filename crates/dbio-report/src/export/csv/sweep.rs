//! `dbio sweep --format csv`: one row per point, the swept values then the figures at full
//! precision, units in the column names; a figure that is not defined (an operation the mode
//! does not do, a point not run) is an empty cell.

use crate::export::csv::{csv_row, opt};
use crate::export::Csv;
use crate::export::Exporter;
use dbio_schema::sweep::{OpFigures, Status, SweepResult};
use std::io::{self, Write};

const OP_COLUMNS: [&str; 7] = [
    "iops", "mean_ns", "p50_ns", "p95_ns", "p99_ns", "p99_9_ns", "max_ns",
];

fn op_cells(o: Option<&OpFigures>) -> Vec<String> {
    match o {
        Some(o) => vec![
            o.iops.to_string(),
            o.mean_ns.to_string(),
            o.p50_ns.to_string(),
            o.p95_ns.to_string(),
            o.p99_ns.to_string(),
            o.p99_9_ns.to_string(),
            o.max_ns.to_string(),
        ],
        None => vec![String::new(); OP_COLUMNS.len()],
    }
}

impl Exporter<SweepResult> for Csv {
    fn export(&self, r: &SweepResult, out: &mut dyn Write) -> io::Result<()> {
        let mut head: Vec<String> = [
            "point",
            "repeat",
            "status",
            "mode",
            "block_size_bytes",
            "misalign_bytes",
            "scheduler",
            "iodepth",
            "threads",
            "iops",
            "bytes_per_s",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for op in ["read", "write", "fsync"] {
            head.extend(OP_COLUMNS.iter().map(|c| format!("{op}_{c}")));
        }
        head.extend(
            [
                "cpu_usr_pct",
                "cpu_sys_pct",
                "cpu_iowait_pct",
                "device_util_pct",
                "device_aqu_sz",
                "oltp_transactions_per_s",
                "oltp_queries_per_s",
                "oltp_errors_per_s",
                "oltp_lat_avg_ms",
                "oltp_lat_p50_ms",
                "oltp_lat_p95_ms",
                "oltp_lat_p99_ms",
                "oltp_lat_max_ms",
            ]
            .iter()
            .map(|s| s.to_string()),
        );
        csv_row(out, &head)?;
        for p in &r.points {
            let q = &p.point;
            let f = p.figures.as_ref();
            let mut row = vec![
                q.id.clone(),
                q.repeat.to_string(),
                match p.status {
                    Status::Done => "done",
                    Status::Pending => "pending",
                    Status::Failed => "failed",
                }
                .to_string(),
                q.mode.name().to_string(),
                q.block_size_bytes.to_string(),
                q.misalign_bytes.to_string(),
                q.scheduler.clone().unwrap_or_default(),
                q.iodepth.to_string(),
                q.threads.to_string(),
                opt(f.map(|f| f.iops)),
                opt(f.map(|f| f.bytes_per_s)),
            ];
            row.extend(op_cells(f.and_then(|f| f.read.as_ref())));
            row.extend(op_cells(f.and_then(|f| f.write.as_ref())));
            row.extend(op_cells(f.and_then(|f| f.fsync.as_ref())));
            let o = p.oltp.as_ref();
            row.extend([
                opt(f
                    .and_then(|f| f.cpu_usr_pct)
                    .or(o.and_then(|o| o.cpu_usr_pct))),
                opt(f
                    .and_then(|f| f.cpu_sys_pct)
                    .or(o.and_then(|o| o.cpu_sys_pct))),
                opt(f
                    .and_then(|f| f.cpu_iowait_pct)
                    .or(o.and_then(|o| o.cpu_iowait_pct))),
                opt(f
                    .and_then(|f| f.device_util_pct)
                    .or(o.and_then(|o| o.device_util_pct))),
                opt(f
                    .and_then(|f| f.device_aqu_sz)
                    .or(o.and_then(|o| o.device_aqu_sz))),
                opt(o.map(|o| o.transactions_per_s)),
                opt(o.map(|o| o.queries_per_s)),
                opt(o.map(|o| o.errors_per_s)),
                opt(o.map(|o| o.lat_avg_ms)),
                opt(o.and_then(|o| o.lat_p50_ms)),
                opt(o.and_then(|o| o.lat_p95_ms)),
                opt(o.and_then(|o| o.lat_p99_ms)),
                opt(o.map(|o| o.lat_max_ms)),
            ]);
            csv_row(out, &row)?;
        }
        Ok(())
    }
}
