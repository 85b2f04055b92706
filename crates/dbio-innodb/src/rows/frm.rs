//! A table definition read from a MySQL 5.x / MariaDB `.frm` file (the server's binary table
//! definition, beside the `.ibd`): the columns in order with their storage types, lengths,
//! charsets and NULL-ability, the keys and the clustered index InnoDB builds from them, the
//! engine and the ROW_FORMAT; and a CREATE TABLE statement for it.
//!
//! The layout (MySQL's `sql/table.cc` `open_binary_frm`, `sql/unireg.cc`; dbsake's `frmdump`
//! reads it the same way), all integers little-endian:
//!
//! - header (64 bytes): `FE 01` magic; 2 frm version; 3 legacy engine type; 4 length of the
//!   names block that follows the header; 6 offset of the key section; 14 length of the key
//!   section (`FFFF`: the 32-bit length at 47); 16 length of the default record; 38 table
//!   charset (high byte at 41); 40 ROW_FORMAT; 51 MYSQL_VERSION_ID; 55 length of the extra
//!   section; 61 engine of the partitions.
//! - at `64 + names length`: the 32-bit offset of the form info (288 bytes): 46 the length of
//!   a short table comment (text from 47), 258 columns, 260 screens length, 268 names length,
//!   274 intervals (ENUM/SET values) length, 282 nullable columns, 284 comments length.
//! - after the form info and the screens: 17 bytes per column (3 length, 5 offset in the
//!   record, 8 pack flags, 10 unireg check, 11 charset high byte, 12 interval number, 13
//!   MYSQL_TYPE_*, 14 charset low byte (geometry type for GEOMETRY), 15 comment length), then
//!   the names (`\xff`-separated), the intervals (each `sep v1 sep v2 sep \0`), the comments.
//! - key section: count of keys and key parts, then 8 bytes per key (flags XOR HA_NOSAME,
//!   length, parts, algorithm, block size) each followed by 9 bytes per part (column number,
//!   offset, flags, type, length), then the key names (`\xff`-separated, `\0`-terminated).
//! - extra section (after the key section and the default record): CONNECTION and ENGINE
//!   names, each with a 16-bit length.
//!
//! DATETIME, TIME and TIMESTAMP columns of a `.frm` written before MySQL 5.6 (type codes 12,
//! 11 and 7, and MariaDB's with fractional seconds) are in the old storage formats: they are
//! switched to [`ColType::OldTemporal`], so no `--old-temporal` is needed; DATETIME2, TIME2
//! and TIMESTAMP2 (18, 19, 17) are the 5.6 formats.
//!
//! Every offset and length is checked against the file: a truncated or damaged `.frm` gives an
//! error naming the part that does not fit, never a panic or a made-up column.

use super::def::{Charset, ColType, Column, TableDef};
use super::dict_def::charset_of_collation;
use super::temporal;
use crate::encode::IntType;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Why a `.frm` file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum FrmError {
    /// The file cannot be read.
    #[error("cannot read it: {0}")]
    Io(#[from] std::io::Error),
    /// No `.frm` magic.
    #[error("not a table .frm file (it does not start with FE 01)")]
    NotFrm,
    /// The `.frm` of a view.
    #[error("the .frm of a VIEW: a view has no rows of its own")]
    View,
    /// An offset or length points outside the file.
    #[error("truncated or damaged: {what} (bytes {start}..{end}) is beyond the end of the file ({len} bytes)")]
    Truncated {
        /// The part.
        what: String,
        /// Where it starts.
        start: u64,
        /// Where it ends.
        end: u64,
        /// The file's length.
        len: usize,
    },
    /// A value that no server writes.
    #[error("damaged: {0}")]
    Bad(String),
    /// A column type dbio does not decode.
    #[error("column {column}: {ty} is not supported ({why})")]
    Unsupported {
        /// The column.
        column: String,
        /// Its type.
        ty: String,
        /// Why.
        why: String,
    },
    /// A column's charset dbio does not decode.
    #[error("column {column}: collation id {id} ({name}) is not supported (dbio reads latin1, ascii, utf8mb3, utf8mb4 and binary)")]
    Charset {
        /// The column.
        column: String,
        /// The collation id.
        id: u32,
        /// Its name, when known.
        name: String,
    },
    /// The table is not an InnoDB table.
    #[error("the table's engine is {0}, not InnoDB: its rows are not in InnoDB pages")]
    NotInnodb(String),
}

/// One key of the table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FrmKey {
    /// Name (`PRIMARY` for the primary key).
    pub name: String,
    /// UNIQUE (or PRIMARY).
    pub unique: bool,
    /// `BTREE`, `FULLTEXT`, `SPATIAL` or `HASH`.
    pub kind: &'static str,
    /// The columns, in key order.
    pub parts: Vec<FrmKeyPart>,
}

/// One column of a key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FrmKeyPart {
    /// Index in the table's columns.
    pub column: usize,
    /// A prefix of this many characters (`KEY (c(10))`); `None` for the whole column.
    pub prefix: Option<u32>,
}

/// What the `.frm` says of a column beyond its storage type.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FrmColumn {
    /// The MYSQL_TYPE_* code.
    pub type_code: u8,
    /// Its name (`DATETIME2`, ...).
    pub type_name: &'static str,
    /// The collation id (0 for types without one).
    pub collation: u32,
    /// ZEROFILL.
    pub zerofill: bool,
    /// AUTO_INCREMENT.
    pub auto_increment: bool,
    /// The column comment.
    pub comment: String,
}

/// A `.frm` file read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Frm {
    /// The definition (columns, clustered index, CREATE TABLE text).
    pub def: TableDef,
    /// Per column (same order as `def.columns`): the type code and attributes.
    pub columns: Vec<FrmColumn>,
    /// The keys, PRIMARY first as the server sorts them.
    pub keys: Vec<FrmKey>,
    /// The storage engine (`InnoDB`, `MyISAM`, ...).
    pub engine: String,
    /// ROW_FORMAT as created (`COMPACT`, `REDUNDANT`, ...); `None` for DEFAULT.
    pub row_format: Option<&'static str>,
    /// The table's default collation id.
    pub collation: u32,
    /// MYSQL_VERSION_ID of the server that wrote the file (50535 = 5.5.35; MariaDB 10.x:
    /// 100xyy); 0 before 5.0.
    pub mysql_version: u32,
    /// The columns in the DATETIME/TIME/TIMESTAMP formats before MySQL 5.6.
    pub old_temporal: Vec<String>,
}

impl Frm {
    /// Whether the engine is InnoDB (or XtraDB, MariaDB's InnoDB of 5.5-10.1).
    pub fn is_innodb(&self) -> bool {
        ["innodb", "xtradb"].contains(&self.engine.to_ascii_lowercase().as_str())
    }

