//! The page scanner: finds InnoDB pages at every `step` bytes of a buffer or a file, whatever
//! their page size, and classifies each one.
//!
//! Two detectors run over every buffer:
//! 1. header/trailer: the low 32 bits of the LSN (offset 20) repeat at `S-4` (crc32/innodb
//!    layout) or `S-8` (full_crc32 layout) for some page size S. This costs two loads per size
//!    and step, and rejects random data with probability 1 - 2^-32; only candidates that pass
//!    are checksummed (full_crc32 first). No test looks at the first 4 bytes, so full_crc32
//!    pages (field 0 = 0) are found like any other.
//! 2. structure: the "infimum"/"supremum" system records of INDEX pages, found with a SIMD
//!    substring search. This finds INDEX pages whose trailer was never written (torn writes).

use crate::checksum::{self, Algorithm};
use crate::page::{
    be16, be32, be64, is_index_type, page_type_name, records, system_records, FilHeader,
    IndexHeader, RowFormat, PAGE_SIZES,
};
use serde::Serialize;
use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub use dbio_schema::innodb::Status;

/// Which of two overlapping pages to keep: the better recognised.
fn rank(s: Status) -> u8 {
    match s {
        Status::Intact => 3,
        Status::Torn => 2,
        Status::Heuristic => 1,
    }
}

/// INDEX page details of a found page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct IndexInfo {
    /// Row format.
    pub format: RowFormat,
    /// Index id.
    pub index_id: u64,
    /// B-tree level (0 = leaf).
    pub level: u16,
    /// PAGE_N_RECS.
    pub n_recs: u16,
    /// Delete-marked records plus purged records still on the free list.
    pub deleted_recs: u32,
}

/// One page found in a source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FoundPage {
    /// Byte offset of the page in its source.
    pub offset: u64,
    /// Page size in bytes.
    pub page_size: u32,
    /// How the page was recognised.
    pub status: Status,
    /// The checksum algorithm that validates it (intact pages only).
    pub checksum: Option<Algorithm>,
    /// Tablespace id.
    pub space_id: u32,
    /// Page number.
    pub page_no: u32,
    /// Page type.
    pub page_type: u16,
    /// LSN of the last change.
    pub lsn: u64,
    /// INDEX page details.
    pub index: Option<IndexInfo>,
    /// FSP_SPACE_FLAGS when this is page 0 of a tablespace.
    pub fsp_flags: Option<u32>,
    /// MariaDB full_crc32 page_compressed page: the payload size in bytes (the rest of the
    /// page slot is empty). Its header keeps page number, LSN and type only; the space id is
    /// taken from the page before it in the source.
    pub compressed_bytes: Option<u32>,
    /// A ROW_FORMAT=COMPRESSED page (`page_size` is its physical KEY_BLOCK_SIZE).
    pub zip: bool,
    /// An encrypted page, decrypted with this key whenever it is read ([`FoundPage::read`]);
    /// the other fields describe the plain page.
    #[serde(skip)]
    pub decrypt: Option<std::sync::Arc<crate::crypt::PageKey>>,
}

/// Options of a scan.
#[derive(Clone, Debug)]
pub struct ScanOptions {
    /// Candidate page starts are multiples of this (512 by default).
    pub step: usize,
    /// Page sizes to try (all five by default).
    pub page_sizes: Vec<usize>,
    /// Keys of encrypted tablespaces (`--keyring`, `--key-file`): with them, encrypted pages
    /// are looked for too and decrypted ([`crate::crypt`]).
    pub keys: Option<std::sync::Arc<crate::crypt::Keys>>,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            step: 512,
            page_sizes: PAGE_SIZES.to_vec(),
            keys: None,
        }
    }
}

impl ScanOptions {
    /// Options for `--step` and `--page-size` (`None`: every size): the step must be a positive
    /// multiple of 512, the page size one of [`PAGE_SIZES`].
    pub fn new(step: u64, page_size: Option<u64>) -> Result<ScanOptions, crate::Error> {
        if step == 0 || !step.is_multiple_of(512) {
            return Err(crate::Error::Option(format!(
                "--step {step} must be a positive multiple of 512"
            )));
        }
        let page_sizes = match page_size {
            None => PAGE_SIZES.to_vec(),
            Some(s) if PAGE_SIZES.contains(&(s as usize)) => vec![s as usize],
            Some(s) => {
                return Err(crate::Error::Option(format!(
                    "--page-size {s} is not an InnoDB page size: use 4k, 8k, 16k, 32k or 64k"
                )))
            }
        };
        Ok(ScanOptions {
            step: step as usize,
            page_sizes,
            keys: None,
        })
    }
}

/// A problem noticed while scanning that does not stop the scan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScanWarning {
    /// Byte offset in the source.
    pub offset: u64,
    /// What was noticed.
    pub message: String,
}

impl FoundPage {
    /// Bytes the page occupies in its source: the payload of a page_compressed page (the
    /// rest of its slot is a hole in the file, so other data may follow on a device), else
    /// the page size.
    pub fn extent(&self) -> u64 {
        self.compressed_bytes.unwrap_or(self.page_size) as u64
    }

    /// Reads the page from `file` (where the scan found it) into `buf` (`page_size` bytes),
    /// decrypting an encrypted page; returns the bytes read. A page that no longer decrypts
    /// (the source changed since the scan) is an `InvalidData` error.
    pub fn read(&self, file: &File, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = read_full_at(file, buf, self.offset)?;
        if let Some(k) = &self.decrypt {
            if n != buf.len() || !crate::crypt::decrypt_page(k, buf) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "encrypted page {} of space {} no longer decrypts (the source changed since it was scanned?)",
                        self.page_no, self.space_id
                    ),
                ));
            }
        }
        Ok(n)
    }
}

