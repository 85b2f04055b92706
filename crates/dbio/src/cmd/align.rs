//! `dbio align`: alignment math (`calc`) and the alignment of a real disk or image (`check`).

use crate::cli::{parse_size_arg, usage};
use anyhow::Context;
use dbio_report::units::format_size;
use dbio_report::{Document, Exporter, JsonExporter};
use dbio_storage::align::{self, CalcInput, CalcResult, GeometryCheck, RaidLevel, StartAlign};
use dbio_storage::fs::Superblock;
use dbio_storage::source::{FileSource, ReadAt, Slice};
use dbio_storage::table::{self, PartKind, PartitionTable};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Output formats of `dbio align`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// For people.
    Text,
    /// For machines.
    Json,
}

/// Arguments of `dbio align`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    cmd: Sub,
}

#[derive(clap::Subcommand, Debug)]
enum Sub {
    /// Compute aligned partition starts and mkfs/mount settings for a RAID geometry.
    Calc(CalcArgs),
    /// Read the partition table and filesystems of a disk or image and check their alignment.
    Check(CheckArgs),
}

/// RAID geometry flags shared by `calc`, `check` and `dbio check`.
#[derive(clap::Args, Debug, Clone)]
pub struct Geometry {
    /// Number of disks in the array.
    #[arg(long)]
    pub disks: Option<u32>,
    /// RAID level: 0, 1, 10, 5, 6, 50, 60.
    #[arg(long)]
    pub raid: Option<String>,
    /// Number of RAID 5/6 spans for RAID 50/60.
    #[arg(long, default_value_t = 2)]
    pub spans: u32,
}

impl Geometry {
    /// The RAID level, parsed (usage error when unknown).
    pub fn level(&self) -> anyhow::Result<Option<RaidLevel>> {
        self.raid
            .as_deref()
            .map(|r| {
                r.parse::<RaidLevel>()
                    .map_err(|e| usage(format!("--raid {r}: {e}")))
            })
            .transpose()
    }

    /// Data disks, when both --disks and --raid are given (or RAID 1).
    pub fn data_disks(&self) -> anyhow::Result<Option<u32>> {
        match (self.level()?, self.disks) {
            (Some(l), Some(d)) => align::data_disks(l, d, self.spans)
                .map(Some)
                .map_err(|e| usage(format!("--disks {d} --raid {l}: {e}"))),
            (Some(RaidLevel::Raid1), None) => Ok(Some(1)),
            (None, Some(_)) => Err(usage("--disks needs --raid (0, 1, 10, 5, 6, 50, 60)")),
            _ => Ok(None),
        }
    }
}

