//! Alignment math: sectors per stripe unit, aligned start sectors (by sector and, for
//! cylinder labels, by the LCM method), data-disk counts per RAID level, and the exact
//! `mkfs.xfs`, `mkfs.ext4`, mount, `parted`, `sfdisk` and `diskpart` settings that follow.

use serde::Serialize;
use thiserror::Error;

pub mod check;
pub mod text;

/// A geometry that does not make sense.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum AlignError {
    /// Unknown RAID level text.
    #[error("unknown RAID level '{0}': use 0, 1, 10, 5, 6, 50 or 60")]
    BadLevel(String),
    /// A disk count that the level cannot have.
    #[error("RAID {level} cannot have {disks} disks: {why}")]
    BadDisks {
        /// The level.
        level: String,
        /// The count given.
        disks: u32,
        /// What is needed.
        why: String,
    },
    /// A size that is zero or not a whole number of sectors.
    #[error("{what} of {bytes} bytes is not a positive multiple of the {sector}-byte sector")]
    NotSectorMultiple {
        /// Which size.
        what: &'static str,
        /// Its value.
        bytes: u64,
        /// Sector size.
        sector: u64,
    },
    /// Zero where a count is needed.
    #[error("{0} must be greater than zero")]
    Zero(&'static str),
    /// A value beyond any real array or disk (and beyond what the arithmetic can hold).
    #[error("{what} {value} is larger than any real {max_why} (at most {max})")]
    TooLarge {
        /// Which value.
        what: &'static str,
        /// As given (bytes or a count).
        value: u64,
        /// The largest accepted.
        max: u64,
        /// What the bound stands for.
        max_why: &'static str,
    },
}

/// Bounds on [`calc`]'s input: far above any real array (so no real geometry is refused) and
/// low enough that every product and LCM of them fits in 64 bits.
const LIMITS: [(&str, u64, &str); 6] = [
    ("stripe unit (bytes)", 1 << 30, "stripe unit: 1 GiB"),
    ("sector size (bytes)", 1 << 16, "logical sector: 64 KiB"),
    (
        "filesystem block (bytes)",
        1 << 20,
        "filesystem block: 1 MiB",
    ),
    ("disk count", 1 << 16, "array: 65536 disks"),
    ("heads", 255, "CHS geometry: 255 heads"),
    (
        "sectors per track",
        63,
        "CHS geometry: 63 sectors per track",
    ),
];

/// RAID levels dbio knows the data-disk count of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum RaidLevel {
    /// Striping.
    #[serde(rename = "0")]
    Raid0,
    /// Mirroring.
    #[serde(rename = "1")]
    Raid1,
    /// Striped mirrors (1+0).
    #[serde(rename = "10")]
    Raid10,
    /// Single parity.
    #[serde(rename = "5")]
    Raid5,
    /// Double parity.
    #[serde(rename = "6")]
    Raid6,
    /// Striped RAID 5 spans.
    #[serde(rename = "50")]
    Raid50,
    /// Striped RAID 6 spans.
    #[serde(rename = "60")]
    Raid60,
}

impl std::str::FromStr for RaidLevel {
    type Err = AlignError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        let t = t
            .strip_prefix("raid")
            .unwrap_or(&t)
            .trim_start_matches(['-', ' ']);
        Ok(match t {
            "0" => RaidLevel::Raid0,
            "1" => RaidLevel::Raid1,
            "10" | "1+0" | "1-0" => RaidLevel::Raid10,
            "5" => RaidLevel::Raid5,
            "6" => RaidLevel::Raid6,
            "50" | "5+0" => RaidLevel::Raid50,
            "60" | "6+0" => RaidLevel::Raid60,
            _ => return Err(AlignError::BadLevel(s.to_string())),
        })
    }
}

impl std::fmt::Display for RaidLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RaidLevel::Raid0 => "0",
            RaidLevel::Raid1 => "1",
            RaidLevel::Raid10 => "10",
            RaidLevel::Raid5 => "5",
            RaidLevel::Raid6 => "6",
            RaidLevel::Raid50 => "50",
            RaidLevel::Raid60 => "60",
        })
    }
}

