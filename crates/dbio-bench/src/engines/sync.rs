//! The `sync` engine: pread/pwrite and fsync/fdatasync, one I/O at a time.

use super::{AlignedBuffers, Completion, Engine, EngineFactory, EngineSetup, Io, Op, Queued};
use dbio_schema::bench::{EngineCalls, FsyncMode};
use std::io;
use std::os::fd::{BorrowedFd, RawFd};

/// Makes [`SyncEngine`]s (`--engine sync`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Factory;

impl EngineFactory for Factory {
    type Engine = SyncEngine;
    fn make(&self, s: EngineSetup) -> Result<SyncEngine, String> {
        let mut e = SyncEngine::new(s.fds, s.block, s.fsync);
        if s.huge_pages {
            // The same as the uring engine's (issue 17): a buffer in one huge page is one
            // physically contiguous segment per request.
            e.bufs = AlignedBuffers::new_huge(1, s.block);
        }
        Ok(e)
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
        let pages = if self.bufs.huge_pages() {
            "buffer in a transparent huge page"
        } else {
            "buffer in 4 KiB pages"
        };
        format!("sync: pread/pwrite and fsync/fdatasync system calls, one I/O at a time, {pages}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(huge_pages: bool) -> EngineSetup {
        EngineSetup {
            worker: 0,
            fds: Vec::new(),
            iodepth: 1,
            block: 16384,
            fsync: FsyncMode::Fdatasync,
            memory_fs: false,
            fixed_buffers: false,
            register_files: false,
            huge_pages,
            spin_polls: 0,
        }
    }

    /// The buffer goes into a huge page as the uring engine's do, wherever THP allows it, and
    /// the description says which pages it got.
    #[test]
    fn the_buffer_is_in_a_huge_page_unless_asked_not_to_be() {
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        let allowed = thp.contains("[always]") || thp.contains("[madvise]");
        let huge = Factory.make(setup(true)).unwrap();
        assert_eq!(huge.bufs.huge_pages(), allowed, "THP setting: {thp}");
        assert_eq!(huge.describe().contains("huge page"), allowed);
        let plain = Factory.make(setup(false)).unwrap();
        assert!(plain.describe().contains("4 KiB pages") || thp.contains("[always]"));
    }
}
