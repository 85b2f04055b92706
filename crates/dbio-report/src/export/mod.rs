//! Every output format of every command, in one place: one [`Exporter`] trait, one exporter
//! type per format ([`Text`], [`Json`], [`Jsonl`], [`Csv`], [`Prometheus`], [`Nagios`],
//! [`Sysbench`], [`Html`]) implementing it for each result it supports, one [`Format`] enum the
//! command line chooses from, and one dispatch point: [`Render`], declared per result with
//! [`renders!`](crate::renders) in the table at the end of this file. The compiler, not a
//! catch-all arm, says which (format, result) pairs exist: a format listed for a result without
//! its exporter does not compile, and the command line offers exactly the listed formats.
//!
//! Layout: a directory per format (`text/`, `csv/`, `sysbench/`, `prometheus/`, `nagios/`,
//! `html/`, `json/`, `jsonl/`), a file per result inside it (`text/bench.rs`, `csv/bench.rs`,
//! `nagios/check.rs`, ...) holding that format's `impl Exporter<Result>`. What the formats
//! share lives beside them: [`table`] (the one table renderer for text output), [`prometheus`]
//! (the one Prometheus text-format writer: families declared once, label values escaped,
//! `promtool check metrics` clean) and [`csv`] (RFC 4180 fields, empty cells for undefined
//! statistics). JSON needs little code per result: each is declared once below with the schema
//! its [`Document`] names; [`json`] and [`jsonl`] hold only results written as they are
//! produced (innodb grep's hits).
//!
//! A command builds its result and the binary renders it with the user's `--format`, writing
//! the bytes to stdout or `-o/--output FILE` (never both).

pub mod csv;
pub mod html;
pub mod json;
pub mod jsonl;
pub mod nagios;
pub mod prometheus;
pub mod sysbench;
pub mod table;
pub mod text;

use dbio_schema::{doc, Document};
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

/// `--format text`: aligned tables and sentences for people. Its one option is iostat's.
#[derive(Clone, Debug, Default)]
pub struct Text {
    /// `dbio iostat`: the columns shown, in order.
    pub columns: text::columns::Columns,
}

/// `--format json`: one pretty-printed document that names its schema and dbio's version
/// first (a [`Document`] around the result, or the result itself when it carries both), then
/// a newline; innodb grep's document is written as its hits are found.
#[derive(Clone, Copy, Debug, Default)]
pub struct Json;

/// `--format jsonl`: JSON Lines, one compact object per line, for streams (iostat reports, grep
/// hits).
#[derive(Clone, Copy, Debug, Default)]
pub struct Jsonl;

/// `--format csv`: RFC 4180 rows with a header row, units in the column names. For a stream of
/// results (iostat reports) the header row comes once, before the first result's rows.
#[derive(Debug, Default)]
pub struct Csv {
    header_done: std::cell::Cell<bool>,
}

/// `--format prometheus`: the Prometheus text exposition format (node_exporter's textfile
/// collector), `promtool check metrics` clean. For a stream of iostat reports, either each a
/// whole exposition ([`Prometheus::file`], the default) or one exposition with timestamped
/// lines ([`Prometheus::stream`]).
#[derive(Debug)]
pub struct Prometheus {
    iostat: std::cell::RefCell<prometheus::State>,
}

impl Prometheus {
    /// Each result a whole exposition, without timestamps (a file rewritten per sample, or a
    /// single result).
    pub fn file() -> Self {
        Prometheus {
            iostat: std::cell::RefCell::new(prometheus::State::new(prometheus::Exposition::file())),
        }
    }

    /// Successive iostat reports as one exposition: families declared once, lines timestamped.
    pub fn stream() -> Self {
        Prometheus {
            iostat: std::cell::RefCell::new(prometheus::State::new(
                prometheus::Exposition::stream(),
            )),
        }
    }
}

impl Default for Prometheus {
    fn default() -> Self {
        Prometheus::file()
    }
}

/// `--format nagios` (`dbio check --nagios`): a Nagios/Icinga plugin's status line, perfdata
/// and long output; the exit code that goes with it is the command's.
#[derive(Clone, Copy, Debug, Default)]
pub struct Nagios {
    /// Count tuning advice as a warning (`--advice-warns`); by default advice alone is OK.
    pub advice_warns: bool,
}

/// `--format sysbench`: the text layout of sysbench fileio 1.0.20.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sysbench;

