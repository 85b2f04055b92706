//! Reads a capture directory back into a [`StalkReport`]: a dbio capture (`capture.json` and
//! its files) or the files of one pt-stalk collection (`PREFIX-processlist`, `-mysqladmin`,
//! `-diskstats`, `-trigger`; when the directory holds several collections, the newest prefix).

use super::attrib::{attribute, is_sampler};
use super::format::{parse_mysqladmin, parse_processlist};
use super::trigger::Thread;
use super::StalkError;
use dbio_schema::stalk::{Capture, StalkReport, TimelinePoint};
use dbio_sys::diskstats;
use std::path::{Path, PathBuf};

fn read_opt(path: &Path, notes: &mut Vec<String>) -> Option<String> {
    match std::fs::read(path) {
        Ok(b) => Some(String::from_utf8_lossy(&b).into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            notes.push(format!("{}: {e}; skipped", path.display()));
            None
        }
    }
}

/// Reads `DIR/capture.json`, checking its schema name.
pub fn read_capture(path: &Path) -> Result<Capture, StalkError> {
    let text = std::fs::read_to_string(path).map_err(|source| StalkError::Io {
        path: path.to_path_buf(),
        what: "cannot read the capture index",
        source,
    })?;
    let bad = |message: String| StalkError::CaptureJson {
        path: path.to_path_buf(),
        message,
    };
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let schema = v.get("schema").and_then(|s| s.as_str()).unwrap_or("");
    if schema != dbio_schema::doc::MYSQL_STALK_CAPTURE {
        return Err(bad(format!(
            "schema is {schema:?}, this dbio reads {:?}",
            dbio_schema::doc::MYSQL_STALK_CAPTURE
        )));
    }
    serde_json::from_value(v).map_err(|e| bad(e.to_string()))
}

/// The newest prefix of the pt-stalk files in `dir`, and how many there are.
fn pt_prefix(dir: &Path) -> Result<Option<(String, usize)>, StalkError> {
    let rd = std::fs::read_dir(dir).map_err(|source| StalkError::Io {
        path: dir.to_path_buf(),
        what: "cannot list the capture directory",
        source,
    })?;
    let mut prefixes: Vec<String> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            ["-processlist", "-diskstats", "-mysqladmin"]
                .iter()
                .find_map(|s| n.strip_suffix(s).map(str::to_string))
        })
        .collect();
    prefixes.sort();
    prefixes.dedup();
    let n = prefixes.len();
    Ok(prefixes.pop().map(|p| (p, n)))
}

