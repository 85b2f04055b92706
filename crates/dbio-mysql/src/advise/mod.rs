//! `dbio mysql advise`: what a MySQL or MariaDB server does over an interval, judged by rules.
//!
//! [`sample_server`] takes two or more [`Sample`]s over the interval on one connection, each a
//! fixed, small set of statements ([`QUERIES_PER_SAMPLE`]: `SHOW GLOBAL STATUS`,
//! `SHOW GLOBAL VARIABLES`, one processlist query, the replica status) and, at the same moment,
//! `/proc/diskstats` for the datadir's devices. [`rules::judge`] is pure: it takes the samples
//! and returns one [`Advice`](dbio_schema::advise::Advice) per rule that applies to the
//! server's [`Version`]. Every rate is the change between the first and the last sample over
//! the time between them, never a counter divided by `Uptime`; the since-startup value is
//! shown beside it.

pub mod rules;

use crate::conn::{self, Net};
use crate::dsn::Tls;
use crate::Error;
use dbio_schema::iostat::DiskStat;
use mysql::prelude::Queryable;
use mysql::{Conn, Row};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The statements one sample sends: global status, dbio's own session status, variables,
/// processlist, replica status.
pub const QUERIES_PER_SAMPLE: u32 = 5;

/// The session counters of dbio's own connection that its own statements raise in the global
/// status: the rules take their change out of the global change (SHOW STATUS and the
/// processlist query make temporary tables, on disk on MariaDB).
pub const OWN_COUNTERS: [&str; 6] = [
    "Created_tmp_tables",
    "Created_tmp_disk_tables",
    "Questions",
    "Com_select",
    "Opened_tables",
    "Select_scan",
];

/// MySQL or MariaDB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// Oracle MySQL (and Percona Server).
    Mysql,
    /// MariaDB.
    Mariadb,
}

/// The server's version, as the rules need it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Version {
    /// MySQL or MariaDB.
    pub flavor: Flavor,
    /// Major.
    pub major: u32,
    /// Minor.
    pub minor: u32,
    /// Patch.
    pub patch: u32,
}

impl Version {
    /// From `@@version` (`10.11.19-MariaDB-0+deb12u1`, `8.0.36`, `5.7.44-log`) and
    /// `@@version_comment`; `None` when it has no `N.N.N` in front.
    pub fn parse(version: &str, comment: &str) -> Option<Version> {
        let head: String = version
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let mut it = head.split('.').map(|p| p.parse::<u32>());
        let major = it.next()?.ok()?;
        let minor = it.next()?.ok()?;
        let patch = it.next().and_then(Result::ok).unwrap_or(0);
        let maria = version.to_ascii_lowercase().contains("mariadb")
            || comment.to_ascii_lowercase().contains("mariadb");
        Some(Version {
            flavor: if maria {
                Flavor::Mariadb
            } else {
                Flavor::Mysql
            },
            major,
            minor,
            patch,
        })
    }

    /// Whether this version is at least `major.minor.patch`.
    pub fn at_least(&self, major: u32, minor: u32, patch: u32) -> bool {
        (self.major, self.minor, self.patch) >= (major, minor, patch)
    }

    /// Whether the server can have a query cache: MariaDB, MySQL before 8.0 (removed in 8.0).
    pub fn has_query_cache(&self) -> bool {
        self.flavor == Flavor::Mariadb || !self.at_least(8, 0, 0)
    }

    /// The statement that shows the replica status: `SHOW REPLICA STATUS` from MySQL 8.0.22
    /// and MariaDB 10.5.1 (MySQL 8.4 no longer takes `SHOW SLAVE STATUS`).
    pub fn replica_status_sql(&self) -> &'static str {
        let new = match self.flavor {
            Flavor::Mysql => self.at_least(8, 0, 22),
            Flavor::Mariadb => self.at_least(10, 5, 1),
        };
        if new {
            "SHOW REPLICA STATUS"
        } else {
            "SHOW SLAVE STATUS"
        }
    }

    /// `mysql` or `mariadb`.
    pub fn flavor_name(&self) -> &'static str {
        match self.flavor {
            Flavor::Mysql => "mysql",
            Flavor::Mariadb => "mariadb",
        }
    }
}

