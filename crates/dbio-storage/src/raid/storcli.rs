//! storcli and perccli (the same tool with Dell branding): text output of `/cN show all`,
//! `/cN/vall show all`, `/cN/bbu show all` and `/cN/cv show all`, and the `J` JSON of the
//! same commands. The VD table's Cache column (`RWBD`, `NRWTD`, `RAWBD`) is the current
//! policy; `Write Cache(initial setting)` in the VD properties is the configured one.

use super::model::{
    battery_state, battery_state_word, kv, parse_mem, parse_strip, Battery, BatteryFlags,
    BatteryState, Controller, PhysicalDrive, RaidParseError, VirtualDrive, WritePolicy,
};

/// A drive cache setting as storcli prints it: `PDC` (`enbl`/`dsbl`/`dflt`), `Disk Cache
/// Policy` (`Enabled`/`Disabled`/`Disk's Default`) or a drive's `Write Cache`.
fn drive_cache_word(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "enabled" | "enbl" | "on" | "yes" => Some(true),
        "disabled" | "dsbl" | "off" | "no" => Some(false),
        _ => None,
    }
}

/// `252:4` (or ` :4` with no enclosure) as an `EID:Slt` cell.
fn eid_slot(s: &str) -> bool {
    let Some((e, sl)) = s.split_once(':') else {
        return false;
    };
    !sl.is_empty()
        && sl.chars().all(|c| c.is_ascii_digit())
        && e.chars().all(|c| c.is_ascii_digit() || c == ' ')
}

/// `Drive /c0/e252/s4 ...` -> `252:4`.
fn drive_key_id(key: &str) -> Option<String> {
    let rest = key.strip_prefix("Drive /c")?;
    let (_, rest) = rest.split_once('/')?;
    let path = rest.split_whitespace().next()?;
    let (e, sl) = match path.split_once('/') {
        Some((e, sl)) => (e.trim_start_matches('e'), sl.trim_start_matches('s')),
        None => ("", path.trim_start_matches('s')),
    };
    Some(format!("{e}:{sl}"))
}

fn drive_mut<'a>(c: &'a mut Controller, id: &str) -> &'a mut PhysicalDrive {
    if let Some(i) = c.physical_drives.iter().position(|d| d.id == id) {
        return &mut c.physical_drives[i];
    }
    c.physical_drives.push(PhysicalDrive {
        id: id.to_string(),
        ..Default::default()
    });
    c.physical_drives.last_mut().expect("just pushed")
}

/// One counter or flag of a drive's `State` block (`Media Error Count = 0`, `S.M.A.R.T alert
/// flagged by drive = No`) or its `Write Cache` attribute.
fn drive_prop(d: &mut PhysicalDrive, k: &str, v: &str, line: &str) {
    let n = v.trim().parse::<u64>().ok();
    let raised = match k {
        "Media Error Count" => {
            d.media_errors = n;
            n.unwrap_or(0) > 0
        }
        "Other Error Count" => {
            d.other_errors = n;
            n.unwrap_or(0) > 0
        }
        "Predictive Failure Count" => {
            d.predictive_failures = n;
            n.unwrap_or(0) > 0
        }
        "S.M.A.R.T alert flagged by drive" => {
            d.smart_alert = v.trim().eq_ignore_ascii_case("yes");
            d.smart_alert
        }
        "Write Cache" => {
            d.write_cache = drive_cache_word(v);
            d.write_cache == Some(true)
        }
        _ => false,
    };
    if raised {
        d.evidence.push(line.to_string());
    }
}

/// A PD table row, text (`252:4 9 Onln 0 ...`) split into tokens.
fn pd_from_tokens(tokens: &[&str], line: &str) -> Option<PhysicalDrive> {
    if tokens.len() < 4 || !eid_slot(tokens[0]) || !tokens[1].chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some(PhysicalDrive {
        id: tokens[0].to_string(),
        state: Some(tokens[2].to_string()),
        evidence: vec![format!("PD table: {}", line.trim())],
        ..Default::default()
    })
}

