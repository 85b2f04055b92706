//! The device stack under a path: its mount, the block device, and through partitions,
//! device-mapper/LVM (sysfs `slaves/`, `dm/name`) and md RAID down to the physical disks, with
//! each level's queue attributes.
//!
//! ```
//! let st = dbio_sys::stack::resolve(std::path::Path::new("/"))?;
//! let fs = st.mount.as_ref().map(|m| m.fstype.as_str());
//! for disk in st.leaves() {
//!     let q = disk.queue.as_ref();
//!     let _sched = q.and_then(|q| q.scheduler.as_deref());
//!     let _rotational = q.and_then(|q| q.rotational);
//! }
//! assert!(fs.is_some());
//! # Ok::<(), dbio_sys::Error>(())
//! ```

use crate::mounts::{block_dev_numbers, mount_for, name_of_dev, read_mountinfo_in, MountEntry};
use crate::sysfs::{parse_bool, parse_major_minor, parse_u64, parse_uevent, read_attr, Sys};
use crate::Error;
use dbio_schema::stack::{Device, DeviceKind, Mount, Stack};
use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

impl From<&MountEntry> for Mount {
    fn from(e: &MountEntry) -> Self {
        Mount {
            source: e.source.clone(),
            mountpoint: e.mountpoint.clone(),
            fstype: e.fstype.clone(),
            mount_options: e.mount_options.clone(),
            super_options: e.super_options.clone(),
            dev: format!("{}:{}", e.major, e.minor),
            root: e.root.clone(),
        }
    }
}

/// Resolves `path` (a file or directory, not necessarily a mount point) to its mount and the
/// block devices under it. tmpfs, overlay, NFS and other filesystems without a block device
/// give an empty device list and a note. A path that does not exist is resolved through its
/// nearest existing parent, with a note; only a path with no existing parent is an error.
pub fn resolve(path: &Path) -> Result<Stack, Error> {
    resolve_in(&Sys::live(), path)
}

/// Resolves a block device node (`/dev/vda`, `/dev/loop0`, `/dev/mapper/vg-lv`) or a bare
/// kernel name (`vda`, `dm-0`) to the stack under it.
pub fn resolve_device(dev: &Path) -> Result<Stack, Error> {
    let sys = Sys::live();
    let name = if dev.exists() {
        let (ma, mi) = block_dev_numbers(dev)?;
        name_of_dev(&sys, ma, mi).ok_or_else(|| unknown(&sys, &format!("{}", dev.display())))?
    } else {
        let s = dev.to_string_lossy().to_string();
        let bare = s.strip_prefix("/dev/").unwrap_or(&s).to_string();
        if !bare.contains('/') && sys.class_block(&bare).exists() {
            bare
        } else if dev.is_absolute() || s.contains('/') {
            return Err(Error::NotFound {
                path: dev.to_path_buf(),
            });
        } else {
            return Err(unknown(&sys, &s));
        }
    };
    let mut stack = Stack {
        query: dev.display().to_string(),
        resolved_path: None,
        mount: None,
        devices: Vec::new(),
        leaf_disks: Vec::new(),
        notes: Vec::new(),
        kernel_release: crate::kernel_release().ok(),
    };
    build_devices(&sys, &name, &mut stack);
    Ok(stack)
}

fn unknown(sys: &Sys, name: &str) -> Error {
    Error::UnknownDevice {
        name: name.to_string(),
        known: sys.block_devices().unwrap_or_default().join(", "),
    }
}

