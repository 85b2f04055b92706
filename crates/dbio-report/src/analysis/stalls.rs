//! Stalls: intervals whose throughput falls below a fraction of the run's median or whose p99
//! jumps above a multiple of the median p99; and periodic dips, found by autocorrelation of the
//! detrended per-interval throughput (SSD garbage collection, a flusher, a RAID patrol read).

use super::sample::Sample;
use dbio_schema::report::{Periodic, StallEvent, StallReason, Stalls};

/// The median of `v` (mean of the two middle values for an even length), 0 when empty.
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Which samples are stalls, and the stall summary (without the periodic verdict).
pub fn detect(samples: &[Sample], fraction: f64, p99_factor: f64) -> (Vec<bool>, Stalls) {
    let iops: Vec<f64> = samples.iter().map(|s| s.iops).collect();
    let p99: Vec<f64> = samples.iter().map(|s| s.p99_ns as f64).collect();
    let median_iops = median(&iops);
    // Rounded as the result stores it, so the stored figures reproduce every verdict.
    let median_p99 = median(&p99).round();
    let mut flags = Vec::with_capacity(samples.len());
    let mut events: Vec<StallEvent> = Vec::new();
    let mut open = false;
    for s in samples {
        let slow = s.iops < fraction * median_iops;
        let late = median_p99 > 0.0 && s.p99_ns as f64 > p99_factor * median_p99;
        let reason = match (slow, late) {
            (true, true) => Some(StallReason::Both),
            (true, false) => Some(StallReason::Throughput),
            (false, true) => Some(StallReason::Latency),
            (false, false) => None,
        };
        flags.push(reason.is_some());
        match (reason, open, events.last_mut()) {
            (Some(r), true, Some(e)) => {
                e.end_s = s.end_s;
                e.min_iops = e.min_iops.min(s.iops);
                e.max_p99_ns = e.max_p99_ns.max(s.p99_ns);
                if e.reason != r {
                    e.reason = StallReason::Both;
                }
            }
            (Some(r), _, _) => {
                events.push(StallEvent {
                    start_s: s.start_s,
                    end_s: s.end_s,
                    min_iops: s.iops,
                    max_p99_ns: s.p99_ns,
                    reason: r,
                });
                open = true;
            }
            (None, _, _) => open = false,
        }
    }
    let stalled_s = samples
        .iter()
        .zip(&flags)
        .filter(|(_, &f)| f)
        .map(|(s, _)| s.end_s - s.start_s)
        .sum();
    let stalls = Stalls {
        median_iops,
        median_p99_ns: median_p99.round() as u64,
        intervals: flags.iter().filter(|&&f| f).count(),
        stalled_s,
        events,
        periodic: None,
    };
    (flags, stalls)
}

/// `v` minus its least-squares line.
fn detrend(v: &[f64]) -> Vec<f64> {
    let (slope, icept) = super::steady::least_squares(v);
    v.iter()
        .enumerate()
        .map(|(i, &y)| y - (icept + slope * i as f64))
        .collect()
}

/// Autocorrelation of `x` (already centred) at lags 0..=max_lag (biased estimator: the sum of
/// products over the series variance times its length).
pub fn autocorrelation(x: &[f64], max_lag: usize) -> Vec<f64> {
    let var: f64 = x.iter().map(|v| v * v).sum();
    (0..=max_lag.min(x.len().saturating_sub(1)))
        .map(|lag| {
            if var == 0.0 {
                return 0.0;
            }
            x.iter().zip(&x[lag..]).map(|(a, b)| a * b).sum::<f64>() / var
        })
        .collect()
}

