//! cciss_vol_status (HP Smart Array, cciss and hpsa drivers): one line per volume,
//! `/dev/sda: (Smart Array P410i) RAID 1 Volume 0 status: OK.`, plus `Controller:` lines
//! with `-V`. It reports volume health only, not cache or battery state.

use super::{Controller, VirtualDrive};

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

/// Parses cciss_vol_status output.
pub fn parse(text: &str) -> (Vec<Controller>, Vec<String>) {
    let mut ctrls: Vec<Controller> = Vec::new();
    for line in text.lines() {
        let Some(v) = parse_line(line) else { continue };
        let idx = match ctrls.iter().position(|c| c.id == v.board) {
            Some(i) => i,
            None => {
                ctrls.push(Controller {
                    id: v.board.to_string(),
                    model: Some(v.board.to_string()),
                    ..Default::default()
                });
                ctrls.len() - 1
            }
        };
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
            evidence: vec![line.trim().to_string()],
            ..Default::default()
        });
    }
    let notes = vec![
        "cciss_vol_status reports volume health only; for the cache and battery checks save `ssacli ctrl all show config detail` and pass it with --raid-output".to_string(),
    ];
    (ctrls, notes)
}
