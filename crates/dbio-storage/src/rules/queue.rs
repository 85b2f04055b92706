//! Block-queue rules: the I/O scheduler, queue depth, read-ahead and the kernel's write-cache
//! mode of each disk under an audited path.

use dbio_schema::check::{Finding, Status};
use serde::Serialize;

/// The queue settings of one whole disk, as sysfs shows them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct QueueFacts {
    /// Kernel name (`sda`, `nvme0n1`, `vda`).
    pub disk: String,
    /// Contents of queue/scheduler (`none [mq-deadline] kyber bfq`).
    pub scheduler: Option<String>,
    /// queue/nr_requests.
    pub nr_requests: Option<u64>,
    /// queue/read_ahead_kb.
    pub read_ahead_kb: Option<u64>,
    /// queue/write_cache (`write back` / `write through`).
    pub write_cache: Option<String>,
    /// queue/rotational.
    pub rotational: Option<bool>,
}

/// The active scheduler: the bracketed word.
pub fn active_scheduler(s: &str) -> Option<&str> {
    let start = s.find('[')?;
    let end = s[start..].find(']')? + start;
    Some(&s[start + 1..end])
}

const WHY_SCHED: &str = "CFQ/BFQ idle and merge for fairness; with a database's concurrent synchronous writes that collapses throughput (in the articles' test on an 8-disk RAID with write-back cache: deadline 15250 tps, cfq 1240 tps at 8 threads). none or mq-deadline hand requests straight to SSDs, NVMe, RAID controllers and virtual disks.";

/// I/O scheduler rule.
pub fn scheduler(q: &QueueFacts) -> Finding {
    let dev = q.disk.as_str();
    let Some(raw) = q.scheduler.as_deref() else {
        return Finding::new(
            "io.scheduler",
            dev,
            Status::Unknown,
            "queue/scheduler not readable",
            WHY_SCHED,
        );
    };
    let active = active_scheduler(raw).unwrap_or(raw.trim());
    let ev = format!("/sys/block/{dev}/queue/scheduler: {}", raw.trim());
    let better = if raw.contains("mq-deadline") && q.rotational != Some(false) {
        "mq-deadline"
    } else if raw
        .split_whitespace()
        .any(|w| w.trim_matches(['[', ']']) == "none")
    {
        "none"
    } else {
        "mq-deadline"
    };
    match active {
        "cfq" | "bfq" | "anticipatory" => Finding::new(
            "io.scheduler",
            dev,
            Status::Warn,
            format!("scheduler {active}: use {better} for database storage"),
            WHY_SCHED,
        )
        .evidence([ev])
        .fix(format!(
            "echo {better} > /sys/block/{dev}/queue/scheduler; persist with a udev rule: ACTION==\"add|change\", KERNEL==\"{dev}\", ATTR{{queue/scheduler}}=\"{better}\""
        )),
        "" => Finding::new("io.scheduler", dev, Status::Unknown, "no scheduler shown", WHY_SCHED).evidence([ev]),
        other => Finding::new("io.scheduler", dev, Status::Ok, format!("scheduler {other}"), WHY_SCHED).evidence([ev]),
    }
}

/// nr_requests rule: a queue shallower than 32 requests starves concurrent I/O.
pub fn nr_requests(q: &QueueFacts) -> Finding {
    let why = "nr_requests caps the requests the block layer queues per disk; a database with many concurrent reads and flushes needs a queue at least as deep as the device's (32 for SATA NCQ, more for RAID and NVMe).";
    let dev = q.disk.as_str();
    match q.nr_requests {
        None => Finding::new(
            "io.nr_requests",
            dev,
            Status::Unknown,
            "queue/nr_requests not readable",
            why,
        ),
        Some(n) if n < 32 => Finding::new(
            "io.nr_requests",
            dev,
            Status::Warn,
            format!("nr_requests {n} is below 32"),
            why,
        )
        .evidence([format!("/sys/block/{dev}/queue/nr_requests: {n}")])
        .fix(format!("echo 128 > /sys/block/{dev}/queue/nr_requests")),
        Some(n) => Finding::new(
            "io.nr_requests",
            dev,
            Status::Ok,
            format!("nr_requests {n}"),
            why,
        )
        .evidence([format!("/sys/block/{dev}/queue/nr_requests: {n}")]),
    }
}

