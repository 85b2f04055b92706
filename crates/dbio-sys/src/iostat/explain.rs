//! `--explain`: a short reading of one device's figures (queue depth against the disks under
//! it, read against write await, merges, request size against the database page, what %util
//! means), after the iostat -x article.

use dbio_schema::iostat::Figures;

/// What `--explain` needs to know about a device beyond its counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DevInfo {
    /// Physical disks under it (None: unknown, as in a replay).
    pub disks: Option<usize>,
    /// Whether they spin (None: unknown or mixed).
    pub rotational: Option<bool>,
}

/// The --explain reading of one device's figures (from the iostat -x article).
pub fn explain_figures(f: &Figures, info: &DevInfo, page_size: u64) -> Vec<String> {
    let mut out = Vec::new();
    if f.r_per_s + f.w_per_s + f.d_per_s + f.f_per_s == 0.0 && f.in_flight == 0 {
        out.push("idle: nothing completed in this interval".to_string());
        return out;
    }
    let disks_txt = match info.disks {
        Some(n) => format!("{n} disk{}", if n == 1 { "" } else { "s" }),
        None => "1 disk (assumed: the stack is unknown in a replay)".to_string(),
    };
    let n = info.disks.unwrap_or(1) as f64;
    if f.aqu_sz < n && f.util_pct < 50.0 {
        out.push(format!(
            "aqu-sz {:.2} with %util {:.0}: lightly loaded; the {disks_txt} under it could take more",
            f.aqu_sz, f.util_pct
        ));
    } else if f.aqu_sz < n {
        out.push(format!(
            "aqu-sz {:.2} is below the {disks_txt} under it while busy {:.0}% of the time: I/O \
             is serialised by the software above (too few concurrent requests to use every disk)",
            f.aqu_sz, f.util_pct
        ));
    } else {
        out.push(format!(
            "aqu-sz {:.2} is at or above the {disks_txt} under it: every disk has work and \
             requests queue, trading latency for throughput",
            f.aqu_sz
        ));
    }
    if f.r_per_s > 0.0 && f.w_per_s > 0.0 {
        let msg = if f.w_await_ms * 2.0 < f.r_await_ms {
            "writes are faster than reads: a write-back cache absorbs them; reads wait for the media"
        } else if f.w_await_ms > f.r_await_ms * 2.0 {
            "writes are slower than reads: no write cache, flushes, or a write-heavy queue"
        } else {
            "reads and writes wait about as long"
        };
        out.push(format!(
            "r_await {:.2} ms, w_await {:.2} ms: {msg}",
            f.r_await_ms, f.w_await_ms
        ));
    } else if f.r_per_s > 0.0 {
        out.push(format!("reads only: r_await {:.2} ms", f.r_await_ms));
    } else if f.w_per_s > 0.0 {
        out.push(format!("writes only: w_await {:.2} ms", f.w_await_ms));
    }
    for (what, pct) in [("reads", f.rrqm_pct), ("writes", f.wrqm_pct)] {
        if pct >= 20.0 {
            out.push(format!(
                "{pct:.0}% of {what} were merged by the block layer: adjacent requests \
                 (sequential I/O, small writes the application did not combine, LVM snapshots)"
            ));
        }
    }
    let page_kb = page_size as f64 / 1024.0;
    for (what, rate, sz) in [
        ("read", f.r_per_s, f.rareq_sz_kb),
        ("write", f.w_per_s, f.wareq_sz_kb),
    ] {
        if rate == 0.0 {
            continue;
        }
        let cmp = if (sz - page_kb).abs() < 0.05 * page_kb {
            "the size of a page".to_string()
        } else if sz < page_kb {
            "smaller than a page: a filesystem or device block smaller than the page, or log/metadata I/O".to_string()
        } else {
            format!(
                "{:.1} pages: merged or read-ahead requests, or a block larger than the page",
                sz / page_kb
            )
        };
        out.push(format!(
            "average {what} request {sz:.1} KiB vs {page_kb:.0} KiB database page: {cmp}"
        ));
    }
    if f.util_pct >= 90.0 {
        let parallel = info.rotational == Some(false) || info.disks.unwrap_or(1) > 1;
        if info.rotational == Some(true) && info.disks.unwrap_or(1) == 1 {
            out.push(format!(
                "%util {:.0}: a single spinning disk busy all the time is saturated",
                f.util_pct
            ));
        } else if parallel {
            out.push(format!(
                "%util {:.0} does not mean saturated here: an SSD, NVMe or RAID device serves \
                 many requests in parallel and reads 100% with headroom left; compare aqu-sz \
                 and await with a baseline",
                f.util_pct
            ));
        } else {
            out.push(format!(
                "%util {:.0}: saturated only if this is a single spinning disk; an SSD, NVMe or \
                 RAID device serves many requests in parallel and reads 100% with headroom \
                 left (compare aqu-sz and await with a baseline)",
                f.util_pct
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diskstats;

    fn ds(line: &str) -> dbio_schema::iostat::DiskStat {
        diskstats::parse_line(line).unwrap()
    }

    #[test]
    fn explain_reads_the_figures() {
        let a = ds("8 0 sda 0 0 0 0 0 0 0 0 0 0 0");
        let b = ds("8 0 sda 100 0 800 500 300 200 19200 300 1 1000 950");
        let f = diskstats::compute(&a, &b, 1.0).unwrap();
        let e = explain_figures(
            &f,
            &DevInfo {
                disks: Some(4),
                rotational: Some(false),
            },
            16384,
        );
        let all = e.join("\n");
        assert!(
            all.contains("below the 4 disks under it while busy 100%"),
            "{all}"
        );
        assert!(all.contains("writes are faster than reads"), "{all}");
        assert!(all.contains("40% of writes were merged"), "{all}");
        assert!(
            all.contains("average read request 4.0 KiB vs 16 KiB database page: smaller"),
            "{all}"
        );
        assert!(all.contains("%util 100 does not mean saturated"), "{all}");
        let e1 = explain_figures(
            &f,
            &DevInfo {
                disks: Some(1),
                rotational: Some(true),
            },
            16384,
        );
        assert!(e1
            .join("\n")
            .contains("single spinning disk busy all the time is saturated"));
        let idle = explain_figures(
            &diskstats::compute(&a, &a, 1.0).unwrap(),
            &DevInfo::default(),
            16384,
        );
        assert_eq!(idle, ["idle: nothing completed in this interval"]);
    }
}
