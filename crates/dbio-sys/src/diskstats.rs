//! `/proc/diskstats`: parsing (14-, 18- and 20-field kernels), the pt-stalk/pt-diskstats saved
//! sample format (`TS <epoch> <date>` then raw lines), and the iostat -x (sysstat 12.x) and
//! pt-diskstats figures between two samples, with 32-bit wrap of the millisecond counters and
//! counter resets (a device re-attached) handled.
//!
//! Formulas, with D the difference between samples of field fN and T the interval in seconds:
//! r/s = Df1/T, rkB/s = Df3/2/T, rrqm/s = Df2/T, %rrqm = 100·Df2/(Df1+Df2),
//! r_await = Df4/Df1, rareq-sz = Df3/2/Df1 (same for writes f5-f8, discards f12-f15),
//! f/s = Df16/T, f_await = Df17/Df16, aqu-sz = Df11/(1000·T), %util = 100·Df10/(1000·T·n)
//! for a group of n devices; pt-diskstats (3.x, `_calc_misc_stats` and the `Diskstats*`
//! packages of its source): rd_cnc = Df4/T/1000/n, rd_rt = Df4/(Df1+Df2) (0 without reads),
//! stime = Df10/N and qtime = Df11/(N+Q) − stime with N = Df1+Df2+Df5+Df6, both 0 when N is 0
//! and qtime 0 when N+Q is 0. Q depends on the row, as in pt-diskstats: for one device (its
//! `--group-by disk` and `--group-by all` rows) Q = Df9, the *change* of the in-flight gauge
//! between the samples (negative when the queue shrank); for a sum of devices (a `--group`,
//! like its `--group-by sample` rows) Q = f9, the summed gauge of the second sample.
//!
//! One device's figures over an interval, as `dbio iostat` (and `dbio bench`) compute them:
//!
//! ```
//! use dbio_sys::diskstats;
//! use std::time::{Duration, Instant};
//! let (before, t0) = (diskstats::read()?, Instant::now());
//! std::thread::sleep(Duration::from_millis(50));
//! let (after, t1) = (diskstats::read()?, Instant::now());
//! let name = &before[0].name;
//! let (a, b) = (diskstats::find(&before, name).unwrap(), diskstats::find(&after, name).unwrap());
//! match diskstats::compute(a, b, (t1 - t0).as_secs_f64()) {
//!     Ok(f) => assert!(f.util_pct >= 0.0 && f.r_per_s >= 0.0),
//!     Err(reset) => eprintln!("{reset}"), // device re-attached between the samples
//! }
//! # Ok::<(), dbio_sys::Error>(())
//! ```

use crate::Error;
use dbio_schema::iostat::{DiskStat, Figures};
use serde::{Deserialize, Serialize};

/// Parses one `/proc/diskstats` line: major, minor, name, then at least 11 numbers.
pub fn parse_line(line: &str) -> Result<DiskStat, String> {
    let toks: Vec<&str> = line.split_whitespace().collect();
    if toks.len() < 14 {
        return Err(format!(
            "expected at least 14 fields (major minor name and 11 counters), found {}",
            toks.len()
        ));
    }
    let num = |i: usize| -> Result<u64, String> {
        match toks.get(i) {
            None => Ok(0),
            Some(t) => t
                .parse::<u64>()
                .map_err(|_| format!("field {} is not a number: {t:?}", i + 1)),
        }
    };
    let major = num(0)? as u32;
    let minor = num(1)? as u32;
    let n = toks.len() - 3;
    // Fields a kernel does not have (discard before 4.18, flush before 5.5) read as 0.
    let opt = |i: usize| if i < toks.len() { num(i) } else { Ok(0) };
    Ok(DiskStat {
        major,
        minor,
        name: toks[2].to_string(),
        fields: n,
        reads: num(3)?,
        reads_merged: num(4)?,
        sectors_read: num(5)?,
        read_ms: num(6)?,
        writes: num(7)?,
        writes_merged: num(8)?,
        sectors_written: num(9)?,
        write_ms: num(10)?,
        in_flight: num(11)?,
        io_ms: num(12)?,
        weighted_ms: num(13)?,
        discards: opt(14)?,
        discards_merged: opt(15)?,
        sectors_discarded: opt(16)?,
        discard_ms: opt(17)?,
        flushes: opt(18)?,
        flush_ms: opt(19)?,
    })
}

/// Whether `line` is a partition line of a kernel before 2.6.25: major, minor, name and 4
/// counters (reads, sectors read, writes, sectors written), e.g. `8 1 sda1 5024 46400 6662
/// 13324`. Those lines lack the time and queue counters every figure needs; iostat and
/// pt-diskstats skip them, and so do [`parse`] and [`parse_saved`].
pub fn is_old_partition_line(line: &str) -> bool {
    let toks: Vec<&str> = line.split_whitespace().collect();
    toks.len() == 7
        && toks
            .iter()
            .enumerate()
            .all(|(i, t)| i == 2 || t.parse::<u64>().is_ok())
}

