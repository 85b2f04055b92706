//! The result of `dbio check` and its renderings: text grouped by device (worst first),
//! a Nagios plugin status line with perfdata, and Prometheus textfile gauges. JSON is the
//! serde form of [`CheckReport`].

use crate::rules::{Finding, Status};
use serde::Serialize;
use std::fmt::Write as _;

/// Counts of findings per status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// OK findings.
    pub ok: usize,
    /// WARN findings.
    pub warn: usize,
    /// CRIT findings.
    pub crit: usize,
    /// UNKNOWN findings.
    pub unknown: usize,
    /// ADVICE findings (tuning advice, no alarm).
    pub advice: usize,
}

/// The findings about one device, worst first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeviceGroup {
    /// Device, mount point or controller.
    pub device: String,
    /// Worst status in the group.
    pub status: Status,
    /// Findings, worst first.
    pub findings: Vec<Finding>,
}

/// The whole audit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    /// Schema name and version.
    pub schema: &'static str,
    /// Worst status overall.
    pub status: Status,
    /// Counts per status.
    pub counts: Counts,
    /// Findings grouped by device, worst group first.
    pub devices: Vec<DeviceGroup>,
}

fn worst<'a, I: IntoIterator<Item = &'a Finding>>(it: I) -> Status {
    it.into_iter()
        .map(|f| f.status)
        .max_by_key(|s| s.severity())
        .unwrap_or(Status::Ok)
}

impl CheckReport {
    /// Groups `findings` by device (first-seen order), worst group first, worst finding first.
    pub fn new(findings: Vec<Finding>) -> Self {
        let mut groups: Vec<DeviceGroup> = Vec::new();
        let mut counts = Counts::default();
        for f in findings {
            match f.status {
                Status::Ok => counts.ok += 1,
                Status::Warn => counts.warn += 1,
                Status::Crit => counts.crit += 1,
                Status::Unknown => counts.unknown += 1,
                Status::Advice => counts.advice += 1,
            }
            if let Some(g) = groups.iter_mut().find(|g| g.device == f.device) {
                g.findings.push(f);
            } else {
                groups.push(DeviceGroup {
                    device: f.device.clone(),
                    status: Status::Ok,
                    findings: vec![f],
                });
            }
        }
        for g in &mut groups {
            g.findings
                .sort_by_key(|f| std::cmp::Reverse(f.status.severity()));
            g.status = worst(&g.findings);
        }
        groups.sort_by_key(|g| std::cmp::Reverse(g.status.severity()));
        let status = groups
            .iter()
            .map(|g| g.status)
            .max_by_key(|s| s.severity())
            .unwrap_or(Status::Ok);
        CheckReport {
            schema: "dbio-check/1",
            status,
            counts,
            devices: groups,
        }
    }

    /// The status a monitoring system sees: ADVICE counts as OK, or as WARN with
    /// `advice_warns` (`dbio check --advice-warns`).
    pub fn nagios_status(&self, advice_warns: bool) -> Status {
        match self.status {
            Status::Advice if advice_warns => Status::Warn,
            Status::Advice => Status::Ok,
            s => s,
        }
    }

    /// Every finding, worst group first.
    pub fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.devices.iter().flat_map(|g| g.findings.iter())
    }
}

/// Text for people: one block per device, worst first; non-OK findings with evidence, why
/// and fix; OK findings on one line each.
pub fn render_text(r: &CheckReport) -> String {
    let mut s = String::new();
    let c = r.counts;
    let _ = writeln!(
        s,
        "dbio check: {} ({} critical, {} warning, {} unknown, {} advice, {} ok)",
        r.status.label(),
        c.crit,
        c.warn,
        c.unknown,
        c.advice,
        c.ok
    );
    let width = r.findings().map(|f| f.rule.len()).max().unwrap_or(10);
    for g in &r.devices {
        let _ = writeln!(s, "\n{:<7} {}", g.status.label(), g.device);
        for f in &g.findings {
            let _ = writeln!(
                s,
                "  {:<7} {:<width$}  {}",
                f.status.label(),
                f.rule,
                f.summary
            );
            if f.status != Status::Ok {
                let pad = " ".repeat(9);
                for (i, e) in f.evidence.iter().enumerate() {
                    let _ = writeln!(
                        s,
                        "{pad}{} {e}",
                        if i == 0 { "evidence:" } else { "         " }
                    );
                }
                let _ = writeln!(s, "{pad}why:      {}", f.why);
                if let Some(fix) = &f.fix {
                    let _ = writeln!(s, "{pad}fix:      {fix}");
                }
            }
        }
    }
    s
}

