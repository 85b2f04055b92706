//! The text formats of a capture's files, written and read back: pt-stalk's where pt-stalk has
//! the file. `-processlist` is the `mysql -e "SHOW FULL PROCESSLIST\G"` vertical format
//! (dbio puts a `TS <epoch> <date>` line before each sample; pt-stalk puts none, so its samples
//! are told apart by the row numbering starting again at `1. row`); `-mysqladmin` is the table
//! `mysqladmin extended-status` prints, one per sample; `-diskstats`, `-procstat`,
//! `-procvmstat`, `-interrupts` are a `TS` line then the /proc file, as pt-stalk writes them.

use super::trigger::Thread;

/// The `TS <epoch.nanoseconds> <YYYY-MM-DD HH:MM:SS>` line pt-stalk writes before a sample.
pub fn ts_line(ts: f64) -> String {
    let s = dbio_sys::diskstats::format_saved(ts, "");
    s.lines().next().unwrap_or_default().to_string() + "\n"
}

/// One processlist sample as `SHOW FULL PROCESSLIST\G` prints it (Id, User, Host, db, Command,
/// Time, State, Info), after a `TS` line.
pub fn processlist(ts: f64, rows: &[(u64, Thread)]) -> String {
    let mut s = ts_line(ts);
    let null = |v: &str| {
        if v.is_empty() {
            "NULL".to_string()
        } else {
            v.to_string()
        }
    };
    for (i, (id, t)) in rows.iter().enumerate() {
        s.push_str(&format!(
            "*************************** {}. row ***************************\n      Id: {id}\n    User: {}\n    Host: {}\n      db: {}\n Command: {}\n    Time: {}\n   State: {}\n    Info: {}\n",
            i + 1,
            t.user,
            t.host,
            null(&t.db),
            t.command,
            t.time_s,
            t.state,
            null(&t.info.replace('\n', " ")),
        ));
    }
    s
}

/// The samples of a `-processlist` file: `(TS if any, threads)`.
pub fn parse_processlist(text: &str) -> Vec<(Option<f64>, Vec<Thread>)> {
    let mut out: Vec<(Option<f64>, Vec<Thread>)> = Vec::new();
    let mut pending_ts: Option<f64> = None;
    let mut cur: Option<Thread> = None;
    let flush = |cur: &mut Option<Thread>, out: &mut Vec<(Option<f64>, Vec<Thread>)>| {
        if let (Some(t), Some(last)) = (cur.take(), out.last_mut()) {
            last.1.push(t);
        }
    };
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("TS ") {
            flush(&mut cur, &mut out);
            pending_ts = rest.split_whitespace().next().and_then(|v| v.parse().ok());
            out.push((pending_ts, Vec::new()));
            continue;
        }
        if line.starts_with("***") && line.contains(". row") {
            flush(&mut cur, &mut out);
            let n = line.trim_matches(|c: char| c == '*' || c == ' ');
            // pt-stalk: no TS line, a new sample where the numbering starts again.
            if n.starts_with("1. row") && out.last().is_none_or(|l| !l.1.is_empty()) {
                if pending_ts.take().is_none() {
                    out.push((None, Vec::new()));
                }
            } else if out.is_empty() {
                out.push((None, Vec::new()));
            }
            pending_ts = None;
            cur = Some(Thread::default());
            continue;
        }
        let (Some(t), Some((k, v))) = (cur.as_mut(), line.split_once(':')) else {
            continue;
        };
        let v = v.strip_prefix(' ').unwrap_or(v).to_string();
        let v = if v == "NULL" { String::new() } else { v };
        match k.trim() {
            "User" => t.user = v,
            "Host" => t.host = v,
            "db" => t.db = v,
            "Command" => t.command = v,
            "State" => t.state = v,
            "Info" => t.info = v,
            "Time" => t.time_s = v.trim().parse().unwrap_or(0),
            _ => {}
        }
    }
    flush(&mut cur, &mut out);
    out
}