/// Threads seen in one processlist state at one sample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateSeen {
    /// The state (`statistics`, `Waiting for query cache lock`).
    pub state: String,
    /// Threads in it.
    pub threads: u64,
    /// The longest time one of them had been in it, seconds.
    pub max_time_s: u64,
}

/// The processlist states the rules look for.
pub const WATCHED_STATES: [&str; 3] = [
    "statistics",
    "Waiting for query cache lock",
    "Waiting on query cache mutex",
];

/// A replica's status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replica {
    /// Seconds_Behind_Master / Seconds_Behind_Source (NULL: not replicating).
    pub seconds_behind: Option<u64>,
    /// Slave_IO_Running / Replica_IO_Running.
    pub io_running: String,
    /// Slave_SQL_Running / Replica_SQL_Running.
    pub sql_running: String,
    /// Last_Error.
    pub last_error: String,
}

/// One look at the server.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Seconds since the first sample (monotonic clock).
    pub at_s: f64,
    /// SHOW GLOBAL STATUS.
    pub status: BTreeMap<String, String>,
    /// SHOW SESSION STATUS of dbio's own connection, the [`OWN_COUNTERS`] only.
    pub own: BTreeMap<String, String>,
    /// SHOW GLOBAL VARIABLES.
    pub variables: BTreeMap<String, String>,
    /// Threads in the [`WATCHED_STATES`].
    pub states: Vec<StateSeen>,
    /// The replica status, when the server is a replica.
    pub replica: Option<Replica>,
    /// /proc/diskstats lines of the watched devices.
    pub disks: Vec<DiskStat>,
}

impl Sample {
    /// A sample from saved `SHOW GLOBAL STATUS` and `SHOW GLOBAL VARIABLES` output
    /// (`mysql -N -e ...`: name, tab, value per line), as tests keep them.
    pub fn from_tsv(at_s: f64, status: &str, variables: &str) -> Sample {
        Sample {
            at_s,
            status: parse_tsv(status),
            own: BTreeMap::new(),
            variables: parse_tsv(variables),
            states: Vec::new(),
            replica: None,
            disks: Vec::new(),
        }
    }

    /// A status counter or gauge as a number.
    pub fn status_f64(&self, name: &str) -> Option<f64> {
        number(self.status.get(name)?)
    }

    /// A counter of dbio's own session.
    pub fn own_f64(&self, name: &str) -> Option<f64> {
        number(self.own.get(name)?)
    }

    /// A variable as a number (`ON`/`OFF` are 1 and 0).
    pub fn var_f64(&self, name: &str) -> Option<f64> {
        number(self.variables.get(name)?)
    }

    /// A variable as text.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.variables.get(name).map(String::as_str)
    }
}

fn number(s: &str) -> Option<f64> {
    match s.trim() {
        "ON" | "YES" | "TRUE" => Some(1.0),
        "OFF" | "NO" | "FALSE" => Some(0.0),
        // query_cache_type's third value.
        "DEMAND" => Some(2.0),
        t => t.parse::<f64>().ok().filter(|x| x.is_finite()),
    }
}

/// `name<TAB>value` lines into a map (a line without a tab is a name with an empty value).
pub fn parse_tsv(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| match l.split_once('\t') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (l.trim().to_string(), String::new()),
        })
        .collect()
}

/// The processlist query's rows as `mysql -N -e` prints them (state, threads, longest time,
/// tab-separated), as tests keep them; a line that is not three fields is left out.
pub fn states_from_tsv(text: &str) -> Vec<StateSeen> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split('\t');
            let state = f.next()?.to_string();
            let threads = f.next()?.trim().parse().ok()?;
            let max_time_s = f.next()?.trim().parse::<i64>().ok()?.max(0) as u64;
            Some(StateSeen {
                state,
                threads,
                max_time_s,
            })
        })
        .collect()
}

/// What to sample and for how long.
#[derive(Clone, Debug)]
pub struct Options {
    /// The server.
    pub dsn: String,
    /// TLS.
    pub tls: Tls,
    /// Timeouts.
    pub net: Net,
    /// From the first sample to the last.
    pub interval: Duration,
    /// Samples, at least 2, evenly spread over the interval.
    pub samples: u32,
    /// Kernel names of the devices whose /proc/diskstats lines to keep with each sample.
    pub devices: Vec<String>,
}