/// The Nagios plugin word for a status.
fn nagios_word(s: Status) -> &'static str {
    match s {
        Status::Ok | Status::Advice => "OK",
        Status::Warn => "WARNING",
        Status::Crit => "CRITICAL",
        Status::Unknown => "UNKNOWN",
    }
}

/// Nagios/Icinga plugin output: one status line with perfdata, then one line per non-OK
/// finding (long output, advice included). The exit code is [`Status::nagios_code`] of
/// [`CheckReport::nagios_status`]: advice alone is OK.
pub fn render_nagios(r: &CheckReport) -> String {
    render_nagios_with(r, false)
}

/// [`render_nagios`], with advice counted as a warning when `advice_warns`.
pub fn render_nagios_with(r: &CheckReport, advice_warns: bool) -> String {
    let c = r.counts;
    let bad: Vec<&Finding> = r.findings().filter(|f| f.status != Status::Ok).collect();
    let alarms = bad.iter().filter(|f| f.status != Status::Advice).count();
    let head = if bad.is_empty() {
        format!("{} rules OK", c.ok)
    } else if alarms == 0 && !advice_warns {
        let first: Vec<String> = bad
            .iter()
            .take(3)
            .map(|f| format!("{}: {}", f.device, f.summary))
            .collect();
        format!(
            "{} rules OK, {} advice: {}",
            c.ok,
            c.advice,
            first.join("; ")
        )
    } else {
        let first: Vec<String> = bad
            .iter()
            .take(3)
            .map(|f| format!("{}: {}", f.device, f.summary))
            .collect();
        let more = if bad.len() > 3 {
            format!("; and {} more", bad.len() - 3)
        } else {
            String::new()
        };
        format!(
            "{} critical, {} warning, {} unknown: {}{more}",
            c.crit,
            c.warn,
            c.unknown,
            first.join("; ")
        )
    };
    let head = head.replace('|', "/");
    let mut s = format!(
        "DBIO STORAGE {} - {head} | crit={};;;0 warn={};;;0 unknown={};;;0 ok={};;;0 advice={};;;0\n",
        nagios_word(r.nagios_status(advice_warns)),
        c.crit,
        c.warn,
        c.unknown,
        c.ok,
        c.advice
    );
    for f in bad {
        let _ = writeln!(
            s,
            "{} {} {}: {}",
            f.status.label(),
            f.device,
            f.rule,
            f.summary.replace('|', "/")
        );
    }
    s
}

