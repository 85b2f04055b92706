//! Device-side figures for a run: /proc/diskstats sampled at every report boundary (by a thread
//! of its own, never on the I/O path), turned into iostat -x figures per interval with the same
//! function as `dbio iostat`, and compared with what the application measured (Little's law and
//! request counts).

use dbio_schema::bench::CpuShares;
use dbio_schema::bench::{DeviceCheck, DeviceInterval};
use dbio_schema::iostat::DiskStat;
use dbio_sys::cpustat::{self, CpuTimes};
use dbio_sys::diskstats::{self, Delta};

/// Samples of the monitored devices: (ns since the run started, counters).
#[derive(Clone, Debug, Default)]
pub struct Samples {
    /// Device names, top (the one the files sit on) first.
    pub names: Vec<String>,
    /// The samples, in time order.
    pub at: Vec<(u64, Vec<DiskStat>)>,
    /// CPU times of the whole machine (/proc/stat) at the same instants.
    pub cpu: Vec<(u64, CpuTimes)>,
}

impl Samples {
    /// Monitors these devices.
    pub fn new(names: Vec<String>) -> Self {
        Samples {
            names,
            at: Vec::new(),
            cpu: Vec::new(),
        }
    }

    /// Takes one sample now (`t_ns` since the start); a failed read is skipped.
    pub fn sample(&mut self, t_ns: u64) {
        if let Ok(c) = cpustat::read() {
            self.cpu.push((t_ns, c));
        }
        if self.names.is_empty() {
            return;
        }
        if let Ok(all) = diskstats::read() {
            self.push(t_ns, all);
        }
    }

    /// The machine's CPU shares between the samples nearest to `from_ns` and `to_ns`.
    pub fn cpu_interval(&self, from_ns: u64, to_ns: u64) -> Option<CpuShares> {
        let near = |t: u64| self.cpu.iter().min_by_key(|(s, _)| s.abs_diff(t));
        let (a, b) = (near(from_ns)?, near(to_ns)?);
        if b.0 <= a.0 {
            return None;
        }
        cpustat::shares(&a.1, &b.1)
    }

    /// Adds a sample taken elsewhere (tests feed parsed fixtures).
    pub fn push(&mut self, t_ns: u64, all: Vec<DiskStat>) {
        let keep = all
            .into_iter()
            .filter(|d| self.names.contains(&d.name))
            .collect();
        self.at.push((t_ns, keep));
    }

    fn nearest(&self, t_ns: u64) -> Option<&(u64, Vec<DiskStat>)> {
        self.at.iter().min_by_key(|(t, _)| t.abs_diff(t_ns))
    }

    fn deltas(&self, from_ns: u64, to_ns: u64) -> Option<(f64, Vec<(String, Delta)>)> {
        let a = self.nearest(from_ns)?;
        let b = self.nearest(to_ns)?;
        if b.0 <= a.0 {
            return None;
        }
        let secs = (b.0 - a.0) as f64 / 1e9;
        let mut out = Vec::new();
        for name in &self.names {
            let p = a.1.iter().find(|d| &d.name == name);
            let c = b.1.iter().find(|d| &d.name == name);
            if let (Some(p), Some(c)) = (p, c) {
                if let Ok(d) = Delta::between(p, c) {
                    out.push((name.clone(), d));
                }
            }
        }
        Some((secs, out))
    }

    /// iostat -x figures of every device between the samples nearest to `from_ns` and `to_ns`.
    pub fn interval(&self, from_ns: u64, to_ns: u64) -> Vec<DeviceInterval> {
        let Some((secs, deltas)) = self.deltas(from_ns, to_ns) else {
            return Vec::new();
        };
        deltas
            .into_iter()
            .map(|(name, d)| {
                let f = diskstats::figures(&d, secs);
                DeviceInterval {
                    name,
                    r_per_s: f.r_per_s,
                    w_per_s: f.w_per_s,
                    f_per_s: f.f_per_s,
                    rkb_per_s: f.rkb_per_s,
                    wkb_per_s: f.wkb_per_s,
                    rrqm_pct: f.rrqm_pct,
                    wrqm_pct: f.wrqm_pct,
                    r_await_ms: f.r_await_ms,
                    w_await_ms: f.w_await_ms,
                    rareq_sz_kb: f.rareq_sz_kb,
                    wareq_sz_kb: f.wareq_sz_kb,
                    aqu_sz: f.aqu_sz,
                    util_pct: f.util_pct,
                }
            })
            .collect()
    }

