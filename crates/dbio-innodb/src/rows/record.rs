//! Clustered-index leaf records split into fields (COMPACT/DYNAMIC and REDUNDANT headers)
//! and decoded into rows, with a plausibility check that names why a record is rejected.

use super::def::{ColType, TableDef};
use super::value::{self, Bad, Cell, Kind, Value};
use crate::page::{be16, be32, be64, RowFormat};
use serde::Serialize;

/// Bytes that a short value's copy may take beyond its end (the line encoder copies a short
/// value in one piece of this size: the `line` module).
pub const PAD: usize = 32;

/// Where a row came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowMeta {
    /// Space id.
    pub space_id: u32,
    /// Page number.
    pub page_no: u32,
    /// The page's LSN.
    pub lsn: u64,
}

/// Why a record is not emitted as a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reject {
    /// The record header is not an ordinary leaf record (status, heap number).
    Header,
    /// Field lengths run outside the page or do not fit the column.
    Length,
    /// A REDUNDANT record with another number of fields than the definition has.
    FieldCount,
    /// A number, date or time outside its type's range.
    Range,
    /// Text that is not valid in the column's character set.
    Charset,
    /// An off-page (BLOB) part whose pages were not found or are damaged.
    BlobMissing,
    /// A record written after a MariaDB instant ADD COLUMN (record status 4: it counts its
    /// added fields) where the index has no fields beyond its core ones: no instant metadata
    /// (root page of type INSTANT) was found, or the definition has no column the ALTER added.
    /// Or a record of MySQL 8's instant ADD/DROP COLUMN (info bits 0x40 or 0x80) when the
    /// definition does not say what each row version holds (not the SDI's), a row version the
    /// SDI does not know, or a REDUNDANT record with a row version.
    Instant,
    /// A purged record (on the page's free list) whose data MariaDB zeroed: see [`zeroed`].
    Zeroed,
    /// By the definition, the record does not fit where it is on the page: its fields run
    /// into the header of the record after it (or past the page's heap top), or its header
    /// (NULL bitmap, lengths) reaches back over the record before it. See [`check_extents`].
    Overlap,
}

impl Reject {
    /// snake_case name, as in the summary.
    pub fn name(self) -> &'static str {
        match self {
            Reject::Header => "header",
            Reject::Length => "length",
            Reject::FieldCount => "field_count",
            Reject::Range => "range",
            Reject::Charset => "charset",
            Reject::BlobMissing => "blob_missing",
            Reject::Instant => "instant",
            Reject::Zeroed => "zeroed",
            Reject::Overlap => "overlap",
        }
    }
}

impl From<Bad> for Reject {
    fn from(b: Bad) -> Reject {
        match b {
            Bad::Length => Reject::Length,
            Bad::Range => Reject::Range,
            Bad::Charset => Reject::Charset,
        }
    }
}

/// A hidden system column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sys {
    /// DB_ROW_ID (6 bytes), the key when the table has none.
    RowId,
    /// DB_TRX_ID (6 bytes).
    TrxId,
    /// DB_ROLL_PTR (7 bytes).
    RollPtr,
}

/// One field of the clustered index, in record order.
#[derive(Clone, Debug)]
pub struct IndexField {
    /// The table column, or `None` for a system column.
    pub col: Option<usize>,
    /// The system column.
    pub sys: Option<Sys>,
    /// Bytes in a COMPACT record when fixed.
    pub fixed_compact: Option<usize>,
    /// Bytes in a REDUNDANT record when fixed.
    pub fixed_redundant: Option<usize>,
    /// May be NULL.
    pub nullable: bool,
    /// Lengths above 127 take 2 bytes (the column may hold more than 255 bytes, or is a BLOB).
    pub big: bool,
}

/// The clustered index of a table definition: key columns, DB_TRX_ID, DB_ROLL_PTR, the
/// other columns (DB_ROW_ID first when there is no key).
#[derive(Clone, Debug)]
pub struct Layout {
    /// Fields in record order.
    pub fields: Vec<IndexField>,
    /// Nullable fields (bits in the COMPACT NULL bitmap).
    pub n_nullable: usize,
    /// Key fields at the start (1 for DB_ROW_ID).
    pub n_key: usize,
    /// Fields of records written before the first instant ADD COLUMN (MariaDB 10.3+: the
    /// root page's PAGE_INSTANT); all fields when the table had none.
    pub n_core: usize,
    /// Values of instantly added columns for records written before the ADD (the metadata
    /// record's), by table column; NULL where unknown.
    pub defaults: Vec<Value>,
    /// NULL-bitmap bytes of records with the core fields only (status 0), when MariaDB keeps
    /// it in the root page (after an instant DROP or reorder); else from the core fields.
    pub core_null_bytes: Option<usize>,
    /// MySQL 8's instant ADD/DROP COLUMN: the row version that added and the one that dropped
    /// (0: none) each field; empty for other tables. See [`split_mysql_instant`].
    pub versions: Vec<(u8, u8)>,
}