/// What [`sample_server`] gathered.
#[derive(Clone, Debug)]
pub struct Sampled {
    /// The samples, first to last (at least two, unless interrupted before the second).
    pub samples: Vec<Sample>,
    /// The server's version.
    pub version: Version,
    /// `@@version`.
    pub version_text: String,
    /// Statements sent per sample.
    pub queries_per_sample: u32,
    /// What could not be read (a privilege missing).
    pub notes: Vec<String>,
    /// `host:port`.
    pub address: String,
}

fn sql(what: impl Into<String>) -> impl FnOnce(mysql::Error) -> Error {
    let what = what.into();
    move |source| Error::Sql { what, source }
}

fn pairs(conn: &mut Conn, stmt: &str) -> Result<BTreeMap<String, String>, Error> {
    let rows: Vec<(String, Option<String>)> = conn.query(stmt).map_err(sql(stmt))?;
    Ok(rows
        .into_iter()
        .map(|(k, v)| (k, v.unwrap_or_default()))
        .collect())
}

const OWN_STATUS: &str = "SHOW SESSION STATUS WHERE Variable_name IN ('Created_tmp_tables', 'Created_tmp_disk_tables', 'Questions', 'Com_select', 'Opened_tables', 'Select_scan')";

fn states(conn: &mut Conn) -> Result<Vec<StateSeen>, Error> {
    let list = WATCHED_STATES
        .iter()
        .map(|s| format!("'{s}'"))
        .collect::<Vec<_>>()
        .join(", ");
    let stmt = format!(
        "SELECT STATE, COUNT(*), COALESCE(MAX(TIME), 0) FROM information_schema.PROCESSLIST \
         WHERE ID <> CONNECTION_ID() AND STATE IN ({list}) GROUP BY STATE"
    );
    let rows: Vec<(String, u64, i64)> = conn.query(&stmt).map_err(sql("the processlist query"))?;
    Ok(rows
        .into_iter()
        .map(|(state, threads, t)| StateSeen {
            state,
            threads,
            max_time_s: t.max(0) as u64,
        })
        .collect())
}

fn column(row: &Row, names: &[&str]) -> Option<String> {
    let cols = row.columns_ref();
    let i = cols
        .iter()
        .position(|c| names.iter().any(|n| c.name_str().eq_ignore_ascii_case(n)))?;
    match row.as_ref(i)? {
        mysql::Value::NULL => None,
        mysql::Value::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
        v => Some(v.as_sql(true).trim_matches('\'').to_string()),
    }
}

fn replica(conn: &mut Conn, v: &Version) -> Result<Option<Replica>, Error> {
    let stmt = v.replica_status_sql();
    let row: Option<Row> = conn.query_first(stmt).map_err(sql(stmt))?;
    Ok(row.map(|r| Replica {
        seconds_behind: column(&r, &["Seconds_Behind_Source", "Seconds_Behind_Master"])
            .and_then(|s| s.parse().ok()),
        io_running: column(&r, &["Replica_IO_Running", "Slave_IO_Running"]).unwrap_or_default(),
        sql_running: column(&r, &["Replica_SQL_Running", "Slave_SQL_Running"]).unwrap_or_default(),
        last_error: column(&r, &["Last_Error"]).unwrap_or_default(),
    }))
}

fn disks(names: &[String], notes: &mut Vec<String>) -> Vec<DiskStat> {
    if names.is_empty() {
        return Vec::new();
    }
    match dbio_sys::diskstats::read() {
        Ok(all) => all
            .into_iter()
            .filter(|d| names.contains(&d.name))
            .collect(),
        Err(e) => {
            push_note(notes, format!("/proc/diskstats: {e}"));
            Vec::new()
        }
    }
}

fn push_note(notes: &mut Vec<String>, n: String) {
    if !notes.contains(&n) {
        notes.push(n);
    }
}