/// The numbers (from 1) of the lines of `raw` that [`is_old_partition_line`] skips.
pub fn old_partition_lines(raw: &str) -> Vec<usize> {
    raw.lines()
        .enumerate()
        .filter(|(_, l)| is_old_partition_line(l))
        .map(|(i, _)| i + 1)
        .collect()
}

/// Parses the whole text of `/proc/diskstats`. Partition lines of kernels before 2.6.25
/// ([`is_old_partition_line`]) are skipped. The first malformed line is an error naming its
/// number.
pub fn parse(text: &str) -> Result<Vec<DiskStat>, Error> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !is_old_partition_line(l))
        .map(|(i, l)| {
            parse_line(l).map_err(|msg| Error::Parse {
                what: "diskstats".into(),
                line: i + 1,
                msg,
            })
        })
        .collect()
}

/// Reads and parses `/proc/diskstats` of the running system.
pub fn read() -> Result<Vec<DiskStat>, Error> {
    let p = "/proc/diskstats";
    let text = std::fs::read_to_string(p).map_err(|e| Error::io(p, e))?;
    parse(&text)
}

/// The sample of device `name` (kernel name, e.g. `vda`, `dm-0`).
pub fn find<'a>(stats: &'a [DiskStat], name: &str) -> Option<&'a DiskStat> {
    stats.iter().find(|d| d.name == name)
}

/// Reads `/proc/diskstats` as raw text (for `--record`).
pub fn read_raw() -> Result<String, Error> {
    let p = "/proc/diskstats";
    std::fs::read_to_string(p).map_err(|e| Error::io(p, e))
}

/// `raw` (`/proc/diskstats` text) with every line cut after its first `fields` tokens
/// (major, minor, name and counters: 14 = the classic format of kernels before 4.18, 18 = with
/// the discard counters, before 5.5), for tools that read only those. Shorter lines and the
/// text of each kept token are left as they are.
pub fn limit_fields(raw: &str, fields: usize) -> String {
    let mut out = String::with_capacity(raw.len());
    for line in raw.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        // The end of the `fields`-th token, if the line has more tokens than that.
        let mut seen = 0;
        let mut cut = None;
        let mut in_token = false;
        for (i, c) in body.char_indices() {
            if c.is_whitespace() {
                if in_token {
                    in_token = false;
                    if seen == fields {
                        cut = Some(i);
                        break;
                    }
                }
            } else if !in_token {
                in_token = true;
                seen += 1;
            }
        }
        match cut {
            Some(i) if body[i..].split_whitespace().next().is_some() => {
                out.push_str(&body[..i]);
                if line.ends_with('\n') {
                    out.push('\n');
                }
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// One timestamped sample of every device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the epoch (with fraction) when the sample was taken.
    pub ts: f64,
    /// The devices.
    pub stats: Vec<DiskStat>,
}

/// A line of a saved-samples file that could not be used.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineProblem {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub msg: String,
}

/// Samples read from a saved file, and the lines that were skipped.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SavedSamples {
    /// Samples in file order.
    pub samples: Vec<Sample>,
    /// Malformed lines (skipped; the rest is used).
    pub problems: Vec<LineProblem>,
    /// 1-based numbers of the partition lines of kernels before 2.6.25 (7 fields), skipped
    /// as iostat and pt-diskstats skip them: not a problem.
    #[serde(default)]
    pub old_partition_lines: Vec<usize>,
}

impl SavedSamples {
    /// The intervals of the file in order: each pair of consecutive samples, or, when the
    /// second was not taken after the first, a note saying so (that interval is skipped).
    pub fn intervals(&self) -> Vec<Result<(&Sample, &Sample), String>> {
        self.samples
            .windows(2)
            .map(|w| {
                if w[1].ts > w[0].ts {
                    Ok((&w[0], &w[1]))
                } else {
                    Err(format!(
                        "sample at TS {} is not after the one before ({}); interval skipped",
                        w[1].ts, w[0].ts
                    ))
                }
            })
            .collect()
    }
}