/// Classifies the page in `page` (exactly one page long) found by `status`.
pub fn classify(page: &[u8], offset: u64, status: Status, algo: Option<Algorithm>) -> FoundPage {
    let h = FilHeader::parse(page);
    let index = if is_index_type(h.page_type) && system_records(page).is_some() {
        let ih = IndexHeader::parse(page);
        let deleted = records(page).iter().filter(|r| r.deleted).count() as u32;
        Some(IndexInfo {
            format: ih.format,
            index_id: ih.index_id,
            level: ih.level,
            n_recs: ih.n_recs,
            deleted_recs: deleted,
        })
    } else {
        None
    };
    let fsp_flags =
        (h.page_no == 0 && h.page_type == crate::page::page_type::FSP_HDR).then(|| be32(page, 54));
    FoundPage {
        offset,
        page_size: page.len() as u32,
        status,
        checksum: algo,
        space_id: h.space_id,
        page_no: h.page_no,
        page_type: h.page_type,
        lsn: h.lsn,
        index,
        fsp_flags,
        compressed_bytes: None,
        zip: false,
        decrypt: None,
    }
}

/// Physical page sizes of ROW_FORMAT=COMPRESSED tablespaces (KEY_BLOCK_SIZE 1..16).
pub const ZIP_SIZES: [usize; 5] = [1024, 2048, 4096, 8192, 16384];

/// The cheap tests of [`detect_zip_at`] (no checksum): a known page type, a nonzero LSN and
/// checksum field.
fn zip_header_ok(buf: &[u8], o: usize) -> bool {
    if o + 1024 > buf.len() {
        return false;
    }
    use crate::page::page_type as t;
    matches!(
        be16(buf, o + 24),
        t::INDEX
            | t::RTREE
            | t::FSP_HDR
            | t::XDES
            | t::INODE
            | t::IBUF_BITMAP
            | t::ZBLOB
            | t::ZBLOB2
    ) && be32(buf, o) != 0
        && be64(buf, o + 16) != 0
}

/// The ROW_FORMAT=COMPRESSED detector at `o`: these pages have no LSN trailer and no
/// infimum string, so a known page type, a nonzero LSN and checksum field come first, then
/// the zip crc32 checksum of each KEY_BLOCK_SIZE. Only pages that validate are reported.
pub fn detect_zip_at(buf: &[u8], o: usize, base: u64) -> Option<FoundPage> {
    if !zip_header_ok(buf, o) {
        return None;
    }
    let ptype = be16(buf, o + 24);
    use crate::page::page_type as t;
    let stored = be32(buf, o);
    for s in ZIP_SIZES {
        if o + s > buf.len() {
            break;
        }
        let page = &buf[o..o + s];
        if checksum::zip_crc32(page) == stored {
            let h = FilHeader::parse(page);
            let index = (ptype == t::INDEX || ptype == t::RTREE).then(|| {
                let ih = IndexHeader::parse(page);
                IndexInfo {
                    format: RowFormat::Compressed,
                    index_id: ih.index_id,
                    level: ih.level,
                    n_recs: ih.n_recs,
                    deleted_recs: 0,
                }
            });
            let fsp_flags = (h.page_no == 0 && ptype == t::FSP_HDR).then(|| be32(page, 54));
            return Some(FoundPage {
                offset: base + o as u64,
                page_size: s as u32,
                status: Status::Intact,
                checksum: Some(Algorithm::Crc32),
                space_id: h.space_id,
                page_no: h.page_no,
                page_type: ptype,
                lsn: h.lsn,
                index,
                fsp_flags,
                compressed_bytes: None,
                zip: true,
                decrypt: None,
            });
        }
    }
    None
}

/// The MariaDB full_crc32 page_compressed detector at `o`: page type with bit 15 set, payload
/// size `(type & 0x7FFF) << 8`, CRC-32C of the payload but its last 4 bytes stored in them.
pub fn compressed_payload_at(buf: &[u8], o: usize) -> Option<usize> {
    let size = compressed_candidate(buf, o)?;
    (checksum::crc32c(&buf[o..o + size - 4]) == be32(buf, o + size - 4)).then_some(size)
}

/// A MariaDB page_compressed page of a tablespace older than full_crc32 at `o`: page type
/// 34354, the checksum field BUF_NO_CHECKSUM_MAGIC, the algorithm (1-6) at 26..34 and the
/// payload length at 38. No checksum covers it, so it counts only when its payload
/// decompresses into one page of a size in `sizes` carrying its header. Returns that page
/// size and the bytes the page takes (40 + the payload).
pub fn legacy_compressed_at(buf: &[u8], o: usize, sizes: &[usize]) -> Option<(usize, usize)> {
    if o + 64 > buf.len()
        || be32(buf, o) != 0xDEAD_BEEF
        || be16(buf, o + 24) != crate::page::page_type::PAGE_COMPRESSED
        || be64(buf, o + 26) >> 16 != 0
        || !(1..=6).contains(&be16(buf, o + 32))
        || be64(buf, o + 16) == 0
    {
        return None;
    }
    let len = 40 + be16(buf, o + 38) as usize;
    sizes
        .iter()
        .copied()
        .filter(|&s| len <= s && o + s <= buf.len())
        .find(|&s| crate::rows::inflate::page_compressed(&buf[o..o + s], s).is_some())
        .map(|s| (s, len))
}

