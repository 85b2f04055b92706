//! Timings of the model math for `scripts/bench-model.sh` (a measurement, not a test): a USL
//! fit over 100 points and exact MVA to N = 10,000 with 10 centres, each repeated. The median
//! is judged against the goals from the issue (fit < 10 ms, MVA < 100 ms); the worst is printed
//! too, and on a loaded machine includes time the process waited for a CPU.

use dbio_model::usl::{fit, Params, Point};
use dbio_model::{demands, mva::mva, queueing};
use std::time::Instant;

fn median_and_max(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[v.len() - 1])
}

fn main() {
    let reps: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    // 100 points on a known curve with a deterministic +-3% wobble.
    let truth = Params {
        sigma: 0.03,
        kappa: 2e-4,
        lambda: 1000.0,
    };
    let points: Vec<Point> = (1..=100)
        .map(|n| {
            let wobble = 1.0 + 0.03 * (((n * 7919) % 13) as f64 / 6.0 - 1.0);
            Point {
                n: n as f64,
                x: truth.x(n as f64) * wobble,
                r: None,
            }
        })
        .collect();
    let mut t_fit = Vec::new();
    let mut got = None;
    for _ in 0..reps {
        let t = Instant::now();
        got = Some(fit(&points).expect("fit"));
        t_fit.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let f = got.unwrap().params;
    let (med, max) = median_and_max(t_fit);
    println!(
        "usl fit, 100 points: median {med:.3} ms, max {max:.3} ms (goal < 10 ms) -> {}; sigma {:.4} kappa {:.2e} lambda {:.1}",
        if med < 10.0 { "met" } else { "NOT met" },
        f.sigma,
        f.kappa,
        f.lambda
    );
    let centres: Vec<_> = (0..10)
        .map(|k| queueing(&format!("c{k}"), 0.001 * (k + 1) as f64))
        .collect();
    let mut t_mva = Vec::new();
    let mut x = 0.0;
    for _ in 0..reps {
        let d = demands(centres.clone(), 0.5).expect("demands");
        let t = Instant::now();
        let r = mva(d, 10_000).expect("mva");
        t_mva.push(t.elapsed().as_secs_f64() * 1e3);
        x = r.rows.last().unwrap().x_per_s;
    }
    let (med, max) = median_and_max(t_mva);
    println!(
        "mva, N = 10000, 10 centres: median {med:.3} ms, max {max:.3} ms (goal < 100 ms) -> {}; X(10000) = {x:.3}/s (1/Dmax = 100)",
        if med < 100.0 { "met" } else { "NOT met" }
    );
}
