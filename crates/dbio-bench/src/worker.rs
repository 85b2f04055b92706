//! One worker thread: generates its I/Os (its own RNG, no shared state), drives its engine,
//! times every I/O in nanoseconds into its own histograms, and hands a snapshot of each report
//! interval to the reporter through a channel. Nothing on the per-I/O path locks or allocates.

use crate::dist::BlockPicker;
use crate::engines::{Completion, Engine, Io, Op, Queued};
use crate::rng::Rng;
use crate::timer::Timer;
use dbio_schema::bench::{EngineCalls, Mode};
use dbio_schema::LatencyHistogram;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};

/// Per-operation accumulators of one interval.
#[derive(Clone, Debug, Default)]
pub struct OpAcc {
    /// Latency from submission (or, with a rate, from the intended start) to completion.
    pub hist: LatencyHistogram,
    /// With a rate only: latency from the actual submission.
    pub svc: LatencyHistogram,
    /// Bytes moved.
    pub bytes: u64,
}

/// Index of reads, writes and syncs in [`Snapshot::ops`].
pub const READ: usize = 0;
/// See [`READ`].
pub const WRITE: usize = 1;
/// See [`READ`].
pub const SYNC: usize = 2;

/// What one worker did in one report interval.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// Worker index.
    pub thread: u32,
    /// Interval index.
    pub index: u64,
    /// End of the interval (ns since the run started): the boundary, or the worker's last
    /// completion for its final snapshot.
    pub end_ns: u64,
    /// The worker's final snapshot.
    pub last: bool,
    /// Reads, writes, syncs.
    pub ops: [OpAcc; 3],
    /// Sum of latencies from submission, all operations (ns).
    pub busy_ns: u64,
    /// Engine calls over the whole run (final snapshot only).
    pub calls: EngineCalls,
    /// The error that stopped this worker (final snapshot only).
    pub error: Option<String>,
    /// Where that error happened, when it was an I/O: engine file index and byte offset
    /// (the reporter turns the index into the file's path).
    pub error_at: Option<(u32, u64)>,
    /// How the worker's engine was set up (final snapshot only).
    pub engine: Option<String>,
}

impl Snapshot {
    fn reset(&mut self, thread: u32, index: u64) {
        self.thread = thread;
        self.index = index;
        self.end_ns = 0;
        self.last = false;
        for op in &mut self.ops {
            op.hist.reset();
            op.svc.reset();
            op.bytes = 0;
        }
        self.busy_ns = 0;
        self.calls = EngineCalls::default();
        self.error = None;
        self.error_at = None;
        self.engine = None;
    }
}

/// The run's clock: start, warmup, report interval boundaries and deadline, all in ns since
/// the start. The first boundary after the warmup is the warmup's end, so no interval mixes
/// warmup and measured I/O.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    /// Reads 0 when the run started.
    pub timer: Timer,
    /// Warmup length (ns).
    pub warmup_ns: u64,
    /// Report interval (ns, > 0).
    pub interval_ns: u64,
    /// When workers stop (ns), if time-limited.
    pub deadline_ns: Option<u64>,
}

impl Clock {
    /// Nanoseconds since the start.
    #[inline(always)]
    pub fn now_ns(&self) -> u64 {
        self.timer.now_ns()
    }
    /// The first interval boundary strictly after `t`.
    pub fn next_boundary(&self, t: u64) -> u64 {
        let i = self.interval_ns;
        if t < self.warmup_ns {
            ((t / i + 1) * i).min(self.warmup_ns)
        } else {
            self.warmup_ns + ((t - self.warmup_ns) / i + 1) * i
        }
    }
    /// Start of the interval that ends at boundary `end` (for an interval cut short, pass its
    /// nominal boundary).
    pub fn interval_start(&self, end: u64) -> u64 {
        let i = self.interval_ns;
        if end <= self.warmup_ns {
            (end - 1) / i * i
        } else {
            let rel = end - self.warmup_ns;
            self.warmup_ns + (rel - 1) / i * i
        }
    }
}