/// The cheap tests of [`compressed_payload_at`] (no checksum): the payload size.
fn compressed_candidate(buf: &[u8], o: usize) -> Option<usize> {
    if o + 38 > buf.len() {
        return None;
    }
    let ptype = be16(buf, o + 24);
    if ptype & 0x8000 == 0 {
        return None;
    }
    let size = ((ptype & 0x7FFF) as usize) << 8;
    if !(64..=65536).contains(&size) || o + size > buf.len() {
        return None;
    }
    if be64(buf, o + 16) == 0 {
        return None;
    }
    Some(size)
}

/// The header/trailer detector at `o` for page size `s`; returns the classified page.
#[inline]
pub fn detect_at(buf: &[u8], o: usize, s: usize, base: u64) -> Option<FoundPage> {
    match detect(buf, o, s, base, true) {
        Detect::Found(p) => Some(p),
        Detect::Nothing { .. } | Detect::Unverified => None,
    }
}

/// What [`detect`] decided at one candidate.
enum Detect {
    Found(FoundPage),
    /// No page; checksums costing `checksummed` bytes of CRC-32C were computed in vain.
    Nothing {
        checksummed: usize,
    },
    /// A frame whose header rules out a torn page, so only an intact checksum could make it a
    /// page, and the checksum was not computed (`verify_intact_only` was false).
    Unverified,
}

/// [`detect_at`], with the checksum of candidates that can only be intact (LSN 0, type
/// ALLOCATED, an INDEX page without its system records) computed only when
/// `verify_intact_only`.
#[inline]
fn detect(buf: &[u8], o: usize, s: usize, base: u64, verify_intact_only: bool) -> Detect {
    const NOTHING: Detect = Detect::Nothing { checksummed: 0 };
    if o + s > buf.len() {
        return NOTHING;
    }
    let lsn_lo = be32(buf, o + 20);
    let full_layout = be32(buf, o + s - 8) == lsn_lo;
    let old_layout = be32(buf, o + s - 4) == lsn_lo;
    if !full_layout && !old_layout {
        return NOTHING;
    }
    let lsn_hi = be32(buf, o + 16);
    let ptype = be16(buf, o + 24);
    if lsn_lo == 0 && lsn_hi == 0 && ptype == 0 {
        return NOTHING; // zeros: never a written page
    }
    // Cheap structural checks before any checksum: a known page type (uncompressed: the
    // full_crc32 page_compressed layout has no LSN trailer) and a header that is not one
    // repeated byte (0xFF-filled or patterned free space would otherwise cost a checksum of
    // every size at every step).
    if ptype & 0x8000 != 0 || page_type_name(ptype).is_none() {
        return NOTHING;
    }
    let page = &buf[o..o + s];
    if page[..38].iter().all(|&b| b == page[0]) {
        return NOTHING;
    }
    // Torn: the frame is right but no checksum matches. Demand a known, uncompressed page
    // type other than ALLOCATED, a nonzero LSN and, for INDEX pages, the system records.
    // ALLOCATED (0) is excluded: filesystem metadata (XFS inodes, logs) often repeats a
    // 32-bit word 4, 8 or 16 KiB apart with a zero type field.
    let torn_possible = !(lsn_lo == 0 && lsn_hi == 0)
        && ptype != 0
        && !(is_index_type(ptype) && system_records(page).is_none());
    if !torn_possible && !verify_intact_only {
        return Detect::Unverified;
    }
    let mut work = 0;
    let verified = checksum::verify_counting(page, &mut work);
    #[cfg(test)]
    tests::CHECKSUMMED.with(|c| c.set(c.get() + work as u64));
    if let Some(algo) = verified {
        return Detect::Found(classify(page, base + o as u64, Status::Intact, Some(algo)));
    }
    if !torn_possible {
        return Detect::Nothing { checksummed: work };
    }
    Detect::Found(classify(page, base + o as u64, Status::Torn, None))
}

/// Infers the size of an INDEX page from its page directory: the first slot (at S-10) points
/// to the infimum.
pub fn infer_index_size(buf: &[u8], o: usize, format: RowFormat, sizes: &[usize]) -> Option<usize> {
    let inf = match format {
        RowFormat::Compact => crate::page::COMPACT_INFIMUM,
        RowFormat::Redundant => crate::page::REDUNDANT_INFIMUM,
        RowFormat::Compressed => return None,
    } as u16;
    sizes
        .iter()
        .copied()
        .find(|&s| o + s <= buf.len() && be16(buf, o + s - 10) == inf)
}

/// Scans `buf`, whose first byte is at source offset `base`, for pages starting before
/// `limit` (bytes past `limit` are overlap, read so that pages starting before it are whole).
/// `base` must be a multiple of `opts.step`. Appends pages in offset order to `out` and
/// pages cut short by the end of the buffer to `warnings` when `at_end`.
pub fn scan_buffer(
    buf: &[u8],
    base: u64,
    limit: usize,
    opts: &ScanOptions,
    at_end: bool,
    out: &mut Vec<FoundPage>,
    warnings: &mut Vec<ScanWarning>,
) {
    let mut unverified = Vec::new();
    let mut encrypted = Vec::new();
    scan_buffer_counting(
        buf,
        base,
        limit,
        opts,
        at_end,
        out,
        warnings,
        &mut unverified,
        &mut encrypted,
    );
    warnings.extend(unverified_warnings(unverified, 0));
}

/// Candidates not checksummed (work bound) between two source offsets.
#[derive(Clone, Copy, Debug)]
struct Unverified {
    first: u64,
    last: u64,
    count: u64,
}