impl Layout {
    /// The clustered index layout of `def`.
    pub fn clustered(def: &TableDef) -> Layout {
        let sys = |s: Sys, n: usize| IndexField {
            col: None,
            sys: Some(s),
            fixed_compact: Some(n),
            fixed_redundant: Some(n),
            nullable: false,
            big: false,
        };
        let col = |i: usize| {
            let c = &def.columns[i];
            IndexField {
                col: Some(i),
                sys: None,
                fixed_compact: c.ty.fixed_len(),
                fixed_redundant: c.ty.redundant_fixed_len(),
                nullable: c.nullable,
                big: c.ty.max_bytes() > 255 || c.ty.is_blob(),
            }
        };
        let mut fields = Vec::new();
        if def.has_row_id() {
            fields.push(sys(Sys::RowId, 6));
        } else {
            fields.extend(def.primary_key.iter().map(|&i| col(i)));
        }
        let n_key = fields.len();
        fields.push(sys(Sys::TrxId, 6));
        fields.push(sys(Sys::RollPtr, 7));
        fields.extend(
            (0..def.columns.len())
                .filter(|&i| !def.primary_key.contains(&i) && def.columns[i].in_record())
                .map(col),
        );
        let n_nullable = fields.iter().filter(|f| f.nullable).count();
        Layout {
            n_core: fields.len(),
            fields,
            n_nullable,
            n_key,
            defaults: vec![Value::Null; def.columns.len()],
            core_null_bytes: None,
            versions: Vec::new(),
        }
    }

    /// Nullable fields among the first `n`.
    pub fn nullable_in(&self, n: usize) -> usize {
        self.fields[..n].iter().filter(|f| f.nullable).count()
    }
}

/// Where one field's bytes are in the page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawField {
    /// Offset of the first byte in the page.
    pub start: usize,
    /// Bytes stored in the record.
    pub len: usize,
    /// SQL NULL.
    pub null: bool,
    /// The last 20 bytes are a reference to off-page (BLOB) parts.
    pub external: bool,
    /// Not in the record (added by an instant ADD COLUMN after it was written): the value is
    /// the column's default.
    pub missing: bool,
}

/// The bytes a split record occupies on its page, by the definition: its header (from its
/// first length or offset byte to the origin) and its data (from the origin to the end of its
/// last stored field).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Extent {
    /// Offset of the first byte of the record's header.
    pub start: usize,
    /// Offset just past the last byte of its data.
    pub end: usize,
}

/// Splits the record at `origin` into its fields. `out` is cleared first. Returns the bytes
/// the record occupies by the definition ([`Extent`]).
pub fn split(
    p: &[u8],
    origin: usize,
    format: RowFormat,
    layout: &Layout,
    out: &mut Vec<RawField>,
) -> Result<Extent, Reject> {
    out.clear();
    let end_limit = p.len().saturating_sub(8);
    match format {
        RowFormat::Compressed => Err(Reject::Header),
        RowFormat::Compact => {
            if origin < 5 + 94 || origin >= end_limit {
                return Err(Reject::Length);
            }
            let status = be16(p, origin - 4) & 7;
            if status == 0 && p[origin - 5] & 0xC0 != 0 {
                return split_mysql_instant(p, origin, layout, out);
            }
            let all = layout.fields.len();
            let (n_fields, nulls) = match status {
                0 => (layout.n_core, origin - 6),
                // MariaDB instant ADD COLUMN: the number of added fields (minus one) in 1 or
                // 2 bytes before the NULL bitmap.
                4 => {
                    if layout.n_core == all {
                        return Err(Reject::Instant);
                    }
                    let b = p[origin - 6] as usize;
                    let (n_add, hdr) = if b < 0x80 {
                        (b, 1)
                    } else {
                        ((b & 0x7F) | (p[origin - 7] as usize) << 7, 2)
                    };
                    let n = layout.n_core + 1 + n_add;
                    if n > all {
                        return Err(Reject::FieldCount);
                    }
                    (n, origin - 6 - hdr)
                }
                _ => return Err(Reject::Header),
            };
            let null_bytes = match (status, layout.core_null_bytes) {
                (0, Some(n)) => n,
                _ => layout.nullable_in(n_fields).div_ceil(8),
            };
            let mut lens = nulls
                .checked_sub(null_bytes)
                .filter(|&l| l >= 94)
                .ok_or(Reject::Length)?;
            let mut bit = 0usize;
            let mut at = origin;
            for f in &layout.fields[..n_fields] {
                let mut rf = RawField {
                    start: at,
                    ..RawField::default()
                };
                if compact_field(p, f, nulls, &mut bit, &mut lens, &mut rf)? {
                    out.push(rf);
                    continue;
                }
                at += rf.len;
                if at > end_limit {
                    return Err(Reject::Length);
                }
                out.push(rf);
            }
            out.extend((n_fields..all).map(|_| RawField {
                missing: true,
                ..RawField::default()
            }));
            Ok(Extent {
                start: lens + 1,
                end: at,
            })
        }
        RowFormat::Redundant => {
            if origin < 6 + 94 || origin >= end_limit {
                return Err(Reject::Length);
            }
            let n_fields = ((be16(p, origin - 4) & 0x7FE) >> 1) as usize;
            if !layout.versions.is_empty() && p[origin - 6] & 0x40 != 0 {
                return Err(Reject::Instant); // MySQL 8.0.29+ row version: not decoded
            }
            // Records written before an instant ADD COLUMN have fewer fields.
            if n_fields > layout.fields.len() || n_fields < layout.n_core {
                return Err(Reject::FieldCount);
            }
            let short = p[origin - 3] & 1 != 0;
            let w = if short { 1 } else { 2 };
            if origin < 6 + n_fields * w + 94 {
                return Err(Reject::Length);
            }
            let mut prev = 0usize;
            for (i, f) in layout.fields[..n_fields].iter().enumerate() {
                let at = origin - 6 - (i + 1) * w;
                let (end, null, ext) = if short {
                    ((p[at] & 0x7F) as usize, p[at] & 0x80 != 0, false)
                } else {
                    let v = be16(p, at);
                    ((v & 0x3FFF) as usize, v & 0x8000 != 0, v & 0x4000 != 0)
                };
                if end < prev || origin + end > end_limit {
                    return Err(Reject::Length);
                }
                let len = end - prev;
                if null && !f.nullable {
                    return Err(Reject::Length);
                }
                if !null {
                    if let Some(n) = f.fixed_redundant {
                        if n != len {
                            return Err(Reject::Length);
                        }
                    }
                }
                out.push(RawField {
                    start: origin + prev,
                    len,
                    null,
                    external: ext,
                    missing: false,
                });
                prev = end;
            }
            out.extend((n_fields..layout.fields.len()).map(|_| RawField {
                missing: true,
                ..RawField::default()
            }));
            Ok(Extent {
                start: origin - 6 - n_fields * w,
                end: origin + prev,
            })
        }
    }
}