pub(crate) fn resolve_in(sys: &Sys, path: &Path) -> Result<Stack, Error> {
    let mut notes = Vec::new();
    // The nearest existing ancestor, canonical.
    let canon = crate::mounts::nearest_existing(path)?;
    if canon != std::fs::canonicalize(path).unwrap_or_default() {
        notes.push(format!(
            "{} does not exist; showing {}, its nearest existing parent",
            path.display(),
            canon.display()
        ));
    }
    let st_dev = std::fs::metadata(&canon)
        .map_err(|e| Error::io(&canon, e))?
        .dev();
    let (smaj, smin) = crate::dev_major_minor(st_dev);
    let mounts = read_mountinfo_in(sys)?;
    let entry = mount_for(&mounts, &canon);
    let mut stack = Stack {
        query: path.display().to_string(),
        resolved_path: Some(canon.display().to_string()),
        mount: entry.map(Mount::from),
        devices: Vec::new(),
        leaf_disks: Vec::new(),
        notes,
        kernel_release: crate::kernel_release().ok(),
    };
    // The device: the file's st_dev, else the mount's major:minor, else the mount source node
    // (btrfs and some others report an anonymous 0:xx st_dev).
    let mut candidates = vec![(smaj, smin)];
    if let Some(e) = entry {
        candidates.push((e.major, e.minor));
        if e.source.starts_with("/dev/") {
            if let Ok(mm) = block_dev_numbers(Path::new(&e.source)) {
                candidates.push(mm);
            }
        }
    }
    let name = candidates
        .iter()
        .filter(|(ma, _)| *ma != 0)
        .find_map(|&(ma, mi)| name_of_dev(sys, ma, mi));
    match name {
        Some(n) => build_devices(sys, &n, &mut stack),
        None => {
            let what = entry
                .map(|e| format!("{} (source {})", e.fstype, e.source))
                .unwrap_or_else(|| "a filesystem".to_string());
            stack.notes.push(format!(
                "{} is on {what}, which has no block device under it (tmpfs, overlay, network \
                 and pseudo filesystems have none): there are no disks or queue attributes to show",
                canon.display()
            ));
            // Overlay: its writable layer lives on another filesystem; say which.
            if let Some(upper) = entry.filter(|e| e.fstype == "overlay").and_then(|e| {
                e.super_options
                    .split(',')
                    .find_map(|o| o.strip_prefix("upperdir="))
                    .map(crate::mounts::unescape)
            }) {
                let up = Path::new(&upper);
                if up != canon && !up.starts_with(&canon) {
                    if let Ok(u) = resolve_in(sys, up) {
                        if let (Some(m), Some(top)) = (&u.mount, u.top()) {
                            stack.notes.push(format!(
                                "its upper (writable) layer {upper} is on {} mounted on {} \
                                 ({}), device {}: run `dbio stack {upper}` for that stack",
                                m.source, m.mountpoint, m.fstype, top.name
                            ));
                        }
                    }
                }
            }
        }
    }
    Ok(stack)
}

/// Fills `stack.devices` and `stack.leaf_disks` from the device `top` down.
pub(crate) fn build_devices(sys: &Sys, top: &str, stack: &mut Stack) {
    let mut seen = BTreeSet::new();
    walk(sys, top, 0, &mut seen, stack);
}

fn walk(sys: &Sys, name: &str, depth: usize, seen: &mut BTreeSet<String>, stack: &mut Stack) {
    if !seen.insert(name.to_string()) {
        return;
    }
    let dev = read_device(sys, name, depth);
    let lower = dev.slaves.clone();
    if lower.is_empty()
        && dev.kind != DeviceKind::Partition
        && !stack.leaf_disks.contains(&dev.name)
    {
        stack.leaf_disks.push(dev.name.clone());
    }
    stack.devices.push(dev);
    for s in lower {
        walk(sys, &s, depth + 1, seen, stack);
    }
}

