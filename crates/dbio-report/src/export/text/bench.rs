//! `dbio bench` as text for people: a header saying what runs where, one line per report
//! interval, and the final summary.
//!
//! The pieces concatenate to exactly what [`Text`] writes:
//! `header(..) + interval_line(i1) + interval_line(i2) + .. + summary(..)`, so a run printed
//! live reads the same as its result file rendered afterwards.

use crate::export::Exporter;
use crate::export::Text;
use dbio_schema::bench::{
    percentile_key, BenchResult, EngineKind, Environment, FsyncMode, Interval, LatStats, Mode,
    OpInterval, OpSummary, Spec, Target,
};
use dbio_schema::units::{format_duration, format_ns, format_size, format_size_approx};
use std::fmt::Write as _;
use std::io::{self, Write};

const MIB: f64 = 1024.0 * 1024.0;

/// One kind of operation in a benchmark result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Reads.
    Read,
    /// Writes.
    Write,
    /// fsync/fdatasync calls.
    Fsync,
}

impl Op {
    /// The name used in output (`read`, `write`, `fsync`).
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Fsync => "fsync",
        }
    }

    /// This operation's figures in one interval.
    pub fn of_interval(self, i: &Interval) -> &OpInterval {
        match self {
            Op::Read => &i.read,
            Op::Write => &i.write,
            Op::Fsync => &i.fsync,
        }
    }

    /// This operation's figures in a summary.
    pub fn of_summary(self, s: &dbio_schema::bench::Summary) -> &OpSummary {
        match self {
            Op::Read => &s.read,
            Op::Write => &s.write,
            Op::Fsync => &s.fsync,
        }
    }
}

/// The operations a spec performs, in display order: reads when the mode reads, writes when
/// it writes, fsyncs when it syncs during the run (`--fsync-every`, or the `commit` mode).
/// The columns of the interval lines: fixed for a run, so live lines stay aligned.
pub fn ops_of(spec: &Spec) -> Vec<Op> {
    let mut ops = Vec::with_capacity(3);
    if spec.mode.reads() {
        ops.push(Op::Read);
    }
    if spec.mode.writes() {
        ops.push(Op::Write);
        if spec.fsync_every > 0 || spec.mode == Mode::Commit {
            ops.push(Op::Fsync);
        }
    }
    ops
}

fn fsync_mode_name(m: FsyncMode) -> &'static str {
    match m {
        FsyncMode::Fsync => "fsync",
        FsyncMode::Fdatasync => "fdatasync",
    }
}

/// A rate as people read it: whole numbers from 100 up and whenever the rate is whole (a count
/// over a 1s interval: fsyncs print `20` like reads print `1500`), one decimal below 100.
fn rate(v: f64) -> String {
    let one = format!("{v:.1}");
    if v >= 100.0 || one.ends_with(".0") {
        format!("{v:.0}")
    } else {
        one
    }
}

/// `1 event`, `2 events`: a count with its noun in the right number.
fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn mib(bytes_per_s: f64) -> String {
    format!("{:.2}", bytes_per_s / MIB)
}

// Interval table geometry: time column, then one group per operation.
const TIME_W: usize = 9;
const IOPS_W: usize = 9;
const MIBS_W: usize = 9;
const LAT_W: usize = 8;
const SEP: &str = " |";

fn group_width(op: Op) -> usize {
    let lat = 3 * (LAT_W + 1);
    match op {
        Op::Fsync => IOPS_W + 1 + lat,
        _ => IOPS_W + 1 + MIBS_W + 1 + lat,
    }
}

/// How long and how the run goes: duration, warmup, event limit, rate, mix, offsets, seed.
fn run_parts(spec: &Spec) -> Vec<String> {
    let mut run = Vec::new();
    match spec.time_s {
        Some(t) => run.push(format_duration(t)),
        None => run.push("until the event limit".to_string()),
    }
    if !spec.warmup_s.is_zero() {
        run.push(format!("after {} warmup", format_duration(spec.warmup_s)));
    }
    if spec.events > 0 {
        run.push(format!("at most {} I/Os", spec.events));
    }
    if let Some(r) = spec.rate_iops {
        run.push(format!(
            "open loop at {} IOPS (latency from intended start)",
            rate(r)
        ));
    }
    if spec.mode == Mode::Rndrw {
        run.push(format!("{} reads per write", spec.rw_ratio));
    }
    if spec.mode.random() {
        run.push(format!("{} offsets", spec.distribution));
    }
    run.push(format!("seed {}", spec.seed));
    run
}

