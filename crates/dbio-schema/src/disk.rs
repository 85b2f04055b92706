//! What is on a disk, as `dbio align check` reports it: the kind of partition table and of each
//! entry, GPT header facts, filesystem superblock geometry (XFS, ext2/3/4) and the LVM2
//! physical-volume label. dbio-storage parses them (and re-exports these types from its
//! `table`, `fs` and `lvm` modules); the exporters here render them.
//!
//! Rust fields keep the on-disk names (`block_size`, `first_usable`); their JSON keys carry
//! their unit (`block_size_bytes`, `first_usable_sectors`) as every dbio document does.

use serde::Serialize;

/// The kind of partition table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TableKind {
    /// DOS/MBR label.
    Mbr,
    /// GUID partition table.
    Gpt,
}

impl TableKind {
    /// `mbr` or `gpt`.
    pub fn name(self) -> &'static str {
        match self {
            TableKind::Mbr => "mbr",
            TableKind::Gpt => "gpt",
        }
    }
}

/// Where a partition's entry lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PartKind {
    /// One of the four MBR entries.
    Primary,
    /// The MBR entry that holds the logical partitions.
    Extended,
    /// A partition inside the extended partition (through an EBR).
    Logical,
    /// A GPT entry.
    Gpt,
}

impl PartKind {
    /// `primary`, `extended`, `logical` or `gpt`.
    pub fn name(self) -> &'static str {
        match self {
            PartKind::Primary => "primary",
            PartKind::Extended => "extended",
            PartKind::Logical => "logical",
            PartKind::Gpt => "gpt",
        }
    }
}

/// Which GPT header was used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HeaderSource {
    /// The primary header at sector 1.
    Primary,
    /// The backup header (normally the last sector).
    Backup,
}

impl HeaderSource {
    /// `primary` or `backup`.
    pub fn name(self) -> &'static str {
        match self {
            HeaderSource::Primary => "primary",
            HeaderSource::Backup => "backup",
        }
    }
}

/// GPT header facts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GptInfo {
    /// The header the partitions were read from.
    pub header_used: HeaderSource,
    /// Primary header and its entry array passed their CRC checks.
    pub primary_ok: bool,
    /// Backup header and its entry array passed their CRC checks.
    pub backup_ok: bool,
    /// Sector of the backup header.
    #[serde(rename = "backup_lba_sectors")]
    pub backup_lba: u64,
    /// First usable sector.
    #[serde(rename = "first_usable_sectors")]
    pub first_usable: u64,
    /// Last usable sector.
    #[serde(rename = "last_usable_sectors")]
    pub last_usable: u64,
    /// Disk GUID.
    pub disk_guid: String,
    /// A protective MBR (type 0xEE) was present in sector 0.
    pub protective_mbr: bool,
}

/// A recognised filesystem superblock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Superblock {
    /// XFS.
    Xfs(XfsSuper),
    /// ext2, ext3 or ext4.
    Ext(ExtSuper),
    /// An LVM2 physical volume (not a filesystem, but what the partition holds).
    Lvm2(PvLabel),
}

impl Superblock {
    /// Short name: `xfs`, `ext4`, `LVM2_member`.
    pub fn name(&self) -> String {
        match self {
            Superblock::Xfs(_) => "xfs".into(),
            Superblock::Ext(e) => e.version.clone(),
            Superblock::Lvm2(_) => "LVM2_member".into(),
        }
    }
}

/// XFS superblock geometry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct XfsSuper {
    /// Filesystem block size in bytes.
    #[serde(rename = "block_size_bytes")]
    pub block_size: u32,
    /// Data blocks.
    pub data_blocks: u64,
    /// Blocks per allocation group.
    pub ag_blocks: u32,
    /// Number of allocation groups.
    pub ag_count: u32,
    /// Stripe unit in filesystem blocks (`sb_unit`; 0 = none).
    pub sunit_blocks: u32,
    /// Stripe width in filesystem blocks (`sb_width`; 0 = none).
    pub swidth_blocks: u32,
    /// Sector size in bytes.
    #[serde(rename = "sector_size_bytes")]
    pub sector_size: u16,
    /// Filesystem size in bytes.
    pub size_bytes: u64,
    /// Label.
    pub label: String,
}

impl XfsSuper {
    /// Stripe unit in bytes.
    pub fn su_bytes(&self) -> u64 {
        self.sunit_blocks as u64 * self.block_size as u64
    }
    /// Stripe width in bytes.
    pub fn sw_bytes(&self) -> u64 {
        self.swidth_blocks as u64 * self.block_size as u64
    }
}

/// ext2/3/4 superblock geometry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ExtSuper {
    /// `ext2`, `ext3` or `ext4`, from the feature flags.
    pub version: String,
    /// Block size in bytes.
    #[serde(rename = "block_size_bytes")]
    pub block_size: u32,
    /// Blocks.
    pub blocks: u64,
    /// `s_raid_stride` in blocks (0 = none).
    #[serde(rename = "raid_stride_blocks")]
    pub raid_stride: u16,
    /// `s_raid_stripe_width` in blocks (0 = none).
    #[serde(rename = "raid_stripe_width_blocks")]
    pub raid_stripe_width: u32,
    /// Filesystem size in bytes.
    pub size_bytes: u64,
    /// Label.
    pub label: String,
}

impl ExtSuper {
    /// Stripe unit (stride) in bytes.
    pub fn su_bytes(&self) -> u64 {
        self.raid_stride as u64 * self.block_size as u64
    }
    /// Stripe width in bytes.
    pub fn sw_bytes(&self) -> u64 {
        self.raid_stripe_width as u64 * self.block_size as u64
    }
}

/// What the LVM2 PV label says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PvLabel {
    /// Sector (512 bytes) of the label within the PV.
    #[serde(rename = "label_offset_sectors")]
    pub label_sector: u64,
    /// PV UUID as LVM prints it (6-4-4-4-4-4-6).
    pub pv_uuid: String,
    /// Device size recorded in the label, in bytes.
    pub device_size_bytes: u64,
    /// Start of the first data area (the first physical extent), in bytes from the PV start.
    pub pe_start_bytes: u64,
    /// Metadata areas.
    pub metadata_areas: Vec<MetadataArea>,
    /// The label's CRC matched.
    pub crc_ok: bool,
}

/// One LVM2 metadata area of a PV.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MetadataArea {
    /// Bytes from the PV start.
    pub offset_bytes: u64,
    /// Its size.
    pub size_bytes: u64,
}
