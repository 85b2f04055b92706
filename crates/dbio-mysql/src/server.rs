//! The thin SQL: connecting, reading a table's metadata, EXPLAIN, sampling the load guard's
//! inputs, the job lock. Every function is one or two statements; the decisions made on their
//! results are in the pure modules.

use crate::guard::Sample;
use crate::key::IndexColumn;
use crate::{redact, Error};
use dbio_schema::mysql_chunk::Explain;
use mysql::prelude::Queryable;
use mysql::{Conn, Value};
use std::collections::BTreeMap;

fn sql(what: impl Into<String>) -> impl FnOnce(mysql::Error) -> Error {
    let what = what.into();
    move |source| Error::Sql { what, source }
}

pub use crate::conn::lock;
pub use crate::dsn::{opts, Tls};

/// Opens a plain connection, or one with TLS if the DSN asks for it.
pub fn connect(dsn: &str) -> Result<Conn, Error> {
    connect_tls(dsn, &Tls::Dsn)
}

/// Opens a connection secured as `tls` says.
pub fn connect_tls(dsn: &str, tls: &Tls) -> Result<Conn, Error> {
    let o = tls.apply(opts(dsn)?);
    Conn::new(o).map_err(|cause| Error::Connect {
        dsn: redact(dsn),
        cause,
    })
}

/// What the job needs to know about its table.
#[derive(Clone, Debug)]
pub struct TableInfo {
    /// The schema's name as the server stores it.
    pub schema: String,
    /// The table's name as the server stores it.
    pub name: String,
    /// ENGINE.
    pub engine: String,
    /// TABLE_ROWS (InnoDB's estimate).
    pub rows_estimate: u64,
    /// Column names in table order.
    pub columns: Vec<String>,
    /// Per column: generated (VIRTUAL or STORED/PERSISTENT); an INSERT must leave it out.
    pub generated: Vec<bool>,
    /// Index columns.
    pub index_columns: Vec<IndexColumn>,
}

/// Reads the table's engine, row estimate, columns and indexes.
pub fn table_info(conn: &mut Conn, db: &str, table: &str) -> Result<TableInfo, Error> {
    let what = format!("reading the metadata of {db}.{table}");
    let row: Option<(String, String, Option<String>, Option<u64>)> = conn
        .exec_first(
            "SELECT TABLE_SCHEMA, TABLE_NAME, ENGINE, TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND TABLE_TYPE = 'BASE TABLE'",
            (db, table),
        )
        .map_err(sql(what.clone()))?;
    let Some((schema, name, engine, rows)) = row else {
        return Err(Error::NoTable(format!("{db}.{table}")));
    };
    // EXTRA says `VIRTUAL GENERATED` / `STORED GENERATED` (MySQL 5.7+, MariaDB 10.2+) or
    // `VIRTUAL` / `PERSISTENT` (older MariaDB); MySQL 8's `DEFAULT_GENERATED` (an expression
    // default) is an ordinary column.
    let cols: Vec<(String, String)> = conn
        .exec(
            "SELECT COLUMN_NAME, EXTRA FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION",
            (db, table),
        )
        .map_err(sql(what.clone()))?;
    let (columns, generated) = cols
        .into_iter()
        .map(|(c, extra)| (c, is_generated(&extra)))
        .unzip();
    let idx: Vec<(String, u32, String, i64, String, Option<i64>)> = conn
        .exec(
            "SELECT INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NON_UNIQUE, NULLABLE, SUB_PART FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY INDEX_NAME, SEQ_IN_INDEX",
            (db, table),
        )
        .map_err(sql(what))?;
    Ok(TableInfo {
        schema,
        name,
        engine: engine.unwrap_or_default(),
        rows_estimate: rows.unwrap_or(0),
        columns,
        generated,
        index_columns: idx
            .into_iter()
            .map(
                |(index, seq, column, non_unique, nullable, sub)| IndexColumn {
                    index,
                    seq,
                    column,
                    non_unique: non_unique != 0,
                    nullable: nullable.eq_ignore_ascii_case("YES"),
                    prefix: sub.is_some(),
                },
            )
            .collect(),
    })
}

