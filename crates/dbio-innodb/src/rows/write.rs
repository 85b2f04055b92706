//! Rows written as SQL INSERTs (with the CREATE TABLE used), TSV (LOAD DATA's default
//! escaping, `\N` for NULL) or JSON Lines; one line per row, streamed.

use super::def::{ColType, TableDef};
use super::record::Row;
use super::run::{RowMeta, RowSink, Summary};
use super::value::{Cell, Kind};
use std::io::Write;

/// Output format of the rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowFormat {
    /// `INSERT INTO ... VALUES (...);` per row, after `SET NAMES`, the time zone and the
    /// CREATE TABLE used.
    Sql,
    /// A header line of column names, then tab-separated values (LOAD DATA INFILE defaults);
    /// with [`RowWriter::deleted_column`], a last column `dbio_deleted` (1 deleted, 0 live).
    Tsv,
    /// A header object, then one object per row.
    Jsonl,
}

fn quote_ident(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

/// Bytes to escape: those below `below`, and `a` and `b`; `letter` maps each to the letter
/// written after its `\`.
struct Escapes {
    letter: [u8; 256],
    below: u8,
    a: u8,
    b: u8,
}

/// Whether some byte of `w` may need escaping (no false negatives): a byte below
/// `e.below`, or equal to `e.a` or `e.b` (the classic SWAR zero-byte tests).
#[inline]
fn word_may_escape(w: u64, e: &Escapes) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let below = w.wrapping_sub(ONES * e.below as u64) & !w & HIGH;
    below | zero(w ^ (ONES * e.a as u64)) | zero(w ^ (ONES * e.b as u64)) != 0
}

/// Bytes that a short value's copy may take beyond its end (see [`put`]).
pub const PAD: usize = 32;

/// Appends `s` (the first bytes of `padded`) to `out`: when `s` is short and `padded` has
/// [`PAD`] bytes, as one copy of that fixed size (no call) cut back to `s`.
#[inline]
fn put(s: &[u8], padded: &[u8], out: &mut Vec<u8>) {
    if s.len() <= PAD {
        if let Some(w) = padded
            .get(..PAD)
            .and_then(|w| <&[u8; PAD]>::try_from(w).ok())
        {
            let at = out.len();
            out.extend_from_slice(w);
            out.truncate(at + s.len());
            return;
        }
    }
    out.extend_from_slice(s);
}

/// Whether some byte of `s` is one that `e` escapes (a word at a time).
#[inline]
fn may_escape(s: &[u8], e: &Escapes) -> bool {
    let mut words = s.chunks_exact(8);
    !(words
        .by_ref()
        .all(|w| !word_may_escape(u64::from_le_bytes(w.try_into().unwrap_or_default()), e))
        && words.remainder().iter().all(|&b| e.letter[b as usize] == 0))
}

/// Appends `s` to `out` with the bytes that `e` escapes written as `\` and their letter
/// (runs of other bytes are copied whole; words of 8 bytes without one are skipped at once).
#[inline]
fn escape(s: &[u8], e: &Escapes, out: &mut Vec<u8>) {
    // Most values have no byte to escape: checked a word at a time, then copied at once.
    if !may_escape(s, e) {
        out.extend_from_slice(s);
        return;
    }
    let mut start = 0;
    let mut i = 0;
    while i < s.len() {
        if let Some(w) = s.get(i..i + 8) {
            let w = u64::from_le_bytes(w.try_into().unwrap_or_default());
            if !word_may_escape(w, e) {
                i += 8;
                continue;
            }
        }
        let end = (i + 8).min(s.len());
        for (j, &b) in s[i..end].iter().enumerate() {
            let l = e.letter[b as usize];
            if l != 0 {
                out.extend_from_slice(&s[start..i + j]);
                out.extend_from_slice(&[b'\\', l]);
                start = i + j + 1;
            }
        }
        i = end;
    }
    out.extend_from_slice(&s[start..]);
}

/// A byte-to-escape-letter table from (byte, letter) pairs.
const fn escapes(pairs: &[(u8, u8)]) -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < pairs.len() {
        t[pairs[i].0 as usize] = pairs[i].1;
        i += 1;
    }
    t
}

const SQL_ESCAPES: Escapes = Escapes {
    letter: escapes(&[
        (b'\'', b'\''),
        (b'\\', b'\\'),
        (0, b'0'),
        (b'\n', b'n'),
        (b'\r', b'r'),
        (0x1A, b'Z'),
    ]),
    below: 0x1B,
    a: b'\'',
    b: b'\\',
};