/// `--format html`: one self-contained page (inline SVG charts, no network, no script).
#[derive(Clone, Copy, Debug, Default)]
pub struct Html;

/// One exporter of each format, with their options: what a command renders its result with.
#[derive(Debug, Default)]
pub struct Exporters {
    /// `--format text`.
    pub text: Text,
    /// `--format json`.
    pub json: Json,
    /// `--format jsonl`.
    pub jsonl: Jsonl,
    /// `--format csv`.
    pub csv: Csv,
    /// `--format prometheus`.
    pub prometheus: Prometheus,
    /// `--format nagios`.
    pub nagios: Nagios,
    /// `--format sysbench`.
    pub sysbench: Sysbench,
    /// `--format html`.
    pub html: Html,
}

/// A result the command line can ask for in some formats: the one dispatch point from a
/// [`Format`] to the exporter of that format. Declared with [`renders!`](crate::renders), which
/// lists the formats (the command's default first) and fails to compile when one of them has
/// no [`Exporter`] for the result.
pub trait Render {
    /// The formats of this result, the command's default first.
    const FORMATS: &'static [Format];

    /// Writes the result in `format` with the exporters of `with`. A format not in
    /// [`Render::FORMATS`] is an [`io::ErrorKind::Unsupported`] error (the command line
    /// accepts only those).
    fn render(&self, with: &Exporters, format: Format, out: &mut dyn Write) -> io::Result<()>;

    /// [`Render::render`] with default exporters, into a `Vec`.
    fn render_bytes(&self, format: Format) -> io::Result<Vec<u8>> {
        let mut buf = Vec::new();
        self.render(&Exporters::default(), format, &mut buf)?;
        Ok(buf)
    }
}

/// The error of a format a result has no exporter for.
pub fn unsupported(format: Format, formats: &[Format]) -> io::Error {
    let names: Vec<&str> = formats.iter().map(|f| f.name()).collect();
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "no {format} output for this result: choose one of {}",
            names.join(", ")
        ),
    )
}

/// Declares which formats a result renders in, default first, each by the [`Exporters`] field
/// of that format: `renders!(Stack: Text => text, Json => json);`. The compiler checks that
/// each listed exporter implements [`Exporter`] for the result.
#[macro_export]
macro_rules! renders {
    ($r:ty: $($f:ident => $field:ident),+ $(,)?) => {
        impl $crate::export::Render for $r {
            const FORMATS: &'static [$crate::export::Format] = &[$($crate::export::Format::$f),+];
            fn render(
                &self,
                with: &$crate::export::Exporters,
                format: $crate::export::Format,
                out: &mut dyn ::std::io::Write,
            ) -> ::std::io::Result<()> {
                match format {
                    $($crate::export::Format::$f => $crate::export::Exporter::<$r>::export(&with.$field, self, out),)+
                    #[allow(unreachable_patterns)]
                    other => Err($crate::export::unsupported(other, Self::FORMATS)),
                }
            }
        }
    };
}

/// Declares the JSON document of results that do not carry their schema themselves: each is
/// written inside a [`Document`] naming `schema`.
macro_rules! json_documents {
    ($($r:ty => $schema:expr),+ $(,)?) => {
        $(impl Exporter<$r> for Json {
            fn export(&self, value: &$r, out: &mut dyn Write) -> io::Result<()> {
                self.export(&Document::new($schema, value), out)
            }
        })+
    };
}

/// Declares the JSON document of results that carry `schema` and `dbio_version` themselves.
macro_rules! json_plain {
    ($($r:ty),+ $(,)?) => {
        $(impl Exporter<$r> for Json {
            fn export(&self, value: &$r, out: &mut dyn Write) -> io::Result<()> {
                write_pretty(value, out)
            }
        })+
    };
}

fn write_pretty<T: Serialize + ?Sized>(value: &T, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    out.write_all(b"\n")
}

impl<T: Serialize + ?Sized> Exporter<Document<'_, T>> for Json {
    fn export(&self, value: &Document<'_, T>, out: &mut dyn Write) -> io::Result<()> {
        write_pretty(value, out)
    }
}

impl<T: Serialize + ?Sized> Exporter<Document<'_, T>> for Jsonl {
    fn export(&self, value: &Document<'_, T>, out: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer(&mut *out, value)?;
        out.write_all(b"\n")
    }
}