#[derive(clap::Args, Debug)]
struct CalcArgs {
    /// RAID stripe unit (per-disk chunk) or LUN volume block size: 64k, 256k, 8k.
    #[arg(long, value_parser = parse_size_arg)]
    stripe: u64,
    #[command(flatten)]
    geometry: Geometry,
    /// Logical sector size in bytes.
    #[arg(long, default_value = "512", value_parser = parse_size_arg)]
    sector: u64,
    /// Heads, for cylinder-addressed labels (with --sectors-per-track).
    #[arg(long)]
    heads: Option<u32>,
    /// Sectors per track, for cylinder-addressed labels (with --heads).
    #[arg(long)]
    sectors_per_track: Option<u32>,
    /// Filesystem block size.
    #[arg(long, default_value = "4k", value_parser = parse_size_arg)]
    fs_block: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Write the result to FILE instead of stdout.
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct CheckArgs {
    /// Block device or disk image file.
    target: PathBuf,
    /// RAID stripe unit to check against: 64k, 256k.
    #[arg(long, value_parser = parse_size_arg)]
    stripe: Option<u64>,
    #[command(flatten)]
    geometry: Geometry,
    /// Logical sector size (default: the device's, or 512 and then 4096 for GPT images).
    #[arg(long, value_parser = parse_size_arg)]
    sector: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Write the result to FILE instead of stdout.
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
}

/// Runs `dbio align`.
pub fn run(args: Args) -> anyhow::Result<u8> {
    match args.cmd {
        Sub::Calc(a) => calc(a),
        Sub::Check(a) => check(a),
    }
}

fn calc(a: CalcArgs) -> anyhow::Result<u8> {
    let input = CalcInput {
        stripe_bytes: a.stripe,
        disks: a.geometry.disks,
        raid: a.geometry.level()?,
        spans: a.geometry.spans,
        sector_bytes: a.sector,
        heads: a.heads,
        sectors_per_track: a.sectors_per_track,
        fs_block_bytes: a.fs_block,
    };
    let r = align::calc(&input).map_err(|e| {
        usage(format!(
            "{e}: check --stripe, --sector, --fs-block, --disks and --raid"
        ))
    })?;
    let bytes = match a.format {
        Format::Json => JsonExporter
            .to_string(&Document::new(dbio_report::doc::ALIGN_CALC, &r))?
            .into_bytes(),
        Format::Text => calc_text(&r).into_bytes(),
    };
    crate::output::emit(a.output.as_deref(), &bytes)?;
    Ok(0)
}

fn calc_text(r: &CalcResult) -> String {
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

/// What the kernel says about one partition of a live device.
#[derive(Serialize, Clone, Debug)]
struct KernelPart {
    name: String,
    start_sector_512: Option<u64>,
    alignment_offset: Option<u64>,
    agrees_with_table: Option<bool>,
}

#[derive(Serialize, Clone, Debug)]
struct KernelDisk {
    logical_block_size: Option<u64>,
    physical_block_size: Option<u64>,
    minimum_io_size: Option<u64>,
    optimal_io_size: Option<u64>,
    alignment_offset: Option<u64>,
}

#[derive(Serialize, Clone, Debug)]
struct LvmOut {
    pv_uuid: String,
    pe_start_bytes: u64,
    pe_start_absolute_bytes: u64,
    pe_start_aligned_to_stripe: Option<bool>,
    pe_start_aligned_1m: bool,
}

#[derive(Serialize, Clone, Debug)]
struct PartOut {
    number: u32,
    kind: PartKind,
    type_name: String,
    type_code: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    start_sector: u64,
    end_sector: u64,
    size_bytes: u64,
    alignment: StartAlign,
    #[serde(skip_serializing_if = "Option::is_none")]
    filesystem: Option<Superblock>,
    #[serde(skip_serializing_if = "Option::is_none")]
    geometry: Option<GeometryCheck>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lvm: Option<LvmOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kernel: Option<KernelPart>,
    notes: Vec<String>,
}

#[derive(Serialize)]
struct CheckOut {
    target: String,
    block_device: bool,
    size_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    stripe_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    data_disks: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    table: Option<TableOut>,
    partitions: Vec<PartOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kernel: Option<KernelDisk>,
    warnings: Vec<String>,
}

#[derive(Serialize)]
struct TableOut {
    kind: table::TableKind,
    sector_size: u64,
    disk_sectors: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    gpt: Option<table::GptInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    disk_id: Option<String>,
}

fn sysfs_u64(p: &Path) -> Option<u64> {
    std::fs::read_to_string(p).ok()?.trim().parse().ok()
}

/// The sysfs directory of a block device node, when `path` is one.
fn block_sysfs(path: &Path) -> Option<PathBuf> {
    let (maj, min) = dbio_sys::mounts::block_dev_numbers(path).ok()?;
    std::fs::canonicalize(dbio_sys::sysfs::Sys::live().dev_block(maj, min)).ok()
}

fn geometry_check(
    sb: &Superblock,
    stripe: Option<u64>,
    data: Option<u32>,
) -> Option<GeometryCheck> {
    let s = stripe?;
    match sb {
        Superblock::Xfs(x) => Some(align::check_geometry(x.su_bytes(), x.sw_bytes(), s, data)),
        Superblock::Ext(e) => Some(align::check_geometry(e.su_bytes(), e.sw_bytes(), s, data)),
        Superblock::Lvm2(_) => None,
    }
}

fn check(a: CheckArgs) -> anyhow::Result<u8> {
    let data = a.geometry.data_disks()?;
    let path = &a.target;
    let src = FileSource::open(path).with_context(|| format!("cannot open {} read-only: check the path and that you may read it (block devices need root)", path.display()))?;
    let sys_dir = block_sysfs(path);
    let kernel = sys_dir.as_ref().map(|d| {
        let q = d.join("queue");
        KernelDisk {
            logical_block_size: sysfs_u64(&q.join("logical_block_size")),
            physical_block_size: sysfs_u64(&q.join("physical_block_size")),
            minimum_io_size: sysfs_u64(&q.join("minimum_io_size")),
            optimal_io_size: sysfs_u64(&q.join("optimal_io_size")),
            alignment_offset: sysfs_u64(&d.join("alignment_offset")),
        }
    });
    let sector = a
        .sector
        .or_else(|| kernel.as_ref().and_then(|k| k.logical_block_size));
    let mut out = CheckOut {
        target: path.display().to_string(),
        block_device: sys_dir.is_some(),
        size_bytes: src.size(),
        stripe_bytes: a.stripe,
        data_disks: data,
        table: None,
        partitions: Vec::new(),
        kernel,
        warnings: Vec::new(),
    };
    match table::read_table(&src, sector) {
        Ok(t) => fill_partitions(&mut out, &src, &t, a.stripe, data, sys_dir.as_deref()),
        Err(table::TableError::NoTable) => {
            // A filesystem on the whole device is common on RAID LUNs and LVs.
            let sb = dbio_storage::fs::probe(&src)
                .with_context(|| format!("cannot read the start of {}", path.display()))?;
            match sb {
                Some(sb) => {
                    out.warnings.push("no partition table: the filesystem starts at sector 0 of the device, which is aligned to every stripe".into());
                    out.partitions.push(PartOut {
                        number: 0,
                        kind: PartKind::Primary,
                        type_name: "whole device".into(),
                        type_code: "-".into(),
                        name: None,
                        start_sector: 0,
                        end_sector: src.size() / 512 - 1,
                        size_bytes: src.size(),
                        alignment: align::check_start(0, 512, a.stripe),
                        geometry: geometry_check(&sb, a.stripe, data),
                        lvm: lvm_out(&sb, 0, a.stripe),
                        filesystem: Some(sb),
                        kernel: None,
                        notes: Vec::new(),
                    });
                }
                None => anyhow::bail!(
                    "{}: no partition table (no 0x55AA signature in sector 0, no GPT header) and no XFS, ext or LVM2 signature at its start: is this the right device or image?",
                    path.display()
                ),
            }
        }
        Err(e) => {
            return Err(anyhow::Error::new(e))
                .with_context(|| format!("cannot read the partition table of {}", path.display()))
        }
    }
    let bytes = match a.format {
        Format::Json => JsonExporter
            .to_string(&Document::new(dbio_report::doc::ALIGN_CHECK, &out))?
            .into_bytes(),
        Format::Text => check_text(&out).into_bytes(),
    };
    crate::output::emit(a.output.as_deref(), &bytes)?;
    Ok(0)
}

fn lvm_out(sb: &Superblock, part_start_bytes: u64, stripe: Option<u64>) -> Option<LvmOut> {
    let Superblock::Lvm2(l) = sb else { return None };
    // A damaged label can put the data area near 2^64: saturate rather than wrap.
    let abs = part_start_bytes.saturating_add(l.pe_start_bytes);
    Some(LvmOut {
        pv_uuid: l.pv_uuid.clone(),
        pe_start_bytes: l.pe_start_bytes,
        pe_start_absolute_bytes: abs,
        pe_start_aligned_to_stripe: stripe.map(|s| abs.is_multiple_of(s)),
        pe_start_aligned_1m: abs.is_multiple_of(1 << 20),
    })
}

/// The sysfs directory of partition `n` of the disk at `disk_dir`.
fn kernel_partition(disk_dir: &Path, n: u32) -> Option<PathBuf> {
    let rd = std::fs::read_dir(disk_dir).ok()?;
    for e in rd.flatten() {
        let p = e.path();
        if p.join("partition").exists() && sysfs_u64(&p.join("partition")) == Some(n as u64) {
            return Some(p);
        }
    }
    None
}

fn fill_partitions(
    out: &mut CheckOut,
    src: &FileSource,
    t: &PartitionTable,
    stripe: Option<u64>,
    data: Option<u32>,
    sys_dir: Option<&Path>,
) {
    let ss = t.sector_size;
    out.warnings.extend(t.warnings.iter().cloned());
    out.table = Some(TableOut {
        kind: t.kind,
        sector_size: ss,
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
                match dbio_storage::fs::probe(&slice) {
                    Ok(sb) => fs = sb,
                    Err(e) => notes.push(format!("cannot read the filesystem superblock: {e}")),
                }
            }
        }
        let kernel = sys_dir.map(|d| match kernel_partition(d, p.number) {
            Some(kp) => {
                let kstart = sysfs_u64(&kp.join("start"));
                let agrees = kstart.map(|k| k * 512 == start_bytes);
                if agrees == Some(false) {
                    notes.push(format!(
                        "the kernel has this partition at sector {} (512-byte units) but the table says {}: the table was changed without re-reading it (partprobe / blockdev --rereadpt)",
                        kstart.unwrap_or(0),
                        p.start_sector
                    ));
                }
                let ao = sysfs_u64(&kp.join("alignment_offset"));
                if let Some(a) = ao.filter(|&a| a != 0) {
                    notes.push(format!("the kernel reports alignment_offset {a}: misaligned with the device's physical blocks"));
                }
                KernelPart { name: kp.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(), start_sector_512: kstart, alignment_offset: ao, agrees_with_table: agrees }
            }
            None => {
                notes.push("the kernel does not know this partition (not re-read since the table changed?)".into());
                KernelPart { name: String::new(), start_sector_512: None, alignment_offset: None, agrees_with_table: None }
            }
        });
        out.partitions.push(PartOut {
            number: p.number,
            kind: p.kind,
            type_name: p.type_name.clone(),
            type_code: p.type_code.clone(),
            name: p.name.clone(),
            start_sector: p.start_sector,
            end_sector: p.start_sector + p.sectors.saturating_sub(1),
            size_bytes,
            alignment: align::check_start(p.start_sector, ss, stripe),
            geometry: fs.as_ref().and_then(|sb| geometry_check(sb, stripe, data)),
            lvm: fs.as_ref().and_then(|sb| lvm_out(sb, start_bytes, stripe)),
            filesystem: fs,
            kernel,
            notes,
        });
    }
}

fn yn(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "NO"
    }
}

fn check_text(o: &CheckOut) -> String {
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
                align::size_arg(st)
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
                align::GeometryMatch::Match if g.expected_sw_bytes.is_none() => {
                    "su matches the stripe unit (width not checked: give --disks and --raid)"
                        .to_string()
                }
                align::GeometryMatch::Match => "matches the RAID".to_string(),
                align::GeometryMatch::NoGeometry => "has NO stripe geometry".to_string(),
                align::GeometryMatch::Mismatch => match g.expected_sw_bytes {
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
