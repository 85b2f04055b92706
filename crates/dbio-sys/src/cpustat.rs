//! CPU time from `/proc/stat`: the aggregate `cpu` line (jiffies in user, nice, system, idle,
//! iowait, irq, softirq, steal), and the shares of two samples as `mpstat`/`iostat -c` print
//! them (%usr includes nice as iostat's %user does not: see [`CpuShares`]).

use crate::Error;
use dbio_schema::bench::CpuShares;

/// The cumulative CPU times of all CPUs, in clock ticks (USER_HZ).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// Normal processes in user mode.
    pub user: u64,
    /// Niced processes in user mode.
    pub nice: u64,
    /// Kernel mode.
    pub system: u64,
    /// Idle.
    pub idle: u64,
    /// Idle while some I/O was outstanding.
    pub iowait: u64,
    /// Hard interrupts.
    pub irq: u64,
    /// Soft interrupts.
    pub softirq: u64,
    /// Taken by the hypervisor for other guests.
    pub steal: u64,
}

impl CpuTimes {
    fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }
}

/// The aggregate `cpu` line of a `/proc/stat` text. Kernels before 2.6.11 have no steal
/// column (0 then); before 2.5.41 no iowait either.
pub fn parse(text: &str) -> Result<CpuTimes, Error> {
    let (n, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.split_whitespace().next() == Some("cpu"))
        .ok_or_else(|| Error::Parse {
            what: "/proc/stat".into(),
            line: 1,
            msg: "no aggregate `cpu` line".into(),
        })?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|t| t.parse::<u64>())
        .collect::<Result<_, _>>()
        .map_err(|e| Error::Parse {
            what: "/proc/stat".into(),
            line: n + 1,
            msg: format!("`cpu` line {line:?}: {e}"),
        })?;
    if v.len() < 4 {
        return Err(Error::Parse {
            what: "/proc/stat".into(),
            line: n + 1,
            msg: format!(
                "`cpu` line {line:?} has {} fields, at least 4 expected",
                v.len()
            ),
        });
    }
    let g = |i: usize| v.get(i).copied().unwrap_or(0);
    Ok(CpuTimes {
        user: g(0),
        nice: g(1),
        system: g(2),
        idle: g(3),
        iowait: g(4),
        irq: g(5),
        softirq: g(6),
        steal: g(7),
    })
}

/// Reads the live `/proc/stat`.
pub fn read() -> Result<CpuTimes, Error> {
    let text = std::fs::read_to_string("/proc/stat").map_err(|e| Error::io("/proc/stat", e))?;
    parse(&text)
}

/// The shares between samples `a` and `b` (`None` when no time passed or a counter went
/// backwards).
pub fn shares(a: &CpuTimes, b: &CpuTimes) -> Option<CpuShares> {
    let total = b.total().checked_sub(a.total()).filter(|t| *t > 0)? as f64;
    let d = |x: u64, y: u64| y.saturating_sub(x) as f64 * 100.0 / total;
    Some(CpuShares {
        usr_pct: d(a.user + a.nice, b.user + b.nice),
        sys_pct: d(a.system + a.irq + a.softirq, b.system + b.irq + b.softirq),
        iowait_pct: d(a.iowait, b.iowait),
        steal_pct: d(a.steal, b.steal),
        idle_pct: d(a.idle, b.idle),
    })
}

/// The number of per-CPU lines (`cpu0`, `cpu1`, ...) of a `/proc/stat` text: the online CPUs
/// the aggregate line sums over (at least 1).
pub fn count_cpus(text: &str) -> u32 {
    let n = text
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|t| t.len() > 3 && t.starts_with("cpu") && t[3..].parse::<u32>().is_ok())
        .count();
    (n as u32).max(1)
}

/// Reads the live `/proc/stat`: the CPU times and the number of CPUs they sum over.
pub fn read_with_cpus() -> Result<(CpuTimes, u32), Error> {
    let text = std::fs::read_to_string("/proc/stat").map_err(|e| Error::io("/proc/stat", e))?;
    Ok((parse(&text)?, count_cpus(&text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_shares() {
        let a = parse("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4\nintr 5\n").unwrap();
        let b = parse("cpu  160 20 70 1590 150 5 5 0 0 0\n").unwrap();
        let s = shares(&a, &b).unwrap();
        // 1000 ticks: user+nice 80, sys+irq+softirq 30, iowait 100, idle 790.
        assert_eq!(s.usr_pct, 8.0);
        assert_eq!(s.sys_pct, 3.0);
        assert_eq!(s.iowait_pct, 10.0);
        assert_eq!(s.idle_pct, 79.0);
        assert!(shares(&b, &a).is_none());
        let old = parse("cpu 1 2 3 4\n").unwrap();
        assert_eq!((old.iowait, old.steal), (0, 0));
        assert!(parse("intr 5\n").is_err());
        // Captured on a 2-CPU virtual machine: the per-CPU lines are counted.
        let two = "cpu  46369 0 15355 62857 1479 0 195 83 0 0\n\
                   cpu0 21634 0 6913 34366 266 0 40 47 0 0\n\
                   cpu1 24735 0 8442 28490 1213 0 155 35 0 0\nintr 1\n";
        assert_eq!(count_cpus(two), 2);
        assert_eq!(count_cpus("cpu 1 2 3 4\n"), 1);
        assert!(parse("cpu 1 x 3 4\n").is_err());
        assert!(read().unwrap().idle > 0);
    }
}
