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
use dbio_storage::rules::{self, Finding, GeometryFacts, LvInfo, MountFacts, Status};
use dbio_storage::source::FileSource;
use dbio_storage::sys::{self, MountEntry};
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
        report::render_nagios(&r)
    } else {
        match a.format {
            Format::Text => report::render_text(&r),
            Format::Json => JsonExporter.to_string(&r)?,
            Format::Prometheus => report::render_prometheus(&r),
        }
    };
    crate::output::emit(a.output.as_deref(), bytes.as_bytes())?;
    Ok(if a.nagios { r.status.nagios_code() } else { 0 })
}

fn audit(a: &Args) -> anyhow::Result<Vec<Finding>> {
    let data_disks = a.geometry.data_disks()?;
    let mut findings = Vec::new();
    let only_raid = a.paths.is_empty() && !a.raid_output.is_empty();
    let mut stack_disks: Vec<String> = Vec::new();
    if !only_raid {
        let sysroot = Path::new("/sys");
        let text = std::fs::read_to_string("/proc/self/mountinfo")
            .context("cannot read /proc/self/mountinfo: is /proc mounted?")?;
        let mounts = sys::parse_mountinfo(&text);
        let targets = targets(a, &mounts, sysroot)?;
        let mut disks_done = HashSet::new();
        let mut lvs: Option<Result<Vec<LvInfo>, String>> = None;
        for m in targets {
            audit_mount(
                a,
                data_disks,
                &m,
                sysroot,
                &mut disks_done,
                &mut lvs,
                &mut findings,
                &mut stack_disks,
            );
        }
    }
    // RAID controllers.
    let mut reports: Vec<RaidReport> = Vec::new();
    for f in &a.raid_output {
        match std::fs::read_to_string(f) {
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

fn targets(a: &Args, mounts: &[MountEntry], sysroot: &Path) -> anyhow::Result<Vec<MountEntry>> {
    let mut out: Vec<MountEntry> = Vec::new();
    if a.paths.is_empty() {
        let mut seen = HashSet::new();
        for m in mounts {
            if m.major == 0 || sys::device_dir(sysroot, m.major, m.minor).is_none() {
                continue;
            }
            if seen.insert((m.major, m.minor)) {
                out.push(m.clone());
            }
        }
        return Ok(out);
    }
    for p in &a.paths {
        let c = std::fs::canonicalize(p).map_err(|e| {
            usage(format!(
                "{}: {e}: give an existing file or directory on the filesystem to check",
                p.display()
            ))
        })?;
        let m = sys::mount_for(mounts, &c).with_context(|| {
            format!("{}: no mount in /proc/self/mountinfo holds it", c.display())
        })?;
        if !out.iter().any(|o| o.mountpoint == m.mountpoint) {
            out.push(m.clone());
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

#[allow(clippy::too_many_arguments)]
fn audit_mount(
    a: &Args,
    data_disks: Option<u32>,
    m: &MountEntry,
    sysroot: &Path,
    disks_done: &mut HashSet<String>,
    lvs: &mut Option<Result<Vec<LvInfo>, String>>,
    findings: &mut Vec<Finding>,
    stack_disks: &mut Vec<String>,
) {
    let mp = m.mountpoint.as_str();
    let Some(dir) = sys::device_dir(sysroot, m.major, m.minor) else {
        findings.push(Finding::new(
            "check.stack",
            mp,
            Status::Unknown,
            format!(
                "{} ({}:{}) has no block device in /sys/dev/block",
                m.source, m.major, m.minor
            ),
            "Without the device stack the queue, alignment and geometry rules cannot run.",
        ));
        return;
    };
    let stack = sys::resolve(sysroot, &dir);
    let first_disk_wc = stack
        .disks
        .first()
        .map(|d| sys::queue_facts(sysroot, d))
        .and_then(|q| q.write_cache);
    findings.extend(rules::mount_rules(&MountFacts {
        mountpoint: mp.to_string(),
        source: m.source.clone(),
        fstype: m.fstype.clone(),
        options: m.all_options(),
        size_bytes: fs_size(mp),
        write_cache: first_disk_wc,
    }));
    if stack.partitions.is_empty() {
        findings.push(rules::partition_alignment(
            &rules::PartitionFacts {
                name: stack.top.clone(),
                ..Default::default()
            },
            a.stripe,
        ));
    }
    for p in &stack.partitions {
        findings.push(rules::partition_alignment(p, a.stripe));
    }
    // Filesystem geometry from the superblock.
    let dev_path = if m.source.starts_with("/dev/") {
        PathBuf::from(&m.source)
    } else {
        PathBuf::from(format!("/dev/{}", stack.top))
    };
    if m.fstype == "xfs" || m.fstype.starts_with("ext") {
        match FileSource::open(&dev_path).and_then(|src| dbio_storage::fs::probe(&src)) {
            Ok(Some(sb)) => {
                let (su, sw) = match &sb {
                    Superblock::Xfs(x) => (x.su_bytes(), x.sw_bytes()),
                    Superblock::Ext(e) => (e.su_bytes(), e.sw_bytes()),
                    Superblock::Lvm2(_) => (0, 0),
                };
                let kernel_su = stack.minimum_io_size.filter(|&v| v > 4096);
                let kernel_dd = match (stack.minimum_io_size, stack.optimal_io_size) {
                    (Some(mi), Some(op)) if mi > 4096 && op >= mi && op % mi == 0 => Some((op / mi) as u32),
                    _ => None,
                };
                let (expected_su, expected_dd, source) = if a.stripe.is_some() {
                    (a.stripe, data_disks, "from --stripe/--disks/--raid".to_string())
                } else {
                    (kernel_su, kernel_dd, format!("kernel minimum_io_size/optimal_io_size of {}", stack.top))
                };
                findings.push(rules::fs_geometry(&GeometryFacts { name: mp.to_string(), fstype: sb.name(), su_bytes: su, sw_bytes: sw, expected_su, expected_data_disks: expected_dd, source }));
            }
            Ok(None) => findings.push(Finding::new("fs.geometry", mp, Status::Unknown, format!("no XFS or ext superblock at the start of {}", dev_path.display()), "The stripe geometry lives in the superblock.")),
            Err(e) => findings.push(
                Finding::new("fs.geometry", mp, Status::Unknown, format!("cannot read the superblock of {}: {e}", dev_path.display()), "The stripe geometry lives in the superblock.")
                    .fix(if is_root() { "the device node cannot be opened here (a container without access to it?); run dbio check where the device is readable" } else { "run dbio check as root (it opens the device read-only)" }),
            ),
        }
    }
    // LVM snapshots over this LV.
    if let (Some(uuid), Some(name)) = (&stack.dm_uuid, &stack.dm_name) {
        if uuid.starts_with("LVM-") {
            if let Some((vg, lv)) = sys::split_dm_lvm_name(name) {
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
    for d in &stack.disks {
        if !disks_done.insert(d.clone()) {
            continue;
        }
        stack_disks.push(d.clone());
        let q = sys::queue_facts(sysroot, d);
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
