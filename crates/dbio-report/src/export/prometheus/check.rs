//! `dbio check --format prometheus`, for the node_exporter textfile collector: one
//! `dbio_check_status` gauge per rule and subject (0 OK, 1 WARN, 2 CRIT, 3 UNKNOWN, as in
//! Nagios; advice is 0 there), one `dbio_check_advice` gauge per piece of advice, plus counts
//! per status. The `device` label holds a kernel device name only; the mount point, RAID tool,
//! controller, volume and source file have labels of their own.

use crate::export::prometheus::{labels, Exposition, Kind};
use crate::export::Exporter;
use crate::export::Prometheus;
use dbio_schema::check::{CheckReport, Finding, Labels, Status};
use std::io::{self, Write};

impl Exporter<CheckReport> for Prometheus {
    fn export(&self, r: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
        let mut x = Exposition::file();
        let status = series(r.findings().filter(|f| f.rule != "raid.note"));
        x.family(
            "dbio_check_status",
            Kind::Gauge,
            "Storage audit rule status per device: 0 OK, 1 WARN, 2 CRIT, 3 UNKNOWN.",
            status
                .iter()
                .map(|(l, f)| (pairs(l, f), f64::from(f.status.nagios_code()))),
        );
        let advice = series(r.findings().filter(|f| f.status == Status::Advice));
        x.family(
            "dbio_check_advice",
            Kind::Gauge,
            "Tuning advice per device and rule (1 = advice given); no alarm.",
            advice.iter().map(|(l, f)| (pairs(l, f), 1.0)),
        );
        let c = r.counts;
        x.family(
            "dbio_check_findings",
            Kind::Gauge,
            "Number of audit findings per status.",
            [
                ("ok", c.ok),
                ("warn", c.warn),
                ("crit", c.crit),
                ("unknown", c.unknown),
                ("advice", c.advice),
            ]
            .map(|(k, v)| (vec![("status", k)], v as f64)),
        );
        out.write_all(x.take().as_bytes())
    }
}

/// The labels of a finding: its [`Labels`] (the kernel device name, mount point, RAID tool,
/// controller, volume, file) or, for a finding built without labels, its device when that is
/// a device name; then the rule.
fn pairs<'a>(fallback: &'a Option<String>, f: &'a Finding) -> Vec<(&'a str, &'a str)> {
    let mut p = f.labels.pairs();
    if let Some(d) = fallback {
        p.push(("device", d));
    }
    p.push(("rule", &f.rule));
    p
}

/// One series per label set (the worst status when two findings share one), in first-seen
/// order: Prometheus refuses a repeated series. Each with the fallback device label of
/// [`pairs`].
fn series<'a>(findings: impl Iterator<Item = &'a Finding>) -> Vec<(Option<String>, &'a Finding)> {
    let mut out: Vec<(String, Option<String>, &Finding)> = Vec::new();
    for f in findings {
        let fallback = if f.labels.is_empty() {
            Labels::device_name(&f.device)
        } else {
            None
        };
        let key = labels(&pairs(&fallback, f));
        match out.iter_mut().find(|(k, _, _)| *k == key) {
            Some(slot) if f.status.severity() > slot.2.status.severity() => {
                slot.1 = fallback;
                slot.2 = f;
            }
            Some(_) => {}
            None => out.push((key, fallback, f)),
        }
    }
    out.into_iter().map(|(_, l, f)| (l, f)).collect()
}
