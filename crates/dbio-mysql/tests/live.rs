//! Chunked jobs on the real MariaDB (DBIO_TEST_MYSQL, default
//! mysql://root@127.0.0.1:3306/test): every test makes its own database `chunk_<test>` and
//! checks the rows with SQL afterwards.

use dbio_mysql::archive::Format;
use dbio_mysql::guard::{GuardConfig, Threshold};
use dbio_mysql::job::{self, Action, Options, PendingPolicy, Quiet};
use dbio_mysql::Error;
use mysql::prelude::Queryable;
use mysql::Conn;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

const NEEDS: &str = "needs MariaDB at DBIO_TEST_MYSQL";

fn base_dsn() -> String {
    std::env::var("DBIO_TEST_MYSQL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".into())
}

/// The server part of the DSN with `db` as its database.
fn dsn_for(db: &str) -> String {
    let d = base_dsn();
    let scheme_end = d.find("://").map_or(0, |i| i + 3);
    let host_end = d[scheme_end..]
        .find('/')
        .map_or(d.len(), |i| scheme_end + i);
    format!("{}/{db}", &d[..host_end])
}

/// A fresh database `chunk_<name>` and a connection to it.
fn fresh(name: &str) -> (Conn, String) {
    let db = format!("chunk_{name}");
    let mut c = Conn::new(mysql::Opts::from_url(&base_dsn()).unwrap())
        .unwrap_or_else(|e| panic!("{NEEDS}: cannot connect to {}: {e}", base_dsn()));
    c.query_drop(format!("DROP DATABASE IF EXISTS `{db}`"))
        .unwrap();
    c.query_drop(format!("CREATE DATABASE `{db}`")).unwrap();
    let dsn = dsn_for(&db);
    let conn = Conn::new(mysql::Opts::from_url(&dsn).unwrap()).unwrap();
    (conn, dsn)
}

fn count(c: &mut Conn, sql: &str) -> u64 {
    c.query_first::<u64, _>(sql).unwrap().unwrap()
}

fn checksum(c: &mut Conn, table: &str) -> u64 {
    let r: (String, Option<u64>) = c
        .query_first(format!("CHECKSUM TABLE {table} EXTENDED"))
        .unwrap()
        .unwrap();
    r.1.unwrap()
}

fn options(dsn: &str, table: &str, cond: Option<&str>, action: Action, state: &Path) -> Options {
    Options {
        dsn: dsn.to_string(),
        table: table.to_string(),
        condition: cond.map(str::to_string),
        action,
        key: None,
        execute: true,
        chunk_time: Duration::from_millis(50),
        chunk_size: 200,
        chunk_min: 10,
        chunk_max: 2000,
        sleep_coef: 0.0,
        guard: GuardConfig {
            max_load: vec![Threshold {
                variable: "Threads_running".into(),
                value: 1000.0,
            }],
            ..GuardConfig::default()
        },
        replicas: vec![],
        tls: dbio_mysql::server::Tls::Dsn,
        net: dbio_mysql::conn::Net::default(),
        lock_wait_timeout: 1,
        retries: 3,
        state: Some(state.to_path_buf()),
        state_dir: state.parent().unwrap().to_path_buf(),
        resume: false,
        pending: PendingPolicy::Refuse,
        window: None,
        run_time: None,
        check_interval: Duration::from_millis(100),
        archive_children: false,
        allow_cascade: false,
        marker_table: None,
    }
}

fn no_stop() -> AtomicBool {
    AtomicBool::new(false)
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn delete_on_an_integer_key_removes_exactly_the_matching_rows() {
    let (mut c, dsn) = fresh("int_delete");
    c.query_drop(
        "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, n INT NOT NULL, pad CHAR(50)) ENGINE=InnoDB",
    )
    .unwrap();
    c.query_drop("INSERT INTO t SELECT seq, seq % 7, 'x' FROM seq_1_to_5000")
        .unwrap();
    let matching = count(&mut c, "SELECT COUNT(*) FROM t WHERE n = 3");
    let others = checksum_of_others(&mut c);
    let dir = tempfile::tempdir().unwrap();
    let o = options(
        &dsn,
        "t",
        Some("n = 3"),
        Action::Delete,
        &dir.path().join("s.json"),
    );
    let r = job::run(&o, &no_stop(), &mut Quiet).unwrap();
    let run = r.run.expect("executed");
    assert_eq!(run.outcome, "finished");
    assert_eq!(run.rows_affected, matching);
    assert_eq!(run.rows_walked, 5000);
    assert!(run.chunks > 3, "{} chunks", run.chunks);
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t WHERE n = 3"), 0);
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 5000 - matching);
    assert_eq!(checksum_of_others(&mut c), others);
    assert_eq!(r.plan.explain.access, "range");
    assert_eq!(r.plan.key_columns, vec!["id"]);
}

