//! `dbio check`: is the storage under each PATH set up right for a database? Gathers the
//! inputs (mountinfo, the sysfs device stack, superblocks, `lvs`, RAID tool output), runs the
//! rules of `dbio_storage::rules`, and renders text, JSON, Nagios or Prometheus output.
//! One failed rule or tool becomes an UNKNOWN finding; it never aborts the audit.

use crate::cli::{parse_size_arg, usage};
use crate::cmd::align::Geometry;
use anyhow::Context;
use dbio_report::{Exporter, JsonExporter};
use dbio_storage::fs::Superblock;
use dbio_storage::raid::{self, RaidReport, Tool};
use dbio_storage::report::{self, CheckReport};
use dbio_storage::rules::{self, Finding, GeometryFacts, LvInfo, MountFacts, QueueFacts, Status};
use dbio_storage::source::FileSource;
use dbio_sys::mounts;
use dbio_sys::stack::{self, Device, DeviceKind, Stack};
use dbio_sys::sysfs::{QueueAttrs, Sys};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Output formats of `dbio check`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Grouped by device, worst first.
    Text,
    /// The whole report as JSON (schema dbio-check/1).
    Json,
    /// Prometheus text format for the node_exporter textfile collector.
    Prometheus,
}

/// Arguments of `dbio check`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Paths whose storage to audit (default: every mounted block filesystem). With only
    /// --raid-output and no PATH, only the RAID rules run.
    paths: Vec<PathBuf>,
    /// Saved output of MegaCli, storcli/perccli (text or J), ssacli/hpacucli,
    /// cciss_vol_status, arcconf, tw_cli or omreport (repeatable; the tool is detected).
    #[arg(long = "raid-output", value_name = "FILE")]
    raid_output: Vec<PathBuf>,
    /// Do not run installed RAID tools.
    #[arg(long)]
    no_raid_tools: bool,
    /// RAID stripe unit, to check partition alignment and filesystem geometry against.
    #[arg(long, value_parser = parse_size_arg)]
    stripe: Option<u64>,
    #[command(flatten)]
    geometry: Geometry,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Nagios/Icinga plugin mode: one status line with perfdata; exit 0 OK, 1 WARNING,
    /// 2 CRITICAL, 3 UNKNOWN.
    #[arg(long, conflicts_with = "format")]
    nagios: bool,
    /// With --nagios, count tuning advice (controller read-ahead, a verify running, a learn
    /// cycle due) as WARNING; by default advice is shown but exits 0.
    #[arg(long, requires = "nagios")]
    advice_warns: bool,
    /// Write the result to FILE instead of stdout.
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
}

/// Runs `dbio check`. Returns the Nagios code with --nagios, else 0.
pub fn run(a: Args) -> anyhow::Result<u8> {
    let findings = match audit(&a) {
        Ok(f) => f,
        Err(e) if a.nagios => {
            let msg: Vec<String> = e.chain().map(|c| c.to_string()).collect();
            let line = format!(
                "DBIO STORAGE UNKNOWN - {}\n",
                msg.join(": ").replace('|', "/")
            );
            crate::output::emit(a.output.as_deref(), line.as_bytes())?;
            return Ok(3);
        }
        Err(e) => return Err(e),
    };
    let r = CheckReport::new(findings);
    let bytes = if a.nagios {
        report::render_nagios_with(&r, a.advice_warns)
    } else {
        match a.format {
            Format::Text => report::render_text(&r),
            Format::Json => JsonExporter.to_string(&r)?,
            Format::Prometheus => report::render_prometheus(&r),
        }
    };
    crate::output::emit(a.output.as_deref(), bytes.as_bytes())?;
    Ok(if a.nagios {
        r.nagios_status(a.advice_warns).nagios_code()
    } else {
        0
    })
}

