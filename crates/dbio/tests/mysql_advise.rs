//! `dbio mysql advise` against throwaway MariaDB servers started with bad settings on purpose
//! (see common::mariadb): each state fires its rule; the default server under a light load
//! raises no alarm; a run costs the server a few statements per sample, counted from the
//! server's own Questions counter.

use crate::common::{self, mariadb};
use mysql::prelude::Queryable;
use serde_json::Value;
use std::process::{Child, Command, Stdio};

const NEEDS: &str = "needs mariadbd binaries (mariadb-server package) and sysbench";

fn require() {
    mariadb::require_mariadbd();
    common::require_tool("sysbench", &["--version"], "Debian package sysbench");
}

fn sysbench(port: u16, args: &[&str]) -> Command {
    let mut c = Command::new("sysbench");
    c.args([
        "--mysql-host=127.0.0.1",
        "--mysql-user=root",
        "--mysql-db=advise_sb",
        &format!("--mysql-port={port}"),
    ])
    .args(args)
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    c
}

/// A server with `extra` options and sysbench tables made by `prepare` (`--tables=N ...`).
fn server(dir: &tempfile::TempDir, extra: &[&str], prepare: &[&str]) -> mariadb::Server {
    let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    let s = mariadb::Server::new(dir.path(), "primary", 1, &extra);
    s.conn().query_drop("CREATE DATABASE advise_sb").unwrap();
    let mut args = prepare.to_vec();
    args.extend(["oltp_read_write", "prepare"]);
    let out = sysbench(s.port, &args).output().unwrap();
    assert!(
        out.status.success(),
        "sysbench prepare: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    s
}

/// A load that runs until killed.
struct Load(Child);

impl Drop for Load {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn sysbench_load(port: u16, args: &[&str]) -> Load {
    let mut a = args.to_vec();
    a.extend(["--time=0", "run"]);
    Load(sysbench(port, &a).spawn().unwrap())
}

/// A shell loop of one statement through the mariadb client, until killed.
fn sql_loop(port: u16, sql: &str) -> Load {
    let script = format!(
        "while :; do mariadb --no-defaults -h127.0.0.1 -P{port} -uroot -N -e \"{sql}\" >/dev/null; done"
    );
    let mut c = Command::new("sh");
    c.args(["-c", &script]);
    // The shell and its children in one process group, killed together.
    use std::os::unix::process::CommandExt;
    c.process_group(0);
    Load(c.spawn().unwrap())
}

impl Load {
    fn stop_group(&mut self) {
        // SAFETY: kill(2) on the process group this test created (the shell's pid).
        unsafe {
            libc::kill(-(self.0.id() as i32), libc::SIGKILL);
        }
    }
}

/// `dbio mysql advise` as JSON, and its exit code with --nagios on the same state.
fn advise(dsn: &str, interval: &str, extra: &[&str]) -> Value {
    let out = common::dbio()
        .args(["mysql", "advise", "--dsn", dsn, "--interval", interval])
        .args(["--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "dbio mysql advise: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn rule<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == name)
        .unwrap_or_else(|| panic!("no {name} finding in {r:#}"))
}

fn alarms(r: &Value) -> Vec<String> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["status"] == "WARN" || f["status"] == "CRIT")
        .map(|f| format!("{} {}: {}", f["status"], f["rule"], f["summary"]))
        .collect()
}

#[test]
#[ignore = "needs mariadbd binaries (mariadb-server package) and sysbench"]
fn the_default_server_under_a_light_load_raises_no_alarm() {
    require();
    let dir = mariadb::scratch_dir();
    let s = server(&dir, &[], &["--tables=4", "--table-size=10000"]);
    let _load = sysbench_load(
        s.port,
        &[
            "--tables=4",
            "--table-size=10000",
            "--threads=2",
            "--rate=20",
            "oltp_read_only",
        ],
    );
    let r = advise(&s.dsn(""), "8s", &["--samples", "3"]);
    assert_eq!(alarms(&r), Vec::<String>::new(), "{r:#}");
    for name in [
        "query_cache",
        "buffer_pool",
        "redo_log",
        "table_cache",
        "tmp_tables",
    ] {
        assert_eq!(rule(&r, name)["status"], "OK", "{name}: {r:#}");
    }
    // Not a replica: the rule says nothing.
    assert!(r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["rule"] != "replication"));
    let _ = NEEDS;
}

