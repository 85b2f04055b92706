//! MySQL 8 Serialized Dictionary Information (SDI): the table and tablespace definitions a
//! MySQL 8 tablespace carries inside itself, as `ibd2sdi` prints them.
//!
//! The SDI is a B-tree of its own (pages of type SDI, 17853, COMPACT records) whose root page
//! number page 0 records after the extent descriptors and the encryption information
//! (`fsp_header_get_sdi_offset`: a 4-byte SDI version, 1, then the root). Each leaf record is
//! `type (4) | id (8) | DB_TRX_ID (6) | DB_ROLL_PTR (7) | uncompressed length (4) |
//! compressed length (4) | data`, the data a zlib stream of the JSON text; a long one is
//! stored off the page in SDI BLOB pages (type 18: part length at byte 38, next page at 42,
//! the part from byte 46). Type 1 is the table (`dd_object_type` "Table"), type 2 the
//! tablespace.
//!
//! In a ROW_FORMAT=COMPRESSED tablespace the SDI pages are compressed like leaf INDEX pages
//! and page 0's descriptors are of the physical page size: [`uncompressed`].
//!
//! [`read_file`] reads an .ibd by page number from its SDI root; [`read`] takes any page
//! reader and a root (pages found on an image: [`find_root`] picks the root among them).
//! [`ibd2sdi`] prints the records as `ibd2sdi` does.

use crate::io::read_full_at;
use crate::page::{be16, be32, be64, page_size_from_flags, page_type};
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// FIL_NULL: no page.
const FIL_NULL: u32 = u32::MAX;
/// SDI BLOB page (MySQL 8's number; MariaDB uses 18 for its instant root).
pub const SDI_BLOB: u16 = 18;
/// Compressed SDI BLOB page (ROW_FORMAT=COMPRESSED tablespaces).
pub const SDI_ZBLOB: u16 = 19;
/// Bit of FSP_SPACE_FLAGS set when the tablespace has an SDI.
const FSP_FLAGS_SDI: u32 = 1 << 14;
/// Largest JSON text accepted (a table with thousands of columns stays far below).
const MAX_SDI_BYTES: u32 = 64 << 20;

/// One SDI record: what `ibd2sdi` prints as `{"type": .., "id": .., "object": ..}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SdiRecord {
    /// 1 = table, 2 = tablespace.
    pub sdi_type: u32,
    /// The dictionary object id.
    pub id: u64,
    /// The JSON text as the server stored it.
    pub json: String,
}

/// Why the SDI could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SdiError {
    /// Reading the file failed.
    #[error("cannot read {path}: {err}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        err: std::io::Error,
    },
    /// Page 0 says the tablespace has no SDI.
    #[error("{0}")]
    NoSdi(String),
    /// A page of the SDI is missing or is not what the tree says.
    #[error("SDI page {page_no}: {why}")]
    Page {
        /// The page number.
        page_no: u32,
        /// What is wrong.
        why: String,
    },
    /// A record does not decode.
    #[error("SDI record at page {page_no} offset {offset}: {why}")]
    Record {
        /// The page number.
        page_no: u32,
        /// The record's origin in the page.
        offset: usize,
        /// What is wrong.
        why: String,
    },
}

/// A reader of the tablespace's pages by number: the page's bytes, or why not.
pub type PageReader<'a> = dyn Fn(u32) -> Result<Vec<u8>, String> + 'a;

/// The SDI root page number recorded in page 0 (`page0` holds at least the logical page).
pub fn root_from_page0(page0: &[u8]) -> Result<u32, SdiError> {
    if page0.len() < 4096 {
        return Err(SdiError::NoSdi(format!(
            "page 0 is {} bytes: not an InnoDB tablespace",
            page0.len()
        )));
    }
    let flags = be32(page0, 54);
    if be16(page0, 24) != page_type::FSP_HDR {
        return Err(SdiError::NoSdi(format!(
            "page 0 is of type {}, not the FSP header: not an .ibd (or its first page is damaged)",
            be16(page0, 24)
        )));
    }
    if crate::page::flags_are_full_crc32(flags) || flags & FSP_FLAGS_SDI == 0 {
        return Err(SdiError::NoSdi(format!(
            "the tablespace flags (0x{flags:x}) have no SDI: not a MySQL 8 tablespace (MySQL 5.x, MariaDB); give the definition with --table-def"
        )));
    }
    let ps = page_size_from_flags(flags).ok_or_else(|| {
        SdiError::NoSdi(format!(
            "the tablespace flags (0x{flags:x}) name no page size"
        ))
    })?;
    // ROW_FORMAT=COMPRESSED: the descriptors are of the physical page (extents of the
    // logical page's size in pages).
    let zip = (flags >> 1) & 0xF;
    let at = if zip != 0 {
        let phys = 512usize << zip;
        let extent = if ps <= 16384 { (1 << 20) / ps } else { 64 };
        150 + (24 + (2 * extent).div_ceil(8)) * (phys / extent) + 115
    } else {
        sdi_offset(ps)
    };
    if page0.len() < at + 8 {
        return Err(SdiError::NoSdi(
            "page 0 is shorter than its page size".into(),
        ));
    }
    let (version, root) = (be32(page0, at), be32(page0, at + 4));
    if version != 1 || root == 0 || root == FIL_NULL {
        return Err(SdiError::NoSdi(format!(
            "page 0 records no SDI root (version {version}, root {root} at byte {at})"
        )));
    }
    Ok(root)
}

