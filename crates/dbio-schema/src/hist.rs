//! Latency histograms: log-linear (HdrHistogram, 2 significant digits, so every recorded value
//! is known to within 1/128 < 1% of itself), mergeable across threads, intervals and runs, and
//! serialisable as sparse `[value_ns, count]` buckets so a result file can be merged later.
//!
//! Minimum, maximum and sum are kept exactly beside the buckets: `min`, `max` and `mean` are exact,
//! percentiles carry the bucket error. Values above one hour saturate into the last bucket
//! (they are still counted, and `max` stays exact).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// The largest value the buckets resolve (1 hour in ns); larger values saturate there.
pub const HIGHEST_NS: u64 = 3_600_000_000_000;
/// Significant digits of the buckets: 2 gives a relative error of at most 1/128.
pub const SIGFIG: u8 = 2;

/// A latency histogram in nanoseconds.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    hist: Histogram<u64>,
    min: u64,
    max: u64,
    sum: u128,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialEq for LatencyHistogram {
    fn eq(&self, other: &Self) -> bool {
        self.min == other.min
            && self.max == other.max
            && self.sum == other.sum
            && self.buckets() == other.buckets()
    }
}

impl LatencyHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        let hist = Histogram::new_with_bounds(1, HIGHEST_NS, SIGFIG)
            .expect("constant histogram bounds are valid");
        Self {
            hist,
            min: u64::MAX,
            max: 0,
            sum: 0,
        }
    }

    /// Records one value. Never allocates and never fails.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.record_n(ns, 1);
    }

    /// Records `count` occurrences of one value.
    #[inline]
    pub fn record_n(&mut self, ns: u64, count: u64) {
        if count == 0 {
            return;
        }
        self.hist.saturating_record_n(ns.max(1), count);
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        self.sum += ns as u128 * count as u128;
    }

    /// Number of recorded values.
    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// Exact smallest value, 0 when empty.
    pub fn min(&self) -> u64 {
        if self.count() == 0 {
            0
        } else {
            self.min
        }
    }

    /// Exact largest value, 0 when empty.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Exact sum of the recorded values.
    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// Exact mean, 0 when empty.
    pub fn mean(&self) -> f64 {
        if self.count() == 0 {
            0.0
        } else {
            self.sum as f64 / self.count() as f64
        }
    }

    /// The value at percentile `p` (0..=100): the highest value of the bucket that holds it,
    /// clamped to the exact min and max. 0 when empty.
    pub fn percentile(&self, p: f64) -> u64 {
        if self.count() == 0 {
            return 0;
        }
        self.hist
            .value_at_quantile((p / 100.0).clamp(0.0, 1.0))
            .clamp(self.min, self.max)
    }

    /// Adds every value of `other` to this histogram.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        if other.count() == 0 {
            return;
        }
        self.hist
            .add(&other.hist)
            .expect("histograms share the same bounds");
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum = self.sum.saturating_add(other.sum);
    }

    /// Empties the histogram, keeping its memory.
    pub fn reset(&mut self) {
        self.hist.reset();
        self.min = u64::MAX;
        self.max = 0;
        self.sum = 0;
    }

    /// Sparse buckets: `(highest value of the bucket in ns, count)` for every non-empty bucket,
    /// in increasing order.
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        self.hist
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    /// The serialisable form.
    pub fn to_data(&self) -> HistogramData {
        HistogramData {
            sigfig: SIGFIG,
            min_ns: self.min(),
            max_ns: self.max,
            sum_ns: self.sum,
            count: self.count(),
            buckets: self.buckets(),
        }
    }

    /// Rebuilds a histogram from its serialised form (for merging saved runs).
    pub fn from_data(data: &HistogramData) -> Self {
        let mut h = Self::new();
        for &(v, c) in &data.buckets {
            h.hist.saturating_record_n(v.max(1), c);
        }
        if h.count() > 0 {
            h.min = data.min_ns;
            h.max = data.max_ns;
            h.sum = data.sum_ns;
        }
        h
    }
}

/// A histogram as stored in result files.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HistogramData {
    /// Significant digits of the buckets.
    pub sigfig: u8,
    /// Exact minimum (ns).
    pub min_ns: u64,
    /// Exact maximum (ns).
    pub max_ns: u64,
    /// Exact sum (ns).
    pub sum_ns: u128,
    /// Number of values.
    pub count: u64,
    /// `[highest value of bucket (ns), count]` for every non-empty bucket.
    pub buckets: Vec<(u64, u64)>,
}

