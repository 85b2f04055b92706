//! HPE ssacli / hpssacli / hpacucli: `ctrl all show config detail` (also the shorter
//! `ctrl all show status` and `ctrl all show config`). Smart Array has no per-volume
//! write policy: a logical drive writes back when the cache board is present, caching is
//! enabled and part of the cache is given to writes; `Cache Status: Temporarily Disabled`
//! means the controller fell back to write-through.

use super::model::{
    battery_state_word, kv, parse_mem, parse_strip, Battery, BatteryState, Controller,
    PhysicalDrive, VirtualDrive, WritePolicy,
};

/// `physicaldrive 1I:1:1 (port 1I:box 1:bay 1, SAS, 146 GB, OK)` (`show config`) or
/// `physicaldrive 2I:0:1 (port 2I:box 0:bay 1, 1 TB): OK` (`pd all show status`).
fn physical_drive_line(t: &str) -> Option<PhysicalDrive> {
    let rest = t.strip_prefix("physicaldrive ")?;
    let (id, rest) = rest.split_once(' ')?;
    let state = match rest.rsplit_once("): ") {
        Some((_, st)) => st.trim().to_string(),
        None => rest
            .trim()
            .trim_end_matches(')')
            .rsplit(',')
            .next()?
            .trim()
            .to_string(),
    };
    Some(PhysicalDrive {
        id: id.to_string(),
        state: Some(state),
        evidence: vec![t.to_string()],
        ..Default::default()
    })
}

#[derive(Default)]
struct Ctl {
    c: Controller,
    cache_present: Option<bool>,
    cache_status: Option<String>,
    cache_details: Option<String>,
    write_ratio: Option<u32>,
    no_battery_wc: Option<bool>,
    battery_count: Option<u32>,
    battery_status: Option<String>,
    backup_source: Option<String>,
    evidence: Vec<String>,
    vd_caching: Vec<Option<bool>>,
    ctl_status: Option<String>,
}

fn write_percent(v: &str) -> Option<u32> {
    // "10% Read / 90% Write"
    let w = v.split('/').nth(1)?;
    w.trim().split('%').next()?.trim().parse().ok()
}

