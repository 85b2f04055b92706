//! The key a job walks, and the SQL of a keyset walk over it. Pure code: the metadata comes
//! from `information_schema.STATISTICS` (read in [`crate::server`]), the statements are text
//! with `?` placeholders whose values are the key columns of a bound.
//!
//! A composite bound is written out column by column: `(a > ?) OR (a = ? AND b > ?)`, which
//! MariaDB's range optimizer turns into a range scan; the row constructor `(a, b) > (?, ?)`
//! reads the whole table on MariaDB 10.11 (EXPLAIN type ALL).

use serde::{Deserialize, Serialize};

/// One column of one index, as information_schema.STATISTICS lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexColumn {
    /// INDEX_NAME (`PRIMARY` for the primary key).
    pub index: String,
    /// SEQ_IN_INDEX (from 1).
    pub seq: u32,
    /// COLUMN_NAME.
    pub column: String,
    /// NON_UNIQUE.
    pub non_unique: bool,
    /// NULLABLE is `YES`.
    pub nullable: bool,
    /// SUB_PART is set: only a prefix of the column is indexed.
    pub prefix: bool,
}

/// The key a job walks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Key {
    /// The index name (`PRIMARY`).
    pub name: String,
    /// Its columns in index order.
    pub columns: Vec<String>,
}

/// Why a table cannot be walked.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KeyError {
    /// No primary key and no unique index over NOT NULL columns.
    #[error("table {0} has no primary key and no unique index over NOT NULL columns: a keyset walk needs one (add a primary key, or name a unique key with --key)")]
    NoUsableKey(String),
    /// The named index does not exist.
    #[error("table {table} has no index named {key}")]
    NoSuchKey {
        /// The table.
        table: String,
        /// The name given.
        key: String,
    },
    /// The named index is not unique, has a nullable column, or indexes a prefix.
    #[error("index {key} of {table} cannot be walked: {why}")]
    Unusable {
        /// The table.
        table: String,
        /// The index.
        key: String,
        /// Why.
        why: &'static str,
    },
}

/// Chooses the key: `named` if given (it must be unique, over NOT NULL whole columns), else
/// the primary key, else the unique NOT NULL index with the fewest columns (then by name).
pub fn choose_key(table: &str, cols: &[IndexColumn], named: Option<&str>) -> Result<Key, KeyError> {
    let mut names: Vec<&str> = cols.iter().map(|c| c.index.as_str()).collect();
    names.sort();
    names.dedup();
    let build = |name: &str| -> Result<Key, &'static str> {
        let mut parts: Vec<&IndexColumn> = cols.iter().filter(|c| c.index == name).collect();
        parts.sort_by_key(|c| c.seq);
        if parts.iter().any(|c| c.non_unique) {
            return Err("it is not unique");
        }
        if parts.iter().any(|c| c.nullable) {
            return Err("a column of it is nullable");
        }
        if parts.iter().any(|c| c.prefix) {
            return Err("it indexes only a prefix of a column");
        }
        Ok(Key {
            name: name.to_string(),
            columns: parts.iter().map(|c| c.column.clone()).collect(),
        })
    };
    if let Some(want) = named {
        let Some(name) = names.iter().find(|n| n.eq_ignore_ascii_case(want)) else {
            return Err(KeyError::NoSuchKey {
                table: table.into(),
                key: want.into(),
            });
        };
        return build(name).map_err(|why| KeyError::Unusable {
            table: table.into(),
            key: want.into(),
            why,
        });
    }
    if let Ok(k) = build("PRIMARY") {
        if !k.columns.is_empty() {
            return Ok(k);
        }
    }
    names
        .iter()
        .filter_map(|n| build(n).ok())
        .filter(|k| !k.columns.is_empty())
        .min_by(|a, b| {
            a.columns
                .len()
                .cmp(&b.columns.len())
                .then(a.name.cmp(&b.name))
        })
        .ok_or_else(|| KeyError::NoUsableKey(table.into()))
}

/// `name` as a MySQL identifier in backticks (a backtick inside is doubled).
pub fn quote_ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// `db`.`table`.
pub fn qualified(db: &str, table: &str) -> String {
    format!("{}.{}", quote_ident(db), quote_ident(table))
}

