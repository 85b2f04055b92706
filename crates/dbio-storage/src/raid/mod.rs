//! RAID-controller tool output, parsed into one model: controllers, their battery or flash
//! backup, and their virtual drives with the configured (default) and current write policy.
//! The audit rules in [`crate::rules`] work on this model, whatever tool produced it.
//!
//! Parsers take the text a tool printed; [`detect`] says which tool printed it.

mod model;
pub use model::*;

pub mod arcconf;
pub mod cciss;
pub mod hpssa;
pub mod megacli;
pub mod omreport;
pub mod storcli;
pub mod twcli;

/// Says which tool printed `text`, or `None`.
pub fn detect(text: &str) -> Option<Tool> {
    let t = text.trim_start();
    if (t.starts_with('{') || t.starts_with('['))
        && (text.contains("\"Controllers\"") || text.contains("\"Command Status\""))
    {
        return Some(Tool::StorcliJson);
    }
    if megacli::is_summary(text) {
        return Some(Tool::Megacli);
    }
    if text.contains("Default Cache Policy")
        || text.contains("Current Cache Policy")
        || text.contains("BBU status for Adapter")
        || text.contains("Adapter #")
        || text.contains("Virtual Drive Information")
        || text.contains("Get BBU Status Failed")
    {
        return Some(Tool::Megacli);
    }
    if text.contains("CLI Version =") || (text.contains("DG/VD") && text.contains("Cache")) {
        return Some(Tool::Storcli);
    }
    if text.contains("List of Virtual Disks")
        || text.contains("List of Batteries")
        || text.contains("Learn State")
        || text.contains("List of Controllers")
        || text.contains("List of Physical Disks")
        || (text.contains("Cache Memory Size") && text.contains("Patrol Read State"))
    {
        return Some(Tool::Omreport);
    }
    if text.contains("Logical device information")
        || text.contains("Controllers found:")
        || text.contains("Write-cache setting")
    {
        return Some(Tool::Arcconf);
    }
    if text.contains("UnitType")
        || text.contains("BBUReady")
        || (text.contains("Ctl") && text.contains("NotOpt"))
        || text.contains("/bbu Status")
        || text.contains("/u0 ")
        || twcli::has_port_table(text)
    {
        return Some(Tool::TwCli);
    }
    if cciss::is_cciss(text) {
        return Some(Tool::CcissVolStatus);
    }
    if (text.contains("Smart Array") || text.contains("Smart HBA") || text.contains(" in Slot "))
        && (text.contains("Cache Status")
            || text.contains("Controller Status")
            || text.contains("Logical Drive:")
            || text.contains("logicaldrive"))
    {
        return Some(Tool::Ssacli);
    }
    None
}

/// The first three non-empty lines, quoted, for error messages.
pub fn first_lines(text: &str) -> String {
    let lines: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(3)
        .map(|l| {
            let l: String = l.chars().take(100).collect();
            format!("\"{l}\"")
        })
        .collect();
    if lines.is_empty() {
        "(empty)".to_string()
    } else {
        lines.join(" / ")
    }
}

/// Detects the tool and parses `text`.
pub fn parse(text: &str, source: &str) -> Result<RaidReport, RaidParseError> {
    let tool = detect(text).ok_or_else(|| RaidParseError::Unrecognised {
        first_lines: first_lines(text),
    })?;
    parse_as(tool, text, source)
}

/// Parses `text` as the output of `tool`.
pub fn parse_as(tool: Tool, text: &str, source: &str) -> Result<RaidReport, RaidParseError> {
    let (controllers, notes) = match tool {
        Tool::Megacli if megacli::is_summary(text) => megacli::parse_summary(text),
        Tool::Megacli => megacli::parse(text),
        Tool::Storcli => storcli::parse_text(text),
        Tool::StorcliJson => storcli::parse_json(text)?,
        Tool::Ssacli => hpssa::parse(text),
        Tool::CcissVolStatus => cciss::parse(text),
        Tool::Arcconf => arcconf::parse(text),
        Tool::TwCli => twcli::parse(text),
        Tool::Omreport => omreport::parse(text),
    };
    // A tool that says there is no controller (`Number of Controllers = 0`, `No Controller
    // found`) has been understood: its note is the finding. Output with nothing in it is not.
    let empty = controllers.iter().all(Controller::is_empty);
    let says_none = notes.iter().any(|n| {
        let l = n.to_ascii_lowercase();
        l.contains("no controller") || l.contains("not found") || l.contains("in hba mode")
    });
    if (controllers.is_empty() || empty) && !says_none {
        return Err(RaidParseError::Empty {
            tool: tool.name().to_string(),
            first_lines: first_lines(text),
        });
    }
    Ok(RaidReport {
        tool,
        sources: vec![source.to_string()],
        controllers,
        notes,
    })
}

