//! `dbio align`: alignment math (`calc`) and the alignment of a real disk or image (`check`).

use crate::cli::{parse_size_arg, spelled, usage};
use crate::output::OutputArgs;
use dbio_schema::align::{CalcResult, DiskCheck};
use dbio_storage::align::check::{self as disk, CheckOptions};
use dbio_storage::align::{self, CalcInput, RaidLevel};
use dbio_sys::sysfs::Sys;
use std::path::PathBuf;

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
    #[command(
        after_help = "Exit status: 0 when all is aligned; 1 when a partition start is off 4 KiB or off --stripe, \
an LVM data area is misaligned, the kernel reports an alignment_offset, or a filesystem's stripe \
geometry does not match the RAID or is missing (as parted's align-check fails; the report is \
printed all the same), or when the target cannot be read; 2 for a usage error."
    )]
    Check(CheckArgs),
}

/// RAID geometry flags shared by `calc`, `check` and `dbio check`.
#[derive(clap::Args, Debug, Clone)]
pub struct Geometry {
    /// Number of disks in the array.
    #[arg(long)]
    pub disks: Option<u32>,
    /// RAID level (also written raid10, RAID-5, 1+0, 5+0, 6+0).
    #[arg(long, value_name = "LEVEL", value_parser = spelled::<RaidLevel>(RAID_LEVELS))]
    pub raid: Option<RaidLevel>,
    /// Number of RAID 5/6 spans for RAID 50/60.
    #[arg(long, default_value_t = 2)]
    pub spans: u32,
}

/// The names of `--raid`, with their help lines.
const RAID_LEVELS: &[(&str, &str)] = &[
    ("0", "striping"),
    ("1", "mirroring"),
    ("10", "striped mirrors (1+0)"),
    ("5", "single parity"),
    ("6", "double parity"),
    ("50", "striped RAID 5 spans (5+0)"),
    ("60", "striped RAID 6 spans (6+0)"),
];

impl Geometry {
    /// Data disks, when both --disks and --raid are given (or RAID 1).
    pub fn data_disks(&self) -> anyhow::Result<Option<u32>> {
        match (self.raid, self.disks) {
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
    #[command(flatten)]
    out: OutputArgs<CalcResult>,
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
    #[command(flatten)]
    out: OutputArgs<DiskCheck>,
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
        raid: a.geometry.raid,
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
    a.out.emit_result(&r)?;
    Ok(0)
}

fn check(a: CheckArgs) -> anyhow::Result<u8> {
    let opts = CheckOptions {
        target: a.target,
        stripe_bytes: a.stripe,
        data_disks: a.geometry.data_disks()?,
        sector_bytes: a.sector,
    };
    let r = disk::check_disk(&Sys::live(), &opts)?;
    a.out.emit_result(&r)?;
    // A failed check, as parted's align-check: scripts test the exit code.
    Ok(if r.problems().is_empty() {
        0
    } else {
        crate::cli::EXIT_FAILURE
    })
}