#[test]
#[ignore = "needs mariadbd binaries (mariadb-server package) and sysbench"]
fn a_512m_query_cache_under_oltp_write_only_fires() {
    require();
    let dir = mariadb::scratch_dir();
    let s = server(
        &dir,
        &["--query-cache-type=1", "--query-cache-size=512M"],
        &["--tables=4", "--table-size=10000"],
    );
    let _load = sysbench_load(
        s.port,
        &[
            "--tables=4",
            "--table-size=10000",
            "--threads=4",
            "oltp_write_only",
        ],
    );
    let r = advise(&s.dsn(""), "6s", &[]);
    assert_eq!(rule(&r, "query_cache")["status"], "CRIT", "{r:#}");
    // The same state under --nagios: CRITICAL, exit code 2.
    let out = common::dbio()
        .args([
            "mysql",
            "advise",
            "--dsn",
            &s.dsn(""),
            "--interval",
            "3s",
            "--nagios",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.starts_with("DBIO MYSQL CRITICAL - "), "{text}");
    assert!(text.contains("CRIT query_cache: "), "{text}");
}

#[test]
#[ignore = "needs mariadbd binaries (mariadb-server package) and sysbench"]
fn a_tiny_buffer_pool_under_a_full_scan_fires() {
    require();
    let dir = mariadb::scratch_dir();
    let s = server(
        &dir,
        &["--innodb-buffer-pool-size=6M"],
        &["--tables=1", "--table-size=200000"],
    );
    let mut load = sql_loop(s.port, "SELECT SUM(LENGTH(c)) FROM advise_sb.sbtest1");
    let r = advise(&s.dsn(""), "6s", &[]);
    load.stop_group();
    let bp = rule(&r, "buffer_pool");
    assert!(bp["status"] == "CRIT" || bp["status"] == "WARN", "{r:#}");
    assert!(bp["set_global"]
        .as_str()
        .unwrap()
        .starts_with("SET GLOBAL innodb_buffer_pool_size = "));
}

#[test]
#[ignore = "needs mariadbd binaries (mariadb-server package) and sysbench"]
fn a_tiny_redo_log_under_oltp_write_only_fires() {
    require();
    let dir = mariadb::scratch_dir();
    let s = server(
        &dir,
        &["--innodb-log-file-size=4M"],
        &["--tables=4", "--table-size=10000"],
    );
    let _load = sysbench_load(
        s.port,
        &[
            "--tables=4",
            "--table-size=10000",
            "--threads=4",
            "oltp_write_only",
        ],
    );
    let r = advise(&s.dsn(""), "6s", &[]);
    assert_eq!(rule(&r, "redo_log")["status"], "CRIT", "{r:#}");
}

#[test]
#[ignore = "needs mariadbd binaries (mariadb-server package) and sysbench"]
fn a_table_open_cache_of_10_fires() {
    require();
    let dir = mariadb::scratch_dir();
    let s = server(
        &dir,
        &["--table-open-cache=10"],
        &["--tables=16", "--table-size=1000"],
    );
    let _load = sysbench_load(
        s.port,
        &[
            "--tables=16",
            "--table-size=1000",
            "--threads=4",
            "oltp_read_only",
        ],
    );
    let r = advise(&s.dsn(""), "6s", &[]);
    assert_eq!(rule(&r, "table_cache")["status"], "WARN", "{r:#}");
}

#[test]
#[ignore = "needs mariadbd binaries (mariadb-server package)"]
fn a_replica_is_judged_and_a_stopped_one_is_critical() {
    mariadb::require_mariadbd();
    let repl = mariadb::Replication::start("ROW");
    let r = advise(&repl.replica.dsn(""), "2s", &[]);
    assert_eq!(r["server"]["replica"], true);
    assert_eq!(rule(&r, "replication")["status"], "OK", "{r:#}");
    // The primary is no replica: no replication finding.
    let p = advise(&repl.primary.dsn(""), "2s", &[]);
    assert!(p["findings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["rule"] != "replication"));
    repl.replica
        .conn()
        .query_drop("STOP SLAVE SQL_THREAD")
        .unwrap();
    let r = advise(&repl.replica.dsn(""), "2s", &[]);
    let f = rule(&r, "replication");
    assert_eq!(f["status"], "CRIT", "{r:#}");
    assert!(
        f["summary"].as_str().unwrap().contains("SQL thread No"),
        "{f:#}"
    );
}

/// dbio's statements per sample, counted in the server's general log (a table here): on
/// connecting, the client library's own `SELECT @@max_allowed_packet` / `@@socket` and dbio's
/// version query; then QUERIES_PER_SAMPLE per sample, nothing else.
#[test]
#[ignore = "needs mariadbd binaries (mariadb-server package)"]
fn a_sample_costs_the_server_five_statements() {
    mariadb::require_mariadbd();
    let dir = mariadb::scratch_dir();
    let s = mariadb::Server::new(
        dir.path(),
        "primary",
        1,
        &["--log-output=TABLE".into(), "--general-log=1".into()],
    );
    let mut c = s.conn();
    c.query_drop("TRUNCATE mysql.general_log").unwrap();
    let r = advise(&s.dsn(""), "2s", &["--samples", "3"]);
    assert_eq!(r["samples"], 3);
    assert_eq!(r["queries_per_sample"], 5);
    let rows: Vec<String> = c
        .query(
            "SELECT CONVERT(argument USING utf8mb4) FROM mysql.general_log \
             WHERE command_type = 'Query' AND thread_id <> CONNECTION_ID() ORDER BY event_time",
        )
        .unwrap();
    let sampling: Vec<&String> = rows
        .iter()
        .filter(|q| !q.starts_with("SELECT @@"))
        .collect();
    assert_eq!(sampling.len(), 3 * 5, "{rows:#?}");
    assert_eq!(rows.len() - sampling.len(), 4, "{rows:#?}");
}

/// `dbio mysql advise` spawned with `args`, its output read when it ends.
fn advise_spawn(dsn: &str, args: &[&str]) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .args(["mysql", "advise", "--dsn", dsn])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A 16-table join under optimizer_search_depth=62 spends seconds in its plan search
/// (MariaDB's state "Statistics"): the optimizer rule fires with the time seen.
#[test]
#[ignore = "needs mariadbd binaries (mariadb-server package)"]
fn a_16_table_join_in_its_plan_search_fires_the_optimizer_rule() {
    mariadb::require_mariadbd();
    let dir = mariadb::scratch_dir();
    let s = mariadb::Server::new(
        dir.path(),
        "primary",
        1,
        &["--optimizer-search-depth=62".into()],
    );
    let mut c = s.conn();
    c.query_drop("CREATE DATABASE j").unwrap();
    c.query_drop("USE j").unwrap();
    let n = 16;
    for i in 1..=n {
        c.query_drop(format!(
            "CREATE TABLE j.t{i} (id INT PRIMARY KEY, a INT, b INT, KEY(a), KEY(b)) ENGINE=InnoDB"
        ))
        .unwrap();
        c.query_drop(format!(
            "INSERT INTO j.t{i} SELECT seq, seq % 10, seq % 7 FROM seq_1_to_100"
        ))
        .unwrap();
        c.query_drop(format!("ANALYZE TABLE j.t{i}")).unwrap();
    }
    let from: Vec<String> = (1..=n).map(|i| format!("j.t{i}")).collect();
    let on: Vec<String> = (2..=n)
        .map(|i| format!("j.t{i}.a = j.t{}.b", i - 1))
        .collect();
    let q = format!(
        "SELECT COUNT(*) FROM {} WHERE {} AND j.t1.id < 0",
        from.join(", "),
        on.join(" AND ")
    );
    let mut jc = s.conn();
    let id: u64 = jc.query_first("SELECT CONNECTION_ID()").unwrap().unwrap();
    let join = std::thread::spawn(move || jc.query_drop(q));
    let r = advise(&s.dsn(""), "4s", &["--samples", "3", "--datadir", "none"]);
    let _ = c.query_drop(format!("KILL {id}"));
    let _ = join.join();
    let f = rule(&r, "optimizer");
    assert_eq!(f["status"], "WARN", "{r:#}");
    let longest = f["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "longest_statistics_s")
        .unwrap()["interval"]
        .as_f64()
        .unwrap();
    assert!(longest >= 1.0, "{f:#}");
}

/// innodb_io_capacity=100 with a redo log that forces no flushing: under oltp_write_only dirty
/// pages pile up near innodb_max_dirty_pages_pct and the flushing rule fires.
#[test]
#[ignore = "needs mariadbd binaries (mariadb-server package) and sysbench"]
fn io_capacity_100_under_writes_fires_the_flushing_rule() {
    require();
    let dir = mariadb::scratch_dir();
    let s = server(
        &dir,
        &[
            "--innodb-io-capacity=100",
            "--innodb-io-capacity-max=100",
            "--innodb-log-file-size=1G",
            "--innodb-buffer-pool-size=128M",
        ],
        &["--tables=4", "--table-size=100000"],
    );
    let _load = sysbench_load(
        s.port,
        &[
            "--tables=4",
            "--table-size=100000",
            "--threads=4",
            "oltp_write_only",
        ],
    );
    std::thread::sleep(std::time::Duration::from_secs(5));
    let r = advise(&s.dsn(""), "6s", &[]);
    let f = rule(&r, "flushing");
    assert_eq!(f["status"], "WARN", "{r:#}");
    assert_eq!(f["evidence"][0]["name"], "innodb_io_capacity");
    assert_eq!(f["evidence"][0]["interval"], 100.0);
}

/// A server stopped (SIGSTOP) in the middle of the interval: the run ends after
/// --net-timeout with a clear error and Nagios UNKNOWN (3).
#[test]
#[ignore = "needs mariadbd binaries (mariadb-server package)"]
fn a_server_that_stops_answering_mid_interval_is_unknown() {
    mariadb::require_mariadbd();
    let dir = mariadb::scratch_dir();
    let s = mariadb::Server::new(dir.path(), "primary", 1, &[]);
    let pid = s.pid().unwrap() as i32;
    let child = advise_spawn(
        &s.dsn(""),
        &[
            "--interval",
            "6s",
            "--net-timeout",
            "2s",
            "--datadir",
            "none",
            "--nagios",
        ],
    );
    std::thread::sleep(std::time::Duration::from_secs(3));
    // SAFETY: kill(2) on the server this test started.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let out = child.wait_with_output().unwrap();
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.starts_with("DBIO MYSQL UNKNOWN - "), "{text}");
    assert!(
        text.contains("sent nothing for 2s (--net-timeout) while taking sample 2 of 2"),
        "{text}"
    );
}

/// An account without PROCESS: the optimizer rule says it was not judged, the rest is judged.
#[test]
#[ignore = "needs mariadbd binaries (mariadb-server package)"]
fn an_account_without_process_is_told_what_is_not_judged() {
    mariadb::require_mariadbd();
    let dir = mariadb::scratch_dir();
    let s = mariadb::Server::new(dir.path(), "primary", 1, &[]);
    s.conn()
        .query_drop("CREATE USER mon@'127.0.0.1' IDENTIFIED BY 'mon'")
        .unwrap();
    let dsn = format!("mysql://mon:mon@127.0.0.1:{}/", s.port);
    let r = advise(&dsn, "2s", &["--datadir", "none"]);
    let f = rule(&r, "optimizer");
    assert_eq!(f["status"], "UNKNOWN", "{r:#}");
    assert!(f["summary"]
        .as_str()
        .unwrap()
        .contains("no PROCESS privilege"));
    assert_eq!(rule(&r, "buffer_pool")["status"], "OK", "{r:#}");
    assert_eq!(r["findings"].as_array().unwrap().len(), 11, "{r:#}");
    assert!(r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("no PROCESS privilege")));
    // root holds PROCESS: judged.
    let r = advise(&s.dsn(""), "2s", &["--datadir", "none"]);
    assert_eq!(rule(&r, "optimizer")["status"], "OK", "{r:#}");
}

/// A server restarted between the two samples: the connection is opened again, Uptime went
/// down, and no rate is computed across the restart: one UNKNOWN `restart` finding.
#[test]
#[ignore = "needs mariadbd binaries (mariadb-server package)"]
fn a_restart_between_samples_computes_no_rate() {
    mariadb::require_mariadbd();
    let dir = mariadb::scratch_dir();
    let mut s = mariadb::Server::new(dir.path(), "primary", 1, &[]);
    let port = s.port;
    let child = advise_spawn(
        &s.dsn(""),
        &["--interval", "10s", "--datadir", "none", "--format", "json"],
    );
    std::thread::sleep(std::time::Duration::from_secs(2));
    s.kill();
    s.start();
    assert_eq!(s.port, port, "the server came back on another port");
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = rule(&r, "restart");
    assert_eq!(f["status"], "UNKNOWN", "{r:#}");
    assert_eq!(r["findings"].as_array().unwrap().len(), 1, "{r:#}");
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("the connection was lost before sample 2"),
        "{notes}"
    );
    assert!(
        notes.contains("no rate is computed across the restart"),
        "{notes}"
    );
}

/// The directories `dbio mysql advise --bench-commit` makes under `base`
/// (`dbio-advise-commit.PID`).
fn bench_dirs(base: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(base)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("dbio-advise-commit."))
        .collect()
}

