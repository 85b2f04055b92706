//! `dbio innodb rows --dictionary`: the table definition from the data dictionary of an
//! ibdata1 that a real MariaDB 10.11 wrote with innodb_file_per_table=OFF
//! (`testdata/innodb/ibdata1_dict_pages`, scripts/make-innodb-testdata.sh): a DROP TABLE
//! recovered, the header naming the dictionary, a wrong --table listing the tables, and the
//! live table decoded the same through --dictionary as through --table-def. The expected
//! rows are what the server's SELECT printed before the DROP (`ibdata1_dict_*.tsv`).

use crate::common::dbio;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/innodb")
        .join(name)
}

fn ibdata() -> String {
    fixture("ibdata1_dict_pages").display().to_string()
}

/// `dbio innodb rows IBDATA --dictionary IBDATA ARGS`: stdout, stderr, exit code.
fn rows(args: &[&str]) -> (Vec<u8>, String, i32) {
    let o = dbio()
        .args(["innodb", "rows", &ibdata(), "--dictionary", &ibdata()])
        .args(args)
        .output()
        .unwrap();
    (
        o.stdout,
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.code().unwrap_or(-1),
    )
}

/// Lines split into fields; `skip` header lines dropped; the server's `NULL` as dbio's `\N`.
fn tsv(b: &[u8], skip: usize) -> Vec<Vec<Vec<u8>>> {
    b.split(|&c| c == b'\n')
        .filter(|l| !l.is_empty())
        .skip(skip)
        .map(|l| {
            l.split(|&c| c == b'\t')
                .map(|f| {
                    if f == b"NULL" {
                        b"\\N".to_vec()
                    } else {
                        f.to_vec()
                    }
                })
                .collect()
        })
        .collect()
}

