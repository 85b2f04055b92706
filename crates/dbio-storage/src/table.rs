//! Partition tables read from raw sectors: MBR (primary, extended and logical partitions
//! through the EBR chain) and GPT (protective MBR, primary header and entry array with their
//! CRC-32s, and the backup header at the end of the disk when the primary is damaged).

use crate::crc32::crc32;
use crate::source::ReadAt;
use serde::Serialize;
use std::io;
use thiserror::Error;

/// Why a partition table could not be read.
#[derive(Debug, Error)]
pub enum TableError {
    /// A read failed.
    #[error("cannot read {what}: {source}")]
    Io {
        /// What was being read.
        what: String,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// Neither an MBR signature nor a GPT header was found.
    #[error(
        "no partition table: sector 0 has no 0x55AA boot signature and sector 1 no GPT header"
    )]
    NoTable,
    /// A GPT whose primary and backup headers are both unusable.
    #[error("GPT is damaged beyond use: primary: {primary}; backup: {backup}; restore a saved copy (sgdisk --load-backup=FILE) or rebuild it with gdisk's recovery menu (r)")]
    GptDamaged {
        /// Why the primary header was rejected.
        primary: String,
        /// Why the backup header was rejected.
        backup: String,
    },
    /// The source is too small to hold a partition table.
    #[error("too small for a partition table ({0} bytes)")]
    TooSmall(u64),
    /// A logical sector size no disk has.
    #[error("sector size {0} is out of range: give the device's logical sector size, 512 or 4096 (at most 65536)")]
    BadSectorSize(u64),
}

pub use dbio_schema::disk::{GptInfo, HeaderSource, PartKind, TableKind};

/// One partition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Partition {
    /// Partition number as Linux numbers it (MBR logical partitions start at 5).
    pub number: u32,
    /// Primary, extended, logical or GPT.
    pub kind: PartKind,
    /// First sector (in units of the table's sector size).
    pub start_sector: u64,
    /// Length in sectors.
    pub sectors: u64,
    /// Type code: `0x83` for MBR, the type GUID for GPT.
    pub type_code: String,
    /// Human name of the type, `unknown` when not recognised.
    pub type_name: String,
    /// False when the type code is not one dbio knows.
    pub known_type: bool,
    /// GPT partition name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// MBR boot flag.
    pub bootable: bool,
}

/// A partition table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PartitionTable {
    /// MBR or GPT.
    pub kind: TableKind,
    /// Sector size used to read the table, in bytes.
    pub sector_size: u64,
    /// Size of the disk or image in sectors.
    pub disk_sectors: u64,
    /// GPT details.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpt: Option<GptInfo>,
    /// MBR disk identifier (`0x1234abcd`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk_id: Option<String>,
    /// Partitions in table order (primaries, then logicals).
    pub partitions: Vec<Partition>,
    /// Things a person should know: damaged headers, truncated images, unknown types.
    pub warnings: Vec<String>,
}

fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn read(
    src: &dyn ReadAt,
    offset: u64,
    len: usize,
    what: impl Into<String>,
) -> Result<Vec<u8>, TableError> {
    src.read_vec(offset, len).map_err(|source| TableError::Io {
        what: what.into(),
        source,
    })
}

