//! The Universal Scalability Law (Gunther, *Guerrilla Capacity Planning*, ch. 4-5):
//! X(N) = lambda N / (1 + sigma (N - 1) + kappa N (N - 1)).
//!
//! The fit minimises the sum of squared throughput residuals over (sigma, kappa, lambda) with
//! sigma and kappa bounded to [0, 1] and lambda > 0, as the R `usl` package does with `nls`
//! and the "port" algorithm. lambda is fitted, never taken as X(1). The search:
//!
//! 1. a grid over (sigma, kappa) with lambda solved in closed form for each cell (variable
//!    projection: lambda = sum x f / sum f^2 with f = N / (1 + sigma (N-1) + kappa N (N-1)));
//! 2. from the best cell, Levenberg-Marquardt on all three parameters, projected on the
//!    bounds: a parameter on a bound whose gradient points out of the box is held there for
//!    the step (an active set), so an unbounded optimum with kappa < 0 ends at kappa = 0.
//!
//! Standard errors are sqrt(diag(s^2 (J'J)^-1)) with s^2 = SSR / (n - 3), J the Jacobian at
//! the estimate, as `summary(nls)` prints them (also for a parameter on a bound).

use crate::ModelError;
use dbio_schema::model::{Coefficient, UslPoint, UslPrediction, UslReading, UslResult};

/// A measured point: concurrency, throughput, and the response time when known.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// Concurrency N (1 or more).
    pub n: f64,
    /// Throughput X(N).
    pub x: f64,
    /// Mean response time R(N), seconds.
    pub r: Option<f64>,
}

/// The fitted parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Contention.
    pub sigma: f64,
    /// Coherency.
    pub kappa: f64,
    /// Throughput of one user without any loss.
    pub lambda: f64,
}

impl Params {
    /// X(N) on this curve.
    pub fn x(&self, n: f64) -> f64 {
        self.lambda * n / denom(self.sigma, self.kappa, n)
    }
}

fn denom(sigma: f64, kappa: f64, n: f64) -> f64 {
    1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0)
}

/// A least-squares fit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    /// The estimates.
    pub params: Params,
    /// Sum of squared residuals.
    pub ssr: f64,
    /// Standard errors of sigma, kappa, lambda (absent with 3 points or a singular J'J).
    pub std_errors: Option<[f64; 3]>,
}

const LOWER: [f64; 3] = [0.0, 0.0, 0.0];
const UPPER: [f64; 3] = [1.0, 1.0, f64::INFINITY];

/// Checks the points: N >= 1 and X >= 0, finite, and at least three distinct N.
pub fn check(points: &[Point]) -> Result<(), ModelError> {
    for p in points {
        if !p.n.is_finite() || p.n < 1.0 {
            return Err(ModelError::BadPoint(format!(
                "N = {} : concurrency must be 1 or more",
                p.n
            )));
        }
        if !p.x.is_finite() || p.x < 0.0 {
            return Err(ModelError::BadPoint(format!(
                "X = {} at N = {}: throughput must be 0 or more",
                p.x, p.n
            )));
        }
        if let Some(r) = p.r {
            if !r.is_finite() || r < 0.0 {
                return Err(ModelError::BadPoint(format!(
                    "R = {r} at N = {}: response time must be 0 or more seconds",
                    p.n
                )));
            }
        }
    }
    let mut ns: Vec<f64> = points.iter().map(|p| p.n).collect();
    ns.sort_by(f64::total_cmp);
    ns.dedup();
    if ns.len() < 3 {
        return Err(ModelError::TooFewPoints(format!(
            "{} distinct N in {} points: the USL has three parameters, measure at least three concurrencies (six or more give usable standard errors)",
            ns.len(),
            points.len()
        )));
    }
    if points.iter().all(|p| p.x == 0.0) {
        return Err(ModelError::BadPoint(
            "every throughput is 0: nothing to fit".into(),
        ));
    }
    Ok(())
}