/// What [`split_planned`] needs of a [`Layout`] for every COMPACT record, computed once: the
/// fields as small flags and lengths, and the NULL-bitmap bytes of records with the core
/// fields only.
#[derive(Clone, Debug)]
pub struct SplitPlan {
    fields: Vec<PlanField>,
    core_null_bytes: usize,
}

#[derive(Clone, Copy, Debug)]
struct PlanField {
    /// Bytes in a COMPACT record, or [`VAR`].
    fixed: u32,
    nullable: bool,
    big: bool,
}

/// A field whose length is in the record header.
const VAR: u32 = u32::MAX;

impl SplitPlan {
    /// The plan of `layout`.
    pub fn new(layout: &Layout) -> SplitPlan {
        SplitPlan {
            fields: layout
                .fields
                .iter()
                .map(|f| PlanField {
                    fixed: f
                        .fixed_compact
                        .map_or(VAR, |n| u32::try_from(n).unwrap_or(VAR - 1)),
                    nullable: f.nullable,
                    big: f.big,
                })
                .collect(),
            core_null_bytes: layout
                .core_null_bytes
                .unwrap_or_else(|| layout.nullable_in(layout.n_core).div_ceil(8)),
        }
    }
}

/// [`split`] with the facts of `plan` (made from `layout`): the same fields and the same
/// rejections, faster for the ordinary COMPACT record (status 0); other records go to
/// [`split`].
#[inline]
pub fn split_planned(
    p: &[u8],
    origin: usize,
    format: RowFormat,
    layout: &Layout,
    plan: &SplitPlan,
    out: &mut Vec<RawField>,
) -> Result<Extent, Reject> {
    let end_limit = p.len().saturating_sub(8);
    if format != RowFormat::Compact
        || origin < 5 + 94
        || origin >= end_limit
        || be16(p, origin - 4) & 7 != 0
        || p[origin - 5] & 0xC0 != 0
    {
        return split(p, origin, format, layout, out);
    }
    let n_fields = layout.n_core;
    let all = layout.fields.len();
    let nulls = origin - 6;
    let mut lens = nulls
        .checked_sub(plan.core_null_bytes)
        .filter(|&l| l >= 94)
        .ok_or(Reject::Length)?;
    let missing = RawField {
        missing: true,
        ..RawField::default()
    };
    // Every slot is written below: the vector is only resized when its length differs.
    if out.len() != all {
        out.clear();
        out.resize(all, missing);
    }
    out[n_fields..].fill(missing);
    let mut bit = 0usize;
    let mut at = origin;
    for (f, slot) in plan.fields[..n_fields].iter().zip(&mut out[..n_fields]) {
        let mut rf = RawField {
            start: at,
            ..RawField::default()
        };
        if f.nullable {
            let is_null = p[nulls - bit / 8] >> (bit % 8) & 1 == 1;
            bit += 1;
            if is_null {
                rf.null = true;
                *slot = rf;
                continue;
            }
        }
        let len = if f.fixed != VAR {
            f.fixed as usize
        } else {
            if lens < 94 {
                return Err(Reject::Length);
            }
            let b1 = p[lens] as usize;
            lens -= 1;
            if f.big && b1 & 0x80 != 0 {
                let b2 = p[lens] as usize;
                lens -= 1;
                rf.external = b1 & 0x40 != 0;
                ((b1 & 0x3F) << 8) | b2
            } else {
                b1
            }
        };
        rf.len = len;
        at += len;
        if at > end_limit {
            return Err(Reject::Length);
        }
        *slot = rf;
    }
    Ok(Extent {
        start: lens + 1,
        end: at,
    })
}

