//! `innodb rows` on the storage formats of testdata/innodb made by scripts/make-innodb-testdata.sh
//! with MariaDB 10.11: instant DROP COLUMN and reordering. The expected rows are the server's
//! SELECT output the script kept beside each tablespace (`.tsv`, NULL as `\N`), with the
//! CREATE TABLE after the last ALTER (`.sql`).

use crate::rows::{fixture, rows};
use dbio_innodb::rows::run::{Deleted, Summary};
use dbio_innodb::rows::write::RowFormat;
use std::path::PathBuf;

/// dbio's TSV rows of testdata/innodb/`name`.ibd with the definition `name`.sql.
fn decode(name: &str, paths: &[PathBuf]) -> (Vec<String>, Summary) {
    let sql = std::fs::read_to_string(fixture(&format!("{name}.sql"))).unwrap();
    rows(paths, &sql, Deleted::Exclude, RowFormat::Tsv)
}

/// The server's rows, as the script kept them.
fn server(name: &str) -> Vec<String> {
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
    let sql = std::fs::read_to_string(fixture("shop_dropcol.sql")).unwrap();
    let files = [cut];
    let d = dbio_innodb::rows::def::parse(&sql, None, "t").unwrap();
    let sources: Vec<_> = files
        .iter()
        .map(|p| dbio_innodb::recover::Source::open(p, false).unwrap())
        .collect();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let scanned = dbio_innodb::recover::scan_sources(
        &sources,
        &dbio_innodb::scan::ScanOptions::default(),
        1,
        &stop,
        &|_, _| {},
        |_| (),
    )
    .unwrap();
    let store = dbio_innodb::rows::run::PageStore::new(&scanned, &sources);
    let opts = dbio_innodb::rows::run::Options {
        def: d.clone(),
        deleted: Deleted::Exclude,
        index_id: None,
        space_id: None,
    };
    let mut w = dbio_innodb::rows::write::RowWriter::new(Vec::new(), RowFormat::Tsv, &d);
    let r = dbio_innodb::rows::run::run(&store, &opts, &stop, &mut w);
    let text = match r {
        Ok(s) => format!("{:?}", s.warnings),
        Err(e) => e.to_string(),
    };
    assert!(
        text.contains(
            "instant DROP or reorder of columns but the metadata record or its BLOB page"
        ),
        "{text}"
    );
}
