//! Attribution by statement time: `performance_schema.events_statements_summary_by_digest`
//! read at three moments (a baseline about `--pre` before the trigger, the trigger, the end of
//! the collection) into the capture's `ps-digests` file; the report ranks the digests by their
//! share of the statement time of the collection (end minus trigger) against the lead-up
//! (trigger minus baseline).
//!
//! The file is dbio's own (pt-stalk has none): for each snapshot a `TS <epoch> <date>` line, a
//! `# <label>` line (`baseline`, `trigger`, `end`), then one line per digest: schema, digest
//! hash, calls, timer wait in picoseconds, rows examined and the digest text, tab-separated
//! (tabs and line breaks in the text become spaces).

use crate::Error;
use dbio_schema::stalk::{DigestAttribution, DigestShare};
use mysql::prelude::Queryable;
use mysql::Conn;
use std::collections::HashMap;

/// The digest table's columns the snapshot keeps (MySQL 5.6+, MariaDB 10.0+).
const QUERY: &str = "SELECT IFNULL(SCHEMA_NAME, ''), IFNULL(DIGEST, ''), COUNT_STAR, \
    SUM_TIMER_WAIT, SUM_ROWS_EXAMINED, IFNULL(DIGEST_TEXT, '') \
    FROM performance_schema.events_statements_summary_by_digest";

/// The longest digest text kept (the server's own limit is 1,024 bytes by default).
const TEXT_MAX: usize = 1024;

/// One digest's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Row {
    /// SCHEMA_NAME (empty: none).
    pub schema: String,
    /// DIGEST (the hash).
    pub digest: String,
    /// COUNT_STAR.
    pub calls: u64,
    /// SUM_TIMER_WAIT, picoseconds.
    pub wait_ps: u64,
    /// SUM_ROWS_EXAMINED.
    pub rows_examined: u64,
    /// DIGEST_TEXT.
    pub text: String,
}

/// One reading of the table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// When (epoch seconds).
    pub ts: f64,
    /// `baseline`, `trigger` or `end`.
    pub label: String,
    /// Every digest.
    pub rows: Vec<Row>,
}

/// Whether the server collects statement digests (`@@performance_schema` on and the digest
/// table readable); why not, when not.
pub fn available(c: &mut Conn) -> Result<(), String> {
    let on: Option<String> = c
        .query_first("SELECT @@performance_schema")
        .map_err(|e| format!("reading @@performance_schema: {e}"))?;
    if !matches!(on.as_deref(), Some("1" | "ON")) {
        return Err("performance_schema is OFF".into());
    }
    c.query_drop("SELECT 1 FROM performance_schema.events_statements_summary_by_digest LIMIT 1")
        .map_err(|e| format!("cannot read events_statements_summary_by_digest: {e}"))
}

/// Reads the digest table now.
pub fn read(c: &mut Conn, ts: f64, label: &str) -> Result<Snapshot, Error> {
    let rows: Vec<(String, String, u64, u64, u64, String)> =
        c.query(QUERY).map_err(|source| Error::Sql {
            what: "reading performance_schema.events_statements_summary_by_digest".into(),
            source,
        })?;
    Ok(Snapshot {
        ts,
        label: label.to_string(),
        rows: rows
            .into_iter()
            .map(
                |(schema, digest, calls, wait_ps, rows_examined, text)| Row {
                    schema,
                    digest,
                    calls,
                    wait_ps,
                    rows_examined,
                    text: one_line(&text),
                },
            )
            .collect(),
    })
}

fn one_line(s: &str) -> String {
    let mut t: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if t.len() > TEXT_MAX {
        let mut end = TEXT_MAX;
        while !t.is_char_boundary(end) {
            end -= 1;
        }
        t.truncate(end);
    }
    t
}

/// A snapshot as the `ps-digests` file holds it.
pub fn format(s: &Snapshot) -> String {
    let mut out = super::format::ts_line(s.ts);
    out.push_str(&format!("# {}\n", s.label));
    for r in &s.rows {
        out.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\n",
            one_line(&r.schema),
            one_line(&r.digest),
            r.calls,
            r.wait_ps,
            r.rows_examined,
            one_line(&r.text)
        ));
    }
    out
}

