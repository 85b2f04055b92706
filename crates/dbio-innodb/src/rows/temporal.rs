//! DATETIME, TIME and TIMESTAMP in the formats before MySQL 5.6's: what MySQL 5.5 and older
//! wrote, and what MariaDB still writes for tables created with
//! `mysql56_temporal_format=OFF` (MariaDB's SHOW CREATE TABLE marks these columns
//! `/* mariadb-5.3 */`; MySQL 5.6+ marks them `/* 5.5 binary format */` when
//! `show_old_temporals` is on).
//!
//! - DATETIME: 8-byte integer YYYYMMDDhhmmss (sign bit flipped, as InnoDB stores integers).
//! - TIME: 3-byte integer (-)HHMMSS (sign bit flipped).
//! - TIMESTAMP: 4-byte seconds since the epoch (as the new format).
//! - With fractional seconds (MariaDB 5.3's "hires" types), big-endian unsigned:
//!   DATETIME(n) the packed value ((((Y*13+M)*32+D)*24+h)*60+m)*60+s, times 10^6 plus the
//!   microseconds, divided by 10^(6-n), in 5/6/6/7/7/7/8 bytes for n = 0..6; TIME(n) the
//!   same for hours, minutes and seconds, negated when negative, plus 3020400 x 10^n (the
//!   zero point above TIME's range), in 3/4/4/5/5/5/6 bytes; TIMESTAMP(n) 4 bytes of
//!   seconds then the microseconds divided by 10^(6-n) in 0/1/1/2/2/2/3 bytes.
//!
//! A CREATE TABLE statement does not tell these from the new formats unless it carries the
//! comment, and the stored lengths are the same for most precisions (DATETIME(0) takes 8
//! bytes instead of 5, the others differ only for n = 5), so the formats are chosen from the
//! definition: [`marked_columns`] finds the commented columns, [`apply`] switches them (or
//! every temporal column, for `--old-temporal`).

use super::def::{ColType, TableDef};
use super::value::{be, push_frac, push_hms, push_ymd, Bad};
use serde::Serialize;

/// Which old temporal type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// DATETIME.
    Datetime,
    /// TIME.
    Time,
    /// TIMESTAMP.
    Timestamp,
}

impl Kind {
    /// Stored bytes with `fsp` fraction digits.
    pub fn len(self, fsp: u8) -> usize {
        let i = fsp.min(6) as usize;
        match self {
            Kind::Datetime if fsp == 0 => 8,
            Kind::Datetime => [5, 6, 6, 7, 7, 7, 8][i],
            Kind::Time => [3, 4, 4, 5, 5, 5, 6][i],
            Kind::Timestamp => [4, 5, 5, 6, 6, 6, 7][i],
        }
    }

    /// The SQL type name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Datetime => "DATETIME",
            Kind::Time => "TIME",
            Kind::Timestamp => "TIMESTAMP",
        }
    }
}

const USEC: u64 = 1_000_000;

