//! `dbio iostat`: iostat -x (sysstat 12.x) and pt-diskstats figures from /proc/diskstats, live
//! or replayed from a pt-stalk / pt-diskstats / `--record` samples file.

use crate::cli::{parse_duration_arg, parse_size_arg, usage};
use anyhow::Context;
use dbio_report::export::{csv_row, JsonLinesExporter};
use dbio_report::Exporter;
use dbio_sys::diskstats::{self, Delta, DiskStat, Figures};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Output formats of `dbio iostat`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// An aligned table per sample (the header repeats, like iostat's).
    Text,
    /// One JSON object per sample per line.
    Json,
    /// One row per device per sample, header once.
    Csv,
    /// Prometheus text exposition: node_exporter's `node_disk_*` counters plus `dbio_disk_*`
    /// interval gauges (for the node_exporter textfile collector: use --output).
    Prometheus,
}

/// Arguments of `dbio iostat`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Devices to show (vda, /dev/vda, /dev/mapper/vg-lv, dm-0). Named devices are shown even
    /// when idle or partitions. Default: every whole disk, dm and md device with activity.
    pub devices: Vec<String>,
    /// Time between samples.
    #[arg(long, short = 'i', default_value = "1s", value_parser = parse_duration_arg)]
    pub interval: Duration,
    /// Number of reports (each covers one interval); default: until interrupted (live) or
    /// the end of the file (--replay).
    #[arg(long, short = 'c')]
    pub count: Option<u64>,
    /// Also show idle devices.
    #[arg(long)]
    pub all: bool,
    /// Also show partitions (hidden by default so nothing is counted twice).
    #[arg(long)]
    pub partitions: bool,
    /// Sum devices into one row: NAME=dev1,dev2 (repeatable). %util, rd_cnc and wr_cnc are
    /// divided by the number of devices.
    #[arg(long, value_name = "NAME=DEV,DEV")]
    pub group: Vec<String>,
    /// Append every sample to FILE in the `TS <epoch> <date>` + raw lines format that pt-stalk
    /// writes and pt-diskstats reads.
    #[arg(long, value_name = "FILE", conflicts_with = "replay")]
    pub record: Option<PathBuf>,
    /// With --record: write the first N fields of each line (14: the classic format of
    /// kernels before 4.18, which pt-diskstats reads; 18: with the discard counters, which
    /// pt-diskstats 3.2.1 also reads) instead of all the kernel prints (20 since Linux 5.5,
    /// lines pt-diskstats skips).
    #[arg(long, value_name = "N", requires = "record", value_parser = parse_record_fields)]
    pub record_fields: Option<usize>,
    /// Read samples from FILE (pt-stalk `*-diskstats`, pt-diskstats --save-samples, or
    /// `--record`) instead of the live system; intervals come from its TS lines.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Add a short reading of each device per sample (queue depth vs disks, read vs write
    /// await, merges, request size vs page size, what %util means).
    #[arg(long)]
    pub explain: bool,
    /// Database page size that --explain compares request sizes with.
    #[arg(long, default_value = "16k", value_parser = parse_size_arg)]
    pub page_size: u64,
    /// Write to FILE instead of stdout (prometheus: rewritten atomically at every sample, for
    /// the textfile collector; other formats: appended as they come).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Say what was skipped without being an error (partition lines of 7 fields that kernels
    /// before 2.6.25 print), once.
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

fn parse_record_fields(s: &str) -> Result<usize, String> {
    match s {
        "14" => Ok(14),
        "18" => Ok(18),
        "20" => Ok(20),
        _ => Err(
            "give 14 (major minor name and 11 counters, as kernels before 4.18 print \
                  and pt-diskstats reads), 18 (with the discard counters) or 20 (all, as \
                  Linux 5.5+ prints)"
                .to_string(),
        ),
    }
}

/// One device (or group) in one report.
#[derive(Serialize, Debug, Clone)]
pub struct DeviceRow {
    /// Kernel name, or the group name.
    pub device: String,
    /// `device`, `partition` or `group`.
    pub kind: &'static str,
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
    /// End of the interval, seconds since the epoch.
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
}

/// What --explain needs to know about a device beyond its counters.
#[derive(Clone, Debug)]
struct DevInfo {
    disks: Option<usize>,
    rotational: Option<bool>,
}

