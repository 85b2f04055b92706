//! Tests: an engine that does what a script says instead of I/O, on a virtual clock of its
//! own. Each queued I/O gets a [`Step`]: its result (full length, a short count, `-errno`)
//! and how long after its submission it completes, or `Busy`. Async completions come back in
//! order of completion time, so I/Os with different delays complete out of order.

use super::{AlignedBuffers, Completion, Engine, EngineFactory, EngineSetup, Io, Op, Queued};
use dbio_schema::bench::EngineCalls;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// What the script does with one queued I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// The I/O completes `after_ns` after its submission with `result` (`None`: the full
    /// length, 0 for a sync).
    Done { result: Option<i64>, after_ns: u64 },
    /// The engine refuses it for now.
    Busy,
}

impl Step {
    /// Completes in full after `after_ns`.
    pub(crate) fn ok(after_ns: u64) -> Step {
        Step::Done {
            result: None,
            after_ns,
        }
    }
    /// Completes with `result` (bytes or `-errno`) after `after_ns`.
    pub(crate) fn result(result: i64, after_ns: u64) -> Step {
        Step::Done {
            result: Some(result),
            after_ns,
        }
    }
}

/// The script: the I/O's sequence number among `queue` calls (0, 1, ...; a refused call
/// counts too) and the I/O.
pub(crate) type Script = Arc<dyn Fn(u64, &Io) -> Step + Send + Sync>;

/// A virtual clock for one test: never moves unless the engine or the test moves it.
pub(crate) fn virtual_clock() -> &'static AtomicU64 {
    Box::leak(Box::new(AtomicU64::new(0)))
}

/// The scripted engine.
pub(crate) struct Scripted {
    now: &'static AtomicU64,
    script: Script,
    bufs: AlignedBuffers,
    inline: bool,
    depth: usize,
    calls_made: u64,
    /// Queued, not yet committed: (sequence, delay, completion).
    queued: Vec<(u64, u64, Completion)>,
    /// Submitted: (completion time, sequence, completion).
    in_flight: Vec<(u64, u64, Completion)>,
    calls: EngineCalls,
    /// Every I/O the engine accepted, in queue order.
    pub(crate) accepted: Vec<Io>,
    /// Sequence numbers of the completions handed out by `reap`, in the order handed out.
    pub(crate) reaped: Vec<u64>,
}

impl Scripted {
    /// `inline`: completes each I/O inside `queue` (as `sync` does), advancing the clock by
    /// its delay; else queues, and `reap` advances the clock to the completions it waits for.
    pub(crate) fn new(
        now: &'static AtomicU64,
        iodepth: usize,
        block: usize,
        inline: bool,
        script: Script,
    ) -> Self {
        Scripted {
            now,
            script,
            bufs: AlignedBuffers::new(iodepth, block),
            inline,
            depth: iodepth,
            calls_made: 0,
            queued: Vec::new(),
            in_flight: Vec::new(),
            calls: EngineCalls::default(),
            accepted: Vec::new(),
            reaped: Vec::new(),
        }
    }

    fn now(&self) -> u64 {
        self.now.load(Ordering::Relaxed)
    }

    /// Hands out up to `max` completions due by now, earliest first.
    fn deliver(&mut self, max: usize, out: &mut Vec<Completion>) -> usize {
        let now = self.now();
        self.in_flight.sort_by_key(|&(at, seq, _)| (at, seq));
        let due = self.in_flight.iter().take_while(|e| e.0 <= now).count();
        let n = due.min(max);
        for (_, seq, c) in self.in_flight.drain(..n) {
            self.reaped.push(seq);
            out.push(c);
        }
        n
    }

    fn next_due(&self) -> Option<u64> {
        self.in_flight.iter().map(|e| e.0).min()
    }
}

impl Engine for Scripted {
    fn queue(&mut self, io: &Io) -> Queued {
        let seq = self.calls_made;
        self.calls_made += 1;
        let (result, after_ns) = match (self.script)(seq, io) {
            Step::Busy => return Queued::Busy,
            Step::Done { result, after_ns } => (result, after_ns),
        };
        if !self.inline && self.queued.len() + self.in_flight.len() >= self.depth {
            return Queued::Busy;
        }
        let full = if io.op == Op::Sync { 0 } else { io.len as i64 };
        let result = result.unwrap_or(full);
        match io.op {
            Op::Read => self.calls.reads += 1,
            Op::Write => self.calls.writes += 1,
            Op::Sync => self.calls.fsyncs += 1,
        }
        self.accepted.push(*io);
        if self.inline {
            self.calls.syscalls += 1;
            self.now.fetch_add(after_ns, Ordering::Relaxed);
            return Queued::Completed(result);
        }
        self.queued.push((
            seq,
            after_ns,
            Completion {
                slot: io.slot,
                result,
            },
        ));
        Queued::Queued
    }

    fn commit(&mut self) -> io::Result<()> {
        if self.queued.is_empty() {
            return Ok(());
        }
        self.calls.syscalls += 1;
        let now = self.now();
        for (seq, after, c) in self.queued.drain(..) {
            self.in_flight.push((now + after, seq, c));
        }
        Ok(())
    }

    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        self.commit()?;
        let mut got = self.deliver(max, out);
        while got < min {
            let Some(at) = self.next_due() else { break };
            // Waits (the virtual clock jumps) until the next completion is due.
            self.now.fetch_max(at, Ordering::Relaxed);
            got += self.deliver(max - got, out);
        }
        Ok(())
    }

    fn reap_timeout(&mut self, timeout_ns: u64, out: &mut Vec<Completion>) -> io::Result<()> {
        self.commit()?;
        if self.deliver(usize::MAX, out) > 0 {
            return Ok(());
        }
        if let Some(at) = self.next_due() {
            let limit = self.now() + timeout_ns;
            self.now.fetch_max(at.min(limit), Ordering::Relaxed);
            self.deliver(usize::MAX, out);
        }
        Ok(())
    }

    fn buffer(&mut self, slot: u32) -> &mut [u8] {
        self.bufs.slot(slot)
    }

    fn calls(&self) -> EngineCalls {
        self.calls
    }

    fn completes_inline(&self) -> bool {
        self.inline
    }

    fn describe(&self) -> String {
        format!(
            "scripted ({})",
            if self.inline { "inline" } else { "async" }
        )
    }
}

/// Makes one [`Scripted`] engine per worker, each on its own virtual clock, all following
/// the same script.
pub(crate) struct Factory {
    pub(crate) inline: bool,
    pub(crate) script: Script,
}

impl EngineFactory for Factory {
    type Engine = Scripted;
    fn make(&self, s: EngineSetup) -> Result<Scripted, String> {
        Ok(Scripted::new(
            virtual_clock(),
            s.iodepth,
            s.block,
            self.inline,
            self.script.clone(),
        ))
    }
}
