//! A table definition from the InnoDB data dictionary (SYS_TABLES, SYS_COLUMNS, SYS_INDEXES
//! and SYS_FIELDS read by [`crate::dict`]), for tables whose CREATE TABLE is lost, dropped
//! tables included (their dictionary rows are delete-marked or purged, their bytes remain).
//!
//! The dictionary does not keep everything the CREATE TABLE said; what dbio does where it
//! cannot tell (each is a warning naming the column, and a comment in the CREATE TABLE
//! written with SQL output):
//! - ENUM and SET: neither the type nor the members are stored (both are MTYPE INT, field
//!   type STRING): the stored number is written (ENUM: the member's index from 1, 0 for the
//!   empty error value; SET: the bit mask of the members), as c_parser does.
//! - DECIMAL: the precision and scale are not stored, only the size in bytes: the stored
//!   bytes are written (as BINARY(N)), since any guess of the scale would print wrong numbers.
//! - DATETIME/TIMESTAMP/TIME fractions: the size gives 2, 4 or 6 digits (one byte per two
//!   digits): DATETIME(1) prints as DATETIME(2) does, with one more trailing zero.
//! - BIT(N) is BIT(8 x bytes), FLOAT(M,D) and DOUBLE(M,D) print as FLOAT and DOUBLE, and a
//!   STORED generated column is an ordinary column; VIRTUAL columns are not in the records
//!   and are left out.

use super::def::{Charset, ColType, Column, DefError, TableDef};
use crate::dict::{self, Dictionary, Index, Table};
use crate::encode::IntType;