fn audit(a: &Args) -> anyhow::Result<Vec<Finding>> {
    let data_disks = a.geometry.data_disks()?;
    let mut findings = Vec::new();
    let only_raid = a.paths.is_empty() && !a.raid_output.is_empty();
    let mut stack_disks: Vec<String> = Vec::new();
    if !only_raid {
        let mut disks_done = HashSet::new();
        let mut lvs: Option<Result<Vec<LvInfo>, String>> = None;
        for target in targets(a)? {
            match stack::resolve(&target) {
                Ok(st) => audit_stack(
                    a,
                    data_disks,
                    &st,
                    &mut disks_done,
                    &mut lvs,
                    &mut findings,
                    &mut stack_disks,
                ),
                Err(e) => findings.push(Finding::new(
                    "check.stack",
                    &target.display().to_string(),
                    Status::Unknown,
                    format!("cannot resolve the device stack: {e}"),
                    "Without the device stack the queue, alignment and geometry rules cannot run.",
                )),
            }
        }
    }
    // RAID controllers.
    let mut reports: Vec<RaidReport> = Vec::new();
    for f in &a.raid_output {
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
    if a.raid_output.is_empty() && !a.no_raid_tools {
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

/// The paths to audit: those given (which must exist), or the mount point of every mounted
/// filesystem that has a block device (one per device).
fn targets(a: &Args) -> anyhow::Result<Vec<PathBuf>> {
    if !a.paths.is_empty() {
        let mut out = Vec::new();
        for p in &a.paths {
            let c = std::fs::canonicalize(p).map_err(|e| {
                usage(format!(
                    "{}: {e}: give an existing file or directory on the filesystem to check",
                    p.display()
                ))
            })?;
            out.push(c);
        }
        return Ok(out);
    }
    let mounts = mounts::read_mountinfo()
        .context("cannot list the mounted filesystems: is /proc mounted?")?;
    let sysfs = Sys::live();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for m in mounts {
        if m.major == 0 || !sysfs.dev_block(m.major, m.minor).exists() {
            continue;
        }
        if seen.insert((m.major, m.minor)) {
            out.push(PathBuf::from(m.mountpoint));
        }
    }
    Ok(out)
}

fn fs_size(mountpoint: &str) -> Option<u64> {
    let c = std::ffi::CString::new(mountpoint).ok()?;
    // SAFETY: statvfs is plain old data; zeroed is a valid initial value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated path and `st` a valid out-pointer for the call.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    if rc != 0 {
        return None;
    }
    Some(st.f_blocks as u64 * st.f_frsize as u64)
}

fn split_opts(s: &str) -> Vec<String> {
    s.split(',')
        .filter(|o| !o.is_empty())
        .map(String::from)
        .collect()
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

#[allow(clippy::too_many_arguments)]
fn audit_stack(
    a: &Args,
    data_disks: Option<u32>,
    st: &Stack,
    disks_done: &mut HashSet<String>,
    lvs: &mut Option<Result<Vec<LvInfo>, String>>,
    findings: &mut Vec<Finding>,
    stack_disks: &mut Vec<String>,
) {
    let Some(m) = &st.mount else {
        findings.push(Finding::new(
            "check.stack",
            &st.query,
            Status::Unknown,
            "no mount found for this path",
            "dbio check audits mounted filesystems.",
        ));
        return;
    };
    let mp = m.mountpoint.as_str();
    let Some(top) = st.top() else {
        let note = st
            .notes
            .first()
            .cloned()
            .unwrap_or_else(|| format!("{} has no block device under it", m.source));
        findings.push(Finding::new(
            "check.stack",
            mp,
            Status::Ok,
            note,
            "Queue, alignment and geometry rules apply to block devices only.",
        ));
        return;
    };
    let leaves = st.leaves();
    let first_wc = leaves
        .first()
        .and_then(|d| d.queue.as_ref())
        .and_then(|q| q.write_cache.clone());
    let mut options = split_opts(&m.mount_options);
    for o in split_opts(&m.super_options) {
        if !options.contains(&o) {
            options.push(o);
        }
    }
    findings.extend(rules::mount_rules(&MountFacts {
        mountpoint: mp.to_string(),
        source: m.source.clone(),
        fstype: m.fstype.clone(),
        options,
        size_bytes: fs_size(mp),
        write_cache: first_wc,
        kernel_release: st.kernel_release.clone(),
    }));
    let parts: Vec<&Device> = st
        .devices
        .iter()
        .filter(|d| d.kind == DeviceKind::Partition)
        .collect();
    if parts.is_empty() {
        findings.push(rules::partition_alignment(
            &rules::PartitionFacts {
                name: top.name.clone(),
                ..Default::default()
            },
            a.stripe,
        ));
    }
    for p in parts {
        let q = queue_of(st, p);
        findings.push(rules::partition_alignment(
            &rules::PartitionFacts {
                name: p.name.clone(),
                start_sector: p.start_sectors,
                alignment_offset: p.alignment_offset_bytes,
                physical_block_size: q.and_then(|q| q.physical_block_size_bytes),
                minimum_io_size: q.and_then(|q| q.minimum_io_size_bytes),
                optimal_io_size: q.and_then(|q| q.optimal_io_size_bytes),
            },
            a.stripe,
        ));
    }
    // Filesystem geometry from the superblock.
    let dev_path = if m.source.starts_with("/dev/") {
        PathBuf::from(&m.source)
    } else {
        PathBuf::from(&top.node)
    };
    if m.fstype == "xfs" || m.fstype.starts_with("ext") {
        match FileSource::open(&dev_path).and_then(|src| dbio_storage::fs::probe(&src)) {
            Ok(Some(sb)) => {
                let (su, sw, block) = match &sb {
                    Superblock::Xfs(x) => (x.su_bytes(), x.sw_bytes(), x.block_size as u64),
                    Superblock::Ext(e) => (e.su_bytes(), e.sw_bytes(), e.block_size as u64),
                    Superblock::Lvm2(_) => (0, 0, 0),
                };
                let tq = queue_of(st, top);
                let (mi, op) = (tq.and_then(|q| q.minimum_io_size_bytes), tq.and_then(|q| q.optimal_io_size_bytes));
                let kernel_su = mi.filter(|&v| v > 4096);
                let kernel_dd = match (mi, op) {
                    (Some(mi), Some(op)) if mi > 4096 && op >= mi && op % mi == 0 => Some((op / mi) as u32),
                    _ => None,
                };
                let (expected_su, expected_dd, source) = if a.stripe.is_some() {
                    (a.stripe, data_disks, "from --stripe/--disks/--raid".to_string())
                } else {
                    (kernel_su, kernel_dd, format!("kernel minimum_io_size/optimal_io_size of {}", top.name))
                };
                findings.push(rules::fs_geometry(&GeometryFacts { name: mp.to_string(), fstype: sb.name(), su_bytes: su, sw_bytes: sw, block_bytes: block, device: dev_path.display().to_string(), expected_su, expected_data_disks: expected_dd, source }));
            }
            Ok(None) => findings.push(Finding::new("fs.geometry", mp, Status::Unknown, format!("no XFS or ext superblock at the start of {}", dev_path.display()), "The stripe geometry lives in the superblock.")),
            Err(e) => findings.push(
                Finding::new("fs.geometry", mp, Status::Unknown, format!("cannot read the superblock of {}: {e}", dev_path.display()), "The stripe geometry lives in the superblock.")
                    .fix(if is_root() { "the device node cannot be opened here (a container without access to it?); run dbio check where the device is readable" } else { "run dbio check as root (it opens the device read-only)" }),
            ),
        }
    }
    // LVM snapshots over this LV.
    if let (Some(uuid), Some(name)) = (&top.dm_uuid, &top.dm_name) {
        if uuid.starts_with("LVM-") {
            if let Some((vg, lv)) = rules::split_dm_lvm_name(name) {
                let list = lvs.get_or_insert_with(run_lvs);
                match list {
                    Ok(l) => findings.push(rules::lvm_snapshots(mp, &vg, &lv, l)),
                    Err(e) => findings.push(Finding::new(
                        "lvm.snapshot",
                        mp,
                        Status::Unknown,
                        e.clone(),
                        "Snapshots slow reads of their origin as the COW area fills.",
                    )),
                }
            }
        }
    }
    // LVM: where the data area of each PV under an LV starts on its disk.
    if top.dm_subsystem.as_deref() == Some("LVM") {
        for pv in top.slaves.iter().filter_map(|n| st.device(n)) {
            let label =
                FileSource::open(Path::new(&pv.node)).and_then(|src| dbio_storage::fs::probe(&src));
            match label {
                Ok(Some(Superblock::Lvm2(l))) => {
                    let q = queue_of(st, pv);
                    let (grain, name) = match (
                        a.stripe,
                        q.and_then(|q| q.optimal_io_size_bytes).filter(|&v| v > 0),
                        q.and_then(|q| q.minimum_io_size_bytes)
                            .filter(|&v| v > 4096),
                    ) {
                        (Some(s), _, _) => (
                            s,
                            format!("stripe unit {}", dbio_storage::align::size_arg(s)),
                        ),
                        (None, Some(o), _) => (o, format!("optimal_io_size {o}")),
                        (None, None, Some(m)) => (m, format!("minimum_io_size {m}")),
                        _ => (1 << 20, "1 MiB".to_string()),
                    };
                    let start = pv.start_sectors.unwrap_or(0) * 512;
                    findings.push(rules::pv_alignment(
                        &pv.name,
                        start,
                        l.pe_start_bytes,
                        grain,
                        &name,
                    ));
                }
                Ok(_) => {}
                Err(e) => findings.push(Finding::new(
                    "lvm.pe_start",
                    &pv.name,
                    Status::Unknown,
                    format!("cannot read the PV label on {}: {e}", pv.node),
                    "The PV label says where LVM's data area starts.",
                )),
            }
        }
    }
    for d in leaves {
        if !disks_done.insert(d.name.clone()) {
            continue;
        }
        stack_disks.push(d.name.clone());
        let q = queue_facts(d);
        findings.push(rules::scheduler(&q));
        findings.push(rules::nr_requests(&q));
        findings.push(rules::read_ahead(&q));
        findings.push(rules::write_cache(&q));
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
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
    type Plan<'a> = (&'a [&'a str], Tool, Vec<Vec<String>>);
    let plans: Vec<Plan> = vec![
        (
            &["MegaCli64", "MegaCli", "megacli"],
            Tool::Megacli,
            vec![
                vec!["-AdpAllInfo".into(), "-aALL".into(), "-NoLog".into()],
                vec![
                    "-LDInfo".into(),
                    "-Lall".into(),
                    "-aALL".into(),
                    "-NoLog".into(),
                ],
                vec!["-AdpBbuCmd".into(), "-aALL".into(), "-NoLog".into()],
            ],
        ),
        (
            &["storcli64", "storcli", "perccli64", "perccli"],
            Tool::StorcliJson,
            vec![
                vec!["/call".into(), "show".into(), "all".into(), "J".into()],
                vec!["/call/vall".into(), "show".into(), "all".into(), "J".into()],
            ],
        ),
        (
            &["ssacli", "hpssacli", "hpacucli"],
            Tool::Ssacli,
            vec![vec![
                "ctrl".into(),
                "all".into(),
                "show".into(),
                "config".into(),
                "detail".into(),
            ]],
        ),
        (
            &["arcconf"],
            Tool::Arcconf,
            vec![vec!["GETCONFIG".into(), "1".into(), "AL".into()]],
        ),
        (
            &["tw_cli", "tw-cli"],
            Tool::TwCli,
            vec![vec!["/c0".into(), "show".into()]],
        ),
        (
            &["omreport"],
            Tool::Omreport,
            vec![
                vec!["storage".into(), "vdisk".into()],
                vec!["storage".into(), "battery".into()],
            ],
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
        for args in runs {
            let label = format!("{} {}", bin.display(), args.join(" "));
            match Command::new(&bin).args(&args).output() {
                Ok(o) => {
                    let out = String::from_utf8_lossy(&o.stdout);
                    match raid::parse_as(tool, &out, &label) {
                        Ok(r) => reports.push(r),
                        Err(e) => {
                            let mut msg = format!("{label} exited with {}: {e}", o.status);
                            let err = String::from_utf8_lossy(&o.stderr);
                            if !err.trim().is_empty() {
                                msg.push_str(&format!("; stderr: {}", raid::first_lines(&err)));
                            }
                            findings.push(Finding::new("raid.tool", &format!("raid ({})", tool.name()), Status::Unknown, msg, "The controller tool is installed but its output could not be used, so the cache and battery state is unknown."));
                        }
                    }
                }
                Err(e) => findings.push(Finding::new(
                    "raid.tool",
                    &format!("raid ({})", tool.name()),
                    Status::Unknown,
                    format!("cannot run {label}: {e}"),
                    "The controller tool is installed but could not be run.",
                )),
            }
        }
    }
}
