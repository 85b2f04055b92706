//! The result of `dbio iostat` (schema `dbio.iostat/1`): one [`Report`] per interval with the
//! figures of every shown device ([`Figures`]: iostat -x and pt-diskstats columns), and the
//! `/proc/diskstats` counters they come from ([`DiskStat`]). dbio-sys reads and computes them.

use serde::{Deserialize, Serialize};

/// One line of `/proc/diskstats`: the cumulative counters of one device.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskStat {
    /// Major number.
    pub major: u32,
    /// Minor number.
    pub minor: u32,
    /// Kernel name (`vda`, `dm-0`, `nvme0n1p2`).
    pub name: String,
    /// Number of statistics fields on the line (11, 15 or 17: the 14-, 18-, 20-token formats).
    pub fields: usize,
    /// f1: reads completed.
    pub reads: u64,
    /// f2: reads merged.
    pub reads_merged: u64,
    /// f3: 512-byte sectors read.
    pub sectors_read: u64,
    /// f4: milliseconds spent reading (32-bit, wraps).
    pub read_ms: u64,
    /// f5: writes completed.
    pub writes: u64,
    /// f6: writes merged.
    pub writes_merged: u64,
    /// f7: 512-byte sectors written.
    pub sectors_written: u64,
    /// f8: milliseconds spent writing (32-bit, wraps).
    pub write_ms: u64,
    /// f9: I/Os currently in flight (a gauge, not a counter).
    pub in_flight: u64,
    /// f10: milliseconds with at least one I/O in flight (io_ticks; 32-bit, wraps).
    pub io_ms: u64,
    /// f11: weighted milliseconds doing I/O (sum of every I/O's time; 32-bit, wraps).
    pub weighted_ms: u64,
    /// f12: discards completed (0 before kernel 4.18).
    pub discards: u64,
    /// f13: discards merged.
    pub discards_merged: u64,
    /// f14: 512-byte sectors discarded.
    pub sectors_discarded: u64,
    /// f15: milliseconds spent discarding.
    pub discard_ms: u64,
    /// f16: flush requests completed (0 before kernel 5.5).
    pub flushes: u64,
    /// f17: milliseconds spent flushing.
    pub flush_ms: u64,
}

/// One device's figures over one interval: iostat -x (sysstat 12.x) columns, then the
/// pt-diskstats additions. Field names carry their units.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// r/s: reads completed per second.
    pub r_per_s: f64,
    /// w/s.
    pub w_per_s: f64,
    /// d/s: discards per second.
    pub d_per_s: f64,
    /// f/s: flushes per second.
    pub f_per_s: f64,
    /// rkB/s (kB = KiB, as iostat).
    pub rkb_per_s: f64,
    /// wkB/s.
    pub wkb_per_s: f64,
    /// dkB/s.
    pub dkb_per_s: f64,
    /// rrqm/s: read requests merged per second.
    pub rrqm_per_s: f64,
    /// wrqm/s.
    pub wrqm_per_s: f64,
    /// drqm/s.
    pub drqm_per_s: f64,
    /// %rrqm: share of read requests merged before reaching the device.
    pub rrqm_pct: f64,
    /// %wrqm.
    pub wrqm_pct: f64,
    /// %drqm.
    pub drqm_pct: f64,
    /// r_await: mean read time, queue included (ms).
    pub r_await_ms: f64,
    /// w_await.
    pub w_await_ms: f64,
    /// d_await.
    pub d_await_ms: f64,
    /// f_await.
    pub f_await_ms: f64,
    /// rareq-sz: mean read request size (KiB).
    pub rareq_sz_kb: f64,
    /// wareq-sz.
    pub wareq_sz_kb: f64,
    /// dareq-sz.
    pub dareq_sz_kb: f64,
    /// aqu-sz: mean number of requests queued or in service.
    pub aqu_sz: f64,
    /// %util: share of time with at least one request in flight (divided by the device
    /// count for a group). Not saturation on SSD/NVMe/RAID.
    pub util_pct: f64,
    /// pt-diskstats rd_cnc: read concurrency by Little's law.
    pub rd_cnc: f64,
    /// pt-diskstats wr_cnc.
    pub wr_cnc: f64,
    /// pt-diskstats rd_rt: read time per request, merges counted as requests (ms).
    pub rd_rt_ms: f64,
    /// pt-diskstats wr_rt.
    pub wr_rt_ms: f64,
    /// pt-diskstats in_prg: I/Os in flight at the end of the interval.
    pub in_flight: u64,
    /// pt-diskstats io_s: r/s + w/s.
    pub io_per_s: f64,
    /// pt-diskstats qtime: time queued per request (ms).
    pub qtime_ms: f64,
    /// pt-diskstats stime: time in service per request (ms).
    pub stime_ms: f64,
}

/// What a row of a report is.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A whole device (disk, dm, md, ...).
    Device,
    /// A partition of a device.
    Partition,
    /// A `--group` of devices, summed.
    Group,
}

impl Kind {
    /// `device`, `partition` or `group`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Device => "device",
            Kind::Partition => "partition",
            Kind::Group => "group",
        }
    }
}

/// One device (or group) in one report.
#[derive(Serialize, Debug, Clone)]
pub struct DeviceRow {
    /// Kernel name, or the group name.
    pub device: String,
    /// `device`, `partition` or `group`.
    pub kind: Kind,
    /// For a group: its members.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
    /// The figures.
    #[serde(flatten)]
    pub figures: Figures,
    /// --explain: the reading of these figures.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub explain: Vec<String>,
}

/// One report: the figures of every shown device over one interval.
#[derive(Serialize, Debug, Clone)]
pub struct Report {
    /// End of the interval, seconds since the epoch (JSON `ts_s`).
    #[serde(rename = "ts_s")]
    pub ts: f64,
    /// The same, as `YYYY-MM-DD HH:MM:SS` UTC.
    pub time: String,
    /// Interval length.
    pub interval_s: f64,
    /// Devices.
    pub devices: Vec<DeviceRow>,
    /// Devices left out of this interval and why (counter reset, appeared).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// The `/proc/diskstats` sample at the end of the interval, every device of it (shown or
    /// not): the cumulative counters that Prometheus exports as node_exporter does. Not in
    /// the JSON document.
    #[serde(skip)]
    pub sample: Vec<DiskStat>,
}
