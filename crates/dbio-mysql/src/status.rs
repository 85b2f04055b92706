//! The few figures `dbio model live` reads from a running server: Com_commit, Com_rollback,
//! Questions and Threads_running, and @@datadir. One connection, opened by [`conn::open`] with
//! [`Net`]'s timeouts, so a server that stops answering ends a read with an error instead of
//! never ([`conn::not_answering`] tells it apart).

use crate::conn::{self, Net};
use crate::server::{self, Tls};
use crate::Error;
use mysql::prelude::Queryable;
use mysql::Conn;
use std::collections::HashMap;
use std::path::PathBuf;

/// A connection, and whether the server runs on this machine.
pub struct Server {
    conn: Conn,
    /// False when the DSN names another host (its @@datadir is not this machine's).
    pub local: bool,
    /// The host, as the DSN names it.
    pub host: String,
}

fn sql(what: &str) -> impl FnOnce(mysql::Error) -> Error + '_ {
    move |source| Error::Sql {
        what: what.to_string(),
        source,
    }
}

/// Whether `host` (as a DSN names it) is this machine.
pub fn is_local(host: &str) -> bool {
    ["localhost", "127.0.0.1", "::1"].contains(&host)
}

impl Server {
    /// Connects (TLS as the DSN says). A DSN that does not parse is [`Error::Dsn`], a refused
    /// connection [`Error::Connect`]; neither shows the password.
    pub fn connect(dsn: &str, net: &Net) -> Result<Server, Error> {
        let opts = server::opts(dsn)?;
        let host = opts.get_ip_or_hostname().to_string();
        let local = opts.get_socket().is_some() || is_local(&host);
        let conn = conn::open(dsn, &Tls::Dsn, net)?;
        Ok(Server { conn, local, host })
    }

    /// Com_commit, Com_rollback, Questions and Threads_running now.
    pub fn status(&mut self) -> Result<Status, Error> {
        let rows: Vec<(String, String)> = self
            .conn
            .query(
                "SHOW GLOBAL STATUS WHERE Variable_name IN \
                 ('Com_commit', 'Com_rollback', 'Questions', 'Threads_running')",
            )
            .map_err(sql("SHOW GLOBAL STATUS"))?;
        Ok(Status::from_rows(rows))
    }

    /// Threads_running now (0 when the server shows none).
    pub fn threads_running(&mut self) -> Result<u64, Error> {
        let row: Option<(String, String)> = self
            .conn
            .query_first("SHOW GLOBAL STATUS LIKE 'Threads_running'")
            .map_err(sql("SHOW GLOBAL STATUS LIKE 'Threads_running'"))?;
        Ok(row.and_then(|(_, v)| v.parse().ok()).unwrap_or(0))
    }

    /// @@datadir.
    pub fn datadir(&mut self) -> Result<Option<PathBuf>, Error> {
        Ok(self
            .conn
            .query_first::<String, _>("SELECT @@datadir")
            .map_err(sql("SELECT @@datadir"))?
            .map(PathBuf::from))
    }
}

/// Status counters read at one instant (names lower-cased).
#[derive(Clone, Debug, Default)]
pub struct Status {
    counters: HashMap<String, u64>,
}

impl Status {
    /// The counters of `SHOW GLOBAL STATUS` rows (name, value); values that are not whole
    /// numbers are left out.
    pub fn from_rows(rows: Vec<(String, String)>) -> Status {
        let counters = rows
            .into_iter()
            .filter_map(|(k, v)| Some((k.to_ascii_lowercase(), v.parse().ok()?)))
            .collect();
        Status { counters }
    }

    /// A counter (any case), 0 when the server has none of that name.
    pub fn get(&self, k: &str) -> u64 {
        self.counters
            .get(&k.to_ascii_lowercase())
            .copied()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_read_in_any_case_and_missing_ones_are_0() {
        let s = Status::from_rows(vec![
            ("Com_commit".into(), "12".into()),
            ("Questions".into(), "40".into()),
            ("Threads_running".into(), "not a number".into()),
        ]);
        assert_eq!(s.get("com_commit"), 12);
        assert_eq!(s.get("Questions"), 40);
        assert_eq!(s.get("threads_running"), 0);
        assert_eq!(s.get("com_rollback"), 0);
    }

    #[test]
    fn only_loopback_names_are_this_machine() {
        assert!(is_local("localhost") && is_local("127.0.0.1") && is_local("::1"));
        assert!(!is_local("db1") && !is_local("10.0.0.5"));
    }
}
