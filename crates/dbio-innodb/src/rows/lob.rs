//! MySQL 8 LOBs: the off-page part of a column of an uncompressed table (REDUNDANT, COMPACT,
//! DYNAMIC) as MySQL 8.0 stores it, read back byte for byte.
//!
//! The column's 20-byte reference names the LOB's first page (type LOB_FIRST, 24). That page
//! holds (MySQL `storage/innobase/include/lob0first.h`, `lob0index.h`):
//! - at 38: version (1 byte), flags (1), LOB version (4), last trx id (6), last undo number
//!   (4), bytes of data on this page (4), trx id (6);
//! - at 64: the base node of the list of index entries (4-byte length, first and last entry
//!   as page number + offset, 6 bytes each), at 80 the base node of the free entries;
//! - at 96: ten index entries of 60 bytes (more entries are on LOB_INDEX pages, 22), then the
//!   first part of the data, at 96 + 600.
//!
//! An index entry: previous and next entry (6 bytes each), the base node of its older
//! versions (16), creator and modifier trx ids (6 + 6), undo numbers (4 + 4), then at 48 the
//! page number of its data and at 52 the length of that data (2 bytes, in a 4-byte field), at
//! 56 the LOB version. The data
//! of an entry is on the first page (at 696) when its page number is the first page's, else on
//! a LOB_DATA page (23) from byte 49 (after version, 1 byte, data length, 4, trx id, 6). The
//! list in index order, newest versions only, is the value; older versions (partial updates of
//! MySQL 8 JSON) hang off each entry and are not read.

use crate::page::{be16, be32};

/// FIL_PAGE_TYPE_LOB_INDEX.
pub const LOB_INDEX: u16 = 22;
/// FIL_PAGE_TYPE_LOB_DATA.
pub const LOB_DATA: u16 = 23;
/// FIL_PAGE_TYPE_LOB_FIRST.
pub const LOB_FIRST: u16 = 24;

/// Base node of the list of index entries, on the first page.
const INDEX_LIST: usize = 64;
/// Where the index entries of the first page begin.
const FIRST_ENTRIES: usize = 96;
/// Bytes of an index entry.
const ENTRY: usize = 60;
/// Index entries on the first page.
const FIRST_NODES: usize = 10;
/// Where the data begins on the first page.
const FIRST_DATA: usize = FIRST_ENTRIES + FIRST_NODES * ENTRY;
/// Where the data begins on a LOB_DATA page.
const DATA_DATA: usize = 49;
/// FIL trailer.
const TRAILER: usize = 8;
/// No page (FIL_NULL).
const NULL: u32 = u32::MAX;

/// Appends the `len` bytes of the LOB whose first page is `first` to `out`: the index entries
/// in list order, each one's data from the first page or its LOB_DATA page. `page(no, buf)`
/// reads a page of the LOB's tablespace (false when it is missing or not of that space).
/// False (with `out` as it was) when a page is missing, of another type, or a length or
/// offset does not fit: a damaged LOB, never a value of another length.
pub fn read_lob(
    mut page: impl FnMut(u32, &mut Vec<u8>) -> bool,
    first: u32,
    len: u64,
    out: &mut Vec<u8>,
) -> bool {
    let start = out.len();
    let ok = read_into(&mut page, first, len, out);
    if !ok {
        out.truncate(start);
    }
    ok
}

