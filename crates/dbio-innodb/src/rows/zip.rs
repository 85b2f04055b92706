//! ROW_FORMAT=COMPRESSED: a compressed leaf INDEX page turned back into the uncompressed
//! COMPACT page the server works on, and compressed BLOB chains (ZBLOB/ZBLOB2) read back.
//!
//! A compressed page (KEY_BLOCK_SIZE bytes, no FIL trailer) holds, in order:
//! - the FIL header and the INDEX page header (bytes 0..94), uncompressed, as on the page;
//! - a zlib stream: first a description of the index fields (each field fixed or variable,
//!   nullable or not, variable ones longer than 255 bytes or not; adjacent NOT NULL fixed
//!   fields merged; last the position of DB_TRX_ID, 0 on secondary indexes), ended by a full
//!   flush; then the bytes of the page from the end of the supremum record (120) to the heap
//!   top, in heap order, without the 5 fixed header bytes of each record, without DB_TRX_ID
//!   and DB_ROLL_PTR and without the 20-byte references of off-page columns;
//! - the modification log: records written after the last compression, each as its heap
//!   number, its NULL bitmap and lengths (backwards) and its data (without the same parts as
//!   above), ended by a zero byte;
//! - at the end of the page: the BLOB references of the records not on the free list (in heap
//!   and field order, growing down), DB_TRX_ID+DB_ROLL_PTR of every record (13 bytes by heap
//!   number, growing down), and the dense directory: 2 bytes per record (offset, delete mark
//!   0x8000, owner of a directory slot 0x4000), the records in key order, then the free list.
//!
//! [`decompress`] rebuilds the page in a 16 KiB buffer (the largest page a compressed page can
//! stand for: record offsets have 14 bits) so that the COMPACT record code reads it; every
//! offset and length is checked first, so a damaged page is rejected with a reason.

use crate::page::{be16, be32, page_type};
use flate2::{Decompress, FlushDecompress, Status};

/// Bytes of the page a compressed page is decompressed into.
pub const PAGE: usize = 16384;
/// FIL header + INDEX page header.
const DATA: usize = 94;
/// End of the supremum record: the first byte of the record heap.
const ZIP_START: usize = 120;
/// DB_TRX_ID + DB_ROLL_PTR.
const TRX: usize = 13;
/// A reference to off-page parts.
const REF: usize = 20;

/// Why a compressed page was not decompressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ZipReject {
    /// The page header: not a leaf INDEX page in the COMPACT layout, or heap counts that do
    /// not fit the page.
    Header,
    /// The dense directory: offsets outside the record heap or repeated.
    Directory,
    /// The zlib stream: no zlib header, a damaged index description, data or checksum.
    Stream,
    /// A record whose lengths run outside the page.
    Record,
    /// The modification log: damaged entries, or a record in neither the stream nor the log.
    Log,
    /// The uncompressed trailer (BLOB references) runs into the modification log.
    Trailer,
}

impl ZipReject {
    /// snake_case name, as in warnings.
    pub fn name(self) -> &'static str {
        match self {
            ZipReject::Header => "header",
            ZipReject::Directory => "directory",
            ZipReject::Stream => "zlib_stream",
            ZipReject::Record => "record",
            ZipReject::Log => "modification_log",
            ZipReject::Trailer => "trailer",
        }
    }
}

/// What a decompressed page held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZipInfo {
    /// Records whose bytes came from the zlib stream.
    pub stream_records: usize,
    /// Records (re)written from the modification log.
    pub log_records: usize,
}

/// One field of the index as the stream describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Col {
    /// Fixed length, 0 for variable.
    fixed: usize,
    nullable: bool,
    /// Variable with a maximum above 255 bytes: lengths above 127 take 2 bytes.
    big: bool,
}

/// The index description at the start of the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Fields {
    cols: Vec<Col>,
    /// The field that starts with DB_TRX_ID (clustered index leaf pages).
    trx: Option<usize>,
    n_nullable: usize,
}

