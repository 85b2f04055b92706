//! The text table of a [`Report`]: a time line, the header (iostat -x and pt-diskstats column
//! names), one row per device with its `--explain` lines under it, the skipped devices; and
//! `--columns`, the choice of columns.

use super::{Error, Report};
use crate::diskstats::Figures;
use std::fmt::Write as _;

/// Every column of the table, in the default order (iostat -x's, then pt-diskstats').
pub const COLUMNS: [&str; 27] = [
    "r/s", "rkB/s", "rrqm/s", "%rrqm", "r_await", "rareq-sz", "w/s", "wkB/s", "wrqm/s", "%wrqm",
    "w_await", "wareq-sz", "d/s", "dkB/s", "drqm/s", "%drqm", "d_await", "dareq-sz", "f/s",
    "f_await", "aqu-sz", "%util", "rd_cnc", "wr_cnc", "in_prg", "qtime", "stime",
];

/// The figures in [`COLUMNS`] order.
pub fn column_values(f: &Figures) -> [f64; 27] {
    [
        f.r_per_s,
        f.rkb_per_s,
        f.rrqm_per_s,
        f.rrqm_pct,
        f.r_await_ms,
        f.rareq_sz_kb,
        f.w_per_s,
        f.wkb_per_s,
        f.wrqm_per_s,
        f.wrqm_pct,
        f.w_await_ms,
        f.wareq_sz_kb,
        f.d_per_s,
        f.dkb_per_s,
        f.drqm_per_s,
        f.drqm_pct,
        f.d_await_ms,
        f.dareq_sz_kb,
        f.f_per_s,
        f.f_await_ms,
        f.aqu_sz,
        f.util_pct,
        f.rd_cnc,
        f.wr_cnc,
        f.in_flight as f64,
        f.qtime_ms,
        f.stime_ms,
    ]
}

/// The columns a table shows, in order (indexes into [`COLUMNS`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Columns(Vec<usize>);

impl Default for Columns {
    fn default() -> Self {
        Columns((0..COLUMNS.len()).collect())
    }
}

impl Columns {
    /// Parses a comma-separated list of column names as the header prints them (`r/s,w_await,
    /// %util`), in the order given. An unknown name is refused with every valid one listed.
    pub fn parse(list: &str) -> Result<Self, Error> {
        let mut out = Vec::new();
        for name in list.split(',') {
            let i =
                COLUMNS
                    .iter()
                    .position(|c| *c == name)
                    .ok_or_else(|| Error::UnknownColumn {
                        name: name.to_string(),
                        valid: COLUMNS.join(", "),
                    })?;
            if out.contains(&i) {
                return Err(Error::DuplicateColumn {
                    name: name.to_string(),
                });
            }
            out.push(i);
        }
        Ok(Columns(out))
    }

    /// The names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.0.iter().map(|&i| COLUMNS[i]).collect()
    }
}

/// The text table of one report with the chosen columns.
pub fn render_text(r: &Report, cols: &Columns) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{} UTC  interval {:.2} s", r.time, r.interval_s);
    let w = r
        .devices
        .iter()
        .map(|d| d.device.len())
        .max()
        .unwrap_or(0)
        .max(12);
    let cells: Vec<Vec<String>> = r
        .devices
        .iter()
        .map(|d| {
            let v = column_values(&d.figures);
            cols.0
                .iter()
                .map(|&i| {
                    if COLUMNS[i] == "in_prg" {
                        format!("{}", v[i] as u64)
                    } else {
                        format!("{:.2}", v[i])
                    }
                })
                .collect()
        })
        .collect();
    // Each column as wide as its header or its widest value (at least 8, like iostat).
    let widths: Vec<usize> = cols
        .0
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            cells
                .iter()
                .map(|row| row[k].len())
                .chain([COLUMNS[i].len(), 8])
                .max()
                .unwrap_or(8)
        })
        .collect();
    let _ = write!(s, "{:<w$}", "Device");
    for (c, cw) in cols.names().iter().zip(&widths) {
        let _ = write!(s, " {c:>cw$}");
    }
    s.push('\n');
    for (d, row) in r.devices.iter().zip(&cells) {
        let _ = write!(s, "{:<w$}", d.device);
        for (v, cw) in row.iter().zip(&widths) {
            let _ = write!(s, " {v:>cw$}");
        }
        s.push('\n');
        for e in &d.explain {
            let _ = writeln!(s, "  {}: {e}", d.device);
        }
    }
    for k in &r.skipped {
        let _ = writeln!(s, "  skipped: {k}");
    }
    s.push('\n');
    s
}

/// The CSV records of one report (the header first when `header`): time, ts, interval_s,
/// device, kind, then the figures named by their JSON keys (fractions with 2 decimals).
pub fn csv_records(r: &Report, header: bool) -> Vec<Vec<String>> {
    let object = |f: &Figures| match serde_json::to_value(f) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    let names: Vec<String> = object(&Figures::default()).keys().cloned().collect();
    let mut out = Vec::new();
    if header {
        let fixed = ["time", "ts", "interval_s", "device", "kind"];
        out.push(
            fixed
                .iter()
                .map(|s| s.to_string())
                .chain(names.iter().cloned())
                .collect(),
        );
    }
    for d in &r.devices {
        let v = object(&d.figures);
        let mut row = vec![
            r.time.clone(),
            format!("{:.3}", r.ts),
            format!("{:.3}", r.interval_s),
            d.device.clone(),
            d.kind.as_str().to_string(),
        ];
        row.extend(names.iter().map(|n| match &v[n] {
            serde_json::Value::Number(x) => match x.as_f64() {
                Some(f) if x.is_f64() => format!("{f:.2}"),
                _ => x.to_string(),
            },
            other => other.to_string(),
        }));
        out.push(row);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_parse_in_the_order_given() {
        let c = Columns::parse("%util,r/s,in_prg").unwrap();
        assert_eq!(c.names(), ["%util", "r/s", "in_prg"]);
        assert_eq!(Columns::default().names(), COLUMNS);
        let e = Columns::parse("r/s,util").unwrap_err().to_string();
        assert!(e.contains("\"util\"") && e.contains("%util, rd_cnc"), "{e}");
        assert!(matches!(
            Columns::parse(""),
            Err(Error::UnknownColumn { .. })
        ));
        assert!(matches!(
            Columns::parse("w/s,w/s"),
            Err(Error::DuplicateColumn { .. })
        ));
    }
}