struct Selection {
    named: Vec<String>,
    groups: Vec<(String, Vec<String>)>,
    all: bool,
    partitions: bool,
    live: bool,
}

impl Selection {
    fn is_partition(&self, name: &str, names: &[&str]) -> bool {
        if self.live {
            let p = Path::new("/sys/class/block").join(name);
            if p.exists() {
                return p.join("partition").exists();
            }
        }
        diskstats::looks_like_partition(name, names)
    }
}

/// Resolves a device argument to its name in the sample: a kernel name, /dev/NAME, or a node
/// whose major:minor is in the sample (e.g. /dev/mapper/vg-lv).
fn resolve_name(arg: &str, sample: &[DiskStat], live: bool) -> anyhow::Result<String> {
    if sample.iter().any(|d| d.name == arg) {
        return Ok(arg.to_string());
    }
    if let Some(bare) = arg.strip_prefix("/dev/") {
        if sample.iter().any(|d| d.name == bare) {
            return Ok(bare.to_string());
        }
    }
    if live {
        if let Ok((ma, mi)) = dbio_sys::mounts::block_dev_numbers(Path::new(arg)) {
            if let Some(d) = sample.iter().find(|d| d.major == ma && d.minor == mi) {
                return Ok(d.name.clone());
            }
        }
    }
    let known: Vec<&str> = sample.iter().map(|d| d.name.as_str()).collect();
    Err(usage(format!(
        "unknown device {arg:?}: the devices in /proc/diskstats{} are: {}",
        if live { "" } else { " of the replayed file" },
        known.join(", ")
    )))
}

fn parse_groups(
    specs: &[String],
    sample: &[DiskStat],
    live: bool,
) -> anyhow::Result<Vec<(String, Vec<String>)>> {
    let mut out = Vec::new();
    for g in specs {
        let (name, devs) = g.split_once('=').ok_or_else(|| {
            usage(format!(
                "--group {g:?}: expected NAME=dev1,dev2 (e.g. --group data=sdb,sdc)"
            ))
        })?;
        if name.is_empty() || devs.is_empty() {
            return Err(usage(format!("--group {g:?}: expected NAME=dev1,dev2")));
        }
        let members = devs
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|d| resolve_name(d, sample, live))
            .collect::<anyhow::Result<Vec<_>>>()?;
        out.push((name.to_string(), members));
    }
    Ok(out)
}

/// Builds one report from two samples.
fn build_report(
    prev: &[DiskStat],
    cur: &[DiskStat],
    ts: f64,
    interval_s: f64,
    sel: &Selection,
    explain: Option<(&HashMap<String, DevInfo>, u64)>,
) -> Report {
    let before: HashMap<&str, &DiskStat> = prev.iter().map(|d| (d.name.as_str(), d)).collect();
    let names: Vec<&str> = cur.iter().map(|d| d.name.as_str()).collect();
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    let mut deltas: HashMap<&str, Delta> = HashMap::new();
    for d in cur {
        match before.get(d.name.as_str()) {
            None => skipped.push(format!(
                "{}: not in the previous sample (device appeared)",
                d.name
            )),
            Some(p) => match Delta::between(p, d) {
                Ok(delta) => {
                    deltas.insert(d.name.as_str(), delta);
                }
                Err(e) => skipped.push(e.to_string()),
            },
        }
    }
    let explain_row = |name: &str, f: &Figures, members: usize| -> Vec<String> {
        match explain {
            Some((info, page)) => {
                let i = info.get(name).cloned().unwrap_or(DevInfo {
                    disks: if members > 1 { Some(members) } else { None },
                    rotational: None,
                });
                explain_figures(f, &i, page)
            }
            None => Vec::new(),
        }
    };
    for d in cur {
        let Some(delta) = deltas.get(d.name.as_str()) else {
            continue;
        };
        let named = sel.named.iter().any(|n| n == &d.name);
        let part = sel.is_partition(&d.name, &names);
        if !sel.named.is_empty() && !named {
            continue;
        }
        if !named && ((part && !sel.partitions) || (!sel.all && delta.is_idle())) {
            continue;
        }
        let figures = diskstats::figures(delta, interval_s);
        rows.push(DeviceRow {
            device: d.name.clone(),
            kind: if part { "partition" } else { "device" },
            members: Vec::new(),
            explain: explain_row(&d.name, &figures, 1),
            figures,
        });
    }
    for (gname, members) in &sel.groups {
        // Summed from an empty delta: even a group of one member is a group (pt-diskstats'
        // qtime of a group uses the summed in-flight gauge, not its change).
        let mut sum: Option<Delta> = None;
        let mut missing = Vec::new();
        for m in members {
            match deltas.get(m.as_str()) {
                Some(d) => sum.get_or_insert_with(Delta::default).add(d),
                None => missing.push(m.as_str()),
            }
        }
        if !missing.is_empty() {
            skipped.push(format!(
                "group {gname}: members {} not comparable in this interval; the group is left out",
                missing.join(", ")
            ));
            continue;
        }
        if let Some(s) = sum {
            let figures = diskstats::figures(&s, interval_s);
            rows.push(DeviceRow {
                device: gname.clone(),
                kind: "group",
                members: members.clone(),
                explain: explain_row(gname, &figures, members.len()),
                figures,
            });
        }
    }
    Report {
        ts,
        time: diskstats::utc_datetime(ts.floor() as i64),
        interval_s,
        devices: rows,
        skipped,
    }
}

