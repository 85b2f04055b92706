//! The stalker's loop. Every `--interval`: one cheap sample (SHOW GLOBAL STATUS, SHOW FULL
//! PROCESSLIST, /proc/diskstats, /proc/stat), pushed into the lead-up ring; the trigger
//! evaluated on it; after `--cycles` consecutive true checks, a collection ([`collect`]) unless
//! a cooldown, `--max-collections` or `--min-free` says no. Only SELECT and SHOW are sent. A
//! lost connection is logged and reopened with back-off (1 s, 2 s, ... 30 s), the check count
//! starting over. The stop flag (SIGINT/SIGTERM) ends the loop between checks; a collection in
//! progress is finished first.

use super::digests;
use super::format::{self, ts_line};
use super::ring::{Ring, Weigh};
use super::trigger::{device_figures, Cycles, Expr, Observed, Thread};
use super::StalkError;
use crate::conn::{self, Backoff, Net};
use crate::dsn::Tls;
use crate::Error;
use dbio_schema::stalk::{Capture, CaptureFile, TriggerRecord, TriggerValue};
use dbio_sys::diskstats;
use mysql::prelude::Queryable;
use mysql::Conn;
use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

/// What `dbio mysql stalk` was asked.
#[derive(Clone, Debug)]
pub struct Options {
    /// The server.
    pub dsn: String,
    /// TLS.
    pub tls: Tls,
    /// Timeouts.
    pub net: Net,
    /// `--dest`.
    pub dest: PathBuf,
    /// `--trigger`.
    pub trigger: String,
    /// `--cycles`.
    pub cycles: u32,
    /// `--interval`.
    pub interval: Duration,
    /// `--pre`.
    pub pre: Duration,
    /// `--pre-memory`: the ring's byte bound.
    pub pre_memory: usize,
    /// `--collect`.
    pub collect: Duration,
    /// `--cooldown`.
    pub cooldown: Duration,
    /// `--max-collections` (none: no limit).
    pub max_collections: Option<u32>,
    /// `--min-free`, % of the filesystem of `--dest`.
    pub min_free_pct: f64,
    /// `--purge-after` and `--purge-size`: which dbio captures are removed after a collection.
    pub purge: Purge,
    /// `--once`.
    pub once: bool,
    /// `--full-status-every`: every Nth check reads every status variable, the others only
    /// those the trigger and the timeline need (1: every check, as pt-stalk does).
    pub full_status_every: u32,
}

/// How the stalker ended.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// The capture directories made.
    pub captures: Vec<PathBuf>,
    /// Checks made.
    pub checks: u64,
    /// Why it stopped.
    pub stopped: String,
    /// Time spent in the checks' samples (two statements' round trips and two /proc reads),
    /// summed over all checks.
    pub sample_time: Duration,
}

/// One cheap sample: what the ring holds.
#[derive(Clone, Debug, Default)]
pub struct Snap {
    /// SHOW GLOBAL STATUS.
    pub status: Vec<(String, String)>,
    /// The processlist (id, thread).
    pub processlist: Vec<(u64, Thread)>,
    /// /proc/diskstats.
    pub diskstats: String,
    /// /proc/stat.
    pub procstat: String,
}

impl Weigh for Snap {
    fn weight(&self) -> usize {
        let s = |x: &String| x.capacity();
        std::mem::size_of::<Snap>()
            + self.status.capacity() * std::mem::size_of::<(String, String)>()
            + self.status.iter().map(|(a, b)| s(a) + s(b)).sum::<usize>()
            + self.processlist.capacity() * std::mem::size_of::<(u64, Thread)>()
            + self
                .processlist
                .iter()
                .map(|(_, t)| {
                    s(&t.user) + s(&t.host) + s(&t.db) + s(&t.command) + s(&t.state) + s(&t.info)
                })
                .sum::<usize>()
            + s(&self.diskstats)
            + s(&self.procstat)
    }
}

fn sql_err(what: &str) -> impl FnOnce(mysql::Error) -> Error + '_ {
    move |source| Error::Sql {
        what: what.to_string(),
        source,
    }
}

/// SHOW GLOBAL STATUS.
pub fn global_status(c: &mut Conn) -> Result<Vec<(String, String)>, Error> {
    status_query(c, "SHOW GLOBAL STATUS")
}

fn status_query(c: &mut Conn, q: &str) -> Result<Vec<(String, String)>, Error> {
    c.query::<(String, Option<String>), _>(q)
        .map(|v| {
            v.into_iter()
                .map(|(k, v)| (k, v.unwrap_or_default()))
                .collect()
        })
        .map_err(sql_err("SHOW GLOBAL STATUS"))
}