/// The index description of a leaf page (`f`: the bytes before the full flush).
fn parse_fields(f: &[u8]) -> Option<Fields> {
    let mut vals = Vec::new();
    let mut i = 0;
    while i < f.len() {
        let b = f[i] as usize;
        if b & 0x80 != 0 {
            let lo = *f.get(i + 1)? as usize;
            vals.push(((b & 0x7F) << 8 | lo, true));
            i += 2;
        } else {
            vals.push((b, false));
            i += 1;
        }
    }
    let (last, _) = vals.pop()?;
    if vals.is_empty() || vals.len() > 1023 {
        return None;
    }
    let cols: Vec<Col> = vals
        .iter()
        .map(|&(v, two)| {
            let nullable = v & 1 == 0;
            if two || (2..126).contains(&v) {
                Col {
                    fixed: v >> 1,
                    nullable,
                    big: false,
                }
            } else {
                Col {
                    fixed: 0,
                    nullable,
                    big: v >= 126,
                }
            }
        })
        .collect();
    let trx = match last {
        0 => None,
        t if t < cols.len() && cols[t].fixed >= TRX && !cols[t].nullable => Some(t),
        _ => return None,
    };
    Some(Fields {
        n_nullable: cols.iter().filter(|c| c.nullable).count(),
        cols,
        trx,
    })
}

/// A field of a record: start in the page, length, stored off page.
#[derive(Clone, Copy, Debug, Default)]
struct Field {
    start: usize,
    len: usize,
    ext: bool,
}

/// The fields of the record at `rec` from the NULL bitmap and lengths before it. Returns the
/// end of the record's data.
fn offsets(p: &[u8], rec: usize, f: &Fields, out: &mut Vec<Field>) -> Option<usize> {
    out.clear();
    let nulls = rec.checked_sub(6)?;
    let mut lens = nulls.checked_sub(f.n_nullable.div_ceil(8))? as isize;
    let mut bit = 0;
    let mut at = rec;
    for c in &f.cols {
        if c.nullable {
            let null = p[nulls - bit / 8] >> (bit % 8) & 1 == 1;
            bit += 1;
            if null {
                out.push(Field {
                    start: at,
                    ..Field::default()
                });
                continue;
            }
        }
        let (len, ext) = if c.fixed > 0 {
            (c.fixed, false)
        } else {
            if lens < ZIP_START as isize {
                return None;
            }
            let b1 = p[lens as usize] as usize;
            lens -= 1;
            if c.big && b1 & 0x80 != 0 {
                if lens < ZIP_START as isize {
                    return None;
                }
                let b2 = p[lens as usize] as usize;
                lens -= 1;
                ((b1 & 0x3F) << 8 | b2, b1 & 0x40 != 0)
            } else {
                (b1, false)
            }
        };
        if ext && len < REF {
            return None;
        }
        out.push(Field {
            start: at,
            len,
            ext,
        });
        at += len;
        if at > PAGE {
            return None;
        }
    }
    Some(at)
}

/// The record's data from `src[*pos..]` into the page, without DB_TRX_ID/DB_ROLL_PTR and
/// the BLOB references (left as they are). `None` when `src` ends first.
fn fill(
    p: &mut [u8],
    rec: usize,
    end: usize,
    fields: &[Field],
    trx: Option<usize>,
    src: &[u8],
    pos: &mut usize,
) -> Option<()> {
    let mut out = rec;
    let copy = |p: &mut [u8], out: usize, to: usize, pos: &mut usize| -> Option<()> {
        let n = to.checked_sub(out)?;
        let s = src.get(*pos..*pos + n)?;
        p[out..to].copy_from_slice(s);
        *pos += n;
        Some(())
    };
    for (i, fd) in fields.iter().enumerate() {
        if Some(i) == trx {
            copy(p, out, fd.start, pos)?;
            out = fd.start + TRX;
        } else if fd.ext {
            let r = fd.start + fd.len - REF;
            copy(p, out, r, pos)?;
            out = r + REF;
        }
    }
    copy(p, out, end, pos)
}

/// The Adler-32 checksum zlib ends its streams with.
fn adler32(parts: &[&[u8]]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for part in parts {
        for chunk in part.chunks(5552) {
            for &x in chunk {
                a += x as u32;
                b += a;
            }
            a %= 65521;
            b %= 65521;
        }
    }
    b << 16 | a
}