/// The snapshots of a `ps-digests` file; malformed lines are skipped and counted.
pub fn parse(text: &str) -> (Vec<Snapshot>, usize) {
    let mut out: Vec<Snapshot> = Vec::new();
    let mut bad = 0;
    for l in text.lines() {
        if let Some(rest) = l.strip_prefix("TS ") {
            match rest.split_whitespace().next().and_then(|t| t.parse().ok()) {
                Some(ts) => out.push(Snapshot {
                    ts,
                    ..Snapshot::default()
                }),
                None => bad += 1,
            }
            continue;
        }
        let Some(s) = out.last_mut() else {
            bad += 1;
            continue;
        };
        if let Some(label) = l.strip_prefix("# ") {
            s.label = label.trim().to_string();
            continue;
        }
        let f: Vec<&str> = l.splitn(6, '\t').collect();
        let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
        match (f.len(), num(2), num(3), num(4)) {
            (6, Some(calls), Some(wait_ps), Some(rows_examined)) => s.rows.push(Row {
                schema: f[0].to_string(),
                digest: f[1].to_string(),
                calls,
                wait_ps,
                rows_examined,
                text: f[5].to_string(),
            }),
            _ => bad += 1,
        }
    }
    (out, bad)
}

/// The change of each digest from `a` to `b` (a digest new in `b` counts whole; one whose
/// counters went down, the table having been truncated or the row evicted and reused, counts
/// its `b` values).
fn delta(a: &Snapshot, b: &Snapshot) -> HashMap<(String, String), Row> {
    let before: HashMap<(&str, &str), &Row> = a
        .rows
        .iter()
        .map(|r| ((r.schema.as_str(), r.digest.as_str()), r))
        .collect();
    b.rows
        .iter()
        .filter_map(|r| {
            let d = match before.get(&(r.schema.as_str(), r.digest.as_str())) {
                Some(p) if p.calls <= r.calls && p.wait_ps <= r.wait_ps => Row {
                    calls: r.calls - p.calls,
                    wait_ps: r.wait_ps - p.wait_ps,
                    rows_examined: r.rows_examined.saturating_sub(p.rows_examined),
                    ..r.clone()
                },
                _ => r.clone(),
            };
            (d.calls > 0).then(|| ((d.schema.clone(), d.digest.clone()), d))
        })
        .collect()
}

