//! Saved diskstats samples (`dbio iostat --replay`: pt-stalk `*-diskstats`, pt-diskstats
//! `--save-samples`, `dbio iostat --record`), replayed as the command does: each pair of
//! consecutive samples, each device in both, and the sum over every device (`--group`).
#![no_main]
use dbio_sys::diskstats::{self, Delta};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let saved = diskstats::parse_saved(&text);
    for s in &saved.samples {
        let _ = diskstats::format_saved(s.ts, "");
        let _ = diskstats::utc_datetime(s.ts as i64);
    }
    for w in saved.samples.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let interval = b.ts - a.ts;
        if interval <= 0.0 {
            continue;
        }
        let names: Vec<&str> = b.stats.iter().map(|d| d.name.as_str()).collect();
        let mut group: Option<Delta> = None;
        for d in &b.stats {
            let _ = diskstats::looks_like_partition(&d.name, &names);
            let Some(p) = diskstats::find(&a.stats, &d.name) else {
                continue;
            };
            if let Ok(delta) = Delta::between(p, d) {
                let _ = delta.is_idle();
                let _ = diskstats::figures(&delta, interval);
                match &mut group {
                    None => group = Some(delta),
                    Some(g) => g.add(&delta),
                }
            }
        }
        if let Some(g) = group {
            let _ = diskstats::figures(&g, interval);
        }
    }
});
