//! Safe wrappers of the raw system calls dbio's crates make (statvfs, statfs, getrlimit and
//! setrlimit, sysconf, geteuid, getrandom, posix_fadvise, fcntl, lseek SEEK_HOLE, the block-device ioctls, unshare, prctl, and
//! the signal calls of the binary: sigaction, signal, write to fd 2, _exit). The
//! `unsafe` of each call is here, once, with its `// SAFETY:` reason; the other crates call
//! these functions. (dbio-bench's I/O engines keep their own: that is the hot path.)

use std::ffi::CString;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} contains a NUL byte", path.display()),
        )
    })
}

/// The figures of statvfs(3) dbio reads, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FsSpace {
    /// The filesystem's size (`f_blocks * f_frsize`); 0 for filesystems that keep no block
    /// count (ramfs and friends).
    pub total_bytes: u64,
    /// Free for an unprivileged writer (`f_bavail * f_frsize`).
    pub avail_bytes: u64,
}

/// statvfs(3) of the filesystem holding `path`.
pub fn statvfs(path: &Path) -> io::Result<FsSpace> {
    let c = c_path(path)?;
    // SAFETY: statvfs is plain old data, for which all-zero bytes are a valid value.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `s` a valid out-pointer; the call writes only
    // into `s`.
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let frsize = s.f_frsize as u64;
    Ok(FsSpace {
        total_bytes: (s.f_blocks as u64).saturating_mul(frsize),
        avail_bytes: (s.f_bavail as u64).saturating_mul(frsize),
    })
}

/// Takes flock(2)'s exclusive lock on `f` without waiting: false when another open file
/// description holds it (or the call fails). The lock lasts as long as the file is open.
pub fn try_lock_exclusive(f: &impl AsRawFd) -> bool {
    // SAFETY: flock on a file descriptor the caller owns; no memory is passed.
    unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// statfs(2)'s `f_type` (the filesystem's magic number) of the filesystem holding `path`.
pub fn fs_magic(path: &Path) -> io::Result<u64> {
    let c = c_path(path)?;
    // SAFETY: statfs is plain old data, for which all-zero bytes are a valid value.
    let mut s: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `s` a valid out-pointer; the call writes only
    // into `s`.
    if unsafe { libc::statfs(c.as_ptr(), &mut s) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(s.f_type as u64)
}

/// Raises this process's soft limit on open files (RLIMIT_NOFILE) to its hard limit; returns
/// the (soft, hard) limits now in force (the soft one unchanged if raising it failed).
pub fn raise_open_file_limit() -> io::Result<(u64, u64)> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into `r`, a valid out-pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if r.rlim_cur < r.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: r.rlim_max,
            rlim_max: r.rlim_max,
        };
        // SAFETY: setrlimit reads one rlimit through a valid pointer; raising the soft limit up
        // to the hard one is always allowed.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            r = raised;
        }
    }
    Ok((r.rlim_cur, r.rlim_max))
}

/// The size of a memory page, in bytes.
pub fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions and touches no memory of ours.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as u64
    } else {
        4096
    }
}

/// Whether this process runs with effective user id 0.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Fills `buf` from the kernel's random source (getrandom(2)); false when it could not fill
/// all of it (`buf` is then left partly written).
pub fn random_bytes(buf: &mut [u8]) -> bool {
    // SAFETY: getrandom writes at most buf.len() bytes into the buffer it is given, which is
    // valid for that many bytes.
    let n = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    n >= 0 && n as usize == buf.len()
}

/// Advises the kernel to drop a file's cached pages (POSIX_FADV_DONTNEED over the whole
/// file); pages not yet written back stay. Advice: a failure is ignored.
pub fn drop_cache(f: &impl AsRawFd) {
    // SAFETY: an advisory call on a descriptor the caller holds open; it touches no memory.
    unsafe {
        libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
    }
}

/// The status flags of an open descriptor (fcntl F_GETFL: O_DIRECT, O_NOATIME, ...).
pub fn status_flags(f: &impl AsRawFd) -> io::Result<libc::c_int> {
    // SAFETY: F_GETFL on a descriptor the caller holds open only returns its flags.
    let fl = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETFL) };
    if fl < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fl)
}

/// `BLKGETSIZE64`: the size of an open block device, in bytes.
pub fn block_device_size(f: &impl AsRawFd) -> io::Result<u64> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which points at `size`.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), 0x8008_1272, &mut size) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size)
}

/// `BLKSSZGET`: the logical block size of an open block device, in bytes.
pub fn logical_block_size(f: &impl AsRawFd) -> io::Result<u64> {
    let mut v: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int through the pointer, which points at `v`.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), 0x1268, &mut v) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(v as u64)
}

/// `lseek(fd, 0, SEEK_HOLE)`: the offset of the first hole of an open file (its end when it has
/// none). Moves the descriptor's file offset there.
pub fn seek_hole(f: &impl AsRawFd) -> io::Result<u64> {
    // SAFETY: lseek on a descriptor the caller holds open only moves its file offset.
    let at = unsafe { libc::lseek(f.as_raw_fd(), 0, libc::SEEK_HOLE) };
    u64::try_from(at).map_err(|_| io::Error::last_os_error())
}

/// Gives the calling thread a private copy of the descriptor table (unshare CLONE_FILES): the
/// same open files under the same numbers, looked up without the shared table's reference
/// counting. A failure leaves the shared table, which works the same, only slower.
pub fn private_fd_table() {
    // SAFETY: unshare(2) with CLONE_FILES only affects the calling thread's own descriptor
    // table; it touches no memory of ours.
    unsafe {
        libc::unshare(libc::CLONE_FILES);
    }
}