    /// The server version as `5.5.35`.
    pub fn version(&self) -> String {
        let v = self.mysql_version;
        format!("{}.{}.{}", v / 10000, v % 10000 / 100, v % 100)
    }
}

/// Bounds-checked little-endian reads from the file.
struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    fn slice(&self, start: u64, len: u64, what: &str) -> Result<&'a [u8], FrmError> {
        let end = start.saturating_add(len);
        if end > self.0.len() as u64 {
            return Err(FrmError::Truncated {
                what: what.to_string(),
                start,
                end,
                len: self.0.len(),
            });
        }
        Ok(&self.0[start as usize..end as usize])
    }
    fn u8(&self, at: u64, what: &str) -> Result<u8, FrmError> {
        Ok(self.slice(at, 1, what)?[0])
    }
    fn u16(&self, at: u64, what: &str) -> Result<u64, FrmError> {
        let b = self.slice(at, 2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]) as u64)
    }
    fn u32(&self, at: u64, what: &str) -> Result<u64, FrmError> {
        let b = self.slice(at, 4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64)
    }
}

fn le16(b: &[u8], at: usize) -> u32 {
    u16::from_le_bytes([b[at], b[at + 1]]) as u32
}

// MYSQL_TYPE_* codes.
const T_DECIMAL: u8 = 0;
const T_TINY: u8 = 1;
const T_SHORT: u8 = 2;
const T_LONG: u8 = 3;
const T_FLOAT: u8 = 4;
const T_DOUBLE: u8 = 5;
const T_TIMESTAMP: u8 = 7;
const T_LONGLONG: u8 = 8;
const T_INT24: u8 = 9;
const T_DATE: u8 = 10;
const T_TIME: u8 = 11;
const T_DATETIME: u8 = 12;
const T_YEAR: u8 = 13;
const T_NEWDATE: u8 = 14;
const T_VARCHAR: u8 = 15;
const T_BIT: u8 = 16;
const T_TIMESTAMP2: u8 = 17;
const T_DATETIME2: u8 = 18;
const T_TIME2: u8 = 19;
const T_JSON: u8 = 245;
const T_NEWDECIMAL: u8 = 246;
const T_ENUM: u8 = 247;
const T_SET: u8 = 248;
const T_TINY_BLOB: u8 = 249;
const T_MEDIUM_BLOB: u8 = 250;
const T_LONG_BLOB: u8 = 251;
const T_BLOB: u8 = 252;
const T_VAR_STRING: u8 = 253;
const T_STRING: u8 = 254;
const T_GEOMETRY: u8 = 255;

/// The MYSQL_TYPE_* name of a type code.
pub fn type_name(code: u8) -> &'static str {
    match code {
        T_DECIMAL => "DECIMAL",
        T_TINY => "TINY",
        T_SHORT => "SHORT",
        T_LONG => "LONG",
        T_FLOAT => "FLOAT",
        T_DOUBLE => "DOUBLE",
        6 => "NULL",
        T_TIMESTAMP => "TIMESTAMP",
        T_LONGLONG => "LONGLONG",
        T_INT24 => "INT24",
        T_DATE => "DATE",
        T_TIME => "TIME",
        T_DATETIME => "DATETIME",
        T_YEAR => "YEAR",
        T_NEWDATE => "NEWDATE",
        T_VARCHAR => "VARCHAR",
        T_BIT => "BIT",
        T_TIMESTAMP2 => "TIMESTAMP2",
        T_DATETIME2 => "DATETIME2",
        T_TIME2 => "TIME2",
        T_JSON => "JSON",
        T_NEWDECIMAL => "NEWDECIMAL",
        T_ENUM => "ENUM",
        T_SET => "SET",
        T_TINY_BLOB => "TINY_BLOB",
        T_MEDIUM_BLOB => "MEDIUM_BLOB",
        T_LONG_BLOB => "LONG_BLOB",
        T_BLOB => "BLOB",
        T_VAR_STRING => "VAR_STRING",
        T_STRING => "STRING",
        T_GEOMETRY => "GEOMETRY",
        _ => "unknown",
    }
}

// Pack flags (FIELDFLAG_*).
const F_DECIMAL: u32 = 1; // signed number / binary string
const F_ZEROFILL: u32 = 4;
const F_INTERVAL: u32 = 256;
const F_BITFIELD: u32 = 512;
const F_MAYBE_NULL: u32 = 32768;
const NOT_FIXED_DEC: u32 = 31;
// unireg_check.
const U_NEXT_NUMBER: u8 = 15;
// Key flags.
const HA_NOSAME: u32 = 1;
const HA_FULLTEXT: u32 = 128;
const HA_SPATIAL: u32 = 1024;

/// The name of a collation id the server of a `.frm` knows (the common ones); `None` for
/// others.
pub fn collation_name(id: u32) -> Option<&'static str> {
    Some(match id {
        5 => "latin1_german1_ci",
        8 => "latin1_swedish_ci",
        15 => "latin1_danish_ci",
        31 => "latin1_german2_ci",
        47 => "latin1_bin",
        48 => "latin1_general_ci",
        49 => "latin1_general_cs",
        94 => "latin1_spanish_ci",
        11 => "ascii_general_ci",
        65 => "ascii_bin",
        33 => "utf8_general_ci",
        83 => "utf8_bin",
        192 => "utf8_unicode_ci",
        45 => "utf8mb4_general_ci",
        46 => "utf8mb4_bin",
        224 => "utf8mb4_unicode_ci",
        63 => "binary",
        1 => "big5_chinese_ci",
        7 => "koi8r_general_ci",
        28 => "gbk_chinese_ci",
        35 => "ucs2_general_ci",
        51 => "cp1251_general_ci",
        54 => "utf16_general_ci",
        57 => "cp1256_general_ci",
        60 => "utf32_general_ci",
        95 => "cp932_japanese_ci",
        _ => return None,
    })
}

/// The charset name as MySQL 5.x prints it (`utf8` for utf8mb3).
fn charset_sql(c: Charset) -> &'static str {
    match c {
        Charset::Utf8mb3 => "utf8",
        c => c.name(),
    }
}

/// Whether `id` is the default collation of its charset.
fn default_collation(id: u32) -> bool {
    matches!(id, 8 | 11 | 33 | 45 | 63)
}

/// The table name a file name encodes (MySQL writes `@002d` for `-`, ...).
pub fn table_name_of(file_stem: &str) -> String {
    let b = file_stem.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'@' && i + 5 <= b.len() {
            if let Some(c) = std::str::from_utf8(&b[i + 1..i + 5])
                .ok()
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .and_then(char::from_u32)
            {
                out.push(c);
                i += 5;
                continue;
            }
        }
        out.push(b[i] as char);
        i += 1;
    }
    out
}

