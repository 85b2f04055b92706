//! The results of `dbio innodb pages` and `dbio innodb grep`, and the InnoDB vocabulary they
//! are written in (page status, checksum algorithm, row format, record). dbio-innodb produces
//! them (and re-exports the vocabulary where its page code uses it); the exporters in
//! dbio-report's `export` render them.

use serde::Serialize;
use std::collections::BTreeMap;

/// A checksum algorithm InnoDB may have written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    /// MariaDB >= 10.5: CRC-32C over `[0, S-4)` stored at `S-4`.
    FullCrc32,
    /// CRC-32C(bytes 4..26) XOR CRC-32C(bytes 38..S-8), stored at 0.
    Crc32,
    /// The legacy fold-based checksum (`ut_fold_binary`), stored at 0 and `S-8`.
    Innodb,
    /// No checksum: the magic 0xDEADBEEF at 0.
    None,
}

impl Algorithm {
    /// The name MariaDB uses for `innodb_checksum_algorithm`.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::FullCrc32 => "full_crc32",
            Algorithm::Crc32 => "crc32",
            Algorithm::Innodb => "innodb",
            Algorithm::None => "none",
        }
    }
}

/// How a found page was recognised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Header and trailer agree and a checksum algorithm validates the page.
    Intact,
    /// Header and trailer agree (the page frame is certain) but no checksum validates: a
    /// torn or damaged page. Reported, never hidden.
    Torn,
    /// Found by structure only (INDEX system records); its trailer does not match, so its
    /// size and end are inferred.
    Heuristic,
}

impl Status {
    /// The name used in text and JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Status::Intact => "intact",
            Status::Torn => "torn",
            Status::Heuristic => "heuristic",
        }
    }
}

/// Row format of an INDEX page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RowFormat {
    /// COMPACT or DYNAMIC (the new record header).
    Compact,
    /// REDUNDANT (the old record header).
    Redundant,
    /// ROW_FORMAT=COMPRESSED (zlib stream; only the page header is readable as is).
    Compressed,
}

impl RowFormat {
    /// The name in output, as in JSON: `COMPACT`, `REDUNDANT`, `COMPRESSED`.
    pub fn name(self) -> &'static str {
        match self {
            RowFormat::Compact => "COMPACT",
            RowFormat::Redundant => "REDUNDANT",
            RowFormat::Compressed => "COMPRESSED",
        }
    }
}

/// One record found by walking a page's record lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Record {
    /// Offset of the record origin within the page (JSON `origin_bytes`).
    #[serde(rename = "origin_bytes")]
    pub origin: u16,
    /// Heap number.
    pub heap_no: u16,
    /// Delete-marked, or on the free (purged) list.
    pub deleted: bool,
    /// Found on the free list (purged: its bytes survive until reused).
    pub purged: bool,
    /// Node pointer record (non-leaf) rather than ordinary.
    pub node_ptr: bool,
}

/// One source in the `innodb pages` report.
#[derive(Clone, Debug, Serialize)]
pub struct SourceRow {
    /// Its path.
    pub path: String,
    /// Its size.
    pub bytes: u64,
    /// Pages found in it.
    pub pages_found: usize,
}

/// One tablespace in the report.
#[derive(Clone, Debug, Serialize)]
pub struct SpaceRow {
    /// Space id.
    pub space_id: u32,
    /// Page size (JSON `page_size_bytes`).
    #[serde(rename = "page_size_bytes")]
    pub page_size: u32,
    /// "fsp_flags" (page 0 found) or "checksum" (inferred from the pages found).
    pub page_size_from: &'static str,
    /// Pages found.
    pub pages: usize,
}

/// Pages per checksum status.
#[derive(Serialize, Default, Clone, Debug, PartialEq, Eq)]
pub struct StatusCounts {
    /// Intact pages.
    pub intact: usize,
    /// Torn pages.
    pub torn: usize,
    /// Pages found by structure only.
    pub heuristic: usize,
}

