//! The command line of `dbio mysql chunk`: the clap flags and their plain [`Options`].

use crate::cli::{parse_duration_arg, usage};
use crate::output::OutputArgs;
use dbio_mysql::archive::Format as ArchiveFormat;
use dbio_mysql::conn::Net;
use dbio_mysql::guard::{parse_thresholds, GuardConfig, Threshold};
use dbio_mysql::job::{Action, Options, PendingPolicy};
use dbio_mysql::server::Tls;
use dbio_mysql::window::Window;
use dbio_schema::mysql_chunk::ChunkResult;
use std::path::PathBuf;
use std::time::Duration;

/// `--ssl-mode`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum SslModeArg {
    /// Plain, whatever the DSN says.
    Disabled,
    /// Encrypted; the server's certificate is not checked.
    Required,
    /// Encrypted; the certificate must chain to --ssl-ca (or the built-in roots).
    VerifyCa,
    /// As verify-ca, and the certificate must name the DSN's host.
    VerifyIdentity,
}

impl SslModeArg {
    /// The name `Tls::from_flags` takes.
    fn name(self) -> &'static str {
        match self {
            SslModeArg::Disabled => "disabled",
            SslModeArg::Required => "required",
            SslModeArg::VerifyCa => "verify-ca",
            SslModeArg::VerifyIdentity => "verify-identity",
        }
    }
}

/// `--pending`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum PendingArg {
    /// Redo the chunk.
    Redo,
    /// Take the chunk as committed.
    Skip,
}

/// A load list of `--max-load`, `--resume-load`, `--critical-load` (VAR=N,...), parsed.
#[derive(Clone, Debug, PartialEq)]
struct Thresholds(Vec<Threshold>);

fn parse_load(s: &str) -> Result<Thresholds, String> {
    parse_thresholds(s)
        .map(Thresholds)
        .map_err(|e| e.to_string())
}

fn parse_window(s: &str) -> Result<Window, String> {
    Window::parse(s).map_err(|e| e.to_string())
}