impl Ctl {
    fn finish(mut self) -> Controller {
        // `show config` (logicaldrive lines only) says nothing about the cache: no policy.
        let cache_known = self.cache_present.is_some()
            || self.cache_status.is_some()
            || self.write_ratio.is_some();
        let present = self.cache_present.unwrap_or(true);
        if !present {
            self.c.cache_bytes = Some(0);
        }
        let hba =
            self.c.model.as_deref().is_some_and(|m| {
                m.starts_with("Smart HBA") || m.starts_with("Dynamic Smart Array")
            });
        if hba && !cache_known {
            self.c.cache_bytes = Some(0);
        }
        if let Some(st) = &self.ctl_status {
            if !st.eq_ignore_ascii_case("ok") {
                self.c.problems.push(format!("Controller Status: {st}"));
            }
        }
        let status = self.cache_status.clone().unwrap_or_else(|| "OK".into());
        let temp_disabled = status.to_ascii_lowercase().contains("temporarily disabled");
        let disabled = status.to_ascii_lowercase().contains("disabled");
        self.c.cache_status = self.cache_status.clone();
        if disabled {
            self.c.cache_disabled = Some(match &self.cache_details {
                Some(d) => format!("Cache Status: {status} ({d})"),
                None => format!("Cache Status: {status}"),
            });
        }
        let battery = match (&self.battery_status, self.battery_count) {
            (Some(s), _) => Some(Battery {
                kind: self
                    .backup_source
                    .clone()
                    .unwrap_or_else(|| "Battery/Capacitor".into()),
                state: battery_state_word(s),
                state_text: s.clone(),
                learn_active: false,
                learn_due: false,
                next_learn: None,
                evidence: self.evidence.clone(),
            }),
            (None, Some(0)) => Some(Battery {
                kind: "Battery/Capacitor".into(),
                state: BatteryState::Missing,
                state_text: "count 0".into(),
                learn_active: false,
                learn_due: false,
                next_learn: None,
                evidence: self.evidence.clone(),
            }),
            // `ctrl all show status` prints "Battery/Capacitor Status" for every fitted
            // battery or capacitor: a cache board with no such line has none. (Only for
            // that short output: the config listings carry a count or a ratio instead.)
            (None, None)
                if self.cache_status.is_some()
                    && self.cache_present.is_none()
                    && self.write_ratio.is_none()
                    && self.c.virtual_drives.is_empty() =>
            {
                Some(Battery {
                    kind: "Battery/Capacitor".into(),
                    state: BatteryState::Missing,
                    state_text: "no Battery/Capacitor Status line, which `ctrl all show status` prints for every fitted one".into(),
                    learn_active: false,
                    learn_due: false,
                    next_learn: None,
                    evidence: self.evidence.clone(),
                })
            }
            _ => None,
        };
        self.c.battery = battery;
        let wb_configured = present && self.write_ratio.is_none_or(|w| w > 0);
        for (i, vd) in self.c.virtual_drives.iter_mut().enumerate() {
            if !cache_known {
                vd.drive_write_cache = self.c.drive_write_cache;
                continue;
            }
            let caching = self.vd_caching.get(i).copied().flatten().unwrap_or(true);
            let configured = if wb_configured && caching {
                WritePolicy::WriteBack
            } else {
                WritePolicy::WriteThrough
            };
            vd.configured_write = Some(configured);
            vd.current_write = Some(if disabled {
                WritePolicy::WriteThrough
            } else {
                configured
            });
            vd.cache_temporarily_disabled = temp_disabled && configured == WritePolicy::WriteBack;
            if disabled {
                vd.cache_disabled_reason = Some(match &self.cache_details {
                    Some(d) => format!("Cache Status: {status} ({d})"),
                    None => format!("Cache Status: {status}"),
                });
            }
            vd.write_back_on_bad_battery = self.no_battery_wc == Some(true);
            vd.drive_write_cache = self.c.drive_write_cache;
            for l in &self.evidence {
                if l.starts_with("Cache")
                    || l.starts_with("No-Battery")
                    || l.starts_with("Drive Write Cache")
                    || l.starts_with("Accelerator")
                {
                    vd.evidence.push(l.clone());
                }
            }
        }
        self.c
    }
}

