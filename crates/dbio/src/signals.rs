//! Ctrl-C (SIGINT) and SIGTERM end a run cleanly: the first one sets a flag the workers poll,
//! so the partial result is still printed and written; a second one kills as usual.

use std::sync::atomic::{AtomicBool, Ordering};

/// Exit code of a command that a signal stopped (128 + SIGINT, as a shell reports it).
pub const EXIT_INTERRUPTED: u8 = 130;

/// Set when SIGINT or SIGTERM arrived.
pub static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_sig: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Installs the handlers (once per process). SA_RESETHAND: the second signal is fatal.
pub fn install() -> &'static AtomicBool {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction with a handler that only stores to an atomic, which is
        // async-signal-safe; sigemptyset initialises the mask before use.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            sa.sa_flags = libc::SA_RESETHAND;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
    &STOP
}
