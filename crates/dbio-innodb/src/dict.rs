//! The InnoDB data dictionary of MariaDB and MySQL <= 5.7: SYS_TABLES (index id 1),
//! SYS_COLUMNS (2), SYS_INDEXES (3) and SYS_FIELDS (4) leaf pages in the system tablespace
//! (space 0), REDUNDANT format. Delete-marked and purged records are read too: after DROP
//! TABLE they still name and describe the dropped table, which is what a recovery needs, as
//! long as their bytes are there: MariaDB 10.11 zeroes the data of the records purge frees,
//! so there only the delete-marked rows purge has not reached yet describe a dropped table.
//!
//! Record layouts (user fields, with DB_TRX_ID and DB_ROLL_PTR after the key):
//! SYS_TABLES (NAME | ID, N_COLS, TYPE, MIX_ID, MIX_LEN, CLUSTER_NAME, SPACE),
//! SYS_COLUMNS (TABLE_ID, POS | NAME, MTYPE, PRTYPE, LEN, PREC),
//! SYS_INDEXES (TABLE_ID, ID | NAME, N_FIELDS, TYPE, SPACE, PAGE_NO),
//! SYS_FIELDS (INDEX_ID, POS | COL_NAME).

use crate::page::{be32, be64, records, redundant_fields, system_records, RowFormat};
use serde::Serialize;
use std::collections::BTreeMap;

/// Index id of SYS_TABLES' clustered index.
pub const SYS_TABLES_ID: u64 = 1;
/// Index id of SYS_COLUMNS' clustered index.
pub const SYS_COLUMNS_ID: u64 = 2;
/// Index id of SYS_INDEXES' clustered index.
pub const SYS_INDEXES_ID: u64 = 3;
/// Index id of SYS_FIELDS' clustered index.
pub const SYS_FIELDS_ID: u64 = 4;

/// A SYS_TABLES row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Table {
    /// Table id.
    pub id: u64,
    /// `db/table`.
    pub name: String,
    /// Tablespace id.
    pub space: u32,
    /// SYS_TABLES.N_COLS: the number of columns (low 16 bits), virtual columns (bits
    /// 16..30), and bit 31 set for every row format but REDUNDANT.
    pub n_cols: u32,
    /// SYS_TABLES.TYPE: the table flags (bit 0 not REDUNDANT, bits 1..4 the compressed page
    /// size, bit 5 DYNAMIC/COMPRESSED off-page columns).
    pub flags: u32,
    /// The row is delete-marked or purged (dropped table).
    pub dropped: bool,
}

/// A SYS_COLUMNS row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Column {
    /// Table id.
    pub table_id: u64,
    /// POS: the column's number among the stored columns; for a virtual column
    /// `(nth virtual + 1) << 16 | position in the table`.
    pub pos: u32,
    /// Column name.
    pub name: String,
    /// MTYPE: InnoDB's main type (1 VARCHAR, 2 CHAR, 3 FIXBINARY, 4 BINARY, 5 BLOB, 6 INT,
    /// 9 FLOAT, 10 DOUBLE, 11 DECIMAL, 12 VARMYSQL, 13 MYSQL, 14 GEOMETRY).
    pub mtype: u32,
    /// PRTYPE: the server's field type (low byte), flags (NOT NULL 0x100, UNSIGNED 0x200,
    /// BINARY 0x400, 2-byte VARCHAR length 0x1000, VIRTUAL 0x2000) and the charset-collation
    /// number (bits 16..30).
    pub prtype: u32,
    /// LEN: bytes (the largest for variable-length columns).
    pub len: u32,
    /// The row is delete-marked or purged.
    pub dropped: bool,
}

/// A SYS_FIELDS row: one column of an index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Field {
    /// Index id.
    pub index_id: u64,
    /// POS: the field's number in the index; `pos << 16 | prefix length` when some field
    /// of the index is a column prefix.
    pub pos: u32,
    /// Column name.
    pub col_name: String,
    /// The row is delete-marked or purged.
    pub dropped: bool,
}

/// A SYS_INDEXES row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Index {
    /// Table id.
    pub table_id: u64,
    /// Index id.
    pub id: u64,
    /// Index name (`PRIMARY`, `GEN_CLUST_INDEX`, ...).
    pub name: String,
    /// SYS_INDEXES.TYPE: 1 clustered, 2 unique, 32 FTS, 64 spatial.
    pub index_type: u32,
    /// Fields (key columns).
    pub n_fields: u32,
    /// Tablespace id.
    pub space: u32,
    /// Root page number.
    pub page_no: u32,
    /// The row is delete-marked or purged.
    pub dropped: bool,
}