/// One SHOW GLOBAL STATUS sample as `mysqladmin extended-status` prints it.
pub fn mysqladmin(status: &[(String, String)]) -> String {
    let w0 = status
        .iter()
        .map(|(k, _)| k.len())
        .chain(["Variable_name".len()])
        .max()
        .unwrap_or(13);
    let w1 = status
        .iter()
        .map(|(_, v)| v.len())
        .chain(["Value".len()])
        .max()
        .unwrap_or(5);
    let rule = format!("+{}+{}+\n", "-".repeat(w0 + 2), "-".repeat(w1 + 2));
    let mut s = rule.clone();
    s.push_str(&format!("| {:w0$} | {:w1$} |\n", "Variable_name", "Value"));
    s.push_str(&rule);
    for (k, v) in status {
        s.push_str(&format!("| {k:w0$} | {v:w1$} |\n"));
    }
    s.push_str(&rule);
    s
}

/// The samples of a `-mysqladmin` file, each the variables that have a numeric value.
pub fn parse_mysqladmin(text: &str) -> Vec<Vec<(String, f64)>> {
    let mut out: Vec<Vec<(String, f64)>> = Vec::new();
    for line in text.lines() {
        let Some(inner) = line.strip_prefix('|') else {
            continue;
        };
        let mut cells = inner.split('|').map(str::trim);
        let (Some(k), Some(v)) = (cells.next(), cells.next()) else {
            continue;
        };
        if k == "Variable_name" {
            out.push(Vec::new());
            continue;
        }
        if let (Some(last), Ok(v)) = (out.last_mut(), v.parse::<f64>()) {
            last.push((k.to_string(), v));
        }
    }
    out
}

/// A statement with its literals (numbers, quoted strings, lists of them) replaced by `?`,
/// whitespace collapsed, cut at 200 characters: the processlist's stand-in for a digest.
pub fn digest(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len().min(256));
    let mut chars = sql.chars().peekable();
    let mut prev_word = false;
    while let Some(c) = chars.next() {
        if out.chars().count() >= 200 {
            out.push('…');
            break;
        }
        match c {
            '\'' | '"' => {
                let q = c;
                while let Some(n) = chars.next() {
                    if n == '\\' {
                        chars.next();
                    } else if n == q {
                        if chars.peek() == Some(&q) {
                            chars.next();
                        } else {
                            break;
                        }
                    }
                }
                out.push('?');
                prev_word = false;
            }
            c if c.is_ascii_digit() && !prev_word => {
                while chars
                    .peek()
                    .is_some_and(|n| n.is_ascii_alphanumeric() || *n == '.')
                {
                    chars.next();
                }
                out.push('?');
            }
            c if c.is_whitespace() => {
                if !out.ends_with(' ') && !out.is_empty() {
                    out.push(' ');
                }
                prev_word = false;
            }
            c => {
                prev_word = c.is_alphanumeric() || c == '_' || c == '$' || c == '`';
                out.push(c);
            }
        }
    }
    // `IN (?, ?, ?)` -> `IN (?+)` (and `a, b` -> `a,b`).
    let mut s = out.trim_end().replace(", ", ",");
    while let Some(i) = s.find("?,?") {
        let mut j = i + 3;
        while s[j..].starts_with(",?") {
            j += 2;
        }
        s.replace_range(i..j, "?+");
    }
    s
}

