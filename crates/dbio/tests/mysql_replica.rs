//! `dbio mysql chunk` with a real replica: a throwaway primary and replica started for each
//! test (tests/common/mariadb.rs). The job pauses while the replica really lags and resumes
//! when it catches up; a replica that stops replicating or goes down stops the job (fail
//! closed, exit 1) with every committed chunk checkpointed; with statement-based replication
//! the chunks' statements are logged as bounded key ranges, none is unsafe, and the replica
//! ends with exactly the primary's rows.

use crate::common::job::{args, Job};
use crate::common::mariadb::{
    require_mariadbd, scratch_dir as scratch, slave_status, table_sum, Replication,
};
use mysql::prelude::Queryable;
use mysql::Conn;
use std::path::Path;
use std::time::Duration;

/// A database `db` on the primary with table `t` (id 1..=rows, n = id % 10, an index on n).
fn table(r: &Replication, db: &str, rows: u32) -> Conn {
    let mut c = r.primary.conn();
    c.query_drop(format!("CREATE DATABASE `{db}`")).unwrap();
    c.query_drop(format!("USE `{db}`")).unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, n INT NOT NULL, pad VARCHAR(40), KEY (n)) ENGINE=InnoDB",
    )
    .unwrap();
    c.query_drop(format!(
        "INSERT INTO t SELECT seq, seq % 10, CONCAT('row ', seq) FROM seq_1_to_{rows}"
    ))
    .unwrap();
    r.wait_caught_up();
    c
}

fn count(c: &mut Conn, sql: &str) -> u64 {
    c.query_first::<u64, _>(sql).unwrap().unwrap()
}

/// The checkpoint's committed chunks and rows affected (0, 0 before it exists).
fn checkpoint(state: &Path) -> (u64, u64) {
    let v = std::fs::read(state)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok());
    let get = |k: &str| {
        v.as_ref()
            .and_then(|v| v["totals"][k].as_u64())
            .unwrap_or(0)
    };
    (get("chunks"), get("rows_affected"))
}

/// The lag number in "replica DSN lags N s > max-lag ...".
fn lag_in(line: &str) -> f64 {
    let rest = line.split(" lags ").nth(1).expect("a lag in the message");
    rest.split(' ').next().unwrap().parse().unwrap()
}

#[test]
#[ignore = "needs mariadbd binaries (mariadb-server package)"]
fn replica_lag_pauses_the_job_naming_the_replica_and_it_resumes_when_the_lag_falls() {
    require_mariadbd();
    let r = Replication::start("ROW");
    let mut p = table(&r, "lag", 10_000);
    let dir = scratch();
    let state = dir.path().join("state.json");
    let replica = r.replica.dsn("");
    // 450 chunks of 20 rows with a sleep of 10x each chunk's time: long enough for the replica
    // to fall more than a second behind while the job runs.
    let job = args(&[
        "mysql",
        "chunk",
        "--dsn",
        &r.primary.dsn("lag"),
        "--table",
        "t",
        "--where",
        "n <> 0",
        "--delete",
        "--execute",
        "--state",
        state.to_str().unwrap(),
        "--replica",
        &replica,
        "--max-lag",
        "1s",
        "--check-interval",
        "100ms",
        "--chunk-size",
        "20",
        "--chunk-min",
        "20",
        "--chunk-max",
        "20",
        "--sleep-coef",
        "10",
        "--max-load",
        "Threads_running=1000",
        "--critical-load",
        "Threads_running=2000",
    ]);
    let mut j = Job::spawn(&job);
    j.wait_for("3 committed chunks", 60, |_| checkpoint(&state).0 >= 3);
    // A long read on the replica holds the table: the replica's SQL thread waits on the next
    // chunk's DELETE while the primary goes on, so the replica falls behind for real.
    let mut hold = r.replica.conn();
    hold.query_drop("LOCK TABLES lag.t READ").unwrap();
    j.wait_for("a pause for the replica's lag", 60, |j| {
        j.stderr().contains("dbio: paused: replica")
    });
    let line = j
        .stderr()
        .lines()
        .find(|l| l.starts_with("dbio: paused: replica"))
        .unwrap()
        .to_string();
    assert!(line.contains(&replica), "{line}");
    assert!(line.contains("max-lag 1 s"), "{line}");
    let lag = lag_in(&line);
    assert!(lag > 1.0, "paused at lag {lag}: {line}");
    // Paused: no chunk commits while the replica stays behind.
    let (chunks_at_pause, _) = checkpoint(&state);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        checkpoint(&state).0,
        chunks_at_pause,
        "a chunk ran while paused"
    );
    assert!(!j.stderr().contains("dbio: resumed"), "{}", j.stderr());
    let behind: Option<u64> = hold
        .query_first::<mysql::Row, _>("SHOW SLAVE STATUS")
        .unwrap()
        .unwrap()
        .get("Seconds_Behind_Master")
        .unwrap();
    assert!(
        behind.is_some_and(|b| b > 1),
        "replica lag {behind:?} while paused"
    );
    // The replica catches up: the job resumes and finishes.
    hold.query_drop("UNLOCK TABLES").unwrap();
    let (code, out, err) = j.finish(180);
    assert_eq!(code, Some(0), "{err}\n{out}");
    assert!(err.contains("dbio: resumed after"), "{err}");
    assert!(out.contains("outcome     finished"), "{out}");
    assert!(
        out.contains("replica_lag"),
        "the pause is not in the statistics: {out}"
    );
    assert!(checkpoint(&state).0 > chunks_at_pause);

    r.wait_caught_up();
    let mut q = r.replica.conn();
    assert_eq!(count(&mut p, "SELECT COUNT(*) FROM t"), 1000);
    assert_eq!(table_sum(&mut p, "lag.t"), table_sum(&mut q, "lag.t"));
}

