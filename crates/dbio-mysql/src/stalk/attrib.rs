//! Attribution by processlist sampling: every sample counts the active threads (not Sleep, not
//! daemons, not the stalker's own SHOW) by user, host, database and statement digest; a
//! group's share of a window is its thread-samples over all the window's thread-samples, and
//! its average is its thread-samples over the window's samples (threads busy at once). The
//! collection is ranked against the lead-up: the largest share of the collection first, ties
//! broken by the largest growth from the lead-up.

use super::format::{digest, host_only};
use super::trigger::Thread;
use dbio_schema::stalk::{Attribution, AttributionRow};
use std::collections::HashMap;

/// Whether a thread is the stalker's own (or pt-stalk's) sampling query.
pub fn is_sampler(t: &Thread) -> bool {
    let i = t.info.trim_start().to_ascii_uppercase();
    i.starts_with("SHOW FULL PROCESSLIST")
        || i.starts_with("SHOW PROCESSLIST")
        || i.starts_with("SHOW GLOBAL STATUS")
        || i.starts_with("SHOW ENGINE INNODB STATUS")
}

#[derive(Default, Clone, Copy)]
struct Tally {
    pre: u64,
    collect: u64,
    max_time: u64,
}

/// Ranks what the collection's samples (`collect`) show against the lead-up's (`pre`).
pub fn attribute(pre: &[Vec<Thread>], collect: &[Vec<Thread>]) -> Attribution {
    let mut by_stmt: HashMap<(String, String, String, String), Tally> = HashMap::new();
    let mut by_user: HashMap<String, Tally> = HashMap::new();
    let mut totals = (0u64, 0u64);
    for (samples, in_collect) in [(pre, false), (collect, true)] {
        for s in samples {
            for t in s.iter().filter(|t| t.active() && !is_sampler(t)) {
                let k = (
                    t.user.clone(),
                    host_only(&t.host).to_string(),
                    t.db.clone(),
                    digest(&t.info),
                );
                for tally in [
                    by_stmt.entry(k).or_default(),
                    by_user.entry(t.user.clone()).or_default(),
                ] {
                    if in_collect {
                        tally.collect += 1;
                    } else {
                        tally.pre += 1;
                    }
                    tally.max_time = tally.max_time.max(t.time_s);
                }
                if in_collect {
                    totals.1 += 1;
                } else {
                    totals.0 += 1;
                }
            }
        }
    }
    let row = |user: String, host: String, db: String, digest: String, t: &Tally| {
        let pct = |n: u64, of: u64| {
            if of == 0 {
                0.0
            } else {
                100.0 * n as f64 / of as f64
            }
        };
        let avg = |n: u64, of: usize| if of == 0 { 0.0 } else { n as f64 / of as f64 };
        AttributionRow {
            user,
            host,
            db,
            digest,
            collect_share_pct: pct(t.collect, totals.1),
            pre_share_pct: pct(t.pre, totals.0),
            collect_avg_threads: avg(t.collect, collect.len()),
            pre_avg_threads: avg(t.pre, pre.len()),
            max_time_s: t.max_time,
        }
    };
    let mut statements: Vec<AttributionRow> = by_stmt
        .iter()
        .map(|((u, h, d, g), t)| row(u.clone(), h.clone(), d.clone(), g.clone(), t))
        .collect();
    let mut users: Vec<AttributionRow> = by_user
        .iter()
        .map(|(u, t)| row(u.clone(), String::new(), String::new(), String::new(), t))
        .collect();
    for v in [&mut statements, &mut users] {
        v.sort_by(|a, b| {
            b.collect_share_pct
                .total_cmp(&a.collect_share_pct)
                .then(
                    (b.collect_avg_threads - b.pre_avg_threads)
                        .total_cmp(&(a.collect_avg_threads - a.pre_avg_threads)),
                )
                .then_with(|| (&a.user, &a.digest).cmp(&(&b.user, &b.digest)))
        });
    }
    Attribution {
        method: "processlist sampling".into(),
        pre_samples: pre.len() as u64,
        collect_samples: collect.len() as u64,
        statements,
        users,
        digests: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(user: &str, info: &str) -> Thread {
        Thread {
            user: user.into(),
            host: format!("10.0.0.{}:4000", user.len()),
            db: "shop".into(),
            command: "Query".into(),
            state: "executing".into(),
            info: info.into(),
            time_s: 1,
        }
    }

    #[test]
    fn the_newcomer_of_the_collection_ranks_first() {
        let app = t("app", "SELECT * FROM orders WHERE id = 5");
        let batch = t(
            "batch",
            "DELETE FROM orders WHERE created < '2020-01-01' LIMIT 1000",
        );
        let me = t("stalker", "SHOW FULL PROCESSLIST");
        let idle = Thread {
            command: "Sleep".into(),
            ..t("idle", "")
        };
        // Lead-up: one app thread per sample. Collection: 3 batch threads and 1 app thread.
        let pre = vec![vec![app.clone(), me.clone(), idle.clone()]; 4];
        let collect = vec![vec![batch.clone(), batch.clone(), batch.clone(), app.clone(), me]; 2];
        let a = attribute(&pre, &collect);
        assert_eq!(a.pre_samples, 4);
        assert_eq!(a.collect_samples, 2);
        let first = &a.statements[0];
        assert_eq!(first.user, "batch");
        assert_eq!(first.host, "10.0.0.5");
        assert_eq!(first.digest, "DELETE FROM orders WHERE created < ? LIMIT ?");
        assert_eq!(first.collect_share_pct, 75.0);
        assert_eq!(first.pre_share_pct, 0.0);
        assert_eq!(first.collect_avg_threads, 3.0);
        assert_eq!(a.statements[1].user, "app");
        assert_eq!(a.statements[1].pre_share_pct, 100.0);
        assert_eq!(
            a.statements.len(),
            2,
            "the stalker and idle threads are left out"
        );
        assert_eq!(a.users[0].user, "batch");
        assert_eq!(a.users[0].digest, "");
    }

    #[test]
    fn empty_windows_give_zero_shares() {
        let a = attribute(&[], &[vec![t("x", "SELECT 1")]]);
        assert_eq!(a.statements[0].collect_share_pct, 100.0);
        assert_eq!(a.statements[0].pre_share_pct, 0.0);
        assert_eq!(a.statements[0].pre_avg_threads, 0.0);
        let none = attribute(&[], &[]);
        assert!(none.statements.is_empty());
    }
}
