//! `dbio check --nagios`: the status line with the alarm counts and the worst finding, all
//! counts as perfdata, every non-OK finding as long output; and the UNKNOWN line of a check
//! that could not run ([`CheckFailure`]).

use super::{clip, word};
use crate::export::text::check::paths_note;
use crate::export::Exporter;
use crate::export::Nagios;
use dbio_schema::check::{CheckFailure, CheckReport, Finding, Status, NAGIOS_STATUS_MAX};
use std::fmt::Write as _;
use std::io::{self, Write};

impl Exporter<CheckReport> for Nagios {
    fn export(&self, r: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(render(r, self.advice_warns).as_bytes())
    }
}

impl Exporter<CheckFailure> for Nagios {
    /// The UNKNOWN status line, cut to [`NAGIOS_STATUS_MAX`] characters, then the whole
    /// message as long output when the line does not hold it.
    fn export(&self, e: &CheckFailure, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(super::unknown("STORAGE", &e.message).as_bytes())
    }
}

/// The status text is short: the alarm counts that are not zero (all counts are in the
/// perfdata) and the worst finding (its device, cut or left out when the line is too long,
/// and its rule); every non-OK finding follows in the long output.
fn render(r: &CheckReport, advice_warns: bool) -> String {
    let c = r.counts;
    let bad: Vec<&Finding> = r.findings().filter(|f| f.status != Status::Ok).collect();
    let alarms = bad.iter().filter(|f| f.status != Status::Advice).count();
    let word = word(r.nagios_status(advice_warns));
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
        // Cut the device name, or leave it out, rather than cut the rule id; leave the
        // finding out when even its rule id does not fit (it heads the long output).
        let used = head.chars().count() + f.rule.chars().count();
        let room = NAGIOS_STATUS_MAX.saturating_sub(used + 3);
        if room >= 8 {
            head.push_str(&format!(": {} {}", clip(&f.device, room), f.rule));
        } else if used + 2 <= NAGIOS_STATUS_MAX {
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