/// Number of disks that hold distinct data in one stripe (the `sw` of mkfs.xfs).
/// `spans` is the number of RAID 5/6 groups striped together for RAID 50/60.
pub fn data_disks(level: RaidLevel, disks: u32, spans: u32) -> Result<u32, AlignError> {
    let bad = |why: &str| AlignError::BadDisks {
        level: level.to_string(),
        disks,
        why: why.to_string(),
    };
    match level {
        RaidLevel::Raid0 if disks >= 1 => Ok(disks),
        RaidLevel::Raid0 => Err(bad("it needs at least 1")),
        RaidLevel::Raid1 if disks >= 2 => Ok(1),
        RaidLevel::Raid1 => Err(bad("it needs at least 2")),
        RaidLevel::Raid10 if disks >= 4 && disks.is_multiple_of(2) => Ok(disks / 2),
        RaidLevel::Raid10 => Err(bad("it needs an even number of at least 4")),
        RaidLevel::Raid5 if disks >= 3 => Ok(disks - 1),
        RaidLevel::Raid5 => Err(bad("it needs at least 3")),
        RaidLevel::Raid6 if disks >= 4 => Ok(disks - 2),
        RaidLevel::Raid6 => Err(bad("it needs at least 4")),
        RaidLevel::Raid50 | RaidLevel::Raid60 => {
            let parity = if level == RaidLevel::Raid50 { 1 } else { 2 };
            let min = if level == RaidLevel::Raid50 { 3 } else { 4 };
            if spans < 2 {
                return Err(bad("it needs at least 2 spans (--spans)"));
            }
            if !disks.is_multiple_of(spans) || disks / spans < min {
                return Err(bad(&format!(
                    "{spans} spans need the same number of disks each, at least {min} per span"
                )));
            }
            Ok(disks - parity * spans)
        }
    }
}

/// Greatest common divisor.
pub fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Least common multiple.
pub fn lcm(a: u64, b: u64) -> u64 {
    if a == 0 || b == 0 {
        0
    } else {
        a / gcd(a, b) * b
    }
}

/// What `dbio align calc` is given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CalcInput {
    /// Stripe unit (per-disk chunk, or LUN volume block) in bytes.
    pub stripe_bytes: u64,
    /// Disks in the array.
    pub disks: Option<u32>,
    /// RAID level.
    pub raid: Option<RaidLevel>,
    /// Spans for RAID 50/60.
    pub spans: u32,
    /// Logical sector size in bytes.
    pub sector_bytes: u64,
    /// Cylinder geometry: heads.
    pub heads: Option<u32>,
    /// Cylinder geometry: sectors per track.
    pub sectors_per_track: Option<u32>,
    /// Filesystem block size in bytes.
    pub fs_block_bytes: u64,
}

/// Cylinder (CHS label) alignment by the LCM method.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CylinderAlign {
    /// Heads.
    pub heads: u32,
    /// Sectors per track.
    pub sectors_per_track: u32,
    /// heads x sectors per track.
    pub sectors_per_cylinder: u64,
    /// Sectors per stripe unit (volume block).
    pub sectors_per_block: u64,
    /// LCM of the two.
    pub lcm_sectors: u64,
    /// First non-zero aligned cylinder: LCM / sectors per cylinder. Every multiple is aligned too.
    pub first_aligned_cylinder: u64,
    /// Its start sector.
    pub start_sector: u64,
}

/// XFS settings for this geometry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct XfsSettings {
    /// `mkfs.xfs -d su=..,sw=..`.
    pub mkfs: String,
    /// Stripe unit in filesystem blocks (mkfs prints `sunit=`).
    pub sunit_blocks: u64,
    /// Stripe width in filesystem blocks (mkfs prints `swidth=`).
    pub swidth_blocks: u64,
    /// Mount option `sunit=` in 512-byte units.
    pub mount_sunit: u64,
    /// Mount option `swidth=` in 512-byte units.
    pub mount_swidth: u64,
    /// `sunit=..,swidth=..` for a filesystem already made.
    pub mount_options: String,
}

/// ext4 settings for this geometry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Ext4Settings {
    /// Stride in filesystem blocks (stripe unit / block size).
    pub stride: u64,
    /// Stripe width in filesystem blocks (stride x data disks).
    pub stripe_width: u64,
    /// `mkfs.ext4 -b .. -E stride=..,stripe_width=..`.
    pub mkfs: String,
    /// `tune2fs -E stride=..,stripe_width=..` for a filesystem already made.
    pub tune2fs: String,
}