/// The header: what runs where (mode, engine, sizes, threads, flags, target, devices),
/// the warnings, and the column titles of the interval lines.
pub fn header(spec: &Spec, env: &Environment, warnings: &[String]) -> String {
    let mut s = String::new();
    let mut depth = if spec.engine == EngineKind::Sync {
        String::new()
    } else {
        format!(
            ", iodepth {}, submit batch {}, reap batch {}",
            spec.iodepth, spec.submit_batch, spec.reap_batch
        )
    };
    if spec.engine == EngineKind::Uring {
        // Two results compare like for like only when these match (issue 17).
        depth.push_str(if spec.fixed_buffers {
            ", READ_FIXED/WRITE_FIXED on registered buffers"
        } else {
            ", plain READ/WRITE"
        });
        depth.push_str(if spec.register_files {
            ", registered files"
        } else {
            ", files by descriptor"
        });
        if spec.huge_pages {
            depth.push_str(", buffers in huge pages");
        }
        if spec.spin_polls > 0 {
            let _ = write!(depth, ", {} polls before sleeping", spec.spin_polls);
        }
    }
    let _ = writeln!(
        s,
        "dbio bench: {} with {} engine{depth}, {} blocks, {} thread{}",
        spec.mode.name(),
        spec.engine.name(),
        format_size(spec.block_size_bytes),
        spec.threads,
        if spec.threads == 1 { "" } else { "s" },
    );
    if let Some(b) = &spec.buffers {
        let pages = if spec.huge_pages {
            "huge pages"
        } else {
            "4 KiB pages"
        };
        let _ = writeln!(s, "Buffers: {pages} ({})", b.why);
    }
    let what = match &spec.target {
        Target::Dir(p) if spec.mode == Mode::Commit => format!(
            "one log per thread (dbio-log.N, appended from empty, wrapping at {}) in {}",
            format_size(spec.file_total_size_bytes / u64::from(spec.threads.max(1))),
            p.display()
        ),
        Target::Dir(p) => format!(
            "{} file{} of {} ({} in all) in {}",
            spec.file_num,
            if spec.file_num == 1 { "" } else { "s" },
            format_size(spec.file_total_size_bytes / spec.file_num.max(1)),
            format_size(spec.file_total_size_bytes),
            p.display()
        ),
        Target::Device(p) => format!(
            "{} of block device {}",
            format_size(spec.file_total_size_bytes),
            p.display()
        ),
    };
    // The null engine addresses no data (its warning says so).
    if spec.engine != EngineKind::Null {
        let _ = writeln!(s, "  data:     {what}");
    }
    let _ = writeln!(s, "  run:      {}", run_parts(spec).join(", "));
    let mut flags: Vec<String> = Vec::new();
    if spec.direct {
        flags.push("O_DIRECT".into());
    }
    if spec.dsync {
        flags.push("O_DSYNC".into());
    }
    if spec.sync {
        flags.push("O_SYNC".into());
    }
    if flags.is_empty() {
        flags.push("buffered".into());
    }
    let fm = fsync_mode_name(spec.fsync_mode);
    if spec.mode == Mode::Commit {
        if spec.dsync || spec.sync {
            flags.push("each record durable through the open flag".into());
        } else {
            flags.push(format!("{fm} after every record"));
        }
    } else if spec.fsync_every > 0 {
        flags.push(format!(
            "{fm} after every {} writes to a file by a thread",
            spec.fsync_every
        ));
    }
    if spec.fsync_end {
        flags.push(format!("{fm} at end"));
    }
    if spec.misalign_bytes > 0 {
        flags.push(format!("offsets shifted by {} bytes", spec.misalign_bytes));
    }
    let _ = writeln!(s, "  flags:    {}", flags.join(", "));
    let mut fs = Vec::new();
    if let Some(f) = &env.filesystem {
        fs.push(f.clone());
    }
    if let Some(m) = &env.mount_point {
        fs.push(format!("on {m}"));
    }
    if let Some(o) = &env.mount_options {
        fs.push(format!("({o})"));
    }
    if !fs.is_empty() {
        let _ = writeln!(s, "  fs:       {}", fs.join(" "));
    }
    for (n, d) in env.devices.iter().enumerate() {
        let mut a = vec![d.kind.clone()];
        if let Some(x) = &d.scheduler {
            a.push(format!("scheduler {x}"));
        }
        if let Some(r) = d.rotational {
            a.push(if r { "rotational" } else { "non-rotational" }.into());
        }
        if let Some(w) = &d.write_cache {
            a.push(format!("cache {w}"));
        }
        if let (Some(l), Some(p)) = (d.logical_block_size_bytes, d.physical_block_size_bytes) {
            a.push(format!("blocks {l}/{p}"));
        }
        let label = if n == 0 {
            "  device:   "
        } else {
            "            "
        };
        let _ = writeln!(s, "{label}{}: {}", d.name, a.join(", "));
    }
    let mut host = vec![format!("{} CPUs", env.cpus)];
    if env.mem_total_bytes > 0 {
        host.push(format_size_approx(env.mem_total_bytes as f64));
    }
    if !env.kernel.is_empty() {
        host.push(format!("Linux {}", env.kernel));
    }
    let name = if env.hostname.is_empty() {
        String::new()
    } else {
        format!("{} ", env.hostname)
    };
    let _ = writeln!(s, "  host:     {name}({})", host.join(", "));
    if !env.open_flags.is_empty() || env.page_cache.is_some() {
        let mut o = Vec::new();
        if !env.open_flags.is_empty() {
            o.push(format!("files opened {}", env.open_flags.join("|")));
        }
        if let Some(p) = &env.page_cache {
            o.push(format!("page cache {p}"));
        }
        let _ = writeln!(s, "  opened:   {}", o.join(", "));
    }
    for w in warnings {
        let _ = writeln!(s, "warning: {w}");
    }
    s.push('\n');
    // Column titles, two lines: operation names over their groups, then the figures.
    let ops = ops_of(spec);
    let mut l1 = format!("{:>TIME_W$}", "");
    let mut l2 = format!("{:>TIME_W$}", "time");
    for op in &ops {
        let _ = write!(l1, "{SEP} {:<w$}", op.name(), w = group_width(*op));
        l2.push_str(SEP);
        let _ = write!(l2, " {:>IOPS_W$}", "IOPS");
        if *op != Op::Fsync {
            let _ = write!(l2, " {:>MIBS_W$}", "MiB/s");
        }
        for t in ["p50", "p99", "max"] {
            let _ = write!(l2, " {t:>LAT_W$}");
        }
    }
    s.push_str(l1.trim_end());
    s.push('\n');
    s.push_str(&l2);
    s.push('\n');
    s
}