/// lambda in closed form for fixed sigma, kappa, and the sum of squared residuals.
fn project(points: &[Point], sigma: f64, kappa: f64) -> (f64, f64) {
    let (mut sxf, mut sff) = (0.0, 0.0);
    for p in points {
        let f = p.n / denom(sigma, kappa, p.n);
        sxf += p.x * f;
        sff += f * f;
    }
    let lambda = sxf / sff;
    (lambda, ssr(points, &[sigma, kappa, lambda]))
}

fn ssr(points: &[Point], p: &[f64; 3]) -> f64 {
    points
        .iter()
        .map(|q| {
            let r = q.x - p[2] * q.n / denom(p[0], p[1], q.n);
            r * r
        })
        .sum()
}

/// Jacobian row of the model at one N: d/dsigma, d/dkappa, d/dlambda.
fn grad(p: &[f64; 3], n: f64) -> [f64; 3] {
    let d = denom(p[0], p[1], n);
    let m = p[2] * n / (d * d);
    [-m * (n - 1.0), -m * n * (n - 1.0), n / d]
}

/// The (sigma, kappa) grid: 0 and log-spaced values up to 1.
fn grid(lo_exp: f64, steps: usize) -> Vec<f64> {
    let mut v = vec![0.0];
    for i in 0..=steps {
        v.push(10f64.powf(lo_exp * (1.0 - i as f64 / steps as f64)));
    }
    v
}

/// Solves the 3x3 (or smaller, for the free parameters) system `a x = b` by Gaussian
/// elimination with partial pivoting; `None` when singular.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for c in 0..n {
        let piv = (c..n).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        if a[piv][c] == 0.0 || !a[piv][c].is_finite() {
            return None;
        }
        a.swap(c, piv);
        b.swap(c, piv);
        let (top, rest) = a.split_at_mut(c + 1);
        let pivot_row = &top[c];
        for (r, row) in rest.iter_mut().enumerate() {
            let f = row[c] / pivot_row[c];
            for (v, p) in row[c..n].iter_mut().zip(&pivot_row[c..n]) {
                *v -= f * p;
            }
            b[c + 1 + r] -= f * b[c];
        }
    }
    let mut x = vec![0.0; n];
    for c in (0..n).rev() {
        let s: f64 = (c + 1..n).map(|k| a[c][k] * x[k]).sum();
        x[c] = (b[c] - s) / a[c][c];
    }
    Some(x)
}

/// Levenberg-Marquardt projected on the bounds, from `p`.
fn refine(points: &[Point], mut p: [f64; 3]) -> ([f64; 3], f64) {
    let mut cur = ssr(points, &p);
    let mut mu = 1e-3;
    for _ in 0..2000 {
        let mut jtj = [[0.0; 3]; 3];
        let mut jtr = [0.0; 3];
        for q in points {
            let g = grad(&p, q.n);
            let r = q.x - p[2] * q.n / denom(p[0], p[1], q.n);
            for i in 0..3 {
                jtr[i] += g[i] * r;
                for j in 0..3 {
                    jtj[i][j] += g[i] * g[j];
                }
            }
        }
        // Active set: a parameter on a bound that the descent direction (J'r) pushes out.
        let free: Vec<usize> = (0..3)
            .filter(|&i| {
                !((p[i] <= LOWER[i] && jtr[i] <= 0.0) || (p[i] >= UPPER[i] && jtr[i] >= 0.0))
            })
            .collect();
        if free.is_empty() {
            break;
        }
        let mut improved = false;
        let mut step_small = false;
        while mu < 1e20 {
            let a: Vec<Vec<f64>> = free
                .iter()
                .map(|&i| {
                    free.iter()
                        .map(|&j| {
                            let d = if i == j {
                                mu * jtj[i][i].max(1e-300)
                            } else {
                                0.0
                            };
                            jtj[i][j] + d
                        })
                        .collect()
                })
                .collect();
            let b: Vec<f64> = free.iter().map(|&i| jtr[i]).collect();
            let Some(delta) = solve(a, b) else {
                mu *= 10.0;
                continue;
            };
            let mut np = p;
            for (k, &i) in free.iter().enumerate() {
                np[i] = (p[i] + delta[k]).clamp(LOWER[i], UPPER[i]);
            }
            if np[2] <= 0.0 {
                np[2] = p[2] * 0.5;
            }
            let s = ssr(points, &np);
            step_small = (0..3).all(|i| (np[i] - p[i]).abs() <= 1e-14 * (p[i].abs() + 1e-300));
            if s < cur {
                let rel = (cur - s) / cur.max(f64::MIN_POSITIVE);
                p = np;
                cur = s;
                mu = (mu * 0.3).max(1e-12);
                improved = true;
                if rel < 1e-16 {
                    step_small = true;
                }
                break;
            }
            if step_small {
                break;
            }
            mu *= 10.0;
        }
        if !improved || step_small {
            break;
        }
    }
    (p, cur)
}

