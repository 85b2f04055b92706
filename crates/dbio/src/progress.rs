//! Progress of long byte-counted work on stderr (indicatif), for every long command: bench
//! prepare, innodb pages and innodb grep. Nothing is drawn when stderr is not a terminal
//! (a pipe, a file, `2>&1` into a log), so redirected output never holds progress lines; a
//! failed write to the terminal is ignored and never stops the work.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicU64, Ordering};

/// A progress bar over `total` bytes. Shareable between worker threads.
pub struct Progress {
    bar: ProgressBar,
    /// The furthest position reported: worker threads report cumulative counts that may
    /// arrive out of order, and the bar never moves back.
    furthest: AtomicU64,
}

impl Progress {
    /// A bar over `total` bytes, each line starting with `prefix` (may be empty), redrawn
    /// at most four times a second; hidden when stderr is not a terminal.
    pub fn bytes(prefix: &str, total: u64) -> Progress {
        Progress::with_template(
            prefix,
            total,
            "{prefix}[{wide_bar}] {binary_bytes} of {binary_total_bytes} \
             ({binary_bytes_per_sec}){msg}, ETA {eta}",
        )
    }

    fn with_template(prefix: &str, total: u64, template: &str) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(4));
        let style = ProgressStyle::with_template(template)
            .expect("the template is valid")
            .progress_chars("=> ");
        bar.set_style(style);
        bar.set_prefix(prefix.to_string());
        Progress {
            bar,
            furthest: AtomicU64::new(0),
        }
    }

    /// A bar over `total` rows (a chunked job's key rows, the server's estimate), with the
    /// rate and ETA; hidden when stderr is not a terminal.
    pub fn rows(prefix: &str, total: u64) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(4));
        let style = ProgressStyle::with_template(
            "{prefix}[{wide_bar}] {human_pos} of ~{human_len} key rows ({rate}){msg}, ETA {eta}",
        )
        .expect("the template is valid")
        .with_key(
            "rate",
            |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.0}/s", s.per_sec());
            },
        )
        .progress_chars("=> ");
        bar.set_style(style);
        bar.set_prefix(prefix.to_string());
        Progress {
            bar,
            furthest: AtomicU64::new(0),
        }
    }

    /// A bar over `total` steps (the points of a sweep), with the step being run as its
    /// message, the elapsed time and the ETA; hidden when stderr is not a terminal.
    pub fn steps(prefix: &str, total: u64) -> Progress {
        Progress::with_template(
            prefix,
            total,
            "{prefix}[{wide_bar}] {pos}/{len} {msg} (elapsed {elapsed}, ETA {eta})",
        )
    }

    /// Runs `f` (which writes to stderr) with the bar cleared, then redraws it.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }

    /// Changes the total (a better estimate arrived), never below the position.
    pub fn set_length(&self, total: u64) {
        self.bar.set_length(total.max(self.bar.position()));
    }

    /// Shows what is being done now.
    pub fn message(&self, msg: &str) {
        self.bar.set_message(msg.to_string());
    }

    /// Reports `done` bytes so far (cumulative).
    pub fn set(&self, done: u64) {
        let before = self.furthest.fetch_max(done, Ordering::Relaxed);
        if done > before {
            self.bar.set_position(done);
        }
    }

    /// Reports `done` units and a count of things found so far (`, 12 pages`).
    pub fn set_found(&self, done: u64, found: u64, what: &str) {
        self.bar.set_message(format!(", {found} {what}"));
        self.set(done);
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        // An early return (an error, Ctrl-C) leaves no half-drawn bar behind.
        if !self.bar.is_finished() {
            self.bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_off_a_terminal_and_never_moves_back() {
        // Under `cargo test` stderr is captured or piped, not a terminal.
        let p = Progress::bytes("prepare: ", 100);
        if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            assert!(p.bar.is_hidden());
        }
        p.set(60);
        p.set(40);
        assert_eq!(p.bar.position(), 60);
        p.set_found(80, 3, "pages");
        assert_eq!(p.bar.position(), 80);
        assert_eq!(p.bar.message(), ", 3 pages");
        p.finish();
        assert!(p.bar.is_finished());
    }
}
