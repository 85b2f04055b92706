//! MegaCli: `-AdpAllInfo -aALL`, `-LDInfo -Lall -aALL` (or `-LdPdInfo -aALL`) and
//! `-AdpBbuCmd -aALL`, alone or concatenated. `Default Cache Policy` is the configured
//! policy, `Current Cache Policy` what the controller does now.

use super::model::{
    battery_state, kv, parse_mem, parse_strip, Battery, BatteryFlags, BatteryState, Controller,
    PhysicalDrive, VirtualDrive, WritePolicy,
};

/// One cache-policy line: (write policy, read-ahead on, write-back on bad BBU).
pub(crate) fn cache_policy(v: &str) -> (Option<WritePolicy>, Option<bool>, bool) {
    let mut write = None;
    let mut ra = None;
    let mut bad_bbu_wb = false;
    for tok in v.split(',').map(str::trim) {
        let t = tok.to_ascii_lowercase();
        match t.as_str() {
            "writeback" => write = Some(WritePolicy::WriteBack),
            "writethrough" => write = Some(WritePolicy::WriteThrough),
            "readaheadnone" | "noreadahead" => ra = Some(false),
            "readahead" | "readadaptive" | "readaheadadaptive" => ra = Some(true),
            "write cache ok if bad bbu" => bad_bbu_wb = true,
            _ => {}
        }
    }
    if bad_bbu_wb && write == Some(WritePolicy::WriteBack) {
        write = Some(WritePolicy::AlwaysWriteBack);
    }
    (write, ra, bad_bbu_wb)
}

/// Turns MegaCli's `Primary-1, Secondary-3, RAID Level Qualifier-0` into `10`.
fn raid_level(v: &str, span_depth: Option<u32>) -> String {
    let num = |key: &str| {
        v.split(',')
            .map(str::trim)
            .find_map(|p| p.strip_prefix(key))
            .and_then(|n| n.trim().parse::<u32>().ok())
    };
    match (num("Primary-"), num("Secondary-")) {
        (Some(p), s) => {
            if (s == Some(3) || span_depth.unwrap_or(1) > 1) && (p == 1 || p == 5 || p == 6) {
                return format!("{}0", p);
            }
            p.to_string()
        }
        _ => v.to_string(),
    }
}

fn adapter_id(line: &str) -> Option<String> {
    let l = line.trim();
    let digits = |s: &str| -> Option<String> {
        let d: String = s
            .trim()
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        if d.is_empty() {
            None
        } else {
            Some(d)
        }
    };
    if let Some(rest) = l.strip_prefix("Adapter #") {
        return digits(rest);
    }
    if let Some(rest) = l.strip_prefix("BBU status for Adapter:") {
        return digits(rest);
    }
    if let Some(rest) = l.strip_prefix("Adapter:") {
        return digits(rest);
    }
    if let Some(rest) = l.strip_prefix("Adapter ") {
        if rest.contains("-- Virtual Drive Information")
            || rest.contains("Get BBU Status Failed")
            || rest.contains("-- Virtual Disk Information")
        {
            return digits(rest);
        }
    }
    None
}

#[derive(Default)]
struct Bbu {
    kind: Option<String>,
    state_text: Option<String>,
    charging: bool,
    learn_active: bool,
    learn_due: bool,
    missing: bool,
    replace: bool,
    degraded: bool,
    next_learn: Option<String>,
    evidence: Vec<String>,
    seen: bool,
    flags_seen: bool,
}