impl StatusCounts {
    /// Counts one page of status `s`.
    pub fn add(&mut self, s: Status) {
        match s {
            Status::Intact => self.intact += 1,
            Status::Torn => self.torn += 1,
            Status::Heuristic => self.heuristic += 1,
        }
    }
}

/// One index written to a page file.
#[derive(Clone, Debug, Serialize)]
pub struct IndexRow {
    /// Space id.
    pub space_id: u32,
    /// Index id.
    pub index_id: u64,
    /// Table name from the dictionary.
    pub table: Option<String>,
    /// Index name from the dictionary.
    pub index: Option<String>,
    /// The dictionary rows naming it are delete-marked or purged (DROP TABLE/DATABASE).
    pub dropped: bool,
    /// Row format.
    pub format: RowFormat,
    /// Pages written.
    pub pages: usize,
    /// User records on leaf pages.
    pub records: u64,
    /// B-tree levels.
    pub levels: u16,
    /// Delete-marked records on leaf pages.
    pub deleted_records: u64,
    /// Pages per checksum status.
    pub checksum: StatusCounts,
    /// The page file, relative to the output directory.
    pub file: String,
}

/// Pages written one file per page: BLOB/LOB pages, and MariaDB page_compressed pages
/// (written as found, still compressed).
#[derive(Clone, Debug, Serialize)]
pub struct PageFileRow {
    /// Space id.
    pub space_id: u32,
    /// "BLOB" or "COMPRESSED".
    pub kind: &'static str,
    /// Pages written.
    pub pages: usize,
    /// The directory, relative to the output directory.
    pub dir: String,
}

/// A table named by the dictionary (SYS_TABLES/SYS_INDEXES) read from the sources.
#[derive(Clone, Debug, Serialize)]
pub struct DictTable {
    /// Table id.
    pub table_id: u64,
    /// `db/table`.
    pub name: String,
    /// Space id.
    pub space_id: u32,
    /// Delete-marked or purged.
    pub dropped: bool,
    /// Its indexes.
    pub indexes: Vec<DictIndex>,
}

/// An index named by the dictionary.
#[derive(Clone, Debug, Serialize)]
pub struct DictIndex {
    /// Index id.
    pub index_id: u64,
    /// Index name.
    pub name: String,
    /// Root page number.
    pub root_page: u32,
    /// Pages of this index found in the sources.
    pub pages_found: usize,
}

/// The result of `innodb pages` (JSON schema `dbio.innodb.pages/1`).
#[derive(Clone, Debug, Serialize)]
pub struct PagesReport {
    /// The output directory.
    pub out_dir: String,
    /// One row per source.
    pub sources: Vec<SourceRow>,
    /// Bytes scanned (JSON `scanned_bytes`): all of every source, or, when a signal stopped
    /// the scan, up to where it stopped.
    #[serde(rename = "scanned_bytes")]
    pub bytes_scanned: u64,
    /// Bytes of all sources.
    pub source_bytes: u64,
    /// Scan time.
    pub elapsed_s: f64,
    /// Scan rate.
    pub bytes_per_s: f64,
    /// Pages found (duplicates included).
    pub pages_found: usize,
    /// Pages in the output directory (written by this run, or kept from a previous run into
    /// the same directory).
    pub pages_written: usize,
    /// Of them, pages a previous run had written, kept.
    pub pages_kept: usize,
    /// Older copies not written.
    pub duplicates_dropped: usize,
    /// Kept pages per checksum algorithm (or status when none validates).
    pub checksum_algorithms: BTreeMap<String, usize>,
    /// One row per tablespace.
    pub spaces: Vec<SpaceRow>,
    /// One row per index.
    pub indexes: Vec<IndexRow>,
    /// Single-page files.
    pub page_files: Vec<PageFileRow>,
    /// Pages of other types (not written), per type.
    pub other_pages: BTreeMap<String, usize>,
    /// Every table the dictionary names (dropped ones too), with its indexes.
    pub dictionary: Vec<DictTable>,
    /// Problems noticed.
    pub warnings: Vec<String>,
    /// SIGINT/SIGTERM stopped the run: what was written is listed, the rest was not done.
    pub interrupted: bool,
    /// What stopped the writing (a full filesystem), when something did: the pages listed in
    /// manifest.json are whole, and a run into the same directory continues after them.
    pub write_error: Option<String>,
}