/// Ranks the digests of a capture: the collection (trigger to end) against the lead-up
/// (baseline to trigger), the largest share of the collection's statement time first, at most
/// `top` of them. None without the three snapshots.
pub fn attribute(snaps: &[Snapshot], top: usize) -> Option<DigestAttribution> {
    let find = |l: &str| snaps.iter().find(|s| s.label == l);
    let (base, fire, end) = (find("baseline")?, find("trigger")?, find("end")?);
    let pre = delta(base, fire);
    let collect = delta(fire, end);
    let total = |m: &HashMap<(String, String), Row>| m.values().map(|r| r.wait_ps).sum::<u64>();
    let (pre_total, collect_total) = (total(&pre), total(&collect));
    let pct = |n: u64, of: u64| {
        if of == 0 {
            0.0
        } else {
            100.0 * n as f64 / of as f64
        }
    };
    let mut keys: Vec<&(String, String)> = collect.keys().chain(pre.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut rows: Vec<DigestShare> = keys
        .into_iter()
        .map(|k| {
            let c = collect.get(k);
            let p = pre.get(k);
            let any = c.or(p).expect("a key of one of the maps");
            DigestShare {
                schema: any.schema.clone(),
                digest: any.digest.clone(),
                text: any.text.clone(),
                collect_calls: c.map_or(0, |r| r.calls),
                collect_time_s: c.map_or(0.0, |r| r.wait_ps as f64 / 1e12),
                collect_share_pct: pct(c.map_or(0, |r| r.wait_ps), collect_total),
                collect_rows_examined: c.map_or(0, |r| r.rows_examined),
                pre_calls: p.map_or(0, |r| r.calls),
                pre_time_s: p.map_or(0.0, |r| r.wait_ps as f64 / 1e12),
                pre_share_pct: pct(p.map_or(0, |r| r.wait_ps), pre_total),
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.collect_share_pct
            .total_cmp(&a.collect_share_pct)
            .then(b.pre_share_pct.total_cmp(&a.pre_share_pct))
            .then(a.text.cmp(&b.text))
    });
    rows.truncate(top);
    Some(DigestAttribution {
        pre_window_s: fire.ts - base.ts,
        collect_window_s: end.ts - fire.ts,
        pre_statement_time_s: pre_total as f64 / 1e12,
        collect_statement_time_s: collect_total as f64 / 1e12,
        digests: rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(schema: &str, digest: &str, calls: u64, wait_ps: u64, text: &str) -> Row {
        Row {
            schema: schema.into(),
            digest: digest.into(),
            calls,
            wait_ps,
            rows_examined: calls * 10,
            text: text.into(),
        }
    }

    fn snap(ts: f64, label: &str, rows: Vec<Row>) -> Snapshot {
        Snapshot {
            ts,
            label: label.into(),
            rows,
        }
    }

    #[test]
    fn the_file_reads_back_what_was_written() {
        let s = snap(
            1795833566.5,
            "trigger",
            vec![row(
                "shop",
                "ab12",
                7,
                9_000_000,
                "SELECT\t* FROM `t`\nWHERE id = ?",
            )],
        );
        let text = format(&s) + &format(&snap(1795833570.0, "end", vec![]));
        let (back, bad) = parse(&text);
        assert_eq!(bad, 0);
        assert_eq!(back.len(), 2);
        assert_eq!(back[0].label, "trigger");
        assert!((back[0].ts - 1795833566.5).abs() < 0.01);
        assert_eq!(back[0].rows[0].text, "SELECT * FROM `t` WHERE id = ?");
        assert_eq!(back[0].rows[0].calls, 7);
        let (_, bad) = parse("x\nTS nope\n");
        assert_eq!(bad, 2);
    }

    #[test]
    fn the_collection_is_ranked_by_statement_time_against_the_lead_up() {
        let base = snap(
            100.0,
            "baseline",
            vec![
                row("shop", "a", 1000, 2_000_000_000_000, "SELECT ? FROM orders"),
                row(
                    "shop",
                    "b",
                    10,
                    1_000_000_000,
                    "DELETE FROM orders WHERE id < ?",
                ),
            ],
        );
        let fire = snap(
            160.0,
            "trigger",
            vec![
                row("shop", "a", 1600, 3_000_000_000_000, "SELECT ? FROM orders"),
                row(
                    "shop",
                    "b",
                    10,
                    1_000_000_000,
                    "DELETE FROM orders WHERE id < ?",
                ),
            ],
        );
        let end = snap(
            190.0,
            "end",
            vec![
                row("shop", "a", 1700, 3_500_000_000_000, "SELECT ? FROM orders"),
                row(
                    "shop",
                    "b",
                    20,
                    2_001_000_000_000,
                    "DELETE FROM orders WHERE id < ?",
                ),
                row("", "c", 3, 500_000_000_000, "SHOW STATUS"),
            ],
        );
        let a = attribute(&[base, fire, end], 10).unwrap();
        assert_eq!((a.pre_window_s, a.collect_window_s), (60.0, 30.0));
        assert_eq!(a.collect_statement_time_s, 3.0);
        assert_eq!(a.pre_statement_time_s, 1.0);
        let d = &a.digests;
        assert_eq!(d[0].text, "DELETE FROM orders WHERE id < ?");
        assert!((d[0].collect_share_pct - 66.666).abs() < 0.01, "{d:?}");
        assert_eq!((d[0].collect_calls, d[0].pre_calls), (10, 0));
        assert_eq!(d[0].pre_share_pct, 0.0);
        assert_eq!(d[1].text, "SELECT ? FROM orders");
        assert_eq!(d[1].pre_share_pct, 100.0);
        assert_eq!(d[2].text, "SHOW STATUS");
        assert!(attribute(&[snap(1.0, "trigger", vec![])], 10).is_none());
    }

    #[test]
    fn a_truncated_table_counts_its_new_values() {
        let a = snap(1.0, "trigger", vec![row("s", "x", 100, 1000, "q")]);
        let b = snap(2.0, "end", vec![row("s", "x", 5, 50, "q")]);
        let d = delta(&a, &b);
        assert_eq!(d[&("s".to_string(), "x".to_string())].calls, 5);
    }
}