/// Tables and indexes read from dictionary pages.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Dictionary {
    /// Tables by id.
    pub tables: BTreeMap<u64, Table>,
    /// Indexes by id.
    pub indexes: BTreeMap<u64, Index>,
    /// Columns by (table id, POS).
    pub columns: BTreeMap<(u64, u32), Column>,
    /// Index fields by (index id, POS).
    pub fields: BTreeMap<(u64, u32), Field>,
}

/// Inserts `v` under `k` unless a live row is there and `v` is a dropped one (a live row
/// wins over a delete-marked or purged copy of the same key).
fn keep<K: Ord, V>(map: &mut BTreeMap<K, V>, k: K, v: V, dropped: impl Fn(&V) -> bool) {
    match map.get(&k) {
        Some(old) if !dropped(old) && dropped(&v) => {}
        _ => {
            map.insert(k, v);
        }
    }
}

/// A table or column name: not empty, no NUL byte (MariaDB 10.11 zeroes the data of the
/// records purge frees, and leaves their headers).
fn plausible_name(b: &[u8]) -> bool {
    !b.is_empty() && !b.contains(&0)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn field<'a>(p: &'a [u8], origin: usize, fields: &[(usize, bool)], i: usize) -> Option<&'a [u8]> {
    let (end, null) = *fields.get(i)?;
    if null {
        return None;
    }
    let start = if i == 0 { 0 } else { fields[i - 1].0 };
    if start > end || origin + end > p.len() {
        return None;
    }
    Some(&p[origin + start..origin + end])
}

impl Dictionary {
    /// Reads one page of the system tablespace; pages that are not SYS_TABLES, SYS_COLUMNS,
    /// SYS_INDEXES or SYS_FIELDS leaves are ignored, and so are records whose fields do not
    /// have the sizes of those tables.
    pub fn add_page(&mut self, p: &[u8]) {
        if system_records(p) != Some(RowFormat::Redundant) || be32(p, 34) != 0 {
            return;
        }
        let level = crate::page::be16(p, 64);
        let index_id = be64(p, 66);
        if level != 0 || !(SYS_TABLES_ID..=SYS_FIELDS_ID).contains(&index_id) {
            return;
        }
        for r in records(p) {
            let o = r.origin as usize;
            let Some(f) = redundant_fields(p, o) else {
                continue;
            };
            let get = |i: usize| field(p, o, &f, i);
            // A field of `n` bytes, as a number.
            let num = |i: usize, n: usize| -> Option<u64> {
                let b = get(i).filter(|b| b.len() == n)?;
                Some(b.iter().fold(0u64, |a, &x| a << 8 | x as u64))
            };
            let dropped = r.deleted;
            match index_id {
                SYS_TABLES_ID if f.len() >= 10 => {
                    let (Some(name), Some(id), Some(n_cols), Some(flags), Some(space)) =
                        (get(0), num(3, 8), num(4, 4), num(5, 4), num(9, 4))
                    else {
                        continue;
                    };
                    // Purged records MariaDB 10.11 zeroed: nothing left to read.
                    if id == 0 || !plausible_name(name) {
                        continue;
                    }
                    let t = Table {
                        id,
                        name: text(name),
                        space: space as u32,
                        n_cols: n_cols as u32,
                        flags: flags as u32,
                        dropped,
                    };
                    keep(&mut self.tables, id, t, |t| t.dropped);
                }
                SYS_COLUMNS_ID if f.len() >= 9 => {
                    let (
                        Some(table_id),
                        Some(pos),
                        Some(name),
                        Some(mtype),
                        Some(prtype),
                        Some(len),
                    ) = (
                        num(0, 8),
                        num(1, 4),
                        get(4),
                        num(5, 4),
                        num(6, 4),
                        num(7, 4),
                    )
                    else {
                        continue;
                    };
                    if table_id == 0 || !plausible_name(name) {
                        continue;
                    }
                    let c = Column {
                        table_id,
                        pos: pos as u32,
                        name: text(name),
                        mtype: mtype as u32,
                        prtype: prtype as u32,
                        len: len as u32,
                        dropped,
                    };
                    keep(&mut self.columns, (table_id, pos as u32), c, |c| c.dropped);
                }
                SYS_INDEXES_ID if f.len() >= 9 => {
                    let (Some(table_id), Some(id), Some(name), Some(n_fields), Some(ty)) =
                        (num(0, 8), num(1, 8), get(4), num(5, 4), num(6, 4))
                    else {
                        continue;
                    };
                    let (Some(space), Some(page_no)) = (num(7, 4), num(8, 4)) else {
                        continue;
                    };
                    if table_id == 0 || id == 0 {
                        continue;
                    }
                    let name = name.strip_prefix(&[0xFF]).unwrap_or(name);
                    let ix = Index {
                        table_id,
                        id,
                        name: text(name),
                        index_type: ty as u32,
                        n_fields: n_fields as u32,
                        space: space as u32,
                        page_no: page_no as u32,
                        dropped,
                    };
                    keep(&mut self.indexes, id, ix, |i| i.dropped);
                }
                SYS_FIELDS_ID if f.len() >= 5 => {
                    let (Some(index_id), Some(pos), Some(col)) = (num(0, 8), num(1, 4), get(4))
                    else {
                        continue;
                    };
                    if index_id == 0 || !plausible_name(col) {
                        continue;
                    }
                    let fl = Field {
                        index_id,
                        pos: pos as u32,
                        col_name: text(col),
                        dropped,
                    };
                    keep(&mut self.fields, (index_id, pos as u32), fl, |f| f.dropped);
                }
                _ => {}
            }
        }
    }

