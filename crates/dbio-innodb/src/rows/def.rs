//! A table definition read from a CREATE TABLE statement (parsed with sqlparser's MySQL
//! dialect): columns with their storage types, character sets and nullability, and the
//! clustered index InnoDB builds from them (PRIMARY KEY, else the first UNIQUE key on NOT NULL
//! columns, else the hidden DB_ROW_ID).

use crate::encode::IntType;
use serde::Serialize;
use sqlparser::ast::{
    CharacterLength, ColumnOption, CreateTableOptions, DataType, EnumMember, ExactNumberInfo, Expr,
    SqlOption, Statement, TableConstraint,
};
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;

/// Why a CREATE TABLE statement cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DefError {
    /// The SQL does not parse.
    #[error("the table definition does not parse: {0}")]
    Parse(String),
    /// No CREATE TABLE statement in the text.
    #[error("no CREATE TABLE statement found")]
    NoCreateTable,
    /// Several CREATE TABLE statements and no `--table` to pick one.
    #[error("{0} CREATE TABLE statements ({1}): name the one to use")]
    Ambiguous(usize, String),
    /// The named table is not in the text.
    #[error("no CREATE TABLE for {0:?} (the statements define {1})")]
    NotFound(String, String),
    /// A column type dbio does not decode.
    #[error("column {column}: type {ty} is not supported ({why})")]
    Unsupported {
        /// The column.
        column: String,
        /// Its type as written.
        ty: String,
        /// What is missing.
        why: String,
    },
    /// A character set dbio does not decode.
    #[error("{whose}: character set or collation {name} is not supported (dbio reads latin1, ascii, utf8mb3, utf8mb4 and binary)")]
    Charset {
        /// The table or the column.
        whose: String,
        /// The name given.
        name: String,
    },
    /// A key names a column that is not in the table.
    #[error("key column {0:?} is not a column of the table")]
    KeyColumn(String),
}

/// A character set: how many bytes a character takes at most, and how to read the bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Charset {
    /// One byte per character, ISO-8859-1 as MariaDB's cp1252 variant.
    Latin1,
    /// 7-bit ASCII.
    Ascii,
    /// UTF-8 of the Basic Multilingual Plane, at most 3 bytes.
    Utf8mb3,
    /// UTF-8, at most 4 bytes.
    Utf8mb4,
    /// Bytes (BINARY, VARBINARY, BLOB).
    Binary,
}

impl Charset {
    /// Parses a charset or collation name (`utf8mb4_general_ci` names utf8mb4).
    pub fn from_name(name: &str) -> Option<Charset> {
        let n = name.trim_matches(['`', '\'', '"']).to_ascii_lowercase();
        let base = n.split('_').next().unwrap_or("");
        Some(match base {
            "latin1" => Charset::Latin1,
            "ascii" => Charset::Ascii,
            "utf8" | "utf8mb3" => Charset::Utf8mb3,
            "utf8mb4" => Charset::Utf8mb4,
            "binary" => Charset::Binary,
            _ => return None,
        })
    }
    /// Maximum bytes per character.
    pub fn mbmaxlen(self) -> u32 {
        match self {
            Charset::Utf8mb3 => 3,
            Charset::Utf8mb4 => 4,
            _ => 1,
        }
    }
    /// Name as the server spells it.
    pub fn name(self) -> &'static str {
        match self {
            Charset::Latin1 => "latin1",
            Charset::Ascii => "ascii",
            Charset::Utf8mb3 => "utf8mb3",
            Charset::Utf8mb4 => "utf8mb4",
            Charset::Binary => "binary",
        }
    }
}