/// A periodic dip in the samples' throughput, if any: the smallest lag (2 to a third of the
/// run, so at least three periods are seen) where the autocorrelation of the detrended series
/// peaks above the noise level (0.3, or 3/sqrt(n) for short runs) and at least 0.2 above the
/// trough before it, within 0.7 of the highest peak; the series folded at that period must dip
/// at least `min_depth_pct` below the median.
pub fn periodic(samples: &[Sample], min_depth_pct: f64) -> Option<Periodic> {
    let n = samples.len();
    if n < 9 {
        return None;
    }
    let iops: Vec<f64> = samples.iter().map(|s| s.iops).collect();
    let x = detrend(&iops);
    let max_lag = n / 3;
    let acf = autocorrelation(&x, max_lag + 1);
    let noise = (3.0 / (n as f64).sqrt()).max(0.3);
    // Peaks: local maxima that rise clearly above the lowest autocorrelation before them.
    let mut peaks = Vec::new();
    let mut trough = f64::INFINITY;
    for lag in 1..=max_lag.min(acf.len() - 2) {
        trough = trough.min(acf[lag]);
        if lag >= 2
            && acf[lag] >= acf[lag - 1]
            && acf[lag] >= acf[lag + 1]
            && acf[lag] >= noise
            && acf[lag] - trough >= 0.2
        {
            peaks.push((lag, acf[lag]));
        }
    }
    let best = peaks.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let &(period, r) = peaks.iter().find(|p| p.1 >= 0.7 * best)?;
    // Fold at the period: the phase with the lowest mean throughput is the dip.
    let mut sums = vec![0.0; period];
    let mut counts = vec![0usize; period];
    for (i, v) in iops.iter().enumerate() {
        sums[i % period] += v;
        counts[i % period] += 1;
    }
    let means: Vec<f64> = sums
        .iter()
        .zip(&counts)
        .map(|(s, &c)| s / c as f64)
        .collect();
    let (phase, low) = means
        .iter()
        .copied()
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    let med = median(&iops);
    if med <= 0.0 {
        return None;
    }
    let depth_pct = (1.0 - low / med) * 100.0;
    if depth_pct < min_depth_pct {
        return None;
    }
    let len_s = (samples[n - 1].end_s - samples[0].start_s) / n as f64;
    Some(Periodic {
        period_intervals: period,
        period_s: period as f64 * len_s,
        depth_pct,
        autocorrelation: r,
        first_dip_s: samples[phase].start_s,
    })
}

