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
//! definition ([`super::value::old_temporal`] decodes them): [`marked_columns`] finds the commented columns, [`apply`] switches them (or
//! every temporal column, for `--old-temporal`).

use super::def::{ColType, OldTemporal as Kind, TableDef};

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
    fn marked_columns_are_found_in_the_statement() {
        let sql = "CREATE TABLE `t` (\n `id` int(11) NOT NULL,\n `dt` datetime /* mariadb-5.3 */ DEFAULT NULL,\n `t6` time(6) /* mariadb-5.3 */ DEFAULT NULL,\n `n` datetime(6) DEFAULT NULL,\n PRIMARY KEY (`id`)\n) ENGINE=InnoDB";
        assert_eq!(marked_columns(sql), ["dt", "t6"]);
        let mysql = "CREATE TABLE t (id int, ts timestamp /* 5.5 binary format */ NULL, d date)";
        assert_eq!(marked_columns(mysql), ["ts"]);
    }
}
