//! The audit rules of `dbio check`, as pure functions over plain input structs: each returns
//! [`Finding`]s with a rule id, a status, the evidence, why it matters for a database and
//! the command that fixes it. [`crate::check`] gathers the inputs (sysfs, mountinfo, superblocks,
//! `lvs`, RAID tools) and never lets one failed rule abort the audit.

use crate::align::{check_geometry, GeometryMatch};
use crate::raid::{BatteryState, Controller, RaidReport, Tool, VirtualDrive, WritePolicy};
use serde::Serialize;

/// Outcome of one rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    /// Fine.
    Ok,
    /// Tuning advice (controller read-ahead, a verify running, a learn cycle due): shown,
    /// but no alarm; Nagios exits 0 for it unless `--advice-warns`.
    Advice,
    /// Could not be decided.
    Unknown,
    /// Costs performance or safety; fix when convenient.
    Warn,
    /// Data at risk or a large performance loss now.
    Crit,
}

impl Status {
    /// Severity for sorting: CRIT > WARN > UNKNOWN > ADVICE > OK.
    pub fn severity(self) -> u8 {
        match self {
            Status::Ok => 0,
            Status::Advice => 1,
            Status::Unknown => 2,
            Status::Warn => 3,
            Status::Crit => 4,
        }
    }
    /// Nagios plugin exit code: 0 OK (and ADVICE), 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
    pub fn nagios_code(self) -> u8 {
        match self {
            Status::Ok | Status::Advice => 0,
            Status::Warn => 1,
            Status::Crit => 2,
            Status::Unknown => 3,
        }
    }
    /// `OK`, `ADVICE`, `WARN`, `CRIT`, `UNKNOWN`.
    pub fn label(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::Advice => "ADVICE",
            Status::Unknown => "UNKNOWN",
            Status::Warn => "WARN",
            Status::Crit => "CRIT",
        }
    }
}

/// One rule's verdict on one device.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Rule id, e.g. `io.scheduler`, `raid.write_policy`.
    pub rule: String,
    /// What it is about: a disk, a mount point, `raid c0 vd 1`.
    pub device: String,
    /// Verdict.
    pub status: Status,
    /// One line.
    pub summary: String,
    /// The values and tool lines the verdict rests on.
    pub evidence: Vec<String>,
    /// Why it matters for a database.
    pub why: String,
    /// The command that fixes it (absent when nothing needs fixing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// What the finding is about, one fact per field (the Prometheus labels).
    #[serde(skip_serializing_if = "Labels::is_empty")]
    pub labels: Labels,
    /// The audited paths whose storage this finding is about (each listed once, however many
    /// of them share the device); empty for RAID controllers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
}

/// What a finding is about, one fact per field; each is set when known. Prometheus output
/// uses them as labels, so `device` holds a kernel device name only.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Labels {
    /// Kernel name of the block device (`sda`, `nvme0n1p1`, `dm-0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Mount point of the filesystem.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mountpoint: Option<String>,
    /// A path that could not be resolved to a mount.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// RAID tool (`MegaCli`, `storcli`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// RAID controller as the tool names it (`c0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller: Option<String>,
    /// Virtual drive (logical drive, unit) on the controller (`vd 0`, `u0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub volume: Option<String>,
    /// File holding saved RAID tool output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Labels {
    /// No field set.
    pub fn is_empty(&self) -> bool {
        *self == Labels::default()
    }

    /// `(name, value)` of every field set, in a fixed order.
    pub fn pairs(&self) -> Vec<(&'static str, &str)> {
        [
            ("device", &self.device),
            ("mountpoint", &self.mountpoint),
            ("path", &self.path),
            ("tool", &self.tool),
            ("controller", &self.controller),
            ("volume", &self.volume),
            ("source", &self.source),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_deref().map(|v| (k, v)))
        .collect()
    }

    /// A kernel device name from a name or a `/dev/` path (`/dev/sda` -> `sda`); `None` for
    /// anything else (empty, spaces, a path outside /dev).
    pub fn device_name(s: &str) -> Option<String> {
        let n = s.strip_prefix("/dev/").unwrap_or(s);
        let ok = n.bytes().any(|b| b.is_ascii_alphanumeric())
            && n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.:!".contains(&b));
        ok.then(|| n.to_string())
    }
}

impl Finding {
    /// A finding with no fix.
    pub fn new(
        rule: &str,
        device: &str,
        status: Status,
        summary: impl Into<String>,
        why: impl Into<String>,
    ) -> Self {
        Finding {
            rule: rule.to_string(),
            device: device.to_string(),
            status,
            summary: summary.into(),
            evidence: Vec::new(),
            why: why.into(),
            fix: None,
            labels: Labels::default(),
            paths: Vec::new(),
        }
    }
    /// Sets the labels.
    pub fn labels(mut self, labels: Labels) -> Self {
        self.labels = labels;
        self
    }
    /// Adds evidence lines.
    pub fn evidence<I: IntoIterator<Item = S>, S: Into<String>>(mut self, lines: I) -> Self {
        self.evidence.extend(lines.into_iter().map(Into::into));
        self
    }
    /// Sets the fix (only kept when the status is not OK).
    pub fn fix(mut self, cmd: impl Into<String>) -> Self {
        if self.status != Status::Ok {
            self.fix = Some(cmd.into());
        }
        self
    }
}

// ---------------------------------------------------------------- block-queue rules

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

// ---------------------------------------------------------------- alignment and geometry

/// What the kernel says about one partition (or whole-disk filesystem) and its disk.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PartitionFacts {
    /// Partition (or device) name, `sda3`.
    pub name: String,
    /// Start in 512-byte sectors from sysfs `start` (None: the filesystem is on the whole device).
    pub start_sector: Option<u64>,
    /// sysfs alignment_offset in bytes.
    pub alignment_offset: Option<u64>,
    /// queue/physical_block_size.
    pub physical_block_size: Option<u64>,
    /// queue/minimum_io_size (RAID chunk, when exported).
    pub minimum_io_size: Option<u64>,
    /// queue/optimal_io_size (RAID full stripe, when exported).
    pub optimal_io_size: Option<u64>,
}