impl Bbu {
    fn finish(self) -> Option<Battery> {
        if !self.seen {
            return None;
        }
        let state = battery_state(&BatteryFlags {
            state_word: self.state_text.clone(),
            learn_active: self.learn_active,
            charging: self.charging,
            missing: self.missing,
            replace: self.replace,
            degraded: self.degraded,
            flags_seen: self.flags_seen,
        });
        let mut text = self
            .state_text
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| format!("{state:?}"));
        let why = match state {
            BatteryState::Missing if self.missing => Some("Battery Pack Missing: Yes"),
            BatteryState::Failed if self.replace => Some("replacement required / isSOHGood: No"),
            BatteryState::Learning if self.learn_active => Some("Learn Cycle Active: Yes"),
            BatteryState::Charging if self.charging => Some("Charging Status: Charging"),
            BatteryState::Degraded if self.degraded => {
                Some("Remaining Capacity Low or pack about to fail")
            }
            _ => None,
        };
        if let Some(w) = why {
            if !text
                .to_ascii_lowercase()
                .contains(&format!("{state:?}").to_ascii_lowercase())
            {
                text = format!("Battery State: {text}, {w}");
            }
        }
        Some(Battery {
            kind: self.kind.unwrap_or_else(|| "BBU".into()),
            state,
            state_text: text,
            learn_active: self.learn_active,
            learn_due: self.learn_due,
            next_learn: self.next_learn,
            evidence: self.evidence,
        })
    }
}

impl Bbu {
    /// One `key: value` line of `-AdpBbuCmd`: the state word, the flags, and the lines that
    /// back them as evidence (the state lines and every flag that is raised).
    fn apply(&mut self, k: &str, v: &str, line: &str) {
        let yes = v.eq_ignore_ascii_case("yes");
        let mut keep = true;
        if matches!(
            k,
            "Learn Cycle Active" | "Battery Pack Missing" | "Battery Replacement required"
        ) {
            self.flags_seen = true;
        }
        match k {
            "BatteryType" => self.kind = Some(v.to_string()),
            "Battery State" | "Battery state" => self.state_text = Some(v.to_string()),
            "Charging Status" => self.charging = v.eq_ignore_ascii_case("charging"),
            "Learn Cycle Active" => self.learn_active = yes,
            "Learn Cycle Requested" | "Periodic Learn Required" => self.learn_due |= yes,
            "Battery Pack Missing" => self.missing = yes,
            "Battery Replacement required" => self.replace |= yes,
            "isSOHGood" => self.replace |= v.eq_ignore_ascii_case("no"),
            "Remaining Capacity Low" | "Pack is about to fail & should be replaced" => {
                self.degraded |= yes
            }
            "Next Learn time" => self.next_learn = Some(v.to_string()),
            _ => keep = false,
        }
        // Evidence: the state lines and every flag that is raised.
        let flag = match k {
            "Battery State" | "Battery state" => !v.is_empty(),
            "Charging Status" => !v.eq_ignore_ascii_case("none"),
            "isSOHGood" => v.eq_ignore_ascii_case("no"),
            "BatteryType" | "Next Learn time" => false,
            _ => yes,
        };
        if keep && flag {
            self.evidence.push(line.to_string());
        }
    }
}

/// A physical drive being read from `-PDList` or `-LdPdInfo`: its enclosure until the slot
/// number names it.
#[derive(Default)]
struct Pd {
    encl: Option<String>,
    d: PhysicalDrive,
}

