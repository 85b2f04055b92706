//! A chunked job: plan (key, EXPLAIN, estimates), then with `execute` the walk.
//!
//! Each chunk: find its upper bound (the key `n` rows after the last committed bound, not past
//! the job's end), then in one transaction run the statement over `key > lower AND key <=
//! upper AND (condition)`; `--archive` first reads the rows `FOR UPDATE`, writes them and
//! flushes the file, then deletes them, and checks the DELETE removed exactly the rows
//! archived. A checkpoint is written after the commit; an archive or update chunk also writes
//! one just before its commit (`pending`), so a resumed job can tell whether it committed: an
//! archived chunk by looking for one of its rows (still there: it did not), an update only by
//! asking the user (`--pending redo|skip`). A delete needs no pending record: deleting the
//! same range again finds nothing.

use crate::archive::{Archive, Format};
use crate::conn::{self, nap, Reconnect};
use crate::fk::{self, Edge};
use crate::guard::{Cause, Decision, Guard, GuardConfig};
use crate::key::{self, Key};
use crate::marker::{self, Marker};
use crate::server::{self, Replica};
use crate::sizer::{ChunkSizer, SizerConfig};
use crate::state::{self, Checkpoint, Pending, Totals};
use crate::value::{ColumnKind, KeyValue};
use crate::window::Window;
use crate::Error;
use dbio_schema::mysql_chunk::{Cascade, ChunkPlan, ChunkResult, ChunkRun, Pause};
use mysql::prelude::Queryable;
use mysql::{Conn, Value};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What each chunk does.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// DELETE the rows.
    Delete,
    /// Write the rows to `path`, and with `delete` then DELETE them.
    Archive {
        /// The archive file.
        path: PathBuf,
        /// Its format.
        format: Format,
        /// Delete the archived rows.
        delete: bool,
    },
    /// UPDATE the rows with this SET list.
    Update {
        /// `SET status = 'old'` (the `SET` is optional).
        set: String,
    },
}

impl Action {
    /// `delete`, `archive`, `archive+delete` or `update`.
    pub fn name(&self) -> &'static str {
        match self {
            Action::Delete => "delete",
            Action::Archive { delete: false, .. } => "archive",
            Action::Archive { delete: true, .. } => "archive+delete",
            Action::Update { .. } => "update",
        }
    }
}

/// What to do with a chunk that was committing when the last run died, when its commit
/// marker cannot be read (the marker table was dropped).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PendingPolicy {
    /// Refuse to resume (say what to check).
    #[default]
    Refuse,
    /// Run the chunk again (the SET is idempotent, or it did not commit).
    Redo,
    /// Take it as committed.
    Skip,
}

/// A job.
#[derive(Clone, Debug)]
pub struct Options {
    /// `mysql://user[:password]@host[:port][/database]`.
    pub dsn: String,
    /// `table` or `db.table`.
    pub table: String,
    /// The `--where` condition (none: every row).
    pub condition: Option<String>,
    /// What each chunk does.
    pub action: Action,
    /// Walk this unique index instead of the primary key.
    pub key: Option<String>,
    /// Change data; false is a dry run (plan, EXPLAIN, estimates).
    pub execute: bool,
    /// Target chunk time.
    pub chunk_time: Duration,
    /// First chunk's size, in key rows.
    pub chunk_size: u64,
    /// Smallest chunk.
    pub chunk_min: u64,
    /// Largest chunk.
    pub chunk_max: u64,
    /// Sleep after each chunk = this x the chunk's time.
    pub sleep_coef: f64,
    /// The load guard.
    pub guard: GuardConfig,
    /// Replicas whose lag the guard watches.
    pub replicas: Vec<String>,
    /// How the connections to the server and the replicas are secured.
    pub tls: server::Tls,
    /// Their timeouts, and how long the guard reconnects (see [`conn`]).
    pub net: conn::Net,
    /// innodb_lock_wait_timeout of the job's session, seconds.
    pub lock_wait_timeout: u32,
    /// Retries of a chunk after a lock wait timeout or deadlock.
    pub retries: u32,
    /// The checkpoint file (none: `state_dir/chunk-DB.TABLE-JOBID.json`).
    pub state: Option<PathBuf>,
    /// Where default checkpoint files go.
    pub state_dir: PathBuf,
    /// Continue after the checkpoint's last committed chunk.
    pub resume: bool,
    /// See [`PendingPolicy`].
    pub pending: PendingPolicy,
    /// Run chunks only inside this daily window (local time).
    pub window: Option<Window>,
    /// Stop cleanly after this long.
    pub run_time: Option<Duration>,
    /// How often the guard samples while paused.
    pub check_interval: Duration,
    /// Archive the rows that ON DELETE CASCADE removes from child tables, in each chunk's
    /// transaction, parents first (an SQL archive).
    pub archive_children: bool,
    /// Let the server delete or change child rows through foreign keys, unarchived.
    pub allow_cascade: bool,
    /// The commit marker table (`NAME` or `DB.NAME`; none: `dbio_chunk_marker` in the job's
    /// schema).
    pub marker_table: Option<String>,
}

/// One committed chunk, for a progress display.
#[derive(Clone, Debug)]
pub struct Progress {
    /// Chunks committed in this run.
    pub chunks: u64,
    /// Key rows walked (this run).
    pub rows_walked: u64,
    /// Rows deleted/updated (this run).
    pub rows_affected: u64,
    /// Rows archived (this run).
    pub rows_archived: u64,
    /// The next chunk's size.
    pub chunk_rows: u64,
    /// The last chunk's time.
    pub chunk_time: Duration,
    /// Key rows left to walk when the run began (the server's estimate).
    pub rows_estimate: u64,
}

/// Receives the run's events (the binary draws a progress bar and prints pauses).
pub trait Observer {
    /// The plan is ready (before the first chunk).
    fn plan(&mut self, _plan: &ChunkPlan) {}
    /// A chunk committed.
    fn chunk(&mut self, _p: &Progress) {}
    /// A pause began.
    fn pause(&mut self, _cause: &Cause) {}
    /// The pause ended after `_paused`.
    fn resumed(&mut self, _paused: Duration) {}
    /// A wait on the server began (what it is for) or ended (`None`), during the walk.
    fn in_flight(&mut self, _what: Option<&str>) {}
}

/// An observer that ignores everything.
pub struct Quiet;
impl Observer for Quiet {}

fn values(k: &[KeyValue]) -> Vec<Value> {
    k.iter().map(KeyValue::to_value).collect()
}

fn keyvals(v: &[Value]) -> Vec<KeyValue> {
    v.iter().map(KeyValue::from_value).collect()
}

fn show(k: &[KeyValue]) -> Vec<String> {
    k.iter().map(ToString::to_string).collect()
}