/// Arguments of `dbio mysql chunk`.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("action").required(true).multiple(true).args(["delete", "archive", "update"])))]
pub struct ChunkArgs {
    /// The server: mysql://user[:password]@host[:port][/database].
    #[arg(long, env = "DBIO_MYSQL_DSN")]
    dsn: String,
    /// The table: NAME (database from the DSN) or DB.NAME.
    #[arg(long)]
    table: String,
    /// The rows to work on (an SQL condition); every row without it.
    #[arg(long = "where", value_name = "CONDITION")]
    condition: Option<String>,
    /// Delete the rows (after archiving them, with --archive).
    #[arg(long, conflicts_with = "update")]
    delete: bool,
    /// Write the rows to FILE (flushed to disk before their DELETE commits); a new file.
    #[arg(long, value_name = "FILE", conflicts_with = "update")]
    archive: Option<PathBuf>,
    /// The archive's format: tsv (a header, then LOAD DATA's escaping) or sql (INSERTs).
    #[arg(long, value_name = "FORMAT", default_value = "tsv", value_parser = archive_format_parser())]
    archive_format: ArchiveFormat,
    /// Update the rows: "SET col = value, ..." (key columns may not be assigned).
    #[arg(long, value_name = "SET")]
    update: Option<String>,
    /// Change data. Without it: connect, check, print the plan and EXPLAIN, change nothing.
    #[arg(long)]
    execute: bool,
    /// Walk this unique index (NOT NULL columns) instead of the primary key.
    #[arg(long, value_name = "INDEX")]
    key: Option<String>,
    /// Each chunk should take this long; the size adapts.
    #[arg(long, default_value = "500ms", value_parser = parse_duration_arg)]
    chunk_time: Duration,
    /// The first chunk's size, in key rows.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    chunk_size: u64,
    /// The smallest chunk, in key rows.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    chunk_min: u64,
    /// The largest chunk, in key rows.
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..))]
    chunk_max: u64,
    /// Sleep after each chunk for this many times the chunk's time.
    #[arg(long, default_value_t = 1.0, value_parser = parse_coef)]
    sleep_coef: f64,
    /// Pause at or above these (VAR=N,...; a bare N is Threads_running, dbio's own connection
    /// not counted).
    #[arg(long, default_value = "Threads_running=25", value_parser = parse_load)]
    max_load: Thresholds,
    /// Resume when below these (default: half of each --max-load).
    #[arg(long, default_value = "", value_parser = parse_load)]
    resume_load: Thresholds,
    /// Pause at or above these, and stop when it lasts --critical-timeout.
    #[arg(long, default_value = "Threads_running=50", value_parser = parse_load)]
    critical_load: Thresholds,
    /// How long critical load may last before the job stops (between chunks).
    #[arg(long, default_value = "60s", value_parser = parse_duration_arg)]
    critical_timeout: Duration,
    /// A replica whose lag to watch (repeatable); an unreadable lag stops the job.
    #[arg(long, value_name = "DSN")]
    replica: Vec<String>,
    /// Pause while a replica lags more than this (resume below half).
    #[arg(long, default_value = "10s", value_parser = parse_duration_arg)]
    max_lag: Duration,
    /// Pause while the InnoDB history list is longer than this (resume below half).
    #[arg(long, value_name = "N")]
    max_history: Option<u64>,
    /// TLS to the server and the replicas: disabled, required (not checked), verify-ca or
    /// verify-identity (default: as the DSN says).
    #[arg(long, value_name = "MODE", value_enum)]
    ssl_mode: Option<SslModeArg>,
    /// The CA (PEM) the server's certificate must chain to (alone: --ssl-mode verify-ca).
    #[arg(long, value_name = "FILE")]
    ssl_ca: Option<PathBuf>,
    /// The longest wait for the server or a replica to accept a connection or send a reply
    /// (at least twice --lock-wait-timeout); a server silent that long is not answering.
    #[arg(long, default_value = "60s", value_parser = parse_duration_arg)]
    net_timeout: Duration,
    /// How long to keep reconnecting (back-off 1s, 2s, 4s ... 30s) to a server that stopped
    /// answering between chunks before stopping the job (0: stop at once).
    #[arg(long, default_value = "5m", value_parser = parse_duration_arg)]
    reconnect_for: Duration,
    /// innodb_lock_wait_timeout of the job's session, in seconds.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    lock_wait_timeout: u32,
    /// Retries of a chunk (each smaller) after a lock wait timeout or deadlock.
    #[arg(long, default_value_t = 5)]
    retries: u32,
    /// The checkpoint file (default: under $XDG_STATE_HOME/dbio or ~/.local/state/dbio).
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// Continue the job after its last committed chunk.
    #[arg(long)]
    resume: bool,
    /// With --resume, when the last run died committing a chunk and its commit marker cannot
    /// be read (the marker table was dropped): redo the chunk or take it as committed.
    #[arg(long, value_enum)]
    pending: Option<PendingArg>,
    /// Archive the rows ON DELETE CASCADE removes from child tables, in each chunk's
    /// transaction, parents first (with --archive --delete --archive-format sql).
    #[arg(long, conflicts_with = "allow_cascade")]
    archive_children: bool,
    /// Let the server delete (ON DELETE CASCADE) or change (SET NULL) child rows, unarchived.
    #[arg(long)]
    allow_cascade: bool,
    /// The commit marker table, NAME or DB.NAME (default: dbio_chunk_marker in the table's
    /// database): dbio's own InnoDB table, one row per running archive or update job.
    #[arg(long, value_name = "TABLE")]
    marker_table: Option<String>,
    /// Run chunks only between these local times (01:00-05:00; 22:00-04:00 wraps).
    #[arg(long, value_name = "HH:MM-HH:MM", value_parser = parse_window)]
    window: Option<Window>,
    /// Stop cleanly after this long.
    #[arg(long, value_parser = parse_duration_arg)]
    run_time: Option<Duration>,
    /// How often the guard looks again while paused.
    #[arg(long, default_value = "1s", value_parser = parse_duration_arg)]
    check_interval: Duration,
    #[command(flatten)]
    pub out: OutputArgs<ChunkResult>,
}

fn state_dir() -> PathBuf {
    match std::env::var_os("XDG_STATE_HOME").filter(|s| !s.is_empty()) {
        Some(d) => PathBuf::from(d).join("dbio"),
        None => std::env::var_os("HOME")
            .map_or_else(|| PathBuf::from("."), PathBuf::from)
            .join(".local/state/dbio"),
    }
}