/// A PD table row of the JSON output (`{"EID:Slt": "252:4", "State": "Onln", ...}`).
fn pd_from_json_row(key: &str, row: &Value) -> Option<PhysicalDrive> {
    let id = row.get("EID:Slt").map(str_of)?;
    let state = row.get("State").map(str_of)?;
    Some(PhysicalDrive {
        id: id.trim().to_string(),
        evidence: vec![format!("{key}: {id} State {state}")],
        state: Some(state),
        ..Default::default()
    })
}
/// One drive group's drive cache as the TOPOLOGY table shows it (`PDC` on the group's own
/// row, the one with no array or row index): the group, enabled or not, and the line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct GroupCache {
    dg: String,
    enabled: bool,
    line: String,
}

/// A TOPOLOGY row of the text output (`0 - - - - RAID0 Optl N 2.181 TB enbl N N dflt N N`):
/// the drive group's own row only; `PDC` is the word after the size and its unit.
fn topology_row(tokens: &[&str], line: &str) -> Option<GroupCache> {
    if tokens.len() < 11
        || !tokens[0].chars().all(|c| c.is_ascii_digit())
        || tokens[1] != "-"
        || tokens[2] != "-"
    {
        return None;
    }
    let unit = tokens
        .iter()
        .position(|t| matches!(*t, "TB" | "GB" | "MB" | "KB" | "PB"))?;
    let enabled = drive_cache_word(tokens.get(unit + 1)?)?;
    Some(GroupCache {
        dg: tokens[0].to_string(),
        enabled,
        line: format!("TOPOLOGY: {} (PDC={})", line.trim(), tokens[unit + 1]),
    })
}

/// A TOPOLOGY row of the JSON output, the drive group's own row (`"Arr": "-"`).
fn topology_json_row(row: &Value) -> Option<GroupCache> {
    let dg = row.get("DG").map(str_of)?;
    if row.get("Arr").map(str_of).as_deref() != Some("-") {
        return None;
    }
    let pdc = row.get("PDC").map(str_of)?;
    let enabled = drive_cache_word(&pdc)?;
    Some(GroupCache {
        line: format!(
            "TOPOLOGY: DG {dg} {} {} PDC={pdc}",
            row.get("Type").map(str_of).unwrap_or_default(),
            row.get("State").map(str_of).unwrap_or_default()
        ),
        dg,
        enabled,
    })
}

/// Puts each drive group's PD cache on the virtual drives of that group (unless their own
/// `Disk Cache Policy` already said); a group with its caches on and no virtual drive in the
/// output is kept on the controller, so it is judged all the same.
fn apply_topology(c: &mut Controller, groups: Vec<GroupCache>) {
    for g in groups {
        let mut placed = false;
        for v in c
            .virtual_drives
            .iter_mut()
            .filter(|v| v.drive_group.as_deref() == Some(g.dg.as_str()))
        {
            placed = true;
            if v.drive_write_cache.is_none() {
                v.drive_write_cache = Some(g.enabled);
                v.evidence.push(g.line.clone());
            }
        }
        if !placed && g.enabled {
            c.drive_cache_groups.push(g.line);
        }
    }
}

use serde_json::Value;

/// Decodes a Cache column code: (write policy, read-ahead on).
pub fn cache_code(code: &str) -> (Option<WritePolicy>, Option<bool>) {
    let c = code.trim();
    let (ra, rest) = if let Some(r) = c.strip_prefix("NR") {
        (Some(false), r)
    } else if let Some(r) = c.strip_prefix('R') {
        (Some(true), r)
    } else {
        (None, c)
    };
    let w = if rest.starts_with("AWB") {
        Some(WritePolicy::AlwaysWriteBack)
    } else if rest.starts_with("WB") {
        Some(WritePolicy::WriteBack)
    } else if rest.starts_with("WT") {
        Some(WritePolicy::WriteThrough)
    } else {
        None
    };
    (w, ra)
}

/// Decodes storcli2/perccli2 `CurrentCache`/`DefaultCache` (`NR,WB`, `R,WT`, `NR,AWB`).
fn cache_pair(code: &str) -> (Option<WritePolicy>, Option<bool>) {
    if !code.contains(',') {
        return cache_code(code);
    }
    let mut w = None;
    let mut ra = None;
    for t in code.split(',').map(|t| t.trim().to_ascii_uppercase()) {
        match t.as_str() {
            "NR" | "NORA" => ra = Some(false),
            "R" | "RA" | "ADRA" => ra = Some(true),
            "WB" => w = Some(WritePolicy::WriteBack),
            "AWB" => w = Some(WritePolicy::AlwaysWriteBack),
            "WT" => w = Some(WritePolicy::WriteThrough),
            _ => {}
        }
    }
    (w, ra)
}