/// Reads one device's sysfs directory (`/sys/class/block/<name>`).
pub(crate) fn read_device(sys: &Sys, name: &str, depth: usize) -> Device {
    let dir = sys.class_block(name);
    let attr = |rel: &str| read_attr(&dir.join(rel));
    let is_partition = dir.join("partition").exists();
    let mut slaves: Vec<String> = Vec::new();
    if is_partition {
        // The partition's directory sits inside its disk's directory.
        if let Some(parent) = std::fs::canonicalize(&dir).ok().and_then(|p| {
            p.parent()
                .and_then(|p| p.file_name())
                .map(|s| s.to_string_lossy().into_owned())
        }) {
            slaves.push(parent);
        }
    } else if let Ok(rd) = std::fs::read_dir(dir.join("slaves")) {
        slaves = rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        slaves.sort();
    }
    let dm_name = attr("dm/name");
    let dm_uuid = attr("dm/uuid").filter(|s| !s.is_empty());
    let md_level = attr("md/level");
    let kind = if is_partition {
        DeviceKind::Partition
    } else if dir.join("dm").exists() {
        DeviceKind::Dm
    } else if dir.join("md").exists() {
        DeviceKind::Md
    } else if dir.join("loop").exists() || name.starts_with("loop") {
        DeviceKind::Loop
    } else {
        DeviceKind::Disk
    };
    let uevent = attr("uevent").map(|s| parse_uevent(&s)).unwrap_or_default();
    let devname = uevent
        .iter()
        .find(|(k, _)| k == "DEVNAME")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| name.to_string());
    let node = match &dm_name {
        Some(n) if kind == DeviceKind::Dm => format!("/dev/mapper/{n}"),
        _ => format!("/dev/{devname}"),
    };
    let model = attr("device/model")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    Device {
        name: name.to_string(),
        dev: attr("dev")
            .as_deref()
            .and_then(parse_major_minor)
            .map(|(a, b)| format!("{a}:{b}"))
            .unwrap_or_default(),
        kind,
        depth,
        node,
        size_bytes: attr("size").as_deref().and_then(parse_u64).map(|s| s * 512),
        slaves,
        model,
        dm_subsystem: dm_uuid
            .as_deref()
            .and_then(|u| u.split_once('-'))
            .map(|(p, _)| p.to_string()),
        dm_name: if kind == DeviceKind::Dm {
            dm_name
        } else {
            None
        },
        dm_uuid,
        md_level,
        md_chunk_bytes: attr("md/chunk_size").as_deref().and_then(parse_u64),
        loop_backing_file: attr("loop/backing_file"),
        partition_number: attr("partition")
            .as_deref()
            .and_then(|s| s.trim().parse().ok()),
        start_sectors: if is_partition {
            attr("start").as_deref().and_then(parse_u64)
        } else {
            None
        },
        alignment_offset_bytes: attr("alignment_offset").as_deref().and_then(parse_u64),
        read_only: attr("ro").as_deref().and_then(parse_bool),
        queue: if dir.join("queue").is_dir() {
            Some(crate::sysfs::read_queue(&dir.join("queue")))
        } else {
            None
        },
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    /// A fixture sysfs: LVM volume dm-0 on md0 (raid1 of vdb1 and vdc1), plus vdb2 mounted.
    pub(crate) fn fixture() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let devs = r.join("sys/devices");
        let class = r.join("sys/class/block");
        let devblock = r.join("sys/dev/block");
        fs::create_dir_all(&class).unwrap();
        fs::create_dir_all(&devblock).unwrap();
        let mk = |rel: &str, name: &str, dev: &str, files: &[(&str, &str)]| {
            let d = devs.join(rel);
            fs::create_dir_all(&d).unwrap();
            fs::write(d.join("dev"), format!("{dev}\n")).unwrap();
            fs::write(d.join("uevent"), format!("DEVNAME={name}\n")).unwrap();
            for (f, v) in files {
                let p = d.join(f);
                fs::create_dir_all(p.parent().unwrap()).unwrap();
                fs::write(p, format!("{v}\n")).unwrap();
            }
            symlink(&d, class.join(name)).unwrap();
            symlink(&d, devblock.join(dev)).unwrap();
            d
        };
        let q = [
            ("queue/scheduler", "[mq-deadline] none"),
            ("queue/rotational", "1"),
            ("queue/logical_block_size", "512"),
            ("queue/physical_block_size", "4096"),
        ];
        for (disk, mj) in [("vdb", "252:16"), ("vdc", "252:32")] {
            let d = mk(&format!("pci/virtio2/block/{disk}"), disk, mj, &q);
            fs::create_dir_all(d.join("holders")).unwrap();
            for (n, start) in [(1, 2048), (2, 4196352)] {
                let p = format!("pci/virtio2/block/{disk}/{disk}{n}");
                let pd = mk(
                    &p,
                    &format!("{disk}{n}"),
                    &format!("252:{}", mj[4..].parse::<u32>().unwrap() + n),
                    &[
                        ("partition", &n.to_string()),
                        ("start", &start.to_string()),
                        ("alignment_offset", "0"),
                        ("size", "2048"),
                    ],
                );
                fs::create_dir_all(pd.join("holders")).unwrap();
            }
        }
        let md = mk(
            "virtual/block/md0",
            "md0",
            "9:0",
            &[
                ("md/level", "raid1"),
                ("md/chunk_size", "0"),
                ("queue/scheduler", "none"),
            ],
        );
        fs::create_dir_all(md.join("slaves")).unwrap();
        fs::create_dir_all(md.join("holders")).unwrap();
        for s in ["vdb1", "vdc1"] {
            symlink(class.join(s), md.join("slaves").join(s)).unwrap();
            let disk = &s[..3];
            symlink(
                &md,
                devs.join(format!("pci/virtio2/block/{disk}/{s}/holders/md0")),
            )
            .unwrap();
        }
        let dm = mk(
            "virtual/block/dm-0",
            "dm-0",
            "253:0",
            &[
                ("dm/name", "vg-mysql"),
                ("dm/uuid", "LVM-abc"),
                ("queue/scheduler", "none"),
                ("size", "8"),
            ],
        );
        fs::create_dir_all(dm.join("slaves")).unwrap();
        symlink(&md, dm.join("slaves/md0")).unwrap();
        symlink(&dm, md.join("holders/dm-0")).unwrap();
        fs::create_dir_all(r.join("proc/self")).unwrap();
        fs::write(
            r.join("proc/self/mountinfo"),
            "27 1 254:0 / / rw - ext4 /dev/vda rw\n50 27 253:0 / /var/lib/mysql rw - xfs /dev/mapper/vg-mysql rw\n",
        )
        .unwrap();
        t
    }

    #[test]
    fn lvm_on_md_on_partitions() {
        let t = fixture();
        let sys = Sys::at(t.path());
        let mut st = Stack {
            query: "x".into(),
            resolved_path: None,
            mount: None,
            devices: vec![],
            leaf_disks: vec![],
            notes: vec![],
            kernel_release: None,
        };
        build_devices(&sys, "dm-0", &mut st);
        let names: Vec<(&str, usize)> = st
            .devices
            .iter()
            .map(|d| (d.name.as_str(), d.depth))
            .collect();
        assert_eq!(
            names,
            vec![
                ("dm-0", 0),
                ("md0", 1),
                ("vdb1", 2),
                ("vdb", 3),
                ("vdc1", 2),
                ("vdc", 3)
            ]
        );
        assert_eq!(st.leaf_disks, vec!["vdb", "vdc"]);
        assert_eq!(st.leaves().len(), 2);
        let dm = st.device("dm-0").unwrap();
        assert_eq!(dm.kind, DeviceKind::Dm);
        assert_eq!(dm.node, "/dev/mapper/vg-mysql");
        assert_eq!(dm.dm_subsystem.as_deref(), Some("LVM"));
        assert_eq!(dm.size_bytes, Some(4096));
        assert_eq!(
            dm.queue.as_ref().unwrap().scheduler.as_deref(),
            Some("none")
        );
        let md = st.device("md0").unwrap();
        assert_eq!(md.kind, DeviceKind::Md);
        assert_eq!(md.md_level.as_deref(), Some("raid1"));
        let p = st.device("vdc1").unwrap();
        assert_eq!(p.kind, DeviceKind::Partition);
        assert_eq!(p.partition_number, Some(1));
        assert_eq!(p.start_sectors, Some(2048));
        assert_eq!(p.alignment_offset_bytes, Some(0));
        assert_eq!(p.slaves, vec!["vdc"]);
        assert!(p.queue.is_none());
        let d = st.device("vdb").unwrap();
        assert_eq!(d.kind, DeviceKind::Disk);
        let q = d.queue.as_ref().unwrap();
        assert_eq!(q.scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(q.schedulers, vec!["mq-deadline", "none"]);
        assert_eq!(q.rotational, Some(true));
        assert_eq!(q.physical_block_size_bytes, Some(4096));
        // JSON round trip.
        let j = serde_json::to_string(&st).unwrap();
        let back: Stack = serde_json::from_str(&j).unwrap();
        assert_eq!(back, st);
        assert!(j.contains("\"kind\":\"partition\""));
    }

    #[test]
    fn live_root_and_shm() {
        let st = resolve(Path::new("/")).unwrap();
        let m = st.mount.as_ref().unwrap();
        assert_eq!(m.mountpoint, "/");
        let rootdev = fs::metadata("/").unwrap().dev();
        if crate::dev_major_minor(rootdev).0 != 0 {
            assert!(!st.devices.is_empty(), "{st:?}");
            assert!(!st.leaf_disks.is_empty());
            let top = st.top().unwrap();
            let (a, b) = crate::dev_major_minor(rootdev);
            assert_eq!(top.dev, format!("{a}:{b}"));
            assert!(st.leaves().iter().all(|d| d.queue.is_some()));
        }
        let etc = resolve(Path::new("/etc/hostname/../passwd"))
            .unwrap_or_else(|_| resolve(Path::new("/etc")).unwrap());
        assert_eq!(etc.mount.as_ref().unwrap().mountpoint, "/");
        if Path::new("/dev/shm").is_dir() {
            let shm = resolve(Path::new("/dev/shm")).unwrap();
            assert_eq!(shm.mount.as_ref().unwrap().fstype, "tmpfs");
            assert!(shm.devices.is_empty());
            assert!(
                shm.notes.iter().any(|n| n.contains("no block device")),
                "{:?}",
                shm.notes
            );
        }
        let missing = resolve(Path::new("/no/such/dir/here")).unwrap();
        assert_eq!(missing.resolved_path.as_deref(), Some("/"));
        assert!(missing.notes[0].contains("does not exist"));
    }

    #[test]
    fn live_device_queries() {
        assert!(matches!(
            resolve_device(Path::new("/dev/null")),
            Err(Error::NotBlockDevice { .. })
        ));
        match resolve_device(Path::new("nosuchdisk")) {
            Err(Error::UnknownDevice { known, .. }) => assert!(!known.is_empty()),
            other => panic!("{other:?}"),
        }
        if Path::new("/dev/loop0").exists() {
            let st = resolve_device(Path::new("/dev/loop0")).unwrap();
            assert_eq!(st.devices[0].kind, DeviceKind::Loop);
            assert_eq!(st.leaf_disks, vec!["loop0"]);
            let st2 = resolve_device(Path::new("loop0")).unwrap();
            assert_eq!(st2.devices, st.devices);
        }
    }
}
