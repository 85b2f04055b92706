//! Text renderings of `dbio align calc` and `dbio align check` for people (JSON is the serde
//! form of [`CalcResult`] and [`DiskCheck`]).

use super::check::DiskCheck;
use super::{size_arg, CalcResult, GeometryMatch};
use crate::fs::Superblock;
use dbio_report::units::format_size;
use std::fmt::Write as _;

/// `dbio align calc` as text.
pub fn calc(r: &CalcResult) -> String {
    let mut s = String::new();
    let sps = r.sectors_per_stripe_unit;
    let _ = writeln!(
        s,
        "stripe unit {} / {}-byte sectors = {sps} sectors per stripe unit",
        format_size(r.stripe_bytes),
        r.sector_bytes
    );
    if let (Some(level), Some(disks), Some(d)) = (r.raid, r.disks, r.data_disks) {
        let _ = writeln!(
            s,
            "RAID {level} with {disks} disks: {d} data disks, full stripe {}",
            format_size(r.full_stripe_bytes.unwrap_or(0))
        );
    } else if let (Some(level), Some(d)) = (r.raid, r.data_disks) {
        let _ = writeln!(
            s,
            "RAID {level}: {d} data disk(s), full stripe {}",
            format_size(r.full_stripe_bytes.unwrap_or(0))
        );
    }
    let _ = writeln!(s, "\naligned start sectors (multiples of {sps}):");
    let _ = writeln!(
        s,
        "  recommended     {:>10}  ({}: the smallest multiple of both 1 MiB and the stripe unit)",
        r.recommended_start_sector,
        format_size(r.recommended_start_bytes)
    );
    let _ = writeln!(
        s,
        "  smallest, MBR   {:>10}  (sector 0 holds the label)",
        r.smallest_start_sector_mbr
    );
    let _ = writeln!(
        s,
        "  smallest, GPT   {:>10}  (the label uses sectors 0-{})",
        r.smallest_start_sector_gpt,
        1 + 16384u64.div_ceil(r.sector_bytes)
    );
    if let Some(c) = &r.cylinder {
        let _ = writeln!(
            s,
            "\ncylinder labels ({} heads x {} sectors/track = {} sectors per cylinder):",
            c.heads, c.sectors_per_track, c.sectors_per_cylinder
        );
        let _ = writeln!(
            s,
            "  LCM({}, {}) = {} sectors / {} = first aligned cylinder {} (start sector {}); every multiple of {} is aligned",
            c.sectors_per_cylinder, c.sectors_per_block, c.lcm_sectors, c.sectors_per_cylinder, c.first_aligned_cylinder, c.start_sector, c.first_aligned_cylinder
        );
    }
    if let Some(x) = &r.xfs {
        let _ = writeln!(s, "\nXFS:");
        let _ = writeln!(s, "  {} DEVICE", x.mkfs);
        let _ = writeln!(
            s,
            "      (mkfs.xfs then reports sunit={} swidth={} blks with {} blocks)",
            x.sunit_blocks,
            x.swidth_blocks,
            format_size(r.fs_block_bytes)
        );
        let _ = writeln!(
            s,
            "  already made: mount -o {}   (512-byte units; or in /etc/fstab)",
            x.mount_options
        );
    }
    if let Some(e) = &r.ext4 {
        let _ = writeln!(s, "\next4 ({} blocks):", format_size(r.fs_block_bytes));
        let _ = writeln!(s, "  {} DEVICE", e.mkfs);
        let _ = writeln!(s, "  already made: {} DEVICE", e.tune2fs);
    }
    let _ = writeln!(s, "\naligned partition:");
    let _ = writeln!(s, "  {}", r.parted);
    let _ = writeln!(s, "  {}", r.sfdisk);
    let _ = writeln!(s, "  Windows {}", r.diskpart);
    if !r.notes.is_empty() {
        let _ = writeln!(s, "\nnotes:");
        for n in &r.notes {
            let _ = writeln!(s, "  {n}");
        }
    }
    s
}

fn yn(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "NO"
    }
}

