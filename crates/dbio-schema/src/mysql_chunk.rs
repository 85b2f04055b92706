//! `dbio mysql chunk`'s result: the plan (always), and the run's statistics (with --execute).

use serde::{Deserialize, Serialize};

/// One chunked job's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChunkResult {
    /// The database.
    pub database: String,
    /// The table.
    pub table: String,
    /// `delete`, `archive`, `archive+delete` or `update`.
    pub action: String,
    /// The `--where` condition (absent: every row).
    pub condition: Option<String>,
    /// Whether the job changed anything (`--execute`); false is a dry run.
    pub execute: bool,
    /// What the job does, as checked before the first chunk.
    pub plan: ChunkPlan,
    /// The run (absent in a dry run).
    pub run: Option<ChunkRun>,
}

/// The plan: key, EXPLAIN, estimates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChunkPlan {
    /// The index walked (`PRIMARY`).
    pub key_name: String,
    /// Its columns.
    pub key_columns: Vec<String>,
    /// The statement of one chunk, with `?` for the bounds.
    pub statement: String,
    /// EXPLAIN of the first chunk's statement.
    pub explain: Explain,
    /// The server's estimate of the table's rows (information_schema.TABLES).
    pub table_rows_estimate: u64,
    /// EXPLAIN's estimate of the rows read to find those the condition matches: the matching
    /// rows when an index serves the condition, else the whole table (an upper bound).
    pub condition_rows_estimate: u64,
    /// The first chunk's size, in key rows.
    pub start_chunk_rows: u64,
    /// Key rows left to walk (estimate) / the first chunk's size.
    pub chunks_estimate: u64,
    /// Chunks x chunk time x (1 + sleep coefficient), before any pause.
    pub time_estimate_s: f64,
    /// The target chunk time.
    pub chunk_time_s: f64,
    /// The sleep coefficient.
    pub sleep_coef: f64,
    /// The greatest key when the job began: the walk ends there (later rows are not touched).
    pub end_key: Vec<String>,
    /// With --resume: the last committed chunk's upper bound.
    pub resume_after: Option<Vec<String>>,
    /// The checkpoint file.
    pub state_file: String,
    /// The commit marker table (`db.name`) each archive or update chunk's transaction writes
    /// its token into, so a resumed job can tell whether a chunk in flight committed (absent:
    /// the job needs none).
    pub marker_table: Option<String>,
    /// Generated columns: read, but left out of the archive (the server computes them again
    /// when the rows are loaded back).
    pub generated_columns: Vec<String>,
    /// Tables a DELETE of the job's rows also deletes or changes rows of, through foreign
    /// keys, breadth first.
    pub cascades: Vec<Cascade>,
}

/// A foreign key through which a DELETE of the job's rows reaches another table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cascade {
    /// The child table, `db.table`.
    pub table: String,
    /// The table whose rows it references, `db.table`.
    pub parent: String,
    /// The constraint's name.
    pub constraint: String,
    /// ON DELETE: `CASCADE` (the child's rows are deleted), `SET NULL`/`SET DEFAULT` (changed),
    /// `RESTRICT`/`NO ACTION` (the DELETE fails while they exist).
    pub delete_rule: String,
    /// The child's columns.
    pub columns: Vec<String>,
    /// 1: references the job's table; 2: references a depth-1 table; ...
    pub depth: u32,
    /// The server's estimate of the child's rows (information_schema.TABLES).
    pub rows_estimate: u64,
    /// What the job does about it: `archived` (--archive-children), `allowed`
    /// (--allow-cascade), `refused` (the job will not run), `none` (the rule changes nothing).
    pub handling: String,
}

/// One row of EXPLAIN.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Explain {
    /// The access type (`range`).
    #[serde(rename = "type")]
    pub access: String,
    /// The index used.
    pub key: Option<String>,
    /// Estimated rows examined.
    pub rows: Option<u64>,
    /// Extra.
    pub extra: Option<String>,
}

/// The run's statistics.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChunkRun {
    /// `finished`, `interrupted` (Ctrl-C), `run_time` (--run-time reached) or `stopped` (the
    /// guard stopped it: see `stop_reason`).
    pub outcome: String,
    /// Why the guard stopped the job.
    pub stop_reason: Option<String>,
    /// Chunks committed (by this run).
    pub chunks: u64,
    /// Key rows walked.
    pub rows_walked: u64,
    /// Rows deleted or updated.
    pub rows_affected: u64,
    /// Rows written to the archive.
    pub rows_archived: u64,
    /// Chunks retried after a lock wait timeout or deadlock.
    pub retries: u64,
    /// Wall time of the run.
    pub elapsed_s: f64,
    /// Time inside chunks.
    pub working_s: f64,
    /// Time sleeping after chunks (sleep coefficient x chunk time).
    pub sleeping_s: f64,
    /// Time paused by the guard or the window.
    pub paused_s: f64,
    /// Rows affected (archived when nothing is deleted) per second of wall time.
    pub rows_per_s: f64,
    /// Smallest chunk, in key rows.
    pub chunk_rows_min: u64,
    /// Largest chunk, in key rows.
    pub chunk_rows_max: u64,
    /// The last chunk's size.
    pub chunk_rows_last: u64,
    /// Median chunk time.
    pub chunk_time_p50_ms: f64,
    /// Longest chunk time.
    pub chunk_time_max_ms: f64,
    /// Every pause, in order.
    pub pauses: Vec<Pause>,
    /// The last committed chunk's upper bound.
    pub last_key: Option<Vec<String>>,
    /// Totals over every run of this job (resumed runs included).
    pub job_rows_affected: u64,
    /// The archive file and its size.
    pub archive_file: Option<String>,
    /// The archive's size after the last committed chunk.
    pub archive_bytes: Option<u64>,
    /// Rows of child tables archived with their parents (--archive-children).
    pub child_rows_archived: u64,
}

/// One pause.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pause {
    /// `load`, `critical_load`, `replica_lag`, `history`, `window` or `server_not_answering`.
    pub cause: String,
    /// What was seen (`Threads_running=31 >= max-load 25 (resumes below 12.5)`).
    pub message: String,
    /// The variable, replica or window.
    pub subject: String,
    /// The value that caused the pause (absent for the window).
    pub value: Option<f64>,
    /// The mark it crossed (absent for the window).
    pub limit: Option<f64>,
    /// Seconds into the run when it began.
    pub at_s: f64,
    /// How long it lasted.
    pub duration_s: f64,
}
