//! The InnoDB page format: FIL header and trailer, page types, the FSP header flags (page
//! size), the INDEX page header and the record lists (COMPACT and REDUNDANT). Pure functions
//! over page bytes; offsets are absolute within the page.

use serde::Serialize;

/// Page sizes InnoDB supports, smallest first.
pub const PAGE_SIZES: [usize; 5] = [4096, 8192, 16384, 32768, 65536];

/// FIL page types (the field at offset 24).
pub mod page_type {
    /// Freshly allocated page.
    pub const ALLOCATED: u16 = 0;
    /// Undo log page.
    pub const UNDO_LOG: u16 = 2;
    /// File segment inode.
    pub const INODE: u16 = 3;
    /// Insert buffer free list.
    pub const IBUF_FREE_LIST: u16 = 4;
    /// Insert buffer bitmap.
    pub const IBUF_BITMAP: u16 = 5;
    /// System page.
    pub const SYS: u16 = 6;
    /// Transaction system header.
    pub const TRX_SYS: u16 = 7;
    /// File space header (page 0).
    pub const FSP_HDR: u16 = 8;
    /// Extent descriptor page.
    pub const XDES: u16 = 9;
    /// Uncompressed BLOB page.
    pub const BLOB: u16 = 10;
    /// First compressed BLOB page.
    pub const ZBLOB: u16 = 11;
    /// Subsequent compressed BLOB page.
    pub const ZBLOB2: u16 = 12;
    /// MariaDB: clustered index root after instant ADD COLUMN (MySQL 8: SDI BLOB).
    pub const INSTANT: u16 = 18;
    /// MySQL 8 SDI index page.
    pub const SDI: u16 = 17853;
    /// R-tree index page.
    pub const RTREE: u16 = 17854;
    /// B-tree index page.
    pub const INDEX: u16 = 17855;
    /// MariaDB page_compressed.
    pub const PAGE_COMPRESSED: u16 = 34354;
    /// MariaDB page_compressed and encrypted.
    pub const PAGE_COMPRESSED_ENCRYPTED: u16 = 37401;
}

/// The name of a page type, or `None` when the value is no known type.
pub fn page_type_name(t: u16) -> Option<&'static str> {
    use page_type::*;
    Some(match t {
        ALLOCATED => "ALLOCATED",
        UNDO_LOG => "UNDO_LOG",
        INODE => "INODE",
        IBUF_FREE_LIST => "IBUF_FREE_LIST",
        IBUF_BITMAP => "IBUF_BITMAP",
        SYS => "SYS",
        TRX_SYS => "TRX_SYS",
        FSP_HDR => "FSP_HDR",
        XDES => "XDES",
        BLOB => "BLOB",
        ZBLOB => "ZBLOB",
        ZBLOB2 => "ZBLOB2",
        14 => "COMPRESSED",
        15 => "ENCRYPTED",
        16 => "COMPRESSED_AND_ENCRYPTED",
        17 => "ENCRYPTED_RTREE",
        INSTANT => "INSTANT",
        20 => "LEGACY_DBLWR",
        21 => "RSEG_ARRAY",
        22..=29 => "LOB",
        SDI => "SDI",
        RTREE => "RTREE",
        INDEX => "INDEX",
        PAGE_COMPRESSED => "PAGE_COMPRESSED",
        PAGE_COMPRESSED_ENCRYPTED => "PAGE_COMPRESSED_ENCRYPTED",
        t if t & 0x8000 != 0 => "FULL_CRC32_COMPRESSED",
        _ => return None,
    })
}

/// Whether pages of this type hold B-tree records (INDEX, RTREE, SDI, MariaDB INSTANT root).
pub fn is_index_type(t: u16) -> bool {
    matches!(
        t,
        page_type::INDEX | page_type::RTREE | page_type::SDI | page_type::INSTANT
    )
}

/// Whether pages of this type hold externally stored column data (BLOB/LOB pages).
pub fn is_blob_type(t: u16) -> bool {
    matches!(
        t,
        page_type::BLOB | page_type::ZBLOB | page_type::ZBLOB2 | 22..=29
    )
}

/// Big-endian u16 at `at`.
pub fn be16(p: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([p[at], p[at + 1]])
}