/// The --explain reading of one device's figures (from the iostat -x article).
fn explain_figures(f: &Figures, info: &DevInfo, page_size: u64) -> Vec<String> {
    let mut out = Vec::new();
    if f.r_per_s + f.w_per_s + f.d_per_s + f.f_per_s == 0.0 && f.in_flight == 0 {
        out.push("idle: nothing completed in this interval".to_string());
        return out;
    }
    let disks_txt = match info.disks {
        Some(n) => format!("{n} disk{}", if n == 1 { "" } else { "s" }),
        None => "1 disk (assumed: the stack is unknown in a replay)".to_string(),
    };
    let n = info.disks.unwrap_or(1) as f64;
    if f.aqu_sz < n && f.util_pct < 50.0 {
        out.push(format!(
            "aqu-sz {:.2} with %util {:.0}: lightly loaded; the {disks_txt} under it could take more",
            f.aqu_sz, f.util_pct
        ));
    } else if f.aqu_sz < n {
        out.push(format!(
            "aqu-sz {:.2} is below the {disks_txt} under it while busy {:.0}% of the time: I/O \
             is serialised by the software above (too few concurrent requests to use every disk)",
            f.aqu_sz, f.util_pct
        ));
    } else {
        out.push(format!(
            "aqu-sz {:.2} is at or above the {disks_txt} under it: every disk has work and \
             requests queue, trading latency for throughput",
            f.aqu_sz
        ));
    }
    if f.r_per_s > 0.0 && f.w_per_s > 0.0 {
        let msg = if f.w_await_ms * 2.0 < f.r_await_ms {
            "writes are faster than reads: a write-back cache absorbs them; reads wait for the media"
        } else if f.w_await_ms > f.r_await_ms * 2.0 {
            "writes are slower than reads: no write cache, flushes, or a write-heavy queue"
        } else {
            "reads and writes wait about as long"
        };
        out.push(format!(
            "r_await {:.2} ms, w_await {:.2} ms: {msg}",
            f.r_await_ms, f.w_await_ms
        ));
    } else if f.r_per_s > 0.0 {
        out.push(format!("reads only: r_await {:.2} ms", f.r_await_ms));
    } else if f.w_per_s > 0.0 {
        out.push(format!("writes only: w_await {:.2} ms", f.w_await_ms));
    }
    for (what, pct) in [("reads", f.rrqm_pct), ("writes", f.wrqm_pct)] {
        if pct >= 20.0 {
            out.push(format!(
                "{pct:.0}% of {what} were merged by the block layer: adjacent requests \
                 (sequential I/O, small writes the application did not combine, LVM snapshots)"
            ));
        }
    }
    let page_kb = page_size as f64 / 1024.0;
    for (what, rate, sz) in [
        ("read", f.r_per_s, f.rareq_sz_kb),
        ("write", f.w_per_s, f.wareq_sz_kb),
    ] {
        if rate == 0.0 {
            continue;
        }
        let cmp = if (sz - page_kb).abs() < 0.05 * page_kb {
            "the size of a page".to_string()
        } else if sz < page_kb {
            "smaller than a page: a filesystem or device block smaller than the page, or log/metadata I/O".to_string()
        } else {
            format!(
                "{:.1} pages: merged or read-ahead requests, or a block larger than the page",
                sz / page_kb
            )
        };
        out.push(format!(
            "average {what} request {sz:.1} KiB vs {page_kb:.0} KiB database page: {cmp}"
        ));
    }
    if f.util_pct >= 90.0 {
        let parallel = info.rotational == Some(false) || info.disks.unwrap_or(1) > 1;
        if info.rotational == Some(true) && info.disks.unwrap_or(1) == 1 {
            out.push(format!(
                "%util {:.0}: a single spinning disk busy all the time is saturated",
                f.util_pct
            ));
        } else if parallel {
            out.push(format!(
                "%util {:.0} does not mean saturated here: an SSD, NVMe or RAID device serves \
                 many requests in parallel and reads 100% with headroom left; compare aqu-sz \
                 and await with a baseline",
                f.util_pct
            ));
        } else {
            out.push(format!(
                "%util {:.0}: saturated only if this is a single spinning disk; an SSD, NVMe or \
                 RAID device serves many requests in parallel and reads 100% with headroom \
                 left (compare aqu-sz and await with a baseline)",
                f.util_pct
            ));
        }
    }
    out
}

