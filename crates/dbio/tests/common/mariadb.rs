//! Throwaway MariaDB servers for the replication tests: a primary (binary log on, server_id 1)
//! and a replica (server_id 2) made with the Debian binaries (`mariadb-install-db`, then
//! `mariadbd` in the background), each with its datadir and socket under one directory in
//! /dev/shm (`chunkrepl-*`) and its own TCP port on 127.0.0.1. Dropping a [`Replication`]
//! kills both servers and removes the directory, also when the test panics.
//!
//! Tests using it are `#[ignore = "needs mariadbd binaries (mariadb-server package)"]` and start
//! with [`require_mariadbd`].

use mysql::prelude::Queryable;
use mysql::Conn;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// mariadbd: /usr/sbin/mariadbd (Debian's place, not on every user's PATH) or from PATH.
fn mariadbd() -> &'static str {
    if Path::new("/usr/sbin/mariadbd").exists() {
        "/usr/sbin/mariadbd"
    } else {
        "mariadbd"
    }
}

/// Fails the test unless `mariadbd` and `mariadb-install-db` can be started.
pub fn require_mariadbd() {
    for tool in [mariadbd(), "mariadb-install-db"] {
        super::require_tool(tool, &["--version"], "Debian package mariadb-server");
    }
}

/// A new directory in /dev/shm (`chunkrepl-*`; the temporary directory when there is no
/// /dev/shm), removed when dropped.
pub fn scratch_dir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    let base = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    tempfile::Builder::new()
        .prefix("chunkrepl-")
        .tempdir_in(base)
        .unwrap()
}

/// A free TCP port on 127.0.0.1 (the kernel's pick, released for mariadbd to take).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port on 127.0.0.1")
        .port()
}

/// One mariadbd, killed when dropped.
pub struct Server {
    /// `primary` or `replica`.
    pub name: &'static str,
    /// Its directory (datadir `data/`, socket, error log, binary and relay logs).
    pub dir: PathBuf,
    /// Its TCP port on 127.0.0.1.
    pub port: u16,
    server_id: u32,
    extra: Vec<String>,
    child: Option<Child>,
}

impl Server {
    /// Makes a datadir in `root/name` with mariadb-install-db and starts mariadbd on it with
    /// `extra` options. Drop the server before `root`'s directory.
    pub fn new(root: &Path, name: &'static str, server_id: u32, extra: &[String]) -> Server {
        let dir = root.join(name);
        // Its own tmpdir: the servers' internal temporary tables (#sql-temptable-*) stay out of
        // the shared /tmp, where a CI run once lost one mid-query ("Error on delete of
        // '/tmp/#sql-temptable-...MAI' (Errcode: 2)").
        std::fs::create_dir_all(dir.join("tmp")).unwrap();
        let out = Command::new("mariadb-install-db")
            .arg("--no-defaults")
            .arg(format!("--datadir={}", dir.join("data").display()))
            .arg("--auth-root-authentication-method=normal")
            .arg("--skip-test-db")
            .args(user_arg())
            .output()
            .expect("run mariadb-install-db (Debian package mariadb-server)");
        assert!(
            out.status.success(),
            "mariadb-install-db for the {name}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let mut s = Server {
            name,
            dir,
            port: 0,
            server_id,
            extra: extra.to_vec(),
            child: None,
        };
        s.start();
        s
    }

    /// Starts mariadbd (again: on its last port if that is still free) and waits until it
    /// answers.
    pub fn start(&mut self) {
        assert!(self.child.is_none(), "the {} is running", self.name);
        for attempt in 0..3 {
            if attempt > 0 || self.port == 0 {
                self.port = free_port();
            }
            let mut cmd = Command::new(mariadbd());
            // SAFETY: prctl in the child before exec, no allocation: the server dies with the
            // test's thread even when the test process is killed and no Drop runs.
            unsafe {
                cmd.pre_exec(|| {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    Ok(())
                });
            }
            let child = cmd
                .arg("--no-defaults")
                .args(user_arg())
                .arg(format!("--datadir={}", self.dir.join("data").display()))
                .arg(format!("--socket={}", self.dir.join("sock").display()))
                .arg(format!("--pid-file={}", self.dir.join("pid").display()))
                .arg(format!("--tmpdir={}", self.dir.join("tmp").display()))
                .arg(format!("--log-error={}", self.error_log_path().display()))
                .arg(format!("--port={}", self.port))
                .arg("--bind-address=127.0.0.1")
                .arg(format!("--server-id={}", self.server_id))
                .arg("--skip-name-resolve")
                .arg("--innodb-buffer-pool-size=32M")
                .arg("--innodb-log-file-size=16M")
                .args(&self.extra)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start mariadbd (Debian package mariadb-server)");
            self.child = Some(child);
            if self.wait_ready() {
                return;
            }
            // The port was taken between our pick and its bind: try another.
            self.kill();
        }
        panic!(
            "the {} (mariadbd) did not start; its error log:\n{}",
            self.name,
            self.error_log()
        );
    }

