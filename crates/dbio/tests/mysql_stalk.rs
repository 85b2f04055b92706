//! `dbio mysql stalk` on the real MariaDB (DBIO_TEST_MYSQL, default
//! mysql://root@127.0.0.1:3306/test): a real overload (a pile-up of `SELECT SLEEP` from user
//! `stalk_batch` behind a `LOCK TABLES ... WRITE` held by root, growing one thread at a time)
//! fires the trigger, the lead-up shows the ramp, attribution names the user first; pt-diskstats
//! and `dbio iostat --replay` read the captured diskstats; SIGTERM finishes the capture; two
//! stalkers on one directory; a full disk (a 4 MiB tmpfs); a server restarted mid-collection.

use crate::common::job::{args, Job};
use crate::common::mariadb::{require_mariadbd, scratch_dir, Server};
use mysql::prelude::Queryable;
use mysql::Conn;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn base_dsn() -> String {
    std::env::var("DBIO_TEST_MYSQL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".into())
}

fn root() -> Conn {
    Conn::new(mysql::Opts::from_url(&base_dsn()).unwrap())
        .unwrap_or_else(|e| panic!("needs MariaDB at {}: {e}", base_dsn()))
}

/// The DSN of `user` (no password, no database) on the test server.
fn dsn_as(user: &str) -> String {
    let d = base_dsn();
    let host = d.split_once('@').map_or(d.as_str(), |x| x.1);
    let host = host.split_once('/').map_or(host, |x| x.0);
    format!("mysql://{user}@{host}/")
}

/// Database `stalk_t_<name>` with table t, and user `stalk_batch` allowed to read it.
fn setup(name: &str) -> String {
    let db = format!("stalk_t_{name}");
    let mut c = root();
    c.query_drop(format!("DROP DATABASE IF EXISTS `{db}`"))
        .unwrap();
    c.query_drop(format!("CREATE DATABASE `{db}`")).unwrap();
    c.query_drop(format!(
        "CREATE TABLE `{db}`.t (id INT PRIMARY KEY) ENGINE=InnoDB"
    ))
    .unwrap();
    c.query_drop(format!("INSERT INTO `{db}`.t VALUES (1), (2), (3)"))
        .unwrap();
    c.query_drop("CREATE USER IF NOT EXISTS 'stalk_batch'@'%'")
        .unwrap();
    c.query_drop(format!("GRANT SELECT ON `{db}`.* TO 'stalk_batch'@'%'"))
        .unwrap();
    db
}

/// The overload: root holds `LOCK TABLES t WRITE`; one more `stalk_batch` thread every
/// `step` runs `SELECT SLEEP(0.1) FROM t` and waits for the lock, up to `n` threads; all end
/// when `stop` is set (the lock is released).
struct Overload {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Overload {
    fn start(db: &str, n: usize, step: Duration) -> Overload {
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        let (db2, s2) = (db.to_string(), stop.clone());
        threads.push(std::thread::spawn(move || {
            let mut c = root();
            c.query_drop(format!("LOCK TABLES `{db2}`.t WRITE"))
                .unwrap();
            while !s2.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(20));
            }
            c.query_drop("UNLOCK TABLES").unwrap();
        }));
        let (db2, s2) = (db.to_string(), stop.clone());
        threads.push(std::thread::spawn(move || {
            let mut waiting = Vec::new();
            for _ in 0..n {
                if s2.load(Ordering::SeqCst) {
                    break;
                }
                std::thread::sleep(step);
                let db3 = db2.clone();
                waiting.push(std::thread::spawn(move || {
                    let mut c =
                        Conn::new(mysql::Opts::from_url(&dsn_as("stalk_batch")).unwrap()).unwrap();
                    let _ = c.query_drop(format!("SELECT SLEEP(0.1) FROM `{db3}`.t"));
                }));
            }
            for w in waiting {
                let _ = w.join();
            }
        }));
        Overload { stop, threads }
    }
    fn end(self) {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads {
            t.join().unwrap();
        }
    }
}

fn only_capture(dest: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(dest)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].clone()
}

fn capture_json(dir: &Path) -> serde_json::Value {
    let v = serde_json::from_slice(&std::fs::read(dir.join("capture.json")).unwrap()).unwrap();
    validate("dbio.mysql.stalk.capture", &v);
    v
}

