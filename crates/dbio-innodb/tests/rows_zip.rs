//! `innodb rows` on ROW_FORMAT=COMPRESSED tablespaces of testdata/innodb made by
//! scripts/make-innodb-testdata.sh with MariaDB 10.11 (shop_zip8, shop_zip4, shop_zip1: one
//! per KEY_BLOCK_SIZE). The expected rows are the server's SELECT output kept beside each
//! tablespace: `.tsv` after the DELETE, `_deleted.tsv` the deleted rows before it.

use crate::rows::{fixture, scan};
use crate::rows_formats::server;
use dbio_innodb::page::be16;
use dbio_innodb::recover::Source;
use dbio_innodb::rows::def::{self, TableDef};
use dbio_innodb::rows::record::{self, Layout};
use dbio_innodb::rows::run::{self, Deleted, Options, PageStore, ZipStats};
use dbio_innodb::rows::write::{RowFormat, RowWriter};
use dbio_innodb::rows::zip;
use dbio_schema::rows::RowsSummary as Summary;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// dbio's TSV rows (sorted by the id in the first column) of `paths` with `d`, the summary
/// and what the compressed pages held.
fn decode(paths: &[PathBuf], d: &TableDef, deleted: Deleted) -> (Vec<String>, Summary, ZipStats) {
    let sources: Vec<Source> = paths
        .iter()
        .map(|p| Source::open(p, false).unwrap())
        .collect();
    let scanned = scan(&sources);
    let store = PageStore::new(&scanned, &sources);
    let opts = Options {
        def: d.clone(),
        deleted,
        index_id: None,
        space_id: None,
    };
    let mut w = RowWriter::new(Vec::new(), RowFormat::Tsv, d);
    let s = run::run(&store, &opts, &AtomicBool::new(false), &mut w).unwrap();
    let text = String::from_utf8(w.into_inner()).unwrap();
    let mut rows: Vec<String> = text.lines().skip(1).map(str::to_string).collect();
    rows.sort_by_key(|l| l.split('\t').next().unwrap().parse::<i64>().unwrap());
    (rows, s, store.zip_stats().clone())
}

fn definition(name: &str) -> TableDef {
    let sql = std::fs::read_to_string(fixture(&format!("{name}.sql"))).unwrap();
    def::parse(&sql, None, name).unwrap()
}