/// Partition alignment rule. `stripe` is the RAID stripe unit the user gave, if any.
pub fn partition_alignment(p: &PartitionFacts, stripe: Option<u64>) -> Finding {
    let why = "A partition that does not start on a stripe-unit boundary makes one database page straddle two stripe units: every such read touches two disks and every write becomes read-modify-write (on a 4-disk RAID10 with 64 KiB stripes, aligning gave +15% random reads and +23% random writes).";
    let dev = p.name.as_str();
    let Some(start) = p.start_sector else {
        return Finding::new(
            "part.alignment",
            dev,
            Status::Ok,
            "no partition: the filesystem starts at sector 0 of the device",
            why,
        );
    };
    let bytes = start * 512;
    let mut grains: Vec<(u64, String)> = vec![(4096, "4 KiB".into())];
    if let Some(pb) = p.physical_block_size.filter(|&b| b > 4096) {
        grains.push((pb, format!("physical block {pb}")));
    }
    if let Some(m) = p.minimum_io_size.filter(|&b| b > 4096) {
        grains.push((m, format!("minimum_io_size {m}")));
    }
    if let Some(o) = p.optimal_io_size.filter(|&b| b > 4096) {
        grains.push((o, format!("optimal_io_size {o}")));
    }
    if let Some(s) = stripe {
        grains.push((s, format!("stripe unit {}", crate::align::size_arg(s))));
    }
    let mut ev = vec![format!("start sector {start} ({bytes} bytes)")];
    if let Some(a) = p.alignment_offset {
        ev.push(format!("alignment_offset {a}"));
    }
    let bad: Vec<String> = grains
        .iter()
        .filter(|(g, _)| bytes % g != 0)
        .map(|(g, n)| format!("{n} (remainder {} bytes)", bytes % g))
        .collect();
    let fix = "recreate the partition on a 1 MiB boundary (parted -a optimal, or sfdisk start=2048) and restore the data; see `dbio align calc`";
    if !bad.is_empty() {
        return Finding::new(
            "part.alignment",
            dev,
            Status::Warn,
            format!("partition misaligned to {}", bad.join(", ")),
            why,
        )
        .evidence(ev)
        .fix(fix);
    }
    if let Some(a) = p.alignment_offset.filter(|&a| a != 0) {
        return Finding::new(
            "part.alignment",
            dev,
            Status::Warn,
            format!("kernel reports alignment_offset {a}"),
            why,
        )
        .evidence(ev)
        .fix(fix);
    }
    let names: Vec<&str> = grains.iter().map(|(_, n)| n.as_str()).collect();
    Finding::new(
        "part.alignment",
        dev,
        Status::Ok,
        format!("aligned to {}", names.join(", ")),
        why,
    )
    .evidence(ev)
}

/// Alignment of an LVM2 physical volume's data area: `pe_start` bytes into a PV that itself
/// starts `pv_start_bytes` into its disk (0 for a whole-disk PV). `grain` is the boundary to
/// check: the stripe unit, else the disk's optimal or minimum I/O size, else 1 MiB.
pub fn pv_alignment(
    pv: &str,
    pv_start_bytes: u64,
    pe_start_bytes: u64,
    grain: u64,
    grain_name: &str,
) -> Finding {
    let why = "LVM places every logical volume's extents from pe_start on; a PV whose data area starts off the stripe boundary misaligns every LV on it even when the partition is aligned.";
    let abs = pv_start_bytes + pe_start_bytes;
    let ev = vec![format!("pe_start {pe_start_bytes} bytes into the PV, PV at byte {pv_start_bytes} of the disk: data at byte {abs}")];
    if grain == 0 || abs.is_multiple_of(grain) {
        Finding::new(
            "lvm.pe_start",
            pv,
            Status::Ok,
            format!("LVM data area at byte {abs}: aligned to {grain_name}"),
            why,
        )
        .evidence(ev)
    } else {
        Finding::new(
            "lvm.pe_start",
            pv,
            Status::Warn,
            format!(
                "LVM data area at byte {abs}: not aligned to {grain_name} (remainder {} bytes)",
                abs % grain
            ),
            why,
        )
        .evidence(ev)
        .fix(format!(
            "recreate the PV with pvcreate --dataalignment {} (after moving the data off: pvmove)",
            crate::align::size_arg(grain)
        ))
    }
}

/// Filesystem stripe geometry facts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GeometryFacts {
    /// Mount point or device.
    pub name: String,
    /// `xfs`, `ext4`.
    pub fstype: String,
    /// Filesystem stripe unit in bytes.
    pub su_bytes: u64,
    /// Filesystem stripe width in bytes.
    pub sw_bytes: u64,
    /// Filesystem block size in bytes (ext4 stride is counted in blocks).
    pub block_bytes: u64,
    /// The device node the filesystem is on (for the fix command).
    pub device: String,
    /// Expected stripe unit (from --stripe or the kernel's minimum_io_size).
    pub expected_su: Option<u64>,
    /// Expected data disks (from --disks/--raid, or optimal_io_size / minimum_io_size).
    pub expected_data_disks: Option<u32>,
    /// Where the expectation comes from.
    pub source: String,
}

/// Filesystem geometry rule.
pub fn fs_geometry(g: &GeometryFacts) -> Finding {
    let why = "XFS and ext4 place allocation groups, inodes and large writes on stripe boundaries only when they know the stripe unit and width; a wrong geometry spreads writes into partial stripes (read-modify-write on RAID 5/6).";
    let fmt = |b: u64| {
        if b == 0 {
            "0".to_string()
        } else {
            crate::align::size_arg(b)
        }
    };
    let ev = vec![format!(
        "{}: su={} sw_bytes={} block={}",
        g.fstype,
        fmt(g.su_bytes),
        fmt(g.sw_bytes),
        fmt(g.block_bytes)
    )];
    let Some(stripe) = g.expected_su else {
        return Finding::new("fs.geometry", &g.name, Status::Ok, format!("{} su={} swidth={}: no RAID geometry known to compare with (give --stripe, --disks, --raid)", g.fstype, fmt(g.su_bytes), fmt(g.sw_bytes)), why).evidence(ev);
    };
    let c = check_geometry(g.su_bytes, g.sw_bytes, stripe, g.expected_data_disks);
    let exp = match c.expected_sw_bytes {
        Some(w) => format!("su={} swidth={} ({})", fmt(stripe), fmt(w), g.source),
        None => format!("su={} ({})", fmt(stripe), g.source),
    };
    let blk = g.block_bytes.max(1024);
    let fix = match (g.fstype.as_str(), g.expected_data_disks) {
        ("xfs", Some(d)) => format!(
            "mount -o sunit={},swidth={} (512-byte units), or mkfs.xfs -d su={},sw={d} when recreating",
            stripe / 512,
            stripe / 512 * d as u64,
            fmt(stripe)
        ),
        ("xfs", None) => format!("mkfs.xfs -d su={},sw=DATA_DISKS when recreating", fmt(stripe)),
        (_, Some(d)) => format!(
            "tune2fs -E stride={},stripe_width={} {} (in {}-byte blocks)",
            stripe / blk,
            stripe / blk * d as u64,
            g.device,
            blk
        ),
        _ => format!("tune2fs -E stride={} {} (in {}-byte blocks)", stripe / blk, g.device, blk),
    };
    match c.verdict {
        GeometryMatch::Match => Finding::new(
            "fs.geometry",
            &g.name,
            Status::Ok,
            format!("matches {exp}"),
            why,
        )
        .evidence(ev),
        GeometryMatch::NoGeometry => Finding::new(
            "fs.geometry",
            &g.name,
            Status::Warn,
            format!("filesystem has no stripe geometry; expected {exp}"),
            why,
        )
        .evidence(ev)
        .fix(fix),
        GeometryMatch::Mismatch => Finding::new(
            "fs.geometry",
            &g.name,
            Status::Warn,
            format!(
                "filesystem su={} swidth={} but expected {exp}",
                fmt(g.su_bytes),
                fmt(g.sw_bytes)
            ),
            why,
        )
        .evidence(ev)
        .fix(fix),
    }
}

