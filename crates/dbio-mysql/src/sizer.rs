//! The chunk size: how many key rows the next chunk walks so that it takes about the target
//! chunk time. pt-online-schema-change's weighted average (each new chunk counts fully, the
//! past decays by 0.75: `avg_n = 0.75 avg_n + n`, `avg_t = 0.75 avg_t + t`, next = `avg_n /
//! avg_t x target`), bounded by a minimum and a maximum, growing at most 1.5x per chunk (a
//! cold cache makes the first chunks slow, a warm one fast: without the cap one lucky chunk
//! would jump the size by orders of magnitude) and cut to a tenth when a chunk took five times
//! the target (Spirit's rule: the server is struggling, back off at once).

use std::time::Duration;

/// Decay of the weighted averages (pt-online-schema-change's 0.75).
pub const DECAY: f64 = 0.75;
/// The largest growth from one chunk to the next.
pub const MAX_GROWTH: f64 = 1.5;
/// A chunk that took this many times the target cuts the size to a tenth.
pub const PANIC_FACTOR: f64 = 5.0;

/// The sizer's bounds and target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SizerConfig {
    /// The time each chunk should take.
    pub target: Duration,
    /// The smallest chunk, in key rows (at least 1).
    pub min: u64,
    /// The largest chunk, in key rows.
    pub max: u64,
}

/// The adaptive chunk size.
#[derive(Clone, Debug)]
pub struct ChunkSizer {
    cfg: SizerConfig,
    avg_rows: f64,
    avg_secs: f64,
    current: u64,
}

impl ChunkSizer {
    /// A sizer starting at `initial` key rows (clamped to the bounds).
    pub fn new(cfg: SizerConfig, initial: u64) -> ChunkSizer {
        let cfg = SizerConfig {
            min: cfg.min.max(1),
            max: cfg.max.max(cfg.min.max(1)),
            ..cfg
        };
        ChunkSizer {
            cfg,
            avg_rows: 0.0,
            avg_secs: 0.0,
            current: initial.clamp(cfg.min, cfg.max),
        }
    }

    /// The size of the next chunk, in key rows.
    pub fn current(&self) -> u64 {
        self.current
    }

    /// Records a finished chunk that walked `rows` key rows in `took`, and returns the size of
    /// the next one.
    pub fn record(&mut self, rows: u64, took: Duration) -> u64 {
        let secs = took.as_secs_f64().max(1e-6);
        let target = self.cfg.target.as_secs_f64();
        if secs >= PANIC_FACTOR * target {
            // Forget the history: it describes a server that is no longer there.
            self.avg_rows = 0.0;
            self.avg_secs = 0.0;
            self.current = (self.current / 10).clamp(self.cfg.min, self.cfg.max);
            return self.current;
        }
        self.avg_rows = DECAY * self.avg_rows + rows as f64;
        self.avg_secs = DECAY * self.avg_secs + secs;
        let want = self.avg_rows / self.avg_secs * target;
        let cap = self.current as f64 * MAX_GROWTH;
        let next = want.min(cap).floor();
        self.current = if next.is_finite() && next >= 1.0 {
            (next as u64).clamp(self.cfg.min, self.cfg.max)
        } else {
            self.cfg.min
        };
        self.current
    }

    /// After a lock wait timeout or a deadlock: halves the size (not below the minimum) and
    /// returns it.
    pub fn shrink(&mut self) -> u64 {
        self.current = (self.current / 2).clamp(self.cfg.min, self.cfg.max);
        self.current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(min: u64, max: u64) -> SizerConfig {
        SizerConfig {
            target: Duration::from_millis(500),
            min,
            max,
        }
    }

    #[test]
    fn fast_chunks_grow_at_most_one_and_a_half_times_per_step() {
        let mut s = ChunkSizer::new(cfg(10, 1_000_000), 1000);
        // 1000 rows in 5 ms: the rate says 100k rows per 0.5 s; the cap says 1500.
        assert_eq!(s.record(1000, Duration::from_millis(5)), 1500);
        assert_eq!(s.record(1500, Duration::from_millis(7)), 2250);
        assert_eq!(s.record(2250, Duration::from_millis(11)), 3375);
    }

    #[test]
    fn settles_on_the_rate_times_the_target() {
        let mut s = ChunkSizer::new(cfg(10, 1_000_000), 1000);
        // A server that does exactly 10k rows/s: the target 0.5 s is 5000 rows.
        let mut n = s.current();
        for _ in 0..40 {
            n = s.record(n, Duration::from_secs_f64(n as f64 / 10_000.0));
        }
        assert_eq!(n, 5000);
    }

    #[test]
    fn slow_chunks_shrink_by_the_weighted_average() {
        let mut s = ChunkSizer::new(cfg(10, 1_000_000), 1000);
        // 1000 rows in 1 s: 500 rows per 0.5 s.
        assert_eq!(s.record(1000, Duration::from_secs(1)), 500);
        // Then 500 rows in 1 s: avg_n = 750 + 500, avg_t = 0.75 + 1: 1250/1.75*0.5 = 357.
        assert_eq!(s.record(500, Duration::from_secs(1)), 357);
    }

    #[test]
    fn five_times_over_the_target_cuts_to_a_tenth_and_forgets() {
        let mut s = ChunkSizer::new(cfg(10, 1_000_000), 5000);
        assert_eq!(s.record(5000, Duration::from_millis(2600)), 500);
        // The history is gone: the next chunk alone decides (500 rows in 0.25 s -> 1000, but
        // the growth cap gives 750).
        assert_eq!(s.record(500, Duration::from_millis(250)), 750);
    }

    #[test]
    fn bounds_hold_and_shrink_halves() {
        let mut s = ChunkSizer::new(cfg(100, 2000), 50);
        assert_eq!(s.current(), 100);
        assert_eq!(s.record(100, Duration::from_secs(3)), 100);
        let mut s = ChunkSizer::new(cfg(100, 2000), 1900);
        assert_eq!(s.record(1900, Duration::from_millis(1)), 2000);
        assert_eq!(s.shrink(), 1000);
        assert_eq!(s.shrink(), 500);
        assert_eq!(s.shrink(), 250);
        assert_eq!(s.shrink(), 125);
        assert_eq!(s.shrink(), 100);
        // A zero-row chunk (nothing left in the range) does not divide by zero.
        let mut s = ChunkSizer::new(cfg(1, 10), 5);
        assert_eq!(s.record(0, Duration::ZERO), 1);
    }
}
