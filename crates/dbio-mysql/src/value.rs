//! Values as they come from the server (the binary protocol's typed values), as they are kept
//! in a checkpoint (JSON), and as they are written to an archive (TSV as `SELECT ... INTO
//! OUTFILE` writes it, or SQL literals). Pure code.

use mysql::Value;
use serde::{Deserialize, Serialize};

/// A key value in a checkpoint: every variant of the protocol's value, bytes as UTF-8 text
/// when they are, else hex.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyValue {
    /// SQL NULL (never in a usable key; kept for completeness).
    Null,
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    Uint(u64),
    /// A FLOAT.
    Float(f32),
    /// A DOUBLE.
    Double(f64),
    /// A string or DECIMAL that is valid UTF-8.
    Text(String),
    /// Bytes that are not UTF-8, in hex.
    Hex(String),
    /// A DATE/DATETIME/TIMESTAMP: year, month, day, hour, minute, second, microsecond.
    Date(u16, u8, u8, u8, u8, u8, u32),
    /// A TIME: negative, days, hours, minutes, seconds, microseconds.
    Time(bool, u32, u8, u8, u8, u32),
}

impl KeyValue {
    /// From the protocol's value.
    pub fn from_value(v: &Value) -> KeyValue {
        match v {
            Value::NULL => KeyValue::Null,
            Value::Int(i) => KeyValue::Int(*i),
            Value::UInt(u) => KeyValue::Uint(*u),
            Value::Float(f) => KeyValue::Float(*f),
            Value::Double(d) => KeyValue::Double(*d),
            Value::Bytes(b) => match std::str::from_utf8(b) {
                Ok(s) => KeyValue::Text(s.to_string()),
                Err(_) => KeyValue::Hex(hex(b)),
            },
            Value::Date(y, mo, d, h, mi, s, us) => KeyValue::Date(*y, *mo, *d, *h, *mi, *s, *us),
            Value::Time(neg, d, h, mi, s, us) => KeyValue::Time(*neg, *d, *h, *mi, *s, *us),
        }
    }

    /// Back to the protocol's value (a statement parameter).
    pub fn to_value(&self) -> Value {
        match self {
            KeyValue::Null => Value::NULL,
            KeyValue::Int(i) => Value::Int(*i),
            KeyValue::Uint(u) => Value::UInt(*u),
            KeyValue::Float(f) => Value::Float(*f),
            KeyValue::Double(d) => Value::Double(*d),
            KeyValue::Text(s) => Value::Bytes(s.as_bytes().to_vec()),
            KeyValue::Hex(h) => Value::Bytes(unhex(h)),
            KeyValue::Date(y, mo, d, h, mi, s, us) => Value::Date(*y, *mo, *d, *h, *mi, *s, *us),
            KeyValue::Time(neg, d, h, mi, s, us) => Value::Time(*neg, *d, *h, *mi, *s, *us),
        }
    }
}

impl std::fmt::Display for KeyValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = text(&self.to_value(), &ColumnKind::Other);
        f.write_str(&String::from_utf8_lossy(&s))
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(h: &str) -> Vec<u8> {
    (0..h.len() / 2)
        .filter_map(|i| u8::from_str_radix(h.get(2 * i..2 * i + 2)?, 16).ok())
        .collect()
}

/// How a column's values print (from its type in the result set).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ColumnKind {
    /// DATE: `2020-01-31`.
    Date,
    /// DATETIME/TIMESTAMP with this many fractional digits.
    DateTime(u8),
    /// TIME with this many fractional digits.
    Time(u8),
    /// A binary string (charset binary): SQL literals are written in hex.
    Binary,
    /// Anything else.
    Other,
}

impl ColumnKind {
    /// From a result set column.
    pub fn of(col: &mysql::Column) -> ColumnKind {
        use mysql::consts::ColumnType as T;
        let dec = col.decimals().min(6);
        match col.column_type() {
            T::MYSQL_TYPE_DATE | T::MYSQL_TYPE_NEWDATE => ColumnKind::Date,
            T::MYSQL_TYPE_DATETIME
            | T::MYSQL_TYPE_DATETIME2
            | T::MYSQL_TYPE_TIMESTAMP
            | T::MYSQL_TYPE_TIMESTAMP2 => ColumnKind::DateTime(dec),
            T::MYSQL_TYPE_TIME | T::MYSQL_TYPE_TIME2 => ColumnKind::Time(dec),
            T::MYSQL_TYPE_STRING
            | T::MYSQL_TYPE_VAR_STRING
            | T::MYSQL_TYPE_VARCHAR
            | T::MYSQL_TYPE_BLOB
            | T::MYSQL_TYPE_TINY_BLOB
            | T::MYSQL_TYPE_MEDIUM_BLOB
            | T::MYSQL_TYPE_LONG_BLOB
                if col.character_set() == 63 =>
            {
                ColumnKind::Binary
            }
            _ => ColumnKind::Other,
        }
    }
}

fn frac(us: u32, digits: u8) -> String {
    if digits == 0 {
        return String::new();
    }
    let s = format!("{us:06}");
    format!(".{}", &s[..digits as usize])
}

