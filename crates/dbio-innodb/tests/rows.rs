//! `innodb rows` decoding on the real tablespaces in testdata/innodb (made by MariaDB 10.11
//! with scripts/make-innodb-testdata.sh; the CREATE TABLE statements and the values below are
//! the ones that script ran).

use dbio_innodb::recover::{scan_sources, Scanned, Source};
use dbio_innodb::rows::def;
use dbio_innodb::rows::inputs::expand_inputs;
use dbio_innodb::rows::run::{self, Deleted, Options, PageStore};
use dbio_innodb::rows::write::{RowFormat, RowWriter};
use dbio_innodb::scan::ScanOptions;
use dbio_schema::rows::RowsSummary as Summary;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

pub(crate) fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/innodb")
        .join(name)
}

/// Rows of `sql`'s table found in `paths`, as TSV lines (header line dropped).
pub(crate) fn rows(
    paths: &[PathBuf],
    sql: &str,
    deleted: Deleted,
    format: RowFormat,
) -> (Vec<String>, Summary) {
    rows_threads(paths, sql, deleted, format, None)
}

/// [`rows`] decoded on `threads` threads (`None`: [`run::run`]'s default).
fn rows_threads(
    paths: &[PathBuf],
    sql: &str,
    deleted: Deleted,
    format: RowFormat,
    threads: Option<usize>,
) -> (Vec<String>, Summary) {
    let files = expand_inputs(paths).unwrap();
    let sources: Vec<Source> = files
        .iter()
        .map(|p| Source::open(p, false).unwrap())
        .collect();
    let scanned = scan(&sources);
    let store = PageStore::new(&scanned, &sources);
    let d = def::parse(sql, None, "test").unwrap();
    let opts = Options {
        def: d.clone(),
        deleted,
        index_id: None,
        space_id: None,
    };
    let mut w = RowWriter::new(Vec::new(), format, &d);
    let s = match threads {
        Some(t) => run::run_threads(&store, &opts, t, &AtomicBool::new(false), &mut w),
        None => run::run(&store, &opts, &AtomicBool::new(false), &mut w),
    }
    .unwrap();
    let text = String::from_utf8(w.into_inner()).unwrap();
    let lines: Vec<String> = text
        .lines()
        .skip(if format == RowFormat::Tsv { 1 } else { 0 })
        .map(str::to_string)
        .collect();
    (lines, s)
}

pub(crate) const TYPED: &str = "create table typed (
  id int primary key,
  ti tinyint, si smallint, mi mediumint, bi bigint, iu int unsigned,
  d date, dt datetime, dt6 datetime(6), ts timestamp null, tm time,
  dec1 decimal(10,2), ch char(10), vc varchar(64)
) row_format=dynamic default charset=latin1";

#[test]
fn dynamic_every_type_and_the_deleted_row() {
    let (live, s) = rows(
        &[fixture("shop_typed.ibd")],
        TYPED,
        Deleted::Exclude,
        RowFormat::Tsv,
    );
    // ts: '2019-05-13 12:00:00' in the script's server time zone (UTC).
    assert_eq!(
        live,
        ["1\t-5\t7\t-100000\t9000000000000000001\t4000000000\t2019-05-13\t2019-05-13 14:35:07\t2019-05-13 14:35:07.123456\t2019-05-13 12:00:00\t-12:34:56\t1234.56\tabc\tGrüße aus Köln"]
    );
    assert_eq!(s.rows_written, 1);
    assert_eq!(s.filtered_out, 1, "{s:?}");
    let (del, s) = rows(
        &[fixture("shop_typed.ibd")],
        TYPED,
        Deleted::Only,
        RowFormat::Tsv,
    );
    assert_eq!(
        del,
        ["2\t5\t8\t100000\t-9000000000000000001\t17\t2001-01-01\t2001-01-01 00:00:00\t2001-01-01 00:00:00.000001\t2001-01-01 00:00:00\t01:02:03\t-1234.56\tzzz\tdeleted varchar row"]
    );
    assert_eq!(s.deleted_rows_written, 1);
    assert!(s.rejected.is_empty(), "{s:?}");
}

