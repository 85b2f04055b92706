//! Row data: the formats rows are written in (`innodb rows --format`, `mysql chunk
//! --archive-format`) and the result of `dbio innodb rows` (what was read, written, rejected
//! and dropped). dbio-innodb produces the summary; the exporters in dbio-report render it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// The format of row data: rows to load back into a server, or to read with other tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RowFormat {
    /// SQL statements a server loads: `INSERT INTO ... VALUES (...)`.
    Sql,
    /// Tab-separated values with LOAD DATA INFILE's escaping (`\N` for NULL) after a header
    /// line of column names.
    Tsv,
    /// JSON Lines: a header object, then one object per row.
    Jsonl,
}

impl RowFormat {
    /// Every row format, in the order help texts show them (the first is `innodb rows`'
    /// default).
    pub const ALL: [RowFormat; 3] = [RowFormat::Sql, RowFormat::Tsv, RowFormat::Jsonl];

    /// The name on the command line and in checkpoints (`sql`, `tsv`, `jsonl`).
    pub fn name(self) -> &'static str {
        match self {
            RowFormat::Sql => "sql",
            RowFormat::Tsv => "tsv",
            RowFormat::Jsonl => "jsonl",
        }
    }

    /// One line of help for the format.
    pub fn help(self) -> &'static str {
        match self {
            RowFormat::Sql => "SQL statements to load into a server",
            RowFormat::Tsv => "tab-separated values (LOAD DATA INFILE escaping)",
            RowFormat::Jsonl => "JSON Lines, one object per line",
        }
    }
}

impl fmt::Display for RowFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A row format name that is not one of [`RowFormat::ALL`].
#[derive(Debug, thiserror::Error)]
#[error("unknown row format {0:?}: choose one of sql, tsv, jsonl")]
pub struct UnknownRowFormat(pub String);

impl FromStr for RowFormat {
    type Err = UnknownRowFormat;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RowFormat::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| UnknownRowFormat(s.to_string()))
    }
}

/// An index whose leaf pages `innodb rows` tried against the definition.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Candidate {
    /// Space id.
    pub space_id: u32,
    /// Index id.
    pub index_id: u64,
    /// Leaf pages.
    pub pages: u64,
    /// Records in them.
    pub records: u64,
    /// Records whose values were checked (the first 2000) to choose the index.
    pub sampled: u64,
    /// Of those, the records that passed the plausibility check.
    pub plausible: u64,
    /// Records rejected, by reason (a bad record header anywhere, bad values in the sample).
    pub rejected: BTreeMap<String, u64>,
    /// What the pages say about the index being a table's clustered index.
    pub clustered: Clustered,
}

/// What the pages say about an index being a table's clustered index (the one `innodb rows`
/// decodes), strongest first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Clustered {
    /// Named with --index-id.
    Named,
    /// Its root is the first index page of its single-table tablespace (page 3, or 4 after
    /// MySQL 8's SDI root): the first index created, the clustered one.
    RootPage,
    /// Another index has that root page: a secondary index.
    NotRootPage,
    /// No root page seen; its leaf pages have PAGE_MAX_TRX_ID 0 (kept on secondary index
    /// pages only) and its records a plausible DB_ROLL_PTR where the definition puts it.
    #[default]
    LooksClustered,
    /// No root page seen; a leaf page has a PAGE_MAX_TRX_ID, or its records no plausible
    /// DB_ROLL_PTR: a secondary index.
    LooksSecondary,
}

impl Clustered {
    /// snake_case name, as in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Clustered::Named => "named",
            Clustered::RootPage => "root_page",
            Clustered::NotRootPage => "not_root_page",
            Clustered::LooksClustered => "looks_clustered",
            Clustered::LooksSecondary => "looks_secondary",
        }
    }
}

impl Candidate {
    /// Records that would pass, estimated from the sample: records x plausible / sampled.
    pub fn estimate(&self) -> u64 {
        if self.sampled == 0 {
            return 0;
        }
        (self.records as u128 * self.plausible as u128 / self.sampled as u128) as u64
    }
}

/// What a run of `innodb rows` did (the summary on stderr and in JSON, schema
/// [`crate::doc::INNODB_ROWS`]).
#[derive(Clone, Debug, Default, Serialize)]
pub struct RowsSummary {
    /// Where the definition came from.
    pub definition: String,
    /// The table.
    pub table: String,
    /// Space id of the index decoded.
    pub space_id: Option<u32>,
    /// Index id decoded.
    pub index_id: Option<u64>,
    /// Leaf pages decoded.
    pub pages_decoded: u64,
    /// Older copies of them decoded too (same space id and page number, a lower LSN): their
    /// records go through the newest-version choice, those it keeps are written as deleted.
    pub older_copies: u64,
    /// Records seen in them.
    pub records_seen: u64,
    /// Rows written.
    pub rows_written: u64,
    /// Of them, deleted rows.
    pub deleted_rows_written: u64,
    /// Records rejected by the plausibility check, by reason.
    pub rejected: BTreeMap<String, u64>,
    /// Older versions of a key dropped (the newest LSN wins).
    pub duplicates_dropped: u64,
    /// Plausible rows not written because of the deleted filter.
    pub filtered_out: u64,
    /// Every index tried.
    pub candidates: Vec<Candidate>,
    /// Problems noticed.
    pub warnings: Vec<String>,
    /// SIGINT/SIGTERM stopped the run: the rows written are those of the pages read before.
    pub interrupted: bool,
    /// Set when most records of the index decoded were rejected (purged records MariaDB
    /// zeroed, and records with a BLOB page missing, aside): the definition does not seem to be the one that wrote the pages. Says
    /// which change of a column makes the records fit, when one does, and what to do.
    pub misfit: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_serialize_as_on_the_command_line() {
        for f in RowFormat::ALL {
            assert_eq!(f.name().parse::<RowFormat>().unwrap(), f);
            assert_eq!(
                serde_json::to_string(&f).unwrap(),
                format!("\"{}\"", f.name())
            );
        }
        assert!("csv".parse::<RowFormat>().is_err());
        assert_eq!(RowFormat::ALL[0], RowFormat::Sql);
    }
}
