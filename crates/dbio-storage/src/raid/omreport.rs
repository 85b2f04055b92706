//! Dell OpenManage: `omreport storage vdisk`, `omreport storage battery`, `omreport
//! storage controller` (model, cache memory, status, patrol read) and `omreport storage
//! pdisk` (physical disks: state, status, predicted failure). The vdisk
//! `Write Policy` is the configured policy; omreport does not print the current one, so a
//! fallback is inferred from the battery state (PERC controllers switch write-back virtual
//! disks to write-through while the battery learns, charges, fails or is missing).

use super::model::{
    battery_state_word as battery_state, kv, parse_mem, parse_strip, Battery, BatteryState,
    Controller, PhysicalDrive, VirtualDrive, WritePolicy,
};

/// `omreport storage pdisk`: one physical disk. Its `State` (`Online`, `Ready`, `Non-RAID`,
/// `Failed`, `Rebuilding`...) is the drive state; a `Status` that is not `Ok` comes first
/// (`Non-Critical: Online`, `Critical: Online`), and `Failure Predicted: Yes` is a
/// predicted failure.
fn pdisk(get: &dyn Fn(&str) -> Option<String>) -> Option<PhysicalDrive> {
    let id = get("ID")?;
    let state = get("State").unwrap_or_default();
    let status = get("Status").unwrap_or_default();
    let mut evidence = vec![
        format!("ID : {id}"),
        format!("Status : {status}"),
        format!("State : {state}"),
    ];
    let predicted = get("Failure Predicted");
    if let Some(p) = &predicted {
        evidence.push(format!("Failure Predicted : {p}"));
    }
    let write_cache = get("Device Write Cache").and_then(|w| {
        let on = match w.to_ascii_lowercase().as_str() {
            "enabled" => Some(true),
            "disabled" => Some(false),
            _ => None,
        };
        if on.is_some() {
            evidence.push(format!("Device Write Cache : {w}"));
        }
        on
    });
    let state = if status.is_empty() || status.eq_ignore_ascii_case("ok") {
        state
    } else {
        format!("{status}: {state}")
    };
    Some(PhysicalDrive {
        id,
        state: Some(state),
        failure_predicted: predicted.is_some_and(|p| p.eq_ignore_ascii_case("yes")),
        write_cache,
        evidence,
        ..Default::default()
    })
}

