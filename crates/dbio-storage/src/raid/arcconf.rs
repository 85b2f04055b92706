//! Adaptec/Microsemi arcconf: `arcconf GETCONFIG 1 AL`. The logical device's
//! `Write-cache setting` is the configured policy (`Enabled (write-back) when protected by
//! battery/ZMM`, `Enabled (write-back)`, `Disabled (write-through)`), `Write-cache status`
//! what it does now (`On`, `Off`, `Off (...)`).

use super::model::{
    battery_state_word, kv, parse_mem, parse_strip, Battery, Controller, PhysicalDrive,
    VirtualDrive, WritePolicy,
};

/// A `Device #N` block of the physical device section: a drive until the tool says it is
/// an enclosure or a SEP.
#[derive(Default)]
struct Pd {
    d: PhysicalDrive,
    not_a_drive: bool,
}

fn flush_pd(c: &mut Controller, pd: &mut Option<Pd>) {
    if let Some(p) = pd.take().filter(|p| !p.not_a_drive && p.d.state.is_some()) {
        c.physical_drives.push(p.d);
    }
}

/// One `key : value` line of a physical device block; returns the drive write cache setting
/// when the line is one.
fn pd_line(p: &mut Pd, kl: &str, v: &str, t: &str) -> Option<bool> {
    match kl {
        "state" => {
            p.d.state = Some(v.to_string());
            p.d.evidence.push(t.to_string());
        }
        "reported channel,device(t:l)" | "reported channel,device" | "reported location" => {
            p.d.evidence.insert(0, t.to_string())
        }
        "serial number" if !v.is_empty() => p.d.evidence.push(t.to_string()),
        "s.m.a.r.t. warnings" if v.parse::<u64>().unwrap_or(0) > 0 => {
            p.d.smart_alert = true;
            p.d.evidence.push(t.to_string());
        }
        "s.m.a.r.t." if v.eq_ignore_ascii_case("yes") => {
            p.d.smart_alert = true;
            p.d.evidence.push(t.to_string());
        }
        "write cache" => {
            let on = v.to_ascii_lowercase().starts_with("enabled");
            let known = on || v.to_ascii_lowercase().starts_with("disabled");
            if known {
                p.d.write_cache = Some(on);
                if on {
                    p.d.evidence.push(t.to_string());
                }
                return Some(on);
            }
        }
        _ => {}
    }
    None
}

/// A heading line: `Device #N` opens a physical device block, `Device is a ...` says what
/// it is, and the next big section closes it.
fn heading(lower: &str, c: &mut Controller, pd: &mut Option<Pd>) {
    if let Some(n) = lower.strip_prefix("device #") {
        flush_pd(c, pd);
        *pd = Some(Pd {
            d: PhysicalDrive {
                id: format!("device {}", n.trim()),
                ..Default::default()
            },
            not_a_drive: false,
        });
    } else if lower.starts_with("device is a") {
        if let Some(p) = pd.as_mut() {
            p.not_a_drive = lower.contains("enclosure") || lower.contains("sep");
        }
    } else if lower.contains("logical device information")
        || lower.contains("controller information")
        || lower.contains("maxcache")
        || lower.contains("connector information")
    {
        flush_pd(c, pd);
    }
}

/// After the whole output: the controller's cache status is the current policy of every
/// logical device that printed none, `No-Battery Write Cache` marks write-back devices, and
/// the physical drives' write cache is every device's drive cache.
fn finish_vds(c: &mut Controller, any_drive_wc: Option<bool>, no_battery_wc: bool) {
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
    let mut no_battery_wc = false;
    let mut pd: Option<Pd> = None;
    let mut hba_mode: Option<String> = None;
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
            heading(&lower, &mut c, &mut pd);
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
        if let Some(p) = pd.as_mut() {
            if let Some(on) = pd_line(p, &kl, v, t) {
                if !p.not_a_drive {
                    any_drive_wc = Some(any_drive_wc.unwrap_or(false) || on);
                }
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
                        super::model::BatteryState::Missing
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
            "controller mode" if v.to_ascii_lowercase().contains("hba") => {
                hba_mode = Some(t.to_string())
            }
            "installed memory" | "cache memory" => c.cache_bytes = parse_mem(v),
            "cache status" if section.contains("cache properties") => {
                c.cache_status = Some(v.to_string());
                if v.to_ascii_lowercase().contains("disabled") {
                    c.cache_disabled = Some(format!("Cache Status: {v}"));
                }
            }
            "defunct disk drive count" if v.parse::<u64>().unwrap_or(0) > 0 => {
                c.faults.push(format!("Defunct disk drive count: {v}"));
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
    flush_pd(&mut c, &mut pd);
    finish_vds(&mut c, any_drive_wc, no_battery_wc);
    let mut notes = Vec::new();
    if let (Some(mode), true) = (hba_mode, c.virtual_drives.is_empty()) {
        notes.push(format!(
            "controller {} in HBA mode ({mode}): no logical devices, so no controller write cache to judge; the drives are judged on their own",
            c.model.as_deref().unwrap_or("1")
        ));
    }
    (vec![c], notes)
}