/// Reads the `.frm` file at `path` (the table is named after the file).
pub fn read(path: &Path) -> Result<Frm, FrmError> {
    let bytes = std::fs::read(path)?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    parse(&bytes, &table_name_of(&stem), &path.display().to_string())
}

/// The `.frm` beside a source `X.ibd` (`X.frm` in the same directory; `X.frm` for a
/// partition's `X#P#p0.ibd` too), for the first source that has one; an error when two
/// sources have different ones.
pub fn beside(sources: &[PathBuf]) -> Result<Option<PathBuf>, (PathBuf, PathBuf)> {
    let mut found: Option<PathBuf> = None;
    for s in sources {
        if !s.extension().is_some_and(|e| e.eq_ignore_ascii_case("ibd")) {
            continue;
        }
        // A partition's tablespace (`T#P#p0.ibd`, `T#p#p0#sp#s0.ibd`) has the table's T.frm.
        let stem = s
            .file_stem()
            .map(|x| x.to_string_lossy().into_owned())
            .unwrap_or_default();
        let table = stem.split("#P#").next().unwrap_or(&stem);
        let table = table.split("#p#").next().unwrap_or(table);
        let f = s.with_file_name(format!("{table}.frm"));
        if !f.is_file() {
            continue;
        }
        match &found {
            Some(p) if p != &f => return Err((p.clone(), f)),
            Some(_) => {}
            None => found = Some(f),
        }
    }
    Ok(found)
}

/// A raw column entry of the form section.
struct RawCol {
    name: String,
    length: u32,
    pack: u32,
    unireg: u8,
    interval: u8,
    code: u8,
    collation: u32,
    comment: String,
}

/// Parses the bytes of a `.frm` file; `name` is the table name, `source` what the definition
/// says it came from.
pub fn parse(data: &[u8], name: &str, source: &str) -> Result<Frm, FrmError> {
    if data.starts_with(b"TYPE=VIEW") {
        return Err(FrmError::View);
    }
    if data.len() < 2 || data[0] != 0xFE || data[1] != 0x01 {
        return Err(FrmError::NotFrm);
    }
    let b = Bytes(data);
    let head = b.slice(0, 64, "the 64-byte header")?;
    let legacy_engine = head[3];
    let key_off = le16(head, 6) as u64;
    let mut key_len = le16(head, 14) as u64;
    if key_len == 0xFFFF {
        key_len = b.u32(47, "the key section length")?;
    }
    let rec_len = le16(head, 16) as u64;
    let table_collation = ((head[41] as u32) << 8) | head[38] as u32;
    let row_format = match head[40] {
        0 => None,
        1 => Some("FIXED"),
        2 => Some("DYNAMIC"),
        3 => Some("COMPRESSED"),
        4 => Some("REDUNDANT"),
        5 => Some("COMPACT"),
        6 => Some("PAGE"),
        n => return Err(FrmError::Bad(format!("ROW_FORMAT code {n} in the header"))),
    };
    let mysql_version = u32::from_le_bytes([head[51], head[52], head[53], head[54]]);
    let extra_len = u32::from_le_bytes([head[55], head[56], head[57], head[58]]) as u64;
    let part_engine = head[61];

    // The form info and the column entries.
    let names_len = le16(head, 4) as u64;
    let form = b.u32(64 + names_len, "the offset of the form info")?;
    let fi = b.slice(form, 288, "the form info")?;
    let n_cols = le16(fi, 258) as usize;
    let screens = le16(fi, 260) as u64;
    let col_names_len = le16(fi, 268) as u64;
    let labels_len = le16(fi, 274) as u64;
    let comments_len = le16(fi, 284) as u64;
    if n_cols == 0 || n_cols > 4096 {
        return Err(FrmError::Bad(format!(
            "{n_cols} columns (a table has 1..4096)"
        )));
    }
    let meta_off = form + 288 + screens;
    let meta = b.slice(meta_off, 17 * n_cols as u64, "the column entries")?;
    let names_off = meta_off + 17 * n_cols as u64;
    let names_raw = b.slice(names_off, col_names_len, "the column names")?;
    let labels_raw = b.slice(names_off + col_names_len, labels_len, "the ENUM/SET values")?;
    let comments_raw = b.slice(
        names_off + col_names_len + labels_len,
        comments_len,
        "the column comments",
    )?;
    let names = split_names(names_raw);
    if names.len() != n_cols {
        return Err(FrmError::Bad(format!(
            "{} column names for {n_cols} columns",
            names.len()
        )));
    }
    let intervals = split_intervals(labels_raw);
    let mut raw = Vec::with_capacity(n_cols);
    let mut comment_at = 0usize;
    for (i, name) in names.into_iter().enumerate() {
        let m = &meta[17 * i..17 * i + 17];
        let code = m[13];
        let comment_len = le16(m, 15) as usize;
        let comment = comments_raw
            .get(comment_at..comment_at + comment_len)
            .ok_or_else(|| {
                FrmError::Bad(format!(
                    "the comment of column {name} is beyond the comments"
                ))
            })?;
        comment_at += comment_len;
        raw.push(RawCol {
            length: le16(m, 3),
            pack: le16(m, 8),
            unireg: m[10],
            interval: m[12],
            code,
            collation: if code == T_GEOMETRY {
                63
            } else {
                ((m[11] as u32) << 8) | m[14] as u32
            },
            comment: String::from_utf8_lossy(comment).into_owned(),
            name,
        });
    }

    // Columns.
    let mut columns = Vec::with_capacity(n_cols);
    let mut info = Vec::with_capacity(n_cols);
    let mut old = Vec::new();
    for r in &raw {
        let (ty, sql_type) = col_type(r, &intervals, table_collation)?;
        if matches!(r.code, T_TIMESTAMP | T_DATETIME | T_TIME) {
            old.push(r.name.clone());
        }
        columns.push(Column {
            name: r.name.clone(),
            ty,
            sql_type,
            nullable: r.pack & F_MAYBE_NULL != 0,
            generated: None,
        });
        info.push(FrmColumn {
            type_code: r.code,
            type_name: type_name(r.code),
            collation: if is_text(r.code, r.pack) {
                r.collation
            } else {
                0
            },
            zerofill: is_number(r.code) && r.pack & F_ZEROFILL != 0,
            auto_increment: r.unireg == U_NEXT_NUMBER,
            comment: r.comment.clone(),
        });
    }

    // Keys.
    let keysec = b.slice(key_off, key_len, "the key section")?;
    let keys = parse_keys(keysec, &raw, &columns)?;
    let primary_key = clustered(&keys, &raw, &columns)?;
    for &i in &primary_key {
        columns[i].nullable = false;
    }

    // The engine: the extra section's name, else the legacy code.
    let extra_off = key_off + key_len + rec_len;
    let mut engine = None;
    if extra_len > 0 {
        let extra = b.slice(extra_off, extra_len, "the extra section")?;
        let mut at = 0usize;
        let mut strs = Vec::new();
        for _ in 0..2 {
            let Some(l) = extra.get(at..at + 2).map(|s| le16(s, 0) as usize) else {
                break;
            };
            let Some(s) = extra.get(at + 2..at + 2 + l) else {
                return Err(FrmError::Bad(
                    "a name in the extra section runs past its end".into(),
                ));
            };
            strs.push(String::from_utf8_lossy(s).into_owned());
            at += 2 + l;
        }
        engine = strs.get(1).filter(|s| !s.is_empty()).cloned();
    }
    let engine = match engine {
        Some(e) if e.eq_ignore_ascii_case("partition") => legacy_engine_name(part_engine),
        Some(e) => e,
        None => legacy_engine_name(legacy_engine),
    };

    let comment = match fi[46] {
        0xFF | 0 => String::new(),
        n => {
            String::from_utf8_lossy(b.slice(form + 47, n as u64, "the table comment")?).into_owned()
        }
    };
    let mut def = TableDef {
        name: name.to_string(),
        columns,
        primary_key,
        create_sql: String::new(),
        source: source.to_string(),
        row_versions: None,
    };
    let mut frm = Frm {
        def: def.clone(),
        columns: info,
        keys,
        engine,
        row_format,
        collation: table_collation,
        mysql_version,
        old_temporal: old.clone(),
    };
    def.create_sql = create_sql(&frm, &comment);
    temporal::apply(&mut def, &old, false);
    frm.def = def;
    Ok(frm)
}

