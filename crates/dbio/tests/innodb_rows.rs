//! `dbio innodb rows`: tablespaces made by the real MariaDB in the test environment (a table
//! with every type, in each row format, with rows deleted and a BLOB longer than a page),
//! decoded and compared value by value with what the server's SELECT prints; the SQL output
//! loaded back into the server and compared with CHECKSUM TABLE. Also the committed fixtures
//! read through a PAGES_DIR written by `innodb pages` and from an image with the pages at odd
//! offsets, and garbage refused.

use crate::common::dbio;
use std::path::{Path, PathBuf};
use std::process::Stdio;

pub(crate) fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/innodb")
        .join(name)
}

/// host, port, user of DBIO_TEST_MYSQL (default mysql://root@127.0.0.1:3306/test).
fn server() -> (String, String, String) {
    let url = std::env::var("DBIO_TEST_MYSQL")
        .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".to_string());
    let rest = url.trim_start_matches("mysql://");
    let (user, hostport) = rest.split_once('@').unwrap_or(("root", rest));
    let user = user.split(':').next().unwrap_or("root");
    let hostport = hostport.split('/').next().unwrap_or("127.0.0.1:3306");
    let (host, port) = hostport.split_once(':').unwrap_or((hostport, "3306"));
    (host.to_string(), port.to_string(), user.to_string())
}

pub(crate) fn client() -> std::process::Command {
    let (host, port, user) = server();
    let mut c = std::process::Command::new("mariadb");
    c.args([
        "-h",
        &host,
        "-P",
        &port,
        "-u",
        &user,
        "--default-character-set=utf8mb4",
        "-B",
        "-N",
    ]);
    c
}

/// Runs SQL through the real client; its batch output (tab-separated, NULL as `NULL`,
/// `\0 \t \n \\` escaped), as bytes.
fn sql_bytes(stmts: &str) -> Vec<u8> {
    let o = client().args(["-e", stmts]).output().expect("run mariadb");
    assert!(
        o.status.success(),
        "{stmts}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

pub(crate) fn sql(stmts: &str) -> String {
    String::from_utf8_lossy(&sql_bytes(stmts)).into_owned()
}

/// Lines of TSV bytes, fields split; `skip` header lines dropped; sorted by the first field.
pub(crate) fn tsv_lines(b: &[u8], skip: usize) -> Vec<Vec<Vec<u8>>> {
    let mut v: Vec<Vec<Vec<u8>>> = b
        .split(|&c| c == b'\n')
        .filter(|l| !l.is_empty())
        .skip(skip)
        .map(|l| l.split(|&c| c == b'\t').map(<[u8]>::to_vec).collect())
        .collect();
    v.sort_by_key(|l| String::from_utf8_lossy(&l[0]).parse::<i64>().unwrap());
    v
}

/// Compares rows field by field, naming the first field that differs.
fn assert_rows_eq(got: &[Vec<Vec<u8>>], want: &[Vec<Vec<u8>>], names: &[String], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: row count");
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g.len(), w.len(), "{what}: field count");
        for (i, (a, b)) in g.iter().zip(w).enumerate() {
            assert!(
                a == b,
                "{what}: row {} column {}: dbio {:?} server {:?}",
                String::from_utf8_lossy(&g[0]),
                names.get(i).map_or("?", |s| s.as_str()),
                String::from_utf8_lossy(a),
                String::from_utf8_lossy(b)
            );
        }
    }
}

