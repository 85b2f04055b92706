//! The default run's verdict: how long a transaction with one commit and N page misses waits
//! on storage, from the histograms of the data-page phase (its reads) and of the commit phase
//! (each record's write and sync).
//!
//! Means add exactly (a transaction's mean wait is N page-read means plus the commit's mean).
//! A percentile of a sum does not add: it is computed from [`SAMPLES`] transactions, each N
//! reads and one commit drawn from the measured histograms as independent values, with a fixed
//! seed (the same result gives the same verdict). Reads that stall together (a device hiccup
//! hitting consecutive reads) make the real p99 higher than independent draws say.

use crate::rng::Rng;
use dbio_schema::bench::{BenchResult, Verdict};
use dbio_schema::hist::{HistogramData, LatencyHistogram};
use dbio_schema::units::format_ns;

/// `--page-misses` when not given: page reads a transaction waits for besides its commit.
pub const DEFAULT_PAGE_MISSES: u32 = 10;

/// Largest `--page-misses` accepted (each drawn transaction costs N + 2 draws).
pub const MAX_PAGE_MISSES: u32 = 1000;

/// Transactions drawn for the percentiles of sums.
pub const SAMPLES: u64 = 100_000;

/// Draws values from a histogram by its cumulative counts (inverse CDF over its buckets).
struct Draw<'a> {
    h: &'a HistogramData,
    cumulative: Vec<u64>,
}

impl<'a> Draw<'a> {
    fn new(h: &'a HistogramData) -> Option<Self> {
        let mut seen = 0u64;
        let cumulative: Vec<u64> = h
            .buckets
            .iter()
            .map(|&(_, c)| {
                seen = seen.saturating_add(c);
                seen
            })
            .collect();
        (seen > 0).then_some(Draw { h, cumulative })
    }

    fn draw(&self, rng: &mut Rng) -> u64 {
        let total = *self.cumulative.last().unwrap_or(&1);
        let x = rng.below(total);
        let i = self.cumulative.partition_point(|&c| c <= x);
        let v = self.h.buckets[i.min(self.h.buckets.len() - 1)].0;
        v.max(self.h.min_ns).min(self.h.max_ns)
    }
}

