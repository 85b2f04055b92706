//! dbio's work on a live MySQL or MariaDB server, on the synchronous `mysql` crate.
//!
//! [`job`] runs a chunked delete, archive or update: a keyset walk over the primary key (or a
//! named unique key) in bounded ranges, each chunk its own short transaction, sized to take a
//! target time ([`sizer`]), followed by a sleep proportional to it, paused by a load guard
//! with hysteresis ([`guard`]) and a time window ([`window`]), checkpointed after every chunk
//! ([`state`]), archived rows flushed to disk before their DELETE commits ([`archive`]).
//! The decisions are pure code with unit tests; [`server`] holds the thin SQL.
//!
//! This crate never prints and never exits.
#![deny(missing_docs)]

pub mod advise;
pub mod archive;
pub mod conn;
pub mod dsn;
pub mod fk;
pub mod guard;
pub mod job;
pub mod key;
pub mod marker;
pub mod server;
pub mod sizer;
pub mod stalk;
pub mod state;
pub mod status;
pub mod value;
pub mod window;

use std::path::PathBuf;

/// The client's error as a person reads it: the mysql crate shows I/O and TLS failures as
/// `CodecError { IO error: `...' }`; the message inside is what matters.
pub(crate) fn client_error(e: &mysql::Error) -> String {
    match e {
        mysql::Error::IoError(io) => io.to_string(),
        mysql::Error::CodecError(c) => match std::error::Error::source(c) {
            Some(io) => io.to_string(),
            None => c.to_string(),
        },
        other => other.to_string(),
    }
}

