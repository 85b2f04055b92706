//! Reading a source in large chunks on several threads: memory-mapped for regular files
//! (no copy from the page cache), `pread` for block devices (a bad sector then becomes an
//! I/O error instead of a SIGBUS). Sources are only ever read.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// A read-only memory map of a whole file.
pub struct Mapped {
    ptr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is read-only (PROT_READ) and never handed out mutably; sharing
// immutable bytes between threads is sound.
unsafe impl Sync for Mapped {}
// SAFETY: as above; the mapping is not tied to the creating thread.
unsafe impl Send for Mapped {}

impl Mapped {
    /// Maps `len` bytes of `file` read-only; `None` when mapping is not possible.
    pub fn new(file: &File, len: u64) -> Option<Mapped> {
        use std::os::fd::AsRawFd;
        if len == 0 || len > usize::MAX as u64 {
            return None;
        }
        // SAFETY: a fresh read-only shared mapping of a valid open descriptor; the kernel
        // chooses the address; failure is checked below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return None;
        }
        // SAFETY: advice on the mapping just created; errors are harmless and ignored.
        unsafe {
            libc::madvise(ptr, len as usize, libc::MADV_SEQUENTIAL);
        }
        Some(Mapped {
            ptr,
            len: len as usize,
        })
    }

    /// Drops the pages of bytes `start..end` from this process's page tables (they stay in
    /// the page cache and are read again on the next access), so that a long sequential pass
    /// does not grow the resident set to the size of the file.
    pub fn release(&self, start: usize, end: usize) {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
        let lo = start / page * page;
        let hi = end.min(self.len);
        if hi <= lo {
            return;
        }
        // SAFETY: the range lies inside the mapping created in `new` (lo is page-aligned and
        // at most start, hi at most len). MADV_DONTNEED on a read-only shared file mapping
        // only unmaps the pages: a later read faults them in again with the same bytes, so
        // slices other threads hold stay valid. Errors are harmless and ignored.
        unsafe {
            libc::madvise(
                self.ptr.cast::<u8>().add(lo).cast(),
                hi - lo,
                libc::MADV_DONTNEED,
            );
        }
    }

    /// The mapped bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr/len describe a live PROT_READ mapping owned by self (unmapped in Drop).
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping created in `new`; no slice outlives self.
        unsafe {
            libc::munmap(self.ptr, self.len);
        }
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
/// `init`; returns the states. `progress(bytes_done)` is called after each chunk. Once
/// `cancel` is set no further chunk is started (the caller tells from the flag that the
/// states are partial).
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
) -> std::io::Result<Vec<S>> {
    let map = if use_mmap {
        Mapped::new(file, len)
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
    Ok(states.into_inner().unwrap_or_else(|p| p.into_inner()))
}