fn show_opt(k: Option<&Vec<KeyValue>>) -> String {
    k.map_or("the start".into(), |k| format!("({})", show(k).join(", ")))
}

fn sql(what: impl Into<String>) -> impl FnOnce(mysql::Error) -> Error {
    let what = what.into();
    move |source| Error::Sql { what, source }
}

/// Statement parameters for [`key::range`]'s placeholders: `lower` then `upper` key columns.
fn bind(b: &key::Bound, lower: Option<&[Value]>, upper: &[Value]) -> Vec<Value> {
    let n = upper.len();
    b.params
        .iter()
        .map(|&i| {
            if i < n {
                lower.expect("a lower bound for its placeholders")[i].clone()
            } else {
                upper[i - n].clone()
            }
        })
        .collect()
}

/// Everything fixed once the plan is made.
struct Job {
    table: String,
    key: Key,
    condition: Option<String>,
    set: Option<String>,
    columns: Vec<String>,
    /// The columns written to the archive (generated ones are left out).
    keep: Vec<usize>,
    /// Child tables archived with their parents (--archive-children), breadth first.
    children: Vec<Child>,
}

/// A child table whose rows ON DELETE CASCADE removes with the chunk's, archived first.
struct Child {
    edge: Edge,
    /// `db`.`table`.
    table: String,
    /// Every column, in table order (the SELECT's).
    columns: Vec<String>,
    /// The columns written to the archive.
    keep: Vec<usize>,
    /// Where the referenced columns are in the parent's selected columns.
    ref_pos: Vec<usize>,
    /// The child whose rows are this one's parents (none: the job's table).
    from: Option<usize>,
}

/// The values of `row` at `keep`.
fn kept(row: &[Value], keep: &[usize]) -> Vec<Value> {
    keep.iter().map(|&i| row[i].clone()).collect()
}

impl Job {
    fn range(&self, has_lower: bool) -> key::Bound {
        key::range(&self.key, has_lower, self.condition.as_deref())
    }

    /// The statement of one chunk (the DML; for archive-only, the SELECT).
    fn statement(&self, action: &Action, has_lower: bool) -> (String, key::Bound) {
        let r = self.range(has_lower);
        // FORCE INDEX keeps every chunk on the walked key: without it the optimizer may take an
        // index on the condition's column (when its estimate is smaller), and a chunk would then
        // read every matching row of the table. Single-table DELETE takes no index hint, the
        // multi-table form does (same rows, no LIMIT).
        let sql = match action {
            Action::Delete | Action::Archive { delete: true, .. } => format!(
                "DELETE {t} FROM {t} {} WHERE {}",
                self.force(),
                r.sql,
                t = self.table
            ),
            Action::Update { .. } => format!(
                "UPDATE {} {} SET {} WHERE {}",
                self.table,
                self.force(),
                self.set.as_deref().unwrap_or_default(),
                r.sql
            ),
            Action::Archive { delete: false, .. } => self.select(&r, false),
        };
        (sql, r)
    }

    fn force(&self) -> String {
        format!("FORCE INDEX ({})", key::quote_ident(&self.key.name))
    }

    fn select(&self, r: &key::Bound, for_update: bool) -> String {
        let cols: Vec<String> = self.columns.iter().map(|c| key::quote_ident(c)).collect();
        format!(
            "SELECT {} FROM {} {} WHERE {} ORDER BY {}{}",
            cols.join(", "),
            self.table,
            self.force(),
            r.sql,
            key::column_list(&self.key),
            if for_update { " FOR UPDATE" } else { "" }
        )
    }
}

/// The foreign keys that reach the table (`(db, table)`), followed through cascades: what a
/// DELETE of its rows also does elsewhere, how the job handles each (the plan's cascades),
/// and the child tables `--archive-children` archives. Refuses a cascade the flags do not
/// allow, and `--archive-children` without an SQL archive of a delete.
fn foreign_keys(
    conn: &mut Conn,
    opts: &Options,
    info: &server::TableInfo,
    (db, table): (&str, &str),
    deletes: bool,
) -> Result<(Vec<Cascade>, Vec<Child>), Error> {
    // Foreign keys that reach the table: what a DELETE of its rows also does elsewhere.
    let edges = if deletes {
        fk::tree((db, table), |d, t| server::referencing(conn, d, t))?
    } else {
        vec![]
    };
    let cascading = edges.iter().any(|e| e.deletes() || e.changes());
    if opts.archive_children {
        match &opts.action {
            Action::Archive {
                delete: true,
                format: Format::Sql,
                ..
            } => {}
            Action::Archive {
                delete: true,
                format: Format::Tsv,
                ..
            } => {
                return Err(Error::ArchiveChildren(
                    "a TSV archive holds one table's rows: give --archive-format sql (one file that restores parents before children)".into(),
                ))
            }
            Action::Archive {
                delete: true,
                format: Format::Jsonl,
                ..
            } => {
                return Err(Error::ArchiveChildren(
                    "an archive is tsv or sql, not jsonl: give --archive-format sql (one file that restores parents before children)".into(),
                ))
            }
            _ => {
                return Err(Error::ArchiveChildren(
                    "it archives the rows a DELETE cascades to: give it with --archive FILE --delete".into(),
                ))
            }
        }
        if let Some(why) = fk::archive_children_refusal((db, table), &edges) {
            return Err(Error::ArchiveChildren(why));
        }
    }
    let mut cascades = Vec::new();
    let mut children = Vec::new();
    for e in &edges {
        let child = server::table_info(conn, &e.fk.schema, &e.fk.table)?;
        let handling = if !(e.deletes() || e.changes()) {
            "none"
        } else if opts.archive_children {
            "archived"
        } else if opts.allow_cascade {
            "allowed"
        } else {
            "refused"
        };
        cascades.push(Cascade {
            table: e.child(),
            parent: match e.parent {
                None => format!("{db}.{table}"),
                Some(p) => edges[p].child(),
            },
            constraint: e.fk.constraint.clone(),
            delete_rule: e.fk.delete_rule.clone(),
            columns: e.fk.columns.clone(),
            depth: e.depth,
            rows_estimate: child.rows_estimate,
            handling: handling.into(),
        });
        if opts.archive_children && e.deletes() {
            let from = e.parent.map(|p| {
                children
                    .iter()
                    .position(|c: &Child| c.edge == edges[p])
                    .expect("a parent edge comes first")
            });
            let parent_cols = match from {
                None => &info.columns,
                Some(i) => &children[i].columns,
            };
            let ref_pos =
                e.fk.references
                    .iter()
                    .map(|r| parent_cols.iter().position(|x| x == r).unwrap_or(0))
                    .collect();
            children.push(Child {
                edge: e.clone(),
                table: key::qualified(&e.fk.schema, &e.fk.table),
                keep: (0..child.columns.len())
                    .filter(|&i| !child.generated[i])
                    .collect(),
                columns: child.columns,
                ref_pos,
                from,
            });
        }
    }
    if opts.execute && cascading && !opts.archive_children && !opts.allow_cascade {
        let list: Vec<String> = cascades
            .iter()
            .filter(|c| c.handling == "refused")
            .map(|c| {
                let what = if c.delete_rule.eq_ignore_ascii_case("CASCADE") {
                    "deletes"
                } else {
                    "changes"
                };
                format!(
                    "{what} rows of {} (about {} rows, {} ON DELETE {})",
                    c.table, c.rows_estimate, c.constraint, c.delete_rule
                )
            })
            .collect();
        return Err(Error::Cascade {
            table: format!("{db}.{table}"),
            children: list.join("; "),
        });
    }
    Ok((cascades, children))
}

