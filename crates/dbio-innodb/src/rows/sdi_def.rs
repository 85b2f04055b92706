//! A table definition from the SDI of a MySQL 8 tablespace ([`crate::sdi`]): the table's
//! `dd_object` turned into a [`TableDef`], with the clustered index's id and tablespace id
//! from its `se_private_data` (`id=..;root=..;space_id=..;`) and a CREATE TABLE text.
//!
//! Each column's SQL type is the `column_type_utf8` the server wrote (`varchar(45)`,
//! `decimal(4,2)`, `enum('G','PG')`, `smallint unsigned`), its character set that of its
//! `collation_id`; the statement built from them is parsed by [`def::parse`], so a column
//! is mapped exactly as the same CREATE TABLE given with `--table-def` would be. What a
//! statement cannot say is then set from the SDI: the clustered key (the PRIMARY index's
//! visible elements; none when it is the hidden DB_ROW_ID), FTS_DOC_ID (a hidden column
//! stored in the record of a table with a FULLTEXT index: kept in the record, not written),
//! generated columns (VIRTUAL ones are not in the record), DATETIME/TIME/TIMESTAMP of the
//! format before 5.6 (dd types 7, 12, 13). Tables with instant ADD/DROP COLUMN (8.0.29+ row
//! versions: `version_added`/`version_dropped`/`physical_pos` of each column; 8.0.12-8.0.28:
//! the table's `instant_col`) get [`RowVersions`]: the fields in the order records hold them,
//! dropped columns included, and the added columns' stored defaults (`default=` hex or
//! `default_null=1`); [`super::row_version`] turns them into the records' layout.

use super::def::{self, ColType, DefError, OldTemporal, Physical, PhysicalField, RowVersions};
use super::def::{Column, TableDef};
use super::dict_def::charset_of_collation;
use super::record::Layout;
use super::row_version;
use crate::rows::def::Charset;
use crate::sdi::SdiRecord;
use serde_json::Value;

/// Why the SDI gives no definition.
#[derive(Debug, thiserror::Error)]
pub enum SdiDefError {
    /// No table record (type 1) in the SDI.
    #[error("the SDI holds no table (only {0})")]
    NoTable(String),
    /// Several tables (a general tablespace) and none named.
    #[error("the SDI describes {0}: name one with --table")]
    TableNeeded(String),
    /// The named table is not there.
    #[error("the SDI describes no table {0:?} (it describes {1})")]
    NotFound(String, String),
    /// The JSON is not what the server writes.
    #[error("the SDI JSON of table record {id}: {why}")]
    Json {
        /// The record id.
        id: u64,
        /// What is missing or malformed.
        why: String,
    },
    /// Something dbio does not decode.
    #[error("table {table}: {why}")]
    Unsupported {
        /// The table.
        table: String,
        /// What.
        why: String,
    },
    /// The definition built does not map (a type dbio does not decode).
    #[error("table {table}: {err}")]
    Def {
        /// The table.
        table: String,
        /// Why.
        err: DefError,
    },
}

/// The definition read from the SDI.
#[derive(Clone, Debug)]
pub struct SdiDef {
    /// The table (its `create_sql` the CREATE TABLE built from the SDI).
    pub def: TableDef,
    /// The database (`schema_ref`).
    pub schema: String,
    /// The clustered index's id.
    pub index_id: u64,
    /// Its tablespace id.
    pub space_id: u32,
    /// Its root page.
    pub root: u32,
}

/// The value of `key` in a `k=v;k=v;` string.
pub fn private_value<'a>(s: &'a str, key: &str) -> Option<&'a str> {
    s.split(';')
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
}

/// The charset of a MySQL 8 collation id (its utf8mb4 `_0900_` collations are 255-323).
pub fn charset_of_mysql_collation(id: u32) -> Option<Charset> {
    match id {
        255..=323 => Some(Charset::Utf8mb4),
        76 => Some(Charset::Utf8mb3),
        _ => charset_of_collation(id),
    }
}