/// read_ahead_kb rule: more than 512 KiB of read-ahead wastes I/O on random page reads.
pub fn read_ahead(q: &QueueFacts) -> Finding {
    let why = "InnoDB reads 16 KiB pages at random and does its own read-ahead; kernel read-ahead beyond a few hundred KiB reads data nobody asked for and evicts useful cache (large values help only sequential scans and backups).";
    let dev = q.disk.as_str();
    match q.read_ahead_kb {
        None => Finding::new("io.read_ahead", dev, Status::Unknown, "queue/read_ahead_kb not readable", why),
        Some(kb) if kb > 512 => Finding::new("io.read_ahead", dev, Status::Warn, format!("read_ahead_kb {kb} (above 512)"), why)
            .evidence([format!("/sys/block/{dev}/queue/read_ahead_kb: {kb}")])
            .fix(format!("echo 128 > /sys/block/{dev}/queue/read_ahead_kb   (or blockdev --setra 256 /dev/{dev})")),
        Some(kb) => Finding::new("io.read_ahead", dev, Status::Ok, format!("read_ahead_kb {kb}"), why)
            .evidence([format!("/sys/block/{dev}/queue/read_ahead_kb: {kb}")]),
    }
}

/// Kernel write-cache mode rule (informational unless a mount disables flushes).
pub fn write_cache(q: &QueueFacts) -> Finding {
    let dev = q.disk.as_str();
    let why = "With \"write back\" the kernel treats the device cache as volatile and sends cache flushes on fsync/O_DSYNC, so committed transactions survive a power cut. \"write through\" means no flushes are sent: right only when the cache is non-volatile (battery/flash-backed RAID, SSD with power-loss protection).";
    match q.write_cache.as_deref().map(str::trim) {
        None => Finding::new(
            "io.write_cache",
            dev,
            Status::Unknown,
            "queue/write_cache not readable",
            why,
        ),
        Some(m) => {
            let summary = match m {
                "write back" => "volatile write cache: the kernel sends flushes".to_string(),
                "write through" => {
                    "write through: the kernel sends no cache flushes (cache must be non-volatile)"
                        .to_string()
                }
                other => format!("write cache mode {other}"),
            };
            Finding::new("io.write_cache", dev, Status::Ok, summary, why)
                .evidence([format!("/sys/block/{dev}/queue/write_cache: {m}")])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> QueueFacts {
        QueueFacts {
            disk: "sda".into(),
            scheduler: Some(s.into()),
            nr_requests: Some(64),
            read_ahead_kb: Some(128),
            write_cache: Some("write back".into()),
            rotational: Some(true),
        }
    }

    #[test]
    fn scheduler_verdicts() {
        assert_eq!(scheduler(&q("noop deadline [cfq]")).status, Status::Warn);
        assert!(scheduler(&q("mq-deadline kyber [bfq] none"))
            .fix
            .unwrap()
            .starts_with("echo mq-deadline"));
        assert_eq!(
            scheduler(&q("[mq-deadline] kyber bfq none")).status,
            Status::Ok
        );
        assert_eq!(scheduler(&q("[none] mq-deadline")).status, Status::Ok);
        assert_eq!(
            active_scheduler("none [mq-deadline] kyber bfq"),
            Some("mq-deadline")
        );
        let mut nv = q("[bfq] none");
        nv.rotational = Some(false);
        assert!(scheduler(&nv).fix.unwrap().starts_with("echo none"));
    }

    #[test]
    fn queue_limits() {
        let mut x = q("[none]");
        x.nr_requests = Some(16);
        x.read_ahead_kb = Some(8192);
        assert_eq!(nr_requests(&x).status, Status::Warn);
        assert_eq!(read_ahead(&x).status, Status::Warn);
        x.read_ahead_kb = Some(512);
        assert_eq!(read_ahead(&x).status, Status::Ok);
    }
}
