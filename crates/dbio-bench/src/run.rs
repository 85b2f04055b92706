//! The run phase: open the target, start one worker per thread, assemble their per-interval
//! snapshots into intervals (handed to the caller as they complete) and the final summary.

use crate::devmon::Samples;
use crate::dist::BlockPicker;
use crate::engines::{self, EngineFactory, EngineSetup};
use crate::error::BenchError;
use crate::fileset;
use crate::timer::Calibration;
use crate::worker::{self, Clock, OpAcc, Plan, Snapshot, READ, SYNC, WRITE};
use crate::{env, spec};
use dbio_schema::bench::*;
use dbio_schema::LatencyHistogram;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::sync::{Condvar, Mutex, OnceLock};

/// The opened target: files (or the device) and what the run needs to know about them.
pub struct Target {
    /// Open data files (or the device), in file index order (none for the null engine).
    pub files: Vec<File>,
    /// Number of data files the workload addresses.
    pub file_count: u64,
    /// Their paths.
    pub paths: Vec<PathBuf>,
    /// Usable bytes per file.
    pub file_size: u64,
    /// Commit logs, one per worker.
    pub logs: Vec<File>,
    /// The open(2) flags used, by name.
    pub open_flags: Vec<String>,
    /// Filesystem type name of the target (for messages).
    pub fs: String,
}

fn open_flags(spec: &Spec, write: bool) -> (i32, Vec<String>) {
    let mut flags = 0;
    let mut names = vec![if write { "O_RDWR" } else { "O_RDONLY" }.to_string()];
    if spec.direct {
        flags |= libc::O_DIRECT;
        names.push("O_DIRECT".into());
    }
    if spec.dsync {
        flags |= libc::O_DSYNC;
        names.push("O_DSYNC".into());
    }
    if spec.sync {
        flags |= libc::O_SYNC;
        names.push("O_SYNC".into());
    }
    if spec.noatime {
        flags |= libc::O_NOATIME;
        names.push("O_NOATIME".into());
    }
    (flags, names)
}

/// Drops O_NOATIME from the flag names when the kernel did not grant it (it needs file
/// ownership or CAP_FOWNER; `open_one` then opens without it).
fn granted(names: &mut Vec<String>, f: Option<&File>) {
    if let Some(f) = f {
        if dbio_sys::os::status_flags(f).is_ok_and(|fl| fl & libc::O_NOATIME == 0) {
            names.retain(|n| n != "O_NOATIME");
        }
    }
}

/// Opens an existing file or device (files of the set are created by `fileset` only).
fn open_one(path: &Path, write: bool, flags: i32, fs: &str) -> Result<File, BenchError> {
    let mut o = OpenOptions::new();
    o.read(true).write(write).custom_flags(flags);
    let opened = match o.open(path) {
        // O_NOATIME is refused (EPERM) on files the user does not own: open without it.
        Err(e) if e.raw_os_error() == Some(libc::EPERM) && flags & libc::O_NOATIME != 0 => {
            o.custom_flags(flags & !libc::O_NOATIME);
            o.open(path)
        }
        r => r,
    };
    opened.map_err(|e| {
        if e.raw_os_error() == Some(libc::EINVAL) && flags & libc::O_DIRECT != 0 {
            BenchError::DirectUnsupported {
                path: path.to_path_buf(),
                fs: fs.to_string(),
            }
        } else {
            BenchError::io("cannot open", path, e)
        }
    })
}

/// Size of a block device in bytes (BLKGETSIZE64).
pub fn device_size(f: &File) -> std::io::Result<u64> {
    dbio_sys::os::block_device_size(f)
}

/// Logical block size of a block device (BLKSSZGET).
pub fn device_logical_block(f: &File) -> std::io::Result<u64> {
    dbio_sys::os::logical_block_size(f)
}

