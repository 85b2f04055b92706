//! `innodb rows` on real leaf pages changed the way a server or a damaged disk changes them:
//! a delete-marked record moved to the page's free list (purged), with its bytes kept (MySQL,
//! MariaDB before 10.6) or its data zeroed (MariaDB 10.6 and later); records damaged one way
//! each, with the checksum recomputed so the page passes; an older copy of a page holding a
//! row the newer copy no longer has. Every page starts as page 3 of shop_typed.ibd (DYNAMIC,
//! full_crc32, made by MariaDB 10.11 with scripts/make-innodb-testdata.sh): record `id` 1 is
//! live, `id` 2 delete-marked.

use crate::rows::{fixture, rows, TYPED};
use dbio_innodb::page::system_records;
use dbio_innodb::rows::def;
use dbio_innodb::rows::record::{self, Layout, RawField};
use dbio_innodb::rows::run::Deleted;
use dbio_innodb::rows::write::RowFormat;
use dbio_schema::rows::RowsSummary as Summary;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const S: usize = 16384;
/// The two rows of shop_typed, as TSV.
const ROW1: &str = "1\t-5\t7\t-100000\t9000000000000000001\t4000000000\t2019-05-13\t2019-05-13 14:35:07\t2019-05-13 14:35:07.123456\t2019-05-13 12:00:00\t-12:34:56\t1234.56\tabc\tGrüße aus Köln";
const ROW2: &str = "2\t5\t8\t100000\t-9000000000000000001\t17\t2001-01-01\t2001-01-01 00:00:00\t2001-01-01 00:00:00.000001\t2001-01-01 00:00:00\t01:02:03\t-1234.56\tzzz\tdeleted varchar row";
/// Columns of TYPED, by table order.
const D: usize = 6;
const DT: usize = 7;
const CH: usize = 12;
const VC: usize = 13;

/// Page 3 of shop_typed.ibd and its LSN.
fn leaf() -> (Vec<u8>, u64) {
    let ibd = std::fs::read(fixture("shop_typed.ibd")).unwrap();
    let p = ibd[3 * S..4 * S].to_vec();
    let lsn = u64::from_be_bytes(p[16..24].try_into().unwrap());
    (p, lsn)
}

fn be16(p: &[u8], at: usize) -> usize {
    u16::from_be_bytes([p[at], p[at + 1]]) as usize
}

fn set16(p: &mut [u8], at: usize, v: usize) {
    p[at..at + 2].copy_from_slice(&(v as u16).to_be_bytes());
}

/// The next record of a COMPACT record (0: the end of the free list).
fn next(p: &[u8], o: usize) -> usize {
    match be16(p, o - 2) as u16 as i16 {
        0 => 0,
        rel => (o as isize + rel as isize).rem_euclid(S as isize) as usize,
    }
}

fn set_next(p: &mut [u8], o: usize, to: usize) {
    let rel = if to == 0 { 0 } else { to.wrapping_sub(o) };
    set16(p, o - 2, rel & 0xFFFF);
}

/// The records of the page in list order (from the infimum, COMPACT), with their fields.
fn records(p: &[u8], layout: &Layout) -> Vec<(usize, Vec<RawField>)> {
    let mut out = Vec::new();
    let mut o = next(p, 99);
    while o != 112 {
        let mut f = Vec::new();
        record::split(p, o, system_records(p).unwrap(), layout, &mut f).unwrap();
        out.push((o, f));
        o = next(p, o);
    }
    out
}

/// The record whose key (an INT, sign bit flipped) is `id`.
fn record_of(p: &[u8], layout: &Layout, id: u32) -> (usize, Vec<RawField>) {
    records(p, layout)
        .into_iter()
        .find(|(o, _)| p[*o..*o + 4] == (id ^ 0x8000_0000).to_be_bytes())
        .unwrap_or_else(|| panic!("no record with id {id}"))
}

/// The bytes of table column `col` in a split record.
fn field(layout: &Layout, fields: &[RawField], col: usize) -> (usize, usize) {
    let i = layout
        .fields
        .iter()
        .position(|f| f.col == Some(col))
        .unwrap();
    (fields[i].start, fields[i].len)
}

