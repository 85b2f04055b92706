//! `dbio mysql chunk` as a user runs it, on the real MariaDB (DBIO_TEST_MYSQL, default
//! mysql://root@127.0.0.1:3306/test): exit codes, Ctrl-C, and kill -9 then --resume with no
//! row lost or archived twice. Each test has its own database `chunk_bin_<test>`.

use crate::common::dbio;
use mysql::prelude::Queryable;
use mysql::Conn;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn base_dsn() -> String {
    std::env::var("DBIO_TEST_MYSQL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".into())
}

fn dsn_for(db: &str) -> String {
    let d = base_dsn();
    let scheme_end = d.find("://").map_or(0, |i| i + 3);
    let host_end = d[scheme_end..]
        .find('/')
        .map_or(d.len(), |i| scheme_end + i);
    format!("{}/{db}", &d[..host_end])
}

/// A fresh database `chunk_bin_<name>` with table `t` (id 1..=rows, n = id % 10).
fn fresh(name: &str, rows: u32) -> (Conn, String) {
    let db = format!("chunk_bin_{name}");
    let mut c = Conn::new(mysql::Opts::from_url(&base_dsn()).unwrap())
        .unwrap_or_else(|e| panic!("needs MariaDB at {}: {e}", base_dsn()));
    c.query_drop(format!("DROP DATABASE IF EXISTS `{db}`"))
        .unwrap();
    c.query_drop(format!("CREATE DATABASE `{db}`")).unwrap();
    c.query_drop(format!(
        "CREATE TABLE `{db}`.t (id INT NOT NULL PRIMARY KEY, n INT NOT NULL, pad VARCHAR(40)) ENGINE=InnoDB"
    ))
    .unwrap();
    c.query_drop(format!(
        "INSERT INTO `{db}`.t SELECT seq, seq % 10, CONCAT('row ', seq) FROM seq_1_to_{rows}"
    ))
    .unwrap();
    c.query_drop(format!("USE `{db}`")).unwrap();
    (c, dsn_for(&db))
}

fn count(c: &mut Conn, sql: &str) -> u64 {
    c.query_first::<u64, _>(sql).unwrap().unwrap()
}