/// [`split`] of a COMPACT record with MySQL 8's instant flags in its info bits: 0x40, its row
/// version in the byte before the header (8.0.29+): it holds the fields that version has
/// (added in it or before, not dropped in it or before), the others are missing (a column
/// added later: its default; a dropped one: nothing); 0x80, its number of fields in 1 or 2
/// bytes there (8.0.12-8.0.28 instant ADD): the fields after them are missing. The NULL
/// bitmap counts the nullable fields the record holds. Rejected as [`Reject::Instant`] when
/// the layout has no row versions (a definition other than the SDI's) or the version is
/// newer than any the layout knows.
fn split_mysql_instant(
    p: &[u8],
    origin: usize,
    layout: &Layout,
    out: &mut Vec<RawField>,
) -> Result<Extent, Reject> {
    let all = layout.fields.len();
    if layout.versions.len() != all {
        return Err(Reject::Instant);
    }
    let info = p[origin - 5];
    let (version, n_fields, nulls) = match info & 0xC0 {
        0x40 => {
            let v = p[origin - 6];
            if layout.versions.iter().all(|&(a, d)| a < v && d < v) && v != 0 {
                return Err(Reject::Instant);
            }
            (Some(v), all, origin - 7)
        }
        0x80 => {
            let b = p[origin - 6] as usize;
            let (n, hdr) = if b & 0x80 == 0 {
                (b, 1)
            } else {
                (((b & 0x7F) << 8) | p[origin - 7] as usize, 2)
            };
            if n > all || n < layout.n_key + 2 {
                return Err(Reject::FieldCount);
            }
            (None, n, origin - 6 - hdr)
        }
        _ => return Err(Reject::Header), // both flags: MySQL calls it corrupt
    };
    let holds = |i: usize| match version {
        Some(v) => {
            let (a, d) = layout.versions[i];
            a <= v && (d == 0 || d > v)
        }
        None => i < n_fields,
    };
    let null_bytes = (0..all)
        .filter(|&i| holds(i) && layout.fields[i].nullable)
        .count()
        .div_ceil(8);
    let end_limit = p.len().saturating_sub(8);
    let mut lens = nulls
        .checked_sub(null_bytes)
        .filter(|&l| l >= 94)
        .ok_or(Reject::Length)?;
    out.clear();
    let mut bit = 0usize;
    let mut at = origin;
    for (i, f) in layout.fields.iter().enumerate() {
        let mut rf = RawField {
            start: at,
            ..RawField::default()
        };
        if !holds(i) {
            rf.missing = true;
            out.push(rf);
            continue;
        }
        if compact_field(p, f, nulls, &mut bit, &mut lens, &mut rf)? {
            out.push(rf);
            continue;
        }
        at += rf.len;
        if at > end_limit {
            return Err(Reject::Length);
        }
        out.push(rf);
    }
    Ok(Extent {
        start: lens + 1,
        end: at,
    })
}