    fn wait_ready(&mut self) -> bool {
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(60) {
            if let Some(st) = self.child.as_mut().unwrap().try_wait().unwrap() {
                eprintln!("the {} exited ({st})", self.name);
                self.child = None;
                return false;
            }
            // Up when it answers: a refusal from the server (a server that takes only TLS
            // refuses this plain connection) counts.
            match Conn::new(mysql::Opts::from_url(&self.dsn("")).unwrap()) {
                Ok(_) | Err(mysql::Error::MySqlError(_)) => return true,
                Err(_) => {}
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }

    /// `mysql://root@127.0.0.1:PORT/DB`.
    pub fn dsn(&self, db: &str) -> String {
        format!("mysql://root@127.0.0.1:{}/{db}", self.port)
    }

    /// A new connection as root.
    pub fn conn(&self) -> Conn {
        Conn::new(mysql::Opts::from_url(&self.dsn("")).unwrap())
            .unwrap_or_else(|e| panic!("connect to the {} at {}: {e}", self.name, self.dsn("")))
    }

    fn error_log_path(&self) -> PathBuf {
        self.dir.join("error.log")
    }

    /// The server's error log so far.
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.error_log_path()).unwrap_or_default()
    }

    /// mariadbd's process id (none while it is not running).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Kills the server with SIGKILL (a crash) and waits for it.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `--user=root` when running as root (mariadbd refuses to run as root without it).
fn user_arg() -> Vec<String> {
    if super::is_root() {
        vec!["--user=root".into()]
    } else {
        vec![]
    }
}

/// A primary and a replica replicating from it; both killed and their directory removed on
/// drop.
pub struct Replication {
    /// server_id 1, binary log on.
    pub primary: Server,
    /// server_id 2, replicating from the primary with GTID (slave_pos).
    pub replica: Server,
    // Dropped last: the servers are gone before their files are removed.
    _dir: tempfile::TempDir,
}

impl Replication {
    /// Starts both servers (the primary with `binlog_format`) and replication between them.
    pub fn start(binlog_format: &str) -> Replication {
        let dir = scratch_dir();
        let binlog = dir.path().join("primary").join("binlog");
        let primary = Server::new(
            dir.path(),
            "primary",
            1,
            &[
                format!("--log-bin={}", binlog.display()),
                format!("--binlog-format={binlog_format}"),
            ],
        );
        let relay = dir.path().join("replica").join("relay");
        let replica = Server::new(
            dir.path(),
            "replica",
            2,
            &[format!("--relay-log={}", relay.display())],
        );
        let r = Replication {
            primary,
            replica,
            _dir: dir,
        };
        let mut p = r.primary.conn();
        p.query_drop("CREATE USER repl@'127.0.0.1' IDENTIFIED BY 'repl'")
            .unwrap();
        p.query_drop("GRANT REPLICATION SLAVE ON *.* TO repl@'127.0.0.1'")
            .unwrap();
        let mut c = r.replica.conn();
        c.query_drop(format!(
            "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='repl', \
             MASTER_PASSWORD='repl', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1",
            r.primary.port
        ))
        .unwrap();
        c.query_drop("START SLAVE").unwrap();
        r.wait_running();
        r
    }

    /// Waits until both replication threads run.
    pub fn wait_running(&self) {
        let t0 = Instant::now();
        let mut c = self.replica.conn();
        loop {
            let (io, sql, err) = slave_status(&mut c);
            if io == "Yes" && sql == "Yes" {
                return;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "replication does not run: IO {io}, SQL {sql}: {err}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until the replica has applied everything the primary logged so far.
    pub fn wait_caught_up(&self) {
        let pos: String = self
            .primary
            .conn()
            .query_first("SELECT @@gtid_binlog_pos")
            .unwrap()
            .unwrap();
        let waited: Option<i64> = self
            .replica
            .conn()
            .exec_first("SELECT MASTER_GTID_WAIT(?, 60)", (&pos,))
            .unwrap();
        assert_eq!(
            waited,
            Some(0),
            "the replica did not reach the primary's GTID position {pos} in 60 s"
        );
    }
}

/// `SHOW SLAVE STATUS`: Slave_IO_Running, Slave_SQL_Running and the last errors.
pub fn slave_status(c: &mut Conn) -> (String, String, String) {
    let row: mysql::Row = c
        .query_first("SHOW SLAVE STATUS")
        .unwrap()
        .expect("a replica");
    let get = |name: &str| -> String {
        row.get::<Option<String>, _>(name)
            .flatten()
            .unwrap_or_default()
    };
    (
        get("Slave_IO_Running"),
        get("Slave_SQL_Running"),
        format!("{} {}", get("Last_IO_Error"), get("Last_SQL_Error")),
    )
}

/// `CHECKSUM TABLE t EXTENDED` and `COUNT(*)` of `table` (`db.t`).
pub fn table_sum(c: &mut Conn, table: &str) -> (u64, u64) {
    let r: (String, Option<u64>) = c
        .query_first(format!("CHECKSUM TABLE {table} EXTENDED"))
        .unwrap()
        .unwrap();
    let n: u64 = c
        .query_first(format!("SELECT COUNT(*) FROM {table}"))
        .unwrap()
        .unwrap();
    (r.1.unwrap_or_else(|| panic!("{table} does not exist")), n)
}