/// Everything `dbio align calc` prints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CalcResult {
    /// Stripe unit in bytes.
    pub stripe_bytes: u64,
    /// Sector size in bytes.
    pub sector_bytes: u64,
    /// Stripe unit in sectors.
    pub sectors_per_stripe_unit: u64,
    /// RAID level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raid: Option<RaidLevel>,
    /// Disks in the array.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disks: Option<u32>,
    /// Disks holding distinct data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_disks: Option<u32>,
    /// Full stripe (stripe unit x data disks) in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_stripe_bytes: Option<u64>,
    /// Recommended start: the smallest multiple of both 1 MiB and the stripe unit, in sectors.
    pub recommended_start_sector: u64,
    /// The same in bytes.
    pub recommended_start_bytes: u64,
    /// Smallest aligned start sector after an MBR label (sector 0).
    pub smallest_start_sector_mbr: u64,
    /// Smallest aligned start sector after a GPT label (sectors 0-33 with 512-byte sectors).
    pub smallest_start_sector_gpt: u64,
    /// Cylinder alignment, when heads and sectors per track were given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cylinder: Option<CylinderAlign>,
    /// Filesystem block size in bytes.
    pub fs_block_bytes: u64,
    /// XFS settings (needs the data-disk count).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xfs: Option<XfsSettings>,
    /// ext4 settings (needs the data-disk count and a stripe unit of at least one block).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ext4: Option<Ext4Settings>,
    /// `parted` command for an aligned GPT partition.
    pub parted: String,
    /// `sfdisk` command for an aligned GPT partition.
    pub sfdisk: String,
    /// Windows `diskpart` command.
    pub diskpart: String,
    /// Notes (why something is missing, non-power-of-two stripes).
    pub notes: Vec<String>,
}

/// Formats a byte count the way mkfs and people write it: `64k`, `1m`, `1536` (bytes).
pub fn size_arg(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{}m", bytes >> 20)
    } else if bytes.is_multiple_of(1024) {
        format!("{}k", bytes >> 10)
    } else {
        bytes.to_string()
    }
}

fn smallest_multiple_at_least(step: u64, min: u64) -> u64 {
    min.div_ceil(step) * step
}

