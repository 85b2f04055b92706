//! I/O engines, modelled on fio's `ioengine_ops`: `queue(io)` either completes the I/O at once
//! (sync engines), queues it for a later `commit` (async engines), or reports the queue full;
//! `commit()` submits what is queued; `reap(min, max, out)` collects at least `min` completions.
//!
//! Every engine owns its files' descriptors (borrowed), its aligned buffers (one per in-flight
//! slot) and counts its own calls, so tests check fsync cadence without strace.
//!
//! A run gets its engines from an [`EngineFactory`], called once per worker on that worker's
//! thread: [`sync::Factory`], [`uring::Factory`] and [`null::Factory`] are what `--engine`
//! names; tests pass a scripted engine instead. The factory is a type parameter of the run,
//! so each worker loop is compiled for its engine type (no dynamic call per I/O).

use dbio_schema::bench::{EngineCalls, FsyncMode};
use std::io;
use std::os::fd::RawFd;

pub mod null;
#[cfg(test)]
pub(crate) mod scripted;
pub mod sync;
pub mod uring;

pub use null::NullEngine;
pub use sync::SyncEngine;
pub use uring::UringEngine;

/// What an I/O does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Read `len` bytes at `offset`.
    Read,
    /// Write `len` bytes at `offset`.
    Write,
    /// fsync or fdatasync the file (as the engine was configured).
    Sync,
}

/// One I/O request. `slot` names the buffer (and identifies the completion).
#[derive(Clone, Copy, Debug)]
pub struct Io {
    /// The operation.
    pub op: Op,
    /// Index into the engine's file list.
    pub file: u32,
    /// Byte offset in the file.
    pub offset: u64,
    /// Bytes.
    pub len: u32,
    /// In-flight slot: buffer index and completion tag.
    pub slot: u32,
}

/// A finished I/O: the slot and the result (bytes moved, or a negative errno).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The slot given at queue time.
    pub slot: u32,
    /// Bytes moved (0 for a sync), or `-errno`.
    pub result: i64,
}

/// What `queue` did with an I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queued {
    /// Done already (sync engines): the result.
    Completed(i64),
    /// Waiting for `commit`.
    Queued,
    /// No room: reap something first.
    Busy,
}

/// An I/O engine.
pub trait Engine {
    /// Queues (or, for sync engines, performs) one I/O.
    fn queue(&mut self, io: &Io) -> Queued;
    /// Submits every queued I/O.
    fn commit(&mut self) -> io::Result<()>;
    /// Submits what is queued and appends at least `min` and at most `max` completions to
    /// `out` (fio's iodepth_batch_complete_min/max). `out` must have room for `max` entries:
    /// reaping never allocates.
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<()>;
    /// Like `reap(1, iodepth, out)`, but gives up after `timeout_ns` (rate-limited runs).
    fn reap_timeout(&mut self, timeout_ns: u64, out: &mut Vec<Completion>) -> io::Result<()>;
    /// The buffer of a slot (filled before a write is queued).
    fn buffer(&mut self, slot: u32) -> &mut [u8];
    /// Calls made so far.
    fn calls(&self) -> EngineCalls;
    /// True when `queue` always completes the I/O itself (no submission batch to time).
    fn completes_inline(&self) -> bool;
    /// How the engine was set up, for the result's environment.
    fn describe(&self) -> String;
}

/// What a worker's engine is built from.
#[derive(Clone, Debug)]
pub struct EngineSetup {
    /// Worker index.
    pub worker: u32,
    /// Descriptors of the files the worker addresses, in engine file index order (kept open
    /// by the run for the engine's lifetime; none for the null engine).
    pub fds: Vec<RawFd>,
    /// I/Os in flight (at least 1).
    pub iodepth: usize,
    /// Bytes per I/O buffer.
    pub block: usize,
    /// How a sync I/O syncs.
    pub fsync: FsyncMode,
    /// The files live in memory (tmpfs, ramfs).
    pub memory_fs: bool,
    /// io_uring: READ_FIXED/WRITE_FIXED on registered buffers (`--fixed-buffers`).
    pub fixed_buffers: bool,
    /// io_uring: files registered with the ring (`--register-files`).
    pub register_files: bool,
    /// sync and io_uring: buffers in transparent huge pages (the default; `--no-huge-pages`:
    /// not).
    pub huge_pages: bool,
    /// io_uring: completion polls before a reap sleeps (`--spin-polls`; 0: sleep at once).
    pub spin_polls: u32,
}