/// Reads the capture in `dir`.
pub fn read(dir: &Path) -> Result<StalkReport, StalkError> {
    let mut notes = Vec::new();
    let index = dir.join("capture.json");
    let (capture, prefix) = if index.exists() {
        let c = read_capture(&index)?;
        let p = c.prefix.clone();
        (Some(c), p)
    } else {
        match pt_prefix(dir)? {
            Some((p, n)) => {
                if n > 1 {
                    notes.push(format!(
                        "{n} collections in this directory: reading the newest, {p}"
                    ));
                }
                (None, p)
            }
            None => return Err(StalkError::NotACapture(dir.to_path_buf())),
        }
    };
    let file = |s: &str| -> PathBuf { dir.join(format!("{prefix}-{s}")) };
    let pl = read_opt(&file("processlist"), &mut notes)
        .map(|t| parse_processlist(&t))
        .unwrap_or_default();
    let admin = read_opt(&file("mysqladmin"), &mut notes)
        .map(|t| parse_mysqladmin(&t))
        .unwrap_or_default();
    let disk = read_opt(&file("diskstats"), &mut notes).map(|t| diskstats::parse_saved(&t));
    let disk_ts: Vec<f64> = disk
        .as_ref()
        .map(|d| d.samples.iter().map(|s| s.ts).collect())
        .unwrap_or_default();
    // pt-stalk's processlist has no times: take them from its diskstats samples (one per
    // --sleep-collect, as the processlist), else one second apart.
    let base = disk_ts.first().copied().unwrap_or(0.0);
    let ts_of = |i: usize, ts: Option<f64>| {
        ts.or_else(|| disk_ts.get(i).copied())
            .unwrap_or(base + i as f64)
    };
    let fired = capture
        .as_ref()
        .map(|c| c.trigger.fired_epoch_s)
        .or_else(|| pl.first().map(|(t, _)| ts_of(0, *t)))
        .unwrap_or(base);
    let mut pre: Vec<Vec<Thread>> = Vec::new();
    let mut collect: Vec<Vec<Thread>> = Vec::new();
    let mut timeline = Vec::new();
    let n = pl.len().max(admin.len());
    for i in 0..n {
        let ts = ts_of(i, pl.get(i).and_then(|p| p.0));
        let threads = pl.get(i).map(|p| &p.1);
        if let Some(th) = threads {
            if ts < fired {
                pre.push(th.clone());
            } else {
                collect.push(th.clone());
            }
        }
        let get = |j: usize, k: &str| {
            admin
                .get(j)
                .and_then(|s| s.iter().find(|(n, _)| n == k).map(|v| v.1))
        };
        let prev_ts = ts_of(
            i.wrapping_sub(1),
            pl.get(i.wrapping_sub(1)).and_then(|p| p.0),
        );
        let qps = match (i.checked_sub(1), get(i, "Questions")) {
            (Some(j), Some(q)) => get(j, "Questions")
                .filter(|_| ts > prev_ts)
                .map(|p| (q - p) / (ts - prev_ts)),
            _ => None,
        };
        let (dev, util, aw) = disk
            .as_ref()
            .map(|d| busiest(d, ts))
            .unwrap_or((None, None, None));
        timeline.push(TimelinePoint {
            t_s: ts - fired,
            threads_running: get(i, "Threads_running"),
            questions_per_s: qps,
            active_threads: threads
                .map(|t| t.iter().filter(|t| t.active() && !is_sampler(t)).count() as u64),
            busiest_device: dev,
            util_pct: util,
            await_ms: aw,
        });
    }
    if let Some(d) = &disk {
        if !d.problems.is_empty() {
            notes.push(format!(
                "{}: {} malformed lines skipped",
                file("diskstats").display(),
                d.problems.len()
            ));
        }
    }
    let mut attribution = attribute(&pre, &collect);
    if let Some(t) = read_opt(&file("ps-digests"), &mut notes) {
        let (snaps, bad) = super::digests::parse(&t);
        if bad > 0 {
            notes.push(format!(
                "{}: {bad} malformed lines skipped",
                file("ps-digests").display()
            ));
        }
        attribution.digests = super::digests::attribute(&snaps, 20);
        if attribution.digests.is_none() {
            notes.push(format!(
                "{}: not the three snapshots (baseline, trigger, end) the ranking needs",
                file("ps-digests").display()
            ));
        }
    }
    let pt_trigger = if capture.is_none() {
        read_opt(&file("trigger"), &mut notes)
    } else {
        None
    };
    Ok(StalkReport {
        capture_dir: dir.display().to_string(),
        made_by: if capture.is_some() {
            "dbio"
        } else {
            "pt-stalk"
        }
        .into(),
        prefix,
        capture,
        pt_trigger,
        timeline,
        attribution,
        notes,
    })
}

/// The busiest whole device (by %util) over the diskstats interval ending nearest `ts`.
fn busiest(d: &diskstats::SavedSamples, ts: f64) -> (Option<String>, Option<f64>, Option<f64>) {
    let Some(j) = d
        .samples
        .iter()
        .enumerate()
        .skip(1)
        .min_by(|a, b| (a.1.ts - ts).abs().total_cmp(&(b.1.ts - ts).abs()))
        .map(|x| x.0)
    else {
        return (None, None, None);
    };
    let (a, b) = (&d.samples[j - 1], &d.samples[j]);
    let dt = b.ts - a.ts;
    if dt <= 0.0 {
        return (None, None, None);
    }
    let names: Vec<&str> = b.stats.iter().map(|s| s.name.as_str()).collect();
    let mut best: Option<(String, f64, f64)> = None;
    for cur in &b.stats {
        if cur.name.starts_with("loop")
            || cur.name.starts_with("ram")
            || diskstats::looks_like_partition(&cur.name, &names)
        {
            continue;
        }
        let Some(prev) = diskstats::find(&a.stats, &cur.name) else {
            continue;
        };
        if let Ok(f) = diskstats::compute(prev, cur, dt) {
            if best.as_ref().is_none_or(|b| f.util_pct > b.1) {
                best = Some((cur.name.clone(), f.util_pct, super::trigger::await_ms(&f)));
            }
        }
    }
    match best {
        Some((n, u, a)) => (Some(n), Some(u), Some(a)),
        None => (None, None, None),
    }
}
