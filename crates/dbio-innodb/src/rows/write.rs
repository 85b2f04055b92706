//! Rows written as SQL INSERTs (with the CREATE TABLE used), TSV (LOAD DATA's default
//! escaping, `\N` for NULL) or JSON Lines; one line per row ([`super::line`]), streamed.

use super::def::TableDef;
use super::line::{quote_ident, written, LineEncoder};
use super::record::{Row, RowMeta};
use super::sink::RowSink;
pub use dbio_schema::rows::RowFormat;
use dbio_schema::rows::RowsSummary as Summary;
use std::io::Write;

/// Writes rows in one format to `W`.
pub struct RowWriter<W: Write> {
    out: W,
    enc: LineEncoder,
    line: Vec<u8>,
}

/// Bytes gathered before a write to `W`.
const WRITE_CHUNK: usize = 256 << 10;

impl<W: Write> RowWriter<W> {
    /// A writer of `def`'s rows.
    pub fn new(out: W, format: RowFormat, def: &TableDef) -> RowWriter<W> {
        RowWriter {
            out,
            enc: LineEncoder::new(format, def),
            line: Vec::with_capacity(WRITE_CHUNK + 4096),
        }
    }

    /// Writes TSV with a last column `dbio_deleted` (1 for a deleted row, 0 for a live one),
    /// named in the header line: for `--include-deleted`, whose rows are both.
    pub fn deleted_column(mut self, on: bool) -> RowWriter<W> {
        self.enc.deleted_col = on;
        self
    }

    /// The statements that read the TSV output from `file` back: the session's time zone
    /// set to UTC (TIMESTAMP values are written in UTC), then LOAD DATA; `deleted_column`:
    /// the file has the `dbio_deleted` column ([`RowWriter::deleted_column`]), read into the
    /// user variable `@dbio_deleted` so the rows load into the original table.
    pub fn load_data(def: &TableDef, file: &str, deleted_column: bool) -> String {
        let mut cols: Vec<String> = written(def).map(|(_, c)| quote_ident(&c.name)).collect();
        if deleted_column {
            cols.push("@dbio_deleted".to_string());
        }
        format!(
            "SET time_zone = '+00:00'; LOAD DATA LOCAL INFILE '{}' INTO TABLE {} CHARACTER SET utf8mb4 FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' IGNORE 1 LINES ({});",
            file.replace('\\', "\\\\").replace('\'', "\\'"),
            quote_ident(&def.name),
            cols.join(",")
        )
    }

    /// The inner writer.
    pub fn into_inner(self) -> W {
        self.out
    }

    fn header(&mut self, s: &Summary) -> std::io::Result<()> {
        let origin = format!(
            "table {} decoded with the definition from {}; space {} index {}",
            quote_ident(&s.table),
            s.definition,
            s.space_id.map_or("-".into(), |v| v.to_string()),
            s.index_id.map_or("-".into(), |v| v.to_string()),
        );
        match self.enc.format {
            RowFormat::Sql => {
                writeln!(self.out, "-- dbio innodb rows: {origin}")?;
                writeln!(self.out, "-- TIMESTAMP values are in UTC (time_zone below)")?;
                writeln!(self.out, "SET NAMES utf8mb4;")?;
                writeln!(self.out, "SET time_zone = '+00:00';")?;
                writeln!(
                    self.out,
                    "{};",
                    self.enc.def.create_sql.trim_end_matches(';')
                )?;
            }
            RowFormat::Tsv => {
                let mut names: Vec<&str> = written(&self.enc.def)
                    .map(|(_, c)| c.name.as_str())
                    .collect();
                if self.enc.deleted_col {
                    names.push("dbio_deleted");
                }
                writeln!(self.out, "{}", names.join("\t"))?;
            }
            RowFormat::Jsonl => {
                let h = serde_json::json!({
                    "header": {
                        "table": s.table,
                        "definition": s.definition,
                        "space_id": s.space_id,
                        "index_id": s.index_id,
                        "columns": written(&self.enc.def).map(|(_, c)| serde_json::json!({"name": c.name, "type": c.sql_type})).collect::<Vec<_>>(),
                        "timestamps": "UTC",
                    }
                });
                writeln!(self.out, "{h}")?;
            }
        }
        Ok(())
    }
}

