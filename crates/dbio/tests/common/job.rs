//! A `dbio` run in the background, for the tests that act on it while it runs (signals, a
//! server stopped under it): its stderr lines collected as they come, killed when dropped.

use std::io::BufRead;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running `dbio` whose stderr lines are collected as they come; killed when dropped.
pub struct Job {
    pub child: Child,
    stderr: Arc<Mutex<Vec<String>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Job {
    pub fn spawn(args: &[String]) -> Job {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbio"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let lines = stderr.clone();
        let pipe = child.stderr.take().unwrap();
        let reader = std::thread::spawn(move || {
            for l in std::io::BufReader::new(pipe).lines() {
                lines.lock().unwrap().push(l.unwrap_or_default());
            }
        });
        Job {
            child,
            stderr,
            reader: Some(reader),
        }
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }

    /// Waits until `cond` holds, failing when the job exits first or after `secs`.
    pub fn wait_for(&mut self, what: &str, secs: u64, mut cond: impl FnMut(&Job) -> bool) {
        let t0 = Instant::now();
        while !cond(self) {
            if let Some(st) = self.child.try_wait().unwrap() {
                panic!(
                    "the job ended ({st}) before {what}; stderr:\n{}",
                    self.stderr()
                );
            }
            assert!(
                t0.elapsed() < Duration::from_secs(secs),
                "no {what} in {secs} s; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn signal(&self, sig: libc::c_int) {
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(
            unsafe { libc::kill(self.child.id() as libc::pid_t, sig) },
            0
        );
    }

    /// Waits for the exit, at most `secs` (then the test fails): (code, stdout, stderr).
    pub fn finish(mut self, secs: u64) -> (Option<i32>, String, String) {
        let t0 = Instant::now();
        while self.child.try_wait().unwrap().is_none() {
            if t0.elapsed() > Duration::from_secs(secs) {
                let _ = self.child.kill();
                panic!(
                    "the job did not end in {secs} s; stderr:\n{}",
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut out = String::new();
        std::io::Read::read_to_string(&mut self.child.stdout.take().unwrap(), &mut out).unwrap();
        self.reader.take().unwrap().join().unwrap();
        let code = self.child.wait().unwrap().code();
        (code, out, self.stderr())
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}