/// Parses ssacli/hpacucli output.
pub fn parse(text: &str) -> (Vec<Controller>, Vec<String>) {
    let mut out = Vec::new();
    let mut cur: Option<Ctl> = None;
    let mut in_vd = false;
    for raw in text.lines() {
        let t = raw.trim();
        if t.is_empty() {
            continue;
        }
        let indented = raw.starts_with(' ') || raw.starts_with('\t');
        if !indented && t.contains(" in Slot ") {
            if let Some(c) = cur.take() {
                out.push(c.finish());
            }
            let (model, slot) = t.split_once(" in Slot ").expect("checked");
            let slot = slot.split_whitespace().next().unwrap_or("").to_string();
            cur = Some(Ctl {
                c: Controller {
                    id: format!("slot {slot}"),
                    model: Some(model.trim().to_string()),
                    ..Default::default()
                },
                ..Default::default()
            });
            in_vd = false;
            continue;
        }
        let Some(ctl) = cur.as_mut() else { continue };
        // `show config`: "logicaldrive 1 (558.9 GB, RAID 1, OK)"
        if let Some(rest) = t.strip_prefix("logicaldrive ") {
            let (id, rest) = rest.split_once(' ').unwrap_or((rest, ""));
            let inner = rest.trim().trim_start_matches('(').trim_end_matches(')');
            let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
            if ctl.c.virtual_drives.iter().all(|v| v.id != id) {
                ctl.c.virtual_drives.push(VirtualDrive {
                    id: id.to_string(),
                    size: parts.first().map(|s| s.to_string()),
                    raid_level: parts
                        .get(1)
                        .map(|s| s.trim_start_matches("RAID ").to_string()),
                    state: parts.get(2).map(|s| s.to_string()),
                    ..Default::default()
                });
                ctl.vd_caching.push(None);
            }
            continue;
        }
        if let Some(rest) = t.strip_prefix("Logical Drive:") {
            let id = rest.trim().to_string();
            if let Some(i) = ctl.c.virtual_drives.iter().position(|v| v.id == id) {
                // Move it last so the following lines land on it.
                let v = ctl.c.virtual_drives.remove(i);
                let c = ctl.vd_caching.remove(i);
                ctl.c.virtual_drives.push(v);
                ctl.vd_caching.push(c);
            } else {
                ctl.c.virtual_drives.push(VirtualDrive {
                    id,
                    ..Default::default()
                });
                ctl.vd_caching.push(None);
            }
            in_vd = true;
            continue;
        }
        // `show config`: "array B (Failed)": an array the controller reports failed.
        if let Some(rest) = t.strip_prefix("array ") {
            // "(Failed)" alone, or "(SAS, Unused Space: 0 MB, Status: Failed)".
            if let Some((_, inner)) = rest.split_once('(') {
                let parts: Vec<&str> = inner
                    .trim_end_matches(')')
                    .split(',')
                    .map(str::trim)
                    .collect();
                let status = parts
                    .iter()
                    .find_map(|p| p.strip_prefix("Status:").map(str::trim))
                    .or_else(|| (parts.len() == 1).then(|| parts[0]));
                if status.is_some_and(|st| !st.eq_ignore_ascii_case("ok")) {
                    ctl.c.faults.push(format!("array {rest}"));
                }
            }
            in_vd = false;
            continue;
        }
        if let Some(pd) = physical_drive_line(t) {
            ctl.c.physical_drives.push(pd);
            in_vd = false;
            continue;
        }
        if t.starts_with("Array:")
            || t.starts_with("physicaldrive")
            || t.starts_with("Physical Drive:")
            || t.starts_with("Unassigned")
        {
            in_vd = false;
            continue;
        }
        let Some((k, v)) = kv(t, ':') else { continue };
        if in_vd {
            let vd = ctl.c.virtual_drives.last_mut().expect("in a logical drive");
            match k {
                "Size" => vd.size = Some(v.to_string()),
                "Fault Tolerance" => vd.raid_level = Some(v.to_string()),
                "Strip Size" => vd.stripe_bytes = parse_strip(v),
                "Status" => vd.state = Some(v.to_string()),
                "Disk Name" => vd.os_device = Some(v.to_string()),
                "Logical Drive Label" => vd.name = Some(v.to_string()),
                "Caching" => {
                    *ctl.vd_caching.last_mut().expect("pushed with the vd") =
                        Some(v.eq_ignore_ascii_case("enabled"));
                    vd.evidence
                        .push(format!("Logical Drive {}: Caching: {v}", vd.id));
                }
                _ => {}
            }
            continue;
        }
        let mut keep = true;
        match k {
            "Cache Board Present" => ctl.cache_present = Some(v.eq_ignore_ascii_case("true")),
            "Controller Status" => ctl.ctl_status = Some(v.to_string()),
            "Cache Status" => ctl.cache_status = Some(v.to_string()),
            "Cache Status Details" => ctl.cache_details = Some(v.to_string()),
            "Total Cache Size" => {
                // ssacli prints GB without a unit ("4.0"); older hpacucli "1024 MB".
                ctl.c.cache_bytes = if v.chars().all(|c| c.is_ascii_digit() || c == '.') {
                    parse_mem(&format!("{v} GB"))
                } else {
                    parse_mem(v)
                };
                keep = false;
            }
            "Cache Ratio" | "Accelerator Ratio" => ctl.write_ratio = write_percent(v),
            "Drive Write Cache" | "Physical Drive Write Cache Policy" => {
                ctl.c.drive_write_cache = Some(v.eq_ignore_ascii_case("enabled"))
            }
            "No-Battery Write Cache" => ctl.no_battery_wc = Some(v.eq_ignore_ascii_case("enabled")),
            "Battery/Capacitor Count" | "Battery Pack Count" => ctl.battery_count = v.parse().ok(),
            "Battery/Capacitor Status" | "Battery Status" => {
                ctl.battery_status = Some(v.to_string())
            }
            "Cache Backup Power Source" => ctl.backup_source = Some(v.to_string()),
            _ => keep = false,
        }
        if keep {
            ctl.evidence.push(format!("{k}: {v}"));
        }
    }
    if let Some(c) = cur.take() {
        out.push(c.finish());
    }
    (out, Vec::new())
}