/// Parses the saved-sample format that pt-stalk writes (`*-diskstats`), `pt-diskstats
/// --save-samples` writes and `dbio iostat --record` appends: a line `TS <epoch[.frac]>
/// [date]`, then the raw `/proc/diskstats` lines of that moment, repeated. Malformed lines
/// (and device lines before the first `TS`) are reported and skipped; partition lines of
/// kernels before 2.6.25 are skipped and listed apart (`old_partition_lines`).
pub fn parse_saved(text: &str) -> SavedSamples {
    let mut out = SavedSamples::default();
    let mut cur: Option<Sample> = None;
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(rest) = t.strip_prefix("TS") {
            if rest.starts_with(char::is_whitespace) || rest.is_empty() {
                match rest.split_whitespace().next().map(str::parse::<f64>) {
                    // At most jiff's last instant (9999-12-30 22:00:00 UTC).
                    Some(Ok(ts))
                        if ts.is_finite()
                            && ts >= 0.0
                            && ts < (jiff::Timestamp::MAX.as_second() + 1) as f64 =>
                    {
                        if let Some(s) = cur.take() {
                            out.samples.push(s);
                        }
                        cur = Some(Sample {
                            ts,
                            stats: Vec::new(),
                        });
                    }
                    _ => {
                        // A bad TS line: its device lines cannot be placed in time.
                        if let Some(s) = cur.take() {
                            out.samples.push(s);
                        }
                        out.problems.push(LineProblem {
                            line: line_no,
                            msg: format!("bad timestamp line {t:?}: expected `TS <epoch seconds> [date]`; the device lines after it are skipped too"),
                        });
                    }
                }
                continue;
            }
        }
        if is_old_partition_line(t) {
            out.old_partition_lines.push(line_no);
            continue;
        }
        match (&mut cur, parse_line(t)) {
            (Some(s), Ok(d)) => s.stats.push(d),
            (None, Ok(_)) => out.problems.push(LineProblem {
                line: line_no,
                msg: "diskstats line outside a sample (no valid `TS` line before it)".into(),
            }),
            (_, Err(msg)) => out.problems.push(LineProblem { line: line_no, msg }),
        }
    }
    if let Some(s) = cur.take() {
        out.samples.push(s);
    }
    out
}

/// Formats one sample in the saved format: `TS <epoch.nanoseconds> <YYYY-MM-DD HH:MM:SS>`
/// (UTC) followed by the raw diskstats text.
pub fn format_saved(ts: f64, raw: &str) -> String {
    let secs = ts.floor() as i64;
    let nanos = ((ts - secs as f64) * 1e9).round().min(999_999_999.0) as u64;
    let mut s = format!("TS {secs}.{nanos:09} {}\n", utc_datetime(secs));
    s.push_str(raw);
    if !raw.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// Appends one sample taken at `ts` to the samples file `path` (created if missing) in the
/// saved format ([`format_saved`]), each line cut to its first `fields` tokens when given
/// ([`limit_fields`]).
pub fn append_saved(
    path: &std::path::Path,
    ts: f64,
    raw: &str,
    fields: Option<usize>,
) -> std::io::Result<()> {
    use std::io::Write;
    let raw = match fields {
        Some(n) => std::borrow::Cow::Owned(limit_fields(raw, n)),
        None => std::borrow::Cow::Borrowed(raw),
    };
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(format_saved(ts, &raw).as_bytes()))
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) for seconds since the epoch; seconds outside the range of
/// [`jiff::Timestamp`] (years -9999 to 9999) print as its nearest end ([`parse_saved`]
/// refuses them).
pub fn utc_datetime(secs: i64) -> String {
    let secs = secs.clamp(
        jiff::Timestamp::MIN.as_second(),
        jiff::Timestamp::MAX.as_second(),
    );
    jiff::Timestamp::from_second(secs)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
        .strftime("%Y-%m-%d %H:%M:%S")
        .to_string()
}

/// The differences between two samples of one device (or the sum over a group).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delta {
    /// Df1.
    pub reads: u64,
    /// Df2.
    pub reads_merged: u64,
    /// Df3.
    pub sectors_read: u64,
    /// Df4 (wrap-corrected).
    pub read_ms: u64,
    /// Df5.
    pub writes: u64,
    /// Df6.
    pub writes_merged: u64,
    /// Df7.
    pub sectors_written: u64,
    /// Df8 (wrap-corrected).
    pub write_ms: u64,
    /// f9 of the second sample (a gauge; summed over a group).
    pub in_flight: u64,
    /// Df9: the change of the in-flight gauge between the samples (negative when the queue
    /// shrank; summed over a group).
    #[serde(default)]
    pub in_flight_change: i64,
    /// Df10 (wrap-corrected).
    pub io_ms: u64,
    /// Df11 (wrap-corrected).
    pub weighted_ms: u64,
    /// Df12.
    pub discards: u64,
    /// Df13.
    pub discards_merged: u64,
    /// Df14.
    pub sectors_discarded: u64,
    /// Df15 (wrap-corrected).
    pub discard_ms: u64,
    /// Df16.
    pub flushes: u64,
    /// Df17 (wrap-corrected).
    pub flush_ms: u64,
    /// How many devices were summed (1 for one device).
    pub devices: u64,
    /// A sum made by [`Delta::add`] (a `--group`, even of one member): pt-diskstats' qtime
    /// of a group uses the summed in-flight gauge, that of a device the gauge's change.
    #[serde(default)]
    pub group: bool,
}