/// Computes every number of `dbio align calc`.
pub fn calc(input: &CalcInput) -> Result<CalcResult, AlignError> {
    let given = [
        Some(input.stripe_bytes),
        Some(input.sector_bytes),
        Some(input.fs_block_bytes),
        input.disks.map(u64::from),
        input.heads.map(u64::from),
        input.sectors_per_track.map(u64::from),
    ];
    for (v, (what, max, max_why)) in given.into_iter().zip(LIMITS) {
        if let Some(value) = v.filter(|&v| v > max) {
            return Err(AlignError::TooLarge {
                what,
                value,
                max,
                max_why,
            });
        }
    }
    let ss = input.sector_bytes;
    if ss == 0 {
        return Err(AlignError::Zero("sector size"));
    }
    if input.stripe_bytes == 0 || !input.stripe_bytes.is_multiple_of(ss) {
        return Err(AlignError::NotSectorMultiple {
            what: "stripe unit",
            bytes: input.stripe_bytes,
            sector: ss,
        });
    }
    if input.fs_block_bytes == 0 || !input.fs_block_bytes.is_multiple_of(512) {
        return Err(AlignError::NotSectorMultiple {
            what: "filesystem block",
            bytes: input.fs_block_bytes,
            sector: 512,
        });
    }
    let sps = input.stripe_bytes / ss;
    let mut notes = Vec::new();
    if !input.stripe_bytes.is_power_of_two() {
        notes.push(format!(
            "the stripe unit {} is not a power of two: aligned starts are multiples of {sps} sectors, and 1 MiB is not one of them",
            size_arg(input.stripe_bytes)
        ));
    }
    let data = match (input.raid, input.disks) {
        (Some(level), Some(d)) => Some(data_disks(level, d, input.spans)?),
        (Some(RaidLevel::Raid1), None) => Some(1),
        (Some(_), None) => {
            notes.push(
                "give --disks with --raid to get the data-disk count and the mkfs settings".into(),
            );
            None
        }
        (None, Some(_)) => {
            notes.push(
                "give --raid with --disks to get the data-disk count and the mkfs settings".into(),
            );
            None
        }
        (None, None) => {
            notes.push("give --disks and --raid for the data-disk count and the mkfs.xfs/mkfs.ext4 settings".into());
            None
        }
    };
    let rec_bytes = lcm(1 << 20, input.stripe_bytes);
    let rec = rec_bytes / ss;
    let gpt_first = 2 + 16384u64.div_ceil(ss);
    let cylinder = match (input.heads, input.sectors_per_track) {
        (Some(h), Some(s)) => {
            if h == 0 || s == 0 {
                return Err(AlignError::Zero("heads and sectors per track"));
            }
            let spc = h as u64 * s as u64;
            let l = lcm(spc, sps);
            Some(CylinderAlign {
                heads: h,
                sectors_per_track: s,
                sectors_per_cylinder: spc,
                sectors_per_block: sps,
                lcm_sectors: l,
                first_aligned_cylinder: l / spc,
                start_sector: l,
            })
        }
        (None, None) => None,
        _ => {
            notes.push("cylinder alignment needs both --heads and --sectors-per-track".into());
            None
        }
    };
    let fsb = input.fs_block_bytes;
    let xfs = data.map(|d| {
        let sunit512 = input.stripe_bytes / 512;
        let swidth512 = sunit512 * d as u64;
        XfsSettings {
            mkfs: format!("mkfs.xfs -d su={},sw={d}", size_arg(input.stripe_bytes)),
            sunit_blocks: input.stripe_bytes / fsb,
            swidth_blocks: input.stripe_bytes * d as u64 / fsb,
            mount_sunit: sunit512,
            mount_swidth: swidth512,
            mount_options: format!("sunit={sunit512},swidth={swidth512}"),
        }
    });
    if xfs.is_some() && !input.stripe_bytes.is_multiple_of(fsb) {
        notes.push(format!(
            "the stripe unit {} is not a multiple of the {} filesystem block: mkfs.xfs will refuse su={}",
            size_arg(input.stripe_bytes),
            size_arg(fsb),
            size_arg(input.stripe_bytes)
        ));
    }
    let ext4 = match data {
        Some(d) if input.stripe_bytes >= fsb && input.stripe_bytes.is_multiple_of(fsb) => {
            let stride = input.stripe_bytes / fsb;
            let width = stride * d as u64;
            Some(Ext4Settings {
                stride,
                stripe_width: width,
                mkfs: format!("mkfs.ext4 -b {fsb} -E stride={stride},stripe_width={width}"),
                tune2fs: format!("tune2fs -E stride={stride},stripe_width={width}"),
            })
        }
        Some(_) => {
            notes.push(
                "ext4 stride needs a stripe unit that is a whole number of filesystem blocks"
                    .into(),
            );
            None
        }
        None => None,
    };
    let align_kb = rec_bytes / 1024;
    Ok(CalcResult {
        stripe_bytes: input.stripe_bytes,
        sector_bytes: ss,
        sectors_per_stripe_unit: sps,
        raid: input.raid,
        disks: input.disks,
        data_disks: data,
        full_stripe_bytes: data.map(|d| d as u64 * input.stripe_bytes),
        recommended_start_sector: rec,
        recommended_start_bytes: rec_bytes,
        smallest_start_sector_mbr: smallest_multiple_at_least(sps, 1),
        smallest_start_sector_gpt: smallest_multiple_at_least(sps, gpt_first),
        cylinder,
        fs_block_bytes: fsb,
        xfs,
        ext4,
        parted: format!("parted -s -a none DEVICE mklabel gpt unit s mkpart primary {rec}s 100%"),
        sfdisk: format!("echo 'start={rec}, type=L' | sfdisk --label gpt DEVICE"),
        diskpart: format!(
            "diskpart: select disk N, then: create partition primary align={align_kb}"
        ),
        notes,
    })
}

/// Alignment of one partition start.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StartAlign {
    /// Start sector.
    pub start_sector: u64,
    /// Start in bytes.
    pub start_bytes: u64,
    /// Stripe unit checked against, in bytes (absent when none was given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stripe_bytes: Option<u64>,
    /// Aligned to the stripe unit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stripe_aligned: Option<bool>,
    /// start_bytes mod stripe unit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stripe_remainder_bytes: Option<u64>,
    /// Aligned to 4 KiB.
    pub aligned_4k: bool,
    /// Aligned to 64 KiB.
    pub aligned_64k: bool,
    /// Aligned to 1 MiB.
    pub aligned_1m: bool,
}

