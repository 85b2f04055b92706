//! Exact mean value analysis of a closed, single-class, product-form network (Reiser and
//! Lavenberg 1980; Lazowska et al., *Quantitative System Performance*, ch. 6):
//! Q_k(0) = 0; for n = 1..N: R_k(n) = D_k (1 + Q_k(n-1)) at a queueing centre, D_k at a delay
//! centre; X(n) = n / (Z + sum R_k(n)); Q_k(n) = X(n) R_k(n).
//!
//! The cost is O(N K) time and O(K) memory: N = 10,000 with 10 centres is 100,000 steps. The
//! result keeps only the rows asked for ([`Rows`]), so N = 10,000,000 needs no more memory
//! than N = 10.

use crate::{bounds, ModelError, Rows};
use dbio_schema::model::{CentreKind, Demands, MvaCentre, MvaResult, MvaRow};

/// Solves the network for n = 1..=max_n, one row per population.
pub fn mva(d: Demands, max_n: u64) -> Result<MvaResult, ModelError> {
    solve(d, Rows::all(max_n))
}

/// Solves the network for n = 1..=`rows.max_n` and keeps the rows `rows` shows: the recursion
/// runs through every population in O(K) memory, the result holds only the rows shown.
pub fn solve(d: Demands, rows: Rows) -> Result<MvaResult, ModelError> {
    let max_n = rows.max_n;
    if max_n == 0 {
        return Err(ModelError::ZeroPopulation);
    }
    let k = d.centres.len();
    let mut q = vec![0.0f64; k];
    let mut res = vec![0.0f64; k];
    let mut table = Vec::with_capacity(usize::try_from(rows.count()).unwrap_or(0).min(1 << 20));
    let mut x = 0.0;
    for n in 1..=max_n {
        let mut r_total = 0.0;
        for (i, c) in d.centres.iter().enumerate() {
            res[i] = match c.kind {
                CentreKind::Queueing => c.demand_s * (1.0 + q[i]),
                CentreKind::Delay => c.demand_s,
            };
            r_total += res[i];
        }
        x = n as f64 / (d.think_s + r_total);
        for i in 0..k {
            q[i] = x * res[i];
        }
        if !rows.shows(n) {
            continue;
        }
        let b = bounds::row(&d, n);
        table.push(MvaRow {
            n,
            x_per_s: x,
            r_s: r_total,
            x_upper_per_s: b.x_upper_per_s,
            r_lower_s: b.r_lower_s,
            bottleneck_utilization_pct: 100.0 * x * d.max_demand_s,
        });
    }
    let per_centre = d
        .centres
        .iter()
        .enumerate()
        .map(|(i, c)| MvaCentre {
            name: c.name.clone(),
            kind: c.kind,
            demand_s: c.demand_s,
            residence_s: res[i],
            queue_length: q[i],
            utilization_pct: (c.kind == CentreKind::Queueing).then_some(100.0 * x * c.demand_s),
        })
        .collect();
    Ok(MvaResult {
        demands: d,
        measured: None,
        rows: table,
        n: max_n,
        per_centre,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{delay, demands, queueing, Rows};

    fn close(a: f64, b: f64, rel: f64) -> bool {
        ((a - b) / b).abs() <= rel
    }

    #[test]
    fn pdq_exact_teradata_model() {
        // PDQ, Solution Method: EXACT, for the Teradata DBC-10/12 model with 300 users and
        // Z = 10 s (DrQz/pdq-qnm-pkg, examples/ppa_1998/chap6/dbc.c and dbc_exact.out,
        // commit 478fcad5): Mean Throughput 23.7494 Job/Sec, Response Time 2.6319 Sec,
        // IFP0 utilisation 15.8330 %, queue 0.1880, AMP0 utilisation 28.4993 %, queue 0.3979.
        let d = demands(crate::bounds::tests::teradata(), 10.0).unwrap();
        let r = mva(d, 300).unwrap();
        let last = r.rows.last().unwrap();
        assert_eq!(last.n, 300);
        assert!(close(last.x_per_s, 23.7494, 5e-6), "{}", last.x_per_s);
        assert!(close(last.r_s, 2.6319, 5e-5), "{}", last.r_s);
        let ifp = &r.per_centre[0];
        assert!(close(ifp.utilization_pct.unwrap(), 15.8330, 5e-6));
        assert!(close(ifp.queue_length, 0.1880, 5e-4));
        let amp = &r.per_centre[15];
        assert_eq!(amp.name, "AMP0");
        assert!(close(amp.utilization_pct.unwrap(), 28.4993, 5e-6));
        assert!(close(amp.queue_length, 0.3979, 5e-4));
        // Little's law over the whole circuit: N = X (R + Z).
        assert!(close(last.x_per_s * (last.r_s + 10.0), 300.0, 1e-12));
    }

    #[test]
    fn pdq_exact_m_m_1_with_100_terminals() {
        // PDQ's closed M/M/1//N example: one CPU of 0.63 s, 100 users thinking 300 s
        // (DrQz/pdq-qnm-pkg, "examples/Book PPA 1998/chap2/closed1.out", commit 4d0f9c9d):
        // Mean Throughput 0.3325, Response Time 0.7943, Utilization 20.9445 %,
        // Queue Length 0.2641.
        let d = demands(vec![queueing("CPU", 0.63)], 300.0).unwrap();
        let r = mva(d, 100).unwrap();
        let last = r.rows.last().unwrap();
        assert!(close(last.x_per_s, 0.3325, 2e-4));
        assert!(close(last.r_s, 0.7943, 1e-4));
        assert!(close(
            r.per_centre[0].utilization_pct.unwrap(),
            20.9445,
            5e-6
        ));
        assert!(close(r.per_centre[0].queue_length, 0.2641, 2e-4));
    }

    #[test]
    fn one_user_sees_no_queue_and_many_users_meet_the_bound() {
        // D = 0.5 + 0.3 + 0.2, Z = 1: X(1) = 1 / (1 + 1) = 0.5 (domain note's check);
        // by hand for N = 2: Q(1) = 0.5 * (0.5, 0.3, 0.2) = (0.25, 0.15, 0.10),
        // R(2) = 0.5*1.25 + 0.3*1.15 + 0.2*1.1 = 0.625 + 0.345 + 0.22 = 1.19,
        // X(2) = 2 / 2.19 = 0.913242.
        let d = demands(
            vec![
                queueing("cpu", 0.5),
                queueing("disk", 0.3),
                queueing("net", 0.2),
            ],
            1.0,
        )
        .unwrap();
        assert_eq!(d.n_sat, 4.0);
        let r = mva(d, 200).unwrap();
        assert_eq!(r.rows[0].x_per_s, 0.5);
        assert_eq!(r.rows[0].r_s, 1.0);
        assert!((r.rows[1].r_s - 1.19).abs() < 1e-12);
        assert!((r.rows[1].x_per_s - 2.0 / 2.19).abs() < 1e-12);
        for row in &r.rows {
            assert!(row.x_per_s <= row.x_upper_per_s * (1.0 + 1e-12));
            assert!(row.r_s >= row.r_lower_s * (1.0 - 1e-12));
        }
        // Far beyond Nsat the bottleneck is saturated: X -> 1 / Dmax = 2.
        let last = r.rows.last().unwrap();
        assert!(close(last.x_per_s, 2.0, 1e-9));
        assert!(close(r.per_centre[0].utilization_pct.unwrap(), 100.0, 1e-9));
    }

    #[test]
    fn a_delay_centre_never_queues() {
        // A delay centre of 1 s behaves like think time: the same X as Z = 1 s.
        let with_delay = mva(
            demands(vec![queueing("disk", 0.1), delay("wan", 1.0)], 0.0).unwrap(),
            30,
        )
        .unwrap();
        let with_think = mva(demands(vec![queueing("disk", 0.1)], 1.0).unwrap(), 30).unwrap();
        for (a, b) in with_delay.rows.iter().zip(&with_think.rows) {
            assert!((a.x_per_s - b.x_per_s).abs() < 1e-12);
            assert!((a.r_s - (b.r_s + 1.0)).abs() < 1e-12);
        }
        let wan = &with_delay.per_centre[1];
        assert_eq!(wan.residence_s, 1.0);
        assert_eq!(wan.utilization_pct, None);
    }

    #[test]
    fn a_thinned_table_holds_the_rows_shown_with_the_values_of_the_full_one() {
        let d = || demands(vec![queueing("cpu", 0.0021), queueing("disk", 0.0045)], 0.1).unwrap();
        let full = mva(d(), 1000).unwrap();
        let rows = Rows {
            max_n: 1000,
            step: 300,
            also: Some(7),
        };
        let thin = solve(d(), rows).unwrap();
        let ns: Vec<u64> = thin.rows.iter().map(|r| r.n).collect();
        assert_eq!(ns, [1, 7, 300, 600, 900, 1000]);
        assert_eq!(thin.rows.len() as u64, rows.count());
        for r in &thin.rows {
            assert_eq!(*r, full.rows[r.n as usize - 1]);
        }
        assert_eq!(thin.per_centre, full.per_centre);
        assert_eq!(thin.n, 1000);
    }

    #[test]
    fn population_zero_is_refused() {
        let d = demands(vec![queueing("cpu", 0.1)], 0.0).unwrap();
        assert_eq!(mva(d, 0), Err(ModelError::ZeroPopulation));
    }
}