#[test]
#[ignore = "needs mariadbd binaries (mariadb-server package)"]
fn a_replica_that_stops_replicating_or_goes_down_mid_job_stops_the_job_fail_closed() {
    require_mariadbd();
    let mut r = Replication::start("ROW");
    let mut p = table(&r, "down", 10_000);
    let dir = scratch();
    let state = dir.path().join("state.json");
    let primary = r.primary.dsn("down");
    let job = |replica: &str, resume: bool| {
        let mut a = args(&[
            "mysql",
            "chunk",
            "--dsn",
            &primary,
            "--table",
            "t",
            "--where",
            "n <> 0",
            "--delete",
            "--execute",
            "--state",
            state.to_str().unwrap(),
            "--replica",
            replica,
            "--max-lag",
            "10s",
            "--chunk-size",
            "20",
            "--chunk-min",
            "20",
            "--chunk-max",
            "20",
            "--sleep-coef",
            "5",
            "--max-load",
            "Threads_running=1000",
            "--critical-load",
            "Threads_running=2000",
        ]);
        if resume {
            a.push("--resume".into());
        }
        a
    };
    // Stopped cleanly: exit 1, the reason named, and the primary holds exactly what the
    // checkpoint says was committed (no chunk half done).
    let check_stopped = |p: &mut Conn, (code, out, err): (Option<i32>, String, String)| {
        assert_eq!(code, Some(1), "{err}\n{out}");
        assert!(
            out.contains("outcome     stopped by the guard: the lag of replica"),
            "{out}"
        );
        assert!(out.contains("cannot be read"), "{out}");
        assert!(out.contains("fails closed"), "{out}");
        let (chunks, affected) = checkpoint(&state);
        assert!(chunks < 450, "the job ran to its end: {out}");
        assert_eq!(
            count(p, "SELECT COUNT(*) FROM t WHERE n <> 0"),
            9000 - affected
        );
        assert_eq!(affected, chunks * 18, "chunks of 20 key rows, 18 matching");
        chunks
    };

    // 1. STOP SLAVE mid-job: Seconds_Behind_Master is NULL.
    let replica = r.replica.dsn("");
    let mut j = Job::spawn(&job(&replica, false));
    j.wait_for("3 committed chunks", 60, |_| checkpoint(&state).0 >= 3);
    r.replica.conn().query_drop("STOP SLAVE").unwrap();
    let after_stop = check_stopped(&mut p, j.finish(60));
    assert_eq!(
        slave_status(&mut r.replica.conn()).0,
        "No",
        "replication should be stopped"
    );
    r.replica.conn().query_drop("START SLAVE").unwrap();
    r.wait_running();

    // 2. The replica's server dies mid-job (SIGKILL).
    let mut j = Job::spawn(&job(&replica, true));
    j.wait_for("3 more committed chunks", 60, |_| {
        checkpoint(&state).0 >= after_stop + 3
    });
    r.replica.kill();
    let after_kill = check_stopped(&mut p, j.finish(60));
    assert!(after_kill > after_stop);

    // 3. The replica is back (replication restarts by itself from its GTID position): the
    // resumed job finishes and the replica ends with the primary's rows.
    r.replica.start();
    r.wait_running();
    let (code, out, err) = Job::spawn(&job(&r.replica.dsn(""), true)).finish(180);
    assert_eq!(code, Some(0), "{err}\n{out}");
    assert!(out.contains("outcome     finished"), "{out}");
    assert_eq!(count(&mut p, "SELECT COUNT(*) FROM t"), 1000);
    r.wait_caught_up();
    let mut q = r.replica.conn();
    assert_eq!(table_sum(&mut p, "down.t"), table_sum(&mut q, "down.t"));
}

/// The key bounds of a chunk's statement as the binary log holds it (the parameters are in
/// the text): `((\`id\` > LOWER))` (none on the first chunk) and `((\`id\` <= UPPER))`.
fn bounds(stmt: &str) -> (Option<u64>, u64) {
    let num = |marker: &str| -> Option<u64> {
        let rest = &stmt[stmt.find(marker)? + marker.len()..];
        Some(rest[..rest.find(')').unwrap()].trim().parse().unwrap())
    };
    (
        num("((`id` > "),
        num("((`id` <= ").unwrap_or_else(|| panic!("no upper key bound in {stmt}")),
    )
}

