//! `dbio mysql advise --format nagios`: the status line with the alarm counts and the worst
//! rule, the counts as perfdata, every finding that is not OK as long output. The exit code
//! goes with [`AdviseResult::nagios_status`] (0 OK and ADVICE, 1 WARNING, 2 CRITICAL,
//! 3 UNKNOWN), as `dbio check --nagios`.

use super::{clip, word};
use crate::export::{Exporter, Nagios};
use dbio_schema::advise::AdviseResult;
use dbio_schema::check::{Status, NAGIOS_STATUS_MAX};
use std::fmt::Write as _;
use std::io::{self, Write};

/// The plugin output of `r` (`advice_warns`: count advice as a warning).
pub fn render(r: &AdviseResult, advice_warns: bool) -> String {
    let c = r.counts;
    let counts: Vec<String> = [
        (c.crit, "critical"),
        (c.warn, "warning"),
        (c.unknown, "unknown"),
        (c.advice, "advice"),
        (c.ok, "rules OK"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, w)| format!("{n} {w}"))
    .collect();
    let mut head = format!(
        "DBIO MYSQL {} - {}",
        word(r.nagios_status(advice_warns)),
        counts.join(", ")
    );
    if let Some(f) = r.findings.iter().find(|f| f.status != Status::Ok) {
        head.push_str(&format!(": {}", f.rule));
    }
    let head = clip(&head.replace('|', "/"), NAGIOS_STATUS_MAX);
    let mut s = format!(
        "{head} | crit={};;;0 warn={};;;0 unknown={};;;0 ok={};;;0 advice={};;;0\n",
        c.crit, c.warn, c.unknown, c.ok, c.advice
    );
    let mut long = String::new();
    for f in r.findings.iter().filter(|f| f.status != Status::Ok) {
        let _ = writeln!(long, "{} {}: {}", f.status.label(), f.rule, f.summary);
    }
    if let Some(chk) = r.storage.as_ref().and_then(|st| st.check.as_ref()) {
        for f in chk.findings().filter(|f| f.status != Status::Ok) {
            let _ = writeln!(
                long,
                "{} storage {} {}: {}",
                f.status.label(),
                f.device,
                f.rule,
                f.summary
            );
        }
    }
    s.push_str(&long.replace('|', "/"));
    s
}

impl Exporter<AdviseResult> for Nagios {
    fn export(&self, r: &AdviseResult, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(render(r, self.advice_warns).as_bytes())
    }
}
