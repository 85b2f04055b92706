//! The knee of a scaling curve: the highest load (threads x iodepth) whose p99 stays under the
//! SLO, and the load after which throughput stops growing by more than a share per doubling.

use dbio_schema::report::Knee;

/// One measured load: (threads x iodepth, throughput, p99 in ns).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadPoint {
    /// threads x iodepth.
    pub load: u64,
    /// Throughput.
    pub iops: f64,
    /// p99 latency.
    pub p99_ns: u64,
}

/// The knee of points sorted by load. `slo_p99_ns`: the user's limit, else twice the p99 at
/// the lowest load. Throughput growth between two loads is normalised per doubling:
/// `(iops_b / iops_a)^(1 / log2(load_b / load_a)) - 1`.
pub fn knee(points: &[LoadPoint], slo_p99_ns: Option<u64>, growth_pct: f64) -> Option<Knee> {
    let first = points.first()?;
    let (slo, from) = match slo_p99_ns {
        Some(s) => (s, "--slo-p99".to_string()),
        None => (first.p99_ns * 2, "2x p99 at the lowest load".to_string()),
    };
    let max_load_within_slo = points
        .iter()
        .take_while(|p| p.p99_ns <= slo)
        .last()
        .map(|p| p.load);
    let mut saturation = None;
    for w in points.windows(2) {
        let (a, b) = (w[0], w[1]);
        if a.load == 0 || b.load <= a.load || a.iops <= 0.0 {
            continue;
        }
        let doublings = (b.load as f64 / a.load as f64).log2();
        let growth = ((b.iops / a.iops).powf(1.0 / doublings) - 1.0) * 100.0;
        if growth < growth_pct {
            saturation = Some(a);
            break;
        }
    }
    Some(Knee {
        slo_p99_ns: slo,
        slo_from: from,
        max_load_within_slo,
        saturation_load: saturation.map(|p| p.load),
        saturation_iops: saturation.map(|p| p.iops),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(v: &[(u64, f64, u64)]) -> Vec<LoadPoint> {
        v.iter()
            .map(|&(load, iops, p99_ns)| LoadPoint { load, iops, p99_ns })
            .collect()
    }

    #[test]
    fn knee_of_a_curve_that_saturates_at_eight() {
        // Throughput doubles up to 8 threads, then grows 3% per doubling; p99 climbs.
        let p = pts(&[
            (1, 1000.0, 100_000),
            (2, 2000.0, 110_000),
            (4, 3900.0, 150_000),
            (8, 7000.0, 190_000),
            (16, 7210.0, 380_000),
            (32, 7300.0, 760_000),
        ]);
        let k = knee(&p, None, 5.0).unwrap();
        assert_eq!(k.slo_p99_ns, 200_000);
        assert_eq!(k.max_load_within_slo, Some(8));
        assert_eq!(k.saturation_load, Some(8));
        assert_eq!(k.saturation_iops, Some(7000.0));
        let k = knee(&p, Some(400_000), 5.0).unwrap();
        assert_eq!(
            (k.max_load_within_slo, k.slo_from.as_str()),
            (Some(16), "--slo-p99")
        );
    }

    #[test]
    fn growth_is_normalised_per_doubling_and_a_linear_curve_has_no_saturation() {
        // 1 -> 4 threads is two doublings: 10% in total is under 5% per doubling.
        let k = knee(&pts(&[(1, 1000.0, 1), (4, 1100.0, 1)]), None, 5.0).unwrap();
        assert_eq!(k.saturation_load, Some(1));
        let k = knee(
            &pts(&[(1, 1000.0, 5), (2, 2000.0, 5), (4, 4000.0, 5)]),
            None,
            5.0,
        )
        .unwrap();
        assert_eq!(k.saturation_load, None);
        assert_eq!(k.max_load_within_slo, Some(4));
        let k = knee(&pts(&[(1, 1000.0, 50), (2, 2000.0, 500)]), None, 5.0).unwrap();
        assert_eq!(k.max_load_within_slo, Some(1));
        assert!(knee(&[], None, 5.0).is_none());
    }
}
