//! The fact gathering of `dbio check`: for each audited path, its mount and device stack
//! (from `dbio-sys`), superblocks, `lvs` and the RAID tools' output, turned into
//! [`Finding`]s by the rules of [`crate::rules`]. This is the thin live layer over the pure
//! rules: it reads `/proc`, `/sys` and device nodes and runs `lvs` and the installed RAID
//! tools, but never prints. One failed read or tool becomes an UNKNOWN finding; it never
//! aborts the audit.

use crate::fs::Superblock;
use crate::raid::{self, RaidReport, Tool};
use crate::rules::{
    self, Finding, GeometryFacts, Labels, LvInfo, MountFacts, PartitionFacts, QueueFacts, Status,
};
use crate::source::FileSource;
use dbio_schema::check::CheckReport;
use dbio_schema::stack::QueueAttrs;
use dbio_schema::stack::{Device, DeviceKind, Stack};
use dbio_sys::mounts;
use dbio_sys::stack;
use dbio_sys::sysfs::Sys;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What to audit (the plain form of `dbio check`'s flags).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Paths whose storage to audit; empty: every mounted block filesystem (unless only
    /// `raid_outputs` are given, then only the RAID rules run).
    pub paths: Vec<PathBuf>,
    /// Files of saved RAID tool output (the tool is detected).
    pub raid_outputs: Vec<PathBuf>,
    /// Run the installed RAID tools (only when no `raid_outputs` are given).
    pub run_raid_tools: bool,
    /// RAID stripe unit in bytes, to check alignment and filesystem geometry against.
    pub stripe: Option<u64>,
    /// Data disks of the RAID (stripe width = `stripe` x `data_disks`).
    pub data_disks: Option<u32>,
}

/// Why the audit could not start (a failed rule is a finding, not an error).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A path to audit does not exist or cannot be reached.
    /// (The OS error is part of the message, not a cause, so that a caller printing the
    /// chain of causes does not repeat it.)
    #[error("{}: {error}: give an existing file or directory on the filesystem to check", path.display())]
    Path {
        /// The path as given.
        path: PathBuf,
        /// What stat/canonicalize said.
        error: std::io::Error,
    },
    /// The mount table could not be read.
    #[error("cannot list the mounted filesystems: is /proc mounted?")]
    Mounts(#[source] dbio_sys::Error),
}

/// Runs the audit and groups its findings by device, worst first: the result of `dbio check`.
pub fn report(o: &Options) -> Result<CheckReport, Error> {
    audit(o).map(CheckReport::new)
}

/// Runs the audit: every finding, each (device, rule) of the audited paths once, listing the
/// paths it applies to.
pub fn audit(o: &Options) -> Result<Vec<Finding>, Error> {
    let mut findings = Vec::new();
    let only_raid = o.paths.is_empty() && !o.raid_outputs.is_empty();
    let mut stack_disks: Vec<String> = Vec::new();
    if !only_raid {
        let mut lvs: Option<Result<Vec<LvInfo>, String>> = None;
        for (given, target) in targets(o)? {
            let before = findings.len();
            match stack::resolve(&target) {
                Ok(st) => audit_stack(o, &st, &mut lvs, &mut findings, &mut stack_disks),
                Err(e) => findings.push(
                    Finding::new(
                        "check.stack",
                        &target.display().to_string(),
                        Status::Unknown,
                        format!("cannot resolve the device stack: {e}"),
                        "Without the device stack the queue, alignment and geometry rules cannot run.",
                    )
                    .labels(Labels {
                        path: Some(target.display().to_string()),
                        ..Labels::default()
                    }),
                ),
            }
            for f in &mut findings[before..] {
                f.paths = vec![given.clone()];
            }
        }
        findings = merge_paths(findings);
    }
    // RAID controllers.
    let mut reports: Vec<RaidReport> = Vec::new();
    for f in &o.raid_outputs {
        // Read lossily: one stray non-UTF-8 byte (a Latin-1 vendor string, a damaged
        // capture) must not make the whole output unreadable.
        match std::fs::read(f).map(|b| String::from_utf8_lossy(&b).into_owned()) {
            Ok(text) => match raid::parse(&text, &f.display().to_string()) {
                Ok(r) => reports.push(r),
                Err(e) => findings.push(rules::raid_unknown(
                    &f.display().to_string(),
                    &e.to_string(),
                )),
            },
            Err(e) => findings.push(rules::raid_unknown(
                &f.display().to_string(),
                &format!("cannot read {}: {e}", f.display()),
            )),
        }
    }
    if o.raid_outputs.is_empty() && o.run_raid_tools {
        run_tools(&stack_disks, &mut reports, &mut findings);
    }
    for r in raid::merge(reports) {
        findings.extend(rules::raid_rules(&r));
    }
    if findings.is_empty() {
        findings.push(Finding::new(
            "check.targets",
            "-",
            Status::Unknown,
            "nothing to check: no mounted block filesystem found",
            "dbio check audits the storage under mounted filesystems and RAID controllers.",
        ));
    }
    Ok(findings)
}