#[test]
fn compact_redundant_and_no_primary_key() {
    let (r, _) = rows(
        &[fixture("shop_orders.ibd")],
        "create table orders (id int primary key, qty smallint, note varchar(40)) row_format=compact",
        Deleted::Include,
        RowFormat::Sql,
    );
    let inserts: Vec<&String> = r.iter().filter(|l| l.starts_with("INSERT")).collect();
    assert_eq!(inserts.len(), 4, "{r:?}");
    assert!(
        inserts
            .iter()
            .any(|l| l.ends_with("VALUES (5,7,'to be deleted'); -- deleted")),
        "{r:?}"
    );
    assert!(
        inserts
            .iter()
            .any(|l| l.ends_with("VALUES (837492636,3,'the lost order');")),
        "{r:?}"
    );
    let (q, _) = rows(
        &[fixture("shop_quad.ibd")],
        "create table quad (a smallint, b smallint, c smallint, d smallint, primary key(a,b,c,d)) row_format=redundant",
        Deleted::Exclude,
        RowFormat::Tsv,
    );
    let mut q = q;
    q.sort();
    assert_eq!(q, ["1\t2\t3\t4", "7\t3\t1\t1", "7\t3\t7\t8", "9\t9\t9\t9"]);
    let (n, _) = rows(
        &[fixture("shop_nopk.ibd")],
        "create table nopk (k int, v varchar(20)) row_format=dynamic",
        Deleted::Exclude,
        RowFormat::Tsv,
    );
    assert_eq!(n, ["42\tforty-two", "43\tforty-three"]);
}

#[test]
fn blob_off_page() {
    let (b, s) = rows(
        &[fixture("shop_blobs.ibd")],
        "create table blobs (id int primary key, b longblob) row_format=dynamic",
        Deleted::Exclude,
        RowFormat::Tsv,
    );
    assert_eq!(b.len(), 1, "{s:?}");
    assert_eq!(b[0], format!("1\t{}", "BLOBDATA".repeat(4000)));
}

/// shop_typed's leaf page (page 3) as another page number with another LSN and its CHAR value
/// changed: an older (or newer) version of the same rows on another page, as a raw device
/// holds after page splits. The full_crc32 checksum is recomputed, so the page is intact.
fn other_version(dir: &Path, lsn: u64) -> PathBuf {
    let ibd = std::fs::read(fixture("shop_typed.ibd")).unwrap();
    const S: usize = 16384;
    let mut p = ibd[3 * S..4 * S].to_vec();
    assert_eq!(u32::from_be_bytes(p[4..8].try_into().unwrap()), 3);
    p[4..8].copy_from_slice(&9u32.to_be_bytes());
    p[16..24].copy_from_slice(&lsn.to_be_bytes());
    p[S - 8..S - 4].copy_from_slice(&(lsn as u32).to_be_bytes());
    let at = p.windows(10).position(|w| w == b"abc       ").unwrap();
    p[at..at + 10].copy_from_slice(b"old       ");
    let c = dbio_innodb::checksum::full_crc32(&p);
    p[S - 4..].copy_from_slice(&c.to_be_bytes());
    let path = dir.join(format!("page9-lsn{lsn}.img"));
    std::fs::write(&path, &p).unwrap();
    path
}

#[test]
fn newest_lsn_wins_per_key_and_the_others_are_counted() {
    let tmp = tempfile::tempdir().unwrap();
    let lsn3 = {
        let ibd = std::fs::read(fixture("shop_typed.ibd")).unwrap();
        u64::from_be_bytes(ibd[3 * 16384 + 16..3 * 16384 + 24].try_into().unwrap())
    };
    // An older copy: the rows of page 3 win, both records of the copy are dropped.
    let older = other_version(tmp.path(), lsn3 - 1);
    let (r, s) = rows(
        &[fixture("shop_typed.ibd"), older],
        TYPED,
        Deleted::Include,
        RowFormat::Tsv,
    );
    assert_eq!(r.len(), 2, "{r:?}");
    assert!(r[0].ends_with("\tabc\tGrüße aus Köln"), "{r:?}");
    assert_eq!(s.duplicates_dropped, 2, "{s:?}");
    // A newer copy: its (changed) rows win.
    let newer = other_version(tmp.path(), lsn3 + 1);
    let (r, s) = rows(
        &[fixture("shop_typed.ibd"), newer],
        TYPED,
        Deleted::Include,
        RowFormat::Tsv,
    );
    assert!(r[0].ends_with("\told\tGrüße aus Köln"), "{r:?}");
    assert_eq!(s.duplicates_dropped, 2, "{s:?}");
    assert_eq!(s.rows_written, 2);
}