const COLUMNS: [&str; 27] = [
    "r/s", "rkB/s", "rrqm/s", "%rrqm", "r_await", "rareq-sz", "w/s", "wkB/s", "wrqm/s", "%wrqm",
    "w_await", "wareq-sz", "d/s", "dkB/s", "drqm/s", "%drqm", "d_await", "dareq-sz", "f/s",
    "f_await", "aqu-sz", "%util", "rd_cnc", "wr_cnc", "in_prg", "qtime", "stime",
];

fn row_values(f: &Figures) -> [f64; 27] {
    [
        f.r_per_s,
        f.rkb_per_s,
        f.rrqm_per_s,
        f.rrqm_pct,
        f.r_await_ms,
        f.rareq_sz_kb,
        f.w_per_s,
        f.wkb_per_s,
        f.wrqm_per_s,
        f.wrqm_pct,
        f.w_await_ms,
        f.wareq_sz_kb,
        f.d_per_s,
        f.dkb_per_s,
        f.drqm_per_s,
        f.drqm_pct,
        f.d_await_ms,
        f.dareq_sz_kb,
        f.f_per_s,
        f.f_await_ms,
        f.aqu_sz,
        f.util_pct,
        f.rd_cnc,
        f.wr_cnc,
        f.in_flight as f64,
        f.qtime_ms,
        f.stime_ms,
    ]
}

/// The text table of one report: a time line, the header, one row per device.
pub fn render_text(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{} UTC  interval {:.2} s", r.time, r.interval_s);
    let w = r
        .devices
        .iter()
        .map(|d| d.device.len())
        .max()
        .unwrap_or(0)
        .max(12);
    let cells: Vec<Vec<String>> = r
        .devices
        .iter()
        .map(|d| {
            row_values(&d.figures)
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    if COLUMNS[i] == "in_prg" {
                        format!("{}", *v as u64)
                    } else {
                        format!("{v:.2}")
                    }
                })
                .collect()
        })
        .collect();
    // Each column as wide as its header or its widest value (at least 8, like iostat).
    let widths: Vec<usize> = COLUMNS
        .iter()
        .enumerate()
        .map(|(i, c)| {
            cells
                .iter()
                .map(|row| row[i].len())
                .chain([c.len(), 8])
                .max()
                .unwrap_or(8)
        })
        .collect();
    let _ = write!(s, "{:<w$}", "Device");
    for (c, cw) in COLUMNS.iter().zip(&widths) {
        let _ = write!(s, " {c:>cw$}");
    }
    s.push('\n');
    for (d, row) in r.devices.iter().zip(&cells) {
        let _ = write!(s, "{:<w$}", d.device);
        for (v, cw) in row.iter().zip(&widths) {
            let _ = write!(s, " {v:>cw$}");
        }
        s.push('\n');
        for e in &d.explain {
            let _ = writeln!(s, "  {}: {e}", d.device);
        }
    }
    for k in &r.skipped {
        let _ = writeln!(s, "  skipped: {k}");
    }
    s.push('\n');
    s
}