#[test]
fn a_dropped_table_is_recovered_through_the_ibdata1_dictionary() {
    let (out, err, code) = rows(&["--table", "shop/dropped_orders", "--format", "tsv"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("definition: data dictionary in ")
            && err.contains("table shop/dropped_orders id ")
            && err.contains(", dropped), space 0 index "),
        "{err}"
    );
    assert!(err.contains("4 row(s) written (0 deleted)"), "{err}");
    assert!(
        err.contains("dbio: warning: shop/dropped_orders: column status: an ENUM or a SET"),
        "{err}"
    );
    assert!(err.contains("column price: a DECIMAL of 5 bytes"), "{err}");
    let got = tsv(&out, 1);
    let want = tsv(
        &std::fs::read(fixture("ibdata1_dict_dropped_orders.tsv")).unwrap(),
        0,
    );
    assert_eq!(got.len(), want.len());
    // Value by value, but for the ENUM (its member's index: 'new','paid','sent') and the
    // DECIMAL (its stored bytes, checked in the SQL output below).
    for (g, w) in got.iter().zip(&want) {
        for i in [0, 1, 2, 5] {
            assert_eq!(g[i], w[i], "row {} field {i}", w[0].escape_ascii());
        }
        let members = [&b"new"[..], b"paid", b"sent"];
        let ix: usize = String::from_utf8_lossy(&g[3]).parse().unwrap();
        assert_eq!(members[ix - 1], &w[3][..]);
    }
    // With another source too: the pages of ibdata1 found for the dictionary and those of
    // the other source are put together (ibdata1 is scanned once).
    let gone = fixture("shop_gone.ibd").display().to_string();
    let (more, err, code) = rows(&["--table", "shop/dropped_orders", "--format", "tsv", &gone]);
    assert_eq!((code, &more), (0, &out), "{err}");
    assert!(!err.contains("warning: no InnoDB pages"), "{err}");
    // SQL: the header says which definition was used, that the table was dropped, and the
    // CREATE TABLE dbio made of the dictionary (with what it could not tell).
    let (out, _, code) = rows(&["--table", "shop/dropped_orders"]);
    assert_eq!(code, 0);
    let sql = String::from_utf8(out).unwrap();
    let first = sql.lines().next().unwrap();
    assert!(
        first.starts_with("-- dbio innodb rows: table `dropped_orders` decoded with the definition from data dictionary in ")
            && first.contains(", dropped; space 0 index "),
        "{first}"
    );
    assert!(
        sql.contains("(dropped), clustered index PRIMARY id "),
        "{sql}"
    );
    assert!(
        sql.contains("  `status` TINYINT UNSIGNED NOT NULL,\n  `price` BINARY(5),\n"),
        "{sql}"
    );
    assert!(
        sql.contains(") ENGINE=InnoDB ROW_FORMAT=COMPACT;\n"),
        "{sql}"
    );
    // DECIMAL(10,2) -1234.56 and 19.99 as stored.
    assert!(
        sql.contains("VALUES (837492636,3,'the lost order',2,0x7FFFFB2DC7,'2019-05-13 14:35:07');"),
        "{sql}"
    );
    assert!(
        sql.contains("VALUES (1,10,'first order',1,0x8000001363,'2024-01-02 03:04:05');"),
        "{sql}"
    );
    // JSON Lines: the header's definition says dropped too.
    let (out, _, _) = rows(&["--table", "shop/dropped_orders", "--format", "jsonl"]);
    let h: serde_json::Value =
        serde_json::from_str(String::from_utf8(out).unwrap().lines().next().unwrap()).unwrap();
    let d = h["header"]["definition"].as_str().unwrap();
    assert!(
        d.starts_with("data dictionary in ") && d.ends_with(", dropped"),
        "{d}"
    );
}

#[test]
fn the_live_table_through_the_dictionary_equals_the_create_table() {
    let (dict, err, code) = rows(&["--table", "shop/kept", "--format", "tsv"]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains(", dropped"), "{err}");
    let o = dbio()
        .args([
            "innodb",
            "rows",
            &ibdata(),
            "--format",
            "tsv",
            "--table-def",
        ])
        .arg(fixture("ibdata1_dict_kept.sql"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let (d, t) = (tsv(&dict, 0), tsv(&o.stdout, 0));
    assert_eq!(d.len(), 4, "a header line and 3 rows");
    assert_eq!(d.len(), t.len());
    let server = tsv(&std::fs::read(fixture("ibdata1_dict_kept.tsv")).unwrap(), 0);
    let names: Vec<String> = d[0]
        .iter()
        .map(|n| String::from_utf8_lossy(n).into())
        .collect();
    assert_eq!(
        names,
        t[0].iter()
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect::<Vec<_>>()
    );
    for ((dr, tr), sr) in d[1..].iter().zip(&t[1..]).zip(&server) {
        for (i, n) in names.iter().enumerate() {
            assert_eq!(
                tr[i],
                sr[i],
                "--table-def: row {} column {n}",
                sr[0].escape_ascii()
            );
            // TIME(3): the dictionary keeps 2 fraction bytes, which it prints as 4 digits.
            let want = if n == "tm" && tr[i] != b"\\N" {
                [&tr[i][..], b"0"].concat()
            } else {
                tr[i].clone()
            };
            assert_eq!(
                dr[i],
                want,
                "--dictionary: row {} column {n}",
                sr[0].escape_ascii()
            );
        }
    }
    assert!(
        err.contains("column tm: TIME with 2 fraction byte(s): printed with 4 fraction digits"),
        "{err}"
    );
}

#[test]
fn a_wrong_or_missing_table_lists_the_dictionary_tables() {
    for args in [&["--table", "shop/nope"][..], &[]] {
        let (out, err, code) = rows(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty());
        assert!(
            err.contains("shop/kept (id ") && err.contains("shop/dropped_orders (id "),
            "{err}"
        );
        assert!(err.contains(", dropped)"), "{err}");
    }
    let (_, err, _) = rows(&["--table", "shop/nope"]);
    assert!(
        err.contains("no table \"shop/nope\" in the data dictionary ("),
        "{err}"
    );
    assert!(
        err.contains("give --table-def with its CREATE TABLE then); it holds: "),
        "{err}"
    );
    // A file without a dictionary: the work fails (exit 1), naming the file.
    let o = dbio()
        .args(["innodb", "rows", "--table", "shop/orders", "--dictionary"])
        .arg(fixture("shop_orders.ibd"))
        .arg(fixture("shop_orders.ibd"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("shop_orders.ibd: no SYS_TABLES record found"),
        "{err}"
    );
    // --table-def and --dictionary together, or neither: usage errors.
    let o = dbio()
        .args([
            "innodb",
            "rows",
            &ibdata(),
            "--dictionary",
            &ibdata(),
            "--table-def",
            "x.sql",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = dbio().args(["innodb", "rows", &ibdata()]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// File-per-table: the .ibd files with the dictionary of the same server's ibdata1
/// (`ibdata1_16k_head`): the dropped `shop.gone` (its .ibd copied under FLUSH TABLES FOR
/// EXPORT before the DROP), a REDUNDANT table and one without a primary key; the rows are
/// the ones scripts/make-innodb-testdata.sh inserted.
#[test]
fn ibd_files_with_the_dictionary_of_their_ibdata1() {
    let head = fixture("ibdata1_16k_head").display().to_string();
    let run = |ibd: &str, table: &str| {
        let o = dbio()
            .args([
                "innodb",
                "rows",
                "--format",
                "tsv",
                "--dictionary",
                &head,
                "--table",
                table,
            ])
            .arg(fixture(ibd))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "{err}");
        (String::from_utf8(o.stdout).unwrap(), err)
    };
    let (out, err) = run("shop_gone.ibd", "shop/gone");
    assert_eq!(out, "id\tv\n1\tdropped row\n31337\tgone but found\n");
    assert!(
        err.contains("table shop/gone id 25, dropped), space 12 index 30"),
        "{err}"
    );
    let (out, err) = run("shop_quad.ibd", "shop/quad");
    assert_eq!(
        out, "a\tb\tc\td\n1\t2\t3\t4\n7\t3\t1\t1\n7\t3\t7\t8\n9\t9\t9\t9\n",
        "{err}"
    );
    let (out, _) = run("shop_nopk.ibd", "shop/nopk");
    assert_eq!(out, "k\tv\n42\tforty-two\n43\tforty-three\n");
}

/// The recovery the warnings point to: the CREATE TABLE with the ENUM members and the
/// DECIMAL's precision and scale given back (here the statement the script ran), with the
/// index id the --dictionary run named: every value as SELECT printed it before the DROP.
#[test]
fn the_dictionary_then_the_create_table_restores_every_value() {
    let (_, err, code) = rows(&["--table", "shop/dropped_orders", "--format", "tsv"]);
    assert_eq!(code, 0, "{err}");
    let index = err
        .split("space 0 index ")
        .nth(1)
        .and_then(|r| r.split(':').next())
        .expect("the summary names the index");
    let tmp = tempfile::tempdir().unwrap();
    let def = tmp.path().join("dropped_orders.sql");
    std::fs::write(
        &def,
        "create table dropped_orders (
  id int not null primary key, qty smallint not null, note varchar(40) character set utf8mb4,
  status enum('new','paid','sent') not null, price decimal(10,2), created datetime
) default charset=latin1 row_format=compact",
    )
    .unwrap();
    let o = dbio()
        .args([
            "innodb",
            "rows",
            &ibdata(),
            "--format",
            "tsv",
            "--index-id",
            index,
        ])
        .arg("--table-def")
        .arg(&def)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let want = tsv(
        &std::fs::read(fixture("ibdata1_dict_dropped_orders.tsv")).unwrap(),
        0,
    );
    assert_eq!(tsv(&o.stdout, 1), want);
}
