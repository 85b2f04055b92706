//! The run's time source. Every I/O is timed twice, so the clock is on the hot path: through the
//! vDSO, `clock_gettime(CLOCK_MONOTONIC)` costs about 21 ns here, a bare `rdtsc` 9 ns.
//!
//! The time-stamp counter is used only where the kernel itself keeps time with it (the current
//! clocksource is `tsc`: the kernel has checked that it is constant, never stops and is
//! synchronised across CPUs) and user space may read it (`PR_GET_TSC`). Its rate is calibrated
//! against `CLOCK_MONOTONIC` over [`CALIBRATION`] before the run starts, to about one part per
//! million. Anywhere else the run reads `CLOCK_MONOTONIC`, as before.

use std::time::{Duration, Instant};

/// How long the counter is calibrated against CLOCK_MONOTONIC. Each end of the calibration is
/// read to within about 20 ns, so the rate is known to about 2 x 20 ns / 25 ms < 2 ppm.
pub const CALIBRATION: Duration = Duration::from_millis(25);

/// Nanoseconds since a start, from the counter or from CLOCK_MONOTONIC.
#[derive(Clone, Copy, Debug)]
pub struct Timer {
    kind: Kind,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    /// ns = (counter - start) * mult >> 32.
    #[cfg(target_arch = "x86_64")]
    Tsc {
        start: u64,
        mult: u64,
    },
    Monotonic {
        start: Instant,
    },
    /// Tests: reads a counter the test (or its scripted engine) advances. Not compiled into
    /// the binary, so the hot path's match is the same as without it.
    #[cfg(test)]
    Scripted(&'static std::sync::atomic::AtomicU64),
}

/// A calibration under way: the first (monotonic, counter) pair.
#[derive(Debug)]
pub struct Calibration {
    first: Option<(Instant, u64)>,
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn rdtsc() -> u64 {
    // SAFETY: rdtsc has no memory effects; `tsc_usable` checked that user space may execute it.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// True when the kernel keeps time with the counter and lets this process read it.
#[cfg(target_arch = "x86_64")]
fn tsc_usable() -> bool {
    let source =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default();
    if source.trim() != "tsc" {
        return false;
    }
    dbio_sys::os::tsc_enabled()
}

/// A (monotonic, counter) pair read as close together as this machine allows: the counter
/// read between two monotonic reads, the tightest of a few tries, stamped at their midpoint.
#[cfg(target_arch = "x86_64")]
fn pair() -> (Instant, u64) {
    let mut best: Option<(Duration, Instant, u64)> = None;
    for _ in 0..16 {
        let a = Instant::now();
        let t = rdtsc();
        let b = Instant::now();
        let gap = b - a;
        if best.is_none_or(|(g, _, _)| gap < g) {
            best = Some((gap, a + gap / 2, t));
        }
    }
    let (_, at, t) = best.expect("at least one try");
    (at, t)
}

impl Calibration {
    /// Starts calibrating the counter where it is usable (else there is nothing to do, and
    /// [`Calibration::finish`] gives CLOCK_MONOTONIC).
    pub fn begin() -> Self {
        #[cfg(target_arch = "x86_64")]
        if tsc_usable() {
            return Calibration {
                first: Some(pair()),
            };
        }
        Calibration { first: None }
    }

    /// Finishes the calibration (waiting until [`CALIBRATION`] has passed since `begin`) and
    /// returns a timer that reads 0 now. Falls back to CLOCK_MONOTONIC when the counter's rate
    /// comes out implausible (below 100 MHz or above 20 GHz).
    pub fn finish(self) -> Timer {
        #[cfg(target_arch = "x86_64")]
        if let Some((i0, t0)) = self.first {
            let waited = i0.elapsed();
            if waited < CALIBRATION {
                std::thread::sleep(CALIBRATION - waited);
            }
            let (i1, t1) = pair();
            let ns = (i1 - i0).as_nanos();
            let ticks = t1.wrapping_sub(t0) as u128;
            if let Some(mult) = (ns << 32).checked_div(ticks) {
                // ns per tick between 0.05 (20 GHz) and 10 (100 MHz).
                if mult > (1u128 << 32) / 20 && mult < (10u128 << 32) {
                    return Timer {
                        kind: Kind::Tsc {
                            start: rdtsc(),
                            mult: mult as u64,
                        },
                    };
                }
            }
        }
        Timer::monotonic()
    }
}

impl Timer {
    /// A CLOCK_MONOTONIC timer that reads 0 now.
    pub fn monotonic() -> Self {
        Timer {
            kind: Kind::Monotonic {
                start: Instant::now(),
            },
        }
    }

    /// Nanoseconds since the timer was made.
    #[inline(always)]
    pub fn now_ns(&self) -> u64 {
        match self.kind {
            #[cfg(target_arch = "x86_64")]
            Kind::Tsc { start, mult } => {
                // A read on a CPU whose counter lags by a few ticks cannot go below 0.
                let ticks = rdtsc().saturating_sub(start);
                ((ticks as u128 * mult as u128) >> 32) as u64
            }
            Kind::Monotonic { start } => start.elapsed().as_nanos() as u64,
            #[cfg(test)]
            Kind::Scripted(now) => now.load(std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// Tests: a timer that reads `now`, which moves only when the test moves it.
    #[cfg(test)]
    pub(crate) fn scripted(now: &'static std::sync::atomic::AtomicU64) -> Self {
        Timer {
            kind: Kind::Scripted(now),
        }
    }

    /// What the timer reads, for the result's environment: `tsc (2100.00 MHz, calibrated
    /// against CLOCK_MONOTONIC)` or `CLOCK_MONOTONIC`.
    pub fn describe(&self) -> String {
        match self.kind {
            #[cfg(target_arch = "x86_64")]
            Kind::Tsc { mult, .. } => format!(
                "tsc ({:.2} MHz, calibrated against CLOCK_MONOTONIC)",
                (1u64 << 32) as f64 / mult as f64 * 1000.0
            ),
            Kind::Monotonic { .. } => "CLOCK_MONOTONIC".to_string(),
            #[cfg(test)]
            Kind::Scripted(_) => "scripted (tests)".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calibrated timer keeps pace with CLOCK_MONOTONIC: over 200 ms it differs by less
    /// than 50 us (250 ppm; the calibration is good to a few ppm). Each timer read is
    /// bracketed by two monotonic reads, so a preemption between reads widens the accepted
    /// range instead of failing the test.
    #[test]
    fn auto_timer_agrees_with_monotonic() {
        let timer = Calibration::begin().finish();
        let read = || {
            let a = Instant::now();
            let n = timer.now_ns();
            (a, n, Instant::now())
        };
        let (a0, n0, b0) = read();
        std::thread::sleep(Duration::from_millis(200));
        let (a1, n1, b1) = read();
        let ours = (n1 - n0) as i128;
        let lo = (a1 - b0).as_nanos() as i128 - 50_000;
        let hi = (b1 - a0).as_nanos() as i128 + 50_000;
        assert!(
            (lo..=hi).contains(&ours),
            "{}: {ours} ns, CLOCK_MONOTONIC says {lo}..={hi} ns (50 us of slack included)",
            timer.describe()
        );
    }

    #[test]
    fn the_monotonic_fallback_reads_forward() {
        let timer = Timer::monotonic();
        assert_eq!(timer.describe(), "CLOCK_MONOTONIC");
        let a = timer.now_ns();
        let b = timer.now_ns();
        assert!(b >= a);
    }

    /// On this project's machines the kernel keeps time with the TSC; where it does, the run
    /// must use it (the point of this module), and its rate must be plausible.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn tsc_is_used_where_the_kernel_trusts_it() {
        let timer = Calibration::begin().finish();
        if tsc_usable() {
            assert!(
                timer.describe().starts_with("tsc ("),
                "{}",
                timer.describe()
            );
        } else {
            assert_eq!(timer.describe(), "CLOCK_MONOTONIC");
        }
    }
}