fn legacy_engine_name(code: u8) -> String {
    match code {
        6 => "MEMORY",
        9 => "MyISAM",
        10 => "MRG_MYISAM",
        12 => "InnoDB",
        14 => "ndbcluster",
        16 => "ARCHIVE",
        17 => "CSV",
        18 => "FEDERATED",
        19 => "BLACKHOLE",
        20 => "partition",
        27 => "Aria",
        28 => "PERFORMANCE_SCHEMA",
        n => return format!("unknown (legacy type {n})"),
    }
    .to_string()
}

/// `\xff a \xff b \xff \0` -> [a, b].
fn split_names(raw: &[u8]) -> Vec<String> {
    let raw = raw.strip_suffix(b"\0").unwrap_or(raw);
    let raw = raw.strip_prefix(&[0xFF]).unwrap_or(raw);
    let raw = raw.strip_suffix(&[0xFF]).unwrap_or(raw);
    if raw.is_empty() {
        return Vec::new();
    }
    raw.split(|&c| c == 0xFF)
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

/// The intervals (ENUM/SET value lists): each `sep v1 sep v2 sep \0`, the separator being
/// the group's first byte (0xFF unless a value holds it).
fn split_intervals(raw: &[u8]) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < raw.len() {
        let sep = raw[at];
        let mut vals = Vec::new();
        let mut i = at + 1;
        let mut start = i;
        while i < raw.len() {
            if raw[i] == sep {
                vals.push(raw[start..i].to_vec());
                start = i + 1;
                if raw.get(start) == Some(&0) {
                    break;
                }
            }
            i += 1;
        }
        out.push(vals);
        at = start + 1;
    }
    out
}

fn is_number(code: u8) -> bool {
    matches!(
        code,
        T_TINY
            | T_SHORT
            | T_LONG
            | T_INT24
            | T_LONGLONG
            | T_FLOAT
            | T_DOUBLE
            | T_NEWDECIMAL
            | T_DECIMAL
    )
}

fn is_text(code: u8, pack: u32) -> bool {
    matches!(
        code,
        T_VARCHAR
            | T_VAR_STRING
            | T_STRING
            | T_ENUM
            | T_SET
            | T_TINY_BLOB
            | T_BLOB
            | T_MEDIUM_BLOB
            | T_LONG_BLOB
    ) || (code == T_STRING && pack & (F_INTERVAL | F_BITFIELD) != 0)
}

/// Decodes ENUM/SET values in the column's charset.
fn label_text(v: &[u8], cs: Option<Charset>) -> String {
    match cs {
        Some(Charset::Latin1) => v.iter().map(|&c| c as char).collect(),
        _ => String::from_utf8_lossy(v).into_owned(),
    }
}

fn quote_sql(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
}