/// One warning per run of [`Unverified`] ranges less than `gap` bytes apart.
fn unverified_warnings(mut v: Vec<Unverified>, gap: u64) -> Vec<ScanWarning> {
    v.sort_by_key(|u| u.first);
    let mut merged: Vec<Unverified> = Vec::new();
    for u in v {
        match merged.last_mut() {
            Some(m) if u.first <= m.last + gap => {
                m.last = m.last.max(u.last);
                m.count += u.count;
            }
            _ => merged.push(u),
        }
    }
    merged
        .into_iter()
        .map(|u| ScanWarning {
            offset: u.first,
            message: format!(
                "{} page-like headers up to offset {} were not checksummed: their checksums kept failing (work bound); an intact page there with LSN 0, type ALLOCATED or an INDEX page without infimum/supremum would be missed",
                u.count, u.last
            ),
        })
        .collect()
}

/// The page an INDEX structure (infimum and supremum where a page start puts them) at `o`
/// of `buf` shows, checksum or not: its size from the page directory, else the only size
/// allowed, else the size of the last whole page seen, else 16K. A page the source's end cuts
/// short is named in `warnings`.
fn index_structure_at(
    buf: &[u8],
    o: usize,
    base: u64,
    opts: &ScanOptions,
    last_size: Option<usize>,
    at_end: bool,
    warnings: &mut Vec<ScanWarning>,
) -> Option<FoundPage> {
    let min_size = *opts.page_sizes.iter().min().unwrap_or(&16384);
    if let Some(format) = system_records(&buf[o..]) {
        let ptype = be16(buf, o + 24);
        if is_index_type(ptype) {
            // Size from the page directory, else the only size allowed, else the
            // size of the last whole page seen here, else 16K.
            let fallback = if opts.page_sizes.len() == 1 {
                opts.page_sizes[0]
            } else {
                last_size.unwrap_or(16384)
            };
            let size = infer_index_size(buf, o, format, &opts.page_sizes)
                .or_else(|| (o + fallback <= buf.len()).then_some(fallback));
            match size {
                Some(s) => {
                    return Some(classify(
                        &buf[o..o + s],
                        base + o as u64,
                        Status::Heuristic,
                        None,
                    ))
                }
                None if at_end && o + min_size > buf.len() => {
                    let h = FilHeader::parse(&buf[o..]);
                    warnings.push(ScanWarning {
                        offset: base + o as u64,
                        message: format!(
                            "INDEX page (space {}, page {}) is cut short: the source ends {} bytes after its start",
                            h.space_id,
                            h.page_no,
                            buf.len() - o
                        ),
                    });
                }
                None => {}
            }
        }
    }
    None
}

