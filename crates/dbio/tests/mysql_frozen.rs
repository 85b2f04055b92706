//! `dbio mysql chunk` against a server that stops answering: a throwaway mariadbd
//! (tests/common/mariadb.rs, never the shared server) stopped with SIGSTOP mid-job, which looks
//! to the client like a network partition (connections stay open, nothing comes back). The job
//! must end in bounded time with a message naming the server, what was in flight and what the
//! checkpoint holds; Ctrl-C must end it at once; a server that comes back between chunks within
//! --reconnect-for lets it finish; and every checkpoint left behind resumes to exactly the
//! original rows (table + archive).

use crate::common::job::{args, Job};
use crate::common::mariadb::{require_mariadbd, scratch_dir, Replication, Server};
use mysql::prelude::Queryable;
use mysql::Conn;
use std::path::Path;
use std::time::{Duration, Instant};

/// A throwaway server; SIGCONT is sent before it is killed, also when the test fails.
struct Throwaway {
    server: Server,
    // Dropped after the server.
    _dir: tempfile::TempDir,
}

impl Throwaway {
    fn start() -> Throwaway {
        require_mariadbd();
        let dir = scratch_dir();
        let server = Server::new(dir.path(), "frozen", 1, &[]);
        Throwaway { server, _dir: dir }
    }

    fn signal(&self, sig: libc::c_int) {
        let pid = self.server.pid().expect("the server runs") as libc::pid_t;
        // SAFETY: kill(2) on the pid of the mariadbd child this test started.
        assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
    }

    /// SIGSTOP: the server stops answering; the kernel still holds its connections open.
    fn freeze(&self) {
        self.signal(libc::SIGSTOP);
    }

    fn thaw(&self) {
        self.signal(libc::SIGCONT);
    }

    /// Waits until no more than `keep` sessions but `c`'s own are left (the server has noticed
    /// that the stopped job's connections are closed, rolled back their work and released
    /// their locks).
    fn wait_sessions_gone(&self, c: &mut Conn, keep: u64) {
        let t0 = Instant::now();
        loop {
            let n: u64 = c
                .query_first(
                    "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND COMMAND <> 'Daemon' AND USER = 'root'",
                )
                .unwrap()
                .unwrap();
            if n <= keep {
                return;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(60),
                "the stopped job's sessions are still there"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Throwaway {
    fn drop(&mut self) {
        thaw(&self.server);
    }
}

/// SIGCONT to `s` (a stopped server must not outlive a failed test stopped).
fn thaw(s: &Server) {
    if let Some(pid) = s.pid() {
        // SAFETY: kill(2) on the pid of a mariadbd child this test started; a failure changes
        // nothing (the server is killed next).
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGCONT) };
    }
}

/// A primary and a replica; the replica gets SIGCONT before both are killed.
struct Pair(Replication);

impl Drop for Pair {
    fn drop(&mut self) {
        thaw(&self.0.replica);
    }
}

/// Database `db` with table `t` (id 1..=rows, n = id % 10) and a connection to it.
fn table(s: &Server, db: &str, rows: u32) -> Conn {
    let mut c = s.conn();
    c.query_drop(format!("CREATE DATABASE `{db}`")).unwrap();
    c.query_drop(format!("USE `{db}`")).unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, n INT NOT NULL, pad VARCHAR(40)) ENGINE=InnoDB",
    )
    .unwrap();
    c.query_drop(format!(
        "INSERT INTO t SELECT seq, seq % 10, CONCAT('row ', seq) FROM seq_1_to_{rows}"
    ))
    .unwrap();
    c
}

fn count(c: &mut Conn, sql: &str) -> u64 {
    c.query_first::<u64, _>(sql).unwrap().unwrap()
}

fn checkpoint(state: &Path) -> serde_json::Value {
    std::fs::read(state)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(serde_json::Value::Null)
}

fn chunks(state: &Path) -> u64 {
    checkpoint(state)["totals"]["chunks"].as_u64().unwrap_or(0)
}

/// Waits until a statement of a chunk (the archive's SELECT ... FOR UPDATE or the DELETE) is
/// running on the server, seen from `c`.
fn wait_chunk_statement(c: &mut Conn, job: &mut Job) {
    job.wait_for("a chunk's statement running", 60, |_| {
        let n: u64 = c
            .query_first(
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() \
                 AND (INFO LIKE 'DELETE %' OR INFO LIKE 'SELECT %FOR UPDATE')",
            )
            .unwrap()
            .unwrap();
        n > 0
    });
}