/// Finds the records of a page that do not fit where they are, by the definition their
/// [`Extent`]s came from. A record's header and data lie between the records before and after
/// it on the page (InnoDB never lets them overlap, and a record reusing a purged one's place
/// stays inside it), so a definition with a column too wide, too many columns or another NULL
/// bitmap puts a record's data into the header of the next one, or its header over the record
/// before it, even where every length stays inside the page. `recs[i]` is a record's origin and
/// its extent (`None` when it was not split: a record whose header alone, 5 bytes in COMPACT
/// and 6 in REDUNDANT, is taken as known); `bad[i]` is set for each record whose extent
/// reaches before the end of the system records or the origin of the record before it, or
/// past the start of the header of the record after it (past the heap top for the last one:
/// PAGE_HEAP_TOP when it is plausible, else the end of the record area). `order` is scratch.
pub fn check_extents(
    p: &[u8],
    format: RowFormat,
    recs: &[(usize, Option<Extent>)],
    order: &mut Vec<u32>,
    bad: &mut Vec<bool>,
) {
    bad.clear();
    bad.resize(recs.len(), false);
    let (first, min_header) = match format {
        RowFormat::Redundant => (125, 6),
        _ => (120, 5),
    };
    order.clear();
    order.extend(0..recs.len() as u32);
    order.sort_unstable_by_key(|&i| recs[i as usize].0);
    let last_origin = order.last().map_or(0, |&i| recs[i as usize].0);
    let area_end = p.len().saturating_sub(8);
    let heap_top = if p.len() > 42 {
        be16(p, 40) as usize
    } else {
        0
    };
    let limit = if (first.max(last_origin)..=area_end).contains(&heap_top) {
        heap_top
    } else {
        area_end
    };
    for (k, &i) in order.iter().enumerate() {
        let Some(e) = recs[i as usize].1 else {
            continue;
        };
        let floor = match k {
            0 => first,
            _ => recs[order[k - 1] as usize].0,
        };
        let ceiling = match order.get(k + 1) {
            Some(&j) => {
                let (origin, ext) = recs[j as usize];
                ext.map_or(origin.saturating_sub(min_header), |x| x.start)
            }
            None => limit,
        };
        if e.start < floor || e.end > ceiling {
            bad[i as usize] = true;
        }
    }
}

/// Reads the off-page part of a column: `len` bytes from the BLOB chain starting at
/// (`space`, `page_no`, `offset`).
pub trait BlobSource {
    /// Appends the bytes to `out`; `false` when a page of the chain is missing or damaged.
    fn read(&self, space: u32, page_no: u32, offset: u32, len: u64, out: &mut Vec<u8>) -> bool;
}

/// No BLOB pages at all: every off-page value is missing.
pub struct NoBlobs;

impl BlobSource for NoBlobs {
    fn read(&self, _: u32, _: u32, _: u32, _: u64, _: &mut Vec<u8>) -> bool {
        false
    }
}

/// A decoded row.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Values in table column order.
    pub values: Vec<Value>,
    /// Delete-marked or on the page's free list.
    pub deleted: bool,
    /// DB_TRX_ID.
    pub trx_id: u64,
    /// DB_ROW_ID when the table has no key.
    pub row_id: Option<u64>,
}

/// The key bytes of a split record (for the newest-LSN-per-key choice).
pub fn key_bytes(p: &[u8], layout: &Layout, fields: &[RawField], out: &mut Vec<u8>) {
    out.clear();
    for f in &fields[..layout.n_key] {
        out.extend_from_slice(&(f.len as u32).to_be_bytes());
        out.extend_from_slice(&p[f.start..f.start + f.len]);
    }
}

/// Decodes a split record into a row, checking every value.
pub fn decode(
    p: &[u8],
    def: &TableDef,
    layout: &Layout,
    fields: &[RawField],
    deleted: bool,
    blobs: &dyn BlobSource,
) -> Result<Row, Reject> {
    let mut buf = RowBuf::default();
    decode_into(p, def, layout, fields, deleted, blobs, &mut buf)?;
    Ok(buf.to_row())
}

/// A decoded row held in one reusable buffer (no allocation per value): the bytes of every
/// value, and per table column its kind and byte range. [`decode_into`] fills it.
#[derive(Clone, Debug, Default)]
pub struct RowBuf {
    data: Vec<u8>,
    cells: Vec<(Kind, u32, u32)>,
    blob: Vec<u8>,
    /// Delete-marked or on the page's free list.
    pub deleted: bool,
    /// DB_TRX_ID.
    pub trx_id: u64,
    /// DB_ROW_ID when the table has no key.
    pub row_id: Option<u64>,
}

impl RowBuf {
    /// The value of table column `i`.
    #[inline]
    pub fn cell(&self, i: usize) -> Cell<'_> {
        let (kind, a, b) = self.cells[i];
        Cell {
            kind,
            bytes: &self.data[a as usize..b as usize],
        }
    }

    /// The value of table column `i`, and the row's bytes from its first on: at least
    /// [`PAD`] past its end after [`decode_into`].
    #[inline]
    pub fn cell_padded(&self, i: usize) -> (Cell<'_>, &[u8]) {
        let (kind, a, b) = self.cells[i];
        let (a, b) = (a as usize, b as usize);
        (
            Cell {
                kind,
                bytes: &self.data[a..b],
            },
            &self.data[a..],
        )
    }

    /// The row as owned values.
    pub fn to_row(&self) -> Row {
        Row {
            values: (0..self.cells.len())
                .map(|i| Value::from_cell(self.cell(i)))
                .collect(),
            deleted: self.deleted,
            trx_id: self.trx_id,
            row_id: self.row_id,
        }
    }
}

/// A 6-byte big-endian system column.
fn be48(b: &[u8]) -> u64 {
    b.iter().fold(0u64, |a, &x| a << 8 | x as u64)
}

