//! The results of `dbio align calc` ([`CalcResult`]) and `dbio align check` ([`DiskCheck`]).
//! dbio-storage computes them (`dbio_storage::align`, which re-exports these types); the
//! exporters in dbio-report's `export` render them. JSON keys carry their unit on the leaf
//! (`start_sectors`, `sector_size_bytes`, `stride_blocks`); sector numbers count the sectors of
//! the document's sector size (`sector_bytes`, `table.sector_size_bytes`) unless the key says
//! `_512_sectors`.

use crate::disk::{GptInfo, PartKind, Superblock, TableKind};
use serde::Serialize;

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

/// A RAID level that is not one of [`RaidLevel`]'s.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("unknown RAID level '{0}': use 0, 1, 10, 5, 6, 50 or 60")]
pub struct UnknownRaidLevel(pub String);

impl std::str::FromStr for RaidLevel {
    type Err = UnknownRaidLevel;
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
            _ => return Err(UnknownRaidLevel(s.to_string())),
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
    pub start_sectors: u64,
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
    /// Mount option `sunit=`, in 512-byte units whatever the sector size.
    pub mount_sunit_512_sectors: u64,
    /// Mount option `swidth=`, in 512-byte units whatever the sector size.
    pub mount_swidth_512_sectors: u64,
    /// `sunit=..,swidth=..` for a filesystem already made.
    pub mount_options: String,
}

/// ext4 settings for this geometry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Ext4Settings {
    /// Stride in filesystem blocks (stripe unit / block size).
    pub stride_blocks: u64,
    /// Stripe width in filesystem blocks (stride x data disks).
    pub stripe_width_blocks: u64,
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
    pub recommended_start_sectors: u64,
    /// The same in bytes.
    pub recommended_start_bytes: u64,
    /// Smallest aligned start sector after an MBR label (sector 0).
    pub smallest_start_mbr_sectors: u64,
    /// Smallest aligned start sector after a GPT label (sectors 0-33 with 512-byte sectors).
    pub smallest_start_gpt_sectors: u64,
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

/// Alignment of one partition start.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StartAlign {
    /// Start sector (of the table's sector size).
    pub start_sectors: u64,
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

/// What the kernel says about one partition of a live device.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct KernelPart {
    /// Its sysfs name (`loop0p1`, `sda1`); empty when the kernel does not know the partition.
    pub name: String,
    /// `start`, in 512-byte units whatever the sector size.
    pub start_512_sectors: Option<u64>,
    /// `alignment_offset`, in bytes.
    pub alignment_offset_bytes: Option<u64>,
    /// Whether the kernel's start is the table's.
    pub agrees_with_table: Option<bool>,
}

/// The kernel's queue limits of a live device.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct KernelDisk {
    /// `queue/logical_block_size`.
    pub logical_block_size_bytes: Option<u64>,
    /// `queue/physical_block_size`.
    pub physical_block_size_bytes: Option<u64>,
    /// `queue/minimum_io_size`.
    pub minimum_io_size_bytes: Option<u64>,
    /// `queue/optimal_io_size`.
    pub optimal_io_size_bytes: Option<u64>,
    /// `alignment_offset`, in bytes.
    pub alignment_offset_bytes: Option<u64>,
}

/// Where an LVM2 physical volume's data area lands on the disk.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct LvmDataArea {
    /// PV UUID.
    pub pv_uuid: String,
    /// `pe_start`: bytes into the PV.
    pub pe_start_bytes: u64,
    /// The same from the start of the disk.
    pub pe_start_absolute_bytes: u64,
    /// Aligned to the stripe unit (absent without one).
    pub pe_start_aligned_to_stripe: Option<bool>,
    /// Aligned to 1 MiB.
    pub pe_start_aligned_1m: bool,
}

