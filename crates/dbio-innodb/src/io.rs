//! Reading a source in large chunks on several threads: memory-mapped for regular files
//! (no copy from the page cache), `pread` for block devices (a bad sector then becomes an
//! I/O error instead of a SIGBUS). Sources are only ever read.
//!
//! A memory map is only as steady as the file under it. If another process truncates a
//! mapped file, or the disk fails to read a page of it, touching that page raises SIGBUS,
//! which kills the process unless the program handles the signal; if another process writes
//! the file, the mapped bytes change under the reader. Callers map only files that nothing
//! else changes while they are read (`use_mmap` false otherwise): the `dbio` binary reads a
//! file that some process has open for writing ([`open_for_writing`]) with `pread`, catches
//! SIGBUS during a mapped read (naming the file, exit 1), and its `--no-mmap` always reads
//! with `pread`, which reports a shrunk file as a short read and a bad block as an I/O error.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// A read-only memory map of a whole file (memmap2, `MAP_SHARED`, `PROT_READ`).
pub struct Mapped {
    map: memmap2::Mmap,
}

impl Mapped {
    /// Maps `len` bytes of `file` read-only; `None` when mapping is not possible (an empty
    /// file, a length beyond the address space, an mmap error).
    ///
    /// # Safety
    ///
    /// The bytes are handed out as `&[u8]`, which Rust assumes never change: no process may
    /// write or truncate the file while the map lives. Truncation makes a later access raise
    /// SIGBUS; a write shows other bytes to a reader that assumed they were fixed. A private
    /// mapping (`MAP_PRIVATE`) would not help: Linux shows other processes' writes in private
    /// pages until this process writes them, and truncation faults the same way.
    pub unsafe fn new(file: &File, len: u64) -> Option<Mapped> {
        let len = usize::try_from(len).ok().filter(|&l| l > 0)?;
        // SAFETY: the caller guarantees the file is neither written nor truncated while the
        // map lives (see above); the map is read-only and owned by the returned value.
        let map = unsafe { memmap2::MmapOptions::new().len(len).map(file) }.ok()?;
        // Advice only: an error is harmless.
        let _ = map.advise(memmap2::Advice::Sequential);
        Some(Mapped { map })
    }

    /// Drops the pages of bytes `start..end` from this process's page tables (they stay in
    /// the page cache and are read again on the next access), so that a long sequential pass
    /// does not grow the resident set to the size of the file.
    pub fn release(&self, start: usize, end: usize) {
        let end = end.min(self.map.len());
        if end <= start {
            return;
        }
        // SAFETY: MADV_DONTNEED on a read-only shared file mapping only unmaps the pages of
        // the range (memmap2 rounds it to whole pages inside the map): a later read faults
        // them in again from the page cache with the same bytes, so slices other threads hold
        // stay valid. Errors are harmless and ignored.
        let _ = unsafe {
            self.map
                .unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start)
        };
    }

    /// The mapped bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.map
    }
}

/// Whether some process (this one included) has `file` open for writing now: `Some(true)`
/// when a read lease is refused for that reason (a live server's tablespace, say), `None`
/// when it cannot be told (not the file's owner without CAP_LEASE, leases disabled, not a
/// regular file). `file` must be open read-only. The lease is released at once: this tells
/// the state at the moment of the call, not what another process does later.
pub fn open_for_writing(file: &File) -> Option<bool> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this File owns; F_SETLEASE takes an int argument.
    let r = unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_RDLCK) };
    if r == 0 {
        // SAFETY: as above; releases the lease just taken.
        unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_UNLCK) };
        return Some(false);
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EAGAIN) => Some(true),
        _ => None,
    }
}

/// Reads up to `buf.len()` bytes at `offset`, tolerating short reads; returns the count read.
pub fn read_full_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// One unit of work: `data` starts at source offset `start`; only positions before `limit`
/// belong to it (the rest is overlap); `at_end` when it reaches the end of the source.
pub struct Chunk<'a> {
    /// The bytes.
    pub data: &'a [u8],
    /// Source offset of `data[0]`.
    pub start: u64,
    /// Positions at or after this are overlap.
    pub limit: usize,
    /// The chunk reaches the end of the source.
    pub at_end: bool,
}

