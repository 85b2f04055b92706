//! `dbio mysql advise` as text for people: the server and the interval, then every finding
//! worst first; a finding that is not OK shows its evidence (over the interval and since
//! startup), thresholds, the suggested change, its risk and its source; then the datadir's
//! storage.

use crate::export::table::{Column, Table};
use crate::export::{Exporter, Text};
use dbio_schema::advise::{Advice, AdviseResult};
use dbio_schema::check::Status;
use std::fmt::Write as _;
use std::io::{self, Write};

fn num(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        format!("{x:.0}")
    } else if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    }
}

fn details(s: &mut String, f: &Advice) {
    let mut t = Table::new(vec![
        Column::left("    figure"),
        Column::right("interval"),
        Column::right("since startup"),
    ]);
    for e in &f.evidence {
        t.row([
            format!("    {}", e.name),
            num(e.interval),
            e.since_startup.map_or_else(|| "-".to_string(), num),
        ]);
    }
    s.push_str(&t.render());
    for th in &f.thresholds {
        let _ = writeln!(s, "    threshold: {th}");
    }
    if let Some(g) = &f.set_global {
        let _ = writeln!(s, "    SET GLOBAL: {g}");
    }
    if let Some(c) = &f.my_cnf {
        for (i, line) in c.lines().enumerate() {
            let head = if i == 0 { "my.cnf:    " } else { "           " };
            let _ = writeln!(s, "    {head}{line}");
        }
    }
    if let Some(r) = &f.risk {
        let _ = writeln!(s, "    risk: {r}");
    }
    let _ = writeln!(s, "    source: {}", f.source);
}

/// The text of `r`.
pub fn render(r: &AdviseResult) -> String {
    let c = r.counts;
    let storage = match r.storage.as_ref().and_then(|st| st.check.as_ref()) {
        Some(chk) => format!("; storage check of the datadir: {}", chk.status.label()),
        None => String::new(),
    };
    let mut s = format!(
        "dbio mysql advise: {} (rules: {} critical, {} warning, {} advice, {} ok{storage})\n",
        r.status.label(),
        c.crit,
        c.warn,
        c.advice,
        c.ok
    );
    let _ = writeln!(
        s,
        "server {} {} ({}), up {} s{}; {} samples over {:.1} s ({} statements each); rates are over the interval, since-startup beside them",
        r.server.address,
        r.server.version,
        r.server.flavor,
        r.server.uptime_s,
        if r.server.replica { ", a replica" } else { "" },
        r.samples,
        r.interval_s,
        r.queries_per_sample
    );
    s.push('\n');
    let width = r.findings.iter().map(|f| f.rule.len()).max().unwrap_or(10);
    for f in &r.findings {
        let _ = writeln!(
            s,
            "{:<7} {:<width$}  {}",
            f.status.label(),
            f.rule,
            f.summary
        );
        if f.status != Status::Ok {
            details(&mut s, f);
        }
    }
    for n in &r.notes {
        let _ = writeln!(s, "note: {n}");
    }
    if let Some(st) = &r.storage {
        let _ = writeln!(s, "\nstorage of the datadir {}", st.datadir);
        if !st.devices.is_empty() {
            let _ = writeln!(s, "  stack: {}", st.devices.join(" -> "));
        }
        if !st.iostat.is_empty() {
            let mut t = Table::new(vec![
                Column::left("  device"),
                Column::right("r/s"),
                Column::right("w/s"),
                Column::right("wkB/s"),
                Column::right("w_await ms"),
                Column::right("f/s"),
                Column::right("f_await ms"),
                Column::right("%util"),
            ]);
            for d in &st.iostat {
                t.row([
                    format!("  {}", d.device),
                    format!("{:.1}", d.r_per_s),
                    format!("{:.1}", d.w_per_s),
                    format!("{:.1}", d.wkb_per_s),
                    format!("{:.2}", d.w_await_ms),
                    format!("{:.1}", d.f_per_s),
                    format!("{:.2}", d.f_await_ms),
                    format!("{:.1}", d.util_pct),
                ]);
            }
            s.push_str(&t.render());
        }
        if let Some(chk) = &st.check {
            let _ = writeln!(s, "  dbio check: {}", chk.status.label());
            for f in chk.findings().filter(|f| f.status != Status::Ok) {
                let _ = writeln!(
                    s,
                    "  {:<7} {} {}: {}",
                    f.status.label(),
                    f.device,
                    f.rule,
                    f.summary
                );
            }
        }
        for n in &st.notes {
            let _ = writeln!(s, "  note: {n}");
        }
    }
    s
}
impl Exporter<AdviseResult> for Text {
    fn export(&self, r: &AdviseResult, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(render(r).as_bytes())
    }
}
