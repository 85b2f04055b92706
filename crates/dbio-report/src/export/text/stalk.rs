//! `dbio mysql stalk --report` as text: what fired and when, the lead-up and the collection on
//! one time axis (seconds from the trigger), then who did it, largest share of the collection
//! first.

use crate::export::Exporter;
use crate::export::Text;
use dbio_schema::stalk::{AttributionRow, StalkReport};
use std::fmt::Write as _;
use std::io::{self, Write};

impl Exporter<StalkReport> for Text {
    fn export(&self, value: &StalkReport, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(render(value).as_bytes())
    }
}

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.prec$}"))
}

fn header(s: &mut String, r: &StalkReport) {
    let _ = writeln!(
        s,
        "capture {} ({}, made by {})",
        r.capture_dir, r.prefix, r.made_by
    );
    if let Some(c) = &r.capture {
        let _ = writeln!(s, "server {} on host {}", c.server, c.hostname);
        let vals: Vec<String> = c
            .trigger
            .values
            .iter()
            .map(|v| format!("{} = {}", v.comparison, opt(v.value, 1)))
            .collect();
        let _ = writeln!(
            s,
            "trigger {} held {} consecutive checks at {}: {}",
            c.trigger.expression,
            c.trigger.cycles,
            dbio_sys::diskstats::utc_datetime(c.trigger.fired_epoch_s as i64),
            vals.join(", ")
        );
        let _ = writeln!(
            s,
            "lead-up {} samples ({:.0}s asked, ring held {} KiB); collection {} samples every {:.1}s ({:.0}s asked){}",
            c.pre_samples,
            c.pre_s,
            c.pre_ring_bytes / 1024,
            c.collect_samples,
            c.interval_s,
            c.collect_s,
            c.stopped_early
                .as_ref()
                .map_or(String::new(), |w| format!("; stopped early: {w}"))
        );
        for e in &c.errors {
            let _ = writeln!(s, "error during the collection: {e}");
        }
    }
    if let Some(t) = &r.pt_trigger {
        for l in t.lines() {
            let _ = writeln!(s, "pt-stalk: {l}");
        }
    }
}

fn row(s: &mut String, a: &AttributionRow, by_user: bool) {
    let who = if by_user {
        a.user.clone()
    } else {
        let db = if a.db.is_empty() { "-" } else { &a.db };
        format!("{}@{} db {db}: {}", a.user, a.host, a.digest)
    };
    let _ = writeln!(
        s,
        "{:>6.1}% {:>6.1}% {:>8.2} {:>8.2} {:>6}  {who}",
        a.collect_share_pct,
        a.pre_share_pct,
        a.collect_avg_threads,
        a.pre_avg_threads,
        a.max_time_s
    );
}

