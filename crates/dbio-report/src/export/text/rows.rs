//! Text of `dbio innodb rows`: its summary line (the rows themselves are written by
//! dbio-innodb's row writer, in a row format).

use crate::export::{Exporter, Text};
use dbio_schema::rows::RowsSummary;
use std::io::{self, Write};

/// The summary of `innodb rows` for people (one line, for stderr): what was read, written,
/// rejected and dropped.
pub fn rows_summary(s: &RowsSummary) -> String {
    let mut out = format!(
        "innodb rows: table `{}` (definition: {}), space {} index {}: {} leaf page(s){}, {} record(s); {} row(s) written ({} deleted), {} filtered out by the deleted filter, {} older version(s) dropped, {} rejected",
        s.table,
        s.definition,
        s.space_id.map_or("-".into(), |v| v.to_string()),
        s.index_id.map_or("-".into(), |v| v.to_string()),
        s.pages_decoded,
        if s.older_copies > 0 {
            format!(" and {} older copy(ies) of them", s.older_copies)
        } else {
            String::new()
        },
        s.records_seen,
        s.rows_written,
        s.deleted_rows_written,
        s.filtered_out,
        s.duplicates_dropped,
        s.rejected.values().sum::<u64>(),
    );
    if !s.rejected.is_empty() {
        let why: Vec<String> = s.rejected.iter().map(|(k, v)| format!("{k} {v}")).collect();
        out.push_str(&format!(" ({})", why.join(", ")));
    }
    if s.interrupted {
        out.push_str("; interrupted: the pages after the signal were not read");
    }
    out.push('\n');
    out
}

impl Exporter<RowsSummary> for Text {
    fn export(&self, s: &RowsSummary, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(rows_summary(s).as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_names_every_count() {
        // The counts of a real run: testdata/innodb/shop_typed.ibd with --include-deleted.
        let s = RowsSummary {
            definition: "testdata/innodb/shop_typed.sql".into(),
            table: "typed".into(),
            space_id: Some(7),
            index_id: Some(25),
            pages_decoded: 1,
            records_seen: 2,
            rows_written: 2,
            deleted_rows_written: 1,
            ..RowsSummary::default()
        };
        assert_eq!(
            rows_summary(&s),
            "innodb rows: table `typed` (definition: testdata/innodb/shop_typed.sql), space 7 index 25: 1 leaf page(s), 2 record(s); 2 row(s) written (1 deleted), 0 filtered out by the deleted filter, 0 older version(s) dropped, 0 rejected\n"
        );
        let older = RowsSummary {
            older_copies: 1,
            records_seen: 4,
            rows_written: 3,
            deleted_rows_written: 2,
            duplicates_dropped: 1,
            ..s.clone()
        };
        assert!(rows_summary(&older).contains("1 leaf page(s) and 1 older copy(ies) of them, 4 record(s); 3 row(s) written (2 deleted), 0 filtered out by the deleted filter, 1 older version(s) dropped, 0 rejected\n"));
        let rejected = RowsSummary {
            space_id: None,
            index_id: None,
            filtered_out: 1,
            rejected: [("zeroed", 1), ("header", 1), ("range", 2)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            interrupted: true,
            ..s
        };
        let text = rows_summary(&rejected);
        assert!(text.contains("space - index -: "), "{text}");
        assert!(
            text.ends_with("1 filtered out by the deleted filter, 0 older version(s) dropped, 4 rejected (header 1, range 2, zeroed 1); interrupted: the pages after the signal were not read\n"),
            "{text}"
        );
    }
}