/// Periodic stalls found from the stall events themselves, for runs where one long irregular
/// stall (another process taking the CPU, a one-off flush) hides the pattern from the
/// autocorrelation: the starts of throughput stalls (runs of intervals below `fraction` of the
/// median) lie on a grid of period P when at least two thirds of them fall within a tenth of P
/// (at least one interval) of it, and they recur at three quarters of the grid's positions (at
/// least 4: three stall starts of a loaded machine fall on some grid by chance, as a 3 s run
/// beside a test suite showed). That window covers at most a third of P, so periods under 9
/// intervals are left to the autocorrelation. The smallest such P wins.
pub fn periodic_events(samples: &[Sample], fraction: f64) -> Option<Periodic> {
    let n = samples.len();
    let iops: Vec<f64> = samples.iter().map(|s| s.iops).collect();
    let med = median(&iops);
    if med <= 0.0 {
        return None;
    }
    let (mut starts, mut mins): (Vec<usize>, Vec<f64>) = (Vec::new(), Vec::new());
    let mut open = false;
    for (i, s) in samples.iter().enumerate() {
        let slow = s.iops < fraction * med;
        if slow && !open {
            starts.push(i);
            mins.push(s.iops);
        } else if slow {
            let m = mins.last_mut().expect("an open event");
            *m = m.min(s.iops);
        }
        open = slow;
    }
    if starts.len() < 4 {
        return None;
    }
    // Candidate periods: the gaps between stall starts that leave room for four periods.
    let mut periods: Vec<usize> = starts
        .iter()
        .enumerate()
        .flat_map(|(i, a)| starts[i + 1..].iter().map(move |b| b - a))
        .filter(|&p| p >= 2 && 4 * p <= n)
        .collect();
    periods.sort_unstable();
    periods.dedup();
    for p in periods {
        let tol = (p / 10).max(1);
        // The grid's window must cover at most a third of the period, else events anywhere
        // fall on it (period 3 with a tolerance of 1 takes every interval).
        if 3 * (2 * tol + 1) > p {
            continue;
        }
        // Events per residue modulo p, then the phase that puts the most events on the grid.
        let mut per_residue = vec![0usize; p];
        for &s in &starts {
            per_residue[s % p] += 1;
        }
        let near = |phase: usize| -> usize {
            (0..=2 * tol)
                .map(|d| per_residue[(phase + p + d - tol) % p])
                .sum()
        };
        let phase = (0..p).max_by_key(|&ph| (near(ph), std::cmp::Reverse(ph)))?;
        let on: Vec<usize> = (0..starts.len())
            .filter(|&e| {
                let d = (starts[e] + p - phase) % p;
                d.min(p - d) <= tol
            })
            .collect();
        let mut hits: Vec<i64> = on
            .iter()
            .map(|&e| ((starts[e] as f64 - phase as f64) / p as f64).round() as i64)
            .collect();
        hits.dedup();
        let grid = (n - phase).div_ceil(p);
        if on.len() * 3 >= starts.len() * 2 && hits.len() * 4 >= grid * 3 && hits.len() >= 4 {
            let low = on.iter().map(|&e| mins[e]).sum::<f64>() / on.len() as f64;
            let x = detrend(&iops);
            let r = autocorrelation(&x, p).get(p).copied().unwrap_or(0.0);
            let len_s = (samples[n - 1].end_s - samples[0].start_s) / n as f64;
            return Some(Periodic {
                period_intervals: p,
                period_s: p as f64 * len_s,
                depth_pct: (1.0 - low / med) * 100.0,
                autocorrelation: r,
                first_dip_s: samples[starts[on[0]]].start_s,
            });
        }
    }
    None
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    use crate::analysis::sample::series;

    /// A deterministic noise in [-1, 1] (no RNG crate needed for a test series).
    fn noise(i: usize) -> f64 {
        let x = (i as u64)
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((x >> 33) as f64 / (1u64 << 31) as f64) * 2.0 - 1.0
    }

    #[test]
    fn three_stalls_on_a_grid_are_chance_four_are_a_period() {
        // The false alarm seen on a 3 s run (30 intervals) beside a test suite: stalls
        // starting at 4, 13 and 22 (every 9 intervals, three times) on an unpaused run.
        let run = |n: usize, dips: &[usize]| -> Vec<f64> {
            (0..n)
                .map(|i| {
                    let base = 10_000.0 + 300.0 * noise(i);
                    if dips.contains(&i) {
                        base * 0.4
                    } else {
                        base
                    }
                })
                .collect()
        };
        let three = series(&run(30, &[4, 13, 22]));
        assert!(periodic_events(&three, 0.5).is_none());
        let four = series(&run(40, &[4, 13, 22, 31]));
        assert_eq!(periodic_events(&four, 0.5).unwrap().period_intervals, 9);
    }

    #[test]
    fn a_dip_every_n_intervals_is_found_with_its_period_and_depth() {
        for period in [5usize, 7, 10, 13] {
            let v: Vec<f64> = (0..120)
                .map(|i| {
                    let base = 10_000.0 + 300.0 * noise(i);
                    if i % period == 3 {
                        base * 0.2
                    } else {
                        base
                    }
                })
                .collect();
            let s = series(&v);
            let p = periodic(&s, 15.0).unwrap_or_else(|| panic!("period {period} not found"));
            assert_eq!(p.period_intervals, period);
            assert!((p.period_s - period as f64 * 0.1).abs() < 1e-9);
            assert!(p.depth_pct > 70.0 && p.depth_pct < 90.0, "{p:?}");
            assert!((p.first_dip_s - 0.3).abs() < 1e-9, "{p:?}");
            let (flags, st) = detect(&s, 0.5, 10.0);
            assert_eq!(st.intervals, (0..120).filter(|i| i % period == 3).count());
            assert_eq!(st.events.len(), st.intervals);
            assert!(flags[3] && !flags[4]);
            assert_eq!(st.events[0].reason, StallReason::Throughput);
        }
    }

    #[test]
    fn a_two_interval_dip_merges_into_one_event() {
        let mut v = vec![1000.0; 40];
        v[10] = 100.0;
        v[11] = 0.0;
        let mut s = series(&v);
        s[30].p99_ns = 5_000_000;
        let (_, st) = detect(&s, 0.5, 10.0);
        assert_eq!(st.events.len(), 2);
        assert!(
            (st.events[0].start_s - 1.0).abs() < 1e-9 && (st.events[0].end_s - 1.2).abs() < 1e-9
        );
        assert_eq!(st.events[0].min_iops, 0.0);
        assert_eq!(st.events[1].reason, StallReason::Latency);
        assert!((st.stalled_s - 0.3).abs() < 1e-9);
    }

    #[test]
    fn flat_noisy_and_trending_runs_raise_no_alarm() {
        for seed in 0..50 {
            let flat: Vec<f64> = (0..200)
                .map(|i| 10_000.0 + 1500.0 * noise(i + seed * 1000))
                .collect();
            let s = series(&flat);
            assert_eq!(periodic(&s, 15.0), None, "seed {seed}");
            assert_eq!(detect(&s, 0.5, 10.0).1.intervals, 0, "seed {seed}");
            let ramp: Vec<f64> = (0..200)
                .map(|i| 5_000.0 + 40.0 * i as f64 + 500.0 * noise(i + seed * 7))
                .collect();
            assert_eq!(periodic(&series(&ramp), 15.0), None, "ramp seed {seed}");
        }
        assert_eq!(periodic(&series(&[5.0; 100]), 15.0), None);
        assert_eq!(periodic(&series(&[5.0; 4]), 15.0), None);
    }

    #[test]
    fn a_gentle_wave_is_reported_and_a_shallow_one_is_not() {
        let wave = |amp: f64| -> Vec<f64> {
            (0..150)
                .map(|i| 400.0 + amp * (i as f64 * std::f64::consts::TAU / 12.0).sin())
                .collect()
        };
        let p = periodic(&series(&wave(100.0)), 15.0).expect("a 25% wave");
        assert_eq!(p.period_intervals, 12);
        assert_eq!(
            periodic(&series(&wave(20.0)), 15.0),
            None,
            "a 5% wave is noise"
        );
        assert_eq!(median(&[3.0, 1.0, 2.0, 10.0]), 2.5);
    }

    #[test]
    fn a_periodic_stall_behind_one_long_irregular_stall_is_still_found() {
        // A dip of 3 intervals every 10, and one 13-interval stall from 26 (a one-off).
        let v: Vec<f64> = (0..70)
            .map(|i| {
                let base = 100_000.0 + 8000.0 * noise(i);
                if i % 10 >= 6 && i % 10 <= 8 || (26..39).contains(&i) {
                    base * 0.02
                } else {
                    base
                }
            })
            .collect();
        let s = series(&v);
        let p = periodic_events(&s, 0.5).expect("the stall every 10 intervals");
        assert_eq!(p.period_intervals, 10);
        assert!((p.first_dip_s - 0.6).abs() < 1e-9, "{p:?}");
        assert!(p.depth_pct > 95.0);
    }

    #[test]
    fn a_real_sigstop_run_with_two_stray_dips_is_periodic() {
        // The throughput of a real run paused 300 ms every second (100 ms intervals), with two
        // stray dips of its own (at 0.9 s and 4.0 s): six of eight stall starts on the grid.
        let mut v = vec![65_000.0; 68];
        for i in [
            5, 6, 7, 16, 17, 18, 26, 27, 28, 36, 37, 38, 46, 47, 48, 49, 56, 57,
        ] {
            v[i] = 0.0;
        }
        v[9] = 17_000.0;
        v[40] = 28_000.0;
        let p = periodic_events(&series(&v), 0.5).expect("periodic");
        assert_eq!(p.period_intervals, 10);
        assert!((p.first_dip_s - 0.5).abs() < 1e-9, "{p:?}");
    }

    #[test]
    fn scattered_stalls_are_not_periodic() {
        for starts in [
            &[5usize, 23, 31, 58, 77, 90][..],
            &[3, 40, 44, 100],
            &[10, 20],
            &[7, 19, 22, 35, 61, 64, 98, 111],
        ] {
            let v: Vec<f64> = (0..120)
                .map(|i| if starts.contains(&i) { 10.0 } else { 1000.0 })
                .collect();
            assert_eq!(periodic_events(&series(&v), 0.5), None, "{starts:?}");
        }
        // Dense, irregular stalls (one start every 3.5 intervals on average) fit no grid.
        let v: Vec<f64> = (0..600)
            .map(|i| {
                if noise(i * 31 + 5) > 0.55 {
                    10.0
                } else {
                    1000.0
                }
            })
            .collect();
        let s = series(&v);
        assert!(detect(&s, 0.5, 10.0).1.events.len() > 100);
        assert_eq!(periodic_events(&s, 0.5), None);
    }
}
