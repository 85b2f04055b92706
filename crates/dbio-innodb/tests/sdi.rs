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
