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
        let _ = writeln!(
            s,
            "\n{:<7} {}{}",
            g.status.label(),
            g.device,
            paths_note(&g.device, g.findings.iter().flat_map(|f| f.paths.iter()))
        );
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

/// `  (paths: /a, /b)` when the audited paths a finding (or a group) applies to are not
/// just its device; empty otherwise.
fn paths_note<'a>(device: &str, paths: impl IntoIterator<Item = &'a String>) -> String {
    let mut list: Vec<&str> = Vec::new();
    for p in paths {
        if !list.contains(&p.as_str()) {
            list.push(p);
        }
    }
    if list.is_empty() || list == [device] {
        String::new()
    } else {
        format!("  (paths: {})", list.join(", "))
    }
}

/// The longest Nagios status text (the first line before the perfdata): monitoring UIs,
/// SMS and pager gateways cut longer lines.
pub const NAGIOS_STATUS_MAX: usize = 80;

/// `text` cut to at most `max` characters, ending in `...` when cut.
fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(3)).collect();
    out.push_str("...");
    out
}

/// The Nagios plugin output for a `dbio check` that could not run (a usage error, an
/// unreadable mount table, an output file that cannot be written): the UNKNOWN status line
/// (exit code 3), cut to [`NAGIOS_STATUS_MAX`] characters, then the whole message as long
/// output when the line does not hold it.
pub fn render_nagios_error(message: &str) -> String {
    let message = message.trim().replace('|', "/");
    let first = message.lines().next().unwrap_or("");
    let line = clip(
        &format!("DBIO STORAGE UNKNOWN - {first}"),
        NAGIOS_STATUS_MAX,
    );
    if message.lines().count() <= 1 && !line.ends_with("...") {
        return format!("{line}\n");
    }
    format!("{line}\n{message}\n")
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

/// [`render_nagios`], with advice counted as a warning when `advice_warns`. The status text
/// is short (at most [`NAGIOS_STATUS_MAX`] characters): the alarm counts that are not zero
/// (all counts are in the perfdata) and the worst finding (its device, cut or left out when
/// the line is too long, and its rule); every non-OK finding follows in the long output.
pub fn render_nagios_with(r: &CheckReport, advice_warns: bool) -> String {
    let c = r.counts;
    let bad: Vec<&Finding> = r.findings().filter(|f| f.status != Status::Ok).collect();
    let alarms = bad.iter().filter(|f| f.status != Status::Advice).count();
    let word = nagios_word(r.nagios_status(advice_warns));
    let counts = if alarms == 0 && !advice_warns {
        let mut v = vec![format!("{} rules OK", c.ok)];
        if c.advice > 0 {
            v.push(format!("{} advice", c.advice));
        }
        v
    } else {
        [
            (c.crit, "critical"),
            (c.warn, "warning"),
            (c.unknown, "unknown"),
            (if advice_warns { c.advice } else { 0 }, "advice"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, w)| format!("{n} {w}"))
        .collect()
    };
    let mut head = format!("DBIO STORAGE {word} - {}", counts.join(", "));
    if let Some(f) = bad.first() {
        // Cut the device name, or leave it out, rather than cut the rule id.
        let room = NAGIOS_STATUS_MAX.saturating_sub(head.chars().count() + f.rule.len() + 3);
        if room >= 8 {
            head.push_str(&format!(": {} {}", clip(&f.device, room), f.rule));
        } else {
            head.push_str(&format!(": {}", f.rule));
        }
    }
    let head = clip(&head.replace('|', "/"), NAGIOS_STATUS_MAX);
    let mut s = format!(
        "{head} | crit={};;;0 warn={};;;0 unknown={};;;0 ok={};;;0 advice={};;;0\n",
        c.crit, c.warn, c.unknown, c.ok, c.advice
    );
    for f in bad {
        let _ = writeln!(
            s,
            "{} {} {}: {}{}",
            f.status.label(),
            f.device,
            f.rule,
            f.summary,
            paths_note(&f.device, &f.paths)
        );
    }
    // `|` starts perfdata in the long output too.
    let (first, rest) = s.split_at(s.find('\n').unwrap_or(0) + 1);
    format!("{first}{}", rest.replace('|', "/"))
}

fn prom_escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The Prometheus labels of a finding: its [`Labels`](crate::rules::Labels) (the kernel
/// device name, mount point, RAID tool, controller, volume, file), then the rule.
fn prom_labels(f: &Finding) -> String {
    let fallback;
    let mut pairs = f.labels.pairs();
    if f.labels.is_empty() {
        // A finding built without labels: its device, when that is a device name.
        fallback = crate::rules::Labels::device_name(&f.device);
        if let Some(d) = &fallback {
            pairs.push(("device", d));
        }
    }
    pairs.push(("rule", &f.rule));
    let v: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", prom_escape(v)))
        .collect();
    v.join(",")
}

/// One sample per label set (the worst status when two findings share one), in first-seen
/// order: Prometheus refuses a repeated series.
fn prom_samples<'a>(findings: impl Iterator<Item = &'a Finding>) -> Vec<(String, &'a Finding)> {
    let mut out: Vec<(String, &Finding)> = Vec::new();
    for f in findings {
        let labels = prom_labels(f);
        match out.iter_mut().find(|(l, _)| *l == labels) {
            Some(slot) if f.status.severity() > slot.1.status.severity() => slot.1 = f,
            Some(_) => {}
            None => out.push((labels, f)),
        }
    }
    out
}

/// Prometheus text exposition for the node_exporter textfile collector: one
/// `dbio_check_status` gauge per rule and subject (0 OK, 1 WARN, 2 CRIT, 3 UNKNOWN, as in
/// Nagios; advice is 0 there), one `dbio_check_advice` gauge per piece of advice, plus
/// counts per status. The `device` label holds a kernel device name only; the mount point,
/// RAID tool, controller, volume and source file have labels of their own.
pub fn render_prometheus(r: &CheckReport) -> String {
    let mut s = String::new();
    s.push_str("# HELP dbio_check_status Storage audit rule status per device: 0 OK, 1 WARN, 2 CRIT, 3 UNKNOWN.\n");
    s.push_str("# TYPE dbio_check_status gauge\n");
    for (labels, f) in prom_samples(r.findings().filter(|f| f.rule != "raid.note")) {
        let _ = writeln!(
            s,
            "dbio_check_status{{{labels}}} {}",
            f.status.nagios_code()
        );
    }
    let advice = prom_samples(r.findings().filter(|f| f.status == Status::Advice));
    if !advice.is_empty() {
        s.push_str("# HELP dbio_check_advice Tuning advice per device and rule (1 = advice given); no alarm.\n");
        s.push_str("# TYPE dbio_check_advice gauge\n");
        for (labels, _) in advice {
            let _ = writeln!(s, "dbio_check_advice{{{labels}}} 1");
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

    /// A RAID finding with the labels `rules::raid_rules` gives it.
    fn raid(dev: &str, rule: &str, st: Status) -> Finding {
        let w: Vec<&str> = dev.split(' ').collect();
        f(dev, rule, st).labels(crate::rules::Labels {
            tool: Some(w[0].into()),
            controller: Some(w[1].into()),
            volume: Some(w[2..].join(" ")),
            ..Default::default()
        })
    }

    #[test]
    fn grouping_and_order() {
        let r = CheckReport::new(vec![
            f("sda", "io.scheduler", Status::Ok),
            f("sda", "io.read_ahead", Status::Warn),
            raid("raid c0 vd 0", "raid.write_policy", Status::Crit),
            raid("raid c0 vd 0", "raid.vd_state", Status::Ok),
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
        assert!(
            n.starts_with(
                "DBIO STORAGE CRITICAL - 1 critical, 1 warning, 1 unknown: raid.write_policy | "
            ),
            "{n}"
        );
        assert!(
            n.contains("\nCRIT raid c0 vd 0 raid.write_policy: raid.write_policy is CRIT\n"),
            "{n}"
        );
        assert!(n
            .lines()
            .next()
            .unwrap()
            .ends_with("| crit=1;;;0 warn=1;;;0 unknown=1;;;0 ok=2;;;0 advice=0;;;0"));
        let p = render_prometheus(&r);
        assert!(
            p.contains("dbio_check_status{tool=\"raid\",controller=\"c0\",volume=\"vd 0\",rule=\"raid.write_policy\"} 2\n"),
            "{p}"
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
            raid("tw_cli c0 u0", "raid.vd_state", Status::Advice),
        ]);
        assert_eq!(r.status, Status::Advice);
        assert_eq!(r.counts.advice, 1);
        assert_eq!(r.nagios_status(false), Status::Ok);
        assert_eq!(r.nagios_status(false).nagios_code(), 0);
        assert_eq!(r.nagios_status(true), Status::Warn);
        let n = render_nagios(&r);
        assert!(
            n.starts_with("DBIO STORAGE OK - 1 rules OK, 1 advice: tw_cli c0 u0 raid.vd_state | "),
            "{n}"
        );
        assert!(n.contains("\nADVICE tw_cli c0 u0 raid.vd_state: "), "{n}");
        let w = render_nagios_with(&r, true);
        assert!(
            w.starts_with("DBIO STORAGE WARNING - 1 advice: tw_cli c0 u0 raid.vd_state | "),
            "{w}"
        );
        let p = render_prometheus(&r);
        assert!(
            p.contains("dbio_check_status{tool=\"tw_cli\",controller=\"c0\",volume=\"u0\",rule=\"raid.vd_state\"} 0\n"),
            "{p}"
        );
        assert!(
            p.contains("dbio_check_advice{tool=\"tw_cli\",controller=\"c0\",volume=\"u0\",rule=\"raid.vd_state\"} 1\n"),
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

    #[test]
    fn nagios_status_text_is_short() {
        let long = "x".repeat(200);
        let r = CheckReport::new(vec![f(&long, "raid.write_policy", Status::Crit)]);
        let n = render_nagios(&r);
        let head = n.lines().next().unwrap().split(" | ").next().unwrap();
        assert_eq!(head.chars().count(), NAGIOS_STATUS_MAX, "{head}");
        assert!(head.ends_with("xxx... raid.write_policy"), "{head}");
        assert!(
            n.contains(&format!("\nCRIT {long} raid.write_policy: ")),
            "{n}"
        );
        let e = render_nagios_error("--disks 0 --raid 10: RAID 10 cannot have 0 disks: it needs an even number of at least 4");
        let mut lines = e.lines();
        let first = lines.next().unwrap();
        assert!(first.starts_with("DBIO STORAGE UNKNOWN - --disks 0"), "{e}");
        assert_eq!(first.chars().count(), NAGIOS_STATUS_MAX, "{e}");
        assert!(lines.next().unwrap().ends_with("at least 4"), "{e}");
        assert_eq!(
            render_nagios_error("short | piped"),
            "DBIO STORAGE UNKNOWN - short / piped\n"
        );
    }

    #[test]
    fn paths_are_listed_and_labels_are_one_series() {
        let mut a = f("/", "mount.atime", Status::Warn).labels(crate::rules::Labels {
            device: Some("vda".into()),
            mountpoint: Some("/".into()),
            ..Default::default()
        });
        a.paths = vec!["/".into(), "/tmp".into()];
        let mut b = f("vda", "io.scheduler", Status::Ok);
        b.paths = vec!["/".into()];
        let r = CheckReport::new(vec![
            a,
            b,
            raid("storcli c0 vd 0", "raid.tool", Status::Unknown),
            raid("storcli c0 vd 0", "raid.tool", Status::Ok),
        ]);
        let t = render_text(&r);
        assert!(t.contains("\nWARN    /  (paths: /, /tmp)\n"), "{t}");
        assert!(t.contains("\nOK      vda  (paths: /)\n"), "{t}");
        let n = render_nagios(&r);
        assert!(
            n.contains("\nWARN / mount.atime: mount.atime is WARN  (paths: /, /tmp)\n"),
            "{n}"
        );
        let p = render_prometheus(&r);
        assert!(
            p.contains(
                "dbio_check_status{device=\"vda\",mountpoint=\"/\",rule=\"mount.atime\"} 1\n"
            ),
            "{p}"
        );
        assert!(
            p.contains("dbio_check_status{device=\"vda\",rule=\"io.scheduler\"} 0\n"),
            "{p}"
        );
        let tool: Vec<&str> = p.lines().filter(|l| l.contains("raid.tool")).collect();
        assert_eq!(tool, ["dbio_check_status{tool=\"storcli\",controller=\"c0\",volume=\"vd 0\",rule=\"raid.tool\"} 3"]);
    }
}