/// Everything one worker needs to generate its I/Os.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Worker index.
    pub id: u32,
    /// The workload.
    pub mode: Mode,
    /// Bytes per I/O.
    pub block: u64,
    /// I/Os in flight.
    pub iodepth: u32,
    /// Usable blocks per data file.
    pub file_blocks: u64,
    /// Number of data files (engine file indices `0..files`).
    pub files: u32,
    /// Global block range this worker walks in sequential modes.
    pub seq_range: (u64, u64),
    /// Random block choice.
    pub picker: BlockPicker,
    /// Probability that an I/O of `rndrw` is a read.
    pub read_prob: f64,
    /// Writes per file by this worker between syncs of that file (0: none).
    pub fsync_every: u64,
    /// Sync every written file at the end.
    pub fsync_end: bool,
    /// Bytes added to every offset.
    pub misalign: u64,
    /// Reads + writes this worker does at most.
    pub events: Option<u64>,
    /// Open loop: ns between intended starts.
    pub rate_period_ns: Option<f64>,
    /// RNG seed.
    pub seed: u64,
    /// Commit mode: engine file index of this worker's log, and its capacity in blocks.
    pub log: Option<(u32, u64)>,
    /// Commit mode: sync after each record (false when O_DSYNC/O_SYNC make writes durable).
    pub sync_each_commit: bool,
    /// Async engines: submit as soon as this many I/Os are queued (1: each at once; iodepth:
    /// one submission per refill).
    pub submit_batch: u32,
    /// Async engines: completions taken per reap, at most (1: each finished I/O is replaced
    /// before the next completion is looked at).
    pub reap_batch: u32,
}

#[derive(Clone, Copy, Default)]
struct Slot {
    op: Option<Op>,
    submit_ns: u64,
    intended_ns: u64,
    bytes: u32,
    file: u32,
    offset: u64,
}

struct State<'a> {
    plan: &'a Plan,
    clock: Clock,
    rng: Rng,
    tx: &'a Sender<Box<Snapshot>>,
    recycle: &'a Receiver<Box<Snapshot>>,
    cur: Box<Snapshot>,
    index: u64,
    boundary: u64,
    slots: Vec<Slot>,
    free: Vec<u32>,
    in_flight: usize,
    issued: u64,
    seq_pos: u64,
    log_pos: u64,
    since_sync: Vec<u64>,
    written: Vec<bool>,
    sync_due: Vec<u32>,
    next_intended: f64,
    write_seq: u64,
    rated: bool,
    error: Option<String>,
    error_at: Option<(u32, u64)>,
    /// When the last I/O completed (ns).
    last_done_ns: u64,
    /// An I/O the engine refused (`Busy`) and its intended start: queued again first.
    retry: Option<(Io, u64)>,
}

impl<'a> State<'a> {
    /// True once the deadline has passed and, in an open loop, every start intended before it
    /// has been issued: a start the pacer fell behind on (its thread was preempted across the
    /// deadline) is still owed to the client that wanted it, and its lateness is measured.
    #[inline]
    fn past_deadline(&self, now: u64) -> bool {
        self.clock
            .deadline_ns
            .is_some_and(|d| now >= d && !(self.rated && self.next_intended < d as f64))
    }

    fn fresh(&self, index: u64) -> Box<Snapshot> {
        let mut s = self.recycle.try_recv().unwrap_or_default();
        s.reset(self.plan.id, index);
        s
    }

    /// Closes every interval whose boundary is at or before `now`. The interval that holds
    /// the deadline is never closed here: I/Os drained after the deadline (and the final
    /// syncs) belong to it, and the final snapshot ends it.
    #[inline(always)]
    fn tick(&mut self, now: u64) {
        // Checked on every I/O; a boundary is passed once per interval.
        if now >= self.boundary {
            self.pass_boundaries(now);
        }
    }

    #[cold]
    #[inline(never)]
    fn pass_boundaries(&mut self, now: u64) {
        while now >= self.boundary && self.clock.deadline_ns.is_none_or(|d| self.boundary < d) {
            let next = self.fresh(self.index + 1);
            let mut done = std::mem::replace(&mut self.cur, next);
            done.end_ns = self.boundary;
            // The reporter outlives the workers; a send error means it is gone and the
            // run is ending anyway.
            let _ = self.tx.send(done);
            self.index += 1;
            self.boundary = self.clock.next_boundary(self.boundary);
        }
    }