/// The archive's rows (its lines after the header).
fn archived(path: &Path) -> u64 {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().count().saturating_sub(1) as u64
}

/// The checkpoint and the files agree, with the server stopped: the archive's first
/// `archive_bytes` hold a header and exactly the archived rows; with `cut`, the job cut the
/// chunk in flight (not committed) off the archive; without (it exited at once), rows past
/// `archive_bytes` may remain, which --resume cuts.
fn assert_consistent(state: &Path, archive: &Path, cut: bool) {
    let ck = checkpoint(state);
    let bytes = std::fs::read(archive).unwrap();
    assert_eq!(
        ck["pending"],
        serde_json::Value::Null,
        "the stop hit a chunk's statement, not its COMMIT: {ck}"
    );
    let n = ck["archive_bytes"].as_u64().unwrap() as usize;
    if cut {
        assert_eq!(n, bytes.len(), "{ck}");
    }
    assert!(n <= bytes.len(), "{ck}");
    let rows = bytes[..n].iter().filter(|&&b| b == b'\n').count() as u64 - 1;
    assert_eq!(ck["totals"]["rows_archived"].as_u64(), Some(rows), "{ck}");
}

#[test]
#[ignore = "needs mariadbd binaries (mariadb-server package)"]
fn a_server_stopped_mid_chunk_ends_the_job_in_bounded_time_and_ctrl_c_at_once_and_resume_settles_it(
) {
    let s = Throwaway::start();
    let mut c = table(&s.server, "frozen", 600);
    let dir = scratch_dir();
    let state = dir.path().join("state.json");
    let archive = dir.path().join("rows.tsv");
    let port = s.server.port;
    // SLEEP in the condition makes each chunk's SELECT and DELETE take ~0.2 s: the server is
    // stopped while one of them runs.
    let job = |net_timeout: &str, resume: bool| {
        let mut a = args(&[
            "mysql",
            "chunk",
            "--dsn",
            &s.server.dsn("frozen"),
            "--table",
            "t",
            "--where",
            "n <> 0 AND SLEEP(0.01) = 0",
            "--archive",
            archive.to_str().unwrap(),
            "--delete",
            "--execute",
            "--state",
            state.to_str().unwrap(),
            "--chunk-size",
            "20",
            "--chunk-min",
            "20",
            "--chunk-max",
            "20",
            "--chunk-time",
            "5s",
            "--sleep-coef",
            "0",
            "--max-load",
            "Threads_running=1000",
            "--critical-load",
            "Threads_running=2000",
            "--net-timeout",
            net_timeout,
        ]);
        if resume {
            a.push("--resume".into());
        }
        a
    };

    // 1. Stopped mid-chunk with --net-timeout 3s: exit 1, the message, a consistent checkpoint.
    let mut j = Job::spawn(&job("3s", false));
    j.wait_for("2 committed chunks", 60, |_| chunks(&state) >= 2);
    wait_chunk_statement(&mut c, &mut j);
    s.freeze();
    let (code, out, err) = j.finish(60);
    assert_eq!(code, Some(1), "{err}\n{out}");
    let want = format!("the server at 127.0.0.1:{port} sent nothing for 3s (--net-timeout) while running the chunk after (");
    assert!(err.contains(&want), "{err}");
    assert!(
        err.contains(&format!("The checkpoint {}", state.display())),
        "{err}"
    );
    assert!(err.contains("--resume runs it again"), "{err}");
    assert_consistent(&state, &archive, true);
    let after_stall = chunks(&state);
    s.thaw();
    s.wait_sessions_gone(&mut c, 0);
    // What the checkpoint says was committed is what the table lost: nothing more.
    let ck = checkpoint(&state);
    let done = ck["totals"]["rows_affected"].as_u64().unwrap();
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 600 - done);

    // 2. Ctrl-C while the server is stopped, --net-timeout 10m: exit 130 without waiting it out.
    let mut j = Job::spawn(&job("10m", true));
    j.wait_for("2 more committed chunks", 60, |_| {
        chunks(&state) >= after_stall + 2
    });
    wait_chunk_statement(&mut c, &mut j);
    s.freeze();
    std::thread::sleep(Duration::from_millis(500));
    j.signal(libc::SIGINT);
    let (code, out, err) = j.finish(60);
    assert_eq!(code, Some(130), "{err}\n{out}");
    assert!(
        err.contains("dbio: interrupted while running the chunk after (")
            && err.contains(&format!(
                "the server at 127.0.0.1:{port} has kept it waiting"
            )),
        "{err}"
    );
    assert!(err.contains("--resume runs it again"), "{err}");
    assert_consistent(&state, &archive, false);
    s.thaw();
    s.wait_sessions_gone(&mut c, 0);

    // 3. Resumed with the server back: it finishes, and the table and the archive together hold
    // every original row once.
    let (code, out, err) = Job::spawn(&job("3s", true)).finish(120);
    assert_eq!(code, Some(0), "{err}\n{out}");
    assert!(out.contains("outcome     finished"), "{out}");
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t WHERE n <> 0"), 0);
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 60);
    assert_eq!(archived(&archive), 540);
    let ids: std::collections::BTreeSet<u64> = std::fs::read_to_string(&archive)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split('\t').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(ids.len(), 540, "a row archived twice");
    assert!(ids.iter().all(|id| id % 10 != 0));
}