/// A comparison of the key with a bound: the SQL with `?` placeholders and, for each
/// placeholder in order, the index of the key column whose bound value it takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bound {
    /// The condition.
    pub sql: String,
    /// Which key column each `?` takes.
    pub params: Vec<usize>,
}

/// `key > bound` (`strict`) or `key <= bound` (`!strict`, with `below`), written out column
/// by column for the range optimizer.
fn compare(key: &Key, above: bool) -> Bound {
    let cols: Vec<String> = key.columns.iter().map(|c| quote_ident(c)).collect();
    let mut terms = Vec::new();
    let mut params = Vec::new();
    for i in 0..cols.len() {
        let last = i + 1 == cols.len();
        let op = match (above, last) {
            (true, _) => ">",
            (false, false) => "<",
            (false, true) => "<=",
        };
        let mut parts: Vec<String> = (0..i).map(|j| format!("{} = ?", cols[j])).collect();
        params.extend(0..i);
        parts.push(format!("{} {op} ?", cols[i]));
        params.push(i);
        terms.push(format!("({})", parts.join(" AND ")));
    }
    Bound {
        sql: format!("({})", terms.join(" OR ")),
        params,
    }
}

/// `key > ?`.
pub fn after(key: &Key) -> Bound {
    compare(key, true)
}

/// `key <= ?`.
pub fn up_to(key: &Key) -> Bound {
    compare(key, false)
}

/// The range `(lower, upper]` of one chunk (no lower bound for the first chunk) and the user's
/// condition, ANDed, with the placeholders' key columns: first the lower bound's, then the
/// upper's. The returned `usize`s index `lower` then `upper` as one list (`n + i` for upper).
pub fn range(key: &Key, has_lower: bool, condition: Option<&str>) -> Bound {
    let n = key.columns.len();
    let mut sql = Vec::new();
    let mut params = Vec::new();
    if has_lower {
        let a = after(key);
        sql.push(a.sql);
        params.extend(a.params);
    }
    let b = up_to(key);
    sql.push(b.sql);
    params.extend(b.params.into_iter().map(|i| n + i));
    if let Some(c) = condition {
        sql.push(format!("({c})"));
    }
    Bound {
        sql: sql.join(" AND "),
        params,
    }
}

/// The key columns, quoted and comma-separated (`ORDER BY` and select lists).
pub fn column_list(key: &Key) -> String {
    key.columns
        .iter()
        .map(|c| quote_ident(c))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The statement that finds the upper bound of the next chunk: the key of the `n`th row after
/// `lower` (the first row when there is no lower bound), not beyond the job's end bound. Its
/// placeholders are [`range`]'s without a condition.
pub fn boundary_sql(table: &str, key: &Key, has_lower: bool, n: u64) -> (String, Bound) {
    let r = range(key, has_lower, None);
    let cols = column_list(key);
    let sql = format!(
        "SELECT {cols} FROM {table} FORCE INDEX ({}) WHERE {} ORDER BY {cols} LIMIT 1 OFFSET {}",
        quote_ident(&key.name),
        r.sql,
        n.saturating_sub(1)
    );
    (sql, r)
}

/// The statement that reads the job's end bound: the greatest key in the table.
pub fn last_key_sql(table: &str, key: &Key) -> String {
    let desc = key
        .columns
        .iter()
        .map(|c| format!("{} DESC", quote_ident(c)))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "SELECT {} FROM {table} FORCE INDEX ({}) ORDER BY {desc} LIMIT 1",
        column_list(key),
        quote_ident(&key.name)
    )
}

/// Why a `--where` or `--update` text is refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SqlTextError {
    /// Unbalanced parentheses or an unclosed quote.
    #[error("{what} '{text}' has unbalanced parentheses or an unclosed quote")]
    Unbalanced {
        /// `--where` or `--update`.
        what: &'static str,
        /// The text.
        text: String,
    },
    /// A `;` outside quotes: a second statement.
    #[error("{what} '{text}' holds a ';' outside quotes (one condition or one SET list, not statements)")]
    Semicolon {
        /// `--where` or `--update`.
        what: &'static str,
        /// The text.
        text: String,
    },
    /// The update assigns a key column: its rows would move into later chunks and be updated
    /// again.
    #[error("--update assigns the key column {0}: rows would move ahead of the walk and be updated twice; walk another unique key with --key")]
    AssignsKey(String),
    /// An empty SET list.
    #[error("--update '{0}' assigns nothing (write it as SET col = value, ...)")]
    NoAssignment(String),
}

