//! Rows written as SQL INSERTs (with the CREATE TABLE used), TSV (LOAD DATA's default
//! escaping, `\N` for NULL) or JSON Lines; one line per row, streamed.

use super::def::{ColType, TableDef};
use super::record::Row;
use super::run::{RowMeta, RowSink, Summary};
use super::value::Value;
use std::io::Write;

/// Output format of the rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowFormat {
    /// `INSERT INTO ... VALUES (...);` per row, after `SET NAMES`, the time zone and the
    /// CREATE TABLE used.
    Sql,
    /// A header line of column names, then tab-separated values (LOAD DATA INFILE defaults).
    Tsv,
    /// A header object, then one object per row.
    Jsonl,
}

fn quote_ident(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

fn sql_string(s: &[u8], out: &mut Vec<u8>) {
    out.push(b'\'');
    for &b in s {
        match b {
            b'\'' => out.extend_from_slice(b"\\'"),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0 => out.extend_from_slice(b"\\0"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0x1A => out.extend_from_slice(b"\\Z"),
            _ => out.push(b),
        }
    }
    out.push(b'\'');
}

fn tsv_escape(s: &[u8], out: &mut Vec<u8>) {
    for &b in s {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            0 => out.extend_from_slice(b"\\0"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\t' => out.extend_from_slice(b"\\t"),
            _ => out.push(b),
        }
    }
}

/// The columns written: all but generated ones (the server computes those).
fn written(def: &TableDef) -> impl Iterator<Item = (usize, &super::def::Column)> {
    def.columns
        .iter()
        .enumerate()
        .filter(|(_, c)| c.generated.is_none())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

/// Writes rows in one format to `W`.
pub struct RowWriter<W: Write> {
    out: W,
    format: RowFormat,
    def: TableDef,
    line: Vec<u8>,
    insert_prefix: String,
}

impl<W: Write> RowWriter<W> {
    /// A writer of `def`'s rows.
    pub fn new(out: W, format: RowFormat, def: &TableDef) -> RowWriter<W> {
        let cols: Vec<String> = written(def).map(|(_, c)| quote_ident(&c.name)).collect();
        RowWriter {
            out,
            format,
            insert_prefix: format!(
                "INSERT INTO {} ({}) VALUES (",
                quote_ident(&def.name),
                cols.join(",")
            ),
            def: def.clone(),
            line: Vec::with_capacity(4096),
        }
    }

    /// The LOAD DATA statement that reads the TSV output from `file` back.
    pub fn load_data(def: &TableDef, file: &str) -> String {
        let cols: Vec<String> = written(def).map(|(_, c)| quote_ident(&c.name)).collect();
        format!(
            "LOAD DATA LOCAL INFILE '{}' INTO TABLE {} CHARACTER SET utf8mb4 FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' IGNORE 1 LINES ({});",
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
        match self.format {
            RowFormat::Sql => {
                writeln!(self.out, "-- dbio innodb rows: {origin}")?;
                writeln!(self.out, "-- TIMESTAMP values are in UTC (time_zone below)")?;
                writeln!(self.out, "SET NAMES utf8mb4;")?;
                writeln!(self.out, "SET time_zone = '+00:00';")?;
                writeln!(self.out, "{};", self.def.create_sql.trim_end_matches(';'))?;
            }
            RowFormat::Tsv => {
                let names: Vec<&str> = written(&self.def).map(|(_, c)| c.name.as_str()).collect();
                writeln!(self.out, "{}", names.join("\t"))?;
            }
            RowFormat::Jsonl => {
                let h = serde_json::json!({
                    "header": {
                        "table": s.table,
                        "definition": s.definition,
                        "space_id": s.space_id,
                        "index_id": s.index_id,
                        "columns": written(&self.def).map(|(_, c)| serde_json::json!({"name": c.name, "type": c.sql_type})).collect::<Vec<_>>(),
                        "timestamps": "UTC",
                    }
                });
                writeln!(self.out, "{h}")?;
            }
        }
        Ok(())
    }

    fn sql_row(&mut self, row: &Row) {
        let l = &mut self.line;
        l.extend_from_slice(self.insert_prefix.as_bytes());
        for (n, (i, _)) in written(&self.def).enumerate() {
            let v = &row.values[i];
            if n > 0 {
                l.push(b',');
            }
            match v {
                Value::Null => l.extend_from_slice(b"NULL"),
                Value::Number(s) | Value::Decimal(s) => l.extend_from_slice(s.as_bytes()),
                Value::Text(s) => sql_string(s.as_bytes(), l),
                Value::Bytes(b) if b.is_empty() => l.extend_from_slice(b"''"),
                Value::Bytes(b) => {
                    l.extend_from_slice(b"0x");
                    l.extend_from_slice(hex(b).as_bytes());
                }
            }
        }
        l.extend_from_slice(b");");
        if row.deleted {
            l.extend_from_slice(b" -- deleted");
        }
    }

    fn tsv_row(&mut self, row: &Row) {
        let l = &mut self.line;
        for (n, (i, _)) in written(&self.def).enumerate() {
            let v = &row.values[i];
            if n > 0 {
                l.push(b'\t');
            }
            match v {
                Value::Null => l.extend_from_slice(b"\\N"),
                Value::Number(s) | Value::Decimal(s) => l.extend_from_slice(s.as_bytes()),
                Value::Text(s) => tsv_escape(s.as_bytes(), l),
                Value::Bytes(b) => tsv_escape(b, l),
            }
        }
    }

    fn json_row(&mut self, row: &Row, meta: &RowMeta) {
        let mut m = serde_json::Map::new();
        for (i, c) in written(&self.def) {
            let v = &row.values[i];
            let j = match v {
                Value::Null => serde_json::Value::Null,
                Value::Number(s) => match &c.ty {
                    // Integers are exact JSON numbers; FLOAT/DOUBLE keep the server's text.
                    ColType::Int { .. } => s
                        .parse::<serde_json::Number>()
                        .map(serde_json::Value::Number)
                        .unwrap_or_else(|_| serde_json::Value::String(s.clone())),
                    _ => s
                        .parse::<f64>()
                        .ok()
                        .and_then(serde_json::Number::from_f64)
                        .map(serde_json::Value::Number)
                        .unwrap_or_else(|| serde_json::Value::String(s.clone())),
                },
                Value::Decimal(s) | Value::Text(s) => serde_json::Value::String(s.clone()),
                Value::Bytes(b) => serde_json::Value::String(format!("0x{}", hex(b))),
            };
            m.insert(c.name.clone(), j);
        }
        let o = serde_json::json!({
            "row": m,
            "deleted": row.deleted,
            "trx_id": row.trx_id,
            "page_no": meta.page_no,
            "lsn": meta.lsn,
        });
        self.line.extend_from_slice(o.to_string().as_bytes());
    }
}

impl<W: Write> RowSink for RowWriter<W> {
    fn begin(&mut self, s: &Summary) -> std::io::Result<()> {
        self.header(s)
    }

    fn row(&mut self, row: &Row, meta: &RowMeta) -> std::io::Result<()> {
        self.line.clear();
        match self.format {
            RowFormat::Sql => self.sql_row(row),
            RowFormat::Tsv => self.tsv_row(row),
            RowFormat::Jsonl => self.json_row(row, meta),
        }
        self.line.push(b'\n');
        self.out.write_all(&self.line)
    }

    fn end(&mut self, _: &Summary) -> std::io::Result<()> {
        self.out.flush()
    }
}