fn sql_file(db: &str, file: &Path) {
    let o = client()
        .arg(db)
        .stdin(std::fs::File::open(file).unwrap())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "loading {}: {}",
        file.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

const COLUMNS: &str = "
 id int not null primary key,
 ti tinyint, tu tinyint unsigned, si smallint, su smallint unsigned, mi mediumint, mu mediumint unsigned,
 i int, iu int unsigned, bi bigint, bu bigint unsigned,
 d1 decimal(10,2), d2 decimal(30,10), d3 decimal(5,0) unsigned, f float, db double, fz float(7,3),
 b1 bit(1), b13 bit(13), b64 bit(64), y year,
 d date, dt datetime, dt3 datetime(3), dt6 datetime(6), ts timestamp(2) null, tm time, tm1 time(1), tm3 time(3), tm6 time(6),
 c10 char(10) character set latin1, cu char(5) character set utf8mb3, c4 char(5) character set utf8mb4,
 vc varchar(100) character set latin1, vu varchar(300) character set utf8mb4,
 bn binary(4), vb varbinary(20), e enum('a','b','c'), s set('x','y','z'),
 tx text, bl blob, js json,
 dt1 datetime(1), dt2 datetime(2), dt4 datetime(4), dt5 datetime(5), tm2 time(2), tm4 time(4), tm5 time(5),
 ts0 timestamp(0) null, ts1 timestamp(1) null, ts3 timestamp(3) null, ts4 timestamp(4) null,
 ts5 timestamp(5) null, ts6 timestamp(6) null, v3 varchar(40) character set utf8mb3";

const ROWS: &str = "
(1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808, 18446744073709551615,
 -12345678.91, -12345678901234567890.0123456789, 99999, 3.14159, -2.718281828459045, 1234.567,
 b'1', b'1010101010101', b'1111111111111111111111111111111111111111111111111111111111111111', 2155,
 '1000-01-01', '9999-12-31 23:59:59', '2019-05-13 14:35:07.123', '2019-05-13 14:35:07.000001', '2038-01-19 03:14:07.99',
 '-838:59:59', '-00:00:00.5', '-12:34:56.789', '-01:02:03.000004',
 'abc', 'Grüß', '€😀', 'latin1 Köln €', 'utf8mb4 😀 Grüße', 0x00010203, 0xDEADBEEF, 'c', 'x,z', 'some text', 0x000102FF, '{\"a\": [1, 2.5, \"x\"]}',
 '9999-12-31 23:59:59.999999', '2019-05-13 14:35:07.999999', '2019-05-13 14:35:07.999999', '1000-01-01 00:00:00.999999',
 '-838:59:59.999999', '-12:34:56.999999', '838:59:59.999999', '2038-01-19 03:14:07.999999', '2038-01-19 03:14:07.999999',
 '2038-01-19 03:14:07.999999', '2038-01-19 03:14:07.999999', '2038-01-19 03:14:07.999999', '2038-01-19 03:14:07.999999', 'Grüße € ✓'),
(2, 127, 0, 32767, 0, 8388607, 0, 2147483647, 0, 9223372036854775807, 0,
 0, 0.0000000001, 0, -0.5, 1e300, -0.001,
 b'0', b'0', b'0', 1901, '2024-02-29', '0000-00-00 00:00:00', '1970-01-01 00:00:00.5', '2000-01-01 00:00:00.999999', '1970-01-01 00:00:01',
 '838:59:59', '00:00:00.1', '23:59:59.999', '00:00:00.000001',
 '', '', '', '', '', 0x61, '', 'a', '', '', '', '[]',
 '1970-01-01 00:00:00.000001', '2000-01-01 00:00:00.010001', '2000-01-01 00:00:00.000101', '2000-01-01 00:00:00.000011',
 '-00:00:00.010001', '-00:00:00.000001', '00:00:00.000011', '1970-01-01 00:00:01.000001', '1970-01-01 00:00:01.000001',
 '1970-01-01 00:00:01.001001', '1970-01-01 00:00:01.000101', '1970-01-01 00:00:01.000011', '1970-01-01 00:00:01.000001', ''),
(3, -1, 1, -1, 1, -100000, 100000, -1, 1, -1, 1, 1234.56, -0.5, 5, 1e-10, 123456789.125, 0,
 NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, '00:00:00', '-00:00:01.0', NULL, '-00:00:00.000001',
 'tab\there', 'x', 'y', 'quote\\'s \\\\ back', 'nl\\nline', NULL, 0x5C00275C, NULL, 'x,y,z', NULL, NULL, NULL,
 '2019-05-13 14:35:07.5', '2019-05-13 14:35:07.05', '2019-05-13 14:35:07.0005', '2019-05-13 14:35:07.00005',
 '-00:00:01.01', '-838:59:59.9999', '-00:00:00.00001', '2000-01-01 00:00:00', '2000-01-01 00:00:00.1',
 '2000-01-01 00:00:00.123', '2000-01-01 00:00:00.1234', '2000-01-01 00:00:00.12345', '2000-01-01 00:00:00.123456', 'Köln'),
(4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
(6, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0.01, 1, 1, 1e15, 1e14, 1, b'1', b'1111111111111', b'1', 1999,
 '2000-02-29', '2000-01-01 00:00:00', '2000-01-01 00:00:00.001', '2000-01-01 00:00:00.100000', '2000-01-01 00:00:00.01',
 '-00:00:00', '-838:59:59.0', '-838:59:59.000', '-838:59:59.000000', 'x', 'ä', 'ä', 'ÿ', repeat('ä', 200), 0xFFFFFFFF,
 0x00, 'b', 'y', repeat('Grüße ', 3000), unhex(repeat('00FF7F80', 6000)), concat('[', repeat('1,', 9000), '1]'),
 '2000-01-01 00:00:00.999999', NULL, '1000-01-01 00:00:00.0000', '9999-12-31 23:59:59.99999', '00:00:00.99', '-00:00:00.9999',
 NULL, NULL, '2038-01-19 03:14:07.9', '1970-01-01 00:00:01.999', NULL, '2000-02-29 12:00:00.00001', '2000-02-29 12:00:00.999999',
 repeat('€', 40))";

/// The datadir of the server, readable by this process (the tests run as root).
fn datadir() -> PathBuf {
    PathBuf::from(sql("select @@datadir").trim())
}

/// A consistent copy of db/table's .ibd (FLUSH TABLES ... FOR EXPORT), taken inside one
/// client session so the lock holds while the file is copied.
pub(crate) fn copy_ibd(db: &str, table: &str, to: &Path) {
    let src = datadir().join(db).join(format!("{table}.ibd"));
    sql(&format!(
        "use {db}; flush tables {table} for export; system cp {} {}; unlock tables;",
        src.display(),
        to.display()
    ));
    assert!(
        to.metadata().map(|m| m.len() > 0).unwrap_or(false),
        "copy of {}",
        src.display()
    );
}

/// The server's rows (NULL as `\N`, as dbio and LOAD DATA write it), sorted by id.
pub(crate) fn server_rows(db: &str, table: &str, cond: &str) -> Vec<Vec<Vec<u8>>> {
    let out = sql_bytes(&format!(
        "set time_zone='+00:00'; select * from {db}.{table} where {cond} order by id"
    ));
    let mut rows = tsv_lines(&out, 0);
    for r in &mut rows {
        for f in r.iter_mut() {
            if f == b"NULL" {
                *f = b"\\N".to_vec();
            }
        }
    }
    rows
}

pub(crate) fn rows_out(args: &[&str]) -> (Vec<u8>, String) {
    let o = dbio().args(["innodb", "rows"]).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{args:?}: {err}");
    (o.stdout, err)
}

/// Holds a read view open from before the DELETE (purge then keeps the delete-marked rows)
/// until dropped.
struct ReadView(std::process::Child);

impl ReadView {
    /// Returns once the server shows the snapshot's session in its `SELECT SLEEP`, so the
    /// snapshot is open (a fixed wait lost the race on a loaded CI machine: purge removed
    /// the delete-marked row before the snapshot began).
    fn open() -> ReadView {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let tag = format!(
            "dbio_view_{}_{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let child = client()
            .args([
                "-e",
                &format!("start transaction with consistent snapshot; select sleep(120) as {tag}"),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let view = ReadView(child);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let n = sql(&format!(
                "select count(*) from information_schema.processlist where info like '%{tag}%' and info not like '%processlist%'"
            ));
            if n.trim() == "1" {
                return view;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the read view's session never showed in the processlist"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

impl Drop for ReadView {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Deletes the rows of `{db}.alltypes` matching `cond` while a read view keeps them
/// delete-marked, copies the .ibd and writes the CREATE TABLE: (the directory holding both,
/// the .ibd, the definition, the column names in order).
fn delete_then_copy(db: &str, cond: &str) -> (tempfile::TempDir, PathBuf, PathBuf, Vec<String>) {
    let view = ReadView::open();
    sql(&format!("delete from {db}.alltypes where {cond}"));
    let tmp = tempfile::tempdir().unwrap();
    let ibd = tmp.path().join("alltypes.ibd");
    copy_ibd(db, "alltypes", &ibd);
    drop(view);
    let def = write_create(db, "alltypes", tmp.path());
    let names = sql(&format!(
        "select column_name from information_schema.columns where table_schema='{db}' and table_name='alltypes' order by ordinal_position"
    ))
    .lines()
    .map(str::to_string)
    .collect();
    (tmp, ibd, def, names)
}

fn every_type_in(format: &str) {
    let db = format!("rows_live_{format}");
    let load = format!("rows_live_{format}_load");
    sql(&format!(
        "drop database if exists {db}; drop database if exists {load}; create database {db}; create database {load};
         create table {db}.alltypes ({COLUMNS}, key (i), key (vu(20), ti)) default charset=utf8mb4 row_format={format};
         set time_zone='+00:00'; insert into {db}.alltypes values {ROWS};"
    ));
    let before_delete = server_rows(&db, "alltypes", "1");
    let (tmp, ibd, def, names) = delete_then_copy(&db, "id in (3, 6)");
    let ibd_s = ibd.to_str().unwrap();
    let def_s = def.to_str().unwrap();
    // Live rows: what the server prints now.
    let (tsv, err) = rows_out(&[ibd_s, "--table-def", def_s, "--format", "tsv"]);
    assert_rows_eq(
        &tsv_lines(&tsv, 1),
        &server_rows(&db, "alltypes", "1"),
        &names,
        format,
    );
    assert!(err.contains("3 row(s) written (0 deleted)"), "{err}");
    assert!(err.contains("0 rejected"), "{err}");
    // The two secondary indexes are tried and not taken, without a warning.
    assert!(!err.contains("warning"), "{err}");
    // Deleted rows: what the server printed before the DELETE.
    let (del, err) = rows_out(&[
        ibd_s,
        "--table-def",
        def_s,
        "--format",
        "tsv",
        "--deleted-only",
    ]);
    let expect: Vec<Vec<Vec<u8>>> = before_delete
        .iter()
        .filter(|l| l[0] == b"3" || l[0] == b"6")
        .cloned()
        .collect();
    assert!(err.contains("2 row(s) written (2 deleted)"), "{err}");
    assert_rows_eq(&tsv_lines(&del, 1), &expect, &names, "deleted rows");

    // The SQL output loads into the server and gives the same table checksum.
    let out = tmp.path().join("alltypes-rows.sql");
    rows_out(&[ibd_s, "--table-def", def_s, "-o", out.to_str().unwrap()]);
    sql_file(&load, &out);
    let sum = |d: &str| {
        sql(&format!("checksum table {d}.alltypes"))
            .split('\t')
            .nth(1)
            .unwrap()
            .trim()
            .to_string()
    };
    assert_eq!(
        sum(&load),
        sum(&db),
        "{format}: CHECKSUM TABLE of the reloaded rows"
    );
    // And the TSV output loads with the statements dbio prints, run as printed in a session
    // whose time zone is not UTC (their SET time_zone makes the TIMESTAMPs right).
    let tsv_file = tmp.path().join("alltypes.tsv");
    let (_, err) = rows_out(&[
        ibd_s,
        "--table-def",
        def_s,
        "--format",
        "tsv",
        "-o",
        tsv_file.to_str().unwrap(),
    ]);
    load_printed(&load, &err);
    assert_eq!(
        sum(&load),
        sum(&db),
        "{format}: CHECKSUM TABLE after LOAD DATA"
    );
    // --include-deleted: the TSV says which rows are deleted in its last column, and the
    // printed LOAD DATA still loads it into the table: the rows before the DELETE.
    let (_, err) = rows_out(&[
        ibd_s,
        "--table-def",
        def_s,
        "--format",
        "tsv",
        "--include-deleted",
        "-o",
        tsv_file.to_str().unwrap(),
    ]);
    assert!(err.contains("5 row(s) written (2 deleted)"), "{err}");
    let text = std::fs::read(&tsv_file).unwrap();
    let lines: Vec<&[u8]> = text
        .split(|&c| c == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let header = String::from_utf8_lossy(lines[0]);
    assert!(header.ends_with("\tv3\tdbio_deleted"), "{header}");
    for l in &lines[1..] {
        let f: Vec<&[u8]> = l.split(|&c| c == b'\t').collect();
        assert_eq!(f.len(), names.len() + 1, "{}", String::from_utf8_lossy(l));
        let deleted: &[u8] = if f[0] == b"3" || f[0] == b"6" {
            b"1"
        } else {
            b"0"
        };
        assert_eq!(f[names.len()], deleted, "{}", String::from_utf8_lossy(l));
    }
    load_printed(&load, &err);
    assert_rows_eq(
        &server_rows(&load, "alltypes", "1"),
        &before_delete,
        &names,
        "--include-deleted TSV loaded with the printed LOAD DATA",
    );

    // JSON Lines: a header naming the definition, then one object per row.
    let (jl, _) = rows_out(&[ibd_s, "--table-def", def_s, "--format", "jsonl"]);
    let lines: Vec<serde_json::Value> = String::from_utf8(jl)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["header"]["definition"], def_s);
    assert_eq!(lines.len(), 4);
    let r1 = lines.iter().find(|l| l["row"]["id"] == 1).unwrap();
    assert_eq!(r1["row"]["mi"], -8388608);
    assert_eq!(r1["row"]["bu"], serde_json::json!(18446744073709551615u64));
    assert_eq!(r1["row"]["d2"], "-12345678901234567890.0123456789");
    assert_eq!(r1["row"]["tm6"], "-01:02:03.000004");
    assert_eq!(r1["row"]["bn"], "0x00010203");
    // Numbers, FLOAT and DOUBLE (as strings), DECIMAL, dates and times: the server's text.
    let server = server_rows(&db, "alltypes", "1");
    for col in [
        "ti", "tu", "si", "su", "mi", "mu", "i", "iu", "bi", "bu", "d1", "d2", "d3", "f", "db",
        "fz", "y", "d", "dt", "dt3", "dt6", "ts", "tm", "tm1", "tm3", "tm6", "dt1", "dt2", "dt4",
        "dt5", "tm2", "tm4", "tm5", "ts0", "ts1", "ts3", "ts4", "ts5", "ts6", "v3",
    ] {
        let at = names.iter().position(|n| n == col).unwrap();
        for want in &server {
            let id: i64 = String::from_utf8_lossy(&want[0]).parse().unwrap();
            let row = lines.iter().find(|l| l["row"]["id"] == id).unwrap();
            let got = match &row["row"][col] {
                serde_json::Value::Null => "\\N".to_string(),
                serde_json::Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            assert_eq!(
                got,
                String::from_utf8_lossy(&want[at]),
                "{format}: JSON Lines row {id} column {col}"
            );
            if ["f", "db", "fz"].contains(&col) && got != "\\N" {
                assert!(row["row"][col].is_string(), "{col}: {row}");
            }
        }
    }
    sql(&format!("drop database {db}; drop database {load}"));
}

/// Runs the statements `innodb rows --format tsv` printed after "load it with: " (in
/// `stderr`) as printed, in database `db`, after TRUNCATE TABLE, in a session whose time
/// zone is +05:00 (the server's own may be UTC, which would hide a missing SET time_zone).
fn load_printed(db: &str, stderr: &str) {
    let printed = stderr
        .lines()
        .find_map(|l| l.strip_prefix("dbio: load it with: "))
        .expect("LOAD DATA statement");
    let table = printed
        .split("INTO TABLE ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .unwrap();
    let o = client()
        .args([
            "--local-infile=1",
            db,
            "--init-command=SET time_zone='+05:00'",
            "-e",
        ])
        .arg(format!(
            "select @@time_zone; truncate table {table}; {printed}"
        ))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{printed}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).lines().next(),
        Some("+05:00")
    );
}

#[test]
#[ignore = "needs a MariaDB server (DBIO_TEST_MYSQL, default 127.0.0.1:3306) whose datadir this user can read: scripts/setup-test-env.sh as root"]
fn every_type_dynamic() {
    every_type_in("dynamic");
}

#[test]
#[ignore = "needs a MariaDB server (DBIO_TEST_MYSQL, default 127.0.0.1:3306) whose datadir this user can read: scripts/setup-test-env.sh as root"]
fn every_type_compact() {
    every_type_in("compact");
}

#[test]
#[ignore = "needs a MariaDB server (DBIO_TEST_MYSQL, default 127.0.0.1:3306) whose datadir this user can read: scripts/setup-test-env.sh as root"]
fn every_type_redundant() {
    every_type_in("redundant");
}

// ---------------------------------------------------------------- committed fixtures

/// The CREATE TABLE that scripts/make-innodb-testdata.sh ran for shop.typed (its server's
/// default charset: latin1).
const TYPED: &str = "create table typed (
  id int primary key,
  ti tinyint, si smallint, mi mediumint, bi bigint, iu int unsigned,
  d date, dt datetime, dt6 datetime(6), ts timestamp null, tm time,
  dec1 decimal(10,2), ch char(10), vc varchar(64)
) row_format=dynamic default charset=latin1;";

/// The row the script inserted and kept (TIMESTAMP in the script server's zone, UTC).
const TYPED_ROW: &str = "1\t-5\t7\t-100000\t9000000000000000001\t4000000000\t2019-05-13\t2019-05-13 14:35:07\t2019-05-13 14:35:07.123456\t2019-05-13 12:00:00\t-12:34:56\t1234.56\tabc\tGrüße aus Köln";

pub(crate) fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut v = Vec::with_capacity(n + 8);
    while v.len() < n {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        v.extend_from_slice(&x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
    }
    v.truncate(n);
    v
}

fn typed_def(dir: &Path) -> PathBuf {
    let p = dir.join("typed.sql");
    std::fs::write(&p, TYPED).unwrap();
    p
}

fn tsv_text(args: &[&str]) -> (String, String) {
    let (out, err) = rows_out(args);
    (String::from_utf8(out).unwrap(), err)
}

/// A new temporary directory on /dev/shm when there (memory, and another device than the
/// fixtures, so the same-device refusal of innodb pages does not apply), else in /tmp.
pub(crate) fn shm_tempdir(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(if Path::new("/dev/shm").is_dir() {
            "/dev/shm"
        } else {
            "/tmp"
        })
        .unwrap()
}

/// `innodb pages` of `sources` written to a new PAGES_DIR, on /dev/shm when there (so the
/// same-device refusal of innodb pages does not apply); the directory lives as long as the
/// returned TempDir.
pub(crate) fn pages_dir_of(prefix: &str, sources: &[&Path]) -> (tempfile::TempDir, PathBuf) {
    let out = shm_tempdir(prefix);
    let pages_dir = out.path().join("pages");
    dbio()
        .args(["innodb", "pages", "--allow-same-device", "--output-dir"])
        .arg(&pages_dir)
        .args(sources)
        .assert()
        .success();
    (out, pages_dir)
}

#[test]
fn rows_from_a_pages_dir_written_by_innodb_pages() {
    let tmp = tempfile::tempdir().unwrap();
    let def = typed_def(tmp.path());
    let (_out, pages_dir) = pages_dir_of(
        "dbio-rows-",
        &[&fixture("shop_typed.ibd"), &fixture("shop_orders.ibd")],
    );
    let (tsv, err) = tsv_text(&[
        pages_dir.to_str().unwrap(),
        "--table-def",
        def.to_str().unwrap(),
        "--format",
        "tsv",
    ]);
    assert_eq!(tsv.lines().nth(1), Some(TYPED_ROW), "{err}");
    assert_eq!(tsv.lines().count(), 2, "{tsv}");
    // The orders pages are there too but do not fit the definition.
    assert!(err.contains("space 7 index 25"), "{err}");
}

/// ROW_FORMAT=COMPRESSED: testdata's shop_zip8 (KEY_BLOCK_SIZE=8, a TEXT on ZBLOB pages)
/// read from its .ibd, and shop_zip4 and shop_zip1 (KEY_BLOCK_SIZE=4 and 1) from a PAGES_DIR
/// that `innodb pages` wrote from all three: the server's rows, value by value, and the
/// deleted ones with `--deleted-only`.
#[test]
fn rows_of_compressed_tables_from_an_ibd_and_a_pages_dir() {
    let names: Vec<String> = (0..15).map(|i| format!("column {i}")).collect();
    let want = |f: &str| tsv_lines(&std::fs::read(fixture(f)).unwrap(), 0);
    let def = |k: u32| fixture(&format!("shop_zip{k}.sql"));
    let ibd = fixture("shop_zip8.ibd");
    let (tsv, err) = rows_out(&[
        ibd.to_str().unwrap(),
        "--table-def",
        def(8).to_str().unwrap(),
        "--format",
        "tsv",
    ]);
    assert_rows_eq(&tsv_lines(&tsv, 1), &want("shop_zip8.tsv"), &names, "zip8");
    assert!(
        err.contains("0 rejected") && !err.contains("warning"),
        "{err}"
    );
    let zips = [8, 4, 1].map(|k| fixture(&format!("shop_zip{k}.ibd")));
    let (_out, pages_dir) = pages_dir_of("dbio-rows-zip-", &zips.each_ref().map(|p| p.as_path()));
    // The three tables have the same columns: --space-id picks one (43: shop_zip4, 45:
    // shop_zip1; testdata/README.md).
    for (k, space) in [(4, "43"), (1, "45")] {
        let def_k = def(k);
        let args = [
            pages_dir.to_str().unwrap(),
            "--table-def",
            def_k.to_str().unwrap(),
            "--format",
            "tsv",
            "--space-id",
            space,
        ];
        let (tsv, err) = rows_out(&args);
        let what = format!("zip{k} from the pages dir");
        assert_rows_eq(
            &tsv_lines(&tsv, 1),
            &want(&format!("shop_zip{k}.tsv")),
            &names,
            &what,
        );
        assert!(err.contains(&format!("space {space} index")), "{err}");
        assert!(err.contains("0 rejected"), "{err}");
        let (del, err) = rows_out(&[&args[..], &["--deleted-only"]].concat());
        assert!(err.contains("3 row(s) written (3 deleted)"), "{err}");
        assert_rows_eq(
            &tsv_lines(&del, 1),
            &want(&format!("shop_zip{k}_deleted.tsv")),
            &names,
            &what,
        );
    }
}

#[test]
fn rows_from_pages_scattered_at_odd_offsets_in_an_image() {
    let tmp = tempfile::tempdir().unwrap();
    let def = typed_def(tmp.path());
    let ibd = std::fs::read(fixture("shop_typed.ibd")).unwrap();
    // Random data, then the tablespace at an odd multiple of 512 bytes, then random data.
    let mut img = random_bytes(7 * 512, 3);
    img.extend_from_slice(&ibd);
    img.extend(random_bytes(1 << 20, 4));
    let path = tmp.path().join("disk.img");
    std::fs::write(&path, &img).unwrap();
    let (tsv, err) = tsv_text(&[
        path.to_str().unwrap(),
        "--table-def",
        def.to_str().unwrap(),
        "--format",
        "tsv",
        "--include-deleted",
    ]);
    let body: Vec<&str> = tsv.lines().skip(1).collect();
    assert_eq!(body.len(), 2, "{tsv}\n{err}");
    // --include-deleted: the last column says which row is deleted.
    assert_eq!(body[0], format!("{TYPED_ROW}\t0"));
    assert!(
        body[1].starts_with("2\t5\t8\t100000\t-9000000000000000001\t") && body[1].ends_with("\t1"),
        "{tsv}"
    );
    assert!(err.contains("2 row(s) written (1 deleted)"), "{err}");
}

#[test]
fn garbage_and_a_wrong_definition_give_no_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let def = typed_def(tmp.path());
    let noise = tmp.path().join("noise.img");
    std::fs::write(&noise, random_bytes(4 << 20, 9)).unwrap();
    let o = dbio()
        .args(["innodb", "rows"])
        .arg(&noise)
        .arg("--table-def")
        .arg(&def)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no index in the sources holds records that fit"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
    // shop.orders' records (INT, SMALLINT, VARCHAR) against the typed definition: every
    // record rejected, by reason.
    let o = dbio()
        .args(["innodb", "rows"])
        .arg(fixture("shop_orders.ibd"))
        .arg("--table-def")
        .arg(&def)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("0 of 4 records checked fit, rejected: range 4"),
        "{err}"
    );
}

/// A definition with fewer fields than the records of a table that had an instant DROP
/// (shop.dropcol's root page says 7 core fields; packed_snappy's definition gives 4): a warning
/// that names both counts, and the records are checked against the definition as written,
/// never a panic (it used to index past the definition's fields).
#[test]
fn a_definition_shorter_than_the_instant_core_fields_is_a_warning_not_a_panic() {
    let o = dbio()
        .args(["innodb", "rows"])
        .arg(fixture("shop_dropcol.ibd"))
        .arg("--table-def")
        .arg(fixture("shop_packed_snappy.sql"))
        .args(["--format", "tsv"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(matches!(o.status.code(), Some(0 | 1)), "{err}");
    assert!(
        err.contains("its root page says its records have 7 fields before any instant ADD, but the definition gives the index 4"),
        "{err}"
    );
}

#[test]
fn bad_definitions_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    for (sql, says) in [
        ("create table t (g geometry)", "column g"),
        ("select 1", "no CREATE TABLE"),
        (
            "create table a (x int); create table b (y int);",
            "name the one to use",
        ),
    ] {
        let def = tmp.path().join("def.sql");
        std::fs::write(&def, sql).unwrap();
        let o = dbio()
            .args(["innodb", "rows"])
            .arg(fixture("shop_typed.ibd"))
            .arg("--table-def")
            .arg(&def)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{sql}");
        assert!(String::from_utf8_lossy(&o.stderr).contains(says), "{sql}");
    }
    let o = dbio()
        .args(["innodb", "rows", "--table-def", "/nonexistent.sql"])
        .arg(fixture("shop_typed.ibd"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent.sql"));
}

/// VIRTUAL columns are not in the clustered index and STORED ones are; neither is written
/// (the server computes them when the rows are loaded back).
#[test]
#[ignore = "needs a MariaDB server (DBIO_TEST_MYSQL, default 127.0.0.1:3306) whose datadir this user can read: scripts/setup-test-env.sh as root"]
fn generated_columns_are_left_to_the_server() {
    let (db, load) = ("rows_live_generated", "rows_live_generated_load");
    sql(&format!(
        "drop database if exists {db}; drop database if exists {load}; create database {db}; create database {load};
         create table {db}.g (id int primary key, a int, v int as (a + 1) virtual,
           s varchar(20) as (concat('x', a)) stored, b varchar(10), w bigint as (a * 1000) virtual);
         insert into {db}.g (id, a, b) values (1, 10, 'one'), (2, -5, 'two'), (3, null, null);"
    ));
    let tmp = tempfile::tempdir().unwrap();
    let ibd = tmp.path().join("g.ibd");
    copy_ibd(db, "g", &ibd);
    let def = write_create(db, "g", tmp.path());
    let (tsv, err) = rows_out(&[
        ibd.to_str().unwrap(),
        "--table-def",
        def.to_str().unwrap(),
        "--format",
        "tsv",
    ]);
    let want = sql_bytes(&format!("select id, a, b from {db}.g order by id"));
    let mut want_rows = tsv_lines(&want, 0);
    for r in &mut want_rows {
        for f in r.iter_mut() {
            if f == b"NULL" {
                *f = b"\\N".to_vec();
            }
        }
    }
    let names = ["id".to_string(), "a".to_string(), "b".to_string()];
    assert_rows_eq(&tsv_lines(&tsv, 1), &want_rows, &names, "generated");
    assert!(
        String::from_utf8_lossy(&tsv).starts_with("id\ta\tb\n"),
        "{err}"
    );
    let out = tmp.path().join("g-rows.sql");
    rows_out(&[
        ibd.to_str().unwrap(),
        "--table-def",
        def.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    sql_file(load, &out);
    let sum = |d: &str| {
        sql(&format!("checksum table {d}.g"))
            .split('\t')
            .nth(1)
            .unwrap()
            .trim()
            .to_string()
    };
    assert_eq!(sum(load), sum(db));
    sql(&format!("drop database {db}; drop database {load}"));
}

/// MariaDB's instant ADD COLUMN: rows written before it have fewer fields (the root page says
/// how many) and take the added columns' values from the metadata record; rows written after
/// it carry the count of added fields. Both decode to what SELECT prints.
fn instant_add_column_in(format: &str) {
    let db = format!("rows_live_instant_{format}");
    sql(&format!(
        "drop database if exists {db}; create database {db};
         create table {db}.t (id int primary key, a varchar(10), n int) row_format={format};
         insert into {db}.t values (1, 'before', 5), (2, null, null), (3, 'upd later', 1);
         alter table {db}.t add column c int not null default 42,
           add column d varchar(10) default 'dflt',
           add column e datetime(6) default '2020-01-02 03:04:05.123456', algorithm=instant;
         insert into {db}.t values (4, 'after', 6, 7, 'x', '1999-12-31 23:59:59.000001'),
           (5, null, null, -1, null, null);
         update {db}.t set d = 'upd' where id = 3;"
    ));
    let (tsv, err) = live_tsv(&db, "t");
    let names: Vec<String> = ["id", "a", "n", "c", "d", "e"].map(String::from).to_vec();
    assert_rows_eq(
        &tsv_lines(&tsv, 1),
        &server_rows(&db, "t", "1"),
        &names,
        format,
    );
    // The UPDATE of id 3 grew the record: the server freed the old one to the page's free
    // list, its data zeroed (MariaDB 10.6+), and inserted the new one.
    assert!(
        err.contains("5 row(s) written") && err.contains("1 rejected (zeroed 1)"),
        "{err}"
    );
    sql(&format!("drop database {db}"));
}

#[test]
#[ignore = "needs a MariaDB server (DBIO_TEST_MYSQL, default 127.0.0.1:3306) whose datadir this user can read: scripts/setup-test-env.sh as root"]
fn instant_add_column_dynamic() {
    instant_add_column_in("dynamic");
}

#[test]
#[ignore = "needs a MariaDB server (DBIO_TEST_MYSQL, default 127.0.0.1:3306) whose datadir this user can read: scripts/setup-test-env.sh as root"]
fn instant_add_column_compact() {
    instant_add_column_in("compact");
}

#[test]
#[ignore = "needs a MariaDB server (DBIO_TEST_MYSQL, default 127.0.0.1:3306) whose datadir this user can read: scripts/setup-test-env.sh as root"]
fn instant_add_column_redundant() {
    instant_add_column_in("redundant");
}

/// MariaDB's instant DROP COLUMN and reorder (10.4+): rows written before the DROP keep the
/// dropped column, later ones still hold it (NULL or empty), an ADD after it appends a field,
/// a MODIFY ... AFTER changes only the table's order; the metadata record's BLOB gives the
/// fields' order. Every row decodes to what SELECT prints.
fn instant_drop_column_in(format: &str) {
    let db = format!("rows_live_dropcol_{format}");
    sql(&format!(
        "drop database if exists {db}; create database {db};
         create table {db}.t (id int primary key, a varchar(10), b int not null, c char(4),
           t text, n int, v varchar(300) character set utf8mb4) row_format={format};
         insert into {db}.t values (1, 'before', 10, 'c1', 'text one', 100, 'Grüße'),
           (2, null, 20, null, null, null, null), (3, 'upd later', 30, 'c3', '', 3, '');
         alter table {db}.t drop column b, drop column t, algorithm=instant;
         insert into {db}.t values (4, 'after drop', 'c4', 400, 'vier');
         alter table {db}.t add column z varchar(5) default 'zz', add column w int not null default 7,
           algorithm=instant;
         insert into {db}.t values (5, 'after add', 'c5', 500, 'fünf', 'z5', -5);
         alter table {db}.t modify n int after id, modify z varchar(5) default 'zz' after a,
           algorithm=instant;
         insert into {db}.t (id, n, a, z, c, v, w) values (6, 600, 'reordered', 'z6', 'c6', 'sechs', 6),
           (7, null, null, null, null, null, 0);
         update {db}.t set c = 'upd' where id = 3;"
    ));
    let (tsv, err) = live_tsv(&db, "t");
    let names: Vec<String> = ["id", "n", "a", "z", "c", "v", "w"]
        .map(String::from)
        .to_vec();
    assert_rows_eq(
        &tsv_lines(&tsv, 1),
        &server_rows(&db, "t", "1"),
        &names,
        format,
    );
    assert!(
        err.contains("7 row(s) written") && err.contains("0 rejected"),
        "{err}"
    );
    sql(&format!("drop database {db}"));
}

#[test]
#[ignore = "needs a MariaDB server (DBIO_TEST_MYSQL, default 127.0.0.1:3306) whose datadir this user can read: scripts/setup-test-env.sh as root"]
fn instant_drop_column_dynamic() {
    instant_drop_column_in("dynamic");
}

#[test]
#[ignore = "needs a MariaDB server (DBIO_TEST_MYSQL, default 127.0.0.1:3306) whose datadir this user can read: scripts/setup-test-env.sh as root"]
fn instant_drop_column_compact() {
    instant_drop_column_in("compact");
}

#[test]
#[ignore = "needs a MariaDB server (DBIO_TEST_MYSQL, default 127.0.0.1:3306) whose datadir this user can read: scripts/setup-test-env.sh as root"]
fn instant_drop_column_redundant() {
    instant_drop_column_in("redundant");
}

/// ROW_FORMAT=COMPRESSED on the live server with KEY_BLOCK_SIZE=`kbs` (the server needs
/// innodb_read_only_compressed=OFF): every type of the every-type test, two secondary
/// indexes (their compressed leaf pages tried and not taken), BLOBs on ZBLOB pages, the
/// table rebuilt (pages compressed, modification log empty), then a row inserted
/// (only in the modification log) and one deleted (delete-marked under a read view).
fn compressed_in(kbs: u32) {
    let db = format!("rows_live_zip{kbs}");
    sql(&format!(
        "drop database if exists {db}; create database {db};
         create table {db}.alltypes ({COLUMNS}, key (i), key (vu(20), ti)) default charset=utf8mb4
           row_format=compressed key_block_size={kbs};
         insert into {db}.alltypes values {ROWS};
         alter table {db}.alltypes force;
         create temporary table {db}.one as select * from {db}.alltypes where id = 1;
         update {db}.one set id = 101;
         insert into {db}.alltypes select * from {db}.one;"
    ));
    let before_delete = server_rows(&db, "alltypes", "id = 3");
    let (_tmp, ibd, def, names) = delete_then_copy(&db, "id = 3");
    let args = [
        ibd.to_str().unwrap(),
        "--table-def",
        def.to_str().unwrap(),
        "--format",
        "tsv",
    ];
    let what = format!("key_block_size={kbs}");
    let (tsv, err) = rows_out(&args);
    assert_rows_eq(
        &tsv_lines(&tsv, 1),
        &server_rows(&db, "alltypes", "1"),
        &names,
        &what,
    );
    assert!(
        err.contains("0 rejected") && !err.contains("warning"),
        "{err}"
    );
    let (del, err) = rows_out(&[&args[..], &["--deleted-only"]].concat());
    assert!(err.contains("1 row(s) written (1 deleted)"), "{err}");
    assert_rows_eq(&tsv_lines(&del, 1), &before_delete, &names, &what);
    sql(&format!("drop database {db}"));
}

#[test]
#[ignore = "needs a MariaDB server (DBIO_TEST_MYSQL, default 127.0.0.1:3306) whose datadir this user can read, with innodb_read_only_compressed=OFF: scripts/setup-test-env.sh as root"]
fn compressed_key_block_size_16_8_4() {
    for kbs in [16, 8, 4] {
        compressed_in(kbs);
    }
}

/// `--old-temporal` on a definition without MariaDB's `/* mariadb-5.3 */` marks: the old
/// DATETIME/TIME/TIMESTAMP formats of testdata's shop_oldtime decode to the server's rows
/// (shop_oldtime.tsv); without the flag the error says the records fit them.
#[test]
fn old_temporal_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = tmp.path().join("plain.sql");
    let sql = std::fs::read_to_string(fixture("shop_oldtime.sql")).unwrap();
    std::fs::write(&plain, sql.replace(" /* mariadb-5.3 */", "")).unwrap();
    let ibd = fixture("shop_oldtime.ibd");
    let args = [
        ibd.to_str().unwrap(),
        "--table-def",
        plain.to_str().unwrap(),
        "--format",
        "tsv",
    ];
    let o = dbio().args(["innodb", "rows"]).args(args).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("add --old-temporal"));
    let (tsv, err) = rows_out(&[&args[..], &["--old-temporal"]].concat());
    let want = std::fs::read(fixture("shop_oldtime.tsv")).unwrap();
    let names: Vec<String> = (0..12).map(|i| format!("column {i}")).collect();
    assert_rows_eq(&tsv_lines(&tsv, 1), &tsv_lines(&want, 0), &names, "oldtime");
    assert!(
        err.contains("old (pre-5.6) temporal format: dt, tm, ts"),
        "{err}"
    );
}

/// SHOW CREATE TABLE of `db.table` written to DIR/table.sql, for `--table-def`.
pub(crate) fn write_create(db: &str, table: &str, dir: &Path) -> PathBuf {
    let create = sql(&format!("show create table {db}.{table}"));
    let def = dir.join(format!("{table}.sql"));
    std::fs::write(
        &def,
        create.split_once('\t').unwrap().1.replace("\\n", "\n"),
    )
    .unwrap();
    def
}

/// `innodb rows --format tsv` of the live table `db.table` (its .ibd copied consistently,
/// its SHOW CREATE TABLE as the definition): (stdout, stderr).
fn live_tsv(db: &str, table: &str) -> (Vec<u8>, String) {
    let tmp = tempfile::tempdir().unwrap();
    let ibd = tmp.path().join(format!("{table}.ibd"));
    copy_ibd(db, table, &ibd);
    let def = write_create(db, table, tmp.path());
    rows_out(&[
        ibd.to_str().unwrap(),
        "--table-def",
        def.to_str().unwrap(),
        "--format",
        "tsv",
    ])
}

// ---------------------------------------------------------------- bounded memory

/// Page size of the fixtures copied below.
const PS: usize = 16384;

/// Moves the INT key of every user record of the leaf page `page` by `by`.
fn move_keys(page: &mut [u8], by: u32) {
    use dbio_innodb::page::system_records;
    use dbio_innodb::rows::record;
    let format = system_records(page).expect("a leaf page");
    let (mut seen, mut recs) = (Vec::new(), Vec::new());
    record::list(page, format, &mut seen, &mut recs);
    assert!(!recs.is_empty());
    for r in &recs {
        let o = r.origin;
        let id = u32::from_be_bytes(page[o..o + 4].try_into().unwrap()) ^ 0x8000_0000;
        page[o..o + 4].copy_from_slice(&((id + by) ^ 0x8000_0000).to_be_bytes());
    }
}

/// An image of `n` leaf pages made from `fixture`'s pages 0..3 and `n` copies of its leaf
/// page 3 as pages 3..3+n, the keys of copy `i` moved by 1000 x i. Plain pages get their
/// full_crc32 checksum recomputed; page_compressed ones (`packed`) are inflated, changed,
/// compressed again with zlib and framed as MariaDB does (type 0x80xx, CRC-32C of the
/// payload), their slots left as holes in the (sparse) file.
fn repeated_leaf_image(fixture_name: &str, n: u32, packed: bool, path: &Path) {
    use std::io::Write as _;
    use std::os::unix::fs::FileExt;
    let ibd = std::fs::read(fixture(fixture_name)).unwrap();
    let slot3 = &ibd[3 * PS..4 * PS];
    let f = std::fs::File::create(path).unwrap();
    f.set_len((3 + n as u64) * PS as u64).unwrap();
    f.write_all_at(&ibd[..3 * PS], 0).unwrap();
    let leaf = if packed {
        dbio_innodb::rows::inflate::page_compressed(slot3, PS).expect("page 3 inflates")
    } else {
        slot3.to_vec()
    };
    for i in 0..n {
        let no = 3 + i;
        let mut p = leaf.clone();
        p[4..8].copy_from_slice(&no.to_be_bytes());
        move_keys(&mut p, i * 1000);
        let bytes = if packed {
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
            z.write_all(&p).unwrap();
            let stream = z.finish().unwrap();
            let size = (26 + stream.len() + 4).div_ceil(256) * 256;
            let mut s = vec![0u8; size];
            s[..24].copy_from_slice(&p[..24]);
            s[24..26].copy_from_slice(&(0x8000u16 | (size >> 8) as u16).to_be_bytes());
            s[26..26 + stream.len()].copy_from_slice(&stream);
            let c = dbio_innodb::checksum::crc32c(&s[..size - 4]);
            s[size - 4..].copy_from_slice(&c.to_be_bytes());
            s
        } else {
            let c = dbio_innodb::checksum::full_crc32(&p);
            p[PS - 4..].copy_from_slice(&c.to_be_bytes());
            p
        };
        f.write_all_at(&bytes, no as u64 * PS as u64).unwrap();
    }
}

/// Runs `dbio innodb rows` with `args`, stdout thrown away: (exit code, stderr, the peak
/// RSS of the process in KiB). The peak is VmHWM of /proc/PID/status, read every few ms
/// until the process ends (the last reading comes just before its exit). Not wait4's
/// ru_maxrss: Linux counts in it the RSS of the test binary the child was spawned from.
fn rows_peak_rss(args: &[&str]) -> (i32, String, u64) {
    let err = tempfile::NamedTempFile::new().unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .args(["innodb", "rows"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(err.reopen().unwrap())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut peak = 0u64;
    let status = loop {
        // Only once the child runs dbio (before its exec it shares the test binary's memory).
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if comm.trim() == "dbio" {
            let st = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            if let Some(kib) = st
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak = peak.max(kib);
            }
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    assert!(peak > 0, "no VmHWM of dbio read");
    let stderr = std::fs::read_to_string(err.path()).unwrap();
    (status.code().unwrap_or(-1), stderr, peak)
}

/// `innodb rows` keeps where each page is, not its bytes: 8192 leaf pages (128 MiB of plain
/// pages; page_compressed ones inflate to as much) are decoded with a peak RSS under 48 MiB
/// (measured: 29 MiB for 512 pages, 37 MiB for 8192, 40-44 MiB for 32768: the page index
/// grows by a few hundred bytes a page). Before, every page_compressed page was inflated into
/// memory up front (158 MiB for this image), and the scan's memory map of the input stayed
/// resident (152 MiB for the plain one).
#[test]
fn rows_decode_a_large_input_with_bounded_memory() {
    const N: u32 = 8192;
    let dir = shm_tempdir("dbio-rows-mem-");
    let tmp = tempfile::tempdir().unwrap();
    let typed = typed_def(tmp.path());
    let packed_def = tmp.path().join("packed.sql");
    std::fs::write(
        &packed_def,
        "create table packed (id int primary key, v varchar(200)) page_compressed=1 default charset=latin1",
    )
    .unwrap();
    for (name, packed, def, rows_per_page) in [
        ("shop_typed.ibd", false, &typed, 2u64),
        ("shop_packed.ibd", true, &packed_def, 3),
    ] {
        let img = dir.path().join(format!("{name}.img"));
        repeated_leaf_image(name, N, packed, &img);
        let (code, err, peak_kib) = rows_peak_rss(&[
            img.to_str().unwrap(),
            "--table-def",
            def.to_str().unwrap(),
            "--format",
            "tsv",
            "--include-deleted",
        ]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(
            err.contains(&format!("{N} leaf page(s)"))
                && err.contains(&format!("{} row(s) written", rows_per_page * N as u64))
                && err.contains("0 rejected"),
            "{name}: {err}"
        );
        assert!(
            peak_kib < 48 << 10,
            "{name}: peak RSS {peak_kib} KiB for {N} pages of 16 KiB"
        );
        std::fs::remove_file(&img).unwrap();
    }
}

/// ROW_FORMAT=COMPRESSED pages are not kept decompressed either: shop_zip8.ibd (KEY_BLOCK_SIZE
/// 8) with its leaf page copied 8192 times under new page numbers (zip checksum recomputed).
/// Kept, the decompressed pages alone would take 128 MiB; the run stays under the 48 MiB of
/// the test above. (Every copy holds the same keys at the same LSN, so the rows are the table's.)
#[test]
fn compressed_pages_decode_with_bounded_memory() {
    use std::os::unix::fs::FileExt;
    const N: u32 = 8192;
    const ZPS: usize = 8192;
    let dir = shm_tempdir("dbio-rows-zipmem-");
    let ibd = std::fs::read(fixture("shop_zip8.ibd")).unwrap();
    let pages = (ibd.len() / ZPS) as u32;
    let leaf = &ibd[3 * ZPS..4 * ZPS];
    assert_eq!(
        leaf[24..26],
        17855u16.to_be_bytes(),
        "page 3 is the leaf page"
    );
    let img = dir.path().join("zip.img");
    let f = std::fs::File::create(&img).unwrap();
    f.write_all_at(&ibd, 0).unwrap();
    for i in 0..N {
        let no = pages + i;
        let mut p = leaf.to_vec();
        p[4..8].copy_from_slice(&no.to_be_bytes());
        let c = dbio_innodb::checksum::zip_crc32(&p);
        p[..4].copy_from_slice(&c.to_be_bytes());
        f.write_all_at(&p, no as u64 * ZPS as u64).unwrap();
    }
    let (code, err, peak_kib) = rows_peak_rss(&[
        img.to_str().unwrap(),
        "--table-def",
        fixture("shop_zip8.sql").to_str().unwrap(),
        "--format",
        "tsv",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(&format!("{} leaf page(s)", N + 1)), "{err}");
    assert!(
        peak_kib < 48 << 10,
        "peak RSS {peak_kib} KiB for {N} compressed pages"
    );
}

/// The stderr summary names each reject reason with its count and counts the older versions
/// dropped: shop_typed's leaf page 3, an unchanged older copy of it as page 5 (both its
/// records are older versions of page 3's), and an older copy as page 6 with its first
/// record's DATE made 0xFFFFFF (month 15: `range`) and its second record's VARCHAR length
/// made 200 (the column holds 64 bytes: `length`). Checksums recomputed: the pages are intact.
#[test]
fn rows_stderr_names_rejects_by_reason_and_older_versions_dropped() {
    use dbio_innodb::page::system_records;
    use dbio_innodb::rows::record;
    let ibd = std::fs::read(fixture("shop_typed.ibd")).unwrap();
    let leaf = &ibd[3 * PS..4 * PS];
    let lsn = u64::from_be_bytes(leaf[16..24].try_into().unwrap()) - 1000;
    let (mut seen, mut recs) = (Vec::new(), Vec::new());
    record::list(leaf, system_records(leaf).unwrap(), &mut seen, &mut recs);
    assert_eq!(recs.len(), 2);
    let copy = |no: u32, damage: bool| {
        let mut p = leaf.to_vec();
        p[4..8].copy_from_slice(&no.to_be_bytes());
        p[16..24].copy_from_slice(&lsn.to_be_bytes());
        p[PS - 8..PS - 4].copy_from_slice(&(lsn as u32).to_be_bytes());
        if damage {
            // Record 1: id, DB_TRX_ID, DB_ROLL_PTR, ti, si, mi, bi, iu, then d.
            let d = recs[0].origin + 4 + 6 + 7 + 1 + 2 + 3 + 8 + 4;
            assert_eq!(p[d..d + 3], [0x8F, 0xC6, 0xAD], "2019-05-13");
            p[d..d + 3].fill(0xFF);
            // Record 2: vc's length byte, before the 2 NULL-bitmap bytes and the header.
            let len = recs[1].origin - 5 - 2 - 1;
            assert_eq!(p[len] as usize, "deleted varchar row".len());
            p[len] = 200;
        }
        let c = dbio_innodb::checksum::full_crc32(&p);
        p[PS - 4..].copy_from_slice(&c.to_be_bytes());
        p
    };
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("copies.img");
    std::fs::write(&img, [&ibd[..], &copy(5, false), &copy(6, true)].concat()).unwrap();
    let def = typed_def(tmp.path());
    let summary = tmp.path().join("summary.json");
    let (tsv, err) = tsv_text(&[
        img.to_str().unwrap(),
        "--table-def",
        def.to_str().unwrap(),
        "--format",
        "tsv",
        "--include-deleted",
        "--summary",
        summary.to_str().unwrap(),
    ]);
    assert!(
        err.contains("space 7 index 25: 3 leaf page(s), 6 record(s); 2 row(s) written (1 deleted), 0 filtered out by the deleted filter, 2 older version(s) dropped, 2 rejected (length 1, range 1)\n"),
        "{err}"
    );
    let body: Vec<&str> = tsv.lines().skip(1).collect();
    assert_eq!(body.len(), 2, "{tsv}");
    assert_eq!(body[0], format!("{TYPED_ROW}\t0"));
    assert!(body[1].starts_with("2\t5\t8\t") && body[1].ends_with("\tdeleted varchar row\t1"));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(s["duplicates_dropped"], 2, "{s}");
    assert_eq!(
        s["rejected"],
        serde_json::json!({"length": 1, "range": 1}),
        "{s}"
    );
}