#[test]
#[ignore = "needs mariadbd binaries (mariadb-server package)"]
fn a_server_silent_between_chunks_pauses_the_job_which_reconnects_or_stops_after_reconnect_for() {
    let s = Throwaway::start();
    let mut c = table(&s.server, "between", 4000);
    let dir = scratch_dir();
    let state = dir.path().join("state.json");
    let port = s.server.port;
    // The load guard watches Threads_connected: the test holds connections open to keep the
    // job paused between chunks (sampling the server every 100 ms) while the server is stopped.
    let job = |reconnect_for: &str, resume: bool| {
        let mut a = args(&[
            "mysql",
            "chunk",
            "--dsn",
            &s.server.dsn("between"),
            "--table",
            "t",
            "--where",
            "n <> 0",
            "--delete",
            "--execute",
            "--state",
            state.to_str().unwrap(),
            "--chunk-size",
            "20",
            "--chunk-min",
            "20",
            "--chunk-max",
            "20",
            "--sleep-coef",
            "3",
            "--max-load",
            "Threads_connected=10",
            "--check-interval",
            "100ms",
            "--net-timeout",
            "2s",
            "--reconnect-for",
            reconnect_for,
        ]);
        if resume {
            a.push("--resume".into());
        }
        a
    };
    let hold = |n: usize| -> Vec<Conn> { (0..n).map(|_| s.server.conn()).collect() };
    let not_answering = format!("dbio: paused: the server at 127.0.0.1:{port} is not answering");

    // 1. Silent for longer than --reconnect-for 3s: the job stops cleanly, exit 1.
    let mut j = Job::spawn(&job("3s", false));
    j.wait_for("3 committed chunks", 60, |_| chunks(&state) >= 3);
    let holders = hold(12);
    j.wait_for("a pause for the load", 60, |j| {
        j.stderr().contains("dbio: paused: Threads_connected")
    });
    let before = chunks(&state);
    s.freeze();
    let (code, out, err) = j.finish(60);
    assert_eq!(code, Some(1), "{err}\n{out}");
    assert!(err.contains(&not_answering), "{err}");
    assert!(
        out.contains(&format!("outcome     stopped by the guard: the server at 127.0.0.1:{port} sent nothing for 2s while the guard sampled it")),
        "{out}"
    );
    assert!(out.contains("--reconnect-for 3s"), "{out}");
    assert_eq!(chunks(&state), before, "a chunk ran while paused");
    s.thaw();
    s.wait_sessions_gone(&mut c, 12);
    let done = checkpoint(&state)["totals"]["rows_affected"]
        .as_u64()
        .unwrap();
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 4000 - done);

    // 2. Silent for a few seconds, within --reconnect-for 5m: the job reconnects (taking its
    // lock again from its own old session, which the server kept), and finishes.
    let mut j = Job::spawn(&job("5m", true));
    j.wait_for("a pause for the load", 60, |j| {
        j.stderr().contains("dbio: paused: Threads_connected")
    });
    s.freeze();
    j.wait_for("a pause for the silent server", 60, |j| {
        j.stderr().contains(&not_answering)
    });
    std::thread::sleep(Duration::from_secs(3));
    s.thaw();
    j.wait_for("the reconnection", 60, |j| {
        j.stderr()
            .lines()
            .skip_while(|l| !l.starts_with(&not_answering))
            .any(|l| l.starts_with("dbio: resumed after"))
    });
    drop(holders);
    let (code, out, err) = j.finish(120);
    assert_eq!(code, Some(0), "{err}\n{out}");
    assert!(out.contains("outcome     finished"), "{out}");
    assert!(out.contains("server_not_answering"), "{out}");
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t WHERE n <> 0"), 0);
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 400);
}