/// [`decode`] into a reusable [`RowBuf`] (its previous row is replaced).
pub fn decode_into(
    p: &[u8],
    def: &TableDef,
    layout: &Layout,
    fields: &[RawField],
    deleted: bool,
    blobs: &dyn BlobSource,
    out: &mut RowBuf,
) -> Result<(), Reject> {
    out.data.clear();
    out.cells.clear();
    out.cells.resize(def.columns.len(), (Kind::Null, 0, 0));
    out.deleted = deleted;
    out.trx_id = 0;
    out.row_id = None;
    for (f, rf) in layout.fields.iter().zip(fields) {
        let bytes = &p[rf.start..rf.start + rf.len];
        // Table columns first (the most fields): tests, not a jump table.
        let (None, Some(ci)) = (f.sys, f.col) else {
            match f.sys {
                Some(Sys::TrxId) => out.trx_id = be48(bytes),
                Some(Sys::RowId) => out.row_id = Some(be48(bytes)),
                _ => {}
            }
            continue;
        };
        let start = out.data.len() as u32;
        if rf.missing {
            let c = layout.defaults[ci].cell();
            out.data.extend_from_slice(c.bytes);
            out.cells[ci] = (c.kind, start, out.data.len() as u32);
            continue;
        }
        if rf.null {
            continue;
        }
        let kind = field_value(
            p,
            rf,
            &def.columns[ci].ty,
            blobs,
            &mut out.blob,
            &mut out.data,
        )?;
        out.cells[ci] = (kind, start, out.data.len() as u32);
    }
    // Room for fixed-size copies of the last values (not part of any value).
    out.data.extend_from_slice(&[0; PAD]);
    Ok(())
}

/// Reads the NULL bit (at `bit` of the bitmap ending at `nulls`, when the field may be NULL)
/// and the length (fixed, or from the length bytes at `lens`, walking down) of a COMPACT
/// record's field into `rf`: true when it is NULL (no length read).
#[inline]
fn compact_field(
    p: &[u8],
    f: &IndexField,
    nulls: usize,
    bit: &mut usize,
    lens: &mut usize,
    rf: &mut RawField,
) -> Result<bool, Reject> {
    if f.nullable {
        let is_null = p[nulls - *bit / 8] >> (*bit % 8) & 1 == 1;
        *bit += 1;
        if is_null {
            rf.null = true;
            return Ok(true);
        }
    }
    rf.len = match f.fixed_compact {
        Some(n) => n,
        None => {
            if *lens < 94 {
                return Err(Reject::Length);
            }
            let b1 = p[*lens] as usize;
            *lens -= 1;
            if f.big && b1 & 0x80 != 0 {
                let b2 = p[*lens] as usize;
                *lens -= 1;
                rf.external = b1 & 0x40 != 0;
                ((b1 & 0x3F) << 8) | b2
            } else {
                b1
            }
        }
    };
    Ok(false)
}

/// Appends the value of the stored (not NULL, not missing) field `rf` of a column of type
/// `ty` to `out` and returns its kind; `out` is left as it was on error. An external field's
/// value is put together in `blob` first (its local prefix and its off-page parts).
#[inline]
pub fn field_value(
    p: &[u8],
    rf: &RawField,
    ty: &ColType,
    blobs: &dyn BlobSource,
    blob: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> Result<Kind, Reject> {
    let bytes = &p[rf.start..rf.start + rf.len];
    if !rf.external {
        return Ok(value::decode_into(ty, bytes, out)?);
    }
    if !ty.is_blob() && !matches!(ty, ColType::Varchar { .. } | ColType::Char { .. }) || rf.len < 20
    {
        return Err(Reject::Length);
    }
    let r = &bytes[rf.len - 20..];
    let (space, page_no, offset) = (be32(r, 0), be32(r, 4), be32(r, 8));
    let ext_len = be64(r, 12) & 0xFFFF_FFFF;
    blob.clear();
    blob.extend_from_slice(&bytes[..rf.len - 20]);
    if ext_len > 0 && !blobs.read(space, page_no, offset, ext_len, blob) {
        return Err(Reject::BlobMissing);
    }
    Ok(value::decode_into(ty, blob, out)?)
}

/// DB_TRX_ID of a split record (0 when the layout has none).
#[inline]
pub fn trx_id(p: &[u8], layout: &Layout, fields: &[RawField]) -> u64 {
    // As decode_into reads it.
    match layout.fields.iter().position(|f| f.sys == Some(Sys::TrxId)) {
        Some(i) => be48(&p[fields[i].start..fields[i].start + fields[i].len]),
        None => 0,
    }
}

/// A user record of a page: its origin, and whether it is deleted (delete-marked, or on the
/// free list of purged records).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rec {
    /// Offset of the record origin in the page.
    pub origin: usize,
    /// Delete-marked or purged.
    pub deleted: bool,
    /// On the free list (purged).
    pub purged: bool,
    /// The MariaDB instant ALTER metadata record (min_rec flag on a leaf page): the default
    /// values of instantly added columns, not a row.
    pub metadata: bool,
}

