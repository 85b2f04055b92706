//! `dbio iostat --format prometheus`: node_exporter's `node_disk_*` counters (same names, units
//! and help) from the sample at the end of each interval, and `dbio_disk_*` gauges of the
//! interval's figures, written through the one Prometheus writer ([`Exposition`]).
//!
//! Two shapes, both accepted by `promtool check metrics`:
//! - [`Prometheus::file`]: each report is a whole exposition without timestamps, for a
//!   file rewritten at every sample and read by node_exporter's textfile collector (which
//!   refuses client-side timestamps).
//! - [`Prometheus::stream`]: the reports follow each other as one exposition, each
//!   family's `# HELP` and `# TYPE` written once (a second `# HELP` is an error for Prometheus'
//!   parser) and every sample line stamped with the end of its interval in milliseconds, so the
//!   same series at two instants are two points, not a duplicate.
//!
//! A device once exported stays in every later report of the exporter while it is in the
//! sample (node_exporter never drops a device; a series that vanishes while its device is idle
//! breaks `rate()`): its counters come from the sample even in an interval it was skipped in.
//! The `device` label holds a kernel device name and nothing else: a `--group` is exported in
//! `dbio_disk_group_*` families with a `group` label, and its members in
//! `dbio_disk_group_member_info{group, device}` (value 1).

use crate::export::prometheus::{Kind, State};
use crate::export::Exporter;
use crate::export::Prometheus;
use dbio_schema::iostat::{DiskStat, Figures};
use dbio_schema::iostat::{Kind as RowKind, Report};
use std::io::{self, Write};

type Get = fn(&DiskStat) -> f64;
type GetF = fn(&Figures) -> f64;

/// node_exporter's diskstats counters: name, type, help, value.
const COUNTERS: [(&str, Kind, &str, Get); 17] = [
    (
        "node_disk_reads_completed_total",
        Kind::Counter,
        "The total number of reads completed successfully.",
        |d| d.reads as f64,
    ),
    (
        "node_disk_reads_merged_total",
        Kind::Counter,
        "The total number of reads merged.",
        |d| d.reads_merged as f64,
    ),
    (
        "node_disk_read_bytes_total",
        Kind::Counter,
        "The total number of bytes read successfully.",
        |d| d.sectors_read as f64 * 512.0,
    ),
    (
        "node_disk_read_time_seconds_total",
        Kind::Counter,
        "The total number of seconds spent by all reads.",
        |d| d.read_ms as f64 / 1000.0,
    ),
    (
        "node_disk_writes_completed_total",
        Kind::Counter,
        "The total number of writes completed successfully.",
        |d| d.writes as f64,
    ),
    (
        "node_disk_writes_merged_total",
        Kind::Counter,
        "The number of writes merged.",
        |d| d.writes_merged as f64,
    ),
    (
        "node_disk_written_bytes_total",
        Kind::Counter,
        "The total number of bytes written successfully.",
        |d| d.sectors_written as f64 * 512.0,
    ),
    (
        "node_disk_write_time_seconds_total",
        Kind::Counter,
        "This is the total number of seconds spent by all writes.",
        |d| d.write_ms as f64 / 1000.0,
    ),
    (
        "node_disk_io_now",
        Kind::Gauge,
        "The number of I/Os currently in progress.",
        |d| d.in_flight as f64,
    ),
    (
        "node_disk_io_time_seconds_total",
        Kind::Counter,
        "Total seconds spent doing I/Os.",
        |d| d.io_ms as f64 / 1000.0,
    ),
    (
        "node_disk_io_time_weighted_seconds_total",
        Kind::Counter,
        "The weighted # of seconds spent doing I/Os.",
        |d| d.weighted_ms as f64 / 1000.0,
    ),
    (
        "node_disk_discards_completed_total",
        Kind::Counter,
        "The total number of discards completed successfully.",
        |d| d.discards as f64,
    ),
    (
        "node_disk_discards_merged_total",
        Kind::Counter,
        "The total number of discards merged.",
        |d| d.discards_merged as f64,
    ),
    (
        "node_disk_discarded_sectors_total",
        Kind::Counter,
        "The total number of sectors discarded successfully.",
        |d| d.sectors_discarded as f64,
    ),
    (
        "node_disk_discard_time_seconds_total",
        Kind::Counter,
        "This is the total number of seconds spent by all discards.",
        |d| d.discard_ms as f64 / 1000.0,
    ),
    (
        "node_disk_flush_requests_total",
        Kind::Counter,
        "The total number of flush requests completed successfully",
        |d| d.flushes as f64,
    ),
    (
        "node_disk_flush_requests_time_seconds_total",
        Kind::Counter,
        "This is the total number of seconds spent by all flush requests.",
        |d| d.flush_ms as f64 / 1000.0,
    ),
];