fn vd_from_json_row(key: &str, row: &Value) -> Option<VirtualDrive> {
    let dgvd = row.get("DG/VD").map(str_of)?;
    let vdid = dgvd.split('/').nth(1).unwrap_or(&dgvd).to_string();
    let (cache, default) = match row.get("Cache") {
        Some(c) => (str_of(c), None),
        None => (
            row.get("CurrentCache").map(str_of).unwrap_or_default(),
            row.get("DefaultCache").map(str_of),
        ),
    };
    let (w, ra) = cache_pair(&cache);
    let mut evidence = vec![format!("{key}: DG/VD {dgvd} Cache {cache}")];
    let configured = default.as_deref().and_then(|d| {
        evidence.push(format!("{key}: DG/VD {dgvd} DefaultCache {d}"));
        cache_pair(d).0
    });
    let pdc = row.get("PDC").map(str_of);
    if let Some(p) = &pdc {
        evidence.push(format!("{key}: DG/VD {dgvd} PDC={p}"));
    }
    Some(VirtualDrive {
        drive_group: dgvd
            .split_once('/')
            .map(|(d, _)| d.to_string())
            .filter(|d| d != "-"),
        id: vdid,
        drive_write_cache: pdc.as_deref().and_then(drive_cache_word),
        name: row.get("Name").map(str_of).filter(|s| !s.is_empty()),
        raid_level: row
            .get("TYPE")
            .map(|t| str_of(t).trim_start_matches("RAID").to_string()),
        size: row.get("Size").map(str_of),
        state: row.get("State").map(str_of),
        configured_write: configured,
        write_back_on_bad_battery: configured == Some(WritePolicy::AlwaysWriteBack),
        current_write: w,
        read_ahead: ra,
        evidence,
        ..Default::default()
    })
}

fn initial_setting(v: &str) -> Option<WritePolicy> {
    let t = v.to_ascii_lowercase().replace([' ', '-'], "");
    if t.contains("always") || t == "awb" {
        Some(WritePolicy::AlwaysWriteBack)
    } else if t.contains("writeback") || t == "wb" {
        Some(WritePolicy::WriteBack)
    } else if t.contains("writethrough") || t == "wt" {
        Some(WritePolicy::WriteThrough)
    } else {
        None
    }
}

fn vd_from_row(tokens: &[&str], line: &str) -> Option<VirtualDrive> {
    if tokens.len() < 6 {
        return None;
    }
    let (dg, vd) = tokens[0].split_once('/')?;
    if !dg.chars().all(|c| c.is_ascii_digit() || c == '-')
        || !vd.chars().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let (w, ra) = cache_code(tokens[5]);
    let size = if tokens.len() >= 10 {
        Some(format!("{} {}", tokens[8], tokens[9]))
    } else {
        None
    };
    let name = if tokens.len() > 10 {
        Some(tokens[10..].join(" "))
    } else {
        None
    };
    Some(VirtualDrive {
        id: vd.to_string(),
        drive_group: Some(dg.to_string()).filter(|d| d != "-"),
        name,
        raid_level: Some(tokens[1].trim_start_matches("RAID").to_string()),
        size,
        state: Some(tokens[2].to_string()),
        current_write: w,
        read_ahead: ra,
        evidence: vec![format!("VD table: {}", line.trim())],
        ..Default::default()
    })
}

fn upsert_vd(c: &mut Controller, v: VirtualDrive) {
    if let Some(e) = c.virtual_drives.iter_mut().find(|e| e.id == v.id) {
        if e.current_write.is_none() {
            e.current_write = v.current_write;
            e.read_ahead = v.read_ahead;
        }
        for l in v.evidence {
            if !e.evidence.contains(&l) {
                e.evidence.push(l);
            }
        }
    } else {
        c.virtual_drives.push(v);
    }
}

