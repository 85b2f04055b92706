//! Adaptec/Microsemi arcconf: `arcconf GETCONFIG 1 AL`. The logical device's
//! `Write-cache setting` is the configured policy (`Enabled (write-back) when protected by
//! battery/ZMM`, `Enabled (write-back)`, `Disabled (write-through)`), `Write-cache status`
//! what it does now (`On`, `Off`, `Off (...)`).

use super::{
    kv, parse_mem, parse_strip, Battery, BatteryState, Controller, VirtualDrive, WritePolicy,
};

fn battery_state(s: &str) -> BatteryState {
    let t = s.to_ascii_lowercase();
    if t.contains("optimal") || t == "ok" || t.contains("ready") {
        BatteryState::Ok
    } else if t.contains("not installed") || t.contains("not present") || t.contains("missing") {
        BatteryState::Missing
    } else if t.contains("charg") {
        BatteryState::Charging
    } else if t.contains("learn") || t.contains("recondition") {
        BatteryState::Learning
    } else if t.contains("fail") {
        BatteryState::Failed
    } else if t.contains("degraded") || t.contains("low") {
        BatteryState::Degraded
    } else {
        BatteryState::Unknown
    }
}

/// Parses arcconf GETCONFIG output.
pub fn parse(text: &str) -> (Vec<Controller>, Vec<String>) {
    let mut c = Controller {
        id: "1".into(),
        ..Default::default()
    };
    let mut section = String::new();
    let mut vd: Option<VirtualDrive> = None;
    let mut any_drive_wc: Option<bool> = None;
    for raw in text.lines() {
        let t = raw.trim();
        if t.is_empty() || t.chars().all(|ch| ch == '-') {
            continue;
        }
        if t.starts_with("Controllers found:") || t.starts_with("Command completed") {
            continue;
        }
        let lower = t.to_ascii_lowercase();
        if lower.starts_with("logical device number") || lower.starts_with("logical drive number") {
            if let Some(v) = vd.take() {
                c.virtual_drives.push(v);
            }
            let id = t.split_whitespace().last().unwrap_or("").to_string();
            vd = Some(VirtualDrive {
                id,
                ..Default::default()
            });
            section = "logical".into();
            continue;
        }
        let Some((k, v)) = kv(t, ':') else {
            // A heading line.
            section = lower;
            if section.contains("physical device") {
                if let Some(v) = vd.take() {
                    c.virtual_drives.push(v);
                }
            }
            continue;
        };
        let kl = k.to_ascii_lowercase();
        if let Some(d) = vd.as_mut().filter(|_| section == "logical") {
            match kl.as_str() {
                "logical device name" | "logical drive name" if !v.is_empty() => {
                    d.name = Some(v.to_string())
                }
                "raid level" => d.raid_level = Some(v.to_string()),
                "status of logical device" | "status of logical drive" => {
                    d.state = Some(v.to_string())
                }
                "size" => d.size = Some(v.to_string()),
                "stripe-unit size" => d.stripe_bytes = parse_strip(v),
                "read-cache setting" => {
                    d.read_ahead = Some(v.to_ascii_lowercase().starts_with("enabled"));
                    d.evidence.push(t.to_string());
                }
                "write-cache setting" => {
                    let vl = v.to_ascii_lowercase();
                    // "Enabled (write-back)" caches whatever the battery does; "... when
                    // protected by battery/ZMM" only with a working one; older releases print
                    // a bare "Enabled", whose protection the output does not say.
                    d.configured_write = Some(if vl.starts_with("enabled") {
                        if vl.contains("(write-back)") && !vl.contains("when protected") {
                            d.write_back_on_bad_battery = true;
                            WritePolicy::AlwaysWriteBack
                        } else {
                            WritePolicy::WriteBack
                        }
                    } else {
                        WritePolicy::WriteThrough
                    });
                    d.evidence.push(t.to_string());
                }
                "write-cache mode" => {
                    let vl = v.to_ascii_lowercase();
                    d.current_write = if vl.contains("back") {
                        Some(WritePolicy::WriteBack)
                    } else if vl.contains("through") || vl.contains("disabled") {
                        Some(WritePolicy::WriteThrough)
                    } else {
                        d.current_write
                    };
                    d.evidence.push(t.to_string());
                }
                "write-cache status" => {
                    let vl = v.to_ascii_lowercase();
                    d.current_write = Some(if vl.starts_with("on") {
                        WritePolicy::WriteBack
                    } else {
                        WritePolicy::WriteThrough
                    });
                    if vl.starts_with("off") && v.contains('(') {
                        d.cache_disabled_reason = Some(format!("Write-cache status: {v}"));
                    }
                    d.evidence.push(t.to_string());
                }
                _ => {}
            }
            continue;
        }
        if section.contains("battery") || section.contains("zmm") || section.contains("backup unit")
        {
            if kl == "status" || kl == "overall backup unit status" {
                c.battery = Some(Battery {
                    kind: if section.contains("zmm") {
                        "ZMM (flash backup)".into()
                    } else if section.contains("backup unit") {
                        "cache backup unit".into()
                    } else {
                        "battery".into()
                    },
                    state: battery_state(v),
                    state_text: v.to_string(),
                    learn_active: false,
                    learn_due: false,
                    next_learn: None,
                    evidence: vec![format!("{}: {t}", section.trim())],
                });
            }
            continue;
        }
        match kl.as_str() {
            "controller model" => c.model = Some(v.to_string()),
            "installed memory" => c.cache_bytes = parse_mem(v),
            "write cache" if section.contains("device") || raw.starts_with("         ") => {
                let on = v.to_ascii_lowercase().starts_with("enabled");
                any_drive_wc = Some(any_drive_wc.unwrap_or(false) || on);
            }
            _ => {}
        }
    }
    if let Some(v) = vd.take() {
        c.virtual_drives.push(v);
    }
    c.drive_write_cache = any_drive_wc;
    for v in &mut c.virtual_drives {
        v.drive_write_cache = any_drive_wc;
        if let Some(on) = any_drive_wc {
            v.evidence.push(format!(
                "physical device Write Cache: {}",
                if on {
                    "Enabled (write-back) on at least one drive"
                } else {
                    "Disabled (write-through)"
                }
            ));
        }
    }
    (vec![c], Vec::new())
}