/// Reads the partition table of `src`. `sector_size` is the logical sector size; `None` tries
/// 512 and then 4096 bytes (for GPT images made with 4 KiB sectors).
pub fn read_table(
    src: &dyn ReadAt,
    sector_size: Option<u64>,
) -> Result<PartitionTable, TableError> {
    if src.size() < 512 {
        return Err(TableError::TooSmall(src.size()));
    }
    if let Some(s) = sector_size.filter(|s| !(512..=65536).contains(s)) {
        return Err(TableError::BadSectorSize(s));
    }
    // With no sector size given, a GPT is looked for with 512-byte and then 4 KiB sectors.
    let sizes: Vec<u64> = match sector_size {
        None => vec![512, 4096],
        Some(s) => vec![s],
    };
    let mbr = read(src, 0, 512, "sector 0 (MBR)")?;
    let mbr_sig = le16(&mbr, 510) == 0xAA55;
    let protective = mbr_sig && (0..4).any(|i| mbr[446 + i * 16 + 4] == 0xEE);
    // A GPT is looked for when the MBR is protective, or when there is no MBR at all (a
    // damaged sector 0 must not hide a valid GPT).
    let mut gpt_failure = None;
    if protective || !mbr_sig {
        for &ss in &sizes {
            if src.size() < ss * 2 {
                continue;
            }
            match read_gpt(src, ss, protective) {
                Ok(Some(t)) => return Ok(t),
                Ok(None) => {}
                Err(e) => gpt_failure = Some(e),
            }
        }
    }
    if let Some(e) = gpt_failure {
        return Err(e);
    }
    if !mbr_sig {
        return Err(TableError::NoTable);
    }
    read_mbr(src, &mbr, sector_size.unwrap_or(512), protective)
}

fn is_extended(t: u8) -> bool {
    matches!(t, 0x05 | 0x0F | 0x85)
}

/// Name of an MBR partition type, or `None` when unknown.
pub fn mbr_type_name(t: u8) -> Option<&'static str> {
    Some(match t {
        0x01 => "FAT12",
        0x04 | 0x06 | 0x0E => "FAT16",
        0x05 => "Extended",
        0x07 => "HPFS/NTFS/exFAT",
        0x0B | 0x0C => "W95 FAT32",
        0x0F => "W95 Extended (LBA)",
        0x27 => "Windows recovery",
        0x42 => "Windows dynamic (SFS)",
        0x82 => "Linux swap",
        0x83 => "Linux",
        0x85 => "Linux extended",
        0x8E => "Linux LVM",
        0xA5 => "FreeBSD",
        0xA6 => "OpenBSD",
        0xA9 => "NetBSD",
        0xBF => "Solaris",
        0xDA => "Non-FS data",
        0xEE => "GPT protective",
        0xEF => "EFI System",
        0xFB => "VMware VMFS",
        0xFD => "Linux raid autodetect",
        _ => return None,
    })
}

fn read_mbr(
    src: &dyn ReadAt,
    mbr: &[u8],
    ss: u64,
    protective: bool,
) -> Result<PartitionTable, TableError> {
    let disk_sectors = src.size() / ss;
    let mut t = PartitionTable {
        kind: TableKind::Mbr,
        sector_size: ss,
        disk_sectors,
        gpt: None,
        disk_id: Some(format!("0x{:08x}", le32(mbr, 440))),
        partitions: Vec::new(),
        warnings: Vec::new(),
    };
    if protective {
        t.warnings.push(
            "sector 0 is a protective MBR (type 0xEE) but no usable GPT header was found; showing the MBR entries"
                .to_string(),
        );
    }
    let mut extended = None;
    for i in 0..4u32 {
        let e = &mbr[446 + i as usize * 16..446 + i as usize * 16 + 16];
        let ptype = e[4];
        let start = le32(e, 8) as u64;
        let len = le32(e, 12) as u64;
        if ptype == 0 || len == 0 {
            continue;
        }
        if e[0] != 0 && e[0] != 0x80 {
            t.warnings.push(format!(
                "partition {}: boot flag byte is 0x{:02x} (expected 0x00 or 0x80): the MBR may be damaged",
                i + 1,
                e[0]
            ));
        }
        let ext = is_extended(ptype);
        let part = mbr_partition(
            i + 1,
            if ext {
                PartKind::Extended
            } else {
                PartKind::Primary
            },
            ptype,
            start,
            len,
            e[0] == 0x80,
        );
        if ext && extended.is_none() {
            extended = Some((start, len));
        }
        t.partitions.push(part);
    }
    if let Some((ext_start, ext_len)) = extended {
        read_logicals(src, ss, ext_start, ext_len, &mut t);
    }
    finish(&mut t);
    Ok(t)
}

