//! `dbio innodb rows` with the definition from a .frm file (MySQL 5.x, MariaDB), and
//! `dbio innodb frm`: the real sakila tablespaces of MySQL 5.6 (compact/ with .frm files of
//! MySQL 5.5.35 and the old DATETIME/TIMESTAMP formats, redundant/ with 5.6.17's), decoded
//! with no --table-def and compared by key with the server's rows (sakila/expected/T.tsv,
//! sakila 1.5 loaded into MariaDB). The copies hold sakila 0.8 data; every difference the
//! comparison finds is one listed here (see docs/innodb-frm.md).

use crate::common::dbio;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn sakila(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/innodb/mysql-real/sakila")
        .join(p)
}

/// Records of LOAD DATA text (tab, newline, backslash escapes, `\N` for NULL).
fn records(data: &[u8]) -> Vec<Vec<Option<Vec<u8>>>> {
    let mut recs = Vec::new();
    let mut fields = Vec::new();
    let mut cur = Vec::new();
    let mut null = false;
    let mut i = 0;
    while i < data.len() {
        let c = data[i];
        if c == b'\\' && i + 1 < data.len() {
            let d = data[i + 1];
            if d == b'N' && cur.is_empty() {
                null = true;
            } else {
                cur.push(match d {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'0' => 0,
                    b'r' => b'\r',
                    b'b' => 8,
                    b'Z' => 26,
                    d => d,
                });
            }
            i += 2;
            continue;
        }
        match c {
            b'\t' | b'\n' => {
                fields.push((!null).then(|| std::mem::take(&mut cur)));
                cur.clear();
                null = false;
                if c == b'\n' {
                    recs.push(std::mem::take(&mut fields));
                }
            }
            c => cur.push(c),
        }
        i += 1;
    }
    recs
}

/// Seconds of `YYYY-MM-DD hh:mm:ss` since an arbitrary origin (days from a civil calendar).
fn secs(v: &[u8]) -> i64 {
    let s = std::str::from_utf8(v).unwrap();
    let n = |a: usize, b: usize| s[a..b].parse::<i64>().unwrap();
    let (y, m, d) = (n(0, 4), n(5, 7), n(8, 10));
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let days = era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy;
    days * 86400 + n(11, 13) * 3600 + n(14, 16) * 60 + n(17, 19)
}

/// What a table's comparison with the expected rows found.
#[derive(Debug, Default, PartialEq)]
struct Diff {
    rows: usize,
    /// Columns whose values differ (TIMESTAMP columns aside), with how many rows.
    columns: BTreeMap<usize, usize>,
    /// Values that differ only by the non-ASCII letters sakila 0.8 lost.
    lost_letters: usize,
    /// expected - decoded, per TIMESTAMP value.
    ts_offsets: BTreeMap<i64, usize>,
}

fn compare(got: &[u8], expected: &[u8], key: usize, ts: &[usize]) -> Diff {
    let got = records(got);
    let exp = records(expected);
    // The decoded TSV has a header line.
    let got: BTreeMap<_, _> = got[1..]
        .iter()
        .map(|r| (r[..key].to_vec(), r.clone()))
        .collect();
    let exp: BTreeMap<_, _> = exp.iter().map(|r| (r[..key].to_vec(), r.clone())).collect();
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        exp.keys().collect::<Vec<_>>(),
        "the same keys"
    );
    let mut d = Diff {
        rows: got.len(),
        ..Diff::default()
    };
    for (k, g) in &got {
        let e = &exp[k];
        assert_eq!(g.len(), e.len(), "columns of {k:?}");
        for (j, (a, b)) in g.iter().zip(e).enumerate() {
            if ts.contains(&j) {
                let off = secs(b.as_ref().unwrap()) - secs(a.as_ref().unwrap());
                *d.ts_offsets.entry(off).or_default() += 1;
            } else if a != b {
                let ascii: Option<Vec<u8>> = b.as_ref().map(|b| {
                    String::from_utf8_lossy(b)
                        .chars()
                        .filter(char::is_ascii)
                        .collect::<String>()
                        .into_bytes()
                });
                if a.is_some() && *a == ascii {
                    d.lost_letters += 1;
                } else {
                    *d.columns.entry(j).or_default() += 1;
                }
            }
        }
    }
    d
}

/// (table, key columns, TIMESTAMP columns, rows, TIMESTAMP offsets, values with letters lost,
/// other differing columns).
type Want = (
    &'static str,
    usize,
    &'static [usize],
    usize,
    &'static [(i64, usize)],
    usize,
    &'static [(usize, usize)],
);

