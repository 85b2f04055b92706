//! What the RAID targets share: one tool's output as `dbio check --raid-output` reads it, then
//! everything done with the result (the audit rules, merging, the three renderings).

use dbio_report::export::{Nagios, Prometheus, Text};
use dbio_schema::check::CheckReport;
use dbio_report::export::Exporter;
use dbio_storage::raid::{self, Tool};
use dbio_storage::rules;

/// Feeds `data` to `tool`'s parser and, when it parses, through the rules and renderers.
pub fn raid_output(tool: Tool, data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = raid::detect(&text);
    let Ok(r) = raid::parse_as(tool, &text, "fuzz") else {
        return;
    };
    let _ = serde_json::to_string(&r);
    let merged = raid::merge(vec![r.clone(), r]);
    let findings: Vec<_> = merged.iter().flat_map(rules::raid_rules).collect();
    let c = CheckReport::new(findings);
    let _ = Text::default().to_string(&c);
    let _ = Nagios::default().to_string(&c);
    let _ = Prometheus::default().to_string(&c);
}
