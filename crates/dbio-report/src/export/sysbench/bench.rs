//! `dbio bench --format sysbench`: the text layout of `sysbench fileio` 1.0.20, so scripts
//! written for sysbench keep working. Labels, order, alignment and number formats are
//! sysbench's (its printf formats are quoted beside the code); the figures are dbio's.
//!
//! Where dbio and sysbench differ, the layout stays sysbench's and the meaning is dbio's:
//! - sysbench keeps one latency histogram for reads, writes and fsyncs together: the summary
//!   merges dbio's per-operation histograms and prints the 95th percentile (sysbench's
//!   default), and so do the interval lines (`latency (ms,95%)`), from all operations.
//! - warmup intervals are not printed (sysbench 1.0 has no warmup) and interval times count
//!   from the end of the warmup, so the lines read like a sysbench run of `--time` seconds.
//! - with `--rate`, latency is from each I/O's intended start, as sysbench measures from the
//!   moment the event was queued.
//! - "Periodic FSYNC ... each N requests" prints `--fsync-every`, which dbio counts per file
//!   and per thread.
//! - "events" per thread are reads, writes and fsyncs, as in sysbench; "execution time" is the
//!   sum of the thread's I/O latencies.

use crate::export::Exporter;
use crate::export::Sysbench;
use dbio_schema::bench::{
    BenchResult, EngineKind, Environment, Interval, Mode, Spec, ThreadSummary,
};
use dbio_schema::hist::LatencyHistogram;
use std::fmt::Write as _;
use std::io::{self, Write};

const MIB: f64 = 1024.0 * 1024.0;

/// The percentile sysbench prints by default, in the summary and the interval lines.
pub const SYSBENCH_PERCENTILE: u32 = 95;

/// C's `%.5g` for the non-negative values sysbench's size printer sees.
fn g5(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let exp = v.abs().log10().floor() as i32;
    let decimals = (4 - exp).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// sysbench's `sb_print_value_size`: `1MiB`, `1.5MiB`, `16KiB`, `512` (callers append `B`).
pub fn print_value_size(bytes: f64) -> String {
    const MODS: [char; 8] = ['K', 'M', 'G', 'T', 'P', 'E', 'Z', 'Y'];
    let mut v = bytes;
    let mut i = 0;
    while i < MODS.len() && v >= 1024.0 {
        v /= 1024.0;
        i += 1;
    }
    if i > 0 {
        format!("{}{}i", g5(v), MODS[i - 1])
    } else {
        g5(v)
    }
}

fn test_mode_str(m: Mode) -> &'static str {
    match m {
        Mode::Seqwr => "sequential write (creation)",
        Mode::Seqrewr => "sequential rewrite",
        Mode::Seqrd => "sequential read",
        Mode::Rndrd => "random read",
        Mode::Rndwr => "random write",
        Mode::Rndrw => "random r/w",
        Mode::Commit => "commit log (append and sync)",
    }
}

fn seconds(d: std::time::Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}")
    } else {
        format!("{s}")
    }
}

/// The header sysbench prints before the run: options, file set, flags, mode.
pub fn header(spec: &Spec, _env: &Environment, warnings: &[String]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "dbio {} (sysbench 1.0.20 fileio compatible output)",
        env!("CARGO_PKG_VERSION")
    );
    for w in warnings {
        let _ = writeln!(s, "WARNING: {w}");
    }
    s.push('\n');
    s.push_str("Running the test with following options:\n");
    let _ = writeln!(s, "Number of threads: {}", spec.threads);
    if let Some(r) = spec.rate_iops {
        let _ = writeln!(s, "Target transaction rate: {r:.0}/sec");
    }
    if !spec.report_interval_s.is_zero() {
        let _ = writeln!(
            s,
            "Report intermediate results every {} second(s)",
            seconds(spec.report_interval_s)
        );
    }
    let _ = writeln!(
        s,
        "Initializing random number generator from seed ({}).",
        spec.seed
    );
    s.push_str("\n\n");
    // "Extra file open flags: %s%s%s%s"
    let mut flags = String::new();
    if !(spec.sync || spec.dsync || spec.direct) {
        flags.push_str("(none)");
    }
    if spec.sync {
        flags.push_str("sync ");
    }
    if spec.dsync {
        flags.push_str("dsync ");
    }
    if spec.direct {
        flags.push_str("directio");
    }
    let _ = writeln!(s, "Extra file open flags: {flags}");
    let files = spec.file_num.max(1);
    let _ = writeln!(
        s,
        "{} files, {}B each",
        files,
        print_value_size((spec.file_total_size_bytes / files) as f64)
    );
    let _ = writeln!(
        s,
        "{}B total file size",
        print_value_size((spec.file_total_size_bytes / files * files) as f64)
    );
    let _ = writeln!(
        s,
        "Block size {}B",
        print_value_size(spec.block_size_bytes as f64)
    );
    if spec.mode.random() {
        let _ = writeln!(s, "Number of IO requests: {}", spec.events);
        let _ = writeln!(
            s,
            "Read/Write ratio for combined random IO test: {:2.2}",
            spec.rw_ratio
        );
    }
    if spec.fsync_every > 0 {
        let _ = writeln!(
            s,
            "Periodic FSYNC enabled, calling fsync() each {} requests.",
            spec.fsync_every
        );
    }
    if spec.fsync_end {
        s.push_str("Calling fsync() at the end of test, Enabled.\n");
    }
    let io_mode = match spec.engine {
        EngineKind::Sync => "synchronous",
        EngineKind::Uring => "asynchronous",
        EngineKind::Null => "null (no I/O)",
    };
    let _ = writeln!(s, "Using {io_mode} I/O mode");
    let _ = writeln!(s, "Doing {} test", test_mode_str(spec.mode));
    s.push_str("Initializing worker threads...\n\nThreads started!\n\n");
    s
}

