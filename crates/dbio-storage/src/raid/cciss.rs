//! cciss_vol_status (HP Smart Array, cciss and hpsa drivers): one line per volume,
//! `/dev/sda: (Smart Array P410i) RAID 1 Volume 0 status: OK.`, plus `Controller:` lines
//! with `-V`. It reports volume health only, not cache or battery state.

use super::model::{Controller, VirtualDrive};

struct VolLine<'a> {
    device: &'a str,
    board: &'a str,
    level: &'a str,
    volume: &'a str,
    status: &'a str,
}

fn parse_line(line: &str) -> Option<VolLine<'_>> {
    let line = line.trim();
    if !line.starts_with("/dev/") {
        return None;
    }
    let (device, rest) = line.split_once(": (")?;
    let (board, rest) = rest.split_once(") ")?;
    let (level, rest) = rest.split_once(" Volume ")?;
    let (volume, rest) = rest.split_once(' ')?;
    let status = rest.split_once("status: ")?.1;
    let status = status.split_once('.').map(|x| x.0).unwrap_or(status).trim();
    Some(VolLine {
        device,
        board,
        level,
        volume,
        status,
    })
}

/// True when `text` has a cciss_vol_status volume line.
pub fn is_cciss(text: &str) -> bool {
    text.lines().any(|l| parse_line(l).is_some())
}

fn ctrl_index(ctrls: &mut Vec<Controller>, board: &str) -> usize {
    if let Some(i) = ctrls.iter().position(|c| c.id == board) {
        return i;
    }
    ctrls.push(Controller {
        id: board.to_string(),
        model: Some(board.to_string()),
        ..Default::default()
    });
    ctrls.len() - 1
}

/// `/dev/cciss/c1d0: (Smart Array P800) Enclosure MSA70 (S/N: X) on Bus 3, ... status: OK.`
fn enclosure_line(line: &str) -> Option<(&str, String, String)> {
    let line = line.trim();
    if !line.starts_with("/dev/") {
        return None;
    }
    let (_, rest) = line.split_once(": (")?;
    let (board, rest) = rest.split_once(") ")?;
    if !rest.starts_with("Enclosure ") {
        return None;
    }
    let (what, status) = rest.rsplit_once(" status: ")?;
    Some((
        board,
        what.to_string(),
        status.trim().trim_end_matches('.').trim().to_string(),
    ))
}

/// Parses cciss_vol_status output (with or without `-V`).
pub fn parse(text: &str) -> (Vec<Controller>, Vec<String>) {
    let mut ctrls: Vec<Controller> = Vec::new();
    // (controller index, "temporarily"/"permanently", lines of the reason)
    let mut disabled: Option<(usize, String, Vec<String>)> = None;
    let mut cache_for: Option<usize> = None;
    let mut cache_seen = false;
    let finish = |ctrls: &mut Vec<Controller>, d: &mut Option<(usize, String, Vec<String>)>| {
        if let Some((i, how, lines)) = d.take() {
            let why = lines.join(" ");
            ctrls[i].cache_disabled = Some(if why.is_empty() {
                format!("Write cache {how} disabled")
            } else {
                format!("Write cache {how} disabled: {why}")
            });
        }
    };
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("/dev/") || t.starts_with("Controller:") {
            finish(&mut ctrls, &mut disabled);
            cache_for = None;
        }
        if let Some(rest) = t.strip_prefix("Controller:") {
            ctrl_index(&mut ctrls, rest.trim());
            continue;
        }
        if let Some(v) = parse_line(line) {
            let idx = ctrl_index(&mut ctrls, v.board);
            // "status: OK.   At least one spare drive designated.  At least one spare drive
            // has failed." The sentences after the status are faults when they say so.
            let after = t.split_once("status: ").map(|x| x.1).unwrap_or("");
            for sentence in after.split('.').skip(1).map(str::trim) {
                if sentence.to_ascii_lowercase().contains("fail") {
                    ctrls[idx]
                        .problems
                        .push(format!("{} volume {}: {sentence}", v.device, v.volume));
                }
            }
            ctrls[idx].virtual_drives.push(VirtualDrive {
                id: format!("{} volume {}", v.device, v.volume),
                raid_level: Some(
                    v.level
                        .trim_start_matches("RAID ")
                        .trim_matches(|c| c == '(' || c == ')')
                        .to_string(),
                ),
                state: Some(v.status.to_string()),
                os_device: Some(v.device.to_string()),
                evidence: vec![t.to_string()],
                ..Default::default()
            });
            continue;
        }
        if let Some((board, what, status)) = enclosure_line(line) {
            let idx = ctrl_index(&mut ctrls, board);
            if !status.eq_ignore_ascii_case("ok") {
                ctrls[idx].problems.push(format!("{what}: {status}"));
            }
            continue;
        }
        // "/dev/sg0(Smart Array P410i:0): Non-Volatile Cache status:"
        if t.ends_with("Non-Volatile Cache status:") {
            if let Some(board) = t
                .split_once('(')
                .and_then(|(_, r)| r.rsplit_once(')'))
                .map(|(b, _)| b.rsplit_once(':').map(|x| x.0).unwrap_or(b))
            {
                let idx = ctrl_index(&mut ctrls, board);
                cache_for = Some(idx);
                cache_seen = true;
            }
            continue;
        }
        let Some(idx) = cache_for else { continue };
        let lower = t.to_ascii_lowercase();
        if let Some((_, _, lines)) = disabled.as_mut() {
            lines.push(t.to_string());
            continue;
        }
        if lower.starts_with("write cache temporarily disabled") {
            disabled = Some((idx, "temporarily".into(), Vec::new()));
        } else if lower.starts_with("write cache permanently disabled") {
            disabled = Some((idx, "permanently".into(), Vec::new()));
        } else if let Some(v) = t.strip_prefix("Write cache enabled:") {
            ctrls[idx].cache_status = Some(format!("Write cache enabled: {}", v.trim()));
        } else if let Some(v) = t
            .strip_prefix("Total cache memory:")
            .or_else(|| t.strip_prefix("Write cache memory:"))
        {
            if ctrls[idx].cache_bytes.is_none() || t.starts_with("Total") {
                ctrls[idx].cache_bytes = super::model::parse_mem(&v.replace("MiB", "MB"));
            }
        }
    }
    finish(&mut ctrls, &mut disabled);
    let notes = if cache_seen {
        Vec::new()
    } else {
        vec!["cciss_vol_status without -V reports volume health only; for the cache state run `cciss_vol_status -V` (or save `ssacli ctrl all show config detail`) and pass it with --raid-output".to_string()]
    };
    (ctrls, notes)
}