/// The job's plain options from the flags (a usage error names the flag).
pub fn options(a: &ChunkArgs) -> anyhow::Result<Options> {
    if !(a.sleep_coef.is_finite() && a.sleep_coef >= 0.0) {
        return Err(usage(format!(
            "--sleep-coef {}: give a number >= 0",
            a.sleep_coef
        )));
    }
    if a.chunk_min > a.chunk_max {
        return Err(usage(format!(
            "--chunk-min {} is above --chunk-max {}",
            a.chunk_min, a.chunk_max
        )));
    }
    if a.chunk_time.is_zero() {
        return Err(usage("--chunk-time 0: give a positive time, e.g. 500ms"));
    }
    // A chunk's statement may wait --lock-wait-timeout for a row lock and then do its work:
    // a server silent for less than twice that may just be slow.
    let lock_wait = Duration::from_secs(u64::from(a.lock_wait_timeout));
    if a.net_timeout < lock_wait * 2 {
        return Err(usage(format!(
            "--net-timeout {} is shorter than twice --lock-wait-timeout {}s: a chunk's statement may wait that long for a row lock and then do its work, so a slow chunk would be taken for a server that stopped answering; give --net-timeout {}s or more",
            dbio_schema::units::format_duration(a.net_timeout),
            a.lock_wait_timeout,
            2 * u64::from(a.lock_wait_timeout)
        )));
    }
    let action = match (&a.archive, &a.update) {
        (Some(path), _) => Action::Archive {
            path: path.clone(),
            format: a.archive_format,
            delete: a.delete,
        },
        (None, Some(set)) => Action::Update { set: set.clone() },
        (None, None) => Action::Delete,
    };
    Ok(Options {
        dsn: a.dsn.clone(),
        table: a.table.clone(),
        condition: a.condition.clone().filter(|c| !c.trim().is_empty()),
        action,
        key: a.key.clone(),
        execute: a.execute,
        chunk_time: a.chunk_time,
        chunk_size: a.chunk_size,
        chunk_min: a.chunk_min,
        chunk_max: a.chunk_max,
        sleep_coef: a.sleep_coef,
        guard: GuardConfig {
            max_load: a.max_load.0.clone(),
            resume_load: a.resume_load.0.clone(),
            critical_load: a.critical_load.0.clone(),
            critical_timeout: a.critical_timeout,
            max_lag: (!a.replica.is_empty()).then_some(a.max_lag),
            max_history: a.max_history,
        },
        replicas: a.replica.clone(),
        tls: tls(a)?,
        net: Net {
            timeout: a.net_timeout,
            reconnect_for: a.reconnect_for,
        },
        lock_wait_timeout: a.lock_wait_timeout,
        retries: a.retries,
        state: a.state.clone(),
        state_dir: state_dir(),
        resume: a.resume,
        pending: match a.pending {
            Some(PendingArg::Redo) => PendingPolicy::Redo,
            Some(PendingArg::Skip) => PendingPolicy::Skip,
            None => PendingPolicy::Refuse,
        },
        window: a.window,
        run_time: a.run_time,
        check_interval: a.check_interval.max(Duration::from_millis(10)),
        archive_children: a.archive_children,
        allow_cascade: a.allow_cascade,
        marker_table: a.marker_table.clone(),
    })
}

/// `--ssl-mode` and `--ssl-ca` (a CA file that cannot be read is named now, not at connect).
fn tls(a: &ChunkArgs) -> anyhow::Result<Tls> {
    if let Some(ca) = &a.ssl_ca {
        std::fs::File::open(ca)
            .map_err(|e| usage(format!("--ssl-ca {}: cannot read it: {e}", ca.display())))?;
    }
    Tls::from_flags(a.ssl_mode.map(SslModeArg::name), a.ssl_ca.clone()).map_err(usage)
}

/// `--sleep-coef`: a finite number >= 0.
fn parse_coef(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!(
            "'{s}' is not a number >= 0 (0 sleeps not at all, 1 as long as the chunk took)"
        )),
    }
}

/// A clap parser of the row formats an archive is written in (tsv, sql: JSON Lines is not
/// loaded back by a server, and is refused as a usage error).
fn archive_format_parser() -> impl clap::builder::TypedValueParser<Value = ArchiveFormat> {
    use clap::builder::{PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new([ArchiveFormat::Tsv.name(), ArchiveFormat::Sql.name()])
        .map(|s| s.parse::<ArchiveFormat>().expect("clap checked the name"))
}