/// The storage type and the SQL type of a column.
fn col_type(
    r: &RawCol,
    intervals: &[Vec<Vec<u8>>],
    table_collation: u32,
) -> Result<(ColType, String), FrmError> {
    let tn = type_name(r.code);
    let unsupported = |why: &str| FrmError::Unsupported {
        column: r.name.clone(),
        ty: format!("MYSQL_TYPE_{tn} ({})", r.code),
        why: why.to_string(),
    };
    let signed = r.pack & F_DECIMAL != 0;
    let zerofill = r.pack & F_ZEROFILL != 0;
    let num_suffix = || {
        let mut s = String::new();
        if !signed {
            s.push_str(" unsigned");
        }
        if zerofill {
            s.push_str(" zerofill");
        }
        s
    };
    let int = |ty: IntType, sql: &str| {
        Ok((
            ColType::Int {
                ty,
                unsigned: !signed,
            },
            format!("{sql}({}){}", r.length, num_suffix()),
        ))
    };
    // The charset of a text column (checked), with its SQL clause.
    let text_cs = || -> Result<(Charset, String), FrmError> {
        let cs = charset_of_collation(r.collation).ok_or_else(|| FrmError::Charset {
            column: r.name.clone(),
            id: r.collation,
            name: collation_name(r.collation).unwrap_or("unknown").to_string(),
        })?;
        let mut clause = String::new();
        if cs != Charset::Binary {
            // As SHOW CREATE TABLE: the charset when the collation is not the table's.
            if r.collation != table_collation {
                clause.push_str(&format!(" CHARACTER SET {}", charset_sql(cs)));
            }
            if !default_collation(r.collation) {
                match collation_name(r.collation) {
                    Some(n) => clause.push_str(&format!(" COLLATE {n}")),
                    None => clause.push_str(&format!(" /* collation id {} */", r.collation)),
                }
            }
        }
        Ok((cs, clause))
    };
    let temporal_fsp = |width: u32| -> Result<u8, FrmError> {
        let f = r.length.saturating_sub(width + 1);
        if r.length > width && f <= 6 && f > 0 {
            Ok(f as u8)
        } else if r.length <= width {
            Ok(0)
        } else {
            Err(unsupported(&format!(
                "display width {} gives no fractional digits 0..6",
                r.length
            )))
        }
    };
    let with_fsp = |sql: &str, fsp: u8| {
        if fsp > 0 {
            format!("{sql}({fsp})")
        } else {
            sql.to_string()
        }
    };
    let blob = |max: u64, bin: &str, text: &str| -> Result<(ColType, String), FrmError> {
        let (cs, clause) = text_cs()?;
        Ok(if cs == Charset::Binary {
            (
                ColType::Blob {
                    max_bytes: max,
                    charset: cs,
                },
                bin.to_string(),
            )
        } else {
            (
                ColType::Blob {
                    max_bytes: max,
                    charset: cs,
                },
                format!("{text}{clause}"),
            )
        })
    };
    let labels = |what: &str| -> Result<Vec<Vec<u8>>, FrmError> {
        let n = r.interval as usize;
        intervals
            .get(n.wrapping_sub(1))
            .filter(|v| !v.is_empty())
            .cloned()
            .ok_or_else(|| {
                FrmError::Bad(format!(
                    "{what} column {} names value list {n} of {}",
                    r.name,
                    intervals.len()
                ))
            })
    };
    let code = if r.code == T_STRING && r.pack & F_INTERVAL != 0 {
        if r.pack & F_BITFIELD != 0 {
            T_SET
        } else {
            T_ENUM
        }
    } else {
        r.code
    };
    match code {
        T_TINY => int(IntType::Tiny, "tinyint"),
        T_SHORT => int(IntType::Small, "smallint"),
        T_INT24 => int(IntType::Medium, "mediumint"),
        T_LONG => int(IntType::Int, "int"),
        T_LONGLONG => int(IntType::Big, "bigint"),
        T_NEWDECIMAL => {
            let scale = (r.pack >> 8) & 31;
            // my_decimal_length_to_precision: the display length counts the point and sign.
            let precision = r
                .length
                .saturating_sub(u32::from(scale > 0))
                .saturating_sub(u32::from(signed && r.length > 0));
            if precision == 0 || precision > 65 || scale > 30 || scale > precision {
                return Err(unsupported(&format!(
                    "DECIMAL({precision},{scale}) from length {} is out of range",
                    r.length
                )));
            }
            Ok((
                ColType::Decimal { precision, scale },
                format!("decimal({precision},{scale}){}", num_suffix()),
            ))
        }
        T_FLOAT | T_DOUBLE => {
            let dec = (r.pack >> 8) & 31;
            let decimals = (dec < NOT_FIXED_DEC).then_some(dec as u8);
            let name = if code == T_FLOAT { "float" } else { "double" };
            let sql = match decimals {
                Some(d) => format!("{name}({},{d}){}", r.length, num_suffix()),
                None => format!("{name}{}", num_suffix()),
            };
            Ok((
                if code == T_FLOAT {
                    ColType::Float { decimals }
                } else {
                    ColType::Double { decimals }
                },
                sql,
            ))
        }
        T_BIT => {
            if !(1..=64).contains(&r.length) {
                return Err(unsupported("BIT(N) needs 1 <= N <= 64"));
            }
            Ok((
                ColType::Bit { bits: r.length },
                format!("bit({})", r.length),
            ))
        }
        T_YEAR => Ok((ColType::Year, format!("year({})", r.length))),
        T_NEWDATE => Ok((ColType::Date, "date".into())),
        T_DATE => Err(unsupported(
            "the 4-byte DATE of MySQL before 5.0 is not decoded",
        )),
        T_DATETIME | T_DATETIME2 => {
            let fsp = temporal_fsp(19)?;
            Ok((ColType::Datetime { fsp }, with_fsp("datetime", fsp)))
        }
        T_TIMESTAMP | T_TIMESTAMP2 => {
            let fsp = temporal_fsp(19)?;
            Ok((ColType::Timestamp { fsp }, with_fsp("timestamp", fsp)))
        }
        T_TIME | T_TIME2 => {
            let fsp = temporal_fsp(10)?;
            Ok((ColType::Time { fsp }, with_fsp("time", fsp)))
        }
        T_VARCHAR | T_VAR_STRING | T_STRING => {
            let (cs, clause) = text_cs()?;
            let len = r.length / cs.mbmaxlen();
            let varying = code != T_STRING;
            let sql = match (varying, cs == Charset::Binary) {
                (true, true) => format!("varbinary({len})"),
                (true, false) => format!("varchar({len}){clause}"),
                (false, true) => format!("binary({len})"),
                (false, false) => format!("char({len}){clause}"),
            };
            let ty = if varying {
                ColType::Varchar { len, charset: cs }
            } else {
                ColType::Char { len, charset: cs }
            };
            Ok((ty, sql))
        }
        T_TINY_BLOB => blob(255, "tinyblob", "tinytext"),
        T_BLOB => blob(65535, "blob", "text"),
        T_MEDIUM_BLOB => blob((1 << 24) - 1, "mediumblob", "mediumtext"),
        T_LONG_BLOB => blob(u32::MAX as u64, "longblob", "longtext"),
        T_ENUM | T_SET => {
            let is_enum = code == T_ENUM;
            let vals = labels(if is_enum { "ENUM" } else { "SET" })?;
            let cs = charset_of_collation(r.collation);
            let values: Vec<String> = vals.iter().map(|v| label_text(v, cs)).collect();
            if is_enum && values.len() > 65535 || !is_enum && values.len() > 64 {
                return Err(FrmError::Bad(format!(
                    "column {}: {} values",
                    r.name,
                    values.len()
                )));
            }
            let list = values
                .iter()
                .map(|v| quote_sql(v))
                .collect::<Vec<_>>()
                .join(",");
            let clause = text_cs().map(|c| c.1).unwrap_or_default();
            Ok(if is_enum {
                (ColType::Enum { values }, format!("enum({list}){clause}"))
            } else {
                (ColType::Set { values }, format!("set({list}){clause}"))
            })
        }
        T_DECIMAL => Err(unsupported(
            "the string-stored DECIMAL of MySQL before 5.0 is not decoded",
        )),
        T_JSON => Err(unsupported(
            "MySQL 5.7's binary JSON, or a MariaDB virtual column: not decoded",
        )),
        T_GEOMETRY => Err(unsupported("GEOMETRY values are not decoded")),
        _ => Err(unsupported("not a type a table column has")),
    }
}