    fn events_left(&self) -> bool {
        self.plan.events.is_none_or(|e| self.issued < e)
    }

    /// The next read or write, or `None` when this worker has issued all its events.
    #[inline]
    fn next_io(&mut self, slot: u32) -> Option<Io> {
        if !self.events_left() {
            return None;
        }
        let p = self.plan;
        let (op, file, offset) = if let Some((log, cap)) = p.log {
            let off = self.log_pos * p.block;
            self.log_pos = (self.log_pos + 1) % cap;
            (Op::Write, log, off)
        } else {
            let op = match p.mode {
                Mode::Seqrd | Mode::Rndrd => Op::Read,
                Mode::Seqwr | Mode::Seqrewr | Mode::Rndwr | Mode::Commit => Op::Write,
                Mode::Rndrw => {
                    if self.rng.unit() < p.read_prob {
                        Op::Read
                    } else {
                        Op::Write
                    }
                }
            };
            let g = if p.mode.random() {
                p.picker.pick(&mut self.rng)
            } else {
                let (lo, hi) = p.seq_range;
                let g = lo + self.seq_pos;
                self.seq_pos = (self.seq_pos + 1) % (hi - lo);
                g
            };
            let file = (g / p.file_blocks) as u32;
            (op, file, (g % p.file_blocks) * p.block + p.misalign)
        };
        self.issued += 1;
        Some(Io {
            op,
            file,
            offset,
            len: p.block as u32,
            slot,
        })
    }

    #[inline]
    fn complete(&mut self, c: Completion, end_ns: u64) {
        self.last_done_ns = self.last_done_ns.max(end_ns);
        let s = self.slots[c.slot as usize];
        self.slots[c.slot as usize].op = None;
        self.free.push(c.slot);
        self.in_flight -= 1;
        let op = s.op.expect("completion for an idle slot");
        let name = match op {
            Op::Read => "read",
            Op::Write => "write",
            Op::Sync => "sync",
        };
        if c.result < 0 {
            let e = std::io::Error::from_raw_os_error((-c.result) as i32);
            if self.error.is_none() {
                self.error = Some(if op == Op::Sync {
                    format!("{name} failed: {e}")
                } else {
                    format!("{name} of {} bytes failed: {e}", s.bytes)
                });
                self.error_at = Some((s.file, s.offset));
            }
            return;
        }
        if op != Op::Sync && c.result != s.bytes as i64 {
            if self.error.is_none() {
                self.error = Some(format!("short {name}: {} of {} bytes", c.result, s.bytes));
                self.error_at = Some((s.file, s.offset));
            }
            return;
        }
        let svc = end_ns.saturating_sub(s.submit_ns);
        let idx = match op {
            Op::Read => READ,
            Op::Write => WRITE,
            Op::Sync => SYNC,
        };
        let acc = &mut self.cur.ops[idx];
        if self.rated {
            acc.hist.record(end_ns.saturating_sub(s.intended_ns));
            acc.svc.record(svc);
        } else {
            acc.hist.record(svc);
        }
        acc.bytes += c.result as u64;
        self.cur.busy_ns += svc;
    }

    /// The engine refused `io` (Busy): gives its slot back and keeps the I/O to queue again
    /// once something has been reaped, as fio requeues a busy io_u. With nothing in flight
    /// nothing can make room (retrying would spin forever): that ends the worker.
    #[cold]
    #[inline(never)]
    fn refused(&mut self, io: Io, slot: u32) {
        self.free.push(slot);
        self.in_flight -= 1;
        self.slots[slot as usize].op = None;
        if self.in_flight == 0 {
            if self.error.is_none() {
                self.error = Some(
                    "the engine refused an I/O as busy with no I/O in flight, \
                     so nothing could make room (an engine defect)"
                        .into(),
                );
                self.error_at = Some((io.file, io.offset));
            }
        } else {
            self.retry = Some((io, self.slots[slot as usize].intended_ns));
            if io.op != Op::Sync {
                self.issued -= 1; // issued again when it is queued again
            }
        }
    }

