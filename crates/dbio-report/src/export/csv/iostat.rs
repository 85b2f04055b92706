//! `dbio iostat --format csv`: one row per device per report, the header row once (before the
//! first report's rows). Columns: `time` (RFC 3339, UTC), `ts` (seconds since the epoch),
//! `interval_s`, `device`, `kind`, then every figure named by its JSON key, at full precision.

use crate::export::Csv;
use crate::export::{csv_row, Exporter};
use dbio_schema::iostat::Figures;
use dbio_schema::iostat::Report;
use serde_json::{Map, Value};
use std::io::{self, Write};

/// The figures as a JSON object, keys in their declared order.
fn object(f: &Figures) -> Map<String, Value> {
    match serde_json::to_value(f) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// The header row.
pub fn header_row() -> Vec<String> {
    ["time", "ts", "interval_s", "device", "kind"]
        .into_iter()
        .map(str::to_string)
        .chain(object(&Figures::default()).keys().cloned())
        .collect()
}

/// The rows of one report, in the order of [`header_row`].
pub fn rows(r: &Report) -> Vec<Vec<String>> {
    // `time` is `YYYY-MM-DD HH:MM:SS` in UTC: said so, as RFC 3339 does.
    let time = format!("{}Z", r.time.replacen(' ', "T", 1));
    let names: Vec<String> = object(&Figures::default()).keys().cloned().collect();
    r.devices
        .iter()
        .map(|d| {
            let v = object(&d.figures);
            let mut row = vec![
                time.clone(),
                r.ts.to_string(),
                r.interval_s.to_string(),
                d.device.clone(),
                d.kind.as_str().to_string(),
            ];
            row.extend(names.iter().map(|n| match &v[n] {
                Value::Number(x) if x.is_f64() => x.as_f64().unwrap_or(f64::NAN).to_string(),
                Value::Number(x) => x.to_string(),
                other => other.to_string(),
            }));
            row
        })
        .collect()
}

impl Exporter<Report> for Csv {
    fn export(&self, r: &Report, out: &mut dyn Write) -> io::Result<()> {
        if !self.header_done.replace(true) {
            csv_row(out, header_row())?;
        }
        for row in rows(r) {
            csv_row(out, row)?;
        }
        Ok(())
    }
}
