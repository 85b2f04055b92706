//! `dbio align check`: the partition table, filesystems and LVM labels of a disk or image,
//! each partition's start checked against the stripe unit, each filesystem's stripe geometry
//! against the RAID, and on a live block device the kernel's view from sysfs (read under a
//! [`Sys`] root, so a fixture tree stands in for `/sys` in tests). The result,
//! [`DiskCheck`], is a [`dbio_schema::align`] type, re-exported here.

use super::{check_geometry, check_start, GeometryCheck};
use crate::fs::Superblock;
use crate::source::{FileSource, ReadAt, Slice};
use crate::table::{self, PartKind, PartitionTable, TableError};
use dbio_sys::sysfs::{self, Sys};
use std::path::{Path, PathBuf};
use thiserror::Error;

pub use dbio_schema::align::{
    DiskCheck, KernelDisk, KernelPart, LvmDataArea, PartitionCheck, TableSummary,
};

/// What to check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckOptions {
    /// Block device or disk image file.
    pub target: PathBuf,
    /// RAID stripe unit to check against, in bytes.
    pub stripe_bytes: Option<u64>,
    /// Data disks of the RAID (for the stripe width).
    pub data_disks: Option<u32>,
    /// Logical sector size; `None`: the device's, or 512 and then 4096 for GPT images.
    pub sector_bytes: Option<u64>,
}