/// Every statement of the binary logs that starts with `prefix`.
fn logged(c: &mut Conn, prefix: &str) -> Vec<String> {
    let logs: Vec<mysql::Row> = c.query("SHOW BINARY LOGS").unwrap();
    let mut out = Vec::new();
    for l in logs {
        let name: String = l.get(0).unwrap();
        let events: Vec<mysql::Row> = c.query(format!("SHOW BINLOG EVENTS IN '{name}'")).unwrap();
        for e in events {
            let kind: String = e.get("Event_type").unwrap();
            let info: String = e.get("Info").unwrap();
            // A Query event's Info is `use `db`; STATEMENT`.
            let stmt = info.split_once("; ").map_or(info.as_str(), |x| x.1);
            if kind == "Query" && stmt.starts_with(prefix) {
                out.push(stmt.to_string());
            }
        }
    }
    out
}

#[test]
#[ignore = "needs mariadbd binaries (mariadb-server package)"]
fn statement_based_replication_logs_bounded_safe_chunks_and_the_replica_matches() {
    require_mariadbd();
    let r = Replication::start("STATEMENT");
    let mut p = r.primary.conn();
    let format: String = p.query_first("SELECT @@binlog_format").unwrap().unwrap();
    assert_eq!(format, "STATEMENT");
    for db in ["sbr_delete", "sbr_archive", "sbr_update"] {
        table(&r, db, 3000);
    }
    let dir = scratch();
    let archive = dir.path().join("rows.tsv");
    let run = |db: &str, action: &[&str]| -> serde_json::Value {
        let mut a = args(&[
            "mysql",
            "chunk",
            "--dsn",
            &r.primary.dsn(db),
            "--table",
            "t",
            "--execute",
            "--state",
            dir.path().join(format!("{db}.json")).to_str().unwrap(),
            "--chunk-size",
            "100",
            "--chunk-min",
            "100",
            "--chunk-max",
            "100",
            "--sleep-coef",
            "0",
            "--replica",
            &r.replica.dsn(""),
            "--format",
            "json",
        ]);
        a.extend(args(action));
        let out = crate::common::dbio().args(&a).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let delete = run("sbr_delete", &["--where", "n IN (1, 2, 3)", "--delete"]);
    let arch = run(
        "sbr_archive",
        &[
            "--where",
            "n = 4",
            "--archive",
            archive.to_str().unwrap(),
            "--delete",
        ],
    );
    let update = run(
        "sbr_update",
        &[
            "--where",
            "n >= 5",
            "--update",
            "SET pad = CONCAT('old ', n)",
        ],
    );
    r.wait_caught_up();

    // (a) No statement of the jobs was logged as unsafe (the primary writes each one, with
    // the statement, to its error log at log_warnings >= 2, the default).
    let log = r.primary.error_log();
    assert!(log.contains("ready for connections"), "{log}");
    assert!(!log.contains("Unsafe statement"), "{log}");

    // (b) The replica applied the statements to the same rows.
    let mut q = r.replica.conn();
    for (db, job, rows) in [
        ("sbr_delete", &delete, 2100),
        ("sbr_archive", &arch, 2700),
        ("sbr_update", &update, 3000),
    ] {
        let t = format!("{db}.t");
        let (sum, n) = table_sum(&mut p, &t);
        assert_eq!(n, rows, "{t} on the primary");
        assert_eq!(table_sum(&mut q, &t), (sum, n), "{t}: replica != primary");
        assert_eq!(job["run"]["outcome"], "finished", "{job}");
        assert_eq!(job["run"]["chunks"], 30, "{job}");
    }
    assert_eq!(
        count(
            &mut q,
            "SELECT COUNT(*) FROM sbr_update.t WHERE pad = CONCAT('old ', n)"
        ),
        1500
    );
    assert_eq!(
        std::fs::read_to_string(&archive).unwrap().lines().count(),
        301
    );

    // Each chunk is one statement in the binary log over a bounded key range, without LIMIT,
    // the ranges following each other from the first key to the last.
    for (db, verb) in [
        ("sbr_delete", "DELETE"),
        ("sbr_archive", "DELETE"),
        ("sbr_update", "UPDATE"),
    ] {
        let stmts = logged(&mut p, &format!("{verb} `{db}`.`t`"));
        assert_eq!(stmts.len(), 30, "{db}: {stmts:#?}");
        let mut last = None;
        for s in &stmts {
            assert!(!s.to_uppercase().contains("LIMIT"), "{s}");
            assert!(s.contains("FORCE INDEX (`PRIMARY`)"), "{s}");
            let (lower, upper) = bounds(s);
            assert_eq!(lower, last, "{db}: a gap or an overlap at {s}");
            assert_eq!(upper, last.unwrap_or(0) + 100, "{s}");
            last = Some(upper);
        }
        assert_eq!(last, Some(3000), "{db}");
    }

    // The check above can fail: a DELETE with LIMIT is logged as unsafe.
    p.query_drop("DELETE FROM sbr_delete.t LIMIT 1").unwrap();
    let log = r.primary.error_log();
    assert!(
        log.contains("Unsafe statement written to the binary log"),
        "a LIMIT delete was not reported as unsafe: {log}"
    );
}