impl HistogramData {
    /// The value at percentile `p` (0..=100) read straight from the sparse buckets, equal to
    /// [`LatencyHistogram::percentile`] of the same histogram without building it (a report
    /// reads tens of thousands of interval histograms). 0 when empty.
    pub fn percentile(&self, p: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let q = (p / 100.0).clamp(0.0, 1.0);
        let want = ((q * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for &(v, c) in &self.buckets {
            seen = seen.saturating_add(c);
            if seen >= want {
                // max then min, not clamp: a damaged file's min_ns above max_ns gives a
                // wrong value here (BenchResult::check refuses such a file), never a panic.
                return v.max(self.min_ns).min(self.max_ns);
            }
        }
        self.max_ns
    }

    /// Adds every value of `other` (buckets of the same layout add by their key).
    pub fn merge(&mut self, other: &HistogramData) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = other.clone();
            return;
        }
        let (a, b) = (&self.buckets, &other.buckets);
        let mut out = Vec::with_capacity(a.len().max(b.len()));
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            match (a.get(i), b.get(j)) {
                (Some(&(va, ca)), Some(&(vb, cb))) if va == vb => {
                    out.push((va, ca.saturating_add(cb)));
                    i += 1;
                    j += 1;
                }
                (Some(&(va, ca)), Some(&(vb, _))) if va < vb => {
                    out.push((va, ca));
                    i += 1;
                }
                (Some(_), Some(&x)) | (None, Some(&x)) => {
                    out.push(x);
                    j += 1;
                }
                (Some(&x), None) => {
                    out.push(x);
                    i += 1;
                }
                (None, None) => unreachable!("loop condition"),
            }
        }
        self.buckets = out;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        self.sum_ns = self.sum_ns.saturating_add(other.sum_ns);
        self.count = self.count.saturating_add(other.count);
    }

    /// Exact mean, 0 when empty.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_min_max_mean_and_bounded_percentiles() {
        let mut h = LatencyHistogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 10);
        }
        assert_eq!(h.count(), 100_000);
        assert_eq!(h.min(), 10);
        assert_eq!(h.max(), 1_000_000);
        assert!((h.mean() - 500_005.0).abs() < 1e-6);
        for p in [50.0, 90.0, 99.0, 99.9, 99.99] {
            let exact = (p / 100.0 * 100_000.0_f64).ceil() * 10.0;
            let got = h.percentile(p) as f64;
            let err = (got - exact).abs() / exact;
            assert!(err <= 0.01, "p{p}: got {got}, exact {exact}, error {err}");
        }
    }

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        let mut all = LatencyHistogram::new();
        for v in 0..5000u64 {
            let x = v * v % 7919 + 100;
            if v % 3 == 0 {
                a.record(x)
            } else {
                b.record(x)
            }
            all.record(x);
        }
        a.merge(&b);
        assert_eq!(a, all);
    }

    #[test]
    fn serialised_form_round_trips_and_merges() {
        let mut h = LatencyHistogram::new();
        for v in [120, 130, 5_000, 5_000, 9_999_999, 7_200_000_000_000] {
            h.record(v);
        }
        let data = h.to_data();
        let json = serde_json::to_string(&data).unwrap();
        let back = LatencyHistogram::from_data(&serde_json::from_str(&json).unwrap());
        assert_eq!(back, h);
        assert_eq!(
            back.max(),
            7_200_000_000_000,
            "saturated value keeps its exact max"
        );
        assert_eq!(
            back.percentile(50.0),
            back.percentile(50.0).clamp(5_000, 5_039)
        );
    }

    #[test]
    fn empty_histogram_reports_zeros() {
        let h = LatencyHistogram::new();
        assert_eq!(
            (h.count(), h.min(), h.max(), h.percentile(99.0)),
            (0, 0, 0, 0)
        );
        assert_eq!(h.mean(), 0.0);
    }

    #[test]
    fn sparse_percentiles_and_merge_equal_the_histogram_s() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        let mut all = LatencyHistogram::new();
        for v in 0..20_000u64 {
            let x = (v * v * 7 + 13) % 1_000_003 + 50;
            if v % 5 == 0 {
                a.record(x)
            } else {
                b.record(x * 3)
            }
            all.record(if v % 5 == 0 { x } else { x * 3 });
        }
        let mut d = a.to_data();
        d.merge(&b.to_data());
        assert_eq!(d, all.to_data());
        let mut empty = HistogramData::default();
        empty.merge(&d);
        assert_eq!(empty, d);
        for p in [0.0, 1.0, 50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 100.0] {
            assert_eq!(d.percentile(p), all.percentile(p), "p{p}");
            assert_eq!(a.to_data().percentile(p), a.percentile(p), "p{p}");
        }
        assert_eq!(HistogramData::default().percentile(99.0), 0);
        assert_eq!(d.mean(), all.mean());
    }
}