/// Big-endian u32 at `at`.
pub fn be32(p: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([p[at], p[at + 1], p[at + 2], p[at + 3]])
}

/// Big-endian u64 at `at`.
pub fn be64(p: &[u8], at: usize) -> u64 {
    (be32(p, at) as u64) << 32 | be32(p, at + 4) as u64
}

/// The FIL header of any page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FilHeader {
    /// Field 0: checksum (or key version in full_crc32).
    pub checksum_field: u32,
    /// Page number within its tablespace.
    pub page_no: u32,
    /// Previous page of the same B-tree level (0xFFFFFFFF = none).
    pub prev: u32,
    /// Next page of the same B-tree level (0xFFFFFFFF = none).
    pub next: u32,
    /// LSN of the last change.
    pub lsn: u64,
    /// Page type.
    pub page_type: u16,
    /// Tablespace id.
    pub space_id: u32,
}

impl FilHeader {
    /// Reads the FIL header (needs at least 38 bytes).
    pub fn parse(p: &[u8]) -> FilHeader {
        FilHeader {
            checksum_field: be32(p, 0),
            page_no: be32(p, 4),
            prev: be32(p, 8),
            next: be32(p, 12),
            lsn: be64(p, 16),
            page_type: be16(p, 24),
            space_id: be32(p, 34),
        }
    }
}

/// The page size recorded in FSP_SPACE_FLAGS (page 0, offset 54), for both the full_crc32
/// and the older flag layouts; `None` when the flags name no valid size.
pub fn page_size_from_flags(flags: u32) -> Option<usize> {
    let size = if flags_are_full_crc32(flags) {
        // full_crc32: marker bit 4, page ssize in bits 0-3 (512 << ssize); bits 5-7 name the
        // page_compressed algorithm.
        let ssize = flags & 0xF;
        if !(3..=7).contains(&ssize) {
            return None;
        }
        512usize << ssize
    } else {
        let ssize = (flags >> 6) & 0xF;
        match ssize {
            0 => 16384,
            3..=7 => 512usize << ssize,
            _ => return None,
        }
    };
    Some(size)
}

/// The size of the pages as stored: the KEY_BLOCK_SIZE of a ROW_FORMAT=COMPRESSED
/// tablespace (ZIP_SSIZE, bits 1-4 of the older layout), else the page size.
pub fn physical_page_size_from_flags(flags: u32) -> Option<usize> {
    if !flags_are_full_crc32(flags) {
        let zip = (flags >> 1) & 0xF;
        if (1..=5).contains(&zip) {
            return Some(512usize << zip);
        }
    }
    page_size_from_flags(flags)
}

/// Whether the FSP flags are the MariaDB full_crc32 layout (marker bit 4: in the older
/// layout bit 4 is the top bit of ZIP_SSIZE, which never reaches 8).
pub fn flags_are_full_crc32(flags: u32) -> bool {
    flags & 0x10 != 0
}

pub use dbio_schema::innodb::RowFormat;

/// The INDEX page header fields dbio uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct IndexHeader {
    /// COMPACT (bit 0x8000 of N_HEAP) or REDUNDANT.
    pub format: RowFormat,
    /// Number of heap records (including infimum and supremum).
    pub n_heap: u16,
    /// Start of the free (purged) record list, 0 = none.
    pub free: u16,
    /// Bytes in deleted records.
    pub garbage: u16,
    /// PAGE_N_RECS: user records in the page.
    pub n_recs: u16,
    /// B-tree level (0 = leaf).
    pub level: u16,
    /// Index id.
    pub index_id: u64,
}

impl IndexHeader {
    /// Reads the INDEX page header.
    pub fn parse(p: &[u8]) -> IndexHeader {
        let n_heap = be16(p, 42);
        IndexHeader {
            format: if n_heap & 0x8000 != 0 {
                RowFormat::Compact
            } else {
                RowFormat::Redundant
            },
            n_heap: n_heap & 0x7FFF,
            free: be16(p, 44),
            garbage: be16(p, 46),
            n_recs: be16(p, 54),
            level: be16(p, 64),
            index_id: be64(p, 66),
        }
    }
}