    /// The I/O the engine refused (Busy), again, in `slot` (the one free now). Inlined: as an
    /// opaque call in the fill loop, even never taken, it cost about 6 ns per I/O (null engine,
    /// iodepth 32), the state's fields no longer kept in registers across it.
    #[inline]
    fn take_retry(&mut self, slot: u32) -> Io {
        let (io, intended) = self.retry.take().expect("a refused I/O is waiting");
        self.slots[slot as usize].intended_ns = intended;
        if io.op != Op::Sync {
            self.issued += 1;
        }
        Io { slot, ..io }
    }

    /// After a write completes to `file`: count it and schedule a sync when due.
    fn note_write(&mut self, file: u32) {
        let f = file as usize;
        self.written[f] = true;
        let every = if self.plan.log.is_some() {
            u64::from(self.plan.sync_each_commit)
        } else {
            self.plan.fsync_every
        };
        if every > 0 {
            self.since_sync[f] += 1;
            if self.since_sync[f] >= every {
                self.since_sync[f] = 0;
                self.sync_due.push(file);
            }
        }
    }
}

/// Open-loop pacing: waits until an intended start without arriving late. A sleep ends late
/// by the timer slack (50 us by default: the kernel may defer a wakeup that long to batch it
/// with others) plus the time the scheduler takes to run the woken thread; every such
/// microsecond would count in the latency from the intended start, which is meant to show the
/// storage, not dbio. So the worker sets its timer slack to 1 ns, sleeps until a margin before
/// the start, and spins (reading the clock) through the margin. The margin follows how late
/// recent sleeps woke up: it jumps to a late wakeup at once and comes down by an eighth of the
/// difference per sleep, between [`Pacer::MIN_MARGIN_NS`] and a quarter of the period between
/// starts, but at least [`Pacer::SPIN_NS`] and at most [`Pacer::MAX_MARGIN_NS`]: spinning costs
/// CPU, and a wakeup later than that is a preemption that no margin fixes at a bearable cost.
/// At a high rate (starts 60 us apart or less) the worker never sleeps: a sleep on this kind of
/// machine ends tens of microseconds late.
pub(crate) struct Pacer {
    margin_ns: u64,
    cap_ns: u64,
}

impl Pacer {
    /// The smallest margin: the cost of returning from the sleep itself.
    pub(crate) const MIN_MARGIN_NS: u64 = 5_000;
    /// The largest margin (1 ms of spinning per start at most).
    pub(crate) const MAX_MARGIN_NS: u64 = 1_000_000;
    /// The margin may always grow this large: waits this short are spun through, not slept.
    pub(crate) const SPIN_NS: u64 = 60_000;

    /// A pacer for starts `period_ns` apart; sets the calling thread's timer slack.
    pub(crate) fn new(period_ns: f64) -> Self {
        // A failure (an old kernel) leaves the default 50 us, which the margin then absorbs.
        dbio_sys::os::set_timer_slack_ns(1);
        let cap_ns = ((period_ns / 4.0) as u64).clamp(Self::SPIN_NS, Self::MAX_MARGIN_NS);
        Pacer {
            margin_ns: 50_000.min(cap_ns),
            cap_ns,
        }
    }

    /// How long before a start the pacer stops sleeping.
    pub(crate) fn margin_ns(&self) -> u64 {
        self.margin_ns
    }

    /// Learns from a sleep that should have ended at `due` and ended at `woke`.
    fn learn(&mut self, due: u64, woke: u64) {
        let late = woke
            .saturating_sub(due)
            .clamp(Self::MIN_MARGIN_NS, self.cap_ns);
        self.margin_ns = if late >= self.margin_ns {
            late
        } else {
            self.margin_ns - (self.margin_ns - late) / 8
        };
    }