/// A value as the server prints it (`SELECT` in the mysql client); NULL is empty here (the
/// formats write it their own way).
pub fn text(v: &Value, kind: &ColumnKind) -> Vec<u8> {
    match v {
        Value::NULL => Vec::new(),
        Value::Bytes(b) => b.clone(),
        Value::Int(i) => i.to_string().into_bytes(),
        Value::UInt(u) => u.to_string().into_bytes(),
        Value::Float(f) => f.to_string().into_bytes(),
        Value::Double(d) => d.to_string().into_bytes(),
        Value::Date(y, mo, d, h, mi, s, us) => match kind {
            ColumnKind::Date => format!("{y:04}-{mo:02}-{d:02}"),
            ColumnKind::DateTime(dec) => {
                format!(
                    "{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}{}",
                    frac(*us, *dec)
                )
            }
            _ => {
                let f = if *us > 0 { frac(*us, 6) } else { String::new() };
                format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}{f}")
            }
        }
        .into_bytes(),
        Value::Time(neg, d, h, mi, s, us) => {
            let dec = match kind {
                ColumnKind::Time(dec) => *dec,
                _ if *us > 0 => 6,
                _ => 0,
            };
            let hours = u64::from(*d) * 24 + u64::from(*h);
            let sign = if *neg { "-" } else { "" };
            format!("{sign}{hours:02}:{mi:02}:{s:02}{}", frac(*us, dec)).into_bytes()
        }
    }
}

/// Appends one TSV field: NULL as `\N`; backslash, tab, newline, carriage return and NUL
/// escaped with a backslash, as `SELECT ... INTO OUTFILE` and `LOAD DATA` use them.
pub fn push_tsv(out: &mut Vec<u8>, v: &Value, kind: &ColumnKind) {
    if matches!(v, Value::NULL) {
        out.extend_from_slice(b"\\N");
        return;
    }
    for b in text(v, kind) {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0 => out.extend_from_slice(b"\\0"),
            _ => out.push(b),
        }
    }
}

/// Appends one SQL literal: NULL, a number, a quoted string (escaped as mysqldump does), or
/// hex (`X'..'`) for binary columns and bytes that are not UTF-8.
pub fn push_sql(out: &mut Vec<u8>, v: &Value, kind: &ColumnKind) {
    match v {
        Value::NULL => out.extend_from_slice(b"NULL"),
        Value::Int(_) | Value::UInt(_) | Value::Float(_) | Value::Double(_) => {
            out.extend_from_slice(&text(v, kind))
        }
        Value::Bytes(b) if *kind == ColumnKind::Binary || std::str::from_utf8(b).is_err() => {
            if b.is_empty() {
                out.extend_from_slice(b"''");
            } else {
                out.extend_from_slice(format!("X'{}'", hex(b)).as_bytes());
            }
        }
        _ => {
            out.push(b'\'');
            for b in text(v, kind) {
                match b {
                    b'\\' => out.extend_from_slice(b"\\\\"),
                    b'\'' => out.extend_from_slice(b"\\'"),
                    b'\n' => out.extend_from_slice(b"\\n"),
                    b'\r' => out.extend_from_slice(b"\\r"),
                    0 => out.extend_from_slice(b"\\0"),
                    0x1a => out.extend_from_slice(b"\\Z"),
                    _ => out.push(b),
                }
            }
            out.push(b'\'');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_values_round_trip_through_json() {
        for v in [
            Value::Int(-5),
            Value::UInt(u64::MAX),
            Value::Bytes(b"caf\xc3\xa9".to_vec()),
            Value::Bytes(vec![0xff, 0x00, 0x10]),
            Value::Date(2020, 1, 31, 23, 59, 58, 123456),
            Value::Time(true, 1, 2, 3, 4, 5),
            Value::Double(0.1),
        ] {
            let k = KeyValue::from_value(&v);
            let json = serde_json::to_string(&k).unwrap();
            let back: KeyValue = serde_json::from_str(&json).unwrap();
            assert_eq!(back.to_value(), v, "{json}");
        }
        assert_eq!(
            serde_json::to_string(&KeyValue::from_value(&Value::Bytes(vec![0xff]))).unwrap(),
            r#"{"hex":"ff"}"#
        );
    }

    #[test]
    fn text_follows_the_column_type() {
        let dt = Value::Date(2020, 1, 2, 3, 4, 5, 120000);
        assert_eq!(text(&dt, &ColumnKind::Date), b"2020-01-02");
        assert_eq!(text(&dt, &ColumnKind::DateTime(0)), b"2020-01-02 03:04:05");
        assert_eq!(
            text(&dt, &ColumnKind::DateTime(3)),
            b"2020-01-02 03:04:05.120"
        );
        let t = Value::Time(true, 1, 2, 3, 4, 0);
        assert_eq!(text(&t, &ColumnKind::Time(0)), b"-26:03:04");
        assert_eq!(text(&Value::Float(1.5), &ColumnKind::Other), b"1.5");
    }

    #[test]
    fn tsv_and_sql_escape() {
        let mut out = Vec::new();
        push_tsv(
            &mut out,
            &Value::Bytes(b"a\tb\nc\\d\0".to_vec()),
            &ColumnKind::Other,
        );
        out.push(b'\t');
        push_tsv(&mut out, &Value::NULL, &ColumnKind::Other);
        assert_eq!(out, b"a\\tb\\nc\\\\d\\0\t\\N");
        let mut out = Vec::new();
        push_sql(
            &mut out,
            &Value::Bytes(b"it's \\ ok".to_vec()),
            &ColumnKind::Other,
        );
        out.push(b',');
        push_sql(
            &mut out,
            &Value::Bytes(vec![1, 2, 0xff]),
            &ColumnKind::Other,
        );
        out.push(b',');
        push_sql(&mut out, &Value::Bytes(b"ab".to_vec()), &ColumnKind::Binary);
        out.push(b',');
        push_sql(&mut out, &Value::Int(-3), &ColumnKind::Other);
        out.push(b',');
        push_sql(&mut out, &Value::NULL, &ColumnKind::Other);
        out.push(b',');
        push_sql(
            &mut out,
            &Value::Date(2020, 1, 2, 0, 0, 0, 0),
            &ColumnKind::Date,
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r"'it\'s \\ ok',X'0102ff',X'6162',-3,NULL,'2020-01-02'"
        );
    }
}