/// Origin of the infimum record: COMPACT.
pub const COMPACT_INFIMUM: usize = 99;
/// Origin of the supremum record: COMPACT.
pub const COMPACT_SUPREMUM: usize = 112;
/// Origin of the infimum record: REDUNDANT.
pub const REDUNDANT_INFIMUM: usize = 101;
/// Origin of the supremum record: REDUNDANT.
pub const REDUNDANT_SUPREMUM: usize = 116;

/// Which system-record layout the first bytes of a page show, if any: the "infimum\0" and
/// "supremum" strings at the COMPACT or REDUNDANT offsets, agreeing with the N_HEAP format bit.
/// Needs at least 125 bytes.
pub fn system_records(p: &[u8]) -> Option<RowFormat> {
    if p.len() < 125 {
        return None;
    }
    let compact_bit = p[42] & 0x80 != 0;
    // MariaDB's root page after an instant DROP or reorder of columns (type INSTANT): the
    // strings are zeroed and the supremum's last byte holds the core records' NULL bytes.
    let instant = be16(p, 24) == page_type::INSTANT;
    let names = |inf: usize, sup: usize| {
        &p[inf..inf + 8] == b"infimum\0" && &p[sup..sup + 8] == b"supremum"
            || instant
                && p[inf..inf + 8]
                    .iter()
                    .chain(&p[sup..sup + 7])
                    .all(|&b| b == 0)
    };
    if compact_bit && names(COMPACT_INFIMUM, COMPACT_SUPREMUM) {
        return Some(RowFormat::Compact);
    }
    if !compact_bit
        && names(REDUNDANT_INFIMUM, REDUNDANT_SUPREMUM)
        && (instant || p[REDUNDANT_SUPREMUM + 8] == 0)
    {
        return Some(RowFormat::Redundant);
    }
    None
}

/// The core records' NULL-bitmap bytes that MariaDB keeps in the zeroed supremum of an
/// INSTANT root page after an instant DROP or reorder of columns; `None` on other pages.
pub fn instant_core_null_bytes(p: &[u8]) -> Option<usize> {
    let sup = match system_records(p)? {
        RowFormat::Compact => COMPACT_SUPREMUM,
        RowFormat::Redundant => REDUNDANT_SUPREMUM,
        RowFormat::Compressed => return None,
    };
    (be16(p, 24) == page_type::INSTANT && p[sup..sup + 7].iter().all(|&b| b == 0))
        .then_some(p[sup + 7] as usize)
}

pub use dbio_schema::innodb::Record;

fn record_at(p: &[u8], format: RowFormat, origin: usize, purged: bool) -> Option<(Record, usize)> {
    let s = p.len();
    match format {
        RowFormat::Compressed => None,
        RowFormat::Compact => {
            if origin < 5 || origin + 2 > s {
                return None;
            }
            let info = p[origin - 5];
            let hs = be16(p, origin - 4);
            let rel = be16(p, origin - 2) as i16 as isize;
            let status = hs & 7;
            let at = origin as isize + rel;
            let next = if rel == 0 {
                0
            } else if (0..s as isize).contains(&at) {
                // Inside the page (the usual case): no division on the walk's path.
                at as usize
            } else {
                at.rem_euclid(s as isize) as usize
            };
            Some((
                Record {
                    origin: origin as u16,
                    heap_no: hs >> 3,
                    deleted: info & 0x20 != 0 || purged,
                    purged,
                    node_ptr: status == 1,
                },
                next,
            ))
        }
        RowFormat::Redundant => {
            if origin < 6 || origin + 2 > s {
                return None;
            }
            let info = p[origin - 6];
            let heap_no = (be16(p, origin - 5) & 0xFFF8) >> 3;
            let next = be16(p, origin - 2) as usize;
            Some((
                Record {
                    origin: origin as u16,
                    heap_no,
                    deleted: info & 0x20 != 0 || purged,
                    purged,
                    node_ptr: false,
                },
                next,
            ))
        }
    }
}