// ---------------------------------------------------------------- mount options

/// A mounted filesystem.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MountFacts {
    /// Mount point.
    pub mountpoint: String,
    /// Source device.
    pub source: String,
    /// Filesystem type.
    pub fstype: String,
    /// Mount options (per-mount and superblock options together).
    pub options: Vec<String>,
    /// Filesystem size in bytes.
    pub size_bytes: Option<u64>,
    /// Kernel write-cache mode of the disk underneath (`write back`/`write through`).
    pub write_cache: Option<String>,
    /// `uname -r` (defaults changed over time: ext3 barriers in 3.1, XFS inode64 in 3.7).
    pub kernel_release: Option<String>,
}

/// True when `release` (`2.6.32-431.el6.x86_64`, `6.1.0-18-amd64`) is older than major.minor;
/// `None` when it cannot be parsed.
pub fn kernel_before(release: &str, major: u32, minor: u32) -> Option<bool> {
    let mut it = release
        .split(|c: char| !c.is_ascii_digit())
        .filter(|x| !x.is_empty());
    let ma: u32 = it.next()?.parse().ok()?;
    let mi: u32 = it.next()?.parse().ok()?;
    Some((ma, mi) < (major, minor))
}

impl MountFacts {
    fn kernel_before(&self, major: u32, minor: u32) -> bool {
        self.kernel_release
            .as_deref()
            .and_then(|r| kernel_before(r, major, minor))
            == Some(true)
    }

    fn has(&self, o: &str) -> bool {
        self.options.iter().any(|x| x == o)
    }
    fn value(&self, key: &str) -> Option<&str> {
        self.options
            .iter()
            .find_map(|x| x.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
    }
}

/// All mount-option rules for one mount.
pub fn mount_rules(m: &MountFacts) -> Vec<Finding> {
    let dev = m.mountpoint.as_str();
    let opts = m.options.join(",");
    let mut out = Vec::new();
    let atime_why = "Updating the access time turns reads into writes; databases never use atime. relatime writes it at most once a day per file, noatime never.";
    let remount =
        |o: &str| format!("mount -o remount,{o} {dev}; add {o} to the options in /etc/fstab");
    // mountinfo shows relatime or noatime when set; neither means strictatime.
    let strict = m.has("strictatime") || (!m.has("noatime") && !m.has("relatime"));
    out.push(if strict {
        Finding::new(
            "mount.atime",
            dev,
            Status::Warn,
            "strictatime (neither noatime nor relatime): every read writes an access time",
            atime_why,
        )
        .evidence([format!("options: {opts}")])
        .fix(remount("noatime"))
    } else if m.has("noatime") {
        Finding::new("mount.atime", dev, Status::Ok, "noatime", atime_why)
    } else {
        Finding::new(
            "mount.atime",
            dev,
            Status::Ok,
            "relatime (noatime saves a daily atime write per file)",
            atime_why,
        )
    });
    // ext3 mounted without barriers by default before Linux 3.1.
    let ext3_default = m.fstype == "ext3"
        && m.value("barrier").is_none()
        && !m.has("barrier")
        && m.kernel_before(3, 1);
    let barrier_off = m.has("nobarrier") || m.value("barrier") == Some("0") || ext3_default;
    let barrier_why = "nobarrier/barrier=0 stops the filesystem from sending cache flushes: with a volatile write cache, a power cut loses writes the database already saw as durable and can corrupt the journal. It is safe only with a battery- or flash-backed cache.";
    if barrier_off {
        let wc = m.write_cache.as_deref().unwrap_or("unknown");
        let status = if wc == "write back" {
            Status::Crit
        } else {
            Status::Warn
        };
        out.push(
            Finding::new("mount.barrier", dev, status, format!("cache flushes disabled ({}) on a disk whose kernel cache mode is {wc}", if m.has("nobarrier") { "nobarrier" } else if ext3_default { "ext3 defaults to barrier=0 before Linux 3.1" } else { "barrier=0" }), barrier_why)
                .evidence([format!("options: {opts}"), format!("write_cache: {wc}")])
                .fix(format!("mount -o remount,barrier=1 {dev} and put barrier=1 (not nobarrier/barrier=0) in /etc/fstab")),
        );
    } else {
        out.push(Finding::new(
            "mount.barrier",
            dev,
            Status::Ok,
            "cache flushes enabled",
            barrier_why,
        ));
    }
    if m.fstype == "xfs" {
        let why = "With 32-bit inodes (inode32) XFS keeps all inodes, and so the first extents of new files, in the first TiB of the filesystem; in the articles' benchmark that cost 20-40% until the filesystem was mounted with inode64 (the default since Linux 3.7).";
        let big = m.size_bytes.is_some_and(|s| s > 1u64 << 40);
        let inode32 = m.has("inode32") || (m.kernel_before(3, 7) && !m.has("inode64"));
        out.push(if inode32 && big {
            Finding::new(
                "mount.xfs_inode64",
                dev,
                Status::Warn,
                "inode32 on a filesystem larger than 1 TiB",
                why,
            )
            .evidence([format!("options: {opts}")])
            .fix(remount("inode64"))
        } else if inode32 {
            Finding::new(
                "mount.xfs_inode64",
                dev,
                Status::Ok,
                "inode32, but the filesystem is under 1 TiB",
                why,
            )
        } else {
            Finding::new(
                "mount.xfs_inode64",
                dev,
                Status::Ok,
                "inode64 (default)",
                why,
            )
        });
    }
    if m.fstype == "ext4" || m.fstype == "ext3" {
        let why = "data=journal writes every data block twice (the database already journals its own writes); data=writeback lets files show stale blocks after a crash. data=ordered is the safe default.";
        out.push(match m.value("data") {
            Some("journal") => Finding::new(
                "mount.ext4_data",
                dev,
                Status::Warn,
                "data=journal: every data block is written twice",
                why,
            )
            .evidence([format!("options: {opts}")])
            .fix("remove data=journal from /etc/fstab and remount (data=ordered)"),
            Some("writeback") => Finding::new(
                "mount.ext4_data",
                dev,
                Status::Warn,
                "data=writeback: stale blocks can appear in files after a crash",
                why,
            )
            .evidence([format!("options: {opts}")])
            .fix("remove data=writeback from /etc/fstab and remount (data=ordered)"),
            Some(o) => Finding::new("mount.ext4_data", dev, Status::Ok, format!("data={o}"), why),
            None => Finding::new(
                "mount.ext4_data",
                dev,
                Status::Ok,
                "data=ordered (default)",
                why,
            ),
        });
    }
    out
}

// ---------------------------------------------------------------- LVM snapshots

/// One line of `lvs`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LvInfo {
    /// Volume group.
    pub vg: String,
    /// Logical volume.
    pub lv: String,
    /// lv_attr.
    pub attr: String,
    /// Origin LV (for snapshots).
    pub origin: String,
    /// COW usage percent (classic snapshots) or data percent (thin).
    pub percent: Option<f64>,
}

