//! Rows formatted into lines: SQL INSERTs, TSV (LOAD DATA's default escaping, `\N` for
//! NULL) or JSON Lines, one line per row. The decoding threads share a [`LineEncoder`]; the
//! writer of the lines is the `write` module.

use super::def::{ColType, TableDef};
use super::record::{self, BlobSource, Layout, RawField, Reject, RowMeta, PAD};
use super::value::{Cell, Kind};
use dbio_schema::rows::RowFormat;

pub(super) fn quote_ident(s: &str) -> String {
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
pub(super) fn written(def: &TableDef) -> impl Iterator<Item = (usize, &super::def::Column)> {
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

/// Where [`LineEncoder::tsv_record`] finds each written column in the records of one layout.
#[derive(Clone, Debug, Default)]
pub(super) struct DirectPlan {
    /// Per written column: its index, its field (`None`: not in the record) and whether its
    /// text is never escaped.
    cols: Vec<(usize, Option<usize>, bool)>,
    /// (column, field) of the in-record columns not written: decoded only to be checked.
    check_only: Vec<(usize, usize)>,
}

/// Per-thread buffers of [`LineEncoder::tsv_record`].
#[derive(Default)]
pub(super) struct DirectScratch {
    blob: Vec<u8>,
    value: Vec<u8>,
}

/// Formats rows into lines of one format; shared by the threads that decode (it is `Sync`).
#[derive(Clone, Debug)]
pub struct LineEncoder {
    pub(super) format: RowFormat,
    pub(super) def: TableDef,
    /// Indexes of the columns written.
    cols: Vec<usize>,
    /// Per column written: its text never holds a byte that SQL or TSV escapes (dates and
    /// times: digits, `-`, `:`, `.` and spaces), so it is copied as it is.
    plain: Vec<bool>,
    insert_prefix: String,
    /// TSV: a last column, 1 for a deleted row, 0 for a live one.
    pub(super) deleted_col: bool,
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

    /// Whether [`Self::tsv_record`] makes this encoder's lines (straight from the page,
    /// without a decoded row in between): TSV.
    pub(super) fn direct(&self) -> bool {
        self.format == RowFormat::Tsv
    }

    /// Where the fields of [`Self::tsv_record`] are in records of `layout`.
    pub(super) fn direct_plan(&self, layout: &Layout) -> DirectPlan {
        let field_of = |ci: usize| layout.fields.iter().position(|f| f.col == Some(ci));
        DirectPlan {
            cols: self
                .cols
                .iter()
                .zip(&self.plain)
                .map(|(&ci, &plain)| (ci, field_of(ci), plain))
                .collect(),
            // In-record columns that are not written (STORED generated ones): checked as
            // `decode_into` checks every field.
            check_only: layout
                .fields
                .iter()
                .enumerate()
                .filter(|(_, f)| f.col.is_some_and(|ci| !self.cols.contains(&ci)))
                .map(|(i, f)| (f.col.unwrap_or_default(), i))
                .collect(),
        }
    }

    /// Appends the TSV line (with its `\n`) of the split record `fields` of page `p`, each
    /// value decoded straight into `out`: the line [`Self::encode`] makes of the row that
    /// [`record::decode_into`] gives, and the same rejection (`out` is then as it was).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tsv_record(
        &self,
        plan: &DirectPlan,
        p: &[u8],
        layout: &Layout,
        fields: &[RawField],
        deleted: bool,
        blobs: &dyn BlobSource,
        sc: &mut DirectScratch,
        out: &mut Vec<u8>,
    ) -> Result<(), Reject> {
        let mark = out.len();
        let r = self.tsv_fields(plan, p, layout, fields, blobs, sc, out);
        if r.is_err() {
            out.truncate(mark);
            return r;
        }
        if self.deleted_col {
            out.extend_from_slice(if deleted { b"\t1" } else { b"\t0" });
        }
        out.push(b'\n');
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn tsv_fields(
        &self,
        plan: &DirectPlan,
        p: &[u8],
        layout: &Layout,
        fields: &[RawField],
        blobs: &dyn BlobSource,
        sc: &mut DirectScratch,
        out: &mut Vec<u8>,
    ) -> Result<(), Reject> {
        let def = &self.def;
        for (n, &(ci, field, plain)) in plan.cols.iter().enumerate() {
            if n > 0 {
                out.push(b'\t');
            }
            // A column without a field (none is written) is NULL, as in a decoded row.
            let Some(rf) = field.map(|i| &fields[i]) else {
                out.extend_from_slice(b"\\N");
                continue;
            };
            if rf.missing {
                let c = layout.defaults[ci].cell();
                self.tsv_cell(c.kind, c.bytes, plain, out);
                continue;
            }
            if rf.null {
                out.extend_from_slice(b"\\N");
                continue;
            }
            let at = out.len();
            let kind = record::field_value(p, rf, &def.columns[ci].ty, blobs, &mut sc.blob, out)?;
            if !plain
                && matches!(kind, Kind::Text | Kind::Bytes)
                && may_escape(&out[at..], &TSV_ESCAPES)
            {
                sc.value.clear();
                sc.value.extend_from_slice(&out[at..]);
                out.truncate(at);
                tsv_escape(&sc.value, out);
            }
        }
        for &(ci, i) in &plan.check_only {
            let rf = &fields[i];
            if !rf.missing && !rf.null {
                sc.value.clear();
                record::field_value(
                    p,
                    rf,
                    &def.columns[ci].ty,
                    blobs,
                    &mut sc.blob,
                    &mut sc.value,
                )?;
            }
        }
        Ok(())
    }

    /// A value of `kind` as [`Self::tsv_row`] writes it.
    fn tsv_cell(&self, kind: Kind, bytes: &[u8], plain: bool, out: &mut Vec<u8>) {
        match kind {
            Kind::Null => out.extend_from_slice(b"\\N"),
            Kind::Number | Kind::Decimal => out.extend_from_slice(bytes),
            Kind::Text if plain => out.extend_from_slice(bytes),
            Kind::Text | Kind::Bytes => tsv_escape(bytes, out),
        }
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
}