/// Merges reports of the same tool (e.g. `-LDInfo` and `-AdpBbuCmd` saved in two files):
/// controllers with the same id are combined.
pub fn merge(reports: Vec<RaidReport>) -> Vec<RaidReport> {
    let mut out: Vec<RaidReport> = Vec::new();
    for r in reports {
        let family = |t: Tool| {
            if t == Tool::StorcliJson {
                Tool::Storcli
            } else {
                t
            }
        };
        if let Some(existing) = out.iter_mut().find(|o| family(o.tool) == family(r.tool)) {
            existing.sources.extend(r.sources);
            existing.notes.extend(r.notes);
            for c in r.controllers {
                merge_controller(&mut existing.controllers, c);
            }
        } else {
            out.push(r);
        }
    }
    out
}

fn merge_controller(list: &mut Vec<Controller>, c: Controller) {
    let Some(e) = list.iter_mut().find(|e| e.id == c.id) else {
        list.push(c);
        return;
    };
    if e.model.is_none() {
        e.model = c.model;
    }
    if e.cache_bytes.is_none() {
        e.cache_bytes = c.cache_bytes;
    }
    match (&e.battery, c.battery) {
        (None, b) => e.battery = b,
        (Some(old), Some(new))
            if matches!(old.state, BatteryState::Unknown | BatteryState::Present) =>
        {
            e.battery = Some(new)
        }
        _ => {}
    }
    if e.drive_write_cache.is_none() {
        e.drive_write_cache = c.drive_write_cache;
    }
    if e.cache_status.is_none() {
        e.cache_status = c.cache_status;
    }
    if e.cache_disabled.is_none() {
        e.cache_disabled = c.cache_disabled;
    }
    e.problems.extend(c.problems);
    e.faults.extend(c.faults);
    e.background.extend(c.background);
    for pd in c.physical_drives {
        if !e.physical_drives.iter().any(|p| p.id == pd.id) {
            e.physical_drives.push(pd);
        }
    }
    for vd in c.virtual_drives {
        if let Some(ev) = e.virtual_drives.iter_mut().find(|v| v.id == vd.id) {
            merge_vd(ev, vd);
        } else {
            e.virtual_drives.push(vd);
        }
    }
}

fn merge_vd(e: &mut VirtualDrive, v: VirtualDrive) {
    macro_rules! fill {
        ($($f:ident),*) => { $( if e.$f.is_none() { e.$f = v.$f; } )* };
    }
    fill!(
        name,
        raid_level,
        size,
        state,
        configured_write,
        current_write,
        read_ahead,
        drive_write_cache,
        stripe_bytes,
        os_device,
        cache_disabled_reason
    );
    e.write_back_on_bad_battery |= v.write_back_on_bad_battery;
    e.cache_temporarily_disabled |= v.cache_temporarily_disabled;
    for l in v.evidence {
        if !e.evidence.contains(&l) {
            e.evidence.push(l);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unrecognised_quotes_first_lines() {
        let e = parse("hello world\n\nsecond line\nthird\nfourth", "x").unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("\"hello world\" / \"second line\" / \"third\""),
            "{msg}"
        );
        assert!(!msg.contains("fourth"));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_strip("64 KB"), Some(65536));
        assert_eq!(parse_strip("64K"), Some(65536));
        assert_eq!(parse_strip("1 MB"), Some(1 << 20));
        assert_eq!(parse_mem("512MB"), Some(512 << 20));
        assert_eq!(parse_mem("1024 MB"), Some(1 << 30));
        assert_eq!(parse_mem("0MB"), Some(0));
        // Past 64 bits: unknown, not wrapped (or a panic) nor silently u64::MAX.
        assert_eq!(parse_strip("18014398509481984 KB"), None);
        assert_eq!(parse_mem("99999999999999999999 GB"), None);
    }
}
