//! MySQL 8 tablespaces read with their own definition (the SDI): `dbio innodb sdi` against
//! `ibd2sdi`'s output for the same files, and `dbio innodb rows FILE.ibd` with no
//! definition against the rows the server holds (testdata/innodb/mysql-real, see its
//! PROVENANCE.md).

use crate::common::dbio;
use std::path::{Path, PathBuf};

fn real(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/innodb/mysql-real")
        .join(rel)
}

fn run(args: &[&str]) -> (Vec<u8>, String, bool) {
    let o = dbio().args(args).output().unwrap();
    (
        o.stdout,
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.success(),
    )
}

/// A record: its fields' values (LOAD DATA escapes undone; NULL is `\N`, kept as those two
/// bytes, which no escaped value can be).
type Record = Vec<Vec<u8>>;

/// The records of a LOAD DATA/SELECT INTO OUTFILE file (tab-separated, backslash escapes: an
/// escaped newline or tab is data). The two writers escape a newline differently (dbio `\n`,
/// the server a backslash before the newline itself); both load as the same value, which is
/// what is compared.
fn records(b: &[u8]) -> Vec<Record> {
    let (mut out, mut rec, mut field) = (Vec::new(), Vec::new(), Vec::new());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' if i + 1 < b.len() => {
                match b[i + 1] {
                    b'N' => field.extend_from_slice(b"\\N"),
                    b'0' => field.push(0),
                    b'b' => field.push(8),
                    b'n' => field.push(b'\n'),
                    b'r' => field.push(b'\r'),
                    b't' => field.push(b'\t'),
                    b'Z' => field.push(26),
                    c => field.push(c),
                }
                i += 2;
                continue;
            }
            b'\t' => rec.push(std::mem::take(&mut field)),
            b'\n' => {
                rec.push(std::mem::take(&mut field));
                out.push(std::mem::take(&mut rec));
            }
            c => field.push(c),
        }
        i += 1;
    }
    out
}

const SAKILA: [&str; 14] = [
    "actor",
    "address",
    "category",
    "city",
    "country",
    "customer",
    "film",
    "film_actor",
    "film_category",
    "film_text",
    "inventory",
    "language",
    "staff",
    "store",
];

/// `innodb rows T.ibd --format tsv` (no definition): the header and the records.
fn sakila_rows(t: &str) -> (Record, Vec<Record>, String) {
    let ibd = real(&format!("sakila/8.0/{t}.ibd"));
    let (out, err, ok) = run(&["innodb", "rows", ibd.to_str().unwrap(), "--format", "tsv"]);
    assert!(ok, "{t}: {err}");
    let mut recs = records(&out);
    let header = recs.remove(0);
    (header, recs, err)
}

fn expected(t: &str) -> Vec<Record> {
    records(&std::fs::read(real(&format!("sakila/expected/{t}.tsv"))).unwrap())
}

/// Every sakila table of MySQL 8.0 decoded with the definition its .ibd carries equals what
/// the server's SELECT gives, TIMESTAMP columns included (both were loaded in UTC: the
/// offset is 0). address.location (GEOMETRY) is not in the MariaDB sakila schema the
/// expected rows come from: checked apart. staff: see the test below.
#[test]
fn sakila_8_0_tables_decode_with_their_sdi() {
    for t in SAKILA.iter().filter(|t| **t != "staff") {
        let (header, mut ours, err) = sakila_rows(t);
        assert!(
            err.contains("(definition: SDI of tablespace "),
            "{t}: {err}"
        );
        assert!(err.contains(" 0 rejected"), "{t}: {err}");
        if *t == "address" {
            let at = header.iter().position(|h| h == b"location").unwrap();
            for r in &mut ours {
                // SRID 0 + WKB POINT (byte order 1, type 1, two doubles): 25 bytes.
                let loc = r.remove(at);
                assert!(loc.starts_with(b"\0\0\0\0\x01\x01\0\0\0"), "{loc:?}");
                assert_eq!(loc.len(), 25, "{loc:?}");
            }
        }
        let want = expected(t);
        assert_eq!(ours.len(), want.len(), "{t}");
        for (a, b) in ours.iter().zip(&want) {
            assert_eq!(a, b, "{t}");
        }
    }
}

