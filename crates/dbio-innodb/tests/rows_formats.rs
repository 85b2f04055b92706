//! `innodb rows` on the storage formats of testdata/innodb made by scripts/make-innodb-testdata.sh
//! with MariaDB 10.11: instant DROP COLUMN and reordering. The expected rows are the server's
//! SELECT output the script kept beside each tablespace (`.tsv`, NULL as `\N`), with the
//! CREATE TABLE after the last ALTER (`.sql`).

use crate::rows::{fixture, scan};
use dbio_innodb::recover::Source;
use dbio_innodb::rows::def::{self, TableDef};
use dbio_innodb::rows::run::{self, Deleted, Options, PageStore, RowsError};
use dbio_innodb::rows::temporal;
use dbio_innodb::rows::write::{RowFormat, RowWriter};
use dbio_schema::rows::RowsSummary as Summary;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// dbio's TSV rows (header line dropped) of `paths` with the definition `d`.
fn run_def(paths: &[PathBuf], d: &TableDef) -> Result<(Vec<String>, Summary), RowsError> {
    let sources: Vec<Source> = paths
        .iter()
        .map(|p| Source::open(p, false).unwrap())
        .collect();
    let scanned = scan(&sources);
    let store = PageStore::new(&scanned, &sources);
    let opts = Options {
        def: d.clone(),
        deleted: Deleted::Exclude,
        index_id: None,
        space_id: None,
    };
    let mut w = RowWriter::new(Vec::new(), RowFormat::Tsv, d);
    let s = run::run(&store, &opts, &AtomicBool::new(false), &mut w)?;
    let text = String::from_utf8(w.into_inner()).unwrap();
    Ok((text.lines().skip(1).map(str::to_string).collect(), s))
}

/// The definition testdata/innodb/`name`.sql as the command reads it: columns marked
/// `/* mariadb-5.3 */` in the old temporal formats.
fn definition(name: &str) -> (String, TableDef) {
    let sql = std::fs::read_to_string(fixture(&format!("{name}.sql"))).unwrap();
    let mut d = def::parse(&sql, None, name).unwrap();
    temporal::apply(&mut d, &temporal::marked_columns(&sql), false);
    (sql, d)
}

/// dbio's TSV rows of testdata/innodb/`name`.ibd with the definition `name`.sql.
fn decode(name: &str, paths: &[PathBuf]) -> (Vec<String>, Summary) {
    run_def(paths, &definition(name).1).unwrap()
}