/// One finding per (device, rule) among the findings about audited paths (those with
/// `paths`): several paths on one filesystem or disk give the same finding, which is kept
/// once (the worst, should they differ) and lists every path. Findings without paths (RAID
/// controllers) are kept as they are.
pub fn merge_paths(findings: Vec<Finding>) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::with_capacity(findings.len());
    for mut f in findings {
        let same = out.iter_mut().find(|g| {
            !f.paths.is_empty() && !g.paths.is_empty() && g.device == f.device && g.rule == f.rule
        });
        let Some(g) = same else {
            out.push(f);
            continue;
        };
        let mut paths = std::mem::take(&mut g.paths);
        for p in std::mem::take(&mut f.paths) {
            if !paths.contains(&p) {
                paths.push(p);
            }
        }
        if f.status.severity() > g.status.severity() {
            *g = f;
        }
        g.paths = paths;
    }
    out
}

/// The paths to audit, each as given and canonical: those given (which must exist), or the
/// mount point of every mounted filesystem that has a block device (one per device).
fn targets(o: &Options) -> Result<Vec<(String, PathBuf)>, Error> {
    if !o.paths.is_empty() {
        let mut out = Vec::new();
        for p in &o.paths {
            let c = std::fs::canonicalize(p).map_err(|error| Error::Path {
                path: p.clone(),
                error,
            })?;
            out.push((p.display().to_string(), c));
        }
        return Ok(out);
    }
    let mounts = mounts::read_mountinfo().map_err(Error::Mounts)?;
    let sysfs = Sys::live();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for m in mounts {
        if m.major == 0 || !sysfs.dev_block(m.major, m.minor).exists() {
            continue;
        }
        if seen.insert((m.major, m.minor)) {
            out.push((m.mountpoint.clone(), PathBuf::from(m.mountpoint)));
        }
    }
    Ok(out)
}

fn fs_size(mountpoint: &str) -> Option<u64> {
    dbio_sys::os::statvfs(std::path::Path::new(mountpoint))
        .ok()
        .map(|s| s.total_bytes)
}

fn split_opts(s: &str) -> Vec<String> {
    s.split(',')
        .filter(|o| !o.is_empty())
        .map(String::from)
        .collect()
}

/// Labels of a finding about a block device and, when given, the filesystem mounted on it.
fn on(device: &str, mountpoint: Option<&str>) -> Labels {
    Labels {
        device: Labels::device_name(device),
        mountpoint: mountpoint.map(String::from),
        ..Labels::default()
    }
}

/// The queue of a device, or of the disk under a partition.
fn queue_of<'a>(st: &'a Stack, d: &'a Device) -> Option<&'a QueueAttrs> {
    d.queue.as_ref().or_else(|| {
        d.slaves
            .first()
            .and_then(|s| st.device(s))
            .and_then(|p| p.queue.as_ref())
    })
}

