//! I/O engines, modelled on fio's `ioengine_ops`: `queue(io)` either completes the I/O at once
//! (sync engines), queues it for a later `commit` (async engines), or reports the queue full;
//! `commit()` submits what is queued; `reap(min, out)` collects at least `min` completions.
//!
//! Every engine owns its files' descriptors (borrowed), its aligned buffers (one per in-flight
//! slot) and counts its own calls, so tests check fsync cadence without strace.

use dbio_report::bench::{EngineCalls, FsyncMode};
use std::io;
use std::os::fd::{BorrowedFd, RawFd};

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

/// `block`-sized buffers for `slots` in-flight I/Os, aligned to 4096 bytes (O_DIRECT).
pub struct AlignedBuffers {
    ptr: *mut u8,
    layout: std::alloc::Layout,
    block: usize,
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
        AlignedBuffers { ptr, layout, block }
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
    /// Raw pointer of slot `i` (for registered buffers).
    fn slot_ptr(&self, i: u32) -> *mut u8 {
        // SAFETY: callers pass a slot index below the slot count.
        unsafe { self.ptr.add(i as usize * self.block) }
    }
    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.layout.size() / self.block
    }
}

impl Drop for AlignedBuffers {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this very layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// pread/pwrite/fsync, one I/O at a time.
pub struct SyncEngine {
    fds: Vec<RawFd>,
    bufs: AlignedBuffers,
    fsync: FsyncMode,
    calls: EngineCalls,
}

impl SyncEngine {
    /// An engine over these files (kept open by the caller) with one buffer of `block` bytes.
    pub fn new(fds: Vec<RawFd>, block: usize, fsync: FsyncMode) -> Self {
        SyncEngine {
            fds,
            bufs: AlignedBuffers::new(1, block),
            fsync,
            calls: EngineCalls::default(),
        }
    }
}

impl Engine for SyncEngine {
    #[inline]
    fn queue(&mut self, io: &Io) -> Queued {
        // SAFETY: the caller keeps every descriptor open for the engine's lifetime.
        let fd = unsafe { BorrowedFd::borrow_raw(self.fds[io.file as usize]) };
        self.calls.syscalls += 1;
        // rustix makes the system calls directly: glibc's wrappers are cancellation points
        // whose bookkeeping cost about 45 ns per call (measured on tmpfs, 4 KiB reads).
        let r = match io.op {
            Op::Read => {
                self.calls.reads += 1;
                let buf = &mut self.bufs.slot(io.slot)[..io.len as usize];
                rustix::io::pread(fd, buf, io.offset)
            }
            Op::Write => {
                self.calls.writes += 1;
                let buf = &self.bufs.slot(io.slot)[..io.len as usize];
                rustix::io::pwrite(fd, buf, io.offset)
            }
            Op::Sync => {
                self.calls.fsyncs += 1;
                match self.fsync {
                    FsyncMode::Fsync => rustix::fs::fsync(fd),
                    FsyncMode::Fdatasync => rustix::fs::fdatasync(fd),
                }
                .map(|()| 0)
            }
        };
        Queued::Completed(match r {
            Ok(n) => n as i64,
            Err(e) => -(e.raw_os_error() as i64),
        })
    }
    fn commit(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn reap(&mut self, _min: usize, _max: usize, _out: &mut Vec<Completion>) -> io::Result<()> {
        Ok(())
    }
    fn reap_timeout(&mut self, _t: u64, _out: &mut Vec<Completion>) -> io::Result<()> {
        Ok(())
    }
    fn buffer(&mut self, slot: u32) -> &mut [u8] {
        self.bufs.slot(slot)
    }
    fn calls(&self) -> EngineCalls {
        self.calls
    }
    fn completes_inline(&self) -> bool {
        true
    }
    fn describe(&self) -> String {
        "sync: pread/pwrite and fsync/fdatasync system calls, one I/O at a time".into()
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

pub use uring::UringEngine;

mod uring {
    use super::*;
    use io_uring::{opcode, squeue, types, IoUring};

    /// io_uring: fixed (registered) files and buffers, batched submission (one `io_uring_enter`
    /// per batch), completions read from the shared ring without a system call when ready.
    /// Setup flags SINGLE_ISSUER | DEFER_TASKRUN, falling back to COOP_TASKRUN, then none.
    pub struct UringEngine {
        ring: IoUring,
        bufs: AlignedBuffers,
        fsync: FsyncMode,
        block: u32,
        pending: Vec<squeue::Entry>,
        in_flight: usize,
        depth: usize,
        calls: EngineCalls,
        /// Which setup flags the kernel accepted.
        setup: &'static str,
        ring_fd_registered: bool,
        iowq_max: Option<u32>,
    }

    impl UringEngine {
        /// A ring for `iodepth` I/Os in flight over these files. `memory_fs`: the files live
        /// in memory (tmpfs, ramfs), so no read or write ever waits for a device.
        pub fn new(
            fds: &[RawFd],
            iodepth: usize,
            block: usize,
            fsync: FsyncMode,
            memory_fs: bool,
        ) -> io::Result<Self> {
            let entries = iodepth.next_power_of_two().max(2) as u32;
            let (ring, setup) = match IoUring::builder()
                .setup_single_issuer()
                .setup_defer_taskrun()
                .build(entries)
            {
                Ok(r) => (r, "single_issuer,defer_taskrun"),
                Err(_) => match IoUring::builder().setup_coop_taskrun().build(entries) {
                    Ok(r) => (r, "coop_taskrun"),
                    Err(_) => (IoUring::new(entries)?, "default"),
                },
            };
            ring.submitter().register_files(fds)?;
            let bufs = AlignedBuffers::new(iodepth, block);
            let iovecs: Vec<libc::iovec> = (0..bufs.slots() as u32)
                .map(|i| libc::iovec {
                    iov_base: bufs.slot_ptr(i).cast(),
                    iov_len: block,
                })
                .collect();
            // SAFETY: the buffers live in `bufs`, which the engine owns and drops after the
            // ring (field order: `ring` is dropped first), so they outlive the registration.
            unsafe { ring.submitter().register_buffers(&iovecs)? };
            // Registering the ring fd saves a file lookup per io_uring_enter (Linux 5.18+).
            let ring_fd_registered = ring.submitter().register_ring_fd().is_ok();
            // tmpfs and ramfs cannot complete a request without blocking in io_uring's eyes
            // (no FMODE_NOWAIT), so every read and write goes to an io-wq worker thread. io-wq
            // adds a worker whenever one sleeps, yet on a memory filesystem nothing ever waits
            // for a device: a second worker only fights the first for the queue's lock and the
            // CPUs (measured: 1 or 2 workers from run to run, 700-870k IOPS for 4 KiB QD 32 on
            // 2 CPUs; one worker, 830-870k every time). One worker per ring there.
            let iowq_max = if memory_fs {
                let mut max = [1, 1];
                ring.submitter().register_iowq_max_workers(&mut max)?;
                Some(1)
            } else {
                None
            };
            Ok(UringEngine {
                ring,
                bufs,
                fsync,
                block: block as u32,
                pending: Vec::with_capacity(iodepth),
                in_flight: 0,
                depth: iodepth,
                calls: EngineCalls::default(),
                setup,
                ring_fd_registered,
                iowq_max,
            })
        }

        fn push_pending(&mut self) {
            if self.pending.is_empty() {
                return;
            }
            let mut sq = self.ring.submission();
            // SAFETY: every entry points at a registered buffer owned by this engine and a
            // registered file; they stay valid until their completion is reaped.
            unsafe {
                sq.push_multiple(&self.pending)
                    .expect("the ring has room for every slot");
            }
            drop(sq);
            self.in_flight += self.pending.len();
            self.pending.clear();
        }

        /// io_uring_enter with GETEVENTS: submits `to_submit`, runs deferred completions,
        /// and waits until `min_complete` are in the ring (0: does not wait). EINTR is retried
        /// by the caller's loop (it returns Ok and the ring is drained again).
        fn enter(&mut self, to_submit: u32, min_complete: u32) -> io::Result<()> {
            self.calls.syscalls += 1;
            let flags = io_uring::EnterFlags::GETEVENTS.bits();
            // SAFETY: no extended argument is passed (None), so the kernel reads nothing from
            // user memory besides the rings this engine owns.
            match unsafe {
                self.ring
                    .submitter()
                    .enter::<libc::sigset_t>(to_submit, min_complete, flags, None)
            } {
                Ok(_) => Ok(()),
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EINTR) | Some(libc::EAGAIN) | Some(libc::EBUSY)
                    ) =>
                {
                    Ok(())
                }
                Err(e) => Err(e),
            }
        }

        /// Moves up to `max` completions from the ring to `out`.
        fn drain_cq(&mut self, out: &mut Vec<Completion>, max: usize) -> usize {
            let mut n = 0;
            for cqe in self.ring.completion().take(max) {
                out.push(Completion {
                    slot: cqe.user_data() as u32,
                    result: cqe.result() as i64,
                });
                n += 1;
            }
            self.in_flight -= n;
            n
        }
    }

    impl Engine for UringEngine {
        #[inline]
        fn queue(&mut self, io: &Io) -> Queued {
            if self.pending.len() + self.in_flight >= self.depth {
                return Queued::Busy;
            }
            let file = types::Fixed(io.file);
            let entry = match io.op {
                Op::Read => {
                    self.calls.reads += 1;
                    let ptr = self.bufs.slot_ptr(io.slot);
                    opcode::ReadFixed::new(file, ptr, io.len.min(self.block), io.slot as u16)
                        .offset(io.offset)
                        .build()
                }
                Op::Write => {
                    self.calls.writes += 1;
                    let ptr = self.bufs.slot_ptr(io.slot);
                    opcode::WriteFixed::new(file, ptr, io.len.min(self.block), io.slot as u16)
                        .offset(io.offset)
                        .build()
                }
                Op::Sync => {
                    self.calls.fsyncs += 1;
                    let flags = match self.fsync {
                        FsyncMode::Fsync => types::FsyncFlags::empty(),
                        FsyncMode::Fdatasync => types::FsyncFlags::DATASYNC,
                    };
                    opcode::Fsync::new(file).flags(flags).build()
                }
            };
            self.pending.push(entry.user_data(io.slot as u64));
            Queued::Queued
        }

        fn commit(&mut self) -> io::Result<()> {
            if self.pending.is_empty() {
                return Ok(());
            }
            let n = self.pending.len() as u32;
            self.push_pending();
            self.enter(n, 0)
        }

        fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<()> {
            let to_submit = self.pending.len() as u32;
            self.push_pending();
            let mut got = self.drain_cq(out, max);
            if got >= min && to_submit == 0 {
                return Ok(()); // completions were ready in the shared ring: no system call
            }
            // Submit the batch and run the deferred completions without sleeping (GETEVENTS,
            // min 0): with DEFER_TASKRUN, finished I/Os reach the ring only inside an enter.
            // Only when that yields too little does a second enter sleep for the rest. One
            // enter that submits and sleeps at once is slower: the thread blocks while work
            // it could already reap sits in its task-work list (measured: -10 to -15% IOPS
            // on tmpfs, where every read goes through io-wq).
            if to_submit > 0 {
                self.enter(to_submit, 0)?;
                got += self.drain_cq(out, max - got);
            }
            // (With nothing to submit, the waiting enter below runs the deferred completions
            // first and returns at once when they suffice.)
            while got < min && self.in_flight > 0 {
                let want = (min - got).min(self.in_flight) as u32;
                self.enter(0, want)?;
                got += self.drain_cq(out, max - got);
            }
            Ok(())
        }

        fn reap_timeout(&mut self, timeout_ns: u64, out: &mut Vec<Completion>) -> io::Result<()> {
            self.push_pending();
            if self.drain_cq(out, usize::MAX) > 0 || self.in_flight == 0 {
                return Ok(());
            }
            let ts = types::Timespec::new()
                .sec(timeout_ns / 1_000_000_000)
                .nsec((timeout_ns % 1_000_000_000) as u32);
            let args = types::SubmitArgs::new().timespec(&ts);
            self.calls.syscalls += 1;
            match self.ring.submitter().submit_with_args(1, &args) {
                Ok(_) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME) | Some(libc::EINTR)) => {}
                Err(e) => return Err(e),
            }
            self.drain_cq(out, usize::MAX);
            Ok(())
        }

        fn buffer(&mut self, slot: u32) -> &mut [u8] {
            self.bufs.slot(slot)
        }

        fn calls(&self) -> EngineCalls {
            self.calls
        }

        fn completes_inline(&self) -> bool {
            false
        }

        fn describe(&self) -> String {
            let mut d = format!(
                "io_uring: {} setup, registered files and buffers",
                self.setup
            );
            if self.ring_fd_registered {
                d.push_str(", registered ring fd");
            }
            if let Some(n) = self.iowq_max {
                d.push_str(&format!(", io-wq capped at {n} worker (memory filesystem)"));
            }
            d
        }
    }
}