/// Whether information_schema.COLUMNS.EXTRA marks a generated column.
pub fn is_generated(extra: &str) -> bool {
    extra.split_whitespace().any(|w| {
        matches!(
            w.to_ascii_uppercase().as_str(),
            "GENERATED" | "VIRTUAL" | "PERSISTENT" | "STORED"
        )
    })
}

/// The server's own identity, whatever name or address reached it: `@@server_uuid` where the
/// server has one (MySQL), else `@@hostname:@@port` (MariaDB).
pub fn identity(conn: &mut Conn) -> Result<String, Error> {
    if let Ok(Some(Some(uuid))) = conn.query_first::<Option<String>, _>("SELECT @@server_uuid") {
        if !uuid.is_empty() {
            return Ok(uuid);
        }
    }
    let r: Option<(String, u64)> = conn
        .query_first("SELECT @@hostname, @@port")
        .map_err(sql("reading the server's identity (@@hostname, @@port)"))?;
    let (h, p) = r.unwrap_or_default();
    Ok(format!("{h}:{p}"))
}

/// One foreign key that references a table: a child's columns and the parent's columns they
/// reference, and what a DELETE of the parent does to the child.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForeignKey {
    /// The child's schema.
    pub schema: String,
    /// The child table.
    pub table: String,
    /// The constraint's name.
    pub constraint: String,
    /// `CASCADE`, `SET NULL`, `RESTRICT`, `NO ACTION`, `SET DEFAULT`.
    pub delete_rule: String,
    /// The child's columns, in order.
    pub columns: Vec<String>,
    /// The parent's columns they reference, in order.
    pub references: Vec<String>,
}

/// The foreign keys whose parent is `db`.`table`.
pub fn referencing(conn: &mut Conn, db: &str, table: &str) -> Result<Vec<ForeignKey>, Error> {
    let rows: Vec<(String, String, String, String, String, String)> = conn
        .exec(
            "SELECT k.TABLE_SCHEMA, k.TABLE_NAME, k.CONSTRAINT_NAME, rc.DELETE_RULE, k.COLUMN_NAME, k.REFERENCED_COLUMN_NAME \
             FROM information_schema.KEY_COLUMN_USAGE k \
             JOIN information_schema.REFERENTIAL_CONSTRAINTS rc \
               ON rc.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA AND rc.CONSTRAINT_NAME = k.CONSTRAINT_NAME AND rc.TABLE_NAME = k.TABLE_NAME \
             WHERE k.REFERENCED_TABLE_SCHEMA = ? AND k.REFERENCED_TABLE_NAME = ? \
             ORDER BY k.TABLE_SCHEMA, k.TABLE_NAME, k.CONSTRAINT_NAME, k.ORDINAL_POSITION",
            (db, table),
        )
        .map_err(sql(format!("reading the foreign keys that reference {db}.{table}")))?;
    let mut out: Vec<ForeignKey> = Vec::new();
    for (schema, child, constraint, rule, col, refcol) in rows {
        match out.last_mut() {
            Some(f) if f.schema == schema && f.table == child && f.constraint == constraint => {
                f.columns.push(col);
                f.references.push(refcol);
            }
            _ => out.push(ForeignKey {
                schema,
                table: child,
                constraint,
                delete_rule: rule,
                columns: vec![col],
                references: vec![refcol],
            }),
        }
    }
    Ok(out)
}

/// EXPLAIN of `stmt` with `params` (the first row: a single-table statement has one).
pub fn explain(conn: &mut Conn, stmt: &str, params: Vec<Value>) -> Result<Explain, Error> {
    let what = format!("EXPLAIN {stmt}");
    let rows: Vec<mysql::Row> = if params.is_empty() {
        conn.query(format!("EXPLAIN {stmt}"))
    } else {
        conn.exec(format!("EXPLAIN {stmt}"), params)
    }
    .map_err(sql(what))?;
    let Some(row) = rows.into_iter().next() else {
        return Ok(Explain::default());
    };
    let text = |name: &str| -> Option<String> {
        let i = row
            .columns_ref()
            .iter()
            .position(|c| c.name_str() == name)?;
        match row.as_ref(i)? {
            Value::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
            Value::NULL => None,
            v => Some(crate::value::KeyValue::from_value(v).to_string()),
        }
    };
    Ok(Explain {
        access: text("type").unwrap_or_default(),
        key: text("key"),
        rows: text("rows").and_then(|r| r.parse().ok()),
        extra: text("Extra"),
    })
}