fn render(r: &StalkReport) -> String {
    let mut s = String::new();
    header(&mut s, r);
    let _ = writeln!(
        s,
        "\ntimeline (t = seconds from the trigger; negative: the lead-up)"
    );
    let _ = writeln!(
        s,
        "{:>8} {:>8} {:>10} {:>7} {:>10} {:>7} {:>9}",
        "t_s", "running", "questions/s", "active", "device", "util%", "await_ms"
    );
    for p in &r.timeline {
        let _ = writeln!(
            s,
            "{:>8.1} {:>8} {:>10} {:>7} {:>10} {:>7} {:>9}",
            p.t_s,
            opt(p.threads_running, 0),
            opt(p.questions_per_s, 0),
            p.active_threads.map_or("-".into(), |v| v.to_string()),
            p.busiest_device.as_deref().unwrap_or("-"),
            opt(p.util_pct, 1),
            opt(p.await_ms, 2)
        );
    }
    let a = &r.attribution;
    let _ = writeln!(
        s,
        "\nwho: {} ({} samples in the lead-up, {} in the collection)",
        a.method, a.pre_samples, a.collect_samples
    );
    let head = format!(
        "{:>7} {:>7} {:>8} {:>8} {:>6}  ",
        "collect", "lead-up", "thr_now", "thr_pre", "max_t"
    );
    let _ = writeln!(s, "{head}user");
    for u in a.users.iter().take(10) {
        row(&mut s, u, true);
    }
    let _ = writeln!(s, "\n{head}user@host db: statement");
    for u in a.statements.iter().take(15) {
        row(&mut s, u, false);
    }
    if a.statements.is_empty() {
        let _ = writeln!(s, "(no active thread in any sample)");
    }
    if let Some(d) = &a.digests {
        let _ = writeln!(
            s,
            "\nstatement time by digest (performance_schema): {:.1} s in the {:.0} s of the collection, {:.1} s in the {:.0} s before the trigger",
            d.collect_statement_time_s, d.collect_window_s, d.pre_statement_time_s, d.pre_window_s
        );
        let _ = writeln!(
            s,
            "{:>7} {:>7} {:>9} {:>7} {:>11}  schema: statement",
            "collect", "lead-up", "time_s", "calls", "rows_exam"
        );
        for g in d.digests.iter().take(10) {
            let _ = writeln!(
                s,
                "{:>6.1}% {:>6.1}% {:>9.3} {:>7} {:>11}  {}: {}",
                g.collect_share_pct,
                g.pre_share_pct,
                g.collect_time_s,
                g.collect_calls,
                g.collect_rows_examined,
                if g.schema.is_empty() { "-" } else { &g.schema },
                g.text
            );
        }
    }
    for n in &r.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbio_schema::stalk::{Attribution, TimelinePoint};

    #[test]
    fn renders_timeline_and_attribution() {
        let r = StalkReport {
            capture_dir: "/tmp/c".into(),
            made_by: "pt-stalk".into(),
            prefix: "2026_11_28_02_39_26".into(),
            capture: None,
            pt_trigger: Some(
                "2026_11_28_02_39_26 Check results: status(Threads_running)=30".into(),
            ),
            timeline: vec![TimelinePoint {
                t_s: -1.0,
                threads_running: Some(30.0),
                questions_per_s: None,
                active_threads: Some(12),
                busiest_device: Some("vda".into()),
                util_pct: Some(97.25),
                await_ms: Some(1.5),
            }],
            attribution: Attribution {
                method: "processlist sampling".into(),
                pre_samples: 1,
                collect_samples: 2,
                statements: vec![AttributionRow {
                    user: "batch".into(),
                    host: "10.0.0.7".into(),
                    db: "shop".into(),
                    digest: "DELETE FROM orders WHERE id < ?".into(),
                    collect_share_pct: 71.0,
                    pre_share_pct: 0.0,
                    collect_avg_threads: 7.5,
                    pre_avg_threads: 0.0,
                    max_time_s: 12,
                }],
                users: vec![],
                digests: Some(dbio_schema::stalk::DigestAttribution {
                    pre_window_s: 60.0,
                    collect_window_s: 30.0,
                    pre_statement_time_s: 1.0,
                    collect_statement_time_s: 3.0,
                    digests: vec![dbio_schema::stalk::DigestShare {
                        schema: "shop".into(),
                        digest: "ab".into(),
                        text: "DELETE FROM `orders` WHERE `id` < ?".into(),
                        collect_calls: 10,
                        collect_time_s: 2.0,
                        collect_share_pct: 66.67,
                        collect_rows_examined: 100,
                        pre_calls: 0,
                        pre_time_s: 0.0,
                        pre_share_pct: 0.0,
                    }],
                }),
            },
            notes: vec![],
        };
        let t = render(&r);
        assert!(
            t.contains("pt-stalk: 2026_11_28_02_39_26 Check results"),
            "{t}"
        );
        assert!(
            t.contains("    -1.0       30          -      12        vda    97.2      1.50"),
            "{t}"
        );
        assert!(t.contains("  71.0%    0.0%     7.50     0.00     12  batch@10.0.0.7 db shop: DELETE FROM orders WHERE id < ?"), "{t}");
        assert!(
            t.contains("3.0 s in the 30 s of the collection, 1.0 s in the 60 s before"),
            "{t}"
        );
        assert!(
            t.contains("  66.7%    0.0%     2.000      10         100  shop: DELETE FROM `orders` WHERE `id` < ?"),
            "{t}"
        );
    }
}