#[test]
#[ignore = "needs mariadbd binaries (mariadb-server package)"]
fn a_replica_that_stops_answering_stops_the_job_fail_closed_in_bounded_time() {
    require_mariadbd();
    let pair = Pair(Replication::start("ROW"));
    let r = &pair.0;
    let mut c = table(&r.primary, "rfrozen", 4000);
    r.wait_caught_up();
    let dir = scratch_dir();
    let state = dir.path().join("state.json");
    let replica = r.replica.dsn("");
    let job = args(&[
        "mysql",
        "chunk",
        "--dsn",
        &r.primary.dsn("rfrozen"),
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
        "--chunk-size",
        "20",
        "--chunk-min",
        "20",
        "--chunk-max",
        "20",
        "--sleep-coef",
        "3",
        "--max-load",
        "Threads_running=1000",
        "--critical-load",
        "Threads_running=2000",
        "--net-timeout",
        "2s",
    ]);
    let mut j = Job::spawn(&job);
    j.wait_for("3 committed chunks", 60, |_| chunks(&state) >= 3);
    let pid = r.replica.pid().unwrap() as libc::pid_t;
    // SAFETY: kill(2) on the replica's mariadbd, started by this test (thawed by Pair's Drop).
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    let (code, out, err) = j.finish(60);
    assert_eq!(code, Some(1), "{err}\n{out}");
    assert!(
        out.contains(&format!(
            "outcome     stopped by the guard: the lag of replica {replica} cannot be read"
        )),
        "{out}"
    );
    let done = checkpoint(&state)["totals"]["rows_affected"]
        .as_u64()
        .unwrap();
    assert!(done > 0 && done < 3600, "{out}");
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM t"), 4000 - done);
}

#[test]
fn a_net_timeout_a_lock_wait_could_outlast_is_refused_before_connecting() {
    // Nothing listens on port 1: the refusal comes before any connection.
    let out = crate::common::dbio()
        .args([
            "mysql",
            "chunk",
            "--dsn",
            "mysql://root@127.0.0.1:1/db",
            "--table",
            "t",
            "--delete",
            "--lock-wait-timeout",
            "20",
            "--net-timeout",
            "30s",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--net-timeout 30s is shorter than twice --lock-wait-timeout 20s")
            && err.contains("give --net-timeout 40s or more"),
        "{err}"
    );
}

/// A listener on 127.0.0.1 that accepts connections and never sends a byte (a stopped server:
/// the kernel completes the TCP handshake for it), for as long as it lives.
fn silent_listener() -> (std::net::TcpListener, u16) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    (l, port)
}

fn silent_job(port: u16, net_timeout: &str) -> Job {
    Job::spawn(&args(&[
        "mysql",
        "chunk",
        "--dsn",
        &format!("mysql://root@127.0.0.1:{port}/db"),
        "--table",
        "t",
        "--delete",
        "--execute",
        "--net-timeout",
        net_timeout,
    ]))
}

#[test]
fn a_server_silent_from_the_start_ends_the_job_after_net_timeout() {
    let (_l, port) = silent_listener();
    let (code, out, err) = silent_job(port, "2s").finish(60);
    assert_eq!(code, Some(1), "{err}\n{out}");
    assert!(
        err.contains(&format!(
            "the server at 127.0.0.1:{port} sent nothing for 2s (--net-timeout) while connecting"
        )) && err.contains("No chunk of this run had started."),
        "{err}"
    );
}

#[test]
fn ctrl_c_ends_a_job_waiting_on_a_silent_server_at_once() {
    let (_l, port) = silent_listener();
    let mut j = silent_job(port, "10m");
    // The job is connecting (its read waits for the server's greeting).
    std::thread::sleep(Duration::from_millis(500));
    assert!(j.child.try_wait().unwrap().is_none(), "{}", j.stderr());
    j.signal(libc::SIGINT);
    let (code, out, err) = j.finish(60);
    assert_eq!(code, Some(130), "{err}\n{out}");
    assert!(
        err.contains(&format!(
            "dbio: interrupted while connecting and planning: the server at 127.0.0.1:{port} has kept it waiting"
        )) && err.contains("No chunk of this run had started."),
        "{err}"
    );
}