/// Checks `doc` against schema/NAME.schema.json.
fn validate(name: &str, doc: &serde_json::Value) {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../schema/{name}.schema.json"));
    let schema: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{}:\n{}\n{doc}",
        path.display(),
        errors.join("\n")
    );
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn a_lock_pileup_fires_and_attribution_names_its_user() {
    let db = setup("pileup");
    let dest = tempfile::tempdir().unwrap();
    let job = Job::spawn(&args(&[
        "mysql",
        "stalk",
        "--dsn",
        &base_dsn(),
        "--dest",
        dest.path().to_str().unwrap(),
        "--trigger",
        "processlist(state~'Waiting for.*lock')>=12 or Threads_running>40",
        "--cycles",
        "2",
        "--interval",
        "250ms",
        "--pre",
        "20s",
        "--collect",
        "2s",
        "--once",
        "--format",
        "json",
    ]));
    // Let the stalker see a quiet server first, then ramp up one waiter every 300 ms.
    std::thread::sleep(Duration::from_secs(2));
    let load = Overload::start(&db, 20, Duration::from_millis(300));
    let (code, out, err) = job.finish(60);
    load.end();
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("trigger fired"), "{err}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["schema"], "dbio.mysql.stalk/1");
    validate("dbio.mysql.stalk", &r);
    assert_eq!(r["made_by"], "dbio");
    let vals = &r["capture"]["trigger"]["values"];
    assert!(vals[0]["value"].as_f64().unwrap() >= 12.0, "{vals}");
    // The lead-up shows the ramp: quiet at first, growing to the trigger.
    let pre: Vec<u64> = r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["t_s"].as_f64().unwrap() < 0.0)
        .map(|p| p["active_threads"].as_u64().unwrap())
        .collect();
    assert!(pre.len() >= 10, "{pre:?}");
    assert!(pre[0] <= 1, "quiet before the overload: {pre:?}");
    assert!(*pre.last().unwrap() >= 10, "the ramp: {pre:?}");
    assert!(
        pre.windows(2).filter(|w| w[1] > w[0]).count() >= 5,
        "{pre:?}"
    );
    // Who did it: stalk_batch's SLEEP, first, and never before the overload.
    let a = &r["attribution"];
    assert_eq!(a["method"], "processlist sampling");
    // performance_schema is OFF on the test server: no digest ranking, and the log says why.
    assert!(a["digests"].is_null(), "{a}");
    assert!(
        err.contains("attribution by processlist sampling only: performance_schema is OFF"),
        "{err}"
    );
    assert_eq!(a["users"][0]["user"], "stalk_batch", "{a}");
    let top = &a["statements"][0];
    assert_eq!(top["user"], "stalk_batch");
    assert_eq!(top["db"], "");
    assert_eq!(top["digest"], format!("SELECT SLEEP(?) FROM `{db}`.t"));
    assert!(top["collect_share_pct"].as_f64().unwrap() > 90.0, "{top}");
    // The files, in pt-stalk's names and formats.
    let cap = only_capture(dest.path());
    let prefix = r["prefix"].as_str().unwrap();
    for f in [
        "diskstats",
        "mysqladmin",
        "processlist",
        "innodbstatus1",
        "innodbstatus2",
        "procvmstat",
        "interrupts",
        "variables",
        "trigger",
        "lock-waits",
    ] {
        assert!(cap.join(format!("{prefix}-{f}")).is_file(), "{f} missing");
    }
    let index = capture_json(&cap);
    assert_eq!(index["schema"], "dbio.mysql.stalk.capture/1");
    let disk = cap.join(format!("{prefix}-diskstats"));
    // pt-diskstats (percona-toolkit) reads the captured diskstats. Like pt-stalk, dbio writes
    // /proc/diskstats as the kernel prints it (20 fields here), where pt-diskstats 3.2.1 exits
    // 0 and prints nothing; cut to the 14 fields of older kernels, it shows every device.
    let pt = |file: &Path| {
        let o = std::process::Command::new("pt-diskstats")
            .args([
                "--group-by",
                "all",
                "--show-inactive",
                "--columns-regex",
                "rd_s|wr_s|busy",
            ])
            .arg(file)
            .env("LC_ALL", "C")
            .output()
            .expect("pt-diskstats (Debian package percona-toolkit)");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    pt(&disk);
    let text = std::fs::read_to_string(&disk).unwrap();
    let cut: String = text
        .lines()
        .map(|l| {
            if l.starts_with("TS ") {
                format!("{l}\n")
            } else {
                l.split_whitespace().take(14).collect::<Vec<_>>().join(" ") + "\n"
            }
        })
        .collect();
    let cut_file = dest.path().join("diskstats-14");
    std::fs::write(&cut_file, cut).unwrap();
    let pt_out = pt(&cut_file);
    assert!(
        pt_out.contains("rd_s") && pt_out.contains("busy"),
        "{pt_out}"
    );
    let first_dev = text
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .nth(2)
        .unwrap();
    assert!(pt_out.contains(&format!(" {first_dev}")), "{pt_out}");
    // And dbio iostat --replay.
    crate::common::dbio()
        .args(["iostat", "--replay"])
        .arg(&disk)
        .assert()
        .success();
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn sigterm_finishes_the_capture_in_progress() {
    let dest = tempfile::tempdir().unwrap();
    let mut job = Job::spawn(&args(&[
        "mysql",
        "stalk",
        "--dsn",
        &base_dsn(),
        "--dest",
        dest.path().to_str().unwrap(),
        "--trigger",
        "Uptime>0",
        "--cycles",
        "1",
        "--interval",
        "200ms",
        "--pre",
        "5s",
        "--collect",
        "3s",
    ]));
    job.wait_for("a collection", 20, |j| j.stderr().contains("collecting"));
    std::thread::sleep(Duration::from_millis(500));
    job.signal(libc::SIGTERM);
    let (code, _, err) = job.finish(20);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("finishing the capture in progress"), "{err}");
    let idx = capture_json(&only_capture(dest.path()));
    assert_eq!(idx["stopped_early"], serde_json::Value::Null);
    // 3 s at 200 ms: the firing sample and 15 more (a few less if the host is loaded).
    let n = idx["collect_samples"].as_u64().unwrap();
    assert!((12..=16).contains(&n), "{n}");
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn a_second_stalker_on_one_dest_is_refused() {
    let dest = tempfile::tempdir().unwrap();
    let d = dest.path().to_str().unwrap();
    let stalk = |t: &str| {
        args(&[
            "mysql",
            "stalk",
            "--dsn",
            &base_dsn(),
            "--dest",
            d,
            "--trigger",
            t,
            "--interval",
            "200ms",
        ])
    };
    let mut first = Job::spawn(&stalk("Uptime<0"));
    first.wait_for("the first to start", 20, |j| {
        j.stderr().contains("stalking")
    });
    let second = Job::spawn(&stalk("Uptime<0"));
    let (code, _, err) = second.finish(20);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("another stalker holds its lock"), "{err}");
    assert!(err.contains(&format!("pid {}", first.child.id())), "{err}");
    first.signal(libc::SIGTERM);
    let (code, _, err) = first.finish(20);
    assert_eq!(code, Some(0), "{err}");
}