/// The `lvs` command whose output [`parse_lvs`] reads.
pub const LVS_ARGS: &[&str] = &[
    "--noheadings",
    "--separator",
    "|",
    "-o",
    "vg_name,lv_name,lv_attr,origin,snap_percent,data_percent",
];

/// Parses `lvs --noheadings --separator '|' -o vg_name,lv_name,lv_attr,origin,snap_percent,data_percent`.
pub fn parse_lvs(text: &str) -> Vec<LvInfo> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.trim().split('|').map(str::trim).collect();
            if f.len() < 4 {
                return None;
            }
            let pct = |s: Option<&&str>| s.and_then(|s| s.replace(',', ".").parse::<f64>().ok());
            Some(LvInfo {
                vg: f[0].to_string(),
                lv: f[1].to_string(),
                attr: f[2].to_string(),
                origin: f[3].to_string(),
                percent: pct(f.get(4)).or_else(|| pct(f.get(5))),
            })
        })
        .collect()
}

/// Splits a device-mapper LVM name `vg--x-lv` into (`vg-x`, `lv`) (dm doubles dashes in names).
pub fn split_dm_lvm_name(name: &str) -> Option<(String, String)> {
    let b = name.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'-' {
            if i + 1 < b.len() && b[i + 1] == b'-' {
                i += 2;
                continue;
            }
            let vg = name[..i].replace("--", "-");
            let lv = name[i + 1..].replace("--", "-");
            return Some((vg, lv));
        }
        i += 1;
    }
    None
}

/// LVM snapshot rule for the LV `vg/lv` that holds a mount.
pub fn lvm_snapshots(mount: &str, vg: &str, lv: &str, lvs: &[LvInfo]) -> Finding {
    let why = "Reads of an LV with a classic (copy-on-write) snapshot must check the snapshot's exception table; as the COW area fills, reads slow down (a 600 GB mylvmbackup took 11 h instead of under 3 h), and a full snapshot is invalidated.";
    let snaps: Vec<&LvInfo> = lvs
        .iter()
        .filter(|s| s.vg == vg && s.origin == lv)
        .collect();
    let dev = format!("{mount} ({vg}/{lv})");
    if snaps.is_empty() {
        return Finding::new(
            "lvm.snapshot",
            &dev,
            Status::Ok,
            "no snapshots of this LV",
            why,
        );
    }
    let ev: Vec<String> = snaps
        .iter()
        .map(|s| match s.percent {
            Some(p) => format!("snapshot {}/{} attr {} {p:.2}% used", s.vg, s.lv, s.attr),
            None => format!("snapshot {}/{} attr {}", s.vg, s.lv, s.attr),
        })
        .collect();
    let max = snaps
        .iter()
        .filter_map(|s| s.percent)
        .fold(0.0f64, f64::max);
    let invalid = snaps.iter().any(|s| s.attr.chars().nth(4) == Some('I'));
    let status = if invalid || max >= 80.0 {
        Status::Crit
    } else {
        Status::Warn
    };
    let names: Vec<String> = snaps.iter().map(|s| format!("{}/{}", s.vg, s.lv)).collect();
    Finding::new(
        "lvm.snapshot",
        &dev,
        status,
        format!(
            "{} snapshot(s) over the data, fullest {max:.1}% COW used{}",
            snaps.len(),
            if invalid { ", one is invalid" } else { "" }
        ),
        why,
    )
    .evidence(ev)
    .fix(format!(
        "finish the backup and lvremove {}",
        names.join(" ")
    ))
}

// ---------------------------------------------------------------- RAID controllers

fn ctl_id(c: &Controller) -> String {
    if c.id.starts_with('c') || c.id.contains(' ') {
        c.id.clone()
    } else {
        format!("c{}", c.id)
    }
}

fn vd_id(v: &VirtualDrive) -> String {
    if v.id.starts_with('u') || v.id.contains(' ') {
        v.id.clone()
    } else {
        format!("vd {}", v.id)
    }
}

fn vd_name(tool: &str, c: &Controller, v: &VirtualDrive) -> String {
    let vid = vd_id(v);
    match &v.os_device {
        Some(d) if !vid.contains(d.as_str()) => format!("{tool} {} {vid} ({d})", ctl_id(c)),
        _ => format!("{tool} {} {vid}", ctl_id(c)),
    }
}

fn policy_word(p: Option<WritePolicy>) -> &'static str {
    match p {
        Some(WritePolicy::WriteBack) => "write-back",
        Some(WritePolicy::AlwaysWriteBack) => "always write-back",
        Some(WritePolicy::WriteThrough) => "write-through",
        None => "unknown",
    }
}

/// The command whose output adds the battery (flash module) state for `tool`.
pub fn battery_command(tool: Tool) -> &'static str {
    match tool {
        Tool::Megacli => "MegaCli -AdpBbuCmd -aALL",
        Tool::Storcli | Tool::StorcliJson => "storcli /call show all J",
        Tool::Ssacli | Tool::CcissVolStatus => "ssacli ctrl all show config detail",
        Tool::Arcconf => "arcconf GETCONFIG 1 AD",
        Tool::TwCli => "tw_cli /c0/bbu show all",
        Tool::Omreport => "omreport storage battery",
    }
}

/// The command whose output adds the virtual drives' cache policy for `tool`.
pub fn policy_command(tool: Tool) -> &'static str {
    match tool {
        Tool::Megacli => "MegaCli -LDInfo -Lall -aALL",
        Tool::Storcli | Tool::StorcliJson => "storcli /call/vall show all J",
        Tool::Ssacli | Tool::CcissVolStatus => "ssacli ctrl all show config detail",
        Tool::Arcconf => "arcconf GETCONFIG 1 LD",
        Tool::TwCli => "tw_cli /c0 show",
        Tool::Omreport => "omreport storage vdisk",
    }
}