/// A server whose datadir is on the root filesystem (/tmp here: ext4 on the VM's disk), not
/// in /dev/shm: --bench-commit measures a real device's commit time.
fn server_on_disk() -> (tempfile::TempDir, mariadb::Server) {
    let dir = tempfile::Builder::new()
        .prefix("dbio-advise-bc-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let s = mariadb::Server::new(dir.path(), "primary", 1, &[]);
    (dir, s)
}

/// --bench-commit runs `dbio bench --mode commit` beside the datadir: the fsync_policy
/// finding carries the measured commit time, and the bench's directory is gone after.
#[test]
#[ignore = "needs mariadbd binaries (mariadb-server package) and a disk-backed /var/tmp"]
fn bench_commit_puts_the_measured_commit_time_in_the_evidence() {
    mariadb::require_mariadbd();
    let (dir, s) = server_on_disk();
    let r = advise(&s.dsn(""), "2s", &["--bench-commit"]);
    let f = rule(&r, "fsync_policy");
    let ms = f["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "sync_latency_ms")
        .unwrap_or_else(|| panic!("no sync_latency_ms in {f:#}"))["interval"]
        .as_f64()
        .unwrap();
    assert!(ms > 0.0, "{f:#}");
    assert!(
        f["summary"]
            .as_str()
            .unwrap()
            .contains("bench --mode commit on the datadir"),
        "{f:#}"
    );
    assert_eq!(
        bench_dirs(&dir.path().join("primary")),
        Vec::<String>::new()
    );
    // A directory that does not exist: a clear error naming it, non-zero exit.
    let out = common::dbio()
        .args(["mysql", "advise", "--dsn", &s.dsn(""), "--interval", "1s"])
        .args(["--bench-commit", "/nonexistent-dbio-dir"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--bench-commit: cannot read /nonexistent-dbio-dir"),
        "{err}"
    );
}

/// SIGTERM to dbio while the bench runs: the run ends with an error and sampling nothing,
/// and the bench's files and directory are removed; SIGINT to the process group (Ctrl-C)
/// the same.
#[test]
#[ignore = "needs mariadbd binaries (mariadb-server package) and a disk-backed /var/tmp"]
fn a_signal_during_bench_commit_leaves_no_files() {
    mariadb::require_mariadbd();
    let (dir, s) = server_on_disk();
    let base = dir.path().join("primary");
    for (sig, group) in [(libc::SIGTERM, false), (libc::SIGINT, true)] {
        let mut c = Command::new(assert_cmd::cargo::cargo_bin("dbio"));
        c.args(["mysql", "advise", "--dsn", &s.dsn(""), "--interval", "2s"])
            .args(["--bench-commit", "--format", "json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        use std::os::unix::process::CommandExt;
        c.process_group(0);
        let child = c.spawn().unwrap();
        let pid = child.id() as i32;
        let t0 = std::time::Instant::now();
        while bench_dirs(&base).is_empty() && t0.elapsed().as_secs() < 20 {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert_eq!(bench_dirs(&base).len(), 1, "the bench did not start");
        std::thread::sleep(std::time::Duration::from_secs(1));
        // SAFETY: kill(2) on the process (group) this test started.
        unsafe { libc::kill(if group { -pid } else { pid }, sig) };
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{err}");
        assert!(err.contains("interrupted during --bench-commit"), "{err}");
        assert_eq!(bench_dirs(&base), Vec::<String>::new(), "signal {sig}");
    }
}

/// An 8 MiB tmpfs mounted on a new directory, filled to the last byte by one file this test
/// writes; unmounted when dropped.
struct FullFs(tempfile::TempDir);

impl Drop for FullFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

/// --bench-commit on a full filesystem: bench fails with ENOSPC, dbio says so naming the
/// directory, exits non-zero, and the directory bench made is removed (it was left before).
#[test]
#[ignore = "needs root (mounts a tmpfs) and mariadbd binaries (mariadb-server package)"]
fn bench_commit_on_a_full_filesystem_fails_clearly_and_leaves_nothing() {
    mariadb::require_mariadbd();
    common::require_root("mounting a tmpfs");
    let dir = mariadb::scratch_dir();
    let s = mariadb::Server::new(dir.path(), "primary", 1, &[]);
    let full = FullFs(tempfile::tempdir().unwrap());
    let st = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=8M", "tmpfs"])
        .arg(full.0.path())
        .status()
        .unwrap();
    assert!(st.success(), "mount");
    std::fs::create_dir(full.0.path().join("data")).unwrap();
    // Fill it: writes until ENOSPC.
    {
        use std::io::Write;
        let mut f = std::fs::File::create(full.0.path().join("filler")).unwrap();
        let block = vec![0u8; 1 << 16];
        while f.write_all(&block).is_ok() {}
    }
    let out = common::dbio()
        .args(["mysql", "advise", "--dsn", &s.dsn(""), "--interval", "1s"])
        .arg("--datadir")
        .arg(full.0.path().join("data"))
        .arg("--bench-commit")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(err.contains("dbio bench --mode commit in "), "{err}");
    assert_eq!(bench_dirs(full.0.path()), Vec::<String>::new());
    std::fs::remove_file(full.0.path().join("filler")).unwrap();
}
