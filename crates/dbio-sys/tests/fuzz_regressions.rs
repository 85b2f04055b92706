//! Inputs that crashed the diskstats fuzz targets (`fuzz/`, `scripts/fuzz.sh`), kept as
//! regression tests: counters near 2^64 in a saved sample (`dbio iostat --replay FILE`)
//! overflowed the delta and figure arithmetic (a panic in debug builds, wrapped figures in
//! release).

use dbio_sys::diskstats::{self, Delta};

const MAX: u64 = u64::MAX;

#[test]
fn counters_near_u64_max_do_not_overflow() {
    let text = format!(
        "TS 1.0\n 8 0 sda 0 0 0 4294967295 0 0 0 0 0 0 0\n 8 16 sdb 0 0 0 0 0 0 0 0 0 0 0\n\
         TS 2.0\n 8 0 sda {MAX} 1 0 {MAX} 0 0 0 0 0 0 0\n 8 16 sdb {MAX} {MAX} 0 0 {MAX} {MAX} 0 0 {MAX} 0 0\n"
    );
    let saved = diskstats::parse_saved(&text);
    assert!(saved.problems.is_empty(), "{:?}", saved.problems);
    let (a, b) = (&saved.samples[0].stats, &saved.samples[1].stats);
    let mut group: Option<Delta> = None;
    for (p, c) in a.iter().zip(b) {
        let d = Delta::between(p, c).unwrap();
        let f = diskstats::figures(&d, 1.0);
        assert_eq!(f.r_per_s, MAX as f64);
        assert!(f.rrqm_pct.is_finite() && f.rd_rt_ms.is_finite());
        match &mut group {
            None => group = Some(d),
            Some(g) => g.add(&d),
        }
    }
    // The group sum saturates instead of wrapping to a small number.
    let g = group.unwrap();
    assert_eq!(g.reads, MAX);
    assert_eq!(g.devices, 2);
    // A millisecond counter above 2^32 that goes down is not a 32-bit wrap to overflow on.
    assert_eq!(diskstats::ms_delta(MAX, MAX - 1), 0);
    assert_eq!(diskstats::ms_delta(10, 5), (1 << 32) - 5);
}