fn battery_cause(c: &Controller) -> String {
    match &c.battery {
        None => "battery state not in this output".into(),
        Some(b) => match b.state {
            BatteryState::Learning => format!(
                "the battery is in a learn (relearn) cycle ({})",
                b.state_text
            ),
            BatteryState::Charging => format!("the battery is charging ({})", b.state_text),
            BatteryState::Failed => format!("the battery has failed ({})", b.state_text),
            BatteryState::Missing => format!("the battery is missing ({})", b.state_text),
            BatteryState::Degraded => format!("the battery is degraded ({})", b.state_text),
            BatteryState::Present => "a battery is fitted; its state is not in this output".into(),
            BatteryState::Ok if b.learn_active => "a learn cycle is active".into(),
            BatteryState::Ok => "the battery reports OK: check the controller log".into(),
            BatteryState::Unknown => format!("battery state '{}' not recognised", b.state_text),
        },
    }
}

/// A state word that names a background operation (verify, initialisation, consistency
/// check, patrol read): the array is whole, the operation only competes for I/O.
fn background_state(sl: &str) -> bool {
    [
        "verif",
        "initializ",
        "initialis",
        "consistency check",
        "patrol",
    ]
    .iter()
    .any(|w| sl.contains(w))
}

const WHY_WT: &str = "With write-through every commit, doublewrite and log write waits for the disks instead of the controller cache: write latency jumps by an order of magnitude and replication can fall 1000 s behind with nothing in the MySQL logs. Batteries relearn every ~90 days, counted from power-on, so servers installed together relearn together.";
const WHY_UNPROTECTED: &str = "Write-back without a working battery or flash backup keeps acknowledged writes only in volatile controller memory: a power cut loses committed transactions and can corrupt InnoDB files.";
const WHY_BATTERY: &str = "The battery (or flash module) is what makes write-back safe; while it learns, charges, fails or is missing the controller runs write-through or risks the cache.";
const FIX_FALLBACK: &str = "wait for the learn cycle to finish or replace the battery; reschedule learn cycles off-peak; meanwhile expect slow commits (or take this server out of the pool)";

