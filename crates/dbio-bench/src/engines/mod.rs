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

/// `block`-sized buffers for `slots` in-flight I/Os, each in its own frame of one anonymous
/// mapping, aligned to 16 KiB (O_DIRECT needs 4096).
///
/// Two layouts, the two a MariaDB/MySQL buffer pool can have:
/// - [`AlignedBuffers::new`] (the default): ordinary 4 KiB pages, as InnoDB's buffer pool has
///   them with `large_pages=OFF`: one large anonymous mapping cut into 16 KiB-aligned frames,
///   advised out of transparent huge pages (MADV_NOHUGEPAGE), so a 16 KiB frame is 4 pages
///   the kernel placed wherever it liked: a 16 KiB O_DIRECT request into it is, in general,
///   4 physical segments.
/// - [`AlignedBuffers::new_huge`] (`--huge-pages`): the same frames in 2 MiB huge pages, as
///   `large_pages=ON` gives the buffer pool: each frame physically contiguous, one segment.
pub struct AlignedBuffers {
    /// Start of the mapping (what munmap takes).
    map: *mut u8,
    /// Bytes mapped.
    map_len: usize,
    /// Start of frame 0 (16 KiB or 2 MiB aligned inside the mapping).
    ptr: *mut u8,
    /// Bytes from `ptr` to the end of the last frame.
    len: usize,
    /// Bytes per I/O.
    block: usize,
    /// Distance between frames: `block` rounded up to 16 KiB.
    stride: usize,
    slots: usize,
}

// SAFETY: the buffers are plain bytes owned by this value; moving it to another thread moves
// ownership of the mapping with it.
unsafe impl Send for AlignedBuffers {}

/// Alignment of a frame: InnoDB's page size.
pub const FRAME_ALIGN: usize = 16 << 10;
/// A transparent huge page.
const HUGE: usize = 2 << 20;

impl AlignedBuffers {
    /// Frames in ordinary 4 KiB pages (MADV_NOHUGEPAGE), as InnoDB's buffer pool without
    /// large pages; zeroed and faulted in.
    pub fn new(slots: usize, block: usize) -> Self {
        Self::map(slots, block, FRAME_ALIGN, libc::MADV_NOHUGEPAGE)
    }
    /// Frames in a 2 MiB-aligned region advised into transparent huge pages (MADV_HUGEPAGE,
    /// before the first touch), so each I/O's buffer is physically contiguous: one segment
    /// per request. Whether the kernel granted them: [`AlignedBuffers::huge_pages`] (THP
    /// "never", or no free 2 MiB page: 4 KiB pages).
    pub fn new_huge(slots: usize, block: usize) -> Self {
        Self::map(slots, block, HUGE, libc::MADV_HUGEPAGE)
    }
    fn map(slots: usize, block: usize, align: usize, advice: libc::c_int) -> Self {
        let slots = slots.max(1);
        let block = block.max(1);
        let stride = block.next_multiple_of(FRAME_ALIGN);
        let len = (slots * stride).next_multiple_of(align);
        let map_len = len + align;
        // SAFETY: a fresh private anonymous mapping; no memory of ours is touched.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            let layout = std::alloc::Layout::from_size_align(map_len, 4096)
                .expect("buffer size fits in memory");
            std::alloc::handle_alloc_error(layout);
        }
        let map = map.cast::<u8>();
        let skip = (map as usize).next_multiple_of(align) - map as usize;
        // SAFETY: `skip + len <= map_len`, so `ptr..ptr+len` lies in the mapping, which nothing
        // else references. The advice only changes how the kernel backs it (a failure leaves
        // its default), and writing every byte after it is the first touch, which faults the
        // pages in the advised size.
        let ptr = unsafe {
            let ptr = map.add(skip);
            libc::madvise(ptr.cast(), len, advice);
            std::ptr::write_bytes(ptr, 0, len);
            ptr
        };
        AlignedBuffers {
            map,
            map_len,
            ptr,
            len,
            block,
            stride,
            slots,
        }
    }
    /// Slot `i`'s buffer.
    #[inline]
    pub fn slot(&mut self, i: u32) -> &mut [u8] {
        let off = i as usize * self.stride;
        assert!(off + self.block <= self.len);
        // SAFETY: in bounds of the mapping (checked above), and `&mut self` guarantees no
        // other reference to the bytes exists.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(off), self.block) }
    }
    /// True when every byte of the buffers lies in a transparent huge page, as the kernel
    /// reports it (/proc/self/smaps: AnonHugePages of the mapping that holds them).
    pub fn huge_pages(&self) -> bool {
        let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
            return false;
        };
        let (lo, hi) = (self.ptr as usize, self.ptr as usize + self.len);
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
                    return kb * 1024 >= self.len;
                }
            }
        }
        false
    }
    /// Raw pointer of slot `i` (for registered buffers).
    fn slot_ptr(&self, i: u32) -> *mut u8 {
        // SAFETY: callers pass a slot index below the slot count.
        unsafe { self.ptr.add(i as usize * self.stride) }
    }
    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.slots
    }
}

impl Drop for AlignedBuffers {
    fn drop(&mut self) {
        // SAFETY: mapped in `map` with this very start and length, and unmapped only here.
        unsafe { libc::munmap(self.map.cast(), self.map_len) };
    }
}