/// Splits `text` at top-level `sep` (outside quotes, backticks and parentheses), checking
/// balance and refusing a `;`.
fn split_top(text: &str, sep: char, what: &'static str) -> Result<Vec<String>, SqlTextError> {
    let mut parts = vec![String::new()];
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            parts.last_mut().expect("one part").push(c);
            if c == '\\' && q != '`' {
                if let Some(n) = chars.next() {
                    parts.last_mut().expect("one part").push(n);
                }
            } else if c == q {
                if chars.peek() == Some(&q) {
                    parts
                        .last_mut()
                        .expect("one part")
                        .push(chars.next().expect("peeked"));
                } else {
                    quote = None;
                }
            }
            continue;
        }
        match c {
            '\'' | '"' | '`' => quote = Some(c),
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    break;
                }
            }
            ';' => {
                return Err(SqlTextError::Semicolon {
                    what,
                    text: text.into(),
                })
            }
            _ => {}
        }
        if c == sep && depth == 0 {
            parts.push(String::new());
        } else {
            parts.last_mut().expect("one part").push(c);
        }
    }
    if depth != 0 || quote.is_some() {
        return Err(SqlTextError::Unbalanced {
            what,
            text: text.into(),
        });
    }
    Ok(parts)
}

/// Checks a `--where` condition: balanced, one expression (no `;`), so that `(cond)` cannot
/// escape the chunk's range.
pub fn check_condition(cond: &str) -> Result<(), SqlTextError> {
    split_top(cond, '\u{0}', "--where").map(|_| ())
}