/// A 4 MiB tmpfs mounted for the test, unmounted when dropped.
struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    fn new() -> Tmpfs {
        let d = tempfile::tempdir().unwrap();
        let st = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"])
            .arg(d.path())
            .status()
            .unwrap();
        assert!(st.success(), "mount a tmpfs (needs root)");
        Tmpfs(d)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.0.path())
            .status();
    }
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL and root (mounts a tmpfs)"]
fn a_full_disk_stops_the_collection_and_keeps_what_was_written() {
    let fs = Tmpfs::new();
    let dest = fs.0.path().join("stalk");
    // --min-free 0: the collection runs into ENOSPC (4 MiB: about a hundred samples).
    let job = Job::spawn(&args(&[
        "mysql",
        "stalk",
        "--dsn",
        &base_dsn(),
        "--dest",
        dest.to_str().unwrap(),
        "--trigger",
        "Uptime>0",
        "--cycles",
        "1",
        "--interval",
        "50ms",
        "--pre",
        "1s",
        "--collect",
        "60s",
        "--min-free",
        "0",
        "--once",
        "--format",
        "json",
    ]));
    let (code, out, err) = job.finish(90);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("the disk is full"), "{err}");
    // What was written reads back (capture.json too when it fitted; else as pt-stalk files).
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(r["timeline"].as_array().unwrap().len() > 10, "{r}");
    // --min-free 50: the trigger fires, nothing is collected, the stalker keeps watching.
    let before = std::fs::read_dir(&dest).unwrap().count();
    let mut job = Job::spawn(&args(&[
        "mysql",
        "stalk",
        "--dsn",
        &base_dsn(),
        "--dest",
        dest.to_str().unwrap(),
        "--trigger",
        "Uptime>0",
        "--cycles",
        "1",
        "--interval",
        "100ms",
        "--min-free",
        "50",
    ]));
    job.wait_for("a refusal", 30, |j| {
        j.stderr().contains("below --min-free 50%")
    });
    job.signal(libc::SIGTERM);
    let (code, _, err) = job.finish(30);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("; collecting"), "{err}");
    assert_eq!(std::fs::read_dir(&dest).unwrap().count(), before);
}