fn mbr_partition(
    number: u32,
    kind: PartKind,
    ptype: u8,
    start: u64,
    sectors: u64,
    bootable: bool,
) -> Partition {
    let name = mbr_type_name(ptype);
    Partition {
        number,
        kind,
        start_sector: start,
        sectors,
        type_code: format!("0x{ptype:02x}"),
        type_name: name.unwrap_or("unknown").to_string(),
        known_type: name.is_some(),
        name: None,
        bootable,
    }
}

fn read_logicals(src: &dyn ReadAt, ss: u64, ext_start: u64, ext_len: u64, t: &mut PartitionTable) {
    let mut ebr_lba = ext_start;
    let mut number = 5;
    let mut seen = std::collections::HashSet::new();
    loop {
        if !seen.insert(ebr_lba) || seen.len() > 256 {
            t.warnings.push(format!(
                "the chain of logical partitions loops back to sector {ebr_lba}; stopped there"
            ));
            return;
        }
        let ebr = match src.read_vec(ebr_lba * ss, 512) {
            Ok(b) => b,
            Err(e) => {
                t.warnings.push(format!(
                    "cannot read the extended boot record at sector {ebr_lba} ({e}): the image is shorter than its partition table claims; logical partitions from {number} on are missing"
                ));
                return;
            }
        };
        if le16(&ebr, 510) != 0xAA55 {
            t.warnings.push(format!(
                "extended boot record at sector {ebr_lba} has no 0x55AA signature; logical partitions from {number} on are missing"
            ));
            return;
        }
        let e0 = &ebr[446..462];
        let e1 = &ebr[462..478];
        if e0[4] != 0 && le32(e0, 12) != 0 {
            let start = ebr_lba + le32(e0, 8) as u64;
            let p = mbr_partition(
                number,
                PartKind::Logical,
                e0[4],
                start,
                le32(e0, 12) as u64,
                e0[0] == 0x80,
            );
            if start + p.sectors > ext_start + ext_len {
                t.warnings.push(format!(
                    "logical partition {number} ends at sector {} outside its extended partition (sectors {ext_start}..{})",
                    start + p.sectors - 1,
                    ext_start + ext_len - 1
                ));
            }
            t.partitions.push(p);
            number += 1;
        }
        if is_extended(e1[4]) && le32(e1, 8) != 0 {
            ebr_lba = ext_start + le32(e1, 8) as u64;
        } else {
            return;
        }
    }
}

/// Checks common to both table kinds: partitions past the end, unknown types.
fn finish(t: &mut PartitionTable) {
    for p in &t.partitions {
        let end = p.start_sector.saturating_add(p.sectors);
        if end > t.disk_sectors {
            t.warnings.push(format!(
                "partition {} ends at sector {} but the disk/image has only {} sectors: the image is shorter than its partition table claims (truncated copy, or a table from a larger disk)",
                p.number,
                end - 1,
                t.disk_sectors
            ));
        }
        if !p.known_type {
            t.warnings.push(format!(
                "partition {}: unknown partition type {}; its start and size are still checked",
                p.number, p.type_code
            ));
        }
    }
}

struct GptHeader {
    alternate_lba: u64,
    first_usable: u64,
    last_usable: u64,
    disk_guid: String,
    entries_lba: u64,
    entry_count: u32,
    entry_size: u32,
    entries_crc: u32,
}

/// Formats a GPT GUID (first three fields little-endian) as text.
pub fn guid_to_string(b: &[u8]) -> String {
    format!(
        "{:08X}-{:04X}-{:04X}-{:02X}{:02X}-{:02X}{:02X}{:02X}{:02X}{:02X}{:02X}",
        le32(b, 0),
        le16(b, 4),
        le16(b, 6),
        b[8],
        b[9],
        b[10],
        b[11],
        b[12],
        b[13],
        b[14],
        b[15]
    )
}