    /// Waits until `target` (ns on `clock`); returns the time it read last (>= `target`).
    pub(crate) fn wait_until(&mut self, clock: &Clock, target: u64) -> u64 {
        loop {
            let now = clock.now_ns();
            if now >= target {
                return now;
            }
            let left = target - now;
            if left > self.margin_ns {
                let d = left - self.margin_ns;
                std::thread::sleep(std::time::Duration::from_nanos(d));
                self.learn(now + d, clock.now_ns());
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

/// Sets the submission time of queued slots (and, without a rate, their intended start).
fn stamp(st: &mut State<'_>, slots: &[u32], t: u64) {
    for &s in slots {
        st.slots[s as usize].submit_ns = t;
        if !st.rated {
            st.slots[s as usize].intended_ns = t;
        }
    }
}

/// Runs one worker to the end: until the deadline, its share of events, or `stop`.
/// Sends one snapshot per interval boundary crossed and a final one (`last`).
pub fn run<E: Engine>(
    plan: &Plan,
    clock: Clock,
    engine: &mut E,
    tx: &Sender<Box<Snapshot>>,
    recycle: &Receiver<Box<Snapshot>>,
    stop: &AtomicBool,
) {
    let depth = plan.iodepth.max(1) as usize;
    let nfiles = plan.files as usize + plan.log.map_or(0, |(l, _)| l as usize + 1);
    let mut st = State {
        plan,
        clock,
        rng: Rng::new(plan.seed, plan.id as u64),
        tx,
        recycle,
        cur: Box::default(),
        index: 0,
        boundary: clock.next_boundary(0),
        slots: vec![Slot::default(); depth],
        free: (0..depth as u32).rev().collect(),
        in_flight: 0,
        issued: 0,
        seq_pos: 0,
        log_pos: 0,
        since_sync: vec![0; nfiles.max(plan.files as usize)],
        written: vec![false; nfiles.max(plan.files as usize)],
        sync_due: Vec::with_capacity(nfiles),
        next_intended: 0.0,
        write_seq: 0,
        rated: plan.rate_period_ns.is_some(),
        error: None,
        error_at: None,
        last_done_ns: 0,
        retry: None,
    };
    st.cur = st.fresh(0);
    // Every write carries a unique stamp (worker, sequence, offset) in its first 24 bytes:
    // no two written blocks are alike (nothing to dedupe), and tests can find them on disk.
    let mut fill_rng = Rng::new(plan.seed ^ 0xA5A5, plan.id as u64);
    for s in 0..depth as u32 {
        fill_rng.fill(engine.buffer(s));
    }
    let mut comps: Vec<Completion> = Vec::with_capacity(depth * 2);
    let mut batch: Vec<u32> = Vec::with_capacity(depth);
    let mut now = clock.now_ns();
    // The open loop's schedule starts when the run does, not when this thread first gets a
    // CPU: a late start is caught up (and shows in the latency from the intended start)
    // instead of costing the run its first starts.
    st.next_intended = 0.0;
    let inline = engine.completes_inline();
    let submit_batch = (plan.submit_batch.max(1) as usize).min(depth);
    let reap_batch = (plan.reap_batch.max(1) as usize).min(depth);
    let mut pacer = plan.rate_period_ns.map(Pacer::new);

    'run: loop {
        st.tick(now);
        let stopping = stop.load(Ordering::Relaxed) || st.past_deadline(now) || st.error.is_some();
        // Fill free slots.
        batch.clear();
        let mut submitted = 0;
        // Once stopping, only syncs that are due still go out: a record written before the
        // deadline is made durable, as its writer would.
        while !st.free.is_empty() && (!stopping || !st.sync_due.is_empty()) {
            let slot = *st.free.last().expect("checked non-empty");
            let io = if st.retry.is_some() {
                st.take_retry(slot)
            } else if let Some(&file) = st.sync_due.first() {
                if st.in_flight > 0 || !batch.is_empty() {
                    break; // a sync waits until every write before it has completed
                }
                st.sync_due.remove(0);
                Io {
                    op: Op::Sync,
                    file,
                    offset: 0,
                    len: 0,
                    slot,
                }
            } else {
                if let Some(period) = plan.rate_period_ns {
                    if st.next_intended > now as f64 {
                        break;
                    }
                    if !st.events_left() {
                        break;
                    }
                    st.slots[slot as usize].intended_ns = st.next_intended as u64;
                    st.next_intended += period;
                }
                match st.next_io(slot) {
                    Some(io) => io,
                    None => break,
                }
            };
            if io.op == Op::Write {
                st.write_seq += 1;
                let b = engine.buffer(slot);
                b[..8].copy_from_slice(&(plan.id as u64).to_le_bytes());
                b[8..16].copy_from_slice(&st.write_seq.to_le_bytes());
                b[16..24].copy_from_slice(&io.offset.to_le_bytes());
            }
            st.free.pop();
            st.in_flight += 1;
            let s = &mut st.slots[slot as usize];
            s.op = Some(io.op);
            s.bytes = io.len;
            s.file = io.file;
            s.offset = io.offset;
            if inline {
                // Sync engines: the clock is read right before and right after the call.
                let t0 = clock.now_ns();
                s.submit_ns = t0;
                if !st.rated {
                    s.intended_ns = t0;
                }
            }
            match engine.queue(&io) {
                Queued::Completed(result) => {
                    now = clock.now_ns();
                    // Boundaries passed first: an I/O counts in the interval it completed in.
                    st.tick(now);
                    st.complete(Completion { slot, result }, now);
                    if io.op == Op::Write && result >= 0 {
                        st.note_write(io.file);
                    }
                    if st.sync_due.is_empty()
                        && (st.error.is_some()
                            || stop.load(Ordering::Relaxed)
                            || st.past_deadline(now))
                    {
                        break;
                    }
                }
                Queued::Queued => {
                    batch.push(slot);
                    if batch.len() - submitted >= submit_batch {
                        // A full batch goes out now, not when every free slot is filled.
                        stamp(&mut st, &batch[submitted..], clock.now_ns());
                        submitted = batch.len();
                        if let Err(e) = engine.commit() {
                            st.error.get_or_insert_with(|| format!("io_uring: {e}"));
                            break;
                        }
                    }
                }
                Queued::Busy => {
                    // The engine has no room (our engines never say so: the slots match
                    // their depth): queued again once something has been reaped.
                    st.refused(io, slot);
                    break;
                }
            }
        }
        // Submission time of what is left of the batch: just before the system call (in the
        // reap below) that submits it.
        if submitted < batch.len() {
            stamp(&mut st, &batch[submitted..], clock.now_ns());
        }
        if st.in_flight > 0 {
            comps.clear();
            let r = if st.rated && st.sync_due.is_empty() && !st.free.is_empty() && !stopping {
                // Wake before the next intended start by the pacer's margin: a wait in the
                // kernel ends late by as much as a sleep does. Within the margin the waits
                // are the 1 us minimum, a poll.
                let margin = pacer.as_ref().map_or(0, Pacer::margin_ns) as f64;
                let wait = (st.next_intended - margin - clock.now_ns() as f64).max(0.0) as u64;
                engine.reap_timeout(
                    wait.min(st.boundary.saturating_sub(now)).max(1000),
                    &mut comps,
                )
            } else {
                engine.reap(1, reap_batch, &mut comps)
            };
            if let Err(e) = r {
                st.error.get_or_insert_with(|| format!("io_uring: {e}"));
                break 'run;
            }
            now = clock.now_ns();
            st.tick(now);
            for &c in &comps {
                let s = st.slots[c.slot as usize];
                st.complete(c, now);
                if s.op == Some(Op::Write) && c.result >= 0 {
                    st.note_write(s.file);
                }
            }
            continue;
        }
        if st.sync_due.is_empty() && (stopping || !st.events_left()) {
            break;
        }
        if st.error.is_some() {
            break;
        }
        now = clock.now_ns();
        if let Some(p) = pacer.as_mut() {
            // Idle until the next intended start (or the next boundary, to report on time).
            let target = (st.next_intended as u64).min(st.boundary);
            now = p.wait_until(&clock, target);
        }
    }
    // Sync every written file at the end (timed: these are fsyncs too).
    if plan.fsync_end && st.error.is_none() {
        for f in 0..st.written.len() {
            if !st.written[f] {
                continue;
            }
            let slot = st.free.pop().expect("all slots are free at the end");
            st.in_flight += 1;
            let io = Io {
                op: Op::Sync,
                file: f as u32,
                offset: 0,
                len: 0,
                slot,
            };
            let t0 = clock.now_ns();
            st.slots[slot as usize] = Slot {
                op: Some(Op::Sync),
                submit_ns: t0,
                intended_ns: t0,
                bytes: 0,
                file: f as u32,
                offset: 0,
            };
            comps.clear();
            let result = match engine.queue(&io) {
                Queued::Completed(r) => r,
                _ => {
                    if let Err(e) = engine.reap(1, 1, &mut comps) {
                        st.error.get_or_insert_with(|| format!("io_uring: {e}"));
                    }
                    comps.first().map_or(-(libc::EIO as i64), |c| c.result)
                }
            };
            now = clock.now_ns();
            st.tick(now);
            st.complete(Completion { slot, result }, now);
        }
    }
    now = clock.now_ns();
    st.tick(now);
    let mut last = std::mem::take(&mut st.cur);
    // The run ends at this worker's last completion, or, if it was idle across the deadline,
    // at the deadline: a worker preempted there did no work after it. In an open loop, the
    // last start covers the time until the next intended one (at a low rate, 3 starts 100 ms
    // apart cover 300 ms, whatever the deadline between 200 and 300 ms).
    last.end_ns = match clock.deadline_ns {
        Some(d) => {
            let covered = if st.rated {
                d.max(st.next_intended as u64)
            } else {
                d
            };
            st.last_done_ns.max(now.min(covered))
        }
        None => now,
    };
    last.last = true;
    last.calls = engine.calls();
    last.engine = Some(engine.describe());
    last.error = st.error.take();
    last.error_at = st.error_at.take();
    let _ = tx.send(last);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::BlockPicker;
    use crate::engines::null::NullEngine;
    use crate::timer::Timer;
    use dbio_schema::bench::Distribution;

    /// The null engine, except that every read of file 1 fails with EIO.
    struct FailFile1(NullEngine);

    impl Engine for FailFile1 {
        fn queue(&mut self, io: &Io) -> Queued {
            match (io.op, io.file) {
                (Op::Read, 1) => Queued::Completed(-(libc::EIO as i64)),
                _ => self.0.queue(io),
            }
        }
        fn commit(&mut self) -> std::io::Result<()> {
            self.0.commit()
        }
        fn reap(&mut self, a: usize, b: usize, o: &mut Vec<Completion>) -> std::io::Result<()> {
            self.0.reap(a, b, o)
        }
        fn reap_timeout(&mut self, t: u64, o: &mut Vec<Completion>) -> std::io::Result<()> {
            self.0.reap_timeout(t, o)
        }
        fn buffer(&mut self, slot: u32) -> &mut [u8] {
            self.0.buffer(slot)
        }
        fn calls(&self) -> EngineCalls {
            self.0.calls()
        }
        fn completes_inline(&self) -> bool {
            self.0.completes_inline()
        }
        fn describe(&self) -> String {
            "fails reads of file 1".into()
        }
    }

    #[test]
    fn a_failed_io_reports_its_file_and_offset() {
        let plan = Plan {
            id: 0,
            mode: Mode::Seqrd,
            block: 4096,
            iodepth: 1,
            file_blocks: 4,
            files: 2,
            seq_range: (0, 8),
            picker: BlockPicker::new(Distribution::Uniform, 8),
            read_prob: 1.0,
            fsync_every: 0,
            fsync_end: false,
            misalign: 512,
            events: Some(100),
            rate_period_ns: None,
            seed: 1,
            log: None,
            sync_each_commit: false,
            submit_batch: 1,
            reap_batch: 1,
        };
        let clock = Clock {
            timer: Timer::monotonic(),
            warmup_ns: 0,
            interval_ns: 1_000_000_000,
            deadline_ns: None,
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let (_recycle_tx, recycle) = std::sync::mpsc::channel();
        let mut engine = FailFile1(NullEngine::new(1, 4096));
        run(
            &plan,
            clock,
            &mut engine,
            &tx,
            &recycle,
            &AtomicBool::new(false),
        );
        drop(tx);
        let last = rx.iter().find(|s| s.last).expect("a final snapshot");
        // Blocks 0..4 are file 0; block 4 is the first of file 1, at offset 0 + misalign.
        assert_eq!(last.error_at, Some((1, 512)));
        let e = last.error.as_deref().unwrap();
        assert!(e.starts_with("read of 4096 bytes failed: "), "{e}");
        assert_eq!(e.matches("os error 5").count(), 1, "{e}");
    }

    /// The null engine, except that the `at`-th I/O takes `stall_ms` (a thread preempted
    /// across the deadline looks the same to the pacer).
    struct StallOnce {
        inner: NullEngine,
        n: u64,
        at: u64,
        stall_ms: u64,
    }

    impl Engine for StallOnce {
        fn queue(&mut self, io: &Io) -> Queued {
            self.n += 1;
            if self.n == self.at {
                std::thread::sleep(std::time::Duration::from_millis(self.stall_ms));
            }
            self.inner.queue(io)
        }
        fn commit(&mut self) -> std::io::Result<()> {
            self.inner.commit()
        }
        fn reap(&mut self, a: usize, b: usize, o: &mut Vec<Completion>) -> std::io::Result<()> {
            self.inner.reap(a, b, o)
        }
        fn reap_timeout(&mut self, t: u64, o: &mut Vec<Completion>) -> std::io::Result<()> {
            self.inner.reap_timeout(t, o)
        }
        fn buffer(&mut self, slot: u32) -> &mut [u8] {
            self.inner.buffer(slot)
        }
        fn calls(&self) -> EngineCalls {
            self.inner.calls()
        }
        fn completes_inline(&self) -> bool {
            self.inner.completes_inline()
        }
        fn describe(&self) -> String {
            "stalls once".into()
        }
    }

    /// An open loop at 1000 IOPS for 100 ms whose 91st I/O takes 30 ms: the 9 starts it fell
    /// behind on before the deadline are still issued (their clients arrived), late, and
    /// measured; the 10 starts after the deadline are not. Before, the worker stopped at the
    /// deadline and dropped them: 91 I/Os, and the stall's cost hidden.
    #[test]
    fn an_open_loop_issues_the_starts_it_owes_at_the_deadline() {
        let plan = Plan {
            id: 0,
            mode: Mode::Rndrd,
            block: 4096,
            iodepth: 1,
            file_blocks: 16,
            files: 1,
            seq_range: (0, 16),
            picker: BlockPicker::new(Distribution::Uniform, 16),
            read_prob: 1.0,
            fsync_every: 0,
            fsync_end: false,
            misalign: 0,
            events: None,
            rate_period_ns: Some(1e6),
            seed: 1,
            log: None,
            sync_each_commit: false,
            submit_batch: 1,
            reap_batch: 1,
        };
        let clock = Clock {
            timer: Timer::monotonic(),
            warmup_ns: 0,
            interval_ns: 1_000_000_000,
            deadline_ns: Some(100_000_000),
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let (_recycle_tx, recycle) = std::sync::mpsc::channel();
        let mut engine = StallOnce {
            inner: NullEngine::new(1, 4096),
            n: 0,
            at: 91,
            stall_ms: 30,
        };
        run(
            &plan,
            clock,
            &mut engine,
            &tx,
            &recycle,
            &AtomicBool::new(false),
        );
        drop(tx);
        let snaps: Vec<Box<Snapshot>> = rx.iter().collect();
        let reads: u64 = snaps.iter().map(|s| s.ops[READ].hist.count()).sum();
        assert_eq!(reads, 100, "starts intended at 0, 1, .. 99 ms");
        let last = snaps.iter().find(|s| s.last).expect("a final snapshot");
        assert!(
            last.end_ns >= 120_000_000,
            "the run ends with its last completion"
        );
        let mut lat = LatencyHistogram::new();
        for s in &snaps {
            lat.merge(&s.ops[READ].hist);
        }
        assert!(
            lat.max() >= 20_000_000,
            "the owed starts were late by the stall"
        );
    }
}
