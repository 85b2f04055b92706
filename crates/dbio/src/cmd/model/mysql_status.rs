//! The few status figures `dbio model live` reads from a MySQL/MariaDB server (four status
//! variables and @@datadir), on the `mysql` crate. Kept here, small, rather than in dbio-mysql.

use crate::cli::usage;
use anyhow::Context;
use mysql::prelude::Queryable;
use std::collections::HashMap;
use std::path::PathBuf;

/// A connection and whether the server runs on this machine.
pub struct Server {
    conn: mysql::Conn,
    /// False when the DSN names another host (its @@datadir is not this machine's).
    pub local: bool,
    /// The host, as the DSN names it.
    pub host: String,
}

impl Server {
    /// Connects; a DSN that is not a URL is a usage error. Messages never show the password.
    pub fn connect(dsn: &str) -> anyhow::Result<Server> {
        let shown = redact(dsn);
        let opts = mysql::Opts::from_url(dsn)
            .map_err(|e| usage(format!("--mysql {shown}: not a mysql:// URL: {e}")))?;
        let host = opts.get_ip_or_hostname().to_string();
        let local = opts.get_socket().is_some()
            || ["localhost", "127.0.0.1", "::1"].contains(&host.as_str());
        let conn = mysql::Conn::new(opts).with_context(|| {
            format!(
                "cannot connect to {shown}: check that the server runs and the user may connect"
            )
        })?;
        Ok(Server { conn, local, host })
    }

    /// Com_commit, Com_rollback, Questions and Threads_running now.
    pub fn status(&mut self) -> anyhow::Result<Status> {
        let rows: Vec<(String, String)> = self
            .conn
            .query(
                "SHOW GLOBAL STATUS WHERE Variable_name IN \
                 ('Com_commit', 'Com_rollback', 'Questions', 'Threads_running')",
            )
            .context("SHOW GLOBAL STATUS failed")?;
        let counters = rows
            .into_iter()
            .filter_map(|(k, v)| Some((k.to_ascii_lowercase(), v.parse().ok()?)))
            .collect();
        Ok(Status { counters })
    }

    /// Threads_running now.
    pub fn threads_running(&mut self) -> anyhow::Result<u64> {
        let row: Option<(String, String)> = self
            .conn
            .query_first("SHOW GLOBAL STATUS LIKE 'Threads_running'")
            .context("SHOW GLOBAL STATUS LIKE 'Threads_running' failed")?;
        Ok(row.and_then(|(_, v)| v.parse().ok()).unwrap_or(0))
    }

    /// @@datadir.
    pub fn datadir(&mut self) -> anyhow::Result<Option<PathBuf>> {
        Ok(self
            .conn
            .query_first::<String, _>("SELECT @@datadir")
            .context("SELECT @@datadir failed")?
            .map(PathBuf::from))
    }
}

/// Status counters read at one instant (names lower-cased).
pub struct Status {
    counters: HashMap<String, u64>,
}

impl Status {
    /// A counter, 0 when the server has none of that name.
    pub fn get(&self, k: &str) -> u64 {
        self.counters.get(k).copied().unwrap_or(0)
    }
}

/// The DSN without its password, for messages.
pub fn redact(dsn: &str) -> String {
    let Some((scheme, rest)) = dsn.split_once("://") else {
        return dsn.to_string();
    };
    match rest.rsplit_once('@') {
        Some((creds, host)) => match creds.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
            None => dsn.to_string(),
        },
        None => dsn.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_never_reaches_a_message() {
        assert_eq!(
            redact("mysql://app:s3cret@db1:3306/shop"),
            "mysql://app:***@db1:3306/shop"
        );
        assert_eq!(
            redact("mysql://root@127.0.0.1/test"),
            "mysql://root@127.0.0.1/test"
        );
    }
}
