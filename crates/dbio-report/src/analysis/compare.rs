//! Whether two runs differ by more than run-to-run noise: the Mann-Whitney U test over their
//! per-interval throughput (two-sided, normal approximation with tie correction). It makes no
//! assumption about the distribution; it does assume intervals are independent, which
//! periodic stalls and drift violate (the report shows those beside the verdict).

/// The test's name as results write it.
pub const TEST: &str = "mann-whitney-u";

/// Two-sided p-value of the Mann-Whitney U test of `a` against `b`; `None` when either side
/// has fewer than 5 values (the normal approximation is not worth quoting there).
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<f64> {
    let (n1, n2) = (a.len(), b.len());
    if n1 < 5 || n2 < 5 {
        return None;
    }
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|&v| (v, true))
        .chain(b.iter().map(|&v| (v, false)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = all.len();
    let mut r1 = 0.0;
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        for x in &all[i..=j] {
            if x.1 {
                r1 += rank;
            }
        }
        i = j + 1;
    }
    let (n1f, n2f, nf) = (n1 as f64, n2 as f64, n as f64);
    let u1 = r1 - n1f * (n1f + 1.0) / 2.0;
    let mu = n1f * n2f / 2.0;
    let var = n1f * n2f / 12.0 * ((nf + 1.0) - tie_term / (nf * (nf - 1.0)));
    if var <= 0.0 {
        return Some(1.0);
    }
    // Continuity correction of a half towards the mean.
    let z = ((u1 - mu).abs() - 0.5).max(0.0) / var.sqrt();
    Some(erfc(z / std::f64::consts::SQRT_2).min(1.0))
}

/// The complementary error function (Numerical Recipes' erfcc, relative error < 1.2e-7).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erfc_matches_known_values() {
        for (x, want) in [
            (0.0, 1.0),
            (0.5, 0.479_500_122),
            (1.0, 0.157_299_207),
            (2.0, 0.004_677_735),
        ] {
            assert!((erfc(x) - want).abs() < 1e-6, "erfc({x}) = {}", erfc(x));
        }
        assert!((erfc(-1.0) - 1.842_700_793).abs() < 1e-6);
    }

    #[test]
    fn separated_samples_differ_and_interleaved_ones_do_not() {
        let a: Vec<f64> = (0..30).map(|i| 1000.0 + i as f64).collect();
        let b: Vec<f64> = (0..30).map(|i| 2000.0 + i as f64).collect();
        let p = mann_whitney(&a, &b).unwrap();
        assert!(p < 1e-9, "{p}");
        let c: Vec<f64> = (0..30).map(|i| 1000.5 + i as f64).collect();
        let p = mann_whitney(&a, &c).unwrap();
        assert!(p > 0.5, "{p}");
        assert_eq!(mann_whitney(&a[..4], &b), None);
        assert_eq!(mann_whitney(&[1.0; 10], &[1.0; 10]), Some(1.0));
    }

    #[test]
    fn p_value_matches_a_worked_example() {
        // Worked by hand: U = 12.5, mean 50, five tied pairs (t^3 - t = 6 each), so
        // var = 100/12 * (21 - 30/380) = 174.34; z = (37.5 - 0.5) / 13.204 = 2.802;
        // p = erfc(2.802 / sqrt 2) = 0.00508.
        let a: Vec<f64> = (1..=10).map(f64::from).collect();
        let b: Vec<f64> = (6..=15).map(f64::from).collect();
        let p = mann_whitney(&a, &b).unwrap();
        assert!((p - 0.005_08).abs() < 2e-5, "{p}");
    }
}