    /// Compares the top device with the application over `[from_ns, to_ns]`: `app_ios` reads,
    /// writes and syncs completed with `app_in_flight` of them in flight on average.
    pub fn check(
        &self,
        from_ns: u64,
        to_ns: u64,
        app_ios: u64,
        app_in_flight: f64,
    ) -> Option<DeviceCheck> {
        let (secs, deltas) = self.deltas(from_ns, to_ns)?;
        let (name, d) = deltas.into_iter().next()?;
        Some(compare(&name, &d, secs, app_ios, app_in_flight))
    }
}

/// The comparison itself (pure): request counts and Little's law, with a reading in words.
/// Both sides count everything that waits: dbio's reads, writes and syncs, the device's reads,
/// writes and flushes (its aqu-sz includes the time flushes spend in flight).
pub fn compare(name: &str, d: &Delta, secs: f64, app_ios: u64, app_in_flight: f64) -> DeviceCheck {
    let requests = d.reads + d.writes + d.flushes;
    let merged = d.reads_merged + d.writes_merged;
    let aqu = if secs > 0.0 {
        d.weighted_ms as f64 / (1000.0 * secs)
    } else {
        0.0
    };
    let mut notes = Vec::new();
    let ratio = if app_ios > 0 {
        requests as f64 / app_ios as f64
    } else {
        0.0
    };
    let req_ok = (0.67..=1.5).contains(&ratio);
    if app_ios == 0 {
        notes.push(
            "dbio completed no reads, writes or syncs in the measured run: nothing to compare"
                .into(),
        );
    } else if requests == 0 {
        notes.push(format!("the device completed no requests for {app_ios} dbio I/Os: they were served above it (page cache) or the files are not on it"));
    } else if ratio < 0.67 {
        notes.push(format!("the device completed {ratio:.2} requests per dbio I/O: page-cache hits (buffered I/O), block-layer merges ({merged} merged) or a layer in between absorbed the rest"));
    } else if ratio > 1.5 {
        notes.push(format!("the device completed {ratio:.2} requests per dbio I/O: other processes use it, the filesystem adds journal or metadata writes, or requests were split ({} flushes)", d.flushes));
    } else {
        notes.push(format!(
            "the device completed {ratio:.2} requests per dbio I/O ({merged} merged)"
        ));
    }
    let q = if app_in_flight > 0.0 {
        aqu / app_in_flight
    } else {
        0.0
    };
    let q_ok = app_in_flight > 0.0 && (0.67..=1.5).contains(&q);
    if app_in_flight > 0.0 {
        if q < 0.67 {
            notes.push(format!("the device held {aqu:.2} requests in flight on average while dbio kept {app_in_flight:.2}: the rest of dbio's latency was spent above the device (filesystem, io_uring/io-wq, page cache, a hypervisor)"));
        } else if q > 1.5 {
            notes.push(format!("the device held {aqu:.2} requests in flight on average, more than the {app_in_flight:.2} dbio kept: other I/O on the device, or dbio's I/Os split into several requests"));
        } else {
            notes.push(format!("Little's law holds: the device had {aqu:.2} requests in flight on average as dbio had {app_in_flight:.2} I/Os, so dbio's latency was spent in the block layer and the device, not above them"));
        }
    }
    DeviceCheck {
        device: name.to_string(),
        app_ios,
        device_requests: requests,
        device_merged: merged,
        device_flushes: d.flushes,
        app_in_flight,
        device_aqu_sz: aqu,
        agree: req_ok && q_ok,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(name: &str, reads: u64, writes: u64, weighted_ms: u64) -> DiskStat {
        DiskStat {
            name: name.into(),
            fields: 17,
            reads,
            writes,
            sectors_read: reads * 32,
            sectors_written: writes * 32,
            read_ms: reads / 10,
            write_ms: writes / 10,
            io_ms: 900,
            weighted_ms,
            ..Default::default()
        }
    }

    /// Issue 31's commit run on vda: many more device requests than dbio I/Os (journal
    /// writes and flushes), while the in-flight figures agree.
    #[test]
    fn counts_that_differ_and_queues_that_agree_are_told_apart() {
        let d = Delta {
            reads: 0,
            writes: 38_032,
            flushes: 29_000,
            weighted_ms: 20_300,
            ..Default::default()
        };
        let c = compare("vda", &d, 10.0, 29_140, 1.99);
        assert!(
            !c.requests_agree() && c.in_flight_agree() == Some(true),
            "{c:?}"
        );
        assert!(!c.agree);
        assert!(c.notes[0].contains("2.30 requests per dbio I/O"), "{c:?}");
        assert!(
            c.notes[1].starts_with("Little's law holds: the device had 2.03 requests in flight")
                && c.notes[1].contains("as dbio had 1.99 I/Os"),
            "{c:?}"
        );
    }

    #[test]
    fn interval_figures_use_the_iostat_formulas_between_the_nearest_samples() {
        let mut s = Samples::new(vec!["vda".into()]);
        s.push(0, vec![stat("vda", 1000, 500, 100), stat("sdb", 9, 9, 9)]);
        s.push(
            1_000_000_000,
            vec![stat("vda", 3000, 1500, 600), stat("sdb", 99, 99, 99)],
        );
        s.push(2_000_000_000, vec![stat("vda", 3000, 1500, 600)]);
        let iv = s.interval(1_000, 999_000_000);
        assert_eq!(iv.len(), 1, "only the monitored device");
        let d = &iv[0];
        assert_eq!((d.r_per_s, d.w_per_s), (2000.0, 1000.0));
        assert_eq!(d.rareq_sz_kb, 16.0);
        assert_eq!(d.aqu_sz, 0.5, "500 weighted ms over 1 s");
        assert!((d.util_pct - 0.0).abs() < 1e-9, "io_ms did not move");
        let idle = s.interval(1_000_000_000, 2_000_000_000);
        assert_eq!(idle[0].r_per_s, 0.0);
    }

    #[test]
    fn check_reads_requests_and_littles_law() {
        let d = Delta {
            reads: 1000,
            writes: 0,
            weighted_ms: 1000,
            devices: 1,
            ..Default::default()
        };
        let c = compare("vda", &d, 1.0, 1000, 1.0);
        assert!(c.agree, "{c:?}");
        assert_eq!(c.device_aqu_sz, 1.0);
        let c = compare("vda", &d, 1.0, 5000, 1.0);
        assert!(!c.agree && c.notes[0].contains("page-cache hits"), "{c:?}");
        let c = compare("vda", &d, 1.0, 1000, 32.0);
        assert!(!c.agree && c.notes[1].contains("above the device"), "{c:?}");
        let none = Delta::default();
        let c = compare("vda", &none, 1.0, 10, 1.0);
        assert!(c.notes[0].contains("no requests"), "{c:?}");
    }

    /// Commit mode: 500 writes and 500 fdatasyncs by dbio, 500 writes and 500 flushes on the
    /// device (each flush in flight as long as a write): both sides count 1000 operations.
    #[test]
    fn check_counts_flushes_as_device_requests() {
        let d = Delta {
            writes: 500,
            flushes: 500,
            weighted_ms: 1000,
            devices: 1,
            ..Default::default()
        };
        let c = compare("vda", &d, 1.0, 1000, 1.0);
        assert_eq!((c.device_requests, c.device_flushes), (1000, 500), "{c:?}");
        assert!(c.agree, "{c:?}");
    }
}