/// With performance_schema ON (a throwaway server), the capture holds the digest table at the
/// baseline, the trigger and the end, and the report ranks the batch job's statement first by
/// its share of the collection's statement time, the steady point query ahead in the lead-up.
#[test]
#[ignore = "needs mariadbd (Debian package mariadb-server): starts a throwaway server"]
fn digests_rank_the_batch_job_by_statement_time() {
    require_mariadbd();
    let root_dir = scratch_dir();
    let srv = Server::new(
        root_dir.path(),
        "stalk-ps",
        72,
        &["--performance-schema=ON".to_string()],
    );
    let mut c = srv.conn();
    c.query_drop("CREATE DATABASE shop").unwrap();
    c.query_drop("CREATE TABLE shop.orders (id INT PRIMARY KEY, qty INT) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("INSERT INTO shop.orders VALUES (1, 10), (2, 20), (3, 30)")
        .unwrap();
    c.query_drop("CREATE USER batch@'%'").unwrap();
    c.query_drop("GRANT SELECT ON shop.* TO batch@'%'").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let dsn = srv.dsn("shop");
    let batch_dsn = dsn.replacen("root@", "batch@", 1);
    // The steady load: one point query every 20 ms.
    let mut load = Vec::new();
    {
        let (s, d) = (stop.clone(), dsn.clone());
        load.push(std::thread::spawn(move || {
            let mut c = Conn::new(mysql::Opts::from_url(&d).unwrap()).unwrap();
            while !s.load(Ordering::SeqCst) {
                let _: Option<i32> = c
                    .query_first("SELECT qty FROM orders WHERE id = 2")
                    .unwrap();
                std::thread::sleep(Duration::from_millis(20));
            }
        }));
    }
    let dest = tempfile::tempdir().unwrap();
    let mut job = Job::spawn(&args(&[
        "mysql",
        "stalk",
        "--dsn",
        &dsn,
        "--dest",
        dest.path().to_str().unwrap(),
        "--trigger",
        "Threads_running>=5",
        "--cycles",
        "2",
        "--interval",
        "250ms",
        "--pre",
        "6s",
        "--collect",
        "3s",
        "--once",
        "--format",
        "json",
    ]));
    job.wait_for("the first baseline", 30, |j| {
        j.stderr().contains("performance_schema digests are read")
    });
    std::thread::sleep(Duration::from_secs(4));
    // The batch job: 6 sessions of user batch, each running a 0.2 s statement in a loop.
    for _ in 0..6 {
        let (s, d) = (stop.clone(), batch_dsn.clone());
        load.push(std::thread::spawn(move || {
            let mut c = Conn::new(mysql::Opts::from_url(&d).unwrap()).unwrap();
            while !s.load(Ordering::SeqCst) {
                let _: Option<(i32, i64)> = c
                    .query_first("SELECT SLEEP(0.2), COUNT(*) FROM orders WHERE qty > 5")
                    .unwrap();
            }
        }));
    }
    let (code, out, err) = job.finish(60);
    stop.store(true, Ordering::SeqCst);
    for t in load {
        t.join().unwrap();
    }
    assert_eq!(code, Some(0), "{err}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    validate("dbio.mysql.stalk", &r);
    let d = &r["attribution"]["digests"];
    assert!(d.is_object(), "{err}\n{}", r["attribution"]);
    assert!(d["collect_window_s"].as_f64().unwrap() >= 3.0, "{d}");
    assert!(d["pre_window_s"].as_f64().unwrap() > 0.0, "{d}");
    let rows = d["digests"].as_array().unwrap();
    let top = &rows[0];
    assert!(top["text"].as_str().unwrap().contains("SLEEP"), "{d}");
    assert_eq!(top["schema"], "shop");
    assert!(top["collect_share_pct"].as_f64().unwrap() > 80.0, "{d}");
    assert!(top["collect_calls"].as_u64().unwrap() >= 6, "{d}");
    let point = rows
        .iter()
        .find(|g| {
            let t = g["text"].as_str().unwrap();
            t.starts_with("SELECT `qty` FROM `orders` WHERE")
        })
        .unwrap_or_else(|| panic!("the point query: {d}"));
    assert!(point["pre_calls"].as_u64().unwrap() >= 50, "{point}");
    assert!(
        point["pre_share_pct"].as_f64().unwrap() > point["collect_share_pct"].as_f64().unwrap(),
        "{point}"
    );
    // The file is in the capture and listed by capture.json.
    let idx = capture_json(&only_capture(dest.path()));
    assert!(
        idx["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["name"].as_str().unwrap().ends_with("-ps-digests")),
        "{idx}"
    );
    // The text report shows the ranking.
    let cap = only_capture(dest.path());
    let text = report(&cap, "text");
    assert!(
        text.contains("statement time by digest (performance_schema)"),
        "{text}"
    );
    let html = report(&cap, "html");
    assert!(
        html.contains("Statement time by digest (performance_schema)") && html.contains("SLEEP"),
        "{html}"
    );
}

#[test]
#[ignore = "needs mariadbd (Debian package mariadb-server): starts a throwaway server"]
fn a_server_restarted_mid_collection_is_reconnected() {
    require_mariadbd();
    let root_dir = scratch_dir();
    let mut srv = Server::new(root_dir.path(), "stalk-restart", 71, &[]);
    let dest = tempfile::tempdir().unwrap();
    let mut job = Job::spawn(&args(&[
        "mysql",
        "stalk",
        "--dsn",
        &srv.dsn(""),
        "--dest",
        dest.path().to_str().unwrap(),
        "--trigger",
        "Uptime>0",
        "--cycles",
        "1",
        "--interval",
        "200ms",
        "--pre",
        "2s",
        "--collect",
        "12s",
        "--once",
        "--net-timeout",
        "2s",
    ]));
    job.wait_for("a collection", 30, |j| j.stderr().contains("collecting"));
    srv.kill();
    std::thread::sleep(Duration::from_secs(1));
    srv.start();
    let (code, _, err) = job.finish(60);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("during the collection"), "{err}");
    assert!(err.contains("reconnected during the collection"), "{err}");
    let idx = capture_json(&only_capture(dest.path()));
    assert!(!idx["errors"].as_array().unwrap().is_empty());
    // The samples after the restart have the server's status again.
    let prefix = idx["prefix"].as_str().unwrap();
    let admin = std::fs::read_to_string(
        dest.path()
            .join(prefix)
            .join(format!("{prefix}-mysqladmin")),
    )
    .unwrap();
    let last = admin.rsplit("| Variable_name").next().unwrap();
    assert!(last.contains("| Uptime "), "{last}");
}

/// `dbio mysql stalk --report DIR --format FORMAT`'s stdout (the command must succeed).
fn report(dir: &Path, format: &str) -> String {
    let out = crate::common::dbio()
        .args(["mysql", "stalk", "--format", format, "--report"])
        .arg(dir)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

#[test]
fn reads_a_real_pt_stalk_capture() {
    // testdata/pt-stalk/: files of one pt-stalk 3.5 collection made during the test's overload
    // (see testdata/README.md).
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/pt-stalk");
    let r: serde_json::Value = serde_json::from_str(&report(&dir, "json")).unwrap();
    assert_eq!(r["made_by"], "pt-stalk");
    validate("dbio.mysql.stalk", &r);
    assert!(r["pt_trigger"]
        .as_str()
        .unwrap()
        .contains("pt-stalk ran with"));
    assert!(r["timeline"].as_array().unwrap().len() >= 3);
    assert_eq!(r["attribution"]["users"][0]["user"], "stalk_batch");
    assert!(r["attribution"]["statements"][0]["digest"]
        .as_str()
        .unwrap()
        .starts_with("SELECT SLEEP(?) FROM"));
    assert!(
        r["timeline"][1]["busiest_device"].is_string(),
        "{}",
        r["timeline"]
    );
    // The HTML page: the timeline chart drawn (3 samples), who did it, no digests (pt-stalk
    // keeps none), self-contained.
    let html = report(&dir, "html");
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.contains("<svg") && html.contains("seconds from the trigger"));
    assert!(html.contains("<h2>Who did it</h2>") && html.contains("stalk_batch@"));
    assert!(!html.contains("Statement time by digest"));
    // Nothing loaded from anywhere: no script, no URL but the SVG namespace.
    let urls = html.replace("http://www.w3.org/2000/svg", "");
    assert!(!urls.contains("<script") && !urls.contains("http://") && !urls.contains("https://"));
}