/// The interval's figures: name, help, value.
const GAUGES: [(&str, &str, GetF); 12] = [
    ("dbio_disk_reads_per_second", "Reads completed per second over the last interval (iostat r/s).", |f| f.r_per_s),
    ("dbio_disk_writes_per_second", "Writes completed per second over the last interval (iostat w/s).", |f| f.w_per_s),
    ("dbio_disk_read_bytes_per_second", "Bytes read per second over the last interval (iostat rkB/s x 1024).", |f| f.rkb_per_s * 1024.0),
    ("dbio_disk_written_bytes_per_second", "Bytes written per second over the last interval (iostat wkB/s x 1024).", |f| f.wkb_per_s * 1024.0),
    ("dbio_disk_read_await_seconds", "Mean read time including queueing over the last interval (iostat r_await / 1000).", |f| f.r_await_ms / 1000.0),
    ("dbio_disk_write_await_seconds", "Mean write time including queueing over the last interval (iostat w_await / 1000).", |f| f.w_await_ms / 1000.0),
    ("dbio_disk_read_request_bytes", "Mean read request size over the last interval (iostat rareq-sz x 1024).", |f| f.rareq_sz_kb * 1024.0),
    ("dbio_disk_write_request_bytes", "Mean write request size over the last interval (iostat wareq-sz x 1024).", |f| f.wareq_sz_kb * 1024.0),
    ("dbio_disk_queue_size", "Mean number of requests queued or in service over the last interval (iostat aqu-sz).", |f| f.aqu_sz),
    ("dbio_disk_utilization_ratio", "Share of the last interval with at least one request in flight (iostat %util / 100); not saturation on SSD/NVMe/RAID.", |f| f.util_pct / 100.0),
    ("dbio_disk_read_concurrency", "Read concurrency by Little's law over the last interval (pt-diskstats rd_cnc).", |f| f.rd_cnc),
    ("dbio_disk_write_concurrency", "Write concurrency by Little's law over the last interval (pt-diskstats wr_cnc).", |f| f.wr_cnc),
];

const GROUP_HELP: &str =
    "Of a --group of devices, from the sums of their counters (%util, rd_cnc and wr_cnc divided by its number of devices):";

impl Exporter<Report> for Prometheus {
    fn export(&self, r: &Report, out: &mut dyn Write) -> io::Result<()> {
        let mut st = self.iostat.borrow_mut();
        let State { expo, exported } = &mut *st;
        expo.begin(r.ts);
        exported.extend(
            r.devices
                .iter()
                .filter(|d| d.kind != RowKind::Group)
                .map(|d| d.device.clone()),
        );
        let counted: Vec<&DiskStat> = r
            .sample
            .iter()
            .filter(|d| exported.contains(&d.name))
            .collect();
        for (name, kind, help, get) in COUNTERS {
            let samples = counted
                .iter()
                .map(|d| (vec![("device", d.name.as_str())], get(d)));
            expo.family(name, kind, help, samples);
        }
        let (groups, devices): (Vec<_>, Vec<_>) =
            r.devices.iter().partition(|d| d.kind == RowKind::Group);
        for (name, help, get) in GAUGES {
            let samples = devices
                .iter()
                .map(|d| (vec![("device", d.device.as_str())], get(&d.figures)));
            expo.family(name, Kind::Gauge, help, samples);
        }
        let members = groups.iter().flat_map(|g| {
            g.members.iter().map(|m| {
                (
                    vec![("group", g.device.as_str()), ("device", m.as_str())],
                    1.0,
                )
            })
        });
        expo.family(
            "dbio_disk_group_member_info",
            Kind::Gauge,
            "A device summed in a --group (always 1).",
            members,
        );
        for (name, help, get) in GAUGES {
            let name = name.replacen("dbio_disk_", "dbio_disk_group_", 1);
            let samples = groups
                .iter()
                .map(|g| (vec![("group", g.device.as_str())], get(&g.figures)));
            expo.family(&name, Kind::Gauge, &format!("{GROUP_HELP} {help}"), samples);
        }
        out.write_all(expo.take().as_bytes())
    }
}
