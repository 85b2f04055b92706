//! The bounded ring of the last `--pre` seconds of cheap samples, written out when the trigger
//! fires so the capture shows the lead-up.
//!
//! The bound: the ring holds the samples of the last `max_age` seconds, and never more than
//! `max_bytes` by the samples' own measure ([`Weigh::weight`]: the bytes of their text and
//! rows, which is what grows; the fixed part of a sample is counted too). When a new sample
//! would pass either bound the oldest go first; one sample larger than `max_bytes` alone is
//! kept alone (the ring is never empty after a push) and said so by [`Ring::over`]. The
//! stalker's default is 64 MiB (`--pre-memory`), far above the minute of a busy server (a
//! sample of 500 status variables, 50 devices and 1,000 threads weighs about 300 KiB).

use std::collections::VecDeque;

/// What a sample costs in memory, in bytes (an estimate that counts every heap buffer).
pub trait Weigh {
    /// Bytes.
    fn weight(&self) -> usize;
}

/// A time-bounded, byte-bounded ring.
#[derive(Debug)]
pub struct Ring<T> {
    items: VecDeque<(f64, T, usize)>,
    bytes: usize,
    max_age: f64,
    max_bytes: usize,
}

impl<T: Weigh> Ring<T> {
    /// An empty ring keeping `max_age` seconds and at most `max_bytes`.
    pub fn new(max_age: f64, max_bytes: usize) -> Ring<T> {
        Ring {
            items: VecDeque::new(),
            bytes: 0,
            max_age,
            max_bytes,
        }
    }
    /// Adds the sample taken at `ts` (seconds) and drops what falls out of either bound.
    pub fn push(&mut self, ts: f64, item: T) {
        let w = item.weight();
        self.items.push_back((ts, item, w));
        self.bytes += w;
        while self.items.len() > 1
            && (self.bytes > self.max_bytes
                || self.items.front().is_some_and(|f| ts - f.0 > self.max_age))
        {
            if let Some((_, _, w)) = self.items.pop_front() {
                self.bytes -= w;
            }
        }
    }
    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
    /// Samples held.
    pub fn len(&self) -> usize {
        self.items.len()
    }
    /// Whether the ring is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    /// Whether one sample alone is over the byte bound.
    pub fn over(&self) -> bool {
        self.bytes > self.max_bytes
    }
    /// The samples, oldest first, with their times.
    pub fn iter(&self) -> impl Iterator<Item = (f64, &T)> {
        self.items.iter().map(|(t, i, _)| (*t, i))
    }
    /// Takes every sample out, oldest first.
    pub fn drain(&mut self) -> Vec<(f64, T)> {
        self.bytes = 0;
        self.items.drain(..).map(|(t, i, _)| (t, i)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Blob(Vec<u8>);
    impl Weigh for Blob {
        fn weight(&self) -> usize {
            std::mem::size_of::<Blob>() + self.0.capacity()
        }
    }

    #[test]
    fn keeps_the_last_max_age_seconds() {
        let mut r = Ring::new(60.0, usize::MAX);
        for t in 0..200 {
            r.push(t as f64, Blob(vec![0; 10]));
        }
        let times: Vec<f64> = r.iter().map(|(t, _)| t).collect();
        assert_eq!(times.first(), Some(&139.0));
        assert_eq!(times.last(), Some(&199.0));
        assert_eq!(r.len(), 61);
    }

    #[test]
    fn never_holds_more_than_max_bytes() {
        let max = 100_000;
        let mut r = Ring::new(1e9, max);
        let mut peak = 0;
        for t in 0..10_000 {
            // Samples of varied size, 0..3 KiB each.
            r.push(t as f64, Blob(vec![0; (t * 37) % 3000]));
            peak = peak.max(r.bytes());
            assert!(r.bytes() <= max, "at {t}: {} bytes", r.bytes());
        }
        assert!(peak > max - 3100, "the ring fills up to its bound: {peak}");
        // The count of bytes is the sum of what is held.
        let sum: usize = r.iter().map(|(_, b)| b.weight()).sum();
        assert_eq!(sum, r.bytes());
        assert!(!r.over());
    }

    #[test]
    fn one_oversized_sample_is_kept_alone() {
        let mut r = Ring::new(60.0, 1000);
        r.push(0.0, Blob(vec![0; 10]));
        r.push(1.0, Blob(vec![0; 5000]));
        assert_eq!(r.len(), 1);
        assert!(r.over());
        r.push(2.0, Blob(vec![0; 10]));
        assert_eq!(r.len(), 1);
        assert!(!r.over());
        let d = r.drain();
        assert_eq!(d.len(), 1);
        assert_eq!(r.bytes(), 0);
        assert!(r.is_empty());
    }
}