/// The whole staff table, its picture (a 36,365-byte PNG in MySQL 8 LOB pages: first page,
/// index entries, data pages) equal byte for byte to the server's.
#[test]
fn sakila_8_0_staff_with_its_picture() {
    let (_, ours, err) = sakila_rows("staff");
    assert!(err.contains(" 0 rejected"), "{err}");
    assert_eq!(ours, expected("staff"));
}

/// Every sakila table of MySQL 5.7 (no SDI, no .frm: the definition is the CREATE TABLE a
/// user would give, MariaDB's SHOW CREATE TABLE of the same schema) equals the server's rows,
/// with no --index-id: film_actor and inventory, whose secondary indexes hold records that
/// fit the definition too, come from their clustered index. address: the MySQL tables have
/// `location GEOMETRY NOT NULL` before last_update, which the MariaDB sakila schema lacks; it
/// is given as a BLOB there and left out of the comparison.
#[test]
fn sakila_5_7_tables_decode_with_the_create_table_and_no_index_hint() {
    let dir = tempfile::tempdir().unwrap();
    for t in SAKILA {
        let mut def = std::fs::read_to_string(real(&format!("sakila/expected/{t}.sql"))).unwrap();
        if t == "address" {
            def = def.replace(
                "  `last_update` timestamp",
                "  `location` blob NOT NULL,\n  `last_update` timestamp",
            );
        }
        let def_file = dir.path().join(format!("{t}.sql"));
        std::fs::write(&def_file, def).unwrap();
        let ibd = real(&format!("sakila/5.7/{t}.ibd"));
        let (out, err, ok) = run(&[
            "innodb",
            "rows",
            ibd.to_str().unwrap(),
            "--table-def",
            def_file.to_str().unwrap(),
            "--format",
            "tsv",
        ]);
        assert!(ok, "{t}: {err}");
        assert!(err.contains(" 0 rejected"), "{t}: {err}");
        let mut ours = records(&out);
        let header = ours.remove(0);
        if t == "address" {
            let at = header.iter().position(|h| h == b"location").unwrap();
            for r in &mut ours {
                r.remove(at);
            }
        }
        let want = expected(t);
        assert_eq!(ours.len(), want.len(), "{t}");
        for (a, b) in ours.iter().zip(&want) {
            assert_eq!(a, b, "{t}");
        }
    }
}

/// percona-parser's tables decode to the INSERTs of the scripts that made them
/// (test_types_decode.sh ran with time_zone -03:00: its TIMESTAMP '2024-12-31 12:34:56' is
/// 15:34:56 UTC; BIT b'1010101010' is 0x02AA).
#[test]
fn percona_parser_tables_decode_to_their_inserts() {
    let cases: [(&str, &[&str]); 2] = [
        (
            "types_test",
            &[
                "INSERT INTO `types_fixture` (`id`,`amount`,`d`,`t`,`dt`,`ts`,`y`,`e`,`s`,`b`,`note`) VALUES (1,1234.56,'2024-12-31','12:34:56.123456','2024-12-31 12:34:56.123456','2024-12-31 15:34:56','2024','medium','red,blue',0x02AA,'alpha');",
                "INSERT INTO `types_fixture` (`id`,`amount`,`d`,`t`,`dt`,`ts`,`y`,`e`,`s`,`b`,`note`) VALUES (2,-0.99,'2001-01-02','01:02:03.000004','2001-01-02 03:04:05.000006',NULL,'1999','small','green',0x0001,'beta');",
            ],
        ),
        (
            "secondary_index",
            &[
                "INSERT INTO `idx_fixture` (`id`,`a`,`b`,`c`) VALUES (1,10,'alpha',100);",
                "INSERT INTO `idx_fixture` (`id`,`a`,`b`,`c`) VALUES (2,20,'bravo',200);",
                "INSERT INTO `idx_fixture` (`id`,`a`,`b`,`c`) VALUES (3,10,'charlie',300);",
                "INSERT INTO `idx_fixture` (`id`,`a`,`b`,`c`) VALUES (4,20,'delta',400);",
            ],
        ),
    ];
    for (f, want) in cases {
        let ibd = real(&format!("percona-parser/{f}.ibd"));
        let (out, err, ok) = run(&["innodb", "rows", ibd.to_str().unwrap(), "--format", "sql"]);
        assert!(ok, "{f}: {err}");
        let out = String::from_utf8(out).unwrap();
        let inserts: Vec<&str> = out.lines().filter(|l| l.starts_with("INSERT")).collect();
        assert_eq!(inserts, want, "{f}");
    }
}