/// Fits the USL to the points (see the module documentation).
pub fn fit(points: &[Point]) -> Result<Fit, ModelError> {
    check(points)?;
    // Quarter-decade grid; the three best cells are each refined (guarding against a local
    // minimum next to the best cell) and the lowest sum of squares wins.
    let mut cells: Vec<(f64, [f64; 3])> = Vec::new();
    for &s in &grid(-6.0, 24) {
        for &k in &grid(-10.0, 40) {
            let (l, e) = project(points, s, k);
            if e.is_finite() && l.is_finite() && l > 0.0 {
                cells.push((e, [s, k, l]));
            }
        }
    }
    cells.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (p, ssr) = cells
        .iter()
        .take(3)
        .map(|c| refine(points, c.1))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .ok_or_else(|| ModelError::BadPoint("no finite fit: check the points".into()))?;
    let n = points.len();
    let std_errors = if n > 3 {
        let s2 = ssr / (n - 3) as f64;
        let mut jtj = vec![vec![0.0; 3]; 3];
        for q in points {
            let g = grad(&p, q.n);
            for i in 0..3 {
                for j in 0..3 {
                    jtj[i][j] += g[i] * g[j];
                }
            }
        }
        inverse_diag(&jtj).map(|d| [(s2 * d[0]).sqrt(), (s2 * d[1]).sqrt(), (s2 * d[2]).sqrt()])
    } else {
        None
    };
    Ok(Fit {
        params: Params {
            sigma: p[0],
            kappa: p[1],
            lambda: p[2],
        },
        ssr,
        std_errors,
    })
}

/// The diagonal of the inverse of a symmetric positive definite 3x3 matrix, computed on the
/// matrix scaled to a unit diagonal (the parameters differ by orders of magnitude); `None`
/// when it is singular.
fn inverse_diag(a: &[Vec<f64>]) -> Option<[f64; 3]> {
    let s: Vec<f64> = (0..3).map(|i| a[i][i].sqrt()).collect();
    if s.iter().any(|&v| v == 0.0 || !v.is_finite()) {
        return None;
    }
    let mut out = [0.0; 3];
    for (c, o) in out.iter_mut().enumerate() {
        let scaled: Vec<Vec<f64>> = (0..3)
            .map(|i| (0..3).map(|j| a[i][j] / (s[i] * s[j])).collect())
            .collect();
        let mut e = vec![0.0; 3];
        e[c] = 1.0;
        let col = solve(scaled, e)?;
        if col[c].is_nan() || col[c] <= 0.0 || col[c] > 1e14 {
            return None;
        }
        *o = col[c] / (s[c] * s[c]);
    }
    Some(out)
}

/// What `dbio model usl` was asked besides the points.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Options {
    /// Where the points came from (shown in the result).
    pub source: String,
    /// Concurrencies to predict X (and R) at.
    pub predict: Vec<f64>,
}