/// One line for one report interval: the end time, then for each operation of the mode
/// IOPS, MiB/s and p50/p99/max latency; warmup intervals end with `(warmup)`.
pub fn interval_line(i: &Interval, spec: &Spec) -> String {
    // as many decimals as the report interval needs: 1s and 0.5s -> 1, 250ms -> 2, 125ms -> 3
    let ns = spec.report_interval_s.as_nanos();
    let decimals = if ns.is_multiple_of(100_000_000) {
        1
    } else if ns.is_multiple_of(10_000_000) {
        2
    } else {
        3
    };
    let mut s = format!("{:>w$}", format!("{:.decimals$}s", i.end_s), w = TIME_W);
    for op in ops_of(spec) {
        let o = op.of_interval(i);
        s.push_str(SEP);
        let _ = write!(s, " {:>IOPS_W$}", rate(o.iops));
        if op != Op::Fsync {
            let _ = write!(s, " {:>MIBS_W$}", mib(o.bytes_per_s));
        }
        for v in [o.lat_ns.p50, o.lat_ns.p99, o.lat_ns.max] {
            let cell = if o.count == 0 {
                "-".to_string()
            } else {
                format_ns(v as f64)
            };
            let _ = write!(s, " {cell:>LAT_W$}");
        }
    }
    if i.warmup {
        s.push_str(" (warmup)");
    }
    s.push('\n');
    s
}

fn lat_cells(l: &LatStats, percentiles: &[f64]) -> Vec<String> {
    let mut v = vec![format_ns(l.min as f64), format_ns(l.mean)];
    for p in percentiles {
        v.push(l.get(*p).map_or("-".into(), |x| format_ns(x as f64)));
    }
    v.push(format_ns(l.max as f64));
    v
}

