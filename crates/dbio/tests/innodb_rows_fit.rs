//! `dbio innodb rows` with a definition that is not the table's: a column declared wider than
//! it was, a definition of a thousand columns, a run forced onto an index whose records do not
//! fit, and the real MySQL 8.0 sakila.film_actor, whose secondary index holds records that
//! decode as rows of the definition unless each record is checked against its neighbours.

use crate::common::dbio;
use crate::innodb_rows::fixture;
use std::path::{Path, PathBuf};

/// `sql` written to `dir/name`.
fn def(dir: &Path, name: &str, sql: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, sql).unwrap();
    p
}

/// Runs `innodb rows --format tsv` on shop_orders.ibd: (exit code, stdout, stderr).
fn orders(def: &Path, extra: &[&str]) -> (i32, String, String) {
    let o = dbio()
        .args(["innodb", "rows", "--format", "tsv"])
        .arg(fixture("shop_orders.ibd"))
        .arg("--table-def")
        .arg(def)
        .args(extra)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// shop.orders is (id INT, qty SMALLINT, note VARCHAR(40)). With `qty INT` every record's
/// lengths stay inside the page, and each used to decode into a row of garbage (qty 681577,
/// note "rst order\0") with "0 rejected" and exit 0; now each record runs two bytes into the
/// header of the next one, all four are rejected as `overlap`, and the error names the change
/// that makes them fit.
#[test]
fn a_column_declared_wider_than_it_was_is_rejected_and_named() {
    let tmp = tempfile::tempdir().unwrap();
    let wide = def(
        tmp.path(),
        "orders.sql",
        "create table orders (id int primary key, qty int, note varchar(40)) row_format=compact",
    );
    let (code, out, err) = orders(&wide, &["--include-deleted"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("space 5 index 23: 0 of 4 records checked fit, rejected: overlap 4"),
        "{err}"
    );
    assert!(err.contains("`qty` SMALLINT instead of INT"), "{err}");
    assert!(err.contains("SHOW CREATE TABLE"), "{err}");
    // The right definition still gives the four rows.
    let right = def(
        tmp.path(),
        "right.sql",
        "create table orders (id int primary key, qty smallint, note varchar(40)) row_format=compact",
    );
    let (code, out, err) = orders(&right, &["--include-deleted"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "id\tqty\tnote\tdbio_deleted\n1\t10\tfirst order\t0\n5\t7\tto be deleted\t1\n6\t1\tafter it\t0\n837492636\t3\tthe lost order\t0\n"
    );
    assert!(err.contains("4 row(s) written (1 deleted)"), "{err}");
    assert!(err.contains(", 0 rejected\n"), "{err}");
}

/// A definition of 1,003 columns against records of 3: one record used to fit (a garbage row
/// of -2147483648s, exit 0); its NULL bitmap and values now reach over its neighbours.
#[test]
fn a_thousand_column_definition_gives_no_row() {
    let tmp = tempfile::tempdir().unwrap();
    let cols: Vec<String> = (0..1000).map(|i| format!("c{i} int")).collect();
    let wide = def(
        tmp.path(),
        "wide.sql",
        &format!(
            "create table orders (id int primary key, qty smallint, note varchar(40), {}) row_format=compact",
            cols.join(", ")
        ),
    );
    let (code, out, err) = orders(&wide, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("0 of 1 records checked fit, rejected: length 3, overlap 1"),
        "{err}"
    );
}

/// `--index-id` decodes an index whatever fits: when most of its records are rejected the
/// run ends with exit 1 and says why (the summary too, in `misfit`), after the summary line.
#[test]
fn a_run_that_rejects_most_records_fails_and_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let wide = def(
        tmp.path(),
        "orders.sql",
        "create table orders (id int primary key, qty int, note varchar(40)) row_format=compact",
    );
    let summary = tmp.path().join("summary.json");
    let (code, out, err) = orders(
        &wide,
        &["--index-id", "23", "--summary", summary.to_str().unwrap()],
    );
    assert_eq!(code, 1, "{err}");
    assert_eq!(out, "id\tqty\tnote\n", "no row");
    assert!(err.contains("0 row(s) written (0 deleted)"), "{err}");
    assert!(
        err.contains("dbio: 4 of the 4 records of space 5 index 23 do not fit the definition of orders (rejected: overlap 4); the records fit the definition with "),
        "{err}"
    );
    assert!(err.contains("`qty` SMALLINT instead of INT"), "{err}");
    let s: serde_json::Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    assert!(
        s["misfit"]
            .as_str()
            .is_some_and(|m| m.starts_with("4 of the 4 records")),
        "{s}"
    );
    assert_eq!(s["rejected"], serde_json::json!({"overlap": 4}), "{s}");
}

/// MySQL 8.0 sakila.film_actor (a real tablespace from innodb_ruby's test data): its secondary
/// index idx_fk_film_id (film_id, actor_id) has records that split as rows of (actor_id,
/// film_id, last_update) and decode, and it used to be chosen: 5462 rows with film and actor
/// swapped and last_update made of the next record's bytes (1974-10-14 15:06:40, ...). Those
/// records run into their neighbours; the clustered index is chosen and gives the 5462 rows of
/// sakila-data.sql, each with last_update 2006-02-15 05:05:03.
#[test]
fn mysql80_sakila_film_actor_decodes_its_clustered_index() {
    let o = dbio()
        .args(["innodb", "rows", "--format", "tsv"])
        .arg(fixture("mysql80_sakila_film_actor.ibd"))
        .arg("--table-def")
        .arg(fixture("mysql80_sakila_film_actor.sql"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("space 9 index 171: 11 leaf page(s)"), "{err}");
    let out = String::from_utf8_lossy(&o.stdout);
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(rows.len(), 5462);
    assert!(
        rows.iter().all(|r| r.ends_with("\t2006-02-15 05:05:03")),
        "{:?}",
        rows.iter().find(|r| !r.ends_with("\t2006-02-15 05:05:03"))
    );
    // sakila-data.sql's first rows, in key order.
    assert_eq!(
        rows[..3],
        [
            "1\t1\t2006-02-15 05:05:03",
            "1\t23\t2006-02-15 05:05:03",
            "1\t25\t2006-02-15 05:05:03"
        ]
    );
    let keys: std::collections::HashSet<&str> = rows
        .iter()
        .map(|r| r.rsplit_once('\t').unwrap().0)
        .collect();
    assert_eq!(keys.len(), 5462);
}