/// The verdict over the data-page result `pages` and the commit result `commit`, for a
/// transaction of `page_misses` page reads and one commit; `None` when the page phase read
/// nothing or the commit phase committed nothing.
pub fn verdict(pages: &BenchResult, commit: &BenchResult, page_misses: u32) -> Option<Verdict> {
    let read = &pages.summary.read;
    let write = &commit.summary.write;
    let sync = &commit.summary.fsync;
    let reads = Draw::new(&read.histogram)?;
    let writes = Draw::new(&write.histogram)?;
    // With O_DSYNC/O_SYNC the write is the commit: no sync call was made.
    let syncs = Draw::new(&sync.histogram);
    let sync_mean = if syncs.is_some() {
        sync.lat_ns.mean
    } else {
        0.0
    };
    let commit_mean = write.lat_ns.mean + sync_mean;
    let txn_mean = f64::from(page_misses) * read.lat_ns.mean + commit_mean;
    let mut rng = Rng::new(pages.spec.seed, 0x0076_6572_6469_6374);
    let mut commits = LatencyHistogram::new();
    let mut txns = LatencyHistogram::new();
    for _ in 0..SAMPLES {
        let c = writes.draw(&mut rng) + syncs.as_ref().map_or(0, |s| s.draw(&mut rng));
        let r: u64 = (0..page_misses).map(|_| reads.draw(&mut rng)).sum();
        commits.record(c);
        txns.record(c + r);
    }
    let read_p99 = read.histogram.percentile(99.0);
    let commit_p99 = if syncs.is_some() {
        commits.percentile(99.0)
    } else {
        write.histogram.percentile(99.0)
    };
    let txn_p99 = txns.percentile(99.0);
    let share = if txn_mean > 0.0 {
        100.0 * commit_mean / txn_mean
    } else {
        0.0
    };
    let mut words = format!(
        "page reads p99 {}, commits p99 {}: a transaction with one commit and {} waits about {} on storage ({} at p99); the commit is {:.0}% of that wait",
        format_ns(read_p99 as f64),
        format_ns(commit_p99 as f64),
        if page_misses == 1 {
            "1 page miss".to_string()
        } else {
            format!("{page_misses} page misses")
        },
        format_ns(txn_mean),
        format_ns(txn_p99 as f64),
        share,
    );
    if matches!(
        commit.environment.filesystem.as_deref(),
        Some("tmpfs" | "ramfs")
    ) {
        words.push_str(&format!(
            "; {} keeps files in memory, so these commits are not durable: run on the database's file system",
            commit.environment.filesystem.as_deref().unwrap_or_default()
        ));
    }
    if pages.interrupted || commit.interrupted {
        words.push_str(" (from an interrupted run)");
    }
    Some(Verdict {
        page_misses,
        page_read_p99_ns: read_p99,
        page_read_mean_ns: read.lat_ns.mean,
        commit_p99_ns: commit_p99,
        commit_mean_ns: commit_mean,
        txn_mean_ns: txn_mean,
        txn_p99_ns: txn_p99,
        commit_share_pct: share,
        samples: SAMPLES,
        words,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbio_schema::bench::{LatStats, OpSummary, DEFAULT_PERCENTILES};

    fn op(values: &[(u64, u64)]) -> OpSummary {
        let mut h = LatencyHistogram::new();
        for &(v, n) in values {
            h.record_n(v, n);
        }
        OpSummary {
            count: h.count(),
            lat_ns: LatStats::from_hist(&h, &DEFAULT_PERCENTILES),
            histogram: h.to_data(),
            ..Default::default()
        }
    }

    fn result(read: OpSummary, write: OpSummary, fsync: OpSummary, fs: &str) -> BenchResult {
        let mut o = crate::options::tests::opts();
        o.dir = "d".into();
        let (mut r, _) = crate::result::bench_result(
            crate::run::RunOutput {
                intervals: Vec::new(),
                summary: Default::default(),
                error: None,
                open_flags: Vec::new(),
                fs: String::new(),
                started_at: std::time::UNIX_EPOCH,
                clock: String::new(),
                engine: None,
            },
            &o.spec(),
            Default::default(),
            Vec::new(),
            false,
        );
        r.summary.read = read;
        r.summary.write = write;
        r.summary.fsync = fsync;
        r.environment.filesystem = Some(fs.into());
        r
    }

    fn read_p99(r: &BenchResult) -> u64 {
        r.summary.read.histogram.percentile(99.0)
    }

    #[test]
    fn means_add_and_percentiles_come_from_the_sums() {
        // Reads: 99% at 100 us, 1% at 10 ms. Commits: a 50 us write and a 2 ms sync, always.
        let pages = result(
            op(&[(100_000, 9900), (10_000_000, 100)]),
            op(&[]),
            op(&[]),
            "ext4",
        );
        let commit = result(
            op(&[]),
            op(&[(50_000, 1000)]),
            op(&[(2_000_000, 1000)]),
            "ext4",
        );
        let v = verdict(&pages, &commit, 10).unwrap();
        assert_eq!(v.page_misses, 10);
        // Within the histogram's 1% bucket error.
        let near = |a: f64, b: f64| (a - b).abs() <= b * 0.01;
        assert!(
            near(v.page_read_mean_ns, 0.99 * 100e3 + 0.01 * 10e6),
            "{v:?}"
        );
        assert!(near(v.commit_mean_ns, 2.05e6), "{v:?}");
        assert!(
            near(v.txn_mean_ns, 10.0 * v.page_read_mean_ns + 2.05e6),
            "{v:?}"
        );
        assert!(near(v.commit_p99_ns as f64, 2.05e6), "{v:?}");
        // 10 reads: P(at least one 10 ms read) = 1 - 0.99^10 = 9.6%, so the p99 transaction
        // holds one slow read (9 x 100 us + 10 ms + 2.05 ms, about 12.95 ms), not two (under 0.5%).
        assert!(
            near(v.txn_p99_ns as f64, 12.95e6),
            "p99 of sums, not a sum of p99s: {v:?}"
        );
        // The 99th percentile read is a fast one (1% are slow): a sum of p99s (10 x 100 us +
        // 2.05 ms) would say 3.05 ms, a third of what one transaction in a hundred waits.
        assert_eq!(v.page_read_p99_ns, read_p99(&pages));
        assert!(v.words.starts_with("page reads p99 100us, commits p99 2.05ms: a transaction with one commit and 10 page misses waits about 4.04ms on storage (13.0ms at p99); the commit is 51% of that wait"), "{}", v.words);
        assert!(!v.words.contains("not durable"), "{}", v.words);
        // The same inputs give the same verdict (a fixed seed).
        assert_eq!(verdict(&pages, &commit, 10), Some(v));
    }

    #[test]
    fn odsync_commits_are_the_write_alone_and_tmpfs_is_named() {
        let pages = result(op(&[(100_000, 100)]), op(&[]), op(&[]), "tmpfs");
        let commit = result(op(&[]), op(&[(3_000_000, 10)]), op(&[]), "tmpfs");
        let v = verdict(&pages, &commit, 1).unwrap();
        let near = |a: f64, b: f64| (a - b).abs() <= b * 0.01;
        assert!(
            near(v.commit_mean_ns, 3e6) && near(v.commit_p99_ns as f64, 3e6),
            "{v:?}"
        );
        assert!(
            v.words.contains("one commit and 1 page miss waits"),
            "{}",
            v.words
        );
        assert!(
            v.words
                .contains("tmpfs keeps files in memory, so these commits are not durable"),
            "{}",
            v.words
        );
        // Nothing read or nothing committed: no verdict.
        assert_eq!(verdict(&pages, &pages, 1), None);
        assert_eq!(verdict(&commit, &commit, 1), None);
    }
}
