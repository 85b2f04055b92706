//! Adaptec/Microsemi arcconf: `arcconf GETCONFIG 1 AL`. The logical device's
//! `Write-cache setting` is the configured policy (`Enabled (write-back) when protected by
//! battery/ZMM`, `Enabled (write-back)`, `Disabled (write-through)`), `Write-cache status`
//! what it does now (`On`, `Off`, `Off (...)`).

use super::{
    battery_state_word, kv, parse_mem, parse_strip, Battery, Controller, VirtualDrive, WritePolicy,
};

/// Parses arcconf GETCONFIG output.
pub fn parse(text: &str) -> (Vec<Controller>, Vec<String>) {
    let mut c = Controller {
        id: "1".into(),
        ..Default::default()
    };
    let mut section = String::new();
    let mut vd: Option<VirtualDrive> = None;
    let mut any_drive_wc: Option<bool> = None;
    let mut no_battery_wc = false;
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
                // SmartRAID/SmartHBA (arcconf 3.x): one setting per logical device.
                "caching" => {
                    d.configured_write = Some(if v.to_ascii_lowercase().starts_with("enabled") {
                        WritePolicy::WriteBack
                    } else {
                        WritePolicy::WriteThrough
                    });
                    d.evidence.push(t.to_string());
                }
                "write-cache mode" if v.eq_ignore_ascii_case("not supported") => {
                    // No cache on this controller (IBM ServeRAID 8k-l): write-through by design.
                    d.configured_write = Some(WritePolicy::WriteThrough);
                    d.current_write = Some(WritePolicy::WriteThrough);
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
        if section.contains("battery")
            || section.contains("zmm")
            || section.contains("backup unit")
            || section.contains("green backup")
        {
            if kl == "status" || kl == "overall backup unit status" || kl == "backup power status" {
                c.battery = Some(Battery {
                    kind: if section.contains("zmm") {
                        "ZMM (flash backup)".into()
                    } else if section.contains("green backup") {
                        "backup power (supercapacitor)".into()
                    } else if section.contains("backup unit") {
                        "cache backup unit".into()
                    } else {
                        "battery".into()
                    },
                    state: if v.eq_ignore_ascii_case("not installed") {
                        super::BatteryState::Missing
                    } else {
                        battery_state_word(v)
                    },
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
            "installed memory" | "cache memory" => c.cache_bytes = parse_mem(v),
            "cache status" if section.contains("cache properties") => {
                c.cache_status = Some(v.to_string());
                if v.to_ascii_lowercase().contains("disabled") {
                    c.cache_disabled = Some(format!("Cache Status: {v}"));
                }
            }
            "no-battery write cache" => {
                no_battery_wc = v.to_ascii_lowercase().starts_with("enabled");
            }
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
    let cache_off = c.cache_disabled.is_some();
    let cache_known = c.cache_status.is_some();
    for v in &mut c.virtual_drives {
        if v.current_write.is_none() && cache_known {
            // The controller's cache status is the current state of every device it caches.
            v.current_write = if cache_off {
                Some(WritePolicy::WriteThrough)
            } else {
                v.configured_write
            };
            if cache_off {
                v.cache_disabled_reason = c.cache_disabled.clone();
            }
        }
        if no_battery_wc && v.configured_write.is_some_and(WritePolicy::is_write_back) {
            v.write_back_on_bad_battery = true;
            v.evidence.push("No-Battery Write Cache: Enabled".into());
        }
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