/// Name of a GPT partition type GUID, or `None` when unknown.
pub fn gpt_type_name(guid: &str) -> Option<&'static str> {
    Some(match guid {
        "0FC63DAF-8483-4772-8E79-3D69D8477DE4" => "Linux filesystem",
        "E6D6D379-F507-44C2-A23C-238F2A3DF928" => "Linux LVM",
        "A19D880F-05FC-4D3B-A006-743F0F84911E" => "Linux RAID",
        "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F" => "Linux swap",
        "4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709" => "Linux root (x86-64)",
        "933AC7E1-2EB4-4F13-B844-0E14E2AEF915" => "Linux home",
        "3B8F8425-20E0-4F3B-907F-1A25A76F98E8" => "Linux server data",
        "BC13C2FF-59E6-4262-A352-B275FD6F7172" => "Linux extended boot",
        "C12A7328-F81F-11D2-BA4B-00A0C93EC93B" => "EFI System",
        "21686148-6449-6E6F-744E-656564454649" => "BIOS boot",
        "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7" => "Microsoft basic data",
        "E3C9E316-0B5C-4DB8-817D-F92DF00215AE" => "Microsoft reserved",
        "DE94BBA4-06D1-4D40-A16A-BFD50179D6AC" => "Windows recovery",
        "6A898CC3-1DD2-11B2-99A6-080020736631" => "Solaris /usr or ZFS",
        "516E7CBA-6ECF-11D6-8FF8-00022D09712B" => "FreeBSD ZFS",
        "48465300-0000-11AA-AA11-00306543ECAC" => "Apple HFS+",
        _ => return None,
    })
}

fn parse_gpt_header(b: &[u8], lba: u64, ss: u64) -> Result<GptHeader, String> {
    if &b[0..8] != b"EFI PART" {
        return Err(format!("no 'EFI PART' signature at sector {lba}"));
    }
    let size = le32(b, 12) as usize;
    if !(92..=ss as usize).contains(&size) {
        return Err(format!(
            "header size {size} at sector {lba} is out of range"
        ));
    }
    let stored = le32(b, 16);
    let mut h = b[..size].to_vec();
    h[16..20].fill(0);
    let computed = crc32(&h);
    if stored != computed {
        return Err(format!(
            "header CRC mismatch at sector {lba}: stored 0x{stored:08x}, computed 0x{computed:08x}"
        ));
    }
    let my_lba = le64(b, 24);
    if my_lba != lba {
        return Err(format!(
            "header at sector {lba} says it lives at sector {my_lba}"
        ));
    }
    let entry_size = le32(b, 84);
    let entry_count = le32(b, 80);
    // The array is normally 128 entries of 128 bytes; refuse anything over 4 MiB.
    if entry_size < 128
        || !entry_size.is_multiple_of(8)
        || entry_size > 4096
        || entry_count as u64 * entry_size as u64 > 4 << 20
    {
        return Err(format!(
            "header at sector {lba}: implausible entry array ({entry_count} x {entry_size} bytes)"
        ));
    }
    Ok(GptHeader {
        alternate_lba: le64(b, 32),
        first_usable: le64(b, 40),
        last_usable: le64(b, 48),
        disk_guid: guid_to_string(&b[56..72]),
        entries_lba: le64(b, 72),
        entry_count,
        entry_size,
        entries_crc: le32(b, 88),
    })
}