/// The keys of the key section.
fn parse_keys(sec: &[u8], raw: &[RawCol], columns: &[Column]) -> Result<Vec<FrmKey>, FrmError> {
    let b = Bytes(sec);
    let what = |w: &str| format!("the key section's {w}");
    if sec.is_empty() {
        return Ok(Vec::new());
    }
    let first = b.u8(0, &what("key count"))? as u64;
    let (n_keys, n_parts) = if first < 128 {
        (first, b.u8(1, &what("part count"))? as u64)
    } else {
        (
            (first & 0x7F) | ((b.u8(1, &what("key count"))? as u64) << 7),
            b.u16(2, &what("part count"))?,
        )
    };
    let extra_len = b.u16(4, &what("names length"))?;
    let names_off = 6 + n_keys * 8 + n_parts * 9;
    let names_raw = b.slice(names_off, extra_len, &what("names"))?;
    let names_end = names_raw
        .iter()
        .position(|&c| c == 0)
        .unwrap_or(names_raw.len());
    let names: Vec<String> = names_raw[..names_end]
        .split(|&c| c == 0xFF)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect();
    if names.len() as u64 != n_keys {
        return Err(FrmError::Bad(format!(
            "{} key names for {n_keys} keys",
            names.len()
        )));
    }
    let mut at = 6u64;
    let mut parts_seen = 0u64;
    let mut keys = Vec::new();
    for name in names {
        let k = b.slice(at, 8, &what("key entries"))?;
        at += 8;
        let flags = le16(k, 0) ^ HA_NOSAME;
        // FULLTEXT and SPATIAL keys index whole columns.
        let whole = flags & (HA_FULLTEXT | HA_SPATIAL) != 0;
        let n = k[4] as u64;
        parts_seen += n;
        if parts_seen > n_parts {
            return Err(FrmError::Bad(format!(
                "key {name} has more parts than the {n_parts} the section holds"
            )));
        }
        let mut parts = Vec::new();
        for _ in 0..n {
            let p = b.slice(at, 9, &what("key parts"))?;
            at += 9;
            let fieldnr = (le16(p, 0) & 0x3FFF) as usize;
            let len = le16(p, 7);
            let c = fieldnr
                .checked_sub(1)
                .filter(|&c| c < columns.len())
                .ok_or_else(|| {
                    FrmError::Bad(format!(
                        "key {name} names column number {fieldnr} of {}",
                        columns.len()
                    ))
                })?;
            parts.push(FrmKeyPart {
                column: c,
                prefix: if whole {
                    None
                } else {
                    prefix_of(&raw[c], &columns[c].ty, len)
                },
            });
        }
        keys.push(FrmKey {
            unique: flags & HA_NOSAME != 0,
            kind: if flags & HA_FULLTEXT != 0 {
                "FULLTEXT"
            } else if flags & HA_SPATIAL != 0 {
                "SPATIAL"
            } else if k[5] == 3 {
                "HASH"
            } else {
                "BTREE"
            },
            name,
            parts,
        });
    }
    Ok(keys)
}

/// The prefix length in characters of a key part of `len` bytes, `None` when it is the whole
/// column.
fn prefix_of(r: &RawCol, ty: &ColType, len: u32) -> Option<u32> {
    match ty {
        ColType::Blob { charset, .. } => Some(len / charset.mbmaxlen()),
        ColType::Char { charset, .. } | ColType::Varchar { charset, .. } if len != r.length => {
            Some(len / charset.mbmaxlen())
        }
        _ => None,
    }
}

/// The clustered index: PRIMARY, else the first UNIQUE key of whole NOT NULL columns (as the
/// server promotes it), else the hidden DB_ROW_ID (empty).
fn clustered(keys: &[FrmKey], _raw: &[RawCol], columns: &[Column]) -> Result<Vec<usize>, FrmError> {
    let whole = |k: &FrmKey| k.parts.iter().all(|p| p.prefix.is_none());
    if let Some(k) = keys.iter().find(|k| k.name == "PRIMARY") {
        if !whole(k) {
            return Err(FrmError::Unsupported {
                column: k
                    .parts
                    .iter()
                    .find(|p| p.prefix.is_some())
                    .map(|p| columns[p.column].name.clone())
                    .unwrap_or_default(),
                ty: "PRIMARY KEY part".into(),
                why: "a column prefix in the primary key (the clustered record holds the prefix and the whole column) is not decoded".into(),
            });
        }
        return Ok(k.parts.iter().map(|p| p.column).collect());
    }
    for k in keys {
        if k.unique
            && k.kind == "BTREE"
            && !k.parts.is_empty()
            && whole(k)
            && k.parts.iter().all(|p| !columns[p.column].nullable)
        {
            return Ok(k.parts.iter().map(|p| p.column).collect());
        }
    }
    Ok(Vec::new())
}