/// Everything that can go wrong in a job.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The DSN does not parse.
    #[error("DSN '{dsn}' is not mysql://user[:password]@host[:port]/database: {message}")]
    Dsn {
        /// The DSN, password removed.
        dsn: String,
        /// What the parser said.
        message: String,
    },
    /// Connecting failed.
    #[error("cannot connect to {dsn}: {}", client_error(.cause))]
    Connect {
        /// The DSN, password removed.
        dsn: String,
        /// The client's error.
        cause: mysql::Error,
    },
    /// The server stopped answering: nothing came for `--net-timeout` (see [`conn`]).
    #[error(transparent)]
    NotAnswering(Box<Stalled>),
    /// A statement failed.
    #[error("{what} failed")]
    Sql {
        /// What was being done.
        what: String,
        /// The server's or the client's error.
        #[source]
        source: mysql::Error,
    },
    /// No database in the DSN nor in the table name.
    #[error("no database: give it in the DSN (mysql://host/DB) or as --table DB.TABLE")]
    NoDatabase,
    /// The table does not exist.
    #[error("table {0} does not exist")]
    NoTable(String),
    /// The table is not InnoDB: no transactions, no row locks.
    #[error(
        "table {table} uses engine {engine}: chunked jobs need InnoDB (transactions, row locks)"
    )]
    Engine {
        /// The table.
        table: String,
        /// Its engine.
        engine: String,
    },
    /// The key cannot be walked.
    #[error(transparent)]
    Key(#[from] key::KeyError),
    /// The condition or the SET list is refused.
    #[error(transparent)]
    SqlText(#[from] key::SqlTextError),
    /// EXPLAIN shows the chunk's statement is not a range scan of the key.
    #[error("EXPLAIN of one chunk's statement shows access type '{access}' on index {key} ({rows} rows estimated), not a range scan of the walked key {want}: the chunks would not be bounded by the key range, so nothing was done. {hint}")]
    NotRange {
        /// What the facts point at, and what to do.
        hint: String,
        /// EXPLAIN's type.
        access: String,
        /// EXPLAIN's key.
        key: String,
        /// The key walked.
        want: String,
        /// EXPLAIN's rows.
        rows: String,
    },
    /// Another copy of the job holds its lock.
    #[error("another dbio mysql chunk job on this table is running (it holds the server lock '{0}'): one job per table at a time, not starting a second one")]
    Locked(String),
    /// The archive file.
    #[error("archive {path}: {what}")]
    Archive {
        /// The archive.
        path: PathBuf,
        /// What failed.
        what: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The archive is shorter than its checkpoint says.
    #[error("archive {path} holds {have} bytes, its checkpoint says {want}: it is not this job's archive or it lost rows; not resuming")]
    ArchiveShort {
        /// The archive.
        path: PathBuf,
        /// Its length.
        have: u64,
        /// The checkpoint's.
        want: u64,
    },
    /// The checkpoint file.
    #[error("checkpoint {path}: {what}")]
    State {
        /// The file.
        path: PathBuf,
        /// What failed.
        what: &'static str,
        /// The cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A checkpoint of another format version.
    #[error("checkpoint {path} has format version {version}; this dbio reads version 2 (version 1, before the archive identity and the commit marker, is not resumed: finish that job with the dbio that started it, or remove the checkpoint and start the job anew)")]
    StateVersion {
        /// The file.
        path: PathBuf,
        /// Its version.
        version: u32,
    },
    /// A checkpoint exists and neither --resume nor a fresh start was asked for.
    #[error(
        "checkpoint {0} exists: continue the job with --resume, or remove the file to start over"
    )]
    StateExists(PathBuf),
    /// --resume with a checkpoint of another job.
    #[error(
        "checkpoint {0} belongs to another job (other table, condition or action): not resuming"
    )]
    StateMismatch(PathBuf),
    /// --resume without a checkpoint.
    #[error("checkpoint {0} does not exist: nothing to resume (run without --resume to start)")]
    NoState(PathBuf),
    /// The archive exists but no checkpoint says it is this job's.
    #[error("archive {0} exists: dbio does not overwrite a file; choose another --archive path (or --resume the job that wrote it)")]
    ArchiveExists(PathBuf),
    /// A chunk was in flight when the last run died and its commit marker cannot be read:
    /// whether it committed cannot be told from the rows.
    #[error("the last run died while committing the chunk after {after} up to {upper}, and its commit marker cannot be read ({why}): whether it committed cannot be told; check those rows (and the archive's last chunk), then resume with --pending redo or --pending skip")]
    PendingUnknown {
        /// The lower bound.
        after: String,
        /// The upper bound.
        upper: String,
        /// Why the marker cannot be read.
        why: String,
    },
    /// A resume names another archive than the checkpoint's, or the file changed.
    #[error("archive {path}: {reason}; not resuming (nothing was changed, the file is untouched)")]
    ArchiveIdentity {
        /// The archive named.
        path: PathBuf,
        /// What does not match.
        reason: String,
    },
    /// Deleting from the table would also delete or change rows of other tables through
    /// foreign keys.
    #[error("deleting rows of {table} also {children}, and nothing would archive or report them: give --archive-children to archive the cascaded rows in each chunk's transaction (SQL archive), or --allow-cascade to let the server delete them unarchived; the dry run lists them")]
    Cascade {
        /// The table.
        table: String,
        /// What happens to which tables.
        children: String,
    },
    /// --archive-children where it cannot be done.
    #[error("--archive-children: {0}")]
    ArchiveChildren(String),
    /// The commit marker table exists but is not dbio's.
    #[error("commit marker table {table}: {what}: it must be dbio's own InnoDB table (job, token, chunks, upper_key, updated); name another with --marker-table")]
    MarkerTable {
        /// The table.
        table: String,
        /// What is wrong.
        what: String,
    },
    /// The archive's row count and the DELETE's differ.
    #[error("chunk up to {upper}: archived {archived} rows but the DELETE removed {deleted}; rolled back (another session changed rows in the range)")]
    ArchiveMismatch {
        /// The chunk's upper bound.
        upper: String,
        /// Rows archived.
        archived: u64,
        /// Rows the DELETE removed.
        deleted: u64,
    },
    /// A chunk kept failing with lock waits or deadlocks.
    #[error("chunk after {after}: {attempts} attempts failed with lock wait timeouts or deadlocks (--retries)")]
    Retries {
        /// The lower bound.
        after: String,
        /// Attempts made.
        attempts: u32,
        /// The last error.
        #[source]
        source: mysql::Error,
    },
}

/// Removes the password from a DSN for messages and records.
pub fn redact(dsn: &str) -> String {
    let Some((scheme, rest)) = dsn.split_once("://") else {
        return dsn.to_string();
    };
    let (auth, host) = match rest.rsplit_once('@') {
        Some((a, h)) => (a, h),
        None => return dsn.to_string(),
    };
    match auth.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => dsn.to_string(),
    }
}

/// A server that stopped answering, with what was in flight and where the job stands.
#[derive(Debug, thiserror::Error)]
#[error("the server at {server} sent nothing for {} (--net-timeout) while {what}: it is stopped, overloaded or cut off by the network. {held}", dbio_schema::units::format_duration(*.timeout))]
pub struct Stalled {
    /// `host:port`.
    pub server: String,
    /// [`Net::timeout`].
    pub timeout: std::time::Duration,
    /// What was in flight (`the chunk after (4500): the chunk's statement`).
    pub what: String,
    /// What the checkpoint holds and what `--resume` does with it.
    pub held: String,
}

#[cfg(test)]
mod tests {
    #[test]
    fn redacts_passwords() {
        assert_eq!(
            super::redact("mysql://u:pw@h:3306/d"),
            "mysql://u:***@h:3306/d"
        );
        assert_eq!(super::redact("mysql://u@h/d"), "mysql://u@h/d");
        assert_eq!(super::redact("mysql://h/d"), "mysql://h/d");
    }
}