/// The job's table as the server names it, with its metadata.
struct Target {
    db: String,
    table: String,
    /// `db`.`table`, quoted.
    qualified: String,
    info: server::TableInfo,
}

/// Connects and reads the table's metadata: the names as the server stores them (the job's
/// identity and its lock do not depend on how the table was spelled, `db.t` or `t` with the
/// DSN's database); refuses a table that is not InnoDB.
fn open_target(opts: &Options) -> Result<(Conn, Target), Error> {
    let o = server::opts(&opts.dsn)?;
    let (db, table) = match opts.table.split_once('.') {
        Some((d, t)) => (d.to_string(), t.to_string()),
        None => (
            o.get_db_name().ok_or(Error::NoDatabase)?.to_string(),
            opts.table.clone(),
        ),
    };
    if let Some(c) = &opts.condition {
        key::check_condition(c)?;
    }
    let mut conn = conn::open(&opts.dsn, &opts.tls, &opts.net)?;
    conn.query_drop(format!(
        "SET SESSION innodb_lock_wait_timeout = {}",
        opts.lock_wait_timeout.max(1)
    ))
    .map_err(sql("setting innodb_lock_wait_timeout"))?;
    let info = server::table_info(&mut conn, &db, &table)?;
    let (db, table) = (info.schema.clone(), info.name.clone());
    if !info.engine.eq_ignore_ascii_case("InnoDB") {
        return Err(Error::Engine {
            table: format!("{db}.{table}"),
            engine: info.engine,
        });
    }
    let qualified = key::qualified(&db, &table);
    Ok((
        conn,
        Target {
            db,
            table,
            qualified,
            info,
        },
    ))
}

/// The job's identity: the server as it names itself (not the DSN's spelling of it), the
/// table, the condition and the action.
fn job_id(conn: &mut Conn, opts: &Options, t: &Target, job: &Job) -> Result<String, Error> {
    let server_id = server::identity(conn)?;
    let action_id = format!(
        "{}|{}|{}",
        opts.action.name(),
        job.key.name,
        job.set.as_deref().unwrap_or("")
    );
    Ok(state::job_id(
        &server_id,
        &t.db,
        &t.table,
        opts.condition.as_deref().unwrap_or("").trim(),
        &action_id,
    ))
}

/// The checkpoint to resume (`--resume`), or none for a new job; refuses a new run over an
/// unfinished job's checkpoint.
fn load_checkpoint(
    opts: &Options,
    path: &std::path::Path,
    id: &str,
) -> Result<Option<Checkpoint>, Error> {
    if opts.resume {
        if !path.exists() {
            return Err(Error::NoState(path.to_path_buf()));
        }
        let c = Checkpoint::load(path)?;
        if c.job != id {
            return Err(Error::StateMismatch(path.to_path_buf()));
        }
        return Ok(Some(c));
    }
    if path.exists() && opts.execute && !Checkpoint::load(path)?.finished {
        return Err(Error::StateExists(path.to_path_buf()));
    }
    Ok(None)
}

/// The first chunk's EXPLAIN. A table small enough that a full scan reads no more than one
/// chunk may be scanned (the optimizer prefers it there, FORCE INDEX or not); anything bigger
/// that the walked key does not bound is refused, with the facts that tell stale statistics
/// from a bad condition.
fn first_explain(
    conn: &mut Conn,
    job: &Job,
    opts: &Options,
    t: &Target,
    walk: (Option<&[KeyValue]>, &[KeyValue]),
    chunk: u64,
    walked: u64,
) -> Result<dbio_schema::mysql_chunk::Explain, Error> {
    let (lower, end) = walk;
    let lv = lower.map(values);
    let ev = values(end);
    let upper = boundary(conn, job, lv.as_deref(), &ev, chunk)?.unwrap_or_else(|| ev.clone());
    let (s, r) = job.statement(&opts.action, lv.is_some());
    let explain = server::explain(conn, &s, bind(&r, lv.as_deref(), &upper))?;
    if bounded(&explain, &job.key.name) {
        return Ok(explain);
    }
    let cap = chunk.max(1000);
    let counted: u64 = conn
        .exec_first(
            format!(
                "SELECT COUNT(*) FROM (SELECT 1 FROM {} LIMIT {}) AS t",
                t.qualified,
                cap + 1
            ),
            (),
        )
        .map_err(sql("counting the table's rows (at most one chunk's)"))?
        .unwrap_or(0);
    if counted > cap {
        return Err(Error::NotRange {
            hint: not_range_hint(&t.db, &t.table, t.info.rows_estimate, cap, walked),
            access: explain.access.clone(),
            key: explain.key.clone().unwrap_or_else(|| "NULL".into()),
            want: job.key.name.clone(),
            rows: explain.rows.map_or("?".into(), |r| r.to_string()),
        });
    }
    Ok(explain)
}

/// The archive: a resumed job's is checked against its checkpoint before it is cut back; a
/// new job's is created (never over an existing file).
fn open_archive(
    opts: &Options,
    ck: Option<&Checkpoint>,
    state_path: &std::path::Path,
    qualified: &str,
    columns: &[String],
) -> Result<Option<Archive>, Error> {
    let Action::Archive { path, format, .. } = &opts.action else {
        return Ok(None);
    };
    Ok(Some(match ck {
        Some(c) => {
            let (Some(identity), Some(tail)) = (&c.archive, &c.archive_tail) else {
                return Err(Error::ArchiveIdentity {
                    path: path.clone(),
                    reason: format!(
                        "checkpoint {} records no archive for this job",
                        state_path.display()
                    ),
                });
            };
            Archive::reopen(path, *format, qualified, c.archive_bytes, identity, tail)?
        }
        None => Archive::create(path, *format, qualified, columns).map_err(|e| match e {
            Error::Archive { source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists => {
                Error::ArchiveExists(path.clone())
            }
            e => e,
        })?,
    }))
}

/// What the plan is made of, besides the table.
struct Planned<'a> {
    key: &'a Key,
    statement: String,
    explain: dbio_schema::mysql_chunk::Explain,
    chunk_rows: u64,
    end: Option<&'a [KeyValue]>,
    lower: Option<&'a [KeyValue]>,
    finished_before: bool,
    walked_before: u64,
    state_path: &'a std::path::Path,
    marker: Option<&'a Marker>,
    cascades: Vec<Cascade>,
}