/// HOST without its port (`10.0.0.7:51234` -> `10.0.0.7`, `[::1]:5` -> `[::1]`).
pub fn host_only(host: &str) -> &str {
    match host.rsplit_once(':') {
        Some((h, p)) if p.chars().all(|c| c.is_ascii_digit()) && !h.is_empty() => {
            if h.contains(':') && !h.ends_with(']') {
                host // a bare IPv6 address without a port
            } else {
                h
            }
        }
        _ => host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn th(user: &str, info: &str) -> Thread {
        Thread {
            user: user.into(),
            host: "10.0.0.7:51234".into(),
            db: "shop".into(),
            command: "Query".into(),
            state: "Waiting for table level lock".into(),
            info: info.into(),
            time_s: 7,
        }
    }

    #[test]
    fn digests_replace_literals() {
        assert_eq!(
            digest("DELETE FROM orders WHERE id = 42 AND note = 'it''s'"),
            "DELETE FROM orders WHERE id = ? AND note = ?"
        );
        assert_eq!(
            digest("select  *\n from t1 where a in (1, 2,3, 'x') and b2=0x1F"),
            "select * from t1 where a in (?+) and b2=?"
        );
        assert_eq!(digest("SELECT SLEEP(10.5)"), "SELECT SLEEP(?)");
        assert_eq!(digest("SELECT \"a\\\"b\" FROM t"), "SELECT ? FROM t");
        assert!(digest(&"x ".repeat(500)).ends_with('…'));
    }

    #[test]
    fn hosts_lose_their_port() {
        assert_eq!(host_only("10.0.0.7:51234"), "10.0.0.7");
        assert_eq!(host_only("localhost"), "localhost");
        assert_eq!(host_only("[::1]:3306"), "[::1]");
        assert_eq!(host_only("::1"), "::1");
    }

    #[test]
    fn processlist_round_trips_with_ts() {
        let a = vec![(5, th("batch", "SELECT SLEEP(5)")), (6, th("app", ""))];
        let b = vec![(7, th("x", "SELECT 1"))];
        let text = processlist(100.5, &a) + &processlist(101.5, &b);
        let back = parse_processlist(&text);
        assert_eq!(back.len(), 2);
        assert_eq!(back[0].0, Some(100.5));
        assert_eq!(back[0].1.len(), 2);
        assert_eq!(back[0].1[0], a[0].1);
        assert_eq!(back[0].1[1].info, "");
        assert_eq!(back[1].0, Some(101.5));
        assert_eq!(back[1].1[0].user, "x");
    }

    #[test]
    fn pt_stalk_processlist_splits_at_row_one() {
        // The shape of a real pt-stalk `-processlist` file (no TS lines).
        let text = "*************************** 1. row ***************************\n      Id: 22\n    User: root\n    Host: 127.0.0.1:45394\n      db: NULL\n Command: Sleep\n    Time: 0\n   State: \n    Info: NULL\nProgress: 0.000\n*************************** 2. row ***************************\n      Id: 27\n    User: root\n    Host: 127.0.0.1:45422\n      db: NULL\n Command: Query\n    Time: 0\n   State: starting\n    Info: SHOW FULL PROCESSLIST\nProgress: 0.000\n*************************** 1. row ***************************\n      Id: 22\n    User: bob\n    Host: h:1\n      db: test\n Command: Query\n    Time: 3\n   State: User sleep\n    Info: select sleep(5)\nProgress: 0.000\n";
        let back = parse_processlist(text);
        assert_eq!(back.len(), 2);
        assert_eq!(back[0].0, None);
        assert_eq!(back[0].1.len(), 2);
        assert_eq!(back[0].1[1].info, "SHOW FULL PROCESSLIST");
        assert_eq!(back[1].1[0].user, "bob");
        assert_eq!(back[1].1[0].time_s, 3);
        assert_eq!(back[1].1[0].db, "test");
    }

    #[test]
    fn mysqladmin_round_trips() {
        let s = vec![
            ("Questions".to_string(), "1234".to_string()),
            ("Threads_running".to_string(), "7".to_string()),
            ("Rpl_status".to_string(), "OFF".to_string()),
        ];
        let text = mysqladmin(&s) + &mysqladmin(&s);
        assert!(text.starts_with("+-----------------+-------+\n| Variable_name   | Value |\n"));
        let back = parse_mysqladmin(&text);
        assert_eq!(back.len(), 2);
        assert_eq!(
            back[1],
            vec![
                ("Questions".to_string(), 1234.0),
                ("Threads_running".to_string(), 7.0)
            ]
        );
    }
}
