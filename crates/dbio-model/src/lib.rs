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
//! Results are the serde types of [`dbio_schema::model`]. This crate never prints and never
//! exits: it returns results and [`ModelError`].
#![deny(missing_docs)]

pub mod bench;
pub mod bounds;
pub mod live;
pub mod mva;
pub mod points;
pub mod usl;

use dbio_schema::model::{Centre, CentreKind, Demands};

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

/// The largest population a table may reach: [`mva::mva`] costs O(N K) time (10,000,000
/// populations of 10 centres: about a second), whatever it shows.
pub const MAX_POPULATION: u64 = 10_000_000;

/// The most every-step-th rows a table may show (N = 1, the last and the benchmark's own come
/// on top): a longer table is read by nobody, and its rendering (text, JSON, CSV, the HTML
/// chart) is what costs memory and time. Thin a longer one with a step.
pub const MAX_ROWS: u64 = 100_000;

/// The populations a table of bounds or MVA shows: N = 1..=`max_n` thinned by [`keep_row`].
/// The models compute every population (MVA's recursion needs each one) but keep only these
/// rows, so their memory is O(rows shown + centres), never O(`max_n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rows {
    /// The largest population.
    pub max_n: u64,
    /// Every `step`-th population is shown (1: all).
    pub step: u64,
    /// A population shown whatever the step (the benchmark's own).
    pub also: Option<u64>,
}

impl Rows {
    /// Every population from 1 to `max_n`.
    pub fn all(max_n: u64) -> Self {
        Rows {
            max_n,
            step: 1,
            also: None,
        }
    }

    /// Whether population `n` is shown.
    pub fn shows(&self, n: u64) -> bool {
        (1..=self.max_n).contains(&n) && keep_row(n, self.step, self.max_n, self.also)
    }

    /// How many rows are shown: exactly the `n` in 1..=`max_n` for which [`Rows::shows`] holds.
    pub fn count(&self) -> u64 {
        let n = self.max_n;
        if n == 0 {
            return 0;
        }
        if self.step <= 1 {
            return n;
        }
        let multiples = n / self.step;
        // N = 1 and N = max_n are shown besides the multiples (1 is never one when step > 1).
        let mut rows = multiples + 1;
        if n > 1 && !n.is_multiple_of(self.step) {
            rows += 1;
        }
        if let Some(a) = self.also {
            if a > 1 && a < n && !a.is_multiple_of(self.step) {
                rows += 1;
            }
        }
        rows
    }

    /// Whether the table keeps to [`MAX_ROWS`]: at most that many multiples of the step.
    pub fn within_limit(&self) -> bool {
        self.max_n / self.step.max(1) <= MAX_ROWS
    }

    /// The smallest step that keeps a table of 1..=`max_n` to [`MAX_ROWS`].
    pub fn smallest_step(max_n: u64) -> u64 {
        max_n / (MAX_ROWS + 1) + 1
    }
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
    fn rows_count_what_they_show() {
        for max_n in [1, 2, 3, 7, 10, 23, 24, 100, 101] {
            for step in [1, 2, 3, 5, 10, 24, 200] {
                for also in [
                    None,
                    Some(1),
                    Some(7),
                    Some(10),
                    Some(max_n),
                    Some(max_n + 5),
                ] {
                    let r = Rows { max_n, step, also };
                    let shown = (1..=max_n + 10).filter(|&n| r.shows(n)).count() as u64;
                    assert_eq!(r.count(), shown, "{r:?}");
                }
            }
        }
        for max_n in [1, 99_999, 100_000, 100_001, 200_001, 10_000_000, 10_000_001] {
            let step = Rows::smallest_step(max_n);
            assert!(
                Rows {
                    max_n,
                    step,
                    also: None
                }
                .within_limit(),
                "{max_n}"
            );
            assert!(
                step == 1
                    || !Rows {
                        max_n,
                        step: step - 1,
                        also: None
                    }
                    .within_limit(),
                "{max_n}"
            );
        }
        assert_eq!(Rows::smallest_step(10_000_000), 100);
        assert_eq!(Rows::smallest_step(100_000), 1);
        assert_eq!(Rows::smallest_step(100_001), 2);
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
