//! Mount-option rules: write barriers, atime, ext4 data mode, XFS inode64, with the defaults of
//! old kernels.

use dbio_schema::check::{Finding, Status};
use serde::Serialize;

/// A mounted filesystem.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MountFacts {
    /// Mount point.
    pub mountpoint: String,
    /// Source device.
    pub source: String,
    /// Filesystem type.
    pub fstype: String,
    /// Mount options (per-mount and superblock options together).
    pub options: Vec<String>,
    /// Filesystem size in bytes.
    pub size_bytes: Option<u64>,
    /// Kernel write-cache mode of the disk underneath (`write back`/`write through`).
    pub write_cache: Option<String>,
    /// `uname -r` (defaults changed over time: ext3 barriers in 3.1, XFS inode64 in 3.7).
    pub kernel_release: Option<String>,
}

/// True when `release` (`2.6.32-431.el6.x86_64`, `6.1.0-18-amd64`) is older than major.minor;
/// `None` when it cannot be parsed.
pub fn kernel_before(release: &str, major: u32, minor: u32) -> Option<bool> {
    let mut it = release
        .split(|c: char| !c.is_ascii_digit())
        .filter(|x| !x.is_empty());
    let ma: u32 = it.next()?.parse().ok()?;
    let mi: u32 = it.next()?.parse().ok()?;
    Some((ma, mi) < (major, minor))
}

impl MountFacts {
    fn kernel_before(&self, major: u32, minor: u32) -> bool {
        self.kernel_release
            .as_deref()
            .and_then(|r| kernel_before(r, major, minor))
            == Some(true)
    }