/// How a column is stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ColType {
    /// TINYINT..BIGINT.
    Int {
        /// Width.
        #[serde(skip)]
        ty: IntType,
        /// UNSIGNED.
        unsigned: bool,
    },
    /// DECIMAL(P,S).
    Decimal {
        /// Digits.
        precision: u32,
        /// Fraction digits.
        scale: u32,
    },
    /// FLOAT (4 bytes); FLOAT(M,D) prints D decimals.
    Float {
        /// D of FLOAT(M,D).
        decimals: Option<u8>,
    },
    /// DOUBLE (8 bytes); DOUBLE(M,D) prints D decimals.
    Double {
        /// D of DOUBLE(M,D).
        decimals: Option<u8>,
    },
    /// BIT(N).
    Bit {
        /// Bits.
        bits: u32,
    },
    /// YEAR (1 byte).
    Year,
    /// DATE (3 bytes).
    Date,
    /// DATETIME(fsp).
    Datetime {
        /// Fraction digits.
        fsp: u8,
    },
    /// TIMESTAMP(fsp).
    Timestamp {
        /// Fraction digits.
        fsp: u8,
    },
    /// TIME(fsp).
    Time {
        /// Fraction digits.
        fsp: u8,
    },
    /// DATETIME/TIME/TIMESTAMP(fsp) in the format before MySQL 5.6 (MariaDB with
    /// mysql56_temporal_format=OFF; MariaDB 5.3's for fsp > 0): see the `temporal` module.
    OldTemporal {
        /// Which type.
        old: OldTemporal,
        /// Fraction digits.
        fsp: u8,
    },
    /// CHAR(N) or BINARY(N) (charset binary).
    Char {
        /// Characters.
        len: u32,
        /// Charset.
        charset: Charset,
    },
    /// VARCHAR(N) or VARBINARY(N) (charset binary).
    Varchar {
        /// Characters.
        len: u32,
        /// Charset.
        charset: Charset,
    },
    /// TEXT/BLOB family and JSON (charset binary for BLOB).
    Blob {
        /// Largest value in bytes (255 for TINYBLOB, ...).
        max_bytes: u64,
        /// Charset.
        charset: Charset,
    },
    /// ENUM: 1 or 2 bytes.
    Enum {
        /// Members.
        values: Vec<String>,
    },
    /// SET: 1, 2, 3, 4 or 8 bytes.
    Set {
        /// Members.
        values: Vec<String>,
    },
}

impl ColType {
    /// Stored bytes of a fixed-size column in a COMPACT/DYNAMIC record; `None` for a
    /// variable-length one (VARCHAR, BLOB, and CHAR in a multi-byte charset).
    pub fn fixed_len(&self) -> Option<usize> {
        Some(match self {
            ColType::Int { ty, .. } => ty.width(),
            ColType::Decimal { precision, scale } => decimal_bytes(*precision, *scale),
            ColType::Float { .. } => 4,
            ColType::Double { .. } => 8,
            ColType::Bit { bits } => bits.div_ceil(8) as usize,
            ColType::Year => 1,
            ColType::Date => 3,
            ColType::Datetime { fsp } => 5 + frac_len(*fsp),
            ColType::Timestamp { fsp } => 4 + frac_len(*fsp),
            ColType::Time { fsp } => 3 + frac_len(*fsp),
            ColType::OldTemporal { old, fsp } => old.len(*fsp),
            ColType::Char { len, charset } if charset.mbmaxlen() == 1 => *len as usize,
            ColType::Enum { values } => {
                if values.len() < 256 {
                    1
                } else {
                    2
                }
            }
            ColType::Set { values } => match values.len().div_ceil(8) {
                0 | 1 => 1,
                2 => 2,
                3 => 3,
                4 => 4,
                _ => 8,
            },
            _ => return None,
        })
    }

    /// Stored bytes in a REDUNDANT record, where CHAR is always fixed (N x mbmaxlen).
    pub fn redundant_fixed_len(&self) -> Option<usize> {
        match self {
            ColType::Char { len, charset } => Some((*len * charset.mbmaxlen()) as usize),
            t => t.fixed_len(),
        }
    }

    /// Largest stored value in bytes (InnoDB's col->len): decides 1- or 2-byte lengths.
    pub fn max_bytes(&self) -> u64 {
        match self {
            ColType::Char { len, charset } | ColType::Varchar { len, charset } => {
                *len as u64 * charset.mbmaxlen() as u64
            }
            ColType::Blob { max_bytes, .. } => *max_bytes,
            t => t.fixed_len().unwrap_or(0) as u64,
        }
    }

    /// BLOB/TEXT: lengths always take 2 bytes when above 127, and values may be off page.
    pub fn is_blob(&self) -> bool {
        matches!(self, ColType::Blob { .. })
    }
}

/// Which temporal type in the format before MySQL 5.6 (the `temporal` module).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OldTemporal {
    /// DATETIME.
    Datetime,
    /// TIME.
    Time,
    /// TIMESTAMP.
    Timestamp,
}

impl OldTemporal {
    /// Stored bytes with `fsp` fraction digits.
    pub fn len(self, fsp: u8) -> usize {
        let i = fsp.min(6) as usize;
        match self {
            OldTemporal::Datetime if fsp == 0 => 8,
            OldTemporal::Datetime => [5, 6, 6, 7, 7, 7, 8][i],
            OldTemporal::Time => [3, 4, 4, 5, 5, 5, 6][i],
            OldTemporal::Timestamp => [4, 5, 5, 6, 6, 6, 7][i],
        }
    }

