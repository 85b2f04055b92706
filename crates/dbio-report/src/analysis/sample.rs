//! The one input of the detectors (stalls, steady state): a measured interval.

/// One measured interval as the detectors see it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Start, seconds since the run started.
    pub start_s: f64,
    /// End.
    pub end_s: f64,
    /// Throughput.
    pub iops: f64,
    /// p99 latency.
    pub p99_ns: u64,
}

/// A series of 0.1 s samples with these throughputs (tests of the detectors).
#[cfg(test)]
pub(crate) fn series(iops: &[f64]) -> Vec<Sample> {
    iops.iter()
        .enumerate()
        .map(|(i, &v)| Sample {
            start_s: i as f64 * 0.1,
            end_s: (i + 1) as f64 * 0.1,
            iops: v,
            p99_ns: 100_000,
        })
        .collect()
}
