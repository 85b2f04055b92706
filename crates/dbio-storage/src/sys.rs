//! A thin reader of the few live values `dbio check` and `dbio align check` need: mounts
//! from /proc/self/mountinfo, and from sysfs the device stack under a mount (partition ->
//! dm/md -> whole disks) with the queue attributes of each disk. The parsers are pure; the
//! readers take the sysfs root so they can be pointed at a copy.

use crate::rules::{PartitionFacts, QueueFacts};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One line of /proc/self/mountinfo.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MountEntry {
    /// Device major number.
    pub major: u32,
    /// Device minor number.
    pub minor: u32,
    /// Mount point.
    pub mountpoint: String,
    /// Per-mount options.
    pub mount_options: Vec<String>,
    /// Filesystem type.
    pub fstype: String,
    /// Mount source (`/dev/sda1`).
    pub source: String,
    /// Superblock options.
    pub super_options: Vec<String>,
}

impl MountEntry {
    /// Per-mount and superblock options together, without duplicates.
    pub fn all_options(&self) -> Vec<String> {
        let mut v = self.mount_options.clone();
        for o in &self.super_options {
            if !v.contains(o) {
                v.push(o.clone());
            }
        }
        v
    }
}

fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses /proc/self/mountinfo.
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let f: Vec<&str> = left.split_whitespace().collect();
            let r: Vec<&str> = right.split_whitespace().collect();
            if f.len() < 6 || r.len() < 2 {
                return None;
            }
            let (maj, min) = f[2].split_once(':')?;
            Some(MountEntry {
                major: maj.parse().ok()?,
                minor: min.parse().ok()?,
                mountpoint: unescape(f[4]),
                mount_options: f[5].split(',').map(String::from).collect(),
                fstype: r[0].to_string(),
                source: unescape(r[1]),
                super_options: r
                    .get(2)
                    .map(|o| o.split(',').map(String::from).collect())
                    .unwrap_or_default(),
            })
        })
        .collect()
}

/// The mount that holds `path` (longest mount point that is a prefix of the canonical path).
pub fn mount_for<'a>(mounts: &'a [MountEntry], path: &Path) -> Option<&'a MountEntry> {
    mounts
        .iter()
        .filter(|m| path.starts_with(&m.mountpoint))
        .max_by_key(|m| m.mountpoint.len())
}

/// What lies under a block device.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stack {
    /// The device itself (`sda3`, `dm-0`, `md0`).
    pub top: String,
    /// Partition facts for every partition in the stack (top or the slaves of dm/md).
    pub partitions: Vec<PartitionFacts>,
    /// Whole disks at the bottom.
    pub disks: Vec<String>,
    /// Device-mapper name (`vg0-data`) when the top is dm.
    pub dm_name: Option<String>,
    /// Device-mapper UUID (`LVM-...`) when the top is dm.
    pub dm_uuid: Option<String>,
    /// queue/minimum_io_size of the top device.
    pub minimum_io_size: Option<u64>,
    /// queue/optimal_io_size of the top device.
    pub optimal_io_size: Option<u64>,
}

fn read_trim(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

fn read_u64(p: &Path) -> Option<u64> {
    read_trim(p)?.parse().ok()
}

/// Resolves the sysfs directory of `major:minor` under `sys` (normally `/sys`).
pub fn device_dir(sys: &Path, major: u32, minor: u32) -> Option<PathBuf> {
    std::fs::canonicalize(sys.join(format!("dev/block/{major}:{minor}"))).ok()
}

/// Walks the stack under the device at `dir` (a sysfs device directory).
pub fn resolve(sys: &Path, dir: &Path) -> Stack {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut st = Stack {
        top: name,
        ..Default::default()
    };
    let queue_dir = if dir.join("partition").exists() {
        dir.parent().map(|p| p.join("queue"))
    } else {
        Some(dir.join("queue"))
    };
    if let Some(q) = &queue_dir {
        st.minimum_io_size = read_u64(&q.join("minimum_io_size"));
        st.optimal_io_size = read_u64(&q.join("optimal_io_size"));
    }
    st.dm_name = read_trim(&dir.join("dm/name"));
    st.dm_uuid = read_trim(&dir.join("dm/uuid"));
    walk(sys, dir, &mut st, 0);
    st
}

fn walk(sys: &Path, dir: &Path, st: &mut Stack, depth: usize) {
    if depth > 8 {
        return;
    }
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if dir.join("partition").exists() {
        let parent = dir.parent().map(Path::to_path_buf).unwrap_or_default();
        let q = parent.join("queue");
        st.partitions.push(PartitionFacts {
            name: name.clone(),
            start_sector: read_u64(&dir.join("start")),
            alignment_offset: read_u64(&dir.join("alignment_offset")),
            physical_block_size: read_u64(&q.join("physical_block_size")),
            minimum_io_size: read_u64(&q.join("minimum_io_size")),
            optimal_io_size: read_u64(&q.join("optimal_io_size")),
        });
        walk(sys, &parent, st, depth + 1);
        return;
    }
    let slaves: Vec<PathBuf> = std::fs::read_dir(dir.join("slaves"))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| std::fs::canonicalize(e.path()).ok())
                .collect()
        })
        .unwrap_or_default();
    if slaves.is_empty() {
        if !st.disks.contains(&name) {
            st.disks.push(name);
        }
    } else {
        for s in slaves {
            walk(sys, &s, st, depth + 1);
        }
    }
    let _ = sys;
}

/// Reads the queue attributes of the whole disk `disk` (`/sys/block/<disk>/queue`).
pub fn queue_facts(sys: &Path, disk: &str) -> QueueFacts {
    let q = sys.join("block").join(disk).join("queue");
    QueueFacts {
        disk: disk.to_string(),
        scheduler: read_trim(&q.join("scheduler")),
        nr_requests: read_u64(&q.join("nr_requests")),
        read_ahead_kb: read_u64(&q.join("read_ahead_kb")),
        write_cache: read_trim(&q.join("write_cache")),
        rotational: read_u64(&q.join("rotational")).map(|v| v != 0),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo() {
        let text = "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n99 27 7:3 / /mnt/my\\040db rw,noatime shared:5 - xfs /dev/loop3 rw,attr2,inode64,sunit=128,swidth=512\n";
        let m = parse_mountinfo(text);
        assert_eq!(m.len(), 2);
        assert_eq!(m[1].mountpoint, "/mnt/my db");
        assert_eq!((m[1].major, m[1].minor), (7, 3));
        assert_eq!(m[1].fstype, "xfs");
        assert!(m[1].all_options().contains(&"sunit=128".to_string()));
        assert_eq!(
            mount_for(&m, Path::new("/mnt/my db/mysql")).unwrap().minor,
            3
        );
        assert_eq!(
            mount_for(&m, Path::new("/var/lib")).unwrap().mountpoint,
            "/"
        );
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
