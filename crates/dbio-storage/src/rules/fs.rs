//! Filesystem stripe geometry (XFS sunit/swidth, ext4 stride/stripe_width) against the RAID
//! geometry the user gave.

use crate::align::{check_geometry, GeometryMatch};
use dbio_schema::check::{Finding, Status};
use serde::Serialize;

/// Filesystem stripe geometry facts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GeometryFacts {
    /// Mount point or device.
    pub name: String,
    /// `xfs`, `ext4`.
    pub fstype: String,
    /// Filesystem stripe unit in bytes.
    pub su_bytes: u64,
    /// Filesystem stripe width in bytes.
    pub sw_bytes: u64,
    /// Filesystem block size in bytes (ext4 stride is counted in blocks).
    pub block_bytes: u64,
    /// The device node the filesystem is on (for the fix command).
    pub device: String,
    /// Expected stripe unit (from --stripe or the kernel's minimum_io_size).
    pub expected_su: Option<u64>,
    /// Expected data disks (from --disks/--raid, or optimal_io_size / minimum_io_size).
    pub expected_data_disks: Option<u32>,
    /// Where the expectation comes from.
    pub source: String,
}

/// Filesystem geometry rule.
pub fn fs_geometry(g: &GeometryFacts) -> Finding {
    let why = "XFS and ext4 place allocation groups, inodes and large writes on stripe boundaries only when they know the stripe unit and width; a wrong geometry spreads writes into partial stripes (read-modify-write on RAID 5/6).";
    let fmt = |b: u64| {
        if b == 0 {
            "0".to_string()
        } else {
            crate::align::size_arg(b)
        }
    };
    let ev = vec![format!(
        "{}: su={} sw_bytes={} block={}",
        g.fstype,
        fmt(g.su_bytes),
        fmt(g.sw_bytes),
        fmt(g.block_bytes)
    )];
    let Some(stripe) = g.expected_su else {
        return Finding::new("fs.geometry", &g.name, Status::Ok, format!("{} su={} swidth={}: no RAID geometry known to compare with (give --stripe, --disks, --raid)", g.fstype, fmt(g.su_bytes), fmt(g.sw_bytes)), why).evidence(ev);
    };
    let c = check_geometry(g.su_bytes, g.sw_bytes, stripe, g.expected_data_disks);
    let exp = match c.expected_sw_bytes {
        Some(w) => format!("su={} swidth={} ({})", fmt(stripe), fmt(w), g.source),
        None => format!("su={} ({})", fmt(stripe), g.source),
    };
    let blk = g.block_bytes.max(1024);
    let fix = match (g.fstype.as_str(), g.expected_data_disks) {
        ("xfs", Some(d)) => format!(
            "mount -o sunit={},swidth={} (512-byte units), or mkfs.xfs -d su={},sw={d} when recreating",
            stripe / 512,
            stripe / 512 * d as u64,
            fmt(stripe)
        ),
        ("xfs", None) => format!("mkfs.xfs -d su={},sw=DATA_DISKS when recreating", fmt(stripe)),
        (_, Some(d)) => format!(
            "tune2fs -E stride={},stripe_width={} {} (in {}-byte blocks)",
            stripe / blk,
            stripe / blk * d as u64,
            g.device,
            blk
        ),
        _ => format!("tune2fs -E stride={} {} (in {}-byte blocks)", stripe / blk, g.device, blk),
    };
    match c.verdict {
        GeometryMatch::Match => Finding::new(
            "fs.geometry",
            &g.name,
            Status::Ok,
            format!("matches {exp}"),
            why,
        )
        .evidence(ev),
        GeometryMatch::NoGeometry => Finding::new(
            "fs.geometry",
            &g.name,
            Status::Warn,
            format!("filesystem has no stripe geometry; expected {exp}"),
            why,
        )
        .evidence(ev)
        .fix(fix),
        GeometryMatch::Mismatch => Finding::new(
            "fs.geometry",
            &g.name,
            Status::Warn,
            format!(
                "filesystem su={} swidth={} but expected {exp}",
                fmt(g.su_bytes),
                fmt(g.sw_bytes)
            ),
            why,
        )
        .evidence(ev)
        .fix(fix),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_rule() {
        let g = GeometryFacts {
            name: "/db".into(),
            fstype: "xfs".into(),
            su_bytes: 65536,
            sw_bytes: 131072,
            block_bytes: 4096,
            device: "/dev/sdb1".into(),
            expected_su: Some(65536),
            expected_data_disks: Some(4),
            source: "--stripe 64k --disks 8 --raid 10".into(),
        };
        let f = fs_geometry(&g);
        assert_eq!(f.status, Status::Warn);
        assert!(f.fix.unwrap().contains("sunit=128,swidth=512"));
        let e = GeometryFacts {
            fstype: "ext4".into(),
            su_bytes: 0,
            sw_bytes: 0,
            ..g
        };
        let f = fs_geometry(&e);
        assert!(
            f.summary.starts_with("filesystem has no stripe geometry"),
            "{}",
            f.summary
        );
        assert_eq!(
            f.fix.unwrap(),
            "tune2fs -E stride=16,stripe_width=64 /dev/sdb1 (in 4096-byte blocks)"
        );
    }
}
