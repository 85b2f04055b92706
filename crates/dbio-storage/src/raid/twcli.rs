//! 3ware tw_cli: `tw_cli /cN show` (unit table with a Cache column: `RiW`, `W`, `Ri`,
//! `OFF`, and the `bbu` row), `/cN/uN show all` (`/c0/u0 Write Cache = on`) and
//! `/cN/bbu show all` (`/c0/bbu Status = OK`). 3ware prints one write-cache setting, not a
//! configured and a current one.

use super::model::{
    battery_state_word, Battery, BatteryState, Controller, PhysicalDrive, VirtualDrive, WritePolicy,
};

/// The header of a port (drive) table: `Port Status Unit Size ...` (`info cN drivestatus`)
/// or `VPort Status Unit Size ...` (`/cN show` on 9690/9750).
fn port_header(tokens: &[&str]) -> bool {
    tokens.len() >= 3
        && (tokens[0] == "Port" || tokens[0] == "VPort")
        && tokens[1] == "Status"
        && tokens[2] == "Unit"
}

/// True when `text` has a tw_cli port (drive) table.
pub fn has_port_table(text: &str) -> bool {
    text.lines()
        .any(|l| port_header(&l.split_whitespace().collect::<Vec<_>>()))
}

fn battery_state(status: &str, ready: Option<&str>) -> BatteryState {
    let s = if status.trim() == "-" {
        BatteryState::Missing
    } else {
        battery_state_word(status)
    };
    if s == BatteryState::Ok && ready.is_some_and(|r| r.eq_ignore_ascii_case("no")) {
        BatteryState::Charging
    } else {
        s
    }
}

fn cache_policy(col: &str) -> (Option<WritePolicy>, bool) {
    let c = col.trim();
    if c == "-" {
        // Spares and units without a cache setting.
        return (None, false);
    }
    // Older firmware prints ON/OFF for the write cache; 9.5 and later RiW, Ri, W, OFF.
    if c.eq_ignore_ascii_case("off") {
        return (Some(WritePolicy::WriteThrough), false);
    }
    if c.eq_ignore_ascii_case("on") {
        return (Some(WritePolicy::WriteBack), false);
    }
    let w = c.contains('W');
    (
        Some(if w {
            WritePolicy::WriteBack
        } else {
            WritePolicy::WriteThrough
        }),
        c.starts_with('R'),
    )
}

/// tw_cli prints the write cache setting, not what the controller does now: with a BBU
/// that is not ready (testing, charging, fault) 3ware firmware turns the write cache off,
/// so the current policy of a write-back unit is inferred from the BBU then.
fn infer_current_policy(c: &mut Controller) {
    let bbu_not_ready = c.battery.as_ref().is_some_and(|b| {
        matches!(
            b.state,
            BatteryState::Learning
                | BatteryState::Charging
                | BatteryState::Failed
                | BatteryState::Degraded
        )
    });
    if bbu_not_ready {
        for v in &mut c.virtual_drives {
            if v.configured_write.is_some_and(WritePolicy::is_write_back) {
                v.current_write = None;
                v.current_inferred = true;
            }
        }
    }
}