/// The status variables a lean check reads: those the trigger names, and Threads_running and
/// Questions (the report's timeline). Names are the trigger parser's (letters, digits, `_`).
pub fn lean_status_vars(trigger: &[String]) -> Vec<String> {
    let mut v: Vec<String> = vec!["Threads_running".into(), "Questions".into()];
    for t in trigger {
        if !v.iter().any(|x| x.eq_ignore_ascii_case(t)) {
            v.push(t.clone());
        }
    }
    v.retain(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    v
}

/// SHOW GLOBAL STATUS of `names` only: about a quarter of the server's time of the full
/// statement on MariaDB 10.11 (0.27 against 1.16 ms a statement, measured with
/// performance_schema), which builds every one of its ~600 rows.
fn lean_status(c: &mut Conn, names: &[String]) -> Result<Vec<(String, String)>, Error> {
    let list: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    status_query(
        c,
        &format!(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ({})",
            list.join(", ")
        ),
    )
}

/// SHOW FULL PROCESSLIST (Info cut at 4 KiB).
pub fn processlist(c: &mut Conn) -> Result<Vec<(u64, Thread)>, Error> {
    let rows: Vec<mysql::Row> = c
        .query("SHOW FULL PROCESSLIST")
        .map_err(sql_err("SHOW FULL PROCESSLIST"))?;
    let text = |r: &mysql::Row, i: usize| -> String {
        match r.as_ref(i) {
            Some(mysql::Value::Bytes(b)) => String::from_utf8_lossy(b).into_owned(),
            Some(mysql::Value::Int(n)) => n.to_string(),
            Some(mysql::Value::UInt(n)) => n.to_string(),
            Some(mysql::Value::Double(n)) => n.to_string(),
            _ => String::new(),
        }
    };
    Ok(rows
        .iter()
        .map(|r| {
            let mut info = text(r, 7);
            if info.len() > 4096 {
                let mut end = 4096;
                while !info.is_char_boundary(end) {
                    end -= 1;
                }
                info.truncate(end);
            }
            (
                text(r, 0).parse().unwrap_or(0),
                Thread {
                    user: text(r, 1),
                    host: text(r, 2),
                    db: text(r, 3),
                    command: text(r, 4),
                    time_s: text(r, 5).parse().unwrap_or(0),
                    state: text(r, 6),
                    info,
                },
            )
        })
        .collect())
}

fn read_proc(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn epoch() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Takes one cheap sample.
pub fn sample(c: &mut Conn, lean: Option<&[String]>) -> Result<Snap, Error> {
    Ok(Snap {
        status: match lean {
            Some(names) => lean_status(c, names)?,
            None => global_status(c)?,
        },
        processlist: processlist(c)?,
        diskstats: read_proc("/proc/diskstats"),
        procstat: read_proc("/proc/stat"),
    })
}

/// What the previous check saw, for rates and device figures.
struct Prev {
    ts: f64,
    status: HashMap<String, f64>,
    disk: Vec<dbio_schema::iostat::DiskStat>,
}

/// Builds a check's observations from a sample and the one before.
fn observe(ts: f64, s: &Snap, prev: Option<&Prev>, devices: &[String]) -> (Observed, Prev) {
    let status: HashMap<String, f64> = s
        .status
        .iter()
        .filter_map(|(k, v)| v.parse().ok().map(|v| (k.to_ascii_lowercase(), v)))
        .collect();
    let disk = diskstats::parse(&s.diskstats).unwrap_or_default();
    let mut o = Observed {
        processlist: Some(s.processlist.iter().map(|p| p.1.clone()).collect()),
        ..Observed::default()
    };
    if let Some(p) = prev.filter(|p| ts > p.ts) {
        let dt = ts - p.ts;
        for (k, v) in &status {
            if let Some(b) = p.status.get(k) {
                if v >= b {
                    o.rates.insert(k.clone(), (v - b) / dt);
                }
            }
        }
        for d in devices {
            if let (Some(a), Some(b)) = (diskstats::find(&p.disk, d), diskstats::find(&disk, d)) {
                if let Ok(f) = diskstats::compute(a, b, dt) {
                    for (fig, v) in device_figures(&f) {
                        o.devices.insert(format!("{d}.{fig}"), v);
                    }
                }
            }
        }
    }
    o.status = status.clone();
    (o, Prev { ts, status, disk })
}

/// The lock of a --dest directory: `DIR/.dbio-stalk.lock`, held with flock while the stalker
/// runs (released by the kernel when the process dies, even by SIGKILL).
pub struct DirLock {
    _file: File,
}

/// Takes the lock of `dir` (created if missing).
pub fn lock_dir(dir: &Path) -> Result<DirLock, StalkError> {
    let io = |what: &'static str| {
        move |source| StalkError::Io {
            path: dir.to_path_buf(),
            what,
            source,
        }
    };
    std::fs::create_dir_all(dir).map_err(io("cannot create the --dest directory"))?;
    let path = dir.join(".dbio-stalk.lock");
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io("cannot open the lock file .dbio-stalk.lock"))?;
    if !dbio_sys::os::try_lock_exclusive(&f) {
        let holder = std::fs::read_to_string(&path).unwrap_or_default();
        return Err(StalkError::Locked {
            dir: dir.to_path_buf(),
            lock: path,
            holder: holder.trim().to_string(),
        });
    }
    let _ = f.set_len(0);
    let _ = writeln!(f, "pid {}", std::process::id());
    Ok(DirLock { _file: f })
}

