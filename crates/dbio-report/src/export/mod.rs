//! Every output format of every command, in one place: one [`Exporter`] trait, one
//! implementation per (format, result), one [`Format`] enum the command line chooses from.
//!
//! Layout: a directory per format (`text/`, `csv/`, `sysbench/`, `prometheus/`, `nagios/`), a
//! file per result inside it (`text/bench.rs`, `csv/bench.rs`, `nagios/check.rs`, ...). What the
//! formats share lives beside them: [`table`] (the one table renderer for text output),
//! [`prometheus`] (the one Prometheus text-format writer: families declared once, label values
//! escaped, `promtool check metrics` clean) and [`csv`] (RFC 4180 fields, empty cells for
//! undefined statistics). JSON needs no code per result: [`JsonExporter`] writes any
//! serialisable result, wrapped in a [`dbio_schema::Document`] that names its schema; [`json`] and
//! [`jsonl`] hold only results written as they are produced (innodb grep's hits).
//!
//! A command builds its result, picks the exporter for the user's `--format`, and the binary
//! writes the bytes to stdout or `-o/--output FILE` (never both).

pub mod csv;
pub mod html;
pub mod json;
pub mod jsonl;
pub mod nagios;
pub mod prometheus;
pub mod sysbench;
pub mod table;
pub mod text;

use serde::Serialize;
use std::fmt;
use std::io::{self, Write};
use std::str::FromStr;

pub use csv::{csv_field, csv_row};

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

/// The output formats. Each command accepts the subset that fits its result (a table or a
/// time series has CSV, a monitoring result has Prometheus or Nagios); [`Format::ALL`] lists
/// them in the order help texts show them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// For people: aligned tables and sentences.
    Text,
    /// One JSON document with `schema` and `dbio_version` first.
    Json,
    /// JSON Lines: one compact object per line, for streams (iostat samples, grep hits).
    Jsonl,
    /// Comma-separated values with a header row, units in the column names.
    Csv,
    /// The Prometheus text exposition format (node_exporter's textfile collector).
    Prometheus,
    /// A Nagios/Icinga plugin's status line, perfdata and long output.
    Nagios,
    /// The text layout of sysbench fileio 1.0.20.
    Sysbench,
    /// One self-contained HTML page (inline SVG charts, no network, no script needed).
    Html,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 8] = [
        Format::Text,
        Format::Json,
        Format::Jsonl,
        Format::Csv,
        Format::Prometheus,
        Format::Nagios,
        Format::Sysbench,
        Format::Html,
    ];

    /// The name on the command line (`--format json`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Jsonl => "jsonl",
            Format::Csv => "csv",
            Format::Prometheus => "prometheus",
            Format::Nagios => "nagios",
            Format::Sysbench => "sysbench",
            Format::Html => "html",
        }
    }

    /// One line of help for the format.
    pub fn help(self) -> &'static str {
        match self {
            Format::Text => "for people",
            Format::Json => "one JSON document (schema and dbio_version first)",
            Format::Jsonl => "JSON Lines, one object per line",
            Format::Csv => "CSV with a header row",
            Format::Prometheus => "Prometheus text format",
            Format::Nagios => "Nagios plugin status line and perfdata",
            Format::Sysbench => "sysbench fileio 1.0.20 layout",
            Format::Html => "one self-contained HTML page with SVG charts",
        }
    }

    /// Whether the format is for machines (then stdout carries nothing else, and progress or
    /// human-readable lines go to stderr).
    pub fn is_machine(self) -> bool {
        !matches!(self, Format::Text | Format::Sysbench)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A format name that is not one of [`Format::ALL`].
#[derive(Debug, thiserror::Error)]
#[error("unknown format {0:?}: choose one of text, json, jsonl, csv, prometheus, nagios, sysbench, html")]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| UnknownFormat(s.to_string()))
    }
}

/// Pretty-printed JSON of any serialisable result, followed by a newline. Results that do
/// not carry `schema` and `dbio_version` themselves are wrapped in a [`dbio_schema::Document`].
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
    fn format_names_round_trip() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>().unwrap(), f);
            assert_eq!(f.to_string(), f.name());
        }
        let e = "yaml".parse::<Format>().unwrap_err().to_string();
        assert!(e.contains("\"yaml\"") && e.contains("prometheus"), "{e}");
        assert!(!Format::Text.is_machine() && Format::Json.is_machine());
    }
}
