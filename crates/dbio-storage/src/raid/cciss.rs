//! cciss_vol_status (HP Smart Array, cciss and hpsa drivers): one line per volume,
//! `/dev/sda: (Smart Array P410i) RAID 1 Volume 0 status: OK.`, plus `Controller:` lines
//! with `-V`, which adds the cache state and the drive lists (`Physical drives:` with each
//! drive's status, `Failed drives:`, `'Replacement' drives:`).

use super::model::{Controller, PhysicalDrive, VirtualDrive};

/// Which drive list of `cciss_vol_status -V` a drive line belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum DriveList {
    /// `Physical drives: N`: every drive, each with its status word.
    Physical,
    /// `Failed drives:`: no status word, the list says it.
    Failed,
    /// `'Replacement' drives:`: drives put in for a failed one, the rebuild not begun.
    Replacement,
}

/// A drive line, `connector 1I box 1 bay 4  <model:40> <serial:40> <firmware:8> <status>`:
/// the drive as `1I:1:4` (port:box:bay, as ssacli names it), the words of the line, and the
/// status word when the line has one (fields are fixed-width, one or two blanks after the
/// bay number, as check_raid's cciss plugin reads them).
fn drive_line(line: &str) -> Option<(String, String, Option<String>)> {
    let t = line.trim_start();
    let rest = t.strip_prefix("connector ")?;
    let mut w = rest.split(' ');
    let port = w.next()?;
    let (box_no, bay) = match (w.next()?, w.next()?, w.next()?, w.next()?) {
        ("box", b, "bay", y) => (b, y),
        _ => return None,
    };
    if !bay.chars().all(|c| c.is_ascii_digit()) || bay.is_empty() {
        return None;
    }
    let id = format!("{port}:{box_no}:{bay}");
    let head = format!("connector {port} box {box_no} bay {bay}");
    let after: Vec<char> = t[head.len()..].chars().collect();
    let mut status = None;
    for skip in [2, 1] {
        if after.len() < skip || after[..skip].iter().any(|c| *c != ' ') {
            continue;
        }
        let r = &after[skip..];
        if r.len() >= 92 && r[40] == ' ' && r[81] == ' ' && r[90] == ' ' {
            let s: String = r[91..].iter().collect();
            status = Some(s.trim().to_string()).filter(|s| !s.is_empty());
            break;
        }
    }
    let words = t.split_whitespace().collect::<Vec<_>>().join(" ");
    Some((id, words, status))
}

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

/// One drive line of a drive list. A `Failed drives:` entry under a volume whose status is
/// OK is a failed spare (the volume line says so): it is named in that fault, a WARN, not
/// made a failed member.
fn drive_in_list(
    c: &mut Controller,
    kind: DriveList,
    vol_ok: bool,
    id: String,
    words: String,
    status: Option<String>,
) {
    let state = match kind {
        DriveList::Physical => match status {
            Some(s) => s,
            None => return,
        },
        DriveList::Failed if vol_ok => {
            if let Some(p) = c
                .problems
                .iter_mut()
                .rev()
                .find(|p| p.to_ascii_lowercase().contains("spare drive has failed"))
            {
                p.push_str(&format!(" (failed drive {id}: {words})"));
            } else {
                c.problems.push(format!("failed spare drive {id}: {words}"));
            }
            return;
        }
        DriveList::Failed => "Failed".to_string(),
        DriveList::Replacement => {
            "replacement drive, the volume's rebuild not yet begun".to_string()
        }
    };
    let line = match kind {
        DriveList::Physical => format!("Physical drives: {words}"),
        DriveList::Failed => format!("Failed drives: {words}"),
        DriveList::Replacement => format!("'Replacement' drives: {words}"),
    };
    if let Some(d) = c.physical_drives.iter_mut().find(|d| d.id == id) {
        d.state = Some(state);
        d.evidence.push(line);
    } else {
        c.physical_drives.push(PhysicalDrive {
            id,
            state: Some(state),
            evidence: vec![line],
            ..Default::default()
        });
    }
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
    // The drive list being read: controller, the volume line's problem sentences (a failed
    // spare) and whether the volume is OK.
    let mut list: Option<(DriveList, usize, bool)> = None;
    let mut last_volume: Option<(usize, bool)> = None;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("/dev/") || t.starts_with("Controller:") {
            finish(&mut ctrls, &mut disabled);
            cache_for = None;
            list = None;
            last_volume = None;
        }
        if let Some((idx, ok)) = last_volume {
            let kind = if t.starts_with("Physical drives:") {
                Some(DriveList::Physical)
            } else if t == "Failed drives:" {
                Some(DriveList::Failed)
            } else if t == "'Replacement' drives:" {
                Some(DriveList::Replacement)
            } else {
                None
            };
            if let Some(k) = kind {
                list = Some((k, idx, ok));
                continue;
            }
        }
        if let (Some((kind, idx, vol_ok)), Some((id, words, status))) = (list, drive_line(line)) {
            drive_in_list(&mut ctrls[idx], kind, vol_ok, id, words, status);
            continue;
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
            last_volume = Some((idx, v.status.eq_ignore_ascii_case("ok")));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of check_raid's cciss captures (testdata/raid/real): a drive with its status, the
    /// wider `-V` layout of cciss_vol_status 1.11, and a failed drive without one.
    #[test]
    fn drive_lines() {
        let ok = "         connector 1I box 1 bay 1                 HP      EF0300FATFD                                      JXY1BLJN     HPDB OK";
        let (id, _, st) = drive_line(ok).unwrap();
        assert_eq!((id.as_str(), st.as_deref()), ("1I:1:1", Some("OK")));
        let wide = "         connector 1I box 1 bay 1                  HP      EG0900FCVBL                          S0N2BEHX0000K50648RD     HPD9 OK";
        let (id, _, st) = drive_line(wide).unwrap();
        assert_eq!((id.as_str(), st.as_deref()), ("1I:1:1", Some("OK")));
        let failed = "         connector 1I box 1 bay 4                 HP      EF0300FARMU                          6SJ8ND840000N5191GHP     HPD6";
        let (id, words, st) = drive_line(failed).unwrap();
        assert_eq!((id.as_str(), st), ("1I:1:4", None));
        assert!(words.contains("EF0300FARMU"), "{words}");
        assert!(drive_line("  Physical drives: 3").is_none());
    }
}