/// A value of `kind`(`fsp`) in the old format, as the server prints it.
pub fn decode(kind: Kind, fsp: u8, b: &[u8]) -> Result<String, Bad> {
    if b.len() != kind.len(fsp) || fsp > 6 {
        return Err(Bad::Length);
    }
    let scale = 10u64.pow(6 - fsp as u32);
    let mut out = Vec::with_capacity(26);
    match (kind, fsp) {
        (Kind::Datetime, 0) => {
            let v = be(b) ^ (1 << 63);
            if v >> 63 != 0 {
                return Err(Bad::Range);
            }
            let part = |div: u64| v / div % 100;
            let (y, mo, d) = (v / 10_000_000_000, part(100_000_000), part(1_000_000));
            let (h, mi, s) = (part(10_000), part(100), v % 100);
            if y > 9999 || mo > 12 || d > 31 || h > 23 || mi > 59 || s > 59 {
                return Err(Bad::Range);
            }
            push_ymd(&mut out, y, mo, d);
            out.push(b' ');
            push_hms(&mut out, h, mi, s);
        }
        (Kind::Datetime, _) => {
            let v = be(b).checked_mul(scale).ok_or(Bad::Range)?;
            let (usec, mut r) = (v % USEC, v / USEC);
            let s = r % 60;
            r /= 60;
            let mi = r % 60;
            r /= 60;
            let h = r % 24;
            r /= 24;
            let d = r % 32;
            r /= 32;
            let (mo, y) = (r % 13, r / 13);
            if y > 9999 {
                return Err(Bad::Range);
            }
            push_ymd(&mut out, y, mo, d);
            out.push(b' ');
            push_hms(&mut out, h, mi, s);
            push_frac(&mut out, usec as u32, fsp);
        }
        (Kind::Time, 0) => {
            let v = be(b) as i64 - 0x80_0000;
            let a = v.unsigned_abs();
            let (h, m, s) = (a / 10_000, a / 100 % 100, a % 100);
            if h > 838 || m > 59 || s > 59 {
                return Err(Bad::Range);
            }
            if v < 0 {
                out.push(b'-');
            }
            push_hms(&mut out, h, m, s);
        }
        (Kind::Time, _) => {
            let zero = (3_020_400 * USEC / scale) as i64;
            let v = be(b) as i64 - zero;
            let a = v.unsigned_abs() * scale;
            let (usec, secs) = (a % USEC, a / USEC);
            if secs > 3_020_399 {
                return Err(Bad::Range);
            }
            if v < 0 {
                out.push(b'-');
            }
            push_hms(&mut out, secs / 3600, secs / 60 % 60, secs % 60);
            push_frac(&mut out, usec as u32, fsp);
        }
        (Kind::Timestamp, _) => {
            out = super::value::timestamp(&b[..4], 0)?.into_bytes();
            let usec = be(&b[4..]) * scale;
            if usec >= USEC {
                return Err(Bad::Range);
            }
            push_frac(&mut out, usec as u32, fsp);
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Columns of the CREATE TABLE statements in `sql` whose type carries MariaDB's
/// `/* mariadb-5.3 */` or MySQL's `/* 5.5 binary format */` comment (the old temporal
/// formats), by name as written.
pub fn marked_columns(sql: &str) -> Vec<String> {
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::tokenizer::{Token, Tokenizer, Whitespace};
    let Ok(toks) = Tokenizer::new(&MySqlDialect {}, sql).tokenize() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut depth = 0i32;
    // The first word of the current column definition (depth 1 of the column list).
    let mut name: Option<String> = None;
    let mut at_start = false;
    for t in &toks {
        match t {
            Token::LParen => {
                depth += 1;
                if depth == 1 {
                    at_start = true;
                    name = None;
                }
            }
            Token::RParen => depth -= 1,
            Token::Comma if depth == 1 => {
                at_start = true;
                name = None;
            }
            Token::SemiColon => depth = 0,
            Token::Word(w) if at_start && depth == 1 => {
                name = Some(w.value.clone());
                at_start = false;
            }
            Token::Whitespace(Whitespace::MultiLineComment(c))
                if depth == 1
                    && ["mariadb-5.3", "5.5 binary format"]
                        .contains(&c.trim().to_ascii_lowercase().as_str()) =>
            {
                if let Some(n) = name.take() {
                    out.push(n);
                }
            }
            _ => {}
        }
    }
    out
}

/// Switches temporal columns of `def` to the old formats: those named in `names`
/// (case-insensitive), or every DATETIME, TIME and TIMESTAMP column when `all`. Returns the
/// names of the columns switched.
pub fn apply(def: &mut TableDef, names: &[String], all: bool) -> Vec<String> {
    let mut done = Vec::new();
    for c in &mut def.columns {
        if !all && !names.iter().any(|n| n.eq_ignore_ascii_case(&c.name)) {
            continue;
        }
        let (kind, fsp) = match c.ty {
            ColType::Datetime { fsp } => (Kind::Datetime, fsp),
            ColType::Time { fsp } => (Kind::Time, fsp),
            ColType::Timestamp { fsp } => (Kind::Timestamp, fsp),
            _ => continue,
        };
        c.ty = ColType::OldTemporal { old: kind, fsp };
        done.push(c.name.clone());
    }
    if !done.is_empty() {
        def.source = format!(
            "{}; old (pre-5.6) temporal format: {}",
            def.source,
            done.join(", ")
        );
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_formats_decode_as_the_server_prints_them() {
        // Bytes from a MariaDB 10.11 table made with mysql56_temporal_format=OFF.
        let h = |s: &str| -> Vec<u8> {
            (0..s.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
                .collect()
        };
        let cases = [
            (Kind::Datetime, 0, "8000125cf85d1ed3", "2019-05-13 14:35:07"),
            (Kind::Time, 0, "7e1dc0", "-12:34:56"),
            (Kind::Timestamp, 0, "5cd95c40", "2019-05-13 12:00:00"),
            (
                Kind::Datetime,
                3,
                "0042037a5dddf3",
                "2019-05-13 14:35:07.123",
            ),
            (Kind::Time, 2, "00000001", "-838:59:59.99"),
            (
                Kind::Timestamp,
                6,
                "7fffffff0f423f",
                "2038-01-19 03:14:07.999999",
            ),
            (Kind::Time, 6, "02bf3dde7bff", "-00:00:00.000001"),
        ];
        for (k, fsp, hex, want) in cases {
            assert_eq!(decode(k, fsp, &h(hex)).as_deref(), Ok(want), "{k:?}({fsp})");
        }
        assert_eq!(decode(Kind::Datetime, 0, &h("8000")), Err(Bad::Length));
        assert_eq!(decode(Kind::Time, 0, &h("7fffff")), Ok("-00:00:01".into()));
        assert_eq!(
            decode(Kind::Datetime, 0, &h("8000ffffffffffff")),
            Err(Bad::Range)
        );
    }

    #[test]
    fn marked_columns_are_found_in_the_statement() {
        let sql = "CREATE TABLE `t` (\n `id` int(11) NOT NULL,\n `dt` datetime /* mariadb-5.3 */ DEFAULT NULL,\n `t6` time(6) /* mariadb-5.3 */ DEFAULT NULL,\n `n` datetime(6) DEFAULT NULL,\n PRIMARY KEY (`id`)\n) ENGINE=InnoDB";
        assert_eq!(marked_columns(sql), ["dt", "t6"]);
        let mysql = "CREATE TABLE t (id int, ts timestamp /* 5.5 binary format */ NULL, d date)";
        assert_eq!(marked_columns(mysql), ["ts"]);
    }
}