/// Why a disk or image could not be checked.
#[derive(Debug, Error)]
pub enum CheckError {
    /// The target could not be opened.
    #[error("cannot open {} read-only: check the path and that you may read it (block devices need root)", path.display())]
    Open {
        /// The target.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A partition table is there but cannot be read.
    #[error("cannot read the partition table of {}", path.display())]
    Table {
        /// The target.
        path: PathBuf,
        /// What is wrong with the table.
        #[source]
        source: TableError,
    },
    /// No partition table, and the start of the target cannot be read.
    #[error("cannot read the start of {}", path.display())]
    Start {
        /// The target.
        path: PathBuf,
        /// The read error.
        #[source]
        source: std::io::Error,
    },
    /// Neither a partition table nor a known signature.
    #[error("{}: no partition table (no 0x55AA signature in sector 0, no GPT header) and no XFS, ext or LVM2 signature at its start: is this the right device or image?", path.display())]
    Unrecognised {
        /// The target.
        path: PathBuf,
    },
}

/// The sysfs directory of block device `major:minor` (`/sys/dev/block/M:m` resolved) under
/// `sys`, `None` when the kernel has no such device.
pub fn disk_dir(sys: &Sys, major: u32, minor: u32) -> Option<PathBuf> {
    std::fs::canonicalize(sys.dev_block(major, minor)).ok()
}

fn attr_u64(p: &Path) -> Option<u64> {
    sysfs::read_attr(p).as_deref().and_then(sysfs::parse_u64)
}

/// The queue limits in a disk's sysfs directory.
pub fn kernel_disk(dir: &Path) -> KernelDisk {
    let q = dir.join("queue");
    KernelDisk {
        logical_block_size_bytes: attr_u64(&q.join("logical_block_size")),
        physical_block_size_bytes: attr_u64(&q.join("physical_block_size")),
        minimum_io_size_bytes: attr_u64(&q.join("minimum_io_size")),
        optimal_io_size_bytes: attr_u64(&q.join("optimal_io_size")),
        alignment_offset_bytes: attr_u64(&dir.join("alignment_offset")),
    }
}

/// The sysfs directory of partition `n` of the disk at `disk_dir`.
fn kernel_partition_dir(disk_dir: &Path, n: u32) -> Option<PathBuf> {
    std::fs::read_dir(disk_dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| attr_u64(&p.join("partition")) == Some(n as u64))
}

/// Checks the disk or image `o.target`; on a block device the kernel's view is read under `sys`.
pub fn check_disk(sys: &Sys, o: &CheckOptions) -> Result<DiskCheck, CheckError> {
    let src = FileSource::open(&o.target).map_err(|source| CheckError::Open {
        path: o.target.clone(),
        source,
    })?;
    let dir = dbio_sys::mounts::block_dev_numbers(&o.target)
        .ok()
        .and_then(|(major, minor)| disk_dir(sys, major, minor));
    check_source(&src, dir.as_deref(), o)
}

/// Checks the bytes of `src` (named `o.target`); `disk_dir` is the disk's sysfs directory
/// when `src` is a live block device.
pub fn check_source(
    src: &dyn ReadAt,
    disk_dir: Option<&Path>,
    o: &CheckOptions,
) -> Result<DiskCheck, CheckError> {
    let path = &o.target;
    let kernel = disk_dir.map(kernel_disk);
    let sector = o
        .sector_bytes
        .or_else(|| kernel.as_ref().and_then(|k| k.logical_block_size_bytes));
    let mut out = DiskCheck {
        target: path.display().to_string(),
        block_device: disk_dir.is_some(),
        size_bytes: src.size(),
        stripe_bytes: o.stripe_bytes,
        data_disks: o.data_disks,
        table: None,
        partitions: Vec::new(),
        kernel,
        warnings: Vec::new(),
    };
    match table::read_table(src, sector) {
        Ok(t) => fill_partitions(&mut out, src, &t, o, disk_dir),
        Err(TableError::NoTable) => {
            // A filesystem on the whole device is common on RAID LUNs and LVs.
            let sb = crate::fs::probe(src).map_err(|source| CheckError::Start {
                path: path.clone(),
                source,
            })?;
            let Some(sb) = sb else {
                return Err(CheckError::Unrecognised { path: path.clone() });
            };
            out.warnings.push("no partition table: the filesystem starts at sector 0 of the device, which is aligned to every stripe".into());
            out.partitions.push(PartitionCheck {
                number: 0,
                kind: PartKind::Primary,
                type_name: "whole device".into(),
                type_code: "-".into(),
                name: None,
                start_sectors: 0,
                end_sectors: src.size() / 512 - 1,
                size_bytes: src.size(),
                alignment: check_start(0, 512, o.stripe_bytes),
                geometry: geometry(&sb, o),
                lvm: lvm_data_area(&sb, 0, o.stripe_bytes),
                filesystem: Some(sb),
                kernel: None,
                notes: Vec::new(),
            });
        }
        Err(source) => {
            return Err(CheckError::Table {
                path: path.clone(),
                source,
            })
        }
    }
    Ok(out)
}

fn geometry(sb: &Superblock, o: &CheckOptions) -> Option<GeometryCheck> {
    let s = o.stripe_bytes?;
    let d = o.data_disks;
    match sb {
        Superblock::Xfs(x) => Some(check_geometry(x.su_bytes(), x.sw_bytes(), s, d)),
        Superblock::Ext(e) => Some(check_geometry(e.su_bytes(), e.sw_bytes(), s, d)),
        Superblock::Lvm2(_) => None,
    }
}

fn lvm_data_area(
    sb: &Superblock,
    part_start_bytes: u64,
    stripe: Option<u64>,
) -> Option<LvmDataArea> {
    let Superblock::Lvm2(l) = sb else { return None };
    // A damaged label can put the data area near 2^64: saturate rather than wrap.
    let abs = part_start_bytes.saturating_add(l.pe_start_bytes);
    Some(LvmDataArea {
        pv_uuid: l.pv_uuid.clone(),
        pe_start_bytes: l.pe_start_bytes,
        pe_start_absolute_bytes: abs,
        pe_start_aligned_to_stripe: stripe.map(|s| abs.is_multiple_of(s)),
        pe_start_aligned_1m: abs.is_multiple_of(1 << 20),
    })
}

/// The kernel's view of partition `number` (table start `start_sector`, `start_bytes`),
/// with notes when it disagrees with the table or reports an alignment offset.
fn kernel_part(
    disk_dir: &Path,
    number: u32,
    start_sector: u64,
    start_bytes: u64,
    notes: &mut Vec<String>,
) -> KernelPart {
    let Some(kp) = kernel_partition_dir(disk_dir, number) else {
        notes.push(
            "the kernel does not know this partition (not re-read since the table changed?)".into(),
        );
        return KernelPart {
            name: String::new(),
            start_512_sectors: None,
            alignment_offset_bytes: None,
            agrees_with_table: None,
        };
    };
    let kstart = attr_u64(&kp.join("start"));
    let agrees = kstart.map(|k| k * 512 == start_bytes);
    if agrees == Some(false) {
        notes.push(format!(
            "the kernel has this partition at sector {} (512-byte units) but the table says {start_sector}: the table was changed without re-reading it (partprobe / blockdev --rereadpt)",
            kstart.unwrap_or(0),
        ));
    }
    let ao = attr_u64(&kp.join("alignment_offset"));
    if let Some(a) = ao.filter(|&a| a != 0) {
        notes.push(format!(
            "the kernel reports alignment_offset {a}: misaligned with the device's physical blocks"
        ));
    }
    KernelPart {
        name: kp
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        start_512_sectors: kstart,
        alignment_offset_bytes: ao,
        agrees_with_table: agrees,
    }
}

fn fill_partitions(
    out: &mut DiskCheck,
    src: &dyn ReadAt,
    t: &PartitionTable,
    o: &CheckOptions,
    disk_dir: Option<&Path>,
) {
    let ss = t.sector_size;
    out.warnings.extend(t.warnings.iter().cloned());
    out.table = Some(TableSummary {
        kind: t.kind,
        sector_size_bytes: ss,
        disk_sectors: t.disk_sectors,
        gpt: t.gpt.clone(),
        disk_id: t.disk_id.clone(),
    });
    for p in &t.partitions {
        let start_bytes = p.start_sector * ss;
        let size_bytes = p.sectors * ss;
        let mut notes = Vec::new();
        let mut fs = None;
        if p.kind != PartKind::Extended {
            if start_bytes >= src.size() {
                notes.push("starts beyond the end of the image: filesystem not read".into());
            } else {
                let slice = Slice {
                    inner: src,
                    offset: start_bytes,
                    len: size_bytes.min(src.size() - start_bytes),
                };
                match crate::fs::probe(&slice) {
                    Ok(sb) => fs = sb,
                    Err(e) => notes.push(format!("cannot read the filesystem superblock: {e}")),
                }
            }
        }
        let kernel =
            disk_dir.map(|d| kernel_part(d, p.number, p.start_sector, start_bytes, &mut notes));
        out.partitions.push(PartitionCheck {
            number: p.number,
            kind: p.kind,
            type_name: p.type_name.clone(),
            type_code: p.type_code.clone(),
            name: p.name.clone(),
            start_sectors: p.start_sector,
            end_sectors: p.start_sector + p.sectors.saturating_sub(1),
            size_bytes,
            alignment: check_start(p.start_sector, ss, o.stripe_bytes),
            geometry: fs.as_ref().and_then(|sb| geometry(sb, o)),
            lvm: fs
                .as_ref()
                .and_then(|sb| lvm_data_area(sb, start_bytes, o.stripe_bytes)),
            filesystem: fs,
            kernel,
            notes,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::{create_dir_all, write};

    /// A 16 MiB MBR image with primary partitions `(type, start, sectors)`.
    fn mbr(parts: &[(u8, u32, u32)]) -> Vec<u8> {
        let mut img = vec![0u8; 16 << 20];
        for (i, &(ty, start, len)) in parts.iter().enumerate() {
            let e = 446 + 16 * i;
            img[e + 4] = ty;
            img[e + 8..e + 12].copy_from_slice(&start.to_le_bytes());
            img[e + 12..e + 16].copy_from_slice(&len.to_le_bytes());
        }
        img[510] = 0x55;
        img[511] = 0xAA;
        img
    }

    fn opts(stripe: Option<u64>) -> CheckOptions {
        CheckOptions {
            target: "disk.img".into(),
            stripe_bytes: stripe,
            data_disks: None,
            sector_bytes: None,
        }
    }

    /// A sysfs tree as the kernel lays it out for loop7 with partitions 1 and 2 (not 3):
    /// `sys/dev/block/7:7` links to the device directory.
    fn fixture_sys(root: &Path) {
        let d = root.join("sys/devices/virtual/block/loop7");
        create_dir_all(d.join("queue")).unwrap();
        for (f, v) in [
            ("logical_block_size", "512\n"),
            ("physical_block_size", "4096\n"),
            ("minimum_io_size", "65536\n"),
            ("optimal_io_size", "262144\n"),
        ] {
            write(d.join("queue").join(f), v).unwrap();
        }
        write(d.join("alignment_offset"), "0\n").unwrap();
        for (name, n, start, ao) in [("loop7p1", 1, 2048, 0), ("loop7p2", 2, 22528, 3584)] {
            create_dir_all(d.join(name)).unwrap();
            write(d.join(name).join("partition"), format!("{n}\n")).unwrap();
            write(d.join(name).join("start"), format!("{start}\n")).unwrap();
            write(d.join(name).join("alignment_offset"), format!("{ao}\n")).unwrap();
        }
        create_dir_all(root.join("sys/dev/block")).unwrap();
        std::os::unix::fs::symlink(
            "../../devices/virtual/block/loop7",
            root.join("sys/dev/block/7:7"),
        )
        .unwrap();
    }

    #[test]
    fn kernel_view_from_a_fixture_sysfs_tree() {
        let root = tempfile::tempdir().unwrap();
        fixture_sys(root.path());
        let sys = Sys::at(root.path());
        assert_eq!(disk_dir(&sys, 7, 8), None);
        let dir = disk_dir(&sys, 7, 7).unwrap();
        assert!(dir.ends_with("sys/devices/virtual/block/loop7"), "{dir:?}");
        let k = kernel_disk(&dir);
        assert_eq!(
            k,
            KernelDisk {
                logical_block_size_bytes: Some(512),
                physical_block_size_bytes: Some(4096),
                minimum_io_size_bytes: Some(65536),
                optimal_io_size_bytes: Some(262144),
                alignment_offset_bytes: Some(0),
            }
        );
        // Partition 2 was moved in the table only (22529), partition 3 was added without a
        // re-read: the kernel knows neither.
        let img = mbr(&[(0x83, 2048, 8192), (0x83, 22529, 4096), (0x83, 28672, 2048)]);
        let r = check_source(&img, Some(&dir), &opts(Some(65536))).unwrap();
        assert!(r.block_device);
        assert_eq!(r.kernel, Some(k));
        assert_eq!(r.table.as_ref().unwrap().sector_size_bytes, 512);
        let p = &r.partitions;
        assert_eq!(
            p[0].kernel,
            Some(KernelPart {
                name: "loop7p1".into(),
                start_512_sectors: Some(2048),
                alignment_offset_bytes: Some(0),
                agrees_with_table: Some(true),
            })
        );
        assert!(p[0].notes.is_empty(), "{:?}", p[0].notes);
        assert_eq!(p[1].kernel.as_ref().unwrap().agrees_with_table, Some(false));
        assert_eq!(p[1].notes, [
            "the kernel has this partition at sector 22528 (512-byte units) but the table says 22529: the table was changed without re-reading it (partprobe / blockdev --rereadpt)",
            "the kernel reports alignment_offset 3584: misaligned with the device's physical blocks",
        ]);
        assert_eq!(p[2].kernel.as_ref().unwrap().name, "");
        assert_eq!(
            p[2].notes,
            ["the kernel does not know this partition (not re-read since the table changed?)"]
        );
        assert_eq!(
            r.problems(),
            [
                "partition 2: start byte 11534848 is not a multiple of 4 KiB",
                "partition 2: start is off the stripe unit by 512 bytes",
                "partition 2: the kernel reports alignment_offset 3584",
            ]
        );
        // The kernel's logical block size is the table's sector size unless one is given.
        write(dir.join("queue/logical_block_size"), "4096\n").unwrap();
        let r = check_source(&img, Some(&dir), &opts(None)).unwrap();
        assert_eq!(r.table.unwrap().sector_size_bytes, 4096);
        let mut o = opts(None);
        o.sector_bytes = Some(512);
        let r = check_source(&img, Some(&dir), &o).unwrap();
        assert_eq!(r.table.unwrap().sector_size_bytes, 512);
    }

    #[test]
    fn an_image_has_no_kernel_view() {
        let img = mbr(&[(0x83, 2048, 8192)]);
        let r = check_source(&img, None, &opts(Some(65536))).unwrap();
        assert!(!r.block_device);
        assert_eq!(r.kernel, None);
        assert_eq!(r.partitions[0].kernel, None);
        assert_eq!(r.target, "disk.img");
        assert!(r.problems().is_empty(), "{:?}", r.problems());
    }

    /// What fails the check: starts off 4 KiB or the stripe, PV data areas off the stripe,
    /// filesystem geometry that does not match or is missing. Extended containers and
    /// 64 KiB/1 MiB boundaries do not count.
    #[test]
    fn problems_are_what_is_misaligned_or_mismatched() {
        let img = mbr(&[(0x83, 63, 1985), (0x05, 4095, 8192), (0x83, 16384, 128)]);
        let r = check_source(&img, None, &opts(None)).unwrap();
        assert_eq!(
            r.problems(),
            ["partition 1: start byte 32256 is not a multiple of 4 KiB"]
        );
        // 16384 sectors = 8 MiB; a 3 MiB stripe does not divide it.
        let r = check_source(&img, None, &opts(Some(3 << 20))).unwrap();
        assert_eq!(r.problems().len(), 3, "{:?}", r.problems());
        assert_eq!(
            r.problems()[2],
            "partition 3: start is off the stripe unit by 2097152 bytes"
        );

        let aligned = check_source(&mbr(&[(0x83, 2048, 8192)]), None, &opts(Some(65536))).unwrap();
        let with = |g: GeometryCheck| {
            let mut r = aligned.clone();
            r.partitions[0].geometry = Some(g);
            r.problems()
        };
        assert!(with(check_geometry(65536, 262144, 65536, Some(4))).is_empty());
        assert_eq!(
            with(check_geometry(65536, 131072, 65536, Some(4))),
            ["partition 1: the filesystem's stripe geometry does not match the RAID"]
        );
        assert_eq!(
            with(check_geometry(0, 0, 65536, Some(4))),
            ["partition 1: the filesystem has no stripe geometry"]
        );
        let lvm = |pe: u64, stripe: Option<u64>| {
            let mut r = aligned.clone();
            let abs = 1_048_576 + pe;
            r.partitions[0].lvm = Some(LvmDataArea {
                pv_uuid: "u".into(),
                pe_start_bytes: pe,
                pe_start_absolute_bytes: abs,
                pe_start_aligned_to_stripe: stripe.map(|s| abs.is_multiple_of(s)),
                pe_start_aligned_1m: abs.is_multiple_of(1 << 20),
            });
            r.problems()
        };
        assert!(lvm(192 << 10, Some(65536)).is_empty());
        assert!(lvm(192 << 10, None).is_empty());
        assert_eq!(
            lvm(192 << 10, Some(128 << 10)),
            ["partition 1: the LVM data area at byte 1245184 is misaligned"]
        );
        assert_eq!(lvm(512, None).len(), 1);
        let mut r = aligned.clone();
        r.kernel = Some(KernelDisk {
            logical_block_size_bytes: Some(512),
            physical_block_size_bytes: Some(4096),
            minimum_io_size_bytes: None,
            optimal_io_size_bytes: None,
            alignment_offset_bytes: Some(3584),
        });
        assert_eq!(
            r.problems(),
            ["disk.img: the kernel reports alignment_offset 3584"]
        );
    }

    #[test]
    fn errors_name_the_target() {
        let e = check_source(&vec![0u8; 1 << 20], None, &opts(None)).unwrap_err();
        assert!(matches!(e, CheckError::Unrecognised { .. }));
        assert!(
            e.to_string().starts_with("disk.img: no partition table"),
            "{e}"
        );
        let mut o = opts(None);
        o.target = "/nonexistent/dbio-align.img".into();
        let e = check_disk(&Sys::live(), &o).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cannot open /nonexistent/dbio-align.img read-only"),
            "{e}"
        );
        let e = check_source(&vec![0u8; 100], None, &opts(None)).unwrap_err();
        assert!(matches!(e, CheckError::Table { .. }), "{e}");
        assert_eq!(e.to_string(), "cannot read the partition table of disk.img");
    }
}
