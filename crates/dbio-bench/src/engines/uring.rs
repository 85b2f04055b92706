//! The `uring` engine: io_uring with batched submission; plain reads and writes from ordinary
//! aligned buffers (as MariaDB and MySQL submit them), or, on request, READ_FIXED/WRITE_FIXED
//! on registered buffers (`--fixed-buffers`) and registered files (`--register-files`).

use super::{AlignedBuffers, Completion, Engine, EngineFactory, EngineSetup, Io, Op, Queued};
use dbio_schema::bench::{EngineCalls, FsyncMode};
use io_uring::{opcode, squeue, types, IoUring};
use std::io;
use std::os::fd::RawFd;

/// Makes [`UringEngine`]s (`--engine uring`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Factory;

impl EngineFactory for Factory {
    type Engine = UringEngine;
    fn make(&self, s: EngineSetup) -> Result<UringEngine, String> {
        UringEngine::new(&s).map_err(|e| {
            format!(
                "cannot set up io_uring: {e} (is io_uring disabled by kernel.io_uring_disabled or a seccomp profile? use --engine sync)"
            )
        })
    }
}

/// io_uring: batched submission (one `io_uring_enter` per batch), completions read from the
/// shared ring without a system call when ready; buffers and files registered only when the
/// spec asks ([`EngineSetup::fixed_buffers`], [`EngineSetup::register_files`]).
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
    iowq_max: Option<u32>,
    /// READ_FIXED/WRITE_FIXED on the registered buffers (else plain READ/WRITE).
    fixed_bufs: bool,
    /// Files registered with the ring, addressed by index (else by descriptor).
    fixed_files: bool,
    /// The files' descriptors, in engine file index order.
    fds: Vec<RawFd>,
    /// Completion polls (io_uring_enter without waiting) before a reap sleeps
    /// ([`EngineSetup::spin_polls`]; 0: sleep at once).
    spin: u32,
    /// Sleeps left before the next polling attempt, after polling found nothing.
    spin_skip: u32,
    /// The current back-off (1, 2, 4 ... 64 sleeps) after polls that found nothing.
    spin_backoff: u32,
}

/// The longest back-off between polling attempts (in sleeping reaps) while polls find nothing.
const SPIN_BACKOFF_MAX: u32 = 64;

impl UringEngine {
    /// A ring for `s.iodepth` I/Os in flight over `s.fds`, registering buffers and files as
    /// `s` asks. `s.memory_fs`: the files live in memory (tmpfs, ramfs), so no read or write
    /// ever waits for a device.
    pub fn new(s: &EngineSetup) -> io::Result<Self> {
        let (fds, iodepth, block) = (&s.fds[..], s.iodepth, s.block);
        let entries = iodepth.next_power_of_two().max(2) as u32;
        let (fixed_bufs, fixed_files) = (s.fixed_buffers, s.register_files);
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
        if fixed_files {
            ring.submitter().register_files(fds)?;
        }
        // Buffers in huge pages unless the spec says not (issue 17): a 16 KiB buffer spread
        // over 4 scattered 4 KiB pages makes a 4-segment request, which this kind of virtual
        // disk served at r_await 0.58-0.70 ms where it served 1-segment requests (a buffer in
        // a huge page) at 0.42-0.46 ms, at the same queue size: 42k against 56k IOPS for 16 KiB
        // random reads QD 32 in the same rounds. fio reached that level only in the runs whose
        // buffers happened to be physically contiguous.
        let bufs = if s.huge_pages {
            AlignedBuffers::new_huge(iodepth, block)
        } else {
            AlignedBuffers::new(iodepth, block)
        };
        let iovecs: Vec<libc::iovec> = (0..bufs.slots() as u32)
            .map(|i| libc::iovec {
                iov_base: bufs.slot_ptr(i).cast(),
                iov_len: block,
            })
            .collect();
        if fixed_bufs {
            // SAFETY: the buffers live in `bufs`, which the engine owns and drops after the
            // ring (field order: `ring` is dropped first), so they outlive the registration.
            unsafe { ring.submitter().register_buffers(&iovecs)? };
        }
        // The ring's own descriptor is not registered (IORING_REGISTER_RING_FDS): io-uring's
        // `Submitter` remembers that registration only in the instance that made it, and
        // `ring.submitter()` makes a new one per call, so every io_uring_enter went on using the
        // plain descriptor (seen with strace: no IORING_ENTER_REGISTERED_RING) while the
        // environment said "registered ring fd" (issue 17).
        // tmpfs and ramfs cannot complete a request without blocking in io_uring's eyes
        // (no FMODE_NOWAIT), so every read and write goes to an io-wq worker thread. io-wq
        // adds a worker whenever one sleeps, yet on a memory filesystem nothing ever waits
        // for a device: a second worker only fights the first for the queue's lock and the
        // CPUs (measured: 1 or 2 workers from run to run, 700-870k IOPS for 4 KiB QD 32 on
        // 2 CPUs; one worker, 830-870k every time). One worker per ring there.
        let iowq_max = if s.memory_fs {
            let mut max = [1, 1];
            ring.submitter().register_iowq_max_workers(&mut max)?;
            Some(1)
        } else {
            None
        };
        Ok(UringEngine {
            ring,
            bufs,
            fsync: s.fsync,
            block: block as u32,
            pending: Vec::with_capacity(iodepth),
            in_flight: 0,
            depth: iodepth,
            calls: EngineCalls::default(),
            setup,
            iowq_max,
            fixed_bufs,
            fixed_files,
            fds: fds.to_vec(),
            spin: s.spin_polls,
            spin_skip: 0,
            spin_backoff: 0,
        })
    }