/// The plan (estimates of rows, chunks and time), and the rows left to walk.
fn plan(
    conn: &mut Conn,
    opts: &Options,
    t: &Target,
    p: Planned<'_>,
) -> Result<(ChunkPlan, u64), Error> {
    let info = &t.info;
    let matching = match &opts.condition {
        Some(c) => server::explain(
            conn,
            &format!("SELECT 1 FROM {} WHERE ({c})", t.qualified),
            vec![],
        )?
        .rows
        .unwrap_or(0),
        None => info.rows_estimate,
    };
    let left = if p.end.is_none() || p.finished_before {
        0
    } else {
        info.rows_estimate.saturating_sub(p.walked_before).max(1)
    };
    let chunks_estimate = left.div_ceil(p.chunk_rows.max(1));
    let plan = ChunkPlan {
        key_name: p.key.name.clone(),
        key_columns: p.key.columns.clone(),
        statement: p.statement,
        explain: p.explain,
        table_rows_estimate: info.rows_estimate,
        condition_rows_estimate: matching,
        start_chunk_rows: p.chunk_rows,
        chunks_estimate,
        time_estimate_s: chunks_estimate as f64
            * opts.chunk_time.as_secs_f64()
            * (1.0 + opts.sleep_coef),
        chunk_time_s: opts.chunk_time.as_secs_f64(),
        sleep_coef: opts.sleep_coef,
        end_key: p.end.map(show).unwrap_or_default(),
        resume_after: p.lower.map(show),
        state_file: p.state_path.display().to_string(),
        marker_table: p.marker.map(Marker::display),
        generated_columns: info
            .columns
            .iter()
            .zip(&info.generated)
            .filter(|(_, g)| **g)
            .map(|(c, _)| c.clone())
            .collect(),
        cascades: p.cascades,
    };
    Ok((plan, left))
}

/// A new job's checkpoint: nothing walked yet (finished already when the table is empty).
fn new_checkpoint(
    id: &str,
    t: &Target,
    k: &Key,
    end: Option<&[KeyValue]>,
    archive: Option<&Archive>,
) -> Result<Checkpoint, Error> {
    Ok(Checkpoint {
        version: state::VERSION,
        job: id.to_string(),
        table: format!("{}.{}", t.db, t.table),
        key: k.clone(),
        end: end.map(<[KeyValue]>::to_vec).unwrap_or_default(),
        last: None,
        pending: None,
        archive_bytes: archive.map_or(0, Archive::len),
        archive: archive.map(Archive::identity).transpose()?,
        archive_tail: archive.map(Archive::tail).transpose()?,
        totals: Totals::default(),
        finished: end.is_none(),
    })
}

/// Plans the job and, with `opts.execute`, runs it. `stop` (Ctrl-C) ends the run after the
/// chunk in progress, with the checkpoint saved.
pub fn run(
    opts: &Options,
    stop: &AtomicBool,
    obs: &mut dyn Observer,
) -> Result<ChunkResult, Error> {
    let (mut conn, t) = open_target(opts)?;
    let (db, table, info) = (&t.db, &t.table, &t.info);
    let k = key::choose_key(
        &format!("{db}.{table}"),
        &info.index_columns,
        opts.key.as_deref(),
    )?;
    let set = match &opts.action {
        Action::Update { set } => Some(key::check_update(set, &k)?),
        _ => None,
    };
    let deletes = matches!(
        opts.action,
        Action::Delete | Action::Archive { delete: true, .. }
    );

    let (cascades, children) = foreign_keys(&mut conn, opts, info, (db, table), deletes)?;

    let job = Job {
        table: t.qualified.clone(),
        key: k.clone(),
        condition: opts.condition.clone(),
        set,
        columns: info.columns.clone(),
        keep: (0..info.columns.len())
            .filter(|&i| !info.generated[i])
            .collect(),
        children,
    };
    let id = job_id(&mut conn, opts, &t, &job)?;
    let state_path = opts
        .state
        .clone()
        .unwrap_or_else(|| opts.state_dir.join(state_file_name(db, table, &id)));

    if opts.execute {
        // One job per table, whatever its condition or action: two jobs walking one table
        // would lock each other's chunks and race on the same rows.
        server::lock(&mut conn, &lock_name(db, table))?;
        // Temporaries a killed run left of its checkpoint (see dbio_sys::atomic).
        dbio_sys::atomic::remove_stale_temporaries(&state_path).map_err(|source| Error::State {
            path: state_path.clone(),
            what: "cannot remove the temporary files a killed run left beside it",
            source: Box::new(source),
        })?;
    }
    let mut ck = load_checkpoint(opts, &state_path, &id)?;

    // The end key is read as a prepared statement, like every chunk's bound: the binary
    // protocol types it (an INT is an integer, not the text the plain protocol returns), so
    // the last chunk's bound compares equal to it and no empty chunk follows.
    let end: Option<Vec<KeyValue>> = match &ck {
        Some(c) => Some(c.end.clone()),
        None => conn
            .exec_first::<mysql::Row, _, _>(key::last_key_sql(&t.qualified, &k), ())
            .map_err(sql("reading the greatest key"))?
            .map(|r| keyvals(&r.unwrap())),
    };

    // Settle a chunk that was committing when the last run died, from the commit marker
    // (read before the table is created: a marker table dropped since must not read as "no
    // commit"). The checkpoint is saved only once the archive is shown to be the job's.
    let marker = matches!(
        opts.action,
        Action::Update { .. } | Action::Archive { delete: true, .. }
    )
    .then(|| Marker::new(opts.marker_table.as_deref(), db));
    if let Some(c) = ck.as_mut() {
        if let Some(p) = c.pending.take() {
            settle_pending(&mut conn, marker.as_ref(), &id, opts, c, p)?;
        }
    }
    if let (Some(m), true) = (&marker, opts.execute) {
        m.ensure(&mut conn)?;
    }
    let lower: Option<Vec<KeyValue>> = ck.as_ref().and_then(|c| c.last.clone());
    let finished_before = ck.as_ref().is_some_and(|c| c.finished);
    let walked_before = ck.as_ref().map_or(0, |c| c.totals.rows_walked);

    // The first chunk's bounds and its EXPLAIN.
    let sizer_cfg = SizerConfig {
        target: opts.chunk_time,
        min: opts.chunk_min,
        max: opts.chunk_max,
    };
    let mut sizer = ChunkSizer::new(sizer_cfg, opts.chunk_size);
    let (stmt, _) = job.statement(&opts.action, true);
    let explain = match (&end, finished_before) {
        (Some(end), false) => first_explain(
            &mut conn,
            &job,
            opts,
            &t,
            (lower.as_deref(), end),
            sizer.current(),
            walked_before,
        )?,
        _ => dbio_schema::mysql_chunk::Explain {
            access: "none (nothing to walk)".into(),
            ..Default::default()
        },
    };
    let (plan, left) = plan(
        &mut conn,
        opts,
        &t,
        Planned {
            key: &k,
            statement: stmt,
            explain,
            chunk_rows: sizer.current(),
            end: end.as_deref(),
            lower: lower.as_deref(),
            finished_before,
            walked_before,
            state_path: &state_path,
            marker: marker.as_ref(),
            cascades,
        },
    )?;
    let mut result = ChunkResult {
        database: db.clone(),
        table: table.clone(),
        action: opts.action.name().to_string(),
        condition: opts.condition.clone(),
        execute: opts.execute,
        plan,
        run: None,
    };
    if !opts.execute {
        return Ok(result);
    }
    obs.plan(&result.plan);

    let archived_columns: Vec<String> = job.keep.iter().map(|&i| info.columns[i].clone()).collect();
    let mut archive = open_archive(
        opts,
        ck.as_ref(),
        &state_path,
        &t.qualified,
        &archived_columns,
    )?;
    let mut ck = match ck {
        Some(c) => c,
        None => new_checkpoint(&id, &t, &k, end.as_deref(), archive.as_ref())?,
    };
    ck.save(&state_path)?;

    let mut walk = Walk {
        conn: &mut conn,
        job: &job,
        opts,
        archive: archive.as_mut(),
        ck: &mut ck,
        state_path: &state_path,
        committing: false,
        marker: marker.as_ref(),
        id: &id,
        // The lock server::lock took above, taken again after a reconnect.
        session: conn::Session {
            lock_wait_timeout: opts.lock_wait_timeout,
            lock: Some(lock_name(db, table)),
        },
    };
    let run = walk.run(&mut sizer, stop, obs, left)?;
    if let (Some(m), true) = (&marker, ck.finished) {
        // The finished job's row is no longer needed; one left behind (this fails) is
        // harmless: a later job of the same id writes new tokens over it.
        let _ = m.clear(&mut conn, &id);
    }
    result.run = Some(ChunkRun {
        archive_file: archive.as_ref().map(|a| a.path().display().to_string()),
        archive_bytes: archive.as_ref().map(Archive::len),
        job_rows_affected: ck.totals.rows_affected,
        last_key: ck.last.as_deref().map(show),
        ..run
    });
    Ok(result)
}