fn read_into(
    page: &mut impl FnMut(u32, &mut Vec<u8>) -> bool,
    first: u32,
    len: u64,
    out: &mut Vec<u8>,
) -> bool {
    let (mut fp, mut ip, mut dp) = (Vec::new(), Vec::new(), Vec::new());
    if !page(first, &mut fp) || fp.len() < FIRST_DATA + TRAILER || be16(&fp, 24) != LOB_FIRST {
        return false;
    }
    let size = fp.len();
    let n_entries = be32(&fp, INDEX_LIST) as u64;
    let (mut no, mut off) = (
        be32(&fp, INDEX_LIST + 4),
        be16(&fp, INDEX_LIST + 8) as usize,
    );
    let want = out.len() as u64 + len;
    let mut index_page = NULL;
    let mut seen = 0u64;
    while no != NULL {
        seen += 1;
        // Each entry is read once: a list longer than its length loops.
        if seen > n_entries {
            return false;
        }
        // The page holding the entry: the first page, or a LOB_INDEX page.
        let e: &[u8] = if no == first {
            &fp
        } else {
            if no != index_page {
                if !page(no, &mut ip) || ip.len() != size || be16(&ip, 24) != LOB_INDEX {
                    return false;
                }
                index_page = no;
            }
            &ip
        };
        if off < 38 || off + ENTRY > size - TRAILER {
            return false;
        }
        let (next_no, next_off) = (be32(e, off + 6), be16(e, off + 10) as usize);
        // The length is 2 bytes at the start of its 4-byte field (`mach_read_from_2`).
        let (data_no, data_len) = (be32(e, off + 48), be16(e, off + 52) as usize);
        let data: &[u8] = if data_no == first {
            if FIRST_DATA + data_len > size - TRAILER {
                return false;
            }
            &fp[FIRST_DATA..FIRST_DATA + data_len]
        } else {
            if !page(data_no, &mut dp)
                || dp.len() != size
                || be16(&dp, 24) != LOB_DATA
                || DATA_DATA + data_len > size - TRAILER
            {
                return false;
            }
            &dp[DATA_DATA..DATA_DATA + data_len]
        };
        if out.len() as u64 + data.len() as u64 > want {
            return false;
        }
        out.extend_from_slice(data);
        (no, off) = (next_no, next_off);
    }
    out.len() as u64 == want
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: usize = 4096;

    fn put32(p: &mut [u8], at: usize, v: u32) {
        p[at..at + 4].copy_from_slice(&v.to_be_bytes());
    }
    fn put16(p: &mut [u8], at: usize, v: u16) {
        p[at..at + 2].copy_from_slice(&v.to_be_bytes());
    }
    /// An index entry at `off` of `p`: next entry, data page and length.
    fn entry(p: &mut [u8], off: usize, next: (u32, u16), data_no: u32, data_len: u32) {
        put32(p, off, NULL);
        put32(p, off + 6, next.0);
        put16(p, off + 10, next.1);
        put32(p, off + 48, data_no);
        put16(p, off + 52, data_len as u16);
    }

    /// A LOB of `first` (page 7: 300 bytes), a data page (8: 1000 bytes) and an entry on an
    /// index page (9) pointing at data page 10 (5 bytes).
    fn pages() -> Vec<(u32, Vec<u8>)> {
        let mut f = vec![0u8; S];
        put16(&mut f, 24, LOB_FIRST);
        put32(&mut f, INDEX_LIST, 3);
        put32(&mut f, INDEX_LIST + 4, 7);
        put16(&mut f, INDEX_LIST + 8, FIRST_ENTRIES as u16);
        entry(
            &mut f,
            FIRST_ENTRIES,
            (7, (FIRST_ENTRIES + ENTRY) as u16),
            7,
            300,
        );
        entry(&mut f, FIRST_ENTRIES + ENTRY, (9, 100), 8, 1000);
        for (i, b) in f[FIRST_DATA..FIRST_DATA + 300].iter_mut().enumerate() {
            *b = i as u8;
        }
        let mut d = vec![0u8; S];
        put16(&mut d, 24, LOB_DATA);
        d[DATA_DATA..DATA_DATA + 1000].fill(0xAB);
        let mut ix = vec![0u8; S];
        put16(&mut ix, 24, LOB_INDEX);
        entry(&mut ix, 100, (NULL, 0), 10, 5);
        let mut d2 = vec![0u8; S];
        put16(&mut d2, 24, LOB_DATA);
        d2[DATA_DATA..DATA_DATA + 5].copy_from_slice(b"tail!");
        vec![(7, f), (8, d), (9, ix), (10, d2)]
    }

    fn read(pages: &[(u32, Vec<u8>)], len: u64) -> Option<Vec<u8>> {
        let mut out = b"prefix".to_vec();
        let ok = read_lob(
            |no, b| match pages.iter().find(|p| p.0 == no) {
                Some(p) => {
                    b.clear();
                    b.extend_from_slice(&p.1);
                    true
                }
                None => false,
            },
            7,
            len,
            &mut out,
        );
        if !ok {
            assert_eq!(out, b"prefix", "a failed read leaves out as it was");
        }
        ok.then(|| out[6..].to_vec())
    }

    #[test]
    fn entries_in_list_order_from_first_data_and_index_pages() {
        let p = pages();
        let v = read(&p, 1305).expect("the LOB reads");
        assert_eq!(v.len(), 1305);
        assert_eq!(&v[..3], &[0, 1, 2]);
        assert!(v[300..1300].iter().all(|&b| b == 0xAB));
        assert_eq!(&v[1300..], b"tail!");
    }

    #[test]
    fn damage_is_a_failed_read() {
        let p = pages();
        // Another length than the entries hold.
        assert!(read(&p, 1304).is_none());
        assert!(read(&p, 1306).is_none());
        // A data page missing, or of another type.
        assert!(read(&p[..3], 1305).is_none());
        let mut q = p.clone();
        put16(&mut q[1].1, 24, 10);
        assert!(read(&q, 1305).is_none());
        // A data length past the page.
        let mut q = p.clone();
        put16(&mut q[0].1, FIRST_ENTRIES + ENTRY + 52, S as u16);
        assert!(read(&q, 1305).is_none());
        // A list that loops (the last entry points back at the first).
        let mut q = p.clone();
        put32(&mut q[2].1, 106, 7);
        put16(&mut q[2].1, 110, FIRST_ENTRIES as u16);
        assert!(read(&q, 1305 * 2).is_none());
        // Not a LOB first page.
        let mut q = p;
        put16(&mut q[0].1, 24, 10);
        assert!(read(&q, 1305).is_none());
    }
}