/// Free space of the filesystem holding `dir`, in % of its size (available to this user).
pub fn free_pct(dir: &Path) -> Option<f64> {
    let s = dbio_sys::os::statvfs(dir).ok()?;
    (s.total_bytes > 0).then(|| 100.0 * s.avail_bytes as f64 / s.total_bytes as f64)
}

/// pt-stalk's prefix for a time: `2026_11_28_02_39_26` (UTC here; pt-stalk uses local time).
pub fn prefix_at(ts: f64) -> String {
    diskstats::utc_datetime(ts.floor() as i64).replace(['-', ' ', ':'], "_")
}

/// Runs the stalker until `stop`, `--once` or `--max-collections`.
pub fn run(
    opts: &Options,
    stop: &AtomicBool,
    log: &mut dyn FnMut(&str),
) -> Result<Outcome, StalkError> {
    let expr = Expr::parse(&opts.trigger)?;
    let needs = expr.needs();
    let devices = needs.devices;
    let lean = lean_status_vars(&needs.status_vars);
    let _lock = lock_dir(&opts.dest)?;
    let mut c = conn::open(&opts.dsn, &opts.tls, &opts.net)?;
    log(&format!(
        "stalking {} every {:?}: trigger {} for {} cycles; lead-up {:?}, collect {:?} into {}",
        conn::server_of(&opts.dsn),
        opts.interval,
        opts.trigger,
        opts.cycles.max(1),
        opts.pre,
        opts.collect,
        opts.dest.display()
    ));
    // Statement time by digest, where the server collects it: a snapshot every half --pre
    // (at least 1 s), the newest one at least --pre old kept as the next capture's baseline.
    let digests_on = match digests::available(&mut c) {
        Ok(()) => {
            log("performance_schema digests are read every half --pre: attribution by statement time and by processlist sampling");
            true
        }
        Err(why) => {
            log(&format!("attribution by processlist sampling only: {why}"));
            false
        }
    };
    let digest_every = (opts.pre / 2).max(Duration::from_secs(1)).as_secs_f64();
    let mut baselines: std::collections::VecDeque<digests::Snapshot> = Default::default();
    let mut ring: Ring<Snap> = Ring::new(opts.pre.as_secs_f64(), opts.pre_memory);
    let mut cycles = Cycles::new(opts.cycles);
    let mut prev: Option<Prev> = None;
    let mut out = Outcome::default();
    let mut last_end: Option<Instant> = None;
    while !stop.load(Ordering::SeqCst) {
        let tick = Instant::now();
        let ts = epoch();
        // Every --full-status-every-th check reads all the status variables (the lead-up's
        // mysqladmin samples), the others only what the trigger and the timeline need.
        let full = opts.full_status_every <= 1 || out.checks % opts.full_status_every as u64 == 0;
        let sampled = sample(&mut c, (!full).then_some(lean.as_slice()));
        out.sample_time += tick.elapsed();
        let s = match sampled {
            Ok(s) => s,
            Err(e) if conn::connection_lost(&e) => {
                log(&format!(
                    "connection lost: {}; reconnecting",
                    conn::describe(&e, &opts.net)
                ));
                match reopen(opts, stop, log) {
                    Some(n) => c = n,
                    None => break,
                }
                cycles.reset();
                prev = None;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        out.checks += 1;
        if digests_on && baselines.back().is_none_or(|b| ts - b.ts >= digest_every) {
            if let Ok(d) = digests::read(&mut c, ts, "baseline") {
                baselines.push_back(d);
                while baselines.len() > 1 && baselines[1].ts <= ts - opts.pre.as_secs_f64() {
                    baselines.pop_front();
                }
            }
        }
        let (o, p) = observe(ts, &s, prev.as_ref(), &devices);
        prev = Some(p);
        let (matched, values) = expr.eval(&o);
        ring.push(ts, s);
        let fire = cycles.check(matched);
        if matched {
            log(&format!(
                "check: {} matched, cycles_true={}",
                show_values(&values),
                cycles.count
            ));
        }
        if fire {
            cycles.reset();
            if let Some(why) = refuse(opts, &out, last_end) {
                log(&format!("trigger fired; not collecting: {why}"));
                if opts
                    .max_collections
                    .is_some_and(|m| out.captures.len() as u32 >= m)
                {
                    out.stopped = why;
                    return Ok(out);
                }
            } else {
                let record = TriggerRecord {
                    expression: opts.trigger.clone(),
                    cycles: cycles.need,
                    fired_epoch_s: ts,
                    values: values
                        .iter()
                        .map(|(c, v)| TriggerValue {
                            comparison: c.clone(),
                            value: *v,
                        })
                        .collect(),
                };
                log(&format!(
                    "trigger fired: {}; collecting",
                    show_values(&values)
                ));
                let base = baselines.front().cloned();
                let dir = collect(opts, &mut c, &mut ring, (record, base), stop, log)?;
                log(&format!("capture written: {}", dir.display()));
                purge(&opts.dest, opts.purge, Some(&dir), log);
                out.captures.push(dir);
                last_end = Some(Instant::now());
                if opts.once {
                    out.stopped = "--once: one collection made".into();
                    return Ok(out);
                }
            }
        }
        crate::conn::nap(opts.interval.saturating_sub(tick.elapsed()), stop);
    }
    out.stopped = "stopped by a signal".into();
    Ok(out)
}

fn show_values(v: &[(String, Option<f64>)]) -> String {
    v.iter()
        .map(|(c, v)| match v {
            Some(v) => format!("{c} (value {v})"),
            None => format!("{c} (no value)"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why a fired trigger does not collect: max collections, cooldown, low disk.
fn refuse(opts: &Options, out: &Outcome, last_end: Option<Instant>) -> Option<String> {
    if let Some(m) = opts.max_collections {
        if out.captures.len() as u32 >= m {
            return Some(format!("--max-collections {m} reached"));
        }
    }
    if let Some(e) = last_end {
        if e.elapsed() < opts.cooldown {
            return Some(format!(
                "in --cooldown ({:.0}s left)",
                (opts.cooldown - e.elapsed()).as_secs_f64()
            ));
        }
    }
    match free_pct(&opts.dest) {
        Some(f) if f < opts.min_free_pct => Some(format!(
            "{} has {f:.1}% free, below --min-free {}%",
            opts.dest.display(),
            opts.min_free_pct
        )),
        _ => None,
    }
}

/// Reconnects with back-off until connected or stopped; logs each failure.
fn reopen(opts: &Options, stop: &AtomicBool, log: &mut dyn FnMut(&str)) -> Option<Conn> {
    let mut b = Backoff::new(Duration::from_secs(1), Duration::from_secs(30));
    loop {
        let w = b.next_wait();
        crate::conn::nap(w, stop);
        if stop.load(Ordering::SeqCst) {
            return None;
        }
        match conn::open(&opts.dsn, &opts.tls, &opts.net) {
            Ok(c) => {
                log("reconnected");
                return Some(c);
            }
            Err(e) => log(&format!(
                "reconnect failed: {}; next attempt in up to {:?}",
                conn::describe(&e, &opts.net),
                w * 2
            )),
        }
    }
}

/// The capture being written: its files, appended to.
struct Writer {
    dir: PathBuf,
    prefix: String,
    errors: Vec<String>,
    full: Option<String>,
}

impl Writer {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{}-{name}", self.prefix))
    }
    fn append(&mut self, name: &str, text: &str) {
        if self.full.is_some() {
            return;
        }
        let p = self.path(name);
        let r = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&p)
            .and_then(|mut f| f.write_all(text.as_bytes()));
        if let Err(e) = r {
            let msg = format!("{}: {e}", p.display());
            if e.raw_os_error() == Some(libc::ENOSPC) {
                self.full = Some(format!("the disk is full ({msg}): collection stopped"));
            }
            self.errors.push(msg);
        }
    }
    fn snap(&mut self, ts: f64, s: &Snap) {
        self.append("diskstats", &diskstats::format_saved(ts, &s.diskstats));
        self.append("procstat", &(ts_line(ts) + &s.procstat));
        self.append("mysqladmin", &format::mysqladmin(&s.status));
        self.append("processlist", &format::processlist(ts, &s.processlist));
    }
}

const FILES: &[(&str, &str)] = &[
    ("trigger", "why the collection started: the trigger and its values"),
    ("diskstats", "/proc/diskstats samples (lead-up, then collection), pt-stalk's TS format"),
    ("procstat", "/proc/stat samples (lead-up, then collection)"),
    ("mysqladmin", "SHOW GLOBAL STATUS samples as mysqladmin extended-status prints them (lead-up, then collection)"),
    ("processlist", "SHOW FULL PROCESSLIST samples, vertical, each after a TS line (lead-up, then collection)"),
    ("procvmstat", "/proc/vmstat samples (collection)"),
    ("interrupts", "/proc/interrupts samples (collection)"),
    ("lock-waits", "InnoDB lock waits: waiting and blocking transactions (collection)"),
    ("threadcpu", "per-thread CPU of mysqld: TS, then tid comm utime stime in clock ticks (collection)"),
    ("innodbstatus1", "SHOW ENGINE INNODB STATUS when the trigger fired"),
    ("innodbstatus2", "SHOW ENGINE INNODB STATUS at the end"),
    ("variables", "SHOW GLOBAL VARIABLES"),
    ("ps-digests", "performance_schema statement digests (schema, digest, calls, wait in ps, rows examined, text) at the baseline, the trigger and the end (dbio only)"),
    ("hostname", "the host name"),
];

/// Writes the lead-up and collects for `--collect` into `DEST/<prefix>/`, then capture.json.
fn collect(
    opts: &Options,
    c: &mut Conn,
    ring: &mut Ring<Snap>,
    (trigger, baseline): (TriggerRecord, Option<digests::Snapshot>),
    stop: &AtomicBool,
    log: &mut dyn FnMut(&str),
) -> Result<PathBuf, StalkError> {
    let prefix = prefix_at(trigger.fired_epoch_s);
    let mut dir = opts.dest.join(&prefix);
    let mut n = 1;
    while dir.exists() {
        n += 1;
        dir = opts.dest.join(format!("{prefix}-{n}"));
    }
    std::fs::create_dir(&dir).map_err(|source| StalkError::Io {
        path: dir.clone(),
        what: "cannot create the capture directory",
        source,
    })?;
    let mut w = Writer {
        dir: dir.clone(),
        prefix: prefix.clone(),
        errors: Vec::new(),
        full: None,
    };
    let ring_bytes = ring.bytes() as u64;
    let lead = ring.drain();
    let first_ts = lead.first().map_or(trigger.fired_epoch_s, |l| l.0);
    // The firing sample is the ring's last: it belongs to the collection.
    let pre_samples = lead.len().saturating_sub(1) as u64;
    for (ts, s) in &lead {
        w.snap(*ts, s);
    }
    w.append(
        "trigger",
        &format!(
            "{prefix} Check results: {} fired after {} consecutive checks: {}\n{prefix} dbio mysql stalk ran with --trigger={:?} --cycles={} --interval={:?} --pre={:?} --collect={:?} --dest={}\n",
            trigger.expression,
            trigger.cycles,
            show_values(&trigger.values.iter().map(|v| (v.comparison.clone(), v.value)).collect::<Vec<_>>()),
            trigger.expression,
            trigger.cycles,
            opts.interval,
            opts.pre,
            opts.collect,
            opts.dest.display()
        ),
    );
    let host = read_proc("/proc/sys/kernel/hostname");
    w.append("hostname", &host);
    let ask = |c: &mut Conn, w: &mut Writer, name: &str, q: &str| match query_text(c, q) {
        Ok(t) => w.append(name, &t),
        Err(e) => w
            .errors
            .push(format!("{q}: {}", conn::describe(&e, &opts.net))),
    };
    ask(c, &mut w, "innodbstatus1", "SHOW ENGINE INNODB STATUS");
    // The digests at the trigger, after the baseline; the end's follow the collection.
    let digest_snap =
        |c: &mut Conn, w: &mut Writer, label: &str| match digests::read(c, epoch(), label) {
            Ok(d) => w.append("ps-digests", &digests::format(&d)),
            Err(e) => w.errors.push(format!("{label} digests: {e}")),
        };
    let with_digests = baseline.is_some();
    if let Some(b) = &baseline {
        w.append("ps-digests", &digests::format(b));
        digest_snap(c, &mut w, "trigger");
    }
    ask(c, &mut w, "variables", "SHOW GLOBAL VARIABLES");
    let pid = mysqld_pid(c);
    let start = Instant::now();
    let mut collect_samples = 1u64; // the firing sample
    let mut stopped_early = None;
    let mut told = false;
    let mut conn_ok = true;
    while start.elapsed() < opts.collect {
        if stop.load(Ordering::SeqCst) && !told {
            log(&format!(
                "signal: finishing the capture in progress ({:.0}s left), then stopping",
                (opts.collect.saturating_sub(start.elapsed())).as_secs_f64()
            ));
            told = true;
        }
        let tick = Instant::now();
        nap_plain(opts.interval.saturating_sub(tick.elapsed()));
        let ts = epoch();
        if let Some(f) = free_pct(&opts.dest).filter(|f| *f < opts.min_free_pct) {
            stopped_early = Some(format!(
                "{} fell to {f:.1}% free, below --min-free {}%",
                opts.dest.display(),
                opts.min_free_pct
            ));
            break;
        }
        if !conn_ok {
            if let Ok(n) = conn::open(&opts.dsn, &opts.tls, &opts.net) {
                *c = n;
                conn_ok = true;
                log("reconnected during the collection");
            }
        }
        let mut s = Snap {
            diskstats: read_proc("/proc/diskstats"),
            procstat: read_proc("/proc/stat"),
            ..Snap::default()
        };
        if conn_ok {
            match global_status(c).and_then(|st| processlist(c).map(|p| (st, p))) {
                Ok((st, p)) => {
                    s.status = st;
                    s.processlist = p;
                }
                Err(e) => {
                    let m = conn::describe(&e, &opts.net);
                    log(&format!("during the collection: {m}"));
                    w.errors
                        .push(format!("{}: {m}", format::ts_line(ts).trim()));
                    conn_ok = !conn::connection_lost(&e);
                }
            }
        }
        w.snap(ts, &s);
        w.append("procvmstat", &(ts_line(ts) + &read_proc("/proc/vmstat")));
        w.append(
            "interrupts",
            &(ts_line(ts) + &read_proc("/proc/interrupts")),
        );
        if let Some(pid) = pid {
            w.append("threadcpu", &(ts_line(ts) + &thread_cpu(pid)));
        }
        if conn_ok {
            ask(c, &mut w, "lock-waits", LOCK_WAITS);
        }
        collect_samples += 1;
        if let Some(f) = &w.full {
            stopped_early = Some(f.clone());
            break;
        }
    }
    if conn_ok {
        ask(c, &mut w, "innodbstatus2", "SHOW ENGINE INNODB STATUS");
        if with_digests {
            digest_snap(c, &mut w, "end");
        }
    }
    let files = FILES
        .iter()
        .filter_map(|(n, holds)| {
            let m = std::fs::metadata(w.path(n)).ok()?;
            Some(CaptureFile {
                name: format!("{prefix}-{n}"),
                size_bytes: m.len(),
                holds: (*holds).to_string(),
            })
        })
        .collect();
    let cap = Capture {
        prefix,
        hostname: host.trim().to_string(),
        server: conn::server_of(&opts.dsn),
        trigger,
        interval_s: opts.interval.as_secs_f64(),
        pre_s: opts.pre.as_secs_f64(),
        collect_s: opts.collect.as_secs_f64(),
        first_sample_epoch_s: first_ts,
        last_sample_epoch_s: epoch(),
        pre_samples,
        collect_samples,
        pre_ring_bytes: ring_bytes,
        stopped_early: stopped_early.clone(),
        files,
        errors: w.errors.clone(),
    };
    if let Some(why) = &stopped_early {
        log(&format!("collection stopped early: {why}"));
    }
    let doc = dbio_schema::Document::new(dbio_schema::doc::MYSQL_STALK_CAPTURE, &cap);
    let mut bytes = serde_json::to_vec_pretty(&doc).unwrap_or_default();
    bytes.push(b'\n');
    if let Err(e) = dbio_sys::atomic::write_atomic(&dir.join("capture.json"), &bytes) {
        log(&format!(
            "{}: capture.json not written: {e}; the files of the capture are kept",
            dir.display()
        ));
    }
    Ok(dir)
}

fn nap_plain(d: Duration) {
    std::thread::sleep(d);
}

/// InnoDB lock waits: who waits for whom (information_schema; MariaDB and MySQL 5.7).
const LOCK_WAITS: &str = "SELECT r.trx_mysql_thread_id AS waiting_thread, r.trx_query AS waiting_query, TIMESTAMPDIFF(SECOND, r.trx_wait_started, NOW()) AS wait_s, b.trx_mysql_thread_id AS blocking_thread, b.trx_query AS blocking_query FROM information_schema.INNODB_LOCK_WAITS w JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id";

/// A query's rows as `mysql -e "...\G"` prints them, after a TS line (empty result: the TS
/// line alone).
fn query_text(c: &mut Conn, q: &str) -> Result<String, Error> {
    let rows: Vec<mysql::Row> = c.query(q).map_err(|source| Error::Sql {
        what: q.to_string(),
        source,
    })?;
    let mut s = ts_line(epoch());
    for (i, r) in rows.iter().enumerate() {
        s.push_str(&format!(
            "*************************** {}. row ***************************\n",
            i + 1
        ));
        let cols = r.columns_ref();
        let w = cols.iter().map(|c| c.name_str().len()).max().unwrap_or(0);
        for (j, col) in cols.iter().enumerate() {
            let v = match r.as_ref(j) {
                Some(mysql::Value::Bytes(b)) => String::from_utf8_lossy(b).into_owned(),
                Some(mysql::Value::NULL) | None => "NULL".into(),
                Some(v) => v.as_sql(true),
            };
            s.push_str(&format!("{:>w$}: {v}\n", col.name_str()));
        }
    }
    Ok(s)
}

/// The pid of the server when it runs on this host: `@@pid_file`'s content when readable and
/// alive, else the one process named mariadbd or mysqld.
fn mysqld_pid(c: &mut Conn) -> Option<u32> {
    let from_file = c
        .query_first::<Option<String>, _>("SELECT @@pid_file")
        .ok()
        .flatten()
        .flatten()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|s| s.trim().parse::<u32>().ok())
        .filter(|p| Path::new(&format!("/proc/{p}")).exists());
    if from_file.is_some() {
        return from_file;
    }
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let comm = read_proc(&format!("/proc/{pid}/comm"));
        if matches!(comm.trim(), "mariadbd" | "mysqld") {
            found.push(pid);
        }
    }
    (found.len() == 1).then(|| found[0])
}

/// `tid comm utime stime` (clock ticks) of every thread of `pid`.
fn thread_cpu(pid: u32) -> String {
    let mut out = String::new();
    let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for e in rd.flatten() {
        let tid = e.file_name().to_string_lossy().into_owned();
        let stat = read_proc(&format!("/proc/{pid}/task/{tid}/stat"));
        // comm is in parentheses and may hold spaces: the fields follow the last ')'.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let comm = stat[open + 1..close].replace(' ', "_");
        let f: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        // After ')': state is field 3, utime field 14, stime field 15 (1-based in proc(5)).
        if let (Some(u), Some(s)) = (f.get(11), f.get(12)) {
            out.push_str(&format!("{tid} {comm} {u} {s}\n"));
        }
    }
    out
}

/// Which dbio captures `--purge-after` and `--purge-size` remove.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Purge {
    /// Captures whose last sample is older than this.
    pub age: Option<Duration>,
    /// The oldest captures, until the captures left take at most this many bytes.
    pub size_bytes: Option<u64>,
}

/// A dbio capture in `--dest`: its directory, the files it lists (capture.json included), their
/// bytes, and its last sample's time.
struct Found {
    dir: PathBuf,
    files: Vec<String>,
    bytes: u64,
    last_epoch_s: f64,
}

/// The dbio captures in `dest` (directories holding a capture.json whose schema is dbio's).
fn captures_in(dest: &Path) -> Vec<Found> {
    let Ok(rd) = std::fs::read_dir(dest) else {
        return Vec::new();
    };
    let mut out: Vec<Found> = rd
        .flatten()
        .filter_map(|e| {
            let dir = e.path();
            let cap = super::report::read_capture(&dir.join("capture.json")).ok()?;
            let mut files: Vec<String> = cap.files.iter().map(|f| f.name.clone()).collect();
            files.push("capture.json".into());
            let bytes = files
                .iter()
                .filter_map(|n| std::fs::symlink_metadata(dir.join(n)).ok())
                .map(|m| m.len())
                .sum();
            Some(Found {
                dir,
                files,
                bytes,
                last_epoch_s: cap.last_sample_epoch_s,
            })
        })
        .collect();
    out.sort_by(|a, b| a.last_epoch_s.total_cmp(&b.last_epoch_s));
    out
}

/// Removes a capture: only the files its capture.json lists, then the directory if that left
/// it empty.
fn remove_capture(c: &Found, why: &str, log: &mut dyn FnMut(&str)) {
    for n in &c.files {
        let _ = std::fs::remove_file(c.dir.join(n));
    }
    match std::fs::remove_dir(&c.dir) {
        Ok(()) => log(&format!("purged {} ({why})", c.dir.display())),
        Err(e) => log(&format!(
            "purging {} ({why}): its files are removed, the directory is kept: {e}",
            c.dir.display()
        )),
    }
}

/// Removes the dbio captures in `dest` that `policy` names: first those older than its age,
/// then the oldest until the rest fit in its size. `keep` (the capture just written) is never
/// removed; nothing but dbio captures' own files is touched.
pub fn purge(dest: &Path, policy: Purge, keep: Option<&Path>, log: &mut dyn FnMut(&str)) {
    let now = epoch();
    let mut left = Vec::new();
    for c in captures_in(dest) {
        let kept = keep.is_some_and(|k| k == c.dir);
        match policy.age {
            Some(age) if !kept && now - c.last_epoch_s > age.as_secs_f64() => {
                remove_capture(&c, "older than --purge-after", log)
            }
            _ => left.push(c),
        }
    }
    let Some(limit) = policy.size_bytes else {
        return;
    };
    let mut total: u64 = left.iter().map(|c| c.bytes).sum();
    for c in &left {
        if total <= limit {
            break;
        }
        if keep.is_some_and(|k| k == c.dir) {
            continue;
        }
        remove_capture(
            c,
            &format!("the captures took {total} bytes, over --purge-size {limit}"),
            log,
        );
        total -= c.bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lean_check_reads_the_timeline_and_the_trigger_variables_once_each() {
        let v = lean_status_vars(&[
            "questions".into(),
            "Innodb_rows_read".into(),
            "x';--".into(),
        ]);
        assert_eq!(v, ["Threads_running", "Questions", "Innodb_rows_read"]);
    }

    #[test]
    fn prefixes_are_pt_stalks() {
        assert_eq!(prefix_at(1795833566.4), "2026_11_28_02_39_26");
    }

    #[test]
    fn a_second_stalker_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let a = lock_dir(d.path()).unwrap();
        match lock_dir(d.path()) {
            Err(StalkError::Locked { holder, .. }) => {
                assert_eq!(holder, format!("pid {}", std::process::id()))
            }
            other => panic!("{:?}", other.err()),
        }
        drop(a);
        lock_dir(d.path()).unwrap();
    }

    /// A capture as `collect` writes it: its files, then capture.json listing them.
    fn capture(dest: &Path, name: &str, last: f64, bytes: usize) -> PathBuf {
        use dbio_schema::stalk::{Capture, CaptureFile, TriggerRecord};
        let dir = dest.join(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}-diskstats")), vec![b'x'; bytes]).unwrap();
        let cap = Capture {
            prefix: name.into(),
            hostname: "h".into(),
            server: "s".into(),
            trigger: TriggerRecord {
                expression: "Threads_running>1".into(),
                cycles: 1,
                fired_epoch_s: last,
                values: vec![],
            },
            interval_s: 1.0,
            pre_s: 60.0,
            collect_s: 30.0,
            first_sample_epoch_s: last - 90.0,
            last_sample_epoch_s: last,
            pre_samples: 1,
            collect_samples: 1,
            pre_ring_bytes: 0,
            stopped_early: None,
            files: vec![CaptureFile {
                name: format!("{name}-diskstats"),
                size_bytes: bytes as u64,
                holds: "diskstats".into(),
            }],
            errors: vec![],
        };
        let doc = dbio_schema::Document::new(dbio_schema::doc::MYSQL_STALK_CAPTURE, &cap);
        std::fs::write(dir.join("capture.json"), serde_json::to_vec(&doc).unwrap()).unwrap();
        dir
    }

    #[test]
    fn purge_removes_old_then_oldest_over_the_size_keeping_the_new_one_and_foreign_files() {
        let t = tempfile::tempdir().unwrap();
        let now = epoch();
        let old = capture(t.path(), "a_old", now - 10_000.0, 1000);
        let mid = capture(t.path(), "b_mid", now - 500.0, 3000);
        let late = capture(t.path(), "c_late", now - 100.0, 3000);
        let new = capture(t.path(), "d_new", now, 5000);
        // A file of someone else's in a capture, and a directory that is no dbio capture.
        std::fs::write(late.join("notes.txt"), "mine").unwrap();
        std::fs::create_dir(t.path().join("other")).unwrap();
        std::fs::write(t.path().join("other/x-diskstats"), "y").unwrap();
        let mut logged = Vec::new();
        let policy = Purge {
            age: Some(Duration::from_secs(3600)),
            size_bytes: Some(7000),
        };
        purge(t.path(), policy, Some(&new), &mut |l| {
            logged.push(l.to_string())
        });
        // a_old: too old. Then b_mid and c_late are the oldest while the rest take more than
        // 7000 bytes (with a capture.json of some hundred bytes each: 8000 + 2 indexes after
        // b_mid, 5000 + 1 after c_late); d_new (the capture just written) stays.
        assert!(!old.exists() && !mid.exists(), "{logged:?}");
        assert!(new.join("capture.json").exists());
        assert!(!late.join("capture.json").exists() && late.join("notes.txt").exists());
        assert!(t.path().join("other/x-diskstats").exists());
        assert_eq!(logged.len(), 3, "{logged:?}");
        assert!(logged[0].contains("older than --purge-after"), "{logged:?}");
        assert!(logged[1].contains("over --purge-size 7000"), "{logged:?}");
        assert!(logged[2].contains("the directory is kept"), "{logged:?}");
        // Under the size, nothing more goes.
        logged.clear();
        let size_only = Purge {
            age: None,
            size_bytes: Some(1 << 20),
        };
        purge(t.path(), size_only, None, &mut |l| {
            logged.push(l.to_string())
        });
        assert!(logged.is_empty() && new.exists());
    }

    #[test]
    fn snap_weight_counts_its_text() {
        let small = Snap::default().weight();
        let big = Snap {
            diskstats: "x".repeat(10_000),
            processlist: vec![(
                1,
                Thread {
                    info: "y".repeat(5000),
                    ..Thread::default()
                },
            )],
            ..Snap::default()
        };
        assert!(big.weight() >= small + 15_000);
    }

    #[test]
    fn rates_and_device_figures_need_a_previous_check() {
        let s = |q: &str, reads: u64| Snap {
            status: vec![
                ("Questions".into(), q.into()),
                ("Threads_running".into(), "3".into()),
            ],
            diskstats: format!(" 253 0 vda {reads} 0 {} 100 0 0 0 0 0 500 100\n", reads * 8),
            ..Snap::default()
        };
        let devs = vec!["vda".to_string()];
        let (o1, p1) = observe(10.0, &s("100", 1000), None, &devs);
        assert!(o1.rates.is_empty());
        assert!(o1.devices.is_empty());
        assert_eq!(o1.status["threads_running"], 3.0);
        let (o2, _) = observe(12.0, &s("300", 1400), Some(&p1), &devs);
        assert_eq!(o2.rates["questions"], 100.0);
        assert_eq!(o2.devices["vda.r_s"], 200.0);
        let e = Expr::parse("rate(Questions)>=100 and vda.r_s>150").unwrap();
        assert!(e.eval(&o2).0);
        assert!(!e.eval(&o1).0);
    }
}