/// The job lock's name: one per table (GET_LOCK names are the server's own, at most 64
/// characters).
pub fn lock_name(db: &str, table: &str) -> String {
    format!("dbio_chunk_{}", state::job_id("", db, table, "", ""))
}

/// What to say when a chunk's EXPLAIN is not a range of the key and the table holds more
/// than `cap` rows.
fn not_range_hint(db: &str, table: &str, estimate: u64, cap: u64, walked: u64) -> String {
    let analyze = format!(
        "ANALYZE TABLE {} (on InnoDB it samples a few pages; it does not rebuild the table), then run the job again",
        key::qualified(db, table)
    );
    if estimate <= cap || walked > estimate {
        let seen = if walked > estimate {
            format!(", and this job alone walked {walked} of them")
        } else {
            String::new()
        };
        format!(
            "The table's statistics look stale: they estimate {estimate} rows, but it holds more than {cap}{seen}; with so few rows estimated the optimizer prefers a full scan. Run {analyze}."
        )
    } else {
        format!(
            "Check --where: a function over a key column defeats the range, and a condition on another indexed column can win over the key (walk that index with --key if it is unique and NOT NULL). If the table's statistics are stale ({estimate} rows estimated), run {analyze}."
        )
    }
}

/// The default checkpoint's file name: `chunk-DB.TABLE-ID.json`, every character of the names
/// that is not a letter, digit, `_` or `-` replaced by `_` (a quoted MySQL name may hold `/`).
pub fn state_file_name(db: &str, table: &str, id: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("chunk-{}.{}-{id}.json", clean(db), clean(table))
}

/// Whether EXPLAIN shows a chunk bounded by the key: a range scan of the walked index (or a
/// condition the server proved false: the chunk reads nothing).
pub fn bounded(e: &dbio_schema::mysql_chunk::Explain, key: &str) -> bool {
    let impossible = e.extra.as_deref().is_some_and(|x| x == "Impossible WHERE");
    impossible || (e.access == "range" && e.key.as_deref() == Some(key))
}

/// The upper bound of the chunk of `n` key rows after `lower`: `None` when fewer are left
/// (the chunk then ends at the job's end).
fn boundary(
    conn: &mut Conn,
    job: &Job,
    lower: Option<&[Value]>,
    end: &[Value],
    n: u64,
) -> Result<Option<Vec<Value>>, Error> {
    let (s, r) = key::boundary_sql(&job.table, &job.key, lower.is_some(), n);
    let row: Option<mysql::Row> = conn
        .exec_first(s, bind(&r, lower, end))
        .map_err(sql("finding the next chunk's bound"))?;
    Ok(row.map(mysql::Row::unwrap))
}

/// Decides whether the chunk of a pending record committed, from the commit marker its
/// transaction wrote (the token there: it committed; another or none: it rolled back), and
/// updates the checkpoint in memory. A marker that cannot be read (its table dropped) is
/// decided by `--pending`, or refused.
fn settle_pending(
    conn: &mut Conn,
    marker: Option<&Marker>,
    id: &str,
    opts: &Options,
    c: &mut Checkpoint,
    p: Pending,
) -> Result<(), Error> {
    let read = match marker {
        Some(m) => m.read(conn, id).map_err(|e| e.to_string()),
        None => Err("this action writes no marker".to_string()),
    };
    let committed = match (read, opts.pending) {
        (Ok(token), _) => token == Some(p.token),
        (Err(_), PendingPolicy::Redo) => false,
        (Err(_), PendingPolicy::Skip) => true,
        (Err(why), PendingPolicy::Refuse) => {
            return Err(Error::PendingUnknown {
                after: show_opt(c.last.as_ref()),
                upper: show_opt(Some(&p.upper)),
                why,
            })
        }
    };
    if committed {
        c.last = Some(p.upper);
        c.archive_bytes = p.archive_after;
        c.archive_tail = p.archive_after_tail;
        c.totals.chunks += 1;
        c.totals.rows_walked += p.walked;
        c.totals.rows_affected += p.rows;
        if matches!(opts.action, Action::Archive { .. }) {
            c.totals.rows_archived += p.rows;
        }
    } else {
        c.archive_bytes = p.archive_before;
    }
    Ok(())
}