/// Written before the decoding from .frm existed (from the row counts of expected/ and the
/// .frm types read by dbsake), then the exact differences found: the loader's time zone
/// (+3 h), address rows re-dated in sakila 1.x, staff's 0.8 last_update and password, address
/// 571's district (0.8 'Huanuco', 1.5 'Huánuco'), and letters sakila 0.8 lost.
const WANT: &[Want] = &[
    ("actor", 1, &[3], 200, &[(10800, 200)], 0, &[]),
    ("address", 1, &[7], 603, &[], 93, &[(3, 1)]),
    ("category", 1, &[2], 16, &[(10800, 16)], 0, &[]),
    ("city", 1, &[3], 600, &[(10800, 600)], 66, &[]),
    ("country", 1, &[2], 109, &[(10800, 109)], 1, &[]),
    ("customer", 1, &[8], 599, &[(10800, 599)], 0, &[]),
    ("film", 1, &[12], 1000, &[(10800, 1000)], 0, &[]),
    ("film_actor", 2, &[2], 5462, &[(10800, 5462)], 0, &[]),
    ("film_category", 2, &[2], 1000, &[(10800, 1000)], 0, &[]),
    ("inventory", 1, &[3], 4581, &[(10800, 4581)], 0, &[]),
    ("language", 1, &[2], 6, &[(10800, 6)], 0, &[]),
    ("staff", 1, &[10], 2, &[(7200, 2)], 0, &[(9, 1)]),
    ("store", 1, &[3], 2, &[(10800, 2)], 0, &[]),
];

#[test]
fn sakila_5_6_tables_decode_from_their_frm_files() {
    for dir in ["compact", "redundant"] {
        for &(t, key, ts, rows, offsets, lost, cols) in WANT {
            let ibd = sakila(&format!("{dir}/{t}.ibd"));
            let out = dbio()
                .args(["innodb", "rows", "--format", "tsv"])
                .arg(&ibd)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{dir}/{t}: {err}");
            assert!(
                err.contains(&format!(
                    "dbio: note: table definition from {} (beside the .ibd)",
                    ibd.with_extension("frm").display()
                )),
                "{err}"
            );
            // compact/'s .frm files are MySQL 5.5's: the old formats, found in the file.
            assert_eq!(
                err.contains("old (pre-5.6) temporal format: "),
                dir == "compact",
                "{err}"
            );
            let expected = std::fs::read(sakila(&format!("expected/{t}.tsv"))).unwrap();
            let d = compare(&out.stdout, &expected, key, ts);
            let what = format!("{dir}/{t}");
            assert_eq!(d.rows, rows, "{what}");
            assert_eq!(d.lost_letters, lost, "{what}");
            assert_eq!(d.columns, cols.iter().copied().collect(), "{what}");
            if t == "address" {
                // sakila 1.x re-dated every address (2014-09-25); 0.8's are 2006-02-15.
                assert_eq!(d.ts_offsets.values().sum::<usize>(), 603, "{what}");
                assert!(
                    d.ts_offsets
                        .keys()
                        .all(|o| (271_716_000..271_717_000).contains(o)),
                    "{what}: {:?}",
                    d.ts_offsets
                );
            } else {
                assert_eq!(d.ts_offsets, offsets.iter().copied().collect(), "{what}");
            }
        }
    }
}

