//! Alignment math: sectors per stripe unit, aligned start sectors (by sector and, for
//! cylinder labels, by the LCM method), data-disk counts per RAID level, and the exact
//! `mkfs.xfs`, `mkfs.ext4`, mount, `parted`, `sfdisk` and `diskpart` settings that follow.
//! The result types live in [`dbio_schema::align`] (re-exported here), beside their exporters.

use thiserror::Error;

pub mod check;

pub use dbio_schema::align::{
    size_arg, CalcResult, CylinderAlign, Ext4Settings, GeometryCheck, GeometryMatch, RaidLevel,
    StartAlign, UnknownRaidLevel, XfsSettings,
};

/// A geometry that does not make sense.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum AlignError {
    /// Unknown RAID level text.
    #[error(transparent)]
    BadLevel(#[from] UnknownRaidLevel),
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
                start_sectors: l,
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
            mount_sunit_512_sectors: sunit512,
            mount_swidth_512_sectors: swidth512,
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
                stride_blocks: stride,
                stripe_width_blocks: width,
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
        recommended_start_sectors: rec,
        recommended_start_bytes: rec_bytes,
        smallest_start_mbr_sectors: smallest_multiple_at_least(sps, 1),
        smallest_start_gpt_sectors: smallest_multiple_at_least(sps, gpt_first),
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

/// Checks one start sector against a stripe unit (any size, power of two or not) and the
/// usual power-of-two boundaries.
pub fn check_start(start_sector: u64, sector_bytes: u64, stripe_bytes: Option<u64>) -> StartAlign {
    let b = start_sector * sector_bytes;
    StartAlign {
        start_sectors: start_sector,
        start_bytes: b,
        stripe_bytes,
        stripe_aligned: stripe_bytes.map(|s| s != 0 && b.is_multiple_of(s)),
        stripe_remainder_bytes: stripe_bytes.map(|s| if s == 0 { 0 } else { b % s }),
        aligned_4k: b.is_multiple_of(4096),
        aligned_64k: b.is_multiple_of(65536),
        aligned_1m: b.is_multiple_of(1 << 20),
    }
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
        assert_eq!(calc(&big).unwrap().recommended_start_sectors, 2199022206976);
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
        assert_eq!((e.stride_blocks, e.stripe_width_blocks), (16, 64));
        assert_eq!(r.recommended_start_sectors, 2048);
        assert_eq!(r.smallest_start_mbr_sectors, 128);
        assert_eq!(r.smallest_start_gpt_sectors, 128);
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
        assert_eq!(r.recommended_start_sectors, 6144);
        assert_eq!(r.smallest_start_gpt_sectors, 192);
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