/// Raw deflate data from `input` into `out`: (bytes in, bytes out, reached the end). With
/// `whole`, the data must end (its final block) within `input`.
fn inflate_raw(input: &[u8], out: &mut [u8], whole: bool) -> Option<(usize, usize, bool)> {
    let mut d = Decompress::new(false);
    let flush = if whole {
        FlushDecompress::Finish
    } else {
        FlushDecompress::Sync
    };
    let st = d.decompress(input, out, flush).ok()?;
    Some((
        d.total_in() as usize,
        d.total_out() as usize,
        st == Status::StreamEnd,
    ))
}

/// Sets the 2-byte next-record field of the record at `rec` to point at `next` (0: none).
fn set_next(p: &mut [u8], rec: usize, next: usize) {
    let rel = if next == 0 {
        0u16
    } else {
        (next as isize - rec as isize) as i16 as u16
    };
    p[rec - 2..rec].copy_from_slice(&rel.to_be_bytes());
}

/// The uncompressed page of the compressed leaf INDEX page `zip` (its physical size), in a
/// buffer of [`PAGE`] bytes, with what it held; or why it is rejected.
pub fn decompress(zip: &[u8]) -> Result<(Vec<u8>, ZipInfo), ZipReject> {
    use ZipReject::*;
    let z = zip.len();
    let Dense {
        n_recs,
        n_dense,
        heap_top,
        recs,
    } = directory(zip)?;
    let storage = z - 2 * n_dense;
    let slot = |i: usize| be16(zip, z - 2 * (i + 1)) as usize;
    // The zlib stream: the header (deflate, no dictionary), the index description up to
    // the full flush (an empty stored block: 00 00 FF FF), then the page bytes.
    let cmf = zip[DATA];
    if cmf & 0x0F != 8
        || cmf >> 4 > 7
        || !be16(zip, DATA).is_multiple_of(31)
        || zip[DATA + 1] & 0x20 != 0
    {
        return Err(Stream);
    }
    // The modification log ends where the trailer may start at the lowest.
    let log_end = storage - n_dense * TRX;
    let body = &zip[..log_end];
    let mut data = vec![0u8; PAGE - ZIP_START];
    let Some((f, n_data, log_start)) = find_stream(body, &mut data) else {
        return Err(Stream);
    };
    let data = &data[..n_data];
    let mut p = vec![0u8; PAGE];
    p[..DATA].copy_from_slice(&zip[..DATA]);
    let mut info = ZipInfo::default();
    let mut fields = Vec::new();
    let mut filled = vec![false; n_dense];
    // Records in heap order (= address order), as far as the stream reaches.
    let (mut out, mut r) = (ZIP_START, 0usize);
    let mut heap_status = 2usize;
    for (s, &rec) in recs.iter().enumerate() {
        // The record's header must start after the previous record's end.
        let need = (rec - 5).checked_sub(out).ok_or(Record)?;
        if data.len() - r < need {
            break;
        }
        p[out..rec - 5].copy_from_slice(&data[r..r + need]);
        r += need;
        out = rec;
        p[rec - 4..rec - 2].copy_from_slice(&(((s + 2) << 3) as u16).to_be_bytes());
        heap_status += 1;
        if r == data.len() {
            break;
        }
        let end = offsets(&p, rec, &f, &mut fields).ok_or(Record)?;
        fill(&mut p, rec, end, &fields, f.trx, data, &mut r).ok_or(Stream)?;
        out = end;
        filled[s] = true;
        info.stream_records += 1;
    }
    // Bytes after the last record (free space the heap top still covers).
    let rest = data.len() - r;
    if out + rest > heap_top.max(out) {
        return Err(Stream);
    }
    p[out..out + rest].copy_from_slice(&data[r..]);
    // The modification log.
    let mut pos = log_start;
    let m_end = loop {
        if pos >= log_end {
            return Err(Log);
        }
        let mut val = zip[pos] as usize;
        pos += 1;
        if val == 0 {
            break pos - 1;
        }
        if val & 0x80 != 0 {
            val = (val & 0x7F) << 8 | zip[pos] as usize;
            pos += 1;
            if val == 0 {
                return Err(Log);
            }
        }
        if pos >= log_end {
            return Err(Log);
        }
        let idx = val >> 1;
        if idx == 0 || idx > n_dense {
            return Err(Log);
        }
        let rec = recs[idx - 1];
        let heap_no = idx + 1;
        if heap_no > heap_status {
            return Err(Log);
        }
        if heap_no == heap_status {
            if val & 1 != 0 {
                return Err(Log);
            }
            heap_status += 1;
        }
        p[rec - 4..rec - 2].copy_from_slice(&((heap_no << 3) as u16).to_be_bytes());
        if val & 1 != 0 {
            // The record's data was cleared (purged).
            let end = offsets(&p, rec, &f, &mut fields).ok_or(Log)?;
            p[rec..end].fill(0);
            continue;
        }
        // NULL bitmap and lengths, written backwards from the record header.
        let mut w = rec - 6;
        let mut take = |p: &mut [u8], w: &mut usize| -> Option<u8> {
            if pos >= log_end || *w < ZIP_START {
                return None;
            }
            let b = zip[pos];
            p[*w] = b;
            pos += 1;
            *w -= 1;
            Some(b)
        };
        for _ in 0..f.n_nullable.div_ceil(8) {
            take(&mut p, &mut w).ok_or(Log)?;
        }
        let mut bit = 0;
        for c in &f.cols {
            if c.nullable {
                let null = p[rec - 6 - bit / 8] >> (bit % 8) & 1 == 1;
                bit += 1;
                if null {
                    continue;
                }
            }
            if c.fixed == 0 {
                let b1 = take(&mut p, &mut w).ok_or(Log)?;
                if c.big && b1 & 0x80 != 0 {
                    take(&mut p, &mut w).ok_or(Log)?;
                }
            }
        }
        let end = offsets(&p, rec, &f, &mut fields).ok_or(Log)?;
        if end > PAGE {
            return Err(Log);
        }
        fill(&mut p, rec, end, &fields, f.trx, &zip[..log_end], &mut pos).ok_or(Log)?;
        filled[idx - 1] = true;
        info.log_records += 1;
    };
    if filled.iter().any(|&x| !x) {
        return Err(Log);
    }
    // DB_TRX_ID/DB_ROLL_PTR of every record and the BLOB references of those not purged.
    let free: std::collections::HashSet<usize> = (n_recs..n_dense).map(slot).collect();
    let mut externs = if f.trx.is_some() {
        storage - n_dense * TRX
    } else {
        storage
    };
    for (s, &rec) in recs.iter().enumerate() {
        let end = offsets(&p, rec, &f, &mut fields).ok_or(Record)?;
        if end > heap_top {
            return Err(Record);
        }
        let Some(t) = f.trx else { continue };
        let at = fields[t].start;
        p[at..at + TRX].copy_from_slice(&zip[storage - TRX * (s + 1)..storage - TRX * s]);
        if free.contains(&rec) {
            // The server cleared the BLOB references of purged records: their off-page
            // values are unknown. A reference to page FIL_NULL makes the record's decoding
            // fail as a missing BLOB (counted), not print a value cut to its local prefix.
            for fd in fields.iter().filter(|fd| fd.ext) {
                let at = fd.start + fd.len - REF;
                p[at..at + 8].fill(0xFF);
                p[at + 8..at + REF].copy_from_slice(&[0, 0, 0, 38, 0, 0, 0, 0, 0, 0, 0, 1]);
            }
            continue;
        }
        for fd in fields.iter().filter(|fd| fd.ext) {
            externs = externs.checked_sub(REF).ok_or(Trailer)?;
            if externs < m_end {
                return Err(Trailer);
            }
            let at = fd.start + fd.len - REF;
            p[at..at + REF].copy_from_slice(&zip[externs..externs + REF]);
        }
    }
    link_records(&mut p, slot, n_recs, n_dense);
    Ok((p, info))
}