/// MySQL 5.0.96's .frm files and tablespaces (the same sakila 0.8 data): the same rows.
#[test]
fn sakila_5_0_tables_decode_from_their_frm_files() {
    for &(t, key, ts, rows, offsets, lost, cols) in WANT {
        if !["customer", "film", "staff"].contains(&t) {
            continue;
        }
        let out = dbio()
            .args(["innodb", "rows", "--format", "tsv"])
            .arg(sakila(&format!("5.0-frm/{t}.ibd")))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{t}: {err}");
        assert!(err.contains("old (pre-5.6) temporal format: "), "{err}");
        let expected = std::fs::read(sakila(&format!("expected/{t}.tsv"))).unwrap();
        if t == "staff" {
            // Staff 1's picture BLOB is on pages the copy never got (zero pages): the row is
            // rejected, not written with a made-up value.
            assert!(
                err.contains("1 row(s) written") && err.contains("1 rejected (blob_missing 1)"),
                "{err}"
            );
            let got = records(&out.stdout);
            assert_eq!(got.len(), 2);
            assert_eq!(got[1][0].as_deref(), Some(&b"2"[..]));
            let exp = records(&expected);
            assert_eq!(got[1][..9], exp[1][..9], "staff 2 up to the password");
            continue;
        }
        let d = compare(&out.stdout, &expected, key, ts);
        assert_eq!(d.rows, rows, "{t}");
        assert_eq!(d.lost_letters, lost, "{t}");
        assert_eq!(d.columns, cols.iter().copied().collect(), "{t}");
        assert_eq!(d.ts_offsets, offsets.iter().copied().collect(), "{t}");
    }
    let sql = dbio()
        .args(["innodb", "frm"])
        .arg(sakila("5.0-frm/payment.frm"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let sql = String::from_utf8(sql).unwrap();
    assert!(
        sql.contains("written by MySQL 5.0.96, engine InnoDB"),
        "{sql}"
    );
    assert!(
        sql.contains("  `payment_date` datetime /* 5.5 binary format */ NOT NULL,\n"),
        "{sql}"
    );
}

#[test]
fn frm_flag_and_the_printed_create_table_give_the_same_rows() {
    let ibd = sakila("compact/customer.ibd");
    let auto = dbio()
        .args(["innodb", "rows", "--format", "tsv"])
        .arg(&ibd)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let flag = dbio()
        .args(["innodb", "rows", "--format", "tsv", "--frm"])
        .arg(sakila("compact/customer.frm"))
        .arg(&ibd)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(auto, flag);
    assert!(String::from_utf8_lossy(&auto).contains("\t2006-02-14 22:04:36\t"));
    // `innodb frm` prints the CREATE TABLE with the old temporal columns marked: given back
    // as --table-def, it decodes the same rows.
    let sql = dbio()
        .args(["innodb", "frm"])
        .arg(sakila("compact/customer.frm"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let sql = String::from_utf8(sql).unwrap();
    assert!(
        sql.contains("  `create_date` datetime /* 5.5 binary format */ NOT NULL,\n"),
        "{sql}"
    );
    assert!(
        sql.contains("customer.frm: written by MySQL 5.5.35, engine InnoDB\n"),
        "{sql}"
    );
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("customer.sql");
    std::fs::write(&f, &sql).unwrap();
    let back = dbio()
        .args(["innodb", "rows", "--format", "tsv", "--table-def"])
        .arg(&f)
        .arg(&ibd)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(auto, back);
}

#[test]
fn bad_frm_files_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let ibd = sakila("compact/actor.ibd");
    let run = |frm: &Path| {
        let out = dbio()
            .args(["innodb", "rows", "--frm"])
            .arg(frm)
            .arg(&ibd)
            .output()
            .unwrap();
        assert!(out.stdout.is_empty(), "no rows");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let good = std::fs::read(sakila("compact/actor.frm")).unwrap();
    let cut = dir.path().join("cut.frm");
    std::fs::write(&cut, &good[..5000]).unwrap();
    let (code, err) = run(&cut);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("cut.frm: truncated or damaged: the form info (bytes 8192..8480) is beyond the end of the file (5000 bytes)"),
        "{err}"
    );
    let junk = dir.path().join("junk.frm");
    std::fs::write(&junk, b"CREATE TABLE t (a int)").unwrap();
    let (code, err) = run(&junk);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not a table .frm file"), "{err}");
    let (code, err) = run(&dir.path().join("missing.frm"));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("missing.frm: cannot read it"), "{err}");
    // A MyISAM table's .frm (dbsake's temporal_test, MariaDB 10.0).
    let myisam = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/innodb/frm-dbsake/temporal_test.frm");
    let (code, err) = run(&myisam);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("the table's engine is MyISAM, not InnoDB"),
        "{err}"
    );
    // Another table's .frm: no index fits, no rows.
    let (code, err) = run(&sakila("compact/film.frm"));
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("no index in the sources holds records that fit"),
        "{err}"
    );
    // No definition, no .frm beside the source and no SDI in it.
    let lone = dir.path().join("actor.ibd");
    std::fs::copy(&ibd, &lone).unwrap();
    let out = dbio().args(["innodb", "rows"]).arg(&lone).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("give --table-def FILE.sql, --frm FILE.frm (or put X.frm beside X.ibd) or --dictionary IBDATA1"));
    // Two sources with different .frm files beside them.
    let out = dbio()
        .args(["innodb", "rows"])
        .arg(&ibd)
        .arg(sakila("compact/city.ibd"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("different .frm files beside them"));
    // `innodb frm` on a view's .frm.
    let view = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/innodb/frm-dbsake/actor_info.frm");
    let out = dbio().args(["innodb", "frm"]).arg(&view).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the .frm of a VIEW"));
}