/// Opens the target for a run: the prepared file set, or the device (read-only unless the
/// mode writes and `allow_device_writes`; the caller checks that nothing on it is mounted), and for `commit` one fresh log file per thread.
pub fn open_target(spec: &Spec, allow_device_writes: bool) -> Result<Target, BenchError> {
    let write = spec.mode.writes();
    let (flags, names) = open_flags(spec, write);
    if spec.engine == EngineKind::Null {
        // No I/O: nothing is opened, so nothing needs preparing.
        let file_size = if spec.mode == Mode::Commit {
            spec.file_total_size_bytes / spec.threads as u64
        } else {
            spec::file_size(spec).max(spec.block_size_bytes.saturating_add(spec.misalign_bytes))
        };
        return Ok(Target {
            files: Vec::new(),
            file_count: if spec.mode == Mode::Commit {
                0
            } else {
                spec.file_num
            },
            paths: Vec::new(),
            file_size,
            logs: Vec::new(),
            open_flags: vec!["none (null engine)".into()],
            fs: "none".into(),
        });
    }
    match &spec.target {
        dbio_schema::bench::Target::Dir(dir) => {
            let fs = env::fs_type_name(dir);
            let marker = fileset::read_marker(dir)?.ok_or(BenchError::NoFileSet {
                path: dir.clone(),
                marker: fileset::MARKER,
            })?;
            if spec.mode == Mode::Commit {
                let logs: Vec<String> = (0..spec.threads).map(fileset::log_file).collect();
                // Created (O_EXCL|O_NOFOLLOW) and recorded, or reused if still dbio's; then
                // opened without following links, checked again, and emptied.
                let marker = fileset::claim(dir, &logs)?;
                let files = logs
                    .iter()
                    .map(|n| {
                        let f = fileset::open_owned(dir, &marker, n, |p| {
                            open_one(p, true, flags | libc::O_NOFOLLOW, &fs)
                        })?;
                        f.set_len(0)
                            .map_err(|e| BenchError::io("cannot truncate", dir.join(n), e))?;
                        Ok(f)
                    })
                    .collect::<Result<Vec<_>, BenchError>>()?;
                let mut names = names;
                granted(&mut names, files.first());
                return Ok(Target {
                    files: Vec::new(),
                    file_count: 0,
                    paths: logs.iter().map(|n| dir.join(n)).collect(),
                    file_size: spec.file_total_size_bytes / spec.threads as u64,
                    logs: files,
                    open_flags: names,
                    fs,
                });
            }
            let want_size = spec::file_size(spec);
            if marker.file_num < spec.file_num || marker.file_size_bytes != want_size {
                return Err(BenchError::FileSetMismatch {
                    path: dir.clone(),
                    found: format!(
                        "{} files of {} bytes",
                        marker.file_num, marker.file_size_bytes
                    ),
                    want: format!("{} files of {} bytes", spec.file_num, want_size),
                });
            }
            let paths: Vec<PathBuf> = (0..spec.file_num)
                .map(|i| dir.join(fileset::data_file(i)))
                .collect();
            let files = (0..spec.file_num)
                .map(|i| {
                    let name = fileset::data_file(i);
                    let f = fileset::open_owned(dir, &marker, &name, |p| {
                        open_one(p, write, flags | libc::O_NOFOLLOW, &fs)
                    })?;
                    // Every file whole, as prepare left it: checked on what was opened.
                    fileset::check_whole(&dir.join(&name), &f, want_size)?;
                    Ok(f)
                })
                .collect::<Result<Vec<_>, _>>()?;
            let mut names = names;
            granted(&mut names, files.first());
            Ok(Target {
                files,
                file_count: spec.file_num,
                paths,
                file_size: want_size,
                logs: Vec::new(),
                open_flags: names,
                fs,
            })
        }
        dbio_schema::bench::Target::Device(dev) => {
            if !fileset::is_block_device(dev) {
                return Err(BenchError::NotBlockDevice { path: dev.clone() });
            }
            if write && !allow_device_writes {
                return Err(BenchError::DeviceWritesNotAllowed {
                    path: dev.clone(),
                    mode: spec.mode.name().into(),
                });
            }
            if write {
                // Nothing in the device's whole stack (below it, above it, partitions of the
                // same disk) may be in use: writes would destroy a live filesystem or swap.
                match dbio_sys::inuse::device_in_use(dev) {
                    Ok(None) => {}
                    Ok(Some(used)) => {
                        return Err(BenchError::DeviceInUse {
                            path: dev.clone(),
                            what: used.to_string(),
                        })
                    }
                    Err(e) => {
                        return Err(BenchError::DeviceInUse {
                            path: dev.clone(),
                            what: format!(
                                "cannot tell whether anything in its device stack is in use \
                                 ({e}); dbio writes only to a device it can check"
                            ),
                        })
                    }
                }
            }
            let f = open_one(dev, write, flags, "block device")?;
            let size =
                device_size(&f).map_err(|e| BenchError::io("cannot get the size of", dev, e))?;
            let lbs = device_logical_block(&f).unwrap_or(512);
            if spec.direct && !spec.block_size_bytes.is_multiple_of(lbs) {
                return Err(BenchError::InvalidSpec(format!(
                    "--block-size {} is not a multiple of the logical block size of {} ({lbs} bytes), which O_DIRECT requires: use a multiple of {lbs}",
                    spec.block_size_bytes,
                    dev.display()
                )));
            }
            if spec.direct && !spec.misalign_bytes.is_multiple_of(lbs) {
                return Err(BenchError::InvalidSpec(format!(
                    "--misalign {} breaks O_DIRECT alignment on {} (logical block size {lbs} bytes): use a multiple of {lbs}, or drop --direct to measure misalignment through the page cache",
                    spec.misalign_bytes,
                    dev.display()
                )));
            }
            let use_size = if spec.file_total_size_bytes == 0 {
                size
            } else {
                spec.file_total_size_bytes
            };
            if use_size < spec.block_size_bytes.saturating_add(spec.misalign_bytes) {
                return Err(BenchError::InvalidSpec(format!(
                    "--file-total-size {use_size} of {} is less than one {}-byte block plus --misalign {}: raise --file-total-size or lower --misalign",
                    dev.display(),
                    spec.block_size_bytes,
                    spec.misalign_bytes
                )));
            }
            if use_size > size {
                return Err(BenchError::InvalidSpec(format!(
                    "--file-total-size {use_size} is larger than {} ({size} bytes)",
                    dev.display()
                )));
            }
            let mut names = names;
            granted(&mut names, Some(&f));
            Ok(Target {
                files: vec![f],
                file_count: 1,
                paths: vec![dev.clone()],
                file_size: use_size,
                logs: Vec::new(),
                open_flags: names,
                fs: "block device".into(),
            })
        }
    }
}

