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