/// The offset in page 0 of the SDI version and root: after the FSP header (38 + 112), the
/// extent descriptors of the first extent group and Encryption::INFO_MAX_SIZE (115).
fn sdi_offset(page_size: usize) -> usize {
    // Pages per extent: 1 MiB extents, but 64 pages for 32K and 64K pages.
    let extent = if page_size <= 16384 {
        (1 << 20) / page_size
    } else {
        64
    };
    let xdes_size = 24 + (2 * extent).div_ceil(8);
    150 + xdes_size * (page_size / extent) + 115
}

/// The SDI records of the tablespace `path` (an .ibd of MySQL 8), read from its SDI root.
pub fn read_file(path: &Path) -> Result<Vec<SdiRecord>, SdiError> {
    let name = path.display().to_string();
    let io = |err| SdiError::Io {
        path: name.clone(),
        err,
    };
    let file = File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let mut page0 = vec![0u8; len.min(65536) as usize];
    let n = read_full_at(&file, &mut page0, 0).map_err(io)?;
    page0.truncate(n);
    let root = root_from_page0(&page0)?;
    let flags = be32(&page0, 54);
    let ps = crate::page::physical_page_size_from_flags(flags).expect("checked by root_from_page0");
    let zip = ps != page_size_from_flags(flags).expect("checked by root_from_page0");
    let get = |page_no: u32| -> Result<Vec<u8>, String> {
        let off = page_no as u64 * ps as u64;
        if off + ps as u64 > len {
            return Err(format!("beyond the end of the file ({len} bytes)"));
        }
        let mut buf = vec![0u8; ps];
        match read_full_at(&file, &mut buf, off) {
            Ok(n) if n == ps => {}
            Ok(n) => return Err(format!("short read ({n} of {ps} bytes)")),
            Err(e) => return Err(format!("read error: {e}")),
        }
        if zip {
            return uncompressed(buf);
        }
        Ok(buf)
    };
    read(root, &get)
}

/// The page of a ROW_FORMAT=COMPRESSED tablespace as the reader needs it: an SDI page
/// decompressed (as a leaf INDEX page is: same format; the decompressor takes INDEX pages
/// only, so the type is swapped there and back), others as they are.
pub fn uncompressed(mut buf: Vec<u8>) -> Result<Vec<u8>, String> {
    if buf.len() < 38 || be16(&buf, 24) != page_type::SDI {
        return Ok(buf);
    }
    buf[24..26].copy_from_slice(&page_type::INDEX.to_be_bytes());
    crate::rows::zip::decompress(&buf)
        .map(|(mut p, _)| {
            p[24..26].copy_from_slice(&page_type::SDI.to_be_bytes());
            p
        })
        .map_err(|e| format!("a compressed SDI page that does not decompress ({e:?})"))
}

/// Among SDI pages of one tablespace (page number, level, whether it has no neighbours),
/// the root: the page of the highest level that has no neighbour (prev = next = FIL_NULL).
pub fn find_root(pages: impl IntoIterator<Item = (u32, u16, bool)>) -> Option<u32> {
    pages
        .into_iter()
        .filter(|p| p.2)
        .max_by_key(|p| (p.1, std::cmp::Reverse(p.0)))
        .map(|p| p.0)
}