/// Why two samples of a device cannot be compared.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("counters of {device} went backwards ({field}: {before} -> {after}): the device was re-attached or its counters were reset; this interval is skipped for it")]
pub struct CounterReset {
    /// Device name.
    pub device: String,
    /// The first counter found going backwards.
    pub field: String,
    /// Its earlier value.
    pub before: u64,
    /// Its later value.
    pub after: u64,
}

/// The difference of a millisecond counter, which the kernel prints as a 32-bit unsigned
/// value: a smaller later value means it wrapped at 2^32.
pub fn ms_delta(before: u64, after: u64) -> u64 {
    if after >= before {
        after - before
    } else {
        after.saturating_add(1u64 << 32).saturating_sub(before)
    }
}

impl Delta {
    /// The change from `prev` to `cur` (the same device). Event and sector counters going
    /// backwards mean a reset (device re-attached): an error, not a figure. The millisecond
    /// counters are 32-bit and wrap; a smaller value there is a wrap.
    pub fn between(prev: &DiskStat, cur: &DiskStat) -> Result<Delta, CounterReset> {
        let counters: [(&str, u64, u64); 10] = [
            ("reads", prev.reads, cur.reads),
            ("reads_merged", prev.reads_merged, cur.reads_merged),
            ("sectors_read", prev.sectors_read, cur.sectors_read),
            ("writes", prev.writes, cur.writes),
            ("writes_merged", prev.writes_merged, cur.writes_merged),
            ("sectors_written", prev.sectors_written, cur.sectors_written),
            ("discards", prev.discards, cur.discards),
            ("discards_merged", prev.discards_merged, cur.discards_merged),
            (
                "sectors_discarded",
                prev.sectors_discarded,
                cur.sectors_discarded,
            ),
            ("flushes", prev.flushes, cur.flushes),
        ];
        let reset = counters
            .iter()
            .find(|(_, before, after)| after < before)
            .copied()
            // io_ms wraps at 2^32; a smaller value only means a reset when the earlier one
            // was far from the wrap point (an idle device re-attached moves no event counter
            // it did not already have at 0).
            .or_else(|| {
                (cur.io_ms < prev.io_ms && prev.io_ms < (1u64 << 31))
                    .then_some(("io_ms", prev.io_ms, cur.io_ms))
            });
        if let Some((field, before, after)) = reset {
            return Err(CounterReset {
                device: cur.name.clone(),
                field: field.to_string(),
                before,
                after,
            });
        }
        Ok(Delta {
            reads: cur.reads - prev.reads,
            reads_merged: cur.reads_merged - prev.reads_merged,
            sectors_read: cur.sectors_read - prev.sectors_read,
            read_ms: ms_delta(prev.read_ms, cur.read_ms),
            writes: cur.writes - prev.writes,
            writes_merged: cur.writes_merged - prev.writes_merged,
            sectors_written: cur.sectors_written - prev.sectors_written,
            write_ms: ms_delta(prev.write_ms, cur.write_ms),
            in_flight: cur.in_flight,
            in_flight_change: gauge(cur.in_flight).saturating_sub(gauge(prev.in_flight)),
            io_ms: ms_delta(prev.io_ms, cur.io_ms),
            weighted_ms: ms_delta(prev.weighted_ms, cur.weighted_ms),
            discards: cur.discards - prev.discards,
            discards_merged: cur.discards_merged - prev.discards_merged,
            sectors_discarded: cur.sectors_discarded - prev.sectors_discarded,
            discard_ms: ms_delta(prev.discard_ms, cur.discard_ms),
            flushes: cur.flushes - prev.flushes,
            flush_ms: ms_delta(prev.flush_ms, cur.flush_ms),
            devices: 1,
            group: false,
        })
    }

    /// Adds another device's delta (for `--group`; start from `Delta::default()` so that a
    /// group of one member is a group too). The result is a group; sums saturate at u64::MAX.
    pub fn add(&mut self, o: &Delta) {
        self.reads = self.reads.saturating_add(o.reads);
        self.reads_merged = self.reads_merged.saturating_add(o.reads_merged);
        self.sectors_read = self.sectors_read.saturating_add(o.sectors_read);
        self.read_ms = self.read_ms.saturating_add(o.read_ms);
        self.writes = self.writes.saturating_add(o.writes);
        self.writes_merged = self.writes_merged.saturating_add(o.writes_merged);
        self.sectors_written = self.sectors_written.saturating_add(o.sectors_written);
        self.write_ms = self.write_ms.saturating_add(o.write_ms);
        self.in_flight = self.in_flight.saturating_add(o.in_flight);
        self.in_flight_change = self.in_flight_change.saturating_add(o.in_flight_change);
        self.io_ms = self.io_ms.saturating_add(o.io_ms);
        self.weighted_ms = self.weighted_ms.saturating_add(o.weighted_ms);
        self.discards = self.discards.saturating_add(o.discards);
        self.discards_merged = self.discards_merged.saturating_add(o.discards_merged);
        self.sectors_discarded = self.sectors_discarded.saturating_add(o.sectors_discarded);
        self.discard_ms = self.discard_ms.saturating_add(o.discard_ms);
        self.flushes = self.flushes.saturating_add(o.flushes);
        self.flush_ms = self.flush_ms.saturating_add(o.flush_ms);
        self.devices = self.devices.saturating_add(o.devices);
        self.group = true;
    }

