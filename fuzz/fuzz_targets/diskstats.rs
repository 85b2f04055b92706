//! `/proc/diskstats` text: the whole-file parser, each line, and the figures between two
//! samples of the same device (the arithmetic `dbio iostat` and `dbio bench` run on it).
#![no_main]
use dbio_sys::diskstats::{self, Delta};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = diskstats::parse(&text);
    let lines: Vec<_> = text
        .lines()
        .filter_map(|l| diskstats::parse_line(l).ok())
        .collect();
    let names: Vec<&str> = lines.iter().map(|d| d.name.as_str()).collect();
    for w in lines.windows(2) {
        let _ = diskstats::looks_like_partition(&w[1].name, &names);
        if let Ok(d) = Delta::between(&w[0], &w[1]) {
            let _ = d.is_idle();
            let _ = diskstats::figures(&d, 1.0);
            let _ = diskstats::figures(&d, 0.0);
        }
        let _ = diskstats::compute(&w[0], &w[1], 0.001);
    }
});