/// 48 copies of shop_typed's leaf page (pages 10..57, three batches of 16 pages) with the
/// keys moved by 1000 x the copy number, except every eighth copy after the first, which
/// repeats the keys of the copy before it: with the same LSN (the first page in page order
/// wins) or a newer one (it wins). The rows, their order and the summary do not depend on
/// the number of threads.
#[test]
fn threads_decode_the_same_rows_in_the_same_order() {
    use dbio_innodb::page::system_records;
    use dbio_innodb::rows::record;
    const S: usize = 16384;
    let ibd = std::fs::read(fixture("shop_typed.ibd")).unwrap();
    let leaf = &ibd[3 * S..4 * S];
    let lsn3 = u64::from_be_bytes(leaf[16..24].try_into().unwrap());
    let format = system_records(leaf).unwrap();
    let (mut seen, mut recs) = (Vec::new(), Vec::new());
    record::list(leaf, format, &mut seen, &mut recs);
    assert_eq!(recs.len(), 2);
    let mut image = Vec::new();
    let mut lsn = lsn3;
    let mut expected: Vec<(u32, String)> = Vec::new(); // (id, CHAR value) of the kept rows
    for i in 0..48usize {
        let repeat = i % 8 == 1;
        let newer = (i / 8) % 2 == 1;
        let off = if repeat { i - 1 } else { i } as u32;
        if !repeat || newer {
            lsn += 1;
        }
        let mut p = leaf.to_vec();
        p[4..8].copy_from_slice(&(10 + i as u32).to_be_bytes());
        p[16..24].copy_from_slice(&lsn.to_be_bytes());
        p[S - 8..S - 4].copy_from_slice(&(lsn as u32).to_be_bytes());
        for r in &recs {
            let o = r.origin;
            let id = u32::from_be_bytes(p[o..o + 4].try_into().unwrap()) ^ 0x8000_0000;
            p[o..o + 4].copy_from_slice(&((id + off * 1000) ^ 0x8000_0000).to_be_bytes());
        }
        let tag = format!("p{i:02}");
        let at = p.windows(10).position(|w| w == b"abc       ").unwrap();
        p[at..at + 10].copy_from_slice(format!("{tag:<10}").as_bytes());
        let c = dbio_innodb::checksum::full_crc32(&p);
        p[S - 4..].copy_from_slice(&c.to_be_bytes());
        image.extend_from_slice(&p);
        let page_rows = [(1 + off * 1000, tag), (2 + off * 1000, String::new())];
        if repeat && newer {
            expected.truncate(expected.len() - 2);
        }
        if !repeat || newer {
            expected.extend(page_rows);
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("copies.img");
    std::fs::write(&path, &image).unwrap();
    let (one, s1) = rows_threads(
        std::slice::from_ref(&path),
        TYPED,
        Deleted::Include,
        RowFormat::Tsv,
        Some(1),
    );
    assert_eq!(s1.pages_decoded, 48);
    assert_eq!(s1.records_seen, 96);
    assert_eq!(s1.duplicates_dropped, 12, "{s1:?}");
    assert_eq!(s1.rows_written, 84);
    let got: Vec<(u32, String)> = one
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let ch = if f[12].starts_with('p') { f[12] } else { "" };
            (f[0].parse().unwrap(), ch.to_string())
        })
        .collect();
    assert_eq!(got, expected);
    let one_json = rows_threads(
        std::slice::from_ref(&path),
        TYPED,
        Deleted::Include,
        RowFormat::Jsonl,
        Some(1),
    )
    .0;
    for threads in [2, 3] {
        for (format, base) in [(RowFormat::Tsv, &one), (RowFormat::Jsonl, &one_json)] {
            let (many, s) = rows_threads(
                std::slice::from_ref(&path),
                TYPED,
                Deleted::Include,
                format,
                Some(threads),
            );
            assert_eq!(&many, base, "{threads} threads, {format:?}");
            assert_eq!(
                (s.records_seen, s.rows_written, s.duplicates_dropped),
                (s1.records_seen, s1.rows_written, s1.duplicates_dropped)
            );
            assert_eq!(s.candidates, s1.candidates);
        }
    }
    // Live rows only: the deleted rows are filtered out, the same older copies dropped.
    let (live1, l1) = rows_threads(
        std::slice::from_ref(&path),
        TYPED,
        Deleted::Exclude,
        RowFormat::Tsv,
        Some(1),
    );
    let (live2, l2) = rows_threads(&[path], TYPED, Deleted::Exclude, RowFormat::Tsv, Some(2));
    assert_eq!(live1, live2);
    assert_eq!(live1.len(), 42);
    assert_eq!(
        (l1.filtered_out, l1.duplicates_dropped),
        (l2.filtered_out, l2.duplicates_dropped)
    );
}

