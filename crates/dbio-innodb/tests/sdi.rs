//! MySQL 8 SDI read from real tablespaces, compared with `ibd2sdi`'s output for the same
//! files (testdata/innodb/mysql-real/percona-parser/*_sdi.json).

use dbio_innodb::sdi;
use std::path::{Path, PathBuf};

fn real(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/innodb/mysql-real")
        .join(rel)
}

/// Every `*_sdi.json` whose .ibd is in testdata: (json, ibd). The others (charset_test,
/// compressed_test, json_test, lob_test) have no .ibd in the public repository.
fn pairs() -> Vec<(PathBuf, PathBuf)> {
    let dir = real("percona-parser");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        if let Some(stem) = name.strip_suffix("_sdi.json") {
            let ibd = dir.join(format!("{stem}.ibd"));
            if ibd.exists() {
                out.push((p, ibd));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_fixtures_with_an_ibd_are_types_test_and_secondary_index() {
    let names: Vec<String> = pairs()
        .iter()
        .map(|(_, i)| i.file_name().unwrap().to_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["secondary_index.ibd", "types_test.ibd"]);
}

#[test]
fn sdi_equals_ibd2sdi_output() {
    for (json, ibd) in pairs() {
        let recs = sdi::read_file(&ibd).unwrap();
        let ours = sdi::ibd2sdi(&recs);
        let want = std::fs::read_to_string(&json).unwrap();
        let a: serde_json::Value = serde_json::from_str(&ours).unwrap();
        let b: serde_json::Value = serde_json::from_str(&want).unwrap();
        assert_eq!(a, b, "{}", ibd.display());
        // Byte for byte too: the stored JSON text is inserted as ibd2sdi inserts it.
        assert_eq!(ours, want, "{}", ibd.display());
    }
}

/// The definition from the SDI: the clustered index and tablespace from se_private_data, the
/// key, FTS_DOC_ID kept in the record but not written, the hidden system columns left out.
#[test]
fn sakila_film_text_definition() {
    let recs = sdi::read_file(&real("sakila/8.0/film_text.ibd")).unwrap();
    let d = dbio_innodb::rows::sdi_def::table_def(&recs, None, "film_text.ibd").unwrap();
    assert_eq!((d.index_id, d.space_id, d.root), (175, 11, 4));
    assert_eq!(d.schema, "sakila");
    let cols: Vec<(&str, Option<bool>)> = d
        .def
        .columns
        .iter()
        .map(|c| (c.name.as_str(), c.generated))
        .collect();
    assert_eq!(
        cols,
        [
            ("film_id", None),
            ("title", None),
            ("description", None),
            ("FTS_DOC_ID", Some(true))
        ]
    );
    assert_eq!(d.def.primary_key, [0]);
    assert!(!d.def.create_sql.contains("FTS_DOC_ID"));
    // A table that is not there.
    let e = dbio_innodb::rows::sdi_def::table_def(&recs, Some("film"), "x").unwrap_err();
    assert_eq!(
        e.to_string(),
        "the SDI describes no table \"film\" (it describes sakila/film_text)"
    );
}

/// Damaged SDI pages (bytes of the root page and of page 0's root pointer changed at random)
/// give an error or records, never a panic.
#[test]
fn damaged_sdi_pages_never_panic() {
    let good = std::fs::read(real("sakila/8.0/film.ibd")).unwrap();
    let ps = 16384;
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut ok, mut failed) = (0, 0);
    for round in 0..3000 {
        let mut b = good.clone();
        let n = 1 + next() % 8;
        for _ in 0..n {
            // Mostly the SDI root page's header and records, sometimes page 0's pointer.
            let at = if round % 10 == 0 {
                10505 + (next() % 8) as usize
            } else {
                3 * ps + (next() % 700) as usize
            };
            b[at] = next() as u8;
        }
        let root = sdi::root_from_page0(&b[..ps]);
        let get = |page_no: u32| -> Result<Vec<u8>, String> {
            let off = page_no as usize * ps;
            b.get(off..off + ps)
                .map(<[u8]>::to_vec)
                .ok_or_else(|| "beyond the end".to_string())
        };
        match root.and_then(|r| sdi::read(r, &get)) {
            Ok(_) => ok += 1,
            Err(_) => failed += 1,
        }
    }
    // Both outcomes happen: changes outside what is read leave the SDI readable.
    assert!(ok > 0 && failed > 0, "{ok} read, {failed} refused");
}
