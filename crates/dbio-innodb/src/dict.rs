//! The InnoDB data dictionary of MariaDB and MySQL <= 5.7: SYS_TABLES (index id 1) and
//! SYS_INDEXES (index id 3) leaf pages in the system tablespace (space 0), REDUNDANT format.
//! Delete-marked and purged records are read too: after DROP TABLE they still name the
//! dropped table, which is what a recovery needs.

use crate::page::{be32, be64, records, redundant_fields, system_records, RowFormat};
use serde::Serialize;
use std::collections::BTreeMap;

/// Index id of SYS_TABLES' clustered index.
pub const SYS_TABLES_ID: u64 = 1;
/// Index id of SYS_INDEXES' clustered index.
pub const SYS_INDEXES_ID: u64 = 3;

/// A SYS_TABLES row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Table {
    /// Table id.
    pub id: u64,
    /// `db/table`.
    pub name: String,
    /// Tablespace id.
    pub space: u32,
    /// The row is delete-marked or purged (dropped table).
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
    /// Reads one page of the system tablespace; pages that are not SYS_TABLES or SYS_INDEXES
    /// leaves are ignored.
    pub fn add_page(&mut self, p: &[u8]) {
        if system_records(p) != Some(RowFormat::Redundant) || be32(p, 34) != 0 {
            return;
        }
        let level = crate::page::be16(p, 64);
        let index_id = be64(p, 66);
        if level != 0 || (index_id != SYS_TABLES_ID && index_id != SYS_INDEXES_ID) {
            return;
        }
        for r in records(p) {
            let o = r.origin as usize;
            let Some(f) = redundant_fields(p, o) else {
                continue;
            };
            if index_id == SYS_TABLES_ID && f.len() >= 10 {
                let (Some(name), Some(id), Some(space)) =
                    (field(p, o, &f, 0), field(p, o, &f, 3), field(p, o, &f, 9))
                else {
                    continue;
                };
                if id.len() != 8 || space.len() != 4 {
                    continue;
                }
                let t = Table {
                    id: be64(id, 0),
                    name: String::from_utf8_lossy(name).into_owned(),
                    space: be32(space, 0),
                    dropped: r.deleted,
                };
                // A live row wins over a dropped one with the same id.
                match self.tables.get(&t.id) {
                    Some(old) if !old.dropped && t.dropped => {}
                    _ => {
                        self.tables.insert(t.id, t);
                    }
                }
            } else if index_id == SYS_INDEXES_ID && f.len() >= 9 {
                let (Some(tid), Some(id), Some(name), Some(space), Some(page_no)) = (
                    field(p, o, &f, 0),
                    field(p, o, &f, 1),
                    field(p, o, &f, 4),
                    field(p, o, &f, 7),
                    field(p, o, &f, 8),
                ) else {
                    continue;
                };
                if tid.len() != 8 || id.len() != 8 || space.len() != 4 || page_no.len() != 4 {
                    continue;
                }
                let name = name.strip_prefix(&[0xFF]).unwrap_or(name);
                let ix = Index {
                    table_id: be64(tid, 0),
                    id: be64(id, 0),
                    name: String::from_utf8_lossy(name).into_owned(),
                    space: be32(space, 0),
                    page_no: be32(page_no, 0),
                    dropped: r.deleted,
                };
                match self.indexes.get(&ix.id) {
                    Some(old) if !old.dropped && ix.dropped => {}
                    _ => {
                        self.indexes.insert(ix.id, ix);
                    }
                }
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
}