fn queue_facts(d: &Device) -> QueueFacts {
    let q = d.queue.clone().unwrap_or_default();
    // Rebuild the sysfs text ("none [mq-deadline] kyber") the rule quotes as evidence.
    let scheduler = if q.schedulers.is_empty() {
        q.scheduler.clone()
    } else {
        Some(
            q.schedulers
                .iter()
                .map(|s| {
                    if Some(s) == q.scheduler.as_ref() {
                        format!("[{s}]")
                    } else {
                        s.clone()
                    }
                })
                .collect::<Vec<_>>()
                .join(" "),
        )
    };
    QueueFacts {
        disk: d.name.clone(),
        scheduler,
        nr_requests: q.nr_requests,
        read_ahead_kb: q.read_ahead_kb,
        write_cache: q.write_cache,
        rotational: q.rotational,
    }
}

/// The rules over one resolved stack: mount options, partition and PV alignment, filesystem
/// geometry, LVM snapshots and the queue of every disk at the bottom.
fn audit_stack(
    o: &Options,
    st: &Stack,
    lvs: &mut Option<Result<Vec<LvInfo>, String>>,
    findings: &mut Vec<Finding>,
    stack_disks: &mut Vec<String>,
) {
    let Some(m) = &st.mount else {
        findings.push(
            Finding::new(
                "check.stack",
                &st.query,
                Status::Unknown,
                "no mount found for this path",
                "dbio check audits mounted filesystems.",
            )
            .labels(Labels {
                path: Some(st.query.clone()),
                ..Labels::default()
            }),
        );
        return;
    };
    let mp = m.mountpoint.as_str();
    let Some(top) = st.top() else {
        let note = st
            .notes
            .first()
            .cloned()
            .unwrap_or_else(|| format!("{} has no block device under it", m.source));
        findings.push(
            Finding::new(
                "check.stack",
                mp,
                Status::Ok,
                note,
                "Queue, alignment and geometry rules apply to block devices only.",
            )
            .labels(Labels {
                mountpoint: Some(mp.to_string()),
                ..Labels::default()
            }),
        );
        return;
    };
    let on_mount = on(&top.name, Some(mp));
    let leaves = st.leaves();
    let first_wc = leaves
        .first()
        .and_then(|d| d.queue.as_ref())
        .and_then(|q| q.write_cache.clone());
    let mut options = split_opts(&m.mount_options);
    for opt in split_opts(&m.super_options) {
        if !options.contains(&opt) {
            options.push(opt);
        }
    }
    findings.extend(
        rules::mount_rules(&MountFacts {
            mountpoint: mp.to_string(),
            source: m.source.clone(),
            fstype: m.fstype.clone(),
            options,
            size_bytes: fs_size(mp),
            write_cache: first_wc,
            kernel_release: st.kernel_release.clone(),
        })
        .into_iter()
        .map(|f| f.labels(on_mount.clone())),
    );
    let parts: Vec<&Device> = st
        .devices
        .iter()
        .filter(|d| d.kind == DeviceKind::Partition)
        .collect();
    if parts.is_empty() {
        findings.push(
            rules::partition_alignment(
                &PartitionFacts {
                    name: top.name.clone(),
                    ..Default::default()
                },
                o.stripe,
            )
            .labels(on(&top.name, None)),
        );
    }
    for p in parts {
        let q = queue_of(st, p);
        findings.push(
            rules::partition_alignment(
                &PartitionFacts {
                    name: p.name.clone(),
                    start_sector: p.start_sectors,
                    alignment_offset: p.alignment_offset_bytes,
                    physical_block_size: q.and_then(|q| q.physical_block_size_bytes),
                    minimum_io_size: q.and_then(|q| q.minimum_io_size_bytes),
                    optimal_io_size: q.and_then(|q| q.optimal_io_size_bytes),
                },
                o.stripe,
            )
            .labels(on(&p.name, None)),
        );
    }
    if let Some(f) = fs_geometry(o, st, m, top) {
        findings.push(f.labels(on_mount.clone()));
    }
    // LVM snapshots over this LV.
    if let (Some(uuid), Some(name)) = (&top.dm_uuid, &top.dm_name) {
        if uuid.starts_with("LVM-") {
            if let Some((vg, lv)) = rules::split_dm_lvm_name(name) {
                let f = match lvs.get_or_insert_with(run_lvs) {
                    Ok(l) => rules::lvm_snapshots(mp, &vg, &lv, l),
                    Err(e) => Finding::new(
                        "lvm.snapshot",
                        mp,
                        Status::Unknown,
                        e.clone(),
                        "Snapshots slow reads of their origin as the COW area fills.",
                    ),
                };
                findings.push(f.labels(on_mount.clone()));
            }
        }
    }
    // LVM: where the data area of each PV under an LV starts on its disk.
    if top.dm_subsystem.as_deref() == Some("LVM") {
        for pv in top.slaves.iter().filter_map(|n| st.device(n)) {
            if let Some(f) = pv_alignment(o, st, pv) {
                findings.push(f.labels(on(&pv.name, None)));
            }
        }
    }
    for d in leaves {
        if !stack_disks.contains(&d.name) {
            stack_disks.push(d.name.clone());
        }
        let q = queue_facts(d);
        for f in [
            rules::scheduler(&q),
            rules::nr_requests(&q),
            rules::read_ahead(&q),
            rules::write_cache(&q),
        ] {
            findings.push(f.labels(on(&d.name, None)));
        }
    }
}