/// The rows of child table `c` whose foreign key references one of `parents` (rows of its
/// parent table, in that table's column order), locked FOR UPDATE, and their column kinds.
fn child_rows(
    conn: &mut Conn,
    c: &Child,
    parents: &[Vec<Value>],
) -> Result<(Vec<Vec<Value>>, Vec<ColumnKind>), Error> {
    // Each referenced tuple once; a NULL never matches a foreign key.
    let mut seen = std::collections::HashSet::new();
    let tuples: Vec<Vec<Value>> = parents
        .iter()
        .map(|r| kept(r, &c.ref_pos))
        .filter(|t| !t.contains(&Value::NULL))
        .filter(|t| seen.insert(format!("{t:?}")))
        .collect();
    let mut rows = Vec::new();
    let mut kinds = Vec::new();
    // At most 1000 tuples a statement: far below the 65,535 placeholders a prepared
    // statement may have.
    for batch in tuples.chunks(1000) {
        let what = format!(
            "reading the rows of {} that cascade from the chunk",
            c.table
        );
        let params: Vec<Value> = batch.iter().flatten().cloned().collect();
        let mut res = conn
            .exec_iter(fk::child_select(&c.edge, &c.columns, batch.len()), params)
            .map_err(sql(what.clone()))?;
        kinds = res.columns().as_ref().iter().map(ColumnKind::of).collect();
        for row in res.by_ref() {
            rows.push(row.map_err(sql(what.clone()))?.unwrap());
        }
    }
    Ok((rows, kinds))
}

/// The outcome of one chunk.
struct Done {
    upper: Vec<Value>,
    walked: u64,
    affected: u64,
    archived: u64,
    /// Rows of child tables archived (--archive-children).
    children: u64,
    last: bool,
}

struct Walk<'a> {
    conn: &'a mut Conn,
    job: &'a Job,
    opts: &'a Options,
    archive: Option<&'a mut Archive>,
    ck: &'a mut Checkpoint,
    state_path: &'a std::path::Path,
    /// Set while COMMIT is in flight: a failure then leaves the chunk's outcome unknown, so
    /// the archive and the pending record are kept for the resumed run to settle.
    committing: bool,
    /// The commit marker (archive+delete and update jobs).
    marker: Option<&'a Marker>,
    /// The job's id (its marker row).
    id: &'a str,
    session: conn::Session,
}

/// A pause in progress.
struct Open {
    cause: Cause,
    began: Instant,
    at: Duration,
}

fn pause_record(cause: &Cause, at: Duration, lasted: Duration) -> Pause {
    let (kind, subject, value, limit) = match cause {
        Cause::Load {
            variable,
            value,
            max,
            ..
        } => ("load", variable.clone(), Some(*value), Some(*max)),
        Cause::CriticalLoad {
            variable,
            value,
            max,
        } => ("critical_load", variable.clone(), Some(*value), Some(*max)),
        Cause::ReplicaLag {
            replica,
            lag_s,
            max_s,
        } => ("replica_lag", replica.clone(), Some(*lag_s), Some(*max_s)),
        Cause::History { length, max } => (
            "history",
            "history list length".into(),
            Some(*length as f64),
            Some(*max as f64),
        ),
        Cause::Window { window, .. } => ("window", window.clone(), None, None),
        Cause::NotAnswering { server, .. } => ("server_not_answering", server.clone(), None, None),
    };
    Pause {
        cause: kind.into(),
        message: cause.to_string(),
        subject,
        value,
        limit,
        at_s: at.as_secs_f64(),
        duration_s: lasted.as_secs_f64(),
    }
}