/// One interval line: `[ %.0fs ] reads: %4.2f MiB/s writes: %4.2f MiB/s fsyncs: %4.2f/s
/// latency (ms,%u%%): %4.3f`. Empty for a warmup interval, for every interval when the report
/// interval is 0 (sysbench's default: no interval lines), and for the last interval when it was
/// cut short by the end of the run: sysbench reports only whole intervals, so `--time 3
/// --report-interval 1` prints 3 lines and `--time 2.5` prints 2, as sysbench 1.0.20 does.
pub fn interval_line(i: &Interval, spec: &Spec) -> String {
    if i.warmup || spec.report_interval_s.is_zero() || is_partial(i, spec) {
        return String::new();
    }
    let t = (i.end_s - spec.warmup_s.as_secs_f64()).max(0.0);
    format!(
        "[ {t:.0}s ] reads: {:4.2} MiB/s writes: {:4.2} MiB/s fsyncs: {:4.2}/s latency (ms,{}%): {:4.3}\n",
        i.read.bytes_per_s / MIB,
        i.write.bytes_per_s / MIB,
        i.fsync.iops,
        SYSBENCH_PERCENTILE,
        i.total.lat_ns.p95 as f64 / 1e6,
    )
}

/// Whether interval `i` is shorter than the report interval (the run ended inside it); a
/// microsecond of slack absorbs the float seconds of the result.
fn is_partial(i: &Interval, spec: &Spec) -> bool {
    let len_ns = (i.end_s - i.start_s) * 1e9;
    len_ns + 1e3 < spec.report_interval_s.as_nanos() as f64
}

/// The one histogram sysbench keeps: reads, writes and fsyncs of the summary together.
pub fn merged_histogram(r: &BenchResult) -> LatencyHistogram {
    let sm = &r.summary;
    let mut h = LatencyHistogram::from_data(&sm.read.histogram);
    h.merge(&LatencyHistogram::from_data(&sm.write.histogram));
    h.merge(&LatencyHistogram::from_data(&sm.fsync.histogram));
    h
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// The summary blocks: `File operations:`, `Throughput:`, `General statistics:`,
/// `Latency (ms):` and `Threads fairness:`.
pub fn summary(r: &BenchResult) -> String {
    let sm = &r.summary;
    let mut s = String::new();
    s.push_str("\nFile operations:\n");
    let _ = writeln!(s, "    reads/s:                      {:4.2}", sm.read.iops);
    let _ = writeln!(s, "    writes/s:                     {:4.2}", sm.write.iops);
    let _ = writeln!(s, "    fsyncs/s:                     {:4.2}", sm.fsync.iops);
    s.push_str("\nThroughput:\n");
    let _ = writeln!(
        s,
        "    read, MiB/s:                  {:4.2}",
        sm.read.bytes_per_s / MIB
    );
    let _ = writeln!(
        s,
        "    written, MiB/s:               {:4.2}",
        sm.write.bytes_per_s / MIB
    );
    s.push_str("\nGeneral statistics:\n");
    let _ = writeln!(
        s,
        "    total time:                          {:.4}s",
        sm.measured_s
    );
    let events = sm.read.count + sm.write.count + sm.fsync.count;
    let _ = writeln!(s, "    total number of events:              {events}");
    let h = merged_histogram(r);
    let ms = |ns: f64| ns / 1e6;
    s.push_str("\nLatency (ms):\n");
    let _ = writeln!(s, "         min: {:39.2}", ms(h.min() as f64));
    let _ = writeln!(s, "         avg: {:39.2}", ms(h.mean()));
    let _ = writeln!(s, "         max: {:39.2}", ms(h.max() as f64));
    let _ = writeln!(
        s,
        "        {SYSBENCH_PERCENTILE:3}th percentile: {:27.2}",
        ms(h.percentile(SYSBENCH_PERCENTILE as f64) as f64)
    );
    let _ = writeln!(s, "         sum: {:39.2}", ms(h.sum() as f64));
    s.push_str("\nThreads fairness:\n");
    let ev: Vec<f64> = sm
        .threads
        .iter()
        .map(|t: &ThreadSummary| (t.events + t.fsyncs) as f64)
        .collect();
    let busy: Vec<f64> = sm.threads.iter().map(|t| t.busy_s).collect();
    let (em, esd) = mean_sd(&ev);
    let (bm, bsd) = mean_sd(&busy);
    let _ = writeln!(s, "    events (avg/stddev):           {em:.4}/{esd:3.2}");
    let _ = writeln!(s, "    execution time (avg/stddev):   {bm:.4}/{bsd:3.2}");
    s.push('\n');
    s
}

/// One line split into literal text and numbers: `literals[k]` is the text before number k
/// (one more literal than numbers); each number is `(end column, decimals)`.
fn split_numbers(line: &str) -> (Vec<&str>, Vec<(usize, usize)>) {
    let b = line.as_bytes();
    let (mut lits, mut nums) = (Vec::new(), Vec::new());
    let (mut lit_start, mut i) = (0, 0);
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        lits.push(&line[lit_start..i]);
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let mut decimals = 0;
        if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
                decimals += 1;
            }
        }
        nums.push((i, decimals));
        lit_start = i;
    }
    lits.push(&line[lit_start..]);
    (lits, nums)
}