/// Checks that O_DIRECT accepts this block size and misalignment, with one read at the first
/// offset the run will use; turns EINVAL into an error that says what to change.
fn probe_direct(spec: &Spec, t: &Target) -> Result<(), BenchError> {
    if !spec.direct {
        return Ok(());
    }
    let (f, path) = match (t.files.first(), t.logs.first()) {
        (Some(f), _) => (f, &t.paths[0]),
        (None, Some(f)) => (f, &t.paths[0]),
        _ => return Ok(()),
    };
    let mut buf = crate::engines::AlignedBuffers::new(1, spec.block_size_bytes as usize);
    let b = buf.slot(0);
    let off = spec.misalign_bytes;
    let r = std::os::unix::fs::FileExt::read_at(f, b, off);
    if r.is_err_and(|e| e.raw_os_error() == Some(libc::EINVAL)) {
        let hint = if spec.misalign_bytes > 0 {
            format!("--misalign {} breaks O_DIRECT alignment on {}: use a multiple of the logical block size (often 512 or 4096), or drop --direct (add --buffered) to measure misalignment through the page cache", spec.misalign_bytes, t.fs)
        } else {
            format!("--block-size {} is not a multiple of the logical block size that O_DIRECT needs on {}: use a multiple of 4096", spec.block_size_bytes, t.fs)
        };
        return Err(BenchError::DirectAlignment {
            path: path.clone(),
            block: spec.block_size_bytes,
            offset: off,
            hint,
        });
    }
    Ok(())
}

/// Builds worker `id`'s plan.
fn plan(spec: &Spec, t: &Target, id: u32) -> Plan {
    let threads = spec.threads as u64;
    let block = spec.block_size_bytes;
    let file_blocks = if t.file_size >= block.saturating_add(spec.misalign_bytes) {
        (t.file_size - spec.misalign_bytes) / block
    } else {
        0
    };
    let files = t.file_count;
    let total = (file_blocks * files).max(1);
    let lo = total * id as u64 / threads;
    let hi = (total * (id as u64 + 1) / threads).max(lo + 1);
    let events = (spec.events > 0)
        .then(|| spec.events / threads + u64::from((id as u64) < spec.events % threads));
    Plan {
        id,
        mode: spec.mode,
        block,
        iodepth: spec.iodepth,
        file_blocks: file_blocks.max(1),
        files: files as u32,
        seq_range: (lo, hi),
        picker: BlockPicker::new(spec.distribution, total),
        read_prob: spec.rw_ratio / (spec.rw_ratio + 1.0),
        fsync_every: spec.fsync_every,
        fsync_end: spec.fsync_end,
        misalign: spec.misalign_bytes,
        events,
        rate_period_ns: spec.rate_iops.map(|r| 1e9 * threads as f64 / r),
        seed: spec.seed,
        log: (spec.mode == Mode::Commit).then(|| (0, (t.file_size / block).max(1))),
        sync_each_commit: !(spec.dsync || spec.sync),
        submit_batch: spec.submit_batch,
        reap_batch: spec.reap_batch,
    }
}

