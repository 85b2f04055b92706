//! `dbio innodb rows` after purge, on the real MariaDB of the test environment: rows deleted
//! with no read view open, purge left to finish (MariaDB 10.6+ then zeroes the records' data
//! and keeps their headers on the page's free list), the .ibd copied. The purged records give
//! no rows (not rows of zero values) and are counted as `zeroed`; the copy taken before the
//! DELETE, read with the newer one as an older copy of the same pages, gives the deleted rows
//! back with the values SELECT printed before the DELETE.

use crate::innodb_rows::{client, copy_ibd, rows_out, server_rows, sql, tsv_lines, write_create};
use std::time::{Duration, Instant};

/// `SET GLOBAL innodb_max_purge_lag_wait=0` (MariaDB 10.5+): returns once the history list is
/// empty, i.e. purge has processed every DELETE. A read view open elsewhere holds purge back:
/// after 120 s the wait is killed and the test fails saying so.
fn wait_for_purge() {
    let mut child = client()
        .args(["-e", "set global innodb_max_purge_lag_wait=0"])
        .spawn()
        .expect("run mariadb");
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(120) {
        if let Some(st) = child.try_wait().unwrap() {
            assert!(
                st.success(),
                "set global innodb_max_purge_lag_wait=0 failed"
            );
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    for id in sql("select id from information_schema.processlist where info like 'set global innodb_max_purge_lag_wait%'").lines() {
        sql(&format!("kill query {id}"));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("purge did not finish in 120 s: a transaction or read view open on the server holds it back (information_schema.innodb_trx)");
}

const IDS_DELETED: [u32; 5] = [5, 6, 17, 23, 31];

fn purged_in(format: &str) {
    let db = format!("rows_purge_{format}");
    sql(&format!(
        "drop database if exists {db}; create database {db};
         create table {db}.t (id int not null primary key, v varchar(100)) row_format={format} default charset=utf8mb4;
         insert into {db}.t select seq, concat('row ', seq, ' ', repeat('x', seq % 7)) from {db}.seq_1_to_40;"
    ));
    let before = server_rows(&db, "t", "1");
    assert_eq!(before.len(), 40);
    let tmp = tempfile::tempdir().unwrap();
    let old = tmp.path().join("before.ibd");
    copy_ibd(&db, "t", &old);
    // Not the last row inserted: purge would shrink the heap instead of freeing it.
    let list = IDS_DELETED.map(|i| i.to_string()).join(",");
    sql(&format!("delete from {db}.t where id in ({list})"));
    wait_for_purge();
    let new = tmp.path().join("t.ibd");
    copy_ibd(&db, "t", &new);
    let def = write_create(&db, "t", tmp.path());
    let (new_s, old_s, def_s) = (
        new.to_str().unwrap(),
        old.to_str().unwrap(),
        def.to_str().unwrap(),
    );
    let summary = tmp.path().join("summary.json");
    let sum_s = summary.to_str().unwrap();

    // The purged records: no row, five records rejected as zeroed.
    let (del, err) = rows_out(&[
        new_s,
        "--table-def",
        def_s,
        "--format",
        "tsv",
        "--deleted-only",
        "--summary",
        sum_s,
    ]);
    assert_eq!(
        tsv_lines(&del, 1),
        Vec::<Vec<Vec<u8>>>::new(),
        "{format}: {err}"
    );
    assert!(
        err.contains("40 record(s); 0 row(s) written (0 deleted), 35 filtered out by the deleted filter, 0 older version(s) dropped, 5 rejected (zeroed 5)"),
        "{format}: {err}"
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(s["rejected"], serde_json::json!({"zeroed": 5}), "{s}");
    // The live rows are what SELECT prints now.
    let (live, err) = rows_out(&[new_s, "--table-def", def_s, "--format", "tsv"]);
    assert_eq!(
        tsv_lines(&live, 1),
        server_rows(&db, "t", "1"),
        "{format}: {err}"
    );
    assert_eq!(tsv_lines(&live, 1).len(), 35);

    // With the copy from before the DELETE as an older copy of the same page: the deleted
    // rows come back, flagged deleted, with the values SELECT printed before the DELETE.
    let (del, err) = rows_out(&[
        new_s,
        old_s,
        "--table-def",
        def_s,
        "--format",
        "tsv",
        "--deleted-only",
    ]);
    let want: Vec<Vec<Vec<u8>>> = before
        .iter()
        .filter(|r| IDS_DELETED.iter().any(|i| r[0] == i.to_string().as_bytes()))
        .cloned()
        .collect();
    assert_eq!(tsv_lines(&del, 1), want, "{format}: {err}");
    assert!(
        err.contains("1 leaf page(s) and 1 older copy(ies) of them, 80 record(s); 5 row(s) written (5 deleted), 35 filtered out by the deleted filter, 35 older version(s) dropped, 5 rejected (zeroed 5)"),
        "{format}: {err}"
    );
    let (all, err) = rows_out(&[
        new_s,
        old_s,
        "--table-def",
        def_s,
        "--format",
        "tsv",
        "--include-deleted",
    ]);
    // --include-deleted TSV: every row, the last column saying which were deleted
    let flagged: Vec<Vec<Vec<u8>>> = before
        .iter()
        .map(|r| {
            let deleted = IDS_DELETED.iter().any(|i| r[0] == i.to_string().as_bytes());
            let mut r = r.clone();
            r.push(if deleted {
                b"1".to_vec()
            } else {
                b"0".to_vec()
            });
            r
        })
        .collect();
    assert_eq!(tsv_lines(&all, 1), flagged, "{format}: {err}");
    sql(&format!("drop database {db}"));
}

#[test]
#[ignore = "needs a MariaDB server (DBIO_TEST_MYSQL, default 127.0.0.1:3306) whose datadir this user can read and on which no read view holds purge back: scripts/setup-test-env.sh as root"]
fn purged_rows_dynamic() {
    purged_in("dynamic");
}

#[test]
#[ignore = "needs a MariaDB server (DBIO_TEST_MYSQL, default 127.0.0.1:3306) whose datadir this user can read and on which no read view holds purge back: scripts/setup-test-env.sh as root"]
fn purged_rows_compact() {
    purged_in("compact");
}

#[test]
#[ignore = "needs a MariaDB server (DBIO_TEST_MYSQL, default 127.0.0.1:3306) whose datadir this user can read and on which no read view holds purge back: scripts/setup-test-env.sh as root"]
fn purged_rows_redundant() {
    purged_in("redundant");
}
