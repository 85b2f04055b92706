//! RAID-controller rules: cache and write policy, battery or flash module, drive caches,
//! virtual-drive state, for every parsed tool's output.

use crate::raid::{
    Battery, BatteryState, Controller, PhysicalDrive, RaidReport, Tool, VirtualDrive, WritePolicy,
};
use dbio_schema::check::{Finding, Labels, Status};

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

/// All RAID rules for one parsed report. The policy (docs/check.md):
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
    // A controller listing (`tw_cli show`, `MegaCli -AdpAllInfo` without a BBU line): no
    // controller in it has a volume, a drive or a battery.
    let listing = r.controllers.iter().all(|c| {
        c.virtual_drives.is_empty() && c.physical_drives.is_empty() && c.battery.is_none()
    });
    for c in &r.controllers {
        let first = out.len();
        let no_cache = c.cache_bytes == Some(0);
        let ctl_dev = match &c.model {
            Some(m) if !ctl_id(c).contains(m.as_str()) => format!("{tool} {} ({m})", ctl_id(c)),
            _ => format!("{tool} {}", ctl_id(c)),
        };
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
            } else if let (Some(bytes), None) = (c.cache_bytes, &c.battery) {
                // A controller listing alone (`omreport storage controller`): judged on what
                // it shows, with the commands that complete the picture.
                out.push(Finding::new(
                    "raid.cache",
                    &ctl_dev,
                    Status::Ok,
                    format!("{} MiB of cache memory; the virtual drives' write policy and the battery are not in this output (`{pol_cmd}` and `{bat_cmd}` show them)", bytes >> 20),
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
        for fault in &c.faults {
            out.push(
                Finding::new(
                    "raid.controller",
                    &ctl_dev,
                    Status::Crit,
                    fault.clone(),
                    "The controller reports a failed array or a defunct drive: the data on it is degraded or already lost, and one more failure can lose the array.",
                )
                .evidence([fault.clone()])
                .fix("replace the failed disk, let the array rebuild, and take a backup now"),
            );
        }
        out.extend(drive_rules(tool, c, &ctl_dev));
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
            out.push(battery_finding(r, c, b, &ctl_dev));
        }
        for v in &c.virtual_drives {
            out.extend(vd_findings(r, c, v));
        }
        if out.len() == first && listing {
            // A controller listing with nothing else (`tw_cli show`, `MegaCli -AdpAllInfo`
            // without its BBU line): seen, nothing to judge, and the commands that add it.
            out.push(Finding::new(
                "raid.controller",
                &ctl_dev,
                Status::Ok,
                format!("controller listed; its virtual drives and battery are not in this output (`{pol_cmd}` and `{bat_cmd}` show them)"),
                "Reported by the tool.",
            ));
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

/// The one drive write cache rule, for every tool: WARN, with the lines that show it.
fn drive_cache_finding(dev: &str, evidence: Vec<String>) -> Finding {
    Finding::new("raid.drive_cache", dev, Status::Warn, "drive write caches are enabled behind the controller", "A disk's own write cache is not protected by the controller battery: on power loss, writes the controller (or, on an HBA, the kernel) believes are on disk are lost, unless the drives have power-loss protection (enterprise SSDs with capacitors).")
        .evidence(evidence)
        .fix("MegaCli -LDSetProp -DisDskCache -LALL -aALL; storcli /cN/vall set pdcache=off; ssacli ctrl slot=N modify drivewritecache=disable; arcconf SETCACHE 1 DEVICEALL WT (or keep it on only for drives with power-loss protection)")
}

/// How a virtual drive's state word is judged (the policy table in docs/check.md): the array
/// is whole (OK), doing a background verify or initialisation (ADVICE), impacted (arcconf:
/// redundancy not built yet) or rebuilding (WARN, as check_raid's `resync`), degraded, failed
/// or offline (CRIT, as check_raid and megaclisas-status), anything else WARN.
fn vd_state_status(sl: &str) -> (Status, &'static str) {
    const WHY_DEGRADED: &str = "A degraded array has lost its redundancy: one more disk failure loses the data, and every read of the missing disk's blocks is rebuilt from the others (slower).";
    // cciss_vol_status: a replacement drive is in, the rebuild has not begun: still degraded.
    if sl.starts_with("ready for recovery") {
        return (Status::Crit, WHY_DEGRADED);
    }
    if ["optimal", "optl", "ok", "ready", "online", "okay"]
        .iter()
        .any(|w| sl == *w || sl.starts_with(&format!("{w} ")))
    {
        (Status::Ok, "")
    } else if sl.starts_with("impacted") {
        // arcconf: the array is being built or verified and its redundancy is not whole yet.
        (Status::Warn, "An impacted array has not finished building its redundancy (build/verify under way): until it has, a disk failure can lose data.")
    } else if background_state(sl) {
        (Status::Advice, "A background verify or initialisation competes with the database for disk time until it ends; the array is whole.")
    } else if sl.contains("rebuild")
        || sl.contains("rbld")
        || sl.contains("recovering") && !sl.contains("interim")
    {
        (Status::Warn, "A rebuilding array is not redundant until the rebuild ends, and rebuild I/O competes with the database.")
    } else if sl.contains("fail")
        || sl.contains("offline")
        || sl.contains("ofln")
        || sl.contains("degrad")
        || sl.contains("dgrd")
        || sl.contains("pdgd")
        || sl.contains("interim recovery")
        || sl.contains("inoperable")
        || sl.contains("critical")
    {
        (Status::Crit, WHY_DEGRADED)
    } else {
        (
            Status::Warn,
            "The array is not optimal: the tool's state word says it is not whole or not idle.",
        )
    }
}

/// How a physical drive's state word is judged: in use or ready (OK), rebuilding or copying
/// back (WARN), failed, offline, missing, unconfigured bad, defunct or degraded (CRIT, as
/// check_raid), anything else WARN.
fn drive_state_status(sl: &str) -> Status {
    let ok = [
        "online",
        "onln",
        "ok",
        "optimal",
        "hotspare",
        "hot spare",
        "hot-spare",
        "dedicated hot-spare",
        "global hot-spare",
        "ghs",
        "dhs",
        "spare",
        "ready",
        "non-raid",
        "unconfigured(good)",
        "ugood",
        "jbod",
        "raw",
        "verifying",
        "verify-paused",
    ];
    if ok.iter().any(|w| {
        sl == *w
            || sl.starts_with(&format!("{w},"))
            || sl.starts_with(&format!("{w} "))
            || sl.starts_with(&format!("{w}("))
    }) {
        Status::Ok
    } else if sl.contains("rebuild")
        || sl.contains("rbld")
        || sl.contains("copyback")
        || sl.contains("cpybck")
    {
        Status::Warn
    } else if sl.contains("fail")
        || sl.contains("offline")
        || sl.contains("ofln")
        || sl.contains("offln")
        || sl.contains("missing")
        || sl.contains("msng")
        || sl.contains("ubunsp")
        || sl.contains("unconfigured(bad)")
        || sl.contains("ubad")
        || sl.contains("defunct")
        || sl.contains("degraded")
        || sl.contains("error")
        || sl.starts_with("critical")
    {
        Status::Crit
    } else {
        Status::Warn
    }
}

/// The physical drives of one controller: each drive in a bad state, each drive whose
/// counters predict a failure, and one OK line for the drives that are fine.
fn drive_rules(tool: &str, c: &Controller, ctl_dev: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut fine: Vec<String> = Vec::new();
    for d in &c.physical_drives {
        let dev = format!("{tool} {} drive {}", ctl_id(c), d.id);
        let state = d.state.as_deref().unwrap_or("");
        let st = drive_state_status(&state.to_ascii_lowercase());
        if st != Status::Ok {
            out.push(
                Finding::new(
                    "raid.drive_state",
                    &dev,
                    st,
                    format!("drive {} {state}", d.id),
                    if st == Status::Crit {
                        "A failed, missing, offline or bad drive has left its array (or cannot be used as a spare): the array runs degraded or the spare is gone."
                    } else {
                        "A drive that is rebuilding or in an unknown state is not yet a full member of its array."
                    },
                )
                .evidence(d.evidence.iter().cloned())
                .fix("replace the drive (MegaCli -PdReplaceMissing / storcli /cN/eE/sS set good, then rebuild) and check that the array rebuilds"),
            );
        }
        let mut signs = Vec::new();
        if let Some(n) = d.predictive_failures.filter(|n| *n > 0) {
            signs.push(format!("predictive failure count {n}"));
        }
        if d.smart_alert {
            signs.push("S.M.A.R.T alert flagged by the drive".to_string());
        }
        if d.failure_predicted {
            signs.push("failure predicted".to_string());
        }
        if let Some(n) = d.media_errors.filter(|n| *n > 0) {
            signs.push(format!("{n} media errors"));
        }
        if !signs.is_empty() {
            out.push(
                Finding::new(
                    "raid.drive_errors",
                    &dev,
                    Status::Warn,
                    format!("drive {} ({}): {}", d.id, if state.is_empty() { "state not shown" } else { state }, signs.join(", ")),
                    "A drive that predicts its own failure or cannot read some of its blocks is the next disk to fail; until it is replaced each bad block is rebuilt from the other disks, slowly, and a second failure in the array loses data.",
                )
                .evidence(d.evidence.iter().cloned())
                .fix("replace the drive while the array is still whole (MegaCli -PDOffline / -PDMarkMissing / -PdReplaceMissing, or storcli /cN/eE/sS set offline then missing), then let it rebuild"),
            );
        } else if st == Status::Ok {
            fine.push(d.id.clone());
        }
    }
    // One drive-cache rule for every family: with no virtual drive to hang it on (an HBA, a
    // drive listing alone), the drives' own caches are judged on the controller.
    let drive_wc: Vec<&PhysicalDrive> = c
        .physical_drives
        .iter()
        .filter(|d| d.write_cache == Some(true))
        .collect();
    let unplaced =
        c.virtual_drives.is_empty() && (!drive_wc.is_empty() || c.drive_write_cache == Some(true));
    if unplaced || !c.drive_cache_groups.is_empty() {
        let mut ev: Vec<String> = drive_wc
            .iter()
            .flat_map(|d| {
                d.evidence
                    .iter()
                    .filter(|l| l.to_ascii_lowercase().contains("write cache"))
                    .map(move |l| format!("drive {}: {l}", d.id))
            })
            .filter(|_| unplaced)
            .collect();
        // Drive groups with their caches on and no virtual drive in this output (storcli
        // TOPOLOGY `PDC` `enbl`).
        ev.extend(c.drive_cache_groups.iter().cloned());
        out.push(drive_cache_finding(ctl_dev, ev));
    }
    if !fine.is_empty() {
        out.push(Finding::new(
            "raid.drive_state",
            ctl_dev,
            Status::Ok,
            format!("{} physical drives without fault ({})", fine.len(), fine.join(", ")),
            "Every drive is in use, a spare or ready, with no predictive failure, S.M.A.R.T alert or media error.",
        ));
    }
    out
}

/// The finding about a controller's battery (or flash module), judged with what the output
/// shows of the cache policy.
fn battery_finding(r: &RaidReport, c: &Controller, b: &Battery, ctl_dev: &str) -> Finding {
    let bat_cmd = battery_command(r.tool);
    let pol_cmd = policy_command(r.tool);
    let no_cache = c.cache_bytes == Some(0);
    let policy_shown = c
        .virtual_drives
        .iter()
        .any(|v| v.configured_write.is_some() || v.current_write.is_some());
    let any_wb = c.virtual_drives.iter().any(|v| {
        v.configured_write.is_some_and(WritePolicy::is_write_back)
            || v.current_write.is_some_and(WritePolicy::is_write_back)
    });
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
    Finding::new("raid.battery", ctl_dev, status, summary, WHY_BATTERY)
        .evidence(ev)
        .fix("schedule learn cycles off-peak and stagger them across servers (MegaCli -AdpBbuCmd -SetBbuProperties; storcli /cN/bbu set learnDelayInterval=N; omconfig storage battery action=delaylearn) and replace a failed battery")
}

/// The findings about one virtual drive: its state, its write policy against the battery,
/// a write-back kept on a bad battery, read-ahead and the drive caches behind it.
fn vd_findings(r: &RaidReport, c: &Controller, v: &VirtualDrive) -> Vec<Finding> {
    let tool = r.tool.short();
    let bat_cmd = battery_command(r.tool);
    let pol_cmd = policy_command(r.tool);
    let bstate = c.battery.as_ref().map(|b| b.state);
    let no_cache = c.cache_bytes == Some(0);
    let mut out = Vec::new();
    let dev = vd_name(tool, c, v);
    if let Some(s) = &v.state {
        let sl = s.to_ascii_lowercase();
        let (st, why) = vd_state_status(&sl);
        let state_fix = if st == Status::Advice {
            "let it finish, or schedule verifies off-peak (tw_cli /cN/uN set autoverify=off and a verify schedule; storcli /cN set cc=...)"
        } else {
            "replace the failed disk and let the array rebuild; until it has rebuilt, one more disk failure loses the array (take a backup now)"
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
                        l.contains("status") || l.contains("VD table") || l.contains("unit table")
                    })
                    .cloned(),
            )
            .fix(state_fix),
        );
    }
    // cciss_vol_status reports no per-volume policy: its cache state is controller-wide.
    if r.tool == crate::raid::Tool::CcissVolStatus {
        return out;
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
        out.push(drive_cache_finding(
            &dev,
            v.evidence
                .iter()
                .filter(|l| {
                    let l = l.to_ascii_lowercase();
                    l.contains("disk cache")
                        || l.contains("drive write cache")
                        || l.contains("physical device write cache")
                        || l.contains("pdc")
                })
                .cloned()
                .collect(),
        ));
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