/// The filesystem geometry from the superblock against the RAID geometry (given, or the
/// kernel's I/O sizes of the device); `None` for a filesystem other than XFS or ext.
fn fs_geometry(
    o: &Options,
    st: &Stack,
    m: &dbio_schema::stack::Mount,
    top: &Device,
) -> Option<Finding> {
    if m.fstype != "xfs" && !m.fstype.starts_with("ext") {
        return None;
    }
    let mp = m.mountpoint.as_str();
    let dev_path = if m.source.starts_with("/dev/") {
        PathBuf::from(&m.source)
    } else {
        PathBuf::from(&top.node)
    };
    const WHY: &str = "The stripe geometry lives in the superblock.";
    let sb = match FileSource::open(&dev_path).and_then(|src| crate::fs::probe(&src)) {
        Ok(Some(sb)) => sb,
        Ok(None) => {
            return Some(Finding::new(
                "fs.geometry",
                mp,
                Status::Unknown,
                format!("no XFS or ext superblock at the start of {}", dev_path.display()),
                WHY,
            ))
        }
        Err(e) => {
            return Some(
                Finding::new(
                    "fs.geometry",
                    mp,
                    Status::Unknown,
                    format!("cannot read the superblock of {}: {e}", dev_path.display()),
                    WHY,
                )
                .fix(if is_root() {
                    "the device node cannot be opened here (a container without access to it?); run dbio check where the device is readable"
                } else {
                    "run dbio check as root (it opens the device read-only)"
                }),
            )
        }
    };
    let (su, sw, block) = match &sb {
        Superblock::Xfs(x) => (x.su_bytes(), x.sw_bytes(), x.block_size as u64),
        Superblock::Ext(e) => (e.su_bytes(), e.sw_bytes(), e.block_size as u64),
        Superblock::Lvm2(_) => (0, 0, 0),
    };
    let tq = queue_of(st, top);
    let (mi, op) = (
        tq.and_then(|q| q.minimum_io_size_bytes),
        tq.and_then(|q| q.optimal_io_size_bytes),
    );
    let kernel_su = mi.filter(|&v| v > 4096);
    let kernel_dd = match (mi, op) {
        (Some(mi), Some(op)) if mi > 4096 && op >= mi && op % mi == 0 => Some((op / mi) as u32),
        _ => None,
    };
    let (expected_su, expected_data_disks, source) = if o.stripe.is_some() {
        (
            o.stripe,
            o.data_disks,
            "from --stripe/--disks/--raid".to_string(),
        )
    } else {
        (
            kernel_su,
            kernel_dd,
            format!("kernel minimum_io_size/optimal_io_size of {}", top.name),
        )
    };
    Some(rules::fs_geometry(&GeometryFacts {
        name: mp.to_string(),
        fstype: sb.name(),
        su_bytes: su,
        sw_bytes: sw,
        block_bytes: block,
        device: dev_path.display().to_string(),
        expected_su,
        expected_data_disks,
        source,
    }))
}