/// The server's rows, as the script kept them (in id order).
pub(crate) fn server(name: &str) -> Vec<String> {
    std::fs::read_to_string(fixture(&format!("{name}.tsv")))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Compares row by row and value by value, naming the first value that differs.
fn assert_same(got: &[String], want: &[String], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: rows: {got:#?}");
    for (g, w) in got.iter().zip(want) {
        for (i, (a, b)) in g.split('\t').zip(w.split('\t')).enumerate() {
            assert_eq!(a, b, "{what}: row {w:?}: value {i}");
        }
        assert_eq!(
            g.split('\t').count(),
            w.split('\t').count(),
            "{what}: {g:?}"
        );
    }
}

/// Rows written before an instant DROP COLUMN (with the dropped value still in them), after
/// it, after an instant ADD COLUMN (older rows take its default from the metadata record)
/// and after a reorder (MODIFY ... AFTER): the field order comes from the metadata BLOB.
#[test]
fn instant_drop_and_reorder_columns() {
    let (got, s) = decode("shop_dropcol", &[fixture("shop_dropcol.ibd")]);
    assert_same(&got, &server("shop_dropcol"), "shop_dropcol");
    assert!(s.rejected.is_empty() && s.warnings.is_empty(), "{s:?}");
}

/// Without the BLOB page that holds the field order (only the first 4 pages: the root page
/// and its metadata record), the run says so instead of writing rows in the wrong order.
#[test]
fn instant_drop_without_its_metadata_blob_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let ibd = std::fs::read(fixture("shop_dropcol.ibd")).unwrap();
    let cut = tmp.path().join("cut.ibd");
    std::fs::write(&cut, &ibd[..4 * 16384]).unwrap();
    let e = run_def(&[cut], &definition("shop_dropcol").1).unwrap_err();
    assert!(
        e.to_string().contains(
            "instant DROP or reorder of columns but the metadata record or its BLOB page"
        ),
        "{e}"
    );
}

/// DATETIME/TIME/TIMESTAMP in the formats before MySQL 5.6 (MariaDB 5.3's with fractions),
/// fsp 0 to 6, negative TIME, zero dates, NULLs: in DYNAMIC (fixed lengths) and REDUNDANT
/// (stored lengths), from the columns SHOW CREATE TABLE marks `/* mariadb-5.3 */`.
#[test]
fn old_temporal_formats() {
    for name in ["shop_oldtime", "shop_oldtime_r"] {
        let (got, s) = decode(name, &[fixture(&format!("{name}.ibd"))]);
        assert_same(&got, &server(name), name);
        assert!(s.rejected.is_empty(), "{s:?}");
        assert!(
            s.definition
                .contains("old (pre-5.6) temporal format: dt, tm, ts, dt3"),
            "{s:?}"
        );
    }
}

/// Without the marks the definition reads the new formats: the records do not fit; with every temporal column switched (`--old-temporal`)
/// the rows are the server's.
#[test]
fn old_temporal_without_marks_needs_the_flag() {
    let (sql, _) = definition("shop_oldtime");
    let plain = sql.replace(" /* mariadb-5.3 */", "");
    assert!(temporal::marked_columns(&plain).is_empty());
    let mut d = def::parse(&plain, None, "plain").unwrap();
    let paths = [fixture("shop_oldtime.ibd")];
    let e = run_def(&paths, &d).unwrap_err();
    assert!(e.to_string().contains("no index in the sources"), "{e}");
    assert_eq!(temporal::apply(&mut d, &[], true).len(), 10);
    let (got, _) = run_def(&paths, &d).unwrap();
    assert_same(&got, &server("shop_oldtime"), "--old-temporal");
}

/// MariaDB page_compressed with each provider plugin's algorithm (full_crc32 tablespaces:
/// the algorithm is recognised from the stream), and bzip2 in a tablespace older than
/// full_crc32 (`old`: page type 34354, no checksum, found by the scan only because it
/// decompresses): the FSP header page and the compressed leaf page of each table,
/// decompressed and decoded to the server's rows.
#[test]
fn page_compressed_with_every_algorithm() {
    for (a, ptype) in [
        ("lz4", 0x80),
        ("lzo", 0x80),
        ("lzma", 0x80),
        ("bzip2", 0x80),
        ("snappy", 0x80),
        ("old", 0x86),
    ] {
        let name = format!("shop_packed_{a}");
        let file = fixture(&format!("{name}.pages"));
        let slot = std::fs::read(&file).unwrap();
        assert_eq!(slot[16384 + 24], ptype, "{a}: page 3 is stored compressed");
        let (got, s) = decode(&name, &[file]);
        assert_same(&got, &server(&name), &name);
        assert!(s.rejected.is_empty() && s.warnings.is_empty(), "{a}: {s:?}");
    }
}

/// A compressed stream with damaged bytes (and its checksum recomputed, so the scanner takes
/// the page as intact) does not decompress into a page: it is skipped and named, never
/// decoded from garbage.
#[test]
fn damaged_page_compressed_pages_are_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    for a in ["lz4", "lzo", "lzma", "bzip2", "snappy"] {
        let name = format!("shop_packed_{a}");
        let mut b = std::fs::read(fixture(&format!("{name}.pages"))).unwrap();
        for i in 0..8 {
            b[16384 + 40 + i * 7] ^= 0x5A;
        }
        let size = (b[16384 + 25] as usize) << 8;
        let c = dbio_innodb::checksum::crc32c(&b[16384..16384 + size - 4]);
        b[16384 + size - 4..16384 + size].copy_from_slice(&c.to_be_bytes());
        let bad = tmp.path().join(format!("{a}.pages"));
        std::fs::write(&bad, &b).unwrap();
        match run_def(&[bad], &definition(&name).1) {
            Err(e) => assert!(e.to_string().contains("no leaf INDEX pages"), "{a}: {e}"),
            Ok((rows, s)) => panic!("{a}: rows from a damaged page: {rows:?} {s:?}"),
        }
    }
}

/// Every single-byte change of each real compressed page: decompression returns a page or
/// nothing, and never panics.
#[test]
fn page_compressed_byte_flips_never_panic() {
    use dbio_innodb::rows::inflate::page_compressed;
    for a in ["lz4", "lzo", "lzma", "bzip2", "snappy"] {
        let b = std::fs::read(fixture(&format!("shop_packed_{a}.pages"))).unwrap();
        let slot = &b[16384..];
        let good = page_compressed(slot, 16384).expect(a);
        let size = (slot[25] as usize) << 8;
        let mut broken = 0;
        for at in 26..size {
            let mut s = slot.to_vec();
            s[at] ^= 0xA5;
            match page_compressed(&s, 16384) {
                Some(p) if p == good => {}
                Some(_) | None => broken += 1,
            }
        }
        assert!(broken > 0, "{a}: no change was noticed");
    }
}