    /// The SQL type name.
    pub fn name(self) -> &'static str {
        match self {
            OldTemporal::Datetime => "DATETIME",
            OldTemporal::Time => "TIME",
            OldTemporal::Timestamp => "TIMESTAMP",
        }
    }
}

/// Fraction bytes of a temporal type with `fsp` digits.
pub fn frac_len(fsp: u8) -> usize {
    (fsp as usize).div_ceil(2)
}

/// Bytes of DECIMAL(P,S): 4 per 9 digits, leftovers per [`crate::encode::DIG2BYTES`].
pub fn decimal_bytes(precision: u32, scale: u32) -> usize {
    let d = |n: u32| (n / 9) as usize * 4 + crate::encode::DIG2BYTES[(n % 9) as usize];
    d(precision - scale) + d(scale)
}

/// One column.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Column {
    /// Name.
    pub name: String,
    /// Storage type.
    #[serde(rename = "type")]
    pub ty: ColType,
    /// The type as the statement wrote it.
    pub sql_type: String,
    /// NULL allowed.
    pub nullable: bool,
    /// A generated column: `Some(true)` STORED (in the record), `Some(false)` VIRTUAL (not
    /// stored in the clustered index). Neither kind is written to the output: the server
    /// computes them when the rows are loaded.
    pub generated: Option<bool>,
}

impl Column {
    /// Whether the clustered index record holds the column.
    pub fn in_record(&self) -> bool {
        self.generated != Some(false)
    }
}

/// A table definition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TableDef {
    /// Table name as written (without the database).
    pub name: String,
    /// Columns in table order.
    pub columns: Vec<Column>,
    /// Clustered index key: column indexes in key order; empty = hidden DB_ROW_ID.
    pub primary_key: Vec<usize>,
    /// The statement's text, for the SQL output.
    pub create_sql: String,
    /// Where the definition came from (`--table-def FILE`, dictionary).
    pub source: String,
    /// MySQL 8's instant ADD/DROP COLUMN (from the SDI): the clustered index's fields as
    /// records of each row version hold them. `None` for every other definition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row_versions: Option<Box<RowVersions>>,
}

/// What a field of the clustered index holds, in [`RowVersions`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Physical {
    /// A column of the table (index into [`TableDef::columns`]).
    Column(usize),
    /// DB_ROW_ID.
    RowId,
    /// DB_TRX_ID.
    TrxId,
    /// DB_ROLL_PTR.
    RollPtr,
    /// A column dropped with ALGORITHM=INSTANT: still in the records written before the drop,
    /// never written out.
    Dropped(Column),
}

/// One field of the clustered index in [`RowVersions`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PhysicalField {
    /// What it holds.
    pub what: Physical,
    /// The row version that added it (`version_added`; 0: there from the start).
    pub added: u8,
    /// The row version that dropped it (`version_dropped`; 0: not dropped).
    pub dropped: u8,
}

/// MySQL 8 instant ADD/DROP COLUMN, as the SDI gives it: 8.0.29+ row versions (a record
/// flagged 0x40 holds its row version, and the columns of that version), and the instant ADD
/// of 8.0.12-8.0.28 (a record flagged 0x80 holds its number of fields; records without a flag
/// the fields before the first ADD).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RowVersions {
    /// The clustered index's fields in the order records hold them (`physical_pos`).
    pub fields: Vec<PhysicalField>,
    /// Fields of records without a flag: those before the first instant ADD.
    pub n_core: usize,
    /// The stored default (InnoDB's bytes; `None`: NULL) of each table column, for records
    /// written before the column was added.
    pub defaults: Vec<Option<Vec<u8>>>,
}

impl TableDef {
    /// Whether the clustered index is the hidden DB_ROW_ID.
    pub fn has_row_id(&self) -> bool {
        self.primary_key.is_empty()
    }
}

fn unsupported(column: &str, ty: &DataType, why: &str) -> DefError {
    DefError::Unsupported {
        column: column.to_string(),
        ty: ty.to_string(),
        why: why.to_string(),
    }
}

fn len_of(l: &Option<CharacterLength>) -> u32 {
    match l {
        Some(CharacterLength::IntegerLength { length, .. }) => *length as u32,
        Some(CharacterLength::Max) => 65535,
        None => 1,
    }
}

fn fsp_of(col: &str, ty: &DataType, p: Option<u64>) -> Result<u8, DefError> {
    match p {
        None => Ok(0),
        Some(n) if n <= 6 => Ok(n as u8),
        Some(_) => Err(unsupported(col, ty, "fractional seconds are 0..6")),
    }
}