/// Takes one sample on `conn`. A processlist or replica status the account may not read
/// becomes a note, not an error.
pub fn sample(
    conn: &mut Conn,
    v: &Version,
    at_s: f64,
    devices: &[String],
    notes: &mut Vec<String>,
) -> Result<Sample, Error> {
    let status = pairs(conn, "SHOW GLOBAL STATUS")?;
    let own = pairs(conn, OWN_STATUS)?;
    let variables = pairs(conn, "SHOW GLOBAL VARIABLES")?;
    let states = states(conn).unwrap_or_else(|e| {
        push_note(
            notes,
            format!(
                "{e}: {}; the optimizer and query cache lock waits are not seen",
                err_text(&e)
            ),
        );
        Vec::new()
    });
    let replica = replica(conn, v).unwrap_or_else(|e| {
        push_note(notes, format!("{e}: {} (the account needs REPLICATION CLIENT, or SLAVE MONITOR on MariaDB); replication lag is not judged", err_text(&e)));
        None
    });
    Ok(Sample {
        at_s,
        status,
        own,
        variables,
        states,
        replica,
        disks: disks(devices, notes),
    })
}

fn err_text(e: &Error) -> String {
    match conn::client_error(e) {
        Some(c) => crate::client_error(c),
        None => String::new(),
    }
}

/// A connection with what was read on connecting.
pub struct Connected {
    /// The connection.
    pub conn: Conn,
    /// The version.
    pub version: Version,
    /// `@@version`.
    pub version_text: String,
    /// `@@datadir`.
    pub datadir: String,
    /// Whether the account holds the PROCESS privilege (without it the processlist shows
    /// its own threads only).
    pub process_privilege: bool,
}

/// Connects and reads the version and the datadir (one statement, not counted in the
/// samples).
pub fn connect(o: &Options) -> Result<Connected, Error> {
    let mut conn = conn::open(&o.dsn, &o.tls, &o.net)
        .map_err(|e| conn::explain(e, &o.dsn, &o.net, None, "nothing was sampled"))?;
    let (text, comment, datadir, process): (String, Option<String>, Option<String>, i64) = conn
        .query_first(CONNECT_SQL)
        .map_err(sql(
            "SELECT @@version, @@version_comment, @@datadir, the PROCESS privilege",
        ))
        .map_err(|e| conn::explain(e, &o.dsn, &o.net, None, "nothing was sampled"))?
        .unwrap_or_default();
    let version =
        Version::parse(&text, comment.as_deref().unwrap_or("")).ok_or_else(|| Error::Sql {
            what: format!("reading the version: '{text}' does not start with N.N"),
            source: mysql::Error::DriverError(mysql::DriverError::UnexpectedPacket),
        })?;
    Ok(Connected {
        conn,
        version,
        version_text: text,
        datadir: datadir.unwrap_or_default(),
        process_privilege: process > 0,
    })
}

/// The one statement sent on connecting: the version, the datadir and whether the account
/// holds PROCESS (information_schema.USER_PRIVILEGES lists the account's own global
/// privileges; an account that may read mysql.user sees every account's, hence the grantee).
const CONNECT_SQL: &str = "SELECT @@version, @@version_comment, @@datadir, \
     (SELECT COUNT(*) FROM information_schema.USER_PRIVILEGES WHERE PRIVILEGE_TYPE = 'PROCESS' \
     AND GRANTEE = CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', \
     SUBSTRING_INDEX(CURRENT_USER(), '@', -1), ''''))";