fn ident(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

/// A CREATE TABLE statement for the table, in the style of MySQL 5.x's SHOW CREATE TABLE
/// (no DEFAULT values; the old temporal columns carry `/* 5.5 binary format */`).
fn create_sql(frm: &Frm, comment: &str) -> String {
    let def = &frm.def;
    let mut lines = Vec::new();
    for (c, i) in def.columns.iter().zip(&frm.columns) {
        let mut l = format!("  {} {}", ident(&c.name), c.sql_type);
        if frm.old_temporal.contains(&c.name) {
            l.push_str(" /* 5.5 binary format */");
        }
        if !c.nullable {
            l.push_str(" NOT NULL");
        } else if matches!(i.type_code, T_TIMESTAMP | T_TIMESTAMP2) {
            l.push_str(" NULL");
        }
        if i.auto_increment {
            l.push_str(" AUTO_INCREMENT");
        }
        if !i.comment.is_empty() {
            l.push_str(&format!(" COMMENT {}", quote_sql(&i.comment)));
        }
        lines.push(l);
    }
    for k in &frm.keys {
        let cols = k
            .parts
            .iter()
            .map(|p| {
                let n = ident(&def.columns[p.column].name);
                match p.prefix {
                    Some(x) => format!("{n}({x})"),
                    None => n,
                }
            })
            .collect::<Vec<_>>()
            .join(",");
        let head = if k.name == "PRIMARY" {
            "PRIMARY KEY".to_string()
        } else if k.unique {
            format!("UNIQUE KEY {}", ident(&k.name))
        } else if k.kind == "FULLTEXT" || k.kind == "SPATIAL" {
            format!("{} KEY {}", k.kind, ident(&k.name))
        } else {
            format!("KEY {}", ident(&k.name))
        };
        lines.push(format!("  {head} ({cols})"));
    }
    let mut opts = format!("ENGINE={}", frm.engine);
    if let Some(cs) = charset_of_collation(frm.collation) {
        opts.push_str(&format!(" DEFAULT CHARSET={}", charset_sql(cs)));
        if !default_collation(frm.collation) {
            if let Some(n) = collation_name(frm.collation) {
                opts.push_str(&format!(" COLLATE={n}"));
            }
        }
    } else if let Some(n) = collation_name(frm.collation) {
        opts.push_str(&format!(" DEFAULT COLLATE={n}"));
    }
    if let Some(rf) = frm.row_format {
        opts.push_str(&format!(" ROW_FORMAT={rf}"));
    }
    if !comment.is_empty() {
        opts.push_str(&format!(" COMMENT={}", quote_sql(comment)));
    }
    format!(
        "CREATE TABLE {} (\n{}\n) {opts}",
        ident(&def.name),
        lines.join(",\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_intervals_split() {
        assert_eq!(split_names(b"\xffa\xffbc\xff\0"), ["a", "bc"]);
        let iv = split_intervals(b"\xffG\xffPG\xff\0\xffx\xff\0");
        assert_eq!(
            iv,
            vec![vec![b"G".to_vec(), b"PG".to_vec()], vec![b"x".to_vec()]]
        );
        assert_eq!(table_name_of("my@002dtable"), "my-table");
        assert_eq!(table_name_of("a@zz"), "a@zz");
    }
}

#[cfg(test)]
mod real_files {
    //! The parser on real .frm files: the sakila copies of MySQL 5.5/5.6 (innodb_ruby) against
    //! MariaDB's SHOW CREATE TABLE of the same schema, and dbsake's fixtures against the SHOW
    //! CREATE TABLE its author captured from the server that wrote each file.
    use super::*;
    use crate::rows::def;
    use std::path::PathBuf;

    fn testdata(p: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/innodb")
            .join(p)
    }

    fn frms(dir: &str) -> Vec<PathBuf> {
        let mut v: Vec<_> = std::fs::read_dir(testdata(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "frm"))
            .collect();
        v.sort();
        v
    }

    /// The storage type with the new temporal formats and utf8mb4 read as utf8mb3 (sakila
    /// 1.5 in MariaDB is utf8mb4; the .frm copies are utf8).
    fn normal(t: &ColType) -> ColType {
        match t.clone() {
            ColType::OldTemporal { old, fsp } => match old {
                def::OldTemporal::Datetime => ColType::Datetime { fsp },
                def::OldTemporal::Time => ColType::Time { fsp },
                def::OldTemporal::Timestamp => ColType::Timestamp { fsp },
            },
            ColType::Char {
                len,
                charset: Charset::Utf8mb4,
            } => ColType::Char {
                len,
                charset: Charset::Utf8mb3,
            },
            ColType::Varchar {
                len,
                charset: Charset::Utf8mb4,
            } => ColType::Varchar {
                len,
                charset: Charset::Utf8mb3,
            },
            ColType::Blob {
                max_bytes,
                charset: Charset::Utf8mb4,
            } => ColType::Blob {
                max_bytes,
                charset: Charset::Utf8mb3,
            },
            t => t,
        }
    }

    /// Columns (name, type, nullable) and the clustered key of two definitions are the same.
    fn same_table(a: &TableDef, b: &TableDef, normalize: bool, what: &str) {
        let cols = |d: &TableDef| {
            d.columns
                .iter()
                .map(|c| {
                    (
                        c.name.clone(),
                        if normalize {
                            normal(&c.ty)
                        } else {
                            c.ty.clone()
                        },
                        c.nullable,
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(cols(a), cols(b), "{what}");
        assert_eq!(a.primary_key, b.primary_key, "{what}");
    }

    #[test]
    fn sakila_frm_files_match_the_schema() {
        for dir in ["compact", "redundant", "5.0-frm"] {
            let files = frms(&format!("mysql-real/sakila/{dir}"));
            assert_eq!(files.len(), 15, "{dir}");
            for p in files {
                let f = read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                assert_eq!(f.engine, "InnoDB");
                // compact/: .frm of MySQL 5.5.35, old temporal types; redundant/: 5.6.17;
                // 5.0-frm/: 5.0.96.
                let temporal: Vec<_> = f
                    .def
                    .columns
                    .iter()
                    .filter(|c| matches!(c.ty, ColType::OldTemporal { .. }))
                    .map(|c| c.name.clone())
                    .collect();
                if dir != "redundant" {
                    let v = if dir == "compact" { 50535 } else { 50096 };
                    assert_eq!(f.mysql_version, v);
                    assert_eq!(f.row_format, None);
                    assert!(
                        temporal.contains(&"last_update".to_string()),
                        "{temporal:?}"
                    );
                    assert_eq!(temporal, f.old_temporal);
                } else {
                    assert_eq!(f.mysql_version, 50617);
                    assert_eq!(f.row_format, Some("REDUNDANT"));
                    assert!(temporal.is_empty(), "{temporal:?}");
                }
                // The CREATE TABLE written parses back to the same definition, old temporal
                // columns included (their `/* 5.5 binary format */` comments).
                let mut back = def::parse(&f.def.create_sql, None, "x").unwrap();
                temporal::apply(
                    &mut back,
                    &temporal::marked_columns(&f.def.create_sql),
                    false,
                );
                same_table(&f.def, &back, false, &f.def.create_sql);
                let sql = p.with_extension("sql");
                let name = p.file_stem().unwrap().to_str().unwrap();
                let expected = testdata(&format!("mysql-real/sakila/expected/{name}.sql"));
                if let Ok(s) = std::fs::read_to_string(&expected) {
                    let mut e = def::parse(&s, None, "x").unwrap();
                    // Where sakila 1.5 (MariaDB's schema) differs from 0.8 (the .frm):
                    // customer.last_update became NULL-able, film.title VARCHAR(255) became
                    // VARCHAR(128).
                    let col = |e: &mut TableDef, n: &str| {
                        e.columns.iter().position(|c| c.name == n).unwrap()
                    };
                    if name == "customer" {
                        let i = col(&mut e, "last_update");
                        assert!(e.columns[i].nullable);
                        e.columns[i].nullable = false;
                    }
                    if name == "film" {
                        let i = col(&mut e, "title");
                        let t = ColType::Varchar {
                            len: 128,
                            charset: Charset::Utf8mb4,
                        };
                        assert_eq!(e.columns[i].ty, t);
                        e.columns[i].ty = ColType::Varchar {
                            len: 255,
                            charset: Charset::Utf8mb4,
                        };
                    }
                    same_table(
                        &f.def,
                        &e,
                        true,
                        &format!("{} vs {}", p.display(), sql.display()),
                    );
                } else {
                    assert!(["payment", "rental"].contains(&name), "{name}");
                }
            }
        }
    }

    #[test]
    fn sakila_keys_and_types() {
        let f = read(&testdata("mysql-real/sakila/compact/film.frm")).unwrap();
        let ty = |n: &str| {
            f.def
                .columns
                .iter()
                .find(|c| c.name == n)
                .unwrap()
                .ty
                .clone()
        };
        assert_eq!(
            ty("rental_rate"),
            ColType::Decimal {
                precision: 4,
                scale: 2
            }
        );
        assert_eq!(
            ty("description"),
            ColType::Blob {
                max_bytes: 65535,
                charset: Charset::Utf8mb3
            }
        );
        assert_eq!(
            ty("title"),
            ColType::Varchar {
                len: 255,
                charset: Charset::Utf8mb3
            }
        );
        assert_eq!(
            ty("rating"),
            ColType::Enum {
                values: ["G", "PG", "PG-13", "R", "NC-17"]
                    .map(String::from)
                    .to_vec()
            }
        );
        assert_eq!(ty("release_year"), ColType::Year);
        assert_eq!(
            f.keys.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(),
            [
                "PRIMARY",
                "idx_title",
                "idx_fk_language_id",
                "idx_fk_original_language_id"
            ]
        );
        let r = read(&testdata("mysql-real/sakila/compact/rental.frm")).unwrap();
        assert_eq!(
            r.old_temporal,
            ["rental_date", "return_date", "last_update"]
        );
        assert!(r.keys[1].unique && r.keys[1].name == "rental_date");
        let s = read(&testdata("mysql-real/sakila/redundant/staff.frm")).unwrap();
        assert_eq!(s.columns[9].collation, 83, "password is utf8_bin");
        assert!(
            s.def
                .create_sql
                .contains("`password` varchar(40) CHARACTER SET utf8 COLLATE utf8_bin,"),
            "{}",
            s.def.create_sql
        );
        let fa = read(&testdata("mysql-real/sakila/redundant/film_actor.frm")).unwrap();
        assert_eq!(fa.def.primary_key, [0, 1]);
    }

    /// dbsake's fixtures whose types dbio decodes, against the SHOW CREATE TABLE beside them.
    #[test]
    fn dbsake_fixtures_match_show_create_table() {
        let mut compared = Vec::new();
        for p in frms("frm-dbsake") {
            let name = p.file_stem().unwrap().to_str().unwrap().to_string();
            let sql = std::fs::read_to_string(p.with_extension("sql")).unwrap();
            let got = read(&p);
            match name.as_str() {
                "actor_info" => {
                    assert!(matches!(got, Err(FrmError::View)), "{got:?}");
                    continue;
                }
                "utf16_encoding" | "uc_test" => {
                    let e = got.unwrap_err().to_string();
                    assert!(e.contains("collation id"), "{e}");
                    continue;
                }
                _ => {}
            }
            let f = got.unwrap_or_else(|e| panic!("{name}: {e}"));
            // sqlparser does not know ZEROFILL (integer_test, float_test).
            let unzero = |s: &str| s.replace(" zerofill", "");
            let Ok(mut want) = def::parse(&unzero(&sql), None, "x") else {
                panic!("{name}: SHOW CREATE TABLE does not parse");
            };
            // MariaDB 10.0's old temporal types (temporal_test, time_types_test): the .frm
            // says which columns; the server's SHOW CREATE TABLE does not.
            temporal::apply(&mut want, &f.old_temporal, false);
            same_table(&f.def, &want, false, &name);
            let mut back = def::parse(&unzero(&f.def.create_sql), None, "x").unwrap();
            temporal::apply(
                &mut back,
                &temporal::marked_columns(&f.def.create_sql),
                false,
            );
            same_table(&f.def, &back, false, &f.def.create_sql);
            compared.push(name);
        }
        assert_eq!(compared.len(), 29, "{compared:?}");
        let t = read(&testdata("frm-dbsake/temporal_test.frm")).unwrap();
        assert_eq!(t.old_temporal, ["b", "d", "h", "j", "o"]);
        let ty = |n: &str| {
            t.def
                .columns
                .iter()
                .find(|c| c.name == n)
                .unwrap()
                .ty
                .clone()
        };
        assert_eq!(
            ty("d"),
            ColType::OldTemporal {
                old: def::OldTemporal::Time,
                fsp: 4
            }
        );
        assert_eq!(
            ty("j"),
            ColType::OldTemporal {
                old: def::OldTemporal::Datetime,
                fsp: 6
            }
        );
        assert_eq!(ty("i"), ColType::Datetime { fsp: 6 });
        assert_eq!(t.engine, "MyISAM");
        assert!(!t.is_innodb());
    }

    #[test]
    fn the_frm_beside_a_tablespace() {
        let d = tempfile::tempdir().unwrap();
        let p = |n: &str| d.path().join(n);
        for n in [
            "t.frm",
            "t.ibd",
            "t#P#p0.ibd",
            "t#p#p1#sp#s0.ibd",
            "u.ibd",
            "v.frm",
            "v.ibd",
        ] {
            std::fs::write(p(n), b"").unwrap();
        }
        assert_eq!(beside(&[p("t.ibd")]).unwrap(), Some(p("t.frm")));
        assert_eq!(
            beside(&[p("u.ibd"), p("t#P#p0.ibd")]).unwrap(),
            Some(p("t.frm"))
        );
        assert_eq!(
            beside(&[p("t#p#p1#sp#s0.ibd"), p("t.ibd")]).unwrap(),
            Some(p("t.frm"))
        );
        assert_eq!(beside(&[p("u.ibd"), p("t.frm")]).unwrap(), None);
        assert_eq!(
            beside(&[p("t.ibd"), p("v.ibd")]).unwrap_err(),
            (p("t.frm"), p("v.frm"))
        );
    }

    #[test]
    fn damaged_files_give_errors_never_panics() {
        let good = std::fs::read(testdata("mysql-real/sakila/compact/film.frm")).unwrap();
        assert!(parse(&good, "film", "x").is_ok());
        // Every truncation.
        // The form info is at 8192, its 288 bytes and the 13 column entries follow.
        for n in 0..good.len() {
            let r = parse(&good[..n], "film", "x");
            if n < 8192 + 288 + 13 * 17 {
                assert!(r.is_err(), "{n} bytes parsed");
            }
        }
        let e = parse(&good[..3000], "film", "x").unwrap_err().to_string();
        assert_eq!(e, "truncated or damaged: the form info (bytes 8192..8480) is beyond the end of the file (3000 bytes)");
        let e = parse(&good[..8800], "film", "x").unwrap_err().to_string();
        assert!(
            e.starts_with("truncated or damaged: the column entries (bytes 8727..8948)"),
            "{e}"
        );
        // Every byte set to 0xFF, then to 0x00, one at a time: an error or a definition, never
        // a panic.
        for i in 0..good.len() {
            for v in [0xFF, 0x00, good[i] ^ 0x80] {
                let mut b = good.clone();
                b[i] = v;
                let _ = parse(&b, "film", "x");
            }
        }
        assert!(matches!(
            parse(b"hello world", "x", "x"),
            Err(FrmError::NotFrm)
        ));
        assert!(matches!(parse(b"", "x", "x"), Err(FrmError::NotFrm)));
        assert!(matches!(
            parse(b"TYPE=VIEW\nquery=select 1", "x", "x"),
            Err(FrmError::View)
        ));
        // A huge column count, a key naming a column that is not there.
        let mut b = good.clone();
        b[8192 + 258] = 0xFF;
        b[8192 + 259] = 0xFF;
        let e = parse(&b, "film", "x").unwrap_err().to_string();
        assert_eq!(e, "damaged: 65535 columns (a table has 1..4096)");
    }
}
