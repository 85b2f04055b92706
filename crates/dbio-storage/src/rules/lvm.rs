//! LVM rules: snapshots on the volume that holds a mount (read from `lvs`) and the alignment
//! of a physical volume's data area.

use dbio_schema::check::{Finding, Status};
use serde::Serialize;

/// One line of `lvs`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LvInfo {
    /// Volume group.
    pub vg: String,
    /// Logical volume.
    pub lv: String,
    /// lv_attr.
    pub attr: String,
    /// Origin LV (for snapshots).
    pub origin: String,
    /// COW usage percent (classic snapshots) or data percent (thin).
    pub percent: Option<f64>,
}

/// The `lvs` command whose output [`parse_lvs`] reads.
pub const LVS_ARGS: &[&str] = &[
    "--noheadings",
    "--separator",
    "|",
    "-o",
    "vg_name,lv_name,lv_attr,origin,snap_percent,data_percent",
];

/// Parses `lvs --noheadings --separator '|' -o vg_name,lv_name,lv_attr,origin,snap_percent,data_percent`.
pub fn parse_lvs(text: &str) -> Vec<LvInfo> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.trim().split('|').map(str::trim).collect();
            if f.len() < 4 {
                return None;
            }
            let pct = |s: Option<&&str>| s.and_then(|s| s.replace(',', ".").parse::<f64>().ok());
            Some(LvInfo {
                vg: f[0].to_string(),
                lv: f[1].to_string(),
                attr: f[2].to_string(),
                origin: f[3].to_string(),
                percent: pct(f.get(4)).or_else(|| pct(f.get(5))),
            })
        })
        .collect()
}

/// Splits a device-mapper LVM name `vg--x-lv` into (`vg-x`, `lv`) (dm doubles dashes in names).
pub fn split_dm_lvm_name(name: &str) -> Option<(String, String)> {
    let b = name.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'-' {
            if i + 1 < b.len() && b[i + 1] == b'-' {
                i += 2;
                continue;
            }
            let vg = name[..i].replace("--", "-");
            let lv = name[i + 1..].replace("--", "-");
            return Some((vg, lv));
        }
        i += 1;
    }
    None
}

/// LVM snapshot rule for the LV `vg/lv` that holds a mount.
pub fn lvm_snapshots(mount: &str, vg: &str, lv: &str, lvs: &[LvInfo]) -> Finding {
    let why = "Reads of an LV with a classic (copy-on-write) snapshot must check the snapshot's exception table; as the COW area fills, reads slow down (a 600 GB mylvmbackup took 11 h instead of under 3 h), and a full snapshot is invalidated.";
    let snaps: Vec<&LvInfo> = lvs
        .iter()
        .filter(|s| s.vg == vg && s.origin == lv)
        .collect();
    let dev = format!("{mount} ({vg}/{lv})");
    if snaps.is_empty() {
        return Finding::new(
            "lvm.snapshot",
            &dev,
            Status::Ok,
            "no snapshots of this LV",
            why,
        );
    }
    let ev: Vec<String> = snaps
        .iter()
        .map(|s| match s.percent {
            Some(p) => format!("snapshot {}/{} attr {} {p:.2}% used", s.vg, s.lv, s.attr),
            None => format!("snapshot {}/{} attr {}", s.vg, s.lv, s.attr),
        })
        .collect();
    let max = snaps
        .iter()
        .filter_map(|s| s.percent)
        .fold(0.0f64, f64::max);
    let invalid = snaps.iter().any(|s| s.attr.chars().nth(4) == Some('I'));
    let status = if invalid || max >= 80.0 {
        Status::Crit
    } else {
        Status::Warn
    };
    let names: Vec<String> = snaps.iter().map(|s| format!("{}/{}", s.vg, s.lv)).collect();
    Finding::new(
        "lvm.snapshot",
        &dev,
        status,
        format!(
            "{} snapshot(s) over the data, fullest {max:.1}% COW used{}",
            snaps.len(),
            if invalid { ", one is invalid" } else { "" }
        ),
        why,
    )
    .evidence(ev)
    .fix(format!(
        "finish the backup and lvremove {}",
        names.join(" ")
    ))
}

/// Alignment of an LVM2 physical volume's data area: `pe_start` bytes into a PV that itself
/// starts `pv_start_bytes` into its disk (0 for a whole-disk PV). `grain` is the boundary to
/// check: the stripe unit, else the disk's optimal or minimum I/O size, else 1 MiB.
pub fn pv_alignment(
    pv: &str,
    pv_start_bytes: u64,
    pe_start_bytes: u64,
    grain: u64,
    grain_name: &str,
) -> Finding {
    let why = "LVM places every logical volume's extents from pe_start on; a PV whose data area starts off the stripe boundary misaligns every LV on it even when the partition is aligned.";
    let abs = pv_start_bytes + pe_start_bytes;
    let ev = vec![format!("pe_start {pe_start_bytes} bytes into the PV, PV at byte {pv_start_bytes} of the disk: data at byte {abs}")];
    if grain == 0 || abs.is_multiple_of(grain) {
        Finding::new(
            "lvm.pe_start",
            pv,
            Status::Ok,
            format!("LVM data area at byte {abs}: aligned to {grain_name}"),
            why,
        )
        .evidence(ev)
    } else {
        Finding::new(
            "lvm.pe_start",
            pv,
            Status::Warn,
            format!(
                "LVM data area at byte {abs}: not aligned to {grain_name} (remainder {} bytes)",
                abs % grain
            ),
            why,
        )
        .evidence(ev)
        .fix(format!(
            "recreate the PV with pvcreate --dataalignment {} (after moving the data off: pvmove)",
            crate::align::size_arg(grain)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pv_alignment_rule() {
        assert_eq!(
            pv_alignment("sdb1", 1 << 20, 1 << 20, 65536, "stripe unit 64k").status,
            Status::Ok
        );
        let f = pv_alignment("sdb1", 32256, 1 << 20, 65536, "stripe unit 64k");
        assert_eq!(f.status, Status::Warn);
        assert!(f.summary.contains("remainder 32256 bytes"), "{}", f.summary);
        assert!(f.fix.unwrap().contains("--dataalignment 64k"));
    }

    #[test]
    fn lvs_and_snapshots() {
        let text = "  vg0|data|owi-aos---||||\n  vg0|data_snap|swi-a-s---|data|45.31|\n  vg0|other_snap|swi-a-s---|other|85.00|\n";
        let lvs = parse_lvs(text);
        assert_eq!(lvs.len(), 3);
        let f = lvm_snapshots("/var/lib/mysql", "vg0", "data", &lvs);
        assert_eq!(f.status, Status::Warn);
        assert!(f.evidence[0].contains("45.31% used"));
        assert_eq!(
            lvm_snapshots("/x", "vg0", "other", &lvs).status,
            Status::Crit
        );
        assert_eq!(lvm_snapshots("/y", "vg0", "none", &lvs).status, Status::Ok);
    }

    #[test]
    fn dm_names() {
        assert_eq!(
            split_dm_lvm_name("vg0-data"),
            Some(("vg0".into(), "data".into()))
        );
        assert_eq!(
            split_dm_lvm_name("my--vg-my--lv"),
            Some(("my-vg".into(), "my-lv".into()))
        );
        assert_eq!(split_dm_lvm_name("nodash"), None);
    }
}