/// Where LVM's data area starts on one PV, against the stripe (or the kernel's I/O sizes, or
/// 1 MiB); `None` when the device holds no LVM2 label.
fn pv_alignment(o: &Options, st: &Stack, pv: &Device) -> Option<Finding> {
    match FileSource::open(Path::new(&pv.node)).and_then(|src| crate::fs::probe(&src)) {
        Ok(Some(Superblock::Lvm2(l))) => {
            let q = queue_of(st, pv);
            let (grain, name) = match (
                o.stripe,
                q.and_then(|q| q.optimal_io_size_bytes).filter(|&v| v > 0),
                q.and_then(|q| q.minimum_io_size_bytes)
                    .filter(|&v| v > 4096),
            ) {
                (Some(s), _, _) => (s, format!("stripe unit {}", crate::align::size_arg(s))),
                (None, Some(op), _) => (op, format!("optimal_io_size {op}")),
                (None, None, Some(mi)) => (mi, format!("minimum_io_size {mi}")),
                _ => (1 << 20, "1 MiB".to_string()),
            };
            let start = pv.start_sectors.unwrap_or(0) * 512;
            Some(rules::pv_alignment(
                &pv.name,
                start,
                l.pe_start_bytes,
                grain,
                &name,
            ))
        }
        Ok(_) => None,
        Err(e) => Some(Finding::new(
            "lvm.pe_start",
            &pv.name,
            Status::Unknown,
            format!("cannot read the PV label on {}: {e}", pv.node),
            "The PV label says where LVM's data area starts.",
        )),
    }
}

fn is_root() -> bool {
    dbio_sys::os::is_root()
}

fn run_lvs() -> Result<Vec<LvInfo>, String> {
    match Command::new("lvs").args(rules::LVS_ARGS).output() {
        Ok(o) if o.status.success() => Ok(rules::parse_lvs(&String::from_utf8_lossy(&o.stdout))),
        Ok(o) => Err(format!(
            "lvs failed ({}): {}",
            o.status,
            raid::first_lines(&String::from_utf8_lossy(&o.stderr))
        )),
        Err(e) => Err(format!(
            "cannot run lvs: {e} (install lvm2 to see snapshot COW usage)"
        )),
    }
}

fn in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    for extra in [
        "/usr/sbin",
        "/sbin",
        "/opt/MegaRAID/MegaCli",
        "/opt/MegaRAID/storcli",
        "/opt/MegaRAID/perccli",
        "/opt/dell/srvadmin/bin",
    ] {
        dirs.push(PathBuf::from(extra));
    }
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

