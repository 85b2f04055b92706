//! The database-level workload of `dbio sweep --workload sysbench-oltp`: Debian's sysbench 1.0
//! running `oltp_read_write` against a MySQL/MariaDB server at each thread count, so a storage
//! change (alignment, scheduler, cache mode) is judged by transactions per second and their
//! latency, as the alignment article did. [`parse`] reads sysbench's report (a pure function,
//! tested on real output); [`Sysbench`] runs it.

use crate::error::BenchError;
use dbio_schema::sweep::OltpFigures;
use std::process::Command;

/// How to reach the server and how big the sysbench tables are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sysbench {
    /// Server host.
    pub host: String,
    /// Server port.
    pub port: u16,
    /// User.
    pub user: String,
    /// Password (empty: none).
    pub password: String,
    /// Database holding the `sbtestN` tables (must exist).
    pub db: String,
    /// Tables.
    pub tables: u32,
    /// Rows per table.
    pub table_size: u64,
}

impl Sysbench {
    /// Parses `mysql://user[:password]@host[:port]/db`.
    pub fn from_dsn(dsn: &str, tables: u32, table_size: u64) -> Result<Self, BenchError> {
        let bad = || {
            BenchError::InvalidSpec(format!(
                "--mysql {dsn:?}: expected mysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
            ))
        };
        let rest = dsn.strip_prefix("mysql://").ok_or_else(bad)?;
        let (auth, hostpart) = rest.rsplit_once('@').ok_or_else(bad)?;
        let (user, password) = auth.split_once(':').unwrap_or((auth, ""));
        let (hostport, db) = hostpart.split_once('/').ok_or_else(bad)?;
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) => (h, p.parse::<u16>().map_err(|_| bad())?),
            None => (hostport, 3306),
        };
        if user.is_empty() || host.is_empty() || db.is_empty() {
            return Err(bad());
        }
        Ok(Sysbench {
            host: host.into(),
            port,
            user: user.into(),
            password: password.into(),
            db: db.into(),
            tables,
            table_size,
        })
    }

    fn command(&self, threads: u32) -> Command {
        let mut c = Command::new("sysbench");
        c.arg("oltp_read_write")
            .arg("--db-driver=mysql")
            .arg(format!("--mysql-host={}", self.host))
            .arg(format!("--mysql-port={}", self.port))
            .arg(format!("--mysql-user={}", self.user))
            .arg(format!("--mysql-db={}", self.db))
            .arg(format!("--tables={}", self.tables))
            .arg(format!("--table-size={}", self.table_size))
            .arg(format!("--threads={threads}"));
        if !self.password.is_empty() {
            c.arg(format!("--mysql-password={}", self.password));
        }
        c
    }

    fn run(&self, mut c: Command, what: &str) -> Result<String, BenchError> {
        let out = c.output().map_err(|e| {
            BenchError::Failed(format!(
                "cannot run sysbench for {what}: {e}: install it (Debian package sysbench)"
            ))
        })?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(BenchError::Failed(format!(
                "sysbench {what} failed ({}): {}",
                out.status,
                err.lines()
                    .chain(text.lines())
                    .find(|l| l.contains("FATAL") || l.contains("error"))
                    .unwrap_or(err.trim())
            )));
        }
        Ok(text)
    }

    /// Creates the tables. Returns `false` (nothing created, nothing to remove later) when
    /// they exist already.
    pub fn prepare(&self) -> Result<bool, BenchError> {
        let mut c = self.command(1);
        c.arg("prepare");
        match self.run(c, "prepare") {
            Ok(_) => Ok(true),
            Err(BenchError::Failed(m)) if m.contains("already exists") => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Drops the tables.
    pub fn cleanup(&self) -> Result<(), BenchError> {
        let mut c = self.command(1);
        c.arg("cleanup");
        self.run(c, "cleanup").map(|_| ())
    }

    /// Runs oltp_read_write with `threads` for `secs` seconds; returns sysbench's report.
    pub fn run_point(&self, threads: u32, secs: u64) -> Result<String, BenchError> {
        let mut c = self.command(threads);
        c.arg(format!("--time={secs}"))
            .arg("--report-interval=0")
            .arg("--percentile=99")
            .arg("--histogram=on")
            .arg("run");
        self.run(c, "run")
    }
}

/// The number after `label` on the first line that contains it.
fn after<'a>(text: &'a str, label: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.split_once(label).map(|(_, r)| r.trim()))
}

fn num(s: Option<&str>) -> Option<f64> {
    s?.split_whitespace()
        .next()?
        .trim_end_matches('s')
        .parse()
        .ok()
}

/// The rate in `N (R per sec.)`.
fn rate(s: Option<&str>) -> Option<f64> {
    let s = s?;
    let (_, r) = s.split_once('(')?;
    r.split_whitespace().next()?.parse().ok()
}

/// Percentile `p` of sysbench's latency histogram (rows `value |*** count`): the smallest
/// bucket value with at least p% of the events at or below it, as sysbench computes its own.
fn hist_percentile(rows: &[(f64, u64)], p: f64) -> Option<f64> {
    let total: u64 = rows.iter().map(|r| r.1).sum();
    if total == 0 {
        return None;
    }
    let want = (total as f64 * p / 100.0).ceil() as u64;
    let mut seen = 0;
    rows.iter().find_map(|&(v, n)| {
        seen += n;
        (seen >= want).then_some(v)
    })
}