/// Compares row by row and value by value, naming the first value that differs.
fn assert_same(got: &[String], want: &[String], what: &str) {
    let ids = |v: &[String]| -> Vec<String> {
        v.iter()
            .map(|l| l.split('\t').next().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids(got), ids(want), "{what}: the ids of the rows");
    for (g, w) in got.iter().zip(want) {
        assert_eq!(
            g.split('\t').count(),
            w.split('\t').count(),
            "{what}: {g:?}"
        );
        for (i, (a, b)) in g.split('\t').zip(w.split('\t')).enumerate() {
            assert_eq!(a, b, "{what}: row {}: value {i}", &w[..w.len().min(40)]);
        }
    }
}

/// Every KEY_BLOCK_SIZE of the fixtures: the rows written before the table was rebuilt
/// (compressed pages, empty modification log), the rows inserted and updated after it (only
/// in the modification log), the edge values of each type, NULLs, a TEXT of 40000 bytes on a
/// ZBLOB/ZBLOB2 chain and one of 12000 bytes written after the compression (KEY_BLOCK_SIZE
/// 8), and the three delete-marked rows (`--deleted-only`), value by value.
#[test]
fn row_format_compressed_every_key_block_size() {
    for k in [8, 4, 1] {
        let name = format!("shop_zip{k}");
        let d = definition(&name);
        let paths = [fixture(&format!("{name}.ibd"))];
        let (got, s, z) = decode(&paths, &d, Deleted::Exclude);
        assert_same(&got, &server(&name), &name);
        assert!(s.rejected.is_empty() && s.warnings.is_empty(), "{s:?}");
        // Rows 5 and the last were inserted after the page was compressed, row 12 updated:
        // the modification log is where they are (with the smaller blocks, an insert that
        // did not fit recompressed its page and emptied the log).
        let min_log = if k == 8 { 3 } else { 1 };
        assert!(z.log_records >= min_log, "{name}: {z:?}");
        assert!(z.stream_records >= 20, "{name}: {z:?}");
        assert!(z.rejected.is_empty(), "{name}: {z:?}");
        let (del, s, _) = decode(&paths, &d, Deleted::Only);
        assert_same(&del, &server(&format!("{name}_deleted")), &name);
        assert_eq!(s.deleted_rows_written, 3, "{s:?}");
        let (all, _, _) = decode(&paths, &d, Deleted::Include);
        assert_eq!(all.len(), got.len() + 3);
    }
    let (got, _, _) = decode(
        &[fixture("shop_zip8.ibd")],
        &definition("shop_zip8"),
        Deleted::Exclude,
    );
    let tx = |id: &str| {
        got.iter()
            .find(|l| l.starts_with(&format!("{id}\t")))
            .unwrap()
            .rsplit('\t')
            .next()
            .unwrap()
            .len()
    };
    assert_eq!((tx("3"), tx("5")), (40000, 12032));
}

/// A compressed leaf page whose zlib stream is damaged (its checksum made valid again, so
/// the scan keeps it) is rejected with its reason counted in a warning; the rows of the
/// other leaf page still come out, each the server's.
#[test]
fn damaged_compressed_page_is_counted_not_decoded() {
    let tmp = tempfile::tempdir().unwrap();
    let mut ibd = std::fs::read(fixture("shop_zip4.ibd")).unwrap();
    let s = 4096;
    let leaf: Vec<usize> = (3..ibd.len() / s)
        .filter(|&i| be16(&ibd, i * s + 24) == 17855 && be16(&ibd, i * s + 64) == 0)
        .collect();
    assert_eq!(leaf.len(), 2);
    let p = &mut ibd[leaf[0] * s..leaf[0] * s + s];
    for b in &mut p[400..420] {
        *b ^= 0x5A;
    }
    let sum = dbio_innodb::checksum::zip_crc32(p);
    p[..4].copy_from_slice(&sum.to_be_bytes());
    let path = tmp.path().join("damaged.ibd");
    std::fs::write(&path, &ibd).unwrap();
    let (got, sm, z) = decode(&[path], &definition("shop_zip4"), Deleted::Exclude);
    assert_eq!(z.rejected.values().sum::<u64>(), 1, "{z:?}");
    assert!(
        sm.warnings
            .iter()
            .any(|w| w.starts_with("1 ROW_FORMAT=COMPRESSED leaf page(s) not decompressed")),
        "{sm:?}"
    );
    let want = server("shop_zip4");
    assert!(!got.is_empty() && got.len() < want.len(), "{got:?}");
    for g in &got {
        assert!(want.contains(g), "{g}");
    }
}

/// The real compressed leaf pages with bytes overwritten at random: each is decompressed or
/// rejected, never a panic, and what decompresses is split and decoded record by record.
#[test]
fn damaged_compressed_pages_never_panic() {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for (name, s) in [("shop_zip8", 8192), ("shop_zip1", 1024)] {
        let ibd = std::fs::read(fixture(&format!("{name}.ibd"))).unwrap();
        let d = definition(name);
        let layout = Layout::clustered(&d);
        let leaf = (3..ibd.len() / s)
            .find(|&i| be16(&ibd, i * s + 24) == 17855 && be16(&ibd, i * s + 64) == 0)
            .unwrap();
        let page = &ibd[leaf * s..leaf * s + s];
        assert!(zip::decompress(page).is_ok());
        let (mut ok, mut rejected) = (0, 0);
        for round in 0..400 {
            let mut p = page.to_vec();
            for _ in 0..1 + round % 4 {
                let at = rnd() as usize % s;
                p[at] = rnd() as u8;
            }
            match zip::decompress(&p) {
                Ok((u, _)) => {
                    ok += 1;
                    let (mut seen, mut recs, mut fields) = (Vec::new(), Vec::new(), Vec::new());
                    record::list(
                        &u,
                        dbio_innodb::page::RowFormat::Compact,
                        &mut seen,
                        &mut recs,
                    );
                    for r in &recs {
                        if record::split(
                            &u,
                            r.origin,
                            dbio_innodb::page::RowFormat::Compact,
                            &layout,
                            &mut fields,
                        )
                        .is_ok()
                        {
                            let _ = record::decode(
                                &u,
                                &d,
                                &layout,
                                &fields,
                                r.deleted,
                                &record::NoBlobs,
                            );
                        }
                    }
                }
                Err(_) => rejected += 1,
            }
        }
        assert!(
            ok > 0 && rejected > 0,
            "{name}: {ok} decompressed, {rejected} rejected"
        );
    }
}
