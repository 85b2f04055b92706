//! `dbio check` as text for people: one block per device, worst first; non-OK findings with
//! their evidence, why and fix; OK findings on one line each.

use crate::export::table::{Column, Table};
use crate::export::Exporter;
use crate::export::Text;
use dbio_schema::check::{CheckReport, Status};
use std::io::{self, Write};

impl Exporter<CheckReport> for Text {
    fn export(&self, r: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(render(r).as_bytes())
    }
}

fn render(r: &CheckReport) -> String {
    let c = r.counts;
    let mut s = format!(
        "dbio check: {} ({} critical, {} warning, {} unknown, {} advice, {} ok)\n",
        r.status.label(),
        c.crit,
        c.warn,
        c.unknown,
        c.advice,
        c.ok
    );
    // Group lines: the status padded to 7, then the device. Finding lines: indented, the
    // status padded to 7, the rule padded to the longest rule of the report, then two spaces
    // (the rule column is one wider than its longest cell, the separator is one space).
    let mut groups = Table::new(vec![Column::left("").min(7), Column::left("")])
        .separator(" ")
        .without_header();
    let width = r.findings().map(|f| f.rule.len()).max().unwrap_or(10);
    let mut rows = Table::new(vec![
        Column::left("").min(7),
        Column::left("").min(width + 1),
        Column::left(""),
    ])
    .separator(" ")
    .without_header();
    for g in &r.devices {
        let note = paths_note(&g.device, g.findings.iter().flat_map(|f| f.paths.iter()));
        groups.row([g.status.label().to_string(), format!("{}{note}", g.device)]);
        for f in &g.findings {
            rows.row([f.status.label(), f.rule.as_str(), f.summary.as_str()]);
        }
    }
    let (groups, rows) = (groups.lines(), rows.lines());
    let mut rows = rows.iter();
    let pad = " ".repeat(9);
    for (g, line) in r.devices.iter().zip(&groups) {
        s.push('\n');
        s.push_str(line);
        s.push('\n');
        for f in &g.findings {
            s.push_str("  ");
            s.push_str(rows.next().map(String::as_str).unwrap_or(""));
            s.push('\n');
            if f.status == Status::Ok {
                continue;
            }
            for (i, e) in f.evidence.iter().enumerate() {
                let label = if i == 0 { "evidence:" } else { "         " };
                s.push_str(&format!("{pad}{label} {e}\n"));
            }
            s.push_str(&format!("{pad}why:      {}\n", f.why));
            if let Some(fix) = &f.fix {
                s.push_str(&format!("{pad}fix:      {fix}\n"));
            }
        }
    }
    s
}

/// `  (paths: /a, /b)` when the audited paths a finding (or a group) applies to are not
/// just its device; empty otherwise.
pub(crate) fn paths_note<'a>(device: &str, paths: impl IntoIterator<Item = &'a String>) -> String {
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
