//! Steady state, as fio's `ss` options judge it, over a sliding window of intervals: the
//! throughput's least-squares drift across the window (`iops_slope`) and its range (`iops`),
//! each as a share of the window's mean. The first window meeting both marks the end of the
//! warm-up; p99 is judged by the drift alone (per-interval p99 of a healthy run varies by more
//! than any useful range limit).

use super::sample::Sample;
use dbio_schema::report::Steady;

/// Slope and intercept of the least-squares line through `(i, v[i])`.
pub fn least_squares(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    if v.len() < 2 {
        return (0.0, v.first().copied().unwrap_or(0.0));
    }
    let mx = (n - 1.0) / 2.0;
    let my = v.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, &y) in v.iter().enumerate() {
        let dx = i as f64 - mx;
        sxy += dx * (y - my);
        sxx += dx * dx;
    }
    let slope = sxy / sxx;
    (slope, my - slope * mx)
}

/// Drift (the line's rise across the window) and range of a window, in % of its mean.
pub fn window_figures(w: &[f64]) -> (f64, f64) {
    let mean = w.iter().sum::<f64>() / w.len() as f64;
    if mean == 0.0 {
        return (0.0, 0.0);
    }
    let (slope, _) = least_squares(w);
    let max = w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = w.iter().copied().fold(f64::INFINITY, f64::min);
    (
        (slope * (w.len() - 1) as f64 / mean).abs() * 100.0,
        (max - min) / mean * 100.0,
    )
}

/// The window length used for a run of `n` intervals when none is given: a fifth of the run,
/// 5 to 60 intervals.
pub fn auto_window(n: usize) -> usize {
    (n / 5).clamp(5, 60)
}

/// Steady state of a run's measured samples.
pub fn steady(samples: &[Sample], window: usize, slope_pct: f64, range_pct: f64) -> Steady {
    let n = samples.len();
    let w = if window == 0 { auto_window(n) } else { window };
    let iops: Vec<f64> = samples.iter().map(|s| s.iops).collect();
    let p99: Vec<f64> = samples.iter().map(|s| s.p99_ns as f64).collect();
    let mut from = None;
    let mut last = (0.0, 0.0);
    if n >= w && w >= 2 {
        for start in 0..=n - w {
            let (sl, rg) = window_figures(&iops[start..start + w]);
            last = (sl, rg);
            if sl <= slope_pct && rg <= range_pct {
                from = Some(start);
                break;
            }
        }
    }
    let p99_from = (n >= w && w >= 2)
        .then(|| (0..=n - w).find(|&s| window_figures(&p99[s..s + w]).0 <= 2.0 * slope_pct))
        .flatten();
    let tail = &iops[from.unwrap_or(0)..];
    Steady {
        window_intervals: w,
        reached: from.is_some(),
        from_interval: from,
        from_s: from.map(|i| samples[i].start_s),
        slope_pct: last.0,
        range_pct: last.1,
        iops: if tail.is_empty() {
            0.0
        } else {
            tail.iter().sum::<f64>() / tail.len() as f64
        },
        p99_reached: p99_from.is_some(),
        p99_from_s: p99_from.map(|i| samples[i].start_s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::sample::series;

    #[test]
    fn least_squares_fits_a_line() {
        let (s, c) = least_squares(&[1.0, 3.0, 5.0, 7.0]);
        assert!((s - 2.0).abs() < 1e-12 && (c - 1.0).abs() < 1e-12);
        let (sl, rg) = window_figures(&[90.0, 100.0, 110.0]);
        assert!((sl - 20.0).abs() < 1e-9 && (rg - 20.0).abs() < 1e-9);
    }

    #[test]
    fn a_ramp_then_plateau_is_steady_from_the_plateau() {
        // 30 intervals climbing from 1000 to 10000, then flat at 10000 +- 2%.
        let v: Vec<f64> = (0..100)
            .map(|i| {
                if i < 30 {
                    1000.0 + 300.0 * i as f64
                } else {
                    10_000.0 + if i % 2 == 0 { 200.0 } else { -200.0 }
                }
            })
            .collect();
        let s = steady(&series(&v), 10, 10.0, 20.0);
        assert!(s.reached);
        let from = s.from_interval.unwrap();
        // The first window that passes holds the last steps of the ramp (range 11%).
        assert!((25..=30).contains(&from), "steady from {from}");
        assert!((s.iops - 10_000.0).abs() < 100.0, "{}", s.iops);
        assert!(s.p99_reached);
    }

    #[test]
    fn a_run_that_keeps_falling_never_settles() {
        let v: Vec<f64> = (0..100).map(|i| 20_000.0 - 150.0 * i as f64).collect();
        let s = steady(&series(&v), 20, 10.0, 20.0);
        assert!(!s.reached && s.from_s.is_none());
        assert!(s.slope_pct > 10.0);
        let short = steady(&series(&[1.0, 2.0]), 0, 10.0, 20.0);
        assert!(!short.reached && short.window_intervals == 5);
    }
}
