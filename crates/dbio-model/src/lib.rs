//! Queueing models for `dbio model`, pure math without any I/O:
//!
//! - [`bounds`]: the operational-law bounds of a closed system (X(N) <= min(N/(D+Z), 1/Dmax),
//!   R(N) >= max(D, N Dmax - Z), Nsat = (D+Z)/Dmax);
//! - [`bench`]: service demands measured by a `dbio bench` run (utilisation law);
//! - [`mva`]: exact single-class mean value analysis with queueing and delay centres;
//! - [`usl`]: the Universal Scalability Law fitted by bounded non-linear least squares;
//! - [`points`]: (N, X[, R]) points read from CSV, JSON or `dbio bench` results (text in,
//!   points out);
//! - [`live`]: the elements of response time from utilisations and TPS.
//!
//! Results are the serde types of [`dbio_report::model`]. This crate never prints and never
//! exits: it returns results and [`ModelError`].
#![deny(missing_docs)]

pub mod bench;
pub mod bounds;
pub mod live;
pub mod mva;
pub mod points;
pub mod usl;

use dbio_report::model::{Centre, CentreKind, Demands};

/// What a model refuses.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ModelError {
    /// No centre was given.
    #[error("no service centre given: give at least one demand, e.g. cpu=0.002")]
    NoCentre,
    /// A demand is negative, NaN or infinite.
    #[error("demand of {name} is {value}: a demand is a time in seconds, 0 or more")]
    BadDemand {
        /// The centre.
        name: String,
        /// The value given.
        value: f64,
    },
    /// Two centres share a name.
    #[error("centre {0} is given twice: give each centre once")]
    DuplicateCentre(String),
    /// Every queueing centre has demand 0 (or there is none): nothing can saturate.
    #[error(
        "no queueing centre has a demand above 0: the bounds need a bottleneck (delay centres never saturate)"
    )]
    NoBottleneck,
    /// The think time is negative, NaN or infinite.
    #[error("think time {0} s: give 0 or more seconds")]
    BadThink(f64),
    /// A population of 0.
    #[error("population 0: give N of 1 or more")]
    ZeroPopulation,
    /// Too few distinct points for a fit.
    #[error("{0}")]
    TooFewPoints(String),
    /// A point that cannot be a measurement.
    #[error("{0}")]
    BadPoint(String),
    /// Input that is neither CSV nor JSON of points nor bench results.
    #[error("{0}")]
    BadInput(String),
    /// A utilisation or TPS that cannot give a demand.
    #[error("{0}")]
    BadMeasurement(String),
}

/// Checks the centres and the think time and computes D, Dmax, the bottleneck and Nsat.
pub fn demands(centres: Vec<Centre>, think_s: f64) -> Result<Demands, ModelError> {
    if centres.is_empty() {
        return Err(ModelError::NoCentre);
    }
    if !think_s.is_finite() || think_s < 0.0 {
        return Err(ModelError::BadThink(think_s));
    }
    for (i, c) in centres.iter().enumerate() {
        if !c.demand_s.is_finite() || c.demand_s < 0.0 {
            return Err(ModelError::BadDemand {
                name: c.name.clone(),
                value: c.demand_s,
            });
        }
        if centres[..i].iter().any(|o| o.name == c.name) {
            return Err(ModelError::DuplicateCentre(c.name.clone()));
        }
    }
    let total_demand_s: f64 = centres.iter().map(|c| c.demand_s).sum();
    // The first of equal maxima is the bottleneck (the order the user gave).
    let mut bottleneck: Option<&Centre> = None;
    for c in centres.iter().filter(|c| c.kind == CentreKind::Queueing) {
        if c.demand_s > bottleneck.map_or(0.0, |b| b.demand_s) {
            bottleneck = Some(c);
        }
    }
    let b = bottleneck.ok_or(ModelError::NoBottleneck)?;
    let max_demand_s = b.demand_s;
    let bottleneck = b.name.clone();
    Ok(Demands {
        n_sat: (total_demand_s + think_s) / max_demand_s,
        x_limit_per_s: 1.0 / max_demand_s,
        total_demand_s,
        max_demand_s,
        bottleneck,
        centres,
        think_s,
    })
}

/// Whether a table row for population `n` is shown with `--step step`: the first, every
/// step-th, the last (`last`), and the benchmark's own population (`also`).
pub fn keep_row(n: u64, step: u64, last: u64, also: Option<u64>) -> bool {
    n == 1 || step <= 1 || n.is_multiple_of(step) || n == last || Some(n) == also
}

/// A queueing centre (for tests and callers that build centres by hand).
pub fn queueing(name: &str, demand_s: f64) -> Centre {
    Centre {
        name: name.to_string(),
        kind: CentreKind::Queueing,
        demand_s,
    }
}

/// A delay centre.
pub fn delay(name: &str, demand_s: f64) -> Centre {
    Centre {
        name: name.to_string(),
        kind: CentreKind::Delay,
        demand_s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demands_sum_and_pick_the_largest_queueing_centre() {
        // The seed's example shape: D = 0.5 + 0.3 + 0.2 = 1.0, Dmax = 0.5, Z = 1:
        // Nsat = (1.0 + 1.0) / 0.5 = 4, X limit = 1 / 0.5 = 2 per second.
        let d = demands(
            vec![
                queueing("cpu", 0.5),
                queueing("disk", 0.3),
                queueing("net", 0.2),
            ],
            1.0,
        )
        .unwrap();
        assert_eq!(d.total_demand_s, 1.0);
        assert_eq!(d.max_demand_s, 0.5);
        assert_eq!(d.bottleneck, "cpu");
        assert_eq!(d.n_sat, 4.0);
        assert_eq!(d.x_limit_per_s, 2.0);
    }

    #[test]
    fn a_delay_centre_adds_to_d_but_is_never_the_bottleneck() {
        let d = demands(vec![delay("wan", 2.0), queueing("disk", 0.1)], 0.0).unwrap();
        assert_eq!(d.bottleneck, "disk");
        assert_eq!(d.total_demand_s, 2.1);
        assert!((d.n_sat - 21.0).abs() < 1e-12);
        assert_eq!(
            demands(vec![delay("wan", 2.0)], 0.0),
            Err(ModelError::NoBottleneck)
        );
    }

    #[test]
    fn thinned_tables_keep_the_ends_and_the_measured_row() {
        let kept: Vec<u64> = (1..=23).filter(|&n| keep_row(n, 10, 23, Some(7))).collect();
        assert_eq!(kept, [1, 7, 10, 20, 23]);
        assert!((1..=5).all(|n| keep_row(n, 1, 5, None)));
    }

    #[test]
    fn bad_demands_are_refused() {
        assert_eq!(demands(vec![], 0.0), Err(ModelError::NoCentre));
        assert!(matches!(
            demands(vec![queueing("cpu", -1.0)], 0.0),
            Err(ModelError::BadDemand { .. })
        ));
        assert!(matches!(
            demands(vec![queueing("cpu", f64::NAN)], 0.0),
            Err(ModelError::BadDemand { .. })
        ));
        assert_eq!(
            demands(vec![queueing("cpu", 1.0), queueing("cpu", 2.0)], 0.0),
            Err(ModelError::DuplicateCentre("cpu".into()))
        );
        assert_eq!(
            demands(vec![queueing("cpu", 1.0)], -0.5),
            Err(ModelError::BadThink(-0.5))
        );
        assert_eq!(
            demands(vec![queueing("cpu", 0.0)], 0.0),
            Err(ModelError::NoBottleneck)
        );
    }
}
