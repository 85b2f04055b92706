//! One `Exporter` trait, one implementation per output format. A command builds its result
//! (a serde struct) and hands it to the exporter the user asked for; the binary writes the
//! bytes to stdout or `--output FILE`.

use serde::Serialize;
use std::io::{self, Write};

/// Turns a result into the bytes of one output format.
pub trait Exporter<T: ?Sized> {
    /// Writes `value` to `out`.
    fn export(&self, value: &T, out: &mut dyn Write) -> io::Result<()>;

    /// Convenience: the exported bytes as a `String`.
    fn to_string(&self, value: &T) -> io::Result<String> {
        let mut buf = Vec::new();
        self.export(value, &mut buf)?;
        String::from_utf8(buf).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }
}

/// Pretty-printed JSON of any serialisable result, followed by a newline.
#[derive(Clone, Copy, Debug, Default)]
pub struct JsonExporter;

impl<T: Serialize + ?Sized> Exporter<T> for JsonExporter {
    fn export(&self, value: &T, out: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, value)?;
        out.write_all(b"\n")
    }
}

/// One compact JSON object per line (JSON Lines), for streams of samples.
#[derive(Clone, Copy, Debug, Default)]
pub struct JsonLinesExporter;

impl<T: Serialize + ?Sized> Exporter<T> for JsonLinesExporter {
    fn export(&self, value: &T, out: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer(&mut *out, value)?;
        out.write_all(b"\n")
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct R {
        iops: f64,
    }

    #[test]
    fn json_exporter_writes_one_document() {
        let s = JsonExporter.to_string(&R { iops: 1.5 }).unwrap();
        assert_eq!(s, "{\n  \"iops\": 1.5\n}\n");
        let s = JsonLinesExporter.to_string(&R { iops: 2.0 }).unwrap();
        assert_eq!(s, "{\"iops\":2.0}\n");
    }

    #[test]
    fn csv_quotes_only_when_needed() {
        let mut buf = Vec::new();
        csv_row(&mut buf, ["a", "b,c", "d\"e"]).unwrap();
        assert_eq!(String::from_utf8(buf).unwrap(), "a,\"b,c\",\"d\"\"e\"\n");
    }
}