/// Checks an `--update` SET list and returns it without a leading `SET`; refuses one that
/// assigns a key column.
pub fn check_update(set: &str, key: &Key) -> Result<String, SqlTextError> {
    let t = set.trim();
    let body = match t.get(..4) {
        Some(s) if s.eq_ignore_ascii_case("set ") => t[4..].trim(),
        _ => t,
    };
    let parts = split_top(body, ',', "--update")?;
    let mut n = 0;
    for p in &parts {
        let Some((lhs, _)) = p.split_once('=') else {
            return Err(SqlTextError::NoAssignment(set.into()));
        };
        let lhs = lhs.trim();
        let col = lhs
            .rsplit('.')
            .next()
            .unwrap_or(lhs)
            .trim()
            .trim_matches('`');
        if col.is_empty() {
            return Err(SqlTextError::NoAssignment(set.into()));
        }
        if let Some(k) = key.columns.iter().find(|k| k.eq_ignore_ascii_case(col)) {
            return Err(SqlTextError::AssignsKey(k.clone()));
        }
        n += 1;
    }
    if n == 0 {
        return Err(SqlTextError::NoAssignment(set.into()));
    }
    Ok(body.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ic(index: &str, seq: u32, column: &str, non_unique: bool, nullable: bool) -> IndexColumn {
        IndexColumn {
            index: index.into(),
            seq,
            column: column.into(),
            non_unique,
            nullable,
            prefix: false,
        }
    }

    fn key(cols: &[&str]) -> Key {
        Key {
            name: "PRIMARY".into(),
            columns: cols.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn chooses_primary_then_the_narrowest_unique_not_null() {
        let cols = vec![
            ic("PRIMARY", 2, "b", false, false),
            ic("PRIMARY", 1, "a", false, false),
            ic("u", 1, "c", false, false),
        ];
        assert_eq!(choose_key("t", &cols, None).unwrap(), key(&["a", "b"]));
        assert_eq!(
            choose_key("t", &cols, Some("U")).unwrap(),
            Key {
                name: "u".into(),
                columns: vec!["c".into()]
            }
        );
        let cols = vec![
            ic("idx", 1, "x", true, false),
            ic("nul", 1, "y", false, true),
            ic("wide", 1, "p", false, false),
            ic("wide", 2, "q", false, false),
            ic("one", 1, "r", false, false),
        ];
        assert_eq!(choose_key("t", &cols, None).unwrap().name, "one");
        assert!(matches!(
            choose_key("t", &cols, Some("idx")),
            Err(KeyError::Unusable {
                why: "it is not unique",
                ..
            })
        ));
        assert!(matches!(
            choose_key("t", &cols, Some("nul")),
            Err(KeyError::Unusable { .. })
        ));
        assert!(matches!(
            choose_key("t", &cols, Some("nope")),
            Err(KeyError::NoSuchKey { .. })
        ));
        let only_bad = vec![
            ic("idx", 1, "x", true, false),
            ic("nul", 1, "y", false, true),
        ];
        assert_eq!(
            choose_key("db.t", &only_bad, None),
            Err(KeyError::NoUsableKey("db.t".into()))
        );
        assert!(choose_key("t", &[], None).is_err());
    }

    #[test]
    fn composite_bounds_are_written_out_for_the_range_optimizer() {
        let k = key(&["a", "b", "c"]);
        let a = after(&k);
        assert_eq!(
            a.sql,
            "((`a` > ?) OR (`a` = ? AND `b` > ?) OR (`a` = ? AND `b` = ? AND `c` > ?))"
        );
        assert_eq!(a.params, vec![0, 0, 1, 0, 1, 2]);
        let u = up_to(&k);
        assert_eq!(
            u.sql,
            "((`a` < ?) OR (`a` = ? AND `b` < ?) OR (`a` = ? AND `b` = ? AND `c` <= ?))"
        );
        let r = range(&key(&["id"]), true, Some("created < '2020-01-01'"));
        assert_eq!(
            r.sql,
            "((`id` > ?)) AND ((`id` <= ?)) AND (created < '2020-01-01')"
        );
        assert_eq!(r.params, vec![0, 1]);
        let r = range(&key(&["a", "b"]), false, None);
        assert_eq!(r.params, vec![2, 2, 3]);
        let (sql, _) = boundary_sql("`d`.`t`", &key(&["id"]), true, 1000);
        assert_eq!(
            sql,
            "SELECT `id` FROM `d`.`t` FORCE INDEX (`PRIMARY`) WHERE ((`id` > ?)) AND ((`id` <= ?)) ORDER BY `id` LIMIT 1 OFFSET 999"
        );
        assert_eq!(
            last_key_sql("`d`.`t`", &key(&["a", "b"])),
            "SELECT `a`, `b` FROM `d`.`t` FORCE INDEX (`PRIMARY`) ORDER BY `a` DESC, `b` DESC LIMIT 1"
        );
        assert_eq!(quote_ident("we`ird"), "`we``ird`");
    }

    #[test]
    fn conditions_cannot_escape_their_parentheses() {
        assert!(check_condition("created < '2020-01-01' AND (a = 1 OR b = ')')").is_ok());
        assert!(check_condition("note = 'it''s; fine'").is_ok());
        assert!(matches!(
            check_condition("1) OR (1"),
            Err(SqlTextError::Unbalanced { .. })
        ));
        assert!(matches!(
            check_condition("a = 'open"),
            Err(SqlTextError::Unbalanced { .. })
        ));
        assert!(matches!(
            check_condition("1; DROP TABLE t"),
            Err(SqlTextError::Semicolon { .. })
        ));
    }

    #[test]
    fn updates_of_key_columns_are_refused() {
        let k = key(&["id"]);
        assert_eq!(
            check_update("SET status = 'old', n = IF(n = 1, 2, 3)", &k).unwrap(),
            "status = 'old', n = IF(n = 1, 2, 3)"
        );
        assert_eq!(check_update("note='a,b'", &k).unwrap(), "note='a,b'");
        assert_eq!(
            check_update("set t.`ID` = id + 1", &k),
            Err(SqlTextError::AssignsKey("id".into()))
        );
        assert!(matches!(
            check_update("SET ", &k),
            Err(SqlTextError::NoAssignment(_))
        ));
        assert!(matches!(
            check_update("SET x = 1; DELETE FROM t", &k),
            Err(SqlTextError::Semicolon { .. })
        ));
    }
}