/// The name of the commonest MySQL 8 collations (for the CREATE TABLE text).
fn collation_name(id: u32) -> Option<&'static str> {
    Some(match id {
        8 => "latin1_swedish_ci",
        47 => "latin1_bin",
        11 => "ascii_general_ci",
        65 => "ascii_bin",
        33 => "utf8mb3_general_ci",
        83 => "utf8mb3_bin",
        192 => "utf8mb3_unicode_ci",
        45 => "utf8mb4_general_ci",
        46 => "utf8mb4_bin",
        224 => "utf8mb4_unicode_ci",
        255 => "utf8mb4_0900_ai_ci",
        309 => "utf8mb4_0900_bin",
        63 => "binary",
        _ => return None,
    })
}

/// The table names (`db/name`) of the table records.
fn names(tables: &[(u64, Value)]) -> String {
    tables
        .iter()
        .map(|(_, o)| {
            format!(
                "{}/{}",
                o["schema_ref"].as_str().unwrap_or("?"),
                o["name"].as_str().unwrap_or("?")
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The definition of the table in `records` (`table`: its name, `db/name` or `name`, when the
/// SDI describes several); `source` names where it came from.
pub fn table_def(
    records: &[SdiRecord],
    table: Option<&str>,
    source: &str,
) -> Result<SdiDef, SdiDefError> {
    let mut tables = Vec::new();
    for r in records.iter().filter(|r| r.sdi_type == 1) {
        let v: Value = serde_json::from_str(&r.json).map_err(|e| SdiDefError::Json {
            id: r.id,
            why: e.to_string(),
        })?;
        if v["dd_object_type"] != "Table" {
            continue;
        }
        tables.push((r.id, v["dd_object"].clone()));
    }
    if tables.is_empty() {
        let kinds: Vec<String> = records
            .iter()
            .map(|r| format!("a record of type {}", r.sdi_type))
            .collect();
        return Err(SdiDefError::NoTable(if kinds.is_empty() {
            "nothing".into()
        } else {
            kinds.join(", ")
        }));
    }
    let (id, obj) = match table {
        None if tables.len() == 1 => tables.swap_remove(0),
        None => return Err(SdiDefError::TableNeeded(names(&tables))),
        Some(want) => {
            let list = names(&tables);
            let (db, name) = match want.split_once('/') {
                Some((d, n)) => (Some(d), n),
                None => (None, want),
            };
            let i = tables
                .iter()
                .position(|(_, o)| {
                    o["name"]
                        .as_str()
                        .is_some_and(|n| n.eq_ignore_ascii_case(name))
                        && db.is_none_or(|d| {
                            o["schema_ref"]
                                .as_str()
                                .is_some_and(|s| s.eq_ignore_ascii_case(d))
                        })
                })
                .ok_or_else(|| SdiDefError::NotFound(want.to_string(), list))?;
            tables.swap_remove(i)
        }
    };
    convert(id, &obj, source)
}

/// One column of the dd object, as used here.
struct DdColumn<'a> {
    name: &'a str,
    ty: u64,
    nullable: bool,
    hidden: u64,
    sql_type: &'a str,
    collation: u32,
    char_length: u64,
    is_virtual: bool,
    generation: &'a str,
    private: &'a str,
    datetime_precision: u64,
    numeric_precision: u64,
    numeric_scale: u64,
    n_elements: usize,
}

fn columns(id: u64, obj: &Value) -> Result<Vec<DdColumn<'_>>, SdiDefError> {
    let bad = |why: String| SdiDefError::Json { id, why };
    let cols = obj["columns"]
        .as_array()
        .ok_or_else(|| bad("no \"columns\" array".into()))?;
    cols.iter()
        .enumerate()
        .map(|(i, c)| {
            let s = |k: &str| {
                c[k].as_str()
                    .ok_or_else(|| bad(format!("column {i}: no string \"{k}\"")))
            };
            let n = |k: &str| {
                c[k].as_u64()
                    .ok_or_else(|| bad(format!("column {i}: no number \"{k}\"")))
            };
            Ok(DdColumn {
                name: s("name")?,
                ty: n("type")?,
                nullable: c["is_nullable"].as_bool().unwrap_or(false),
                hidden: n("hidden")?,
                sql_type: s("column_type_utf8")?,
                collation: n("collation_id")? as u32,
                char_length: n("char_length")?,
                is_virtual: c["is_virtual"].as_bool().unwrap_or(false),
                generation: c["generation_expression_utf8"].as_str().unwrap_or(""),
                private: c["se_private_data"].as_str().unwrap_or(""),
                datetime_precision: c["datetime_precision"].as_u64().unwrap_or(0),
                numeric_precision: c["numeric_precision"].as_u64().unwrap_or(0),
                numeric_scale: c["numeric_scale"].as_u64().unwrap_or(0),
                n_elements: c["elements"].as_array().map_or(0, Vec::len),
            })
        })
        .collect()
}

/// dd column types holding characters (a charset applies unless the collation is binary).
fn is_string_type(ty: u64) -> bool {
    matches!(ty, 16 | 22..=29)
}

/// Quotes an identifier with backticks.
fn q(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

fn convert(id: u64, obj: &Value, source: &str) -> Result<SdiDef, SdiDefError> {
    let name = obj["name"]
        .as_str()
        .ok_or_else(|| SdiDefError::Json {
            id,
            why: "no table name".into(),
        })?
        .to_string();
    let schema = obj["schema_ref"].as_str().unwrap_or("").to_string();
    let unsupported = |why: String| SdiDefError::Unsupported {
        table: name.clone(),
        why,
    };
    let cols = columns(id, obj)?;
    // Instant ADD/DROP COLUMN: records of several layouts (row_versions below).
    let table_private = obj["se_private_data"].as_str().unwrap_or("");
    let instant = private_value(table_private, "instant_col").is_some()
        || cols.iter().any(|c| {
            private_value(c.private, "version_added").is_some()
                || private_value(c.private, "version_dropped").is_some()
        });
    // The columns the record holds and the user sees: visible (1) and INVISIBLE (4); SQL
    // hidden ones (3, functional index parts) are virtual; of the SE's (2), FTS_DOC_ID is
    // in the record.
    let mut kept = Vec::new(); // (dd index, is FTS_DOC_ID)
    for (i, c) in cols.iter().enumerate() {
        match c.hidden {
            1 | 4 => kept.push((i, false)),
            2 if c.name == "FTS_DOC_ID" => kept.push((i, true)),
            2 | 3 => {}
            h => return Err(unsupported(format!("column {} is hidden={h}", c.name))),
        }
    }
    let ours = |dd: usize| kept.iter().position(|k| k.0 == dd);
    // The clustered index: PRIMARY, else the first UNIQUE (promoted: all NOT NULL).
    let indexes = obj["indexes"].as_array().cloned().unwrap_or_default();
    let clustered = indexes
        .iter()
        .find(|x| x["type"] == 1)
        .or_else(|| indexes.iter().find(|x| x["type"] == 2))
        .ok_or_else(|| unsupported("no PRIMARY or UNIQUE index in the SDI".into()))?;
    let elements = |x: &Value| -> Vec<(usize, u64)> {
        x["elements"]
            .as_array()
            .map(|es| {
                es.iter()
                    .filter(|e| e["hidden"] == false)
                    .filter_map(|e| {
                        Some((e["column_opx"].as_u64()? as usize, e["length"].as_u64()?))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut primary_key = Vec::new();
    for (opx, len) in elements(clustered) {
        let c = cols
            .get(opx)
            .ok_or_else(|| unsupported(format!("the clustered index names column #{opx}")))?;
        if c.name == "DB_ROW_ID" && c.hidden == 2 {
            primary_key.clear();
            break;
        }
        if is_string_type(c.ty) && len < c.char_length {
            return Err(unsupported(format!(
                "the clustered index holds a prefix of column {} ({len} of {} bytes), which dbio does not decode",
                c.name, c.char_length
            )));
        }
        primary_key.push(ours(opx).ok_or_else(|| {
            unsupported(format!("the clustered key column {} is hidden", c.name))
        })?);
    }
    let private = clustered["se_private_data"].as_str().unwrap_or("");
    let num = |k: &str| private_value(private, k).and_then(|v| v.parse::<u64>().ok());
    let (Some(index_id), Some(space_id), Some(root)) = (num("id"), num("space_id"), num("root"))
    else {
        return Err(SdiDefError::Json {
            id,
            why: format!(
                "the clustered index's se_private_data {private:?} has no id, space_id and root"
            ),
        });
    };

    // The statement parsed (plain columns) and the one shown (as SHOW CREATE TABLE would).
    let mut parsed = format!("CREATE TABLE {} (\n", q(&name));
    let mut shown = parsed.clone();
    for (n, &(i, fts)) in kept.iter().enumerate() {
        let c = &cols[i];
        let sep = if n + 1 < kept.len() { ",\n" } else { "\n" };
        let (ty, cs) = if fts {
            ("bigint unsigned".to_string(), None)
        } else {
            let ty = match c.ty {
                // GEOMETRY and its kinds: WKB with an SRID, stored as a BLOB.
                30 => "longblob".to_string(),
                _ => c.sql_type.to_string(),
            };
            let cs = if is_string_type(c.ty) && c.collation != 63 {
                Some(charset_of_mysql_collation(c.collation).ok_or_else(|| {
                    unsupported(format!(
                        "column {}: collation id {} is of a character set dbio does not decode (it reads latin1, ascii, utf8mb3, utf8mb4 and binary)",
                        c.name, c.collation
                    ))
                })?)
            } else {
                None
            };
            (ty, cs)
        };
        let null = if c.nullable { "" } else { " NOT NULL" };
        let cs_sql = cs.map_or(String::new(), |cs| format!(" CHARACTER SET {}", cs.name()));
        parsed.push_str(&format!("  {} {ty}{cs_sql}{null}{sep}", q(c.name)));
        if fts {
            continue;
        }
        let collate = match (cs, collation_name(c.collation)) {
            (Some(_), Some(n)) => format!(" COLLATE {n}"),
            _ => String::new(),
        };
        let generated = if c.generation.is_empty() {
            String::new()
        } else {
            format!(
                " GENERATED ALWAYS AS ({}) {}",
                c.generation,
                if c.is_virtual { "VIRTUAL" } else { "STORED" }
            )
        };
        let invisible = if c.hidden == 4 {
            " /*!80023 INVISIBLE */"
        } else {
            ""
        };
        shown.push_str(&format!(
            "  {} {}{cs_sql}{collate}{generated}{null}{invisible},\n",
            q(c.name),
            c.sql_type
        ));
    }
    parsed.push(')');
    // Keys, for the reader.
    let mut keys = Vec::new();
    for x in &indexes {
        let els = elements(x);
        if els.is_empty() || x["hidden"] == true {
            continue;
        }
        let parts: Vec<String> = els
            .iter()
            .filter_map(|&(opx, len)| {
                let c = cols.get(opx)?;
                let whole = matches!(x["type"].as_u64(), Some(4 | 5));
                let prefix = if !whole && is_string_type(c.ty) && len < c.char_length {
                    let mb = charset_of_mysql_collation(c.collation).map_or(1, |cs| cs.mbmaxlen())
                        as u64;
                    format!("({})", len / mb)
                } else {
                    String::new()
                };
                Some(format!("{}{prefix}", q(c.name)))
            })
            .collect();
        let xname = x["name"].as_str().unwrap_or("");
        let kind = match x["type"].as_u64() {
            Some(1) => {
                keys.push(format!("  PRIMARY KEY ({})", parts.join(",")));
                continue;
            }
            Some(2) => "UNIQUE KEY",
            Some(4) => "FULLTEXT KEY",
            Some(5) => "SPATIAL KEY",
            _ => "KEY",
        };
        keys.push(format!("  {kind} {} ({})", q(xname), parts.join(",")));
    }
    if keys.is_empty() {
        // No key: drop the last column's comma.
        shown.truncate(shown.len() - 2);
        shown.push('\n');
    } else {
        shown.push_str(&keys.join(",\n"));
        shown.push('\n');
    }
    let tcoll = obj["collation_id"].as_u64().unwrap_or(0) as u32;
    shown.push_str(") ENGINE=InnoDB");
    if let Some(cs) = charset_of_mysql_collation(tcoll) {
        shown.push_str(&format!(" DEFAULT CHARSET={}", cs.name()));
        if let Some(n) = collation_name(tcoll) {
            shown.push_str(&format!(" COLLATE={n}"));
        }
    }

    let mut def = def::parse(&parsed, None, source).map_err(|err| SdiDefError::Def {
        table: name.clone(),
        err,
    })?;
    def.name = name.clone();
    def.primary_key = primary_key;
    def.create_sql = shown;
    def.source = source.to_string();
    for (col, &(i, fts)) in def.columns.iter_mut().zip(&kept) {
        let c = &cols[i];
        if fts {
            // In the record, not written: the server makes it again.
            col.generated = Some(true);
            continue;
        }
        if !c.generation.is_empty() {
            col.generated = Some(!c.is_virtual);
        }
        let fsp = c.datetime_precision.min(6) as u8;
        let old = match c.ty {
            // sql/dd/types/column.h enum_column_types: 7 is TYPE_NULL, 8 the old TIMESTAMP.
            8 => Some(OldTemporal::Timestamp),
            12 => Some(OldTemporal::Time),
            13 => Some(OldTemporal::Datetime),
            _ => None,
        };
        if let Some(old) = old {
            col.ty = ColType::OldTemporal { old, fsp };
        }
    }
    if instant {
        let rv = row_versions(&cols, &kept, &def, table_private).map_err(&unsupported)?;
        row_version::layout(&def, &Layout::clustered(&def), &rv).map_err(|why| {
            unsupported(format!(
                "the instant ADD/DROP COLUMN facts of the SDI do not fit: {why}"
            ))
        })?;
        def.row_versions = Some(Box::new(rv));
    }
    Ok(SdiDef {
        def,
        schema,
        index_id,
        space_id: space_id as u32,
        root: root as u32,
    })
}

/// The [`RowVersions`] of a table with instant ADD/DROP COLUMN: `cols` the dd columns,
/// `kept` those of `def` (dd index, is FTS_DOC_ID).
fn row_versions(
    cols: &[DdColumn<'_>],
    kept: &[(usize, bool)],
    def: &TableDef,
    table_private: &str,
) -> Result<RowVersions, String> {
    let num = |c: &DdColumn<'_>, k: &str| -> Result<Option<u64>, String> {
        private_value(c.private, k)
            .map(|v| {
                v.parse::<u64>()
                    .map_err(|_| format!("column {}: {k}={v:?} is not a number", c.name))
            })
            .transpose()
    };
    let version = |c: &DdColumn<'_>, k: &str| -> Result<u8, String> {
        match num(c, k)? {
            None => Ok(0),
            Some(v) if v <= 255 => Ok(v as u8),
            Some(v) => Err(format!(
                "column {}: {k}={v} is not a row version (0-255)",
                c.name
            )),
        }
    };
    // (physical_pos, field) of every field of the clustered index.
    let mut fields: Vec<(Option<u64>, PhysicalField)> = Vec::new();
    for (i, c) in cols.iter().enumerate() {
        let what = match (c.hidden, c.name) {
            (2, "DB_ROW_ID") if def.has_row_id() => Physical::RowId,
            (2, "DB_TRX_ID") => Physical::TrxId,
            (2, "DB_ROLL_PTR") => Physical::RollPtr,
            _ => match kept.iter().position(|k| k.0 == i) {
                Some(k) if def.columns[k].in_record() => Physical::Column(k),
                Some(_) => continue,
                None if private_value(c.private, "version_dropped").is_some() => {
                    Physical::Dropped(dropped_column(c)?)
                }
                None => continue,
            },
        };
        fields.push((
            num(c, "physical_pos")?,
            PhysicalField {
                what,
                added: version(c, "version_added")?,
                dropped: version(c, "version_dropped")?,
            },
        ));
    }
    let fields: Vec<PhysicalField> = if fields.iter().all(|f| f.0.is_some()) {
        fields.sort_by_key(|f| f.0);
        fields.into_iter().map(|f| f.1).collect()
    } else if fields.iter().all(|f| f.0.is_none()) {
        // 8.0.12-8.0.28: no physical positions; the index's order, added columns last.
        let base = Layout::clustered(def);
        base.fields
            .iter()
            .map(|bf| {
                let what = match (bf.col, bf.sys) {
                    (Some(c), _) => Physical::Column(c),
                    (None, Some(super::record::Sys::RowId)) => Physical::RowId,
                    (None, Some(super::record::Sys::TrxId)) => Physical::TrxId,
                    _ => Physical::RollPtr,
                };
                fields
                    .iter()
                    .find(|f| f.1.what == what)
                    .map(|f| f.1.clone())
                    .ok_or_else(|| format!("the SDI has no column for {what:?} of the index"))
            })
            .collect::<Result<_, _>>()?
    } else {
        return Err("some columns have a physical_pos and others none".into());
    };
    let head = if def.has_row_id() {
        1
    } else {
        def.primary_key.len()
    } + 2;
    let n_core = match private_value(table_private, "instant_col") {
        Some(v) => {
            // Records without a flag hold the user columns there before the first ADD.
            let n: usize = v
                .parse()
                .map_err(|_| format!("instant_col={v:?} is not a number"))?;
            (head + n)
                .checked_sub(def.primary_key.len())
                .ok_or_else(|| format!("instant_col={n} is fewer than the key's columns"))?
        }
        None => {
            let n = fields.iter().take_while(|f| f.added == 0).count();
            if fields[n..].iter().any(|f| f.added == 0) {
                return Err(
                    "a column there from the start is after one added instantly (physical_pos)"
                        .into(),
                );
            }
            n
        }
    };
    let defaults = kept
        .iter()
        .map(|&(i, _)| {
            let c = &cols[i];
            match private_value(c.private, "default") {
                Some(hex) if private_value(c.private, "default_null").is_none() => {
                    crate::crypt::decode_hex(hex).map(Some).ok_or_else(|| {
                        format!("column {}: default={hex:?} is not hexadecimal", c.name)
                    })
                }
                _ => Ok(None),
            }
        })
        .collect::<Result<_, String>>()?;
    Ok(RowVersions {
        fields,
        n_core,
        defaults,
    })
}

/// A column dropped with ALGORITHM=INSTANT, whose `column_type_utf8` the server leaves empty:
/// its type from the dd type, lengths and charset, as far as the record's layout needs it.
fn dropped_column(c: &DdColumn<'_>) -> Result<Column, String> {
    let cs = if is_string_type(c.ty) && c.collation != 63 {
        Some(charset_of_mysql_collation(c.collation).ok_or_else(|| {
            format!(
                "dropped column {}: collation id {} is of a character set dbio does not decode",
                c.name, c.collation
            )
        })?)
    } else {
        None
    };
    let chars = |bytes: u64| bytes / cs.map_or(1, |cs| cs.mbmaxlen() as u64).max(1);
    let fsp = c.datetime_precision.min(6);
    let sql = match c.ty {
        2 => "tinyint".to_string(),
        3 => "smallint".into(),
        4 => "int".into(),
        9 => "bigint".into(),
        10 => "mediumint".into(),
        5 => "float".into(),
        6 => "double".into(),
        11 | 15 => "date".into(),
        14 => "year".into(),
        17 => format!("bit({})", c.numeric_precision.max(1)),
        18 => format!("timestamp({fsp})"),
        19 => format!("datetime({fsp})"),
        20 => format!("time({fsp})"),
        21 => format!("decimal({},{})", c.numeric_precision, c.numeric_scale),
        16 | 28 if cs.is_none() => format!("varbinary({})", c.char_length),
        16 | 28 => format!("varchar({})", chars(c.char_length)),
        29 if cs.is_none() => format!("binary({})", c.char_length),
        29 => format!("char({})", chars(c.char_length)),
        22 | 23 if c.n_elements > 0 => {
            let els: Vec<String> = (0..c.n_elements).map(|i| format!("'{i}'")).collect();
            format!(
                "{}({})",
                if c.ty == 22 { "enum" } else { "set" },
                els.join(",")
            )
        }
        24..=27 | 30 | 31 => "longblob".into(),
        t => {
            return Err(format!(
                "dropped column {}: dd type {t}, whose length in the records dbio does not know",
                c.name
            ))
        }
    };
    let cs_sql = cs.map_or(String::new(), |cs| format!(" CHARACTER SET {}", cs.name()));
    let null = if c.nullable { "" } else { " NOT NULL" };
    let stmt = format!("CREATE TABLE t (`x` {sql}{cs_sql}{null})");
    let mut d = def::parse(&stmt, None, "the SDI")
        .map_err(|e| format!("dropped column {}: {sql}: {e}", c.name))?;
    let mut col = d.columns.remove(0);
    col.name = c.name.to_string();
    Ok(col)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dd types of the pre-5.6 temporal formats (enum_column_types: 8 TIMESTAMP, 12
    /// TIME, 13 DATETIME) give the old formats; 18-20 (TIMESTAMP2, DATETIME2, TIME2) and 7
    /// (TYPE_NULL) do not. On percona-parser's real idx_fixture SDI with column `c` retyped.
    #[test]
    fn old_temporal_dd_types() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/innodb/mysql-real/percona-parser/secondary_index_sdi.json"
        );
        let all: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let table = all
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["object"]["dd_object_type"] == "Table")
            .unwrap();
        let id = table["id"].as_u64().unwrap_or(1);
        for (ty, utf8, want) in [
            (8, "timestamp", Some(OldTemporal::Timestamp)),
            (12, "time", Some(OldTemporal::Time)),
            (13, "datetime", Some(OldTemporal::Datetime)),
            (18, "timestamp", None),
            (19, "datetime", None),
            (20, "time", None),
            (7, "int", None),
        ] {
            let mut obj = table["object"]["dd_object"].clone();
            let c = obj["columns"]
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .find(|c| c["name"] == "c")
                .unwrap();
            c["type"] = ty.into();
            c["column_type_utf8"] = utf8.into();
            let d = convert(id, &obj, "test").unwrap();
            let col = d.def.columns.iter().find(|c| c.name == "c").unwrap();
            let got = match col.ty {
                ColType::OldTemporal { old, .. } => Some(old),
                _ => None,
            };
            assert_eq!(got, want, "dd type {ty}");
        }
    }

    #[test]
    fn private_values() {
        let s = "id=1343;root=4;space_id=235;table_id=1720;trx_id=1891370;";
        assert_eq!(private_value(s, "id"), Some("1343"));
        assert_eq!(private_value(s, "space_id"), Some("235"));
        assert_eq!(private_value(s, "root"), Some("4"));
        assert_eq!(private_value(s, "instant_col"), None);
    }
}

/// Why no definition was read from the SDI pages found in the sources.
#[derive(Debug, thiserror::Error)]
pub enum FoundSdiError {
    /// No SDI page among the pages found.
    #[error("no SDI pages in the sources (SDI pages are in MySQL 8 tablespaces only)")]
    NoSdi,
    /// The SDI of a tablespace does not read.
    #[error("the SDI of tablespace {space}: {err}")]
    Read {
        /// The tablespace id.
        space: u32,
        /// Why.
        err: crate::sdi::SdiError,
    },
    /// It reads but gives no definition.
    #[error("the SDI of tablespace {space}: {err}")]
    Def {
        /// The tablespace id.
        space: u32,
        /// Why.
        err: SdiDefError,
    },
    /// Several tablespaces with an SDI and neither a space id nor a table named.
    #[error("the sources hold the SDI of several tablespaces ({0}): choose one with --space-id or --table")]
    Several(String),
}

/// The definition from the SDI pages among the pages `found` in `sources` (an .ibd, an image,
/// a PAGES_DIR): of tablespace `space` when given, of the table named `table` when given,
/// else of the only tablespace with SDI pages. The newest copy of each page is read.
pub fn from_found(
    found: &[(usize, crate::scan::FoundPage)],
    sources: &[crate::recover::Source],
    space: Option<u32>,
    table: Option<&str>,
) -> Result<SdiDef, FoundSdiError> {
    use crate::page::page_type;
    use std::collections::{BTreeMap, HashMap};
    // (space, page) -> newest copy; per space, the SDI pages (page, level, no neighbours).
    // (lsn, index in `found`)
    type Copy = (u64, usize);
    let mut pages: HashMap<(u32, u32), Copy> = HashMap::new();
    // A page as the tablespace holds it: decrypted when the scanner found it encrypted,
    // inflated when ROW_FORMAT=COMPRESSED.
    let page = |i: usize| -> Result<Vec<u8>, String> {
        let (src, f) = &found[i];
        let size = f.page_size as usize;
        let mut buf = vec![0u8; size];
        match f.read(&sources[*src].file, &mut buf) {
            Ok(n) if n == size && f.zip => crate::sdi::uncompressed(buf),
            Ok(n) if n == size => Ok(buf),
            Ok(n) => Err(format!("short read ({n} of {size} bytes)")),
            Err(e) => Err(format!("read error: {e}")),
        }
    };
    let mut sdi: BTreeMap<u32, Vec<(u32, u16, bool)>> = BTreeMap::new();
    for (i, (_, f)) in found.iter().enumerate() {
        let t = f.page_type;
        if t != page_type::SDI && t != crate::sdi::SDI_BLOB {
            continue;
        }
        if space.is_some_and(|s| s != f.space_id) {
            continue;
        }
        let key = (f.space_id, f.page_no);
        let new = (f.lsn, i);
        match pages.get(&key) {
            Some(old) if old.0 >= f.lsn => {}
            _ => {
                pages.insert(key, new);
            }
        }
    }
    for (&(sp, page_no), &(_, i)) in &pages {
        let Ok(head) = page(i) else {
            continue;
        };
        if head.len() < 74 || crate::page::be16(&head, 24) != page_type::SDI {
            continue;
        }
        let alone =
            crate::page::be32(&head, 8) == u32::MAX && crate::page::be32(&head, 12) == u32::MAX;
        sdi.entry(sp)
            .or_default()
            .push((page_no, crate::page::be16(&head, 64), alone));
    }
    let mut found_defs = Vec::new();
    let mut last_err = None;
    if sdi.is_empty() {
        // The scanner did not keep them (compressed SDI pages of ROW_FORMAT=COMPRESSED
        // tablespaces): each source that is an .ibd read by page number from its SDI root.
        for s in sources {
            let Ok(recs) = crate::sdi::read_file(&s.path) else {
                continue;
            };
            let source = format!("SDI of {}", s.path.display());
            match table_def(&recs, table, &source) {
                Ok(d) if space.is_none_or(|sp| sp == d.space_id) => found_defs.push(d),
                Ok(_) | Err(SdiDefError::NotFound(..)) => {}
                Err(err) => {
                    last_err = Some(FoundSdiError::Def {
                        space: space.unwrap_or(0),
                        err,
                    })
                }
            }
        }
    }
    let several = sdi.len() > 1;
    for (sp, list) in sdi {
        let Some(root) = crate::sdi::find_root(list) else {
            last_err = Some(FoundSdiError::Read {
                space: sp,
                err: crate::sdi::SdiError::Page {
                    page_no: 0,
                    why: "no SDI root page (a page without neighbours) was found".into(),
                },
            });
            continue;
        };
        let get = |page_no: u32| -> Result<Vec<u8>, String> {
            let &(_, i) = pages
                .get(&(sp, page_no))
                .ok_or_else(|| "not found in the sources".to_string())?;
            page(i)
        };
        let recs = match crate::sdi::read(root, &get) {
            Ok(r) => r,
            Err(err) => {
                last_err = Some(FoundSdiError::Read { space: sp, err });
                continue;
            }
        };
        let source = format!("SDI of tablespace {sp}");
        match table_def(&recs, table, &source) {
            Ok(d) => found_defs.push(d),
            Err(SdiDefError::NotFound(..)) if several => {}
            Err(err) => last_err = Some(FoundSdiError::Def { space: sp, err }),
        }
    }
    match found_defs.len() {
        1 => Ok(found_defs.swap_remove(0)),
        0 => Err(last_err.unwrap_or(FoundSdiError::NoSdi)),
        _ => Err(FoundSdiError::Several(
            found_defs
                .iter()
                .map(|d| format!("{} = {}/{}", d.space_id, d.schema, d.def.name))
                .collect::<Vec<_>>()
                .join(", "),
        )),
    }
}
