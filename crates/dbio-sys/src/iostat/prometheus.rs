//! The Prometheus text exposition of iostat reports: node_exporter's `node_disk_*` counters
//! (same names, units and help) from the second sample of each interval, and `dbio_disk_*`
//! gauges of the interval's figures.
//!
//! Two shapes, both accepted by `promtool check metrics`:
//! - [`Exposition::file`]: each report is a whole exposition without timestamps, for a file
//!   rewritten at every sample and read by node_exporter's textfile collector (which refuses
//!   client-side timestamps).
//! - [`Exposition::stream`]: the reports follow each other as one exposition, each family's
//!   `# HELP` and `# TYPE` written once (a second `# HELP` is an error for Prometheus' parser)
//!   and every sample line stamped with the end of its interval in milliseconds, so the same
//!   series at two instants are two points, not a duplicate.
//!
//! A device once exported stays in every later report of the writer while it is in
//! `/proc/diskstats` (node_exporter never drops a device; a series that vanishes while its
//! device is idle breaks `rate()`): its counters come from the sample even in an interval it
//! was skipped in. The `device` label holds a kernel device name and nothing else: a `--group`
//! is exported in `dbio_disk_group_*` families with a `group` label, and its members in
//! `dbio_disk_group_member_info{group, device}` (value 1).

use super::{Kind, Report};
use crate::diskstats::{DiskStat, Figures};
use std::collections::{BTreeSet, HashSet};
use std::fmt::Write as _;

type Get = fn(&DiskStat) -> f64;
type GetF = fn(&Figures) -> f64;

