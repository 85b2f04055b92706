//! `dbio mysql chunk` as text: the plan (key, statement, EXPLAIN, estimates), then with
//! --execute the final statistics block (chunks, rows, time working vs sleeping vs paused,
//! chunk sizes and times) and one line per pause with its cause.

use crate::export::table::{Column, Table};
use crate::export::Exporter;
use crate::export::Text;
use dbio_schema::mysql_chunk::{ChunkResult, ChunkRun};
use dbio_schema::units::format_duration;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::time::Duration;

impl Exporter<ChunkResult> for Text {
    fn export(&self, value: &ChunkResult, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(render_text(value).as_bytes())
    }
}

/// Seconds as `1.25s`, `3m12s`, `1h02m`.
fn secs(s: f64) -> String {
    if !s.is_finite() || s < 0.0 {
        return "?".into();
    }
    if s < 60.0 {
        return format!("{s:.2}s");
    }
    let t = s.round() as u64;
    if t < 3600 {
        format!("{}m{:02}s", t / 60, t % 60)
    } else {
        format!("{}h{:02}m", t / 3600, (t % 3600) / 60)
    }
}

fn key(k: &[String]) -> String {
    format!("({})", k.join(", "))
}

fn render_run(s: &mut String, r: &ChunkRun, archive_only: bool) {
    let outcome = match r.outcome.as_str() {
        "finished" => "finished: the walk reached the end key".to_string(),
        "interrupted" => "interrupted (Ctrl-C) after the chunk in progress".to_string(),
        "run_time" => "stopped at --run-time".to_string(),
        "stopped" => format!(
            "stopped by the guard: {}",
            r.stop_reason.as_deref().unwrap_or("?")
        ),
        o => o.to_string(),
    };
    let _ = writeln!(s, "outcome     {outcome}");
    let _ = writeln!(
        s,
        "chunks      {} committed, {} retried after a lock wait or deadlock",
        r.chunks, r.retries
    );
    let done = if archive_only {
        format!("{} archived", r.rows_archived)
    } else if r.rows_archived > 0 {
        format!(
            "{} affected ({} archived first)",
            r.rows_affected, r.rows_archived
        )
    } else {
        format!("{} affected", r.rows_affected)
    };
    let _ = writeln!(
        s,
        "rows        {done}, {} key rows walked, {:.0} rows/s",
        r.rows_walked, r.rows_per_s
    );
    let pct = |x: f64| {
        if r.elapsed_s > 0.0 {
            100.0 * x / r.elapsed_s
        } else {
            0.0
        }
    };
    let _ = writeln!(
        s,
        "time        {} in all: working {} ({:.0}%), sleeping {} ({:.0}%), paused {} ({:.0}%)",
        secs(r.elapsed_s),
        secs(r.working_s),
        pct(r.working_s),
        secs(r.sleeping_s),
        pct(r.sleeping_s),
        secs(r.paused_s),
        pct(r.paused_s)
    );
    let _ = writeln!(
        s,
        "chunk size  {}..{} key rows (last {}); chunk time p50 {:.1} ms, max {:.1} ms",
        r.chunk_rows_min,
        r.chunk_rows_max,
        r.chunk_rows_last,
        r.chunk_time_p50_ms,
        r.chunk_time_max_ms
    );
    if let Some(k) = &r.last_key {
        let _ = writeln!(s, "last key    {} (committed and checkpointed)", key(k));
    }
    if let (Some(f), Some(b)) = (&r.archive_file, r.archive_bytes) {
        let _ = writeln!(
            s,
            "archive     {f} ({b} bytes, flushed before each DELETE committed)"
        );
    }
    if r.child_rows_archived > 0 {
        let _ = writeln!(
            s,
            "children    {} rows of child tables archived before their parents' DELETE",
            r.child_rows_archived
        );
    }
    if r.job_rows_affected != r.rows_affected {
        let _ = writeln!(
            s,
            "job total   {} rows affected over every run",
            r.job_rows_affected
        );
    }
    if r.pauses.is_empty() {
        let _ = writeln!(s, "pauses      none");
        return;
    }
    let _ = writeln!(s, "pauses      {}", r.pauses.len());
    let mut t = Table::new(vec![
        Column::right("at"),
        Column::right("for"),
        Column::left("cause"),
        Column::left("why"),
    ]);
    for p in &r.pauses {
        t.row([
            secs(p.at_s),
            secs(p.duration_s),
            p.cause.clone(),
            p.message.clone(),
        ]);
    }
    for line in t.lines() {
        let _ = writeln!(s, "  {line}");
    }
}