/// The SDI records under `root`, in key order (type, id): the leftmost leaf is reached from
/// the root and the leaves read along their next-page links.
pub fn read(root: u32, get: &PageReader) -> Result<Vec<SdiRecord>, SdiError> {
    let page = |page_no: u32| -> Result<Vec<u8>, SdiError> {
        let p = get(page_no).map_err(|why| SdiError::Page { page_no, why })?;
        let bad = |why: String| SdiError::Page {
            page_no,
            why: why.to_string(),
        };
        if matches!(be16(&p, 24), 15..=17) {
            return Err(bad(
                "is encrypted (a tablespace encrypted with a keyring): dbio does not decrypt SDI pages; give the definition with --table-def".into(),
            ));
        }
        if be16(&p, 24) != page_type::SDI {
            return Err(bad(format!(
                "of type {} ({}), not SDI (17853)",
                be16(&p, 24),
                crate::page::page_type_name(be16(&p, 24)).unwrap_or("unknown")
            )));
        }
        if be32(&p, 4) != page_no {
            return Err(bad(format!("holds page number {}", be32(&p, 4))));
        }
        if be16(&p, 42) & 0x8000 == 0 {
            return Err(bad("is not in the COMPACT format".into()));
        }
        Ok(p)
    };
    // Down the leftmost node pointers.
    let mut at = root;
    let mut p = page(at)?;
    let mut depth = 0;
    while be16(&p, 64) > 0 {
        let first = user_records(&p, at)?
            .into_iter()
            .next()
            .ok_or_else(|| SdiError::Page {
                page_no: at,
                why: "a non-leaf page without records".into(),
            })?;
        at = be32(&p, first + 12);
        p = page(at)?;
        depth += 1;
        if depth > 64 {
            return Err(SdiError::Page {
                page_no: at,
                why: "the tree is deeper than 64 levels (a loop)".into(),
            });
        }
    }
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    loop {
        if !seen.insert(at) {
            return Err(SdiError::Page {
                page_no: at,
                why: "the leaf list loops back to this page".into(),
            });
        }
        for origin in user_records(&p, at)? {
            if p[origin - 5] & 0x20 != 0 {
                continue; // delete-marked
            }
            out.push(record(&p, at, origin, get)?);
        }
        let next = be32(&p, 12);
        if next == FIL_NULL {
            break;
        }
        at = next;
        p = page(at)?;
    }
    Ok(out)
}

/// The origins of the user records of a COMPACT page, in list order.
fn user_records(p: &[u8], page_no: u32) -> Result<Vec<usize>, SdiError> {
    const INFIMUM: usize = 99;
    const SUPREMUM: usize = 112;
    let bad = |why: String| SdiError::Page { page_no, why };
    if &p[INFIMUM..INFIMUM + 7] != b"infimum" || &p[SUPREMUM..SUPREMUM + 8] != b"supremum" {
        return Err(bad("no infimum/supremum records: damaged".into()));
    }
    let mut out = Vec::new();
    let mut at = INFIMUM;
    for _ in 0..p.len() / 5 {
        let next = (at + be16(p, at - 2) as usize) % p.len().min(65536);
        if next == SUPREMUM {
            return Ok(out);
        }
        if next < SUPREMUM + 8 + 5 || next + 33 > p.len() - 8 {
            return Err(bad(format!(
                "the record list points to byte {next}, outside the record heap"
            )));
        }
        out.push(next);
        at = next;
    }
    Err(bad("the record list loops".into()))
}

/// The SDI record at `origin` of leaf page `p`.
fn record(p: &[u8], page_no: u32, origin: usize, get: &PageReader) -> Result<SdiRecord, SdiError> {
    let bad = |why: String| SdiError::Record {
        page_no,
        offset: origin,
        why,
    };
    let status = p[origin - 3] & 7;
    if status != 0 {
        return Err(bad(format!("status {status} in a leaf page")));
    }
    // The one variable-length field, its length just before the 5-byte header (no NULL
    // bitmap: no field is nullable).
    let b = p[origin - 6] as usize;
    let (len, external) = if b & 0x80 != 0 {
        ((b & 0x3F) << 8 | p[origin - 7] as usize, b & 0x40 != 0)
    } else {
        (b, false)
    };
    let sdi_type = be32(p, origin);
    let id = be64(p, origin + 4);
    let uncompressed = be32(p, origin + 25);
    let compressed = be32(p, origin + 29);
    let data_at = origin + 33;
    if data_at + len > p.len() - 8 {
        return Err(bad(format!("its data ({len} bytes) runs past the page")));
    }
    if uncompressed > MAX_SDI_BYTES || compressed > MAX_SDI_BYTES {
        return Err(bad(format!(
            "lengths {uncompressed} (uncompressed) / {compressed} (compressed) are out of range"
        )));
    }
    let mut z = Vec::with_capacity(compressed as usize);
    if external {
        if len < 20 {
            return Err(bad(format!(
                "an off-page field of {len} bytes (needs a 20-byte reference)"
            )));
        }
        let local = len - 20;
        z.extend_from_slice(&p[data_at..data_at + local]);
        let r = data_at + local;
        let (mut blob_page, ext_len) = (be32(p, r + 4), be32(p, r + 16) as usize);
        if local + ext_len != compressed as usize {
            return Err(bad(format!(
                "{local} bytes on the page and {ext_len} off it, but the record says {compressed}"
            )));
        }
        let mut hops = 0;
        while z.len() < compressed as usize {
            if blob_page == FIL_NULL || hops > 1 << 16 {
                return Err(bad(format!(
                    "the SDI BLOB chain ends after {} of {compressed} bytes",
                    z.len()
                )));
            }
            let bp =
                get(blob_page).map_err(|why| bad(format!("SDI BLOB page {blob_page}: {why}")))?;
            let t = be16(&bp, 24);
            if t != SDI_BLOB {
                return Err(bad(format!(
                    "SDI BLOB page {blob_page} is of type {t}, not SDI BLOB (18)"
                )));
            }
            let part = be32(&bp, 38) as usize;
            if 46 + part > bp.len() - 8 || part == 0 {
                return Err(bad(format!(
                    "SDI BLOB page {blob_page} holds a part of {part} bytes"
                )));
            }
            let take = part.min(compressed as usize - z.len());
            z.extend_from_slice(&bp[46..46 + take]);
            blob_page = be32(&bp, 42);
            hops += 1;
        }
    } else {
        if len != compressed as usize {
            return Err(bad(format!(
                "{len} bytes stored, but the record says {compressed} compressed"
            )));
        }
        z.extend_from_slice(&p[data_at..data_at + len]);
    }
    let mut json = Vec::with_capacity(uncompressed as usize);
    flate2::read::ZlibDecoder::new(&z[..])
        .take(uncompressed as u64 + 1)
        .read_to_end(&mut json)
        .map_err(|e| bad(format!("the zlib stream does not inflate: {e}")))?;
    if json.len() != uncompressed as usize {
        return Err(bad(format!(
            "inflates to {} bytes, the record says {uncompressed}",
            json.len()
        )));
    }
    let json = String::from_utf8(json).map_err(|_| bad("the JSON text is not UTF-8".into()))?;
    Ok(SdiRecord { sdi_type, id, json })
}

