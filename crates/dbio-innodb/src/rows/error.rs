//! Why decoding rows failed.

use crate::recover::RecoverError;

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RowsError {
    /// Reading the sources failed.
    #[error(transparent)]
    Recover(#[from] RecoverError),
    /// No leaf page of any index fits the definition.
    #[error("no index in the sources holds records that fit the definition of {table} ({tried}); {advice}; or name the index with --index-id")]
    NoIndex {
        /// The table.
        table: String,
        /// What was tried.
        tried: String,
        /// What seems wrong with the definition, for the index with the most records, and
        /// what to do.
        advice: String,
    },
    /// Several indexes hold records that fit the definition and the pages do not tell which
    /// is the clustered index (or say that none is).
    #[error("the clustered index of {table} cannot be told from the pages: {why}; name it with --index-id (and --space-id), or give a definition source that names it")]
    Ambiguous {
        /// The table.
        table: String,
        /// The candidates.
        why: String,
    },
    /// Writing a row failed.
    #[error("writing rows: {0}")]
    Write(#[source] std::io::Error),
}