/// Makes each worker's engine. `make` runs on the worker's own thread (an io_uring ring set
/// up with SINGLE_ISSUER belongs to the thread that made it), before the run starts.
pub trait EngineFactory: Sync {
    /// The engine this factory makes.
    type Engine: Engine;
    /// The engine of one worker, or a message saying why it cannot be set up and what to do.
    fn make(&self, setup: EngineSetup) -> Result<Self::Engine, String>;
}

/// `block`-sized buffers for `slots` in-flight I/Os, aligned to 4096 bytes (O_DIRECT).
pub struct AlignedBuffers {
    ptr: *mut u8,
    layout: std::alloc::Layout,
    block: usize,
    slots: usize,
}

// SAFETY: the buffers are plain bytes owned by this value; moving it to another thread moves
// ownership of the allocation with it.
unsafe impl Send for AlignedBuffers {}

impl AlignedBuffers {
    /// Allocates zeroed buffers.
    pub fn new(slots: usize, block: usize) -> Self {
        let layout = std::alloc::Layout::from_size_align((slots * block).max(4096), 4096)
            .expect("buffer size fits in memory");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuffers {
            ptr,
            layout,
            block,
            slots: layout.size() / block,
        }
    }
    /// Slot `i`'s buffer.
    #[inline]
    pub fn slot(&mut self, i: u32) -> &mut [u8] {
        let off = i as usize * self.block;
        assert!(off + self.block <= self.layout.size());
        // SAFETY: in bounds of the allocation (checked above), and `&mut self` guarantees no
        // other reference to the bytes exists.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(off), self.block) }
    }
    /// Like [`AlignedBuffers::new`], but in a 2 MiB-aligned region advised into transparent
    /// huge pages (MADV_HUGEPAGE, before the first touch), so each I/O's buffer is physically
    /// contiguous: one segment per request. Whether the kernel granted them:
    /// [`AlignedBuffers::huge_pages`] (THP "never", or no free 2 MiB page: 4 KiB pages).
    pub fn new_huge(slots: usize, block: usize) -> Self {
        const HUGE: usize = 2 << 20;
        let size = (slots * block).max(4096).next_multiple_of(HUGE);
        let layout =
            std::alloc::Layout::from_size_align(size, HUGE).expect("buffer size fits in memory");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        // SAFETY: `ptr` is a fresh allocation of `size` bytes that nothing else references; the
        // advice only changes how the kernel backs it (a failure leaves 4 KiB pages), and the
        // zeroing after it is the first touch, which faults the huge pages in.
        unsafe {
            libc::madvise(ptr.cast(), size, libc::MADV_HUGEPAGE);
            std::ptr::write_bytes(ptr, 0, size);
        }
        // The slots asked for: the rest of the 2 MiB is padding.
        AlignedBuffers {
            ptr,
            layout,
            block,
            slots: slots.max(1),
        }
    }
    /// True when every byte of the buffers lies in a transparent huge page, as the kernel
    /// reports it (/proc/self/smaps: AnonHugePages of the mapping that holds them).
    pub fn huge_pages(&self) -> bool {
        let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
            return false;
        };
        let (lo, hi) = (self.ptr as usize, self.ptr as usize + self.layout.size());
        let mut inside = false;
        for line in smaps.lines() {
            let first = line.split_whitespace().next().unwrap_or("");
            if let Some((a, b)) = first.split_once('-') {
                if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
                {
                    inside = a <= lo && hi <= b;
                    continue;
                }
            }
            if inside {
                if let Some(kb) = line.strip_prefix("AnonHugePages:") {
                    let kb: usize = kb.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
                    return kb * 1024 >= self.layout.size();
                }
            }
        }
        false
    }
    /// Raw pointer of slot `i` (for registered buffers).
    fn slot_ptr(&self, i: u32) -> *mut u8 {
        // SAFETY: callers pass a slot index below the slot count.
        unsafe { self.ptr.add(i as usize * self.block) }
    }
    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.slots
    }
}

impl Drop for AlignedBuffers {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this very layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}