/// Moves the record at `origin` from the record list to the head of the free list, as purge
/// does: unlinked, its owner's n_owned lowered, PAGE_FREE, PAGE_GARBAGE and PAGE_N_RECS
/// updated; its header and bytes are left as they are.
fn to_free_list(p: &mut [u8], layout: &Layout, origin: usize) {
    let mut prev = 99;
    while next(p, prev) != origin {
        prev = next(p, prev);
        assert!(prev != 112, "record {origin} not in the record list");
    }
    assert_eq!(p[origin - 5] & 0x0F, 0, "the record owns a directory slot");
    let after = next(p, origin);
    set_next(p, prev, after);
    let mut owner = after;
    while p[owner - 5] & 0x0F == 0 {
        owner = next(p, owner);
    }
    p[owner - 5] -= 1;
    // Its size: the header (5 bytes, NULL bitmap, lengths of the variable fields) and data.
    let mut f = Vec::new();
    record::split(p, origin, system_records(p).unwrap(), layout, &mut f).unwrap();
    let lens: usize = layout
        .fields
        .iter()
        .zip(&f)
        .filter(|(lf, rf)| lf.fixed_compact.is_none() && !rf.null)
        .map(|(lf, rf)| {
            if lf.big && (rf.len > 127 || rf.external) {
                2
            } else {
                1
            }
        })
        .sum();
    let data = f.iter().map(|r| r.start + r.len).max().unwrap() - origin;
    let size = 5 + layout.n_nullable.div_ceil(8) + lens + data;
    let free = be16(p, 44);
    set_next(p, origin, free);
    set16(p, 44, origin);
    set16(p, 46, be16(p, 46) + size);
    set16(p, 54, be16(p, 54) - 1);
}

/// Zeroes the data of the record at `origin` (from its origin to the end of its last field),
/// as MariaDB 10.6 and later do when purge frees it.
fn zero_data(p: &mut [u8], fields: &[RawField], origin: usize) {
    let end = fields.iter().map(|f| f.start + f.len).max().unwrap();
    p[origin..end].fill(0);
}

/// Page number, LSN (header and trailer) and full_crc32 checksum set: an intact page.
fn seal(p: &mut [u8], page_no: u32, lsn: u64) {
    p[4..8].copy_from_slice(&page_no.to_be_bytes());
    p[16..24].copy_from_slice(&lsn.to_be_bytes());
    p[S - 8..S - 4].copy_from_slice(&(lsn as u32).to_be_bytes());
    let c = dbio_innodb::checksum::full_crc32(p);
    p[S - 4..].copy_from_slice(&c.to_be_bytes());
}

fn write(dir: &Path, name: &str, pages: &[Vec<u8>]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, pages.concat()).unwrap();
    path
}

fn layout() -> Layout {
    Layout::clustered(&def::parse(TYPED, None, "t").unwrap())
}

fn reasons(s: &Summary) -> Vec<(&str, u64)> {
    s.rejected.iter().map(|(k, v)| (k.as_str(), *v)).collect()
}

/// A purged record whose bytes were kept (MySQL; MariaDB before 10.6) is a deleted row with
/// its exact values; once its data is zeroed (MariaDB 10.6+) it is rejected as `zeroed`, not
/// written as a row of zero values. A record zeroed but for its DB_ROLL_PTR is not taken for a
/// zeroed one: the rule needs every data byte zero.
#[test]
fn purged_records_on_the_free_list() {
    let tmp = tempfile::tempdir().unwrap();
    let l = layout();
    let (page, lsn) = leaf();
    let (o2, f2) = record_of(&page, &l, 2);
    let mut kept = page.clone();
    to_free_list(&mut kept, &l, o2);
    seal(&mut kept, 3, lsn);
    // The page now has one record in its list and one on its free list.
    let (mut seen, mut recs) = (Vec::new(), Vec::new());
    record::list(&kept, system_records(&kept).unwrap(), &mut seen, &mut recs);
    let purged: Vec<(usize, bool)> = recs.iter().map(|r| (r.origin, r.purged)).collect();
    assert_eq!(purged.len(), 2);
    assert!(purged.contains(&(o2, true)), "{purged:?}");
    let path = write(tmp.path(), "kept.img", &[kept.clone()]);
    let (del, s) = rows(
        std::slice::from_ref(&path),
        TYPED,
        Deleted::Only,
        RowFormat::Tsv,
    );
    assert_eq!(del, [ROW2], "{s:?}");
    assert_eq!((s.records_seen, s.deleted_rows_written), (2, 1));
    assert!(s.rejected.is_empty(), "{s:?}");
    let (all, _) = rows(&[path], TYPED, Deleted::Include, RowFormat::Tsv);
    assert_eq!(all, [ROW1, ROW2]);

    // Its data zeroed: no row, one record rejected as zeroed.
    let mut zeroed = page.clone();
    to_free_list(&mut zeroed, &l, o2);
    zero_data(&mut zeroed, &f2, o2);
    seal(&mut zeroed, 3, lsn);
    let path = write(tmp.path(), "zeroed.img", &[zeroed]);
    let (del, s) = rows(
        std::slice::from_ref(&path),
        TYPED,
        Deleted::Only,
        RowFormat::Tsv,
    );
    assert!(del.is_empty(), "{del:?}");
    assert_eq!(reasons(&s), [("zeroed", 1)]);
    assert_eq!((s.records_seen, s.rows_written, s.filtered_out), (2, 0, 1));
    assert_eq!(
        (s.deleted_rows_written, s.duplicates_dropped),
        (0, 0),
        "{s:?}"
    );
    let (all, s) = rows(&[path], TYPED, Deleted::Include, RowFormat::Tsv);
    assert_eq!(all, [ROW1]);
    assert_eq!(reasons(&s), [("zeroed", 1)]);

    // Every data byte zero but DB_ROLL_PTR's: decoded and judged on its values, not zeroed.
    let mut almost = page;
    to_free_list(&mut almost, &l, o2);
    zero_data(&mut almost, &f2, o2);
    let roll = l
        .fields
        .iter()
        .position(|f| f.sys == Some(record::Sys::RollPtr))
        .unwrap();
    almost[f2[roll].start] = 0x80;
    seal(&mut almost, 3, lsn);
    let path = write(tmp.path(), "almost.img", &[almost]);
    let (_, s) = rows(&[path], TYPED, Deleted::Only, RowFormat::Tsv);
    assert!(!s.rejected.contains_key("zeroed"), "{s:?}");
    assert_eq!(
        s.rows_written + s.rejected.values().sum::<u64>(),
        1,
        "{s:?}"
    );
}