/// The final summary: per operation count, IOPS, MiB/s, min, mean, each configured percentile
/// and max (with `--rate`, service latency too); totals; per-thread fairness; engine calls;
/// the kernel's own accounting; an interrupted marker.
pub fn summary(r: &BenchResult) -> String {
    let spec = &r.spec;
    let sm = &r.summary;
    let mut s = String::new();
    s.push('\n');
    let warm = if spec.warmup_s.is_zero() {
        String::new()
    } else {
        format!(" after {} warmup", format_duration(spec.warmup_s))
    };
    let _ = writeln!(
        s,
        "Summary: {:.2}s measured{warm} ({:.2}s in all)",
        sm.measured_s, sm.total_s
    );
    if r.interrupted {
        let _ = writeln!(
            s,
            "INTERRUPTED: the run was stopped early; the figures cover what ran"
        );
    }
    let mut ops = ops_of(spec);
    for op in [Op::Read, Op::Write, Op::Fsync] {
        if !ops.contains(&op) && op.of_summary(sm).count > 0 {
            ops.push(op);
        }
    }
    ops.sort_by_key(|o| *o as u8);

    let mut titles: Vec<String> = ["op", "count", "IOPS", "MiB/s", "min", "mean"]
        .iter()
        .map(|t| t.to_string())
        .collect();
    titles.extend(spec.percentiles.iter().map(|p| percentile_key(*p)));
    titles.push("max".into());
    let mut rows: Vec<Vec<String>> = vec![titles];
    let rated = spec.rate_iops.is_some();
    for op in &ops {
        let o = op.of_summary(sm);
        let mut row = vec![
            op.name().to_string(),
            o.count.to_string(),
            format!("{:.1}", o.iops),
            if *op == Op::Fsync {
                "-".into()
            } else {
                mib(o.bytes_per_s)
            },
        ];
        if o.count == 0 {
            row.extend(vec!["-".to_string(); spec.percentiles.len() + 3]);
        } else {
            row.extend(lat_cells(&o.lat_ns, &spec.percentiles));
        }
        rows.push(row);
        if rated {
            if let Some(svc) = &o.service_lat_ns {
                let mut row = vec![" service".to_string(), "".into(), "".into(), "".into()];
                if o.count == 0 {
                    row.extend(vec!["-".to_string(); spec.percentiles.len() + 3]);
                } else {
                    row.extend(lat_cells(svc, &spec.percentiles));
                }
                rows.push(row);
            }
        }
    }
    rows.push(vec![
        "total".into(),
        sm.total.count.to_string(),
        format!("{:.1}", sm.total.iops),
        mib(sm.total.bytes_per_s),
    ]);
    let cols = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|x| x.len())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in &rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c == 0 {
                let _ = write!(line, "{cell:<w$}", w = widths[0]);
            } else {
                let _ = write!(line, "  {cell:>w$}", w = widths[c]);
            }
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    if let Some(r) = spec.rate_iops {
        let _ = writeln!(
            s,
            "latency is from each I/O's intended start at {} IOPS (what a waiting client sees); \
             'service' is from submission to completion",
            rate(r)
        );
    }

    let f = &sm.fairness;
    let cv = if f.events_mean > 0.0 {
        100.0 * f.events_stddev / f.events_mean
    } else {
        0.0
    };
    let _ = writeln!(
        s,
        "threads: {}, events (reads+writes) per thread mean {:.1} stddev {:.1} ({cv:.1}%), \
         busy mean {:.3}s stddev {:.3}s",
        sm.threads.len(),
        f.events_mean,
        f.events_stddev,
        f.busy_mean_s,
        f.busy_stddev_s
    );
    if sm.threads.len() > 1 {
        for t in &sm.threads {
            let _ = writeln!(
                s,
                "  thread {}: {}, {}, busy {:.3}s",
                t.thread,
                count(t.events, "event", "events"),
                count(t.fsyncs, "fsync", "fsyncs"),
                t.busy_s
            );
        }
    }
    let e = &sm.engine_calls;
    let ios = e.reads + e.writes + e.fsyncs;
    let per_io = if ios > 0 {
        format!(" ({:.2} per I/O)", e.syscalls as f64 / ios as f64)
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "engine calls (warmup included): {}, {}, {}, {}{per_io}",
        count(e.reads, "read", "reads"),
        count(e.writes, "write", "writes"),
        count(e.fsyncs, "fsync", "fsyncs"),
        count(e.syscalls, "system call", "system calls")
    );
    if let Some(p) = &sm.process_io {
        let _ = writeln!(
            s,
            "kernel accounting (/proc/self/io, warmup included): {} read {}, \
             {} wrote {}; storage read {}, written {}",
            count(p.syscr, "syscall", "syscalls"),
            format_size_approx(p.rchar as f64),
            count(p.syscw, "syscall", "syscalls"),
            format_size_approx(p.wchar as f64),
            format_size_approx(p.read_bytes as f64),
            format_size_approx(p.write_bytes as f64)
        );
    }
    if let Some(c) = &sm.device_check {
        // Two comparisons, each with its own verdict: request counts (one device request per
        // dbio I/O?) and I/Os in flight (Little's law against aqu-sz). One may hold while the
        // other does not, so neither is said of both.
        let _ = writeln!(
            s,
            "device check ({}, /proc/diskstats over the measured run):",
            c.device
        );
        let _ = writeln!(
            s,
            "  request counts {}: dbio completed {}, the device {} ({:.2} per dbio I/O; {} merged, {})",
            if c.requests_agree() { "agree" } else { "differ" },
            count(c.app_ios, "I/O", "I/Os"),
            count(c.device_requests, "request", "requests"),
            c.requests_per_io(),
            c.device_merged,
            count(c.device_flushes, "flush", "flushes"),
        );
        let _ = writeln!(
            s,
            "  I/Os in flight {}: dbio {:.2} on average (IOPS x mean latency), the device {:.2} (aqu-sz)",
            match c.in_flight_agree() {
                Some(true) => "agree",
                Some(false) => "differ",
                None => "not compared",
            },
            c.app_in_flight,
            c.device_aqu_sz,
        );
        for n in &c.notes {
            let _ = writeln!(s, "  {n}");
        }
    }
    s
}