/// The header fields of a compressed leaf page that [`decompress`] needs, and its dense page
/// directory: the records' offsets in heap (address) order.
struct Dense {
    n_recs: usize,
    n_dense: usize,
    heap_top: usize,
    recs: Vec<usize>,
}

/// The [`Dense`] directory of the compressed page `zip`, checked (a leaf INDEX page in the
/// compressed format, records apart and below the heap top).
fn directory(zip: &[u8]) -> Result<Dense, ZipReject> {
    use ZipReject::{Directory as BadDirectory, Header};
    let z = zip.len();
    if !(1024..=PAGE).contains(&z) || be16(zip, 24) != page_type::INDEX {
        return Err(Header);
    }
    let n_heap_raw = be16(zip, 42) as usize;
    let n_heap = n_heap_raw & 0x7FFF;
    let heap_top = be16(zip, 40) as usize;
    let n_recs = be16(zip, 54) as usize;
    let leaf = be16(zip, 64) == 0;
    if n_heap_raw & 0x8000 == 0 || n_heap < 2 || !leaf || !(ZIP_START..=PAGE).contains(&heap_top) {
        return Err(Header);
    }
    let n_dense = n_heap - 2;
    if n_recs > n_dense || DATA + 2 + n_dense * (2 + TRX) >= z {
        return Err(Header);
    }
    let slot = |i: usize| be16(zip, z - 2 * (i + 1)) as usize;
    let mut recs: Vec<usize> = (0..n_dense).map(|i| slot(i) & 0x3FFF).collect();
    if n_dense > n_recs && (n_recs..n_dense).any(|i| slot(i) & 0xC000 != 0) {
        return Err(BadDirectory);
    }
    recs.sort_unstable();
    if recs
        .iter()
        .any(|&r| r < ZIP_START + 5 || r >= heap_top.max(ZIP_START + 5))
        || recs.windows(2).any(|w| w[0] + 5 > w[1])
    {
        return Err(BadDirectory);
    }
    Ok(Dense {
        n_recs,
        n_dense,
        heap_top,
        recs,
    })
}