fn vd_mut<'a>(c: &'a mut Controller, id: &str) -> &'a mut VirtualDrive {
    if let Some(i) = c.virtual_drives.iter().position(|v| v.id == id) {
        return &mut c.virtual_drives[i];
    }
    c.virtual_drives.push(VirtualDrive {
        id: id.to_string(),
        ..Default::default()
    });
    c.virtual_drives.last_mut().expect("just pushed")
}

fn ctrl_mut<'a>(ctrls: &'a mut Vec<Controller>, id: &str) -> &'a mut Controller {
    if let Some(i) = ctrls.iter().position(|c| c.id == id) {
        return &mut ctrls[i];
    }
    ctrls.push(Controller {
        id: id.to_string(),
        ..Default::default()
    });
    ctrls.last_mut().expect("just pushed")
}

#[derive(Default)]
struct BatteryProps {
    kind: Option<String>,
    state: Option<String>,
    learn_active: bool,
    learn_due: bool,
    charging: bool,
    missing: bool,
    replace: bool,
    next_learn: Option<String>,
    evidence: Vec<String>,
}

impl BatteryProps {
    fn apply(&mut self, prop: &str, value: &str, line: &str) -> bool {
        let yes = value.eq_ignore_ascii_case("yes");
        match prop {
            "Battery State" | "State" => self.state = Some(value.to_string()),
            "Learn Cycle Active" => self.learn_active = yes,
            "Learn Cycle Requested" | "Periodic Learn Required" => self.learn_due |= yes,
            "Charging Status" => self.charging = value.eq_ignore_ascii_case("charging"),
            "Battery Pack Missing" | "Pack Missing" => self.missing = yes,
            "Replacement required" | "Battery Replacement required" => self.replace = yes,
            "Next Learn time" => self.next_learn = Some(value.to_string()),
            "Type" => self.kind = Some(value.to_string()),
            _ => return false,
        }
        let raised = match prop {
            "Battery State" | "State" => true,
            "Charging Status" => !value.eq_ignore_ascii_case("none"),
            "Next Learn time" | "Type" => false,
            _ => yes,
        };
        if raised {
            self.evidence.push(line.trim().to_string());
        }
        true
    }

    fn battery(self, default_kind: &str) -> Option<Battery> {
        if self.evidence.is_empty() && self.state.is_none() && self.next_learn.is_none() {
            return None;
        }
        // Reaching here, the tool printed battery properties: no raised flag is healthy.
        let state = battery_state(&BatteryFlags {
            state_word: self.state.clone(),
            learn_active: self.learn_active,
            charging: self.charging,
            missing: self.missing,
            replace: self.replace,
            degraded: false,
            flags_seen: true,
        });
        let mut text = self.state.unwrap_or_else(|| format!("{state:?}"));
        let why = match state {
            BatteryState::Missing if self.missing => Some("Battery Pack Missing: Yes"),
            BatteryState::Failed if self.replace => Some("Replacement required: Yes"),
            BatteryState::Learning if self.learn_active => Some("Learn Cycle Active: Yes"),
            BatteryState::Charging if self.charging => Some("Charging Status: Charging"),
            _ => None,
        };
        if let Some(w) = why {
            if !text
                .to_ascii_lowercase()
                .contains(&format!("{state:?}").to_ascii_lowercase())
            {
                text = format!("State: {text}, {w}");
            }
        }
        Some(Battery {
            kind: self.kind.unwrap_or_else(|| default_kind.to_string()),
            state,
            state_text: text,
            learn_active: self.learn_active,
            learn_due: self.learn_due,
            next_learn: self.next_learn,
            evidence: self.evidence,
        })
    }
}

const BATTERY_PROPS: &[&str] = &[
    "Battery State",
    "Learn Cycle Active",
    "Learn Cycle Requested",
    "Periodic Learn Required",
    "Charging Status",
    "Battery Pack Missing",
    "Pack Missing",
    "Replacement required",
    "Battery Replacement required",
    "Next Learn time",
];

