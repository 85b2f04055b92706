//! RAID tool output as `dbio check --raid-output` reads it, parsed as Tool::Ssacli output,
//! then everything done with the result: the audit rules, merging, and the three renderings.
#![no_main]
use dbio_storage::raid::{self, Tool};
use dbio_storage::{report, rules};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = raid::detect(&text);
    let Ok(r) = raid::parse_as(Tool::Ssacli, &text, "fuzz") else {
        return;
    };
    let _ = serde_json::to_string(&r);
    let merged = raid::merge(vec![r.clone(), r]);
    let findings: Vec<_> = merged.iter().flat_map(rules::raid_rules).collect();
    let c = report::CheckReport::new(findings);
    let _ = report::render_text(&c);
    let _ = report::render_nagios(&c);
    let _ = report::render_prometheus(&c);
});