/// Runs `work` over every chunk of `file` on `threads` threads, each with its own state from
/// `init`; returns the states and the bytes of the chunks done. `progress(bytes_done)` is
/// called after each chunk. Once `cancel` is set no further chunk is started (the caller
/// tells from the flag that the states are partial); the chunks in progress are finished, so
/// the chunks done are the first ones and the bytes done say where the work stopped.
#[allow(clippy::too_many_arguments)]
pub fn for_each_chunk<S: Send>(
    file: &File,
    len: u64,
    use_mmap: bool,
    threads: usize,
    chunk: usize,
    overlap: usize,
    cancel: &AtomicBool,
    progress: &(dyn Fn(u64) + Sync),
    init: &(dyn Fn() -> S + Sync),
    work: &(dyn Fn(&mut S, Chunk<'_>) + Sync),
) -> std::io::Result<(Vec<S>, u64)> {
    let map = if use_mmap {
        // SAFETY: not guaranteed here: `use_mmap` is the caller's word that nothing writes
        // or truncates the file while it is read (see the module comment for what happens
        // otherwise and how the dbio binary handles it).
        unsafe { Mapped::new(file, len) }
    } else {
        None
    };
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let states: Mutex<Vec<S>> = Mutex::new(Vec::new());
    let error: Mutex<Option<std::io::Error>> = Mutex::new(None);
    std::thread::scope(|sc| {
        for _ in 0..threads.max(1) {
            sc.spawn(|| {
                let mut state = init();
                let mut buf = if map.is_none() {
                    vec![0u8; chunk + overlap]
                } else {
                    Vec::new()
                };
                loop {
                    if cancel.load(Ordering::Relaxed) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let start = i * chunk as u64;
                    if start >= len {
                        break;
                    }
                    let want = ((len - start) as usize).min(chunk + overlap);
                    let data: &[u8] = match &map {
                        Some(m) => &m.as_slice()[start as usize..start as usize + want],
                        None => match read_full_at(file, &mut buf[..want], start) {
                            Ok(n) => &buf[..n],
                            Err(e) => {
                                *error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                                break;
                            }
                        },
                    };
                    let limit = data.len().min(chunk);
                    let at_end = start + data.len() as u64 >= len;
                    work(
                        &mut state,
                        Chunk {
                            data,
                            start,
                            limit,
                            at_end,
                        },
                    );
                    // The chunk's mapped pages leave the resident set once read (the next
                    // chunk's thread faults in its overlap again): RSS stays about threads x
                    // chunk, whatever the file's size.
                    if let Some(m) = &map {
                        m.release(start as usize, start as usize + limit);
                    }
                    let d = done.fetch_add(limit as u64, Ordering::Relaxed) + limit as u64;
                    progress(d);
                }
                states.lock().unwrap_or_else(|p| p.into_inner()).push(state);
            });
        }
    });
    if let Some(e) = error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    Ok((
        states.into_inner().unwrap_or_else(|p| p.into_inner()),
        done.into_inner(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writer_anywhere_is_seen_and_the_lease_is_let_go() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.ibd");
        std::fs::write(&p, [7u8; 8192]).unwrap();
        let reader = File::open(&p).unwrap();
        assert_eq!(open_for_writing(&reader), Some(false));
        // The lease was released: opening for writing does not wait for a lease break.
        let writer = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        assert_eq!(open_for_writing(&reader), Some(true));
        drop(writer);
        assert_eq!(open_for_writing(&reader), Some(false));
    }

    #[test]
    fn a_map_reads_the_file_and_releases_pages() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.ibd");
        let data: Vec<u8> = (0..3 * 4096 + 100).map(|i| (i % 251) as u8).collect();
        std::fs::write(&p, &data).unwrap();
        let f = File::open(&p).unwrap();
        // SAFETY: the test owns the file; nothing writes or truncates it meanwhile.
        let m = unsafe { Mapped::new(&f, data.len() as u64) }.unwrap();
        assert_eq!(m.as_slice(), &data[..]);
        m.release(100, 2 * 4096 + 5);
        m.release(5000, 1);
        m.release(0, usize::MAX);
        assert_eq!(
            m.as_slice(),
            &data[..],
            "released pages read back the same bytes"
        );
        // SAFETY: as above.
        assert!(unsafe { Mapped::new(&f, 0) }.is_none());
    }
}
