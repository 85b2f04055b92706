//! Helpers shared by the integration tests (each test binary uses some of them).
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// A prerequisite of a test is missing. Under `scripts/test.sh` (which sets
/// `DBIO_TESTS_REQUIRE_ALL=1`) that is a failure, so a test can never pass without running;
/// elsewhere (a developer's laptop without root) it is reported and the test returns.
pub fn skip(why: &str) {
    assert!(
        std::env::var_os("DBIO_TESTS_REQUIRE_ALL").is_none(),
        "prerequisite missing: {why}"
    );
    eprintln!("{why}");
}

/// Whether the tests run as root (loop devices, mounts).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A loop device over an image file, detached on drop.
pub struct LoopDev {
    /// `/dev/loopN`.
    pub dev: String,
}

impl LoopDev {
    /// `losetup --find --show [extra...] IMAGE`.
    pub fn attach(image: &Path, extra: &[&str]) -> LoopDev {
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .args(extra)
            .arg(image)
            .output()
            .expect("run losetup");
        assert!(
            out.status.success(),
            "losetup needs root: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        LoopDev {
            dev: String::from_utf8(out.stdout).unwrap().trim().to_string(),
        }
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}
