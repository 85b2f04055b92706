//! `dbio iostat` as text: per report a time line, the table (iostat -x and pt-diskstats
//! column names, the header repeated like iostat's) with each device's `--explain` lines under
//! its row, the skipped devices and a blank line; and `--columns`, the choice of columns.

use crate::export::table::{Column, Table};
use crate::export::Exporter;
use crate::export::Text;
use dbio_schema::iostat::Report;
use std::io::{self, Write};

use super::columns::column_values;
pub use super::columns::{Columns, ColumnsError, COLUMNS};

impl Exporter<Report> for Text {
    fn export(&self, r: &Report, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(render(r, &self.columns).as_bytes())
    }
}

fn render(r: &Report, cols: &Columns) -> String {
    // The device column at least 12 wide, each figure at least 8 (like iostat), one space
    // between columns.
    let mut columns = vec![Column::left("Device").min(12)];
    columns.extend(cols.names().iter().map(|c| Column::right(c).min(8)));
    let mut t = Table::new(columns).separator(" ");
    for d in &r.devices {
        let v = column_values(&d.figures);
        let cells = cols.0.iter().map(|&i| {
            if COLUMNS[i] == "in_prg" {
                format!("{}", v[i] as u64)
            } else {
                format!("{:.2}", v[i])
            }
        });
        t.row(std::iter::once(d.device.clone()).chain(cells));
    }
    let mut s = format!("{} UTC  interval {:.2} s\n", r.time, r.interval_s);
    let mut lines = t.lines().into_iter();
    if let Some(head) = lines.next() {
        s.push_str(&head);
        s.push('\n');
    }
    for (d, line) in r.devices.iter().zip(lines) {
        s.push_str(&line);
        s.push('\n');
        for e in &d.explain {
            s.push_str(&format!("  {}: {e}\n", d.device));
        }
    }
    for k in &r.skipped {
        s.push_str(&format!("  skipped: {k}\n"));
    }
    s.push('\n');
    s
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
            Err(ColumnsError::Unknown { .. })
        ));
        assert!(matches!(
            Columns::parse("w/s,w/s"),
            Err(ColumnsError::Duplicate { .. })
        ));
    }
}
