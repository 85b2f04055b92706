//! `dbio innodb pages` and `dbio innodb grep` against real tablespaces made by MariaDB 10.11
//! (testdata/innodb, see testdata/README.md), alone and hidden at odd 512-byte offsets in an
//! image of random data and zeros.

use crate::common::{require_root, require_tool};

use crate::common::dbio;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/innodb")
}

fn fixture(name: &str) -> PathBuf {
    testdata().join(name)
}

const IBD: [&str; 11] = [
    "shop_orders.ibd",
    "shop_quad.ibd",
    "shop_typed.ibd",
    "shop_nopk.ibd",
    "shop_blobs.ibd",
    "shop_legacy.ibd",
    "shop_packed.ibd",
    "shop_zipped.ibd",
    "shop_gone.ibd",
    "small_pages8.ibd",
    "small_pages8c.ibd",
];

/// A scratch directory on another filesystem than testdata when one exists (/dev/shm), so
/// the same-device refusal does not apply; else the flag that allows it.
fn scratch() -> (tempfile::TempDir, Vec<&'static str>) {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(d) = tempfile::Builder::new()
            .prefix("dbio-innodb-")
            .tempdir_in(shm)
        {
            return (d, vec![]);
        }
    }
    (tempfile::tempdir().unwrap(), vec!["--allow-same-device"])
}

/// Pages written by InnoDB in a tablespace file, counted independently of dbio: every page
/// whose LSN field (bytes 16..24) is not zero.
fn written_pages(data: &[u8], page_size: usize) -> usize {
    data.chunks(page_size)
        .filter(|p| p.len() == page_size && p[16..24].iter().any(|&b| b != 0))
        .count()
}

fn page_size_of(name: &str) -> usize {
    if name.starts_with("small_") || name == "shop_zipped.ibd" {
        8192
    } else {
        16384
    }
}

