//! MariaDB instant DROP COLUMN and column reordering (10.4+). After such an ALTER the root
//! page (type INSTANT) has its infimum and supremum strings zeroed, and the leftmost leaf
//! holds a metadata record flagged min_rec and delete-marked whose field after DB_ROLL_PTR
//! is a 20-byte reference to an off-page BLOB: a 4-byte count N of the non-key fields, then
//! N 2-byte entries giving, in record order, what each field holds: the position of a
//! column among the table's stored columns, or (bit 15) a dropped column with bit 14 set
//! when it was NOT NULL and its length in the low 10 bits (0: variable, at most 255 bytes;
//! 1: variable, longer; 1 + L: fixed, L bytes). Dropped columns stay in every record and
//! are skipped; columns added later follow at the end whatever their place in the table.
//! In the metadata record the BLOB reference has no length byte (COMPACT) and the fields
//! after it hold the values of instantly added columns.

use super::def::TableDef;
use super::record::{BlobSource, IndexField, Layout};
use crate::page::{be16, be32, be64, RowFormat};

/// A dropped column.
const DROPPED: u16 = 1 << 15;
/// A dropped column that was NOT NULL.
const NOT_NULL: u16 = 1 << 14;
/// Column position or length.
const IND: u16 = (1 << 10) - 1;

/// The field map of the metadata record at `origin` (the BLOB it references read from
/// `blobs`), for an index whose key fields are those of `base` and whose records written
/// before the first instant ALTER have `n_core` fields. `None` when the record is not one
/// or its BLOB is missing.
pub fn read_map(
    p: &[u8],
    origin: usize,
    format: RowFormat,
    base: &Layout,
    n_core: usize,
    blobs: &dyn BlobSource,
) -> Option<Vec<u16>> {
    let first_user = base.n_key + 2;
    let end = p.len().checked_sub(8)?;
    if origin < 120 || origin + 20 > end {
        return None;
    }
    let parse = |r: &[u8], n: usize| -> Option<Vec<u16>> {
        let (space, page_no, offset) = (be32(r, 0), be32(r, 4), be32(r, 8));
        let len = be64(r, 12) & 0xFFFF_FFFF;
        if len != 4 + 2 * n as u64 {
            return None;
        }
        let mut buf = Vec::new();
        if !blobs.read(space, page_no, offset, len, &mut buf) || be32(&buf, 0) as usize != n {
            return None;
        }
        Some((0..n).map(|i| be16(&buf, 4 + 2 * i)).collect())
    };
    match format {
        RowFormat::Compressed => None,
        RowFormat::Compact => {
            if be16(p, origin - 4) & 7 != 4 {
                return None;
            }
            let b = p[origin - 6] as usize;
            let (n_add, hdr) = if b < 0x80 {
                (b, 1)
            } else {
                ((b & 0x7F) | (p[origin - 7] as usize) << 7, 2)
            };
            let n_fields = n_core + 1 + n_add;
            let n = n_fields.checked_sub(1 + first_user)?;
            let nulls = origin - 6 - hdr;
            // The NULL bitmap's size depends on the map being read: each size is tried
            // (it only matters for variable-length key fields).
            (0..=n_fields.div_ceil(8)).find_map(|nb| {
                let mut lens = nulls.checked_sub(nb)?;
                let mut at = origin;
                for f in &base.fields[..base.n_key] {
                    at += match f.fixed_compact {
                        Some(l) => l,
                        None => {
                            let b1 = *p.get(lens)? as usize;
                            lens = lens.checked_sub(1)?;
                            if f.big && b1 & 0x80 != 0 {
                                let b2 = p[lens] as usize;
                                lens = lens.checked_sub(1)?;
                                ((b1 & 0x3F) << 8) | b2
                            } else {
                                b1
                            }
                        }
                    };
                }
                at += 13;
                (at + 20 <= end).then(|| parse(&p[at..at + 20], n))?
            })
        }
        RowFormat::Redundant => {
            let n_fields = ((be16(p, origin - 4) & 0x7FE) >> 1) as usize;
            let n = n_fields.checked_sub(1 + first_user)?;
            if p[origin - 3] & 1 != 0 {
                return None; // 1-byte offsets: no external field
            }
            let end_of = |i: usize| (be16(p, origin - 6 - (i + 1) * 2) & 0x3FFF) as usize;
            let e = be16(p, origin - 6 - (first_user + 1) * 2);
            let (start, stop) = (end_of(first_user - 1), end_of(first_user));
            if e & 0x4000 == 0 || stop != start + 20 || origin + stop > end {
                return None;
            }
            parse(&p[origin + start..origin + stop], n)
        }
    }
}

/// The clustered-index layout of records after an instant DROP or reorder: `base`'s key
/// and system fields, then the fields in `map`'s order. The error names what does not fit
/// the definition.
pub fn layout(def: &TableDef, base: &Layout, map: &[u16]) -> Result<Layout, String> {
    let stored: Vec<usize> = (0..def.columns.len())
        .filter(|&i| def.columns[i].in_record())
        .collect();
    let mut fields: Vec<IndexField> = base.fields[..base.n_key + 2].to_vec();
    let mut seen = vec![false; def.columns.len()];
    for &m in map {
        let ind = (m & IND) as usize;
        if m & DROPPED != 0 {
            fields.push(IndexField {
                col: None,
                sys: None,
                fixed_compact: (ind > 1).then(|| ind - 1),
                fixed_redundant: None,
                nullable: m & NOT_NULL == 0,
                big: ind == 1,
            });
            continue;
        }
        let Some(&c) = stored.get(ind) else {
            return Err(format!(
                "a field holds column {} but the definition has {} stored columns",
                ind + 1,
                stored.len()
            ));
        };
        let Some(f) = base
            .fields
            .iter()
            .skip(base.n_key + 2)
            .find(|f| f.col == Some(c))
        else {
            return Err(format!(
                "a field holds key column `{}` outside the key",
                def.columns[c].name
            ));
        };
        if std::mem::replace(&mut seen[c], true) {
            return Err(format!("column `{}` is in two fields", def.columns[c].name));
        }
        fields.push(f.clone());
    }
    if let Some(f) = base.fields[base.n_key + 2..]
        .iter()
        .find(|f| f.col.is_some_and(|c| !seen[c]))
    {
        return Err(format!(
            "column `{}` of the definition is in no field",
            def.columns[f.col.unwrap_or(0)].name
        ));
    }
    Ok(Layout {
        n_nullable: fields.iter().filter(|f| f.nullable).count(),
        fields,
        ..base.clone()
    })
}

/// The layout of the metadata record itself: the BLOB reference (20 bytes, no length byte)
/// after DB_ROLL_PTR.
pub fn metadata_layout(layout: &Layout) -> Layout {
    let mut m = layout.clone();
    m.fields.insert(
        layout.n_key + 2,
        IndexField {
            col: None,
            sys: None,
            fixed_compact: Some(20),
            fixed_redundant: Some(20),
            nullable: false,
            big: false,
        },
    );
    m
}