/// The index description and the page bytes in the zlib stream of `body` (the compressed
/// page up to its modification log): the full flush (an empty stored block, 00 00 FF FF)
/// that ends the description is searched for, the rest inflated into `data` and checked
/// against the stream's Adler-32. Returns the fields, the bytes of `data` inflated and where
/// the modification log starts.
fn find_stream(body: &[u8], data: &mut [u8]) -> Option<(Fields, usize, usize)> {
    let log_end = body.len();
    let mut fbuf = vec![0u8; 4096];
    let search_end = (DATA + 2 + 4096).min(log_end);
    let mut i = DATA + 2;
    while i + 4 <= search_end {
        if body[i..i + 4] == [0, 0, 0xFF, 0xFF] {
            let k = i + 4;
            if let Some((n_in, n_f, false)) = inflate_raw(&body[DATA + 2..k], &mut fbuf, false) {
                if n_in == k - DATA - 2 {
                    if let Some(f) = parse_fields(&fbuf[..n_f]) {
                        if let Some((c, n_d, true)) = inflate_raw(&body[k..], data, true) {
                            let a = k + c;
                            if a + 4 <= log_end
                                && be32(body, a) == adler32(&[&fbuf[..n_f], &data[..n_d]])
                            {
                                return Some((f, n_d, a + 4));
                            }
                        }
                    }
                }
            }
        }
        i += 1;
    }
    None
}

/// Writes the record headers of the decompressed page `p`: info bits, owners, the list in
/// key order (the first `n_recs` slots of the dense directory, `slot(i)`), the free list
/// (the other slots up to `n_dense`).
fn link_records(p: &mut [u8], slot: impl Fn(usize) -> usize, n_recs: usize, n_dense: usize) {
    // The record headers: info bits, owners, the list in key order, the free list.
    p[94..99].copy_from_slice(&[0x01, 0x00, 0x02, 0, 0]);
    p[99..107].copy_from_slice(b"infimum\0");
    p[107..112].copy_from_slice(&[0x00, 0x00, 0x0B, 0, 0]);
    p[112..120].copy_from_slice(b"supremum");
    let mut prev = 99;
    let mut n_owned = 1u8;
    for i in 0..n_recs {
        let s = slot(i);
        let rec = s & 0x3FFF;
        let mut info_bits = 0u8;
        if s & 0x8000 != 0 {
            info_bits |= 0x20;
        }
        if s & 0x4000 != 0 {
            info_bits |= n_owned;
            n_owned = 1;
        } else {
            n_owned = n_owned.saturating_add(1);
        }
        p[rec - 5] = info_bits;
        set_next(p, prev, rec);
        prev = rec;
    }
    set_next(p, prev, 112);
    p[107] = n_owned;
    let first_free = if n_dense > n_recs { slot(n_recs) } else { 0 };
    p[44..46].copy_from_slice(&(first_free as u16).to_be_bytes());
    for i in n_recs..n_dense {
        let rec = slot(i);
        p[rec - 5] = 0;
        let next = if i + 1 < n_dense { slot(i + 1) } else { 0 };
        set_next(p, rec, next);
    }
}