impl Pd {
    /// One `key: value` line of a drive section.
    fn apply(&mut self, k: &str, v: &str, line: &str) {
        let n = || v.trim().parse::<u64>().ok();
        match k {
            "Slot Number" => {
                self.d.id = match &self.encl {
                    Some(e) if e != "N/A" => format!("{e}:{v}"),
                    _ => format!("slot {v}"),
                }
            }
            "Firmware state" => {
                self.d.state = Some(v.to_string());
                self.d.evidence.push(line.to_string());
            }
            "Media Error Count" => {
                self.d.media_errors = n();
                if n().unwrap_or(0) > 0 {
                    self.d.evidence.push(line.to_string());
                }
            }
            "Other Error Count" => {
                self.d.other_errors = n();
                if n().unwrap_or(0) > 0 {
                    self.d.evidence.push(line.to_string());
                }
            }
            "Predictive Failure Count" => {
                self.d.predictive_failures = n();
                if n().unwrap_or(0) > 0 {
                    self.d.evidence.push(line.to_string());
                }
            }
            "Drive has flagged a S.M.A.R.T alert" => {
                self.d.smart_alert = v.eq_ignore_ascii_case("yes");
                if self.d.smart_alert {
                    self.d.evidence.push(line.to_string());
                }
            }
            "Drive's write cache" => {
                self.d.write_cache = match v.to_ascii_lowercase().as_str() {
                    "enabled" => Some(true),
                    "disabled" => Some(false),
                    _ => None,
                };
                self.d.evidence.push(line.to_string());
            }
            "Inquiry Data" => {
                let name = v.split_whitespace().collect::<Vec<_>>().join(" ");
                if !name.is_empty() {
                    self.d.evidence.insert(0, format!("Inquiry Data: {name}"));
                }
            }
            _ => {}
        }
    }
}