fn committed_chunks(state: &Path) -> u64 {
    std::fs::read(state)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v["totals"]["chunks"].as_u64())
        .unwrap_or(0)
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn kill_9_then_resume_loses_no_row_and_archives_none_twice() {
    let (mut c, dsn) = fresh("kill", 12_000);
    let want = count(&mut c, "SELECT COUNT(*) FROM t WHERE n IN (1, 2, 3)");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let archive = dir.path().join("rows.tsv");
    let args = |resume: bool| {
        let mut a: Vec<String> = [
            "mysql",
            "chunk",
            "--dsn",
            &dsn,
            "--table",
            "t",
            "--where",
            "n IN (1, 2, 3)",
            "--archive",
            archive.to_str().unwrap(),
            "--delete",
            "--execute",
            "--state",
            state.to_str().unwrap(),
            "--chunk-size",
            "50",
            "--chunk-max",
            "200",
            "--chunk-time",
            "20ms",
            "--sleep-coef",
            "0.2",
            "--max-load",
            "Threads_running=1000",
        ]
        .map(String::from)
        .to_vec();
        if resume {
            a.push("--resume".into());
        }
        a
    };
    // Three runs killed with SIGKILL at different points, then one that finishes.
    let bin = assert_cmd::cargo::cargo_bin("dbio");
    let mut kills = 0;
    for (i, after) in [3u64, 10, 20].into_iter().enumerate() {
        let mut child = std::process::Command::new(&bin)
            .args(args(i > 0))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let base = committed_chunks(&state);
        loop {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            if committed_chunks(&state) >= base + after {
                child.kill().unwrap();
                kills += 1;
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(60), "no progress");
            std::thread::sleep(Duration::from_millis(3 + i as u64 * 7));
        }
        child.wait().unwrap();
    }
    assert!(kills >= 2, "the job finished before it could be killed");
    let out = dbio().args(args(true)).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("outcome     finished"), "{text}");

    assert_eq!(
        count(&mut c, "SELECT COUNT(*) FROM t WHERE n IN (1, 2, 3)"),
        0
    );
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 12_000 - want);
    let body = std::fs::read_to_string(&archive).unwrap();
    let mut lines = body.lines();
    assert_eq!(lines.next(), Some("id\tn\tpad"));
    let ids: Vec<u32> = lines
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let id: u32 = f[0].parse().unwrap();
            assert_eq!(f[1], (id % 10).to_string());
            assert_eq!(f[2], format!("row {id}"));
            id
        })
        .collect();
    let expect: Vec<u32> = (1..=12_000)
        .filter(|i| (1..=3).contains(&(i % 10)))
        .collect();
    assert_eq!(ids.len(), expect.len(), "rows lost or archived twice");
    assert_eq!(ids, expect);
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn ctrl_c_finishes_the_chunk_saves_and_exits_130() {
    let (mut c, dsn) = fresh("sigint", 20_000);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let bin = assert_cmd::cargo::cargo_bin("dbio");
    let common = [
        "mysql",
        "chunk",
        "--dsn",
        &dsn,
        "--table",
        "t",
        "--update",
        "SET n = n + 100",
        "--where",
        "n < 100",
        "--execute",
        "--state",
        state.to_str().unwrap(),
        "--max-load",
        "1000",
    ];
    let mut base = common.to_vec();
    base.extend([
        "--chunk-size",
        "100",
        "--chunk-max",
        "100",
        "--sleep-coef",
        "3",
    ]);
    let child = std::process::Command::new(&bin)
        .args(&base)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while committed_chunks(&state) < 3 {
        assert!(started.elapsed() < Duration::from_secs(60), "no progress");
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("interrupted (Ctrl-C)"), "{text}");
    let done = committed_chunks(&state);
    assert!(done < 200, "it did not stop");
    // Exactly the committed chunks' rows were updated, each once.
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t WHERE n >= 200"), 0);
    assert_eq!(
        count(&mut c, "SELECT COUNT(*) FROM t WHERE n >= 100"),
        done * 100
    );
    let mut resume: Vec<&str> = common.to_vec();
    resume.extend(["--resume", "--sleep-coef", "0", "--chunk-max", "5000"]);
    dbio().args(&resume).assert().code(0);
    assert_eq!(
        count(&mut c, "SELECT COUNT(*) FROM t WHERE n < 100 OR n >= 200"),
        0
    );
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn refusals_and_failures_exit_2_and_1_naming_the_cause() {
    let (mut c, dsn) = fresh("exits", 500);
    c.query_drop("CREATE TABLE nokey (a INT, b INT) ENGINE=InnoDB")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let st = dir.path().join("s.json");
    let run = |extra: &[&str]| {
        let mut a = vec![
            "mysql",
            "chunk",
            "--dsn",
            &dsn,
            "--state",
            st.to_str().unwrap(),
        ];
        a.extend(extra);
        dbio().args(a).output().unwrap()
    };
    let err = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();
    let o = run(&["--table", "nokey", "--delete"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("no primary key"), "{}", err(&o));
    let o = run(&["--table", "t", "--update", "SET id = id + 1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("assigns the key column id"), "{}", err(&o));
    let o = run(&["--table", "t", "--where", "1) OR (1", "--delete"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["--table", "t"]);
    assert_eq!(o.status.code(), Some(2), "no action: {}", err(&o));
    let o = run(&[
        "--table",
        "t",
        "--delete",
        "--max-load",
        "Threads_running=x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("--max-load"), "{}", err(&o));
    let o = run(&["--table", "t", "--delete", "--window", "25:00-01:00"]);
    assert_eq!(o.status.code(), Some(2));
    // The replica's lag cannot be read (nothing listens on port 9): fail closed, exit 1.
    let o = run(&[
        "--table",
        "t",
        "--delete",
        "--execute",
        "--replica",
        "mysql://root@127.0.0.1:9/",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("stopped by the guard") && out.contains("cannot be read"),
        "{out}"
    );
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 500);
    // Its checkpoint is there: a fresh start is refused, --resume is the way on.
    let o = run(&["--table", "t", "--delete", "--execute"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("--resume"), "{}", err(&o));
    let o = run(&["--table", "t", "--delete", "--execute", "--resume"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 0);
    // A finished job's checkpoint does not block the next run of the same job.
    let o = run(&["--table", "t", "--delete", "--execute"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
}

/// Issue 24 item 10: after a server crash, InnoDB reads a table's row count from its persistent
/// statistics again, which may be those of a much smaller table (recalculation counts changes
/// in memory, and the crash lost them): here 13 rows estimated of 30,000. The campaign saw a
/// full-scan plan then, and dbio blamed `--where`. On this MariaDB (10.11) the plan stays a
/// range scan, so the refusal branch below runs only where the server picks a full scan (its
/// message is unit-tested beside `not_range_hint`); what is checked everywhere is that the
/// resumed job finishes with exactly the rows it should leave.
#[test]
#[ignore = "needs mariadbd (a throwaway server, crashed and restarted)"]
fn after_a_crash_stale_statistics_are_named_not_the_condition() {
    use crate::common::mariadb::{require_mariadbd, scratch_dir, Server};
    require_mariadbd();
    let dir = scratch_dir();
    let mut server = Server::new(dir.path(), "stalestats", 1, &[]);
    let mut c = server.conn();
    c.query_drop("CREATE DATABASE s").unwrap();
    c.query_drop("USE s").unwrap();
    c.query_drop(
        "CREATE TABLE s.t (id INT NOT NULL PRIMARY KEY, n INT) ENGINE=InnoDB \
         STATS_PERSISTENT=1 STATS_AUTO_RECALC=0",
    )
    .unwrap();
    c.query_drop("INSERT INTO s.t SELECT seq, seq FROM seq_1_to_13")
        .unwrap();
    c.query_drop("ANALYZE TABLE s.t").unwrap();
    c.query_drop("INSERT INTO s.t SELECT seq, seq FROM seq_14_to_30000")
        .unwrap();
    drop(c);
    let st = dir.path().join("st.json");
    let dsn = server.dsn("s");
    let run = |extra: &[&str]| {
        let mut cmd = dbio();
        cmd.args(["mysql", "chunk", "--dsn", &dsn, "--table", "t", "--delete"])
            .args([
                "--where",
                "id % 4 <> 0",
                "--chunk-size",
                "1000",
                "--chunk-max",
                "1000",
            ])
            .arg("--state")
            .arg(&st)
            .args(extra);
        cmd.output().unwrap()
    };
    // Part of the job, then the server crashes.
    let out = run(&["--execute", "--run-time", "1s", "--sleep-coef", "20"]);
    let part = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(part.contains("stopped at --run-time"), "{part}");
    server.kill();
    server.start();
    let mut c = server.conn();
    let estimate: u64 = c
        .query_first(
            "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = 's' AND TABLE_NAME = 't'",
        )
        .unwrap()
        .unwrap();
    let out = run(&["--execute", "--resume"]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    eprintln!(
        "resume after the crash ({estimate} rows estimated): {:?}\n{err}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout)
    );
    if out.status.code() == Some(2) {
        // A full-scan plan: named for what it is.
        assert!(err.contains("statistics look stale"), "{err}");
        assert!(err.contains("ANALYZE TABLE `s`.`t`"), "{err}");
        assert!(!err.contains("Check --where"), "{err}");
        c.query_drop("ANALYZE TABLE s.t").unwrap();
        let out = run(&["--execute", "--resume"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    } else {
        assert!(out.status.success(), "{err}");
    }
    let left: u64 = c.query_first("SELECT COUNT(*) FROM s.t").unwrap().unwrap();
    assert_eq!(left, 7500);
}