/// Walks the record list from the infimum and the free list from PAGE_FREE; returns the user
/// records (not infimum/supremum) sorted by origin. Stops at loops and out-of-page pointers,
/// so a damaged page yields the records reachable before the damage.
pub fn records(p: &[u8]) -> Vec<Record> {
    let Some(format) = system_records(p) else {
        return Vec::new();
    };
    let hdr = IndexHeader::parse(p);
    let (inf, sup) = match format {
        RowFormat::Compact => (COMPACT_INFIMUM, COMPACT_SUPREMUM),
        RowFormat::Redundant => (REDUNDANT_INFIMUM, REDUNDANT_SUPREMUM),
        RowFormat::Compressed => return Vec::new(),
    };
    let first_user = sup + 8;
    let mut out = Vec::new();
    // Offsets visited (one bit each; an offset past the page ends the walk at record_at).
    let mut seen = vec![0u64; p.len() / 64 + 1];
    let limit = p.len() / 5;
    for (start, purged) in [(inf, false), (hdr.free as usize, true)] {
        let mut at = start;
        let mut n = 0;
        while at != 0 && at != sup && n < limit {
            if at < p.len() {
                let (w, b) = (at / 64, at % 64);
                if seen[w] >> b & 1 == 1 {
                    break;
                }
                seen[w] |= 1 << b;
            }
            let Some((rec, next)) = record_at(p, format, at, purged) else {
                break;
            };
            if at >= first_user && at < p.len() - 8 {
                out.push(rec);
            } else if at != inf {
                break;
            }
            at = next;
            n += 1;
        }
    }
    out.sort_by_key(|r| r.origin);
    // The list walk in REDUNDANT pages has no status bits: a non-leaf page holds node pointers.
    if hdr.level > 0 {
        for r in &mut out {
            r.node_ptr = true;
        }
    }
    out
}

/// The record whose bytes hold `page_offset` (the nearest record origin at or before it),
/// from a sorted record list.
pub fn record_containing(recs: &[Record], page_offset: usize) -> Option<Record> {
    let i = recs.partition_point(|r| (r.origin as usize) <= page_offset);
    if i == 0 {
        return None;
    }
    Some(recs[i - 1])
}

/// Field end offsets of a REDUNDANT record (relative to its origin, NULL flag stripped), with
/// NULL flags. Returns `None` when the header does not fit the page.
pub fn redundant_fields(p: &[u8], origin: usize) -> Option<Vec<(usize, bool)>> {
    if origin < 6 || origin > p.len() {
        return None;
    }
    let n_fields = ((be16(p, origin - 4) & 0x7FE) >> 1) as usize;
    let short = p[origin - 3] & 1 != 0;
    let w = if short { 1 } else { 2 };
    if origin < 6 + n_fields * w {
        return None;
    }
    let mut out = Vec::with_capacity(n_fields);
    for i in 0..n_fields {
        let at = origin - 6 - (i + 1) * w;
        let (end, null) = if short {
            ((p[at] & 0x7F) as usize, p[at] & 0x80 != 0)
        } else {
            let v = be16(p, at);
            ((v & 0x3FFF) as usize, v & 0x8000 != 0)
        };
        out.push((end, null));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_to_page_size() {
        assert_eq!(page_size_from_flags(21), Some(16384)); // full_crc32 16K (MariaDB 10.11)
        assert_eq!(page_size_from_flags(0x14), Some(8192)); // full_crc32 8K
        assert_eq!(page_size_from_flags(0x100), Some(8192)); // crc32 8K
        assert_eq!(page_size_from_flags(0), Some(16384));
        assert_eq!(page_size_from_flags(3 << 6), Some(4096));
        assert_eq!(page_size_from_flags(7 << 6), Some(65536));
        assert_eq!(page_size_from_flags(9 << 6), None);
        assert!(flags_are_full_crc32(21));
        // ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8 in a 16K server (MariaDB 10.11).
        assert_eq!(page_size_from_flags(0x29), Some(16384));
        assert_eq!(physical_page_size_from_flags(0x29), Some(8192));
        assert_eq!(physical_page_size_from_flags(21), Some(16384));
        // A real page_compressed (zlib) full_crc32 tablespace of MariaDB 10.11.
        assert_eq!(page_size_from_flags(1_610_612_789), Some(16384));
        assert!(!flags_are_full_crc32(0x100));
    }

    #[test]
    fn type_names() {
        assert_eq!(page_type_name(17855), Some("INDEX"));
        assert_eq!(page_type_name(0x8000 | 12), Some("FULL_CRC32_COMPRESSED"));
        assert_eq!(page_type_name(1000), None);
    }
}
