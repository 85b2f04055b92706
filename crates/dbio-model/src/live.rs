//! The elements of response time of a running system (the seed "Elements of Response Time"):
//! with the utilisation U of each resource over an interval and the transactions per second
//! the application did in it, the service demand is D_k = U_k / TPS (the utilisation law);
//! D = sum D_k, Dmax = max D_k, Nsat = (D + Z) / Dmax, and the mean response time at N
//! transactions in the system is at least D below Nsat and N Dmax - Z from it on.

use crate::ModelError;
use dbio_schema::model::{LiveResource, LiveResult, ResourceKind};

/// One resource's utilisation over the interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Utilisation {
    /// `cpu`, a device or an interface name.
    pub name: String,
    /// CPU, disk or network.
    pub kind: ResourceKind,
    /// Busy fraction, 0 to 1.
    pub busy: f64,
    /// CPUs averaged over (CPU only).
    pub servers: Option<u32>,
    /// What was measured, for people.
    pub detail: String,
}

/// What was measured over one interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Interval {
    /// Seconds measured.
    pub interval_s: f64,
    /// Transactions per second.
    pub tps: f64,
    /// Where TPS came from.
    pub tps_source: String,
    /// Every resource.
    pub resources: Vec<Utilisation>,
    /// Think time Z.
    pub think_s: f64,
    /// Transactions in the system: the mean of Threads_running over the interval, the
    /// sampler excluded.
    pub threads_running: Option<f64>,
    /// How the figures were obtained.
    pub notes: Vec<String>,
}

/// The utilisation of a link: the busier direction's bits per second over its speed.
pub fn link_busy(rx_bytes: u64, tx_bytes: u64, interval_s: f64, speed_mbit: u64) -> f64 {
    let bits = rx_bytes.max(tx_bytes) as f64 * 8.0 / interval_s;
    bits / (speed_mbit as f64 * 1e6)
}

/// D, Dmax, the bottleneck, Nsat and the response-time floor from the interval.
pub fn elements(m: Interval) -> Result<LiveResult, ModelError> {
    if m.interval_s.is_nan() || m.interval_s <= 0.0 {
        return Err(ModelError::BadMeasurement(format!(
            "interval of {} s: measure over a positive interval",
            m.interval_s
        )));
    }
    if !m.tps.is_finite() || m.tps <= 0.0 {
        return Err(ModelError::BadMeasurement(format!(
            "{} transactions per second from {} over {:.1} s: a demand is utilisation per transaction, so it needs transactions; run it under load or give --tps",
            m.tps, m.tps_source, m.interval_s
        )));
    }
    if !m.think_s.is_finite() || m.think_s < 0.0 {
        return Err(ModelError::BadThink(m.think_s));
    }
    if m.resources.is_empty() {
        return Err(ModelError::NoCentre);
    }
    let resources: Vec<LiveResource> = m
        .resources
        .into_iter()
        .map(|u| LiveResource {
            demand_s: u.busy / m.tps,
            utilization_pct: 100.0 * u.busy,
            name: u.name,
            kind: u.kind,
            servers: u.servers,
            detail: u.detail,
        })
        .collect();
    let total: f64 = resources.iter().map(|r| r.demand_s).sum();
    let b = resources
        .iter()
        .fold(None::<&LiveResource>, |best, r| match best {
            Some(b) if b.demand_s >= r.demand_s => Some(b),
            _ => Some(r),
        })
        .ok_or(ModelError::NoCentre)?;
    if b.demand_s <= 0.0 {
        return Err(ModelError::BadMeasurement(
            "every resource was idle over the interval: no bottleneck to model; measure under load"
                .into(),
        ));
    }
    let (dmax, bottleneck) = (b.demand_s, b.name.clone());
    let r_floor_s = m.threads_running.map(|n| total.max(n * dmax - m.think_s));
    Ok(LiveResult {
        interval_s: m.interval_s,
        transactions_per_s: m.tps,
        tps_source: m.tps_source,
        think_s: m.think_s,
        total_demand_s: total,
        max_demand_s: dmax,
        bottleneck,
        n_sat: (total + m.think_s) / dmax,
        threads_running: m.threads_running,
        r_floor_s,
        resources,
        notes: m.notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(name: &str, kind: ResourceKind, busy: f64) -> Utilisation {
        Utilisation {
            name: name.into(),
            kind,
            busy,
            servers: None,
            detail: String::new(),
        }
    }

    #[test]
    fn demands_are_utilisation_over_tps() {
        // The seed's formulas by hand: 500 TPS, CPU 60% busy, disk 90%, link 10%:
        // Dcpu = 0.6 / 500 = 1.2 ms, Ddisk = 0.9 / 500 = 1.8 ms, Dnet = 0.1 / 500 = 0.2 ms;
        // D = 3.2 ms, Dmax = 1.8 ms (disk), Nsat = 3.2 / 1.8 = 1.78 with Z = 0;
        // 10 threads running: R >= 10 * 1.8 ms = 18 ms.
        let r = elements(Interval {
            interval_s: 10.0,
            tps: 500.0,
            tps_source: "--tps".into(),
            resources: vec![
                u("cpu", ResourceKind::Cpu, 0.6),
                u("vda", ResourceKind::Disk, 0.9),
                u("eth0", ResourceKind::Net, 0.1),
            ],
            think_s: 0.0,
            threads_running: Some(10.0),
            notes: vec![],
        })
        .unwrap();
        assert!((r.resources[0].demand_s - 0.0012).abs() < 1e-15);
        assert!((r.total_demand_s - 0.0032).abs() < 1e-15);
        assert_eq!(r.bottleneck, "vda");
        assert!((r.max_demand_s - 0.0018).abs() < 1e-15);
        assert!((r.n_sat - 0.0032 / 0.0018).abs() < 1e-12);
        assert!((r.r_floor_s.unwrap() - 0.018).abs() < 1e-12);
        assert!((r.resources[1].utilization_pct - 90.0).abs() < 1e-12);
        // One thread running: the floor is D.
        let r1 = elements(Interval {
            interval_s: 10.0,
            tps: 500.0,
            tps_source: "--tps".into(),
            resources: vec![u("cpu", ResourceKind::Cpu, 0.6)],
            think_s: 0.0,
            threads_running: Some(1.0),
            notes: vec![],
        })
        .unwrap();
        assert_eq!(r1.r_floor_s, Some(r1.total_demand_s));
    }

    #[test]
    fn no_transactions_or_no_load_is_refused() {
        let m = Interval {
            interval_s: 1.0,
            tps: 0.0,
            tps_source: "Com_commit+Com_rollback".into(),
            resources: vec![u("cpu", ResourceKind::Cpu, 0.5)],
            think_s: 0.0,
            threads_running: None,
            notes: vec![],
        };
        let e = elements(m.clone()).unwrap_err().to_string();
        assert!(e.contains("Com_commit") && e.contains("--tps"), "{e}");
        let idle = Interval {
            tps: 10.0,
            resources: vec![u("cpu", ResourceKind::Cpu, 0.0)],
            ..m
        };
        assert!(elements(idle).unwrap_err().to_string().contains("idle"));
    }

    #[test]
    fn link_busy_takes_the_busier_direction() {
        // 125 MB in 10 s = 100 Mbit/s of a 1000 Mbit/s link: 10%.
        assert!((link_busy(125_000_000, 1_000, 10.0, 1000) - 0.1).abs() < 1e-12);
    }
}