/// node_exporter's diskstats counters: name, type, help, value.
const COUNTERS: [(&str, &str, &str, Get); 17] = [
    (
        "node_disk_reads_completed_total",
        "counter",
        "The total number of reads completed successfully.",
        |d| d.reads as f64,
    ),
    (
        "node_disk_reads_merged_total",
        "counter",
        "The total number of reads merged.",
        |d| d.reads_merged as f64,
    ),
    (
        "node_disk_read_bytes_total",
        "counter",
        "The total number of bytes read successfully.",
        |d| d.sectors_read as f64 * 512.0,
    ),
    (
        "node_disk_read_time_seconds_total",
        "counter",
        "The total number of seconds spent by all reads.",
        |d| d.read_ms as f64 / 1000.0,
    ),
    (
        "node_disk_writes_completed_total",
        "counter",
        "The total number of writes completed successfully.",
        |d| d.writes as f64,
    ),
    (
        "node_disk_writes_merged_total",
        "counter",
        "The number of writes merged.",
        |d| d.writes_merged as f64,
    ),
    (
        "node_disk_written_bytes_total",
        "counter",
        "The total number of bytes written successfully.",
        |d| d.sectors_written as f64 * 512.0,
    ),
    (
        "node_disk_write_time_seconds_total",
        "counter",
        "This is the total number of seconds spent by all writes.",
        |d| d.write_ms as f64 / 1000.0,
    ),
    (
        "node_disk_io_now",
        "gauge",
        "The number of I/Os currently in progress.",
        |d| d.in_flight as f64,
    ),
    (
        "node_disk_io_time_seconds_total",
        "counter",
        "Total seconds spent doing I/Os.",
        |d| d.io_ms as f64 / 1000.0,
    ),
    (
        "node_disk_io_time_weighted_seconds_total",
        "counter",
        "The weighted # of seconds spent doing I/Os.",
        |d| d.weighted_ms as f64 / 1000.0,
    ),
    (
        "node_disk_discards_completed_total",
        "counter",
        "The total number of discards completed successfully.",
        |d| d.discards as f64,
    ),
    (
        "node_disk_discards_merged_total",
        "counter",
        "The total number of discards merged.",
        |d| d.discards_merged as f64,
    ),
    (
        "node_disk_discarded_sectors_total",
        "counter",
        "The total number of sectors discarded successfully.",
        |d| d.sectors_discarded as f64,
    ),
    (
        "node_disk_discard_time_seconds_total",
        "counter",
        "This is the total number of seconds spent by all discards.",
        |d| d.discard_ms as f64 / 1000.0,
    ),
    (
        "node_disk_flush_requests_total",
        "counter",
        "The total number of flush requests completed successfully",
        |d| d.flushes as f64,
    ),
    (
        "node_disk_flush_requests_time_seconds_total",
        "counter",
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

/// Writes the exposition of successive reports (see the module documentation).
#[derive(Clone, Debug)]
pub struct Exposition {
    stream: bool,
    declared: HashSet<String>,
    exported: BTreeSet<String>,
}

impl Exposition {
    /// Each report a whole exposition, without timestamps (a file rewritten per sample, or a
    /// single report).
    pub fn file() -> Self {
        Exposition {
            stream: false,
            declared: HashSet::new(),
            exported: BTreeSet::new(),
        }
    }

    /// Successive reports as one exposition: families declared once, lines timestamped.
    pub fn stream() -> Self {
        Exposition {
            stream: true,
            ..Exposition::file()
        }
    }

    /// The exposition of report `r`, whose second sample is `cur`.
    pub fn render(&mut self, r: &Report, cur: &[DiskStat]) -> String {
        if !self.stream {
            self.declared.clear();
        }
        self.exported.extend(
            r.devices
                .iter()
                .filter(|d| d.kind != Kind::Group)
                .map(|d| d.device.clone()),
        );
        let counted: Vec<&DiskStat> = cur
            .iter()
            .filter(|d| self.exported.contains(&d.name))
            .collect();
        let ts = if self.stream {
            format!(" {}", (r.ts * 1000.0).round() as i64)
        } else {
            String::new()
        };
        let mut s = String::new();
        for (name, typ, help, get) in COUNTERS {
            let lines: Vec<String> = counted
                .iter()
                .map(|d| format!("{name}{{device=\"{}\"}} {}{ts}", escape(&d.name), get(d)))
                .collect();
            self.family(&mut s, name, typ, help, &lines);
        }
        let (groups, devices): (Vec<_>, Vec<_>) =
            r.devices.iter().partition(|d| d.kind == Kind::Group);
        for (name, help, get) in GAUGES {
            let lines: Vec<String> = devices
                .iter()
                .map(|d| {
                    format!(
                        "{name}{{device=\"{}\"}} {}{ts}",
                        escape(&d.device),
                        get(&d.figures)
                    )
                })
                .collect();
            self.family(&mut s, name, "gauge", help, &lines);
        }
        let ts = ts.as_str();
        let members: Vec<String> = groups
            .iter()
            .flat_map(|g| {
                g.members.iter().map(move |m| {
                    format!(
                        "dbio_disk_group_member_info{{group=\"{}\",device=\"{}\"}} 1{ts}",
                        escape(&g.device),
                        escape(m)
                    )
                })
            })
            .collect();
        self.family(
            &mut s,
            "dbio_disk_group_member_info",
            "gauge",
            "A device summed in a --group (always 1).",
            &members,
        );
        for (name, help, get) in GAUGES {
            let name = name.replacen("dbio_disk_", "dbio_disk_group_", 1);
            let lines: Vec<String> = groups
                .iter()
                .map(|g| {
                    format!(
                        "{name}{{group=\"{}\"}} {}{ts}",
                        escape(&g.device),
                        get(&g.figures)
                    )
                })
                .collect();
            self.family(
                &mut s,
                &name,
                "gauge",
                &format!("{GROUP_HELP} {help}"),
                &lines,
            );
        }
        s
    }

    /// One family's lines, declared first if this exposition has not declared it yet.
    fn family(&mut self, s: &mut String, name: &str, typ: &str, help: &str, lines: &[String]) {
        if lines.is_empty() {
            return;
        }
        if self.declared.insert(name.to_string()) {
            let _ = writeln!(s, "# HELP {name} {help}\n# TYPE {name} {typ}");
        }
        for l in lines {
            s.push_str(l);
            s.push('\n');
        }
    }
}

/// A label value as the text format wants it (backslash, double quote and newline escaped).
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diskstats;
    use crate::iostat::{Group, Reporter, Selection};

    #[test]
    fn a_stream_declares_each_family_once_a_file_every_time() {
        let s = |n: u64| {
            diskstats::parse(&format!(
                "8 0 sda {n} 0 0 0 0 0 0 0 0 0 0\n8 16 sdb 7 0 0 0 0 0 0 0 0 0 0\n"
            ))
            .unwrap()
        };
        let mut rep = Reporter::new(
            Selection {
                groups: vec![Group {
                    name: "a\"b".into(),
                    members: vec!["sda".into()],
                }],
                keep_shown: true,
                ..Selection::default()
            },
            None,
        );
        let (r1, r2) = (
            rep.report(&s(1), &s(2), 1.5, 1.0),
            rep.report(&s(2), &s(3), 2.5, 1.0),
        );
        let mut stream = Exposition::stream();
        let (a, b) = (stream.render(&r1, &s(2)), stream.render(&r2, &s(3)));
        assert_eq!(a.matches("# HELP").count(), 17 + 12 + 1 + 12, "{a}");
        assert_eq!(b.matches("# HELP").count(), 0, "{b}");
        assert!(a.contains("node_disk_reads_completed_total{device=\"sda\"} 2 1500\n"));
        assert!(b.contains("dbio_disk_group_member_info{group=\"a\\\"b\",device=\"sda\"} 1 2500\n"));
        assert!(!a.contains("sdb"), "idle from the start: not exported\n{a}");
        let mut file = Exposition::file();
        let (a2, b2) = (file.render(&r1, &s(2)), file.render(&r2, &s(3)));
        assert_eq!(a2.matches("# HELP").count(), b2.matches("# HELP").count());
        assert!(
            b2.contains("dbio_disk_reads_per_second{device=\"sda\"} 1\n"),
            "{b2}"
        );
    }
}