/// Parses MegaCli output.
pub fn parse(text: &str) -> (Vec<Controller>, Vec<String>) {
    let mut ctrls: Vec<Controller> = Vec::new();
    let mut notes = Vec::new();
    let mut cur: Option<usize> = None;
    let mut vd: Option<VirtualDrive> = None;
    let mut span_depth: Option<u32> = None;
    let mut raid_raw: Option<String> = None;
    let mut bbu = Bbu::default();
    let mut bbu_for: Option<usize> = None;
    let mut pd: Option<Pd> = None;

    fn ctrl_index(ctrls: &mut Vec<Controller>, id: &str) -> usize {
        if let Some(i) = ctrls.iter().position(|c| c.id == id) {
            return i;
        }
        ctrls.push(Controller {
            id: id.to_string(),
            ..Default::default()
        });
        ctrls.len() - 1
    }
    let flush_vd = |ctrls: &mut Vec<Controller>,
                    cur: Option<usize>,
                    vd: &mut Option<VirtualDrive>,
                    raid_raw: &mut Option<String>,
                    span: &mut Option<u32>| {
        if let Some(mut v) = vd.take() {
            if let Some(r) = raid_raw.take() {
                v.raid_level = Some(raid_level(&r, *span));
            }
            *span = None;
            let i = cur.unwrap_or_else(|| ctrl_index(ctrls, "0"));
            ctrls[i].virtual_drives.push(v);
        }
    };
    let flush_pd = |ctrls: &mut Vec<Controller>, cur: Option<usize>, pd: &mut Option<Pd>| {
        if let Some(p) = pd
            .take()
            .filter(|p| !p.d.id.is_empty() || p.d.state.is_some())
        {
            let i = cur.unwrap_or_else(|| ctrl_index(ctrls, "0"));
            ctrls[i].physical_drives.push(p.d);
        }
    };
    let flush_bbu = |ctrls: &mut Vec<Controller>, bbu: &mut Bbu, bbu_for: &mut Option<usize>| {
        let b = std::mem::take(bbu);
        if let (Some(i), Some(bat)) = (bbu_for.take(), b.finish()) {
            ctrls[i].battery = Some(bat);
        }
    };

    for raw in text.lines() {
        let line = raw.trim();
        if let Some(id) = adapter_id(line) {
            flush_vd(&mut ctrls, cur, &mut vd, &mut raid_raw, &mut span_depth);
            flush_pd(&mut ctrls, cur, &mut pd);
            flush_bbu(&mut ctrls, &mut bbu, &mut bbu_for);
            let i = ctrl_index(&mut ctrls, &id);
            cur = Some(i);
            if line.starts_with("BBU status for Adapter") {
                bbu_for = Some(i);
                bbu.seen = true;
            }
            if line.contains("Get BBU Status Failed") {
                ctrls[i].battery = Some(Battery {
                    kind: "BBU".into(),
                    state: BatteryState::Missing,
                    state_text: "Get BBU Status Failed".into(),
                    learn_active: false,
                    learn_due: false,
                    next_learn: None,
                    evidence: vec![line.to_string()],
                });
            }
            continue;
        }
        // A drive section: `PD: 0 Information` (-LdPdInfo) or `Enclosure Device ID:` (-PDList,
        // and the first line of a drive under `PD: N Information`).
        let pd_head = line.starts_with("PD:") && line.ends_with("Information");
        if pd_head || line.starts_with("Enclosure Device ID:") {
            let fresh = pd
                .as_ref()
                .is_some_and(|p| p.encl.is_none() && p.d.id.is_empty());
            if pd_head || !fresh {
                flush_vd(&mut ctrls, cur, &mut vd, &mut raid_raw, &mut span_depth);
                flush_pd(&mut ctrls, cur, &mut pd);
                pd = Some(Pd::default());
            }
            if let (Some(p), Some((_, e))) = (pd.as_mut(), kv(line, ':')) {
                if !pd_head {
                    p.encl = Some(e.to_string());
                }
            }
            continue;
        }
        if line.starts_with("Virtual Drive:") || line.starts_with("Virtual Disk:") {
            flush_vd(&mut ctrls, cur, &mut vd, &mut raid_raw, &mut span_depth);
            flush_pd(&mut ctrls, cur, &mut pd);
            let id: String = line
                .split_once(':')
                .map(|x| x.1)
                .unwrap_or("")
                .trim()
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            vd = Some(VirtualDrive {
                id,
                ..Default::default()
            });
            continue;
        }
        let Some((k, v)) = kv(line, ':') else {
            continue;
        };
        if let Some(p) = pd.as_mut() {
            p.apply(k, v, line);
            continue;
        }
        if let Some(d) = vd.as_mut() {
            match k {
                "Name" if !v.is_empty() => d.name = Some(v.to_string()),
                "RAID Level" => raid_raw = Some(v.to_string()),
                "Size" => d.size = Some(v.to_string()),
                "State" => d.state = Some(v.to_string()),
                "Strip Size" | "Stripe Size" => d.stripe_bytes = parse_strip(v),
                "Span Depth" => span_depth = v.parse().ok(),
                "Default Cache Policy" => {
                    let (w, _, bad) = cache_policy(v);
                    d.configured_write = w;
                    d.write_back_on_bad_battery |= bad;
                    d.evidence.push(line.to_string());
                }
                "Current Cache Policy" => {
                    let (w, ra, _) = cache_policy(v);
                    d.current_write = w;
                    d.read_ahead = ra;
                    d.evidence.push(line.to_string());
                }
                "Disk Cache Policy" => {
                    d.drive_write_cache = match v.to_ascii_lowercase().as_str() {
                        "enabled" => Some(true),
                        "disabled" => Some(false),
                        _ => None,
                    };
                    d.evidence.push(line.to_string());
                }
                _ => {}
            }
            continue;
        }
        if bbu_for.is_some() {
            bbu.apply(k, v, line);
            continue;
        }
        if let Some(i) = cur {
            match k {
                "Product Name" => ctrls[i].model = Some(v.to_string()),
                "Memory Size" => ctrls[i].cache_bytes = parse_mem(v),
                "BBU" if ctrls[i].battery.is_none() => {
                    let present = v.eq_ignore_ascii_case("present");
                    ctrls[i].battery = Some(Battery {
                        kind: "BBU".into(),
                        state: if present {
                            BatteryState::Present
                        } else {
                            BatteryState::Missing
                        },
                        state_text: if present {
                            "Present".into()
                        } else {
                            "Absent".into()
                        },
                        learn_active: false,
                        learn_due: false,
                        next_learn: None,
                        evidence: vec![line.to_string()],
                    });
                }
                _ => {}
            }
        }
    }
    flush_vd(&mut ctrls, cur, &mut vd, &mut raid_raw, &mut span_depth);
    flush_pd(&mut ctrls, cur, &mut pd);
    flush_bbu(&mut ctrls, &mut bbu, &mut bbu_for);
    if ctrls.is_empty() {
        notes.push("no 'Adapter' line found".to_string());
    }
    (ctrls, notes)
}