const TSV_ESCAPES: Escapes = Escapes {
    letter: escapes(&[(b'\\', b'\\'), (0, b'0'), (b'\n', b'n'), (b'\t', b't')]),
    below: 0x0B,
    a: b'\\',
    b: b'\\',
};

fn sql_string(s: &[u8], plain: bool, out: &mut Vec<u8>) {
    out.push(b'\'');
    if plain {
        out.extend_from_slice(s);
    } else {
        escape(s, &SQL_ESCAPES, out);
    }
    out.push(b'\'');
}

fn tsv_escape(s: &[u8], out: &mut Vec<u8>) {
    escape(s, &TSV_ESCAPES, out);
}

/// The columns written: all but generated ones (the server computes those).
fn written(def: &TableDef) -> impl Iterator<Item = (usize, &super::def::Column)> {
    def.columns
        .iter()
        .enumerate()
        .filter(|(_, c)| c.generated.is_none())
}

fn hex(b: &[u8], out: &mut Vec<u8>) {
    const D: &[u8; 16] = b"0123456789ABCDEF";
    for &x in b {
        out.extend_from_slice(&[D[(x >> 4) as usize], D[(x & 15) as usize]]);
    }
}

/// Formats rows into lines of one format; shared by the threads that decode (it is `Sync`).
#[derive(Clone, Debug)]
pub struct LineEncoder {
    format: RowFormat,
    def: TableDef,
    /// Indexes of the columns written.
    cols: Vec<usize>,
    /// Per column written: its text never holds a byte that SQL or TSV escapes (dates and
    /// times: digits, `-`, `:`, `.` and spaces), so it is copied as it is.
    plain: Vec<bool>,
    insert_prefix: String,
    /// TSV: a last column, 1 for a deleted row, 0 for a live one.
    deleted_col: bool,
}

/// Whether the text of every value of `ty` is made of digits, `-`, `:`, `.` and spaces
/// (the temporal types), none of which SQL or TSV escapes.
fn never_escaped(ty: &ColType) -> bool {
    matches!(
        ty,
        ColType::Year
            | ColType::Date
            | ColType::Datetime { .. }
            | ColType::Timestamp { .. }
            | ColType::Time { .. }
            | ColType::OldTemporal { .. }
    )
}

impl LineEncoder {
    /// An encoder of `def`'s rows.
    pub fn new(format: RowFormat, def: &TableDef) -> LineEncoder {
        let names: Vec<String> = written(def).map(|(_, c)| quote_ident(&c.name)).collect();
        LineEncoder {
            format,
            insert_prefix: format!(
                "INSERT INTO {} ({}) VALUES (",
                quote_ident(&def.name),
                names.join(",")
            ),
            cols: written(def).map(|(i, _)| i).collect(),
            plain: written(def).map(|(_, c)| never_escaped(&c.ty)).collect(),
            def: def.clone(),
            deleted_col: false,
        }
    }

