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
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let run = h.join().unwrap().unwrap().run.unwrap();
    assert_eq!(run.outcome, "interrupted");
    assert_eq!(
        count(&mut c, "SELECT COUNT(*) FROM t"),
        3000 - run.rows_affected
    );
    // The lock went with the first copy: the job now resumes.
    let mut again = first.clone();
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

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn an_archive_chunk_that_died_committing_is_settled_on_resume() {
    // The two crash points a kill can hit between the archive's fsync and the checkpoint:
    // before COMMIT (the rows are still in the table: the archive is cut back) and after it
    // (the rows are gone: the archive keeps them). Built from a real run's checkpoint.
    let (mut c, dsn) = fresh("pending");
    c.query_drop("CREATE TABLE t (id INT NOT NULL PRIMARY KEY, n INT) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("INSERT INTO t SELECT seq, seq FROM seq_1_to_1000")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("s.json");
    let archive = dir.path().join("a.tsv");
    let mut o = options(
        &dsn,
        "t",
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
    let header = std::fs::read(&archive).unwrap();

    // Crash before COMMIT: rows 1..=100 archived and a pending record, the rows still there.
    let mut ck = dbio_mysql::state::Checkpoint::load(&state).unwrap();
    let mut bytes = header.clone();
    for id in 1..=100 {
        bytes.extend_from_slice(format!("{id}\t{id}\n").as_bytes());
    }
    std::fs::write(&archive, &bytes).unwrap();
    use dbio_mysql::value::KeyValue;
    ck.pending = Some(dbio_mysql::state::Pending {
        upper: vec![KeyValue::Int(100)],
        archive_before: header.len() as u64,
        archive_after: bytes.len() as u64,
        rows: 100,
        walked: 100,
        probe: Some(vec![KeyValue::Int(1)]),
    });
    ck.save(&state).unwrap();
    // Crash after COMMIT (the first 50 rows were deleted by that chunk) on another copy.
    let state2 = dir.path().join("s2.json");
    let archive2 = dir.path().join("a2.tsv");
    c.query_drop("CREATE TABLE t2 LIKE t").unwrap();
    c.query_drop("INSERT INTO t2 SELECT * FROM t WHERE id > 50")
        .unwrap();
    let mut o2 = o.clone();
    o2.table = "t2".into();
    o2.state = Some(state2.clone());
    o2.action = Action::Archive {
        path: archive2.clone(),
        format: Format::Tsv,
        delete: true,
    };
    job::run(&o2, &no_stop(), &mut Quiet).unwrap();
    let mut ck2 = dbio_mysql::state::Checkpoint::load(&state2).unwrap();
    let mut bytes2 = std::fs::read(&archive2).unwrap();
    let before2 = bytes2.len() as u64;
    for id in 1..=50 {
        bytes2.extend_from_slice(format!("{id}\t{id}\n").as_bytes());
    }
    std::fs::write(&archive2, &bytes2).unwrap();
    ck2.pending = Some(dbio_mysql::state::Pending {
        upper: vec![KeyValue::Int(50)],
        archive_before: before2,
        archive_after: bytes2.len() as u64,
        rows: 50,
        walked: 50,
        probe: Some(vec![KeyValue::Int(1)]),
    });
    ck2.save(&state2).unwrap();

    for (opts, table) in [(&o, "t"), (&o2, "t2")] {
        let mut r = opts.clone();
        r.resume = true;
        r.run_time = None;
        r.chunk_max = 2000;
        let run = job::run(&r, &no_stop(), &mut Quiet).unwrap().run.unwrap();
        assert_eq!(run.outcome, "finished");
        assert_eq!(count(&mut c, &format!("SELECT COUNT(*) FROM {table}")), 0);
    }
    for a in [&archive, &archive2] {
        let text = std::fs::read_to_string(a).unwrap();
        let ids: Vec<u32> = text
            .lines()
            .skip(1)
            .map(|l| l.split('\t').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(ids, (1..=1000).collect::<Vec<_>>(), "{}", a.display());
    }
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn an_update_that_died_committing_is_not_resumed_blindly() {
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
    ck.pending = Some(dbio_mysql::state::Pending {
        upper: vec![dbio_mysql::value::KeyValue::Int(100)],
        archive_before: 0,
        archive_after: 0,
        rows: 100,
        walked: 100,
        probe: None,
    });
    ck.save(&state).unwrap();
    o.run_time = None;
    o.resume = true;
    let e = job::run(&o, &no_stop(), &mut Quiet).unwrap_err();
    assert!(matches!(e, Error::PendingUpdate { .. }), "{e}");
    o.pending = PendingPolicy::Skip;
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