/// True when `text` is `MegaCli -ShowSummary` output: `System`, `Hardware` and `Storage`
/// headings with `ProductName` or `Virtual drive` lines under them.
pub fn is_summary(text: &str) -> bool {
    // A heading alone on its line; a stray byte beside it (read as U+FFFD) does not hide it.
    let heading = |h: &str| {
        text.lines()
            .any(|l| l.trim_matches(|c: char| !c.is_ascii_alphanumeric()) == h)
    };
    heading("Hardware")
        && (heading("Storage") || heading("System"))
        && (text.contains("ProductName") || text.contains("Virtual drive"))
}

/// Parses `MegaCli -ShowSummary -aALL`: the controller's model and status, the BBU status,
/// each physical drive's state and each virtual drive's state and RAID level. It shows no
/// cache policy; the note says which command does.
pub fn parse_summary(text: &str) -> (Vec<Controller>, Vec<String>) {
    let mut c = Controller {
        id: "0".into(),
        ..Default::default()
    };
    let mut section = String::new();
    for raw in text.lines() {
        let t = raw.trim();
        if t.is_empty() || t.starts_with("Exit Code") {
            continue;
        }
        let Some((k, v)) = kv(t, ':') else {
            section = t.to_ascii_lowercase();
            continue;
        };
        match (section.as_str(), k) {
            ("controller", "ProductName") => {
                // "LSI MegaRAID SAS 9266-8i(Bus 0, Dev 0)"
                let m = v.split_once("(Bus").map(|x| x.0).unwrap_or(v).trim();
                c.model = Some(m.to_string());
            }
            ("controller", "Status") if !v.eq_ignore_ascii_case("optimal") => {
                c.problems.push(format!("controller Status: {v}"))
            }
            ("bbu", "Status") => {
                c.battery = Some(Battery {
                    kind: "BBU".into(),
                    state: super::model::battery_state_word(v),
                    state_text: v.to_string(),
                    learn_active: false,
                    learn_due: false,
                    next_learn: None,
                    evidence: vec![format!("BBU Status: {v}")],
                });
            }
            ("pd", "Connector") => {
                // "Port 0 - 3<Internal>: Slot 1"
                let slot = v.rsplit_once(':').map(|x| x.1).unwrap_or(v).trim();
                c.physical_drives.push(PhysicalDrive {
                    id: slot.to_ascii_lowercase(),
                    evidence: vec![t.to_string()],
                    ..Default::default()
                });
            }
            ("pd", "State") => {
                if let Some(d) = c.physical_drives.last_mut() {
                    d.state = Some(v.to_string());
                    d.evidence.push(t.to_string());
                }
            }
            ("virtual drives", "Virtual drive") => {
                // "Target Id 0 ,VD name"
                let id: String = v
                    .trim_start_matches("Target Id")
                    .trim()
                    .chars()
                    .take_while(|ch| ch.is_ascii_digit())
                    .collect();
                c.virtual_drives.push(VirtualDrive {
                    id,
                    evidence: vec![t.to_string()],
                    ..Default::default()
                });
            }
            ("virtual drives", _) => {
                if let Some(d) = c.virtual_drives.last_mut() {
                    match k {
                        "State" => {
                            d.state = Some(v.to_string());
                            d.evidence.push(format!("status: {t}"));
                        }
                        "Size" => d.size = Some(v.to_string()),
                        "RAID Level" => d.raid_level = Some(v.to_string()),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    let notes = vec!["MegaCli -ShowSummary shows the states, not the cache policy: `MegaCli -LDInfo -Lall -aALL` shows the write policy and `MegaCli -AdpBbuCmd -aALL` the battery's details".to_string()];
    (vec![c], notes)
}
