//! `dbio innodb pages` and `innodb rows` on encrypted tablespaces: the real Percona Server 8
//! table with its keyring_file keyring (`--keyring`), the MariaDB tables of
//! scripts/make-innodb-encrypted.sh (`--key-file`, `--key-file-key`), compared with the rows
//! their servers printed; wrong, missing and damaged keys refused with an error naming the
//! file, and no row written.

use crate::common::dbio;
use crate::innodb_rows::fixture;
use std::path::PathBuf;

fn percona(name: &str) -> PathBuf {
    fixture("mysql-real/percona-parser").join(name)
}

fn rows_tsv(args: &[&str]) -> (bool, String, String) {
    let o = dbio()
        .args(["innodb", "rows", "--format", "tsv"])
        .args(args)
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn mysql_keyring_rows_equal_the_tablespace_rows() {
    let table = percona("encrypted_test.sql");
    let (ok, out, err) = rows_tsv(&[
        percona("encrypted_test.ibd").to_str().unwrap(),
        "--keyring",
        percona("keyring_test").to_str().unwrap(),
        "--table-def",
        table.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    // The clustered index (194) is chosen without a hint, and the SDI (decrypted) gives the
    // same definition when none is given.
    assert!(err.contains("space 37 index 194"), "{err}");
    let (ok, sdi, err) = rows_tsv(&[
        percona("encrypted_test.ibd").to_str().unwrap(),
        "--keyring",
        percona("keyring_test").to_str().unwrap(),
    ]);
    assert!(
        ok && err.contains("(definition: SDI of tablespace 37)"),
        "{err}"
    );
    assert_eq!(sdi, out);
    assert_eq!(
        out,
        "id\tsecret_info\n\
         1\tTOP SECRET: Project Blue Sky\n\
         2\tCONFIDENTIAL: Meeting at 3pm\n\
         3\tPRIVATE: Password is hunter2\n\
         4\tCLASSIFIED: Agent code X-99\n\
         5\tRESTRICTED: Launch codes 1234\n"
    );
    // The same rows as the copy percona-parser decrypted.
    let (ok, plain, err) = rows_tsv(&[
        percona("decrypted_test.ibd").to_str().unwrap(),
        "--table-def",
        table.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert_eq!(out, plain);
}

#[test]
fn mariadb_rows_equal_the_servers_select() {
    let keys = fixture("enc_keys.txt");
    let enc = fixture("enc_keys.enc");
    let pass = format!("FILE:{}", fixture("enc_keys.pass").display());
    for (table, key_args) in [
        ("enc_full", vec!["--key-file", keys.to_str().unwrap()]),
        ("enc_crc32", vec!["--key-file", keys.to_str().unwrap()]),
        ("enc_ctr", vec!["--key-file", keys.to_str().unwrap()]),
        (
            "enc_ctr",
            vec!["--key-file", enc.to_str().unwrap(), "--key-file-key", &pass],
        ),
    ] {
        let ibd = fixture(&format!("{table}.ibd"));
        let sql = fixture(&format!("{table}.sql"));
        let mut args = vec![ibd.to_str().unwrap(), "--table-def", sql.to_str().unwrap()];
        args.extend(key_args.iter().copied());
        let (ok, out, err) = rows_tsv(&args);
        assert!(ok, "{table}: {err}");
        let want = std::fs::read_to_string(fixture(&format!("{table}.tsv"))).unwrap();
        let got = out.split_once('\n').unwrap().1;
        assert_eq!(got.lines().count(), 398, "{table}: {err}");
        assert!(got == want, "{table}: rows differ from the server's\n{err}");
    }
}

#[test]
fn pages_finds_every_page_only_with_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let keys = fixture("enc_keys.txt");
    let keyring = percona("keyring_test");
    for (src, key_flag, key, with, without) in [
        (fixture("enc_full.ibd"), "--key-file", &keys, 7, 1),
        (fixture("enc_ctr.ibd"), "--key-file", &keys, 7, 1),
        (percona("encrypted_test.ibd"), "--keyring", &keyring, 5, 1),
    ] {
        let count = |extra: &[&str], out: &str| -> (u64, String) {
            let o = dbio()
                .args(["innodb", "pages", "--allow-same-device", "--format", "json"])
                .arg(&src)
                .args(["--output-dir", dir.path().join(out).to_str().unwrap()])
                .args(extra)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr).into_owned();
            assert!(o.status.success(), "{err}");
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            (v["sources"][0]["pages_found"].as_u64().unwrap(), err)
        };
        let name = src.file_name().unwrap().to_str().unwrap().to_string();
        let (n, err) = count(&[], &format!("{name}.plain"));
        assert_eq!(n, without, "{name}");
        assert!(err.contains("is encrypted ("), "{name}: {err}");
        let (n, err) = count(&[key_flag, key.to_str().unwrap()], &format!("{name}.key"));
        assert_eq!(n, with, "{name}: {err}");
    }
}

/// A copy of the real keyring with its key changed (`flip`) and its SHA-256 digest made
/// right again, or left as it was (damaged).
fn altered_keyring(dir: &std::path::Path, flip: bool, fix_digest: bool) -> PathBuf {
    use sha2::Digest;
    let mut d = std::fs::read(percona("keyring_test")).unwrap();
    let n = d.len();
    if flip {
        // The key bytes end where the 8-byte padding before "EOF" begins.
        d[n - 35 - 8 - 1] ^= 0x40;
    }
    if fix_digest {
        let digest = sha2::Sha256::digest(&d[24..n - 35]);
        d[n - 32..].copy_from_slice(&digest);
    }
    let p = dir.join(format!("keyring_{flip}_{fix_digest}"));
    std::fs::write(&p, d).unwrap();
    p
}

#[test]
fn wrong_missing_and_damaged_keys_are_refused_with_the_file_named() {
    let dir = tempfile::tempdir().unwrap();
    let mysql = percona("encrypted_test.ibd");
    let mysql_def = percona("encrypted_test.sql");
    let maria = fixture("enc_full.ibd");
    let maria_def = fixture("enc_full.sql");
    let wrong_key = altered_keyring(dir.path(), true, true);
    let damaged = altered_keyring(dir.path(), true, false);
    let no_key_1 = dir.path().join("no1.txt");
    let text = std::fs::read_to_string(fixture("enc_keys.txt")).unwrap();
    std::fs::write(
        &no_key_1,
        text.lines()
            .filter(|l| !l.starts_with("1;"))
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .unwrap();
    let s = |p: &PathBuf| p.to_str().unwrap().to_string();
    let cases: Vec<(Vec<String>, Vec<String>)> = vec![
        (
            vec![
                s(&mysql),
                "--keyring".into(),
                s(&wrong_key),
                "--table-def".into(),
                s(&mysql_def),
            ],
            vec!["does not decrypt the key of space 37".into(), s(&wrong_key)],
        ),
        (
            vec![
                s(&mysql),
                "--keyring".into(),
                s(&damaged),
                "--table-def".into(),
                s(&mysql_def),
            ],
            vec!["digest does not match".into(), s(&damaged)],
        ),
        (
            vec![
                s(&mysql),
                "--key-file".into(),
                s(&fixture("enc_keys.txt")),
                "--table-def".into(),
                s(&mysql_def),
            ],
            vec!["give its keyring_file keyring with --keyring".into()],
        ),
        (
            vec![
                s(&maria),
                "--key-file".into(),
                s(&no_key_1),
                "--table-def".into(),
                s(&maria_def),
            ],
            vec!["has no key 1".into(), s(&no_key_1)],
        ),
        (
            vec![
                s(&maria),
                "--key-file".into(),
                s(&fixture("enc_keys.enc")),
                "--table-def".into(),
                s(&maria_def),
            ],
            vec!["give its password with --key-file-key".into()],
        ),
        (
            vec![
                s(&maria),
                "--key-file".into(),
                s(&fixture("enc_keys.enc")),
                "--key-file-key".into(),
                "wrong".into(),
                "--table-def".into(),
                s(&maria_def),
            ],
            vec!["wrong --key-file-key".into()],
        ),
        (
            vec![
                s(&maria),
                "--keyring".into(),
                s(&fixture("enc_keys.txt")),
                "--table-def".into(),
                s(&maria_def),
            ],
            vec!["not a MySQL keyring_file keyring".into()],
        ),
    ];
    for (args, wants) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ok, out, err) = rows_tsv(&args);
        assert!(!ok, "{args:?}");
        assert!(out.is_empty(), "{args:?}: rows written: {out}");
        for w in wants {
            assert!(err.contains(&w), "{args:?}: {err} lacks {w}");
        }
    }
}