/// The text block.
fn render_text(r: &ChunkResult) -> String {
    let mut s = String::new();
    let p = &r.plan;
    let _ = writeln!(
        s,
        "{}",
        if r.execute {
            "dbio mysql chunk: executed"
        } else {
            "dbio mysql chunk: dry run, nothing changed (add --execute to run it)"
        }
    );
    let _ = writeln!(s, "table       {}.{}", r.database, r.table);
    let _ = writeln!(s, "action      {}", r.action);
    let _ = writeln!(
        s,
        "where       {}",
        r.condition.as_deref().unwrap_or("(every row)")
    );
    let _ = writeln!(s, "key         {} {}", p.key_name, key(&p.key_columns));
    let _ = writeln!(s, "statement   {}", p.statement);
    let e = &p.explain;
    let _ = writeln!(
        s,
        "EXPLAIN     type {}, key {}, rows {}{}",
        e.access,
        e.key.as_deref().unwrap_or("NULL"),
        e.rows.map_or("?".into(), |r| r.to_string()),
        e.extra
            .as_deref()
            .map(|x| format!(", {x}"))
            .unwrap_or_default()
    );
    let _ = writeln!(
        s,
        "estimate    {} rows in the table, at most {} match (EXPLAIN of the condition); {} chunks of {} key rows; {} at {} a chunk, sleep-coef {}",
        p.table_rows_estimate,
        p.condition_rows_estimate,
        p.chunks_estimate,
        p.start_chunk_rows,
        secs(p.time_estimate_s),
        format_duration(Duration::from_secs_f64(p.chunk_time_s.max(0.0))),
        p.sleep_coef
    );
    if p.end_key.is_empty() {
        let _ = writeln!(s, "end key     none: the table is empty");
    } else {
        let _ = writeln!(
            s,
            "end key     {} (rows added later are not touched)",
            key(&p.end_key)
        );
    }
    if let Some(k) = &p.resume_after {
        let _ = writeln!(s, "resume      after {}", key(k));
    }
    let _ = writeln!(s, "checkpoint  {}", p.state_file);
    if let Some(m) = &p.marker_table {
        let _ = writeln!(
            s,
            "marker      {m} (written in each chunk's transaction: tells a resume whether a chunk in flight committed)"
        );
    }
    if !p.generated_columns.is_empty() {
        let _ = writeln!(
            s,
            "generated   {} (left out of the archive: the server computes them on restore)",
            p.generated_columns.join(", ")
        );
    }
    for c in &p.cascades {
        let _ = writeln!(
            s,
            "foreign key {} ({}) references {}: ON DELETE {}, about {} rows, {}",
            c.table,
            c.constraint,
            c.parent,
            c.delete_rule,
            c.rows_estimate,
            match c.handling.as_str() {
                "archived" => "archived with their parents (--archive-children)",
                "allowed" => "deleted or changed by the server, not archived (--allow-cascade)",
                "refused" => "refused: give --archive-children or --allow-cascade",
                _ => "no rows change (the DELETE fails while children exist)",
            }
        );
    }
    if let Some(run) = &r.run {
        render_run(&mut s, run, r.action == "archive");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_people_write_them() {
        assert_eq!(secs(1.254), "1.25s");
        assert_eq!(secs(192.0), "3m12s");
        assert_eq!(secs(3720.0), "1h02m");
        assert_eq!(secs(f64::NAN), "?");
    }
}