/// Fits the points and builds the whole result: residuals, Nmax, Xmax, the reading,
/// predictions and warnings.
pub fn analyse(points: &[Point], opts: &Options) -> Result<UslResult, ModelError> {
    let fit = fit(points)?;
    let p = fit.params;
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| a.n.total_cmp(&b.n));
    let max_n = sorted.last().map_or(0.0, |q| q.n);
    let n = points.len();
    let mean_x = points.iter().map(|q| q.x).sum::<f64>() / n as f64;
    let sst: f64 = points.iter().map(|q| (q.x - mean_x).powi(2)).sum();
    let out_points: Vec<UslPoint> = sorted
        .iter()
        .map(|q| {
            let fx = p.x(q.n);
            UslPoint {
                n: q.n,
                x_per_s: q.x,
                r_s: q.r,
                fitted_x_per_s: fx,
                residual_per_s: q.x - fx,
                efficiency: q.x / (q.n * p.lambda),
            }
        })
        .collect();
    let se = fit.std_errors;
    let coef = |i: usize, v: f64| Coefficient {
        estimate: v,
        std_error: se.map(|s| s[i]),
        at_bound: v <= LOWER[i] || v >= UPPER[i],
    };
    // Below 1 (sigma near 1) the curve falls from N = 1 on: its peak is at N = 1.
    let n_max = (p.kappa > 0.0).then(|| ((1.0 - p.sigma) / p.kappa).sqrt().max(1.0));
    let x_max = n_max.map(|m| p.x(m));
    let x_ceiling = (p.kappa == 0.0 && p.sigma > 0.0).then(|| p.lambda / p.sigma);
    let implied_think_s = if points.iter().all(|q| q.r.is_some()) {
        let z = points
            .iter()
            .map(|q| {
                if q.x > 0.0 {
                    q.n / q.x - q.r.unwrap_or(0.0)
                } else {
                    0.0
                }
            })
            .sum::<f64>()
            / n as f64;
        Some(z.max(0.0))
    } else {
        None
    };
    let (reading, reading_text) = read(&p, max_n, n_max, x_max, x_ceiling);
    let mut warnings = Vec::new();
    if n < 6 {
        warnings.push(format!(
            "{n} points: with three parameters, the fit rests on {} degrees of freedom; measure six or more concurrencies",
            n.saturating_sub(3)
        ));
    }
    if let Some(m) = n_max {
        if m > 2.0 * max_n {
            warnings.push(format!(
                "Nmax = {m:.1} lies beyond twice the largest measured N ({max_n}): the peak is an extrapolation"
            ));
        }
    }
    if let Some(q) = out_points.iter().find(|q| q.efficiency > 1.05) {
        warnings.push(format!(
            "at N = {} throughput is {:.0}% of linear scaling from the fitted lambda: superlinear points (a cache warming up, a changing workload) do not follow the USL",
            q.n,
            100.0 * q.efficiency
        ));
    }
    let mut predictions = Vec::new();
    for &m in &opts.predict {
        if !m.is_finite() || m < 1.0 {
            return Err(ModelError::BadPoint(format!(
                "--predict {m}: concurrency must be 1 or more"
            )));
        }
        let x = p.x(m);
        let beyond = m > 2.0 * max_n;
        if beyond {
            warnings.push(format!(
                "prediction at N = {m} is beyond twice the largest measured N ({max_n}): an extrapolation"
            ));
        }
        predictions.push(UslPrediction {
            n: m,
            x_per_s: x,
            r_s: implied_think_s.filter(|_| x > 0.0).map(|z| m / x - z),
            beyond_2x_measured: beyond,
        });
    }
    Ok(UslResult {
        source: opts.source.clone(),
        points: out_points,
        sigma: coef(0, p.sigma),
        kappa: coef(1, p.kappa),
        lambda_per_s: Coefficient {
            estimate: p.lambda,
            std_error: se.map(|s| s[2]),
            at_bound: false,
        },
        residual_std_error_per_s: (n > 3).then(|| (fit.ssr / (n - 3) as f64).sqrt()),
        df: n.saturating_sub(3) as u64,
        r_squared: if sst > 0.0 { 1.0 - fit.ssr / sst } else { 1.0 },
        max_measured_n: max_n,
        n_max,
        x_max_per_s: x_max,
        x_ceiling_per_s: x_ceiling,
        implied_think_s,
        reading,
        reading_text,
        predictions,
        warnings,
        notes: Vec::new(),
    })
}