/// Sets the calling thread's timer slack (PR_SET_TIMERSLACK), in nanoseconds. A failure (an
/// old kernel) leaves the default 50 us.
pub fn set_timer_slack_ns(ns: u64) {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and changes only the calling thread's
    // timer slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0);
    }
}

/// Whether this process may read the time-stamp counter (PR_GET_TSC is PR_TSC_ENABLE).
pub fn tsc_enabled() -> bool {
    let mut state: libc::c_int = 0;
    // SAFETY: PR_GET_TSC writes one int through the pointer, which points at `state`.
    let r = unsafe { libc::prctl(libc::PR_GET_TSC, &mut state as *mut libc::c_int) };
    r == 0 && state == libc::PR_TSC_ENABLE
}

/// A signal handler: a plain function that may only do async-signal-safe things (store to an
/// atomic, [`write_stderr`], [`exit_now`]).
pub type SignalHandler = extern "C" fn(libc::c_int);

/// Installs `handler` for signal `sig` (sigaction with an empty mask; with `once`,
/// SA_RESETHAND: the handler runs for the first signal only and the next one has the default
/// action).
pub fn on_signal(sig: libc::c_int, handler: SignalHandler, once: bool) -> io::Result<()> {
    // SAFETY: sigaction is plain old data, for which all-zero bytes are a valid value.
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    sa.sa_sigaction = handler as *const () as usize;
    sa.sa_flags = if once { libc::SA_RESETHAND } else { 0 };
    // SAFETY: sigemptyset initialises the mask of `sa`, a valid pointer; sigaction reads `sa`
    // and installs a handler that is an `extern "C" fn(c_int)`, as the kernel calls it; the old
    // action is not asked for (null).
    let r = unsafe {
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, std::ptr::null_mut())
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Gives signal `sig` its default action again.
pub fn default_signal(sig: libc::c_int) {
    // SAFETY: signal(2) with SIG_DFL frees nothing and touches no memory of ours.
    unsafe { libc::signal(sig, libc::SIG_DFL) };
}

/// Writes `bytes` to file descriptor 2 with one write(2), async-signal-safe (for a signal
/// handler: no lock, no allocation). A failed or short write is ignored.
pub fn write_stderr(bytes: &[u8]) {
    // SAFETY: write(2) is async-signal-safe and reads at most bytes.len() bytes from a valid
    // buffer.
    unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
}

/// Ends the process at once with `code` (_exit(2): no destructors, no flush; async-signal-safe).
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit is async-signal-safe, has no preconditions and never returns.
    unsafe { libc::_exit(code) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statvfs_of_a_real_directory_has_room_within_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let s = statvfs(dir.path()).unwrap();
        assert!(s.total_bytes > 0, "{s:?}");
        assert!(s.avail_bytes <= s.total_bytes, "{s:?}");
        let e = statvfs(Path::new("/nonexistent/dbio")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert_eq!(
            statvfs(Path::new("a\0b")).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
    }

    #[test]
    fn proc_is_procfs() {
        // PROC_SUPER_MAGIC.
        assert_eq!(fs_magic(Path::new("/proc")).unwrap(), 0x9fa0);
        assert!(fs_magic(Path::new("/nonexistent/dbio")).is_err());
    }

    #[test]
    fn the_open_file_limit_is_raised_to_the_hard_one() {
        let (soft, hard) = raise_open_file_limit().unwrap();
        assert_eq!(soft, hard);
    }

    #[test]
    fn pages_random_bytes_and_flags_are_read() {
        assert!(page_size().is_power_of_two() && page_size() >= 4096);
        let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
        assert!(random_bytes(&mut a) && random_bytes(&mut b));
        assert_ne!(a, b);
        let f = tempfile::tempfile().unwrap();
        let fl = status_flags(&f).unwrap();
        assert_eq!(fl & libc::O_ACCMODE, libc::O_RDWR);
        // A regular file is no block device.
        assert!(block_device_size(&f).is_err());
        assert!(logical_block_size(&f).is_err());
        drop_cache(&f);
        // An empty file has no byte, so no hole (ENXIO).
        assert!(seek_hole(&f).is_err());
        std::io::Write::write_all(&mut &f, &[1u8; 4096]).unwrap();
        assert_eq!(seek_hole(&f).unwrap(), 4096);
    }

    #[test]
    fn thread_settings_take_and_leave_the_files_open() {
        let f = tempfile::tempfile().unwrap();
        let fl = status_flags(&f).unwrap();
        std::thread::spawn(move || {
            private_fd_table();
            set_timer_slack_ns(1);
            // The private table holds the same open file under the same number.
            assert_eq!(status_flags(&f).unwrap(), fl);
        })
        .join()
        .unwrap();
        // PR_GET_TSC answers on x86_64 (enabled unless a seccomp policy forbids the counter).
        let _ = tsc_enabled();
    }

    static SEEN: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

    extern "C" fn note(sig: libc::c_int) {
        SEEN.store(sig, std::sync::atomic::Ordering::SeqCst);
    }

    #[test]
    fn a_handler_sees_its_signal_and_the_default_comes_back() {
        // SIGWINCH: ignored by default, so the default action is harmless to the test run.
        on_signal(libc::SIGWINCH, note, false).unwrap();
        // SAFETY: raise(3) sends a signal to this thread; its handler only stores an atomic.
        assert_eq!(unsafe { libc::raise(libc::SIGWINCH) }, 0);
        assert_eq!(
            SEEN.load(std::sync::atomic::Ordering::SeqCst),
            libc::SIGWINCH
        );
        default_signal(libc::SIGWINCH);
        assert!(on_signal(-1, note, true).is_err());
    }
}