/// Copies of page 3 under page numbers 10, 11 and 12 with a newer LSN (their records would
/// win over page 3's) and five of their records damaged one way each, and undamaged copies
/// under 20, 21 and 22 with the keys moved by 1000, 2000 and 3000 (so most records of the
/// index still fit and it is chosen). Every damaged record is rejected and counted under its reason; the rows
/// written are the true rows, and page 3's are not dropped as older versions of newer
/// records that do not decode.
#[test]
fn damaged_records_are_rejected_one_by_one() {
    let tmp = tempfile::tempdir().unwrap();
    let l = layout();
    let (page, lsn) = leaf();
    let mut pages = vec![page.clone()];
    let copy = |page_no: u32, damage: &dyn Fn(&mut Vec<u8>)| {
        let mut p = page.clone();
        damage(&mut p);
        seal(&mut p, page_no, lsn + page_no as u64);
        p
    };
    // Page 10: id 1's DATE in month 13 (range); id 2's status bits say node pointer (header).
    pages.push(copy(10, &|p| {
        let (_, f) = record_of(p, &l, 1);
        let (at, _) = field(&l, &f, D);
        let v = u32::from_be_bytes([0, p[at], p[at + 1], p[at + 2]]) ^ 0x80_0000;
        let v = ((v & !(15 << 5)) | 13 << 5) ^ 0x80_0000;
        p[at..at + 3].copy_from_slice(&v.to_be_bytes()[1..]);
        let (o2, _) = record_of(p, &l, 2);
        p[o2 - 3] = (p[o2 - 3] & !7) | 1;
    }));
    // Page 11: id 1's VARCHAR(64) length byte says 70 (length); id 2 purged, data zeroed.
    pages.push(copy(11, &|p| {
        let (o1, f) = record_of(p, &l, 1);
        let (_, len) = field(&l, &f, VC);
        // The lengths of the variable fields sit before the NULL bitmap in reverse column
        // order: vc is the only variable field.
        let at = o1 - 5 - l.n_nullable.div_ceil(8) - 1;
        assert_eq!(p[at] as usize, len);
        p[at] = 70;
        let (o2, f2) = record_of(p, &l, 2);
        to_free_list(p, &l, o2);
        zero_data(p, &f2, o2);
    }));
    // Page 12: id 2's DATETIME at hour 25 (range); id 1 intact, so page 12's keys overlap
    // page 3's and both go through the newest-version choice: id 1 of page 12 wins (the
    // same values), id 2 of page 3 must not be dropped for page 12's damaged one.
    pages.push(copy(12, &|p| {
        let (_, f) = record_of(p, &l, 2);
        let (at, _) = field(&l, &f, DT);
        let mut b = [0u8; 8];
        b[3..].copy_from_slice(&p[at..at + 5]);
        let v = u64::from_be_bytes(b);
        let v = (v & !(31 << 12)) | 25 << 12;
        p[at..at + 5].copy_from_slice(&v.to_be_bytes()[3..]);
    }));
    let mut truth = vec![(ROW1.to_string(), false), (ROW2.to_string(), true)];
    for k in 1..=3u32 {
        pages.push(copy(19 + k, &|p| {
            for id in [1, 2] {
                let (o, _) = record_of(p, &l, id);
                p[o..o + 4].copy_from_slice(&((id + 1000 * k) ^ 0x8000_0000).to_be_bytes());
            }
        }));
        truth.push((
            ROW1.replacen("1\t", &format!("{}\t", 1 + 1000 * k), 1),
            false,
        ));
        truth.push((
            ROW2.replacen("2\t", &format!("{}\t", 2 + 1000 * k), 1),
            true,
        ));
    }
    let path = write(tmp.path(), "damaged.img", &pages);
    for deleted in [Deleted::Include, Deleted::Exclude, Deleted::Only] {
        let (got, s) = rows(std::slice::from_ref(&path), TYPED, deleted, RowFormat::Tsv);
        let mut want: Vec<&str> = truth
            .iter()
            .filter(|(_, del)| match deleted {
                Deleted::Include => true,
                Deleted::Exclude => !del,
                Deleted::Only => *del,
            })
            .map(|(r, _)| r.as_str())
            .collect();
        want.sort_unstable();
        let mut got = got;
        got.sort_unstable();
        assert_eq!(got, want, "{deleted:?}: {s:?}");
        let want_rej: BTreeMap<String, u64> =
            [("header", 1), ("length", 1), ("range", 2), ("zeroed", 1)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
        assert_eq!(s.rejected, want_rej, "{deleted:?}");
        assert_eq!((s.pages_decoded, s.records_seen), (7, 14));
        assert_eq!(s.duplicates_dropped, 1, "{s:?}");
    }
}

/// Two copies of page 3 (same space id and page number): the real one, and an older one (a
/// lower LSN, as a doublewrite buffer or an old image holds) in which id 1 had another CHAR
/// value and id 2's place held a live id 3 that the newer copy no longer has (purged since).
/// id 1's older version is dropped and counted; id 3 comes out, flagged deleted, with the
/// older copy's LSN; a copy with the kept copy's own LSN adds nothing.
#[test]
fn older_copies_of_a_page_are_decoded_too() {
    let tmp = tempfile::tempdir().unwrap();
    let l = layout();
    let (page, lsn) = leaf();
    let mut old = page.clone();
    let (_, f1) = record_of(&old, &l, 1);
    let (at, _) = field(&l, &f1, CH);
    assert_eq!(&old[at..at + 3], b"abc");
    old[at..at + 3].copy_from_slice(b"old");
    let (o2, _) = record_of(&old, &l, 2);
    old[o2..o2 + 4].copy_from_slice(&(3u32 ^ 0x8000_0000).to_be_bytes());
    old[o2 - 5] &= !0x20; // live in the older copy
    seal(&mut old, 3, lsn - 100);
    let older = write(tmp.path(), "older.img", &[old]);
    let ibd = fixture("shop_typed.ibd");
    let row3 = ROW2.replacen("2\t", "3\t", 1);
    let old1 = ROW1.replace("\tabc\t", "\told\t");

    let (all, s) = rows(
        &[ibd.clone(), older.clone()],
        TYPED,
        Deleted::Include,
        RowFormat::Tsv,
    );
    assert_eq!(all, [ROW1, ROW2, row3.as_str()], "{s:?}");
    assert!(!all.contains(&old1));
    assert_eq!(
        (s.pages_decoded, s.older_copies, s.records_seen),
        (1, 1, 4),
        "{s:?}"
    );
    assert_eq!(
        (s.rows_written, s.deleted_rows_written, s.duplicates_dropped),
        (3, 2, 1)
    );
    assert_eq!(
        (
            s.pages_decoded,
            s.older_copies,
            s.records_seen,
            s.filtered_out
        ),
        (1, 1, 4, 0),
        "{s:?}"
    );
    assert!(s.rejected.is_empty(), "{s:?}");
    let (del, _) = rows(
        &[ibd.clone(), older.clone()],
        TYPED,
        Deleted::Only,
        RowFormat::Tsv,
    );
    assert_eq!(del, [ROW2, row3.as_str()]);
    let (live, s) = rows(
        &[ibd.clone(), older.clone()],
        TYPED,
        Deleted::Exclude,
        RowFormat::Tsv,
    );
    assert_eq!(live, [ROW1]);
    assert_eq!((s.filtered_out, s.duplicates_dropped), (2, 1));
    // JSON Lines: id 3 from page 3 at the older copy's LSN.
    let (jl, _) = rows(
        &[ibd.clone(), older],
        TYPED,
        Deleted::Include,
        RowFormat::Jsonl,
    );
    let r3: serde_json::Value = jl
        .iter()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["row"]["id"] == 3)
        .unwrap();
    assert_eq!(r3["deleted"], true);
    assert_eq!(r3["page_no"], 3);
    assert_eq!(r3["lsn"], lsn - 100);

    // A copy with the same LSN holds the same records: not decoded again.
    let same = write(tmp.path(), "same.img", &[page]);
    let (all, s) = rows(&[ibd, same], TYPED, Deleted::Include, RowFormat::Tsv);
    assert_eq!(all, [ROW1, ROW2]);
    assert_eq!((s.older_copies, s.duplicates_dropped), (0, 0), "{s:?}");
}