    /// Whether anything completed or is in flight.
    pub fn is_idle(&self) -> bool {
        self.reads == 0
            && self.writes == 0
            && self.discards == 0
            && self.flushes == 0
            && self.in_flight == 0
            && self.io_ms == 0
    }
}

/// An in-flight gauge as a signed number (a damaged sample may hold anything up to 2^64).
fn gauge(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn div(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        0.0
    } else {
        a / b
    }
}

/// pt-diskstats' qtime and stime (ms) of a delta, as its `_calc_misc_stats` computes them:
/// N = Df1+Df2+Df5+Df6 requests (merges counted), stime = Df10/N, qtime = Df11/(N+Q) − stime,
/// where Q is the change of the in-flight gauge for one device and the summed gauge of the
/// second sample for a group (see the module documentation). Both are 0 when N is 0, qtime
/// is 0 when N+Q is 0 (and negative when the queue emptied faster than requests completed).
pub fn pt_qtime_stime(d: &Delta) -> (f64, f64) {
    // Sums in f64: counters near 2^64 (a damaged saved sample) must not overflow.
    let n = d.reads as f64 + d.reads_merged as f64 + d.writes as f64 + d.writes_merged as f64;
    if n == 0.0 {
        return (0.0, 0.0);
    }
    let q = if d.group {
        d.in_flight as f64
    } else {
        d.in_flight_change as f64
    };
    let stime = d.io_ms as f64 / n;
    let avg = n + q;
    let qtime = if avg == 0.0 {
        0.0
    } else {
        d.weighted_ms as f64 / avg - stime
    };
    (qtime, stime)
}

/// The figures for one delta over `interval_s` seconds. This is the function `dbio iostat`
/// uses; `dbio bench` uses it too.
pub fn figures(d: &Delta, interval_s: f64) -> Figures {
    let t = interval_s;
    let n = d.devices.max(1) as f64;
    let f = |x: u64| x as f64;
    let (qtime, stime) = pt_qtime_stime(d);
    Figures {
        r_per_s: div(f(d.reads), t),
        w_per_s: div(f(d.writes), t),
        d_per_s: div(f(d.discards), t),
        f_per_s: div(f(d.flushes), t),
        rkb_per_s: div(f(d.sectors_read) / 2.0, t),
        wkb_per_s: div(f(d.sectors_written) / 2.0, t),
        dkb_per_s: div(f(d.sectors_discarded) / 2.0, t),
        rrqm_per_s: div(f(d.reads_merged), t),
        wrqm_per_s: div(f(d.writes_merged), t),
        drqm_per_s: div(f(d.discards_merged), t),
        rrqm_pct: div(100.0 * f(d.reads_merged), f(d.reads) + f(d.reads_merged)),
        wrqm_pct: div(100.0 * f(d.writes_merged), f(d.writes) + f(d.writes_merged)),
        drqm_pct: div(
            100.0 * f(d.discards_merged),
            f(d.discards) + f(d.discards_merged),
        ),
        r_await_ms: div(f(d.read_ms), f(d.reads)),
        w_await_ms: div(f(d.write_ms), f(d.writes)),
        d_await_ms: div(f(d.discard_ms), f(d.discards)),
        f_await_ms: div(f(d.flush_ms), f(d.flushes)),
        rareq_sz_kb: div(f(d.sectors_read) / 2.0, f(d.reads)),
        wareq_sz_kb: div(f(d.sectors_written) / 2.0, f(d.writes)),
        dareq_sz_kb: div(f(d.sectors_discarded) / 2.0, f(d.discards)),
        aqu_sz: div(f(d.weighted_ms), 1000.0 * t),
        util_pct: div(100.0 * f(d.io_ms), 1000.0 * t * n),
        rd_cnc: div(f(d.read_ms), t * 1000.0 * n),
        wr_cnc: div(f(d.write_ms), t * 1000.0 * n),
        rd_rt_ms: if d.reads == 0 {
            0.0
        } else {
            div(f(d.read_ms), f(d.reads) + f(d.reads_merged))
        },
        wr_rt_ms: if d.writes == 0 {
            0.0
        } else {
            div(f(d.write_ms), f(d.writes) + f(d.writes_merged))
        },
        in_flight: d.in_flight,
        io_per_s: div(f(d.reads) + f(d.writes), t),
        qtime_ms: qtime,
        stime_ms: stime,
    }
}