impl Walk<'_> {
    fn run(
        &mut self,
        sizer: &mut ChunkSizer,
        stop: &AtomicBool,
        obs: &mut dyn Observer,
        estimate: u64,
    ) -> Result<ChunkRun, Error> {
        let t0 = Instant::now();
        let mut guard = Guard::new(self.opts.guard.clone());
        let variables = self.opts.guard.variables();
        let mut replicas: Vec<Replica> = self
            .opts
            .replicas
            .iter()
            .map(|d| Replica::new(d, &self.opts.tls, &self.opts.net))
            .collect();
        let mut r = ChunkRun {
            chunk_rows_min: u64::MAX,
            ..ChunkRun::default()
        };
        let mut times: Vec<f64> = Vec::new();
        let mut open: Option<Open> = None;
        let mut working = Duration::ZERO;
        let mut sleeping = Duration::ZERO;
        let mut paused = Duration::ZERO;
        let close = |open: &mut Option<Open>,
                     r: &mut ChunkRun,
                     paused: &mut Duration,
                     obs: &mut dyn Observer| {
            if let Some(o) = open.take() {
                let lasted = o.began.elapsed();
                *paused += lasted;
                r.pauses.push(pause_record(&o.cause, o.at, lasted));
                obs.resumed(lasted);
            }
        };
        let outcome = loop {
            if self.ck.finished {
                break "finished";
            }
            if stop.load(Ordering::SeqCst) {
                break "interrupted";
            }
            if self.opts.run_time.is_some_and(|rt| t0.elapsed() >= rt) {
                break "run_time";
            }
            // The window, then the guard.
            let mut cause = None;
            if let Some(w) = &self.opts.window {
                let now = jiff::Zoned::now().time();
                if !w.contains(now) {
                    cause = Some(Cause::Window {
                        window: w.to_string(),
                        now: now.strftime("%H:%M:%S").to_string(),
                    });
                }
            }
            if cause.is_none() {
                obs.in_flight(Some("sampling the load guard's status"));
                let s = match server::sample(
                    self.conn,
                    &variables,
                    &mut replicas,
                    self.opts.guard.max_history.is_some(),
                ) {
                    // Between chunks: no transaction is open; pause, reconnect, sample again.
                    Err(e) if conn::connection_lost(&e) => {
                        // A pause in progress ends here (not resumed: its cause changed).
                        if let Some(o) = open.take() {
                            paused += o.began.elapsed();
                            r.pauses
                                .push(pause_record(&o.cause, o.at, o.began.elapsed()));
                        }
                        let c = Cause::NotAnswering {
                            server: conn::server_of(&self.opts.dsn),
                            error: conn::describe(&e, &self.opts.net),
                        };
                        obs.pause(&c);
                        open = Some(Open {
                            cause: c,
                            began: Instant::now(),
                            at: t0.elapsed(),
                        });
                        obs.in_flight(Some("reconnecting to the server"));
                        let old = self.conn.connection_id();
                        let o = self.opts;
                        match conn::reconnect(
                            &o.dsn,
                            &o.tls,
                            &o.net,
                            &self.session,
                            old,
                            Instant::now(),
                            stop,
                        )? {
                            Reconnect::Connected(c) => *self.conn = c,
                            Reconnect::Interrupted => break "interrupted",
                            Reconnect::GaveUp { attempts, last } => {
                                r.stop_reason =
                                    Some(conn::gave_up(&e, &o.dsn, &o.net, attempts, &last));
                                break "stopped";
                            }
                        }
                        close(&mut open, &mut r, &mut paused, obs);
                        continue;
                    }
                    s => s?,
                };
                obs.in_flight(None);
                match guard.decide(&s, t0.elapsed()) {
                    Decision::Run => {}
                    Decision::Pause(c) => cause = Some(c),
                    Decision::Stop(h) => {
                        r.stop_reason = Some(h.to_string());
                        break "stopped";
                    }
                }
            }
            if let Some(c) = cause {
                if open.is_none() {
                    obs.pause(&c);
                    open = Some(Open {
                        cause: c,
                        began: Instant::now(),
                        at: t0.elapsed(),
                    });
                }
                nap(self.opts.check_interval, stop);
                continue;
            }
            close(&mut open, &mut r, &mut paused, obs);

            let started = Instant::now();
            let doing = format!(
                "running the chunk after {}",
                show_opt(self.ck.last.as_ref())
            );
            obs.in_flight(Some(&doing));
            let d = self.chunk(sizer, &mut r.retries).map_err(|e| {
                let id = self.conn.connection_id();
                let held = conn::held(self.ck, self.state_path, Some(id));
                conn::explain(e, &self.opts.dsn, &self.opts.net, Some(&doing), &held)
            })?;
            obs.in_flight(None);
            let took = started.elapsed();
            working += took;
            r.chunks += 1;
            r.rows_walked += d.walked;
            r.rows_affected += d.affected;
            r.rows_archived += d.archived;
            r.child_rows_archived += d.children;
            if d.walked > 0 {
                r.chunk_rows_min = r.chunk_rows_min.min(d.walked);
                r.chunk_rows_max = r.chunk_rows_max.max(d.walked);
                r.chunk_rows_last = d.walked;
            }
            times.push(took.as_secs_f64() * 1e3);
            sizer.record(d.walked, took);
            obs.chunk(&Progress {
                chunks: r.chunks,
                rows_walked: r.rows_walked,
                rows_affected: r.rows_affected,
                rows_archived: r.rows_archived,
                chunk_rows: sizer.current(),
                chunk_time: took,
                rows_estimate: estimate,
            });
            if d.last {
                break "finished";
            }
            let nap_for = took.mul_f64(self.opts.sleep_coef.max(0.0));
            let s0 = Instant::now();
            nap(nap_for, stop);
            sleeping += s0.elapsed();
        };
        close(&mut open, &mut r, &mut paused, obs);
        if r.chunk_rows_min == u64::MAX {
            r.chunk_rows_min = 0;
        }
        times.sort_by(f64::total_cmp);
        r.chunk_time_p50_ms = times.get(times.len() / 2).copied().unwrap_or(0.0);
        r.chunk_time_max_ms = times.last().copied().unwrap_or(0.0);
        r.outcome = outcome.into();
        let elapsed = t0.elapsed();
        r.elapsed_s = elapsed.as_secs_f64();
        r.working_s = working.as_secs_f64();
        r.sleeping_s = sleeping.as_secs_f64();
        r.paused_s = paused.as_secs_f64();
        let done = if matches!(self.opts.action, Action::Archive { delete: false, .. }) {
            r.rows_archived
        } else {
            r.rows_affected
        };
        r.rows_per_s = if r.elapsed_s > 0.0 {
            done as f64 / r.elapsed_s
        } else {
            0.0
        };
        Ok(r)
    }

    /// Runs one chunk (with retries), commits it and saves the checkpoint.
    fn chunk(&mut self, sizer: &mut ChunkSizer, retries: &mut u64) -> Result<Done, Error> {
        let lower = self.ck.last.as_deref().map(values);
        let end = values(&self.ck.end);
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let before = self.archive.as_ref().map_or(0, |a| a.len());
            match self.try_chunk(lower.as_deref(), &end, sizer.current(), before) {
                Ok(d) => {
                    self.ck.last = Some(keyvals(&d.upper));
                    self.ck.pending = None;
                    self.ck.archive_bytes = self.archive.as_ref().map_or(0, |a| a.len());
                    self.ck.archive_tail = self.archive.as_ref().map(|a| a.tail()).transpose()?;
                    self.ck.totals.chunks += 1;
                    self.ck.totals.rows_walked += d.walked;
                    self.ck.totals.rows_affected += d.affected;
                    self.ck.totals.rows_archived += d.archived;
                    self.ck.finished = d.last;
                    self.ck.save(self.state_path)?;
                    return Ok(d);
                }
                Err(e) if self.committing => return Err(e),
                Err(e) => {
                    // A lost connection's transaction ends with its session; a ROLLBACK on
                    // it would wait out another --net-timeout.
                    if !conn::connection_lost(&e) {
                        let _ = self.conn.query_drop("ROLLBACK");
                    }
                    if let Some(a) = self.archive.as_mut() {
                        a.truncate(before)?;
                    }
                    if self.ck.pending.take().is_some() {
                        self.ck.save(self.state_path)?;
                    }
                    match e {
                        Error::Sql { source, .. } if server::is_lock_conflict(&source) => {
                            if attempt > self.opts.retries {
                                return Err(Error::Retries {
                                    after: show_opt(self.ck.last.as_ref()),
                                    attempts: attempt,
                                    source,
                                });
                            }
                            *retries += 1;
                            sizer.shrink();
                        }
                        e => return Err(e),
                    }
                }
            }
        }
    }

    fn try_chunk(
        &mut self,
        lower: Option<&[Value]>,
        end: &[Value],
        n: u64,
        before: u64,
    ) -> Result<Done, Error> {
        let job = self.job;
        let found = boundary(self.conn, job, lower, end, n)?;
        // No row n rows on, or that row is the end key itself: this is the last chunk.
        let last = found.as_deref().is_none_or(|u| u == end);
        let upper = found.unwrap_or_else(|| end.to_vec());
        let walked = if last {
            let r = key::range(&job.key, lower.is_some(), None);
            self.conn
                .exec_first::<u64, _, _>(
                    format!("SELECT COUNT(*) FROM {} WHERE {}", job.table, r.sql),
                    bind(&r, lower, &upper),
                )
                .map_err(sql("counting the last chunk's rows"))?
                .unwrap_or(0)
        } else {
            n
        };
        let range = job.range(lower.is_some());
        let params = bind(&range, lower, &upper);
        self.conn
            .query_drop("START TRANSACTION")
            .map_err(sql("START TRANSACTION"))?;
        let (mut affected, mut archived, mut children) = (0u64, 0u64, 0u64);
        if let Some(a) = self.archive.as_mut() {
            let delete = matches!(self.opts.action, Action::Archive { delete: true, .. });
            let mut res = self
                .conn
                .exec_iter(job.select(&range, delete), params.clone())
                .map_err(sql("reading the chunk's rows"))?;
            let kinds: Vec<ColumnKind> =
                res.columns().as_ref().iter().map(ColumnKind::of).collect();
            let mut rows = Vec::new();
            for row in res.by_ref() {
                rows.push(row.map_err(sql("reading the chunk's rows"))?.unwrap());
            }
            drop(res);
            archived = rows.len() as u64;
            let names: Vec<String> = job.keep.iter().map(|&i| job.columns[i].clone()).collect();
            let kinds_kept: Vec<ColumnKind> = job.keep.iter().map(|&i| kinds[i].clone()).collect();
            let out: Vec<Vec<Value>> = rows.iter().map(|r| kept(r, &job.keep)).collect();
            let mut bytes = a.render(&names, &kinds_kept, &out);
            // The rows ON DELETE CASCADE will remove with these, parents before children,
            // locked so they cannot change before the DELETE.
            let mut read: Vec<Vec<Vec<Value>>> = Vec::with_capacity(job.children.len());
            for c in &job.children {
                let source = match c.from {
                    None => &rows,
                    Some(i) => &read[i],
                };
                let (crows, ckinds) = child_rows(self.conn, c, source)?;
                children += crows.len() as u64;
                if !crows.is_empty() {
                    let names: Vec<String> = c.keep.iter().map(|&i| c.columns[i].clone()).collect();
                    let ck: Vec<ColumnKind> = c.keep.iter().map(|&i| ckinds[i].clone()).collect();
                    let out: Vec<Vec<Value>> = crows.iter().map(|r| kept(r, &c.keep)).collect();
                    bytes.extend(a.render_for(&c.table, &names, &ck, &out));
                }
                read.push(crows);
            }
            a.append(&bytes)?;
        }
        let dml = match &self.opts.action {
            Action::Delete | Action::Archive { delete: true, .. } => {
                Some(job.statement(&self.opts.action, lower.is_some()).0)
            }
            Action::Update { .. } => Some(job.statement(&self.opts.action, lower.is_some()).0),
            Action::Archive { delete: false, .. } => None,
        };
        if let Some(dml) = dml {
            self.conn
                .exec_drop(dml, params)
                .map_err(sql("the chunk's statement"))?;
            affected = self.conn.affected_rows();
        }
        if let Action::Archive { delete: true, .. } = self.opts.action {
            if affected != archived {
                return Err(Error::ArchiveMismatch {
                    upper: show_opt(Some(&keyvals(&upper))),
                    archived,
                    deleted: affected,
                });
            }
        }
        let needs_pending = matches!(
            self.opts.action,
            Action::Update { .. } | Action::Archive { delete: true, .. }
        );
        if needs_pending && (affected > 0 || archived > 0) {
            // The marker row in the chunk's own transaction, then the pending record with its
            // token: a resumed job finds the token in the marker table only if this commits.
            let token = marker::token();
            if let Some(m) = self.marker {
                m.write(
                    self.conn,
                    self.id,
                    token,
                    self.ck.totals.chunks + 1,
                    &show(&keyvals(&upper)).join(", "),
                )?;
            }
            self.ck.pending = Some(Pending {
                upper: keyvals(&upper),
                archive_before: before,
                archive_after: self.archive.as_ref().map_or(0, |a| a.len()),
                rows: affected,
                walked,
                token,
                archive_after_tail: self.archive.as_ref().map(|a| a.tail()).transpose()?,
            });
            self.ck.save(self.state_path)?;
        }
        self.committing = true;
        self.conn.query_drop("COMMIT").map_err(sql(
            "COMMIT (the chunk's outcome is unknown: --resume settles it)",
        ))?;
        self.committing = false;
        Ok(Done {
            upper,
            walked,
            affected,
            archived,
            children,
            last,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbio_schema::mysql_chunk::Explain;

    fn ex(access: &str, key: Option<&str>, extra: Option<&str>) -> Explain {
        Explain {
            access: access.into(),
            key: key.map(Into::into),
            rows: Some(10),
            extra: extra.map(Into::into),
        }
    }

    #[test]
    fn a_full_scan_is_blamed_on_stale_statistics_when_the_facts_say_so() {
        // 13 rows estimated, more than 1000 counted: stale.
        let h = not_range_hint("d", "t", 13, 1000, 0);
        assert!(h.starts_with("The table's statistics look stale: they estimate 13 rows, but it holds more than 1000;"), "{h}");
        assert!(h.contains("ANALYZE TABLE `d`.`t`"), "{h}");
        // A resumed job that walked more than the estimate.
        let h = not_range_hint("d", "t", 5000, 1000, 120_000);
        assert!(h.contains("this job alone walked 120000"), "{h}");
        // Plausible statistics: the condition is the suspect, ANALYZE still offered.
        let h = not_range_hint("d", "t", 2_000_000, 1000, 0);
        assert!(h.starts_with("Check --where"), "{h}");
        assert!(h.contains("2000000 rows estimated"), "{h}");
    }

    #[test]
    fn default_state_file_names_stay_in_their_directory() {
        assert_eq!(
            state_file_name("shop", "orders", "ab"),
            "chunk-shop.orders-ab.json"
        );
        assert_eq!(
            state_file_name("a/..", "t b", "ab"),
            "chunk-a___.t_b-ab.json"
        );
    }

    #[test]
    fn only_a_range_scan_of_the_walked_key_is_bounded() {
        assert!(bounded(
            &ex("range", Some("PRIMARY"), Some("Using where")),
            "PRIMARY"
        ));
        assert!(!bounded(&ex("ALL", None, Some("Using where")), "PRIMARY"));
        assert!(!bounded(&ex("index", Some("PRIMARY"), None), "PRIMARY"));
        assert!(!bounded(&ex("range", Some("created"), None), "PRIMARY"));
        assert!(!bounded(&ex("ref", Some("PRIMARY"), None), "PRIMARY"));
        assert!(bounded(&ex("", None, Some("Impossible WHERE")), "PRIMARY"));
        // A const row read through another index first is not the key's range.
        assert!(!bounded(
            &ex(
                "",
                None,
                Some("Impossible WHERE noticed after reading const tables")
            ),
            "PRIMARY"
        ));
    }
}