/// Checks one start sector against a stripe unit (any size, power of two or not) and the
/// usual power-of-two boundaries.
pub fn check_start(start_sector: u64, sector_bytes: u64, stripe_bytes: Option<u64>) -> StartAlign {
    let b = start_sector * sector_bytes;
    StartAlign {
        start_sector,
        start_bytes: b,
        stripe_bytes,
        stripe_aligned: stripe_bytes.map(|s| s != 0 && b.is_multiple_of(s)),
        stripe_remainder_bytes: stripe_bytes.map(|s| if s == 0 { 0 } else { b % s }),
        aligned_4k: b.is_multiple_of(4096),
        aligned_64k: b.is_multiple_of(65536),
        aligned_1m: b.is_multiple_of(1 << 20),
    }
}

/// How a filesystem's stored geometry compares with the RAID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GeometryMatch {
    /// su and sw both match.
    Match,
    /// The filesystem has no stripe geometry at all.
    NoGeometry,
    /// They differ.
    Mismatch,
}

/// Result of comparing a filesystem's stripe geometry with the RAID.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GeometryCheck {
    /// Filesystem stripe unit in bytes.
    pub fs_su_bytes: u64,
    /// Filesystem stripe width in bytes.
    pub fs_sw_bytes: u64,
    /// Expected stripe unit in bytes.
    pub expected_su_bytes: u64,
    /// Expected stripe width in bytes (None when the data-disk count is unknown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_sw_bytes: Option<u64>,
    /// Verdict.
    pub verdict: GeometryMatch,
}

