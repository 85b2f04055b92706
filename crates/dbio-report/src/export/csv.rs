//! CSV as RFC 4180 writes it: a field is quoted only when it holds a comma, a quote or a line
//! break. Every command's CSV goes through [`csv_row`]; an undefined statistic is an empty
//! cell ([`opt`]), never 0.

pub mod align;
pub mod bench;
pub mod iostat;
pub mod model;
pub mod report;
pub mod sweep;

use std::io::{self, Write};

/// Quotes one CSV field when it needs it (RFC 4180).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Writes one CSV row.
pub fn csv_row<I, S>(out: &mut dyn Write, fields: I) -> io::Result<()>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let row: Vec<String> = fields.into_iter().map(|f| csv_field(f.as_ref())).collect();
    writeln!(out, "{}", row.join(","))
}

/// A cell for a statistic that may be undefined: its full-precision value, or empty.
pub fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_only_when_needed() {
        let mut buf = Vec::new();
        csv_row(&mut buf, ["a", "b,c", "d\"e"]).unwrap();
        assert_eq!(String::from_utf8(buf).unwrap(), "a,\"b,c\",\"d\"\"e\"\n");
        assert_eq!(opt(None::<f64>), "");
        assert_eq!(opt(Some(0.1f64)), "0.1");
    }
}
