//! Encrypted tablespaces: the real Percona Server 8 table encrypted with its keyring
//! (testdata/innodb/mysql-real/percona-parser) decrypts page for page to the copy the
//! percona-parser project decrypted; the MariaDB tables of scripts/make-innodb-encrypted.sh
//! are found whole, also inside an image at an odd offset, and decrypt to pages whose own
//! checksums and LSN trailers check.

use dbio_innodb::checksum;
use dbio_innodb::crypt::{Keys, Scheme};
use dbio_innodb::recover::{scan_sources, Scanned, Source};
use dbio_innodb::scan::ScanOptions;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/innodb")
        .join(name)
}

fn scan(paths: &[PathBuf], keys: Option<Keys>) -> (Vec<Source>, Scanned) {
    let sources: Vec<Source> = paths
        .iter()
        .map(|p| Source::open(p, true).unwrap())
        .collect();
    let opts = ScanOptions {
        keys: keys.map(Arc::new),
        ..ScanOptions::default()
    };
    let stop = AtomicBool::new(false);
    let scanned = scan_sources(&sources, &opts, 2, &stop, &|_, _| {}, |_| ()).unwrap();
    (sources, scanned)
}

#[test]
fn mysql_keyring_pages_equal_the_decrypted_copy() {
    let dir = fixture("mysql-real/percona-parser");
    let mut keys = Keys::default();
    keys.read_keyring(&dir.join("keyring_test")).unwrap();
    let (sources, scanned) = scan(&[dir.join("encrypted_test.ibd")], Some(keys));
    let plain = std::fs::read(dir.join("decrypted_test.ibd")).unwrap();
    // Pages 0-4 hold data (5 and 6 are zeros in both files); 1-4 were encrypted.
    let found: Vec<(u32, Option<Scheme>)> = scanned
        .found
        .iter()
        .map(|(_, p)| (p.page_no, p.decrypt.as_ref().map(|k| k.scheme)))
        .collect();
    assert_eq!(
        found,
        [
            (0, None),
            (1, Some(Scheme::Mysql)),
            (2, Some(Scheme::Mysql)),
            (3, Some(Scheme::Mysql)),
            (4, Some(Scheme::Mysql))
        ],
        "{:?}",
        scanned.warnings
    );
    for (_, p) in &scanned.found {
        let mut buf = vec![0u8; p.page_size as usize];
        assert_eq!(p.read(&sources[0].file, &mut buf).unwrap(), buf.len());
        let at = p.page_no as usize * 16384;
        assert!(
            buf == plain[at..at + 16384],
            "page {} differs from the decrypted copy",
            p.page_no
        );
        assert_eq!(p.checksum, Some(checksum::Algorithm::Crc32));
    }
    // The clustered index (194) and the SDI index of the plain file, found in the encrypted one.
    let ids: Vec<u64> = scanned
        .found
        .iter()
        .filter_map(|(_, p)| p.index.map(|i| i.index_id))
        .collect();
    assert_eq!(ids, [u64::MAX, 194]);
}

#[test]
fn mariadb_pages_are_found_whole_and_check_once_decrypted() {
    let mut keys = Keys::default();
    keys.read_key_file(&fixture("enc_keys.txt"), None).unwrap();
    for (name, scheme) in [
        ("enc_full.ibd", Scheme::MariadbFullCrc32),
        ("enc_crc32.ibd", Scheme::Mariadb),
        ("enc_ctr.ibd", Scheme::MariadbFullCrc32),
    ] {
        // Without the key no INDEX page is found (the older layout's header and trailer are
        // in clear: its non-INDEX pages are taken for torn pages), and a warning names the key
        // page 0 asks for.
        let (_, without) = scan(&[fixture(name)], None);
        assert!(
            without.found.iter().all(|(_, p)| p.index.is_none()),
            "{name}"
        );
        assert!(
            without
                .warnings
                .iter()
                .any(|w| w.contains("is encrypted (MariaDB encryption, key id")),
            "{name}: {:?}",
            without.warnings
        );
        let (sources, scanned) = scan(&[fixture(name)], Some(keys.clone()));
        let pages: Vec<u32> = scanned.found.iter().map(|(_, p)| p.page_no).collect();
        assert_eq!(
            pages,
            [0, 1, 2, 3, 4, 5, 6],
            "{name}: {:?}",
            scanned.warnings
        );
        for (_, p) in &scanned.found[1..] {
            assert_eq!(p.decrypt.as_ref().map(|k| k.scheme), Some(scheme), "{name}");
            let mut buf = vec![0u8; 16384];
            p.read(&sources[0].file, &mut buf).unwrap();
            // The plain page checks by itself: its checksum, its LSN trailer, its space id.
            assert!(
                checksum::verify(&buf).is_some(),
                "{name} page {}",
                p.page_no
            );
            assert_eq!(buf[34..38], scanned.found[0].1.space_id.to_be_bytes());
        }
        let leaves = scanned
            .found
            .iter()
            .filter(|(_, p)| p.index.is_some_and(|i| i.level == 0))
            .count();
        assert_eq!(leaves, 3, "{name}");
    }
}

#[test]
fn an_encrypted_tablespace_inside_an_image_at_an_odd_offset() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("disk.img");
    let mut data = vec![0x5Au8; 3 * 512];
    data.extend(std::fs::read(fixture("enc_full.ibd")).unwrap());
    data.extend(vec![0u8; 4096]);
    data.extend(std::fs::read(fixture("mysql-real/percona-parser/encrypted_test.ibd")).unwrap());
    std::fs::write(&img, &data).unwrap();
    let mut keys = Keys::default();
    keys.read_key_file(&fixture("enc_keys.txt"), None).unwrap();
    keys.read_keyring(&fixture("mysql-real/percona-parser/keyring_test"))
        .unwrap();
    let (_, scanned) = scan(&[img], Some(keys));
    let decrypted: Vec<(u64, u32)> = scanned
        .found
        .iter()
        .filter(|(_, p)| p.decrypt.is_some())
        .map(|(_, p)| (p.offset, p.page_no))
        .collect();
    let mysql_at = (3 * 512 + 147456 + 4096) as u64;
    let want: Vec<(u64, u32)> = (1..7)
        .map(|n| (1536 + n as u64 * 16384, n))
        .chain((1..5).map(|n| (mysql_at + n as u64 * 16384, n)))
        .collect();
    assert_eq!(decrypted, want, "{:?}", scanned.warnings);
}

#[test]
fn a_wrong_key_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    // Key 1 changed: the pages do not decrypt.
    let text = std::fs::read_to_string(fixture("enc_keys.txt")).unwrap();
    let wrong: String = text
        .lines()
        .map(|l| match l.strip_prefix("1;") {
            Some(hex) => format!(
                "1;{}{}\n",
                if &hex[..2] == "00" { "11" } else { "00" },
                &hex[2..]
            ),
            None => format!("{l}\n"),
        })
        .collect();
    let kf = dir.path().join("wrong.txt");
    std::fs::write(&kf, wrong).unwrap();
    let mut keys = Keys::default();
    keys.read_key_file(&kf, None).unwrap();
    let src = Source::open(&fixture("enc_full.ibd"), true).unwrap();
    let opts = ScanOptions {
        keys: Some(Arc::new(keys)),
        ..ScanOptions::default()
    };
    let e = scan_sources(
        &[src],
        &opts,
        1,
        &AtomicBool::new(false),
        &|_, _| {},
        |_| (),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("6 encrypted page(s) of space 5")
            && e.contains("do not decrypt with key 1 of the key file"),
        "{e}"
    );
}