/// Reads a header and its entry array; `Err` explains why it cannot be used.
fn load_gpt(src: &dyn ReadAt, ss: u64, lba: u64) -> Result<(GptHeader, Vec<u8>), String> {
    let b = src
        .read_vec(lba * ss, ss as usize)
        .map_err(|e| format!("cannot read sector {lba}: {e}"))?;
    let h = parse_gpt_header(&b, lba, ss)?;
    let len = h.entry_count as usize * h.entry_size as usize;
    let at = h.entries_lba.checked_mul(ss).ok_or_else(|| {
        format!(
            "the partition entry array at sector {} lies beyond 2^64 bytes",
            h.entries_lba
        )
    })?;
    let entries = src.read_vec(at, len).map_err(|e| {
        format!(
            "cannot read the partition entry array at sector {} ({len} bytes): {e}",
            h.entries_lba
        )
    })?;
    let computed = crc32(&entries);
    if computed != h.entries_crc {
        return Err(format!(
            "partition entry array at sector {} has a CRC mismatch: stored 0x{:08x}, computed 0x{computed:08x}",
            h.entries_lba, h.entries_crc
        ));
    }
    Ok((h, entries))
}

/// `Ok(None)`: no GPT at this sector size.
fn read_gpt(
    src: &dyn ReadAt,
    ss: u64,
    protective: bool,
) -> Result<Option<PartitionTable>, TableError> {
    let disk_sectors = src.size() / ss;
    let primary_sector = read(src, ss, ss as usize, "sector 1 (GPT header)")?;
    let has_sig = &primary_sector[0..8] == b"EFI PART";
    let last = disk_sectors - 1;
    let primary = load_gpt(src, ss, 1);
    // Where the backup should be: the primary says so when its sector is readable at all.
    let backup_lba = if has_sig {
        let alt = le64(&primary_sector, 32);
        if alt > 1 && alt < disk_sectors {
            alt
        } else {
            last
        }
    } else {
        last
    };
    let backup = load_gpt(src, ss, backup_lba);
    if !has_sig && backup.is_err() {
        // No GPT at this sector size; the caller tries the next one, then the MBR.
        return Ok(None);
    }
    let mut warnings = Vec::new();
    let (header, entries, used) = match (&primary, &backup) {
        (Ok((h, e)), b) => {
            if let Err(why) = b {
                warnings.push(format!(
                    "backup GPT is missing or damaged ({why}); the primary is fine: rewrite the backup with `sgdisk -e DEVICE` (or write the table again with gdisk)"
                ));
            }
            (h, e, HeaderSource::Primary)
        }
        (Err(why), Ok((h, e))) => {
            warnings.push(format!(
                "primary GPT is damaged ({why}); using the backup header at sector {backup_lba}: restore the primary with gdisk's recovery menu (r, b, c, w)"
            ));
            (h, e, HeaderSource::Backup)
        }
        (Err(p), Err(b)) => {
            return Err(TableError::GptDamaged {
                primary: p.clone(),
                backup: b.clone(),
            });
        }
    };
    if header.alternate_lba >= disk_sectors && used == HeaderSource::Primary {
        warnings.push(format!(
            "the GPT header puts its backup at sector {} but the disk/image has only {disk_sectors} sectors: the image is shorter than its partition table claims",
            header.alternate_lba
        ));
    }
    if !protective {
        warnings.push("sector 0 has no protective MBR (type 0xEE); tools that only know MBR may overwrite this GPT".to_string());
    }
    let mut parts = Vec::new();
    for i in 0..header.entry_count as usize {
        let e = &entries[i * header.entry_size as usize..(i + 1) * header.entry_size as usize];
        if e[0..16].iter().all(|&b| b == 0) {
            continue;
        }
        let type_guid = guid_to_string(&e[0..16]);
        let first = le64(e, 32);
        let last_lba = le64(e, 40);
        let name_units: Vec<u16> = (0..36)
            .map(|k| le16(e, 56 + k * 2))
            .take_while(|&c| c != 0)
            .collect();
        let name = String::from_utf16_lossy(&name_units);
        let tname = gpt_type_name(&type_guid);
        if last_lba < first {
            warnings.push(format!(
                "partition {}: last sector {last_lba} is before its first sector {first}",
                i + 1
            ));
            continue;
        }
        if last_lba
            .checked_add(1)
            .and_then(|e| e.checked_mul(ss))
            .is_none()
        {
            warnings.push(format!(
                "partition {}: sectors {first}..{last_lba} lie beyond 2^64 bytes, past any disk: the entry is damaged; skipped",
                i + 1
            ));
            continue;
        }
        if first < header.first_usable || last_lba > header.last_usable {
            warnings.push(format!(
                "partition {} (sectors {first}..{last_lba}) lies outside the usable area {}..{} and may overwrite the GPT itself",
                i + 1,
                header.first_usable,
                header.last_usable
            ));
        }
        parts.push(Partition {
            number: i as u32 + 1,
            kind: PartKind::Gpt,
            start_sector: first,
            sectors: last_lba - first + 1,
            type_code: type_guid,
            type_name: tname.unwrap_or("unknown").to_string(),
            known_type: tname.is_some(),
            name: if name.is_empty() { None } else { Some(name) },
            bootable: false,
        });
    }
    let mut t = PartitionTable {
        kind: TableKind::Gpt,
        sector_size: ss,
        disk_sectors,
        gpt: Some(GptInfo {
            header_used: used,
            primary_ok: primary.is_ok(),
            backup_ok: backup.is_ok(),
            backup_lba,
            first_usable: header.first_usable,
            last_usable: header.last_usable,
            disk_guid: header.disk_guid.clone(),
            protective_mbr: protective,
        }),
        disk_id: None,
        partitions: parts,
        warnings,
    };
    finish(&mut t);
    Ok(Some(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mbr_entry(buf: &mut [u8], slot: usize, ptype: u8, start: u32, len: u32) {
        let o = 446 + slot * 16;
        buf[o + 4] = ptype;
        buf[o + 8..o + 12].copy_from_slice(&start.to_le_bytes());
        buf[o + 12..o + 16].copy_from_slice(&len.to_le_bytes());
        buf[510] = 0x55;
        buf[511] = 0xAA;
    }

    #[test]
    fn mbr_with_extended_chain() {
        let mut img = vec![0u8; 512 * 4096];
        mbr_entry(&mut img, 0, 0x83, 63, 1000);
        mbr_entry(&mut img, 1, 0x05, 2048, 2000);
        // EBR 1 at 2048: logical at +63, next EBR at ext+1024
        let (e1, rest) = img.split_at_mut(2048 * 512);
        let _ = e1;
        mbr_entry(&mut rest[..512], 0, 0x83, 63, 500);
        mbr_entry(&mut rest[..512], 1, 0x05, 1024, 900);
        let ebr2 = &mut img[(2048 + 1024) * 512..(2048 + 1024) * 512 + 512];
        mbr_entry(ebr2, 0, 0x42 + 1, 128, 700);
        let t = read_table(&img, None).unwrap();
        assert_eq!(t.kind, TableKind::Mbr);
        let starts: Vec<(u32, u64, PartKind)> = t
            .partitions
            .iter()
            .map(|p| (p.number, p.start_sector, p.kind))
            .collect();
        assert_eq!(
            starts,
            vec![
                (1, 63, PartKind::Primary),
                (2, 2048, PartKind::Extended),
                (5, 2111, PartKind::Logical),
                (6, 3200, PartKind::Logical)
            ]
        );
        // 0x43 is not a known type
        assert!(
            t.warnings
                .iter()
                .any(|w| w.contains("unknown partition type 0x43")),
            "{:?}",
            t.warnings
        );
    }

    #[test]
    fn short_image_is_reported() {
        let mut img = vec![0u8; 512 * 100];
        mbr_entry(&mut img, 0, 0x83, 2048, 10000);
        let t = read_table(&img, None).unwrap();
        assert!(
            t.warnings[0].contains("shorter than its partition table claims"),
            "{:?}",
            t.warnings
        );
    }

    #[test]
    fn no_table() {
        let img = vec![0u8; 4096];
        assert!(matches!(read_table(&img, None), Err(TableError::NoTable)));
        assert!(matches!(
            read_table(&vec![0u8; 10], None),
            Err(TableError::TooSmall(10))
        ));
    }
}
