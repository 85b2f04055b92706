//! `dbio mysql chunk --ssl-mode` against a throwaway MariaDB (tests/common/mariadb.rs) that
//! accepts only TLS connections (require_secure_transport), with a certificate signed by a
//! test CA made here with openssl and naming `db.example`, not the address dbio connects to.

use crate::common::mariadb::{require_mariadbd, scratch_dir, Server};
use crate::common::{dbio, require_tool};
use mysql::prelude::Queryable;
use std::path::Path;
use std::process::Command;

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA `NAME.pem` (key `NAME.key`) in `dir`.
fn ca(dir: &Path, name: &str) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            &format!("/CN=dbio test {name}"),
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.pem"),
        ],
    );
}

/// server.pem and server.key in `dir`, signed by ca.pem, for the name db.example only.
fn server_cert(dir: &Path) {
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=db.example",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ],
    );
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=DNS:db.example\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
            "-out",
            "server.pem",
        ],
    );
}

#[test]
#[ignore = "needs mariadbd binaries (mariadb-server package) and openssl"]
fn ssl_modes_against_a_server_that_accepts_only_tls() {
    require_mariadbd();
    require_tool("openssl", &["version"], "Debian package openssl");
    let dir = scratch_dir();
    let certs = dir.path().join("certs");
    std::fs::create_dir(&certs).unwrap();
    ca(&certs, "ca");
    ca(&certs, "other-ca");
    server_cert(&certs);
    let file = |n: &str| certs.join(n).display().to_string();
    let server = Server::new(
        dir.path(),
        "tls",
        1,
        &[
            format!("--ssl-ca={}", file("ca.pem")),
            format!("--ssl-cert={}", file("server.pem")),
            format!("--ssl-key={}", file("server.key")),
            "--require-secure-transport=ON".into(),
        ],
    );
    // The test's own client, over TLS: the server speaks it, and refuses plain connections.
    // prefer_socket=false: the mysql crate otherwise moves a connection to 127.0.0.1 onto the
    // server's Unix socket (secure transport without TLS).
    let tls_dsn = format!(
        "{}?prefer_socket=false&danger_accept_invalid_certs=true",
        server.dsn("")
    );
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&tls_dsn).unwrap()).unwrap();
    let version: (String, String) = c
        .query_first("SHOW SESSION STATUS LIKE 'Ssl_version'")
        .unwrap()
        .unwrap();
    assert!(version.1.starts_with("TLSv1."), "{version:?}");
    c.query_drop("CREATE DATABASE tls").unwrap();
    c.query_drop("CREATE TABLE tls.t (id INT NOT NULL PRIMARY KEY, n INT NOT NULL) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("USE tls").unwrap();
    c.query_drop("INSERT INTO tls.t SELECT seq, seq % 10 FROM seq_1_to_1000")
        .unwrap();
    let rows = |c: &mut mysql::Conn| -> u64 {
        c.query_first("SELECT COUNT(*) FROM tls.t")
            .unwrap()
            .unwrap()
    };

    let state = dir.path().join("state.json");
    let run = |n: u32, extra: &[&str]| {
        let dsn = format!("{}?prefer_socket=false", server.dsn("tls"));
        let cond = format!("n = {n}");
        let mut a = vec![
            "mysql",
            "chunk",
            "--dsn",
            &dsn,
            "--table",
            "t",
            "--where",
            &cond,
            "--delete",
            "--execute",
            "--state",
            state.to_str().unwrap(),
            "--sleep-coef",
            "0",
        ];
        a.extend(extra);
        let o = dbio().args(&a).output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let ok = |(code, out, err): (Option<i32>, String, String)| {
        assert_eq!(code, Some(0), "{err}");
        assert!(out.contains("outcome     finished"), "{out}");
    };
    let refused = |(code, out, err): (Option<i32>, String, String), why: &str| {
        assert_eq!(code, Some(1), "{out}{err}");
        assert!(
            err.contains("cannot connect to mysql://root@127.0.0.1"),
            "{err}"
        );
        assert!(err.contains(why), "{err}");
        // the client's message itself, not the mysql crate's Debug-like wrapping
        assert!(!err.contains("CodecError"), "{err}");
    };

    // Plain (the default, as the DSN says): the server refuses it (MariaDB 10.11 says access
    // denied; the same DSN over TLS gets in below).
    refused(run(1, &[]), "Access denied");
    refused(run(1, &["--ssl-mode", "disabled"]), "Access denied");
    assert_eq!(rows(&mut c), 1000);
    // TLS without checking the certificate.
    ok(run(1, &["--ssl-mode", "required"]));
    assert_eq!(rows(&mut c), 900);
    // The chain checked against our CA; the name (db.example, not 127.0.0.1) not checked.
    let ca_pem = file("ca.pem");
    ok(run(2, &["--ssl-ca", &ca_pem]));
    ok(run(3, &["--ssl-mode", "verify-ca", "--ssl-ca", &ca_pem]));
    assert_eq!(rows(&mut c), 700);
    // The name checked too: the certificate does not name 127.0.0.1.
    refused(
        run(4, &["--ssl-mode", "verify-identity", "--ssl-ca", &ca_pem]),
        "certificate not valid for name \"127.0.0.1\"",
    );
    // Another CA, or the built-in roots: the chain does not verify.
    let other = file("other-ca.pem");
    refused(
        run(4, &["--ssl-mode", "verify-ca", "--ssl-ca", &other]),
        "UnknownIssuer",
    );
    refused(run(4, &["--ssl-mode", "verify-ca"]), "UnknownIssuer");
    assert_eq!(rows(&mut c), 700);
    // The DSN's own parameters still work (the mysql crate's root_cert_path).
    let dsn_ca = format!(
        "{}?prefer_socket=false&root_cert_path={ca_pem}&danger_skip_domain_validation=true",
        server.dsn("tls")
    );
    let o = dbio()
        .args([
            "mysql",
            "chunk",
            "--dsn",
            &dsn_ca,
            "--table",
            "t",
            "--where",
            "n = 4",
            "--delete",
            "--execute",
            "--state",
            state.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(rows(&mut c), 600);
    // A CA file that is not there is named before connecting.
    let (code, _, err) = run(5, &["--ssl-ca", "/nonexistent/ca.pem"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--ssl-ca /nonexistent/ca.pem: cannot read it"),
        "{err}"
    );
    drop(server);
}