fn pages_json(sources: &[PathBuf], extra: &[&str]) -> (Value, tempfile::TempDir) {
    let (dir, flags) = scratch();
    let out = dir.path().join("out");
    let mut cmd = dbio();
    cmd.args(["innodb", "pages", "--format", "json", "--output-dir"])
        .arg(&out)
        .args(flags)
        .args(extra)
        .args(sources);
    let o = cmd.output().unwrap();
    assert!(
        o.status.success(),
        "dbio failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    (serde_json::from_slice(&o.stdout).unwrap(), dir)
}

fn index_row(v: &Value, space: u64) -> &Value {
    v["indexes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["space_id"] == space && r["index_id"].as_u64().unwrap() > 5)
        .unwrap_or_else(|| panic!("no index row for space {space}: {v}"))
}

#[test]
fn finds_every_page_of_each_tablespace() {
    for name in IBD {
        let data = std::fs::read(fixture(name)).unwrap();
        let expect = written_pages(&data, page_size_of(name));
        assert!(expect >= 4, "{name}: fixture has {expect} written pages");
        let (v, _d) = pages_json(&[fixture(name)], &[]);
        assert_eq!(v["sources"][0]["pages_found"], expect, "{name}: {v}");
        let space = &v["spaces"][0];
        assert_eq!(space["page_size_bytes"], page_size_of(name), "{name}");
        assert_eq!(space["page_size_from"], "fsp_flags", "{name}");
        let algo = if matches!(
            name,
            "shop_legacy.ibd" | "small_pages8c.ibd" | "shop_zipped.ibd"
        ) {
            "crc32"
        } else {
            "full_crc32"
        };
        assert_eq!(v["checksum_algorithms"][algo], expect, "{name}: {v}");
    }
}

#[test]
fn summary_counts_formats_records_and_deleted_rows() {
    let (v, d) = pages_json(&[fixture("shop_orders.ibd"), fixture("shop_quad.ibd")], &[]);
    let orders = index_row(&v, 5);
    assert_eq!(orders["format"], "COMPACT");
    assert_eq!(orders["records"], 4); // 4 rows, one of them delete-marked
    assert_eq!(orders["deleted_records"], 1);
    assert_eq!(orders["levels"], 1);
    assert_eq!(orders["checksum"]["intact"], 1);
    let quad = index_row(&v, 6);
    assert_eq!(quad["format"], "REDUNDANT");
    assert_eq!(quad["records"], 4);
    // The INDEX pages were written and the manifest traces them back.
    let file = d.path().join("out").join(orders["file"].as_str().unwrap());
    let written = std::fs::read(&file).unwrap();
    let src = std::fs::read(fixture("shop_orders.ibd")).unwrap();
    let man: Value =
        serde_json::from_slice(&std::fs::read(d.path().join("out/manifest.json")).unwrap())
            .unwrap();
    let e = man["pages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["space_id"] == 5 && e["page_type"] == "INDEX")
        .unwrap();
    let so = e["source_offset"].as_u64().unwrap() as usize;
    let fo = e["file_offset"].as_u64().unwrap() as usize;
    assert_eq!(&written[fo..fo + 16384], &src[so..so + 16384]);
    assert_eq!(e["status"], "intact");
    assert_eq!(e["checksum"], "full_crc32");
}

#[test]
fn mariadb_page_compressed_pages_are_found_and_kept() {
    let (v, d) = pages_json(&[fixture("shop_packed.ibd")], &[]);
    assert_eq!(v["pages_found"], 4, "{v}");
    assert_eq!(v["checksum_algorithms"]["full_crc32"], 4);
    let row = &v["page_files"][0];
    assert_eq!(row["kind"], "COMPRESSED");
    assert_eq!(row["space_id"], 11);
    assert_eq!(row["pages"], 3);
    let man: Value =
        serde_json::from_slice(&std::fs::read(d.path().join("out/manifest.json")).unwrap())
            .unwrap();
    let e = &man["pages"][0];
    assert_eq!(e["file"], "11/COMPRESSED/1.page");
    assert_eq!(e["page_type"], "FULL_CRC32_COMPRESSED");
    assert!(e["compressed_bytes"].as_u64().unwrap() < 16384);
}

#[test]
fn row_format_compressed_pages_are_found_by_their_zip_checksum() {
    let (v, _d) = pages_json(&[fixture("shop_zipped.ibd")], &[]);
    assert_eq!(v["pages_found"], 4, "{v}");
    assert_eq!(v["checksum_algorithms"]["crc32"], 4);
    assert_eq!(v["spaces"][0]["page_size_bytes"], 8192);
    let row = index_row(&v, 10);
    assert_eq!(row["format"], "COMPRESSED");
    assert_eq!(row["records"], 2);
}

#[test]
fn legacy_innodb_checksum_accepted_by_mariadb_is_intact() {
    let (v, _d) = pages_json(&[fixture("shop_legacy_innodb.ibd")], &[]);
    assert_eq!(v["pages_found"], 4, "{v}");
    assert_eq!(v["checksum_algorithms"]["innodb"], 4, "{v}");
    // One flipped byte and the page is torn, not intact under any algorithm.
    let mut data = std::fs::read(fixture("shop_legacy_innodb.ibd")).unwrap();
    data[3 * 16384 + 7000] ^= 2;
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("bad.ibd");
    std::fs::write(&f, &data).unwrap();
    let (v, _d) = pages_json(&[f], &[]);
    assert_eq!(v["checksum_algorithms"]["innodb"], 3, "{v}");
    assert_eq!(v["checksum_algorithms"]["torn"], 1, "{v}");
}

#[test]
fn blob_pages_are_keyed_by_space_and_page() {
    let (v, d) = pages_json(&[fixture("shop_blobs.ibd")], &[]);
    assert_eq!(v["page_files"][0]["space_id"], 9);
    assert_eq!(v["page_files"][0]["kind"], "BLOB");
    assert_eq!(v["page_files"][0]["pages"], 2);
    let dir = d.path().join("out/9/BLOB");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["4.page", "5.page"]);
}

/// Deterministic pseudo-random bytes (xorshift64*).
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

/// An image like a device after DROP DATABASE: random data and zeros with every fixture
/// written at an odd multiple of 512 bytes. Returns the image and (file, offset) placements.
fn build_image() -> (Vec<u8>, Vec<(&'static str, usize)>) {
    let mut img = random_bytes(300 * 1024 + 512, 7);
    img.extend(vec![0u8; 64 * 1024]);
    let mut placed = Vec::new();
    for (i, name) in IBD.iter().chain(["ibdata1_16k_head"].iter()).enumerate() {
        img.extend(random_bytes((2 * i + 3) * 512, i as u64 + 11));
        if img.len().is_multiple_of(1024) {
            img.extend(vec![0u8; 512]); // keep the start an odd multiple of 512
        }
        assert_eq!(img.len() % 1024, 512);
        placed.push((*name, img.len()));
        img.extend(std::fs::read(fixture(name)).unwrap());
        img.extend(vec![0u8; 1536]);
    }
    img.extend(random_bytes(100 * 1024, 99));
    (img, placed)
}

#[test]
fn finds_pages_again_at_odd_offsets_in_random_data() {
    let (dir, _) = scratch();
    let (img, placed) = build_image();
    let tmp = tempfile::tempdir().unwrap();
    let image = tmp.path().join("device.img");
    std::fs::write(&image, &img).unwrap();
    let mut expect = 0;
    for (name, _) in &placed {
        let data = std::fs::read(fixture(name)).unwrap();
        expect += written_pages(&data, page_size_of(name));
    }
    // pread path (as for block devices), one thread: the same pages.
    let o = dbio()
        .args([
            "innodb",
            "pages",
            "--format",
            "json",
            "--no-mmap",
            "--threads",
            "1",
            "--output-dir",
        ])
        .arg(dir.path().join("pread"))
        .arg(&image)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["pages_found"], expect, "{v}");
    let out = dir.path().join("out");
    let o = dbio()
        .args(["innodb", "pages", "--format", "json", "--output-dir"])
        .arg(&out)
        .arg(&image)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["pages_found"], expect, "{v}");
    assert_eq!(v["duplicates_dropped"], 0);
    // Every INDEX page in the manifest sits where the fixture put it.
    let man: Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    for e in man["pages"].as_array().unwrap() {
        let off = e["source_offset"].as_u64().unwrap() as usize;
        let ps = e["page_size"].as_u64().unwrap() as usize;
        let (name, base) = placed.iter().rev().find(|(_, b)| *b <= off).unwrap();
        assert_eq!(
            (off - base) % ps,
            0,
            "{name}: page at {off} not on a page boundary"
        );
        let no = e["page_no"].as_u64().unwrap() as usize;
        assert_eq!(off - base, no * ps, "{name}: page {no} found at {off}");
        assert_eq!(e["status"], "intact");
    }
    // The dictionary in the image names the tables.
    let orders = index_row(&v, 5);
    assert_eq!(orders["table"], "shop/orders");
    assert_eq!(orders["index"], "PRIMARY");
}

#[test]
fn flipped_byte_is_torn_not_hidden() {
    let mut data = std::fs::read(fixture("shop_orders.ibd")).unwrap();
    data[3 * 16384 + 5000] ^= 0x40;
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("flipped.ibd");
    std::fs::write(&f, &data).unwrap();
    let (v, _d) = pages_json(&[f], &[]);
    let row = index_row(&v, 5);
    assert_eq!(row["checksum"]["torn"], 1, "{v}");
    assert_eq!(row["checksum"]["intact"], 0);
    assert_eq!(v["pages_found"], 4);
}

#[test]
fn torn_write_without_trailer_is_found_by_structure() {
    let mut data = std::fs::read(fixture("shop_orders.ibd")).unwrap();
    // The last 4 KiB of the INDEX page never reached the disk.
    let p = 3 * 16384;
    for b in &mut data[p + 12288..p + 16384] {
        *b = 0;
    }
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("torn.ibd");
    std::fs::write(&f, &data).unwrap();
    let (v, _d) = pages_json(&[f], &[]);
    let row = index_row(&v, 5);
    assert_eq!(row["checksum"]["heuristic"], 1, "{v}");
}

#[test]
fn names_tables_from_a_real_ibdata1() {
    let mut sources = vec![fixture("ibdata1_16k_head")];
    sources.extend(IBD[..9].iter().map(|n| fixture(n)));
    let (v, _d) = pages_json(&sources, &[]);
    let names: Vec<(u64, String, String)> = v["indexes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["space_id"].as_u64().unwrap() > 0)
        .map(|r| {
            (
                r["space_id"].as_u64().unwrap(),
                r["table"].as_str().unwrap_or("-").to_string(),
                r["index"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect();
    let want = [
        (5, "shop/orders", "PRIMARY"),
        (6, "shop/quad", "PRIMARY"),
        (7, "shop/typed", "PRIMARY"),
        (8, "shop/nopk", "GEN_CLUST_INDEX"),
        (9, "shop/blobs", "PRIMARY"),
        (10, "shop/zipped", "PRIMARY"),
        (12, "shop/gone", "PRIMARY"),
        (13, "shop/legacy", "PRIMARY"),
    ];
    for (s, t, i) in want {
        assert!(
            names.contains(&(s, t.to_string(), i.to_string())),
            "{s} {t} {i} missing in {names:?}"
        );
    }
    let dict = v["dictionary"].as_array().unwrap();
    let gone = dict.iter().find(|t| t["name"] == "shop/gone").unwrap();
    assert_eq!(gone["dropped"], true);
    assert_eq!(gone["indexes"][0]["name"], "PRIMARY");
    assert_eq!(gone["indexes"][0]["pages_found"], 1);
    assert_eq!(gone["indexes"][0]["root_page"], 3);
    // shop/gone was dropped: its name comes from delete-marked dictionary rows.
    for r in v["indexes"].as_array().unwrap() {
        let gone = r["table"] == "shop/gone";
        assert_eq!(r["dropped"], gone, "{r}");
    }
}

#[test]
fn text_summary_snapshot() {
    let (dir, flags) = scratch();
    let mut sources = vec![fixture("ibdata1_16k_head")];
    sources.extend(IBD.iter().map(|n| fixture(n)));
    let o = dbio()
        .current_dir(testdata())
        .args(["innodb", "pages", "--output-dir"])
        .arg(dir.path().join("out"))
        .args(flags)
        .args(["ibdata1_16k_head"])
        .args(IBD)
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    let text: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with("scanned "))
        .collect();
    insta::assert_snapshot!(text.join("\n"));
}

fn grep_json(args: &[&str], sources: &[PathBuf]) -> Value {
    let o = dbio()
        .args(["innodb", "grep", "--format", "json"])
        .args(args)
        .args(sources)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn hits(v: &Value) -> &Vec<Value> {
    v["hits"].as_array().unwrap()
}

#[test]
fn grep_int_finds_the_lost_row_in_an_image() {
    let (img, placed) = build_image();
    let tmp = tempfile::tempdir().unwrap();
    let image = tmp.path().join("device.img");
    std::fs::write(&image, &img).unwrap();
    let v = grep_json(&["--int", "837492636"], &[image]);
    let in_pages: Vec<&Value> = hits(&v).iter().filter(|h| !h["page"].is_null()).collect();
    assert_eq!(in_pages.len(), 1, "{v}");
    let h = in_pages[0];
    let p = &h["page"];
    assert_eq!(p["space_id"], 5);
    assert_eq!(p["page_no"], 3);
    assert_eq!(p["index_id"], 23);
    assert_eq!(p["record"]["heap_no"], 3);
    assert_eq!(p["record"]["deleted"], false);
    let base = placed
        .iter()
        .find(|(n, _)| *n == "shop_orders.ibd")
        .unwrap()
        .1;
    assert_eq!(
        p["page_offset_bytes"].as_u64().unwrap() as usize,
        base + 3 * 16384
    );
    assert_eq!(v["patterns"][0]["hex"], "B1 EB 1F 9C");
}

#[test]
fn grep_smallint_sequence_all_in_page_and_record() {
    let sources: Vec<PathBuf> = IBD.iter().map(|n| fixture(n)).collect();
    for mode in ["page", "record"] {
        let v = grep_json(
            &[
                "--smallint",
                "7",
                "--smallint",
                "3",
                "--smallint",
                "8",
                "--all-in",
                mode,
            ],
            &sources,
        );
        let hs = hits(&v);
        assert!(!hs.is_empty(), "{mode}: {v}");
        for h in hs {
            assert!(
                h["source"].as_str().unwrap().ends_with("shop_quad.ibd"),
                "{mode}: {h}"
            );
            assert_eq!(h["page"]["page_no"], 3);
            if mode == "record" {
                assert_eq!(h["page"]["record"]["heap_no"], 3, "{h}");
            }
        }
    }
    // Adjacent columns as one pattern: exactly the row (7,3,7,8).
    let v = grep_json(&["--smallint", "7,3,7,8"], &sources);
    assert_eq!(hits(&v).len(), 1, "{v}");
    assert_eq!(hits(&v)[0]["page"]["record"]["heap_no"], 3);
}

#[test]
fn grep_typed_values_at_exact_page_and_record() {
    let f = vec![fixture("shop_typed.ibd")];
    let cases: &[&[&str]] = &[
        &["--datetime", "2019-05-13 14:35:07.123456"],
        &["--decimal", "10,2:1234.56"],
        &["--varchar", "Grüße aus Köln", "--charset", "latin1"],
        &["--date", "2019-05-13"],
        &["--time", "-12:34:56"],
        &["--mediumint", "-100000"],
        &["--bigint", "9000000000000000001"],
        &["--int", "4000000000", "--unsigned"],
        &["--char", "10:abc"],
        &["--timestamp", "2019-05-13 14:00:00", "--tz", "+02:00"],
    ];
    for args in cases {
        let v = grep_json(args, &f);
        let hs = hits(&v);
        assert_eq!(hs.len(), 1, "{args:?}: {v}");
        let p = &hs[0]["page"];
        assert_eq!(p["space_id"], 7, "{args:?}");
        assert_eq!(p["page_no"], 3, "{args:?}");
        assert_eq!(p["record"]["heap_no"], 2, "{args:?}: {v}");
        assert_eq!(p["record"]["deleted"], false, "{args:?}");
    }
    // The deleted row is still there, delete-marked.
    let v = grep_json(
        &["--varchar", "deleted varchar row", "--charset", "latin1"],
        &f,
    );
    assert_eq!(hits(&v)[0]["page"]["record"]["deleted"], true, "{v}");
    assert_eq!(hits(&v)[0]["page"]["record"]["heap_no"], 3);
}

#[test]
fn grep_hex_with_wildcards_and_context() {
    let o = dbio()
        .args(["innodb", "grep", "-C", "16", "B1 EB ?? 9C"])
        .arg(fixture("shop_orders.ibd"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let s = String::from_utf8(o.stdout).unwrap();
    assert!(
        s.contains("hex:B1 EB ?? 9C  space 5 page 3 INDEX index 23"),
        "{s}"
    );
    assert!(s.contains("record heap 3"), "{s}");
    assert!(s.contains("b1 eb 1f 9c"), "{s}");
}

#[test]
fn show_bytes_prints_the_encoding() {
    let o = dbio()
        .args([
            "innodb",
            "grep",
            "--show-bytes",
            "--int",
            "837492636",
            "--date",
            "2019-05-13",
            "--datetime",
            "2019-05-13 14:35:07",
            "--decimal",
            "10,2:1234.56",
            "--smallint",
            "7,3,7,8",
        ])
        .output()
        .unwrap();
    assert!(o.status.success());
    insta::assert_snapshot!(String::from_utf8(o.stdout).unwrap(), @r"
    smallint:7,3,7,8: 80 07 80 03 80 07 80 08
    int:837492636: B1 EB 1F 9C
    date:2019-05-13: 8F C6 AD
    datetime:2019-05-13 14:35:07: 99 A3 1A E8 C7
    decimal(10,2):1234.56: 80 00 04 D2 38
    ");
}

/// `-o FILE` is the result instead of stdout for both subcommands (pages' summary report,
/// grep's hits, --show-bytes' patterns); pages' directory is `--output-dir`, and the old
/// `--out` is refused as an unknown flag.
#[test]
fn output_file_takes_the_result_and_output_dir_the_pages() {
    let (dir, flags) = scratch();
    let (out, report) = (dir.path().join("pages"), dir.path().join("report.json"));
    let src = fixture("shop_orders.ibd");
    let o = dbio()
        .args(["innodb", "pages", "--format", "json", "--output-dir"])
        .arg(&out)
        .arg("-o")
        .arg(&report)
        .args(&flags)
        .arg(&src)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.is_empty(), "the report went to -o, not stdout");
    let v: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(v["schema"], "dbio.innodb.pages/1");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        v["pages_written"].as_u64().unwrap() as usize,
        manifest["pages"].as_array().unwrap().len()
    );
    // --out is gone; --format jsonl is grep's.
    dbio()
        .args(["innodb", "pages", "--out"])
        .arg(dir.path().join("x"))
        .arg(&src)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--out"));
    dbio()
        .args(["innodb", "pages", "--format", "jsonl", "--output-dir"])
        .arg(dir.path().join("y"))
        .arg(&src)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("jsonl"));
    // grep's hits and --show-bytes' patterns go to -o FILE too.
    let hits = dir.path().join("hits.jsonl");
    let o = dbio()
        .args(["innodb", "grep", "--format", "jsonl", "--int", "1", "-o"])
        .arg(&hits)
        .arg(&src)
        .output()
        .unwrap();
    assert!(o.status.success() && o.stdout.is_empty());
    let text = std::fs::read_to_string(&hits).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "summary");
    assert_eq!(
        last["hit_count"].as_u64().unwrap() as usize,
        text.lines().count() - 1
    );
    assert!(last["hit_count"].as_u64().unwrap() > 0);
    let pats = dir.path().join("patterns.txt");
    let o = dbio()
        .args(["innodb", "grep", "--show-bytes", "--int", "837492636", "-o"])
        .arg(&pats)
        .output()
        .unwrap();
    assert!(o.status.success() && o.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(&pats).unwrap(),
        "int:837492636: B1 EB 1F 9C\n"
    );
}

// ---------------------------------------------------------------- bad inputs

#[test]
fn unreadable_source_fails_with_its_name() {
    let (dir, _) = scratch();
    dbio()
        .args(["innodb", "pages", "/nonexistent/ibdata1", "--output-dir"])
        .arg(dir.path().join("o"))
        .assert()
        .code(1)
        .stderr(predicates::str::contains("/nonexistent/ibdata1"));
    dbio()
        .args(["innodb", "grep", "--int", "1", "/nonexistent/x.ibd"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("/nonexistent/x.ibd"));
    // A directory is not a source.
    dbio()
        .args(["innodb", "grep", "--int", "1"])
        .arg(testdata())
        .assert()
        .code(1)
        .stderr(predicates::str::contains("testdata"));
}

#[test]
fn missing_page_zero_falls_back_to_checksums() {
    let data = std::fs::read(fixture("small_pages8.ibd")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("nopage0.ibd");
    std::fs::write(&f, &data[8192..]).unwrap();
    let (v, _d) = pages_json(&[f], &[]);
    assert_eq!(v["pages_found"], written_pages(&data[8192..], 8192));
    assert_eq!(v["spaces"][0]["page_size_bytes"], 8192);
    assert_eq!(v["spaces"][0]["page_size_from"], "checksum");
    assert!(
        v["warnings"].to_string().contains("page 0 not found"),
        "{v}"
    );
}

#[test]
fn truncated_image_is_reported() {
    let data = std::fs::read(fixture("shop_orders.ibd")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("cut.ibd");
    std::fs::write(&f, &data[..3 * 16384 + 9000]).unwrap();
    let (v, _d) = pages_json(&[f], &[]);
    assert_eq!(v["pages_found"], 3);
    assert!(v["warnings"].to_string().contains("cut short"), "{v}");
}

#[test]
fn patterns_that_cannot_be_encoded_are_usage_errors() {
    let src = fixture("shop_orders.ibd");
    for args in [
        vec!["--tinyint", "300"],
        vec!["--int", "12x"],
        vec!["--decimal", "4,2:123.456"],
        vec!["--decimal", "1234.5"],
        vec!["--date", "2019-13-40"],
        vec!["--char", "2:abc"],
        vec!["--varchar", "\u{1F600}", "--charset", "latin1"],
        vec!["--timestamp", "2019-05-13 14:00:00", "--tz", "Mars/Olympus"],
        vec!["zz"],
        vec!["?? ??"],
    ] {
        dbio()
            .args(["innodb", "grep"])
            .args(&args)
            .arg(&src)
            .assert()
            .code(2)
            .stderr(predicates::str::contains("dbio:"));
    }
}

#[test]
fn refuses_out_dir_on_the_scanned_device() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("image.ibd");
    std::fs::copy(fixture("shop_orders.ibd"), &src).unwrap();
    let out = tmp.path().join("recovered");
    dbio()
        .args(["innodb", "pages"])
        .arg(&src)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--allow-same-device"));
    assert!(!out.exists(), "nothing may be written when refused");
    dbio()
        .args(["innodb", "pages", "--allow-same-device"])
        .arg(&src)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .success();
    assert!(out.join("manifest.json").exists());
}

#[test]
fn refuses_non_empty_out_dir_without_force() {
    let (dir, flags) = scratch();
    std::fs::write(dir.path().join("keep.txt"), b"x").unwrap();
    dbio()
        .args(["innodb", "pages"])
        .arg(fixture("shop_orders.ibd"))
        .arg("--output-dir")
        .arg(dir.path())
        .args(&flags)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--force"));
    dbio()
        .args(["innodb", "pages", "--force"])
        .arg(fixture("shop_orders.ibd"))
        .arg("--output-dir")
        .arg(dir.path())
        .args(&flags)
        .assert()
        .success();
    assert!(dir.path().join("keep.txt").exists());
}

#[test]
fn bad_page_size_and_step_are_usage_errors() {
    let (dir, flags) = scratch();
    for args in [["--page-size", "12k"], ["--step", "100"]] {
        dbio()
            .args(["innodb", "pages"])
            .args(args)
            .arg(fixture("shop_orders.ibd"))
            .arg("--output-dir")
            .arg(dir.path().join("o"))
            .args(&flags)
            .assert()
            .code(2);
    }
}

// ---------------------------------------------------------------- a real block device

/// Detaches the loop device and unmounts on drop, whatever the test did.
struct LoopGuard {
    dev: String,
    mounts: Vec<PathBuf>,
}

impl Drop for LoopGuard {
    fn drop(&mut self) {
        for m in &self.mounts {
            let _ = std::process::Command::new("umount").arg(m).status();
        }
        if !self.dev.is_empty() {
            let _ = std::process::Command::new("losetup")
                .args(["-d", &self.dev])
                .status();
        }
    }
}

/// Runs `cmd args` with its output kept (not on the test run's terminal); whether it succeeded.
fn sh(cmd: &str, args: &[&str]) -> bool {
    std::process::Command::new(cmd)
        .args(args)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// The article's case: tablespaces on XFS, deleted (DROP DATABASE), the filesystem unmounted
/// and scanned as a raw block device.
#[test]
#[ignore = "needs root, losetup and mkfs.xfs; scripts/test.sh runs it"]
fn finds_deleted_tablespaces_on_an_xfs_loop_device() {
    require_root("loop devices, mounts");
    assert!(
        sh("mkfs.xfs", &["-V"]),
        "needs mkfs.xfs (xfsprogs; scripts/setup-test-env.sh installs it)"
    );
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("disk.img");
    let f = std::fs::File::create(&img).unwrap();
    f.set_len(320 << 20).unwrap();
    drop(f);
    assert!(sh("mkfs.xfs", &["-q", img.to_str().unwrap()]));
    let mnt = tmp.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let mut guard = LoopGuard {
        dev: String::new(),
        mounts: vec![],
    };
    assert!(sh(
        "mount",
        &["-o", "loop", img.to_str().unwrap(), mnt.to_str().unwrap()]
    ));
    guard.mounts.push(mnt.clone());
    let db = mnt.join("mysql/shop");
    std::fs::create_dir_all(&db).unwrap();
    std::fs::copy(fixture("ibdata1_16k_head"), mnt.join("mysql/ibdata1")).unwrap();
    let mut expect = written_pages(&std::fs::read(fixture("ibdata1_16k_head")).unwrap(), 16384);
    for name in &IBD[..9] {
        // page_compressed tablespaces are sparse, as MariaDB leaves them (punched holes): on
        // the device a compressed page is followed by unrelated blocks, not by its zeros.
        let sparse = if *name == "shop_packed.ibd" {
            "--sparse=always"
        } else {
            "--sparse=never"
        };
        let (from, to) = (fixture(name), db.join(name));
        assert!(sh(
            "cp",
            &[sparse, from.to_str().unwrap(), to.to_str().unwrap()]
        ));
        expect += written_pages(&std::fs::read(fixture(name)).unwrap(), page_size_of(name));
    }
    assert!(sh("sync", &[]));
    std::fs::remove_dir_all(&db).unwrap(); // DROP DATABASE shop
    assert!(sh("umount", &[mnt.to_str().unwrap()]));
    guard.mounts.clear();
    let out = std::process::Command::new("losetup")
        .args(["-f", "--show", "-r", img.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "losetup: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    guard.dev = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let dev = guard.dev.clone();
    // A loop device number is reused by the tests that run beside this one: drop whatever its
    // buffer cache still holds from an earlier binding (a full run once found a stray 4 KiB
    // page of a space no fixture has; alone the test never did).
    assert!(sh("blockdev", &["--flushbufs", &dev]));

    // DIR on the filesystem holding the loop device's backing file: refused.
    dbio()
        .args(["innodb", "pages", &dev, "--output-dir"])
        .arg(tmp.path().join("recovered"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--allow-same-device"));
    // DIR on a filesystem mounted from the scanned device itself: refused.
    assert!(sh("mount", &["-o", "ro", &dev, mnt.to_str().unwrap()]));
    guard.mounts.push(mnt.clone());
    dbio()
        .args(["innodb", "pages", &dev, "--output-dir"])
        .arg(mnt.join("recovered"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--allow-same-device"));
    assert!(sh("umount", &[mnt.to_str().unwrap()]));
    guard.mounts.clear();

    // Elsewhere: every page of the deleted files, named from the deleted ibdata1.
    let (v, _d) = pages_json(&[PathBuf::from(&dev)], &[]);
    assert_eq!(v["pages_found"], expect, "{v}");
    assert_eq!(
        v["checksum_algorithms"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["crc32", "full_crc32"]
    );
    assert_eq!(index_row(&v, 5)["table"], "shop/orders");
    // And grep reads the device too.
    let g = grep_json(&["--int", "837492636"], &[PathBuf::from(&dev)]);
    let inpage: Vec<&Value> = hits(&g).iter().filter(|h| !h["page"].is_null()).collect();
    assert_eq!(inpage.len(), 1, "{g}");
    assert_eq!(inpage[0]["page"]["space_id"], 5);
}

/// Fresh tablespaces from the real MariaDB in the test environment (the script starts its
/// own throwaway servers): the committed fixtures are not the only data the tests see.
#[test]
#[ignore = "needs root and mariadb-server; scripts/test.sh runs it"]
fn regenerated_tablespaces_from_mariadb() {
    require_root("throwaway MariaDB servers");
    assert!(
        Path::new("/usr/sbin/mariadbd").exists(),
        "needs /usr/sbin/mariadbd (mariadb-server; scripts/setup-test-env.sh installs it)"
    );
    require_tool(
        "mariadb-install-db",
        &["--help"],
        "mariadb-server; scripts/setup-test-env.sh installs it",
    );
    let tmp = tempfile::tempdir().unwrap();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/make-innodb-testdata.sh");
    let o = std::process::Command::new("bash")
        .arg(&script)
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut sources = vec![tmp.path().join("ibdata1_16k_head")];
    let mut expect = written_pages(&std::fs::read(&sources[0]).unwrap(), 16384);
    for name in IBD {
        let p = tmp.path().join(name);
        expect += written_pages(&std::fs::read(&p).unwrap(), page_size_of(name));
        sources.push(p);
    }
    let (v, _d) = pages_json(&sources, &[]);
    assert_eq!(v["pages_found"], expect, "{v}");
    assert_eq!(v["duplicates_dropped"], 0, "{v}");
    assert_eq!(index_row(&v, 5)["table"], "shop/orders");
    assert_eq!(index_row(&v, 6)["format"], "REDUNDANT");
    let g = grep_json(
        &["--decimal", "10,2:1234.56"],
        &[tmp.path().join("shop_typed.ibd")],
    );
    assert_eq!(hits(&g).len(), 1, "{g}");
    assert_eq!(hits(&g)[0]["page"]["record"]["heap_no"], 2);
}

#[test]
fn empty_or_random_source_finds_nothing_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty.img");
    std::fs::write(&empty, b"").unwrap();
    let noise = tmp.path().join("noise.img");
    std::fs::write(&noise, random_bytes(3 << 20, 5)).unwrap();
    for src in [empty, noise] {
        let (v, _d) = pages_json(std::slice::from_ref(&src), &[]);
        assert_eq!(v["pages_found"], 0, "{}: {v}", src.display());
        assert!(v["warnings"].to_string().contains("no InnoDB pages found"));
    }
}

// ---------------------------------------------------------------- interruption

/// `n` full_crc32 BLOB pages of 4 KiB, space 3, page numbers 0..n (distinct, so all are kept).
fn blob_pages_image(n: u32) -> Vec<u8> {
    const S: usize = 4096;
    let mut img = vec![0u8; n as usize * S];
    for (i, p) in img.chunks_mut(S).enumerate() {
        let lsn = 0x1_0000_0000u64 + i as u64 + 1;
        p[4..8].copy_from_slice(&(i as u32).to_be_bytes());
        p[16..24].copy_from_slice(&lsn.to_be_bytes());
        p[24..26].copy_from_slice(&10u16.to_be_bytes()); // BLOB
        p[34..38].copy_from_slice(&3u32.to_be_bytes());
        p[38..46].copy_from_slice(&(i as u64).to_le_bytes());
        p[S - 8..S - 4].copy_from_slice(&(lsn as u32).to_be_bytes());
        let c = dbio_innodb::checksum::full_crc32(p);
        p[S - 4..].copy_from_slice(&c.to_be_bytes());
    }
    img
}

/// Sends SIGINT to a running child.
fn sigint(child: &std::process::Child) {
    // SAFETY: kill on the pid of a child this test spawned and has not yet reaped.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
}

/// Waits up to 5 minutes for a child; kills it (and fails) if it does not end.
fn wait_or_kill(mut child: std::process::Child) -> std::process::Output {
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(300) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("dbio did not end after SIGINT");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn pages_interrupted_while_writing_keeps_whole_pages_and_a_manifest() {
    // 32768 pages, one file each: the write phase lasts long enough to be interrupted
    // once its 200th file exists.
    let n = 32768u32;
    let dir = tempfile::Builder::new()
        .prefix("dbio-innodb-int-")
        .tempdir_in(if Path::new("/dev/shm").is_dir() {
            "/dev/shm"
        } else {
            "/tmp"
        })
        .unwrap();
    let image = dir.path().join("blobs.img");
    std::fs::write(&image, blob_pages_image(n)).unwrap();
    let out = dir.path().join("out");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .args([
            "innodb",
            "pages",
            "--format",
            "json",
            "--allow-same-device",
            "--output-dir",
        ])
        .arg(&out)
        .arg(&image)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let marker = out.join("3/BLOB/200.page");
    let start = std::time::Instant::now();
    while !marker.exists() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(300),
            "the write phase did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    sigint(&child);
    let o = wait_or_kill(child);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{:?} {stderr}", o.status);
    let man: Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).expect(&stderr)).unwrap();
    assert_eq!(man["interrupted"], true);
    let listed: Vec<&Value> = man["pages"].as_array().unwrap().iter().collect();
    assert!(
        listed.len() > 200 && listed.len() < n as usize,
        "{} pages listed",
        listed.len()
    );
    // Every page file is whole and listed; nothing else was written.
    let mut files: Vec<String> = std::fs::read_dir(out.join("3/BLOB"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            assert_eq!(e.metadata().unwrap().len(), 4096, "{:?}", e.path());
            format!("3/BLOB/{}", e.file_name().to_string_lossy())
        })
        .collect();
    files.sort();
    let mut in_manifest: Vec<String> = listed
        .iter()
        .map(|e| e["file"].as_str().unwrap().to_string())
        .collect();
    in_manifest.sort();
    assert_eq!(files, in_manifest);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["pages_written"], listed.len());
    assert!(stderr.contains("interrupted"), "{stderr}");
}

/// A file of `mib` MiB of the word 80 00 00 05 (INT 5): a hit every 4 bytes.
fn dense_hits_file(dir: &Path, mib: usize) -> PathBuf {
    let f = dir.join("dense.img");
    std::fs::write(&f, [0x80u8, 0, 0, 5].repeat(mib << 18)).unwrap();
    f
}

fn shm_tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("dbio-innodb-grep-")
        .tempdir_in(if Path::new("/dev/shm").is_dir() {
            "/dev/shm"
        } else {
            "/tmp"
        })
        .unwrap()
}

#[test]
fn grep_max_count_stops_after_n_hits() {
    let dir = shm_tempdir();
    let f = dense_hits_file(dir.path(), 32);
    for format in ["jsonl", "text"] {
        let o = dbio()
            .args([
                "innodb",
                "grep",
                "80 00 00 05",
                "--max-count",
                "3",
                "--format",
                format,
            ])
            .arg(&f)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{stderr}");
        assert!(
            stderr.contains("3 hits") && stderr.contains("--max-count"),
            "{stderr}"
        );
        let out = String::from_utf8(o.stdout).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        if format == "text" {
            assert_eq!(lines.len(), 3, "{out}");
            assert!(lines[2].contains(":8 (0x8) hex:80 00 00 05"), "{out}");
            continue;
        }
        assert_eq!(lines.len(), 4, "{out}");
        let offsets: Vec<u64> = lines[..3]
            .iter()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["offset_bytes"]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        assert_eq!(offsets, [0, 4, 8]);
        let sum: Value = serde_json::from_str(lines[3]).unwrap();
        assert_eq!(sum["type"], "summary");
        assert_eq!(sum["hit_count"], 3);
        assert_eq!(sum["max_count_reached"], true);
        // It stopped early: far less than the 32 MiB was searched.
        assert!(sum["searched_bytes"].as_u64().unwrap() < 16 << 20, "{sum}");
    }
}

/// Peak resident set (VmHWM) of a running process, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = s.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn grep_streams_hits_with_bounded_memory_and_exits_130_on_sigint() {
    use std::io::{BufRead, BufReader};
    // 16 MiB with a hit every 4 bytes: 4.2 M hits. Kept in memory until the end (as before),
    // they took 1.4 GB before the first line was printed; streamed, the first line comes
    // while the search runs, the process stays small, and a SIGINT ends it with 130 after
    // every hit it had found was printed.
    let dir = shm_tempdir();
    let f = dense_hits_file(dir.path(), 16);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .args(["innodb", "grep", "80 00 00 05"])
        .arg(&f)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert!(
        first.contains("dense.img:0 (0x0) hex:80 00 00 05"),
        "{first}"
    );
    let peak = peak_rss_kib(child.id());
    assert!(
        peak < 64 << 10,
        "peak RSS {peak} KiB when the first hit was printed"
    );
    sigint(&child);
    // Keep reading: the child may be blocked writing to the pipe.
    let lines: Vec<String> = out.lines().map(|l| l.unwrap()).collect();
    let o = wait_or_kill(child);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{:?} {stderr}", o.status);
    assert!(stderr.contains("; interrupted"), "{stderr}");
    // Every hit counted was printed, in order, none cut.
    let counted: usize = stderr
        .split("dbio: ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {stderr}"));
    assert_eq!(counted, lines.len() + 1, "{stderr}");
    assert!(counted < 4 << 20, "not interrupted: {counted}");
    for (i, l) in lines.iter().enumerate().step_by(997) {
        let off = 4 * (i as u64 + 1);
        assert!(l.contains(&format!("dense.img:{off} (0x{off:x}) ")), "{l}");
    }
}

/// Waits until the child catches SIGINT (its handler is installed: bit 2 of SigCgt); kills
/// it and fails after a minute.
fn wait_for_sigint_handler(child: &mut std::process::Child) {
    let pid = child.id();
    let start = std::time::Instant::now();
    loop {
        let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let caught = s
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .unwrap_or(0);
        if caught & (1 << (libc::SIGINT - 1)) != 0 {
            return;
        }
        if start.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("dbio never installed a SIGINT handler");
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

#[test]
fn pages_interrupted_while_scanning_writes_an_empty_interrupted_manifest() {
    // 1 GiB of random data: the scan lasts long enough to be interrupted as soon as the
    // handler is installed (it is installed before the scan starts).
    let dir = shm_tempdir();
    let image = dir.path().join("noise.img");
    {
        use std::io::{Read, Write};
        let mut f = std::fs::File::create(&image).unwrap();
        let mut r = std::fs::File::open("/dev/urandom").unwrap();
        let mut buf = vec![0u8; 1 << 20];
        for _ in 0..1024 {
            r.read_exact(&mut buf).unwrap();
            f.write_all(&buf).unwrap();
        }
    }
    let out = dir.path().join("out");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .args([
            "innodb",
            "pages",
            "--format",
            "json",
            "--allow-same-device",
            "--output-dir",
        ])
        .arg(&out)
        .arg(&image)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_sigint_handler(&mut child);
    sigint(&child);
    let o = wait_or_kill(child);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{:?} {stderr}", o.status);
    assert!(stderr.contains("interrupted while scanning"), "{stderr}");
    let man: Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).expect(&stderr)).unwrap();
    assert_eq!(man["interrupted"], true);
    assert_eq!(man["pages"].as_array().unwrap().len(), 0);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["pages_written"], 0);
}

/// Ctrl-C during the scan of a 64 GiB (sparse) image: the summary says how far the scan got
/// (it used to say "scanned 64GiB", the size of the sources) and that it was interrupted, and
/// the warning names the byte where the scan of the image stopped.
#[test]
fn pages_interrupted_while_scanning_reports_the_bytes_actually_scanned() {
    let dir = shm_tempdir();
    let image = dir.path().join("sparse.img");
    let total: u64 = 64 << 30;
    std::fs::File::create(&image)
        .unwrap()
        .set_len(total)
        .unwrap();
    let out = dir.path().join("out");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .args([
            "innodb",
            "pages",
            "--threads",
            "1",
            "--allow-same-device",
            "--output-dir",
        ])
        .arg(&out)
        .arg(&image)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_sigint_handler(&mut child);
    // Some chunks scanned (tens of MiB a second at least), far from all of them.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    sigint(&child);
    let o = wait_or_kill(child);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{:?} {stderr}", o.status);
    let at: u64 = stderr
        .split_once("interrupted while scanning ")
        .and_then(|(_, r)| r.split_once(" at byte "))
        .and_then(|(_, r)| r.split_once(" of 68719476736 ("))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(at > 0 && at < total, "{at}: {stderr}");
    // Whole chunks of 8 MiB, the scan's unit of work.
    assert_eq!(at % (8 << 20), 0, "{at}");
    let first = stdout.lines().next().unwrap_or_default();
    let want = format!(
        "scanned {} of 64GiB (interrupted: the rest was not read) in ",
        dbio_schema::units::format_size(at)
    );
    assert!(first.starts_with(&want), "{first}\nwant {want}");
}

#[test]
fn grep_summary_says_1_hit_and_help_shows_the_repeat_syntax() {
    let dir = shm_tempdir();
    let f = dense_hits_file(dir.path(), 32);
    let o = dbio()
        .args(["innodb", "grep", "80 00 00 05", "--max-count", "1"])
        .arg(&f)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("dbio: 1 hit ("), "{stderr}");
    // clap turns a literal `{n}` of a doc comment into a line break: the help must show the
    // repeat syntax as written.
    let o = dbio().args(["innodb", "grep", "--help"]).output().unwrap();
    let help = String::from_utf8(o.stdout).unwrap();
    assert!(help.contains("??{22}"), "{help}");
    assert!(
        !help.contains("`\n"),
        "a doc comment line break leaked: {help}"
    );
}

fn grep_patterns(args: &[&str]) -> Vec<(String, String)> {
    let v = grep_json(args, &[fixture("shop_orders.ibd")]);
    v["patterns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["label"].as_str().unwrap().to_string(),
                p["hex"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn timestamp_in_the_repeated_hour_searches_both_instants() {
    // 02:30 on 27 October 2019 happened twice in Berlin: 00:30 UTC (+02:00) and 01:30 UTC
    // (+01:00). Either may be stored; both are searched, earlier first.
    let p = grep_patterns(&[
        "--timestamp",
        "2019-10-27 02:30:00",
        "--tz",
        "Europe/Berlin",
    ]);
    assert_eq!(
        p,
        [
            (
                "timestamp:2019-10-27 02:30:00 Europe/Berlin (+02:00)".to_string(),
                // 1572136200 big-endian
                "5D B4 E5 08".to_string()
            ),
            (
                "timestamp:2019-10-27 02:30:00 Europe/Berlin (+01:00)".to_string(),
                // 1572139800 big-endian
                "5D B4 F3 18".to_string()
            ),
        ]
    );
    // Outside the fold a zone name gives one pattern, labelled as before.
    let p = grep_patterns(&[
        "--timestamp",
        "2019-05-13 14:00:00",
        "--tz",
        "Europe/Berlin",
    ]);
    let q = grep_patterns(&["--timestamp", "2019-05-13 14:00:00", "--tz", "+02:00"]);
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].0, "timestamp:2019-05-13 14:00:00 Europe/Berlin");
    assert_eq!(p[0].1, q[0].1);
}

#[test]
fn timestamps_that_never_existed_are_usage_errors() {
    let src = fixture("shop_orders.ibd");
    for (args, says) in [
        // Skipped when the clocks went forward: no TIMESTAMP holds it.
        (
            [
                "--timestamp",
                "2019-03-31 02:30:00",
                "--tz",
                "Europe/Berlin",
            ],
            "does not exist in Europe/Berlin",
        ),
        // No 30 February: it was searched as 2 March before.
        (
            ["--timestamp", "2019-02-30 10:00:00", "--tz", "UTC"],
            "not a date",
        ),
    ] {
        dbio()
            .args(["innodb", "grep"])
            .args(args)
            .arg(&src)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
    }
}

/// A running `dbio innodb grep` over a 16 GiB sparse file (far more than a test run reads
/// before the file is truncated under it); killed on drop if the test fails first.
struct Grepping {
    child: std::process::Child,
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Grepping {
    /// Starts the search; with `writer`, the file is held open for writing from before dbio
    /// opens it (the returned handle).
    fn start(writer: bool) -> (Grepping, Option<std::fs::File>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shrinking.img");
        let f = std::fs::File::create(&path).unwrap();
        f.set_len(16 << 30).unwrap();
        let held = writer.then_some(f);
        let child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("dbio"))
            .args(["innodb", "grep", "--threads", "1", "--text", "needle"])
            .arg(&path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let g = Grepping {
            child,
            path,
            _dir: dir,
        };
        (g, held)
    }

    /// Waits until `/proc/PID/<what>` names the file (`maps`: mapped; `fd`: opened).
    fn wait_for(&mut self, what: &str) {
        let pid = self.child.id();
        let name = self.path.to_str().unwrap().to_string();
        loop {
            let seen = if what == "fd" {
                std::fs::read_dir(format!("/proc/{pid}/fd"))
                    .map(|d| {
                        d.flatten().any(|e| {
                            std::fs::read_link(e.path()).is_ok_and(|l| l.to_str() == Some(&name))
                        })
                    })
                    .unwrap_or(false)
            } else {
                std::fs::read_to_string(format!("/proc/{pid}/{what}"))
                    .is_ok_and(|m| m.contains(&name))
            };
            if seen {
                return;
            }
            if let Some(st) = self.child.try_wait().unwrap() {
                panic!("dbio ended ({st}) before its /proc/{pid}/{what} named the file");
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    fn finish(mut self) -> (std::process::ExitStatus, String) {
        let status = self.child.wait().unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(self.child.stderr.as_mut().unwrap(), &mut err).unwrap();
        (status, err)
    }
}

impl Drop for Grepping {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_mapped_source_truncated_while_read_is_an_error_naming_it() {
    let (mut g, _) = Grepping::start(false);
    g.wait_for("maps");
    let path = g.path.clone();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    // Before: the process died of SIGBUS ("Bus error") with nothing on stderr.
    let (status, err) = g.finish();
    assert_eq!(status.code(), Some(1), "{status}: {err}");
    assert!(
        err.contains(&format!(
            "dbio: reading {} through its memory map failed (SIGBUS)",
            path.display()
        )),
        "{err}"
    );
    assert!(err.contains("--no-mmap"), "{err}");
}

#[test]
fn a_source_open_for_writing_elsewhere_is_read_with_pread() {
    // A writer holds the file open (as a live server holds its tablespaces): dbio does not
    // map it, so truncating it under the search shortens the search instead of killing it.
    let (mut g, writer) = Grepping::start(true);
    let writer = writer.unwrap();
    g.wait_for("fd");
    writer.set_len(0).unwrap();
    let (status, err) = g.finish();
    assert!(status.success(), "{status}: {err}");
    assert!(!err.contains("SIGBUS"), "{err}");
}

/// 16 MiB of zeros to grep through (long enough for a progress bar).
fn zeros_image(dir: &Path) -> PathBuf {
    let img = dir.join("zeros.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    img
}

#[test]
fn no_progress_when_stderr_is_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let img = zeros_image(dir.path());
    // stderr a pipe: no progress at all, only the summary line.
    let o = dbio()
        .args(["innodb", "grep", "--text", "needle"])
        .arg(&img)
        .output()
        .unwrap();
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains('\r') && !err.contains('\x1b'), "{err:?}");
    assert!(!err.contains(" of 16.00 MiB"), "{err:?}");
}

#[test]
#[ignore = "needs script (util-linux, Debian package bsdutils); scripts/test.sh runs it"]
fn progress_is_drawn_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let img = zeros_image(dir.path());
    let bin = assert_cmd::cargo::cargo_bin!("dbio");
    // stderr a terminal (script(1) runs the command on a pseudo-terminal): the bar shows the
    // bytes done of the total from the first chunk on, however short the run. Before, it
    // appeared only after a full second.
    require_tool(
        "script",
        &["--version"],
        "util-linux, Debian package bsdutils",
    );
    let cmd = format!(
        "{} innodb grep --text needle {}",
        bin.display(),
        img.display()
    );
    let o = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let tty = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{tty}");
    assert!(tty.contains(" of 16.00 MiB ("), "{tty:?}");
    assert!(tty.contains("0 hits"), "{tty:?}");
}