    fn has(&self, o: &str) -> bool {
        self.options.iter().any(|x| x == o)
    }
    fn value(&self, key: &str) -> Option<&str> {
        self.options
            .iter()
            .find_map(|x| x.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
    }
}

/// All mount-option rules for one mount.
pub fn mount_rules(m: &MountFacts) -> Vec<Finding> {
    let dev = m.mountpoint.as_str();
    let opts = m.options.join(",");
    let mut out = Vec::new();
    let atime_why = "Updating the access time turns reads into writes; databases never use atime. relatime writes it at most once a day per file, noatime never.";
    let remount =
        |o: &str| format!("mount -o remount,{o} {dev}; add {o} to the options in /etc/fstab");
    // mountinfo shows relatime or noatime when set; neither means strictatime.
    let strict = m.has("strictatime") || (!m.has("noatime") && !m.has("relatime"));
    out.push(if strict {
        Finding::new(
            "mount.atime",
            dev,
            Status::Warn,
            "strictatime (neither noatime nor relatime): every read writes an access time",
            atime_why,
        )
        .evidence([format!("options: {opts}")])
        .fix(remount("noatime"))
    } else if m.has("noatime") {
        Finding::new("mount.atime", dev, Status::Ok, "noatime", atime_why)
    } else {
        Finding::new(
            "mount.atime",
            dev,
            Status::Ok,
            "relatime (noatime saves a daily atime write per file)",
            atime_why,
        )
    });
    // ext3 mounted without barriers by default before Linux 3.1.
    let ext3_default = m.fstype == "ext3"
        && m.value("barrier").is_none()
        && !m.has("barrier")
        && m.kernel_before(3, 1);
    let barrier_off = m.has("nobarrier") || m.value("barrier") == Some("0") || ext3_default;
    let barrier_why = "nobarrier/barrier=0 stops the filesystem from sending cache flushes: with a volatile write cache, a power cut loses writes the database already saw as durable and can corrupt the journal. It is safe only with a battery- or flash-backed cache.";
    if barrier_off {
        let wc = m.write_cache.as_deref().unwrap_or("unknown");
        let status = if wc == "write back" {
            Status::Crit
        } else {
            Status::Warn
        };
        out.push(
            Finding::new("mount.barrier", dev, status, format!("cache flushes disabled ({}) on a disk whose kernel cache mode is {wc}", if m.has("nobarrier") { "nobarrier" } else if ext3_default { "ext3 defaults to barrier=0 before Linux 3.1" } else { "barrier=0" }), barrier_why)
                .evidence([format!("options: {opts}"), format!("write_cache: {wc}")])
                .fix(format!("mount -o remount,barrier=1 {dev} and put barrier=1 (not nobarrier/barrier=0) in /etc/fstab")),
        );
    } else {
        out.push(Finding::new(
            "mount.barrier",
            dev,
            Status::Ok,
            "cache flushes enabled",
            barrier_why,
        ));
    }
    if m.fstype == "xfs" {
        let why = "With 32-bit inodes (inode32) XFS keeps all inodes, and so the first extents of new files, in the first TiB of the filesystem; in the articles' benchmark that cost 20-40% until the filesystem was mounted with inode64 (the default since Linux 3.7).";
        let big = m.size_bytes.is_some_and(|s| s > 1u64 << 40);
        let inode32 = m.has("inode32") || (m.kernel_before(3, 7) && !m.has("inode64"));
        out.push(if inode32 && big {
            Finding::new(
                "mount.xfs_inode64",
                dev,
                Status::Warn,
                "inode32 on a filesystem larger than 1 TiB",
                why,
            )
            .evidence([format!("options: {opts}")])
            .fix(remount("inode64"))
        } else if inode32 {
            Finding::new(
                "mount.xfs_inode64",
                dev,
                Status::Ok,
                "inode32, but the filesystem is under 1 TiB",
                why,
            )
        } else {
            Finding::new(
                "mount.xfs_inode64",
                dev,
                Status::Ok,
                "inode64 (default)",
                why,
            )
        });
    }
    if m.fstype == "ext4" || m.fstype == "ext3" {
        let why = "data=journal writes every data block twice (the database already journals its own writes); data=writeback lets files show stale blocks after a crash. data=ordered is the safe default.";
        out.push(match m.value("data") {
            Some("journal") => Finding::new(
                "mount.ext4_data",
                dev,
                Status::Warn,
                "data=journal: every data block is written twice",
                why,
            )
            .evidence([format!("options: {opts}")])
            .fix("remove data=journal from /etc/fstab and remount (data=ordered)"),
            Some("writeback") => Finding::new(
                "mount.ext4_data",
                dev,
                Status::Warn,
                "data=writeback: stale blocks can appear in files after a crash",
                why,
            )
            .evidence([format!("options: {opts}")])
            .fix("remove data=writeback from /etc/fstab and remount (data=ordered)"),
            Some(o) => Finding::new("mount.ext4_data", dev, Status::Ok, format!("data={o}"), why),
            None => Finding::new(
                "mount.ext4_data",
                dev,
                Status::Ok,
                "data=ordered (default)",
                why,
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_option_rules() {
        let m = MountFacts {
            mountpoint: "/data".into(),
            fstype: "ext4".into(),
            options: vec![
                "rw".into(),
                "relatime".into(),
                "barrier=0".into(),
                "data=writeback".into(),
            ],
            write_cache: Some("write back".into()),
            ..Default::default()
        };
        let f = mount_rules(&m);
        let get = |id: &str| f.iter().find(|x| x.rule == id).unwrap().status;
        assert_eq!(get("mount.barrier"), Status::Crit);
        assert_eq!(get("mount.ext4_data"), Status::Warn);
        assert_eq!(get("mount.atime"), Status::Ok);
        let m = MountFacts {
            mountpoint: "/db".into(),
            fstype: "xfs".into(),
            options: vec!["inode32".into(), "nobarrier".into()],
            size_bytes: Some(2 << 40),
            write_cache: Some("write through".into()),
            ..Default::default()
        };
        let f = mount_rules(&m);
        let get = |id: &str| f.iter().find(|x| x.rule == id).unwrap().status;
        assert_eq!(get("mount.xfs_inode64"), Status::Warn);
        assert_eq!(get("mount.barrier"), Status::Warn);
    }

    #[test]
    fn kernel_defaults() {
        assert_eq!(kernel_before("2.6.32-431.el6.x86_64", 3, 1), Some(true));
        assert_eq!(kernel_before("6.18.44-fc-v769", 3, 7), Some(false));
        assert_eq!(kernel_before("3.7.0", 3, 7), Some(false));
        assert_eq!(kernel_before("garbage", 3, 7), None);
        let old = MountFacts {
            mountpoint: "/db".into(),
            fstype: "ext3".into(),
            options: vec!["rw".into(), "noatime".into()],
            write_cache: Some("write back".into()),
            kernel_release: Some("2.6.32-431.el6.x86_64".into()),
            ..Default::default()
        };
        let f = mount_rules(&old);
        let b = f.iter().find(|x| x.rule == "mount.barrier").unwrap();
        assert_eq!(b.status, Status::Crit);
        assert!(b.summary.contains("ext3 defaults to barrier=0"));
        let new = MountFacts {
            kernel_release: Some("5.10.0".into()),
            ..old.clone()
        };
        assert_eq!(
            mount_rules(&new)
                .iter()
                .find(|x| x.rule == "mount.barrier")
                .unwrap()
                .status,
            Status::Ok
        );
        let xfs = MountFacts {
            fstype: "xfs".into(),
            size_bytes: Some(4 << 40),
            ..old
        };
        assert_eq!(
            mount_rules(&xfs)
                .iter()
                .find(|x| x.rule == "mount.xfs_inode64")
                .unwrap()
                .status,
            Status::Warn
        );
    }
}
