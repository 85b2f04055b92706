//! `dbio innodb rows`: tablespaces made by the real MariaDB in the test environment (a table
//! with every type, in each row format, with rows deleted and a BLOB longer than a page),
//! decoded and compared value by value with what the server's SELECT prints; the SQL output
//! loaded back into the server and compared with CHECKSUM TABLE. Also the committed fixtures
//! read through a PAGES_DIR written by `innodb pages` and from an image with the pages at odd
//! offsets, and garbage refused.

use crate::common::dbio;
use std::path::{Path, PathBuf};
use std::process::Stdio;

fn fixture(name: &str) -> PathBuf {
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

fn client() -> std::process::Command {
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

fn sql(stmts: &str) -> String {
    String::from_utf8_lossy(&sql_bytes(stmts)).into_owned()
}

/// Lines of TSV bytes, fields split; `skip` header lines dropped; sorted by the first field.
fn tsv_lines(b: &[u8], skip: usize) -> Vec<Vec<Vec<u8>>> {
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
 tx text, bl blob, js json";

const ROWS: &str = "
(1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808, 18446744073709551615,
 -12345678.91, -12345678901234567890.0123456789, 99999, 3.14159, -2.718281828459045, 1234.567,
 b'1', b'1010101010101', b'1111111111111111111111111111111111111111111111111111111111111111', 2155,
 '1000-01-01', '9999-12-31 23:59:59', '2019-05-13 14:35:07.123', '2019-05-13 14:35:07.000001', '2038-01-19 03:14:07.99',
 '-838:59:59', '-00:00:00.5', '-12:34:56.789', '-01:02:03.000004',
 'abc', 'Grüß', '€😀', 'latin1 Köln €', 'utf8mb4 😀 Grüße', 0x00010203, 0xDEADBEEF, 'c', 'x,z', 'some text', 0x000102FF, '{\"a\": [1, 2.5, \"x\"]}'),
(2, 127, 0, 32767, 0, 8388607, 0, 2147483647, 0, 9223372036854775807, 0,
 0, 0.0000000001, 0, -0.5, 1e300, -0.001,
 b'0', b'0', b'0', 1901, '2024-02-29', '0000-00-00 00:00:00', '1970-01-01 00:00:00.5', '2000-01-01 00:00:00.999999', '1970-01-01 00:00:01',
 '838:59:59', '00:00:00.1', '23:59:59.999', '00:00:00.000001',
 '', '', '', '', '', 0x61, '', 'a', '', '', '', '[]'),
(3, -1, 1, -1, 1, -100000, 100000, -1, 1, -1, 1, 1234.56, -0.5, 5, 1e-10, 123456789.125, 0,
 NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, '00:00:00', '-00:00:01.0', NULL, '-00:00:00.000001',
 'tab\there', 'x', 'y', 'quote\\'s \\\\ back', 'nl\\nline', NULL, 0x5C00275C, NULL, 'x,y,z', NULL, NULL, NULL),
(4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
(6, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0.01, 1, 1, 1e15, 1e14, 1, b'1', b'1111111111111', b'1', 1999,
 '2000-02-29', '2000-01-01 00:00:00', '2000-01-01 00:00:00.001', '2000-01-01 00:00:00.100000', '2000-01-01 00:00:00.01',
 '-00:00:00', '-838:59:59.0', '-838:59:59.000', '-838:59:59.000000', 'x', 'ä', 'ä', 'ÿ', repeat('ä', 200), 0xFFFFFFFF,
 0x00, 'b', 'y', repeat('Grüße ', 3000), unhex(repeat('00FF7F80', 6000)), concat('[', repeat('1,', 9000), '1]'))";

/// The datadir of the server, readable by this process (the tests run as root).
fn datadir() -> PathBuf {
    PathBuf::from(sql("select @@datadir").trim())
}

/// A consistent copy of db/table's .ibd (FLUSH TABLES ... FOR EXPORT), taken inside one
/// client session so the lock holds while the file is copied.
fn copy_ibd(db: &str, table: &str, to: &Path) {
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
fn server_rows(db: &str, table: &str, cond: &str) -> Vec<Vec<Vec<u8>>> {
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

fn rows_out(args: &[&str]) -> (Vec<u8>, String) {
    let o = dbio().args(["innodb", "rows"]).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{args:?}: {err}");
    (o.stdout, err)
}

/// Holds a read view open from before the DELETE (purge then keeps the delete-marked rows)
/// until dropped.
struct ReadView(std::process::Child);

impl ReadView {
    fn open() -> ReadView {
        let child = client()
            .args([
                "-e",
                "start transaction with consistent snapshot; select sleep(60)",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(500));
        ReadView(child)
    }
}

impl Drop for ReadView {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn every_type_in(format: &str) {
    let db = format!("rows_live_{format}");
    let load = format!("rows_live_{format}_load");
    sql(&format!(
        "drop database if exists {db}; drop database if exists {load}; create database {db}; create database {load};
         create table {db}.alltypes ({COLUMNS}, key (i), key (vu(20), ti)) default charset=utf8mb4 row_format={format};
         insert into {db}.alltypes values {ROWS};"
    ));
    let before_delete = server_rows(&db, "alltypes", "1");
    let view = ReadView::open();
    sql(&format!("delete from {db}.alltypes where id in (3, 6)"));
    let tmp = tempfile::tempdir().unwrap();
    let ibd = tmp.path().join("alltypes.ibd");
    copy_ibd(&db, "alltypes", &ibd);
    drop(view);
    let def = write_create(&db, "alltypes", tmp.path());
    let ibd_s = ibd.to_str().unwrap();
    let def_s = def.to_str().unwrap();

    let names: Vec<String> = sql(&format!(
        "select column_name from information_schema.columns where table_schema='{db}' and table_name='alltypes' order by ordinal_position"
    ))
    .lines()
    .map(str::to_string)
    .collect();
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
        .into_iter()
        .filter(|l| l[0] == b"3" || l[0] == b"6")
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
    // And the TSV output loads with the LOAD DATA statement dbio prints.
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
    let load_data = err
        .lines()
        .find_map(|l| l.strip_prefix("dbio: load it with: "))
        .expect("LOAD DATA statement");
    let o = client()
        .args(["--local-infile=1", &load, "-e"])
        .arg(format!(
            "set time_zone='+00:00'; truncate table alltypes; {load_data}"
        ))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{load_data}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        sum(&load),
        sum(&db),
        "{format}: CHECKSUM TABLE after LOAD DATA"
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
    sql(&format!("drop database {db}; drop database {load}"));
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

fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
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

#[test]
fn rows_from_a_pages_dir_written_by_innodb_pages() {
    let tmp = tempfile::tempdir().unwrap();
    let def = typed_def(tmp.path());
    // /dev/shm when there, so the same-device refusal of innodb pages does not apply.
    let out = tempfile::Builder::new()
        .prefix("dbio-rows-")
        .tempdir_in(if Path::new("/dev/shm").is_dir() {
            "/dev/shm"
        } else {
            "/tmp"
        })
        .unwrap();
    let pages_dir = out.path().join("pages");
    dbio()
        .args([
            "innodb",
            "pages",
            "--allow-same-device",
            "--format",
            "json",
            "--output-dir",
        ])
        .arg(&pages_dir)
        .arg(fixture("shop_typed.ibd"))
        .arg(fixture("shop_orders.ibd"))
        .assert()
        .success();
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
    assert_eq!(body[0], TYPED_ROW);
    assert!(
        body[1].starts_with("2\t5\t8\t100000\t-9000000000000000001\t"),
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
    assert!(
        err.contains("5 row(s) written") && err.contains("0 rejected"),
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
fn write_create(db: &str, table: &str, dir: &Path) -> PathBuf {
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