/// How long a phase runs, in words: `5s`, `5s after 1s warmup`, `until 100 I/Os`.
fn phase_length(spec: &Spec) -> String {
    let mut s = match spec.time_s {
        Some(t) => format_duration(t),
        None => format!("until {} I/Os", spec.events),
    };
    if !spec.warmup_s.is_zero() {
        let _ = write!(s, " after {} warmup", format_duration(spec.warmup_s));
    }
    s
}

/// The first line of the default run (no `--mode`): its two phases, each as long as the flags
/// say, and the verdict.
pub fn default_run_intro(pages: &Spec) -> String {
    format!(
        "the default run: data pages (as --mode {}), then commits (as --mode commit) on the same \
         file system, {} each, then a verdict (--mode MODE runs one phase alone)\n\n",
        pages.mode.name(),
        phase_length(pages),
    )
}

/// The line between the default run's two phases.
pub const COMMIT_PHASE: &str =
    "\ncommit phase: each thread appends records to its own log and syncs each (as --mode commit)\n";

/// The verdict that ends the default run's text (empty for a single-phase result).
pub fn verdict(r: &BenchResult) -> String {
    let Some(d) = &r.default_run else {
        return String::new();
    };
    match (&d.commit, &d.verdict) {
        (_, Some(v)) => format!("\nverdict: {}\n", v.words),
        (None, None) => "\nverdict: none: the run stopped before its commit phase (--mode commit measures commits alone)\n".into(),
        (Some(_), None) => "\nverdict: none: the data-page phase read no page or the commit phase committed nothing\n".into(),
    }
}

impl Exporter<BenchResult> for Text {
    fn export(&self, r: &BenchResult, out: &mut dyn Write) -> io::Result<()> {
        let commit = r.default_run.as_ref().and_then(|d| d.commit.as_deref());
        if r.default_run.is_some() {
            out.write_all(default_run_intro(&r.spec).as_bytes())?;
        }
        let phase = |r: &BenchResult, out: &mut dyn Write| -> io::Result<()> {
            out.write_all(header(&r.spec, &r.environment, &r.warnings).as_bytes())?;
            for i in &r.intervals {
                out.write_all(interval_line(i, &r.spec).as_bytes())?;
            }
            out.write_all(summary(r).as_bytes())
        };
        phase(r, out)?;
        if let Some(c) = commit {
            out.write_all(COMMIT_PHASE.as_bytes())?;
            phase(c, out)?;
        }
        out.write_all(verdict(r).as_bytes())
    }
}