/// CSV header (once) and rows: time, ts, interval_s, device, kind, then the figures by their
/// JSON names.
pub fn render_csv(r: &Report, header: bool) -> anyhow::Result<String> {
    let mut buf = Vec::new();
    let fig_names: Vec<String> = match serde_json::to_value(Figures::default())? {
        serde_json::Value::Object(m) => m.keys().cloned().collect(),
        _ => Vec::new(),
    };
    if header {
        let mut h = vec![
            "time".to_string(),
            "ts".into(),
            "interval_s".into(),
            "device".into(),
            "kind".into(),
        ];
        h.extend(fig_names.iter().cloned());
        csv_row(&mut buf, h)?;
    }
    for d in &r.devices {
        let v = serde_json::to_value(&d.figures)?;
        let mut row = vec![
            r.time.clone(),
            format!("{:.3}", r.ts),
            format!("{:.3}", r.interval_s),
            d.device.clone(),
            d.kind.to_string(),
        ];
        for n in &fig_names {
            row.push(match &v[n] {
                serde_json::Value::Number(x) => match x.as_f64() {
                    Some(f) if x.is_f64() => format!("{f:.2}"),
                    _ => x.to_string(),
                },
                other => other.to_string(),
            });
        }
        csv_row(&mut buf, row)?;
    }
    Ok(String::from_utf8(buf)?)
}