/// Parses storcli/perccli text output.
pub fn parse_text(text: &str) -> (Vec<Controller>, Vec<String>) {
    let mut ctrls: Vec<Controller> = Vec::new();
    let mut notes = Vec::new();
    let mut cur = String::from("0");
    let mut section = String::new();
    let mut props_vd: Option<String> = None;
    let mut bat = BatteryProps::default();
    let mut bat_kind = "BBU";
    let mut summary_header = false;
    let mut topology: Vec<(String, GroupCache)> = Vec::new();
    for raw in text.lines() {
        let line = raw.trim_end();
        let t = line.trim();
        if t.is_empty() || t.starts_with("---") || t.starts_with("===") {
            continue;
        }
        // Section headers: "VD LIST :", "/c0/v1 :", "VD1 Properties :", "BBU_Info :".
        if let Some(h) = t.strip_suffix(" :") {
            section = h.trim().to_string();
            summary_header = false;
            props_vd = None;
            if let Some(rest) = section.strip_prefix("/c") {
                let id: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
                if !id.is_empty() {
                    cur = id;
                }
            }
            if let Some(n) = section
                .strip_prefix("VD")
                .and_then(|s| s.strip_suffix(" Properties"))
            {
                props_vd = Some(n.to_string());
            }
            if section.starts_with("Cachevault") || section.starts_with("CV_") {
                bat_kind = "CacheVault";
            } else if section.starts_with("BBU") {
                bat_kind = "BBU";
            }
            continue;
        }
        if let Some((k, v)) = kv(t, '=') {
            // `Drive /c0/e252/s4 State :` and `... Device attributes :` blocks.
            if let Some(id) = drive_key_id(&section)
                .filter(|_| section.ends_with(" State") || section.ends_with("Device attributes"))
            {
                let c = ctrl_mut(&mut ctrls, &cur);
                drive_prop(drive_mut(c, &id), k, v, &format!("{section}: {t}"));
                continue;
            }
            match k {
                "Controller" if v.chars().all(|c| c.is_ascii_digit()) => {
                    cur = v.to_string();
                    ctrl_mut(&mut ctrls, &cur);
                }
                "Model" | "Product Name" => ctrl_mut(&mut ctrls, &cur).model = Some(v.to_string()),
                "On Board Memory Size" => ctrl_mut(&mut ctrls, &cur).cache_bytes = parse_mem(v),
                "BBU" => {
                    let c = ctrl_mut(&mut ctrls, &cur);
                    if c.battery.is_none() && v.eq_ignore_ascii_case("absent") {
                        c.battery = Some(Battery {
                            kind: "BBU".into(),
                            state: BatteryState::Missing,
                            state_text: "Absent".into(),
                            learn_active: false,
                            learn_due: false,
                            next_learn: None,
                            evidence: vec![t.to_string()],
                        });
                    }
                }
                "Status" if v.eq_ignore_ascii_case("failure") => {
                    notes.push(format!("controller {cur}: command status Failure"))
                }
                "Description" if !v.eq_ignore_ascii_case("none") => {
                    notes.push(format!("controller {cur}: {v}"))
                }
                _ => {}
            }
            if let Some(n) = &props_vd {
                let n = n.clone();
                let c = ctrl_mut(&mut ctrls, &cur);
                let vd = vd_mut(c, &n);
                match k {
                    "Strip Size" => vd.stripe_bytes = parse_strip(v),
                    "Write Cache(initial setting)" => {
                        vd.configured_write = initial_setting(v);
                        vd.write_back_on_bad_battery |=
                            vd.configured_write == Some(WritePolicy::AlwaysWriteBack);
                        vd.evidence.push(t.to_string());
                    }
                    "Disk Cache Policy" | "PDC" => {
                        vd.drive_write_cache = drive_cache_word(v);
                        vd.evidence.push(t.to_string());
                    }
                    "OS Drive Name" => vd.os_device = Some(v.to_string()),
                    _ => {}
                }
            }
            continue;
        }
        let tokens: Vec<&str> = t.split_whitespace().collect();
        if section == "TOPOLOGY" {
            if let Some(g) = topology_row(&tokens, t) {
                topology.push((cur.clone(), g));
            }
            continue;
        }
        if section.contains("PD LIST") || section.starts_with("Drive") {
            if let Some(d) = pd_from_tokens(&tokens, t) {
                let c = ctrl_mut(&mut ctrls, &cur);
                let e = drive_mut(c, &d.id);
                e.state = d.state;
                e.evidence.splice(0..0, d.evidence);
                continue;
            }
        }
        if let Some(v) = vd_from_row(&tokens, t) {
            let c = ctrl_mut(&mut ctrls, &cur);
            upsert_vd(c, v);
            continue;
        }
        // Property/Value rows of `/cN/bbu show all` and `/cN/cv show all`.
        if let Some(p) = BATTERY_PROPS.iter().find(|p| t.starts_with(**p)) {
            let value = t[p.len()..].trim();
            bat.apply(p, value, t);
            continue;
        }
        // Summary tables in `/cN show all`: "Model State ..." header, then one row per module.
        if (section.starts_with("BBU_Info") || section.starts_with("Cachevault_Info"))
            && tokens.first() == Some(&"Model")
            && tokens.get(1) == Some(&"State")
        {
            summary_header = true;
            continue;
        }
        if summary_header && tokens.len() >= 2 {
            bat.apply("State", tokens[1], &format!("{section}: {t}"));
            bat.kind = Some(format!("{bat_kind} {}", tokens[0]));
            summary_header = false;
        }
    }
    if let Some(b) = bat.battery(bat_kind) {
        let c = ctrl_mut(&mut ctrls, &cur);
        c.battery = Some(b);
    }
    for (id, g) in topology {
        apply_topology(ctrl_mut(&mut ctrls, &id), vec![g]);
    }
    (ctrls, notes)
}