/// The user records of an INDEX page: the record list from the infimum in key order, then
/// the free list. Stops at loops and pointers outside the page, so a damaged page gives the
/// records reachable before the damage. `seen` is scratch space reused between pages.
pub fn list(p: &[u8], format: RowFormat, seen: &mut Vec<u64>, out: &mut Vec<Rec>) {
    out.clear();
    seen.clear();
    seen.resize(p.len() / 64 + 1, 0);
    let (inf, sup, compact) = match format {
        RowFormat::Compact => (99usize, 112usize, true),
        RowFormat::Redundant => (101, 116, false),
        RowFormat::Compressed => return,
    };
    let first_user = sup + 8;
    let end = p.len().saturating_sub(8);
    let next_of = |o: usize| -> usize {
        if compact {
            let rel = be16(p, o - 2) as i16 as isize;
            let (at, len) = (o as isize + rel, p.len() as isize);
            if rel == 0 {
                0
            } else if (0..len).contains(&at) {
                // Inside the page (the usual case): no division on the walk's path.
                at as usize
            } else {
                at.rem_euclid(len) as usize
            }
        } else {
            be16(p, o - 2) as usize
        }
    };
    let info = |o: usize| if compact { p[o - 5] } else { p[o - 6] };
    let free = be16(p, 44) as usize;
    for (start, purged) in [(next_of(inf), false), (free, true)] {
        let mut at = start;
        while at >= first_user && at < end && at != sup {
            let (w, b) = (at / 64, at % 64);
            if seen[w] >> b & 1 == 1 {
                break;
            }
            seen[w] |= 1 << b;
            out.push(Rec {
                origin: at,
                deleted: purged || info(at) & 0x20 != 0,
                purged,
                metadata: !purged && info(at) & 0x10 != 0,
            });
            at = next_of(at);
        }
    }
}