/// Parses tw_cli output.
pub fn parse(text: &str) -> (Vec<Controller>, Vec<String>) {
    let mut c = Controller {
        id: "c0".into(),
        ..Default::default()
    };
    let mut id_set = false;
    let mut unit_table = false;
    let mut port_table = false;
    let mut cols: (Option<usize>, Option<usize>, Option<usize>) = (None, None, None);
    let mut bbu_status: Option<String> = None;
    let mut bbu_ready: Option<String> = None;
    let mut bbu_evidence = Vec::new();
    let mut notes = Vec::new();
    for raw in text.lines() {
        let t = raw.trim();
        let tokens: Vec<&str> = t.split_whitespace().collect();
        if tokens.is_empty() {
            continue;
        }
        if !id_set {
            if let Some(pos) = t.find("/c") {
                let id: String = t[pos + 2..]
                    .chars()
                    .take_while(|ch| ch.is_ascii_digit())
                    .collect();
                if !id.is_empty() {
                    c.id = format!("c{id}");
                    id_set = true;
                }
            }
        }
        // `tw_cli show`: "c0    9650SE-8LPML  8  8  1  0  1  1  OK"
        if tokens[0].starts_with('c')
            && tokens[0][1..].chars().all(|ch| ch.is_ascii_digit())
            && tokens.len() >= 9
            && tokens[0].len() > 1
        {
            c.id = tokens[0].to_string();
            id_set = true;
            c.model = Some(tokens[1].to_string());
            if let Ok(n) = tokens[5].parse::<u32>() {
                if n > 0 {
                    c.problems.push(format!(
                        "{n} unit(s) not optimal (NotOpt in the controller list)"
                    ));
                }
            }
            if tokens[8] != "-" {
                bbu_status.get_or_insert_with(|| tokens[8].to_string());
            }
            bbu_evidence.push(format!("controller list: {t}"));
            continue;
        }
        if port_header(&tokens) {
            port_table = true;
            continue;
        }
        // "p0     DEGRADED         u0     465.76 GB ..."; an empty port is NOT-PRESENT.
        if port_table
            && tokens.len() >= 3
            && tokens[0].len() > 1
            && tokens[0].starts_with('p')
            && tokens[0][1..].chars().all(|ch| ch.is_ascii_digit())
        {
            if tokens[1] != "NOT-PRESENT" {
                c.physical_drives.push(PhysicalDrive {
                    id: tokens[0].to_string(),
                    state: Some(tokens[1].to_string()),
                    evidence: vec![format!("port table: {t}")],
                    ..Default::default()
                });
            }
            continue;
        }
        if tokens[0] == "Unit" && tokens.get(1) == Some(&"UnitType") {
            // Column positions differ between tw_cli releases (%RCmpl %V/I/M, or %Cmpl).
            unit_table = true;
            let pos = |name: &str| tokens.iter().position(|t| *t == name);
            cols = (pos("Stripe"), pos("Size(GB)"), pos("Cache"));
            continue;
        }
        let (stripe_col, size_col, cache_col) = cols;
        if unit_table
            && tokens[0].starts_with('u')
            && tokens[0].len() > 1
            && tokens[0][1..].chars().all(|ch| ch.is_ascii_digit())
            && cache_col.is_some_and(|i| i < tokens.len())
        {
            let (w, ra) = cache_policy(tokens[cache_col.expect("checked")]);
            c.virtual_drives.push(VirtualDrive {
                id: tokens[0].to_string(),
                raid_level: Some(tokens[1].trim_start_matches("RAID-").to_string()),
                state: Some(tokens[2].to_string()),
                stripe_bytes: stripe_col
                    .and_then(|i| tokens.get(i))
                    .and_then(|s| super::model::parse_strip(s)),
                size: size_col
                    .and_then(|i| tokens.get(i))
                    .map(|s| format!("{s} GB")),
                configured_write: w,
                current_write: w,
                read_ahead: Some(ra),
                evidence: vec![format!("unit table: {t}")],
                ..Default::default()
            });
            continue;
        }
        if tokens[0] == "bbu" && tokens.len() >= 4 {
            bbu_ready = Some(tokens[2].to_string());
            bbu_status = Some(tokens[3].to_string());
            bbu_evidence.push(format!("bbu table: {t}"));
            continue;
        }
        // `/c0/bbu Status = OK`, `/c0/u0 Write Cache = on`
        if let Some((k, v)) = t.split_once(" = ") {
            let k = k.trim();
            let v = v.trim();
            if let Some(prop) = k.split_once("/bbu ").map(|x| x.1) {
                match prop {
                    "Status" => bbu_status = Some(v.to_string()),
                    "Ready" => bbu_ready = Some(v.to_string()),
                    _ => continue,
                }
                bbu_evidence.push(t.to_string());
                continue;
            }
            if let Some((unit, prop)) = k
                .rsplit_once('/')
                .and_then(|(_, rest)| rest.split_once(' '))
            {
                if prop == "Write Cache" {
                    let on = v.eq_ignore_ascii_case("on");
                    let w = Some(if on {
                        WritePolicy::WriteBack
                    } else {
                        WritePolicy::WriteThrough
                    });
                    if let Some(vd) = c.virtual_drives.iter_mut().find(|x| x.id == unit) {
                        vd.configured_write = w;
                        vd.current_write = w;
                        vd.evidence.push(t.to_string());
                    } else {
                        c.virtual_drives.push(VirtualDrive {
                            id: unit.to_string(),
                            configured_write: w,
                            current_write: w,
                            evidence: vec![t.to_string()],
                            ..Default::default()
                        });
                    }
                }
            }
        }
    }
    // A full `/cN show` lists the ports after the units and the bbu row after them: no bbu
    // row there means no BBU. `info cN unitstatus` (and `/cN show unitstatus`) print the unit
    // table alone, which says nothing about the BBU.
    let full_show = text.contains("VPort") || text.contains("Port   Status");
    let bbu_status = bbu_status.or_else(|| {
        if unit_table && full_show {
            Some("-".into())
        } else {
            None
        }
    });
    if let Some(s) = bbu_status {
        let state = battery_state(&s, bbu_ready.as_deref());
        if s == "-" && bbu_evidence.is_empty() {
            bbu_evidence.push("no bbu row in the /cN show output: no BBU fitted".into());
        }
        c.battery = Some(Battery {
            kind: "BBU".into(),
            state,
            state_text: match &bbu_ready {
                Some(r) => format!("{s} (ready: {r})"),
                None => s.clone(),
            },
            learn_active: state == BatteryState::Learning,
            learn_due: false,
            next_learn: None,
            evidence: bbu_evidence,
        });
    }
    infer_current_policy(&mut c);
    if c.virtual_drives.is_empty() && c.physical_drives.is_empty() {
        notes.push("no unit table: save `tw_cli /c0 show` too".into());
    } else if c.virtual_drives.is_empty() {
        notes.push(
            "the drive table alone: the units and their cache policy are in `tw_cli /c0 show`"
                .into(),
        );
    } else if c.battery.is_none() {
        notes.push("the BBU state is not in this output: save `tw_cli /c0/bbu show all` (or `tw_cli /c0 show`) too".into());
    }
    (vec![c], notes)
}