/// Why no definition comes out of the dictionary.
#[derive(Debug, thiserror::Error)]
pub enum DictDefError {
    /// Nothing was read.
    #[error("no SYS_TABLES record found: this is not the system tablespace (ibdata1) of MariaDB or MySQL 5.7 or older, or its dictionary pages are lost")]
    Empty,
    /// No table was named.
    #[error("name the table (db/name); the data dictionary holds: {0}")]
    TableNeeded(String),
    /// The named table is not in the dictionary.
    #[error("no table {0:?} in the data dictionary (once purge has processed a DROP TABLE, MariaDB 10.11 has zeroed the dropped table's dictionary records: give --table-def with its CREATE TABLE then); it holds: {1}")]
    NoTable(String, String),
    /// Rows of the table's description are missing.
    #[error("the data dictionary's description of {table} (table id {id}) is incomplete: {why}")]
    Incomplete {
        /// The table.
        table: String,
        /// Its id.
        id: u64,
        /// What is missing.
        why: String,
    },
    /// A column dbio does not decode.
    #[error(transparent)]
    Def(#[from] DefError),
}

/// A definition taken from the dictionary, with what was used.
#[derive(Clone, Debug)]
pub struct DictDef {
    /// The definition (its `source` names the dictionary, the table id and whether the
    /// table was dropped).
    pub def: TableDef,
    /// The SYS_TABLES row.
    pub table: Table,
    /// The clustered index (its id and space are the pages to decode).
    pub index: Index,
    /// REDUNDANT, COMPACT, DYNAMIC or COMPRESSED, from SYS_TABLES.N_COLS and TYPE.
    pub row_format: &'static str,
    /// What the dictionary could not tell, per column.
    pub warnings: Vec<String>,
}

/// The dictionary's tables for people: `db/name (id N)` or `db/name (id N, dropped)`, by
/// name.
pub fn list_tables(d: &Dictionary) -> String {
    let mut v: Vec<&Table> = d.tables.values().collect();
    v.sort_by(|a, b| (&a.name, a.id).cmp(&(&b.name, b.id)));
    v.iter()
        .map(|t| {
            format!(
                "{} (id {}{})",
                t.name,
                t.id,
                if t.dropped { ", dropped" } else { "" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The charset of a charset-collation number (MariaDB 10.11's collation ids of latin1,
/// ascii, utf8mb3, utf8mb4 and binary, its uca1400 ones included).
pub fn charset_of_collation(id: u32) -> Option<Charset> {
    use Charset::*;
    Some(match id {
        5 | 8 | 15 | 31 | 47..=49 | 94 | 1032 | 1071 => Latin1,
        11 | 65 | 1035 | 1089 => Ascii,
        33 | 83 | 192..=215 | 223 | 576..=578 | 1057 | 1107 | 1216..=1247 | 2048..=2303 => Utf8mb3,
        45 | 46 | 224..=247 | 608..=610 | 1069 | 1070 | 1248..=1279 | 2304..=2559 => Utf8mb4,
        63 => Binary,
        _ => return None,
    })
}

// InnoDB main types (MTYPE).
const DATA_VARCHAR: u32 = 1;
const DATA_CHAR: u32 = 2;
const DATA_FIXBINARY: u32 = 3;
const DATA_BINARY: u32 = 4;
const DATA_BLOB: u32 = 5;
const DATA_INT: u32 = 6;
const DATA_FLOAT: u32 = 9;
const DATA_DOUBLE: u32 = 10;
const DATA_VARMYSQL: u32 = 12;
const DATA_MYSQL: u32 = 13;
// PRTYPE flags.
const DATA_NOT_NULL: u32 = 0x100;
const DATA_UNSIGNED: u32 = 0x200;
const DATA_BINARY_TYPE: u32 = 0x400;
const DATA_VIRTUAL: u32 = 0x2000;
// The server's field types (the low byte of PRTYPE).
const T_TINY: u32 = 1;
const T_SHORT: u32 = 2;
const T_LONG: u32 = 3;
const T_TIMESTAMP: u32 = 7;
const T_LONGLONG: u32 = 8;
const T_INT24: u32 = 9;
const T_DATE: u32 = 10;
const T_TIME: u32 = 11;
const T_DATETIME: u32 = 12;
const T_YEAR: u32 = 13;
const T_NEWDATE: u32 = 14;
const T_BIT: u32 = 16;
const T_NEWDECIMAL: u32 = 246;
const T_STRING: u32 = 254;

/// The storage type, its SQL spelling, and what the dictionary could not tell.
type Mapped = (ColType, String, Option<String>);

fn int_of_len(len: u32) -> Option<(IntType, &'static str)> {
    Some(match len {
        1 => (IntType::Tiny, "TINYINT"),
        2 => (IntType::Small, "SMALLINT"),
        3 => (IntType::Medium, "MEDIUMINT"),
        4 => (IntType::Int, "INT"),
        8 => (IntType::Big, "BIGINT"),
        _ => return None,
    })
}

/// Maps one SYS_COLUMNS row to a column type; `Err` says why dbio cannot decode it.
fn col_type(c: &dict::Column) -> Result<Mapped, String> {
    let t = c.prtype & 0xFF;
    let coll = (c.prtype >> 16) & 0x7FFF;
    let unsigned = c.prtype & DATA_UNSIGNED != 0;
    let len = c.len;
    let frac = |base: u32, name: &str| -> Result<Mapped, String> {
        let fb = len.checked_sub(base).filter(|&f| f <= 3).ok_or(format!(
            "{name} of {len} bytes (the 5.6+ format takes {base} to {})",
            base + 3
        ))?;
        let fsp = (fb * 2) as u8;
        let ty = match t {
            T_DATETIME => ColType::Datetime { fsp },
            T_TIMESTAMP => ColType::Timestamp { fsp },
            _ => ColType::Time { fsp },
        };
        let sql = if fsp > 0 {
            format!("{name}({fsp})")
        } else {
            name.to_string()
        };
        let warn = (fsp > 0).then(|| {
            format!(
                "{name} with {fb} fraction byte(s): printed with {fsp} fraction digits (were it {name}({}), one trailing zero more than the server prints)",
                fsp - 1
            )
        });
        Ok((ty, sql, warn))
    };
    let text_charset = || -> Result<Charset, String> {
        if coll == 0 && matches!(c.mtype, DATA_VARCHAR | DATA_CHAR) {
            return Ok(Charset::Latin1);
        }
        charset_of_collation(coll).ok_or_else(|| {
            format!("charset-collation number {coll} (dbio reads latin1, ascii, utf8mb3, utf8mb4 and binary)")
        })
    };
    let with_cs = |name: String, cs: Charset| {
        if cs == Charset::Binary {
            name
        } else {
            format!("{name} CHARACTER SET {}", cs.name())
        }
    };
    match c.mtype {
        DATA_INT => match t {
            T_TINY | T_SHORT | T_INT24 | T_LONG | T_LONGLONG => {
                let (ty, name) = int_of_len(len).ok_or(format!("an integer of {len} bytes"))?;
                let sql = if unsigned {
                    format!("{name} UNSIGNED")
                } else {
                    name.to_string()
                };
                Ok((ColType::Int { ty, unsigned }, sql, None))
            }
            T_YEAR if len == 1 => Ok((ColType::Year, "YEAR".into(), None)),
            T_DATE | T_NEWDATE if len == 3 => Ok((ColType::Date, "DATE".into(), None)),
            // The 4-byte epoch of old TIMESTAMPs is the 5.6 format without a fraction.
            T_TIMESTAMP if len == 4 => Ok((ColType::Timestamp { fsp: 0 }, "TIMESTAMP".into(), None)),
            T_DATETIME | T_TIME => Err("a DATETIME or TIME in the pre-5.6 format (an integer)".into()),
            // ENUM and SET: MTYPE INT, field type STRING, UNSIGNED, 1..8 bytes.
            T_STRING => {
                let (ty, name) = int_of_len(len).ok_or(format!("an ENUM or SET of {len} bytes"))?;
                Ok((
                    ColType::Int { ty, unsigned: true },
                    format!("{name} UNSIGNED"),
                    Some("an ENUM or a SET (the dictionary keeps neither which nor the members): its stored number is written (ENUM: the member's index from 1; SET: the bit mask of the members); give --table-def for the names".into()),
                ))
            }
            _ => Err(format!("MTYPE INT with field type {t}")),
        },
        DATA_FIXBINARY => match t {
            T_NEWDECIMAL => Ok((
                ColType::Char { len, charset: Charset::Binary },
                format!("BINARY({len})"),
                Some(format!("a DECIMAL of {len} bytes whose precision and scale the dictionary does not keep: its stored bytes are written; give --table-def to decode it")),
            )),
            T_DATETIME => frac(5, "DATETIME"),
            T_TIMESTAMP => frac(4, "TIMESTAMP"),
            T_TIME => frac(3, "TIME"),
            T_BIT if (1..=8).contains(&len) => Ok((ColType::Bit { bits: len * 8 }, format!("BIT({})", len * 8), None)),
            _ => Ok((
                ColType::Char { len, charset: Charset::Binary },
                format!("BINARY({len})"),
                None,
            )),
        },
        DATA_BINARY => Ok((
            ColType::Varchar { len, charset: Charset::Binary },
            format!("VARBINARY({len})"),
            None,
        )),
        DATA_VARCHAR | DATA_VARMYSQL | DATA_CHAR | DATA_MYSQL => {
            let cs = if c.prtype & DATA_BINARY_TYPE != 0 && coll == 0 {
                Charset::Binary
            } else {
                text_charset()?
            };
            let chars = len / cs.mbmaxlen();
            let var = matches!(c.mtype, DATA_VARCHAR | DATA_VARMYSQL);
            Ok(match (var, cs == Charset::Binary) {
                (true, true) => (ColType::Varchar { len: chars, charset: cs }, format!("VARBINARY({chars})"), None),
                (true, false) => (ColType::Varchar { len: chars, charset: cs }, with_cs(format!("VARCHAR({chars})"), cs), None),
                (false, true) => (ColType::Char { len: chars, charset: cs }, format!("BINARY({chars})"), None),
                (false, false) => (ColType::Char { len: chars, charset: cs }, with_cs(format!("CHAR({chars})"), cs), None),
            })
        }
        DATA_BLOB => {
            // LEN is the length bytes plus a pointer: 9 TINY, 10 plain, 11 MEDIUM, 12 LONG.
            let (max, size) = match len {
                9 => (255, "TINY"),
                10 => (65535, ""),
                11 => ((1 << 24) - 1, "MEDIUM"),
                12 => (u32::MAX as u64, "LONG"),
                _ => return Err(format!("a BLOB or TEXT of LEN {len}")),
            };
            let cs = if c.prtype & DATA_BINARY_TYPE != 0 || coll == 63 {
                Charset::Binary
            } else {
                text_charset()?
            };
            let name = if cs == Charset::Binary {
                format!("{size}BLOB")
            } else {
                with_cs(format!("{size}TEXT"), cs)
            };
            Ok((ColType::Blob { max_bytes: max, charset: cs }, name, None))
        }
        DATA_FLOAT if len == 4 => Ok((ColType::Float { decimals: None }, "FLOAT".into(), None)),
        DATA_DOUBLE if len == 8 => Ok((ColType::Double { decimals: None }, "DOUBLE".into(), None)),
        11 => Err("the pre-5.0 DECIMAL (an ASCII string)".into()),
        14..=16 => Err("a spatial type".into()),
        m => Err(format!("MTYPE {m}, PRTYPE {:#x}", c.prtype)),
    }
}

/// `@002d`-style escapes of table file names (`a@002db` is `a-b`) decoded.
fn decode_filename(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('@') {
        out.push_str(&rest[..i]);
        let hex = rest.get(i + 1..i + 5);
        match hex
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .and_then(char::from_u32)
        {
            Some(ch) => {
                out.push(ch);
                rest = &rest[i + 5..];
            }
            None => {
                out.push('@');
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn quote(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

/// The definition of table `name` (`db/name`) from the dictionary read out of `file`.
pub fn table_def(d: &Dictionary, name: Option<&str>, file: &str) -> Result<DictDef, DictDefError> {
    if d.tables.is_empty() {
        return Err(DictDefError::Empty);
    }
    let name = name.ok_or_else(|| DictDefError::TableNeeded(list_tables(d)))?;
    let mut found = d.tables_named(name);
    if found.is_empty() {
        // `db/my-table` for the stored `db/my@002dtable`.
        found = d
            .tables
            .values()
            .filter(|t| decode_filename(&t.name).eq_ignore_ascii_case(name))
            .collect();
        found.sort_by_key(|t| (t.dropped, std::cmp::Reverse(t.id)));
    }
    let t = *found
        .first()
        .ok_or_else(|| DictDefError::NoTable(name.to_string(), list_tables(d)))?;
    let incomplete = |why: String| DictDefError::Incomplete {
        table: t.name.clone(),
        id: t.id,
        why,
    };
    let mut warnings = Vec::new();
    if found.len() > 1 {
        let others: Vec<String> = found[1..]
            .iter()
            .map(|o| format!("id {}{}", o.id, if o.dropped { " (dropped)" } else { "" }))
            .collect();
        warnings.push(format!(
            "the dictionary names {} tables {}: table id {} was used{}, not {}",
            found.len(),
            t.name,
            t.id,
            if t.dropped {
                " (the newest dropped one)"
            } else {
                " (the live one)"
            },
            others.join(", ")
        ));
    }
    let n_stored = t.n_cols & 0xFFFF;
    let mut columns = Vec::new();
    let mut sql_cols = Vec::new();
    let mut expect = 0u32;
    for c in d.columns_of(t.id) {
        if c.prtype & DATA_VIRTUAL != 0 {
            warnings.push(format!(
                "column {}: a VIRTUAL generated column (not in the records; its expression is not in the dictionary): left out",
                c.name
            ));
            continue;
        }
        if c.pos != expect {
            return Err(incomplete(format!(
                "no SYS_COLUMNS row for column number {expect}"
            )));
        }
        expect += 1;
        let (ty, sql_type, warn) = col_type(c).map_err(|why| DefError::Unsupported {
            column: c.name.clone(),
            ty: format!("MTYPE {} PRTYPE {:#x} LEN {}", c.mtype, c.prtype, c.len),
            why: format!("{why}; dbio does not decode it"),
        })?;
        let nullable = c.prtype & DATA_NOT_NULL == 0;
        if let Some(w) = warn {
            warnings.push(format!("column {}: {w}", c.name));
        }
        sql_cols.push(format!(
            "  {} {}{}",
            quote(&c.name),
            sql_type,
            if nullable { "" } else { " NOT NULL" }
        ));
        columns.push(Column {
            name: c.name.clone(),
            ty,
            sql_type,
            nullable,
            generated: None,
        });
    }
    if columns.is_empty() {
        return Err(incomplete("no SYS_COLUMNS row".into()));
    }
    if expect != n_stored {
        return Err(incomplete(format!(
            "SYS_TABLES.N_COLS says {n_stored} columns, SYS_COLUMNS has rows for {expect}"
        )));
    }
    let clustered: Vec<&Index> = d
        .indexes_of(t.id)
        .into_iter()
        .filter(|i| i.index_type & 1 != 0)
        .collect();
    let index = clustered
        .iter()
        .find(|i| i.dropped == t.dropped)
        .or(clustered.last())
        .copied()
        .ok_or_else(|| incomplete("no SYS_INDEXES row of its clustered index".into()))?;
    let mut primary_key = Vec::new();
    if index.name != "GEN_CLUST_INDEX" {
        let fields = d.fields_of(index.id);
        if fields.len() != index.n_fields as usize {
            return Err(incomplete(format!(
                "SYS_INDEXES says index {} ({}) has {} field(s), SYS_FIELDS has {}",
                index.id,
                index.name,
                index.n_fields,
                fields.len()
            )));
        }
        let prefixed = fields.iter().any(|f| f.pos > 0xFFFF);
        for f in fields {
            if prefixed && f.pos & 0xFFFF != 0 {
                return Err(DefError::KeyColumn(format!(
                    "{} (a prefix of {} bytes in the clustered index: not decoded by dbio)",
                    f.col_name,
                    f.pos & 0xFFFF
                ))
                .into());
            }
            let i = columns
                .iter()
                .position(|c| c.name == f.col_name)
                .ok_or_else(|| DefError::KeyColumn(f.col_name.clone()))?;
            columns[i].nullable = false;
            primary_key.push(i);
        }
    }
    let row_format = if t.n_cols & 0x8000_0000 == 0 {
        "REDUNDANT"
    } else if (t.flags >> 1) & 0xF != 0 {
        "COMPRESSED"
    } else if t.flags & 0x20 != 0 {
        "DYNAMIC"
    } else {
        "COMPACT"
    };
    let short = decode_filename(t.name.rsplit('/').next().unwrap_or(&t.name));
    if !primary_key.is_empty() {
        let keys: Vec<String> = primary_key
            .iter()
            .map(|&i| quote(&columns[i].name))
            .collect();
        sql_cols.push(format!("  PRIMARY KEY ({})", keys.join(",")));
    }
    let mut create = String::new();
    create.push_str(&format!(
        "-- from the InnoDB data dictionary in {file}: table {} id {}{}, clustered index {} id {}\n",
        t.name,
        t.id,
        if t.dropped { " (dropped)" } else { "" },
        index.name,
        index.id
    ));
    for w in &warnings {
        create.push_str(&format!("-- {w}\n"));
    }
    create.push_str(&format!(
        "CREATE TABLE {} (\n{}\n) ENGINE=InnoDB ROW_FORMAT={row_format}",
        quote(&short),
        sql_cols.join(",\n")
    ));
    let def = TableDef {
        name: short,
        columns,
        primary_key,
        create_sql: create,
        source: format!(
            "data dictionary in {file}, table {} id {}{}",
            t.name,
            t.id,
            if t.dropped { ", dropped" } else { "" }
        ),
        row_versions: None,
    };
    Ok(DictDef {
        def,
        table: t.clone(),
        index: index.clone(),
        row_format,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(pos: u32, name: &str, mtype: u32, prtype: u32, len: u32) -> dict::Column {
        dict::Column {
            table_id: 18,
            pos,
            name: name.into(),
            mtype,
            prtype,
            len,
            dropped: false,
        }
    }

    /// SYS_COLUMNS rows MariaDB 10.11 wrote (INFORMATION_SCHEMA.INNODB_SYS_COLUMNS of a
    /// table with these columns, DEFAULT CHARSET=utf8mb4).
    #[test]
    fn types_of_real_sys_columns_rows() {
        let m = |c: dict::Column| col_type(&c).unwrap();
        let int = |ty, unsigned| ColType::Int { ty, unsigned };
        assert_eq!(m(col(0, "id", 6, 1283, 4)).0, int(IntType::Int, false));
        assert_eq!(m(col(0, "id", 6, 1283, 4)).1, "INT");
        assert_eq!(m(col(0, "mu", 6, 1545, 3)).0, int(IntType::Medium, true));
        assert_eq!(m(col(0, "bu", 6, 1544, 8)).1, "BIGINT UNSIGNED");
        assert_eq!(m(col(0, "y", 6, 1549, 1)).0, ColType::Year);
        assert_eq!(m(col(0, "d", 6, 1034, 3)).0, ColType::Date);
        assert_eq!(
            m(col(0, "dt6", 3, 525324, 8)).0,
            ColType::Datetime { fsp: 6 }
        );
        assert_eq!(
            m(col(0, "dt", 3, 525324, 5)),
            (ColType::Datetime { fsp: 0 }, "DATETIME".into(), None)
        );
        assert!(m(col(0, "dt1", 3, 525324, 6))
            .2
            .unwrap()
            .contains("DATETIME(1)"));
        assert_eq!(
            m(col(0, "ts", 3, 525831, 5)).0,
            ColType::Timestamp { fsp: 2 }
        );
        assert_eq!(m(col(0, "tm3", 3, 525323, 5)).0, ColType::Time { fsp: 4 });
        assert_eq!(
            m(col(0, "c10", 2, 524542, 10)).0,
            ColType::Char {
                len: 10,
                charset: Charset::Latin1
            }
        );
        assert_eq!(
            m(col(0, "cu", 13, 2162942, 15)).0,
            ColType::Char {
                len: 5,
                charset: Charset::Utf8mb3
            }
        );
        assert_eq!(
            m(col(0, "vu", 12, 2953231, 1200)).0,
            ColType::Varchar {
                len: 300,
                charset: Charset::Utf8mb4
            }
        );
        assert_eq!(
            m(col(0, "vc", 1, 524303, 100)).1,
            "VARCHAR(100) CHARACTER SET latin1"
        );
        assert_eq!(
            m(col(0, "bn", 3, 4130046, 4)).0,
            ColType::Char {
                len: 4,
                charset: Charset::Binary
            }
        );
        assert_eq!(m(col(0, "vb", 4, 4129807, 20)).1, "VARBINARY(20)");
        assert_eq!(m(col(0, "b13", 3, 4130320, 2)).0, ColType::Bit { bits: 16 });
        assert_eq!(
            m(col(0, "f", 9, 1028, 4)).0,
            ColType::Float { decimals: None }
        );
        assert_eq!(
            m(col(0, "db", 10, 1029, 8)).0,
            ColType::Double { decimals: None }
        );
        assert_eq!(
            m(col(0, "tx", 5, 2949372, 10)).0,
            ColType::Blob {
                max_bytes: 65535,
                charset: Charset::Utf8mb4
            }
        );
        assert_eq!(m(col(0, "lb", 5, 4130044, 12)).1, "LONGBLOB");
        assert_eq!(
            m(col(0, "js", 5, 3014908, 12)).1,
            "LONGTEXT CHARACTER SET utf8mb4"
        );
        // ENUM and SET: the stored number, with a warning.
        let e = m(col(0, "e", 6, 766, 1));
        assert_eq!(e.0, int(IntType::Tiny, true));
        assert!(e.2.unwrap().contains("ENUM"));
        // DECIMAL: the stored bytes, with a warning.
        let d = m(col(0, "d1", 3, 525558, 5));
        assert_eq!(
            d.0,
            ColType::Char {
                len: 5,
                charset: Charset::Binary
            }
        );
        assert!(d.2.unwrap().contains("precision and scale"));
        assert!(col_type(&col(0, "g", 14, 0, 4)).is_err());
        assert!(col_type(&col(0, "x", 13, 95 << 16 | 254, 4))
            .unwrap_err()
            .contains("95"));
    }

    #[test]
    fn a_table_is_found_by_its_name_as_the_server_spells_it() {
        let mut d = Dictionary::default();
        d.tables.insert(
            30,
            Table {
                id: 30,
                name: "db/my@002dtable".into(),
                space: 0,
                n_cols: 0x8000_0001,
                flags: 1,
                dropped: true,
            },
        );
        let mut c = col(0, "a", 6, 1283, 4);
        c.table_id = 30;
        d.columns.insert((30, 0), c);
        d.indexes.insert(
            40,
            Index {
                table_id: 30,
                id: 40,
                name: "PRIMARY".into(),
                index_type: 3,
                n_fields: 1,
                space: 0,
                page_no: 3,
                dropped: true,
            },
        );
        d.fields.insert(
            (40, 0),
            dict::Field {
                index_id: 40,
                pos: 0,
                col_name: "a".into(),
                dropped: true,
            },
        );
        let t = table_def(&d, Some("db/my-table"), "f").unwrap();
        assert_eq!(t.def.name, "my-table");
        assert_eq!(t.def.primary_key, [0]);
        assert_eq!(t.row_format, "COMPACT");
        assert!(t.def.source.ends_with("id 30, dropped"));
        assert!(table_def(&d, Some("db/my@002dtable"), "f").is_ok());
    }

    #[test]
    fn file_name_escapes() {
        assert_eq!(decode_filename("a@002db"), "a-b");
        assert_eq!(decode_filename("plain"), "plain");
        assert_eq!(decode_filename("odd@zz"), "odd@zz");
    }
}