fn str_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `storcli show J`: one `System Overview` row per controller, with its BBU and health.
fn system_overview(val: &Value) -> Vec<Controller> {
    let mut out = Vec::new();
    for row in val.as_array().into_iter().flatten() {
        let cid = row.get("Ctl").map(str_of).unwrap_or_default();
        let mut c = Controller {
            id: cid.clone(),
            model: row.get("Model").map(str_of),
            ..Default::default()
        };
        if let Some(b) = row.get("BBU").map(str_of) {
            let state = if ["n/a", "na", "msng", "absent", "-"]
                .contains(&b.to_ascii_lowercase().as_str())
            {
                BatteryState::Missing
            } else {
                battery_state_word(&b)
            };
            c.battery = Some(Battery {
                kind: "BBU".into(),
                state,
                state_text: b.clone(),
                learn_active: state == BatteryState::Learning,
                learn_due: false,
                next_learn: None,
                evidence: vec![format!("System Overview: Ctl {cid} BBU {b}")],
            });
        }
        if let Some(h) = row.get("Hlth").map(str_of) {
            if !h.eq_ignore_ascii_case("opt") {
                c.problems
                    .push(format!("controller health {h} (System Overview)"));
            }
        }
        let vds = row.get("VDs").and_then(Value::as_u64).unwrap_or(0);
        let vnopt = row.get("VNOpt").and_then(Value::as_u64).unwrap_or(0);
        if vnopt > 0 {
            c.problems.push(format!(
                "{vnopt} of {vds} virtual drives not optimal (System Overview)"
            ));
        }
        out.push(c);
    }
    out
}

/// The drive keys of the JSON output: `PD LIST`, `Drive Information` and `Drive /cN/eE/sS`
/// rows, and the `Drive /cN/eE/sS - Detailed Information` blocks (error counters, S.M.A.R.T
/// alert, write cache). False when `key` is none of them.
fn json_drives(key: &str, val: &Value, ctrl: &mut Controller) -> bool {
    if key == "PD LIST"
        || key == "Drive Information"
        || (key.starts_with("Drive /c") && val.is_array())
    {
        for row in val.as_array().into_iter().flatten() {
            if let Some(d) = pd_from_json_row(key, row) {
                let e = drive_mut(ctrl, &d.id);
                e.state = d.state;
                e.evidence.splice(0..0, d.evidence);
            }
        }
        return true;
    }
    if !(key.starts_with("Drive /c") && key.ends_with("Detailed Information")) {
        return false;
    }
    let Some(id) = drive_key_id(key) else {
        return true;
    };
    for (sub, block) in val.as_object().into_iter().flatten() {
        if !(sub.ends_with(" State") || sub.ends_with("Device attributes")) {
            continue;
        }
        for (p, v) in block.as_object().into_iter().flatten() {
            let v = str_of(v);
            drive_prop(drive_mut(ctrl, &id), p, &v, &format!("{sub}: {p} = {v}"));
        }
    }
    true
}