fn decimal_of(col: &str, ty: &DataType, info: &ExactNumberInfo) -> Result<ColType, DefError> {
    let (p, s) = match info {
        ExactNumberInfo::None => (10, 0),
        ExactNumberInfo::Precision(p) => (*p as u32, 0),
        ExactNumberInfo::PrecisionAndScale(p, s) => (*p as u32, (*s).max(0) as u32),
    };
    if p == 0 || p > 65 || s > 38 || s > p {
        return Err(unsupported(
            col,
            ty,
            "DECIMAL(P,S) needs 1 <= P <= 65, S <= 38, S <= P",
        ));
    }
    Ok(ColType::Decimal {
        precision: p,
        scale: s,
    })
}

fn decimals_of(info: &ExactNumberInfo) -> Option<u8> {
    match info {
        ExactNumberInfo::PrecisionAndScale(_, s) => Some((*s).clamp(0, 30) as u8),
        _ => None,
    }
}

fn members(m: &[EnumMember]) -> Vec<String> {
    m.iter()
        .map(|e| match e {
            EnumMember::Name(s) | EnumMember::NamedValue(s, _) => s.clone(),
        })
        .collect()
}

/// Maps a parsed type to its storage; `charset` is the column's (or the table's default).
fn col_type(col: &str, ty: &DataType, charset: Charset) -> Result<ColType, DefError> {
    use DataType as D;
    let int = |ty: IntType, unsigned: bool| Ok(ColType::Int { ty, unsigned });
    let text = |max_bytes: u64| Ok(ColType::Blob { max_bytes, charset });
    let blob = |max_bytes: u64| {
        Ok(ColType::Blob {
            max_bytes,
            charset: Charset::Binary,
        })
    };
    match ty {
        D::TinyInt(_) => int(IntType::Tiny, false),
        D::TinyIntUnsigned(_) => int(IntType::Tiny, true),
        D::SmallInt(_) | D::Int2(_) => int(IntType::Small, false),
        D::SmallIntUnsigned(_) | D::Int2Unsigned(_) => int(IntType::Small, true),
        D::MediumInt(_) => int(IntType::Medium, false),
        D::MediumIntUnsigned(_) => int(IntType::Medium, true),
        D::Int(_) | D::Integer(_) | D::Int4(_) => int(IntType::Int, false),
        D::IntUnsigned(_) | D::IntegerUnsigned(_) | D::Int4Unsigned(_) => int(IntType::Int, true),
        D::BigInt(_) | D::Int8(_) => int(IntType::Big, false),
        D::BigIntUnsigned(_) | D::Int8Unsigned(_) => int(IntType::Big, true),
        D::Bool | D::Boolean => int(IntType::Tiny, false),
        D::Decimal(i) | D::Numeric(i) | D::Dec(i) | D::DecimalUnsigned(i) | D::DecUnsigned(i) => {
            decimal_of(col, ty, i)
        }
        D::Float(i) | D::FloatUnsigned(i) => match i {
            // FLOAT(p) with p > 24 is a DOUBLE; FLOAT(M,D) stays 4 bytes.
            ExactNumberInfo::Precision(p) if *p > 24 => Ok(ColType::Double { decimals: None }),
            _ => Ok(ColType::Float {
                decimals: decimals_of(i),
            }),
        },
        D::Double(i) | D::DoubleUnsigned(i) => Ok(ColType::Double {
            decimals: decimals_of(i),
        }),
        D::Real
        | D::RealUnsigned
        | D::DoublePrecision
        | D::DoublePrecisionUnsigned
        | D::Float8
        | D::Float64 => Ok(ColType::Double { decimals: None }),
        D::Float4 | D::Float32 => Ok(ColType::Float { decimals: None }),
        D::Bit(n) => {
            let bits = n.unwrap_or(1) as u32;
            if !(1..=64).contains(&bits) {
                return Err(unsupported(col, ty, "BIT(N) needs 1 <= N <= 64"));
            }
            Ok(ColType::Bit { bits })
        }
        D::Date => Ok(ColType::Date),
        D::Datetime(p) => Ok(ColType::Datetime {
            fsp: fsp_of(col, ty, *p)?,
        }),
        D::Timestamp(p, _) => Ok(ColType::Timestamp {
            fsp: fsp_of(col, ty, *p)?,
        }),
        D::Time(p, _) => Ok(ColType::Time {
            fsp: fsp_of(col, ty, *p)?,
        }),
        D::Char(l) | D::Character(l) => Ok(ColType::Char {
            len: len_of(l),
            charset,
        }),
        D::Varchar(l) | D::CharVarying(l) | D::CharacterVarying(l) | D::Nvarchar(l) => {
            if l.is_none() {
                return Err(unsupported(col, ty, "VARCHAR needs a length"));
            }
            Ok(ColType::Varchar {
                len: len_of(l),
                charset,
            })
        }
        D::Binary(n) => Ok(ColType::Char {
            len: n.unwrap_or(1) as u32,
            charset: Charset::Binary,
        }),
        D::Varbinary(n) => Ok(ColType::Varchar {
            len: match n {
                Some(sqlparser::ast::BinaryLength::IntegerLength { length }) => *length as u32,
                _ => return Err(unsupported(col, ty, "VARBINARY needs a length")),
            },
            charset: Charset::Binary,
        }),
        D::TinyText => text(255),
        D::Text => text(65535),
        D::MediumText => text((1 << 24) - 1),
        D::LongText | D::JSON => text(u32::MAX as u64),
        D::TinyBlob => blob(255),
        D::Blob(_) => blob(65535),
        D::MediumBlob => blob((1 << 24) - 1),
        D::LongBlob => blob(u32::MAX as u64),
        D::Enum(m, _) => {
            if m.is_empty() || m.len() > 65535 {
                return Err(unsupported(col, ty, "ENUM has 1..65535 members"));
            }
            Ok(ColType::Enum { values: members(m) })
        }
        D::Set(m) => {
            if m.is_empty() || m.len() > 64 {
                return Err(unsupported(col, ty, "SET has 1..64 members"));
            }
            Ok(ColType::Set { values: m.clone() })
        }
        D::Custom(name, args) => {
            let n = name.to_string().to_ascii_uppercase();
            match n.as_str() {
                "YEAR" => Ok(ColType::Year),
                "SERIAL" => int(IntType::Big, true),
                _ => Err(unsupported(
                    col,
                    ty,
                    &format!("unknown type {n}({})", args.join(",")),
                )),
            }
        }
        _ => Err(unsupported(
            col,
            ty,
            "dbio decodes integers, DECIMAL, FLOAT, DOUBLE, BIT, YEAR, DATE, DATETIME, TIMESTAMP, TIME, CHAR, VARCHAR, BINARY, VARBINARY, TEXT, BLOB, JSON, ENUM and SET",
        )),
    }
}