impl<W: Write> RowWriter<W> {
    /// Writes the gathered lines when there are enough of them (or all when `all`).
    fn drain(&mut self, all: bool) -> std::io::Result<()> {
        if self.line.len() >= WRITE_CHUNK || all && !self.line.is_empty() {
            self.out.write_all(&self.line)?;
            self.line.clear();
        }
        Ok(())
    }
}

impl<W: Write> RowSink for RowWriter<W> {
    fn begin(&mut self, s: &Summary) -> std::io::Result<()> {
        self.header(s)
    }

    fn row(&mut self, row: &Row, meta: &RowMeta) -> std::io::Result<()> {
        self.enc.encode(
            |i| {
                let c = row.values[i].cell();
                (c, c.bytes)
            },
            row.deleted,
            row.trx_id,
            meta,
            &mut self.line,
        );
        self.drain(false)
    }

    fn encoder(&self) -> Option<LineEncoder> {
        Some(self.enc.clone())
    }

    fn lines(&mut self, lines: &[u8]) -> std::io::Result<()> {
        if self.line.is_empty() && lines.len() >= WRITE_CHUNK {
            return self.out.write_all(lines);
        }
        self.line.extend_from_slice(lines);
        self.drain(false)
    }

    fn end(&mut self, _: &Summary) -> std::io::Result<()> {
        self.drain(true)?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::value::{Cell, Kind};

    /// A row of `t` (id, FLOAT(7,3), DOUBLE) in `format`, after the header.
    fn one_row(format: RowFormat, deleted_column: bool, deleted: bool) -> (String, String) {
        let def = super::super::def::parse(
            "create table t (id int primary key, f float(7,3), d double)",
            None,
            "t.sql",
        )
        .unwrap();
        let mut w = RowWriter::new(Vec::new(), format, &def).deleted_column(deleted_column);
        let s = Summary {
            table: "t".into(),
            definition: "t.sql".into(),
            ..Summary::default()
        };
        w.begin(&s).unwrap();
        let head = w.out.len();
        let cells = [
            (Kind::Number, &b"7"[..]),
            (Kind::Number, b"0.000"),
            (Kind::Number, b"1e15"),
        ];
        let meta = RowMeta {
            space_id: 1,
            page_no: 3,
            lsn: 9,
        };
        w.enc.encode(
            |i| {
                let cell = Cell {
                    kind: cells[i].0,
                    bytes: cells[i].1,
                };
                (cell, cells[i].1)
            },
            deleted,
            5,
            &meta,
            &mut w.line,
        );
        w.end(&s).unwrap();
        let out = String::from_utf8(w.into_inner()).unwrap();
        (out[..head].to_string(), out[head..].to_string())
    }

    #[test]
    fn tsv_says_which_rows_are_deleted_only_when_asked() {
        assert_eq!(
            one_row(RowFormat::Tsv, true, true),
            (
                "id\tf\td\tdbio_deleted\n".into(),
                "7\t0.000\t1e15\t1\n".into()
            )
        );
        assert_eq!(
            one_row(RowFormat::Tsv, true, false).1,
            "7\t0.000\t1e15\t0\n"
        );
        assert_eq!(
            one_row(RowFormat::Tsv, false, true),
            ("id\tf\td\n".into(), "7\t0.000\t1e15\n".into())
        );
        // Other formats say it their own way.
        assert!(one_row(RowFormat::Sql, true, true)
            .1
            .ends_with("); -- deleted\n"));
        let def =
            super::super::def::parse("create table t (id int primary key, v text)", None, "t.sql")
                .unwrap();
        assert_eq!(
            RowWriter::<Vec<u8>>::load_data(&def, "/x/it's.tsv", true),
            "SET time_zone = '+00:00'; LOAD DATA LOCAL INFILE '/x/it\\'s.tsv' INTO TABLE `t` CHARACTER SET utf8mb4 FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' IGNORE 1 LINES (`id`,`v`,@dbio_deleted);"
        );
        assert!(RowWriter::<Vec<u8>>::load_data(&def, "f", false).ends_with("(`id`,`v`);"));
    }

    #[test]
    fn json_lines_keep_the_servers_text_of_float_and_double() {
        let (_, row) = one_row(RowFormat::Jsonl, true, false);
        let v: serde_json::Value = serde_json::from_str(&row).unwrap();
        assert_eq!(
            v["row"],
            serde_json::json!({"id": 7, "f": "0.000", "d": "1e15"})
        );
        assert_eq!(v["deleted"], false);
    }
}
