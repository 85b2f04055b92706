//! The `null` engine: no I/O at all (tests and measures the layers above the engine).

use super::{AlignedBuffers, Completion, Engine, EngineFactory, EngineSetup, Io, Op, Queued};
use dbio_schema::bench::EngineCalls;
use std::io;

/// Makes [`NullEngine`]s (`--engine null`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Factory;

impl EngineFactory for Factory {
    type Engine = NullEngine;
    fn make(&self, s: EngineSetup) -> Result<NullEngine, String> {
        Ok(NullEngine::new(s.iodepth, s.block))
    }
}

/// No I/O at all: every request completes at once with its full length. With `iodepth` > 1 it
/// behaves as an async engine (queue, commit, reap), so the async paths above it are tested too.
pub struct NullEngine {
    bufs: AlignedBuffers,
    pending: Vec<Completion>,
    async_mode: bool,
    calls: EngineCalls,
}

impl NullEngine {
    /// A null engine with `iodepth` slots of `block` bytes.
    pub fn new(iodepth: usize, block: usize) -> Self {
        NullEngine {
            bufs: AlignedBuffers::new(iodepth, block),
            pending: Vec::with_capacity(iodepth),
            async_mode: iodepth > 1,
            calls: EngineCalls::default(),
        }
    }
    fn count(&mut self, op: Op) {
        match op {
            Op::Read => self.calls.reads += 1,
            Op::Write => self.calls.writes += 1,
            Op::Sync => self.calls.fsyncs += 1,
        }
    }
}

impl Engine for NullEngine {
    fn queue(&mut self, io: &Io) -> Queued {
        let result = if io.op == Op::Sync { 0 } else { io.len as i64 };
        if !self.async_mode {
            self.count(io.op);
            return Queued::Completed(result);
        }
        if self.pending.len() == self.pending.capacity() {
            return Queued::Busy;
        }
        self.count(io.op);
        self.pending.push(Completion {
            slot: io.slot,
            result,
        });
        Queued::Queued
    }
    fn commit(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn reap(&mut self, _min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        if !self.pending.is_empty() {
            self.calls.syscalls += 1;
        }
        // Oldest first, as a ring would hand them back.
        let n = max.min(self.pending.len());
        out.extend(self.pending.drain(..n));
        Ok(())
    }
    fn reap_timeout(&mut self, _t: u64, out: &mut Vec<Completion>) -> io::Result<()> {
        self.reap(1, usize::MAX, out)
    }
    fn buffer(&mut self, slot: u32) -> &mut [u8] {
        self.bufs.slot(slot)
    }
    fn calls(&self) -> EngineCalls {
        self.calls
    }
    fn completes_inline(&self) -> bool {
        !self.async_mode
    }
    fn describe(&self) -> String {
        "null: no I/O".into()
    }
}