/// Reads `len` bytes of a compressed BLOB: one zlib stream from (`page_no`, `offset`) on, the
/// first page of type ZBLOB, the next ones ZBLOB2, each giving the next page number at
/// `offset` (FIL_PAGE_NEXT on all but maybe the first) and its part of the stream up to the
/// end of the page. `page` returns the physical page (space id and page number checked by
/// the caller). Appends to `out`; `false` when a page is missing, of another type or the
/// stream is damaged or gives another length.
pub fn read_zblob(
    mut page: impl FnMut(u32, &mut Vec<u8>) -> bool,
    page_no: u32,
    offset: u32,
    len: u64,
    out: &mut Vec<u8>,
) -> bool {
    let Ok(len) = usize::try_from(len) else {
        return false;
    };
    let start = out.len();
    out.resize(start + len, 0);
    let mut d = Decompress::new(true);
    let (mut no, mut off) = (page_no, offset as usize);
    let mut want = page_type::ZBLOB;
    let mut buf = Vec::new();
    let mut hops = 0u32;
    let done = loop {
        hops += 1;
        if no == u32::MAX || hops > 1 << 20 || !page(no, &mut buf) || buf.len() < 64 {
            break false;
        }
        if be16(&buf, 24) != want || off + 4 > buf.len() {
            break false;
        }
        let next = be32(&buf, off);
        let from = if off == 12 { 38 } else { off + 4 };
        if from >= buf.len() {
            break false;
        }
        let before = d.total_out() as usize;
        let st = d.decompress(
            &buf[from..],
            &mut out[start + before..],
            FlushDecompress::None,
        );
        match st {
            Ok(Status::StreamEnd) => break d.total_out() as usize == len,
            Ok(_) if d.total_out() as usize == len => break true,
            Ok(_) => {}
            Err(_) => break false,
        }
        no = next;
        off = 12;
        want = page_type::ZBLOB2;
    };
    if !done {
        out.truncate(start);
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_descriptions() {
        // INT key (4), DB_TRX_ID+DB_ROLL_PTR (13), a nullable TINYINT, a nullable
        // VARCHAR(300), a NOT NULL VARCHAR(10); DB_TRX_ID is field 1.
        let f = parse_fields(&[9, 27, 2, 126, 1, 1]).unwrap();
        assert_eq!(f.trx, Some(1));
        assert_eq!(f.n_nullable, 2);
        assert_eq!(
            f.cols[3],
            Col {
                fixed: 0,
                nullable: true,
                big: true
            }
        );
        assert_eq!(f.cols[4].fixed, 0);
        assert!(!f.cols[4].nullable && !f.cols[4].big);
        // DB_TRX_ID position outside the fields, or on a field too short: rejected.
        assert_eq!(parse_fields(&[9, 27, 5]), None);
        assert_eq!(parse_fields(&[9, 27, 0x80]), None);
        assert_eq!(parse_fields(&[9, 2, 1]), None);
        // Secondary index leaf: no DB_TRX_ID.
        assert_eq!(parse_fields(&[9, 0]).unwrap().trx, None);
    }

    #[test]
    fn adler32_is_zlibs() {
        assert_eq!(adler32(&[b"Wikipedia"]), 0x11E6_0398);
        assert_eq!(adler32(&[b"Wiki", b"pedia"]), 0x11E6_0398);
    }

    #[test]
    fn garbage_is_rejected() {
        let mut p = vec![0u8; 8192];
        assert_eq!(decompress(&p).unwrap_err(), ZipReject::Header);
        p[24..26].copy_from_slice(&page_type::INDEX.to_be_bytes());
        p[40..42].copy_from_slice(&200u16.to_be_bytes());
        p[42..44].copy_from_slice(&0x8003u16.to_be_bytes());
        p[8190..8192].copy_from_slice(&130u16.to_be_bytes());
        assert_eq!(decompress(&p).unwrap_err(), ZipReject::Stream);
    }
}