/// Reads the guard's status variables (Threads_running without this connection, which is
/// running the sampling query itself), each replica's lag, and with `history` the InnoDB
/// history list length.
pub fn sample(
    conn: &mut Conn,
    variables: &[String],
    replicas: &mut [Replica],
    history: bool,
) -> Result<Sample, Error> {
    let mut status = BTreeMap::new();
    if !variables.is_empty() {
        let marks = vec!["?"; variables.len()].join(", ");
        let stmt = format!(
            "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ({marks}) \
             UNION ALL SELECT 'DBIO_OWN_RUNNING', COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID() AND COMMAND <> 'Sleep'"
        );
        let params: Vec<Value> = variables
            .iter()
            .map(|v| Value::from(v.to_uppercase()))
            .collect();
        let rows: Vec<(String, String)> = conn
            .exec(stmt, params)
            .map_err(sql("reading the load guard's status variables"))?;
        let own = rows
            .iter()
            .find(|(n, _)| n == "DBIO_OWN_RUNNING")
            .and_then(|(_, v)| v.parse::<f64>().ok())
            .unwrap_or(0.0);
        for (name, value) in &rows {
            let Some(want) = variables.iter().find(|v| v.eq_ignore_ascii_case(name)) else {
                continue;
            };
            let Ok(mut v) = value.trim().parse::<f64>() else {
                continue;
            };
            if want.eq_ignore_ascii_case("Threads_running") {
                v = (v - own).max(0.0);
            }
            status.insert(want.clone(), v);
        }
    }
    let lag = replicas
        .iter_mut()
        .map(|r| (r.name.clone(), r.lag()))
        .collect();
    let history = if history { history_length(conn)? } else { None };
    Ok(Sample {
        status,
        lag,
        history,
    })
}

/// The InnoDB history list length: MariaDB's `Innodb_history_list_length` status variable, or
/// `information_schema.INNODB_METRICS` `trx_rseg_history_len`; `None` when neither reads. A
/// lost or silent connection is an error: its reply may still come and must not be read as the
/// answer to the next statement.
pub fn history_length(conn: &mut Conn) -> Result<Option<u64>, Error> {
    fn keep<T>(e: mysql::Error) -> Result<Option<T>, Error> {
        if crate::conn::lost(&e) {
            Err(sql("reading the InnoDB history list length")(e))
        } else {
            Ok(None)
        }
    }
    let v: Option<Option<String>> = conn
        .query_first(
            "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'INNODB_HISTORY_LIST_LENGTH'",
        )
        .map_or_else(keep, |v| Ok(Some(v)))?;
    if let Some(Some(s)) = v {
        if let Ok(n) = s.trim().parse() {
            return Ok(Some(n));
        }
    }
    let n: Option<Option<Option<u64>>> = conn
        .query_first::<Option<u64>, _>(
            "SELECT `COUNT` FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rseg_history_len'",
        )
        .map_or_else(keep, |v| Ok(Some(v)))?;
    Ok(n.flatten().flatten())
}

/// A replica whose lag the guard watches. The connection is opened on first use and again
/// after a failure; a lag that cannot be read is `None` (the guard then stops the job).
pub struct Replica {
    /// The DSN without its password.
    pub name: String,
    dsn: String,
    tls: Tls,
    net: crate::conn::Net,
    conn: Option<Conn>,
}

impl Replica {
    /// A replica at `dsn` (not connected yet), connected to as `tls` says, with `net`'s
    /// timeouts (a replica that stops answering reads as a lag that cannot be read).
    pub fn new(dsn: &str, tls: &Tls, net: &crate::conn::Net) -> Replica {
        Replica {
            name: redact(dsn),
            dsn: dsn.to_string(),
            tls: tls.clone(),
            net: *net,
            conn: None,
        }
    }