/// [`scan_buffer`], with the candidates skipped by the work bound returned in `unverified`.
#[allow(clippy::too_many_arguments)]
fn scan_buffer_counting(
    buf: &[u8],
    base: u64,
    limit: usize,
    opts: &ScanOptions,
    at_end: bool,
    out: &mut Vec<FoundPage>,
    warnings: &mut Vec<ScanWarning>,
    unverified_out: &mut Vec<Unverified>,
    encrypted_out: &mut Vec<crate::crypt::Candidate>,
) {
    let step = opts.step.max(1);
    let limit = limit.min(buf.len());
    // Structure candidates: "infimum\0" at 99 (COMPACT) or 101 (REDUNDANT) from a page start.
    let mut infimum_starts: Vec<usize> = Vec::new();
    let search_end = (limit + crate::page::REDUNDANT_INFIMUM + 8).min(buf.len());
    for h in memchr::memmem::find_iter(&buf[..search_end], b"infimum\0") {
        for origin in [crate::page::COMPACT_INFIMUM, crate::page::REDUNDANT_INFIMUM] {
            if h >= origin {
                let st = h - origin;
                if st < limit && (base + st as u64).is_multiple_of(step as u64) {
                    infimum_starts.push(st);
                }
            }
        }
    }
    infimum_starts.sort_unstable();
    let mut next_struct = 0usize;
    let first = ((step as u64 - base % step as u64) % step as u64) as usize;
    let mut o = first;
    let min_size = *opts.page_sizes.iter().min().unwrap_or(&16384);
    let mut last_size: Option<usize> = None;
    let mut last_space: Option<u32> = None;
    // Work bounds. 1. Every detector decides from the SPAN bytes at `o` alone, so where they
    // repeat the bytes one step earlier and nothing was found there, nothing is found here
    // (repeated words, filler): `same_until` is how far buf[x] == buf[x - step] holds from
    // `o` on, extended forward only, so each byte is compared about once. 2. Checksums that
    // can only find an intact page (no torn page is possible from the header) are budgeted:
    // at most the cost of VAIN_PER_BYTE bytes of CRC-32C (see checksum::FOLD_COST) in vain
    // per byte scanned, plus VAIN_START; past that they are skipped and a warning says where.
    const SPAN: usize = 65536;
    const VAIN_PER_BYTE: usize = 2;
    const VAIN_START: usize = 4 << 20;
    let mut same_until = 0usize;
    let mut prev_empty = false;
    let mut vain = 0usize;
    let mut unverified: Option<(usize, usize, u64)> = None; // first, last offset, count
    while o < limit {
        // Near the end of the buffer fewer bytes are visible at `o` than one step earlier:
        // sizes that fit at `o` fit there too, but an INDEX structure cut short here may
        // need a warning, so those positions are examined.
        let span_end = (o + SPAN).min(buf.len());
        if prev_empty
            && o >= step
            && (o + SPAN <= buf.len() || infimum_starts.binary_search(&o).is_err())
        {
            if same_until < span_end {
                let from = same_until.max(o);
                same_until = from + common_prefix(&buf[from..span_end], &buf[from - step..]);
            }
            if same_until >= span_end {
                o += step;
                continue;
            }
        }
        let verify = vain <= VAIN_START + VAIN_PER_BYTE * (o - first);
        let mut skipped = false;
        let mut found = None;
        if o + min_size <= buf.len() {
            for &s in &opts.page_sizes {
                match detect(buf, o, s, base, verify) {
                    Detect::Found(p) => {
                        found = Some(p);
                        break;
                    }
                    Detect::Nothing { checksummed } => vain += checksummed,
                    Detect::Unverified => skipped = true,
                }
            }
        }
        if found.is_none() && zip_header_ok(buf, o) {
            if verify {
                found = detect_zip_at(buf, o, base);
                if found.is_none() {
                    vain += ZIP_SIZES
                        .iter()
                        .filter(|&&s| o + s <= buf.len())
                        .sum::<usize>();
                }
            } else {
                skipped = true;
            }
        }
        let compressed = match compressed_candidate(buf, o).filter(|_| found.is_none()) {
            Some(_) if !verify => {
                skipped = true;
                None
            }
            Some(size) => {
                let ok = compressed_payload_at(buf, o);
                if ok.is_none() {
                    vain += size;
                }
                ok
            }
            None => None,
        };
        if found.is_none() {
            if let Some(size) = compressed {
                let slot = if opts.page_sizes.len() == 1 {
                    opts.page_sizes[0]
                } else {
                    last_size.unwrap_or(16384)
                };
                if size <= slot {
                    let h = FilHeader::parse(&buf[o..]);
                    found = Some(FoundPage {
                        offset: base + o as u64,
                        page_size: slot as u32,
                        status: Status::Intact,
                        checksum: Some(Algorithm::FullCrc32),
                        space_id: last_space.unwrap_or(u32::MAX),
                        page_no: h.page_no,
                        page_type: h.page_type,
                        lsn: h.lsn,
                        index: None,
                        fsp_flags: None,
                        compressed_bytes: Some(size as u32),
                        zip: false,
                        decrypt: None,
                    });
                }
            }
        }
        // A legacy page_compressed page has no checksum: the frame test alone takes it for
        // a torn page of its type.
        let torn_legacy = found.as_ref().is_some_and(|p| {
            p.status == Status::Torn && p.page_type == crate::page::page_type::PAGE_COMPRESSED
        });
        if (found.is_none() || torn_legacy) && verify {
            if let Some((size, len)) = legacy_compressed_at(buf, o, &opts.page_sizes) {
                let h = FilHeader::parse(&buf[o..]);
                found = Some(FoundPage {
                    offset: base + o as u64,
                    page_size: size as u32,
                    status: Status::Intact,
                    checksum: None,
                    space_id: h.space_id,
                    page_no: h.page_no,
                    page_type: h.page_type,
                    lsn: h.lsn,
                    index: None,
                    fsp_flags: None,
                    compressed_bytes: Some(len as u32),
                    zip: false,
                    decrypt: None,
                });
            }
        }
        // With keys: an encrypted page (MariaDB: its checksum covers the encrypted bytes;
        // the older layout's frame is in clear, so it looked torn) is a candidate that
        // `recover` decrypts once the tablespace keys are read from the pages 0.
        if opts.keys.is_some() && verify && found.as_ref().is_none_or(|p| p.status == Status::Torn)
        {
            if let Some((scheme, size)) = crate::crypt::candidate(buf, o, &opts.page_sizes) {
                encrypted_out.push(crate::crypt::Candidate {
                    src: 0,
                    offset: base + o as u64,
                    scheme,
                    size,
                });
                if let Some(s) = size {
                    prev_empty = false;
                    o += s.div_ceil(step) * step;
                    continue;
                }
                found = None;
            }
        }
        if found.is_none() {
            while next_struct < infimum_starts.len() && infimum_starts[next_struct] < o {
                next_struct += 1;
            }
            if next_struct < infimum_starts.len() && infimum_starts[next_struct] == o {
                found = index_structure_at(buf, o, base, opts, last_size, at_end, warnings);
            }
        }
        if skipped && found.is_none() {
            let u = unverified.get_or_insert((o, o, 0));
            u.1 = o;
            u.2 += 1;
        }
        prev_empty = found.is_none();
        match found {
            Some(p) => {
                let s = p.extent() as usize;
                if p.status != Status::Heuristic && p.compressed_bytes.is_none() {
                    last_size = Some(p.page_size as usize);
                    last_space = Some(p.space_id);
                }
                out.push(p);
                o += s.div_ceil(step) * step;
            }
            None => o += step,
        }
    }
    if let Some((a, b, n)) = unverified {
        unverified_out.push(Unverified {
            first: base + a as u64,
            last: base + b as u64,
            count: n,
        });
    }
}

/// Length of the common prefix of `a` and `b` (up to `a.len()`), compared 64 bytes at a time.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 64 <= n && a[i..i + 64] == b[i..i + 64] {
        i += 64;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// Keeps, among pages whose byte ranges overlap, the best recognised one. Input sorted by offset.
pub fn resolve_overlaps(pages: Vec<FoundPage>) -> Vec<FoundPage> {
    let mut out: Vec<FoundPage> = Vec::with_capacity(pages.len());
    for p in pages {
        if let Some(q) = out.last_mut() {
            if p.offset < q.offset + q.extent() {
                if rank(p.status) > rank(q.status) {
                    *q = p;
                }
                continue;
            }
        }
        out.push(p);
    }
    out
}