/// `dbio align check` as text.
pub fn check(o: &DiskCheck) -> String {
    let mut s = String::new();
    match &o.table {
        Some(t) => {
            let _ = writeln!(
                s,
                "{}: {} label, {}-byte sectors, {} sectors ({})",
                o.target,
                format!("{:?}", t.kind).to_lowercase(),
                t.sector_size,
                t.disk_sectors,
                format_size(o.size_bytes)
            );
            if let Some(g) = &t.gpt {
                let _ = writeln!(
                    s,
                    "GPT: read from the {} header; primary {}, backup {} (sector {}); usable sectors {}..{}",
                    format!("{:?}", g.header_used).to_lowercase(),
                    if g.primary_ok { "OK" } else { "DAMAGED" },
                    if g.backup_ok { "OK" } else { "DAMAGED" },
                    g.backup_lba,
                    g.first_usable,
                    g.last_usable
                );
            }
        }
        None => {
            let _ = writeln!(s, "{}: {}", o.target, format_size(o.size_bytes));
        }
    }
    match (o.stripe_bytes, o.data_disks) {
        (Some(st), Some(d)) => {
            let _ = writeln!(
                s,
                "stripe unit {}, {d} data disks (su={}, sw={d})",
                format_size(st),
                size_arg(st)
            );
        }
        (Some(st), None) => {
            let _ = writeln!(s, "stripe unit {}", format_size(st));
        }
        _ => {
            let _ = writeln!(
                s,
                "no --stripe given: alignment shown for 4 KiB, 64 KiB and 1 MiB only"
            );
        }
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "{:>3}  {:<9} {:<22} {:>12} {:>14} {:>10}  {:<6} {:<3} {:<3} {:<3} {:>9}",
        "#",
        "kind",
        "type",
        "start",
        "start bytes",
        "size",
        "stripe",
        "4K",
        "64K",
        "1M",
        "remainder"
    );
    for p in &o.partitions {
        let a = &p.alignment;
        let stripe = a.stripe_aligned.map(yn).unwrap_or("-");
        let rem = a
            .stripe_remainder_bytes
            .map(|r| r.to_string())
            .unwrap_or_else(|| "-".into());
        let ty: String = p.type_name.chars().take(22).collect();
        let _ = writeln!(
            s,
            "{:>3}  {:<9} {:<22} {:>12} {:>14} {:>10}  {:<6} {:<3} {:<3} {:<3} {:>9}",
            p.number,
            format!("{:?}", p.kind).to_lowercase(),
            ty,
            p.start_sector,
            a.start_bytes,
            format_size(p.size_bytes),
            stripe,
            yn(a.aligned_4k),
            yn(a.aligned_64k),
            yn(a.aligned_1m),
            rem
        );
    }
    for p in &o.partitions {
        let mut line = String::new();
        match &p.filesystem {
            Some(Superblock::Xfs(x)) => {
                let _ = write!(line, "xfs, {} blocks, agcount {}, agblocks {}, sunit={} swidth={} blks (su={} sw_bytes={})", format_size(x.block_size as u64), x.ag_count, x.ag_blocks, x.sunit_blocks, x.swidth_blocks, format_size(x.su_bytes()), format_size(x.sw_bytes()));
            }
            Some(Superblock::Ext(e)) => {
                let _ = write!(
                    line,
                    "{}, {} blocks, stride={} stripe_width={} blks (su={} sw_bytes={})",
                    e.version,
                    format_size(e.block_size as u64),
                    e.raid_stride,
                    e.raid_stripe_width,
                    format_size(e.su_bytes()),
                    format_size(e.sw_bytes())
                );
            }
            Some(Superblock::Lvm2(_)) => {
                let l = p.lvm.as_ref().expect("lvm info with an LVM2 superblock");
                let _ = write!(
                    line,
                    "LVM2 PV {}, data area (pe_start) at {} into the PV = byte {} of the disk: stripe-aligned {}, 1 MiB-aligned {}",
                    l.pv_uuid,
                    format_size(l.pe_start_bytes),
                    l.pe_start_absolute_bytes,
                    l.pe_start_aligned_to_stripe.map(yn).unwrap_or("-"),
                    yn(l.pe_start_aligned_1m)
                );
            }
            None => {}
        }
        if let Some(g) = &p.geometry {
            let verdict = match g.verdict {
                GeometryMatch::Match if g.expected_sw_bytes.is_none() => {
                    "su matches the stripe unit (width not checked: give --disks and --raid)"
                        .to_string()
                }
                GeometryMatch::Match => "matches the RAID".to_string(),
                GeometryMatch::NoGeometry => "has NO stripe geometry".to_string(),
                GeometryMatch::Mismatch => match g.expected_sw_bytes {
                    Some(w) => format!(
                        "does NOT match the RAID (expected su={} sw_bytes={})",
                        format_size(g.expected_su_bytes),
                        format_size(w)
                    ),
                    None => format!(
                        "does NOT match the RAID (expected su={})",
                        format_size(g.expected_su_bytes)
                    ),
                },
            };
            let _ = write!(line, ": {verdict}");
        }
        if let Some(k) = &p.kernel {
            if let Some(ks) = k.start_sector_512 {
                let _ = write!(
                    line,
                    "{}kernel ({}): start {ks}, alignment_offset {}",
                    if line.is_empty() { "" } else { "; " },
                    k.name,
                    k.alignment_offset.unwrap_or(0)
                );
            }
        }
        if !line.is_empty() {
            let _ = writeln!(s, "partition {}: {line}", p.number);
        }
        for n in &p.notes {
            let _ = writeln!(s, "partition {}: {n}", p.number);
        }
    }
    if let Some(k) = &o.kernel {
        let _ = writeln!(
            s,
            "kernel: logical block {}, physical block {}, minimum_io_size {}, optimal_io_size {}, alignment_offset {}",
            k.logical_block_size.unwrap_or(0),
            k.physical_block_size.unwrap_or(0),
            k.minimum_io_size.unwrap_or(0),
            k.optimal_io_size.unwrap_or(0),
            k.alignment_offset.unwrap_or(0)
        );
    }
    if !o.warnings.is_empty() {
        let _ = writeln!(s, "\nwarnings:");
        for w in &o.warnings {
            let _ = writeln!(s, "  {w}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::align::check::{check_source, CheckOptions, KernelDisk, KernelPart, LvmDataArea};
    use crate::align::check_geometry;
    use crate::fs::XfsSuper;
    use crate::lvm::PvLabel;

    /// The lines only a live device (kernel view), a PV or a wrong geometry print, on a
    /// hand-built result.
    #[test]
    fn kernel_lvm_and_geometry_lines() {
        let mut img = vec![0u8; 8 << 20];
        img[446 + 4] = 0x83;
        img[446 + 8..446 + 12].copy_from_slice(&2048u32.to_le_bytes());
        img[446 + 12..446 + 16].copy_from_slice(&4096u32.to_le_bytes());
        img[510..512].copy_from_slice(&[0x55, 0xAA]);
        let o = CheckOptions {
            target: "/dev/loop7".into(),
            stripe_bytes: Some(65536),
            data_disks: Some(4),
            sector_bytes: None,
        };
        let mut r = check_source(&img, None, &o).unwrap();
        r.block_device = true;
        r.kernel = Some(KernelDisk {
            logical_block_size: Some(512),
            physical_block_size: Some(4096),
            minimum_io_size: Some(65536),
            optimal_io_size: None,
            alignment_offset: Some(0),
        });
        let xfs = XfsSuper {
            block_size: 4096,
            data_blocks: 512,
            ag_blocks: 128,
            ag_count: 4,
            sunit_blocks: 16,
            swidth_blocks: 32,
            sector_size: 512,
            size_bytes: 2 << 20,
            label: String::new(),
        };
        let p = &mut r.partitions[0];
        p.geometry = Some(check_geometry(
            xfs.su_bytes(),
            xfs.sw_bytes(),
            65536,
            Some(4),
        ));
        p.filesystem = Some(Superblock::Xfs(xfs));
        p.kernel = Some(KernelPart {
            name: "loop7p1".into(),
            start_sector_512: Some(2048),
            alignment_offset: Some(0),
            agrees_with_table: Some(true),
        });
        let s = check(&r);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(
            lines[0],
            "/dev/loop7: mbr label, 512-byte sectors, 16384 sectors (8MiB)"
        );
        assert_eq!(lines[1], "stripe unit 64KiB, 4 data disks (su=64k, sw=4)");
        assert_eq!(&lines[4..], [
            "  1  primary   Linux                          2048        1048576       2MiB  yes    yes yes yes         0",
            "partition 1: xfs, 4KiB blocks, agcount 4, agblocks 128, sunit=16 swidth=32 blks (su=64KiB sw_bytes=128KiB): does NOT match the RAID (expected su=64KiB sw_bytes=256KiB); kernel (loop7p1): start 2048, alignment_offset 0",
            "kernel: logical block 512, physical block 4096, minimum_io_size 65536, optimal_io_size 0, alignment_offset 0",
        ]);

        let p = &mut r.partitions[0];
        p.geometry = None;
        p.kernel = None;
        p.filesystem = Some(Superblock::Lvm2(PvLabel {
            label_sector: 1,
            pv_uuid: "abc".into(),
            device_size_bytes: 2 << 20,
            pe_start_bytes: 192 << 10,
            metadata_areas: Vec::new(),
            crc_ok: true,
        }));
        p.lvm = Some(LvmDataArea {
            pv_uuid: "abc".into(),
            pe_start_bytes: 192 << 10,
            pe_start_absolute_bytes: (1 << 20) + (192 << 10),
            pe_start_aligned_to_stripe: Some(true),
            pe_start_aligned_1m: false,
        });
        r.kernel = None;
        let s = check(&r);
        assert_eq!(s.lines().last(), Some("partition 1: LVM2 PV abc, data area (pe_start) at 192KiB into the PV = byte 1245184 of the disk: stripe-aligned yes, 1 MiB-aligned NO"));
    }
}
