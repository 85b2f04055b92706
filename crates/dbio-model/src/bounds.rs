//! Asymptotic bounds of a closed system (Lazowska et al., *Quantitative System Performance*,
//! ch. 5): with total demand D, bottleneck demand Dmax and think time Z,
//! X(N) <= min(N / (D + Z), 1 / Dmax) and R(N) >= max(D, N Dmax - Z).

use crate::{ModelError, Rows};
use dbio_schema::model::{BoundsResult, BoundsRow, Demands};

/// The upper bound on throughput at population `n`.
pub fn x_upper(d: &Demands, n: f64) -> f64 {
    (n / (d.total_demand_s + d.think_s)).min(1.0 / d.max_demand_s)
}

/// The lower bound on response time at population `n`.
pub fn r_lower(d: &Demands, n: f64) -> f64 {
    d.total_demand_s.max(n * d.max_demand_s - d.think_s)
}

/// One row of bounds.
pub fn row(d: &Demands, n: u64) -> BoundsRow {
    BoundsRow {
        n,
        x_upper_per_s: x_upper(d, n as f64),
        r_lower_s: r_lower(d, n as f64),
    }
}

/// The population table shown when none is asked for: up to twice Nsat (at least 4 rows),
/// so the knee sits in the middle.
pub fn default_max_n(d: &Demands) -> u64 {
    ((2.0 * d.n_sat).ceil() as u64).clamp(4, 10_000)
}

/// The bounds for N = 1..=max_n.
pub fn bounds(d: Demands, max_n: u64) -> Result<BoundsResult, ModelError> {
    table(d, Rows::all(max_n))
}

/// The bounds at the populations `rows` shows (each row is computed on its own: memory is
/// O(rows shown)).
pub fn table(d: Demands, rows: Rows) -> Result<BoundsResult, ModelError> {
    if rows.max_n == 0 {
        return Err(ModelError::ZeroPopulation);
    }
    let rows = (1..=rows.max_n)
        .filter(|&n| rows.shows(n))
        .map(|n| row(&d, n))
        .collect();
    Ok(BoundsResult {
        demands: d,
        measured: None,
        rows,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::{demands, queueing};

    #[test]
    fn bounds_follow_the_laws_on_both_sides_of_nsat() {
        // D = 0.0021 + 0.0045 = 0.0066 s, Dmax = 0.0045 (disk), Z = 0.1 s.
        // Nsat = 0.1066 / 0.0045 = 23.69. Below it X <= N / 0.1066 and R >= D; above it
        // X <= 1 / 0.0045 = 222.2 and R >= N * 0.0045 - 0.1 (N = 40: 0.08 s).
        let d = demands(vec![queueing("cpu", 0.0021), queueing("disk", 0.0045)], 0.1).unwrap();
        assert!((d.n_sat - 23.688_888_9).abs() < 1e-6);
        let r = bounds(d, 40).unwrap();
        assert_eq!(r.rows.len(), 40);
        let r10 = r.rows[9];
        assert_eq!(r10.n, 10);
        assert!((r10.x_upper_per_s - 10.0 / 0.1066).abs() < 1e-9);
        assert!((r10.r_lower_s - 0.0066).abs() < 1e-12);
        let r40 = r.rows[39];
        assert!((r40.x_upper_per_s - 1.0 / 0.0045).abs() < 1e-9);
        assert!((r40.r_lower_s - 0.08).abs() < 1e-12);
        // Monotone: X never falls, R never falls.
        for w in r.rows.windows(2) {
            assert!(w[1].x_upper_per_s >= w[0].x_upper_per_s);
            assert!(w[1].r_lower_s >= w[0].r_lower_s);
        }
    }

    #[test]
    fn pdq_bounds_analysis_of_the_teradata_model() {
        // PDQ's "Bounds Analysis" for its Teradata DBC-10/12 model (DrQz/pdq-qnm-pkg,
        // examples/ppa_1998/chap6/dbc.c and dbc_exact.out, commit 478fcad5): 15 IFPs of
        // 0.10/15 s, 50 AMPs of 0.60/50 s, 100 DSUs of 1.20/100 s, Z = 10 s.
        // PDQ prints Max Throughput 83.3333, Min Response 1.9000, Optimal Clients 991.6667.
        let d = demands(teradata(), 10.0).unwrap();
        assert!((d.x_limit_per_s - 83.3333).abs() < 1e-4);
        assert!((d.total_demand_s - 1.9).abs() < 1e-12);
        assert!((d.n_sat - 991.6667).abs() < 1e-4);
        assert_eq!(d.bottleneck, "AMP0");
    }

    /// The centres of PDQ's Teradata DBC-10/12 example.
    pub(crate) fn teradata() -> Vec<dbio_schema::model::Centre> {
        let mut c = Vec::new();
        c.extend((0..15).map(|k| queueing(&format!("IFP{k}"), 0.10 / 15.0)));
        c.extend((0..50).map(|k| queueing(&format!("AMP{k}"), 0.60 / 50.0)));
        c.extend((0..100).map(|k| queueing(&format!("DSU{k}"), 1.20 / 100.0)));
        c
    }

    #[test]
    fn zero_rows_is_refused_and_the_default_table_spans_the_knee() {
        let d = demands(vec![queueing("cpu", 0.5)], 1.5).unwrap();
        assert_eq!(d.n_sat, 4.0);
        assert_eq!(default_max_n(&d), 8);
        assert_eq!(bounds(d, 0), Err(ModelError::ZeroPopulation));
    }
}