fn flush(ctrls: &mut Vec<Controller>, ctrl: &str, block: &mut Vec<(String, String)>) {
    if block.is_empty() {
        return;
    }
    let b = std::mem::take(block);
    let get = |k: &str| b.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
    let idx = match ctrls.iter().position(|c| c.id == ctrl) {
        Some(i) => i,
        None => {
            ctrls.push(Controller {
                id: ctrl.to_string(),
                model: Some(ctrl.to_string()),
                ..Default::default()
            });
            ctrls.len() - 1
        }
    };
    let c = &mut ctrls[idx];
    let is_pdisk = get("Failure Predicted").is_some()
        || get("Name").is_some_and(|n| n.starts_with("Physical Disk"));
    if is_pdisk {
        if let Some(d) = pdisk(&get) {
            c.physical_drives.push(d);
        }
    } else if let Some(wp) = get("Write Policy") {
        // The vdisk's own health: `Status` Critical (bad blocks, a failed member) is a fault,
        // Non-Critical a problem, whatever its `State` says (`Ready`).
        if let Some(st) = get("Status").filter(|s| !s.eq_ignore_ascii_case("ok")) {
            let mut what = format!(
                "vdisk {} {}: Status {st}, State {}",
                get("ID").unwrap_or_default(),
                get("Name").unwrap_or_default(),
                get("State").unwrap_or_default()
            );
            if let Some(b) =
                get("Virtual Disk Bad Blocks").filter(|b| b.eq_ignore_ascii_case("yes"))
            {
                what.push_str(&format!(", Virtual Disk Bad Blocks: {b}"));
            }
            if st.eq_ignore_ascii_case("critical") || st.eq_ignore_ascii_case("non-recoverable") {
                c.faults.push(what);
            } else {
                c.problems.push(what);
            }
        }
        let wl = wp.to_ascii_lowercase();
        let w = if wl.contains("force") {
            WritePolicy::AlwaysWriteBack
        } else if wl.contains("back") {
            WritePolicy::WriteBack
        } else {
            WritePolicy::WriteThrough
        };
        let mut evidence = vec![format!("Write Policy : {wp}")];
        let read_ahead = get("Read Policy").map(|r| {
            evidence.push(format!("Read Policy : {r}"));
            let r = r.to_ascii_lowercase();
            !r.contains("no read ahead") && r.contains("read ahead")
        });
        let dcp = get("Disk Cache Policy").and_then(|d| {
            evidence.push(format!("Disk Cache Policy : {d}"));
            match d.to_ascii_lowercase().as_str() {
                "enabled" => Some(true),
                "disabled" => Some(false),
                _ => None,
            }
        });
        c.virtual_drives.push(VirtualDrive {
            id: get("ID").unwrap_or_else(|| c.virtual_drives.len().to_string()),
            name: get("Name"),
            raid_level: get("Layout").map(|l| l.trim_start_matches("RAID-").to_string()),
            size: get("Size"),
            state: get("State"),
            configured_write: Some(w),
            current_write: None,
            current_inferred: true,
            write_back_on_bad_battery: w == WritePolicy::AlwaysWriteBack,
            read_ahead,
            drive_write_cache: dcp,
            stripe_bytes: get("Stripe Element Size")
                .or_else(|| get("Strip Element Size"))
                .and_then(|s| parse_strip(&s)),
            os_device: get("Device Name"),
            evidence,
            ..Default::default()
        });
    } else if let Some(state) = get("State").filter(|_| {
        get("Learn State").is_some()
            || get("Recharge Count").is_some()
            || get("Name").is_some_and(|n| n.contains("Battery"))
    }) {
        let learn = get("Learn State").unwrap_or_default();
        let ll = learn.to_ascii_lowercase();
        let mut evidence = vec![format!("State : {state}")];
        if !learn.is_empty() {
            evidence.push(format!("Learn State : {learn}"));
        }
        if let Some(s) = get("Status") {
            evidence.push(format!("Status : {s}"));
        }
        let mut st = battery_state(&state);
        if ll == "active" && st == BatteryState::Ok {
            st = BatteryState::Learning;
        }
        if ll == "failed" && st == BatteryState::Ok {
            st = BatteryState::Degraded;
        }
        c.battery = Some(Battery {
            kind: get("Name").unwrap_or_else(|| "Battery".into()),
            state: st,
            state_text: state,
            learn_active: ll == "active" || st == BatteryState::Learning,
            learn_due: ll == "due" || ll == "requested" || ll == "timed out",
            next_learn: get("Next Learn Time"),
            evidence,
        });
    } else if get("Cache Memory Size").is_some() || get("Patrol Read State").is_some() {
        // `omreport storage controller`: the controller itself (model, cache memory, its
        // status, a patrol read or consistency check running); no policy, no battery.
        if let Some(n) = get("Name") {
            c.model = Some(n);
        }
        if let Some(m) = get("Cache Memory Size") {
            let ml = m.to_ascii_lowercase();
            if ml.starts_with("0 ") || ml == "0" {
                c.cache_bytes = Some(0);
            } else if let Some(b) = parse_mem(&m) {
                c.cache_bytes = Some(b);
            }
        }
        if let Some(st) = get("Status") {
            if !st.eq_ignore_ascii_case("ok") {
                c.problems.push(format!("Status : {st}"));
            }
        }
        if let Some(pr) = get("Patrol Read State") {
            let pl = pr.to_ascii_lowercase();
            if pl == "active" || pl == "running" || pl.contains("progress") {
                c.background.push(format!("patrol read {pr}"));
            }
        }
    }
}

/// Parses omreport storage vdisk/battery output, in the default `key : value` layout or
/// in `-fmt ssv` (a `ID;Status;Name;...` header, then one `;`-separated row per device).
pub fn parse(text: &str) -> (Vec<Controller>, Vec<String>) {
    let mut ctrls = Vec::new();
    let mut ctrl = String::from("controller");
    let mut block: Vec<(String, String)> = Vec::new();
    let mut ssv_header: Option<Vec<String>> = None;
    for raw in text.lines() {
        let t = raw.trim();
        if t.is_empty() {
            flush(&mut ctrls, &ctrl, &mut block);
            ssv_header = None;
            continue;
        }
        if t.starts_with("ID;") {
            flush(&mut ctrls, &ctrl, &mut block);
            ssv_header = Some(t.split(';').map(|h| h.trim().to_string()).collect());
            continue;
        }
        if let Some(h) = &ssv_header {
            if t.contains(';') {
                for (k, v) in h.iter().zip(t.split(';')) {
                    block.push((k.clone(), v.trim().to_string()));
                }
                flush(&mut ctrls, &ctrl, &mut block);
                continue;
            }
        }
        if let Some(name) = t
            .strip_prefix("List of Virtual Disks on Controller ")
            .or_else(|| t.strip_prefix("List of Physical Disks on Controller "))
        {
            flush(&mut ctrls, &ctrl, &mut block);
            ctrl = name.trim().to_string();
            continue;
        }
        if let Some(name) = t.strip_prefix("Controller ") {
            if !t.contains(':') {
                flush(&mut ctrls, &ctrl, &mut block);
                ctrl = name.trim().to_string();
                continue;
            }
        }
        if let Some((k, v)) = kv(t, ':') {
            if k == "ID" && block.iter().any(|(key, _)| key == "ID") {
                flush(&mut ctrls, &ctrl, &mut block);
            }
            block.push((k.to_string(), v.to_string()));
        }
    }
    flush(&mut ctrls, &ctrl, &mut block);
    (ctrls, Vec::new())
}
