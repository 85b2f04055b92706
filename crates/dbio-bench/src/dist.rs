//! Offset distributions over the blocks of the data set: uniform, zipf (rejection-inversion,
//! O(1) per draw, any exponent > 0) and hotspot (P% of I/Os to Q% of the blocks).
//!
//! Zipf and hotspot draw a *rank* (rank 0 is the hottest block); ranks are scattered over the
//! data set by a fixed permutation (multiplication by a constant coprime to the block count),
//! so hot blocks are spread over every file, as hot rows are in a real tablespace.

use crate::rng::Rng;
use dbio_schema::bench::Distribution;

/// Draws block numbers in `0..blocks`.
#[derive(Clone, Debug)]
pub struct BlockPicker {
    blocks: u64,
    kind: Kind,
    stride: u64,
}

#[derive(Clone, Debug)]
enum Kind {
    Uniform,
    Zipf(Zipf),
    Hotspot { p_hot: f64, hot: u64 },
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl BlockPicker {
    /// A picker over `blocks` blocks (> 0).
    pub fn new(dist: Distribution, blocks: u64) -> Self {
        assert!(blocks > 0);
        // A stride near the golden ratio of the block count, made coprime to it: a permutation.
        let mut stride = ((blocks as f64) * 0.618_033_988_75) as u64 | 1;
        while stride > 1 && gcd(stride, blocks) != 1 {
            stride += 2;
        }
        if blocks == 1 || stride >= blocks {
            stride = 1;
        }
        let kind = match dist {
            Distribution::Uniform => Kind::Uniform,
            Distribution::Zipf { theta } => Kind::Zipf(Zipf::new(blocks, theta)),
            Distribution::Hotspot { io_pct, data_pct } => Kind::Hotspot {
                p_hot: io_pct / 100.0,
                hot: ((blocks as f64 * data_pct / 100.0).round() as u64).clamp(1, blocks),
            },
        };
        BlockPicker {
            blocks,
            kind,
            stride,
        }
    }

    /// The block a rank is stored at.
    #[inline]
    pub fn scatter(&self, rank: u64) -> u64 {
        ((rank as u128 * self.stride as u128) % self.blocks as u128) as u64
    }

    /// Draws one block number.
    #[inline]
    pub fn pick(&self, rng: &mut Rng) -> u64 {
        match &self.kind {
            Kind::Uniform => rng.below(self.blocks),
            Kind::Zipf(z) => self.scatter(z.sample(rng) - 1),
            Kind::Hotspot { p_hot, hot } => {
                let rank = if rng.unit() < *p_hot || *hot == self.blocks {
                    rng.below(*hot)
                } else {
                    hot + rng.below(self.blocks - hot)
                };
                self.scatter(rank)
            }
        }
    }
}

/// Zipf over `1..=n` with exponent `s`, by rejection-inversion (Hörmann and Derflinger 1996).
#[derive(Clone, Debug)]
struct Zipf {
    n: f64,
    s: f64,
    h_x1: f64,
    h_n: f64,
    cut: f64,
}

/// log1p(x)/x, continuous at 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// expm1(x)/x, continuous at 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

impl Zipf {
    fn new(n: u64, s: f64) -> Self {
        let mut z = Zipf {
            n: n as f64,
            s,
            h_x1: 0.0,
            h_n: 0.0,
            cut: 0.0,
        };
        z.h_x1 = z.h_integral(1.5) - 1.0;
        z.h_n = z.h_integral(z.n + 0.5);
        z.cut = 2.0 - z.h_integral_inv(z.h_integral(2.5) - z.h(2.0));
        z
    }
    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }
    fn h_integral(&self, x: f64) -> f64 {
        let lx = x.ln();
        helper2((1.0 - self.s) * lx) * lx
    }
    fn h_integral_inv(&self, x: f64) -> f64 {
        let mut t = x * (1.0 - self.s);
        if t < -1.0 {
            t = -1.0;
        }
        (helper1(t) * x).exp()
    }
    #[inline]
    fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_n + rng.unit() * (self.h_x1 - self.h_n);
            let x = self.h_integral_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.cut || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scatter_is_a_permutation() {
        for blocks in [1u64, 2, 10, 64, 1000, 65536, 99991] {
            let p = BlockPicker::new(Distribution::Zipf { theta: 1.0 }, blocks);
            let mut seen = vec![false; blocks as usize];
            for r in 0..blocks {
                let b = p.scatter(r);
                assert!(!seen[b as usize], "blocks={blocks} rank {r} collides");
                seen[b as usize] = true;
            }
        }
    }

    #[test]
    fn zipf_matches_its_probabilities() {
        // theta 1.2 over 100 blocks: P(rank 1) = 1 / H(100, 1.2).
        let n = 100u64;
        let theta = 1.2;
        let h: f64 = (1..=n).map(|k| 1.0 / (k as f64).powf(theta)).sum();
        let z = Zipf::new(n, theta);
        let mut rng = Rng::new(5, 0);
        let draws = 400_000;
        let mut counts = vec![0u64; n as usize + 1];
        for _ in 0..draws {
            counts[z.sample(&mut rng) as usize] += 1;
        }
        for k in [1usize, 2, 10, 50] {
            let expect = draws as f64 / (k as f64).powf(theta) / h;
            let got = counts[k] as f64;
            assert!(
                (got - expect).abs() < 5.0 * expect.sqrt() + 0.01 * expect,
                "rank {k}: got {got}, expected {expect}"
            );
        }
        assert_eq!(counts[0], 0);
    }

    #[test]
    fn zipf_theta_one_and_small_theta_work() {
        for theta in [1.0, 0.5, 0.01, 3.0] {
            let z = Zipf::new(1000, theta);
            let mut rng = Rng::new(9, 0);
            for _ in 0..10_000 {
                let k = z.sample(&mut rng);
                assert!((1..=1000).contains(&k));
            }
        }
    }

    #[test]
    fn hotspot_sends_p_percent_to_q_percent() {
        let blocks = 10_000;
        let p = BlockPicker::new(
            Distribution::Hotspot {
                io_pct: 90.0,
                data_pct: 10.0,
            },
            blocks,
        );
        let hot: std::collections::HashSet<u64> = (0..1000).map(|r| p.scatter(r)).collect();
        let mut rng = Rng::new(2, 0);
        let n = 200_000;
        let in_hot = (0..n).filter(|_| hot.contains(&p.pick(&mut rng))).count();
        let share = in_hot as f64 / n as f64;
        assert!((share - 0.9).abs() < 0.005, "share to hot blocks {share}");
    }
}
