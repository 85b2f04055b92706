//! `dbio align calc` and `dbio align check` as text, for people: calc's aligned starts and
//! mkfs/mount settings; check's table header, the partition table (through [`Table`]), then a
//! line per partition for its filesystem, geometry verdict, kernel view and notes.

use crate::export::table::{Column, Table};
use crate::export::Exporter;
use crate::export::Text;
use dbio_schema::align::{size_arg, CalcResult, DiskCheck, GeometryMatch};
use dbio_schema::disk::Superblock;
use dbio_schema::units::format_size;
use std::fmt::Write as _;
use std::io::{self, Write};

impl Exporter<CalcResult> for Text {
    fn export(&self, value: &CalcResult, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(calc(value).as_bytes())
    }
}

impl Exporter<DiskCheck> for Text {
    fn export(&self, value: &DiskCheck, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(check(value).as_bytes())
    }
}

/// The partition table of `dbio align check`: one row per partition. Columns are one space
/// apart; the empty columns after `#` and `size` make the two-space gaps of the layout.
fn partition_table(o: &DiskCheck) -> Table {
    let mut t = Table::new(vec![
        Column::right("#").min(3),
        Column::left(""),
        Column::left("kind").min(9),
        Column::left("type").min(22),
        Column::right("start").min(12),
        Column::right("start bytes").min(14),
        Column::right("size").min(10),
        Column::left(""),
        Column::left("stripe").min(6),
        Column::left("4K").min(3),
        Column::left("64K").min(3),
        Column::left("1M").min(3),
        Column::right("remainder").min(9),
    ])
    .separator(" ");
    for p in &o.partitions {
        let a = &p.alignment;
        t.row([
            p.number.to_string(),
            String::new(),
            p.kind.name().to_string(),
            p.type_name.chars().take(22).collect(),
            p.start_sectors.to_string(),
            a.start_bytes.to_string(),
            format_size(p.size_bytes),
            String::new(),
            a.stripe_aligned.map(yn).unwrap_or("-").to_string(),
            yn(a.aligned_4k).to_string(),
            yn(a.aligned_64k).to_string(),
            yn(a.aligned_1m).to_string(),
            a.stripe_remainder_bytes
                .map(|r| r.to_string())
                .unwrap_or_else(|| "-".into()),
        ]);
    }
    t
}

/// `dbio align calc` as text.
fn calc(r: &CalcResult) -> String {
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
        r.recommended_start_sectors,
        format_size(r.recommended_start_bytes)
    );
    let _ = writeln!(
        s,
        "  smallest, MBR   {:>10}  (sector 0 holds the label)",
        r.smallest_start_mbr_sectors
    );
    let _ = writeln!(
        s,
        "  smallest, GPT   {:>10}  (the label uses sectors 0-{})",
        r.smallest_start_gpt_sectors,
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
            c.sectors_per_cylinder, c.sectors_per_block, c.lcm_sectors, c.sectors_per_cylinder, c.first_aligned_cylinder, c.start_sectors, c.first_aligned_cylinder
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
fn check(o: &DiskCheck) -> String {
    let mut s = String::new();
    match &o.table {
        Some(t) => {
            let _ = writeln!(
                s,
                "{}: {} label, {}-byte sectors, {} sectors ({})",
                o.target,
                t.kind.name(),
                t.sector_size_bytes,
                t.disk_sectors,
                format_size(o.size_bytes)
            );
            if let Some(g) = &t.gpt {
                let _ = writeln!(
                    s,
                    "GPT: read from the {} header; primary {}, backup {} (sector {}); usable sectors {}..{}",
                    g.header_used.name(),
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
    s.push_str(&partition_table(o).render());
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
            if let Some(ks) = k.start_512_sectors {
                let _ = write!(
                    line,
                    "{}kernel ({}): start {ks}, alignment_offset {}",
                    if line.is_empty() { "" } else { "; " },
                    k.name,
                    k.alignment_offset_bytes.unwrap_or(0)
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
            k.logical_block_size_bytes.unwrap_or(0),
            k.physical_block_size_bytes.unwrap_or(0),
            k.minimum_io_size_bytes.unwrap_or(0),
            k.optimal_io_size_bytes.unwrap_or(0),
            k.alignment_offset_bytes.unwrap_or(0)
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