/// A search pattern of `innodb grep`.
#[derive(Clone, Debug, Serialize)]
pub struct PatternRow {
    /// What it stands for.
    pub label: String,
    /// Its bytes in hex.
    pub hex: String,
}

/// One hit of `innodb grep`.
#[derive(Clone, Debug, Serialize)]
pub struct HitRow {
    /// Source path.
    pub source: String,
    /// Offset in the source (JSON `offset_bytes`).
    #[serde(rename = "offset_bytes")]
    pub offset: u64,
    /// Label of the pattern.
    pub pattern: String,
    /// The page holding it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<HitPage>,
    /// Hex dump around it (`context` > 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_hex: Option<String>,
}

/// The page holding a hit.
#[derive(Clone, Debug, Serialize)]
pub struct HitPage {
    /// Offset of the page in the source (JSON `page_offset_bytes`).
    #[serde(rename = "page_offset_bytes")]
    pub page_offset_in_source: u64,
    /// Page size (JSON `page_size_bytes`).
    #[serde(rename = "page_size_bytes")]
    pub page_size: u32,
    /// Space id.
    pub space_id: u32,
    /// Page number.
    pub page_no: u32,
    /// Page type name.
    pub page_type: String,
    /// Index id (INDEX pages).
    pub index_id: Option<u64>,
    /// B-tree level (INDEX pages).
    pub level: Option<u16>,
    /// How the page was recognised.
    pub status: Status,
    /// The checksum algorithm that validates it.
    pub checksum: Option<Algorithm>,
    /// Offset of the hit in the page (JSON `offset_in_page_bytes`).
    #[serde(rename = "offset_in_page_bytes")]
    pub offset_in_page: u32,
    /// The record holding it.
    pub record: Option<Record>,
}

/// The end of an `innodb grep` search.
#[derive(Clone, Debug, Serialize)]
pub struct GrepSummary {
    /// The patterns.
    pub patterns: Vec<PatternRow>,
    /// `--all-in` mode.
    pub all_in: Option<String>,
    /// Named as in `--format json`, where `hits` is the array of hits.
    pub hit_count: u64,
    /// Hits inside a recognised page.
    pub hits_in_pages: u64,
    /// Bytes searched (JSON `searched_bytes`).
    #[serde(rename = "searched_bytes")]
    pub bytes_searched: u64,
    /// Search time.
    pub elapsed_s: f64,
    /// Search rate.
    pub bytes_per_s: f64,
    /// `--max-count` was reached: the search stopped there.
    pub max_count_reached: bool,
    /// SIGINT/SIGTERM stopped the search: the hits before it were all printed.
    pub interrupted: bool,
}

/// One moment of an `innodb grep` run as its streaming exporters see it: the start, each hit
/// as it is found, the end. Each exporter writes what the event adds to its output, so hits
/// reach the reader while the search goes on.
#[derive(Clone, Copy, Debug)]
pub enum GrepEvent<'a> {
    /// Before the first hit.
    Start {
        /// The patterns searched for.
        patterns: &'a [PatternRow],
        /// The `--all-in` mode (`record` or `page`).
        all_in: Option<&'a str>,
    },
    /// Hit number `n` (0 first).
    Hit {
        /// Its number.
        n: u64,
        /// The hit.
        hit: &'a HitRow,
    },
    /// The search ended.
    End(&'a GrepSummary),
}