    /// Polls for up to `self.spin` rounds (io_uring_enter without waiting, which runs the
    /// deferred completions) until `min` completions are drained. Waking a sleeping thread
    /// costs the completing side more than the I/O itself where completions come every
    /// microsecond or two (tmpfs: an io-wq worker copies the data and must wake the
    /// submitter for each one). Where polling finds nothing (a disk: completions take
    /// hundreds of microseconds) it backs off: the next 1, 2, 4 ... 64 sleeping reaps do not
    /// poll, so the cost there is a few polls every 64 sleeps. Returns how many it drained.
    fn poll_before_sleeping(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> io::Result<usize> {
        if self.spin == 0 {
            return Ok(0);
        }
        if self.spin_skip > 0 {
            self.spin_skip -= 1;
            return Ok(0);
        }
        let mut got = 0;
        for _ in 0..self.spin {
            self.enter(0, 0)?;
            got += self.drain_cq(out, max - got);
            if got >= min || self.in_flight == 0 {
                self.spin_backoff = 0;
                return Ok(got);
            }
        }
        self.spin_backoff = (self.spin_backoff * 2).clamp(1, SPIN_BACKOFF_MAX);
        self.spin_skip = self.spin_backoff;
        Ok(got)
    }

    fn push_pending(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let mut sq = self.ring.submission();
        // SAFETY: every entry points at a buffer owned by this engine (registered with the
        // ring or not) and at a file the run keeps open (registered or by descriptor); they
        // stay valid until their completion is reaped.
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
        // The same opcode addressed to a registered file (by index) or by descriptor: two
        // types, so the builder closure is expanded once for each.
        macro_rules! target {
            ($e:expr) => {
                if self.fixed_files {
                    ($e)(types::Fixed(io.file))
                } else {
                    ($e)(types::Fd(self.fds[io.file as usize]))
                }
            };
        }
        let len = io.len.min(self.block);
        let ptr = self.bufs.slot_ptr(io.slot);
        let entry = match io.op {
            Op::Read => {
                self.calls.reads += 1;
                if self.fixed_bufs {
                    target!(|f| opcode::ReadFixed::new(f, ptr, len, io.slot as u16)
                        .offset(io.offset)
                        .build())
                } else {
                    target!(|f| opcode::Read::new(f, ptr, len).offset(io.offset).build())
                }
            }
            Op::Write => {
                self.calls.writes += 1;
                if self.fixed_bufs {
                    target!(|f| opcode::WriteFixed::new(f, ptr, len, io.slot as u16)
                        .offset(io.offset)
                        .build())
                } else {
                    target!(|f| opcode::Write::new(f, ptr, len).offset(io.offset).build())
                }
            }
            Op::Sync => {
                self.calls.fsyncs += 1;
                let flags = match self.fsync {
                    FsyncMode::Fsync => types::FsyncFlags::empty(),
                    FsyncMode::Fdatasync => types::FsyncFlags::DATASYNC,
                };
                target!(|f| opcode::Fsync::new(f).flags(flags).build())
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
        if got < min && self.in_flight > 0 {
            got += self.poll_before_sleeping(min - got, max - got, out)?;
        }
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
        let p = self.ring.params();
        let mut d = format!(
            "io_uring: {} setup, {} SQ / {} CQ entries, {}, {}",
            self.setup,
            p.sq_entries(),
            p.cq_entries(),
            if self.fixed_bufs {
                "READ_FIXED/WRITE_FIXED on registered buffers"
            } else {
                "plain READ/WRITE on unregistered buffers"
            },
            if self.fixed_files {
                "registered files"
            } else {
                "files by descriptor"
            }
        );
        d.push_str(if self.bufs.huge_pages() {
            ", buffers in transparent huge pages"
        } else {
            ", buffers in 4 KiB pages"
        });
        if self.spin > 0 {
            d.push_str(&format!(
                ", up to {} completion polls before sleeping (backing off while they find nothing)",
                self.spin
            ));
        }
        if let Some(n) = self.iowq_max {
            d.push_str(&format!(", io-wq capped at {n} worker (memory filesystem)"));
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    /// What the kernel says is registered with a ring (`/proc/self/fdinfo` of the ring's
    /// descriptor): (UserFiles, UserBufs).
    fn registered(e: &UringEngine) -> (u32, u32) {
        let info =
            std::fs::read_to_string(format!("/proc/self/fdinfo/{}", e.ring.as_raw_fd())).unwrap();
        let field = |name: &str| {
            info.lines()
                .find_map(|l| l.strip_prefix(name))
                .unwrap_or_else(|| panic!("no {name} in the ring's fdinfo:\n{info}"))
                .trim()
                .parse()
                .unwrap()
        };
        (field("UserFiles:"), field("UserBufs:"))
    }

    /// Buffers advised into huge pages get them wherever transparent huge pages are not
    /// disabled (this kind of machine: "madvise"), and the description says which they got.
    #[test]
    fn huge_page_buffers_are_physically_contiguous_where_thp_allows() {
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        let allowed = thp.contains("[always]") || thp.contains("[madvise]");
        let huge = AlignedBuffers::new_huge(32, 16384);
        assert_eq!(huge.huge_pages(), allowed, "THP setting: {thp}");
        assert!(!AlignedBuffers::new(32, 16384).huge_pages() || thp.contains("[always]"));
        let file = std::fs::File::open("/proc/self/exe").unwrap();
        for huge_pages in [false, true] {
            let e = UringEngine::new(&EngineSetup {
                worker: 0,
                fds: vec![file.as_raw_fd()],
                iodepth: 32,
                block: 16384,
                fsync: FsyncMode::Fdatasync,
                memory_fs: false,
                fixed_buffers: false,
                register_files: false,
                huge_pages,
                spin_polls: 0,
            })
            .unwrap();
            let d = e.describe();
            let got = e.bufs.huge_pages();
            assert_eq!(got, huge_pages && allowed, "{d}");
            assert_eq!(d.contains("buffers in transparent huge pages"), got, "{d}");
            assert_eq!(d.contains("buffers in 4 KiB pages"), !got, "{d}");
        }
    }

    /// Each combination of the two options reaches the ring (as the kernel reports it), is
    /// described honestly, and reads the right bytes.
    #[test]
    fn fixed_buffers_and_registered_files_reach_the_ring_only_when_asked() {
        const BLOCK: usize = 4096;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        let data: Vec<u8> = (0..4 * BLOCK)
            .map(|i| (i / BLOCK * 7 + i % 251) as u8)
            .collect();
        std::fs::File::create(&path)
            .unwrap()
            .write_all(&data)
            .unwrap();
        let file = std::fs::File::open(&path).unwrap();
        for (fixed_buffers, register_files) in
            [(false, false), (true, false), (false, true), (true, true)]
        {
            let mut e = UringEngine::new(&EngineSetup {
                worker: 0,
                fds: vec![file.as_raw_fd()],
                iodepth: 4,
                block: BLOCK,
                fsync: FsyncMode::Fdatasync,
                memory_fs: false,
                fixed_buffers,
                register_files,
                huge_pages: fixed_buffers,
                spin_polls: if register_files { 16 } else { 0 },
            })
            .unwrap();
            let case = format!("fixed_buffers {fixed_buffers}, register_files {register_files}");
            assert_eq!(
                registered(&e),
                (u32::from(register_files), if fixed_buffers { 4 } else { 0 }),
                "{case}"
            );
            let d = e.describe();
            assert_eq!(
                d.contains("READ_FIXED/WRITE_FIXED on registered buffers"),
                fixed_buffers,
                "{case}: {d}"
            );
            assert_eq!(
                d.contains("plain READ/WRITE on unregistered buffers"),
                !fixed_buffers,
                "{case}: {d}"
            );
            assert_eq!(
                d.contains("registered files"),
                register_files,
                "{case}: {d}"
            );
            assert_eq!(
                d.contains("files by descriptor"),
                !register_files,
                "{case}: {d}"
            );
            assert_eq!(
                d.contains("up to 16 completion polls before sleeping"),
                register_files,
                "{case}: {d}"
            );
            for slot in 0..4u32 {
                let io = Io {
                    op: Op::Read,
                    file: 0,
                    offset: (3 - slot as u64) * BLOCK as u64,
                    len: BLOCK as u32,
                    slot,
                };
                assert_eq!(e.queue(&io), Queued::Queued);
            }
            let mut out = Vec::with_capacity(4);
            e.reap(4, 4, &mut out).unwrap();
            assert_eq!(out.len(), 4, "{case}");
            for c in out {
                assert_eq!(c.result, BLOCK as i64, "{case}");
                let off = (3 - c.slot as usize) * BLOCK;
                assert!(
                    e.buffer(c.slot) == &data[off..off + BLOCK],
                    "{case}: slot {} holds the wrong bytes",
                    c.slot
                );
            }
        }
    }

    /// Polls before sleeping back off while they find nothing (a read from a pipe that stays
    /// empty for 30 ms: 16 polls, then the reap sleeps; the next sleeping reap skips polling,
    /// the one after polls again and doubles the back-off), and reset when they find a
    /// completion (a tmpfs read, done within the polls).
    #[test]
    fn completion_polls_back_off_while_they_find_nothing() {
        let (rd, wr) = std::io::pipe().unwrap();
        let setup = |fd| EngineSetup {
            worker: 0,
            fds: vec![fd],
            iodepth: 1,
            block: 8,
            fsync: FsyncMode::Fdatasync,
            memory_fs: false,
            fixed_buffers: false,
            register_files: false,
            huge_pages: false,
            spin_polls: 16,
        };
        let mut e = UringEngine::new(&setup(rd.as_raw_fd())).unwrap();
        let io = Io {
            op: Op::Read,
            file: 0,
            offset: 0,
            len: 8,
            slot: 0,
        };
        let mut out = Vec::new();
        // (backoff after the reap, skip after the reap, polls made by the reap)
        for (round, (backoff, skip, polls)) in [(1, 1, 16), (1, 0, 0), (2, 2, 16), (2, 1, 0)]
            .into_iter()
            .enumerate()
        {
            assert_eq!(e.queue(&io), Queued::Queued);
            let writer = std::thread::spawn({
                let mut w = wr.try_clone().unwrap();
                move || {
                    std::thread::sleep(std::time::Duration::from_millis(30));
                    w.write_all(b"12345678").unwrap();
                }
            });
            let before = e.calls().syscalls;
            out.clear();
            e.reap(1, 1, &mut out).unwrap();
            writer.join().unwrap();
            assert_eq!(out.len(), 1, "round {round}");
            assert_eq!(out[0].result, 8, "round {round}");
            // one enter submits, `polls` poll, at least one sleeps until the write
            let made = e.calls().syscalls - before;
            assert!(
                made > 1 + polls && made <= 3 + polls,
                "round {round}: {made} system calls"
            );
            assert_eq!(
                (e.spin_backoff, e.spin_skip),
                (backoff, skip),
                "round {round}"
            );
        }
        drop((rd, wr));

        // A read from tmpfs goes to an io-wq worker and completes within the polls (as many
        // as it takes: the first one waits for the worker thread to start): the back-off
        // resets to nothing.
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        let path = dir.path().join("data");
        std::fs::write(&path, [7u8; 4096]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let mut e = UringEngine::new(&EngineSetup {
            spin_polls: 1_000_000,
            ..setup(file.as_raw_fd())
        })
        .unwrap();
        e.spin_backoff = 8;
        for _ in 0..4 {
            assert_eq!(e.queue(&io), Queued::Queued);
            out.clear();
            e.reap(1, 1, &mut out).unwrap();
            assert_eq!(out[0].result, 8);
        }
        assert_eq!((e.spin_backoff, e.spin_skip), (0, 0));
    }
}