/// The charset of a charset or collation name; one dbio does not decode is an error naming
/// `whose` (the table or a column).
fn charset_named(n: &str, whose: &str) -> Result<Charset, DefError> {
    Charset::from_name(n).ok_or_else(|| DefError::Charset {
        whose: whose.to_string(),
        name: n.to_string(),
    })
}

fn ident_name(e: &Expr) -> Option<String> {
    match e {
        Expr::Identifier(i) => Some(i.value.clone()),
        Expr::CompoundIdentifier(v) => v.last().map(|i| i.value.clone()),
        // `col(10)`: a prefix key; InnoDB stores the prefix in the key but the whole column
        // after the system columns, which dbio does not model.
        _ => None,
    }
}

fn option_value(o: &SqlOption) -> Option<(String, String)> {
    match o {
        SqlOption::KeyValue { key, value } => Some((
            key.value.to_ascii_uppercase(),
            value.to_string().trim_matches(['\'', '"', '`']).to_string(),
        )),
        _ => None,
    }
}

/// `sql` with the table options after each CREATE TABLE's column list removed, but for
/// `[DEFAULT] CHARSET|CHARACTER SET [=] x` and `[DEFAULT] COLLATE [=] x`; `None` when it does
/// not tokenize.
fn without_table_options(sql: &str) -> Option<String> {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::{Token, Tokenizer};
    let toks = Tokenizer::new(&MySqlDialect {}, sql).tokenize().ok()?;
    let kw = |t: &Token, k: Keyword| matches!(t, Token::Word(w) if w.keyword == k);
    let mut out = String::with_capacity(sql.len());
    let mut i = 0;
    while i < toks.len() {
        // A CREATE ... TABLE statement: copy through the column list's closing parenthesis.
        if kw(&toks[i], Keyword::CREATE) {
            let mut depth = 0i32;
            let mut seen_paren = false;
            while i < toks.len() {
                let t = &toks[i];
                out.push_str(&t.to_string());
                i += 1;
                match t {
                    Token::LParen => {
                        depth += 1;
                        seen_paren = true;
                    }
                    Token::RParen => depth -= 1,
                    Token::SemiColon => break,
                    _ => {}
                }
                if seen_paren && depth == 0 {
                    break;
                }
            }
            // Keep only the charset and collation options up to the end of the statement.
            let words: Vec<&Token> = toks[i..]
                .iter()
                .take_while(|t| !matches!(t, Token::SemiColon))
                .filter(|t| !matches!(t, Token::Whitespace(_) | Token::Eq))
                .collect();
            let skipped = toks[i..]
                .iter()
                .take_while(|t| !matches!(t, Token::SemiColon))
                .count();
            let mut j = 0;
            while j < words.len() {
                let (k, n) = if kw(words[j], Keyword::CHARSET) || kw(words[j], Keyword::COLLATE) {
                    (words[j].to_string(), 1)
                } else if kw(words[j], Keyword::CHARACTER)
                    && words.get(j + 1).is_some_and(|t| kw(t, Keyword::SET))
                {
                    ("CHARACTER SET".to_string(), 2)
                } else {
                    j += 1;
                    continue;
                };
                if let Some(v) = words.get(j + n) {
                    out.push_str(&format!(" {k} = {v}"));
                }
                j += n + 1;
            }
            i += skipped;
            continue;
        }
        out.push_str(&toks[i].to_string());
        i += 1;
    }
    Some(out)
}