/// Samples the server `o.samples` times evenly over `o.interval` on `c`. When `stop` is set
/// while waiting, one last sample is taken at once and the samples so far are returned (rates
/// over the shorter interval).
pub fn sample_server(c: &mut Connected, o: &Options, stop: &AtomicBool) -> Result<Sampled, Error> {
    let mut notes = Vec::new();
    let n = o.samples.max(2);
    let step = o.interval / (n - 1);
    let t0 = Instant::now();
    let version = c.version;
    let mut samples = vec![
        sample(&mut c.conn, &version, 0.0, &o.devices, &mut notes).map_err(|e| {
            conn::explain(
                e,
                &o.dsn,
                &o.net,
                Some(&format!("taking sample 1 of {n}")),
                "nothing was judged",
            )
        })?,
    ];
    for i in 1..n {
        let due = t0 + step * i;
        while Instant::now() < due && !stop.load(Ordering::SeqCst) {
            std::thread::sleep((due - Instant::now()).min(Duration::from_millis(100)));
        }
        let at = t0.elapsed().as_secs_f64();
        let doing = format!("taking sample {} of {n}", i + 1);
        let held = "nothing was judged (the samples so far are dropped)";
        let s = match sample(&mut c.conn, &version, at, &o.devices, &mut notes) {
            // The connection is gone (a restart closes it): one new connection, and the
            // rules see the restart in Uptime.
            Err(e) if conn::connection_lost(&e) && !conn::not_answering(&e) => {
                push_note(
                    &mut notes,
                    format!(
                        "the connection was lost before sample {} ({}): reconnected",
                        i + 1,
                        err_text(&e)
                    ),
                );
                c.conn = conn::open(&o.dsn, &o.tls, &o.net)
                    .map_err(|e2| conn::explain(e2, &o.dsn, &o.net, Some(&doing), held))?;
                sample(&mut c.conn, &version, at, &o.devices, &mut notes)
            }
            r => r,
        }
        .map_err(|e| conn::explain(e, &o.dsn, &o.net, Some(&doing), held))?;
        samples.push(s);
        if stop.load(Ordering::SeqCst) {
            notes.push(format!(
                "interrupted: {} samples over {at:.1}s instead of {n} over {}s",
                samples.len(),
                o.interval.as_secs_f64()
            ));
            break;
        }
    }
    Ok(Sampled {
        samples,
        version,
        version_text: c.version_text.clone(),
        queries_per_sample: QUERIES_PER_SAMPLE,
        notes,
        address: conn::server_of(&o.dsn),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        let m = Version::parse("10.11.19-MariaDB-0+deb12u1", "Debian 12").unwrap();
        assert_eq!(
            (m.flavor, m.major, m.minor, m.patch),
            (Flavor::Mariadb, 10, 11, 19)
        );
        assert!(m.has_query_cache());
        assert_eq!(m.replica_status_sql(), "SHOW REPLICA STATUS");
        let my = Version::parse("8.0.36", "MySQL Community Server - GPL").unwrap();
        assert!(!my.has_query_cache());
        assert_eq!(my.replica_status_sql(), "SHOW REPLICA STATUS");
        let old = Version::parse("5.7.44-log", "MySQL Community Server (GPL)").unwrap();
        assert!(old.has_query_cache());
        assert_eq!(old.replica_status_sql(), "SHOW SLAVE STATUS");
        let m104 = Version::parse("10.4.34-MariaDB", "").unwrap();
        assert_eq!(m104.replica_status_sql(), "SHOW SLAVE STATUS");
        // MariaDB 11 and MySQL 9 keep their flavour.
        assert_eq!(
            Version::parse("11.4.2-MariaDB-log", "").unwrap().flavor,
            Flavor::Mariadb
        );
        assert!(!Version::parse("9.1.0", "").unwrap().has_query_cache());
        assert!(Version::parse("garbage", "").is_none());
    }

    #[test]
    fn the_own_status_statement_names_the_own_counters() {
        for c in OWN_COUNTERS {
            assert!(OWN_STATUS.contains(&format!("'{c}'")), "{c}");
        }
        assert_eq!(OWN_STATUS.matches('\'').count(), 2 * OWN_COUNTERS.len());
    }

    #[test]
    fn tsv_and_numbers() {
        let s = Sample::from_tsv(
            0.0,
            "Uptime\t26\nInnodb_buffer_pool_reads\t165\n",
            "query_cache_type\tOFF\nversion\t10.11.19-MariaDB\nlog_bin\tON\n",
        );
        assert_eq!(s.status_f64("Uptime"), Some(26.0));
        assert_eq!(s.var_f64("query_cache_type"), Some(0.0));
        assert_eq!(s.var_f64("log_bin"), Some(1.0));
        assert_eq!(s.var_f64("version"), None);
        assert_eq!(s.var("version"), Some("10.11.19-MariaDB"));
    }
}