/// Compares filesystem su/sw (bytes) with the stripe unit and data-disk count.
pub fn check_geometry(
    fs_su: u64,
    fs_sw: u64,
    stripe: u64,
    data_disks: Option<u32>,
) -> GeometryCheck {
    let exp_sw = data_disks.map(|d| d as u64 * stripe);
    let verdict = if fs_su == 0 && fs_sw == 0 {
        GeometryMatch::NoGeometry
    } else if fs_su == stripe && exp_sw.is_none_or(|w| w == fs_sw) {
        GeometryMatch::Match
    } else {
        GeometryMatch::Mismatch
    };
    GeometryCheck {
        fs_su_bytes: fs_su,
        fs_sw_bytes: fs_sw,
        expected_su_bytes: stripe,
        expected_sw_bytes: exp_sw,
        verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(stripe: u64, disks: Option<u32>, raid: Option<RaidLevel>) -> CalcInput {
        CalcInput {
            stripe_bytes: stripe,
            disks,
            raid,
            spans: 2,
            sector_bytes: 512,
            heads: None,
            sectors_per_track: None,
            fs_block_bytes: 4096,
        }
    }

    /// What a user can type never overflows: values past any real array are refused, and
    /// the largest accepted ones (odd sizes, so LCMs are large) compute without overflow.
    #[test]
    fn huge_values_are_refused_and_the_largest_accepted_compute() {
        let e = calc(&input(8 << 50, Some(4_000_000_000), Some(RaidLevel::Raid0))).unwrap_err();
        assert!(
            matches!(
                e,
                AlignError::TooLarge {
                    what: "stripe unit (bytes)",
                    ..
                }
            ),
            "{e}"
        );
        let e = calc(&input(1 << 20, Some(4_000_000_000), Some(RaidLevel::Raid0))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "disk count 4000000000 is larger than any real array: 65536 disks (at most 65536)"
        );
        let mut big = input((1 << 30) - 512, Some(1 << 16), Some(RaidLevel::Raid0));
        big.heads = Some(255);
        big.sectors_per_track = Some(63);
        big.fs_block_bytes = 1 << 20;
        let r = calc(&big).unwrap();
        assert_eq!(r.full_stripe_bytes, Some(((1 << 30) - 512) << 16));
        big.sector_bytes = 1;
        // 1-byte sectors make the most sectors per stripe unit, the largest LCMs.
        assert_eq!(calc(&big).unwrap().recommended_start_sector, 2199022206976);
    }

    /// Articles: 64 KiB stripe / 512-byte sectors = 128 sectors; 27344896 / 128 = 213632.
    #[test]
    fn article_sector_math() {
        let r = calc(&input(65536, None, None)).unwrap();
        assert_eq!(r.sectors_per_stripe_unit, 128);
        let a = check_start(27344896, 512, Some(65536));
        assert_eq!(a.stripe_aligned, Some(true));
        assert_eq!(27344896 / r.sectors_per_stripe_unit, 213632);
        let bad = check_start(63, 512, Some(65536));
        assert_eq!(bad.stripe_aligned, Some(false));
        assert_eq!(bad.stripe_remainder_bytes, Some(32256));
        assert!(!bad.aligned_4k);
    }

    /// Article: 255 heads x 63 sectors, 8 KiB volume block -> LCM 257040 -> cylinder 16.
    #[test]
    fn article_cylinder_math() {
        let mut i = input(8192, None, None);
        i.heads = Some(255);
        i.sectors_per_track = Some(63);
        let c = calc(&i).unwrap().cylinder.unwrap();
        assert_eq!(c.sectors_per_cylinder, 16065);
        assert_eq!(c.sectors_per_block, 16);
        assert_eq!(c.lcm_sectors, 257040);
        assert_eq!(c.first_aligned_cylinder, 16);
    }

    /// Article: 8-disk RAID10, 64k -> su=64k,sw=4 -> sunit=16 swidth=64 blocks.
    #[test]
    fn article_xfs_raid10() {
        let r = calc(&input(65536, Some(8), Some(RaidLevel::Raid10))).unwrap();
        assert_eq!(r.data_disks, Some(4));
        let x = r.xfs.unwrap();
        assert_eq!(x.mkfs, "mkfs.xfs -d su=64k,sw=4");
        assert_eq!((x.sunit_blocks, x.swidth_blocks), (16, 64));
        assert_eq!(x.mount_options, "sunit=128,swidth=512");
        let e = r.ext4.unwrap();
        assert_eq!((e.stride, e.stripe_width), (16, 64));
        assert_eq!(r.recommended_start_sector, 2048);
        assert_eq!(r.smallest_start_sector_mbr, 128);
        assert_eq!(r.smallest_start_sector_gpt, 128);
        assert!(r.diskpart.ends_with("align=1024"));
    }

    #[test]
    fn data_disk_counts() {
        use RaidLevel::*;
        assert_eq!(data_disks(Raid0, 3, 2), Ok(3));
        assert_eq!(data_disks(Raid1, 2, 2), Ok(1));
        assert_eq!(data_disks(Raid5, 5, 2), Ok(4));
        assert_eq!(data_disks(Raid6, 6, 2), Ok(4));
        assert_eq!(data_disks(Raid50, 8, 2), Ok(6));
        assert_eq!(data_disks(Raid60, 12, 2), Ok(8));
        assert!(data_disks(Raid10, 5, 2).is_err());
        assert!(data_disks(Raid5, 2, 2).is_err());
        assert!(data_disks(Raid50, 7, 2).is_err());
        assert_eq!("1+0".parse::<RaidLevel>(), Ok(Raid10));
        assert!("7".parse::<RaidLevel>().is_err());
    }

    #[test]
    fn non_power_of_two_stripe() {
        // 3 x 32k = 96k: 192 sectors; 1 MiB is not a multiple, LCM(1 MiB, 96 KiB) = 3 MiB.
        let r = calc(&input(96 * 1024, Some(4), Some(RaidLevel::Raid5))).unwrap();
        assert_eq!(r.sectors_per_stripe_unit, 192);
        assert_eq!(r.recommended_start_sector, 6144);
        assert_eq!(r.smallest_start_sector_gpt, 192);
        assert!(r.notes[0].contains("not a power of two"));
        assert_eq!(
            check_start(2048, 512, Some(96 * 1024)).stripe_remainder_bytes,
            Some(65536)
        );
        assert_eq!(r.xfs.unwrap().mkfs, "mkfs.xfs -d su=96k,sw=3");
    }

    #[test]
    fn geometry_verdicts() {
        assert_eq!(
            check_geometry(65536, 262144, 65536, Some(4)).verdict,
            GeometryMatch::Match
        );
        assert_eq!(
            check_geometry(65536, 131072, 65536, Some(4)).verdict,
            GeometryMatch::Mismatch
        );
        assert_eq!(
            check_geometry(0, 0, 65536, Some(4)).verdict,
            GeometryMatch::NoGeometry
        );
        assert_eq!(
            check_geometry(65536, 131072, 65536, None).verdict,
            GeometryMatch::Match
        );
    }
}