fn prom_escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Prometheus text exposition for the node_exporter textfile collector: one
/// `dbio_check_status` gauge per rule and device (0 OK, 1 WARN, 2 CRIT, 3 UNKNOWN, as in
/// Nagios; advice is 0 there), one `dbio_check_advice` gauge per piece of advice, plus
/// counts per status.
pub fn render_prometheus(r: &CheckReport) -> String {
    let mut s = String::new();
    let advice: Vec<&Finding> = r
        .findings()
        .filter(|f| f.status == Status::Advice)
        .collect();
    s.push_str("# HELP dbio_check_status Storage audit rule status per device: 0 OK, 1 WARN, 2 CRIT, 3 UNKNOWN.\n");
    s.push_str("# TYPE dbio_check_status gauge\n");
    let mut seen = std::collections::HashSet::new();
    for f in r.findings() {
        if f.rule == "raid.note" || !seen.insert((f.device.clone(), f.rule.clone())) {
            continue;
        }
        let _ = writeln!(
            s,
            "dbio_check_status{{device=\"{}\",rule=\"{}\"}} {}",
            prom_escape(&f.device),
            prom_escape(&f.rule),
            f.status.nagios_code()
        );
    }
    if !advice.is_empty() {
        s.push_str("# HELP dbio_check_advice Tuning advice per device and rule (1 = advice given); no alarm.\n");
        s.push_str("# TYPE dbio_check_advice gauge\n");
        let mut seen = std::collections::HashSet::new();
        for f in advice {
            if !seen.insert((f.device.clone(), f.rule.clone())) {
                continue;
            }
            let _ = writeln!(
                s,
                "dbio_check_advice{{device=\"{}\",rule=\"{}\"}} 1",
                prom_escape(&f.device),
                prom_escape(&f.rule)
            );
        }
    }
    s.push_str("# HELP dbio_check_findings Number of audit findings per status.\n");
    s.push_str("# TYPE dbio_check_findings gauge\n");
    let c = r.counts;
    for (k, v) in [
        ("ok", c.ok),
        ("warn", c.warn),
        ("crit", c.crit),
        ("unknown", c.unknown),
        ("advice", c.advice),
    ] {
        let _ = writeln!(s, "dbio_check_findings{{status=\"{k}\"}} {v}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(dev: &str, rule: &str, st: Status) -> Finding {
        Finding::new(rule, dev, st, format!("{rule} is {}", st.label()), "why").fix("fix it")
    }

    #[test]
    fn grouping_and_order() {
        let r = CheckReport::new(vec![
            f("sda", "io.scheduler", Status::Ok),
            f("sda", "io.read_ahead", Status::Warn),
            f("raid c0 vd 0", "raid.write_policy", Status::Crit),
            f("raid c0 vd 0", "raid.vd_state", Status::Ok),
            f("sdb", "io.scheduler", Status::Unknown),
        ]);
        assert_eq!(r.status, Status::Crit);
        let order: Vec<&str> = r.devices.iter().map(|g| g.device.as_str()).collect();
        assert_eq!(order, ["raid c0 vd 0", "sda", "sdb"]);
        assert_eq!(r.devices[1].findings[0].rule, "io.read_ahead");
        assert_eq!(
            r.counts,
            Counts {
                ok: 2,
                warn: 1,
                crit: 1,
                unknown: 1,
                advice: 0
            }
        );
        let n = render_nagios(&r);
        assert!(n.starts_with("DBIO STORAGE CRITICAL - 1 critical, 1 warning, 1 unknown: raid c0 vd 0: raid.write_policy is CRIT"), "{n}");
        assert!(n
            .lines()
            .next()
            .unwrap()
            .ends_with("| crit=1;;;0 warn=1;;;0 unknown=1;;;0 ok=2;;;0 advice=0;;;0"));
        let p = render_prometheus(&r);
        assert!(
            p.contains("dbio_check_status{device=\"raid c0 vd 0\",rule=\"raid.write_policy\"} 2\n")
        );
        assert!(p.contains("dbio_check_status{device=\"sdb\",rule=\"io.scheduler\"} 3\n"));
        let t = render_text(&r);
        assert!(
            t.starts_with("dbio check: CRIT (1 critical, 1 warning, 1 unknown, 0 advice, 2 ok)")
        );
        assert!(t.contains("fix:      fix it"));
    }

    #[test]
    fn advice_is_shown_but_no_alarm() {
        let r = CheckReport::new(vec![
            f("sda", "io.scheduler", Status::Ok),
            f("tw_cli c0 u0", "raid.vd_state", Status::Advice),
        ]);
        assert_eq!(r.status, Status::Advice);
        assert_eq!(r.counts.advice, 1);
        assert_eq!(r.nagios_status(false), Status::Ok);
        assert_eq!(r.nagios_status(false).nagios_code(), 0);
        assert_eq!(r.nagios_status(true), Status::Warn);
        let n = render_nagios(&r);
        assert!(
            n.starts_with("DBIO STORAGE OK - 1 rules OK, 1 advice: tw_cli c0 u0: "),
            "{n}"
        );
        assert!(n.contains("\nADVICE tw_cli c0 u0 raid.vd_state: "), "{n}");
        let w = render_nagios_with(&r, true);
        assert!(w.starts_with("DBIO STORAGE WARNING - "), "{w}");
        let p = render_prometheus(&r);
        assert!(
            p.contains("dbio_check_status{device=\"tw_cli c0 u0\",rule=\"raid.vd_state\"} 0\n"),
            "{p}"
        );
        assert!(
            p.contains("dbio_check_advice{device=\"tw_cli c0 u0\",rule=\"raid.vd_state\"} 1\n"),
            "{p}"
        );
        assert!(
            p.contains("dbio_check_findings{status=\"advice\"} 1\n"),
            "{p}"
        );
        let t = render_text(&r);
        assert!(t.contains("ADVICE  tw_cli c0 u0"), "{t}");
    }

    #[test]
    fn all_ok_nagios() {
        let r = CheckReport::new(vec![f("sda", "io.scheduler", Status::Ok)]);
        assert_eq!(
            render_nagios(&r),
            "DBIO STORAGE OK - 1 rules OK | crit=0;;;0 warn=0;;;0 unknown=0;;;0 ok=1;;;0 advice=0;;;0\n"
        );
        assert_eq!(r.status.nagios_code(), 0);
    }
}