pub use crate::io::read_full_at;

/// Bytes read per work unit of a file scan.
pub const CHUNK: usize = 8 << 20;
/// Overlap read past each chunk so that pages starting in it are whole.
pub const OVERLAP: usize = 64 << 10;

/// Result of scanning one source.
#[derive(Clone, Debug, Default)]
pub struct ScanOutcome {
    /// Pages found, sorted by offset, overlaps resolved.
    pub pages: Vec<FoundPage>,
    /// Problems noticed.
    pub warnings: Vec<ScanWarning>,
    /// `cancel` was set: the scan stopped early; `pages` and `warnings` are then empty.
    pub cancelled: bool,
    /// Bytes scanned from the start of the source: its length, or where a cancelled scan
    /// stopped.
    pub bytes_scanned: u64,
    /// Pages that look encrypted (only looked for with [`ScanOptions::keys`]), sorted by
    /// offset; their source index is 0.
    pub encrypted: Vec<crate::crypt::Candidate>,
}

/// Scans `len` bytes of `file` with `threads` threads (large sequential reads or a
/// read-only memory map when `use_mmap`, only for a file that nothing writes or truncates
/// meanwhile: see [`crate::io`]; one chunk per work unit). `progress(bytes_done,
/// pages_found)` is called from the workers after each chunk. Setting `cancel` (from a
/// signal handler, say) stops the scan after the chunks in progress.
pub fn scan_file(
    file: &File,
    len: u64,
    opts: &ScanOptions,
    threads: usize,
    use_mmap: bool,
    cancel: &AtomicBool,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> std::io::Result<ScanOutcome> {
    let found = AtomicU64::new(0);
    let prog = |d: u64| progress(d, found.load(Ordering::Relaxed));
    let init = || (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    type State = (
        Vec<FoundPage>,
        Vec<ScanWarning>,
        Vec<Unverified>,
        Vec<crate::crypt::Candidate>,
    );
    let work = |st: &mut State, c: crate::io::Chunk<'_>| {
        let before = st.0.len();
        scan_buffer_counting(
            c.data, c.start, c.limit, opts, c.at_end, &mut st.0, &mut st.1, &mut st.2, &mut st.3,
        );
        found.fetch_add((st.0.len() - before) as u64, Ordering::Relaxed);
    };
    let (states, done) = crate::io::for_each_chunk(
        file, len, use_mmap, threads, CHUNK, OVERLAP, cancel, &prog, &init, &work,
    )?;
    if cancel.load(Ordering::Relaxed) {
        return Ok(ScanOutcome {
            cancelled: true,
            bytes_scanned: done.min(len),
            ..ScanOutcome::default()
        });
    }
    let mut pages = Vec::new();
    let mut warnings = Vec::new();
    let mut unverified = Vec::new();
    let mut encrypted = Vec::new();
    for (p, w, u, e) in states {
        pages.extend(p);
        warnings.extend(w);
        unverified.extend(u);
        encrypted.extend(e);
    }
    encrypted.sort_by_key(|c| c.offset);
    // Runs in consecutive chunks make one warning.
    warnings.extend(unverified_warnings(unverified, (CHUNK + OVERLAP) as u64));
    pages.sort_by_key(|p| p.offset);
    let pages = resolve_overlaps(pages);
    // A source cut inside a page: the bytes after the last page start the next page of the
    // same tablespace but end too early.
    if let Some(last) = pages.last().filter(|p| p.compressed_bytes.is_none()) {
        let end = last.offset + last.page_size as u64;
        if end < len && len - end < last.page_size as u64 && len - end >= 38 {
            let mut tail = vec![0u8; (len - end) as usize];
            let n = read_full_at(file, &mut tail, end)?;
            if n >= 38 {
                let h = FilHeader::parse(&tail);
                if h.space_id == last.space_id
                    && h.page_no == last.page_no.wrapping_add(1)
                    && h.lsn != 0
                {
                    warnings.push(ScanWarning {
                        offset: end,
                        message: format!(
                            "page {} of space {} is cut short: the source ends {} bytes after its start (truncated image?)",
                            h.page_no, h.space_id, n
                        ),
                    });
                }
            }
        }
    }
    warnings.sort_by_key(|w| w.offset);
    warnings.dedup();
    Ok(ScanOutcome {
        pages,
        warnings,
        cancelled: false,
        bytes_scanned: len,
        encrypted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_options_check_step_and_page_size() {
        let o = ScanOptions::new(1024, Some(8192)).unwrap();
        assert_eq!((o.step, o.page_sizes), (1024, vec![8192]));
        assert_eq!(
            ScanOptions::new(512, None).unwrap().page_sizes,
            PAGE_SIZES.to_vec()
        );
        for (step, size, msg) in [
            (0, None, "--step 0 must be a positive multiple of 512"),
            (100, None, "--step 100 must be a positive multiple of 512"),
            (
                512,
                Some(1000),
                "--page-size 1000 is not an InnoDB page size: use 4k, 8k, 16k, 32k or 64k",
            ),
        ] {
            assert_eq!(ScanOptions::new(step, size).unwrap_err().to_string(), msg);
        }
    }
    use crate::checksum;
    use crate::page::page_type;

    /// A synthetic page of size `s`: FIL header, some content, trailer and checksum.
    fn make_page(s: usize, full: bool, page_no: u32, ptype: u16) -> Vec<u8> {
        let mut p = vec![0u8; s];
        p[4..8].copy_from_slice(&page_no.to_be_bytes());
        p[16..24].copy_from_slice(&0x1_2345_6789u64.to_be_bytes());
        p[24..26].copy_from_slice(&ptype.to_be_bytes());
        p[34..38].copy_from_slice(&77u32.to_be_bytes());
        for (i, b) in p[38..s - 8].iter_mut().enumerate() {
            *b = (i * 31 % 253) as u8;
        }
        if full {
            p[s - 8..s - 4].copy_from_slice(&0x2345_6789u32.to_be_bytes());
            let c = checksum::full_crc32(&p);
            p[s - 4..].copy_from_slice(&c.to_be_bytes());
        } else {
            p[s - 4..].copy_from_slice(&0x2345_6789u32.to_be_bytes());
            let c = checksum::crc32(&p);
            p[..4].copy_from_slice(&c.to_be_bytes());
            p[s - 8..s - 4].copy_from_slice(&c.to_be_bytes());
        }
        p
    }

    fn scan(buf: &[u8]) -> Vec<FoundPage> {
        let mut out = Vec::new();
        let mut w = Vec::new();
        scan_buffer(
            buf,
            0,
            buf.len(),
            &ScanOptions::default(),
            true,
            &mut out,
            &mut w,
        );
        out
    }

    #[test]
    fn every_page_size_and_layout_at_odd_offsets() {
        for &s in &PAGE_SIZES {
            for full in [true, false] {
                let mut buf = vec![0xFFu8; 3 * 512];
                buf.extend(make_page(s, full, 9, page_type::BLOB));
                buf.extend(vec![0x5Au8; 512]);
                buf.extend(make_page(s, full, 10, page_type::UNDO_LOG));
                buf.extend(vec![0u8; 70000]);
                let found = scan(&buf);
                assert_eq!(found.len(), 2, "size {s} full {full}: {found:?}");
                assert_eq!(found[0].offset, 1536);
                assert_eq!(found[0].page_size as usize, s);
                assert_eq!(found[1].page_no, 10);
                let algo = if full {
                    Algorithm::FullCrc32
                } else {
                    Algorithm::Crc32
                };
                assert_eq!(found[0].checksum, Some(algo));
                assert_eq!(found[0].status, Status::Intact);
            }
        }
    }

    #[test]
    fn pages_across_chunk_boundaries_are_found_once() {
        use std::io::Write;
        let mut data = vec![0u8; 2 * CHUNK + 65536];
        // A 16K page straddling the first chunk boundary, a 64K one straddling the second.
        let a = CHUNK - 8192 + 512;
        data[a..a + 16384].copy_from_slice(&make_page(16384, true, 1, page_type::BLOB));
        let b = 2 * CHUNK - 1024;
        data[b..b + 65536].copy_from_slice(&make_page(65536, false, 2, page_type::UNDO_LOG));
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&data).unwrap();
        for (threads, mmap) in [(1, false), (2, true)] {
            let o = scan_file(
                &f,
                data.len() as u64,
                &ScanOptions::default(),
                threads,
                mmap,
                &AtomicBool::new(false),
                &|_, _| {},
            )
            .unwrap();
            let offs: Vec<u64> = o.pages.iter().map(|p| p.offset).collect();
            assert_eq!(offs, [a as u64, b as u64], "threads {threads} mmap {mmap}");
            assert_eq!(o.pages[1].page_size, 65536);
        }
    }

    thread_local! {
        /// Bytes checksummed by `detect` on this thread.
        pub(super) static CHECKSUMMED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    /// Scans `buf` and returns the pages, the warnings and the bytes checksummed.
    fn scan_counting(buf: &[u8]) -> (Vec<FoundPage>, Vec<ScanWarning>, u64) {
        CHECKSUMMED.with(|c| c.set(0));
        let (mut out, mut w) = (Vec::new(), Vec::new());
        let opts = ScanOptions::default();
        scan_buffer(buf, 0, buf.len(), &opts, true, &mut out, &mut w);
        (out, w, CHECKSUMMED.with(|c| c.get()))
    }

    #[test]
    fn repeated_words_are_not_checksummed_at_every_step() {
        // 45 BF is the INDEX page type: every 512-byte step of this word is a candidate of
        // every page size (LSN word repeated at the trailer) that used to be checksummed
        // (124 KiB per step, the slow legacy fold included: 4 GiB here) and rejected.
        // 00 00 12 34 is the same with type ALLOCATED. The bytes repeat one step later, so
        // only the first position is checksummed.
        let len = 16 << 20;
        for word in [[0x45, 0xBF, 0x45, 0xBF], [0, 0, 0x12, 0x34]] {
            let mut buf: Vec<u8> = word.iter().copied().cycle().take(len).collect();
            let (found, warnings, work) = scan_counting(&buf);
            assert!(found.is_empty() && warnings.is_empty(), "{warnings:?}");
            let one_position = 5 * 65536 * (2 + checksum::FOLD_COST) as u64;
            assert!(
                work <= one_position,
                "{word:02X?}: work {work} for {len} bytes"
            );
            // Where the bytes change (a real page follows), the work bound holds and the
            // page is found.
            buf.extend(make_page(16384, true, 5, page_type::UNDO_LOG));
            let (found, _, work) = scan_counting(&buf);
            let bound = (4 << 20) + 2 * buf.len() as u64 + one_position;
            assert!(work <= bound, "{word:02X?}: work {work}, bound {bound}");
            let last = found.last().unwrap();
            assert_eq!((last.offset, last.page_no), (len as u64, 5), "{word:02X?}");
        }
    }

    /// A different INDEX page header (no system records, so no torn page is possible)
    /// every 512 bytes, the LSN word at each block's end so that every page size has a
    /// matching trailer, and the high LSN word before it (as very old InnoDB wrote it), so
    /// that even the slow legacy fold is computed: nothing repeats, each candidate costs all
    /// its checksums.
    fn crafted_headers(len: usize) -> Vec<u8> {
        let mut buf = vec![0u8; len];
        for (i, b) in buf.chunks_mut(512).enumerate() {
            b[4..8].copy_from_slice(&(i as u32).to_be_bytes());
            b[16..24].copy_from_slice(&0x0000_0001_2345_6789u64.to_be_bytes());
            b[24..26].copy_from_slice(&page_type::INDEX.to_be_bytes());
            b[504..508].copy_from_slice(&1u32.to_be_bytes());
            b[508..512].copy_from_slice(&0x2345_6789u32.to_be_bytes());
        }
        buf
    }

    #[test]
    fn skipped_candidates_make_one_warning_per_region() {
        use std::io::Write;
        let mut data = crafted_headers(3 * CHUNK);
        data.extend(vec![0u8; 4 * CHUNK]);
        data.extend(crafted_headers(CHUNK));
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&data).unwrap();
        let o = scan_file(
            &f,
            data.len() as u64,
            &ScanOptions::default(),
            2,
            true,
            &AtomicBool::new(false),
            &|_, _| {},
        )
        .unwrap();
        let w: Vec<&ScanWarning> = o
            .warnings
            .iter()
            .filter(|w| w.message.contains("not checksummed"))
            .collect();
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].offset < CHUNK as u64, "{w:?}");
        assert!(w[1].offset >= 7 * CHUNK as u64, "{w:?}");
    }

    #[test]
    fn crafted_headers_at_every_step_are_bounded_and_reported() {
        let mut buf = crafted_headers(8 << 20);
        buf.extend(make_page(16384, true, 7, page_type::BLOB));
        let (found, warnings, work) = scan_counting(&buf);
        let bound = (4 << 20) + 2 * buf.len() as u64 + 5 * 65536 * (2 + checksum::FOLD_COST) as u64;
        assert!(work <= bound, "checksum work {work}, bound {bound}");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].page_no, 7);
        assert!(
            warnings
                .iter()
                .any(|w| w.message.contains("not checksummed")),
            "{warnings:?}"
        );
    }

    #[test]
    fn damaged_page_is_torn_and_filler_is_nothing() {
        let mut p = make_page(8192, true, 3, page_type::BLOB);
        p[4000] ^= 1;
        let found = scan(&p);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].status, Status::Torn);
        assert!(scan(&vec![0xFFu8; 200_000]).is_empty());
        assert!(scan(&vec![0u8; 200_000]).is_empty());
        let pattern: Vec<u8> = (0..200_000).map(|i| (i % 512) as u8).collect();
        assert!(scan(&pattern).is_empty());
    }

    fn fixture(name: &str) -> Vec<u8> {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/innodb")
            .join(name);
        std::fs::read(p).unwrap()
    }

    #[test]
    fn records_of_a_real_redundant_page() {
        let d = fixture("shop_quad.ibd");
        let p = &d[3 * 16384..4 * 16384];
        assert_eq!(crate::page::system_records(p), Some(RowFormat::Redundant));
        let recs = records(p);
        let heaps: Vec<u16> = recs.iter().map(|r| r.heap_no).collect();
        assert_eq!(heaps, [2, 3, 4, 5]);
        // (7,3,7,8) was inserted second: heap 3; its fields are 2-byte SMALLINTs.
        let r = recs.iter().find(|r| r.heap_no == 3).unwrap();
        let o = r.origin as usize;
        assert_eq!(&p[o..o + 8], &[0x80, 7, 0x80, 3, 0x80, 7, 0x80, 8]);
        let f = crate::page::redundant_fields(p, o).unwrap();
        assert_eq!(f[0], (2, false));
    }

    #[test]
    fn dictionary_of_a_real_ibdata1() {
        let d = fixture("ibdata1_16k_head");
        let mut dict = crate::dict::Dictionary::default();
        for p in d.chunks(16384) {
            dict.add_page(p);
        }
        assert_eq!(
            dict.name_of(5, 23),
            Some(("shop/orders".into(), "PRIMARY".into()))
        );
        assert_eq!(
            dict.name_of(8, 26),
            Some(("shop/nopk".into(), "GEN_CLUST_INDEX".into()))
        );
        let t = dict
            .tables
            .values()
            .find(|t| t.name == "shop/legacy")
            .unwrap();
        assert_eq!(t.space, 13);
        let gone = dict
            .tables
            .values()
            .find(|t| t.name == "shop/gone")
            .unwrap();
        assert!(gone.dropped);
        // SYS_COLUMNS and SYS_FIELDS: `orders (id int primary key, qty smallint, note
        // varchar(40)) row_format=compact` of a latin1 server.
        let orders = dict
            .tables
            .values()
            .find(|t| t.name == "shop/orders")
            .unwrap();
        let cols: Vec<(&str, u32, u32)> = dict
            .columns_of(orders.id)
            .iter()
            .map(|c| (c.name.as_str(), c.mtype, c.len))
            .collect();
        assert_eq!(cols, [("id", 6, 4), ("qty", 6, 2), ("note", 1, 40)]);
        assert_eq!(orders.n_cols, 0x8000_0003, "COMPACT, 3 columns");
        let fields: Vec<&str> = dict
            .fields_of(23)
            .iter()
            .map(|f| f.col_name.as_str())
            .collect();
        assert_eq!(fields, ["id"]);
        assert_eq!(dict.indexes[&23].index_type & 1, 1, "clustered");
    }
}