/// Parses storcli/perccli `J` (JSON) output.
pub fn parse_json(text: &str) -> Result<(Vec<Controller>, Vec<String>), RaidParseError> {
    let root: Value =
        serde_json::from_str(text).map_err(|e| RaidParseError::Json(e.to_string()))?;
    let mut ctrls = Vec::new();
    let mut notes = Vec::new();
    let list = root
        .get("Controllers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (i, c) in list.iter().enumerate() {
        let status = c.get("Command Status");
        let id = status
            .and_then(|s| s.get("Controller"))
            .map(str_of)
            .unwrap_or_else(|| i.to_string());
        if let Some(s) = status.and_then(|s| s.get("Status")).map(str_of) {
            if !s.eq_ignore_ascii_case("success") {
                let d = status
                    .and_then(|s| s.get("Description"))
                    .map(str_of)
                    .unwrap_or_default();
                notes.push(format!("controller {id}: command status {s}: {d}"));
            }
        }
        let mut ctrl = Controller {
            id: id.clone(),
            ..Default::default()
        };
        let Some(data) = c.get("Response Data").and_then(Value::as_object) else {
            ctrls.push(ctrl);
            continue;
        };
        let mut bat = BatteryProps::default();
        let mut kind = "BBU".to_string();
        let mut overview: Vec<Controller> = Vec::new();
        let mut topology = Vec::new();
        for (key, val) in data {
            if json_drives(key, val, &mut ctrl) {
                continue;
            }
            match key.as_str() {
                "TOPOLOGY" => topology.extend(
                    val.as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(topology_json_row),
                ),
                "Number of Controllers" if val.as_u64() == Some(0) => {
                    notes.push("storcli/perccli reports no controller (Number of Controllers = 0): nothing to check".to_string());
                }
                // `storcli show J`: one row per controller, with a BBU column.
                "System Overview" => overview.extend(system_overview(val)),
                // `storcli show J` on HBAs (IT firmware): no cache memory, nothing to protect.
                "IT System Overview" => {
                    for row in val.as_array().into_iter().flatten() {
                        overview.push(Controller {
                            id: row.get("Ctl").map(str_of).unwrap_or_default(),
                            model: row.get("Model").map(str_of),
                            cache_bytes: Some(0),
                            ..Default::default()
                        });
                    }
                }
                // `/cN/vall show J` (some releases) and storcli2/perccli2: a list of VDs, each a
                // table row or a `VD Info` object with `CurrentCache`/`DefaultCache`.
                "Virtual Drives" if val.is_array() => {
                    for row in val.as_array().into_iter().flatten() {
                        let info = row.get("VD Info").unwrap_or(row);
                        let Some(mut v) = vd_from_json_row(key, info) else {
                            continue;
                        };
                        if let Some(p) = row.get("VD Properties") {
                            if let Some(s) = p.get("Strip Size") {
                                v.stripe_bytes = parse_strip(&str_of(s).replace("KiB", "KB"));
                            }
                            if let Some(s) = p.get("OS Drive Name") {
                                v.os_device = Some(str_of(s));
                            }
                        }
                        let id = v.id.clone();
                        upsert_vd(&mut ctrl, v.clone());
                        let e = vd_mut(&mut ctrl, &id);
                        if e.configured_write.is_none() {
                            e.configured_write = v.configured_write;
                        }
                    }
                }
                "Basics" => {
                    if let Some(m) = val.get("Model") {
                        ctrl.model = Some(str_of(m));
                    }
                }
                "Product Name" => ctrl.model = Some(str_of(val)),
                "HwCfg" => {
                    if let Some(m) = val.get("On Board Memory Size") {
                        ctrl.cache_bytes = parse_mem(&str_of(m));
                    }
                    if let Some(b) = val.get("BBU").map(str_of) {
                        if b.eq_ignore_ascii_case("absent") && ctrl.battery.is_none() {
                            bat.apply("Battery Pack Missing", "Yes", "HwCfg: BBU = Absent");
                        }
                    }
                }
                "On Board Memory Size" => ctrl.cache_bytes = parse_mem(&str_of(val)),
                k if k == "VD LIST" || (k.starts_with("/c") && k.contains("/v")) => {
                    for row in val.as_array().into_iter().flatten() {
                        let dgvd = row.get("DG/VD").map(str_of).unwrap_or_default();
                        let vdid = dgvd.split('/').nth(1).unwrap_or(&dgvd).to_string();
                        let cache = row.get("Cache").map(str_of).unwrap_or_default();
                        let (w, ra) = cache_code(&cache);
                        let v = VirtualDrive {
                            id: vdid,
                            drive_group: dgvd
                                .split_once('/')
                                .map(|(d, _)| d.to_string())
                                .filter(|d| d != "-"),
                            name: row.get("Name").map(str_of).filter(|s| !s.is_empty()),
                            raid_level: row
                                .get("TYPE")
                                .map(|t| str_of(t).trim_start_matches("RAID").to_string()),
                            size: row.get("Size").map(str_of),
                            state: row.get("State").map(str_of),
                            current_write: w,
                            read_ahead: ra,
                            evidence: vec![format!("{key}: DG/VD {dgvd} Cache {cache}")],
                            ..Default::default()
                        };
                        upsert_vd(&mut ctrl, v);
                    }
                }
                k if k.starts_with("VD") && k.ends_with(" Properties") => {
                    let n = k
                        .trim_start_matches("VD")
                        .trim_end_matches(" Properties")
                        .to_string();
                    let vd = vd_mut(&mut ctrl, &n);
                    if let Some(s) = val.get("Strip Size") {
                        vd.stripe_bytes = parse_strip(&str_of(s));
                    }
                    if let Some(s) = val.get("Write Cache(initial setting)") {
                        let s = str_of(s);
                        vd.configured_write = initial_setting(&s);
                        vd.write_back_on_bad_battery |=
                            vd.configured_write == Some(WritePolicy::AlwaysWriteBack);
                        vd.evidence
                            .push(format!("{k}: Write Cache(initial setting) = {s}"));
                    }
                    if let Some(s) = val.get("Disk Cache Policy") {
                        let s = str_of(s);
                        vd.drive_write_cache = match s.to_ascii_lowercase().as_str() {
                            "enabled" => Some(true),
                            "disabled" => Some(false),
                            _ => None,
                        };
                        vd.evidence.push(format!("{k}: Disk Cache Policy = {s}"));
                    }
                    if let Some(s) = val.get("OS Drive Name") {
                        vd.os_device = Some(str_of(s));
                    }
                }
                k if k.starts_with("BBU_")
                    || k.starts_with("Cachevault_")
                    || k.starts_with("CV_") =>
                {
                    if k.starts_with("Cachevault") || k.starts_with("CV_") {
                        kind = "CacheVault".into();
                    }
                    for row in val.as_array().into_iter().flatten() {
                        if let (Some(p), Some(v)) = (row.get("Property"), row.get("Value")) {
                            let (p, v) = (str_of(p), str_of(v));
                            bat.apply(&p, &v, &format!("{k}: {p} = {v}"));
                        } else if let Some(s) = row.get("State") {
                            let s = str_of(s);
                            bat.apply("State", &s, &format!("{k}: State = {s}"));
                            if let Some(m) = row.get("Model") {
                                bat.kind = Some(format!("{kind} {}", str_of(m)));
                            }
                            if let Some(nl) = row.get("Next Learn") {
                                bat.next_learn = Some(str_of(nl));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        if let Some(b) = bat.battery(&kind) {
            ctrl.battery = Some(b);
        }
        apply_topology(&mut ctrl, topology);
        if overview.is_empty() || !ctrl.is_empty() {
            ctrls.push(ctrl);
        }
        ctrls.extend(overview);
    }
    Ok((ctrls, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_codes() {
        assert_eq!(
            cache_code("RWBD"),
            (Some(WritePolicy::WriteBack), Some(true))
        );
        assert_eq!(
            cache_code("NRWTD"),
            (Some(WritePolicy::WriteThrough), Some(false))
        );
        assert_eq!(
            cache_code("RAWBD"),
            (Some(WritePolicy::AlwaysWriteBack), Some(true))
        );
        assert_eq!(
            cache_code("NRAWBC"),
            (Some(WritePolicy::AlwaysWriteBack), Some(false))
        );
        assert_eq!(cache_code("-"), (None, None));
    }
}