fn prom_escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Prometheus text exposition of one report: node_exporter's `node_disk_*` counters (same
/// names and units) for the shown devices from the second sample, and `dbio_disk_*` gauges of
/// the interval's figures (devices and groups).
pub fn render_prometheus(r: &Report, cur: &[DiskStat]) -> String {
    let shown: Vec<&DiskStat> = cur
        .iter()
        .filter(|d| {
            r.devices
                .iter()
                .any(|row| row.kind != "group" && row.device == d.name)
        })
        .collect();
    let mut s = String::new();
    type Get = fn(&DiskStat) -> f64;
    let counters: [(&str, &str, &str, Get); 17] = [
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
    for (name, typ, help, get) in counters {
        if shown.is_empty() {
            break;
        }
        let _ = writeln!(s, "# HELP {name} {help}\n# TYPE {name} {typ}");
        for d in &shown {
            let _ = writeln!(
                s,
                "{name}{{device=\"{}\"}} {}",
                prom_escape(&d.name),
                get(d)
            );
        }
    }
    type GetF = fn(&Figures) -> f64;
    let gauges: [(&str, &str, GetF); 12] = [
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
    for (name, help, get) in gauges {
        if r.devices.is_empty() {
            break;
        }
        let _ = writeln!(s, "# HELP {name} {help}\n# TYPE {name} gauge");
        for d in &r.devices {
            let _ = writeln!(
                s,
                "{name}{{device=\"{}\"}} {}",
                prom_escape(&d.device),
                get(&d.figures)
            );
        }
    }
    s
}

fn now_epoch() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

struct Sink {
    format: Format,
    output: Option<PathBuf>,
    file: Option<std::fs::File>,
    csv_header_done: bool,
}

impl Sink {
    fn new(format: Format, output: Option<PathBuf>) -> anyhow::Result<Self> {
        let file = match (&output, format) {
            (Some(p), f) if f != Format::Prometheus && p != Path::new("-") => {
                Some(std::fs::File::create(p).with_context(|| {
                    format!(
                        "cannot create output file {}: check the directory exists and is writable",
                        p.display()
                    )
                })?)
            }
            _ => None,
        };
        Ok(Sink {
            format,
            output,
            file,
            csv_header_done: false,
        })
    }

    fn write(&mut self, r: &Report, cur: &[DiskStat]) -> anyhow::Result<()> {
        let text = match self.format {
            Format::Text => render_text(r),
            Format::Json => JsonLinesExporter.to_string(r)?,
            Format::Csv => {
                let t = render_csv(r, !self.csv_header_done)?;
                self.csv_header_done = true;
                t
            }
            Format::Prometheus => {
                let t = render_prometheus(r, cur);
                if let Some(p) = self.output.as_deref().filter(|p| *p != Path::new("-")) {
                    return crate::output::write_file(p, t.as_bytes());
                }
                t
            }
        };
        match &mut self.file {
            Some(f) => {
                f.write_all(text.as_bytes())?;
                f.flush()?;
            }
            None => {
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes())?;
                out.flush()?;
            }
        }
        Ok(())
    }
}

fn dev_info(names: &[String]) -> HashMap<String, DevInfo> {
    let mut m = HashMap::new();
    for n in names {
        if let Ok(st) = dbio_sys::stack::resolve_device(Path::new(n)) {
            let leaves = st.leaves();
            let rotational = leaves
                .iter()
                .filter_map(|d| d.queue.as_ref().and_then(|q| q.rotational))
                .reduce(|a, b| a && b);
            m.insert(
                n.clone(),
                DevInfo {
                    disks: Some(leaves.len().max(1)),
                    rotational,
                },
            );
        }
    }
    m
}

/// Runs `dbio iostat`.
pub fn run(args: Args) -> anyhow::Result<u8> {
    if args.count == Some(0) {
        return Err(usage("--count 0: give at least 1 report"));
    }
    if args.interval.is_zero() && args.replay.is_none() {
        return Err(usage("--interval must be longer than 0 (e.g. 1s, 500ms)"));
    }
    let mut sink = Sink::new(args.format, args.output.clone())?;
    match &args.replay {
        Some(p) => replay(&args, p, &mut sink),
        None => live(&args, &mut sink),
    }
}

/// The -v note on skipped partition lines of old kernels (line numbers, the first 20).
fn old_partitions_note(lines: &[usize]) -> String {
    let mut list = lines
        .iter()
        .take(20)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if lines.len() > 20 {
        list.push_str(", ...");
    }
    format!(
        "{} partition line{} of 7 fields skipped (line{} {list}): kernels before 2.6.25 print \
         only reads, sectors read, writes and sectors written for a partition, too little for \
         these figures; iostat and pt-diskstats skip them too",
        lines.len(),
        if lines.len() == 1 { "" } else { "s" },
        if lines.len() == 1 { "" } else { "s" },
    )
}

fn replay(args: &Args, path: &Path, sink: &mut Sink) -> anyhow::Result<u8> {
    let bytes = std::fs::read(path).with_context(|| {
        format!(
            "cannot read replay file {}: check the path and permissions",
            path.display()
        )
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let saved = diskstats::parse_saved(&text);
    for p in &saved.problems {
        eprintln!(
            "dbio: {} line {}: {}; skipped",
            path.display(),
            p.line,
            p.msg
        );
    }
    if args.verbose && !saved.old_partition_lines.is_empty() {
        eprintln!(
            "dbio: {}: {}",
            path.display(),
            old_partitions_note(&saved.old_partition_lines)
        );
    }
    if saved.samples.len() < 2 {
        anyhow::bail!(
            "{} holds {} usable sample(s): a replay needs at least two `TS` samples (pt-stalk *-diskstats, pt-diskstats --save-samples or dbio iostat --record)",
            path.display(),
            saved.samples.len()
        );
    }
    let first = &saved.samples[0].stats;
    let named = args
        .devices
        .iter()
        .map(|d| resolve_name(d, first, false))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let groups = parse_groups(&args.group, first, false)?;
    let sel = Selection {
        named,
        groups,
        all: args.all,
        partitions: args.partitions,
        live: false,
    };
    let info = HashMap::new();
    let mut reports = 0u64;
    for w in saved.samples.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let interval = b.ts - a.ts;
        if interval <= 0.0 {
            eprintln!(
                "dbio: {}: sample at TS {} is not after the one before ({}); interval skipped",
                path.display(),
                b.ts,
                a.ts
            );
            continue;
        }
        let r = build_report(
            &a.stats,
            &b.stats,
            b.ts,
            interval,
            &sel,
            args.explain.then_some((&info, args.page_size)),
        );
        sink.write(&r, &b.stats)?;
        reports += 1;
        if args.count.is_some_and(|c| reports >= c) {
            break;
        }
    }
    Ok(if saved.problems.is_empty() {
        0
    } else {
        crate::cli::EXIT_FAILURE
    })
}

fn live(args: &Args, sink: &mut Sink) -> anyhow::Result<u8> {
    let take = || -> anyhow::Result<(String, Vec<DiskStat>, f64, Instant)> {
        let raw =
            diskstats::read_raw().context("cannot read /proc/diskstats: is /proc mounted?")?;
        let stats =
            diskstats::parse(&raw).context("/proc/diskstats has a line dbio cannot parse")?;
        Ok((raw, stats, now_epoch(), Instant::now()))
    };
    let record = |ts: f64, raw: &str| -> anyhow::Result<()> {
        if let Some(p) = &args.record {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .with_context(|| format!("cannot append to record file {}: check the directory exists and is writable", p.display()))?;
            let raw = match args.record_fields {
                Some(n) => std::borrow::Cow::Owned(diskstats::limit_fields(raw, n)),
                None => std::borrow::Cow::Borrowed(raw),
            };
            f.write_all(diskstats::format_saved(ts, &raw).as_bytes())
                .with_context(|| format!("cannot write record file {}", p.display()))?;
        }
        Ok(())
    };
    let (raw, mut prev, ts0, mut t_prev) = take()?;
    if args.verbose {
        let old: Vec<usize> = raw
            .lines()
            .enumerate()
            .filter(|(_, l)| diskstats::is_old_partition_line(l))
            .map(|(i, _)| i + 1)
            .collect();
        if !old.is_empty() {
            eprintln!("dbio: /proc/diskstats: {}", old_partitions_note(&old));
        }
    }
    record(ts0, &raw)?;
    let named = args
        .devices
        .iter()
        .map(|d| resolve_name(d, &prev, true))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let groups = parse_groups(&args.group, &prev, true)?;
    let info = if args.explain {
        dev_info(&prev.iter().map(|d| d.name.clone()).collect::<Vec<_>>())
    } else {
        HashMap::new()
    };
    let sel = Selection {
        named,
        groups,
        all: args.all,
        partitions: args.partitions,
        live: true,
    };
    // Ctrl-C (SIGINT) or SIGTERM ends the loop between reports, so a line is never cut in
    // half in --output or --record; the exit code is 130 as for every interrupted command.
    let stop = crate::signals::install();
    let stopped = || stop.load(std::sync::atomic::Ordering::SeqCst);
    let mut due = Instant::now();
    let mut reports = 0u64;
    loop {
        due = due.checked_add(args.interval).ok_or_else(|| {
            usage(format!(
                "--interval {:?} is too long for this system's clock",
                args.interval
            ))
        })?;
        loop {
            if stopped() {
                return Ok(crate::signals::EXIT_INTERRUPTED);
            }
            let now = Instant::now();
            if due <= now {
                break;
            }
            std::thread::sleep((due - now).min(std::time::Duration::from_millis(50)));
        }
        let (raw, cur, ts, t) = take()?;
        record(ts, &raw)?;
        let interval = t.duration_since(t_prev).as_secs_f64();
        let r = build_report(
            &prev,
            &cur,
            ts,
            interval,
            &sel,
            args.explain.then_some((&info, args.page_size)),
        );
        sink.write(&r, &cur)?;
        reports += 1;
        prev = cur;
        t_prev = t;
        if args.count.is_some_and(|c| reports >= c) {
            return Ok(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ds(line: &str) -> DiskStat {
        diskstats::parse_line(line).unwrap()
    }

    #[test]
    fn explain_reads_the_figures() {
        let a = ds("8 0 sda 0 0 0 0 0 0 0 0 0 0 0");
        let b = ds("8 0 sda 100 0 800 500 300 200 19200 300 1 1000 950");
        let f = diskstats::compute(&a, &b, 1.0).unwrap();
        let e = explain_figures(
            &f,
            &DevInfo {
                disks: Some(4),
                rotational: Some(false),
            },
            16384,
        );
        let all = e.join("\n");
        assert!(
            all.contains("below the 4 disks under it while busy 100%"),
            "{all}"
        );
        assert!(all.contains("writes are faster than reads"), "{all}");
        assert!(all.contains("40% of writes were merged"), "{all}");
        assert!(
            all.contains("average read request 4.0 KiB vs 16 KiB database page: smaller"),
            "{all}"
        );
        assert!(all.contains("%util 100 does not mean saturated"), "{all}");
        let e1 = explain_figures(
            &f,
            &DevInfo {
                disks: Some(1),
                rotational: Some(true),
            },
            16384,
        );
        assert!(e1
            .join("\n")
            .contains("single spinning disk busy all the time is saturated"));
    }
}
