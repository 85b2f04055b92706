//! Helpers shared by the integration tests (declared once in tests.rs, used as
//! `crate::common::...`).
//!
//! A test that needs root, a loop device or a tool is `#[ignore = "needs ..."]` and starts with
//! [`require_root`] / [`require_tool`]: a plain `cargo test` leaves it out (and says so), while
//! scripts/test.sh runs it with `--include-ignored`, where a missing prerequisite fails.

use std::path::Path;
use std::process::{Command, Stdio};

pub mod job;
pub mod mariadb;

/// The dbio binary under test.
pub fn dbio() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("dbio").unwrap()
}

/// Runs `f` while a thread of this process keeps a CPU busy, so that a measurement of the
/// machine over a short interval (`dbio model live`) never finds every resource idle on a
/// quiet machine.
pub fn with_cpu_load<T>(f: impl FnOnce() -> T) -> T {
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut x = 0u64;
            while !stop.load(Ordering::Relaxed) {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        });
        let out = f();
        stop.store(true, Ordering::Relaxed);
        out
    })
}

/// Whether the tests run as root (loop devices, mounts).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Fails the test unless it runs as root.
pub fn require_root(what: &str) {
    assert!(is_root(), "needs root ({what})");
}

/// Fails the test unless `cmd` can be started (`cmd args`, e.g. `promtool --version`);
/// `hint` says where the tool comes from.
pub fn require_tool(cmd: &str, args: &[&str], hint: &str) {
    let ran = Command::new(cmd)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    assert!(ran.is_ok(), "needs {cmd} ({hint}): {}", ran.unwrap_err());
}

/// `promtool check metrics` (Prometheus' own parser and linter) accepts `text`. Fails when
/// promtool is missing (scripts/setup-test-env.sh installs it) or refuses `text`.
pub fn promtool_check(text: &str) {
    use std::io::Write;
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect(
            "needs promtool (Debian package prometheus; scripts/setup-test-env.sh installs it)",
        );
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool check metrics failed:\n{}{}\non:\n{text}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
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
