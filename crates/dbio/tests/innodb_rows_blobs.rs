//! `dbio innodb rows` following BLOB chains outside an .ibd: shop_blobs.ibd (MariaDB 10.11,
//! DYNAMIC; one row whose LONGBLOB of 32,000 bytes lives on BLOB pages 4 and 5) cut into pages
//! scattered in reverse order at odd offsets of an image, and written to a PAGES_DIR by
//! `innodb pages`. With one BLOB page gone the row is rejected as `blob_missing`.

use crate::common::dbio;
use crate::innodb_rows::{fixture, pages_dir_of, random_bytes, rows_out};
use std::path::Path;

const S: usize = 16384;
const BLOBS: &str = "create table blobs (id int primary key, b longblob) row_format=dynamic";

/// The row of shop_blobs as TSV (the BLOB's bytes are text).
fn blob_row() -> String {
    format!("1\t{}", "BLOBDATA".repeat(4000))
}

/// The pages of shop_blobs.ibd but `leave_out`, last page first, each after a run of random
/// bytes of an odd number of 512-byte sectors.
fn scattered_image(path: &Path, leave_out: Option<usize>) {
    let ibd = std::fs::read(fixture("shop_blobs.ibd")).unwrap();
    assert_eq!(ibd.len(), 6 * S);
    let mut img = Vec::new();
    for (n, i) in (0..6).rev().enumerate() {
        img.extend(random_bytes((2 * n + 3) * 512, 11 + n as u64));
        if Some(i) != leave_out {
            img.extend_from_slice(&ibd[i * S..(i + 1) * S]);
        }
    }
    img.extend(random_bytes(1 << 20, 5));
    std::fs::write(path, &img).unwrap();
}

fn rows_tsv(src: &Path, def: &Path, more: &[&str]) -> (Vec<String>, String) {
    let mut args = vec![
        src.to_str().unwrap(),
        "--table-def",
        def.to_str().unwrap(),
        "--format",
        "tsv",
    ];
    args.extend_from_slice(more);
    let (out, err) = rows_out(&args);
    let lines = String::from_utf8(out)
        .unwrap()
        .lines()
        .skip(1)
        .map(str::to_string)
        .collect();
    (lines, err)
}

#[test]
fn blob_chains_from_an_image_and_a_pages_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let def = tmp.path().join("blobs.sql");
    std::fs::write(&def, BLOBS).unwrap();
    // From an image: the chain is followed by page number, wherever the pages are.
    let img = tmp.path().join("disk.img");
    scattered_image(&img, None);
    let (rows, err) = rows_tsv(&img, &def, &[]);
    assert_eq!(rows, [blob_row()], "{err}");
    assert!(err.contains("1 row(s) written (0 deleted)"), "{err}");
    assert!(err.contains(", 0 rejected"), "{err}");

    // From a PAGES_DIR written by innodb pages.
    let (_out, pages_dir) = pages_dir_of("dbio-rows-blobs-", &[&img]);
    let (rows, err) = rows_tsv(&pages_dir, &def, &[]);
    assert_eq!(rows, [blob_row()], "{err}");
    assert!(err.contains(", 0 rejected"), "{err}");
}

#[test]
fn a_missing_blob_page_rejects_its_row_as_blob_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let def = tmp.path().join("blobs.sql");
    std::fs::write(&def, BLOBS).unwrap();
    // Page 5, the second page of the chain, is not in the image.
    let img = tmp.path().join("disk.img");
    scattered_image(&img, Some(5));
    // The only record of the index does not decode: no index fits, and the error says why.
    let o = dbio()
        .args(["innodb", "rows"])
        .arg(&img)
        .arg("--table-def")
        .arg(&def)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("space 9 index 27: 0 of 1 records checked fit, rejected: blob_missing 1"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
    // With the index named, the run goes on: no row written (a row without its BLOB value
    // is not written), the record counted as blob_missing.
    let summary = tmp.path().join("summary.json");
    let (rows, err) = rows_tsv(
        &img,
        &def,
        &["--index-id", "27", "--summary", summary.to_str().unwrap()],
    );
    assert!(rows.is_empty(), "{rows:?}");
    assert!(
        err.contains("1 record(s); 0 row(s) written (0 deleted), 0 filtered out by the deleted filter, 0 older version(s) dropped, 1 rejected (blob_missing 1)"),
        "{err}"
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(s["rejected"], serde_json::json!({"blob_missing": 1}), "{s}");
}
