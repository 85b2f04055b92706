//! The commit marker: one row per job in a dbio-owned InnoDB table (by default
//! `dbio_chunk_marker` in the job's schema), written in the same transaction as each archive
//! or update chunk's statement. The checkpoint saved just before COMMIT holds the chunk's
//! token; a resumed job whose checkpoint still holds it reads the job's marker row: the token
//! there means the chunk committed, any other value (or no row) that it rolled back. The
//! application cannot fake it (it never writes this table), unlike a probe of the chunk's
//! rows, which a re-inserted key defeats.

use crate::key::quote_ident;
use crate::Error;
use mysql::prelude::Queryable;
use mysql::Conn;

/// The marker table's default name, in the job's schema.
pub const DEFAULT_TABLE: &str = "dbio_chunk_marker";

/// The columns dbio's marker table has, in order.
const COLUMNS: [&str; 5] = ["job", "token", "chunks", "upper_key", "updated"];

/// A marker table: `db`.`name`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    /// Its schema.
    pub db: String,
    /// Its name.
    pub name: String,
}

impl Marker {
    /// `--marker-table NAME` or `DB.NAME`; none: [`DEFAULT_TABLE`] in `job_db`.
    pub fn new(spec: Option<&str>, job_db: &str) -> Marker {
        match spec.map(|s| s.split_once('.').unwrap_or((job_db, s))) {
            Some((db, name)) => Marker {
                db: db.to_string(),
                name: name.to_string(),
            },
            None => Marker {
                db: job_db.to_string(),
                name: DEFAULT_TABLE.to_string(),
            },
        }
    }

    /// `` `db`.`name` ``.
    pub fn qualified(&self) -> String {
        format!("{}.{}", quote_ident(&self.db), quote_ident(&self.name))
    }

    /// `db.name` for people.
    pub fn display(&self) -> String {
        format!("{}.{}", self.db, self.name)
    }

    fn sql(&self, what: &str) -> impl FnOnce(mysql::Error) -> Error {
        let what = format!("{what} (commit marker table {})", self.display());
        move |source| Error::Sql { what, source }
    }

    /// Creates the table when it is missing, and checks that an existing one is dbio's: an
    /// InnoDB table (a non-transactional marker would say "committed" for a rolled-back
    /// chunk) with dbio's columns.
    pub fn ensure(&self, conn: &mut Conn) -> Result<(), Error> {
        conn.query_drop(format!(
            "CREATE TABLE IF NOT EXISTS {} (\
             job CHAR(16) NOT NULL PRIMARY KEY, \
             token BIGINT UNSIGNED NOT NULL, \
             chunks BIGINT UNSIGNED NOT NULL, \
             upper_key VARCHAR(2048) NOT NULL, \
             updated TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)\
             ) ENGINE=InnoDB COMMENT='dbio mysql chunk: one row per running job, written in each chunk''s transaction; a finished job removes its row'",
            self.qualified()
        ))
        .map_err(self.sql("creating it"))?;
        let engine: Option<String> = conn
            .exec_first(
                "SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
                (&self.db, &self.name),
            )
            .map_err(self.sql("reading its engine"))?;
        let bad = |what: String| Error::MarkerTable {
            table: self.display(),
            what,
        };
        match engine {
            Some(e) if e.eq_ignore_ascii_case("InnoDB") => {}
            Some(e) => return Err(bad(format!("its engine is {e}, not InnoDB"))),
            None => return Err(bad("it is not a base table".into())),
        }
        let cols: Vec<String> = conn
            .exec(
                "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION",
                (&self.db, &self.name),
            )
            .map_err(self.sql("reading its columns"))?;
        if cols.iter().map(String::as_str).ne(COLUMNS) {
            return Err(bad(format!("its columns are ({})", cols.join(", "))));
        }
        Ok(())
    }

    /// Records `token` for `job`, inside the chunk's open transaction.
    pub fn write(
        &self,
        conn: &mut Conn,
        job: &str,
        token: u64,
        chunks: u64,
        upper: &str,
    ) -> Result<(), Error> {
        conn.exec_drop(
            format!(
                "INSERT INTO {} (job, token, chunks, upper_key) VALUES (?, ?, ?, ?) \
                 ON DUPLICATE KEY UPDATE token = VALUES(token), chunks = VALUES(chunks), upper_key = VALUES(upper_key)",
                self.qualified()
            ),
            (job, token, chunks, truncate(upper, 2048)),
        )
        .map_err(self.sql("writing the chunk's marker"))
    }

    /// The token of `job`'s last committed chunk (none: no row).
    pub fn read(&self, conn: &mut Conn, job: &str) -> Result<Option<u64>, Error> {
        conn.exec_first(
            format!("SELECT token FROM {} WHERE job = ?", self.qualified()),
            (job,),
        )
        .map_err(self.sql("reading the job's marker"))
    }

    /// Removes `job`'s row (the job finished).
    pub fn clear(&self, conn: &mut Conn, job: &str) -> Result<(), Error> {
        conn.exec_drop(
            format!("DELETE FROM {} WHERE job = ?", self.qualified()),
            (job,),
        )
        .map_err(self.sql("removing the finished job's marker"))
    }
}

/// At most `n` bytes of `s`, cut at a character boundary.
fn truncate(s: &str, n: usize) -> &str {
    if s.len() <= n {
        return s;
    }
    let mut i = n;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    &s[..i]
}

/// A token no earlier chunk of any job used: 64 bits from the kernel's random source, or (if
/// that cannot be read) from the clock and the process id.
pub fn token() -> u64 {
    let mut b = [0u8; 8];
    if dbio_sys::os::random_bytes(&mut b) {
        return u64::from_le_bytes(b);
    }
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    t ^ (u64::from(std::process::id()) << 48)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_default_to_the_jobs_schema() {
        assert_eq!(
            Marker::new(None, "shop").qualified(),
            "`shop`.`dbio_chunk_marker`"
        );
        assert_eq!(Marker::new(Some("m"), "shop").display(), "shop.m");
        assert_eq!(Marker::new(Some("ops.m"), "shop").display(), "ops.m");
        assert_ne!(token(), token());
        assert_eq!(truncate("aé", 2), "a");
        assert_eq!(truncate("ab", 5), "ab");
    }
}