json_plain!(
    dbio_schema::bench::BenchResult,
    dbio_schema::sweep::SweepResult
);
json_documents!(
    dbio_schema::advise::AdviseResult => doc::MYSQL_ADVISE,
    dbio_schema::report::Report => doc::REPORT,
    dbio_schema::stack::Stack => doc::STACK,
    dbio_schema::check::CheckReport => doc::CHECK,
    dbio_schema::align::CalcResult => doc::ALIGN_CALC,
    dbio_schema::align::DiskCheck => doc::ALIGN_CHECK,
    dbio_schema::innodb::PagesReport => doc::INNODB_PAGES,
    dbio_schema::mysql_chunk::ChunkResult => doc::MYSQL_CHUNK,
    dbio_schema::stalk::StalkReport => doc::MYSQL_STALK,
    dbio_schema::model::BoundsResult => doc::MODEL_BOUNDS,
    dbio_schema::model::MvaResult => doc::MODEL_MVA,
    dbio_schema::model::UslResult => doc::MODEL_USL,
    dbio_schema::model::LiveResult => doc::MODEL_LIVE,
);

// Which result renders in which formats, default first: the command line offers exactly these.
renders!(dbio_schema::advise::AdviseResult: Text => text, Json => json, Prometheus => prometheus, Nagios => nagios);
renders!(dbio_schema::bench::BenchResult: Text => text, Json => json, Csv => csv, Sysbench => sysbench);
renders!(dbio_schema::sweep::SweepResult: Text => text, Json => json, Csv => csv);
renders!(dbio_schema::report::Report: Text => text, Html => html, Json => json, Csv => csv);
renders!(dbio_schema::iostat::Report: Text => text, Jsonl => jsonl, Csv => csv, Prometheus => prometheus);
renders!(dbio_schema::stack::Stack: Text => text, Json => json);
renders!(dbio_schema::check::CheckReport: Text => text, Json => json, Prometheus => prometheus, Nagios => nagios);
renders!(dbio_schema::align::CalcResult: Text => text, Json => json);
renders!(dbio_schema::align::DiskCheck: Text => text, Json => json, Csv => csv);
renders!(dbio_schema::innodb::PagesReport: Text => text, Json => json);
renders!(dbio_schema::innodb::GrepEvent<'_>: Text => text, Json => json, Jsonl => jsonl);
renders!(dbio_schema::mysql_chunk::ChunkResult: Text => text, Json => json);
renders!(dbio_schema::stalk::StalkReport: Text => text, Json => json, Html => html);
renders!(dbio_schema::model::BoundsResult: Text => text, Json => json, Csv => csv, Html => html);
renders!(dbio_schema::model::MvaResult: Text => text, Json => json, Csv => csv, Html => html);
renders!(dbio_schema::model::UslResult: Text => text, Json => json, Csv => csv, Html => html);
renders!(dbio_schema::model::LiveResult: Text => text, Json => json, Csv => csv, Prometheus => prometheus);

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct R {
        iops: f64,
    }

    #[test]
    fn json_exporter_writes_one_document() {
        let s = Json
            .to_string(&Document::new("dbio.t/1", &R { iops: 1.5 }))
            .unwrap();
        assert_eq!(
            s,
            format!("{{\n  \"schema\": \"dbio.t/1\",\n  \"dbio_version\": \"{}\",\n  \"iops\": 1.5\n}}\n", doc::DBIO_VERSION)
        );
        let s = Jsonl
            .to_string(&Document::new("dbio.t/1", &R { iops: 2.0 }))
            .unwrap();
        assert_eq!(
            s,
            format!(
                "{{\"schema\":\"dbio.t/1\",\"dbio_version\":\"{}\",\"iops\":2.0}}\n",
                doc::DBIO_VERSION
            )
        );
    }

    #[test]
    fn a_result_renders_only_in_its_formats() {
        let stack = dbio_schema::stack::Stack {
            query: "/".into(),
            resolved_path: None,
            mount: None,
            devices: Vec::new(),
            leaf_disks: Vec::new(),
            notes: Vec::new(),
            kernel_release: None,
        };
        assert_eq!(
            <dbio_schema::stack::Stack as Render>::FORMATS,
            &[Format::Text, Format::Json]
        );
        let json = String::from_utf8(stack.render_bytes(Format::Json).unwrap()).unwrap();
        assert!(json.contains("\"schema\": \"dbio.stack/1\""), "{json}");
        let e = stack.render_bytes(Format::Csv).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::Unsupported);
        assert!(e.to_string().contains("choose one of text, json"), "{e}");
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