/// All RAID rules for one parsed report. The policy (README, check section):
/// CRIT when write-back is configured but the cache runs write-through or is disabled,
/// when write-back runs with no working protection, or when a battery has failed; WARN for
/// a transient loss of protection, volatile drive caches, write-back kept on a bad battery
/// and a missing battery whose cache policy the output does not show; ADVICE for tuning
/// (read-ahead, a verify running, a learn cycle due); missing context is judged on what the
/// output shows, with the command that completes it.
pub fn raid_rules(r: &RaidReport) -> Vec<Finding> {
    let tool = r.tool.short();
    let bat_cmd = battery_command(r.tool);
    let pol_cmd = policy_command(r.tool);
    let mut out = Vec::new();
    for c in &r.controllers {
        let first = out.len();
        let bstate = c.battery.as_ref().map(|b| b.state);
        let no_cache = c.cache_bytes == Some(0);
        let ctl_dev = match &c.model {
            Some(m) if !ctl_id(c).contains(m.as_str()) => format!("{tool} {} ({m})", ctl_id(c)),
            _ => format!("{tool} {}", ctl_id(c)),
        };
        let policy_shown = c
            .virtual_drives
            .iter()
            .any(|v| v.configured_write.is_some() || v.current_write.is_some());
        let any_wb = c.virtual_drives.iter().any(|v| {
            v.configured_write.is_some_and(WritePolicy::is_write_back)
                || v.current_write.is_some_and(WritePolicy::is_write_back)
        });
        // Controller-wide cache state (ssacli `ctrl all show status`, cciss_vol_status -V).
        if let Some(reason) = &c.cache_disabled {
            let on_vd = c
                .virtual_drives
                .iter()
                .any(|v| v.cache_temporarily_disabled || v.cache_disabled_reason.is_some());
            if !on_vd {
                out.push(
                    Finding::new(
                        "raid.write_policy",
                        &ctl_dev,
                        Status::Crit,
                        match c.battery {
                            Some(_) => format!(
                                "controller write cache disabled, every write waits for the disks: {reason}; {}",
                                battery_cause(c)
                            ),
                            None => format!(
                                "controller write cache disabled, every write waits for the disks: {reason}"
                            ),
                        },
                        WHY_WT,
                    )
                    .evidence([reason.clone()])
                    .fix(FIX_FALLBACK),
                );
            }
        } else if c.virtual_drives.is_empty() {
            if let Some(cs) = &c.cache_status {
                out.push(Finding::new(
                    "raid.cache",
                    &ctl_dev,
                    Status::Ok,
                    format!("cache status {cs}; the logical drives are not in this output (`{pol_cmd}` shows them)"),
                    WHY_WT,
                ));
            } else if no_cache && c.battery.is_none() {
                out.push(Finding::new(
                    "raid.cache",
                    &ctl_dev,
                    Status::Ok,
                    "no cache memory on this controller (HBA or cacheless RAID): nothing for a battery to protect",
                    WHY_WT,
                ));
            }
        }
        for p in &c.problems {
            out.push(
                Finding::new(
                    "raid.controller",
                    &ctl_dev,
                    Status::Warn,
                    p.clone(),
                    "The controller reports a fault outside the cache: a failed spare or an enclosure out of temperature is the next disk failure waiting.",
                )
                .fix("look at the controller's event log and replace the failed part"),
            );
        }
        for b in &c.background {
            out.push(Finding::new(
                "raid.background",
                &ctl_dev,
                Status::Advice,
                b.clone(),
                "A background operation competes with the database for disk time until it ends.",
            ));
        }
        if let Some(b) = &c.battery {
            let mut ev: Vec<String> = b.evidence.clone();
            if let Some(n) = &b.next_learn {
                ev.push(format!("next learn: {n}"));
            }
            let (status, summary) = match b.state {
                BatteryState::Ok if b.learn_due => (
                    Status::Advice,
                    format!("{} OK; a learn cycle is due or requested: schedule it off-peak", b.kind),
                ),
                BatteryState::Ok => (Status::Ok, format!("{} {}", b.kind, b.state_text)),
                BatteryState::Present => (
                    Status::Ok,
                    format!("{} present; its state is not in this output: `{bat_cmd}` shows it", b.kind),
                ),
                BatteryState::Learning => (
                    Status::Warn,
                    format!("{} in a learn cycle ({}): the cache is not protected until it ends", b.kind, b.state_text),
                ),
                BatteryState::Charging => (
                    Status::Warn,
                    format!("{} charging ({}): the cache is not fully protected until it is charged", b.kind, b.state_text),
                ),
                BatteryState::Degraded => (
                    Status::Warn,
                    format!("{} degraded ({})", b.kind, b.state_text),
                ),
                BatteryState::Failed => (
                    Status::Crit,
                    format!("{} failed or needs replacement ({})", b.kind, b.state_text),
                ),
                BatteryState::Missing if no_cache => (
                    Status::Ok,
                    format!("no battery and no cache memory: nothing to protect ({})", b.state_text),
                ),
                BatteryState::Missing if policy_shown && !any_wb => (
                    Status::Ok,
                    format!("no battery fitted, all virtual drives write-through by design ({})", b.state_text),
                ),
                BatteryState::Missing if policy_shown => (
                    Status::Warn,
                    format!("{} missing ({})", b.kind, b.state_text),
                ),
                BatteryState::Missing => (
                    Status::Warn,
                    format!(
                        "no battery fitted ({}) and the cache policy is not in this output: a virtual drive that writes back loses acknowledged writes on power loss (`{pol_cmd}` shows the policy)",
                        b.state_text
                    ),
                ),
                BatteryState::Unknown => (
                    Status::Warn,
                    format!("{} state '{}' not recognised: check it with `{bat_cmd}`", b.kind, b.state_text),
                ),
            };
            out.push(
                Finding::new("raid.battery", &ctl_dev, status, summary, WHY_BATTERY)
                    .evidence(ev)
                    .fix("schedule learn cycles off-peak and stagger them across servers (MegaCli -AdpBbuCmd -SetBbuProperties; storcli /cN/bbu set learnDelayInterval=N; omconfig storage battery action=delaylearn) and replace a failed battery"),
            );
        }
        for v in &c.virtual_drives {
            let dev = vd_name(tool, c, v);
            if let Some(s) = &v.state {
                let sl = s.to_ascii_lowercase();
                let (st, why) = if ["optimal", "optl", "ok", "ready", "online"]
                    .iter()
                    .any(|w| sl == *w || sl.starts_with(&format!("{w} ")))
                {
                    (Status::Ok, "")
                } else if background_state(&sl) {
                    (Status::Advice, "A background verify or initialisation competes with the database for disk time until it ends; the array is whole.")
                } else if sl.contains("fail") || sl.contains("offline") || sl.contains("ofln") {
                    (Status::Crit, "a failed or offline volume")
                } else {
                    (Status::Warn, "a degraded or rebuilding array serves reads from fewer disks and rebuild I/O competes with the database")
                };
                let state_fix = if st == Status::Advice {
                    "let it finish, or schedule verifies off-peak (tw_cli /cN/uN set autoverify=off and a verify schedule; storcli /cN set cc=...)"
                } else {
                    "replace the failed disk and let the array rebuild"
                };
                out.push(
                    Finding::new(
                        "raid.vd_state",
                        &dev,
                        st,
                        format!(
                            "state {s}{}",
                            v.raid_level
                                .as_deref()
                                .map(|l| format!(", RAID {l}"))
                                .unwrap_or_default()
                        ),
                        if why.is_empty() {
                            "A degraded array is slower and one disk away from data loss."
                        } else {
                            why
                        },
                    )
                    .evidence(
                        v.evidence
                            .iter()
                            .filter(|l| {
                                l.contains("status")
                                    || l.contains("VD table")
                                    || l.contains("unit table")
                            })
                            .cloned(),
                    )
                    .fix(state_fix),
                );
            }
            // cciss_vol_status reports no per-volume policy: its cache state is controller-wide.
            if r.tool == crate::raid::Tool::CcissVolStatus {
                continue;
            }
            let cfg = v.configured_write;
            let cur = v.current_write;
            let mut ev = v.evidence.clone();
            let cfg_wb = cfg.is_some_and(WritePolicy::is_write_back);
            let fallback = cfg_wb
                && (cur == Some(WritePolicy::WriteThrough)
                    || v.cache_temporarily_disabled
                    || v.cache_disabled_reason.is_some());
            let f = if fallback {
                let cause = if let Some(r) = &v.cache_disabled_reason {
                    format!("{r}; {}", battery_cause(c))
                } else {
                    battery_cause(c)
                };
                Finding::new(
                    "raid.write_policy",
                    &dev,
                    Status::Crit,
                    format!(
                        "configured {}, running write-through: {cause}",
                        policy_word(cfg)
                    ),
                    WHY_WT,
                )
                .fix(FIX_FALLBACK)
            } else {
                match (cfg, cur) {
                    (_, Some(c1)) if c1.is_write_back() => match bstate {
                        Some(BatteryState::Failed | BatteryState::Missing) => {
                            Finding::new("raid.write_policy", &dev, Status::Crit, format!("running {} with no working battery or flash backup: {}", policy_word(Some(c1)), battery_cause(c)), WHY_UNPROTECTED)
                                .fix("replace the battery, or switch to write-through until it is replaced")
                        }
                        Some(BatteryState::Learning | BatteryState::Charging | BatteryState::Degraded | BatteryState::Unknown) => {
                            Finding::new("raid.write_policy", &dev, Status::Warn, format!("running {} while {}: the cache is not fully protected", policy_word(Some(c1)), battery_cause(c)), WHY_UNPROTECTED)
                                .fix("let the battery finish its cycle, or replace it")
                        }
                        Some(BatteryState::Ok) => Finding::new("raid.write_policy", &dev, Status::Ok, format!("{} (configured and current), battery OK", policy_word(Some(c1))), WHY_WT),
                        Some(BatteryState::Present) | None => Finding::new("raid.write_policy", &dev, Status::Ok, format!("{} (configured and current); the battery state is not in this output: `{bat_cmd}` shows it", policy_word(Some(c1))), WHY_UNPROTECTED),
                    },
                    (Some(c0), None) if c0.is_write_back() => match bstate {
                        Some(BatteryState::Learning | BatteryState::Charging | BatteryState::Failed | BatteryState::Missing | BatteryState::Degraded) => {
                            ev.push("current policy not shown by this tool; inferred from the battery state".into());
                            Finding::new("raid.write_policy", &dev, Status::Crit, format!("configured {} but the controller is running write-through (inferred) while {}", policy_word(cfg), battery_cause(c)), WHY_WT)
                                .fix("wait for the learn cycle to finish or replace the battery; reschedule learn cycles off-peak (omconfig storage battery action=delaylearn controller=N battery=0 days=N hours=N)")
                        }
                        Some(BatteryState::Ok) => Finding::new("raid.write_policy", &dev, Status::Ok, format!("{} configured, battery OK", policy_word(cfg)), WHY_WT),
                        Some(BatteryState::Unknown) => Finding::new("raid.write_policy", &dev, Status::Warn, format!("{} configured; {}", policy_word(cfg), battery_cause(c)), WHY_WT)
                            .fix(format!("check the battery with `{bat_cmd}`")),
                        Some(BatteryState::Present) | None => Finding::new("raid.write_policy", &dev, Status::Ok, format!("{} configured; the current policy and the battery state are not in this output: `{bat_cmd}` shows the battery", policy_word(cfg)), WHY_WT),
                    },
                    (Some(WritePolicy::WriteThrough), _) if no_cache || bstate == Some(BatteryState::Missing) => {
                        Finding::new("raid.write_policy", &dev, Status::Ok, "write-through by design (no cache or no battery fitted)", WHY_WT)
                    }
                    (Some(WritePolicy::WriteThrough), _) => Finding::new("raid.write_policy", &dev, Status::Ok, "write-through configured", WHY_WT),
                    (None, Some(WritePolicy::WriteThrough)) if no_cache || bstate == Some(BatteryState::Missing) => {
                        Finding::new("raid.write_policy", &dev, Status::Ok, "write-through by design: no cache memory or no battery fitted, so there is no write-back to fall back from", WHY_WT)
                    }
                    (None, Some(WritePolicy::WriteThrough)) if matches!(bstate, Some(BatteryState::Failed | BatteryState::Learning | BatteryState::Charging | BatteryState::Degraded)) => {
                        Finding::new("raid.write_policy", &dev, Status::Warn, format!("running write-through while {}; the configured policy is not in this output (a write-back fallback?)", battery_cause(c)), WHY_WT)
                            .fix(format!("save the configured policy too (`{pol_cmd}`)"))
                    }
                    (None, Some(p)) => Finding::new("raid.write_policy", &dev, Status::Ok, format!("running {} (the configured policy is not in this output: `{pol_cmd}` shows it)", policy_word(Some(p))), WHY_WT),
                    _ => Finding::new("raid.write_policy", &dev, Status::Ok, format!("the write policy is not in this output: `{pol_cmd}` shows it"), WHY_WT),
                }
            };
            if v.cache_temporarily_disabled && !ev.iter().any(|l| l.contains("Temporarily")) {
                ev.push("Cache Status: Temporarily Disabled".into());
            }
            let mut f = f;
            f.evidence = ev;
            out.push(f);
            if v.write_back_on_bad_battery {
                let st = if matches!(bstate, Some(BatteryState::Failed | BatteryState::Missing)) {
                    Status::Crit
                } else {
                    Status::Warn
                };
                out.push(
                    Finding::new("raid.write_back_on_bad_battery", &dev, st, "write-back stays on when the battery fails (Always WriteBack / Write Cache OK if Bad BBU / No-Battery Write Cache)", WHY_UNPROTECTED)
                        .evidence(v.evidence.iter().filter(|l| { let l = l.to_ascii_lowercase(); l.contains("bad bbu") || l.contains("always") || l.contains("awb") || l.contains("no-battery") || l.contains("write-cache setting") || l.contains("force") }).cloned())
                        .fix("set 'No Write Cache if Bad BBU' (MegaCli -LDSetProp NoCachedBadBBU -LALL -aALL; storcli /cN/vall set wrcache=wb; ssacli ctrl slot=N modify nobatterywritecache=disable)"),
                );
            }
            if v.read_ahead == Some(true) {
                out.push(
                    Finding::new("raid.read_ahead", &dev, Status::Advice, "controller read-ahead is on", "Controller read-ahead fetches the next stripe on every read; a database reading random pages wastes disk time and cache on it (the articles: no read cache or read-ahead, give the cache to writes).")
                        .evidence(v.evidence.iter().filter(|l| l.to_ascii_lowercase().contains("read") || l.contains("VD table")).cloned())
                        .fix("MegaCli -LDSetProp NORA -LALL -aALL; storcli /cN/vall set rdcache=nora; omconfig storage vdisk action=changepolicy readpolicy=nra"),
                );
            }
            let dwc = v.drive_write_cache.or(c.drive_write_cache);
            if dwc == Some(true) {
                out.push(
                    Finding::new("raid.drive_cache", &dev, Status::Warn, "drive write caches are enabled behind the controller", "A disk's own write cache is not protected by the controller battery: on power loss writes the controller believes are on disk are lost.")
                        .evidence(v.evidence.iter().filter(|l| l.to_ascii_lowercase().contains("disk cache") || l.to_ascii_lowercase().contains("drive write cache") || l.to_ascii_lowercase().contains("physical device write cache")).cloned())
                        .fix("MegaCli -LDSetProp -DisDskCache -LALL -aALL; storcli /cN/vall set pdcache=off; ssacli ctrl slot=N modify drivewritecache=disable"),
                );
            }
        }
        label_raid(&mut out[first..], tool, c, &ctl_dev);
    }
    for n in &r.notes {
        out.push(
            Finding::new(
                "raid.note",
                &format!("raid ({tool})"),
                Status::Ok,
                n.clone(),
                "Reported by the parser.",
            )
            .labels(Labels {
                tool: Some(tool.to_string()),
                ..Labels::default()
            }),
        );
    }
    out
}