    /// `(table name, index name)` of an index id in `space`; the built-in dictionary tables
    /// of space 0 are named without reading anything.
    pub fn name_of(&self, space: u32, index_id: u64) -> Option<(String, String)> {
        if space == 0 {
            let sys = match index_id {
                1 => Some(("SYS_TABLES", "CLUST_IND")),
                2 => Some(("SYS_COLUMNS", "CLUST_IND")),
                3 => Some(("SYS_INDEXES", "CLUST_IND")),
                4 => Some(("SYS_FIELDS", "CLUST_IND")),
                5 => Some(("SYS_TABLES", "ID_IND")),
                0xFFFF_FFFF_0000_0000 => Some(("(change buffer)", "CLUST_IND")),
                _ => None,
            };
            if let Some((t, i)) = sys {
                return Some((t.to_string(), i.to_string()));
            }
        }
        let ix = self.indexes.get(&index_id)?;
        let t = self.tables.get(&ix.table_id)?;
        Some((t.name.clone(), ix.name.clone()))
    }

    /// Whether the table or the index of an index id was dropped (its dictionary rows are
    /// delete-marked or purged).
    pub fn is_dropped(&self, index_id: u64) -> bool {
        let Some(ix) = self.indexes.get(&index_id) else {
            return false;
        };
        ix.dropped || self.tables.get(&ix.table_id).is_some_and(|t| t.dropped)
    }

    /// Whether nothing was read.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty() && self.indexes.is_empty()
    }

    /// The tables named `name` (`db/table`: the exact name, else a case-insensitive match),
    /// live ones first, then by descending id (the newest dropped table of that name first).
    pub fn tables_named(&self, name: &str) -> Vec<&Table> {
        let mut v: Vec<&Table> = self.tables.values().filter(|t| t.name == name).collect();
        if v.is_empty() {
            v = self
                .tables
                .values()
                .filter(|t| t.name.eq_ignore_ascii_case(name))
                .collect();
        }
        v.sort_by_key(|t| (t.dropped, std::cmp::Reverse(t.id)));
        v
    }

    /// The columns of a table, in POS order (stored columns, then virtual ones).
    pub fn columns_of(&self, table_id: u64) -> Vec<&Column> {
        self.columns
            .range((table_id, 0)..=(table_id, u32::MAX))
            .map(|(_, c)| c)
            .collect()
    }

    /// The indexes of a table, by id.
    pub fn indexes_of(&self, table_id: u64) -> Vec<&Index> {
        self.indexes
            .values()
            .filter(|i| i.table_id == table_id)
            .collect()
    }

    /// The fields of an index, in POS order.
    pub fn fields_of(&self, index_id: u64) -> Vec<&Field> {
        self.fields
            .range((index_id, 0)..=(index_id, u32::MAX))
            .map(|(_, f)| f)
            .collect()
    }
}