/// Parses the CREATE TABLE statements in `sql` and returns the one named `table` (the last
/// name part is compared, case-insensitively), or the only one.
pub fn parse(sql: &str, table: Option<&str>, source: &str) -> Result<TableDef, DefError> {
    let stmts = match Parser::parse_sql(&MySqlDialect {}, sql) {
        Ok(s) => s,
        Err(e) => {
            // MariaDB table options sqlparser does not know (`PAGE_COMPRESSED`=1,
            // ENCRYPTED=YES, ...): parse again with only the charset and collation options.
            let simpler =
                without_table_options(sql).ok_or_else(|| DefError::Parse(e.to_string()))?;
            Parser::parse_sql(&MySqlDialect {}, &simpler)
                .map_err(|_| DefError::Parse(e.to_string()))?
        }
    };
    let creates: Vec<_> = stmts
        .iter()
        .filter_map(|s| match s {
            Statement::CreateTable(c) => Some(c),
            _ => None,
        })
        .collect();
    let name_of = |c: &sqlparser::ast::CreateTable| {
        c.name
            .0
            .last()
            .map(|p| p.to_string().trim_matches('`').to_string())
            .unwrap_or_default()
    };
    let names = creates
        .iter()
        .map(|c| name_of(c))
        .collect::<Vec<_>>()
        .join(", ");
    let want = table.map(|t| t.rsplit(['/', '.']).next().unwrap_or(t).trim_matches('`'));
    let c = match (want, creates.len()) {
        (_, 0) => return Err(DefError::NoCreateTable),
        (None, 1) => creates[0],
        (None, n) => return Err(DefError::Ambiguous(n, names)),
        (Some(w), _) => creates
            .iter()
            .find(|c| name_of(c).eq_ignore_ascii_case(w))
            .copied()
            .ok_or_else(|| DefError::NotFound(w.to_string(), names.clone()))?,
    };
    let mut table_charset = Charset::Utf8mb4;
    let opts: &[SqlOption] = match &c.table_options {
        CreateTableOptions::Plain(v)
        | CreateTableOptions::With(v)
        | CreateTableOptions::Options(v)
        | CreateTableOptions::TableProperties(v) => v,
        CreateTableOptions::None => &[],
    };
    let mut collate_charset = None;
    for o in opts {
        if let Some((k, v)) = option_value(o) {
            match k.as_str() {
                "DEFAULT CHARSET" | "CHARSET" | "DEFAULT CHARACTER SET" | "CHARACTER SET" => {
                    table_charset = charset_named(&v, "the table")?;
                }
                "DEFAULT COLLATE" | "COLLATE" => {
                    collate_charset = Some(charset_named(&v, "the table")?)
                }
                _ => {}
            }
        }
    }
    if let (Some(cs), false) = (
        collate_charset,
        opts.iter()
            .filter_map(option_value)
            .any(|(k, _)| k.contains("CHAR")),
    ) {
        table_charset = cs;
    }
    let mut columns = Vec::new();
    let mut pk: Vec<String> = Vec::new();
    let mut uniques: Vec<Vec<String>> = Vec::new();
    for cd in &c.columns {
        let name = cd.name.value.clone();
        let mut charset = None;
        let mut collation = None;
        let mut nullable = true;
        let mut generated = None;
        for o in &cd.options {
            match &o.option {
                ColumnOption::Generated {
                    generation_expr: Some(_),
                    generation_expr_mode,
                    ..
                } => {
                    generated = Some(matches!(
                        generation_expr_mode,
                        Some(sqlparser::ast::GeneratedExpressionMode::Stored)
                    ));
                }
                ColumnOption::NotNull => nullable = false,
                ColumnOption::Null => nullable = true,
                ColumnOption::CharacterSet(n) => {
                    charset = Some(charset_named(&n.to_string(), &name)?)
                }
                ColumnOption::Collation(n) => {
                    collation = Some(charset_named(&n.to_string(), &name)?)
                }
                ColumnOption::Unique { is_primary, .. } => {
                    if *is_primary {
                        pk = vec![name.clone()];
                        nullable = false;
                    } else {
                        uniques.push(vec![name.clone()]);
                    }
                }
                _ => {}
            }
        }
        let cs = charset.or(collation).unwrap_or(table_charset);
        let ty = col_type(&name, &cd.data_type, cs)?;
        columns.push(Column {
            name,
            sql_type: cd.data_type.to_string(),
            ty,
            nullable,
            generated,
        });
    }
    for k in &c.constraints {
        match k {
            TableConstraint::PrimaryKey { columns: cols, .. } => {
                pk = cols
                    .iter()
                    .map(|ic| {
                        ident_name(&ic.column.expr)
                            .ok_or_else(|| DefError::KeyColumn(ic.column.expr.to_string()))
                    })
                    .collect::<Result<_, _>>()?;
            }
            TableConstraint::Unique { columns: cols, .. } => {
                if let Some(v) = cols
                    .iter()
                    .map(|ic| ident_name(&ic.column.expr))
                    .collect::<Option<Vec<_>>>()
                {
                    uniques.push(v);
                }
            }
            _ => {}
        }
    }
    let find = |columns: &[Column], n: &str| {
        columns
            .iter()
            .position(|c: &Column| c.name.eq_ignore_ascii_case(n))
            .ok_or_else(|| DefError::KeyColumn(n.to_string()))
    };
    let mut primary_key: Vec<usize> = pk
        .iter()
        .map(|n| find(&columns, n))
        .collect::<Result<_, _>>()?;
    for &i in &primary_key {
        columns[i].nullable = false;
    }
    if primary_key.is_empty() {
        // InnoDB clusters on the first UNIQUE key whose columns are all NOT NULL.
        for u in &uniques {
            let ix: Vec<usize> = u
                .iter()
                .map(|n| find(&columns, n))
                .collect::<Result<_, _>>()?;
            if ix.iter().all(|&i| !columns[i].nullable) {
                primary_key = ix;
                break;
            }
        }
    }
    Ok(TableDef {
        name: name_of(c),
        columns,
        primary_key,
        // The statement as given when it is the only one (the server parses its own SHOW
        // CREATE TABLE output; sqlparser's rendering may differ).
        create_sql: if stmts.len() == 1 {
            sql.trim().trim_end_matches(';').trim().to_string()
        } else {
            c.to_string()
        },
        source: source.to_string(),
        row_versions: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SHOW CREATE TABLE of MariaDB 10.11 for a table with every type.
    pub(crate) const ALLTYPES: &str = "CREATE TABLE `alltypes` (
  `id` int(11) NOT NULL,
  `ti` tinyint(4) DEFAULT NULL,
  `tu` tinyint(3) unsigned DEFAULT NULL,
  `mi` mediumint(9) DEFAULT NULL,
  `bu` bigint(20) unsigned DEFAULT NULL,
  `d2` decimal(30,10) DEFAULT NULL,
  `f` float DEFAULT NULL,
  `db` double DEFAULT NULL,
  `fz` float(7,3) DEFAULT NULL,
  `b13` bit(13) DEFAULT NULL,
  `y` year(4) DEFAULT NULL,
  `dt6` datetime(6) DEFAULT NULL,
  `ts` timestamp(2) NULL DEFAULT NULL,
  `tm1` time(1) DEFAULT NULL,
  `c10` char(10) CHARACTER SET latin1 COLLATE latin1_swedish_ci DEFAULT NULL,
  `cu` char(5) CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci DEFAULT NULL,
  `c4` char(5) DEFAULT NULL,
  `vu` varchar(300) DEFAULT NULL,
  `bn` binary(4) DEFAULT NULL,
  `vb` varbinary(20) DEFAULT NULL,
  `e` enum('a','b','c') DEFAULT NULL,
  `s` set('x','y','z') DEFAULT NULL,
  `tx` text DEFAULT NULL,
  `js` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL CHECK (json_valid(`js`)),
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci";

    #[test]
    fn show_create_table_of_mariadb_parses() {
        let d = parse(ALLTYPES, None, "test").unwrap();
        assert_eq!(d.name, "alltypes");
        assert_eq!(d.primary_key, vec![0]);
        let ty = |n: &str| d.columns.iter().find(|c| c.name == n).unwrap().ty.clone();
        assert_eq!(
            ty("mi"),
            ColType::Int {
                ty: IntType::Medium,
                unsigned: false
            }
        );
        assert_eq!(
            ty("bu"),
            ColType::Int {
                ty: IntType::Big,
                unsigned: true
            }
        );
        assert_eq!(ty("d2").fixed_len(), Some(14));
        assert_eq!(ty("fz"), ColType::Float { decimals: Some(3) });
        assert_eq!(ty("f"), ColType::Float { decimals: None });
        assert_eq!(ty("y"), ColType::Year);
        assert_eq!(ty("dt6"), ColType::Datetime { fsp: 6 });
        assert_eq!(ty("dt6").fixed_len(), Some(8));
        assert_eq!(ty("tm1").fixed_len(), Some(4));
        assert_eq!(ty("c10").fixed_len(), Some(10));
        // CHAR in a multi-byte charset is variable-length in COMPACT, fixed in REDUNDANT.
        assert_eq!(ty("cu").fixed_len(), None);
        assert_eq!(ty("cu").redundant_fixed_len(), Some(15));
        // The table default (latin1) applies to columns without their own charset.
        assert_eq!(
            ty("c4"),
            ColType::Char {
                len: 5,
                charset: Charset::Latin1
            }
        );
        assert_eq!(ty("vu").max_bytes(), 300);
        assert_eq!(ty("bn").fixed_len(), Some(4));
        assert_eq!(
            ty("e"),
            ColType::Enum {
                values: vec!["a".into(), "b".into(), "c".into()]
            }
        );
        assert_eq!(ty("s").fixed_len(), Some(1));
        assert!(ty("js").is_blob());
        assert!(d.columns[1].nullable && !d.columns[0].nullable);
    }

    #[test]
    fn mariadb_table_options_sqlparser_does_not_know() {
        let sql = "CREATE TABLE `packed` (
  `id` int(11) NOT NULL,
  `v` varchar(200) DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci `PAGE_COMPRESSED`=1 ENCRYPTED=YES";
        let d = parse(sql, None, "t").unwrap();
        assert_eq!(
            d.columns[1].ty,
            ColType::Varchar {
                len: 200,
                charset: Charset::Latin1
            }
        );
        assert_eq!(d.create_sql, sql, "the statement is kept as given");
        let d = parse(
            "create table t (a int) page_compressed=1 character set utf8mb3",
            None,
            "t",
        )
        .unwrap();
        assert_eq!(d.name, "t");
        assert!(d.has_row_id());
    }

    #[test]
    fn generated_columns() {
        let d = parse(
            "create table g (id int primary key, a int, v int as (a + 1) virtual, s int generated always as (a * 2) stored)",
            None,
            "t",
        )
        .unwrap();
        assert_eq!(
            d.columns.iter().map(|c| c.generated).collect::<Vec<_>>(),
            [None, None, Some(false), Some(true)]
        );
        assert!(!d.columns[2].in_record() && d.columns[3].in_record());
    }

    #[test]
    fn implicit_keys() {
        let d = parse(
            "create table t (a int, b int not null, unique key (a), unique (b))",
            None,
            "x",
        )
        .unwrap();
        assert_eq!(d.primary_key, vec![1], "first UNIQUE on NOT NULL columns");
        let d = parse("create table t (a int, b varchar(3))", None, "x").unwrap();
        assert!(d.has_row_id());
        let d = parse("create table t (a int primary key, b int)", None, "x").unwrap();
        assert_eq!(d.primary_key, vec![0]);
        assert!(!d.columns[0].nullable);
    }

    #[test]
    fn picks_a_table_and_refuses_bad_input() {
        let two = "create table a (x int); create table b (y int);";
        assert!(matches!(
            parse(two, None, "x"),
            Err(DefError::Ambiguous(2, _))
        ));
        assert_eq!(parse(two, Some("db/b"), "x").unwrap().columns[0].name, "y");
        assert!(matches!(
            parse(two, Some("c"), "x"),
            Err(DefError::NotFound(..))
        ));
        assert!(matches!(
            parse("select 1", None, "x"),
            Err(DefError::NoCreateTable)
        ));
        assert!(matches!(
            parse("create table (", None, "x"),
            Err(DefError::Parse(_))
        ));
        let e = parse("create table t (g geometry)", None, "x").unwrap_err();
        assert!(e.to_string().contains("column g"), "{e}");
        let e = parse("create table t (c char(3) character set cp1251)", None, "x").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("c: character set or collation cp1251"),
            "{e}"
        );
        let e = parse("create table t (c int) default charset=gbk", None, "x").unwrap_err();
        assert!(e.to_string().contains("the table"), "{e}");
    }
}