/// Whether every data byte of a split record is zero: from its origin to the end of its last
/// stored field, by the lengths its header gives. MariaDB 10.6 and later zero a record's data
/// when purge moves it to the page's free list (`page_mem_free`; 10.2-10.5 did with
/// `innodb_immediate_scrub_data_uncompressed`) and keep its header, so the lengths are still
/// right but every value reads as zero bytes. A real record is never all zero: its DB_ROLL_PTR
/// (7 bytes of the data) is never 0 (an undo log address, whose page number is never 0, or
/// with the insert flag 0x80 in its first byte, MariaDB's value once purge reset DB_TRX_ID), so
/// a row of zero bytes (CHAR, BINARY) is still told from a zeroed record.
pub fn zeroed(p: &[u8], origin: usize, fields: &[RawField]) -> bool {
    let end = fields
        .iter()
        .filter(|f| !f.missing)
        .map(|f| f.start + f.len)
        .max()
        .unwrap_or(origin);
    end > origin && p[origin..end].iter().all(|&b| b == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The planned split is the reference split, field for field and rejection for
    /// rejection: every origin of pseudo-random pages, for layouts with fixed, variable,
    /// big, nullable and instantly added fields.
    #[test]
    fn planned_split_is_the_split() {
        let sql = [
            "CREATE TABLE t (id INT PRIMARY KEY, b BIGINT, dt DATETIME(6), amount DECIMAL(12,2), name VARCHAR(64) CHARACTER SET utf8mb4, code CHAR(8))",
            "CREATE TABLE t (k VARCHAR(300) NOT NULL, a TEXT, b INT NOT NULL, c VARBINARY(10), d CHAR(3) CHARACTER SET utf8mb4, e SMALLINT, f BLOB, g DATE, h TINYINT, i TIME(2), PRIMARY KEY (k, b))",
            "CREATE TABLE t (a INT, b VARCHAR(5) NOT NULL)",
        ];
        let mut seed = 12345u64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut checked = [0u64; 2];
        for (n, sql) in sql.iter().enumerate() {
            let def = super::super::def::parse(sql, None, "t.sql").unwrap();
            let mut layouts = vec![Layout::clustered(&def)];
            let mut instant = Layout::clustered(&def);
            instant.n_core = instant.fields.len() - 2;
            layouts.push(instant.clone());
            instant.core_null_bytes = Some(1);
            layouts.push(instant);
            // MySQL 8 row versions: the last field added in version 1, the one before it
            // dropped in version 2 (records flagged 0x40/0x80 go to the same split).
            let mut versioned = Layout::clustered(&def);
            let nf = versioned.fields.len();
            versioned.versions = vec![(0, 0); nf];
            versioned.versions[nf - 1] = (1, 0);
            versioned.versions[nf - 2].1 = 2;
            versioned.n_core = nf - 1;
            layouts.push(versioned);
            for layout in &layouts {
                let plan = SplitPlan::new(layout);
                for round in 0..6 {
                    // Mostly small bytes (short lengths, status 0 and 4), some of any value.
                    let page: Vec<u8> = (0..16384)
                        .map(|_| {
                            let r = rnd();
                            match (r >> 60) % 4 {
                                0 if round % 2 == 0 => (r % 256) as u8,
                                0 | 1 => 0,
                                2 => (r % 8) as u8,
                                _ => (r % 48) as u8,
                            }
                        })
                        .collect();
                    for origin in 0..page.len() + 4 {
                        for format in [RowFormat::Compact, RowFormat::Redundant] {
                            let (mut a, mut b) = (Vec::new(), Vec::new());
                            let want = split(&page, origin, format, layout, &mut a);
                            let got = split_planned(&page, origin, format, layout, &plan, &mut b);
                            assert_eq!(got, want, "table {n} origin {origin} {format:?}");
                            if want.is_ok() {
                                assert_eq!(b, a, "table {n} origin {origin} {format:?}");
                                checked[0] += 1;
                            } else {
                                checked[1] += 1;
                            }
                        }
                    }
                }
            }
        }
        // Both outcomes were met many times.
        assert!(checked.iter().all(|&c| c > 10_000), "{checked:?}");
    }

    /// MySQL 8 instant records by their flags: a row version (0x40) holds the fields of its
    /// version, a field count (0x80, here in its 2-byte form) the first fields; the NULL
    /// bitmap counts the nullable fields held. Unknown versions, both flags, and flagged
    /// records under a layout without row versions are rejected.
    #[test]
    fn mysql_instant_records_split_by_their_flags() {
        let def =
            super::super::def::parse("CREATE TABLE t (a INT, b VARCHAR(5), c INT)", None, "t")
                .unwrap();
        let mut layout = Layout::clustered(&def);
        // Fields: DB_ROW_ID, DB_TRX_ID, DB_ROLL_PTR, a, b, c; c added in version 1, a dropped
        // in version 2.
        layout.versions = vec![(0, 0), (0, 0), (0, 0), (0, 2), (0, 0), (1, 0)];
        layout.n_core = 5;
        let mut p = vec![0u8; 16384];
        let mut out = Vec::new();
        let held = |out: &[RawField]| -> Vec<(usize, bool, bool)> {
            out[3..]
                .iter()
                .map(|f| (f.len, f.null, f.missing))
                .collect()
        };
        // Version 1: a, b (3 bytes), c.
        let o = 200;
        p[o - 5] = 0x40;
        p[o - 6] = 1;
        p[o - 7] = 0; // no NULL
        p[o - 8] = 3; // b's length
        let e = split(&p, o, RowFormat::Compact, &layout, &mut out).unwrap();
        assert_eq!(
            held(&out),
            [(4, false, false), (3, false, false), (4, false, false)]
        );
        assert_eq!(out[5].start, o + 19 + 4 + 3);
        assert_eq!(
            e,
            Extent {
                start: o - 8,
                end: o + 19 + 11
            }
        );
        // Version 2: a dropped; b (2 bytes), c NULL (the second bit of two).
        let o = 300;
        p[o - 5] = 0x40;
        p[o - 6] = 2;
        p[o - 7] = 0b10;
        p[o - 8] = 2;
        split(&p, o, RowFormat::Compact, &layout, &mut out).unwrap();
        assert_eq!(
            held(&out),
            [(0, false, true), (2, false, false), (0, true, false)]
        );
        // Unknown version 3.
        p[o - 6] = 3;
        assert_eq!(
            split(&p, o, RowFormat::Compact, &layout, &mut out),
            Err(Reject::Instant)
        );
        // 0x80 with 5 fields in the 2-byte form: a NULL, b 1 byte, c missing.
        let o = 400;
        p[o - 5] = 0x80;
        p[o - 6] = 0x80;
        p[o - 7] = 5;
        p[o - 8] = 0b01;
        p[o - 9] = 1;
        split(&p, o, RowFormat::Compact, &layout, &mut out).unwrap();
        assert_eq!(
            held(&out),
            [(0, true, false), (1, false, false), (0, false, true)]
        );
        // Both flags; a flag under a layout without row versions.
        p[o - 5] = 0xC0;
        assert_eq!(
            split(&p, o, RowFormat::Compact, &layout, &mut out),
            Err(Reject::Header)
        );
        p[o - 5] = 0x80;
        let plain = Layout::clustered(&def);
        assert_eq!(
            split(&p, o, RowFormat::Compact, &plain, &mut out),
            Err(Reject::Instant)
        );
        let plan = SplitPlan::new(&plain);
        assert_eq!(
            split_planned(&p, o, RowFormat::Compact, &plain, &plan, &mut out),
            Err(Reject::Instant)
        );
    }
}