/// The records as `ibd2sdi` prints them: a JSON array of `"ibd2sdi"` then one object per
/// record, the stored JSON text pretty-printed as ibd2sdi does (RapidJSON's PrettyWriter:
/// 4-space indent, `"key": value`, `[]`/`{}` when empty; keys, strings and numbers as
/// stored).
pub fn ibd2sdi(records: &[SdiRecord]) -> String {
    let mut s = String::from("[\"ibd2sdi\"\n");
    for r in records {
        s.push_str(&format!(
            ",\n{{\n\t\"type\": {},\n\t\"id\": {},\n\t\"object\":\n\t\t",
            r.sdi_type, r.id
        ));
        pretty(&r.json, &mut s);
        s.push_str("\n}\n");
    }
    s.push_str("]\n");
    s
}

/// Appends the JSON text `json` re-indented (strings copied as they are).
fn pretty(json: &str, out: &mut String) {
    let b = json.as_bytes();
    let mut depth = 0usize;
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("    ");
        }
    };
    let mut i = 0;
    let mut start = 0; // start of the run of bytes copied as they are
    while i < b.len() {
        match b[i] {
            b'"' => {
                // Skip the string, escapes included.
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                continue;
            }
            c @ (b'{' | b'[' | b'}' | b']' | b',' | b':') => {
                out.push_str(&json[start..i]);
                match c {
                    b'{' | b'[' => {
                        let close = if c == b'{' { b'}' } else { b']' };
                        let mut j = i + 1;
                        while j < b.len() && b[j].is_ascii_whitespace() {
                            j += 1;
                        }
                        if b.get(j) == Some(&close) {
                            out.push(c as char);
                            out.push(close as char);
                            i = j;
                        } else {
                            out.push(c as char);
                            depth += 1;
                            newline(out, depth);
                        }
                    }
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        newline(out, depth);
                        out.push(c as char);
                    }
                    b',' => {
                        out.push(',');
                        newline(out, depth);
                    }
                    _ => out.push_str(": "),
                }
                i += 1;
                start = i;
                continue;
            }
            c if c.is_ascii_whitespace() => {
                out.push_str(&json[start..i]);
                i += 1;
                start = i;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out.push_str(&json[start.min(b.len())..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sdi_offset_of_16k_pages_is_10505() {
        // Measured on the MySQL 8.0 sakila tablespaces: version 1 at 10505, root at 10509.
        assert_eq!(sdi_offset(16384), 10505);
    }

    #[test]
    fn root_is_the_highest_page_without_neighbours() {
        assert_eq!(find_root([(3, 0, true)]), Some(3));
        assert_eq!(
            find_root([(5, 0, false), (6, 0, false), (3, 1, true)]),
            Some(3)
        );
        assert_eq!(find_root([(5, 0, false)]), None);
    }
}