    /// Appends the line of a row (with its `\n`) to `out`; `cell(i)` is table column `i`,
    /// and the bytes from its first to the end of the buffer that holds it (at least the
    /// value's; [`PAD`] more let a short value be copied in one piece of fixed size).
    pub fn encode<'a>(
        &self,
        cell: impl Fn(usize) -> (Cell<'a>, &'a [u8]),
        deleted: bool,
        trx_id: u64,
        meta: &RowMeta,
        out: &mut Vec<u8>,
    ) {
        match self.format {
            RowFormat::Sql => self.sql_row(|i| cell(i).0, deleted, out),
            RowFormat::Tsv => self.tsv_row(cell, out),
            RowFormat::Jsonl => self.json_row(|i| cell(i).0, deleted, trx_id, meta, out),
        }
        if self.deleted_col && self.format == RowFormat::Tsv {
            out.extend_from_slice(if deleted { b"\t1" } else { b"\t0" });
        }
        out.push(b'\n');
    }

    fn sql_row<'a>(&self, cell: impl Fn(usize) -> Cell<'a>, deleted: bool, l: &mut Vec<u8>) {
        l.extend_from_slice(self.insert_prefix.as_bytes());
        for (n, (&i, &plain)) in self.cols.iter().zip(&self.plain).enumerate() {
            let v = cell(i);
            if n > 0 {
                l.push(b',');
            }
            match v.kind {
                Kind::Null => l.extend_from_slice(b"NULL"),
                Kind::Number | Kind::Decimal => l.extend_from_slice(v.bytes),
                Kind::Text => sql_string(v.bytes, plain, l),
                Kind::Bytes if v.bytes.is_empty() => l.extend_from_slice(b"''"),
                Kind::Bytes => {
                    l.extend_from_slice(b"0x");
                    hex(v.bytes, l);
                }
            }
        }
        l.extend_from_slice(b");");
        if deleted {
            l.extend_from_slice(b" -- deleted");
        }
    }

    fn tsv_row<'a>(&self, cell: impl Fn(usize) -> (Cell<'a>, &'a [u8]), l: &mut Vec<u8>) {
        for (n, (&i, &plain)) in self.cols.iter().zip(&self.plain).enumerate() {
            let (v, padded) = cell(i);
            if n > 0 {
                l.push(b'\t');
            }
            match v.kind {
                Kind::Null => l.extend_from_slice(b"\\N"),
                Kind::Number | Kind::Decimal => put(v.bytes, padded, l),
                Kind::Text if plain => put(v.bytes, padded, l),
                Kind::Text | Kind::Bytes if !may_escape(v.bytes, &TSV_ESCAPES) => {
                    put(v.bytes, padded, l)
                }
                Kind::Text | Kind::Bytes => tsv_escape(v.bytes, l),
            }
        }
    }

    fn json_row<'a>(
        &self,
        cell: impl Fn(usize) -> Cell<'a>,
        deleted: bool,
        trx_id: u64,
        meta: &RowMeta,
        out: &mut Vec<u8>,
    ) {
        let mut m = serde_json::Map::new();
        for &i in &self.cols {
            let c = &self.def.columns[i];
            let v = cell(i);
            let s = || String::from_utf8_lossy(v.bytes).into_owned();
            let j = match v.kind {
                Kind::Null => serde_json::Value::Null,
                Kind::Number => match &c.ty {
                    // Integers are exact JSON numbers.
                    ColType::Int { .. } => s()
                        .parse::<serde_json::Number>()
                        .map(serde_json::Value::Number)
                        .unwrap_or_else(|_| serde_json::Value::String(s())),
                    // FLOAT and DOUBLE: a string holding the server's text (FLOAT(7,3)'s
                    // "0.000", "1e15"); a JSON number would be printed again by every
                    // JSON reader (0, 1000000000000000).
                    _ => serde_json::Value::String(s()),
                },
                Kind::Decimal | Kind::Text => serde_json::Value::String(s()),
                Kind::Bytes => {
                    let mut h = b"0x".to_vec();
                    hex(v.bytes, &mut h);
                    serde_json::Value::String(String::from_utf8_lossy(&h).into_owned())
                }
            };
            m.insert(c.name.clone(), j);
        }
        let o = serde_json::json!({
            "row": m,
            "deleted": deleted,
            "trx_id": trx_id,
            "page_no": meta.page_no,
            "lsn": meta.lsn,
        });
        out.extend_from_slice(o.to_string().as_bytes());
    }
}

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

    /// Byte-by-byte escaping, the reference for the word-at-a-time skipping.
    fn naive(s: &[u8], e: &Escapes) -> Vec<u8> {
        let mut out = Vec::new();
        for &b in s {
            match e.letter[b as usize] {
                0 => out.push(b),
                l => out.extend_from_slice(&[b'\\', l]),
            }
        }
        out
    }

    #[test]
    fn escaping_skips_words_without_missing_a_byte() {
        let alphabet = b"ab\\\t\n\r\0\x1a'\"\x0b\x1b\x80\xff \x09Z";
        // Every escapable byte at every position of strings of 0..40 bytes, over a
        // background of bytes that are never escaped.
        let mut seed = 7u32;
        for len in 0..40usize {
            for round in 0..30 {
                let s: Vec<u8> = (0..len)
                    .map(|_| {
                        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                        if round % 3 == 0 && !(seed >> 16).is_multiple_of(4) {
                            b'x'
                        } else {
                            alphabet[(seed >> 16) as usize % alphabet.len()]
                        }
                    })
                    .collect();
                for e in [&TSV_ESCAPES, &SQL_ESCAPES] {
                    let mut got = Vec::new();
                    escape(&s, e, &mut got);
                    assert_eq!(got, naive(&s, e), "{s:?}");
                }
            }
        }
        let mut out = Vec::new();
        tsv_escape(b"a\tb\\c\nd\0e 0123456789", &mut out);
        assert_eq!(out, b"a\\tb\\\\c\\nd\\0e 0123456789");
    }

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