/// Compares two lines as a printf layout, the numbers in them aside: the same count of numbers
/// with the same decimals each, and the same text around them. In a `right_aligned` line (a
/// field such as `%39.2f`) the padding before a number may differ but the number must end in
/// the same column; otherwise the text must match space for space, so every number starts
/// where the reference's does (after the numbers before it). `Err` says what differs.
pub fn same_layout(reference: &str, ours: &str, right_aligned: bool) -> Result<(), String> {
    let (rl, rn) = split_numbers(reference);
    let (ol, on) = split_numbers(ours);
    if rn.len() != on.len() {
        return Err(format!("{} numbers, expected {}", on.len(), rn.len()));
    }
    for (k, (r, o)) in rl.iter().zip(&ol).enumerate() {
        let (rt, ot) = if right_aligned && k < rn.len() {
            (r.trim_end_matches(' '), o.trim_end_matches(' '))
        } else {
            (*r, *o)
        };
        if rt != ot {
            return Err(format!("text {ot:?}, expected {rt:?}"));
        }
        if let (Some(&(re, rd)), Some(&(oe, od))) = (rn.get(k), on.get(k)) {
            if rd != od {
                return Err(format!("number {}: {od} decimals, expected {rd}", k + 1));
            }
            if right_aligned && re != oe {
                return Err(format!(
                    "number {}: right-aligned field ends in column {oe}, expected {re}",
                    k + 1
                ));
            }
        }
    }
    Ok(())
}

/// Compares a whole output with a real sysbench 1.0.20 output as a layout, line by line with
/// [`same_layout`], skipping the first (version) line. The lines of the `Latency (ms):` block
/// are right-aligned (`%39.2f`, `%27.2f` in sysbench); all others are left-aligned.
/// `Err` names the first line that differs.
pub fn same_layout_doc(reference: &str, ours: &str) -> Result<(), String> {
    let (r, o): (Vec<&str>, Vec<&str>) = (reference.lines().collect(), ours.lines().collect());
    let mut in_latency = false;
    for (n, (a, b)) in r.iter().zip(&o).enumerate() {
        if n > 0 {
            same_layout(a, b, in_latency)
                .map_err(|e| format!("line {}: {e}\n  expected: {a}\n  got:      {b}", n + 1))?;
        }
        if *a == "Latency (ms):" {
            in_latency = true;
        } else if a.is_empty() {
            in_latency = false;
        }
    }
    if r.len() != o.len() {
        return Err(format!("{} lines, expected {}", o.len(), r.len()));
    }
    Ok(())
}

impl Exporter<BenchResult> for Sysbench {
    fn export(&self, r: &BenchResult, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(header(&r.spec, &r.environment, &r.warnings).as_bytes())?;
        for i in &r.intervals {
            out.write_all(interval_line(i, &r.spec).as_bytes())?;
        }
        out.write_all(summary(r).as_bytes())
    }
}