/// Labels of the findings about one controller (`ctl_dev`) and its virtual drives: the tool,
/// the controller, the volume and the OS device of a volume when the tool shows it.
fn label_raid(findings: &mut [Finding], tool: &str, c: &Controller, ctl_dev: &str) {
    for f in findings {
        let mut l = Labels {
            tool: Some(tool.to_string()),
            controller: Some(ctl_id(c)),
            ..Labels::default()
        };
        if f.device != ctl_dev {
            if let Some(v) = c
                .virtual_drives
                .iter()
                .find(|v| vd_name(tool, c, v) == f.device)
            {
                l.volume = Some(vd_id(v));
                l.device = v.os_device.as_deref().and_then(Labels::device_name);
            }
        }
        f.labels = l;
    }
}

/// The finding for RAID output that could not be parsed, or a tool that failed.
pub fn raid_unknown(source: &str, message: &str) -> Finding {
    Finding::new("raid.parse", &format!("RAID output {source}"), Status::Unknown, message.to_string(), "Without the controller's cache and battery state dbio cannot tell whether commits are protected or running write-through.")
        .labels(Labels { source: Some(source.to_string()), ..Labels::default() })
        .fix("save the tool's output (MegaCli -LDInfo -Lall -aALL; MegaCli -AdpBbuCmd -aALL; storcli /call show all J; ssacli ctrl all show config detail; arcconf GETCONFIG 1 AL; tw_cli /c0 show; omreport storage vdisk; omreport storage battery) and pass it with --raid-output")
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

    #[test]
    fn alignment_rule() {
        let p = PartitionFacts {
            name: "sda1".into(),
            start_sector: Some(63),
            ..Default::default()
        };
        let f = partition_alignment(&p, Some(65536));
        assert_eq!(f.status, Status::Warn);
        assert!(
            f.summary.contains("4 KiB (remainder 3584 bytes)"),
            "{}",
            f.summary
        );
        assert!(f
            .summary
            .contains("stripe unit 64k (remainder 32256 bytes)"));
        let p = PartitionFacts {
            name: "sda3".into(),
            start_sector: Some(27344896),
            optimal_io_size: Some(262144),
            ..Default::default()
        };
        assert_eq!(partition_alignment(&p, Some(65536)).status, Status::Ok);
        let p = PartitionFacts {
            name: "sda1".into(),
            start_sector: Some(2048),
            alignment_offset: Some(3584),
            ..Default::default()
        };
        assert_eq!(partition_alignment(&p, None).status, Status::Warn);
    }

    #[test]
    fn mount_option_rules() {
        let m = MountFacts {
            mountpoint: "/data".into(),
            fstype: "ext4".into(),
            options: vec![
                "rw".into(),
                "relatime".into(),
                "barrier=0".into(),
                "data=writeback".into(),
            ],
            write_cache: Some("write back".into()),
            ..Default::default()
        };
        let f = mount_rules(&m);
        let get = |id: &str| f.iter().find(|x| x.rule == id).unwrap().status;
        assert_eq!(get("mount.barrier"), Status::Crit);
        assert_eq!(get("mount.ext4_data"), Status::Warn);
        assert_eq!(get("mount.atime"), Status::Ok);
        let m = MountFacts {
            mountpoint: "/db".into(),
            fstype: "xfs".into(),
            options: vec!["inode32".into(), "nobarrier".into()],
            size_bytes: Some(2 << 40),
            write_cache: Some("write through".into()),
            ..Default::default()
        };
        let f = mount_rules(&m);
        let get = |id: &str| f.iter().find(|x| x.rule == id).unwrap().status;
        assert_eq!(get("mount.xfs_inode64"), Status::Warn);
        assert_eq!(get("mount.barrier"), Status::Warn);
    }

    #[test]
    fn pv_alignment_rule() {
        assert_eq!(
            pv_alignment("sdb1", 1 << 20, 1 << 20, 65536, "stripe unit 64k").status,
            Status::Ok
        );
        let f = pv_alignment("sdb1", 32256, 1 << 20, 65536, "stripe unit 64k");
        assert_eq!(f.status, Status::Warn);
        assert!(f.summary.contains("remainder 32256 bytes"), "{}", f.summary);
        assert!(f.fix.unwrap().contains("--dataalignment 64k"));
    }

    #[test]
    fn kernel_defaults() {
        assert_eq!(kernel_before("2.6.32-431.el6.x86_64", 3, 1), Some(true));
        assert_eq!(kernel_before("6.18.44-fc-v769", 3, 7), Some(false));
        assert_eq!(kernel_before("3.7.0", 3, 7), Some(false));
        assert_eq!(kernel_before("garbage", 3, 7), None);
        let old = MountFacts {
            mountpoint: "/db".into(),
            fstype: "ext3".into(),
            options: vec!["rw".into(), "noatime".into()],
            write_cache: Some("write back".into()),
            kernel_release: Some("2.6.32-431.el6.x86_64".into()),
            ..Default::default()
        };
        let f = mount_rules(&old);
        let b = f.iter().find(|x| x.rule == "mount.barrier").unwrap();
        assert_eq!(b.status, Status::Crit);
        assert!(b.summary.contains("ext3 defaults to barrier=0"));
        let new = MountFacts {
            kernel_release: Some("5.10.0".into()),
            ..old.clone()
        };
        assert_eq!(
            mount_rules(&new)
                .iter()
                .find(|x| x.rule == "mount.barrier")
                .unwrap()
                .status,
            Status::Ok
        );
        let xfs = MountFacts {
            fstype: "xfs".into(),
            size_bytes: Some(4 << 40),
            ..old
        };
        assert_eq!(
            mount_rules(&xfs)
                .iter()
                .find(|x| x.rule == "mount.xfs_inode64")
                .unwrap()
                .status,
            Status::Warn
        );
    }

    #[test]
    fn lvs_and_snapshots() {
        let text = "  vg0|data|owi-aos---||||\n  vg0|data_snap|swi-a-s---|data|45.31|\n  vg0|other_snap|swi-a-s---|other|85.00|\n";
        let lvs = parse_lvs(text);
        assert_eq!(lvs.len(), 3);
        let f = lvm_snapshots("/var/lib/mysql", "vg0", "data", &lvs);
        assert_eq!(f.status, Status::Warn);
        assert!(f.evidence[0].contains("45.31% used"));
        assert_eq!(
            lvm_snapshots("/x", "vg0", "other", &lvs).status,
            Status::Crit
        );
        assert_eq!(lvm_snapshots("/y", "vg0", "none", &lvs).status, Status::Ok);
    }

    #[test]
    fn dm_names() {
        assert_eq!(
            split_dm_lvm_name("vg0-data"),
            Some(("vg0".into(), "data".into()))
        );
        assert_eq!(
            split_dm_lvm_name("my--vg-my--lv"),
            Some(("my-vg".into(), "my-lv".into()))
        );
        assert_eq!(split_dm_lvm_name("nodash"), None);
    }

    #[test]
    fn geometry_rule() {
        let g = GeometryFacts {
            name: "/db".into(),
            fstype: "xfs".into(),
            su_bytes: 65536,
            sw_bytes: 131072,
            block_bytes: 4096,
            device: "/dev/sdb1".into(),
            expected_su: Some(65536),
            expected_data_disks: Some(4),
            source: "--stripe 64k --disks 8 --raid 10".into(),
        };
        let f = fs_geometry(&g);
        assert_eq!(f.status, Status::Warn);
        assert!(f.fix.unwrap().contains("sunit=128,swidth=512"));
        let e = GeometryFacts {
            fstype: "ext4".into(),
            su_bytes: 0,
            sw_bytes: 0,
            ..g
        };
        let f = fs_geometry(&e);
        assert!(
            f.summary.starts_with("filesystem has no stripe geometry"),
            "{}",
            f.summary
        );
        assert_eq!(
            f.fix.unwrap(),
            "tune2fs -E stride=16,stripe_width=64 /dev/sdb1 (in 4096-byte blocks)"
        );
    }
}