    /// Seconds_Behind_Master (Seconds_Behind_Source on MySQL 8.0.22+) from `SHOW REPLICA
    /// STATUS` (MariaDB 10.5.1+, MySQL 8.0.22+; MySQL 8.4 has no `SHOW SLAVE STATUS`), or from
    /// `SHOW SLAVE STATUS` on servers that refuse the new syntax; `None` when not reachable,
    /// not a replica, or replication is stopped (NULL).
    pub fn lag(&mut self) -> Option<f64> {
        if self.conn.is_none() {
            self.conn = crate::conn::open(&self.dsn, &self.tls, &self.net).ok();
        }
        let conn = self.conn.as_mut()?;
        let rows: Result<Vec<mysql::Row>, _> = match conn.query("SHOW REPLICA STATUS") {
            Err(mysql::Error::MySqlError(_)) => conn.query("SHOW SLAVE STATUS"),
            r => r,
        };
        let Ok(rows) = rows else {
            self.conn = None;
            return None;
        };
        let row = rows.into_iter().next()?;
        let i = row.columns_ref().iter().position(|c| {
            let n = c.name_str();
            n == "Seconds_Behind_Master" || n == "Seconds_Behind_Source"
        })?;
        match row.as_ref(i)? {
            Value::Bytes(b) => std::str::from_utf8(b).ok()?.trim().parse().ok(),
            Value::Int(n) => Some(*n as f64),
            Value::UInt(n) => Some(*n as f64),
            _ => None,
        }
    }
}

/// Whether `e` is a lock wait timeout (1205) or a deadlock (1213): the chunk is retried.
pub fn is_lock_conflict(e: &mysql::Error) -> bool {
    matches!(e, mysql::Error::MySqlError(m) if m.code == 1205 || m.code == 1213)
}

/// What the server says of its memory (`dbio bench --like-server`): `@@large_pages`,
/// `@@innodb_buffer_pool_size`, `@@pid_file` and `host:port`.
pub type MemoryFacts = (Option<String>, Option<u64>, Option<String>, Option<String>);

/// Reads [`MemoryFacts`] (one SELECT).
pub fn memory_facts(conn: &mut Conn) -> Result<MemoryFacts, Error> {
    let row: Option<MemoryFacts> = conn
        .query_first(
            "SELECT @@large_pages, @@innodb_buffer_pool_size, @@pid_file, CONCAT(@@hostname, ':', @@port)",
        )
        .map_err(sql("reading @@large_pages"))?;
    Ok(row.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssl_flags_become_the_connections_tls() {
        let ca = || Some(std::path::PathBuf::from("ca.pem"));
        assert_eq!(Tls::from_flags(None, None).unwrap(), Tls::Dsn);
        assert_eq!(
            Tls::from_flags(None, ca()).unwrap(),
            Tls::VerifyCa(ca()),
            "a CA alone checks the chain"
        );
        assert_eq!(
            Tls::from_flags(Some("verify-identity"), None).unwrap(),
            Tls::VerifyIdentity(None)
        );
        assert_eq!(
            Tls::from_flags(Some("required"), None).unwrap(),
            Tls::Required
        );
        let e = Tls::from_flags(Some("required"), ca()).unwrap_err();
        assert!(e.contains("verify-ca"), "{e}");
        assert!(Tls::from_flags(Some("prefer"), None).is_err());

        let dsn = "mysql://u@127.0.0.1:3306/d?root_cert_path=dsn.pem";
        let o = || opts(dsn).unwrap();
        // Without --ssl-mode the DSN's own TLS parameters stand; --ssl-mode overrides them.
        assert_eq!(
            Tls::Dsn.apply(o()).get_ssl_opts().unwrap().root_cert_path(),
            Some(std::path::Path::new("dsn.pem"))
        );
        assert!(Tls::Disabled.apply(o()).get_ssl_opts().is_none());
        let req = Tls::Required.apply(o());
        let s = req.get_ssl_opts().unwrap();
        assert!(s.accept_invalid_certs() && s.root_cert_path().is_none());
        let v = Tls::VerifyCa(ca()).apply(o());
        let s = v.get_ssl_opts().unwrap();
        assert!(!s.accept_invalid_certs() && s.skip_domain_validation());
        assert_eq!(s.root_cert_path(), Some(std::path::Path::new("ca.pem")));
        let v = Tls::VerifyIdentity(None).apply(o());
        let s = v.get_ssl_opts().unwrap();
        assert!(!s.accept_invalid_certs() && !s.skip_domain_validation());
        assert!(s.root_cert_path().is_none());
    }
}