/// Runs the RAID tools that are installed; each failure is an UNKNOWN finding.
fn run_tools(disks: &[String], reports: &mut Vec<RaidReport>, findings: &mut Vec<Finding>) {
    let devs: Vec<String> = disks
        .iter()
        .filter(|d| d.starts_with("sd"))
        .map(|d| format!("/dev/{d}"))
        .collect();
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    type Plan<'a> = (&'a [&'a str], Tool, Vec<Vec<String>>);
    let plans: Vec<Plan> = vec![
        (
            &["MegaCli64", "MegaCli", "megacli"],
            Tool::Megacli,
            vec![
                args(&["-AdpAllInfo", "-aALL", "-NoLog"]),
                args(&["-LDInfo", "-Lall", "-aALL", "-NoLog"]),
                args(&["-AdpBbuCmd", "-aALL", "-NoLog"]),
            ],
        ),
        (
            &["storcli64", "storcli", "perccli64", "perccli"],
            Tool::StorcliJson,
            vec![
                args(&["/call", "show", "all", "J"]),
                args(&["/call/vall", "show", "all", "J"]),
            ],
        ),
        (
            &["ssacli", "hpssacli", "hpacucli"],
            Tool::Ssacli,
            vec![args(&["ctrl", "all", "show", "config", "detail"])],
        ),
        (
            &["arcconf"],
            Tool::Arcconf,
            vec![args(&["GETCONFIG", "1", "AL"])],
        ),
        (
            &["tw_cli", "tw-cli"],
            Tool::TwCli,
            vec![args(&["/c0", "show"])],
        ),
        (
            &["omreport"],
            Tool::Omreport,
            vec![args(&["storage", "vdisk"]), args(&["storage", "battery"])],
        ),
        (
            &["cciss_vol_status"],
            Tool::CcissVolStatus,
            if devs.is_empty() {
                vec![]
            } else {
                vec![devs.clone()]
            },
        ),
    ];
    for (names, tool, runs) in plans {
        let Some(bin) = names.iter().find_map(|n| in_path(n)) else {
            continue;
        };
        let labels = Labels {
            tool: Some(tool.short().to_string()),
            ..Labels::default()
        };
        for args in runs {
            let label = format!("{} {}", bin.display(), args.join(" "));
            let device = format!("raid ({})", tool.name());
            match Command::new(&bin).args(&args).output() {
                Ok(out) => {
                    let text = String::from_utf8_lossy(&out.stdout);
                    match raid::parse_as(tool, &text, &label) {
                        Ok(r) => reports.push(r),
                        Err(e) => {
                            let mut msg = format!("{label} exited with {}: {e}", out.status);
                            let err = String::from_utf8_lossy(&out.stderr);
                            if !err.trim().is_empty() {
                                msg.push_str(&format!("; stderr: {}", raid::first_lines(&err)));
                            }
                            findings.push(Finding::new("raid.tool", &device, Status::Unknown, msg, "The controller tool is installed but its output could not be used, so the cache and battery state is unknown.").labels(labels.clone()));
                        }
                    }
                }
                Err(e) => findings.push(
                    Finding::new(
                        "raid.tool",
                        &device,
                        Status::Unknown,
                        format!("cannot run {label}: {e}"),
                        "The controller tool is installed but could not be run.",
                    )
                    .labels(labels.clone()),
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(dev: &str, rule: &str, st: Status, path: &str) -> Finding {
        let mut f = Finding::new(rule, dev, st, "s", "why");
        if !path.is_empty() {
            f.paths = vec![path.to_string()];
        }
        f
    }

    #[test]
    fn one_finding_per_device_and_rule_of_the_paths() {
        let got = merge_paths(vec![
            f("/", "mount.atime", Status::Ok, "/"),
            f("vda", "io.scheduler", Status::Ok, "/"),
            f("/", "mount.atime", Status::Ok, "/tmp"),
            f("vda", "io.scheduler", Status::Warn, "/tmp"),
            f("/", "mount.atime", Status::Ok, "/"),
            f("raid (arcconf)", "raid.tool", Status::Unknown, ""),
            f("raid (arcconf)", "raid.tool", Status::Unknown, ""),
        ]);
        let got: Vec<(&str, &str, Status, Vec<String>)> = got
            .iter()
            .map(|f| {
                (
                    f.device.as_str(),
                    f.rule.as_str(),
                    f.status,
                    f.paths.clone(),
                )
            })
            .collect();
        let p = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            got,
            [
                ("/", "mount.atime", Status::Ok, p(&["/", "/tmp"])),
                ("vda", "io.scheduler", Status::Warn, p(&["/", "/tmp"])),
                ("raid (arcconf)", "raid.tool", Status::Unknown, p(&[])),
                ("raid (arcconf)", "raid.tool", Status::Unknown, p(&[])),
            ]
        );
    }
}