/// The start line of a run: each worker reports ready (its engine set up), then waits for
/// the go, or for the abort when the run cannot start (a thread could not be created): a
/// barrier would keep the workers already started waiting forever for the missing ones.
#[derive(Default)]
struct StartGate {
    state: Mutex<(usize, Option<bool>)>,
    cv: Condvar,
}

impl StartGate {
    /// Worker side: ready; true for go, false for abort.
    fn ready_then_wait(&self) -> bool {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        g.0 += 1;
        self.cv.notify_all();
        loop {
            if let Some(go) = g.1 {
                return go;
            }
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Waits until `n` workers are ready.
    fn wait_ready(&self, n: usize) {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while g.0 < n {
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Starts (`true`) or aborts (`false`) every worker, once; later calls change nothing.
    fn release(&self, go: bool) {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        g.1.get_or_insert(go);
        self.cv.notify_all();
    }
}

/// What every worker thread shares: the spec, the engine factory, the start gate, the clock and
/// the stop flag.
struct Shared<'a, F> {
    spec: &'a Spec,
    engines: &'a F,
    gate: &'a StartGate,
    start: &'a OnceLock<Clock>,
    stop: &'a AtomicBool,
    /// Filesystem type of the target.
    fs: &'a str,
}

fn run_worker<F: EngineFactory>(
    sh: &Shared<'_, F>,
    plan: &Plan,
    fds: Vec<RawFd>,
    tx: &mpsc::Sender<Box<Snapshot>>,
    recycle: &mpsc::Receiver<Box<Snapshot>>,
) {
    let Shared {
        spec,
        engines,
        gate,
        start,
        stop,
        fs,
    } = *sh;
    // A private copy of the descriptor table for this worker: with the table shared by every
    // thread, each pread/pwrite pays for reference counting in the kernel's fd lookup; a
    // table owned by one thread takes the lookup's fast path (measured +2 to 5% IOPS for the
    // sync engine on tmpfs). The copy holds the same open files under the same numbers.
    dbio_sys::os::private_fd_table();
    let engine = engines.make(EngineSetup {
        worker: plan.id,
        fds,
        iodepth: spec.iodepth.max(1) as usize,
        block: spec.block_size_bytes as usize,
        fsync: spec.fsync_mode,
        memory_fs: env::is_memory_fs(fs),
        fixed_buffers: spec.fixed_buffers,
        register_files: spec.register_files,
        huge_pages: spec.huge_pages,
        spin_polls: spec.spin_polls,
    });
    if !gate.ready_then_wait() {
        return; // the run could not start: nothing was measured
    }
    let clock = *start.get().expect("clock set before go");
    match engine {
        // Compiled once per engine type: the per-I/O calls are static.
        Ok(mut e) => worker::run(plan, clock, &mut e, tx, recycle, stop),
        Err(msg) => {
            let _ = tx.send(Box::new(Snapshot {
                thread: plan.id,
                last: true,
                error: Some(msg),
                ..Default::default()
            }));
        }
    }
}

#[derive(Default)]
struct Pending {
    ops: [OpAcc; 3],
    end_ns: u64,
}

fn merge_ops(into: &mut [OpAcc; 3], from: &[OpAcc; 3]) {
    for (a, b) in into.iter_mut().zip(from) {
        a.hist.merge(&b.hist);
        a.svc.merge(&b.svc);
        a.bytes += b.bytes;
    }
}

fn op_interval(acc: &OpAcc, secs: f64) -> OpInterval {
    OpInterval::from_hist(&acc.hist, acc.bytes, secs)
}

fn op_summary(acc: &OpAcc, secs: f64, percentiles: &[f64], rated: bool) -> OpSummary {
    let per_s = |v: f64| if secs > 0.0 { v / secs } else { 0.0 };
    OpSummary {
        count: acc.hist.count(),
        bytes: acc.bytes,
        iops: per_s(acc.hist.count() as f64),
        bytes_per_s: per_s(acc.bytes as f64),
        lat_ns: LatStats::from_hist(&acc.hist, percentiles),
        service_lat_ns: rated.then(|| LatStats::from_hist(&acc.svc, percentiles)),
        histogram: acc.hist.to_data(),
        service_histogram: rated.then(|| acc.svc.to_data()),
    }
}

/// Assembles the workers' per-interval snapshots into intervals, in order: interval k is
/// complete once every worker has sent its snapshot k or finished. Keeps the measured totals
/// (warmup excluded) and each worker's own figures.
struct Reporter {
    clock: Clock,
    pending: BTreeMap<u64, Pending>,
    /// Nominal end of interval k (the boundaries are the same for every worker).
    bounds: Vec<u64>,
    next_k: u64,
    high: Vec<Option<u64>>,
    done: Vec<bool>,
    total: [OpAcc; 3],
    per_thread: Vec<ThreadSummary>,
    calls: EngineCalls,
    engine: Option<String>,
    first_error: Option<BenchError>,
    last_end: u64,
    intervals: Vec<Interval>,
    /// Paths by engine file index (data files), or by thread (commit logs), for error
    /// messages.
    paths: Vec<PathBuf>,
    log_per_thread: bool,
}

impl Reporter {
    fn new(clock: Clock, threads: usize, paths: Vec<PathBuf>, log_per_thread: bool) -> Self {
        Reporter {
            clock,
            pending: BTreeMap::new(),
            bounds: vec![clock.next_boundary(0)],
            next_k: 0,
            high: vec![None; threads],
            done: vec![false; threads],
            total: Default::default(),
            per_thread: (0..threads as u32)
                .map(|thread| ThreadSummary {
                    thread,
                    ..Default::default()
                })
                .collect(),
            calls: EngineCalls::default(),
            engine: None,
            first_error: None,
            last_end: 0,
            intervals: Vec::new(),
            paths,
            log_per_thread,
        }
    }

    fn bound(&mut self, k: u64) -> u64 {
        while self.bounds.len() <= k as usize {
            let b = *self.bounds.last().expect("non-empty");
            self.bounds.push(self.clock.next_boundary(b));
        }
        self.bounds[k as usize]
    }

    fn is_warmup(&mut self, k: u64) -> bool {
        let w = self.clock.warmup_ns;
        w > 0 && self.bound(k) <= w
    }

    fn all_done(&self) -> bool {
        self.done.iter().all(|&d| d)
    }

    /// Takes one snapshot, then emits every interval it completes.
    fn accept(&mut self, snap: &Snapshot, on_interval: &mut dyn FnMut(&Interval)) {
        let t = snap.thread as usize;
        let p = self.pending.entry(snap.index).or_default();
        merge_ops(&mut p.ops, &snap.ops);
        p.end_ns = p.end_ns.max(snap.end_ns);
        if !self.is_warmup(snap.index) {
            let ts = &mut self.per_thread[t];
            ts.events += snap.ops[READ].hist.count() + snap.ops[WRITE].hist.count();
            ts.fsyncs += snap.ops[SYNC].hist.count();
            ts.busy_s += snap.busy_ns as f64 / 1e9;
        }
        self.high[t] = Some(snap.index);
        if snap.last {
            self.done[t] = true;
            self.calls.add(&snap.calls);
            if self.engine.is_none() {
                self.engine.clone_from(&snap.engine);
            }
            self.last_end = self.last_end.max(snap.end_ns);
            if let Some(e) = &snap.error {
                let msg = match snap.error_at {
                    Some((file, offset)) => {
                        // Commit mode: each worker's only file (index 0) is its own log.
                        let i = if self.log_per_thread {
                            snap.thread as usize
                        } else {
                            file as usize
                        };
                        let path = self
                            .paths
                            .get(i)
                            .map_or_else(|| format!("file {file}"), |p| p.display().to_string());
                        format!("{path}, offset {offset}: {e}")
                    }
                    None => e.clone(),
                };
                self.first_error.get_or_insert(BenchError::Worker {
                    thread: snap.thread,
                    msg,
                });
            }
        }
        while (0..self.done.len())
            .all(|t| self.done[t] || self.high[t].is_some_and(|h| h >= self.next_k))
        {
            if !self.emit(on_interval) {
                break;
            }
        }
    }

    /// Emits interval `next_k` if it is pending: hands it to `on_interval`, keeps it, and adds
    /// it to the totals unless it is warmup. False when there was nothing to emit.
    fn emit(&mut self, on_interval: &mut dyn FnMut(&Interval)) -> bool {
        let Some(p) = self.pending.remove(&self.next_k) else {
            return false;
        };
        let nominal_end = self.bound(self.next_k);
        let warmup = self.is_warmup(self.next_k);
        let start_ns = self.clock.interval_start(nominal_end);
        // The last interval may run past its boundary by the I/Os drained after the deadline.
        let end_ns = p.end_ns.max(start_ns);
        let secs = (end_ns - start_ns) as f64 / 1e9;
        let mut all = LatencyHistogram::new();
        for op in &p.ops {
            all.merge(&op.hist);
        }
        // A trailing partial interval in which nothing completed carries no information.
        let partial = end_ns != nominal_end;
        if all.count() > 0 || (secs > 0.0 && !partial) {
            let bytes = p.ops[READ].bytes + p.ops[WRITE].bytes;
            let iv = Interval {
                start_s: start_ns as f64 / 1e9,
                end_s: end_ns as f64 / 1e9,
                warmup,
                read: op_interval(&p.ops[READ], secs),
                write: op_interval(&p.ops[WRITE], secs),
                fsync: op_interval(&p.ops[SYNC], secs),
                total: OpInterval::from_hist(&all, bytes, secs),
                devices: Vec::new(),
                cpu: None,
                histograms: Some(IntervalHistograms::of(
                    &p.ops[READ].hist,
                    &p.ops[WRITE].hist,
                    &p.ops[SYNC].hist,
                )),
            };
            on_interval(&iv);
            self.intervals.push(iv);
        }
        if !warmup {
            merge_ops(&mut self.total, &p.ops);
        }
        self.next_k += 1;
        true
    }

    /// Emits every interval still pending, in order (all workers are gone).
    fn flush(&mut self, on_interval: &mut dyn FnMut(&Interval)) {
        while let Some(&k) = self.pending.keys().next() {
            self.next_k = k;
            self.emit(on_interval);
        }
    }
}

/// Ends the helper threads of a run when the reporter's scope is left.
struct EndGuard<'a> {
    workers_done: &'a AtomicBool,
    stop: &'a AtomicBool,
    gate: &'a StartGate,
}

impl Drop for EndGuard<'_> {
    fn drop(&mut self) {
        // Workers still at the start line (the run never started) end there.
        self.gate.release(false);
        self.workers_done
            .store(true, std::sync::atomic::Ordering::Release);
        if std::thread::panicking() {
            self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

/// A duration in nanoseconds, refused (naming its flag) when it does not fit in 64 bits.
fn nanos(d: std::time::Duration, flag: &str) -> Result<u64, BenchError> {
    u64::try_from(d.as_nanos()).map_err(|_| {
        BenchError::InvalidSpec(format!(
            "{flag} {}s is too long to time in nanoseconds: give a shorter duration",
            d.as_secs()
        ))
    })
}

/// What a run produced, before the caller adds the environment and warnings.
pub struct RunOutput {
    /// Intervals, in order.
    pub intervals: Vec<Interval>,
    /// The summary.
    pub summary: Summary,
    /// The first worker error, if any.
    pub error: Option<BenchError>,
    /// The open flags used.
    pub open_flags: Vec<String>,
    /// Filesystem type of the target.
    pub fs: String,
    /// When the run started (wall clock).
    pub started_at: std::time::SystemTime,
    /// The clock that timed the I/Os ([`crate::timer::Timer::describe`]).
    pub clock: String,
    /// How the engine was set up ([`crate::engines::Engine::describe`]; `None` when no worker
    /// got as far as setting one up).
    pub engine: Option<String>,
}

/// Runs the benchmark on an opened target with the engine `spec.engine` names. `on_interval`
/// sees each interval as soon as every worker has finished it. Returns what was measured even
/// when a worker failed or `stop` was set (the caller marks the result interrupted).
pub fn run(
    spec: &Spec,
    target: &Target,
    devices: &[String],
    stop: &AtomicBool,
    on_interval: &mut dyn FnMut(&Interval),
) -> Result<RunOutput, BenchError> {
    match spec.engine {
        EngineKind::Sync => run_with(
            spec,
            target,
            devices,
            stop,
            on_interval,
            &engines::sync::Factory,
        ),
        EngineKind::Uring => run_with(
            spec,
            target,
            devices,
            stop,
            on_interval,
            &engines::uring::Factory,
        ),
        EngineKind::Null => run_with(
            spec,
            target,
            devices,
            stop,
            on_interval,
            &engines::null::Factory,
        ),
    }
}

/// [`run`] with each worker's engine made by `engines` (tests pass a scripted engine).
/// `spec.engine` still decides which files are handed to the factory (none for `null`).
pub fn run_with<F: EngineFactory>(
    spec: &Spec,
    target: &Target,
    devices: &[String],
    stop: &AtomicBool,
    on_interval: &mut dyn FnMut(&Interval),
    engines: &F,
) -> Result<RunOutput, BenchError> {
    // The counter's calibration runs while the workers set up their engines.
    let calibration = Calibration::begin();
    probe_direct(spec, target)?;
    let threads = spec.threads as usize;
    let plans: Vec<Plan> = (0..spec.threads).map(|i| plan(spec, target, i)).collect();
    if spec.mode != Mode::Commit && !spec.mode.random() {
        let total = plans[0].file_blocks * target.file_count;
        if total < threads as u64 {
            return Err(BenchError::InvalidSpec(format!(
                "the file set has {total} blocks of {} bytes, fewer than --threads {}: use a bigger --file-total-size or fewer threads",
                spec.block_size_bytes, spec.threads
            )));
        }
    }
    let warmup_ns = nanos(spec.warmup_s, "--warmup")?;
    let interval_ns = nanos(spec.report_interval_s, "--report-interval")?.max(1);
    let deadline_ns = match spec.time_s {
        Some(t) => Some(warmup_ns.checked_add(nanos(t, "--time")?).ok_or_else(|| {
            BenchError::InvalidSpec(
                "--warmup plus --time is too long to time in nanoseconds: shorten them".into(),
            )
        })?),
        None => None,
    };
    let (tx, rx) = mpsc::channel::<Box<Snapshot>>();
    let (recycle_tx, recycle_rx): (Vec<_>, Vec<_>) = (0..threads)
        .map(|_| mpsc::channel::<Box<Snapshot>>())
        .unzip();
    let gate = StartGate::default();
    let start: OnceLock<Clock> = OnceLock::new();
    let io_before = env::proc_self_io();
    let started_at = std::time::SystemTime::now();

    let samples = std::sync::Mutex::new(Samples::new(devices.to_vec()));
    let workers_done = AtomicBool::new(false);

    let rep = std::thread::scope(|s| {
        // However this closure ends, even by a panic, the sampler is told to stop (and, on a
        // panic, the workers too): the scope waits for every thread it started.
        let _end = EndGuard {
            workers_done: &workers_done,
            stop,
            gate: &gate,
        };
        for ((i, p), recycle) in plans.iter().enumerate().zip(recycle_rx) {
            let fds: Vec<RawFd> = if spec.engine == EngineKind::Null {
                Vec::new()
            } else if spec.mode == Mode::Commit {
                vec![target.logs[i].as_raw_fd()]
            } else {
                target.files.iter().map(|f| f.as_raw_fd()).collect()
            };
            let tx = tx.clone();
            let shared = Shared {
                spec,
                engines,
                gate: &gate,
                start: &start,
                stop,
                fs: &target.fs,
            };
            let spawned = std::thread::Builder::new()
                .name(format!("dbio-worker-{i}"))
                .spawn_scoped(s, move || run_worker(&shared, p, fds, &tx, &recycle));
            if let Err(e) = spawned {
                // The workers already started are told to end; the scope waits for them.
                gate.release(false);
                return Err(BenchError::ThreadStart {
                    what: format!("worker thread {} of {threads}", i + 1),
                    source: e,
                });
            }
        }
        drop(tx);
        gate.wait_ready(threads);
        let clock = Clock {
            timer: calibration.finish(),
            warmup_ns,
            interval_ns,
            deadline_ns,
        };
        start.set(clock).expect("clock set once");
        // The sampler: /proc/diskstats (of the devices under the target) and /proc/stat at the
        // start, at every boundary and at the end.
        let (samples, workers_done) = (&samples, &workers_done);
        {
            // The first sample is taken here, before the workers are let go: taken by the
            // sampler thread, it could come after the first I/Os on a busy machine, and the
            // device would then seem to have done fewer requests than dbio.
            samples.lock().expect("samples lock").sample(clock.now_ns());
            let spawned = std::thread::Builder::new()
                .name("dbio-sampler".into())
                .spawn_scoped(s, move || {
                    let take = || {
                        let t = clock.now_ns();
                        samples.lock().expect("samples lock").sample(t);
                    };
                    let mut b = clock.next_boundary(0);
                    while !workers_done.load(std::sync::atomic::Ordering::Acquire) {
                        let now = clock.now_ns();
                        if now >= b {
                            take();
                            b = clock.next_boundary(b);
                            continue;
                        }
                        std::thread::sleep(std::time::Duration::from_nanos(
                            (b - now).min(10_000_000),
                        ));
                    }
                    take();
                });
            if let Err(e) = spawned {
                gate.release(false);
                return Err(BenchError::ThreadStart {
                    what: "the /proc/diskstats sampler thread".into(),
                    source: e,
                });
            }
        }
        gate.release(true);

        // Reporter: intervals complete when every worker has passed them or finished.
        let mut rep = Reporter::new(
            clock,
            threads,
            target.paths.clone(),
            spec.mode == Mode::Commit,
        );
        while let Ok(snap) = rx.recv() {
            rep.accept(&snap, on_interval);
            let _ = recycle_tx[snap.thread as usize].send(snap);
            if rep.all_done() {
                break;
            }
        }
        // Every worker has finished (or is gone): stop the sampler, emit what is left.
        workers_done.store(true, std::sync::atomic::Ordering::Release);
        rep.flush(on_interval);
        Ok(rep)
    })?;
    let clock = *start.get().expect("clock was set");
    let samples = samples.into_inner().expect("samples lock");
    let started = Started {
        clock,
        io_before,
        started_at,
    };
    Ok(summarise(spec, target, rep, samples, started))
}

/// What [`run_with`] noted when the run began, for [`summarise`].
struct Started {
    clock: Clock,
    io_before: Option<ProcessIo>,
    started_at: std::time::SystemTime,
}

/// The run's output from the reporter's totals and the device samples: device figures next to
/// each interval, the summary, the cross-check with the device side.
fn summarise(
    spec: &Spec,
    target: &Target,
    rep: Reporter,
    samples: Samples,
    started: Started,
) -> RunOutput {
    let Started {
        clock,
        io_before,
        started_at,
    } = started;
    let rated = spec.rate_iops.is_some();
    let Reporter {
        mut intervals,
        total,
        per_thread,
        calls,
        engine,
        first_error,
        last_end,
        ..
    } = rep;
    // Device-side figures next to each interval, and the cross-check over the measured run.
    for iv in &mut intervals {
        let (from, to) = (
            (iv.start_s * 1e9).round() as u64,
            (iv.end_s * 1e9).round() as u64,
        );
        iv.devices = samples.interval(from, to);
        iv.cpu = samples.cpu_interval(from, to);
    }
    // Every operation dbio waits on, syncs included (the device side counts its flushes):
    // in commit mode a thread spends much of its time in fdatasync.
    let app_ios = total.iter().map(|o| o.hist.count()).sum();
    let lat_sum: u128 = [READ, WRITE, SYNC]
        .iter()
        .map(|&i| {
            if rated {
                total[i].svc.sum()
            } else {
                total[i].hist.sum()
            }
        })
        .sum();
    let measured_ns = last_end.saturating_sub(clock.warmup_ns);
    let secs = measured_ns as f64 / 1e9;
    let device_check = (secs > 0.0)
        .then(|| {
            samples.check(
                clock.warmup_ns,
                last_end,
                app_ios,
                lat_sum as f64 / 1e9 / secs,
            )
        })
        .flatten();
    let ops: Vec<OpSummary> = total
        .iter()
        .map(|a| op_summary(a, secs, &spec.percentiles, rated))
        .collect();
    let count: u64 = ops.iter().map(|o| o.count).sum();
    let bytes = ops[READ].bytes + ops[WRITE].bytes;
    let per_s = |v: f64| if secs > 0.0 { v / secs } else { 0.0 };
    let process_io = match (io_before, env::proc_self_io()) {
        (Some(b), Some(a)) => Some(env::io_delta(&b, &a)),
        _ => None,
    };
    let mut ops = ops.into_iter();
    let summary = Summary {
        measured_s: secs,
        total_s: last_end as f64 / 1e9,
        read: ops.next().expect("three ops"),
        write: ops.next().expect("three ops"),
        fsync: ops.next().expect("three ops"),
        total: TotalSummary {
            count,
            iops: per_s(count as f64),
            bytes_per_s: per_s(bytes as f64),
        },
        fairness: Fairness::of(&per_thread),
        threads: per_thread,
        engine_calls: calls,
        process_io,
        device_check,
    };
    RunOutput {
        intervals,
        summary,
        error: first_error,
        open_flags: target.open_flags.clone(),
        fs: target.fs.clone(),
        started_at,
        clock: clock.timer.describe(),
        engine,
    }
}

#[cfg(test)]
mod tests;