/// One device's figures from two samples `interval_s` seconds apart (convenience for
/// [`Delta::between`] then [`figures`]).
pub fn compute(prev: &DiskStat, cur: &DiskStat, interval_s: f64) -> Result<Figures, CounterReset> {
    Ok(figures(&Delta::between(prev, cur)?, interval_s))
}

/// Samples a fixed set of devices over time: each [`Watch::tick`] gives their figures since
/// the previous tick (the interval measured with a monotonic clock). For `dbio bench`, which
/// samples the devices under its target at every report interval.
#[derive(Debug)]
pub struct Watch {
    names: Vec<String>,
    prev: Vec<DiskStat>,
    at: std::time::Instant,
}

/// One device's figures over one [`Watch`] interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WatchedDevice {
    /// Kernel name.
    pub name: String,
    /// The figures, or why there are none this interval (counter reset, device gone).
    pub figures: Result<Figures, String>,
}

impl Watch {
    /// Starts watching `names` (kernel names as in /proc/diskstats, e.g. from
    /// [`dbio_schema::stack::Stack::devices`]); takes the first sample now. Unknown names are an
    /// error that lists the devices that exist.
    pub fn new(names: &[String]) -> Result<Watch, Error> {
        let prev = read()?;
        for n in names {
            if find(&prev, n).is_none() {
                return Err(Error::UnknownDevice {
                    name: n.clone(),
                    known: prev
                        .iter()
                        .map(|d| d.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
        }
        Ok(Watch {
            names: names.to_vec(),
            prev,
            at: std::time::Instant::now(),
        })
    }

    /// Samples again; returns the interval in seconds and each device's figures since the
    /// previous sample.
    pub fn tick(&mut self) -> Result<(f64, Vec<WatchedDevice>), Error> {
        let cur = read()?;
        let now = std::time::Instant::now();
        let t = now.duration_since(self.at).as_secs_f64();
        let out = self
            .names
            .iter()
            .map(|n| WatchedDevice {
                name: n.clone(),
                figures: match (find(&self.prev, n), find(&cur, n)) {
                    (Some(a), Some(b)) => compute(a, b, t).map_err(|e| e.to_string()),
                    _ => Err(format!("{n} is not in /proc/diskstats any more")),
                },
            })
            .collect();
        self.prev = cur;
        self.at = now;
        Ok((t, out))
    }
}

/// Whether `name` looks like a partition of another device in `names` (`sda1` of `sda`,
/// `nvme0n1p2` of `nvme0n1`, `mmcblk0p1`, `loop0p1`): for saved samples, where sysfs of the
/// recording machine is not available.
pub fn looks_like_partition(name: &str, names: &[&str]) -> bool {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit());
    if base.len() == name.len() || base.is_empty() {
        return false;
    }
    if names.contains(&base) {
        return true;
    }
    match base.strip_suffix('p') {
        Some(b) if b.ends_with(|c: char| c.is_ascii_digit()) => names.contains(&b),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const L14: &str = "   8       0 sda 1000 10 8000 500 2000 20 16000 900 3 700 1400";
    const L18: &str = " 259 0 nvme0n1 1000 10 8000 500 2000 20 16000 900 3 700 1400 5 1 80 6";
    const L20: &str = " 254 0 vda 110045 12694 7633858 38112 163163 27697 13341488 94525 0 21452 141831 14202 95 3560632 3438 24742 5754";

    #[test]
    fn parses_14_18_20_fields() {
        let a = parse_line(L14).unwrap();
        assert_eq!(a.fields, 11);
        assert_eq!((a.major, a.minor, a.name.as_str()), (8, 0, "sda"));
        assert_eq!(a.weighted_ms, 1400);
        assert_eq!(a.in_flight, 3);
        assert_eq!((a.discards, a.flushes), (0, 0));
        let b = parse_line(L18).unwrap();
        assert_eq!(b.fields, 15);
        assert_eq!(
            (
                b.discards,
                b.discards_merged,
                b.sectors_discarded,
                b.discard_ms
            ),
            (5, 1, 80, 6)
        );
        assert_eq!(b.flushes, 0);
        let c = parse_line(L20).unwrap();
        assert_eq!(c.fields, 17);
        assert_eq!(c.reads, 110045);
        assert_eq!(c.sectors_written, 13341488);
        assert_eq!((c.flushes, c.flush_ms), (24742, 5754));
        assert!(parse_line("8 0 sda 1 2 3")
            .unwrap_err()
            .contains("at least 14"));
        assert!(parse_line("8 0 sda 1 2 3 x 5 6 7 8 9 10 11")
            .unwrap_err()
            .contains("field 7"));
        let all = parse(&format!("{L14}\n\n{L20}\n")).unwrap();
        assert_eq!(all.len(), 2);
        let e = parse(&format!("{L14}\nbad\n")).unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
    }

    #[test]
    fn pt_qtime_uses_the_in_flight_change_for_a_device_and_the_gauge_for_a_group() {
        // xvdb1 between the first two samples of percona-toolkit's
        // t/pt-diskstats/samples/bug-1035311.txt: 480 requests, io_ms 510, weighted 5510,
        // in flight 3 -> 37. pt-diskstats prints qtime 9.7 for the device (--group-by all)
        // and 9.6 for xvdb1 alone in --group-by sample; stime 1.1 in both.
        let a = parse_line(" 202      17 xvdb1 204322845 10730363 8654806838 343215734 384700784 40723343 15617098115 2443223186 3 1164749680 2786863940").unwrap();
        let b = parse_line(" 202      17 xvdb1 204323111 10730363 8654829406 343218144 384700941 40723400 15617109613 2443225946 37 1164750190 2786869450").unwrap();
        let d = Delta::between(&a, &b).unwrap();
        assert_eq!((d.in_flight, d.in_flight_change, d.group), (37, 34, false));
        let (q, st) = pt_qtime_stime(&d);
        assert_eq!(format!("{q:.1} {st:.1}"), "9.7 1.1");
        let mut g = Delta::default();
        g.add(&d);
        assert!(g.group);
        let (q, st) = pt_qtime_stime(&g);
        assert_eq!(format!("{q:.1} {st:.1}"), "9.6 1.1");
        // No requests: both 0; requests + change = 0: qtime 0, stime still computed.
        assert_eq!(pt_qtime_stime(&Delta::default()), (0.0, 0.0));
        let z = Delta {
            reads: 2,
            io_ms: 10,
            weighted_ms: 50,
            in_flight_change: -2,
            devices: 1,
            ..Default::default()
        };
        assert_eq!(pt_qtime_stime(&z), (0.0, 5.0));
    }

    #[test]
    fn old_kernel_partition_lines_are_skipped() {
        let text = "   3    0 hda 41159 53633 1102978 620181 39342 67538 857108 4042631 0 289150 4668250\n   3    1 hda1 58209 58218 0 0\n";
        assert!(is_old_partition_line(
            "   8    1 sda1 5024 46400 6662 13324"
        ));
        assert!(!is_old_partition_line("   8    1 sda1 5024 46400 6662 x"));
        assert!(!is_old_partition_line("8 0 sda 1 2 3"));
        let all = parse(text).unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].name, "hda");
        let saved = parse_saved(&format!("TS 1 x\n{text}TS 2 x\n{text}"));
        assert_eq!(saved.samples.len(), 2);
        assert!(saved.problems.is_empty(), "{:?}", saved.problems);
        assert_eq!(saved.old_partition_lines, vec![3, 6]);
    }

    #[test]
    fn limit_fields_keeps_the_first_tokens() {
        let raw = format!("{L20}\n{L14}\n   8    1 sda1 3264 4356 12 12\n");
        let cut = limit_fields(&raw, 14);
        let lines: Vec<&str> = cut.lines().collect();
        assert_eq!(
            lines[0],
            " 254 0 vda 110045 12694 7633858 38112 163163 27697 13341488 94525 0 21452 141831"
        );
        assert_eq!(lines[1], L14);
        assert_eq!(lines[2], "   8    1 sda1 3264 4356 12 12");
        assert!(cut.ends_with('\n'));
        assert_eq!(parse_line(lines[0]).unwrap().fields, 11);
        assert_eq!(limit_fields(L20, 18).split_whitespace().count(), 18);
        assert_eq!(limit_fields(&raw, 20), raw);
    }

    #[test]
    fn ms_wrap() {
        assert_eq!(ms_delta(10, 25), 15);
        assert_eq!(ms_delta(4_294_967_000, 704), 1000);
    }

    #[test]
    fn reset_is_an_error_wrap_is_not() {
        let a = parse_line(L20).unwrap();
        let mut b = a.clone();
        b.reads = 5;
        let e = Delta::between(&a, &b).unwrap_err();
        assert_eq!(e.field, "reads");
        let mut w = a.clone();
        w.read_ms = 4_294_967_000;
        let mut w2 = w.clone();
        w2.read_ms = 704;
        w2.reads += 1000;
        let d = Delta::between(&w, &w2).unwrap();
        assert_eq!(d.read_ms, 1000);
        assert_eq!(figures(&d, 1.0).r_await_ms, 1.0);
        // io_ms going from small to smaller: reset even though the event counters did not move.
        let mut r = a.clone();
        r.io_ms = 100;
        let mut r2 = a.clone();
        r2.io_ms = 50;
        assert_eq!(Delta::between(&r, &r2).unwrap_err().field, "io_ms");
    }

    #[test]
    fn watch_live_devices() {
        let all = read().unwrap();
        let names: Vec<String> = all.iter().take(2).map(|d| d.name.clone()).collect();
        let mut w = Watch::new(&names).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let (t, devs) = w.tick().unwrap();
        assert!(t >= 0.03, "{t}");
        assert_eq!(devs.len(), names.len());
        for d in &devs {
            let f = d.figures.as_ref().unwrap();
            assert!(f.util_pct >= 0.0 && f.r_per_s >= 0.0);
        }
        match Watch::new(&["no-such-dev".to_string()]) {
            Err(Error::UnknownDevice { known, .. }) => assert!(known.contains(&names[0])),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn partition_names() {
        let names = [
            "sda",
            "sda1",
            "nvme0n1",
            "nvme0n1p2",
            "md0",
            "dm-0",
            "loop0",
            "loop0p1",
            "sr0",
        ];
        assert!(looks_like_partition("sda1", &names));
        assert!(looks_like_partition("nvme0n1p2", &names));
        assert!(looks_like_partition("loop0p1", &names));
        assert!(!looks_like_partition("nvme0n1", &names));
        assert!(!looks_like_partition("md0", &names));
        assert!(!looks_like_partition("dm-0", &names));
        assert!(!looks_like_partition("sda", &names));
        assert!(!looks_like_partition("sr0", &names));
    }

    #[test]
    fn saved_format_round_trip_and_problems() {
        let s = format_saved(1_763_798_400.5, &format!("{L14}\n"));
        assert_eq!(
            s.lines().next().unwrap(),
            "TS 1763798400.500000000 2025-11-22 08:00:00"
        );
        let text = format!(
            "{L14}\n{s}TS 1763798401.5 2025-11-22 08:00:01\n{L14}\ngarbage here\nTS nope\n{L14}\n"
        );
        let saved = parse_saved(&text);
        assert_eq!(saved.samples.len(), 2);
        assert_eq!(saved.samples[0].ts, 1_763_798_400.5);
        assert_eq!(saved.samples[1].stats.len(), 1);
        let lines: Vec<usize> = saved.problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, vec![1, 6, 7, 8]);
        assert_eq!(utc_datetime(0), "1970-01-01 00:00:00");
        assert_eq!(utc_datetime(951_782_400), "2000-02-29 00:00:00");
        assert_eq!(utc_datetime(1_795_334_143), "2026-11-22 07:55:43");
        assert_eq!(utc_datetime(253_402_207_200), "9999-12-30 22:00:00");
        assert_eq!(utc_datetime(i64::MAX), "9999-12-30 22:00:00");
    }

    #[test]
    fn saved_timestamps_past_year_9999_are_problems() {
        // Before, `TS 1e300` was taken and its time printed with a year of twelve digits.
        let saved = parse_saved(&format!(
            "TS 253402207200.5 x\n{L14}\nTS 253402207201 x\n{L14}\nTS 1e300 x\n{L14}\n"
        ));
        assert_eq!(saved.samples.len(), 1);
        assert_eq!(saved.samples[0].ts, 253_402_207_200.5);
        let lines: Vec<usize> = saved.problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, vec![3, 4, 5, 6]);
    }

    #[test]
    fn intervals_skip_a_sample_not_after_the_one_before() {
        let line = "   8       0 sda 1 0 8 1 0 0 0 0 0 1 1\n";
        let text = format!("TS 10\n{line}TS 11\n{line}TS 11\n{line}TS 13\n{line}");
        let saved = parse_saved(&text);
        let got: Vec<Result<(f64, f64), String>> = saved
            .intervals()
            .into_iter()
            .map(|i| i.map(|(a, b)| (a.ts, b.ts)))
            .collect();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], Ok((10.0, 11.0)));
        assert!(
            got[1].as_ref().unwrap_err().contains("TS 11 is not after"),
            "{got:?}"
        );
        assert_eq!(got[2], Ok((11.0, 13.0)));
    }

    #[test]
    fn old_partition_lines_are_numbered_from_1_and_append_saved_appends() {
        let raw =
            "   8 0 sda 1 0 8 1 0 0 0 0 0 1 1 0 0 0 0 0 0\n   8 1 sda1 5024 46400 6662 13324\n";
        assert_eq!(old_partition_lines(raw), [2]);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("rec");
        append_saved(&p, 1.5, raw, None).unwrap();
        append_saved(&p, 2.5, raw, Some(14)).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(
            text.starts_with("TS 1.500000000 1970-01-01 00:00:01\n"),
            "{text}"
        );
        assert!(text.contains("\nTS 2.500000000 "), "{text}");
        assert!(
            text.ends_with("   8 0 sda 1 0 8 1 0 0 0 0 0 1 1\n   8 1 sda1 5024 46400 6662 13324\n"),
            "{text}"
        );
        let saved = parse_saved(&text);
        assert_eq!(saved.samples.len(), 2);
        assert!(append_saved(&dir.path().join("no/dir"), 1.0, raw, None).is_err());
    }
}