/// One partition (or the whole device, number 0, when it has no table).
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct PartitionCheck {
    /// Partition number (0: the whole device).
    pub number: u32,
    /// Primary, extended, logical or GPT.
    pub kind: PartKind,
    /// Type name.
    pub type_name: String,
    /// Type code.
    pub type_code: String,
    /// GPT partition name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// First sector (table sectors).
    pub start_sectors: u64,
    /// Last sector (table sectors).
    pub end_sectors: u64,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Alignment of the start.
    pub alignment: StartAlign,
    /// Filesystem or LVM label found at the start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<Superblock>,
    /// Filesystem geometry against the RAID (with a stripe unit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geometry: Option<GeometryCheck>,
    /// LVM data area (for a PV).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lvm: Option<LvmDataArea>,
    /// The kernel's view (live block devices).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelPart>,
    /// What else was found.
    pub notes: Vec<String>,
}

/// The partition table, in short.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct TableSummary {
    /// MBR or GPT.
    pub kind: TableKind,
    /// Sector size used, in bytes.
    pub sector_size_bytes: u64,
    /// Disk size in sectors.
    pub disk_sectors: u64,
    /// GPT header facts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpt: Option<GptInfo>,
    /// MBR disk identifier.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk_id: Option<String>,
}

/// The result of `dbio align check`.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct DiskCheck {
    /// The target as given.
    pub target: String,
    /// A live block device (the kernel's view was read).
    pub block_device: bool,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Stripe unit checked against.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stripe_bytes: Option<u64>,
    /// Data disks of the RAID.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_disks: Option<u32>,
    /// The partition table (absent for a filesystem on the whole device).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<TableSummary>,
    /// Partitions in table order.
    pub partitions: Vec<PartitionCheck>,
    /// The kernel's queue limits (live block devices).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelDisk>,
    /// Table warnings.
    pub warnings: Vec<String>,
}
impl DiskCheck {
    /// What fails the check (`dbio align check` exits 1 when this is not empty, as parted's
    /// `align-check` does): a partition (not an extended container) whose start is not a
    /// multiple of 4 KiB or of the stripe unit; a kernel `alignment_offset` other than 0
    /// (disk or partition); an LVM data area not on a 4 KiB boundary or off the stripe
    /// unit; a filesystem whose stripe geometry does not match the RAID or is missing.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(a) = self.kernel.as_ref().and_then(|k| k.alignment_offset_bytes) {
            if a != 0 {
                out.push(format!(
                    "{}: the kernel reports alignment_offset {a}",
                    self.target
                ));
            }
        }
        for p in self
            .partitions
            .iter()
            .filter(|p| p.kind != PartKind::Extended)
        {
            let n = p.number;
            let a = &p.alignment;
            if !a.aligned_4k {
                out.push(format!(
                    "partition {n}: start byte {} is not a multiple of 4 KiB",
                    a.start_bytes
                ));
            }
            if a.stripe_aligned == Some(false) {
                out.push(format!(
                    "partition {n}: start is off the stripe unit by {} bytes",
                    a.stripe_remainder_bytes.unwrap_or(0)
                ));
            }
            if let Some(o) = p
                .kernel
                .as_ref()
                .and_then(|k| k.alignment_offset_bytes)
                .filter(|&o| o != 0)
            {
                out.push(format!(
                    "partition {n}: the kernel reports alignment_offset {o}"
                ));
            }
            if let Some(l) = &p.lvm {
                let abs = l.pe_start_absolute_bytes;
                if !abs.is_multiple_of(4096) || l.pe_start_aligned_to_stripe == Some(false) {
                    out.push(format!(
                        "partition {n}: the LVM data area at byte {abs} is misaligned"
                    ));
                }
            }
            match p.geometry.as_ref().map(|g| g.verdict) {
                Some(GeometryMatch::Mismatch) => out.push(format!(
                    "partition {n}: the filesystem's stripe geometry does not match the RAID"
                )),
                Some(GeometryMatch::NoGeometry) => out.push(format!(
                    "partition {n}: the filesystem has no stripe geometry"
                )),
                _ => {}
            }
        }
        out
    }
}