/// Reads sysbench 1.0's report of an OLTP run (`--histogram=on` adds the distribution, from
/// which p50 and p95 are taken; p99 is sysbench's own line). Fails naming what is missing.
pub fn parse(text: &str) -> Result<OltpFigures, BenchError> {
    let missing = |what: &str| {
        BenchError::Failed(format!(
            "sysbench's report has no {what}: is it sysbench 1.0 running an OLTP test?"
        ))
    };
    let rows: Vec<(f64, u64)> = text
        .lines()
        .filter_map(|l| {
            let (v, rest) = l.split_once('|')?;
            let v: f64 = v.trim().parse().ok()?;
            let n: u64 = rest.split_whitespace().last()?.parse().ok()?;
            Some((v, n))
        })
        .collect();
    Ok(OltpFigures {
        transactions: num(after(text, "transactions:")).ok_or_else(|| missing("transactions"))?
            as u64,
        transactions_per_s: rate(after(text, "transactions:"))
            .ok_or_else(|| missing("transactions rate"))?,
        queries: num(after(text, "queries:")).ok_or_else(|| missing("queries"))? as u64,
        queries_per_s: rate(after(text, "queries:")).ok_or_else(|| missing("queries rate"))?,
        errors_per_s: rate(after(text, "ignored errors:")).unwrap_or(0.0),
        reconnects: num(after(text, "reconnects:")).unwrap_or(0.0) as u64,
        time_s: num(after(text, "total time:")).ok_or_else(|| missing("total time"))?,
        lat_min_ms: num(after(text, "min:")).ok_or_else(|| missing("min latency"))?,
        lat_avg_ms: num(after(text, "avg:")).ok_or_else(|| missing("avg latency"))?,
        lat_max_ms: num(after(text, "max:")).ok_or_else(|| missing("max latency"))?,
        lat_p50_ms: hist_percentile(&rows, 50.0),
        lat_p95_ms: hist_percentile(&rows, 95.0),
        lat_p99_ms: num(after(text, "99th percentile:")),
        cpu_usr_pct: None,
        cpu_sys_pct: None,
        cpu_iowait_pct: None,
        device_util_pct: None,
        device_aqu_sz: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real run: sysbench 1.0.20, oltp_read_write, 2 tables of 2000 rows, 2 threads, 2 s,
    /// MariaDB 10.11 on this machine (histogram cut to a few rows).
    const REAL: &str = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Running the test with following options:
Number of threads: 2
Initializing random number generator from current time

Latency histogram (values are in milliseconds)
       value  ------------- distribution ------------- count
       1.470 |**                                       3
       2.000 |****************************************  200
       8.000 |********************                      160
      40.000 |*********                                 80
      58.920 |*                                         12

Initializing worker threads...

Threads started!

SQL statistics:
    queries performed:
        read:                            6370
        write:                           1820
        other:                           910
        total:                           9100
    transactions:                        455    (223.89 per sec.)
    queries:                             9100   (4477.75 per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          2.0318s
    total number of events:              455

Latency (ms):
         min:                                    1.45
         avg:                                    8.86
         max:                                   58.62
         99th percentile:                       39.65
         sum:                                 4029.56

Threads fairness:
    events (avg/stddev):           227.5000/34.50
    execution time (avg/stddev):   2.0148/0.01
";

    #[test]
    fn reads_a_real_report() {
        let f = parse(REAL).unwrap();
        assert_eq!((f.transactions, f.queries), (455, 9100));
        assert_eq!((f.transactions_per_s, f.queries_per_s), (223.89, 4477.75));
        assert_eq!(f.time_s, 2.0318);
        assert_eq!(
            (f.lat_min_ms, f.lat_avg_ms, f.lat_max_ms),
            (1.45, 8.86, 58.62)
        );
        assert_eq!(f.lat_p99_ms, Some(39.65));
        // 455 events: the 228th is in the 8.000 bucket (3 + 200 + 160 >= 228), the 433rd
        // (95%) in the 40.000 one (443 >= 433).
        assert_eq!(f.lat_p50_ms, Some(8.0));
        assert_eq!(f.lat_p95_ms, Some(40.0));
        let e = parse("FATAL: nothing\n").unwrap_err().to_string();
        assert!(e.contains("transactions"), "{e}");
    }

    #[test]
    fn dsn_parses_and_names_what_is_wrong() {
        let s = Sysbench::from_dsn("mysql://root@127.0.0.1:3306/test", 4, 10000).unwrap();
        assert_eq!(
            (s.host.as_str(), s.port, s.db.as_str()),
            ("127.0.0.1", 3306, "test")
        );
        let s = Sysbench::from_dsn("mysql://u:p%w@db/x", 1, 1).unwrap();
        assert_eq!(
            (s.user.as_str(), s.password.as_str(), s.port),
            ("u", "p%w", 3306)
        );
        for bad in [
            "root@h/db",
            "mysql://h/db",
            "mysql://u@h:x/db",
            "mysql://u@h",
        ] {
            let e = Sysbench::from_dsn(bad, 1, 1).unwrap_err().to_string();
            assert!(e.contains("mysql://USER"), "{bad}: {e}");
        }
    }
}
