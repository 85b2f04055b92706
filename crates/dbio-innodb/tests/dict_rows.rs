//! Table definitions from the InnoDB data dictionary: `testdata/innodb/ibdata1_dict_pages`
//! holds the dictionary and the pages of two tables a real MariaDB 10.11 kept in ibdata1
//! (innodb_file_per_table=OFF): `shop.kept`, live, and `shop.dropped_orders`, dropped after
//! its rows were written (scripts/make-innodb-testdata.sh). `ibdata1_dict_*.tsv` are what
//! the server's SELECT printed before the DROP; `ibdata1_dict_kept.sql` its SHOW CREATE TABLE.

use crate::rows::scan;
use dbio_innodb::dict::Dictionary;
use dbio_innodb::recover::{self, Source};
use dbio_innodb::rows::def::{self, ColType};
use dbio_innodb::rows::dict_def::{self, DictDefError};
use dbio_innodb::rows::run::{self, Deleted, Options, PageStore};
use dbio_innodb::rows::value::decimal;
use dbio_innodb::rows::write::{RowFormat, RowWriter};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/innodb")
        .join(name)
}

/// The dictionary as `innodb rows --dictionary` reads it (scanner, plan, SYS_* pages), and
/// the rows of the named table decoded with it, as TSV lines without the header.
fn dictionary_rows(table: &str) -> (Dictionary, dict_def::DictDef, Vec<Vec<u8>>) {
    let sources = [Source::open(&fixture("ibdata1_dict_pages"), false).unwrap()];
    let scanned = scan(&sources);
    let plan = recover::plan(&scanned.found, &["ibdata1".to_string()]);
    let dict = recover::read_dictionary(&plan, &scanned.found, &sources).unwrap();
    let d = dict_def::table_def(&dict, Some(table), "ibdata1").unwrap();
    let store = PageStore::new(&scanned, &sources);
    let opts = Options {
        def: d.def.clone(),
        deleted: Deleted::Exclude,
        index_id: Some(d.index.id),
        space_id: Some(d.index.space),
    };
    let mut w = RowWriter::new(Vec::new(), RowFormat::Tsv, &d.def);
    let s = run::run(&store, &opts, &AtomicBool::new(false), &mut w).unwrap();
    assert!(s.rejected.is_empty(), "{s:?}");
    let out = w.into_inner();
    let lines = out
        .split(|&b| b == b'\n')
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    (dict, d, lines)
}

/// The server's lines (`mariadb -B -N`: NULL as `NULL`), split into fields.
fn server_rows(name: &str) -> Vec<Vec<Vec<u8>>> {
    let text = std::fs::read(fixture(name)).unwrap();
    text.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| l.split(|&b| b == b'\t').map(<[u8]>::to_vec).collect())
        .collect()
}

/// TSV bytes with LOAD DATA's escapes (`\0`, `\\`, `\n`, `\t`) undone.
fn unescape(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut it = b.iter();
    while let Some(&c) = it.next() {
        if c != b'\\' {
            out.push(c);
            continue;
        }
        out.push(match it.next() {
            Some(b'0') => 0,
            Some(b'n') => b'\n',
            Some(b't') => b'\t',
            Some(&o) => o,
            None => b'\\',
        });
    }
    out
}

fn fields(line: &[u8]) -> Vec<Vec<u8>> {
    line.split(|&b| b == b'\t').map(<[u8]>::to_vec).collect()
}

#[test]
fn the_live_table_from_the_dictionary_is_the_create_table() {
    let (dict, d, lines) = dictionary_rows("shop/kept");
    assert!(!d.table.dropped);
    assert_eq!(d.row_format, "DYNAMIC");
    assert_eq!(d.index.name, "PRIMARY");
    assert_eq!(
        d.index.space, 0,
        "innodb_file_per_table=OFF: the table is in ibdata1"
    );
    assert!(d
        .def
        .source
        .starts_with("data dictionary in ibdata1, table shop/kept id "));
    assert!(!d.def.source.contains("dropped"));
    // Every column as SHOW CREATE TABLE gives it, but TIME(3): the dictionary keeps its
    // 2 fraction bytes, which TIME(4) also takes.
    let sql = std::fs::read_to_string(fixture("ibdata1_dict_kept.sql")).unwrap();
    let want = def::parse(&sql, None, "kept.sql").unwrap();
    assert_eq!(d.def.primary_key, want.primary_key);
    assert_eq!(d.def.columns.len(), want.columns.len());
    for (g, w) in d.def.columns.iter().zip(&want.columns) {
        assert_eq!((&g.name, g.nullable), (&w.name, w.nullable));
        if g.name == "tm" {
            assert_eq!(
                (&g.ty, &w.ty),
                (&ColType::Time { fsp: 4 }, &ColType::Time { fsp: 3 })
            );
        } else {
            assert_eq!(g.ty, w.ty, "column {}", g.name);
        }
    }
    assert!(d
        .warnings
        .iter()
        .any(|w| w.starts_with("column tm: TIME with 2 fraction byte(s)")));
    // The rows are what SELECT printed (the BLOB of row 2 followed through BLOB pages of
    // ibdata1), TIME(3) with one trailing zero more.
    let want = server_rows("ibdata1_dict_kept.tsv");
    assert_eq!(lines.len(), want.len());
    let names: Vec<&str> = d.def.columns.iter().map(|c| c.name.as_str()).collect();
    for (g, w) in lines.iter().zip(&want) {
        for ((a, b), n) in fields(g).iter().zip(w).zip(&names) {
            let b = if b == b"NULL" {
                b"\\N".to_vec()
            } else {
                b.clone()
            };
            let b = if *n == "tm" && b != b"\\N" {
                [&b[..], b"0"].concat()
            } else {
                b
            };
            assert_eq!(a, &b, "row {} column {n}", String::from_utf8_lossy(&w[0]));
        }
    }
    // The dictionary names the dropped table too.
    let list = dict_def::list_tables(&dict);
    assert!(list.contains("shop/kept (id "), "{list}");
    assert!(
        list.contains(", dropped), ") || list.ends_with(", dropped)"),
        "{list}"
    );
}