/// Four significant figures (the reading is a sentence, not a table).
fn sig4(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let mag = v.abs().log10().floor() as i32;
    if mag < -4 {
        return format!("{v:.3e}");
    }
    let decimals = (3 - mag).max(0) as usize;
    format!("{v:.decimals$}")
}

/// The reading: linear so far when the model loses under 10% of linear scaling at the
/// largest measured N; coherency-bound when kappa > 0 puts the peak within twice the
/// measured range; contention-bound otherwise.
fn read(
    p: &Params,
    max_n: f64,
    n_max: Option<f64>,
    x_max: Option<f64>,
    x_ceiling: Option<f64>,
) -> (UslReading, String) {
    let contention = p.sigma * (max_n - 1.0);
    let coherency = p.kappa * max_n * (max_n - 1.0);
    let loss = 1.0 - 1.0 / (1.0 + contention + coherency);
    if loss < 0.10 {
        return (
            UslReading::LinearSoFar,
            format!(
                "linear so far: at N = {max_n} the fitted curve is within {:.1}% of linear scaling (lambda = {} per unit of N); measure at higher concurrency to find the limit",
                100.0 * loss,
                sig4(p.lambda)
            ),
        );
    }
    if let (Some(m), Some(x)) = (n_max, x_max) {
        if m <= 2.0 * max_n {
            let passed = if m < max_n {
                "; the measurements already go past it"
            } else {
                ""
            };
            return (
                UslReading::CoherencyBound,
                format!(
                    "coherency-bound: throughput peaks at N = {m:.1} (X = {}) and falls beyond it{passed}; contention (sigma = {}) flattens the curve, coherency (kappa = {:.3e}) makes it retrograde",
                    sig4(x), sig4(p.sigma), p.kappa
                ),
            );
        }
    }
    let ceiling = match (x_ceiling, n_max) {
        (Some(c), _) => format!("throughput approaches lambda / sigma = {}", sig4(c)),
        (None, Some(m)) => format!(
            "the coherency term only peaks far out, at N = {m:.0}, beyond twice the measured range"
        ),
        (None, None) => String::new(),
    };
    (
        UslReading::ContentionBound,
        format!(
            "contention-bound: at N = {max_n} serialisation (sigma = {}) costs {:.0}% of linear scaling; {ceiling}",
            sig4(p.sigma),
            100.0 * loss
        ),
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn pts(data: &[(f64, f64)]) -> Vec<Point> {
        data.iter().map(|&(n, x)| Point { n, x, r: None }).collect()
    }

    /// SPEC SDM91 on a 16-CPU Sun SPARCcenter 2000 (Gunther, Guerrilla Capacity Planning,
    /// 2007; the R `usl` package's `specsdm91` dataset): users, scripts per hour.
    pub(crate) fn specsdm91() -> Vec<Point> {
        pts(&[
            (1.0, 64.9),
            (18.0, 995.9),
            (36.0, 1652.4),
            (72.0, 1853.2),
            (108.0, 1828.9),
            (144.0, 1775.0),
            (216.0, 1702.2),
        ])
    }

    /// The ray-tracing benchmark on an SGI Origin 2000 (Gunther 2007; the R `usl` package's
    /// `raytracer` dataset): processors, operations per second.
    pub(crate) fn raytracer() -> Vec<Point> {
        pts(&[
            (1.0, 20.0),
            (4.0, 78.0),
            (8.0, 130.0),
            (12.0, 170.0),
            (16.0, 190.0),
            (20.0, 200.0),
            (24.0, 210.0),
            (28.0, 230.0),
            (32.0, 260.0),
            (48.0, 280.0),
            (64.0, 310.0),
        ])
    }

    fn sig(a: f64, b: f64, digits: i32) -> bool {
        // Equal to `digits` significant digits: |a - b| within half a unit of the last digit.
        let scale = 10f64.powi(b.abs().log10().floor() as i32 - digits + 1);
        (a - b).abs() <= 0.5 * scale
    }

    #[test]
    fn specsdm91_matches_the_r_usl_package() {
        // R usl 3.0, tests/summary.Rout.save (smoeding/usl, commit 0c22191b): alpha (sigma)
        // 2.773e-02 (SE 9.122e-03), beta (kappa) 1.044e-04 (SE 1.988e-05), gamma (lambda)
        // 9.000e+01 (SE 1.421e+01), residual standard error 82.85 on 4 degrees of freedom,
        // multiple R-squared 0.9896; tests/residuals.Rout.save: residuals -25.10 -81.66
        // 111.09 3.05 -49.99 -46.60 56.00.
        let r = analyse(&specsdm91(), &Options::default()).unwrap();
        assert!(sig(r.sigma.estimate, 2.773e-2, 4), "{:?}", r.sigma);
        assert!(sig(r.kappa.estimate, 1.044e-4, 4), "{:?}", r.kappa);
        assert!(
            sig(r.lambda_per_s.estimate, 90.00, 4),
            "{:?}",
            r.lambda_per_s
        );
        assert!(sig(r.sigma.std_error.unwrap(), 9.122e-3, 4));
        assert!(sig(r.kappa.std_error.unwrap(), 1.988e-5, 4));
        assert!(sig(r.lambda_per_s.std_error.unwrap(), 14.21, 4));
        assert!(sig(r.residual_std_error_per_s.unwrap(), 82.85, 4));
        assert_eq!(r.df, 4);
        assert!(sig(r.r_squared, 0.9896, 4));
        let want = [-25.10, -81.66, 111.09, 3.05, -49.99, -46.60, 56.00];
        for (p, w) in r.points.iter().zip(want) {
            assert!(
                (p.residual_per_s - w).abs() < 0.006,
                "{} vs {w}",
                p.residual_per_s
            );
        }
        // tests/efficiency.Rout.save: X / (N lambda) = 0.7211 0.6148 0.5100 0.2860 0.1882
        // 0.1370 0.0876.
        let eff = [0.7211, 0.6148, 0.5100, 0.2860, 0.1882, 0.1370, 0.0876];
        for (p, w) in r.points.iter().zip(eff) {
            assert!(sig(p.efficiency, w, 3), "{} vs {w}", p.efficiency);
        }
        assert!(!r.sigma.at_bound && !r.kappa.at_bound);
        // tests/predict.Rout.save: fitted 90 1078 1541 1850 1879 1822 1646.
        let fitted = [90.0, 1078.0, 1541.0, 1850.0, 1879.0, 1822.0, 1646.0];
        for (p, w) in r.points.iter().zip(fitted) {
            assert!(
                (p.fitted_x_per_s - w).abs() <= 0.5,
                "{} vs {w}",
                p.fitted_x_per_s
            );
        }
        // Nmax = sqrt((1 - 0.02773) / 1.044e-4) = sqrt(9313) = 96.5 users; R usl
        // tests/peak-scalability.Rout.save: signif(peak.scalability(u), 2) = 97.
        let m = r.n_max.unwrap();
        assert!((m - 96.5).abs() < 0.1, "{m}");
        assert!(sig(m, 97.0, 2));
        assert_eq!(r.reading, UslReading::CoherencyBound);
    }

    #[test]
    fn raytracer_bounded_fit_puts_kappa_on_zero() {
        // R usl 3.0, tests/confint.Rout.save (smoeding/usl, commit 0c22191b):
        // coef alpha (sigma) 0.0578, beta (kappa) 0.0000, gamma (lambda) 21.8488; intervals
        // alpha 0.033677 to 0.081864, beta -0.000214 to 0.000214, gamma 17.868380 to
        // 25.829306. Its R/confint.R (commit 68ef0088) takes them as estimate +- SE x
        // qt(level, df) with df = n - 1 = 10 and level 0.95: qt(0.95, 10) = 1.812461, so the
        // standard errors are the half-widths over it: 0.013293, 0.0001181, 2.19617.
        // The unbounded optimum has kappa < 0; the bounded one holds kappa at 0.
        let r = analyse(&raytracer(), &Options::default()).unwrap();
        assert_eq!(r.kappa.estimate, 0.0);
        assert!(r.kappa.at_bound);
        assert!(sig(r.sigma.estimate, 0.0578, 3), "{:?}", r.sigma);
        assert!(
            sig(r.lambda_per_s.estimate, 21.8488, 6),
            "{:?}",
            r.lambda_per_s
        );
        let q = 1.812461;
        assert!(sig(
            r.sigma.std_error.unwrap(),
            (0.081864 - 0.033677) / 2.0 / q,
            4
        ));
        assert!(sig(r.kappa.std_error.unwrap(), 0.000214 / q, 3));
        assert!(sig(
            r.lambda_per_s.std_error.unwrap(),
            (25.829306 - 17.868380) / 2.0 / q,
            5
        ));
        // The bound is what holds kappa: just below 0 the sum of squares is smaller.
        let at_opt = ssr(
            &raytracer(),
            &[r.sigma.estimate, 0.0, r.lambda_per_s.estimate],
        );
        assert!(project(&raytracer(), r.sigma.estimate, -2e-5).1 < at_opt);
        assert_eq!(r.n_max, None);
        assert_eq!(r.reading, UslReading::ContentionBound);
        let c = r.x_ceiling_per_s.unwrap();
        assert!((c - r.lambda_per_s.estimate / r.sigma.estimate).abs() < 1e-9);
    }

    #[test]
    fn an_exact_usl_curve_is_recovered() {
        // R usl tests/usl-nls.R: tput = 1, 1.8868, 3.0769, 3.5294, 3.5398, 3.3557 at
        // N = 1, 2, 4, 6, 8, 10 gives alpha 0.02, beta 0.02, gamma 1.00.
        let r = analyse(
            &pts(&[
                (1.0, 1.0),
                (2.0, 1.8868),
                (4.0, 3.0769),
                (6.0, 3.5294),
                (8.0, 3.5398),
                (10.0, 3.3557),
            ]),
            &Options::default(),
        )
        .unwrap();
        assert!((r.sigma.estimate - 0.02).abs() < 1e-4);
        assert!((r.kappa.estimate - 0.02).abs() < 1e-4);
        assert!((r.lambda_per_s.estimate - 1.0).abs() < 1e-4);
    }

    #[test]
    fn exact_curves_across_the_parameter_range_are_recovered() {
        // The grid is coarse (quarter decades); refinement must still land on the truth.
        let ns = [1.0, 2.0, 4.0, 8.0, 16.0, 24.0, 32.0, 48.0, 64.0];
        for sigma in [0.0, 1e-4, 0.01, 0.1, 0.5] {
            for kappa in [0.0, 1e-6, 1e-4, 1e-2] {
                let truth = Params {
                    sigma,
                    kappa,
                    lambda: 250.0,
                };
                let p: Vec<Point> = ns
                    .iter()
                    .map(|&n| Point {
                        n,
                        x: truth.x(n),
                        r: None,
                    })
                    .collect();
                let f = fit(&p).unwrap().params;
                let ok = |got: f64, want: f64| (got - want).abs() <= 1e-6 + 1e-4 * want;
                assert!(
                    ok(f.sigma, sigma) && ok(f.kappa, kappa) && ok(f.lambda, 250.0),
                    "truth sigma {sigma} kappa {kappa}: got {f:?}"
                );
            }
        }
    }

    #[test]
    fn lambda_is_fitted_not_taken_from_x1() {
        // X(1) measured low (a cold cache) must not drag lambda: the rest of the points lie
        // on lambda = 100, sigma = 0.05, kappa = 0.001.
        let truth = Params {
            sigma: 0.05,
            kappa: 0.001,
            lambda: 100.0,
        };
        let mut p: Vec<Point> = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
            .iter()
            .map(|&n| Point {
                n,
                x: truth.x(n),
                r: None,
            })
            .collect();
        p[0].x = 60.0;
        let f = fit(&p).unwrap();
        assert!((f.params.lambda - 60.0).abs() > 20.0);
        assert!((f.params.lambda - 100.0).abs() < 15.0, "{:?}", f.params);
    }

    #[test]
    fn linear_data_reads_linear_so_far() {
        let p: Vec<Point> = (1..=8)
            .map(|n| Point {
                n: n as f64,
                x: 50.0 * n as f64 * (1.0 + 0.001 * (n % 2) as f64),
                r: None,
            })
            .collect();
        let r = analyse(&p, &Options::default()).unwrap();
        assert_eq!(r.reading, UslReading::LinearSoFar, "{}", r.reading_text);
    }

    #[test]
    fn predictions_beyond_twice_the_measured_range_are_flagged() {
        let r = analyse(
            &specsdm91(),
            &Options {
                source: "specsdm91".into(),
                predict: vec![100.0, 500.0],
            },
        )
        .unwrap();
        assert!(!r.predictions[0].beyond_2x_measured);
        assert!(r.predictions[1].beyond_2x_measured);
        assert!(r.warnings.iter().any(|w| w.contains("N = 500")));
        assert!(!r.warnings.iter().any(|w| w.contains("N = 100 ")));
    }

    #[test]
    fn response_times_give_the_implied_think_time_and_predicted_r() {
        // A closed benchmark without think time: R = N / X exactly, so Z = 0 and the
        // predicted R at N is N / X(N).
        let truth = Params {
            sigma: 0.1,
            kappa: 0.0,
            lambda: 1000.0,
        };
        let p: Vec<Point> = [1.0, 2.0, 4.0, 8.0, 16.0]
            .iter()
            .map(|&n| Point {
                n,
                x: truth.x(n),
                r: Some(n / truth.x(n)),
            })
            .collect();
        let r = analyse(
            &p,
            &Options {
                source: String::new(),
                predict: vec![24.0],
            },
        )
        .unwrap();
        assert!(r.implied_think_s.unwrap() < 1e-9);
        let pr = r.predictions[0];
        assert!((pr.r_s.unwrap() - 24.0 / truth.x(24.0)).abs() < 1e-6);
    }

    #[test]
    fn too_few_or_bad_points_are_refused() {
        let e = fit(&pts(&[(1.0, 1.0), (2.0, 2.0), (2.0, 2.1)])).unwrap_err();
        assert!(matches!(e, ModelError::TooFewPoints(_)), "{e}");
        let e = fit(&pts(&[(0.0, 1.0), (2.0, 2.0), (3.0, 2.1)])).unwrap_err();
        assert!(matches!(e, ModelError::BadPoint(_)));
        let e = fit(&pts(&[(1.0, -1.0), (2.0, 2.0), (3.0, 2.1)])).unwrap_err();
        assert!(matches!(e, ModelError::BadPoint(_)));
        let e = fit(&pts(&[(1.0, 0.0), (2.0, 0.0), (3.0, 0.0)])).unwrap_err();
        assert!(matches!(e, ModelError::BadPoint(_)));
        // Exactly three points: a fit, but no standard errors (0 degrees of freedom).
        let f = fit(&pts(&[(1.0, 1.0), (2.0, 1.9), (4.0, 3.4)])).unwrap();
        assert_eq!(f.std_errors, None);
    }

    #[test]
    fn a_curve_falling_from_the_start_peaks_at_one() {
        // Throughput that falls from N = 1 on drives sigma and kappa to their upper bound:
        // sqrt((1 - sigma) / kappa) = 0 would put the peak at N = 0, where X is 0 / 0.
        let p = pts(&[(1.0, 1000.0), (2.0, 400.0), (4.0, 150.0), (8.0, 40.0)]);
        let r = analyse(&p, &Options::default()).unwrap();
        let (m, x) = (r.n_max.unwrap(), r.x_max_per_s.unwrap());
        assert_eq!(m, 1.0);
        assert!(x.is_finite() && x > 0.0, "{x}");
    }

    #[test]
    fn the_fit_never_reports_a_negative_coefficient() {
        // Superlinear then flat data pull an unbounded fit to sigma < 0.
        let p = pts(&[
            (1.0, 10.0),
            (2.0, 22.0),
            (4.0, 48.0),
            (8.0, 100.0),
            (16.0, 210.0),
        ]);
        let f = fit(&p).unwrap();
        assert!(
            f.params.sigma >= 0.0 && f.params.kappa >= 0.0,
            "{:?}",
            f.params
        );
    }
}
