//! `dbio mysql stalk`: the index of one capture (`capture.json`, [`Capture`]) and the report
//! read back from a capture directory ([`StalkReport`]), a dbio capture or one pt-stalk made.

use serde::{Deserialize, Serialize};

/// `DIR/<prefix>/capture.json`: what one collection holds and why it was made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Capture {
    /// The file-name prefix of every file of the capture (pt-stalk's, `2026_11_28_02_39_26`).
    pub prefix: String,
    /// The host the stalker ran on.
    pub hostname: String,
    /// The server, `host:port`.
    pub server: String,
    /// The trigger and the check that fired it.
    pub trigger: TriggerRecord,
    /// Seconds between samples.
    pub interval_s: f64,
    /// The lead-up kept in memory (`--pre`), in seconds.
    pub pre_s: f64,
    /// The collection asked for (`--collect`), in seconds.
    pub collect_s: f64,
    /// Epoch seconds of the first sample of the lead-up.
    pub first_sample_epoch_s: f64,
    /// Epoch seconds of the last sample.
    pub last_sample_epoch_s: f64,
    /// Samples of the lead-up written out.
    pub pre_samples: u64,
    /// Samples taken while collecting.
    pub collect_samples: u64,
    /// Bytes of memory the lead-up ring held when the trigger fired.
    pub pre_ring_bytes: u64,
    /// Why the collection ended before `--collect` (SIGTERM, low disk, lost server), if it did.
    pub stopped_early: Option<String>,
    /// The files, with their size when the collection ended.
    pub files: Vec<CaptureFile>,
    /// What failed during the collection and was skipped (a lost connection, a query refused).
    pub errors: Vec<String>,
}

/// The trigger and the check that fired it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TriggerRecord {
    /// `--trigger` as given.
    pub expression: String,
    /// `--cycles`.
    pub cycles: u32,
    /// Epoch seconds of the check that fired.
    pub fired_epoch_s: f64,
    /// The value of each comparison in that check (`null`: not available).
    pub values: Vec<TriggerValue>,
}

/// One comparison's value in the firing check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TriggerValue {
    /// The comparison (`Threads_running>50`).
    pub comparison: String,
    /// Its operand's value.
    pub value: Option<f64>,
}

/// One file of a capture.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaptureFile {
    /// The name, in the capture directory.
    pub name: String,
    /// Its size in bytes.
    pub size_bytes: u64,
    /// What it holds.
    pub holds: String,
}

/// `dbio mysql stalk --report DIR`: a capture read back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StalkReport {
    /// The directory read.
    pub capture_dir: String,
    /// `dbio` (a capture.json was found) or `pt-stalk`.
    pub made_by: String,
    /// The file-name prefix.
    pub prefix: String,
    /// capture.json, for a dbio capture.
    pub capture: Option<Capture>,
    /// pt-stalk's `-trigger` file, for a pt-stalk capture.
    pub pt_trigger: Option<String>,
    /// Processlist and status samples, on one time axis (seconds from the trigger; a
    /// pt-stalk capture has no lead-up: its first sample is 0).
    pub timeline: Vec<TimelinePoint>,
    /// Who did it: what ran in the collection against the lead-up.
    pub attribution: Attribution,
    /// What could not be read and was skipped.
    pub notes: Vec<String>,
}

/// One sample time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimelinePoint {
    /// Seconds from the trigger (negative: the lead-up).
    pub t_s: f64,
    /// Threads_running (SHOW GLOBAL STATUS), when sampled.
    pub threads_running: Option<f64>,
    /// Questions per second since the sample before.
    pub questions_per_s: Option<f64>,
    /// Active threads in the processlist (not Sleep, not daemons, not the stalker).
    pub active_threads: Option<u64>,
    /// The busiest device over the interval before (diskstats), its %util and await.
    pub busiest_device: Option<String>,
    /// That device's %util.
    pub util_pct: Option<f64>,
    /// That device's await in ms.
    pub await_ms: Option<f64>,
}

/// The attribution: active processlist threads counted per sample and grouped, the collection
/// against the lead-up.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attribution {
    /// How it was made (`processlist sampling`).
    pub method: String,
    /// Processlist samples in the lead-up.
    pub pre_samples: u64,
    /// Processlist samples in the collection.
    pub collect_samples: u64,
    /// By user, host (without port), database and statement digest, the largest share of the
    /// collection first.
    pub statements: Vec<AttributionRow>,
    /// By user alone.
    pub users: Vec<AttributionRow>,
    /// By statement time (performance_schema digests), when the server collects them: null
    /// with performance_schema OFF, and for captures made by pt-stalk.
    #[serde(default)]
    pub digests: Option<DigestAttribution>,
}

/// Statement time by digest (performance_schema.events_statements_summary_by_digest): the
/// collection (trigger to end) against the lead-up (a baseline about `--pre` before the
/// trigger, to the trigger).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DigestAttribution {
    /// Seconds from the baseline to the trigger.
    pub pre_window_s: f64,
    /// Seconds from the trigger to the end of the collection.
    pub collect_window_s: f64,
    /// Statement time of every digest in the lead-up, in seconds.
    pub pre_statement_time_s: f64,
    /// Statement time of every digest in the collection, in seconds.
    pub collect_statement_time_s: f64,
    /// The largest share of the collection's statement time first (at most 20).
    pub digests: Vec<DigestShare>,
}

/// One digest's share of the statement time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DigestShare {
    /// SCHEMA_NAME (empty: none).
    pub schema: String,
    /// DIGEST (the server's hash of the normalized statement).
    pub digest: String,
    /// DIGEST_TEXT: the statement with its literals replaced by `?`.
    pub text: String,
    /// Calls completed in the collection.
    pub collect_calls: u64,
    /// Statement time in the collection, in seconds.
    pub collect_time_s: f64,
    /// Share of the collection's statement time, in %.
    pub collect_share_pct: f64,
    /// Rows examined in the collection.
    pub collect_rows_examined: u64,
    /// Calls completed in the lead-up.
    pub pre_calls: u64,
    /// Statement time in the lead-up, in seconds.
    pub pre_time_s: f64,
    /// Share of the lead-up's statement time, in %.
    pub pre_share_pct: f64,
}

/// One group's share of the active threads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AttributionRow {
    /// USER.
    pub user: String,
    /// HOST without its port (empty in the by-user list).
    pub host: String,
    /// DB (empty: none, or the by-user list).
    pub db: String,
    /// The statement with its literals replaced by `?` (empty in the by-user list).
    pub digest: String,
    /// Share of the collection's active thread-samples, in %.
    pub collect_share_pct: f64,
    /// Share of the lead-up's active thread-samples, in %.
    pub pre_share_pct: f64,
    /// Average active threads of the group per sample in the collection.
    pub collect_avg_threads: f64,
    /// The same in the lead-up.
    pub pre_avg_threads: f64,
    /// The longest TIME seen, in seconds.
    pub max_time_s: u64,
}