/// `innodb sdi` prints what ibd2sdi printed for the same file, for every *_sdi.json whose
/// .ibd is in testdata (types_test, secondary_index; charset_test, compressed_test,
/// json_test and lob_test have no .ibd in the public repository).
#[test]
fn sdi_json_equals_ibd2sdi() {
    let dir = real("percona-parser");
    let mut checked = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        let Some(stem) = name.strip_suffix("_sdi.json") else {
            continue;
        };
        let ibd = dir.join(format!("{stem}.ibd"));
        if !ibd.exists() {
            continue;
        }
        let (out, err, ok) = run(&["innodb", "sdi", ibd.to_str().unwrap()]);
        assert!(ok, "{stem}: {err}");
        let want = std::fs::read(&p).unwrap();
        let a: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let b: serde_json::Value = serde_json::from_slice(&want).unwrap();
        assert_eq!(a, b, "{stem}");
        assert_eq!(out, want, "{stem}: not byte for byte");
        checked.push(stem.to_string());
    }
    checked.sort();
    assert_eq!(checked, ["secondary_index", "types_test"]);
}

#[test]
fn sdi_sql_is_the_create_table() {
    let ibd = real("sakila/8.0/film_category.ibd");
    let (out, err, ok) = run(&["innodb", "sdi", "--format", "sql", ibd.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "CREATE TABLE `film_category` (
  `film_id` smallint unsigned NOT NULL,
  `category_id` tinyint unsigned NOT NULL,
  `last_update` timestamp NOT NULL,
  PRIMARY KEY (`film_id`,`category_id`),
  KEY `fk_film_category_category` (`category_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci;
"
    );
}

/// Files without an SDI, damaged or truncated ones: an error naming the file, never output.
#[test]
fn sdi_refuses_what_it_cannot_read() {
    let tmp = tempfile::tempdir().unwrap();
    let good = std::fs::read(real("sakila/8.0/actor.ibd")).unwrap();
    // Truncated after page 0: the SDI root (page 3) is missing.
    let short = tmp.path().join("short.ibd");
    std::fs::write(&short, &good[..16384]).unwrap();
    // The SDI root page overwritten with random-looking bytes.
    let mut bad = good.clone();
    for (i, b) in bad[3 * 16384..4 * 16384].iter_mut().enumerate() {
        *b = (i as u32).wrapping_mul(2654435761).to_be_bytes()[0];
    }
    let damaged = tmp.path().join("damaged.ibd");
    std::fs::write(&damaged, &bad).unwrap();
    // The SDI record's compressed length made huge.
    let mut huge = good.clone();
    let o = 3 * 16384 + 99;
    let first = o + u16::from_be_bytes([good[o - 2], good[o - 1]]) as usize;
    huge[first + 29..first + 33].copy_from_slice(&0x7fff_ffffu32.to_be_bytes());
    let lying = tmp.path().join("lying.ibd");
    std::fs::write(&lying, &huge).unwrap();
    let cases = [
        (
            real("sakila/5.7/actor.ibd"),
            "no SDI: not a MySQL 8 tablespace",
        ),
        (real("percona-parser/encrypted_test.ibd"), "is encrypted"),
        (short, "SDI page 3: beyond the end of the file"),
        (damaged, "SDI page 3: of type"),
        (lying, "out of range"),
    ];
    for (f, msg) in cases {
        for fmt in ["json", "sql"] {
            let (out, err, ok) = run(&["innodb", "sdi", f.to_str().unwrap(), "--format", fmt]);
            assert!(!ok && out.is_empty(), "{}: {err}", f.display());
            assert!(
                err.contains(msg) && err.contains(f.to_str().unwrap()),
                "{}: {err}",
                f.display()
            );
        }
    }
}

/// `innodb rows` with no definition on a tablespace without SDI: a usage error saying what to
/// give.
#[test]
fn rows_without_definition_needs_sdi() {
    let ibd = real("sakila/5.7/actor.ibd");
    let (out, err, ok) = run(&["innodb", "rows", ibd.to_str().unwrap()]);
    assert!(!ok && out.is_empty(), "{err}");
    assert!(
        err.contains("no SDI pages in the sources") && err.contains("--table-def"),
        "{err}"
    );
}

/// An image holding two MySQL 8 tablespaces: the SDI of each is found among the pages
/// scanned; one is chosen with --space-id or --table, neither is an error listing both.
#[test]
fn rows_from_an_image_choose_the_tablespace() {
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("img.bin");
    let mut b = std::fs::read(real("sakila/8.0/actor.ibd")).unwrap();
    b.extend(std::fs::read(real("sakila/8.0/country.ibd")).unwrap());
    std::fs::write(&img, &b).unwrap();
    let img = img.to_str().unwrap();
    let (out, err, ok) = run(&["innodb", "rows", img]);
    assert!(!ok && out.is_empty(), "{err}");
    assert!(
        err.contains("2 = sakila/actor, 6 = sakila/country"),
        "{err}"
    );
    for (pick, t) in [
        (["--space-id", "2"], "actor"),
        (["--table", "sakila/country"], "country"),
    ] {
        let (out, err, ok) = run(&["innodb", "rows", img, "--format", "tsv", pick[0], pick[1]]);
        assert!(ok, "{err}");
        let mut ours = records(&out);
        ours.remove(0);
        assert_eq!(ours, expected(t), "{t}");
    }
}

/// The innobase_reader tablespaces: MySQL 8.0.37 after each step of instant ADD COLUMN c5
/// (row version 1) and DROP COLUMN c3 (version 2), with rows written at versions 0, 1 and 2;
/// MySQL 8.0.27 after an instant ADD COLUMN of the older kind (`instant_col`, records flagged
/// with their number of fields).
const INSTANT: [&str; 8] = [
    "tb_row_version_0",
    "tb_row_version_1",
    "tb_row_version_2",
    "tb_row_version_3",
    "tb_row_version_4",
    "tb_instant_col_0",
    "tb_instant_col_1",
    "tb_instant_col_2",
];

/// Real MySQL 8.0.27/8.0.37 tables before and after instant ADD/DROP COLUMN decoded with the
/// SDI they carry: every file's TSV (header and rows) is byte for byte the SELECT that
/// innobase_reader's scripts record for it (innobase_reader/expected/): the columns of the
/// table as it is, rows written before an ADD with the column's default, the dropped column
/// not written though older records still hold it.
#[test]
fn instant_add_drop_tables_decode_every_row_version() {
    for f in INSTANT {
        let ibd = real(&format!("innobase_reader/{f}.ibd"));
        let (out, err, ok) = run(&["innodb", "rows", ibd.to_str().unwrap(), "--format", "tsv"]);
        assert!(ok, "{f}: {err}");
        let want = std::fs::read(real(&format!("innobase_reader/expected/{f}.tsv"))).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&want),
            "{f}: {err}"
        );
        assert!(err.contains(", 0 rejected"), "{f}: {err}");
    }
    // As SQL: the statement names the table's columns only, the default where the record has
    // no value.
    let ibd = real("innobase_reader/tb_row_version_4.ibd");
    let (out, err, ok) = run(&["innodb", "rows", ibd.to_str().unwrap(), "--format", "sql"]);
    assert!(ok, "{err}");
    let inserts: Vec<String> = String::from_utf8(out)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("INSERT"))
        .map(str::to_string)
        .collect();
    assert_eq!(
        inserts,
        [
            "INSERT INTO `tb_row_version` (`c1`,`c2`,`c4`,`c5`) VALUES ('r1c1','r1c2','r1c4','c5_def');",
            "INSERT INTO `tb_row_version` (`c1`,`c2`,`c4`,`c5`) VALUES ('r2c1','r2c2','r2c4','r2c5');",
            "INSERT INTO `tb_row_version` (`c1`,`c2`,`c4`,`c5`) VALUES ('r3c1','r3c2','r3c4','r3c5');",
        ]
    );
}

/// The same tablespace with a CREATE TABLE instead of its SDI: the definition cannot say what
/// the records of each row version hold, so the records flagged with a version (written after
/// the ALTERs) are rejected as `instant` and named, never decoded as if they had the table's
/// layout; the exit status says rows were lost. (The record written before them has no flag
/// and is read by the definition given: its dropped column c3 is still in it.)
#[test]
fn instant_records_with_a_create_table_are_rejected_not_guessed() {
    let dir = tempfile::tempdir().unwrap();
    let def = dir.path().join("t.sql");
    std::fs::write(
        &def,
        "CREATE TABLE tb_row_version (c1 char(10), c2 char(10), c4 char(10), c5 char(10)) DEFAULT CHARSET=utf8mb4;\n",
    )
    .unwrap();
    let ibd = real("innobase_reader/tb_row_version_4.ibd");
    let (out, err, ok) = run(&[
        "innodb",
        "rows",
        ibd.to_str().unwrap(),
        "--table-def",
        def.to_str().unwrap(),
        "--format",
        "tsv",
    ]);
    assert!(!ok, "{err}");
    assert!(err.contains("2 rejected (instant 2)"), "{err}");
    assert!(err.contains("without --table-def"), "{err}");
    // None of the rows written after the ALTERs is in the output.
    let out = String::from_utf8_lossy(&out);
    assert!(!out.contains("r2c") && !out.contains("r3c"), "{out}");
}

#[test]
fn instant_dropped_column_is_kept_in_the_sdi() {
    // The SDI itself reads: the dropped column is kept, hidden, with its version.
    let ibd = real("innobase_reader/tb_row_version_3.ibd");
    let (out, err, ok) = run(&["innodb", "sdi", ibd.to_str().unwrap()]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let cols = v[1]["object"]["dd_object"]["columns"].as_array().unwrap();
    let dropped: Vec<(&str, &str)> = cols
        .iter()
        .filter(|c| {
            c["se_private_data"]
                .as_str()
                .unwrap()
                .contains("version_dropped=")
        })
        .map(|c| {
            (
                c["name"].as_str().unwrap(),
                c["se_private_data"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        dropped,
        [(
            "!hidden!_dropped_v2_p5_c3",
            "physical_pos=5;version_dropped=2;"
        )]
    );
}

/// A ROW_FORMAT=COMPRESSED MySQL 8 table (percona-parser's test_compressed.sh, KEY_BLOCK_SIZE=8):
/// its compressed SDI page is decompressed, and the rows are the script's: 5 inserted, then
/// three INSERT ... SELECT doubling them (`Generated row N` = N*10, `More data N` = N*20,
/// `Even more data N` = N*30, N an id of the rows before).
#[test]
fn compressed_table_decodes_with_its_sdi() {
    let ibd = real("percona-parser/test_compressed_compressed.ibd");
    let (out, err, ok) = run(&["innodb", "rows", ibd.to_str().unwrap(), "--format", "tsv"]);
    assert!(ok, "{err}");
    let mut recs = records(&out);
    assert_eq!(
        recs.remove(0),
        [&b"id"[..], b"data", b"number", b"created_at"]
    );
    assert_eq!(recs.len(), 40);
    let first = ["First", "Second", "Third", "Fourth", "Fifth"];
    let mut kinds = [0; 4];
    let ids: Vec<u64> = recs
        .iter()
        .map(|r| std::str::from_utf8(&r[0]).unwrap().parse().unwrap())
        .collect();
    for (i, r) in recs.iter().enumerate() {
        let data = std::str::from_utf8(&r[1]).unwrap();
        let number: u64 = std::str::from_utf8(&r[2]).unwrap().parse().unwrap();
        if i < 5 {
            assert_eq!(data, format!("{} compressed row", first[i]));
            assert_eq!((ids[i], number), (i as u64 + 1, 100 * (i as u64 + 1)));
            kinds[0] += 1;
            continue;
        }
        let (k, mul, n) = [
            ("Generated row ", 10, 1),
            ("More data ", 20, 2),
            ("Even more data ", 30, 3),
        ]
        .iter()
        .find_map(|(p, m, k)| Some((*k, *m, data.strip_prefix(p)?.parse::<u64>().ok()?)))
        .unwrap_or_else(|| panic!("{data}"));
        assert_eq!(number, n * mul, "{data}");
        assert!(ids.contains(&n) && n < ids[i], "{data}");
        kinds[k] += 1;
    }
    assert_eq!(kinds, [5, 5, 10, 20]);
    // And `innodb sdi` reads the compressed SDI page too.
    let (out, err, ok) = run(&["innodb", "sdi", "--format", "sql", ibd.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(String::from_utf8(out).unwrap().starts_with(
        "CREATE TABLE `test_compressed` (\n  `id` int NOT NULL,\n  `data` varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci,\n  `number` int,\n  `created_at` timestamp,\n  PRIMARY KEY (`id`)\n"
    ));
}
