//! CPU time from `/proc/stat`: the aggregate `cpu` line (jiffies per state, summed over all
//! CPUs) and the number of per-CPU lines.

use crate::Error;

/// One sample of `/proc/stat`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuTimes {
    /// The aggregate line's counters in kernel order: user nice system idle iowait irq
    /// softirq steal guest guest_nice (older kernels have fewer).
    pub jiffies: Vec<u64>,
    /// How many `cpuN` lines there are (online CPUs).
    pub cpus: u32,
}

/// Parses the text of `/proc/stat`.
pub fn parse(text: &str) -> Result<CpuTimes, Error> {
    let mut jiffies = None;
    let mut cpus = 0;
    for (i, line) in text.lines().enumerate() {
        let mut it = line.split_whitespace();
        match it.next() {
            Some("cpu") => {
                let v: Result<Vec<u64>, _> = it.map(str::parse::<u64>).collect();
                let v = v.map_err(|e| Error::Parse {
                    what: "/proc/stat".into(),
                    line: i + 1,
                    msg: format!("cpu counters: {e}"),
                })?;
                if v.len() < 4 {
                    return Err(Error::Parse {
                        what: "/proc/stat".into(),
                        line: i + 1,
                        msg: format!("{} cpu counters, expected at least 4", v.len()),
                    });
                }
                jiffies = Some(v);
            }
            Some(t) if t.starts_with("cpu") && t[3..].parse::<u32>().is_ok() => cpus += 1,
            _ => {}
        }
    }
    let jiffies = jiffies.ok_or_else(|| Error::Parse {
        what: "/proc/stat".into(),
        line: 1,
        msg: "no aggregate cpu line".into(),
    })?;
    Ok(CpuTimes {
        jiffies,
        cpus: cpus.max(1),
    })
}

/// Reads and parses `/proc/stat` of the running system.
pub fn read() -> Result<CpuTimes, Error> {
    let p = "/proc/stat";
    let text = std::fs::read_to_string(p).map_err(|e| Error::io(p, e))?;
    parse(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_aggregate_line_and_counts_cpus() {
        // Captured on a 2-CPU virtual machine (kernel 6.x).
        let text = "cpu  46369 0 15355 62857 1479 0 195 83 0 0\n\
                    cpu0 21634 0 6913 34366 266 0 40 47 0 0\n\
                    cpu1 24735 0 8442 28490 1213 0 155 35 0 0\n\
                    intr 1 2 3\nctxt 42\nbtime 1700000000\n";
        let t = parse(text).unwrap();
        assert_eq!(t.cpus, 2);
        assert_eq!(t.jiffies, [46369, 0, 15355, 62857, 1479, 0, 195, 83, 0, 0]);
        assert!(parse("cpu0 1 2 3 4\n").is_err());
        assert!(parse("cpu 1 x 3 4\n").is_err());
        assert!(parse("cpu 1 2\n").is_err());
    }

    #[test]
    fn reads_the_running_system() {
        let t = read().unwrap();
        assert!(t.cpus >= 1);
        assert!(t.jiffies.iter().sum::<u64>() > 0);
    }
}