#[test]
fn a_dropped_table_comes_back_from_its_delete_marked_dictionary_rows() {
    let (dict, d, lines) = dictionary_rows("shop/dropped_orders");
    assert!(
        d.table.dropped,
        "SYS_TABLES row delete-marked by DROP TABLE"
    );
    assert!(dict.indexes[&d.index.id].dropped);
    assert!(d.def.source.ends_with(", dropped"), "{}", d.def.source);
    assert_eq!(d.row_format, "COMPACT");
    let names: Vec<&str> = d.def.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["id", "qty", "note", "status", "price", "created"]);
    assert!(!d.def.columns[1].nullable && d.def.columns[2].nullable);
    // ENUM and DECIMAL: warned about, by name.
    assert!(d
        .warnings
        .iter()
        .any(|w| w.starts_with("column status: an ENUM or a SET")));
    assert!(d
        .warnings
        .iter()
        .any(|w| w.starts_with("column price: a DECIMAL of 5 bytes")));
    // Value by value what SELECT printed before the DROP: the ENUM as its member's index,
    // the DECIMAL as its stored bytes (which decode to the server's DECIMAL(10,2) value).
    let members = [&b"new"[..], b"paid", b"sent"];
    let want = server_rows("ibdata1_dict_dropped_orders.tsv");
    assert_eq!(lines.len(), want.len());
    for (g, w) in lines.iter().zip(&want) {
        let g = fields(g);
        for (i, n) in names.iter().enumerate() {
            let (a, b) = (&g[i], &w[i]);
            match *n {
                "status" => {
                    let ix: usize = String::from_utf8_lossy(a).parse().unwrap();
                    assert_eq!(members[ix - 1], &b[..], "row {}", g[0].escape_ascii());
                }
                "price" if b != b"NULL" => {
                    assert_eq!(decimal(&unescape(a), 10, 2).unwrap().as_bytes(), &b[..]);
                }
                _ => {
                    let b = if b == b"NULL" { &b"\\N"[..] } else { &b[..] };
                    assert_eq!(&a[..], b, "row {} column {n}", g[0].escape_ascii());
                }
            }
        }
    }
}

#[test]
fn a_missing_or_unknown_table_lists_the_tables() {
    let (dict, _, _) = dictionary_rows("shop/kept");
    let e = dict_def::table_def(&dict, Some("shop/nope"), "ibdata1").unwrap_err();
    assert!(matches!(e, DictDefError::NoTable(..)));
    let msg = e.to_string();
    assert!(
        msg.contains("shop/kept (id ") && msg.contains("shop/dropped_orders (id "),
        "{msg}"
    );
    let e = dict_def::table_def(&dict, None, "ibdata1").unwrap_err();
    assert!(matches!(e, DictDefError::TableNeeded(_)), "{e}");
    // Case-insensitive when nothing matches exactly.
    assert_eq!(
        dict_def::table_def(&dict, Some("SHOP/KEPT"), "x")
            .unwrap()
            .def
            .name,
        "kept"
    );
    let e = dict_def::table_def(&Dictionary::default(), Some("a/b"), "x").unwrap_err();
    assert!(matches!(e, DictDefError::Empty), "{e}");
}

/// The same server after purge (`ibdata1_dict_purged_head`, the first 13 pages): MariaDB
/// 10.11 zeroes the data of the dictionary records purge frees, so the dropped table's
/// description is gone, and the zeroed records on the free lists are not read as tables or
/// columns. The live table is still described.
#[test]
fn after_purge_mariadb_leaves_nothing_of_the_dropped_table() {
    let d = std::fs::read(fixture("ibdata1_dict_purged_head")).unwrap();
    let mut dict = Dictionary::default();
    for p in d.chunks(16384) {
        dict.add_page(p);
    }
    assert!(dict.tables_named("shop/dropped_orders").is_empty());
    assert!(dict.tables.values().all(|t| t.id != 0 && !t.dropped));
    assert!(dict.columns.keys().all(|&(t, _)| t != 0));
    assert!(dict.fields.keys().all(|&(i, _)| i != 0));
    let kept = dict_def::table_def(&dict, Some("shop/kept"), "head").unwrap();
    let (_, before, _) = dictionary_rows("shop/kept");
    assert_eq!(kept.def.columns, before.def.columns);
    assert_eq!(kept.index.id, before.index.id);
    let e = dict_def::table_def(&dict, Some("shop/dropped_orders"), "head").unwrap_err();
    assert!(matches!(e, DictDefError::NoTable(..)), "{e}");
}
