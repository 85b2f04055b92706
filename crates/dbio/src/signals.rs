//! Ctrl-C (SIGINT) and SIGTERM end a run cleanly: the first one sets a flag the workers poll,
//! so the partial result is still printed and written; a second one kills as usual.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// What a command returns when a signal stopped it; [`exit_code`] turns it into 128 + the
/// signal's number, as a shell reports a process the signal killed (130 for SIGINT, 143 for
/// SIGTERM).
pub const EXIT_INTERRUPTED: u8 = 130;

/// Set when SIGINT or SIGTERM arrived.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// The first signal that arrived (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    let _ = SIGNAL.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
    STOP.store(true, Ordering::SeqCst);
}

/// The process's exit code for a command's `code`: an interrupted command exits 128 + the
/// number of the signal that stopped it (SIGTERM: 143; SIGINT: 130), every other code is
/// kept.
pub fn exit_code(code: u8) -> u8 {
    match SIGNAL.load(Ordering::SeqCst) {
        sig if code == EXIT_INTERRUPTED && sig > 0 && sig < 128 => 128 + sig as u8,
        _ => code,
    }
}

/// Installs the handlers (once per process). SA_RESETHAND: the second signal is fatal.
pub fn install() -> &'static AtomicBool {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // The handler only stores to atomics (async-signal-safe). A signal that cannot be
        // caught (never for these two) keeps its default action: a run then ends without its
        // partial result, as it did before handlers existed.
        let _ = dbio_sys::os::on_signal(sig, on_signal, true);
    }
    &STOP
}

/// Runs `check` on a thread of its own once SIGINT or SIGTERM arrived and `grace` has passed
/// since, then every 50 ms until it returns `true` (or exits the process). For a command whose
/// work can block in a call that a signal does not interrupt (a read from a server that stopped
/// answering: the read resumes after the handler): `check` decides whether the work is still
/// blocked, says what was in flight and exits.
pub fn after_stop(grace: std::time::Duration, mut check: impl FnMut() -> bool + Send + 'static) {
    std::thread::spawn(move || {
        while !STOP.load(Ordering::SeqCst) {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        std::thread::sleep(grace);
        while !check() {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    });
}

/// The file being read through a memory map, for the SIGBUS message: a leaked, never freed
/// byte string (one per mapped source), so the handler can read it at any time.
static MAPPED_PATH: std::sync::atomic::AtomicPtr<u8> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());
static MAPPED_LEN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Exit code after a memory-mapped read failed (the work failed).
pub const EXIT_MAP_FAULT: i32 = 1;

extern "C" fn on_sigbus(_sig: libc::c_int) {
    let path = MAPPED_PATH.load(Ordering::SeqCst);
    let len = MAPPED_LEN.load(Ordering::SeqCst);
    let parts: [&[u8]; 3] = [
        b"dbio: reading ",
        if path.is_null() {
            b"a memory-mapped file"
        } else {
            // SAFETY: path/len come from a leaked boxed slice that is never freed; a non-null
            // pointer is stored only after its own length (see catch_map_faults).
            unsafe { std::slice::from_raw_parts(path, len) }
        },
        b" through its memory map failed (SIGBUS): the file shrank while it was read (another \
process truncated it) or the disk could not read a page of it. The output above is \
incomplete. Run again with --no-mmap, which reads with pread and reports a short read or \
the I/O error instead.\n",
    ];
    for p in parts {
        // A failed write changes nothing: the process exits next either way.
        dbio_sys::os::write_stderr(p);
    }
    dbio_sys::os::exit_now(EXIT_MAP_FAULT);
}

/// Sleeps until `due` in steps of at most 50 ms; returns early with `true` when SIGINT or
/// SIGTERM arrived (see [`install`]).
pub fn sleep_until(due: std::time::Instant) -> bool {
    loop {
        if STOP.load(Ordering::SeqCst) {
            return true;
        }
        let now = std::time::Instant::now();
        if due <= now {
            return false;
        }
        std::thread::sleep((due - now).min(std::time::Duration::from_millis(50)));
    }
}

/// While the returned guard lives, a SIGBUS is taken as a failed read of the memory map of
/// the file last named to [`catch_map_faults`]; dropping it restores the default action.
#[must_use = "the handler is removed when the guard is dropped"]
pub struct MapFaultGuard(());

impl Drop for MapFaultGuard {
    fn drop(&mut self) {
        // No handler state is freed (the path strings are leaked on purpose).
        dbio_sys::os::default_signal(libc::SIGBUS);
    }
}

/// Before reading `path` through a memory map: a SIGBUS (the file truncated by another
/// process, or a page the disk cannot read) then prints what happened, naming `path`, and
/// exits 1 instead of the shell's bare "Bus error". Keep the guard while the map is read.
pub fn catch_map_faults(path: &std::path::Path) -> MapFaultGuard {
    use std::os::unix::ffi::OsStrExt;
    let bytes: &'static mut [u8] =
        Box::leak(path.as_os_str().as_bytes().to_vec().into_boxed_slice());
    // The handler may run between these stores: the pointer is cleared first, so it never
    // pairs an old path with a new, longer length.
    MAPPED_PATH.store(std::ptr::null_mut(), Ordering::SeqCst);
    MAPPED_LEN.store(bytes.len(), Ordering::SeqCst);
    MAPPED_PATH.store(bytes.as_mut_ptr(), Ordering::SeqCst);
    // The handler only reads atomics and leaked memory, writes to fd 2 and calls _exit, all
    // async-signal-safe. SIGBUS can always be caught.
    let _ = dbio_sys::os::on_signal(libc::SIGBUS, on_sigbus, false);
    MapFaultGuard(())
}