#[test]
fn page_compressed_pages_are_inflated() {
    let (r, s) = rows(
        &[fixture("shop_packed.ibd")],
        "create table packed (id int primary key, v varchar(200)) page_compressed=1 default charset=latin1",
        Deleted::Exclude,
        RowFormat::Tsv,
    );
    assert_eq!(
        r,
        [
            format!("1\t{}", "compressible ".repeat(15)),
            "2\tpacked row two".to_string(),
            "424242\tpacked target".to_string()
        ],
        "{s:?}"
    );
}

/// The ROW_FORMAT=COMPRESSED table of the 16K server (KEY_BLOCK_SIZE=8, two rows written
/// after the table was created: both in the modification log of the empty compressed page).
#[test]
fn row_format_compressed_pages_are_decompressed() {
    let (r, s) = rows(
        &[fixture("shop_zipped.ibd")],
        "create table zipped (id int primary key, v varchar(100)) default charset=latin1",
        Deleted::Exclude,
        RowFormat::Tsv,
    );
    assert_eq!(r, ["1\tzipped row one", "777001\tzipped target"], "{s:?}");
    assert!(s.warnings.is_empty() && s.rejected.is_empty(), "{s:?}");
}

/// Damaged pages never panic: the real leaf pages of shop_typed (DYNAMIC) and shop_quad
/// (REDUNDANT) with bytes of the record area overwritten at random, split and decoded record
/// by record (each record decodes or is rejected with a reason).
#[test]
fn damaged_pages_are_rejected_not_panicked_on() {
    use dbio_innodb::page::system_records;
    use dbio_innodb::rows::record::{self, Layout, NoBlobs};
    let cases = [
        ("shop_typed.ibd", TYPED),
        (
            "shop_quad.ibd",
            "create table quad (a smallint, b smallint, c smallint, d smallint, primary key(a,b,c,d))",
        ),
    ];
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let (mut ok, mut rejected) = (0u64, 0u64);
    for (file, sql) in cases {
        let d = def::parse(sql, None, "t").unwrap();
        let layout = Layout::clustered(&d);
        let ibd = std::fs::read(fixture(file)).unwrap();
        let page = &ibd[3 * 16384..4 * 16384];
        let format = system_records(page).unwrap();
        let (mut seen, mut recs, mut fields) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..3000 {
            let mut p = page.to_vec();
            for _ in 0..1 + round % 16 {
                // Mostly the records and their headers, sometimes anywhere in the page.
                let span = if round % 5 == 0 { 16384 - 8 - 38 } else { 400 };
                let at = if round % 5 == 0 { 38 } else { 94 } + (rnd() as usize) % span;
                p[at] = rnd() as u8;
            }
            record::list(&p, format, &mut seen, &mut recs);
            for r in &recs {
                match record::split(&p, r.origin, format, &layout, &mut fields) {
                    Ok(_) => match record::decode(&p, &d, &layout, &fields, r.deleted, &NoBlobs) {
                        Ok(_) => ok += 1,
                        Err(_) => rejected += 1,
                    },
                    Err(_) => rejected += 1,
                }
            }
        }
    }
    // Both outcomes occur: the damage is real and the check is not all-or-nothing.
    assert!(ok > 0 && rejected > 0, "ok {ok} rejected {rejected}");
}

/// Every page of `sources` found by the scanner (default options, one thread): what the
/// decoding tests start from.
pub fn scan(sources: &[Source]) -> Scanned {
    let stop = AtomicBool::new(false);
    scan_sources(
        sources,
        &ScanOptions::default(),
        1,
        &stop,
        &|_, _| {},
        |_| (),
    )
    .unwrap()
}