/// A checksum of the rows the job must not touch (n <> 3).
fn checksum_of_others(c: &mut Conn) -> String {
    c.query_first::<String, _>(
        "SELECT CONCAT(COUNT(*), '/', SUM(CRC32(CONCAT_WS('|', id, n, pad)))) FROM t WHERE n <> 3",
    )
    .unwrap()
    .unwrap()
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn archive_on_a_composite_key_holds_exactly_the_deleted_rows() {
    let (mut c, dsn) = fresh("composite_archive");
    c.query_drop(
        "CREATE TABLE t (a INT NOT NULL, b VARCHAR(20) NOT NULL, v INT, note VARCHAR(30), PRIMARY KEY (a, b)) ENGINE=InnoDB",
    )
    .unwrap();
    c.query_drop(
        "INSERT INTO t SELECT seq % 50, CONCAT('k', seq), seq, IF(seq % 11 = 0, NULL, CONCAT('tab\there ', seq)) FROM seq_1_to_4000",
    )
    .unwrap();
    let want: BTreeSet<String> = c
        .query::<String, _>(
            "SELECT CONCAT_WS('|', a, b, v, IFNULL(REPLACE(note, '\t', '\\\\t'), '\\\\N')) FROM t WHERE v % 3 = 0",
        )
        .unwrap()
        .into_iter()
        .collect();
    let before = count(&mut c, "SELECT COUNT(*) FROM t");
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("a.tsv");
    let o = options(
        &dsn,
        "t",
        Some("v % 3 = 0"),
        Action::Archive {
            path: archive.clone(),
            format: Format::Tsv,
            delete: true,
        },
        &dir.path().join("s.json"),
    );
    let r = job::run(&o, &no_stop(), &mut Quiet).unwrap();
    let run = r.run.unwrap();
    assert_eq!(r.plan.key_columns, vec!["a", "b"]);
    assert_eq!(r.plan.explain.access, "range");
    assert_eq!(run.rows_archived, want.len() as u64);
    assert_eq!(run.rows_affected, want.len() as u64);
    let text = std::fs::read_to_string(&archive).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("a\tb\tv\tnote"));
    let got: Vec<String> = lines.map(|l| l.replace('\t', "|")).collect();
    let got_set: BTreeSet<String> = got.iter().cloned().collect();
    assert_eq!(got.len(), got_set.len(), "a row archived twice");
    assert_eq!(got_set, want);
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t WHERE v % 3 = 0"), 0);
    assert_eq!(
        count(&mut c, "SELECT COUNT(*) FROM t"),
        before - want.len() as u64
    );
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn update_on_a_string_key_and_an_sql_archive_that_replays_to_the_same_table() {
    let (mut c, dsn) = fresh("string_update");
    c.query_drop(
        "CREATE TABLE t (code VARCHAR(40) NOT NULL PRIMARY KEY, status VARCHAR(10) NOT NULL, d DATETIME(3), b VARBINARY(8), note TEXT) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
    )
    .unwrap();
    c.query_drop(
        "INSERT INTO t SELECT CONCAT(CHAR(97 + seq % 26), '-', MD5(seq)), 'new', '2020-01-02 03:04:05.678' + INTERVAL seq MINUTE, UNHEX(LPAD(HEX(seq), 8, '0')), IF(seq % 5 = 0, NULL, CONCAT('it''s ', seq, ' caf\u{e9}\\\\')) FROM seq_1_to_3000",
    )
    .unwrap();
    let matching = count(&mut c, "SELECT COUNT(*) FROM t WHERE code < 'm'");
    let dir = tempfile::tempdir().unwrap();
    let o = options(
        &dsn,
        "t",
        Some("code < 'm'"),
        Action::Update {
            set: "SET status = 'old'".into(),
        },
        &dir.path().join("s.json"),
    );
    let r = job::run(&o, &no_stop(), &mut Quiet).unwrap();
    assert_eq!(r.plan.key_columns, vec!["code"]);
    assert_eq!(r.run.unwrap().rows_affected, matching);
    assert_eq!(
        count(&mut c, "SELECT COUNT(*) FROM t WHERE status = 'old'"),
        matching
    );
    assert_eq!(
        count(
            &mut c,
            "SELECT COUNT(*) FROM t WHERE status = 'old' AND code >= 'm'"
        ),
        0
    );

    // Archive every row as SQL (nothing deleted), replay it into an empty copy: same checksum.
    let sql = dir.path().join("a.sql");
    let o = options(
        &dsn,
        "t",
        None,
        Action::Archive {
            path: sql.clone(),
            format: Format::Sql,
            delete: false,
        },
        &dir.path().join("s2.json"),
    );
    let run = job::run(&o, &no_stop(), &mut Quiet).unwrap().run.unwrap();
    assert_eq!(run.rows_archived, 3000);
    assert_eq!(run.rows_affected, 0);
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 3000);
    c.query_drop("CREATE DATABASE `chunk_string_update_copy`")
        .ok();
    c.query_drop("DROP TABLE IF EXISTS `chunk_string_update_copy`.`t`")
        .unwrap();
    c.query_drop("CREATE TABLE `chunk_string_update_copy`.`t` LIKE t")
        .unwrap();
    let text = std::fs::read_to_string(&sql).unwrap().replace(
        "INSERT INTO `chunk_string_update`.`t`",
        "INSERT INTO `chunk_string_update_copy`.`t`",
    );
    for stmt in text.split(";\n").filter(|s| s.contains("INSERT")) {
        c.query_drop(stmt)
            .unwrap_or_else(|e| panic!("{e}: {}", &stmt[..200.min(stmt.len())]));
    }
    assert_eq!(
        checksum(&mut c, "`chunk_string_update_copy`.`t`"),
        checksum(&mut c, "t")
    );
    c.query_drop("DROP DATABASE `chunk_string_update_copy`")
        .unwrap();
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn a_table_without_a_usable_key_is_refused() {
    let (mut c, dsn) = fresh("nokey");
    c.query_drop("CREATE TABLE t (a INT, b INT, UNIQUE KEY u (a), KEY k (b)) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("INSERT INTO t SELECT seq, seq FROM seq_1_to_100")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let o = options(&dsn, "t", None, Action::Delete, &dir.path().join("s.json"));
    let e = job::run(&o, &no_stop(), &mut Quiet).unwrap_err();
    assert!(
        matches!(e, Error::Key(dbio_mysql::key::KeyError::NoUsableKey(_))),
        "{e}"
    );
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 100);
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn an_index_on_the_condition_does_not_steer_chunks_off_the_key() {
    // Without FORCE INDEX the server takes the unique index u for `u = 4000` (EXPLAIN type
    // const on u): each chunk would read by the condition, not by the key range.
    let (mut c, dsn) = fresh("notrange");
    c.query_drop("CREATE TABLE t (id INT NOT NULL PRIMARY KEY, u INT NOT NULL, d DATE NOT NULL, UNIQUE KEY u (u), KEY d (d)) ENGINE=InnoDB")
        .unwrap();
    c.query_drop(
        "INSERT INTO t SELECT seq, seq, '2020-01-01' + INTERVAL seq % 400 DAY FROM seq_1_to_5000",
    )
    .unwrap();
    c.query_drop("ANALYZE TABLE t").unwrap();
    let plain: (Option<String>, Option<String>) = c
        .query_first("EXPLAIN SELECT 1 FROM t WHERE id > 0 AND id <= 5000 AND u = 4000")
        .map(|r: Option<mysql::Row>| {
            let r = r.unwrap();
            (
                r.get::<Option<String>, _>("type").unwrap(),
                r.get::<Option<String>, _>("key").unwrap(),
            )
        })
        .unwrap();
    assert_ne!(
        plain.1.as_deref(),
        Some("PRIMARY"),
        "the premise: {plain:?}"
    );
    let dir = tempfile::tempdir().unwrap();
    for (i, cond) in ["u = 4000", "d = '2020-01-05'"].iter().enumerate() {
        let want = count(&mut c, &format!("SELECT COUNT(*) FROM t WHERE {cond}"));
        let mut o = options(
            &dsn,
            "t",
            Some(cond),
            Action::Delete,
            &dir.path().join(format!("s{i}.json")),
        );
        o.chunk_size = 2000;
        let r = job::run(&o, &no_stop(), &mut Quiet).unwrap();
        assert_eq!(r.plan.explain.access, "range", "{cond}");
        assert_eq!(r.plan.explain.key.as_deref(), Some("PRIMARY"), "{cond}");
        assert_eq!(r.run.unwrap().rows_affected, want, "{cond}");
        assert_eq!(
            count(&mut c, &format!("SELECT COUNT(*) FROM t WHERE {cond}")),
            0
        );
    }
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn a_dry_run_changes_nothing() {
    let (mut c, dsn) = fresh("dryrun");
    c.query_drop("CREATE TABLE t (id INT NOT NULL PRIMARY KEY, n INT) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("INSERT INTO t SELECT seq, seq % 2 FROM seq_1_to_3000")
        .unwrap();
    let before = checksum(&mut c, "t");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("s.json");
    let archive = dir.path().join("a.tsv");
    for action in [
        Action::Delete,
        Action::Update {
            set: "n = 5".into(),
        },
        Action::Archive {
            path: archive.clone(),
            format: Format::Tsv,
            delete: true,
        },
    ] {
        let mut o = options(&dsn, "t", Some("n = 1"), action, &state);
        o.execute = false;
        let r = job::run(&o, &no_stop(), &mut Quiet).unwrap();
        assert!(r.run.is_none());
        assert!(!r.execute);
        assert_eq!(r.plan.explain.access, "range");
        assert_eq!(r.plan.end_key, vec!["3000"]);
        assert!(r.plan.chunks_estimate >= 1);
    }
    assert_eq!(checksum(&mut c, "t"), before);
    assert!(!state.exists(), "a dry run wrote a checkpoint");
    assert!(!archive.exists(), "a dry run wrote an archive");
}

/// Client threads that each hold a connection busy in SLEEP(secs).
fn sleepers(dsn: &str, n: usize, secs: f64) -> Vec<std::thread::JoinHandle<()>> {
    (0..n)
        .map(|_| {
            let dsn = dsn.to_string();
            std::thread::spawn(move || {
                let mut c = Conn::new(mysql::Opts::from_url(&dsn).unwrap()).unwrap();
                c.query_drop(format!("DO SLEEP({secs})")).unwrap();
            })
        })
        .collect()
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn the_load_guard_pauses_under_real_load_and_resumes_with_hysteresis() {
    let (mut c, dsn) = fresh("guard");
    c.query_drop("CREATE TABLE t (id INT NOT NULL PRIMARY KEY, n INT) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("INSERT INTO t SELECT seq, 1 FROM seq_1_to_2000")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(&dsn, "t", None, Action::Delete, &dir.path().join("s.json"));
    o.guard.max_load = vec![Threshold {
        variable: "Threads_running".into(),
        value: 8.0,
    }];
    o.guard.resume_load = vec![Threshold {
        variable: "Threads_running".into(),
        value: 4.0,
    }];
    // 10 busy clients for 2 s (Threads_running >= 10: pause), 4 of them for 5 s: after 2 s the
    // load is 4 (plus whatever else runs on this server), below the max but not below the
    // resume mark, so the job stays paused until the last 4 finish.
    let mut threads = sleepers(&dsn, 6, 2.0);
    threads.extend(sleepers(&dsn, 4, 5.0));
    let waited = Instant::now();
    while count(&mut c, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'THREADS_RUNNING'") < 11 {
        assert!(waited.elapsed() < Duration::from_secs(5), "the sleepers did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let started = Instant::now();
    let r = job::run(&o, &no_stop(), &mut Quiet).unwrap();
    let run = r.run.unwrap();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(run.outcome, "finished");
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 0);
    assert!(!run.pauses.is_empty(), "no pause: {run:?}");
    let p = &run.pauses[0];
    assert_eq!(p.cause, "load");
    assert_eq!(p.subject, "Threads_running");
    // dbio's own connection is not counted: 10 sleepers, not 11.
    assert!(p.value.unwrap() >= 10.0, "{p:?}");
    assert_eq!(p.limit, Some(8.0));
    assert!(p.message.contains("resumes below 4"), "{}", p.message);
    // The pause outlasted the 2 s sleepers: it ended only when the 5 s ones did.
    let total_paused: f64 = run.pauses.iter().map(|p| p.duration_s).sum();
    assert!(
        total_paused >= 3.5,
        "paused {total_paused} s: resumed without hysteresis"
    );
    assert!(started.elapsed() >= Duration::from_secs_f64(4.0));
    assert!((run.paused_s - total_paused).abs() < 0.01);
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn a_second_copy_of_a_running_job_is_refused_by_its_lock() {
    let (mut c, dsn) = fresh("lock");
    c.query_drop("CREATE TABLE t (id INT NOT NULL PRIMARY KEY, n INT) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("INSERT INTO t SELECT seq, 1 FROM seq_1_to_3000")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut first = options(
        &dsn,
        "t",
        Some("n = 1"),
        Action::Delete,
        &dir.path().join("s1.json"),
    );
    first.chunk_size = 10;
    first.chunk_max = 10;
    first.sleep_coef = 20.0;
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let stop1 = stop.clone();
    let o1 = first.clone();
    let h = std::thread::spawn(move || job::run(&o1, &stop1, &mut Quiet));
    // Wait for the first copy's first chunk (it holds the lock from before it).
    let waited = Instant::now();
    while count(&mut c, "SELECT COUNT(*) FROM t") == 3000 {
        assert!(
            waited.elapsed() < Duration::from_secs(10),
            "the first copy did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut second = first.clone();
    second.state = Some(dir.path().join("s2.json"));
    let e = job::run(&second, &no_stop(), &mut Quiet).unwrap_err();
    assert!(matches!(e, Error::Locked(_)), "{e}");
    // Issue 24 item 16: localhost vs 127.0.0.1, db.t vs t and a trailing space ran four
    // copies on one table; another condition on the same table is refused too.
    let other_host = dsn.replace("127.0.0.1", "localhost");
    let variants = [
        (other_host.clone(), "t", Some("n = 1")),
        (dsn.clone(), "chunk_lock.t", Some("n = 1")),
        (dsn.clone(), "t", Some("n = 1 ")),
        (dsn.clone(), "t", Some("n = 2")),
    ];
    for (i, (d, t, w)) in variants.iter().enumerate() {
        let path = dir.path().join(format!("v{i}.json"));
        let o = options(d, t, *w, Action::Delete, &path);
        let e = job::run(&o, &no_stop(), &mut Quiet).unwrap_err();
        assert!(matches!(e, Error::Locked(_)), "{d} {t} {w:?}: {e}");
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let run = h.join().unwrap().unwrap().run.unwrap();
    assert_eq!(run.outcome, "interrupted");
    assert_eq!(
        count(&mut c, "SELECT COUNT(*) FROM t"),
        3000 - run.rows_affected
    );
    // The lock went with the first copy: the job now resumes, reached by another spelling of
    // the same server, table and condition (the same job: its checkpoint is found).
    let mut again = options(
        &other_host,
        "chunk_lock.t",
        Some("n = 1 "),
        Action::Delete,
        &dir.path().join("s1.json"),
    );
    again.resume = true;
    again.sleep_coef = 0.0;
    again.chunk_max = 2000;
    let run = job::run(&again, &no_stop(), &mut Quiet)
        .unwrap()
        .run
        .unwrap();
    assert_eq!(run.outcome, "finished");
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 0);
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn an_unreadable_replica_lag_stops_the_job_before_any_chunk() {
    let (mut c, dsn) = fresh("replica");
    c.query_drop("CREATE TABLE t (id INT NOT NULL PRIMARY KEY) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("INSERT INTO t SELECT seq FROM seq_1_to_500")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // A port nothing listens on, and a server that is not a replica (this one).
    for replica in ["mysql://root@127.0.0.1:9/".to_string(), dsn_for("test")] {
        let mut o = options(&dsn, "t", None, Action::Delete, &dir.path().join("s.json"));
        o.replicas = vec![replica.clone()];
        o.guard.max_lag = Some(Duration::from_secs(5));
        let run = job::run(&o, &no_stop(), &mut Quiet).unwrap().run.unwrap();
        assert_eq!(run.outcome, "stopped", "{replica}");
        assert!(
            run.stop_reason
                .as_deref()
                .unwrap()
                .contains("cannot be read"),
            "{run:?}"
        );
        assert_eq!(run.chunks, 0);
        assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 500);
        std::fs::remove_file(dir.path().join("s.json")).unwrap();
    }
}

/// An archive+delete job of `table` (ids 1..=1000) that ran no chunk yet, then the state a
/// kill leaves between the chunk's fsync and the checkpoint after its COMMIT: the rows
/// `1..=n` archived, a pending record with its token, and (if `committed`) the chunk's rows
/// gone and its token in the marker table, as the chunk's transaction leaves them.
fn died_committing(
    c: &mut Conn,
    dsn: &str,
    dir: &Path,
    table: &str,
    n: u32,
    committed: bool,
) -> Options {
    c.query_drop(format!(
        "CREATE TABLE {table} (id INT NOT NULL PRIMARY KEY, n INT) ENGINE=InnoDB"
    ))
    .unwrap();
    c.query_drop(format!(
        "INSERT INTO {table} SELECT seq, seq FROM seq_1_to_1000"
    ))
    .unwrap();
    let state = dir.join(format!("{table}.json"));
    let archive = dir.join(format!("{table}.tsv"));
    let mut o = options(
        dsn,
        table,
        None,
        Action::Archive {
            path: archive.clone(),
            format: Format::Tsv,
            delete: true,
        },
        &state,
    );
    o.chunk_size = 100;
    o.chunk_max = 100;
    o.run_time = Some(Duration::ZERO);
    // --run-time 0: the job plans, writes its checkpoint and archive header, runs no chunk.
    let run = job::run(&o, &no_stop(), &mut Quiet).unwrap().run.unwrap();
    assert_eq!((run.outcome.as_str(), run.chunks), ("run_time", 0));
    let mut bytes = std::fs::read(&archive).unwrap();
    let before = bytes.len() as u64;
    for id in 1..=n {
        bytes.extend_from_slice(format!("{id}\t{id}\n").as_bytes());
    }
    // Appended in place (the archive's inode is part of its identity).
    use std::io::Write;
    std::fs::OpenOptions::new()
        .append(true)
        .open(&archive)
        .unwrap()
        .write_all(&bytes[before as usize..])
        .unwrap();
    let file = std::fs::File::open(&archive).unwrap();
    let mut ck = dbio_mysql::state::Checkpoint::load(&state).unwrap();
    let token = 0x5eed_0000_0000_0000 | u64::from(n);
    ck.pending = Some(dbio_mysql::state::Pending {
        upper: vec![dbio_mysql::value::KeyValue::Int(i64::from(n))],
        archive_before: before,
        archive_after: bytes.len() as u64,
        rows: u64::from(n),
        walked: u64::from(n),
        token,
        archive_after_tail: Some(
            dbio_mysql::archive::tail_hash(&file, bytes.len() as u64).unwrap(),
        ),
    });
    ck.save(&state).unwrap();
    if committed {
        c.query_drop(format!("DELETE FROM {table} WHERE id <= {n}"))
            .unwrap();
        c.exec_drop(
            "INSERT INTO dbio_chunk_marker (job, token, chunks, upper_key) VALUES (?, ?, 1, ?)",
            (&ck.job, token, n.to_string()),
        )
        .unwrap();
    }
    o.resume = true;
    o.run_time = None;
    o.chunk_max = 2000;
    o
}

fn archived_ids(a: &Path) -> Vec<u32> {
    std::fs::read_to_string(a)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split('\t').next().unwrap().parse().unwrap())
        .collect()
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn an_archive_chunk_that_died_committing_is_settled_on_resume() {
    // The two crash points a kill can hit between the archive's fsync and the checkpoint:
    // before COMMIT (the rows are still in the table: the archive is cut back) and after it
    // (the rows are gone: the archive keeps them), told apart by the commit marker.
    let (mut c, dsn) = fresh("pending");
    let dir = tempfile::tempdir().unwrap();
    let before = died_committing(&mut c, &dsn, dir.path(), "t", 100, false);
    let after = died_committing(&mut c, &dsn, dir.path(), "t2", 50, true);
    for (opts, table) in [(&before, "t"), (&after, "t2")] {
        let run = job::run(opts, &no_stop(), &mut Quiet).unwrap().run.unwrap();
        assert_eq!(run.outcome, "finished");
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {table}")), 0);
        let a = dir.path().join(format!("{table}.tsv"));
        assert_eq!(archived_ids(&a), (1..=1000).collect::<Vec<_>>(), "{table}");
    }
    // A finished job leaves no marker row.
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM dbio_chunk_marker"), 0);
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn a_reinserted_key_does_not_make_a_committed_chunk_look_rolled_back() {
    // Issue 24 item 2: the chunk up to 750 committed, the checkpoint after COMMIT was never
    // written, and the application inserted a row with the chunk's first key again. The
    // resume decided from that one key that the chunk had not committed and cut its 750 rows
    // from the archive. The marker says it committed: the archive keeps them, the new row
    // stays in the table.
    let (mut c, dsn) = fresh("reinsert");
    let dir = tempfile::tempdir().unwrap();
    let o = died_committing(&mut c, &dsn, dir.path(), "t", 750, true);
    c.query_drop("INSERT INTO t VALUES (1, -1)").unwrap();
    let run = job::run(&o, &no_stop(), &mut Quiet).unwrap().run.unwrap();
    assert_eq!(run.outcome, "finished");
    // The walk resumes after 750: the application's row 1 stays in the table, and every
    // original row is in the archive exactly once.
    let ids = archived_ids(&dir.path().join("t.tsv"));
    assert_eq!(ids, (1..=1000).collect::<Vec<_>>());
    assert_eq!(
        count(&mut c, "SELECT COUNT(*) FROM t WHERE id = 1 AND n = -1"),
        1
    );
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 1);
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn a_dropped_marker_table_is_not_read_as_rolled_back() {
    let (mut c, dsn) = fresh("nomarker");
    let dir = tempfile::tempdir().unwrap();
    let mut o = died_committing(&mut c, &dsn, dir.path(), "t", 100, true);
    c.query_drop("DROP TABLE dbio_chunk_marker").unwrap();
    let e = job::run(&o, &no_stop(), &mut Quiet).unwrap_err();
    assert!(matches!(e, Error::PendingUnknown { .. }), "{e}");
    // Nothing was touched: the archive still holds the chunk.
    assert_eq!(archived_ids(&dir.path().join("t.tsv")).len(), 100);
    o.pending = PendingPolicy::Skip;
    job::run(&o, &no_stop(), &mut Quiet).unwrap();
    assert_eq!(
        archived_ids(&dir.path().join("t.tsv")),
        (1..=1000).collect::<Vec<_>>()
    );
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn a_resume_with_another_archive_is_refused_and_touches_nothing() {
    // Issue 24 item 1: --resume naming an unrelated existing file cut it to the checkpoint's
    // length and appended to it; another --archive-format mixed formats in one file.
    let (mut c, dsn) = fresh("otherarchive");
    let dir = tempfile::tempdir().unwrap();
    let o = died_committing(&mut c, &dsn, dir.path(), "t", 100, false);
    let precious = dir.path().join("precious.txt");
    let content: Vec<u8> = (0..200_000u32)
        .flat_map(|i| format!("line {i}\n").into_bytes())
        .collect();
    std::fs::write(&precious, &content).unwrap();
    let state_before = std::fs::read(dir.path().join("t.json")).unwrap();
    let archive_before = std::fs::read(dir.path().join("t.tsv")).unwrap();
    let mut other = o.clone();
    other.action = Action::Archive {
        path: precious.clone(),
        format: Format::Tsv,
        delete: true,
    };
    let e = job::run(&other, &no_stop(), &mut Quiet).unwrap_err();
    assert!(matches!(e, Error::ArchiveIdentity { .. }), "{e}");
    assert!(e.to_string().contains("resume with --archive"), "{e}");
    let mut sql = o.clone();
    sql.action = Action::Archive {
        path: dir.path().join("t.tsv"),
        format: Format::Sql,
        delete: true,
    };
    let e = job::run(&sql, &no_stop(), &mut Quiet).unwrap_err();
    // The format is part of the action: another job's checkpoint, or the format refused.
    assert!(
        matches!(e, Error::ArchiveIdentity { .. } | Error::StateMismatch(_)),
        "{e}"
    );
    // The same path, replaced by a copy: another inode.
    let a = dir.path().join("t.tsv");
    std::fs::copy(&a, dir.path().join("copy")).unwrap();
    std::fs::rename(dir.path().join("copy"), &a).unwrap();
    let replaced = std::fs::read(&a).unwrap();
    let e = job::run(&o, &no_stop(), &mut Quiet).unwrap_err();
    assert!(e.to_string().contains("not the file this job wrote"), "{e}");
    assert_eq!(std::fs::read(&precious).unwrap(), content);
    assert_eq!(std::fs::read(&a).unwrap(), replaced);
    assert_eq!(replaced, archive_before);
    assert_eq!(
        std::fs::read(dir.path().join("t.json")).unwrap(),
        state_before
    );
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 1000);
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn a_killed_runs_stale_checkpoint_temporaries_are_removed() {
    let (mut c, dsn) = fresh("staletmp");
    let dir = tempfile::tempdir().unwrap();
    let o = died_committing(&mut c, &dsn, dir.path(), "t", 10, false);
    let stale = dir.path().join(".t.json.Xy12Zw34Qa.dbio-tmp");
    std::fs::write(&stale, b"{").unwrap();
    let unrelated = dir.path().join(".t.json.notours");
    std::fs::write(&unrelated, b"x").unwrap();
    job::run(&o, &no_stop(), &mut Quiet).unwrap();
    assert!(!stale.exists());
    assert!(unrelated.exists());
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn an_update_that_died_committing_is_settled_by_its_marker() {
    let (mut c, dsn) = fresh("pending_update");
    c.query_drop("CREATE TABLE t (id INT NOT NULL PRIMARY KEY, n INT) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("INSERT INTO t SELECT seq, 0 FROM seq_1_to_300")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("s.json");
    let mut o = options(
        &dsn,
        "t",
        None,
        Action::Update {
            set: "n = n + 1".into(),
        },
        &state,
    );
    o.run_time = Some(Duration::ZERO);
    job::run(&o, &no_stop(), &mut Quiet).unwrap();
    // The chunk up to 100 committed, the checkpoint still says pending.
    c.query_drop("UPDATE t SET n = n + 1 WHERE id <= 100")
        .unwrap();
    let mut ck = dbio_mysql::state::Checkpoint::load(&state).unwrap();
    // Its transaction wrote the marker too.
    c.exec_drop(
        "INSERT INTO dbio_chunk_marker (job, token, chunks, upper_key) VALUES (?, 77, 1, '100')",
        (&ck.job,),
    )
    .unwrap();
    ck.pending = Some(dbio_mysql::state::Pending {
        upper: vec![dbio_mysql::value::KeyValue::Int(100)],
        archive_before: 0,
        archive_after: 0,
        rows: 100,
        walked: 100,
        token: 77,
        archive_after_tail: None,
    });
    ck.save(&state).unwrap();
    o.run_time = None;
    o.resume = true;
    // The marker says it committed: the resume goes on after it (no row updated twice).
    job::run(&o, &no_stop(), &mut Quiet).unwrap();
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t WHERE n <> 1"), 0);
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn outside_its_window_the_job_waits_and_run_time_ends_it_cleanly() {
    let (mut c, dsn) = fresh("window");
    c.query_drop("CREATE TABLE t (id INT NOT NULL PRIMARY KEY) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("INSERT INTO t SELECT seq FROM seq_1_to_100")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(&dsn, "t", None, Action::Delete, &dir.path().join("s.json"));
    // A one-minute window that ended a minute ago (local time).
    let now = jiff::Zoned::now().time();
    let start = now.wrapping_sub(jiff::SignedDuration::from_mins(2));
    let end = now.wrapping_sub(jiff::SignedDuration::from_mins(1));
    o.window = Some(dbio_mysql::window::Window { start, end });
    o.run_time = Some(Duration::from_millis(700));
    let run = job::run(&o, &no_stop(), &mut Quiet).unwrap().run.unwrap();
    assert_eq!(run.outcome, "run_time");
    assert_eq!(run.chunks, 0);
    assert_eq!(run.pauses.len(), 1);
    assert_eq!(run.pauses[0].cause, "window");
    assert!(run.pauses[0].duration_s >= 0.6, "{:?}", run.pauses[0]);
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 100);
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn a_lock_wait_retries_the_chunk_smaller_and_gives_up_after_the_retries() {
    let (mut c, dsn) = fresh("lockwait");
    c.query_drop("CREATE TABLE t (id INT NOT NULL PRIMARY KEY, n INT) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("INSERT INTO t SELECT seq, 1 FROM seq_1_to_1000")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Another session holds row 1 (in the first chunk however small) for about 2.5 s.
    let holder = {
        let dsn = dsn.clone();
        std::thread::spawn(move || {
            let mut h = Conn::new(mysql::Opts::from_url(&dsn).unwrap()).unwrap();
            h.query_drop("START TRANSACTION").unwrap();
            h.query_drop("SELECT * FROM t WHERE id = 1 FOR UPDATE")
                .unwrap();
            std::thread::sleep(Duration::from_millis(2500));
            h.query_drop("ROLLBACK").unwrap();
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    // One retry (two attempts of 1 s lock wait each) is not enough: the job fails, nothing
    // of that chunk is changed.
    let mut o = options(&dsn, "t", None, Action::Delete, &dir.path().join("s1.json"));
    o.retries = 1;
    let e = job::run(&o, &no_stop(), &mut Quiet).unwrap_err();
    assert!(matches!(e, Error::Retries { attempts: 2, .. }), "{e}");
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 1000);
    holder.join().unwrap();

    // Held for 1.5 s against five retries: the chunk is retried (smaller) and the job ends.
    let holder = {
        let dsn = dsn.clone();
        std::thread::spawn(move || {
            let mut h = Conn::new(mysql::Opts::from_url(&dsn).unwrap()).unwrap();
            h.query_drop("START TRANSACTION").unwrap();
            h.query_drop("SELECT * FROM t WHERE id = 1 FOR UPDATE")
                .unwrap();
            std::thread::sleep(Duration::from_millis(1500));
            h.query_drop("ROLLBACK").unwrap();
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    let mut o = options(&dsn, "t", None, Action::Delete, &dir.path().join("s2.json"));
    o.retries = 5;
    let run = job::run(&o, &no_stop(), &mut Quiet).unwrap().run.unwrap();
    holder.join().unwrap();
    assert_eq!(run.outcome, "finished");
    assert!(run.retries >= 1, "{run:?}");
    assert!(
        run.chunk_rows_min < 200,
        "the retried chunk was not smaller: {run:?}"
    );
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 0);
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn a_long_history_list_pauses_the_job() {
    let (mut c, dsn) = fresh("history");
    c.query_drop("CREATE TABLE t (id INT NOT NULL PRIMARY KEY) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("INSERT INTO t SELECT seq FROM seq_1_to_100")
        .unwrap();
    c.query_drop("CREATE TABLE churn (id INT NOT NULL PRIMARY KEY, n INT) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("INSERT INTO churn SELECT seq, 0 FROM seq_1_to_10")
        .unwrap();
    // An open snapshot keeps purge from removing the undo logs of the 1500 transactions that
    // follow: the history list grows past 1000.
    let mut holder = Conn::new(mysql::Opts::from_url(&dsn).unwrap()).unwrap();
    holder
        .query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        .unwrap();
    holder.query_drop("SELECT COUNT(*) FROM churn").unwrap();
    for i in 0..1500 {
        c.exec_drop("UPDATE churn SET n = n + 1 WHERE id = ?", (i % 10 + 1,))
            .unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(&dsn, "t", None, Action::Delete, &dir.path().join("s.json"));
    o.guard.max_history = Some(1000);
    o.run_time = Some(Duration::from_millis(800));
    let run = job::run(&o, &no_stop(), &mut Quiet).unwrap().run.unwrap();
    holder.query_drop("COMMIT").unwrap();
    assert_eq!(run.outcome, "run_time");
    assert_eq!(run.chunks, 0, "{run:?}");
    let p = &run.pauses[0];
    assert_eq!(p.cause, "history");
    assert!(p.value.unwrap() > 1000.0, "{p:?}");
    assert_eq!(p.limit, Some(1000.0));
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 100);
}

/// Every column type, NULLs, awkward bytes, a VIRTUAL and a STORED generated column and an
/// INVISIBLE one: the table `t` of `c`'s database, 400 rows, and a copy `orig` of its rows.
fn every_type(c: &mut Conn) {
    c.query_drop(
        "CREATE TABLE t (
            id INT NOT NULL PRIMARY KEY,
            i BIGINT UNSIGNED, d DECIMAL(12,3), f DOUBLE, s VARCHAR(40), b VARBINARY(16),
            bl BLOB, dt DATE, ts DATETIME(6), tm TIME(3), y YEAR, e ENUM('a','b c'),
            st SET('x','y'), bt BIT(9), js JSON,
            hidden INT INVISIBLE DEFAULT 7,
            v INT AS (i % 10) VIRTUAL,
            p VARCHAR(50) AS (CONCAT(s, '!')) STORED
        ) ENGINE=InnoDB",
    )
    .unwrap();
    c.query_drop(
        "INSERT INTO t (id, i, d, f, s, b, bl, dt, ts, tm, y, e, st, bt, js, hidden)
         SELECT seq, seq * 1000003, seq / 7, seq / 3.0,
                IF(seq % 5 = 0, NULL, CONCAT('tab\\there\\nnl ''q'' \\\\ ', seq)),
                UNHEX(LPAD(HEX(seq * 2654435761), 16, '0')),
                IF(seq % 3 = 0, CONCAT(CHAR(0), CHAR(9), CHAR(10), CHAR(92), 'x'), NULL),
                '2019-01-01' + INTERVAL seq DAY, '2019-01-01 00:00:00.123456' + INTERVAL seq SECOND,
                SEC_TO_TIME(seq * 61.5), 1990 + seq % 50, IF(seq % 2, 'a', 'b c'),
                IF(seq % 2, 'x,y', ''), seq % 512, JSON_OBJECT('k', seq, 's', 'a\"b'),
                seq % 4
         FROM seq_1_to_400",
    )
    .unwrap();
    c.query_drop("CREATE TABLE orig LIKE t").unwrap();
    c.query_drop(
        "INSERT INTO orig (id, i, d, f, s, b, bl, dt, ts, tm, y, e, st, bt, js, hidden)
         SELECT id, i, d, f, s, b, bl, dt, ts, tm, y, e, st, bt, js, hidden FROM t",
    )
    .unwrap();
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn every_archive_format_restores_every_column_type_identically() {
    // Issue 24 item 4: an SQL archive of a table with generated columns could not be
    // restored (ERROR 1906 under STRICT_TRANS_TABLES, 0 rows).
    for format in [Format::Sql, Format::Tsv] {
        let name = format!("types_{format:?}").to_lowercase();
        let (mut c, dsn) = fresh(&name);
        every_type(&mut c);
        let want = checksum(&mut c, "orig");
        assert_eq!(checksum(&mut c, "t"), want);
        let dir = tempfile::tempdir().unwrap();
        // The server reads a TSV archive back itself (LOAD DATA INFILE).
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let a = dir.path().join("a");
        let o = options(
            &dsn,
            "t",
            None,
            Action::Archive {
                path: a.clone(),
                format,
                delete: true,
            },
            &dir.path().join("s.json"),
        );
        let r = job::run(&o, &no_stop(), &mut Quiet).unwrap();
        assert_eq!(r.plan.generated_columns, vec!["v", "p"]);
        assert_eq!(r.run.unwrap().rows_archived, 400);
        assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 0);
        let text = std::fs::read(&a).unwrap();
        match format {
            Format::Sql => {
                let text = String::from_utf8(text).unwrap();
                for stmt in text.split(";\n").filter(|s| s.contains("INSERT")) {
                    c.query_drop(stmt)
                        .unwrap_or_else(|e| panic!("{e}: {}", &stmt[..200.min(stmt.len())]));
                }
            }
            Format::Tsv => {
                let header = String::from_utf8_lossy(
                    &text[..text.iter().position(|&b| b == b'\n').unwrap()],
                )
                .to_string();
                let cols: Vec<String> = header.split('\t').map(|h| format!("`{h}`")).collect();
                c.query_drop(format!(
                    "LOAD DATA INFILE '{}' INTO TABLE t CHARACTER SET binary IGNORE 1 LINES ({})",
                    a.display(),
                    cols.join(", ")
                ))
                .unwrap();
            }
            Format::Jsonl => unreachable!("an archive is sql or tsv: the loop above"),
        }
        assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 400, "{format:?}");
        assert_eq!(checksum(&mut c, "t"), want, "{format:?}");
    }
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn cascading_children_are_refused_archived_or_allowed_but_never_silent() {
    // Issue 24 item 3: 1,000 parents archived, 5,000 children deleted with no word.
    let setup = |c: &mut Conn| {
        for t in ["grandchild", "child", "parent"] {
            c.query_drop(format!("DROP TABLE IF EXISTS {t}")).unwrap();
        }
        c.query_drop("CREATE TABLE parent (id INT NOT NULL PRIMARY KEY, n INT) ENGINE=InnoDB")
            .unwrap();
        c.query_drop(
            "CREATE TABLE child (id INT NOT NULL PRIMARY KEY, pid INT, x VARCHAR(10), \
             CONSTRAINT fk_child FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE CASCADE) ENGINE=InnoDB",
        )
        .unwrap();
        c.query_drop(
            "CREATE TABLE grandchild (id INT NOT NULL PRIMARY KEY, cid INT, \
             CONSTRAINT fk_grand FOREIGN KEY (cid) REFERENCES child (id) ON DELETE CASCADE) ENGINE=InnoDB",
        )
        .unwrap();
        c.query_drop("INSERT INTO parent SELECT seq, seq FROM seq_1_to_1000")
            .unwrap();
        c.query_drop("INSERT INTO child SELECT seq, (seq - 1) DIV 5 + 1, 'c' FROM seq_1_to_5000")
            .unwrap();
        c.query_drop("INSERT INTO grandchild SELECT seq, seq FROM seq_1_to_5000 WHERE seq % 2 = 0")
            .unwrap();
    };
    let (mut c, dsn) = fresh("cascade");
    setup(&mut c);
    let dir = tempfile::tempdir().unwrap();
    let archive = |f: Format, name: &str| Action::Archive {
        path: dir.path().join(name),
        format: f,
        delete: true,
    };
    let mut o = options(
        &dsn,
        "parent",
        Some("n <= 500"),
        archive(Format::Tsv, "a.tsv"),
        &dir.path().join("s.json"),
    );
    // A dry run lists the children; --execute refuses.
    o.execute = false;
    let plan = job::run(&o, &no_stop(), &mut Quiet).unwrap().plan;
    let listed: Vec<(String, u32, String)> = plan
        .cascades
        .iter()
        .map(|c| (c.table.clone(), c.depth, c.handling.clone()))
        .collect();
    assert_eq!(
        listed,
        vec![
            ("chunk_cascade.child".into(), 1, "refused".into()),
            ("chunk_cascade.grandchild".into(), 2, "refused".into())
        ]
    );
    o.execute = true;
    let e = job::run(&o, &no_stop(), &mut Quiet).unwrap_err();
    assert!(matches!(e, Error::Cascade { .. }), "{e}");
    assert!(e.to_string().contains("chunk_cascade.grandchild"), "{e}");
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM child"), 5000);
    assert!(!dir.path().join("a.tsv").exists());
    // --archive-children needs an SQL archive.
    o.archive_children = true;
    let e = job::run(&o, &no_stop(), &mut Quiet).unwrap_err();
    assert!(matches!(e, Error::ArchiveChildren(_)), "{e}");
    // With it: every cascaded row is in the archive, parents first; restoring the archive
    // into the emptied tables gives back every row.
    o.action = archive(Format::Sql, "a.sql");
    o.state = Some(dir.path().join("s2.json"));
    let r = job::run(&o, &no_stop(), &mut Quiet).unwrap().run.unwrap();
    assert_eq!(r.rows_archived, 500);
    assert_eq!(r.child_rows_archived, 2500 + 1250);
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM child"), 2500);
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM grandchild"), 1250);
    let text = std::fs::read_to_string(dir.path().join("a.sql")).unwrap();
    for stmt in text.split(";\n").filter(|s| s.contains("INSERT")) {
        c.query_drop(stmt).unwrap();
    }
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM parent"), 1000);
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM child"), 5000);
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM grandchild"), 2500);
    // --allow-cascade: the server deletes them, as asked.
    setup(&mut c);
    let mut allow = options(
        &dsn,
        "parent",
        Some("n <= 500"),
        Action::Delete,
        &dir.path().join("s3.json"),
    );
    allow.allow_cascade = true;
    let r = job::run(&allow, &no_stop(), &mut Quiet).unwrap();
    assert_eq!(r.plan.cascades[0].handling, "allowed");
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM child"), 2500);
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn a_small_table_with_no_condition_runs() {
    // Issue 24 item 10: a 13-row table with no --where got "Check --where". (The message for
    // stale statistics is unit-tested beside not_range_hint: the server here would not
    // reproduce a full-scan plan under FORCE INDEX.)
    let (mut c, dsn) = fresh("smallstats");
    c.query_drop("CREATE TABLE t (id INT NOT NULL PRIMARY KEY, n INT) ENGINE=InnoDB STATS_PERSISTENT=1 STATS_AUTO_RECALC=0")
        .unwrap();
    c.query_drop("INSERT INTO t SELECT seq, seq FROM seq_1_to_13")
        .unwrap();
    c.query_drop("ANALYZE TABLE t").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let o = options(&dsn, "t", None, Action::Delete, &dir.path().join("s.json"));
    let r = job::run(&o, &no_stop(), &mut Quiet).unwrap();
    assert_eq!(r.run.unwrap().outcome, "finished");
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 0);
}

/// `dbio model live`'s reads: the commits a client makes show in Com_commit, Threads_running
/// counts the reading connection, @@datadir is the server's, a loopback DSN is local.
#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn status_counts_commits_and_reads_the_datadir() {
    use dbio_mysql::status::Server;
    let (mut c, dsn) = fresh("status_reads");
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY) ENGINE=InnoDB")
        .unwrap();
    let mut s = Server::connect(&dsn, &dbio_mysql::conn::Net::default()).unwrap();
    assert!(s.local, "{dsn} is on this machine");
    let before = s.status().unwrap();
    for i in 0..5 {
        c.query_drop("BEGIN").unwrap();
        c.query_drop(format!("INSERT INTO t VALUES ({i})")).unwrap();
        c.query_drop("COMMIT").unwrap();
    }
    let after = s.status().unwrap();
    assert!(
        after.get("Com_commit") >= before.get("Com_commit") + 5,
        "{} then {}",
        before.get("Com_commit"),
        after.get("Com_commit")
    );
    assert!(after.get("Questions") > before.get("Questions"));
    assert!(s.threads_running().unwrap() >= 1);
    let datadir: String = c.query_first("SELECT @@datadir").unwrap().unwrap();
    assert_eq!(
        s.datadir().unwrap(),
        Some(std::path::PathBuf::from(datadir))
    );
    c.query_drop("DROP DATABASE chunk_status_reads").unwrap();
}

/// A DSN that does not parse, or a server that refuses, is an error that hides the password.
#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn status_connect_errors_hide_the_password() {
    use dbio_mysql::status::Server;
    let net = dbio_mysql::conn::Net::default();
    let e = Server::connect("not a dsn", &net).err().unwrap();
    assert!(matches!(e, Error::Dsn { .. }), "{e}");
    let e = Server::connect("mysql://nobody_dbio:s3cret@127.0.0.1:3306/test", &net)
        .err()
        .unwrap();
    assert!(matches!(e, Error::Connect { .. }), "{e}");
    assert!(!e.to_string().contains("s3cret"), "{e}");
}
